/* qstore-inspector-catalog-page.c: tables, views and their definitions
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <glib/gi18n.h>
#include <string.h>

#include "qstore-inspector-catalog-page.h"
#include "qstore-inspector-names.h"
#include "qstore-inspector-text-group.h"

/* A list of every catalog entry on the left, in sections (tables, views,
 * materialized views, qstore's own tables, then the store's
 * bookkeeping), the selected entry's details on the right: columns,
 * primary key, indexes and row count for a table, definition for every
 * kind, and the parse error of an entry the next open would report. A
 * narrow window shows one or the other: selecting an entry goes to its
 * details, Back to the list. */

struct _QStoreInspectorCatalogPage
{
  AdwBin                   parent_instance;

  QStoreInspectorContents *contents;
  GtkFilterListModel      *filter_model;
  GtkCustomFilter         *filter;
  char                    *search;
  char                    *selected;      /* the entry shown, by name */
  GPtrArray               *detail_lines;
  gboolean                 can_go_back;

  GtkStack                *stack;
  AdwLeaflet              *leaflet;
  GtkSearchEntry          *search_entry;
  GtkScrolledWindow       *list_scroller;
  GtkListBox              *entry_list;
  GtkScrolledWindow       *detail_scroller;
  GtkImage                *detail_icon;
  GtkLabel                *detail_title;
  GtkLabel                *detail_subtitle;
  GtkWidget               *show_rows_button;
  GtkBox                  *groups_box;
};

