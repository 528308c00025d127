/* qstore-tool-check.c: `qstore check`, a store checked without writing
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "qstore-tool.h"

/* What the check covers, bottom up, as its scopes. */
static const struct {
  const char *scope;
  const char *one;
  const char *many;
  const char *items;
} scopes[] = {
  { QSTORE_CHECK_SCOPE_FILE, "file", "files", "pages" },
  { QSTORE_CHECK_SCOPE_STORE, "store", "stores", "keys" },
  { QSTORE_CHECK_SCOPE_TABLE, "table", "tables", "rows" },
  { QSTORE_CHECK_SCOPE_INDEX, "index", "indexes", "entries" },
};

static void
print_text (QStoreCheckReport *report)
{
  guint n_problems = qstore_check_report_get_n_problems (report);
  const char * const *notes = qstore_check_report_get_notes (report);

  for (guint i = 0; i < G_N_ELEMENTS (scopes); i++)
    {
      guint n = qstore_check_report_get_n_checked (report, scopes[i].scope);

      if (n > 0)
        g_print ("Checked %u %s (%" G_GUINT64_FORMAT " %s)\n", n,
                 n == 1 ? scopes[i].one : scopes[i].many,
                 qstore_check_report_get_n_checked_items (report, scopes[i].scope),
                 scopes[i].items);
    }
  for (guint i = 0; i < n_problems; i++)
    {
      const QStoreCheckProblem *problem = qstore_check_report_get_problem (report, i);
      GBytes *key = qstore_check_problem_get_key (problem);
      g_autofree char *at = NULL;

      if (key != NULL)
        {
          gsize len;
          const guint8 *data = g_bytes_get_data (key, &len);
          g_autofree char *hex = qstore_tool_format_hex (data, len);

          at = g_strdup_printf (" (at key %s)", hex);
        }
      g_print ("%s “%s”: %s%s\n", qstore_check_problem_get_scope (problem),
               qstore_check_problem_get_object (problem),
               qstore_check_problem_get_message (problem), at != NULL ? at : "");
    }
  for (guint i = 0; notes[i] != NULL; i++)
    g_print ("Note: %s\n", notes[i]);
  if (n_problems == 0)
    g_print ("No problems found\n");
  else
    g_print ("%u problem%s found\n", n_problems, n_problems == 1 ? "" : "s");
}

/* A store whose database does not open is checked as far as its
 * provider goes, and what stopped the open is itself a problem. */
static QStoreCheckReport *
check_provider (QStoreTool    *tool,
                const GError  *open_error,
                GError       **error)
{
  g_autoptr(QStoreProvider) provider = NULL;
  g_autoptr(QStoreCheckReport) report = NULL;
  g_autoptr(GError) local_error = NULL;

  provider = qstore_provider_new_for_uri (tool->store_uri, QSTORE_OPEN_READ_ONLY, &local_error);
  if (provider != NULL)
    report = qstore_provider_check (provider, &local_error);
  if (provider != NULL)
    qstore_provider_close_all (provider);
  if (report == NULL)
    {
      /* Damage the provider saw before it could be checked is what a
       * check is for: a report, not a failure. */
      if (!g_error_matches (local_error, QSTORE_ERROR, QSTORE_ERROR_CORRUPT))
        {
          g_propagate_error (error, g_steal_pointer (&local_error));
          return NULL;
        }
      report = qstore_check_report_new ();
      qstore_check_report_add_problem (report, QSTORE_CHECK_SCOPE_FILE, tool->store_uri, NULL,
                                       local_error->message);
    }
  if (qstore_check_report_is_clean (report))
    qstore_check_report_add_problem (report, QSTORE_CHECK_SCOPE_CATALOG, tool->store_uri, NULL,
                                     open_error->message);
  return g_steal_pointer (&report);
}

int
qstore_tool_check (QStoreTool  *tool,
                   int          argc,
                   char       **argv)
{
  g_autoptr(GOptionContext) context = NULL;
  g_autoptr(QStoreDatabase) database = NULL;
  g_autoptr(QStoreCheckReport) report = NULL;
  g_autoptr(GError) open_error = NULL;
  g_autoptr(GError) error = NULL;
  const char *command = argv[0];
  gboolean json = FALSE;
  int status;
  const GOptionEntry entries[] = {
    { "json", 0, 0, G_OPTION_ARG_NONE, &json, "Print one JSON object", NULL },
    G_OPTION_ENTRY_NULL
  };

  context = qstore_tool_option_context_new (command, "",
                                            "Check the store without writing to it: the "
                                            "provider's files and the key order of every "
                                            "store, the catalog, and every table's rows "
                                            "against its primary key, its indexes and its row "
                                            "count. Exits with 0 when nothing is wrong and 1 "
                                            "when something is, or when the store could not "
                                            "be checked.");
  g_option_context_add_main_entries (context, entries, NULL);
  status = qstore_tool_parse_options (context, command, &argc, &argv);
  if (status != QSTORE_TOOL_EXIT_OK)
    return status;
  if (argc > 1)
    return qstore_tool_usage_error (command, "Unexpected argument “%s”", argv[1]);
  if (tool->store_uri == NULL)
    return qstore_tool_usage_error (command,
                                    "No store given: pass --store URI before the command "
                                    "(such as --store lmdb:/path/to/dir) or set QSTORE_STORE");

  database = qstore_database_open (tool->store_uri, QSTORE_OPEN_READ_ONLY, &open_error);
  if (database != NULL)
    {
      report = qstore_database_check (database, &error);
      qstore_database_close (database, NULL);
    }
  else
    report = check_provider (tool, open_error, &error);
  if (report == NULL)
    return qstore_tool_fail (error);

  if (json)
    {
      g_autofree char *text = qstore_check_report_to_json (report);

      g_print ("%s\n", text);
    }
  else
    print_text (report);
  return qstore_check_report_is_clean (report) ? QSTORE_TOOL_EXIT_OK : QSTORE_TOOL_EXIT_FAILURE;
}
