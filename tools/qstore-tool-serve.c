/* qstore-tool-serve.c: qstore serve, a running store on the session bus
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The server opens the store as a replica (its one writer) and exports
 * org.qstore.Server1 (data/org.qstore.Server1.xml) at /org/qstore/Server
 * under org.qstore.Server.<id>. Signals go out only while some caller is
 * subscribed, and no signal carries more than --rows-per-signal rows.
 */
#include "config.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>

#include <glib-unix.h>

#include "qstore-server1-info.h"
#include "qstore-tool.h"

#define SERVER_ERROR_NOT_ALLOWED   "org.qstore.Server1.Error.NotAllowed"
#define SERVER_ERROR_NOT_FOUND     "org.qstore.Server1.Error.NotFound"
#define SERVER_ERROR_NOT_SUPPORTED "org.qstore.Server1.Error.NotSupported"
#define SERVER_ERROR_FAILED        "org.qstore.Server1.Error.Failed"

#define DEFAULT_ROWS_PER_SIGNAL 500

typedef struct
{
  guint64  id;
  char    *sql;
  char    *owner;    /* unique bus name of the caller that registered it */
  guint    worker;
} Query;

/* A caller the server knows: subscribed, or owning live queries. */
typedef struct
{
  guint    watch_id;
  gboolean subscribed;
  guint    n_queries;
} Peer;

typedef struct
{
  const char      *store_uri;
  QStoreReplica   *replica;
  GDBusConnection *connection;
  GMainLoop       *loop;
  char            *bus_name;
  guint            registration_id;
  gboolean         allow_queries;
  gboolean         allow_writes;
  guint            rows_per_signal;
  gint64           started_us;
  GHashTable      *peers;            /* unique name → Peer */
  guint            n_subscribed;
  GHashTable      *queries;          /* &Query.id → Query */
  guint64          last_query_id;
  guint64          n_signals;        /* sent, for the log at exit */
  guint64          n_failed;         /* signals that could not go out */
} Server;

static void
log_line (const char *format,
          ...) G_GNUC_PRINTF (1, 2);

/* The server's log: stderr, one line an event, with the local time. */
static void
log_line (const char *format,
          ...)
{
  g_autoptr(GDateTime) now = g_date_time_new_now_local ();
  g_autofree char *stamp = g_date_time_format (now, "%H:%M:%S.%f");
  g_autofree char *message = NULL;
  va_list args;

  va_start (args, format);
  message = g_strdup_vprintf (format, args);
  va_end (args);
  g_printerr ("%.12s qstore serve: %s\n", stamp, message);
}

/* Server ids */

/**
 * qstore_tool_server_id_is_valid:
 * @id: a server id
 *
 * Whether @id can end a bus name: letters, digits and underscores, not
 * starting with a digit, at most 200 characters.
 */
gboolean
qstore_tool_server_id_is_valid (const char *id)
{
  if (id == NULL || id[0] == '\0' || g_ascii_isdigit (id[0]) || strlen (id) > 200)
    return FALSE;
  for (const char *p = id; *p != '\0'; p++)
    if (!g_ascii_isalnum (*p) && *p != '_')
      return FALSE;
  return TRUE;
}

/**
 * qstore_tool_server_default_id:
 * @store_uri: a store URI
 *
 * The id `qstore serve` takes when given none, and `qstore changes
 * --follow --bus` looks for: the last element of the store's path, with
 * every character a bus name cannot hold as `_` (and `_` first when it
 * starts with a digit). `lmdb:/srv/shop-data` serves as
 * `org.qstore.Server.shop_data`.
 *
 * Returns: (transfer full): a valid id
 */
char *
qstore_tool_server_default_id (const char *store_uri)
{
  const char *colon = strchr (store_uri, ':');
  g_autofree char *location = g_strdup (colon != NULL ? colon + 1 : store_uri);
  g_autofree char *base = NULL;
  GString *id = g_string_new (NULL);
  char *options = strchr (location, '?');

  if (options != NULL)
    *options = '\0';
  /* lmdb:/a/b/ names the directory b. */
  while (strlen (location) > 1 && g_str_has_suffix (location, "/"))
    location[strlen (location) - 1] = '\0';
  base = g_path_get_basename (location);
  if (base[0] == '\0' || g_str_equal (base, "/") || g_str_equal (base, "."))
    g_string_append (id, colon != NULL ? "memory" : "store");
  for (const char *p = base; *p != '\0' && id->len < 200; p++)
    g_string_append_c (id, g_ascii_isalnum (*p) ? *p : '_');
  if (id->len == 0)
    g_string_append (id, "store");
  if (g_ascii_isdigit (id->str[0]))
    g_string_prepend_c (id, '_');
  return g_string_free (id, FALSE);
}

