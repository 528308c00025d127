/* mis-versioned-plugin.c: a provider plugin qstore must refuse to load
 *
 * Built twice: once claiming the plugin API version after this qstore's
 * (WRONG_API_VERSION), once declaring none. Neither may get as far as
 * g_io_module_load(), which here stops the process the way code built
 * against other interfaces could.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include <qstore.h>

#ifdef WRONG_API_VERSION
G_MODULE_EXPORT extern const guint qstore_plugin_api_version;
G_MODULE_EXPORT const guint qstore_plugin_api_version = QSTORE_PLUGIN_API_VERSION + 1;
#endif

G_MODULE_EXPORT void
g_io_module_load (GIOModule *module)
{
  fputs ("mis-versioned plugin loaded\n", stderr);
  abort ();
}

G_MODULE_EXPORT void
g_io_module_unload (GIOModule *module)
{
}

G_MODULE_EXPORT char **
g_io_module_query (void)
{
  return g_strsplit (QSTORE_PROVIDER_EXTENSION_POINT_NAME, "!", 0);
}
