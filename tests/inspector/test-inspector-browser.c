/* test-inspector-browser.c: the data page as a data browser
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Sorting by a column and searching are done by the store, through SQL,
 * page by page; rows and values go to the clipboard as text and JSON; an
 * empty table and a search without matches say so; column widths stay
 * as the first page set them; a row shows whole in its own window; the
 * chooser of tables searches as one types; a table without a row count
 * is counted in the background.
 *
 * Runs under a display (xvfb-run) with GSETTINGS_BACKEND=memory, once per
 * test_provider (QSTORE_TEST_PROVIDER = lmdb or sqlite).
 */
#include "config.h"

#include <adwaita.h>
#include <json-glib/json-glib.h>

#include "inspector-test-util.h"
#include "qstore-inspector-catalog-page.h"
#include "qstore-inspector-data-page.h"

#define N_PEOPLE 450

typedef struct
{
  Fixture                  store;
  GtkWidget               *window;
  QStoreInspectorDataPage *page;
} Browser;

static void
browser_set_up (Browser       *b,
                gconstpointer  data)
{
  g_autoptr(GError) error = NULL;

  b->store.dir = g_dir_make_tmp ("qstore-browser-XXXXXX", &error);
  g_assert_no_error (error);
  b->store.uri = test_provider_uri (b->store.dir, "store");
  test_exec_at (b->store.uri,
                "CREATE TABLE people ("
                "  id INTEGER PRIMARY KEY,"
                "  name TEXT NOT NULL,"
                "  score REAL,"
                "  note TEXT,"
                "  photo BLOB);"
                "INSERT INTO people (id, name, score, note, photo)"
                "  WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 450)"
                "  SELECT i, 'name ' || i, (i * 37) % 101 / 4.0,"
                "         CASE WHEN i % 2 = 0 THEN 'even' END,"
                "         CASE WHEN i = 3 THEN x'00ff10' END FROM n;"
                /* The last rows are far wider than the first page. */
                "UPDATE people SET note = printf('%.300c', 'w') WHERE id > 440;"
                "UPDATE people SET note = 'tab' || char(9) || 'here \"quoted\"' WHERE id = 5;"
                "CREATE VIEW people_view AS SELECT id, name FROM people WHERE id <= 30;"
                "CREATE TABLE never_written (k TEXT PRIMARY KEY, v INTEGER);");

  b->store.contents = test_load (b->store.uri);
  b->page = g_object_new (QSTORE_INSPECTOR_TYPE_DATA_PAGE, NULL);
  b->window = gtk_window_new ();
  /* A test's data is the window's width, when not the usual one. */
  gtk_window_set_default_size (GTK_WINDOW (b->window), data ? GPOINTER_TO_INT (data) : 1000, 700);
  gtk_window_set_child (GTK_WINDOW (b->window), GTK_WIDGET (b->page));
  gtk_window_present (GTK_WINDOW (b->window));
  qstore_inspector_data_page_set_contents (b->page, b->store.contents);
  g_assert_true (qstore_inspector_data_page_select_table (b->page, "main.people"));
  test_run_for (100);
}

static void
browser_tear_down (Browser       *b,
                   gconstpointer  data)
{
  gtk_window_destroy (GTK_WINDOW (b->window));
  test_run_for (50);
  fixture_tear_down (&b->store, data);
}

static gboolean
model_idle (gpointer data)
{
  QStoreInspectorDataPage *page = data;
  QStoreInspectorRowModel *model = qstore_inspector_data_page_get_model (page);

  return model != NULL && !qstore_inspector_row_model_is_busy (model);
}

static void
wait_idle (QStoreInspectorDataPage *page)
{
  test_wait (model_idle, page, 30);
  test_run_for (30);
}

static gint64
int_at (QStoreInspectorRowModel *model,
        guint                    position,
        guint                    column)
{
  g_autoptr(QStoreInspectorRow) row = test_get_loaded_row (model, position);
  g_autoptr(GVariant) value = qstore_inspector_row_get_value (row, column);

  g_assert_true (g_variant_is_of_type (value, G_VARIANT_TYPE_INT64));
  return g_variant_get_int64 (value);
}