/* Rows as JSON */

/* Rows @first … @first + @n - 1 of @rows (`aav`) as a JSON array. */
static char *
rows_to_json (GVariant *rows,
              gsize     first,
              gsize     n)
{
  GString *out = g_string_new ("[");

  for (gsize i = first; i < first + n; i++)
    {
      g_autoptr(GVariant) row = g_variant_get_child_value (rows, i);

      if (i > first)
        g_string_append_c (out, ',');
      qstore_tool_append_json_tuple (out, row);
    }
  g_string_append_c (out, ']');
  return g_string_free (out, FALSE);
}

/* Signals */

/* Sends one signal to everyone listening, if anyone subscribed; takes
 * @parameters. A signal that cannot go out is followed by Gap. */
static void
emit (Server     *server,
      const char *name,
      GVariant   *parameters)
{
  g_autoptr(GVariant) owned = g_variant_ref_sink (parameters);
  g_autoptr(GError) error = NULL;

  if (server->n_subscribed == 0)
    return;
  if (g_dbus_connection_emit_signal (server->connection, NULL, QSTORE_TOOL_SERVER_PATH,
                                     QSTORE_TOOL_SERVER_INTERFACE, name, owned, &error))
    {
      server->n_signals++;
      return;
    }
  server->n_failed++;
  log_line ("%s could not be sent: %s", name, error->message);
  if (!g_str_equal (name, "Gap"))
    {
      g_autofree char *reason = g_strdup_printf ("a %s signal could not be sent: %s",
                                                 name, error->message);

      emit (server, "Gap", g_variant_new ("(sx)", reason, (gint64) -1));
    }
}

static void
on_committed (QStoreReplica   *replica,
              QStoreChangeSet *change_set,
              Server          *server)
{
  g_autoptr(GStrvBuilder) tables = NULL;
  g_autoptr(GHashTable) seen = NULL;
  g_auto(GStrv) table_names = NULL;
  guint64 tx = qstore_change_set_get_tx_id (change_set);
  guint n = qstore_change_set_get_n_changes (change_set);

  if (server->n_subscribed == 0)
    return;

  tables = g_strv_builder_new ();
  seen = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  for (guint i = 0; i < n; i++)
    {
      char *table = g_strdup_printf ("%s.%s", qstore_change_set_get_schema (change_set, i),
                                     qstore_change_set_get_table (change_set, i));

      if (g_hash_table_add (seen, table))
        g_strv_builder_add (tables, table);
    }
  table_names = g_strv_builder_end (tables);
  emit (server, "Committed",
        g_variant_new ("(tx^asu)", tx, qstore_change_set_get_time (change_set),
                       table_names, n));

  for (guint first = 0; first < n; first += server->rows_per_signal)
    {
      g_autoptr(GString) rows = g_string_new ("[");
      guint count = MIN (server->rows_per_signal, n - first);

      for (guint i = first; i < first + count; i++)
        {
          if (i > first)
            g_string_append_c (rows, ',');
          qstore_tool_append_json_change (rows, change_set, i);
        }
      g_string_append_c (rows, ']');
      emit (server, "CommittedRows", g_variant_new ("(tuus)", tx, first, n, rows->str));
    }
}

static void
on_hydrated (QStoreReplica *replica,
             guint64        query_id,
             guint64        tx,
             GVariant      *rows,
             Server        *server)
{
  gsize n = g_variant_n_children (rows);
  gsize first = 0;

  /* An empty result is one signal too: it says the query ran. */
  do
    {
      gsize count = MIN (server->rows_per_signal, n - first);
      g_autofree char *json = rows_to_json (rows, first, count);

      emit (server, "Hydrated",
            g_variant_new ("(ttuus)", query_id, tx, (guint32) first, (guint32) n, json));
      first += count;
    }
  while (first < n);
}

