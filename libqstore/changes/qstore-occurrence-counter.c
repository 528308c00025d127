/* qstore-occurrence-counter.c: how often a change digest was seen lately
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "qstore-change-claims.h"
#include "qstore-change-digest.h"
#include "qstore-occurrence-counter.h"

/**
 * QStoreOccurrenceCounter:
 *
 * Counts, for each change digest (see qstore_change_digest()), how many
 * changes with that digest a consumer has seen, so that two changes with
 * the very same content (a row set to 1, to 2, and to 1 again) get two
 * change keys: occurrence 0, then 1.
 *
 * It is bounded both ways, since one entry per change with no ceiling is
 * an unbounded table in memory: an entry not seen for longer than the
 * window goes at the next [method@OccurrenceCounter.prune], and past the
 * maximum number of entries the one seen longest ago goes at once.
 *
 * The window must be longer than a claim lives (see
 * qstore_database_claim_change()): a digest forgotten while its claim is
 * kept would start again at occurrence 0, collide with that claim, and
 * its change would be dropped as a duplicate it is not.
 * [ctor@OccurrenceCounter.new_for_claims] derives the window from the
 * claims' lifetime for that reason. The maximum reaches the same
 * invariant by size: a digest evicted while its claim is kept is exposed
 * the same way, when more distinct digests than the maximum arrive within
 * a claim's lifetime and an evicted one then repeats. Size it for the
 * change rate the consumer sees.
 */

typedef struct
{
  char   *digest;
  guint   next;         /* the occurrence its next sighting gets */
  gint64  last_seen;    /* ms */
  GList   link;         /* in the counter's order, least recently seen first */
} Entry;

struct _QStoreOccurrenceCounter
{
  GObject     parent_instance;

  gint64      window_ms;
  guint       max_entries;
  GHashTable *entries;   /* digest → Entry */
  GQueue      order;     /* Entry, by last sighting */
};

G_DEFINE_FINAL_TYPE (QStoreOccurrenceCounter, qstore_occurrence_counter, G_TYPE_OBJECT)

static void
entry_free (gpointer data)
{
  Entry *entry = data;

  g_free (entry->digest);
  g_free (entry);
}

static void
qstore_occurrence_counter_finalize (GObject *object)
{
  QStoreOccurrenceCounter *self = QSTORE_OCCURRENCE_COUNTER (object);

  g_hash_table_unref (self->entries);

  G_OBJECT_CLASS (qstore_occurrence_counter_parent_class)->finalize (object);
}

static void
qstore_occurrence_counter_class_init (QStoreOccurrenceCounterClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = qstore_occurrence_counter_finalize;
}

static void
qstore_occurrence_counter_init (QStoreOccurrenceCounter *self)
{
  self->entries = g_hash_table_new_full (g_str_hash, g_str_equal, NULL, entry_free);
  g_queue_init (&self->order);
}

/**
 * qstore_occurrence_counter_new:
 * @window_ms: how long, in milliseconds, a digest not seen again is
 *   remembered; more than 0
 * @max_entries: how many digests are remembered at most; more than 0
 *
 * Makes a counter with its own bounds. Counters that key claims should
 * come from [ctor@OccurrenceCounter.new_for_claims].
 *
 * Returns: (transfer full): the counter
 */
QStoreOccurrenceCounter *
qstore_occurrence_counter_new (gint64 window_ms,
                               guint  max_entries)
{
  QStoreOccurrenceCounter *self;

  g_return_val_if_fail (window_ms > 0, NULL);
  g_return_val_if_fail (max_entries > 0, NULL);

  self = g_object_new (QSTORE_TYPE_OCCURRENCE_COUNTER, NULL);
  self->window_ms = window_ms;
  self->max_entries = max_entries;
  return self;
}

/**
 * qstore_occurrence_counter_new_for_claims:
 * @max_entries: how many digests are remembered at most; more than 0
 *
 * Makes a counter whose window is qstore_change_claims_get_window_ms():
 * twice the lifetime of a claim, as `QSTORE_CHANGE_CLAIMS_TTL_HOURS`
 * sets it, so the window outlives every claim it keys.
 *
 * Returns: (transfer full): the counter
 */
QStoreOccurrenceCounter *
qstore_occurrence_counter_new_for_claims (guint max_entries)
{
  return qstore_occurrence_counter_new (qstore_change_claims_get_window_ms (), max_entries);
}

/**
 * qstore_occurrence_counter_get_window_ms:
 * @self: a #QStoreOccurrenceCounter
 *
 * Gets the counter's window.
 *
 * Returns: how long a digest not seen again is remembered, in ms
 */
gint64
qstore_occurrence_counter_get_window_ms (QStoreOccurrenceCounter *self)
{
  g_return_val_if_fail (QSTORE_IS_OCCURRENCE_COUNTER (self), 0);
  return self->window_ms;
}

