/* qstore-table.c: a table with a primary key, indexes and constraints
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "qstore-error.h"
#include "qstore-i18n-private.h"
#include "qstore-sql-token-private.h"
#include "qstore-table-private.h"

/**
 * QStoreTable:
 *
 * A table of a qstore database: rows keyed by their primary key (or by
 * their rowid), secondary indexes, and the constraints of its `CREATE
 * TABLE` — PRIMARY KEY, UNIQUE, NOT NULL and CHECK — enforced with
 * SQLite's meaning and messages.
 *
 * Every read and write goes through the database's [class@Coordinator]:
 * reads see the writes of the open transaction, and a write made while no
 * transaction is open runs in a transaction of its own.
 *
 * Rows and keys are #GVariant tuples of values (see
 * [func@value_new_null] for the encoding of each SQL type). A key is the
 * tuple of the primary key's columns in key order, or the single rowid of a
 * table without one. As in SQLite, a PRIMARY KEY column (other than an
 * INTEGER PRIMARY KEY) may hold NULL, each NULL distinct: such rows never
 * conflict on their key, and no key finds them, as `= NULL` never holds
 * (qstore_table_select_range() and SQL reach them). Values are stored as
 * given: the SQL front applies
 * SQLite's column affinity before it writes, and callers of this API who
 * want it pass values of the column's type.
 *
 * A table is used from one thread at a time, like its coordinator.
 */

G_DEFINE_FINAL_TYPE (QStoreTable, qstore_table, G_TYPE_OBJECT)

