/* test-inspector-view-rows.c: the data page shows the rows of plain views
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A view has no stored rows: its model runs SQL on the store opened
 * read-only. What it shows must be what SQL returns, and reading it must
 * leave the store's files as they were.
 *
 * Runs under a display (xvfb-run) with GSETTINGS_BACKEND=memory, once per
 * test_provider (QSTORE_TEST_PROVIDER = lmdb or sqlite).
 */
#include "config.h"

#include <adwaita.h>

#include "inspector-test-util.h"
#include "qstore-inspector-contents.h"
#include "qstore-inspector-data-page.h"
#include "qstore-inspector-row-model.h"

#define N_PEOPLE 450
#define HOSTILE_VIEW "we\"ird view"

static void
fixture_set_up (Fixture       *f,
                gconstpointer  data)
{
  g_autoptr(GError) error = NULL;

  f->dir = g_dir_make_tmp ("qstore-view-rows-XXXXXX", &error);
  g_assert_no_error (error);
  f->uri = test_provider_uri (f->dir, "store");

  /* The view's order is not the table's key order: the model must show
   * the rows as SQL gives them. */
  test_exec_at (f->uri,
             "CREATE TABLE people ("
             "  id INTEGER PRIMARY KEY,"
             "  name TEXT NOT NULL,"
             "  score REAL);"
             "INSERT INTO people (id, name, score)"
             "  WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 450)"
             "  SELECT i, 'name ' || i, CASE WHEN i % 3 = 0 THEN NULL ELSE i / 4.0 END FROM n;"
             "CREATE VIEW people_view AS"
             "  SELECT id, upper(name) AS shout, score FROM people ORDER BY id DESC;"
             "CREATE VIEW \"we\"\"ird view\" AS SELECT name AS \"odd \"\" column\" FROM people WHERE id <= 3;"
             "CREATE TABLE gone (x INTEGER PRIMARY KEY);"
             "CREATE VIEW gone_view AS SELECT x FROM gone;"
             "DROP TABLE gone;"
             "CREATE MATERIALIZED VIEW mv AS SELECT id, name FROM people;");
}

/* Waiting */

static gboolean
model_settled (gpointer data)
{
  QStoreInspectorRowModel *model = data;

  return !qstore_inspector_row_model_is_busy (model) &&
         (qstore_inspector_row_model_get_column_names (model) != NULL ||
          qstore_inspector_row_model_get_error (model) != NULL);
}

static void
wait_settled (QStoreInspectorRowModel *model)
{
  test_wait (model_settled, model, 30);
}

/* What SQL itself returns, from a database opened read-only too. */
static QStoreResult *
query (const char *uri,
       const char *sql)
{
  g_autoptr(QStoreDatabase) db = NULL;
  g_autoptr(QStoreResult) result = NULL;
  g_autoptr(GError) error = NULL;

  db = qstore_database_open (uri, QSTORE_OPEN_READ_ONLY, &error);
  g_assert_no_error (error);
  result = qstore_database_query (db, sql, NULL, &error);
  g_assert_no_error (error);
  qstore_database_close (db, &error);
  g_assert_no_error (error);
  return g_steal_pointer (&result);
}

static void
assert_row_equal (QStoreInspectorRow *row,
                  GVariant           *expected)
{
  GVariant *values = qstore_inspector_row_get_values (row);

  g_assert_null (qstore_inspector_row_get_error (row));
  g_assert_nonnull (values);
  if (!g_variant_equal (values, expected))
    {
      g_autofree char *got = g_variant_print (values, TRUE);
      g_autofree char *want = g_variant_print (expected, TRUE);

      g_error ("row %u is %s, SQL gives %s", qstore_inspector_row_get_position (row), got, want);
    }
}

static void
count_items_changed (GListModel *model,
                     guint       position,
                     guint       removed,
                     guint       added,
                     guint      *n_added)
{
  *n_added += added;
}

/* Rows */

