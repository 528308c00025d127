/* qstore-inspector-stale-page.c: the marker, the durable set and the verdicts
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <glib/gi18n.h>

#include "qstore-inspector-stale-page.h"

/* Answers "is the last shutdown clean?" and "why will my view refill?":
 * the two meta entries as they are, and one sentence per materialized
 * view, in the user's language, built from the library's reasons. */

struct _QStoreInspectorStalePage
{
  AdwBin                   parent_instance;

  QStoreInspectorContents *contents;

  AdwActionRow            *marker_row;
  GtkImage                *marker_icon;
  AdwActionRow            *stale_at_close_row;
  AdwActionRow            *set_row;
  GtkImage                *set_icon;
  AdwActionRow            *set_list_row;
  AdwActionRow            *atomic_row;
  AdwPreferencesGroup     *verdict_group;
  GtkListBox              *view_list;
  char                    *highlighted;   /* the view a “Why?” led to */
};

#define VIEW_NAME_KEY "qstore-inspector-view-name"

G_DEFINE_FINAL_TYPE (QStoreInspectorStalePage, qstore_inspector_stale_page, ADW_TYPE_BIN)

static char *
join_names (const char * const *names)
{
  if (names == NULL)
    return NULL;
  if (names[0] == NULL)
    return g_strdup (_("None"));
  return g_strjoinv (", ", (char **) names);
}

/**
 * qstore_inspector_describe_verdict:
 * @view: a materialized view of a stale report
 *
 * Returns: (transfer full): one sentence saying what the next open will
 *   do with @view and why, in the user's language
 */
char *
qstore_inspector_describe_verdict (QStoreStaleView *view)
{
  const char *subject = qstore_stale_view_get_reason_subject (view);

  switch (qstore_stale_view_get_reason_kind (view))
    {
    case QSTORE_STALE_REASON_TRUSTED_DURABLE_SET:
      return g_strdup (_("Adopted: the durable stale set does not list it, and every view it reads is adopted too."));
    case QSTORE_STALE_REASON_TRUSTED_MARKER:
      return g_strdup (_("Adopted: the store was closed cleanly with this view up to date, and every view it reads is adopted too."));
    case QSTORE_STALE_REASON_DURABLE_SET_MALFORMED:
      return g_strdup (_("Refilled: the durable stale set does not parse, so no stored view is trusted."));
    case QSTORE_STALE_REASON_IN_DURABLE_SET:
      return g_strdup (_("Refilled: the durable stale set lists it as stale."));
    case QSTORE_STALE_REASON_MARKER_ABSENT:
      return g_strdup (_("Refilled: there is no clean-shutdown marker, so the last session may have ended without closing the store."));
    case QSTORE_STALE_REASON_MARKER_MALFORMED:
      return g_strdup (_("Refilled: the clean-shutdown marker does not parse, so no stored view is trusted."));
    case QSTORE_STALE_REASON_STALE_AT_CLOSE:
      return g_strdup (_("Refilled: it was stale when the store was last closed."));
    case QSTORE_STALE_REASON_SOURCE_REFILLED:
      /* Translators: %s is the name of another materialized view */
      return g_strdup_printf (_("Refilled: it reads %s, which is refilled."), subject);
    case QSTORE_STALE_REASON_DEFINITION_ERROR:
      /* Translators: %s is a parser's error message */
      return g_strdup_printf (_("Not rebuilt: its definition does not parse (%s)."), subject);
    case QSTORE_STALE_REASON_SOURCE_MISSING:
      /* Translators: %s is the name of a table */
      return g_strdup_printf (_("Not rebuilt: it reads %s, which is not in the catalog."), subject);
    case QSTORE_STALE_REASON_SOURCE_FAILS:
    default:
      /* Translators: %s is the name of another materialized view */
      return g_strdup_printf (_("Not rebuilt: it reads %s, which cannot be rebuilt first."), subject);
    }
}

