/* qstore-bench-replica.c: what live queries cost the replica's writer
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The workload, all in one run on one store opened as a QStoreReplica
 * with one worker per core; the thread that runs it is the consumer, and
 * reads every event as it comes:
 *
 * - a table `bench(id INTEGER PRIMARY KEY, name TEXT, score INTEGER)` of
 *   10,000 rows (score = id * 7919 mod 100000), loaded untimed, then
 *   2,000 untimed one-row commits (see below);
 * - live query i (0 ≤ i < 100) is `SELECT id, name, score FROM bench
 *   WHERE score % 100 = i`: a one-row change moves its row out of one and
 *   into another;
 * - progressed_latency: with the 100 queries registered, 1,000
 *   transactions of one `UPDATE bench SET score = ? WHERE id = ?` (a
 *   splitmix64 stream seeded with 42 draws both); for each, the time from
 *   the call of commit to the last [signal@Replica::progressed] of it
 *   (every worker reports): median and p99, and the same from the return
 *   of commit;
 * - write_q0, write_q10, write_q100: 2,000 such transactions with 0, 10
 *   and 100 of the queries registered, until every event of them was
 *   delivered; each line carries "vs_q0", its throughput over write_q0's;
 * - large_txn: one transaction inserting --rows rows (one statement
 *   each) into a table of their own, which 10 live queries read; the
 *   resident set (VmRSS, and RssAnon, its part no file backs) is sampled
 *   every 10 ms from before it began to its commit, and the writer's
 *   capture buffer after each 1,024 rows.
 *   The writer keeps at most the replica's write-out step of it in memory
 *   (--write-out-step), which the line reports.
 */
#include "config.h"

#include <string.h>

#include <qstore.h>

#include "qstore-bench-replica.h"
#include "qstore-replica-private.h"

#define SEED             42
#define TABLE_ROWS       10000
#define SCORE_MOD        100000
#define SCORE_FACTOR     7919
#define N_QUERIES        100
#define N_LATENCY_TXNS   1000
#define N_WRITE_TXNS     2000
#define N_LARGE_QUERIES  10
#define PROGRESS_TIMEOUT_US (10 * G_USEC_PER_SEC)

typedef struct
{
  QStoreReplica *replica;
  guint64       *progressed;   /* per worker: the last transaction it reported */
  gint64        *progressed_at; /* per worker: when (ns, monotonic) */
  guint64        n_events;
  guint64        n_rows;        /* rows of hydrated and changed events */
} Consumer;

typedef struct
{
  gint          stop;
  gint64        peak;
  gint64        anon_peak;
  GThread      *thread;
} Sampler;

static guint64
splitmix64 (guint64 *state)
{
  guint64 z = (*state += G_GUINT64_CONSTANT (0x9E3779B97F4A7C15));

  z = (z ^ (z >> 30)) * G_GUINT64_CONSTANT (0xBF58476D1CE4E5B9);
  z = (z ^ (z >> 27)) * G_GUINT64_CONSTANT (0x94D049BB133111EB);
  return z ^ (z >> 31);
}

