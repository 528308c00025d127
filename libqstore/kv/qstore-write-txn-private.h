/* qstore-write-txn-private.h
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "qstore-write-txn.h"

G_BEGIN_DECLS

/* Set by qstore_provider_begin_write() on what the provider returns: the
 * transaction is open, and the provider's other writes are refused until
 * it ends. */
void qstore_write_txn_set_provider (QStoreWriteTxn  *self,
                                    QStoreProvider  *provider);

G_END_DECLS
