/* qstore-inspector-staging-page.c: imports that did not finish, and the sweep
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <glib/gi18n.h>

#include "qstore-inspector-names.h"
#include "qstore-inspector-staging-page.h"
#include "qstore-inspector-sweep.h"
#include "qstore-inspector-window.h"

/* Answers "what did an interrupted import leave, and may it go?": every
 * staged import the store records, with its staging tables, how long ago
 * it last beat, whether it can be resumed, and the verdict of the
 * leftovers rule in a sentence. The runs are read with the rest of the
 * store, so Refresh reads them again.
 *
 * Sweep… is the inspector's only write. It asks first, naming what will
 * be dropped; only a confirmation lets go of the read-only store, opens
 * it for writing for the sweep (qstore-inspector-sweep.c) and reads it
 * again afterwards. */

struct _QStoreInspectorStagingPage
{
  AdwBin                   parent_instance;

  QStoreInspectorContents *contents;
  GtkWindow               *dialog;        /* the confirmation, while it shows */
  gboolean                 sweeping;
  char                    *sweep_error;   /* the last sweep's failure, for people */
  char                    *sweep_details; /* … and the library's words */
  guint                    n_swept;

  AdwPreferencesGroup     *runs_group;
  GtkWidget               *sweep_button;
  GtkListBox              *run_list;
  GtkLabel                *read_at_label;
  GtkLabel                *placeholder;
};

G_DEFINE_FINAL_TYPE (QStoreInspectorStagingPage, qstore_inspector_staging_page, ADW_TYPE_BIN)

/* The kind of marker row a staged import writes. */
#define STAGING_KIND "staging"

/**
 * qstore_inspector_format_duration:
 * @ms: milliseconds
 *
 * Returns: (transfer full): how long @ms lasts, in the user's language,
 *   to the minute past the first hour, such as “2 hours 5 minutes”
 */
char *
qstore_inspector_format_duration (gint64 ms)
{
  guint64 s = MAX (ms, 0) / 1000;
  guint64 small;
  g_autofree char *first = NULL;
  g_autofree char *second = NULL;

  if (s < 60)
    return g_strdup_printf (g_dngettext (GETTEXT_PACKAGE, "%u second", "%u seconds", s), (guint) s);
  if (s < 3600)
    return g_strdup_printf (g_dngettext (GETTEXT_PACKAGE, "%u minute", "%u minutes", s / 60),
                            (guint) (s / 60));
  if (s < 86400)
    {
      small = (s / 60) % 60;
      first = g_strdup_printf (g_dngettext (GETTEXT_PACKAGE, "%u hour", "%u hours", s / 3600),
                               (guint) (s / 3600));
      second = g_strdup_printf (g_dngettext (GETTEXT_PACKAGE, "%u minute", "%u minutes", small),
                                (guint) small);
    }
  else
    {
      small = (s / 3600) % 24;
      first = g_strdup_printf (g_dngettext (GETTEXT_PACKAGE, "%u day", "%u days", s / 86400),
                               (guint) (s / 86400));
      second = g_strdup_printf (g_dngettext (GETTEXT_PACKAGE, "%u hour", "%u hours", small),
                                (guint) small);
    }
  if (small == 0)
    return g_steal_pointer (&first);
  /* Translators: a duration of two parts, such as “2 hours” and “5 minutes” */
  return g_strdup_printf (_("%s %s"), first, second);
}

/**
 * qstore_inspector_describe_staging_run:
 * @run: a judged run, from a #QStoreStagingLeftovers
 * @stale_after_ms: the threshold it was judged with
 *
 * Returns: (transfer full): why @run's staging tables may be dropped or
 *   must stay, in one or two sentences in the user's language
 */
