/* qstore-inspector-row.h: one row of a table or view, and its values as text
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <gio/gio.h>
#include <json-glib/json-glib.h>
#include <qstore.h>

G_BEGIN_DECLS

#define QSTORE_INSPECTOR_TYPE_ROW (qstore_inspector_row_get_type ())
G_DECLARE_FINAL_TYPE (QStoreInspectorRow, qstore_inspector_row, QSTORE_INSPECTOR, ROW, GObject)

QStoreInspectorRow *qstore_inspector_row_new           (guint               position);
void                qstore_inspector_row_fill          (QStoreInspectorRow *self,
                                                        GVariant           *values,
                                                        const char         *error);
guint               qstore_inspector_row_get_position  (QStoreInspectorRow *self);
gboolean            qstore_inspector_row_is_loaded     (QStoreInspectorRow *self);
GVariant           *qstore_inspector_row_get_values    (QStoreInspectorRow *self);
const char         *qstore_inspector_row_get_error     (QStoreInspectorRow *self);
GVariant           *qstore_inspector_row_get_value     (QStoreInspectorRow *self,
                                                        guint               column);

char               *qstore_inspector_format_value      (GVariant           *value,
                                                        gboolean           *is_null,
                                                        gboolean           *is_number);
const char         *qstore_inspector_value_type_name   (GVariant           *value);
char               *qstore_inspector_value_to_text     (GVariant           *value);
JsonNode           *qstore_inspector_value_to_json     (GVariant           *value);
char               *qstore_inspector_hex_dump          (GBytes             *bytes,
                                                        gsize               max_bytes);
char               *qstore_inspector_rows_to_text      (GPtrArray          *rows,
                                                        int                 column);
char               *qstore_inspector_rows_to_json      (GPtrArray          *rows,
                                                        const char * const *column_names,
                                                        gboolean            as_array);

G_END_DECLS
