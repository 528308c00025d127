/* test-postgres-txn.c: write transactions held open on the writer's
 * session
 *
 * Runs under with-postgres.sh. Whatever a write transaction wrote stays
 * unseen until its commit, by the writer's own plain reads, by another
 * open of the location and by a plain client of the server, also once a
 * coordinator wrote a transaction out into it; a session lost in the
 * middle is a clear error and leaves nothing; change-log notifications
 * reach listeners at the commit and never for a transaction that does
 * not commit. check() meanwhile sees committed data only; a COMMIT the
 * server answers with ROLLBACK fails and leaves nothing.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <poll.h>
#include <unistd.h>

#include <libpq-fe.h>

#include "qstore-coordinator-private.h"
#include "qstore-test-util.h"
#include "test-pg-util.h"

typedef struct
{
  char            *dir;
  char            *uri;
  char            *schema;   /* as the server names it, quoted */
  char            *channel;  /* the location's notification channel */
  PGconn          *pg;       /* a plain client of the server */
  QStoreProvider  *writer;
} Fixture;

static QStoreProvider *
open_provider (const char      *uri,
               QStoreOpenFlags  flags)
{
  g_autoptr(GError) error = NULL;
  QStoreProvider *provider = qstore_provider_new_for_uri (uri, flags, &error);

  g_assert_no_error (error);
  return provider;
}

static void
fixture_setup (Fixture       *f,
               gconstpointer  data)
{
  g_autofree char *base = NULL;
  g_autofree char *name = NULL;
  g_autofree char *digest = NULL;
  char *quoted;

  f->dir = test_make_tmp_dir ("qstore-pg-txn-XXXXXX");
  f->uri = test_provider_uri (f->dir, "txn");
  f->pg = PQconnectdb (g_getenv ("QSTORE_TEST_POSTGRES"));
  g_assert_cmpint (PQstatus (f->pg), ==, CONNECTION_OK);
  /* The schema test_provider_uri() names, and its channel (README). */
  base = g_path_get_basename (f->dir);
  name = g_strdup_printf ("%s_txn", base);
  quoted = PQescapeIdentifier (f->pg, name, strlen (name));
  f->schema = g_strdup (quoted);
  PQfreemem (quoted);
  digest = g_compute_checksum_for_string (G_CHECKSUM_SHA256, name, -1);
  f->channel = g_strdup_printf ("qstore_%.32s", digest);
  f->writer = open_provider (f->uri, QSTORE_OPEN_NONE);
}

static void
fixture_teardown (Fixture       *f,
                  gconstpointer  data)
{
  if (f->writer != NULL)
    qstore_provider_close_all (f->writer);
  g_clear_object (&f->writer);
  PQfinish (f->pg);
  test_remove_tree (f->dir);
  g_free (f->dir);
  g_free (f->uri);
  g_free (f->schema);
  g_free (f->channel);
}

static QStoreKV *
store_of (QStoreProvider *provider,
          const char     *name)
{
  g_autoptr(GError) error = NULL;
  QStoreKV *kv = qstore_provider_open_store (provider, name, &error);

  g_assert_no_error (error);
  return kv;
}

static void
put (QStoreKV   *kv,
     const char *key,
     const char *value)
{
  g_autoptr(GError) error = NULL;

  g_assert_true (qstore_kv_put (kv, (const guint8 *) key, strlen (key), (const guint8 *) value,
                                strlen (value), QSTORE_WRITE_SYNC, &error));
  g_assert_no_error (error);
}

static gboolean
has (QStoreKV   *kv,
     const char *key)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) value = qstore_kv_get (kv, (const guint8 *) key, strlen (key), &error);

  g_assert_no_error (error);
  return value != NULL;
}

static guint
count_in (QStoreSnapshot *snapshot,
          QStoreKV       *kv)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(QStoreIter) iter = qstore_snapshot_iterate (snapshot, kv, NULL, &error);

  g_assert_no_error (error);
  return test_iter_count (iter);
}

/* Entries of the location's table, as any client of the server sees
 * them. */
static gint64
server_count (Fixture *f)
{
  g_autofree char *sql = g_strdup_printf ("SELECT count(*) FROM %s.kv", f->schema);

  return test_pg_int (f->pg, sql);
}

