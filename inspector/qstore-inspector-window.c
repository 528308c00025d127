/* qstore-inspector-window.c: the main window
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <glib/gi18n.h>

#include "qstore-inspector-errors.h"
#include "qstore-inspector-monitor.h"
#include "qstore-inspector-names.h"
#include "qstore-inspector-window.h"

/* One window shows one store. Opening and refreshing read everything
 * the pages show in a worker thread (QStoreInspectorContents), then hand
 * it to the pages at once, so they never show a half-read store. While
 * the window is open, a monitor of the store's files refreshes it when
 * another process commits (unless the auto-refresh setting is off).
 *
 * Narrow windows: the sidebar and the page fold into one column (a
 * leaflet), as do the catalog's list and details inside the page; the
 * page's Back button leads from details to the list, then to the
 * sidebar. The minimum size is 360×294, the smallest GNOME targets. */

#define MIN_WIDTH 360
#define MIN_HEIGHT 294

struct _QStoreInspectorWindow
{
  AdwApplicationWindow        parent_instance;

  GSettings                  *settings;
  GCancellable               *cancellable;
  char                       *uri;
  char                       *error;
  char                       *error_details;
  QStoreInspectorContents    *contents;
  QStoreInspectorMonitor     *monitor;
  gboolean                    busy;
  gboolean                    auto_refresh;
  gboolean                    refresh_pending;
  guint                       n_loads;

  AdwToastOverlay            *toast_overlay;
  GtkStack                   *main_stack;
  AdwStatusPage              *error_page;
  GtkLabel                   *error_details_label;
  GtkSpinner                 *loading_spinner;
  AdwPreferencesGroup        *recent_group;
  GtkListBox                 *recent_list;
  AdwLeaflet                 *leaflet;
  GtkListBox                 *sidebar_list;
  GtkListBoxRow              *catalog_row;
  GtkListBoxRow              *stale_row;
  GtkListBoxRow              *data_row;
  GtkListBoxRow              *events_row;
  GtkWidget                  *stale_warning_icon;
  GtkLabel                   *store_name_label;
  GtkLabel                   *store_kind_label;
  GtkLabel                   *store_label;
  AdwSplitButton             *open_button;
  GtkWidget                  *back_button;
  AdwWindowTitle             *content_title;
  GtkSpinner                 *busy_spinner;
  GtkStack                   *page_stack;
  QStoreInspectorCatalogPage *catalog_page;
  QStoreInspectorStalePage   *stale_page;
  QStoreInspectorDataPage    *data_page;
  QStoreInspectorStagingPage *staging_page;
  QStoreInspectorEventsPage  *events_page;
};

enum
{
  PROP_0,
  PROP_BUSY,
  PROP_CONTENTS,
  PROP_AUTO_REFRESH,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

G_DEFINE_FINAL_TYPE (QStoreInspectorWindow, qstore_inspector_window, ADW_TYPE_APPLICATION_WINDOW)

static void update_monitor (QStoreInspectorWindow *self);

static void
set_busy (QStoreInspectorWindow *self,
          gboolean               busy)
{
  if (self->busy == busy)
    return;
  self->busy = busy;
  gtk_spinner_set_spinning (self->busy_spinner, busy);
  gtk_spinner_set_spinning (self->loading_spinner, busy);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "win.refresh", !busy && self->uri != NULL);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_BUSY]);
}

/* Recent stores */

static char **
get_recent (QStoreInspectorWindow *self)
{
  if (self->settings == NULL)
    return g_new0 (char *, 1);
  return g_settings_get_strv (self->settings, "recent-stores");
}

static void
update_recent (QStoreInspectorWindow *self)
{
  g_auto(GStrv) recent = get_recent (self);
  g_autoptr(GMenu) menu = g_menu_new ();
  g_autoptr(GMenu) kinds = g_menu_new ();
  g_autoptr(GMenu) stores = g_menu_new ();
  GtkWidget *child;
  guint n = g_strv_length (recent);

  while ((child = gtk_widget_get_first_child (GTK_WIDGET (self->recent_list))) != NULL)
    gtk_list_box_remove (self->recent_list, child);

  for (guint i = 0; i < n; i++)
    {
      g_autofree char *label = qstore_inspector_store_title (recent[i]);
      g_autoptr(GMenuItem) item = g_menu_item_new (label, NULL);
      GtkWidget *row = adw_action_row_new ();
      gboolean lmdb = g_str_has_prefix (recent[i], "lmdb:");

      /* Paths of any length: one line each, ellipsized. */
      adw_preferences_row_set_use_markup (ADW_PREFERENCES_ROW (row), FALSE);
      adw_preferences_row_set_title (ADW_PREFERENCES_ROW (row), label);
      adw_action_row_set_title_lines (ADW_ACTION_ROW (row), 1);
      adw_action_row_set_subtitle (ADW_ACTION_ROW (row), recent[i]);
      adw_action_row_set_subtitle_lines (ADW_ACTION_ROW (row), 1);
      gtk_widget_set_tooltip_text (row, recent[i]);
      adw_action_row_add_prefix (ADW_ACTION_ROW (row),
                                 gtk_image_new_from_icon_name (lmdb ? "folder-symbolic" : "text-x-generic-symbolic"));
      adw_action_row_add_suffix (ADW_ACTION_ROW (row), gtk_image_new_from_icon_name ("go-next-symbolic"));
      gtk_actionable_set_action_name (GTK_ACTIONABLE (row), "win.open-uri");
      gtk_actionable_set_action_target (GTK_ACTIONABLE (row), "s", recent[i]);
      gtk_list_box_row_set_activatable (GTK_LIST_BOX_ROW (row), TRUE);
      gtk_list_box_append (self->recent_list, row);

      g_menu_item_set_action_and_target (item, "win.open-uri", "s", recent[i]);
      g_menu_append_item (stores, item);
    }

  g_menu_append (kinds, _("Open LMDB _Folder…"), "win.open-folder");
  g_menu_append_section (menu, NULL, G_MENU_MODEL (kinds));
  if (n > 0)
    g_menu_append_section (menu, _("Recent Stores"), G_MENU_MODEL (stores));
  gtk_widget_set_visible (GTK_WIDGET (self->recent_group), n > 0);
  adw_split_button_set_menu_model (self->open_button, G_MENU_MODEL (menu));
}

