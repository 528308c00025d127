/* test-inspector-window.c: the main window at every width, opening, refreshing
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Usage: test-inspector-window [--tap] -p /inspector-window/MODE PATH-TO-QSTORE
 *
 *   narrow        at 360 px (GNOME's smallest): no widget wider than the
 *                 window, the sidebar and the catalog fold and Back
 *                 leads through them; a saved size too small opens at the
 *                 smallest size
 *   long-name     a table with a 171-character name: the window keeps
 *                 its width on every page, at 1,100 px and at 360 px
 *   screenshots-360, screenshots-1400
 *                 every page at that width, light and dark, one PNG
 *                 each in $QSTORE_SCREENSHOT_DIR
 *   open          one Open for both kinds of store (an SQLite file, an
 *                 LMDB store's data.mdb), and a folder or file dropped on
 *                 the window
 *   auto-refresh  another process commits: the window reads the store
 *                 again by itself, keeping the rows' scroll position and
 *                 selection; nothing refreshes without a commit; the
 *                 setting turns it off
 *   why           “Why?” leads to the view's own verdict; the title names
 *                 the store; its address shows once; the catalog's
 *                 summaries are not cut short
 *
 * Each mode runs in its own process, under xvfb-run and dbus-run-session,
 * with GSETTINGS_BACKEND=memory.
 */
#include "config.h"

#include <adwaita.h>
#include <math.h>

#include "inspector-window-test-util.h"
#include "qstore-inspector-application.h"

#define LONG_NAME_LENGTH 171

static const char *qstore_path;
static const char *self_path;
static GApplication *application;
static GSettings *settings;

/* Stores */

static char *
long_name (void)
{
  GString *name = g_string_new ("measurements_");

  while (name->len < LONG_NAME_LENGTH)
    g_string_append (name, "of_a_very_long_experiment_");
  g_string_truncate (name, LONG_NAME_LENGTH);
  return g_string_free (name, FALSE);
}

/* A button activated from the keyboard is clicked a moment later. */
static void
press (GtkWidget *button,
       GtkWidget *window)
{
  gtk_widget_activate (button);
  test_run_for (300);
  test_settle (window);
}