/* @n puts of keys PREFIX%06u into @kv, 1,000 per write. */
static void
txn_fill (QStoreWriteTxn *txn,
          QStoreKV       *kv,
          const char     *prefix,
          guint           n)
{
  for (guint i = 0; i < n; )
    {
      QStoreWriteOp ops[1000];
      g_autoptr(GPtrArray) keys = g_ptr_array_new_with_free_func (g_free);
      g_autoptr(GError) error = NULL;
      guint m = MIN (n - i, G_N_ELEMENTS (ops));

      for (guint j = 0; j < m; j++)
        {
          char *key = g_strdup_printf ("%s%06u", prefix, i + j);

          g_ptr_array_add (keys, key);
          ops[j] = (QStoreWriteOp) { kv, QSTORE_WRITE_OP_PUT, (const guint8 *) key, strlen (key),
                                     (const guint8 *) "value", 5 };
        }
      g_assert_true (qstore_write_txn_write (txn, ops, m, &error));
      g_assert_no_error (error);
      i += m;
    }
}

/* What the transaction wrote, nobody else reads before its commit: not
 * the writer's stores, snapshots and list of stores, not a read-only
 * open of the location, not a plain client. */
static void
test_unseen (Fixture       *f,
             gconstpointer  data)
{
  g_autoptr(QStoreProvider) reader = NULL;
  g_autoptr(QStoreKV) t = store_of (f->writer, "main.t");
  g_autoptr(QStoreKV) fresh = store_of (f->writer, "main.fresh");
  g_autoptr(QStoreKV) reader_t = NULL;
  g_autoptr(QStoreWriteTxn) txn = NULL;
  g_autoptr(QStoreSnapshot) unread = NULL;
  g_autoptr(GError) error = NULL;

  put (t, "base", "committed");
  reader = open_provider (f->uri, QSTORE_OPEN_READ_ONLY);
  reader_t = store_of (reader, "main.t");

  txn = qstore_provider_begin_write (f->writer, &error);
  g_assert_no_error (error);
  txn_fill (txn, t, "k", 5000);
  txn_fill (txn, fresh, "f", 10);
  g_assert_cmpuint (count_in (QSTORE_SNAPSHOT (txn), t), ==, 5001);

  /* The writer's own plain reads, a snapshot taken now, the store list. */
  g_assert_false (has (t, "k000042"));
  g_assert_false (has (fresh, "f000001"));
  g_assert_true (has (t, "base"));
  g_assert_cmpuint (test_kv_count (t), ==, 1);
  g_assert_cmpuint (test_kv_count (fresh), ==, 0);
  {
    g_autoptr(QStoreSnapshot) during = qstore_provider_begin_snapshot (f->writer, &error);
    g_auto(GStrv) names = qstore_provider_list_stores (f->writer, &error);

    g_assert_no_error (error);
    g_assert_cmpuint (count_in (during, t), ==, 1);
    g_assert_false (g_strv_contains ((const char * const *) names, "main.fresh"));
  }
  /* A snapshot first read after the commit still sees the state of its
   * creation. */
  unread = qstore_provider_begin_snapshot (f->writer, &error);
  g_assert_no_error (error);
  /* Another open, and any client of the server. */
  g_assert_false (has (reader_t, "k000042"));
  g_assert_cmpuint (test_kv_count (reader_t), ==, 1);
  g_assert_cmpint (server_count (f), ==, 1);

  g_assert_true (qstore_write_txn_commit (txn, QSTORE_WRITE_SYNC, &error));
  g_assert_no_error (error);
  g_assert_cmpint (server_count (f), ==, 5011);
  g_assert_cmpuint (count_in (unread, t), ==, 1);
  g_assert_cmpuint (test_kv_count (reader_t), ==, 5001);
  g_assert_true (has (reader_t, "k004999"));
  g_assert_true (has (fresh, "f000009"));
}

static void
txn_put (QStoreWriteTxn *txn,
         QStoreKV       *kv,
         const char     *key)
{
  g_autoptr(GError) error = NULL;

  g_assert_true (qstore_write_txn_put (txn, kv, (const guint8 *) key, strlen (key),
                                       (const guint8 *) "v", 1, &error));
  g_assert_no_error (error);
}

/* The writer's known gaps (keys it knows absent) stay true across a
 * write transaction: its writes shrink them, and what a plain read finds
 * absent in committed data meanwhile is forgotten at its commit, as the
 * transaction may have put keys there. */
