/* test-postgres-errors.c: what the postgres provider says when the
 * server cannot answer, or cannot write
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <libpq-fe.h>
#include <pwd.h>
#include <string.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "qstore-test-util.h"

/* A host that takes the connection and never answers the startup
 * packet: a listening socket of the test's own that nobody accepts
 * from (the kernel completes the handshake for its backlog). The open
 * fails within connect_timeout, naming the host, and says what to
 * check. */
static void
test_connect_timeout (void)
{
  g_autoptr(GSocket) socket = NULL;
  g_autoptr(GInetAddress) loopback = g_inet_address_new_loopback (G_SOCKET_FAMILY_IPV4);
  g_autoptr(GSocketAddress) any = g_inet_socket_address_new (loopback, 0);
  g_autoptr(GSocketAddress) bound = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(QStoreProvider) provider = NULL;
  g_autofree char *uri = NULL;
  guint16 port;
  gint64 start;
  double seconds;

  socket = g_socket_new (G_SOCKET_FAMILY_IPV4, G_SOCKET_TYPE_STREAM, G_SOCKET_PROTOCOL_TCP,
                         &error);
  g_assert_no_error (error);
  g_socket_bind (socket, any, TRUE, &error);
  g_assert_no_error (error);
  g_socket_listen (socket, &error);
  g_assert_no_error (error);
  bound = g_socket_get_local_address (socket, &error);
  g_assert_no_error (error);
  port = g_inet_socket_address_get_port (G_INET_SOCKET_ADDRESS (bound));

  uri = g_strdup_printf ("postgres:host=127.0.0.1 port=%u connect_timeout=2 "
                         "dbname=silent?schema=never", port);
  start = g_get_monotonic_time ();
  provider = qstore_provider_new_for_uri (uri, QSTORE_OPEN_NONE, &error);
  seconds = (g_get_monotonic_time () - start) / (double) G_USEC_PER_SEC;
  g_test_message ("after %.1f s: %s", seconds, error ? error->message : "no error");
  g_assert_null (provider);
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_IO);
  g_assert_nonnull (strstr (error->message, "127.0.0.1"));
  g_assert_nonnull (strstr (error->message, "timeout"));
  g_assert_nonnull (strstr (error->message, "SQLSTATE 08001"));
  g_assert_nonnull (strstr (error->message, "check that the server runs"));
  /* The timeout, not the system's minutes; libpq counts whole seconds. */
  g_assert_cmpfloat (seconds, >=, 1.0);
  g_assert_cmpfloat (seconds, <, 6.0);
}

static gboolean
run (const char * const *argv,
     char              **why)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *err = NULL;
  int status;

  if (!g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, NULL, &err,
                     &status, &error))
    {
      *why = g_strdup (error->message);
      return FALSE;
    }
  if (!g_spawn_check_wait_status (status, NULL))
    {
      *why = g_strstrip (g_strdup (err));
      return FALSE;
    }
  return TRUE;
}

static void
sql (PGconn     *pg,
     const char *text)
{
  PGresult *res = PQexec (pg, text);

  if (PQresultStatus (res) != PGRES_COMMAND_OK)
    g_error ("“%s” failed: %s", text, PQerrorMessage (pg));
  PQclear (res);
}

static GBytes *
get (QStoreKV   *kv,
     const char *key)
{
  g_autoptr(GError) error = NULL;
  GBytes *value = qstore_kv_get (kv, (const guint8 *) key, strlen (key), &error);

  g_assert_no_error (error);
  return value;
}

/* The location's table on a tablespace of 2 MB (a tmpfs the test mounts,
 * when it may): a write of more fails with a full disk, says so with its
 * SQLSTATE, and writes none of its entries, in any store. */