static GtkWidget *
create_view_row (gpointer item,
                 gpointer user_data)
{
  QStoreStaleView *view = item;
  GtkWidget *row = adw_action_row_new ();
  GtkWidget *tag;
  GtkWidget *button;
  g_autofree char *sentence = qstore_inspector_describe_verdict (view);
  const char *text;
  const char *style;

  switch (qstore_stale_view_get_verdict (view))
    {
    case QSTORE_STALE_VERDICT_ADOPT:
      text = _("Adopt");
      style = "success";
      break;
    case QSTORE_STALE_VERDICT_REFILL:
      text = _("Refill");
      style = "warning";
      break;
    case QSTORE_STALE_VERDICT_ERROR:
    default:
      text = _("Error");
      style = "error";
      break;
    }

  g_object_set_data_full (G_OBJECT (row), VIEW_NAME_KEY, g_strdup (qstore_stale_view_get_name (view)), g_free);
  adw_preferences_row_set_use_markup (ADW_PREFERENCES_ROW (row), FALSE);
  adw_preferences_row_set_title (ADW_PREFERENCES_ROW (row), qstore_stale_view_get_name (view));
  adw_action_row_set_subtitle (ADW_ACTION_ROW (row), sentence);
  adw_action_row_set_subtitle_lines (ADW_ACTION_ROW (row), 0);

  tag = gtk_label_new (text);
  gtk_widget_set_valign (tag, GTK_ALIGN_CENTER);
  gtk_widget_add_css_class (tag, "tag");
  gtk_widget_add_css_class (tag, style);
  adw_action_row_add_suffix (ADW_ACTION_ROW (row), tag);

  button = gtk_button_new_from_icon_name ("go-next-symbolic");
  gtk_widget_set_valign (button, GTK_ALIGN_CENTER);
  gtk_widget_add_css_class (button, "flat");
  gtk_widget_set_tooltip_text (button, _("Show in Catalog"));
  gtk_actionable_set_action_name (GTK_ACTIONABLE (button), "win.show-entry");
  gtk_actionable_set_action_target (GTK_ACTIONABLE (button), "s", qstore_stale_view_get_name (view));
  adw_action_row_add_suffix (ADW_ACTION_ROW (row), button);
  return row;
}

static void
set_state (AdwActionRow *row,
           GtkImage     *icon,
           const char   *subtitle,
           const char   *icon_name,
           const char   *style)
{
  adw_action_row_set_subtitle (row, subtitle);
  gtk_image_set_from_icon_name (icon, icon_name);
  gtk_widget_remove_css_class (GTK_WIDGET (icon), "success");
  gtk_widget_remove_css_class (GTK_WIDGET (icon), "warning");
  gtk_widget_remove_css_class (GTK_WIDGET (icon), "error");
  gtk_widget_remove_css_class (GTK_WIDGET (icon), "dim-label");
  gtk_widget_add_css_class (GTK_WIDGET (icon), style);
}

