/* qstore-result-private.h: how the SQL layer fills a result
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <sqlite3.h>

#include "qstore-result.h"

G_BEGIN_DECLS

/* Takes the column names and declared types of @stmt (prepared, not yet
 * stepped or just stepped). */
QStoreResult *qstore_result_new_for_statement (sqlite3_stmt *stmt);
/* Appends the row @stmt stands on. */
void          qstore_result_add_row           (QStoreResult *self,
                                               sqlite3_stmt *stmt);
void          qstore_result_set_counts        (QStoreResult *self,
                                               gint64        changes,
                                               gint64        last_insert_rowid);

/* The value of column @column of the row @stmt stands on, as a value
 * GVariant: `x`, `d`, `s`, `ay`, or the NULL maybe (qstore_value_new_null()).
 * Returns a new floating reference. */
GVariant     *qstore_result_column_to_variant (sqlite3_stmt *stmt,
                                               int           column);

G_END_DECLS
