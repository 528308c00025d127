/* qstore-unsafe-window-private.h: what the window's operations share, and
 * the seams its tests drive
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "qstore-unsafe-store-private.h"
#include "qstore-unsafe-window.h"

G_BEGIN_DECLS

/* Every operation runs with the database's window lock held (one per
 * database: the coordinator serves one thread at a time) and, to write,
 * in a transaction of its own: begin, read every guard, write, commit. */
QStoreUnsafeStore *qstore_unsafe_window_get_store      (QStoreUnsafeWindow  *self);
void               qstore_unsafe_window_lock           (QStoreUnsafeWindow  *self);
void               qstore_unsafe_window_unlock         (QStoreUnsafeWindow  *self);
/* Fails with QSTORE_ERROR_CLOSED once the database is closed, and with
 * QSTORE_ERROR_BUSY when a transaction of someone else is open. */
gboolean           qstore_unsafe_window_check_idle     (QStoreUnsafeWindow  *self,
                                                        GError             **error);
gboolean           qstore_unsafe_window_begin          (QStoreUnsafeWindow  *self,
                                                        GError             **error);
/* Commits; a failed commit leaves nothing and ends the transaction. */
gboolean           qstore_unsafe_window_commit         (QStoreUnsafeWindow  *self,
                                                        GError             **error);
void               qstore_unsafe_window_rollback       (QStoreUnsafeWindow  *self);
/* Ends the transaction: commits when @ok and @wrote, else rolls back.
 * Returns whether all went well. */
gboolean           qstore_unsafe_window_end            (QStoreUnsafeWindow  *self,
                                                        gboolean             ok,
                                                        gboolean             wrote,
                                                        GError             **error);

/* Argument checks: QSTORE_ERROR_INVALID_ARGUMENT naming the window and
 * @field. Text must be non-empty UTF-8; the empty SUID passes where it
 * means "no checkpoint". */
gboolean           qstore_unsafe_window_check_generation (QStoreUnsafeWindow  *self,
                                                          gint64               generation,
                                                          GError             **error);
gboolean           qstore_unsafe_window_check_text     (QStoreUnsafeWindow  *self,
                                                        const char          *text,
                                                        const char          *field,
                                                        GError             **error);
gboolean           qstore_unsafe_window_check_suid     (QStoreUnsafeWindow  *self,
                                                        const char          *suid,
                                                        const char          *field,
                                                        gboolean             empty_allowed,
                                                        GError             **error);

/* Records the arrival of (@event_id, @suid) in @generation, inside the
 * open transaction: raises the watermark and, for a @first arrival (the
 * event has no receipt with this SUID) at or behind the stored safe head,
 * latches rebuild-required. Writes only what changes. */
gboolean           qstore_unsafe_window_record_arrival (QStoreUnsafeWindow  *self,
                                                        gint64               generation,
                                                        const char          *event_id,
                                                        const char          *suid,
                                                        gboolean             first,
                                                        gboolean            *behind_frontier,
                                                        GError             **error);
/* The safe head an event of @generation must be ahead of: the larger of
 * the one it was delivered with and the one the window stored. */
gboolean           qstore_unsafe_window_get_fence      (QStoreUnsafeWindow  *self,
                                                        gint64               generation,
                                                        const char          *delivered,
                                                        char               **fence,
                                                        GError             **error);

/* Brings @kick's target up to the largest SUID the window holds a
 * receipt of, which applies leave out of the kick; *@raised says whether
 * it rose. */
gboolean           qstore_unsafe_window_get_kick_target (QStoreUnsafeWindow *self,
                                                         QStoreUnsafeKick   *kick,
                                                         gboolean           *raised,
                                                         GError            **error);

/* Test seams, for the tests only: not in the public headers, not in the
 * typelib. */

/* Called with the lock held and the transaction open. */
typedef void (*QStoreUnsafeWindowTestHook) (QStoreUnsafeWindow *window,
                                            QStoreUnsafeEvent  *event,
                                            gpointer            data);

/* @before_writes runs once an apply has read every guard and decided to
 * write, before its first write (a duplicate writes nothing of the event
 * and skips it); @after_commit once its transaction committed. */
QSTORE_AVAILABLE_IN_ALL
void               qstore_unsafe_window_set_test_hooks (QStoreUnsafeWindow         *self,
                                                        QStoreUnsafeWindowTestHook  before_writes,
                                                        QStoreUnsafeWindowTestHook  after_commit,
                                                        gpointer                    data);
/* Whether apply tries its single-upsert path first (the default). */
QSTORE_AVAILABLE_IN_ALL
void               qstore_unsafe_window_set_fast_path  (QStoreUnsafeWindow         *self,
                                                        gboolean                    enabled);

/* How many applies the single-upsert path wrote itself. */
QSTORE_AVAILABLE_IN_ALL
guint              qstore_unsafe_window_get_n_fast_applies (QStoreUnsafeWindow     *self);

/* For qstore-unsafe-apply.c */
gboolean           qstore_unsafe_window_get_fast_path  (QStoreUnsafeWindow         *self);
void               qstore_unsafe_window_count_fast_apply (QStoreUnsafeWindow       *self);
void               qstore_unsafe_window_run_hook       (QStoreUnsafeWindow         *self,
                                                        gboolean                    after_commit,
                                                        QStoreUnsafeEvent          *event);

G_END_DECLS
