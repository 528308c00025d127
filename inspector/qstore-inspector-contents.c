/* qstore-inspector-contents.c: everything the pages show, read in one go
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <glib/gi18n.h>
#include <stdio.h>
#include <string.h>

#include "qstore-inspector-contents.h"

/* What the pages show comes from one read, off the UI thread: the
 * catalog entries, each table's row count, the stale report and the
 * staged imports that did not finish. The provider is opened read-only
 * once per store and kept for refreshes. How each materialized view is
 * kept up to date is decided by planning its query, and staged imports
 * are judged with the database's threshold, so those come from opening
 * the store as a read-only database for a moment: it writes nothing and
 * leaves the clean-shutdown marker in place. */

struct _QStoreInspectorContents
{
  GObject            parent_instance;

  char              *uri;
  QStoreProvider    *provider;
  GListModel        *entries;
  GHashTable        *row_counts;    /* "schema.name" → gint64 */
  QStoreStaleReport *stale;
  GHashTable        *mviews;        /* "schema.name" → QStoreMaterializedView */
  GHashTable        *mview_errors;  /* "schema.name" → why it did not load */
  GHashTable        *counting;      /* "schema.name" of tables being counted */
  QStoreStagingLeftovers *staging;  /* interrupted imports, judged at load */
  char              *staging_error; /* why they could not be read */
  GDateTime         *loaded_at;
};

enum
{
  ROW_COUNTED,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

G_DEFINE_FINAL_TYPE (QStoreInspectorContents, qstore_inspector_contents, G_TYPE_OBJECT)

static void
qstore_inspector_contents_finalize (GObject *object)
{
  QStoreInspectorContents *self = QSTORE_INSPECTOR_CONTENTS (object);

  g_free (self->uri);
  g_clear_object (&self->provider);
  g_clear_object (&self->entries);
  g_clear_pointer (&self->row_counts, g_hash_table_unref);
  g_clear_object (&self->stale);
  g_clear_pointer (&self->mviews, g_hash_table_unref);
  g_clear_pointer (&self->mview_errors, g_hash_table_unref);
  g_clear_pointer (&self->counting, g_hash_table_unref);
  g_clear_object (&self->staging);
  g_free (self->staging_error);
  g_clear_pointer (&self->loaded_at, g_date_time_unref);

  G_OBJECT_CLASS (qstore_inspector_contents_parent_class)->finalize (object);
}

static void
qstore_inspector_contents_class_init (QStoreInspectorContentsClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = qstore_inspector_contents_finalize;

  /**
   * QStoreInspectorContents::row-counted:
   * @self: the contents
   * @schema: the table's schema
   * @name: the table's name
   *
   * A table whose statistics hold no row count was counted (or could not
   * be): qstore_inspector_contents_get_row_count() says how many rows it
   * has now.
   */
  signals[ROW_COUNTED] =
    g_signal_new ("row-counted", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL, G_TYPE_NONE, 2, G_TYPE_STRING, G_TYPE_STRING);
}

static void
qstore_inspector_contents_init (QStoreInspectorContents *self)
{
  self->row_counts = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  self->mviews = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_object_unref);
  self->mview_errors = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  self->counting = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
}

/* Whether the file at @path starts as an SQLite database does. */
static gboolean
is_sqlite_file (const char *path)
{
  static const char magic[16] = "SQLite format 3";
  char head[sizeof magic] = { 0 };
  FILE *file = fopen (path, "rb");
  gsize n = 0;

  if (file == NULL)
    return FALSE;
  n = fread (head, 1, sizeof head, file);
  fclose (file);
  return n == sizeof head && memcmp (head, magic, sizeof magic) == 0;
}

/**
 * qstore_inspector_uri_for_path:
 * @path: a directory (an LMDB store), the data.mdb file in one, or
 *   another file (an SQLite store)
 * @error: return location for a #GError
 *
 * A file chooser picks files or folders, not both: picking an LMDB
 * store's data.mdb file opens its folder, so one chooser opens both
 * kinds.
 *
 * Returns: (transfer full): the store URI, or %NULL when @path is neither
 */
