/* qstore-kv.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "qstore-error.h"
#include "qstore-kv-private.h"
#include "qstore-provider-state-private.h"

/**
 * QStoreKV:
 *
 * One ordered store of byte keys to byte values, handed out by a
 * [iface@Provider].
 *
 * Keys order as unsigned bytes compared lexicographically, a proper prefix
 * first (see qstore_key_compare()). Keys are never empty and may be limited
 * in length by the provider ([method@Provider.get_max_key_length]).
 */

G_DEFINE_INTERFACE (QStoreKV, qstore_kv, G_TYPE_OBJECT)

static void
qstore_kv_default_init (QStoreKVInterface *iface)
{
}

/**
 * qstore_kv_get_name:
 * @self: a #QStoreKV
 *
 * Gets the physical name of the store.
 *
 * Returns: the physical name of the store, such as `main.t`
 */
const char *
qstore_kv_get_name (QStoreKV *self)
{
  g_return_val_if_fail (QSTORE_IS_KV (self), NULL);
  return QSTORE_KV_GET_IFACE (self)->get_name (self);
}

/**
 * qstore_kv_get_provider:
 * @self: a #QStoreKV
 *
 * Gets the provider that handed out the store.
 *
 * Returns: (transfer none): the provider @self belongs to
 */
QStoreProvider *
qstore_kv_get_provider (QStoreKV *self)
{
  g_return_val_if_fail (QSTORE_IS_KV (self), NULL);
  return QSTORE_KV_GET_IFACE (self)->get_provider (self);
}

/**
 * qstore_kv_get:
 * @self: a #QStoreKV
 * @key: (array length=key_len): the key
 * @key_len: length of @key
 * @error: return location for a #GError
 *
 * Reads the latest committed value of @key.
 *
 * Returns: (transfer full) (nullable): the value, or %NULL when the key is
 *   absent (@error unset) or on error
 */
GBytes *
qstore_kv_get (QStoreKV      *self,
               const guint8  *key,
               gsize          key_len,
               GError       **error)
{
  QStoreKVInterface *iface;

  g_return_val_if_fail (QSTORE_IS_KV (self), NULL);
  g_return_val_if_fail (key != NULL || key_len == 0, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  /* Every point read comes here: one interface and one state lookup. A
   * key no write could have stored is simply absent. */
  iface = QSTORE_KV_GET_IFACE (self);
  if (qstore_provider_check_read (iface->get_provider (self), key_len, error) <= 0)
    return NULL;
  return iface->get (self, key, key_len, error);
}

/**
 * qstore_kv_iterate:
 * @self: a #QStoreKV
 * @bounds: (nullable): the range, or %NULL for the whole store
 * @error: return location for a #GError
 *
 * Iterates the committed entries of @self within @bounds. The iterator
 * sees one consistent state of the store.
 *
 * Returns: (transfer full): an iterator, or %NULL on error (a negative
 *   limit is %QSTORE_ERROR_INVALID_ARGUMENT)
 */
QStoreIter *
qstore_kv_iterate (QStoreKV            *self,
                   const QStoreBounds  *bounds,
                   GError             **error)
{
  g_autoptr(QStoreBounds) all = NULL;

  g_return_val_if_fail (QSTORE_IS_KV (self), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (bounds == NULL)
    bounds = all = qstore_bounds_new ();
  if (!qstore_bounds_validate (bounds, error))
    return NULL;
  if (!qstore_provider_check_open (qstore_kv_get_provider (self), error))
    return NULL;
  return QSTORE_KV_GET_IFACE (self)->iterate (self, bounds, error);
}

gboolean
qstore_kv_check_provider (QStoreKV        *store,
                          QStoreProvider  *provider,
                          GError         **error)
{
  if (G_UNLIKELY (qstore_kv_get_provider (store) != provider))
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                   "Store “%s” belongs to another provider than the one written to",
                   qstore_kv_get_name (store));
      return FALSE;
    }
  return TRUE;
}
