/* qstore-tool-changes.c: qstore changes
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <signal.h>
#include <stdio.h>

#include <glib-unix.h>

#include "qstore-tool.h"

typedef struct
{
  gboolean    json;
  GMainLoop  *loop;
  GError     *error;       /* what stopped following */
} Follow;

static void
append_row (GString            *out,
            GVariant           *row,
            const char * const *names)
{
  gsize n;

  if (row == NULL)
    {
      g_string_append (out, "null");
      return;
    }
  if (names == NULL)
    {
      qstore_tool_append_json_tuple (out, row);
      return;
    }
  n = g_variant_n_children (row);
  g_string_append_c (out, '{');
  for (gsize i = 0; i < n && names[i] != NULL; i++)
    {
      g_autoptr(GVariant) boxed = g_variant_get_child_value (row, i);
      g_autoptr(GVariant) value = g_variant_get_variant (boxed);

      if (i > 0)
        g_string_append_c (out, ',');
      qstore_tool_append_json_string (out, names[i]);
      g_string_append_c (out, ':');
      qstore_tool_append_json_value (out, value);
    }
  g_string_append_c (out, '}');
}

static void
append_key (GString         *out,
            QStoreChangeSet *change_set,
            guint            index)
{
  g_autoptr(GVariant) key = qstore_change_set_get_key (change_set, index);

  if (key != NULL)
    qstore_tool_append_json_tuple (out, key);
  else
    g_string_append (out, "null");
}

static void
on_changes (QStoreChangeFeed *feed,
            QStoreChangeSet  *change_set,
            Follow           *follow)
{
  g_autoptr(GString) line = g_string_new (NULL);
  g_autofree char *time = qstore_tool_format_time (qstore_change_set_get_time (change_set));
  guint n = qstore_change_set_get_n_changes (change_set);

  if (follow->json)
    {
      g_string_append_printf (line, "{\"tx\":%" G_GUINT64_FORMAT ",\"time\":",
                              qstore_change_set_get_tx_id (change_set));
      qstore_tool_append_json_string (line, time);
      g_string_append (line, ",\"rows\":[");
    }
  else
    g_string_append_printf (line, "%" G_GUINT64_FORMAT " %s",
                            qstore_change_set_get_tx_id (change_set), time);

  for (guint i = 0; i < n; i++)
    {
      const char * const *names = qstore_change_set_get_names (change_set, i);

      if (follow->json)
        {
          g_autoptr(GVariant) old_row = qstore_change_set_get_old_row (change_set, i);
          g_autoptr(GVariant) new_row = qstore_change_set_get_new_row (change_set, i);

          g_string_append (line, i > 0 ? ",{\"table\":" : "{\"table\":");
          qstore_tool_append_json_string (line, qstore_change_set_get_table (change_set, i));
          g_string_append_printf (line, ",\"op\":\"%s\",\"key\":",
                                  qstore_change_op_get_name (qstore_change_set_get_op (change_set, i)));
          append_key (line, change_set, i);
          g_string_append (line, ",\"old\":");
          append_row (line, old_row, names);
          g_string_append (line, ",\"new\":");
          append_row (line, new_row, names);
          g_string_append_c (line, '}');
        }
      else
        {
          g_string_append_printf (line, "%s %s %s ", i > 0 ? ";" : "",
                                  qstore_change_set_get_table (change_set, i),
                                  qstore_change_op_get_name (qstore_change_set_get_op (change_set, i)));
          append_key (line, change_set, i);
        }
    }
  if (follow->json)
    g_string_append (line, "]}");
  qstore_tool_print_line (line);
}

static void
on_gap (QStoreChangeFeed *feed,
        const char       *reason,
        gint64            down_for_ms,
        Follow           *follow)
{
  qstore_tool_print_gap (follow->json, reason, down_for_ms);
}

static void
on_failed (QStoreChangeFeed *feed,
           const GError     *error,
           Follow           *follow)
{
  if (follow->error == NULL)
    follow->error = g_error_copy (error);
  g_main_loop_quit (follow->loop);
}

