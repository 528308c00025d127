/* qstore-change-bus.c: a change feed that follows a qstore serve on D-Bus
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <json-glib/json-glib.h>
#include <string.h>

#include "qstore-change-feed-private.h"
#include "qstore-change-set-private.h"
#include "qstore-codec.h"
#include "qstore-error.h"
#include "qstore-i18n-private.h"
#include "qstore-server1-info.h"

/* The follower watches the server's well-known name (NameOwnerChanged)
 * and takes the server's signals only from the process that owns it now:
 * the bus matches on the well-known name, the sender check keeps out
 * whatever else this connection hears. Each owner is checked (does it
 * speak org.qstore.Server1 as this library knows it?) and then asked to
 * Subscribe. A transaction is told when its Committed and all its
 * CommittedRows arrived; anything that breaks that sequence is a gap,
 * never a crash, as the signals come from another process. */

struct _QStoreBusFollow
{
  GDBusConnection *connection;
  char            *name;
  char            *owner;          /* the name's owner now, or NULL */
  gboolean         checked;        /* the owner speaks our interface */
  gboolean         subscribed;     /* and accepted Subscribe */
  gboolean         served_before;  /* an owner was followed before */
  gint64           vanished_us;    /* when the last owner went (monotonic), or 0 */
  gboolean         rebase;         /* the next transaction sets the position */
  GCancellable    *cancellable;    /* the calls to the owner now */
  guint            owner_changed_id;
  guint            signals_id;
  gulong           closed_id;
  GHashTable      *tables;         /* "schema.table" → QStoreChangeTable */
  /* The transaction whose rows are arriving, if any */
  gboolean         assembling;
  guint64          tx;
  gint64           time;
  guint            expected;
  GArray          *changes;        /* QStoreChange */
};

typedef struct _QStoreBusFollow QStoreBusFollow;

static void
bus_follow_drop_transaction (QStoreBusFollow *bus)
{
  bus->assembling = FALSE;
  g_clear_pointer (&bus->changes, g_array_unref);
}

static void
bus_follow_free (QStoreBusFollow *bus)
{
  bus_follow_drop_transaction (bus);
  g_clear_pointer (&bus->tables, g_hash_table_unref);
  g_clear_object (&bus->cancellable);
  g_clear_object (&bus->connection);
  g_free (bus->owner);
  g_free (bus->name);
  g_free (bus);
}

/* Names */

static gboolean
is_server_id (const char *id)
{
  if (id[0] == '\0' || g_ascii_isdigit (id[0]))
    return FALSE;
  for (const char *p = id; *p != '\0'; p++)
    if (!g_ascii_isalnum (*p) && *p != '_')
      return FALSE;
  return TRUE;
}

/* @server as a well-known bus name: an id gets the prefix. */
static char *
server_bus_name (const char  *server,
                 GError     **error)
{
  if (is_server_id (server))
    {
      g_autofree char *name = g_strconcat (QSTORE_SERVER_NAME_PREFIX, server, NULL);

      if (g_dbus_is_name (name))
        return g_steal_pointer (&name);
    }
  else if (g_dbus_is_name (server) && !g_dbus_is_unique_name (server))
    return g_strdup (server);

  if (g_dbus_is_unique_name (server))
    g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                 _("“%s” names one process on the bus: follow the server by its "
                   "well-known name, such as %sshop, so that a restarted server is "
                   "followed too"), server, QSTORE_SERVER_NAME_PREFIX);
  else
    g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                 _("“%s” is neither a server id (letters, digits and _, not starting "
                   "with a digit, as given to qstore serve --id) nor a bus name"),
                 server);
  return NULL;
}

/* Checking a server */

static gboolean
same_args (GDBusArgInfo **a,
           GDBusArgInfo **b)
{
  guint i;

  for (i = 0; a != NULL && a[i] != NULL; i++)
    if (b == NULL || b[i] == NULL || !g_str_equal (a[i]->signature, b[i]->signature))
      return FALSE;
  return b == NULL || b[i] == NULL;
}

static char *
args_signature (GDBusArgInfo **args)
{
  GString *out = g_string_new ("(");

  for (guint i = 0; args != NULL && args[i] != NULL; i++)
    g_string_append (out, args[i]->signature);
  g_string_append_c (out, ')');
  return g_string_free (out, FALSE);
}

/* Whether the introspection data @xml of the owner's object offers what
 * the follower uses, with the types it expects. */
