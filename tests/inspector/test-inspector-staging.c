/* test-inspector-staging.c: the Staging page, its sweep, and qstore's own
 * tables in the catalog
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Usage: test-inspector-staging [--tap] -p /inspector-staging/MODE PATH-TO-QSTORE
 *
 *   page          two interrupted imports (one droppable, one resumable):
 *                 both listed with their verdicts; a cancelled sweep
 *                 changes no byte of the store; a confirmed one drops
 *                 the droppable staging tables only, and the target keeps
 *                 its rows (QSTORE_TEST_PROVIDER: lmdb or sqlite)
 *   busy          another process holds the store's write lock (SQLite):
 *                 the confirmed sweep says so and changes nothing
 *   screenshots   the page at 360 and 1,400 px, light and dark, and the
 *                 question a sweep asks
 *   reserved      qstore's own tables (staging, the marker, the unsafe
 *                 window's and the change log's) in a section of their
 *                 own in the catalog, not among the user's tables
 *
 * The stores are made by the `qstore` program, as a person would.
 */
#include "config.h"

#include <adwaita.h>

#include "inspector-window-test-util.h"
#include "qstore-inspector-application.h"

static const char *qstore_path;
static GApplication *application;

/* Stores */

static TestRun *
run_qstore (const char *uri,
            const char *first,
            ...) G_GNUC_NULL_TERMINATED;

static TestRun *
run_qstore (const char *uri,
            const char *first,
            ...)
{
  TestRun *run;
  va_list ap;

  va_start (ap, first);
  run = test_run_program_va (qstore_path, NULL, uri, first, ap);
  va_end (ap);
  return run;
}

static char *
query (const char *uri,
       const char *sql)
{
  g_autoptr(TestRun) run = run_qstore (uri, "sql", sql, NULL);

  if (run->status != 0)
    g_error ("qstore sql “%s” failed: %s", sql, run->err);
  return g_strdup (run->out);
}

/* A store with two interrupted replace imports, as `qstore import
 * --no-atomic` leaves them when a row is bad: into t, made droppable (a
 * day without a heartbeat, not resumable), and into u, resumable. The
 * input files go to @inputs, not next to the store. */
static char *
make_store (const char *dir,
            const char *inputs,
            const char *leaf)
{
  g_autofree char *bad = g_build_filename (inputs, "bad.csv", NULL);
  char *uri = test_provider_uri (dir, leaf);

  g_assert_true (g_file_set_contents (bad, "id,name\n10,ten\n11,\n", -1, NULL));
  test_exec_at (uri, "CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT NOT NULL);"
                     "CREATE INDEX t_name ON t (name);"
                     "CREATE TABLE u (id INTEGER PRIMARY KEY, name TEXT NOT NULL);"
                     "INSERT INTO t VALUES (1, 'one'), (2, 'two'), (3, 'three');"
                     "INSERT INTO u VALUES (7, 'seven')");
  for (guint i = 0; i < 2; i++)
    {
      g_autoptr(TestRun) run = run_qstore (uri, "import", "--mode", "replace", "--no-atomic",
                                           i == 0 ? "t" : "u", bad, NULL);

      g_assert_cmpint (run->status, ==, 1);
      g_assert_nonnull (strstr (run->err, "is staged"));
    }
  test_exec_at (uri, "UPDATE _qstore_replace_in_progress "
                     "SET resumable = 0, heartbeat = heartbeat - 86400000 WHERE target = 't'");
  return uri;
}

/* Windows */

static QStoreInspectorWindow *
open_window (const char *uri,
             int         width,
             int         height)
{
  QStoreInspectorWindow *window = qstore_inspector_window_new (ADW_APPLICATION (application));

  gtk_window_set_default_size (GTK_WINDOW (window), width, height);
  gtk_window_present (GTK_WINDOW (window));
  qstore_inspector_window_open_uri (window, uri);
  test_wait_ready (window);
  test_run_for (100);
  test_settle (GTK_WIDGET (window));
  return window;
}

static void
close_window (QStoreInspectorWindow *window)
{
  gtk_window_destroy (GTK_WINDOW (window));
  test_run_for (100);
}

static QStoreStagingRun *
find_run (GListModel *runs,
          const char *target)
{
  for (guint i = 0; i < g_list_model_get_n_items (runs); i++)
    {
      g_autoptr(QStoreStagingRun) run = g_list_model_get_item (runs, i);

      if (g_str_equal (qstore_staging_run_get_target (run), target))
        return run;
    }
  return NULL;
}