enum {
  PROP_0,
  PROP_COORDINATOR,
  PROP_SCHEMA_NAME,
  PROP_NAME,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static void
qstore_table_finalize (GObject *object)
{
  QStoreTable *self = QSTORE_TABLE (object);

  g_clear_pointer (&self->eval_savepoint, sqlite3_finalize);
  g_clear_pointer (&self->eval_rollback, sqlite3_finalize);
  g_clear_pointer (&self->eval_release, sqlite3_finalize);
  g_clear_pointer (&self->eval_insert, sqlite3_finalize);
  g_clear_pointer (&self->eval_predicates, sqlite3_finalize);
  g_clear_pointer (&self->predicate_column, g_array_unref);
  g_clear_pointer (&self->index_stores, g_ptr_array_unref);
  qstore_table_write_buffers_clear (&self->buffers);
  g_clear_object (&self->data_store);
  g_clear_pointer (&self->schema, qstore_table_schema_unref);
  g_clear_object (&self->coordinator);

  g_free (self->contents_of);

  G_OBJECT_CLASS (qstore_table_parent_class)->finalize (object);
}

static void
qstore_table_get_property (GObject    *object,
                           guint       prop_id,
                           GValue     *value,
                           GParamSpec *pspec)
{
  QStoreTable *self = QSTORE_TABLE (object);

  switch (prop_id)
    {
    case PROP_COORDINATOR:
      g_value_set_object (value, self->coordinator);
      break;

    case PROP_SCHEMA_NAME:
      g_value_set_string (value, qstore_table_get_schema_name (self));
      break;

    case PROP_NAME:
      g_value_set_string (value, qstore_table_get_name (self));
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
qstore_table_class_init (QStoreTableClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = qstore_table_finalize;
  object_class->get_property = qstore_table_get_property;

  /**
   * QStoreTable:coordinator: (getter get_coordinator)
   *
   * The coordinator every read and write of the table goes through.
   */
  properties[PROP_COORDINATOR] =
    g_param_spec_object ("coordinator", NULL, NULL,
                         QSTORE_TYPE_COORDINATOR,
                         G_PARAM_READABLE | G_PARAM_STATIC_STRINGS |
                         G_PARAM_EXPLICIT_NOTIFY);

  /**
   * QStoreTable:schema-name: (getter get_schema_name)
   *
   * The schema the table belongs to, such as `main`.
   */
  properties[PROP_SCHEMA_NAME] =
    g_param_spec_string ("schema-name", NULL, NULL, NULL,
                         G_PARAM_READABLE | G_PARAM_STATIC_STRINGS |
                         G_PARAM_EXPLICIT_NOTIFY);

  /**
   * QStoreTable:name: (getter get_name)
   *
   * The table's name, as declared.
   */
  properties[PROP_NAME] =
    g_param_spec_string ("name", NULL, NULL, NULL,
                         G_PARAM_READABLE | G_PARAM_STATIC_STRINGS |
                         G_PARAM_EXPLICIT_NOTIFY);

  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
qstore_table_init (QStoreTable *self)
{
  self->rowid_position = -1;
  qstore_table_write_buffers_init (&self->buffers);
}

/* Construction */

QStoreTable *
qstore_table_new (QStoreCoordinator  *coordinator,
                  QStoreTableSchema  *schema,
                  sqlite3            *eval_db,
                  GError            **error)
{
  g_autoptr(QStoreTable) self = NULL;
  QStoreProvider *provider;
  int n_partial = 0;

  g_return_val_if_fail (QSTORE_IS_COORDINATOR (coordinator), NULL);
  g_return_val_if_fail (schema != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  self = g_object_new (QSTORE_TYPE_TABLE, NULL);
  self->coordinator = g_object_ref (coordinator);
  self->schema = qstore_table_schema_ref (schema);
  self->eval_db = eval_db;

  self->n_values = schema->columns->len;
  if (qstore_table_schema_is_rowid_table (schema))
    {
      if (schema->rowid_column >= 0)
        self->rowid_position = schema->rowid_column;
      else
        self->rowid_position = self->n_values++;
    }

  provider = qstore_coordinator_get_provider (coordinator);
  self->data_store = qstore_provider_get_store (provider, schema->schema, schema->name, error);
  if (self->data_store == NULL)
    return NULL;

  self->index_stores = g_ptr_array_new_with_free_func (g_object_unref);
  self->predicate_column = g_array_new (FALSE, FALSE, sizeof (int));
  for (guint i = 0; i < schema->indexes->len; i++)
    {
      const QStoreIndexSchema *index = g_ptr_array_index (schema->indexes, i);
      QStoreKV *store;
      int column = -1;

      store = qstore_provider_get_index_store (provider, schema->schema, schema->name,
                                               index->name, error);
      if (store == NULL)
        return NULL;
      g_ptr_array_add (self->index_stores, store);

      if (index->where_sql != NULL)
        column = n_partial++;
      g_array_append_val (self->predicate_column, column);
    }

  self->needs_eval = schema->checks->len > 0 || n_partial > 0;
  if (self->needs_eval && !qstore_table_prepare_evaluation (self, error))
    return NULL;

  return g_steal_pointer (&self);
}

/* Accessors */

QStoreTableSchema *
qstore_table_get_table_schema (QStoreTable *self)
{
  g_return_val_if_fail (QSTORE_IS_TABLE (self), NULL);

  return self->schema;
}

QStoreKV *
qstore_table_get_data_store (QStoreTable *self)
{
  g_return_val_if_fail (QSTORE_IS_TABLE (self), NULL);

  return self->data_store;
}

QStoreKV *
qstore_table_get_index_store (QStoreTable *self,
                              guint        index)
{
  g_return_val_if_fail (QSTORE_IS_TABLE (self), NULL);
  g_return_val_if_fail (index < self->index_stores->len, NULL);

  return g_ptr_array_index (self->index_stores, index);
}

/**
 * qstore_table_get_schema_name:
 * @self: a #QStoreTable
 *
 * Gets the schema the table belongs to.
 *
 * Returns: the schema's name, such as `main`
 */
const char *
qstore_table_get_schema_name (QStoreTable *self)
{
  g_return_val_if_fail (QSTORE_IS_TABLE (self), NULL);

  return self->schema->schema;
}

/**
 * qstore_table_get_name:
 * @self: a #QStoreTable
 *
 * Gets the table's name, as its `CREATE TABLE` declares it.
 *
 * Returns: the table's name
 */
const char *
qstore_table_get_name (QStoreTable *self)
{
  g_return_val_if_fail (QSTORE_IS_TABLE (self), NULL);

  return self->schema->name;
}

/**
 * qstore_table_get_sql:
 * @self: a #QStoreTable
 *
 * Gets the `CREATE TABLE` statement of the table, as SQLite keeps it.
 *
 * Returns: the table's `CREATE TABLE` text
 */
const char *
qstore_table_get_sql (QStoreTable *self)
{
  g_return_val_if_fail (QSTORE_IS_TABLE (self), NULL);

  return self->schema->sql;
}

/**
 * qstore_table_get_n_columns:
 * @self: a #QStoreTable
 *
 * Gets the number of columns of the table; a row has one value per column.
 *
 * Returns: the number of columns
 */
guint
qstore_table_get_n_columns (QStoreTable *self)
{
  g_return_val_if_fail (QSTORE_IS_TABLE (self), 0);

  return self->schema->columns->len;
}

/**
 * qstore_table_get_column_name:
 * @self: a #QStoreTable
 * @column: a column position, from 0
 *
 * Gets the name of a column.
 *
 * Returns: (nullable): the column's name, or %NULL when @column is out of
 *   range
 */
const char *
qstore_table_get_column_name (QStoreTable *self,
                              guint        column)
{
  const QStoreColumn *c;

  g_return_val_if_fail (QSTORE_IS_TABLE (self), NULL);

  if (column >= self->schema->columns->len)
    return NULL;
  c = g_ptr_array_index (self->schema->columns, column);
  return c->name;
}

/**
 * qstore_table_list_indexes:
 * @self: a #QStoreTable
 *
 * Lists the table's indexes: those of its UNIQUE constraints first (named
 * by SQLite, `sqlite_autoindex_<table>_<n>`), then those made with
 * `CREATE INDEX`, by name.
 *
 * Returns: (transfer full) (array zero-terminated=1): the index names
 */
char **
qstore_table_list_indexes (QStoreTable *self)
{
  GStrvBuilder *builder;
  char **names;

  g_return_val_if_fail (QSTORE_IS_TABLE (self), NULL);

  builder = g_strv_builder_new ();
  for (guint i = 0; i < self->schema->indexes->len; i++)
    {
      const QStoreIndexSchema *index = g_ptr_array_index (self->schema->indexes, i);

      g_strv_builder_add (builder, index->name);
    }
  names = g_strv_builder_end (builder);
  g_strv_builder_unref (builder);
  return names;
}

/**
 * qstore_table_get_coordinator:
 * @self: a #QStoreTable
 *
 * Gets the coordinator the table reads and writes through.
 *
 * Returns: (transfer none): the table's coordinator
 */
QStoreCoordinator *
qstore_table_get_coordinator (QStoreTable *self)
{
  g_return_val_if_fail (QSTORE_IS_TABLE (self), NULL);

  return self->coordinator;
}

/**
 * qstore_table_get_row_count:
 * @self: a #QStoreTable
 *
 * Gets the number of rows of the table, the open transaction's inserts and
 * deletes included.
 *
 * Returns: the number of rows
 */
gint64
qstore_table_get_row_count (QStoreTable *self)
{
  g_return_val_if_fail (QSTORE_IS_TABLE (self), 0);

  return qstore_coordinator_get_row_count (self->coordinator, self->schema->schema,
                                           self->schema->name);
}

/* Reads */

GBytes *
qstore_table_get_row (QStoreTable   *self,
                      const guint8  *key,
                      gsize          key_len,
                      GError       **error)
{
  g_return_val_if_fail (QSTORE_IS_TABLE (self), NULL);
  g_return_val_if_fail (key != NULL || key_len == 0, NULL);

  return qstore_coordinator_get (self->coordinator, self->data_store, key, key_len, error);
}

gboolean
qstore_table_lookup_row (QStoreTable    *self,
                         const guint8   *key,
                         gsize           key_len,
                         const guint8  **row,
                         gsize          *row_len,
                         GError        **error)
{
  g_return_val_if_fail (QSTORE_IS_TABLE (self), FALSE);
  g_return_val_if_fail (key != NULL || key_len == 0, FALSE);

  return qstore_coordinator_lookup (self->coordinator, self->data_store, key, key_len,
                                    row, row_len, error);
}

QStoreIter *
qstore_table_scan (QStoreTable         *self,
                   const QStoreBounds  *bounds,
                   GError             **error)
{
  g_autoptr(QStoreBounds) all = NULL;

  g_return_val_if_fail (QSTORE_IS_TABLE (self), NULL);

  if (bounds == NULL)
    bounds = all = qstore_bounds_new ();
  return qstore_coordinator_iterate (self->coordinator, self->data_store, bounds, error);
}

QStoreIter *
qstore_table_scan_index (QStoreTable         *self,
                         guint                index,
                         const QStoreBounds  *bounds,
                         GError             **error)
{
  g_autoptr(QStoreBounds) all = NULL;

  g_return_val_if_fail (QSTORE_IS_TABLE (self), NULL);
  g_return_val_if_fail (index < self->index_stores->len, NULL);

  if (bounds == NULL)
    bounds = all = qstore_bounds_new ();
  return qstore_coordinator_iterate (self->coordinator,
                                     g_ptr_array_index (self->index_stores, index),
                                     bounds, error);
}

/* The GVariant API */

/* Values of a row or key: a tuple or `av`, each child as in
 * qstore_value_from_variant(). @holders keeps what the values borrow. */
static gboolean
values_from_variant (QStoreTable  *self,
                     GVariant     *tuple,
                     const char   *what,
                     guint         min,
                     guint         max,
                     QStoreValue **values_out,
                     guint        *n_out,
                     GPtrArray    *holders,
                     GError      **error)
{
  g_autofree QStoreValue *values = NULL;
  gsize n;

  if (!g_variant_is_of_type (tuple, G_VARIANT_TYPE_TUPLE) &&
      !g_variant_is_of_type (tuple, G_VARIANT_TYPE ("av")))
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                   _("Table “%s”: a %s must be a tuple or an “av” array of "
                   "values, not “%s”"), self->schema->name, what,
                   g_variant_get_type_string (tuple));
      return FALSE;
    }

  n = g_variant_n_children (tuple);
  if (n < min || n > max)
    {
      if (min == max)
        g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                     "Table “%s”: a %s has %u values, not %" G_GSIZE_FORMAT,
                     self->schema->name, what, min, n);
      else
        g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                     "Table “%s”: a %s has %u to %u values, not %" G_GSIZE_FORMAT,
                     self->schema->name, what, min, max, n);
      return FALSE;
    }

  values = g_new0 (QStoreValue, MAX (n, 1));
  for (gsize i = 0; i < n; i++)
    {
      g_autoptr(GVariant) child = g_variant_get_child_value (tuple, i);
      GVariant *holder = qstore_value_from_variant (child, &values[i], error);

      if (holder == NULL)
        {
          g_prefix_error (error, "Table “%s”, %s value %" G_GSIZE_FORMAT ": ",
                          self->schema->name, what, i);
          return FALSE;
        }
      g_ptr_array_add (holders, holder);
    }

  *values_out = g_steal_pointer (&values);
  *n_out = n;
  return TRUE;
}

static guint
n_key_parts (QStoreTable *self)
{
  return qstore_table_schema_is_rowid_table (self->schema) ? 1 : self->schema->pk->len;
}

/* Encodes a key given as a tuple of the key columns (@min to all of them
 * for a prefix), or as one bare value for a one-column key. */
static gboolean
key_from_variant (QStoreTable  *self,
                  GVariant     *key,
                  guint         min,
                  GByteArray   *out,
                  GError      **error)
{
  g_autoptr(GPtrArray) holders = g_ptr_array_new_with_free_func ((GDestroyNotify) g_variant_unref);
  g_autofree QStoreValue *values = NULL;
  g_autoptr(GVariant) owned = g_variant_ref_sink (key);
  guint n_parts = n_key_parts (self);
  guint n;

  if (!g_variant_is_of_type (owned, G_VARIANT_TYPE_TUPLE) &&
      !g_variant_is_of_type (owned, G_VARIANT_TYPE ("av")))
    {
      g_autoptr(GVariant) wrapped = g_variant_ref_sink (g_variant_new_tuple (&owned, 1));

      return key_from_variant (self, wrapped, min, out, error);
    }

  if (!values_from_variant (self, owned, "key", min, n_parts, &values, &n, holders, error))
    return FALSE;

  if (qstore_table_schema_is_rowid_table (self->schema) && n == 1 &&
      values[0].type != QSTORE_VALUE_INTEGER)
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                   _("Table “%s” is keyed by its rowid: give an integer key"),
                   self->schema->name);
      return FALSE;
    }

  return qstore_table_encode_key_prefix (self, -1, values, n, out, error);
}