static double
score_at (QStoreInspectorRowModel *model,
          guint                    position)
{
  g_autoptr(QStoreInspectorRow) row = test_get_loaded_row (model, position);
  g_autoptr(GVariant) value = qstore_inspector_row_get_value (row, 2);

  return g_variant_get_double (value);
}

static GtkColumnViewColumn *
column_titled (QStoreInspectorDataPage *page,
               const char              *title)
{
  GtkColumnView *view = GTK_COLUMN_VIEW (qstore_inspector_data_page_get_part (page, "column-view"));
  GListModel *columns = gtk_column_view_get_columns (view);

  for (guint i = 0; i < g_list_model_get_n_items (columns); i++)
    {
      g_autoptr(GtkColumnViewColumn) column = g_list_model_get_item (columns, i);

      if (g_str_equal (gtk_column_view_column_get_title (column), title))
        return column;
    }
  g_assert_not_reached ();
}

static gboolean
snapshot_released (gpointer data)
{
  return !qstore_inspector_row_model_holds_snapshot (data) && !qstore_inspector_row_model_is_busy (data);
}

/* The order of every row, read page after page: each row once, in order. */
static void
assert_sorted_by_score (QStoreInspectorRowModel *model,
                        gboolean                 descending)
{
  g_autoptr(GHashTable) seen = g_hash_table_new (NULL, NULL);
  guint n = g_list_model_get_n_items (G_LIST_MODEL (model));

  g_assert_cmpuint (n, ==, N_PEOPLE);
  for (guint i = 0; i < n; i++)
    {
      gint64 id = int_at (model, i, 0);

      g_assert_false (g_hash_table_contains (seen, GINT_TO_POINTER (id)));
      g_hash_table_add (seen, GINT_TO_POINTER (id));
      if (i > 0)
        {
          double before = score_at (model, i - 1);
          double here = score_at (model, i);

          if (descending)
            g_assert_cmpfloat (before, >=, here);
          else
            g_assert_cmpfloat (before, <=, here);
        }
    }
}

