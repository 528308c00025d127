/* qstore-postgres-store.h: stores, snapshots and iterators of the postgres
 * provider
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "qstore-postgres-db.h"

G_BEGIN_DECLS

#define QSTORE_TYPE_PG_STORE (qstore_pg_store_get_type ())
G_DECLARE_FINAL_TYPE (QStorePgStore, qstore_pg_store, QSTORE, PG_STORE, GObject)

#define QSTORE_TYPE_PG_ITER (qstore_pg_iter_get_type ())
G_DECLARE_FINAL_TYPE (QStorePgIter, qstore_pg_iter, QSTORE, PG_ITER, QStoreIter)

#define QSTORE_TYPE_PG_SNAPSHOT (qstore_pg_snapshot_get_type ())
G_DECLARE_FINAL_TYPE (QStorePgSnapshot, qstore_pg_snapshot, QSTORE, PG_SNAPSHOT, QStoreSnapshot)

/* @provider is what the store reports as its own; @db is what it reads. */
QStoreKV       *qstore_pg_store_new            (QStoreProvider  *provider,
                                                QStorePgDb      *db,
                                                const char      *name);
QStoreSnapshot *qstore_pg_snapshot_new         (QStorePgDb      *db,
                                                GError         **error);
/* An iterator of store @name: of @snapshot (a #QStorePgSnapshot) when
 * set, else of the write transaction @txn_serial when not 0, else of
 * what is committed. */
QStoreIter     *qstore_pg_iter_new             (QStorePgDb      *db,
                                                GObject         *snapshot,
                                                guint64          txn_serial,
                                                const char      *name,
                                                const QStoreBounds *bounds,
                                                GError         **error);

void            qstore_pg_store_register_types (GTypeModule     *module);

G_END_DECLS
