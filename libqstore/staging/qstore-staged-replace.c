/* qstore-staged-replace.c: a replace import's staging table, its marker
 * row and the swap
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include <json-glib/json-glib.h>

#include "qstore-database-private.h"
#include "qstore-error.h"
#include "qstore-i18n-private.h"
#include "qstore-sql-token-private.h"
#include "qstore-staged-replace-private.h"
#include "qstore-staging-marker-private.h"

/* The order of every step is chosen so that a crash anywhere leaves a
 * marker row naming whatever staging table exists: the row is committed
 * before the table is created, and deleted only after it is dropped. The
 * rows land outside any transaction of the target's; only the swap
 * touches it, in one commit. */

void
qstore_staged_run_clear (QStoreStagedRun *run)
{
  g_clear_pointer (&run->target, g_free);
  g_clear_pointer (&run->staging, g_free);
  run->id = 0;
}

static gint64
now_ms (void)
{
  return g_get_real_time () / 1000;
}

QStoreStagingRun *
qstore_staged_find_run (QStoreDatabase  *db,
                        const char      *target,
                        GError         **error)
{
  g_autoptr(GPtrArray) runs = qstore_staging_marker_read_runs (db, error);

  if (runs == NULL)
    return NULL;
  for (guint i = 0; i < runs->len; i++)
    if (g_ascii_strcasecmp (qstore_staging_run_get_target (runs->pdata[i]), target) == 0)
      return g_object_ref (runs->pdata[i]);
  return NULL;
}

gboolean
qstore_staged_check_free (QStoreDatabase  *db,
                          const char      *target,
                          GError         **error)
{
  g_autoptr(GPtrArray) runs = NULL;
  g_autoptr(QStoreStagingLeftovers) judged = NULL;
  g_autoptr(QStoreStagingRun) run = NULL;
  g_autoptr(GError) local_error = NULL;

  run = qstore_staged_find_run (db, target, &local_error);
  if (local_error != NULL)
    {
      g_propagate_error (error, g_steal_pointer (&local_error));
      return FALSE;
    }
  if (run == NULL)
    return TRUE;

  runs = g_ptr_array_new ();
  g_ptr_array_add (runs, run);
  judged = qstore_staging_leftovers_new (runs, now_ms (),
                                         qstore_database_get_staging_stale_after_ms (db));
  g_clear_object (&run);
  run = g_list_model_get_item (G_LIST_MODEL (judged), 0);

  if (qstore_staging_run_get_resumable (run))
    g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_EXISTS,
                 _("Table “%s” has an interrupted resumable import (started --no-atomic): "
                 "continue it with qstore import --resume %s FILE, or discard it with "
                 "qstore staging --discard %s"), target, target, target);
  else if (qstore_staging_run_get_droppable (run))
    g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_EXISTS,
                 _("An interrupted import into table “%s” left its staging table (%s): drop "
                 "it with qstore staging --sweep, then import again"), target,
                 qstore_staging_run_get_reason (run));
  else
    g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_BUSY,
                 _("Another import into table “%s” is running (%s): wait for it to end; if "
                 "it was interrupted, its staging table becomes droppable once its "
                 "heartbeat is older than the threshold"), target,
                 qstore_staging_run_get_reason (run));
  return FALSE;
}

static char *
tables_json (const char *staging)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autoptr(JsonGenerator) generator = json_generator_new ();
  g_autoptr(JsonNode) root = NULL;

  json_builder_begin_array (builder);
  json_builder_add_string_value (builder, staging);
  json_builder_end_array (builder);
  root = json_builder_get_root (builder);
  json_generator_set_root (generator, root);
  return json_generator_to_data (generator, NULL);
}

/* `CREATE [UNIQUE] INDEX [IF NOT EXISTS] [schema.]name ON …` with
 * another name. */