char *
qstore_inspector_describe_staging_run (QStoreStagingRun *run,
                                       gint64            stale_after_ms)
{
  g_autofree char *threshold = qstore_inspector_format_duration (stale_after_ms);
  g_autofree char *age = NULL;

  if (qstore_staging_run_get_heartbeat_age (run) >= 0)
    age = qstore_inspector_format_duration (qstore_staging_run_get_heartbeat_age (run));

  if (qstore_staging_run_get_droppable (run))
    {
      if (age == NULL)
        return g_strdup (_("Droppable: the import never wrote a heartbeat, and it cannot be resumed."));
      /* Translators: both are durations, such as “2 hours 5 minutes” */
      return g_strdup_printf (_("Droppable: no heartbeat for %s (the threshold is %s), and the "
                                "import cannot be resumed."), age, threshold);
    }
  if (g_strcmp0 (qstore_staging_run_get_kind (run), STAGING_KIND) != 0)
    /* Translators: %s is a word the store records, such as “staging” */
    return g_strdup_printf (_("Kept: the store records it as “%s”, which is not a staged import."),
                            qstore_staging_run_get_kind (run));
  if (qstore_staging_run_get_resumable (run))
    return g_strdup (_("Kept: the import can be resumed (it ran with --no-atomic), so its staging "
                       "tables hold the rows loaded so far. Continue it with qstore import "
                       "--resume, or give it up with qstore staging --discard."));
  /* Translators: both are durations, such as “4 minutes” */
  return g_strdup_printf (_("Kept: the last heartbeat was %s ago, within the threshold of %s, so "
                            "the import may still be loading."), age ? age : "?", threshold);
}

static char *
format_time (gint64 ms)
{
  g_autoptr(GDateTime) time = g_date_time_new_from_unix_local (ms / 1000);

  if (time == NULL)
    return g_strdup ("?");
  /* Translators: a date and time, as g_date_time_format() writes it */
  return g_date_time_format (time, _("%Y-%m-%d %H:%M"));
}

static GtkWidget *
tag_new (const char *text,
         const char *style)
{
  GtkWidget *tag = gtk_label_new (text);

  gtk_widget_set_valign (tag, GTK_ALIGN_CENTER);
  gtk_widget_add_css_class (tag, "tag");
  gtk_widget_add_css_class (tag, style);
  return tag;
}

static GtkWidget *
create_run_row (gpointer item,
                gpointer user_data)
{
  QStoreInspectorStagingPage *self = user_data;
  QStoreStagingRun *run = item;
  QStoreStagingLeftovers *leftovers = qstore_inspector_contents_get_staging (self->contents, NULL);
  GtkWidget *row = adw_action_row_new ();
  GtkWidget *tags = gtk_box_new (GTK_ORIENTATION_VERTICAL, 6);
  const char * const *tables = qstore_staging_run_get_tables (run);
  g_autofree char *joined = tables && tables[0] ? g_strjoinv (", ", (char **) tables) : g_strdup (_("none"));
  g_autofree char *started = format_time (qstore_staging_run_get_started (run));
  g_autofree char *reason = qstore_inspector_describe_staging_run (run, qstore_staging_leftovers_get_stale_after_ms (leftovers));
  g_autofree char *beat = NULL;
  g_autofree char *title = NULL;
  g_autofree char *subtitle = NULL;

  if (qstore_staging_run_get_heartbeat_age (run) >= 0)
    {
      g_autofree char *age = qstore_inspector_format_duration (qstore_staging_run_get_heartbeat_age (run));

      /* Translators: %s is a duration, such as “4 minutes” */
      beat = g_strdup_printf (_("last heartbeat %s ago"), age);
    }
  else
    beat = g_strdup (_("no heartbeat"));

  /* Translators: %s is the name of the table an import was replacing */
  title = g_strdup_printf (_("Import into %s"), qstore_staging_run_get_target (run));
  /* Translators: the lines under an interrupted import; the first %s is
   * a list of table names, the second a date and time, the third says
   * when the import last showed it was alive, the fourth why its tables
   * may or may not be dropped */
  subtitle = g_strdup_printf (_("Staging tables: %s\nStarted %s, %s\n%s"), joined, started, beat, reason);

  adw_preferences_row_set_use_markup (ADW_PREFERENCES_ROW (row), FALSE);
  adw_preferences_row_set_title (ADW_PREFERENCES_ROW (row), title);
  adw_action_row_set_subtitle (ADW_ACTION_ROW (row), subtitle);
  adw_action_row_set_subtitle_lines (ADW_ACTION_ROW (row), 0);

  gtk_widget_set_valign (tags, GTK_ALIGN_CENTER);
  if (qstore_staging_run_get_droppable (run))
    gtk_box_append (GTK_BOX (tags), tag_new (_("Droppable"), "warning"));
  else
    gtk_box_append (GTK_BOX (tags), tag_new (_("Kept"), "success"));
  if (qstore_staging_run_get_resumable (run))
    gtk_box_append (GTK_BOX (tags), tag_new (_("Resumable"), "accent"));
  adw_action_row_add_suffix (ADW_ACTION_ROW (row), tags);
  return row;
}