/* A click on a header's title sorts: the store sorts, a page at a time. */
static void
test_sort (Browser       *b,
           gconstpointer  data)
{
  GtkColumnView *view = GTK_COLUMN_VIEW (qstore_inspector_data_page_get_part (b->page, "column-view"));
  QStoreInspectorRowModel *model = qstore_inspector_data_page_get_model (b->page);
  gboolean descending = FALSE;

  g_assert_false (qstore_inspector_row_model_uses_sql (model));
  g_assert_cmpint (int_at (model, 0, 0), ==, 1);

  /* What a click on “score” does, then a second click. */
  gtk_column_view_sort_by_column (view, column_titled (b->page, "score"), GTK_SORT_ASCENDING);
  g_assert_cmpstr (qstore_inspector_row_model_get_order (model, &descending), ==, "score");
  g_assert_false (descending);
  g_assert_true (qstore_inspector_row_model_uses_sql (model));
  wait_idle (b->page);
  g_assert_cmpfloat (score_at (model, 0), ==, 0.0);

  /* A model alone: the first row of an order is one page read, not the
   * table's three. */
  {
    g_autoptr(QStoreInspectorRowModel) alone = NULL;
    g_autoptr(GError) error = NULL;

    alone = qstore_inspector_row_model_new (b->store.uri,
                                            qstore_inspector_contents_get_provider (b->store.contents),
                                            "main", "people", N_PEOPLE, &error);
    g_assert_no_error (error);
    qstore_inspector_row_model_set_snapshot_idle (alone, 50);
    qstore_inspector_row_model_set_order (alone, "score", TRUE);
    g_assert_cmpfloat (score_at (alone, 0), ==, 25.0);
    g_assert_cmpuint (qstore_inspector_row_model_get_n_loaded_pages (alone), ==, 1);
    g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (alone)), ==, N_PEOPLE);
    /* Its read transaction is its snapshot, let go once idle, as a
     * table's is. */
    g_assert_true (qstore_inspector_row_model_holds_snapshot (alone));
    test_wait (snapshot_released, alone, 10);
  }

  gtk_column_view_sort_by_column (view, column_titled (b->page, "score"), GTK_SORT_DESCENDING);
  g_assert_cmpstr (qstore_inspector_row_model_get_order (model, &descending), ==, "score");
  g_assert_true (descending);
  wait_idle (b->page);
  g_assert_cmpfloat (score_at (model, 0), ==, 25.0);
  assert_sorted_by_score (model, TRUE);

  gtk_column_view_sort_by_column (view, column_titled (b->page, "score"), GTK_SORT_ASCENDING);
  wait_idle (b->page);
  assert_sorted_by_score (model, FALSE);

  /* Text sorts as SQL compares it. */
  gtk_column_view_sort_by_column (view, column_titled (b->page, "name"), GTK_SORT_DESCENDING);
  wait_idle (b->page);
  {
    g_autoptr(QStoreInspectorRow) row = test_get_loaded_row (model, 0);
    g_autoptr(GVariant) name = qstore_inspector_row_get_value (row, 1);

    g_assert_cmpstr (g_variant_get_string (name, NULL), ==, "name 99");
  }

  /* The menu's “Sort in Key Order”: back to the table's own order. */
  gtk_widget_activate_action (GTK_WIDGET (b->page), "data.unsort", NULL);
  g_assert_null (qstore_inspector_row_model_get_order (model, NULL));
  g_assert_false (qstore_inspector_row_model_uses_sql (model));
  g_assert_cmpint (int_at (model, 0, 0), ==, 1);
  g_assert_cmpint (int_at (model, N_PEOPLE - 1, 0), ==, N_PEOPLE);

  /* A view sorts too. */
  g_assert_true (qstore_inspector_data_page_select_table (b->page, "main.people_view"));
  wait_idle (b->page);
  model = qstore_inspector_data_page_get_model (b->page);
  gtk_column_view_sort_by_column (view, column_titled (b->page, "id"), GTK_SORT_DESCENDING);
  wait_idle (b->page);
  g_assert_cmpint (int_at (model, 0, 0), ==, 30);
}

static void
search_for (Browser    *b,
            const char *text)
{
  GtkWidget *entry = qstore_inspector_data_page_get_part (b->page, "row-search");
  GtkSearchBar *bar = GTK_SEARCH_BAR (qstore_inspector_data_page_get_part (b->page, "search-bar"));

  gtk_widget_activate_action (GTK_WIDGET (b->page), "data.search", NULL);
  g_assert_true (gtk_search_bar_get_search_mode (bar));
  gtk_editable_set_text (GTK_EDITABLE (entry), text);
  /* The entry waits a moment for more typing before it says so. */
  g_signal_emit_by_name (entry, "search-changed");
  wait_idle (b->page);
}

static const char *
count_text (Browser *b)
{
  return gtk_label_get_label (GTK_LABEL (qstore_inspector_data_page_get_part (b->page, "count")));
}

