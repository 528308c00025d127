/* qstore-coordinator.h: one transaction across every table of a database
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(QSTORE_INSIDE) && !defined(QSTORE_COMPILATION)
# error "Only <qstore.h> can be included directly."
#endif

#include "qstore-change-set.h"
#include "qstore-provider.h"

G_BEGIN_DECLS

#define QSTORE_TYPE_COORDINATOR (qstore_coordinator_get_type ())

QSTORE_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (QStoreCoordinator, qstore_coordinator, QSTORE, COORDINATOR, GObject)

QSTORE_AVAILABLE_IN_ALL
QStoreCoordinator *qstore_coordinator_new                (QStoreProvider      *provider,
                                                          GError             **error);
QSTORE_AVAILABLE_IN_ALL
QStoreProvider    *qstore_coordinator_get_provider       (QStoreCoordinator   *self);
QSTORE_AVAILABLE_IN_ALL
guint64            qstore_coordinator_get_last_tx_id     (QStoreCoordinator   *self);
QSTORE_AVAILABLE_IN_ALL
const char        *qstore_coordinator_get_interrupted_commit (QStoreCoordinator *self);
QSTORE_AVAILABLE_IN_ALL
guint64            qstore_coordinator_get_epoch          (QStoreCoordinator   *self);

/* Large transactions: the bytes buffered before they are written out */
QSTORE_AVAILABLE_IN_ALL
guint64            qstore_coordinator_get_write_out_step (QStoreCoordinator   *self);
QSTORE_AVAILABLE_IN_ALL
gboolean           qstore_coordinator_set_write_out_step (QStoreCoordinator   *self,
                                                          guint64              n_bytes,
                                                          GError             **error);

/* Transactions */
QSTORE_AVAILABLE_IN_ALL
void               qstore_coordinator_begin              (QStoreCoordinator   *self);
QSTORE_AVAILABLE_IN_ALL
gboolean           qstore_coordinator_in_transaction     (QStoreCoordinator   *self);
QSTORE_AVAILABLE_IN_ALL
gboolean           qstore_coordinator_commit             (QStoreCoordinator   *self,
                                                          GError             **error);
QSTORE_AVAILABLE_IN_ALL
void               qstore_coordinator_rollback           (QStoreCoordinator   *self);
QSTORE_AVAILABLE_IN_ALL
void               qstore_coordinator_savepoint          (QStoreCoordinator   *self,
                                                          int                  depth);
QSTORE_AVAILABLE_IN_ALL
void               qstore_coordinator_release            (QStoreCoordinator   *self,
                                                          int                  depth);
QSTORE_AVAILABLE_IN_ALL
void               qstore_coordinator_rollback_to        (QStoreCoordinator   *self,
                                                          int                  depth);
QSTORE_AVAILABLE_IN_ALL
gboolean           qstore_coordinator_begin_read         (QStoreCoordinator   *self,
                                                          GError             **error);
QSTORE_AVAILABLE_IN_ALL
void               qstore_coordinator_end_read           (QStoreCoordinator   *self);

/* Pending writes (inside a transaction) */
QSTORE_AVAILABLE_IN_ALL
void               qstore_coordinator_put                (QStoreCoordinator   *self,
                                                          QStoreKV            *store,
                                                          const guint8        *key,
                                                          gsize                key_len,
                                                          const guint8        *value,
                                                          gsize                value_len);
QSTORE_AVAILABLE_IN_ALL
void               qstore_coordinator_delete             (QStoreCoordinator   *self,
                                                          QStoreKV            *store,
                                                          const guint8        *key,
                                                          gsize                key_len);

/* Reads: the transaction's own writes merged over committed data */
QSTORE_AVAILABLE_IN_ALL
GBytes            *qstore_coordinator_get                (QStoreCoordinator   *self,
                                                          QStoreKV            *store,
                                                          const guint8        *key,
                                                          gsize                key_len,
                                                          GError             **error);
QSTORE_AVAILABLE_IN_ALL
gboolean           qstore_coordinator_lookup             (QStoreCoordinator   *self,
                                                          QStoreKV            *store,
                                                          const guint8        *key,
                                                          gsize                key_len,
                                                          const guint8       **value,
                                                          gsize               *value_len,
                                                          GError             **error);
QSTORE_AVAILABLE_IN_ALL
QStoreIter        *qstore_coordinator_iterate            (QStoreCoordinator   *self,
                                                          QStoreKV            *store,
                                                          const QStoreBounds  *bounds,
                                                          GError             **error);

/* Bookkeeping tables add to the transaction */
QSTORE_AVAILABLE_IN_ALL
void               qstore_coordinator_record_change      (QStoreCoordinator   *self,
                                                          const char          *schema,
                                                          const char          *table,
                                                          QStoreChangeOp       op,
                                                          GBytes              *old_row,
                                                          GBytes              *new_row);
QSTORE_AVAILABLE_IN_ALL
void               qstore_coordinator_adjust_row_count   (QStoreCoordinator   *self,
                                                          const char          *schema,
                                                          const char          *table,
                                                          gint64               delta);
QSTORE_AVAILABLE_IN_ALL
gint64             qstore_coordinator_get_row_count      (QStoreCoordinator   *self,
                                                          const char          *schema,
                                                          const char          *table);

G_END_DECLS
