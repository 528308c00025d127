/* qstore-replica-maintain.c: foreign key audit, maintenance, checkpoint
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "qstore-error.h"
#include "qstore-i18n-private.h"
#include "qstore-replica-private.h"
#include "qstore-sql-token-private.h"

/* Reports are `a{sv}` dictionaries: what a service forwards as it is. */

/* Foreign keys */

/* The columns a foreign key without a column list points at: the
 * parent's primary key. */
static GPtrArray *
parent_key_columns (QStoreDatabase *db,
                    const char     *parent)
{
  QStoreSqlTable *entry = qstore_database_lookup (db, parent);
  GPtrArray *columns = g_ptr_array_new_with_free_func (g_free);
  QStoreTableSchema *schema;

  if (entry == NULL)
    return columns;
  schema = entry->schema;
  if (schema->rowid_column >= 0)
    g_ptr_array_add (columns, g_strdup (((QStoreColumn *) g_ptr_array_index (schema->columns,
                                                                                schema->rowid_column))->name));
  for (guint i = 0; i < schema->pk->len; i++)
    {
      QStoreKeyPart *part = &g_array_index (schema->pk, QStoreKeyPart, i);

      g_ptr_array_add (columns, g_strdup (((QStoreColumn *) g_ptr_array_index (schema->columns,
                                                                                  part->column))->name));
    }
  return columns;
}

/* The child's rows whose key columns all hold a value that no parent row
 * has (SQLite's MATCH SIMPLE): a parent that does not exist has none. */
static char *
violations_sql (QStoreTableSchema *child,
                QStoreForeignKey  *fk,
                GPtrArray         *parent_columns,
                gboolean           parent_exists)
{
  GString *sql = g_string_new (NULL);
  g_autofree char *child_name = qstore_sql_quote (child->name);
  g_autofree char *parent_name = qstore_sql_quote (fk->table);

  g_string_append_printf (sql, "SELECT c.* FROM %s AS c WHERE ", child_name);
  for (guint i = 0; i < fk->from_columns->len; i++)
    {
      QStoreColumn *column = g_ptr_array_index (child->columns, g_array_index (fk->from_columns, guint, i));
      g_autofree char *name = qstore_sql_quote (column->name);

      g_string_append_printf (sql, "%sc.%s IS NOT NULL", i > 0 ? " AND " : "", name);
    }
  if (!parent_exists)
    return g_string_free (sql, FALSE);
  g_string_append_printf (sql, " AND NOT EXISTS (SELECT 1 FROM %s AS p WHERE ", parent_name);
  for (guint i = 0; i < fk->from_columns->len; i++)
    {
      QStoreColumn *column = g_ptr_array_index (child->columns, g_array_index (fk->from_columns, guint, i));
      g_autofree char *name = qstore_sql_quote (column->name);
      g_autofree char *parent = qstore_sql_quote (parent_columns->pdata[i]);

      g_string_append_printf (sql, "%sp.%s = c.%s", i > 0 ? " AND " : "", parent, name);
    }
  g_string_append (sql, ")");
  return g_string_free (sql, FALSE);
}

