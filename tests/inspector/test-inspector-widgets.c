/* test-inspector-widgets.c: each page of qstore-inspector against a known store
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Runs under a display (xvfb-run) with GSETTINGS_BACKEND=memory, once per
 * test_provider (QSTORE_TEST_PROVIDER = lmdb or sqlite).
 */
#include "config.h"

#include <adwaita.h>

#include "inspector-test-util.h"
#include "qstore-inspector-catalog-page.h"
#include "qstore-inspector-contents.h"
#include "qstore-inspector-data-page.h"
#include "qstore-inspector-names.h"
#include "qstore-inspector-row-model.h"
#include "qstore-inspector-stale-page.h"

static void
fixture_set_up (Fixture       *f,
                gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) mv_bad = qstore_catalog_key_for_materialized_view ("main", "mv_bad");
  g_autoptr(GBytes) mv_planted = qstore_catalog_key_for_materialized_view ("main", "mv_planted");
  g_autoptr(GBytes) stale_set = qstore_catalog_key_for_meta ("stale_mvs");
  g_autoptr(GBytes) broken = qstore_catalog_key_for_table ("main", "broken");

  f->dir = g_dir_make_tmp ("qstore-inspector-XXXXXX", &error);
  g_assert_no_error (error);
  f->uri = test_provider_uri (f->dir, "store");

  test_exec_at (f->uri,
             "CREATE TABLE people ("
             "  id INTEGER PRIMARY KEY,"
             "  name TEXT COLLATE NOCASE NOT NULL,"
             "  email TEXT UNIQUE,"
             "  score REAL DEFAULT 0,"
             "  note TEXT);"
             "CREATE INDEX people_name ON people (name);"
             "CREATE TABLE pairs (a TEXT, b INTEGER, c BLOB, PRIMARY KEY (a, b));"
             "CREATE VIEW high_scores AS SELECT name, score FROM people WHERE score > 40;"
             "INSERT INTO people (id, name, email, score, note)"
             "  WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 450)"
             "  SELECT i, 'name ' || i, 'p' || i || '@example.org', i / 10.0,"
             "         CASE WHEN i % 2 = 0 THEN 'even' END FROM n;"
             "INSERT INTO pairs VALUES ('x', 1, x'00ff'), ('x', 2, NULL), ('y', 1, x'');"
             "CREATE MATERIALIZED VIEW mv_a AS SELECT id, name FROM people;"
             "CREATE MATERIALIZED VIEW mv_b AS SELECT count(*) AS n FROM mv_a;"
             "CREATE MATERIALIZED VIEW mv_groups AS"
             "  SELECT email, count(*) AS n FROM people GROUP BY email;");

  /* Without the durable stale set the clean-shutdown marker decides, as
   * after a session whose commits went store by store. */
  test_plant (f->uri, stale_set, NULL);
  test_plant (f->uri, mv_bad, "CREATE MATERIALIZED VIEW mv_bad");
  /* A view whose rows were never stored: only a writer can compute them. */
  test_plant (f->uri, mv_planted, "CREATE MATERIALIZED VIEW mv_planted AS SELECT id FROM people");
  test_plant (f->uri, broken, "this is not SQL");
}

static void
plant_marker (Fixture    *f,
              const char *value)
{
  g_autoptr(GBytes) key = qstore_catalog_key_for_meta ("clean_shutdown");

  test_plant (f->uri, key, value);
}

static gboolean
strv_has (const char * const *lines,
          const char         *line)
{
  return g_strv_contains (lines, line);
}

static gboolean
strv_has_prefix (const char * const *lines,
                 const char         *prefix)
{
  for (guint i = 0; lines[i] != NULL; i++)
    if (g_str_has_prefix (lines[i], prefix))
      return TRUE;
  return FALSE;
}

