/* qstore-sqlite-check.h: what can be checked of a store file
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "qstore-sqlite-db.h"

G_BEGIN_DECLS

/* SQLite's integrity check of the file, then qstore's own rules for its
 * tables, on a reader connection: what is wrong goes to @report. */
gboolean qstore_sqlite_check (QStoreSqliteDb     *db,
                              QStoreCheckReport  *report,
                              GError            **error);

G_END_DECLS
