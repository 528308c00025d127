/* qstore-result.h: the rows a query returned
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(QSTORE_INSIDE) && !defined(QSTORE_COMPILATION)
# error "Only <qstore.h> can be included directly."
#endif

#include <gio/gio.h>

#include "qstore-version-macros.h"

G_BEGIN_DECLS

/**
 * QStoreSqlType:
 * @QSTORE_SQL_TYPE_NULL: SQL NULL
 * @QSTORE_SQL_TYPE_INTEGER: a 64-bit signed integer
 * @QSTORE_SQL_TYPE_REAL: a double
 * @QSTORE_SQL_TYPE_TEXT: UTF-8 text
 * @QSTORE_SQL_TYPE_BLOB: bytes
 *
 * The type of one value of a [class@Result], as SQLite's `typeof()` names
 * it.
 */
typedef enum /*< underscore_name=qstore_sql_type >*/
{
  QSTORE_SQL_TYPE_NULL,
  QSTORE_SQL_TYPE_INTEGER,
  QSTORE_SQL_TYPE_REAL,
  QSTORE_SQL_TYPE_TEXT,
  QSTORE_SQL_TYPE_BLOB,
} QStoreSqlType;

#define QSTORE_TYPE_ROW (qstore_row_get_type ())
#define QSTORE_TYPE_RESULT (qstore_result_get_type ())

QSTORE_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (QStoreRow, qstore_row, QSTORE, ROW, GObject)

QSTORE_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (QStoreResult, qstore_result, QSTORE, RESULT, GObject)

QSTORE_AVAILABLE_IN_ALL
GVariant     *qstore_row_get_values            (QStoreRow    *self);
QSTORE_AVAILABLE_IN_ALL
GVariant     *qstore_row_get_value             (QStoreRow    *self,
                                                guint         column);

QSTORE_AVAILABLE_IN_ALL
guint         qstore_result_get_n_columns      (QStoreResult *self);
QSTORE_AVAILABLE_IN_ALL
const char   *qstore_result_get_column_name    (QStoreResult *self,
                                                guint         column);
QSTORE_AVAILABLE_IN_ALL
const char   *qstore_result_get_column_type    (QStoreResult *self,
                                                guint         column);
QSTORE_AVAILABLE_IN_ALL
guint         qstore_result_get_n_rows         (QStoreResult *self);
QSTORE_AVAILABLE_IN_ALL
GVariant     *qstore_result_get_row            (QStoreResult *self,
                                                guint         row);
QSTORE_AVAILABLE_IN_ALL
GVariant     *qstore_result_get_value          (QStoreResult *self,
                                                guint         row,
                                                guint         column);
QSTORE_AVAILABLE_IN_ALL
QStoreSqlType qstore_result_get_value_type     (QStoreResult *self,
                                                guint         row,
                                                guint         column);
QSTORE_AVAILABLE_IN_ALL
const guint8 *qstore_result_get_row_types     (QStoreResult *self,
                                                guint         row,
                                                gsize        *n_columns);
QSTORE_AVAILABLE_IN_ALL
gint64        qstore_result_get_int64          (QStoreResult *self,
                                                guint         row,
                                                guint         column);
QSTORE_AVAILABLE_IN_ALL
double        qstore_result_get_double         (QStoreResult *self,
                                                guint         row,
                                                guint         column);
QSTORE_AVAILABLE_IN_ALL
const char   *qstore_result_get_text           (QStoreResult *self,
                                                guint         row,
                                                guint         column);
QSTORE_AVAILABLE_IN_ALL
GBytes       *qstore_result_get_blob           (QStoreResult *self,
                                                guint         row,
                                                guint         column);
QSTORE_AVAILABLE_IN_ALL
gint64        qstore_result_get_changes        (QStoreResult *self);
QSTORE_AVAILABLE_IN_ALL
gint64        qstore_result_get_last_insert_rowid (QStoreResult *self);

G_END_DECLS
