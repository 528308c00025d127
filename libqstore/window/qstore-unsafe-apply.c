/* qstore-unsafe-apply.c: applying one event to an unsafe window
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * An apply is one transaction: every guard is read first, then the
 * writes, then one commit. A guard that refuses leaves the transaction
 * without a write, rolled back.
 *
 * Two paths lead there. The complete one classifies any event. The fast
 * one takes the common shape, a single whole-row upsert from the event's
 * own SUID, and writes it when nothing stands in the way; when anything
 * does (a receipt, a newer or contradicting row, a row version, the safe
 * head) it hands the event to the complete path, which finds the outcome
 * again from the same reads, so both paths agree on every outcome.
 */
#include "config.h"

#include <string.h>

#include "qstore-error.h"
#include "qstore-i18n-private.h"
#include "qstore-suid.h"
#include "qstore-unsafe-event-private.h"
#include "qstore-unsafe-window-private.h"

typedef enum
{
  STEP_DONE,       /* written, ready to commit */
  STEP_FALLBACK,   /* the fast path stepped aside, nothing written */
  STEP_REFUSED,    /* a guard refused: roll back, record the arrival */
  STEP_FAILED,     /* an error of the store: roll back */
} Step;

typedef struct
{
  QStoreUnsafeWindow  *window;
  QStoreUnsafeStore   *store;
  QStoreUnsafeEvent   *event;
  const char          *event_id;
  const char          *suid;
  gint64               generation;
  gint64               observed_at;
  char                *receipt_suid;    /* the SUID of the event's receipt, NULL for none */
  char                *marked_rows;     /* JSON array of the keys it marks, NULL for none */
  gboolean             first_arrival;   /* no receipt with this SUID, before this apply */
  QStoreUnsafeOutcome  outcome;
  gboolean             duplicate;
} Apply;

static const char *
outcome_nick (QStoreUnsafeOutcome outcome)
{
  static const char * const nicks[] = {
    [QSTORE_UNSAFE_OUTCOME_APPLIED] = "applied",
    [QSTORE_UNSAFE_OUTCOME_OLDER] = "older",
    [QSTORE_UNSAFE_OUTCOME_PATCH_NOT_FOUND] = "patch-not-found",
    [QSTORE_UNSAFE_OUTCOME_DELETE_WITHOUT_ROW] = "delete-without-row",
    [QSTORE_UNSAFE_OUTCOME_NO_CHANGE] = "no-change",
  };

  return nicks[outcome];
}

static Step
refuse (Apply       *apply,
        GError     **error,
        int          code,
        const char  *format,
        ...) G_GNUC_PRINTF (4, 5);

static Step
refuse (Apply       *apply,
        GError     **error,
        int          code,
        const char  *format,
        ...)
{
  g_autofree char *detail = NULL;
  va_list args;

  va_start (args, format);
  detail = g_strdup_vprintf (format, args);
  va_end (args);
  g_set_error (error, QSTORE_UNSAFE_WINDOW_ERROR, code, _("Unsafe window “%s”, event “%s”: %s"),
               qstore_unsafe_window_get_name (apply->window), apply->event_id, detail);
  return STEP_REFUSED;
}

static Step
failed (Apply   *apply,
        GError **error)
{
  g_prefix_error (error, _("Unsafe window “%s”, event “%s”: "),
                  qstore_unsafe_window_get_name (apply->window), apply->event_id);
  return STEP_FAILED;
}

/* Classifies by the event's receipt, read once before both paths: a
 * contradiction, a duplicate (no change), or a new event. */
static Step
check_receipt (Apply   *apply,
               GError **error)
{
  if (apply->receipt_suid == NULL)
    return STEP_DONE;
  if (strcmp (apply->receipt_suid, apply->suid) != 0)
    return refuse (apply, error, QSTORE_UNSAFE_WINDOW_ERROR_SUID_CONTRADICTION,
                   "it was received before with SUID %s and now comes with SUID %s: one "
                   "event id must keep one SUID", apply->receipt_suid, apply->suid);
  apply->outcome = QSTORE_UNSAFE_OUTCOME_NO_CHANGE;
  apply->duplicate = TRUE;
  return STEP_DONE;
}

