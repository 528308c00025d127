/* qstore-inspector-table-chooser.c: which table or view the data page shows
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <glib/gi18n.h>

#include "qstore-inspector-names.h"
#include "qstore-inspector-table-chooser.h"

/* A button that names what the data page shows, and a popover listing
 * tables, then materialized views, then plain views, labelled as such,
 * each group in the order people count. Its search finds a name by any
 * part of it, whatever the case, and takes the keys typed as it opens:
 * the list passes them on. Enter takes the first match.
 *
 * A materialized view's rows are those of the table holding them, read
 * as a table's; that table is part of the view and is not listed on its
 * own, nor is a materialized view whose rows are not stored. */

struct _QStoreInspectorTableChooser
{
  AdwBin              parent_instance;

  GtkStringList      *labels;      /* group after group */
  GtkStringList      *tables;      /* `schema.name` */
  GtkStringList      *mviews;      /* `schema.name` */
  GtkStringList      *views;       /* `schema.name` */
  GtkFilterListModel *found;       /* labels, as the search leaves them */

  GtkMenuButton      *button;
  GtkLabel           *label;
  GtkPopover         *popover;
  GtkSearchEntry     *search;
  GtkListView        *list;
};

enum
{
  CHOSEN,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

G_DEFINE_FINAL_TYPE (QStoreInspectorTableChooser, qstore_inspector_table_chooser, ADW_TYPE_BIN)

static const QStoreCatalogKeyKind group_kinds[] = {
  QSTORE_CATALOG_KEY_TABLE,
  QSTORE_CATALOG_KEY_MATERIALIZED_VIEW,
  QSTORE_CATALOG_KEY_VIEW,
};

static GtkStringList *
group_list (QStoreInspectorTableChooser *self,
            QStoreCatalogKeyKind         kind)
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

/**
 * qstore_inspector_table_chooser_locate:
 * @self: a #QStoreInspectorTableChooser
 * @position: a position in the list, all groups together
 * @kind: (out): the kind listed there
 * @name: (out) (transfer none): its `schema.name`
 *
 * Returns: whether the list is that long
 */
gboolean
qstore_inspector_table_chooser_locate (QStoreInspectorTableChooser  *self,
                                       guint                         position,
                                       QStoreCatalogKeyKind         *kind,
                                       const char                  **name)
{
  g_return_val_if_fail (QSTORE_INSPECTOR_IS_TABLE_CHOOSER (self), FALSE);

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

/* Returns: the position of @name (of @kind, or of any kind for
 * %QSTORE_CATALOG_KEY_INVALID), -1 when it is not listed */
int
qstore_inspector_table_chooser_find (QStoreInspectorTableChooser *self,
                                     QStoreCatalogKeyKind         kind,
                                     const char                  *name)
{
  QStoreCatalogKeyKind candidate_kind;
  const char *candidate;

  g_return_val_if_fail (QSTORE_INSPECTOR_IS_TABLE_CHOOSER (self), -1);

  for (guint i = 0; qstore_inspector_table_chooser_locate (self, i, &candidate_kind, &candidate); i++)
    if ((kind == QSTORE_CATALOG_KEY_INVALID || kind == candidate_kind) &&
        g_ascii_strcasecmp (candidate, name) == 0)
      return (int) i;
  return -1;
}

/* Shows @name on the button, or that there is nothing to show. */
void
qstore_inspector_table_chooser_set_shown (QStoreInspectorTableChooser *self,
                                          const char                  *name)
{
  g_return_if_fail (QSTORE_INSPECTOR_IS_TABLE_CHOOSER (self));

  gtk_label_set_label (self->label, name ? name : _("No Tables"));
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->label), name);
}

static void
popover_show_cb (QStoreInspectorTableChooser *self)
{
  gtk_editable_set_text (GTK_EDITABLE (self->search), "");
  gtk_widget_grab_focus (GTK_WIDGET (self->search));
}