static gboolean
check_introspection (QStoreBusFollow  *bus,
                     const char       *xml,
                     GError          **error)
{
  const GDBusInterfaceInfo *ours = &qstore_server1_interface;
  g_autoptr(GDBusNodeInfo) node = g_dbus_node_info_new_for_xml (xml, NULL);
  GDBusInterfaceInfo *theirs = node != NULL
    ? g_dbus_node_info_lookup_interface (node, QSTORE_SERVER_INTERFACE)
    : NULL;
  static const char * const used_signals[] = { "Committed", "CommittedRows", "Gap" };
  static const char * const used_methods[] = { "Subscribe", "Unsubscribe" };

  if (theirs == NULL)
    {
      g_autoptr(GString) offered = g_string_new (NULL);

      for (guint i = 0; node != NULL && node->interfaces != NULL && node->interfaces[i] != NULL; i++)
        if (g_str_has_prefix (node->interfaces[i]->name, "org.qstore."))
          g_string_append_printf (offered, offered->len > 0 ? ", %s" : "%s",
                                  node->interfaces[i]->name);
      if (offered->len > 0)
        g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_UNSUPPORTED,
                     _("The server %s speaks %s, not %s: it is a qstore of another "
                       "version; follow it with a qstore of that version"),
                     bus->name, offered->str, QSTORE_SERVER_INTERFACE);
      else
        g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_UNSUPPORTED,
                     _("%s does not export %s at %s: it is not a qstore server, or "
                       "one of another version"),
                     bus->name, QSTORE_SERVER_INTERFACE, QSTORE_SERVER_PATH);
      return FALSE;
    }

  for (guint i = 0; i < G_N_ELEMENTS (used_signals); i++)
    {
      GDBusSignalInfo *want = g_dbus_interface_info_lookup_signal ((GDBusInterfaceInfo *) ours,
                                                                   used_signals[i]);
      GDBusSignalInfo *got = g_dbus_interface_info_lookup_signal (theirs, used_signals[i]);

      if (got == NULL || !same_args (want->args, got->args))
        {
          g_autofree char *expected = args_signature (want->args);

          g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_UNSUPPORTED,
                       _("The server %s has no signal %s%s as %s describes it: it is "
                         "a qstore of another version; follow it with a qstore of that "
                         "version"),
                       bus->name, used_signals[i], expected, QSTORE_SERVER_INTERFACE);
          return FALSE;
        }
    }
  for (guint i = 0; i < G_N_ELEMENTS (used_methods); i++)
    if (g_dbus_interface_info_lookup_method (theirs, used_methods[i]) == NULL)
      {
        g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_UNSUPPORTED,
                     _("The server %s has no method %s: it is a qstore of another "
                       "version; follow it with a qstore of that version"),
                     bus->name, used_methods[i]);
        return FALSE;
      }
  return TRUE;
}

/* A D-Bus error of a call to the server, as a QStoreError. */
static void
set_call_error (QStoreBusFollow  *bus,
                const char       *method,
                GError          **error,
                GError           *call_error)
{
  g_autofree char *remote = g_dbus_error_get_remote_error (call_error);

  g_dbus_error_strip_remote_error (call_error);
  if (g_error_matches (call_error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    g_propagate_error (error, g_error_copy (call_error));
  else if (g_error_matches (call_error, G_DBUS_ERROR, G_DBUS_ERROR_NAME_HAS_NO_OWNER) ||
           g_error_matches (call_error, G_DBUS_ERROR, G_DBUS_ERROR_SERVICE_UNKNOWN))
    g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_NOT_FOUND,
                 _("No server %s runs on the bus: start one with qstore --store URI "
                   "serve --id %s"),
                 bus->name, bus->name + strlen (QSTORE_SERVER_NAME_PREFIX));
  else
    g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_FAILED,
                 _("The server %s refused %s: %s"), bus->name, method, call_error->message);
}

/* What the follower tells */

static void
tell_gap (QStoreChangeFeed *self,
          const char       *reason,
          gint64            down_for_ms)
{
  self->bus->rebase = TRUE;
  bus_follow_drop_transaction (self->bus);
  qstore_change_feed_emit_gap (self, reason, down_for_ms);
}

static void
tell_transaction (QStoreChangeFeed *self)
{
  QStoreBusFollow *bus = self->bus;
  g_autoptr(QStoreChangeSet) change_set = NULL;
  guint64 tx = bus->tx;

  change_set = qstore_change_set_new_take (tx, bus->time, g_steal_pointer (&bus->changes));
  bus->assembling = FALSE;

  if (bus->rebase)
    {
      /* After a gap (or first), ids go on from wherever the server is:
       * a server restarted on a store made anew may count from 1 again. */
      bus->rebase = FALSE;
      if (tx <= self->position)
        {
          self->position = tx - 1;
          g_object_notify (G_OBJECT (self), "position");
        }
    }
  else if (tx <= self->position)
    {
      g_autofree char *reason =
        g_strdup_printf ("%s told transaction %" G_GUINT64_FORMAT " after transaction %"
                         G_GUINT64_FORMAT ": its transaction ids went back",
                         bus->name, tx, self->position);

      qstore_change_feed_emit_gap (self, reason, -1);
      self->position = tx - 1;
      g_object_notify (G_OBJECT (self), "position");
    }
  else if (tx > self->position + 1)
    {
      g_autofree char *reason =
        g_strdup_printf ("transactions %" G_GUINT64_FORMAT " to %" G_GUINT64_FORMAT
                         " were not seen", self->position + 1, tx - 1);

      qstore_change_feed_emit_gap (self, reason, -1);
    }
  qstore_change_feed_emit_changes (self, change_set);
}

/* Rows, from the server's JSON */

static GVariant *
value_from_json (JsonNode  *node,
                 GError   **error)
{
  if (JSON_NODE_HOLDS_NULL (node))
    return qstore_value_new_null ();
  if (JSON_NODE_HOLDS_VALUE (node))
    {
      switch (json_node_get_value_type (node))
        {
        case G_TYPE_INT64:
          return g_variant_new_int64 (json_node_get_int (node));
        case G_TYPE_DOUBLE:
          return g_variant_new_double (json_node_get_double (node));
        case G_TYPE_STRING:
          return g_variant_new_string (json_node_get_string (node));
        default:
          break;
        }
    }
  else if (JSON_NODE_HOLDS_OBJECT (node))
    {
      JsonObject *object = json_node_get_object (node);
      JsonNode *blob = json_object_get_member (object, "$blob");

      if (json_object_get_size (object) == 1 && blob != NULL &&
          JSON_NODE_HOLDS_VALUE (blob) && json_node_get_value_type (blob) == G_TYPE_STRING)
        {
          gsize len;
          g_autofree guchar *data = g_base64_decode (json_node_get_string (blob), &len);

          return g_variant_new_fixed_array (G_VARIANT_TYPE_BYTE, data, len, 1);
        }
    }
  g_set_error_literal (error, QSTORE_ERROR, QSTORE_ERROR_CORRUPT,
                       "a value is neither null, a number, a string nor a {\"$blob\"}");
  return NULL;
}

