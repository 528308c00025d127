/* test-staging-crash.c: replace imports killed at random points
 *
 * Each cycle runs this program again as a child (`--crash-child URI GEN
 * NO_ATOMIC`) that replaces the rows of table t with generation GEN, and
 * kills it with SIGKILL after a random delay: while rows land in the
 * staging table, during the swap, while it tidies up, or not at all.
 * Then, whatever the moment:
 *
 * - t holds exactly the rows of one generation, the old or the new one,
 *   never a mix, and its index and the materialized view over it agree;
 * - a run the child left is reported at open (the rehydration result and
 *   one log line);
 * - a sweep keeps it while its heartbeat is fresh, drops it once the
 *   heartbeat is older than the threshold unless it is resumable, and
 *   never touches t;
 * - a resumable (--no-atomic) run is never swept and resumes into the new
 *   generation.
 *
 * Where the provider withholds its atomic batch (`?atomic=0`), commits go
 * store by store, so the marker row may say a swap committed that the
 * table did not take; the table is still one generation, whole.
 *
 * QSTORE_CRASH_ITERATIONS sets the number of cycles (50 by default).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "qstore-test-util.h"

static const char *self_path;

/* The rows of generation @gen: a count of its own, so that a mix of two
 * generations can never pass for one. */
static guint
rows_of (guint gen)
{
  return 1500 + (gen % 7) * 211;
}

static GString *
csv_of (guint gen)
{
  GString *csv = g_string_new ("id,gen,payload\n");

  for (guint id = 1; id <= rows_of (gen); id++)
    g_string_append_printf (csv, "%u,%u,\"payload %u of generation %u, quoted\"\n",
                            id, gen, id, gen);
  return csv;
}

static gboolean
replace_with (QStoreDatabase  *db,
              guint            gen,
              gboolean         no_atomic,
              gboolean         resume,
              GError         **error)
{
  g_autoptr(QStoreImport) import = qstore_import_new (db, "t");
  g_autoptr(GString) csv = csv_of (gen);
  g_autoptr(GInputStream) input = NULL;

  qstore_import_set_mode (import, QSTORE_IMPORT_MODE_REPLACE);
  qstore_import_set_atomic (import, !no_atomic);
  qstore_import_set_resume (import, resume);
  input = g_memory_input_stream_new_from_data (csv->str, csv->len, NULL);
  return qstore_import_run (import, input, NULL, error);
}

static int
crash_child (const char *uri,
             guint       gen,
             gboolean    no_atomic)
{
  g_autoptr(QStoreDatabase) db = NULL;
  g_autoptr(GError) error = NULL;

  if (!(db = qstore_database_open (uri, QSTORE_OPEN_NONE, &error)))
    {
      g_printerr ("crash child: %s\n", error->message);
      return 1;
    }
  if (write (STDOUT_FILENO, "r", 1) != 1)
    return 1;
  if (!replace_with (db, gen, no_atomic, FALSE, &error))
    {
      g_printerr ("crash child: %s\n", error->message);
      return 1;
    }
  qstore_database_close (db, NULL);
  return 0;
}

/* Opening logs one line about leftovers: counted here. */
static guint notes;

static void
count_notes (const char     *domain,
             GLogLevelFlags  level,
             const char     *message,
             gpointer        data)
{
  if (strstr (message, "staged import") != NULL && strstr (message, "_qstore_staging_t") != NULL)
    notes++;
}

static char *
query (QStoreDatabase *db,
       const char     *sql)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(QStoreResult) result = qstore_database_query (db, sql, NULL, &error);
  GString *text = g_string_new (NULL);

  if (result == NULL)
    g_error ("“%s” failed: %s", sql, error->message);
  for (guint r = 0; r < qstore_result_get_n_rows (result); r++)
    for (guint c = 0; c < qstore_result_get_n_columns (result); c++)
      {
        g_autoptr(GVariant) value = qstore_result_get_value (result, r, c);
        g_autoptr(GVariant) inner = g_variant_is_of_type (value, G_VARIANT_TYPE_VARIANT)
                                    ? g_variant_get_variant (value) : g_variant_ref (value);
        g_autofree char *printed = g_variant_print (inner, FALSE);

        g_string_append_printf (text, "%s%s", c > 0 ? "|" : (r > 0 ? "\n" : ""), printed);
      }
  return g_string_free (text, FALSE);
}

