/* qstore-inspector-catalog-page.h: tables, views and their definitions
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <adwaita.h>

#include "qstore-inspector-contents.h"

G_BEGIN_DECLS

#define QSTORE_INSPECTOR_TYPE_CATALOG_PAGE (qstore_inspector_catalog_page_get_type ())
G_DECLARE_FINAL_TYPE (QStoreInspectorCatalogPage, qstore_inspector_catalog_page, QSTORE_INSPECTOR, CATALOG_PAGE, AdwBin)

void                qstore_inspector_catalog_page_set_contents   (QStoreInspectorCatalogPage *self,
                                                                  QStoreInspectorContents    *contents);
GListModel         *qstore_inspector_catalog_page_get_model      (QStoreInspectorCatalogPage *self);
QStoreCatalogEntry *qstore_inspector_catalog_page_get_selected   (QStoreInspectorCatalogPage *self);
gboolean            qstore_inspector_catalog_page_select_name    (QStoreInspectorCatalogPage *self,
                                                                  const char                 *name);
const char * const *qstore_inspector_catalog_page_get_detail_lines (QStoreInspectorCatalogPage *self);
const char         *qstore_inspector_catalog_page_section_of     (QStoreCatalogEntry         *entry);
char               *qstore_inspector_catalog_page_describe_entry (QStoreInspectorContents    *contents,
                                                                  QStoreCatalogEntry         *entry);
gboolean            qstore_inspector_catalog_page_can_go_back    (QStoreInspectorCatalogPage *self);
void                qstore_inspector_catalog_page_go_back        (QStoreInspectorCatalogPage *self);
gboolean            qstore_inspector_catalog_page_get_folded     (QStoreInspectorCatalogPage *self);
GtkWidget          *qstore_inspector_catalog_page_get_visible_pane (QStoreInspectorCatalogPage *self);
GtkWidget          *qstore_inspector_catalog_page_get_title_label (QStoreInspectorCatalogPage *self);

G_END_DECLS
