/* test-inspector-events.c: the Events page, following a running server
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Usage: test-inspector-events [--tap] -p /inspector-events/MODE PATH-TO-QSTORE
 *
 *   stream        the window finds the server of the store it opens; its
 *                 commits show with their rows; pause holds them, resume
 *                 lists them; the kind and table filters hide the others;
 *                 Export writes JSON lines; max-events bounds the list
 *   follow        the list keeps its newest event in sight, unless the
 *                 reader scrolled up
 *   restart       the server is killed: the page says so; it starts
 *                 again: the page follows it by itself, after a gap row
 *   connect       a server of another store, picked from Connect to Server…
 *   skipped       a server (played by the test) skips a transaction and
 *                 sends rows that do not parse: each is a gap row
 *   screenshots   the page with live events at 360 and 1,400 px, light
 *                 and dark
 *
 * Each runs on its own session bus (run-gui-test.sh); the servers are
 * `qstore serve` processes, written to through their Execute method as
 * the server is the store's one writer.
 */
#include "config.h"

#include <adwaita.h>
#include <json-glib/json-glib.h>
#include <signal.h>

#include "inspector-window-test-util.h"
#include "qstore-inspector-application.h"
#include "qstore-inspector-event.h"
#include "qstore-inspector-names.h"

static const char *qstore_path;
static GApplication *application;

/* Servers */

typedef struct
{
  char        *uri;
  char        *name;
  GSubprocess *process;
} Server;

static void
run_sql (const char *uri,
         const char *sql)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GSubprocess) process = g_subprocess_new (G_SUBPROCESS_FLAGS_STDOUT_SILENCE, &error,
                                                     qstore_path, "--store", uri, "sql", sql, NULL);

  g_assert_no_error (error);
  g_subprocess_wait_check (process, NULL, &error);
  g_assert_no_error (error);
}

static gboolean
name_owned (const char *name)
{
  g_autoptr(GDBusConnection) bus = g_bus_get_sync (G_BUS_TYPE_SESSION, NULL, NULL);
  g_autoptr(GVariant) reply = NULL;
  gboolean owned = FALSE;

  reply = g_dbus_connection_call_sync (bus, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                                       "org.freedesktop.DBus", "NameHasOwner", g_variant_new ("(s)", name),
                                       G_VARIANT_TYPE ("(b)"), G_DBUS_CALL_FLAGS_NONE, -1, NULL, NULL);
  if (reply != NULL)
    g_variant_get (reply, "(b)", &owned);
  return owned;
}

static gboolean
server_up (gpointer data)
{
  Server *server = data;

  /* A server that stopped has no identifier any more: it failed. */
  g_assert_nonnull (g_subprocess_get_identifier (server->process));
  return name_owned (server->name);
}

/* `qstore serve` on @uri, as @id or the id it derives when %NULL. */
static void
server_start (Server     *server,
              const char *uri,
              const char *id)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *title = qstore_inspector_store_title (uri);

  if (server->uri == NULL)
    server->uri = g_strdup (uri);
  if (server->name == NULL)
    server->name = g_strconcat ("org.qstore.Server.", id ? id : title, NULL);
  if (id != NULL)
    server->process = g_subprocess_new (G_SUBPROCESS_FLAGS_NONE, &error, qstore_path, "--store", uri,
                                        "serve", "--allow-writes", "--id", id, NULL);
  else
    server->process = g_subprocess_new (G_SUBPROCESS_FLAGS_NONE, &error, qstore_path, "--store", uri,
                                        "serve", "--allow-writes", NULL);
  g_assert_no_error (error);
  test_wait (server_up, server, 30);
}

static gboolean
process_gone (gpointer data)
{
  return g_subprocess_get_identifier (data) == NULL;
}

static void
server_kill (Server *server)
{
  g_subprocess_send_signal (server->process, SIGKILL);
  g_subprocess_wait (server->process, NULL, NULL);
  g_clear_object (&server->process);
}

static void
server_stop (Server *server)
{
  if (server->process != NULL)
    {
      g_subprocess_send_signal (server->process, SIGTERM);
      test_wait (process_gone, server->process, 30);
    }
  g_clear_object (&server->process);
  g_clear_pointer (&server->uri, g_free);
  g_clear_pointer (&server->name, g_free);
}