static void
on_changed (QStoreReplica *replica,
            guint64        query_id,
            guint64        tx,
            GVariant      *removed,
            GVariant      *added,
            Server        *server)
{
  gsize n_removed = g_variant_n_children (removed);
  gsize n_added = g_variant_n_children (added);
  gsize done = 0;

  /* Removed rows first, then added ones, at most rows_per_signal of
   * them together in each slice. */
  do
    {
      gsize r_first = MIN (done, n_removed);
      gsize r_count = MIN (server->rows_per_signal, n_removed - r_first);
      gsize a_first = 0, a_count = 0;
      g_autofree char *removed_json = NULL;
      g_autofree char *added_json = NULL;

      if (done + r_count >= n_removed)
        {
          a_first = done + r_count - n_removed;
          a_count = MIN (server->rows_per_signal - r_count, n_added - a_first);
        }
      removed_json = rows_to_json (removed, r_first, r_count);
      added_json = rows_to_json (added, a_first, a_count);
      emit (server, "Changed",
            g_variant_new ("(ttss)", query_id, tx, removed_json, added_json));
      done += r_count + a_count;
    }
  while (done < n_removed + n_added);
}

static void
on_progressed (QStoreReplica *replica,
               guint          worker,
               guint64        tx,
               Server        *server)
{
  emit (server, "Progressed", g_variant_new ("(ut)", worker, tx));
}

static void
forget_query (Server  *server,
              guint64  query_id)
{
  Query *query = g_hash_table_lookup (server->queries, &query_id);
  Peer *peer;

  if (query == NULL)
    return;
  peer = g_hash_table_lookup (server->peers, query->owner);
  if (peer != NULL && peer->n_queries > 0)
    peer->n_queries--;
  g_hash_table_remove (server->queries, &query_id);
}

static void
on_faulted (QStoreReplica *replica,
            guint64        query_id,
            const char    *reason,
            Server        *server)
{
  /* The replica let the query go: its caller registers it again. */
  if (g_hash_table_contains (server->queries, &query_id))
    {
      log_line ("live query %" G_GUINT64_FORMAT " faulted: %s", query_id, reason);
      forget_query (server, query_id);
    }
  emit (server, "Faulted", g_variant_new ("(ts)", query_id, reason));
}

/* Callers */

static void
query_free (Query *query)
{
  g_free (query->sql);
  g_free (query->owner);
  g_free (query);
}

static void
peer_free (Peer *peer)
{
  if (peer->watch_id != 0)
    g_bus_unwatch_name (peer->watch_id);
  g_free (peer);
}

static void
drop_peer (Server     *server,
           const char *name)
{
  Peer *peer = g_hash_table_lookup (server->peers, name);
  g_autoptr(GArray) ids = NULL;
  GHashTableIter iter;
  Query *query;

  if (peer == NULL)
    return;
  ids = g_array_new (FALSE, FALSE, sizeof (guint64));
  g_hash_table_iter_init (&iter, server->queries);
  while (g_hash_table_iter_next (&iter, NULL, (gpointer *) &query))
    if (g_str_equal (query->owner, name))
      g_array_append_val (ids, query->id);
  for (guint i = 0; i < ids->len; i++)
    {
      guint64 id = g_array_index (ids, guint64, i);

      qstore_replica_destroy_query (server->replica, id);
      g_hash_table_remove (server->queries, &id);
    }
  if (peer->subscribed)
    server->n_subscribed--;
  log_line ("%s left the bus: %u live queries ended%s", name, ids->len,
            peer->subscribed ? ", subscription ended" : "");
  g_hash_table_remove (server->peers, name);
}

static void
on_peer_vanished (GDBusConnection *connection,
                  const char      *name,
                  gpointer         data)
{
  drop_peer (data, name);
}

static Peer *
get_peer (Server     *server,
          const char *name)
{
  Peer *peer = g_hash_table_lookup (server->peers, name);

  if (peer != NULL)
    return peer;
  peer = g_new0 (Peer, 1);
  g_hash_table_insert (server->peers, g_strdup (name), peer);
  /* A caller that leaves without saying so still lets its queries go. */
  peer->watch_id = g_bus_watch_name_on_connection (server->connection, name,
                                                   G_BUS_NAME_WATCHER_FLAGS_NONE, NULL,
                                                   on_peer_vanished, server, NULL);
  return peer;
}

