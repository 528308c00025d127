/* qstore-inspector-data-page.c: the rows of a table or view
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <glib/gi18n.h>

#include "qstore-inspector-data-page.h"

/* A column view over QStoreInspectorRowModel: rows arrive a page at a
 * time from a worker thread, and each cell updates itself when its row
 * is filled in. A table's columns follow its catalog entry; a view's are
 * known only from SQL, and come from its model when its query is
 * prepared. The drop-down lists tables, then materialized views, then
 * plain views, labelled as such. A materialized view's rows are those of
 * the table holding them, read as a table's; that table is part of the
 * view and is not listed on its own. */

struct _QStoreInspectorDataPage
{
  AdwBin                   parent_instance;

  QStoreInspectorContents *contents;
  QStoreInspectorRowModel *model;
  GtkStringList           *labels;      /* the drop-down's, group after group */
  GtkStringList           *tables;      /* `schema.name` */
  GtkStringList           *mviews;      /* `schema.name` */
  GtkStringList           *views;       /* `schema.name` */
  char                    *table;       /* the table or view shown */
  char                    *error;
  guint                    n_columns;
  gboolean                 updating;

  GtkDropDown             *table_dropdown;
  GtkLabel                *count_label;
  GtkSpinner              *spinner;
  GtkStack                *stack;
  AdwStatusPage           *error_page;
  GtkColumnView           *column_view;
};

G_DEFINE_FINAL_TYPE (QStoreInspectorDataPage, qstore_inspector_data_page, ADW_TYPE_BIN)

#define COLUMN_KEY "qstore-inspector-column"
#define HANDLER_KEY "qstore-inspector-handler"
#define ROW_KEY "qstore-inspector-row"

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
  gtk_label_set_max_width_chars (GTK_LABEL (label), 48);
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
  return view_column;
}

/* Tables and views */

static void
update_count (QStoreInspectorDataPage *self)
{
  g_autofree char *text = NULL;
  guint n;

  if (self->model == NULL)
    {
      gtk_label_set_label (self->count_label, "");
      return;
    }
  n = g_list_model_get_n_items (G_LIST_MODEL (self->model));
  text = g_strdup_printf (g_dngettext (GETTEXT_PACKAGE, "%'u row", "%'u rows", n), n);
  gtk_label_set_label (self->count_label, text);
}

static void
model_error_cb (QStoreInspectorDataPage *self)
{
  const GError *error = qstore_inspector_row_model_get_error (self->model);

  if (error == NULL)
    return;
  g_free (self->error);
  self->error = g_strdup (error->message);
  adw_status_page_set_description (self->error_page, error->message);
  gtk_stack_set_visible_child_name (self->stack, "error");
}

static void
clear_columns (QStoreInspectorDataPage *self)
{
  GListModel *columns = gtk_column_view_get_columns (self->column_view);

  while (g_list_model_get_n_items (columns) > 0)
    {
      g_autoptr(GtkColumnViewColumn) column = g_list_model_get_item (columns, 0);

      gtk_column_view_remove_column (self->column_view, column);
    }
}

