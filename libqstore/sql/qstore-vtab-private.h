/* qstore-vtab-private.h: the `qstore` virtual-table module
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "qstore-database-private.h"

G_BEGIN_DECLS

/* Registers the module on @self's main connection. */
gboolean  qstore_vtab_register_module    (QStoreDatabase     *self,
                                          GError            **error);
/* The CREATE TABLE SQLite is told for @schema: the columns with their
 * declared types and collations, as a rowid table without constraints. */
char     *qstore_vtab_declaration        (QStoreTableSchema  *schema);
/* Whether the data key of @schema is its rowid. */
gboolean  qstore_vtab_keyed_by_rowid     (QStoreTableSchema  *schema);
const char *qstore_collation_name        (QStoreCollation     collation);

G_END_DECLS
