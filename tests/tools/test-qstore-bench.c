/* test-qstore-bench.c: qstore-bench computes what the baseline computes
 *
 * Usage: test-qstore-bench [--tap] PATH-TO-QSTORE-BENCH
 *
 * A correctness test, not a timing one: every provider, at every layer
 * (key/value, table, SQL), must produce the checksums the raw LMDB and raw
 * SQLite programs of bench-baseline print for the same row count.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include <gio/gio.h>
#include <json-glib/json-glib.h>

#include "qstore-test-util.h"

#define ROWS 2000

/* Printed by bench-baseline's raw_lmdb and raw_sqlite for --rows 2000. */
#define BASELINE_LOAD_CHECKSUM      G_GUINT64_CONSTANT (99781000)
#define BASELINE_GET_CHECKSUM       G_GUINT64_CONSTANT (104958084)
#define BASELINE_SCAN_VISITED       G_GUINT64_CONSTANT (194)
#define BASELINE_SCAN_ROW_SUM       G_GUINT64_CONSTANT (9369919)
#define BASELINE_SMALL_TXN_CHECKSUM G_GUINT64_CONSTANT (500105000)

static const char *bench_path;

typedef struct
{
  const char *provider;
  const char *layer;
} Case;

static TestRun *
run_bench (const char * const *args)
{
  TestRun *r = test_run_programv (bench_path, NULL, NULL, args);

  if (r->err[0] != '\0')
    g_test_message ("stderr: %s", r->err);
  return r;
}

static guint
count_entries (const char *path)
{
  g_autoptr(GDir) dir = g_dir_open (path, 0, NULL);
  guint n = 0;

  g_assert_nonnull (dir);
  while (g_dir_read_name (dir) != NULL)
    n++;
  return n;
}

/* The workload's formulas, written out independently of qstore-bench. */
static guint64
score_sum (guint64 first,
           guint64 count)
{
  guint64 sum = 0;

  for (guint64 id = first; id < first + count; id++)
    sum += (id * 7919) % 100000;
  return sum;
}

/* The JSON objects of the lines of @out, in order. */
static GPtrArray *
parse_objects (const char *out)
{
  GPtrArray *objects = g_ptr_array_new_with_free_func ((GDestroyNotify) json_object_unref);
  g_auto(GStrv) lines = g_strsplit (out, "\n", -1);

  for (guint i = 0; lines[i] != NULL; i++)
    {
      g_autoptr(JsonParser) parser = json_parser_new ();
      g_autoptr(GError) error = NULL;

      if (lines[i][0] == '\0')
        continue;
      json_parser_load_from_data (parser, lines[i], -1, &error);
      g_assert_no_error (error);
      g_assert_true (JSON_NODE_HOLDS_OBJECT (json_parser_get_root (parser)));
      g_ptr_array_add (objects, json_object_ref (json_node_get_object (json_parser_get_root (parser))));
    }
  return objects;
}

/* Parses the JSON lines; returns the phase objects by name. */
static GHashTable *
parse_lines (const char *out,
             GPtrArray  *order)
{
  GHashTable *phases = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                              (GDestroyNotify) json_object_unref);
  g_autoptr(GPtrArray) objects = parse_objects (out);

  for (guint i = 0; i < objects->len; i++)
    {
      JsonObject *object = g_ptr_array_index (objects, i);

      g_ptr_array_add (order, g_strdup (json_object_get_string_member (object, "phase")));
      g_hash_table_insert (phases, g_strdup (json_object_get_string_member (object, "phase")),
                           json_object_ref (object));
    }
  return phases;
}

static void
check_common (JsonObject *phase,
              const char *engine,
              gint64      ops)
{
  g_assert_cmpstr (json_object_get_string_member (phase, "engine"), ==, engine);
  g_assert_cmpint (json_object_get_int_member (phase, "rows"), ==, ROWS);
  g_assert_cmpint (json_object_get_int_member (phase, "ops"), ==, ops);
  g_assert_cmpint (json_object_get_int_member (phase, "run"), ==, 1);
  g_assert_true (json_object_has_member (phase, "seconds"));
  g_assert_true (json_object_has_member (phase, "ops_per_sec"));
  g_assert_true (json_object_has_member (phase, "cpu_seconds"));
  g_assert_cmpfloat (json_object_get_double_member (phase, "seconds"), >=, 0);
  g_assert_cmpint (json_object_get_int_member (phase, "peak_rss_kib"), >, 0);
}

