/* qstore-inspector-application.c: the qstore-inspector application
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <glib/gi18n.h>
#include <locale.h>

#include "qstore-inspector-application.h"
#include "qstore-inspector-window.h"

struct _QStoreInspectorApplication
{
  AdwApplication  parent_instance;

  GSettings      *settings;
};

G_DEFINE_FINAL_TYPE (QStoreInspectorApplication, qstore_inspector_application, ADW_TYPE_APPLICATION)

/**
 * qstore_inspector_init_i18n:
 *
 * Sets up translations: the locale from the environment, and the
 * message catalogs of the `qstore` domain.
 */
void
qstore_inspector_init_i18n (void)
{
  const char *localedir = g_getenv ("QSTORE_LOCALEDIR");

  setlocale (LC_ALL, "");
  bindtextdomain (GETTEXT_PACKAGE, localedir && *localedir ? localedir : LOCALEDIR);
  bind_textdomain_codeset (GETTEXT_PACKAGE, "UTF-8");
  textdomain (GETTEXT_PACKAGE);
}

static QStoreInspectorWindow *
new_window (QStoreInspectorApplication *self)
{
  QStoreInspectorWindow *window = qstore_inspector_window_new (ADW_APPLICATION (self));

  qstore_inspector_window_set_settings (window, self->settings);
  return window;
}

static void
qstore_inspector_application_activate (GApplication *application)
{
  QStoreInspectorApplication *self = QSTORE_INSPECTOR_APPLICATION (application);
  GtkWindow *window = gtk_application_get_active_window (GTK_APPLICATION (application));

  if (window == NULL)
    window = GTK_WINDOW (new_window (self));
  gtk_window_present (window);
}

static void
qstore_inspector_application_open (GApplication  *application,
                                   GFile        **files,
                                   int            n_files,
                                   const char    *hint)
{
  QStoreInspectorApplication *self = QSTORE_INSPECTOR_APPLICATION (application);

  for (int i = 0; i < n_files; i++)
    {
      QStoreInspectorWindow *window = new_window (self);
      g_autofree char *path = g_file_get_path (files[i]);
      g_autofree char *uri = NULL;
      g_autoptr(GError) error = NULL;

      uri = path ? qstore_inspector_uri_for_path (path, &error) : NULL;
      gtk_window_present (GTK_WINDOW (window));
      if (uri != NULL)
        qstore_inspector_window_open_uri (window, uri);
      else if (error != NULL)
        g_warning ("%s", error->message);
    }
}

/* Store URIs (`lmdb:/path`) are not file URIs, so GApplication's own
 * file handling cannot take them: the command line is read here, in the
 * primary instance. */
static int
qstore_inspector_application_command_line (GApplication            *application,
                                           GApplicationCommandLine *command_line)
{
  QStoreInspectorApplication *self = QSTORE_INSPECTOR_APPLICATION (application);
  GVariantDict *options = g_application_command_line_get_options_dict (command_line);
  g_autofree const char **arguments = NULL;
  gboolean opened = FALSE;

  if (!g_variant_dict_lookup (options, G_OPTION_REMAINING, "^a&ay", &arguments))
    arguments = NULL;

  for (guint i = 0; arguments != NULL && arguments[i] != NULL; i++)
    {
      g_autoptr(GError) error = NULL;
      g_autofree char *uri = NULL;
      g_autofree char *argument = g_strdup (arguments[i]);
      QStoreInspectorWindow *window;

      /* Relative paths are relative to where the command ran. */
      if (strchr (argument, ':') == NULL && !g_path_is_absolute (argument))
        {
          g_autofree char *joined = g_build_filename (g_application_command_line_get_cwd (command_line),
                                                      argument, NULL);

          g_free (argument);
          argument = g_steal_pointer (&joined);
        }

      uri = qstore_inspector_uri_for_argument (argument, &error);
      if (uri == NULL)
        {
          g_application_command_line_printerr (command_line, "qstore-inspector: %s\n", error->message);
          return 1;
        }
      window = new_window (self);
      gtk_window_present (GTK_WINDOW (window));
      qstore_inspector_window_open_uri (window, uri);
      opened = TRUE;
    }

  if (!opened)
    g_application_activate (application);
  return 0;
}

static void
about_action (GSimpleAction *action,
              GVariant      *parameter,
              gpointer       user_data)
{
  GtkApplication *application = user_data;
  const char *developers[] = { _("The qstore authors"), NULL };
  GtkWidget *about;

  about = g_object_new (ADW_TYPE_ABOUT_WINDOW,
                        "transient-for", gtk_application_get_active_window (application),
                        "application-name", _("qstore Inspector"),
                        "application-icon", QSTORE_INSPECTOR_APPLICATION_ID,
                        "developer-name", _("The qstore authors"),
                        "version", PACKAGE_VERSION,
                        "comments", _("Look inside qstore stores: their catalog, stale materialized views and data. The inspector opens stores read-only and never changes them."),
                        "license-type", GTK_LICENSE_LGPL_2_1,
                        "developers", developers,
                        /* Translators: your names, one per line */
                        "translator-credits", _("translator-credits"),
                        NULL);
  gtk_window_present (GTK_WINDOW (about));
}

