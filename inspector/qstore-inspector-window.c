/* qstore-inspector-window.c: the main window
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <glib/gi18n.h>

#include "qstore-inspector-window.h"

/* One window shows one store. Opening and refreshing read everything
 * the pages show in a worker thread (QStoreInspectorContents), then hand
 * it to the pages at once, so they never show a half-read store. */

struct _QStoreInspectorWindow
{
  AdwApplicationWindow        parent_instance;

  GSettings                  *settings;
  GCancellable               *cancellable;
  char                       *uri;
  char                       *error;
  QStoreInspectorContents    *contents;
  gboolean                    busy;

  AdwToastOverlay            *toast_overlay;
  GtkStack                   *main_stack;
  AdwStatusPage              *error_page;
  GtkSpinner                 *loading_spinner;
  AdwPreferencesGroup        *recent_group;
  GtkListBox                 *recent_list;
  AdwLeaflet                 *leaflet;
  GtkListBox                 *sidebar_list;
  GtkListBoxRow              *catalog_row;
  GtkListBoxRow              *stale_row;
  GtkListBoxRow              *data_row;
  GtkWidget                  *stale_warning_icon;
  GtkLabel                   *store_label;
  AdwSplitButton             *open_button;
  AdwWindowTitle             *content_title;
  GtkSpinner                 *busy_spinner;
  GtkStack                   *page_stack;
  QStoreInspectorCatalogPage *catalog_page;
  QStoreInspectorStalePage   *stale_page;
  QStoreInspectorDataPage    *data_page;
};

enum
{
  PROP_0,
  PROP_BUSY,
  PROP_CONTENTS,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

G_DEFINE_FINAL_TYPE (QStoreInspectorWindow, qstore_inspector_window, ADW_TYPE_APPLICATION_WINDOW)

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
  GtkWidget *child;
  guint n = g_strv_length (recent);

  while ((child = gtk_widget_get_first_child (GTK_WIDGET (self->recent_list))) != NULL)
    gtk_list_box_remove (self->recent_list, child);

  for (guint i = 0; i < n; i++)
    {
      g_autofree char *label = NULL;
      GtkWidget *row;
      GtkWidget *icon;
      const char *location = strchr (recent[i], ':');
      gboolean lmdb = g_str_has_prefix (recent[i], "lmdb:");

      location = location ? location + 1 : recent[i];
      label = g_path_get_basename (location);

      row = adw_action_row_new ();
      adw_preferences_row_set_title (ADW_PREFERENCES_ROW (row), label);
      adw_preferences_row_set_use_markup (ADW_PREFERENCES_ROW (row), FALSE);
      adw_action_row_set_subtitle (ADW_ACTION_ROW (row), recent[i]);
      icon = gtk_image_new_from_icon_name (lmdb ? "folder-symbolic" : "text-x-generic-symbolic");
      adw_action_row_add_prefix (ADW_ACTION_ROW (row), icon);
      adw_action_row_add_suffix (ADW_ACTION_ROW (row), gtk_image_new_from_icon_name ("go-next-symbolic"));
      gtk_actionable_set_action_name (GTK_ACTIONABLE (row), "win.open-uri");
      gtk_actionable_set_action_target (GTK_ACTIONABLE (row), "s", recent[i]);
      gtk_list_box_row_set_activatable (GTK_LIST_BOX_ROW (row), TRUE);
      gtk_list_box_append (self->recent_list, row);

      {
        g_autoptr(GMenuItem) item = g_menu_item_new (label, NULL);

        g_menu_item_set_action_and_target (item, "win.open-uri", "s", recent[i]);
        g_menu_append_item (menu, item);
      }
    }

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

  for (guint i = 0; i < g_list_model_get_n_items (views); i++)
    {
      g_autoptr(QStoreStaleView) view = g_list_model_get_item (views, i);

      if (qstore_stale_view_get_verdict (view) != QSTORE_STALE_VERDICT_ADOPT)
        refills = TRUE;
    }
  gtk_widget_set_visible (self->stale_warning_icon, refills);

