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

/* Past the rows a worker derives ahead of the commit, the partitions a
 * live query keeps to compute again at the commit stop growing (it is
 * then computed again whole), and the view is right after the commit. */
static void
test_large_transaction_bounded (TestReplica   *t,
                                gconstpointer  data)
{
  g_autoptr(QStoreReplicaTxn) txn = NULL;
  g_autofree char *fresh = NULL;
  const gint64 n = QSTORE_REPLICA_SPECULATION_ROWS + 8 * CHUNK;

  test_register (t->replica, 1, "SELECT * FROM t WHERE v % 3 = 0");
  test_drain (t->replica);
  qstore_replica_test_take_dirty_peak ();
  txn = test_txn_begin (t->replica);
  insert_rows (txn, 0, n - 1);
  test_txn_commit (txn);
  test_drain (t->replica);
  g_assert_cmpuint (qstore_replica_test_take_dirty_peak (), <=, QSTORE_REPLICA_DIRTY_PARTITIONS + 1);
  g_assert_cmpuint (snapshot_rows (t->replica, 1), ==, (n + 2) / 3);
  fresh = test_fresh_rows (t->replica, "SELECT count(*) FROM t WHERE v % 3 = 0");
  g_assert_cmpstr (fresh, ==, "[<int64 24576>]\n");
}

static void
count_notify (guint *n)
{
  (*n)++;
}

static guint64
writer_step (QStoreReplica *replica)
{
  return qstore_coordinator_get_write_out_step (replica->writer->coordinator);
}

/* The writer's write-out step, set on the replica: it reaches the writer's
 * coordinator, in an open transaction at once, survives the writer that
 * DDL opens again, and refuses what is out of range or a closed replica
 * with the step unchanged. */
