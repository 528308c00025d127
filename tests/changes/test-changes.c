/* test-changes.c: the change log, change feeds, gaps and crashes
 *
 * Runs against the provider QSTORE_TEST_PROVIDER names. What needs a
 * second look at the store (followers, reopening, crashes) is skipped on
 * memory. QSTORE_TEST_CHANGE_TRANSACTIONS sets the length of the replayed
 * workload (10000), QSTORE_CRASH_ITERATIONS the number of crashes (100).
 *
 * The crash loop runs this program again as a child: `test-changes
 * --crash-child URI SEED` writes random transactions, printing the id of
 * each one committed, until it is killed.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <signal.h>
#include <stdio.h>

#include "changes-test-util.h"
#include "qstore-change-log-private.h"
#include "qstore-coordinator-private.h"
#include "qstore-fault-private.h"

static const char *self_path;

/* The log's keys, as the store holds them: the transaction id in 8
 * big-endian bytes. */
static void
log_key (guint64 tx_id,
         guint8  key[QSTORE_CHANGE_LOG_KEY_LEN])
{
  for (int i = QSTORE_CHANGE_LOG_KEY_LEN - 1; i >= 0; i--, tx_id >>= 8)
    key[i] = tx_id & 0xff;
}

static guint64
log_key_tx (const guint8 *key,
            gsize         len)
{
  guint64 tx_id = 0;

  g_assert_cmpuint (len, ==, QSTORE_CHANGE_LOG_KEY_LEN);
  for (gsize i = 0; i < len; i++)
    tx_id = tx_id << 8 | key[i];
  return tx_id;
}

static void
fixture_setup (TestDatabase  *t,
               gconstpointer  data)
{
  test_database_set_up (t, "qstore-changes-XXXXXX");
}

static guint64
last_tx (QStoreDatabase *db)
{
  return qstore_coordinator_get_last_tx_id (qstore_database_get_coordinator (db));
}

/* What a follower tells, as lines: "tx N (n changes)" and "gap: …". */
typedef struct
{
  GPtrArray *sets;
  GPtrArray *lines;
  GArray    *down;     /* gint64 per gap */
} Heard;

static void
heard_changes (QStoreChangeFeed *feed,
               QStoreChangeSet  *change_set,
               Heard            *heard)
{
  g_ptr_array_add (heard->sets, g_object_ref (change_set));
  g_ptr_array_add (heard->lines, g_strdup_printf ("tx %" G_GUINT64_FORMAT,
                                                  qstore_change_set_get_tx_id (change_set)));
}

static void
heard_gap (QStoreChangeFeed *feed,
           const char       *reason,
           gint64            down_for_ms,
           Heard            *heard)
{
  g_ptr_array_add (heard->lines, g_strdup_printf ("gap: %s", reason));
  g_array_append_val (heard->down, down_for_ms);
}

static void
heard_init (Heard            *heard,
            QStoreChangeFeed *feed)
{
  heard->sets = g_ptr_array_new_with_free_func (g_object_unref);
  heard->lines = g_ptr_array_new_with_free_func (g_free);
  heard->down = g_array_new (FALSE, FALSE, sizeof (gint64));
  g_signal_connect (feed, "changes", G_CALLBACK (heard_changes), heard);
  g_signal_connect (feed, "gap", G_CALLBACK (heard_gap), heard);
}

static void
heard_reset (Heard *heard)
{
  g_ptr_array_set_size (heard->sets, 0);
  g_ptr_array_set_size (heard->lines, 0);
  g_array_set_size (heard->down, 0);
}

static void
heard_clear (Heard *heard)
{
  g_clear_pointer (&heard->sets, g_ptr_array_unref);
  g_clear_pointer (&heard->lines, g_ptr_array_unref);
  g_clear_pointer (&heard->down, g_array_unref);
}

static char *
heard_text (Heard *heard)
{
  g_autoptr(GPtrArray) copy = g_ptr_array_copy (heard->lines, (GCopyFunc) (void (*) (void)) g_strdup, NULL);

  g_ptr_array_add (copy, NULL);
  return g_strjoinv ("\n", (char **) copy->pdata);
}

static char *
tx_lines (guint64 first,
          guint64 last)
{
  GString *text = g_string_new (NULL);

  for (guint64 tx = first; tx <= last; tx++)
    g_string_append_printf (text, "%stx %" G_GUINT64_FORMAT, tx > first ? "\n" : "", tx);
  return g_string_free (text, FALSE);
}

static void
poll_ok (QStoreChangeFeed *feed)
{
  g_autoptr(GError) error = NULL;

  qstore_change_feed_poll (feed, &error);
  g_assert_no_error (error);
}

static QStoreChangeFeed *
follower (const char *uri,
          guint64     since)
{
  g_autoptr(GError) error = NULL;
  QStoreChangeFeed *feed = qstore_change_feed_new_follower (uri, since, &error);

  g_assert_no_error (error);
  g_assert_true (qstore_change_feed_is_follower (feed));
  return feed;
}

/* The setting */