/* A row (a JSON array of values, or null) as the stored encoding. */
static gboolean
row_from_json (JsonNode  *node,
               GBytes   **row,
               GError   **error)
{
  g_auto(GVariantBuilder) builder = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_TUPLE);
  g_autoptr(GVariant) tuple = NULL;
  JsonArray *values;

  *row = NULL;
  if (node == NULL || JSON_NODE_HOLDS_NULL (node))
    return TRUE;
  if (!JSON_NODE_HOLDS_ARRAY (node))
    {
      g_set_error_literal (error, QSTORE_ERROR, QSTORE_ERROR_CORRUPT, "a row is not an array");
      return FALSE;
    }
  values = json_node_get_array (node);
  for (guint i = 0; i < json_array_get_length (values); i++)
    {
      GVariant *value = value_from_json (json_array_get_element (values, i), error);

      if (value == NULL)
        return FALSE;
      g_variant_builder_add_value (&builder, g_variant_new_variant (value));
    }
  tuple = g_variant_ref_sink (g_variant_builder_end (&builder));
  return (*row = qstore_codec_encode_row (tuple, error)) != NULL;
}

static QStoreChangeTable *
lookup_table (QStoreBusFollow  *bus,
              const char       *qualified,
              GError          **error)
{
  QStoreChangeTable *table = g_hash_table_lookup (bus->tables, qualified);
  const char *dot;

  if (table != NULL)
    return qstore_change_table_ref (table);
  /* Schemas are plain names; a table's own name may hold a dot. */
  dot = strchr (qualified, '.');
  if (dot == NULL || dot == qualified || dot[1] == '\0')
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_CORRUPT,
                   "the table “%s” is not schema.table", qualified);
      return NULL;
    }
  {
    g_autofree char *schema = g_strndup (qualified, dot - qualified);

    table = qstore_change_table_new (schema, dot + 1);
  }
  g_hash_table_insert (bus->tables, g_strdup (qualified), table);
  return qstore_change_table_ref (table);
}

static gboolean
append_changes (QStoreBusFollow  *bus,
                const char       *json,
                guint            *n_rows,
                GError          **error)
{
  g_autoptr(JsonParser) parser = json_parser_new ();
  JsonNode *root;
  JsonArray *rows;

  if (!json_parser_load_from_data (parser, json, -1, error))
    return FALSE;
  root = json_parser_get_root (parser);
  if (root == NULL || !JSON_NODE_HOLDS_ARRAY (root))
    {
      g_set_error_literal (error, QSTORE_ERROR, QSTORE_ERROR_CORRUPT, "the rows are not an array");
      return FALSE;
    }
  rows = json_node_get_array (root);
  for (guint i = 0; i < json_array_get_length (rows); i++)
    {
      JsonNode *node = json_array_get_element (rows, i);
      JsonObject *object = JSON_NODE_HOLDS_OBJECT (node) ? json_node_get_object (node) : NULL;
      const char *table, *op;
      QStoreChange change = { 0 };

      if (object == NULL ||
          (table = json_object_get_string_member_with_default (object, "table", NULL)) == NULL ||
          (op = json_object_get_string_member_with_default (object, "op", NULL)) == NULL)
        {
          g_set_error_literal (error, QSTORE_ERROR, QSTORE_ERROR_CORRUPT,
                               "a row change is not an object with a table and an op");
          return FALSE;
        }
      if (g_str_equal (op, "insert"))
        change.op = QSTORE_CHANGE_INSERT;
      else if (g_str_equal (op, "update"))
        change.op = QSTORE_CHANGE_UPDATE;
      else if (g_str_equal (op, "delete"))
        change.op = QSTORE_CHANGE_DELETE;
      else
        {
          g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_CORRUPT, "the op “%s” is unknown", op);
          return FALSE;
        }
      if (!row_from_json (json_object_get_member (object, "old"), &change.old_row, error) ||
          !row_from_json (json_object_get_member (object, "new"), &change.new_row, error) ||
          (change.table = lookup_table (bus, table, error)) == NULL)
        {
          qstore_change_clear (&change);
          return FALSE;
        }
      /* What each op has: an insert no old row, a delete no new one. */
      if ((change.op != QSTORE_CHANGE_INSERT) != (change.old_row != NULL) ||
          (change.op != QSTORE_CHANGE_DELETE) != (change.new_row != NULL))
        {
          qstore_change_clear (&change);
          g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_CORRUPT,
                       "an %s does not have the old and new rows it should", op);
          return FALSE;
        }
      g_array_append_val (bus->changes, change);
    }
  *n_rows = json_array_get_length (rows);
  return TRUE;
}

/* Signals */

