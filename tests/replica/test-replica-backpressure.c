/* test-replica-backpressure.c: a slow consumer holds the writer back
 *
 * The thread that opened the replica is the consumer: it stops reading
 * events for QSTORE_STALL_MS (5 s by default) while another thread makes
 * QSTORE_BACKPRESSURE_CHANGES row changes (100,000 by default). The queue fills, the workers wait, the writer
 * waits for them: memory (the process's resident set, sampled all along)
 * stays bounded instead of holding every event. Then the consumer reads
 * again, and what it holds of every query is what the query gives: no
 * event was lost.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "replica-test-util.h"

#define N_ROWS     2048
#define N_QUERIES  4
#define N_CHANGES  100000

typedef struct
{
  TestReplica   t;
  GHashTable   *views[N_QUERIES];     /* row text → count */
  GPtrArray    *pending[N_QUERIES];   /* GVariant (ttaavaav), as changed gives it */
  guint64       n_rows_delivered;
  gint          stop_sampling;
  gint64        peak_rss;
  gboolean      writer_done;
  GError       *writer_error;
} Fixture;

static const char * const queries[N_QUERIES] = {
  "SELECT id, v FROM t WHERE v % 2 = 0",
  "SELECT id, v FROM t WHERE v % 2 = 1",
  "SELECT id, v FROM t WHERE id % 3 = 0",
  "SELECT id, v FROM t",
};

/* A field of /proc/self/status, in bytes ("VmRSS", "VmHWM"). */
static gint64
status_bytes (const char *field)
{
  g_autofree char *text = NULL;
  g_autofree char *prefix = g_strconcat (field, ":", NULL);
  const char *line;

  if (!g_file_get_contents ("/proc/self/status", &text, NULL, NULL) ||
      (line = strstr (text, prefix)) == NULL)
    g_error ("/proc/self/status has no %s", field);
  return (gint64) g_ascii_strtoull (line + strlen (prefix), NULL, 10) * 1024;
}

static gint64
resident_bytes (void)
{
  return status_bytes ("VmRSS");
}

static gpointer
sample (gpointer data)
{
  Fixture *f = data;

  while (!g_atomic_int_get (&f->stop_sampling))
    {
      gint64 rss = resident_bytes ();

      if (rss > f->peak_rss)
        f->peak_rss = rss;
      g_usleep (20 * 1000);
    }
  return NULL;
}

/* The row changes: every row's value moves, N_ROWS at a time, each
 * transaction large enough to stream. */
static gpointer
write_changes (gpointer data)
{
  Fixture *f = data;

  const char *env = g_getenv ("QSTORE_BACKPRESSURE_CHANGES");
  guint n_changes = env != NULL ? (guint) g_ascii_strtoull (env, NULL, 10) : N_CHANGES;

  for (guint done = 0; done < n_changes && f->writer_error == NULL; done += N_ROWS)
    {
      g_autoptr(QStoreReplicaTxn) txn = qstore_replica_begin_write (f->t.replica, &f->writer_error);

      if (txn == NULL ||
          qstore_replica_txn_exec (txn, "UPDATE t SET v = v + 1", NULL, &f->writer_error) < 0 ||
          qstore_replica_txn_commit (txn, &f->writer_error) == 0)
        break;
    }
  g_atomic_int_set (&f->writer_done, TRUE);
  g_main_context_wakeup (NULL);
  return NULL;
}

static void
view_apply (GHashTable *view,
            GVariant   *rows,
            gint        delta)
{
  for (gsize i = 0; i < g_variant_n_children (rows); i++)
    {
      g_autoptr(GVariant) row = g_variant_get_child_value (rows, i);
      char *text = g_variant_print (row, FALSE);
      gint count = GPOINTER_TO_INT (g_hash_table_lookup (view, text)) + delta;

      if (count == 0)
        g_hash_table_remove (view, text);
      else
        g_hash_table_insert (view, g_strdup (text), GINT_TO_POINTER (count));
      g_free (text);
    }
}

static void
on_hydrated (QStoreReplica *replica,
             guint64        query,
             guint64        tx,
             GVariant      *rows,
             Fixture       *f)
{
  view_apply (f->views[query], rows, 1);
}

static void
on_changed (QStoreReplica *replica,
            guint64        query,
            guint64        tx,
            GVariant      *removed,
            GVariant      *added,
            Fixture       *f)
{
  g_ptr_array_add (f->pending[query], g_variant_ref_sink (g_variant_new ("(t@aav@aav)", tx, removed, added)));
  f->n_rows_delivered += g_variant_n_children (removed) + g_variant_n_children (added);
}

static void
on_progressed (QStoreReplica *replica,
               guint          worker,
               guint64        tx,
               Fixture       *f)
{
  for (guint q = 0; q < N_QUERIES; q++)
    {
      GPtrArray *pending = f->pending[q];
      guint kept = 0;

      if (qstore_replica_get_worker_for_query (replica, q) != worker)
        continue;
      for (guint i = 0; i < pending->len; i++)
        {
          GVariant *slice = pending->pdata[i];
          g_autoptr(GVariant) removed = NULL;
          g_autoptr(GVariant) added = NULL;
          guint64 slice_tx;

          g_variant_get (slice, "(t@aav@aav)", &slice_tx, &removed, &added);
          if (slice_tx > tx)
            {
              pending->pdata[kept++] = slice;
              continue;
            }
          view_apply (f->views[q], removed, -1);
          view_apply (f->views[q], added, 1);
          g_variant_unref (slice);
        }
      pending->len = kept;
    }
}

