/* qstore-inspector-events-page.c: what a running server tells, live
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <glib/gi18n.h>
#include <string.h>

#include "qstore-inspector-event.h"
#include "qstore-inspector-events-page.h"
#include "qstore-inspector-names.h"

/* The page follows one `qstore serve` on the session bus through a
 * QStoreChangeFeed, as every other follower does: the feed watches the
 * name, subscribes while it has an owner, and tells the commits and the
 * gaps (the server restarted or sent Gap, a transaction id was skipped).
 * The page lists those, says when the server went away, and listens
 * itself only to the live queries' signals of the process the feed
 * follows.
 *
 * The list keeps the last max-events events (the setting of that name),
 * so a busy server cannot fill the memory. Paused, the page holds what
 * comes (no more than max-events either) and lists it on resume. */

#define SERVER_PREFIX    QSTORE_SERVER_NAME_PREFIX
#define SERVER_PATH      QSTORE_SERVER_PATH
#define SERVER_INTERFACE QSTORE_SERVER_INTERFACE

struct _QStoreInspectorEventsPage
{
  AdwBin                      parent_instance;

  GDBusConnection            *bus;
  char                       *server;
  QStoreChangeFeed           *feed;
  char                       *owner;       /* whose live-query signals are heard */
  guint                       signal_id;
  QStoreInspectorEventsState  state;
  char                       *status;
  gboolean                    was_connected;
  GCancellable               *cancellable;
  GCancellable               *find_cancellable;

  GListStore                 *events;
  GQueue                      incoming;    /* come since the last flush */
  guint                       flush_id;
  GQueue                      held;
  guint                       max_events;
  gboolean                    paused;
  gboolean                    following;
  int                         kind_filter;
  char                       *table_filter;
  GtkCustomFilter            *filter;
  GtkFilterListModel         *shown;
  GtkSingleSelection         *selection;
  char                       *details;

  GtkStack                   *stack;
  GtkToggleButton            *pause_button;
  GtkDropDown                *kind_dropdown;
  GtkSearchEntry             *table_entry;
  GtkRevealer                *banner;
  GtkLabel                   *banner_label;
  GtkScrolledWindow          *scroller;
  GtkColumnView              *column_view;
  GtkLabel                   *detail_title;
  GtkLabel                   *detail_label;
  GtkLabel                   *count_label;
  GtkColumnViewColumn        *wide_columns[2];  /* Query and Rows */
  guint                       fit_id;
};

enum
{
  PROP_0,
  PROP_SERVER,
  PROP_STATE,
  PROP_MAX_EVENTS,
  PROP_PAUSED,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

G_DEFINE_FINAL_TYPE (QStoreInspectorEventsPage, qstore_inspector_events_page, ADW_TYPE_BIN)

/* Stores */

static char *
normalized_location (const char *uri)
{
  g_autofree char *location = qstore_inspector_location_of (uri);
  g_autofree char *canonical = NULL;
  gsize len;

  if (!g_path_is_absolute (location))
    return g_steal_pointer (&location);
  canonical = g_canonicalize_filename (location, NULL);
  len = strlen (canonical);
  while (len > 1 && canonical[len - 1] == '/')
    canonical[--len] = '\0';
  return g_steal_pointer (&canonical);
}

/**
 * qstore_inspector_same_store:
 * @a: a store URI
 * @b: another
 *
 * Whether @a and @b name the same store: the same provider, the same
 * location however spelled (`lmdb:/srv/shop/` and `lmdb:/srv/./shop`),
 * whatever options they pass.
 */
gboolean
qstore_inspector_same_store (const char *a,
                             const char *b)
{
  const char *colon_a = strchr (a, ':'), *colon_b = strchr (b, ':');
  g_autofree char *location_a = NULL;
  g_autofree char *location_b = NULL;

  if (colon_a == NULL || colon_b == NULL || colon_a - a != colon_b - b ||
      strncmp (a, b, colon_a - a) != 0)
    return FALSE;
  location_a = normalized_location (a);
  location_b = normalized_location (b);
  return *location_a != '\0' && g_str_equal (location_a, location_b);
}

/* Showing */

static void
update_count (QStoreInspectorEventsPage *self)
{
  guint n = g_list_model_get_n_items (G_LIST_MODEL (self->events));
  guint shown = g_list_model_get_n_items (G_LIST_MODEL (self->shown));
  g_autoptr(GString) text = g_string_new (NULL);

  if (shown != n)
    /* Translators: %u of %u events show, the others are filtered out */
    g_string_printf (text, ngettext ("%u of %u event", "%u of %u events", n), shown, n);
  else
    g_string_printf (text, ngettext ("%u event", "%u events", n), n);
  if (self->held.length > 0)
    {
      g_string_append (text, " · ");
      g_string_append_printf (text, ngettext ("%u held while paused", "%u held while paused",
                                              self->held.length),
                              self->held.length);
    }
  gtk_label_set_label (self->count_label, text->str);
}

static void
set_state (QStoreInspectorEventsPage  *self,
           QStoreInspectorEventsState  state,
           const char                 *status)
{
  g_free (self->status);
  self->status = g_strdup (status);
  gtk_label_set_label (self->banner_label, status ? status : "");
  gtk_revealer_set_reveal_child (self->banner, status != NULL);
  gtk_stack_set_visible_child_name (self->stack, state == QSTORE_INSPECTOR_EVENTS_NONE ? "none" : "events");
  if (self->state != state)
    {
      self->state = state;
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_STATE]);
    }
}

static void
show_details (QStoreInspectorEventsPage *self)
{
  QStoreInspectorEvent *event = gtk_single_selection_get_selected_item (self->selection);
  g_autofree char *title = NULL;
  g_autofree char *tx = NULL;

  g_clear_pointer (&self->details, g_free);
  if (event == NULL)
    {
      gtk_label_set_label (self->detail_title, _("No Event Selected"));
      gtk_label_set_label (self->detail_label, _("Select an event to see its rows."));
      gtk_widget_add_css_class (GTK_WIDGET (self->detail_label), "dim-label");
      return;
    }

  self->details = qstore_inspector_event_describe_rows (event);
  if (qstore_inspector_event_get_kind (event) == QSTORE_INSPECTOR_EVENT_GAP ||
      qstore_inspector_event_get_kind (event) == QSTORE_INSPECTOR_EVENT_FAULTED)
    title = qstore_inspector_event_describe (event);
  else
    {
      const char *kind = qstore_inspector_event_kind_label (qstore_inspector_event_get_kind (event));

      tx = g_strdup_printf ("%" G_GUINT64_FORMAT, qstore_inspector_event_get_tx (event));
      /* The Query column gives way in a narrow window: the heading says
       * it too. */
      if (qstore_inspector_event_has_query (event))
        {
          g_autofree char *query = g_strdup_printf ("%" G_GUINT64_FORMAT,
                                                    qstore_inspector_event_get_query (event));

          /* Translators: the heading of a live query's event; the first
           * %s is its kind (“Changed”), the second the query's number,
           * the third its transaction's number */
          title = g_strdup_printf (_("%s, query %s, transaction %s"), kind, query, tx);
        }
      else
        /* Translators: the heading of one event's rows; the first %s is
         * its kind (“Commit”), the second its transaction's number */
        title = g_strdup_printf (_("%s, transaction %s"), kind, tx);
    }
  gtk_label_set_label (self->detail_title, title);
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->detail_title), title);
  if (*self->details == '\0')
    {
      gtk_label_set_label (self->detail_label, _("No rows."));
      gtk_widget_add_css_class (GTK_WIDGET (self->detail_label), "dim-label");
    }
  else
    {
      gtk_label_set_label (self->detail_label, self->details);
      gtk_widget_remove_css_class (GTK_WIDGET (self->detail_label), "dim-label");
    }
}