static void
remember_uri (QStoreInspectorWindow *self,
              const char            *uri)
{
  g_auto(GStrv) recent = get_recent (self);
  g_autoptr(GStrvBuilder) builder = g_strv_builder_new ();
  g_auto(GStrv) updated = NULL;
  guint max;

  if (self->settings == NULL)
    return;

  max = g_settings_get_uint (self->settings, "max-recent-stores");
  g_strv_builder_add (builder, uri);
  for (guint i = 0, kept = 1; recent[i] != NULL && kept < max; i++)
    if (!g_str_equal (recent[i], uri))
      {
        g_strv_builder_add (builder, recent[i]);
        kept++;
      }
  updated = g_strv_builder_end (builder);
  if (max == 0)
    updated[0] = (g_free (updated[0]), NULL);
  g_settings_set_strv (self->settings, "recent-stores", (const char * const *) updated);
}

/* Titles */

static void
update_titles (QStoreInspectorWindow *self)
{
  const char *uri = self->contents ? qstore_inspector_contents_get_uri (self->contents) : NULL;
  GtkWidget *page = gtk_stack_get_visible_child (self->page_stack);
  g_autofree char *name = uri ? qstore_inspector_store_title (uri) : NULL;
  g_autofree char *title = NULL;

  if (name != NULL)
    /* Translators: the window's title; %s is the store's name, such as
     * “shop” for the store in the folder /home/ada/shop */
    title = g_strdup_printf (_("%s — qstore Inspector"), name);
  gtk_window_set_title (GTK_WINDOW (self), title ? title : _("qstore Inspector"));

  gtk_label_set_label (self->store_name_label, name ? name : _("qstore Inspector"));
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->store_name_label), name);
  gtk_label_set_label (self->store_kind_label,
                       uri == NULL ? NULL
                       : g_str_has_prefix (uri, "lmdb:") ? _("LMDB store")
                       : g_str_has_prefix (uri, "sqlite:") ? _("SQLite store")
                       : NULL);
  gtk_widget_set_visible (GTK_WIDGET (self->store_kind_label), uri != NULL);
  /* The address itself shows once, under the pages. */
  gtk_label_set_label (self->store_label, uri ? uri : "");
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->store_label), uri);

  adw_window_title_set_title (self->content_title,
                              page ? gtk_stack_page_get_title (gtk_stack_get_page (self->page_stack, page)) : NULL);
}

/* Back leads from an entry's details to the catalog's list, and from a
 * page to the sidebar, when they do not show side by side. */
static void
update_back_cb (QStoreInspectorWindow *self)
{
  gboolean on_catalog = g_strcmp0 (gtk_stack_get_visible_child_name (self->page_stack), "catalog") == 0;

  gtk_widget_set_visible (self->back_button,
                          adw_leaflet_get_folded (self->leaflet) ||
                          (on_catalog && qstore_inspector_catalog_page_can_go_back (self->catalog_page)));
}

static void
back_clicked_cb (QStoreInspectorWindow *self)
{
  if (g_strcmp0 (gtk_stack_get_visible_child_name (self->page_stack), "catalog") == 0 &&
      qstore_inspector_catalog_page_can_go_back (self->catalog_page))
    qstore_inspector_catalog_page_go_back (self->catalog_page);
  else
    adw_leaflet_navigate (self->leaflet, ADW_NAVIGATION_DIRECTION_BACK);
}

/* Loading */

static void
show_contents (QStoreInspectorWindow   *self,
               QStoreInspectorContents *contents)
{
  QStoreStaleReport *report = qstore_inspector_contents_get_stale_report (contents);
  GListModel *views = qstore_stale_report_get_views (report);
  gboolean refills = FALSE;

  g_set_object (&self->contents, contents);

  qstore_inspector_catalog_page_set_contents (self->catalog_page, contents);
  qstore_inspector_stale_page_set_contents (self->stale_page, contents);
  qstore_inspector_data_page_set_contents (self->data_page, contents);
  qstore_inspector_staging_page_set_contents (self->staging_page, contents);
  /* Tables whose statistics hold no count are counted now, off the UI
   * thread; the pages say “counting” meanwhile. */
  qstore_inspector_contents_count_rows (contents, self->cancellable);

  for (guint i = 0; i < g_list_model_get_n_items (views); i++)
    {
      g_autoptr(QStoreStaleView) view = g_list_model_get_item (views, i);

      if (qstore_stale_view_get_verdict (view) != QSTORE_STALE_VERDICT_ADOPT)
        refills = TRUE;
    }
  gtk_widget_set_visible (self->stale_warning_icon, refills);

  update_titles (self);
  gtk_stack_set_visible_child_name (self->main_stack, "store");
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_CONTENTS]);
}

