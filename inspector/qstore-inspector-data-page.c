/* qstore-inspector-data-page.c: the rows of a table or view
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <glib/gi18n.h>

#include "qstore-inspector-data-page.h"
#include "qstore-inspector-errors.h"
#include "qstore-inspector-names.h"
#include "qstore-inspector-row-dialog.h"
#include "qstore-inspector-table-chooser.h"
#include "qstore-inspector-text-group.h"

/* A data browser over QStoreInspectorRowModel: rows arrive a page at a
 * time from a worker thread, and each cell updates itself when its row
 * is filled in. A table's columns follow its catalog entry; a view's are
 * known only from SQL, and come from its model when its query is
 * prepared.
 *
 * - A chooser (QStoreInspectorTableChooser) says which table or view.
 * - A click on a column's header sorts by it (again: the other way), a
 *   search keeps the rows that hold some text: the model has the store
 *   do both, through SQL.
 * - Rows can be selected and copied, as tab-separated text or as JSON
 *   (Ctrl+C, Ctrl+Shift+C, or the menu of a right click, which can also
 *   copy one value); activating a row shows all of its values.
 * - Columns take the width their title and first page need, and keep it
 *   while scrolling; a narrow window scrolls them sideways.
 * - An empty table, or a search that matches nothing, says so. */

/* The most rows one copy reads: their pages stay in memory meanwhile. */
#define MAX_COPY_ROWS 5000
#define MIN_COLUMN_WIDTH 48
#define MAX_COLUMN_WIDTH 360

struct _QStoreInspectorDataPage
{
  AdwBin                   parent_instance;

  QStoreInspectorContents *contents;
  QStoreInspectorRowModel *model;
  GtkMultiSelection       *selection;
  char                    *table;       /* the table or view shown */
  QStoreCatalogKeyKind     kind;
  char                   **columns;     /* its columns' names */
  char                    *error;
  guint                    n_columns;
  int                      selected;    /* its position in labels, -1 for none */
  gboolean                 measured;    /* column widths are set */
  QStoreInspectorRow      *first_row;   /* whose loading sets the widths */
  GObject                 *probe;       /* asks the column view's sorter */
  guint                    context_position;
  int                      context_column;
  GtkWidget               *context_menu;
  guint                    n_copies;

  GMenuModel              *row_menu;
  QStoreInspectorTableChooser *chooser;
  GtkLabel                *count_label;
  GtkSpinner              *spinner;
  GtkToggleButton         *search_button;
  GtkSearchBar            *search_bar;
  GtkSearchEntry          *row_search;
  GtkStack                *stack;
  AdwStatusPage           *error_page;
  GtkLabel                *error_details;
  AdwStatusPage           *no_rows_page;
  AdwStatusPage           *no_matches_page;
  GtkScrolledWindow       *rows_scroller;
  GtkColumnView           *column_view;
};

G_DEFINE_FINAL_TYPE (QStoreInspectorDataPage, qstore_inspector_data_page, ADW_TYPE_BIN)

#define COLUMN_KEY "qstore-inspector-column"
#define HANDLER_KEY "qstore-inspector-handler"
#define ROW_KEY "qstore-inspector-row"
#define PROBE_KEY "qstore-inspector-probe"

static void update_state (QStoreInspectorDataPage *self);

/* Cells */

static void
cell_setup_cb (GtkSignalListItemFactory *factory,
               GtkListItem              *item,
               gpointer                  user_data)
{
  GtkWidget *label = gtk_label_new (NULL);

  gtk_label_set_xalign (GTK_LABEL (label), 0);
  gtk_label_set_ellipsize (GTK_LABEL (label), PANGO_ELLIPSIZE_END);
  gtk_label_set_single_line_mode (GTK_LABEL (label), TRUE);
  gtk_list_item_set_child (item, label);
}

static void
cell_update (GtkLabel           *label,
             QStoreInspectorRow *row,
             int                 column)
{
  g_autoptr(GVariant) value = NULL;
  g_autofree char *text = NULL;
  gboolean is_null = FALSE;
  gboolean is_number = FALSE;

  gtk_widget_remove_css_class (GTK_WIDGET (label), "dim-label");
  gtk_widget_remove_css_class (GTK_WIDGET (label), "null-value");
  gtk_widget_remove_css_class (GTK_WIDGET (label), "error");

  if (column < 0)
    {
      /* The row number: 1-based, as people count. */
      text = g_strdup_printf ("%u", qstore_inspector_row_get_position (row) + 1);
      gtk_label_set_label (label, text);
      gtk_label_set_xalign (label, 1);
      gtk_widget_add_css_class (GTK_WIDGET (label), "dim-label");
      return;
    }

  if (!qstore_inspector_row_is_loaded (row))
    {
      gtk_label_set_label (label, "");
      return;
    }
  if (qstore_inspector_row_get_error (row) != NULL)
    {
      gtk_label_set_label (label, column == 0 ? qstore_inspector_row_get_error (row) : "");
      gtk_widget_add_css_class (GTK_WIDGET (label), "error");
      return;
    }

  value = qstore_inspector_row_get_value (row, column);
  text = qstore_inspector_format_value (value, &is_null, &is_number);
  gtk_label_set_label (label, text);
  gtk_label_set_xalign (label, is_number ? 1 : 0);
  if (is_null)
    {
      gtk_widget_add_css_class (GTK_WIDGET (label), "dim-label");
      gtk_widget_add_css_class (GTK_WIDGET (label), "null-value");
    }
}

static void
row_loaded_cb (QStoreInspectorRow *row,
               GParamSpec         *pspec,
               GtkLabel           *label)
{
  cell_update (label, row, GPOINTER_TO_INT (g_object_get_data (G_OBJECT (label), COLUMN_KEY)));
}

static void
cell_bind_cb (GtkSignalListItemFactory *factory,
              GtkListItem              *item,
              gpointer                  user_data)
{
  GtkWidget *label = gtk_list_item_get_child (item);
  QStoreInspectorRow *row = gtk_list_item_get_item (item);
  int column = GPOINTER_TO_INT (g_object_get_data (G_OBJECT (factory), COLUMN_KEY));
  gulong handler;

  g_object_set_data (G_OBJECT (label), COLUMN_KEY, GINT_TO_POINTER (column));
  handler = g_signal_connect (row, "notify::loaded", G_CALLBACK (row_loaded_cb), label);
  g_object_set_data (G_OBJECT (label), HANDLER_KEY, GSIZE_TO_POINTER (handler));
  g_object_set_data_full (G_OBJECT (label), ROW_KEY, g_object_ref (row), g_object_unref);
  cell_update (GTK_LABEL (label), row, column);
}