static void
subscribe (Server     *server,
           const char *name)
{
  Peer *peer = get_peer (server, name);

  if (peer->subscribed)
    return;
  peer->subscribed = TRUE;
  server->n_subscribed++;
  log_line ("%s subscribed (%u subscribers)", name, server->n_subscribed);
}

/* Methods */

typedef void (*MethodFunc) (Server                *server,
                            GVariant              *parameters,
                            GDBusMethodInvocation *invocation);

/* A store opened read-only beside the server's writer, as the commands
 * open it: the catalog and stale report read exactly what they read. */
static QStoreProvider *
open_reader (Server                *server,
             GDBusMethodInvocation *invocation)
{
  g_autoptr(GError) error = NULL;
  QStoreProvider *provider = qstore_provider_new_for_uri (server->store_uri,
                                                          QSTORE_OPEN_READ_ONLY, &error);

  if (provider == NULL)
    g_dbus_method_invocation_return_dbus_error (invocation, SERVER_ERROR_FAILED, error->message);
  return provider;
}

static void
return_json (GDBusMethodInvocation *invocation,
             JsonNode              *root)
{
  g_autofree char *text = json_to_string (root, FALSE);

  g_dbus_method_invocation_return_value (invocation, g_variant_new ("(s)", text));
}

static void
get_catalog (Server                *server,
             GVariant              *parameters,
             GDBusMethodInvocation *invocation)
{
  g_autoptr(QStoreProvider) provider = open_reader (server, invocation);
  g_autoptr(JsonNode) root = NULL;
  g_autoptr(GError) error = NULL;

  if (provider == NULL)
    return;
  root = qstore_tool_catalog_to_json (provider, &error);
  qstore_provider_close_all (provider);
  if (root == NULL)
    g_dbus_method_invocation_return_dbus_error (invocation, SERVER_ERROR_FAILED, error->message);
  else
    return_json (invocation, root);
}

static void
get_stale_report (Server                *server,
                  GVariant              *parameters,
                  GDBusMethodInvocation *invocation)
{
  g_autoptr(QStoreProvider) provider = open_reader (server, invocation);
  g_autoptr(QStoreStaleReport) report = NULL;
  g_autoptr(JsonNode) root = NULL;
  g_autoptr(GError) error = NULL;

  if (provider == NULL)
    return;
  report = qstore_stale_report_new (provider, &error);
  qstore_provider_close_all (provider);
  if (report == NULL)
    {
      g_dbus_method_invocation_return_dbus_error (invocation, SERVER_ERROR_FAILED, error->message);
      return;
    }
  root = qstore_tool_stale_report_to_json (report, NULL);
  return_json (invocation, root);
}

static void
get_staging_leftovers (Server                *server,
                       GVariant              *parameters,
                       GDBusMethodInvocation *invocation)
{
  g_autoptr(QStoreDatabase) reader = NULL;
  g_autoptr(QStoreStagingLeftovers) leftovers = NULL;
  g_autoptr(JsonArray) runs = json_array_new ();
  g_autoptr(JsonNode) root = NULL;
  g_autoptr(GError) error = NULL;

  /* A reader of its own, beside the server's writer. */
  reader = qstore_database_open (server->store_uri, QSTORE_OPEN_READ_ONLY, &error);
  if (reader != NULL)
    leftovers = qstore_staging_leftovers_read (reader, &error);
  if (leftovers == NULL)
    {
      g_dbus_method_invocation_return_dbus_error (invocation, SERVER_ERROR_FAILED, error->message);
      return;
    }
  for (guint i = 0; i < g_list_model_get_n_items (G_LIST_MODEL (leftovers)); i++)
    {
      g_autoptr(QStoreStagingRun) run = g_list_model_get_item (G_LIST_MODEL (leftovers), i);

      json_array_add_element (runs, qstore_tool_staging_run_to_json (
        run, qstore_staging_leftovers_get_stale_after_ms (leftovers), NULL));
    }
  qstore_database_close (reader, NULL);
  root = json_node_init_array (json_node_alloc (), runs);
  return_json (invocation, root);
}

