/* qstore-tool-catalog.c: qstore catalog
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "qstore-tool.h"

static const char *
kind_name (QStoreCatalogEntry *entry)
{
  switch (qstore_catalog_entry_get_kind (entry))
    {
    case QSTORE_CATALOG_KEY_TABLE:
      if (qstore_catalog_entry_is_staging_table (entry))
        return "staging_table";
      if (qstore_catalog_entry_is_materialized_view_contents (entry))
        return "materialized_view_contents";
      /* An unsafe window's state, not one of the user's tables. */
      if (qstore_unsafe_window_is_internal_table_name (qstore_catalog_entry_get_name (entry)))
        return "unsafe_window_table";
      return "table";
    case QSTORE_CATALOG_KEY_VIEW:
      return "view";
    case QSTORE_CATALOG_KEY_MATERIALIZED_VIEW:
      return "materialized_view";
    case QSTORE_CATALOG_KEY_META:
      return "meta";
    case QSTORE_CATALOG_KEY_INVALID:
    default:
      return "invalid";
    }
}

/* DDL on one line: its line breaks as spaces, other control characters
 * escaped as `qstore kv` prints text. --json gives it exactly. */
static char *
one_line (const char *text)
{
  g_autofree char *flat = g_strchomp (g_strdup (text));

  g_strdelimit (flat, "\n", ' ');
  return qstore_tool_format_text ((const guint8 *) flat, strlen (flat));
}

static void
print_plain (QStoreCatalogEntry *entry)
{
  const char *schema = qstore_catalog_entry_get_schema (entry);
  const char *ddl = qstore_catalog_entry_get_ddl (entry);
  const char *error = qstore_catalog_entry_get_error (entry);
  g_autofree char *text = one_line (ddl != NULL ? ddl : qstore_catalog_entry_get_value (entry));
  g_autofree char *name = NULL;

  if (schema != NULL)
    name = g_strdup_printf ("%s.%s", schema, qstore_catalog_entry_get_name (entry));
  else
    name = g_strdup (qstore_catalog_entry_get_name (entry));

  printf ("%s\t%s\t%s", kind_name (entry), name, text);
  if (error != NULL)
    {
      g_autofree char *message = one_line (error);

      printf ("\terror: %s", message);
    }
  putchar ('\n');
}

/* One entry as `qstore catalog --json` prints it; the server's
 * GetCatalog gives the same objects. */
static JsonNode *
entry_to_json (QStoreCatalogEntry *entry)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  const char *schema = qstore_catalog_entry_get_schema (entry);
  const char *ddl = qstore_catalog_entry_get_ddl (entry);
  const char *error = qstore_catalog_entry_get_error (entry);

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "kind");
  json_builder_add_string_value (builder, kind_name (entry));
  json_builder_set_member_name (builder, "schema");
  if (schema != NULL)
    json_builder_add_string_value (builder, schema);
  else
    json_builder_add_null_value (builder);
  json_builder_set_member_name (builder, "name");
  json_builder_add_string_value (builder, qstore_catalog_entry_get_name (entry));
  if (ddl != NULL)
    {
      json_builder_set_member_name (builder, "ddl");
      json_builder_add_string_value (builder, ddl);
    }
  else
    {
      json_builder_set_member_name (builder, "value");
      json_builder_add_string_value (builder, qstore_catalog_entry_get_value (entry));
    }
  if (qstore_catalog_entry_get_body (entry) != NULL)
    {
      json_builder_set_member_name (builder, "body");
      json_builder_add_string_value (builder, qstore_catalog_entry_get_body (entry));
    }
  if (error != NULL)
    {
      json_builder_set_member_name (builder, "error");
      json_builder_add_string_value (builder, error);
    }
  json_builder_end_object (builder);
  return json_builder_get_root (builder);
}

/* The catalog's entries as `qstore catalog` lists them: the tables
 * first, then the bookkeeping of staged imports, a section of its own. */