static QStoreInspectorWindow *
open_window (const char *uri,
             int         width,
             int         height)
{
  QStoreInspectorWindow *window = qstore_inspector_window_new (ADW_APPLICATION (application));

  qstore_inspector_window_set_settings (window, settings);
  gtk_window_set_default_size (GTK_WINDOW (window), width, height);
  gtk_window_present (GTK_WINDOW (window));
  if (uri != NULL)
    {
      qstore_inspector_window_open_uri (window, uri);
      test_wait_ready (window);
    }
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

/* Widths */

/* Every widget that shows lies within the window, horizontally. Inside
 * something that scrolls sideways, only the scroller is checked: its
 * content may be wider, as a table's columns are. */
static void
assert_within (GtkWidget  *window,
               GtkWidget  *widget,
               GString    *path)
{
  graphene_rect_t bounds;
  int width = gtk_widget_get_width (window);
  gsize len = path->len;
  gboolean recurse = TRUE;

  static const char *decorations[] = { "dimming", "shadow", "border", "outline", NULL };

  /* Popovers are surfaces of their own; a leaflet's shadows fall past
   * its pages while they slide. */
  if (!gtk_widget_get_mapped (widget) || (GTK_IS_NATIVE (widget) && widget != window) ||
      g_strv_contains (decorations, gtk_widget_get_css_name (widget)))
    return;

  g_string_append_printf (path, "/%s", G_OBJECT_TYPE_NAME (widget));
  if (gtk_widget_compute_bounds (widget, window, &bounds) && bounds.size.width > 0)
    {
      /* Adwaita lets a header bar reach a pixel past the edge, over the
       * window's border. */
      if (bounds.origin.x < -1.5 || bounds.origin.x + bounds.size.width > width + 1.5)
        g_error ("%s is %.0f px wide at x = %.0f, in a window %d px wide",
                 path->str, bounds.size.width, bounds.origin.x, width);
    }

  /* An overlay scrollbar's slider may overhang its trough. */
  if (GTK_IS_SCROLLBAR (widget))
    recurse = FALSE;
  if (GTK_IS_SCROLLED_WINDOW (widget))
    {
      GtkPolicyType horizontal;

      gtk_scrolled_window_get_policy (GTK_SCROLLED_WINDOW (widget), &horizontal, NULL);
      if (horizontal != GTK_POLICY_NEVER)
        recurse = FALSE;
    }
  for (GtkWidget *child = recurse ? gtk_widget_get_first_child (widget) : NULL; child != NULL;
       child = gtk_widget_get_next_sibling (child))
    assert_within (window, child, path);
  g_string_truncate (path, len);
}

/* A window @width px wide on the screen (its surface, which takes the
 * shadow of client-side decorations too) shows all of itself: no widget
 * reaches past its edges. */
static void
assert_fits (QStoreInspectorWindow *window,
             int                    width)
{
  g_autoptr(GString) path = g_string_new (NULL);
  GdkSurface *surface = gtk_native_get_surface (GTK_NATIVE (window));
  GtkWidget *content = adw_application_window_get_content (ADW_APPLICATION_WINDOW (window));
  int min_content;

  /* Pages that slide in pass the edge on their way. */
  test_wait (test_still, window, 10);
  test_run_for (50);
  gtk_widget_measure (content, GTK_ORIENTATION_HORIZONTAL, -1, &min_content, NULL, NULL, NULL);
  g_test_message ("%d px on the screen, %d px inside, the content needs %d px",
                  gdk_surface_get_width (surface), gtk_widget_get_width (GTK_WIDGET (window)), min_content);
  g_assert_cmpint (gdk_surface_get_width (surface), ==, width);
  g_assert_cmpint (min_content, <=, gtk_widget_get_width (GTK_WIDGET (window)));
  for (GtkWidget *child = gtk_widget_get_first_child (GTK_WIDGET (window)); child != NULL;
       child = gtk_widget_get_next_sibling (child))
    assert_within (GTK_WIDGET (window), child, path);
}

/* A label that shows a name is at most a few lines high: it does not
 * wrap one letter per line. */
static void
assert_few_lines (GtkWidget *label)
{
  PangoLayout *layout = gtk_label_get_layout (GTK_LABEL (label));

  g_assert_true (gtk_widget_get_mapped (label));
  g_test_message ("“%.30s…” takes %d lines, %d px wide",
                  gtk_label_get_text (GTK_LABEL (label)), pango_layout_get_line_count (layout),
                  gtk_widget_get_width (label));
  g_assert_cmpint (pango_layout_get_line_count (layout), <=, 3);
  g_assert_cmpint (gtk_widget_get_width (label), >=, 150);
}

static void
test_narrow (void)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("qstore-window-XXXXXX", &error);
  g_autofree char *uri = test_make_demo (qstore_path, dir, "demo");
  QStoreInspectorWindow *window;
  QStoreInspectorCatalogPage *catalog;
  GtkWidget *back;

  window = open_window (uri, 360, 640);
  catalog = qstore_inspector_window_get_catalog_page (window);
  back = qstore_inspector_window_get_back_button (window);

  /* The page shows; the sidebar and the catalog's list and details are
   * folded. */
  g_assert_true (qstore_inspector_window_get_folded (window));
  g_assert_true (qstore_inspector_catalog_page_get_folded (catalog));
  g_assert_cmpstr (qstore_inspector_window_get_page (window), ==, "catalog");
  g_assert_true (gtk_widget_get_visible (back));
  assert_fits (window, 360);

  /* An entry: its details take the page; Back returns to the list. */
  g_assert_true (qstore_inspector_catalog_page_select_name (catalog, "main.city_customers"));
  test_settle (GTK_WIDGET (window));
  g_assert_true (qstore_inspector_catalog_page_can_go_back (catalog));
  assert_few_lines (qstore_inspector_catalog_page_get_title_label (catalog));
  assert_fits (window, 360);
  press (back, GTK_WIDGET (window));
  g_assert_false (qstore_inspector_catalog_page_can_go_back (catalog));
  g_assert_true (qstore_inspector_window_get_folded (window));
  /* And from the list to the sidebar. */
  press (back, GTK_WIDGET (window));
  assert_fits (window, 360);

  test_show_page (window, "stale");
  assert_fits (window, 360);
  gtk_widget_activate_action (GTK_WIDGET (window), "win.show-table", "s", "main.orders");
  test_show_page (window, "data");
  assert_fits (window, 360);
  close_window (window);

  /* A size saved too small (by hand, or by an older version) opens at
   * the smallest the window can be, and shows as above. */
  g_settings_set_int (settings, "window-width", 200);
  g_settings_set_int (settings, "window-height", 100);
  window = qstore_inspector_window_new (ADW_APPLICATION (application));
  qstore_inspector_window_set_settings (window, settings);
  gtk_window_present (GTK_WINDOW (window));
  qstore_inspector_window_open_uri (window, uri);
  test_wait_ready (window);
  test_settle (GTK_WIDGET (window));
  g_assert_cmpint (gdk_surface_get_height (gtk_native_get_surface (GTK_NATIVE (window))), ==, 294);
  assert_fits (window, 360);
  g_assert_true (qstore_inspector_window_get_folded (window));
  close_window (window);

  test_remove_tree (dir);
}

