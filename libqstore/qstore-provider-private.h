/* qstore-provider-private.h
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "qstore-provider.h"

G_BEGIN_DECLS

gboolean qstore_provider_check_open      (QStoreProvider  *self,
                                          GError         **error);
gboolean qstore_provider_check_store     (QStoreProvider  *self,
                                          QStoreKV        *store,
                                          GError         **error);
gboolean qstore_provider_key_fits        (QStoreProvider  *self,
                                          gsize            key_len);
void     qstore_snapshot_set_provider    (QStoreSnapshot  *self,
                                          QStoreProvider  *provider);

G_END_DECLS