static void
test_catalog_page (Fixture       *f,
                   gconstpointer  data)
{
  QStoreInspectorCatalogPage *page = g_object_ref_sink (g_object_new (QSTORE_INSPECTOR_TYPE_CATALOG_PAGE, NULL));
  GListModel *model;
  const char * const *lines;
  g_autoptr(QStoreCatalogEntry) first = NULL;
  g_autoptr(QStoreCatalogEntry) last = NULL;
  g_autofree char *summary = NULL;
  QStoreCatalogEntry *contents_table;

  f->contents = test_load (f->uri);
  qstore_inspector_catalog_page_set_contents (page, f->contents);
  model = qstore_inspector_catalog_page_get_model (page);

  /* broken, pairs, people, high_scores, mv_a, mv_b, mv_bad, mv_groups,
   * mv_planted, clean_shutdown, key_format, tx: tables first, meta
   * entries last. The tables holding the materialized views' rows are
   * shown with the views. */
  g_assert_cmpuint (g_list_model_get_n_items (model), ==, 12);
  first = g_list_model_get_item (model, 0);
  g_assert_cmpint (qstore_catalog_entry_get_kind (first), ==, QSTORE_CATALOG_KEY_TABLE);
  g_assert_cmpstr (qstore_catalog_entry_get_name (first), ==, "broken");
  last = g_list_model_get_item (model, 11);
  g_assert_cmpint (qstore_catalog_entry_get_kind (last), ==, QSTORE_CATALOG_KEY_META);
  for (guint i = 0; i < g_list_model_get_n_items (model); i++)
    {
      g_autoptr(QStoreCatalogEntry) entry = g_list_model_get_item (model, i);

      g_assert_false (qstore_catalog_entry_is_materialized_view_contents (entry));
    }
  contents_table = qstore_inspector_contents_lookup_entry (f->contents, QSTORE_CATALOG_KEY_TABLE,
                                                           "main", "mv_a");
  g_assert_nonnull (contents_table);
  g_assert_true (qstore_catalog_entry_is_materialized_view_contents (contents_table));

  g_assert_true (qstore_inspector_catalog_page_select_name (page, "main.people"));
  summary = qstore_inspector_catalog_page_describe_entry (f->contents,
                                                          qstore_inspector_catalog_page_get_selected (page));
  g_assert_cmpstr (summary, ==, "5 columns · 2 indexes · 450 rows");
  lines = qstore_inspector_catalog_page_get_detail_lines (page);
  g_assert_true (strv_has (lines, "Columns: id — INTEGER"));
  g_assert_true (strv_has (lines, "Columns: name — TEXT · COLLATE NOCASE · NOT NULL"));
  g_assert_true (strv_has (lines, "Columns: score — REAL · DEFAULT 0"));
  g_assert_true (strv_has (lines, "Indexes: people_name — CREATE INDEX people_name ON people (name)"));
  g_assert_true (strv_has (lines, "Statistics: Rows — 450 rows"));

  g_assert_true (qstore_inspector_catalog_page_select_name (page, "main.pairs"));
  lines = qstore_inspector_catalog_page_get_detail_lines (page);
  g_assert_true (strv_has (lines, "Indexes: No indexes"));
  g_assert_true (strv_has (lines, "Statistics: Rows — 3 rows"));

  /* An entry that does not parse shows its error, and the others load. */
  g_assert_true (qstore_inspector_catalog_page_select_name (page, "main.broken"));
  g_assert_nonnull (qstore_catalog_entry_get_error (qstore_inspector_catalog_page_get_selected (page)));
  lines = qstore_inspector_catalog_page_get_detail_lines (page);
  g_assert_true (g_str_has_prefix (lines[1], "Cannot Be Read: "));

  /* Materialized views: query, sources, strategy, the next open's
   * verdict, and the columns and rows of their contents. */
  g_assert_true (qstore_inspector_catalog_page_select_name (page, "main.mv_a"));
  g_clear_pointer (&summary, g_free);
  summary = qstore_inspector_catalog_page_describe_entry (f->contents,
                                                          qstore_inspector_catalog_page_get_selected (page));
  g_assert_cmpstr (summary, ==, "Materialized view · 2 columns · 450 rows");
  lines = qstore_inspector_catalog_page_get_detail_lines (page);
  g_assert_true (strv_has (lines, "Materialized View: Sources — main.people"));
  g_assert_true (strv_has (lines, "Materialized View: Query — SELECT id, name FROM people"));
  g_assert_true (strv_has (lines, "Materialized View: Kept up to date — Row by row: each changed "
                                  "source row is looked up again by its key"));
  g_assert_true (strv_has (lines, "Columns: name — TEXT · COLLATE NOCASE"));
  g_assert_true (strv_has (lines, "Statistics: Rows — 450 rows"));

  g_assert_true (qstore_inspector_catalog_page_select_name (page, "main.mv_b"));
  lines = qstore_inspector_catalog_page_get_detail_lines (page);
  g_assert_true (strv_has (lines, "Materialized View: Sources — main.mv_a"));
  g_assert_true (strv_has (lines, "Materialized View: Kept up to date — In full: computed again "
                                  "once per transaction that changes a source"));
  g_assert_true (strv_has (lines, "Materialized View: Next open — Adopted as stored"));
  g_assert_true (strv_has (lines, "Statistics: Rows — 1 row"));

  g_assert_true (qstore_inspector_catalog_page_select_name (page, "main.mv_groups"));
  lines = qstore_inspector_catalog_page_get_detail_lines (page);
  g_assert_true (strv_has (lines, "Materialized View: Kept up to date — By group: each group a "
                                  "change touches is computed again"));

  /* A definition that does not parse: its error, and no columns. */
  g_assert_true (qstore_inspector_catalog_page_select_name (page, "main.mv_bad"));
  lines = qstore_inspector_catalog_page_get_detail_lines (page);
  g_assert_true (g_str_has_prefix (lines[1], "Cannot Be Read: The catalog entry of materialized "
                                             "view “main.mv_bad” is not a CREATE MATERIALIZED VIEW"));
  for (guint i = 0; lines[i] != NULL; i++)
    {
      g_assert_false (g_str_has_prefix (lines[i], "Columns: "));
      /* The error is told once. */
      g_assert_false (g_str_has_prefix (lines[i], "Materialized View: Does not load"));
    }

  /* One that parses but cannot load read-only: why, and its query. */
  g_assert_true (qstore_inspector_catalog_page_select_name (page, "main.mv_planted"));
  lines = qstore_inspector_catalog_page_get_detail_lines (page);
  g_assert_true (strv_has (lines, "Materialized View: Query — SELECT id FROM people"));
  /* In words for someone who can only look; the library's follow,
   * whatever they are. */
  g_assert_true (strv_has_prefix (lines, "Materialized View: Does not load — Its rows are not stored "
                                         "yet, and the inspector never writes to a store, so it cannot "
                                         "compute them: a program that opens the store for writing "
                                         "will. ("));

  g_assert_true (qstore_inspector_catalog_page_select_name (page, "clean_shutdown"));
  lines = qstore_inspector_catalog_page_get_detail_lines (page);
  g_assert_true (strv_has (lines, "Value: []"));

  g_object_unref (page);
}