static QStoreStagingLeftovers *
get_leftovers (QStoreInspectorStagingPage *self)
{
  return self->contents ? qstore_inspector_contents_get_staging (self->contents, NULL) : NULL;
}

static void
update_sweep_button (QStoreInspectorStagingPage *self)
{
  gtk_widget_set_sensitive (self->sweep_button,
                            !self->sweeping && qstore_inspector_staging_page_can_sweep (self));
  gtk_button_set_label (GTK_BUTTON (self->sweep_button), self->sweeping ? _("Sweeping…") : _("_Sweep…"));
}

/**
 * qstore_inspector_staging_page_set_contents:
 * @self: a #QStoreInspectorStagingPage
 * @contents: (nullable): what was read from the store
 *
 * Lists the staged imports @contents read, as they were judged then.
 */
void
qstore_inspector_staging_page_set_contents (QStoreInspectorStagingPage *self,
                                            QStoreInspectorContents    *contents)
{
  QStoreStagingLeftovers *leftovers;
  const char *error_message = NULL;
  g_autofree char *description = NULL;
  g_autofree char *read_at = NULL;

  g_return_if_fail (QSTORE_INSPECTOR_IS_STAGING_PAGE (self));

  gtk_list_box_bind_model (self->run_list, NULL, NULL, NULL, NULL);
  g_set_object (&self->contents, contents);
  update_sweep_button (self);
  if (contents == NULL)
    return;

  leftovers = qstore_inspector_contents_get_staging (contents, &error_message);
  if (leftovers != NULL)
    {
      g_autofree char *threshold = qstore_inspector_format_duration (qstore_staging_leftovers_get_stale_after_ms (leftovers));

      /* Translators: %s is a duration, such as “30 minutes” */
      description = g_strdup_printf (_("A staged import loads into staging tables, then swaps them in. "
                                       "One that stopped half-way leaves them behind: they may be "
                                       "dropped once no heartbeat came for %s and the import cannot "
                                       "be resumed. The tables it was loading into are never touched."),
                                     threshold);
      gtk_list_box_bind_model (self->run_list, G_LIST_MODEL (leftovers), create_run_row, self, NULL);
      gtk_label_set_label (self->placeholder, _("No staged import was interrupted."));
    }
  else if (error_message != NULL)
    {
      description = g_strdup (_("The staged imports this store records cannot be read."));
      gtk_label_set_label (self->placeholder, error_message);
    }
  else
    gtk_label_set_label (self->placeholder, _("This store has never had a staged import."));
  adw_preferences_group_set_description (self->runs_group, description);

  {
    g_autofree char *time = g_date_time_format (qstore_inspector_contents_get_loaded_at (contents), "%X");

    /* Translators: %s is a time of day */
    read_at = g_strdup_printf (_("Read at %s; heartbeat ages are as of then. Refresh to read the "
                                 "store again."), time);
    gtk_label_set_label (self->read_at_label, read_at);
  }
}

/* Returns: (transfer none) (nullable): the runs listed, a #GListModel of
 *   #QStoreStagingRun */
GListModel *
qstore_inspector_staging_page_get_model (QStoreInspectorStagingPage *self)
{
  g_return_val_if_fail (QSTORE_INSPECTOR_IS_STAGING_PAGE (self), NULL);
  return G_LIST_MODEL (get_leftovers (self));
}

/* Whether a run listed is droppable. */
gboolean
qstore_inspector_staging_page_can_sweep (QStoreInspectorStagingPage *self)
{
  QStoreStagingLeftovers *leftovers;

  g_return_val_if_fail (QSTORE_INSPECTOR_IS_STAGING_PAGE (self), FALSE);

  leftovers = get_leftovers (self);
  return leftovers != NULL && qstore_staging_leftovers_get_n_droppable (leftovers) > 0;
}

/* Sweeping */

