/* test-bus-feed.c: QStoreChangeFeed following a qstore serve on the bus
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Runs under dbus-run-session (the `dbus` suite starts one). The real
 * servers are `qstore serve` processes ($QSTORE_TOOL) on LMDB stores,
 * written to through their Execute method. The hostile ones are served
 * from this process on a connection of their own, which owns the name and
 * emits what it likes: skipped transactions, rows that do not parse,
 * signals of the wrong type, another interface version.
 */
#include "config.h"

#include <signal.h>

#include "qstore-test-util.h"

static const char *qstore_tool;

/* Waiting on the main loop */

static gboolean
wait_for (gboolean (*done) (gpointer data),
          gpointer   data,
          guint      seconds)
{
  gint64 deadline = g_get_monotonic_time () + seconds * G_USEC_PER_SEC;

  while (!done (data) && g_get_monotonic_time () < deadline)
    if (!g_main_context_iteration (NULL, FALSE))
      g_usleep (2000);
  return done (data);
}

static void
spin (guint ms)
{
  gint64 until = g_get_monotonic_time () + ms * 1000;

  while (g_get_monotonic_time () < until)
    if (!g_main_context_iteration (NULL, FALSE))
      g_usleep (2000);
}

/* What a feed told, in order */

typedef struct
{
  GPtrArray *sets;      /* QStoreChangeSet */
  GPtrArray *gaps;      /* reason */
  GArray    *gap_ms;
  GPtrArray *failures;  /* GError */
  GString   *order;     /* "c" a change set, "g" a gap */
} Heard;

static void
on_changes (QStoreChangeFeed *feed,
            QStoreChangeSet  *set,
            Heard            *heard)
{
  g_ptr_array_add (heard->sets, g_object_ref (set));
  g_string_append_c (heard->order, 'c');
}

static void
on_gap (QStoreChangeFeed *feed,
        const char       *reason,
        gint64            down_for_ms,
        Heard            *heard)
{
  g_ptr_array_add (heard->gaps, g_strdup (reason));
  g_array_append_val (heard->gap_ms, down_for_ms);
  g_string_append_c (heard->order, 'g');
}

static void
on_failed (QStoreChangeFeed *feed,
           const GError     *error,
           Heard            *heard)
{
  g_ptr_array_add (heard->failures, g_error_copy (error));
}

static void
heard_listen (Heard            *heard,
              QStoreChangeFeed *feed)
{
  heard->sets = g_ptr_array_new_with_free_func (g_object_unref);
  heard->gaps = g_ptr_array_new_with_free_func (g_free);
  heard->gap_ms = g_array_new (FALSE, FALSE, sizeof (gint64));
  heard->failures = g_ptr_array_new_with_free_func ((GDestroyNotify) g_error_free);
  heard->order = g_string_new (NULL);
  g_signal_connect (feed, "changes", G_CALLBACK (on_changes), heard);
  g_signal_connect (feed, "gap", G_CALLBACK (on_gap), heard);
  g_signal_connect (feed, "failed", G_CALLBACK (on_failed), heard);
}

static void
heard_clear (Heard *heard)
{
  g_ptr_array_unref (heard->sets);
  g_ptr_array_unref (heard->gaps);
  g_array_unref (heard->gap_ms);
  g_ptr_array_unref (heard->failures);
  g_string_free (heard->order, TRUE);
}

typedef struct
{
  Heard *heard;
  guint  n;
} Count;

static gboolean
has_sets (gpointer data)
{
  Count *count = data;

  return count->heard->sets->len >= count->n;
}

static gboolean
has_gaps (gpointer data)
{
  Count *count = data;

  return count->heard->gaps->len >= count->n;
}

static QStoreChangeSet *
set_at (Heard *heard,
        guint  i)
{
  return g_ptr_array_index (heard->sets, i);
}