static void
test_search (Browser       *b,
             gconstpointer  data)
{
  QStoreInspectorRowModel *model = qstore_inspector_data_page_get_model (b->page);

  search_for (b, "name 42");
  /* name 42 and name 420 … name 429. */
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (model)), ==, 11);
  g_assert_cmpint (int_at (model, 0, 0), ==, 42);
  g_assert_cmpint (int_at (model, 10, 0), ==, 429);
  g_assert_cmpstr (count_text (b), ==, "11 matches");
  g_assert_cmpstr (qstore_inspector_data_page_get_state (b->page), ==, "rows");

  /* Any column, and the case of ASCII letters does not matter. */
  search_for (b, "EVEN");
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (model)), ==, 220);

  /* % and _ are themselves, not wildcards. */
  search_for (b, "name_4");
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (model)), ==, 0);
  g_assert_cmpstr (qstore_inspector_data_page_get_state (b->page), ==, "no-matches");

  search_for (b, "nobody here");
  g_assert_cmpstr (qstore_inspector_data_page_get_state (b->page), ==, "no-matches");
  g_assert_cmpstr (count_text (b), ==, "0 matches");

  /* Search and sort together. */
  search_for (b, "name 42");
  gtk_column_view_sort_by_column (GTK_COLUMN_VIEW (qstore_inspector_data_page_get_part (b->page, "column-view")),
                                  column_titled (b->page, "id"), GTK_SORT_DESCENDING);
  wait_idle (b->page);
  g_assert_cmpint (int_at (model, 0, 0), ==, 429);
  g_assert_cmpint (int_at (model, 10, 0), ==, 42);

  /* Closing the search shows every row again. */
  gtk_search_bar_set_search_mode (GTK_SEARCH_BAR (qstore_inspector_data_page_get_part (b->page, "search-bar")),
                                  FALSE);
  wait_idle (b->page);
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (model)), ==, N_PEOPLE);
  g_assert_cmpstr (count_text (b), ==, "450 rows");
}

/* The clipboard, read back */

typedef struct
{
  char     *text;
  gboolean  done;
} ClipboardRead;

static void
clipboard_read_cb (GObject      *object,
                   GAsyncResult *result,
                   gpointer      user_data)
{
  ClipboardRead *read = user_data;
  g_autoptr(GError) error = NULL;

  read->text = gdk_clipboard_read_text_finish (GDK_CLIPBOARD (object), result, &error);
  g_assert_no_error (error);
  read->done = TRUE;
}

static gboolean
read_done (gpointer data)
{
  return ((ClipboardRead *) data)->done;
}

static char *
clipboard_text (GtkWidget *widget)
{
  ClipboardRead read = { NULL, FALSE };

  gdk_clipboard_read_text_async (gtk_widget_get_clipboard (widget), NULL, clipboard_read_cb, &read);
  test_wait (read_done, &read, 10);
  return read.text;
}

static gboolean
copied (gpointer data)
{
  Browser *b = data;

  return qstore_inspector_data_page_get_n_copies (b->page) > GPOINTER_TO_UINT (g_object_get_data (G_OBJECT (b->page), "copies"));
}

static char *
copy_with (Browser    *b,
           const char *action)
{
  g_object_set_data (G_OBJECT (b->page), "copies",
                     GUINT_TO_POINTER (qstore_inspector_data_page_get_n_copies (b->page)));
  gdk_clipboard_set_text (gtk_widget_get_clipboard (GTK_WIDGET (b->page)), "before");
  gtk_widget_activate_action (GTK_WIDGET (b->page), action, NULL);
  test_wait (copied, b, 30);
  return clipboard_text (GTK_WIDGET (b->page));
}

/* Whether a key combination on @widget runs @action. */
static gboolean
has_shortcut (GtkWidget       *widget,
              guint            keyval,
              GdkModifierType  modifiers,
              const char      *action)
{
  g_autoptr(GListModel) controllers = gtk_widget_observe_controllers (widget);

  for (guint i = 0; i < g_list_model_get_n_items (controllers); i++)
    {
      g_autoptr(GObject) controller = g_list_model_get_item (controllers, i);

      if (!GTK_IS_SHORTCUT_CONTROLLER (controller))
        continue;
      for (guint k = 0; k < g_list_model_get_n_items (G_LIST_MODEL (controller)); k++)
        {
          g_autoptr(GtkShortcut) shortcut = g_list_model_get_item (G_LIST_MODEL (controller), k);
          GtkShortcutTrigger *trigger = gtk_shortcut_get_trigger (shortcut);
          GtkShortcutAction *named = gtk_shortcut_get_action (shortcut);

          if (GTK_IS_KEYVAL_TRIGGER (trigger) &&
              gtk_keyval_trigger_get_keyval (GTK_KEYVAL_TRIGGER (trigger)) == keyval &&
              gtk_keyval_trigger_get_modifiers (GTK_KEYVAL_TRIGGER (trigger)) == modifiers &&
              GTK_IS_NAMED_ACTION (named) &&
              g_str_equal (gtk_named_action_get_action_name (GTK_NAMED_ACTION (named)), action))
            return TRUE;
        }
    }
  return FALSE;
}

