/* qstore-ddl-table.c: CREATE, DROP and ALTER TABLE on qstore tables
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include <json-glib/json-glib.h>

#include "qstore-affinity-private.h"
#include "qstore-coordinator-private.h"
#include "qstore-ddl-private.h"
#include "qstore-error.h"
#include "qstore-i18n-private.h"
#include "qstore-sql-token-private.h"
#include "qstore-provider-private.h"
#include "qstore-views-private.h"

/* CREATE TABLE */

gboolean
qstore_ddl_create_table (QStoreDatabase   *self,
                         QStoreStatement  *statement,
                         QStoreResult    **result,
                         GError          **error)
{
  const char *sql = statement->text;
  const char *name = statement->name;
  g_autoptr(QStoreTableSchema) schema = NULL;
  g_autofree char *bundle = NULL;
  QStoreSqlTable *entry;

  /* SQLite prepared it, so an existing table means IF NOT EXISTS. */
  if (qstore_database_lookup (self, name) != NULL)
    return TRUE;
  if (!qstore_database_check_writable (self, error))
    return FALSE;

  if (!qstore_ddl_scratch_begin (self, error))
    return FALSE;

  if (!qstore_database_run (self, self->scratch, sql, error) ||
      !qstore_ddl_check_supported_table (self, name, error) ||
      !(schema = qstore_table_schema_from_sqlite (self->scratch, "main", name, error)) ||
      !qstore_ddl_check_conflict_clauses (name, NULL, schema->sql, error) ||
      !qstore_ddl_check_table_stores (self, schema, NULL, error))
    {
      qstore_ddl_scratch_undo (self);
      return FALSE;
    }

  if (!(entry = qstore_database_attach_table (self, schema, error)))
    {
      qstore_ddl_scratch_undo (self);
      return FALSE;
    }

  bundle = qstore_table_schema_to_bundle (schema);
  if (!qstore_database_commit_catalog (self, schema->schema, schema->name, bundle, error))
    {
      qstore_database_detach_table (self, schema->name, TRUE);
      qstore_ddl_scratch_undo (self);
      return FALSE;
    }

  return qstore_ddl_scratch_commit (self, error);
}

/* DROP TABLE */

gboolean
qstore_ddl_drop_table (QStoreDatabase   *self,
                       QStoreStatement  *statement,
                       QStoreResult    **result,
                       GError          **error)
{
  sqlite3_stmt *stmt = statement->stmt;
  const char *name = statement->name;
  g_autoptr(QStoreSqlTable) entry = NULL;
  g_autoptr(GPtrArray) indexes = NULL;
  g_autoptr(GPtrArray) drop = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GArray) ops = g_array_new (FALSE, TRUE, sizeof (QStoreWriteOp));
  g_autoptr(GBytes) catalog_key = NULL;
  g_autoptr(GBytes) stats_key = NULL;
  g_autoptr(QStoreKV) stats = NULL;
  g_autofree char *stats_name = NULL;
  g_autofree char *drop_mirror = NULL;
  g_autofree char *quoted = NULL;
  QStoreTableSchema *schema;
  const char *empty[] = { NULL };
  int rc;

  entry = qstore_database_lookup (self, name);
  g_assert (entry != NULL);
  qstore_sql_table_ref (entry);
  schema = entry->schema;

  if (!qstore_database_check_writable (self, error))
    return FALSE;

  /* Storage, statistics and catalog entry go in one all-or-nothing unit. */
  indexes = qstore_ddl_index_names (schema);
  g_ptr_array_add (drop, qstore_store_name_for_table (schema->schema, schema->name));
  for (guint i = 0; indexes->pdata[i] != NULL; i++)
    g_ptr_array_add (drop, qstore_store_name_for_index (schema->schema, schema->name,
                                                        indexes->pdata[i]));
  g_ptr_array_add (drop, NULL);

  if (!(stats = qstore_provider_get_stats_store (self->provider, error)))
    return FALSE;
  stats_name = qstore_stats_key_for_table (schema->schema, schema->name);
  stats_key = g_bytes_new (stats_name, strlen (stats_name));
  catalog_key = qstore_catalog_key_for_table (schema->schema, schema->name);
  qstore_ddl_add_op (ops, stats, QSTORE_WRITE_OP_DELETE, stats_key, NULL);
  qstore_ddl_add_op (ops, qstore_database_get_catalog (self), QSTORE_WRITE_OP_DELETE, catalog_key, NULL);

  if (!qstore_provider_restructure (self->provider, (const char * const *) drop->pdata,
                                    empty, empty, (QStoreWriteOp *) ops->data, ops->len, error))
    return FALSE;
  qstore_database_forget_table_stats (self, schema->schema, schema->name);

  /* SQLite drops the virtual table (its xDestroy frees it); the mirror
   * goes with its indexes. */
  rc = sqlite3_step (stmt);
  if (rc != SQLITE_DONE)
    {
      qstore_database_set_sqlite_error (self, self->db, rc, error);
      return FALSE;
    }
  qstore_database_detach_table (self, schema->name, FALSE);

  quoted = qstore_sql_quote (schema->name);
  drop_mirror = g_strdup_printf ("DROP TABLE main.%s", quoted);
  return qstore_database_run (self, self->scratch, drop_mirror, error);
}