static void
test_rows (Fixture       *f,
           gconstpointer  data)
{
  g_autoptr(QStoreInspectorRowModel) model = NULL;
  g_autoptr(QStoreResult) count = NULL;
  g_autoptr(QStoreResult) all = NULL;
  g_autoptr(QStoreInspectorRow) first = NULL;
  g_autoptr(QStoreInspectorRow) last = NULL;
  g_autoptr(GVariant) id = NULL;
  g_autoptr(GVariant) shout = NULL;
  g_autoptr(GVariant) score = NULL;
  g_autoptr(GError) error = NULL;
  const char * const *names;
  guint n_added = 0;

  count = query (f->uri, "SELECT count(*) FROM \"main\".\"people_view\"");
  all = query (f->uri, "SELECT * FROM \"main\".\"people_view\"");
  g_assert_cmpuint (qstore_result_get_n_rows (all), ==, N_PEOPLE);

  model = qstore_inspector_row_model_new_for_view (f->uri, "main", "people_view", &error);
  g_assert_no_error (error);
  g_assert_nonnull (model);
  g_assert_cmpstr (qstore_inspector_row_model_get_schema (model), ==, "main");
  g_assert_cmpstr (qstore_inspector_row_model_get_table (model), ==, "people_view");

  /* Nothing is known before the worker has run the view's SQL. */
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (model)), ==, 0);
  g_assert_null (qstore_inspector_row_model_get_column_names (model));
  g_assert_true (qstore_inspector_row_model_is_busy (model));
  g_signal_connect (model, "items-changed", G_CALLBACK (count_items_changed), &n_added);

  wait_settled (model);
  g_assert_null (qstore_inspector_row_model_get_error (model));
  g_assert_cmpuint (n_added, ==, N_PEOPLE);
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (model)), ==, N_PEOPLE);
  {
    g_autoptr(GVariant) n = qstore_result_get_value (count, 0, 0);

    g_assert_cmpint (g_variant_get_int64 (n), ==, g_list_model_get_n_items (G_LIST_MODEL (model)));
  }

  names = qstore_inspector_row_model_get_column_names (model);
  g_assert_nonnull (names);
  g_assert_cmpuint (g_strv_length ((char **) names), ==, qstore_result_get_n_columns (all));
  for (guint i = 0; names[i] != NULL; i++)
    g_assert_cmpstr (names[i], ==, qstore_result_get_column_name (all, i));
  g_assert_cmpstr (names[1], ==, "shout");

  /* The first page: every row as SQL returns it, from one fetch. */
  first = test_get_loaded_row (model, 0);
  for (guint i = 0; i < QSTORE_INSPECTOR_ROW_PAGE_SIZE; i++)
    {
      g_autoptr(QStoreInspectorRow) row = g_list_model_get_item (G_LIST_MODEL (model), i);

      g_assert_true (qstore_inspector_row_is_loaded (row));
      assert_row_equal (row, qstore_result_get_row (all, i));
    }
  g_assert_cmpuint (qstore_inspector_row_model_get_n_loaded_pages (model), ==, 1);
  id = qstore_inspector_row_get_value (first, 0);
  g_assert_cmpint (g_variant_get_int64 (id), ==, N_PEOPLE);
  shout = qstore_inspector_row_get_value (first, 1);
  g_assert_cmpstr (g_variant_get_string (shout, NULL), ==, "NAME 450");
  score = qstore_inspector_row_get_value (first, 2);
  g_assert_true (qstore_value_is_null (score));

  /* The last row, on a page of its own (450 = 2 × 200 + 50). */
  last = test_get_loaded_row (model, N_PEOPLE - 1);
  assert_row_equal (last, qstore_result_get_row (all, N_PEOPLE - 1));
  g_clear_pointer (&id, g_variant_unref);
  id = qstore_inspector_row_get_value (last, 0);
  g_assert_cmpint (g_variant_get_int64 (id), ==, 1);
  g_assert_cmpuint (qstore_inspector_row_model_get_n_loaded_pages (model), ==, 2);
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (model)), ==, N_PEOPLE);

  /* The page between: its rows are there too. */
  {
    g_autoptr(QStoreInspectorRow) middle = test_get_loaded_row (model, 321);

    assert_row_equal (middle, qstore_result_get_row (all, 321));
  }
  g_assert_null (qstore_inspector_row_model_get_error (model));
}

