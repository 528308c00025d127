/* qstore-sqlite-write.h: the sqlite provider's writes, on the writer's
 * main connection
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "qstore-sqlite-db.h"

G_BEGIN_DECLS

/* Every function here is called with the main lock held. */

/* Ends the writer's shared read transaction and begins a write
 * transaction, at PRAGMA synchronous FULL when @sync_full, else NORMAL
 * (SQLite refuses to change it inside a transaction). */
gboolean qstore_sqlite_write_begin       (QStoreSqliteDb       *db,
                                          gboolean              sync_full,
                                          GError              **error);
/* Commits when @ok, else (or when the commit fails) rolls back; returns
 * whether it committed. */
gboolean qstore_sqlite_write_end         (QStoreSqliteDb       *db,
                                          gboolean              ok,
                                          GError              **error);
gboolean qstore_sqlite_write_apply       (QStoreSqliteDb       *db,
                                          const QStoreWriteOp  *ops,
                                          gsize                 n_ops,
                                          GError              **error);
gboolean qstore_sqlite_write_restructure (QStoreSqliteDb       *db,
                                          const char * const   *drop,
                                          const char * const   *rename_from,
                                          const char * const   *rename_to,
                                          GError              **error);

G_END_DECLS