static gint64
now_ns (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (gint64) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The resident set, from /proc/self/status, in bytes (0 if unknown):
 * all of it (VmRSS), and in *@anon what no file backs (RssAnon). The
 * providers map their files, and pages of those read count in VmRSS
 * although the kernel may drop them at any time. */
static gint64
resident_bytes (gint64 *anon)
{
  g_autofree char *text = NULL;
  const char *line;

  if (!g_file_get_contents ("/proc/self/status", &text, NULL, NULL) ||
      (line = strstr (text, "VmRSS:")) == NULL)
    return 0;
  if (anon != NULL)
    {
      const char *anon_line = strstr (text, "RssAnon:");

      *anon = anon_line != NULL
              ? (gint64) g_ascii_strtoull (anon_line + strlen ("RssAnon:"), NULL, 10) * 1024
              : 0;
    }
  return (gint64) g_ascii_strtoull (line + strlen ("VmRSS:"), NULL, 10) * 1024;
}

static gpointer
sample (gpointer data)
{
  Sampler *sampler = data;

  while (!g_atomic_int_get (&sampler->stop))
    {
      gint64 anon = 0;
      gint64 rss = resident_bytes (&anon);

      if (rss > sampler->peak)
        sampler->peak = rss;
      if (anon > sampler->anon_peak)
        sampler->anon_peak = anon;
      g_usleep (10 * 1000);
    }
  return NULL;
}

/* The consumer */

static void
on_hydrated (QStoreReplica *replica,
             guint64        query,
             guint64        tx,
             GVariant      *rows,
             Consumer      *consumer)
{
  consumer->n_events++;
  consumer->n_rows += g_variant_n_children (rows);
}

static void
on_changed (QStoreReplica *replica,
            guint64        query,
            guint64        tx,
            GVariant      *removed,
            GVariant      *added,
            Consumer      *consumer)
{
  consumer->n_events++;
  consumer->n_rows += g_variant_n_children (removed) + g_variant_n_children (added);
}

static void
on_progressed (QStoreReplica *replica,
               guint          worker,
               guint64        tx,
               Consumer      *consumer)
{
  consumer->n_events++;
  consumer->progressed[worker] = tx;
  consumer->progressed_at[worker] = now_ns ();
}

static void
on_faulted (QStoreReplica *replica,
            guint64        query,
            const char    *reason,
            Consumer      *consumer)
{
  g_printerr ("qstore-bench: live query %" G_GUINT64_FORMAT " faulted: %s\n", query, reason);
  consumer->n_events++;
}

/* Runs the main context until every worker reported @tx; the time of the
 * last report. */
static gboolean
wait_progressed (Consumer  *consumer,
                 guint64    tx,
                 gint64    *at,
                 GError   **error)
{
  guint n_workers = qstore_replica_get_n_workers (consumer->replica);
  gint64 deadline = g_get_monotonic_time () + PROGRESS_TIMEOUT_US;

  for (;;)
    {
      guint w;

      for (w = 0; w < n_workers && consumer->progressed[w] >= tx; w++)
        ;
      if (w == n_workers)
        break;
      if (g_get_monotonic_time () > deadline)
        {
          g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_IO,
                       "Worker %u did not report transaction %" G_GUINT64_FORMAT
                       " within 10 s", w, tx);
          return FALSE;
        }
      g_main_context_iteration (NULL, TRUE);
    }
  *at = 0;
  for (guint w = 0; w < n_workers; w++)
    *at = MAX (*at, consumer->progressed_at[w]);
  return TRUE;
}

static gboolean
register_queries (QStoreReplica  *replica,
                  const char     *table,
                  guint           first,
                  guint           n,
                  GError        **error)
{
  for (guint i = first; i < first + n; i++)
    {
      g_autofree char *sql = g_strdup_printf ("SELECT id, name, score FROM %s WHERE score %% %u = %u",
                                              table, N_QUERIES, i % N_QUERIES);

      if (!qstore_replica_register_query (replica, i, sql, NULL, error))
        return FALSE;
    }
  return qstore_replica_sync (replica, error);
}

static void
destroy_queries (QStoreReplica *replica,
                 guint          n)
{
  for (guint i = 0; i < n; i++)
    qstore_replica_destroy_query (replica, i);
}

static gboolean
load (QStoreReplica  *replica,
      GError        **error)
{
  g_autoptr(QStoreReplicaTxn) txn = qstore_replica_begin_write (replica, error);

  if (txn == NULL)
    return FALSE;
  for (gint64 id = 0; id < TABLE_ROWS; id++)
    {
      g_autofree char *name = g_strdup_printf ("name-%08" G_GINT64_FORMAT, id);

      if (qstore_replica_txn_exec (txn, "INSERT INTO bench VALUES (?, ?, ?)",
                                   g_variant_new ("(xsx)", id, name,
                                                  id * SCORE_FACTOR % SCORE_MOD),
                                   error) < 0)
        return FALSE;
    }
  return qstore_replica_txn_commit (txn, error) != 0;
}

