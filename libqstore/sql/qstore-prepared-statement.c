/* qstore-prepared-statement.c: one SQL statement, run again and again
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "qstore-affinity-private.h"
#include "qstore-database-private.h"
#include "qstore-error.h"
#include "qstore-i18n-private.h"
#include "qstore-params-private.h"
#include "qstore-prepared-statement.h"
#include "qstore-router-private.h"

/**
 * QStorePreparedStatement:
 *
 * One SQL statement with parameters, read once by
 * qstore_database_prepare() and run as often as needed, its values bound
 * one by one with typed calls:
 *
 * |[<!-- language="C" -->
 * g_autoptr(QStorePreparedStatement) insert =
 *   qstore_database_prepare (db, "INSERT INTO item (name, price) VALUES (?, ?)", &error);
 *
 * for (guint i = 0; i < n; i++)
 *   if (!qstore_prepared_statement_bind_text (insert, 1, names[i], &error) ||
 *       !qstore_prepared_statement_bind_double (insert, 2, prices[i], &error) ||
 *       qstore_prepared_statement_execute (insert, &error) < 0)
 *     break;
 * ]|
 *
 * A run is what qstore_database_query() does with the same text: each
 * outside a transaction commits, and what DDL ran in between is seen. It
 * saves what a loop spends around the statement itself: building a
 * #GVariant of parameters per run, and reading one per value. From
 * Python and JavaScript, where each #GVariant is an object of the
 * language, that is most of the time a small statement takes.
 *
 * Parameters are numbered as SQL numbers them: the first is 1, and
 * `?NNN` is NNN; qstore_prepared_statement_get_parameter_position() finds
 * a named one. Values stay bound from run to run until bound again or
 * cleared, and every parameter must have one when the statement runs.
 *
 * A statement does not keep its database alive: a program (or a
 * language binding) may keep statements in a cache beside the database
 * without the two holding each other. Once the database is closed or
 * gone, a run fails with %QSTORE_ERROR_CLOSED.
 */

/* A bound value, kept as SQLite takes it: binding one allocates nothing
 * but the copy of text. */
typedef struct
{
  gboolean     bound;
  QStoreValue  value;
  GVariant    *owner;             /* what @value's text or blob lives in */
} Slot;

struct _QStorePreparedStatement
{
  GObject         parent_instance;

  GWeakRef        database;       /* a statement does not keep it open */
  char           *sql;
  guint           n_parameters;
  char          **names;          /* n_parameters; NULL for a `?` */
  Slot           *slots;          /* n_parameters */
  QStoreRouterHint hint;          /* where its text's cached statement was */

  /* step(): the rows of its run, the statement's own and filled again
   * by the next, and the row it is on (a run is walked while on_row) */
  QStoreResult   *rows;
  guint           row;
  gboolean        on_row;
};

G_DEFINE_FINAL_TYPE (QStorePreparedStatement, qstore_prepared_statement, G_TYPE_OBJECT)

static void
qstore_prepared_statement_finalize (GObject *object)
{
  QStorePreparedStatement *self = QSTORE_PREPARED_STATEMENT (object);

  qstore_prepared_statement_clear_bindings (self);
  g_clear_object (&self->rows);
  for (guint i = 0; i < self->n_parameters; i++)
    g_free (self->names[i]);
  g_free (self->names);
  g_free (self->slots);
  g_free (self->sql);
  g_weak_ref_clear (&self->database);

  G_OBJECT_CLASS (qstore_prepared_statement_parent_class)->finalize (object);
}

static void
qstore_prepared_statement_class_init (QStorePreparedStatementClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = qstore_prepared_statement_finalize;
}

static void
qstore_prepared_statement_init (QStorePreparedStatement *self)
{
}

/**
 * qstore_database_prepare:
 * @self: a #QStoreDatabase
 * @sql: one SQL statement
 * @error: return location for a #GError
 *
 * Reads one statement to run again and again with
 * qstore_prepared_statement_query() or qstore_prepared_statement_execute().
 * Errors in the statement (syntax, a table or column that does not exist)
 * are reported here, as qstore_database_exec() reports them.
 *
 * Returns: (transfer full): the statement, or %NULL on error
 */