static char *
rename_index (const char *sql,
              const char *name)
{
  g_autoptr(GArray) tokens = qstore_sql_tokenize (sql);
  g_autofree char *quoted = qstore_sql_quote (name);
  guint i = 0;

  while (i < tokens->len && !qstore_sql_token_is (&g_array_index (tokens, QStoreSqlToken, i), "INDEX"))
    i++;
  i++;
  if (i + 2 < tokens->len && qstore_sql_token_is (&g_array_index (tokens, QStoreSqlToken, i), "IF"))
    i += 3;
  if (i + 2 < tokens->len &&
      qstore_sql_token_is_punct (&g_array_index (tokens, QStoreSqlToken, i + 1), '.'))
    i += 2;
  if (i >= tokens->len)
    return NULL;
  {
    QStoreSqlToken *token = &g_array_index (tokens, QStoreSqlToken, i);
    gsize head = token->start - sql;

    return g_strdup_printf ("%.*s%s%s", (int) head, sql, quoted, token->start + token->len);
  }
}

/* The DDL of a clone of @target named @staging: its CREATE TABLE, which
 * SQLite renames (references of the table to itself follow), and one
 * CREATE INDEX per index, each named after the staging table's prefix.
 * The UNIQUE constraints bring their own indexes. */
static GPtrArray *
clone_ddl (QStoreDatabase  *db,
           const char      *target,
           const char      *staging,
           GError         **error)
{
  g_autoptr(GPtrArray) ddl = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(sqlite3_stmt) read = NULL;
  g_autoptr(sqlite3_stmt) back = NULL;
  g_autofree char *rename = NULL;
  g_autofree char *quoted_target = qstore_sql_quote (target);
  g_autofree char *quoted_staging = qstore_sql_quote (staging);
  sqlite3 *conn = NULL;
  gboolean ok = FALSE;

  if (sqlite3_open_v2 (":memory:", &conn, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK ||
      sqlite3_prepare_v2 (db->scratch,
                          "SELECT sql FROM main.sqlite_master WHERE tbl_name = ?1 COLLATE NOCASE "
                          "AND sql IS NOT NULL ORDER BY type = 'index', rowid",
                          -1, &read, NULL) != SQLITE_OK)
    goto out;
  sqlite3_bind_text (read, 1, target, -1, SQLITE_STATIC);
  while (sqlite3_step (read) == SQLITE_ROW)
    if (sqlite3_exec (conn, (const char *) sqlite3_column_text (read, 0), NULL, NULL, NULL) != SQLITE_OK)
      goto out;

  rename = g_strdup_printf ("ALTER TABLE %s RENAME TO %s", quoted_target, quoted_staging);
  if (sqlite3_exec (conn, rename, NULL, NULL, NULL) != SQLITE_OK ||
      sqlite3_prepare_v2 (conn, "SELECT type, name, sql FROM main.sqlite_master WHERE sql IS "
                                "NOT NULL ORDER BY type = 'index', rowid",
                          -1, &back, NULL) != SQLITE_OK)
    goto out;
  while (sqlite3_step (back) == SQLITE_ROW)
    {
      const char *type = (const char *) sqlite3_column_text (back, 0);
      const char *name = (const char *) sqlite3_column_text (back, 1);
      const char *sql = (const char *) sqlite3_column_text (back, 2);

      if (g_str_equal (type, "table"))
        g_ptr_array_add (ddl, g_strdup (sql));
      else
        {
          g_autofree char *index = g_strconcat (QSTORE_STAGING_TABLE_PREFIX, name, NULL);
          char *renamed = rename_index (sql, index);

          if (renamed == NULL)
            goto out;
          g_ptr_array_add (ddl, renamed);
        }
    }
  ok = ddl->len > 0;

out:
  if (!ok)
    g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_FAILED,
                 _("Cannot make the staging table of “%s” from its schema: %s"), target,
                 conn != NULL ? sqlite3_errmsg (conn) : "SQLite cannot open a connection");
  g_clear_pointer (&back, sqlite3_finalize);
  sqlite3_close_v2 (conn);
  return ok ? g_steal_pointer (&ddl) : NULL;
}

