/* qstore-table.h: a table with a primary key, indexes and constraints
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(QSTORE_INSIDE) && !defined(QSTORE_COMPILATION)
# error "Only <qstore.h> can be included directly."
#endif

#include "qstore-check-report.h"
#include "qstore-coordinator.h"

G_BEGIN_DECLS

/**
 * QStoreConflict:
 * @QSTORE_CONFLICT_ABORT: fail; the statement's changes are undone (the default)
 * @QSTORE_CONFLICT_ROLLBACK: fail and roll the whole transaction back
 * @QSTORE_CONFLICT_FAIL: fail; earlier changes of the statement stay
 * @QSTORE_CONFLICT_IGNORE: skip the row silently
 * @QSTORE_CONFLICT_REPLACE: delete the rows in the way, then write
 *
 * What a write does when it would violate a UNIQUE or PRIMARY KEY
 * constraint (SQLite's `OR …` conflict clauses). NOT NULL and CHECK
 * violations always fail, except that IGNORE skips the row.
 */
typedef enum /*< underscore_name=qstore_conflict >*/
{
  QSTORE_CONFLICT_ABORT,
  QSTORE_CONFLICT_ROLLBACK,
  QSTORE_CONFLICT_FAIL,
  QSTORE_CONFLICT_IGNORE,
  QSTORE_CONFLICT_REPLACE,
} QStoreConflict;

#define QSTORE_TYPE_TABLE (qstore_table_get_type ())

QSTORE_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (QStoreTable, qstore_table, QSTORE, TABLE, GObject)

QSTORE_AVAILABLE_IN_ALL
const char        *qstore_table_get_schema_name  (QStoreTable     *self);
QSTORE_AVAILABLE_IN_ALL
const char        *qstore_table_get_name         (QStoreTable     *self);
QSTORE_AVAILABLE_IN_ALL
const char        *qstore_table_get_sql          (QStoreTable     *self);
QSTORE_AVAILABLE_IN_ALL
guint              qstore_table_get_n_columns    (QStoreTable     *self);
QSTORE_AVAILABLE_IN_ALL
const char        *qstore_table_get_column_name  (QStoreTable     *self,
                                                  guint            column);
QSTORE_AVAILABLE_IN_ALL
char             **qstore_table_list_indexes     (QStoreTable     *self);
QSTORE_AVAILABLE_IN_ALL
QStoreCoordinator *qstore_table_get_coordinator  (QStoreTable     *self);
QSTORE_AVAILABLE_IN_ALL
gint64             qstore_table_get_row_count    (QStoreTable     *self);
QSTORE_AVAILABLE_IN_ALL
gboolean           qstore_table_check            (QStoreTable        *self,
                                                  QStoreCheckReport  *report,
                                                  GError            **error);

QSTORE_AVAILABLE_IN_ALL
gboolean           qstore_table_insert           (QStoreTable     *self,
                                                  GVariant        *row,
                                                  QStoreConflict   conflict,
                                                  GError         **error);
QSTORE_AVAILABLE_IN_ALL
gboolean           qstore_table_update           (QStoreTable     *self,
                                                  GVariant        *key,
                                                  GVariant        *row,
                                                  QStoreConflict   conflict,
                                                  GError         **error);
QSTORE_AVAILABLE_IN_ALL
gboolean           qstore_table_delete           (QStoreTable     *self,
                                                  GVariant        *key,
                                                  GError         **error);
QSTORE_AVAILABLE_IN_ALL
GVariant          *qstore_table_get              (QStoreTable     *self,
                                                  GVariant        *key,
                                                  GError         **error);
QSTORE_AVAILABLE_IN_ALL
GPtrArray         *qstore_table_select_range     (QStoreTable     *self,
                                                  GVariant        *lower,
                                                  GVariant        *upper,
                                                  gboolean         reverse,
                                                  gint64           limit,
                                                  GError         **error);

G_END_DECLS