static GVariant *
row_to_variant (QStoreTable   *self,
                GBytes        *row,
                GError       **error)
{
  g_auto(GVariantBuilder) builder = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_TUPLE);
  g_autofree QStoreValue *values = g_new0 (QStoreValue, self->n_values);
  gsize len;
  const guint8 *data = g_bytes_get_data (row, &len);

  if (!qstore_table_read_stored_row (self, data, len, values, error))
    return NULL;

  for (guint i = 0; i < self->schema->columns->len; i++)
    g_variant_builder_add_value (&builder,
                                 g_variant_new_variant (qstore_value_to_variant (&values[i])));
  return g_variant_ref_sink (g_variant_builder_end (&builder));
}

/* Ends a write of the GVariant API: commits or rolls back the transaction
 * it began, or with a ROLLBACK conflict rolls back the caller's. */
static gboolean
finish_write (QStoreTable     *self,
              gboolean         own_transaction,
              gboolean         ok,
              QStoreConflict   conflict,
              GError          *local_error,
              GError         **error)
{
  if (own_transaction)
    {
      if (ok)
        return qstore_coordinator_commit (self->coordinator, error);
      qstore_coordinator_rollback (self->coordinator);
    }
  else if (!ok && conflict == QSTORE_CONFLICT_ROLLBACK &&
           g_error_matches (local_error, QSTORE_ERROR, QSTORE_ERROR_CONSTRAINT))
    {
      qstore_coordinator_rollback (self->coordinator);
    }

  if (!ok)
    g_propagate_error (error, local_error);
  return ok;
}