static void
test_workload (gconstpointer data)
{
  const Case *c = data;
  const char *provider = c->provider;
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("qstore-bench-XXXXXX", &error);
  g_autofree char *engine = g_strdup_printf ("qstore-%s-%s", provider, c->layer);
  /* The baseline's 10,000 commits on memory, where they cost nothing and
   * the checksum is bench-baseline's own; a few hundred durable ones on
   * the other providers, where each waits for the disk. */
  gboolean durable = !g_str_equal (provider, "memory");
  guint64 small_txns = durable ? 300 : 10000;
  g_autofree char *small_txns_text = g_strdup_printf ("%" G_GUINT64_FORMAT, small_txns);
  const char *args[] = { "--provider", provider, "--layer", c->layer, "--rows", G_STRINGIFY (ROWS),
                         "--small-txns", small_txns_text, "--dir", dir, NULL };
  const char *expected_order[] = { "load", "get", "scan", "small_txn", "size" };
  g_autoptr(GPtrArray) order = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GHashTable) phases = NULL;
  g_autoptr(TestRun) r = NULL;
  JsonObject *p;

  g_assert_no_error (error);
  r = run_bench (args);
  g_assert_cmpint (r->status, ==, 0);
  g_assert_cmpstr (r->err, ==, "");

  phases = parse_lines (r->out, order);
  g_assert_cmpuint (order->len, ==, G_N_ELEMENTS (expected_order));
  for (guint i = 0; i < G_N_ELEMENTS (expected_order); i++)
    g_assert_cmpstr (g_ptr_array_index (order, i), ==, expected_order[i]);

  p = g_hash_table_lookup (phases, "load");
  check_common (p, engine, ROWS);
  g_assert_cmpuint (json_object_get_int_member (p, "checksum"), ==, score_sum (0, ROWS));
  g_assert_cmpuint (json_object_get_int_member (p, "checksum"), ==, BASELINE_LOAD_CHECKSUM);
  /* Every provider here has an atomic cross-store batch. */
  g_assert_true (json_object_get_boolean_member (p, "atomic"));

  p = g_hash_table_lookup (phases, "get");
  check_common (p, engine, ROWS);
  g_assert_cmpuint (json_object_get_int_member (p, "checksum"), ==, BASELINE_GET_CHECKSUM);
  /* The key/value and table layers read through a provider snapshot
   * (every provider here has them), the SQL layer in BEGIN. */
  g_assert_cmpint (json_object_get_boolean_member (p, "snapshot"), ==,
                   !g_str_equal (c->layer, "sql"));

  p = g_hash_table_lookup (phases, "scan");
  check_common (p, engine, 1000);
  g_assert_cmpuint (json_object_get_int_member (p, "checksum"), ==, BASELINE_SCAN_VISITED);
  g_assert_cmpuint (json_object_get_int_member (p, "rows_visited"), ==, BASELINE_SCAN_VISITED);
  g_assert_cmpuint (json_object_get_int_member (p, "row_sum"), ==, BASELINE_SCAN_ROW_SUM);

  p = g_hash_table_lookup (phases, "small_txn");
  check_common (p, engine, small_txns);
  g_assert_cmpuint (json_object_get_int_member (p, "checksum"), ==, score_sum (ROWS, small_txns));
  if (!durable)
    g_assert_cmpuint (json_object_get_int_member (p, "checksum"), ==, BASELINE_SMALL_TXN_CHECKSUM);
  g_assert_true (json_object_get_boolean_member (p, "atomic"));

  p = g_hash_table_lookup (phases, "size");
  check_common (p, engine, 0);
  if (g_str_equal (provider, "memory"))
    g_assert_cmpint (json_object_get_int_member (p, "bytes"), ==, 0);
  else
    g_assert_cmpint (json_object_get_int_member (p, "bytes"), >, 0);

  /* The store is gone after the run. */
  g_assert_cmpuint (count_entries (dir), ==, 0);
  test_remove_tree (dir);
}

/* Phases left out still draw their numbers: scan without get sees the
 * same ranges. --keep leaves the store behind. */