static void
test_gaps (Fixture       *f,
           gconstpointer  data)
{
  g_autoptr(QStoreKV) g = store_of (f->writer, "main.g");
  g_autoptr(QStoreKV) h = store_of (f->writer, "main.h");
  g_autoptr(GError) error = NULL;

  put (g, "a", "committed");
  put (h, "a", "committed");
  /* A gap after "a" in each. */
  g_assert_false (has (g, "b"));
  g_assert_false (has (h, "b"));

  for (guint commit = 0; commit <= 1; commit++)
    {
      g_autoptr(QStoreWriteTxn) txn = qstore_provider_begin_write (f->writer, &error);

      g_assert_no_error (error);
      /* Into the gap known from before. */
      txn_put (txn, g, commit ? "c" : "x");
      /* Into the part of h that a plain read then finds absent, in
       * committed data. */
      txn_put (txn, h, commit ? "q" : "y");
      g_assert_false (has (h, "p"));
      g_assert_false (has (g, commit ? "c" : "x"));
      g_assert_false (has (h, commit ? "q" : "y"));
      if (commit)
        {
          g_assert_true (qstore_write_txn_commit (txn, QSTORE_WRITE_SYNC, &error));
          g_assert_no_error (error);
        }
      else
        qstore_write_txn_abort (txn);
      g_assert_cmpint (has (g, "c"), ==, (int) commit);
      g_assert_cmpint (has (h, "q"), ==, (int) commit);
      g_assert_false (has (g, "x"));
      g_assert_false (has (h, "y"));
      g_assert_false (has (h, "p"));
    }
}

/* A store the transaction made is gone with its abort: the writer makes
 * it again with its next write, and everyone finds it by its name. */
static void
test_abort_new_store (Fixture       *f,
                      gconstpointer  data)
{
  g_autoptr(QStoreKV) fresh = store_of (f->writer, "main.fresh");
  g_autoptr(QStoreKV) gone = store_of (f->writer, "main.gone");
  g_autoptr(GError) error = NULL;
  g_auto(GStrv) names = NULL;
  const char * const drop[] = { "main.gone", NULL };

  put (gone, "g", "committed");
  {
    g_autoptr(QStoreWriteTxn) txn = qstore_provider_begin_write (f->writer, &error);

    g_assert_no_error (error);
    txn_put (txn, fresh, "in-txn");
    g_assert_true (qstore_write_txn_drop_stores (txn, drop, &error));
    g_assert_no_error (error);
    txn_put (txn, gone, "again");
    qstore_write_txn_abort (txn);
  }
  put (fresh, "after", "committed");
  put (gone, "after", "committed");
  {
    g_autoptr(QStoreProvider) reader = open_provider (f->uri, QSTORE_OPEN_READ_ONLY);
    g_autoptr(QStoreKV) reader_fresh = store_of (reader, "main.fresh");
    g_autoptr(QStoreKV) reader_gone = store_of (reader, "main.gone");

    g_assert_true (has (reader_fresh, "after"));
    g_assert_false (has (reader_fresh, "in-txn"));
    g_assert_cmpuint (test_kv_count (reader_gone), ==, 2);
    g_assert_false (has (reader_gone, "again"));
  }
  names = qstore_provider_list_stores (f->writer, &error);
  g_assert_no_error (error);
  g_assert_true (g_strv_contains ((const char * const *) names, "main.fresh"));
  g_assert_true (g_strv_contains ((const char * const *) names, "main.gone"));
}

/* A coordinator's transaction written out into a write transaction
 * (every 1,024 writes here) is unseen as well until it commits. */
