/* inspector-test-util.h: what the inspector's tests share
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <glib/gstdio.h>
#include <gtk/gtk.h>
#include <qstore.h>
#include <string.h>

#include "qstore-inspector-contents.h"
#include "qstore-inspector-row-model.h"
#include "qstore-test-util.h"

G_BEGIN_DECLS

static gboolean
test_wake (gpointer data)
{
  return G_SOURCE_CONTINUE;
}

/* Runs the main loop until @done says so, failing after @seconds. */
static inline void
test_wait (gboolean (*done) (gpointer data),
           gpointer  data,
           double    seconds)
{
  gint64 end = g_get_monotonic_time () + (gint64) (seconds * G_USEC_PER_SEC);
  guint wake = g_timeout_add (10, test_wake, NULL);

  while (!done (data))
    {
      if (g_get_monotonic_time () > end)
        g_error ("timed out waiting after %.0f s", seconds);
      g_main_context_iteration (NULL, TRUE);
    }
  g_source_remove (wake);
}

static inline gboolean
test_elapsed (gpointer data)
{
  return g_get_monotonic_time () >= *(gint64 *) data;
}

/* Lets the main loop run for @ms milliseconds (layout, drawing). */
static inline void
test_run_for (int ms)
{
  gint64 end = g_get_monotonic_time () + ms * 1000;

  test_wait (test_elapsed, &end, ms / 1000.0 + 5);
}

/* Screenshots */

/* The widget as it draws now. A window that is being mapped or resized
 * (a loaded machine gets there late) draws nothing yet: wait for it. */
static inline GskRenderNode *
test_snapshot_node (GtkWidget *widget)
{
  g_autoptr(GdkPaintable) paintable = gtk_widget_paintable_new (widget);
  GtkSnapshot *snapshot = gtk_snapshot_new ();

  gdk_paintable_snapshot (paintable, snapshot, gtk_widget_get_width (widget),
                          gtk_widget_get_height (widget));
  return gtk_snapshot_free_to_node (snapshot);
}

static inline gboolean
test_draws (gpointer data)
{
  GtkWidget *widget = data;
  g_autoptr(GskRenderNode) node = NULL;

  if (!gtk_widget_get_mapped (widget) || gtk_widget_get_width (widget) <= 0 ||
      gtk_widget_get_height (widget) <= 0)
    return FALSE;
  node = test_snapshot_node (widget);
  return node != NULL;
}

static inline GdkTexture *
test_render (GtkWidget *widget)
{
  g_autoptr(GskRenderNode) node = NULL;
  GskRenderer *renderer;

  test_wait (test_draws, widget, 30);
  node = test_snapshot_node (widget);
  g_assert_nonnull (node);
  renderer = gtk_native_get_renderer (gtk_widget_get_native (widget));
  return gsk_renderer_render_texture (renderer, node,
                                      &GRAPHENE_RECT_INIT (0, 0, gtk_widget_get_width (widget),
                                                           gtk_widget_get_height (widget)));
}

/* A page that shows something has many colours: text, icons, borders. */
static inline guint
test_count_colours (GdkTexture *texture)
{
  int width = gdk_texture_get_width (texture);
  int height = gdk_texture_get_height (texture);
  gsize stride = width * 4;
  g_autofree guchar *pixels = g_malloc (stride * height);
  g_autoptr(GHashTable) colours = g_hash_table_new (NULL, NULL);

  gdk_texture_download (texture, pixels, stride);
  for (int y = 0; y < height; y += 3)
    for (int x = 0; x < width; x += 3)
      {
        guint32 pixel;

        memcpy (&pixel, pixels + y * stride + x * 4, 4);
        g_hash_table_add (colours, GUINT_TO_POINTER (pixel));
      }
  return g_hash_table_size (colours);
}

static inline void
test_screenshot (GtkWidget  *widget,
            const char *name)
{
  const char *dir = g_getenv ("QSTORE_SCREENSHOT_DIR");
  g_autoptr(GdkTexture) texture = test_render (widget);
  g_autofree char *path = NULL;
  guint colours = test_count_colours (texture);

  g_test_message ("%s: %d×%d, %u colours", name, gdk_texture_get_width (texture),
                  gdk_texture_get_height (texture), colours);
  g_assert_cmpuint (colours, >, 40);

  if (dir == NULL)
    return;
  g_mkdir_with_parents (dir, 0755);
  path = g_strdup_printf ("%s/%s.png", dir, name);
  g_assert_true (gdk_texture_save_to_png (texture, path));
  g_test_message ("saved %s", path);
}

/* Widgets */

/* The first widget under @root, in depth-first order, that has the CSS
 * class @css_class. */
static inline GtkWidget *
test_find_by_class (GtkWidget  *root,
                    const char *css_class)
{
  if (gtk_widget_has_css_class (root, css_class))
    return root;
  for (GtkWidget *child = gtk_widget_get_first_child (root); child != NULL;
       child = gtk_widget_get_next_sibling (child))
    {
      GtkWidget *found = test_find_by_class (child, css_class);

      if (found != NULL)
        return found;
    }
  return NULL;
}

/* The first widget under @root, in depth-first order, of @type. */
static inline GtkWidget *
test_find_by_type (GtkWidget *root,
                   GType      type)
{
  if (G_TYPE_CHECK_INSTANCE_TYPE (root, type))
    return root;
  for (GtkWidget *child = gtk_widget_get_first_child (root); child != NULL;
       child = gtk_widget_get_next_sibling (child))
    {
      GtkWidget *found = test_find_by_type (child, type);

      if (found != NULL)
        return found;
    }
  return NULL;
}

