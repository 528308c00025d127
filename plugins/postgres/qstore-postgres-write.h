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

G_END_DECLS
