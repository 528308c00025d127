/* qstore-lmdb-module.c: the GIO module entry points of the LMDB provider
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <gio/gio.h>

#include <qstore.h>

#include "qstore-lmdb-provider.h"

QSTORE_PLUGIN_DEFINE_API_VERSION;

G_MODULE_EXPORT void
g_io_module_load (GIOModule *module)
{
  /* Open environments live in process-wide state, and liblmdb must not be
   * unloaded under them: keep the module loaded once it was used. */
  g_type_module_use (G_TYPE_MODULE (module));

  qstore_lmdb_register_types (module);
}

G_MODULE_EXPORT void
g_io_module_unload (GIOModule *module)
{
}

G_MODULE_EXPORT char **
g_io_module_query (void)
{
  char *extension_points[] = {
    (char *) QSTORE_PROVIDER_EXTENSION_POINT_NAME,
    NULL
  };

  return g_strdupv (extension_points);
}