/* One transaction of one row update; its id. */
static guint64
update_one (QStoreReplica  *replica,
            guint64        *rng,
            gint64         *returned,
            GError        **error)
{
  g_autoptr(QStoreReplicaTxn) txn = qstore_replica_begin_write (replica, error);
  gint64 id = (gint64) (splitmix64 (rng) % TABLE_ROWS);
  gint64 score = (gint64) (splitmix64 (rng) % SCORE_MOD);
  guint64 tx;

  if (txn == NULL ||
      qstore_replica_txn_exec (txn, "UPDATE bench SET score = ? WHERE id = ?",
                               g_variant_new ("(xx)", score, id), error) != 1)
    {
      if (error != NULL && *error == NULL)
        g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_IO, "Row %" G_GINT64_FORMAT
                     " of the bench table is missing", id);
      return 0;
    }
  tx = qstore_replica_txn_commit (txn, error);
  if (returned != NULL)
    *returned = now_ns ();
  return tx;
}

static int
compare_gint64 (gconstpointer a,
                gconstpointer b)
{
  gint64 x = *(const gint64 *) a, y = *(const gint64 *) b;

  return x < y ? -1 : x > y;
}

/* The value below which @fraction of @values (sorted) lie, in µs. */
static double
quantile_us (GArray *values,
             double  fraction)
{
  guint i = MIN ((guint) (fraction * values->len), values->len - 1);

  return g_array_index (values, gint64, i) / 1000.0;
}

/* Untimed commits before the timed ones: the store grows its files and
 * free lists over its first thousands of commits, which the first timed
 * phase would otherwise pay alone. */
static gboolean
warm_up (Consumer  *consumer,
         guint64   *rng,
         GError   **error)
{
  for (guint i = 0; i < N_WRITE_TXNS; i++)
    if (update_one (consumer->replica, rng, NULL, error) == 0)
      return FALSE;
  return TRUE;
}

static gboolean
phase_latency (Consumer         *consumer,
               guint64          *rng,
               BenchWindowEmit   emit,
               gpointer          data,
               GError          **error)
{
  g_autoptr(GArray) from_call = g_array_sized_new (FALSE, FALSE, sizeof (gint64), N_LATENCY_TXNS);
  g_autoptr(GArray) from_return = g_array_sized_new (FALSE, FALSE, sizeof (gint64), N_LATENCY_TXNS);
  g_autofree char *extra = NULL;
  BenchWindowTimes times;

  if (!register_queries (consumer->replica, "bench", 0, N_QUERIES, error))
    return FALSE;
  while (g_main_context_iteration (NULL, FALSE))
    ;
  bench_window_stamp (&times, 0);
  for (guint i = 0; i < N_LATENCY_TXNS; i++)
    {
      gint64 called = now_ns (), returned = 0, reported = 0;
      guint64 tx = update_one (consumer->replica, rng, &returned, error);

      if (tx == 0 || !wait_progressed (consumer, tx, &reported, error))
        return FALSE;
      g_array_append_val (from_call, (gint64) { reported - called });
      g_array_append_val (from_return, (gint64) { MAX (reported - returned, 0) });
    }
  bench_window_stamp (&times, 1);
  g_array_sort (from_call, compare_gint64);
  g_array_sort (from_return, compare_gint64);
  extra = g_strdup_printf ("\"live_queries\":%u,\"median_us\":%.1f,\"p99_us\":%.1f,"
                           "\"max_us\":%.1f,\"after_commit_median_us\":%.1f,"
                           "\"after_commit_p99_us\":%.1f",
                           N_QUERIES, quantile_us (from_call, 0.5), quantile_us (from_call, 0.99),
                           quantile_us (from_call, 1.0), quantile_us (from_return, 0.5),
                           quantile_us (from_return, 0.99));
  emit (data, "progressed_latency", N_LATENCY_TXNS, &times, consumer->n_events, extra);
  destroy_queries (consumer->replica, N_QUERIES);
  return TRUE;
}

