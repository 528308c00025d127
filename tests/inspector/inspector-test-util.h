/* inspector-test-util.h: what the inspector's tests share
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <glib/gstdio.h>
#include <gtk/gtk.h>
#include <qstore.h>
#include <string.h>

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

static inline void
test_remove_tree (const char *path)
{
  g_autoptr(GDir) dir = g_dir_open (path, 0, NULL);
  const char *name;

  if (dir != NULL)
    while ((name = g_dir_read_name (dir)) != NULL)
      {
        g_autofree char *child = g_build_filename (path, name, NULL);

        test_remove_tree (child);
      }
  g_remove (path);
}

static inline char *
test_store_uri (const char *dir,
                const char *provider)
{
  if (g_str_equal (provider, "sqlite"))
    return g_strdup_printf ("sqlite:%s/store.db", dir);
  return g_strdup_printf ("lmdb:%s/store", dir);
}

static inline void
test_exec (const char *uri,
           const char *sql)
{
  g_autoptr(QStoreDatabase) db = NULL;
  g_autoptr(GError) error = NULL;

  db = qstore_database_open (uri, QSTORE_OPEN_NONE, &error);
  g_assert_no_error (error);
  qstore_database_exec (db, sql, &error);
  g_assert_no_error (error);
  qstore_database_close (db, &error);
  g_assert_no_error (error);
}

/* Writes (or deletes, with @value NULL) a catalog entry through a
 * provider opened for writing. */
static inline void
test_plant (const char *uri,
            GBytes     *key,
            const char *value)
{
  g_autoptr(QStoreProvider) provider = NULL;
  g_autoptr(QStoreKV) catalog = NULL;
  g_autoptr(GError) error = NULL;
  gsize key_len;
  const guint8 *key_data = g_bytes_get_data (key, &key_len);

  provider = qstore_provider_new_for_uri (uri, QSTORE_OPEN_NONE, &error);
  g_assert_no_error (error);
  catalog = qstore_provider_get_catalog_store (provider, &error);
  g_assert_no_error (error);
  if (value != NULL)
    qstore_kv_put (catalog, key_data, key_len, (const guint8 *) value, strlen (value),
                   QSTORE_WRITE_SYNC, &error);
  else
    qstore_kv_delete (catalog, key_data, key_len, QSTORE_WRITE_SYNC, &error);
  g_assert_no_error (error);
  qstore_provider_close_all (provider);
}

/* Screenshots */

static inline GdkTexture *
test_render (GtkWidget *widget)
{
  int width = gtk_widget_get_width (widget);
  int height = gtk_widget_get_height (widget);
  g_autoptr(GdkPaintable) paintable = gtk_widget_paintable_new (widget);
  GtkSnapshot *snapshot = gtk_snapshot_new ();
  g_autoptr(GskRenderNode) node = NULL;
  GskRenderer *renderer = gtk_native_get_renderer (gtk_widget_get_native (widget));

  g_assert_cmpint (width, >, 0);
  g_assert_cmpint (height, >, 0);
  gdk_paintable_snapshot (paintable, snapshot, width, height);
  node = gtk_snapshot_free_to_node (snapshot);
  g_assert_nonnull (node);
  return gsk_renderer_render_texture (renderer, node, &GRAPHENE_RECT_INIT (0, 0, width, height));
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
  for (int y = 0; y < height; y += 2)
    for (int x = 0; x < width; x += 2)
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

G_END_DECLS