static void
test_setting (TestDatabase  *t,
              gconstpointer  data)
{
  g_autoptr(QStoreChangeFeed) feed = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(QStoreKV) log = NULL;
  g_autoptr(QStoreBounds) all = qstore_bounds_new ();
  guint n = 0;

  g_assert_cmpint (test_query_int (t->db, "PRAGMA qstore.change_log"), ==, 0);
  /* Spelled with main., it is no qstore setting: SQLite ignores it. */
  test_exec (t->db, "CREATE TABLE t (a INTEGER PRIMARY KEY, b)");
  test_exec (t->db, "PRAGMA qstore.change_log = 50");
  g_assert_cmpint (test_query_int (t->db, "PRAGMA qstore.change_log"), ==, 50);
  g_assert_cmpint (test_query_int (t->db, "PRAGMA QSTORE.Change_Log"), ==, 50);
  test_exec (t->db, "PRAGMA qstore.change_log(40)");
  g_assert_cmpint (test_query_int (t->db, "PRAGMA qstore.change_log"), ==, 40);

  test_exec_fails (t->db, "PRAGMA qstore.change_log = -1", QSTORE_ERROR_INVALID_ARGUMENT,
                   "the number of transactions");
  test_exec_fails (t->db, "PRAGMA qstore.change_log = 'lots'", QSTORE_ERROR_INVALID_ARGUMENT,
                   "PRAGMA qstore.change_log = 10000");
  test_exec_fails (t->db, "PRAGMA qstore.change_log = 1.5", QSTORE_ERROR_INVALID_ARGUMENT, NULL);
  test_exec (t->db, "BEGIN; INSERT INTO t VALUES (1, 'x')");
  test_exec_fails (t->db, "PRAGMA qstore.change_log = 5", QSTORE_ERROR_BUSY, "COMMIT or ROLLBACK");
  /* Reading is fine inside, and the refusal changed nothing. */
  g_assert_cmpint (test_query_int (t->db, "PRAGMA qstore.change_log"), ==, 40);
  test_exec (t->db, "COMMIT");
  g_assert_cmpint (test_query_int (t->db, "SELECT count(*) FROM t"), ==, 1);

  for (int i = 2; i < 60; i++)
    {
      g_autofree char *sql = g_strdup_printf ("INSERT INTO t VALUES (%d, 'x')", i);

      test_exec (t->db, sql);
    }
  /* The log keeps the last 40 transactions. */
  log = qstore_provider_open_store (qstore_database_get_provider (t->db),
                                    QSTORE_CHANGE_LOG_STORE_NAME, &error);
  g_assert_no_error (error);
  {
    g_autoptr(QStoreIter) iter = qstore_kv_iterate (log, all, &error);
    guint64 first = 0, tx;
    gsize len;

    while (qstore_iter_next (iter, &error))
      {
        const guint8 *key = qstore_iter_peek_key (iter, &len);

        tx = log_key_tx (key, len);
        if (n++ == 0)
          first = tx;
      }
    g_assert_no_error (error);
    g_assert_cmpuint (n, ==, 40);
    g_assert_cmpuint (first, ==, last_tx (t->db) - 39);
  }

  /* Keeping fewer removes the oldest at once. */
  test_exec (t->db, "PRAGMA qstore.change_log = 5");
  {
    g_autoptr(QStoreIter) iter = qstore_kv_iterate (log, all, &error);

    for (n = 0; qstore_iter_next (iter, &error); n++)
      ;
    g_assert_no_error (error);
    g_assert_cmpuint (n, ==, 5);
  }

  if (test_provider_persistent ())
    {
      test_database_reopen (t);
      g_assert_cmpint (test_query_int (t->db, "PRAGMA qstore.change_log"), ==, 5);
      test_close_database (&t->db);
      t->db = test_open_database (t->uri, QSTORE_OPEN_READ_ONLY);
      test_exec_fails (t->db, "PRAGMA qstore.change_log = 9", QSTORE_ERROR_READ_ONLY, "read-only");
      g_assert_cmpint (test_query_int (t->db, "PRAGMA qstore.change_log"), ==, 5);
      test_database_reopen (t);
    }

  /* Off: the log goes with its store. */
  g_clear_object (&log);
  test_exec (t->db, "PRAGMA qstore.change_log = 0");
  g_assert_cmpint (test_query_int (t->db, "PRAGMA qstore.change_log"), ==, 0);
  test_exec (t->db, "INSERT INTO t VALUES (100, 'after')");
  log = qstore_provider_open_store (qstore_database_get_provider (t->db),
                                    QSTORE_CHANGE_LOG_STORE_NAME, &error);
  g_assert_no_error (error);
  {
    g_autoptr(QStoreIter) iter = qstore_kv_iterate (log, all, &error);

    g_assert_false (qstore_iter_next (iter, &error));
    g_assert_no_error (error);
  }
  if (test_provider_persistent ())
    {
      feed = qstore_change_feed_new_follower (t->uri, 0, &error);
      g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_NOT_FOUND);
      g_assert_nonnull (strstr (error->message, "PRAGMA qstore.change_log = N"));
      g_assert_null (feed);
    }
}