gboolean
qstore_staged_begin (QStoreDatabase   *db,
                     const char       *target,
                     gboolean          resumable,
                     const char       *details,
                     QStoreStagedRun  *run,
                     GError          **error)
{
  g_autoptr(GPtrArray) ddl = NULL;
  g_autoptr(QStoreResult) inserted = NULL;
  g_autofree char *staging = qstore_staging_table_name_for (target);
  g_autofree char *tables = tables_json (staging);
  gint64 started = now_ms ();

  if (qstore_database_get_table (db, "main", staging) != NULL)
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_EXISTS,
                   _("Staging table “%s” exists, but no import into “%s” is recorded: if "
                   "nothing loads into it, drop it (DROP TABLE \"%s\") and import again"),
                   staging, target, staging);
      return FALSE;
    }
  if (!(ddl = clone_ddl (db, target, staging, error)))
    return FALSE;

  if (qstore_database_get_table (db, "main", QSTORE_STAGING_MARKER_TABLE) == NULL &&
      !qstore_database_exec_reserved (db, QSTORE_STAGING_MARKER_DDL, error))
    return FALSE;

  /* The first heartbeat comes with the row: a run that never beat counts
   * as abandoned. */
  inserted = qstore_database_query (db,
                                    "INSERT INTO " QSTORE_STAGING_MARKER_TABLE " (kind, target, "
                                    "staging, started, heartbeat, resumable, state, details) "
                                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                                    g_variant_new ("(sssxxxss)", QSTORE_STAGING_KIND, target,
                                                   tables, started, started,
                                                   (gint64) (resumable ? 1 : 0),
                                                   QSTORE_STAGING_STATE_LOADING,
                                                   details != NULL ? details : "{}"),
                                    error);
  if (inserted == NULL)
    return FALSE;

  run->id = qstore_result_get_last_insert_rowid (inserted);
  run->target = g_strdup (target);
  run->staging = g_strdup (staging);

  for (guint i = 0; i < ddl->len; i++)
    if (!qstore_database_exec_reserved (db, ddl->pdata[i], error))
      {
        g_autoptr(GError) ignored = NULL;
        const char * const names[] = { staging, NULL };

        qstore_staged_drop (db, run->id, target, names, &ignored);
        return FALSE;
      }
  return TRUE;
}

void
qstore_staged_adopt (QStoreStagedRun  *run,
                     QStoreStagingRun *found)
{
  const char * const *tables = qstore_staging_run_get_tables (found);

  run->id = qstore_staging_run_get_id (found);
  run->target = g_strdup (qstore_staging_run_get_target (found));
  run->staging = g_strdup (tables[0] != NULL ? tables[0] : "");
}

gboolean
qstore_staged_beat (QStoreDatabase   *db,
                    QStoreStagedRun  *run,
                    const char       *details,
                    GError          **error)
{
  gint64 changed;

  if (details != NULL)
    changed = qstore_database_execute (db,
                                       "UPDATE " QSTORE_STAGING_MARKER_TABLE " SET heartbeat = ?, "
                                       "details = ? WHERE id = ?",
                                       g_variant_new ("(xsx)", now_ms (), details, run->id), error);
  else
    changed = qstore_database_execute (db,
                                       "UPDATE " QSTORE_STAGING_MARKER_TABLE " SET heartbeat = ? "
                                       "WHERE id = ?",
                                       g_variant_new ("(xx)", now_ms (), run->id), error);
  if (changed < 0)
    return FALSE;
  if (changed == 0)
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_NOT_FOUND,
                   _("The import into “%s” is no longer recorded (a sweep removed it, with "
                   "its staging table “%s”): import again"), run->target, run->staging);
      return FALSE;
    }
  return TRUE;
}

static char *
column_list (QStoreTable *table)
{
  g_autoptr(GString) list = g_string_new (NULL);

  for (guint i = 0; i < qstore_table_get_n_columns (table); i++)
    {
      g_autofree char *quoted = qstore_sql_quote (qstore_table_get_column_name (table, i));

      g_string_append_printf (list, "%s%s", i > 0 ? ", " : "", quoted);
    }
  return g_string_free (g_steal_pointer (&list), FALSE);
}