/* A long name */

static void
check_long_name (const char *uri,
                 const char *name,
                 int         width)
{
  g_autofree char *qualified = g_strconcat ("main.", name, NULL);
  QStoreInspectorWindow *window = open_window (uri, width, 700);
  QStoreInspectorCatalogPage *catalog = qstore_inspector_window_get_catalog_page (window);
  GdkMonitor *monitor = gdk_display_get_monitor_at_surface (gtk_widget_get_display (GTK_WIDGET (window)),
                                                            gtk_native_get_surface (GTK_NATIVE (window)));
  GdkRectangle geometry;

  gdk_monitor_get_geometry (monitor, &geometry);
  g_test_message ("%d px wide window on a %d px screen", width, geometry.width);

  g_assert_true (qstore_inspector_catalog_page_select_name (catalog, qualified));
  test_settle (GTK_WIDGET (window));
  assert_fits (window, width);
  assert_few_lines (qstore_inspector_catalog_page_get_title_label (catalog));
  test_screenshot (GTK_WIDGET (window), width > 400 ? "long-name-catalog" : "long-name-catalog-360");

  gtk_widget_activate_action (GTK_WIDGET (window), "win.show-table", "s", qualified);
  test_show_page (window, "data");
  g_assert_cmpstr (qstore_inspector_data_page_get_table (qstore_inspector_window_get_data_page (window)),
                   ==, qualified);
  assert_fits (window, width);
  /* The header's buttons are on the screen. */
  g_assert_cmpint (gtk_widget_get_width (GTK_WIDGET (window)), <=, 1400);
  test_screenshot (GTK_WIDGET (window), width > 400 ? "long-name-data" : "long-name-data-360");
  close_window (window);
}

static void
test_long_name (void)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("qstore-window-XXXXXX", &error);
  g_autofree char *name = long_name ();
  /* The store's own name is long too. */
  g_autofree char *uri = test_spec_uri ("lmdb", dir, name);
  g_autofree char *sql = g_strdup_printf ("CREATE TABLE short (id INTEGER PRIMARY KEY);"
                                          "CREATE TABLE \"%s\" (id INTEGER PRIMARY KEY, \"%s\" TEXT);"
                                          "INSERT INTO \"%s\" VALUES (1, 'a value');"
                                          "CREATE VIEW \"%s_view\" AS SELECT * FROM \"%s\";",
                                          name, name, name, name, name);

  g_assert_cmpuint (strlen (name), ==, LONG_NAME_LENGTH);
  test_exec_at (uri, sql);
  check_long_name (uri, name, 1100);
  check_long_name (uri, name, 360);
  test_remove_tree (dir);
}

/* Screenshots */