/* Whether the safe head, as delivered or as stored, covers the event. */
static gboolean
read_safe_ahead (Apply    *apply,
                 char    **fence,
                 gboolean *ahead,
                 GError  **error)
{
  if (!qstore_unsafe_window_get_fence (apply->window, apply->generation,
                                       qstore_unsafe_event_get_safe_head (apply->event), fence,
                                       error))
    return FALSE;
  *ahead = (*fence)[0] != '\0' && qstore_suid_compare (*fence, apply->suid) >= 0;
  return TRUE;
}

static Step
refuse_safe_ahead (Apply       *apply,
                   const char  *fence,
                   GError     **error)
{
  return refuse (apply, error, QSTORE_UNSAFE_WINDOW_ERROR_SAFE_AHEAD,
                 "its SUID %s is at or behind the safe head %s: the safe layer covers it, "
                 "drop this delivery", apply->suid, fence);
}

/* The writes every apply makes after its rows: the receipt (the identity
 * that makes a re-delivery a duplicate), the wait receipt of the active
 * generation, the kick and the arrival. */
static Step
write_bookkeeping (Apply   *apply,
                   GError **error)
{
  QStoreUnsafeReceipt receipt = {
    .event_id = (char *) apply->event_id,
    .suid = (char *) apply->suid,
    .outcome = (char *) outcome_nick (apply->outcome),
    .observed_at = apply->observed_at,
    .marked_rows = apply->marked_rows,
  };
  g_auto(QStoreUnsafeKick) kick = { 0 };
  g_autoptr(GError) local_error = NULL;
  const char *target = qstore_unsafe_event_get_target_suid (apply->event);
  gint64 active;
  gint64 definition;
  gboolean found;
  gboolean further;

  if (!qstore_unsafe_store_insert_receipt (apply->store, &receipt, &local_error))
    {
      /* Every guard saw no receipt: another delivery got there between. */
      if (g_error_matches (local_error, QSTORE_ERROR, QSTORE_ERROR_CONSTRAINT))
        return refuse (apply, error, QSTORE_UNSAFE_WINDOW_ERROR_DUPLICATE_RACE,
                       "another delivery of it recorded its receipt first: it is applied "
                       "there, treat this delivery as a duplicate");
      g_propagate_error (error, g_steal_pointer (&local_error));
      return failed (apply, error);
    }

  if (!qstore_unsafe_store_get_active (apply->store, &active, &found, error))
    return failed (apply, error);
  if (found && active == apply->generation)
    {
      if (!qstore_unsafe_store_get_definition (apply->store, active, &definition, &found, error) ||
          (found && !qstore_unsafe_store_add_wait_receipt (apply->store, active, definition,
                                                           apply->event_id, apply->suid,
                                                           apply->observed_at, error)))
        return failed (apply, error);
    }

  /* The kick's target is the larger of the one it stores and the largest
   * SUID with a receipt (qstore_unsafe_window_get_kick_target()): only a
   * target beyond the event's own SUID is stored, and a kick already
   * dirty is written no more. */
  if (!qstore_unsafe_store_get_kick (apply->store, &kick, &found, error))
    return failed (apply, error);
  further = target != NULL && (!found || qstore_suid_compare (target, kick.target_suid) > 0);
  if (!found || !kick.dirty || further)
    {
      if (!found || further)
        {
          g_free (kick.target_suid);
          kick.target_suid = g_strdup (target != NULL ? target : apply->suid);
        }
      kick.dirty = TRUE;
      if (!qstore_unsafe_store_put_kick (apply->store, &kick, error))
        return failed (apply, error);
    }

  if (qstore_unsafe_event_get_record_arrival (apply->event) &&
      !qstore_unsafe_window_record_arrival (apply->window, apply->generation, apply->event_id,
                                            apply->suid, apply->first_arrival, NULL, error))
    return failed (apply, error);
  return STEP_DONE;
}