static void
show_error_details (GtkWidget  *widget,
                    const char *action_name,
                    GVariant   *parameter)
{
  QStoreInspectorWindow *self = QSTORE_INSPECTOR_WINDOW (widget);
  GtkWidget *dialog;

  if (self->error == NULL)
    return;
  dialog = adw_message_dialog_new (GTK_WINDOW (self), _("Cannot Refresh the Store"), self->error);
  adw_message_dialog_add_response (ADW_MESSAGE_DIALOG (dialog), "close", _("_Close"));
  if (self->error_details != NULL)
    {
      GtkWidget *details = gtk_label_new (self->error_details);

      gtk_label_set_wrap (GTK_LABEL (details), TRUE);
      gtk_label_set_wrap_mode (GTK_LABEL (details), PANGO_WRAP_WORD_CHAR);
      gtk_label_set_selectable (GTK_LABEL (details), TRUE);
      gtk_widget_add_css_class (details, "caption");
      gtk_widget_add_css_class (details, "dim-label");
      adw_message_dialog_set_extra_child (ADW_MESSAGE_DIALOG (dialog), details);
    }
  gtk_window_present (GTK_WINDOW (dialog));
}

static void
load_done (GObject      *object,
           GAsyncResult *result,
           gpointer      user_data)
{
  g_autoptr(QStoreInspectorWindow) self = user_data;
  g_autoptr(QStoreInspectorContents) contents = NULL;
  g_autoptr(GError) error = NULL;
  gboolean refresh = self->contents != NULL;

  contents = qstore_inspector_contents_load_finish (result, &error);
  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    return;
  self->n_loads++;

  if (contents == NULL)
    {
      g_autofree char *location = qstore_inspector_location_of (self->uri);

      g_free (self->error);
      self->error = qstore_inspector_explain_error (error,
                                                    refresh ? QSTORE_INSPECTOR_ACTIVITY_REFRESH
                                                            : QSTORE_INSPECTOR_ACTIVITY_OPEN,
                                                    location);
      g_free (self->error_details);
      self->error_details = g_strdup (error->message);

      if (refresh)
        {
          AdwToast *toast = adw_toast_new (_("Cannot refresh the store"));

          adw_toast_set_button_label (toast, _("_Details"));
          adw_toast_set_action_name (toast, "win.show-error");
          adw_toast_set_timeout (toast, 0);
          adw_toast_overlay_add_toast (self->toast_overlay, toast);
        }
      else
        {
          adw_status_page_set_description (self->error_page, self->error);
          gtk_label_set_label (self->error_details_label, error->message);
          gtk_stack_set_visible_child_name (self->main_stack, "error");
          update_titles (self);
        }
      set_busy (self, FALSE);
      return;
    }

  g_clear_pointer (&self->error, g_free);
  g_clear_pointer (&self->error_details, g_free);
  if (!refresh)
    {
      remember_uri (self, self->uri);
      update_recent (self);
      /* A server that serves the store tells its commits as they happen. */
      qstore_inspector_events_page_find_server (self->events_page, self->uri);
    }
  show_contents (self, contents);
  set_busy (self, FALSE);
  update_monitor (self);

  /* The store changed again while it was read. */
  if (self->refresh_pending)
    {
      self->refresh_pending = FALSE;
      qstore_inspector_window_refresh (self);
    }
}

/**
 * qstore_inspector_window_open_uri:
 * @self: a #QStoreInspectorWindow
 * @uri: a store URI, such as `lmdb:/path/to/dir`
 *
 * Opens the store read-only and shows it once it is read.
 */
void
qstore_inspector_window_open_uri (QStoreInspectorWindow *self,
                                  const char            *uri)
{
  g_return_if_fail (QSTORE_INSPECTOR_IS_WINDOW (self));
  g_return_if_fail (uri != NULL);

  if (self->uri != NULL && g_str_equal (self->uri, uri) && self->contents != NULL)
    {
      qstore_inspector_window_refresh (self);
      return;
    }

  g_cancellable_cancel (self->cancellable);
  g_clear_object (&self->cancellable);
  self->cancellable = g_cancellable_new ();

  g_free (self->uri);
  self->uri = g_strdup (uri);
  g_clear_pointer (&self->error, g_free);
  g_clear_pointer (&self->error_details, g_free);
  g_clear_object (&self->contents);
  g_clear_object (&self->monitor);
  self->refresh_pending = FALSE;
  qstore_inspector_data_page_set_contents (self->data_page, NULL);
  qstore_inspector_events_page_find_server (self->events_page, NULL);

  set_busy (self, TRUE);
  gtk_stack_set_visible_child_name (self->main_stack, "loading");
  qstore_inspector_contents_load_async (uri, NULL, self->cancellable, load_done,
                                        g_object_ref (self));
}

/**
 * qstore_inspector_window_release_store:
 * @self: a #QStoreInspectorWindow
 *
 * Lets go of the open store: the pages show nothing and nothing reads it
 * until qstore_inspector_window_open_uri() opens it again. A store open
 * read-only in this process cannot be opened for writing in it (LMDB
 * opens a store once per process), as a sweep must.
 */
