/* test-inspector-app.c: qstore-inspector end to end
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Usage: test-inspector-app [--tap] -p /inspector-app/MODE PATH-TO-QSTORE
 *
 *   screenshots        launch the app on the demo store, visit every page
 *                      through its actions and save one PNG per page in
 *                      $QSTORE_SCREENSHOT_DIR; fail on a blank page or an
 *                      error
 *   read-only          checksum every file of an LMDB and an SQLite store,
 *                      inspect them (every page, a refresh), checksum again;
 *                      no new files either, once a read-only open of the
 *                      provider alone leaves none
 *   concurrent-writer  a child process commits in a loop while the window
 *                      refreshes; the new rows appear, with no error
 *   bad-stores         a file and a folder of garbage, a missing path: the
 *                      window says what is wrong and changes nothing
 *   german             the pages in German (LC_ALL=de_DE.UTF-8, the locale
 *                      compiled into LOCPATH by the build): translated
 *                      text and German number formats, one PNG per page;
 *                      a bad store's error in German, and the library's
 *                      own message beside it
 *
 * Each mode runs in its own process (one application per process), under
 * xvfb-run and dbus-run-session.
 */
#include "config.h"

#include <adwaita.h>
#include <locale.h>

#include "inspector-window-test-util.h"
#include "qstore-inspector-application.h"
#include "qstore-inspector-window.h"

static const char *qstore_path;
static const char *self_path;

static void
refresh (QStoreInspectorWindow *window)
{
  gtk_widget_activate_action (GTK_WIDGET (window), "win.refresh", NULL);
  g_assert_true (qstore_inspector_window_is_busy (window));
  test_wait_ready (window);
}

typedef struct
{
  GApplication *application;
  char         *uri;
  gboolean      done;
} AppRun;

static gboolean
drive_app (gpointer data)
{
  AppRun *run = data;
  GtkWindow *active = gtk_application_get_active_window (GTK_APPLICATION (run->application));
  QStoreInspectorWindow *window;
  QStoreInspectorContents *contents;
  QStoreInspectorWindow *welcome;
  GtkWidget *about;
  GList *toplevels;

  g_assert_true (QSTORE_INSPECTOR_IS_WINDOW (active));
  window = QSTORE_INSPECTOR_WINDOW (active);
  test_wait_ready (window);
  contents = qstore_inspector_window_get_contents (window);
  g_assert_cmpstr (qstore_inspector_contents_get_uri (contents), ==, run->uri);

  test_show_page (window, "catalog");
  g_assert_cmpuint (g_list_model_get_n_items (qstore_inspector_catalog_page_get_model (qstore_inspector_window_get_catalog_page (window))), >=, 5);
  g_assert_true (qstore_inspector_catalog_page_select_name (qstore_inspector_window_get_catalog_page (window),
                                                            "main.orders"));
  test_run_for (200);
  test_screenshot (GTK_WIDGET (window), "catalog");
  g_assert_true (qstore_inspector_catalog_page_select_name (qstore_inspector_window_get_catalog_page (window),
                                                            "main.city_customers"));
  test_run_for (200);
  test_screenshot (GTK_WIDGET (window), "materialized-view");

  test_show_page (window, "stale");
  g_assert_cmpstr (qstore_inspector_stale_page_get_marker_summary (qstore_inspector_window_get_stale_page (window)),
                   ==, "Present: the store was closed cleanly");
  test_screenshot (GTK_WIDGET (window), "stale");

  /* The catalog's "Show Rows" action leads to the data page. */
  gtk_widget_activate_action (GTK_WIDGET (window), "win.show-table", "s", "main.orders");
  test_show_page (window, "data");
  g_assert_cmpstr (qstore_inspector_data_page_get_table (qstore_inspector_window_get_data_page (window)),
                   ==, "main.orders");
  g_assert_null (qstore_inspector_data_page_get_error (qstore_inspector_window_get_data_page (window)));
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (qstore_inspector_data_page_get_model (qstore_inspector_window_get_data_page (window)))),
                    ==, 10000);
  test_screenshot (GTK_WIDGET (window), "data");

  refresh (window);
  test_show_page (window, "data");
  g_assert_null (qstore_inspector_window_get_error (window));

  g_action_group_activate_action (G_ACTION_GROUP (run->application), "about", NULL);
  test_run_for (500);
  toplevels = gtk_window_list_toplevels ();
  about = NULL;
  for (GList *l = toplevels; l != NULL; l = l->next)
    if (ADW_IS_ABOUT_WINDOW (l->data))
      about = l->data;
  g_list_free (toplevels);
  g_assert_nonnull (about);
  test_screenshot (about, "about");
  gtk_window_destroy (GTK_WINDOW (about));

  /* A window without a store welcomes, and lists the store just opened
   * among the recent ones. */
  welcome = qstore_inspector_window_new (ADW_APPLICATION (run->application));
  qstore_inspector_window_set_settings (welcome,
                                        qstore_inspector_application_get_settings (QSTORE_INSPECTOR_APPLICATION (run->application)));
  gtk_window_set_default_size (GTK_WINDOW (welcome), 900, 640);
  gtk_window_present (GTK_WINDOW (welcome));
  test_run_for (500);
  g_assert_cmpstr (qstore_inspector_window_get_state (welcome), ==, "welcome");
  test_screenshot (GTK_WIDGET (welcome), "welcome");

  run->done = TRUE;
  g_action_group_activate_action (G_ACTION_GROUP (run->application), "quit", NULL);
  return G_SOURCE_REMOVE;
}

