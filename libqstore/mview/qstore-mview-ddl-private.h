/* qstore-mview-ddl-private.h: DDL of materialized views
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "qstore-mview-maintain-private.h"

G_BEGIN_DECLS

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

void qstore_mview_register_view (QStoreMViews *self,
                                 QStoreMView  *view);
gboolean qstore_mview_materialize (QStoreMViews  *self,
                                   QStoreMView   *view,
                                   gboolean       fresh,
                                   GError       **error);
void qstore_mview_hide_backing (QStoreMViews *self,
                                const char   *name);
QStoreMView *qstore_mview_view_from_definition (QStoreMViews  *self,
                                                const char    *name,
                                                const char    *definition,
                                                GError       **error);
gboolean qstore_mview_check_statement (QStoreDatabase   *db,
                                       QStoreStatement  *statement,
                                       GError          **error);
void qstore_mview_before_ddl (QStoreDatabase *db);
void qstore_mview_after_ddl (QStoreDatabase *db);

G_END_DECLS
