/* qstore-mview-ddl.c: CREATE, DROP and REFRESH MATERIALIZED VIEW, and DDL around views
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include <json-glib/json-glib.h>

#include "qstore-affinity-private.h"
#include "qstore-coordinator-private.h"
#include "qstore-enums.h"
#include "qstore-error.h"
#include "qstore-i18n-private.h"
#include "qstore-provider-private.h"
#include "qstore-result-private.h"
#include "qstore-sql-token-private.h"
#include "qstore-table-schema-private.h"
#include "qstore-vtab-private.h"
#include "qstore-mview-ddl-private.h"
#include "qstore-rehydration-result-private.h"

#define THRESHOLD_SETTING QSTORE_MVIEW_THRESHOLD_SETTING
#define SCRATCH_SAVEPOINT "qstore_mview"

/* Creating a view plans its body and fills its backing; dropping erases
 * both; REFRESH computes a stale view again. DDL on what a view reads may
 * make it stale (before_ddl/after_ddl), and statements that would write
 * or reshape a backing behind the view's back are refused. */

static const char *
statement_form (const QStoreStatement *statement)
{
  switch (statement->kind)
    {
    case QSTORE_STATEMENT_CREATE_MATERIALIZED_VIEW:
      return "CREATE MATERIALIZED VIEW [IF NOT EXISTS] name [(columns)] AS SELECT …";
    case QSTORE_STATEMENT_DROP_MATERIALIZED_VIEW:
      return "DROP MATERIALIZED VIEW [IF EXISTS] name";
    case QSTORE_STATEMENT_REFRESH_MATERIALIZED_VIEW:
      return "REFRESH MATERIALIZED VIEW name";
    case QSTORE_STATEMENT_SETTING:
    default:
      return "PRAGMA " THRESHOLD_SETTING " [= rows]";
    }
}

static const char *
statement_verb (const QStoreStatement *statement)
{
  return statement->kind == QSTORE_STATEMENT_SETTING ? "PRAGMA " THRESHOLD_SETTING
                                                      : qstore_statement_verb (statement->kind);
}

static gboolean
check_syntax (const QStoreStatement  *statement,
              GError                **error)
{
  if (!statement->malformed && statement->name != NULL &&
      (statement->schema == NULL || g_ascii_strcasecmp (statement->schema, "main") == 0))
    return TRUE;
  if (!statement->malformed && statement->name != NULL)
    g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_UNSUPPORTED,
                 _("%s: schema “%s” is not supported: materialized views live in “main”"),
                 statement_verb (statement), statement->schema);
  else
    g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                 _("Malformed %s statement: write it as %s"),
                 statement_verb (statement), statement_form (statement));
  return FALSE;
}

/* QStoreMaterializedView: what qstore_database_list_materialized_views()
 * hands out, a snapshot */

void
qstore_mview_register_view (QStoreMViews *self,
                            QStoreMView  *view)
{
  QStoreSqlTable *entry = qstore_mview_view_entry (view);

  g_hash_table_replace (self->views, g_strdup (view->lower), view);
  g_ptr_array_add (self->order, view);
  g_hash_table_remove (self->unloaded, view->lower);
  if (entry != NULL)
    qstore_mview_entry_set_view (entry, view);
  if (view->plan != NULL && view->plan->has_temp)
    qstore_mview_install_hooks (self);
}

static void
unregister_view (QStoreMViews *self,
                 QStoreMView  *view)
{
  g_ptr_array_remove (self->order, view);
  g_hash_table_remove (self->views, view->lower);   /* frees it */
}

static gboolean
scratch_run (QStoreDatabase  *db,
             const char      *sql,
             GError         **error)
{
  return qstore_database_run (db, db->scratch, sql, error);
}

static void
scratch_undo (QStoreDatabase *db)
{
  sqlite3_exec (db->scratch, "ROLLBACK TO " SCRATCH_SAVEPOINT "; RELEASE " SCRATCH_SAVEPOINT,
                NULL, NULL, NULL);
}