/* Following the newest: the list stays at its end while it was there
 * when events came; scrolled up, it stays where the reader is. */
static void
scrolled_cb (QStoreInspectorEventsPage *self,
             GtkAdjustment             *adjustment)
{
  self->following = gtk_adjustment_get_value (adjustment) >=
                    gtk_adjustment_get_upper (adjustment) - gtk_adjustment_get_page_size (adjustment) - 4;
}

static void
grown_cb (QStoreInspectorEventsPage *self,
          GParamSpec                *pspec,
          GtkAdjustment             *adjustment)
{
  if (self->following)
    gtk_adjustment_set_value (adjustment,
                              gtk_adjustment_get_upper (adjustment) - gtk_adjustment_get_page_size (adjustment));
}

/* The list */

static void
trim (QStoreInspectorEventsPage *self)
{
  guint n = g_list_model_get_n_items (G_LIST_MODEL (self->events));

  if (n > self->max_events)
    g_list_store_splice (self->events, 0, n - self->max_events, NULL, 0);
  while (self->held.length > self->max_events)
    g_object_unref (g_queue_pop_head (&self->held));
}

static void
drop_all (GQueue *queue)
{
  while (queue->length > 0)
    g_object_unref (g_queue_pop_head (queue));
}

/* Lists the events come since the last flush in one change of the list:
 * a full list then drops its oldest in one change too, rather than
 * shifting every row of the view once per event. */
static void
flush_incoming (QStoreInspectorEventsPage *self)
{
  g_autoptr(GPtrArray) incoming = g_ptr_array_new_with_free_func (g_object_unref);
  guint n = g_list_model_get_n_items (G_LIST_MODEL (self->events));
  guint drop;
  QStoreInspectorEvent *event;

  g_clear_handle_id (&self->flush_id, g_source_remove);
  if (self->incoming.length == 0)
    return;
  while ((event = g_queue_pop_head (&self->incoming)) != NULL)
    g_ptr_array_add (incoming, event);
  if (incoming->len >= self->max_events)
    g_list_store_splice (self->events, 0, n, incoming->pdata + incoming->len - self->max_events,
                         self->max_events);
  else
    {
      drop = n + incoming->len > self->max_events ? n + incoming->len - self->max_events : 0;
      g_list_store_splice (self->events, 0, drop, NULL, 0);
      g_list_store_splice (self->events, n - drop, 0, incoming->pdata, incoming->len);
    }
  update_count (self);
}

static gboolean
flush_cb (gpointer data)
{
  QStoreInspectorEventsPage *self = data;

  self->flush_id = 0;
  flush_incoming (self);
  return G_SOURCE_REMOVE;
}

static void
add_event (QStoreInspectorEventsPage *self,
           QStoreInspectorEvent      *event)
{
  if (self->paused)
    {
      g_queue_push_tail (&self->held, g_object_ref (event));
      trim (self);
      update_count (self);
      return;
    }
  g_queue_push_tail (&self->incoming, g_object_ref (event));
  if (self->incoming.length > self->max_events)
    g_object_unref (g_queue_pop_head (&self->incoming));
  /* About a frame: a burst costs the list and its view one update. */
  if (self->flush_id == 0)
    self->flush_id = g_timeout_add (16, flush_cb, self);
}

static void
release_held (QStoreInspectorEventsPage *self)
{
  g_autoptr(GPtrArray) held = g_ptr_array_new_with_free_func (g_object_unref);
  QStoreInspectorEvent *event;

  while ((event = g_queue_pop_head (&self->held)) != NULL)
    g_ptr_array_add (held, event);
  g_list_store_splice (self->events, g_list_model_get_n_items (G_LIST_MODEL (self->events)), 0,
                       held->pdata, held->len);
  trim (self);
  update_count (self);
}

/* The bus */

/* The live queries' signals; commits and gaps come from the feed. */
static void
signal_cb (GDBusConnection *connection,
           const char      *sender,
           const char      *path,
           const char      *interface,
           const char      *signal_name,
           GVariant        *parameters,
           gpointer         user_data)
{
  QStoreInspectorEventsPage *self = user_data;
  g_autoptr(QStoreInspectorEvent) event = NULL;

  if (g_str_equal (signal_name, "Committed") || g_str_equal (signal_name, "CommittedRows") ||
      g_str_equal (signal_name, "Gap"))
    return;
  event = qstore_inspector_event_new_from_signal (signal_name, parameters, g_get_real_time ());
  if (event == NULL)
    {
      g_debug ("Ignoring %s from %s: not as org.qstore.Server1 describes it", signal_name, sender);
      return;
    }
  add_event (self, event);
}

static void
changes_cb (QStoreChangeFeed          *feed,
            QStoreChangeSet           *change_set,
            QStoreInspectorEventsPage *self)
{
  g_autoptr(QStoreInspectorEvent) event = qstore_inspector_event_new_committed (change_set);

  add_event (self, event);
}

static void
gap_cb (QStoreChangeFeed          *feed,
        const char                *reason,
        gint64                     down_for_ms,
        QStoreInspectorEventsPage *self)
{
  g_autoptr(QStoreInspectorEvent) gap = NULL;

  /* Told while the server is away, the gap is its return: said in the
   * user's language. The feed's other reasons are its own. */
  if (self->state == QSTORE_INSPECTOR_EVENTS_GONE && qstore_change_feed_get_server_owner (feed) == NULL)
    reason = _("The server restarted: what it did while away is not listed");
  gap = qstore_inspector_event_new_gap (reason, down_for_ms, g_get_real_time ());
  add_event (self, gap);
}

