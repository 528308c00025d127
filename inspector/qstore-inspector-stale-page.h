/* qstore-inspector-stale-page.h: the marker, the durable set and the verdicts
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <adwaita.h>

#include "qstore-inspector-contents.h"

G_BEGIN_DECLS

#define QSTORE_INSPECTOR_TYPE_STALE_PAGE (qstore_inspector_stale_page_get_type ())
G_DECLARE_FINAL_TYPE (QStoreInspectorStalePage, qstore_inspector_stale_page, QSTORE_INSPECTOR, STALE_PAGE, AdwBin)

void        qstore_inspector_stale_page_set_contents       (QStoreInspectorStalePage *self,
                                                            QStoreInspectorContents  *contents);
GListModel *qstore_inspector_stale_page_get_model          (QStoreInspectorStalePage *self);
const char *qstore_inspector_stale_page_get_marker_summary (QStoreInspectorStalePage *self);
const char *qstore_inspector_stale_page_get_set_summary    (QStoreInspectorStalePage *self);
char       *qstore_inspector_describe_verdict              (QStoreStaleView          *view);
gboolean    qstore_inspector_stale_page_show_view          (QStoreInspectorStalePage *self,
                                                            const char               *name);
const char *qstore_inspector_stale_page_get_highlighted    (QStoreInspectorStalePage *self);

G_END_DECLS
