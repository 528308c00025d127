/* qstore-postgres-lock.c: one writer per location
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>
#include <unistd.h>

#include "qstore-i18n-private.h"
#include "qstore-postgres-lock.h"

/* The advisory lock's key: 64 bits of a hash of the schema name, so two
 * locations of one database get different keys; the server keeps the
 * keys of each database apart. */
static gint64
lock_key (const char *schema)
{
  g_autoptr(GChecksum) sum = g_checksum_new (G_CHECKSUM_SHA256);
  guint8 digest[32];
  gsize len = sizeof digest;
  guint64 key = 0;

  g_checksum_update (sum, (const guint8 *) "qstore-writer:", -1);
  g_checksum_update (sum, (const guint8 *) schema, -1);
  g_checksum_get_digest (sum, digest, &len);
  for (guint i = 0; i < 8; i++)
    key = (key << 8) | digest[i];
  return (gint64) key;
}

/* Who holds the lock, from the application name its session gave (see
 * qstore_pg_conn_open()): "qstore/PID@HOST". */
static char *
describe_holder (QStorePgConn *conn,
                 gint64        key)
{
  g_autofree char *classid = g_strdup_printf ("%u", (guint32) ((guint64) key >> 32));
  g_autofree char *objid = g_strdup_printf ("%u", (guint32) key);
  const char *values[2] = { classid, objid };
  int lengths[2] = { (int) strlen (classid), (int) strlen (objid) };
  PGresult *res = NULL;
  QStorePgStep step = {
    .sql = "SELECT a.application_name FROM pg_locks l "
           "JOIN pg_stat_activity a ON a.pid = l.pid "
           "WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1 "
           "AND l.classid = $1::text::oid AND l.objid = $2::text::oid "
           "AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())",
    .n_params = 2, .values = values, .lengths = lengths, .result = &res,
  };
  g_autofree char *app = NULL;
  g_autofree char *pid_text = NULL;
  g_autofree char *our_host = NULL;
  const char *at;
  gint64 pid;
  char *by;

  if (!qstore_pg_conn_run (conn, &step, 1, "asking who holds the writer lock", NULL))
    return g_strdup ("by another session");
  if (PQntuples (res) == 1 && !PQgetisnull (res, 0, 0))
    app = g_strndup (PQgetvalue (res, 0, 0), PQgetlength (res, 0, 0));
  PQclear (res);

  if (app == NULL || app[0] == '\0')
    return g_strdup ("by another session");
  at = strchr (app, '@');
  if (at != NULL)
    pid_text = g_strndup (app + 7, at - app - 7);
  if (!g_str_has_prefix (app, "qstore/") || at == NULL ||
      !g_ascii_string_to_signed (pid_text, 10, 1, G_MAXINT, &pid, NULL))
    return g_strdup_printf ("by another session (application “%s”)", app);

  /* The host as qstore_pg_conn_open() wrote it, cut to the same length. */
  our_host = g_strndup (g_get_host_name (), QSTORE_PG_APP_HOST_MAX);
  if (g_str_equal (at + 1, our_host))
    {
      if (pid == getpid ())
        by = g_strdup ("by another handle in this process");
      else
        by = g_strdup_printf ("by process %d", (int) pid);
    }
  else
    by = g_strdup_printf ("by process %d on host %s", (int) pid, at + 1);
  return by;
}

static void
set_busy_error (GError       **error,
                QStorePgConn  *conn,
                gint64         key)
{
  g_autofree char *by = describe_holder (conn, key);

  g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_BUSY,
               _("%s is open for writing %s, and a location has one writer at a time: "
               "close that one, open this one read-only, or wait for it "
               "(the wait_ms option)"), conn->what, by);
}

gboolean
qstore_pg_lock_take (QStorePgConn  *conn,
                     const char    *schema,
                     guint          wait_ms,
                     GError       **error)
{
  gint64 key = lock_key (schema);
  g_autofree char *text = g_strdup_printf ("%" G_GINT64_FORMAT, key);
  g_autofree char *timeout = g_strdup_printf ("%u", wait_ms);
  const char *values[1] = { text };
  int lengths[1] = { (int) strlen (text) };
  const char *timeout_values[1] = { timeout };
  int timeout_lengths[1] = { (int) strlen (timeout) };
  /* The server waits and wakes the waiter as the holder lets go; the
   * timeout set for the wait is undone with the pipeline's transaction
   * when it ends the wait, reset after it when the lock is taken. */
  QStorePgStep steps[3] = {
    { .sql = "SELECT set_config ('lock_timeout', $1, false)",
      .n_params = 1, .values = timeout_values, .lengths = timeout_lengths },
    { .sql = "SELECT pg_advisory_lock ($1::text::bigint)",
      .n_params = 1, .values = values, .lengths = lengths },
    { .sql = "SELECT set_config ('lock_timeout', '0', false)" },
  };
  g_autoptr(GError) local_error = NULL;
  gint64 got;

  if (wait_ms == 0)
    {
      if (!qstore_pg_conn_query_int (conn, "SELECT pg_try_advisory_lock ($1::text::bigint)",
                                     text, &got, "taking the writer lock", error))
        return FALSE;
      if (got)
        return TRUE;
      set_busy_error (error, conn, key);
      return FALSE;
    }

  if (qstore_pg_conn_run (conn, steps, G_N_ELEMENTS (steps), "taking the writer lock",
                          &local_error))
    return TRUE;
  /* lock_not_available: the wait ran out. */
  if (g_error_matches (local_error, QSTORE_ERROR, QSTORE_ERROR_BUSY))
    set_busy_error (error, conn, key);
  else
    g_propagate_error (error, g_steal_pointer (&local_error));
  return FALSE;
}

void
qstore_pg_lock_release (QStorePgConn *conn,
                        const char   *schema)
{
  g_autofree char *text = g_strdup_printf ("%" G_GINT64_FORMAT, lock_key (schema));
  gint64 released;

  /* On a broken session this fails, and the server lets go as it ends. */
  if (!qstore_pg_conn_query_int (conn, "SELECT pg_advisory_unlock ($1::text::bigint)",
                                 text, &released, "letting go of the writer lock", NULL))
    g_debug ("%s: the writer lock goes with the session", conn->what);
}