/* Commits @sql through the server. */
static void
execute (Server     *server,
         const char *sql)
{
  g_autoptr(GDBusConnection) bus = g_bus_get_sync (G_BUS_TYPE_SESSION, NULL, NULL);
  g_autoptr(GVariant) reply = NULL;
  g_autoptr(GError) error = NULL;

  reply = g_dbus_connection_call_sync (bus, server->name, "/org/qstore/Server", "org.qstore.Server1",
                                       "Execute", g_variant_new ("(s)", sql), G_VARIANT_TYPE ("(tt)"),
                                       G_DBUS_CALL_FLAGS_NONE, 10000, NULL, &error);
  g_assert_no_error (error);
}

/* Widgets */

/* The sidebar row named @name (rows are named as their pages). */
static GtkWidget *
find_row (GtkWidget  *root,
                   const char *name)
{
  if (GTK_IS_LIST_BOX_ROW (root) && g_str_equal (gtk_widget_get_name (root), name))
    return root;
  for (GtkWidget *child = gtk_widget_get_first_child (root); child != NULL;
       child = gtk_widget_get_next_sibling (child))
    {
      GtkWidget *found = find_row (child, name);

      if (found != NULL)
        return found;
    }
  return NULL;
}

/* Windows */

static QStoreInspectorWindow *
open_window (const char *uri,
             int         width,
             int         height)
{
  QStoreInspectorWindow *window = qstore_inspector_window_new (ADW_APPLICATION (application));

  gtk_window_set_default_size (GTK_WINDOW (window), width, height);
  gtk_window_present (GTK_WINDOW (window));
  qstore_inspector_window_open_uri (window, uri);
  test_wait_ready (window);
  test_run_for (100);
  return window;
}

static void
close_window (QStoreInspectorWindow *window)
{
  gtk_window_destroy (GTK_WINDOW (window));
  test_run_for (100);
}

static gboolean
page_connected (gpointer data)
{
  return qstore_inspector_events_page_get_state (data) == QSTORE_INSPECTOR_EVENTS_CONNECTED;
}

static gboolean
page_gone (gpointer data)
{
  return qstore_inspector_events_page_get_state (data) == QSTORE_INSPECTOR_EVENTS_GONE;
}

static guint
count_kind (GListModel               *model,
            QStoreInspectorEventKind  kind)
{
  guint n = 0;

  for (guint i = 0; i < g_list_model_get_n_items (model); i++)
    {
      g_autoptr(QStoreInspectorEvent) event = g_list_model_get_item (model, i);

      n += qstore_inspector_event_get_kind (event) == kind;
    }
  return n;
}

static gboolean
has_gap (gpointer data)
{
  return count_kind (data, QSTORE_INSPECTOR_EVENT_GAP) > 0;
}

typedef struct
{
  GListModel *model;
  guint       n;
} Count;

static gboolean
has_commits (gpointer data)
{
  Count *count = data;

  return count_kind (count->model, QSTORE_INSPECTOR_EVENT_COMMITTED) >= count->n;
}

static void
wait_commits (QStoreInspectorEventsPage *page,
              guint                      n)
{
  Count count = { qstore_inspector_events_page_get_events (page), n };

  test_wait (has_commits, &count, 20);
}

typedef struct
{
  QStoreInspectorEventsPage *page;
  guint                      n;
} Held;

static gboolean
has_held (gpointer data)
{
  Held *held = data;

  return qstore_inspector_events_page_get_n_held (held->page) >= held->n;
}

/* A store with two tables, its server, and a window on it that found it. */
static QStoreInspectorWindow *
set_up (const char *dir,
        Server     *server,
        int         width,
        int         height)
{
  g_autofree char *uri = test_provider_uri (dir, "shop");
  g_autofree char *spelled = NULL;
  QStoreInspectorWindow *window;
  QStoreInspectorEventsPage *page;

  run_sql (uri, "CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL)");
  run_sql (uri, "CREATE TABLE audit (id INTEGER PRIMARY KEY, note TEXT)");
  server_start (server, uri, NULL);

  /* Spelled otherwise than the server was told: still the same store. */
  spelled = g_strconcat (uri, "/", NULL);
  window = open_window (spelled, width, height);
  page = qstore_inspector_window_get_events_page (window);
  test_wait (page_connected, page, 20);
  g_assert_cmpstr (qstore_inspector_events_page_get_server (page), ==, server->name);
  test_show_page (window, "events");
  g_assert_cmpstr (qstore_inspector_window_get_page (window), ==, "events");
  return window;
}

