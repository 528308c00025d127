/* bench-mv.c: what materialized views cost (a benchmark, not a test)
 *
 * Usage: bench-mv [--rows N]… [--updates N] [--rounds N] [--views N] [--provider NAME]
 *
 * 1. A single-row UPDATE of a source with 0, 1 and 5 materialized views
 *    over it (the one view an inverse projection; the five: two inverse
 *    projections, two group recomputes, one full rebuild), for each
 *    source size given: in batches of 1000 per transaction (the cost of
 *    keeping the views, the commit amortized) and in autocommit (each
 *    statement its own synchronous commit), as microseconds per UPDATE
 *    and as a ratio to the cost with no view. The three stores take turns
 *    over --rounds rounds (the --updates spread over them) after a
 *    warm-up, and each keeps its best round.
 * 2. Reopening a store with --views views over the largest source, once
 *    adopting every view (after a clean close) and once refilling every
 *    view (the durable stale set and the clean-shutdown marker removed).
 *
 * Needs QSTORE_PLUGIN_DIR when run from the build tree.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include <qstore.h>

#include "qstore-test-util.h"

/* t(id, g, x, y): g groups ten rows, y spreads rows over 100 values. */
static void
fill (QStoreDatabase *db,
      guint           rows)
{
  g_autofree char *sql = NULL;

  test_exec (db, "CREATE TABLE t (id INTEGER PRIMARY KEY, g INT, x INT, y INT)");
  sql = g_strdup_printf ("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < %u) "
                         "INSERT INTO t SELECT i, i / 10, i %% 1000, i %% 100 FROM n", rows);
  test_exec (db, sql);
  test_exec (db, "CREATE INDEX t_g ON t (g)");
}

static const char * const five_views[] = {
  "CREATE MATERIALIZED VIEW inv1 AS SELECT id, x, y FROM t",
  "CREATE MATERIALIZED VIEW inv2 AS SELECT id, x * 2 AS x2 FROM t WHERE y < 50",
  "CREATE MATERIALIZED VIEW grp1 AS SELECT g, count(*) AS n, sum(x) AS sx FROM t GROUP BY g",
  "CREATE MATERIALIZED VIEW grp2 AS SELECT g, max(y) AS my FROM t GROUP BY g",
  "CREATE MATERIALIZED VIEW full1 AS SELECT count(*) AS n, sum(x) AS sx FROM t WHERE id <= 1000",
};

/* Microseconds per UPDATE: @batched in transactions of 1000, else each
 * in autocommit. */
static double
time_updates (QStoreDatabase *db,
              guint           rows,
              guint           updates,
              gboolean        batched)
{
  g_autoptr(GRand) rand = g_rand_new_with_seed (42);
  gint64 start = g_get_monotonic_time ();

  for (guint i = 0; i < updates; i++)
    {
      char sql[96];

      if (batched && i % 1000 == 0)
        test_exec (db, "BEGIN");
      g_snprintf (sql, sizeof sql, "UPDATE t SET x = x + 1 WHERE id = %d",
                  g_rand_int_range (rand, 1, rows + 1));
      test_exec (db, sql);
      if (batched && (i % 1000 == 999 || i + 1 == updates))
        test_exec (db, "COMMIT");
    }
  return (double) (g_get_monotonic_time () - start) / updates;
}

static void
bench_updates (const char *provider,
               guint       rows,
               guint       updates,
               guint       rounds)
{
  const guint n_views[3] = { 0, 1, 5 };
  QStoreDatabase *dbs[3];
  char *dirs[3];
  double batched[3] = { G_MAXDOUBLE, G_MAXDOUBLE, G_MAXDOUBLE };
  double single[3] = { G_MAXDOUBLE, G_MAXDOUBLE, G_MAXDOUBLE };
  guint per_round = MAX (updates / rounds, 1000);
  guint single_per_round = MAX (per_round / 10, 100);

  for (guint k = 0; k < 3; k++)
    {
      g_autoptr(GError) error = NULL;
      g_autofree char *uri = NULL;
      gint64 start;

      dirs[k] = g_dir_make_tmp ("qstore-bench-mv-XXXXXX", &error);
      uri = test_spec_uri (provider, dirs[k], "store");
      dbs[k] = test_open_database (uri, QSTORE_OPEN_NONE);
      fill (dbs[k], rows);
      /* The full rebuild reads 1000 rows, but its source is larger. */
      qstore_database_set_materialized_view_rebuild_row_threshold (dbs[k], G_MAXINT64);
      start = g_get_monotonic_time ();
      for (guint v = 0; v < n_views[k]; v++)
        test_exec (dbs[k], five_views[v]);
      if (n_views[k] > 0)
        fprintf (stderr, "  %u rows: creating %u view(s) took %.1f s\n", rows, n_views[k],
                 (g_get_monotonic_time () - start) / 1e6);
      /* Warm the caches. */
      time_updates (dbs[k], rows, per_round, TRUE);
    }

  /* The configurations take turns, and each keeps its best round: other
   * work on the machine only ever adds time. */
  for (guint round = 0; round < rounds; round++)
    for (guint k = 0; k < 3; k++)
      {
        batched[k] = MIN (batched[k], time_updates (dbs[k], rows, per_round, TRUE));
        single[k] = MIN (single[k], time_updates (dbs[k], rows, single_per_round, FALSE));
      }

  for (guint k = 0; k < 3; k++)
    {
      test_close_database (&dbs[k]);
      test_remove_tree (dirs[k]);
      g_free (dirs[k]);
    }

  printf ("%-9u  batched: %7.2f µs  %7.2f µs (%.2f×)  %7.2f µs (%.2f×)   "
          "autocommit: %7.1f µs  %7.1f µs (%.2f×)  %7.1f µs (%.2f×)\n",
          rows, batched[0], batched[1], batched[1] / batched[0], batched[2], batched[2] / batched[0],
          single[0], single[1], single[1] / single[0], single[2], single[2] / single[0]);
  fflush (stdout);
}

