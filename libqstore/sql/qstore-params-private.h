/* qstore-params-private.h: a statement's parameters from GVariants
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <sqlite3.h>

#include "qstore-codec-private.h"

G_BEGIN_DECLS

/* Binds @params: a tuple with one value per parameter of @stmt, an
 * `a{sv}` dictionary with one value per named parameter (keyed with or
 * without its `:`, `@` or `$`), or %NULL (every parameter stays NULL). */
gboolean  qstore_params_bind  (sqlite3_stmt  *stmt,
                               GVariant      *params,
                               GError       **error);

/* What @given (an `x`, `d`, `s`, `ay` or `b`, the NULL maybe, or any of
 * them boxed in `v`; a boolean is 1 or 0) binds as: @value, borrowing
 * from the GVariant returned. NULL with the reason when no SQL value is
 * of its type. */
GVariant *qstore_params_value_of     (GVariant      *given,
                                      QStoreValue   *value,
                                      GError       **error);
/* Whether @key names the parameter @name: exactly (`:x` for `:x`), or
 * without its prefix (`x` for `:x`, `@x` and `$x`). */
gboolean  qstore_params_name_matches (const char    *key,
                                      const char    *name);

G_END_DECLS