static gboolean
on_signal (gpointer data)
{
  Follow *follow = data;

  g_main_loop_quit (follow->loop);
  return G_SOURCE_CONTINUE;
}

/* A payload is JSON when it was written; one that is not any more goes
 * out as a string, so each line stays JSON. */
static void
append_payload (GString    *out,
                const char *payload)
{
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(JsonGenerator) generator = NULL;
  g_autofree char *text = NULL;

  if (!json_parser_load_from_data (parser, payload, -1, NULL) ||
      json_parser_get_root (parser) == NULL)
    {
      qstore_tool_append_json_string (out, payload);
      return;
    }
  generator = json_generator_new ();
  json_generator_set_root (generator, json_parser_get_root (parser));
  text = json_generator_to_data (generator, NULL);
  g_string_append (out, text);
}

static int
print_observers (QStoreTool *tool,
                 const char *command,
                 gboolean    json)
{
  g_autoptr(QStoreProvider) provider = NULL;
  g_autoptr(GListModel) observations = NULL;
  g_autoptr(GError) error = NULL;
  int status;

  status = qstore_tool_open_provider (tool, command, QSTORE_OPEN_READ_ONLY, &provider);
  if (status != QSTORE_TOOL_EXIT_OK)
    return status;
  observations = qstore_replica_observation_list (provider, &error);
  if (observations == NULL)
    return qstore_tool_fail (error);

  for (guint i = 0; i < g_list_model_get_n_items (observations); i++)
    {
      g_autoptr(QStoreReplicaObservation) observation = g_list_model_get_item (observations, i);
      g_autofree char *time = qstore_tool_format_time (qstore_replica_observation_get_updated_at (observation) * 1000);
      g_autoptr(GString) line = g_string_new (NULL);

      if (json)
        {
          g_string_append (line, "{\"replica\":");
          qstore_tool_append_json_string (line, qstore_replica_observation_get_replica_id (observation));
          g_string_append (line, ",\"kind\":");
          qstore_tool_append_json_string (line, qstore_replica_observation_get_kind (observation));
          g_string_append (line, ",\"payload\":");
          append_payload (line, qstore_replica_observation_get_payload (observation));
          g_string_append (line, ",\"updated_at\":");
          qstore_tool_append_json_string (line, time);
          g_string_append_printf (line, ",\"staleness_ms\":%" G_GINT64_FORMAT "}",
                                  qstore_replica_observation_get_staleness_ms (observation));
        }
      else
        g_string_append_printf (line, "%s\t%s\t%" G_GINT64_FORMAT "\t%s",
                                qstore_replica_observation_get_replica_id (observation),
                                qstore_replica_observation_get_kind (observation),
                                qstore_replica_observation_get_staleness_ms (observation),
                                qstore_replica_observation_get_payload (observation));
      qstore_tool_print_line (line);
    }
  qstore_provider_close_all (provider);
  return QSTORE_TOOL_EXIT_OK;
}