/* Identifiers with a quote and a space reach SQL quoted, quotes doubled. */
static void
test_hostile_name (Fixture       *f,
                   gconstpointer  data)
{
  g_autoptr(QStoreInspectorRowModel) model = NULL;
  g_autoptr(QStoreInspectorRow) row = NULL;
  g_autoptr(GVariant) name = NULL;
  g_autoptr(GError) error = NULL;
  const char * const *names;

  model = qstore_inspector_row_model_new_for_view (f->uri, "main", HOSTILE_VIEW, &error);
  g_assert_no_error (error);
  wait_settled (model);
  g_assert_null (qstore_inspector_row_model_get_error (model));
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (model)), ==, 3);
  names = qstore_inspector_row_model_get_column_names (model);
  g_assert_cmpuint (g_strv_length ((char **) names), ==, 1);
  g_assert_cmpstr (names[0], ==, "odd \" column");

  row = test_get_loaded_row (model, 2);
  name = qstore_inspector_row_get_value (row, 0);
  g_assert_cmpstr (g_variant_get_string (name, NULL), ==, "name 3");
}

static GtkWidget *
find_descendant (GtkWidget *widget,
                 GType      type)
{
  if (G_TYPE_CHECK_INSTANCE_TYPE (widget, type))
    return widget;
  for (GtkWidget *child = gtk_widget_get_first_child (widget);
       child != NULL;
       child = gtk_widget_get_next_sibling (child))
    {
      GtkWidget *found = find_descendant (child, type);

      if (found != NULL)
        return found;
    }
  return NULL;
}

/* The page's own stack, not one inside the drop-down. */
static GtkStack *
find_page_stack (GtkWidget *widget)
{
  if (GTK_IS_STACK (widget) && gtk_stack_get_child_by_name (GTK_STACK (widget), "error") != NULL)
    return GTK_STACK (widget);
  for (GtkWidget *child = gtk_widget_get_first_child (widget);
       child != NULL;
       child = gtk_widget_get_next_sibling (child))
    {
      GtkStack *found = find_page_stack (child);

      if (found != NULL)
        return found;
    }
  return NULL;
}

static gboolean
page_has_error (gpointer data)
{
  return qstore_inspector_data_page_get_error (data) != NULL;
}

/* A view that reads a dropped table, and a store that does not open:
 * the model's error names the view, and the page shows it. */
static void
test_broken_view (Fixture       *f,
                  gconstpointer  data)
{
  g_autoptr(QStoreInspectorRowModel) model = NULL;
  g_autoptr(QStoreInspectorRowModel) nowhere = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *missing_dir = g_build_filename (f->dir, "missing", NULL);
  g_autofree char *missing_uri = test_provider_uri (missing_dir, "store");
  QStoreInspectorDataPage *page;
  const GError *model_error;
  GtkStack *stack;

  model = qstore_inspector_row_model_new_for_view (f->uri, "main", "gone_view", &error);
  g_assert_no_error (error);
  wait_settled (model);
  model_error = qstore_inspector_row_model_get_error (model);
  g_assert_nonnull (model_error);
  g_test_message ("%s", model_error->message);
  g_assert_nonnull (strstr (model_error->message, "“main.gone_view”"));
  g_assert_nonnull (strstr (model_error->message, "gone"));
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (model)), ==, 0);
  g_assert_false (qstore_inspector_row_model_is_busy (model));

  nowhere = qstore_inspector_row_model_new_for_view (missing_uri, "main", "people_view", &error);
  g_assert_no_error (error);
  wait_settled (nowhere);
  model_error = qstore_inspector_row_model_get_error (nowhere);
  g_assert_nonnull (model_error);
  g_test_message ("%s", model_error->message);
  g_assert_nonnull (strstr (model_error->message, "“main.people_view”"));
  g_assert_false (g_file_test (missing_dir, G_FILE_TEST_EXISTS));

  page = g_object_ref_sink (g_object_new (QSTORE_INSPECTOR_TYPE_DATA_PAGE, NULL));
  f->contents = test_load (f->uri);
  qstore_inspector_data_page_set_contents (page, f->contents);
  g_assert_null (qstore_inspector_data_page_get_error (page));
  g_assert_true (qstore_inspector_data_page_select_table (page, "main.gone_view"));
  g_assert_cmpstr (qstore_inspector_data_page_get_table (page), ==, "main.gone_view");
  test_wait (page_has_error, page, 30);
  g_assert_nonnull (strstr (qstore_inspector_data_page_get_error (page), "“main.gone_view”"));
  stack = find_page_stack (GTK_WIDGET (page));
  g_assert_nonnull (stack);
  g_assert_cmpstr (gtk_stack_get_visible_child_name (stack), ==, "error");

  /* A good view after it shows rows again. */
  g_assert_true (qstore_inspector_data_page_select_table (page, "main.people_view"));
  g_assert_null (qstore_inspector_data_page_get_error (page));
  g_assert_cmpstr (gtk_stack_get_visible_child_name (stack), ==, "rows");

  g_object_unref (page);
}