/* ALTER TABLE … ADD COLUMN, RENAME COLUMN, DROP COLUMN */

/* SQLite adds a column to a table with rows only when its DEFAULT is a
 * literal (its sqlite3ValueFromExpr() must evaluate it): a string, a blob,
 * a signed number, NULL, TRUE or FALSE. */
static gboolean
default_is_constant (const char *default_sql)
{
  const char *p;
  QStoreSqlToken token;

  if (default_sql == NULL)
    return TRUE;

  p = qstore_sql_skip_blank (default_sql);
  if (*p == '-' || *p == '+')
    p = qstore_sql_skip_blank (p + 1);

  if ((p[0] == 'x' || p[0] == 'X') && p[1] == '\'')
    p = qstore_sql_next_token (p + 1, &token);
  else if (*p == '\'')
    p = qstore_sql_next_token (p, &token);
  else if (g_ascii_isdigit (*p) || *p == '.')
    {
      for (p++; g_ascii_isalnum (*p) || *p == '.' ||
                ((*p == '+' || *p == '-') && (p[-1] == 'e' || p[-1] == 'E')); p++)
        ;
    }
  else
    {
      p = qstore_sql_next_token (p, &token);
      if (!qstore_sql_token_is (&token, "NULL") && !qstore_sql_token_is (&token, "TRUE") &&
          !qstore_sql_token_is (&token, "FALSE"))
        return FALSE;
    }

  return *qstore_sql_skip_blank (p) == '\0';
}

/* A private copy of @column's DEFAULT, with its affinity; NULL for none. */
static sqlite3_value *
evaluate_default (QStoreDatabase  *self,
                  QStoreColumn    *column,
                  QStoreValue     *out,
                  GError         **error)
{
  g_autofree char *sql = NULL;
  sqlite3_stmt *stmt = NULL;
  sqlite3_value *value;

  memset (out, 0, sizeof *out);
  if (column->default_sql == NULL)
    return NULL;

  sql = g_strdup_printf ("SELECT %s", column->default_sql);
  if (sqlite3_prepare_v2 (self->scratch, sql, -1, &stmt, NULL) != SQLITE_OK ||
      sqlite3_step (stmt) != SQLITE_ROW)
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                   _("The DEFAULT of column “%s” cannot be evaluated: %s"),
                   column->name, sqlite3_errmsg (self->scratch));
      sqlite3_finalize (stmt);
      return NULL;
    }
  value = sqlite3_value_dup (sqlite3_column_value (stmt, 0));
  sqlite3_finalize (stmt);

  /* Rows that predate the column read its DEFAULT the way SQLite reads a
   * literal (sqlite3ValueFromExpr()): a number for a column without
   * affinity gets numeric affinity, so 3.0 reads back as 3. */
  if (column->affinity == QSTORE_AFFINITY_BLOB &&
      (sqlite3_value_type (value) == SQLITE_INTEGER || sqlite3_value_type (value) == SQLITE_FLOAT))
    qstore_affinity_apply (QSTORE_AFFINITY_NUMERIC, value, out);
  else
    qstore_affinity_apply (column->affinity, value, out);
  return value;
}

static gboolean
table_has_rows (QStoreTable  *table,
                gboolean     *has_rows,
                GError      **error)
{
  g_autoptr(QStoreBounds) first = qstore_bounds_new ();
  g_autoptr(QStoreIter) iter = NULL;
  GError *local_error = NULL;

  qstore_bounds_set_limit (first, 1);
  if (!(iter = qstore_table_scan (table, first, error)))
    return FALSE;
  *has_rows = qstore_iter_next (iter, &local_error);
  if (local_error != NULL)
    {
      g_propagate_error (error, local_error);
      return FALSE;
    }
  return TRUE;
}

