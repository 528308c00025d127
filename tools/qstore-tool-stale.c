/* qstore-tool-stale.c: qstore stale
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <stdio.h>

#include "qstore-tool.h"

static const char *
verdict_name (QStoreStaleVerdict verdict)
{
  switch (verdict)
    {
    case QSTORE_STALE_VERDICT_ADOPT:
      return "adopt";
    case QSTORE_STALE_VERDICT_REFILL:
      return "refill";
    case QSTORE_STALE_VERDICT_ERROR:
    default:
      return "error";
    }
}

static const char *
trust_name (QStoreStaleTrust trust)
{
  switch (trust)
    {
    case QSTORE_STALE_TRUST_DURABLE_SET:
      return "durable_stale_set";
    case QSTORE_STALE_TRUST_MARKER:
      return "clean_shutdown_marker";
    case QSTORE_STALE_TRUST_NONE:
    default:
      return "none";
    }
}

static void
add_names (JsonBuilder        *builder,
           const char * const *names)
{
  if (names == NULL)
    {
      json_builder_add_null_value (builder);
      return;
    }
  json_builder_begin_array (builder);
  for (guint i = 0; names[i] != NULL; i++)
    json_builder_add_string_value (builder, names[i]);
  json_builder_end_array (builder);
}

/**
 * qstore_tool_stale_report_to_json:
 * @report: a stale report
 * @stale_now: (nullable): the views stale now, when known
 *
 * The object `qstore stale --json` prints; the server's GetStaleReport
 * gives the same.
 *
 * Returns: (transfer full): a JSON object
 */
JsonNode *
qstore_tool_stale_report_to_json (QStoreStaleReport  *report,
                                  const char * const *stale_now)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  GListModel *views = qstore_stale_report_get_views (report);

  json_builder_begin_object (builder);

  json_builder_set_member_name (builder, "clean_shutdown_marker");
  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "present");
  json_builder_add_boolean_value (builder, qstore_stale_report_get_marker_present (report));
  json_builder_set_member_name (builder, "stale_at_close");
  add_names (builder, qstore_stale_report_get_stale_at_close (report));
  json_builder_end_object (builder);

  json_builder_set_member_name (builder, "durable_stale_set");
  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "present");
  json_builder_add_boolean_value (builder, qstore_stale_report_get_durable_set_present (report));
  json_builder_set_member_name (builder, "stale");
  add_names (builder, qstore_stale_report_get_durable_stale (report));
  json_builder_end_object (builder);

  json_builder_set_member_name (builder, "stale_now");
  add_names (builder, stale_now);

  json_builder_set_member_name (builder, "atomic");
  json_builder_add_boolean_value (builder, qstore_stale_report_get_atomic (report));
  json_builder_set_member_name (builder, "trust");
  json_builder_add_string_value (builder, trust_name (qstore_stale_report_get_trust (report)));

  json_builder_set_member_name (builder, "next_open");
  json_builder_begin_array (builder);
  for (guint i = 0; i < g_list_model_get_n_items (views); i++)
    {
      g_autoptr(QStoreStaleView) view = g_list_model_get_item (views, i);

      json_builder_begin_object (builder);
      json_builder_set_member_name (builder, "name");
      json_builder_add_string_value (builder, qstore_stale_view_get_name (view));
      json_builder_set_member_name (builder, "verdict");
      json_builder_add_string_value (builder, verdict_name (qstore_stale_view_get_verdict (view)));
      json_builder_set_member_name (builder, "reason");
      json_builder_add_string_value (builder, qstore_stale_view_get_reason (view));
      json_builder_set_member_name (builder, "sources");
      add_names (builder, qstore_stale_view_get_sources (view));
      json_builder_end_object (builder);
    }
  json_builder_end_array (builder);

  json_builder_end_object (builder);
  return json_builder_get_root (builder);
}

static char *
format_names (const char * const *names)
{
  if (names == NULL)
    return g_strdup ("(malformed)");
  if (names[0] == NULL)
    return g_strdup ("(none)");
  return g_strjoinv (", ", (char **) names);
}

