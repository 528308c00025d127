/* qstore-bench-follow.c: how long `qstore changes --follow` takes to tell a commit
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <signal.h>
#include <string.h>
#include <unistd.h>

#include <gio/gio.h>
#include <gio/gunixinputstream.h>

#include "qstore-bench-follow.h"

#define LINE_TIMEOUT_MS 10000

/* Reads the next line of @fd within LINE_TIMEOUT_MS. */
static gboolean
read_line (int       fd,
           GString  *pending,
           GError  **error)
{
  gint64 deadline = g_get_monotonic_time () + (gint64) LINE_TIMEOUT_MS * 1000;

  for (;;)
    {
      char *newline = strchr (pending->str, '\n');
      GPollFD poll_fd = { fd, G_IO_IN | G_IO_HUP, 0 };
      gint64 left = (deadline - g_get_monotonic_time ()) / 1000;
      char buffer[4096];
      gssize n;

      if (newline != NULL)
        {
          g_string_erase (pending, 0, newline - pending->str + 1);
          return TRUE;
        }
      if (left <= 0 || g_poll (&poll_fd, 1, (int) left) <= 0 ||
          (n = read (fd, buffer, sizeof buffer)) <= 0)
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_TIMED_OUT,
                       "qstore changes --follow printed nothing for %d ms after a commit",
                       LINE_TIMEOUT_MS);
          return FALSE;
        }
      g_string_append_len (pending, buffer, n);
    }
}

static int
compare_doubles (gconstpointer a,
                 gconstpointer b)
{
  double x = *(const double *) a, y = *(const double *) b;

  return x < y ? -1 : x > y;
}

gboolean
qstore_bench_follow_lag (QStoreDatabase  *db,
                         const char      *uri,
                         const char      *qstore,
                         guint            n_commits,
                         double          *median_ms,
                         double          *p99_ms,
                         GError         **error)
{
  g_autoptr(GArray) lags = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr(GSubprocess) follower = NULL;
  g_autoptr(GString) pending = g_string_new (NULL);
  g_autofree char *since = NULL;
  gboolean ok = TRUE;
  int fd;

  if (!qstore_database_exec (db, "CREATE TABLE IF NOT EXISTS bench_lag (id INTEGER PRIMARY KEY, "
                                 "at INTEGER)", error))
    return FALSE;
  {
    g_autoptr(QStoreResult) setting = qstore_database_query (db, "PRAGMA qstore.change_log",
                                                             NULL, error);
    g_autoptr(GVariant) retain = NULL;

    if (setting == NULL)
      return FALSE;
    retain = qstore_result_get_value (setting, 0, 0);
    if (g_variant_get_int64 (retain) == 0 &&
        !qstore_database_exec (db, "PRAGMA qstore.change_log = 10000", error))
      return FALSE;
  }

  since = g_strdup_printf ("%" G_GUINT64_FORMAT,
                           qstore_coordinator_get_last_tx_id (qstore_database_get_coordinator (db)));
  follower = g_subprocess_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE, error, qstore, "--store", uri,
                               "changes", "--follow", "--since", since, NULL);
  if (follower == NULL)
    return FALSE;
  fd = g_unix_input_stream_get_fd (G_UNIX_INPUT_STREAM (g_subprocess_get_stdout_pipe (follower)));

  /* The first commit is not timed: the child may still be starting. */
  for (guint i = 0; ok && i <= n_commits; i++)
    {
      g_autofree char *sql = g_strdup_printf ("INSERT INTO bench_lag (at) VALUES (%" G_GINT64_FORMAT ")",
                                              g_get_real_time ());
      gint64 committed, told;

      ok = qstore_database_exec (db, sql, error);
      committed = g_get_monotonic_time ();
      ok = ok && read_line (fd, pending, error);
      told = g_get_monotonic_time ();
      if (ok && i > 0)
        {
          double ms = (double) (told - committed) / 1000.0;

          g_array_append_val (lags, ms);
        }
    }

  g_subprocess_send_signal (follower, SIGTERM);
  g_subprocess_wait (follower, NULL, NULL);
  if (ok && !g_subprocess_get_if_exited (follower))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED,
                   "qstore changes --follow did not end cleanly at SIGTERM");
      return FALSE;
    }
  if (!ok)
    return FALSE;
  g_array_sort (lags, compare_doubles);
  *median_ms = g_array_index (lags, double, lags->len / 2);
  *p99_ms = g_array_index (lags, double, MIN (lags->len - 1, lags->len * 99 / 100));
  return TRUE;
}