/* The subtitle of the row titled @title below @root, as it shows. */
static const char *
row_subtitle (GtkWidget  *root,
              const char *title)
{
  if (ADW_IS_ACTION_ROW (root) && gtk_widget_get_mapped (root) &&
      g_strcmp0 (adw_preferences_row_get_title (ADW_PREFERENCES_ROW (root)), title) == 0)
    return adw_action_row_get_subtitle (ADW_ACTION_ROW (root));
  for (GtkWidget *child = gtk_widget_get_first_child (root); child != NULL;
       child = gtk_widget_get_next_sibling (child))
    {
      const char *found = row_subtitle (child, title);

      if (found != NULL)
        return found;
    }
  return NULL;
}

static GtkWidget *
sweep_button (QStoreInspectorStagingPage *page)
{
  GtkWidget *button = test_find_by_class (GTK_WIDGET (page), "destructive-action");

  g_assert_true (GTK_IS_BUTTON (button));
  return button;
}

static gboolean
sweep_finished (gpointer data)
{
  QStoreInspectorWindow *window = data;

  return !qstore_inspector_staging_page_is_sweeping (qstore_inspector_window_get_staging_page (window)) &&
         test_window_ready (window);
}

/* The question a sweep asks, answered @response; waits for what follows. */
static void
answer_sweep (QStoreInspectorWindow *window,
              const char            *response)
{
  QStoreInspectorStagingPage *page = qstore_inspector_window_get_staging_page (window);
  GtkWindow *dialog = qstore_inspector_staging_page_sweep (page);
  const char *body;

  g_assert_true (ADW_IS_MESSAGE_DIALOG (dialog));
  test_run_for (100);
  /* It names what goes, and only that. */
  body = adw_message_dialog_get_body (ADW_MESSAGE_DIALOG (dialog));
  g_test_message ("%s", body);
  g_assert_nonnull (strstr (body, "_qstore_staging_t (an import into t)"));
  g_assert_null (strstr (body, "_qstore_staging_u"));
  g_assert_cmpstr (adw_message_dialog_get_close_response (ADW_MESSAGE_DIALOG (dialog)), ==, "cancel");

  adw_message_dialog_response (ADW_MESSAGE_DIALOG (dialog), response);
  test_run_for (100);
  test_wait (sweep_finished, window, 30);
  test_settle (GTK_WIDGET (window));
}

/* Page */

