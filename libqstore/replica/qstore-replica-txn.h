/* qstore-replica-txn.h: the one write transaction of a replica
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(QSTORE_INSIDE) && !defined(QSTORE_COMPILATION)
# error "Only <qstore.h> can be included directly."
#endif

#include <glib-object.h>

#include "qstore-result.h"
#include "qstore-version-macros.h"

G_BEGIN_DECLS

#define QSTORE_TYPE_REPLICA_COMMIT_INFO (qstore_replica_commit_info_get_type ())

/**
 * QStoreReplicaCommitInfo:
 *
 * What a committed replica transaction was: its id, how many row changes
 * it made, and how many of them left for the workers before the commit.
 */
typedef struct _QStoreReplicaCommitInfo QStoreReplicaCommitInfo;

QSTORE_AVAILABLE_IN_ALL
GType                    qstore_replica_commit_info_get_type       (void) G_GNUC_CONST;
QSTORE_AVAILABLE_IN_ALL
QStoreReplicaCommitInfo *qstore_replica_commit_info_copy           (const QStoreReplicaCommitInfo *self);
QSTORE_AVAILABLE_IN_ALL
void                     qstore_replica_commit_info_free           (QStoreReplicaCommitInfo       *self);
QSTORE_AVAILABLE_IN_ALL
guint64                  qstore_replica_commit_info_get_tx_id      (const QStoreReplicaCommitInfo *self);
QSTORE_AVAILABLE_IN_ALL
gboolean                 qstore_replica_commit_info_get_wrote      (const QStoreReplicaCommitInfo *self);
QSTORE_AVAILABLE_IN_ALL
guint64                  qstore_replica_commit_info_get_n_changes  (const QStoreReplicaCommitInfo *self);
QSTORE_AVAILABLE_IN_ALL
guint                    qstore_replica_commit_info_get_n_chunks   (const QStoreReplicaCommitInfo *self);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (QStoreReplicaCommitInfo, qstore_replica_commit_info_free)

#define QSTORE_TYPE_REPLICA_TXN (qstore_replica_txn_get_type ())

QSTORE_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (QStoreReplicaTxn, qstore_replica_txn, QSTORE, REPLICA_TXN, GObject)

QSTORE_AVAILABLE_IN_ALL
gint64                   qstore_replica_txn_exec              (QStoreReplicaTxn  *self,
                                                               const char        *sql,
                                                               GVariant          *params,
                                                               GError           **error);
QSTORE_AVAILABLE_IN_ALL
QStoreResult            *qstore_replica_txn_query             (QStoreReplicaTxn  *self,
                                                               const char        *sql,
                                                               GVariant          *params,
                                                               GError           **error);
QSTORE_AVAILABLE_IN_ALL
guint64                  qstore_replica_txn_commit            (QStoreReplicaTxn  *self,
                                                               GError           **error);
QSTORE_AVAILABLE_IN_ALL
QStoreReplicaCommitInfo *qstore_replica_txn_commit_with_info  (QStoreReplicaTxn  *self,
                                                               GError           **error);
QSTORE_AVAILABLE_IN_ALL
void                     qstore_replica_txn_rollback          (QStoreReplicaTxn  *self);
QSTORE_AVAILABLE_IN_ALL
gboolean                 qstore_replica_txn_is_open           (QStoreReplicaTxn  *self);

G_END_DECLS