/* stream */

static void
test_stream (void)
{
  g_autofree char *dir = test_make_tmp_dir ("qstore-events-XXXXXX");
  g_autofree char *export_path = g_build_filename (dir, "events.jsonl", NULL);
  g_autoptr(GFile) export = g_file_new_for_path (export_path);
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autofree char *contents = NULL;
  g_auto(GStrv) lines = NULL;
  Server server = { 0 };
  QStoreInspectorWindow *window = set_up (dir, &server, 1000, 700);
  QStoreInspectorEventsPage *page = qstore_inspector_window_get_events_page (window);
  GListModel *events = qstore_inspector_events_page_get_events (page);
  GListModel *shown = qstore_inspector_events_page_get_shown (page);
  Held held = { page, 2 };
  guint n, n_exported = 0, n_checked = 0;

  /* Commits show as they happen, with their rows. */
  execute (&server, "INSERT INTO items VALUES (1, 'pear')");
  execute (&server, "INSERT INTO items VALUES (2, 'fig'), (3, 'kiwi')");
  execute (&server, "UPDATE items SET name = 'plum' WHERE id = 1");
  wait_commits (page, 3);
  g_assert_cmpuint (count_kind (events, QSTORE_INSPECTOR_EVENT_COMMITTED), ==, 3);
  test_run_for (200);
  for (guint i = 0; i < g_list_model_get_n_items (shown); i++)
    {
      g_autoptr(QStoreInspectorEvent) event = g_list_model_get_item (shown, i);

      if (qstore_inspector_event_get_kind (event) != QSTORE_INSPECTOR_EVENT_COMMITTED)
        continue;
      qstore_inspector_events_page_select (page, i);
      if (qstore_inspector_event_get_n_rows (event) == 2)
        {
          g_assert_nonnull (strstr (qstore_inspector_events_page_get_details (page),
                                    "insert into main.items: [2,\"fig\"]"));
          g_assert_nonnull (strstr (qstore_inspector_events_page_get_details (page), "kiwi"));
          n_checked++;
        }
      else if (strstr (qstore_inspector_events_page_get_details (page), "update") != NULL)
        {
          g_assert_nonnull (strstr (qstore_inspector_events_page_get_details (page),
                                    "[1,\"pear\"] → [1,\"plum\"]"));
          n_checked++;
        }
    }
  g_assert_cmpuint (n_checked, ==, 2);

  /* Paused, the list does not grow; resumed, it lists what came. */
  n = g_list_model_get_n_items (events);
  qstore_inspector_events_page_set_paused (page, TRUE);
  execute (&server, "INSERT INTO items VALUES (4, 'lime')");
  execute (&server, "INSERT INTO audit VALUES (1, 'restocked')");
  test_wait (has_held, &held, 20);
  test_run_for (200);
  g_assert_cmpuint (g_list_model_get_n_items (events), ==, n);
  qstore_inspector_events_page_set_paused (page, FALSE);
  g_assert_cmpuint (qstore_inspector_events_page_get_n_held (page), ==, 0);
  g_assert_cmpuint (count_kind (events, QSTORE_INSPECTOR_EVENT_COMMITTED), ==, 5);

  /* The kind filter hides the other kinds. */
  qstore_inspector_events_page_set_kind_filter (page, QSTORE_INSPECTOR_EVENT_GAP);
  g_assert_cmpuint (g_list_model_get_n_items (shown), ==, 0);
  qstore_inspector_events_page_set_kind_filter (page, QSTORE_INSPECTOR_EVENT_COMMITTED);
  g_assert_cmpuint (g_list_model_get_n_items (shown), ==, 5);
  g_assert_cmpuint (count_kind (shown, QSTORE_INSPECTOR_EVENT_COMMITTED), ==, 5);

  /* The table filter: audit's commit only. */
  qstore_inspector_events_page_set_table_filter (page, "AUD");
  g_assert_cmpuint (g_list_model_get_n_items (shown), ==, 1);

  /* Export writes what shows, one JSON object a line. */
  qstore_inspector_events_page_set_table_filter (page, NULL);
  g_assert_true (qstore_inspector_events_page_export (page, export, &error));
  g_assert_no_error (error);
  g_assert_true (g_file_get_contents (export_path, &contents, NULL, NULL));
  lines = g_strsplit (contents, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    {
      JsonObject *object;

      if (*lines[i] == '\0')
        {
          g_assert_null (lines[i + 1]);
          break;
        }
      json_parser_load_from_data (parser, lines[i], -1, &error);
      g_assert_no_error (error);
      g_assert_true (JSON_NODE_HOLDS_OBJECT (json_parser_get_root (parser)));
      object = json_node_get_object (json_parser_get_root (parser));
      g_assert_cmpstr (json_object_get_string_member (object, "kind"), ==, "committed");
      g_assert_cmpint (json_object_get_int_member (object, "tx"), >, 0);
      g_assert_cmpint (json_array_get_length (json_object_get_array_member (object, "rows")), ==,
                       json_object_get_int_member (object, "row_count"));
      n_exported++;
    }
  g_assert_cmpuint (n_exported, ==, 5);
  /* Export into a folder that is not there says so. */
  {
    g_autofree char *bad_path = g_build_filename (dir, "missing", "events.jsonl", NULL);
    g_autoptr(GFile) bad = g_file_new_for_path (bad_path);
    g_autoptr(GError) bad_error = NULL;

    g_assert_false (qstore_inspector_events_page_export (page, bad, &bad_error));
    g_assert_error (bad_error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND);
  }

  /* max-events keeps the newest. */
  qstore_inspector_events_page_set_kind_filter (page, -1);
  g_object_set (page, "max-events", 2, NULL);
  g_assert_cmpuint (g_list_model_get_n_items (events), ==, 2);
  execute (&server, "INSERT INTO items VALUES (5, 'date')");
  wait_commits (page, 2);
  test_run_for (200);
  g_assert_cmpuint (g_list_model_get_n_items (events), ==, 2);
  {
    g_autoptr(QStoreInspectorEvent) last = g_list_model_get_item (events, 1);
    g_autofree char *json = qstore_inspector_event_to_json (last);

    g_assert_nonnull (strstr (json, "date"));
  }

  close_window (window);
  server_stop (&server);
  test_remove_tree (dir);
}

/* follow */

static GtkAdjustment *
list_adjustment (QStoreInspectorEventsPage *page)
{
  GtkWidget *view = test_find_by_type (GTK_WIDGET (page), GTK_TYPE_COLUMN_VIEW);
  GtkWidget *scroller = gtk_widget_get_ancestor (view, GTK_TYPE_SCROLLED_WINDOW);

  return gtk_scrolled_window_get_vadjustment (GTK_SCROLLED_WINDOW (scroller));
}

static gboolean
at_end (GtkAdjustment *adjustment)
{
  return gtk_adjustment_get_value (adjustment) >=
         gtk_adjustment_get_upper (adjustment) - gtk_adjustment_get_page_size (adjustment) - 1;
}

static void
test_follow (void)
{
  g_autofree char *dir = test_make_tmp_dir ("qstore-events-XXXXXX");
  Server server = { 0 };
  QStoreInspectorWindow *window = set_up (dir, &server, 900, 500);
  QStoreInspectorEventsPage *page = qstore_inspector_window_get_events_page (window);
  GtkAdjustment *adjustment = list_adjustment (page);

  /* More than the list shows: it keeps the newest in sight. */
  for (guint i = 1; i <= 30; i++)
    {
      g_autofree char *sql = g_strdup_printf ("INSERT INTO items VALUES (%u, 'item %u')", i, i);

      execute (&server, sql);
    }
  wait_commits (page, 30);
  test_settle (GTK_WIDGET (window));
  g_assert_cmpfloat (gtk_adjustment_get_upper (adjustment), >, gtk_adjustment_get_page_size (adjustment));
  g_assert_true (at_end (adjustment));
  g_assert_true (qstore_inspector_events_page_is_following (page));

  /* Scrolled up, it stays where the reader is. */
  gtk_adjustment_set_value (adjustment, 0);
  g_assert_false (qstore_inspector_events_page_is_following (page));
  execute (&server, "INSERT INTO items VALUES (31, 'item 31')");
  wait_commits (page, 31);
  test_settle (GTK_WIDGET (window));
  g_assert_cmpfloat (gtk_adjustment_get_value (adjustment), ==, 0);

  /* Back at the end, it follows again. */
  gtk_adjustment_set_value (adjustment, gtk_adjustment_get_upper (adjustment));
  g_assert_true (qstore_inspector_events_page_is_following (page));
  execute (&server, "INSERT INTO items VALUES (32, 'item 32')");
  wait_commits (page, 32);
  test_settle (GTK_WIDGET (window));
  g_assert_true (at_end (adjustment));

  close_window (window);
  server_stop (&server);
  test_remove_tree (dir);
}

/* restart */

static gboolean
has_gap_then_commit (gpointer data)
{
  GListModel *events = data;
  gboolean gap = FALSE;

  for (guint i = 0; i < g_list_model_get_n_items (events); i++)
    {
      g_autoptr(QStoreInspectorEvent) event = g_list_model_get_item (events, i);

      if (qstore_inspector_event_get_kind (event) == QSTORE_INSPECTOR_EVENT_GAP)
        gap = TRUE;
      else if (gap && qstore_inspector_event_get_kind (event) == QSTORE_INSPECTOR_EVENT_COMMITTED)
        return TRUE;
    }
  return FALSE;
}

static void
test_restart (void)
{
  g_autofree char *dir = test_make_tmp_dir ("qstore-events-XXXXXX");
  Server server = { 0 };
  QStoreInspectorWindow *window = set_up (dir, &server, 1000, 700);
  QStoreInspectorEventsPage *page = qstore_inspector_window_get_events_page (window);
  GListModel *events = qstore_inspector_events_page_get_events (page);

  execute (&server, "INSERT INTO items VALUES (1, 'pear')");
  wait_commits (page, 1);
  g_assert_cmpuint (count_kind (events, QSTORE_INSPECTOR_EVENT_GAP), ==, 0);

  server_kill (&server);
  test_wait (page_gone, page, 20);
  g_assert_nonnull (strstr (qstore_inspector_events_page_get_status (page), "went away"));
  /* It stays in the sidebar, and keeps what it listed. */
  g_assert_cmpstr (qstore_inspector_window_get_page (window), ==, "events");
  g_assert_cmpuint (count_kind (events, QSTORE_INSPECTOR_EVENT_COMMITTED), ==, 1);

  server_start (&server, server.uri, NULL);
  test_wait (page_connected, page, 20);
  g_assert_null (qstore_inspector_events_page_get_status (page));
  /* Listed within a frame of the reconnection. */
  test_wait (has_gap, events, 5);
  g_assert_cmpuint (count_kind (events, QSTORE_INSPECTOR_EVENT_GAP), ==, 1);
  execute (&server, "INSERT INTO items VALUES (2, 'fig')");
  test_wait (has_gap_then_commit, events, 20);

  close_window (window);
  server_stop (&server);
  test_remove_tree (dir);
}

/* connect */

static gboolean
list_has_row (gpointer data)
{
  return test_find_by_class (data, "boxed-list") != NULL &&
         gtk_widget_get_first_child (test_find_by_class (data, "boxed-list")) != NULL;
}

static void
test_connect (void)
{
  g_autofree char *dir = test_make_tmp_dir ("qstore-events-XXXXXX");
  g_autofree char *mine = test_provider_uri (dir, "mine");
  g_autofree char *other = test_provider_uri (dir, "other");
  Server server = { 0 };
  QStoreInspectorWindow *window;
  QStoreInspectorEventsPage *page;
  GtkWindow *dialog;
  GtkWidget *list;

  run_sql (mine, "CREATE TABLE t (id INTEGER PRIMARY KEY)");
  run_sql (other, "CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT)");
  server_start (&server, other, "elsewhere");

  /* No server serves this store: no Events page. */
  window = open_window (mine, 1000, 700);
  page = qstore_inspector_window_get_events_page (window);
  test_run_for (300);
  g_assert_null (qstore_inspector_events_page_get_server (page));
  g_assert_cmpint (qstore_inspector_events_page_get_state (page), ==, QSTORE_INSPECTOR_EVENTS_NONE);
  g_assert_false (gtk_widget_get_visible (find_row (GTK_WIDGET (window), "events")));

  /* What is no bus name is refused, and said so. */
  qstore_inspector_events_page_set_server (page, "not a name");
  g_assert_cmpint (qstore_inspector_events_page_get_state (page), ==, QSTORE_INSPECTOR_EVENTS_GONE);
  g_assert_nonnull (strstr (qstore_inspector_events_page_get_status (page), "“not a name” is not"));
  qstore_inspector_events_page_set_server (page, NULL);

  gtk_widget_activate_action (GTK_WIDGET (window), "win.connect-server", NULL);
  dialog = NULL;
  for (GList *l = gtk_window_list_toplevels (); l != NULL; l = g_list_delete_link (l, l))
    if (ADW_IS_MESSAGE_DIALOG (l->data))
      dialog = l->data;
  g_assert_nonnull (dialog);
  test_wait (list_has_row, dialog, 10);
  list = test_find_by_class (GTK_WIDGET (dialog), "boxed-list");
  g_assert_cmpstr (gtk_widget_get_name (gtk_widget_get_first_child (list)), ==, "org.qstore.Server.elsewhere");
  g_signal_emit_by_name (list, "row-activated", gtk_widget_get_first_child (list));
  test_run_for (100);

  g_assert_cmpstr (qstore_inspector_events_page_get_server (page), ==, "org.qstore.Server.elsewhere");
  test_wait (page_connected, page, 20);
  g_assert_true (gtk_widget_get_visible (find_row (GTK_WIDGET (window), "events")));
  test_show_page (window, "events");
  g_assert_cmpstr (qstore_inspector_window_get_page (window), ==, "events");
  execute (&server, "INSERT INTO items VALUES (1, 'pear')");
  wait_commits (page, 1);

  close_window (window);
  server_stop (&server);
  test_remove_tree (dir);
}

/* skipped: a server that skips a transaction, played from here */

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
  /* It plays only what following needs: Subscribe and Unsubscribe. */
  if (g_str_equal (method, "Subscribe") || g_str_equal (method, "Unsubscribe"))
    g_dbus_method_invocation_return_value (invocation, NULL);
  else
    g_dbus_method_invocation_return_dbus_error (invocation, "org.qstore.Server1.Error.NotSupported",
                                                "This test server only sends signals");
}

