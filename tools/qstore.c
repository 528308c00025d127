/* qstore.c: the qstore command
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qstore-tool.h"

/* Every command is one entry: its handler parses its own options. */
static const QStoreToolCommand commands[] = {
  { "providers", "List the storage providers and what they can do", qstore_tool_providers },
  { "kv",        "Read and write the ordered key/value stores of a location", qstore_tool_kv },
  { "sql",       "Run SQL on the store's tables and print the rows", qstore_tool_sql },
  { "catalog",   "List the tables, views and bookkeeping of the store's catalog", qstore_tool_catalog },
  { "stale",     "Show the clean-shutdown marker, the durable stale set and each view's fate", qstore_tool_stale },
  { "changes",   "Print or follow the change log; list the replica observations", qstore_tool_changes },
  { "import",    "Load a table from CSV or JSON lines, appending or replacing its rows", qstore_tool_import },
  { "staging",   "List the staged imports left running or interrupted; sweep what may go", qstore_tool_staging },
  { "serve",     "Serve the store on the session bus: its events, catalog and live queries", qstore_tool_serve },
  { "check",     "Check the store's files, catalog, tables and indexes without writing", qstore_tool_check },
  { "demo",      "Create a demo store with tables, indexes, rows and a view", qstore_tool_demo },
};

/* The synopsis of the command line being parsed, repeated in usage errors. */
static char *current_synopsis;

int
qstore_tool_fail (const GError *error)
{
  g_printerr ("qstore: %s\n", error->message);
  return QSTORE_TOOL_EXIT_FAILURE;
}

int
qstore_tool_fail_message (const char *format,
                          ...)
{
  g_autofree char *message = NULL;
  va_list args;

  va_start (args, format);
  message = g_strdup_vprintf (format, args);
  va_end (args);

  g_printerr ("qstore: %s\n", message);
  return QSTORE_TOOL_EXIT_FAILURE;
}

int
qstore_tool_usage_error (const char *command,
                         const char *format,
                         ...)
{
  g_autofree char *message = NULL;
  va_list args;

  va_start (args, format);
  message = g_strdup_vprintf (format, args);
  va_end (args);

  g_printerr ("qstore: %s\n", message);
  if (current_synopsis != NULL)
    g_printerr ("Usage: %s\n", current_synopsis);
  g_printerr ("Run “qstore%s%s --help” for more information.\n",
              command ? " " : "", command ? command : "");
  return QSTORE_TOOL_EXIT_USAGE;
}

/**
 * qstore_tool_option_context_new:
 * @command: (nullable): the sub-command, such as `kv get`, or %NULL for
 *   the top level
 * @parameters: what follows the options, such as `STORE KEY`
 * @summary: one line on what the command does
 *
 * Makes the option context of one command level. GOption names the
 * program after g_get_prgname() in its help, so the program name is set
 * to the full command.
 */
GOptionContext *
qstore_tool_option_context_new (const char *command,
                                const char *parameters,
                                const char *summary)
{
  g_autofree char *prgname = NULL;
  GOptionContext *context;

  prgname = command ? g_strconcat ("qstore ", command, NULL) : g_strdup ("qstore");
  g_set_prgname (prgname);

  g_free (current_synopsis);
  current_synopsis = g_strdup_printf ("%s [OPTION…] %s", prgname, parameters);

  context = g_option_context_new (parameters);
  g_option_context_set_summary (context, summary);
  return context;
}

/* Returns an exit status: QSTORE_TOOL_EXIT_OK to go on. */
int
qstore_tool_parse_options (GOptionContext   *context,
                           const char       *command,
                           int              *argc,
                           char           ***argv)
{
  g_autoptr(GError) error = NULL;

  if (!g_option_context_parse (context, argc, argv, &error))
    return qstore_tool_usage_error (command, "%s", error->message);
  return QSTORE_TOOL_EXIT_OK;
}

char *
qstore_tool_describe_commands (const QStoreToolCommand *table,
                               gsize                    n_commands)
{
  GString *text = g_string_new ("Commands:\n");
  int width = 0;

  for (gsize i = 0; i < n_commands; i++)
    width = MAX (width, (int) strlen (table[i].name));
  for (gsize i = 0; i < n_commands; i++)
    g_string_append_printf (text, "  %-*s  %s\n", width, table[i].name, table[i].summary);
  return g_string_free (text, FALSE);
}