void
qstore_inspector_window_release_store (QStoreInspectorWindow *self)
{
  g_return_if_fail (QSTORE_INSPECTOR_IS_WINDOW (self));

  g_cancellable_cancel (self->cancellable);
  g_clear_object (&self->cancellable);
  self->cancellable = g_cancellable_new ();
  g_clear_object (&self->monitor);
  g_clear_object (&self->contents);
  self->refresh_pending = FALSE;
  qstore_inspector_catalog_page_set_contents (self->catalog_page, NULL);
  qstore_inspector_stale_page_set_contents (self->stale_page, NULL);
  qstore_inspector_data_page_set_contents (self->data_page, NULL);
  qstore_inspector_staging_page_set_contents (self->staging_page, NULL);
  set_busy (self, FALSE);
}

/**
 * qstore_inspector_window_refresh:
 * @self: a #QStoreInspectorWindow
 *
 * Reads the open store again: what another process wrote since shows.
 * The pages keep their selection and where they were scrolled to.
 */
void
qstore_inspector_window_refresh (QStoreInspectorWindow *self)
{
  g_return_if_fail (QSTORE_INSPECTOR_IS_WINDOW (self));

  if (self->contents == NULL || self->busy)
    return;

  set_busy (self, TRUE);
  qstore_inspector_contents_load_async (self->uri,
                                        qstore_inspector_contents_get_provider (self->contents),
                                        self->cancellable, load_done, g_object_ref (self));
}

/* Refreshing by itself */

static void
store_changed_cb (QStoreInspectorWindow *self)
{
  if (!self->auto_refresh || self->contents == NULL)
    return;
  if (self->busy)
    self->refresh_pending = TRUE;
  else
    qstore_inspector_window_refresh (self);
}

static void
update_monitor (QStoreInspectorWindow *self)
{
  g_autoptr(GError) error = NULL;

  if (!self->auto_refresh || self->contents == NULL)
    {
      g_clear_object (&self->monitor);
      return;
    }
  if (self->monitor != NULL &&
      g_str_equal (qstore_inspector_monitor_get_uri (self->monitor), self->uri))
    return;

  g_clear_object (&self->monitor);
  self->monitor = qstore_inspector_monitor_new (self->uri, &error);
  if (self->monitor != NULL)
    g_signal_connect_object (self->monitor, "changed", G_CALLBACK (store_changed_cb), self,
                             G_CONNECT_SWAPPED);
  else if (error != NULL)
    /* F5 still works; nothing else depends on it. */
    g_debug ("Cannot watch %s for changes: %s", self->uri, error->message);
}

static void
set_auto_refresh (QStoreInspectorWindow *self,
                  gboolean               auto_refresh)
{
  if (self->auto_refresh == auto_refresh)
    return;
  self->auto_refresh = auto_refresh;
  update_monitor (self);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_AUTO_REFRESH]);
}

/* Pages */

void
qstore_inspector_window_show_page (QStoreInspectorWindow *self,
                                   const char            *name)
{
  GtkWidget *row;

  g_return_if_fail (QSTORE_INSPECTOR_IS_WINDOW (self));

  /* Each sidebar row is named as the page it shows. */
  for (row = gtk_widget_get_first_child (GTK_WIDGET (self->sidebar_list)); row != NULL;
       row = gtk_widget_get_next_sibling (row))
    if (GTK_IS_LIST_BOX_ROW (row) && g_str_equal (gtk_widget_get_name (row), name))
      break;
  if (row == NULL)
    return;

  gtk_list_box_select_row (self->sidebar_list, GTK_LIST_BOX_ROW (row));
  gtk_stack_set_visible_child_name (self->page_stack, name);
  update_titles (self);
  adw_leaflet_navigate (self->leaflet, ADW_NAVIGATION_DIRECTION_FORWARD);
}

/* The Events page shows in the sidebar while it follows a server. */
static void
update_events_row_cb (QStoreInspectorWindow *self)
{
  gboolean shown = qstore_inspector_events_page_get_server (self->events_page) != NULL;

  gtk_widget_set_visible (GTK_WIDGET (self->events_row), shown);
  if (!shown && g_strcmp0 (gtk_stack_get_visible_child_name (self->page_stack), "events") == 0)
    qstore_inspector_window_show_page (self, "catalog");
}

static void
sidebar_row_activated_cb (QStoreInspectorWindow *self,
                          GtkListBoxRow         *row)
{
  qstore_inspector_window_show_page (self, gtk_widget_get_name (GTK_WIDGET (row)));
}

/* Opening */

static void
open_path (QStoreInspectorWindow *self,
           const char            *path)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *uri = qstore_inspector_uri_for_path (path, &error);

  if (uri != NULL)
    qstore_inspector_window_open_uri (self, uri);
  else
    adw_toast_overlay_add_toast (self->toast_overlay, adw_toast_new (error->message));
}

static void
chooser_response_cb (GtkNativeDialog       *dialog,
                     int                    response,
                     QStoreInspectorWindow *self)
{
  if (response == GTK_RESPONSE_ACCEPT)
    {
      g_autoptr(GFile) file = gtk_file_chooser_get_file (GTK_FILE_CHOOSER (dialog));
      g_autofree char *path = file ? g_file_get_path (file) : NULL;

      if (path != NULL)
        open_path (self, path);
    }

  gtk_native_dialog_destroy (dialog);
  g_object_unref (dialog);
}

/* Where the last store opened is: its folder for an LMDB store (so its
 * data.mdb shows), else the folder holding the file. */