static void
test_phases_subset (gconstpointer data)
{
  const char *provider = data;
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("qstore-bench-XXXXXX", &error);
  const char *args[] = { "--provider", provider, "--rows", G_STRINGIFY (ROWS), "--dir", dir,
                         "--phases", "scan", "--run", "7", "--keep", NULL };
  g_autoptr(GPtrArray) order = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GHashTable) phases = NULL;
  g_autoptr(TestRun) r = NULL;
  JsonObject *p;

  g_assert_no_error (error);
  r = run_bench (args);
  g_assert_cmpint (r->status, ==, 0);

  phases = parse_lines (r->out, order);
  g_assert_cmpuint (order->len, ==, 1);
  p = g_hash_table_lookup (phases, "scan");
  g_assert_nonnull (p);
  g_assert_cmpint (json_object_get_int_member (p, "run"), ==, 7);
  g_assert_cmpuint (json_object_get_int_member (p, "rows_visited"), ==, BASELINE_SCAN_VISITED);
  g_assert_cmpuint (json_object_get_int_member (p, "row_sum"), ==, BASELINE_SCAN_ROW_SUM);

  if (g_str_equal (provider, "memory"))
    g_assert_cmpuint (count_entries (dir), ==, 0);
  else
    g_assert_cmpuint (count_entries (dir), >, 0);
  test_remove_tree (dir);
}

/* Without the atomic batch, rows and index entries are written store by
 * store (by the bench at the key/value layer, by the coordinator above
 * it), with the same results. */
static void
test_no_atomic (gconstpointer data)
{
  const Case *c = data;
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("qstore-bench-XXXXXX", &error);
  const char *args[] = { "--provider", c->provider, "--layer", c->layer,
                         "--rows", G_STRINGIFY (ROWS), "--dir", dir,
                         "--phases", "load,get,scan", "--no-atomic", NULL };
  g_autoptr(GPtrArray) order = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GHashTable) phases = NULL;
  g_autoptr(TestRun) r = NULL;
  JsonObject *p;

  g_assert_no_error (error);
  r = run_bench (args);
  g_assert_cmpint (r->status, ==, 0);

  phases = parse_lines (r->out, order);
  g_assert_cmpuint (order->len, ==, 3);
  p = g_hash_table_lookup (phases, "load");
  g_assert_false (json_object_get_boolean_member (p, "atomic"));
  g_assert_cmpuint (json_object_get_int_member (p, "checksum"), ==, BASELINE_LOAD_CHECKSUM);
  p = g_hash_table_lookup (phases, "get");
  g_assert_cmpuint (json_object_get_int_member (p, "checksum"), ==, BASELINE_GET_CHECKSUM);
  p = g_hash_table_lookup (phases, "scan");
  g_assert_cmpuint (json_object_get_int_member (p, "row_sum"), ==, BASELINE_SCAN_ROW_SUM);

  g_assert_cmpuint (count_entries (dir), ==, 0);
  test_remove_tree (dir);
}

/* The sql-floor layer: the sql layer's reads on a table that computes its
 * rows, with the baseline's checksums, and no store anywhere. */
static void
test_sql_floor (void)
{
  const char *args[] = { "--layer", "sql-floor", "--rows", G_STRINGIFY (ROWS), NULL };
  const char *phases_args[] = { "--layer", "sql-floor", "--rows", G_STRINGIFY (ROWS),
                                "--phases", "scan", NULL };
  g_autoptr(GPtrArray) order = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GPtrArray) scan_order = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GHashTable) phases = NULL;
  g_autoptr(GHashTable) scan_phases = NULL;
  g_autoptr(TestRun) r = run_bench (args);
  g_autoptr(TestRun) scan_only = run_bench (phases_args);
  JsonObject *p;

  g_assert_cmpint (r->status, ==, 0);
  g_assert_cmpstr (r->err, ==, "");
  phases = parse_lines (r->out, order);
  g_assert_cmpuint (order->len, ==, 2);
  g_assert_cmpstr (g_ptr_array_index (order, 0), ==, "get");
  g_assert_cmpstr (g_ptr_array_index (order, 1), ==, "scan");

  p = g_hash_table_lookup (phases, "get");
  check_common (p, "sql-floor", ROWS);
  g_assert_cmpuint (json_object_get_int_member (p, "checksum"), ==, BASELINE_GET_CHECKSUM);
  p = g_hash_table_lookup (phases, "scan");
  check_common (p, "sql-floor", 1000);
  g_assert_cmpuint (json_object_get_int_member (p, "rows_visited"), ==, BASELINE_SCAN_VISITED);
  g_assert_cmpuint (json_object_get_int_member (p, "row_sum"), ==, BASELINE_SCAN_ROW_SUM);

  /* Left out, get still draws its numbers: the same ranges are scanned. */
  g_assert_cmpint (scan_only->status, ==, 0);
  scan_phases = parse_lines (scan_only->out, scan_order);
  g_assert_cmpuint (scan_order->len, ==, 1);
  p = g_hash_table_lookup (scan_phases, "scan");
  g_assert_cmpuint (json_object_get_int_member (p, "row_sum"), ==, BASELINE_SCAN_ROW_SUM);
}

