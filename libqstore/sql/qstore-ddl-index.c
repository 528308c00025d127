/* qstore-ddl-index.c: CREATE INDEX and DROP INDEX on qstore tables
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "qstore-coordinator-private.h"
#include "qstore-ddl-private.h"
#include "qstore-error.h"
#include "qstore-i18n-private.h"
#include "qstore-sql-token-private.h"
#include "qstore-provider-private.h"

/* CREATE INDEX */

gboolean
qstore_ddl_create_index (QStoreDatabase   *self,
                         QStoreStatement  *statement,
                         QStoreResult    **result,
                         GError          **error)
{
  const char *sql = statement->text;
  QStoreScratchAction seen = { 0 };
  sqlite3_stmt *stmt;
  g_autoptr(QStoreTableSchema) schema = NULL;
  g_autoptr(QStoreTable) table = NULL;
  g_autofree char *bundle = NULL;
  g_autofree char *what = NULL;
  g_autofree char *store_name = NULL;
  g_autoptr(GHashTable) used = NULL;
  g_autoptr(GBytes) catalog_key = NULL;
  QStoreSqlTable *entry;
  int position;
  gboolean ok;

  if (!(stmt = qstore_ddl_prepare_on_scratch (self, sql, NULL, &seen, error)))
    {
      qstore_scratch_action_clear (&seen);
      return FALSE;
    }

  /* IF NOT EXISTS, and it does. */
  if (seen.action != SQLITE_CREATE_INDEX)
    {
      sqlite3_finalize (stmt);
      qstore_scratch_action_clear (&seen);
      return TRUE;
    }

  entry = qstore_database_lookup (self, seen.table);
  if (entry == NULL || !qstore_database_check_writable (self, error) || !qstore_ddl_scratch_begin (self, error))
    {
      if (entry == NULL)
        g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_NOT_FOUND, "no such table: %s", seen.table);
      sqlite3_finalize (stmt);
      qstore_scratch_action_clear (&seen);
      return FALSE;
    }

  ok = qstore_ddl_step_on_scratch (self, stmt, error);
  sqlite3_finalize (stmt);
  if (ok)
    schema = qstore_table_schema_from_sqlite (self->scratch, "main", entry->schema->name, error);
  position = schema != NULL ? qstore_ddl_find_index (schema, seen.name) : -1;
  if (schema != NULL && position < 0)
    g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_FAILED,
                 _("Index “%s” was created but cannot be found on table “%s”"),
                 seen.name, entry->schema->name);

  if (position >= 0)
    {
      used = qstore_database_store_names (self, NULL);
      store_name = qstore_store_name_for_index (schema->schema, schema->name, seen.name);
      what = g_strdup_printf ("Index “%s” of table “%s”", seen.name, schema->name);
      if (qstore_ddl_check_new_store (self, used, store_name, what, error))
        table = qstore_table_new (self->coordinator, schema, self->scratch, error);
    }

  if (table == NULL)
    {
      qstore_ddl_scratch_undo (self);
      qstore_scratch_action_clear (&seen);
      return FALSE;
    }

  /* The entries and the new catalog bundle commit together. */
  qstore_coordinator_begin (self->coordinator);
  if (!qstore_ddl_build_one_index (self, table, position, TRUE, error))
    {
      qstore_coordinator_rollback (self->coordinator);
      qstore_ddl_scratch_undo (self);
      qstore_scratch_action_clear (&seen);
      return FALSE;
    }

  bundle = qstore_table_schema_to_bundle (schema);
  catalog_key = qstore_catalog_key_for_table (schema->schema, schema->name);
  qstore_database_put_catalog (self, catalog_key, bundle);
  /* One unit even without an atomic batch: a crash must not leave index
   * entries the catalog does not list. */
  if (!qstore_coordinator_commit_restructure (self->coordinator, qstore_ddl_no_stores, error))
    {
      qstore_ddl_scratch_undo (self);
      qstore_scratch_action_clear (&seen);
      return FALSE;
    }

  qstore_sql_table_set_table (entry, table);
  qstore_scratch_action_clear (&seen);
  return qstore_ddl_scratch_commit (self, error);
}

/* DROP INDEX */

