/* test-postgres-errors.c: what the postgres provider says when the
 * server cannot answer
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

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

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/postgres/errors/connect-timeout", test_connect_timeout);
  return g_test_run ();
}
