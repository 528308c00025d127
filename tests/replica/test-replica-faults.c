/* test-replica-faults.c: workers that die or hang, and the restart budget
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "replica-test-util.h"

static void
set_up (TestReplica   *t,
        gconstpointer  data)
{
  test_replica_set_up_with (t, 2, 0);
  test_ddl (t->replica, "CREATE TABLE t (id INTEGER PRIMARY KEY, v INTEGER)");
}

static void
tear_down (TestReplica   *t,
           gconstpointer  data)
{
  test_replica_tear_down (t);
}

static void
check_query (QStoreReplica *replica,
             guint64        query,
             const char    *sql)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) rows = qstore_replica_read_snapshot (replica, query, NULL, &error);
  g_autofree char *held = NULL;
  g_autofree char *fresh = test_fresh_rows (replica, sql);

  g_assert_no_error (error);
  held = test_rows_text (rows);
  g_assert_cmpstr (held, ==, fresh);
}

/* A worker that dies is replaced; its queries fault, and registered again
 * they go on as if nothing happened. The other worker's go on anyway. */
static void
test_killed_worker (TestReplica   *t,
                    gconstpointer  data)
{
  test_register (t->replica, 1, "SELECT * FROM t WHERE v > 0");
  test_register (t->replica, 2, "SELECT * FROM t WHERE v < 100");
  test_write (t->replica, "INSERT INTO t VALUES (1, 10), (2, 20)");
  test_drain (t->replica);

  qstore_replica_test_kill_worker (t->replica, 1);
  test_write (t->replica, "INSERT INTO t VALUES (3, 30)");
  test_drain (t->replica);

  g_assert_cmpuint (test_recorder_count (&t->rec, "faulted", 1), ==, 1);
  g_assert_nonnull (strstr (test_recorder_last (&t->rec, "faulted", 1)->reason, "died"));
  g_assert_cmpuint (test_recorder_count (&t->rec, "faulted", 2), ==, 0);
  g_assert_false (qstore_replica_worker_is_degraded (t->replica, 1));
  check_query (t->replica, 2, "SELECT * FROM t WHERE v < 100");

  /* Registered again on the new worker, it is whole, and follows. */
  test_register (t->replica, 1, "SELECT * FROM t WHERE v > 0");
  test_drain (t->replica);
  g_assert_cmpuint (test_n_rows (test_recorder_last (&t->rec, "hydrated", 1)->rows), ==, 3);
  test_write (t->replica, "UPDATE t SET v = -1 WHERE id = 2");
  test_write (t->replica, "INSERT INTO t VALUES (4, 40)");
  test_drain (t->replica);
  check_query (t->replica, 1, "SELECT * FROM t WHERE v > 0");
  check_query (t->replica, 2, "SELECT * FROM t WHERE v < 100");
  g_assert_cmpuint (test_recorder_count (&t->rec, "faulted", 1), ==, 1);
}

/* Past the restart budget, the place is retired rather than restarted
 * in a loop; the other place goes on. */
static void
test_repeated_kills_degrade (TestReplica   *t,
                             gconstpointer  data)
{
  g_autoptr(GError) error = NULL;

  qstore_replica_test_set_fault_limits (t->replica, 2, 60 * 1000, 30 * 1000);
  test_register (t->replica, 2, "SELECT * FROM t");

  for (guint round = 0; round < 3; round++)
    {
      test_register (t->replica, 1, "SELECT * FROM t");
      qstore_replica_test_kill_worker (t->replica, 1);
      if (round == 2)
        g_test_expect_message ("qstore", G_LOG_LEVEL_WARNING, "Replica worker 1 is retired*");
      test_drain (t->replica);
      if (round == 2)
        g_test_assert_expected_messages ();
      g_assert_cmpuint (test_recorder_count (&t->rec, "faulted", 1), ==, round + 1);
      g_assert_cmpint (qstore_replica_worker_is_degraded (t->replica, 1), ==, round == 2);
    }
  g_assert_nonnull (strstr (test_recorder_last (&t->rec, "faulted", 1)->reason, "retired"));

  g_assert_false (qstore_replica_register_query (t->replica, 3, "SELECT * FROM t", NULL, &error));
  g_assert_error (error, QSTORE_REPLICA_ERROR, QSTORE_REPLICA_ERROR_DEGRADED);
  g_clear_error (&error);

  /* Writes go on, and so does the other worker. */
  test_write (t->replica, "INSERT INTO t VALUES (1, 1)");
  test_drain (t->replica);
  check_query (t->replica, 2, "SELECT * FROM t");
  test_register (t->replica, 4, "SELECT count(*) FROM t");
  test_drain (t->replica);
  check_query (t->replica, 4, "SELECT count(*) FROM t");
}

/* A worker that stops answering past the deadline is replaced too. */
static void
test_hung_worker (TestReplica   *t,
                  gconstpointer  data)
{
  gint64 start;

  qstore_replica_test_set_fault_limits (t->replica, 3, 60 * 1000, 300);
  test_register (t->replica, 1, "SELECT * FROM t");
  test_register (t->replica, 2, "SELECT * FROM t");
  test_drain (t->replica);

  start = g_get_monotonic_time ();
  qstore_replica_test_stall_worker (t->replica, 1, 20 * 1000);
  test_write (t->replica, "INSERT INTO t VALUES (1, 1)");
  test_drain (t->replica);
  /* Replaced well before the stall would have ended. */
  g_assert_cmpint (g_get_monotonic_time () - start, <, 10 * G_USEC_PER_SEC);
  g_assert_cmpuint (test_recorder_count (&t->rec, "faulted", 1), ==, 1);
  g_assert_nonnull (strstr (test_recorder_last (&t->rec, "faulted", 1)->reason, "stopped answering"));
  g_assert_cmpuint (test_recorder_count (&t->rec, "faulted", 2), ==, 0);
  check_query (t->replica, 2, "SELECT * FROM t");

  test_register (t->replica, 1, "SELECT * FROM t");
  test_write (t->replica, "INSERT INTO t VALUES (2, 2)");
  test_drain (t->replica);
  check_query (t->replica, 1, "SELECT * FROM t");
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

#define ADD(path, func) \
  g_test_add ("/replica/faults/" path, TestReplica, NULL, set_up, func, tear_down)

  ADD ("killed-worker", test_killed_worker);
  ADD ("repeated-kills-degrade", test_repeated_kills_degrade);
  ADD ("hung-worker", test_hung_worker);

  return g_test_run ();
}
