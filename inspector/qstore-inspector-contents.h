/* qstore-inspector-contents.h: everything the pages show, read in one go
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <gio/gio.h>
#include <qstore.h>

G_BEGIN_DECLS

#define QSTORE_INSPECTOR_TYPE_CONTENTS (qstore_inspector_contents_get_type ())
G_DECLARE_FINAL_TYPE (QStoreInspectorContents, qstore_inspector_contents, QSTORE_INSPECTOR, CONTENTS, GObject)

char                    *qstore_inspector_uri_for_path              (const char               *path,
                                                                     GError                  **error);
char                    *qstore_inspector_uri_for_argument          (const char               *argument,
                                                                     GError                  **error);

void                     qstore_inspector_contents_load_async       (const char               *uri,
                                                                     QStoreProvider           *provider,
                                                                     GCancellable             *cancellable,
                                                                     GAsyncReadyCallback       callback,
                                                                     gpointer                  user_data);
QStoreInspectorContents *qstore_inspector_contents_load_finish      (GAsyncResult             *result,
                                                                     GError                  **error);
QStoreInspectorContents *qstore_inspector_contents_load             (const char               *uri,
                                                                     QStoreProvider           *provider,
                                                                     GError                  **error);

const char              *qstore_inspector_contents_get_uri          (QStoreInspectorContents  *self);
QStoreProvider          *qstore_inspector_contents_get_provider     (QStoreInspectorContents  *self);
GListModel              *qstore_inspector_contents_get_entries      (QStoreInspectorContents  *self);
QStoreStaleReport       *qstore_inspector_contents_get_stale_report (QStoreInspectorContents  *self);
gint64                   qstore_inspector_contents_get_row_count    (QStoreInspectorContents  *self,
                                                                     const char               *schema,
                                                                     const char               *name);
QStoreCatalogEntry      *qstore_inspector_contents_lookup_entry     (QStoreInspectorContents  *self,
                                                                     QStoreCatalogKeyKind      kind,
                                                                     const char               *schema,
                                                                     const char               *name);
QStoreMaterializedView  *qstore_inspector_contents_lookup_materialized_view (QStoreInspectorContents  *self,
                                                                              const char               *schema,
                                                                              const char               *name,
                                                                              const char              **error_message);
GDateTime               *qstore_inspector_contents_get_loaded_at    (QStoreInspectorContents  *self);
void                     qstore_inspector_contents_count_rows       (QStoreInspectorContents  *self,
                                                                     GCancellable             *cancellable);
QStoreStagingLeftovers  *qstore_inspector_contents_get_staging      (QStoreInspectorContents  *self,
                                                                     const char              **error_message);
gboolean                 qstore_inspector_contents_is_counting      (QStoreInspectorContents  *self,
                                                                     const char               *schema,
                                                                     const char               *name);

G_END_DECLS