enum
{
  PROP_0,
  PROP_CAN_GO_BACK,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

#define ENTRY_KEY "qstore-inspector-entry"

G_DEFINE_FINAL_TYPE (QStoreInspectorCatalogPage, qstore_inspector_catalog_page, ADW_TYPE_BIN)

static void show_entry (QStoreInspectorCatalogPage *self,
                        QStoreCatalogEntry         *entry);

static const char *
kind_icon (QStoreCatalogKeyKind kind)
{
  switch (kind)
    {
    case QSTORE_CATALOG_KEY_TABLE:
      return "x-office-spreadsheet-symbolic";
    case QSTORE_CATALOG_KEY_VIEW:
      return "view-reveal-symbolic";
    case QSTORE_CATALOG_KEY_MATERIALIZED_VIEW:
      return "emblem-synchronizing-symbolic";
    case QSTORE_CATALOG_KEY_META:
    case QSTORE_CATALOG_KEY_INVALID:
    default:
      return "emblem-system-symbolic";
    }
}

static const char *
kind_name (QStoreCatalogKeyKind kind)
{
  switch (kind)
    {
    case QSTORE_CATALOG_KEY_TABLE:
      return _("Table");
    case QSTORE_CATALOG_KEY_VIEW:
      return _("View");
    case QSTORE_CATALOG_KEY_MATERIALIZED_VIEW:
      return _("Materialized view");
    case QSTORE_CATALOG_KEY_META:
      return _("Bookkeeping entry");
    case QSTORE_CATALOG_KEY_INVALID:
    default:
      return _("Unknown entry");
    }
}

/* The list's sections, in order. qstore's own tables (staging tables,
 * the unsafe window's, the change log's: names that start with
 * `_qstore_`) are not the user's: they get a section of their own, after
 * everything the user made. */
typedef enum
{
  SECTION_TABLES,
  SECTION_VIEWS,
  SECTION_MATERIALIZED_VIEWS,
  SECTION_RESERVED,
  SECTION_BOOKKEEPING,
  SECTION_OTHER,
} Section;

static Section
entry_section (QStoreCatalogEntry *entry)
{
  QStoreCatalogKeyKind kind = qstore_catalog_entry_get_kind (entry);

  if (kind != QSTORE_CATALOG_KEY_META && kind != QSTORE_CATALOG_KEY_INVALID &&
      qstore_table_name_is_reserved (qstore_catalog_entry_get_name (entry)))
    return SECTION_RESERVED;
  switch (kind)
    {
    case QSTORE_CATALOG_KEY_TABLE:
      return SECTION_TABLES;
    case QSTORE_CATALOG_KEY_VIEW:
      return SECTION_VIEWS;
    case QSTORE_CATALOG_KEY_MATERIALIZED_VIEW:
      return SECTION_MATERIALIZED_VIEWS;
    case QSTORE_CATALOG_KEY_META:
      return SECTION_BOOKKEEPING;
    case QSTORE_CATALOG_KEY_INVALID:
    default:
      return SECTION_OTHER;
    }
}

static const char *
section_title (Section section)
{
  switch (section)
    {
    case SECTION_TABLES:
      return _("Tables");
    case SECTION_VIEWS:
      return _("Views");
    case SECTION_MATERIALIZED_VIEWS:
      return _("Materialized Views");
    case SECTION_RESERVED:
      /* Translators: a heading over the tables qstore keeps for itself
       * (staging tables of imports, the change log…), apart from the
       * user's */
      return _("qstore’s Own Tables");
    case SECTION_BOOKKEEPING:
      /* Translators: a heading over the entries the store keeps for
       * itself (the clean-shutdown marker, the stale set…) */
      return _("Bookkeeping");
    case SECTION_OTHER:
    default:
      return _("Other Entries");
    }
}

/**
 * qstore_inspector_catalog_page_section_of:
 * @entry: a catalog entry
 *
 * Returns: the heading of the section of the list @entry shows in, in
 *   the user's language
 */
const char *
qstore_inspector_catalog_page_section_of (QStoreCatalogEntry *entry)
{
  return section_title (entry_section (entry));
}

static char *
qualified_name (QStoreCatalogEntry *entry)
{
  const char *schema = qstore_catalog_entry_get_schema (entry);

  if (schema == NULL || qstore_catalog_entry_get_kind (entry) == QSTORE_CATALOG_KEY_META)
    return g_strdup (qstore_catalog_entry_get_name (entry));
  return g_strconcat (schema, ".", qstore_catalog_entry_get_name (entry), NULL);
}

static char *
format_rows (QStoreInspectorContents *contents,
             QStoreCatalogEntry      *entry)
{
  const char *schema = qstore_catalog_entry_get_schema (entry);
  const char *name = qstore_catalog_entry_get_name (entry);
  gint64 count = qstore_inspector_contents_get_row_count (contents, schema, name);
  g_autofree char *number = NULL;

  if (count < 0 && qstore_inspector_contents_is_counting (contents, schema, name))
    /* Translators: shown instead of a row count while the rows are counted */
    return g_strdup (_("counting rows…"));
  if (count < 0)
    return g_strdup (_("row count unknown"));
  number = g_strdup_printf ("%'" G_GINT64_FORMAT, count);
  /* Translators: a table's row count; %s is the number, such as "10,000" */
  return g_strdup_printf (g_dngettext (GETTEXT_PACKAGE, "%s row", "%s rows", (gulong) count),
                          number);
}

/**
 * qstore_inspector_catalog_page_describe_entry:
 * @contents: what was read from the store
 * @entry: one of its catalog entries
 *
 * Returns: (transfer full): the one-line summary the entry list shows
 *   under the entry's name
 */
char *
qstore_inspector_catalog_page_describe_entry (QStoreInspectorContents *contents,
                                              QStoreCatalogEntry      *entry)
{
  QStoreCatalogKeyKind kind = qstore_catalog_entry_get_kind (entry);

  if (qstore_catalog_entry_get_error (entry) != NULL)
    return g_strdup_printf (_("%s · cannot be read"), kind_name (kind));

  if (kind == QSTORE_CATALOG_KEY_TABLE || kind == QSTORE_CATALOG_KEY_MATERIALIZED_VIEW)
    {
      GListModel *columns = qstore_catalog_entry_get_columns (entry);
      const char * const *indexes = qstore_catalog_entry_get_index_names (entry);
      guint n_columns = columns ? g_list_model_get_n_items (columns) : 0;
      guint n_indexes = indexes ? g_strv_length ((char **) indexes) : 0;
      g_autofree char *rows = NULL;
      g_autofree char *cols = NULL;
      g_autofree char *idx = NULL;

      rows = format_rows (contents, entry);
      cols = g_strdup_printf (g_dngettext (GETTEXT_PACKAGE, "%u column", "%u columns", n_columns),
                              n_columns);
      if (kind == QSTORE_CATALOG_KEY_MATERIALIZED_VIEW)
        return g_strdup_printf ("%s · %s · %s", kind_name (kind), cols, rows);
      idx = g_strdup_printf (g_dngettext (GETTEXT_PACKAGE, "%u index", "%u indexes", n_indexes),
                             n_indexes);
      return g_strdup_printf ("%s · %s · %s", cols, idx, rows);
    }

  return g_strdup (kind_name (kind));
}

/* The entry list */

static void
update_row (GtkWidget                  *row,
            QStoreInspectorCatalogPage *self)
{
  QStoreCatalogEntry *entry = g_object_get_data (G_OBJECT (row), ENTRY_KEY);
  GtkWidget *box = gtk_list_box_row_get_child (GTK_LIST_BOX_ROW (row));
  GtkWidget *icon = gtk_widget_get_first_child (box);
  GtkWidget *labels = gtk_widget_get_next_sibling (icon);
  GtkWidget *subtitle = gtk_widget_get_next_sibling (gtk_widget_get_first_child (labels));
  g_autofree char *summary = qstore_inspector_catalog_page_describe_entry (self->contents, entry);

  gtk_label_set_label (GTK_LABEL (subtitle), summary);
}

static void
row_counted_cb (QStoreInspectorContents    *contents,
                const char                 *schema,
                const char                 *name,
                GtkWidget                  *row)
{
  QStoreCatalogEntry *entry = g_object_get_data (G_OBJECT (row), ENTRY_KEY);
  GtkWidget *page = gtk_widget_get_ancestor (row, QSTORE_INSPECTOR_TYPE_CATALOG_PAGE);

  if (page != NULL &&
      g_ascii_strcasecmp (qstore_catalog_entry_get_name (entry), name) == 0 &&
      g_ascii_strcasecmp (qstore_catalog_entry_get_schema (entry), schema) == 0)
    update_row (row, QSTORE_INSPECTOR_CATALOG_PAGE (page));
}

static GtkWidget *
create_row (gpointer item,
            gpointer user_data)
{
  QStoreInspectorCatalogPage *self = user_data;
  QStoreCatalogEntry *entry = item;
  GtkWidget *row = gtk_list_box_row_new ();
  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 12);
  GtkWidget *labels = gtk_box_new (GTK_ORIENTATION_VERTICAL, 0);
  GtkWidget *icon = gtk_image_new_from_icon_name (kind_icon (qstore_catalog_entry_get_kind (entry)));
  g_autofree char *name = qualified_name (entry);
  GtkWidget *title = gtk_label_new (name);
  GtkWidget *subtitle = gtk_label_new (NULL);
  GtkWidget *warning = gtk_image_new_from_icon_name ("dialog-warning-symbolic");

