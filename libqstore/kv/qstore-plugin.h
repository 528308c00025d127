/* qstore-plugin.h: what a provider plugin declares to be loaded
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(QSTORE_INSIDE) && !defined(QSTORE_COMPILATION)
# error "Only <qstore.h> can be included directly."
#endif

#include <gmodule.h>

G_BEGIN_DECLS

/**
 * QSTORE_PLUGIN_API_VERSION:
 *
 * The version of the plugin interface of this qstore: of
 * [iface@Provider], [iface@KV], [class@Iter], [class@Snapshot] and
 * the rules they follow. It changes when a plugin built against an
 * older qstore could no longer work with this one.
 *
 * A plugin records the version it was built for with
 * %QSTORE_PLUGIN_DEFINE_API_VERSION; qstore refuses to load a plugin
 * whose version differs from its own, or that records none, with a
 * message that names the plugin file and both versions.
 */
#define QSTORE_PLUGIN_API_VERSION 1

/**
 * QSTORE_PLUGIN_API_VERSION_SYMBOL:
 *
 * The name of the symbol, a `const guint`, that
 * %QSTORE_PLUGIN_DEFINE_API_VERSION exports from a plugin and that
 * qstore reads before it lets the plugin register anything.
 */
#define QSTORE_PLUGIN_API_VERSION_SYMBOL "qstore_plugin_api_version"

/**
 * QSTORE_PLUGIN_DEFINE_API_VERSION:
 *
 * Records in a provider plugin the plugin API version it is built
 * for, %QSTORE_PLUGIN_API_VERSION. Put it once at file scope, in the
 * file that defines `g_io_module_load()`:
 *
 * ```c
 * QSTORE_PLUGIN_DEFINE_API_VERSION;
 * ```
 */
#define QSTORE_PLUGIN_DEFINE_API_VERSION \
  G_MODULE_EXPORT extern const guint qstore_plugin_api_version; \
  G_MODULE_EXPORT const guint qstore_plugin_api_version = QSTORE_PLUGIN_API_VERSION

G_END_DECLS