char *
qstore_inspector_uri_for_path (const char  *path,
                               GError     **error)
{
  g_autofree char *absolute = g_canonicalize_filename (path, NULL);
  g_autofree char *name = g_path_get_basename (absolute);

  if (g_file_test (absolute, G_FILE_TEST_IS_DIR))
    return g_strconcat ("lmdb:", absolute, NULL);
  if (g_file_test (absolute, G_FILE_TEST_IS_REGULAR))
    {
      if (g_str_equal (name, "data.mdb") && !is_sqlite_file (absolute))
        {
          g_autofree char *folder = g_path_get_dirname (absolute);

          return g_strconcat ("lmdb:", folder, NULL);
        }
      return g_strconcat ("sqlite:", absolute, NULL);
    }

  g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_NOT_FOUND,
               _("“%s” does not exist. Choose a folder for an LMDB store or a file for an SQLite store."),
               absolute);
  return NULL;
}

/**
 * qstore_inspector_uri_for_argument:
 * @argument: what was given on the command line: a store URI such as
 *   `lmdb:/path`, a `file://` URI, or a path
 * @error: return location for a #GError
 *
 * Returns: (transfer full): the store URI, or %NULL on error
 */
char *
qstore_inspector_uri_for_argument (const char  *argument,
                                   GError     **error)
{
  g_auto(GStrv) providers = qstore_list_providers ();
  const char *colon = strchr (argument, ':');

  if (g_str_has_prefix (argument, "file:"))
    {
      g_autoptr(GFile) file = g_file_new_for_uri (argument);
      g_autofree char *path = g_file_get_path (file);

      if (path != NULL)
        return qstore_inspector_uri_for_path (path, error);
    }

  if (colon != NULL)
    {
      g_autofree char *scheme = g_strndup (argument, colon - argument);

      if (g_strv_contains ((const char * const *) providers, scheme))
        return g_strdup (argument);
    }

  return qstore_inspector_uri_for_path (argument, error);
}

static char *
qualified (const char *schema,
           const char *name)
{
  g_autofree char *joined = g_strconcat (schema ? schema : "", ".", name ? name : "", NULL);

  return g_ascii_strdown (joined, -1);
}

/* Plans every materialized view as opening the store does, and reads
 * the staged imports the store records, on a read-only database. What
 * does not load keeps its error. */
static void
load_from_database (QStoreInspectorContents *self,
                    gboolean                 mviews,
                    gboolean                 staging)
{
  g_autoptr(QStoreDatabase) database = NULL;
  g_autoptr(GListModel) views = NULL;
  g_autoptr(GError) error = NULL;
  QStoreRehydrationResult *result;
  guint n;

  if (!(database = qstore_database_open (self->uri, QSTORE_OPEN_READ_ONLY, &error)))
    {
      n = g_list_model_get_n_items (self->entries);
      for (guint i = 0; mviews && i < n; i++)
        {
          g_autoptr(QStoreCatalogEntry) entry = g_list_model_get_item (self->entries, i);

          if (qstore_catalog_entry_get_kind (entry) == QSTORE_CATALOG_KEY_MATERIALIZED_VIEW)
            g_hash_table_insert (self->mview_errors,
                                 qualified (qstore_catalog_entry_get_schema (entry),
                                            qstore_catalog_entry_get_name (entry)),
                                 g_strdup (error->message));
        }
      if (staging)
        self->staging_error = g_strdup (error->message);
      return;
    }

  if (staging && !(self->staging = qstore_staging_leftovers_read (database, &error)))
    {
      self->staging_error = g_strdup (error->message);
      g_clear_error (&error);
    }

  views = qstore_database_list_materialized_views (database);
  n = g_list_model_get_n_items (views);
  for (guint i = 0; i < n; i++)
    {
      QStoreMaterializedView *view = g_list_model_get_item (views, i);

      g_hash_table_insert (self->mviews,
                           qualified (qstore_materialized_view_get_schema (view),
                                      qstore_materialized_view_get_name (view)),
                           view);
    }

  result = qstore_database_get_rehydration_result (database);
  n = qstore_rehydration_result_get_n_errors (result);
  for (guint i = 0; i < n; i++)
    g_hash_table_insert (self->mview_errors,
                         g_ascii_strdown (qstore_rehydration_result_get_error_name (result, i), -1),
                         g_strdup (qstore_rehydration_result_get_error_message (result, i)));

  /* Read-only: nothing is written, so a failure to close loses nothing. */
  qstore_database_close (database, NULL);
}

