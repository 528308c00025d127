/* qstore-replica-observation.h: what each process says it holds, where all can read it
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(QSTORE_INSIDE) && !defined(QSTORE_COMPILATION)
# error "Only <qstore.h> can be included directly."
#endif

#include <gio/gio.h>

#include "qstore-database.h"

G_BEGIN_DECLS

/**
 * QSTORE_REPLICA_OBSERVATIONS_TABLE:
 *
 * The table of a database that holds its replica observations.
 */
#define QSTORE_REPLICA_OBSERVATIONS_TABLE "_qstore_replica_observations"

/**
 * QSTORE_REPLICA_OBSERVATION_MAX_PAYLOAD:
 *
 * The largest payload of an observation, in bytes.
 */
#define QSTORE_REPLICA_OBSERVATION_MAX_PAYLOAD 4096

#define QSTORE_TYPE_REPLICA_OBSERVATION (qstore_replica_observation_get_type ())

QSTORE_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (QStoreReplicaObservation, qstore_replica_observation, QSTORE, REPLICA_OBSERVATION, GObject)

QSTORE_AVAILABLE_IN_ALL
gboolean    qstore_database_observe_replica              (QStoreDatabase            *self,
                                                          const char                *replica_id,
                                                          const char                *kind,
                                                          const char                *payload,
                                                          GError                   **error);
QSTORE_AVAILABLE_IN_ALL
GListModel *qstore_replica_observation_list              (QStoreProvider            *provider,
                                                          GError                   **error);
QSTORE_AVAILABLE_IN_ALL
const char *qstore_replica_observation_get_replica_id    (QStoreReplicaObservation  *self);
QSTORE_AVAILABLE_IN_ALL
const char *qstore_replica_observation_get_kind          (QStoreReplicaObservation  *self);
QSTORE_AVAILABLE_IN_ALL
const char *qstore_replica_observation_get_payload       (QStoreReplicaObservation  *self);
QSTORE_AVAILABLE_IN_ALL
gint64      qstore_replica_observation_get_updated_at    (QStoreReplicaObservation  *self);
QSTORE_AVAILABLE_IN_ALL
gint64      qstore_replica_observation_get_staleness_ms  (QStoreReplicaObservation  *self);

G_END_DECLS