  g_object_set_data_full (G_OBJECT (row), ENTRY_KEY, g_object_ref (entry), g_object_unref);
  gtk_widget_set_margin_top (box, 6);
  gtk_widget_set_margin_bottom (box, 6);
  /* A name of any length fits: its middle gives way, the tooltip has it
   * whole. */
  gtk_label_set_xalign (GTK_LABEL (title), 0);
  gtk_label_set_ellipsize (GTK_LABEL (title), PANGO_ELLIPSIZE_MIDDLE);
  gtk_widget_set_tooltip_text (title, name);
  /* The summary wraps rather than lose its end (the row count). */
  gtk_label_set_xalign (GTK_LABEL (subtitle), 0);
  gtk_label_set_wrap (GTK_LABEL (subtitle), TRUE);
  gtk_label_set_wrap_mode (GTK_LABEL (subtitle), PANGO_WRAP_WORD_CHAR);
  /* Wide enough for one line of the usual summary when there is room. */
  gtk_label_set_max_width_chars (GTK_LABEL (subtitle), 36);
  gtk_widget_add_css_class (subtitle, "caption");
  gtk_widget_add_css_class (subtitle, "dim-label");
  gtk_widget_set_hexpand (labels, TRUE);
  gtk_widget_set_valign (icon, GTK_ALIGN_CENTER);
  gtk_widget_add_css_class (warning, "error");
  gtk_widget_set_tooltip_text (warning, _("This entry cannot be read"));
  gtk_widget_set_visible (warning, qstore_catalog_entry_get_error (entry) != NULL);
  gtk_box_append (GTK_BOX (labels), title);
  gtk_box_append (GTK_BOX (labels), subtitle);
  gtk_box_append (GTK_BOX (box), icon);
  gtk_box_append (GTK_BOX (box), labels);
  gtk_box_append (GTK_BOX (box), warning);
  gtk_list_box_row_set_child (GTK_LIST_BOX_ROW (row), box);
  update_row (row, self);

  g_signal_connect_object (self->contents, "row-counted", G_CALLBACK (row_counted_cb), row, 0);
  return row;
}

static Section
row_section (GtkListBoxRow *row)
{
  return entry_section (g_object_get_data (G_OBJECT (row), ENTRY_KEY));
}

/* A heading over the first entry of each section. */
static void
update_header (GtkListBoxRow *row,
               GtkListBoxRow *before,
               gpointer       user_data)
{
  Section section = row_section (row);
  GtkWidget *header;

  if (before != NULL && row_section (before) == section)
    {
      gtk_list_box_row_set_header (row, NULL);
      return;
    }
  header = gtk_label_new (section_title (section));
  gtk_label_set_xalign (GTK_LABEL (header), 0);
  gtk_label_set_ellipsize (GTK_LABEL (header), PANGO_ELLIPSIZE_END);
  gtk_widget_set_margin_start (header, 12);
  gtk_widget_set_margin_end (header, 12);
  gtk_widget_set_margin_top (header, before != NULL ? 12 : 6);
  gtk_widget_set_margin_bottom (header, 6);
  gtk_widget_add_css_class (header, "heading");
  gtk_widget_add_css_class (header, "dim-label");
  gtk_list_box_row_set_header (row, header);
}

/* By section, then by name as people count: t2 before t10. */
static int
compare_entries (gconstpointer a,
                 gconstpointer b,
                 gpointer      user_data)
{
  QStoreCatalogEntry *x = (QStoreCatalogEntry *) a;
  QStoreCatalogEntry *y = (QStoreCatalogEntry *) b;
  int rank = (int) entry_section (x) - (int) entry_section (y);
  g_autofree char *xn = NULL;
  g_autofree char *yn = NULL;

  if (rank != 0)
    return rank;
  xn = qualified_name (x);
  yn = qualified_name (y);
  return qstore_inspector_natural_compare (xn, yn);
}

static gboolean
filter_entry (gpointer item,
              gpointer user_data)
{
  QStoreInspectorCatalogPage *self = user_data;
  g_autofree char *name = NULL;
  g_autofree char *folded = NULL;

  /* A materialized view's contents are shown with the view. */
  if (qstore_catalog_entry_is_materialized_view_contents (item))
    return FALSE;
  if (self->search == NULL || self->search[0] == '\0')
    return TRUE;
  name = qualified_name (item);
  folded = g_utf8_casefold (name, -1);
  return strstr (folded, self->search) != NULL;
}

static void
search_changed_cb (QStoreInspectorCatalogPage *self)
{
  g_free (self->search);
  self->search = g_utf8_casefold (gtk_editable_get_text (GTK_EDITABLE (self->search_entry)), -1);
  gtk_filter_changed (GTK_FILTER (self->filter), GTK_FILTER_CHANGE_DIFFERENT);
}

/* The details */

static void
add_line (QStoreInspectorCatalogPage *self,
          const char                 *group,
          const char                 *title,
          const char                 *subtitle)
{
  g_ptr_array_insert (self->detail_lines, self->detail_lines->len - 1,
                      g_strdup_printf ("%s: %s%s%s", group, title,
                                       subtitle && *subtitle ? " — " : "",
                                       subtitle ? subtitle : ""));
}

static GtkWidget *
add_group (QStoreInspectorCatalogPage *self,
           const char                 *title,
           const char                 *description)
{
  GtkWidget *group = adw_preferences_group_new ();

  adw_preferences_group_set_title (ADW_PREFERENCES_GROUP (group), title);
  if (description != NULL)
    adw_preferences_group_set_description (ADW_PREFERENCES_GROUP (group), description);
  gtk_box_append (self->groups_box, group);
  return group;
}