static void
test_page (void)
{
  g_autofree char *dir = test_make_tmp_dir ("qstore-staging-page-XXXXXX");
  g_autofree char *inputs = test_make_tmp_dir ("qstore-staging-inputs-XXXXXX");
  g_autofree char *uri = make_store (dir, inputs, "store");
  g_autofree char *rows_before = query (uri, "SELECT id, name FROM t ORDER BY id");
  g_autofree char *rows_after = NULL;
  g_autoptr(GHashTable) before = NULL;
  g_autoptr(GHashTable) after = NULL;
  QStoreInspectorStagingPage *page;
  QStoreInspectorWindow *window;
  QStoreInspectorContents *contents;
  QStoreStagingRun *t, *u;
  g_autofree char *t_reason = NULL;
  g_autofree char *u_reason = NULL;
  GListModel *runs;
  guint n_loads;

  window = open_window (uri, 1000, 800);
  page = qstore_inspector_window_get_staging_page (window);
  test_show_page (window, "staging");

  /* Both runs, each with its verdict in words. */
  runs = qstore_inspector_staging_page_get_model (page);
  g_assert_nonnull (runs);
  g_assert_cmpuint (g_list_model_get_n_items (runs), ==, 2);
  t = find_run (runs, "t");
  u = find_run (runs, "u");
  g_assert_nonnull (t);
  g_assert_nonnull (u);
  g_assert_true (qstore_staging_run_get_droppable (t));
  g_assert_false (qstore_staging_run_get_resumable (t));
  g_assert_false (qstore_staging_run_get_droppable (u));
  g_assert_true (qstore_staging_run_get_resumable (u));
  t_reason = qstore_inspector_describe_staging_run (t, 30 * 60000);
  u_reason = qstore_inspector_describe_staging_run (u, 30 * 60000);
  g_assert_cmpstr (t_reason, ==, "Droppable: no heartbeat for 1 day (the threshold is 30 minutes), "
                                 "and the import cannot be resumed.");
  g_assert_true (g_str_has_prefix (u_reason, "Kept: the import can be resumed"));
  g_assert_nonnull (strstr (row_subtitle (GTK_WIDGET (page), "Import into t"), t_reason));
  g_assert_nonnull (strstr (row_subtitle (GTK_WIDGET (page), "Import into t"), "Staging tables: _qstore_staging_t\n"));
  g_assert_nonnull (strstr (row_subtitle (GTK_WIDGET (page), "Import into t"), "last heartbeat 1 day ago"));
  g_assert_nonnull (strstr (row_subtitle (GTK_WIDGET (page), "Import into u"), u_reason));
  g_assert_true (qstore_inspector_staging_page_can_sweep (page));
  g_assert_true (gtk_widget_get_sensitive (sweep_button (page)));

  /* Cancelled: not a byte changes, and the store is not even read again. */
  before = test_checksum_store (dir);
  n_loads = qstore_inspector_window_get_n_loads (window);
  answer_sweep (window, "cancel");
  after = test_checksum_store (dir);
  test_assert_same_sums (before, after);
  g_assert_cmpuint (qstore_inspector_window_get_n_loads (window), ==, n_loads);
  g_assert_cmpuint (qstore_inspector_staging_page_get_n_swept (page), ==, 0);
  g_assert_cmpuint (g_list_model_get_n_items (qstore_inspector_staging_page_get_model (page)), ==, 2);

  /* Confirmed: the droppable run's staging table goes, the resumable one
   * stays, and the page shows the store as it is now. */
  answer_sweep (window, "sweep");
  g_assert_cmpstr (qstore_inspector_staging_page_get_sweep_error (page), ==, NULL);
  g_assert_cmpuint (qstore_inspector_staging_page_get_n_swept (page), ==, 1);
  g_assert_cmpuint (qstore_inspector_window_get_n_loads (window), ==, n_loads + 1);
  runs = qstore_inspector_staging_page_get_model (page);
  g_assert_cmpuint (g_list_model_get_n_items (runs), ==, 1);
  g_assert_nonnull (find_run (runs, "u"));
  g_assert_false (qstore_inspector_staging_page_can_sweep (page));
  g_assert_false (gtk_widget_get_sensitive (sweep_button (page)));
  contents = qstore_inspector_window_get_contents (window);
  g_assert_null (qstore_inspector_contents_lookup_entry (contents, QSTORE_CATALOG_KEY_TABLE, "main", "_qstore_staging_t"));
  g_assert_nonnull (qstore_inspector_contents_lookup_entry (contents, QSTORE_CATALOG_KEY_TABLE, "main", "_qstore_staging_u"));
  g_assert_nonnull (qstore_inspector_contents_lookup_entry (contents, QSTORE_CATALOG_KEY_TABLE, "main", "t"));
  close_window (window);

  /* The target is as it was. */
  rows_after = query (uri, "SELECT id, name FROM t ORDER BY id");
  g_assert_cmpstr (rows_after, ==, rows_before);
  g_assert_nonnull (strstr (rows_after, "three"));

  test_remove_tree (dir);
  test_remove_tree (inputs);
}

/* Busy */

/* Another process takes the SQLite file's write lock and keeps it until
 * its input closes. */
static GSubprocess *
hold_write_lock (const char *path)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GSubprocess) holder = NULL;
  g_autofree char *line = NULL;
  g_autoptr(GDataInputStream) out = NULL;
  const char *script =
    "import sqlite3, sys\n"
    "c = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
    "c.execute('BEGIN IMMEDIATE')\n"
    "print('holding', flush=True)\n"
    "sys.stdin.read()\n";

  holder = g_subprocess_new (G_SUBPROCESS_FLAGS_STDIN_PIPE | G_SUBPROCESS_FLAGS_STDOUT_PIPE, &error,
                             "python3", "-c", script, path, NULL);
  g_assert_no_error (error);
  out = g_data_input_stream_new (g_subprocess_get_stdout_pipe (holder));
  line = g_data_input_stream_read_line_utf8 (out, NULL, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (line, ==, "holding");
  return g_steal_pointer (&holder);
}

