/* qstore-inspector-event.h: one event a server sent
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <gio/gio.h>
#include <qstore.h>

G_BEGIN_DECLS

typedef enum
{
  QSTORE_INSPECTOR_EVENT_COMMITTED,
  QSTORE_INSPECTOR_EVENT_HYDRATED,
  QSTORE_INSPECTOR_EVENT_CHANGED,
  QSTORE_INSPECTOR_EVENT_PROGRESSED,
  QSTORE_INSPECTOR_EVENT_FAULTED,
  QSTORE_INSPECTOR_EVENT_GAP,
  QSTORE_INSPECTOR_N_EVENT_KINDS
} QStoreInspectorEventKind;

#define QSTORE_INSPECTOR_TYPE_EVENT (qstore_inspector_event_get_type ())
G_DECLARE_FINAL_TYPE (QStoreInspectorEvent, qstore_inspector_event, QSTORE_INSPECTOR, EVENT, GObject)

QStoreInspectorEvent     *qstore_inspector_event_new_from_signal (const char            *signal_name,
                                                                  GVariant              *parameters,
                                                                  gint64                 received);
QStoreInspectorEvent     *qstore_inspector_event_new_committed   (QStoreChangeSet       *change_set);
QStoreInspectorEvent     *qstore_inspector_event_new_gap         (const char            *reason,
                                                                  gint64                 down_for_ms,
                                                                  gint64                 received);
QStoreInspectorEventKind  qstore_inspector_event_get_kind        (QStoreInspectorEvent  *self);
const char               *qstore_inspector_event_kind_name       (QStoreInspectorEventKind kind);
const char               *qstore_inspector_event_kind_label      (QStoreInspectorEventKind kind);
gint64                    qstore_inspector_event_get_time        (QStoreInspectorEvent  *self);
char                     *qstore_inspector_event_format_time     (QStoreInspectorEvent  *self);
guint64                   qstore_inspector_event_get_tx          (QStoreInspectorEvent  *self);
gboolean                  qstore_inspector_event_has_query       (QStoreInspectorEvent  *self);
guint64                   qstore_inspector_event_get_query       (QStoreInspectorEvent  *self);
guint                     qstore_inspector_event_get_n_rows      (QStoreInspectorEvent  *self);
const char * const       *qstore_inspector_event_get_tables      (QStoreInspectorEvent  *self);
gboolean                  qstore_inspector_event_touches_table   (QStoreInspectorEvent  *self,
                                                                  const char            *needle);
char                     *qstore_inspector_event_describe        (QStoreInspectorEvent  *self);
char                     *qstore_inspector_event_describe_rows   (QStoreInspectorEvent  *self);
char                     *qstore_inspector_event_to_json         (QStoreInspectorEvent  *self);

G_END_DECLS
