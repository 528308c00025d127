/* qstore-alter-migrate.c: moving a table's rows to a new definition
 *
 * An ALTER arm (qstore-alter.c) writes the table's new CREATE TABLE; here
 * the new mirror replaces the old one on scratch, and the rows, their
 * index entries and the catalog entry move over in one coordinator
 * transaction committed through the provider's restructure, all or
 * nothing on every provider. Rows are re-keyed when the key changed and
 * checked against the new definition first.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "qstore-affinity-private.h"
#include "qstore-alter-migrate-private.h"
#include "qstore-coordinator-private.h"
#include "qstore-ddl-private.h"
#include "qstore-error.h"
#include "qstore-i18n-private.h"
#include "qstore-sql-token-private.h"
gboolean
qstore_alter_is_explicit_index (const QStoreIndexSchema *index)
{
  return !index->from_constraint && index->sql != NULL;
}

/* Replaces the mirror of @old on scratch by @sql, with @old's explicit
 * indexes but those in @skip. */
gboolean
qstore_alter_replace_mirror (QStoreDatabase     *self,
                QStoreTableSchema  *old,
                const char         *sql,
                GHashTable         *skip,
                GError            **error)
{
  g_autofree char *quoted = qstore_sql_quote (old->name);
  g_autofree char *drop = g_strdup_printf ("DROP TABLE main.%s", quoted);

  if (!qstore_database_run (self, self->scratch, drop, error) ||
      !qstore_database_run (self, self->scratch, sql, error))
    return FALSE;

  for (guint i = 0; i < old->indexes->len; i++)
    {
      QStoreIndexSchema *index = g_ptr_array_index (old->indexes, i);

      if (!qstore_alter_is_explicit_index (index) || (skip != NULL && g_hash_table_contains (skip, index)))
        continue;
      if (!qstore_database_run (self, self->scratch, index->sql, error))
        {
          g_prefix_error (error, _("Index “%s” of table “%s” no longer fits the table: "),
                          index->name, old->name);
          return FALSE;
        }
    }
  return TRUE;
}

/* Moving the rows */

static gboolean
has_hidden_rowid (QStoreTableSchema *schema)
{
  return qstore_table_schema_is_rowid_table (schema) && schema->rowid_column < 0;
}

static gboolean
parts_equal (GArray     *old_parts,
             GArray     *new_parts,
             const int  *old_column)
{
  if (old_parts->len != new_parts->len)
    return FALSE;
  for (guint i = 0; i < new_parts->len; i++)
    {
      QStoreKeyPart *a = &g_array_index (old_parts, QStoreKeyPart, i);
      QStoreKeyPart *b = &g_array_index (new_parts, QStoreKeyPart, i);

      if (old_column[b->column] != (int) a->column || a->collation != b->collation ||
          a->descending != b->descending)
        return FALSE;
    }
  return TRUE;
}

/* Whether the rows' data keys change. */
static gboolean
keys_change (QStoreMigration *m)
{
  QStoreTableSchema *old = m->old_schema;
  QStoreTableSchema *new = m->new_schema;

  if (qstore_table_schema_is_rowid_table (old) != qstore_table_schema_is_rowid_table (new))
    return TRUE;
  if (qstore_table_schema_is_rowid_table (new))
    {
      if (old->rowid_column < 0 || new->rowid_column < 0)
        return (old->rowid_column < 0) != (new->rowid_column < 0);
      return m->old_column[new->rowid_column] != old->rowid_column;
    }
  return !parts_equal (old->pk, new->pk, m->old_column);
}

static gboolean
values_change (QStoreMigration *m)
{
  if (m->old_schema->columns->len != m->new_schema->columns->len ||
      has_hidden_rowid (m->old_schema) != has_hidden_rowid (m->new_schema))
    return TRUE;
  for (guint i = 0; i < m->new_schema->columns->len; i++)
    if (m->old_column[i] != (int) i)
      return TRUE;
  return FALSE;
}

