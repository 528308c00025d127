/* test-postgres-follow.c: followers of a PostgreSQL store wake on
 * LISTEN/NOTIFY
 *
 * Runs under with-postgres.sh. A database writes through its own session;
 * a follower (qstore_change_feed_new_follower()) reads the change log
 * through sessions of its own and LISTENs on another. The schema's name
 * is hostile (quotes, a semicolon, non-ASCII): the channel derived from
 * it must still work. This program talks to the server with libpq itself
 * to stand in for a hostile client and to end the follower's session.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <libpq-fe.h>
#include <string.h>

#include "qstore-test-util.h"

/* Each commit is told within this (a follower that polled once a second
 * would not make it). */
#define MAX_LAG_MS 250
/* How long a test waits for what it expects before it fails. */
#define WAIT_MS 10000
#define N_COMMITS 40
/* The schema's leaf: quotes, a semicolon, non-ASCII. */
#define LEAF "fol\"low'; DROP SCHEMA x;--ü"

typedef struct
{
  char             *dir;
  char             *uri;
  QStoreDatabase   *db;
  QStoreChangeFeed *feed;
  GArray           *told;    /* guint64 tx ids, in the order told */
  GPtrArray        *gaps;    /* reasons */
  guint             failed;
  PGconn           *pg;      /* a client of our own */
} Fixture;

static void
on_changes (QStoreChangeFeed *feed,
            QStoreChangeSet  *change_set,
            gpointer          data)
{
  Fixture *f = data;
  guint64 tx_id = qstore_change_set_get_tx_id (change_set);

  g_array_append_val (f->told, tx_id);
}

static void
on_gap (QStoreChangeFeed *feed,
        const char       *reason,
        gint64            down_for_ms,
        gpointer          data)
{
  Fixture *f = data;

  g_test_message ("gap: %s (down for %" G_GINT64_FORMAT " ms)", reason, down_for_ms);
  g_ptr_array_add (f->gaps, g_strdup (reason));
}

static void
on_failed (QStoreChangeFeed *feed,
           const GError     *error,
           gpointer          data)
{
  Fixture *f = data;

  /* A read while the server is away fails; the follower goes on. */
  g_test_message ("failed: %s", error->message);
  f->failed++;
}

static guint64
last_tx (Fixture *f)
{
  return qstore_coordinator_get_last_tx_id (qstore_database_get_coordinator (f->db));
}

static void
fixture_set_up (Fixture       *f,
                gconstpointer  data)
{
  g_autoptr(GError) error = NULL;

  f->dir = test_make_tmp_dir ("qstore-pg-follow-XXXXXX");
  /* The schema: the directory's name and this leaf. */
  f->uri = test_provider_uri (f->dir, LEAF);
  f->db = test_open_database (f->uri, QSTORE_OPEN_NONE);
  test_exec (f->db, "CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)");
  test_exec (f->db, "PRAGMA qstore.change_log = 10000");
  test_exec (f->db, "INSERT INTO t VALUES (0, 'first')");

  f->told = g_array_new (FALSE, FALSE, sizeof (guint64));
  f->gaps = g_ptr_array_new_with_free_func (g_free);
  f->feed = qstore_change_feed_new_follower (f->uri, last_tx (f), &error);
  g_assert_no_error (error);
  g_signal_connect (f->feed, "changes", G_CALLBACK (on_changes), f);
  g_signal_connect (f->feed, "gap", G_CALLBACK (on_gap), f);
  g_signal_connect (f->feed, "failed", G_CALLBACK (on_failed), f);
  qstore_change_feed_follow (f->feed, &error);
  g_assert_no_error (error);

  f->pg = PQconnectdb (g_getenv ("QSTORE_TEST_POSTGRES"));
  g_assert_cmpint (PQstatus (f->pg), ==, CONNECTION_OK);
}

static void
fixture_tear_down (Fixture       *f,
                   gconstpointer  data)
{
  qstore_change_feed_close (f->feed);
  g_clear_object (&f->feed);
  if (f->db != NULL)
    qstore_database_close (f->db, NULL);
  g_clear_object (&f->db);
  PQfinish (f->pg);
  g_array_unref (f->told);
  g_ptr_array_unref (f->gaps);
  test_remove_tree (f->dir);
  g_free (f->dir);
  g_free (f->uri);
}

