/* qstore-postgres-check.h: the postgres provider's own check
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "qstore-postgres-db.h"

G_BEGIN_DECLS

/* Checks the location's tables without writing: entries of no store, and
 * entries no write could have made. */
gboolean qstore_pg_check (QStorePgDb         *db,
                          QStoreCheckReport  *report,
                          GError            **error);

G_END_DECLS
