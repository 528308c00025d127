/* qstore-tool-staging.c: qstore staging
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <stdio.h>

#include "qstore-tool.h"

/* Opening a database logs its leftovers; this command lists them. */
static void
quiet_log (const char     *domain,
           GLogLevelFlags  level,
           const char     *message,
           gpointer        data)
{
}

static char *
format_time (gint64 ms)
{
  g_autoptr(GDateTime) time = g_date_time_new_from_unix_local (ms / 1000);

  return time != NULL ? g_date_time_format (time, "%Y-%m-%d %H:%M:%S") : g_strdup ("?");
}

static char *
format_age (gint64 ms)
{
  gint64 s = ms / 1000;

  if (s < 60)
    return g_strdup_printf ("%" G_GINT64_FORMAT " s", s);
  if (s < 3600)
    return g_strdup_printf ("%" G_GINT64_FORMAT " min", s / 60);
  if (s < 86400)
    return g_strdup_printf ("%" G_GINT64_FORMAT " h %" G_GINT64_FORMAT " min", s / 3600,
                            (s / 60) % 60);
  return g_strdup_printf ("%" G_GINT64_FORMAT " d %" G_GINT64_FORMAT " h", s / 86400,
                          (s / 3600) % 24);
}

static void
print_plain (QStoreStagingRun *run,
             const char       *prefix)
{
  g_autofree char *tables = g_strjoinv (", ", (char **) qstore_staging_run_get_tables (run));
  g_autofree char *started = format_time (qstore_staging_run_get_started (run));
  g_autofree char *age = NULL;
  gint64 heartbeat_age = qstore_staging_run_get_heartbeat_age (run);

  if (heartbeat_age >= 0)
    age = format_age (heartbeat_age);
  printf ("%s%s\t%s\tstarted %s\theartbeat %s%s\t%s%s\t%s\n", prefix,
          qstore_staging_run_get_target (run), *tables != '\0' ? tables : "(no table)",
          started, age != NULL ? age : "never", age != NULL ? " ago" : "",
          qstore_staging_run_get_resumable (run) ? "resumable" : "not resumable",
          qstore_staging_run_get_swapped (run) ? ", swapped" : "",
          qstore_staging_run_get_reason (run) != NULL ? qstore_staging_run_get_reason (run) : "");
}

/* One run as `qstore staging --json` prints it; the server's
 * GetStagingLeftovers gives the same objects. */
JsonNode *
qstore_tool_staging_run_to_json (QStoreStagingRun *run,
                                 gint64            stale_after_ms,
                                 const char       *action)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  const char * const *tables = qstore_staging_run_get_tables (run);

  json_builder_begin_object (builder);
  if (action != NULL)
    {
      json_builder_set_member_name (builder, "action");
      json_builder_add_string_value (builder, action);
    }
  json_builder_set_member_name (builder, "id");
  json_builder_add_int_value (builder, qstore_staging_run_get_id (run));
  json_builder_set_member_name (builder, "kind");
  json_builder_add_string_value (builder, qstore_staging_run_get_kind (run));
  json_builder_set_member_name (builder, "target");
  json_builder_add_string_value (builder, qstore_staging_run_get_target (run));
  json_builder_set_member_name (builder, "tables");
  json_builder_begin_array (builder);
  for (guint i = 0; tables[i] != NULL; i++)
    json_builder_add_string_value (builder, tables[i]);
  json_builder_end_array (builder);
  json_builder_set_member_name (builder, "started");
  json_builder_add_int_value (builder, qstore_staging_run_get_started (run));
  json_builder_set_member_name (builder, "heartbeat");
  if (qstore_staging_run_get_heartbeat (run) > 0)
    json_builder_add_int_value (builder, qstore_staging_run_get_heartbeat (run));
  else
    json_builder_add_null_value (builder);
  json_builder_set_member_name (builder, "heartbeat_age_ms");
  if (qstore_staging_run_get_heartbeat_age (run) >= 0)
    json_builder_add_int_value (builder, qstore_staging_run_get_heartbeat_age (run));
  else
    json_builder_add_null_value (builder);
  json_builder_set_member_name (builder, "stale_after_ms");
  json_builder_add_int_value (builder, stale_after_ms);
  json_builder_set_member_name (builder, "resumable");
  json_builder_add_boolean_value (builder, qstore_staging_run_get_resumable (run));
  json_builder_set_member_name (builder, "swapped");
  json_builder_add_boolean_value (builder, qstore_staging_run_get_swapped (run));
  json_builder_set_member_name (builder, "droppable");
  json_builder_add_boolean_value (builder, qstore_staging_run_get_droppable (run));
  json_builder_set_member_name (builder, "reason");
  json_builder_add_string_value (builder, qstore_staging_run_get_reason (run));
  json_builder_end_object (builder);
  return json_builder_get_root (builder);
}

static void
print_json (QStoreStagingRun *run,
            gint64            stale_after_ms,
            const char       *action)
{
  g_autoptr(JsonNode) root = qstore_tool_staging_run_to_json (run, stale_after_ms, action);

  qstore_tool_print_json (root);
}