/* Runs the main context until @n changes were told or @n_gaps gaps, or
 * WAIT_MS passed. */
static void
wait_for (Fixture *f,
          guint    n,
          guint    n_gaps)
{
  gint64 deadline = g_get_monotonic_time () + WAIT_MS * G_TIME_SPAN_MILLISECOND;

  while ((f->told->len < n || f->gaps->len < n_gaps) && g_get_monotonic_time () < deadline)
    if (!g_main_context_iteration (NULL, FALSE))
      g_usleep (500);
}

/* Runs the main context for @ms. */
static void
spin (guint ms)
{
  gint64 until = g_get_monotonic_time () + ms * G_TIME_SPAN_MILLISECOND;

  while (g_get_monotonic_time () < until)
    if (!g_main_context_iteration (NULL, FALSE))
      g_usleep (1000);
}

static void
insert (Fixture *f,
        guint    id)
{
  g_autofree char *sql = g_strdup_printf ("INSERT INTO t VALUES (%u, 'row %u')", id, id);

  test_exec (f->db, sql);
}

/* Every transaction from @first to @last, once each, in order. */
static void
assert_told (Fixture *f,
             guint64  first,
             guint64  last)
{
  g_assert_cmpuint (f->told->len, ==, last - first + 1);
  for (guint i = 0; i < f->told->len; i++)
    g_assert_cmpuint (g_array_index (f->told, guint64, i), ==, first + i);
}

static void
sql (Fixture    *f,
     const char *text)
{
  PGresult *res = PQexec (f->pg, text);

  if (PQresultStatus (res) != PGRES_COMMAND_OK && PQresultStatus (res) != PGRES_TUPLES_OK)
    g_error ("“%s” failed: %s", text, PQerrorMessage (f->pg));
  PQclear (res);
}

/* The follower's listening session, by the statement it ran last. */
static int
terminate_listener (Fixture *f)
{
  PGresult *res = PQexec (f->pg, "SELECT pg_terminate_backend (pid) FROM pg_stat_activity "
                                 "WHERE query LIKE 'LISTEN qstore\\_%' AND pid <> pg_backend_pid ()");
  int n;

  g_assert_cmpint (PQresultStatus (res), ==, PGRES_TUPLES_OK);
  n = PQntuples (res);
  PQclear (res);
  return n;
}

static char *
listened_channel (Fixture *f)
{
  PGresult *res = PQexec (f->pg, "SELECT substr (query, 8) FROM pg_stat_activity "
                                 "WHERE query LIKE 'LISTEN qstore\\_%'");
  char *channel;

  g_assert_cmpint (PQresultStatus (res), ==, PGRES_TUPLES_OK);
  g_assert_cmpint (PQntuples (res), ==, 1);
  channel = g_strdup (PQgetvalue (res, 0, 0));
  PQclear (res);
  return channel;
}

static int
compare_lags (gconstpointer a,
              gconstpointer b)
{
  gint64 x = *(const gint64 *) a, y = *(const gint64 *) b;

  return x < y ? -1 : x > y;
}

/* Each commit is told, in order, soon: the follower waits on the
 * server's notification, not on a timer. */
static void
test_every_commit (Fixture       *f,
                   gconstpointer  data)
{
  guint64 first = last_tx (f) + 1;
  g_autoptr(GArray) lags = g_array_new (FALSE, FALSE, sizeof (gint64));
  gint64 worst = 0;

  for (guint i = 1; i <= N_COMMITS; i++)
    {
      gint64 committed, lag;

      insert (f, i);
      committed = g_get_monotonic_time ();
      wait_for (f, i, 0);
      lag = (g_get_monotonic_time () - committed) / 1000;
      g_assert_cmpuint (f->told->len, ==, i);
      g_array_append_val (lags, lag);
      worst = MAX (worst, lag);
    }
  g_array_sort (lags, compare_lags);
  g_test_message ("commit to follower: median %" G_GINT64_FORMAT " ms, worst %"
                  G_GINT64_FORMAT " ms", g_array_index (lags, gint64, lags->len / 2), worst);
  g_assert_cmpint (worst, <, MAX_LAG_MS);
  assert_told (f, first, last_tx (f));
  g_assert_cmpuint (f->gaps->len, ==, 0);
  g_assert_cmpuint (f->failed, ==, 0);
}

