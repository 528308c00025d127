/* qstore-kv-private.h
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "qstore-kv.h"

G_BEGIN_DECLS

/* Fails with %QSTORE_ERROR_INVALID_ARGUMENT when @store was handed out by
 * another provider than @provider. */
gboolean qstore_kv_check_provider (QStoreKV        *store,
                                   QStoreProvider  *provider,
                                   GError         **error);

G_END_DECLS