int
qstore_tool_changes (QStoreTool  *tool,
                     int          argc,
                     char       **argv)
{
  g_autoptr(GOptionContext) context = NULL;
  g_autoptr(QStoreChangeFeed) feed = NULL;
  g_autoptr(GError) error = NULL;
  const char *command = argv[0];
  gint64 since = 0;
  g_autofree char *id = NULL;
  gboolean follow_flag = FALSE, observers = FALSE, bus = FALSE;
  Follow follow = { FALSE, NULL, NULL };
  int status;
  const GOptionEntry entries[] = {
    { "since", 0, 0, G_OPTION_ARG_INT64, &since,
      "Print the transactions after TX (default: from the oldest the log keeps)", "TX" },
    { "follow", 'f', 0, G_OPTION_ARG_NONE, &follow_flag,
      "Keep printing transactions as they commit, until interrupted", NULL },
    { "json", 0, 0, G_OPTION_ARG_NONE, &follow.json,
      "Print each transaction as one JSON object: tx, time, and rows with table, op, "
      "key, old and new (blobs as {\"$blob\": \"<base64>\"}); a gap as "
      "{\"gap\": {\"reason\": …, \"down_for_ms\": …}}", NULL },
    { "bus", 0, 0, G_OPTION_ARG_NONE, &bus,
      "With --follow: follow a qstore serve on the session bus rather than the store's "
      "log (its rows carry no key)", NULL },
    { "id", 0, 0, G_OPTION_ARG_STRING, &id,
      "With --bus: the server's id (default: from --store, as qstore serve derives it)",
      "NAME" },
    { "observers", 0, 0, G_OPTION_ARG_NONE, &observers,
      "Print the replica observations instead: replica, kind, staleness in ms and "
      "payload", NULL },
    G_OPTION_ENTRY_NULL
  };

  context = qstore_tool_option_context_new (command, "",
                                            "Print the change log of the store, one committed "
                                            "transaction a line: its id, when it committed, and "
                                            "each row it changed (table, operation, key). The "
                                            "store is opened read-only, so another process may "
                                            "write it meanwhile. Turn the log on with PRAGMA "
                                            "qstore.change_log = N. With --follow --bus, "
                                            "print what a running qstore serve commits "
                                            "instead; a line \"gap: …\" says transactions "
                                            "may have been missed.");
  g_option_context_add_main_entries (context, entries, NULL);
  status = qstore_tool_parse_options (context, command, &argc, &argv);
  if (status != QSTORE_TOOL_EXIT_OK)
    return status;
  if (argc > 1)
    return qstore_tool_usage_error (command, "Unexpected argument “%s”", argv[1]);
  if (since < 0)
    return qstore_tool_usage_error (command, "--since takes a transaction id, 0 or more");
  if (observers && (follow_flag || since != 0))
    return qstore_tool_usage_error (command, "--observers prints the observations once: "
                                    "leave out --follow and --since");
  if (id != NULL && !bus)
    return qstore_tool_usage_error (command, "--id names a server: add --bus");
  if (bus && (!follow_flag || since != 0 || observers))
    return qstore_tool_usage_error (command, "--bus follows a running server from now on: "
                                    "give --follow, and leave out --since and --observers");
  if (bus)
    return qstore_tool_changes_follow_bus (tool, command, id, follow.json);
  if (tool->store_uri == NULL)
    return qstore_tool_usage_error (command,
                                    "No store given: pass --store URI before the command "
                                    "(such as --store lmdb:/path/to/dir) or set QSTORE_STORE");
  if (observers)
    return print_observers (tool, command, follow.json);

  feed = qstore_change_feed_new_follower (tool->store_uri, (guint64) since, &error);
  if (feed == NULL)
    return qstore_tool_fail (error);
  g_signal_connect (feed, "changes", G_CALLBACK (on_changes), &follow);
  g_signal_connect (feed, "gap", G_CALLBACK (on_gap), &follow);

  if (!follow_flag)
    {
      if (!qstore_change_feed_poll (feed, &error))
        return qstore_tool_fail (error);
      return QSTORE_TOOL_EXIT_OK;
    }

  follow.loop = g_main_loop_new (NULL, FALSE);
  g_signal_connect (feed, "failed", G_CALLBACK (on_failed), &follow);
  g_unix_signal_add (SIGINT, on_signal, &follow);
  g_unix_signal_add (SIGTERM, on_signal, &follow);
  if (!qstore_change_feed_follow (feed, &error))
    status = qstore_tool_fail (error);
  else
    {
      g_main_loop_run (follow.loop);
      status = follow.error != NULL ? qstore_tool_fail (follow.error) : QSTORE_TOOL_EXIT_OK;
    }
  qstore_change_feed_close (feed);
  g_clear_error (&follow.error);
  g_main_loop_unref (follow.loop);
  return status;
}