QStorePreparedStatement *
qstore_database_prepare (QStoreDatabase  *self,
                         const char      *sql,
                         GError         **error)
{
  QStorePreparedStatement *prepared;
  guint n_parameters;
  char **names;

  g_return_val_if_fail (QSTORE_IS_DATABASE (self), NULL);
  g_return_val_if_fail (sql != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!qstore_database_check_open (self, error) ||
      !(names = qstore_router_read_parameters (self, sql, &n_parameters, error)))
    return NULL;

  prepared = g_object_new (QSTORE_TYPE_PREPARED_STATEMENT, NULL);
  g_weak_ref_init (&prepared->database, self);
  prepared->sql = g_strdup (sql);
  prepared->n_parameters = n_parameters;
  prepared->names = names;
  prepared->slots = g_new0 (Slot, n_parameters);
  return prepared;
}

/**
 * qstore_prepared_statement_get_sql:
 * @self: a #QStorePreparedStatement
 *
 * Gets the statement's text.
 *
 * Returns: the statement's text, as given to qstore_database_prepare()
 */
const char *
qstore_prepared_statement_get_sql (QStorePreparedStatement *self)
{
  g_return_val_if_fail (QSTORE_IS_PREPARED_STATEMENT (self), NULL);
  return self->sql;
}

/**
 * qstore_prepared_statement_get_n_parameters:
 * @self: a #QStorePreparedStatement
 *
 * Counts the statement's parameters.
 *
 * Returns: how many parameters the statement takes: the highest
 *   position, as SQLite's sqlite3_bind_parameter_count() counts them
 */
guint
qstore_prepared_statement_get_n_parameters (QStorePreparedStatement *self)
{
  g_return_val_if_fail (QSTORE_IS_PREPARED_STATEMENT (self), 0);
  return self->n_parameters;
}

/**
 * qstore_prepared_statement_get_parameter_name:
 * @self: a #QStorePreparedStatement
 * @position: a parameter's position, from 1
 *
 * Gets the name of a parameter.
 *
 * Returns: (nullable): the parameter's name with its prefix (`:name`,
 *   `@name`, `$name`), or %NULL for a positional one or a position the
 *   statement does not have
 */
const char *
qstore_prepared_statement_get_parameter_name (QStorePreparedStatement *self,
                                              guint                    position)
{
  g_return_val_if_fail (QSTORE_IS_PREPARED_STATEMENT (self), NULL);

  if (position == 0 || position > self->n_parameters)
    return NULL;
  return self->names[position - 1];
}

/**
 * qstore_prepared_statement_get_parameter_position:
 * @self: a #QStorePreparedStatement
 * @name: a parameter's name, with its prefix or without
 *
 * Finds a named parameter: `price` finds `:price`, `@price` or `$price`.
 *
 * Returns: the parameter's position, from 1, or 0 when the statement has
 *   no parameter of that name
 */
guint
qstore_prepared_statement_get_parameter_position (QStorePreparedStatement *self,
                                                  const char              *name)
{
  g_return_val_if_fail (QSTORE_IS_PREPARED_STATEMENT (self), 0);
  g_return_val_if_fail (name != NULL, 0);

  for (guint i = 0; i < self->n_parameters; i++)
    if (self->names[i] != NULL && qstore_params_name_matches (name, self->names[i]))
      return i + 1;
  return 0;
}

/* The slot of @position, emptied, or NULL with @error. */
static Slot *
slot_at (QStorePreparedStatement  *self,
         guint                     position,
         GError                  **error)
{
  Slot *slot;

  if (position == 0 || position > self->n_parameters)
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                   _("The statement takes %u parameter%s: there is no parameter %u "
                   "(positions count from 1)"), self->n_parameters,
                   self->n_parameters == 1 ? "" : "s", position);
      return NULL;
    }
  /* A new value makes a new run. */
  qstore_prepared_statement_reset (self);
  slot = &self->slots[position - 1];
  g_clear_pointer (&slot->owner, g_variant_unref);
  memset (slot, 0, sizeof *slot);
  slot->bound = TRUE;
  return slot;
}