static void
fake_commit (GDBusConnection *connection,
             guint64          tx,
             const char      *rows)
{
  const char *tables[] = { "main.items", NULL };
  g_autoptr(GError) error = NULL;

  g_dbus_connection_emit_signal (connection, NULL, "/org/qstore/Server", "org.qstore.Server1", "Committed",
                                 g_variant_new ("(tx^asu)", tx, g_get_real_time (), tables, 1), &error);
  g_assert_no_error (error);
  g_dbus_connection_emit_signal (connection, NULL, "/org/qstore/Server", "org.qstore.Server1", "CommittedRows",
                                 g_variant_new ("(tuus)", tx, 0, 1, rows), &error);
  g_assert_no_error (error);
  g_dbus_connection_flush_sync (connection, NULL, &error);
  g_assert_no_error (error);
}

static gboolean
has_gaps (gpointer data)
{
  return count_kind (data, QSTORE_INSPECTOR_EVENT_GAP) >= 2;
}

static gboolean
has_changed (gpointer data)
{
  return count_kind (data, QSTORE_INSPECTOR_EVENT_CHANGED) > 0;
}

static void
test_skipped (void)
{
  static const GDBusInterfaceVTable vtable = { fake_method, NULL, NULL, { 0 } };
  const char *row = "[{\"table\":\"main.items\",\"op\":\"insert\",\"old\":null,\"new\":[1,\"pear\"]}]";
  g_autofree char *dir = test_make_tmp_dir ("qstore-events-XXXXXX");
  g_autofree char *uri = test_provider_uri (dir, "shop");
  g_autofree char *xml = NULL;
  g_autofree char *address = NULL;
  g_autoptr(GDBusNodeInfo) node = NULL;
  g_autoptr(GDBusConnection) fake = NULL;
  g_autoptr(GError) error = NULL;
  QStoreInspectorWindow *window;
  QStoreInspectorEventsPage *page;
  GListModel *events;
  Count count;
  guint object_id;

  g_file_get_contents (g_getenv ("QSTORE_SERVER_XML"), &xml, NULL, &error);
  g_assert_no_error (error);
  node = g_dbus_node_info_new_for_xml (xml, &error);
  g_assert_no_error (error);
  address = g_dbus_address_get_for_bus_sync (G_BUS_TYPE_SESSION, NULL, &error);
  g_assert_no_error (error);
  fake = g_dbus_connection_new_for_address_sync (address,
                                                 G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT |
                                                 G_DBUS_CONNECTION_FLAGS_MESSAGE_BUS_CONNECTION,
                                                 NULL, NULL, &error);
  g_assert_no_error (error);
  object_id = g_dbus_connection_register_object (fake, "/org/qstore/Server", node->interfaces[0], &vtable,
                                                 NULL, NULL, &error);
  g_assert_no_error (error);
  g_bus_own_name_on_connection (fake, "org.qstore.Server.fake", G_BUS_NAME_OWNER_FLAGS_NONE, NULL, NULL,
                                NULL, NULL);

  run_sql (uri, "CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL)");
  window = open_window (uri, 1000, 700);
  page = qstore_inspector_window_get_events_page (window);
  events = qstore_inspector_events_page_get_events (page);
  qstore_inspector_events_page_set_server (page, "org.qstore.Server.fake");
  test_wait (page_connected, page, 20);

  fake_commit (fake, 1, row);
  count = (Count) { events, 1 };
  test_wait (has_commits, &count, 20);
  /* Transaction 2 never comes: a gap, then 3. */
  fake_commit (fake, 3, row);
  count.n = 2;
  test_wait (has_commits, &count, 20);
  g_assert_cmpuint (count_kind (events, QSTORE_INSPECTOR_EVENT_GAP), ==, 1);
  {
    g_autoptr(QStoreInspectorEvent) gap = g_list_model_get_item (events, 1);
    g_autofree char *what = qstore_inspector_event_describe (gap);

    g_assert_cmpint (qstore_inspector_event_get_kind (gap), ==, QSTORE_INSPECTOR_EVENT_GAP);
    g_assert_cmpstr (what, ==, "transactions 2 to 2 were not seen");
  }
  /* Rows that do not parse: a gap, and the page goes on. */
  fake_commit (fake, 4, "[not json");
  test_wait (has_gaps, events, 20);
  g_assert_cmpint (qstore_inspector_events_page_get_state (page), ==, QSTORE_INSPECTOR_EVENTS_CONNECTED);

  /* A live query's event: its heading names the query, which a narrow
   * window's list leaves out. */
  g_dbus_connection_emit_signal (fake, NULL, "/org/qstore/Server", "org.qstore.Server1", "Changed",
                                 g_variant_new ("(ttss)", 7, 4, "[]", "[[1,\"pear\"]]"), &error);
  g_assert_no_error (error);
  test_wait (has_changed, events, 20);
  for (guint i = 0; i < g_list_model_get_n_items (events); i++)
    {
      g_autoptr(QStoreInspectorEvent) event = g_list_model_get_item (events, i);

      if (qstore_inspector_event_get_kind (event) == QSTORE_INSPECTOR_EVENT_CHANGED)
        qstore_inspector_events_page_select (page, i);
    }
  g_assert_cmpstr (qstore_inspector_events_page_get_detail_title (page), ==,
                   "Changed, query 7, transaction 4");

  close_window (window);
  g_dbus_connection_unregister_object (fake, object_id);
  g_dbus_connection_close_sync (fake, NULL, NULL);
  test_remove_tree (dir);
}

