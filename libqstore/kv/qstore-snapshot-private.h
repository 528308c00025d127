/* qstore-snapshot-private.h
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "qstore-snapshot.h"

G_BEGIN_DECLS

/* Set by qstore_provider_begin_snapshot() on what the provider returns. */
void qstore_snapshot_set_provider (QStoreSnapshot  *self,
                                   QStoreProvider  *provider);

G_END_DECLS