static void
cell_unbind_cb (GtkSignalListItemFactory *factory,
                GtkListItem              *item,
                gpointer                  user_data)
{
  GtkWidget *label = gtk_list_item_get_child (item);
  QStoreInspectorRow *row = g_object_get_data (G_OBJECT (label), ROW_KEY);
  gulong handler = GPOINTER_TO_SIZE (g_object_get_data (G_OBJECT (label), HANDLER_KEY));

  if (row != NULL && handler != 0)
    g_signal_handler_disconnect (row, handler);
  g_object_set_data (G_OBJECT (label), HANDLER_KEY, NULL);
  g_object_set_data (G_OBJECT (label), ROW_KEY, NULL);
}

/* GTK 4.8 does not say which column the column view sorts by: each
 * column's sorter, when the view's sorter compares two probes, writes
 * its column on them and says the first is smaller; the view's sorter
 * asks its primary column first and turns the answer round when that
 * column is sorted descending. Rows are never compared: the store sorts
 * them. */
static int
probe_compare (gconstpointer a,
               gconstpointer b,
               gpointer      user_data)
{
  g_object_set_data ((GObject *) a, PROBE_KEY, user_data);
  return GTK_ORDERING_SMALLER;
}

static GtkColumnViewColumn *
column_new (const char *title,
            int         column)
{
  GtkListItemFactory *factory = gtk_signal_list_item_factory_new ();
  GtkColumnViewColumn *view_column;

  g_object_set_data (G_OBJECT (factory), COLUMN_KEY, GINT_TO_POINTER (column));
  g_signal_connect (factory, "setup", G_CALLBACK (cell_setup_cb), NULL);
  g_signal_connect (factory, "bind", G_CALLBACK (cell_bind_cb), NULL);
  g_signal_connect (factory, "unbind", G_CALLBACK (cell_unbind_cb), NULL);
  view_column = gtk_column_view_column_new (title, factory);
  gtk_column_view_column_set_resizable (view_column, TRUE);
  if (column >= 0)
    {
      /* Stored as column + 1: 0 is “no column asked”. */
      g_autoptr(GtkSorter) sorter =
        GTK_SORTER (gtk_custom_sorter_new (probe_compare, GINT_TO_POINTER (column + 1), NULL));

      gtk_column_view_column_set_sorter (view_column, sorter);
    }
  return view_column;
}

/* Column widths */

/* A layout of the column view's font lacks the cells' tabular digits,
 * which are wider: a tenth more covers them. */
static int
text_width (GtkWidget  *widget,
            const char *text)
{
  PangoLayout *layout = gtk_widget_create_pango_layout (widget, text);
  int width;

  pango_layout_get_pixel_size (layout, &width, NULL);
  g_object_unref (layout);
  return width + width / 10;
}

/* Each column as wide as its title or the widest value of the first
 * page, within bounds: widths do not change as other rows scroll in, and
 * a long value is shortened, whole in the row's details. */
static void
measure_columns (QStoreInspectorDataPage *self)
{
  GListModel *columns = gtk_column_view_get_columns (self->column_view);
  guint n_rows = MIN (g_list_model_get_n_items (G_LIST_MODEL (self->model)), QSTORE_INSPECTOR_ROW_PAGE_SIZE);
  g_autofree int *widths = g_new0 (int, self->n_columns);
  g_autofree char *last = g_strdup_printf ("%u", g_list_model_get_n_items (G_LIST_MODEL (self->model)));
  /* Cell padding and separator, and room for the sort arrow beside a
   * title. */
  int padding = 20;
  int arrow = 24;

  for (guint r = 0; r < n_rows; r++)
    {
      g_autoptr(QStoreInspectorRow) row = g_list_model_get_item (G_LIST_MODEL (self->model), r);

      if (!qstore_inspector_row_is_loaded (row))
        continue;
      for (guint c = 0; c < self->n_columns; c++)
        {
          g_autoptr(GVariant) value = qstore_inspector_row_get_value (row, c);
          g_autofree char *text = qstore_inspector_format_value (value, NULL, NULL);

          widths[c] = MAX (widths[c], text_width (GTK_WIDGET (self->column_view), text));
        }
    }

  for (guint i = 0; i < g_list_model_get_n_items (columns); i++)
    {
      g_autoptr(GtkColumnViewColumn) column = g_list_model_get_item (columns, i);
      const char *title = gtk_column_view_column_get_title (column);
      int width = text_width (GTK_WIDGET (self->column_view), title) + arrow;

      if (i == 0)
        width = MAX (text_width (GTK_WIDGET (self->column_view), last), width - arrow);
      else if (i - 1 < self->n_columns)
        width = MAX (width, widths[i - 1]);
      gtk_column_view_column_set_fixed_width (column,
                                              i == 0 ? width + padding
                                                     : CLAMP (width + padding, MIN_COLUMN_WIDTH, MAX_COLUMN_WIDTH));
    }
  self->measured = TRUE;
}

static void
first_row_loaded_cb (QStoreInspectorDataPage *self)
{
  if (self->first_row != NULL)
    g_signal_handlers_disconnect_by_data (self->first_row, self);
  g_clear_object (&self->first_row);
  if (!self->measured && self->model != NULL && self->n_columns > 0)
    measure_columns (self);
}

/* Measured once the first page is in. */
static void
watch_first_row (QStoreInspectorDataPage *self)
{
  if (self->measured || self->first_row != NULL || self->model == NULL || self->n_columns == 0 ||
      g_list_model_get_n_items (G_LIST_MODEL (self->model)) == 0)
    return;
  self->first_row = g_list_model_get_item (G_LIST_MODEL (self->model), 0);
  if (qstore_inspector_row_is_loaded (self->first_row))
    first_row_loaded_cb (self);
  else
    g_signal_connect_swapped (self->first_row, "notify::loaded", G_CALLBACK (first_row_loaded_cb), self);
}

/* State */

static gboolean
searching (QStoreInspectorDataPage *self)
{
  return self->model != NULL && qstore_inspector_row_model_get_search (self->model) != NULL;
}