static gboolean
delete_all_rows (QStoreTable  *table,
                 GError      **error)
{
  g_autoptr(GPtrArray) keys = g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);
  g_autoptr(QStoreIter) iter = NULL;
  GError *local_error = NULL;

  if (!(iter = qstore_table_scan (table, NULL, error)))
    return FALSE;
  while (qstore_iter_next (iter, &local_error))
    g_ptr_array_add (keys, qstore_iter_get_key (iter));
  g_clear_object (&iter);
  if (local_error != NULL)
    {
      g_propagate_error (error, local_error);
      return FALSE;
    }
  for (guint i = 0; i < keys->len; i++)
    {
      gsize len;
      const guint8 *data = g_bytes_get_data (keys->pdata[i], &len);

      if (!qstore_table_delete_key (table, data, len, error))
        return FALSE;
    }
  return TRUE;
}

static gboolean
store_is_empty (QStoreTable  *table,
                gboolean     *empty,
                GError      **error)
{
  g_autoptr(QStoreBounds) bounds = qstore_bounds_new ();
  g_autoptr(QStoreIter) iter = NULL;
  GError *local_error = NULL;

  qstore_bounds_set_limit (bounds, 1);
  if (!(iter = qstore_kv_iterate (qstore_table_get_data_store (table), bounds, error)))
    return FALSE;
  *empty = !qstore_iter_next (iter, &local_error);
  if (local_error != NULL)
    {
      g_propagate_error (error, local_error);
      return FALSE;
    }
  return TRUE;
}

/* The views that read @view go stale: its columns are about to change. */
static void
mark_readers_stale (QStoreMViews *self,
                    QStoreMView  *view)
{
  for (guint i = 0; i < self->order->len; i++)
    {
      QStoreMView *other = g_ptr_array_index (self->order, i);

      if (other != view && !other->stale && qstore_mview_plan_reads_view (other->plan, view))
        {
          g_autofree char *why = g_strdup_printf ("main.%s, which it reads, now has other columns",
                                                  view->lower);

          qstore_mview_mark_stale_quietly (self, other, why);
        }
    }
}

/* Makes the backing of @view hold exactly what its body (planned as
 * view->plan) gives now, and the catalog hold its entries, in one
 * transaction: in place when the backing has the planned shape, else in
 * a backing of the new shape. @fresh: the view is new, so stored rows
 * under its name belong to something else. */