static void
test_copy (Browser       *b,
           gconstpointer  data)
{
  GtkSelectionModel *selection = qstore_inspector_data_page_get_selection (b->page);
  g_autofree char *text = NULL;
  g_autofree char *json = NULL;
  g_autofree char *cell = NULL;
  g_autofree char *row_json = NULL;
  g_autofree char *far = NULL;
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GError) error = NULL;
  JsonArray *array;
  JsonObject *object;

  /* Ctrl+C and Ctrl+Shift+C run the copies below. */
  g_assert_true (has_shortcut (GTK_WIDGET (b->page), GDK_KEY_c, GDK_CONTROL_MASK, "data.copy"));
  g_assert_true (has_shortcut (GTK_WIDGET (b->page), GDK_KEY_c, GDK_CONTROL_MASK | GDK_SHIFT_MASK,
                               "data.copy-json"));

  gtk_selection_model_select_range (selection, 2, 3, TRUE);
  text = copy_with (b, "data.copy");
  /* Tab-separated; NULL empty; a blob as a literal; a field with a tab or
   * a quote quoted. */
  g_assert_cmpstr (text, ==,
                   "3\tname 3\t2.5\t\tx'00ff10'\n"
                   "4\tname 4\t11.75\teven\t\n"
                   "5\tname 5\t21\t\"tab\there \"\"quoted\"\"\"\t");

  json = copy_with (b, "data.copy-json");
  json_parser_load_from_data (parser, json, -1, &error);
  g_assert_no_error (error);
  array = json_node_get_array (json_parser_get_root (parser));
  g_assert_cmpuint (json_array_get_length (array), ==, 3);
  object = json_array_get_object_element (array, 0);
  g_assert_cmpint (json_object_get_int_member (object, "id"), ==, 3);
  g_assert_cmpstr (json_object_get_string_member (object, "name"), ==, "name 3");
  g_assert_cmpfloat (json_object_get_double_member (object, "score"), ==, 2.5);
  g_assert_true (json_object_get_null_member (object, "note"));
  g_assert_cmpstr (json_object_get_string_member (json_object_get_object_member (object, "photo"), "$blob"),
                   ==, "AP8Q");
  object = json_array_get_object_element (array, 2);
  g_assert_cmpstr (json_object_get_string_member (object, "note"), ==, "tab\there \"quoted\"");

  /* The menu of a right click on “name” of the 8th row. */
  qstore_inspector_data_page_popup_menu (b->page, 7, 1, 10, 10);
  test_run_for (50);
  g_assert_true (gtk_widget_get_visible (qstore_inspector_data_page_get_part (b->page, "context-menu")));
  cell = copy_with (b, "data.copy-cell");
  g_assert_cmpstr (cell, ==, "name 8");
  row_json = copy_with (b, "data.copy-row-json");
  g_clear_object (&parser);
  parser = json_parser_new ();
  json_parser_load_from_data (parser, row_json, -1, &error);
  g_assert_no_error (error);
  object = json_node_get_object (json_parser_get_root (parser));
  g_assert_cmpint (json_object_get_int_member (object, "id"), ==, 8);
  g_assert_cmpstr (json_object_get_string_member (object, "note"), ==, "even");
  gtk_popover_popdown (GTK_POPOVER (qstore_inspector_data_page_get_part (b->page, "context-menu")));

  /* Rows not read yet are read first. */
  gtk_selection_model_select_range (selection, N_PEOPLE - 2, 2, TRUE);
  far = copy_with (b, "data.copy");
  g_assert_true (g_str_has_prefix (far, "449\tname 449\t"));
  g_assert_nonnull (strstr (far, "\n450\tname 450\t"));
}