static GVariant *
audit_constraint (QStoreDatabase     *db,
                  QStoreTableSchema  *child,
                  QStoreForeignKey   *fk,
                  guint               number,
                  guint               max_rows,
                  GError            **error)
{
  g_autoptr(GPtrArray) parent_columns = NULL;
  g_autoptr(GPtrArray) child_columns = g_ptr_array_new ();
  g_autoptr(QStoreResult) result = NULL;
  g_autofree char *sql = NULL;
  g_autofree char *name = NULL;
  g_auto(GVariantDict) dict = G_VARIANT_DICT_INIT (NULL);
  g_auto(GVariantBuilder) rows = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE ("aav"));
  gboolean parent_exists = qstore_database_lookup (db, fk->table) != NULL;
  guint n;

  if (fk->to_columns->len > 0)
    {
      parent_columns = g_ptr_array_new_with_free_func (g_free);
      for (guint i = 0; i < fk->to_columns->len; i++)
        g_ptr_array_add (parent_columns, g_strdup (fk->to_columns->pdata[i]));
    }
  else
    parent_columns = parent_key_columns (db, fk->table);
  if (parent_exists && parent_columns->len != fk->from_columns->len)
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                   "foreign key mismatch - “%s” referencing “%s”: the constraint names %u "
                   "columns and the parent key has %u", child->name, fk->table,
                   fk->from_columns->len, parent_columns->len);
      return NULL;
    }

  sql = violations_sql (child, fk, parent_columns, parent_exists);
  if (!(result = qstore_database_query (db, sql, NULL, error)))
    return NULL;
  n = qstore_result_get_n_rows (result);
  for (guint r = 0; r < n && (max_rows == 0 || r < max_rows); r++)
    {
      g_variant_builder_open (&rows, G_VARIANT_TYPE ("av"));
      for (guint c = 0; c < qstore_result_get_n_columns (result); c++)
        g_variant_builder_add (&rows, "v", qstore_result_get_value (result, r, c));
      g_variant_builder_close (&rows);
    }

  for (guint i = 0; i < fk->from_columns->len; i++)
    g_ptr_array_add (child_columns,
                     ((QStoreColumn *) g_ptr_array_index (child->columns,
                                                          g_array_index (fk->from_columns, guint, i)))->name);
  name = fk->name != NULL ? g_strdup (fk->name) : g_strdup_printf ("foreign key %u", number);
  g_variant_dict_insert (&dict, "table", "s", child->name);
  g_variant_dict_insert (&dict, "constraint", "s", name);
  g_variant_dict_insert_value (&dict, "columns",
                               g_variant_new_strv ((const char * const *) child_columns->pdata,
                                                   child_columns->len));
  g_variant_dict_insert (&dict, "parent", "s", fk->table);
  g_variant_dict_insert_value (&dict, "parent_columns",
                               g_variant_new_strv ((const char * const *) parent_columns->pdata,
                                                   parent_columns->len));
  g_variant_dict_insert (&dict, "parent_exists", "b", parent_exists);
  g_variant_dict_insert (&dict, "violations", "t", (guint64) n);
  g_variant_dict_insert_value (&dict, "rows", g_variant_builder_end (&rows));
  return g_variant_dict_end (&dict);
}

static int
compare_names (gconstpointer a,
               gconstpointer b)
{
  return strcmp (*(const char * const *) a, *(const char * const *) b);
}

/**
 * qstore_replica_foreign_key_audit:
 * @self: a #QStoreReplica
 * @max_rows: how many offending rows to list per constraint; 0 for all
 * @error: return location for a #GError
 *
 * Walks every declared foreign key and reports the rows that point
 * nowhere, on a snapshot of the last committed transaction: nothing is
 * locked and no write waits. Whether `PRAGMA foreign_keys` enforced them
 * when the rows were written does not matter: this reports what is
 * stored. It reads every referencing table in full: an operator's check,
 * not a per-commit step.
 *
 * The report is an array (`aa{sv}`) with one dictionary per constraint,
 * in table order: `table`, `constraint` (its name, or `foreign key N`),
 * `columns`, `parent`, `parent_columns`, `parent_exists` (b),
 * `violations` (t, how many rows), `rows` (aav, the first @max_rows of
 * them, whole).
 *
 * Returns: (transfer full): the report, or %NULL on error
 */
GVariant *
qstore_replica_foreign_key_audit (QStoreReplica  *self,
                                  guint           max_rows,
                                  GError        **error)
{
  g_autoptr(GRecMutexLocker) locker = NULL;
  g_autoptr(QStoreSnapshot) snapshot = NULL;
  g_autoptr(GPtrArray) tables = g_ptr_array_new ();
  g_auto(GVariantBuilder) report = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE ("aa{sv}"));
  GHashTableIter iter;
  QStoreSqlTable *entry;
  gboolean ok = TRUE;

  g_return_val_if_fail (QSTORE_IS_REPLICA (self), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!qstore_replica_check_usable (self, FALSE, error))
    return NULL;
  locker = g_rec_mutex_locker_new (&self->api_lock);

  if (!(snapshot = qstore_provider_begin_snapshot (self->provider, error)))
    return NULL;
  qstore_coordinator_pin_snapshot (self->reader->coordinator, snapshot);

  g_hash_table_iter_init (&iter, self->reader->tables);
  while (g_hash_table_iter_next (&iter, NULL, (gpointer *) &entry))
    if (entry->schema->foreign_keys->len > 0)
      g_ptr_array_add (tables, entry->schema->name);
  g_ptr_array_sort (tables, compare_names);

  for (guint t = 0; ok && t < tables->len; t++)
    {
      QStoreTableSchema *child = qstore_database_lookup (self->reader, tables->pdata[t])->schema;

      for (guint k = 0; ok && k < child->foreign_keys->len; k++)
        {
          GVariant *constraint = audit_constraint (self->reader, child,
                                                   g_ptr_array_index (child->foreign_keys, k),
                                                   k + 1, max_rows, error);

          if (constraint == NULL)
            ok = FALSE;
          else
            g_variant_builder_add_value (&report, constraint);
        }
    }
  qstore_coordinator_pin_snapshot (self->reader->coordinator, NULL);
  qstore_database_forget_rowids (self->reader);
  if (!ok)
    return NULL;
  return g_variant_ref_sink (g_variant_builder_end (&report));
}

