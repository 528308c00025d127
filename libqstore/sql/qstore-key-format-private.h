/* qstore-key-format-private.h: which key format a database's stores hold
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "qstore-database-private.h"

G_BEGIN_DECLS

/* At open, before anything writes: refuses a key format this version
 * does not know, and the first format when @self is read-only; says
 * whether the stores hold the first. */
gboolean qstore_key_format_check   (QStoreDatabase  *self,
                                    gboolean        *first_format,
                                    GError         **error);

/* Then, before anything reads a table: upgrades the stores of the first
 * format in a transaction left open (the caller commits it). @deferred
 * are the catalog items the SQL layer did not load, materialized views
 * among them. */
gboolean qstore_key_format_upgrade (QStoreDatabase  *self,
                                    GArray          *deferred,
                                    GError         **error);

G_END_DECLS
