/* test-postgres-crash.c: nothing acknowledged is lost when the writer or
 * the server dies mid-commit
 *
 * Runs under with-postgres.sh. The writer is a child process (this
 * program with --writer) that commits, in atomic batches, one key to
 * each of two stores, durably, and says "acked N" after each commit
 * returns. The test kills it (SIGKILL), or kills the server (pg_ctl stop
 * -m immediate, then starts it again), at a random point, and checks
 * that every acknowledged commit is there, whole, and that no commit is
 * there by half. QSTORE_CRASH_ITERATIONS sets how many writer kills (40
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
writer_start (Writer     *w,
              const char *uri,
              const char *run)
{
  const char *argv[] = { self_path, "--writer", uri, run, NULL };
  g_autoptr(GError) error = NULL;
  char line[256];
  int fd;

  g_spawn_async_with_pipes (NULL, (char **) argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD, NULL, NULL,
                            &w->pid, NULL, &fd, NULL, &error);
  g_assert_no_error (error);
  w->out = fdopen (fd, "r");
  g_assert_nonnull (fgets (line, sizeof line, w->out));
  g_assert_cmpstr (line, ==, "ready\n");
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

/* Every commit up to @acked is in both stores; any later one (in flight
 * when the writer died) is in both or neither. */
static void
check_run (const char *uri,
           const char *run,
           int         acked)
{
  g_autoptr(QStoreProvider) p = NULL;
  g_autoptr(QStoreKV) a = NULL;
  g_autoptr(QStoreKV) b = NULL;
  g_autoptr(GError) error = NULL;
  int n = 0;

  p = qstore_provider_new_for_uri (uri, QSTORE_OPEN_READ_ONLY, &error);
  g_assert_no_error (error);
  a = qstore_provider_open_store (p, "main.a", &error);
  b = qstore_provider_open_store (p, "main.b", &error);
  for (;; n++)
    {
      g_autofree char *key = g_strdup_printf ("%s-%06d", run, n);
      g_autoptr(GBytes) va = qstore_kv_get (a, (const guint8 *) key, strlen (key), &error);
      g_autoptr(GBytes) vb = NULL;

      g_assert_no_error (error);
      vb = qstore_kv_get (b, (const guint8 *) key, strlen (key), &error);
      g_assert_no_error (error);
      /* Never half a commit. */
      g_assert_true ((va == NULL) == (vb == NULL));
      if (va == NULL)
        break;
    }
  /* Nothing acknowledged is missing; at most the one in flight is more. */
  g_assert_cmpint (n, >=, acked + 1);
  g_assert_cmpint (n, <=, acked + 2);
}

static guint
iterations (guint fallback)
{
  const char *env = g_getenv ("QSTORE_CRASH_ITERATIONS");

  return env != NULL ? (guint) atoi (env) : fallback;
}

static void
test_writer_killed (void)
{
  g_autofree char *dir = test_make_tmp_dir ("qstore-pg-crash-XXXXXX");
  g_autofree char *uri = test_provider_uri (dir, "crash");
  guint n = iterations (40);

  for (guint i = 0; i < n; i++)
    {
      g_autofree char *run = g_strdup_printf ("w%04u", i);
      Writer w;
      int acked;

      writer_start (&w, uri, run);
      /* Between none and 30 commits acknowledged, then killed: most
       * often in the middle of the next one. */
      acked = writer_read_acks (&w, g_random_int_range (0, 31), -1);
      kill (w.pid, SIGKILL);
      acked = writer_finish (&w, acked, NULL);
      check_run (uri, run, acked);
    }
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
  guint n = MAX (iterations (40) / 40, 3);

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
      check_run (uri, run, acked);
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