static gboolean
propagate_iter_error (GError  *local_error,
                      GError **error)
{
  if (local_error == NULL)
    return TRUE;
  g_propagate_error (error, local_error);
  return FALSE;
}

/* Deletes, in the transaction, every committed entry of @store. */
static gboolean
empty_store (QStoreDatabase  *self,
             QStoreKV        *store,
             GError         **error)
{
  g_autoptr(QStoreBounds) all = qstore_bounds_new ();
  g_autoptr(QStoreIter) iter = NULL;
  GError *local_error = NULL;

  /* The committed entries, not the transaction's own: those are what
   * deleting makes room for. */
  if (!(iter = qstore_kv_iterate (store, all, error)))
    return FALSE;
  while (qstore_iter_next (iter, &local_error))
    {
      gsize key_len;
      const guint8 *key = qstore_iter_peek_key (iter, &key_len);

      qstore_coordinator_delete (self->coordinator, store, key, key_len);
    }
  return propagate_iter_error (local_error, error);
}

/* Whether @key, the encoded primary key of a row, holds an unused key in
 * the data store; a row whose key holds NULL gets the suffix that keeps it
 * apart (see qstore-table-layout.c), counted per key in @null_suffixes. */
static gboolean
place_key (QStoreMigration   *m,
           GByteArray  *key,
           gboolean     has_null,
           GHashTable  *null_suffixes,
           GError     **error)
{
  QStoreKV *store = qstore_table_get_data_store (m->new_table);
  g_autoptr(GBytes) found = NULL;
  GError *local_error = NULL;

  if (has_null)
    {
      g_autoptr(GBytes) prefix = g_bytes_new (key->data, key->len);
      gint64 next = GPOINTER_TO_SIZE (g_hash_table_lookup (null_suffixes, prefix)) + 1;

      g_hash_table_replace (null_suffixes, g_bytes_ref (prefix), GSIZE_TO_POINTER (next));
      qstore_codec_append_integer (key, next, FALSE);
      return TRUE;
    }

  /* The old keys are all deleted in the transaction: what remains is the
   * rows already moved. */
  found = qstore_coordinator_get (m->db->coordinator, store, key->data, key->len, &local_error);
  if (local_error != NULL)
    {
      g_propagate_error (error, local_error);
      return FALSE;
    }
  if (found != NULL)
    {
      QStoreTableSchema *schema = m->new_schema;
      g_autofree char *message = NULL;

      if (schema->rowid_column >= 0)
        message = g_strdup_printf ("UNIQUE constraint failed: %s.%s", schema->name,
                                   ((QStoreColumn *) schema->columns->pdata[schema->rowid_column])->name);
      else
        message = qstore_ddl_unique_message (schema, schema->pk);

      g_set_error_literal (error, QSTORE_ERROR, QSTORE_ERROR_CONSTRAINT, message);
      return FALSE;
    }
  return TRUE;
}

/* The new data key of a row, in @key. */
static gboolean
new_data_key (QStoreMigration          *m,
              const QStoreValue  *values,
              gint64              rowid,
              GByteArray         *key,
              GHashTable         *null_suffixes,
              GError            **error)
{
  QStoreTableSchema *schema = m->new_schema;
  gboolean has_null = FALSE;

  g_byte_array_set_size (key, 0);
  if (qstore_table_schema_is_rowid_table (schema))
    {
      if (schema->rowid_column >= 0)
        {
          const QStoreValue *id = &values[schema->rowid_column];
          QStoreColumn *column = g_ptr_array_index (schema->columns, schema->rowid_column);

          /* SQLite would give a NULL a new rowid; here the rows exist, and
           * their key must come from them. */
          if (id->type != QSTORE_VALUE_INTEGER)
            {
              g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_CONSTRAINT,
                           "datatype mismatch: column “%s” of table “%s” would be its "
                           "INTEGER PRIMARY KEY, which holds integers only, and a row "
                           "holds %s there", column->name, schema->name,
                           id->type == QSTORE_VALUE_NULL ? "NULL" : "another value");
              return FALSE;
            }
          rowid = id->integer;
        }
      qstore_codec_append_integer (key, rowid, FALSE);
      return place_key (m, key, FALSE, null_suffixes, error);
    }

  for (guint i = 0; i < schema->pk->len; i++)
    {
      QStoreKeyPart *part = &g_array_index (schema->pk, QStoreKeyPart, i);

      if (values[part->column].type == QSTORE_VALUE_NULL)
        has_null = TRUE;
      if (!qstore_codec_append_key_value (key, &values[part->column], part->collation,
                                          part->descending, error))
        return FALSE;
    }
  return place_key (m, key, has_null, null_suffixes, error);
}