static void
test_coordinator_unseen (Fixture       *f,
                         gconstpointer  data)
{
  g_autoptr(QStoreProvider) reader = open_provider (f->uri, QSTORE_OPEN_READ_ONLY);
  g_autoptr(QStoreKV) t = store_of (f->writer, "main.t");
  g_autoptr(QStoreKV) reader_t = store_of (reader, "main.t");
  g_autoptr(QStoreCoordinator) coord = NULL;
  g_autoptr(GError) error = NULL;
  const guint n = 5000;
  gint64 before;

  coord = qstore_coordinator_new (f->writer, &error);
  g_assert_no_error (error);
  qstore_coordinator_test_set_spill_bytes (coord, 0);
  before = server_count (f);
  qstore_coordinator_begin (coord);
  for (guint i = 0; i < n; i++)
    {
      g_autofree char *key = g_strdup_printf ("r%06u", i);

      qstore_coordinator_put (coord, t, (const guint8 *) key, strlen (key),
                              (const guint8 *) "row", 3);
    }
  g_assert_cmpuint (qstore_coordinator_test_get_n_spills (coord), >=, n / 1024);
  /* The server holds them, uncommitted. */
  g_assert_cmpint (server_count (f), ==, before);
  g_assert_cmpuint (test_kv_count (reader_t), ==, 0);
  g_assert_cmpuint (test_kv_count (t), ==, 0);
  g_assert_false (has (reader_t, "r000001"));

  g_assert_true (qstore_coordinator_commit (coord, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (test_kv_count (reader_t), ==, n);
}

/* The application name the writer's sessions carry (qstore_pg_conn_open). */
static char *
own_sessions_filter (void)
{
  g_autofree char *host = g_strndup (g_get_host_name (), 40);

  return g_strdup_printf ("application_name = 'qstore/%d@%s'", (int) getpid (), host);
}

/* Ends the session of the open write transaction, as an administrator or
 * a failing network would. */
static void
terminate_writer (Fixture *f)
{
  g_autofree char *filter = own_sessions_filter ();
  g_autofree char *sql = g_strdup_printf ("SELECT pg_terminate_backend (pid) FROM "
                                          "pg_stat_activity WHERE %s AND state = "
                                          "'idle in transaction'", filter);
  PGresult *res = PQexec (f->pg, sql);

  g_assert_cmpint (PQresultStatus (res), ==, PGRES_TUPLES_OK);
  g_assert_cmpint (PQntuples (res), ==, 1);
  PQclear (res);
  /* Gone once the server no longer lists it. */
  for (guint i = 0; i < 500; i++)
    {
      g_autofree char *left = g_strdup_printf ("SELECT 1 FROM pg_stat_activity WHERE %s AND "
                                               "state = 'idle in transaction'", filter);
      gboolean gone;

      res = PQexec (f->pg, left);
      gone = PQntuples (res) == 0;
      PQclear (res);
      if (gone)
        return;
      g_usleep (10000);
    }
  g_assert_not_reached ();
}

static void
assert_lost (const GError *error)
{
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_IO);
  g_test_message ("%s", error->message);
  g_assert_true (strstr (error->message, "(SQLSTATE 57P01)") != NULL ||
                 strstr (error->message, "(SQLSTATE 08006)") != NULL);
}

/* A session lost mid-transaction, at a write or at the commit: a clear
 * error with the SQLSTATE, the transaction over, nothing of it stored. */
static void
test_connection_lost (Fixture       *f,
                      gconstpointer  data)
{
  for (guint at_commit = 0; at_commit <= 1; at_commit++)
    {
      g_autoptr(QStoreKV) t = store_of (f->writer, "main.t");
      g_autoptr(QStoreWriteTxn) txn = NULL;
      g_autoptr(GError) error = NULL;
      QStoreWriteOp op = { t, QSTORE_WRITE_OP_PUT, (const guint8 *) "late", 4,
                           (const guint8 *) "v", 1 };

      if (!at_commit)
        put (t, "base", "committed");
      txn = qstore_provider_begin_write (f->writer, &error);
      g_assert_no_error (error);
      txn_fill (txn, t, "k", 3000);
      terminate_writer (f);
      if (at_commit)
        g_assert_false (qstore_write_txn_commit (txn, QSTORE_WRITE_SYNC, &error));
      else
        g_assert_false (qstore_write_txn_write (txn, &op, 1, &error));
      assert_lost (error);
      g_clear_error (&error);
      g_assert_false (qstore_write_txn_is_open (txn));
      g_assert_false (qstore_write_txn_commit (txn, QSTORE_WRITE_SYNC, &error));
      g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_CLOSED);
      g_clear_error (&error);
      g_clear_object (&txn);
      g_clear_object (&t);

      /* The writer is done; the next one finds what was committed. */
      qstore_provider_close_all (f->writer);
      g_clear_object (&f->writer);
      f->writer = open_provider (f->uri, QSTORE_OPEN_NONE);
      t = store_of (f->writer, "main.t");
      g_assert_cmpuint (test_kv_count (t), ==, 1);
      g_assert_cmpint (server_count (f), ==, 1);
    }
}

/* check() while a write transaction is open counts what is committed,
 * and finds it sound; the transaction goes on, and what it commits is
 * counted next. */