static gboolean
add_index_entries (Apply   *apply,
                   GError **error)
{
  GPtrArray *entries = qstore_unsafe_event_get_index_entries (apply->event);

  for (guint i = 0; i < entries->len; i++)
    {
      QStoreUnsafeIndexEntry *entry = g_ptr_array_index (entries, i);

      if (!qstore_unsafe_store_add_index_entry (apply->store, apply->generation, entry->row_key,
                                                entry->index_id, entry->value, error))
        return FALSE;
    }
  return TRUE;
}

static gboolean
write_upsert (Apply                 *apply,
              QStoreUnsafeMutation  *mutation,
              GError               **error)
{
  QStoreUnsafeRowRecord row = {
    .row_key = mutation->row_key,
    .value_json = mutation->canonical,
    .row_version = mutation->row_version,
    .source_suid = mutation->source_suid,
    .tombstone = mutation->kind == QSTORE_UNSAFE_MUTATION_TOMBSTONE,
  };

  /* The row's entries are the ones this event lists, no others. */
  return qstore_unsafe_store_delete_index_entries (apply->store, apply->generation,
                                                   mutation->row_key, error) &&
         qstore_unsafe_store_put_row (apply->store, FALSE, apply->generation, &row, error);
}

/* The fast path: one whole-row upsert from the event's own SUID. */
static Step
apply_fast (Apply   *apply,
            GError **error)
{
  GPtrArray *mutations = qstore_unsafe_event_get_mutations (apply->event);
  QStoreUnsafeMutation *upsert;
  g_auto(QStoreUnsafeRowRecord) row = { 0 };
  g_autofree char *fence = NULL;
  gboolean found;
  gboolean ahead;
  gint64 expected;

  if (mutations->len != 1)
    return STEP_FALLBACK;
  upsert = g_ptr_array_index (mutations, 0);
  if (upsert->kind != QSTORE_UNSAFE_MUTATION_UPSERT || strcmp (upsert->source_suid, apply->suid) != 0)
    return STEP_FALLBACK;

  if (apply->receipt_suid != NULL)
    return STEP_FALLBACK;

  if (!qstore_unsafe_store_get_row (apply->store, FALSE, apply->generation, upsert->row_key, &row,
                                    &found, error))
    return failed (apply, error);
  if (found)
    {
      int order = qstore_suid_compare (row.source_suid, apply->suid);

      if (order > 0 ||
          (order == 0 && (row.tombstone || strcmp (row.value_json, upsert->canonical) != 0)))
        return STEP_FALLBACK;
      if (qstore_unsafe_event_get_expected_row_version (apply->event, &expected) &&
          row.row_version != expected)
        return STEP_FALLBACK;
    }

  if (!read_safe_ahead (apply, &fence, &ahead, error))
    return failed (apply, error);
  if (ahead)
    return STEP_FALLBACK;

  apply->outcome = QSTORE_UNSAFE_OUTCOME_APPLIED;
  qstore_unsafe_window_run_hook (apply->window, FALSE, apply->event);
  if (!write_upsert (apply, upsert, error) || !add_index_entries (apply, error))
    return failed (apply, error);
  return write_bookkeeping (apply, error);
}

/* The complete path */

typedef struct
{
  GHashTable *existing;    /* row key → QStoreUnsafeRowRecord, rows that exist */
  GPtrArray  *keys;        /* every row key the event touches, first seen first */
} Touched;

static void
row_record_free (QStoreUnsafeRowRecord *row)
{
  qstore_unsafe_row_record_clear (row);
  g_free (row);
}

static void
touched_clear (Touched *touched)
{
  g_clear_pointer (&touched->existing, g_hash_table_unref);
  g_clear_pointer (&touched->keys, g_ptr_array_unref);
}

