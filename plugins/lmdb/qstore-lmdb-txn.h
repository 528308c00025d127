/* qstore-lmdb-txn.h: the LMDB provider's open write transactions
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "qstore-lmdb-write.h"

G_BEGIN_DECLS

#define QSTORE_TYPE_LMDB_WRITE_TXN (qstore_lmdb_write_txn_get_type ())
G_DECLARE_FINAL_TYPE (QStoreLmdbWriteTxn, qstore_lmdb_write_txn,
                      QSTORE, LMDB_WRITE_TXN, QStoreWriteTxn)

/* Begins an LMDB write transaction that lasts until the returned object
 * commits or aborts; @handle lives inside @provider. */
QStoreWriteTxn *qstore_lmdb_write_txn_new            (QStoreProvider     *provider,
                                                      QStoreLmdbHandle   *handle,
                                                      GError            **error);
/* Aborts the open write transaction of @handle, if any: the provider
 * closes. */
void            qstore_lmdb_write_txn_close          (QStoreLmdbHandle   *handle);

void            qstore_lmdb_write_txn_register_type_in (GTypeModule      *module);

G_END_DECLS
