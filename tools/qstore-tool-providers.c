/* qstore-tool-providers.c: qstore providers
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "qstore-tool.h"

/* Capability names in flag order, as `atomic_batch` (the enum nicks use
 * dashes; the command prints what a C or SQL user would type). */
static GPtrArray *
capability_names (QStoreCapabilities capabilities)
{
  g_autoptr(GFlagsClass) klass = g_type_class_ref (QSTORE_TYPE_CAPABILITIES);
  GPtrArray *names = g_ptr_array_new_with_free_func (g_free);

  for (guint i = 0; i < klass->n_values; i++)
    {
      const GFlagsValue *value = &klass->values[i];

      if (value->value != 0 && (capabilities & value->value) == value->value)
        g_ptr_array_add (names, g_strdelimit (g_strdup (value->value_nick), "-", '_'));
    }
  return names;
}

int
qstore_tool_providers (QStoreTool  *tool,
                       int          argc,
                       char       **argv)
{
  g_autoptr(GOptionContext) context = NULL;
  g_auto(GStrv) names = NULL;
  g_auto(GStrv) rest = NULL;
  const char *command = argv[0];
  gboolean json = FALSE;
  int width = 0;
  int status;
  const GOptionEntry entries[] = {
    { "json", 0, 0, G_OPTION_ARG_NONE, &json,
      "Print one JSON object per provider: {\"name\": …, \"capabilities\": […]}", NULL },
    { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &rest, NULL, NULL },
    G_OPTION_ENTRY_NULL
  };

  context = qstore_tool_option_context_new (command, "",
                                            "List the storage providers that can be loaded, "
                                            "with their capabilities. No store is opened.");
  g_option_context_add_main_entries (context, entries, NULL);
  status = qstore_tool_parse_options (context, command, &argc, &argv);
  if (status != QSTORE_TOOL_EXIT_OK)
    return status;
  if (rest != NULL && rest[0] != NULL)
    return qstore_tool_usage_error (command, "Unexpected argument “%s”", rest[0]);

  /* Nothing to list is a failure: no store can be opened. */
  names = qstore_list_providers ();
  if (names[0] == NULL)
    return qstore_tool_fail_message ("no providers found (QSTORE_PLUGIN_DIR adds plugin "
                                     "directories; installed ones are in %s)",
                                     QSTORE_PLUGIN_INSTALL_DIR);

  for (guint i = 0; names[i] != NULL; i++)
    width = MAX (width, (int) strlen (names[i]));

  for (guint i = 0; names[i] != NULL; i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(GPtrArray) caps = NULL;
      QStoreCapabilities capabilities;

      if (!qstore_lookup_provider_capabilities (names[i], &capabilities, &error))
        return qstore_tool_fail (error);
      caps = capability_names (capabilities);

      if (json)
        {
          g_autoptr(JsonBuilder) builder = json_builder_new ();
          g_autoptr(JsonNode) root = NULL;

          json_builder_begin_object (builder);
          json_builder_set_member_name (builder, "name");
          json_builder_add_string_value (builder, names[i]);
          json_builder_set_member_name (builder, "capabilities");
          json_builder_begin_array (builder);
          for (guint j = 0; j < caps->len; j++)
            json_builder_add_string_value (builder, g_ptr_array_index (caps, j));
          json_builder_end_array (builder);
          json_builder_end_object (builder);
          root = json_builder_get_root (builder);
          qstore_tool_print_json (root);
        }
      else
        {
          g_autofree char *list = NULL;

          g_ptr_array_add (caps, NULL);
          list = g_strjoinv (", ", (char **) caps->pdata);
          fprintf (stdout, "%-*s  %s\n", width, names[i], list[0] ? list : "none");
        }
    }
  return QSTORE_TOOL_EXIT_OK;
}