static gboolean
read_touched (Apply    *apply,
              Touched  *touched,
              GError  **error)
{
  GPtrArray *mutations = qstore_unsafe_event_get_mutations (apply->event);
  g_autoptr(GHashTable) seen = g_hash_table_new (g_str_hash, g_str_equal);

  touched->existing = g_hash_table_new_full (g_str_hash, g_str_equal, NULL,
                                             (GDestroyNotify) row_record_free);
  touched->keys = g_ptr_array_new ();

  for (guint i = 0; i < mutations->len; i++)
    {
      QStoreUnsafeMutation *mutation = g_ptr_array_index (mutations, i);
      QStoreUnsafeRowRecord *row;
      gboolean found;

      if (!g_hash_table_add (seen, mutation->row_key))
        continue;
      g_ptr_array_add (touched->keys, mutation->row_key);

      row = g_new0 (QStoreUnsafeRowRecord, 1);
      if (!qstore_unsafe_store_get_row (apply->store, FALSE, apply->generation, mutation->row_key,
                                        row, &found, error))
        {
          g_free (row);
          return FALSE;
        }
      if (found)
        g_hash_table_insert (touched->existing, row->row_key, row);
      else
        g_free (row);
    }
  return TRUE;
}

static QStoreUnsafeOutcome
classify (Apply   *apply,
          Touched *touched)
{
  GPtrArray *mutations = qstore_unsafe_event_get_mutations (apply->event);
  GHashTableIter iter;
  QStoreUnsafeRowRecord *row;
  gboolean patch_not_found = FALSE;
  gboolean delete_without_row = FALSE;

  /* One newer row makes the whole event older. */
  g_hash_table_iter_init (&iter, touched->existing);
  while (g_hash_table_iter_next (&iter, NULL, (gpointer *) &row))
    if (qstore_suid_compare (row->source_suid, apply->suid) > 0)
      return QSTORE_UNSAFE_OUTCOME_OLDER;

  for (guint i = 0; i < mutations->len; i++)
    {
      QStoreUnsafeMutation *mutation = g_ptr_array_index (mutations, i);
      gboolean exists = g_hash_table_contains (touched->existing, mutation->row_key);

      if (mutation->kind == QSTORE_UNSAFE_MUTATION_PATCH && !exists)
        patch_not_found = TRUE;
      else if (mutation->kind == QSTORE_UNSAFE_MUTATION_DELETE && !exists)
        delete_without_row = TRUE;
    }

  if (patch_not_found)
    return QSTORE_UNSAFE_OUTCOME_PATCH_NOT_FOUND;
  if (delete_without_row)
    return QSTORE_UNSAFE_OUTCOME_DELETE_WITHOUT_ROW;
  return mutations->len == 0 ? QSTORE_UNSAFE_OUTCOME_NO_CHANGE : QSTORE_UNSAFE_OUTCOME_APPLIED;
}

/* The guards that refuse, in the order their errors win: a contradiction
 * of a row written from the same SUID, a row version that is not the
 * expected one (each row checked on its own), the safe head. */
static Step
check_guards (Apply    *apply,
              Touched  *touched,
              GError  **error)
{
  GPtrArray *mutations = qstore_unsafe_event_get_mutations (apply->event);
  g_autofree char *fence = NULL;
  gboolean ahead;
  gint64 expected;

  for (guint i = 0; i < mutations->len; i++)
    {
      QStoreUnsafeMutation *mutation = g_ptr_array_index (mutations, i);
      QStoreUnsafeRowRecord *row = g_hash_table_lookup (touched->existing, mutation->row_key);
      gboolean tombstone = mutation->kind == QSTORE_UNSAFE_MUTATION_TOMBSTONE;

      if (row == NULL || strcmp (row->source_suid, apply->suid) != 0 ||
          (mutation->kind != QSTORE_UNSAFE_MUTATION_UPSERT && !tombstone))
        continue;
      if (row->tombstone != tombstone || strcmp (row->value_json, mutation->canonical) != 0)
        return refuse (apply, error, QSTORE_UNSAFE_WINDOW_ERROR_SUID_CONTRADICTION,
                       "row “%s” already holds %s from the same SUID %s: one SUID must "
                       "always produce the same row", mutation->row_key,
                       row->tombstone ? "a tombstone" : "another value", apply->suid);
    }

  if (qstore_unsafe_event_get_expected_row_version (apply->event, &expected))
    {
      for (guint i = 0; i < touched->keys->len; i++)
        {
          const char *key = g_ptr_array_index (touched->keys, i);
          QStoreUnsafeRowRecord *row = g_hash_table_lookup (touched->existing, key);

          if (row != NULL && row->row_version != expected)
            return refuse (apply, error, QSTORE_UNSAFE_WINDOW_ERROR_ROW_CAS_MISMATCH,
                           "row “%s” has version %" G_GINT64_FORMAT ", not the expected %"
                           G_GINT64_FORMAT ": plan the event again against the row as it "
                           "is now, and retry", key, row->row_version, expected);
        }
    }

  if (!read_safe_ahead (apply, &fence, &ahead, error))
    return failed (apply, error);
  if (ahead)
    return refuse_safe_ahead (apply, fence, error);
  return STEP_DONE;
}

