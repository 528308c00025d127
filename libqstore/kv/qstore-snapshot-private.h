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

/* qstore_snapshot_lookup() without the checks of its arguments, for the
 * library's own point reads on snapshots it made: they run once per row
 * of a join or an index walk, where a type check is a cost. */
gboolean qstore_snapshot_lookup_internal (QStoreSnapshot  *self,
                                          QStoreKV        *store,
                                          const guint8    *key,
                                          gsize            key_len,
                                          const guint8   **value,
                                          gsize           *value_len,
                                          GError         **error);

G_END_DECLS