static void
test_stale_page (Fixture       *f,
                 gconstpointer  data)
{
  QStoreInspectorStalePage *page = g_object_ref_sink (g_object_new (QSTORE_INSPECTOR_TYPE_STALE_PAGE, NULL));
  struct {
    const char         *marker;
    const char         *summary;
    QStoreStaleVerdict  a, b;
  } cases[] = {
    { "[]", "Present: the store was closed cleanly", QSTORE_STALE_VERDICT_ADOPT, QSTORE_STALE_VERDICT_ADOPT },
    { "[\"main.mv_a\"]", "Present: the store was closed cleanly", QSTORE_STALE_VERDICT_REFILL, QSTORE_STALE_VERDICT_REFILL },
    { "[\"main.mv_b\"]", "Present: the store was closed cleanly", QSTORE_STALE_VERDICT_ADOPT, QSTORE_STALE_VERDICT_REFILL },
    { "[oops", "Present but malformed: the next open trusts no stored view", QSTORE_STALE_VERDICT_REFILL, QSTORE_STALE_VERDICT_REFILL },
    { NULL, "Absent: the last session did not close the store, or a program has it open for writing now", QSTORE_STALE_VERDICT_REFILL, QSTORE_STALE_VERDICT_REFILL },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(QStoreStaleView) a = NULL;
      g_autoptr(QStoreStaleView) b = NULL;
      g_autofree char *sentence = NULL;
      GListModel *model;

      /* The store is opened for writing to plant the marker: let go of
       * the read-only handle first, as another program would have none. */
      qstore_inspector_stale_page_set_contents (page, NULL);
      g_clear_object (&f->contents);
      plant_marker (f, cases[i].marker);
      f->contents = test_load (f->uri);
      qstore_inspector_stale_page_set_contents (page, f->contents);

      g_assert_cmpstr (qstore_inspector_stale_page_get_marker_summary (page), ==, cases[i].summary);
      g_assert_cmpstr (qstore_inspector_stale_page_get_set_summary (page), ==,
                       "Absent: the next open relies on the clean-shutdown marker");
      model = qstore_inspector_stale_page_get_model (page);
      /* mv_a, mv_b, mv_bad, mv_groups, mv_planted */
      g_assert_cmpuint (g_list_model_get_n_items (model), ==, 5);
      a = g_list_model_get_item (model, 0);
      b = g_list_model_get_item (model, 1);
      g_assert_cmpstr (qstore_stale_view_get_name (a), ==, "main.mv_a");
      g_assert_cmpint (qstore_stale_view_get_verdict (a), ==, cases[i].a);
      g_assert_cmpint (qstore_stale_view_get_verdict (b), ==, cases[i].b);
      sentence = qstore_inspector_describe_verdict (b);
      g_assert_true (g_str_has_prefix (sentence, cases[i].b == QSTORE_STALE_VERDICT_ADOPT ? "Adopted: " : "Refilled: "));
      if (i == 2)
        {
          g_autofree char *name = g_strdup_printf ("stale-verdicts-%s", test_provider_spec ());
          GtkWidget *window = gtk_window_new ();

          g_assert_cmpstr (sentence, ==, "Refilled: it was stale when the store was last closed.");

          /* What the page looks like with views to judge. */
          gtk_window_set_default_size (GTK_WINDOW (window), 760, 720);
          gtk_window_set_child (GTK_WINDOW (window), GTK_WIDGET (page));
          gtk_window_present (GTK_WINDOW (window));
          test_run_for (400);
          test_screenshot (window, name);
          gtk_window_set_child (GTK_WINDOW (window), NULL);
          gtk_window_destroy (GTK_WINDOW (window));
        }
      if (i == 1)
        g_assert_cmpstr (sentence, ==, "Refilled: it reads main.mv_a, which is refilled.");
    }

  g_object_unref (page);
}