/* Rewrites every row of @old_table in @new_table's column layout: a column
 * added at the end takes @added, a dropped one (@dropped) goes. When
 * @check, each new row must pass the CHECK constraints, which SQLite
 * evaluates on the mirror. */
static gboolean
rewrite_rows (QStoreDatabase     *self,
              QStoreTable        *old_table,
              QStoreTable        *new_table,
              const QStoreValue  *added,
              int                 dropped,
              gboolean            check,
              GError            **error)
{
  QStoreTableSchema *old_schema = qstore_table_get_table_schema (old_table);
  QStoreTableSchema *new_schema = qstore_table_get_table_schema (new_table);
  guint n_old = old_schema->columns->len;
  guint n_new = new_schema->columns->len;
  gboolean keeps_rowid = new_schema->rowid_column < 0 &&
                         qstore_table_schema_is_rowid_table (new_schema);
  g_autofree QStoreValue *old_values = g_new0 (QStoreValue, n_old + 1);
  g_autofree QStoreValue *new_values = g_new0 (QStoreValue, n_new + 2);
  g_autoptr(QStoreBounds) all = qstore_bounds_new ();
  g_autoptr(QStoreIter) rows = NULL;
  g_autoptr(GByteArray) row = g_byte_array_new ();
  QStoreMirror checker = { NULL };
  GError *local_error = NULL;
  gboolean ok = TRUE;

  if (check && !qstore_mirror_prepare (self, new_schema, NULL, &checker, error))
    {
      qstore_mirror_clear (&checker);
      return FALSE;
    }

  if (!(rows = qstore_table_scan (old_table, all, error)))
    {
      qstore_mirror_clear (&checker);
      return FALSE;
    }

  while (ok && qstore_iter_next (rows, &local_error))
    {
      gsize key_len, data_len;
      const guint8 *key = qstore_iter_peek_key (rows, &key_len);
      const guint8 *data = qstore_iter_peek_value (rows, &data_len);
      gint64 rowid = 0;
      guint k = 0;

      if (!qstore_table_decode_row (old_table, data, data_len, old_values, &rowid, error))
        {
          ok = FALSE;
          break;
        }

      for (guint i = 0; i < n_old; i++)
        if ((int) i != dropped)
          new_values[k++] = old_values[i];
      if (k < n_new)
        new_values[k++] = *added;
      g_assert (k == n_new);

      if (check)
        {
          if (!qstore_mirror_put (self, &checker, new_values, NULL, &local_error))
            {
              /* SQLite's own words for an ALTER that existing rows fail. */
              if (g_error_matches (local_error, QSTORE_ERROR, QSTORE_ERROR_CONSTRAINT))
                {
                  g_clear_error (&local_error);
                  g_set_error_literal (error, QSTORE_ERROR, QSTORE_ERROR_CONSTRAINT,
                                       "CHECK constraint failed");
                }
              ok = FALSE;
              break;
            }
        }

      if (keeps_rowid)
        {
          new_values[k].type = QSTORE_VALUE_INTEGER;
          new_values[k].integer = rowid;
          k++;
        }

      g_byte_array_set_size (row, 0);
      qstore_row_encode (row, new_values, k);
      qstore_coordinator_put (self->coordinator, qstore_table_get_data_store (new_table),
                              key, key_len, row->data, row->len);
    }

  qstore_mirror_clear (&checker);
  if (local_error != NULL)
    {
      g_propagate_error (error, local_error);
      return FALSE;
    }
  return ok;
}