static void
window_added_cb (GtkApplication *application,
                 GtkWindow      *window,
                 AppRun         *run)
{
  static gboolean started;

  if (!started && QSTORE_INSPECTOR_IS_WINDOW (window))
    {
      started = TRUE;
      g_idle_add (drive_app, run);
    }
}

static void
test_screenshots (void)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("qstore-inspector-XXXXXX", &error);
  g_autofree char *uri = test_make_demo (qstore_path, dir, "demo");
  g_autoptr(QStoreInspectorApplication) application = qstore_inspector_application_new ();
  AppRun run = { G_APPLICATION (application), uri, FALSE };
  char *argv[] = { (char *) "qstore-inspector", uri, NULL };
  int status;

  g_signal_connect (application, "window-added", G_CALLBACK (window_added_cb), &run);
  status = g_application_run (G_APPLICATION (application), 2, argv);
  g_assert_cmpint (status, ==, 0);
  g_assert_true (run.done);

  test_remove_tree (dir);
}

/* Read-only */

static void
make_store (const char *uri)
{
  test_exec_at (uri,
                "CREATE TABLE t (id INTEGER PRIMARY KEY, a TEXT NOT NULL, b REAL);"
                "CREATE INDEX t_a ON t (a);"
                "CREATE TABLE u (k TEXT PRIMARY KEY, v BLOB);"
                "CREATE VIEW tv AS SELECT a FROM t;"
                "INSERT INTO t WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1000)"
                "  SELECT i, 'row ' || i, i * 0.5 FROM n;"
                "INSERT INTO u VALUES ('a', x'01'), ('b', NULL);"
                "CREATE MATERIALIZED VIEW mv AS SELECT id, a FROM t WHERE id % 2 = 0;");
}

static QStoreInspectorWindow *
open_window (AdwApplication *application,
             const char     *uri)
{
  QStoreInspectorWindow *window = qstore_inspector_window_new (application);

  gtk_window_set_default_size (GTK_WINDOW (window), 1100, 720);
  gtk_window_present (GTK_WINDOW (window));
  qstore_inspector_window_open_uri (window, uri);
  test_wait_ready (window);
  return window;
}

/* Whether the store's files are the same files (not contents: see
 * test_checksum_store()) in @after as in @before. */