/* A table that has no rows, created and never written: counted in the
 * background, the same count on both pages, and a status page. */
static void
test_empty_table (Browser       *b,
                  gconstpointer  data)
{
  QStoreInspectorContents *contents = b->store.contents;
  QStoreCatalogEntry *entry = qstore_inspector_contents_lookup_entry (contents, QSTORE_CATALOG_KEY_TABLE,
                                                                      "main", "never_written");
  g_autofree char *before = NULL;
  g_autofree char *during = NULL;
  g_autofree char *after = NULL;

  g_assert_cmpint (qstore_inspector_contents_get_row_count (contents, "main", "never_written"), ==, -1);
  before = qstore_inspector_catalog_page_describe_entry (contents, entry);
  g_assert_cmpstr (before, ==, "2 columns · 0 indexes · row count unknown");

  g_assert_true (qstore_inspector_data_page_select_table (b->page, "main.never_written"));
  qstore_inspector_contents_count_rows (contents, NULL);
  g_assert_true (qstore_inspector_contents_is_counting (contents, "main", "never_written"));
  during = qstore_inspector_catalog_page_describe_entry (contents, entry);
  g_assert_cmpstr (during, ==, "2 columns · 0 indexes · counting rows…");

  wait_idle (b->page);
  while (qstore_inspector_contents_is_counting (contents, "main", "never_written"))
    g_main_context_iteration (NULL, TRUE);
  g_assert_cmpint (qstore_inspector_contents_get_row_count (contents, "main", "never_written"), ==, 0);
  after = qstore_inspector_catalog_page_describe_entry (contents, entry);
  g_assert_cmpstr (after, ==, "2 columns · 0 indexes · 0 rows");

  wait_idle (b->page);
  g_assert_cmpstr (qstore_inspector_data_page_get_state (b->page), ==, "no-rows");
  g_assert_cmpstr (count_text (b), ==, "0 rows");
  test_screenshot (b->window, "data-no-rows");
}

/* The widths the column view gives its header's titles, as shown. */
static void
title_widths (GtkWidget *widget,
              GArray    *widths)
{
  if (g_str_equal (G_OBJECT_TYPE_NAME (widget), "GtkColumnViewTitle"))
    {
      int width = gtk_widget_get_width (widget);

      g_array_append_val (widths, width);
      return;
    }
  for (GtkWidget *child = gtk_widget_get_first_child (widget); child != NULL;
       child = gtk_widget_get_next_sibling (child))
    title_widths (child, widths);
}

/* Column widths come from the first page: rows far wider further down
 * do not move them. */
static void
test_column_widths (Browser       *b,
                    gconstpointer  data)
{
  GtkColumnView *view = GTK_COLUMN_VIEW (qstore_inspector_data_page_get_part (b->page, "column-view"));
  GtkScrolledWindow *scroller = GTK_SCROLLED_WINDOW (gtk_widget_get_parent (GTK_WIDGET (view)));
  GListModel *columns = gtk_column_view_get_columns (view);
  QStoreInspectorRowModel *model = qstore_inspector_data_page_get_model (b->page);
  GtkAdjustment *vertical = gtk_scrolled_window_get_vadjustment (scroller);
  int widths[8] = { 0 };
  g_autoptr(GArray) shown_before = g_array_new (FALSE, FALSE, sizeof (int));
  g_autoptr(GArray) shown_after = g_array_new (FALSE, FALSE, sizeof (int));
  guint n = g_list_model_get_n_items (columns);
  g_autoptr(QStoreInspectorRow) first = test_get_loaded_row (model, 0);

  g_assert_cmpuint (n, ==, 6);
  test_run_for (100);
  title_widths (GTK_WIDGET (view), shown_before);
  g_assert_cmpuint (shown_before->len, ==, n);
  for (guint i = 0; i < n; i++)
    {
      g_autoptr(GtkColumnViewColumn) column = g_list_model_get_item (columns, i);

      widths[i] = gtk_column_view_column_get_fixed_width (column);
      g_test_message ("column %s: %d px", gtk_column_view_column_get_title (column), widths[i]);
      g_assert_cmpint (widths[i], >, 0);
    }

  /* To the bottom, where notes are 300 characters long. */
  gtk_adjustment_set_value (vertical, gtk_adjustment_get_upper (vertical));
  test_run_for (100);
  {
    g_autoptr(QStoreInspectorRow) last = test_get_loaded_row (model, N_PEOPLE - 1);
  }
  test_run_for (200);
  for (guint i = 0; i < n; i++)
    {
      g_autoptr(GtkColumnViewColumn) column = g_list_model_get_item (columns, i);

      g_assert_cmpint (gtk_column_view_column_get_fixed_width (column), ==, widths[i]);
    }
  /* As shown: the same widths. */
  title_widths (GTK_WIDGET (view), shown_after);
  g_assert_cmpuint (shown_after->len, ==, n);
  for (guint i = 0; i < n; i++)
    {
      g_test_message ("column %u shown %d px, then %d px", i,
                      g_array_index (shown_before, int, i), g_array_index (shown_after, int, i));
      g_assert_cmpint (g_array_index (shown_after, int, i), ==, g_array_index (shown_before, int, i));
    }
}