static gboolean
list_has (GListModel *list,
          const char *string)
{
  for (guint i = 0; i < g_list_model_get_n_items (list); i++)
    if (g_str_equal (gtk_string_list_get_string (GTK_STRING_LIST (list), i), string))
      return TRUE;
  return FALSE;
}

static gboolean
page_has_columns (gpointer data)
{
  return qstore_inspector_data_page_get_n_columns (data) > 0;
}

/* The page lists tables, then views (labelled), never a materialized
 * view's contents table; choosing a view shows its columns from SQL. */
static void
test_data_page (Fixture       *f,
                gconstpointer  data)
{
  QStoreInspectorDataPage *page = g_object_ref_sink (g_object_new (QSTORE_INSPECTOR_TYPE_DATA_PAGE, NULL));
  g_autoptr(QStoreInspectorRow) row = NULL;
  g_autoptr(GVariant) shout = NULL;
  g_autofree char *hostile = g_strconcat ("main.", HOSTILE_VIEW, NULL);
  g_autofree char *hostile_label = g_strconcat ("main.", HOSTILE_VIEW, " (view)", NULL);
  const char *titles[] = { "#", "id", "shout", "score" };
  QStoreInspectorRowModel *model;
  GtkColumnView *column_view;
  GListModel *columns;
  GListModel *labels;
  GListModel *tables;
  GListModel *views;

  f->contents = test_load (f->uri);
  /* The contents table is really there, to be left out. */
  {
    QStoreCatalogEntry *mv = qstore_inspector_contents_lookup_entry (f->contents, QSTORE_CATALOG_KEY_TABLE,
                                                                     "main", "mv");

    g_assert_nonnull (mv);
    g_assert_true (qstore_catalog_entry_is_materialized_view_contents (mv));
  }

  qstore_inspector_data_page_set_contents (page, f->contents);
  tables = qstore_inspector_data_page_get_tables (page);
  views = qstore_inspector_data_page_get_views (page);
  labels = qstore_inspector_data_page_get_labels (page);

  g_assert_cmpuint (g_list_model_get_n_items (tables), ==, 1);
  g_assert_cmpstr (gtk_string_list_get_string (GTK_STRING_LIST (tables), 0), ==, "main.people");
  g_assert_cmpuint (g_list_model_get_n_items (views), ==, 3);
  g_assert_true (list_has (views, "main.people_view"));
  g_assert_true (list_has (views, "main.gone_view"));
  g_assert_true (list_has (views, hostile));

  /* Tables, then materialized views, then views, as the drop-down shows
   * them; the materialized view's contents table is not a table of its own. */
  g_assert_cmpuint (g_list_model_get_n_items (labels), ==, 5);
  g_assert_cmpstr (gtk_string_list_get_string (GTK_STRING_LIST (labels), 1), ==,
                   "main.mv (materialized view)");
  g_assert_cmpstr (gtk_string_list_get_string (GTK_STRING_LIST (labels), 0), ==, "main.people");
  g_assert_true (list_has (labels, "main.people_view (view)"));
  g_assert_true (list_has (labels, hostile_label));
  g_assert_false (list_has (labels, "main.mv"));
  g_assert_false (list_has (labels, "main.people_view"));
  g_assert_cmpstr (qstore_inspector_data_page_get_table (page), ==, "main.people");

  g_assert_true (qstore_inspector_data_page_select_table (page, "main.people_view"));
  g_assert_cmpstr (qstore_inspector_data_page_get_table (page), ==, "main.people_view");
  test_wait (page_has_columns, page, 30);
  g_assert_cmpuint (qstore_inspector_data_page_get_n_columns (page), ==, 3);
  column_view = GTK_COLUMN_VIEW (find_descendant (GTK_WIDGET (page), GTK_TYPE_COLUMN_VIEW));
  columns = gtk_column_view_get_columns (column_view);
  g_assert_cmpuint (g_list_model_get_n_items (columns), ==, G_N_ELEMENTS (titles));
  for (guint i = 0; i < G_N_ELEMENTS (titles); i++)
    {
      g_autoptr(GtkColumnViewColumn) column = g_list_model_get_item (columns, i);

      g_assert_cmpstr (gtk_column_view_column_get_title (column), ==, titles[i]);
    }

  model = qstore_inspector_data_page_get_model (page);
  row = test_get_loaded_row (model, 0);
  shout = qstore_inspector_row_get_value (row, 1);
  g_assert_cmpstr (g_variant_get_string (shout, NULL), ==, "NAME 450");
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (model)), ==, N_PEOPLE);
  g_assert_null (qstore_inspector_data_page_get_error (page));

  /* Read again, the page keeps showing the view. */
  g_clear_object (&f->contents);
  f->contents = test_load (f->uri);
  qstore_inspector_data_page_set_contents (page, f->contents);
  g_assert_cmpstr (qstore_inspector_data_page_get_table (page), ==, "main.people_view");
  test_wait (page_has_columns, page, 30);

  /* And back to the table, whose columns come from its catalog entry. */
  g_assert_true (qstore_inspector_data_page_select_table (page, "main.people"));
  g_assert_cmpuint (qstore_inspector_data_page_get_n_columns (page), ==, 3);
  g_assert_null (qstore_inspector_row_model_get_column_names (qstore_inspector_data_page_get_model (page)));

  g_object_unref (page);
}