static void
failed_cb (QStoreChangeFeed          *feed,
           const GError              *error,
           QStoreInspectorEventsPage *self)
{
  g_autofree char *status = NULL;

  /* Translators: %s is the server's name on the bus, the second %s what went wrong */
  status = g_strdup_printf (_("The server %s does not send its events: %s"), self->server, error->message);
  set_state (self, QSTORE_INSPECTOR_EVENTS_GONE, status);
}

static void
stop_listening (QStoreInspectorEventsPage *self)
{
  if (self->signal_id != 0)
    g_dbus_connection_signal_unsubscribe (self->bus, self->signal_id);
  self->signal_id = 0;
  g_clear_pointer (&self->owner, g_free);
}

static void
owner_cb (QStoreChangeFeed          *feed,
          GParamSpec                *pspec,
          QStoreInspectorEventsPage *self)
{
  const char *owner = qstore_change_feed_get_server_owner (feed);
  g_autofree char *status = NULL;

  stop_listening (self);
  if (owner != NULL)
    {
      self->owner = g_strdup (owner);
      /* The owner's unique name, so a signal of another program never shows. */
      self->signal_id = g_dbus_connection_signal_subscribe (self->bus, owner, SERVER_INTERFACE, NULL,
                                                            SERVER_PATH, NULL, G_DBUS_SIGNAL_FLAGS_NONE,
                                                            signal_cb, self, NULL);
      self->was_connected = TRUE;
      set_state (self, QSTORE_INSPECTOR_EVENTS_CONNECTED, NULL);
    }
  else if (!self->was_connected)
    {
      /* Translators: %s is the server's name on the bus */
      status = g_strdup_printf (_("Waiting for the server %s to start…"), self->server);
      set_state (self, QSTORE_INSPECTOR_EVENTS_WAITING, status);
    }
  else if (self->state != QSTORE_INSPECTOR_EVENTS_GONE)
    {
      g_autoptr(GDateTime) now = g_date_time_new_now_local ();
      g_autofree char *time = g_date_time_format (now, "%H:%M:%S");

      /* Translators: %s is when the server left the bus (“14:02:11”) */
      status = g_strdup_printf (_("The server went away at %s. Its events show again when it returns."), time);
      set_state (self, QSTORE_INSPECTOR_EVENTS_GONE, status);
    }
}

static void
feed_made_cb (GObject      *object,
              GAsyncResult *result,
              gpointer      user_data)
{
  g_autoptr(QStoreChangeFeed) feed = NULL;
  g_autoptr(GError) error = NULL;
  QStoreInspectorEventsPage *self;
  g_autofree char *status = NULL;

  feed = qstore_change_feed_new_for_bus_finish (result, &error);
  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    return;
  self = user_data;
  if (feed == NULL)
    {
      /* Translators: %s is the server's name on the bus, the second %s what went wrong */
      status = g_strdup_printf (_("The server %s does not send its events: %s"), self->server, error->message);
      set_state (self, QSTORE_INSPECTOR_EVENTS_GONE, status);
      return;
    }
  self->feed = g_steal_pointer (&feed);
  g_signal_connect (self->feed, "changes", G_CALLBACK (changes_cb), self);
  g_signal_connect (self->feed, "gap", G_CALLBACK (gap_cb), self);
  g_signal_connect (self->feed, "failed", G_CALLBACK (failed_cb), self);
  g_signal_connect (self->feed, "notify::server-owner", G_CALLBACK (owner_cb), self);
  owner_cb (self->feed, NULL, self);
}

/* Stops following: the feed unsubscribes, so the server stops sending
 * when nobody else follows. */
static void
unsubscribe (QStoreInspectorEventsPage *self)
{
  stop_listening (self);
  if (self->feed != NULL)
    {
      g_signal_handlers_disconnect_by_data (self->feed, self);
      qstore_change_feed_close (self->feed);
      g_clear_object (&self->feed);
    }
}

/**
 * qstore_inspector_events_page_set_server:
 * @self: a #QStoreInspectorEventsPage
 * @bus_name: (nullable): a server's name on the session bus, such as
 *   `org.qstore.Server.shop`, or %NULL to follow none
 *
 * Follows @bus_name's events from now on, forgetting those of the server
 * followed before.
 */
void
qstore_inspector_events_page_set_server (QStoreInspectorEventsPage *self,
                                         const char                *bus_name)
{
  g_autoptr(GError) error = NULL;

  g_return_if_fail (QSTORE_INSPECTOR_IS_EVENTS_PAGE (self));

  if (g_strcmp0 (self->server, bus_name) == 0)
    return;

  unsubscribe (self);
  g_cancellable_cancel (self->cancellable);
  g_clear_object (&self->cancellable);
  g_clear_handle_id (&self->flush_id, g_source_remove);
  drop_all (&self->incoming);
  g_list_store_remove_all (self->events);
  drop_all (&self->held);
  self->was_connected = FALSE;
  self->following = TRUE;
  g_free (self->server);
  self->server = g_strdup (bus_name);
  update_count (self);

  if (bus_name == NULL)
    set_state (self, QSTORE_INSPECTOR_EVENTS_NONE, NULL);
  else if (!g_dbus_is_name (bus_name) || g_dbus_is_unique_name (bus_name))
    {
      /* Translators: %s is what was given as a server's name */
      g_autofree char *status = g_strdup_printf (_("“%s” is not a server’s name on the bus"), bus_name);

      set_state (self, QSTORE_INSPECTOR_EVENTS_GONE, status);
    }
  else if (self->bus == NULL && (self->bus = g_bus_get_sync (G_BUS_TYPE_SESSION, NULL, &error)) == NULL)
    set_state (self, QSTORE_INSPECTOR_EVENTS_GONE, error->message);
  else
    {
      self->cancellable = g_cancellable_new ();
      set_state (self, QSTORE_INSPECTOR_EVENTS_WAITING, NULL);
      qstore_change_feed_new_for_bus (self->bus, bus_name, QSTORE_BUS_FOLLOW_WAIT, self->cancellable,
                                      feed_made_cb, self);
    }
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_SERVER]);
}

/* Returns: (nullable): the bus name of the server followed */
const char *
qstore_inspector_events_page_get_server (QStoreInspectorEventsPage *self)
{
  g_return_val_if_fail (QSTORE_INSPECTOR_IS_EVENTS_PAGE (self), NULL);
  return self->server;
}

QStoreInspectorEventsState
qstore_inspector_events_page_get_state (QStoreInspectorEventsPage *self)
{
  g_return_val_if_fail (QSTORE_INSPECTOR_IS_EVENTS_PAGE (self), QSTORE_INSPECTOR_EVENTS_NONE);
  return self->state;
}

