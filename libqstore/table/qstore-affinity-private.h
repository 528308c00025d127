/* qstore-affinity-private.h: SQLite's column affinity, applied by qstore
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <sqlite3.h>

#include "qstore-table-schema-private.h"

G_BEGIN_DECLS

/* @out borrows the bytes of @value. */
void     qstore_value_from_sqlite     (sqlite3_value      *value,
                                       QStoreValue        *out);
void     qstore_value_to_result       (sqlite3_context    *context,
                                       const QStoreValue  *value);
int      qstore_value_bind            (sqlite3_stmt       *stmt,
                                       int                 position,
                                       const QStoreValue  *value);

/* Converts @value as SQLite does when it stores a value into a column of
 * @affinity. @value must be a private copy (sqlite3_value_dup()): it may be
 * changed, and @out borrows from it. */
void     qstore_affinity_apply        (QStoreAffinity      affinity,
                                       sqlite3_value      *value,
                                       QStoreValue        *out);
/* What SQLite does with a value for an INTEGER PRIMARY KEY: numeric
 * affinity, then it must be an integer. FALSE for anything else (SQLite's
 * "datatype mismatch"). */
gboolean qstore_affinity_to_integer   (sqlite3_value      *value,
                                       gint64             *out);

/* Converts @value (a private copy) for comparison with a column of
 * @affinity and returns TRUE when the comparison's meaning is certain.
 * FALSE means SQLite may compare the stored values numerically or as
 * text depending on the other operand's affinity, which qstore cannot see:
 * a number compared with a TEXT or BLOB column. */
gboolean qstore_affinity_for_compare  (QStoreAffinity      affinity,
                                       sqlite3_value      *value,
                                       QStoreValue        *out);

G_END_DECLS
