/* test-mv-write-txn.c: the durable stale set inside large transactions
 *
 * A transaction past the coordinator's buffer is written out into the
 * provider's open write transaction, and the provider refuses every
 * other write until it ends. A view that goes stale then must still be
 * named by the durable stale set before any write it does not follow
 * becomes durable, or a reopen after a crash trusts a view that is
 * behind. Each test runs a child that commits and is killed before it
 * closes, then reopens.
 *
 * Usage: test-mv-write-txn [--tap], with QSTORE_TEST_PROVIDER set to a
 * provider with write transactions (lmdb, sqlite). The child is this program
 * again: `test-mv-write-txn --child URI MODE`.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gio/gio.h>
#include <qstore.h>

#include "qstore-coordinator-private.h"
#include "qstore-fault-private.h"
#include "qstore-test-util.h"

static const char *self_path;

typedef TestDatabase Fixture;

/* QSTORE_MVIEW_FAULT_STALE_SET: the next write of the durable stale set
 * on its own (not inside a commit) fails. */
#define STALE_SET_FAULT "stale-set"

/* Rows written in the large transaction: with the view's own rows, well
 * past the 1,024 writes the coordinator buffers. */
#define N_ROWS 3000

static void
fixture_setup (Fixture       *f,
               gconstpointer  data)
{
  test_database_set_up (f, "qstore-mv-write-txn-XXXXXX");
  /* json() fails on text that is not JSON: maintenance fails on such a
   * row and the view goes stale. */
  test_exec (f->db, "CREATE TABLE src (id INTEGER PRIMARY KEY, v TEXT);"
                    "INSERT INTO src VALUES (1, '1'), (2, '2');"
                    "CREATE MATERIALIZED VIEW mv AS SELECT id, json(v) AS j FROM src");
  test_close_database (&f->db);
}

static gboolean
view_stale (QStoreDatabase *db)
{
  g_autoptr(GListModel) views = qstore_database_list_materialized_views (db);
  g_autoptr(QStoreMaterializedView) view = NULL;

  if (g_list_model_get_n_items (views) != 1)
    return FALSE;
  view = g_list_model_get_item (views, 0);
  return qstore_materialized_view_get_stale (view);
}

/* A transaction of N_ROWS inserts that writes out, in which row 1 turns
 * into text json() refuses (the view goes stale) and back, ended with
 * @end. */
static gboolean
large_transaction (QStoreDatabase  *db,
                   const char      *end,
                   gboolean         fault_at_end,
                   GError         **error)
{
  QStoreCoordinator *coordinator = qstore_database_get_coordinator (db);
  guint spills = qstore_coordinator_test_get_n_spills (coordinator);

  /* Write out at every look, so that a small transaction does. */
  qstore_coordinator_test_set_spill_bytes (coordinator, 0);
  if (!qstore_database_exec (db, "BEGIN", error))
    return FALSE;
  for (guint i = 0; i < N_ROWS; i++)
    {
      g_autofree char *sql = g_strdup_printf ("INSERT INTO src VALUES (%u, '%u')", 100 + i, i);

      if (i == N_ROWS / 2 &&
          (!qstore_database_exec (db, "UPDATE src SET v = 'not json' WHERE id = 1", error) ||
           !qstore_database_exec (db, "UPDATE src SET v = '1' WHERE id = 1", error)))
        return FALSE;
      if (!qstore_database_exec (db, sql, error))
        return FALSE;
    }
  if (qstore_coordinator_test_get_n_spills (coordinator) == spills || !view_stale (db))
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_FAILED,
                   "the transaction did not write out (%u) or the view is not stale",
                   qstore_coordinator_test_get_n_spills (coordinator) - spills);
      return FALSE;
    }
  if (fault_at_end)
    _qstore_fault_arm (STALE_SET_FAULT, 0);
  return qstore_database_exec (db, end, error);
}

/* Commits (MODE "commit"), or rolls back and then commits a small
 * transaction (MODE "rollback"; "rollback-fault" makes the write of the
 * stale set after the rollback fail, so that the small transaction must
 * carry it), says "done" and waits to be killed. A write of the set on
 * its own after a commit fails as if the process had died before it: only
 * a set the commit itself carried is on disk. */