gboolean
qstore_mview_materialize (QStoreMViews  *self,
                          QStoreMView   *view,
                          gboolean       fresh,
                          GError       **error)
{
  QStoreDatabase *db = self->db;
  Plan *plan = view->plan;
  QStoreSqlTable *entry = qstore_mview_view_entry (view);
  g_autoptr(QStoreTableSchema) schema = NULL;
  g_autoptr(QStoreTable) new_table = NULL;
  g_autoptr(GBytes) table_key = qstore_catalog_key_for_table ("main", view->name);
  g_autoptr(GBytes) view_key = qstore_catalog_key_for_materialized_view ("main", view->name);
  g_autofree char *bundle = NULL;
  g_autofree char *quoted = qstore_sql_quote (view->name);
  QStoreTable *target;
  gboolean in_place;
  gboolean attached = FALSE;
  gboolean empty = TRUE;

  in_place = entry != NULL && g_strcmp0 (entry->schema->sql, plan->backing_sql) == 0 &&
             entry->schema->indexes->len == 0;

  if (!in_place)
    {
      if (!scratch_run (db, "SAVEPOINT " SCRATCH_SAVEPOINT, error))
        return FALSE;
      if (entry != NULL)
        {
          g_autofree char *drop = g_strdup_printf ("DROP TABLE main.%s", quoted);

          if (!scratch_run (db, drop, error))
            goto undo_scratch;
          /* Durably stale before their source changes under them. */
          mark_readers_stale (self, view);
          qstore_mview_rebuild_dependents (self);
          qstore_mview_persist_stale_set_or_warn (self);
        }
      if (!scratch_run (db, plan->backing_sql, error) ||
          !(schema = qstore_table_schema_from_sqlite (db->scratch, "main", view->name, error)))
        goto undo_scratch;

      if (entry == NULL)
        {
          g_autoptr(GHashTable) used = qstore_database_store_names (db, NULL);
          g_autofree char *store = qstore_store_name_for_table ("main", view->name);
          const char *owner = g_hash_table_lookup (used, store);

          if (owner != NULL)
            {
              g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_COLLISION,
                           _("Materialized view “%s” would keep its contents in store “%s”, "
                           "which %s uses: choose another name"), view->name, store, owner);
              goto undo_scratch;
            }
          if (!(entry = qstore_database_attach_table (db, schema, error)))
            goto undo_scratch;
          attached = TRUE;
          if (!store_is_empty (entry->table, &empty, error))
            goto undo;
          if (!empty && fresh)
            {
              g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_COLLISION,
                           _("Materialized view “%s”: store “%s” still holds the rows of a table "
                           "no longer in the catalog: remove them with "
                           "qstore_database_reclaim_detached_table() first, or choose another "
                           "name"), view->name, store);
              goto undo;
            }
          target = entry->table;
        }
      else if (!(new_table = qstore_table_new (db->coordinator, schema, db->scratch, error)))
        goto undo_scratch;
      else
        target = new_table;
    }
  else
    target = entry->table;

  qstore_coordinator_begin (db->coordinator);
  if ((new_table != NULL && !delete_all_rows (entry->table, error)) ||
      (!empty && !delete_all_rows (target, error)) ||
      !qstore_mview_rebuild_into (view, target, error))
    {
      qstore_coordinator_rollback (db->coordinator);
      goto undo;
    }
  bundle = qstore_table_schema_to_bundle (qstore_table_get_table_schema (target));
  qstore_database_put_catalog (db, table_key, bundle);
  qstore_database_put_catalog (db, view_key, view->definition);
  if (!qstore_coordinator_commit (db->coordinator, error))
    goto undo;

  if (!in_place)
    {
      scratch_run (db, "RELEASE " SCRATCH_SAVEPOINT, NULL);
      if (new_table != NULL)
        {
          qstore_sql_table_set_table (entry, new_table);
          if (!qstore_database_redeclare (db, entry, error))
            return FALSE;
          entry = qstore_mview_view_entry (view);
        }
    }
  if (entry != NULL)
    qstore_mview_entry_set_view (entry, view);
  return TRUE;

undo:
  if (attached)
    qstore_database_detach_table (db, view->name, TRUE);
undo_scratch:
  if (!in_place)
    scratch_undo (db);
  return FALSE;
}

/* Erases the backing and the catalog entries of view @name. */
static gboolean
erase_view (QStoreMViews  *self,
            const char    *name,
            GError       **error)
{
  QStoreDatabase *db = self->db;
  QStoreSqlTable *entry = qstore_database_lookup (db, name);
  g_autoptr(GPtrArray) drop = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(QStoreKV) stats = NULL;
  g_autoptr(GBytes) stats_key = NULL;
  g_autoptr(GBytes) table_key = qstore_catalog_key_for_table ("main", name);
  g_autoptr(GBytes) view_key = qstore_catalog_key_for_materialized_view ("main", name);
  g_autofree char *stats_name = qstore_stats_key_for_table ("main", name);
  const char *empty[] = { NULL };
  QStoreWriteOp ops[3] = { { 0 } };
  gsize len;

  g_ptr_array_add (drop, qstore_store_name_for_table ("main", name));
  for (guint i = 0; entry != NULL && i < entry->schema->indexes->len; i++)
    g_ptr_array_add (drop, qstore_store_name_for_index ("main", name,
                                                        ((QStoreIndexSchema *) g_ptr_array_index (entry->schema->indexes, i))->name));
  g_ptr_array_add (drop, NULL);

  if (!(stats = qstore_provider_get_stats_store (db->provider, error)))
    return FALSE;
  stats_key = g_bytes_new (stats_name, strlen (stats_name));
  ops[0].store = stats;
  ops[0].kind = QSTORE_WRITE_OP_DELETE;
  ops[0].key = g_bytes_get_data (stats_key, &len);
  ops[0].key_len = len;
  ops[1].store = db->catalog;
  ops[1].kind = QSTORE_WRITE_OP_DELETE;
  ops[1].key = g_bytes_get_data (table_key, &len);
  ops[1].key_len = len;
  ops[2].store = db->catalog;
  ops[2].kind = QSTORE_WRITE_OP_DELETE;
  ops[2].key = g_bytes_get_data (view_key, &len);
  ops[2].key_len = len;

  if (!qstore_provider_restructure (db->provider, (const char * const *) drop->pdata,
                                    empty, empty, ops, G_N_ELEMENTS (ops), error))
    {
      g_prefix_error (error, _("Materialized view “%s” cannot be dropped: "), name);
      return FALSE;
    }
  qstore_database_forget_table_stats (db, "main", name);

  if (entry != NULL)
    {
      g_autofree char *quoted = qstore_sql_quote (name);
      g_autofree char *drop_mirror = g_strdup_printf ("DROP TABLE IF EXISTS main.%s", quoted);

      qstore_mview_entry_set_view (entry, NULL);
      qstore_database_detach_table (db, name, TRUE);
      sqlite3_exec (db->scratch, drop_mirror, NULL, NULL, NULL);
    }
  return TRUE;
}

