/* qstore-lifecycle.c: opening a database and closing it cleanly
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "qstore-coordinator-private.h"
#include "qstore-ddl-private.h"
#include "qstore-error.h"
#include "qstore-i18n-private.h"
#include "qstore-key-format-private.h"
#include "qstore-lifecycle-private.h"
#include "qstore-rehydrate-private.h"
#include "qstore-vtab-private.h"

static sqlite3 *
open_connection (GError **error)
{
  sqlite3 *db = NULL;
  int rc;

  /* A database is used from one thread at a time, which is all SQLite's
   * multi-thread mode asks: its connection mutex would only cost time. */
  rc = sqlite3_open_v2 (":memory:", &db,
                        SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL);
  if (rc != SQLITE_OK)
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_FAILED,
                   _("SQLite cannot open an in-memory database: %s"),
                   db != NULL ? sqlite3_errmsg (db) : sqlite3_errstr (rc));
      sqlite3_close_v2 (db);
      return NULL;
    }
  sqlite3_extended_result_codes (db, 1);
  return db;
}

/* Whether @column of @table is the rowid of a WITHOUT ROWID table: SQLite
 * has none to name there, but the virtual table standing in for it has
 * (its rows' handles for xUpdate). SQLite names the rowid "ROWID" however
 * it was written, unless a column of that name takes its place. */
static gboolean
names_missing_rowid (QStoreDatabase *self,
                     const char     *table,
                     const char     *column)
{
  QStoreSqlTable *entry;
  GPtrArray *columns;

  if (g_strcmp0 (column, "ROWID") != 0 ||
      !(entry = qstore_database_lookup (self, table)) ||
      !entry->schema->without_rowid)
    return FALSE;
  columns = entry->schema->columns;
  for (guint i = 0; i < columns->len; i++)
    if (strcmp (((QStoreColumn *) g_ptr_array_index (columns, i))->name, "ROWID") == 0)
      return FALSE;
  return TRUE;
}

/* The main connection's authorizer for good (see
 * qstore_database_set_authorizer()). It refuses what SQLite would not
 * find, with SQLite's words, whatever prepares the statement. */
static int
dispatch_authorizer (void       *data,
                     int         action,
                     const char *arg1,
                     const char *arg2,
                     const char *db_name,
                     const char *inner)
{
  QStoreDatabase *self = data;

  if ((action == SQLITE_READ || action == SQLITE_UPDATE) &&
      g_strcmp0 (db_name, "main") == 0 && names_missing_rowid (self, arg1, arg2))
    {
      qstore_database_take_callback_error (
        self, g_error_new (QSTORE_ERROR, QSTORE_ERROR_NOT_FOUND,
                           _("no such column: rowid (table “%s” is WITHOUT ROWID: name "
                           "its PRIMARY KEY columns instead)"), arg1));
      return SQLITE_DENY;
    }
  if (self->authorizer == NULL)
    return SQLITE_OK;
  return self->authorizer (self->authorizer_data, action, arg1, arg2, db_name, inner);
}

/* Hands the catalog entries the SQL layer does not load itself to the
 * extension that keeps their kind. */
static void
rehydrate_extensions (QStoreDatabase *self,
                      GArray         *deferred)
{
  for (guint i = 0; i < self->setup->n_extensions; i++)
    {
      const QStoreDatabaseExtension *extension = self->setup->extensions[i];
      g_autoptr(GArray) items = NULL;

      if (extension->rehydrate == NULL)
        continue;
      items = g_array_new (FALSE, TRUE, sizeof (QStoreCatalogItem));
      g_array_set_clear_func (items, (GDestroyNotify) qstore_catalog_item_clear);
      for (guint k = 0; k < deferred->len; k++)
        {
          QStoreCatalogItem *item = &g_array_index (deferred, QStoreCatalogItem, k);

          if (item->kind == extension->catalog_kind)
            {
              g_array_append_val (items, *item);
              memset (item, 0, sizeof *item);
            }
        }
      extension->rehydrate (self, items);
    }
}