/* Read-only */

static void
test_read_only (Fixture       *f,
                gconstpointer  data)
{
  g_autoptr(GHashTable) before = NULL;
  g_autoptr(GHashTable) during = NULL;
  g_autoptr(GHashTable) after = NULL;
  g_autoptr(QStoreInspectorRowModel) model = NULL;
  g_autoptr(QStoreInspectorRow) first = NULL;
  g_autoptr(QStoreInspectorRow) last = NULL;
  g_autoptr(QStoreProvider) reader = NULL;
  g_autoptr(QStoreStaleReport) report = NULL;
  g_autoptr(GError) error = NULL;

  /* The fixture's last statement closed the store cleanly: it has its
   * clean-shutdown marker, which a writing open would consume. */
  before = test_checksum_store (f->dir);

  model = qstore_inspector_row_model_new_for_view (f->uri, "main", "people_view", &error);
  g_assert_no_error (error);
  wait_settled (model);
  first = test_get_loaded_row (model, 0);
  last = test_get_loaded_row (model, N_PEOPLE - 1);
  g_assert_cmpuint (qstore_inspector_row_model_get_n_loaded_pages (model), ==, 2);

  during = test_checksum_store (f->dir);
  test_assert_same_sums (before, during);

  /* The model closes its database from a worker thread once dropped. */
  g_clear_object (&first);
  g_clear_object (&last);
  g_clear_object (&model);
  test_run_for (300);

  after = test_checksum_store (f->dir);
  test_assert_same_sums (before, after);

  reader = qstore_provider_new_for_uri (f->uri, QSTORE_OPEN_READ_ONLY, &error);
  g_assert_no_error (error);
  report = qstore_stale_report_new (reader, &error);
  g_assert_no_error (error);
  g_assert_true (qstore_stale_report_get_marker_present (report));
  qstore_provider_close_all (reader);
}

int
main (int    argc,
      char **argv)
{
  gtk_test_init (&argc, &argv, NULL);
  adw_init ();

#define ADD(name, func) \
  g_test_add ("/inspector-view-rows/" name, Fixture, NULL, fixture_set_up, func, fixture_tear_down)
  ADD ("rows", test_rows);
  ADD ("hostile-name", test_hostile_name);
  ADD ("broken-view", test_broken_view);
  ADD ("data-page", test_data_page);
  ADD ("read-only", test_read_only);
#undef ADD

  return g_test_run ();
}