/* Returns: (nullable): what the page says about its server, when it is not following it */
const char *
qstore_inspector_events_page_get_status (QStoreInspectorEventsPage *self)
{
  g_return_val_if_fail (QSTORE_INSPECTOR_IS_EVENTS_PAGE (self), NULL);
  return self->status;
}

/* Servers */

static void
list_names (GDBusConnection     *bus,
            GCancellable        *cancellable,
            GAsyncReadyCallback  callback,
            gpointer             user_data)
{
  g_dbus_connection_call (bus, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                          "ListNames", NULL, G_VARIANT_TYPE ("(as)"), G_DBUS_CALL_FLAGS_NONE, 5000,
                          cancellable, callback, user_data);
}

static int
compare_names (gconstpointer a,
               gconstpointer b)
{
  return g_strcmp0 (*(const char * const *) a, *(const char * const *) b);
}

/* Returns: (transfer full) (nullable): the org.qstore.Server.* names of
 * list_names()'s answer, sorted; %NULL if there was none */
static GPtrArray *
list_names_finish (GObject      *object,
                   GAsyncResult *result)
{
  g_autoptr(GVariant) reply = g_dbus_connection_call_finish (G_DBUS_CONNECTION (object), result, NULL);
  g_autofree const char **names = NULL;
  GPtrArray *servers;

  if (reply == NULL)
    return NULL;
  servers = g_ptr_array_new_with_free_func (g_free);
  g_variant_get (reply, "(^a&s)", &names);
  for (guint i = 0; names[i] != NULL; i++)
    if (g_str_has_prefix (names[i], SERVER_PREFIX))
      g_ptr_array_add (servers, g_strdup (names[i]));
  g_ptr_array_sort (servers, compare_names);
  return servers;
}

typedef struct
{
  QStoreInspectorEventsPage *self;
  GDBusConnection           *bus;
  char                      *store_uri;
  GCancellable              *cancellable;
  guint                      pending;
  gboolean                   found;
} Find;

static void
find_unref (Find *find)
{
  if (--find->pending > 0)
    return;
  g_object_unref (find->bus);
  g_object_unref (find->cancellable);
  g_free (find->store_uri);
  g_free (find);
}

typedef struct
{
  Find *find;
  char *name;
} FindName;

static void
store_uri_cb (GObject      *object,
              GAsyncResult *result,
              gpointer      user_data)
{
  FindName *one = user_data;
  g_autoptr(GVariant) reply = g_dbus_connection_call_finish (G_DBUS_CONNECTION (object), result, NULL);

  if (reply != NULL && !g_cancellable_is_cancelled (one->find->cancellable) && !one->find->found)
    {
      g_autoptr(GVariant) value = NULL;

      g_variant_get (reply, "(v)", &value);
      if (g_variant_is_of_type (value, G_VARIANT_TYPE_STRING) &&
          qstore_inspector_same_store (g_variant_get_string (value, NULL), one->find->store_uri))
        {
          one->find->found = TRUE;
          qstore_inspector_events_page_set_server (one->find->self, one->name);
        }
    }
  find_unref (one->find);
  g_free (one->name);
  g_free (one);
}

/* Asks each server which store it serves. */
static void
names_cb (GObject      *object,
          GAsyncResult *result,
          gpointer      user_data)
{
  Find *find = user_data;
  g_autoptr(GPtrArray) servers = list_names_finish (object, result);

  for (guint i = 0; servers != NULL && !g_cancellable_is_cancelled (find->cancellable) && i < servers->len; i++)
    {
      FindName *one = g_new0 (FindName, 1);

      one->find = find;
      one->name = g_strdup (g_ptr_array_index (servers, i));
      find->pending++;
      g_dbus_connection_call (find->bus, one->name, SERVER_PATH, "org.freedesktop.DBus.Properties", "Get",
                              g_variant_new ("(ss)", SERVER_INTERFACE, "StoreUri"), G_VARIANT_TYPE ("(v)"),
                              G_DBUS_CALL_FLAGS_NO_AUTO_START, 5000, find->cancellable, store_uri_cb, one);
    }
  find_unref (find);
}

/**
 * qstore_inspector_events_page_find_server:
 * @self: a #QStoreInspectorEventsPage
 * @store_uri: (nullable): the store the window shows
 *
 * Follows the server that serves @store_uri, if one runs: the
 * org.qstore.Server.* name whose StoreUri is the same store. Whatever
 * id it was started with, it is found; its own name for the store may
 * be spelled otherwise (qstore_inspector_same_store()). Without one the
 * page follows no server.
 */
void
qstore_inspector_events_page_find_server (QStoreInspectorEventsPage *self,
                                          const char                *store_uri)
{
  g_autoptr(GError) error = NULL;
  Find *find;

  g_return_if_fail (QSTORE_INSPECTOR_IS_EVENTS_PAGE (self));

  g_cancellable_cancel (self->find_cancellable);
  g_clear_object (&self->find_cancellable);
  qstore_inspector_events_page_set_server (self, NULL);
  if (store_uri == NULL)
    return;
  if (self->bus == NULL && (self->bus = g_bus_get_sync (G_BUS_TYPE_SESSION, NULL, &error)) == NULL)
    {
      g_debug ("No session bus to find a server on: %s", error->message);
      return;
    }

  self->find_cancellable = g_cancellable_new ();
  find = g_new0 (Find, 1);
  find->self = self;
  find->bus = g_object_ref (self->bus);
  find->store_uri = g_strdup (store_uri);
  find->cancellable = g_object_ref (self->find_cancellable);
  find->pending = 1;
  list_names (self->bus, find->cancellable, names_cb, find);
}

/* Connect to Server… */

static void
server_activated_cb (GtkListBox       *list,
                     GtkListBoxRow    *row,
                     AdwMessageDialog *dialog)
{
  QStoreInspectorEventsPage *self = g_object_get_data (G_OBJECT (dialog), "page");

  qstore_inspector_events_page_set_server (self, gtk_widget_get_name (GTK_WIDGET (row)));
  gtk_window_close (GTK_WINDOW (dialog));
}

static void
list_servers_cb (GObject      *object,
                 GAsyncResult *result,
                 gpointer      user_data)
{
  g_autoptr(GtkListBox) list = user_data;
  g_autoptr(GPtrArray) servers = list_names_finish (object, result);
  GtkWidget *placeholder = g_object_get_data (G_OBJECT (list), "placeholder");

  if (servers == NULL)
    return;
  for (guint i = 0; i < servers->len; i++)
    {
      const char *name = g_ptr_array_index (servers, i);
      GtkWidget *row = adw_action_row_new ();

      gtk_widget_set_name (row, name);
      adw_preferences_row_set_use_markup (ADW_PREFERENCES_ROW (row), FALSE);
      adw_preferences_row_set_title (ADW_PREFERENCES_ROW (row), name + strlen (SERVER_PREFIX));
      adw_action_row_set_subtitle (ADW_ACTION_ROW (row), name);
      adw_action_row_add_suffix (ADW_ACTION_ROW (row), gtk_image_new_from_icon_name ("go-next-symbolic"));
      gtk_list_box_row_set_activatable (GTK_LIST_BOX_ROW (row), TRUE);
      gtk_list_box_append (list, row);
    }
  gtk_widget_set_visible (GTK_WIDGET (list), servers->len > 0);
  gtk_widget_set_visible (placeholder, servers->len == 0);
}