static void
screenshots_at (int width)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("qstore-window-XXXXXX", &error);
  g_autofree char *uri = test_make_demo (qstore_path, dir, "demo");
  g_autofree char *missing = g_strconcat (uri, "-missing", NULL);
  int height = width > 400 ? 900 : 720;
  QStoreInspectorWindow *window;
  QStoreInspectorCatalogPage *catalog;
  QStoreInspectorDataPage *data;
  GtkWindow *row;

  test_set_dark (FALSE);
  window = open_window (NULL, width, height);
  test_shoot (GTK_WIDGET (window), "welcome", width);
  qstore_inspector_window_open_uri (window, uri);
  test_wait_ready (window);
  catalog = qstore_inspector_window_get_catalog_page (window);
  data = qstore_inspector_window_get_data_page (window);

  test_show_page (window, "catalog");
  if (width < 400)
    {
      /* Folded: the sidebar, the list, then the details, one by one. */
      press (qstore_inspector_window_get_back_button (window), GTK_WIDGET (window));
      test_shoot (GTK_WIDGET (window), "sidebar", width);
      test_show_page (window, "catalog");
      test_shoot (GTK_WIDGET (window), "catalog-list", width);
    }
  g_assert_true (qstore_inspector_catalog_page_select_name (catalog, "main.orders"));
  test_shoot (GTK_WIDGET (window), "catalog-table", width);
  g_assert_true (qstore_inspector_catalog_page_select_name (catalog, "main.city_customers"));
  test_shoot (GTK_WIDGET (window), "catalog-materialized-view", width);
  g_assert_true (qstore_inspector_catalog_page_select_name (catalog, "clean_shutdown"));
  test_shoot (GTK_WIDGET (window), "catalog-bookkeeping", width);

  test_show_page (window, "stale");
  test_shoot (GTK_WIDGET (window), "stale", width);

  gtk_widget_activate_action (GTK_WIDGET (window), "win.show-table", "s", "main.orders");
  test_show_page (window, "data");
  test_shoot (GTK_WIDGET (window), "data", width);
  gtk_widget_activate_action (GTK_WIDGET (data), "data.search", NULL);
  gtk_editable_set_text (GTK_EDITABLE (qstore_inspector_data_page_get_part (data, "row-search")), "gift");
  g_signal_emit_by_name (qstore_inspector_data_page_get_part (data, "row-search"), "search-changed");
  test_wait (test_data_ready, window, 30);
  test_shoot (GTK_WIDGET (window), "data-search", width);

  gtk_selection_model_select_item (qstore_inspector_data_page_get_selection (data), 0, TRUE);
  row = qstore_inspector_data_page_show_row (data, 0);
  g_assert_nonnull (row);
  test_shoot (GTK_WIDGET (row), "row", width);
  gtk_window_destroy (row);

  /* A store that cannot be opened. */
  qstore_inspector_window_open_uri (window, missing);
  test_wait (test_window_ready, window, 30);
  test_shoot (GTK_WIDGET (window), "error", width);
  close_window (window);

  adw_style_manager_set_color_scheme (adw_style_manager_get_default (), ADW_COLOR_SCHEME_DEFAULT);
  test_remove_tree (dir);
}

static void
test_screenshots_narrow (void)
{
  screenshots_at (360);
}

static void
test_screenshots_wide (void)
{
  screenshots_at (1400);
}

/* Opening */

static GtkWidget *
find_toplevel (GType type)
{
  GList *toplevels = gtk_window_list_toplevels ();
  GtkWidget *found = NULL;

  for (GList *l = toplevels; l != NULL; l = l->next)
    if (G_TYPE_CHECK_INSTANCE_TYPE (l->data, type) && gtk_widget_get_visible (l->data))
      found = l->data;
  g_list_free (toplevels);
  return found;
}

static gboolean
chooser_shown (gpointer data)
{
  return find_toplevel (GTK_TYPE_FILE_CHOOSER_DIALOG) != NULL;
}

static gboolean
chooser_picked (gpointer data)
{
  g_autoptr(GFile) picked = gtk_file_chooser_get_file (data);

  return picked != NULL && g_file_equal (picked, g_object_get_data (data, "wanted"));
}

