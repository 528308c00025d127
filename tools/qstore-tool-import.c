/* qstore-tool-import.c: qstore import
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gio/gunixinputstream.h>

#include "qstore-tool.h"

typedef struct
{
  gint64  started;      /* monotonic */
  gint64  last_print;
  gint64  size;
  gboolean printed;
} Progress;

static char *
format_bytes (gint64 bytes)
{
  return g_format_size_full (bytes, G_FORMAT_SIZE_DEFAULT);
}

static double
elapsed_seconds (const Progress *progress)
{
  return (g_get_monotonic_time () - progress->started) / (double) G_USEC_PER_SEC;
}

/* On a terminal only, and at most four times a second. */
static void
on_progress (QStoreImport *import,
             guint64       rows,
             guint64       bytes_read,
             Progress     *progress)
{
  gint64 now = g_get_monotonic_time ();
  g_autofree char *read = format_bytes (bytes_read);
  g_autofree char *size = progress->size >= 0 ? format_bytes (progress->size) : NULL;
  double seconds = elapsed_seconds (progress);

  if (now - progress->last_print < G_USEC_PER_SEC / 4)
    return;
  progress->last_print = now;
  progress->printed = TRUE;
  printf ("\r\033[K%" G_GUINT64_FORMAT " rows  %.0f rows/s  %s%s%s", rows,
          seconds > 0 ? rows / seconds : 0.0, read, size ? " / " : " read", size ? size : "");
  fflush (stdout);
}

/* SIGINT and SIGTERM cancel the import, which then cleans up as for a
 * failure; a second one ends the process at once. A thread waits for
 * them: cancelling is not something a signal handler may do. */
static gpointer
wait_for_signals (gpointer data)
{
  GCancellable *cancellable = data;
  sigset_t set;
  int signum;

  sigemptyset (&set);
  sigaddset (&set, SIGINT);
  sigaddset (&set, SIGTERM);
  if (sigwait (&set, &signum) != 0)
    return NULL;
  g_cancellable_cancel (cancellable);
  if (sigwait (&set, &signum) == 0)
    _exit (128 + signum);
  return NULL;
}

static void
catch_signals (GCancellable *cancellable)
{
  sigset_t set;

  sigemptyset (&set);
  sigaddset (&set, SIGINT);
  sigaddset (&set, SIGTERM);
  pthread_sigmask (SIG_BLOCK, &set, NULL);
  g_thread_unref (g_thread_new ("signals", wait_for_signals, cancellable));
}

static void
print_summary_json (QStoreImport *import,
                    gboolean      ok,
                    const GError *error,
                    double        seconds)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autoptr(JsonNode) root = NULL;
  guint64 rows = qstore_import_get_rows (import);
  const char *staging = qstore_import_get_staging_table (import);

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "ok");
  json_builder_add_boolean_value (builder, ok);
  json_builder_set_member_name (builder, "table");
  json_builder_add_string_value (builder, qstore_import_get_table (import));
  json_builder_set_member_name (builder, "mode");
  json_builder_add_string_value (builder, qstore_import_get_mode (import) == QSTORE_IMPORT_MODE_REPLACE
                                          ? "replace" : "append");
  json_builder_set_member_name (builder, "format");
  json_builder_add_string_value (builder, qstore_import_get_format (import) == QSTORE_IMPORT_FORMAT_JSONL
                                          ? "jsonl" : "csv");
  json_builder_set_member_name (builder, "atomic");
  json_builder_add_boolean_value (builder, qstore_import_get_atomic (import));
  json_builder_set_member_name (builder, "resumed");
  json_builder_add_boolean_value (builder, qstore_import_get_resume (import));
  json_builder_set_member_name (builder, "rows");
  json_builder_add_int_value (builder, rows);
  json_builder_set_member_name (builder, "bytes");
  json_builder_add_int_value (builder, qstore_import_get_bytes_read (import));
  json_builder_set_member_name (builder, "seconds");
  json_builder_add_double_value (builder, seconds);
  json_builder_set_member_name (builder, "rows_per_second");
  json_builder_add_double_value (builder, seconds > 0 ? rows / seconds : 0);
  json_builder_set_member_name (builder, "staging_table");
  if (staging != NULL)
    json_builder_add_string_value (builder, staging);
  else
    json_builder_add_null_value (builder);
  if (!ok)
    {
      const char *name = qstore_import_get_error_column_name (import);

      json_builder_set_member_name (builder, "error");
      json_builder_add_string_value (builder, error->message);
      json_builder_set_member_name (builder, "line");
      if (qstore_import_get_error_line (import) > 0)
        json_builder_add_int_value (builder, qstore_import_get_error_line (import));
      else
        json_builder_add_null_value (builder);
      json_builder_set_member_name (builder, "column");
      if (qstore_import_get_error_column (import) > 0)
        json_builder_add_int_value (builder, qstore_import_get_error_column (import));
      else
        json_builder_add_null_value (builder);
      json_builder_set_member_name (builder, "column_name");
      if (name != NULL)
        json_builder_add_string_value (builder, name);
      else
        json_builder_add_null_value (builder);
      json_builder_set_member_name (builder, "rows_kept");
      json_builder_add_int_value (builder, qstore_import_get_rows_kept (import));
    }
  json_builder_end_object (builder);
  root = json_builder_get_root (builder);
  qstore_tool_print_json (root);
}