/**
 * qstore_inspector_events_page_connect_dialog:
 * @self: a #QStoreInspectorEventsPage
 *
 * Asks which of the servers running on the session bus to follow.
 *
 * Returns: (transfer none) (nullable): the dialog, shown; %NULL without
 *   a session bus
 */
GtkWindow *
qstore_inspector_events_page_connect_dialog (QStoreInspectorEventsPage *self)
{
  g_autoptr(GError) error = NULL;
  GtkWidget *dialog, *box, *list, *placeholder;
  GtkRoot *root;

  g_return_val_if_fail (QSTORE_INSPECTOR_IS_EVENTS_PAGE (self), NULL);

  if (self->bus == NULL && (self->bus = g_bus_get_sync (G_BUS_TYPE_SESSION, NULL, &error)) == NULL)
    {
      set_state (self, QSTORE_INSPECTOR_EVENTS_GONE, error->message);
      return NULL;
    }

  root = gtk_widget_get_root (GTK_WIDGET (self));
  dialog = adw_message_dialog_new (GTK_IS_WINDOW (root) ? GTK_WINDOW (root) : NULL,
                                   _("Connect to a Server"),
                                   _("The qstore servers running on this session. Their events show as they happen."));
  adw_message_dialog_add_response (ADW_MESSAGE_DIALOG (dialog), "cancel", _("_Cancel"));
  g_object_set_data (G_OBJECT (dialog), "page", self);

  box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 0);
  list = gtk_list_box_new ();
  gtk_widget_set_visible (list, FALSE);
  gtk_list_box_set_selection_mode (GTK_LIST_BOX (list), GTK_SELECTION_NONE);
  gtk_widget_add_css_class (list, "boxed-list");
  g_signal_connect (list, "row-activated", G_CALLBACK (server_activated_cb), dialog);
  placeholder = gtk_label_new (_("No server runs. Start one with “qstore --store URI serve”."));
  gtk_label_set_wrap (GTK_LABEL (placeholder), TRUE);
  gtk_widget_add_css_class (placeholder, "dim-label");
  gtk_widget_set_visible (placeholder, FALSE);
  g_object_set_data_full (G_OBJECT (list), "placeholder", g_object_ref (placeholder), g_object_unref);
  gtk_box_append (GTK_BOX (box), list);
  gtk_box_append (GTK_BOX (box), placeholder);
  adw_message_dialog_set_extra_child (ADW_MESSAGE_DIALOG (dialog), box);

  list_names (self->bus, NULL, list_servers_cb, g_object_ref (list));
  gtk_window_present (GTK_WINDOW (dialog));
  return GTK_WINDOW (dialog);
}

/* The list's columns */

enum
{
  COLUMN_TIME,
  COLUMN_KIND,
  COLUMN_TX,
  COLUMN_QUERY,
  COLUMN_ROWS,
  COLUMN_WHAT,
  N_COLUMNS
};

static void
setup_cell (GtkSignalListItemFactory *factory,
            GtkListItem              *item,
            gpointer                  user_data)
{
  guint column = GPOINTER_TO_UINT (user_data);
  GtkWidget *label = gtk_label_new (NULL);

  gtk_label_set_xalign (GTK_LABEL (label), column == COLUMN_TX || column == COLUMN_QUERY ||
                                           column == COLUMN_ROWS ? 1 : 0);
  /* Narrow, the list scrolls sideways rather than cut times short. */
  if (column == COLUMN_WHAT)
    gtk_label_set_ellipsize (GTK_LABEL (label), PANGO_ELLIPSIZE_END);
  if (column != COLUMN_KIND && column != COLUMN_WHAT)
    gtk_widget_add_css_class (label, "numeric");
  gtk_list_item_set_child (item, label);
}

static void
bind_cell (GtkSignalListItemFactory *factory,
           GtkListItem              *item,
           gpointer                  user_data)
{
  QStoreInspectorEvent *event = gtk_list_item_get_item (item);
  GtkWidget *label = gtk_list_item_get_child (item);
  g_autofree char *text = NULL;
  gboolean gap = qstore_inspector_event_get_kind (event) == QSTORE_INSPECTOR_EVENT_GAP;

  switch (GPOINTER_TO_UINT (user_data))
    {
    case COLUMN_TIME:
      text = qstore_inspector_event_format_time (event);
      break;
    case COLUMN_KIND:
      text = g_strdup (qstore_inspector_event_kind_label (qstore_inspector_event_get_kind (event)));
      break;
    case COLUMN_TX:
      if (qstore_inspector_event_get_tx (event) != 0)
        text = g_strdup_printf ("%" G_GUINT64_FORMAT, qstore_inspector_event_get_tx (event));
      break;
    case COLUMN_QUERY:
      if (qstore_inspector_event_has_query (event))
        text = g_strdup_printf ("%" G_GUINT64_FORMAT, qstore_inspector_event_get_query (event));
      break;
    case COLUMN_ROWS:
      if (!gap && qstore_inspector_event_get_kind (event) != QSTORE_INSPECTOR_EVENT_PROGRESSED)
        text = g_strdup_printf ("%u", qstore_inspector_event_get_n_rows (event));
      break;
    case COLUMN_WHAT:
    default:
      text = qstore_inspector_event_describe (event);
      break;
    }
  gtk_label_set_label (GTK_LABEL (label), text ? text : "");
  gtk_widget_set_tooltip_text (label, text != NULL && *text != '\0' ? text : NULL);
  /* A gap shows in the warning colour in every column. */
  if (gap)
    gtk_widget_add_css_class (label, "warning");
  else
    gtk_widget_remove_css_class (label, "warning");
}