/* What a failed sweep means for the person who asked for it. */
static char *
explain_sweep_error (const GError *error,
                     const char   *location)
{
  if (error->domain != QSTORE_ERROR)
    return g_strdup (error->message);

  switch (error->code)
    {
    case QSTORE_ERROR_BUSY:
      /* Translators: %s is a folder or a file */
      return g_strdup_printf (_("Another program is writing to “%s”, so its staging tables cannot "
                                "be dropped now. Nothing was changed. Try again once it has "
                                "finished."), location);
    case QSTORE_ERROR_READ_ONLY:
    case QSTORE_ERROR_IO:
      return g_strdup_printf (_("“%s” cannot be opened for writing: you may only be allowed to "
                                "read it, or its disk is not available. Nothing was changed."),
                              location);
    case QSTORE_ERROR_NOT_FOUND:
      return g_strdup_printf (_("“%s” is not there any more. Nothing was changed."), location);
    default:
      return g_strdup_printf (_("The staging tables of “%s” could not all be dropped; the details "
                                "say why. The tables the imports were loading into are not "
                                "changed. The page shows what is left."), location);
    }
}

static void
show_sweep_error (QStoreInspectorStagingPage *self,
                  GtkWidget                  *window)
{
  GtkWidget *dialog = adw_message_dialog_new (GTK_WINDOW (window), _("Cannot Sweep"), self->sweep_error);
  GtkWidget *details = gtk_label_new (self->sweep_details);

  adw_message_dialog_add_response (ADW_MESSAGE_DIALOG (dialog), "close", _("_Close"));
  gtk_label_set_wrap (GTK_LABEL (details), TRUE);
  gtk_label_set_wrap_mode (GTK_LABEL (details), PANGO_WRAP_WORD_CHAR);
  gtk_label_set_selectable (GTK_LABEL (details), TRUE);
  gtk_widget_add_css_class (details, "caption");
  gtk_widget_add_css_class (details, "dim-label");
  adw_message_dialog_set_extra_child (ADW_MESSAGE_DIALOG (dialog), details);
  gtk_window_present (GTK_WINDOW (dialog));
}

typedef struct
{
  QStoreInspectorStagingPage *page;
  QStoreInspectorWindow      *window;
  char                       *uri;
} Sweep;

static void
sweep_free (Sweep *sweep)
{
  g_object_unref (sweep->page);
  g_object_unref (sweep->window);
  g_free (sweep->uri);
  g_free (sweep);
}

static void
sweep_done (GObject      *object,
            GAsyncResult *result,
            gpointer      user_data)
{
  Sweep *sweep = user_data;
  QStoreInspectorStagingPage *self = sweep->page;
  g_autoptr(GPtrArray) swept = NULL;
  g_autoptr(GError) error = NULL;

  swept = qstore_inspector_sweep_finish (result, &error);
  self->sweeping = FALSE;
  g_clear_pointer (&self->sweep_error, g_free);
  g_clear_pointer (&self->sweep_details, g_free);

  /* Read-only again, and read afresh: what is left shows. */
  qstore_inspector_window_open_uri (sweep->window, sweep->uri);

  if (swept == NULL)
    {
      g_autofree char *location = qstore_inspector_location_of (sweep->uri);

      self->sweep_error = explain_sweep_error (error, location);
      self->sweep_details = g_strdup (error->message);
      show_sweep_error (self, GTK_WIDGET (sweep->window));
    }
  else
    {
      g_autofree char *text = NULL;
      GtkWidget *overlay = gtk_widget_get_ancestor (GTK_WIDGET (self), ADW_TYPE_TOAST_OVERLAY);

      self->n_swept += swept->len;
      text = g_strdup_printf (g_dngettext (GETTEXT_PACKAGE,
                                           "Dropped the staging tables of %u import",
                                           "Dropped the staging tables of %u imports", swept->len),
                              swept->len);
      if (overlay != NULL)
        adw_toast_overlay_add_toast (ADW_TOAST_OVERLAY (overlay), adw_toast_new (text));
    }
  update_sweep_button (self);
  sweep_free (sweep);
}

