/* qstore-mview-private.h: materialized views in a database
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "qstore-materialized-view.h"
#include "qstore-router-private.h"

G_BEGIN_DECLS

/* What every database gets from this layer: the views' state, read back
 * at open, maintained around DDL, and the clean-shutdown marker. */
extern const QStoreDatabaseExtension qstore_mview_extension;

/* CREATE, DROP and REFRESH MATERIALIZED VIEW, and PRAGMA
 * materialized_view_rebuild_row_threshold. */
gboolean  qstore_mview_create             (QStoreDatabase   *db,
                                           QStoreStatement  *statement,
                                           QStoreResult    **result,
                                           GError          **error);
gboolean  qstore_mview_drop               (QStoreDatabase   *db,
                                           QStoreStatement  *statement,
                                           QStoreResult    **result,
                                           GError          **error);
gboolean  qstore_mview_refresh            (QStoreDatabase   *db,
                                           QStoreStatement  *statement,
                                           QStoreResult    **result,
                                           GError          **error);
gboolean  qstore_mview_threshold_setting  (QStoreDatabase   *db,
                                           QStoreStatement  *statement,
                                           QStoreResult    **result,
                                           GError          **error);

#define QSTORE_MVIEW_THRESHOLD_SETTING "materialized_view_rebuild_row_threshold"

G_END_DECLS