/* After the row number column. */
static void
append_columns (QStoreInspectorDataPage *self,
                const char * const      *names)
{
  self->n_columns = g_strv_length ((char **) names);
  for (guint i = 0; i < self->n_columns; i++)
    {
      g_autoptr(GtkColumnViewColumn) column = column_new (names[i], i);

      /* Long text must not make a column wider than a screen. */
      gtk_column_view_column_set_expand (column, i + 1 == self->n_columns);
      gtk_column_view_append_column (self->column_view, column);
    }
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
show_rows (QStoreInspectorDataPage *self,
           QStoreCatalogKeyKind     kind,
           const char              *name)
{
  g_autoptr(GtkColumnViewColumn) number = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GtkNoSelection) selection = NULL;
  QStoreCatalogEntry *entry;
  const char *dot;
  g_autofree char *schema = NULL;

  if (self->model != NULL)
    g_signal_handlers_disconnect_by_data (self->model, self);
  g_clear_object (&self->model);
  g_clear_pointer (&self->error, g_free);
  gtk_column_view_set_model (self->column_view, NULL);
  clear_columns (self);
  self->n_columns = 0;
  g_free (self->table);
  self->table = g_strdup (name);

  if (name == NULL || self->contents == NULL)
    {
      gtk_stack_set_visible_child_name (self->stack, "empty");
      update_count (self);
      return;
    }

  dot = strchr (name, '.');
  schema = g_strndup (name, dot - name);
  entry = qstore_inspector_contents_lookup_entry (self->contents, kind, schema, dot + 1);
  g_assert (entry != NULL);

  if (kind == QSTORE_CATALOG_KEY_VIEW)
    self->model = qstore_inspector_row_model_new_for_view (qstore_inspector_contents_get_uri (self->contents),
                                                           qstore_catalog_entry_get_schema (entry),
                                                           qstore_catalog_entry_get_name (entry),
                                                           &error);
  else
    self->model = qstore_inspector_row_model_new (qstore_inspector_contents_get_provider (self->contents),
                                                  qstore_catalog_entry_get_schema (entry),
                                                  qstore_catalog_entry_get_name (entry),
                                                  qstore_inspector_contents_get_row_count (self->contents,
                                                                                           schema, dot + 1),
                                                  &error);
  if (self->model == NULL)
    {
      self->error = g_strdup (error->message);
      adw_status_page_set_description (self->error_page, error->message);
      gtk_stack_set_visible_child_name (self->stack, "error");
      update_count (self);
      return;
    }

  g_signal_connect_swapped (self->model, "items-changed", G_CALLBACK (update_count), self);
  g_signal_connect_swapped (self->model, "notify::error", G_CALLBACK (model_error_cb), self);
  g_signal_connect_swapped (self->model, "notify::column-names", G_CALLBACK (model_column_names_cb), self);
  g_object_bind_property (self->model, "busy", self->spinner, "spinning", G_BINDING_SYNC_CREATE);

  number = column_new ("#", -1);
  gtk_column_view_column_set_resizable (number, FALSE);
  gtk_column_view_append_column (self->column_view, number);

  if (kind != QSTORE_CATALOG_KEY_VIEW)
    {
      GListModel *columns = qstore_catalog_entry_get_columns (entry);
      guint n = columns ? g_list_model_get_n_items (columns) : 0;
      g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func (g_free);

      for (guint i = 0; i < n; i++)
        {
          g_autoptr(QStoreColumnInfo) info = g_list_model_get_item (columns, i);

          g_ptr_array_add (names, g_strdup (qstore_column_info_get_name (info)));
        }
      g_ptr_array_add (names, NULL);
      append_columns (self, (const char * const *) names->pdata);
    }

  selection = gtk_no_selection_new (G_LIST_MODEL (g_object_ref (self->model)));
  gtk_column_view_set_model (self->column_view, GTK_SELECTION_MODEL (selection));
  gtk_stack_set_visible_child_name (self->stack, "rows");
  update_count (self);
}

/* The drop-down's groups, in order. */
static const QStoreCatalogKeyKind group_kinds[] = {
  QSTORE_CATALOG_KEY_TABLE,
  QSTORE_CATALOG_KEY_MATERIALIZED_VIEW,
  QSTORE_CATALOG_KEY_VIEW,
};

static GtkStringList *
group_list (QStoreInspectorDataPage *self,
            QStoreCatalogKeyKind     kind)
{
  switch (kind)
    {
    case QSTORE_CATALOG_KEY_MATERIALIZED_VIEW:
      return self->mviews;
    case QSTORE_CATALOG_KEY_VIEW:
      return self->views;
    case QSTORE_CATALOG_KEY_TABLE:
    default:
      return self->tables;
    }
}

/* What the drop-down lists at @position. */
static gboolean
locate (QStoreInspectorDataPage  *self,
        guint                     position,
        QStoreCatalogKeyKind     *kind,
        const char              **name)
{
  for (guint g = 0; g < G_N_ELEMENTS (group_kinds); g++)
    {
      GtkStringList *list = group_list (self, group_kinds[g]);
      guint n = g_list_model_get_n_items (G_LIST_MODEL (list));

      if (position < n)
        {
          *kind = group_kinds[g];
          *name = gtk_string_list_get_string (list, position);
          return TRUE;
        }
      position -= n;
    }
  return FALSE;
}

static void
show_position (QStoreInspectorDataPage *self,
               guint                    position)
{
  QStoreCatalogKeyKind kind;
  const char *name;

  if (position != GTK_INVALID_LIST_POSITION && locate (self, position, &kind, &name))
    show_rows (self, kind, name);
  else
    show_rows (self, QSTORE_CATALOG_KEY_TABLE, NULL);
}

static void
table_selected_cb (QStoreInspectorDataPage *self)
{
  if (self->updating)
    return;
  show_position (self, gtk_drop_down_get_selected (self->table_dropdown));
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
  QStoreCatalogKeyKind kind;
  const char *candidate;

  g_return_val_if_fail (QSTORE_INSPECTOR_IS_DATA_PAGE (self), FALSE);

  for (guint i = 0; locate (self, i, &kind, &candidate); i++)
    {
      if (g_ascii_strcasecmp (candidate, name) != 0)
        continue;
      if (gtk_drop_down_get_selected (self->table_dropdown) == i)
        show_position (self, i);
      else
        gtk_drop_down_set_selected (self->table_dropdown, i);
      return TRUE;
    }
  return FALSE;
}

