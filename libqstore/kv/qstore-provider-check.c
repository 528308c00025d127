/* qstore-provider-check.c: what can be checked of a location, without
 * writing to it
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "qstore-check-report.h"
#include "qstore-error.h"
#include "qstore-i18n-private.h"
#include "qstore-provider-private.h"

/* Enough to see a store is damaged; the rest of it says little more. */
#define MAX_PROBLEMS_PER_STORE 10

/* Walks one store to its end: every key must follow the one before. */
static void
check_store (QStoreProvider    *self,
             QStoreSnapshot    *snapshot,
             const char        *name,
             QStoreCheckReport *report)
{
  g_autoptr(QStoreKV) kv = NULL;
  g_autoptr(QStoreIter) iter = NULL;
  g_autoptr(GByteArray) previous = g_byte_array_new ();
  g_autoptr(GError) error = NULL;
  guint64 n_entries = 0;
  guint n_problems = 0;

  kv = qstore_provider_open_store (self, name, &error);
  if (kv != NULL)
    iter = snapshot != NULL ? qstore_snapshot_iterate (snapshot, kv, NULL, &error)
                            : qstore_kv_iterate (kv, NULL, &error);
  while (iter != NULL && qstore_iter_next (iter, &error))
    {
      gsize len;
      const guint8 *key = qstore_iter_peek_key (iter, &len);

      if (n_entries > 0 &&
          qstore_key_compare (previous->data, previous->len, key, len) >= 0 &&
          n_problems++ < MAX_PROBLEMS_PER_STORE)
        {
          g_autoptr(GBytes) at = g_bytes_new (key, len);

          qstore_check_report_add_problem (report, QSTORE_CHECK_SCOPE_STORE, name, at,
                                           _("This key does not come after the key before it: "
                                           "the store's order is broken"));
        }
      g_byte_array_set_size (previous, 0);
      g_byte_array_append (previous, key, len);
      n_entries++;
    }
  if (error != NULL)
    qstore_check_report_add_problem (report, QSTORE_CHECK_SCOPE_STORE, name, NULL,
                                     error->message);
  qstore_check_report_add_checked (report, QSTORE_CHECK_SCOPE_STORE, name, n_entries);
}

/**
 * qstore_provider_check:
 * @self: a #QStoreProvider
 * @error: return location for a #GError
 *
 * Checks the location without writing to it. First what the provider can
 * check of its own files and structure (LMDB's page structure, SQLite's
 * integrity check…); then, when that found nothing wrong, every store
 * that holds entries, read to its end in one snapshot (when the provider
 * has them): each must iterate without error, its keys strictly
 * increasing as unsigned bytes. Damage found is in the report; it is not
 * an error. Layers above add their own checks to the report.
 *
 * A provider cannot see every damage: LMDB keeps no checksums, so a
 * changed byte inside a key or value that keeps the order is not seen.
 *
 * Returns: (transfer full): the report, or %NULL when the check could not
 *   run (the provider is closed, or its files cannot be read)
 */
QStoreCheckReport *
qstore_provider_check (QStoreProvider  *self,
                       GError         **error)
{
  g_autoptr(QStoreCheckReport) report = NULL;
  g_autoptr(QStoreSnapshot) snapshot = NULL;
  g_autoptr(GError) local_error = NULL;
  g_auto(GStrv) names = NULL;
  QStoreProviderInterface *iface;

  g_return_val_if_fail (QSTORE_IS_PROVIDER (self), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!qstore_provider_check_open (self, error))
    return NULL;
  report = qstore_check_report_new ();
  iface = QSTORE_PROVIDER_GET_IFACE (self);
  if (iface->check != NULL && !iface->check (self, report, error))
    return NULL;
  if (!qstore_check_report_is_clean (report))
    {
      qstore_check_report_add_note (report, _("The stores were not read one by one: the "
                                    "provider found its structure damaged, and reading "
                                    "a damaged structure is not safe"));
      return g_steal_pointer (&report);
    }

  names = qstore_provider_list_stores (self, &local_error);
  if (names == NULL)
    {
      qstore_check_report_add_problem (report, QSTORE_CHECK_SCOPE_FILE,
                                       qstore_provider_get_location (self), NULL,
                                       local_error->message);
      return g_steal_pointer (&report);
    }
  if (qstore_provider_get_capabilities (self) & QSTORE_CAPABILITY_SNAPSHOTS)
    {
      snapshot = qstore_provider_begin_snapshot (self, &local_error);
      if (snapshot == NULL)
        {
          g_propagate_error (error, g_steal_pointer (&local_error));
          return NULL;
        }
    }
  for (guint i = 0; names[i] != NULL; i++)
    check_store (self, snapshot, names[i], report);
  return g_steal_pointer (&report);
}