/* What a person does in the chooser: pick @path, then Open. */
static void
choose_in_dialog (QStoreInspectorWindow *window,
                  const char            *path)
{
  g_autoptr(GFile) file = g_file_new_for_path (path);
  g_autoptr(GError) error = NULL;
  GtkWidget *dialog;

  gtk_widget_activate_action (GTK_WIDGET (window), "win.open", NULL);
  test_wait (chooser_shown, NULL, 10);
  dialog = find_toplevel (GTK_TYPE_FILE_CHOOSER_DIALOG);
  /* One step: the chooser itself, no question first. */
  g_assert_null (find_toplevel (ADW_TYPE_MESSAGE_DIALOG));
  g_assert_cmpint (gtk_file_chooser_get_action (GTK_FILE_CHOOSER (dialog)), ==, GTK_FILE_CHOOSER_ACTION_OPEN);
  gtk_file_chooser_set_file (GTK_FILE_CHOOSER (dialog), file, &error);
  g_assert_no_error (error);
  /* The chooser selects the file once it has listed its folder. */
  g_object_set_data (G_OBJECT (dialog), "wanted", file);
  test_wait (chooser_picked, dialog, 10);
  test_run_for (100);
  test_screenshot (dialog, "open-chooser");
  gtk_dialog_response (GTK_DIALOG (dialog), GTK_RESPONSE_ACCEPT);
}

static void
drop_on (QStoreInspectorWindow *window,
         const char            *path)
{
  g_autoptr(GListModel) controllers = gtk_widget_observe_controllers (GTK_WIDGET (window));
  g_autoptr(GFile) file = g_file_new_for_path (path);
  GSList *files = g_slist_prepend (NULL, file);
  GValue value = G_VALUE_INIT;
  GtkDropTarget *target = NULL;
  gboolean accepted = FALSE;

  for (guint i = 0; i < g_list_model_get_n_items (controllers); i++)
    {
      g_autoptr(GObject) controller = g_list_model_get_item (controllers, i);

      if (GTK_IS_DROP_TARGET (controller))
        target = GTK_DROP_TARGET (controller);
    }
  g_assert_nonnull (target);
  g_value_init (&value, GDK_TYPE_FILE_LIST);
  g_value_set_boxed (&value, files);
  /* What GTK does when something is dropped on the window. */
  g_signal_emit_by_name (target, "drop", &value, 100.0, 100.0, &accepted);
  g_value_unset (&value);
  g_slist_free (files);
  g_assert_true (accepted);
}

typedef struct
{
  QStoreInspectorWindow *window;
  const char            *uri;
} OpenWait;

static gboolean
opened (gpointer data)
{
  OpenWait *wait = data;
  QStoreInspectorContents *contents = qstore_inspector_window_get_contents (wait->window);

  return test_window_ready (wait->window) &&
         (qstore_inspector_window_get_error (wait->window) != NULL ||
          (contents != NULL && g_str_equal (qstore_inspector_contents_get_uri (contents), wait->uri)));
}

static void
assert_open (QStoreInspectorWindow *window,
             const char            *uri)
{
  OpenWait wait = { window, uri };

  test_wait (opened, &wait, 30);
  g_assert_null (qstore_inspector_window_get_error (window));
  g_assert_cmpstr (qstore_inspector_window_get_state (window), ==, "store");
  g_assert_cmpstr (qstore_inspector_contents_get_uri (qstore_inspector_window_get_contents (window)), ==, uri);
}

static void
test_open (void)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("qstore-window-XXXXXX", &error);
  g_autofree char *lmdb_uri = test_make_demo (qstore_path, dir, "shop");
  g_autofree char *lmdb_dir = g_build_filename (dir, "shop", NULL);
  g_autofree char *data_mdb = g_build_filename (lmdb_dir, "data.mdb", NULL);
  g_autofree char *sqlite_path = g_build_filename (dir, "notes.db", NULL);
  g_autofree char *sqlite_uri = g_strconcat ("sqlite:", sqlite_path, NULL);
  QStoreInspectorWindow *window;

  test_exec_at (sqlite_uri, "CREATE TABLE note (id INTEGER PRIMARY KEY, body TEXT)");
  window = open_window (NULL, 1000, 700);

  /* An LMDB store by its data.mdb, an SQLite store by its file. */
  choose_in_dialog (window, data_mdb);
  assert_open (window, lmdb_uri);
  choose_in_dialog (window, sqlite_path);
  assert_open (window, sqlite_uri);

  /* A folder dropped on the window, then a file. */
  drop_on (window, lmdb_dir);
  assert_open (window, lmdb_uri);
  drop_on (window, sqlite_path);
  assert_open (window, sqlite_uri);
  close_window (window);
  test_remove_tree (dir);
}

/* Refreshing by itself */

typedef struct
{
  QStoreInspectorWindow *window;
  guint                  loads;
} LoadWait;