/* The text a code box shows: a label's, or a text view's buffer. */
static inline char *
test_widget_text (GtkWidget *widget)
{
  if (GTK_IS_LABEL (widget))
    return g_strdup (gtk_label_get_text (GTK_LABEL (widget)));
  if (GTK_IS_TEXT_VIEW (widget))
    {
      GtkTextBuffer *buffer = gtk_text_view_get_buffer (GTK_TEXT_VIEW (widget));
      GtkTextIter start, end;

      gtk_text_buffer_get_bounds (buffer, &start, &end);
      return gtk_text_buffer_get_text (buffer, &start, &end, FALSE);
    }
  g_assert_not_reached ();
}

/* Stores */

/* The checksums of a store's files that say what it holds: lock and
 * shared-memory files are how readers coordinate (an LMDB reader takes a
 * slot in lock.mdb), and a reader of an SQLite store in WAL mode may leave
 * an empty log, so none of them is a change to the store. A log with
 * something in it is. */
static inline GHashTable *
test_checksum_store (const char *dir)
{
  GHashTable *sums = test_checksum_tree (dir);
  g_autofree char *empty = g_compute_checksum_for_string (G_CHECKSUM_SHA256, "", 0);
  GHashTableIter iter;
  gpointer key, value;

  g_hash_table_iter_init (&iter, sums);
  while (g_hash_table_iter_next (&iter, &key, &value))
    {
      g_autofree char *name = g_path_get_basename (key);

      if (g_str_equal (name, "lock.mdb") || g_str_has_suffix (name, "-shm") ||
          (g_str_has_suffix (name, "-wal") && g_str_equal (value, empty)))
        g_hash_table_iter_remove (&iter);
    }
  return sums;
}

static inline void
test_assert_same_sums (GHashTable *before,
                  GHashTable *after)
{
  GHashTableIter iter;
  gpointer key, value;

  g_assert_cmpuint (g_hash_table_size (before), >, 0);
  g_hash_table_iter_init (&iter, before);
  while (g_hash_table_iter_next (&iter, &key, &value))
    {
      g_test_message ("%s %s", (char *) value, (char *) key);
      g_assert_cmpstr (g_hash_table_lookup (after, key), ==, value);
    }
  g_assert_cmpuint (g_hash_table_size (after), ==, g_hash_table_size (before));
}

/* A test program run as `PROGRAM --exec URI SQL` runs @SQL on the store
 * and exits: a writer in another process. Returns whether it was. */
static inline gboolean
test_exec_subcommand (int    argc,
                      char **argv)
{
  if (argc != 4 || !g_str_equal (argv[1], "--exec"))
    return FALSE;
  test_exec_at (argv[2], argv[3]);
  return TRUE;
}

/* Runs @sql on the store at @uri in another process: this test program
 * (@self_path), run as `--exec URI SQL`. */
static inline void
test_exec_in_other_process (const char *self_path,
                            const char *uri,
                            const char *sql)
{
  g_autoptr(GError) error = NULL;
  int status = 0;
  const char *argv[] = { self_path, "--exec", uri, sql, NULL };

  g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, NULL, NULL, &status, &error);
  g_assert_no_error (error);
  g_assert_true (g_spawn_check_wait_status (status, NULL));
}

/* A store per test: the provider from QSTORE_TEST_PROVIDER (lmdb or
 * sqlite), and what the inspector read of it. */

typedef struct
{
  char                    *dir;
  char                    *uri;
  QStoreInspectorContents *contents;
} Fixture;

static inline gboolean
test_tree_removed (gpointer data)
{
  test_remove_tree (data);
  return !g_file_test (data, G_FILE_TEST_EXISTS);
}

static inline void
fixture_tear_down (Fixture       *f,
                   gconstpointer  data)
{
  g_clear_object (&f->contents);
  /* A row model closes its read-only database in a worker thread once it
   * is finalized, and SQLite deletes its -wal and -shm files then: the
   * directory can be emptied only after that. */
  test_wait (test_tree_removed, f->dir, 30);
  g_free (f->dir);
  g_free (f->uri);
}

/* Reading a store as the window does */

static inline gboolean
test_load_done (gpointer data)
{
  return *(gpointer *) data != NULL;
}

static inline void
test_loaded_cb (GObject      *object,
           GAsyncResult *result,
           gpointer      user_data)
{
  QStoreInspectorContents **contents = user_data;
  g_autoptr(GError) error = NULL;

  *contents = qstore_inspector_contents_load_finish (result, &error);
  g_assert_no_error (error);
}

/* Loads as the window does: in a worker thread. */
static inline QStoreInspectorContents *
test_load (const char *uri)
{
  QStoreInspectorContents *contents = NULL;

  qstore_inspector_contents_load_async (uri, NULL, NULL, test_loaded_cb, &contents);
  test_wait (test_load_done, &contents, 20);
  return contents;
}

/* Waits for the row at @position of @model to be read. */
typedef struct
{
  QStoreInspectorRowModel *model;
  QStoreInspectorRow      *row;
} TestRowWait;

static inline gboolean
test_row_loaded (gpointer data)
{
  TestRowWait *wait = data;

  return qstore_inspector_row_model_get_error (wait->model) != NULL ||
         (qstore_inspector_row_is_loaded (wait->row) &&
          !qstore_inspector_row_model_is_busy (wait->model));
}

static inline QStoreInspectorRow *
test_get_loaded_row (QStoreInspectorRowModel *model,
                     guint                    position)
{
  TestRowWait wait = { model, g_list_model_get_item (G_LIST_MODEL (model), position) };

  g_assert_nonnull (wait.row);
  test_wait (test_row_loaded, &wait, 30);
  g_assert_null (qstore_inspector_row_model_get_error (model));
  return wait.row;
}

G_END_DECLS