/* A change's new (or old) row as text, such as (2, NULL). */
static char *
row_text (GVariant *row)
{
  GString *out = g_string_new ("(");

  for (gsize i = 0; row != NULL && i < g_variant_n_children (row); i++)
    {
      g_autoptr(GVariant) boxed = g_variant_get_child_value (row, i);
      g_autoptr(GVariant) value = g_variant_get_variant (boxed);
      g_autofree char *text = qstore_value_is_null (value) ? g_strdup ("NULL")
                                                           : g_variant_print (value, FALSE);

      g_string_append_printf (out, i > 0 ? ", %s" : "%s", text);
    }
  g_string_append_c (out, ')');
  return g_string_free (out, FALSE);
}

/* Real servers */

typedef struct
{
  char        *dir;
  char        *uri;
  char        *id;
  char        *name;
  GSubprocess *process;
} Server;

static gboolean
name_owned (const char *name)
{
  g_autoptr(GDBusConnection) bus = g_bus_get_sync (G_BUS_TYPE_SESSION, NULL, NULL);
  g_autoptr(GVariant) reply = NULL;
  gboolean owned = FALSE;

  reply = g_dbus_connection_call_sync (bus, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                                       "org.freedesktop.DBus", "NameHasOwner",
                                       g_variant_new ("(s)", name), G_VARIANT_TYPE ("(b)"),
                                       G_DBUS_CALL_FLAGS_NONE, -1, NULL, NULL);
  if (reply != NULL)
    g_variant_get (reply, "(b)", &owned);
  return owned;
}

static gboolean
server_up (gpointer data)
{
  Server *server = data;

  g_assert_nonnull (g_subprocess_get_identifier (server->process));
  return name_owned (server->name);
}

static void
server_start (Server *server)
{
  g_autoptr(GError) error = NULL;

  server->process = g_subprocess_new (G_SUBPROCESS_FLAGS_STDERR_SILENCE, &error, qstore_tool,
                                      "--store", server->uri, "serve", "--id", server->id,
                                      "--allow-writes", "--rows-per-signal", "2", NULL);
  g_assert_no_error (error);
  g_assert_true (wait_for (server_up, server, 30));
}

static void
server_new (Server     *server,
            const char *id)
{
  g_autoptr(GSubprocess) sql = NULL;
  g_autoptr(GError) error = NULL;

  server->dir = test_make_tmp_dir ("qstore-bus-feed-XXXXXX");
  server->uri = g_strdup_printf ("lmdb:%s/store", server->dir);
  server->id = g_strdup (id);
  server->name = g_strconcat (QSTORE_SERVER_NAME_PREFIX, id, NULL);
  sql = g_subprocess_new (G_SUBPROCESS_FLAGS_STDOUT_SILENCE, &error, qstore_tool,
                          "--store", server->uri, "sql",
                          "CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT, data BLOB, x REAL)",
                          NULL);
  g_assert_no_error (error);
  g_assert_true (g_subprocess_wait_check (sql, NULL, &error));
  server_start (server);
}

static void
server_stop (Server *server)
{
  g_autoptr(GError) error = NULL;

  g_subprocess_send_signal (server->process, SIGTERM);
  g_assert_true (g_subprocess_wait (server->process, NULL, &error));
  g_clear_object (&server->process);
}

static void
server_free (Server *server)
{
  if (server->process != NULL)
    server_stop (server);
  test_remove_tree (server->dir);
  g_free (server->dir);
  g_free (server->uri);
  g_free (server->id);
  g_free (server->name);
}

static guint64
execute (Server     *server,
         const char *sql)
{
  g_autoptr(GDBusConnection) bus = g_bus_get_sync (G_BUS_TYPE_SESSION, NULL, NULL);
  g_autoptr(GVariant) reply = NULL;
  g_autoptr(GError) error = NULL;
  guint64 tx, n;

  reply = g_dbus_connection_call_sync (bus, server->name, QSTORE_SERVER_PATH,
                                       QSTORE_SERVER_INTERFACE, "Execute",
                                       g_variant_new ("(s)", sql), G_VARIANT_TYPE ("(tt)"),
                                       G_DBUS_CALL_FLAGS_NONE, 10000, NULL, &error);
  g_assert_no_error (error);
  g_variant_get (reply, "(tt)", &tx, &n);
  return tx;
}

/* Errors */