static int
child (const char *uri,
       const char *mode)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(QStoreDatabase) db = qstore_database_open (uri, QSTORE_OPEN_NONE, &error);
  gboolean ok;

  if (db == NULL)
    {
      g_printerr ("child: %s\n", error->message);
      return 1;
    }
  if (g_str_equal (mode, "commit"))
    {
      _qstore_fault_arm (STALE_SET_FAULT, 0);
      ok = large_transaction (db, "COMMIT", FALSE, &error);
    }
  else
    {
      ok = large_transaction (db, "ROLLBACK", g_str_equal (mode, "rollback-fault"), &error);
      if (g_str_equal (mode, "rollback-fault"))
        _qstore_fault_arm (STALE_SET_FAULT, 0);
      ok = ok && qstore_database_exec (db, "INSERT INTO src VALUES (50, '50')", &error);
    }
  if (!ok)
    {
      g_printerr ("child: %s\n", error->message);
      return 1;
    }
  printf ("done\n");
  fflush (stdout);
  for (;;)
    g_usleep (G_USEC_PER_SEC);
  return 0;
}

static void
run_child_and_kill (const char *uri,
                    const char *mode)
{
  const char *argv[] = { self_path, "--child", uri, mode, NULL };
  g_autoptr(GError) error = NULL;
  g_autoptr(GString) pending = g_string_new (NULL);
  g_autofree char *line = NULL;
  GPid pid;
  int out_fd;
  int status;

  g_spawn_async_with_pipes (NULL, (char **) argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD, NULL, NULL,
                            &pid, NULL, &out_fd, NULL, &error);
  g_assert_no_error (error);
  line = test_read_line (out_fd, pending, -1);
  kill (pid, SIGKILL);
  waitpid (pid, &status, 0);
  g_spawn_close_pid (pid);
  close (out_fd);
  g_assert_cmpstr (line, ==, "done");
}

static void
append_value (GString  *out,
              GVariant *value)
{
  g_variant_print_string (value, out, TRUE);
}

/* The reopen does not trust the view: it computes it again, and it holds
 * what its body gives. */
static void
assert_view_refilled (const char *uri,
                      gint64      expected_rows)
{
  g_autoptr(QStoreDatabase) db = test_open_database (uri, QSTORE_OPEN_NONE);
  QStoreRehydrationResult *result = qstore_database_get_rehydration_result (db);
  g_autofree char *stored = NULL;
  g_autofree char *fresh = NULL;

  g_assert_false (test_strv_has (qstore_rehydration_result_get_adopted_materialized_views (result),
                                 "main.mv"));
  g_assert_true (test_strv_has (qstore_rehydration_result_get_refilled_materialized_views (result),
                                "main.mv"));
  g_assert_false (view_stale (db));
  stored = test_query_text (db, "SELECT id, j FROM mv ORDER BY id", append_value);
  fresh = test_query_text (db, "SELECT id, json(v) FROM src ORDER BY id", append_value);
  g_assert_cmpstr (stored, ==, fresh);
  g_assert_cmpint (test_query_int (db, "SELECT count(*) FROM mv"), ==, expected_rows);
  test_close_database (&db);
}

/* Stale in a transaction that wrote out, committed, killed. */
static void
test_commit (Fixture       *f,
             gconstpointer  data)
{
  run_child_and_kill (f->uri, "commit");
  assert_view_refilled (f->uri, 2 + N_ROWS);
}

/* Stale in a transaction that wrote out and rolled back; a later small
 * transaction writes what the stale view does not follow; killed. */
static void
test_rollback (Fixture       *f,
               gconstpointer  data)
{
  run_child_and_kill (f->uri, "rollback");
  assert_view_refilled (f->uri, 3);
}

/* The same, when writing the set after the rollback fails: the next
 * commit carries it. */
static void
test_rollback_fault (Fixture       *f,
                     gconstpointer  data)
{
  run_child_and_kill (f->uri, "rollback-fault");
  assert_view_refilled (f->uri, 3);
}

int
main (int    argc,
      char **argv)
{
  self_path = argv[0];
  if (argc == 4 && g_str_equal (argv[1], "--child"))
    return child (argv[2], argv[3]);
  g_test_init (&argc, &argv, NULL);

  g_test_add ("/mv/write-txn/stale-committed", Fixture, NULL, fixture_setup, test_commit,
              test_database_tear_down);
  g_test_add ("/mv/write-txn/stale-rolled-back", Fixture, NULL, fixture_setup, test_rollback,
              test_database_tear_down);
  g_test_add ("/mv/write-txn/stale-rolled-back-unwritten", Fixture, NULL, fixture_setup,
              test_rollback_fault, test_database_tear_down);
  return g_test_run ();
}