static void
update_count (QStoreInspectorDataPage *self)
{
  g_autofree char *text = NULL;
  guint n;

  if (self->model == NULL || qstore_inspector_row_model_get_error (self->model) != NULL)
    {
      gtk_label_set_label (self->count_label, "");
      return;
    }
  n = g_list_model_get_n_items (G_LIST_MODEL (self->model));
  if (!qstore_inspector_row_model_is_counted (self->model))
    /* Translators: shown instead of a row count while the rows are counted */
    text = g_strdup (_("counting rows…"));
  else if (searching (self))
    /* Translators: how many rows a search finds */
    text = g_strdup_printf (g_dngettext (GETTEXT_PACKAGE, "%'u match", "%'u matches", n), n);
  else
    text = g_strdup_printf (g_dngettext (GETTEXT_PACKAGE, "%'u row", "%'u rows", n), n);
  gtk_label_set_label (self->count_label, text);
}

static void
update_state (QStoreInspectorDataPage *self)
{
  const GError *error;

  update_count (self);
  if (self->model == NULL)
    {
      if (self->error == NULL)
        gtk_stack_set_visible_child_name (self->stack, "empty");
      return;
    }

  if ((error = qstore_inspector_row_model_get_error (self->model)) != NULL)
    {
      g_autofree char *explained =
        qstore_inspector_explain_error (error,
                                        self->kind == QSTORE_CATALOG_KEY_VIEW
                                          ? QSTORE_INSPECTOR_ACTIVITY_VIEW
                                          : QSTORE_INSPECTOR_ACTIVITY_ROWS,
                                        self->table);

      g_free (self->error);
      self->error = g_steal_pointer (&explained);
      adw_status_page_set_description (self->error_page, self->error);
      gtk_label_set_label (self->error_details, error->message);
      gtk_stack_set_visible_child_name (self->stack, "error");
      return;
    }
  g_clear_pointer (&self->error, g_free);

  if (qstore_inspector_row_model_is_counted (self->model) &&
      g_list_model_get_n_items (G_LIST_MODEL (self->model)) == 0)
    {
      g_autofree char *description = NULL;

      if (searching (self))
        {
          /* Translators: the first %s is what was searched for, the
           * second a table's or view's schema.name */
          description = g_strdup_printf (_("No row of “%2$s” holds “%1$s”."),
                                         qstore_inspector_row_model_get_search (self->model), self->table);
          adw_status_page_set_description (self->no_matches_page, description);
          gtk_stack_set_visible_child_name (self->stack, "no-matches");
        }
      else
        {
          /* Translators: %s is a table's or view's schema.name */
          description = g_strdup_printf (_("“%s” has no rows."), self->table);
          adw_status_page_set_description (self->no_rows_page, description);
          gtk_stack_set_visible_child_name (self->stack, "no-rows");
        }
      return;
    }

  gtk_stack_set_visible_child_name (self->stack, "rows");
  watch_first_row (self);
}

/* Tables and views */

static void
clear_columns (QStoreInspectorDataPage *self)
{
  GListModel *columns = gtk_column_view_get_columns (self->column_view);

  while (g_list_model_get_n_items (columns) > 0)
    {
      g_autoptr(GtkColumnViewColumn) column = g_list_model_get_item (columns, 0);

      gtk_column_view_remove_column (self->column_view, column);
    }
  g_clear_pointer (&self->columns, g_strfreev);
  self->n_columns = 0;
  self->measured = FALSE;
  if (self->first_row != NULL)
    g_signal_handlers_disconnect_by_data (self->first_row, self);
  g_clear_object (&self->first_row);
}

/* After the row number column. */
static void
append_columns (QStoreInspectorDataPage *self,
                const char * const      *names)
{
  self->columns = g_strdupv ((char **) names);
  self->n_columns = g_strv_length ((char **) names);
  for (guint i = 0; i < self->n_columns; i++)
    {
      g_autoptr(GtkColumnViewColumn) column = column_new (names[i], i);

      /* The last one takes what room is left. */
      gtk_column_view_column_set_expand (column, i + 1 == self->n_columns);
      gtk_column_view_append_column (self->column_view, column);
    }
  watch_first_row (self);
}

/* A view's columns, once its model knows them. */
static void
model_column_names_cb (QStoreInspectorDataPage *self)
{
  const char * const *names = qstore_inspector_row_model_get_column_names (self->model);

  if (names != NULL && self->n_columns == 0)
    append_columns (self, names);
}

static void
sort_changed_cb (QStoreInspectorDataPage *self)
{
  GtkSorter *sorter = gtk_column_view_get_sorter (self->column_view);
  GtkOrdering order;
  int column;

  if (self->model == NULL)
    return;
  g_object_set_data (self->probe, PROBE_KEY, NULL);
  order = gtk_sorter_compare (sorter, self->probe, self->model);
  column = GPOINTER_TO_INT (g_object_get_data (self->probe, PROBE_KEY)) - 1;

  if (column < 0 || (guint) column >= self->n_columns || order == GTK_ORDERING_EQUAL)
    qstore_inspector_row_model_set_order (self->model, NULL, FALSE);
  else
    qstore_inspector_row_model_set_order (self->model, self->columns[column], order == GTK_ORDERING_LARGER);
  gtk_adjustment_set_value (gtk_scrolled_window_get_vadjustment (self->rows_scroller), 0);
}

/* A table's columns, from its catalog entry. */
static char **
entry_columns (QStoreCatalogEntry *entry)
{
  GListModel *columns = qstore_catalog_entry_get_columns (entry);
  guint n = columns ? g_list_model_get_n_items (columns) : 0;
  char **names = g_new0 (char *, n + 1);

  for (guint i = 0; i < n; i++)
    {
      g_autoptr(QStoreColumnInfo) info = g_list_model_get_item (columns, i);

      names[i] = g_strdup (qstore_column_info_get_name (info));
    }
  return names;
}

static QStoreCatalogEntry *
lookup (QStoreInspectorDataPage *self,
        QStoreCatalogKeyKind     kind,
        const char              *name)
{
  const char *dot = strchr (name, '.');
  g_autofree char *schema = g_strndup (name, dot - name);

  return qstore_inspector_contents_lookup_entry (self->contents, kind, schema, dot + 1);
}

static void
drop_model (QStoreInspectorDataPage *self)
{
  if (self->model != NULL)
    g_signal_handlers_disconnect_by_data (self->model, self);
  gtk_column_view_set_model (self->column_view, NULL);
  g_clear_object (&self->selection);
  g_clear_object (&self->model);
  clear_columns (self);
  g_clear_pointer (&self->error, g_free);
}

