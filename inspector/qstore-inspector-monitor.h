/* qstore-inspector-monitor.h: notices when another process writes a store
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

#define QSTORE_INSPECTOR_TYPE_MONITOR (qstore_inspector_monitor_get_type ())
G_DECLARE_FINAL_TYPE (QStoreInspectorMonitor, qstore_inspector_monitor, QSTORE_INSPECTOR, MONITOR, GObject)

QStoreInspectorMonitor *qstore_inspector_monitor_new          (const char             *uri,
                                                               GError                **error);
const char             *qstore_inspector_monitor_get_uri      (QStoreInspectorMonitor *self);
void                    qstore_inspector_monitor_set_interval (QStoreInspectorMonitor *self,
                                                               guint                   ms);
guint                   qstore_inspector_monitor_get_n_changes (QStoreInspectorMonitor *self);

G_END_DECLS
