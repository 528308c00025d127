/* qstore-tool-changes-bus.c: qstore changes --follow --bus
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Follows a `qstore serve` on the session bus: one line per committed
 * transaction, from its Committed signal and the CommittedRows that
 * follow it. A transaction id that skips, a Gap signal, or the server's
 * name changing owner (a restart) gives a gap line: what was missed is
 * not known, so whatever the reader derived must be derived again.
 */
#include "config.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>

#include <glib-unix.h>

#include "qstore-tool.h"

typedef struct
{
  GDBusConnection *connection;
  GMainLoop       *loop;
  char            *name;
  gboolean         json;
  char            *owner;          /* the unique name serving now, if any */
  gboolean         served_before;  /* a server was followed in this run */
  gint64           vanished_us;    /* when the last server went, or 0 */
  guint64          last_tx;        /* the last transaction printed, or 0 */
  /* The transaction whose rows are arriving */
  guint64          tx;
  gint64           time;
  char           **tables;
  guint            expected;
  GString         *rows;           /* JSON objects, comma-separated */
  guint            received;
} Follower;

/* The text form names each row's table and operation; --json gives the
 * rows whole. */
static void
append_plain_rows (GString    *line,
                   const char *rows_json)
{
  g_autoptr(JsonParser) parser = json_parser_new ();
  JsonArray *rows;

  if (!json_parser_load_from_data (parser, rows_json, -1, NULL) ||
      !JSON_NODE_HOLDS_ARRAY (json_parser_get_root (parser)))
    return;
  rows = json_node_get_array (json_parser_get_root (parser));
  for (guint i = 0; i < json_array_get_length (rows); i++)
    {
      JsonObject *row = json_array_get_object_element (rows, i);

      g_string_append_printf (line, "%s %s %s", i > 0 ? ";" : "",
                              json_object_get_string_member_with_default (row, "table", "?"),
                              json_object_get_string_member_with_default (row, "op", "?"));
    }
}

static void
print_transaction (Follower *follower)
{
  g_autoptr(GString) line = g_string_new (NULL);
  g_autofree char *time = qstore_tool_format_time (follower->time);
  g_autofree char *rows = g_strdup_printf ("[%s]", follower->rows->str);

  if (follower->last_tx != 0 && follower->tx != follower->last_tx + 1)
    {
      g_autofree char *reason = g_strdup_printf ("transactions %" G_GUINT64_FORMAT " to %"
                                                 G_GUINT64_FORMAT " were not seen",
                                                 follower->last_tx + 1, follower->tx - 1);

      qstore_tool_print_gap (follower->json, reason, -1);
    }
  follower->last_tx = follower->tx;

  if (follower->json)
    {
      g_string_append_printf (line, "{\"tx\":%" G_GUINT64_FORMAT ",\"time\":", follower->tx);
      qstore_tool_append_json_string (line, time);
      g_string_append (line, ",\"tables\":[");
      for (guint i = 0; follower->tables != NULL && follower->tables[i] != NULL; i++)
        {
          if (i > 0)
            g_string_append_c (line, ',');
          qstore_tool_append_json_string (line, follower->tables[i]);
        }
      g_string_append_printf (line, "],\"row_count\":%u,\"rows\":%s}", follower->expected, rows);
    }
  else
    {
      g_string_append_printf (line, "%" G_GUINT64_FORMAT " %s", follower->tx, time);
      append_plain_rows (line, rows);
    }
  qstore_tool_print_line (line);
  g_clear_pointer (&follower->tables, g_strfreev);
  g_string_truncate (follower->rows, 0);
  follower->tx = 0;
}

static void
on_signal (GDBusConnection *connection,
           const char      *sender,
           const char      *path,
           const char      *interface,
           const char      *member,
           GVariant        *parameters,
           gpointer         data)
{
  Follower *follower = data;

  if (g_str_equal (member, "Committed") &&
      g_variant_is_of_type (parameters, G_VARIANT_TYPE ("(txasu)")))
    {
      g_clear_pointer (&follower->tables, g_strfreev);
      g_variant_get (parameters, "(tx^asu)", &follower->tx, &follower->time,
                     &follower->tables, &follower->expected);
      g_string_truncate (follower->rows, 0);
      follower->received = 0;
      if (follower->expected == 0)
        print_transaction (follower);
    }
  else if (g_str_equal (member, "CommittedRows") &&
           g_variant_is_of_type (parameters, G_VARIANT_TYPE ("(tuus)")))
    {
      g_autoptr(JsonParser) parser = json_parser_new ();
      guint64 tx;
      guint32 first, total;
      const char *rows;
      gsize len;

      g_variant_get (parameters, "(tuu&s)", &tx, &first, &total, &rows);
      /* Rows of a transaction whose Committed this follower missed (it
       * subscribed in between) are not printed half. */
      if (tx != follower->tx || first != follower->received)
        return;
      if (!json_parser_load_from_data (parser, rows, -1, NULL) ||
          !JSON_NODE_HOLDS_ARRAY (json_parser_get_root (parser)))
        return;
      len = strlen (rows);
      if (len > 2)
        {
          if (follower->rows->len > 0)
            g_string_append_c (follower->rows, ',');
          g_string_append_len (follower->rows, rows + 1, len - 2);
        }
      follower->received += json_array_get_length (json_node_get_array (json_parser_get_root (parser)));
      follower->expected = total;
      if (follower->received >= follower->expected)
        print_transaction (follower);
    }
  else if (g_str_equal (member, "Gap") &&
           g_variant_is_of_type (parameters, G_VARIANT_TYPE ("(sx)")))
    {
      const char *reason;
      gint64 down_for_ms;

      g_variant_get (parameters, "(&sx)", &reason, &down_for_ms);
      qstore_tool_print_gap (follower->json, reason, down_for_ms);
      follower->last_tx = 0;
    }
}