/* Titles are names (of columns, indexes…): a long one wraps whole,
 * without a hyphen it does not have. (Limiting the title to a line
 * instead trips a size bug of wrapping labels in GTK 4.8.) */
static void
no_hyphens (GtkWidget *widget)
{
  if (GTK_IS_LABEL (widget) && gtk_widget_has_css_class (widget, "title"))
    {
      PangoAttrList *attributes = pango_attr_list_new ();

      pango_attr_list_insert (attributes, pango_attr_insert_hyphens_new (FALSE));
      gtk_label_set_attributes (GTK_LABEL (widget), attributes);
      pango_attr_list_unref (attributes);
      return;
    }
  for (GtkWidget *child = gtk_widget_get_first_child (widget); child != NULL;
       child = gtk_widget_get_next_sibling (child))
    no_hyphens (child);
}

static GtkWidget *
add_row (QStoreInspectorCatalogPage *self,
         GtkWidget                  *group,
         const char                 *title,
         const char                 *subtitle,
         gboolean                    code)
{
  GtkWidget *row = adw_action_row_new ();

  adw_preferences_row_set_use_markup (ADW_PREFERENCES_ROW (row), FALSE);
  adw_preferences_row_set_title (ADW_PREFERENCES_ROW (row), title);
  no_hyphens (row);
  if (subtitle != NULL)
    adw_action_row_set_subtitle (ADW_ACTION_ROW (row), subtitle);
  if (code)
    gtk_widget_add_css_class (row, "code-row");
  adw_preferences_group_add (ADW_PREFERENCES_GROUP (group), row);
  add_line (self, adw_preferences_group_get_title (ADW_PREFERENCES_GROUP (group)), title, subtitle);
  return row;
}

static GtkWidget *
tag_new (const char *text,
         const char *style)
{
  GtkWidget *label = gtk_label_new (text);

  gtk_widget_set_valign (label, GTK_ALIGN_CENTER);
  gtk_widget_add_css_class (label, "tag");
  if (style != NULL)
    gtk_widget_add_css_class (label, style);
  return label;
}

static void
add_code (QStoreInspectorCatalogPage *self,
          const char                 *title,
          const char                 *text)
{
  gtk_box_append (self->groups_box, qstore_inspector_text_group_new (title, NULL, text, NULL, "code"));
  add_line (self, title, text, NULL);
}

/* The columns of a table, or of a materialized view's contents. */
static void
show_columns (QStoreInspectorCatalogPage *self,
              QStoreCatalogEntry         *entry)
{
  GListModel *columns = qstore_catalog_entry_get_columns (entry);
  guint n_columns = columns ? g_list_model_get_n_items (columns) : 0;
  g_autoptr(GPtrArray) pk = g_ptr_array_new ();
  g_autofree char *pk_text = NULL;
  GtkWidget *group;

  for (guint position = 1; ; position++)
    {
      gboolean found = FALSE;

      for (guint i = 0; i < n_columns; i++)
        {
          g_autoptr(QStoreColumnInfo) column = g_list_model_get_item (columns, i);

          if (qstore_column_info_get_primary_key_position (column) == position)
            {
              g_ptr_array_add (pk, (gpointer) qstore_column_info_get_name (column));
              found = TRUE;
            }
        }
      if (!found)
        break;
    }
  g_ptr_array_add (pk, NULL);
  if (pk->len > 1)
    {
      g_autofree char *joined = g_strjoinv (", ", (char **) pk->pdata);

      pk_text = g_strdup_printf (_("Primary key: %s"), joined);
    }
  else
    pk_text = g_strdup (_("No primary key: rows are keyed by their rowid"));

  group = add_group (self, _("Columns"), pk_text);
  for (guint i = 0; i < n_columns; i++)
    {
      g_autoptr(QStoreColumnInfo) column = g_list_model_get_item (columns, i);
      g_autoptr(GPtrArray) parts = g_ptr_array_new_with_free_func (g_free);
      const char *type = qstore_column_info_get_declared_type (column);
      const char *default_value = qstore_column_info_get_default_value (column);
      guint pk_position = qstore_column_info_get_primary_key_position (column);
      g_autofree char *subtitle = NULL;
      GtkWidget *row;

      g_ptr_array_add (parts, g_strdup (type && *type ? type : _("no declared type")));
      switch (qstore_column_info_get_collation (column))
        {
        case QSTORE_COLLATION_NOCASE:
          g_ptr_array_add (parts, g_strdup ("COLLATE NOCASE"));
          break;
        case QSTORE_COLLATION_RTRIM:
          g_ptr_array_add (parts, g_strdup ("COLLATE RTRIM"));
          break;
        case QSTORE_COLLATION_BINARY:
        default:
          break;
        }
      if (qstore_column_info_get_not_null (column))
        g_ptr_array_add (parts, g_strdup ("NOT NULL"));
      if (default_value != NULL)
        g_ptr_array_add (parts, g_strdup_printf ("DEFAULT %s", default_value));
      g_ptr_array_add (parts, NULL);
      subtitle = g_strjoinv (" · ", (char **) parts->pdata);

      row = add_row (self, group, qstore_column_info_get_name (column), subtitle, FALSE);
      if (pk_position > 0)
        {
          g_autofree char *text = pk->len > 2
            ? g_strdup_printf (_("Primary key %u"), pk_position)
            : g_strdup (_("Primary key"));

          adw_action_row_add_suffix (ADW_ACTION_ROW (row), tag_new (text, "accent"));
        }
    }
}

static void
show_row_count (QStoreInspectorCatalogPage *self,
                QStoreCatalogEntry         *entry)
{
  GtkWidget *group = add_group (self, _("Statistics"), NULL);
  g_autofree char *rows = NULL;

  rows = format_rows (self->contents, entry);
  add_row (self, group, _("Rows"), rows, FALSE);
}