/* Narrower than its columns, the table scrolls sideways. */
static void
test_narrow_scrolls (Browser       *b,
                     gconstpointer  data)
{
  GtkColumnView *view = GTK_COLUMN_VIEW (qstore_inspector_data_page_get_part (b->page, "column-view"));
  GtkScrolledWindow *scroller = GTK_SCROLLED_WINDOW (gtk_widget_get_parent (GTK_WIDGET (view)));
  GtkAdjustment *horizontal = gtk_scrolled_window_get_hadjustment (scroller);
  QStoreInspectorRowModel *model = qstore_inspector_data_page_get_model (b->page);
  g_autoptr(QStoreInspectorRow) first = test_get_loaded_row (model, 0);

  test_run_for (300);
  g_assert_cmpint (gtk_widget_get_width (b->window), ==, 360);
  g_test_message ("columns %0.f px wide in a %0.f px view",
                  gtk_adjustment_get_upper (horizontal), gtk_adjustment_get_page_size (horizontal));
  g_assert_cmpfloat (gtk_adjustment_get_upper (horizontal), >, gtk_adjustment_get_page_size (horizontal));
  gtk_adjustment_set_value (horizontal, gtk_adjustment_get_upper (horizontal));
  test_run_for (100);
  g_assert_cmpfloat (gtk_adjustment_get_value (horizontal), >, 0);
}

static GtkWidget *
find_label_with_class (GtkWidget  *root,
                       const char *css_class,
                       guint       skip)
{
  guint seen = 0;
  GtkWidget *widget = root;

  /* Depth first, without recursion: a preferences page nests deeply. */
  while (widget != NULL)
    {
      if (GTK_IS_LABEL (widget) && gtk_widget_has_css_class (widget, css_class) && seen++ == skip)
        return widget;
      if (gtk_widget_get_first_child (widget) != NULL)
        widget = gtk_widget_get_first_child (widget);
      else
        {
          while (widget != NULL && widget != root && gtk_widget_get_next_sibling (widget) == NULL)
            widget = gtk_widget_get_parent (widget);
          widget = widget == NULL || widget == root ? NULL : gtk_widget_get_next_sibling (widget);
        }
    }
  return NULL;
}

