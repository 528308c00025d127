/* qstore-database-check.c: a database checked from its files to its indexes
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "qstore-database-private.h"

static int
compare_names (gconstpointer a,
               gconstpointer b)
{
  const QStoreSqlTable *x = *(QStoreSqlTable * const *) a;
  const QStoreSqlTable *y = *(QStoreSqlTable * const *) b;

  return g_strcmp0 (x->schema->name, y->schema->name);
}

/**
 * qstore_database_check:
 * @self: a #QStoreDatabase
 * @error: return location for a #GError
 *
 * Checks the database without writing, from the bottom up: first the
 * provider's files and every store's key order
 * (qstore_provider_check()); when those are sound, the catalog entries
 * that did not load when the database opened (scope
 * %QSTORE_CHECK_SCOPE_CATALOG), then every table, qstore's own and the
 * contents of materialized views included, against its key, its indexes
 * and its row count (qstore_table_check()).
 *
 * A store can be checked beside a process writing it when opened with
 * %QSTORE_OPEN_READ_ONLY; the row counts are then compared with what the
 * writer committed last, which may have moved on.
 *
 * Returns: (transfer full): what was checked and found, or %NULL with
 *   @error set when the check could not run (the database is closed, a
 *   transaction is open, or the store could not be read)
 */
QStoreCheckReport *
qstore_database_check (QStoreDatabase  *self,
                       GError         **error)
{
  g_autoptr(QStoreCheckReport) report = NULL;
  g_autoptr(GPtrArray) entries = g_ptr_array_new ();
  QStoreRehydrationResult *loaded;
  GHashTableIter iter;
  QStoreSqlTable *entry;

  g_return_val_if_fail (QSTORE_IS_DATABASE (self), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!qstore_database_check_open (self, error))
    return NULL;
  report = qstore_provider_check (self->provider, error);
  if (report == NULL)
    return NULL;
  if (!qstore_check_report_is_clean (report))
    return g_steal_pointer (&report);

  loaded = qstore_database_get_rehydration_result (self);
  for (guint i = 0; loaded != NULL && i < qstore_rehydration_result_get_n_errors (loaded); i++)
    qstore_check_report_add_problem (report, QSTORE_CHECK_SCOPE_CATALOG,
                                     qstore_rehydration_result_get_error_name (loaded, i), NULL,
                                     qstore_rehydration_result_get_error_message (loaded, i));

  /* Table by table, in name order, so two reports compare line by line. */
  g_hash_table_iter_init (&iter, self->tables);
  while (g_hash_table_iter_next (&iter, NULL, (gpointer *) &entry))
    g_ptr_array_add (entries, entry);
  g_ptr_array_sort (entries, compare_names);
  for (guint i = 0; i < entries->len; i++)
    {
      entry = g_ptr_array_index (entries, i);
      if (!qstore_table_check (entry->table, report, error))
        return NULL;
    }
  return g_steal_pointer (&report);
}