static gboolean
parse_mode (const char        *text,
            QStoreImportMode  *mode)
{
  if (g_str_equal (text, "append"))
    *mode = QSTORE_IMPORT_MODE_APPEND;
  else if (g_str_equal (text, "replace"))
    *mode = QSTORE_IMPORT_MODE_REPLACE;
  else
    return FALSE;
  return TRUE;
}

static gboolean
parse_format (const char          *text,
              QStoreImportFormat  *format)
{
  if (g_str_equal (text, "csv"))
    *format = QSTORE_IMPORT_FORMAT_CSV;
  else if (g_str_equal (text, "jsonl"))
    *format = QSTORE_IMPORT_FORMAT_JSONL;
  else
    return FALSE;
  return TRUE;
}

/* The input: a file, or standard input for `-`. */
static GInputStream *
open_input (const char  *path,
            char       **name,
            gint64      *size,
            GError     **error)
{
  GInputStream *input;
  struct stat st;

  if (g_str_equal (path, "-"))
    {
      *name = g_strdup ("standard input");
      *size = fstat (STDIN_FILENO, &st) == 0 && S_ISREG (st.st_mode) ? st.st_size : -1;
      return g_unix_input_stream_new (STDIN_FILENO, FALSE);
    }
  else
    {
      g_autoptr(GFile) file = g_file_new_for_commandline_arg (path);
      g_autoptr(GFileInfo) info = NULL;
      g_autoptr(GError) local_error = NULL;

      *name = g_strdup (path);
      if (!(input = G_INPUT_STREAM (g_file_read (file, NULL, &local_error))))
        {
          g_set_error (error, QSTORE_ERROR,
                       g_error_matches (local_error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND)
                       ? QSTORE_ERROR_NOT_FOUND : QSTORE_ERROR_IO,
                       "Cannot read “%s”: %s", path, local_error->message);
          return NULL;
        }
      info = g_file_input_stream_query_info (G_FILE_INPUT_STREAM (input),
                                             G_FILE_ATTRIBUTE_STANDARD_SIZE, NULL, NULL);
      *size = info != NULL ? g_file_info_get_size (info) : -1;
      return input;
    }
}

