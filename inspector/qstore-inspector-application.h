/* qstore-inspector-application.h: the qstore-inspector application
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <adwaita.h>

G_BEGIN_DECLS

#define QSTORE_INSPECTOR_APPLICATION_ID "org.qstore.Inspector"

#define QSTORE_INSPECTOR_TYPE_APPLICATION (qstore_inspector_application_get_type ())
G_DECLARE_FINAL_TYPE (QStoreInspectorApplication, qstore_inspector_application, QSTORE_INSPECTOR, APPLICATION, AdwApplication)

QStoreInspectorApplication *qstore_inspector_application_new          (void);
GSettings                  *qstore_inspector_application_get_settings (QStoreInspectorApplication *self);
void                        qstore_inspector_init_i18n                (void);

G_END_DECLS
