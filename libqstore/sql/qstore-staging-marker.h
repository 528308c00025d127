/* qstore-staging-marker.h: a database's staged imports, from its marker
 * table
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
QStoreStagingLeftovers *qstore_staging_leftovers_read     (QStoreDatabase  *database,
                                                           GError         **error);
QSTORE_AVAILABLE_IN_ALL
gint64                  qstore_database_get_staging_stale_after_ms (QStoreDatabase *database);

G_END_DECLS
