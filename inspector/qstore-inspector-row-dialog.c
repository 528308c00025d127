/* qstore-inspector-row-dialog.c: one row, every value in full
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <glib/gi18n.h>
#include <string.h>

#include "qstore-inspector-row-dialog.h"
#include "qstore-inspector-text-group.h"

/* A table cell shows the start of a value on one line; this window shows
 * all of it: text whole and wrapped, a blob as its size and a hex dump.
 * Each value has a copy button, which copies a blob as an SQL literal. */

/* The most of a blob dumped in hex. */
#define MAX_DUMPED_BYTES 4096

static char *
describe (GVariant *value)
{
  if (value != NULL && g_variant_is_of_type (value, G_VARIANT_TYPE_BYTESTRING))
    {
      g_autofree char *size = g_format_size_full (g_variant_get_size (value), G_FORMAT_SIZE_LONG_FORMAT);

      /* Translators: a blob's type and size, such as “BLOB · 12 bytes” */
      return g_strdup_printf (_("BLOB · %s"), size);
    }
  if (value != NULL && g_variant_is_of_type (value, G_VARIANT_TYPE_STRING))
    {
      glong n = g_utf8_strlen (g_variant_get_string (value, NULL), -1);

      /* Translators: a text value's type and length */
      return g_strdup_printf (g_dngettext (GETTEXT_PACKAGE, "TEXT · %'ld character",
                                           "TEXT · %'ld characters", n), n);
    }
  return g_strdup (qstore_inspector_value_type_name (value));
}

static GtkWidget *
value_group (const char *column,
             GVariant   *value)
{
  g_autofree char *description = describe (value);
  g_autofree char *text = qstore_inspector_value_to_text (value);

  if (value == NULL || qstore_value_is_null (value))
    return qstore_inspector_text_group_new (column, description, "NULL", text, "null-value");
  if (g_variant_is_of_type (value, G_VARIANT_TYPE_BYTESTRING))
    {
      g_autoptr(GBytes) bytes = g_variant_get_data_as_bytes (value);
      g_autofree char *dump = qstore_inspector_hex_dump (bytes, MAX_DUMPED_BYTES);

      return qstore_inspector_text_group_new (column, description, dump, text, "code");
    }
  return qstore_inspector_text_group_new (column, description, text, NULL, NULL);
}

/**
 * qstore_inspector_row_dialog_new:
 * @parent: the window it belongs to
 * @table: the table's or view's `schema.name`
 * @column_names: the names of the row's columns, in order
 * @row: a loaded row
 *
 * Returns: (transfer none): a new window showing @row, not yet presented
 */
GtkWindow *
qstore_inspector_row_dialog_new (GtkWindow          *parent,
                                 const char         *table,
                                 const char * const *column_names,
                                 QStoreInspectorRow *row)
{
  GtkWidget *window = adw_window_new ();
  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 0);
  GtkWidget *header = adw_header_bar_new ();
  GtkWidget *page = adw_preferences_page_new ();
  g_autofree char *title = NULL;
  GtkShortcutController *shortcuts;

  /* Translators: the title of a window showing one row; %u is its
   * number, counting from 1 */
  title = g_strdup_printf (_("Row %u"), qstore_inspector_row_get_position (row) + 1);
  gtk_window_set_title (GTK_WINDOW (window), title);
  gtk_window_set_transient_for (GTK_WINDOW (window), parent);
  gtk_window_set_modal (GTK_WINDOW (window), TRUE);
  /* No wider than the window it belongs to: on a narrow screen, it
   * fills it. */
  gtk_window_set_default_size (GTK_WINDOW (window),
                               parent ? CLAMP (gtk_widget_get_width (GTK_WIDGET (parent)), 360, 560) : 560, 640);
  gtk_widget_set_size_request (window, 360, 294);
  adw_header_bar_set_title_widget (ADW_HEADER_BAR (header), adw_window_title_new (title, table));
  gtk_box_append (GTK_BOX (box), header);
  gtk_widget_set_vexpand (page, TRUE);
  gtk_box_append (GTK_BOX (box), page);
  adw_window_set_content (ADW_WINDOW (window), box);

  if (qstore_inspector_row_get_error (row) != NULL)
    {
      GtkWidget *group = adw_preferences_group_new ();
      GtkWidget *label = gtk_label_new (qstore_inspector_row_get_error (row));

      adw_preferences_group_set_title (ADW_PREFERENCES_GROUP (group), _("The Row Does Not Decode"));
      gtk_label_set_wrap (GTK_LABEL (label), TRUE);
      gtk_label_set_xalign (GTK_LABEL (label), 0);
      gtk_widget_add_css_class (label, "error");
      adw_preferences_group_add (ADW_PREFERENCES_GROUP (group), label);
      adw_preferences_page_add (ADW_PREFERENCES_PAGE (page), ADW_PREFERENCES_GROUP (group));
    }

  for (guint i = 0; column_names != NULL && column_names[i] != NULL; i++)
    {
      g_autoptr(GVariant) value = qstore_inspector_row_get_value (row, i);

      adw_preferences_page_add (ADW_PREFERENCES_PAGE (page),
                                ADW_PREFERENCES_GROUP (value_group (column_names[i], value)));
    }

  /* Escape closes it, as it closes dialogs. */
  shortcuts = GTK_SHORTCUT_CONTROLLER (gtk_shortcut_controller_new ());
  gtk_shortcut_controller_add_shortcut (shortcuts,
                                        gtk_shortcut_new (gtk_keyval_trigger_new (GDK_KEY_Escape, 0),
                                                          gtk_named_action_new ("window.close")));
  gtk_widget_add_controller (window, GTK_EVENT_CONTROLLER (shortcuts));
  return GTK_WINDOW (window);
}
