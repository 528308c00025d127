/* qstore-unsafe-maintain.c: the follow-up work of an unsafe window: its
 * kick lease, and collecting rows the safe layer covers
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "qstore-error.h"
#include "qstore-i18n-private.h"
#include "qstore-suid.h"
#include "qstore-unsafe-window-private.h"

static gboolean
check_argument (QStoreUnsafeWindow  *self,
                gboolean             valid,
                GError             **error,
                const char          *format,
                ...) G_GNUC_PRINTF (4, 5);

static gboolean
check_argument (QStoreUnsafeWindow  *self,
                gboolean             valid,
                GError             **error,
                const char          *format,
                ...)
{
  g_autofree char *detail = NULL;
  va_list args;

  if (valid)
    return TRUE;
  va_start (args, format);
  detail = g_strdup_vprintf (format, args);
  va_end (args);
  g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT, _("Unsafe window “%s”: %s"),
               qstore_unsafe_window_get_name (self), detail);
  return FALSE;
}

gboolean
qstore_unsafe_window_get_kick_target (QStoreUnsafeWindow  *self,
                                      QStoreUnsafeKick    *kick,
                                      gboolean            *raised,
                                      GError             **error)
{
  g_autofree char *max = NULL;

  *raised = FALSE;
  if (!qstore_unsafe_store_max_receipt_suid (qstore_unsafe_window_get_store (self), &max, error))
    return FALSE;
  if (qstore_suid_compare (max, kick->target_suid) > 0)
    {
      g_free (kick->target_suid);
      kick->target_suid = g_steal_pointer (&max);
      *raised = TRUE;
    }
  return TRUE;
}

/**
 * qstore_unsafe_window_acquire_kick:
 * @self: a #QStoreUnsafeWindow
 * @owner: who takes the lease, such as a worker's id
 * @now_ms: the time now, in milliseconds on the clock the leases use
 * @lease_ms: how long the lease lasts, more than 0
 * @acquired: (out): whether @owner now holds the kick
 * @target_suid: (out) (optional) (nullable) (transfer full): the SUID the
 *   follow-up work must reach, when @acquired
 * @error: return location for a #GError
 *
 * Takes the window's kick: the durable note that applies happened and
 * follow-up work (catching the safe layer up to them) is due. The kick is
 * acquired when it is dirty and no one else holds an unexpired lease: its
 * dirty bit clears and @owner holds it until @now_ms + @lease_ms. A kick
 * that is not dirty is not acquired and is no error: nothing is due.
 *
 * Returns: (skip): %TRUE on success; %FALSE with
 *   %QSTORE_UNSAFE_WINDOW_ERROR_KICK_LEASE_HELD (retryable) when another
 *   owner's lease has not expired
 */