static void
add_columns (QStoreInspectorEventsPage *self)
{
  const struct
  {
    const char *title;
    gboolean    expand;
  } columns[N_COLUMNS] = {
    [COLUMN_TIME] = { N_("Time"), FALSE },
    [COLUMN_KIND] = { N_("Kind"), FALSE },
    [COLUMN_TX] = { N_("Transaction"), FALSE },
    [COLUMN_QUERY] = { N_("Query"), FALSE },
    [COLUMN_ROWS] = { N_("Rows"), FALSE },
    [COLUMN_WHAT] = { N_("Tables or Reason"), TRUE },
  };

  for (guint i = 0; i < N_COLUMNS; i++)
    {
      GtkListItemFactory *factory = gtk_signal_list_item_factory_new ();
      g_autoptr(GtkColumnViewColumn) column = NULL;

      g_signal_connect (factory, "setup", G_CALLBACK (setup_cell), GUINT_TO_POINTER (i));
      g_signal_connect (factory, "bind", G_CALLBACK (bind_cell), GUINT_TO_POINTER (i));
      column = gtk_column_view_column_new (_(columns[i].title), factory);
      gtk_column_view_column_set_expand (column, columns[i].expand);
      gtk_column_view_column_set_resizable (column, TRUE);
      gtk_column_view_append_column (self->column_view, column);
      if (i == COLUMN_QUERY || i == COLUMN_ROWS)
        self->wide_columns[i - COLUMN_QUERY] = column;
    }
}

/* Below this width the Query and Rows columns give way, so that Tables or
 * Reason stays in view; the detail pane still shows both. The list's
 * width is its horizontal page size. */
#define NARROW_WIDTH 560

static gboolean
fit_columns_now (gpointer data)
{
  QStoreInspectorEventsPage *self = data;
  double width = gtk_adjustment_get_page_size (gtk_scrolled_window_get_hadjustment (self->scroller));

  self->fit_id = 0;
  for (guint i = 0; i < G_N_ELEMENTS (self->wide_columns); i++)
    gtk_column_view_column_set_visible (self->wide_columns[i], width >= NARROW_WIDTH);
  return G_SOURCE_REMOVE;
}

/* The width changes while the list is laid out, which a change of columns
 * must not interrupt. */
static void
fit_columns (QStoreInspectorEventsPage *self)
{
  if (self->fit_id == 0)
    self->fit_id = g_idle_add (fit_columns_now, self);
}

/* Filters */

static void
add_kinds (QStoreInspectorEventsPage *self)
{
  g_autoptr(GtkStringList) kinds = gtk_string_list_new (NULL);

  gtk_string_list_append (kinds, _("All Kinds"));
  for (guint i = 0; i < QSTORE_INSPECTOR_N_EVENT_KINDS; i++)
    gtk_string_list_append (kinds, qstore_inspector_event_kind_label (i));
  gtk_drop_down_set_model (self->kind_dropdown, G_LIST_MODEL (kinds));
}

static gboolean
filter_event (gpointer item,
              gpointer user_data)
{
  QStoreInspectorEventsPage *self = user_data;
  QStoreInspectorEvent *event = item;
  QStoreInspectorEventKind kind = qstore_inspector_event_get_kind (event);

  if (self->kind_filter >= 0 && kind != (QStoreInspectorEventKind) self->kind_filter)
    return FALSE;
  /* A gap may have missed any table's commits: it stays. */
  if (self->table_filter != NULL && kind != QSTORE_INSPECTOR_EVENT_GAP)
    return qstore_inspector_event_touches_table (event, self->table_filter);
  return TRUE;
}

/**
 * qstore_inspector_events_page_set_kind_filter:
 * @self: a #QStoreInspectorEventsPage
 * @kind: a #QStoreInspectorEventKind, or -1 for every kind
 *
 * Shows only events of @kind, as the kind menu does.
 */
void
qstore_inspector_events_page_set_kind_filter (QStoreInspectorEventsPage *self,
                                              int                        kind)
{
  g_return_if_fail (QSTORE_INSPECTOR_IS_EVENTS_PAGE (self));
  g_return_if_fail (kind >= -1 && kind < QSTORE_INSPECTOR_N_EVENT_KINDS);

  gtk_drop_down_set_selected (self->kind_dropdown, (guint) (kind + 1));
}

static void
kind_selected_cb (QStoreInspectorEventsPage *self)
{
  guint selected = gtk_drop_down_get_selected (self->kind_dropdown);

  self->kind_filter = selected == GTK_INVALID_LIST_POSITION ? -1 : (int) selected - 1;
  gtk_filter_changed (GTK_FILTER (self->filter), GTK_FILTER_CHANGE_DIFFERENT);
  update_count (self);
}

/* Shows only commits to tables whose name holds @text, as the search
 * entry does; %NULL or "" shows every table. */
void
qstore_inspector_events_page_set_table_filter (QStoreInspectorEventsPage *self,
                                               const char                *text)
{
  g_return_if_fail (QSTORE_INSPECTOR_IS_EVENTS_PAGE (self));

  gtk_editable_set_text (GTK_EDITABLE (self->table_entry), text ? text : "");
  g_signal_emit_by_name (self->table_entry, "search-changed");
}

static void
table_changed_cb (QStoreInspectorEventsPage *self)
{
  const char *text = gtk_editable_get_text (GTK_EDITABLE (self->table_entry));
  g_autofree char *stripped = g_strstrip (g_strdup (text));

  if (g_strcmp0 (self->table_filter, *stripped != '\0' ? stripped : NULL) == 0)
    return;
  g_free (self->table_filter);
  self->table_filter = *stripped != '\0' ? g_steal_pointer (&stripped) : NULL;
  gtk_filter_changed (GTK_FILTER (self->filter), GTK_FILTER_CHANGE_DIFFERENT);
  update_count (self);
}

/* Pause */

static void
set_paused (QStoreInspectorEventsPage *self,
            gboolean                   paused)
{
  if (self->paused == paused)
    return;
  /* What came before the pause is listed; what comes after is held. */
  flush_incoming (self);
  self->paused = paused;
  gtk_toggle_button_set_active (self->pause_button, paused);
  gtk_button_set_icon_name (GTK_BUTTON (self->pause_button),
                            paused ? "media-playback-start-symbolic" : "media-playback-pause-symbolic");
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->pause_button), paused ? _("Resume") : _("Pause"));
  if (!paused)
    release_held (self);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_PAUSED]);
}

static void
pause_toggled_cb (QStoreInspectorEventsPage *self)
{
  set_paused (self, gtk_toggle_button_get_active (self->pause_button));
}

void
qstore_inspector_events_page_set_paused (QStoreInspectorEventsPage *self,
                                         gboolean                   paused)
{
  g_return_if_fail (QSTORE_INSPECTOR_IS_EVENTS_PAGE (self));
  set_paused (self, paused);
}

/* How many events came while paused, not listed yet. */
guint
qstore_inspector_events_page_get_n_held (QStoreInspectorEventsPage *self)
{
  g_return_val_if_fail (QSTORE_INSPECTOR_IS_EVENTS_PAGE (self), 0);
  return self->held.length;
}

/* Export… */