gboolean
qstore_ddl_drop_index (QStoreDatabase   *self,
                       QStoreStatement  *statement,
                       QStoreResult    **result,
                       GError          **error)
{
  const char *sql = statement->text;
  QStoreScratchAction seen = { 0 };
  g_autoptr(QStoreTableSchema) schema = NULL;
  g_autoptr(QStoreTable) table = NULL;
  g_autoptr(GBytes) catalog_key = NULL;
  g_autofree char *bundle = NULL;
  g_autofree char *store_name = NULL;
  const char *drop[2] = { NULL, NULL };
  const char *empty[] = { NULL };
  QStoreWriteOp op = { 0 };
  QStoreSqlTable *entry;
  sqlite3_stmt *stmt;
  gsize key_len;
  gboolean ok;

  if (!(stmt = qstore_ddl_prepare_on_scratch (self, sql, NULL, &seen, error)))
    {
      qstore_scratch_action_clear (&seen);
      return FALSE;
    }
  entry = seen.action == SQLITE_DROP_INDEX ? qstore_database_lookup (self, seen.table) : NULL;
  if (entry == NULL)
    {
      /* Gone meanwhile: the statement says what SQLite makes of it. */
      ok = qstore_ddl_step_on_scratch (self, stmt, error);
      sqlite3_finalize (stmt);
      qstore_scratch_action_clear (&seen);
      return ok;
    }

  if (!qstore_database_check_writable (self, error) || !qstore_ddl_scratch_begin (self, error))
    {
      sqlite3_finalize (stmt);
      qstore_scratch_action_clear (&seen);
      return FALSE;
    }

  ok = qstore_ddl_step_on_scratch (self, stmt, error);
  sqlite3_finalize (stmt);
  if (ok && (schema = qstore_table_schema_from_sqlite (self->scratch, "main", entry->schema->name,
                                                       error)))
    table = qstore_table_new (self->coordinator, schema, self->scratch, error);
  if (table == NULL)
    {
      qstore_ddl_scratch_undo (self);
      qstore_scratch_action_clear (&seen);
      return FALSE;
    }

  /* The index store goes with the catalog bundle that no longer lists it. */
  store_name = qstore_store_name_for_index (schema->schema, schema->name, seen.name);
  drop[0] = store_name;
  bundle = qstore_table_schema_to_bundle (schema);
  catalog_key = qstore_catalog_key_for_table (schema->schema, schema->name);
  op.store = qstore_database_get_catalog (self);
  op.kind = QSTORE_WRITE_OP_PUT;
  op.key = g_bytes_get_data (catalog_key, &key_len);
  op.key_len = key_len;
  op.value = (const guint8 *) bundle;
  op.value_len = strlen (bundle);

  if (!qstore_provider_restructure (self->provider, drop, empty, empty, &op,
                                    qstore_database_catalog_differs (self, catalog_key, bundle) ? 1 : 0,
                                    error))
    {
      qstore_ddl_scratch_undo (self);
      qstore_scratch_action_clear (&seen);
      return FALSE;
    }

  qstore_sql_table_set_table (entry, table);
  qstore_scratch_action_clear (&seen);
  return qstore_ddl_scratch_commit (self, error);
}

/* REINDEX */

gboolean
qstore_ddl_reindex (QStoreDatabase   *self,
                    QStoreStatement  *statement,
                    QStoreResult    **result,
                    GError          **error)
{
  QStoreSqlTable *entry = qstore_database_lookup (self, statement->table);
  QStoreTableSchema *schema = entry->schema;
  int only = statement->name != NULL ? qstore_ddl_find_index (schema, statement->name) : -1;

  if (statement->name != NULL && only < 0)
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_NOT_FOUND,
                   "no such index: %s", statement->name);
      return FALSE;
    }

  /* SQLite's REINDEX checks UNIQUE again; one unit even without an
   * atomic batch, so a failure leaves the old entries. */
  qstore_coordinator_begin (self->coordinator);
  for (guint i = 0; i < schema->indexes->len; i++)
    if ((only < 0 || (guint) only == i) &&
        !qstore_ddl_rebuild_index (self, entry->table, i, TRUE, error))
      {
        qstore_coordinator_rollback (self->coordinator);
        return FALSE;
      }
  return qstore_coordinator_commit_restructure (self->coordinator, qstore_ddl_no_stores, error);
}