/**
 * qstore_prepared_statement_bind_null:
 * @self: a #QStorePreparedStatement
 * @position: the parameter's position, from 1
 * @error: return location for a #GError
 *
 * Binds SQL NULL. Like every bind, it fails with
 * %QSTORE_ERROR_INVALID_ARGUMENT for a position the statement does not
 * have.
 *
 * Returns: %TRUE when bound
 */
gboolean
qstore_prepared_statement_bind_null (QStorePreparedStatement  *self,
                                     guint                     position,
                                     GError                  **error)
{
  g_return_val_if_fail (QSTORE_IS_PREPARED_STATEMENT (self), FALSE);

  /* An emptied slot holds NULL. */
  return slot_at (self, position, error) != NULL;
}

/**
 * qstore_prepared_statement_bind_int64:
 * @self: a #QStorePreparedStatement
 * @position: the parameter's position, from 1
 * @value: the integer
 * @error: return location for a #GError
 *
 * Binds an integer.
 *
 * Returns: %TRUE when bound
 */
gboolean
qstore_prepared_statement_bind_int64 (QStorePreparedStatement  *self,
                                      guint                     position,
                                      gint64                    value,
                                      GError                  **error)
{
  Slot *slot;

  g_return_val_if_fail (QSTORE_IS_PREPARED_STATEMENT (self), FALSE);

  if (!(slot = slot_at (self, position, error)))
    return FALSE;
  slot->value.type = QSTORE_VALUE_INTEGER;
  slot->value.integer = value;
  return TRUE;
}

/**
 * qstore_prepared_statement_bind_double:
 * @self: a #QStorePreparedStatement
 * @position: the parameter's position, from 1
 * @value: the real
 * @error: return location for a #GError
 *
 * Binds a real.
 *
 * Returns: %TRUE when bound
 */
gboolean
qstore_prepared_statement_bind_double (QStorePreparedStatement  *self,
                                       guint                     position,
                                       double                    value,
                                       GError                  **error)
{
  Slot *slot;

  g_return_val_if_fail (QSTORE_IS_PREPARED_STATEMENT (self), FALSE);

  if (!(slot = slot_at (self, position, error)))
    return FALSE;
  slot->value.type = QSTORE_VALUE_REAL;
  slot->value.real = value;
  return TRUE;
}

/**
 * qstore_prepared_statement_bind_text:
 * @self: a #QStorePreparedStatement
 * @position: the parameter's position, from 1
 * @value: UTF-8 text
 * @error: return location for a #GError
 *
 * Binds text (a copy of it). Text that must hold NUL characters goes as a
 * blob, with `CAST(? AS TEXT)` in the SQL.
 *
 * Returns: %TRUE when bound
 */
gboolean
qstore_prepared_statement_bind_text (QStorePreparedStatement  *self,
                                     guint                     position,
                                     const char               *value,
                                     GError                  **error)
{
  const char *end;
  Slot *slot;

  g_return_val_if_fail (QSTORE_IS_PREPARED_STATEMENT (self), FALSE);
  g_return_val_if_fail (value != NULL, FALSE);

  if (!g_utf8_validate (value, -1, &end))
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                   _("Parameter %u: the text is not UTF-8: bind it as a blob"), position);
      return FALSE;
    }
  if (!(slot = slot_at (self, position, error)))
    return FALSE;
  slot->owner = g_variant_ref_sink (g_variant_new_string (value));
  slot->value.type = QSTORE_VALUE_TEXT;
  slot->value.bytes.data = (const guint8 *) g_variant_get_string (slot->owner, NULL);
  slot->value.bytes.len = end - value;
  return TRUE;
}

/**
 * qstore_prepared_statement_bind_blob:
 * @self: a #QStorePreparedStatement
 * @position: the parameter's position, from 1
 * @value: the bytes
 * @error: return location for a #GError
 *
 * Binds a blob; @value is kept, not copied.
 *
 * Returns: %TRUE when bound
 */
gboolean
qstore_prepared_statement_bind_blob (QStorePreparedStatement  *self,
                                     guint                     position,
                                     GBytes                   *value,
                                     GError                  **error)
{
  g_return_val_if_fail (QSTORE_IS_PREPARED_STATEMENT (self), FALSE);
  g_return_val_if_fail (value != NULL, FALSE);

  return qstore_prepared_statement_bind_value (self, position,
                                               g_variant_new_from_bytes (G_VARIANT_TYPE_BYTESTRING,
                                                                         value, TRUE),
                                               error);
}