static GPtrArray *
list_entries (QStoreProvider  *provider,
              GError         **error)
{
  g_autoptr(GListModel) entries = qstore_catalog_list_entries (provider, error);
  GPtrArray *ordered;

  if (entries == NULL)
    return NULL;
  ordered = g_ptr_array_new_with_free_func (g_object_unref);
  for (guint pass = 0; pass < 2; pass++)
    for (guint i = 0; i < g_list_model_get_n_items (entries); i++)
      {
        g_autoptr(QStoreCatalogEntry) entry = g_list_model_get_item (entries, i);

        if (qstore_catalog_entry_is_staging_table (entry) == (pass == 1))
          g_ptr_array_add (ordered, g_steal_pointer (&entry));
      }
  return ordered;
}

/**
 * qstore_tool_catalog_to_json:
 * @provider: a store opened read-only
 * @error: return location for a #GError
 *
 * The catalog's entries in the order `qstore catalog` lists them, each
 * the object its `--json` prints.
 *
 * Returns: (transfer full): a JSON array, or %NULL with @error set
 */
JsonNode *
qstore_tool_catalog_to_json (QStoreProvider  *provider,
                             GError         **error)
{
  g_autoptr(GPtrArray) entries = list_entries (provider, error);
  JsonArray *array;
  JsonNode *root;

  if (entries == NULL)
    return NULL;
  array = json_array_sized_new (entries->len);
  for (guint i = 0; i < entries->len; i++)
    json_array_add_element (array, entry_to_json (g_ptr_array_index (entries, i)));
  root = json_node_init_array (json_node_alloc (), array);
  json_array_unref (array);
  return root;
}

int
qstore_tool_catalog (QStoreTool  *tool,
                     int          argc,
                     char       **argv)
{
  g_autoptr(GOptionContext) context = NULL;
  g_autoptr(QStoreProvider) provider = NULL;
  g_autoptr(GError) error = NULL;
  g_auto(GStrv) rest = NULL;
  const char *command = argv[0];
  gboolean json = FALSE;
  int status;
  const GOptionEntry entries_options[] = {
    { "json", 0, 0, G_OPTION_ARG_NONE, &json,
      "Print one JSON object per entry: {\"kind\": …, \"schema\": …, \"name\": …, "
      "\"ddl\": …} (meta entries: \"value\" instead of \"ddl\"; materialized views: "
      "their query as \"body\" too)", NULL },
    { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &rest, NULL, NULL },
    G_OPTION_ENTRY_NULL
  };

  context = qstore_tool_option_context_new (command, "",
                                            "List the entries of the store's catalog in key "
                                            "order, one per line: kind, name and DDL (or "
                                            "value), separated by tabs. The table holding a "
                                            "materialized view's rows is of kind "
                                            "materialized_view_contents, a table an unsafe "
                                            "window keeps its state in of kind "
                                            "unsafe_window_table. The staging tables of "
                                            "imports, and their marker table, come last, of kind "
                                            "staging_table. The store is opened "
                                            "read-only and nothing in it changes, so this "
                                            "works while another process writes it.");
  g_option_context_add_main_entries (context, entries_options, NULL);
  status = qstore_tool_parse_options (context, command, &argc, &argv);
  if (status != QSTORE_TOOL_EXIT_OK)
    return status;
  if (rest != NULL && rest[0] != NULL)
    return qstore_tool_usage_error (command, "Unexpected argument “%s”", rest[0]);

  status = qstore_tool_open_provider (tool, command, QSTORE_OPEN_READ_ONLY, &provider);
  if (status != QSTORE_TOOL_EXIT_OK)
    return status;

  if (json)
    {
      g_autoptr(JsonNode) root = qstore_tool_catalog_to_json (provider, &error);

      if (root == NULL)
        {
          qstore_provider_close_all (provider);
          return qstore_tool_fail (error);
        }
      for (guint i = 0; i < json_array_get_length (json_node_get_array (root)); i++)
        qstore_tool_print_json (json_array_get_element (json_node_get_array (root), i));
    }
  else
    {
      g_autoptr(GPtrArray) entries = list_entries (provider, &error);

      if (entries == NULL)
        {
          qstore_provider_close_all (provider);
          return qstore_tool_fail (error);
        }
      for (guint i = 0; i < entries->len; i++)
        print_plain (g_ptr_array_index (entries, i));
    }

  fflush (stdout);
  qstore_provider_close_all (provider);
  return QSTORE_TOOL_EXIT_OK;
}