/* A row's window: a long value whole, a blob as its size and hex. */
static void
test_row_details (Browser       *b,
                  gconstpointer  data)
{
  QStoreInspectorRowModel *model = qstore_inspector_data_page_get_model (b->page);
  g_autoptr(QStoreInspectorRow) blob_row = test_get_loaded_row (model, 2);
  g_autoptr(QStoreInspectorRow) long_row = test_get_loaded_row (model, N_PEOPLE - 1);
  GtkWindow *window;
  GtkWidget *photo;
  GtkWidget *note;

  window = qstore_inspector_data_page_show_row (b->page, 2);
  g_assert_nonnull (window);
  test_run_for (300);
  g_assert_cmpstr (gtk_window_get_title (window), ==, "Row 3");
  /* id, name, score, note, photo: the fifth value is the blob. */
  photo = find_label_with_class (GTK_WIDGET (window), "text-box", 4);
  g_assert_nonnull (photo);
  g_assert_cmpstr (gtk_label_get_label (GTK_LABEL (photo)), ==,
                   "00000000  00 ff 10                                          |...|");
  g_assert_true (gtk_widget_has_css_class (photo, "code"));
  test_screenshot (GTK_WIDGET (window), "row-details");
  gtk_window_destroy (window);

  window = qstore_inspector_data_page_show_row (b->page, N_PEOPLE - 1);
  test_run_for (200);
  note = find_label_with_class (GTK_WIDGET (window), "text-box", 3);
  g_assert_cmpint (strlen (gtk_label_get_label (GTK_LABEL (note))), ==, 300);
  /* Wrapped to the window, not one line as wide as the text. */
  g_assert_cmpint (gtk_widget_get_width (note), <=, gtk_widget_get_width (GTK_WIDGET (window)));
  g_assert_cmpint (gtk_widget_get_height (note), >, 3 * 14);
  gtk_window_destroy (window);
}

/* The chooser: typing as it opens goes to its search, which finds a
 * name by any part of it; Enter takes the first match. */
static void
test_chooser (Browser       *b,
              gconstpointer  data)
{
  GtkMenuButton *button = GTK_MENU_BUTTON (qstore_inspector_data_page_get_part (b->page, "table-button"));
  GtkWidget *search = qstore_inspector_data_page_get_part (b->page, "table-search");
  GListModel *found = qstore_inspector_data_page_get_chooser_model (b->page);

  g_assert_cmpuint (g_list_model_get_n_items (found), ==, 3);
  gtk_menu_button_popup (button);
  test_run_for (200);
  g_assert_true (gtk_widget_get_visible (qstore_inspector_data_page_get_part (b->page, "table-popover")));
  g_assert_true (gtk_widget_has_focus (search) ||
                 gtk_widget_is_ancestor (gtk_root_get_focus (gtk_widget_get_root (search)), search));
  /* Keys typed in its list reach the search too. */
  g_assert_true (gtk_search_entry_get_key_capture_widget (GTK_SEARCH_ENTRY (search)) != NULL);

  gtk_editable_set_text (GTK_EDITABLE (search), "VIEW");
  g_signal_emit_by_name (search, "search-changed");
  g_assert_cmpuint (g_list_model_get_n_items (found), ==, 1);
  g_signal_emit_by_name (search, "activate");
  test_run_for (100);
  g_assert_cmpstr (qstore_inspector_data_page_get_table (b->page), ==, "main.people_view");
  g_assert_false (gtk_widget_get_visible (qstore_inspector_data_page_get_part (b->page, "table-popover")));
  wait_idle (b->page);
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (qstore_inspector_data_page_get_model (b->page))),
                    ==, 30);
}

int
main (int    argc,
      char **argv)
{
  gtk_test_init (&argc, &argv, NULL);
  adw_init ();

#define ADD(name, func) \
  g_test_add ("/inspector-browser/" name, Browser, NULL, browser_set_up, func, browser_tear_down)
  ADD ("sort", test_sort);
  ADD ("search", test_search);
  ADD ("copy", test_copy);
  ADD ("empty-table", test_empty_table);
  ADD ("column-widths", test_column_widths);
  g_test_add ("/inspector-browser/narrow-scrolls", Browser, GINT_TO_POINTER (360),
              browser_set_up, test_narrow_scrolls, browser_tear_down);
  ADD ("row-details", test_row_details);
  ADD ("chooser", test_chooser);
#undef ADD

  return g_test_run ();
}