static void
on_subscribed (GObject      *source,
               GAsyncResult *result,
               gpointer      data)
{
  Follower *follower = data;
  g_autoptr(GVariant) reply = NULL;
  g_autoptr(GError) error = NULL;

  reply = g_dbus_connection_call_finish (G_DBUS_CONNECTION (source), result, &error);
  if (reply == NULL && !g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    g_printerr ("qstore: cannot subscribe to %s: %s\n", follower->name, error->message);
}

static void
on_appeared (GDBusConnection *connection,
             const char      *name,
             const char      *owner,
             gpointer         data)
{
  Follower *follower = data;

  if (follower->served_before)
    {
      gint64 down_for_ms = follower->vanished_us != 0
        ? (g_get_monotonic_time () - follower->vanished_us) / 1000
        : -1;

      /* What committed while nobody served, or before this server
       * subscribed us, is not known. */
      qstore_tool_print_gap (follower->json, "server restarted", down_for_ms);
      follower->last_tx = 0;
    }
  follower->served_before = TRUE;
  follower->vanished_us = 0;
  g_free (follower->owner);
  follower->owner = g_strdup (owner);
  g_printerr ("qstore: following %s\n", name);
  g_dbus_connection_call (connection, owner, QSTORE_TOOL_SERVER_PATH,
                          QSTORE_TOOL_SERVER_INTERFACE, "Subscribe", NULL, NULL,
                          G_DBUS_CALL_FLAGS_NONE, -1, NULL, on_subscribed, follower);
}

static void
on_vanished (GDBusConnection *connection,
             const char      *name,
             gpointer         data)
{
  Follower *follower = data;

  if (connection == NULL)
    {
      g_printerr ("qstore: the session bus went away\n");
      g_main_loop_quit (follower->loop);
      return;
    }
  if (follower->owner != NULL)
    g_printerr ("qstore: %s went away; waiting for it to return\n", name);
  else
    g_printerr ("qstore: waiting for %s on the session bus\n", name);
  g_clear_pointer (&follower->owner, g_free);
  follower->vanished_us = g_get_monotonic_time ();
  /* A transaction cut off half way is not printed. */
  follower->tx = 0;
}

static gboolean
on_unix_signal (gpointer data)
{
  Follower *follower = data;

  g_main_loop_quit (follower->loop);
  return G_SOURCE_CONTINUE;
}

/**
 * qstore_tool_changes_follow_bus:
 * @tool: the command's state
 * @command: the sub-command's name, for messages
 * @id: (nullable): the server's id; %NULL for the store's default one
 * @json: print JSON lines
 *
 * Prints the transactions a server commits until SIGINT or SIGTERM,
 * waiting for the server while it is not running.
 *
 * Returns: an exit status
 */
int
qstore_tool_changes_follow_bus (QStoreTool *tool,
                                const char *command,
                                const char *id,
                                gboolean    json)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *default_id = NULL;
  Follower follower = { 0 };
  guint subscription, watch;

  if (id == NULL)
    {
      if (tool->store_uri == NULL)
        return qstore_tool_usage_error (command,
                                        "Which server? Pass --id NAME, or the store it "
                                        "serves with --store URI before the command");
      id = default_id = qstore_tool_server_default_id (tool->store_uri);
    }
  else if (!qstore_tool_server_id_is_valid (id))
    return qstore_tool_usage_error (command,
                                    "--id “%s” cannot end a bus name: use letters, digits "
                                    "and _, not starting with a digit", id);

  follower.connection = g_bus_get_sync (G_BUS_TYPE_SESSION, NULL, &error);
  if (follower.connection == NULL)
    return qstore_tool_fail_message ("Cannot reach the session bus: %s", error->message);
  follower.name = g_strconcat (QSTORE_TOOL_SERVER_NAME_PREFIX, id, NULL);
  follower.json = json;
  follower.rows = g_string_new (NULL);
  follower.loop = g_main_loop_new (NULL, FALSE);

  /* Matched on the well-known name: signals of whichever process owns it. */
  subscription = g_dbus_connection_signal_subscribe (follower.connection, follower.name,
                                                     QSTORE_TOOL_SERVER_INTERFACE, NULL,
                                                     QSTORE_TOOL_SERVER_PATH, NULL,
                                                     G_DBUS_SIGNAL_FLAGS_NONE, on_signal,
                                                     &follower, NULL);
  watch = g_bus_watch_name_on_connection (follower.connection, follower.name,
                                          G_BUS_NAME_WATCHER_FLAGS_NONE, on_appeared,
                                          on_vanished, &follower, NULL);
  g_unix_signal_add (SIGINT, on_unix_signal, &follower);
  g_unix_signal_add (SIGTERM, on_unix_signal, &follower);

  g_main_loop_run (follower.loop);

  g_bus_unwatch_name (watch);
  g_dbus_connection_signal_unsubscribe (follower.connection, subscription);
  if (follower.owner != NULL)
    g_dbus_connection_call_sync (follower.connection, follower.owner, QSTORE_TOOL_SERVER_PATH,
                                 QSTORE_TOOL_SERVER_INTERFACE, "Unsubscribe", NULL, NULL,
                                 G_DBUS_CALL_FLAGS_NONE, 1000, NULL, NULL);
  g_clear_object (&follower.connection);
  g_main_loop_unref (follower.loop);
  g_string_free (follower.rows, TRUE);
  g_strfreev (follower.tables);
  g_free (follower.owner);
  g_free (follower.name);
  return QSTORE_TOOL_EXIT_OK;
}