/* The generation t holds, which must be whole. */
static guint
check_whole (QStoreDatabase *db,
             guint           old_gen,
             guint           new_gen)
{
  g_autofree char *gens = query (db, "SELECT DISTINCT gen FROM t ORDER BY gen");
  g_autofree char *expected = NULL;
  g_autofree char *got = NULL;
  guint gen = (guint) g_ascii_strtoull (gens, NULL, 10);
  guint n;

  if (gen != old_gen && gen != new_gen)
    g_error ("After a crash, t holds generation(s) “%s”, neither %u nor %u", gens, old_gen, new_gen);
  n = rows_of (gen);
  expected = g_strdup_printf ("%u|%u|%u|%" G_GUINT64_FORMAT, n, 1, n, (guint64) n * (n + 1) / 2);
  got = query (db, "SELECT count(*), min (id), max (id), sum (id) FROM t");
  if (g_strcmp0 (got, expected) != 0)
    g_error ("After a crash, t holds “%s” (count, min, max, sum), not generation %u whole (%s)",
             got, gen, expected);

  /* The index and the view followed in the same commit. */
  g_free (expected);
  expected = g_strdup_printf ("%u", n);
  g_free (got);
  got = query (db, "SELECT count(*) FROM t WHERE gen = (SELECT min (gen) FROM t)");
  g_assert_cmpstr (got, ==, expected);
  g_free (expected);
  expected = g_strdup_printf ("%u|%u", gen, n);
  g_free (got);
  got = query (db, "SELECT gen, n FROM per_gen");
  if (g_strcmp0 (got, expected) != 0)
    g_error ("After a crash, the view over t holds “%s”, not “%s”", got, expected);
  return gen;
}

static void
age_runs (QStoreDatabase *db)
{
  g_autoptr(GError) error = NULL;

  if (!qstore_database_exec (db, "UPDATE " QSTORE_STAGING_MARKER_TABLE
                                 " SET heartbeat = heartbeat - 7200000", &error))
    g_error ("aging the runs: %s", error->message);
}

typedef struct
{
  guint completed;      /* the child finished before the kill */
  guint old;            /* t kept its rows */
  guint new;            /* t holds the new ones */
  guint leftovers;      /* a run was left */
  guint swapped;        /* ... after its swap committed */
  guint resumed;
  guint discarded;
} Tally;

/* What is left of the child's run, if anything, and what may be done. */
static guint
deal_with_leftovers (const char *uri,
                     guint       old_gen,
                     guint       gen,
                     gboolean    no_atomic,
                     Tally      *tally)
{
  g_autoptr(QStoreDatabase) db = NULL;
  g_autoptr(GPtrArray) swept = NULL;
  g_autoptr(QStoreStagingRun) run = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *before = NULL;
  g_autofree char *after = NULL;
  QStoreStagingLeftovers *leftovers;
  guint held, notes_before = notes;

  db = test_open_database (uri, QSTORE_OPEN_NONE);
  held = check_whole (db, old_gen, gen);
  leftovers = qstore_rehydration_result_get_staging_leftovers (qstore_database_get_rehydration_result (db));
  g_assert_nonnull (leftovers);
  if (g_list_model_get_n_items (G_LIST_MODEL (leftovers)) == 0)
    {
      g_assert_cmpuint (notes, ==, notes_before);
      g_assert_null (qstore_database_get_table (db, NULL, "_qstore_staging_t"));
      test_close_database (&db);
      return held;
    }

  /* Reported: in the result and in one log line. */
  tally->leftovers++;
  g_assert_cmpuint (notes, ==, notes_before + 1);
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (leftovers)), ==, 1);
  run = g_list_model_get_item (G_LIST_MODEL (leftovers), 0);
  g_assert_cmpstr (qstore_staging_run_get_target (run), ==, "t");
  g_assert_false (qstore_staging_run_get_droppable (run));       /* fresh */
  if (qstore_staging_run_get_swapped (run))
    {
      tally->swapped++;
      /* Without an atomic batch, commits go store by store: the marker's
       * store may have taken the swap when the table's did not. The
       * table is still one generation whole. */
      if (test_provider_atomic ())
        g_assert_cmpuint (held, ==, gen);
      g_assert_false (qstore_staging_run_get_resumable (run));
    }
  else
    g_assert_cmpint (qstore_staging_run_get_resumable (run), ==, no_atomic);

  before = query (db, "SELECT id, gen, payload FROM t ORDER BY id");

  /* A fresh heartbeat: a sweep keeps it. */
  swept = qstore_staging_sweep (db, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (swept->len, ==, 0);
  g_clear_pointer (&swept, g_ptr_array_unref);

  /* Past the threshold: dropped unless resumable, t untouched either way. */
  age_runs (db);
  swept = qstore_staging_sweep (db, &error);
  g_assert_no_error (error);
  after = query (db, "SELECT id, gen, payload FROM t ORDER BY id");
  g_assert_cmpstr (after, ==, before);

  if (qstore_staging_run_get_resumable (run))
    {
      g_assert_cmpuint (swept->len, ==, 0);
      if (replace_with (db, gen, TRUE, TRUE, &error))
        {
          tally->resumed++;
          held = check_whole (db, old_gen, gen);
          g_assert_cmpuint (held, ==, gen);
        }
      else if (!test_provider_atomic () && g_error_matches (error, QSTORE_ERROR, QSTORE_ERROR_CORRUPT))
        {
          /* Store by store, the record and the rows may disagree: the
           * run refuses to continue, and is discarded. */
          g_test_message ("%s", error->message);
          g_clear_error (&error);
          g_assert_true (qstore_staging_discard (db, "t", &error));
          g_assert_no_error (error);
          tally->discarded++;
        }
      else
        {
          /* Killed between recording the run and creating its table. */
          g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_NOT_FOUND);
          g_clear_error (&error);
          g_assert_true (qstore_staging_discard (db, "t", &error));
          g_assert_no_error (error);
          tally->discarded++;
        }
    }
  else
    g_assert_cmpuint (swept->len, ==, 1);

  g_assert_null (qstore_database_get_table (db, NULL, "_qstore_staging_t"));
  g_assert_null (qstore_database_get_table (db, NULL, QSTORE_STAGING_MARKER_TABLE));
  test_close_database (&db);
  return held;
}

