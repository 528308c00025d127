/* qstore-tool-changes-bus.c: qstore changes --follow --bus
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Follows a `qstore serve` on the session bus through a QStoreChangeFeed
 * (qstore_change_feed_new_for_bus_sync()): one line per committed
 * transaction, with the tables and rows as the server sent them, and a
 * gap line when the feed has one (the server restarted or sent Gap, a
 * transaction id was skipped, a signal did not parse): what was missed is
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
  GMainLoop  *loop;
  gboolean    json;
  const char *name;
  gboolean    followed;      /* a server was followed in this run */
  GError     *error;         /* what stopped following */
} Follower;

/* The JSON form: tx, time, the tables in the order the rows name them
 * first, row_count, and the rows ({"table", "op", "old", "new"}). */
static void
on_changes (QStoreChangeFeed *feed,
            QStoreChangeSet  *change_set,
            Follower         *follower)
{
  g_autoptr(GString) line = g_string_new (NULL);
  g_autofree char *time = qstore_tool_format_time (qstore_change_set_get_time (change_set));
  guint n = qstore_change_set_get_n_changes (change_set);

  if (!follower->json)
    {
      g_string_append_printf (line, "%" G_GUINT64_FORMAT " %s",
                              qstore_change_set_get_tx_id (change_set), time);
      for (guint i = 0; i < n; i++)
        g_string_append_printf (line, "%s %s.%s %s", i > 0 ? ";" : "",
                                qstore_change_set_get_schema (change_set, i),
                                qstore_change_set_get_table (change_set, i),
                                qstore_change_op_get_name (qstore_change_set_get_op (change_set, i)));
      qstore_tool_print_line (line);
      return;
    }

  g_string_append_printf (line, "{\"tx\":%" G_GUINT64_FORMAT ",\"time\":",
                          qstore_change_set_get_tx_id (change_set));
  qstore_tool_append_json_string (line, time);
  g_string_append (line, ",\"tables\":[");
  {
    g_autoptr(GHashTable) seen = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);

    for (guint i = 0; i < n; i++)
      {
        char *table = g_strdup_printf ("%s.%s", qstore_change_set_get_schema (change_set, i),
                                       qstore_change_set_get_table (change_set, i));

        if (!g_hash_table_add (seen, table))
          continue;
        if (g_hash_table_size (seen) > 1)
          g_string_append_c (line, ',');
        qstore_tool_append_json_string (line, table);
      }
  }
  g_string_append_printf (line, "],\"row_count\":%u,\"rows\":[", n);
  for (guint i = 0; i < n; i++)
    {
      if (i > 0)
        g_string_append_c (line, ',');
      qstore_tool_append_json_change (line, change_set, i);
    }
  g_string_append (line, "]}");
  qstore_tool_print_line (line);
}

static void
on_gap (QStoreChangeFeed *feed,
        const char       *reason,
        gint64            down_for_ms,
        Follower         *follower)
{
  qstore_tool_print_gap (follower->json, reason, down_for_ms);
}

static void
on_owner (QStoreChangeFeed *feed,
          GParamSpec       *pspec,
          Follower         *follower)
{
  if (qstore_change_feed_get_server_owner (feed) != NULL)
    {
      g_printerr ("qstore: following %s\n", follower->name);
      follower->followed = TRUE;
    }
  else if (follower->followed)
    g_printerr ("qstore: %s went away; waiting for it to return\n", follower->name);
}

static void
on_failed (QStoreChangeFeed *feed,
           const GError     *error,
           Follower         *follower)
{
  /* A server that refuses is told and waited out; a closed bus ends it. */
  g_printerr ("qstore: %s\n", error->message);
  if (g_error_matches (error, QSTORE_ERROR, QSTORE_ERROR_CLOSED))
    {
      if (follower->error == NULL)
        follower->error = g_error_copy (error);
      g_main_loop_quit (follower->loop);
    }
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
  g_autoptr(QStoreChangeFeed) feed = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *default_id = NULL;
  Follower follower = { NULL, json, NULL, FALSE, NULL };
  int status = QSTORE_TOOL_EXIT_OK;

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

  feed = qstore_change_feed_new_for_bus_sync (NULL, id, QSTORE_BUS_FOLLOW_WAIT, NULL, &error);
  if (feed == NULL)
    return qstore_tool_fail (error);
  follower.name = qstore_change_feed_get_bus_name (feed);
  follower.loop = g_main_loop_new (NULL, FALSE);
  g_signal_connect (feed, "changes", G_CALLBACK (on_changes), &follower);
  g_signal_connect (feed, "gap", G_CALLBACK (on_gap), &follower);
  g_signal_connect (feed, "failed", G_CALLBACK (on_failed), &follower);
  g_signal_connect (feed, "notify::server-owner", G_CALLBACK (on_owner), &follower);
  if (qstore_change_feed_get_server_owner (feed) != NULL)
    on_owner (feed, NULL, &follower);
  else
    g_printerr ("qstore: waiting for %s on the session bus\n", follower.name);
  g_unix_signal_add (SIGINT, on_unix_signal, &follower);
  g_unix_signal_add (SIGTERM, on_unix_signal, &follower);

  g_main_loop_run (follower.loop);

  if (follower.error != NULL)
    status = qstore_tool_fail (follower.error);
  /* Unsubscribes; the call goes out before the process ends. */
  qstore_change_feed_close (feed);
  {
    g_autoptr(GDBusConnection) bus = g_bus_get_sync (G_BUS_TYPE_SESSION, NULL, NULL);

    if (bus != NULL)
      g_dbus_connection_flush_sync (bus, NULL, NULL);
  }
  g_clear_error (&follower.error);
  g_main_loop_unref (follower.loop);
  return status;
}