static void
test_errors (void)
{
  g_autoptr(QStoreChangeFeed) feed = NULL;
  g_autoptr(GError) error = NULL;

  feed = qstore_change_feed_new_for_bus_sync (NULL, "nobody_here", QSTORE_BUS_FOLLOW_NONE, NULL,
                                              &error);
  g_assert_null (feed);
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_NOT_FOUND);
  g_assert_nonnull (strstr (error->message, "org.qstore.Server.nobody_here"));
  g_assert_nonnull (strstr (error->message, "serve --id nobody_here"));
  g_clear_error (&error);

  feed = qstore_change_feed_new_for_bus_sync (NULL, "1abc", QSTORE_BUS_FOLLOW_NONE, NULL, &error);
  g_assert_null (feed);
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "“1abc”"));
  g_clear_error (&error);

  feed = qstore_change_feed_new_for_bus_sync (NULL, ":1.5", QSTORE_BUS_FOLLOW_NONE, NULL, &error);
  g_assert_null (feed);
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "well-known name"));
}

/* follow: a real server's transactions, in order, with their rows */

static gboolean
is_counted (gpointer data)
{
  return *(guint *) data > 0;
}

static void
count_signal (GDBusConnection *connection,
              const char      *sender,
              const char      *path,
              const char      *interface,
              const char      *member,
              GVariant        *parameters,
              gpointer         data)
{
  (*(guint *) data)++;
}