static gboolean
same_files (GHashTable *before,
            GHashTable *after)
{
  GHashTableIter iter;
  gpointer key;

  if (g_hash_table_size (before) != g_hash_table_size (after))
    return FALSE;
  g_hash_table_iter_init (&iter, before);
  while (g_hash_table_iter_next (&iter, &key, NULL))
    if (!g_hash_table_contains (after, key))
      return FALSE;
  return TRUE;
}

static void
copy_tree (const char *from,
           const char *to)
{
  g_autoptr(GHashTable) files = test_checksum_tree (from);
  GHashTableIter iter;
  gpointer key;

  g_hash_table_iter_init (&iter, files);
  while (g_hash_table_iter_next (&iter, &key, NULL))
    {
      g_autofree char *source = g_build_filename (from, key, NULL);
      g_autofree char *target = g_build_filename (to, key, NULL);
      g_autofree char *folder = g_path_get_dirname (target);
      g_autofree char *contents = NULL;
      gsize len;

      g_assert_cmpint (g_mkdir_with_parents (folder, 0755), ==, 0);
      g_assert_true (g_file_get_contents (source, &contents, &len, NULL));
      g_assert_true (g_file_set_contents (target, contents, len, NULL));
    }
}

/* A read-only open of the provider alone, on a copy of the store:
 * whether it leaves new files behind (an SQLite reader in WAL mode may
 * create -wal and -shm files). Until the provider leaves none, the
 * inspector cannot either; once it does, the read-only test holds the
 * inspector to it, with no change here. */
static gboolean
provider_leaves_no_files (const char *dir,
                          const char *uri)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *copy = g_dir_make_tmp ("qstore-probe-XXXXXX", &error);
  g_autofree char *copy_uri = NULL;
  g_autoptr(GHashTable) before = NULL;
  g_autoptr(GHashTable) after = NULL;
  g_auto(GStrv) parts = g_strsplit (uri, dir, 2);
  QStoreProvider *provider;
  gboolean clean;

  copy_tree (dir, copy);
  copy_uri = g_strconcat (parts[0], copy, parts[1], NULL);
  before = test_checksum_tree (copy);
  provider = qstore_provider_new_for_uri (copy_uri, QSTORE_OPEN_READ_ONLY, &error);
  g_assert_no_error (error);
  g_object_unref (qstore_catalog_list_entries (provider, &error));
  g_assert_no_error (error);
  qstore_provider_close_all (provider);
  g_object_unref (provider);
  after = test_checksum_tree (copy);
  clean = same_files (before, after);
  test_remove_tree (copy);
  return clean;
}

