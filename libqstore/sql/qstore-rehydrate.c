/* qstore-rehydrate.c: the catalog read back into a database at open
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "qstore-catalog-private.h"
#include "qstore-error.h"
#include "qstore-i18n-private.h"
#include "qstore-rehydrate-private.h"
#include "qstore-rehydration-result-private.h"
#include "qstore-sql-token-private.h"

/* Tables first (each connects to its stores as they are), then views.
 * Entries of the kinds the layers above keep (materialized views) are
 * handed to them later, once an interrupted commit is repaired. */
static GArray *
items_new (void)
{
  GArray *items = g_array_new (FALSE, TRUE, sizeof (QStoreCatalogItem));

  g_array_set_clear_func (items, (GDestroyNotify) qstore_catalog_item_clear);
  return items;
}

static char *
item_label (const QStoreCatalogItem *item)
{
  return g_strdup_printf ("%s.%s", item->schema, item->name);
}

static gboolean
check_main (const QStoreCatalogItem  *item,
            const char  *what,
            GError     **error)
{
  if (g_str_equal (item->schema, "main"))
    return TRUE;
  g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_UNSUPPORTED,
               _("%s “%s.%s” is in schema “%s”, which is not supported: only “main” is"),
               what, item->schema, item->name, item->schema);
  return FALSE;
}

/* Phase 1: the bundle runs on scratch (the table's mirror), then the table
 * connects to its stores as they are. */
static gboolean
rehydrate_table (QStoreDatabase           *self,
                 const QStoreCatalogItem               *item,
                 QStoreRehydrationResult  *result,
                 GError                  **error)
{
  g_autoptr(QStoreTableSchema) schema = NULL;

  if (!check_main (item, "Table", error) ||
      !qstore_catalog_savepoint (self->scratch, "SAVEPOINT qstore_rehydrate", error))
    return FALSE;

  if (!qstore_catalog_run_bundle (self->scratch, item->schema, item->name, item->text, error) ||
      !(schema = qstore_table_schema_from_sqlite (self->scratch, "main", item->name, error)) ||
      !qstore_database_attach_table (self, schema, error))
    {
      sqlite3_exec (self->scratch, "ROLLBACK TO qstore_rehydrate; RELEASE qstore_rehydrate",
                    NULL, NULL, NULL);
      return FALSE;
    }
  if (!qstore_catalog_savepoint (self->scratch, "RELEASE qstore_rehydrate", error))
    return FALSE;

  qstore_rehydration_result_add_table (result, schema->schema, schema->name);
  for (guint i = 0; i < schema->indexes->len; i++)
    qstore_rehydration_result_add_index (result, schema->schema,
                                         ((QStoreIndexSchema *) g_ptr_array_index (schema->indexes, i))->name);
  return TRUE;
}

/* Phase 2, first half: the CREATE VIEW runs on the main connection. SQLite
 * reads a view's body only when it is used, so views may come in any
 * order. */
static gboolean
create_view (QStoreDatabase  *self,
             const QStoreCatalogItem      *item,
             GError         **error)
{
  g_auto(QStoreCatalogGuard) guard = { item->name, TRUE, NULL };
  g_autoptr(sqlite3_stmt) stmt = NULL;
  const char *tail = NULL;
  int rc;

  if (!check_main (item, "View", error))
    return FALSE;

  qstore_database_set_authorizer (self, qstore_catalog_guard_authorizer, &guard);
  rc = sqlite3_prepare_v2 (self->db, item->text, -1, &stmt, &tail);
  qstore_database_set_authorizer (self, NULL, NULL);
  if (rc == SQLITE_OK && stmt == NULL)
    guard.refused = g_strdup ("nothing");
  if (rc != SQLITE_OK || stmt == NULL)
    {
      qstore_catalog_guard_error (&guard, item->schema, sqlite3_errmsg (self->db), error);
      return FALSE;
    }
  if (*qstore_sql_skip_space (tail) != '\0')
    {
      guard.refused = g_strdup ("a second statement");
      qstore_catalog_guard_error (&guard, item->schema, NULL, error);
      return FALSE;
    }
  /* A prepared CREATE VIEW that passed the guard creates this view only. */
  rc = sqlite3_step (stmt);
  if (rc != SQLITE_DONE)
    {
      qstore_catalog_guard_error (&guard, item->schema, sqlite3_errmsg (self->db), error);
      return FALSE;
    }
  return TRUE;
}

/* Phase 2, second half: a view over what no longer exists stays defined,
 * as SQLite keeps it, but is reported. */