  adw_window_title_set_subtitle (self->content_title, qstore_inspector_contents_get_uri (contents));
  gtk_label_set_label (self->store_label, qstore_inspector_contents_get_uri (contents));
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->store_label), qstore_inspector_contents_get_uri (contents));
  gtk_stack_set_visible_child_name (self->main_stack, "store");
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_CONTENTS]);
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

  if (contents == NULL)
    {
      g_free (self->error);
      self->error = g_strdup (error->message);

      if (refresh)
        {
          AdwToast *toast = adw_toast_new_format (_("Cannot refresh: %s"), error->message);

          adw_toast_set_timeout (toast, 0);
          adw_toast_overlay_add_toast (self->toast_overlay, toast);
        }
      else
        {
          adw_status_page_set_description (self->error_page, error->message);
          gtk_stack_set_visible_child_name (self->main_stack, "error");
        }
      set_busy (self, FALSE);
      return;
    }

  g_clear_pointer (&self->error, g_free);
  if (!refresh)
    {
      remember_uri (self, self->uri);
      update_recent (self);
    }
  show_contents (self, contents);
  set_busy (self, FALSE);
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
  g_clear_object (&self->contents);
  qstore_inspector_data_page_set_contents (self->data_page, NULL);

  set_busy (self, TRUE);
  gtk_stack_set_visible_child_name (self->main_stack, "loading");
  qstore_inspector_contents_load_async (uri, NULL, self->cancellable, load_done,
                                        g_object_ref (self));
}

/**
 * qstore_inspector_window_refresh:
 * @self: a #QStoreInspectorWindow
 *
 * Reads the open store again: what another process wrote since shows.
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

void
qstore_inspector_window_show_page (QStoreInspectorWindow *self,
                                   const char            *name)
{
  GtkListBoxRow *row = NULL;

  g_return_if_fail (QSTORE_INSPECTOR_IS_WINDOW (self));

  if (g_str_equal (name, "catalog"))
    row = self->catalog_row;
  else if (g_str_equal (name, "stale"))
    row = self->stale_row;
  else if (g_str_equal (name, "data"))
    row = self->data_row;
  else
    return;

  gtk_list_box_select_row (self->sidebar_list, row);
  gtk_stack_set_visible_child_name (self->page_stack, name);
  adw_window_title_set_title (self->content_title,
                              gtk_stack_page_get_title (gtk_stack_get_page (self->page_stack,
                                                                            gtk_stack_get_visible_child (self->page_stack))));
  adw_leaflet_navigate (self->leaflet, ADW_NAVIGATION_DIRECTION_FORWARD);
}

/* Callbacks and actions */

static void
sidebar_row_activated_cb (QStoreInspectorWindow *self,
                          GtkListBoxRow         *row)
{
  qstore_inspector_window_show_page (self, gtk_widget_get_name (GTK_WIDGET (row)));
}

static void
back_clicked_cb (QStoreInspectorWindow *self)
{
  adw_leaflet_navigate (self->leaflet, ADW_NAVIGATION_DIRECTION_BACK);
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
      g_autoptr(GError) error = NULL;
      g_autofree char *uri = NULL;

      if (path != NULL && (uri = qstore_inspector_uri_for_path (path, &error)) != NULL)
        qstore_inspector_window_open_uri (self, uri);
      else if (error != NULL)
        adw_toast_overlay_add_toast (self->toast_overlay, adw_toast_new (error->message));
    }

  gtk_native_dialog_destroy (dialog);
  g_object_unref (dialog);
}