static void
confirm_response_cb (QStoreInspectorStagingPage *self,
                     const char                 *response)
{
  g_autoptr(GPtrArray) droppable = NULL;
  g_autoptr(GStrvBuilder) keys = NULL;
  g_auto(GStrv) confirmed = NULL;
  GtkRoot *root = gtk_widget_get_root (GTK_WIDGET (self));
  Sweep *sweep;

  self->dialog = NULL;
  if (g_strcmp0 (response, "sweep") != 0 || self->sweeping ||
      !qstore_inspector_staging_page_can_sweep (self) || !QSTORE_INSPECTOR_IS_WINDOW (root))
    return;

  keys = g_strv_builder_new ();
  droppable = qstore_staging_leftovers_get_droppable (get_leftovers (self));
  for (guint i = 0; i < droppable->len; i++)
    {
      g_autofree char *key = qstore_inspector_staging_run_key (droppable->pdata[i]);

      g_strv_builder_add (keys, key);
    }
  confirmed = g_strv_builder_end (keys);

  sweep = g_new0 (Sweep, 1);
  sweep->page = g_object_ref (self);
  sweep->window = g_object_ref (QSTORE_INSPECTOR_WINDOW (root));
  sweep->uri = g_strdup (qstore_inspector_contents_get_uri (self->contents));

  self->sweeping = TRUE;
  /* This process lets go of the store first: LMDB opens a store once per
   * process, read-only or for writing. */
  qstore_inspector_window_release_store (sweep->window);
  update_sweep_button (self);
  qstore_inspector_sweep_async (sweep->uri, (const char * const *) confirmed, NULL, sweep_done, sweep);
}

/**
 * qstore_inspector_staging_page_sweep:
 * @self: a #QStoreInspectorStagingPage
 *
 * Asks whether to drop the staging tables of the droppable runs, naming
 * them. Only the “Drop” response writes to the store.
 *
 * Returns: (transfer none) (nullable): the question, presented; %NULL
 *   when nothing is droppable
 */
GtkWindow *
qstore_inspector_staging_page_sweep (QStoreInspectorStagingPage *self)
{
  g_autoptr(GPtrArray) droppable = NULL;
  g_autoptr(GString) body = g_string_new (NULL);
  GtkRoot *root;
  GtkWidget *dialog;

  g_return_val_if_fail (QSTORE_INSPECTOR_IS_STAGING_PAGE (self), NULL);

  if (self->sweeping || !qstore_inspector_staging_page_can_sweep (self))
    return NULL;
  if (self->dialog != NULL)
    {
      gtk_window_present (self->dialog);
      return self->dialog;
    }

  droppable = qstore_staging_leftovers_get_droppable (get_leftovers (self));
  g_string_append_printf (body,
                          g_dngettext (GETTEXT_PACKAGE,
                                       "These staging tables of %u interrupted import will be dropped for good:",
                                       "These staging tables of %u interrupted imports will be dropped for good:",
                                       droppable->len),
                          droppable->len);
  g_string_append_c (body, '\n');
  for (guint i = 0; i < droppable->len; i++)
    {
      QStoreStagingRun *run = droppable->pdata[i];
      g_autofree char *tables = g_strjoinv (", ", (char **) qstore_staging_run_get_tables (run));

      g_string_append (body, "\n• ");
      /* Translators: the first %s lists staging tables, the second is the
       * table the import was replacing */
      g_string_append_printf (body, _("%s (an import into %s)"), tables, qstore_staging_run_get_target (run));
    }
  g_string_append (body, "\n\n");
  g_string_append (body, _("The tables the imports were loading into are not changed. To drop "
                           "them, the inspector opens the store for writing for this one operation."));

  root = gtk_widget_get_root (GTK_WIDGET (self));
  dialog = adw_message_dialog_new (GTK_IS_WINDOW (root) ? GTK_WINDOW (root) : NULL,
                                   _("Drop Staging Tables?"), body->str);
  adw_message_dialog_add_responses (ADW_MESSAGE_DIALOG (dialog),
                                    "cancel", _("_Cancel"),
                                    "sweep", _("_Drop"),
                                    NULL);
  adw_message_dialog_set_response_appearance (ADW_MESSAGE_DIALOG (dialog), "sweep",
                                              ADW_RESPONSE_DESTRUCTIVE);
  adw_message_dialog_set_default_response (ADW_MESSAGE_DIALOG (dialog), "cancel");
  adw_message_dialog_set_close_response (ADW_MESSAGE_DIALOG (dialog), "cancel");
  g_signal_connect_object (dialog, "response", G_CALLBACK (confirm_response_cb), self, G_CONNECT_SWAPPED);
  self->dialog = GTK_WINDOW (dialog);
  gtk_window_present (self->dialog);
  return self->dialog;
}

