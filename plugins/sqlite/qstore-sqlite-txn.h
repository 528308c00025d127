/* qstore-sqlite-txn.h: the sqlite provider's open write transactions
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "qstore-sqlite-db.h"

G_BEGIN_DECLS

#define QSTORE_TYPE_SQLITE_WRITE_TXN (qstore_sqlite_write_txn_get_type ())
G_DECLARE_FINAL_TYPE (QStoreSqliteWriteTxn, qstore_sqlite_write_txn,
                      QSTORE, SQLITE_WRITE_TXN, QStoreWriteTxn)

QStoreWriteTxn *qstore_sqlite_write_txn_new              (QStoreSqliteDb  *db,
                                                          GError         **error);
void            qstore_sqlite_write_txn_register_type_in (GTypeModule     *module);

G_END_DECLS