/* Takes the backing of a view that did not load out of SQL's sight: it is
 * not a table of its own, and DROP MATERIALIZED VIEW removes it. */
void
qstore_mview_hide_backing (QStoreMViews *self,
                           const char   *name)
{
  QStoreDatabase *db = self->db;
  g_autofree char *quoted = qstore_sql_quote (name);
  g_autofree char *drop_mirror = g_strdup_printf ("DROP TABLE IF EXISTS main.%s", quoted);
  g_autofree char *label = qstore_mview_qualified (name);
  QStoreSqlTable *entry = qstore_database_lookup (db, name);

  if (db->rehydration != NULL)
    qstore_rehydration_result_forget_table (db->rehydration, label);
  if (entry == NULL)
    return;
  qstore_database_detach_table (db, name, TRUE);
  sqlite3_exec (db->scratch, drop_mirror, NULL, NULL, NULL);
}

/* DDL */

static gboolean
name_taken (QStoreDatabase  *db,
            const char      *name,
            GError         **error)
{
  g_autoptr(sqlite3_stmt) stmt = NULL;

  if (qstore_database_lookup (db, name) != NULL)
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_EXISTS,
                   _("Materialized view “%s” cannot be created: table “%s” already exists"),
                   name, name);
      return TRUE;
    }
  if (sqlite3_prepare_v2 (db->db,
                          "SELECT type FROM main.sqlite_master WHERE name = ?1 COLLATE NOCASE "
                          "UNION ALL SELECT type FROM temp.sqlite_master "
                          "WHERE name = ?1 COLLATE NOCASE AND type IN ('table', 'view')",
                          -1, &stmt, NULL) == SQLITE_OK)
    {
      sqlite3_bind_text (stmt, 1, name, -1, SQLITE_TRANSIENT);
      if (sqlite3_step (stmt) == SQLITE_ROW)
        {
          g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_EXISTS,
                       _("Materialized view “%s” cannot be created: %s “%s” already exists"),
                       name, (const char *) sqlite3_column_text (stmt, 0), name);
          return TRUE;
        }
    }
  return FALSE;
}

static char *
definition_text (const QStoreStatement *statement,
                 const char      *body)
{
  GString *text = g_string_new ("CREATE MATERIALIZED VIEW ");

  g_string_append (text, statement->name_text);
  if (statement->columns != NULL)
    {
      g_string_append (text, " (");
      for (guint i = 0; i < statement->columns->len; i++)
        {
          g_autofree char *quoted = qstore_sql_quote (g_ptr_array_index (statement->columns, i));

          g_string_append_printf (text, "%s%s", i > 0 ? ", " : "", quoted);
        }
      g_string_append (text, ")");
    }
  g_string_append_printf (text, " AS %s", body);
  return g_string_free (text, FALSE);
}