static gboolean
phase_write (Consumer         *consumer,
             guint64          *rng,
             guint             n_queries,
             double           *q0_rate,
             BenchWindowEmit   emit,
             gpointer          data,
             GError          **error)
{
  g_autofree char *phase = g_strdup_printf ("write_q%u", n_queries);
  g_autofree char *extra = NULL;
  BenchWindowTimes times;
  guint64 events_before;
  double rate;

  if (!register_queries (consumer->replica, "bench", 0, n_queries, error))
    return FALSE;
  while (g_main_context_iteration (NULL, FALSE))
    ;
  events_before = consumer->n_events;
  bench_window_stamp (&times, 0);
  for (guint i = 0; i < N_WRITE_TXNS; i++)
    {
      if (update_one (consumer->replica, rng, NULL, error) == 0)
        return FALSE;
      while (g_main_context_iteration (NULL, FALSE))
        ;
    }
  if (!qstore_replica_sync (consumer->replica, error))
    return FALSE;
  while (g_main_context_iteration (NULL, FALSE))
    ;
  bench_window_stamp (&times, 1);

  rate = N_WRITE_TXNS / bench_window_seconds (&times);
  if (n_queries == 0)
    *q0_rate = rate;
  extra = g_strdup_printf ("\"live_queries\":%u,\"events\":%" G_GUINT64_FORMAT ",\"vs_q0\":%.3f",
                           n_queries, consumer->n_events - events_before, rate / *q0_rate);
  emit (data, phase, N_WRITE_TXNS, &times, consumer->n_events - events_before, extra);
  destroy_queries (consumer->replica, n_queries);
  return TRUE;
}

static gboolean
phase_large_txn (Consumer         *consumer,
                 guint64           n_rows,
                 BenchWindowEmit   emit,
                 gpointer          data,
                 GError          **error)
{
  g_autoptr(QStoreReplicaTxn) txn = NULL;
  g_autoptr(QStoreReplicaCommitInfo) info = NULL;
  g_autofree char *extra = NULL;
  Sampler sampler = { 0 };
  BenchWindowTimes times;
  gint64 baseline;
  gint64 anon_baseline = 0;
  guint max_capture = 0;

  if (!qstore_replica_exec_ddl (consumer->replica,
                                "CREATE TABLE big (id INTEGER PRIMARY KEY, name TEXT, "
                                "score INTEGER)", error) ||
      !register_queries (consumer->replica, "big", 0, N_LARGE_QUERIES, error))
    return FALSE;
  while (g_main_context_iteration (NULL, FALSE))
    ;

  baseline = resident_bytes (&anon_baseline);
  sampler.peak = baseline;
  sampler.anon_peak = anon_baseline;
  sampler.thread = g_thread_new ("rss", sample, &sampler);
  bench_window_stamp (&times, 0);
  if (!(txn = qstore_replica_begin_write (consumer->replica, error)))
    goto out;
  for (guint64 id = 0; id < n_rows; id++)
    {
      char name[32];

      g_snprintf (name, sizeof name, "name-%08" G_GUINT64_FORMAT, id);
      if (qstore_replica_txn_exec (txn, "INSERT INTO big VALUES (?, ?, ?)",
                                   g_variant_new ("(xsx)", (gint64) id, name,
                                                  (gint64) (id * SCORE_FACTOR % SCORE_MOD)),
                                   error) < 0)
        goto out;
      if (id % QSTORE_REPLICA_CHUNK_ROWS == QSTORE_REPLICA_CHUNK_ROWS - 1)
        {
          max_capture = MAX (max_capture, qstore_replica_test_get_capture_length (txn));
          /* The consumer keeps reading while the transaction runs. */
          while (g_main_context_iteration (NULL, FALSE))
            ;
        }
    }
  max_capture = MAX (max_capture, qstore_replica_test_get_capture_length (txn));
  info = qstore_replica_txn_commit_with_info (txn, error);

out:
  g_atomic_int_set (&sampler.stop, TRUE);
  g_thread_join (sampler.thread);
  if (info == NULL)
    return FALSE;
  if (!qstore_replica_sync (consumer->replica, error))
    return FALSE;
  while (g_main_context_iteration (NULL, FALSE))
    ;
  bench_window_stamp (&times, 1);

  extra = g_strdup_printf ("\"live_queries\":%u,\"rss_before_kib\":%" G_GINT64_FORMAT
                           ",\"rss_peak_kib\":%" G_GINT64_FORMAT ",\"rss_growth_kib\":%"
                           G_GINT64_FORMAT ",\"anon_growth_kib\":%" G_GINT64_FORMAT
                           ",\"max_capture_rows\":%u,\"chunks\":%u"
                           ",\"write_out_step\":%" G_GUINT64_FORMAT,
                           N_LARGE_QUERIES, baseline / 1024, sampler.peak / 1024,
                           (sampler.peak - baseline) / 1024,
                           (sampler.anon_peak - anon_baseline) / 1024, max_capture,
                           qstore_replica_commit_info_get_n_chunks (info),
                           qstore_replica_get_write_out_step (consumer->replica));
  emit (data, "large_txn", n_rows, &times, qstore_replica_commit_info_get_n_changes (info), extra);
  destroy_queries (consumer->replica, N_LARGE_QUERIES);
  return TRUE;
}

