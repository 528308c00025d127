/* qstore-table-eval.c: CHECK constraints and partial-index predicates
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "qstore-error.h"
#include "qstore-i18n-private.h"
#include "qstore-table-private.h"

/* CHECK constraints and partial-index predicates are evaluated by SQLite
 * on the mirror table of @eval_db: the row is inserted inside a savepoint,
 * the predicates are selected, and the savepoint is rolled back. The
 * mirror is empty otherwise, so its own keys never conflict. */

#define EVAL_SAVEPOINT "qstore_table_eval"

static char *
quote_identifier (const char *name)
{
  GString *out = g_string_new ("\"");

  for (const char *p = name; *p; p++)
    {
      if (*p == '"')
        g_string_append_c (out, '"');
      g_string_append_c (out, *p);
    }
  g_string_append_c (out, '"');
  return g_string_free (out, FALSE);
}

static gboolean
prepare_eval (QStoreTable   *self,
              sqlite3_stmt **stmt,
              const char    *sql,
              GError       **error)
{
  if (sqlite3_prepare_v3 (self->eval_db, sql, -1, SQLITE_PREPARE_PERSISTENT,
                          stmt, NULL) != SQLITE_OK)
    {
      int code = sqlite3_errcode (self->eval_db);

      g_set_error (error, QSTORE_ERROR,
                   code == SQLITE_ERROR ? QSTORE_ERROR_NOT_FOUND : QSTORE_ERROR_FAILED,
                   _("Table “%s” cannot evaluate its CHECK constraints and "
                   "partial indexes: %s; create its mirror table on the "
                   "evaluation connection first"),
                   self->schema->name, sqlite3_errmsg (self->eval_db));
      return FALSE;
    }
  return TRUE;
}

gboolean
qstore_table_prepare_evaluation (QStoreTable  *self,
                                 GError      **error)
{
  QStoreTableSchema *schema = self->schema;
  g_autofree char *table = quote_identifier (schema->name);
  g_autoptr(GString) insert = g_string_new (NULL);
  g_autoptr(GString) select = g_string_new ("SELECT ");
  guint n_predicates = 0;

  if (self->eval_db == NULL)
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                   _("Table “%s” has CHECK constraints or partial indexes, "
                   "which SQLite evaluates: give the connection that holds "
                   "its mirror table"), schema->name);
      return FALSE;
    }

  /* The mirror lives in `main` under the table's own name. */
  g_string_printf (insert, "INSERT INTO main.%s VALUES (", table);
  for (guint i = 0; i < schema->columns->len; i++)
    g_string_append_printf (insert, "%s?%u", i > 0 ? ", " : "", i + 1);
  g_string_append_c (insert, ')');

  for (guint i = 0; i < schema->indexes->len; i++)
    {
      const QStoreIndexSchema *index = g_ptr_array_index (schema->indexes, i);

      if (index->where_sql == NULL)
        continue;
      g_string_append_printf (select, "%s(%s) IS TRUE",
                              n_predicates > 0 ? ", " : "", index->where_sql);
      n_predicates++;
    }
  g_string_append_printf (select, " FROM main.%s", table);

  if (!prepare_eval (self, &self->eval_savepoint, "SAVEPOINT " EVAL_SAVEPOINT, error) ||
      !prepare_eval (self, &self->eval_rollback, "ROLLBACK TO " EVAL_SAVEPOINT, error) ||
      !prepare_eval (self, &self->eval_release, "RELEASE " EVAL_SAVEPOINT, error) ||
      !prepare_eval (self, &self->eval_insert, insert->str, error))
    return FALSE;
  if (n_predicates > 0 &&
      !prepare_eval (self, &self->eval_predicates, select->str, error))
    return FALSE;
  return TRUE;
}

static void
bind_value (sqlite3_stmt      *stmt,
            int                position,
            const QStoreValue *value)
{
  static const char empty[] = "";

  switch (value->type)
    {
    case QSTORE_VALUE_NULL:
      sqlite3_bind_null (stmt, position);
      break;

    case QSTORE_VALUE_INTEGER:
      sqlite3_bind_int64 (stmt, position, value->integer);
      break;

    case QSTORE_VALUE_REAL:
      sqlite3_bind_double (stmt, position, value->real);
      break;

    case QSTORE_VALUE_TEXT:
      sqlite3_bind_text64 (stmt, position,
                           value->bytes.len ? (const char *) value->bytes.data : empty,
                           value->bytes.len, SQLITE_STATIC, SQLITE_UTF8);
      break;

    case QSTORE_VALUE_BLOB:
      /* A NULL pointer would bind NULL, not an empty blob. */
      sqlite3_bind_blob64 (stmt, position,
                           value->bytes.len ? (const void *) value->bytes.data : empty,
                           value->bytes.len, SQLITE_STATIC);
      break;

    default:
      g_assert_not_reached ();
    }
}

static void
step_quietly (sqlite3_stmt *stmt)
{
  sqlite3_step (stmt);
  sqlite3_reset (stmt);
}

/* Puts the row (column values, the rowid included when the table has an
 * INTEGER PRIMARY KEY) into the mirror: SQLite checks its CHECK
 * constraints, then says which partial indexes hold it. A CHECK failure is
 * QSTORE_ERROR_CONSTRAINT with SQLite's message. */
gboolean
qstore_table_evaluate_row (QStoreTable        *self,
                           const QStoreValue  *values,
                           gboolean           *in_index,
                           GError            **error)
{
  guint n_columns = self->schema->columns->len;
  gboolean ok = TRUE;
  int rc;

  for (guint i = 0; i < self->index_stores->len; i++)
    in_index[i] = TRUE;

  if (!self->needs_eval)
    return TRUE;

  rc = sqlite3_step (self->eval_savepoint);
  sqlite3_reset (self->eval_savepoint);
  if (rc != SQLITE_DONE)
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_FAILED,
                   _("Table “%s”: could not start evaluating its constraints: %s"),
                   self->schema->name, sqlite3_errmsg (self->eval_db));
      return FALSE;
    }

  for (guint i = 0; i < n_columns; i++)
    bind_value (self->eval_insert, i + 1, &values[i]);
  rc = sqlite3_step (self->eval_insert);
  if (rc != SQLITE_DONE)
    {
      g_set_error_literal (error, QSTORE_ERROR,
                           (rc & 0xff) == SQLITE_CONSTRAINT ? QSTORE_ERROR_CONSTRAINT
                                                            : QSTORE_ERROR_FAILED,
                           sqlite3_errmsg (self->eval_db));
      ok = FALSE;
    }
  sqlite3_reset (self->eval_insert);
  sqlite3_clear_bindings (self->eval_insert);

  if (ok && self->eval_predicates != NULL)
    {
      rc = sqlite3_step (self->eval_predicates);
      if (rc == SQLITE_ROW)
        {
          for (guint i = 0; i < self->index_stores->len; i++)
            {
              int column = g_array_index (self->predicate_column, int, i);

              if (column >= 0)
                in_index[i] = sqlite3_column_int (self->eval_predicates, column) != 0;
            }
        }
      else
        {
          g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_FAILED,
                       _("Table “%s”: could not evaluate its partial index "
                       "predicates: %s"), self->schema->name,
                       sqlite3_errmsg (self->eval_db));
          ok = FALSE;
        }
      sqlite3_reset (self->eval_predicates);
    }

  step_quietly (self->eval_rollback);
  step_quietly (self->eval_release);
  return ok;
}
