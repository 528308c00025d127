/* qstore-inspector-row-model.h: the rows of a table or view, fetched page by page
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <gio/gio.h>
#include <qstore.h>

#include "qstore-inspector-row.h"

G_BEGIN_DECLS

#define QSTORE_INSPECTOR_TYPE_ROW_MODEL (qstore_inspector_row_model_get_type ())
G_DECLARE_FINAL_TYPE (QStoreInspectorRowModel, qstore_inspector_row_model, QSTORE_INSPECTOR, ROW_MODEL, GObject)

/* How many rows one fetch reads. */
#define QSTORE_INSPECTOR_ROW_PAGE_SIZE 200

QStoreInspectorRowModel *qstore_inspector_row_model_new         (const char              *uri,
                                                                 QStoreProvider          *provider,
                                                                 const char              *schema,
                                                                 const char              *table,
                                                                 gint64                   row_count_hint,
                                                                 GError                 **error);
QStoreInspectorRowModel *qstore_inspector_row_model_new_for_view (const char             *uri,
                                                                  const char             *schema,
                                                                  const char             *view,
                                                                  GError                **error);
const char              *qstore_inspector_row_model_get_schema  (QStoreInspectorRowModel *self);
const char              *qstore_inspector_row_model_get_table   (QStoreInspectorRowModel *self);
gboolean                 qstore_inspector_row_model_is_view     (QStoreInspectorRowModel *self);
gboolean                 qstore_inspector_row_model_is_busy     (QStoreInspectorRowModel *self);
guint                    qstore_inspector_row_model_get_n_loaded_pages (QStoreInspectorRowModel *self);
gboolean                 qstore_inspector_row_model_holds_snapshot (QStoreInspectorRowModel *self);
void                     qstore_inspector_row_model_set_snapshot_idle (QStoreInspectorRowModel *self,
                                                                       guint                    ms);
const GError            *qstore_inspector_row_model_get_error   (QStoreInspectorRowModel *self);
const char * const      *qstore_inspector_row_model_get_column_names (QStoreInspectorRowModel *self);

void                     qstore_inspector_row_model_set_order   (QStoreInspectorRowModel *self,
                                                                 const char              *column,
                                                                 gboolean                 descending);
const char              *qstore_inspector_row_model_get_order   (QStoreInspectorRowModel *self,
                                                                 gboolean                *descending);
void                     qstore_inspector_row_model_set_search  (QStoreInspectorRowModel *self,
                                                                 const char              *text,
                                                                 const char * const      *columns);
const char              *qstore_inspector_row_model_get_search  (QStoreInspectorRowModel *self);
gboolean                 qstore_inspector_row_model_uses_sql    (QStoreInspectorRowModel *self);
gboolean                 qstore_inspector_row_model_is_counted  (QStoreInspectorRowModel *self);
void                     qstore_inspector_row_model_reload      (QStoreInspectorRowModel *self,
                                                                 gint64                   row_count_hint);

G_END_DECLS
