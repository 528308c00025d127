/* qstore-staging-sweep.h: dropping what interrupted imports left
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(QSTORE_INSIDE) && !defined(QSTORE_COMPILATION)
# error "Only <qstore.h> can be included directly."
#endif

#include "qstore-database.h"
#include "qstore-staging-leftovers.h"

G_BEGIN_DECLS

QSTORE_AVAILABLE_IN_ALL
GPtrArray *qstore_staging_sweep   (QStoreDatabase  *database,
                                   GError         **error);
QSTORE_AVAILABLE_IN_ALL
gboolean   qstore_staging_discard (QStoreDatabase  *database,
                                   const char      *target,
                                   GError         **error);

G_END_DECLS