static void
show_rows (QStoreInspectorDataPage *self,
           QStoreCatalogKeyKind     kind,
           const char              *name)
{
  g_autoptr(GtkColumnViewColumn) number = NULL;
  g_autoptr(GError) error = NULL;
  QStoreCatalogEntry *entry;
  const char *search;

  drop_model (self);
  g_free (self->table);
  self->table = g_strdup (name);
  self->kind = kind;
  qstore_inspector_table_chooser_set_shown (self->chooser, name);

  if (name == NULL || self->contents == NULL)
    {
      update_state (self);
      return;
    }

  entry = lookup (self, kind, name);
  g_assert (entry != NULL);

  if (kind == QSTORE_CATALOG_KEY_VIEW)
    self->model = qstore_inspector_row_model_new_for_view (qstore_inspector_contents_get_uri (self->contents),
                                                           qstore_catalog_entry_get_schema (entry),
                                                           qstore_catalog_entry_get_name (entry),
                                                           &error);
  else
    self->model = qstore_inspector_row_model_new (qstore_inspector_contents_get_uri (self->contents),
                                                  qstore_inspector_contents_get_provider (self->contents),
                                                  qstore_catalog_entry_get_schema (entry),
                                                  qstore_catalog_entry_get_name (entry),
                                                  qstore_inspector_contents_get_row_count (self->contents,
                                                                                           qstore_catalog_entry_get_schema (entry),
                                                                                           qstore_catalog_entry_get_name (entry)),
                                                  &error);
  if (self->model == NULL)
    {
      g_autofree char *explained = qstore_inspector_explain_error (error, QSTORE_INSPECTOR_ACTIVITY_ROWS, name);

      self->error = g_steal_pointer (&explained);
      adw_status_page_set_description (self->error_page, self->error);
      gtk_label_set_label (self->error_details, error->message);
      gtk_stack_set_visible_child_name (self->stack, "error");
      update_count (self);
      return;
    }

  g_signal_connect_swapped (self->model, "items-changed", G_CALLBACK (update_state), self);
  g_signal_connect_swapped (self->model, "notify::error", G_CALLBACK (update_state), self);
  g_signal_connect_swapped (self->model, "notify::busy", G_CALLBACK (update_state), self);
  g_signal_connect_swapped (self->model, "notify::column-names", G_CALLBACK (model_column_names_cb), self);
  g_object_bind_property (self->model, "busy", self->spinner, "spinning", G_BINDING_SYNC_CREATE);

  number = column_new ("#", -1);
  gtk_column_view_column_set_resizable (number, FALSE);
  gtk_column_view_append_column (self->column_view, number);

  if (kind != QSTORE_CATALOG_KEY_VIEW)
    {
      g_auto(GStrv) names = entry_columns (entry);

      append_columns (self, (const char * const *) names);
    }

  /* A search typed before choosing this table applies to it too. */
  search = gtk_editable_get_text (GTK_EDITABLE (self->row_search));
  if (gtk_search_bar_get_search_mode (self->search_bar) && search != NULL && *search != '\0')
    qstore_inspector_row_model_set_search (self->model, search,
                                           kind == QSTORE_CATALOG_KEY_VIEW ? NULL
                                                                           : (const char * const *) self->columns);

  self->selection = gtk_multi_selection_new (G_LIST_MODEL (g_object_ref (self->model)));
  gtk_column_view_set_model (self->column_view, GTK_SELECTION_MODEL (self->selection));
  gtk_column_view_sort_by_column (self->column_view, NULL, GTK_SORT_ASCENDING);
  update_state (self);
}

/* Whether a refresh can read the rows shown again, rather than start
 * over: the same table, with the same columns. */
static gboolean
same_shape (QStoreInspectorDataPage *self,
            QStoreCatalogKeyKind     kind,
            const char              *name)
{
  QStoreCatalogEntry *entry;
  g_auto(GStrv) names = NULL;

  if (self->model == NULL || self->table == NULL || self->kind != kind ||
      g_strcmp0 (self->table, name) != 0 || qstore_inspector_row_model_get_error (self->model) != NULL)
    return FALSE;
  if (kind == QSTORE_CATALOG_KEY_VIEW)
    return TRUE;
  if (!(entry = lookup (self, kind, name)))
    return FALSE;
  names = entry_columns (entry);
  return self->columns != NULL && g_strv_equal ((const char * const *) names, (const char * const *) self->columns);
}

/* What the chooser lists at @position. */
static void
show_position (QStoreInspectorDataPage *self,
               int                      position)
{
  QStoreCatalogKeyKind kind;
  const char *name;

  self->selected = position;
  if (position >= 0 && qstore_inspector_table_chooser_locate (self->chooser, position, &kind, &name))
    show_rows (self, kind, name);
  else
    show_rows (self, QSTORE_CATALOG_KEY_TABLE, NULL);
}

static void
chosen_cb (QStoreInspectorDataPage *self,
           guint                    position)
{
  show_position (self, position);
}

/* Searching rows */

static void
row_search_changed_cb (QStoreInspectorDataPage *self)
{
  const char *text = gtk_editable_get_text (GTK_EDITABLE (self->row_search));

  if (self->model == NULL)
    return;
  qstore_inspector_row_model_set_search (self->model, text,
                                         self->kind == QSTORE_CATALOG_KEY_VIEW
                                           ? NULL : (const char * const *) self->columns);
  gtk_adjustment_set_value (gtk_scrolled_window_get_vadjustment (self->rows_scroller), 0);
  update_state (self);
}

static void
search_mode_cb (QStoreInspectorDataPage *self)
{
  if (gtk_search_bar_get_search_mode (self->search_bar))
    gtk_widget_grab_focus (GTK_WIDGET (self->row_search));
  else if (self->model != NULL)
    {
      /* Closing the search shows every row again. */
      qstore_inspector_row_model_set_search (self->model, NULL, NULL);
      update_state (self);
    }
}

/* Copying */

typedef struct
{
  QStoreInspectorDataPage *page;
  QStoreInspectorRowModel *model;
  GPtrArray               *rows;
  int                      column;     /* one column, or -1 for all */
  gboolean                 json;
  gboolean                 as_array;
  guint                    tries;
} Copy;

static void
copy_free (Copy *copy)
{
  g_signal_handlers_disconnect_by_data (copy->model, copy);
  g_object_unref (copy->model);
  g_object_unref (copy->page);
  g_ptr_array_unref (copy->rows);
  g_free (copy);
}

/* Whether every row is read; asks again for those whose page was let go
 * before it was read. */
static gboolean
copy_ready (Copy *copy)
{
  gboolean ready = TRUE;

  for (guint i = 0; i < copy->rows->len; i++)
    if (!qstore_inspector_row_is_loaded (g_ptr_array_index (copy->rows, i)))
      {
        g_autoptr(GObject) again =
          g_list_model_get_item (G_LIST_MODEL (copy->model),
                                 qstore_inspector_row_get_position (g_ptr_array_index (copy->rows, i)));

        ready = FALSE;
      }
  return ready;
}