static void
open_store (QStoreInspectorWindow *self,
            gboolean               folder)
{
  GtkFileChooserNative *chooser;
  g_autoptr(GtkFileFilter) filter = NULL;

  chooser = gtk_file_chooser_native_new (folder ? _("Open an LMDB Store") : _("Open an SQLite Store"),
                                         GTK_WINDOW (self),
                                         folder ? GTK_FILE_CHOOSER_ACTION_SELECT_FOLDER
                                                : GTK_FILE_CHOOSER_ACTION_OPEN,
                                         _("_Open"), _("_Cancel"));
  gtk_native_dialog_set_modal (GTK_NATIVE_DIALOG (chooser), TRUE);
  if (!folder)
    {
      filter = gtk_file_filter_new ();
      gtk_file_filter_set_name (filter, _("All Files"));
      gtk_file_filter_add_pattern (filter, "*");
      gtk_file_chooser_add_filter (GTK_FILE_CHOOSER (chooser), filter);
    }
  g_signal_connect (chooser, "response", G_CALLBACK (chooser_response_cb), self);
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (chooser));
}

/* One chooser cannot pick either a folder or a file, so a short dialog
 * asks which kind of store to open first. */
static void
kind_response_cb (AdwMessageDialog      *dialog,
                  const char            *response,
                  QStoreInspectorWindow *self)
{
  if (g_str_equal (response, "lmdb"))
    open_store (self, TRUE);
  else if (g_str_equal (response, "sqlite"))
    open_store (self, FALSE);
}