static void
test_follow (void)
{
  Server server = { 0 };
  g_autoptr(QStoreChangeFeed) feed = NULL;
  g_autoptr(GError) error = NULL;
  Heard heard;
  Count count = { &heard, 4 };
  guint64 first;

  server_new (&server, "follow");
  /* By its full name; by id is the same name. */
  feed = qstore_change_feed_new_for_bus_sync (NULL, server.name, QSTORE_BUS_FOLLOW_NONE, NULL,
                                              &error);
  g_assert_no_error (error);
  g_assert_cmpstr (qstore_change_feed_get_bus_name (feed), ==, server.name);
  g_assert_nonnull (qstore_change_feed_get_server_owner (feed));
  g_assert_true (g_dbus_is_unique_name (qstore_change_feed_get_server_owner (feed)));
  heard_listen (&heard, feed);

  /* Five rows go out in three CommittedRows signals (two a signal). */
  first = execute (&server, "INSERT INTO t VALUES (1, 'a', NULL, 1.5), (2, NULL, x'00ff', NULL), "
                            "(3, 'c', NULL, NULL), (4, 'd', NULL, NULL), (5, 'e', NULL, 1e300)");
  execute (&server, "UPDATE t SET name = 'z' WHERE id = 2");
  execute (&server, "DELETE FROM t WHERE id = 3");
  execute (&server, "INSERT INTO t VALUES (6, 'f', NULL, NULL)");
  g_assert_true (wait_for (has_sets, &count, 20));
  spin (100);

  g_assert_cmpuint (heard.sets->len, ==, 4);
  g_assert_cmpuint (heard.gaps->len, ==, 0);
  for (guint i = 0; i < 4; i++)
    g_assert_cmpuint (qstore_change_set_get_tx_id (set_at (&heard, i)), ==, first + i);
  g_assert_cmpuint (qstore_change_feed_get_position (feed), ==, first + 3);

  {
    QStoreChangeSet *set = set_at (&heard, 0);
    const char *expected[] = { "(1, 'a', NULL, 1.5)", "(2, NULL, [0x00, 0xff], NULL)",
                               "(3, 'c', NULL, NULL)", "(4, 'd', NULL, NULL)",
                               "(5, 'e', NULL, 1.0000000000000001e+300)" };

    g_assert_cmpuint (qstore_change_set_get_n_changes (set), ==, 5);
    g_assert_cmpint (qstore_change_set_get_time (set), >, 0);
    for (guint i = 0; i < 5; i++)
      {
        g_autoptr(GVariant) new_row = qstore_change_set_get_new_row (set, i);
        g_autoptr(GVariant) old_row = qstore_change_set_get_old_row (set, i);
        g_autofree char *text = row_text (new_row);

        g_assert_cmpstr (qstore_change_set_get_schema (set, i), ==, "main");
        g_assert_cmpstr (qstore_change_set_get_table (set, i), ==, "t");
        g_assert_cmpint (qstore_change_set_get_op (set, i), ==, QSTORE_CHANGE_INSERT);
        g_assert_null (old_row);
        g_assert_cmpstr (text, ==, expected[i]);
      }
  }
  {
    QStoreChangeSet *set = set_at (&heard, 1);
    g_autoptr(GVariant) old_row = qstore_change_set_get_old_row (set, 0);
    g_autoptr(GVariant) new_row = qstore_change_set_get_new_row (set, 0);
    g_autofree char *old_text = row_text (old_row);
    g_autofree char *new_text = row_text (new_row);

    g_assert_cmpint (qstore_change_set_get_op (set, 0), ==, QSTORE_CHANGE_UPDATE);
    g_assert_cmpstr (old_text, ==, "(2, NULL, [0x00, 0xff], NULL)");
    g_assert_cmpstr (new_text, ==, "(2, 'z', [0x00, 0xff], NULL)");
  }
  {
    QStoreChangeSet *set = set_at (&heard, 2);
    g_autoptr(GVariant) new_row = qstore_change_set_get_new_row (set, 0);

    g_assert_cmpint (qstore_change_set_get_op (set, 0), ==, QSTORE_CHANGE_DELETE);
    g_assert_null (new_row);
  }

  /* Closed, it unsubscribed: the server sends to no one, as a listener
   * that never subscribed hears. */
  {
    g_autoptr(GDBusConnection) bus = g_bus_get_sync (G_BUS_TYPE_SESSION, NULL, NULL);
    guint n_heard = 0;
    guint listener = g_dbus_connection_signal_subscribe (bus, server.name, QSTORE_SERVER_INTERFACE,
                                                         "Committed", QSTORE_SERVER_PATH, NULL,
                                                         G_DBUS_SIGNAL_FLAGS_NONE, count_signal,
                                                         &n_heard, NULL);

    execute (&server, "INSERT INTO t VALUES (7, 'g', NULL, NULL)");
    spin (300);
    g_assert_cmpuint (n_heard, ==, 1);
    qstore_change_feed_close (feed);
    g_assert_null (qstore_change_feed_get_server_owner (feed));
    spin (100);
    execute (&server, "INSERT INTO t VALUES (8, 'h', NULL, NULL)");
    spin (300);
    g_assert_cmpuint (n_heard, ==, 1);
    g_assert_cmpuint (heard.sets->len, ==, 5);
    g_dbus_connection_signal_unsubscribe (bus, listener);
  }

  heard_clear (&heard);
  server_free (&server);
}

/* restart: the server goes and comes back */

static gboolean
has_no_owner (gpointer data)
{
  return qstore_change_feed_get_server_owner (data) == NULL;
}

static gboolean
has_owner (gpointer data)
{
  return qstore_change_feed_get_server_owner (data) != NULL;
}

static void
test_restart (void)
{
  Server server = { 0 };
  g_autoptr(QStoreChangeFeed) feed = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *owner = NULL;
  Heard heard;
  Count sets = { &heard, 1 };
  Count gaps = { &heard, 1 };
  guint64 tx;

  server_new (&server, "restart");
  feed = qstore_change_feed_new_for_bus_sync (NULL, "restart", QSTORE_BUS_FOLLOW_NONE, NULL, &error);
  g_assert_no_error (error);
  heard_listen (&heard, feed);
  owner = g_strdup (qstore_change_feed_get_server_owner (feed));
  execute (&server, "INSERT INTO t VALUES (1, 'a', NULL, NULL)");
  g_assert_true (wait_for (has_sets, &sets, 20));

  server_stop (&server);
  g_assert_true (wait_for (has_no_owner, feed, 20));
  spin (200);
  server_start (&server);
  g_assert_true (wait_for (has_gaps, &gaps, 20));
  g_assert_cmpstr (g_ptr_array_index (heard.gaps, 0), ==, "server restarted");
  g_assert_cmpint (g_array_index (heard.gap_ms, gint64, 0), >=, 200);
  g_assert_true (wait_for (has_owner, feed, 20));
  g_assert_cmpstr (qstore_change_feed_get_server_owner (feed), !=, owner);

  /* It follows the new server, after the gap. */
  tx = execute (&server, "INSERT INTO t VALUES (2, 'b', NULL, NULL)");
  sets.n = 2;
  g_assert_true (wait_for (has_sets, &sets, 20));
  g_assert_cmpuint (qstore_change_set_get_tx_id (set_at (&heard, 1)), ==, tx);
  g_assert_cmpstr (heard.order->str, ==, "cgc");
  g_assert_cmpuint (heard.failures->len, ==, 0);

  heard_clear (&heard);
  g_clear_object (&feed);
  server_free (&server);
}