static gboolean
write_patch (Apply                 *apply,
             QStoreUnsafeMutation  *mutation,
             GError               **error)
{
  g_auto(QStoreUnsafeRowRecord) row = { 0 };
  g_autoptr(JsonNode) current = NULL;
  g_autoptr(JsonNode) patched = NULL;
  g_autofree char *value = NULL;
  gboolean found;

  /* As the transaction sees it: the event's own upserts and deletes
   * come first. */
  if (!qstore_unsafe_store_get_row (apply->store, FALSE, apply->generation, mutation->row_key,
                                    &row, &found, error))
    return FALSE;
  if (!found)
    return TRUE;

  if (!row.tombstone)
    {
      g_autoptr(GError) local_error = NULL;

      value = qstore_unsafe_json_canonical (row.value_json, "its value", &current, &local_error);
      if (value == NULL)
        {
          /* The window stores JSON: only a write around it gets here. */
          g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_CORRUPT,
                       _("row “%s” cannot be patched: %s (it was written around the window; "
                       "rebuild the view)"), row.row_key, local_error->message);
          return FALSE;
        }
      g_clear_pointer (&value, g_free);
    }
  patched = qstore_unsafe_json_merge_patch (current, mutation->node);

  g_free (row.value_json);
  row.value_json = json_to_string (patched, FALSE);
  row.row_version = mutation->row_version;
  g_free (row.source_suid);
  row.source_suid = g_strdup (mutation->source_suid);
  row.tombstone = FALSE;
  return qstore_unsafe_store_put_row (apply->store, FALSE, apply->generation, &row, error);
}

static gboolean
write_rows (Apply   *apply,
            GError **error)
{
  GPtrArray *mutations = qstore_unsafe_event_get_mutations (apply->event);

  /* Deletes, then whole rows, then patches over what is there by then. */
  for (guint i = 0; i < mutations->len; i++)
    {
      QStoreUnsafeMutation *mutation = g_ptr_array_index (mutations, i);

      if (mutation->kind == QSTORE_UNSAFE_MUTATION_DELETE &&
          (!qstore_unsafe_store_delete_index_entries (apply->store, apply->generation,
                                                      mutation->row_key, error) ||
           !qstore_unsafe_store_delete_row (apply->store, FALSE, apply->generation,
                                            mutation->row_key, error)))
        return FALSE;
    }
  for (guint i = 0; i < mutations->len; i++)
    {
      QStoreUnsafeMutation *mutation = g_ptr_array_index (mutations, i);

      if ((mutation->kind == QSTORE_UNSAFE_MUTATION_UPSERT ||
           mutation->kind == QSTORE_UNSAFE_MUTATION_TOMBSTONE) &&
          !write_upsert (apply, mutation, error))
        return FALSE;
    }
  for (guint i = 0; i < mutations->len; i++)
    {
      QStoreUnsafeMutation *mutation = g_ptr_array_index (mutations, i);

      if (mutation->kind == QSTORE_UNSAFE_MUTATION_PATCH && !write_patch (apply, mutation, error))
        return FALSE;
    }
  return add_index_entries (apply, error);
}

