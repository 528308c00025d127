/* qstore-prepared-statement.h: one SQL statement, run again and again
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(QSTORE_INSIDE) && !defined(QSTORE_COMPILATION)
# error "Only <qstore.h> can be included directly."
#endif

#include "qstore-database.h"

G_BEGIN_DECLS

#define QSTORE_TYPE_PREPARED_STATEMENT (qstore_prepared_statement_get_type ())

QSTORE_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (QStorePreparedStatement, qstore_prepared_statement, QSTORE,
                      PREPARED_STATEMENT, GObject)

QSTORE_AVAILABLE_IN_ALL
QStorePreparedStatement *qstore_database_prepare           (QStoreDatabase           *self,
                                                            const char               *sql,
                                                            GError                  **error);

QSTORE_AVAILABLE_IN_ALL
const char   *qstore_prepared_statement_get_sql            (QStorePreparedStatement  *self);
QSTORE_AVAILABLE_IN_ALL
guint         qstore_prepared_statement_get_n_parameters   (QStorePreparedStatement  *self);
QSTORE_AVAILABLE_IN_ALL
const char   *qstore_prepared_statement_get_parameter_name (QStorePreparedStatement  *self,
                                                            guint                     position);
QSTORE_AVAILABLE_IN_ALL
guint         qstore_prepared_statement_get_parameter_position (QStorePreparedStatement  *self,
                                                                const char               *name);

QSTORE_AVAILABLE_IN_ALL
gboolean      qstore_prepared_statement_bind_null          (QStorePreparedStatement  *self,
                                                            guint                     position,
                                                            GError                  **error);
QSTORE_AVAILABLE_IN_ALL
gboolean      qstore_prepared_statement_bind_int64         (QStorePreparedStatement  *self,
                                                            guint                     position,
                                                            gint64                    value,
                                                            GError                  **error);
QSTORE_AVAILABLE_IN_ALL
gboolean      qstore_prepared_statement_bind_double        (QStorePreparedStatement  *self,
                                                            guint                     position,
                                                            double                    value,
                                                            GError                  **error);
QSTORE_AVAILABLE_IN_ALL
gboolean      qstore_prepared_statement_bind_text          (QStorePreparedStatement  *self,
                                                            guint                     position,
                                                            const char               *value,
                                                            GError                  **error);
QSTORE_AVAILABLE_IN_ALL
gboolean      qstore_prepared_statement_bind_blob          (QStorePreparedStatement  *self,
                                                            guint                     position,
                                                            GBytes                   *value,
                                                            GError                  **error);
QSTORE_AVAILABLE_IN_ALL
gboolean      qstore_prepared_statement_bind_value         (QStorePreparedStatement  *self,
                                                            guint                     position,
                                                            GVariant                 *value,
                                                            GError                  **error);
QSTORE_AVAILABLE_IN_ALL
void          qstore_prepared_statement_clear_bindings     (QStorePreparedStatement  *self);

QSTORE_AVAILABLE_IN_ALL
QStoreResult *qstore_prepared_statement_query              (QStorePreparedStatement  *self,
                                                            GError                  **error);
QSTORE_AVAILABLE_IN_ALL
gint64        qstore_prepared_statement_execute            (QStorePreparedStatement  *self,
                                                            GError                  **error);

QSTORE_AVAILABLE_IN_ALL
gboolean      qstore_prepared_statement_step               (QStorePreparedStatement  *self,
                                                            GError                  **error);
QSTORE_AVAILABLE_IN_ALL
void          qstore_prepared_statement_reset              (QStorePreparedStatement  *self);
QSTORE_AVAILABLE_IN_ALL
const guint8 *qstore_prepared_statement_get_row_types      (QStorePreparedStatement  *self,
                                                            gsize                    *n_columns);
QSTORE_AVAILABLE_IN_ALL
QStoreSqlType qstore_prepared_statement_get_value_type     (QStorePreparedStatement  *self,
                                                            guint                     column);
QSTORE_AVAILABLE_IN_ALL
GVariant     *qstore_prepared_statement_get_value          (QStorePreparedStatement  *self,
                                                            guint                     column);
QSTORE_AVAILABLE_IN_ALL
gint64        qstore_prepared_statement_get_int64          (QStorePreparedStatement  *self,
                                                            guint                     column);
QSTORE_AVAILABLE_IN_ALL
double        qstore_prepared_statement_get_double         (QStorePreparedStatement  *self,
                                                            guint                     column);
QSTORE_AVAILABLE_IN_ALL
const char   *qstore_prepared_statement_get_text           (QStorePreparedStatement  *self,
                                                            guint                     column);
QSTORE_AVAILABLE_IN_ALL
GBytes       *qstore_prepared_statement_get_blob           (QStorePreparedStatement  *self,
                                                            guint                     column);

G_END_DECLS