/* The SELECT of a CREATE statement, where SQLite says it ends. */
static char *
body_text (QStoreDatabase         *db,
           const QStoreStatement  *statement,
           GError                **error)
{
  g_autoptr(sqlite3_stmt) stmt = NULL;
  const char *end = NULL;
  gsize len;
  int rc;

  rc = sqlite3_prepare_v2 (db->db, statement->body, -1, &stmt, &end);
  if (rc != SQLITE_OK)
    return (qstore_mview_set_sqlite_error (db, db->db, rc, statement->name, error), NULL);
  if (stmt == NULL)
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                   _("Materialized view “%s” has no body: write CREATE MATERIALIZED VIEW %s AS "
                   "SELECT …"), statement->name, statement->name);
      return NULL;
    }
  len = end - statement->body;
  while (len > 0 && (statement->body[len - 1] == ';' || g_ascii_isspace (statement->body[len - 1])))
    len--;
  return g_strndup (statement->body, len);
}

static gint64
source_rows (QStoreDatabase   *db,
             const PlanSource *source)
{
  g_autofree char *quoted = NULL;
  g_autofree char *sql = NULL;
  g_autoptr(sqlite3_stmt) stmt = NULL;

  if (!source->temp)
    return qstore_coordinator_get_row_count (db->coordinator, "main", source->name);
  quoted = qstore_sql_quote (source->name);
  sql = g_strdup_printf ("SELECT count(*) FROM temp.%s", quoted);
  if (sqlite3_prepare_v2 (db->db, sql, -1, &stmt, NULL) != SQLITE_OK ||
      sqlite3_step (stmt) != SQLITE_ROW)
    return 0;
  return sqlite3_column_int64 (stmt, 0);
}

static gboolean
check_threshold (QStoreMViews  *self,
                 const char    *name,
                 Plan          *plan,
                 GError       **error)
{
  if (plan->strategy != QSTORE_MATERIALIZED_VIEW_STRATEGY_FULL_REBUILD)
    return TRUE;
  for (guint i = 0; i < plan->sources->len; i++)
    {
      PlanSource *source = g_ptr_array_index (plan->sources, i);
      gint64 rows = source_rows (self->db, source);

      if (rows > self->threshold)
        {
          g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_UNSUPPORTED,
                       "Materialized view “%s” would be computed again in full on every "
                       "transaction that changes “%s”, which holds %" G_GINT64_FORMAT " rows: "
                       "more than " THRESHOLD_SETTING " (%" G_GINT64_FORMAT "). Raise it with "
                       "PRAGMA " THRESHOLD_SETTING " = %" G_GINT64_FORMAT " (or "
                       "qstore_database_set_materialized_view_rebuild_row_threshold()), or "
                       "define the view so it is kept row by row: over one table, keeping its "
                       "primary key columns, or grouping by columns an index of it starts with",
                       name, source->name, rows, self->threshold, rows);
          return FALSE;
        }
    }
  return TRUE;
}

static gboolean
create_view (QStoreMViews           *self,
             const QStoreStatement  *statement,
             GError                **error)
{
  QStoreDatabase *db = self->db;
  g_autofree char *body = NULL;
  g_autofree char *definition = NULL;
  g_autofree char *key = qstore_mview_lower (statement->name);
  Plan *plan;
  QStoreMView *view;

  if (!(body = body_text (db, statement, error)))
    return FALSE;

  if (qstore_mview_lookup_view (self, statement->name) != NULL)
    {
      if (statement->if_exists)
        return TRUE;
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_EXISTS,
                   _("Materialized view “%s” already exists"), statement->name);
      return FALSE;
    }
  if (g_hash_table_contains (self->unloaded, key))
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_EXISTS,
                   _("Materialized view “%s” is in the catalog but did not load when the "
                   "database was opened (see the rehydration result): drop it with DROP "
                   "MATERIALIZED VIEW, or bring it back with REFRESH MATERIALIZED VIEW"),
                   statement->name);
      return FALSE;
    }
  if (name_taken (db, statement->name, error))
    return FALSE;

  if (!(plan = qstore_mview_plan_new (db, statement->name, body, statement->columns, error)))
    return FALSE;
  for (guint i = 0; i < plan->sources->len; i++)
    {
      QStoreMView *upstream = qstore_mview_upstream_view (self, g_ptr_array_index (plan->sources, i));

      if (upstream != NULL && upstream->stale)
        {
          g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_FAILED,
                       _("Materialized view “%s” would read “%s”, which is stale: refresh “%s” "
                       "first"), statement->name, upstream->name, upstream->name);
          qstore_mview_plan_free (plan);
          return FALSE;
        }
    }
  if (!check_threshold (self, statement->name, plan, error))
    {
      qstore_mview_plan_free (plan);
      return FALSE;
    }

  definition = definition_text (statement, body);
  view = qstore_mview_view_new (self, statement->name, definition, body, statement->columns);
  view->plan = plan;
  if (!qstore_mview_materialize (self, view, TRUE, error))
    {
      qstore_mview_view_free (view);
      return FALSE;
    }
  qstore_mview_register_view (self, view);
  qstore_mview_rebuild_dependents (self);
  return TRUE;
}

