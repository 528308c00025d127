/* qstore-sqlite-store.h: stores, snapshots and iterators of the sqlite provider
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "qstore-sqlite-db.h"

G_BEGIN_DECLS

#define QSTORE_TYPE_SQLITE_STORE (qstore_sqlite_store_get_type ())
G_DECLARE_FINAL_TYPE (QStoreSqliteStore, qstore_sqlite_store, QSTORE, SQLITE_STORE, GObject)

#define QSTORE_TYPE_SQLITE_ITER (qstore_sqlite_iter_get_type ())
G_DECLARE_FINAL_TYPE (QStoreSqliteIter, qstore_sqlite_iter, QSTORE, SQLITE_ITER, QStoreIter)

#define QSTORE_TYPE_SQLITE_SNAPSHOT (qstore_sqlite_snapshot_get_type ())
G_DECLARE_FINAL_TYPE (QStoreSqliteSnapshot, qstore_sqlite_snapshot,
                      QSTORE, SQLITE_SNAPSHOT, QStoreSnapshot)

/* @provider is what the store reports as its own; @db is what it reads. */
QStoreKV       *qstore_sqlite_store_new            (QStoreProvider  *provider,
                                                    QStoreSqliteDb  *db,
                                                    const char      *name);
QStoreSnapshot *qstore_sqlite_snapshot_new         (QStoreSqliteDb  *db,
                                                    GError         **error);
/* An iterator over @conn. @owner, a snapshot or write transaction, keeps
 * @conn; without one the iterator gives @conn back to the reader pool when
 * it goes. With @write_serial it ends with that write transaction. */
QStoreIter     *qstore_sqlite_iter_new             (QStoreSqliteDb      *db,
                                                    GObject             *owner,
                                                    QStoreSqliteConn    *conn,
                                                    guint64              write_serial,
                                                    const char          *name,
                                                    const QStoreBounds  *bounds,
                                                    GError             **error);

void            qstore_sqlite_store_register_types (GTypeModule     *module);

G_END_DECLS