/* Rewrites the rows in the new layout and under their new keys, checking
 * each against the new definition. */
static gboolean
move_rows (QStoreMigration  *m,
           gboolean    rekey,
           gboolean    rewrite,
           GError    **error)
{
  QStoreDatabase *self = m->db;
  QStoreKV *old_store = qstore_table_get_data_store (m->old_table);
  QStoreKV *new_store = qstore_table_get_data_store (m->new_table);
  guint n_old = m->old_schema->columns->len;
  guint n_new = m->new_schema->columns->len;
  gboolean hidden = has_hidden_rowid (m->new_schema);
  g_autofree QStoreValue *old_values = g_new0 (QStoreValue, n_old + 1);
  g_autofree QStoreValue *new_values = g_new0 (QStoreValue, n_new + 1);
  g_autoptr(QStoreBounds) all = qstore_bounds_new ();
  g_autoptr(QStoreIter) rows = NULL;
  g_autoptr(GByteArray) key = g_byte_array_new ();
  g_autoptr(GByteArray) row = g_byte_array_new ();
  g_autoptr(GHashTable) null_suffixes = g_hash_table_new_full (g_bytes_hash, g_bytes_equal,
                                                               (GDestroyNotify) g_bytes_unref,
                                                               NULL);
  QStoreMirror mirror = { NULL };
  GError *local_error = NULL;
  gboolean ok = TRUE;

  if (!m->validate && !rekey && !rewrite)
    return TRUE;

  /* Every old key goes first, so a new key is only ever compared with
   * the keys of rows already moved. */
  if (rekey && !empty_store (self, old_store, error))
    return FALSE;

  if (m->validate && !qstore_mirror_prepare (self, m->new_schema, NULL, &mirror, error))
    {
      qstore_mirror_clear (&mirror);
      return FALSE;
    }

  /* Committed rows: the transaction holds nothing of this table but
   * what this loop writes. */
  if (!(rows = qstore_kv_iterate (old_store, all, error)))
    {
      qstore_mirror_clear (&mirror);
      return FALSE;
    }

  while (ok && qstore_iter_next (rows, &local_error))
    {
      gsize key_len, data_len;
      const guint8 *old_key = qstore_iter_peek_key (rows, &key_len);
      const guint8 *data = qstore_iter_peek_value (rows, &data_len);
      gint64 rowid = 0;

      if (!qstore_table_decode_row (m->old_table, data, data_len, old_values, &rowid, error))
        {
          ok = FALSE;
          break;
        }
      for (guint i = 0; i < n_new; i++)
        new_values[i] = old_values[m->old_column[i]];

      if (m->validate && !qstore_mirror_put (self, &mirror, new_values, NULL, error))
        {
          ok = FALSE;
          break;
        }

      if (rekey)
        {
          if (!new_data_key (m, new_values, rowid, key, null_suffixes, error))
            {
              ok = FALSE;
              break;
            }
        }
      else if (rewrite)
        {
          g_byte_array_set_size (key, 0);
          g_byte_array_append (key, old_key, key_len);
        }
      else
        continue;

      if (hidden)
        {
          g_assert (has_hidden_rowid (m->old_schema));
          new_values[n_new].type = QSTORE_VALUE_INTEGER;
          new_values[n_new].integer = rowid;
        }
      g_byte_array_set_size (row, 0);
      qstore_row_encode (row, new_values, n_new + (hidden ? 1 : 0));
      qstore_coordinator_put (self->coordinator, new_store, key->data, key->len,
                              row->data, row->len);
    }

  qstore_mirror_clear (&mirror);
  if (!propagate_iter_error (local_error, error))
    return FALSE;
  return ok;
}