static void
test_busy (void)
{
  g_autofree char *dir = test_make_tmp_dir ("qstore-staging-busy-XXXXXX");
  g_autofree char *inputs = test_make_tmp_dir ("qstore-staging-inputs-XXXXXX");
  g_autofree char *uri = make_store (dir, inputs, "store");
  g_autofree char *path = g_build_filename (dir, "store.db", NULL);
  g_autofree char *quick = g_strconcat (uri, "?busy_timeout=300", NULL);
  g_autofree char *python = g_find_program_in_path ("python3");
  g_autoptr(GSubprocess) holder = NULL;
  g_autoptr(GHashTable) before = NULL;
  g_autoptr(GHashTable) after = NULL;
  g_autoptr(GError) error = NULL;
  QStoreInspectorStagingPage *page;
  QStoreInspectorWindow *window;
  const char *message;

  if (python == NULL)
    {
      g_test_skip ("python3 is not installed: nothing here takes an SQLite write lock");
      return;
    }
  g_assert_true (g_str_has_prefix (uri, "sqlite:"));

  window = open_window (quick, 1000, 800);
  page = qstore_inspector_window_get_staging_page (window);
  test_show_page (window, "staging");
  g_assert_true (qstore_inspector_staging_page_can_sweep (page));

  holder = hold_write_lock (path);
  before = test_checksum_store (dir);
  answer_sweep (window, "sweep");
  after = test_checksum_store (dir);

  message = qstore_inspector_staging_page_get_sweep_error (page);
  g_test_message ("%s | %s", message, qstore_inspector_staging_page_get_sweep_details (page));
  g_assert_nonnull (message);
  g_assert_true (g_str_has_prefix (message, "Another program is writing to “"));
  g_assert_nonnull (strstr (message, "Nothing was changed."));
  g_assert_nonnull (qstore_inspector_staging_page_get_sweep_details (page));
  g_assert_cmpuint (qstore_inspector_staging_page_get_n_swept (page), ==, 0);
  test_assert_same_sums (before, after);

  /* Read-only again, with both runs. */
  g_assert_cmpuint (g_list_model_get_n_items (qstore_inspector_staging_page_get_model (page)), ==, 2);
  g_assert_true (qstore_inspector_staging_page_can_sweep (page));

  g_output_stream_close (g_subprocess_get_stdin_pipe (holder), NULL, NULL);
  g_subprocess_wait_check (holder, NULL, &error);
  g_assert_no_error (error);
  /* The error's own window. */
  for (GList *l = gtk_window_list_toplevels (); l != NULL; l = g_list_delete_link (l, l))
    if (ADW_IS_MESSAGE_DIALOG (l->data))
      gtk_window_destroy (l->data);
  close_window (window);
  test_remove_tree (dir);
  test_remove_tree (inputs);
}

/* Screenshots */

static void
screenshots_at (const char *uri,
                int         width)
{
  QStoreInspectorWindow *window = open_window (uri, width, width > 400 ? 900 : 720);
  QStoreInspectorStagingPage *page = qstore_inspector_window_get_staging_page (window);
  GtkWindow *dialog;

  test_show_page (window, "staging");
  test_shoot (GTK_WIDGET (window), "staging", width);

  dialog = qstore_inspector_staging_page_sweep (page);
  g_assert_nonnull (dialog);
  test_run_for (300);
  test_settle (GTK_WIDGET (dialog));
  test_shoot (GTK_WIDGET (dialog), "staging-sweep", width);
  adw_message_dialog_response (ADW_MESSAGE_DIALOG (dialog), "cancel");
  test_run_for (100);
  close_window (window);
}

static void
test_screenshots (void)
{
  g_autofree char *dir = test_make_tmp_dir ("qstore-staging-shots-XXXXXX");
  g_autofree char *inputs = test_make_tmp_dir ("qstore-staging-inputs-XXXXXX");
  g_autofree char *uri = make_store (dir, inputs, "store");

  screenshots_at (uri, 360);
  screenshots_at (uri, 1400);
  adw_style_manager_set_color_scheme (adw_style_manager_get_default (), ADW_COLOR_SCHEME_DEFAULT);
  test_remove_tree (dir);
  test_remove_tree (inputs);
}

/* qstore's own tables */

/* The catalog's list as it shows: for each section's heading, the names
 * under it, in order ("Tables: main.t, main.u"). */