/* screenshots */

static gboolean
banner_still (gpointer data)
{
  GtkRevealer *banner = GTK_REVEALER (test_find_by_type (data, GTK_TYPE_REVEALER));

  return gtk_revealer_get_child_revealed (banner) == gtk_revealer_get_reveal_child (banner);
}

/* As test_shoot(), once the banner has shown or gone. */
static void
shoot (QStoreInspectorWindow *window,
       const char            *name,
       int                    width)
{
  test_wait (test_window_ready, window, 30);
  test_wait (banner_still, qstore_inspector_window_get_events_page (window), 10);
  test_shoot (GTK_WIDGET (window), name, width);
}

/* Narrow, Query and Rows give way so that Tables or Reason stays in
 * view. */
static void
assert_columns (QStoreInspectorEventsPage *page,
                int                        width)
{
  GtkWidget *view = test_find_by_type (GTK_WIDGET (page), GTK_TYPE_COLUMN_VIEW);
  GListModel *columns = gtk_column_view_get_columns (GTK_COLUMN_VIEW (view));
  g_autoptr(GString) shown = g_string_new (NULL);

  for (guint i = 0; i < g_list_model_get_n_items (columns); i++)
    {
      g_autoptr(GtkColumnViewColumn) column = g_list_model_get_item (columns, i);

      if (gtk_column_view_column_get_visible (column))
        g_string_append_printf (shown, "%s%s", shown->len > 0 ? "|" : "",
                                gtk_column_view_column_get_title (column));
    }
  g_assert_cmpstr (shown->str, ==, width < 560 ? "Time|Kind|Transaction|Tables or Reason"
                                               : "Time|Kind|Transaction|Query|Rows|Tables or Reason");
}

