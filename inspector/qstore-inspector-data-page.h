/* qstore-inspector-data-page.h: the rows of a table or view
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <adwaita.h>

#include "qstore-inspector-contents.h"
#include "qstore-inspector-row-model.h"

G_BEGIN_DECLS

#define QSTORE_INSPECTOR_TYPE_DATA_PAGE (qstore_inspector_data_page_get_type ())
G_DECLARE_FINAL_TYPE (QStoreInspectorDataPage, qstore_inspector_data_page, QSTORE_INSPECTOR, DATA_PAGE, AdwBin)

void                     qstore_inspector_data_page_set_contents  (QStoreInspectorDataPage *self,
                                                                   QStoreInspectorContents *contents);
gboolean                 qstore_inspector_data_page_select_table  (QStoreInspectorDataPage *self,
                                                                   const char              *name);
const char              *qstore_inspector_data_page_get_table     (QStoreInspectorDataPage *self);
QStoreInspectorRowModel *qstore_inspector_data_page_get_model     (QStoreInspectorDataPage *self);
GListModel              *qstore_inspector_data_page_get_tables    (QStoreInspectorDataPage *self);
GListModel              *qstore_inspector_data_page_get_materialized_views (QStoreInspectorDataPage *self);
GListModel              *qstore_inspector_data_page_get_views     (QStoreInspectorDataPage *self);
GListModel              *qstore_inspector_data_page_get_labels    (QStoreInspectorDataPage *self);
guint                    qstore_inspector_data_page_get_n_columns (QStoreInspectorDataPage *self);
const char              *qstore_inspector_data_page_get_error     (QStoreInspectorDataPage *self);
const char              *qstore_inspector_data_page_get_state     (QStoreInspectorDataPage *self);
GtkSelectionModel       *qstore_inspector_data_page_get_selection (QStoreInspectorDataPage *self);
GListModel              *qstore_inspector_data_page_get_chooser_model (QStoreInspectorDataPage *self);
guint                    qstore_inspector_data_page_get_n_copies  (QStoreInspectorDataPage *self);
GtkWidget               *qstore_inspector_data_page_get_part      (QStoreInspectorDataPage *self,
                                                                   const char              *part);
GtkWindow               *qstore_inspector_data_page_show_row      (QStoreInspectorDataPage *self,
                                                                   guint                    position);
void                     qstore_inspector_data_page_popup_menu    (QStoreInspectorDataPage *self,
                                                                   guint                    position,
                                                                   int                      column,
                                                                   double                   x,
                                                                   double                   y);

G_END_DECLS