static GPtrArray *
list_sections (QStoreInspectorCatalogPage *page)
{
  GtkListBox *list = GTK_LIST_BOX (test_find_by_class (GTK_WIDGET (page), "navigation-sidebar"));
  GPtrArray *sections = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GString) section = NULL;
  GtkListBoxRow *row;

  g_assert_nonnull (list);
  for (guint i = 0; (row = gtk_list_box_get_row_at_index (list, i)) != NULL; i++)
    {
      GtkWidget *header = gtk_list_box_row_get_header (row);
      g_autoptr(QStoreCatalogEntry) entry = g_list_model_get_item (qstore_inspector_catalog_page_get_model (page), i);
      const char *name = qstore_catalog_entry_get_name (entry);

      if (header != NULL)
        {
          if (section != NULL)
            g_ptr_array_add (sections, g_string_free (g_steal_pointer (&section), FALSE));
          section = g_string_new (gtk_label_get_label (GTK_LABEL (header)));
          g_string_append (section, ":");
        }
      g_assert_nonnull (section);
      /* The heading is the one the entry belongs under. */
      g_assert_true (g_str_has_prefix (section->str, qstore_inspector_catalog_page_section_of (entry)));
      g_string_append_printf (section, "%s %s", section->str[section->len - 1] == ':' ? "" : ",",
                              qstore_catalog_entry_get_kind (entry) == QSTORE_CATALOG_KEY_META ? "meta" : name);
    }
  if (section != NULL)
    g_ptr_array_add (sections, g_string_free (g_steal_pointer (&section), FALSE));
  return sections;
}

static void
test_reserved (void)
{
  g_autofree char *dir = test_make_tmp_dir ("qstore-staging-reserved-XXXXXX");
  g_autofree char *inputs = test_make_tmp_dir ("qstore-staging-inputs-XXXXXX");
  g_autofree char *uri = make_store (dir, inputs, "store");
  g_autoptr(QStoreDatabase) db = NULL;
  g_autoptr(GPtrArray) sections = NULL;
  g_autofree char *digest = NULL;
  g_autofree char *key = NULL;
  g_autoptr(GError) error = NULL;
  QStoreInspectorCatalogPage *catalog;
  QStoreInspectorWindow *window;

  /* The change log's claims table, and more of the user's own. */
  db = test_open_database (uri, QSTORE_OPEN_NONE);
  digest = g_compute_checksum_for_string (G_CHECKSUM_SHA256, "a change", -1);
  key = qstore_compose_change_key (digest, 1);
  g_assert_true (qstore_database_claim_change (db, key, &error));
  g_assert_no_error (error);
  test_exec (db, "CREATE TABLE a_table (x); CREATE VIEW a_view AS SELECT * FROM t");
  qstore_database_close (db, &error);
  g_assert_no_error (error);
  g_clear_object (&db);

  window = open_window (uri, 1000, 800);
  catalog = qstore_inspector_window_get_catalog_page (window);
  test_show_page (window, "catalog");
  sections = list_sections (catalog);
  for (guint i = 0; i < sections->len; i++)
    g_test_message ("%s", (char *) sections->pdata[i]);

  g_assert_cmpuint (sections->len, ==, 4);
  g_assert_cmpstr (sections->pdata[0], ==, "Tables: a_table, t, u");
  g_assert_cmpstr (sections->pdata[1], ==, "Views: a_view");
  g_assert_cmpstr (sections->pdata[2], ==, "qstore’s Own Tables: _qstore_change_claims, "
                                           "_qstore_replace_in_progress, _qstore_staging_t, "
                                           "_qstore_staging_u");
  g_assert_true (g_str_has_prefix (sections->pdata[3], "Bookkeeping: meta"));

  /* Still there to look at. */
  g_assert_true (qstore_inspector_catalog_page_select_name (catalog, "main._qstore_staging_t"));
  test_settle (GTK_WIDGET (window));
  test_screenshot (GTK_WIDGET (window), "catalog-reserved");
  close_window (window);
  test_remove_tree (dir);
  test_remove_tree (inputs);
}

int
main (int    argc,
      char **argv)
{
  int status;

  gtk_test_init (&argc, &argv, NULL);
  adw_init ();

  if (argc < 2)
    {
      g_printerr ("Usage: %s [--tap] PATH-TO-QSTORE\n", argv[0]);
      return 2;
    }
  qstore_path = argv[1];
  /* Registered, not run: it loads the style sheet. */
  application = G_APPLICATION (qstore_inspector_application_new ());
  g_application_register (application, NULL, NULL);

  g_test_add_func ("/inspector-staging/page", test_page);
  g_test_add_func ("/inspector-staging/busy", test_busy);
  g_test_add_func ("/inspector-staging/screenshots", test_screenshots);
  g_test_add_func ("/inspector-staging/reserved", test_reserved);
  status = g_test_run ();
  g_clear_object (&application);
  return status;
}
