/* qstore-tool-sql.c: qstore sql
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <sqlite3.h>
#include <stdio.h>
#include <string.h>

#include "qstore-tool.h"

/* Splits @text into statements where SQLite says one is complete, so a
 * trigger body's semicolons stay inside it. */
static GPtrArray *
split_statements (const char *text)
{
  GPtrArray *statements = g_ptr_array_new_with_free_func (g_free);
  GString *current = g_string_new (NULL);

  for (const char *p = text; *p != '\0'; p++)
    {
      g_string_append_c (current, *p);
      if (*p == ';' && sqlite3_complete (current->str))
        {
          g_ptr_array_add (statements, g_string_free (current, FALSE));
          current = g_string_new (NULL);
        }
    }

  /* The last statement needs no semicolon; a trailing comment or blank
   * is no statement. */
  g_string_append_c (current, ';');
  if (sqlite3_complete (current->str))
    {
      g_string_truncate (current, current->len - 1);
      g_ptr_array_add (statements, g_string_free (current, FALSE));
    }
  else
    {
      g_string_truncate (current, current->len - 1);
      if (g_strstrip (current->str)[0] != '\0')
        g_ptr_array_add (statements, g_string_free (current, FALSE));
      else
        g_string_free (current, TRUE);
    }

  return statements;
}

/* sqlite3's list mode: NULL is empty, reals as SQLite prints them, text
 * and blobs as their bytes. */
static void
print_value (GVariant *value)
{
  if (qstore_value_is_null (value))
    return;

  if (g_variant_is_of_type (value, G_VARIANT_TYPE_INT64))
    printf ("%" G_GINT64_FORMAT, g_variant_get_int64 (value));
  else if (g_variant_is_of_type (value, G_VARIANT_TYPE_DOUBLE))
    {
      char buffer[64];

      sqlite3_snprintf (sizeof buffer, buffer, "%!.15g", g_variant_get_double (value));
      fputs (buffer, stdout);
    }
  else if (g_variant_is_of_type (value, G_VARIANT_TYPE_STRING))
    fputs (g_variant_get_string (value, NULL), stdout);
  else if (g_variant_is_of_type (value, G_VARIANT_TYPE_BYTESTRING))
    {
      gsize len;
      const guint8 *data = g_variant_get_fixed_array (value, &len, 1);

      fwrite (data, 1, len, stdout);
    }
}

static void
print_result (QStoreResult *result,
              gboolean      json)
{
  guint n_columns = qstore_result_get_n_columns (result);

  for (guint row = 0; row < qstore_result_get_n_rows (result); row++)
    {
      if (json)
        {
          g_autoptr(GString) line = g_string_new ("[");

          for (guint column = 0; column < n_columns; column++)
            {
              g_autoptr(GVariant) value = qstore_result_get_value (result, row, column);

              if (column > 0)
                g_string_append_c (line, ',');
              qstore_tool_append_json_value (line, value);
            }
          g_string_append (line, "]\n");
          fputs (line->str, stdout);
        }
      else
        {
          for (guint column = 0; column < n_columns; column++)
            {
              g_autoptr(GVariant) value = qstore_result_get_value (result, row, column);

              if (column > 0)
                fputc ('\t', stdout);
              print_value (value);
            }
          fputc ('\n', stdout);
        }
    }
}

/* Keeps a message the library logs, to be told later or not at all. */
static void
hold_message (const char     *domain,
              GLogLevelFlags  level,
              const char     *message,
              gpointer        data)
{
  g_ptr_array_add (data, g_strdup (message));
}

int
qstore_tool_sql (QStoreTool  *tool,
                 int          argc,
                 char       **argv)
{
  g_autoptr(GPtrArray) held = g_ptr_array_new_with_free_func (g_free);
  guint handler;
  g_autoptr(GOptionContext) context = NULL;
  g_autoptr(QStoreDatabase) database = NULL;
  g_autoptr(GError) error = NULL;
  g_auto(GStrv) sql = NULL;
  const char *command = argv[0];
  gboolean json = FALSE;
  int status;
  const GOptionEntry entries[] = {
    { "json", 0, 0, G_OPTION_ARG_NONE, &json,
      "Print each row as one JSON array (blobs as {\"$blob\": \"<base64>\"})", NULL },
    { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_STRING_ARRAY, &sql, NULL, NULL },
    G_OPTION_ENTRY_NULL
  };

  context = qstore_tool_option_context_new (command, "SQL…",
                                            "Run SQL statements on the store's tables, in "
                                            "order, and print the rows they return, one "
                                            "line each, values separated by tabs (NULL "
                                            "prints as nothing). Each statement commits "
                                            "unless a transaction is open. When every "
                                            "statement only reads (as SQLite classifies "
                                            "them), the store is opened read-only, so it "
                                            "works beside a process writing it.");
  g_option_context_add_main_entries (context, entries, NULL);
  status = qstore_tool_parse_options (context, command, &argc, &argv);
  if (status != QSTORE_TOOL_EXIT_OK)
    return status;
  if (sql == NULL || sql[0] == NULL)
    return qstore_tool_usage_error (command, "No SQL given");
  if (tool->store_uri == NULL)
    return qstore_tool_usage_error (command,
                                    "No store given: pass --store URI before the command "
                                    "(such as --store lmdb:/path/to/dir) or set QSTORE_STORE");

  /* Reads need no writer: open read-only first, and for writing only
   * when a statement writes. What the first open says is said once: by
   * the handle that runs the statements. */
  handler = g_log_set_handler ("qstore", G_LOG_LEVEL_MESSAGE, hold_message, held);
  database = qstore_database_open (tool->store_uri, QSTORE_OPEN_READ_ONLY, NULL);
  g_log_remove_handler ("qstore", handler);
  for (guint i = 0; database != NULL && sql[i] != NULL; i++)
    if (!qstore_database_is_read_only_sql (database, sql[i]))
      g_clear_object (&database);
  if (database != NULL)
    for (guint i = 0; i < held->len; i++)
      g_log ("qstore", G_LOG_LEVEL_MESSAGE, "%s", (const char *) g_ptr_array_index (held, i));
  if (database == NULL &&
      !(database = qstore_database_open (tool->store_uri, QSTORE_OPEN_NONE, &error)))
    return qstore_tool_fail (error);

  for (guint i = 0; sql[i] != NULL; i++)
    {
      g_autoptr(GPtrArray) statements = split_statements (sql[i]);

      for (guint k = 0; k < statements->len; k++)
        {
          g_autoptr(QStoreResult) result = NULL;

          result = qstore_database_query (database, g_ptr_array_index (statements, k), NULL,
                                          &error);
          if (result == NULL)
            {
              status = qstore_tool_fail (error);
              qstore_database_close (database, NULL);
              return status;
            }
          print_result (result, json);
        }
    }

  fflush (stdout);
  if (!qstore_database_close (database, &error))
    return qstore_tool_fail (error);
  return QSTORE_TOOL_EXIT_OK;
}