static void
test_check_during_write (Fixture       *f,
                         gconstpointer  data)
{
  g_autoptr(QStoreKV) t = store_of (f->writer, "main.t");
  g_autoptr(QStoreWriteTxn) txn = NULL;
  g_autoptr(GError) error = NULL;

  put (t, "base", "committed");
  put (t, "other", "committed");
  txn = qstore_provider_begin_write (f->writer, &error);
  g_assert_no_error (error);
  txn_fill (txn, t, "k", 500);
  {
    g_autoptr(QStoreCheckReport) report = qstore_provider_check (f->writer, &error);

    g_assert_no_error (error);
    g_assert_true (qstore_check_report_is_clean (report));
    g_assert_cmpuint (qstore_check_report_get_n_checked_items (report, QSTORE_CHECK_SCOPE_FILE),
                      ==, 2);
  }
  g_assert_true (qstore_write_txn_is_open (txn));
  txn_fill (txn, t, "m", 10);
  g_assert_true (qstore_write_txn_commit (txn, QSTORE_WRITE_SYNC, &error));
  g_assert_no_error (error);
  {
    g_autoptr(QStoreCheckReport) report = qstore_provider_check (f->writer, &error);

    g_assert_no_error (error);
    g_assert_true (qstore_check_report_is_clean (report));
    g_assert_cmpuint (qstore_check_report_get_n_checked_items (report, QSTORE_CHECK_SCOPE_FILE),
                      ==, 512);
  }
}

/* Cancels the writer's statement once it waits for a lock, as an
 * administrator would (pg_cancel_backend). */
static gpointer
cancel_when_waiting (gpointer data)
{
  g_autofree char *filter = own_sessions_filter ();
  g_autofree char *sql = g_strdup_printf ("SELECT pg_cancel_backend (pid) FROM pg_stat_activity "
                                          "WHERE %s AND wait_event_type = 'Lock'", filter);
  PGconn *pg = PQconnectdb (g_getenv ("QSTORE_TEST_POSTGRES"));
  gboolean done = FALSE;

  for (guint i = 0; i < 1000 && !done; i++)
    {
      PGresult *res = PQexec (pg, sql);

      done = PQresultStatus (res) == PGRES_TUPLES_OK && PQntuples (res) == 1;
      PQclear (res);
      if (!done)
        g_usleep (10000);
    }
  PQfinish (pg);
  return GINT_TO_POINTER (done);
}

static void
exec_ok (PGconn     *pg,
         const char *sql)
{
  PGresult *res = PQexec (pg, sql);

  g_assert_cmpint (PQresultStatus (res), ==, PGRES_COMMAND_OK);
  PQclear (res);
}

/* A read inside the transaction fails on the server (cancelled while it
 * waits for a lock), which leaves the server's transaction aborted; the
 * application goes on and commits. The server answers that COMMIT with
 * ROLLBACK: the commit fails with a QSTORE_ERROR that says so, and none
 * of the transaction's writes is there. */
static void
test_commit_rolled_back (Fixture       *f,
                         gconstpointer  data)
{
  g_autoptr(QStoreKV) t = store_of (f->writer, "main.t");
  /* Never written: the writer knows no id for it and reads it by name,
   * in the table of stores. */
  g_autoptr(QStoreKV) unknown = store_of (f->writer, "main.unknown");
  g_autoptr(QStoreWriteTxn) txn = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *lock = g_strdup_printf ("LOCK TABLE %s.stores IN ACCESS EXCLUSIVE MODE",
                                           f->schema);
  GThread *canceller;
  const guint8 *value = NULL;
  gsize len = 0;

  put (t, "base", "committed");
  txn = qstore_provider_begin_write (f->writer, &error);
  g_assert_no_error (error);
  txn_fill (txn, t, "k", 100);

  exec_ok (f->pg, "BEGIN");
  exec_ok (f->pg, lock);
  canceller = g_thread_new ("cancel", cancel_when_waiting, NULL);
  g_assert_false (qstore_snapshot_lookup (QSTORE_SNAPSHOT (txn), unknown, (const guint8 *) "x", 1,
                                          &value, &len, &error));
  g_assert_true (GPOINTER_TO_INT (g_thread_join (canceller)));
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_IO);
  g_assert_nonnull (strstr (error->message, "(SQLSTATE 57014)"));
  g_clear_error (&error);
  exec_ok (f->pg, "ROLLBACK");

  /* A failed read leaves the transaction open: the commit is refused. */
  g_assert_true (qstore_write_txn_is_open (txn));
  g_assert_false (qstore_write_txn_commit (txn, QSTORE_WRITE_SYNC, &error));
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_FAILED);
  g_test_message ("%s", error->message);
  g_assert_nonnull (strstr (error->message, "rolled it back"));
  g_clear_error (&error);
  g_assert_false (qstore_write_txn_is_open (txn));

  g_assert_cmpint (server_count (f), ==, 1);
  g_assert_false (has (t, "k000001"));
  g_assert_cmpuint (test_kv_count (t), ==, 1);
  /* The writer goes on. */
  put (t, "after", "committed");
  g_assert_cmpint (server_count (f), ==, 2);
}

