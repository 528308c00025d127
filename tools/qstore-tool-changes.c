/* qstore-tool-changes.c: qstore changes
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "qstore-tool.h"

int
qstore_tool_changes (QStoreTool  *tool,
                     int          argc,
                     char       **argv)
{
  g_autoptr(GOptionContext) context = NULL;
  g_autofree char *id = NULL;
  const char *command = argv[0];
  gboolean follow = FALSE, bus = FALSE, json = FALSE;
  int status;
  const GOptionEntry entries[] = {
    { "follow", 'f', 0, G_OPTION_ARG_NONE, &follow,
      "Keep printing transactions as they commit, until interrupted", NULL },
    { "bus", 0, 0, G_OPTION_ARG_NONE, &bus,
      "Follow a qstore serve on the session bus instead of the store", NULL },
    { "id", 0, 0, G_OPTION_ARG_STRING, &id,
      "With --bus: the server's id (default: from --store, as qstore serve derives it)",
      "NAME" },
    { "json", 0, 0, G_OPTION_ARG_NONE, &json,
      "Print each transaction as one JSON object: tx, time, tables, row_count, and rows "
      "with table, op, old and new (blobs as {\"$blob\": \"<base64>\"}); a gap as "
      "{\"gap\": {\"reason\": …, \"down_for_ms\": …}}", NULL },
    G_OPTION_ENTRY_NULL
  };

  context = qstore_tool_option_context_new (command, "",
                                            "Print the transactions a store commits, one a "
                                            "line: its id, when it committed, and each row it "
                                            "changed (table, operation). A line \"gap: …\" says "
                                            "transactions may have been missed (the server "
                                            "restarted, or an id was skipped).");
  g_option_context_add_main_entries (context, entries, NULL);
  status = qstore_tool_parse_options (context, command, &argc, &argv);
  if (status != QSTORE_TOOL_EXIT_OK)
    return status;
  if (argc > 1)
    return qstore_tool_usage_error (command, "Unexpected argument “%s”", argv[1]);
  if (id != NULL && !bus)
    return qstore_tool_usage_error (command, "--id names a server: add --bus");
  if (!bus || !follow)
    return qstore_tool_usage_error (command,
                                    "Only a running server's transactions can be followed: "
                                    "start qstore serve and pass --follow --bus");
  return qstore_tool_changes_follow_bus (tool, command, id, json);
}