static gboolean
check_view (QStoreDatabase  *self,
            const QStoreCatalogItem      *item,
            GError         **error)
{
  g_autofree char *quoted = qstore_sql_quote (item->name);
  g_autofree char *sql = g_strdup_printf ("SELECT * FROM main.%s", quoted);
  sqlite3_stmt *stmt = NULL;

  if (sqlite3_prepare_v2 (self->db, sql, -1, &stmt, NULL) != SQLITE_OK)
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_NOT_FOUND,
                   _("View “%s.%s” cannot be used: %s. It stays defined: create what it "
                   "reads, or drop it with DROP VIEW"), item->schema, item->name,
                   sqlite3_errmsg (self->db));
      sqlite3_finalize (stmt);
      return FALSE;
    }
  sqlite3_finalize (stmt);
  return TRUE;
}

GArray *
qstore_rehydrate_catalog (QStoreDatabase *self)
{
  g_autoptr(QStoreRehydrationResult) result = g_object_new (QSTORE_TYPE_REHYDRATION_RESULT, NULL);
  g_autoptr(GPtrArray) keys = g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);
  g_autoptr(GPtrArray) values = g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);
  g_autoptr(GArray) tables = items_new ();
  g_autoptr(GArray) views = items_new ();
  g_autoptr(GArray) deferred = items_new ();
  g_autoptr(GArray) created = items_new ();
  g_autoptr(GError) error = NULL;

  g_clear_object (&self->rehydration);
  self->rehydration = g_object_ref (result);

  /* Everything is read first: loading tables reads other stores. */
  if (!qstore_catalog_read_all (self->catalog, keys, values, &error))
    {
      qstore_rehydration_result_add_error_entry (result, QSTORE_CATALOG_STORE_NAME, "",
                                                 error->message);
      return g_steal_pointer (&deferred);
    }

  for (guint i = 0; i < keys->len; i++)
    {
      QStoreCatalogItem item = { 0 };
      QStoreCatalogKeyKind kind;

      kind = qstore_catalog_key_classify (keys->pdata[i], &item.schema, &item.name);
      item.kind = kind;
      item.key = g_bytes_ref (keys->pdata[i]);
      item.text = qstore_catalog_text (values->pdata[i]);

      switch (kind)
        {
        case QSTORE_CATALOG_KEY_TABLE:
          g_array_append_val (tables, item);
          break;

        case QSTORE_CATALOG_KEY_VIEW:
          g_array_append_val (views, item);
          break;

        case QSTORE_CATALOG_KEY_MATERIALIZED_VIEW:
          g_array_append_val (deferred, item);
          break;

        case QSTORE_CATALOG_KEY_META:
          qstore_catalog_item_clear (&item);
          break;

        case QSTORE_CATALOG_KEY_INVALID:
        default:
          {
            g_autofree char *described = qstore_catalog_describe_key (item.key);

            qstore_rehydration_result_add_error_entry (result, described, item.text,
                       "Not a catalog key: the entry was written by something other than "
                       "qstore, and is left as it is");
            qstore_catalog_item_clear (&item);
          }
          break;
        }
    }

  for (guint i = 0; i < tables->len; i++)
    {
      QStoreCatalogItem *item = &g_array_index (tables, QStoreCatalogItem, i);
      g_autoptr(GError) local_error = NULL;

      if (!rehydrate_table (self, item, result, &local_error))
        {
          g_autofree char *label = item_label (item);

          qstore_rehydration_result_add_error_entry (result, label, item->text, local_error->message);
        }
    }

  for (guint i = 0; i < views->len; i++)
    {
      QStoreCatalogItem *item = &g_array_index (views, QStoreCatalogItem, i);
      g_autoptr(GError) local_error = NULL;

      if (!create_view (self, item, &local_error))
        {
          g_autofree char *label = item_label (item);

          qstore_rehydration_result_add_error_entry (result, label, item->text, local_error->message);
        }
      else
        {
          QStoreCatalogItem copy = { item->kind, g_bytes_ref (item->key), g_strdup (item->schema),
                                     g_strdup (item->name), g_strdup (item->text) };

          g_array_append_val (created, copy);
        }
    }
  for (guint i = 0; i < created->len; i++)
    {
      QStoreCatalogItem *item = &g_array_index (created, QStoreCatalogItem, i);
      g_autoptr(GError) local_error = NULL;

      if (!check_view (self, item, &local_error))
        {
          g_autofree char *label = item_label (item);

          qstore_rehydration_result_add_error_entry (result, label, item->text, local_error->message);
        }
      else
        qstore_rehydration_result_add_view (result, item->schema, item->name);
    }

  return g_steal_pointer (&deferred);
}