static void
malformed (QStoreChangeFeed *self,
           const char       *member,
           GVariant         *parameters,
           const char       *expected)
{
  g_autofree char *reason =
    g_strdup_printf ("%s sent %s as %s, not %s as %s describes it: what it told is lost",
                     self->bus->name, member, g_variant_get_type_string (parameters), expected,
                     QSTORE_SERVER_INTERFACE);

  tell_gap (self, reason, -1);
}

static void
on_committed (QStoreChangeFeed *self,
              GVariant         *parameters)
{
  QStoreBusFollow *bus = self->bus;
  guint64 tx;
  gint64 time;
  guint32 n;

  if (!g_variant_is_of_type (parameters, G_VARIANT_TYPE ("(txasu)")))
    {
      malformed (self, "Committed", parameters, "(txasu)");
      return;
    }
  g_variant_get (parameters, "(txasu)", &tx, &time, NULL, &n);
  if (bus->assembling)
    {
      g_autofree char *reason =
        g_strdup_printf ("transaction %" G_GUINT64_FORMAT " was cut short: %u of its %u rows "
                         "did not arrive", bus->tx, bus->expected - bus->changes->len,
                         bus->expected);

      self->position = MAX (self->position, bus->tx);
      tell_gap (self, reason, -1);
    }
  bus->assembling = TRUE;
  bus->tx = tx;
  bus->time = time;
  bus->expected = n;
  /* The count is the server's word: reserve no more than a signal holds. */
  bus->changes = g_array_sized_new (FALSE, TRUE, sizeof (QStoreChange), MIN (n, 1024));
  g_array_set_clear_func (bus->changes, qstore_change_clear);
  if (n == 0)
    tell_transaction (self);
}

static void
on_committed_rows (QStoreChangeFeed *self,
                   GVariant         *parameters)
{
  QStoreBusFollow *bus = self->bus;
  g_autoptr(GError) error = NULL;
  const char *json;
  guint64 tx;
  guint32 first, total;
  guint n_rows = 0;

  if (!g_variant_is_of_type (parameters, G_VARIANT_TYPE ("(tuus)")))
    {
      malformed (self, "CommittedRows", parameters, "(tuus)");
      return;
    }
  g_variant_get (parameters, "(tuu&s)", &tx, &first, &total, &json);
  if (!bus->assembling || tx != bus->tx)
    {
      g_autofree char *reason = NULL;

      /* Rows of a transaction whose Committed came before this follower
       * subscribed: it starts with the next one. */
      if (bus->rebase || tx <= self->position)
        return;
      reason = g_strdup_printf ("rows of transaction %" G_GUINT64_FORMAT " came without its "
                                "Committed signal", tx);
      self->position = MAX (self->position, tx);
      tell_gap (self, reason, -1);
      return;
    }
  if (first != bus->changes->len || total != bus->expected ||
      !append_changes (bus, json, &n_rows, &error) || bus->changes->len > bus->expected)
    {
      g_autofree char *reason = NULL;

      if (error != NULL)
        reason = g_strdup_printf ("the rows of transaction %" G_GUINT64_FORMAT " from %s do "
                                  "not parse (%s): the transaction is lost", tx, bus->name,
                                  error->message);
      else
        reason = g_strdup_printf ("the rows of transaction %" G_GUINT64_FORMAT " from %s do "
                                  "not add up (rows %u of %u came after %u of %u): the "
                                  "transaction is lost", tx, bus->name, first, total,
                                  bus->changes->len, bus->expected);
      self->position = MAX (self->position, tx);
      tell_gap (self, reason, -1);
      return;
    }
  if (bus->changes->len == bus->expected)
    tell_transaction (self);
}

static void
on_gap_signal (QStoreChangeFeed *self,
               GVariant         *parameters)
{
  const char *reason;
  gint64 down_for_ms;

  if (!g_variant_is_of_type (parameters, G_VARIANT_TYPE ("(sx)")))
    {
      malformed (self, "Gap", parameters, "(sx)");
      return;
    }
  g_variant_get (parameters, "(&sx)", &reason, &down_for_ms);
  tell_gap (self, reason, down_for_ms < 0 ? -1 : down_for_ms);
}

static void
on_server_signal (GDBusConnection *connection,
                  const char      *sender,
                  const char      *path,
                  const char      *interface,
                  const char      *member,
                  GVariant        *parameters,
                  gpointer         data)
{
  QStoreChangeFeed *self = data;
  QStoreBusFollow *bus = self->bus;

  /* Only the process that owns the name now, once it passed the check. */
  if (bus == NULL || self->closed || !bus->checked || g_strcmp0 (sender, bus->owner) != 0)
    return;

  g_object_ref (self);
  if (g_str_equal (member, "Committed"))
    on_committed (self, parameters);
  else if (g_str_equal (member, "CommittedRows"))
    on_committed_rows (self, parameters);
  else if (g_str_equal (member, "Gap"))
    on_gap_signal (self, parameters);
  /* The live queries' signals are for whoever registered them. */
  g_object_unref (self);
}

/* Following owners */

static void
set_subscribed (QStoreChangeFeed *self,
                gboolean          subscribed)
{
  if (self->bus->subscribed == subscribed)
    return;
  self->bus->subscribed = subscribed;
  qstore_change_feed_notify_owner (self);
}

