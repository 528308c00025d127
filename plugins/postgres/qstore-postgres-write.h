/* qstore-postgres-write.h: the writes of the postgres provider
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "qstore-postgres-db.h"

G_BEGIN_DECLS

/* Applies @ops in one transaction, sent as one pipeline (one round trip),
 * durable before it returns when @sync is set. */
gboolean qstore_pg_write       (QStorePgDb           *db,
                                const QStoreWriteOp  *ops,
                                gsize                 n_ops,
                                gboolean              sync,
                                GError              **error);

/* The provider's restructure (see QStoreProviderInterface), in one
 * transaction. */
gboolean qstore_pg_restructure (QStorePgDb           *db,
                                const char * const   *drop,
                                const char * const   *rename_from,
                                const char * const   *rename_to,
                                const QStoreWriteOp  *ops,
                                gsize                 n_ops,
                                GError              **error);

/* The write transaction's side of the writer's session: called with the
 * main lock held, while @db->txn_open is set. A write or drop that
 * fails leaves the transaction for qstore_pg_txn_end() to roll back. */
gboolean qstore_pg_txn_write   (QStorePgDb           *db,
                                const QStoreWriteOp  *ops,
                                gsize                 n_ops,
                                GError              **error);
gboolean qstore_pg_txn_drop    (QStorePgDb           *db,
                                const char * const   *names,
                                GError              **error);
/* Commits the transaction when @commit (durably when @sync), else rolls
 * it back; either way it is over. */
gboolean qstore_pg_txn_end     (QStorePgDb           *db,
                                gboolean              commit,
                                gboolean              sync,
                                GError              **error);

G_END_DECLS
