/* qstore-replica.h: one writer, worker threads hosting live queries
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(QSTORE_INSIDE) && !defined(QSTORE_COMPILATION)
# error "Only <qstore.h> can be included directly."
#endif

#include <gio/gio.h>

#include "qstore-replica-error.h"
#include "qstore-result.h"

G_BEGIN_DECLS

/* Declared in qstore-replica-txn.h, which the transaction's own code
 * includes with this one's internals. */
typedef struct _QStoreReplicaTxn QStoreReplicaTxn;

/**
 * QSTORE_REPLICA_CHUNK_ROWS:
 *
 * How many row changes of a write transaction the writer collects before
 * it streams them to the workers, between statements.
 */
#define QSTORE_REPLICA_CHUNK_ROWS 1024

#define QSTORE_TYPE_REPLICA (qstore_replica_get_type ())

QSTORE_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (QStoreReplica, qstore_replica, QSTORE, REPLICA, GObject)

/**
 * QStoreReplicaDdlStepFunc:
 * @step: what the statement just run did, as in the report of
 *   [method@Replica.exec_ddl_with_marker] (an `a{sv}` dictionary)
 * @txn: runs statements in the batch, before the marker is stamped
 * @user_data: the data given with the function
 * @error: return location for a #GError
 *
 * Bookkeeping of the caller's that must commit with a DDL batch, called
 * after each of its statements. Whatever it runs through @txn commits
 * with the batch or not at all; returning %FALSE rolls everything back.
 *
 * Returns: %TRUE to go on
 */
typedef gboolean (*QStoreReplicaDdlStepFunc) (GVariant          *step,
                                              QStoreReplicaTxn  *txn,
                                              gpointer           user_data,
                                              GError           **error);

QSTORE_AVAILABLE_IN_ALL
QStoreReplica     *qstore_replica_open                   (const char                *uri,
                                                          guint                      n_workers,
                                                          guint                      queue_length,
                                                          GError                   **error);
QSTORE_AVAILABLE_IN_ALL
gboolean           qstore_replica_close                  (QStoreReplica             *self,
                                                          GError                   **error);
QSTORE_AVAILABLE_IN_ALL
guint              qstore_replica_get_n_workers          (QStoreReplica             *self);
QSTORE_AVAILABLE_IN_ALL
guint              qstore_replica_get_queue_length       (QStoreReplica             *self);
QSTORE_AVAILABLE_IN_ALL
guint64            qstore_replica_get_committed_tx_id    (QStoreReplica             *self);
QSTORE_AVAILABLE_IN_ALL
gint64             qstore_replica_get_schema_cookie      (QStoreReplica             *self);
QSTORE_AVAILABLE_IN_ALL
gboolean           qstore_replica_view_is_speculative    (QStoreReplica             *self);
QSTORE_AVAILABLE_IN_ALL
gboolean           qstore_replica_is_write_open          (QStoreReplica             *self);

/* Live queries */
QSTORE_AVAILABLE_IN_ALL
gboolean           qstore_replica_register_query         (QStoreReplica             *self,
                                                          guint64                    query_id,
                                                          const char                *sql,
                                                          guint                     *worker,
                                                          GError                   **error);
QSTORE_AVAILABLE_IN_ALL
gboolean           qstore_replica_destroy_query          (QStoreReplica             *self,
                                                          guint64                    query_id);
QSTORE_AVAILABLE_IN_ALL
guint              qstore_replica_get_worker_for_query   (QStoreReplica             *self,
                                                          guint64                    query_id);
QSTORE_AVAILABLE_IN_ALL
gboolean           qstore_replica_worker_is_degraded     (QStoreReplica             *self,
                                                          guint                      worker);
QSTORE_AVAILABLE_IN_ALL
GVariant          *qstore_replica_read_snapshot          (QStoreReplica             *self,
                                                          guint64                    query_id,
                                                          guint64                   *tx_id,
                                                          GError                   **error);
QSTORE_AVAILABLE_IN_ALL
gboolean           qstore_replica_sync                   (QStoreReplica             *self,
                                                          GError                   **error);

/* Reading and writing */
QSTORE_AVAILABLE_IN_ALL
QStoreResult      *qstore_replica_query                  (QStoreReplica             *self,
                                                          const char                *sql,
                                                          GVariant                  *params,
                                                          GError                   **error);
QSTORE_AVAILABLE_IN_ALL
QStoreReplicaTxn  *qstore_replica_begin_write            (QStoreReplica             *self,
                                                          GError                   **error);
QSTORE_AVAILABLE_IN_ALL
guint64            qstore_replica_get_write_out_step     (QStoreReplica             *self);
QSTORE_AVAILABLE_IN_ALL
gboolean           qstore_replica_set_write_out_step     (QStoreReplica             *self,
                                                          guint64                    n_bytes,
                                                          GError                   **error);

/* Schema and maintenance */
QSTORE_AVAILABLE_IN_ALL
gboolean           qstore_replica_exec_ddl               (QStoreReplica             *self,
                                                          const char                *sql,
                                                          GError                   **error);
QSTORE_AVAILABLE_IN_ALL
GVariant          *qstore_replica_exec_ddl_with_marker   (QStoreReplica             *self,
                                                          const char                *sql,
                                                          const char                *marker_key,
                                                          GError                   **error);
QSTORE_AVAILABLE_IN_ALL
GVariant          *qstore_replica_exec_ddl_with_marker_full (QStoreReplica          *self,
                                                          const char                *sql,
                                                          const char                *marker_key,
                                                          QStoreReplicaDdlStepFunc   step_func,
                                                          gpointer                   user_data,
                                                          GError                   **error);
QSTORE_AVAILABLE_IN_ALL
GVariant          *qstore_replica_get_marker             (QStoreReplica             *self,
                                                          const char                *marker_key,
                                                          GError                   **error);
QSTORE_AVAILABLE_IN_ALL
GVariant          *qstore_replica_foreign_key_audit      (QStoreReplica             *self,
                                                          guint                      max_rows,
                                                          GError                   **error);
QSTORE_AVAILABLE_IN_ALL
GVariant          *qstore_replica_maintain               (QStoreReplica             *self,
                                                          GError                   **error);
QSTORE_AVAILABLE_IN_ALL
GVariant          *qstore_replica_checkpoint             (QStoreReplica             *self,
                                                          GError                   **error);

G_END_DECLS