static void
sweep_clicked_cb (QStoreInspectorStagingPage *self)
{
  qstore_inspector_staging_page_sweep (self);
}

gboolean
qstore_inspector_staging_page_is_sweeping (QStoreInspectorStagingPage *self)
{
  g_return_val_if_fail (QSTORE_INSPECTOR_IS_STAGING_PAGE (self), FALSE);
  return self->sweeping;
}

/* Returns: (nullable): why the last sweep failed, in the user's language */
const char *
qstore_inspector_staging_page_get_sweep_error (QStoreInspectorStagingPage *self)
{
  g_return_val_if_fail (QSTORE_INSPECTOR_IS_STAGING_PAGE (self), NULL);
  return self->sweep_error;
}

/* Returns: (nullable): what the library said about it */
const char *
qstore_inspector_staging_page_get_sweep_details (QStoreInspectorStagingPage *self)
{
  g_return_val_if_fail (QSTORE_INSPECTOR_IS_STAGING_PAGE (self), NULL);
  return self->sweep_details;
}

/* How many runs the sweeps of this page dropped. */
guint
qstore_inspector_staging_page_get_n_swept (QStoreInspectorStagingPage *self)
{
  g_return_val_if_fail (QSTORE_INSPECTOR_IS_STAGING_PAGE (self), 0);
  return self->n_swept;
}

/* GObject */

static void
qstore_inspector_staging_page_dispose (GObject *object)
{
  QStoreInspectorStagingPage *self = QSTORE_INSPECTOR_STAGING_PAGE (object);

  if (self->dialog != NULL)
    gtk_window_destroy (g_steal_pointer (&self->dialog));
  g_clear_object (&self->contents);

  G_OBJECT_CLASS (qstore_inspector_staging_page_parent_class)->dispose (object);
}

static void
qstore_inspector_staging_page_finalize (GObject *object)
{
  QStoreInspectorStagingPage *self = QSTORE_INSPECTOR_STAGING_PAGE (object);

  g_free (self->sweep_error);
  g_free (self->sweep_details);

  G_OBJECT_CLASS (qstore_inspector_staging_page_parent_class)->finalize (object);
}

static void
qstore_inspector_staging_page_class_init (QStoreInspectorStagingPageClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = qstore_inspector_staging_page_dispose;
  object_class->finalize = qstore_inspector_staging_page_finalize;

  gtk_widget_class_set_template_from_resource (widget_class, "/org/qstore/Inspector/qstore-inspector-staging-page.ui");
  gtk_widget_class_bind_template_child (widget_class, QStoreInspectorStagingPage, runs_group);
  gtk_widget_class_bind_template_child (widget_class, QStoreInspectorStagingPage, sweep_button);
  gtk_widget_class_bind_template_child (widget_class, QStoreInspectorStagingPage, run_list);
  gtk_widget_class_bind_template_child (widget_class, QStoreInspectorStagingPage, read_at_label);
  gtk_widget_class_bind_template_callback (widget_class, sweep_clicked_cb);
}

static void
qstore_inspector_staging_page_init (QStoreInspectorStagingPage *self)
{
  GtkWidget *placeholder;

  gtk_widget_init_template (GTK_WIDGET (self));

  placeholder = gtk_label_new (NULL);
  gtk_widget_add_css_class (placeholder, "dim-label");
  gtk_widget_set_margin_top (placeholder, 18);
  gtk_widget_set_margin_bottom (placeholder, 18);
  gtk_widget_set_margin_start (placeholder, 12);
  gtk_widget_set_margin_end (placeholder, 12);
  gtk_label_set_wrap (GTK_LABEL (placeholder), TRUE);
  gtk_label_set_wrap_mode (GTK_LABEL (placeholder), PANGO_WRAP_WORD_CHAR);
  gtk_list_box_set_placeholder (self->run_list, placeholder);
  self->placeholder = GTK_LABEL (placeholder);
}