/* Names in the order people count, and what a store is called. */
static void
test_names (void)
{
  const char *ordered[] = { "a", "a1", "a2", "a10", "A11", "a100", "b", "t01", "t1", "t1x", "t2", "t010" };
  g_autofree char *title = qstore_inspector_store_title ("lmdb:/home/ada/shop/?map_size=1024");
  g_autofree char *location = qstore_inspector_location_of ("sqlite:/srv/notes.db?atomic=0");

  for (guint i = 0; i < G_N_ELEMENTS (ordered); i++)
    for (guint j = 0; j < G_N_ELEMENTS (ordered); j++)
      {
        int cmp = qstore_inspector_natural_compare (ordered[i], ordered[j]);

        if ((i < j && cmp >= 0) || (i > j && cmp <= 0) || (i == j && cmp != 0))
          g_error ("“%s” and “%s” compare as %d", ordered[i], ordered[j], cmp);
      }
  g_assert_cmpstr (title, ==, "shop");
  g_assert_cmpstr (location, ==, "/srv/notes.db");
}

static GtkWidget *
find_list_box (GtkWidget *root)
{
  if (GTK_IS_LIST_BOX (root) && gtk_widget_has_css_class (root, "navigation-sidebar"))
    return root;
  for (GtkWidget *child = gtk_widget_get_first_child (root); child != NULL;
       child = gtk_widget_get_next_sibling (child))
    {
      GtkWidget *found = find_list_box (child);

      if (found != NULL)
        return found;
    }
  return NULL;
}

/* Entries in sections, each in the order people count, the store's
 * bookkeeping in a section of its own, last. */