static gboolean
loaded_again (gpointer data)
{
  LoadWait *wait = data;

  return qstore_inspector_window_get_n_loads (wait->window) > wait->loads &&
         test_window_ready (wait->window) && test_data_ready (wait->window);
}

static void
refreshes_by_itself (const char *spec)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("qstore-window-XXXXXX", &error);
  g_autofree char *uri = test_spec_uri (spec, dir, "store");
  QStoreInspectorWindow *window;
  QStoreInspectorDataPage *data;
  GtkColumnView *view;
  GtkAdjustment *vertical;
  GtkSelectionModel *selection;
  LoadWait wait;
  double position;
  guint loads;

  test_exec_at (uri,
                "CREATE TABLE t (id INTEGER PRIMARY KEY, a TEXT);"
                "INSERT INTO t WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1000)"
                "  SELECT i, 'row ' || i FROM n;");
  g_settings_set_boolean (settings, "auto-refresh", TRUE);
  window = open_window (uri, 1000, 700);
  data = qstore_inspector_window_get_data_page (window);
  test_show_page (window, "data");
  g_assert_nonnull (qstore_inspector_window_get_monitor (window));

  /* Reading the store changes files too (LMDB's lock file, SQLite's
   * shared memory): that must not make it read again, and again. */
  loads = qstore_inspector_window_get_n_loads (window);
  test_run_for (1200);
  g_assert_cmpuint (qstore_inspector_window_get_n_loads (window), ==, loads);

  /* Scrolled down, a row selected. */
  view = GTK_COLUMN_VIEW (qstore_inspector_data_page_get_part (data, "column-view"));
  vertical = gtk_scrollable_get_vadjustment (GTK_SCROLLABLE (view));
  selection = qstore_inspector_data_page_get_selection (data);
  gtk_adjustment_set_value (vertical, 3000);
  test_run_for (300);
  position = gtk_adjustment_get_value (vertical);
  g_assert_cmpfloat (position, >, 1000);
  gtk_selection_model_select_item (selection, 130, TRUE);

  test_exec_in_other_process (self_path, uri, "INSERT INTO t VALUES (1001, 'new')");
  wait = (LoadWait) { window, loads };
  test_wait (loaded_again, &wait, 20);
  test_run_for (300);
  g_test_message ("%s: read again after a commit; scrolled to %.0f, was %.0f", spec,
                  gtk_adjustment_get_value (vertical), position);
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (qstore_inspector_data_page_get_model (data))),
                    ==, 1001);
  g_assert_cmpfloat (fabs (gtk_adjustment_get_value (vertical) - position), <, 1);
  g_assert_true (gtk_selection_model_is_selected (selection, 130));
  g_assert_false (gtk_selection_model_is_selected (selection, 0));

  /* Off: a commit leaves the window as it is; F5 still reads. */
  g_settings_set_boolean (settings, "auto-refresh", FALSE);
  g_assert_null (qstore_inspector_window_get_monitor (window));
  loads = qstore_inspector_window_get_n_loads (window);
  test_exec_in_other_process (self_path, uri, "INSERT INTO t VALUES (1002, 'newer')");
  test_run_for (800);
  g_assert_cmpuint (qstore_inspector_window_get_n_loads (window), ==, loads);
  g_settings_set_boolean (settings, "auto-refresh", TRUE);

  close_window (window);
  test_remove_tree (dir);
}

static void
test_auto_refresh (void)
{
  refreshes_by_itself ("lmdb");
  refreshes_by_itself ("sqlite");
}

/* Why, the title, the address */

static GtkWidget *
find_button (GtkWidget  *root,
             const char *label)
{
  if (GTK_IS_BUTTON (root) && g_strcmp0 (gtk_button_get_label (GTK_BUTTON (root)), label) == 0 &&
      gtk_widget_get_mapped (root))
    return root;
  for (GtkWidget *child = gtk_widget_get_first_child (root); child != NULL;
       child = gtk_widget_get_next_sibling (child))
    {
      GtkWidget *found = find_button (child, label);

      if (found != NULL)
        return found;
    }
  return NULL;
}