static void
test_write_out_step (TestReplica   *t,
                     gconstpointer  data)
{
  QStoreProvider *provider = qstore_database_get_provider (t->replica->writer);
  gboolean writes_out = (qstore_provider_get_capabilities (provider) &
                         QSTORE_CAPABILITY_WRITE_TXN) != 0;
  g_autoptr(QStoreReplicaTxn) txn = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *count = NULL;
  guint64 step = 0;
  guint notified = 0;

  g_object_get (t->replica, "write-out-step", &step, NULL);
  g_assert_cmpuint (step, ==, 64 * 1024 * 1024);
  g_assert_cmpuint (writer_step (t->replica), ==, step);
  g_signal_connect_swapped (t->replica, "notify::write-out-step", G_CALLBACK (count_notify),
                            &notified);

  /* Two chunks stay in the writer's buffer under the default step; once
   * it is the smallest, the next ones go out. */
  txn = test_txn_begin (t->replica);
  insert_rows (txn, 0, 2 * CHUNK - 1);
  g_assert_cmpuint (qstore_coordinator_test_get_n_spills (t->replica->writer->coordinator), ==, 0);
  g_object_set (t->replica, "write-out-step", (guint64) 65536, NULL);
  g_assert_cmpuint (notified, ==, 1);
  g_assert_cmpuint (writer_step (t->replica), ==, 65536);
  insert_rows (txn, 2 * CHUNK, 4 * CHUNK - 1);
  if (writes_out)
    g_assert_cmpuint (qstore_coordinator_test_get_n_spills (t->replica->writer->coordinator), >, 0);
  else
    g_assert_cmpuint (qstore_coordinator_test_get_n_spills (t->replica->writer->coordinator), ==, 0);
  test_txn_commit (txn);
  count = test_fresh_rows (t->replica, "SELECT count(*) FROM t");
  g_assert_cmpstr (count, ==, "[<int64 4096>]\n");

  /* The writer DDL opens is a new database: the step carries over. */
  test_ddl (t->replica, "CREATE INDEX t_v ON t (v)");
  g_assert_cmpuint (writer_step (t->replica), ==, 65536);
  g_assert_cmpuint (qstore_replica_get_write_out_step (t->replica), ==, 65536);

  /* A step a DDL batch sets is the writer's once the batch commits; one
   * out of range fails the batch, which leaves the step alone. */
  test_ddl (t->replica, "PRAGMA qstore.write_out_step = 131072; CREATE INDEX t_v_id ON t (v, id)");
  g_assert_cmpuint (writer_step (t->replica), ==, 131072);
  g_assert_cmpuint (qstore_replica_get_write_out_step (t->replica), ==, 131072);
  g_assert_cmpuint (notified, ==, 2);
  g_assert_false (qstore_replica_exec_ddl (t->replica, "CREATE INDEX t_id_v ON t (id, v); "
                                           "PRAGMA qstore.write_out_step = 1", &error));
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  g_assert_cmpuint (qstore_replica_get_write_out_step (t->replica), ==, 131072);
  test_ddl (t->replica, "PRAGMA qstore.write_out_step = 65536");

  g_assert_false (qstore_replica_set_write_out_step (t->replica, 65535, &error));
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "write-out step"));
  g_clear_error (&error);
  g_assert_cmpuint (writer_step (t->replica), ==, 65536);
  g_assert_true (qstore_replica_set_write_out_step (t->replica, 4 * 1024 * 1024, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (writer_step (t->replica), ==, 4 * 1024 * 1024);
  g_assert_cmpuint (notified, ==, 4);

  g_assert_true (qstore_replica_close (t->replica, &error));
  g_assert_no_error (error);
  g_assert_false (qstore_replica_set_write_out_step (t->replica, 65536, &error));
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_CLOSED);
  g_assert_cmpuint (qstore_replica_get_write_out_step (t->replica), ==, 4 * 1024 * 1024);
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


/* Beyond the seed */

static GVariant *
row2 (gint64 a,
      gint64 b)
{
  return g_variant_new_parsed ("[[<%x>, <%x>]]", a, b);
}

static char *
text_of (GVariant *rows)
{
  g_autoptr(GVariant) owned = g_variant_ref_sink (rows);

  return test_rows_text (owned);
}

/* Hydrated, then the commit's slices, then its worker's progress, with
 * the transaction's id. */
static void
test_event_order (TestReplica   *t,
                  gconstpointer  data)
{
  guint worker = G_MAXUINT;
  guint64 tx;
  TestEvent *changed, *progressed;
  g_autofree char *added = NULL;
  g_autofree char *expected = NULL;
  g_autoptr(GError) error = NULL;
  guint i_hydrated = 0, i_changed = 0, i_progressed = 0;

  g_assert_true (qstore_replica_register_query (t->replica, 5, "SELECT id, v FROM t WHERE v > 5",
                                                &worker, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (worker, ==, 5 % 2);
  g_assert_cmpuint (qstore_replica_get_worker_for_query (t->replica, 5), ==, worker);

  tx = test_write (t->replica, "INSERT INTO t VALUES (1, 10), (2, 3)");
  test_drain (t->replica);

  for (guint i = 0; i < t->rec.events->len; i++)
    {
      TestEvent *event = t->rec.events->pdata[i];

      if (g_str_equal (event->kind, "hydrated"))
        i_hydrated = i + 1;
      else if (g_str_equal (event->kind, "changed"))
        i_changed = i + 1;
      else if (g_str_equal (event->kind, "progressed") && event->tx == tx && event->worker == worker)
        i_progressed = i + 1;
    }
  g_assert_cmpuint (i_hydrated, >, 0);
  g_assert_cmpuint (i_hydrated, <, i_changed);
  g_assert_cmpuint (i_changed, <, i_progressed);

  g_assert_cmpuint (test_n_rows (test_recorder_last (&t->rec, "hydrated", 5)->rows), ==, 0);
  changed = test_recorder_last (&t->rec, "changed", 5);
  g_assert_cmpuint (changed->tx, ==, tx);
  g_assert_cmpuint (test_n_rows (changed->removed), ==, 0);
  added = test_rows_text (changed->added);
  expected = text_of (row2 (1, 10));
  g_assert_cmpstr (added, ==, expected);
  progressed = test_recorder_last (&t->rec, "progressed", 0);
  g_assert_cmpuint (progressed->tx, ==, tx);
}

/* A live query with each strategy stays what a fresh run gives. */
static void
test_strategies (TestReplica   *t,
                 gconstpointer  data)
{
  static const char * const queries[] = {
    "SELECT id, v FROM t WHERE v % 3 = 0",                  /* per key */
    "SELECT g, count(*), sum(v) FROM u GROUP BY g",         /* per group (g is indexed) */
    "SELECT v % 4, count(*) FROM t GROUP BY v % 4",         /* rebuild */
    "SELECT t.id, u.g FROM t JOIN u ON u.id = t.id",        /* rebuild: a join */
    "SELECT id, v FROM t ORDER BY v DESC, id LIMIT 3",      /* rebuild: a window of rows */
  };

  test_ddl (t->replica, "CREATE TABLE u (id INTEGER PRIMARY KEY, g TEXT COLLATE NOCASE, v INTEGER);"
                        "CREATE INDEX u_g ON u (g)");
  for (guint q = 0; q < G_N_ELEMENTS (queries); q++)
    test_register (t->replica, q, queries[q]);
  test_write (t->replica, "INSERT INTO t VALUES (1, 3), (2, 4), (3, 6), (4, 9)");
  test_write (t->replica, "INSERT INTO u VALUES (1, 'a', 1), (2, 'A', 2), (3, 'b', 3), (5, NULL, 4)");
  test_write (t->replica, "UPDATE t SET v = v + 1 WHERE id <= 2");
  test_write (t->replica, "UPDATE u SET g = 'B' WHERE id = 1");
  test_write (t->replica, "DELETE FROM t WHERE id = 3");
  test_write (t->replica, "UPDATE t SET id = 10 WHERE id = 4");
  test_drain (t->replica);

  for (guint q = 0; q < G_N_ELEMENTS (queries); q++)
    {
      g_autoptr(GVariant) rows = qstore_replica_read_snapshot (t->replica, q, NULL, NULL);
      g_autofree char *held = NULL;
      g_autofree char *fresh = test_fresh_rows (t->replica, queries[q]);

      g_assert_nonnull (rows);
      held = test_rows_text (rows);
      g_assert_cmpstr (held, ==, fresh);
      g_assert_cmpuint (test_recorder_count (&t->rec, "faulted", q), ==, 0);
    }
}

/* After destroy returns, nothing more of the query arrives; a query
 * registered again under its id hears only of itself. */
static void
test_destroy_and_reregister (TestReplica   *t,
                             gconstpointer  data)
{
  test_register (t->replica, 3, "SELECT * FROM t");
  test_write (t->replica, "INSERT INTO t VALUES (1, 1)");
  /* Destroyed with its slices possibly still queued. */
  g_assert_true (qstore_replica_destroy_query (t->replica, 3));
  test_write (t->replica, "INSERT INTO t VALUES (2, 2)");
  test_drain (t->replica);
  g_assert_cmpuint (test_recorder_count (&t->rec, "changed", 3), ==, 0);

  test_register (t->replica, 3, "SELECT count(*) FROM t");
  test_drain (t->replica);
  g_assert_cmpuint (test_recorder_count (&t->rec, "hydrated", 3), ==, 1);
  g_assert_cmpstr (test_rows_text (test_recorder_last (&t->rec, "hydrated", 3)->rows), ==,
                   "[<int64 2>]\n");
  g_assert_false (qstore_replica_destroy_query (t->replica, 99));
}

static void
test_transactions (TestReplica   *t,
                   gconstpointer  data)
{
  g_autoptr(QStoreReplicaTxn) txn = test_txn_begin (t->replica);
  g_autoptr(QStoreReplicaCommitInfo) info = NULL;
  g_autoptr(QStoreResult) own = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *committed = NULL;
  guint64 before = qstore_replica_get_committed_tx_id (t->replica);

  g_assert_true (qstore_replica_is_write_open (t->replica));
  g_assert_cmpint (qstore_replica_txn_exec (txn, "INSERT INTO t VALUES (:id, :v)",
                                            g_variant_new_parsed ("{'id': <1>, 'v': <7>}"),
                                            &error), ==, 1);
  g_assert_no_error (error);
  /* The transaction reads its own writes; the replica's reads do not. */
  own = qstore_replica_txn_query (txn, "SELECT v FROM t WHERE id = ?", g_variant_new ("(x)", 1),
                                  &error);
  g_assert_no_error (error);
  g_assert_cmpuint (qstore_result_get_n_rows (own), ==, 1);
  committed = test_fresh_rows (t->replica, "SELECT count(*) FROM t");
  g_assert_cmpstr (committed, ==, "[<int64 0>]\n");

  /* A failed statement leaves the transaction open and unchanged. */
  g_assert_cmpint (qstore_replica_txn_exec (txn, "INSERT INTO t VALUES (1, 8)", NULL, &error), ==, -1);
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_CONSTRAINT);
  g_clear_error (&error);
  g_assert_true (qstore_replica_txn_is_open (txn));

  info = qstore_replica_txn_commit_with_info (txn, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (qstore_replica_commit_info_get_tx_id (info), ==, before + 1);
  g_assert_true (qstore_replica_commit_info_get_wrote (info));
  g_assert_cmpuint (qstore_replica_commit_info_get_n_changes (info), ==, 1);
  g_assert_cmpuint (qstore_replica_commit_info_get_n_chunks (info), ==, 0);
  g_assert_false (qstore_replica_txn_is_open (txn));
  g_assert_false (qstore_replica_is_write_open (t->replica));

  /* Over: every call says so. */
  g_assert_cmpint (qstore_replica_txn_exec (txn, "INSERT INTO t VALUES (2, 2)", NULL, &error), ==, -1);
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_CLOSED);
  g_clear_error (&error);
  g_assert_cmpuint (qstore_replica_txn_commit (txn, &error), ==, 0);
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_CLOSED);
  g_clear_error (&error);

  /* A transaction that writes nothing gets no id of its own. */
  g_clear_object (&txn);
  txn = test_txn_begin (t->replica);
  g_clear_pointer (&info, qstore_replica_commit_info_free);
  info = qstore_replica_txn_commit_with_info (txn, &error);
  g_assert_no_error (error);
  g_assert_false (qstore_replica_commit_info_get_wrote (info));
  g_assert_cmpuint (qstore_replica_commit_info_get_tx_id (info), ==, before + 1);

  /* A streamed one says how it streamed. */
  g_clear_object (&txn);
  txn = test_txn_begin (t->replica);
  insert_rows (txn, 100, 100 + 2 * CHUNK);
  g_clear_pointer (&info, qstore_replica_commit_info_free);
  info = qstore_replica_txn_commit_with_info (txn, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (qstore_replica_commit_info_get_n_chunks (info), ==, 2);
  g_assert_cmpuint (qstore_replica_commit_info_get_n_changes (info), ==, 2 * CHUNK + 1);
}

static void
test_refusals (TestReplica   *t,
               gconstpointer  data)
{
  g_autoptr(QStoreReplicaTxn) txn = NULL;
  g_autoptr(QStoreReplicaTxn) second = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) rows = NULL;
  g_autoptr(QStoreResult) result = NULL;

  test_register (t->replica, 1, "SELECT * FROM t");
  g_assert_false (qstore_replica_register_query (t->replica, 1, "SELECT * FROM t", NULL, &error));
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_EXISTS);
  g_clear_error (&error);
  g_assert_false (qstore_replica_register_query (t->replica, 2, "SELEC * FROM t", NULL, &error));
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_SYNTAX);
  g_assert_nonnull (strstr (error->message, "Live query 2"));
  g_clear_error (&error);
  g_assert_false (qstore_replica_register_query (t->replica, 2, "SELECT * FROM nowhere", NULL, &error));
  g_assert_nonnull (error);
  g_clear_error (&error);
  g_assert_false (qstore_replica_register_query (t->replica, 2, "DELETE FROM t", NULL, &error));
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);

  rows = qstore_replica_read_snapshot (t->replica, 42, NULL, &error);
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_NOT_FOUND);
  g_assert_null (rows);
  g_clear_error (&error);

  result = qstore_replica_query (t->replica, "DELETE FROM t", NULL, &error);
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_READ_ONLY);
  g_clear_error (&error);

  txn = test_txn_begin (t->replica);
  second = qstore_replica_begin_write (t->replica, &error);
  g_assert_error (error, QSTORE_REPLICA_ERROR, QSTORE_REPLICA_ERROR_WRITE_OPEN);
  g_assert_null (second);
  g_clear_error (&error);
  for (guint i = 0; i < 3; i++)
    {
      static const char * const control[] = { "COMMIT", "SAVEPOINT x", "  begin" };

      g_assert_cmpint (qstore_replica_txn_exec (txn, control[i], NULL, &error), ==, -1);
      g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT);
      g_clear_error (&error);
    }
  g_assert_true (qstore_replica_txn_is_open (txn));
  qstore_replica_txn_rollback (txn);

  /* Closed: every call says so. */
  g_assert_true (qstore_replica_close (t->replica, &error));
  g_assert_no_error (error);
  g_assert_true (qstore_replica_close (t->replica, &error));
  g_assert_false (qstore_replica_register_query (t->replica, 9, "SELECT 1", NULL, &error));
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_CLOSED);
  g_clear_error (&error);
  g_assert_null (qstore_replica_begin_write (t->replica, &error));
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_CLOSED);
}

