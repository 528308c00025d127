/* qstore-params-private.h: a statement's parameters from a GVariant
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <sqlite3.h>

#include <glib.h>

G_BEGIN_DECLS

/* Binds @params: a tuple with one value per parameter of @stmt, an
 * `a{sv}` dictionary with one value per named parameter (keyed with or
 * without its `:`, `@` or `$`), or %NULL (every parameter stays NULL). */
gboolean  qstore_params_bind  (sqlite3_stmt  *stmt,
                               GVariant      *params,
                               GError       **error);

G_END_DECLS