static QStoreDatabase *
open_on (QStoreProvider             *provider,
         gboolean                    owns_provider,
         QStoreOpenFlags             flags,
         const QStoreDatabaseSetup  *setup,
         GError                    **error)
{
  g_autoptr(QStoreDatabase) self = NULL;
  g_autoptr(GArray) deferred = NULL;
  gboolean first_key_format;

  self = g_object_new (QSTORE_TYPE_DATABASE, NULL);
  self->flags = qstore_provider_get_flags (provider) | flags;
  self->provider = g_object_ref (provider);
  self->owns_provider = owns_provider;
  self->setup = setup;
  self->rename_table = qstore_ddl_rename_table;

  if (!(self->coordinator = qstore_coordinator_new (self->provider, error)) ||
      !(self->catalog = qstore_provider_get_catalog_store (self->provider, error)) ||
      !(self->db = open_connection (error)) ||
      !(self->scratch = open_connection (error)) ||
      !qstore_vtab_register_module (self, error) ||
      !qstore_key_format_check (self, &first_key_format, error))
    return NULL;

  sqlite3_set_authorizer (self->db, dispatch_authorizer, self);
  for (guint i = 0; i < setup->n_extensions; i++)
    if (setup->extensions[i]->attach != NULL && !setup->extensions[i]->attach (self, error))
      return NULL;

  deferred = qstore_rehydrate_catalog (self);
  /* Both write in one transaction: a repair reads keys as they are
   * upgraded. */
  if ((first_key_format && !qstore_key_format_upgrade (self, deferred, error)) ||
      !qstore_ddl_repair_interrupted_commit (self, error) ||
      !qstore_coordinator_commit (self->coordinator, error))
    return NULL;
  /* What the layers above keep last: materialized views read whole
   * tables. */
  rehydrate_extensions (self, deferred);

  return g_steal_pointer (&self);
}

QStoreDatabase *
qstore_database_open_with_setup (const char                 *uri,
                                 QStoreOpenFlags             flags,
                                 const QStoreDatabaseSetup  *setup,
                                 GError                    **error)
{
  g_autoptr(QStoreProvider) provider = NULL;

  if (!(provider = qstore_provider_new_for_uri (uri, flags, error)))
    return NULL;
  return open_on (provider, TRUE, flags, setup, error);
}

QStoreDatabase *
qstore_database_open_on_provider (QStoreProvider             *provider,
                                  QStoreOpenFlags             flags,
                                  const QStoreDatabaseSetup  *setup,
                                  GError                    **error)
{
  return open_on (provider, FALSE, flags, setup, error);
}

/**
 * qstore_database_close:
 * @self: a #QStoreDatabase
 * @error: return location for a #GError
 *
 * Closes the database cleanly: a transaction still open is rolled back, a
 * clean-shutdown marker is written last, and every resource is released.
 * Dropping the last reference without closing releases them too, but
 * leaves no marker, as a crash would. Closing twice is fine.
 *
 * Returns: %TRUE on success; the database is closed either way
 */
gboolean
qstore_database_close (QStoreDatabase  *self,
                       GError         **error)
{
  gboolean ok = TRUE;

  g_return_val_if_fail (QSTORE_IS_DATABASE (self), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (self->closed)
    return TRUE;

  if (!sqlite3_get_autocommit (self->db))
    sqlite3_exec (self->db, "ROLLBACK", NULL, NULL, NULL);
  if (qstore_coordinator_in_transaction (self->coordinator))
    qstore_coordinator_rollback (self->coordinator);

  /* Nothing is queued for later; what the extensions write at a clean
   * close is written last, in their order. */
  if (!(self->flags & QSTORE_OPEN_READ_ONLY))
    for (guint i = 0; ok && i < self->setup->n_extensions; i++)
      if (self->setup->extensions[i]->close != NULL)
        ok = self->setup->extensions[i]->close (self, error);

  qstore_database_teardown (self);
  return ok;
}
