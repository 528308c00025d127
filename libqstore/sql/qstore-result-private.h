/* qstore-result-private.h: how the SQL layer fills a result
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <sqlite3.h>

#include "qstore-result.h"

G_BEGIN_DECLS

/* The column names and declared types of a prepared statement, shared
 * by the results of every run of it. */
typedef struct _QStoreResultColumns QStoreResultColumns;

void          qstore_result_columns_unref     (QStoreResultColumns *columns);

/* A result without columns yet: see qstore_result_take_columns(). */
QStoreResult *qstore_result_new               (void);
/* Takes the column names and declared types of @stmt (prepared, not yet
 * stepped or just stepped). */
QStoreResult *qstore_result_new_for_statement (sqlite3_stmt *stmt);
/* Empties a result for its owner to fill again: for a result nobody else
 * sees, since a result handed out never changes. */
void          qstore_result_clear             (QStoreResult *self);
/* Gives a result made by qstore_result_new() the columns of @stmt, once
 * it has been stepped (SQLite prepares a statement again on its first
 * step after a schema change). @shared, when given, keeps them for the
 * next run of @stmt: they are taken from it while SQLite has not
 * prepared @stmt again since, and replaced otherwise. */
void          qstore_result_take_columns      (QStoreResult         *self,
                                               sqlite3_stmt         *stmt,
                                               QStoreResultColumns **shared);
/* Appends the row @stmt stands on. */
void          qstore_result_add_row           (QStoreResult *self,
                                               sqlite3_stmt *stmt);
void          qstore_result_set_counts        (QStoreResult *self,
                                               gint64        changes,
                                               gint64        last_insert_rowid);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (QStoreResultColumns, qstore_result_columns_unref)

G_END_DECLS