static void
show_table (QStoreInspectorCatalogPage *self,
            QStoreCatalogEntry         *entry)
{
  const char * const *index_names = qstore_catalog_entry_get_index_names (entry);
  const char * const *index_ddl = qstore_catalog_entry_get_index_ddl (entry);
  GtkWidget *group;

  show_columns (self, entry);
  group = add_group (self, _("Indexes"), NULL);
  if (index_names == NULL || index_names[0] == NULL)
    add_row (self, group, _("No indexes"), NULL, FALSE);
  for (guint i = 0; index_names != NULL && index_names[i] != NULL; i++)
    {
      const char *ddl = index_ddl && index_ddl[i] && *index_ddl[i] ? index_ddl[i] : NULL;

      add_row (self, group, index_names[i], ddl ? ddl : _("Made by a UNIQUE constraint of the table"),
               ddl != NULL);
    }
  show_row_count (self, entry);
}

static const char *
strategy_description (QStoreMaterializedViewStrategy strategy)
{
  switch (strategy)
    {
    case QSTORE_MATERIALIZED_VIEW_STRATEGY_INVERSE_PROJECTION:
      return _("Row by row: each changed source row is looked up again by its key");
    case QSTORE_MATERIALIZED_VIEW_STRATEGY_GROUP_RECOMPUTE:
      return _("By group: each group a change touches is computed again");
    case QSTORE_MATERIALIZED_VIEW_STRATEGY_FULL_REBUILD:
    default:
      return _("In full: computed again once per transaction that changes a source");
    }
}

static void
show_materialized_view (QStoreInspectorCatalogPage *self,
                        QStoreCatalogEntry         *entry)
{
  QStoreStaleReport *report = qstore_inspector_contents_get_stale_report (self->contents);
  g_autofree char *name = qualified_name (entry);
  QStoreStaleView *verdict = qstore_stale_report_lookup_view (report, name);
  const char *load_error = NULL;
  QStoreMaterializedView *view =
    qstore_inspector_contents_lookup_materialized_view (self->contents,
                                                        qstore_catalog_entry_get_schema (entry),
                                                        qstore_catalog_entry_get_name (entry),
                                                        &load_error);
  const char * const *sources = NULL;
  g_autofree char *joined = NULL;
  GtkWidget *group;
  GtkWidget *row;
  GtkWidget *button;

  group = add_group (self, _("Materialized View"), NULL);
  if (view != NULL)
    sources = qstore_materialized_view_get_sources (view);
  else if (verdict != NULL)
    sources = qstore_stale_view_get_sources (verdict);
  joined = sources && sources[0] ? g_strjoinv (", ", (char **) sources) : g_strdup (_("None found"));
  add_row (self, group, _("Sources"), joined, FALSE);
  if (qstore_catalog_entry_get_body (entry) != NULL)
    add_row (self, group, _("Query"), qstore_catalog_entry_get_body (entry), TRUE);

  if (view != NULL)
    add_row (self, group, _("Kept up to date"),
             strategy_description (qstore_materialized_view_get_strategy (view)), FALSE);
  else if (load_error != NULL && qstore_catalog_entry_get_error (entry) == NULL)
    {
      g_autofree char *why = NULL;

      /* Told from what the catalog shows, in the user's language, for
       * someone who can only look; the library's words follow. */
      if (g_list_model_get_n_items (qstore_catalog_entry_get_columns (entry)) == 0)
        why = g_strdup_printf (_("Its rows are not stored yet, and the inspector never writes to a store, "
                                 "so it cannot compute them: a program that opens the store for "
                                 "writing will. (%s)"), load_error);
      else
        why = g_strdup_printf (_("Opening the store would not keep it up to date as it is defined. (%s)"),
                               load_error);
      row = add_row (self, group, _("Does not load"), why, FALSE);
      gtk_widget_add_css_class (row, "error-row");
    }

  if (verdict != NULL)
    {
      switch (qstore_stale_view_get_verdict (verdict))
        {
        case QSTORE_STALE_VERDICT_ADOPT:
          row = add_row (self, group, _("Next open"), _("Adopted as stored"), FALSE);
          break;
        case QSTORE_STALE_VERDICT_REFILL:
          row = add_row (self, group, _("Next open"), _("Refilled from its sources"), FALSE);
          break;
        case QSTORE_STALE_VERDICT_ERROR:
        default:
          row = add_row (self, group, _("Next open"), _("Cannot be rebuilt"), FALSE);
          break;
        }
      /* To this view's verdict on the stale views page. */
      button = gtk_button_new_with_mnemonic (_("_Why?"));
      gtk_widget_set_valign (button, GTK_ALIGN_CENTER);
      gtk_actionable_set_action_name (GTK_ACTIONABLE (button), "win.show-verdict");
      gtk_actionable_set_action_target (GTK_ACTIONABLE (button), "s", name);
      adw_action_row_add_suffix (ADW_ACTION_ROW (row), button);
    }

  if (g_list_model_get_n_items (qstore_catalog_entry_get_columns (entry)) > 0)
    {
      show_columns (self, entry);
      show_row_count (self, entry);
    }
}

