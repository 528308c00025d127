/* qstore-inspector-window.h: the main window
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <adwaita.h>

#include "qstore-inspector-catalog-page.h"
#include "qstore-inspector-contents.h"
#include "qstore-inspector-data-page.h"
#include "qstore-inspector-events-page.h"
#include "qstore-inspector-monitor.h"
#include "qstore-inspector-stale-page.h"
#include "qstore-inspector-staging-page.h"

G_BEGIN_DECLS

#define QSTORE_INSPECTOR_TYPE_WINDOW (qstore_inspector_window_get_type ())
G_DECLARE_FINAL_TYPE (QStoreInspectorWindow, qstore_inspector_window, QSTORE_INSPECTOR, WINDOW, AdwApplicationWindow)

QStoreInspectorWindow      *qstore_inspector_window_new              (AdwApplication        *application);
void                        qstore_inspector_window_open_uri         (QStoreInspectorWindow *self,
                                                                      const char            *uri);
void                        qstore_inspector_window_refresh          (QStoreInspectorWindow *self);
void                        qstore_inspector_window_release_store    (QStoreInspectorWindow *self);
void                        qstore_inspector_window_show_page        (QStoreInspectorWindow *self,
                                                                      const char            *name);
const char                 *qstore_inspector_window_get_page         (QStoreInspectorWindow *self);
const char                 *qstore_inspector_window_get_state        (QStoreInspectorWindow *self);
gboolean                    qstore_inspector_window_is_busy          (QStoreInspectorWindow *self);
const char                 *qstore_inspector_window_get_error        (QStoreInspectorWindow *self);
const char                 *qstore_inspector_window_get_error_details (QStoreInspectorWindow *self);
guint                       qstore_inspector_window_get_n_loads      (QStoreInspectorWindow *self);
gboolean                    qstore_inspector_window_get_folded       (QStoreInspectorWindow *self);
GtkWidget                  *qstore_inspector_window_get_back_button  (QStoreInspectorWindow *self);
QStoreInspectorMonitor     *qstore_inspector_window_get_monitor      (QStoreInspectorWindow *self);
QStoreInspectorContents    *qstore_inspector_window_get_contents     (QStoreInspectorWindow *self);
QStoreInspectorCatalogPage *qstore_inspector_window_get_catalog_page (QStoreInspectorWindow *self);
QStoreInspectorStalePage   *qstore_inspector_window_get_stale_page   (QStoreInspectorWindow *self);
QStoreInspectorDataPage    *qstore_inspector_window_get_data_page    (QStoreInspectorWindow *self);
QStoreInspectorStagingPage *qstore_inspector_window_get_staging_page (QStoreInspectorWindow *self);
QStoreInspectorEventsPage  *qstore_inspector_window_get_events_page  (QStoreInspectorWindow *self);
void                        qstore_inspector_window_set_settings     (QStoreInspectorWindow *self,
                                                                      GSettings             *settings);

G_END_DECLS
