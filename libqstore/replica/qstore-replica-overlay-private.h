/* qstore-replica-overlay-private.h: a provider that keeps its writes to itself
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "qstore-provider-private.h"

G_BEGIN_DECLS

/* A provider over another one that applies nothing to it: writes and
 * restructures (drops, renames) land in memory, and reads see them over
 * the other provider's stores. A DDL batch runs on a database opened
 * over it; qstore_replica_overlay_flush() then hands the net effect to
 * the provider below as one all-or-nothing restructure, so a batch of
 * statements, each of which commits on its own, commits as one. */

#define QSTORE_TYPE_REPLICA_OVERLAY (qstore_replica_overlay_get_type ())
G_DECLARE_FINAL_TYPE (QStoreReplicaOverlay, qstore_replica_overlay, QSTORE, REPLICA_OVERLAY, GObject)

QStoreProvider *qstore_replica_overlay_new   (QStoreProvider        *base);
gboolean        qstore_replica_overlay_flush (QStoreReplicaOverlay  *self,
                                              GError               **error);

G_END_DECLS