gboolean
qstore_ddl_alter_columns (QStoreDatabase   *self,
                          QStoreStatement  *statement,
                          QStoreResult    **result,
                          GError          **error)
{
  const char *sql = statement->text;
  QStoreScratchAction seen = { 0 };
  g_autoptr(QStoreTableSchema) old_schema = NULL;
  g_autoptr(QStoreTableSchema) schema = NULL;
  g_autoptr(QStoreTable) old_table = NULL;
  g_autoptr(QStoreTable) table = NULL;
  g_autoptr(GPtrArray) others = NULL;
  g_autoptr(GBytes) catalog_key = NULL;
  g_autofree char *bundle = NULL;
  g_autofree char *upper = NULL;
  sqlite3_value *default_value = NULL;
  QStoreAlterKind kind = statement->alter;
  QStoreValue added = { 0 };
  QStoreSqlTable *entry;
  sqlite3_stmt *stmt;
  gboolean has_rows = FALSE;
  int dropped = -1;
  gboolean ok;

  if (!(stmt = qstore_ddl_prepare_on_scratch (self, sql, NULL, &seen, error)))
    {
      qstore_scratch_action_clear (&seen);
      return FALSE;
    }
  entry = seen.action == SQLITE_ALTER_TABLE ? qstore_database_lookup (self, seen.table) : NULL;
  qstore_scratch_action_clear (&seen);
  if (entry == NULL || kind == QSTORE_ALTER_OTHER)
    {
      g_set_error_literal (error, QSTORE_ERROR, QSTORE_ERROR_UNSUPPORTED,
                           _("This ALTER TABLE is not supported on qstore tables: use ADD "
                           "COLUMN, RENAME COLUMN, DROP COLUMN, RENAME TO, ALTER COLUMN, "
                           "ADD/DROP/RENAME CONSTRAINT or ALTER PRIMARY KEY"));
      sqlite3_finalize (stmt);
      return FALSE;
    }

  old_schema = qstore_table_schema_ref (entry->schema);
  old_table = g_object_ref (entry->table);
  if (!qstore_database_check_writable (self, error) || !table_has_rows (old_table, &has_rows, error) ||
      !qstore_ddl_scratch_begin (self, error))
    {
      sqlite3_finalize (stmt);
      return FALSE;
    }

  ok = qstore_ddl_step_on_scratch (self, stmt, error);
  sqlite3_finalize (stmt);
  if (!ok ||
      !(schema = qstore_table_schema_from_sqlite (self->scratch, "main", old_schema->name,
                                                  error)) ||
      !qstore_ddl_check_conflict_clauses (old_schema->name, old_schema->sql, schema->sql, error) ||
      !(table = qstore_table_new (self->coordinator, schema, self->scratch, error)))
    goto fail;

  if (kind == QSTORE_ALTER_ADD_COLUMN)
    {
      QStoreColumn *column = g_ptr_array_index (schema->columns, schema->columns->len - 1);

      /* What SQLite checks only when the table has rows, which its mirror
       * never has. */
      if (has_rows && !default_is_constant (column->default_sql))
        {
          g_set_error_literal (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                               "Cannot add a column with non-constant default");
          goto fail;
        }
      default_value = evaluate_default (self, column, &added, error);
      if (column->default_sql != NULL && default_value == NULL)
        goto fail;
      if (has_rows && column->not_null && added.type == QSTORE_VALUE_NULL)
        {
          g_set_error_literal (error, QSTORE_ERROR, QSTORE_ERROR_CONSTRAINT,
                               "Cannot add a NOT NULL column with default value NULL");
          goto fail;
        }
    }
  else if (kind == QSTORE_ALTER_DROP_COLUMN)
    {
      for (guint i = 0; i < old_schema->columns->len && dropped < 0; i++)
        {
          QStoreColumn *column = g_ptr_array_index (old_schema->columns, i);

          if (qstore_table_schema_find_column (schema, column->name) < 0)
            dropped = i;
        }
      g_assert (dropped >= 0);
    }

  others = qstore_database_rewritten_tables (self, old_schema->name, error);
  if (others == NULL)
    goto fail;

  /* The rows in their new layout and the catalog commit together. */
  qstore_coordinator_begin (self->coordinator);
  upper = g_ascii_strup (schema->sql, -1);
  if (has_rows && kind != QSTORE_ALTER_RENAME_COLUMN &&
      !rewrite_rows (self, old_table, table, &added, dropped,
                     kind == QSTORE_ALTER_ADD_COLUMN && strstr (upper, "CHECK") != NULL,
                     error))
    {
      qstore_coordinator_rollback (self->coordinator);
      goto fail;
    }

  bundle = qstore_table_schema_to_bundle (schema);
  catalog_key = qstore_catalog_key_for_table (schema->schema, schema->name);
  qstore_database_put_catalog (self, catalog_key, bundle);
  for (guint i = 0; i < others->len; i++)
    {
      QStoreTableSchema *other = qstore_table_get_table_schema (g_ptr_array_index (others, i));
      g_autoptr(GBytes) other_key = qstore_catalog_key_for_table (other->schema, other->name);
      g_autofree char *other_bundle = qstore_table_schema_to_bundle (other);

      qstore_database_put_catalog (self, other_key, other_bundle);
    }
  /* Rows in their new layout must never meet the old catalog entry. */
  if (!qstore_coordinator_commit_restructure (self->coordinator, qstore_ddl_no_stores, error))
    goto fail;

  sqlite3_value_free (default_value);
  qstore_sql_table_set_table (entry, table);
  qstore_database_apply_tables (self, others);
  if (!qstore_ddl_scratch_commit (self, error))
    return FALSE;
  /* SQLite learns a virtual table's columns when it connects. */
  return qstore_database_redeclare (self, entry, error);

fail:
  sqlite3_value_free (default_value);
  qstore_ddl_scratch_undo (self);
  return FALSE;
}