static void
test_usage (void)
{
  struct {
    const char *args[10];
    int         status;
  } cases[] = {
    { { "--provider", "nosuch", "--rows", "10", NULL }, 1 },
    { { "--rows", "10", NULL }, 2 },
    { { "--provider", "memory", "--layer", "views", NULL }, 2 },
    /* The floor stores nothing: no provider, no load or writes. */
    { { "--provider", "memory", "--layer", "sql-floor", NULL }, 2 },
    { { "--layer", "sql-floor", "--phases", "get,small_txn", NULL }, 2 },
    { { "--layer", "sql-floor", "--phases", "load", NULL }, 2 },
    { { "--layer", "sql-floor", "--change-log", "10", NULL }, 2 },
    { { "--provider", "memory", "--rows", "0", NULL }, 2 },
    { { "--provider", "memory", "--rows", "many", NULL }, 2 },
    { { "--provider", "memory", "--small-txns", "0", NULL }, 2 },
    { { "--provider", "memory", "--phases", "load,bogus", NULL }, 2 },
    { { "--provider", "memory", "extra", NULL }, 2 },
    { { "--provider", "memory", "--workload", "mixed", NULL }, 2 },
    { { "--provider", "memory", "--layer", "sql", "--workload", "busy", NULL }, 2 },
    { { "--provider", "memory", "--layer", "sql", "--classes", "view", NULL }, 2 },
    { { "--provider", "memory", "--layer", "sql", "--rounds", "2", NULL }, 2 },
    { { "--provider", "memory", "--layer", "sql", "--workload", "mixed", "--rounds", "0", NULL }, 2 },
    { { "--provider", "memory", "--layer", "sql", "--workload", "mixed", "--classes", "view,nosuch",
        NULL }, 1 },
    { { "--provider", "memory", "--layer", "sql", "--write-out-step", "1048576", NULL }, 2 },
    { { "--provider", "memory", "--layer", "replica", "--write-out-step", "-1", NULL }, 2 },
    /* Out of the replica's range: refused as the replica opens. */
    { { "--provider", "memory", "--layer", "replica", "--write-out-step", "1000", NULL }, 1 },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(TestRun) r = run_bench (cases[i].args);

      g_assert_cmpint (r->status, ==, cases[i].status);
      g_assert_cmpstr (r->out, ==, "");
      g_assert_true (g_str_has_prefix (r->err, "qstore-bench: "));
    }
}

/* The mixed workload: every query class once, each with both engines'
 * times over the rounds asked for, and the same checksum on both (a
 * difference fails the run). */
static void
test_mixed (void)
{
  static const char *const classes[] = {
    "point", "range", "order-limit", "join-indexed", "join-unindexed", "group-having",
    "compound", "subquery-correlated", "subquery-uncorrelated", "view", "dml", "total",
  };
  const char *args[] = { "--provider", "memory", "--layer", "sql", "--workload", "mixed",
                         "--rounds", "3", NULL };
  g_autoptr(TestRun) r = run_bench (args);
  g_autoptr(GPtrArray) lines = NULL;

  g_assert_cmpint (r->status, ==, 0);
  g_assert_cmpstr (r->err, ==, "");
  lines = parse_objects (r->out);
  g_assert_cmpuint (lines->len, ==, G_N_ELEMENTS (classes));
  for (guint i = 0; i < lines->len; i++)
    {
      JsonObject *line = g_ptr_array_index (lines, i);

      g_assert_cmpstr (json_object_get_string_member (line, "class"), ==, classes[i]);
      g_assert_cmpstr (json_object_get_string_member (line, "engine"), ==, "qstore-memory-sql");
      g_assert_cmpint (json_object_get_int_member (line, "ops"), >, 0);
      g_assert_cmpint (json_object_get_int_member (line, "rounds"), ==, 3);
      g_assert_cmpfloat (json_object_get_double_member (line, "seconds"), >, 0);
      g_assert_cmpfloat (json_object_get_double_member (line, "native_seconds"), >, 0);
      g_assert_true (json_object_has_member (line, "ratio"));
      g_assert_true (json_object_has_member (line, "checksum"));
    }
}