static void
list_queries (Server                *server,
              GVariant              *parameters,
              GDBusMethodInvocation *invocation)
{
  GVariantBuilder builder;
  GHashTableIter iter;
  Query *query;

  g_variant_builder_init (&builder, G_VARIANT_TYPE ("a(tssu)"));
  g_hash_table_iter_init (&iter, server->queries);
  while (g_hash_table_iter_next (&iter, NULL, (gpointer *) &query))
    g_variant_builder_add (&builder, "(tssu)", query->id, query->sql, query->owner, query->worker);
  g_dbus_method_invocation_return_value (invocation, g_variant_new ("(a(tssu))", &builder));
}

static void
register_query (Server                *server,
                GVariant              *parameters,
                GDBusMethodInvocation *invocation)
{
  const char *caller = g_dbus_method_invocation_get_sender (invocation);
  g_autoptr(GError) error = NULL;
  const char *sql;
  Query *query;
  guint worker = 0;

  if (!server->allow_queries)
    {
      g_dbus_method_invocation_return_dbus_error (invocation, SERVER_ERROR_NOT_ALLOWED,
                                                  "This server does not take live queries: "
                                                  "start it with qstore serve --allow-queries");
      return;
    }
  g_variant_get (parameters, "(&s)", &sql);

  /* Subscribed first: Hydrated may leave before the reply does. */
  subscribe (server, caller);
  if (!qstore_replica_register_query (server->replica, server->last_query_id + 1, sql,
                                      &worker, &error))
    {
      g_dbus_method_invocation_return_dbus_error (invocation, SERVER_ERROR_FAILED, error->message);
      return;
    }
  query = g_new0 (Query, 1);
  query->id = ++server->last_query_id;
  query->sql = g_strdup (sql);
  query->owner = g_strdup (caller);
  query->worker = worker;
  g_hash_table_insert (server->queries, &query->id, query);
  get_peer (server, caller)->n_queries++;
  log_line ("%s registered live query %" G_GUINT64_FORMAT " on worker %u",
            caller, query->id, worker);
  g_dbus_method_invocation_return_value (invocation, g_variant_new ("(t)", query->id));
}

static void
destroy_query (Server                *server,
               GVariant              *parameters,
               GDBusMethodInvocation *invocation)
{
  const char *caller = g_dbus_method_invocation_get_sender (invocation);
  g_autofree char *message = NULL;
  guint64 id;
  Query *query;

  g_variant_get (parameters, "(t)", &id);
  query = g_hash_table_lookup (server->queries, &id);
  if (query == NULL)
    message = g_strdup_printf ("No live query %" G_GUINT64_FORMAT " on this server: "
                               "ListQueries tells which there are", id);
  else if (!g_str_equal (query->owner, caller))
    message = g_strdup_printf ("Live query %" G_GUINT64_FORMAT " belongs to %s: only the "
                               "caller that registered it may destroy it", id, query->owner);
  if (message != NULL)
    {
      g_dbus_method_invocation_return_dbus_error (invocation,
                                                  query == NULL ? SERVER_ERROR_NOT_FOUND
                                                                : SERVER_ERROR_NOT_ALLOWED,
                                                  message);
      return;
    }
  qstore_replica_destroy_query (server->replica, id);
  forget_query (server, id);
  log_line ("%s destroyed live query %" G_GUINT64_FORMAT, caller, id);
  g_dbus_method_invocation_return_value (invocation, NULL);
}

static void
subscribe_method (Server                *server,
                  GVariant              *parameters,
                  GDBusMethodInvocation *invocation)
{
  subscribe (server, g_dbus_method_invocation_get_sender (invocation));
  g_dbus_method_invocation_return_value (invocation, NULL);
}

static void
unsubscribe_method (Server                *server,
                    GVariant              *parameters,
                    GDBusMethodInvocation *invocation)
{
  const char *caller = g_dbus_method_invocation_get_sender (invocation);
  Peer *peer = g_hash_table_lookup (server->peers, caller);

  if (peer != NULL && peer->subscribed)
    {
      peer->subscribed = FALSE;
      server->n_subscribed--;
      log_line ("%s unsubscribed (%u subscribers)", caller, server->n_subscribed);
      if (peer->n_queries == 0)
        g_hash_table_remove (server->peers, caller);
    }
  g_dbus_method_invocation_return_value (invocation, NULL);
}