gboolean
qstore_staged_swap (QStoreDatabase   *db,
                    QStoreStagedRun  *run,
                    gboolean         *committed,
                    GError          **error)
{
  QStoreTable *table = qstore_database_get_table (db, "main", run->target);
  g_autofree char *columns = NULL;
  g_autofree char *quoted_target = qstore_sql_quote (run->target);
  g_autofree char *quoted_staging = qstore_sql_quote (run->staging);
  g_autofree char *delete = NULL;
  g_autofree char *insert = NULL;
  const char * const tables[] = { run->staging, NULL };
  gint64 marked;

  *committed = FALSE;
  if (table == NULL)
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_NOT_FOUND,
                   _("Table “%s” is gone: nothing to replace"), run->target);
      return FALSE;
    }
  columns = column_list (table);
  delete = g_strdup_printf ("DELETE FROM %s", quoted_target);
  insert = g_strdup_printf ("INSERT INTO %s (%s) SELECT %s FROM %s", quoted_target, columns,
                            columns, quoted_staging);

  if (!qstore_database_exec (db, "BEGIN", error))
    return FALSE;
  if (!qstore_database_exec (db, delete, error) ||
      !qstore_database_exec (db, insert, error) ||
      (marked = qstore_database_execute (db,
                                         "UPDATE " QSTORE_STAGING_MARKER_TABLE " SET state = ?, "
                                         "resumable = 0, heartbeat = ? WHERE id = ? AND state = ?",
                                         g_variant_new ("(sxxs)", QSTORE_STAGING_STATE_SWAPPED,
                                                        now_ms (), run->id,
                                                        QSTORE_STAGING_STATE_LOADING),
                                         error)) < 0)
    {
      qstore_database_exec (db, "ROLLBACK", NULL);
      return FALSE;
    }
  if (marked == 0)
    {
      qstore_database_exec (db, "ROLLBACK", NULL);
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_NOT_FOUND,
                   _("The import into “%s” is no longer recorded (a sweep removed it): “%s” "
                   "is left as it was; import again"), run->target, run->target);
      return FALSE;
    }
  if (!qstore_database_exec (db, "COMMIT", error))
    {
      qstore_database_exec (db, "ROLLBACK", NULL);
      return FALSE;
    }

  /* The target holds the new rows; what follows only tidies up, and a
   * crash here leaves a run marked swapped for a sweep. */
  *committed = TRUE;
  return qstore_staged_drop (db, run->id, run->target, tables, error);
}

gboolean
qstore_staged_drop (QStoreDatabase     *db,
                    gint64              id,
                    const char         *target,
                    const char * const *tables,
                    GError            **error)
{
  g_autoptr(QStoreResult) left = NULL;

  for (guint i = 0; tables != NULL && tables[i] != NULL; i++)
    {
      g_autofree char *quoted = NULL;
      g_autofree char *drop = NULL;

      /* Whatever the marker row says, only a staging table goes. */
      if (!qstore_is_staging_table_name (tables[i]) ||
          (target != NULL && g_ascii_strcasecmp (tables[i], target) == 0))
        continue;
      quoted = qstore_sql_quote (tables[i]);
      drop = g_strdup_printf ("DROP TABLE IF EXISTS %s", quoted);
      if (!qstore_database_exec_reserved (db, drop, error))
        return FALSE;
    }

  if (qstore_database_get_table (db, "main", QSTORE_STAGING_MARKER_TABLE) == NULL)
    return TRUE;
  if (qstore_database_execute (db, "DELETE FROM " QSTORE_STAGING_MARKER_TABLE " WHERE id = ?",
                               g_variant_new ("(x)", id), error) < 0 ||
      !(left = qstore_database_query (db, "SELECT 1 FROM " QSTORE_STAGING_MARKER_TABLE " LIMIT 1",
                                      NULL, error)))
    return FALSE;
  if (qstore_result_get_n_rows (left) == 0)
    return qstore_database_exec_reserved (db, "DROP TABLE " QSTORE_STAGING_MARKER_TABLE, error);
  return TRUE;
}