/* wait and async: made before the server runs, without blocking */

static void
made_cb (GObject      *source,
         GAsyncResult *result,
         gpointer      data)
{
  GAsyncResult **out = data;

  *out = g_object_ref (result);
}

static gboolean
is_set (gpointer data)
{
  return *(gpointer *) data != NULL;
}

static void
test_wait_async (void)
{
  g_autoptr(QStoreChangeFeed) feed = NULL;
  g_autoptr(GAsyncResult) result = NULL;
  g_autoptr(GError) error = NULL;
  Server server = { 0 };
  Heard heard;
  Count sets = { &heard, 1 };
  guint64 tx;

  /* Without a server and without waiting: the same error as in sync. */
  qstore_change_feed_new_for_bus (NULL, "later", QSTORE_BUS_FOLLOW_NONE, NULL, made_cb, &result);
  g_assert_true (wait_for (is_set, &result, 10));
  g_assert_null (qstore_change_feed_new_for_bus_finish (result, &error));
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_NOT_FOUND);
  g_clear_error (&error);
  g_clear_object (&result);

  qstore_change_feed_new_for_bus (NULL, "later", QSTORE_BUS_FOLLOW_WAIT, NULL, made_cb, &result);
  g_assert_true (wait_for (is_set, &result, 10));
  feed = qstore_change_feed_new_for_bus_finish (result, &error);
  g_assert_no_error (error);
  g_assert_null (qstore_change_feed_get_server_owner (feed));
  heard_listen (&heard, feed);

  server_new (&server, "later");
  g_assert_true (wait_for (has_owner, feed, 20));
  tx = execute (&server, "INSERT INTO t VALUES (1, 'a', NULL, NULL)");
  g_assert_true (wait_for (has_sets, &sets, 20));
  g_assert_cmpuint (qstore_change_set_get_tx_id (set_at (&heard, 0)), ==, tx);
  /* The first server is no restart. */
  g_assert_cmpuint (heard.gaps->len, ==, 0);

  heard_clear (&heard);
  g_clear_object (&feed);
  server_free (&server);
}

/* Hostile servers, served from here */

typedef struct
{
  GDBusConnection *connection;
  guint            owner_id;
  guint            object_id;
  gboolean         named;
  guint            n_subscribed;
} Fake;

static void
fake_method (GDBusConnection       *connection,
             const char            *sender,
             const char            *path,
             const char            *interface,
             const char            *method,
             GVariant              *parameters,
             GDBusMethodInvocation *invocation,
             gpointer               data)
{
  Fake *fake = data;

  fake->n_subscribed += g_str_equal (method, "Subscribe");
  g_dbus_method_invocation_return_value (invocation, NULL);
}

static void
fake_named (GDBusConnection *connection,
            const char      *name,
            gpointer         data)
{
  ((Fake *) data)->named = TRUE;
}

static gboolean
fake_is_named (gpointer data)
{
  return ((Fake *) data)->named;
}