static void
execute (Server                *server,
         GVariant              *parameters,
         GDBusMethodInvocation *invocation)
{
  g_autoptr(QStoreReplicaTxn) txn = NULL;
  g_autoptr(QStoreReplicaCommitInfo) info = NULL;
  g_autoptr(GError) error = NULL;
  const char *sql;

  if (!server->allow_writes)
    {
      g_dbus_method_invocation_return_dbus_error (invocation, SERVER_ERROR_NOT_ALLOWED,
                                                  "This server does not take writes: start "
                                                  "it with qstore serve --allow-writes");
      return;
    }
  g_variant_get (parameters, "(&s)", &sql);
  if ((txn = qstore_replica_begin_write (server->replica, &error)) == NULL ||
      qstore_replica_txn_exec (txn, sql, NULL, &error) < 0 ||
      (info = qstore_replica_txn_commit_with_info (txn, &error)) == NULL)
    {
      if (txn != NULL && qstore_replica_txn_is_open (txn))
        qstore_replica_txn_rollback (txn);
      g_dbus_method_invocation_return_dbus_error (invocation, SERVER_ERROR_FAILED, error->message);
      return;
    }
  g_dbus_method_invocation_return_value (invocation,
                                         g_variant_new ("(tt)",
                                                        qstore_replica_commit_info_get_tx_id (info),
                                                        qstore_replica_commit_info_get_n_changes (info)));
}

/* One entry per method of org.qstore.Server1. */
static const struct
{
  const char *name;
  MethodFunc  func;
} methods[] = {
  { "GetCatalog", get_catalog },
  { "GetStaleReport", get_stale_report },
  { "GetStagingLeftovers", get_staging_leftovers },
  { "ListQueries", list_queries },
  { "RegisterQuery", register_query },
  { "DestroyQuery", destroy_query },
  { "Subscribe", subscribe_method },
  { "Unsubscribe", unsubscribe_method },
  { "Execute", execute },
};

static void
on_method_call (GDBusConnection       *connection,
                const char            *sender,
                const char            *object_path,
                const char            *interface_name,
                const char            *method_name,
                GVariant              *parameters,
                GDBusMethodInvocation *invocation,
                gpointer               data)
{
  Server *server = data;

  if (server->replica == NULL)
    {
      /* Only while the replica opens, should it run the main loop. */
      g_dbus_method_invocation_return_dbus_error (invocation, SERVER_ERROR_FAILED,
                                                  "The server is still opening its store: "
                                                  "call again in a moment");
      return;
    }
  for (guint i = 0; i < G_N_ELEMENTS (methods); i++)
    if (g_str_equal (methods[i].name, method_name))
      {
        methods[i].func (data, parameters, invocation);
        return;
      }
  /* GDBus checked the name against the interface: a method missing from
   * the table is a bug here. */
  g_dbus_method_invocation_return_dbus_error (invocation, SERVER_ERROR_NOT_SUPPORTED,
                                              "This server does not implement the method");
}

static GVariant *
on_get_property (GDBusConnection  *connection,
                 const char       *sender,
                 const char       *object_path,
                 const char       *interface_name,
                 const char       *property_name,
                 GError          **error,
                 gpointer          data)
{
  Server *server = data;

  if (g_str_equal (property_name, "StoreUri"))
    return g_variant_new_string (server->store_uri);
  if (g_str_equal (property_name, "Provider"))
    {
      const char *colon = strchr (server->store_uri, ':');
      g_autofree char *name = g_strndup (server->store_uri,
                                         colon != NULL ? (gsize) (colon - server->store_uri) : 0);

      return g_variant_new_string (name);
    }
  if (g_str_equal (property_name, "TxId"))
    return g_variant_new_uint64 (server->replica != NULL
                                   ? qstore_replica_get_committed_tx_id (server->replica)
                                   : 0);
  if (g_str_equal (property_name, "LiveQueries"))
    return g_variant_new_uint32 (g_hash_table_size (server->queries));
  if (g_str_equal (property_name, "Uptime"))
    return g_variant_new_uint64 ((g_get_monotonic_time () - server->started_us) / 1000);
  if (g_str_equal (property_name, "RowsPerSignal"))
    return g_variant_new_uint32 (server->rows_per_signal);
  if (g_str_equal (property_name, "AllowQueries"))
    return g_variant_new_boolean (server->allow_queries);
  if (g_str_equal (property_name, "AllowWrites"))
    return g_variant_new_boolean (server->allow_writes);
  g_set_error (error, G_DBUS_ERROR, G_DBUS_ERROR_UNKNOWN_PROPERTY,
               "No property %s", property_name);
  return NULL;
}