/**
 * qstore_occurrence_counter_get_max_entries:
 * @self: a #QStoreOccurrenceCounter
 *
 * Gets the most digests the counter remembers.
 *
 * Returns: how many digests are remembered at most
 */
guint
qstore_occurrence_counter_get_max_entries (QStoreOccurrenceCounter *self)
{
  g_return_val_if_fail (QSTORE_IS_OCCURRENCE_COUNTER (self), 0);
  return self->max_entries;
}

/**
 * qstore_occurrence_counter_get_size:
 * @self: a #QStoreOccurrenceCounter
 *
 * Gets how many digests the counter remembers now.
 *
 * Returns: how many digests are remembered now
 */
guint
qstore_occurrence_counter_get_size (QStoreOccurrenceCounter *self)
{
  g_return_val_if_fail (QSTORE_IS_OCCURRENCE_COUNTER (self), 0);
  return g_hash_table_size (self->entries);
}

/* The entry of @digest, seen now: made when new, moved to the end of the
 * order, and the oldest let go beyond the maximum. */
static Entry *
touch (QStoreOccurrenceCounter *self,
       const char              *digest,
       gint64                   now_ms)
{
  Entry *entry = g_hash_table_lookup (self->entries, digest);

  if (entry == NULL)
    {
      entry = g_new0 (Entry, 1);
      entry->digest = g_strdup (digest);
      entry->link.data = entry;
      g_hash_table_insert (self->entries, entry->digest, entry);
    }
  else
    g_queue_unlink (&self->order, &entry->link);
  entry->last_seen = now_ms;
  g_queue_push_tail_link (&self->order, &entry->link);

  while (g_hash_table_size (self->entries) > self->max_entries)
    {
      GList *oldest = g_queue_pop_head_link (&self->order);

      g_hash_table_remove (self->entries, ((Entry *) oldest->data)->digest);
    }
  return entry;
}

/**
 * qstore_occurrence_counter_next:
 * @self: a #QStoreOccurrenceCounter
 * @digest: a change digest
 * @now_ms: the time now, in milliseconds (such as g_get_real_time() /
 *   1000); it should not go back
 *
 * Records a sighting of @digest and gives its occurrence: 0 for the first
 * one remembered, then 1, 2…
 *
 * Returns: the occurrence of this sighting
 */
guint
qstore_occurrence_counter_next (QStoreOccurrenceCounter *self,
                                const char              *digest,
                                gint64                   now_ms)
{
  Entry *entry;

  g_return_val_if_fail (QSTORE_IS_OCCURRENCE_COUNTER (self), 0);
  g_return_val_if_fail (digest != NULL, 0);

  entry = touch (self, digest, now_ms);
  return entry->next++;
}

/**
 * qstore_occurrence_counter_prune:
 * @self: a #QStoreOccurrenceCounter
 * @now_ms: the time now, in milliseconds
 *
 * Forgets the digests not seen for longer than the window: their next
 * sighting is occurrence 0 again.
 */
void
qstore_occurrence_counter_prune (QStoreOccurrenceCounter *self,
                                 gint64                   now_ms)
{
  Entry *oldest;

  g_return_if_fail (QSTORE_IS_OCCURRENCE_COUNTER (self));

  while ((oldest = g_queue_peek_head (&self->order)) != NULL &&
         now_ms - oldest->last_seen > self->window_ms)
    {
      g_queue_pop_head_link (&self->order);
      g_hash_table_remove (self->entries, oldest->digest);
    }
}

/**
 * qstore_occurrence_counter_seed_from_change_keys:
 * @self: a #QStoreOccurrenceCounter
 * @change_keys: (array zero-terminated=1): change keys already claimed,
 *   such as qstore_database_list_change_claims() gives
 * @now_ms: the time now, in milliseconds
 *
 * Aligns a counter that starts while other consumers run with the claims
 * they recorded: each digest's next occurrence comes after the largest
 * one claimed. Without it, a consumer that starts late would count from 0
 * and key again changes the others have keyed. Call it once, before the
 * first sighting. Malformed keys are skipped.
 *
 * Returns: how many keys were taken
 */
guint
qstore_occurrence_counter_seed_from_change_keys (QStoreOccurrenceCounter *self,
                                                 const char * const      *change_keys,
                                                 gint64                   now_ms)
{
  guint taken = 0;

  g_return_val_if_fail (QSTORE_IS_OCCURRENCE_COUNTER (self), 0);
  g_return_val_if_fail (change_keys != NULL, 0);

  for (guint i = 0; change_keys[i] != NULL; i++)
    {
      g_autofree char *digest = NULL;
      guint occurrence;
      Entry *entry;

      if (!(digest = qstore_parse_change_key (change_keys[i], &occurrence)) ||
          occurrence == G_MAXUINT)
        continue;
      entry = touch (self, digest, now_ms);
      entry->next = MAX (entry->next, occurrence + 1);
      taken++;
    }
  return taken;
}
