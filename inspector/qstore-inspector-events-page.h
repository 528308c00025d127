/* qstore-inspector-events-page.h: what a running server tells, live
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <adwaita.h>

G_BEGIN_DECLS

/* The events kept when nothing says otherwise (the max-events setting). */
#define QSTORE_INSPECTOR_DEFAULT_MAX_EVENTS 10000

/* What the page shows: no server, waiting for it, following it, or
 * the server went away (the page follows again when it returns). */
typedef enum
{
  QSTORE_INSPECTOR_EVENTS_NONE,
  QSTORE_INSPECTOR_EVENTS_WAITING,
  QSTORE_INSPECTOR_EVENTS_CONNECTED,
  QSTORE_INSPECTOR_EVENTS_GONE
} QStoreInspectorEventsState;

#define QSTORE_INSPECTOR_TYPE_EVENTS_PAGE (qstore_inspector_events_page_get_type ())
G_DECLARE_FINAL_TYPE (QStoreInspectorEventsPage, qstore_inspector_events_page, QSTORE_INSPECTOR, EVENTS_PAGE, AdwBin)

void                        qstore_inspector_events_page_set_server      (QStoreInspectorEventsPage *self,
                                                                          const char                *bus_name);
const char                 *qstore_inspector_events_page_get_server      (QStoreInspectorEventsPage *self);
void                        qstore_inspector_events_page_find_server     (QStoreInspectorEventsPage *self,
                                                                          const char                *store_uri);
QStoreInspectorEventsState  qstore_inspector_events_page_get_state       (QStoreInspectorEventsPage *self);
const char                 *qstore_inspector_events_page_get_status      (QStoreInspectorEventsPage *self);
GListModel                 *qstore_inspector_events_page_get_events      (QStoreInspectorEventsPage *self);
GListModel                 *qstore_inspector_events_page_get_shown       (QStoreInspectorEventsPage *self);
void                        qstore_inspector_events_page_set_paused      (QStoreInspectorEventsPage *self,
                                                                          gboolean                   paused);
guint                       qstore_inspector_events_page_get_n_held      (QStoreInspectorEventsPage *self);
void                        qstore_inspector_events_page_set_kind_filter (QStoreInspectorEventsPage *self,
                                                                          int                        kind);
void                        qstore_inspector_events_page_set_table_filter (QStoreInspectorEventsPage *self,
                                                                           const char                *text);
void                        qstore_inspector_events_page_select          (QStoreInspectorEventsPage *self,
                                                                          guint                      position);
const char                 *qstore_inspector_events_page_get_details     (QStoreInspectorEventsPage *self);
const char                 *qstore_inspector_events_page_get_detail_title (QStoreInspectorEventsPage *self);
gboolean                    qstore_inspector_events_page_is_following    (QStoreInspectorEventsPage *self);
gboolean                    qstore_inspector_events_page_export          (QStoreInspectorEventsPage *self,
                                                                          GFile                     *file,
                                                                          GError                   **error);
GtkWindow                  *qstore_inspector_events_page_connect_dialog  (QStoreInspectorEventsPage *self);
gboolean                    qstore_inspector_same_store                  (const char                *a,
                                                                          const char                *b);

G_END_DECLS