/* Whether the entries of new index @index are those of an old index kept
 * in the same store. */
static gboolean
index_unchanged (QStoreMigration         *m,
                 QStoreIndexSchema *index,
                 gboolean           rekey)
{
  if (rekey)
    return FALSE;
  for (guint i = 0; i < m->old_schema->indexes->len; i++)
    {
      QStoreIndexSchema *old = g_ptr_array_index (m->old_schema->indexes, i);

      if (g_ascii_strcasecmp (old->name, index->name) != 0)
        continue;
      return old->unique == index->unique &&
             parts_equal (old->parts, index->parts, m->old_column) &&
             g_strcmp0 (old->where_sql, index->where_sql) == 0;
    }
  return FALSE;
}


/* Moves the rows and rebuilds what must be, writes the new catalog entry
 * and commits it all in one unit that also erases the index stores that
 * are gone. On failure nothing is written. */
gboolean
qstore_alter_migrate (QStoreMigration  *m,
         GError    **error)
{
  QStoreDatabase *self = m->db;
  QStoreTableSchema *old = m->old_schema;
  QStoreTableSchema *new = m->new_schema;
  gboolean rekey = keys_change (m);
  gboolean rewrite = values_change (m);
  g_autoptr(GArray) build = g_array_new (FALSE, FALSE, sizeof (guint));
  g_autoptr(GPtrArray) drop = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GBytes) catalog_key = NULL;
  g_autofree char *bundle = NULL;

  qstore_coordinator_begin (self->coordinator);

  if (!move_rows (m, rekey, rewrite, error))
    goto fail;

  for (guint i = 0; i < new->indexes->len; i++)
    {
      QStoreIndexSchema *index = g_ptr_array_index (new->indexes, i);
      int old_position = qstore_ddl_find_index (old, index->name);

      if (index_unchanged (m, index, rekey))
        continue;
      /* A store this index takes over from an old one starts empty. */
      if (old_position >= 0 &&
          !empty_store (self, qstore_table_get_index_store (m->old_table, old_position), error))
        goto fail;
      g_array_append_val (build, i);
    }
  for (guint i = 0; i < old->indexes->len; i++)
    {
      QStoreIndexSchema *index = g_ptr_array_index (old->indexes, i);

      if (qstore_ddl_find_index (new, index->name) < 0)
        g_ptr_array_add (drop, qstore_store_name_for_index (old->schema, old->name, index->name));
    }
  g_ptr_array_add (drop, NULL);

  if (!qstore_ddl_build_indexes (m->db, m->new_table, build, TRUE, error))
    goto fail;

  bundle = qstore_table_schema_to_bundle (new);
  catalog_key = qstore_catalog_key_for_table (new->schema, new->name);
  qstore_database_put_catalog (self, catalog_key, bundle);

  return qstore_coordinator_commit_restructure (self->coordinator,
                                                (const char * const *) drop->pdata, error);

fail:
  qstore_coordinator_rollback (self->coordinator);
  return FALSE;
}

/* FOREIGN KEY checks of ADD CONSTRAINT, when SQLite would enforce them */

gboolean
qstore_alter_foreign_keys_enforced (QStoreDatabase *self)
{
  sqlite3_stmt *stmt = NULL;
  gboolean on = FALSE;

  if (sqlite3_prepare_v2 (self->db, "PRAGMA main.foreign_keys", -1, &stmt, NULL) == SQLITE_OK &&
      sqlite3_step (stmt) == SQLITE_ROW)
    on = sqlite3_column_int (stmt, 0) != 0;
  sqlite3_finalize (stmt);
  return on;
}