/* ALTER TABLE … RENAME TO: SQLite renames the virtual table, and its
 * xRename (qstore_ddl_rename_table()) moves the stores. */

gboolean
qstore_ddl_rename (QStoreDatabase   *self,
                   QStoreStatement  *statement,
                   QStoreResult    **result,
                   GError          **error)
{
  int rc;

  while ((rc = sqlite3_step (statement->stmt)) == SQLITE_ROW)
    ;
  if (rc != SQLITE_DONE)
    {
      qstore_database_set_sqlite_error (self, self->db, rc, error);
      return FALSE;
    }
  /* SQLite rewrote the views that read the table. */
  return qstore_views_sync (self, error);
}

/* What an index of table @old_name is called once the table is @new_name:
 * SQLite renames the autoindexes of UNIQUE constraints with the table. */
static char *
renamed_index (const char *index,
               const char *old_name,
               const char *new_name)
{
  g_autofree char *prefix = g_strdup_printf ("sqlite_autoindex_%s_", old_name);

  if (g_ascii_strncasecmp (index, prefix, strlen (prefix)) == 0)
    return g_strdup_printf ("sqlite_autoindex_%s_%s", new_name, index + strlen (prefix));
  return g_strdup (index);
}

gboolean
qstore_ddl_rename_table (QStoreDatabase  *self,
                         QStoreSqlTable  *entry,
                         const char      *new_name,
                         GError         **error)
{
  g_autoptr(QStoreTableSchema) old_schema = qstore_table_schema_ref (entry->schema);
  g_autoptr(QStoreTableSchema) schema = NULL;
  g_autoptr(QStoreTable) table = NULL;
  g_autoptr(GPtrArray) from = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GPtrArray) to = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GPtrArray) keep = g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);
  g_autoptr(GPtrArray) texts = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GArray) ops = g_array_new (FALSE, TRUE, sizeof (QStoreWriteOp));
  g_autoptr(QStoreKV) stats = NULL;
  g_autoptr(GBytes) stats_value = NULL;
  g_autofree char *rename = NULL;
  g_autofree char *old_quoted = NULL;
  g_autofree char *new_quoted = NULL;
  g_autofree char *old_stats = NULL;
  g_autofree char *new_stats = NULL;
  g_autoptr(GPtrArray) others = NULL;
  GBytes *old_key, *new_key;
  const char *empty[] = { NULL };
  GError *local_error = NULL;

  if (!qstore_database_check_writable (self, error) || !qstore_ddl_scratch_begin (self, error))
    return FALSE;

  old_quoted = qstore_sql_quote (old_schema->name);
  new_quoted = qstore_sql_quote (new_name);
  rename = g_strdup_printf ("ALTER TABLE main.%s RENAME TO %s", old_quoted, new_quoted);
  if (!qstore_database_run (self, self->scratch, rename, error) ||
      !(schema = qstore_table_schema_from_sqlite (self->scratch, "main", new_name, error)) ||
      /* The table's own stores count as taken: a rename whose new names
       * land on them (t with index x to t_idx_x) would move a store onto
       * one not yet moved away. SQLite refuses renames that only change
       * case, the one kind that keeps every name. */
      !qstore_ddl_check_table_stores (self, schema, NULL, error) ||
      !(table = qstore_table_new (self->coordinator, schema, self->scratch, error)))
    goto fail;

  /* Stores move pairwise; a rename that only changes case keeps them. */
  g_ptr_array_add (from, qstore_store_name_for_table (old_schema->schema, old_schema->name));
  g_ptr_array_add (to, qstore_store_name_for_table (schema->schema, schema->name));
  for (guint i = 0; i < old_schema->indexes->len; i++)
    {
      QStoreIndexSchema *index = g_ptr_array_index (old_schema->indexes, i);
      g_autofree char *name = renamed_index (index->name, old_schema->name, schema->name);

      if (qstore_ddl_find_index (schema, name) < 0)
        {
          g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_FAILED,
                       _("Index “%s” of table “%s” cannot be found after renaming the "
                       "table to “%s”"), index->name, old_schema->name, schema->name);
          goto fail;
        }
      g_ptr_array_add (from, qstore_store_name_for_index (old_schema->schema, old_schema->name,
                                                          index->name));
      g_ptr_array_add (to, qstore_store_name_for_index (schema->schema, schema->name, name));
    }
  for (guint i = from->len; i > 0; i--)
    if (g_str_equal (from->pdata[i - 1], to->pdata[i - 1]))
      {
        g_ptr_array_remove_index (from, i - 1);
        g_ptr_array_remove_index (to, i - 1);
      }
  g_ptr_array_add (from, NULL);
  g_ptr_array_add (to, NULL);

  /* The statistics move too. */
  if (!(stats = qstore_provider_get_stats_store (self->provider, error)))
    goto fail;
  old_stats = qstore_stats_key_for_table (old_schema->schema, old_schema->name);
  new_stats = qstore_stats_key_for_table (schema->schema, schema->name);
  if (!g_str_equal (old_stats, new_stats))
    {
      stats_value = qstore_kv_get (stats, (const guint8 *) old_stats, strlen (old_stats),
                                   &local_error);
      if (local_error != NULL)
        {
          g_propagate_error (error, local_error);
          goto fail;
        }
      if (stats_value != NULL)
        {
          old_key = g_bytes_new (old_stats, strlen (old_stats));
          new_key = g_bytes_new (new_stats, strlen (new_stats));
          g_ptr_array_add (keep, old_key);
          g_ptr_array_add (keep, new_key);
          g_ptr_array_add (texts, g_strndup (g_bytes_get_data (stats_value, NULL),
                                             g_bytes_get_size (stats_value)));
          qstore_ddl_add_op (ops, stats, QSTORE_WRITE_OP_DELETE, old_key, NULL);
          qstore_ddl_add_op (ops, stats, QSTORE_WRITE_OP_PUT, new_key, texts->pdata[texts->len - 1]);
        }
    }

  /* The catalog: the new entry, then the old one's deletion; other tables
   * whose FOREIGN KEYs SQLite rewrote to the new name get theirs again. */
  old_key = qstore_catalog_key_for_table (old_schema->schema, old_schema->name);
  new_key = qstore_catalog_key_for_table (schema->schema, schema->name);
  g_ptr_array_add (keep, old_key);
  g_ptr_array_add (keep, new_key);
  g_ptr_array_add (texts, qstore_table_schema_to_bundle (schema));
  if (qstore_database_catalog_differs (self, new_key, texts->pdata[texts->len - 1]))
    qstore_ddl_add_op (ops, qstore_database_get_catalog (self), QSTORE_WRITE_OP_PUT, new_key,
            texts->pdata[texts->len - 1]);
  if (!g_bytes_equal (old_key, new_key))
    qstore_ddl_add_op (ops, qstore_database_get_catalog (self), QSTORE_WRITE_OP_DELETE, old_key, NULL);

  others = qstore_database_rewritten_tables (self, old_schema->name, error);
  if (others == NULL)
    goto fail;
  for (guint i = 0; i < others->len; i++)
    {
      QStoreTableSchema *other = qstore_table_get_table_schema (g_ptr_array_index (others, i));
      GBytes *key = qstore_catalog_key_for_table (other->schema, other->name);

      g_ptr_array_add (keep, key);
      g_ptr_array_add (texts, qstore_table_schema_to_bundle (other));
      if (qstore_database_catalog_differs (self, key, texts->pdata[texts->len - 1]))
        qstore_ddl_add_op (ops, qstore_database_get_catalog (self), QSTORE_WRITE_OP_PUT, key,
                texts->pdata[texts->len - 1]);
    }

  if (!qstore_provider_restructure (self->provider,
                                    empty,
                                    (const char * const *) from->pdata,
                                    (const char * const *) to->pdata,
                                    (QStoreWriteOp *) ops->data, ops->len, error))
    goto fail;

  qstore_database_forget_table_stats (self, old_schema->schema, old_schema->name);
  qstore_database_forget_table_stats (self, schema->schema, schema->name);
  qstore_database_rename_entry (self, entry, table);
  qstore_database_apply_tables (self, others);
  return qstore_ddl_scratch_commit (self, error);

