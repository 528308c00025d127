/* qstore-unsafe-page.c: reading an unsafe window, both layers composed
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "qstore-error.h"
#include "qstore-suid.h"
#include "qstore-unsafe-row-private.h"
#include "qstore-unsafe-window-private.h"

typedef struct
{
  QStoreUnsafeStore *store;
  gboolean           safe;
  QStoreIter        *iter;
  gboolean           valid;
} Layer;

static gboolean
layer_next (Layer   *layer,
            GError **error)
{
  g_autoptr(GError) local_error = NULL;

  layer->valid = qstore_iter_next (layer->iter, &local_error);
  if (local_error != NULL)
    {
      g_propagate_error (error, g_steal_pointer (&local_error));
      return FALSE;
    }
  return TRUE;
}

static gboolean
layer_open (Layer              *layer,
            QStoreUnsafeStore  *store,
            gboolean            safe,
            gint64              generation,
            GError            **error)
{
  layer->store = store;
  layer->safe = safe;
  layer->iter = qstore_unsafe_store_scan_rows (store, safe, generation, error);
  return layer->iter != NULL && layer_next (layer, error);
}

/* Both layers key their rows alike, (generation, row key): their keys
 * compare as bytes. */
static int
layer_compare (Layer *a,
               Layer *b)
{
  gsize a_len;
  gsize b_len;
  const guint8 *a_key = qstore_iter_peek_key (a->iter, &a_len);
  const guint8 *b_key = qstore_iter_peek_key (b->iter, &b_len);
  int order = memcmp (a_key, b_key, MIN (a_len, b_len));

  if (order != 0)
    return order;
  return a_len < b_len ? -1 : a_len > b_len ? 1 : 0;
}

/* A key's winner: what orders it, and the layer to read it from. */
typedef struct
{
  const char *row_key;                            /* in the page's chunk */
  char        source_suid[QSTORE_SUID_LENGTH + 1];
  gboolean    safe;
} Winner;

/* Keeps the winner @peek (borrowed from its layer) unless it is a
 * tombstone: tombstones win their key, then hide it. */
static void
add_winner (GArray                    *winners,
            GStringChunk              *chunk,
            const QStoreUnsafeRowPeek *peek,
            gboolean                   safe)
{
  Winner winner;

  if (peek->tombstone)
    return;
  winner.row_key = g_string_chunk_insert_len (chunk, peek->row_key, peek->row_key_len);
  memcpy (winner.source_suid, peek->source_suid, QSTORE_SUID_LENGTH);
  winner.source_suid[QSTORE_SUID_LENGTH] = '\0';
  winner.safe = safe;
  g_array_append_val (winners, winner);
}

/* Per row key, the highest SUID wins; the safe layer wins a tie. Only
 * what orders the rows is read here; the page's rows are read after. */
static gboolean
compose (QStoreUnsafeStore  *store,
         gint64              generation,
         GArray             *winners,
         GStringChunk       *chunk,
         GError            **error)
{
  Layer safe = { 0 };
  Layer unsafe = { 0 };
  gboolean ok;

  ok = layer_open (&safe, store, TRUE, generation, error) &&
       layer_open (&unsafe, store, FALSE, generation, error);
  while (ok && (safe.valid || unsafe.valid))
    {
      QStoreUnsafeRowPeek safe_row = { 0 };
      QStoreUnsafeRowPeek unsafe_row = { 0 };
      int order = !safe.valid ? 1 : !unsafe.valid ? -1 : layer_compare (&safe, &unsafe);

      if (order <= 0)
        ok = qstore_unsafe_store_peek_row (store, TRUE, safe.iter, &safe_row, error);
      if (ok && order >= 0)
        ok = qstore_unsafe_store_peek_row (store, FALSE, unsafe.iter, &unsafe_row, error);
      if (!ok)
        break;

      if (order < 0 ||
          (order == 0 && memcmp (unsafe_row.source_suid, safe_row.source_suid,
                                 QSTORE_SUID_LENGTH) <= 0))
        add_winner (winners, chunk, &safe_row, TRUE);
      else
        add_winner (winners, chunk, &unsafe_row, FALSE);

      if (order <= 0)
        ok = layer_next (&safe, error);
      if (ok && order >= 0)
        ok = layer_next (&unsafe, error);
    }
  g_clear_object (&safe.iter);
  g_clear_object (&unsafe.iter);
  return ok;
}

static int
compare_winners (gconstpointer a,
                 gconstpointer b)
{
  const Winner *x = a;
  const Winner *y = b;
  int order = memcmp (x->source_suid, y->source_suid, QSTORE_SUID_LENGTH);

  return order != 0 ? order : strcmp (x->row_key, y->row_key);
}

