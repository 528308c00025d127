/* qstore-replica-error.h: the QSTORE_REPLICA_ERROR domain
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(QSTORE_INSIDE) && !defined(QSTORE_COMPILATION)
# error "Only <qstore.h> can be included directly."
#endif

#include <glib.h>

#include "qstore-version-macros.h"

G_BEGIN_DECLS

#define QSTORE_REPLICA_ERROR (qstore_replica_error_quark ())

/**
 * QStoreReplicaError:
 * @QSTORE_REPLICA_ERROR_READ_REJECTED: a one-shot read of a live query is
 *   refused while the open write transaction streams: the workers' views
 *   hold rows nobody committed. Retry after the commit (or poll
 *   [method@Replica.view_is_speculative])
 * @QSTORE_REPLICA_ERROR_SPECULATIVE: a live query cannot be registered
 *   while the open write transaction streams: its first rows would hold
 *   uncommitted ones. Register it after the commit
 * @QSTORE_REPLICA_ERROR_WRITE_OPEN: a write transaction is open: commit
 *   or roll it back first
 * @QSTORE_REPLICA_ERROR_DEGRADED: the worker that would host the query
 *   crashed more often than its restart budget allows and was retired;
 *   queries of that shard (ids with the same remainder by the number of
 *   workers) are refused until the replica is opened again
 * @QSTORE_REPLICA_ERROR_BUSY: called from a signal handler that the
 *   replica ran while it waited for its consumer to make room; call it
 *   once the handler returned (from an idle callback, for instance)
 * @QSTORE_REPLICA_ERROR_UNSUPPORTED_SCHEMA: DDL would make something the
 *   replica cannot follow (a TEMP table or view lives on the writer's
 *   connection only, out of the workers' sight); nothing of it was
 *   applied
 *
 * Why a replica refused an operation.
 */
typedef enum /*< underscore_name=qstore_replica_error >*/
{
  QSTORE_REPLICA_ERROR_READ_REJECTED,
  QSTORE_REPLICA_ERROR_SPECULATIVE,
  QSTORE_REPLICA_ERROR_WRITE_OPEN,
  QSTORE_REPLICA_ERROR_DEGRADED,
  QSTORE_REPLICA_ERROR_BUSY,
  QSTORE_REPLICA_ERROR_UNSUPPORTED_SCHEMA,
} QStoreReplicaError;

QSTORE_AVAILABLE_IN_ALL
GQuark qstore_replica_error_quark (void);

G_END_DECLS