static void
search_changed_cb (QStoreInspectorTableChooser *self)
{
  GtkStringFilter *filter = GTK_STRING_FILTER (gtk_filter_list_model_get_filter (self->found));

  gtk_string_filter_set_search (filter, gtk_editable_get_text (GTK_EDITABLE (self->search)));
}

/* The @position-th of what the search left is chosen. */
static void
choose (QStoreInspectorTableChooser *self,
        guint                        position)
{
  g_autoptr(GtkStringObject) item = g_list_model_get_item (G_LIST_MODEL (self->found), position);
  const char *label;

  if (item == NULL)
    return;
  label = gtk_string_object_get_string (item);
  gtk_popover_popdown (self->popover);
  for (guint i = 0; i < g_list_model_get_n_items (G_LIST_MODEL (self->labels)); i++)
    if (g_str_equal (gtk_string_list_get_string (self->labels, i), label))
      {
        g_signal_emit (self, signals[CHOSEN], 0, i);
        break;
      }
}

static void
list_activate_cb (QStoreInspectorTableChooser *self,
                  guint                        position)
{
  choose (self, position);
}

/* Enter takes the first match. */
static void
search_activate_cb (QStoreInspectorTableChooser *self)
{
  choose (self, 0);
}

static void
search_stop_cb (QStoreInspectorTableChooser *self)
{
  gtk_popover_popdown (self->popover);
}

static void
label_setup_cb (GtkSignalListItemFactory *factory,
                GtkListItem              *item,
                gpointer                  user_data)
{
  GtkWidget *label = gtk_label_new (NULL);

  gtk_label_set_xalign (GTK_LABEL (label), 0);
  gtk_label_set_ellipsize (GTK_LABEL (label), PANGO_ELLIPSIZE_MIDDLE);
  gtk_label_set_max_width_chars (GTK_LABEL (label), 40);
  gtk_label_set_width_chars (GTK_LABEL (label), 20);
  gtk_list_item_set_child (item, label);
}

static void
label_bind_cb (GtkSignalListItemFactory *factory,
               GtkListItem              *item,
               gpointer                  user_data)
{
  GtkWidget *label = gtk_list_item_get_child (item);
  const char *text = gtk_string_object_get_string (gtk_list_item_get_item (item));

  gtk_label_set_label (GTK_LABEL (label), text);
  gtk_widget_set_tooltip_text (label, text);
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

static int
compare_names (gconstpointer a,
               gconstpointer b)
{
  return qstore_inspector_natural_compare (*(const char * const *) a, *(const char * const *) b);
}

/**
 * qstore_inspector_table_chooser_set_contents:
 * @self: a #QStoreInspectorTableChooser
 * @contents: (nullable): what was read from a store
 *
 * Lists the tables and views of @contents whose rows can be shown.
 *
 * Returns: how many there are
 */
guint
qstore_inspector_table_chooser_set_contents (QStoreInspectorTableChooser *self,
                                             QStoreInspectorContents     *contents)
{
  g_autoptr(GPtrArray) tables = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GPtrArray) mviews = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GPtrArray) views = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GPtrArray) labels = g_ptr_array_new_with_free_func (g_free);
  GListModel *entries = contents ? qstore_inspector_contents_get_entries (contents) : NULL;

  g_return_val_if_fail (QSTORE_INSPECTOR_IS_TABLE_CHOOSER (self), 0);

  for (guint i = 0; entries != NULL && i < g_list_model_get_n_items (entries); i++)
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

      name = qstore_inspector_qualified_name (qstore_catalog_entry_get_schema (entry),
                                              qstore_catalog_entry_get_name (entry));
      if (kind == QSTORE_CATALOG_KEY_TABLE)
        g_ptr_array_add (tables, name);
      else if (kind == QSTORE_CATALOG_KEY_MATERIALIZED_VIEW)
        g_ptr_array_add (mviews, name);
      else if (kind == QSTORE_CATALOG_KEY_VIEW)
        g_ptr_array_add (views, name);
      else
        g_free (name);
    }
  g_ptr_array_sort (tables, compare_names);
  g_ptr_array_sort (mviews, compare_names);
  g_ptr_array_sort (views, compare_names);

  for (guint i = 0; i < tables->len; i++)
    g_ptr_array_add (labels, g_strdup (g_ptr_array_index (tables, i)));
  for (guint i = 0; i < mviews->len; i++)
    /* Translators: a materialized view in the list of tables whose rows
     * can be shown; %s is its schema.name, such as “main.big_orders” */
    g_ptr_array_add (labels, g_strdup_printf (_("%s (materialized view)"),
                                              (char *) g_ptr_array_index (mviews, i)));
  for (guint i = 0; i < views->len; i++)
    /* Translators: a view in the list of tables whose rows can be
     * shown; %s is its schema.name, such as “main.order_totals” */
    g_ptr_array_add (labels, g_strdup_printf (_("%s (view)"), (char *) g_ptr_array_index (views, i)));

  set_strings (self->tables, tables);
  set_strings (self->mviews, mviews);
  set_strings (self->views, views);
  set_strings (self->labels, labels);
  gtk_widget_set_sensitive (GTK_WIDGET (self->button), labels->len > 0);
  return labels->len;
}