/* Order and completeness: random transactions, told to a subscriber and
 * kept in the log, replayed onto an empty model, give the tables. */

static void
test_replay (TestDatabase  *t,
             gconstpointer  data)
{
  g_autoptr(GRand) rand = g_rand_new_with_seed (test_seed ());
  guint n = test_env_count ("QSTORE_TEST_CHANGE_TRANSACTIONS", 10000);
  g_autoptr(QStoreChangeFeed) feed = NULL;
  g_autoptr(GError) error = NULL;
  Model told, logged;
  Heard heard = { 0 };
  guint committed = 0;

  test_exec (t->db, "PRAGMA qstore.change_log = 1000000");
  test_exec (t->db, WORKLOAD_DDL);
  feed = qstore_database_subscribe_changes (t->db, &error);
  g_assert_no_error (error);
  g_assert_false (qstore_change_feed_is_follower (feed));
  heard_init (&heard, feed);
  model_init (&told);

  for (guint i = 0; i < n; i++)
    {
      gboolean maybe;

      if (!workload_transaction (t->db, rand, &maybe, &error))
        g_error ("transaction %u: %s", i, error->message);
      committed += maybe;
      /* Replayed as it is told, so a wrong image shows where it happened. */
      for (guint k = 0; k < heard.sets->len; k++)
        model_apply (&told, heard.sets->pdata[k], "told");
      heard_reset (&heard);
    }
  g_assert_cmpuint (qstore_change_feed_get_position (feed), ==, last_tx (t->db));
  model_assert_tables (&told, t->db, "told to a subscriber");
  g_test_message ("%u transactions, %u changes, last tx %" G_GUINT64_FORMAT, n,
                  told.n_changes, last_tx (t->db));
  /* Most transactions changed rows: the workload is not idle. */
  g_assert_cmpuint (told.n_changes, >, n / 2);

  /* The log, read back by a follower in its own provider handle. */
  if (test_provider_persistent ())
    {
      model_init (&logged);
      model_follow (&logged, t->uri, "logged");
      g_assert_cmpuint (logged.position, ==, last_tx (t->db));
      g_assert_cmpuint (logged.n_changes, ==, told.n_changes);
      model_assert_tables (&logged, t->db, "kept in the log");
      model_clear (&logged);
    }

  heard_clear (&heard);
  model_clear (&told);
}

/* A subscriber that joins mid-transaction: the transaction whole, or a
 * clean start after it; never a skip without a gap. */

typedef struct
{
  GArray  *told;      /* guint64 */
  guint64  position;  /* before each */
  gboolean skipped;   /* a set came that is not position + 1 */
  guint    gaps;
  guint    last_n;
} Order;

static void
order_changes (QStoreChangeFeed *feed,
               QStoreChangeSet  *change_set,
               Order            *order)
{
  guint64 tx_id = qstore_change_set_get_tx_id (change_set);

  if (tx_id != order->position + 1)
    order->skipped = TRUE;
  order->position = tx_id;
  order->last_n = qstore_change_set_get_n_changes (change_set);
  g_array_append_val (order->told, tx_id);
}

static void
order_gap (QStoreChangeFeed *feed,
           const char       *reason,
           gint64            down_for_ms,
           Order            *order)
{
  order->gaps++;
}

static QStoreChangeFeed *
subscribe_ordered (QStoreDatabase *db,
                   Order          *order)
{
  g_autoptr(GError) error = NULL;
  QStoreChangeFeed *feed = qstore_database_subscribe_changes (db, &error);

  g_assert_no_error (error);
  order->told = g_array_new (FALSE, FALSE, sizeof (guint64));
  order->position = qstore_change_feed_get_position (feed);
  g_signal_connect (feed, "changes", G_CALLBACK (order_changes), order);
  g_signal_connect (feed, "gap", G_CALLBACK (order_gap), order);
  return feed;
}

static void
on_committed_count (QStoreCoordinator *coordinator,
                    QStoreChangeSet   *change_set,
                    guint             *n_changes)
{
  *n_changes = qstore_change_set_get_n_changes (change_set);
}