static void
show_entry (QStoreInspectorCatalogPage *self,
            QStoreCatalogEntry         *entry)
{
  GtkWidget *child;
  QStoreCatalogKeyKind kind;
  g_autofree char *name = NULL;
  g_autofree char *summary = NULL;
  const char *error;
  const char *ddl;

  while ((child = gtk_widget_get_first_child (GTK_WIDGET (self->groups_box))) != NULL)
    gtk_box_remove (self->groups_box, child);
  g_ptr_array_set_size (self->detail_lines, 0);
  g_ptr_array_add (self->detail_lines, NULL);

  g_clear_pointer (&self->selected, g_free);
  if (entry == NULL)
    return;

  kind = qstore_catalog_entry_get_kind (entry);
  name = qualified_name (entry);
  self->selected = g_strdup (name);
  summary = qstore_inspector_catalog_page_describe_entry (self->contents, entry);
  error = qstore_catalog_entry_get_error (entry);
  ddl = qstore_catalog_entry_get_ddl (entry);

  gtk_image_set_from_icon_name (self->detail_icon, kind_icon (kind));
  gtk_label_set_label (self->detail_title, name);
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->detail_title), name);
  gtk_label_set_label (self->detail_subtitle, summary);
  add_line (self, _("Entry"), name, summary);

  /* A materialized view's rows are those of its contents table. */
  gtk_widget_set_visible (self->show_rows_button,
                          error == NULL &&
                          (kind == QSTORE_CATALOG_KEY_TABLE || kind == QSTORE_CATALOG_KEY_VIEW ||
                           (kind == QSTORE_CATALOG_KEY_MATERIALIZED_VIEW &&
                            g_list_model_get_n_items (qstore_catalog_entry_get_columns (entry)) > 0)));
  gtk_actionable_set_action_target (GTK_ACTIONABLE (self->show_rows_button), "s", name);

  if (error != NULL)
    {
      GtkWidget *group = add_group (self, _("Cannot Be Read"),
                                    _("Opening the store lists this entry among its errors; the other entries load."));
      GtkWidget *row = add_row (self, group, error, NULL, FALSE);
      GtkWidget *icon = gtk_image_new_from_icon_name ("dialog-error-symbolic");

      gtk_widget_add_css_class (icon, "error");
      adw_action_row_add_prefix (ADW_ACTION_ROW (row), icon);
      gtk_widget_add_css_class (row, "error-row");
    }

  if (kind == QSTORE_CATALOG_KEY_TABLE && error == NULL)
    show_table (self, entry);
  else if (kind == QSTORE_CATALOG_KEY_MATERIALIZED_VIEW)
    show_materialized_view (self, entry);

  if (kind == QSTORE_CATALOG_KEY_META)
    add_code (self, _("Value"), qstore_catalog_entry_get_value (entry)
                                  ? qstore_catalog_entry_get_value (entry) : "");
  else if (ddl != NULL)
    add_code (self, _("Definition"), ddl);
}

/* The selected table was counted: its details say how many rows. */
static void
selected_counted_cb (QStoreInspectorCatalogPage *self,
                     const char                 *schema,
                     const char                 *name)
{
  g_autofree char *counted = qstore_inspector_qualified_name (schema, name);
  GtkListBoxRow *row = gtk_list_box_get_selected_row (self->entry_list);
  GtkAdjustment *adjustment = gtk_scrolled_window_get_vadjustment (self->detail_scroller);
  double value = gtk_adjustment_get_value (adjustment);

  if (row == NULL || self->selected == NULL || g_ascii_strcasecmp (counted, self->selected) != 0)
    return;
  show_entry (self, g_object_get_data (G_OBJECT (row), ENTRY_KEY));
  gtk_adjustment_set_value (adjustment, value);
}

/* Narrow windows */

static void
update_can_go_back (QStoreInspectorCatalogPage *self)
{
  gboolean can_go_back = adw_leaflet_get_folded (self->leaflet) &&
                         adw_leaflet_get_visible_child (self->leaflet) == GTK_WIDGET (self->detail_scroller) &&
                         g_strcmp0 (gtk_stack_get_visible_child_name (self->stack), "catalog") == 0;

  if (self->can_go_back == can_go_back)
    return;
  self->can_go_back = can_go_back;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_CAN_GO_BACK]);
}

static void
leaflet_changed_cb (QStoreInspectorCatalogPage *self)
{
  update_can_go_back (self);
}

/* Whether the page shows an entry's details in place of the list, as in a
 * narrow window, so that Back leads to the list. */
gboolean
qstore_inspector_catalog_page_can_go_back (QStoreInspectorCatalogPage *self)
{
  g_return_val_if_fail (QSTORE_INSPECTOR_IS_CATALOG_PAGE (self), FALSE);
  return self->can_go_back;
}

void
qstore_inspector_catalog_page_go_back (QStoreInspectorCatalogPage *self)
{
  g_return_if_fail (QSTORE_INSPECTOR_IS_CATALOG_PAGE (self));
  adw_leaflet_navigate (self->leaflet, ADW_NAVIGATION_DIRECTION_BACK);
}

/* Whether the list and the details are shown one at a time. */
gboolean
qstore_inspector_catalog_page_get_folded (QStoreInspectorCatalogPage *self)
{
  g_return_val_if_fail (QSTORE_INSPECTOR_IS_CATALOG_PAGE (self), FALSE);
  return adw_leaflet_get_folded (self->leaflet);
}

/* Returns: (transfer none): the list when it shows, else the details */
GtkWidget *
qstore_inspector_catalog_page_get_visible_pane (QStoreInspectorCatalogPage *self)
{
  g_return_val_if_fail (QSTORE_INSPECTOR_IS_CATALOG_PAGE (self), NULL);
  return adw_leaflet_get_visible_child (self->leaflet);
}

/* Selection */