static gboolean
drop_view (QStoreMViews     *self,
           const QStoreStatement  *statement,
           GError          **error)
{
  QStoreMView *view = qstore_mview_lookup_view (self, statement->name);
  g_autofree char *key = qstore_mview_lower (statement->name);

  if (view == NULL && !g_hash_table_contains (self->unloaded, key))
    {
      if (statement->if_exists)
        return TRUE;
      if (qstore_database_lookup (self->db, statement->name) != NULL)
        g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_NOT_FOUND,
                     _("“%s” is a table, not a materialized view: drop it with DROP TABLE"),
                     statement->name);
      else
        g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_NOT_FOUND,
                     "no such materialized view: %s", statement->name);
      return FALSE;
    }

  if (!erase_view (self, view != NULL ? view->name : statement->name, error))
    return FALSE;
  g_hash_table_remove (self->unloaded, key);
  if (view != NULL)
    unregister_view (self, view);
  qstore_mview_rebuild_dependents (self);
  return TRUE;
}

QStoreMView *
qstore_mview_view_from_definition (QStoreMViews  *self,
                                   const char    *name,
                                   const char    *definition,
                                   GError       **error)
{
  g_auto(QStoreStatement) parsed = { 0 };
  g_autofree char *body = qstore_statement_definition_body (name, definition, &parsed, error);

  if (body == NULL)
    return NULL;
  return qstore_mview_view_new (self, parsed.name, definition, body, parsed.columns);
}

static gboolean
refresh_view (QStoreMViews     *self,
              const QStoreStatement  *statement,
              GError          **error)
{
  QStoreMView *view = qstore_mview_lookup_view (self, statement->name);
  g_autofree char *key = qstore_mview_lower (statement->name);
  gboolean registered = view != NULL;
  Plan *old_plan;
  Plan *plan;

  if (view == NULL)
    {
      const char *definition = g_hash_table_lookup (self->unloaded, key);

      if (definition == NULL)
        {
          g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_NOT_FOUND,
                       "no such materialized view: %s", statement->name);
          return FALSE;
        }
      if (!(view = qstore_mview_view_from_definition (self, key, definition, error)))
        return FALSE;
    }

  if (!(plan = qstore_mview_plan_new (self->db, view->name, view->body, view->column_names, error)))
    {
      if (!registered)
        qstore_mview_view_free (view);
      return FALSE;
    }
  for (guint i = 0; i < plan->sources->len; i++)
    {
      QStoreMView *upstream = qstore_mview_upstream_view (self, g_ptr_array_index (plan->sources, i));

      if (upstream != NULL && upstream->stale)
        {
          g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_FAILED,
                       _("Materialized view “%s” reads “%s”, which is stale: refresh “%s” first"),
                       view->name, upstream->name, upstream->name);
          qstore_mview_plan_free (plan);
          if (!registered)
            qstore_mview_view_free (view);
          return FALSE;
        }
    }

  old_plan = view->plan;
  view->plan = plan;
  qstore_mview_view_finalize_statements (view);
  if (!qstore_mview_materialize (self, view, FALSE, error))
    {
      view->plan = old_plan;
      qstore_mview_plan_free (plan);
      if (!registered)
        qstore_mview_view_free (view);
      return FALSE;
    }
  qstore_mview_plan_free (old_plan);
  view->stale = FALSE;
  g_clear_pointer (&view->stale_reason, g_free);
  qstore_mview_view_forget_work (view);
  if (!registered)
    qstore_mview_register_view (self, view);
  qstore_mview_rebuild_dependents (self);
  qstore_mview_persist_stale_set_or_warn (self);
  return TRUE;
}