static void
copy_finish (Copy *copy)
{
  QStoreInspectorDataPage *self = copy->page;
  g_autofree char *text = NULL;
  g_autofree char *message = NULL;

  if (copy->json)
    text = qstore_inspector_rows_to_json (copy->rows, (const char * const *) self->columns, copy->as_array);
  else
    text = qstore_inspector_rows_to_text (copy->rows, copy->column);
  gdk_clipboard_set_text (gtk_widget_get_clipboard (GTK_WIDGET (self)), text);
  self->n_copies++;

  if (copy->column >= 0)
    message = g_strdup (_("Value copied"));
  else
    message = g_strdup_printf (g_dngettext (GETTEXT_PACKAGE, "%'u row copied", "%'u rows copied",
                                            copy->rows->len), copy->rows->len);
  qstore_inspector_toast (GTK_WIDGET (self), message);
}

static void
copy_model_idle_cb (QStoreInspectorRowModel *model,
                    GParamSpec              *pspec,
                    Copy                    *copy)
{
  if (qstore_inspector_row_model_is_busy (model))
    return;
  if (qstore_inspector_row_model_get_error (model) != NULL || copy->page->model != model)
    {
      qstore_inspector_toast (GTK_WIDGET (copy->page), _("The rows could not be read, so nothing was copied"));
      copy_free (copy);
      return;
    }
  if (!copy_ready (copy))
    {
      if (++copy->tries < 4)
        return;
      qstore_inspector_toast (GTK_WIDGET (copy->page), _("The rows could not be read, so nothing was copied"));
      copy_free (copy);
      return;
    }
  copy_finish (copy);
  copy_free (copy);
}

/* Copies the rows at @positions; those not read yet are read first. */
static void
copy_rows (QStoreInspectorDataPage *self,
           GtkBitset               *positions,
           int                      column,
           gboolean                 json,
           gboolean                 as_array)
{
  Copy *copy;
  GtkBitsetIter iter;
  guint position;

  if (self->model == NULL || self->columns == NULL)
    return;
  if (gtk_bitset_is_empty (positions))
    {
      qstore_inspector_toast (GTK_WIDGET (self), _("Select rows to copy them"));
      return;
    }
  if (gtk_bitset_get_size (positions) > MAX_COPY_ROWS)
    {
      g_autofree char *text = g_strdup_printf (_("Select at most %'u rows to copy them"), MAX_COPY_ROWS);

      qstore_inspector_toast (GTK_WIDGET (self), text);
      return;
    }

  copy = g_new0 (Copy, 1);
  copy->page = g_object_ref (self);
  copy->model = g_object_ref (self->model);
  copy->rows = g_ptr_array_new_with_free_func (g_object_unref);
  copy->column = column;
  copy->json = json;
  copy->as_array = as_array;
  for (gboolean more = gtk_bitset_iter_init_first (&iter, positions, &position); more;
       more = gtk_bitset_iter_next (&iter, &position))
    g_ptr_array_add (copy->rows, g_list_model_get_item (G_LIST_MODEL (self->model), position));

  if (!qstore_inspector_row_model_is_busy (self->model) && copy_ready (copy))
    {
      copy_finish (copy);
      copy_free (copy);
      return;
    }
  g_signal_connect (copy->model, "notify::busy", G_CALLBACK (copy_model_idle_cb), copy);
}

static void
copy_selection (QStoreInspectorDataPage *self,
                gboolean                 json)
{
  g_autoptr(GtkBitset) positions = NULL;

  if (self->selection == NULL)
    return;
  positions = gtk_selection_model_get_selection (GTK_SELECTION_MODEL (self->selection));
  copy_rows (self, positions, -1, json, TRUE);
}

static void
copy_action (GtkWidget  *widget,
             const char *action_name,
             GVariant   *parameter)
{
  copy_selection (QSTORE_INSPECTOR_DATA_PAGE (widget), FALSE);
}

static void
copy_json_action (GtkWidget  *widget,
                  const char *action_name,
                  GVariant   *parameter)
{
  copy_selection (QSTORE_INSPECTOR_DATA_PAGE (widget), TRUE);
}

static void
copy_context (QStoreInspectorDataPage *self,
              int                      column,
              gboolean                 json)
{
  g_autoptr(GtkBitset) positions = gtk_bitset_new_range (self->context_position, 1);

  copy_rows (self, positions, column, json, FALSE);
}

static void
copy_cell_action (GtkWidget  *widget,
                  const char *action_name,
                  GVariant   *parameter)
{
  QStoreInspectorDataPage *self = QSTORE_INSPECTOR_DATA_PAGE (widget);

  if (self->context_column >= 0)
    copy_context (self, self->context_column, FALSE);
}

static void
copy_row_action (GtkWidget  *widget,
                 const char *action_name,
                 GVariant   *parameter)
{
  copy_context (QSTORE_INSPECTOR_DATA_PAGE (widget), -1, FALSE);
}

static void
copy_row_json_action (GtkWidget  *widget,
                      const char *action_name,
                      GVariant   *parameter)
{
  copy_context (QSTORE_INSPECTOR_DATA_PAGE (widget), -1, TRUE);
}

/* A row's details */

/**
 * qstore_inspector_data_page_show_row:
 * @self: a #QStoreInspectorDataPage
 * @position: a row's position
 *
 * Shows every value of the row in full, in a window of its own.
 *
 * Returns: (transfer none) (nullable): the window, or %NULL when the row
 *   is not read yet
 */
GtkWindow *
qstore_inspector_data_page_show_row (QStoreInspectorDataPage *self,
                                     guint                    position)
{
  g_autoptr(QStoreInspectorRow) row = NULL;
  GtkWindow *window;

  g_return_val_if_fail (QSTORE_INSPECTOR_IS_DATA_PAGE (self), NULL);

  if (self->model == NULL || self->columns == NULL ||
      !(row = g_list_model_get_item (G_LIST_MODEL (self->model), position)) ||
      !qstore_inspector_row_is_loaded (row))
    return NULL;
  window = qstore_inspector_row_dialog_new (GTK_WINDOW (gtk_widget_get_root (GTK_WIDGET (self))),
                                            self->table, (const char * const *) self->columns, row);
  gtk_window_present (window);
  return window;
}

static void
row_activated_cb (QStoreInspectorDataPage *self,
                  guint                    position)
{
  qstore_inspector_data_page_show_row (self, position);
}