/* Marks @self as the contents of materialized view @view (or unmarks
 * it, with %NULL): its rows are then the view's to write. */
void
qstore_table_set_contents_of (QStoreTable *self,
                              const char  *view)
{
  g_free (self->contents_of);
  self->contents_of = g_strdup (view);
}

static gboolean
check_writable (QStoreTable  *self,
                GError      **error)
{
  if (self->contents_of == NULL)
    return TRUE;
  g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_READ_ONLY,
               _("Table “%s” holds the rows of materialized view “%s”, which keeps them up to "
               "date: change the tables it reads instead"), self->schema->name, self->contents_of);
  return FALSE;
}

/**
 * qstore_table_insert:
 * @self: a #QStoreTable
 * @row: a tuple (or `av` array) of one value per column
 * @conflict: what to do when the row collides with another
 * @error: return location for a #GError
 *
 * Inserts a row. An INTEGER PRIMARY KEY given as NULL, and the rowid of a
 * table without a primary key, get the next id as in SQLite.
 *
 * A NOT NULL, CHECK, PRIMARY KEY or UNIQUE violation fails with
 * %QSTORE_ERROR_CONSTRAINT and SQLite's message, unless @conflict says
 * otherwise (see #QStoreConflict). With %QSTORE_CONFLICT_ROLLBACK, the open
 * transaction is rolled back.
 *
 * Outside a transaction the insert commits on its own.
 *
 * Returns: %TRUE when the row was inserted or ignored
 */