static void
print_text (QStoreStaleReport  *report,
            const char * const *stale_now)
{
  GListModel *views = qstore_stale_report_get_views (report);
  guint n_views = g_list_model_get_n_items (views);

  if (!qstore_stale_report_get_marker_present (report))
    printf ("clean-shutdown marker: absent\n");
  else
    {
      g_autofree char *names = format_names (qstore_stale_report_get_stale_at_close (report));

      printf ("clean-shutdown marker: %s, stale at close: %s\n",
              qstore_stale_report_get_marker_malformed (report) ? "malformed" : "present", names);
    }

  if (!qstore_stale_report_get_durable_set_present (report))
    printf ("durable stale set: absent\n");
  else
    {
      g_autofree char *names = format_names (qstore_stale_report_get_durable_stale (report));

      printf ("durable stale set: %s, stale: %s\n",
              qstore_stale_report_get_durable_set_malformed (report) ? "malformed" : "present", names);
    }

  if (stale_now != NULL)
    {
      g_autofree char *names = format_names (stale_now);

      printf ("stale now: %s\n", names);
    }

  printf ("atomic commits: %s\n", qstore_stale_report_get_atomic (report) ? "yes" : "no");
  printf ("next open trusts: %s\n",
          qstore_stale_report_get_trust (report) == QSTORE_STALE_TRUST_DURABLE_SET
            ? "the durable stale set"
            : qstore_stale_report_get_trust (report) == QSTORE_STALE_TRUST_MARKER
              ? "the clean-shutdown marker"
              : "nothing (every materialized view refills)");

  if (n_views == 0)
    printf ("materialized views: none\n");
  for (guint i = 0; i < n_views; i++)
    {
      g_autoptr(QStoreStaleView) view = g_list_model_get_item (views, i);

      printf ("%s\t%s\t%s\n", qstore_stale_view_get_name (view),
              verdict_name (qstore_stale_view_get_verdict (view)),
              qstore_stale_view_get_reason (view));
    }
}

int
qstore_tool_stale (QStoreTool  *tool,
                   int          argc,
                   char       **argv)
{
  g_autoptr(GOptionContext) context = NULL;
  g_autoptr(QStoreProvider) provider = NULL;
  g_autoptr(QStoreStaleReport) report = NULL;
  g_autoptr(GError) error = NULL;
  g_auto(GStrv) stale_now = NULL;
  const char *command = argv[0];
  gboolean json = FALSE;
  gboolean write = FALSE;
  int status;
  const GOptionEntry entries[] = {
    { "json", 0, 0, G_OPTION_ARG_NONE, &json,
      "Print one JSON object", NULL },
    { "write", 0, 0, G_OPTION_ARG_NONE, &write,
      "Then open the store for writing, as a program would, and list the views stale "
      "now (this consumes the clean-shutdown marker and writes a new one at close)", NULL },
    G_OPTION_ENTRY_NULL
  };

  context = qstore_tool_option_context_new (command, "",
                                            "Show the clean-shutdown marker, the durable stale "
                                            "set and what the next open will do with each "
                                            "materialized view (adopt or refill, and why). "
                                            "Reads the store without changing it.");
  g_option_context_add_main_entries (context, entries, NULL);
  status = qstore_tool_parse_options (context, command, &argc, &argv);
  if (status != QSTORE_TOOL_EXIT_OK)
    return status;
  if (argc > 1)
    return qstore_tool_usage_error (command, "Unexpected argument “%s”", argv[1]);

  status = qstore_tool_open_provider (tool, command, QSTORE_OPEN_READ_ONLY, &provider);
  if (status != QSTORE_TOOL_EXIT_OK)
    return status;
  report = qstore_stale_report_new (provider, &error);
  qstore_provider_close_all (provider);
  g_clear_object (&provider);
  if (report == NULL)
    return qstore_tool_fail (error);

  if (write)
    {
      g_autoptr(QStoreDatabase) database = NULL;

      g_autoptr(GListModel) views = NULL;
      g_autoptr(GStrvBuilder) names = g_strv_builder_new ();

      if (!(database = qstore_database_open (tool->store_uri, QSTORE_OPEN_NONE, &error)))
        return qstore_tool_fail (error);
      /* Opening refills what it does not adopt, so only views that cannot
       * be computed now (or were left stale) are listed. */
      views = qstore_database_list_materialized_views (database);
      for (guint i = 0; i < g_list_model_get_n_items (views); i++)
        {
          g_autoptr(QStoreMaterializedView) view = g_list_model_get_item (views, i);

          if (qstore_materialized_view_get_stale (view))
            {
              g_autofree char *name = g_strdup_printf ("%s.%s",
                                                       qstore_materialized_view_get_schema (view),
                                                       qstore_materialized_view_get_name (view));
              g_autofree char *lower = g_ascii_strdown (name, -1);

              g_strv_builder_add (names, lower);
            }
        }
      stale_now = g_strv_builder_end (names);
      if (!qstore_database_close (database, &error))
        return qstore_tool_fail (error);
    }

  if (json)
    {
      g_autoptr(JsonNode) root = qstore_tool_stale_report_to_json (report,
                                                                   (const char * const *) stale_now);

      qstore_tool_print_json (root);
    }
  else
    print_text (report, (const char * const *) stale_now);
  return QSTORE_TOOL_EXIT_OK;
}