static int
finish (QStoreDatabase *database,
        int             status)
{
  g_autoptr(GError) error = NULL;

  fflush (stdout);
  if (!qstore_database_close (database, &error) && status == QSTORE_TOOL_EXIT_OK)
    return qstore_tool_fail (error);
  return status;
}

int
qstore_tool_staging (QStoreTool  *tool,
                     int          argc,
                     char       **argv)
{
  g_autoptr(GOptionContext) context = NULL;
  g_autoptr(QStoreDatabase) database = NULL;
  g_autoptr(QStoreStagingLeftovers) leftovers = NULL;
  g_autoptr(GPtrArray) swept = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *discard = NULL;
  g_autofree char *threshold = NULL;
  g_auto(GStrv) rest = NULL;
  const char *command = argv[0];
  gboolean json = FALSE, sweep = FALSE;
  guint handler;
  int status;
  const GOptionEntry entries[] = {
    { "json", 0, 0, G_OPTION_ARG_NONE, &json,
      "Print one JSON object per run", NULL },
    { "sweep", 0, 0, G_OPTION_ARG_NONE, &sweep,
      "Drop the staging tables of the droppable runs (heartbeat older than the threshold, "
      "and not resumable); the tables they replace are never touched", NULL },
    { "discard", 0, 0, G_OPTION_ARG_STRING, &discard,
      "Drop the staging tables of the run into TABLE, resumable or not", "TABLE" },
    { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &rest, NULL, NULL },
    G_OPTION_ENTRY_NULL
  };

  context = qstore_tool_option_context_new (command, "",
                                            "List the staged imports (qstore import --mode "
                                            "replace) the store records as running or "
                                            "interrupted: the table each replaces, its staging "
                                            "tables, when it started, how old its heartbeat is, "
                                            "whether it is resumable, and whether its staging "
                                            "tables may be dropped, and why. A run is droppable "
                                            "when its heartbeat is older than the threshold "
                                            "(QSTORE_STAGING_STALE_MINUTES, else PRAGMA "
                                            "qstore.staging_stale_minutes, else 30 minutes) and "
                                            "it is not resumable. Listing opens the store "
                                            "read-only.");
  g_option_context_add_main_entries (context, entries, NULL);
  status = qstore_tool_parse_options (context, command, &argc, &argv);
  if (status != QSTORE_TOOL_EXIT_OK)
    return status;
  if (rest != NULL && rest[0] != NULL)
    return qstore_tool_usage_error (command, "Unexpected argument “%s”", rest[0]);
  if (sweep && discard != NULL)
    return qstore_tool_usage_error (command, "Give --sweep or --discard, not both");
  if (tool->store_uri == NULL)
    return qstore_tool_usage_error (command,
                                    "No store given: pass --store URI before the command "
                                    "(such as --store lmdb:/path/to/dir) or set QSTORE_STORE");

  handler = g_log_set_handler ("qstore", G_LOG_LEVEL_MESSAGE, quiet_log, NULL);
  database = qstore_database_open (tool->store_uri,
                                   sweep || discard != NULL ? QSTORE_OPEN_NONE : QSTORE_OPEN_READ_ONLY,
                                   &error);
  g_log_remove_handler ("qstore", handler);
  if (database == NULL)
    return qstore_tool_fail (error);

  if (discard != NULL)
    {
      if (!qstore_staging_discard (database, discard, &error))
        return finish (database, qstore_tool_fail (error));
      if (!json)
        printf ("discarded the import into %s\n", discard);
    }
  if (sweep)
    {
      if (!(swept = qstore_staging_sweep (database, &error)))
        return finish (database, qstore_tool_fail (error));
      for (guint i = 0; i < swept->len; i++)
        if (json)
          print_json (swept->pdata[i], qstore_database_get_staging_stale_after_ms (database),
                      "dropped");
        else
          print_plain (swept->pdata[i], "dropped\t");
    }

  if (!(leftovers = qstore_staging_leftovers_read (database, &error)))
    return finish (database, qstore_tool_fail (error));
  if (!json)
    {
      g_autofree char *age = format_age (qstore_staging_leftovers_get_stale_after_ms (leftovers));

      printf ("stale threshold %s; %u run%s, %u droppable\n", age,
              g_list_model_get_n_items (G_LIST_MODEL (leftovers)),
              g_list_model_get_n_items (G_LIST_MODEL (leftovers)) == 1 ? "" : "s",
              qstore_staging_leftovers_get_n_droppable (leftovers));
    }
  for (guint i = 0; i < g_list_model_get_n_items (G_LIST_MODEL (leftovers)); i++)
    {
      g_autoptr(QStoreStagingRun) run = g_list_model_get_item (G_LIST_MODEL (leftovers), i);

      if (json)
        print_json (run, qstore_staging_leftovers_get_stale_after_ms (leftovers), NULL);
      else
        print_plain (run, "");
    }
  return finish (database, QSTORE_TOOL_EXIT_OK);
}
