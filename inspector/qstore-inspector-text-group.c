/* qstore-inspector-text-group.c: a titled box of text, with a copy button
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <glib/gi18n.h>
#include <string.h>

#include "qstore-inspector-text-group.h"

/* A definition in the catalog, a value in a row's window: text shown
 * whole, wrapped, selectable, in a box of its own, with a button that
 * copies it. A label, not a text view: a label measures its wrapped
 * height when it is laid out, where a wrapping GtkTextView in a box
 * computes its lines later, in an idle, and stays zero lines high until
 * the next resize. */

/* The most of a text laid out: a label of megabytes takes seconds. The
 * copy button still copies all of it. */
#define MAX_SHOWN_BYTES (64 * 1024)

#define COPIED_KEY "qstore-inspector-copied"

/* Says @text in the toast overlay of @widget's window, when it has one. */
void
qstore_inspector_toast (GtkWidget  *widget,
                        const char *text)
{
  GtkWidget *window = GTK_WIDGET (gtk_widget_get_root (widget));
  GtkWidget *overlay = ADW_IS_APPLICATION_WINDOW (window)
    ? adw_application_window_get_content (ADW_APPLICATION_WINDOW (window)) : NULL;

  /* The main window's toast overlay is its content. */
  if (overlay != NULL && ADW_IS_TOAST_OVERLAY (overlay))
    adw_toast_overlay_add_toast (ADW_TOAST_OVERLAY (overlay), adw_toast_new (text));
}

static void
copy_clicked_cb (GtkButton *button,
                 gpointer   user_data)
{
  gdk_clipboard_set_text (gtk_widget_get_clipboard (GTK_WIDGET (button)),
                          g_object_get_data (G_OBJECT (button), COPIED_KEY));
  qstore_inspector_toast (GTK_WIDGET (button), _("Copied"));
}

/**
 * qstore_inspector_text_group_new:
 * @title: the group's title
 * @description: (nullable): what the text is, under the title
 * @text: the text to show
 * @copied: (nullable): what the copy button copies, when not @text
 * @style: (nullable): a style class for the text: "code" for SQL and hex
 *   dumps (monospace), "null-value" for NULL
 *
 * Returns: (transfer floating): an #AdwPreferencesGroup
 */
GtkWidget *
qstore_inspector_text_group_new (const char *title,
                                 const char *description,
                                 const char *text,
                                 const char *copied,
                                 const char *style)
{
  GtkWidget *group = adw_preferences_group_new ();
  GtkWidget *label = gtk_label_new (NULL);
  GtkWidget *copy = gtk_button_new_from_icon_name ("edit-copy-symbolic");
  g_autofree char *shown = NULL;

  adw_preferences_group_set_title (ADW_PREFERENCES_GROUP (group), title);
  if (description != NULL)
    adw_preferences_group_set_description (ADW_PREFERENCES_GROUP (group), description);

  if (strlen (text) > MAX_SHOWN_BYTES)
    {
      const char *end = g_utf8_find_prev_char (text, text + MAX_SHOWN_BYTES);

      shown = g_strdup_printf ("%.*s…", (int) (end - text), text);
    }
  gtk_label_set_label (GTK_LABEL (label), shown ? shown : text);
  gtk_label_set_wrap (GTK_LABEL (label), TRUE);
  gtk_label_set_wrap_mode (GTK_LABEL (label), PANGO_WRAP_WORD_CHAR);
  gtk_label_set_xalign (GTK_LABEL (label), 0);
  gtk_label_set_yalign (GTK_LABEL (label), 0);
  gtk_label_set_selectable (GTK_LABEL (label), TRUE);
  /* Selectable labels take focus; this one is read, not typed in. */
  gtk_widget_set_focus_on_click (label, FALSE);
  gtk_widget_add_css_class (label, "card");
  gtk_widget_add_css_class (label, "text-box");
  if (style != NULL)
    gtk_widget_add_css_class (label, style);
  gtk_accessible_update_property (GTK_ACCESSIBLE (label), GTK_ACCESSIBLE_PROPERTY_LABEL, title, -1);
  adw_preferences_group_add (ADW_PREFERENCES_GROUP (group), label);

  gtk_widget_add_css_class (copy, "flat");
  gtk_widget_set_valign (copy, GTK_ALIGN_CENTER);
  gtk_widget_set_tooltip_text (copy, _("Copy"));
  g_object_set_data_full (G_OBJECT (copy), COPIED_KEY, g_strdup (copied ? copied : text), g_free);
  g_signal_connect (copy, "clicked", G_CALLBACK (copy_clicked_cb), NULL);
  adw_preferences_group_set_header_suffix (ADW_PREFERENCES_GROUP (group), copy);
  return group;
}