/* The sqlite provider's file, as a connection of our own sees it: WAL
 * checkpoints and statistics are SQLite's, reachable from any connection
 * to the file. */
static sqlite3 *
open_sqlite_file (QStoreReplica  *self,
                  GError        **error)
{
  const char *path = qstore_provider_get_location (self->provider);
  sqlite3 *conn = NULL;
  int rc = sqlite3_open_v2 (path, &conn, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL);

  if (rc != SQLITE_OK)
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_IO,
                   _("The sqlite store at “%s” cannot be opened for maintenance: %s"), path,
                   conn != NULL ? sqlite3_errmsg (conn) : sqlite3_errstr (rc));
      sqlite3_close_v2 (conn);
      return NULL;
    }
  sqlite3_busy_timeout (conn, 1000);
  return conn;
}

static gboolean
is_sqlite (QStoreReplica *self)
{
  return g_str_equal (qstore_provider_get_name (self->provider), "sqlite");
}

static GVariant *
wal_checkpoint (QStoreReplica  *self,
                const char     *mode,
                GError        **error)
{
  g_auto(GVariantDict) dict = G_VARIANT_DICT_INIT (NULL);
  g_autofree char *sql = g_strdup_printf ("PRAGMA wal_checkpoint(%s)", mode);
  g_autoptr(sqlite3_stmt) stmt = NULL;
  sqlite3 *conn = open_sqlite_file (self, error);
  gint64 busy = 0, log_frames = 0, done = 0;
  int rc;

  if (conn == NULL)
    return NULL;
  rc = sqlite3_prepare_v2 (conn, sql, -1, &stmt, NULL);
  if (rc == SQLITE_OK && (rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      busy = sqlite3_column_int64 (stmt, 0);
      log_frames = sqlite3_column_int64 (stmt, 1);
      done = sqlite3_column_int64 (stmt, 2);
      rc = SQLITE_OK;
    }
  if (rc != SQLITE_OK && rc != SQLITE_DONE)
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_IO,
                   _("The WAL checkpoint of the sqlite store at “%s” failed: %s"),
                   qstore_provider_get_location (self->provider), sqlite3_errmsg (conn));
      g_clear_pointer (&stmt, sqlite3_finalize);
      sqlite3_close_v2 (conn);
      return NULL;
    }
  g_clear_pointer (&stmt, sqlite3_finalize);
  sqlite3_close_v2 (conn);

  g_variant_dict_insert (&dict, "provider", "s", "sqlite");
  g_variant_dict_insert (&dict, "mode", "s", mode);
  g_variant_dict_insert (&dict, "performed", "b", TRUE);
  /* Readers still on older frames (workers' snapshots) keep those. */
  g_variant_dict_insert (&dict, "busy", "b", busy != 0);
  g_variant_dict_insert (&dict, "log_frames", "x", log_frames);
  g_variant_dict_insert (&dict, "checkpointed_frames", "x", done);
  return g_variant_dict_end (&dict);
}

static GVariant *
nothing_to_do (QStoreReplica *self,
               const char    *what)
{
  g_auto(GVariantDict) dict = G_VARIANT_DICT_INIT (NULL);
  const char *name = qstore_provider_get_name (self->provider);

  g_variant_dict_insert (&dict, "provider", "s", name);
  g_variant_dict_insert (&dict, "performed", "b", FALSE);
  g_variant_dict_insert (&dict, "reason", "s", what);
  return g_variant_dict_end (&dict);
}