static const GDBusInterfaceVTable vtable = {
  on_method_call,
  on_get_property,
  NULL,
  { 0 }
};

/* Running */

static gboolean
on_unix_signal (gpointer data)
{
  Server *server = data;

  log_line ("stopping");
  g_main_loop_quit (server->loop);
  return G_SOURCE_CONTINUE;
}

static void
on_connection_closed (GDBusConnection *connection,
                      gboolean         remote_peer_vanished,
                      GError          *error,
                      Server          *server)
{
  log_line ("the session bus went away: stopping");
  g_main_loop_quit (server->loop);
}

/* The name first, before the store opens: a second server of the same
 * id is refused before it could write anything. */
static gboolean
request_name (Server  *server,
              GError **error)
{
  g_autoptr(GVariant) reply = NULL;
  guint32 result;

  reply = g_dbus_connection_call_sync (server->connection, "org.freedesktop.DBus",
                                       "/org/freedesktop/DBus", "org.freedesktop.DBus",
                                       "RequestName",
                                       g_variant_new ("(su)", server->bus_name,
                                                      (guint32) 0x4 /* DO_NOT_QUEUE */),
                                       G_VARIANT_TYPE ("(u)"), G_DBUS_CALL_FLAGS_NONE, -1,
                                       NULL, error);
  if (reply == NULL)
    return FALSE;
  g_variant_get (reply, "(u)", &result);
  if (result != 1 /* PRIMARY_OWNER */)
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_BUSY,
                   "Another server already has the name %s on the session bus: a store "
                   "has one writer, so stop that server first, or give this one "
                   "another --id", server->bus_name);
      return FALSE;
    }
  return TRUE;
}

static int
serve (Server *server)
{
  g_autoptr(GError) error = NULL;
  gulong handlers[5];
  int status = QSTORE_TOOL_EXIT_OK;

  server->connection = g_bus_get_sync (G_BUS_TYPE_SESSION, NULL, &error);
  if (server->connection == NULL)
    return qstore_tool_fail_message ("Cannot reach the session bus: %s", error->message);
  g_dbus_connection_set_exit_on_close (server->connection, FALSE);

  /* The object is there before the name is, so whoever sees the name
   * appear can call it at once; calls wait for the main loop, which runs
   * once the store is open. */
  server->registration_id =
    g_dbus_connection_register_object (server->connection, QSTORE_TOOL_SERVER_PATH,
                                       (GDBusInterfaceInfo *) &qstore_server1_interface,
                                       &vtable, server, NULL, &error);
  if (server->registration_id == 0)
    return qstore_tool_fail (error);
  if (!request_name (server, &error))
    return qstore_tool_fail (error);

  server->replica = qstore_replica_open (server->store_uri, 0, 0, &error);
  if (server->replica == NULL)
    return qstore_tool_fail (error);
  handlers[0] = g_signal_connect (server->replica, "committed", G_CALLBACK (on_committed), server);
  handlers[1] = g_signal_connect (server->replica, "hydrated", G_CALLBACK (on_hydrated), server);
  handlers[2] = g_signal_connect (server->replica, "changed", G_CALLBACK (on_changed), server);
  handlers[3] = g_signal_connect (server->replica, "progressed", G_CALLBACK (on_progressed), server);
  handlers[4] = g_signal_connect (server->replica, "faulted", G_CALLBACK (on_faulted), server);

  g_signal_connect (server->connection, "closed", G_CALLBACK (on_connection_closed), server);
  server->started_us = g_get_monotonic_time ();
  log_line ("serving %s as %s at %s (transaction %" G_GUINT64_FORMAT "; live queries %s, "
            "writes %s)", server->store_uri, server->bus_name, QSTORE_TOOL_SERVER_PATH,
            qstore_replica_get_committed_tx_id (server->replica),
            server->allow_queries ? "allowed" : "refused",
            server->allow_writes ? "allowed" : "refused");
  g_main_loop_run (server->loop);
  g_dbus_connection_unregister_object (server->connection, server->registration_id);

  /* Callers go first, so nothing reaches a replica being closed. */
  g_hash_table_remove_all (server->peers);
  g_hash_table_remove_all (server->queries);
  for (guint i = 0; i < G_N_ELEMENTS (handlers); i++)
    g_signal_handler_disconnect (server->replica, handlers[i]);
  if (!qstore_replica_close (server->replica, &error))
    status = qstore_tool_fail (error);
  g_clear_object (&server->replica);
  g_dbus_connection_flush_sync (server->connection, NULL, NULL);
  log_line ("stopped: %" G_GUINT64_FORMAT " signals sent, %" G_GUINT64_FORMAT " failed",
            server->n_signals, server->n_failed);
  return status;
}

