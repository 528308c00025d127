/* qstore-sqlite-schema.h: the tables of a store file
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "qstore-sqlite-conn.h"

G_BEGIN_DECLS

/* The first column of the first row of @sql, an integer. */
gboolean qstore_sqlite_query_int          (QStoreSqliteConn  *conn,
                                           const char        *sql,
                                           gint64            *value,
                                           GError           **error);

/* Checks that the file behind @conn is a qstore store of a format this
 * version reads; a writable @conn creates the tables in a blank file and
 * brings an older format up to date. Another program's database is
 * %QSTORE_ERROR_CORRUPT and left alone. */
gboolean qstore_sqlite_schema_open        (QStoreSqliteConn  *conn,
                                           gboolean           read_only,
                                           GError           **error);
gboolean qstore_sqlite_schema_enable_wal  (QStoreSqliteConn  *conn,
                                           GError           **error);
/* The longest key and value, together, whose value stays in kv's b-tree;
 * the value of a longer entry goes to big_values. */
gsize    qstore_sqlite_schema_inline_max  (QStoreSqliteConn  *conn);

G_END_DECLS