/**
 * qstore_tool_dispatch:
 * @tool: the shared state
 * @command: (nullable): the command level dispatching, such as `kv`
 * @table: (array length=n_commands): the sub-commands of that level
 * @n_commands: the number of entries of @table
 * @argc: the number of @argv
 * @argv: the sub-command's name followed by its arguments
 *
 * Runs the sub-command @argv[0] names.
 *
 * Returns: the exit status
 */
int
qstore_tool_dispatch (QStoreTool              *tool,
                      const char              *command,
                      const QStoreToolCommand *table,
                      gsize                    n_commands,
                      int                      argc,
                      char                   **argv)
{
  if (argc < 1)
    return qstore_tool_usage_error (command, "No command given");

  for (gsize i = 0; i < n_commands; i++)
    if (g_str_equal (argv[0], table[i].name))
      {
        g_autofree char *full = NULL;

        /* Sub-commands report usage errors under their full name. */
        full = command ? g_strconcat (command, " ", argv[0], NULL) : g_strdup (argv[0]);
        argv[0] = full;
        return table[i].run (tool, argc, argv);
      }

  return qstore_tool_usage_error (command, "Unknown command “%s”", argv[0]);
}

int
qstore_tool_open_provider (QStoreTool       *tool,
                           const char       *command,
                           QStoreOpenFlags   flags,
                           QStoreProvider  **provider)
{
  g_autoptr(GError) error = NULL;

  if (tool->store_uri == NULL)
    return qstore_tool_usage_error (command,
                                    "No store given: pass --store URI before the command "
                                    "(such as --store lmdb:/path/to/dir) or set QSTORE_STORE");

  *provider = qstore_provider_new_for_uri (tool->store_uri, flags, &error);
  if (*provider == NULL)
    return qstore_tool_fail (error);
  return QSTORE_TOOL_EXIT_OK;
}

/* Run from the build tree, the command loads the plugins built beside it,
 * as the tests do, unless QSTORE_PLUGIN_DIR says otherwise. An installed
 * copy never does: it is not in the build tree. */
static void
use_build_tree_plugins (void)
{
#ifdef QSTORE_BUILD_TREE_DIR
  g_autofree char *exe = g_file_read_link ("/proc/self/exe", NULL);
  g_autofree char *exe_dir = NULL;
  g_autofree char *build_dir = NULL;

  if (exe == NULL || g_getenv ("QSTORE_PLUGIN_DIR") != NULL)
    return;
  exe_dir = g_path_get_dirname (exe);
  build_dir = realpath (QSTORE_BUILD_TREE_DIR, NULL);
  if (build_dir != NULL && g_str_equal (exe_dir, build_dir))
    g_setenv ("QSTORE_PLUGIN_DIR", QSTORE_BUILD_PLUGIN_DIRS, FALSE);
#endif
}

int
main (int    argc,
      char **argv)
{
  g_autoptr(GOptionContext) context = NULL;
  g_autofree char *description = NULL;
  g_autofree char *store = NULL;
  gboolean version = FALSE;
  QStoreTool tool = { NULL };
  const char *env;
  int status;
  const GOptionEntry entries[] = {
    { "store", 's', 0, G_OPTION_ARG_FILENAME, &store,
      "The location to open, as provider:location (default: $QSTORE_STORE)", "URI" },
    { "version", 0, 0, G_OPTION_ARG_NONE, &version,
      "Print the version and exit", NULL },
    G_OPTION_ENTRY_NULL
  };

  setlocale (LC_ALL, "");
  use_build_tree_plugins ();

  context = qstore_tool_option_context_new (NULL, "COMMAND [ARGUMENT…]",
                                            "Look into and change qstore stores.");
  /* Options after the command belong to the command. */
  g_option_context_set_strict_posix (context, TRUE);
  g_option_context_add_main_entries (context, entries, NULL);
  description = qstore_tool_describe_commands (commands, G_N_ELEMENTS (commands));
  g_option_context_set_description (context, description);

  status = qstore_tool_parse_options (context, NULL, &argc, &argv);
  if (status != QSTORE_TOOL_EXIT_OK)
    return status;

  if (version)
    {
      g_print ("qstore %s\n", PACKAGE_VERSION);
      return QSTORE_TOOL_EXIT_OK;
    }

  env = g_getenv ("QSTORE_STORE");
  if (store != NULL)
    tool.store_uri = store;
  else if (env != NULL && env[0] != '\0')
    tool.store_uri = env;

  status = qstore_tool_dispatch (&tool, NULL, commands, G_N_ELEMENTS (commands),
                                 argc - 1, argv + 1);
  g_clear_pointer (&current_synopsis, g_free);
  return status;
}