/* How long a whole child run takes, killing nothing. */
static gint64
time_child (const char *uri,
            guint       gen)
{
  g_autofree char *gen_text = g_strdup_printf ("%u", gen);
  const char *argv[] = { self_path, "--crash-child", uri, gen_text, "0", NULL };
  g_autoptr(GError) error = NULL;
  int status = 0;
  gint64 start = g_get_monotonic_time ();

  g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL, NULL, NULL,
                &status, &error);
  g_assert_no_error (error);
  g_assert_true (g_spawn_check_wait_status (status, NULL));
  return g_get_monotonic_time () - start;
}

static guint
crash_iterations (void)
{
  const char *env = g_getenv ("QSTORE_CRASH_ITERATIONS");
  guint64 n;

  if (env != NULL && g_ascii_string_to_unsigned (env, 10, 1, 100000, &n, NULL))
    return n;
  return 50;
}

static void
test_crash (void)
{
  g_autoptr(GRand) rand = g_rand_new_with_seed (g_test_rand_int ());
  g_autofree char *dir = test_make_tmp_dir ("qstore-staging-crash-XXXXXX");
  g_autofree char *uri = test_provider_uri (dir, "store");
  guint iterations = crash_iterations ();
  guint gen = 1, held;
  gint64 whole;
  Tally tally = { 0 };

  if (!test_provider_persistent ())
    {
      g_test_skip ("a crash of a memory store leaves nothing to check");
      return;
    }
  g_log_set_handler ("qstore", G_LOG_LEVEL_MESSAGE, count_notes, NULL);

  test_exec_at (uri, "CREATE TABLE t (id INTEGER PRIMARY KEY, gen INTEGER NOT NULL, payload TEXT);"
                     "CREATE INDEX t_gen ON t (gen);"
                     "CREATE MATERIALIZED VIEW per_gen AS SELECT gen, count(*) AS n FROM t GROUP BY gen");
  whole = time_child (uri, gen);
  held = gen;
  g_test_message ("a whole replace run takes %" G_GINT64_FORMAT " ms", whole / 1000);

  for (guint i = 0; i < iterations; i++)
    {
      g_autofree char *gen_text = g_strdup_printf ("%u", ++gen);
      gboolean no_atomic = g_rand_int_range (rand, 0, 3) == 0;
      const char *argv[] = { self_path, "--crash-child", uri, gen_text, no_atomic ? "1" : "0", NULL };
      g_autoptr(GError) error = NULL;
      gulong delay = g_rand_int_range (rand, 0, MAX (whole * 13 / 10, 1000));
      int out = -1, err = -1, status = 0;
      char ready;
      GPid pid;
      guint now_held;

      g_spawn_async_with_pipes (NULL, (char **) argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD, NULL, NULL,
                                &pid, NULL, &out, &err, &error);
      g_assert_no_error (error);
      if (read (out, &ready, 1) != 1)
        {
          char message[4096] = "";
          gssize len = read (err, message, sizeof message - 1);

          message[MAX (len, 0)] = '\0';
          g_error ("The crash child never got ready: %s", message);
        }
      g_usleep (delay);
      kill (pid, SIGKILL);
      while (waitpid (pid, &status, 0) < 0 && errno == EINTR)
        ;
      g_spawn_close_pid (pid);
      if (WIFEXITED (status))
        {
          char message[4096] = "";
          gssize len = read (err, message, sizeof message - 1);

          message[MAX (len, 0)] = '\0';
          if (WEXITSTATUS (status) != 0)
            g_error ("The crash child failed (status %d): %s", WEXITSTATUS (status), message);
          tally.completed++;
        }
      close (out);
      close (err);

      now_held = deal_with_leftovers (uri, held, gen, no_atomic, &tally);
      if (now_held == held)
        tally.old++;
      else
        tally.new++;
      held = now_held;
    }

  g_test_message ("%u cycles: %u completed before the kill; t kept its rows %u times, took "
                  "the new ones %u times; %u runs left over (%u after the swap), %u resumed, "
                  "%u discarded", iterations, tally.completed, tally.old, tally.new,
                  tally.leftovers, tally.swapped, tally.resumed, tally.discarded);
  /* Kills landed while loading, not only before or after. */
  if (iterations >= 20)
    g_assert_cmpuint (tally.leftovers, >, 0);
  test_remove_tree (dir);
}

int
main (int    argc,
      char **argv)
{
  if (argc == 5 && g_str_equal (argv[1], "--crash-child"))
    return crash_child (argv[2], (guint) g_ascii_strtoull (argv[3], NULL, 10),
                        g_str_equal (argv[4], "1"));

  self_path = argv[0];
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/staging/crash/replace", test_crash);
  return g_test_run ();
}