static gboolean
check_target (QStoreMViews  *self,
              const char    *ddl_table,
              const char    *dml_table,
              GError       **error)
{
  QStoreMView *view;

  if ((self->order->len == 0 && g_hash_table_size (self->unloaded) == 0))
    return TRUE;
  if (ddl_table != NULL)
    {
      g_autofree char *key = qstore_mview_lower (ddl_table);

      /* Its contents and its entry are still in the store. */
      if (g_hash_table_contains (self->unloaded, key))
        {
          g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_EXISTS,
                       _("Materialized view “%s” is in the catalog, though it did not load when "
                       "the database was opened: drop it with DROP MATERIALIZED VIEW first, "
                       "or choose another name"), ddl_table);
          return FALSE;
        }
    }
  if ((view = qstore_mview_lookup_view (self, ddl_table)) != NULL)
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_UNSUPPORTED,
                   _("“%s” is a materialized view: drop it with DROP MATERIALIZED VIEW (it "
                   "cannot be dropped, renamed or altered as a table)"), view->name);
      return FALSE;
    }
  if ((view = qstore_mview_lookup_view (self, dml_table)) != NULL)
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_UNSUPPORTED,
                   _("Materialized view “%s” cannot be written: it follows the tables it reads "
                   "(change them instead), and REFRESH MATERIALIZED VIEW computes it again"),
                   view->name);
      return FALSE;
    }
  return TRUE;
}

/* Refuses what would change a view's contents behind its back, and marks
 * views over TEMP tables for work when SQLite may roll those back. */
gboolean
qstore_mview_check_statement (QStoreDatabase   *db,
                              QStoreStatement  *statement,
                              GError          **error)
{
  QStoreMViews *self = qstore_mview_mviews_of (db);
  QStoreMView *view;

  /* ROLLBACK TO reaches no hook: TEMP tables may have changed back. */
  if (statement->rolls_back && self->hooks)
    qstore_mview_mark_temp_views (self, NULL);

  switch (statement->kind)
    {
    case QSTORE_STATEMENT_RENAME_TABLE:
    case QSTORE_STATEMENT_ALTER_TABLE:
    case QSTORE_STATEMENT_ALTER_TABLE_ARM:
      if ((view = qstore_mview_lookup_view (self, statement->table)) != NULL)
        {
          g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_UNSUPPORTED,
                       _("“%s” is a materialized view: its columns follow its definition; to "
                       "change them, drop it with DROP MATERIALIZED VIEW and create it again"),
                       view->name);
          return FALSE;
        }
      break;

    case QSTORE_STATEMENT_CREATE_INDEX:
      if ((view = qstore_mview_lookup_view (self, statement->table)) != NULL)
        {
          g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_UNSUPPORTED,
                       _("Materialized view “%s” cannot be indexed: its contents are "
                       "rewritten as it is kept up to date; index the tables it "
                       "reads, or copy it into a table"), view->name);
          return FALSE;
        }
      break;

    case QSTORE_STATEMENT_CREATE_TABLE:
    case QSTORE_STATEMENT_DROP_TABLE:
    case QSTORE_STATEMENT_CREATE_VIEW:
      return check_target (self, statement->name, NULL, error);

    default:
      break;
    }
  return check_target (self, NULL, statement->dml_table, error);
}

static gboolean
check_writable_statement (QStoreDatabase         *db,
                          const QStoreStatement  *statement,
                          GError                **error)
{
  return check_syntax (statement, error) && qstore_database_check_writable (db, error);
}

gboolean
qstore_mview_create (QStoreDatabase   *db,
                     QStoreStatement  *statement,
                     QStoreResult    **result,
                     GError          **error)
{
  return check_writable_statement (db, statement, error) &&
         create_view (qstore_mview_mviews_of (db), statement, error);
}

gboolean
qstore_mview_drop (QStoreDatabase   *db,
                   QStoreStatement  *statement,
                   QStoreResult    **result,
                   GError          **error)
{
  return check_writable_statement (db, statement, error) &&
         drop_view (qstore_mview_mviews_of (db), statement, error);
}

