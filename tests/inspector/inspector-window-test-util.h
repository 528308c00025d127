/* inspector-window-test-util.h: what the tests of whole windows share
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <adwaita.h>

#include "inspector-test-util.h"
#include "qstore-inspector-window.h"

G_BEGIN_DECLS

/* The window has read its store, or says why it cannot. */
static inline gboolean
test_window_ready (gpointer data)
{
  QStoreInspectorWindow *window = data;
  const char *state = qstore_inspector_window_get_state (window);

  return !qstore_inspector_window_is_busy (window) &&
         (g_strcmp0 (state, "store") == 0 || g_strcmp0 (state, "error") == 0);
}

/* The data page's first rows are in. */
static inline gboolean
test_data_ready (gpointer data)
{
  QStoreInspectorWindow *window = data;
  QStoreInspectorRowModel *model = qstore_inspector_data_page_get_model (qstore_inspector_window_get_data_page (window));
  g_autoptr(QStoreInspectorRow) row = NULL;

  if (model == NULL)
    return TRUE;
  if (g_list_model_get_n_items (G_LIST_MODEL (model)) == 0)
    return !qstore_inspector_row_model_is_busy (model);
  row = g_list_model_get_item (G_LIST_MODEL (model), 0);
  return qstore_inspector_row_is_loaded (row) && !qstore_inspector_row_model_is_busy (model);
}

static inline void
test_wait_ready (QStoreInspectorWindow *window)
{
  test_wait (test_window_ready, window, 30);
  g_assert_cmpstr (qstore_inspector_window_get_error (window), ==, NULL);
  g_assert_cmpstr (qstore_inspector_window_get_state (window), ==, "store");
}

/* Whether a leaflet or a stack below @widget is moving between its pages:
 * a page that slides in passes the window's edge on its way. */
static inline gboolean
test_sliding (GtkWidget *widget)
{
  if (ADW_IS_LEAFLET (widget) && adw_leaflet_get_child_transition_running (ADW_LEAFLET (widget)))
    return TRUE;
  if (GTK_IS_STACK (widget) && gtk_stack_get_transition_running (GTK_STACK (widget)))
    return TRUE;
  for (GtkWidget *child = gtk_widget_get_first_child (widget); child != NULL;
       child = gtk_widget_get_next_sibling (child))
    if (test_sliding (child))
      return TRUE;
  return FALSE;
}

static inline gboolean
test_still (gpointer data)
{
  return !test_sliding (data);
}

/* Drawn as it will stay: what a change started has run its course. */
static inline void
test_settle (GtkWidget *widget)
{
  test_run_for (60);
  test_wait (test_still, widget, 10);
  test_run_for (40);
}

static inline void
test_set_dark (gboolean dark)
{
  adw_style_manager_set_color_scheme (adw_style_manager_get_default (),
                                      dark ? ADW_COLOR_SCHEME_FORCE_DARK : ADW_COLOR_SCHEME_FORCE_LIGHT);
}

/* @widget as it is now, light and dark: page-WIDTH-light.png and
 * page-WIDTH-dark.png. */
static inline void
test_shoot (GtkWidget  *widget,
            const char *page,
            int         width)
{
  for (guint dark = 0; dark < 2; dark++)
    {
      g_autofree char *name = g_strdup_printf ("%s-%d-%s", page, width, dark ? "dark" : "light");

      test_set_dark (dark);
      test_settle (widget);
      test_screenshot (widget, name);
    }
  test_set_dark (FALSE);
}

/* Shows @page as its action does, and waits until it is drawn. */
static inline void
test_show_page (QStoreInspectorWindow *window,
                const char            *page)
{
  gtk_widget_activate_action (GTK_WIDGET (window), "win.show-page", "s", page);
  g_assert_cmpstr (qstore_inspector_window_get_page (window), ==, page);
  if (g_str_equal (page, "data"))
    test_wait (test_data_ready, window, 30);
  test_run_for (60);
  test_settle (GTK_WIDGET (window));
}

/* The demo store, made by `qstore demo` in @dir/@name. */
static inline char *
test_make_demo (const char *qstore_path,
                const char *dir,
                const char *name)
{
  g_autofree char *store = g_build_filename (dir, name, NULL);
  g_autoptr(GError) error = NULL;
  int status = 0;
  const char *argv[] = { qstore_path, "demo", store, NULL };

  g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL,
                NULL, NULL, &status, &error);
  g_assert_no_error (error);
  g_assert_true (g_spawn_check_wait_status (status, NULL));
  return g_strconcat ("lmdb:", store, NULL);
}

/* No summary in the catalog's list below @root is cut short. Returns
 * how many there are. */
static inline guint
test_assert_summaries_whole (GtkWidget *root)
{
  guint n = 0;

  if (GTK_IS_LABEL (root) && gtk_widget_has_css_class (root, "caption") && gtk_widget_get_mapped (root) &&
      gtk_widget_get_ancestor (root, GTK_TYPE_LIST_BOX_ROW) != NULL)
    {
      if (pango_layout_is_ellipsized (gtk_label_get_layout (GTK_LABEL (root))))
        g_error ("“%s” is cut short", gtk_label_get_text (GTK_LABEL (root)));
      n++;
    }
  for (GtkWidget *child = gtk_widget_get_first_child (root); child != NULL;
       child = gtk_widget_get_next_sibling (child))
    n += test_assert_summaries_whole (child);
  return n;
}

G_END_DECLS
