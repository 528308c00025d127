/* test-replica.c: the replica's live queries, writes and streaming
 *
 * The seed's seven streaming tests, translated, then what the rest of the
 * API promises: the order of events, each strategy, teardown, and every
 * refusal with its error.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "replica-test-util.h"

#define CHUNK QSTORE_REPLICA_CHUNK_ROWS

static void
set_up (TestReplica   *t,
        gconstpointer  data)
{
  test_replica_set_up_with (t, GPOINTER_TO_UINT (data), 0);
  test_ddl (t->replica, "CREATE TABLE t (id INTEGER PRIMARY KEY, v INTEGER)");
}

static void
tear_down (TestReplica   *t,
           gconstpointer  data)
{
  test_replica_tear_down (t);
}

static void
insert_rows (QStoreReplicaTxn *txn,
             gint64            first,
             gint64            last)
{
  for (gint64 id = first; id <= last; id++)
    test_txn_exec (txn, "INSERT INTO t VALUES (?, ?)", g_variant_new ("(xx)", id, id * 2));
}

static guint
snapshot_rows (QStoreReplica *replica,
               guint64        query)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) rows = qstore_replica_read_snapshot (replica, query, NULL, &error);

  g_assert_no_error (error);
  return test_n_rows (rows);
}

/* The seed's tests */

/* The writer hands its captured changes to the workers between
 * statements, so a large transaction holds about one chunk of them, not
 * the whole transaction. */
static void
test_capture_stays_chunk_bounded (TestReplica   *t,
                                  gconstpointer  data)
{
  g_autoptr(QStoreReplicaTxn) txn = test_txn_begin (t->replica);
  guint64 before = qstore_replica_get_committed_tx_id (t->replica);
  guint high = 0;

  for (gint64 id = 0; id < 3 * CHUNK; id++)
    {
      test_txn_exec (txn, "INSERT INTO t VALUES (?, ?)", g_variant_new ("(xx)", id, id * 2));
      high = MAX (high, qstore_replica_test_get_capture_length (txn));
    }
  g_assert_cmpuint (high, <=, CHUNK);
  g_assert_cmpuint (high, >, 0);
  g_assert_cmpuint (test_txn_commit (txn), ==, before + 1);
  g_assert_cmpuint (qstore_replica_get_committed_tx_id (t->replica), ==, before + 1);
}

/* The same statement text runs after a schema change, and the workers
 * follow the new schema. */
static void
test_statement_after_schema_change (TestReplica   *t,
                                    gconstpointer  data)
{
  g_autoptr(QStoreReplicaTxn) first = NULL;
  g_autoptr(QStoreReplicaTxn) second = NULL;
  g_autofree char *count = NULL;

  test_register (t->replica, 1, "SELECT * FROM t");
  first = test_txn_begin (t->replica);
  test_txn_exec (first, "INSERT INTO t VALUES (?, ?)", g_variant_new ("(xx)", 1, 10));
  test_txn_commit (first);

  test_ddl (t->replica, "CREATE INDEX t_v ON t (v)");
  second = test_txn_begin (t->replica);
  test_txn_exec (second, "INSERT INTO t VALUES (?, ?)", g_variant_new ("(xx)", 2, 20));
  test_txn_commit (second);

  count = test_fresh_rows (t->replica, "SELECT count(*) FROM t");
  g_assert_cmpstr (count, ==, "[<int64 2>]\n");
  test_drain (t->replica);
  g_assert_cmpuint (snapshot_rows (t->replica, 1), ==, 2);
}

static void
test_snapshot_refused_while_speculative (TestReplica   *t,
                                         gconstpointer  data)
{
  g_autoptr(QStoreReplicaTxn) txn = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) rows = NULL;

  test_register (t->replica, 1, "SELECT * FROM t");
  txn = test_txn_begin (t->replica);
  insert_rows (txn, 0, CHUNK);
  g_assert_true (qstore_replica_view_is_speculative (t->replica));
  rows = qstore_replica_read_snapshot (t->replica, 1, NULL, &error);
  g_assert_error (error, QSTORE_REPLICA_ERROR, QSTORE_REPLICA_ERROR_READ_REJECTED);
  g_assert_null (rows);

  test_txn_commit (txn);
  g_assert_false (qstore_replica_view_is_speculative (t->replica));
  g_assert_cmpuint (snapshot_rows (t->replica, 1), ==, CHUNK + 1);
}

/* The fence is about streamed state, not about a write being open. */
static void
test_snapshot_served_under_small_write (TestReplica   *t,
                                        gconstpointer  data)
{
  g_autoptr(QStoreReplicaTxn) txn = NULL;

  test_register (t->replica, 1, "SELECT * FROM t");
  test_write (t->replica, "INSERT INTO t VALUES (0, 0)");

  txn = test_txn_begin (t->replica);
  insert_rows (txn, 1, 9);
  g_assert_false (qstore_replica_view_is_speculative (t->replica));
  g_assert_cmpuint (snapshot_rows (t->replica, 1), ==, 1);

  test_txn_commit (txn);
  g_assert_cmpuint (snapshot_rows (t->replica, 1), ==, 10);
}