/* The payloads of the notifications on the channel within @wait_ms. */
static char *
notifications (Fixture *f,
               guint    wait_ms)
{
  GString *got = g_string_new (NULL);
  gint64 end = g_get_monotonic_time () + wait_ms * 1000;
  PGnotify *notify;

  for (;;)
    {
      struct pollfd pfd = { PQsocket (f->pg), POLLIN, 0 };
      gint64 left = end - g_get_monotonic_time ();

      g_assert_true (PQconsumeInput (f->pg));
      while ((notify = PQnotifies (f->pg)) != NULL)
        {
          g_string_append_printf (got, "%s%s", got->len ? "," : "", notify->extra);
          PQfreemem (notify);
        }
      if (left <= 0 || got->len > 0)
        break;
      poll (&pfd, 1, (int) MAX (1, left / 1000));
    }
  return g_string_free (got, FALSE);
}

/* A change-log entry of transaction @tx_id, as the coordinator writes it. */
static void
txn_log (QStoreWriteTxn *txn,
         QStoreKV       *log,
         guint64         tx_id)
{
  g_autoptr(GError) error = NULL;
  guint64 be = GUINT64_TO_BE (tx_id);

  g_assert_true (qstore_write_txn_put (txn, log, (const guint8 *) &be, 8,
                                       (const guint8 *) "{}", 2, &error));
  g_assert_no_error (error);
}

/* Listeners hear of a transaction that wrote a change-log entry when it
 * commits, not before, and never of one that does not commit. */
static void
test_notify_at_commit (Fixture       *f,
                       gconstpointer  data)
{
  g_autoptr(QStoreKV) t = store_of (f->writer, "main.t");
  g_autoptr(QStoreKV) log = store_of (f->writer, QSTORE_CHANGE_LOG_STORE_NAME);
  g_autofree char *listen = g_strdup_printf ("LISTEN %s", f->channel);
  g_autoptr(GError) error = NULL;
  g_autofree char *heard = NULL;
  PGresult *res = PQexec (f->pg, listen);

  g_assert_cmpint (PQresultStatus (res), ==, PGRES_COMMAND_OK);
  PQclear (res);

  {
    g_autoptr(QStoreWriteTxn) txn = qstore_provider_begin_write (f->writer, &error);

    g_assert_no_error (error);
    txn_fill (txn, t, "k", 2000);
    txn_log (txn, log, 7);
    txn_fill (txn, t, "m", 10);
    heard = notifications (f, 300);
    g_assert_cmpstr (heard, ==, "");
    g_clear_pointer (&heard, g_free);
    g_assert_true (qstore_write_txn_commit (txn, QSTORE_WRITE_SYNC, &error));
    g_assert_no_error (error);
    heard = notifications (f, 5000);
    g_assert_cmpstr (heard, ==, "7");
    g_clear_pointer (&heard, g_free);
  }

  {
    g_autoptr(QStoreWriteTxn) txn = qstore_provider_begin_write (f->writer, &error);

    g_assert_no_error (error);
    txn_log (txn, log, 8);
    qstore_write_txn_abort (txn);
    heard = notifications (f, 300);
    g_assert_cmpstr (heard, ==, "");
    g_clear_pointer (&heard, g_free);
  }
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);

#define ADD(name, func) \
  g_test_add ("/postgres/txn/" name, Fixture, NULL, fixture_setup, func, fixture_teardown)
  ADD ("unseen", test_unseen);
  ADD ("gaps", test_gaps);
  ADD ("abort-new-store", test_abort_new_store);
  ADD ("coordinator-unseen", test_coordinator_unseen);
  ADD ("connection-lost", test_connection_lost);
  ADD ("notify-at-commit", test_notify_at_commit);
  ADD ("check-during-write", test_check_during_write);
  ADD ("commit-rolled-back", test_commit_rolled_back);
#undef ADD

  return g_test_run ();
}
