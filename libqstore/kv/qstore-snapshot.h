/* qstore-snapshot.h: a read handle on one committed state
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(QSTORE_INSIDE) && !defined(QSTORE_COMPILATION)
# error "Only <qstore.h> can be included directly."
#endif

#include "qstore-kv.h"

G_BEGIN_DECLS

#define QSTORE_TYPE_SNAPSHOT (qstore_snapshot_get_type ())

QSTORE_AVAILABLE_IN_ALL
G_DECLARE_DERIVABLE_TYPE (QStoreSnapshot, qstore_snapshot, QSTORE, SNAPSHOT, GObject)

/**
 * QStoreSnapshotClass:
 * @parent_class: the parent class
 * @lookup: find a key in one of the provider's stores as of the snapshot;
 *   the value stays valid until the next @lookup on this snapshot or its
 *   release. Returns %FALSE without error when the key is absent.
 * @iterate: iterate a store as of the snapshot
 *
 * Providers with %QSTORE_CAPABILITY_SNAPSHOTS subclass #QStoreSnapshot.
 * Releasing the last reference releases the read state.
 */
struct _QStoreSnapshotClass
{
  GObjectClass parent_class;

  gboolean    (*lookup)  (QStoreSnapshot      *self,
                          QStoreKV            *store,
                          const guint8        *key,
                          gsize                key_len,
                          const guint8       **value,
                          gsize               *value_len,
                          GError             **error);
  QStoreIter *(*iterate) (QStoreSnapshot      *self,
                          QStoreKV            *store,
                          const QStoreBounds  *bounds,
                          GError             **error);

  /*< private >*/
  gpointer padding[8];
};

QSTORE_AVAILABLE_IN_ALL
QStoreProvider *qstore_snapshot_get_provider (QStoreSnapshot      *self);
QSTORE_AVAILABLE_IN_ALL
gboolean        qstore_snapshot_lookup       (QStoreSnapshot      *self,
                                              QStoreKV            *store,
                                              const guint8        *key,
                                              gsize                key_len,
                                              const guint8       **value,
                                              gsize               *value_len,
                                              GError             **error);
QSTORE_AVAILABLE_IN_ALL
GBytes         *qstore_snapshot_get          (QStoreSnapshot      *self,
                                              QStoreKV            *store,
                                              const guint8        *key,
                                              gsize                key_len,
                                              GError             **error);
QSTORE_AVAILABLE_IN_ALL
QStoreIter     *qstore_snapshot_iterate      (QStoreSnapshot      *self,
                                              QStoreKV            *store,
                                              const QStoreBounds  *bounds,
                                              GError             **error);

G_END_DECLS