gboolean
qstore_mview_refresh (QStoreDatabase   *db,
                      QStoreStatement  *statement,
                      QStoreResult    **result,
                      GError          **error)
{
  return check_writable_statement (db, statement, error) &&
         refresh_view (qstore_mview_mviews_of (db), statement, error);
}

gboolean
qstore_mview_threshold_setting (QStoreDatabase   *db,
                                QStoreStatement  *statement,
                                QStoreResult    **result,
                                GError          **error)
{
  QStoreMViews *self = qstore_mview_mviews_of (db);

  if (!check_syntax (statement, error))
    return FALSE;

  if (statement->value != NULL)
    {
      guint64 value = 0;

      if (!g_ascii_string_to_unsigned (statement->value, 10, 0, G_MAXINT64, &value, NULL))
        {
          g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                       "PRAGMA " THRESHOLD_SETTING " takes a number of rows, 0 or more "
                       "(such as PRAGMA " THRESHOLD_SETTING " = 100000)");
          return FALSE;
        }
      self->threshold = (gint64) value;
    }
  return qstore_router_setting_result (db, THRESHOLD_SETTING, statement->value == NULL,
                                       self->threshold, result, error);
}

/* Drops "Materialized view “name”: " from a message about @view. */
static const char *
unprefixed (const char  *message,
            QStoreMView *view)
{
  g_autofree char *prefix = g_strdup_printf ("Materialized view “%s”: ", view->name);

  return g_str_has_prefix (message, prefix) ? message + strlen (prefix) : message;
}

/* A DDL statement commits its schema change first; only then can the
 * views that now read something else be known and the durable set name
 * them. A crash in between would leave a view that reads differently (a
 * column re-collated under max(), say) trusted with contents computed
 * the old way, its shape unchanged. So every view is named before the
 * DDL; after it, after_ddl() writes the true set. A set that
 * names too many only makes the next open refill more. */
void
qstore_mview_before_ddl (QStoreDatabase *db)
{
  QStoreMViews *self = qstore_mview_mviews_of (db);
  g_autoptr(GError) error = NULL;
  g_autofree char *json = NULL;

  if (!self->atomic || (db->flags & QSTORE_OPEN_READ_ONLY) ||
      self->order->len == 0)
    return;

  json = qstore_mview_names_json (self, TRUE);
  if (self->durable_known && g_strcmp0 (json, self->durable_text) == 0)
    return;
  if (!qstore_mview_write_meta (self, STALE_SET_META, json, &error))
    {
      g_warning ("The durable set of stale materialized views cannot be written before DDL: %s",
                 error->message);
      self->durable_known = FALSE;
      return;
    }
  g_free (self->durable_text);
  self->durable_text = g_steal_pointer (&json);
  self->durable_known = TRUE;
}

void
qstore_mview_after_ddl (QStoreDatabase *db)
{
  QStoreMViews *self = qstore_mview_mviews_of (db);

  if (self->order->len == 0)
    return;

  for (guint i = 0; i < self->order->len; i++)
    {
      QStoreMView *view = g_ptr_array_index (self->order, i);
      g_autoptr(GError) error = NULL;
      g_autofree char *reason = NULL;
      Plan *plan;

      if (view->stale)
        continue;
      plan = qstore_mview_plan_new (db, view->name, view->body, view->column_names, &error);
      if (plan == NULL)
        reason = g_strdup_printf ("its definition no longer applies: %s",
                                  unprefixed (error->message, view));
      else
        reason = qstore_mview_plan_difference (view->plan, plan);

      if (reason != NULL)
        {
          qstore_mview_mark_stale_quietly (self, view, reason);
          qstore_mview_plan_free (plan);
          continue;
        }
      /* Same reads and shape; the way to follow them may differ (an
       * index came or went). */
      qstore_mview_view_finalize_statements (view);
      qstore_mview_plan_free (view->plan);
      view->plan = plan;
    }
  qstore_mview_rebuild_dependents (self);
  qstore_mview_persist_stale_set_or_warn (self);
}

/* Rehydration */