static void
show_row_action (GtkWidget  *widget,
                 const char *action_name,
                 GVariant   *parameter)
{
  QStoreInspectorDataPage *self = QSTORE_INSPECTOR_DATA_PAGE (widget);

  qstore_inspector_data_page_show_row (self, self->context_position);
}

static void
unsort_action (GtkWidget  *widget,
               const char *action_name,
               GVariant   *parameter)
{
  QStoreInspectorDataPage *self = QSTORE_INSPECTOR_DATA_PAGE (widget);

  gtk_column_view_sort_by_column (self->column_view, NULL, GTK_SORT_ASCENDING);
}

static void
search_action (GtkWidget  *widget,
               const char *action_name,
               GVariant   *parameter)
{
  QStoreInspectorDataPage *self = QSTORE_INSPECTOR_DATA_PAGE (widget);

  gtk_toggle_button_set_active (self->search_button, TRUE);
  gtk_widget_grab_focus (GTK_WIDGET (self->row_search));
}

/* The context menu */

/**
 * qstore_inspector_data_page_popup_menu:
 * @self: a #QStoreInspectorDataPage
 * @position: the row it is about
 * @column: the column it is about, -1 for none
 * @x: where, in the page's coordinates
 * @y: where, in the page's coordinates
 *
 * Opens the menu of a right click on a cell: copy its value, its row (as
 * text or JSON), the selected rows; show the row.
 */
void
qstore_inspector_data_page_popup_menu (QStoreInspectorDataPage *self,
                                       guint                    position,
                                       int                      column,
                                       double                   x,
                                       double                   y)
{
  g_return_if_fail (QSTORE_INSPECTOR_IS_DATA_PAGE (self));

  self->context_position = position;
  self->context_column = column;
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "data.copy-cell", column >= 0);
  gtk_popover_set_pointing_to (GTK_POPOVER (self->context_menu),
                               &(GdkRectangle) { (int) x, (int) y, 1, 1 });
  gtk_popover_popup (GTK_POPOVER (self->context_menu));
}

/* The cell under (@x, @y) of the column view: its row and column. */
static gboolean
cell_at (QStoreInspectorDataPage *self,
         double                   x,
         double                   y,
         guint                   *position,
         int                     *column)
{
  GtkWidget *widget = gtk_widget_pick (GTK_WIDGET (self->column_view), x, y, GTK_PICK_DEFAULT);

  /* From what was hit up to a cell's label, which knows its row. */
  for (; widget != NULL && widget != GTK_WIDGET (self->column_view); widget = gtk_widget_get_parent (widget))
    {
      QStoreInspectorRow *row = g_object_get_data (G_OBJECT (widget), ROW_KEY);

      if (row != NULL)
        {
          *position = qstore_inspector_row_get_position (row);
          *column = GPOINTER_TO_INT (g_object_get_data (G_OBJECT (widget), COLUMN_KEY));
          return TRUE;
        }
      /* A cell whose label is under a padding: its child holds it. */
      if (gtk_widget_get_first_child (widget) != NULL &&
          g_object_get_data (G_OBJECT (gtk_widget_get_first_child (widget)), ROW_KEY) != NULL)
        {
          GtkWidget *label = gtk_widget_get_first_child (widget);

          *position = qstore_inspector_row_get_position (g_object_get_data (G_OBJECT (label), ROW_KEY));
          *column = GPOINTER_TO_INT (g_object_get_data (G_OBJECT (label), COLUMN_KEY));
          return TRUE;
        }
    }
  return FALSE;
}

static void
context_at (QStoreInspectorDataPage *self,
            double                   x,
            double                   y)
{
  guint position;
  int column;
  graphene_point_t point;

  if (!cell_at (self, x, y, &position, &column))
    return;
  /* A right click outside the selection selects the row first, as in a
   * file manager. */
  if (!gtk_selection_model_is_selected (GTK_SELECTION_MODEL (self->selection), position))
    gtk_selection_model_select_item (GTK_SELECTION_MODEL (self->selection), position, TRUE);
  if (!gtk_widget_compute_point (GTK_WIDGET (self->column_view), GTK_WIDGET (self),
                                 &GRAPHENE_POINT_INIT (x, y), &point))
    return;
  qstore_inspector_data_page_popup_menu (self, position, column, point.x, point.y);
}

static void
right_click_cb (GtkGestureClick         *gesture,
                int                      n_press,
                double                   x,
                double                   y,
                QStoreInspectorDataPage *self)
{
  context_at (self, x, y);
  gtk_gesture_set_state (GTK_GESTURE (gesture), GTK_EVENT_SEQUENCE_CLAIMED);
}

static void
long_press_cb (GtkGestureLongPress     *gesture,
               double                   x,
               double                   y,
               QStoreInspectorDataPage *self)
{
  context_at (self, x, y);
}

/**
 * qstore_inspector_data_page_select_table:
 * @self: a #QStoreInspectorDataPage
 * @name: a table's, materialized view's or view's `schema.name`
 *
 * Returns: whether it is listed
 */
gboolean
qstore_inspector_data_page_select_table (QStoreInspectorDataPage *self,
                                         const char              *name)
{
  int position;

  g_return_val_if_fail (QSTORE_INSPECTOR_IS_DATA_PAGE (self), FALSE);

  position = qstore_inspector_table_chooser_find (self->chooser, QSTORE_CATALOG_KEY_INVALID, name);
  if (position < 0)
    return FALSE;
  show_position (self, position);
  return TRUE;
}

static void
row_counted_cb (QStoreInspectorDataPage *self,
                const char              *schema,
                const char              *name)
{
  g_autofree char *qualified = qstore_inspector_qualified_name (schema, name);

  /* The table shown had no count: the model takes it. */
  if (self->model != NULL && self->kind != QSTORE_CATALOG_KEY_VIEW &&
      g_ascii_strcasecmp (qualified, self->table) == 0 &&
      !qstore_inspector_row_model_is_counted (self->model))
    qstore_inspector_row_model_reload (self->model,
                                       qstore_inspector_contents_get_row_count (self->contents, schema, name));
}

/**
 * qstore_inspector_data_page_set_contents:
 * @self: a #QStoreInspectorDataPage
 * @contents: (nullable): what was read from the store
 *
 * Lists the tables and views of @contents and shows the rows of the one
 * shown before, read again (where it was scrolled to, with its order,
 * search and selection), or of the first.
 */