/* The follower's listening session ends: a gap, then every commit after
 * its position, those made while it was away included. */
static void
test_listener_terminated (Fixture       *f,
                          gconstpointer  data)
{
  guint64 first = last_tx (f) + 1;

  insert (f, 1);
  wait_for (f, 1, 0);
  g_assert_cmpint (terminate_listener (f), ==, 1);
  /* Made before the follower can have noticed. */
  insert (f, 2);
  insert (f, 3);
  wait_for (f, 3, 1);
  g_assert_cmpuint (f->gaps->len, ==, 1);
  g_assert_nonnull (strstr (f->gaps->pdata[0], "lost"));
  for (guint i = 4; i <= 6; i++)
    insert (f, i);
  wait_for (f, 6, 1);
  assert_told (f, first, last_tx (f));
  g_assert_cmpuint (f->gaps->len, ==, 1);
}

static void
server (const char *what)
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

/* The server restarts: the writer opens again, the follower tells a gap
 * and then every later commit. */
static void
test_server_restart (Fixture       *f,
                     gconstpointer  data)
{
  guint64 first = last_tx (f) + 1, before;

  insert (f, 1);
  wait_for (f, 1, 0);
  server ("stop");
  spin (200);
  server ("start");
  /* The writer's session went with the server: it opens again. */
  qstore_database_close (f->db, NULL);
  g_clear_object (&f->db);
  f->db = test_open_database (f->uri, QSTORE_OPEN_NONE);
  PQreset (f->pg);
  before = last_tx (f);
  g_assert_cmpuint (before, ==, first);

  wait_for (f, 1, 1);
  g_assert_cmpuint (f->gaps->len, ==, 1);
  for (guint i = 2; i <= 5; i++)
    insert (f, i);
  wait_for (f, 5, 1);
  assert_told (f, first, last_tx (f));
  g_assert_cmpuint (f->gaps->len, ==, 1);
}

/* Anyone may NOTIFY the channel, with anything: the follower reads the
 * log, which says nothing new, and tells nothing. */
static void
test_spoofed (Fixture       *f,
              gconstpointer  data)
{
  g_autofree char *channel = listened_channel (f);
  g_autofree char *big = g_strnfill (7000, '9');
  const char *payloads[] = { "garbage", "", "18446744073709551615", "-1", "12abc", big };
  guint64 first = last_tx (f) + 1;

  /* The channel is a plain identifier, whatever the schema's name. */
  g_assert_true (g_str_has_prefix (channel, "qstore_"));
  g_assert_cmpuint (strspn (channel, "qstore_0123456789abcdef"), ==, strlen (channel));

  for (guint i = 0; i < G_N_ELEMENTS (payloads); i++)
    {
      char *escaped = PQescapeLiteral (f->pg, payloads[i], strlen (payloads[i]));
      g_autofree char *notify = g_strdup_printf ("NOTIFY %s, %s", channel, escaped);

      PQfreemem (escaped);
      sql (f, notify);
    }
  spin (300);
  g_assert_cmpuint (f->told->len, ==, 0);
  g_assert_cmpuint (f->gaps->len, ==, 0);
  g_assert_cmpuint (f->failed, ==, 0);

  /* And the real thing still works. */
  insert (f, 1);
  wait_for (f, 1, 0);
  assert_told (f, first, last_tx (f));
}

/* The notifications our own client got within @ms, or once @n came:
 * their payloads. */
static GPtrArray *
notifications (Fixture *f,
               guint    n,
               guint    ms)
{
  GPtrArray *payloads = g_ptr_array_new_with_free_func (g_free);
  gint64 deadline = g_get_monotonic_time () + ms * G_TIME_SPAN_MILLISECOND;

  while (payloads->len < n && g_get_monotonic_time () < deadline)
    {
      PGnotify *notify;

      /* The follower's own session must keep up meanwhile. */
      g_main_context_iteration (NULL, FALSE);
      g_assert_cmpint (PQconsumeInput (f->pg), ==, 1);
      while ((notify = PQnotifies (f->pg)) != NULL)
        {
          g_ptr_array_add (payloads, g_strdup (notify->extra));
          PQfreemem (notify);
        }
      g_usleep (2000);
    }
  return payloads;
}

/* A transaction rolled back, or whose commit the server refused after
 * its pg_notify ran, is told to no one listening; the next commit is. */