/**
 * qstore_prepared_statement_bind_value:
 * @self: a #QStorePreparedStatement
 * @position: the parameter's position, from 1
 * @value: a value as qstore_database_query() takes them: `x`, `d`, `s`,
 *   `ay`, `b`, the NULL maybe, or any of them boxed in `v`. A floating
 *   reference is consumed.
 * @error: return location for a #GError
 *
 * Binds a value given as a #GVariant.
 *
 * Returns: %TRUE when bound; %FALSE with %QSTORE_ERROR_INVALID_ARGUMENT
 *   for a value of a type SQL cannot hold
 */
gboolean
qstore_prepared_statement_bind_value (QStorePreparedStatement  *self,
                                      guint                     position,
                                      GVariant                 *value,
                                      GError                  **error)
{
  g_autoptr(GVariant) owned = NULL;
  g_autoptr(GVariant) holder = NULL;
  g_autoptr(GError) local_error = NULL;
  QStoreValue bound;
  Slot *slot;

  g_return_val_if_fail (QSTORE_IS_PREPARED_STATEMENT (self), FALSE);
  g_return_val_if_fail (value != NULL, FALSE);

  owned = g_variant_ref_sink (value);
  if (!(holder = qstore_params_value_of (owned, &bound, &local_error)))
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                   _("Parameter %u: %s"), position, local_error->message);
      return FALSE;
    }
  if (!(slot = slot_at (self, position, error)))
    return FALSE;
  slot->value = bound;
  slot->owner = g_steal_pointer (&holder);
  return TRUE;
}

/**
 * qstore_prepared_statement_clear_bindings:
 * @self: a #QStorePreparedStatement
 *
 * Unbinds every parameter.
 */
void
qstore_prepared_statement_clear_bindings (QStorePreparedStatement *self)
{
  g_return_if_fail (QSTORE_IS_PREPARED_STATEMENT (self));

  qstore_prepared_statement_reset (self);
  for (guint i = 0; i < self->n_parameters; i++)
    {
      g_clear_pointer (&self->slots[i].owner, g_variant_unref);
      self->slots[i].bound = FALSE;
    }
}

static gboolean
bind_values (sqlite3_stmt  *stmt,
             gpointer       data,
             GError       **error)
{
  QStorePreparedStatement *self = data;

  /* The same text has the same parameters, however often it is read. */
  g_assert ((guint) sqlite3_bind_parameter_count (stmt) == self->n_parameters);

  for (guint i = 0; i < self->n_parameters; i++)
    {
      int rc;

      if (!self->slots[i].bound)
        {
          if (self->names[i] != NULL)
            g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                         _("Parameter %u (“%s”) has no value: bind one, NULL included"),
                         i + 1, self->names[i]);
          else
            g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                         _("Parameter %u has no value: bind one, NULL included"), i + 1);
          return FALSE;
        }
      /* SQLite copies text and blobs: a run inside this one (from a
       * function it calls) may bind again. */
      rc = qstore_value_bind (stmt, (int) i + 1, &self->slots[i].value);
      if (rc != SQLITE_OK)
        {
          g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                       _("Parameter %u cannot be bound: %s"), i + 1, sqlite3_errstr (rc));
          return FALSE;
        }
    }
  return TRUE;
}

/* Runs the statement as qstore_router_run() does for its arguments. */
static gboolean
run (QStorePreparedStatement  *self,
     QStoreResult            **result,
     gint64                   *changes,
     GError                  **error)
{
  g_autoptr(QStoreDatabase) database = g_weak_ref_get (&self->database);
  const char *tail = NULL;

  if (database == NULL)
    {
      g_set_error_literal (error, QSTORE_ERROR, QSTORE_ERROR_CLOSED,
                           _("The database of the statement is gone: prepare it again "
                           "on an open one"));
      return FALSE;
    }
  return qstore_database_check_open (database, error) &&
         qstore_router_run (database, self->sql, &tail, bind_values, self, TRUE, &self->hint,
                            result, changes, error);
}