void
qstore_inspector_data_page_set_contents (QStoreInspectorDataPage *self,
                                         QStoreInspectorContents *contents)
{
  g_autofree char *keep = g_strdup (self->table);
  QStoreCatalogKeyKind keep_kind = self->kind;
  guint n;

  g_return_if_fail (QSTORE_INSPECTOR_IS_DATA_PAGE (self));

  if (self->contents != NULL)
    g_signal_handlers_disconnect_by_data (self->contents, self);
  g_set_object (&self->contents, contents);
  if (contents != NULL)
    g_signal_connect_swapped (contents, "row-counted", G_CALLBACK (row_counted_cb), self);

  n = qstore_inspector_table_chooser_set_contents (self->chooser, contents);
  if (n == 0 || contents == NULL)
    {
      self->selected = -1;
      show_rows (self, QSTORE_CATALOG_KEY_TABLE, NULL);
      return;
    }

  /* The same table, read again: where it was scrolled to, its order,
   * search and selection stay. */
  if (keep != NULL && same_shape (self, keep_kind, keep))
    {
      self->selected = qstore_inspector_table_chooser_find (self->chooser, keep_kind, keep);
      qstore_inspector_row_model_reload (self->model,
                                         keep_kind == QSTORE_CATALOG_KEY_VIEW ? -1
                                         : qstore_inspector_contents_get_row_count (contents,
                                                                                    qstore_inspector_row_model_get_schema (self->model),
                                                                                    qstore_inspector_row_model_get_table (self->model)));
      update_state (self);
      return;
    }

  if (keep == NULL || !qstore_inspector_data_page_select_table (self, keep))
    show_position (self, 0);
}

const char *
qstore_inspector_data_page_get_table (QStoreInspectorDataPage *self)
{
  g_return_val_if_fail (QSTORE_INSPECTOR_IS_DATA_PAGE (self), NULL);
  return self->table;
}

QStoreInspectorRowModel *
qstore_inspector_data_page_get_model (QStoreInspectorDataPage *self)
{
  g_return_val_if_fail (QSTORE_INSPECTOR_IS_DATA_PAGE (self), NULL);
  return self->model;
}

/* Returns: (transfer none) (nullable): which rows are selected */
GtkSelectionModel *
qstore_inspector_data_page_get_selection (QStoreInspectorDataPage *self)
{
  g_return_val_if_fail (QSTORE_INSPECTOR_IS_DATA_PAGE (self), NULL);
  return GTK_SELECTION_MODEL (self->selection);
}

/* Returns: (transfer none): the tables listed, as `schema.name` strings */
GListModel *
qstore_inspector_data_page_get_tables (QStoreInspectorDataPage *self)
{
  g_return_val_if_fail (QSTORE_INSPECTOR_IS_DATA_PAGE (self), NULL);
  return qstore_inspector_table_chooser_get_tables (self->chooser);
}

/* Returns: (transfer none): the materialized views listed, as `schema.name` strings */
GListModel *
qstore_inspector_data_page_get_materialized_views (QStoreInspectorDataPage *self)
{
  g_return_val_if_fail (QSTORE_INSPECTOR_IS_DATA_PAGE (self), NULL);
  return qstore_inspector_table_chooser_get_materialized_views (self->chooser);
}

/* Returns: (transfer none): the plain views listed, as `schema.name` strings */
GListModel *
qstore_inspector_data_page_get_views (QStoreInspectorDataPage *self)
{
  g_return_val_if_fail (QSTORE_INSPECTOR_IS_DATA_PAGE (self), NULL);
  return qstore_inspector_table_chooser_get_views (self->chooser);
}

/* Returns: (transfer none): what the chooser lists, tables, then
 *   materialized views, then views, as it labels them */
GListModel *
qstore_inspector_data_page_get_labels (QStoreInspectorDataPage *self)
{
  g_return_val_if_fail (QSTORE_INSPECTOR_IS_DATA_PAGE (self), NULL);
  return qstore_inspector_table_chooser_get_labels (self->chooser);
}

/* Returns: (transfer none): what the chooser lists as its search leaves it */
GListModel *
qstore_inspector_data_page_get_chooser_model (QStoreInspectorDataPage *self)
{
  g_return_val_if_fail (QSTORE_INSPECTOR_IS_DATA_PAGE (self), NULL);
  return qstore_inspector_table_chooser_get_found (self->chooser);
}

guint
qstore_inspector_data_page_get_n_columns (QStoreInspectorDataPage *self)
{
  g_return_val_if_fail (QSTORE_INSPECTOR_IS_DATA_PAGE (self), 0);
  return self->n_columns;
}

/* Returns: (nullable): why the rows cannot be shown, in the user's language */
const char *
qstore_inspector_data_page_get_error (QStoreInspectorDataPage *self)
{
  g_return_val_if_fail (QSTORE_INSPECTOR_IS_DATA_PAGE (self), NULL);
  return self->error;
}

/* Returns: "empty", "error", "no-rows", "no-matches" or "rows" */
const char *
qstore_inspector_data_page_get_state (QStoreInspectorDataPage *self)
{
  g_return_val_if_fail (QSTORE_INSPECTOR_IS_DATA_PAGE (self), NULL);
  return gtk_stack_get_visible_child_name (self->stack);
}

/* How many times rows or a value went to the clipboard. */
guint
qstore_inspector_data_page_get_n_copies (QStoreInspectorDataPage *self)
{
  g_return_val_if_fail (QSTORE_INSPECTOR_IS_DATA_PAGE (self), 0);
  return self->n_copies;
}

/* Returns: (transfer none): a widget of the page: "column-view", "count",
 *   "table-button", "table-search", "table-popover", "row-search",
 *   "search-bar" or "context-menu" */
GtkWidget *
qstore_inspector_data_page_get_part (QStoreInspectorDataPage *self,
                                     const char              *part)
{
  g_return_val_if_fail (QSTORE_INSPECTOR_IS_DATA_PAGE (self), NULL);

  if (g_str_equal (part, "column-view"))
    return GTK_WIDGET (self->column_view);
  if (g_str_equal (part, "count"))
    return GTK_WIDGET (self->count_label);
  if (g_str_equal (part, "table-button"))
    return qstore_inspector_table_chooser_get_part (self->chooser, "button");
  if (g_str_equal (part, "table-search"))
    return qstore_inspector_table_chooser_get_part (self->chooser, "search");
  if (g_str_equal (part, "table-popover"))
    return qstore_inspector_table_chooser_get_part (self->chooser, "popover");
  if (g_str_equal (part, "row-search"))
    return GTK_WIDGET (self->row_search);
  if (g_str_equal (part, "search-bar"))
    return GTK_WIDGET (self->search_bar);
  if (g_str_equal (part, "context-menu"))
    return self->context_menu;
  g_return_val_if_reached (NULL);
}

/* GObject */