/* A provider without snapshots */

typedef struct
{
  GObject parent_instance;
} TestFlatProvider;

typedef struct
{
  GObjectClass parent_class;
} TestFlatProviderClass;

GType test_flat_provider_get_type (void);
static void test_flat_provider_iface_init (QStoreProviderInterface *iface);
static void test_flat_provider_initable_init (GInitableIface *iface);

G_DEFINE_TYPE_WITH_CODE (TestFlatProvider, test_flat_provider, G_TYPE_OBJECT,
                         G_IMPLEMENT_INTERFACE (G_TYPE_INITABLE, test_flat_provider_initable_init)
                         G_IMPLEMENT_INTERFACE (QSTORE_TYPE_PROVIDER, test_flat_provider_iface_init))

static gboolean
flat_init (GInitable     *initable,
           GCancellable  *cancellable,
           GError       **error)
{
  return TRUE;
}

static void
flat_close (QStoreProvider *provider)
{
}

static void
test_flat_provider_initable_init (GInitableIface *iface)
{
  iface->init = flat_init;
}

static void
test_flat_provider_iface_init (QStoreProviderInterface *iface)
{
  iface->capabilities = QSTORE_CAPABILITY_PERSISTENT;
  iface->close = flat_close;
}

static void
test_flat_provider_class_init (TestFlatProviderClass *klass)
{
}