static void
on_faulted (QStoreReplica *replica,
            guint64        query,
            const char    *reason,
            Fixture       *f)
{
  g_error ("Live query %" G_GUINT64_FORMAT " faulted: %s", query, reason);
}

static void
test_slow_consumer (Fixture       *f,
                    gconstpointer  data)
{
  const char *env = g_getenv ("QSTORE_STALL_MS");
  guint stall_ms = env != NULL ? (guint) g_ascii_strtoull (env, NULL, 10) : 5000;
  g_autoptr(QStoreReplicaTxn) seed = NULL;
  GThread *writer, *sampler;
  gint64 baseline, stall_end;
  guint queued_during_stall;

  seed = test_txn_begin (f->t.replica);
  for (gint64 id = 0; id < N_ROWS; id++)
    test_txn_exec (seed, "INSERT INTO t VALUES (?, ?)", g_variant_new ("(xx)", id, id));
  test_txn_commit (seed);
  for (guint q = 0; q < N_QUERIES; q++)
    test_register (f->t.replica, q, queries[q]);
  test_drain (f->t.replica);

  baseline = resident_bytes ();
  f->peak_rss = baseline;
  sampler = g_thread_new ("sampler", sample, f);
  writer = g_thread_new ("writer", write_changes, f);

  /* The consumer stops reading. */
  g_usleep ((gulong) stall_ms * 1000);
  stall_end = g_get_monotonic_time ();
  queued_during_stall = qstore_replica_test_get_queued_events (f->t.replica);
  g_assert_false (g_atomic_int_get (&f->writer_done));

  /* And reads again. */
  while (!g_atomic_int_get (&f->writer_done))
    g_main_context_iteration (NULL, TRUE);
  g_thread_join (writer);
  g_assert_no_error (f->writer_error);
  test_drain (f->t.replica);
  g_atomic_int_set (&f->stop_sampling, TRUE);
  g_thread_join (sampler);

  g_test_message ("queue held %u events at the end of the stall; resident set %" G_GINT64_FORMAT
                  " MiB before, at most %" G_GINT64_FORMAT " MiB during; %" G_GUINT64_FORMAT
                  " rows delivered; %.1f s after the stall",
                  queued_during_stall, baseline >> 20, f->peak_rss >> 20, f->n_rows_delivered,
                  (g_get_monotonic_time () - stall_end) / (double) G_USEC_PER_SEC);
  /* The queue was full, and held no more. */
  g_assert_cmpuint (queued_during_stall, <=, qstore_replica_get_queue_length (f->t.replica));
  g_assert_cmpuint (queued_during_stall, >, 0);
  /* Bounded: far less than the events of 100,000 changes to 4 queries. */
  g_assert_cmpint (f->peak_rss - baseline, <, 48 << 20);

  for (guint q = 0; q < N_QUERIES; q++)
    {
      g_autoptr(GHashTable) fresh = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
      g_autoptr(GError) error = NULL;
      g_autoptr(QStoreResult) result = qstore_replica_query (f->t.replica, queries[q], NULL, &error);
      g_autoptr(GVariant) rows = NULL;
      GHashTableIter iter;
      gpointer row, count;

      g_assert_no_error (error);
      g_assert_cmpuint (f->pending[q]->len, ==, 0);
      rows = test_result_rows (result);
      view_apply (fresh, rows, 1);
      g_assert_cmpuint (g_hash_table_size (fresh), ==, g_hash_table_size (f->views[q]));
      g_hash_table_iter_init (&iter, fresh);
      while (g_hash_table_iter_next (&iter, &row, &count))
        g_assert_cmpint (GPOINTER_TO_INT (g_hash_table_lookup (f->views[q], row)), ==,
                         GPOINTER_TO_INT (count));
    }
}

static void
set_up (Fixture       *f,
        gconstpointer  data)
{
  test_replica_set_up_with (&f->t, 2, 32);
  /* The fixture's recorder keeps every event it hears: this consumer
   * keeps only what its queries hold. */
  test_recorder_clear (&f->t.rec);
  test_ddl (f->t.replica, "CREATE TABLE t (id INTEGER PRIMARY KEY, v INTEGER)");
  for (guint q = 0; q < N_QUERIES; q++)
    {
      f->views[q] = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
      f->pending[q] = g_ptr_array_new_with_free_func ((GDestroyNotify) g_variant_unref);
    }
  g_signal_connect (f->t.replica, "hydrated", G_CALLBACK (on_hydrated), f);
  g_signal_connect (f->t.replica, "changed", G_CALLBACK (on_changed), f);
  g_signal_connect (f->t.replica, "progressed", G_CALLBACK (on_progressed), f);
  g_signal_connect (f->t.replica, "faulted", G_CALLBACK (on_faulted), f);
}

static void
tear_down (Fixture       *f,
           gconstpointer  data)
{
  g_signal_handlers_disconnect_by_data (f->t.replica, f);
  test_replica_tear_down (&f->t);
  for (guint q = 0; q < N_QUERIES; q++)
    {
      g_hash_table_unref (f->views[q]);
      g_ptr_array_unref (f->pending[q]);
    }
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);
  g_test_add ("/replica/slow-consumer", Fixture, NULL, set_up, test_slow_consumer, tear_down);
  return g_test_run ();
}
