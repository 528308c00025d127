/* qstore-provider-private.h
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "qstore-provider.h"

G_BEGIN_DECLS

gboolean qstore_provider_check_open      (QStoreProvider  *self,
                                          GError         **error);
/* Where the provider keeps its closed state, for hot paths that hold a
 * reference on the provider and want to skip the lookup per call. */
const gboolean *qstore_provider_get_closed_flag (QStoreProvider *self);
gboolean qstore_provider_check_store     (QStoreProvider  *self,
                                          QStoreKV        *store,
                                          GError         **error);
gboolean qstore_provider_key_fits        (QStoreProvider  *self,
                                          gsize            key_len);
/* qstore_provider_check_open() and qstore_provider_key_fits() in one
 * look at the provider, for a read of a key of @key_len bytes: -1 when
 * closed (@error set), 0 when no write could have stored such a key, 1
 * otherwise. */
int      qstore_provider_check_read      (QStoreProvider  *self,
                                          gsize            key_len,
                                          GError         **error);
void     qstore_snapshot_set_provider    (QStoreSnapshot  *self,
                                          QStoreProvider  *provider);

/* A provider libqstore makes itself rather than loads from a plugin (a
 * replica's DDL overlay) gets here what qstore_provider_new() gives every
 * provider: its name, location and flags. Call once, right after
 * creating it. */
void     qstore_provider_init_state      (QStoreProvider  *self,
                                          const char      *name,
                                          const char      *location,
                                          QStoreOpenFlags  flags);

/* The provider's restructure, in one all-or-nothing unit: erase the stores
 * of @drop, move each store of @rename_from to the same position of
 * @rename_to, then apply @ops. The name arrays are NULL-terminated. For the
 * SQL layer, whose renames pair names the public wrappers cannot (a
 * UNIQUE constraint's index is named after its table). */
gboolean qstore_provider_restructure     (QStoreProvider       *self,
                                          const char * const   *drop,
                                          const char * const   *rename_from,
                                          const char * const   *rename_to,
                                          const QStoreWriteOp  *ops,
                                          gsize                 n_ops,
                                          GError              **error);

G_END_DECLS