static int
compare_names (gconstpointer a,
               gconstpointer b)
{
  return g_utf8_collate (*(const char * const *) a, *(const char * const *) b);
}

static void
set_strings (GtkStringList *list,
             GPtrArray     *strings)
{
  g_ptr_array_add (strings, NULL);
  gtk_string_list_splice (list, 0, g_list_model_get_n_items (G_LIST_MODEL (list)),
                          (const char * const *) strings->pdata);
  g_ptr_array_remove_index (strings, strings->len - 1);
}

/**
 * qstore_inspector_data_page_set_contents:
 * @self: a #QStoreInspectorDataPage
 * @contents: (nullable): what was read from the store
 *
 * Lists the tables and views of @contents and shows the rows of the one
 * shown before, read again, or of the first.
 */
void
qstore_inspector_data_page_set_contents (QStoreInspectorDataPage *self,
                                         QStoreInspectorContents *contents)
{
  g_autofree char *keep = g_strdup (self->table);
  g_autoptr(GPtrArray) tables = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GPtrArray) mviews = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GPtrArray) views = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GPtrArray) labels = g_ptr_array_new_with_free_func (g_free);
  GListModel *entries;

  g_return_if_fail (QSTORE_INSPECTOR_IS_DATA_PAGE (self));

  g_set_object (&self->contents, contents);

  if (contents != NULL)
    {
      entries = qstore_inspector_contents_get_entries (contents);
      for (guint i = 0; i < g_list_model_get_n_items (entries); i++)
        {
          g_autoptr(QStoreCatalogEntry) entry = g_list_model_get_item (entries, i);
          QStoreCatalogKeyKind kind = qstore_catalog_entry_get_kind (entry);
          char *name;

          if (qstore_catalog_entry_get_error (entry) != NULL ||
              qstore_catalog_entry_is_materialized_view_contents (entry))
            continue;
          /* A materialized view whose rows are not stored has none to show. */
          if (kind == QSTORE_CATALOG_KEY_MATERIALIZED_VIEW &&
              g_list_model_get_n_items (qstore_catalog_entry_get_columns (entry)) == 0)
            continue;

          name = g_strconcat (qstore_catalog_entry_get_schema (entry), ".",
                              qstore_catalog_entry_get_name (entry), NULL);
          if (kind == QSTORE_CATALOG_KEY_TABLE)
            g_ptr_array_add (tables, name);
          else if (kind == QSTORE_CATALOG_KEY_MATERIALIZED_VIEW)
            g_ptr_array_add (mviews, name);
          else if (kind == QSTORE_CATALOG_KEY_VIEW)
            g_ptr_array_add (views, name);
          else
            g_free (name);
        }
    }
  g_ptr_array_sort (tables, compare_names);
  g_ptr_array_sort (mviews, compare_names);
  g_ptr_array_sort (views, compare_names);

  for (guint i = 0; i < tables->len; i++)
    g_ptr_array_add (labels, g_strdup (g_ptr_array_index (tables, i)));
  for (guint i = 0; i < mviews->len; i++)
    {
      const char *view = g_ptr_array_index (mviews, i);

      /* Translators: a materialized view in the drop-down of tables whose
       * rows can be shown; %s is its schema.name, such as “main.big_orders” */
      g_ptr_array_add (labels, g_strdup_printf (_("%s (materialized view)"), view));
    }
  for (guint i = 0; i < views->len; i++)
    {
      const char *view = g_ptr_array_index (views, i);

      /* Translators: a view in the drop-down of tables whose rows can be
       * shown; %s is its schema.name, such as “main.order_totals” */
      g_ptr_array_add (labels, g_strdup_printf (_("%s (view)"), view));
    }

  self->updating = TRUE;
  set_strings (self->tables, tables);
  set_strings (self->mviews, mviews);
  set_strings (self->views, views);
  set_strings (self->labels, labels);
  self->updating = FALSE;

  if (labels->len == 0)
    {
      gtk_drop_down_set_selected (self->table_dropdown, GTK_INVALID_LIST_POSITION);
      show_rows (self, QSTORE_CATALOG_KEY_TABLE, NULL);
      return;
    }

  if (keep == NULL || !qstore_inspector_data_page_select_table (self, keep))
    {
      self->updating = TRUE;
      gtk_drop_down_set_selected (self->table_dropdown, 0);
      self->updating = FALSE;
      show_position (self, 0);
    }
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

