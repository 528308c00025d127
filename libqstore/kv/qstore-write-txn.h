/* qstore-write-txn.h: an open write transaction of a provider
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(QSTORE_INSIDE) && !defined(QSTORE_COMPILATION)
# error "Only <qstore.h> can be included directly."
#endif

#include "qstore-kv.h"
#include "qstore-snapshot.h"
#include "qstore-write-op.h"

G_BEGIN_DECLS

#define QSTORE_TYPE_WRITE_TXN (qstore_write_txn_get_type ())

QSTORE_AVAILABLE_IN_ALL
G_DECLARE_DERIVABLE_TYPE (QStoreWriteTxn, qstore_write_txn, QSTORE, WRITE_TXN, QStoreSnapshot)

/**
 * QStoreWriteTxnClass:
 * @parent_class: the parent class; its @lookup and @iterate see the
 *   committed state as of the transaction's start with the transaction's
 *   own writes over it
 * @write: (skip): apply @ops in order inside the transaction. On failure
 *   the implementation has already aborted the whole transaction
 * @commit: make every write of the transaction durable at once (with one
 *   durable commit when %QSTORE_WRITE_SYNC is set). Afterwards, or on
 *   failure, the transaction is over
 * @abort: end the transaction without storing any of it
 * @drop: erase the named stores inside the transaction (names that do not
 *   exist are no-ops). On failure the implementation has already aborted
 *   the whole transaction
 *
 * Providers with %QSTORE_CAPABILITY_WRITE_TXN subclass #QStoreWriteTxn.
 * The base class checks arguments and the transaction's state before it
 * calls the vfuncs, and calls each of @commit and @abort at most once.
 */
struct _QStoreWriteTxnClass
{
  QStoreSnapshotClass parent_class;

  gboolean (*write)  (QStoreWriteTxn       *self,
                      const QStoreWriteOp  *ops,
                      gsize                 n_ops,
                      GError              **error);
  gboolean (*commit) (QStoreWriteTxn       *self,
                      QStoreWriteFlags      flags,
                      GError              **error);
  void     (*abort)  (QStoreWriteTxn       *self);
  gboolean (*drop)   (QStoreWriteTxn       *self,
                      const char * const   *names,
                      GError              **error);

  /*< private >*/
  gpointer padding[7];
};

QSTORE_AVAILABLE_IN_ALL
gboolean qstore_write_txn_write     (QStoreWriteTxn       *self,
                                     const QStoreWriteOp  *ops,
                                     gsize                 n_ops,
                                     GError              **error);
QSTORE_AVAILABLE_IN_ALL
gboolean qstore_write_txn_put       (QStoreWriteTxn       *self,
                                     QStoreKV             *store,
                                     const guint8         *key,
                                     gsize                 key_len,
                                     const guint8         *value,
                                     gsize                 value_len,
                                     GError              **error);
QSTORE_AVAILABLE_IN_ALL
gboolean qstore_write_txn_delete    (QStoreWriteTxn       *self,
                                     QStoreKV             *store,
                                     const guint8         *key,
                                     gsize                 key_len,
                                     GError              **error);
QSTORE_AVAILABLE_IN_ALL
gboolean qstore_write_txn_drop_stores (QStoreWriteTxn     *self,
                                     const char * const   *names,
                                     GError              **error);
QSTORE_AVAILABLE_IN_ALL
gboolean qstore_write_txn_commit    (QStoreWriteTxn       *self,
                                     QStoreWriteFlags      flags,
                                     GError              **error);
QSTORE_AVAILABLE_IN_ALL
void     qstore_write_txn_abort     (QStoreWriteTxn       *self);
QSTORE_AVAILABLE_IN_ALL
gboolean qstore_write_txn_is_open   (QStoreWriteTxn       *self);

G_END_DECLS