static GFile *
recent_folder (QStoreInspectorWindow *self)
{
  g_auto(GStrv) recent = get_recent (self);
  g_autofree char *location = NULL;
  g_autoptr(GFile) file = NULL;

  if (recent[0] == NULL)
    return NULL;
  location = qstore_inspector_location_of (recent[0]);
  file = g_file_new_for_path (location);
  if (g_str_has_prefix (recent[0], "lmdb:"))
    return g_steal_pointer (&file);
  return g_file_get_parent (file);
}

/* One chooser for both kinds: GtkFileChooser picks either files or
 * folders, so it picks files, and the data.mdb file of an LMDB store
 * stands for its folder (qstore_inspector_uri_for_path()). A folder can
 * be opened as such from the menu of the Open button, or dropped. */
static void
open_chooser (QStoreInspectorWindow *self,
              gboolean               folder)
{
  GtkFileChooserNative *chooser;
  g_autoptr(GFile) start = recent_folder (self);

  chooser = gtk_file_chooser_native_new (folder ? _("Open an LMDB Store’s Folder") : _("Open a Store"),
                                         GTK_WINDOW (self),
                                         folder ? GTK_FILE_CHOOSER_ACTION_SELECT_FOLDER
                                                : GTK_FILE_CHOOSER_ACTION_OPEN,
                                         _("_Open"), _("_Cancel"));
  gtk_native_dialog_set_modal (GTK_NATIVE_DIALOG (chooser), TRUE);
  if (start != NULL && g_file_query_exists (start, NULL))
    gtk_file_chooser_set_current_folder (GTK_FILE_CHOOSER (chooser), start, NULL);
  if (!folder)
    {
      g_autoptr(GtkFileFilter) stores = gtk_file_filter_new ();
      g_autoptr(GtkFileFilter) all = gtk_file_filter_new ();

      gtk_file_filter_set_name (stores, _("Stores (SQLite files, LMDB data.mdb)"));
      gtk_file_filter_add_pattern (stores, "*.db");
      gtk_file_filter_add_pattern (stores, "*.sqlite");
      gtk_file_filter_add_pattern (stores, "*.sqlite3");
      gtk_file_filter_add_pattern (stores, "data.mdb");
      gtk_file_filter_add_mime_type (stores, "application/vnd.sqlite3");
      gtk_file_chooser_add_filter (GTK_FILE_CHOOSER (chooser), stores);
      gtk_file_filter_set_name (all, _("All Files"));
      gtk_file_filter_add_pattern (all, "*");
      gtk_file_chooser_add_filter (GTK_FILE_CHOOSER (chooser), all);
    }
  g_signal_connect (chooser, "response", G_CALLBACK (chooser_response_cb), self);
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (chooser));
}

static gboolean
drop_cb (GtkDropTarget         *target,
         const GValue          *value,
         double                 x,
         double                 y,
         QStoreInspectorWindow *self)
{
  GFile *file = NULL;
  g_autofree char *path = NULL;

  if (G_VALUE_HOLDS (value, GDK_TYPE_FILE_LIST))
    {
      GSList *files = g_value_get_boxed (value);

      file = files ? files->data : NULL;
    }
  else if (G_VALUE_HOLDS (value, G_TYPE_FILE))
    file = g_value_get_object (value);

  if (file == NULL || !(path = g_file_get_path (file)))
    {
      adw_toast_overlay_add_toast (self->toast_overlay,
                                   adw_toast_new (_("Only a folder or a file on this computer can be opened")));
      return FALSE;
    }
  open_path (self, path);
  return TRUE;
}

/* Actions */

static void
open_action (GtkWidget  *widget,
             const char *action_name,
             GVariant   *parameter)
{
  open_chooser (QSTORE_INSPECTOR_WINDOW (widget), FALSE);
}

static void
open_folder_action (GtkWidget  *widget,
                    const char *action_name,
                    GVariant   *parameter)
{
  open_chooser (QSTORE_INSPECTOR_WINDOW (widget), TRUE);
}

static void
open_uri_action (GtkWidget  *widget,
                 const char *action_name,
                 GVariant   *parameter)
{
  qstore_inspector_window_open_uri (QSTORE_INSPECTOR_WINDOW (widget),
                                    g_variant_get_string (parameter, NULL));
}

static void
refresh_action (GtkWidget  *widget,
                const char *action_name,
                GVariant   *parameter)
{
  qstore_inspector_window_refresh (QSTORE_INSPECTOR_WINDOW (widget));
}

static void
show_page_action (GtkWidget  *widget,
                  const char *action_name,
                  GVariant   *parameter)
{
  qstore_inspector_window_show_page (QSTORE_INSPECTOR_WINDOW (widget),
                                     g_variant_get_string (parameter, NULL));
}

static void
show_table_action (GtkWidget  *widget,
                   const char *action_name,
                   GVariant   *parameter)
{
  QStoreInspectorWindow *self = QSTORE_INSPECTOR_WINDOW (widget);

  qstore_inspector_data_page_select_table (self->data_page, g_variant_get_string (parameter, NULL));
  qstore_inspector_window_show_page (self, "data");
}

static void
show_entry_action (GtkWidget  *widget,
                   const char *action_name,
                   GVariant   *parameter)
{
  QStoreInspectorWindow *self = QSTORE_INSPECTOR_WINDOW (widget);

  qstore_inspector_catalog_page_select_name (self->catalog_page, g_variant_get_string (parameter, NULL));
  qstore_inspector_window_show_page (self, "catalog");
}

static void
connect_server_action (GtkWidget  *widget,
                       const char *action_name,
                       GVariant   *parameter)
{
  QStoreInspectorWindow *self = QSTORE_INSPECTOR_WINDOW (widget);

  qstore_inspector_events_page_connect_dialog (self->events_page);
}