static void
row_selected_cb (QStoreInspectorCatalogPage *self,
                 GtkListBoxRow              *row)
{
  QStoreCatalogEntry *entry = row ? g_object_get_data (G_OBJECT (row), ENTRY_KEY) : NULL;
  g_autofree char *name = entry ? qualified_name (entry) : NULL;

  /* A refresh selects the same entry again: the details stay where they
   * were scrolled to. */
  if (name != NULL && g_strcmp0 (name, self->selected) == 0)
    {
      GtkAdjustment *adjustment = gtk_scrolled_window_get_vadjustment (self->detail_scroller);
      double value = gtk_adjustment_get_value (adjustment);

      show_entry (self, entry);
      gtk_adjustment_set_value (adjustment, value);
      return;
    }
  show_entry (self, entry);
  gtk_adjustment_set_value (gtk_scrolled_window_get_vadjustment (self->detail_scroller), 0);
}

/* A click, or Enter, on an entry: in a narrow window, to its details. */
static void
row_activated_cb (QStoreInspectorCatalogPage *self,
                  GtkListBoxRow              *row)
{
  adw_leaflet_set_visible_child (self->leaflet, GTK_WIDGET (self->detail_scroller));
}

/* GObject */

static void
qstore_inspector_catalog_page_dispose (GObject *object)
{
  QStoreInspectorCatalogPage *self = QSTORE_INSPECTOR_CATALOG_PAGE (object);

  if (self->entry_list != NULL)
    gtk_list_box_bind_model (self->entry_list, NULL, NULL, NULL, NULL);
  if (self->contents != NULL)
    g_signal_handlers_disconnect_by_func (self->contents, selected_counted_cb, self);
  g_clear_object (&self->filter_model);
  g_clear_object (&self->contents);

  G_OBJECT_CLASS (qstore_inspector_catalog_page_parent_class)->dispose (object);
}

static void
qstore_inspector_catalog_page_finalize (GObject *object)
{
  QStoreInspectorCatalogPage *self = QSTORE_INSPECTOR_CATALOG_PAGE (object);

  g_free (self->search);
  g_free (self->selected);
  g_clear_pointer (&self->detail_lines, g_ptr_array_unref);

  G_OBJECT_CLASS (qstore_inspector_catalog_page_parent_class)->finalize (object);
}