/* Returns: (transfer none): the tables listed, as `schema.name` strings */
GListModel *
qstore_inspector_data_page_get_tables (QStoreInspectorDataPage *self)
{
  g_return_val_if_fail (QSTORE_INSPECTOR_IS_DATA_PAGE (self), NULL);
  return G_LIST_MODEL (self->tables);
}

/* Returns: (transfer none): the materialized views listed, as `schema.name` strings */
GListModel *
qstore_inspector_data_page_get_materialized_views (QStoreInspectorDataPage *self)
{
  g_return_val_if_fail (QSTORE_INSPECTOR_IS_DATA_PAGE (self), NULL);
  return G_LIST_MODEL (self->mviews);
}

/* Returns: (transfer none): the plain views listed, as `schema.name` strings */
GListModel *
qstore_inspector_data_page_get_views (QStoreInspectorDataPage *self)
{
  g_return_val_if_fail (QSTORE_INSPECTOR_IS_DATA_PAGE (self), NULL);
  return G_LIST_MODEL (self->views);
}

/* Returns: (transfer none): what the drop-down lists, tables, then
 *   materialized views, then views, as it labels them */
GListModel *
qstore_inspector_data_page_get_labels (QStoreInspectorDataPage *self)
{
  g_return_val_if_fail (QSTORE_INSPECTOR_IS_DATA_PAGE (self), NULL);
  return G_LIST_MODEL (self->labels);
}

guint
qstore_inspector_data_page_get_n_columns (QStoreInspectorDataPage *self)
{
  g_return_val_if_fail (QSTORE_INSPECTOR_IS_DATA_PAGE (self), 0);
  return self->n_columns;
}

const char *
qstore_inspector_data_page_get_error (QStoreInspectorDataPage *self)
{
  g_return_val_if_fail (QSTORE_INSPECTOR_IS_DATA_PAGE (self), NULL);
  return self->error;
}

/* GObject */

static void
qstore_inspector_data_page_dispose (GObject *object)
{
  QStoreInspectorDataPage *self = QSTORE_INSPECTOR_DATA_PAGE (object);

  if (self->model != NULL)
    g_signal_handlers_disconnect_by_data (self->model, self);
  g_clear_object (&self->model);
  g_clear_object (&self->contents);
  g_clear_object (&self->labels);
  g_clear_object (&self->tables);
  g_clear_object (&self->mviews);
  g_clear_object (&self->views);

  G_OBJECT_CLASS (qstore_inspector_data_page_parent_class)->dispose (object);
}

static void
qstore_inspector_data_page_finalize (GObject *object)
{
  QStoreInspectorDataPage *self = QSTORE_INSPECTOR_DATA_PAGE (object);

  g_free (self->table);
  g_free (self->error);

  G_OBJECT_CLASS (qstore_inspector_data_page_parent_class)->finalize (object);
}

static void
qstore_inspector_data_page_class_init (QStoreInspectorDataPageClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = qstore_inspector_data_page_dispose;
  object_class->finalize = qstore_inspector_data_page_finalize;

  gtk_widget_class_set_template_from_resource (widget_class, "/org/qstore/Inspector/qstore-inspector-data-page.ui");
  gtk_widget_class_bind_template_child (widget_class, QStoreInspectorDataPage, table_dropdown);
  gtk_widget_class_bind_template_child (widget_class, QStoreInspectorDataPage, count_label);
  gtk_widget_class_bind_template_child (widget_class, QStoreInspectorDataPage, spinner);
  gtk_widget_class_bind_template_child (widget_class, QStoreInspectorDataPage, stack);
  gtk_widget_class_bind_template_child (widget_class, QStoreInspectorDataPage, error_page);
  gtk_widget_class_bind_template_child (widget_class, QStoreInspectorDataPage, column_view);
  gtk_widget_class_bind_template_callback (widget_class, table_selected_cb);
}

static void
qstore_inspector_data_page_init (QStoreInspectorDataPage *self)
{
  g_autoptr(GtkExpression) expression = NULL;

  gtk_widget_init_template (GTK_WIDGET (self));

  self->labels = gtk_string_list_new (NULL);
  self->tables = gtk_string_list_new (NULL);
  self->mviews = gtk_string_list_new (NULL);
  self->views = gtk_string_list_new (NULL);
  expression = gtk_property_expression_new (GTK_TYPE_STRING_OBJECT, NULL, "string");
  gtk_drop_down_set_expression (self->table_dropdown, expression);
  self->updating = TRUE;
  gtk_drop_down_set_model (self->table_dropdown, G_LIST_MODEL (self->labels));
  self->updating = FALSE;
  gtk_stack_set_visible_child_name (self->stack, "empty");
}