static void
test_register_refused_midstream (TestReplica   *t,
                                 gconstpointer  data)
{
  g_autoptr(QStoreReplicaTxn) txn = NULL;
  g_autoptr(GError) error = NULL;
  TestEvent *hydrated;
  guint64 committed;

  test_write (t->replica, "INSERT INTO t VALUES (0, 0)");
  test_drain (t->replica);

  txn = test_txn_begin (t->replica);
  insert_rows (txn, 1, CHUNK + 1);
  g_assert_true (qstore_replica_view_is_speculative (t->replica));
  g_assert_false (qstore_replica_register_query (t->replica, 7, "SELECT * FROM t", NULL, &error));
  g_assert_error (error, QSTORE_REPLICA_ERROR, QSTORE_REPLICA_ERROR_SPECULATIVE);
  g_clear_error (&error);

  /* After the commit the same registration is served, with the whole
   * committed table at the commit. */
  test_txn_commit (txn);
  g_assert_false (qstore_replica_view_is_speculative (t->replica));
  committed = qstore_replica_get_committed_tx_id (t->replica);
  test_register (t->replica, 7, "SELECT * FROM t");
  test_drain (t->replica);
  g_assert_cmpuint (test_recorder_count (&t->rec, "hydrated", 7), ==, 1);
  hydrated = test_recorder_last (&t->rec, "hydrated", 7);
  g_assert_cmpuint (hydrated->tx, ==, committed);
  g_assert_cmpuint (test_n_rows (hydrated->rows), ==, CHUNK + 2);
}

/* Teardown is the safe direction while a transaction streams. */
static void
test_destroy_midstream (TestReplica   *t,
                        gconstpointer  data)
{
  g_autoptr(QStoreReplicaTxn) txn = NULL;

  test_register (t->replica, 1, "SELECT * FROM t");
  test_register (t->replica, 2, "SELECT * FROM t");
  test_write (t->replica, "INSERT INTO t VALUES (0, 0)");
  test_drain (t->replica);

  txn = test_txn_begin (t->replica);
  insert_rows (txn, 1, CHUNK + 1);
  g_assert_true (qstore_replica_view_is_speculative (t->replica));
  g_assert_true (qstore_replica_destroy_query (t->replica, 2));
  g_assert_false (qstore_replica_destroy_query (t->replica, 2));

  test_txn_commit (txn);
  g_assert_cmpuint (snapshot_rows (t->replica, 1), ==, CHUNK + 2);
  test_drain (t->replica);
  g_assert_cmpuint (test_recorder_count (&t->rec, "faulted", 1), ==, 0);
  g_assert_cmpuint (test_recorder_count (&t->rec, "faulted", 2), ==, 0);
}

/* A rollback clears the fence too, and the queries that showed rows of
 * the rolled-back transaction fault. */
static void
test_rollback_clears_fence (TestReplica   *t,
                            gconstpointer  data)
{
  QStoreReplicaTxn *txn;

  test_register (t->replica, 1, "SELECT * FROM t");
  test_register (t->replica, 2, "SELECT count(*) FROM t");
  test_drain (t->replica);

  txn = test_txn_begin (t->replica);
  insert_rows (txn, 0, CHUNK);
  g_assert_true (qstore_replica_view_is_speculative (t->replica));
  /* Dropped, as the seed drops it: a rollback. */
  g_object_unref (txn);
  g_assert_false (qstore_replica_view_is_speculative (t->replica));
  g_assert_false (qstore_replica_is_write_open (t->replica));

  test_drain (t->replica);
  /* Query 1 derives per key and showed rows early; query 2 rebuilds, at
   * the commit only, and showed nothing. */
  g_assert_cmpuint (test_recorder_count (&t->rec, "changed", 1), >, 0);
  g_assert_cmpuint (test_recorder_count (&t->rec, "faulted", 1), ==, 1);
  g_assert_cmpuint (test_recorder_count (&t->rec, "changed", 2), ==, 0);
  g_assert_cmpuint (test_recorder_count (&t->rec, "faulted", 2), ==, 0);
  g_assert_cmpuint (snapshot_rows (t->replica, 2), ==, 1);

  /* Registered again, it is served as committed: empty. */
  test_register (t->replica, 1, "SELECT * FROM t");
  test_drain (t->replica);
  g_assert_cmpuint (test_n_rows (test_recorder_last (&t->rec, "hydrated", 1)->rows), ==, 0);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

#define ADD(path, n, func) \
  g_test_add ("/replica/" path, TestReplica, GUINT_TO_POINTER (n), set_up, func, tear_down)

  ADD ("seed/capture-stays-chunk-bounded", 2, test_capture_stays_chunk_bounded);
  ADD ("seed/statement-after-schema-change", 1, test_statement_after_schema_change);
  ADD ("seed/snapshot-refused-while-speculative", 1, test_snapshot_refused_while_speculative);
  ADD ("seed/snapshot-served-under-small-write", 1, test_snapshot_served_under_small_write);
  ADD ("seed/register-refused-midstream", 1, test_register_refused_midstream);
  ADD ("seed/destroy-midstream", 1, test_destroy_midstream);
  ADD ("seed/rollback-clears-fence", 1, test_rollback_clears_fence);

  return g_test_run ();
}