/**
 * qstore_replica_checkpoint:
 * @self: a #QStoreReplica
 * @error: return location for a #GError
 *
 * Copies what the sqlite provider's write-ahead log holds into its
 * database file and truncates the log, as far as readers allow
 * (`PRAGMA wal_checkpoint(TRUNCATE)`). The lmdb provider writes in place
 * and the memory provider keeps nothing on disk: for them this does
 * nothing and the report says so.
 *
 * The report (`a{sv}`): `provider` (s), `performed` (b), and for sqlite
 * `mode` (s), `busy` (b: readers kept part of the log), `log_frames` and
 * `checkpointed_frames` (x); else `reason` (s).
 *
 * Returns: (transfer full): the report, or %NULL on error
 */
GVariant *
qstore_replica_checkpoint (QStoreReplica  *self,
                           GError        **error)
{
  g_autoptr(GRecMutexLocker) locker = NULL;
  GVariant *report;

  g_return_val_if_fail (QSTORE_IS_REPLICA (self), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!qstore_replica_check_usable (self, FALSE, error))
    return NULL;
  locker = g_rec_mutex_locker_new (&self->api_lock);
  if (is_sqlite (self))
    report = wal_checkpoint (self, "TRUNCATE", error);
  else
    report = nothing_to_do (self, g_str_equal (qstore_provider_get_name (self->provider), "lmdb")
                                  ? "LMDB writes in place: it has no log to checkpoint"
                                  : "this provider keeps no log to checkpoint");
  return report != NULL ? g_variant_ref_sink (report) : NULL;
}

/**
 * qstore_replica_maintain:
 * @self: a #QStoreReplica
 * @error: return location for a #GError
 *
 * One bounded maintenance pass between commits: with the sqlite
 * provider, fresh planner statistics for its tables (`PRAGMA optimize`)
 * and a checkpoint that waits for nobody (`PASSIVE`); the other providers
 * need none. Skipped while a write transaction is open, so it never
 * disturbs one.
 *
 * The report (`a{sv}`): `skipped` (b) and `reason` (s) when skipped; else
 * `provider` (s), `optimized` (b) and, for sqlite, `checkpoint` (the
 * report of qstore_replica_checkpoint(), in PASSIVE mode).
 *
 * Returns: (transfer full): the report, or %NULL on error
 */
GVariant *
qstore_replica_maintain (QStoreReplica  *self,
                         GError        **error)
{
  g_autoptr(GRecMutexLocker) locker = NULL;
  g_auto(GVariantDict) dict = G_VARIANT_DICT_INIT (NULL);

  g_return_val_if_fail (QSTORE_IS_REPLICA (self), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!qstore_replica_check_usable (self, FALSE, error))
    return NULL;
  locker = g_rec_mutex_locker_new (&self->api_lock);

  if (self->txn != NULL)
    {
      g_variant_dict_insert (&dict, "skipped", "b", TRUE);
      g_variant_dict_insert (&dict, "reason", "s", "a write transaction is open");
      return g_variant_ref_sink (g_variant_dict_end (&dict));
    }

  g_variant_dict_insert (&dict, "skipped", "b", FALSE);
  g_variant_dict_insert (&dict, "provider", "s", qstore_provider_get_name (self->provider));
  if (is_sqlite (self))
    {
      sqlite3 *conn = open_sqlite_file (self, error);
      GVariant *checkpoint;
      int rc;

      if (conn == NULL)
        return NULL;
      rc = sqlite3_exec (conn, "PRAGMA analysis_limit = 400; PRAGMA optimize", NULL, NULL, NULL);
      sqlite3_close_v2 (conn);
      g_variant_dict_insert (&dict, "optimized", "b", rc == SQLITE_OK);
      if (!(checkpoint = wal_checkpoint (self, "PASSIVE", error)))
        return NULL;
      g_variant_dict_insert_value (&dict, "checkpoint", checkpoint);
    }
  else
    g_variant_dict_insert (&dict, "optimized", "b", FALSE);
  return g_variant_ref_sink (g_variant_dict_end (&dict));
}