static void
test_sections (Fixture       *f,
               gconstpointer  data)
{
  QStoreInspectorCatalogPage *page = g_object_new (QSTORE_INSPECTOR_TYPE_CATALOG_PAGE, NULL);
  GtkWidget *window = gtk_window_new ();
  const char *tables[] = { "main.broken", "main.pairs", "main.people",
                           "main.t1", "main.t2", "main.t3", "main.t10", "main.t100" };
  const char *sections[] = { "Tables", "Views", "Materialized Views", "Bookkeeping" };
  g_autoptr(GPtrArray) headers = g_ptr_array_new ();
  GtkListBox *list;
  GListModel *model;
  GtkListBoxRow *row;

  test_exec_at (f->uri, "CREATE TABLE t10 (x); CREATE TABLE t2 (x); CREATE TABLE t100 (x);"
                        "CREATE TABLE T3 (x); CREATE TABLE t1 (x);");
  f->contents = test_load (f->uri);
  gtk_window_set_child (GTK_WINDOW (window), GTK_WIDGET (page));
  gtk_window_present (GTK_WINDOW (window));
  qstore_inspector_catalog_page_set_contents (page, f->contents);
  test_run_for (100);
  model = qstore_inspector_catalog_page_get_model (page);
  for (guint i = 0; i < G_N_ELEMENTS (tables); i++)
    {
      g_autoptr(QStoreCatalogEntry) entry = g_list_model_get_item (model, i);
      g_autofree char *name = g_strconcat (qstore_catalog_entry_get_schema (entry), ".",
                                           qstore_catalog_entry_get_name (entry), NULL);

      g_assert_cmpstr (name, ==, tables[i]);
    }

  list = GTK_LIST_BOX (find_list_box (GTK_WIDGET (page)));
  g_assert_nonnull (list);

  for (guint i = 0; (row = gtk_list_box_get_row_at_index (list, i)) != NULL; i++)
    {
      GtkWidget *header = gtk_list_box_row_get_header (row);

      if (header != NULL)
        g_ptr_array_add (headers, (gpointer) gtk_label_get_label (GTK_LABEL (header)));
    }
  g_assert_cmpuint (headers->len, ==, G_N_ELEMENTS (sections));
  for (guint i = 0; i < G_N_ELEMENTS (sections); i++)
    g_assert_cmpstr (g_ptr_array_index (headers, i), ==, sections[i]);

  /* Under the last heading, the bookkeeping entries and nothing else. */
  for (guint i = g_list_model_get_n_items (model); i-- > 0;)
    {
      g_autoptr(QStoreCatalogEntry) entry = g_list_model_get_item (model, i);

      row = gtk_list_box_get_row_at_index (list, i);
      if (qstore_catalog_entry_get_kind (entry) != QSTORE_CATALOG_KEY_META)
        break;
      g_assert_true (gtk_list_box_row_get_header (row) == NULL ||
                     g_str_equal (gtk_label_get_label (GTK_LABEL (gtk_list_box_row_get_header (row))),
                                  "Bookkeeping"));
      if (gtk_list_box_row_get_header (row) != NULL)
        {
          g_autoptr(QStoreCatalogEntry) before = i > 0 ? g_list_model_get_item (model, i - 1) : NULL;

          g_assert_true (before == NULL || qstore_catalog_entry_get_kind (before) != QSTORE_CATALOG_KEY_META);
        }
    }

  gtk_window_destroy (GTK_WINDOW (window));
}

/* A definition shows as soon as its entry is selected: its text is there
 * and it takes the height its lines need, with no resize in between. */
static void
assert_code_shows (GtkWidget  *page,
                   const char *expected)
{
  GtkWidget *code;
  g_autofree char *text = NULL;
  int height;

  /* One frame or a few: what a person sees right after the click. */
  test_run_for (100);
  code = test_find_by_class (page, "code");
  g_assert_nonnull (code);
  text = test_widget_text (code);
  g_assert_cmpstr (text, ==, expected);
  g_assert_true (gtk_widget_get_mapped (code));
  height = gtk_widget_get_height (code);

  /* As high as its text laid out at its width, at least: a wrapping
   * text view measured before its lines are computed is only as high
   * as its margins. */
  {
    PangoLayout *layout = gtk_widget_create_pango_layout (code, text);
    int text_height;
    int chrome = 0;

    pango_layout_set_width (layout, MAX (1, gtk_widget_get_width (code) - 24) * PANGO_SCALE);
    pango_layout_set_wrap (layout, PANGO_WRAP_WORD_CHAR);
    pango_layout_get_pixel_size (layout, NULL, &text_height);
    g_object_unref (layout);
    if (GTK_IS_TEXT_VIEW (code))
      chrome = gtk_text_view_get_top_margin (GTK_TEXT_VIEW (code)) +
               gtk_text_view_get_bottom_margin (GTK_TEXT_VIEW (code));
    g_test_message ("definition “%.40s”: %d px high, its text %d px", expected, height, text_height);
    g_assert_cmpint (text_height, >, 0);
    g_assert_cmpint (height, >=, text_height + chrome);
  }
}