static void
test_no_notify_without_commit (Fixture       *f,
                               gconstpointer  data)
{
  g_autofree char *channel = listened_channel (f);
  g_autofree char *base = g_path_get_basename (f->dir);
  g_autofree char *schema = g_strdup_printf ("%s_%s", base, LEAF);
  char *quoted = PQescapeIdentifier (f->pg, schema, strlen (schema));
  g_autofree char *listen = g_strdup_printf ("LISTEN %s", channel);
  g_autofree char *flag = g_strdup_printf ("CREATE TABLE %s.refuse (why text)", quoted);
  g_autofree char *function = NULL;
  g_autofree char *trigger = NULL;
  g_autofree char *refuse = g_strdup_printf ("INSERT INTO %s.refuse VALUES ('test')", quoted);
  g_autofree char *allow = g_strdup_printf ("DELETE FROM %s.refuse", quoted);
  g_autofree char *expected = NULL;
  g_autoptr(GPtrArray) got = NULL;
  g_autoptr(GError) error = NULL;

  /* Fires at COMMIT, after the transaction's pg_notify ran. */
  function = g_strdup_printf ("CREATE FUNCTION %s.refuse_commit () RETURNS trigger "
                              "LANGUAGE plpgsql AS $$ BEGIN "
                              "IF EXISTS (SELECT 1 FROM %s.refuse) THEN "
                              "RAISE EXCEPTION 'commit refused by the test'; END IF; "
                              "RETURN NULL; END $$", quoted, quoted);
  trigger = g_strdup_printf ("CREATE CONSTRAINT TRIGGER refuse AFTER INSERT OR UPDATE "
                             "ON %s.kv DEFERRABLE INITIALLY DEFERRED FOR EACH ROW "
                             "EXECUTE FUNCTION %s.refuse_commit ()", quoted, quoted);
  PQfreemem (quoted);
  sql (f, flag);
  sql (f, function);
  sql (f, trigger);
  sql (f, listen);

  /* Rolled back: nothing reaches the server, nothing is told. */
  test_exec (f->db, "BEGIN");
  insert (f, 1);
  test_exec (f->db, "ROLLBACK");
  got = notifications (f, 1, 300);
  g_assert_cmpuint (got->len, ==, 0);
  g_clear_pointer (&got, g_ptr_array_unref);

  /* Refused at commit: the write fails, saying why, and is not told. */
  sql (f, refuse);
  g_assert_false (qstore_database_exec (f->db, "INSERT INTO t VALUES (2, 'refused')", &error));
  g_assert_nonnull (error);
  g_test_message ("refused commit: %s", error->message);
  g_assert_nonnull (strstr (error->message, "commit refused by the test"));
  g_assert_nonnull (strstr (error->message, "SQLSTATE P0001"));
  got = notifications (f, 1, 300);
  g_assert_cmpuint (got->len, ==, 0);
  g_clear_pointer (&got, g_ptr_array_unref);

  /* The next real commit is told, with its transaction id. */
  sql (f, allow);
  insert (f, 3);
  got = notifications (f, 1, WAIT_MS);
  g_assert_cmpuint (got->len, ==, 1);
  expected = g_strdup_printf ("%" G_GUINT64_FORMAT, last_tx (f));
  g_assert_cmpstr (got->pdata[0], ==, expected);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);

  if (g_getenv ("QSTORE_TEST_POSTGRES") == NULL)
    {
      g_test_skip ("no server: run under tests/postgres/with-postgres.sh");
      return g_test_run ();
    }
  g_test_add ("/postgres/follow/every-commit", Fixture, NULL,
              fixture_set_up, test_every_commit, fixture_tear_down);
  g_test_add ("/postgres/follow/listener-terminated", Fixture, NULL,
              fixture_set_up, test_listener_terminated, fixture_tear_down);
  g_test_add ("/postgres/follow/spoofed", Fixture, NULL,
              fixture_set_up, test_spoofed, fixture_tear_down);
  g_test_add ("/postgres/follow/no-notify-without-commit", Fixture, NULL,
              fixture_set_up, test_no_notify_without_commit, fixture_tear_down);
  g_test_add ("/postgres/follow/server-restart", Fixture, NULL,
              fixture_set_up, test_server_restart, fixture_tear_down);
  return g_test_run ();
}
