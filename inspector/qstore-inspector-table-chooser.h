/* qstore-inspector-table-chooser.h: which table or view the data page shows
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <adwaita.h>

#include "qstore-inspector-contents.h"

G_BEGIN_DECLS

#define QSTORE_INSPECTOR_TYPE_TABLE_CHOOSER (qstore_inspector_table_chooser_get_type ())
G_DECLARE_FINAL_TYPE (QStoreInspectorTableChooser, qstore_inspector_table_chooser, QSTORE_INSPECTOR, TABLE_CHOOSER, AdwBin)

guint       qstore_inspector_table_chooser_set_contents (QStoreInspectorTableChooser  *self,
                                                         QStoreInspectorContents      *contents);
gboolean    qstore_inspector_table_chooser_locate       (QStoreInspectorTableChooser  *self,
                                                         guint                         position,
                                                         QStoreCatalogKeyKind         *kind,
                                                         const char                  **name);
int         qstore_inspector_table_chooser_find         (QStoreInspectorTableChooser  *self,
                                                         QStoreCatalogKeyKind          kind,
                                                         const char                   *name);
void        qstore_inspector_table_chooser_set_shown    (QStoreInspectorTableChooser  *self,
                                                         const char                   *name);
GListModel *qstore_inspector_table_chooser_get_tables   (QStoreInspectorTableChooser  *self);
GListModel *qstore_inspector_table_chooser_get_materialized_views (QStoreInspectorTableChooser *self);
GListModel *qstore_inspector_table_chooser_get_views    (QStoreInspectorTableChooser  *self);
GListModel *qstore_inspector_table_chooser_get_labels   (QStoreInspectorTableChooser  *self);
GListModel *qstore_inspector_table_chooser_get_found    (QStoreInspectorTableChooser  *self);
GtkWidget  *qstore_inspector_table_chooser_get_part     (QStoreInspectorTableChooser  *self,
                                                         const char                   *part);

G_END_DECLS