static void
test_definition_shows (Fixture       *f,
                       gconstpointer  data)
{
  QStoreInspectorCatalogPage *page = g_object_new (QSTORE_INSPECTOR_TYPE_CATALOG_PAGE, NULL);
  GtkWidget *window = gtk_window_new ();
  QStoreCatalogEntry *view;
  QStoreCatalogEntry *meta;

  f->contents = test_load (f->uri);
  gtk_window_set_default_size (GTK_WINDOW (window), 1100, 720);
  gtk_window_set_child (GTK_WINDOW (window), GTK_WIDGET (page));
  gtk_window_present (GTK_WINDOW (window));
  qstore_inspector_catalog_page_set_contents (page, f->contents);
  test_run_for (200);

  view = qstore_inspector_contents_lookup_entry (f->contents, QSTORE_CATALOG_KEY_VIEW, "main", "high_scores");
  meta = qstore_inspector_contents_lookup_entry (f->contents, QSTORE_CATALOG_KEY_META, NULL, "clean_shutdown");
  g_assert_nonnull (view);
  g_assert_nonnull (meta);

  /* Twice each, as the second selection of a kind was empty too. */
  for (guint round = 0; round < 2; round++)
    {
      g_assert_true (qstore_inspector_catalog_page_select_name (page, "main.high_scores"));
      assert_code_shows (GTK_WIDGET (page), qstore_catalog_entry_get_ddl (view));
      g_assert_true (qstore_inspector_catalog_page_select_name (page, "clean_shutdown"));
      assert_code_shows (GTK_WIDGET (page), qstore_catalog_entry_get_value (meta));
    }

  gtk_window_destroy (GTK_WINDOW (window));
}

static gint64
row_int (QStoreInspectorRow *row,
         guint               column)
{
  g_autoptr(GVariant) value = qstore_inspector_row_get_value (row, column);

  g_assert_true (g_variant_is_of_type (value, G_VARIANT_TYPE_INT64));
  return g_variant_get_int64 (value);
}

static char *
row_text (QStoreInspectorRow *row,
          guint               column)
{
  g_autoptr(GVariant) value = qstore_inspector_row_get_value (row, column);

  return qstore_inspector_format_value (value, NULL, NULL);
}