/* The checksum of each class a mixed run printed, by class. */
static GHashTable *
mixed_checksums (const char *const *args)
{
  g_autoptr(TestRun) r = run_bench (args);
  g_autoptr(GPtrArray) lines = NULL;
  GHashTable *sums = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);

  g_assert_cmpint (r->status, ==, 0);
  g_assert_cmpstr (r->err, ==, "");
  lines = parse_objects (r->out);
  for (guint i = 0; i < lines->len; i++)
    {
      JsonObject *line = g_ptr_array_index (lines, i);

      g_hash_table_insert (sums, g_strdup (json_object_get_string_member (line, "class")),
                           GSIZE_TO_POINTER ((gsize) json_object_get_int_member (line, "checksum")));
    }
  return sums;
}

/* --classes runs only the classes it names, each on the same parameters
 * (so with the same checksum) as in a run of them all. */
static void
test_mixed_classes (void)
{
  const char *all_args[] = { "--provider", "memory", "--layer", "sql", "--workload", "mixed",
                             "--rounds", "1", NULL };
  const char *some_args[] = { "--provider", "memory", "--layer", "sql", "--workload", "mixed",
                              "--rounds", "1", "--classes", "view,range", NULL };
  g_autoptr(GHashTable) all = mixed_checksums (all_args);
  g_autoptr(GHashTable) some = mixed_checksums (some_args);

  g_assert_cmpuint (g_hash_table_size (some), ==, 3);
  g_assert_true (g_hash_table_contains (some, "total"));
  for (guint i = 0; i < 2; i++)
    {
      const char *name = i == 0 ? "view" : "range";

      g_assert_true (g_hash_table_contains (some, name));
      g_assert_true (g_hash_table_lookup (some, name) == g_hash_table_lookup (all, name));
    }
}

int
main (int    argc,
      char **argv)
{
  static const char *providers[] = { "memory", "lmdb", "sqlite" };
  static const char *layers[] = { "kv", "table", "sql" };
  static Case cases[G_N_ELEMENTS (providers) * G_N_ELEMENTS (layers)];

  g_test_init (&argc, &argv, NULL);
  bench_path = test_program_argument (argc, argv, "PATH-TO-QSTORE-BENCH");

  g_test_add_func ("/tools/bench/usage", test_usage);
  g_test_add_func ("/tools/bench/sql-floor", test_sql_floor);
  g_test_add_func ("/tools/bench/mixed/memory", test_mixed);
  g_test_add_func ("/tools/bench/mixed/classes", test_mixed_classes);
  for (guint i = 0; i < G_N_ELEMENTS (providers); i++)
    {
      g_autofree char *subset = g_strdup_printf ("/tools/bench/phases-subset/%s", providers[i]);

      for (guint j = 0; j < G_N_ELEMENTS (layers); j++)
        {
          Case *c = &cases[i * G_N_ELEMENTS (layers) + j];
          g_autofree char *workload = NULL;
          g_autofree char *no_atomic = NULL;

          c->provider = providers[i];
          c->layer = layers[j];
          /* The key/value paths keep their names from before the layers. */
          if (g_str_equal (layers[j], "kv"))
            {
              workload = g_strdup_printf ("/tools/bench/workload/%s", providers[i]);
              no_atomic = g_strdup_printf ("/tools/bench/no-atomic/%s", providers[i]);
            }
          else
            {
              workload = g_strdup_printf ("/tools/bench/workload/%s/%s", layers[j], providers[i]);
              no_atomic = g_strdup_printf ("/tools/bench/no-atomic/%s/%s", layers[j], providers[i]);
            }
          g_test_add_data_func (workload, c, test_workload);
          g_test_add_data_func (no_atomic, c, test_no_atomic);
        }
      g_test_add_data_func (subset, providers[i], test_phases_subset);
    }

  return g_test_run ();
}