static void
test_flat_provider_init (TestFlatProvider *self)
{
}

static void
test_needs_snapshots (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(QStoreReplica) replica = NULL;
  g_auto(GStrv) names = qstore_list_providers ();

  g_io_extension_point_implement (QSTORE_PROVIDER_EXTENSION_POINT_NAME,
                                  test_flat_provider_get_type (), "flat", 0);
  replica = qstore_replica_open ("flat:/nowhere", 1, 0, &error);
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_UNSUPPORTED);
  g_assert_nonnull (strstr (error->message, "snapshots"));
  g_assert_null (replica);
}

/* Maintenance */

static void
test_foreign_key_audit (TestReplica   *t,
                        gconstpointer  data)
{
  g_autoptr(GVariant) report = NULL;
  g_autoptr(GVariant) first = NULL;
  g_autoptr(GVariant) second = NULL;
  g_autoptr(GVariant) rows = NULL;
  g_autoptr(GError) error = NULL;
  const char *table, *parent;
  guint64 violations;
  gboolean parent_exists;

  test_ddl (t->replica,
            "CREATE TABLE parent (id INTEGER PRIMARY KEY, name TEXT);"
            "CREATE TABLE child (id INTEGER PRIMARY KEY, parent_id INTEGER REFERENCES parent (id),"
            "                    note TEXT);"
            "CREATE TABLE orphan (id INTEGER PRIMARY KEY, gone_id INTEGER,"
            "                     CONSTRAINT to_gone FOREIGN KEY (gone_id) REFERENCES gone (id))");
  test_write (t->replica, "INSERT INTO parent VALUES (1, 'one')");
  test_write (t->replica, "INSERT INTO child VALUES (1, 1, 'ok'), (2, 7, 'dangling'), "
                          "(3, NULL, 'none'), (4, 8, 'dangling too')");
  test_write (t->replica, "INSERT INTO orphan VALUES (1, 5), (2, NULL)");

  report = qstore_replica_foreign_key_audit (t->replica, 1, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (g_variant_n_children (report), ==, 2);

  first = g_variant_get_child_value (report, 0);
  g_assert_true (g_variant_lookup (first, "table", "&s", &table));
  g_assert_cmpstr (table, ==, "child");
  g_assert_true (g_variant_lookup (first, "parent", "&s", &parent));
  g_assert_cmpstr (parent, ==, "parent");
  g_assert_true (g_variant_lookup (first, "violations", "t", &violations));
  g_assert_cmpuint (violations, ==, 2);
  rows = g_variant_lookup_value (first, "rows", G_VARIANT_TYPE ("aav"));
  g_assert_cmpuint (g_variant_n_children (rows), ==, 1);

  second = g_variant_get_child_value (report, 1);
  g_assert_true (g_variant_lookup (second, "table", "&s", &table));
  g_assert_cmpstr (table, ==, "orphan");
  g_assert_true (g_variant_lookup (second, "parent", "&s", &parent));
  g_assert_cmpstr (parent, ==, "gone");
  g_assert_true (g_variant_lookup (second, "parent_exists", "b", &parent_exists));
  g_assert_false (parent_exists);
  g_assert_true (g_variant_lookup (second, "violations", "t", &violations));
  g_assert_cmpuint (violations, ==, 1);

  /* Fixed, it finds nothing. */
  test_write (t->replica, "INSERT INTO parent VALUES (7, 'seven'), (8, 'eight')");
  g_clear_pointer (&report, g_variant_unref);
  g_clear_pointer (&first, g_variant_unref);
  report = qstore_replica_foreign_key_audit (t->replica, 0, &error);
  g_assert_no_error (error);
  first = g_variant_get_child_value (report, 0);
  g_assert_true (g_variant_lookup (first, "violations", "t", &violations));
  g_assert_cmpuint (violations, ==, 0);
}

static void
test_maintain_and_checkpoint (TestReplica   *t,
                              gconstpointer  data)
{
  g_autofree char *name = test_provider_name ();
  g_autoptr(GVariant) maintained = NULL;
  g_autoptr(GVariant) skipped = NULL;
  g_autoptr(GVariant) checkpoint = NULL;
  g_autoptr(QStoreReplicaTxn) txn = NULL;
  g_autoptr(GError) error = NULL;
  gboolean flag = FALSE;
  const char *reason;

  test_write (t->replica, "INSERT INTO t VALUES (1, 1)");

  txn = test_txn_begin (t->replica);
  skipped = qstore_replica_maintain (t->replica, &error);
  g_assert_no_error (error);
  g_assert_true (g_variant_lookup (skipped, "skipped", "b", &flag) && flag);
  qstore_replica_txn_rollback (txn);

  maintained = qstore_replica_maintain (t->replica, &error);
  g_assert_no_error (error);
  g_assert_true (g_variant_lookup (maintained, "skipped", "b", &flag));
  g_assert_false (flag);

  checkpoint = qstore_replica_checkpoint (t->replica, &error);
  g_assert_no_error (error);
  g_assert_true (g_variant_lookup (checkpoint, "performed", "b", &flag));
  if (g_str_equal (name, "sqlite"))
    {
      g_autofree char *wal = g_strconcat (t->dir, "/store.db-wal", NULL);
      GStatBuf st;
      gint64 frames = -1;

      g_assert_true (flag);
      g_assert_true (g_variant_lookup (checkpoint, "log_frames", "x", &frames));
      g_assert_cmpint (frames, >=, 0);
      /* Truncated when no reader holds the log. */
      if (g_variant_lookup (checkpoint, "busy", "b", &flag) && !flag)
        g_assert_true (g_stat (wal, &st) != 0 || st.st_size == 0);
    }
  else
    {
      g_assert_false (flag);
      g_assert_true (g_variant_lookup (checkpoint, "reason", "&s", &reason));
      if (g_str_equal (name, "lmdb"))
        g_assert_nonnull (strstr (reason, "LMDB"));
    }
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
  ADD ("large-transaction-bounded", 1, test_large_transaction_bounded);
  ADD ("seed/snapshot-refused-while-speculative", 1, test_snapshot_refused_while_speculative);
  ADD ("seed/snapshot-served-under-small-write", 1, test_snapshot_served_under_small_write);
  ADD ("seed/register-refused-midstream", 1, test_register_refused_midstream);
  ADD ("seed/destroy-midstream", 1, test_destroy_midstream);
  ADD ("seed/rollback-clears-fence", 1, test_rollback_clears_fence);
  ADD ("event-order", 2, test_event_order);
  ADD ("strategies", 2, test_strategies);
  ADD ("destroy-and-reregister", 2, test_destroy_and_reregister);
  ADD ("transactions", 1, test_transactions);
  ADD ("refusals", 2, test_refusals);
  ADD ("foreign-key-audit", 1, test_foreign_key_audit);
  ADD ("maintain-and-checkpoint", 2, test_maintain_and_checkpoint);
  ADD ("write-out-step", 1, test_write_out_step);
  g_test_add_func ("/replica/needs-snapshots", test_needs_snapshots);

  return g_test_run ();
}