static double
time_open (const char *uri,
           guint      *n_adopted,
           guint      *n_refilled)
{
  gint64 start = g_get_monotonic_time ();
  QStoreDatabase *db = test_open_database (uri, QSTORE_OPEN_NONE);
  double ms = (g_get_monotonic_time () - start) / 1000.0;
  QStoreRehydrationResult *result = qstore_database_get_rehydration_result (db);

  *n_adopted = g_strv_length ((char **) qstore_rehydration_result_get_adopted_materialized_views (result));
  *n_refilled = g_strv_length ((char **) qstore_rehydration_result_get_refilled_materialized_views (result));
  if (qstore_rehydration_result_get_n_errors (result) > 0)
    g_error ("%s", qstore_rehydration_result_get_error_message (result, 0));
  test_close_database (&db);
  return ms;
}

static void
remove_meta (const char *uri,
             const char *name)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(QStoreProvider) provider = qstore_provider_new_for_uri (uri, QSTORE_OPEN_NONE, &error);
  g_autoptr(QStoreKV) catalog = NULL;
  g_autoptr(GBytes) key = qstore_catalog_key_for_meta (name);

  if (provider == NULL || !(catalog = qstore_provider_get_catalog_store (provider, &error)) ||
      !qstore_kv_delete (catalog, g_bytes_get_data (key, NULL), g_bytes_get_size (key),
                         QSTORE_WRITE_SYNC, &error))
    g_error ("%s", error->message);
  qstore_provider_close_all (provider);
}

static void
bench_reopen (const char *provider,
              guint       rows,
              guint       views)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("qstore-bench-mv-XXXXXX", &error);
  g_autofree char *uri = test_spec_uri (provider, dir, "store");
  QStoreDatabase *db = test_open_database (uri, QSTORE_OPEN_NONE);
  guint adopted = 0, refilled = 0;
  double ms_adopt, ms_refill;
  gint64 start;

  fill (db, rows);
  start = g_get_monotonic_time ();
  for (guint v = 0; v < views; v++)
    {
      g_autofree char *sql = NULL;

      /* Half group by an indexed column, half project one key range. */
      if (v % 2 == 0)
        sql = g_strdup_printf ("CREATE MATERIALIZED VIEW v%u AS SELECT g, count(*) AS n, sum(x) AS sx "
                               "FROM t WHERE y = %u GROUP BY g", v, v % 100);
      else
        sql = g_strdup_printf ("CREATE MATERIALIZED VIEW v%u AS SELECT id, x + %u AS x2 FROM t "
                               "WHERE id > %u AND id <= %u", v, v, v * 1000, v * 1000 + 1000);
      test_exec (db, sql);
    }
  fprintf (stderr, "  creating %u views over %u rows took %.1f s\n", views, rows,
           (g_get_monotonic_time () - start) / 1e6);
  test_close_database (&db);

  ms_adopt = time_open (uri, &adopted, &refilled);
  printf ("reopen, %u views over %u rows, adopted:  %9.1f ms (%u adopted, %u refilled)\n",
          views, rows, ms_adopt, adopted, refilled);
  fflush (stdout);

  remove_meta (uri, "stale_mvs");
  remove_meta (uri, "clean_shutdown");
  ms_refill = time_open (uri, &adopted, &refilled);
  printf ("reopen, %u views over %u rows, refilled: %9.1f ms (%u adopted, %u refilled)\n",
          views, rows, ms_refill, adopted, refilled);
  test_remove_tree (dir);
}

int
main (int    argc,
      char **argv)
{
  g_autoptr(GArray) sizes = g_array_new (FALSE, FALSE, sizeof (guint));
  g_autofree char *provider = g_strdup ("lmdb");
  guint updates = 20000;
  guint rounds = 5;
  guint views = 100;
  guint largest = 0;

  for (int i = 1; i + 1 < argc; i += 2)
    {
      guint value = (guint) g_ascii_strtoull (argv[i + 1], NULL, 10);

      if (g_str_equal (argv[i], "--rows"))
        g_array_append_val (sizes, value);
      else if (g_str_equal (argv[i], "--updates"))
        updates = value;
      else if (g_str_equal (argv[i], "--views"))
        views = value;
      else if (g_str_equal (argv[i], "--rounds"))
        rounds = MAX (value, 1);
      else if (g_str_equal (argv[i], "--provider"))
        {
          g_free (provider);
          provider = g_strdup (argv[i + 1]);
        }
      else
        {
          fprintf (stderr, "Usage: %s [--rows N]… [--updates N] [--rounds N] [--views N] [--provider NAME]\n",
                   argv[0]);
          return 2;
        }
    }
  if (sizes->len == 0)
    {
      guint defaults[] = { 100000, 1000000 };

      g_array_append_vals (sizes, defaults, G_N_ELEMENTS (defaults));
    }

  printf ("provider %s; single-row UPDATE cost with 0 / 1 / 5 materialized views\n", provider);
  printf ("rows       batched (1000 per transaction): 0 / 1 / 5 views        "
          "autocommit: 0 / 1 / 5 views\n");
  for (guint i = 0; i < sizes->len; i++)
    {
      bench_updates (provider, g_array_index (sizes, guint, i), updates, rounds);
      largest = MAX (largest, g_array_index (sizes, guint, i));
    }
  if (views > 0)
    bench_reopen (provider, largest, views);
  return 0;
}