static void
screenshots_at (int width)
{
  g_autofree char *dir = test_make_tmp_dir ("qstore-events-shots-XXXXXX");
  Server server = { 0 };
  QStoreInspectorWindow *window = set_up (dir, &server, width, width > 400 ? 900 : 720);
  QStoreInspectorEventsPage *page = qstore_inspector_window_get_events_page (window);
  GListModel *shown = qstore_inspector_events_page_get_shown (page);

  execute (&server, "INSERT INTO items VALUES (1, 'pear'), (2, 'fig'), (3, 'kiwi')");
  execute (&server, "INSERT INTO audit VALUES (1, 'restocked the shelves')");
  execute (&server, "UPDATE items SET name = 'plum' WHERE id = 1");
  execute (&server, "DELETE FROM items WHERE id = 2");
  wait_commits (page, 4);
  test_run_for (300);
  for (guint i = 0; i < g_list_model_get_n_items (shown); i++)
    {
      g_autoptr(QStoreInspectorEvent) event = g_list_model_get_item (shown, i);

      if (qstore_inspector_event_get_kind (event) == QSTORE_INSPECTOR_EVENT_COMMITTED &&
          qstore_inspector_event_get_n_rows (event) == 3)
        qstore_inspector_events_page_select (page, i);
    }
  shoot (window, "events", width);
  assert_columns (page, width);

  /* The server went away, and came back. */
  server_kill (&server);
  test_wait (page_gone, page, 20);
  shoot (window, "events-gone", width);
  server_start (&server, server.uri, NULL);
  test_wait (page_connected, page, 20);
  execute (&server, "INSERT INTO items VALUES (4, 'lime')");
  wait_commits (page, 5);
  shoot (window, "events-gap", width);

  close_window (window);
  server_stop (&server);
  test_remove_tree (dir);
}

static void
test_screenshots (void)
{
  screenshots_at (360);
  screenshots_at (1400);
  adw_style_manager_set_color_scheme (adw_style_manager_get_default (), ADW_COLOR_SCHEME_DEFAULT);
}

int
main (int    argc,
      char **argv)
{
  int status;

  gtk_test_init (&argc, &argv, NULL);
  adw_init ();
  if (argc < 2)
    {
      g_printerr ("Usage: %s [--tap] -p /inspector-events/MODE PATH-TO-QSTORE\n", argv[0]);
      return 2;
    }
  qstore_path = argv[1];

  application = G_APPLICATION (qstore_inspector_application_new ());
  g_application_register (application, NULL, NULL);

  g_test_add_func ("/inspector-events/stream", test_stream);
  g_test_add_func ("/inspector-events/follow", test_follow);
  g_test_add_func ("/inspector-events/restart", test_restart);
  g_test_add_func ("/inspector-events/connect", test_connect);
  g_test_add_func ("/inspector-events/skipped", test_skipped);
  g_test_add_func ("/inspector-events/screenshots", test_screenshots);

  status = g_test_run ();
  g_object_unref (application);
  return status;
}