static int
compare_winners_descending (gconstpointer a,
                            gconstpointer b)
{
  return compare_winners (b, a);
}

/* The rows of the page, read from the layer each won in. */
static gboolean
read_page (QStoreUnsafeStore  *store,
           gint64              generation,
           GArray             *winners,
           guint               offset,
           guint               limit,
           GListStore         *page,
           GError            **error)
{
  for (guint i = offset; i < winners->len && i - offset < limit; i++)
    {
      const Winner *winner = &g_array_index (winners, Winner, i);
      g_auto(QStoreUnsafeRowRecord) row = { 0 };
      g_autoptr(QStoreUnsafeRow) item = NULL;
      gboolean found;

      if (!qstore_unsafe_store_get_row (store, winner->safe, generation, winner->row_key, &row,
                                        &found, error))
        return FALSE;
      g_assert (found);
      item = qstore_unsafe_row_new (g_steal_pointer (&row.row_key),
                                    g_steal_pointer (&row.value_json), row.row_version,
                                    g_steal_pointer (&row.source_suid), winner->safe);
      g_list_store_append (page, item);
    }
  return TRUE;
}

static gboolean
check_readable (QStoreUnsafeWindow  *self,
                gint64               generation,
                GError             **error)
{
  g_auto(QStoreUnsafeArrival) arrival = { 0 };
  gboolean found;

  if (!qstore_unsafe_store_get_arrival (qstore_unsafe_window_get_store (self), generation,
                                        &arrival, &found, error))
    return FALSE;
  if (!found || !arrival.rebuild_required)
    return TRUE;

  g_set_error (error, QSTORE_UNSAFE_WINDOW_ERROR, QSTORE_UNSAFE_WINDOW_ERROR_BEHIND_FRONTIER,
               "Unsafe window “%s”, generation %" G_GINT64_FORMAT ": event “%s” (SUID %s) "
               "first arrived behind the safe head, so the view may have missed it: reads "
               "are refused until the view is rebuilt into a new generation",
               qstore_unsafe_window_get_name (self), generation,
               arrival.behind_event_id != NULL ? arrival.behind_event_id : "?",
               arrival.behind_suid != NULL ? arrival.behind_suid : "?");
  return FALSE;
}

/**
 * qstore_unsafe_window_query_composed_page:
 * @self: a #QStoreUnsafeWindow
 * @generation: the generation to read
 * @limit: the most rows to return
 * @offset: how many rows of the order to skip first
 * @descending: whether to order from the newest SUID down
 * @total_count: (out) (optional): how many rows the whole view has
 * @error: return location for a #GError
 *
 * Reads a page of the view as readers see it: for each row key, the row of
 * the higher SUID of the two layers, the safe layer's when they tie;
 * tombstones hide their key. Rows are ordered by SUID, then by row key.
 *
 * Returns: (transfer full) (nullable): the rows, #QStoreUnsafeRow items, or
 *   %NULL with %QSTORE_UNSAFE_WINDOW_ERROR_BEHIND_FRONTIER when
 *   @generation latched rebuild-required (see
 *   [method@UnsafeWindow.observe_arrival]): its rows cannot be trusted
 */
GListModel *
qstore_unsafe_window_query_composed_page (QStoreUnsafeWindow  *self,
                                          gint64               generation,
                                          guint                limit,
                                          guint                offset,
                                          gboolean             descending,
                                          guint               *total_count,
                                          GError             **error)
{
  g_autoptr(GArray) winners = g_array_new (FALSE, FALSE, sizeof (Winner));
  g_autoptr(GListStore) page = g_list_store_new (QSTORE_TYPE_UNSAFE_ROW);
  GStringChunk *chunk = g_string_chunk_new (4096);
  QStoreUnsafeStore *store = qstore_unsafe_window_get_store (self);
  gboolean ok;

  g_return_val_if_fail (QSTORE_IS_UNSAFE_WINDOW (self), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (total_count != NULL)
    *total_count = 0;
  if (!qstore_unsafe_window_check_generation (self, generation, error))
    {
      g_string_chunk_free (chunk);
      return NULL;
    }

  /* Ranked and read under the lock: no write comes in between. */
  qstore_unsafe_window_lock (self);
  ok = qstore_unsafe_window_check_idle (self, error) &&
       check_readable (self, generation, error) &&
       compose (store, generation, winners, chunk, error);
  if (ok)
    {
      g_array_sort (winners, descending ? compare_winners_descending : compare_winners);
      ok = read_page (store, generation, winners, offset, limit, page, error);
    }
  qstore_unsafe_window_unlock (self);
  g_string_chunk_free (chunk);
  if (!ok)
    return NULL;

  if (total_count != NULL)
    *total_count = winners->len;
  return G_LIST_MODEL (g_steal_pointer (&page));
}
