/* qstore-provider-private.h
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "qstore-provider.h"
#include "qstore-provider-state-private.h"

G_BEGIN_DECLS

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

/* A provider libqstore makes itself rather than loads from a plugin (a
 * replica's DDL overlay) gets here what qstore_provider_new() gives every
 * provider: its name, location and flags. Call once, right after
 * creating it. */
void     qstore_provider_init_state      (QStoreProvider  *self,
                                          const char      *name,
                                          const char      *location,
                                          QStoreOpenFlags  flags);

G_END_DECLS