gboolean
qstore_table_insert (QStoreTable     *self,
                     GVariant        *row,
                     QStoreConflict   conflict,
                     GError         **error)
{
  g_autoptr(GPtrArray) holders = g_ptr_array_new_with_free_func ((GDestroyNotify) g_variant_unref);
  g_autoptr(GVariant) owned = NULL;
  g_autofree QStoreValue *values = NULL;
  GError *local_error = NULL;
  gboolean own_transaction;
  gboolean ok;
  guint n_columns;
  guint n;

  g_return_val_if_fail (QSTORE_IS_TABLE (self), FALSE);
  g_return_val_if_fail (row != NULL, FALSE);
  g_return_val_if_fail (conflict <= QSTORE_CONFLICT_REPLACE, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  owned = g_variant_ref_sink (row);
  if (!check_writable (self, error))
    return FALSE;
  n_columns = self->schema->columns->len;
  if (!values_from_variant (self, owned, "row", n_columns, n_columns, &values, &n,
                            holders, error))
    return FALSE;

  own_transaction = !qstore_coordinator_in_transaction (self->coordinator);
  if (own_transaction)
    qstore_coordinator_begin (self->coordinator);

  ok = qstore_table_insert_values (self, values, conflict, NULL, NULL, &local_error);
  return finish_write (self, own_transaction, ok, conflict,
                       g_steal_pointer (&local_error), error);
}

/**
 * qstore_table_update:
 * @self: a #QStoreTable
 * @key: the key of the row: a tuple of the primary key's values, or the
 *   rowid; a one-column key may be given as a bare value
 * @row: a tuple (or `av` array) of one value per column
 * @conflict: what to do when the new row collides with another
 * @error: return location for a #GError
 *
 * Replaces the row stored under @key. When the new values change the
 * primary key, the row moves (a change SQLite's collation calls equal, such
 * as a case-only change under NOCASE, keeps it in place). Constraints are
 * enforced as by qstore_table_insert().
 *
 * Returns: %TRUE when the row was updated or ignored; %FALSE with
 *   %QSTORE_ERROR_NOT_FOUND when no row has that key
 */
gboolean
qstore_table_update (QStoreTable     *self,
                     GVariant        *key,
                     GVariant        *row,
                     QStoreConflict   conflict,
                     GError         **error)
{
  g_autoptr(GPtrArray) holders = g_ptr_array_new_with_free_func ((GDestroyNotify) g_variant_unref);
  g_autoptr(GVariant) owned = NULL;
  g_autoptr(GByteArray) encoded = g_byte_array_new ();
  g_autofree QStoreValue *values = NULL;
  GError *local_error = NULL;
  gboolean own_transaction;
  gboolean ok;
  guint n_columns;
  guint n;

  g_return_val_if_fail (QSTORE_IS_TABLE (self), FALSE);
  g_return_val_if_fail (key != NULL, FALSE);
  g_return_val_if_fail (row != NULL, FALSE);
  g_return_val_if_fail (conflict <= QSTORE_CONFLICT_REPLACE, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  owned = g_variant_ref_sink (row);
  if (!check_writable (self, error) ||
      !key_from_variant (self, key, n_key_parts (self), encoded, error))
    return FALSE;
  n_columns = self->schema->columns->len;
  if (!values_from_variant (self, owned, "row", n_columns, n_columns, &values, &n,
                            holders, error))
    return FALSE;

  own_transaction = !qstore_coordinator_in_transaction (self->coordinator);
  if (own_transaction)
    qstore_coordinator_begin (self->coordinator);

  ok = qstore_table_update_values (self, encoded->data, encoded->len, values, conflict,
                                   NULL, &local_error);
  return finish_write (self, own_transaction, ok, conflict,
                       g_steal_pointer (&local_error), error);
}

/**
 * qstore_table_delete:
 * @self: a #QStoreTable
 * @key: the key of the row, as for qstore_table_update()
 * @error: return location for a #GError
 *
 * Deletes the row stored under @key, and its index entries. Deleting a row
 * that does not exist changes nothing.
 *
 * Returns: %TRUE on success
 */
gboolean
qstore_table_delete (QStoreTable  *self,
                     GVariant     *key,
                     GError      **error)
{
  g_autoptr(GByteArray) encoded = g_byte_array_new ();
  GError *local_error = NULL;
  gboolean own_transaction;
  gboolean ok;

  g_return_val_if_fail (QSTORE_IS_TABLE (self), FALSE);
  g_return_val_if_fail (key != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (!key_from_variant (self, key, n_key_parts (self), encoded, error) ||
      !check_writable (self, error))
    return FALSE;

  own_transaction = !qstore_coordinator_in_transaction (self->coordinator);
  if (own_transaction)
    qstore_coordinator_begin (self->coordinator);

  ok = qstore_table_delete_key (self, encoded->data, encoded->len, &local_error);
  return finish_write (self, own_transaction, ok, QSTORE_CONFLICT_ABORT,
                       g_steal_pointer (&local_error), error);
}

/**
 * qstore_table_get:
 * @self: a #QStoreTable
 * @key: the key of the row, as for qstore_table_update()
 * @error: return location for a #GError
 *
 * Reads one row, as the open transaction sees it.
 *
 * Returns: (transfer full) (nullable): the row, a tuple of one `v` per
 *   column, or %NULL without error when no row has that key
 */
GVariant *
qstore_table_get (QStoreTable  *self,
                  GVariant     *key,
                  GError      **error)
{
  g_autoptr(GByteArray) encoded = g_byte_array_new ();
  g_autoptr(GBytes) row = NULL;
  g_autoptr(GError) local_error = NULL;

  g_return_val_if_fail (QSTORE_IS_TABLE (self), NULL);
  g_return_val_if_fail (key != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!key_from_variant (self, key, n_key_parts (self), encoded, error))
    return NULL;

  row = qstore_table_get_row (self, encoded->data, encoded->len, &local_error);
  if (row == NULL)
    {
      if (local_error != NULL)
        g_propagate_error (error, g_steal_pointer (&local_error));
      return NULL;
    }
  return row_to_variant (self, row, error);
}

/**
 * qstore_table_select_range:
 * @self: a #QStoreTable
 * @lower: (nullable): the smallest key to return, or %NULL to start at the
 *   first row; a tuple of the first primary key columns (a prefix)
 *   includes every row that starts with it
 * @upper: (nullable): the largest key to return, or %NULL to go to the
 *   last row; a prefix includes every row that starts with it
 * @reverse: whether to return rows from the largest key down
 * @limit: the most rows to return, or -1 for all of them
 * @error: return location for a #GError
 *
 * Reads the rows whose keys lie between @lower and @upper, both included,
 * in key order (the order of `ORDER BY` over the primary key, with its
 * collations and directions), as the open transaction sees them.
 *
 * Returns: (transfer full) (element-type GVariant): the rows, each a tuple
 *   of one `v` per column, or %NULL on error
 */
GPtrArray *
qstore_table_select_range (QStoreTable  *self,
                           GVariant     *lower,
                           GVariant     *upper,
                           gboolean      reverse,
                           gint64        limit,
                           GError      **error)
{
  g_autoptr(GPtrArray) rows = NULL;
  g_autoptr(QStoreBounds) bounds = qstore_bounds_new ();
  g_autoptr(QStoreIter) iter = NULL;
  g_autoptr(GByteArray) encoded = g_byte_array_new ();
  g_autoptr(GByteArray) successor = g_byte_array_new ();
  g_autoptr(GError) local_error = NULL;

  g_return_val_if_fail (QSTORE_IS_TABLE (self), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (lower != NULL)
    {
      if (!key_from_variant (self, lower, 0, encoded, error))
        return NULL;
      qstore_bounds_set_gte (bounds, encoded->data, encoded->len);
    }
  if (upper != NULL)
    {
      if (!key_from_variant (self, upper, 0, encoded, error))
        return NULL;
      /* Every key that starts with @upper is at or below it. */
      if (encoded->len > 0 &&
          qstore_table_prefix_successor (encoded->data, encoded->len, successor))
        qstore_bounds_set_lt (bounds, successor->data, successor->len);
    }
  qstore_bounds_set_reverse (bounds, reverse);
  if (limit >= 0)
    qstore_bounds_set_limit (bounds, limit);

  iter = qstore_table_scan (self, bounds, error);
  if (iter == NULL)
    return NULL;

  rows = g_ptr_array_new_with_free_func ((GDestroyNotify) g_variant_unref);
  while (qstore_iter_next (iter, &local_error))
    {
      g_autoptr(GBytes) row = qstore_iter_get_value (iter);
      GVariant *value = row_to_variant (self, row, error);

      if (value == NULL)
        return NULL;
      g_ptr_array_add (rows, value);
    }
  if (local_error != NULL)
    {
      g_propagate_error (error, g_steal_pointer (&local_error));
      return NULL;
    }

  return g_steal_pointer (&rows);
}