/**
 * qstore_inspector_contents_load:
 * @uri: the store's URI
 * @provider: (nullable): the provider already open on @uri, to read again
 * @error: return location for a #GError
 *
 * Reads everything the pages show. Blocks: call it from a worker thread,
 * or use qstore_inspector_contents_load_async().
 *
 * Returns: (transfer full): the contents, or %NULL on error
 */
QStoreInspectorContents *
qstore_inspector_contents_load (const char      *uri,
                                QStoreProvider  *provider,
                                GError         **error)
{
  g_autoptr(QStoreInspectorContents) self = g_object_new (QSTORE_INSPECTOR_TYPE_CONTENTS, NULL);
  gboolean staging = FALSE;
  gboolean has_views;
  guint n_entries;

  self->uri = g_strdup (uri);
  if (provider != NULL)
    self->provider = g_object_ref (provider);
  else if (!(self->provider = qstore_provider_new_for_uri (uri, QSTORE_OPEN_READ_ONLY, error)))
    return NULL;

  if (!(self->entries = qstore_catalog_list_entries (self->provider, error)))
    return NULL;

  n_entries = g_list_model_get_n_items (self->entries);
  for (guint i = 0; i < n_entries; i++)
    {
      g_autoptr(QStoreCatalogEntry) entry = g_list_model_get_item (self->entries, i);
      GError *local_error = NULL;
      gint64 count;

      if (qstore_catalog_entry_get_kind (entry) != QSTORE_CATALOG_KEY_TABLE)
        continue;
      if (g_ascii_strcasecmp (qstore_catalog_entry_get_name (entry), QSTORE_STAGING_MARKER_TABLE) == 0)
        staging = TRUE;

      /* -1 when the statistics hold no count: counted later, in the
       * background (qstore_inspector_contents_count_rows()). */
      count = qstore_catalog_get_row_count (self->provider,
                                            qstore_catalog_entry_get_schema (entry),
                                            qstore_catalog_entry_get_name (entry),
                                            &local_error);
      if (local_error != NULL)
        {
          g_propagate_error (error, local_error);
          return NULL;
        }
      if (count >= 0)
        g_hash_table_insert (self->row_counts,
                             qualified (qstore_catalog_entry_get_schema (entry),
                                        qstore_catalog_entry_get_name (entry)),
                             g_memdup2 (&count, sizeof count));
    }

  if (!(self->stale = qstore_stale_report_new (self->provider, error)))
    return NULL;

  /* A database is opened only for what needs one: planning views, and
   * a store that records staged imports. */
  has_views = qstore_stale_report_get_views (self->stale) != NULL &&
              g_list_model_get_n_items (qstore_stale_report_get_views (self->stale)) > 0;
  if (has_views || staging)
    load_from_database (self, has_views, staging);

  self->loaded_at = g_date_time_new_now_local ();
  return g_steal_pointer (&self);
}

typedef struct
{
  char           *uri;
  QStoreProvider *provider;
} LoadData;

static void
load_data_free (LoadData *data)
{
  g_free (data->uri);
  g_clear_object (&data->provider);
  g_free (data);
}

