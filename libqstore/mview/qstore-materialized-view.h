/* qstore-materialized-view.h: views whose contents are stored and kept
 * up to date
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(QSTORE_INSIDE) && !defined(QSTORE_COMPILATION)
# error "Only <qstore.h> can be included directly."
#endif

#include <gio/gio.h>

#include "qstore-database.h"

G_BEGIN_DECLS

/**
 * QStoreMaterializedViewStrategy:
 * @QSTORE_MATERIALIZED_VIEW_STRATEGY_INVERSE_PROJECTION: the view reads one
 *   table, filters and projects it and keeps its primary key: each changed
 *   source row gives the view row of the same key, computed again
 * @QSTORE_MATERIALIZED_VIEW_STRATEGY_GROUP_RECOMPUTE: the view reads one
 *   table and groups it by plain columns that lead an index (or the
 *   primary key) of that table: each group a change touches is computed
 *   again
 * @QSTORE_MATERIALIZED_VIEW_STRATEGY_FULL_REBUILD: anything else: the view
 *   is computed again in full, at most once per transaction that changes a
 *   source (or before it is read in that transaction)
 *
 * How a materialized view follows the changes of what it reads, cheapest
 * first.
 */
typedef enum /*< underscore_name=qstore_materialized_view_strategy >*/
{
  QSTORE_MATERIALIZED_VIEW_STRATEGY_INVERSE_PROJECTION,
  QSTORE_MATERIALIZED_VIEW_STRATEGY_GROUP_RECOMPUTE,
  QSTORE_MATERIALIZED_VIEW_STRATEGY_FULL_REBUILD,
} QStoreMaterializedViewStrategy;

#define QSTORE_TYPE_MATERIALIZED_VIEW (qstore_materialized_view_get_type ())

QSTORE_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (QStoreMaterializedView, qstore_materialized_view, QSTORE, MATERIALIZED_VIEW, GObject)

QSTORE_AVAILABLE_IN_ALL
const char                     *qstore_materialized_view_get_name         (QStoreMaterializedView *self);
QSTORE_AVAILABLE_IN_ALL
const char                     *qstore_materialized_view_get_schema       (QStoreMaterializedView *self);
QSTORE_AVAILABLE_IN_ALL
const char                     *qstore_materialized_view_get_body         (QStoreMaterializedView *self);
QSTORE_AVAILABLE_IN_ALL
const char                     *qstore_materialized_view_get_definition   (QStoreMaterializedView *self);
QSTORE_AVAILABLE_IN_ALL
QStoreMaterializedViewStrategy  qstore_materialized_view_get_strategy     (QStoreMaterializedView *self);
QSTORE_AVAILABLE_IN_ALL
const char * const             *qstore_materialized_view_get_sources      (QStoreMaterializedView *self);
QSTORE_AVAILABLE_IN_ALL
gboolean                        qstore_materialized_view_get_stale        (QStoreMaterializedView *self);
QSTORE_AVAILABLE_IN_ALL
const char                     *qstore_materialized_view_get_stale_reason (QStoreMaterializedView *self);

QSTORE_AVAILABLE_IN_ALL
GListModel *qstore_database_list_materialized_views                       (QStoreDatabase *self);
QSTORE_AVAILABLE_IN_ALL
gint64      qstore_database_get_materialized_view_rebuild_row_threshold   (QStoreDatabase *self);
QSTORE_AVAILABLE_IN_ALL
void        qstore_database_set_materialized_view_rebuild_row_threshold   (QStoreDatabase *self,
                                                                           gint64          threshold);

G_END_DECLS