static void
qstore_inspector_data_page_dispose (GObject *object)
{
  QStoreInspectorDataPage *self = QSTORE_INSPECTOR_DATA_PAGE (object);

  drop_model (self);
  if (self->contents != NULL)
    g_signal_handlers_disconnect_by_data (self->contents, self);
  g_clear_object (&self->contents);
  g_clear_pointer (&self->context_menu, gtk_widget_unparent);
  g_clear_object (&self->probe);

  G_OBJECT_CLASS (qstore_inspector_data_page_parent_class)->dispose (object);
}

static void
qstore_inspector_data_page_finalize (GObject *object)
{
  QStoreInspectorDataPage *self = QSTORE_INSPECTOR_DATA_PAGE (object);

  g_free (self->table);
  g_free (self->error);
  g_strfreev (self->columns);

  G_OBJECT_CLASS (qstore_inspector_data_page_parent_class)->finalize (object);
}

/* The context menu is the page's child too: it is placed here. */
static void
qstore_inspector_data_page_size_allocate (GtkWidget *widget,
                                          int        width,
                                          int        height,
                                          int        baseline)
{
  QStoreInspectorDataPage *self = QSTORE_INSPECTOR_DATA_PAGE (widget);

  GTK_WIDGET_CLASS (qstore_inspector_data_page_parent_class)->size_allocate (widget, width, height, baseline);
  if (self->context_menu != NULL)
    gtk_popover_present (GTK_POPOVER (self->context_menu));
}

static void
qstore_inspector_data_page_class_init (QStoreInspectorDataPageClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = qstore_inspector_data_page_dispose;
  object_class->finalize = qstore_inspector_data_page_finalize;
  widget_class->size_allocate = qstore_inspector_data_page_size_allocate;

  gtk_widget_class_set_template_from_resource (widget_class, "/org/qstore/Inspector/qstore-inspector-data-page.ui");
  gtk_widget_class_bind_template_child (widget_class, QStoreInspectorDataPage, chooser);
  gtk_widget_class_bind_template_child (widget_class, QStoreInspectorDataPage, count_label);
  gtk_widget_class_bind_template_child (widget_class, QStoreInspectorDataPage, spinner);
  gtk_widget_class_bind_template_child (widget_class, QStoreInspectorDataPage, search_button);
  gtk_widget_class_bind_template_child (widget_class, QStoreInspectorDataPage, search_bar);
  gtk_widget_class_bind_template_child (widget_class, QStoreInspectorDataPage, row_search);
  gtk_widget_class_bind_template_child (widget_class, QStoreInspectorDataPage, stack);
  gtk_widget_class_bind_template_child (widget_class, QStoreInspectorDataPage, error_page);
  gtk_widget_class_bind_template_child (widget_class, QStoreInspectorDataPage, error_details);
  gtk_widget_class_bind_template_child (widget_class, QStoreInspectorDataPage, no_rows_page);
  gtk_widget_class_bind_template_child (widget_class, QStoreInspectorDataPage, no_matches_page);
  gtk_widget_class_bind_template_child (widget_class, QStoreInspectorDataPage, rows_scroller);
  gtk_widget_class_bind_template_child (widget_class, QStoreInspectorDataPage, column_view);
  gtk_widget_class_bind_template_child (widget_class, QStoreInspectorDataPage, row_menu);
  gtk_widget_class_bind_template_callback (widget_class, chosen_cb);
  gtk_widget_class_bind_template_callback (widget_class, row_search_changed_cb);
  gtk_widget_class_bind_template_callback (widget_class, search_mode_cb);
  gtk_widget_class_bind_template_callback (widget_class, row_activated_cb);

  gtk_widget_class_install_action (widget_class, "data.copy", NULL, copy_action);
  gtk_widget_class_install_action (widget_class, "data.copy-json", NULL, copy_json_action);
  gtk_widget_class_install_action (widget_class, "data.copy-cell", NULL, copy_cell_action);
  gtk_widget_class_install_action (widget_class, "data.copy-row", NULL, copy_row_action);
  gtk_widget_class_install_action (widget_class, "data.copy-row-json", NULL, copy_row_json_action);
  gtk_widget_class_install_action (widget_class, "data.show-row", NULL, show_row_action);
  gtk_widget_class_install_action (widget_class, "data.unsort", NULL, unsort_action);
  gtk_widget_class_install_action (widget_class, "data.search", NULL, search_action);

  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_c, GDK_CONTROL_MASK, "data.copy", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_c, GDK_CONTROL_MASK | GDK_SHIFT_MASK,
                                       "data.copy-json", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_f, GDK_CONTROL_MASK, "data.search", NULL);
}

static void
qstore_inspector_data_page_init (QStoreInspectorDataPage *self)
{
  GtkGesture *click;
  GtkGesture *long_press;

  g_type_ensure (QSTORE_INSPECTOR_TYPE_TABLE_CHOOSER);
  gtk_widget_init_template (GTK_WIDGET (self));

  self->selected = -1;
  self->probe = g_object_new (G_TYPE_OBJECT, NULL);

  /* Typing on the page starts a search of its rows. */
  gtk_search_bar_set_key_capture_widget (self->search_bar, GTK_WIDGET (self));
  gtk_search_bar_connect_entry (self->search_bar, GTK_EDITABLE (self->row_search));

  g_signal_connect_swapped (gtk_column_view_get_sorter (self->column_view), "changed",
                            G_CALLBACK (sort_changed_cb), self);

  self->context_menu = gtk_popover_menu_new_from_model (self->row_menu);
  gtk_widget_set_parent (self->context_menu, GTK_WIDGET (self));
  gtk_popover_set_has_arrow (GTK_POPOVER (self->context_menu), FALSE);
  gtk_widget_set_halign (self->context_menu, GTK_ALIGN_START);

  click = gtk_gesture_click_new ();
  gtk_gesture_single_set_button (GTK_GESTURE_SINGLE (click), GDK_BUTTON_SECONDARY);
  g_signal_connect (click, "pressed", G_CALLBACK (right_click_cb), self);
  gtk_widget_add_controller (GTK_WIDGET (self->column_view), GTK_EVENT_CONTROLLER (click));
  long_press = gtk_gesture_long_press_new ();
  gtk_gesture_single_set_touch_only (GTK_GESTURE_SINGLE (long_press), TRUE);
  g_signal_connect (long_press, "pressed", G_CALLBACK (long_press_cb), self);
  gtk_widget_add_controller (GTK_WIDGET (self->column_view), GTK_EVENT_CONTROLLER (long_press));

  gtk_stack_set_visible_child_name (self->stack, "empty");
}