/* “Why?” next to a materialized view: its own verdict, not just the page. */
static void
show_verdict_action (GtkWidget  *widget,
                     const char *action_name,
                     GVariant   *parameter)
{
  QStoreInspectorWindow *self = QSTORE_INSPECTOR_WINDOW (widget);

  qstore_inspector_window_show_page (self, "stale");
  qstore_inspector_stale_page_show_view (self->stale_page, g_variant_get_string (parameter, NULL));
}

/* GObject */

static gboolean
qstore_inspector_window_close_request (GtkWindow *window)
{
  QStoreInspectorWindow *self = QSTORE_INSPECTOR_WINDOW (window);

  if (self->settings != NULL)
    {
      int width, height;

      gtk_window_get_default_size (window, &width, &height);
      g_settings_delay (self->settings);
      g_settings_set_boolean (self->settings, "window-maximized", gtk_window_is_maximized (window));
      if (!gtk_window_is_maximized (window))
        {
          g_settings_set_int (self->settings, "window-width", width);
          g_settings_set_int (self->settings, "window-height", height);
        }
      g_settings_apply (self->settings);
    }

  return GTK_WINDOW_CLASS (qstore_inspector_window_parent_class)->close_request (window);
}

static void
qstore_inspector_window_dispose (GObject *object)
{
  QStoreInspectorWindow *self = QSTORE_INSPECTOR_WINDOW (object);

  g_cancellable_cancel (self->cancellable);
  g_clear_object (&self->monitor);

  G_OBJECT_CLASS (qstore_inspector_window_parent_class)->dispose (object);
}

static void
qstore_inspector_window_finalize (GObject *object)
{
  QStoreInspectorWindow *self = QSTORE_INSPECTOR_WINDOW (object);

  g_clear_object (&self->settings);
  g_clear_object (&self->cancellable);
  g_clear_object (&self->contents);
  g_free (self->uri);
  g_free (self->error);
  g_free (self->error_details);

  G_OBJECT_CLASS (qstore_inspector_window_parent_class)->finalize (object);
}