int
qstore_tool_import (QStoreTool  *tool,
                    int          argc,
                    char       **argv)
{
  g_autoptr(GOptionContext) context = NULL;
  g_autoptr(QStoreDatabase) database = NULL;
  g_autoptr(QStoreImport) import = NULL;
  g_autoptr(GInputStream) input = NULL;
  g_autoptr(GCancellable) cancellable = g_cancellable_new ();
  g_autoptr(GError) error = NULL;
  g_autofree char *mode_text = NULL;
  g_autofree char *format_text = NULL;
  g_autofree char *columns_text = NULL;
  g_autofree char *name = NULL;
  g_auto(GStrv) rest = NULL;
  g_auto(GStrv) columns = NULL;
  const char *command = argv[0];
  gboolean no_atomic = FALSE, header = FALSE, no_header = FALSE, resume = FALSE, json = FALSE;
  QStoreImportMode mode = QSTORE_IMPORT_MODE_APPEND;
  QStoreImportFormat format = QSTORE_IMPORT_FORMAT_CSV;
  Progress progress = { 0 };
  gboolean ok, terminal;
  double seconds;
  int status;
  const GOptionEntry entries[] = {
    { "mode", 0, 0, G_OPTION_ARG_STRING, &mode_text,
      "append (the default): add the rows to the table's; replace: load them into a staging "
      "table, then swap them in for the table's rows in one short transaction", "MODE" },
    { "format", 0, 0, G_OPTION_ARG_STRING, &format_text,
      "csv (RFC 4180) or jsonl (one JSON object or array per line); by default jsonl for "
      "FILE ending in .jsonl, .ndjson or .json, else csv", "FORMAT" },
    { "no-atomic", 0, 0, G_OPTION_ARG_NONE, &no_atomic,
      "Commit rows as they land: an append keeps the rows before a failing one, a replace "
      "run stays resumable when it stops", NULL },
    { "header", 0, 0, G_OPTION_ARG_NONE, &header,
      "The first CSV record names the columns (the default)", NULL },
    { "no-header", 0, 0, G_OPTION_ARG_NONE, &no_header,
      "The first CSV record is a row", NULL },
    { "columns", 0, 0, G_OPTION_ARG_STRING, &columns_text,
      "The columns the values of each record go to, in order (a header is then skipped); "
      "the others take their DEFAULT", "A,B,C" },
    { "resume", 0, 0, G_OPTION_ARG_NONE, &resume,
      "Continue the interrupted --mode replace --no-atomic run of TABLE, with its options, "
      "from where its stored rows end in FILE", NULL },
    { "json", 0, 0, G_OPTION_ARG_NONE, &json,
      "Print a JSON summary object at the end", NULL },
    { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &rest, NULL, NULL },
    G_OPTION_ENTRY_NULL
  };

  context = qstore_tool_option_context_new (command, "TABLE FILE|-",
                                            "Load rows into TABLE from FILE (- reads standard "
                                            "input). Values take the columns' affinity as an "
                                            "INSERT gives them; in CSV an empty unquoted field "
                                            "is NULL, \"\" the empty text; in JSON lines "
                                            "{\"$blob\": \"<base64>\"} is a blob. A row that "
                                            "cannot be stored stops the import with its line "
                                            "and column, and nothing of the import is kept "
                                            "unless --no-atomic. On a terminal a progress line "
                                            "shows rows, rows/s and bytes read.");
  g_option_context_add_main_entries (context, entries, NULL);
  status = qstore_tool_parse_options (context, command, &argc, &argv);
  if (status != QSTORE_TOOL_EXIT_OK)
    return status;
  if (rest == NULL || g_strv_length (rest) != 2)
    return qstore_tool_usage_error (command, "Give a TABLE and a FILE (- for standard input)");
  if (mode_text != NULL && !parse_mode (mode_text, &mode))
    return qstore_tool_usage_error (command, "Unknown mode “%s”: append or replace", mode_text);
  if (format_text != NULL && !parse_format (format_text, &format))
    return qstore_tool_usage_error (command, "Unknown format “%s”: csv or jsonl", format_text);
  if (format_text == NULL &&
      (g_str_has_suffix (rest[1], ".jsonl") || g_str_has_suffix (rest[1], ".ndjson") ||
       g_str_has_suffix (rest[1], ".json")))
    format = QSTORE_IMPORT_FORMAT_JSONL;
  if (header && no_header)
    return qstore_tool_usage_error (command, "Give --header or --no-header, not both");
  if ((header || no_header) && format == QSTORE_IMPORT_FORMAT_JSONL)
    return qstore_tool_usage_error (command, "JSON lines have no header: leave out --%s",
                                    header ? "header" : "no-header");
  if (resume && (mode_text != NULL || format_text != NULL || columns_text != NULL ||
                 header || no_header || no_atomic))
    return qstore_tool_usage_error (command, "--resume continues the run with the options it "
                                    "started with: give only TABLE and FILE");
  if (columns_text != NULL)
    {
      columns = g_strsplit (columns_text, ",", -1);
      for (guint i = 0; columns[i] != NULL; i++)
        if (*g_strstrip (columns[i]) == '\0')
          return qstore_tool_usage_error (command, "--columns names an empty column");
    }
  if (tool->store_uri == NULL)
    return qstore_tool_usage_error (command,
                                    "No store given: pass --store URI before the command "
                                    "(such as --store lmdb:/path/to/dir) or set QSTORE_STORE");

  if (!(input = open_input (rest[1], &name, &progress.size, &error)) ||
      !(database = qstore_database_open (tool->store_uri, QSTORE_OPEN_NONE, &error)))
    return qstore_tool_fail (error);

  import = qstore_import_new (database, rest[0]);
  qstore_import_set_mode (import, resume ? QSTORE_IMPORT_MODE_REPLACE : mode);
  qstore_import_set_format (import, format);
  qstore_import_set_atomic (import, !(no_atomic || resume));
  qstore_import_set_header (import, !no_header);
  qstore_import_set_columns (import, (const char * const *) columns);
  qstore_import_set_resume (import, resume);
  qstore_import_set_source_name (import, name);
  qstore_import_set_source_size (import, progress.size);

  terminal = isatty (STDOUT_FILENO);
  if (terminal && !json)
    g_signal_connect (import, "progress", G_CALLBACK (on_progress), &progress);
  catch_signals (cancellable);

  progress.started = g_get_monotonic_time ();
  ok = qstore_import_run (import, input, cancellable, &error);
  seconds = elapsed_seconds (&progress);
  if (progress.printed)
    printf ("\r\033[K");
  if (ok && terminal && !json)
    printf ("%" G_GUINT64_FORMAT " rows %s “%s” in %.1f s (%.0f rows/s)\n",
            qstore_import_get_rows (import),
            qstore_import_get_mode (import) == QSTORE_IMPORT_MODE_REPLACE ? "replaced the rows of"
                                                                          : "imported into",
            rest[0], seconds, seconds > 0 ? qstore_import_get_rows (import) / seconds : 0.0);
  if (json)
    print_summary_json (import, ok, error, seconds);
  fflush (stdout);

  if (!ok)
    {
      status = qstore_tool_fail (error);
      qstore_database_close (database, NULL);
      return status;
    }
  if (!qstore_database_close (database, &error))
    return qstore_tool_fail (error);
  return QSTORE_TOOL_EXIT_OK;
}