static void
test_data_page (Fixture       *f,
                gconstpointer  data)
{
  QStoreInspectorDataPage *page = g_object_ref_sink (g_object_new (QSTORE_INSPECTOR_TYPE_DATA_PAGE, NULL));
  g_autoptr(QStoreInspectorRow) first = NULL;
  g_autoptr(QStoreInspectorRow) last = NULL;
  g_autoptr(QStoreInspectorRow) pair = NULL;
  g_autoptr(QStoreInspectorRow) blob = NULL;
  g_autofree char *name = NULL;
  g_autofree char *note = NULL;
  g_autofree char *text = NULL;
  QStoreInspectorRowModel *model;
  GListModel *tables;
  GListModel *mviews;
  GListModel *labels;

  f->contents = test_load (f->uri);
  qstore_inspector_data_page_set_contents (page, f->contents);

  /* Tables that parse, sorted; the first is shown. */
  tables = qstore_inspector_data_page_get_tables (page);
  g_assert_cmpuint (g_list_model_get_n_items (tables), ==, 2);
  g_assert_cmpstr (gtk_string_list_get_string (GTK_STRING_LIST (tables), 0), ==, "main.pairs");
  g_assert_cmpstr (qstore_inspector_data_page_get_table (page), ==, "main.pairs");

  g_assert_true (qstore_inspector_data_page_select_table (page, "main.people"));
  g_assert_cmpuint (qstore_inspector_data_page_get_n_columns (page), ==, 5);
  model = qstore_inspector_data_page_get_model (page);
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (model)), ==, 450);

  first = test_get_loaded_row (model, 0);
  g_assert_cmpint (row_int (first, 0), ==, 1);
  name = row_text (first, 1);
  g_assert_cmpstr (name, ==, "name 1");
  note = row_text (first, 4);
  g_assert_cmpstr (note, ==, "NULL");

  last = test_get_loaded_row (model, 449);
  g_assert_cmpint (row_int (last, 0), ==, 450);
  g_assert_null (qstore_inspector_row_model_get_error (model));
  g_assert_null (qstore_inspector_data_page_get_error (page));

  g_assert_true (qstore_inspector_data_page_select_table (page, "main.pairs"));
  model = qstore_inspector_data_page_get_model (page);
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (model)), ==, 3);
  pair = test_get_loaded_row (model, 1);
  text = row_text (pair, 0);
  g_assert_cmpstr (text, ==, "x");
  g_assert_cmpint (row_int (pair, 1), ==, 2);
  blob = test_get_loaded_row (model, 0);
  g_clear_pointer (&text, g_free);
  text = row_text (blob, 2);
  g_assert_cmpstr (text, ==, "blob, 2 bytes: 00ff");

  /* Materialized views whose rows are stored, after the tables; their
   * rows are read as a table's. */
  mviews = qstore_inspector_data_page_get_materialized_views (page);
  g_assert_cmpuint (g_list_model_get_n_items (mviews), ==, 3);
  g_assert_cmpstr (gtk_string_list_get_string (GTK_STRING_LIST (mviews), 0), ==, "main.mv_a");
  labels = qstore_inspector_data_page_get_labels (page);
  g_assert_cmpstr (gtk_string_list_get_string (GTK_STRING_LIST (labels), 2), ==,
                   "main.mv_a (materialized view)");
  g_assert_true (qstore_inspector_data_page_select_table (page, "main.mv_a"));
  g_assert_cmpuint (qstore_inspector_data_page_get_n_columns (page), ==, 2);
  model = qstore_inspector_data_page_get_model (page);
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (model)), ==, 450);
  g_clear_object (&first);
  first = test_get_loaded_row (model, 0);
  g_assert_cmpint (row_int (first, 0), ==, 1);
  g_clear_pointer (&text, g_free);
  text = row_text (first, 1);
  g_assert_cmpstr (text, ==, "name 1");
  g_assert_false (qstore_inspector_data_page_select_table (page, "main.mv_bad"));

  g_object_unref (page);
}

/* A big table is read a page at a time: jumping to its end loads one
 * page of rows, not the ones before it. */
static void
test_paging (Fixture       *f,
             gconstpointer  data)
{
  g_autoptr(QStoreInspectorRowModel) model = NULL;
  g_autoptr(QStoreInspectorRow) last = NULL;
  g_autoptr(QStoreInspectorRow) middle = NULL;
  g_autoptr(QStoreInspectorRow) near = NULL;
  g_autoptr(GError) error = NULL;
  guint n = 100000;
  gint64 count;

  test_exec_at (f->uri,
             "CREATE TABLE big (id INTEGER PRIMARY KEY, payload TEXT);"
             "INSERT INTO big WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 100000)"
             "  SELECT i, printf('row %06d', i) FROM n;");
  f->contents = test_load (f->uri);
  count = qstore_inspector_contents_get_row_count (f->contents, "main", "big");
  g_assert_cmpint (count, ==, n);

  model = qstore_inspector_row_model_new (f->uri, qstore_inspector_contents_get_provider (f->contents),
                                          "main", "big", count, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (model)), ==, n);

  last = test_get_loaded_row (model, n - 1);
  g_assert_cmpint (row_int (last, 0), ==, n);
  g_assert_cmpuint (qstore_inspector_row_model_get_n_loaded_pages (model), ==, 1);

  /* The walk to the end remembered where every page starts. */
  middle = test_get_loaded_row (model, n / 2 + 7);
  g_assert_cmpint (row_int (middle, 0), ==, n / 2 + 8);
  near = test_get_loaded_row (model, n / 2 + QSTORE_INSPECTOR_ROW_PAGE_SIZE);
  g_assert_cmpint (row_int (near, 0), ==, n / 2 + QSTORE_INSPECTOR_ROW_PAGE_SIZE + 1);
  g_assert_cmpuint (qstore_inspector_row_model_get_n_loaded_pages (model), ==, 3);
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (model)), ==, n);
}