gboolean
bench_replica_run (const char       *uri,
                   guint64           n_rows,
                   guint64           write_out_step,
                   BenchWindowEmit   emit,
                   gpointer          data,
                   GError          **error)
{
  g_autoptr(QStoreReplica) replica = NULL;
  g_autofree guint64 *progressed = NULL;
  g_autofree gint64 *progressed_at = NULL;
  Consumer consumer = { NULL };
  guint64 rng = SEED;
  double q0_rate = 0;
  gboolean ok;

  if (!(replica = qstore_replica_open (uri, 0, 0, error)) ||
      (write_out_step != 0 && !qstore_replica_set_write_out_step (replica, write_out_step, error)))
    return FALSE;
  progressed = g_new0 (guint64, qstore_replica_get_n_workers (replica));
  progressed_at = g_new0 (gint64, qstore_replica_get_n_workers (replica));
  consumer = (Consumer) { replica, progressed, progressed_at, 0, 0 };
  g_signal_connect (replica, "hydrated", G_CALLBACK (on_hydrated), &consumer);
  g_signal_connect (replica, "changed", G_CALLBACK (on_changed), &consumer);
  g_signal_connect (replica, "progressed", G_CALLBACK (on_progressed), &consumer);
  g_signal_connect (replica, "faulted", G_CALLBACK (on_faulted), &consumer);

  ok = qstore_replica_exec_ddl (replica, "CREATE TABLE bench (id INTEGER PRIMARY KEY, "
                                "name TEXT, score INTEGER)", error) &&
       load (replica, error) &&
       warm_up (&consumer, &rng, error) &&
       phase_latency (&consumer, &rng, emit, data, error) &&
       phase_write (&consumer, &rng, 0, &q0_rate, emit, data, error) &&
       phase_write (&consumer, &rng, 10, &q0_rate, emit, data, error) &&
       phase_write (&consumer, &rng, 100, &q0_rate, emit, data, error) &&
       phase_large_txn (&consumer, n_rows, emit, data, error);

  g_signal_handlers_disconnect_by_data (replica, &consumer);
  if (!qstore_replica_close (replica, ok ? error : NULL))
    ok = FALSE;
  return ok;
}