static void
test_disk_full (void)
{
  g_autofree char *dir = test_make_tmp_dir ("qstore-pg-full-XXXXXX");
  g_autofree char *space = g_build_filename (dir, "space", NULL);
  g_autofree char *uri = test_provider_uri (dir, "full");
  g_autofree char *base = g_path_get_basename (dir);
  g_autofree char *schema = g_strdup_printf ("%s_full", base);
  const char *mount[] = { "mount", "-t", "tmpfs", "-o", "size=2m,mode=0700", "tmpfs", space,
                          NULL };
  const char *umount[] = { "umount", space, NULL };
  g_autoptr(QStoreProvider) provider = NULL;
  g_autoptr(QStoreKV) t = NULL;
  g_autoptr(QStoreKV) other = NULL;
  g_autoptr(QStoreAtomicBatch) batch = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) value = NULL;
  g_autofree char *why = NULL;
  g_autofree char *create = NULL;
  g_autofree char *move = NULL;
  g_autofree char *back = NULL;
  struct passwd *server_user;
  guint8 *big;
  char *quoted;
  PGconn *pg;

  /* The server runs as postgres when the tests run as root. */
  server_user = getpwnam ("postgres");
  if (getuid () != 0 || server_user == NULL)
    {
      g_test_skip ("a full disk needs a tmpfs mounted as root for the postgres user: "
                   "not root here");
      test_remove_tree (dir);
      return;
    }
  /* The server's user must reach the mount point. */
  g_assert_cmpint (g_chmod (dir, 0711), ==, 0);
  g_assert_cmpint (g_mkdir (space, 0700), ==, 0);
  if (!run (mount, &why))
    {
      g_autofree char *message = g_strdup_printf ("cannot mount a tmpfs here (%s)", why);

      g_test_skip (message);
      test_remove_tree (dir);
      return;
    }
  g_assert_cmpint (chown (space, server_user->pw_uid, server_user->pw_gid), ==, 0);

  provider = qstore_provider_new_for_uri (uri, QSTORE_OPEN_NONE, &error);
  g_assert_no_error (error);
  t = qstore_provider_open_store (provider, "main.t", &error);
  other = qstore_provider_open_store (provider, "main.other", &error);
  g_assert_true (qstore_kv_put (t, (const guint8 *) "k", 1, (const guint8 *) "before", 6,
                                QSTORE_WRITE_SYNC, &error));
  g_assert_no_error (error);

  pg = PQconnectdb (g_getenv ("QSTORE_TEST_POSTGRES"));
  g_assert_cmpint (PQstatus (pg), ==, CONNECTION_OK);
  quoted = PQescapeIdentifier (pg, schema, strlen (schema));
  create = g_strdup_printf ("CREATE TABLESPACE qstore_full_test LOCATION '%s'", space);
  move = g_strdup_printf ("ALTER TABLE %s.kv SET TABLESPACE qstore_full_test", quoted);
  back = g_strdup_printf ("ALTER TABLE %s.kv SET TABLESPACE pg_default", quoted);
  PQfreemem (quoted);
  sql (pg, create);
  sql (pg, move);

  /* 3 MB that do not compress, and one small entry in another store. */
  big = g_malloc (768 * 1024);
  batch = qstore_provider_begin_atomic_batch (provider);
  qstore_atomic_batch_put (batch, other, (const guint8 *) "small", 5, (const guint8 *) "x", 1);
  for (guint i = 0; i < 4; i++)
    {
      g_autofree char *key = g_strdup_printf ("big%u", i);

      for (gsize j = 0; j < 768 * 1024; j += 4)
        {
          guint32 r = g_random_int ();

          memcpy (big + j, &r, 4);
        }
      qstore_atomic_batch_put (batch, t, (const guint8 *) key, strlen (key), big, 768 * 1024);
    }
  g_free (big);
  g_assert_false (qstore_atomic_batch_commit (batch, QSTORE_WRITE_SYNC, &error));
  g_test_message ("full: %s", error->message);
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_IO);
  g_assert_nonnull (strstr (error->message, "SQLSTATE 53100"));
  g_assert_nonnull (strstr (error->message, "free space on the server"));
  g_clear_error (&error);

  /* Nothing of it, in either store; what was there still is. */
  for (guint i = 0; i < 4; i++)
    {
      g_autofree char *key = g_strdup_printf ("big%u", i);
      g_autoptr(GBytes) gone = get (t, key);

      g_assert_null (gone);
    }
  value = get (other, "small");
  g_assert_null (value);
  value = get (t, "k");
  g_assert_nonnull (value);
  g_assert_cmpmem (g_bytes_get_data (value, NULL), g_bytes_get_size (value), "before", 6);
  g_clear_pointer (&value, g_bytes_unref);

  /* With space again, the same writer writes on. */
  sql (pg, back);
  sql (pg, "DROP TABLESPACE qstore_full_test");
  PQfinish (pg);
  g_assert_true (qstore_kv_put (other, (const guint8 *) "small", 5, (const guint8 *) "y", 1,
                                QSTORE_WRITE_SYNC, &error));
  g_assert_no_error (error);
  value = get (other, "small");
  g_assert_nonnull (value);

  g_clear_object (&t);
  g_clear_object (&other);
  g_clear_object (&provider);
  g_assert_true (run (umount, &why));
  test_remove_tree (dir);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/postgres/errors/connect-timeout", test_connect_timeout);
  g_test_add_func ("/postgres/errors/disk-full", test_disk_full);
  return g_test_run ();
}