static void
inspect_read_only (const char *dir,
                   const char *uri)
{
  g_autoptr(GHashTable) files_before = NULL;
  g_autoptr(GHashTable) files_after = NULL;
  gboolean expect_no_new_files;
  g_autoptr(GHashTable) before = NULL;
  g_autoptr(GHashTable) after = NULL;
  g_autoptr(QStoreProvider) provider = NULL;
  g_autoptr(QStoreStaleReport) report = NULL;
  g_autoptr(GError) error = NULL;
  QStoreInspectorWindow *window;

  make_store (uri);
  expect_no_new_files = provider_leaves_no_files (dir, uri);
  before = test_checksum_store (dir);
  files_before = test_checksum_tree (dir);

  window = open_window (NULL, uri);
  test_show_page (window, "catalog");
  test_show_page (window, "stale");
  test_show_page (window, "data");
  g_assert_true (qstore_inspector_data_page_select_table (qstore_inspector_window_get_data_page (window), "main.u"));
  test_show_page (window, "data");
  /* A view's rows come from SQL on the store opened read-only, a
   * materialized view's from the table holding them. */
  g_assert_true (qstore_inspector_data_page_select_table (qstore_inspector_window_get_data_page (window), "main.tv"));
  test_show_page (window, "data");
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (qstore_inspector_data_page_get_model (qstore_inspector_window_get_data_page (window)))),
                    ==, 1000);
  g_assert_true (qstore_inspector_data_page_select_table (qstore_inspector_window_get_data_page (window), "main.mv"));
  test_show_page (window, "data");
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (qstore_inspector_data_page_get_model (qstore_inspector_window_get_data_page (window)))),
                    ==, 500);
  refresh (window);
  test_show_page (window, "catalog");
  test_show_page (window, "data");
  g_assert_null (qstore_inspector_window_get_error (window));
  gtk_window_destroy (GTK_WINDOW (window));
  test_run_for (200);

  after = test_checksum_store (dir);
  test_assert_same_sums (before, after);

  /* No new files either, as soon as the provider's own read-only open
   * leaves none. */
  files_after = test_checksum_tree (dir);
  if (expect_no_new_files)
    g_assert_true (same_files (files_before, files_after));
  else
    g_test_message ("%s: a read-only open of the provider leaves new files, so the inspector "
                    "is not held to leaving none (it left %s)", uri,
                    same_files (files_before, files_after) ? "none" : "some");

  provider = qstore_provider_new_for_uri (uri, QSTORE_OPEN_READ_ONLY, &error);
  g_assert_no_error (error);
  report = qstore_stale_report_new (provider, &error);
  g_assert_no_error (error);
  g_assert_true (qstore_stale_report_get_marker_present (report));
  qstore_provider_close_all (provider);
}

static void
test_read_only (void)
{
  const char *providers[] = { "lmdb", "sqlite" };

  for (guint i = 0; i < G_N_ELEMENTS (providers); i++)
    {
      g_autoptr(GError) error = NULL;
      g_autofree char *dir = g_dir_make_tmp ("qstore-inspector-XXXXXX", &error);
      g_autofree char *uri = test_spec_uri (providers[i], dir, "store");

      g_test_message ("%s", uri);
      inspect_read_only (dir, uri);
      test_remove_tree (dir);
    }
}

/* Beside a writer */

#define WRITER_COMMITS 100

static int
run_writer (const char *uri,
            int         commits)
{
  g_autoptr(QStoreDatabase) db = NULL;
  g_autoptr(GError) error = NULL;

  db = qstore_database_open (uri, QSTORE_OPEN_NONE, &error);
  if (db == NULL)
    {
      g_printerr ("writer: %s\n", error->message);
      return 1;
    }
  for (int i = 0; i < commits; i++)
    {
      g_autofree char *sql = g_strdup_printf ("INSERT INTO t (id, a, b) VALUES (%d, 'new %d', %d)",
                                              100000 + i, i, i);

      if (!qstore_database_exec (db, sql, &error))
        {
          g_printerr ("writer: %s\n", error->message);
          return 1;
        }
      g_usleep (25000);
    }
  if (!qstore_database_close (db, &error))
    {
      g_printerr ("writer: %s\n", error->message);
      return 1;
    }
  return 0;
}

static gboolean
writer_done (gpointer data)
{
  return *(gboolean *) data;
}

static void
wait_cb (GObject      *object,
         GAsyncResult *result,
         gpointer      user_data)
{
  g_subprocess_wait_finish (G_SUBPROCESS (object), result, NULL);
  *(gboolean *) user_data = TRUE;
}