/* Owns org.qstore.Server.@id and exports the interface of @xml. */
static void
fake_start (Fake       *fake,
            const char *id,
            const char *xml)
{
  static const GDBusInterfaceVTable vtable = { fake_method, NULL, NULL, { 0 } };
  g_autoptr(GError) error = NULL;
  g_autoptr(GDBusNodeInfo) node = g_dbus_node_info_new_for_xml (xml, &error);
  g_autofree char *address = g_dbus_address_get_for_bus_sync (G_BUS_TYPE_SESSION, NULL, &error);
  g_autofree char *name = g_strconcat (QSTORE_SERVER_NAME_PREFIX, id, NULL);

  g_assert_no_error (error);
  fake->connection = g_dbus_connection_new_for_address_sync (address,
                                                             G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT |
                                                             G_DBUS_CONNECTION_FLAGS_MESSAGE_BUS_CONNECTION,
                                                             NULL, NULL, &error);
  g_assert_no_error (error);
  fake->object_id = g_dbus_connection_register_object (fake->connection, QSTORE_SERVER_PATH,
                                                       node->interfaces[0], &vtable, fake, NULL,
                                                       &error);
  g_assert_no_error (error);
  fake->owner_id = g_bus_own_name_on_connection (fake->connection, name, G_BUS_NAME_OWNER_FLAGS_NONE,
                                                 fake_named, NULL, fake, NULL);
  g_assert_true (wait_for (fake_is_named, fake, 10));
}

static void
fake_stop (Fake *fake)
{
  g_bus_unown_name (fake->owner_id);
  g_dbus_connection_unregister_object (fake->connection, fake->object_id);
  g_dbus_connection_close_sync (fake->connection, NULL, NULL);
  g_clear_object (&fake->connection);
}

static void
fake_emit (Fake       *fake,
           const char *member,
           GVariant   *parameters)
{
  g_autoptr(GError) error = NULL;

  g_dbus_connection_emit_signal (fake->connection, NULL, QSTORE_SERVER_PATH, QSTORE_SERVER_INTERFACE,
                                 member, parameters, &error);
  g_assert_no_error (error);
  g_dbus_connection_flush_sync (fake->connection, NULL, &error);
  g_assert_no_error (error);
}

static void
fake_commit (Fake       *fake,
             guint64     tx,
             guint       n,
             const char *rows)
{
  const char *tables[] = { "main.t", NULL };

  fake_emit (fake, "Committed", g_variant_new ("(tx^asu)", tx, g_get_real_time (), tables, n));
  if (rows != NULL)
    fake_emit (fake, "CommittedRows", g_variant_new ("(tuus)", tx, 0, n, rows));
}

static char *
server1_xml (void)
{
  g_autoptr(GError) error = NULL;
  char *xml = NULL;

  g_file_get_contents (g_getenv ("QSTORE_SERVER_XML"), &xml, NULL, &error);
  g_assert_no_error (error);
  return xml;
}

static QStoreChangeFeed *
make_feed (const char  *id,
           GError     **error)
{
  g_autoptr(GAsyncResult) result = NULL;

  /* Async: the fake answers from this thread's main loop. */
  qstore_change_feed_new_for_bus (NULL, id, QSTORE_BUS_FOLLOW_NONE, NULL, made_cb, &result);
  g_assert_true (wait_for (is_set, &result, 10));
  return qstore_change_feed_new_for_bus_finish (result, error);
}

static gboolean
fake_subscribed (gpointer data)
{
  return ((Fake *) data)->n_subscribed > 0;
}