static void
test_mid_transaction (TestDatabase  *t,
                      gconstpointer  data)
{
  QStoreCoordinator *coordinator = qstore_database_get_coordinator (t->db);
  g_autoptr(QStoreChangeFeed) first = NULL;
  g_autoptr(QStoreChangeFeed) second = NULL;
  Order a = { 0 }, b = { 0 };
  guint64 before;
  guint raw_n = 0;
  gulong handler;

  test_exec (t->db, "CREATE TABLE t (a INTEGER PRIMARY KEY, b)");

  /* Nobody keeps changes: the open transaction is skipped, cleanly. */
  before = last_tx (t->db);
  test_exec (t->db, "BEGIN; INSERT INTO t VALUES (1, 'x')");
  first = subscribe_ordered (t->db, &a);
  g_assert_cmpuint (qstore_change_feed_get_position (first), ==, before);
  test_exec (t->db, "INSERT INTO t VALUES (2, 'y'); COMMIT");
  g_assert_cmpuint (a.told->len, ==, 0);
  g_assert_cmpuint (qstore_change_feed_get_position (first), ==, before + 1);
  a.position = qstore_change_feed_get_position (first);
  test_exec (t->db, "INSERT INTO t VALUES (3, 'z')");
  g_assert_cmpuint (a.told->len, ==, 1);
  g_assert_cmpuint (g_array_index (a.told, guint64, 0), ==, before + 2);
  g_assert_false (a.skipped);
  g_assert_cmpuint (a.gaps, ==, 0);

  /* A feed keeps them: one that joins gets the whole transaction, and
   * so does a `committed` handler. */
  test_exec (t->db, "BEGIN; INSERT INTO t VALUES (4, 'x'); UPDATE t SET b = 'w' WHERE a = 1");
  second = subscribe_ordered (t->db, &b);
  handler = g_signal_connect (coordinator, "committed", G_CALLBACK (on_committed_count), &raw_n);
  test_exec (t->db, "DELETE FROM t WHERE a = 2; COMMIT");
  g_assert_cmpuint (b.told->len, ==, 1);
  g_assert_cmpuint (b.last_n, ==, 3);
  g_assert_cmpuint (raw_n, ==, 3);
  g_assert_cmpuint (a.last_n, ==, 3);
  g_assert_false (a.skipped || b.skipped);
  g_assert_cmpuint (a.gaps + b.gaps, ==, 0);
  g_signal_handler_disconnect (coordinator, handler);

  /* A rollback consumes nothing: the next commit follows on. */
  qstore_change_feed_close (first);
  g_clear_object (&first);
  g_array_unref (a.told);
  test_exec (t->db, "BEGIN; INSERT INTO t VALUES (5, 'x')");
  first = subscribe_ordered (t->db, &a);
  test_exec (t->db, "ROLLBACK; INSERT INTO t VALUES (6, 'x')");
  g_assert_cmpuint (a.told->len, ==, 1);
  g_assert_false (a.skipped);

  g_array_unref (a.told);
  g_array_unref (b.told);
}

/* Handlers that commit: every listener still hears commits in order. */

typedef struct
{
  QStoreDatabase *db;
  guint           remaining;
} Chain;

static void
commit_again (QStoreChangeFeed *feed,
              QStoreChangeSet  *change_set,
              Chain            *chain)
{
  g_autoptr(GError) error = NULL;
  QStoreTable *table = qstore_database_get_table (chain->db, "main", "t");
  GVariant *values[] = { qstore_value_new_null (), g_variant_new_string ("again") };

  if (chain->remaining == 0)
    {
      g_variant_unref (g_variant_ref_sink (values[0]));
      g_variant_unref (g_variant_ref_sink (values[1]));
      return;
    }
  chain->remaining--;
  /* Through the table: SQL does not run while SQLite commits. */
  qstore_table_insert (table, g_variant_new_tuple (values, 2), QSTORE_CONFLICT_ABORT, &error);
  g_assert_no_error (error);
}

static void
test_order (TestDatabase  *t,
            gconstpointer  data)
{
  g_autoptr(QStoreChangeFeed) writer = NULL;
  g_autoptr(QStoreChangeFeed) reader = NULL;
  g_autoptr(GError) error = NULL;
  Chain chain = { t->db, 5 };
  Order order = { 0 };
  guint64 before;

  test_exec (t->db, "CREATE TABLE t (a INTEGER PRIMARY KEY, b)");
  before = last_tx (t->db);
  writer = qstore_database_subscribe_changes (t->db, &error);
  g_assert_no_error (error);
  g_signal_connect (writer, "changes", G_CALLBACK (commit_again), &chain);
  reader = subscribe_ordered (t->db, &order);

  test_exec (t->db, "INSERT INTO t (b) VALUES ('first')");
  g_assert_cmpuint (chain.remaining, ==, 0);
  g_assert_cmpuint (order.told->len, ==, 6);
  for (guint i = 0; i < order.told->len; i++)
    g_assert_cmpuint (g_array_index (order.told, guint64, i), ==, before + 1 + i);
  g_assert_false (order.skipped);
  g_array_unref (order.told);
}