static Step
apply_complete (Apply   *apply,
                GError **error)
{
  Touched touched = { NULL, NULL };
  Step step;

  step = check_receipt (apply, error);
  if (step != STEP_DONE)
    return step;
  if (apply->duplicate)
    {
      /* Only its arrival may change anything. */
      if (qstore_unsafe_event_get_record_arrival (apply->event) &&
          !qstore_unsafe_window_record_arrival (apply->window, apply->generation,
                                                apply->event_id, apply->suid,
                                                apply->first_arrival, NULL, error))
        return failed (apply, error);
      return STEP_DONE;
    }

  if (!read_touched (apply, &touched, error))
    {
      touched_clear (&touched);
      return failed (apply, error);
    }
  apply->outcome = classify (apply, &touched);
  step = check_guards (apply, &touched, error);
  if (step != STEP_DONE)
    {
      touched_clear (&touched);
      return step;
    }

  qstore_unsafe_window_run_hook (apply->window, FALSE, apply->event);
  if (apply->outcome == QSTORE_UNSAFE_OUTCOME_APPLIED)
    {
      if (!write_rows (apply, error))
        {
          touched_clear (&touched);
          return failed (apply, error);
        }
    }
  else
    {
      /* What did not apply stays marked until the safe layer covers it;
       * an event without rows is marked under its own id. Its receipt
       * lists the keys, for the safe receipt to find them. */
      const char *reason = outcome_nick (apply->outcome);
      g_autoptr(JsonArray) marked = json_array_new ();
      g_autoptr(JsonNode) node = NULL;
      guint n = MAX (touched.keys->len, 1);

      for (guint i = 0; i < n; i++)
        {
          const char *key = touched.keys->len > 0 ? g_ptr_array_index (touched.keys, i)
                                                  : apply->event_id;

          json_array_add_string_element (marked, key);
          if (!qstore_unsafe_store_add_marker (apply->store, apply->generation, key,
                                               apply->event_id, apply->suid, reason, error))
            {
              touched_clear (&touched);
              return failed (apply, error);
            }
        }
      node = json_node_init_array (json_node_alloc (), marked);
      apply->marked_rows = json_to_string (node, FALSE);
    }
  touched_clear (&touched);
  return write_bookkeeping (apply, error);
}

/* Runs both paths in one transaction; on a refusal, records the arrival in
 * a transaction of its own when the event asks for it. */
static gboolean
apply_locked (Apply   *apply,
              GError **error)
{
  g_autoptr(GError) refusal = NULL;
  g_auto(QStoreUnsafeReceipt) receipt = { 0 };
  gboolean found;
  Step step;

  if (!qstore_unsafe_window_begin (apply->window, error))
    return FALSE;

  /* Whether this is the event's first arrival is decided before any of
   * its own writes. */
  if (!qstore_unsafe_store_get_receipt (apply->store, apply->event_id, &receipt, &found, error))
    {
      qstore_unsafe_window_rollback (apply->window);
      failed (apply, error);
      return FALSE;
    }
  if (found)
    apply->receipt_suid = g_steal_pointer (&receipt.suid);
  apply->first_arrival = !found || strcmp (apply->receipt_suid, apply->suid) != 0;

  step = qstore_unsafe_window_get_fast_path (apply->window) ? apply_fast (apply, &refusal)
                                                           : STEP_FALLBACK;
  if (step == STEP_FALLBACK)
    step = apply_complete (apply, &refusal);
  else if (step == STEP_DONE)
    qstore_unsafe_window_count_fast_apply (apply->window);

  if (step == STEP_DONE)
    {
      if (!qstore_unsafe_window_commit (apply->window, error))
        return FALSE;
      qstore_unsafe_window_run_hook (apply->window, TRUE, apply->event);
      return TRUE;
    }

  qstore_unsafe_window_rollback (apply->window);
  if (step == STEP_REFUSED && qstore_unsafe_event_get_record_arrival (apply->event))
    {
      if (!qstore_unsafe_window_begin (apply->window, error))
        return FALSE;
      if (!qstore_unsafe_window_record_arrival (apply->window, apply->generation,
                                                apply->event_id, apply->suid,
                                                apply->first_arrival, NULL, error))
        {
          qstore_unsafe_window_rollback (apply->window);
          return FALSE;
        }
      if (!qstore_unsafe_window_commit (apply->window, error))
        return FALSE;
    }
  g_propagate_error (error, g_steal_pointer (&refusal));
  return FALSE;
}