static void
qstore_inspector_window_get_property (GObject    *object,
                                      guint       prop_id,
                                      GValue     *value,
                                      GParamSpec *pspec)
{
  QStoreInspectorWindow *self = QSTORE_INSPECTOR_WINDOW (object);

  switch (prop_id)
    {
    case PROP_BUSY:
      g_value_set_boolean (value, self->busy);
      break;
    case PROP_CONTENTS:
      g_value_set_object (value, self->contents);
      break;
    case PROP_AUTO_REFRESH:
      g_value_set_boolean (value, self->auto_refresh);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
qstore_inspector_window_set_property (GObject      *object,
                                      guint         prop_id,
                                      const GValue *value,
                                      GParamSpec   *pspec)
{
  QStoreInspectorWindow *self = QSTORE_INSPECTOR_WINDOW (object);

  switch (prop_id)
    {
    case PROP_AUTO_REFRESH:
      set_auto_refresh (self, g_value_get_boolean (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
qstore_inspector_window_class_init (QStoreInspectorWindowClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);
  GtkWindowClass *window_class = GTK_WINDOW_CLASS (klass);

  object_class->dispose = qstore_inspector_window_dispose;
  object_class->finalize = qstore_inspector_window_finalize;
  object_class->get_property = qstore_inspector_window_get_property;
  object_class->set_property = qstore_inspector_window_set_property;
  window_class->close_request = qstore_inspector_window_close_request;

  properties[PROP_BUSY] =
    g_param_spec_boolean ("busy", NULL, NULL, FALSE,
                          G_PARAM_READABLE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);
  properties[PROP_CONTENTS] =
    g_param_spec_object ("contents", NULL, NULL, QSTORE_INSPECTOR_TYPE_CONTENTS,
                         G_PARAM_READABLE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);
  /* Whether a commit by another process refreshes the window; bound to
   * the auto-refresh setting. */
  properties[PROP_AUTO_REFRESH] =
    g_param_spec_boolean ("auto-refresh", NULL, NULL, TRUE,
                          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);
  g_object_class_install_properties (object_class, N_PROPS, properties);

  g_type_ensure (QSTORE_INSPECTOR_TYPE_CATALOG_PAGE);
  g_type_ensure (QSTORE_INSPECTOR_TYPE_STALE_PAGE);
  g_type_ensure (QSTORE_INSPECTOR_TYPE_DATA_PAGE);
  g_type_ensure (QSTORE_INSPECTOR_TYPE_STAGING_PAGE);
  g_type_ensure (QSTORE_INSPECTOR_TYPE_EVENTS_PAGE);

  gtk_widget_class_set_template_from_resource (widget_class, "/org/qstore/Inspector/qstore-inspector-window.ui");
  gtk_widget_class_bind_template_child (widget_class, QStoreInspectorWindow, toast_overlay);
  gtk_widget_class_bind_template_child (widget_class, QStoreInspectorWindow, main_stack);
  gtk_widget_class_bind_template_child (widget_class, QStoreInspectorWindow, error_page);
  gtk_widget_class_bind_template_child_full (widget_class, "error_details", FALSE,
                                             G_STRUCT_OFFSET (QStoreInspectorWindow, error_details_label));
  gtk_widget_class_bind_template_child (widget_class, QStoreInspectorWindow, loading_spinner);
  gtk_widget_class_bind_template_child (widget_class, QStoreInspectorWindow, recent_group);
  gtk_widget_class_bind_template_child (widget_class, QStoreInspectorWindow, recent_list);
  gtk_widget_class_bind_template_child (widget_class, QStoreInspectorWindow, leaflet);
  gtk_widget_class_bind_template_child (widget_class, QStoreInspectorWindow, sidebar_list);
  gtk_widget_class_bind_template_child (widget_class, QStoreInspectorWindow, catalog_row);
  gtk_widget_class_bind_template_child (widget_class, QStoreInspectorWindow, stale_row);
  gtk_widget_class_bind_template_child (widget_class, QStoreInspectorWindow, data_row);
  gtk_widget_class_bind_template_child (widget_class, QStoreInspectorWindow, events_row);
  gtk_widget_class_bind_template_child (widget_class, QStoreInspectorWindow, stale_warning_icon);
  gtk_widget_class_bind_template_child (widget_class, QStoreInspectorWindow, store_name_label);
  gtk_widget_class_bind_template_child (widget_class, QStoreInspectorWindow, store_kind_label);
  gtk_widget_class_bind_template_child (widget_class, QStoreInspectorWindow, store_label);
  gtk_widget_class_bind_template_child (widget_class, QStoreInspectorWindow, open_button);
  gtk_widget_class_bind_template_child (widget_class, QStoreInspectorWindow, back_button);
  gtk_widget_class_bind_template_child (widget_class, QStoreInspectorWindow, content_title);
  gtk_widget_class_bind_template_child (widget_class, QStoreInspectorWindow, busy_spinner);
  gtk_widget_class_bind_template_child (widget_class, QStoreInspectorWindow, page_stack);
  gtk_widget_class_bind_template_child (widget_class, QStoreInspectorWindow, catalog_page);
  gtk_widget_class_bind_template_child (widget_class, QStoreInspectorWindow, stale_page);
  gtk_widget_class_bind_template_child (widget_class, QStoreInspectorWindow, data_page);
  gtk_widget_class_bind_template_child (widget_class, QStoreInspectorWindow, staging_page);
  gtk_widget_class_bind_template_child (widget_class, QStoreInspectorWindow, events_page);
  gtk_widget_class_bind_template_callback (widget_class, sidebar_row_activated_cb);
  gtk_widget_class_bind_template_callback (widget_class, back_clicked_cb);
  gtk_widget_class_bind_template_callback (widget_class, update_back_cb);
  gtk_widget_class_bind_template_callback (widget_class, update_events_row_cb);

  gtk_widget_class_install_action (widget_class, "win.open", NULL, open_action);
  gtk_widget_class_install_action (widget_class, "win.open-folder", NULL, open_folder_action);
  gtk_widget_class_install_action (widget_class, "win.open-uri", "s", open_uri_action);
  gtk_widget_class_install_action (widget_class, "win.refresh", NULL, refresh_action);
  gtk_widget_class_install_property_action (widget_class, "win.auto-refresh", "auto-refresh");
  gtk_widget_class_install_action (widget_class, "win.show-error", NULL, show_error_details);
  gtk_widget_class_install_action (widget_class, "win.show-page", "s", show_page_action);
  gtk_widget_class_install_action (widget_class, "win.show-table", "s", show_table_action);
  gtk_widget_class_install_action (widget_class, "win.show-entry", "s", show_entry_action);
  gtk_widget_class_install_action (widget_class, "win.show-verdict", "s", show_verdict_action);
  gtk_widget_class_install_action (widget_class, "win.connect-server", NULL, connect_server_action);

  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_o, GDK_CONTROL_MASK, "win.open", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_o, GDK_CONTROL_MASK | GDK_SHIFT_MASK, "win.open-folder", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_r, GDK_CONTROL_MASK, "win.refresh", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_F5, 0, "win.refresh", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_1, GDK_ALT_MASK, "win.show-page", "s", "catalog");
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_2, GDK_ALT_MASK, "win.show-page", "s", "stale");
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_3, GDK_ALT_MASK, "win.show-page", "s", "data");
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_4, GDK_ALT_MASK, "win.show-page", "s", "staging");
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_5, GDK_ALT_MASK, "win.show-page", "s", "events");
}

static void
qstore_inspector_window_init (QStoreInspectorWindow *self)
{
  GtkDropTarget *target;
  GType types[] = { GDK_TYPE_FILE_LIST, G_TYPE_FILE };

  self->auto_refresh = TRUE;
  gtk_widget_init_template (GTK_WIDGET (self));
  self->cancellable = g_cancellable_new ();

  /* A folder or a file dropped anywhere on the window opens. */
  target = gtk_drop_target_new (G_TYPE_INVALID, GDK_ACTION_COPY);
  gtk_drop_target_set_gtypes (target, types, G_N_ELEMENTS (types));
  g_signal_connect (target, "drop", G_CALLBACK (drop_cb), self);
  gtk_widget_add_controller (GTK_WIDGET (self), GTK_EVENT_CONTROLLER (target));

  gtk_widget_action_set_enabled (GTK_WIDGET (self), "win.refresh", FALSE);
  qstore_inspector_window_show_page (self, "catalog");
  update_recent (self);
  update_titles (self);
  update_back_cb (self);
}

QStoreInspectorWindow *
qstore_inspector_window_new (AdwApplication *application)
{
  return g_object_new (QSTORE_INSPECTOR_TYPE_WINDOW, "application", application, NULL);
}