/* At most QSTORE_CHANGE_FEED_MAX_SUBSCRIBERS feeds, and a clear error. */
static void
test_subscribers (TestDatabase  *t,
                  gconstpointer  data)
{
  g_autoptr(GPtrArray) feeds = g_ptr_array_new_with_free_func (g_object_unref);
  g_autoptr(GError) error = NULL;
  QStoreChangeFeed *feed;

  for (guint i = 0; i < QSTORE_CHANGE_FEED_MAX_SUBSCRIBERS; i++)
    {
      feed = qstore_database_subscribe_changes (t->db, &error);
      g_assert_no_error (error);
      g_ptr_array_add (feeds, feed);
    }
  feed = qstore_database_subscribe_changes (t->db, &error);
  g_assert_null (feed);
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_BUSY);
  g_assert_nonnull (strstr (error->message, "512"));
  g_assert_nonnull (strstr (error->message, "qstore_change_feed_close"));
  g_clear_error (&error);

  /* Closing one makes room; dropping one does too. */
  qstore_change_feed_close (feeds->pdata[0]);
  g_ptr_array_remove_index (feeds, 1);
  for (guint i = 0; i < 2; i++)
    {
      feed = qstore_database_subscribe_changes (t->db, &error);
      g_assert_no_error (error);
      g_ptr_array_add (feeds, feed);
    }

  /* Every feed is told; after the database closes, none is. */
  {
    g_autoptr(QStoreChangeFeed) last = NULL;
    Order order = { 0 };

    g_ptr_array_remove_index (feeds, 2);
    last = subscribe_ordered (t->db, &order);
    test_exec (t->db, "CREATE TABLE t (a)");
    g_assert_cmpuint (order.told->len, ==, 1);
    test_close_database (&t->db);
    g_assert_true (qstore_change_feed_poll (last, NULL));
    g_assert_cmpuint (order.told->len, ==, 1);
    feed = g_object_ref (last);
    qstore_change_feed_close (feed);
    g_object_unref (feed);
    g_array_unref (order.told);
  }
  g_ptr_array_set_size (feeds, 0);
}

/* Gaps */

static void
insert_n (QStoreDatabase *db,
          guint           n)
{
  for (guint i = 0; i < n; i++)
    test_exec (db, "INSERT INTO t (b) VALUES ('row')");
}

static void
test_gaps (TestDatabase  *t,
           gconstpointer  data)
{
  g_autoptr(QStoreChangeFeed) feed = NULL;
  g_autoptr(QStoreChangeFeed) late = NULL;
  g_autofree char *expected = NULL, *text = NULL;
  Heard heard = { 0 }, heard_late = { 0 };
  guint64 tx;

  if (!test_provider_persistent ())
    {
      g_test_skip ("a follower opens the store again, and a memory store opens empty");
      return;
    }

  test_exec (t->db, "CREATE TABLE t (a INTEGER PRIMARY KEY, b)");
  test_exec (t->db, "PRAGMA qstore.change_log = 10");
  tx = last_tx (t->db);
  insert_n (t->db, 3);

  /* Without a position, a follower starts at the oldest entry, no gap. */
  feed = follower (t->uri, 0);
  heard_init (&heard, feed);
  poll_ok (feed);
  expected = tx_lines (tx, tx + 3);
  text = heard_text (&heard);
  g_assert_cmpstr (text, ==, expected);

  /* Within retention: every transaction, no gap. */
  heard_reset (&heard);
  insert_n (t->db, 9);
  poll_ok (feed);
  g_free (expected), g_free (text);
  expected = tx_lines (tx + 4, tx + 12);
  text = heard_text (&heard);
  g_assert_cmpstr (text, ==, expected);

  /* Stopped while the writer goes past what the log keeps: one gap, with
   * a reason and how long, then on from the oldest entry. */
  heard_reset (&heard);
  g_usleep (20000);
  insert_n (t->db, 25);
  poll_ok (feed);
  g_assert_cmpuint (heard.lines->len, ==, 11);
  g_assert_true (g_str_has_prefix (heard.lines->pdata[0], "gap: transactions"));
  g_assert_nonnull (strstr (heard.lines->pdata[0], "no longer in the change log, which keeps the last 10"));
  g_assert_cmpint (g_array_index (heard.down, gint64, 0), >=, 20);
  g_clear_pointer (&expected, g_free);
  expected = tx_lines (tx + 28, tx + 37);
  {
    g_autoptr(GPtrArray) rest = g_ptr_array_new ();

    for (guint i = 1; i < heard.lines->len; i++)
      g_ptr_array_add (rest, heard.lines->pdata[i]);
    g_ptr_array_add (rest, NULL);
    g_free (text);
    text = g_strjoinv ("\n", (char **) rest->pdata);
  }
  g_assert_cmpstr (text, ==, expected);
  g_assert_cmpuint (qstore_change_feed_get_position (feed), ==, last_tx (t->db));

  /* A position the log never kept: a gap at once, how long unknown. */
  late = follower (t->uri, 3);
  heard_init (&heard_late, late);
  poll_ok (late);
  g_assert_cmpuint (heard_late.lines->len, ==, 11);
  g_assert_nonnull (strstr (heard_late.lines->pdata[0], "transactions 4 to"));
  g_assert_cmpint (g_array_index (heard_late.down, gint64, 0), ==, -1);

  /* Turned off, then on again: each told, then on from the new log. */
  heard_reset (&heard);
  test_exec (t->db, "PRAGMA qstore.change_log = 0");
  insert_n (t->db, 2);
  poll_ok (feed);
  g_clear_pointer (&text, g_free);
  text = heard_text (&heard);
  g_assert_cmpstr (text, ==, "gap: the change log was turned off");
  poll_ok (feed);
  g_assert_cmpuint (heard.lines->len, ==, 1);
  test_exec (t->db, "PRAGMA qstore.change_log = 10");
  tx = last_tx (t->db);
  insert_n (t->db, 2);
  heard_reset (&heard);
  poll_ok (feed);
  g_assert_cmpuint (heard.lines->len, ==, 4);
  g_assert_nonnull (strstr (heard.lines->pdata[0], "turned off and on again"));
  g_clear_pointer (&expected, g_free);
  g_clear_pointer (&text, g_free);
  expected = g_strdup_printf ("tx %" G_GUINT64_FORMAT, tx);
  g_assert_cmpstr (heard.lines->pdata[1], ==, expected);

  /* Made anew while the follower did not look: told as such. */
  heard_reset (&heard);
  test_exec (t->db, "PRAGMA qstore.change_log = 0");
  test_exec (t->db, "PRAGMA qstore.change_log = 10");
  insert_n (t->db, 1);
  poll_ok (feed);
  g_assert_cmpuint (heard.lines->len, ==, 3);
  g_assert_nonnull (strstr (heard.lines->pdata[0], "made anew"));

  heard_clear (&heard);
  heard_clear (&heard_late);
}