static gboolean
model_idle (gpointer data)
{
  return !qstore_inspector_row_model_is_busy (data);
}

/* Statistics behind the data: the model follows the data. */
static void
test_count_corrects (Fixture       *f,
                     gconstpointer  data)
{
  g_autoptr(QStoreInspectorRowModel) model = NULL;
  g_autoptr(QStoreInspectorRow) row = NULL;
  g_autoptr(GError) error = NULL;

  f->contents = test_load (f->uri);
  model = qstore_inspector_row_model_new (f->uri, qstore_inspector_contents_get_provider (f->contents),
                                          "main", "people", 1000, &error);
  g_assert_no_error (error);
  /* Asking beyond the end walks to it and shrinks the model. */
  row = g_list_model_get_item (G_LIST_MODEL (model), 999);
  test_wait (model_idle, model, 20);
  g_assert_false (qstore_inspector_row_is_loaded (row));
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (model)), ==, 450);

  g_clear_object (&model);
  g_clear_object (&row);
  model = qstore_inspector_row_model_new (f->uri, qstore_inspector_contents_get_provider (f->contents),
                                          "main", "people", -1, &error);
  g_assert_no_error (error);
  row = test_get_loaded_row (model, 0);
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (model)), ==, QSTORE_INSPECTOR_ROW_PAGE_SIZE + 1);
}

static const char *self_path;

static gboolean
snapshot_released (gpointer data)
{
  return !qstore_inspector_row_model_holds_snapshot (data);
}

/* An idle model lets its snapshot go, so that a writer's LMDB file can
 * reuse its pages; the next page it reads comes from the newer state. */
static void
test_snapshot_idle (Fixture       *f,
                    gconstpointer  data)
{
  g_autoptr(QStoreInspectorRowModel) model = NULL;
  g_autoptr(QStoreInspectorRow) first = NULL;
  g_autoptr(QStoreInspectorRow) late = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *name = NULL;

  f->contents = test_load (f->uri);
  model = qstore_inspector_row_model_new (f->uri, qstore_inspector_contents_get_provider (f->contents),
                                          "main", "people", 450, &error);
  g_assert_no_error (error);
  qstore_inspector_row_model_set_snapshot_idle (model, 50);

  first = test_get_loaded_row (model, 0);
  g_assert_true (qstore_inspector_row_model_holds_snapshot (model));
  test_wait (snapshot_released, model, 10);

  /* Another process commits a row meanwhile. */
  test_exec_in_other_process (self_path, f->uri, "INSERT INTO people (id, name) VALUES (451, 'late')");

  late = test_get_loaded_row (model, 449);
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (model)), ==, 451);
  g_clear_object (&late);
  late = test_get_loaded_row (model, 450);
  g_assert_cmpint (row_int (late, 0), ==, 451);
  name = row_text (late, 1);
  g_assert_cmpstr (name, ==, "late");
}

int
main (int    argc,
      char **argv)
{
  /* The writer of test_snapshot_idle, in a process of its own. */
  if (test_exec_subcommand (argc, argv))
    return 0;

  self_path = argv[0];
  gtk_test_init (&argc, &argv, NULL);
  adw_init ();

#define ADD(name, func) \
  g_test_add ("/inspector/" name, Fixture, NULL, fixture_set_up, func, fixture_tear_down)
  g_test_add_func ("/inspector/names", test_names);
  ADD ("catalog-page", test_catalog_page);
  ADD ("definition-shows", test_definition_shows);
  ADD ("sections", test_sections);
  ADD ("stale-page", test_stale_page);
  ADD ("data-page", test_data_page);
  ADD ("paging", test_paging);
  ADD ("count-corrects", test_count_corrects);
  ADD ("snapshot-idle", test_snapshot_idle);
#undef ADD

  return g_test_run ();
}
