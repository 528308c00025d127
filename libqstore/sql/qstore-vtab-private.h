/* qstore-vtab-private.h: the `qstore` virtual-table module
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "qstore-vtab-plan-private.h"

G_BEGIN_DECLS

/* Registers the module on @self's main connection. */
gboolean  qstore_vtab_register_module    (QStoreDatabase     *self,
                                          GError            **error);
/* The CREATE TABLE SQLite is told for @schema: the columns with their
 * declared types and collations, as a rowid table without constraints. */
char     *qstore_vtab_declaration        (QStoreTableSchema  *schema);

G_END_DECLS