/* A damaged entry is told as a gap that names its transaction. */
static void
test_corrupt (TestDatabase  *t,
              gconstpointer  data)
{
  static const char *damage[] = { "flip", "truncate", "empty", "other-tx", "garbage", "value" };
  g_autoptr(QStoreChangeFeed) feed = NULL;
  Heard heard = { 0 };
  guint64 first;

  if (!test_provider_persistent ())
    {
      g_test_skip ("a follower opens the store again, and a memory store opens empty");
      return;
    }

  test_exec (t->db, "PRAGMA qstore.change_log = 100");
  test_exec (t->db, "CREATE TABLE t (a INTEGER PRIMARY KEY, b)");
  first = last_tx (t->db) + 1;
  insert_n (t->db, 2 * G_N_ELEMENTS (damage) + 1);
  test_close_database (&t->db);

  /* Every other entry damaged, each its own way. */
  {
    g_autoptr(QStoreProvider) provider = NULL;
    g_autoptr(QStoreKV) log = NULL;
    g_autoptr(GError) error = NULL;

    provider = qstore_provider_new_for_uri (t->uri, QSTORE_OPEN_NONE, &error);
    g_assert_no_error (error);
    log = qstore_provider_open_store (provider, QSTORE_CHANGE_LOG_STORE_NAME, &error);
    g_assert_no_error (error);
    for (guint i = 0; i < G_N_ELEMENTS (damage); i++)
      {
        guint8 key[QSTORE_CHANGE_LOG_KEY_LEN], other[QSTORE_CHANGE_LOG_KEY_LEN];
        g_autoptr(GBytes) entry = NULL;
        g_autofree guint8 *bytes = NULL;
        gconstpointer data;
        gsize len;

        log_key (first + 1 + 2 * i, key);
        entry = qstore_kv_get (log, key, sizeof key, &error);
        g_assert_no_error (error);
        g_assert_nonnull (entry);
        data = g_bytes_get_data (entry, &len);
        bytes = g_memdup2 (data, len);
        if (g_str_equal (damage[i], "flip"))
          bytes[len / 2] ^= 0x10;
        else if (g_str_equal (damage[i], "truncate"))
          len -= 9;
        else if (g_str_equal (damage[i], "empty"))
          len = 0;
        else if (g_str_equal (damage[i], "other-tx"))
          {
            /* A whole, sound entry, filed under another transaction. */
            log_key (first, other);
            g_clear_pointer (&entry, g_bytes_unref);
            entry = qstore_kv_get (log, other, sizeof other, &error);
            g_free (bytes);
            data = g_bytes_get_data (entry, &len);
            bytes = g_memdup2 (data, len);
          }
        else if (g_str_equal (damage[i], "value"))
          {
            /* 'row' becomes 'sow': the entry still parses, only its
             * checksum tells. */
            gsize at = 0;

            while (at + 3 <= len && memcmp (bytes + at, "row", 3) != 0)
              at++;
            g_assert_cmpuint (at + 3, <=, len);
            bytes[at] = 's';
          }
        else
          for (gsize k = 4; k < len; k++)
            bytes[k] = (guint8) (k * 37);
        qstore_kv_put (log, key, sizeof key, bytes, len, QSTORE_WRITE_SYNC, &error);
        g_assert_no_error (error);
      }
    qstore_provider_close_all (provider);
  }

  feed = follower (t->uri, first - 1);
  heard_init (&heard, feed);
  poll_ok (feed);
  g_assert_cmpuint (heard.lines->len, ==, 2 * G_N_ELEMENTS (damage) + 1);
  for (guint i = 0; i < heard.lines->len; i++)
    {
      g_autofree char *expected = NULL;
      const char *line = heard.lines->pdata[i];

      if (i % 2 == 0)
        {
          expected = g_strdup_printf ("tx %" G_GUINT64_FORMAT, first + i);
          g_assert_cmpstr (line, ==, expected);
          continue;
        }
      expected = g_strdup_printf ("gap: The change log entry of transaction %" G_GUINT64_FORMAT
                                  " is damaged: ", first + i);
      if (!g_str_has_prefix (line, expected))
        g_error ("damage “%s” was told as “%s”", damage[i / 2], line);
    }
  g_assert_cmpuint (qstore_change_feed_get_position (feed), ==, first + heard.lines->len - 1);
  heard_clear (&heard);

  /* A damaged setting is an error of the follower, not a crash. */
  {
    g_autoptr(GBytes) key = qstore_catalog_key_for_meta (QSTORE_CHANGE_LOG_META);
    g_autoptr(GError) error = NULL;
    g_autoptr(QStoreChangeFeed) none = NULL;

    /* One process holds one LMDB environment: the follower lets go. */
    qstore_change_feed_close (feed);
    test_plant (t->uri, key, "{\"retain\": \"many\"}");
    none = qstore_change_feed_new_follower (t->uri, 0, &error);
    g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_CORRUPT);
    g_assert_nonnull (strstr (error->message, "change log setting"));
    g_assert_null (none);
    g_clear_error (&error);
    g_assert_false (qstore_change_feed_poll (feed, &error));
    g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_CLOSED);
    /* The writer opens, without a log, and says why. */
    g_test_expect_message ("qstore", G_LOG_LEVEL_WARNING, "*change log setting*damaged*");
    t->db = test_open_database (t->uri, QSTORE_OPEN_NONE);
    g_test_assert_expected_messages ();
    g_assert_cmpint (test_query_int (t->db, "PRAGMA qstore.change_log"), ==, 0);
  }
}