static void
open_action (GtkWidget  *widget,
             const char *action_name,
             GVariant   *parameter)
{
  QStoreInspectorWindow *self = QSTORE_INSPECTOR_WINDOW (widget);
  GtkWidget *dialog;

  dialog = adw_message_dialog_new (GTK_WINDOW (self), _("Open a Store"),
                                   _("An LMDB store is a folder; an SQLite store is a single file."));
  adw_message_dialog_add_responses (ADW_MESSAGE_DIALOG (dialog),
                                    "cancel", _("_Cancel"),
                                    "sqlite", _("SQLite _File…"),
                                    "lmdb", _("LMDB _Folder…"),
                                    NULL);
  adw_message_dialog_set_response_appearance (ADW_MESSAGE_DIALOG (dialog), "lmdb",
                                              ADW_RESPONSE_SUGGESTED);
  adw_message_dialog_set_default_response (ADW_MESSAGE_DIALOG (dialog), "lmdb");
  adw_message_dialog_set_close_response (ADW_MESSAGE_DIALOG (dialog), "cancel");
  g_signal_connect (dialog, "response", G_CALLBACK (kind_response_cb), self);
  gtk_window_present (GTK_WINDOW (dialog));
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
  window_class->close_request = qstore_inspector_window_close_request;

  properties[PROP_BUSY] =
    g_param_spec_boolean ("busy", NULL, NULL, FALSE,
                          G_PARAM_READABLE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);
  properties[PROP_CONTENTS] =
    g_param_spec_object ("contents", NULL, NULL, QSTORE_INSPECTOR_TYPE_CONTENTS,
                         G_PARAM_READABLE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);
  g_object_class_install_properties (object_class, N_PROPS, properties);

  g_type_ensure (QSTORE_INSPECTOR_TYPE_CATALOG_PAGE);
  g_type_ensure (QSTORE_INSPECTOR_TYPE_STALE_PAGE);
  g_type_ensure (QSTORE_INSPECTOR_TYPE_DATA_PAGE);

  gtk_widget_class_set_template_from_resource (widget_class, "/org/qstore/Inspector/qstore-inspector-window.ui");
  gtk_widget_class_bind_template_child (widget_class, QStoreInspectorWindow, toast_overlay);
  gtk_widget_class_bind_template_child (widget_class, QStoreInspectorWindow, main_stack);
  gtk_widget_class_bind_template_child (widget_class, QStoreInspectorWindow, error_page);
  gtk_widget_class_bind_template_child (widget_class, QStoreInspectorWindow, loading_spinner);
  gtk_widget_class_bind_template_child (widget_class, QStoreInspectorWindow, recent_group);
  gtk_widget_class_bind_template_child (widget_class, QStoreInspectorWindow, recent_list);
  gtk_widget_class_bind_template_child (widget_class, QStoreInspectorWindow, leaflet);
  gtk_widget_class_bind_template_child (widget_class, QStoreInspectorWindow, sidebar_list);
  gtk_widget_class_bind_template_child (widget_class, QStoreInspectorWindow, catalog_row);
  gtk_widget_class_bind_template_child (widget_class, QStoreInspectorWindow, stale_row);
  gtk_widget_class_bind_template_child (widget_class, QStoreInspectorWindow, data_row);
  gtk_widget_class_bind_template_child (widget_class, QStoreInspectorWindow, stale_warning_icon);
  gtk_widget_class_bind_template_child (widget_class, QStoreInspectorWindow, store_label);
  gtk_widget_class_bind_template_child (widget_class, QStoreInspectorWindow, open_button);
  gtk_widget_class_bind_template_child (widget_class, QStoreInspectorWindow, content_title);
  gtk_widget_class_bind_template_child (widget_class, QStoreInspectorWindow, busy_spinner);
  gtk_widget_class_bind_template_child (widget_class, QStoreInspectorWindow, page_stack);
  gtk_widget_class_bind_template_child (widget_class, QStoreInspectorWindow, catalog_page);
  gtk_widget_class_bind_template_child (widget_class, QStoreInspectorWindow, stale_page);
  gtk_widget_class_bind_template_child (widget_class, QStoreInspectorWindow, data_page);
  gtk_widget_class_bind_template_callback (widget_class, sidebar_row_activated_cb);
  gtk_widget_class_bind_template_callback (widget_class, back_clicked_cb);

  gtk_widget_class_install_action (widget_class, "win.open", NULL, open_action);
  gtk_widget_class_install_action (widget_class, "win.open-uri", "s", open_uri_action);
  gtk_widget_class_install_action (widget_class, "win.refresh", NULL, refresh_action);
  gtk_widget_class_install_action (widget_class, "win.show-page", "s", show_page_action);
  gtk_widget_class_install_action (widget_class, "win.show-table", "s", show_table_action);
  gtk_widget_class_install_action (widget_class, "win.show-entry", "s", show_entry_action);

  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_o, GDK_CONTROL_MASK, "win.open", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_r, GDK_CONTROL_MASK, "win.refresh", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_F5, 0, "win.refresh", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_1, GDK_ALT_MASK, "win.show-page", "s", "catalog");
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_2, GDK_ALT_MASK, "win.show-page", "s", "stale");
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_3, GDK_ALT_MASK, "win.show-page", "s", "data");
}

static void
qstore_inspector_window_init (QStoreInspectorWindow *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
  self->cancellable = g_cancellable_new ();

  gtk_widget_action_set_enabled (GTK_WIDGET (self), "win.refresh", FALSE);
  qstore_inspector_window_show_page (self, "catalog");
  update_recent (self);
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
 */
void
qstore_inspector_window_set_settings (QStoreInspectorWindow *self,
                                      GSettings             *settings)
{
  g_return_if_fail (QSTORE_INSPECTOR_IS_WINDOW (self));

  g_set_object (&self->settings, settings);
  if (settings != NULL)
    {
      gtk_window_set_default_size (GTK_WINDOW (self),
                                   g_settings_get_int (settings, "window-width"),
                                   g_settings_get_int (settings, "window-height"));
      if (g_settings_get_boolean (settings, "window-maximized"))
        gtk_window_maximize (GTK_WINDOW (self));
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

const char *
qstore_inspector_window_get_error (QStoreInspectorWindow *self)
{
  g_return_val_if_fail (QSTORE_INSPECTOR_IS_WINDOW (self), NULL);
  return self->error;
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
