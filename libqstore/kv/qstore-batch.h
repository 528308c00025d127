/* qstore-batch.h: buffered writes, applied all or nothing
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(QSTORE_INSIDE) && !defined(QSTORE_COMPILATION)
# error "Only <qstore.h> can be included directly."
#endif

#include "qstore-kv.h"

G_BEGIN_DECLS

#define QSTORE_TYPE_BATCH (qstore_batch_get_type ())
#define QSTORE_TYPE_ATOMIC_BATCH (qstore_atomic_batch_get_type ())

QSTORE_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (QStoreBatch, qstore_batch, QSTORE, BATCH, GObject)

QSTORE_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (QStoreAtomicBatch, qstore_atomic_batch, QSTORE, ATOMIC_BATCH, GObject)

QSTORE_AVAILABLE_IN_ALL
QStoreKV  *qstore_batch_get_store          (QStoreBatch        *self);
QSTORE_AVAILABLE_IN_ALL
void       qstore_batch_put                (QStoreBatch        *self,
                                            const guint8       *key,
                                            gsize               key_len,
                                            const guint8       *value,
                                            gsize               value_len);
QSTORE_AVAILABLE_IN_ALL
void       qstore_batch_delete             (QStoreBatch        *self,
                                            const guint8       *key,
                                            gsize               key_len);
QSTORE_AVAILABLE_IN_ALL
guint      qstore_batch_get_n_ops          (QStoreBatch        *self);
QSTORE_AVAILABLE_IN_ALL
gboolean   qstore_batch_write              (QStoreBatch        *self,
                                            QStoreWriteFlags    flags,
                                            GError            **error);

QSTORE_AVAILABLE_IN_ALL
void       qstore_atomic_batch_put         (QStoreAtomicBatch  *self,
                                            QStoreKV           *store,
                                            const guint8       *key,
                                            gsize               key_len,
                                            const guint8       *value,
                                            gsize               value_len);
QSTORE_AVAILABLE_IN_ALL
void       qstore_atomic_batch_delete      (QStoreAtomicBatch  *self,
                                            QStoreKV           *store,
                                            const guint8       *key,
                                            gsize               key_len);
QSTORE_AVAILABLE_IN_ALL
guint      qstore_atomic_batch_get_n_ops   (QStoreAtomicBatch  *self);
QSTORE_AVAILABLE_IN_ALL
gboolean   qstore_atomic_batch_commit      (QStoreAtomicBatch  *self,
                                            QStoreWriteFlags    flags,
                                            GError            **error);

G_END_DECLS