static guint
count_labels (GtkWidget  *root,
              const char *text)
{
  guint n = GTK_IS_LABEL (root) && gtk_widget_get_mapped (root) &&
            strstr (gtk_label_get_text (GTK_LABEL (root)), text) != NULL;

  for (GtkWidget *child = gtk_widget_get_first_child (root); child != NULL;
       child = gtk_widget_get_next_sibling (child))
    n += count_labels (child, text);
  return n;
}

static void
test_why (void)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("qstore-window-XXXXXX", &error);
  g_autofree char *uri = test_make_demo (qstore_path, dir, "demo");
  g_autofree char *location = g_build_filename (dir, "demo", NULL);
  QStoreInspectorWindow *window = open_window (uri, 1100, 720);
  QStoreInspectorCatalogPage *catalog = qstore_inspector_window_get_catalog_page (window);
  QStoreInspectorStalePage *stale = qstore_inspector_window_get_stale_page (window);
  GtkWidget *why;
  GtkWidget *focus;

  g_assert_cmpstr (gtk_window_get_title (GTK_WINDOW (window)), ==, "demo — qstore Inspector");
  /* Where the store is, once. */
  g_assert_cmpuint (count_labels (GTK_WIDGET (window), location), ==, 1);
  /* The materialized views' summaries too, whose row count comes last,
   * even in large text. */
  g_assert_cmpuint (test_assert_summaries_whole (GTK_WIDGET (catalog)), >=, 9);
  g_object_set (gtk_settings_get_default (), "gtk-xft-dpi", 160 * 1024, NULL);
  test_settle (GTK_WIDGET (window));
  g_assert_cmpuint (test_assert_summaries_whole (GTK_WIDGET (catalog)), >=, 9);
  test_screenshot (GTK_WIDGET (window), "large-text");
  g_object_set (gtk_settings_get_default (), "gtk-xft-dpi", 96 * 1024, NULL);
  test_settle (GTK_WIDGET (window));

  /* The second view's verdict, not the page's top. */
  g_assert_true (qstore_inspector_catalog_page_select_name (catalog, "main.city_customers"));
  test_settle (GTK_WIDGET (window));
  why = find_button (GTK_WIDGET (catalog), "_Why?");
  g_assert_nonnull (why);
  press (why, GTK_WIDGET (window));
  g_assert_cmpstr (qstore_inspector_window_get_page (window), ==, "stale");
  g_assert_cmpstr (qstore_inspector_stale_page_get_highlighted (stale), ==, "main.city_customers");
  focus = gtk_root_get_focus (GTK_ROOT (window));
  g_assert_nonnull (focus);
  g_assert_true (ADW_IS_ACTION_ROW (focus));
  g_assert_cmpstr (adw_preferences_row_get_title (ADW_PREFERENCES_ROW (focus)), ==, "main.city_customers");
  test_wait (test_still, window, 10);
  test_screenshot (GTK_WIDGET (window), "why");
  g_assert_cmpuint (count_labels (GTK_WIDGET (window), location), ==, 1);
  close_window (window);
  test_remove_tree (dir);
}

int
main (int    argc,
      char **argv)
{
  int status;

  if (test_exec_subcommand (argc, argv))
    return 0;

  self_path = argv[0];
  gtk_test_init (&argc, &argv, NULL);
  adw_init ();

  if (argc < 2)
    {
      g_printerr ("Usage: %s [--tap] PATH-TO-QSTORE\n", argv[0]);
      return 2;
    }
  qstore_path = argv[1];
  /* Registered, not run: it loads the style sheet and the settings. */
  application = G_APPLICATION (qstore_inspector_application_new ());
  g_application_register (application, NULL, NULL);
  settings = g_object_ref (qstore_inspector_application_get_settings (QSTORE_INSPECTOR_APPLICATION (application)));

  g_test_add_func ("/inspector-window/narrow", test_narrow);
  g_test_add_func ("/inspector-window/long-name", test_long_name);
  g_test_add_func ("/inspector-window/screenshots-360", test_screenshots_narrow);
  g_test_add_func ("/inspector-window/screenshots-1400", test_screenshots_wide);
  g_test_add_func ("/inspector-window/open", test_open);
  g_test_add_func ("/inspector-window/auto-refresh", test_auto_refresh);
  g_test_add_func ("/inspector-window/why", test_why);
  status = g_test_run ();
  g_clear_object (&settings);
  g_clear_object (&application);
  return status;
}
