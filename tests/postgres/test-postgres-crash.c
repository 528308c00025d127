/* test-postgres-crash.c: nothing acknowledged is lost when the writer or
 * the server dies mid-commit
 *
 * Runs under with-postgres.sh. The writer is a child process (this
 * program with --writer) that commits, in atomic batches, one key to
 * each of two stores, durably, and says "acked N" after each commit
 * returns. The test kills it (SIGKILL), or kills the server (pg_ctl stop
 * -m immediate, then starts it again), at a random point, and checks
 * that every acknowledged commit is there, whole, and that no commit is
 * there by half. QSTORE_CRASH_ITERATIONS sets how many writer kills (100
 * by default); a fortieth as many server kills, 3 at least.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "qstore-test-util.h"

static const char *self_path;

/* The writer: commits run-R-N to main.a and main.b together until it is
 * killed or the server goes. */
static int
run_writer (const char *uri,
            const char *run)
{
  g_autofree char *waiting = g_strconcat (uri, "&wait_ms=20000", NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(QStoreProvider) provider = NULL;
  g_autoptr(QStoreKV) a = NULL;
  g_autoptr(QStoreKV) b = NULL;

  prctl (PR_SET_PDEATHSIG, SIGKILL);
  /* The session of the writer killed before may still hold the lock for
   * a moment: the server notices its end when it next reads. */
  provider = qstore_provider_new_for_uri (waiting, QSTORE_OPEN_NONE, &error);
  if (provider == NULL)
    {
      g_printerr ("writer: %s\n", error->message);
      return 1;
    }
  a = qstore_provider_open_store (provider, "main.a", NULL);
  b = qstore_provider_open_store (provider, "main.b", NULL);
  g_print ("ready\n");

  for (guint n = 0;; n++)
    {
      g_autoptr(QStoreAtomicBatch) batch = qstore_provider_begin_atomic_batch (provider);
      g_autofree char *key = g_strdup_printf ("%s-%06u", run, n);

      qstore_atomic_batch_put (batch, a, (const guint8 *) key, strlen (key),
                               (const guint8 *) "a", 1);
      qstore_atomic_batch_put (batch, b, (const guint8 *) key, strlen (key),
                               (const guint8 *) "b", 1);
      if (!qstore_atomic_batch_commit (batch, QSTORE_WRITE_SYNC, &error))
        {
          g_print ("failed %s\n", error->message);
          return 0;
        }
      g_print ("acked %u\n", n);
    }
}

typedef struct
{
  GPid  pid;
  FILE *out;
} Writer;

static void
writer_spawn (Writer     *w,
              const char *uri,
              const char *run)
{
  const char *argv[] = { self_path, "--writer", uri, run, NULL };
  g_autoptr(GError) error = NULL;
  int fd;

  g_spawn_async_with_pipes (NULL, (char **) argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD, NULL, NULL,
                            &w->pid, NULL, &fd, NULL, &error);
  g_assert_no_error (error);
  w->out = fdopen (fd, "r");
}

static void
writer_wait_ready (Writer *w)
{
  char line[256];

  g_assert_nonnull (fgets (line, sizeof line, w->out));
  g_assert_cmpstr (line, ==, "ready\n");
}

static void
writer_start (Writer     *w,
              const char *uri,
              const char *run)
{
  writer_spawn (w, uri, run);
  writer_wait_ready (w);
}

/* Reads "acked N" lines until @n acks were read (or the writer failed);
 * returns the last acknowledged commit, -1 for none. */
static int
writer_read_acks (Writer *w,
                  guint   n,
                  int     last)
{
  char line[1024];

  for (guint i = 0; i < n && fgets (line, sizeof line, w->out) != NULL; i++)
    {
      if (g_str_has_prefix (line, "acked "))
        last = atoi (line + 6);
      else
        {
          g_test_message ("writer: %s", line);
          break;
        }
    }
  return last;
}

/* Reads what the writer said after @last until it ends. */
static int
writer_finish (Writer *w,
               int     last,
               char  **failure)
{
  char line[1024];
  int status;

  while (fgets (line, sizeof line, w->out) != NULL)
    {
      if (g_str_has_prefix (line, "acked "))
        last = atoi (line + 6);
      else if (g_str_has_prefix (line, "failed ") && failure != NULL && *failure == NULL)
        *failure = g_strstrip (g_strdup (line + 7));
    }
  fclose (w->out);
  g_assert_cmpint (waitpid (w->pid, &status, 0), ==, w->pid);
  g_spawn_close_pid (w->pid);
  return last;
}

/* The keys of @store that begin with "@run-", in order. */
static GPtrArray *
run_keys (QStoreSnapshot *snapshot,
          QStoreKV       *store,
          const char     *run)
{
  g_autoptr(QStoreBounds) bounds = qstore_bounds_new ();
  g_autofree char *from = g_strdup_printf ("%s-", run);
  g_autofree char *to = g_strdup_printf ("%s.", run);
  g_autoptr(QStoreIter) iter = NULL;
  g_autoptr(GError) error = NULL;
  GPtrArray *keys = g_ptr_array_new_with_free_func (g_free);

  qstore_bounds_set_gte (bounds, (const guint8 *) from, strlen (from));
  qstore_bounds_set_lt (bounds, (const guint8 *) to, strlen (to));
  iter = qstore_snapshot_iterate (snapshot, store, bounds, &error);
  g_assert_no_error (error);
  while (qstore_iter_next (iter, &error))
    {
      gsize len;
      const guint8 *key = qstore_iter_peek_key (iter, &len);

      g_ptr_array_add (keys, g_strndup ((const char *) key, len));
    }
  g_assert_no_error (error);
  return keys;
}

/* Every commit up to @acked is in both stores; any later one (in flight
 * when the writer died) is in both or neither. @reader is a read-only
 * open kept for every check: a cycle pays no connection of its own. */
static void
check_run (QStoreProvider *reader,
           const char     *run,
           int             acked)
{
  g_autoptr(QStoreKV) a = qstore_provider_open_store (reader, "main.a", NULL);
  g_autoptr(QStoreKV) b = qstore_provider_open_store (reader, "main.b", NULL);
  g_autoptr(GError) error = NULL;
  /* One state for both stores: the dead writer's session may still be
   * committing its last write. */
  g_autoptr(QStoreSnapshot) snapshot = qstore_provider_begin_snapshot (reader, &error);
  g_autoptr(GPtrArray) in_a = NULL;
  g_autoptr(GPtrArray) in_b = NULL;

  g_assert_no_error (error);
  in_a = run_keys (snapshot, a, run);
  in_b = run_keys (snapshot, b, run);

  /* Never half a commit, and commits in order: the keys 0 to n - 1. */
  g_assert_cmpuint (in_a->len, ==, in_b->len);
  for (guint n = 0; n < in_a->len; n++)
    {
      g_autofree char *key = g_strdup_printf ("%s-%06u", run, n);

      g_assert_cmpstr (in_a->pdata[n], ==, key);
      g_assert_cmpstr (in_b->pdata[n], ==, key);
    }
  /* Nothing acknowledged is missing; at most the one in flight is more. */
  g_assert_cmpint ((int) in_a->len, >=, acked + 1);
  g_assert_cmpint ((int) in_a->len, <=, acked + 2);
}

static QStoreProvider *
open_reader (const char *uri)
{
  g_autoptr(GError) error = NULL;
  QStoreProvider *p = qstore_provider_new_for_uri (uri, QSTORE_OPEN_READ_ONLY, &error);

  g_assert_no_error (error);
  return p;
}

static guint
iterations (guint fallback)
{
  const char *env = g_getenv ("QSTORE_CRASH_ITERATIONS");

  return env != NULL ? (guint) atoi (env) : fallback;
}

/* A cycle costs mostly a new writer's start (a process, its connection,
 * its schema checked): the next writer starts as soon as the last one is
 * dead, and the last run is checked while it does (runs have keys of
 * their own). */
static void
test_writer_killed (void)
{
  g_autofree char *dir = test_make_tmp_dir ("qstore-pg-crash-XXXXXX");
  g_autofree char *uri = test_provider_uri (dir, "crash");
  g_autoptr(QStoreProvider) reader = NULL;
  guint n = iterations (100);
  gint64 start = g_get_monotonic_time ();
  Writer w;

  writer_start (&w, uri, "w0000");
  /* The schema exists once a writer said it is ready. */
  reader = open_reader (uri);
  for (guint i = 0; i < n; i++)
    {
      g_autofree char *run = g_strdup_printf ("w%04u", i);
      g_autofree char *next = g_strdup_printf ("w%04u", i + 1);
      int acked;

      /* Between none and 30 commits acknowledged, then killed: most
       * often in the middle of the next one. */
      acked = writer_read_acks (&w, g_random_int_range (0, 31), -1);
      kill (w.pid, SIGKILL);
      acked = writer_finish (&w, acked, NULL);
      if (i + 1 < n)
        writer_spawn (&w, uri, next);
      check_run (reader, run, acked);
      if (i + 1 < n)
        writer_wait_ready (&w);
    }
  g_test_message ("%u writers killed in %.1f s", n,
                  (g_get_monotonic_time () - start) / (double) G_USEC_PER_SEC);
  g_clear_object (&reader);
  test_remove_tree (dir);
}

static void
run_ctl (const char *what)
{
  const char *argv[] = { g_getenv ("QSTORE_TEST_POSTGRES_CTL"), what, NULL };
  g_autoptr(GError) error = NULL;
  int status;

  g_assert_nonnull (argv[0]);
  g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, NULL, NULL,
                &status, &error);
  g_assert_no_error (error);
  g_assert_true (g_spawn_check_wait_status (status, NULL));
}

