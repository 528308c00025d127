/* qstore-postgres-txn.h: the postgres provider's open write transactions
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "qstore-postgres-db.h"

G_BEGIN_DECLS

#define QSTORE_TYPE_PG_WRITE_TXN (qstore_pg_write_txn_get_type ())
G_DECLARE_FINAL_TYPE (QStorePgWriteTxn, qstore_pg_write_txn, QSTORE, PG_WRITE_TXN, QStoreWriteTxn)

QStoreWriteTxn *qstore_pg_write_txn_new           (QStorePgDb   *db,
                                                   GError      **error);
void            qstore_pg_write_txn_register_type_in (GTypeModule *module);

G_END_DECLS
