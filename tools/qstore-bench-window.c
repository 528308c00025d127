/* qstore-bench-window.c: what a guarded apply of the unsafe window costs
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The workload, all in one run on one store:
 *
 * - N events, event i upserting row "k%06d" of (i * 7919) mod K (K = N/4,
 *   at least 1) with a small JSON value, version i and SUID i (ticks
 *   10^17 + i); the window name `bench`, generation 0;
 * - plain_upsert: the same N row writes into a plain table of the window
 *   rows' shape (`bench_plain`), each an INSERT OR REPLACE of one row in a
 *   transaction of its own, through QStoreTable's value entry point;
 * - apply_in_order: the N events applied in SUID order, one transaction
 *   each (every one applies);
 * - apply_shuffled: the same events, shuffled (seed 42), applied to a
 *   second window `shuffled` (some are older than the row by then);
 * - composed_page: 1000 reads of a page of 20 rows of the first window at
 *   a random offset.
 *
 * Each apply line carries "vs_plain_upsert": its seconds per op over
 * plain_upsert's.
 */
#include "config.h"

#include <string.h>

#include <qstore.h>

#include "qstore-bench-window.h"
#include "qstore-codec-private.h"
#include "qstore-table-private.h"

#define SEED           42
#define PAGE_ROWS      20
#define N_PAGE_READS   1000
#define FIRST_TICKS    G_GUINT64_CONSTANT (100000000000000000)

typedef struct
{
  char   *key;
  char   *value;
  char   *suid;
  gint64  version;
} Write;

static void
write_clear (gpointer data)
{
  Write *write = data;

  g_free (write->key);
  g_free (write->value);
  g_free (write->suid);
}

void
bench_window_stamp (BenchWindowTimes *times,
                    guint             at)
{
  clock_gettime (CLOCK_MONOTONIC, &times->wall[at]);
  clock_gettime (CLOCK_PROCESS_CPUTIME_ID, &times->cpu[at]);
}

double
bench_window_seconds (const BenchWindowTimes *times)
{
  return (double) (times->wall[1].tv_sec - times->wall[0].tv_sec) +
         (double) (times->wall[1].tv_nsec - times->wall[0].tv_nsec) / 1e9;
}

static GArray *
make_writes (guint64 n)
{
  GArray *writes = g_array_sized_new (FALSE, TRUE, sizeof (Write), n);
  guint64 keys = MAX (n / 4, 1);

  g_array_set_clear_func (writes, write_clear);
  for (guint64 i = 0; i < n; i++)
    {
      Write write;

      write.key = g_strdup_printf ("k%06" G_GUINT64_FORMAT, (i * 7919) % keys);
      write.value = g_strdup_printf ("{\"event\":%" G_GUINT64_FORMAT ",\"qty\":%" G_GUINT64_FORMAT
                                     ",\"note\":\"bench\"}", i, i % 97);
      write.suid = qstore_suid_new_from_parts (FIRST_TICKS + i, 0, NULL);
      write.version = (gint64) i;
      g_array_append_val (writes, write);
    }
  return writes;
}

static QStoreValue
text_value (const char *text)
{
  QStoreValue value = { .type = QSTORE_VALUE_TEXT };

  value.bytes.data = (const guint8 *) text;
  value.bytes.len = strlen (text);
  return value;
}

static QStoreValue
integer_value (gint64 v)
{
  QStoreValue value = { .type = QSTORE_VALUE_INTEGER };

  value.integer = v;
  return value;
}

static gboolean
plain_upserts (QStoreDatabase  *db,
               GArray          *writes,
               GError         **error)
{
  QStoreCoordinator *coordinator = qstore_database_get_coordinator (db);
  QStoreTable *table = qstore_database_get_table (db, NULL, "bench_plain");

  for (guint i = 0; i < writes->len; i++)
    {
      Write *write = &g_array_index (writes, Write, i);
      QStoreValue values[6] = {
        integer_value (0), text_value (write->key), text_value (write->value),
        integer_value (write->version), text_value (write->suid), integer_value (0),
      };

      qstore_coordinator_begin (coordinator);
      if (!qstore_table_insert_values (table, values, QSTORE_CONFLICT_REPLACE, NULL, NULL, error))
        {
          qstore_coordinator_rollback (coordinator);
          return FALSE;
        }
      if (!qstore_coordinator_commit (coordinator, error))
        return FALSE;
    }
  return TRUE;
}

static gboolean
apply_all (QStoreUnsafeWindow  *window,
           GArray              *writes,
           const guint         *order,
           guint64             *n_applied,
           GError             **error)
{
  *n_applied = 0;
  for (guint i = 0; i < writes->len; i++)
    {
      Write *write = &g_array_index (writes, Write, order != NULL ? order[i] : i);
      g_autoptr(QStoreUnsafeEvent) event = NULL;
      g_autofree char *id = g_strdup_printf ("ev%" G_GINT64_FORMAT, write->version);
      QStoreUnsafeOutcome outcome;

      event = qstore_unsafe_event_new (id, write->suid);
      qstore_unsafe_event_set_updated_at (event, write->version);
      qstore_unsafe_event_add_upsert (event, write->key, write->value, write->version,
                                      write->suid);
      if (!qstore_unsafe_window_apply (window, event, &outcome, NULL, error))
        return FALSE;
      if (outcome == QSTORE_UNSAFE_OUTCOME_APPLIED)
        (*n_applied)++;
    }
  return TRUE;
}

