/* qstore-plugin-loader-private.h: loading provider plugins
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

/* Loads the GIO modules of @dir whose file name is not in @seen (the
 * first directory to load a name wins, as GIO's
 * G_IO_MODULE_SCOPE_BLOCK_DUPLICATES) and adds their names to it.
 * A module whose plugin API version is not this qstore's is not loaded:
 * its message is printed and added to @refusals. */
void qstore_plugin_load_directory (const char *dir,
                                   GHashTable *seen,
                                   GPtrArray  *refusals);

G_END_DECLS