void
qstore_inspector_stale_page_set_contents (QStoreInspectorStalePage *self,
                                          QStoreInspectorContents  *contents)
{
  QStoreStaleReport *report;
  g_autofree char *at_close = NULL;
  g_autofree char *stale = NULL;
  g_autofree char *description = NULL;
  GListModel *views;
  guint n_views;

  g_return_if_fail (QSTORE_INSPECTOR_IS_STALE_PAGE (self));

  g_set_object (&self->contents, contents);
  g_clear_pointer (&self->highlighted, g_free);
  if (contents == NULL)
    {
      gtk_list_box_bind_model (self->view_list, NULL, NULL, NULL, NULL);
      return;
    }

  report = qstore_inspector_contents_get_stale_report (contents);

  if (!qstore_stale_report_get_marker_present (report))
    set_state (self->marker_row, self->marker_icon,
               _("Absent: the last session did not close the store, or a program has it open for writing now"),
               "dialog-warning-symbolic", "warning");
  else if (qstore_stale_report_get_marker_malformed (report))
    set_state (self->marker_row, self->marker_icon,
               _("Present but malformed: the next open trusts no stored view"),
               "dialog-error-symbolic", "error");
  else
    set_state (self->marker_row, self->marker_icon,
               _("Present: the store was closed cleanly"),
               "emblem-ok-symbolic", "success");

  at_close = join_names (qstore_stale_report_get_stale_at_close (report));
  gtk_widget_set_visible (GTK_WIDGET (self->stale_at_close_row),
                          qstore_stale_report_get_marker_present (report));
  if (at_close != NULL)
    adw_action_row_set_subtitle (self->stale_at_close_row, at_close);
  else
    {
      g_autofree char *raw = g_strdup_printf (_("Unreadable: %s"), qstore_stale_report_get_marker_text (report));

      adw_action_row_set_subtitle (self->stale_at_close_row, raw);
    }

  if (!qstore_stale_report_get_durable_set_present (report))
    set_state (self->set_row, self->set_icon,
               qstore_stale_report_get_atomic (report)
                 ? _("Absent: the next open relies on the clean-shutdown marker")
                 : _("Absent: this provider does not keep one"),
               "action-unavailable-symbolic", "dim-label");
  else if (qstore_stale_report_get_durable_set_malformed (report))
    set_state (self->set_row, self->set_icon,
               _("Present but malformed: the next open trusts no stored view"),
               "dialog-error-symbolic", "error");
  else
    set_state (self->set_row, self->set_icon,
               qstore_stale_report_get_atomic (report)
                 ? _("Present: the next open trusts it, even after a crash")
                 : _("Present, but ignored: this provider does not commit atomically"),
               "emblem-ok-symbolic", "success");

  stale = join_names (qstore_stale_report_get_durable_stale (report));
  gtk_widget_set_visible (GTK_WIDGET (self->set_list_row),
                          qstore_stale_report_get_durable_set_present (report));
  if (stale != NULL)
    adw_action_row_set_subtitle (self->set_list_row, stale);
  else
    {
      g_autofree char *raw = g_strdup_printf (_("Unreadable: %s"), qstore_stale_report_get_durable_set_text (report));

      adw_action_row_set_subtitle (self->set_list_row, raw);
    }

  adw_action_row_set_subtitle (self->atomic_row,
                               qstore_stale_report_get_atomic (report)
                                 ? _("Yes: every store commits in one transaction")
                                 : _("No: stores commit one by one"));

  views = qstore_stale_report_get_views (report);
  n_views = g_list_model_get_n_items (views);
  switch (qstore_stale_report_get_trust (report))
    {
    case QSTORE_STALE_TRUST_DURABLE_SET:
      description = g_strdup (_("The durable stale set decides which materialized views are adopted."));
      break;
    case QSTORE_STALE_TRUST_MARKER:
      description = g_strdup (_("The clean-shutdown marker decides which materialized views are adopted."));
      break;
    case QSTORE_STALE_TRUST_NONE:
    default:
      description = g_strdup (_("Nothing can be trusted: every materialized view will be refilled."));
      break;
    }
  adw_preferences_group_set_description (self->verdict_group, description);
  gtk_list_box_bind_model (self->view_list, views, create_view_row, NULL, NULL);
  (void) n_views;
}

/* Returns: (transfer none): the report's materialized views, one row each */
GListModel *
qstore_inspector_stale_page_get_model (QStoreInspectorStalePage *self)
{
  g_return_val_if_fail (QSTORE_INSPECTOR_IS_STALE_PAGE (self), NULL);

  if (self->contents == NULL)
    return NULL;
  return qstore_stale_report_get_views (qstore_inspector_contents_get_stale_report (self->contents));
}

const char *
qstore_inspector_stale_page_get_marker_summary (QStoreInspectorStalePage *self)
{
  g_return_val_if_fail (QSTORE_INSPECTOR_IS_STALE_PAGE (self), NULL);
  return adw_action_row_get_subtitle (self->marker_row);
}

const char *
qstore_inspector_stale_page_get_set_summary (QStoreInspectorStalePage *self)
{
  g_return_val_if_fail (QSTORE_INSPECTOR_IS_STALE_PAGE (self), NULL);
  return adw_action_row_get_subtitle (self->set_row);
}

/**
 * qstore_inspector_stale_page_show_view:
 * @self: a #QStoreInspectorStalePage
 * @name: a materialized view's `schema.name`
 *
 * Scrolls to the view's verdict, highlights it and gives it the focus: where
 * a “Why?” about the view leads.
 *
 * Returns: whether the page lists the view
 */