/**
 * qstore_prepared_statement_query:
 * @self: a #QStorePreparedStatement
 * @error: return location for a #GError
 *
 * Runs the statement with the values bound and returns what it returned,
 * as qstore_database_query() does. It fails with
 * %QSTORE_ERROR_INVALID_ARGUMENT when a parameter has no value.
 *
 * Returns: (transfer full): the result, or %NULL on error
 */
QStoreResult *
qstore_prepared_statement_query (QStorePreparedStatement  *self,
                                 GError                  **error)
{
  QStoreResult *result = NULL;

  g_return_val_if_fail (QSTORE_IS_PREPARED_STATEMENT (self), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!run (self, &result, NULL, error))
    g_clear_object (&result);
  return result;
}

/**
 * qstore_prepared_statement_execute:
 * @self: a #QStorePreparedStatement
 * @error: return location for a #GError
 *
 * Runs the statement with the values bound and discards any rows it
 * returns, as qstore_database_execute() does.
 *
 * Returns: how many rows the statement inserted, updated or deleted (0
 *   for other statements), or -1 on error
 */
gint64
qstore_prepared_statement_execute (QStorePreparedStatement  *self,
                                   GError                  **error)
{
  gint64 changes;

  g_return_val_if_fail (QSTORE_IS_PREPARED_STATEMENT (self), -1);
  g_return_val_if_fail (error == NULL || *error == NULL, -1);

  return run (self, NULL, &changes, error) ? changes : -1;
}

/**
 * qstore_prepared_statement_step:
 * @self: a #QStorePreparedStatement
 * @error: return location for a #GError
 *
 * Moves to the next row of the statement's run, starting one when none
 * is being walked: the whole statement runs then, with the values bound,
 * as qstore_prepared_statement_query() runs it (outside a transaction it
 * commits before the first row is read). The row's values are read with
 * qstore_prepared_statement_get_row_types() and the typed getters.
 *
 * The rows are the statement's own, filled again by each run, so reading
 * them makes no object: where each object a call returns costs more than
 * the statement, as in Python and JavaScript, a point query is quicker
 * this way than through a #QStoreResult.
 *
 * |[<!-- language="C" -->
 * qstore_prepared_statement_bind_int64 (lookup, 1, id, &error);
 * while (qstore_prepared_statement_step (lookup, &error))
 *   total += qstore_prepared_statement_get_int64 (lookup, 0);
 * if (error != NULL)
 *   …
 * ]|
 *
 * The run ends after its last row (this call then returns %FALSE and the
 * next starts another run), and earlier with
 * qstore_prepared_statement_reset() or a bind.
 *
 * Returns: %TRUE on a row; %FALSE past the last one, or on error (with
 *   @error set, and no run being walked)
 */