static void
inspect_beside_writer (const char *uri)
{
  g_autoptr(GSubprocess) writer = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(QStoreInspectorRow) last = NULL;
  g_autofree char *commits = g_strdup_printf ("%d", WRITER_COMMITS);
  QStoreInspectorWindow *window;
  QStoreInspectorRowModel *model;
  guint refreshes = 0;
  gboolean done = FALSE;
  guint n;

  make_store (uri);
  window = open_window (NULL, uri);
  test_show_page (window, "data");
  g_assert_cmpint (qstore_inspector_contents_get_row_count (qstore_inspector_window_get_contents (window),
                                                            "main", "t"), ==, 1000);

  writer = g_subprocess_new (G_SUBPROCESS_FLAGS_NONE, &error, self_path, "--writer", uri, commits, NULL);
  g_assert_no_error (error);
  g_subprocess_wait_async (writer, NULL, wait_cb, &done);

  while (!done)
    {
      refresh (window);
      test_show_page (window, refreshes % 2 ? "catalog" : "data");
      g_assert_null (qstore_inspector_window_get_error (window));
      g_assert_null (qstore_inspector_data_page_get_error (qstore_inspector_window_get_data_page (window)));
      refreshes++;
    }
  test_wait (writer_done, &done, 30);
  g_assert_true (g_subprocess_get_successful (writer));
  g_test_message ("%u refreshes while the writer committed", refreshes);
  g_assert_cmpuint (refreshes, >, 1);

  refresh (window);
  test_show_page (window, "data");
  /* The store has a materialized view too: look at the table the writer
   * wrote, whichever the page shows first. */
  g_assert_true (qstore_inspector_data_page_select_table (qstore_inspector_window_get_data_page (window),
                                                          "main.t"));
  g_assert_cmpint (qstore_inspector_contents_get_row_count (qstore_inspector_window_get_contents (window),
                                                            "main", "t"), ==, 1000 + WRITER_COMMITS);
  model = qstore_inspector_data_page_get_model (qstore_inspector_window_get_data_page (window));
  n = g_list_model_get_n_items (G_LIST_MODEL (model));
  g_assert_cmpuint (n, ==, 1000 + WRITER_COMMITS);
  last = g_list_model_get_item (G_LIST_MODEL (model), n - 1);
  while (!qstore_inspector_row_is_loaded (last))
    g_main_context_iteration (NULL, TRUE);
  {
    g_autoptr(GVariant) id = qstore_inspector_row_get_value (last, 0);

    g_assert_cmpint (g_variant_get_int64 (id), ==, 100000 + WRITER_COMMITS - 1);
  }
  gtk_window_destroy (GTK_WINDOW (window));
  test_run_for (100);
}

static void
test_concurrent_writer (void)
{
  const char *providers[] = { "lmdb", "sqlite" };

  for (guint i = 0; i < G_N_ELEMENTS (providers); i++)
    {
      g_autoptr(GError) error = NULL;
      g_autofree char *dir = g_dir_make_tmp ("qstore-inspector-XXXXXX", &error);
      g_autofree char *uri = test_spec_uri (providers[i], dir, "store");

      g_test_message ("%s", uri);
      inspect_beside_writer (uri);
      test_remove_tree (dir);
    }
}

/* Bad stores */

static void
assert_refused (const char *uri,
                const char *needle)
{
  QStoreInspectorWindow *window = qstore_inspector_window_new (NULL);
  const char *message;

  gtk_window_present (GTK_WINDOW (window));
  qstore_inspector_window_open_uri (window, uri);
  test_wait (test_window_ready, window, 30);
  g_assert_cmpstr (qstore_inspector_window_get_state (window), ==, "error");
  message = qstore_inspector_window_get_error (window);
  g_test_message ("%s: %s", uri, message);
  g_assert_nonnull (message);
  g_assert_nonnull (strstr (message, needle));
  /* Past the page's cross-fade. */
  test_run_for (600);
  test_screenshot (GTK_WIDGET (window), "error");
  gtk_window_destroy (GTK_WINDOW (window));
  test_run_for (100);
}