static void
subscribed_cb (GObject      *source,
               GAsyncResult *result,
               gpointer      data)
{
  g_autoptr(QStoreChangeFeed) self = data;
  g_autoptr(GVariant) reply = NULL;
  g_autoptr(GError) call_error = NULL;
  g_autoptr(GError) error = NULL;

  reply = g_dbus_connection_call_finish (G_DBUS_CONNECTION (source), result, &call_error);
  if (self->closed || self->bus == NULL ||
      g_error_matches (call_error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    return;
  if (reply != NULL)
    {
      set_subscribed (self, TRUE);
      return;
    }
  set_call_error (self->bus, "Subscribe", &error, call_error);
  qstore_change_feed_emit_failed (self, error);
}

static void
introspected_cb (GObject      *source,
                 GAsyncResult *result,
                 gpointer      data)
{
  g_autoptr(QStoreChangeFeed) self = data;
  g_autoptr(GVariant) reply = NULL;
  g_autoptr(GError) call_error = NULL;
  g_autoptr(GError) error = NULL;
  const char *xml;

  reply = g_dbus_connection_call_finish (G_DBUS_CONNECTION (source), result, &call_error);
  if (self->closed || self->bus == NULL ||
      g_error_matches (call_error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    return;
  if (reply == NULL)
    {
      set_call_error (self->bus, "Introspect", &error, call_error);
      qstore_change_feed_emit_failed (self, error);
      return;
    }
  g_variant_get (reply, "(&s)", &xml);
  if (!check_introspection (self->bus, xml, &error))
    {
      qstore_change_feed_emit_failed (self, error);
      return;
    }
  self->bus->checked = TRUE;
  g_dbus_connection_call (self->bus->connection, self->bus->owner, QSTORE_SERVER_PATH,
                          QSTORE_SERVER_INTERFACE, "Subscribe", NULL, G_VARIANT_TYPE_UNIT,
                          G_DBUS_CALL_FLAGS_NO_AUTO_START, -1, self->bus->cancellable,
                          subscribed_cb, g_object_ref (self));
}

static void
vanished (QStoreChangeFeed *self)
{
  QStoreBusFollow *bus = self->bus;
  gboolean was_subscribed = bus->subscribed;

  g_cancellable_cancel (bus->cancellable);
  g_clear_object (&bus->cancellable);
  g_clear_pointer (&bus->owner, g_free);
  bus->checked = FALSE;
  bus->vanished_us = g_get_monotonic_time ();
  /* A transaction cut off half way is not told. */
  bus_follow_drop_transaction (bus);
  if (was_subscribed)
    set_subscribed (self, FALSE);
}

/* @owner owns the name now: check it and subscribe, telling a gap first
 * when another server was followed before. */
static void
appeared (QStoreChangeFeed *self,
          const char       *owner)
{
  QStoreBusFollow *bus = self->bus;

  if (bus->owner != NULL)
    vanished (self);
  bus->owner = g_strdup (owner);
  bus->cancellable = g_cancellable_new ();
  if (bus->served_before)
    {
      gint64 down_for_ms = bus->vanished_us != 0
        ? (g_get_monotonic_time () - bus->vanished_us) / 1000
        : -1;

      /* What committed while nobody served, or before this server took
       * the subscription, is not known. */
      tell_gap (self, "server restarted", down_for_ms);
    }
  bus->served_before = TRUE;
  bus->vanished_us = 0;
  g_dbus_connection_call (bus->connection, owner, QSTORE_SERVER_PATH,
                          "org.freedesktop.DBus.Introspectable", "Introspect", NULL,
                          G_VARIANT_TYPE ("(s)"), G_DBUS_CALL_FLAGS_NO_AUTO_START, -1,
                          bus->cancellable, introspected_cb, g_object_ref (self));
}

static void
on_name_owner_changed (GDBusConnection *connection,
                       const char      *sender,
                       const char      *path,
                       const char      *interface,
                       const char      *member,
                       GVariant        *parameters,
                       gpointer         data)
{
  QStoreChangeFeed *self = data;
  const char *name, *old_owner, *new_owner;

  if (self->closed || self->bus == NULL ||
      !g_variant_is_of_type (parameters, G_VARIANT_TYPE ("(sss)")))
    return;
  g_variant_get (parameters, "(&s&s&s)", &name, &old_owner, &new_owner);
  if (!g_str_equal (name, self->bus->name))
    return;

  g_object_ref (self);
  /* Told again what the feed already knows (it asked at the start). */
  if (*new_owner != '\0' && g_strcmp0 (new_owner, self->bus->owner) != 0)
    appeared (self, new_owner);
  else if (*new_owner == '\0' && self->bus->owner != NULL &&
           (*old_owner == '\0' || g_str_equal (old_owner, self->bus->owner)))
    vanished (self);
  g_object_unref (self);
}

static void
on_closed (GDBusConnection *connection,
           gboolean         remote_peer_vanished,
           GError          *closed_error,
           gpointer         data)
{
  QStoreChangeFeed *self = data;
  g_autoptr(GError) error = NULL;

  if (self->closed || self->bus == NULL)
    return;
  g_object_ref (self);
  vanished (self);
  g_set_error (&error, QSTORE_ERROR, QSTORE_ERROR_CLOSED,
               _("The bus connection closed while following %s: make a new feed on "
                 "another connection"), self->bus->name);
  qstore_change_feed_emit_failed (self, error);
  g_object_unref (self);
}

/* Making one */

static QStoreChangeFeed *
feed_new (GDBusConnection *connection,
          const char      *name)
{
  QStoreChangeFeed *self = g_object_new (QSTORE_TYPE_CHANGE_FEED, NULL);
  QStoreBusFollow *bus = g_new0 (QStoreBusFollow, 1);

  self->bus = bus;
  bus->connection = g_object_ref (connection);
  bus->name = g_strdup (name);
  bus->rebase = TRUE;
  bus->tables = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                       (GDestroyNotify) qstore_change_table_unref);
  /* Before the owner is asked for: a change of owner meanwhile is not
   * missed. The signal handlers ignore everything until an owner is. */
  bus->owner_changed_id =
    g_dbus_connection_signal_subscribe (connection, "org.freedesktop.DBus",
                                        "org.freedesktop.DBus", "NameOwnerChanged",
                                        "/org/freedesktop/DBus", name,
                                        G_DBUS_SIGNAL_FLAGS_NONE, on_name_owner_changed,
                                        self, NULL);
  bus->signals_id =
    g_dbus_connection_signal_subscribe (connection, name, QSTORE_SERVER_INTERFACE, NULL,
                                        QSTORE_SERVER_PATH, NULL, G_DBUS_SIGNAL_FLAGS_NONE,
                                        on_server_signal, self, NULL);
  bus->closed_id = g_signal_connect (connection, "closed", G_CALLBACK (on_closed), self);
  return self;
}

void
qstore_change_feed_stop_bus (QStoreChangeFeed *self)
{
  QStoreBusFollow *bus = self->bus;

  if (bus == NULL)
    return;
  g_cancellable_cancel (bus->cancellable);
  g_dbus_connection_signal_unsubscribe (bus->connection, bus->owner_changed_id);
  g_dbus_connection_signal_unsubscribe (bus->connection, bus->signals_id);
  g_signal_handler_disconnect (bus->connection, bus->closed_id);
  /* Nobody waits for the answer; the server stops sending when it was
   * the last subscriber (it also notices a caller leaving the bus). */
  if (bus->owner != NULL && bus->checked && !g_dbus_connection_is_closed (bus->connection))
    g_dbus_connection_call (bus->connection, bus->owner, QSTORE_SERVER_PATH,
                            QSTORE_SERVER_INTERFACE, "Unsubscribe", NULL, NULL,
                            G_DBUS_CALL_FLAGS_NO_AUTO_START, -1, NULL, NULL, NULL);
  /* Keeps the bus name for get_bus_name(); the owner goes. */
  if (bus->subscribed)
    {
      bus->subscribed = FALSE;
      qstore_change_feed_notify_owner (self);
    }
  g_clear_object (&bus->cancellable);
  g_clear_pointer (&bus->tables, g_hash_table_unref);
  bus_follow_drop_transaction (bus);
  bus->owner_changed_id = bus->signals_id = 0;
  bus->closed_id = 0;
}

void
qstore_change_feed_free_bus (QStoreChangeFeed *self)
{
  g_clear_pointer (&self->bus, bus_follow_free);
}

/* Sync and async share this: the reply to GetNameOwner, or its error. */
static gboolean
take_owner (QStoreChangeFeed      *self,
            QStoreBusFollowFlags   flags,
            GVariant              *reply,
            GError                *call_error,
            gboolean              *has_owner,
            GError               **error)
{
  *has_owner = FALSE;
  if (reply != NULL)
    {
      const char *owner;

      g_variant_get (reply, "(&s)", &owner);
      /* A NameOwnerChanged that came first already told it. */
      if (self->bus->owner == NULL)
        {
          self->bus->owner = g_strdup (owner);
          self->bus->served_before = TRUE;
          self->bus->cancellable = g_cancellable_new ();
        }
      *has_owner = TRUE;
      return TRUE;
    }
  if (g_error_matches (call_error, G_DBUS_ERROR, G_DBUS_ERROR_NAME_HAS_NO_OWNER) &&
      (flags & QSTORE_BUS_FOLLOW_WAIT))
    return TRUE;
  set_call_error (self->bus, "GetNameOwner", error, call_error);
  return FALSE;
}

static GVariant *
call_sync (QStoreChangeFeed  *self,
           const char        *destination,
           const char        *path,
           const char        *interface,
           const char        *method,
           GVariant          *parameters,
           const char        *reply_type,
           GCancellable      *cancellable,
           GError           **error)
{
  return g_dbus_connection_call_sync (self->bus->connection, destination, path, interface,
                                      method, parameters, G_VARIANT_TYPE (reply_type),
                                      G_DBUS_CALL_FLAGS_NO_AUTO_START, -1, cancellable, error);
}

/**
 * qstore_change_feed_new_for_bus_sync:
 * @connection: (nullable): the bus the server is on, or %NULL for the
 *   session bus
 * @server: the server's id (as given to `qstore serve --id`, such as
 *   `shop`) or its well-known bus name (`org.qstore.Server.shop`)
 * @flags: whether to wait for a server that is not running
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Makes a feed that follows a `qstore serve` on D-Bus (see
 * [class@ChangeFeed]): it checks that the server speaks
 * `org.qstore.Server1`, subscribes to it, and emits
 * [signal@ChangeFeed::changes] for each transaction the server commits
 * from then on, with the same change sets an in-process subscriber gets
 * (but for their column names, which the server does not send). It
 * follows by itself in the thread-default main context of the caller,
 * from now until [method@ChangeFeed.close]; a server that stops and
 * starts again (or another that takes its name) is followed on after a
 * gap. Closing the feed, or dropping it, unsubscribes.
 *
 * This blocks until the server answered; from a user interface, use
 * [func@ChangeFeed.new_for_bus].
 *
 * Returns: (transfer full): the feed, or %NULL with
 *   %QSTORE_ERROR_INVALID_ARGUMENT when @server is no server id nor
 *   well-known bus name, %QSTORE_ERROR_NOT_FOUND when no such server
 *   runs (and @flags does not say to wait), %QSTORE_ERROR_UNSUPPORTED
 *   when it speaks another version of the interface, or
 *   %QSTORE_ERROR_FAILED when it refuses the subscription
 */
QStoreChangeFeed *
qstore_change_feed_new_for_bus_sync (GDBusConnection       *connection,
                                     const char            *server,
                                     QStoreBusFollowFlags   flags,
                                     GCancellable          *cancellable,
                                     GError               **error)
{
  g_autoptr(GDBusConnection) bus_connection = NULL;
  g_autoptr(QStoreChangeFeed) self = NULL;
  g_autoptr(GVariant) reply = NULL;
  g_autoptr(GError) call_error = NULL;
  g_autofree char *name = NULL;
  const char *xml;
  gboolean has_owner;

  g_return_val_if_fail (connection == NULL || G_IS_DBUS_CONNECTION (connection), NULL);
  g_return_val_if_fail (server != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!(name = server_bus_name (server, error)))
    return NULL;
  if (connection == NULL &&
      !(connection = bus_connection = g_bus_get_sync (G_BUS_TYPE_SESSION, cancellable, error)))
    return NULL;

  self = feed_new (connection, name);
  reply = g_dbus_connection_call_sync (connection, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                                       "org.freedesktop.DBus", "GetNameOwner",
                                       g_variant_new ("(s)", name), G_VARIANT_TYPE ("(s)"),
                                       G_DBUS_CALL_FLAGS_NONE, -1, cancellable, &call_error);
  if (!take_owner (self, flags, reply, call_error, &has_owner, error))
    return NULL;
  if (!has_owner)
    return g_steal_pointer (&self);
  g_clear_pointer (&reply, g_variant_unref);

  if (!(reply = call_sync (self, self->bus->owner, QSTORE_SERVER_PATH,
                           "org.freedesktop.DBus.Introspectable", "Introspect", NULL, "(s)",
                           cancellable, &call_error)))
    {
      set_call_error (self->bus, "Introspect", error, call_error);
      return NULL;
    }
  g_variant_get (reply, "(&s)", &xml);
  if (!check_introspection (self->bus, xml, error))
    return NULL;
  self->bus->checked = TRUE;
  g_clear_pointer (&reply, g_variant_unref);

  if (!(reply = call_sync (self, self->bus->owner, QSTORE_SERVER_PATH, QSTORE_SERVER_INTERFACE,
                           "Subscribe", NULL, "()", cancellable, &call_error)))
    {
      set_call_error (self->bus, "Subscribe", error, call_error);
      return NULL;
    }
  set_subscribed (self, TRUE);
  return g_steal_pointer (&self);
}

/* The async constructor: bus → GetNameOwner → Introspect → Subscribe. */

typedef struct
{
  char                 *name;
  QStoreBusFollowFlags  flags;
  QStoreChangeFeed     *feed;
} NewForBus;

static void
new_for_bus_free (NewForBus *data)
{
  g_free (data->name);
  g_clear_object (&data->feed);
  g_free (data);
}

static void
async_subscribed_cb (GObject      *source,
                     GAsyncResult *result,
                     gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  NewForBus *data = g_task_get_task_data (task);
  g_autoptr(GVariant) reply = NULL;
  g_autoptr(GError) call_error = NULL;
  GError *error = NULL;

  if (!(reply = g_dbus_connection_call_finish (G_DBUS_CONNECTION (source), result, &call_error)))
    {
      set_call_error (data->feed->bus, "Subscribe", &error, call_error);
      g_task_return_error (task, error);
      return;
    }
  set_subscribed (data->feed, TRUE);
  g_task_return_pointer (task, g_steal_pointer (&data->feed), g_object_unref);
}

static void
async_introspected_cb (GObject      *source,
                       GAsyncResult *result,
                       gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  NewForBus *data = g_task_get_task_data (task);
  QStoreBusFollow *bus = data->feed->bus;
  g_autoptr(GVariant) reply = NULL;
  g_autoptr(GError) call_error = NULL;
  GError *error = NULL;
  const char *xml;

  if (!(reply = g_dbus_connection_call_finish (G_DBUS_CONNECTION (source), result, &call_error)))
    {
      set_call_error (bus, "Introspect", &error, call_error);
      g_task_return_error (task, error);
      return;
    }
  g_variant_get (reply, "(&s)", &xml);
  if (!check_introspection (bus, xml, &error))
    {
      g_task_return_error (task, error);
      return;
    }
  bus->checked = TRUE;
  g_dbus_connection_call (bus->connection, bus->owner, QSTORE_SERVER_PATH,
                          QSTORE_SERVER_INTERFACE, "Subscribe", NULL, G_VARIANT_TYPE_UNIT,
                          G_DBUS_CALL_FLAGS_NO_AUTO_START, -1, g_task_get_cancellable (task),
                          async_subscribed_cb, g_object_ref (task));
}

static void
async_owner_cb (GObject      *source,
                GAsyncResult *result,
                gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  NewForBus *data = g_task_get_task_data (task);
  g_autoptr(GVariant) reply = NULL;
  g_autoptr(GError) call_error = NULL;
  GError *error = NULL;
  gboolean has_owner;

  reply = g_dbus_connection_call_finish (G_DBUS_CONNECTION (source), result, &call_error);
  if (!take_owner (data->feed, data->flags, reply, call_error, &has_owner, &error))
    {
      g_task_return_error (task, error);
      return;
    }
  if (!has_owner)
    {
      g_task_return_pointer (task, g_steal_pointer (&data->feed), g_object_unref);
      return;
    }
  g_dbus_connection_call (G_DBUS_CONNECTION (source), data->feed->bus->owner, QSTORE_SERVER_PATH,
                          "org.freedesktop.DBus.Introspectable", "Introspect", NULL,
                          G_VARIANT_TYPE ("(s)"), G_DBUS_CALL_FLAGS_NO_AUTO_START, -1,
                          g_task_get_cancellable (task), async_introspected_cb,
                          g_object_ref (task));
}

static void
start_on (GTask           *task,
          GDBusConnection *connection)
{
  NewForBus *data = g_task_get_task_data (task);

  data->feed = feed_new (connection, data->name);
  g_dbus_connection_call (connection, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                          "org.freedesktop.DBus", "GetNameOwner",
                          g_variant_new ("(s)", data->name), G_VARIANT_TYPE ("(s)"),
                          G_DBUS_CALL_FLAGS_NONE, -1, g_task_get_cancellable (task),
                          async_owner_cb, g_object_ref (task));
}

static void
async_bus_cb (GObject      *source,
              GAsyncResult *result,
              gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  g_autoptr(GDBusConnection) connection = NULL;
  GError *error = NULL;

  if (!(connection = g_bus_get_finish (result, &error)))
    {
      g_task_return_error (task, error);
      return;
    }
  start_on (task, connection);
}

/**
 * qstore_change_feed_new_for_bus:
 * @connection: (nullable): the bus the server is on, or %NULL for the
 *   session bus
 * @server: the server's id or well-known bus name
 * @flags: whether to wait for a server that is not running
 * @cancellable: (nullable): a #GCancellable
 * @callback: (scope async): called when the feed is made, or not
 * @user_data: (closure): data for @callback
 *
 * Makes a feed that follows a `qstore serve` on D-Bus without blocking:
 * see [ctor@ChangeFeed.new_for_bus_sync], of which this is the
 * asynchronous form. The feed follows in the thread-default main context
 * of the caller. Finish with [ctor@ChangeFeed.new_for_bus_finish].
 */
void
qstore_change_feed_new_for_bus (GDBusConnection       *connection,
                                const char            *server,
                                QStoreBusFollowFlags   flags,
                                GCancellable          *cancellable,
                                GAsyncReadyCallback    callback,
                                gpointer               user_data)
{
  g_autoptr(GTask) task = NULL;
  GError *error = NULL;
  NewForBus *data;

  g_return_if_fail (connection == NULL || G_IS_DBUS_CONNECTION (connection));
  g_return_if_fail (server != NULL);

  task = g_task_new (NULL, cancellable, callback, user_data);
  g_task_set_source_tag (task, qstore_change_feed_new_for_bus);
  data = g_new0 (NewForBus, 1);
  data->flags = flags;
  g_task_set_task_data (task, data, (GDestroyNotify) new_for_bus_free);
  if (!(data->name = server_bus_name (server, &error)))
    {
      g_task_return_error (task, error);
      return;
    }
  if (connection == NULL)
    g_bus_get (G_BUS_TYPE_SESSION, cancellable, async_bus_cb, g_steal_pointer (&task));
  else
    start_on (task, connection);
}

/**
 * qstore_change_feed_new_for_bus_finish:
 * @result: the result given to the callback of
 *   [func@ChangeFeed.new_for_bus]
 * @error: return location for a #GError
 *
 * Finishes making a feed that follows a server on the bus.
 *
 * Returns: (transfer full): the feed, or %NULL with the errors of
 *   [ctor@ChangeFeed.new_for_bus_sync]
 */
QStoreChangeFeed *
qstore_change_feed_new_for_bus_finish (GAsyncResult  *result,
                                       GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, NULL), NULL);
  g_return_val_if_fail (g_task_get_source_tag (G_TASK (result)) == qstore_change_feed_new_for_bus,
                        NULL);
  return g_task_propagate_pointer (G_TASK (result), error);
}

/**
 * qstore_change_feed_get_bus_name:
 * @self: a #QStoreChangeFeed
 *
 * Gets the well-known bus name of the server a bus follower follows
 * (see [property@ChangeFeed:bus-name]).
 *
 * Returns: (nullable): the bus name, or %NULL when @self follows no
 *   server
 */
const char *
qstore_change_feed_get_bus_name (QStoreChangeFeed *self)
{
  g_return_val_if_fail (QSTORE_IS_CHANGE_FEED (self), NULL);
  return self->bus != NULL ? self->bus->name : NULL;
}

/**
 * qstore_change_feed_get_server_owner:
 * @self: a #QStoreChangeFeed
 *
 * Gets the unique bus name of the server process followed now (see
 * [property@ChangeFeed:server-owner]).
 *
 * Returns: (nullable): the unique name, or %NULL while no server is
 *   followed
 */
const char *
qstore_change_feed_get_server_owner (QStoreChangeFeed *self)
{
  g_return_val_if_fail (QSTORE_IS_CHANGE_FEED (self), NULL);
  return self->bus != NULL && self->bus->subscribed ? self->bus->owner : NULL;
}