gboolean
qstore_prepared_statement_step (QStorePreparedStatement  *self,
                                GError                  **error)
{
  g_return_val_if_fail (QSTORE_IS_PREPARED_STATEMENT (self), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (self->on_row)
    self->row++;
  else if (run (self, &self->rows, NULL, error))
    self->row = 0;
  else
    return FALSE;

  self->on_row = self->row < qstore_result_get_n_rows (self->rows);
  return self->on_row;
}

/**
 * qstore_prepared_statement_reset:
 * @self: a #QStorePreparedStatement
 *
 * Ends the run qstore_prepared_statement_step() walks, if any: the next
 * step runs the statement again. A bind does the same.
 */
void
qstore_prepared_statement_reset (QStorePreparedStatement *self)
{
  g_return_if_fail (QSTORE_IS_PREPARED_STATEMENT (self));

  self->on_row = FALSE;
}

/* The rows of the run step() is on a row of, or NULL after a warning. */
static QStoreResult *
stepped_rows (QStorePreparedStatement *self)
{
  g_return_val_if_fail (QSTORE_IS_PREPARED_STATEMENT (self), NULL);
  g_return_val_if_fail (self->on_row, NULL);

  return self->rows;
}

/**
 * qstore_prepared_statement_get_row_types:
 * @self: a #QStorePreparedStatement
 * @n_columns: (out): the number of columns
 *
 * Gets the type of every value of the row qstore_prepared_statement_step()
 * is on, as qstore_result_get_row_types() does for a result's row.
 *
 * Returns: (array length=n_columns) (transfer none): one #QStoreSqlType
 *   per column, valid until the next step
 */
const guint8 *
qstore_prepared_statement_get_row_types (QStorePreparedStatement *self,
                                         gsize                   *n_columns)
{
  QStoreResult *rows = stepped_rows (self);

  g_return_val_if_fail (n_columns != NULL, NULL);

  if (rows == NULL)
    {
      *n_columns = 0;
      return NULL;
    }
  return qstore_result_get_row_types (rows, self->row, n_columns);
}

/**
 * qstore_prepared_statement_get_value_type:
 * @self: a #QStorePreparedStatement
 * @column: a column index
 *
 * Gets the type of one value of the row qstore_prepared_statement_step()
 * is on.
 *
 * Returns: the value's type
 */
QStoreSqlType
qstore_prepared_statement_get_value_type (QStorePreparedStatement *self,
                                          guint                    column)
{
  QStoreResult *rows = stepped_rows (self);

  return rows != NULL ? qstore_result_get_value_type (rows, self->row, column)
                      : QSTORE_SQL_TYPE_NULL;
}

/**
 * qstore_prepared_statement_get_value:
 * @self: a #QStorePreparedStatement
 * @column: a column index
 *
 * Gets one value of the row qstore_prepared_statement_step() is on, as
 * qstore_result_get_value() gives it.
 *
 * Returns: (transfer full): the value: `x`, `d`, `s`, `ay`, or the NULL
 *   maybe (see qstore_value_is_null())
 */
GVariant *
qstore_prepared_statement_get_value (QStorePreparedStatement *self,
                                     guint                    column)
{
  QStoreResult *rows = stepped_rows (self);

  return rows != NULL ? qstore_result_get_value (rows, self->row, column) : NULL;
}

/**
 * qstore_prepared_statement_get_int64:
 * @self: a #QStorePreparedStatement
 * @column: a column index
 *
 * Gets an integer value of the row qstore_prepared_statement_step() is on.
 *
 * Returns: the value when it is %QSTORE_SQL_TYPE_INTEGER, else 0
 */
gint64
qstore_prepared_statement_get_int64 (QStorePreparedStatement *self,
                                     guint                    column)
{
  QStoreResult *rows = stepped_rows (self);

  return rows != NULL ? qstore_result_get_int64 (rows, self->row, column) : 0;
}

/**
 * qstore_prepared_statement_get_double:
 * @self: a #QStorePreparedStatement
 * @column: a column index
 *
 * Gets a real value, or an integer one as a double, of the row
 * qstore_prepared_statement_step() is on.
 *
 * Returns: the value when it is %QSTORE_SQL_TYPE_REAL or
 *   %QSTORE_SQL_TYPE_INTEGER, else 0
 */
double
qstore_prepared_statement_get_double (QStorePreparedStatement *self,
                                      guint                    column)
{
  QStoreResult *rows = stepped_rows (self);

  return rows != NULL ? qstore_result_get_double (rows, self->row, column) : 0;
}

/**
 * qstore_prepared_statement_get_text:
 * @self: a #QStorePreparedStatement
 * @column: a column index
 *
 * Gets a text value of the row qstore_prepared_statement_step() is on, as
 * qstore_result_get_text() gives it.
 *
 * Returns: (nullable): the text, valid until the next step, when the
 *   value is %QSTORE_SQL_TYPE_TEXT, else %NULL
 */
const char *
qstore_prepared_statement_get_text (QStorePreparedStatement *self,
                                    guint                    column)
{
  QStoreResult *rows = stepped_rows (self);

  return rows != NULL ? qstore_result_get_text (rows, self->row, column) : NULL;
}

/**
 * qstore_prepared_statement_get_blob:
 * @self: a #QStorePreparedStatement
 * @column: a column index
 *
 * Gets a blob value of the row qstore_prepared_statement_step() is on.
 *
 * Returns: (transfer full) (nullable): a copy of the bytes when the value
 *   is %QSTORE_SQL_TYPE_BLOB, else %NULL
 */
GBytes *
qstore_prepared_statement_get_blob (QStorePreparedStatement *self,
                                    guint                    column)
{
  QStoreResult *rows = stepped_rows (self);

  return rows != NULL ? qstore_result_get_blob (rows, self->row, column) : NULL;
}