static void
test_hostile (void)
{
  g_autofree char *xml = server1_xml ();
  g_autoptr(QStoreChangeFeed) feed = NULL;
  g_autoptr(GError) error = NULL;
  Fake fake = { 0 };
  Heard heard;
  Count sets = { &heard, 1 };
  Count gaps = { &heard, 1 };
  const char *row = "[{\"table\":\"main.t\",\"op\":\"insert\",\"old\":null,\"new\":[1,\"a\"]}]";
  static const char * const bad_rows[] = {
    "this is not JSON",
    "{\"table\":\"main.t\"}",
    "[{\"table\":\"main.t\",\"op\":\"explode\",\"old\":null,\"new\":[1]}]",
    "[{\"table\":\"main.t\",\"op\":\"insert\",\"old\":null,\"new\":[true]}]",
    "[{\"table\":\"main.t\",\"op\":\"delete\",\"old\":null,\"new\":[1]}]",
    "[{\"table\":\"nodot\",\"op\":\"insert\",\"old\":null,\"new\":[1]}]",
    "[{\"table\":\"main.t\",\"op\":\"insert\",\"old\":null,\"new\":[{\"$blob\":1}]}]",
  };
  guint64 tx = 1;

  fake_start (&fake, "hostile", xml);
  feed = make_feed ("hostile", &error);
  g_assert_no_error (error);
  g_assert_true (wait_for (fake_subscribed, &fake, 10));
  heard_listen (&heard, feed);

  /* A good one: tx 1. */
  fake_commit (&fake, tx, 1, row);
  g_assert_true (wait_for (has_sets, &sets, 10));

  /* An impostor that does not own the name is not heard, even when the
   * connection the feed uses listens to every sender. */
  {
    g_autoptr(GDBusConnection) shared = g_bus_get_sync (G_BUS_TYPE_SESSION, NULL, NULL);
    Fake impostor = { 0 };
    guint n_heard = 0;
    guint listener = g_dbus_connection_signal_subscribe (shared, NULL, QSTORE_SERVER_INTERFACE,
                                                         "Committed", QSTORE_SERVER_PATH, NULL,
                                                         G_DBUS_SIGNAL_FLAGS_NONE, count_signal,
                                                         &n_heard, NULL);

    fake_start (&impostor, "impostor", xml);
    fake_commit (&impostor, 2, 0, NULL);
    g_assert_true (wait_for (is_counted, &n_heard, 10));
    spin (100);
    g_assert_cmpuint (heard.sets->len, ==, 1);
    g_dbus_connection_signal_unsubscribe (shared, listener);
    fake_stop (&impostor);
  }

  /* Transaction 2 skipped: a gap, then 3. */
  tx = 3;
  fake_commit (&fake, tx, 1, row);
  sets.n = 2;
  g_assert_true (wait_for (has_sets, &sets, 10));
  g_assert_cmpuint (heard.gaps->len, ==, 1);
  g_assert_cmpstr (g_ptr_array_index (heard.gaps, 0), ==, "transactions 2 to 2 were not seen");
  g_assert_cmpstr (heard.order->str, ==, "cgc");
  g_assert_cmpuint (qstore_change_feed_get_position (feed), ==, 3);

  /* Rows that do not parse, or do not say what they should: each a gap
   * naming the transaction, and the feed goes on. */
  for (guint i = 0; i < G_N_ELEMENTS (bad_rows); i++)
    {
      g_autofree char *expected = NULL;

      fake_commit (&fake, ++tx, 1, bad_rows[i]);
      gaps.n = 2 + i;
      g_assert_true (wait_for (has_gaps, &gaps, 10));
      expected = g_strdup_printf ("the rows of transaction %" G_GUINT64_FORMAT " from "
                                  "org.qstore.Server.hostile do not parse", tx);
      g_assert_true (g_str_has_prefix (g_ptr_array_index (heard.gaps, 1 + i), expected));
    }
  g_assert_cmpuint (heard.sets->len, ==, 2);
  /* After those gaps the next transaction is told, whatever its id. */
  fake_commit (&fake, tx += 5, 1, row);
  sets.n = 3;
  g_assert_true (wait_for (has_sets, &sets, 10));
  g_assert_cmpuint (heard.gaps->len, ==, 1 + G_N_ELEMENTS (bad_rows));

  /* Signals of the wrong type. */
  fake_emit (&fake, "Committed", g_variant_new ("(s)", "boom"));
  gaps.n = heard.gaps->len + 1;
  g_assert_true (wait_for (has_gaps, &gaps, 10));
  g_assert_nonnull (strstr (g_ptr_array_index (heard.gaps, heard.gaps->len - 1),
                            "sent Committed as (s), not (txasu)"));
  fake_emit (&fake, "Gap", g_variant_new ("(ss)", "a", "b"));
  gaps.n++;
  g_assert_true (wait_for (has_gaps, &gaps, 10));

  /* Rows that do not add up: more than Committed said. */
  fake_commit (&fake, ++tx, 1, NULL);
  fake_emit (&fake, "CommittedRows", g_variant_new ("(tuus)", tx, 0, 1,
                                                    "[{\"table\":\"main.t\",\"op\":\"insert\",\"old\":null,\"new\":[1]},"
                                                    "{\"table\":\"main.t\",\"op\":\"insert\",\"old\":null,\"new\":[2]}]"));
  gaps.n++;
  g_assert_true (wait_for (has_gaps, &gaps, 10));
  g_assert_nonnull (strstr (g_ptr_array_index (heard.gaps, heard.gaps->len - 1), "do not add up"));

  /* A transaction cut short by the next Committed. */
  fake_commit (&fake, ++tx, 3, NULL);
  fake_emit (&fake, "CommittedRows", g_variant_new ("(tuus)", tx, 0, 3, row));
  fake_commit (&fake, ++tx, 0, NULL);
  sets.n = 4;
  g_assert_true (wait_for (has_sets, &sets, 10));
  g_assert_nonnull (strstr (g_ptr_array_index (heard.gaps, heard.gaps->len - 1), "was cut short"));
  g_assert_cmpuint (qstore_change_set_get_tx_id (set_at (&heard, 3)), ==, tx);

  /* The server's own Gap is told as it is. */
  fake_emit (&fake, "Gap", g_variant_new ("(sx)", "a signal could not be sent", (gint64) 12));
  gaps.n = heard.gaps->len + 1;
  g_assert_true (wait_for (has_gaps, &gaps, 10));
  g_assert_cmpstr (g_ptr_array_index (heard.gaps, heard.gaps->len - 1), ==, "a signal could not be sent");
  g_assert_cmpint (g_array_index (heard.gap_ms, gint64, heard.gaps->len - 1), ==, 12);
  g_assert_cmpuint (heard.failures->len, ==, 0);

  heard_clear (&heard);
  g_clear_object (&feed);
  fake_stop (&fake);
}