/* Without an atomic batch: a torn commit is undone, the log with it. */
static void
test_torn_commit (TestDatabase  *t,
                  gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  Model model;

  if (test_provider_atomic () || !test_provider_persistent ())
    {
      g_test_skip ("needs a persistent provider without an atomic batch (?atomic=0)");
      return;
    }

  test_exec (t->db, "PRAGMA qstore.change_log = 1000");
  test_exec (t->db, "CREATE TABLE t (a INTEGER PRIMARY KEY, b TEXT UNIQUE)");
  test_exec (t->db, "CREATE TABLE u (k TEXT PRIMARY KEY, v)");
  test_exec (t->db, "INSERT INTO t VALUES (1, 'one'), (2, 'two'); INSERT INTO u VALUES ('a', 1)");
  model_init (&model);

  for (guint hits = 0; hits < 12; hits++)
    {
      g_autofree char *context = g_strdup_printf ("fault after %u writes", hits);
      guint64 before = last_tx (t->db);

      test_exec (t->db, "BEGIN; UPDATE t SET b = b || 'x'; DELETE FROM u WHERE k = 'a'; "
                        "INSERT INTO u VALUES ('b', 2)");
      /* In-process: the failed commit is undone at once. */
      _qstore_fault_arm (QSTORE_FAULT_WRITE_OP, hits);
      if (hits % 2 == 1)
        _qstore_fault_arm (QSTORE_COORDINATOR_FAULT_UNDO, 0);
      qstore_database_exec (t->db, "COMMIT", &error);
      _qstore_fault_disarm_all ();
      qstore_database_exec (t->db, "ROLLBACK", NULL);
      if (error == NULL)
        {
          /* The fault struck past the commit's writes. */
          test_exec (t->db, "UPDATE t SET b = substr(b, 1, 3); DELETE FROM u; "
                            "INSERT INTO u VALUES ('a', 1)");
          continue;
        }
      g_test_message ("%s: %s", context, error->message);
      g_clear_error (&error);
      g_assert_cmpuint (last_tx (t->db), ==, before);

      /* Odd faults also failed the undo, as a crash before it would: the
       * next open undoes it. Until then a follower tells nothing of the
       * torn commit, whose entry the log may hold. */
      if (hits % 2 == 1)
        {
          g_autoptr(QStoreChangeFeed) feed = NULL;
          Heard heard = { 0 };

          g_clear_object (&t->db);
          feed = follower (t->uri, before);
          heard_init (&heard, feed);
          poll_ok (feed);
          g_assert_cmpuint (heard.lines->len, ==, 0);
          g_assert_cmpuint (qstore_change_feed_get_position (feed), ==, before);
          qstore_change_feed_close (feed);
          heard_clear (&heard);
        }
      else
        test_close_database (&t->db);
      t->db = test_open_database (t->uri, QSTORE_OPEN_NONE);

      g_assert_cmpint (test_query_int (t->db, "SELECT count(*) FROM t WHERE b IN ('one', 'two')"), ==, 2);
      g_assert_cmpint (test_query_int (t->db, "SELECT count(*) FROM u WHERE k = 'a'"), ==, 1);
      g_assert_cmpint (test_query_int (t->db, "SELECT count(*) FROM u"), ==, 1);
      model_follow (&model, t->uri, context);
      model_assert_tables_of (&model, t->db, (const char *[]) { "t", "u", NULL }, context);
    }
  model_clear (&model);
}

/* Crashes */