static gboolean
read_pages (QStoreUnsafeWindow  *window,
            guint64              n_keys,
            guint64             *checksum,
            GError             **error)
{
  g_autoptr(GRand) rand = g_rand_new_with_seed (SEED);

  *checksum = 0;
  for (guint i = 0; i < N_PAGE_READS; i++)
    {
      guint offset = (guint) g_rand_int_range (rand, 0, (gint32) MIN (n_keys, G_MAXINT32));
      g_autoptr(GListModel) page = NULL;
      guint total;

      page = qstore_unsafe_window_query_composed_page (window, 0, PAGE_ROWS, offset, FALSE,
                                                       &total, error);
      if (page == NULL)
        return FALSE;
      for (guint j = 0; j < g_list_model_get_n_items (page); j++)
        {
          g_autoptr(QStoreUnsafeRow) row = g_list_model_get_item (page, j);

          *checksum += (guint64) qstore_unsafe_row_get_row_version (row);
        }
      if (total != n_keys)
        {
          g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_CORRUPT,
                       "The composed view has %u rows where the workload wrote %"
                       G_GUINT64_FORMAT " keys", total, n_keys);
          return FALSE;
        }
    }
  return TRUE;
}

gboolean
bench_window_run (const char       *uri,
                  guint64           n_events,
                  BenchWindowEmit   emit,
                  gpointer          data,
                  GError          **error)
{
  g_autoptr(QStoreDatabase) db = NULL;
  g_autoptr(QStoreUnsafeWindow) in_order = NULL;
  g_autoptr(QStoreUnsafeWindow) shuffled = NULL;
  g_autoptr(GArray) writes = make_writes (n_events);
  g_autofree guint *order = g_new (guint, n_events);
  g_autoptr(GRand) rand = g_rand_new_with_seed (SEED);
  guint64 n_keys = MIN (MAX (n_events / 4, 1), n_events);
  BenchWindowTimes times;
  double plain_seconds;
  guint64 n_applied;
  guint64 checksum;
  char extra[64];

  /* Untimed: the store, the plain table, both windows, the order. */
  if (!(db = qstore_database_open (uri, QSTORE_OPEN_NONE, error)) ||
      !qstore_database_exec (db, "CREATE TABLE bench_plain (generation INTEGER NOT NULL, "
                                 "row_key TEXT NOT NULL, value_json TEXT NOT NULL, "
                                 "row_version INTEGER NOT NULL, source_suid TEXT NOT NULL, "
                                 "tombstone INTEGER NOT NULL, PRIMARY KEY (generation, row_key))",
                             error) ||
      !(in_order = qstore_unsafe_window_new (db, "bench", error)) ||
      !(shuffled = qstore_unsafe_window_new (db, "shuffled", error)))
    return FALSE;
  for (guint i = 0; i < n_events; i++)
    order[i] = i;
  for (guint i = n_events; i > 1; i--)
    {
      guint j = (guint) g_rand_int_range (rand, 0, (gint32) i);
      guint t = order[i - 1];

      order[i - 1] = order[j];
      order[j] = t;
    }

  bench_window_stamp (&times, 0);
  if (!plain_upserts (db, writes, error))
    return FALSE;
  bench_window_stamp (&times, 1);
  plain_seconds = bench_window_seconds (&times);
  emit (data, "plain_upsert", n_events, &times, n_events, NULL);

  bench_window_stamp (&times, 0);
  if (!apply_all (in_order, writes, NULL, &n_applied, error))
    return FALSE;
  bench_window_stamp (&times, 1);
  g_snprintf (extra, sizeof extra, "\"vs_plain_upsert\":%.2f",
              plain_seconds > 0 ? bench_window_seconds (&times) / plain_seconds : 0.0);
  emit (data, "apply_in_order", n_events, &times, n_applied, extra);
  if (n_applied != n_events)
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_CORRUPT,
                   "%" G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT " events in SUID order "
                   "applied: every one should", n_applied, n_events);
      return FALSE;
    }

  bench_window_stamp (&times, 0);
  if (!apply_all (shuffled, writes, order, &n_applied, error))
    return FALSE;
  bench_window_stamp (&times, 1);
  g_snprintf (extra, sizeof extra, "\"vs_plain_upsert\":%.2f",
              plain_seconds > 0 ? bench_window_seconds (&times) / plain_seconds : 0.0);
  emit (data, "apply_shuffled", n_events, &times, n_applied, extra);

  bench_window_stamp (&times, 0);
  if (!read_pages (in_order, n_keys, &checksum, error))
    return FALSE;
  bench_window_stamp (&times, 1);
  g_snprintf (extra, sizeof extra, "\"page_rows\":%d,\"view_rows\":%" G_GUINT64_FORMAT,
              PAGE_ROWS, n_keys);
  emit (data, "composed_page", N_PAGE_READS, &times, checksum, extra);

  g_clear_object (&in_order);
  g_clear_object (&shuffled);
  return qstore_database_close (db, error);
}