/**
 * qstore_inspector_events_page_export:
 * @self: a #QStoreInspectorEventsPage
 * @file: where to write
 * @error: return location for a #GError
 *
 * Writes the events the list shows (filtered as it is), oldest first,
 * as JSON lines: one object a line, with its kind, time_us, tx, query,
 * tables, row_count and rows as the server sent them.
 *
 * Returns: whether @file was written
 */
gboolean
qstore_inspector_events_page_export (QStoreInspectorEventsPage *self,
                                     GFile                     *file,
                                     GError                   **error)
{
  g_autoptr(GString) out = g_string_new (NULL);
  GListModel *shown;

  g_return_val_if_fail (QSTORE_INSPECTOR_IS_EVENTS_PAGE (self), FALSE);
  g_return_val_if_fail (G_IS_FILE (file), FALSE);

  flush_incoming (self);
  shown = G_LIST_MODEL (self->shown);
  for (guint i = 0; i < g_list_model_get_n_items (shown); i++)
    {
      g_autoptr(QStoreInspectorEvent) event = g_list_model_get_item (shown, i);
      g_autofree char *line = qstore_inspector_event_to_json (event);

      g_string_append (out, line);
      g_string_append_c (out, '\n');
    }
  return g_file_replace_contents (file, out->str, out->len, NULL, FALSE, G_FILE_CREATE_REPLACE_DESTINATION,
                                  NULL, NULL, error);
}

static void
export_response_cb (GtkNativeDialog           *chooser,
                    int                        response,
                    QStoreInspectorEventsPage *self)
{
  g_autoptr(GFile) file = NULL;
  g_autoptr(GError) error = NULL;

  if (response == GTK_RESPONSE_ACCEPT)
    file = gtk_file_chooser_get_file (GTK_FILE_CHOOSER (chooser));
  if (file != NULL && !qstore_inspector_events_page_export (self, file, &error))
    {
      GtkRoot *root = gtk_widget_get_root (GTK_WIDGET (self));
      GtkWidget *dialog = adw_message_dialog_new (GTK_IS_WINDOW (root) ? GTK_WINDOW (root) : NULL,
                                                  _("Cannot Export the Events"), error->message);

      adw_message_dialog_add_response (ADW_MESSAGE_DIALOG (dialog), "close", _("_Close"));
      gtk_window_present (GTK_WINDOW (dialog));
    }
  gtk_native_dialog_destroy (chooser);
  g_object_unref (chooser);
  g_object_unref (self);
}

static void
export_action (GtkWidget  *widget,
               const char *action_name,
               GVariant   *parameter)
{
  QStoreInspectorEventsPage *self = QSTORE_INSPECTOR_EVENTS_PAGE (widget);
  GtkRoot *root = gtk_widget_get_root (widget);
  GtkFileChooserNative *chooser;
  g_autofree char *name = NULL;

  chooser = gtk_file_chooser_native_new (_("Export the Events"),
                                         GTK_IS_WINDOW (root) ? GTK_WINDOW (root) : NULL,
                                         GTK_FILE_CHOOSER_ACTION_SAVE, _("_Export"), _("_Cancel"));
  gtk_native_dialog_set_modal (GTK_NATIVE_DIALOG (chooser), TRUE);
  /* Translators: the name an export is offered; keep “.jsonl” */
  name = g_strdup_printf (_("%s-events.jsonl"),
                          self->server ? self->server + strlen (SERVER_PREFIX) : "qstore");
  gtk_file_chooser_set_current_name (GTK_FILE_CHOOSER (chooser), name);
  g_signal_connect (chooser, "response", G_CALLBACK (export_response_cb), g_object_ref (self));
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (chooser));
}

static void
connect_action (GtkWidget  *widget,
                const char *action_name,
                GVariant   *parameter)
{
  qstore_inspector_events_page_connect_dialog (QSTORE_INSPECTOR_EVENTS_PAGE (widget));
}

/* For the tests */

/* Returns: (transfer none): every event kept, oldest first */
GListModel *
qstore_inspector_events_page_get_events (QStoreInspectorEventsPage *self)
{
  g_return_val_if_fail (QSTORE_INSPECTOR_IS_EVENTS_PAGE (self), NULL);
  return G_LIST_MODEL (self->events);
}

/* Returns: (transfer none): the events the list shows, as filtered */
GListModel *
qstore_inspector_events_page_get_shown (QStoreInspectorEventsPage *self)
{
  g_return_val_if_fail (QSTORE_INSPECTOR_IS_EVENTS_PAGE (self), NULL);
  return G_LIST_MODEL (self->shown);
}

/* Selects the event at @position of the shown list, as a click does. */
void
qstore_inspector_events_page_select (QStoreInspectorEventsPage *self,
                                     guint                      position)
{
  g_return_if_fail (QSTORE_INSPECTOR_IS_EVENTS_PAGE (self));
  gtk_single_selection_set_selected (self->selection, position);
}

/* Returns: (nullable): the selected event's rows, as the detail pane shows them */
const char *
qstore_inspector_events_page_get_details (QStoreInspectorEventsPage *self)
{
  g_return_val_if_fail (QSTORE_INSPECTOR_IS_EVENTS_PAGE (self), NULL);
  return self->details;
}

/* The heading of the detail pane. */
const char *
qstore_inspector_events_page_get_detail_title (QStoreInspectorEventsPage *self)
{
  g_return_val_if_fail (QSTORE_INSPECTOR_IS_EVENTS_PAGE (self), NULL);
  return gtk_label_get_label (self->detail_title);
}

/* Whether the list keeps its newest event in sight. */
gboolean
qstore_inspector_events_page_is_following (QStoreInspectorEventsPage *self)
{
  g_return_val_if_fail (QSTORE_INSPECTOR_IS_EVENTS_PAGE (self), FALSE);
  return self->following;
}

/* GObject */

static void
qstore_inspector_events_page_dispose (GObject *object)
{
  QStoreInspectorEventsPage *self = QSTORE_INSPECTOR_EVENTS_PAGE (object);

  g_cancellable_cancel (self->find_cancellable);
  g_clear_object (&self->find_cancellable);
  /* It reads the scroller, which goes with the template's children. */
  g_clear_handle_id (&self->fit_id, g_source_remove);
  /* Unsubscribes, so the server stops sending when nobody else follows. */
  qstore_inspector_events_page_set_server (self, NULL);

  G_OBJECT_CLASS (qstore_inspector_events_page_parent_class)->dispose (object);
}