static void
test_bad_stores (void)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("qstore-inspector-XXXXXX", &error);
  g_autofree char *junk_file = g_build_filename (dir, "junk.db", NULL);
  g_autofree char *junk_dir = g_build_filename (dir, "junk-dir", NULL);
  g_autofree char *junk_mdb = g_build_filename (junk_dir, "data.mdb", NULL);
  g_autofree char *missing = g_build_filename (dir, "missing", NULL);
  g_autofree char *file_uri = g_strconcat ("sqlite:", junk_file, NULL);
  g_autofree char *dir_uri = g_strconcat ("lmdb:", junk_dir, NULL);
  g_autoptr(GHashTable) before = NULL;
  g_autoptr(GHashTable) after = NULL;
  g_autofree char *missing_uri = NULL;
  guint8 garbage[8192];

  for (gsize i = 0; i < sizeof garbage; i++)
    garbage[i] = (guint8) (i * 131 + 7);
  g_assert_true (g_file_set_contents (junk_file, (const char *) garbage, sizeof garbage, NULL));
  g_assert_cmpint (g_mkdir (junk_dir, 0755), ==, 0);
  g_assert_true (g_file_set_contents (junk_mdb, (const char *) garbage, sizeof garbage, NULL));
  before = test_checksum_tree (dir);

  assert_refused (file_uri, "junk.db");
  assert_refused (dir_uri, "junk-dir");
  g_assert_null (qstore_inspector_uri_for_argument (missing, &error));
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_NOT_FOUND);
  g_clear_error (&error);
  missing_uri = g_strconcat ("lmdb:", missing, NULL);
  assert_refused (missing_uri, "missing");

  /* Nothing was written, created or repaired. */
  after = test_checksum_tree (dir);
  test_assert_same_sums (before, after);
  g_assert_false (g_file_test (missing, G_FILE_TEST_EXISTS));
  test_remove_tree (dir);
}

/* German */

