/* qstore-change-hub-private.h: a database's change log and subscribers
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "qstore-change-log-private.h"
#include "qstore-router-private.h"

G_BEGIN_DECLS

/* What every database gets from this layer: the durable change log, kept
 * when `PRAGMA qstore.change_log` is set, and its change feeds. */
extern const QStoreDatabaseExtension qstore_changes_extension;

/* PRAGMA qstore.change_log [= N] */
gboolean qstore_change_hub_log_setting (QStoreDatabase   *db,
                                        QStoreStatement  *statement,
                                        QStoreResult    **result,
                                        GError          **error);

G_END_DECLS