static void
quit_action (GSimpleAction *action,
             GVariant      *parameter,
             gpointer       user_data)
{
  GtkApplication *application = user_data;
  GList *windows = gtk_application_get_windows (application);

  /* Closing each window lets it remember its size. */
  while (windows != NULL)
    {
      GList *next = windows->next;

      gtk_window_close (windows->data);
      windows = next;
    }
  g_application_quit (G_APPLICATION (application));
}

static void
qstore_inspector_application_startup (GApplication *application)
{
  QStoreInspectorApplication *self = QSTORE_INSPECTOR_APPLICATION (application);
  static const GActionEntry actions[] = {
    { "about", about_action, NULL, NULL, NULL, { 0 } },
    { "quit", quit_action, NULL, NULL, NULL, { 0 } },
  };
  static const char *quit_accels[] = { "<Control>q", NULL };
  static const char *close_accels[] = { "<Control>w", NULL };
  GSettingsSchemaSource *source = g_settings_schema_source_get_default ();
  g_autoptr(GSettingsSchema) schema = NULL;

  G_APPLICATION_CLASS (qstore_inspector_application_parent_class)->startup (application);

  g_action_map_add_action_entries (G_ACTION_MAP (application), actions, G_N_ELEMENTS (actions), application);
  gtk_application_set_accels_for_action (GTK_APPLICATION (application), "app.quit", quit_accels);
  gtk_application_set_accels_for_action (GTK_APPLICATION (application), "window.close", close_accels);

  /* Run from the build tree, the schema may not be installed: the app
   * then works and remembers nothing. */
  if (source != NULL)
    schema = g_settings_schema_source_lookup (source, QSTORE_INSPECTOR_APPLICATION_ID, TRUE);
  if (schema != NULL)
    self->settings = g_settings_new (QSTORE_INSPECTOR_APPLICATION_ID);

  gtk_window_set_default_icon_name (QSTORE_INSPECTOR_APPLICATION_ID);
}

static void
qstore_inspector_application_finalize (GObject *object)
{
  QStoreInspectorApplication *self = QSTORE_INSPECTOR_APPLICATION (object);

  g_clear_object (&self->settings);

  G_OBJECT_CLASS (qstore_inspector_application_parent_class)->finalize (object);
}

static void
qstore_inspector_application_class_init (QStoreInspectorApplicationClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GApplicationClass *application_class = G_APPLICATION_CLASS (klass);

  object_class->finalize = qstore_inspector_application_finalize;
  application_class->startup = qstore_inspector_application_startup;
  application_class->activate = qstore_inspector_application_activate;
  application_class->open = qstore_inspector_application_open;
  application_class->command_line = qstore_inspector_application_command_line;
}

static void
qstore_inspector_application_init (QStoreInspectorApplication *self)
{
  static const GOptionEntry entries[] = {
    { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, NULL, NULL, N_("[STORE…]") },
    G_OPTION_ENTRY_NULL
  };

  g_application_add_main_option_entries (G_APPLICATION (self), entries);
  g_application_set_option_context_parameter_string (G_APPLICATION (self), _("[STORE…]"));
  g_application_set_option_context_summary (G_APPLICATION (self),
                                            _("Look inside qstore stores without changing them.\n\n"
                                              "A STORE is a store URI such as lmdb:/path/to/dir or "
                                              "sqlite:/path/to/file.db, or a path: a folder opens as "
                                              "an LMDB store, a file as an SQLite store."));
}

QStoreInspectorApplication *
qstore_inspector_application_new (void)
{
  return g_object_new (QSTORE_INSPECTOR_TYPE_APPLICATION,
                       "application-id", QSTORE_INSPECTOR_APPLICATION_ID,
                       "flags", G_APPLICATION_HANDLES_COMMAND_LINE | G_APPLICATION_HANDLES_OPEN,
                       "resource-base-path", "/org/qstore/Inspector",
                       NULL);
}

/* Returns: (transfer none) (nullable): the settings, %NULL when the
 * schema is not installed */
GSettings *
qstore_inspector_application_get_settings (QStoreInspectorApplication *self)
{
  g_return_val_if_fail (QSTORE_INSPECTOR_IS_APPLICATION (self), NULL);
  return self->settings;
}
