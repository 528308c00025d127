/* qstore-mview-maintain-private.h: keeping views up to date
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "qstore-mview-private.h"

G_BEGIN_DECLS

void qstore_mview_entry_set_view (QStoreSqlTable *entry,
                                  QStoreMView    *view);
gboolean qstore_mview_rebuild_into (QStoreMView  *view,
                                    QStoreTable  *backing,
                                    GError      **error);
void qstore_mview_view_forget_work (QStoreMView *view);
gboolean qstore_mview_plan_reads_view (const Plan  *plan,
                                       QStoreMView *upstream);
void qstore_mview_rebuild_dependents (QStoreMViews *self);
void qstore_mview_mark_stale_quietly (QStoreMViews *self,
                                      QStoreMView  *view,
                                      const char   *reason);
QStoreMView *qstore_mview_upstream_view (QStoreMViews     *self,
                                         const PlanSource *source);
void qstore_mview_on_changed (gpointer        data,
                              const char     *schema,
                              const char     *table,
                              QStoreChangeOp  op,
                              GBytes         *old_row,
                              GBytes         *new_row);
void qstore_mview_on_before_commit (gpointer data);
void qstore_mview_on_undone (gpointer data);
void qstore_mview_on_ended (gpointer data,
                            gboolean committed);
gboolean qstore_mview_before_write (QStoreDatabase  *db,
                                    GError         **error);
void qstore_mview_after_write (QStoreDatabase *db);
void qstore_mview_mark_temp_views (QStoreMViews *self,
                                   const char   *table);
void qstore_mview_install_hooks (QStoreMViews *self);

G_END_DECLS