gboolean
qstore_inspector_stale_page_show_view (QStoreInspectorStalePage *self,
                                       const char               *name)
{
  GtkWidget *found = NULL;

  g_return_val_if_fail (QSTORE_INSPECTOR_IS_STALE_PAGE (self), FALSE);

  for (GtkWidget *row = gtk_widget_get_first_child (GTK_WIDGET (self->view_list)); row != NULL;
       row = gtk_widget_get_next_sibling (row))
    {
      const char *row_name = g_object_get_data (G_OBJECT (row), VIEW_NAME_KEY);

      gtk_widget_remove_css_class (row, "highlighted");
      if (row_name != NULL && g_ascii_strcasecmp (row_name, name) == 0)
        found = row;
    }

  g_clear_pointer (&self->highlighted, g_free);
  if (found == NULL)
    return FALSE;
  self->highlighted = g_strdup (g_object_get_data (G_OBJECT (found), VIEW_NAME_KEY));
  gtk_widget_add_css_class (found, "highlighted");
  /* The focus scrolls the page to the row. */
  gtk_widget_grab_focus (found);
  return TRUE;
}

/* Returns: (nullable): the view whose verdict is highlighted */
const char *
qstore_inspector_stale_page_get_highlighted (QStoreInspectorStalePage *self)
{
  g_return_val_if_fail (QSTORE_INSPECTOR_IS_STALE_PAGE (self), NULL);
  return self->highlighted;
}

static void
qstore_inspector_stale_page_finalize (GObject *object)
{
  QStoreInspectorStalePage *self = QSTORE_INSPECTOR_STALE_PAGE (object);

  g_free (self->highlighted);

  G_OBJECT_CLASS (qstore_inspector_stale_page_parent_class)->finalize (object);
}

static void
qstore_inspector_stale_page_dispose (GObject *object)
{
  QStoreInspectorStalePage *self = QSTORE_INSPECTOR_STALE_PAGE (object);

  g_clear_object (&self->contents);

  G_OBJECT_CLASS (qstore_inspector_stale_page_parent_class)->dispose (object);
}

static void
qstore_inspector_stale_page_class_init (QStoreInspectorStalePageClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = qstore_inspector_stale_page_dispose;
  object_class->finalize = qstore_inspector_stale_page_finalize;

  gtk_widget_class_set_template_from_resource (widget_class, "/org/qstore/Inspector/qstore-inspector-stale-page.ui");
  gtk_widget_class_bind_template_child (widget_class, QStoreInspectorStalePage, marker_row);
  gtk_widget_class_bind_template_child (widget_class, QStoreInspectorStalePage, marker_icon);
  gtk_widget_class_bind_template_child (widget_class, QStoreInspectorStalePage, stale_at_close_row);
  gtk_widget_class_bind_template_child (widget_class, QStoreInspectorStalePage, set_row);
  gtk_widget_class_bind_template_child (widget_class, QStoreInspectorStalePage, set_icon);
  gtk_widget_class_bind_template_child (widget_class, QStoreInspectorStalePage, set_list_row);
  gtk_widget_class_bind_template_child (widget_class, QStoreInspectorStalePage, atomic_row);
  gtk_widget_class_bind_template_child (widget_class, QStoreInspectorStalePage, verdict_group);
  gtk_widget_class_bind_template_child (widget_class, QStoreInspectorStalePage, view_list);
}

static void
qstore_inspector_stale_page_init (QStoreInspectorStalePage *self)
{
  GtkWidget *placeholder;

  gtk_widget_init_template (GTK_WIDGET (self));

  placeholder = gtk_label_new (_("This store has no materialized views."));
  gtk_widget_add_css_class (placeholder, "dim-label");
  gtk_widget_set_margin_top (placeholder, 18);
  gtk_widget_set_margin_bottom (placeholder, 18);
  gtk_widget_set_margin_start (placeholder, 12);
  gtk_widget_set_margin_end (placeholder, 12);
  gtk_label_set_wrap (GTK_LABEL (placeholder), TRUE);
  gtk_list_box_set_placeholder (self->view_list, placeholder);
}