static void
test_german (void)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("qstore-inspector-XXXXXX", &error);
  g_autofree char *uri = test_make_demo (qstore_path, dir, "demo");
  g_autofree char *summary = NULL;
  g_autoptr(QStoreInspectorApplication) application = qstore_inspector_application_new ();
  QStoreInspectorCatalogPage *catalog;
  QStoreInspectorWindow *window;
  const char *messages;

  /* The application loads the style sheet; it need not run. */
  g_application_register (G_APPLICATION (application), NULL, &error);
  g_assert_no_error (error);

  qstore_inspector_init_i18n ();
  messages = setlocale (LC_MESSAGES, NULL);
  if (g_strcmp0 (messages, "de_DE.UTF-8") != 0)
    g_error ("The de_DE.UTF-8 locale is not available (LOCPATH=%s): got “%s”",
             g_getenv ("LOCPATH"), messages);

  window = open_window (ADW_APPLICATION (application), uri);
  catalog = qstore_inspector_window_get_catalog_page (window);
  test_show_page (window, "catalog");
  g_assert_true (qstore_inspector_catalog_page_select_name (catalog, "main.orders"));
  summary = qstore_inspector_catalog_page_describe_entry (qstore_inspector_window_get_contents (window),
                                                          qstore_inspector_catalog_page_get_selected (catalog));
  /* Translated, with German digit grouping. */
  g_assert_cmpstr (summary, ==, "6 Spalten · 2 Indizes · 10.000 Zeilen");
  test_run_for (200);
  test_screenshot (GTK_WIDGET (window), "catalog-de");

  g_assert_true (qstore_inspector_catalog_page_select_name (catalog, "main.city_customers"));
  g_clear_pointer (&summary, g_free);
  summary = qstore_inspector_catalog_page_describe_entry (qstore_inspector_window_get_contents (window),
                                                          qstore_inspector_catalog_page_get_selected (catalog));
  g_assert_true (g_str_has_prefix (summary, "Materialisierte Sicht · 2 Spalten · "));
  test_run_for (200);
  g_assert_cmpuint (test_assert_summaries_whole (GTK_WIDGET (catalog)), >=, 9);
  test_screenshot (GTK_WIDGET (window), "materialized-view-de");

  test_show_page (window, "stale");
  g_assert_cmpstr (qstore_inspector_stale_page_get_marker_summary (qstore_inspector_window_get_stale_page (window)),
                   ==, "Vorhanden: Der Speicher wurde sauber geschlossen");
  test_screenshot (GTK_WIDGET (window), "stale-de");

  gtk_widget_activate_action (GTK_WIDGET (window), "win.show-table", "s", "main.orders");
  test_show_page (window, "data");
  g_assert_null (qstore_inspector_data_page_get_error (qstore_inspector_window_get_data_page (window)));
  test_screenshot (GTK_WIDGET (window), "data-de");

  gtk_window_destroy (GTK_WINDOW (window));
  test_run_for (100);

  /* Errors too: what happened and what to do, in German, whatever
   * language the library's own message is in. */
  {
    g_autofree char *junk = g_build_filename (dir, "kaputt.db", NULL);
    g_autofree char *junk_uri = g_strconcat ("sqlite:", junk, NULL);
    g_autofree char *missing_uri = g_strconcat ("lmdb:", dir, "/fehlt", NULL);
    g_autofree char *expected = NULL;
    const char *message;

    g_assert_true (g_file_set_contents (junk, "kein Speicher, nur Text", -1, NULL));
    window = qstore_inspector_window_new (ADW_APPLICATION (application));
    gtk_window_present (GTK_WINDOW (window));
    qstore_inspector_window_open_uri (window, junk_uri);
    test_wait (test_window_ready, window, 30);
    message = qstore_inspector_window_get_error (window);
    g_test_message ("%s", message);
    expected = g_strdup_printf ("„%s“ ist kein qstore-Speicher oder ist beschädigt", junk);
    g_assert_true (g_str_has_prefix (message, expected));
    g_assert_nonnull (strstr (message, "Wählen Sie einen anderen Ordner oder eine andere Datei."));
    /* The library's words are there too, as details. */
    g_assert_nonnull (qstore_inspector_window_get_error_details (window));
    test_run_for (600);
    test_screenshot (GTK_WIDGET (window), "error-de");

    qstore_inspector_window_open_uri (window, missing_uri);
    test_wait (test_window_ready, window, 30);
    message = qstore_inspector_window_get_error (window);
    g_test_message ("%s", message);
    g_assert_true (g_str_has_prefix (message, "Unter „"));
    g_assert_nonnull (strstr (message, "gibt es keinen qstore-Speicher"));

    /* The library's own words are German too (its domain, qstore-1). */
    qstore_inspector_window_open_uri (window, "nirgends:/x");
    test_wait (test_window_ready, window, 30);
    g_test_message ("%s | %s", qstore_inspector_window_get_error (window),
                    qstore_inspector_window_get_error_details (window));
    g_assert_cmpstr (qstore_inspector_window_get_state (window), ==, "error");
    g_assert_true (g_str_has_prefix (qstore_inspector_window_get_error_details (window),
                                     "Es gibt keinen Anbieter namens „nirgends“; die Anbieter sind: "));
    g_assert_nonnull (strstr (qstore_inspector_window_get_error_details (window),
                              "(QSTORE_PLUGIN_DIR fügt Plugin-Ordner hinzu)"));
    gtk_window_destroy (GTK_WINDOW (window));
    test_run_for (100);
  }
  test_remove_tree (dir);
}

int
main (int    argc,
      char **argv)
{
  if (argc == 4 && g_str_equal (argv[1], "--writer"))
    return run_writer (argv[2], atoi (argv[3]));

  self_path = argv[0];
  gtk_test_init (&argc, &argv, NULL);
  adw_init ();

  if (argc < 2)
    {
      g_printerr ("Usage: %s [--tap] PATH-TO-QSTORE\n", argv[0]);
      return 2;
    }
  qstore_path = argv[1];

  g_test_add_func ("/inspector-app/screenshots", test_screenshots);
  g_test_add_func ("/inspector-app/read-only", test_read_only);
  g_test_add_func ("/inspector-app/concurrent-writer", test_concurrent_writer);
  g_test_add_func ("/inspector-app/bad-stores", test_bad_stores);
  g_test_add_func ("/inspector-app/german", test_german);
  return g_test_run ();
}