static void
qstore_inspector_catalog_page_get_property (GObject    *object,
                                            guint       prop_id,
                                            GValue     *value,
                                            GParamSpec *pspec)
{
  QStoreInspectorCatalogPage *self = QSTORE_INSPECTOR_CATALOG_PAGE (object);

  switch (prop_id)
    {
    case PROP_CAN_GO_BACK:
      g_value_set_boolean (value, self->can_go_back);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
qstore_inspector_catalog_page_class_init (QStoreInspectorCatalogPageClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = qstore_inspector_catalog_page_dispose;
  object_class->finalize = qstore_inspector_catalog_page_finalize;
  object_class->get_property = qstore_inspector_catalog_page_get_property;

  properties[PROP_CAN_GO_BACK] =
    g_param_spec_boolean ("can-go-back", NULL, NULL, FALSE,
                          G_PARAM_READABLE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);
  g_object_class_install_properties (object_class, N_PROPS, properties);

  gtk_widget_class_set_template_from_resource (widget_class, "/org/qstore/Inspector/qstore-inspector-catalog-page.ui");
  gtk_widget_class_bind_template_child (widget_class, QStoreInspectorCatalogPage, stack);
  gtk_widget_class_bind_template_child (widget_class, QStoreInspectorCatalogPage, leaflet);
  gtk_widget_class_bind_template_child (widget_class, QStoreInspectorCatalogPage, search_entry);
  gtk_widget_class_bind_template_child (widget_class, QStoreInspectorCatalogPage, list_scroller);
  gtk_widget_class_bind_template_child (widget_class, QStoreInspectorCatalogPage, entry_list);
  gtk_widget_class_bind_template_child (widget_class, QStoreInspectorCatalogPage, detail_scroller);
  gtk_widget_class_bind_template_child (widget_class, QStoreInspectorCatalogPage, detail_icon);
  gtk_widget_class_bind_template_child (widget_class, QStoreInspectorCatalogPage, detail_title);
  gtk_widget_class_bind_template_child (widget_class, QStoreInspectorCatalogPage, detail_subtitle);
  gtk_widget_class_bind_template_child (widget_class, QStoreInspectorCatalogPage, show_rows_button);
  gtk_widget_class_bind_template_child (widget_class, QStoreInspectorCatalogPage, groups_box);
  gtk_widget_class_bind_template_callback (widget_class, search_changed_cb);
  gtk_widget_class_bind_template_callback (widget_class, row_selected_cb);
  gtk_widget_class_bind_template_callback (widget_class, row_activated_cb);
  gtk_widget_class_bind_template_callback (widget_class, leaflet_changed_cb);

}

static void
qstore_inspector_catalog_page_init (QStoreInspectorCatalogPage *self)
{
  GtkCustomSorter *sorter;
  GtkSortListModel *sorted;

  gtk_widget_init_template (GTK_WIDGET (self));

  self->detail_lines = g_ptr_array_new_with_free_func (g_free);
  g_ptr_array_add (self->detail_lines, NULL);

  sorter = gtk_custom_sorter_new (compare_entries, NULL, NULL);
  sorted = gtk_sort_list_model_new (NULL, GTK_SORTER (sorter));
  self->filter = gtk_custom_filter_new (filter_entry, self, NULL);
  self->filter_model = gtk_filter_list_model_new (G_LIST_MODEL (sorted), GTK_FILTER (self->filter));
  gtk_list_box_set_header_func (self->entry_list, update_header, NULL, NULL);
  g_signal_connect_swapped (self->stack, "notify::visible-child", G_CALLBACK (update_can_go_back), self);
}

static GtkListBoxRow *
find_row (QStoreInspectorCatalogPage *self,
          const char                 *name)
{
  for (GtkWidget *child = gtk_widget_get_first_child (GTK_WIDGET (self->entry_list)); child != NULL;
       child = gtk_widget_get_next_sibling (child))
    {
      QStoreCatalogEntry *entry;
      g_autofree char *entry_name = NULL;

      if (!GTK_IS_LIST_BOX_ROW (child) || !(entry = g_object_get_data (G_OBJECT (child), ENTRY_KEY)))
        continue;
      entry_name = qualified_name (entry);
      if (g_ascii_strcasecmp (entry_name, name) == 0)
        return GTK_LIST_BOX_ROW (child);
    }
  return NULL;
}

/**
 * qstore_inspector_catalog_page_set_contents:
 * @self: a #QStoreInspectorCatalogPage
 * @contents: what was read from the store
 *
 * Shows @contents, keeping the selected entry when it still exists, and
 * where the list and the details were scrolled to.
 */
void
qstore_inspector_catalog_page_set_contents (QStoreInspectorCatalogPage *self,
                                            QStoreInspectorContents    *contents)
{
  GtkSortListModel *sorted = GTK_SORT_LIST_MODEL (gtk_filter_list_model_get_model (self->filter_model));
  g_autofree char *keep = g_strdup (self->selected);
  GtkAdjustment *list_adjustment = gtk_scrolled_window_get_vadjustment (self->list_scroller);
  double list_position = gtk_adjustment_get_value (list_adjustment);
  GtkListBoxRow *row;

  g_return_if_fail (QSTORE_INSPECTOR_IS_CATALOG_PAGE (self));

  gtk_list_box_bind_model (self->entry_list, NULL, NULL, NULL, NULL);
  if (self->contents != NULL)
    g_signal_handlers_disconnect_by_func (self->contents, selected_counted_cb, self);
  g_set_object (&self->contents, contents);
  if (contents != NULL)
    g_signal_connect_swapped (contents, "row-counted", G_CALLBACK (selected_counted_cb), self);
  gtk_sort_list_model_set_model (sorted, contents ? qstore_inspector_contents_get_entries (contents) : NULL);
  if (contents != NULL)
    gtk_list_box_bind_model (self->entry_list, G_LIST_MODEL (self->filter_model), create_row, self, NULL);

  gtk_stack_set_visible_child_name (self->stack,
                                    g_list_model_get_n_items (G_LIST_MODEL (sorted)) > 0
                                      ? "catalog" : "empty");
  if (keep == NULL || !(row = find_row (self, keep)))
    {
      GtkListBoxRow *first = gtk_list_box_get_row_at_index (self->entry_list, 0);

      g_clear_pointer (&self->selected, g_free);
      gtk_list_box_select_row (self->entry_list, first);
      if (first == NULL)
        show_entry (self, NULL);
    }
  else
    {
      gtk_list_box_select_row (self->entry_list, row);
      gtk_adjustment_set_value (list_adjustment, list_position);
    }
}

/* Returns: (transfer none): the entries as listed (sorted and filtered) */
GListModel *
qstore_inspector_catalog_page_get_model (QStoreInspectorCatalogPage *self)
{
  g_return_val_if_fail (QSTORE_INSPECTOR_IS_CATALOG_PAGE (self), NULL);
  return G_LIST_MODEL (self->filter_model);
}

QStoreCatalogEntry *
qstore_inspector_catalog_page_get_selected (QStoreInspectorCatalogPage *self)
{
  GtkListBoxRow *row;

  g_return_val_if_fail (QSTORE_INSPECTOR_IS_CATALOG_PAGE (self), NULL);

  row = gtk_list_box_get_selected_row (self->entry_list);
  return row ? g_object_get_data (G_OBJECT (row), ENTRY_KEY) : NULL;
}

/**
 * qstore_inspector_catalog_page_select_name:
 * @self: a #QStoreInspectorCatalogPage
 * @name: `schema.name`, or a bookkeeping entry's name
 *
 * Selects the entry and shows its details (in a narrow window, in place
 * of the list).
 *
 * Returns: whether the list has the entry
 */
gboolean
qstore_inspector_catalog_page_select_name (QStoreInspectorCatalogPage *self,
                                           const char                 *name)
{
  GtkListBoxRow *row;

  g_return_val_if_fail (QSTORE_INSPECTOR_IS_CATALOG_PAGE (self), FALSE);

  if (!(row = find_row (self, name)))
    return FALSE;
  gtk_list_box_select_row (self->entry_list, row);
  adw_leaflet_set_visible_child (self->leaflet, GTK_WIDGET (self->detail_scroller));
  return TRUE;
}

/* Returns: (transfer none): one line per row the details show,
 * "Group: title — subtitle" */
const char * const *
qstore_inspector_catalog_page_get_detail_lines (QStoreInspectorCatalogPage *self)
{
  g_return_val_if_fail (QSTORE_INSPECTOR_IS_CATALOG_PAGE (self), NULL);
  return (const char * const *) self->detail_lines->pdata;
}

/* Returns: (transfer none): the label that shows the selected entry's name */
GtkWidget *
qstore_inspector_catalog_page_get_title_label (QStoreInspectorCatalogPage *self)
{
  g_return_val_if_fail (QSTORE_INSPECTOR_IS_CATALOG_PAGE (self), NULL);
  return GTK_WIDGET (self->detail_title);
}