/* Returns: (transfer none): the tables listed, as `schema.name` strings */
GListModel *
qstore_inspector_table_chooser_get_tables (QStoreInspectorTableChooser *self)
{
  g_return_val_if_fail (QSTORE_INSPECTOR_IS_TABLE_CHOOSER (self), NULL);
  return G_LIST_MODEL (self->tables);
}

/* Returns: (transfer none): the materialized views listed, as `schema.name` strings */
GListModel *
qstore_inspector_table_chooser_get_materialized_views (QStoreInspectorTableChooser *self)
{
  g_return_val_if_fail (QSTORE_INSPECTOR_IS_TABLE_CHOOSER (self), NULL);
  return G_LIST_MODEL (self->mviews);
}

/* Returns: (transfer none): the plain views listed, as `schema.name` strings */
GListModel *
qstore_inspector_table_chooser_get_views (QStoreInspectorTableChooser *self)
{
  g_return_val_if_fail (QSTORE_INSPECTOR_IS_TABLE_CHOOSER (self), NULL);
  return G_LIST_MODEL (self->views);
}

/* Returns: (transfer none): everything listed, group after group, as
 *   labelled */
GListModel *
qstore_inspector_table_chooser_get_labels (QStoreInspectorTableChooser *self)
{
  g_return_val_if_fail (QSTORE_INSPECTOR_IS_TABLE_CHOOSER (self), NULL);
  return G_LIST_MODEL (self->labels);
}

/* Returns: (transfer none): what the search leaves listed */
GListModel *
qstore_inspector_table_chooser_get_found (QStoreInspectorTableChooser *self)
{
  g_return_val_if_fail (QSTORE_INSPECTOR_IS_TABLE_CHOOSER (self), NULL);
  return G_LIST_MODEL (self->found);
}

/* Returns: (transfer none): "button", "search" or "popover" */
GtkWidget *
qstore_inspector_table_chooser_get_part (QStoreInspectorTableChooser *self,
                                         const char                  *part)
{
  g_return_val_if_fail (QSTORE_INSPECTOR_IS_TABLE_CHOOSER (self), NULL);

  if (g_str_equal (part, "button"))
    return GTK_WIDGET (self->button);
  if (g_str_equal (part, "search"))
    return GTK_WIDGET (self->search);
  if (g_str_equal (part, "popover"))
    return GTK_WIDGET (self->popover);
  g_return_val_if_reached (NULL);
}