/**
 * qstore_unsafe_window_apply:
 * @self: a #QStoreUnsafeWindow
 * @event: the event, as its materializer planned it
 * @outcome: (out) (optional): what the apply did
 * @duplicate: (out) (optional): whether the event was received before
 *   (its outcome is then %QSTORE_UNSAFE_OUTCOME_NO_CHANGE)
 * @error: return location for a #GError
 *
 * Applies an event to the unsafe layer of its generation, in one
 * transaction whose guards are all read before its first write.
 *
 * A newer row anywhere in the event makes it %QSTORE_UNSAFE_OUTCOME_OLDER
 * as a whole; a patch of a missing row or a delete of one makes it
 * %QSTORE_UNSAFE_OUTCOME_PATCH_NOT_FOUND or
 * %QSTORE_UNSAFE_OUTCOME_DELETE_WITHOUT_ROW; these write no row, only the
 * event's receipt and markers. Otherwise every delete, upsert, patch (over
 * the row as the event's own deletes and upserts leave it) and index
 * entry is written. Every outcome records the event's receipt, so a
 * re-delivery is a duplicate, marks the window's kick dirty, and writes a
 * wait receipt when the generation is the active one.
 *
 * Refusals leave nothing behind (but the arrival, see
 * [method@UnsafeEvent.set_record_arrival]): an event id received before
 * with another SUID, or a row holding another value from the same SUID
 * (%QSTORE_UNSAFE_WINDOW_ERROR_SUID_CONTRADICTION); a row whose version
 * is not the expected one (%QSTORE_UNSAFE_WINDOW_ERROR_ROW_CAS_MISMATCH,
 * retryable); a SUID at or behind the safe head, the one delivered with
 * the event or the one the window stored
 * (%QSTORE_UNSAFE_WINDOW_ERROR_SAFE_AHEAD); another delivery recording
 * the receipt first (%QSTORE_UNSAFE_WINDOW_ERROR_DUPLICATE_RACE). A
 * malformed event is %QSTORE_ERROR_INVALID_ARGUMENT naming the field.
 *
 * Returns: (skip): %TRUE when the event was applied, classified or found
 *   to be a duplicate
 */
gboolean
qstore_unsafe_window_apply (QStoreUnsafeWindow   *self,
                            QStoreUnsafeEvent    *event,
                            QStoreUnsafeOutcome  *outcome,
                            gboolean             *duplicate,
                            GError              **error)
{
  Apply apply = { 0 };
  gint64 updated_at;
  gboolean ok;

  g_return_val_if_fail (QSTORE_IS_UNSAFE_WINDOW (self), FALSE);
  g_return_val_if_fail (QSTORE_IS_UNSAFE_EVENT (event), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (!qstore_unsafe_event_validate (event, error))
    {
      g_prefix_error (error, _("Unsafe window “%s”: "), qstore_unsafe_window_get_name (self));
      return FALSE;
    }

  updated_at = qstore_unsafe_event_get_updated_at (event);
  apply.window = self;
  apply.store = qstore_unsafe_window_get_store (self);
  apply.event = event;
  apply.event_id = qstore_unsafe_event_get_event_id (event);
  apply.suid = qstore_unsafe_event_get_suid (event);
  apply.generation = qstore_unsafe_event_get_generation (event);
  apply.observed_at = updated_at >= 0 ? updated_at : g_get_real_time () / 1000;

  qstore_unsafe_window_lock (self);
  ok = apply_locked (&apply, error);
  qstore_unsafe_window_unlock (self);
  g_free (apply.receipt_suid);
  g_free (apply.marked_rows);

  if (outcome != NULL)
    *outcome = ok ? apply.outcome : QSTORE_UNSAFE_OUTCOME_NO_CHANGE;
  if (duplicate != NULL)
    *duplicate = ok && apply.duplicate;
  return ok;
}
