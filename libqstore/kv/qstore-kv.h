/* qstore-kv.h: one ordered store of byte keys to byte values
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(QSTORE_INSIDE) && !defined(QSTORE_COMPILATION)
# error "Only <qstore.h> can be included directly."
#endif

#include <glib-object.h>

#include "qstore-bounds.h"
#include "qstore-iter.h"
#include "qstore-types.h"

G_BEGIN_DECLS

/**
 * QStoreWriteFlags:
 * @QSTORE_WRITE_NONE: no particular durability
 * @QSTORE_WRITE_SYNC: the write is on stable storage when the call returns
 *   (providers with no durability knob ignore it)
 *
 * Flags for writes.
 */
typedef enum /*< flags,underscore_name=qstore_write_flags >*/
{
  QSTORE_WRITE_NONE = 0,
  QSTORE_WRITE_SYNC = 1 << 0,
} QStoreWriteFlags;

#define QSTORE_TYPE_KV (qstore_kv_get_type ())

QSTORE_AVAILABLE_IN_ALL
G_DECLARE_INTERFACE (QStoreKV, qstore_kv, QSTORE, KV, GObject)

/**
 * QStoreKVInterface:
 * @parent_iface: the parent interface
 * @get_name: the physical store name
 * @get_provider: the provider the store belongs to
 * @get: the value stored under a key, %NULL without error when absent
 * @iterate: an iterator over a range; the bounds are already validated
 * @get_into: optional: copies the value stored under a key into @value,
 *   replacing what it held; %FALSE without error when absent. A caller
 *   that reads many keys into one buffer then allocates nothing per read;
 *   without it, @get is used
 *
 * Writes do not go through the store: [method@KV.put], [method@KV.delete]
 * and [class@Batch] hand write operations to the provider's `write`.
 */
struct _QStoreKVInterface
{
  GTypeInterface parent_iface;

  const char     *(*get_name)     (QStoreKV            *self);
  QStoreProvider *(*get_provider) (QStoreKV            *self);
  GBytes         *(*get)          (QStoreKV            *self,
                                   const guint8        *key,
                                   gsize                key_len,
                                   GError             **error);
  QStoreIter     *(*iterate)      (QStoreKV            *self,
                                   const QStoreBounds  *bounds,
                                   GError             **error);
  gboolean        (*get_into)     (QStoreKV            *self,
                                   const guint8        *key,
                                   gsize                key_len,
                                   GByteArray          *value,
                                   GError             **error);
};

QSTORE_AVAILABLE_IN_ALL
const char     *qstore_kv_get_name     (QStoreKV            *self);
QSTORE_AVAILABLE_IN_ALL
QStoreProvider *qstore_kv_get_provider (QStoreKV            *self);
QSTORE_AVAILABLE_IN_ALL
GBytes         *qstore_kv_get          (QStoreKV            *self,
                                        const guint8        *key,
                                        gsize                key_len,
                                        GError             **error);
QSTORE_AVAILABLE_IN_ALL
gboolean        qstore_kv_put          (QStoreKV            *self,
                                        const guint8        *key,
                                        gsize                key_len,
                                        const guint8        *value,
                                        gsize                value_len,
                                        QStoreWriteFlags     flags,
                                        GError             **error);
QSTORE_AVAILABLE_IN_ALL
gboolean        qstore_kv_delete       (QStoreKV            *self,
                                        const guint8        *key,
                                        gsize                key_len,
                                        QStoreWriteFlags     flags,
                                        GError             **error);
QSTORE_AVAILABLE_IN_ALL
QStoreIter     *qstore_kv_iterate      (QStoreKV            *self,
                                        const QStoreBounds  *bounds,
                                        GError             **error);
QSTORE_AVAILABLE_IN_ALL
QStoreBatch    *qstore_kv_new_batch    (QStoreKV            *self);

G_END_DECLS