/* version: a server of another interface version */

static void
test_version (void)
{
  g_autofree char *xml = server1_xml ();
  g_autofree char *other_signal = NULL;
  g_autoptr(GString) renamed = g_string_new (xml);
  g_autoptr(QStoreChangeFeed) feed = NULL;
  g_autoptr(GError) error = NULL;
  Fake fake = { 0 };

  g_string_replace (renamed, "org.qstore.Server1", "org.qstore.Server2", 0);
  fake_start (&fake, "newer", renamed->str);
  feed = make_feed ("newer", &error);
  g_assert_null (feed);
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_UNSUPPORTED);
  g_assert_nonnull (strstr (error->message, "speaks org.qstore.Server2, not org.qstore.Server1"));
  g_assert_cmpuint (fake.n_subscribed, ==, 0);
  g_clear_error (&error);
  fake_stop (&fake);

  /* The same name, but Committed carries other types. */
  g_string_assign (renamed, xml);
  g_string_replace (renamed, "<arg name=\"row_count\" type=\"u\"/>\n    </signal>",
                    "<arg name=\"row_count\" type=\"t\"/>\n    </signal>", 1);
  g_assert_cmpstr (renamed->str, !=, xml);
  fake_start (&fake, "changed", renamed->str);
  feed = make_feed ("changed", &error);
  g_assert_null (feed);
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_UNSUPPORTED);
  g_assert_nonnull (strstr (error->message, "no signal Committed(txasu)"));
  fake_stop (&fake);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);
  qstore_tool = g_getenv ("QSTORE_TOOL");
  g_assert_nonnull (qstore_tool);

  g_test_add_func ("/bus-feed/errors", test_errors);
  g_test_add_func ("/bus-feed/follow", test_follow);
  g_test_add_func ("/bus-feed/restart", test_restart);
  g_test_add_func ("/bus-feed/wait-async", test_wait_async);
  g_test_add_func ("/bus-feed/hostile", test_hostile);
  g_test_add_func ("/bus-feed/version", test_version);
  return g_test_run ();
}