static void
test_server_killed (void)
{
  g_autofree char *dir = test_make_tmp_dir ("qstore-pg-crash-XXXXXX");
  g_autofree char *uri = test_provider_uri (dir, "crash");
  guint n = MAX (iterations (100) / 40, 3);

  for (guint i = 0; i < n; i++)
    {
      g_autofree char *run = g_strdup_printf ("s%04u", i);
      g_autofree char *failure = NULL;
      Writer w;
      int acked;

      writer_start (&w, uri, run);
      acked = writer_read_acks (&w, g_random_int_range (1, 31), -1);
      /* The server stops at once while the writer commits. */
      run_ctl ("stop");
      acked = writer_finish (&w, acked, &failure);
      /* The writer was told, in words that name the cause. */
      g_assert_nonnull (failure);
      g_test_message ("writer after the crash: %s", failure);
      g_assert_nonnull (strstr (failure, "SQLSTATE"));
      run_ctl ("start");
      {
        g_autoptr(QStoreProvider) reader = open_reader (uri);

        check_run (reader, run, acked);
      }
    }
  test_remove_tree (dir);
}

int
main (int   argc,
      char *argv[])
{
  self_path = argv[0];
  if (argc == 4 && g_str_equal (argv[1], "--writer"))
    return run_writer (argv[2], argv[3]);

  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/postgres/crash/writer-killed", test_writer_killed);
  g_test_add_func ("/postgres/crash/server-killed", test_server_killed);
  return g_test_run ();
}