static int
crash_child (const char *uri,
             guint       seed)
{
  g_autoptr(GRand) rand = g_rand_new_with_seed (seed);
  g_autoptr(QStoreDatabase) db = NULL;
  g_autoptr(GError) error = NULL;
  gboolean atomic = strstr (uri, "atomic=0") == NULL;

  if (!(db = qstore_database_open (uri, QSTORE_OPEN_NONE, &error)))
    {
      g_printerr ("crash child: %s\n", error->message);
      return 1;
    }
  /* Ready: the killing may start. */
  printf ("%" G_GUINT64_FORMAT "\n",
          qstore_coordinator_get_last_tx_id (qstore_database_get_coordinator (db)));
  fflush (stdout);
  for (;;)
    {
      gboolean committed;

      /* Now and then, store by store: die in the middle of a commit,
       * before anything is undone. */
      if (!atomic && g_rand_int_range (rand, 0, 40) == 0)
        {
          if (!qstore_database_exec (db, "BEGIN", &error))
            break;
          for (int i = 0; i < 4; i++)
            {
              g_autofree char *sql = workload_statement (rand);

              if (!workload_exec (db, sql, &error))
                break;
            }
          _qstore_fault_arm (QSTORE_FAULT_WRITE_OP, g_rand_int_range (rand, 0, 20));
          _qstore_fault_arm (QSTORE_COORDINATOR_FAULT_UNDO, 0);
          if (!qstore_database_exec (db, "COMMIT", NULL))
            raise (SIGKILL);
          _qstore_fault_disarm_all ();
          printf ("%" G_GUINT64_FORMAT "\n",
                  qstore_coordinator_get_last_tx_id (qstore_database_get_coordinator (db)));
          fflush (stdout);
          continue;
        }
      if (!workload_transaction (db, rand, &committed, &error))
        break;
      /* Reported once the commit returned: durable. */
      printf ("%" G_GUINT64_FORMAT "\n",
              qstore_coordinator_get_last_tx_id (qstore_database_get_coordinator (db)));
      fflush (stdout);
    }
  g_printerr ("crash child: %s\n", error->message);
  return 1;
}

static void
test_crash (TestDatabase  *t,
            gconstpointer  data)
{
  g_autoptr(GRand) rand = g_rand_new_with_seed (test_seed ());
  guint iterations = test_env_count ("QSTORE_CRASH_ITERATIONS", 100);
  guint64 reported = 0;
  Model model, again;

  if (!test_provider_persistent ())
    {
      g_test_skip ("a crash of a memory store leaves nothing to check");
      return;
    }
  test_exec (t->db, "PRAGMA qstore.change_log = 100000000");
  test_exec (t->db, WORKLOAD_DDL);
  test_close_database (&t->db);
  model_init (&model);

  for (guint i = 0; i < iterations; i++)
    {
      g_autofree char *seed = g_strdup_printf ("%u", test_seed () + i);
      g_autofree char *context = g_strdup_printf ("after crash %u", i);
      const char *argv[] = { self_path, "--crash-child", t->uri, seed, NULL };

      reported = test_kill_reporting_child (argv, g_rand_int_range (rand, 1, 40), reported);

      /* Reopened for writing: whatever a crash tore is repaired. Every
       * reported commit is there, and the log agrees with the tables. */
      t->db = test_open_database (t->uri, QSTORE_OPEN_NONE);
      g_assert_cmpuint (last_tx (t->db), >=, reported);
      model_follow (&model, t->uri, context);
      g_assert_cmpuint (model.position, ==, last_tx (t->db));
      model_assert_tables (&model, t->db, context);
      test_close_database (&t->db);
    }

  /* And from the start, in one go. */
  model_init (&again);
  model_follow (&again, t->uri, "replayed from the start");
  t->db = test_open_database (t->uri, QSTORE_OPEN_NONE);
  model_assert_tables (&again, t->db, "replayed from the start");
  g_test_message ("%u crashes, %" G_GUINT64_FORMAT " transactions, %u changes", iterations,
                  again.position, again.n_changes);
  g_assert_cmpuint (reported, >, 0);
  model_clear (&again);
  model_clear (&model);
}

int
main (int    argc,
      char **argv)
{
  self_path = argv[0];
  if (argc == 4 && g_str_equal (argv[1], "--crash-child"))
    return crash_child (argv[2], (guint) g_ascii_strtoull (argv[3], NULL, 10));
  g_test_init (&argc, &argv, NULL);

#define ADD(name, func) \
  g_test_add ("/changes/" name, TestDatabase, NULL, fixture_setup, func, test_database_tear_down)
  ADD ("setting", test_setting);
  ADD ("replay", test_replay);
  ADD ("mid-transaction", test_mid_transaction);
  ADD ("order", test_order);
  ADD ("subscribers", test_subscribers);
  ADD ("gaps", test_gaps);
  ADD ("corrupt", test_corrupt);
  ADD ("torn-commit", test_torn_commit);
  ADD ("crash", test_crash);
#undef ADD

  return g_test_run ();
}
