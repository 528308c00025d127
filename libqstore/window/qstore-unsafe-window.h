/* qstore-unsafe-window.h: a view fed by events that arrive out of order
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(QSTORE_INSIDE) && !defined(QSTORE_COMPILATION)
# error "Only <qstore.h> can be included directly."
#endif

#include <gio/gio.h>

#include "qstore-database.h"
#include "qstore-unsafe-event.h"
#include "qstore-unsafe-row.h"
#include "qstore-unsafe-window-error.h"

G_BEGIN_DECLS

/**
 * QStoreUnsafeOutcome:
 * @QSTORE_UNSAFE_OUTCOME_APPLIED: the event's rows, deletes and index
 *   entries are written
 * @QSTORE_UNSAFE_OUTCOME_OLDER: a row the event touches already holds a
 *   newer SUID: nothing of the event is written but its receipt (the
 *   whole event is older, even when only one of its rows is)
 * @QSTORE_UNSAFE_OUTCOME_PATCH_NOT_FOUND: the event patches a row that
 *   does not exist: only its receipt is written
 * @QSTORE_UNSAFE_OUTCOME_DELETE_WITHOUT_ROW: the event deletes a row that
 *   does not exist: only its receipt is written
 * @QSTORE_UNSAFE_OUTCOME_NO_CHANGE: the event changes no row (it has no
 *   mutations, or it was received before)
 *
 * What applying an event did. Every outcome but applied also leaves a
 * marker per row until the safe layer covers the event
 * ([method@UnsafeWindow.observe_safe_receipt]).
 */
typedef enum /*< underscore_name=qstore_unsafe_outcome >*/
{
  QSTORE_UNSAFE_OUTCOME_APPLIED,
  QSTORE_UNSAFE_OUTCOME_OLDER,
  QSTORE_UNSAFE_OUTCOME_PATCH_NOT_FOUND,
  QSTORE_UNSAFE_OUTCOME_DELETE_WITHOUT_ROW,
  QSTORE_UNSAFE_OUTCOME_NO_CHANGE,
} QStoreUnsafeOutcome;

#define QSTORE_TYPE_UNSAFE_WINDOW (qstore_unsafe_window_get_type ())

QSTORE_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (QStoreUnsafeWindow, qstore_unsafe_window, QSTORE, UNSAFE_WINDOW, GObject)

QSTORE_AVAILABLE_IN_ALL
QStoreUnsafeWindow *qstore_unsafe_window_new                   (QStoreDatabase      *database,
                                                                const char          *name,
                                                                GError             **error);
QSTORE_AVAILABLE_IN_ALL
QStoreDatabase     *qstore_unsafe_window_get_database          (QStoreUnsafeWindow  *self);
QSTORE_AVAILABLE_IN_ALL
const char         *qstore_unsafe_window_get_name              (QStoreUnsafeWindow  *self);
QSTORE_AVAILABLE_IN_ALL
gboolean            qstore_unsafe_window_is_internal_table_name (const char         *name);

/* Events */
QSTORE_AVAILABLE_IN_ALL
gboolean            qstore_unsafe_window_apply                 (QStoreUnsafeWindow  *self,
                                                                QStoreUnsafeEvent   *event,
                                                                QStoreUnsafeOutcome *outcome,
                                                                gboolean            *duplicate,
                                                                GError             **error);
QSTORE_AVAILABLE_IN_ALL
gboolean            qstore_unsafe_window_observe_safe_receipt  (QStoreUnsafeWindow  *self,
                                                                gint64               generation,
                                                                const char          *event_id,
                                                                const char          *suid,
                                                                GError             **error);
QSTORE_AVAILABLE_IN_ALL
gboolean            qstore_unsafe_window_observe_arrival       (QStoreUnsafeWindow  *self,
                                                                gint64               generation,
                                                                const char          *event_id,
                                                                const char          *suid,
                                                                gboolean            *behind_frontier,
                                                                GError             **error);

/* Reads */
QSTORE_AVAILABLE_IN_ALL
gboolean            qstore_unsafe_window_read_meta             (QStoreUnsafeWindow  *self,
                                                                gint64               generation,
                                                                char               **safe_contiguous_head,
                                                                char               **unsafe_observed_max_suid,
                                                                gboolean            *rebuild_required,
                                                                GError             **error);
QSTORE_AVAILABLE_IN_ALL
gboolean            qstore_unsafe_window_has_target_receipt    (QStoreUnsafeWindow  *self,
                                                                const char          *event_id,
                                                                const char          *suid,
                                                                gboolean            *found,
                                                                GError             **error);
QSTORE_AVAILABLE_IN_ALL
gboolean            qstore_unsafe_window_has_wait_receipt      (QStoreUnsafeWindow  *self,
                                                                gint64               generation,
                                                                gint64               definition_version,
                                                                const char          *event_id,
                                                                const char          *suid,
                                                                gboolean            *found,
                                                                GError             **error);
QSTORE_AVAILABLE_IN_ALL
GListModel         *qstore_unsafe_window_query_composed_page   (QStoreUnsafeWindow  *self,
                                                                gint64               generation,
                                                                guint                limit,
                                                                guint                offset,
                                                                gboolean             descending,
                                                                guint               *total_count,
                                                                GError             **error);

/* Kicks */
QSTORE_AVAILABLE_IN_ALL
gboolean            qstore_unsafe_window_acquire_kick          (QStoreUnsafeWindow  *self,
                                                                const char          *owner,
                                                                gint64               now_ms,
                                                                gint64               lease_ms,
                                                                gboolean            *acquired,
                                                                char               **target_suid,
                                                                GError             **error);
QSTORE_AVAILABLE_IN_ALL
gboolean            qstore_unsafe_window_finish_kick           (QStoreUnsafeWindow  *self,
                                                                const char          *owner,
                                                                const char          *reached_suid,
                                                                gboolean            *settled,
                                                                gboolean            *dirty,
                                                                GError             **error);

/* Collection */
QSTORE_AVAILABLE_IN_ALL
gboolean            qstore_unsafe_window_garbage_collect       (QStoreUnsafeWindow  *self,
                                                                gint64               generation,
                                                                gint64               definition_version,
                                                                const char          *row_key,
                                                                gint64               expected_row_version,
                                                                const char          *expected_source_suid,
                                                                const char          *safe_head,
                                                                gboolean            *collected,
                                                                GError             **error);
QSTORE_AVAILABLE_IN_ALL
gboolean            qstore_unsafe_window_collect_eligible      (QStoreUnsafeWindow  *self,
                                                                gint64               generation,
                                                                gint64               definition_version,
                                                                const char          *safe_head,
                                                                guint               *n_collected,
                                                                GError             **error);

/* The safe layer and generations */
QSTORE_AVAILABLE_IN_ALL
gboolean            qstore_unsafe_window_activate_generation   (QStoreUnsafeWindow  *self,
                                                                gint64               generation,
                                                                gint64               definition_version,
                                                                GError             **error);
QSTORE_AVAILABLE_IN_ALL
gboolean            qstore_unsafe_window_put_safe_row          (QStoreUnsafeWindow  *self,
                                                                gint64               generation,
                                                                const char          *row_key,
                                                                const char          *value_json,
                                                                gint64               row_version,
                                                                const char          *source_suid,
                                                                GError             **error);
QSTORE_AVAILABLE_IN_ALL
gboolean            qstore_unsafe_window_delete_safe_row       (QStoreUnsafeWindow  *self,
                                                                gint64               generation,
                                                                const char          *row_key,
                                                                GError             **error);

G_END_DECLS