static void
qstore_inspector_events_page_finalize (GObject *object)
{
  QStoreInspectorEventsPage *self = QSTORE_INSPECTOR_EVENTS_PAGE (object);

  g_clear_handle_id (&self->flush_id, g_source_remove);
  drop_all (&self->incoming);
  drop_all (&self->held);
  g_clear_object (&self->bus);
  g_clear_object (&self->events);
  g_clear_object (&self->shown);
  g_clear_object (&self->selection);
  g_free (self->status);
  g_free (self->table_filter);
  g_free (self->details);

  G_OBJECT_CLASS (qstore_inspector_events_page_parent_class)->finalize (object);
}

static void
qstore_inspector_events_page_get_property (GObject    *object,
                                           guint       prop_id,
                                           GValue     *value,
                                           GParamSpec *pspec)
{
  QStoreInspectorEventsPage *self = QSTORE_INSPECTOR_EVENTS_PAGE (object);

  switch (prop_id)
    {
    case PROP_SERVER:
      g_value_set_string (value, self->server);
      break;
    case PROP_STATE:
      g_value_set_int (value, self->state);
      break;
    case PROP_MAX_EVENTS:
      g_value_set_uint (value, self->max_events);
      break;
    case PROP_PAUSED:
      g_value_set_boolean (value, self->paused);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
qstore_inspector_events_page_set_property (GObject      *object,
                                           guint         prop_id,
                                           const GValue *value,
                                           GParamSpec   *pspec)
{
  QStoreInspectorEventsPage *self = QSTORE_INSPECTOR_EVENTS_PAGE (object);

  switch (prop_id)
    {
    case PROP_SERVER:
      qstore_inspector_events_page_set_server (self, g_value_get_string (value));
      break;
    case PROP_MAX_EVENTS:
      if (self->max_events != g_value_get_uint (value))
        {
          self->max_events = g_value_get_uint (value);
          trim (self);
          update_count (self);
          g_object_notify_by_pspec (object, pspec);
        }
      break;
    case PROP_PAUSED:
      set_paused (self, g_value_get_boolean (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
qstore_inspector_events_page_class_init (QStoreInspectorEventsPageClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = qstore_inspector_events_page_dispose;
  object_class->finalize = qstore_inspector_events_page_finalize;
  object_class->get_property = qstore_inspector_events_page_get_property;
  object_class->set_property = qstore_inspector_events_page_set_property;

  properties[PROP_SERVER] =
    g_param_spec_string ("server", NULL, NULL, NULL,
                         G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);
  /* A QStoreInspectorEventsState. */
  properties[PROP_STATE] =
    g_param_spec_int ("state", NULL, NULL, QSTORE_INSPECTOR_EVENTS_NONE, QSTORE_INSPECTOR_EVENTS_GONE,
                      QSTORE_INSPECTOR_EVENTS_NONE,
                      G_PARAM_READABLE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);
  /* The most events kept, the oldest going first; bound to the
   * max-events setting. */
  properties[PROP_MAX_EVENTS] =
    g_param_spec_uint ("max-events", NULL, NULL, 1, G_MAXUINT, QSTORE_INSPECTOR_DEFAULT_MAX_EVENTS,
                       G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);
  properties[PROP_PAUSED] =
    g_param_spec_boolean ("paused", NULL, NULL, FALSE,
                          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);
  g_object_class_install_properties (object_class, N_PROPS, properties);

  gtk_widget_class_set_template_from_resource (widget_class, "/org/qstore/Inspector/qstore-inspector-events-page.ui");
  gtk_widget_class_bind_template_child (widget_class, QStoreInspectorEventsPage, stack);
  gtk_widget_class_bind_template_child (widget_class, QStoreInspectorEventsPage, pause_button);
  gtk_widget_class_bind_template_child (widget_class, QStoreInspectorEventsPage, kind_dropdown);
  gtk_widget_class_bind_template_child (widget_class, QStoreInspectorEventsPage, table_entry);
  gtk_widget_class_bind_template_child (widget_class, QStoreInspectorEventsPage, banner);
  gtk_widget_class_bind_template_child (widget_class, QStoreInspectorEventsPage, banner_label);
  gtk_widget_class_bind_template_child (widget_class, QStoreInspectorEventsPage, scroller);
  gtk_widget_class_bind_template_child (widget_class, QStoreInspectorEventsPage, column_view);
  gtk_widget_class_bind_template_child (widget_class, QStoreInspectorEventsPage, detail_title);
  gtk_widget_class_bind_template_child (widget_class, QStoreInspectorEventsPage, detail_label);
  gtk_widget_class_bind_template_child (widget_class, QStoreInspectorEventsPage, count_label);
  gtk_widget_class_bind_template_callback (widget_class, pause_toggled_cb);
  gtk_widget_class_bind_template_callback (widget_class, kind_selected_cb);
  gtk_widget_class_bind_template_callback (widget_class, table_changed_cb);

  gtk_widget_class_install_action (widget_class, "events.export", NULL, export_action);
  gtk_widget_class_install_action (widget_class, "events.connect", NULL, connect_action);
}

static void
qstore_inspector_events_page_init (QStoreInspectorEventsPage *self)
{
  GtkAdjustment *adjustment;

  self->max_events = QSTORE_INSPECTOR_DEFAULT_MAX_EVENTS;
  self->kind_filter = -1;
  self->following = TRUE;
  g_queue_init (&self->incoming);
  g_queue_init (&self->held);
  gtk_widget_init_template (GTK_WIDGET (self));

  self->events = g_list_store_new (QSTORE_INSPECTOR_TYPE_EVENT);
  self->filter = gtk_custom_filter_new (filter_event, self, NULL);
  self->shown = gtk_filter_list_model_new (G_LIST_MODEL (g_object_ref (self->events)),
                                           GTK_FILTER (self->filter));
  self->selection = gtk_single_selection_new (G_LIST_MODEL (g_object_ref (self->shown)));
  gtk_single_selection_set_autoselect (self->selection, FALSE);
  gtk_single_selection_set_can_unselect (self->selection, TRUE);
  g_signal_connect_swapped (self->selection, "notify::selected-item", G_CALLBACK (show_details), self);
  g_signal_connect_swapped (self->shown, "items-changed", G_CALLBACK (update_count), self);
  gtk_column_view_set_model (self->column_view, GTK_SELECTION_MODEL (self->selection));
  add_columns (self);
  add_kinds (self); /* after the filter: choosing a kind changes it */

  adjustment = gtk_scrolled_window_get_vadjustment (self->scroller);
  g_signal_connect_swapped (adjustment, "value-changed", G_CALLBACK (scrolled_cb), self);
  g_signal_connect_swapped (adjustment, "notify::upper", G_CALLBACK (grown_cb), self);
  g_signal_connect_swapped (gtk_scrolled_window_get_hadjustment (self->scroller), "notify::page-size",
                            G_CALLBACK (fit_columns), self);

  update_count (self);
  set_state (self, QSTORE_INSPECTOR_EVENTS_NONE, NULL);
}