static void
load_thread (GTask        *task,
             gpointer      source_object,
             gpointer      task_data,
             GCancellable *cancellable)
{
  LoadData *data = task_data;
  GError *error = NULL;
  QStoreInspectorContents *contents;

  contents = qstore_inspector_contents_load (data->uri, data->provider, &error);
  if (contents == NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, contents, g_object_unref);
}

void
qstore_inspector_contents_load_async (const char          *uri,
                                      QStoreProvider      *provider,
                                      GCancellable        *cancellable,
                                      GAsyncReadyCallback  callback,
                                      gpointer             user_data)
{
  g_autoptr(GTask) task = NULL;
  LoadData *data;

  g_return_if_fail (uri != NULL);
  g_return_if_fail (provider == NULL || QSTORE_IS_PROVIDER (provider));

  data = g_new0 (LoadData, 1);
  data->uri = g_strdup (uri);
  data->provider = provider ? g_object_ref (provider) : NULL;

  task = g_task_new (NULL, cancellable, callback, user_data);
  g_task_set_source_tag (task, qstore_inspector_contents_load_async);
  g_task_set_task_data (task, data, (GDestroyNotify) load_data_free);
  g_task_run_in_thread (task, load_thread);
}

QStoreInspectorContents *
qstore_inspector_contents_load_finish (GAsyncResult  *result,
                                       GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, NULL), NULL);
  return g_task_propagate_pointer (G_TASK (result), error);
}

/* Counting rows */

/* A table written before statistics were kept, or created and never
 * written, has no row count in them: its rows are counted, off the UI
 * thread, by walking its store through one snapshot. */

typedef struct
{
  QStoreInspectorContents *contents;
  char                    *schema;
  char                    *name;
  gint64                   count;
} Counted;

static void
counted_free (Counted *counted)
{
  g_object_unref (counted->contents);
  g_free (counted->schema);
  g_free (counted->name);
  g_free (counted);
}

static gboolean
counted_cb (gpointer data)
{
  Counted *counted = data;
  QStoreInspectorContents *self = counted->contents;
  g_autofree char *key = qualified (counted->schema, counted->name);

  if (!g_hash_table_remove (self->counting, key))
    return G_SOURCE_REMOVE;
  if (counted->count >= 0)
    g_hash_table_insert (self->row_counts, g_steal_pointer (&key),
                         g_memdup2 (&counted->count, sizeof counted->count));
  g_signal_emit (self, signals[ROW_COUNTED], 0, counted->schema, counted->name);
  return G_SOURCE_REMOVE;
}

/* Returns: the number of keys in the table's store, -1 when it cannot be
 * read, or when counting was cancelled */
static gint64
count_store (QStoreProvider *provider,
             QStoreSnapshot *snapshot,
             const char     *schema,
             const char     *name,
             GCancellable   *cancellable)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(QStoreKV) store = NULL;
  g_autoptr(QStoreIter) iter = NULL;
  gint64 count = 0;

  store = qstore_provider_get_store (provider, schema, name, &error);
  /* A table that was never written may have no store yet: no rows. */
  if (store == NULL)
    return g_error_matches (error, QSTORE_ERROR, QSTORE_ERROR_NOT_FOUND) ? 0 : -1;
  iter = snapshot ? qstore_snapshot_iterate (snapshot, store, NULL, &error)
                  : qstore_kv_iterate (store, NULL, &error);
  if (iter == NULL)
    return -1;
  while (qstore_iter_next (iter, &error))
    if (++count % 4096 == 0 && g_cancellable_is_cancelled (cancellable))
      return -1;
  return error != NULL ? -1 : count;
}

