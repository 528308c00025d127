/* qstore-mview-derive-private.h: what a change to a source row asks of a view
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "qstore-mview-plan-private.h"

G_BEGIN_DECLS

/* One derivation mechanism serves every view that follows its sources:
 * a materialized view, whose rows are stored in its backing table, and a
 * replica's live query, whose rows are kept in memory and streamed. Both
 * plan their body with qstore_mview_plan_new(), and both ask here which
 * part of the view a row change touches; they differ only in where the
 * recomputed rows go. */

/* The longest key a view is kept by key for; longer ones are rebuilt. */
#define QSTORE_MVIEW_MAX_KEY 16

typedef enum
{
  QSTORE_MVIEW_TOUCHES_NOTHING = 0,
  /* The partition under the old row's key (a source key, or a group) */
  QSTORE_MVIEW_TOUCHES_OLD = 1 << 0,
  /* The partition under the new row's key: an insert, or a key that moved */
  QSTORE_MVIEW_TOUCHES_NEW = 1 << 1,
} QStoreMViewTouches;

/* Whether the plan's strategy computes the whole view again on every
 * change of a source (no key to follow changes by). */
gboolean           qstore_mview_plan_rebuilds      (const Plan         *plan);

/* For a keyed plan: the partitions a change of its one source touches.
 * @old_values and @new_values are the source row before and after (NULL
 * for an insert and a delete); @old_key and @new_key (plan->key_out->len
 * values each, borrowing from the rows) get the partitions' keys. */
QStoreMViewTouches qstore_mview_plan_touches       (const Plan         *plan,
                                                    const QStoreValue  *old_values,
                                                    const QStoreValue  *new_values,
                                                    QStoreValue        *old_key,
                                                    QStoreValue        *new_key);

/* Appends a partition key (plan->key_out->len values) encoded so that
 * equal keys under the view's collations give equal bytes: what keeps a
 * view's partitions apart in memory. */
gboolean           qstore_mview_plan_encode_key    (const Plan         *plan,
                                                    const QStoreValue  *key_values,
                                                    GByteArray         *out,
                                                    GError            **error);
/* The same key read from a row of the view itself. */
gboolean           qstore_mview_plan_encode_row_key (const Plan        *plan,
                                                    const QStoreValue  *row_values,
                                                    GByteArray         *out,
                                                    GError            **error);

/* Values */
gboolean           qstore_mview_values_equal       (const QStoreValue  *a,
                                                    const QStoreValue  *b);
gboolean           qstore_mview_rows_equal         (const QStoreValue  *a,
                                                    const QStoreValue  *b,
                                                    guint               n);
gboolean           qstore_mview_has_null           (const QStoreValue  *values,
                                                    guint               n);
/* Values (copied out of a statement's row, or any) as one encoded row,
 * and back; decoded values borrow from @row. */
GBytes            *qstore_mview_encode_values      (const QStoreValue  *values,
                                                    guint               n);
gboolean           qstore_mview_decode_values      (GBytes             *row,
                                                    QStoreValue        *values,
                                                    guint               n,
                                                    GError            **error);
void               qstore_mview_values_from_statement (sqlite3_stmt    *stmt,
                                                    QStoreValue        *values,
                                                    guint               n);

G_END_DECLS