fail:
  qstore_ddl_scratch_undo (self);
  return FALSE;
}

/* Repair after an interrupted commit */

/* Which stores the marker names; NULL means every store. */
static GHashTable *
marker_stores (const char *marker)
{
  g_autoptr(JsonParser) parser = json_parser_new ();
  GHashTable *stores;
  JsonNode *root;
  JsonArray *array;

  if (!json_parser_load_from_data (parser, marker, -1, NULL))
    return NULL;
  root = json_parser_get_root (parser);
  if (!JSON_NODE_HOLDS_OBJECT (root) ||
      !json_object_has_member (json_node_get_object (root), "stores") ||
      !JSON_NODE_HOLDS_ARRAY (json_object_get_member (json_node_get_object (root), "stores")))
    return NULL;

  stores = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  array = json_object_get_array_member (json_node_get_object (root), "stores");
  for (guint i = 0; i < json_array_get_length (array); i++)
    {
      JsonNode *element = json_array_get_element (array, i);

      if (JSON_NODE_HOLDS_VALUE (element) && json_node_get_value_type (element) == G_TYPE_STRING)
        g_hash_table_add (stores, g_strdup (json_node_get_string (element)));
    }
  return stores;
}

static gboolean
table_touched (QStoreTableSchema *schema,
               GHashTable        *stores)
{
  g_autofree char *data_store = NULL;

  if (stores == NULL)
    return TRUE;

  data_store = qstore_store_name_for_table (schema->schema, schema->name);
  if (g_hash_table_contains (stores, data_store))
    return TRUE;
  for (guint i = 0; i < schema->indexes->len; i++)
    {
      QStoreIndexSchema *index = g_ptr_array_index (schema->indexes, i);
      g_autofree char *index_store = qstore_store_name_for_index (schema->schema, schema->name,
                                                                 index->name);

      if (g_hash_table_contains (stores, index_store))
        return TRUE;
    }
  return FALSE;
}