/* Every row of @table whose foreign key columns all hold a value must
 * find its row in the referenced table. */
gboolean
qstore_alter_check_foreign_key (QStoreDatabase  *self,
                                const char      *table,
                                const char      *name,
                                GPtrArray       *columns,
                                const char      *parent_table,
                                GPtrArray       *referenced,
                                GError         **error)
{
  g_autoptr(GString) sql = g_string_new (NULL);
  g_autoptr(GPtrArray) parent_columns = g_ptr_array_new_with_free_func (g_free);
  g_autofree char *quoted_table = qstore_sql_quote (table);
  g_autofree char *quoted_parent = qstore_sql_quote (parent_table);
  QStoreSqlTable *parent = qstore_database_lookup (self, parent_table);
  sqlite3_stmt *stmt = NULL;
  int rc;

  if (parent == NULL)
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_NOT_FOUND,
                   _("Constraint “%s” of table “%s” references table “%s”, which does not "
                   "exist: create it first, or turn foreign keys off (PRAGMA foreign_keys)"),
                   name, table, parent_table);
      return FALSE;
    }

  for (guint i = 0; i < referenced->len; i++)
    g_ptr_array_add (parent_columns, g_strdup (referenced->pdata[i]));
  if (parent_columns->len == 0)
    {
      /* No columns named: the parent's primary key. */
      QStoreTableSchema *schema = parent->schema;

      if (schema->pk->len == 0)
        g_ptr_array_add (parent_columns,
                         g_strdup (schema->rowid_column >= 0
                                   ? ((QStoreColumn *) schema->columns->pdata[schema->rowid_column])->name
                                   : "rowid"));
      for (guint i = 0; i < schema->pk->len; i++)
        {
          QStoreKeyPart *part = &g_array_index (schema->pk, QStoreKeyPart, i);

          g_ptr_array_add (parent_columns,
                           g_strdup (((QStoreColumn *) schema->columns->pdata[part->column])->name));
        }
    }
  if (parent_columns->len != columns->len)
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                   "foreign key mismatch - “%s” referencing “%s”: constraint “%s” lists "
                   "%u columns, and the referenced key has %u", table, parent_table, name,
                   columns->len, parent_columns->len);
      return FALSE;
    }

  g_string_printf (sql, "SELECT 1 FROM main.%s AS c WHERE ", quoted_table);
  for (guint i = 0; i < columns->len; i++)
    {
      g_autofree char *column = qstore_sql_quote (columns->pdata[i]);

      g_string_append_printf (sql, "c.%s IS NOT NULL AND ", column);
    }
  g_string_append_printf (sql, "NOT EXISTS (SELECT 1 FROM main.%s AS p WHERE ", quoted_parent);
  for (guint i = 0; i < columns->len; i++)
    {
      g_autofree char *child = qstore_sql_quote (columns->pdata[i]);
      g_autofree char *key = qstore_sql_quote (parent_columns->pdata[i]);

      g_string_append_printf (sql, "%sp.%s = c.%s", i > 0 ? " AND " : "", key, child);
    }
  g_string_append (sql, ") LIMIT 1");

  if (sqlite3_prepare_v2 (self->db, sql->str, -1, &stmt, NULL) != SQLITE_OK)
    {
      qstore_database_set_sqlite_error (self, self->db, sqlite3_errcode (self->db), error);
      return FALSE;
    }
  rc = sqlite3_step (stmt);
  sqlite3_finalize (stmt);
  if (rc == SQLITE_ROW)
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_CONSTRAINT,
                   "FOREIGN KEY constraint failed: a row of table “%s” references a row "
                   "of table “%s” that does not exist", table, parent_table);
      return FALSE;
    }
  if (rc != SQLITE_DONE)
    {
      qstore_database_set_sqlite_error (self, self->db, rc, error);
      return FALSE;
    }
  return TRUE;
}
