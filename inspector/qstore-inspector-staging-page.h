/* qstore-inspector-staging-page.h: imports that did not finish, and the sweep
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <adwaita.h>

#include "qstore-inspector-contents.h"

G_BEGIN_DECLS

#define QSTORE_INSPECTOR_TYPE_STAGING_PAGE (qstore_inspector_staging_page_get_type ())
G_DECLARE_FINAL_TYPE (QStoreInspectorStagingPage, qstore_inspector_staging_page, QSTORE_INSPECTOR, STAGING_PAGE, AdwBin)

void        qstore_inspector_staging_page_set_contents      (QStoreInspectorStagingPage *self,
                                                             QStoreInspectorContents    *contents);
GListModel *qstore_inspector_staging_page_get_model         (QStoreInspectorStagingPage *self);
gboolean    qstore_inspector_staging_page_can_sweep         (QStoreInspectorStagingPage *self);
GtkWindow  *qstore_inspector_staging_page_sweep             (QStoreInspectorStagingPage *self);
gboolean    qstore_inspector_staging_page_is_sweeping       (QStoreInspectorStagingPage *self);
const char *qstore_inspector_staging_page_get_sweep_error   (QStoreInspectorStagingPage *self);
const char *qstore_inspector_staging_page_get_sweep_details (QStoreInspectorStagingPage *self);
guint       qstore_inspector_staging_page_get_n_swept       (QStoreInspectorStagingPage *self);
char       *qstore_inspector_describe_staging_run           (QStoreStagingRun           *run,
                                                             gint64                      stale_after_ms);
char       *qstore_inspector_format_duration                (gint64                      ms);

G_END_DECLS
