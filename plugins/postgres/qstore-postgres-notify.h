/* qstore-postgres-notify.h: commits told with LISTEN/NOTIFY
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "qstore-postgres-db.h"

G_BEGIN_DECLS

/* The channel a location's commits are told on: `qstore_` and 32 hex
 * digits of the schema name's SHA-256, so that any schema name makes a
 * plain identifier of the same length (two schemas sharing one would
 * only wake each other's followers for nothing). */
char    *qstore_pg_notify_channel (const char  *schema);

/* The provider's watch_commits: a source that LISTENs on @db's channel
 * on a connection of its own and dispatches a QStoreCommitFunc. */
GSource *qstore_pg_watch_new      (QStorePgDb  *db,
                                   GError     **error);

G_END_DECLS