static void
count_thread (GTask        *task,
              gpointer      source_object,
              gpointer      task_data,
              GCancellable *cancellable)
{
  QStoreInspectorContents *self = source_object;
  GPtrArray *tables = task_data;   /* schema, name, schema, name… */
  g_autoptr(QStoreSnapshot) snapshot = NULL;
  GMainContext *context = g_task_get_context (task);

  if (qstore_provider_get_capabilities (self->provider) & QSTORE_CAPABILITY_SNAPSHOTS)
    snapshot = qstore_provider_begin_snapshot (self->provider, NULL);

  for (guint i = 0; i + 1 < tables->len; i += 2)
    {
      Counted *counted = g_new0 (Counted, 1);
      GSource *source;

      counted->contents = g_object_ref (self);
      counted->schema = g_strdup (g_ptr_array_index (tables, i));
      counted->name = g_strdup (g_ptr_array_index (tables, i + 1));
      counted->count = g_cancellable_is_cancelled (cancellable)
        ? -1 : count_store (self->provider, snapshot, counted->schema, counted->name, cancellable);
      /* Not g_main_context_invoke(): from a thread it runs the callback
       * right there when the context happens to be free. */
      source = g_idle_source_new ();
      g_source_set_priority (source, G_PRIORITY_DEFAULT);
      g_source_set_callback (source, counted_cb, counted, (GDestroyNotify) counted_free);
      g_source_attach (source, context);
      g_source_unref (source);
    }
  g_task_return_boolean (task, TRUE);
}

/**
 * qstore_inspector_contents_count_rows:
 * @self: a #QStoreInspectorContents
 * @cancellable: (nullable): stops the counting
 *
 * Counts, in a worker thread, the rows of every table whose statistics
 * give no count. Until a table is counted,
 * qstore_inspector_contents_is_counting() says so; then
 * #QStoreInspectorContents::row-counted is emitted, on the thread that
 * called this.
 */
void
qstore_inspector_contents_count_rows (QStoreInspectorContents *self,
                                      GCancellable            *cancellable)
{
  g_autoptr(GTask) task = NULL;
  GPtrArray *tables = g_ptr_array_new_with_free_func (g_free);
  guint n;

  g_return_if_fail (QSTORE_INSPECTOR_IS_CONTENTS (self));

  n = g_list_model_get_n_items (self->entries);
  for (guint i = 0; i < n; i++)
    {
      g_autoptr(QStoreCatalogEntry) entry = g_list_model_get_item (self->entries, i);
      const char *schema = qstore_catalog_entry_get_schema (entry);
      const char *name = qstore_catalog_entry_get_name (entry);
      g_autofree char *key = NULL;

      if (qstore_catalog_entry_get_kind (entry) != QSTORE_CATALOG_KEY_TABLE ||
          qstore_catalog_entry_get_error (entry) != NULL)
        continue;
      key = qualified (schema, name);
      if (g_hash_table_contains (self->row_counts, key) || g_hash_table_contains (self->counting, key))
        continue;
      g_hash_table_add (self->counting, g_steal_pointer (&key));
      g_ptr_array_add (tables, g_strdup (schema));
      g_ptr_array_add (tables, g_strdup (name));
    }

  if (tables->len == 0)
    {
      g_ptr_array_unref (tables);
      return;
    }
  task = g_task_new (self, cancellable, NULL, NULL);
  g_task_set_source_tag (task, qstore_inspector_contents_count_rows);
  g_task_set_task_data (task, tables, (GDestroyNotify) g_ptr_array_unref);
  g_task_run_in_thread (task, count_thread);
}

/* Whether the table's rows are being counted now. */
gboolean
qstore_inspector_contents_is_counting (QStoreInspectorContents *self,
                                       const char              *schema,
                                       const char              *name)
{
  g_autofree char *key = qualified (schema, name);

  g_return_val_if_fail (QSTORE_INSPECTOR_IS_CONTENTS (self), FALSE);
  return g_hash_table_contains (self->counting, key);
}

const char *
qstore_inspector_contents_get_uri (QStoreInspectorContents *self)
{
  g_return_val_if_fail (QSTORE_INSPECTOR_IS_CONTENTS (self), NULL);
  return self->uri;
}

QStoreProvider *
qstore_inspector_contents_get_provider (QStoreInspectorContents *self)
{
  g_return_val_if_fail (QSTORE_INSPECTOR_IS_CONTENTS (self), NULL);
  return self->provider;
}

