/* qstore-postgres-notify.c: commits told with LISTEN/NOTIFY
 *
 * A write that puts an entry into the change log also runs
 * `SELECT pg_notify (channel, tx_id)` in its transaction (see
 * qstore-postgres-write.c), so the server tells it to every session
 * that LISTENs on the channel once, and only once, it committed. A watch
 * is such a session, of its own: a GSource polling its socket. The
 * server keeps nothing for a session that is gone, so when the
 * connection breaks the watch says so (QSTORE_COMMIT_EVENT_LOST),
 * connects again, with a growing pause between tries, and says when it
 * is back (QSTORE_COMMIT_EVENT_RESUMED). What the follower reads comes
 * from the change log, never from a notification's payload: anyone who
 * may connect to the database can send one.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "qstore-postgres-notify.h"

/* The pauses between two tries to connect again. */
#define RETRY_FIRST_MS 50
#define RETRY_MAX_MS   2000

char *
qstore_pg_notify_channel (const char *schema)
{
  g_autofree char *digest = g_compute_checksum_for_string (G_CHECKSUM_SHA256, schema, -1);

  return g_strdup_printf ("qstore_%.32s", digest);
}

typedef struct
{
  GSource        source;

  QStorePgDb    *db;
  QStorePgConn  *conn;     /* NULL while it is lost */
  gpointer       fd_tag;
  guint          retry_ms;
} Watch;

static gboolean
watch_listen (Watch   *watch,
              GError **error)
{
  g_autofree char *channel = qstore_pg_notify_channel (watch->db->schema);
  g_autofree char *sql = g_strdup_printf ("LISTEN %s", channel);
  QStorePgConn *conn;

  conn = qstore_pg_conn_open (watch->db->conninfo, watch->db->what, error);
  if (conn == NULL)
    return FALSE;
  /* The channel is `qstore_` and hex digits: nothing to quote. */
  if (!qstore_pg_conn_exec (conn, sql, "listening for commits", error))
    {
      qstore_pg_conn_unref (conn);
      return FALSE;
    }
  watch->conn = conn;
  watch->fd_tag = g_source_add_unix_fd (&watch->source, PQsocket (conn->pg),
                                        G_IO_IN | G_IO_HUP | G_IO_ERR);
  watch->retry_ms = RETRY_FIRST_MS;
  return TRUE;
}

static void
watch_drop (Watch *watch)
{
  if (watch->fd_tag != NULL)
    {
      g_source_remove_unix_fd (&watch->source, watch->fd_tag);
      watch->fd_tag = NULL;
    }
  g_clear_pointer (&watch->conn, qstore_pg_conn_unref);
}

/* The payload is the transaction id as text; anything else reads as 0. */
static guint64
payload_tx_id (const char *payload)
{
  guint64 tx_id = 0;

  if (payload == NULL || !g_ascii_string_to_unsigned (payload, 10, 1, G_MAXUINT64, &tx_id, NULL))
    return 0;
  return tx_id;
}

static gboolean
watch_read (Watch            *watch,
            QStoreCommitFunc  func,
            gpointer          data)
{
  PGconn *pg = watch->conn->pg;
  PGnotify *notify;

  if (PQconsumeInput (pg) == 1)
    while ((notify = PQnotifies (pg)) != NULL)
      {
        guint64 tx_id = payload_tx_id (notify->extra);

        PQfreemem (notify);
        if (!func (QSTORE_COMMIT_EVENT_COMMITTED, tx_id, data))
          return G_SOURCE_REMOVE;
      }
  if (PQstatus (pg) == CONNECTION_OK)
    return G_SOURCE_CONTINUE;

  g_debug ("%s: the connection that listens for commits is lost: %s", watch->db->what,
           PQerrorMessage (pg));
  watch_drop (watch);
  g_source_set_ready_time (&watch->source, g_get_monotonic_time ());
  return func (QSTORE_COMMIT_EVENT_LOST, 0, data);
}

static gboolean
watch_reconnect (Watch            *watch,
                 QStoreCommitFunc  func,
                 gpointer          data)
{
  g_autoptr(GError) error = NULL;

  if (!watch_listen (watch, &error))
    {
      g_debug ("%s: listening for commits again failed: %s", watch->db->what, error->message);
      g_source_set_ready_time (&watch->source,
                               g_get_monotonic_time () + watch->retry_ms * G_TIME_SPAN_MILLISECOND);
      watch->retry_ms = MIN (watch->retry_ms * 2, RETRY_MAX_MS);
      return G_SOURCE_CONTINUE;
    }
  g_source_set_ready_time (&watch->source, -1);
  /* The reader sessions idle in the pool may have broken with it (a
   * server that restarted): the follower's next reads get new ones. */
  qstore_pg_db_forget_idle_readers (watch->db);
  return func (QSTORE_COMMIT_EVENT_RESUMED, 0, data);
}

static gboolean
watch_dispatch (GSource     *source,
                GSourceFunc  callback,
                gpointer     data)
{
  Watch *watch = (Watch *) source;
  QStoreCommitFunc func = (QStoreCommitFunc) (void (*) (void)) callback;

  if (func == NULL || g_atomic_int_get (&watch->db->closed))
    {
      watch_drop (watch);
      return G_SOURCE_REMOVE;
    }
  if (watch->conn != NULL)
    return watch_read (watch, func, data);
  return watch_reconnect (watch, func, data);
}

static void
watch_finalize (GSource *source)
{
  Watch *watch = (Watch *) source;

  g_clear_pointer (&watch->conn, qstore_pg_conn_unref);
  g_clear_pointer (&watch->db, qstore_pg_db_unref);
}

static GSourceFuncs watch_funcs = {
  .dispatch = watch_dispatch,
  .finalize = watch_finalize,
};

GSource *
qstore_pg_watch_new (QStorePgDb  *db,
                     GError     **error)
{
  GSource *source = g_source_new (&watch_funcs, sizeof (Watch));
  Watch *watch = (Watch *) source;

  g_source_set_static_name (source, "qstore postgres commits");
  watch->db = qstore_pg_db_ref (db);
  if (!watch_listen (watch, error))
    {
      g_source_unref (source);
      return NULL;
    }
  return source;
}