/* Rebuilds @table's indexes from its rows and recounts them, in the open
 * transaction. */
static gboolean
repair_table (QStoreDatabase  *self,
              QStoreTable     *table,
              GError         **error)
{
  QStoreTableSchema *schema = qstore_table_get_table_schema (table);
  g_autoptr(QStoreBounds) all = qstore_bounds_new ();
  g_autoptr(QStoreIter) rows = NULL;
  GError *local_error = NULL;
  gint64 count = 0;

  /* The rows are what they are: a torn commit may have left two with one
   * UNIQUE value, and the index must list both. */
  for (guint i = 0; i < schema->indexes->len; i++)
    if (!qstore_ddl_rebuild_index (self, table, i, FALSE, error))
      return FALSE;

  if (!(rows = qstore_table_scan (table, all, error)))
    return FALSE;
  while (qstore_iter_next (rows, &local_error))
    count++;
  if (local_error != NULL)
    {
      g_propagate_error (error, local_error);
      return FALSE;
    }

  qstore_coordinator_adjust_row_count (self->coordinator, schema->schema, schema->name,
                                       count - qstore_coordinator_get_row_count (self->coordinator,
                                                                                 schema->schema,
                                                                                 schema->name));
  return TRUE;
}

gboolean
qstore_ddl_repair_interrupted_commit (QStoreDatabase  *self,
                                      GError         **error)
{
  const char *marker = qstore_coordinator_get_interrupted_commit (self->coordinator);
  g_autoptr(GHashTable) stores = NULL;
  GHashTableIter iter;
  QStoreSqlTable *entry;

  if (marker == NULL || (self->flags & QSTORE_OPEN_READ_ONLY))
    return TRUE;

  /* A marker that does not parse: repair everything. */
  stores = marker_stores (marker);

  qstore_coordinator_begin (self->coordinator);
  g_hash_table_iter_init (&iter, self->tables);
  while (g_hash_table_iter_next (&iter, NULL, (gpointer *) &entry))
    {
      if (!table_touched (entry->schema, stores))
        continue;
      if (!repair_table (self, entry->table, error))
        {
          g_prefix_error (error, _("Table “%s” cannot be repaired after an interrupted commit: "),
                          entry->schema->name);
          qstore_coordinator_rollback (self->coordinator);
          return FALSE;
        }
    }

  /* Committing removes the marker, even with nothing to repair. */
  return qstore_coordinator_commit (self->coordinator, error);
}

/* Reclaiming a detached table */