GListModel *
qstore_inspector_contents_get_entries (QStoreInspectorContents *self)
{
  g_return_val_if_fail (QSTORE_INSPECTOR_IS_CONTENTS (self), NULL);
  return self->entries;
}

QStoreStaleReport *
qstore_inspector_contents_get_stale_report (QStoreInspectorContents *self)
{
  g_return_val_if_fail (QSTORE_INSPECTOR_IS_CONTENTS (self), NULL);
  return self->stale;
}

/* Returns: the table's row count, from its statistics or counted; -1
 * while it is being counted, or when it cannot be */
gint64
qstore_inspector_contents_get_row_count (QStoreInspectorContents *self,
                                         const char              *schema,
                                         const char              *name)
{
  g_autofree char *key = qualified (schema, name);
  gint64 *count;

  g_return_val_if_fail (QSTORE_INSPECTOR_IS_CONTENTS (self), -1);

  count = g_hash_table_lookup (self->row_counts, key);
  return count ? *count : -1;
}

/* Returns: (transfer none) (nullable): the entry of that kind and name */
QStoreCatalogEntry *
qstore_inspector_contents_lookup_entry (QStoreInspectorContents *self,
                                        QStoreCatalogKeyKind     kind,
                                        const char              *schema,
                                        const char              *name)
{
  guint n;

  g_return_val_if_fail (QSTORE_INSPECTOR_IS_CONTENTS (self), NULL);

  n = g_list_model_get_n_items (self->entries);
  for (guint i = 0; i < n; i++)
    {
      g_autoptr(QStoreCatalogEntry) entry = g_list_model_get_item (self->entries, i);

      if (qstore_catalog_entry_get_kind (entry) == kind &&
          g_ascii_strcasecmp (qstore_catalog_entry_get_name (entry), name) == 0 &&
          (schema == NULL ||
           g_ascii_strcasecmp (qstore_catalog_entry_get_schema (entry), schema) == 0))
        return entry;
    }
  return NULL;
}

/**
 * qstore_inspector_contents_lookup_materialized_view:
 * @self: a #QStoreInspectorContents
 * @schema: the view's schema
 * @name: its name
 * @error_message: (out) (optional) (transfer none): why the view did not
 *   load, when it did not
 *
 * Returns: (transfer none) (nullable): the view as a read-only open of the
 *   store plans it, or %NULL when it does not load
 */
QStoreMaterializedView *
qstore_inspector_contents_lookup_materialized_view (QStoreInspectorContents  *self,
                                                    const char               *schema,
                                                    const char               *name,
                                                    const char              **error_message)
{
  g_autofree char *key = qualified (schema, name);

  g_return_val_if_fail (QSTORE_INSPECTOR_IS_CONTENTS (self), NULL);

  if (error_message != NULL)
    *error_message = g_hash_table_lookup (self->mview_errors, key);
  return g_hash_table_lookup (self->mviews, key);
}

GDateTime *
qstore_inspector_contents_get_loaded_at (QStoreInspectorContents *self)
{
  g_return_val_if_fail (QSTORE_INSPECTOR_IS_CONTENTS (self), NULL);
  return self->loaded_at;
}

/**
 * qstore_inspector_contents_get_staging:
 * @self: a #QStoreInspectorContents
 * @error_message: (out) (optional) (transfer none): why the staged
 *   imports could not be read, when they could not
 *
 * Returns: (transfer none) (nullable): the staged imports the store
 *   records, judged when it was read; %NULL when it records none (it has
 *   no marker table) or they could not be read
 */
QStoreStagingLeftovers *
qstore_inspector_contents_get_staging (QStoreInspectorContents  *self,
                                       const char              **error_message)
{
  g_return_val_if_fail (QSTORE_INSPECTOR_IS_CONTENTS (self), NULL);

  if (error_message != NULL)
    *error_message = self->staging_error;
  return self->staging;
}