int
qstore_tool_serve (QStoreTool  *tool,
                   int          argc,
                   char       **argv)
{
  g_autoptr(GOptionContext) context = NULL;
  g_autofree char *id = NULL;
  const char *command = argv[0];
  gboolean allow_queries = FALSE, allow_writes = FALSE;
  int rows_per_signal = DEFAULT_ROWS_PER_SIGNAL;
  Server server = { 0 };
  int status;
  const GOptionEntry entries[] = {
    { "id", 0, 0, G_OPTION_ARG_STRING, &id,
      "Serve as org.qstore.Server.NAME (letters, digits and _; default: from the "
      "store's path, such as shop_data for lmdb:/srv/shop-data)", "NAME" },
    { "allow-queries", 0, 0, G_OPTION_ARG_NONE, &allow_queries,
      "Let callers register live queries (RegisterQuery)", NULL },
    { "allow-writes", 0, 0, G_OPTION_ARG_NONE, &allow_writes,
      "Let callers run SQL that writes (Execute); off by default", NULL },
    { "rows-per-signal", 0, 0, G_OPTION_ARG_INT, &rows_per_signal,
      "The most rows one signal carries; more follow in further signals (default 500)",
      "N" },
    G_OPTION_ENTRY_NULL
  };

  context = qstore_tool_option_context_new (command, "",
                                            "Open the store as its one writer and serve it on "
                                            "the session bus as org.qstore.Server.NAME, at "
                                            "/org/qstore/Server (interface org.qstore.Server1): "
                                            "its catalog, stale views, live queries, and a signal "
                                            "for each committed transaction, sent while some "
                                            "caller subscribed. Logs to stderr; stops on SIGINT "
                                            "or SIGTERM, closing the store cleanly.");
  g_option_context_add_main_entries (context, entries, NULL);
  status = qstore_tool_parse_options (context, command, &argc, &argv);
  if (status != QSTORE_TOOL_EXIT_OK)
    return status;
  if (argc > 1)
    return qstore_tool_usage_error (command, "Unexpected argument “%s”", argv[1]);
  if (tool->store_uri == NULL)
    return qstore_tool_usage_error (command,
                                    "No store given: pass --store URI before the command "
                                    "(such as --store lmdb:/path/to/dir) or set QSTORE_STORE");
  if (id != NULL && !qstore_tool_server_id_is_valid (id))
    return qstore_tool_usage_error (command,
                                    "--id “%s” cannot end a bus name: use letters, digits "
                                    "and _, not starting with a digit", id);
  if (rows_per_signal < 1)
    return qstore_tool_usage_error (command, "--rows-per-signal takes 1 or more");

  if (id == NULL)
    id = qstore_tool_server_default_id (tool->store_uri);
  server.store_uri = tool->store_uri;
  server.bus_name = g_strconcat (QSTORE_TOOL_SERVER_NAME_PREFIX, id, NULL);
  server.allow_queries = allow_queries;
  server.allow_writes = allow_writes;
  server.rows_per_signal = (guint) rows_per_signal;
  server.loop = g_main_loop_new (NULL, FALSE);
  server.peers = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                        (GDestroyNotify) peer_free);
  server.queries = g_hash_table_new_full (g_int64_hash, g_int64_equal, NULL,
                                          (GDestroyNotify) query_free);
  g_unix_signal_add (SIGINT, on_unix_signal, &server);
  g_unix_signal_add (SIGTERM, on_unix_signal, &server);

  status = serve (&server);

  g_hash_table_unref (server.queries);
  g_hash_table_unref (server.peers);
  g_clear_object (&server.connection);
  g_main_loop_unref (server.loop);
  g_free (server.bus_name);
  return status;
}