/**
 * qstore_database_reclaim_detached_table:
 * @self: a #QStoreDatabase
 * @schema: (nullable): the table's schema, %NULL for `main`
 * @table: the table's name, in any case
 * @index_names: (nullable) (array zero-terminated=1): the exact names of
 *   the table's indexes, as it had them (including the
 *   `sqlite_autoindex_<table>_<n>` ones of its UNIQUE constraints)
 * @error: return location for a #GError
 *
 * Removes what is left of a table that is not in the database's catalog
 * (any longer): its data store, exactly the index stores named in
 * @index_names (never every store whose name starts like them: a table
 * may be called `t_idx_x`), its statistics and its catalog entry, in one
 * all-or-nothing unit. Use it for a table whose catalog entry does not
 * load (see qstore_database_get_rehydration_result()) or whose storage
 * outlived its entry.
 *
 * Reclaiming what is already gone succeeds, so the call can be repeated.
 * A table that is loaded is refused with %QSTORE_ERROR_EXISTS (drop it
 * with DROP TABLE), and a store name another table uses with
 * %QSTORE_ERROR_COLLISION, before anything is removed.
 *
 * Returns: %TRUE on success
 */
gboolean
qstore_database_reclaim_detached_table (QStoreDatabase      *self,
                                        const char          *schema,
                                        const char          *table,
                                        const char * const  *index_names,
                                        GError             **error)
{
  g_autoptr(GPtrArray) drop = g_ptr_array_new_null_terminated (0, g_free, TRUE);
  g_autoptr(GHashTable) used = NULL;
  g_autoptr(QStoreKV) stats = NULL;
  g_autoptr(GBytes) stats_key = NULL;
  g_autoptr(GBytes) catalog_key = NULL;
  g_autofree char *stats_name = NULL;
  const char *empty[] = { NULL };
  QStoreWriteOp ops[2] = { { 0 } };
  gsize len;

  g_return_val_if_fail (QSTORE_IS_DATABASE (self), FALSE);
  g_return_val_if_fail (table != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (self->closed)
    {
      g_set_error_literal (error, QSTORE_ERROR, QSTORE_ERROR_CLOSED,
                           _("The database was closed: open it again to use it"));
      return FALSE;
    }
  if (!qstore_database_check_writable (self, error))
    return FALSE;

  if (schema == NULL)
    schema = "main";

  if (g_ascii_strcasecmp (schema, "main") == 0 && qstore_database_lookup (self, table) != NULL)
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_EXISTS,
                   _("Table “%s.%s” is in the catalog: drop it with DROP TABLE instead of "
                   "reclaiming its storage"), schema, table);
      return FALSE;
    }

  g_ptr_array_add (drop, qstore_store_name_for_table (schema, table));
  for (guint i = 0; index_names != NULL && index_names[i] != NULL; i++)
    g_ptr_array_add (drop, qstore_store_name_for_index (schema, table, index_names[i]));

  /* `_idx_` may be part of any name: a store of a loaded table is never
   * the detached table's, whatever its name looks like. */
  used = qstore_database_store_names (self, NULL);
  for (guint i = 0; i < drop->len; i++)
    {
      const char *owner = g_hash_table_lookup (used, drop->pdata[i]);

      if (owner != NULL)
        {
          g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_COLLISION,
                       _("Reclaiming table “%s.%s” would erase store “%s”, which %s uses: "
                       "pass only the detached table's own index names"),
                       schema, table, (const char *) drop->pdata[i], owner);
          return FALSE;
        }
    }

  if (!(stats = qstore_provider_get_stats_store (self->provider, error)))
    return FALSE;
  stats_name = qstore_stats_key_for_table (schema, table);
  stats_key = g_bytes_new (stats_name, strlen (stats_name));
  catalog_key = qstore_catalog_key_for_table (schema, table);

  ops[0].store = stats;
  ops[0].kind = QSTORE_WRITE_OP_DELETE;
  ops[0].key = g_bytes_get_data (stats_key, &len);
  ops[0].key_len = len;
  ops[1].store = self->catalog;
  ops[1].kind = QSTORE_WRITE_OP_DELETE;
  ops[1].key = g_bytes_get_data (catalog_key, &len);
  ops[1].key_len = len;

  if (!qstore_provider_restructure (self->provider, (const char * const *) drop->pdata,
                                    empty, empty, ops, G_N_ELEMENTS (ops), error))
    {
      g_prefix_error (error, _("Table “%s.%s” cannot be reclaimed: "), schema, table);
      return FALSE;
    }
  qstore_database_forget_table_stats (self, schema, table);
  return TRUE;
}
