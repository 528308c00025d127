/* qstore-postgres-lock.h: one writer per location, through an advisory
 * lock the server holds for the writer's session
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "qstore-postgres-conn.h"

G_BEGIN_DECLS

/* Takes the writer lock of @schema (in the connection's database) for
 * @conn's session, waiting up to @wait_ms; %QSTORE_ERROR_BUSY naming the
 * location and the holder when another session keeps it. The server lets
 * go when the session ends, however it ends. */
gboolean qstore_pg_lock_take (QStorePgConn  *conn,
                              const char    *schema,
                              guint          wait_ms,
                              GError       **error);

/* Lets go of the writer lock before the session ends: the server ends a
 * session after its client has gone, so a process that closes the
 * location and opens it again at once could find the lock still held. */
void     qstore_pg_lock_release (QStorePgConn  *conn,
                                 const char    *schema);

G_END_DECLS