static void
qstore_inspector_table_chooser_dispose (GObject *object)
{
  QStoreInspectorTableChooser *self = QSTORE_INSPECTOR_TABLE_CHOOSER (object);

  if (self->list != NULL)
    gtk_list_view_set_model (self->list, NULL);
  g_clear_object (&self->found);
  g_clear_object (&self->labels);
  g_clear_object (&self->tables);
  g_clear_object (&self->mviews);
  g_clear_object (&self->views);

  G_OBJECT_CLASS (qstore_inspector_table_chooser_parent_class)->dispose (object);
}

static void
qstore_inspector_table_chooser_class_init (QStoreInspectorTableChooserClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = qstore_inspector_table_chooser_dispose;

  /**
   * QStoreInspectorTableChooser::chosen:
   * @self: the chooser
   * @position: what was chosen, as qstore_inspector_table_chooser_locate()
   *   finds it
   */
  signals[CHOSEN] =
    g_signal_new ("chosen", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_UINT);

  gtk_widget_class_set_template_from_resource (widget_class, "/org/qstore/Inspector/qstore-inspector-table-chooser.ui");
  gtk_widget_class_bind_template_child (widget_class, QStoreInspectorTableChooser, button);
  gtk_widget_class_bind_template_child (widget_class, QStoreInspectorTableChooser, label);
  gtk_widget_class_bind_template_child (widget_class, QStoreInspectorTableChooser, popover);
  gtk_widget_class_bind_template_child (widget_class, QStoreInspectorTableChooser, search);
  gtk_widget_class_bind_template_child (widget_class, QStoreInspectorTableChooser, list);
  gtk_widget_class_bind_template_callback (widget_class, popover_show_cb);
  gtk_widget_class_bind_template_callback (widget_class, search_changed_cb);
  gtk_widget_class_bind_template_callback (widget_class, search_activate_cb);
  gtk_widget_class_bind_template_callback (widget_class, search_stop_cb);
  gtk_widget_class_bind_template_callback (widget_class, list_activate_cb);
}

static void
qstore_inspector_table_chooser_init (QStoreInspectorTableChooser *self)
{
  g_autoptr(GtkExpression) expression = NULL;
  GtkStringFilter *filter;
  GtkListItemFactory *factory;
  GtkSingleSelection *selection;

  gtk_widget_init_template (GTK_WIDGET (self));

  self->labels = gtk_string_list_new (NULL);
  self->tables = gtk_string_list_new (NULL);
  self->mviews = gtk_string_list_new (NULL);
  self->views = gtk_string_list_new (NULL);

  expression = gtk_property_expression_new (GTK_TYPE_STRING_OBJECT, NULL, "string");
  filter = gtk_string_filter_new (g_steal_pointer (&expression));
  gtk_string_filter_set_match_mode (filter, GTK_STRING_FILTER_MATCH_MODE_SUBSTRING);
  gtk_string_filter_set_ignore_case (filter, TRUE);
  self->found = gtk_filter_list_model_new (G_LIST_MODEL (g_object_ref (self->labels)), GTK_FILTER (filter));
  selection = gtk_single_selection_new (G_LIST_MODEL (g_object_ref (self->found)));
  gtk_single_selection_set_autoselect (selection, FALSE);
  gtk_single_selection_set_can_unselect (selection, TRUE);
  gtk_list_view_set_model (self->list, GTK_SELECTION_MODEL (selection));
  g_object_unref (selection);
  factory = gtk_signal_list_item_factory_new ();
  g_signal_connect (factory, "setup", G_CALLBACK (label_setup_cb), NULL);
  g_signal_connect (factory, "bind", G_CALLBACK (label_bind_cb), NULL);
  gtk_list_view_set_factory (self->list, factory);
  g_object_unref (factory);
  /* Typing while the list has the focus goes to the search. */
  gtk_search_entry_set_key_capture_widget (self->search, GTK_WIDGET (self->list));
  qstore_inspector_table_chooser_set_shown (self, NULL);
}
