/* qstore-plugin-loader.c: loading provider plugins, refusing those built
 * for another plugin API version
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <glib/gstdio.h>

#include "qstore-i18n-private.h"
#include "qstore-plugin.h"
#include "qstore-plugin-loader-private.h"

/* The file names GIO takes for modules, as g_io_modules_load_all_in_directory(). */
static gboolean
is_module_name (const char *name)
{
  return g_str_has_prefix (name, "lib") && g_str_has_suffix (name, "." G_MODULE_SUFFIX);
}

/* Opens @path without running any of its code but its constructors, and
 * reads its plugin API version before GIO calls g_io_module_load(): a
 * plugin built for other interfaces must not register types against
 * these. NULL when it may be loaded, else the message that says why not. */
static char *
check_api_version (const char *path)
{
  GModule *module = g_module_open (path, G_MODULE_BIND_LAZY | G_MODULE_BIND_LOCAL);
  gpointer symbol = NULL;
  char *refusal = NULL;

  if (module == NULL)
    return g_strdup_printf (_("Plugin “%s” cannot be opened: %s"), path, g_module_error ());

  if (!g_module_symbol (module, QSTORE_PLUGIN_API_VERSION_SYMBOL, &symbol) || symbol == NULL)
    refusal = g_strdup_printf (_("Plugin “%s” was not loaded: it declares no qstore plugin API "
                                 "version, and this qstore has version %u; rebuild it against "
                                 "this qstore with QSTORE_PLUGIN_DEFINE_API_VERSION"),
                               path, (guint) QSTORE_PLUGIN_API_VERSION);
  else if (*(const guint *) symbol != QSTORE_PLUGIN_API_VERSION)
    refusal = g_strdup_printf (_("Plugin “%s” was not loaded: it was built for qstore plugin "
                                 "API version %u, and this qstore has version %u; rebuild it "
                                 "against this qstore"),
                               path, *(const guint *) symbol, (guint) QSTORE_PLUGIN_API_VERSION);
  g_module_close (module);
  return refusal;
}

static gint
compare_names (gconstpointer a,
               gconstpointer b)
{
  return g_strcmp0 (*(const char * const *) a, *(const char * const *) b);
}

void
qstore_plugin_load_directory (const char *dir,
                              GHashTable *seen,
                              GPtrArray  *refusals)
{
  g_autoptr(GDir) gdir = g_dir_open (dir, 0, NULL);
  g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  const char *name;

  if (gdir == NULL)
    return;
  while ((name = g_dir_read_name (gdir)) != NULL)
    if (is_module_name (name) && !g_hash_table_contains (seen, name))
      g_ptr_array_add (names, g_strdup (name));
  /* In name order, so what loads first does not depend on the file system. */
  g_ptr_array_sort (names, compare_names);

  for (guint i = 0; i < names->len; i++)
    {
      const char *basename = names->pdata[i];
      g_autofree char *path = g_build_filename (dir, basename, NULL);
      g_autofree char *refusal = NULL;
      GIOModule *module;

      refusal = check_api_version (path);
      if (refusal != NULL)
        {
          g_printerr ("qstore: %s\n", refusal);
          g_ptr_array_add (refusals, g_steal_pointer (&refusal));
          continue;
        }

      /* Kept in use, as g_io_modules_load_all_in_directory() keeps them:
       * the types it registers stay valid for the life of the process. */
      module = g_io_module_new (path);
      if (!g_type_module_use (G_TYPE_MODULE (module)))
        {
          g_ptr_array_add (refusals, g_strdup_printf (_("Plugin “%s” failed to load"), path));
          g_printerr ("qstore: %s\n", (const char *) g_ptr_array_index (refusals, refusals->len - 1));
          g_object_unref (module);
          continue;
        }
      g_hash_table_add (seen, g_strdup (basename));
    }
}