/**
 * qstore_inspector_window_set_settings:
 * @self: a #QStoreInspectorWindow
 * @settings: (nullable): the application's settings, or %NULL when its
 *   schema is not installed (then nothing is remembered)
 *
 * Takes the size the window had when it was last closed, never smaller
 * than the smallest it can be, and the auto-refresh setting.
 */
void
qstore_inspector_window_set_settings (QStoreInspectorWindow *self,
                                      GSettings             *settings)
{
  g_return_if_fail (QSTORE_INSPECTOR_IS_WINDOW (self));

  g_set_object (&self->settings, settings);
  if (settings != NULL)
    {
      /* A size saved by an older version, or edited by hand, may be below
       * what the window can show. */
      gtk_window_set_default_size (GTK_WINDOW (self),
                                   MAX (g_settings_get_int (settings, "window-width"), MIN_WIDTH),
                                   MAX (g_settings_get_int (settings, "window-height"), MIN_HEIGHT));
      if (g_settings_get_boolean (settings, "window-maximized"))
        gtk_window_maximize (GTK_WINDOW (self));
      g_settings_bind (settings, "auto-refresh", self, "auto-refresh", G_SETTINGS_BIND_DEFAULT);
      g_settings_bind (settings, "max-events", self->events_page, "max-events", G_SETTINGS_BIND_GET);
    }
  update_recent (self);
}

const char *
qstore_inspector_window_get_page (QStoreInspectorWindow *self)
{
  g_return_val_if_fail (QSTORE_INSPECTOR_IS_WINDOW (self), NULL);
  return gtk_stack_get_visible_child_name (self->page_stack);
}

/* Returns: "welcome", "loading", "error" or "store" */
const char *
qstore_inspector_window_get_state (QStoreInspectorWindow *self)
{
  g_return_val_if_fail (QSTORE_INSPECTOR_IS_WINDOW (self), NULL);
  return gtk_stack_get_visible_child_name (self->main_stack);
}

gboolean
qstore_inspector_window_is_busy (QStoreInspectorWindow *self)
{
  g_return_val_if_fail (QSTORE_INSPECTOR_IS_WINDOW (self), FALSE);
  return self->busy;
}

/* Returns: (nullable): why the store did not open or refresh, in the
 * user's language */
const char *
qstore_inspector_window_get_error (QStoreInspectorWindow *self)
{
  g_return_val_if_fail (QSTORE_INSPECTOR_IS_WINDOW (self), NULL);
  return self->error;
}

/* Returns: (nullable): what the library said about it */
const char *
qstore_inspector_window_get_error_details (QStoreInspectorWindow *self)
{
  g_return_val_if_fail (QSTORE_INSPECTOR_IS_WINDOW (self), NULL);
  return self->error_details;
}

/* How many times the store was read (opened or refreshed). */
guint
qstore_inspector_window_get_n_loads (QStoreInspectorWindow *self)
{
  g_return_val_if_fail (QSTORE_INSPECTOR_IS_WINDOW (self), 0);
  return self->n_loads;
}

/* Whether the sidebar and the pages show one at a time. */
gboolean
qstore_inspector_window_get_folded (QStoreInspectorWindow *self)
{
  g_return_val_if_fail (QSTORE_INSPECTOR_IS_WINDOW (self), FALSE);
  return adw_leaflet_get_folded (self->leaflet);
}

/* Returns: (transfer none): the window's Back button */
GtkWidget *
qstore_inspector_window_get_back_button (QStoreInspectorWindow *self)
{
  g_return_val_if_fail (QSTORE_INSPECTOR_IS_WINDOW (self), NULL);
  return self->back_button;
}

/* Returns: (transfer none) (nullable): what watches the store for commits
 * of other processes, %NULL when auto-refresh is off */
QStoreInspectorMonitor *
qstore_inspector_window_get_monitor (QStoreInspectorWindow *self)
{
  g_return_val_if_fail (QSTORE_INSPECTOR_IS_WINDOW (self), NULL);
  return self->monitor;
}

QStoreInspectorContents *
qstore_inspector_window_get_contents (QStoreInspectorWindow *self)
{
  g_return_val_if_fail (QSTORE_INSPECTOR_IS_WINDOW (self), NULL);
  return self->contents;
}

QStoreInspectorCatalogPage *
qstore_inspector_window_get_catalog_page (QStoreInspectorWindow *self)
{
  g_return_val_if_fail (QSTORE_INSPECTOR_IS_WINDOW (self), NULL);
  return self->catalog_page;
}

QStoreInspectorStalePage *
qstore_inspector_window_get_stale_page (QStoreInspectorWindow *self)
{
  g_return_val_if_fail (QSTORE_INSPECTOR_IS_WINDOW (self), NULL);
  return self->stale_page;
}

QStoreInspectorDataPage *
qstore_inspector_window_get_data_page (QStoreInspectorWindow *self)
{
  g_return_val_if_fail (QSTORE_INSPECTOR_IS_WINDOW (self), NULL);
  return self->data_page;
}

QStoreInspectorStagingPage *
qstore_inspector_window_get_staging_page (QStoreInspectorWindow *self)
{
  g_return_val_if_fail (QSTORE_INSPECTOR_IS_WINDOW (self), NULL);
  return self->staging_page;
}

QStoreInspectorEventsPage *
qstore_inspector_window_get_events_page (QStoreInspectorWindow *self)
{
  g_return_val_if_fail (QSTORE_INSPECTOR_IS_WINDOW (self), NULL);
  return self->events_page;
}