gboolean
qstore_unsafe_window_acquire_kick (QStoreUnsafeWindow  *self,
                                   const char          *owner,
                                   gint64               now_ms,
                                   gint64               lease_ms,
                                   gboolean            *acquired,
                                   char               **target_suid,
                                   GError             **error)
{
  QStoreUnsafeStore *store = qstore_unsafe_window_get_store (self);
  g_auto(QStoreUnsafeKick) kick = { 0 };
  gboolean found = FALSE;
  gboolean take = FALSE;
  gboolean raised;
  gboolean ok;

  g_return_val_if_fail (QSTORE_IS_UNSAFE_WINDOW (self), FALSE);
  g_return_val_if_fail (owner != NULL, FALSE);
  g_return_val_if_fail (acquired != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  *acquired = FALSE;
  if (target_suid != NULL)
    *target_suid = NULL;
  if (!check_argument (self, owner[0] != '\0', error, "a kick's owner cannot be empty") ||
      !check_argument (self, lease_ms > 0 && now_ms <= G_MAXINT64 - lease_ms, error,
                       "a lease of %" G_GINT64_FORMAT " ms from %" G_GINT64_FORMAT " ms "
                       "cannot be taken: give a positive length that ends before the end "
                       "of time", lease_ms, now_ms))
    return FALSE;

  qstore_unsafe_window_lock (self);
  ok = qstore_unsafe_window_begin (self, error);
  if (!ok)
    goto out;

  ok = qstore_unsafe_store_get_kick (store, &kick, &found, error);
  if (ok && found && kick.lease_owner != NULL && strcmp (kick.lease_owner, owner) != 0 &&
      kick.lease_until > now_ms)
    {
      g_set_error (error, QSTORE_UNSAFE_WINDOW_ERROR, QSTORE_UNSAFE_WINDOW_ERROR_KICK_LEASE_HELD,
                   "Unsafe window “%s”: its kick is leased to “%s” until %" G_GINT64_FORMAT
                   " ms: try again after that", qstore_unsafe_window_get_name (self),
                   kick.lease_owner, kick.lease_until);
      ok = FALSE;
    }
  take = ok && found && kick.dirty;
  if (take)
    ok = qstore_unsafe_window_get_kick_target (self, &kick, &raised, error);
  if (take && ok)
    {
      g_free (kick.lease_owner);
      kick.lease_owner = g_strdup (owner);
      kick.lease_until = now_ms + lease_ms;
      kick.dirty = FALSE;
      ok = qstore_unsafe_store_put_kick (store, &kick, error);
    }
  ok = qstore_unsafe_window_end (self, ok, take, error);

out:
  qstore_unsafe_window_unlock (self);
  if (ok && take)
    {
      *acquired = TRUE;
      if (target_suid != NULL)
        *target_suid = g_steal_pointer (&kick.target_suid);
    }
  return ok;
}

/**
 * qstore_unsafe_window_finish_kick:
 * @self: a #QStoreUnsafeWindow
 * @owner: who held the lease
 * @reached_suid: the SUID the follow-up work actually reached, or the
 *   empty text when it reached none
 * @settled: (out): whether @owner held the lease, which is now released
 * @dirty: (out) (optional): whether the kick is still due
 * @error: return location for a #GError
 *
 * Ends a lease taken with [method@UnsafeWindow.acquire_kick], telling how
 * far the work got: a pass that stopped early is no proof the target was
 * reached. The dirty bit is set again while the kick's target is ahead of
 * @reached_suid, so the next tick takes the kick again; applies made
 * during the lease keep it set too. Only the lease's holder settles it
 * (even after it expired, as long as no one else took it).
 *
 * Returns: (skip): %TRUE on success
 */
gboolean
qstore_unsafe_window_finish_kick (QStoreUnsafeWindow  *self,
                                  const char          *owner,
                                  const char          *reached_suid,
                                  gboolean            *settled,
                                  gboolean            *dirty,
                                  GError             **error)
{
  QStoreUnsafeStore *store = qstore_unsafe_window_get_store (self);
  g_auto(QStoreUnsafeKick) kick = { 0 };
  gboolean found = FALSE;
  gboolean held = FALSE;
  gboolean raised;
  gboolean ok;

  g_return_val_if_fail (QSTORE_IS_UNSAFE_WINDOW (self), FALSE);
  g_return_val_if_fail (owner != NULL, FALSE);
  g_return_val_if_fail (reached_suid != NULL, FALSE);
  g_return_val_if_fail (settled != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  *settled = FALSE;
  if (dirty != NULL)
    *dirty = FALSE;
  if (!check_argument (self, owner[0] != '\0', error, "a kick's owner cannot be empty") ||
      !qstore_unsafe_window_check_suid (self, reached_suid, "reached_suid", TRUE, error))
    return FALSE;

  qstore_unsafe_window_lock (self);
  ok = qstore_unsafe_window_begin (self, error);
  if (!ok)
    goto out;

  ok = qstore_unsafe_store_get_kick (store, &kick, &found, error);
  held = ok && found && kick.lease_owner != NULL && strcmp (kick.lease_owner, owner) == 0;
  if (held)
    ok = qstore_unsafe_window_get_kick_target (self, &kick, &raised, error);
  if (held && ok)
    {
      if (reached_suid[0] == '\0' || qstore_suid_compare (kick.target_suid, reached_suid) > 0)
        kick.dirty = TRUE;
      g_clear_pointer (&kick.lease_owner, g_free);
      kick.lease_until = 0;
      ok = qstore_unsafe_store_put_kick (store, &kick, error);
    }
  ok = qstore_unsafe_window_end (self, ok, held, error);

out:
  qstore_unsafe_window_unlock (self);
  if (ok)
    {
      *settled = held;
      if (dirty != NULL)
        *dirty = found && kick.dirty;
    }
  return ok;
}

/* Garbage collection */

typedef struct
{
  gint64      generation;
  gint64      definition_version;
  const char *row_key;
  gint64      row_version;
  const char *source_suid;
  const char *safe_head;
} Candidate;

static gboolean
predicate_fails (const char **failed,
                 const char  *why)
{
  *failed = why;
  return TRUE;
}

/* Every recovery predicate, read before any delete. Returns FALSE on an
 * error; *holds says whether all hold (and names the first that does not
 * in *failed). */
static gboolean
check_predicates (QStoreUnsafeStore  *store,
                  const Candidate    *c,
                  gboolean           *holds,
                  const char        **failed,
                  GError            **error)
{
  g_auto(QStoreUnsafeArrival) arrival = { 0 };
  g_auto(QStoreUnsafeRowRecord) row = { 0 };
  gboolean arrival_found;
  gboolean found;
  gint64 value;

  *holds = FALSE;

  /* The safe layer covers the row's state: once the row is gone, the
   * safe head is what refuses a re-delivery of its event. */
  if (c->safe_head[0] == '\0' || qstore_suid_compare (c->safe_head, c->source_suid) < 0)
    return predicate_fails (failed, "the safe head does not cover the row's SUID");

  /* Arrivals were watched up to the row's SUID, and none was missed. */
  if (!qstore_unsafe_store_get_arrival (store, c->generation, &arrival, &arrival_found, error))
    return FALSE;
  if (!arrival_found || qstore_suid_compare (arrival.arrival_watermark, c->source_suid) < 0)
    return predicate_fails (failed, "the arrival watermark is behind the row's SUID");
  if (arrival.rebuild_required)
    return predicate_fails (failed, "the generation requires a rebuild");

  /* Only the active generation, built with this definition. */
  if (!qstore_unsafe_store_get_active (store, &value, &found, error))
    return FALSE;
  if (!found || value != c->generation)
    return predicate_fails (failed, "the generation is not the active one");
  if (!qstore_unsafe_store_get_definition (store, c->generation, &value, &found, error))
    return FALSE;
  if (!found || value != c->definition_version)
    return predicate_fails (failed, "the generation's definition changed");

  /* Compare and delete: the row is still the one selected. */
  if (!qstore_unsafe_store_get_row (store, FALSE, c->generation, c->row_key, &row, &found, error))
    return FALSE;
  if (!found || row.row_version != c->row_version ||
      strcmp (row.source_suid, c->source_suid) != 0)
    return predicate_fails (failed, "the row changed");

  *holds = TRUE;
  return TRUE;
}

/* The kick's target rests partly on receipts (see
 * qstore_unsafe_window_get_kick_target()): it is stored before a receipt
 * it rests on can go. */
static gboolean
keep_kick_target (QStoreUnsafeWindow  *self,
                  GError             **error)
{
  QStoreUnsafeStore *store = qstore_unsafe_window_get_store (self);
  g_auto(QStoreUnsafeKick) kick = { 0 };
  gboolean found;
  gboolean raised = FALSE;

  return qstore_unsafe_store_get_kick (store, &kick, &found, error) &&
         (!found || qstore_unsafe_window_get_kick_target (self, &kick, &raised, error)) &&
         (!raised || qstore_unsafe_store_put_kick (store, &kick, error));
}

static gboolean
collect_locked (QStoreUnsafeWindow  *self,
                const Candidate     *c,
                gboolean            *collected,
                GError             **error)
{
  QStoreUnsafeStore *store = qstore_unsafe_window_get_store (self);
  const char *failed = NULL;
  gboolean holds = FALSE;
  gboolean ok;

  *collected = FALSE;
  if (!qstore_unsafe_window_begin (self, error))
    return FALSE;

  ok = check_predicates (store, c, &holds, &failed, error);
  if (ok && !holds)
    g_debug ("Unsafe window “%s”: row “%s” is not collected: %s",
             qstore_unsafe_window_get_name (self), c->row_key, failed);

  ok = ok && (!holds ||
              (keep_kick_target (self, error) &&
               qstore_unsafe_store_delete_index_entries (store, c->generation, c->row_key,
                                                         error) &&
               qstore_unsafe_store_delete_markers_of_row (store, c->generation, c->row_key,
                                                          error) &&
               qstore_unsafe_store_delete_receipts_of_suid (store, c->source_suid, error) &&
               qstore_unsafe_store_delete_wait_receipts (store, c->generation, c->source_suid,
                                                         error) &&
               qstore_unsafe_store_delete_row (store, FALSE, c->generation, c->row_key,
                                               error)));
  ok = qstore_unsafe_window_end (self, ok, holds, error);
  *collected = ok && holds;
  return ok;
}

/**
 * qstore_unsafe_window_garbage_collect:
 * @self: a #QStoreUnsafeWindow
 * @generation: the row's generation
 * @definition_version: the definition the caller built it with
 * @row_key: the row
 * @expected_row_version: the version the caller selected it with
 * @expected_source_suid: the SUID the caller selected it with
 * @safe_head: the safe layer's contiguous head
 * @collected: (out): whether the row was removed
 * @error: return location for a #GError
 *
 * Removes an unsafe row the safe layer covers, with its index entries,
 * markers, receipts and wait receipts, when every recovery predicate
 * holds: @safe_head is at or past the row's SUID; the generation's arrival
 * watermark is too, and it requires no rebuild; @generation is the active
 * one and was built with @definition_version; the row still has
 * @expected_row_version and @expected_source_suid. Every predicate is read
 * before the first delete: when one does not hold, nothing is removed and
 * @collected is %FALSE, which is no error.
 *
 * Returns: (skip): %TRUE on success
 */
gboolean
qstore_unsafe_window_garbage_collect (QStoreUnsafeWindow  *self,
                                      gint64               generation,
                                      gint64               definition_version,
                                      const char          *row_key,
                                      gint64               expected_row_version,
                                      const char          *expected_source_suid,
                                      const char          *safe_head,
                                      gboolean            *collected,
                                      GError             **error)
{
  Candidate candidate = {
    generation, definition_version, row_key, expected_row_version, expected_source_suid,
    safe_head,
  };
  gboolean ok;

  g_return_val_if_fail (QSTORE_IS_UNSAFE_WINDOW (self), FALSE);
  g_return_val_if_fail (row_key != NULL, FALSE);
  g_return_val_if_fail (expected_source_suid != NULL, FALSE);
  g_return_val_if_fail (safe_head != NULL, FALSE);
  g_return_val_if_fail (collected != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  *collected = FALSE;
  if (!qstore_unsafe_window_check_generation (self, generation, error) ||
      !check_argument (self, g_utf8_validate (row_key, -1, NULL), error,
                       "row_key is not valid UTF-8") ||
      !qstore_unsafe_window_check_suid (self, expected_source_suid, "expected_source_suid",
                                        FALSE, error) ||
      !qstore_unsafe_window_check_suid (self, safe_head, "safe_head", TRUE, error))
    return FALSE;

  qstore_unsafe_window_lock (self);
  ok = collect_locked (self, &candidate, collected, error);
  qstore_unsafe_window_unlock (self);
  return ok;
}

typedef struct
{
  char   *row_key;
  gint64  row_version;
  char   *source_suid;
} Selected;

static void
selected_free (Selected *selected)
{
  g_free (selected->row_key);
  g_free (selected->source_suid);
  g_free (selected);
}

static int
compare_selected (gconstpointer a,
                  gconstpointer b)
{
  const Selected *x = *(Selected * const *) a;
  const Selected *y = *(Selected * const *) b;
  int order = qstore_suid_compare (x->source_suid, y->source_suid);

  return order != 0 ? order : strcmp (x->row_key, y->row_key);
}

static gboolean
select_candidates (QStoreUnsafeWindow  *self,
                   gint64               generation,
                   const char          *safe_head,
                   GPtrArray           *selected,
                   GError             **error)
{
  QStoreUnsafeStore *store = qstore_unsafe_window_get_store (self);
  g_autoptr(QStoreIter) iter = NULL;
  g_autoptr(GError) local_error = NULL;

  iter = qstore_unsafe_store_scan_rows (store, FALSE, generation, error);
  if (iter == NULL)
    return FALSE;
  while (qstore_iter_next (iter, &local_error))
    {
      g_auto(QStoreUnsafeRowRecord) row = { 0 };
      Selected *candidate;

      if (!qstore_unsafe_store_read_row (store, FALSE, iter, &row, error))
        return FALSE;
      if (qstore_suid_compare (row.source_suid, safe_head) > 0)
        continue;
      candidate = g_new0 (Selected, 1);
      candidate->row_key = g_steal_pointer (&row.row_key);
      candidate->row_version = row.row_version;
      candidate->source_suid = g_steal_pointer (&row.source_suid);
      g_ptr_array_add (selected, candidate);
    }
  if (local_error != NULL)
    {
      g_propagate_error (error, g_steal_pointer (&local_error));
      return FALSE;
    }
  g_ptr_array_sort (selected, compare_selected);
  return TRUE;
}

/**
 * qstore_unsafe_window_collect_eligible:
 * @self: a #QStoreUnsafeWindow
 * @generation: the generation to collect in
 * @definition_version: the definition the caller built it with
 * @safe_head: the safe layer's contiguous head; the empty text collects
 *   nothing
 * @n_collected: (out) (optional): how many rows were removed
 * @error: return location for a #GError
 *
 * Collects the unsafe rows of @generation at or behind @safe_head, oldest
 * SUID first: a catch-up calls it after it advanced (or observed) the
 * safe head. The selection only picks candidates; each is removed by
 * [method@UnsafeWindow.garbage_collect], which checks every predicate
 * again.
 *
 * Returns: (skip): %TRUE on success
 */
gboolean
qstore_unsafe_window_collect_eligible (QStoreUnsafeWindow  *self,
                                       gint64               generation,
                                       gint64               definition_version,
                                       const char          *safe_head,
                                       guint               *n_collected,
                                       GError             **error)
{
  g_autoptr(GPtrArray) selected = g_ptr_array_new_with_free_func ((GDestroyNotify) selected_free);
  guint n = 0;
  gboolean ok;

  g_return_val_if_fail (QSTORE_IS_UNSAFE_WINDOW (self), FALSE);
  g_return_val_if_fail (safe_head != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (n_collected != NULL)
    *n_collected = 0;
  if (!qstore_unsafe_window_check_generation (self, generation, error) ||
      !qstore_unsafe_window_check_suid (self, safe_head, "safe_head", TRUE, error))
    return FALSE;
  if (safe_head[0] == '\0')
    return TRUE;

  qstore_unsafe_window_lock (self);
  ok = qstore_unsafe_window_check_idle (self, error) &&
       select_candidates (self, generation, safe_head, selected, error);
  for (guint i = 0; ok && i < selected->len; i++)
    {
      Selected *s = g_ptr_array_index (selected, i);
      Candidate candidate = {
        generation, definition_version, s->row_key, s->row_version, s->source_suid, safe_head,
      };
      gboolean collected;

      ok = collect_locked (self, &candidate, &collected, error);
      if (ok && collected)
        n++;
    }
  qstore_unsafe_window_unlock (self);

  if (n_collected != NULL)
    *n_collected = n;
  return ok;
}
