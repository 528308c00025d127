/* qstore-bookkeeping-private.h: qstore's own small tables in a database
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "qstore-database.h"

G_BEGIN_DECLS

/* The change claims and the replica observations are tables of the
 * database they are about (`_qstore_…`, left out of the change log), made
 * on first use. Writing them is a transaction of its own, durable before
 * the call returns: the caller acts on it.
 *
 * Checks that @db is open and writable and that no transaction is open
 * (@what names the call in the message), then makes @table with
 * @create_sql if it is not there yet. */
gboolean  qstore_bookkeeping_prepare (QStoreDatabase  *db,
                                      const char      *table,
                                      const char      *create_sql,
                                      const char      *what,
                                      GError         **error);

G_END_DECLS
