/* qstore-inspector-row-model.c: the rows of a table or view, fetched page by page
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <glib/gi18n.h>

#include "qstore-inspector-row-model.h"

/* A table can hold millions of rows, so the model never reads them all:
 * it hands out placeholder rows at once and fills them from a worker
 * thread, one page at a time, from a snapshot (so the pages read together
 * come from one committed state while another process writes). An idle
 * model lets its snapshot go: an old LMDB read transaction keeps a writer
 * from reusing pages, so an inspector left open would make the file grow.
 * The next page then comes from a newer state. Keys have no offsets, so the model remembers where
 * each page it has passed starts: a jump far ahead walks keys from the
 * nearest known page start, once. Only the most recently used pages are
 * kept in memory.
 *
 * A plain view has no stored rows: SQL computes them. Its model opens the
 * store as a read-only database in a worker thread and asks SQL for the
 * count and for one page at a time. Only those two steps differ from a
 * table's; the pages, their queue and their eviction are the same. */

#define PAGE_SIZE QSTORE_INSPECTOR_ROW_PAGE_SIZE
#define MAX_PAGES 64
#define SNAPSHOT_IDLE_MS 10000

/* QStoreInspectorRow */

struct _QStoreInspectorRow
{
  GObject   parent_instance;

  guint     position;
  GVariant *values;       /* a tuple of `v`, NULL until loaded */
  char     *error;        /* why the row did not decode */
  gboolean  loaded;
};

enum
{
  ROW_PROP_0,
  ROW_PROP_POSITION,
  ROW_PROP_LOADED,
  ROW_N_PROPS
};

static GParamSpec *row_properties[ROW_N_PROPS];

G_DEFINE_FINAL_TYPE (QStoreInspectorRow, qstore_inspector_row, G_TYPE_OBJECT)

static void
qstore_inspector_row_finalize (GObject *object)
{
  QStoreInspectorRow *self = QSTORE_INSPECTOR_ROW (object);

  g_clear_pointer (&self->values, g_variant_unref);
  g_clear_pointer (&self->error, g_free);

  G_OBJECT_CLASS (qstore_inspector_row_parent_class)->finalize (object);
}

static void
qstore_inspector_row_get_property (GObject    *object,
                                   guint       prop_id,
                                   GValue     *value,
                                   GParamSpec *pspec)
{
  QStoreInspectorRow *self = QSTORE_INSPECTOR_ROW (object);

  switch (prop_id)
    {
    case ROW_PROP_POSITION:
      g_value_set_uint (value, self->position);
      break;
    case ROW_PROP_LOADED:
      g_value_set_boolean (value, self->loaded);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
qstore_inspector_row_class_init (QStoreInspectorRowClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = qstore_inspector_row_finalize;
  object_class->get_property = qstore_inspector_row_get_property;

  row_properties[ROW_PROP_POSITION] =
    g_param_spec_uint ("position", NULL, NULL, 0, G_MAXUINT, 0,
                       G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  row_properties[ROW_PROP_LOADED] =
    g_param_spec_boolean ("loaded", NULL, NULL, FALSE,
                          G_PARAM_READABLE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);
  g_object_class_install_properties (object_class, ROW_N_PROPS, row_properties);
}

static void
qstore_inspector_row_init (QStoreInspectorRow *self)
{
}

static QStoreInspectorRow *
row_new (guint position)
{
  QStoreInspectorRow *self = g_object_new (QSTORE_INSPECTOR_TYPE_ROW, NULL);

  self->position = position;
  return self;
}

static void
row_fill (QStoreInspectorRow *self,
          GVariant           *values,
          const char         *error)
{
  g_clear_pointer (&self->values, g_variant_unref);
  g_clear_pointer (&self->error, g_free);
  self->values = values ? g_variant_ref (values) : NULL;
  self->error = g_strdup (error);
  self->loaded = TRUE;
  g_object_notify_by_pspec (G_OBJECT (self), row_properties[ROW_PROP_LOADED]);
}

guint
qstore_inspector_row_get_position (QStoreInspectorRow *self)
{
  g_return_val_if_fail (QSTORE_INSPECTOR_IS_ROW (self), 0);
  return self->position;
}

gboolean
qstore_inspector_row_is_loaded (QStoreInspectorRow *self)
{
  g_return_val_if_fail (QSTORE_INSPECTOR_IS_ROW (self), FALSE);
  return self->loaded;
}

/* Returns: (transfer none) (nullable): the row's values, a tuple of `v` */
GVariant *
qstore_inspector_row_get_values (QStoreInspectorRow *self)
{
  g_return_val_if_fail (QSTORE_INSPECTOR_IS_ROW (self), NULL);
  return self->values;
}

const char *
qstore_inspector_row_get_error (QStoreInspectorRow *self)
{
  g_return_val_if_fail (QSTORE_INSPECTOR_IS_ROW (self), NULL);
  return self->error;
}

/* Returns: (transfer full) (nullable): the value of @column, unboxed */
GVariant *
qstore_inspector_row_get_value (QStoreInspectorRow *self,
                                guint               column)
{
  g_autoptr(GVariant) boxed = NULL;

  g_return_val_if_fail (QSTORE_INSPECTOR_IS_ROW (self), NULL);

  if (self->values == NULL || column >= g_variant_n_children (self->values))
    return NULL;
  boxed = g_variant_get_child_value (self->values, column);
  if (g_variant_is_of_type (boxed, G_VARIANT_TYPE_VARIANT))
    return g_variant_get_variant (boxed);
  return g_steal_pointer (&boxed);
}

/* Long text is cut for a table cell: the full value is one click away in
 * SQL, and a cell only needs to be recognisable. */
#define MAX_CELL_CHARS 200

/**
 * qstore_inspector_format_value:
 * @value: a value as the codec decodes it
 * @is_null: (out) (optional): whether @value is SQL NULL
 * @is_number: (out) (optional): whether @value is an integer or a real
 *
 * Formats a value for one table cell: on one line, long text shortened,
 * blobs as their size and first bytes.
 *
 * Returns: (transfer full): the text to show
 */
char *
qstore_inspector_format_value (GVariant *value,
                               gboolean *is_null,
                               gboolean *is_number)
{
  if (is_null)
    *is_null = FALSE;
  if (is_number)
    *is_number = FALSE;

  if (value == NULL || qstore_value_is_null (value))
    {
      if (is_null)
        *is_null = TRUE;
      return g_strdup ("NULL");
    }

  if (g_variant_is_of_type (value, G_VARIANT_TYPE_INT64))
    {
      if (is_number)
        *is_number = TRUE;
      return g_strdup_printf ("%" G_GINT64_FORMAT, g_variant_get_int64 (value));
    }

  if (g_variant_is_of_type (value, G_VARIANT_TYPE_DOUBLE))
    {
      char buffer[G_ASCII_DTOSTR_BUF_SIZE];

      if (is_number)
        *is_number = TRUE;
      return g_strdup (g_ascii_formatd (buffer, sizeof buffer, "%.15g",
                                        g_variant_get_double (value)));
    }

  if (g_variant_is_of_type (value, G_VARIANT_TYPE_STRING))
    {
      const char *text = g_variant_get_string (value, NULL);
      GString *line = g_string_new (NULL);
      glong n_chars = 0;

      for (const char *p = text; *p != '\0' && n_chars < MAX_CELL_CHARS; p = g_utf8_next_char (p), n_chars++)
        {
          gunichar c = g_utf8_get_char (p);

          /* One line per cell: line breaks and tabs show as their symbols. */
          if (c == '\n')
            g_string_append (line, "⏎");
          else if (c == '\t')
            g_string_append (line, "⇥");
          else
            g_string_append_unichar (line, c);
        }
      if (g_utf8_strlen (text, -1) > MAX_CELL_CHARS)
        g_string_append (line, "…");
      return g_string_free (line, FALSE);
    }

  if (g_variant_is_of_type (value, G_VARIANT_TYPE_BYTESTRING))
    {
      gsize len;
      const guint8 *data = g_variant_get_fixed_array (value, &len, 1);
      GString *text = g_string_new (NULL);
      g_autofree char *size = g_format_size_full (len, G_FORMAT_SIZE_LONG_FORMAT);

      /* Translators: a blob value in a table cell; %s is its size, such as "12 bytes" */
      g_string_append_printf (text, _("blob, %s"), size);
      if (len > 0)
        g_string_append (text, ": ");
      for (gsize i = 0; i < MIN (len, 16); i++)
        g_string_append_printf (text, "%02x", data[i]);
      if (len > 16)
        g_string_append (text, "…");
      return g_string_free (text, FALSE);
    }

  return g_variant_print (value, FALSE);
}

/* QStoreInspectorRowModel */

typedef struct
{
  GPtrArray *rows;        /* QStoreInspectorRow, PAGE_SIZE of them (fewer on the last) */
  gboolean   loaded;
  gboolean   queued;
  guint64    last_used;
} Page;

struct _QStoreInspectorRowModel
{
  GObject          parent_instance;

  char            *schema;
  char            *table;         /* the table's or the view's name */

  /* A table: its store, read through a snapshot while pages load. */
  QStoreProvider  *provider;
  QStoreSnapshot  *snapshot;      /* NULL when the provider has none, or idle */
  QStoreKV        *store;
  guint            snapshot_idle_ms;
  guint            release_source;

  /* A view: SQL on the store opened as a read-only database. */
  char            *relation;      /* "schema"."view", quoted for SQL */
  QStoreDatabase  *database;      /* NULL until opened */
  char           **column_names;  /* NULL until known */

  guint            n_items;
  GHashTable      *pages;         /* page index → Page */
  GPtrArray       *starts;        /* index p → GBytes: the last key of page p - 1, or NULL when unknown */
  GArray          *queue;         /* page indexes to fetch, the newest last */
  GCancellable    *cancellable;
  gboolean         busy;
  guint64          clock;
  GError          *error;
};

enum
{
  PROP_0,
  PROP_N_ITEMS,
  PROP_BUSY,
  PROP_ERROR,
  PROP_COLUMN_NAMES,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static void list_model_iface_init (GListModelInterface *iface);
static void start_next_fetch (QStoreInspectorRowModel *self);

G_DEFINE_FINAL_TYPE_WITH_CODE (QStoreInspectorRowModel, qstore_inspector_row_model, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (G_TYPE_LIST_MODEL, list_model_iface_init))

static void
page_free (Page *page)
{
  g_clear_pointer (&page->rows, g_ptr_array_unref);
  g_free (page);
}

static void
set_busy (QStoreInspectorRowModel *self,
          gboolean                 busy)
{
  if (self->busy == busy)
    return;
  self->busy = busy;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_BUSY]);
}

static void
set_error (QStoreInspectorRowModel *self,
           GError                  *error)
{
  /* What SQLite says (“no such table: main.people”) does not say which
   * view was being read. */
  if (self->relation != NULL)
    {
      g_autofree char *name = g_strconcat (self->schema, ".", self->table, NULL);

      /* Translators: the start of an error message, followed by why;
       * %s is a view's schema.name, such as “main.order_totals” */
      g_prefix_error (&error, _("Cannot read the rows of the view “%s”: "), name);
    }
  g_clear_error (&self->error);
  self->error = error;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_ERROR]);
  set_busy (self, FALSE);
}

static void
set_n_items (QStoreInspectorRowModel *self,
             guint                    n_items)
{
  guint old = self->n_items;

  if (n_items == old)
    return;

  /* Pages past the new end hold rows that no longer exist. */
  if (n_items < old)
    {
      GHashTableIter iter;
      gpointer key, value;

      g_hash_table_iter_init (&iter, self->pages);
      while (g_hash_table_iter_next (&iter, &key, &value))
        if (GPOINTER_TO_UINT (key) * PAGE_SIZE >= n_items)
          g_hash_table_iter_remove (&iter);
      if (self->starts->len > n_items / PAGE_SIZE + 1)
        g_ptr_array_set_size (self->starts, n_items / PAGE_SIZE + 1);
    }

  self->n_items = n_items;
  if (n_items < old)
    g_list_model_items_changed (G_LIST_MODEL (self), n_items, old - n_items, 0);
  else
    g_list_model_items_changed (G_LIST_MODEL (self), old, 0, n_items - old);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_N_ITEMS]);
}

/* Fetching, in a worker thread */

typedef struct
{
  /* A table's */
  QStoreSnapshot *snapshot;
  QStoreKV       *store;
  guint           from_page;     /* the nearest page whose start is known */
  GBytes         *from_after;    /* its start: iterate after this key; NULL from the first key */

  /* A view's */
  QStoreDatabase *database;
  char           *relation;

  guint           page;          /* the page wanted */

  GPtrArray      *values;        /* GVariant, NULL where a row did not decode */
  GPtrArray      *errors;        /* char *, NULL where it did */
  GPtrArray      *starts;        /* GBytes: the starts of pages from_page + 1 … */
  gboolean        more;          /* an entry follows the page */
  gboolean        reached;       /* the store has entries up to the page */
  guint           seen;          /* entries before the page, from from_page on, when not reached */
} Fetch;

/* Rows that did not decode are NULL in Fetch.values. */
static void
variant_unref0 (gpointer value)
{
  if (value != NULL)
    g_variant_unref (value);
}

static void
fetch_free (Fetch *fetch)
{
  g_clear_object (&fetch->snapshot);
  g_clear_object (&fetch->store);
  g_clear_pointer (&fetch->from_after, g_bytes_unref);
  g_clear_object (&fetch->database);
  g_clear_pointer (&fetch->relation, g_free);
  g_clear_pointer (&fetch->values, g_ptr_array_unref);
  g_clear_pointer (&fetch->errors, g_ptr_array_unref);
  g_clear_pointer (&fetch->starts, g_ptr_array_unref);
  g_free (fetch);
}

static gboolean
fetch_table_page (Fetch         *fetch,
                  GCancellable  *cancellable,
                  GError       **error)
{
  g_autoptr(QStoreBounds) bounds = qstore_bounds_new ();
  g_autoptr(QStoreIter) iter = NULL;
  GError *local_error = NULL;
  guint64 skip = (guint64) (fetch->page - fetch->from_page) * PAGE_SIZE;
  guint64 i = 0;

  if (fetch->from_after != NULL)
    {
      gsize len;
      const guint8 *key = g_bytes_get_data (fetch->from_after, &len);

      qstore_bounds_set_gt (bounds, key, len);
    }

  if (fetch->snapshot != NULL)
    iter = qstore_snapshot_iterate (fetch->snapshot, fetch->store, bounds, error);
  else
    iter = qstore_kv_iterate (fetch->store, bounds, error);
  if (iter == NULL)
    return FALSE;

  /* Walk to the page, remembering where each page passed on the way starts. */
  while (i < skip)
    {
      if (!qstore_iter_next (iter, &local_error))
        {
          if (local_error != NULL)
            {
              g_propagate_error (error, local_error);
              return FALSE;
            }
          fetch->seen = (guint) i;
          return TRUE;
        }
      if (i % PAGE_SIZE == PAGE_SIZE - 1)
        g_ptr_array_add (fetch->starts, qstore_iter_get_key (iter));
      i++;
      if (i % 4096 == 0 && g_cancellable_set_error_if_cancelled (cancellable, error))
        return FALSE;
    }

  fetch->reached = TRUE;
  while (fetch->values->len < PAGE_SIZE)
    {
      g_autoptr(GBytes) value = NULL;
      g_autoptr(GError) decode_error = NULL;
      GVariant *row;

      if (!qstore_iter_next (iter, &local_error))
        {
          if (local_error != NULL)
            {
              g_propagate_error (error, local_error);
              return FALSE;
            }
          return TRUE;
        }

      value = qstore_iter_get_value (iter);
      row = qstore_codec_decode_row (value, &decode_error);
      g_ptr_array_add (fetch->values, row);
      g_ptr_array_add (fetch->errors, decode_error ? g_strdup (decode_error->message) : NULL);
    }

  if (fetch->values->len == PAGE_SIZE)
    g_ptr_array_add (fetch->starts, qstore_iter_get_key (iter));

  fetch->more = qstore_iter_next (iter, &local_error);
  if (local_error != NULL)
    {
      g_propagate_error (error, local_error);
      return FALSE;
    }
  return TRUE;
}

/* A view's rows have no key to resume from, so a page is found by its
 * OFFSET: SQL computes and skips every row before it, and a page far
 * down a big view costs more than one near the top. One row more than a
 * page says whether another follows, as for a table. Each page is its own
 * query: a writer in another process may move rows between pages, and,
 * as for a table, the rows read decide the count. */
static gboolean
fetch_view_page (Fetch   *fetch,
                 GError **error)
{
  g_autofree char *sql = g_strdup_printf ("SELECT * FROM %s LIMIT ?1 OFFSET ?2", fetch->relation);
  g_autoptr(QStoreResult) result = NULL;
  guint n_rows;

  result = qstore_database_query (fetch->database, sql,
                                  g_variant_new ("(xx)",
                                                 (gint64) PAGE_SIZE + 1,
                                                 (gint64) fetch->page * PAGE_SIZE),
                                  error);
  if (result == NULL)
    return FALSE;

  n_rows = qstore_result_get_n_rows (result);
  for (guint i = 0; i < n_rows && i < PAGE_SIZE; i++)
    {
      g_ptr_array_add (fetch->values, g_variant_ref (qstore_result_get_row (result, i)));
      g_ptr_array_add (fetch->errors, NULL);
    }
  fetch->reached = TRUE;
  fetch->more = n_rows > PAGE_SIZE;
  return TRUE;
}

static void
fetch_thread (GTask        *task,
              gpointer      source_object,
              gpointer      task_data,
              GCancellable *cancellable)
{
  Fetch *fetch = task_data;
  GError *error = NULL;
  gboolean ok;

  if (fetch->database != NULL)
    ok = fetch_view_page (fetch, &error);
  else
    ok = fetch_table_page (fetch, cancellable, &error);

  if (ok)
    g_task_return_boolean (task, TRUE);
  else
    g_task_return_error (task, error);
}

static void
fetch_done (GObject      *object,
            GAsyncResult *result,
            gpointer      user_data)
{
  QStoreInspectorRowModel *self = QSTORE_INSPECTOR_ROW_MODEL (object);
  Fetch *fetch = g_task_get_task_data (G_TASK (result));
  g_autoptr(GError) error = NULL;
  Page *page;

  if (!g_task_propagate_boolean (G_TASK (result), &error))
    {
      if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        set_error (self, g_steal_pointer (&error));
      return;
    }

  /* What the walk learnt about page starts. */
  for (guint k = 0; k < fetch->starts->len; k++)
    {
      guint index = fetch->from_page + 1 + k;

      if (self->starts->len <= index)
        g_ptr_array_set_size (self->starts, index + 1);
      if (g_ptr_array_index (self->starts, index) == NULL)
        self->starts->pdata[index] = g_bytes_ref (g_ptr_array_index (fetch->starts, k));
    }

  if (!fetch->reached)
    {
      /* The table ended before the page: it is shorter than counted. */
      set_n_items (self, fetch->from_page * PAGE_SIZE + fetch->seen);
    }
  else
    {
      guint first = fetch->page * PAGE_SIZE;
      guint got = fetch->values->len;

      page = g_hash_table_lookup (self->pages, GUINT_TO_POINTER (fetch->page));
      if (page != NULL)
        {
          for (guint k = 0; k < page->rows->len && k < got; k++)
            row_fill (g_ptr_array_index (page->rows, k),
                      g_ptr_array_index (fetch->values, k),
                      g_ptr_array_index (fetch->errors, k));
          page->loaded = TRUE;
          page->queued = FALSE;
        }

      /* Row counts come from statistics, which another writer (or a
       * crash) may leave behind the data: the data decides. */
      if (got < PAGE_SIZE || !fetch->more)
        set_n_items (self, first + got);
      else if (self->n_items <= first + got)
        set_n_items (self, first + got + 1);
    }

  start_next_fetch (self);
}

static void
evict_pages (QStoreInspectorRowModel *self)
{
  while (g_hash_table_size (self->pages) > MAX_PAGES)
    {
      GHashTableIter iter;
      gpointer key, value;
      gpointer oldest_key = NULL;
      guint64 oldest = G_MAXUINT64;

      g_hash_table_iter_init (&iter, self->pages);
      while (g_hash_table_iter_next (&iter, &key, &value))
        {
          Page *page = value;

          if (page->last_used < oldest)
            {
              oldest = page->last_used;
              oldest_key = key;
            }
        }
      g_hash_table_remove (self->pages, oldest_key);
    }
}

static gboolean
release_snapshot_cb (gpointer data)
{
  QStoreInspectorRowModel *self = data;

  self->release_source = 0;
  g_clear_object (&self->snapshot);
  return G_SOURCE_REMOVE;
}

/* A table model reads through a snapshot when its provider has them. */
static gboolean
take_snapshot (QStoreInspectorRowModel *self)
{
  GError *error = NULL;

  if (self->store == NULL || self->snapshot != NULL ||
      !(qstore_provider_get_capabilities (self->provider) & QSTORE_CAPABILITY_SNAPSHOTS))
    return TRUE;
  if ((self->snapshot = qstore_provider_begin_snapshot (self->provider, &error)))
    return TRUE;
  set_error (self, error);
  return FALSE;
}

static void
start_next_fetch (QStoreInspectorRowModel *self)
{
  g_autoptr(GTask) task = NULL;
  Fetch *fetch;
  Page *page = NULL;
  guint index = 0;

  /* The newest request first: that is where the view is now. */
  while (self->queue->len > 0)
    {
      index = g_array_index (self->queue, guint, self->queue->len - 1);
      g_array_set_size (self->queue, self->queue->len - 1);
      page = g_hash_table_lookup (self->pages, GUINT_TO_POINTER (index));
      if (page != NULL && !page->loaded && (guint64) index * PAGE_SIZE < self->n_items)
        break;
      page = NULL;
    }

  if (page == NULL)
    {
      set_busy (self, FALSE);
      if (self->snapshot != NULL && self->release_source == 0)
        self->release_source = g_timeout_add (self->snapshot_idle_ms, release_snapshot_cb, self);
      return;
    }
  g_assert (self->store != NULL || self->database != NULL);
  g_clear_handle_id (&self->release_source, g_source_remove);
  if (!take_snapshot (self))
    return;

  /* One fetch at a time: this runs only when none is under way (busy is
   * FALSE) or when the last one is done, so the view's database is used by
   * one thread at a time. */
  fetch = g_new0 (Fetch, 1);
  if (self->database != NULL)
    {
      fetch->database = g_object_ref (self->database);
      fetch->relation = g_strdup (self->relation);
    }
  else
    {
      fetch->snapshot = self->snapshot ? g_object_ref (self->snapshot) : NULL;
      fetch->store = g_object_ref (self->store);
    }
  fetch->page = index;
  fetch->values = g_ptr_array_new_with_free_func (variant_unref0);
  fetch->errors = g_ptr_array_new_with_free_func (g_free);
  fetch->starts = g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);

  /* The nearest page at or before @index whose start is known. */
  for (guint p = MIN (index, self->starts->len - 1); ; p--)
    {
      if (p == 0 || g_ptr_array_index (self->starts, p) != NULL)
        {
          fetch->from_page = p;
          if (p > 0)
            fetch->from_after = g_bytes_ref (g_ptr_array_index (self->starts, p));
          break;
        }
    }

  set_busy (self, TRUE);
  task = g_task_new (self, self->cancellable, fetch_done, NULL);
  g_task_set_source_tag (task, start_next_fetch);
  g_task_set_task_data (task, fetch, (GDestroyNotify) fetch_free);
  g_task_run_in_thread (task, fetch_thread);
}

/* Opening a view, in a worker thread */

/* Closing can wait: an LMDB environment is shared in a process, and its
 * last close lets a write or a rescan under way finish first. So it is
 * never done on the UI thread. */
static void
close_thread (GTask        *task,
              gpointer      source_object,
              gpointer      task_data,
              GCancellable *cancellable)
{
  /* Opened read-only: closing writes nothing, so nothing can fail that
   * anyone could act on. */
  qstore_database_close (task_data, NULL);
  g_task_return_boolean (task, TRUE);
}

/* Takes @database. */
static void
close_database_in_thread (QStoreDatabase *database)
{
  g_autoptr(GTask) task = g_task_new (NULL, NULL, NULL, NULL);

  g_task_set_source_tag (task, close_database_in_thread);
  g_task_set_task_data (task, database, g_object_unref);
  g_task_run_in_thread (task, close_thread);
}

typedef struct
{
  char            *uri;
  char            *relation;
  QStoreDatabase  *database;
  char           **column_names;
  gint64           count;
} ViewOpen;

static void
view_open_free (ViewOpen *job)
{
  g_free (job->uri);
  g_free (job->relation);
  if (job->database != NULL)
    close_database_in_thread (g_steal_pointer (&job->database));
  g_strfreev (job->column_names);
  g_free (job);
}

static gboolean
view_open (ViewOpen  *job,
           GError   **error)
{
  g_autofree char *columns_sql = g_strdup_printf ("SELECT * FROM %s LIMIT 0", job->relation);
  g_autofree char *count_sql = g_strdup_printf ("SELECT count(*) FROM %s", job->relation);
  g_autoptr(QStoreResult) columns = NULL;
  g_autoptr(QStoreResult) count = NULL;
  g_autoptr(GVariant) value = NULL;
  guint n_columns;

  /* Read-only, as the inspector never changes what it looks at: such an
   * open writes nothing and leaves the clean-shutdown marker in place. */
  if (!(job->database = qstore_database_open (job->uri, QSTORE_OPEN_READ_ONLY, error)))
    return FALSE;

  /* What columns a view gives is known only once SQL has prepared its
   * query; LIMIT 0 prepares it without computing a row. */
  if (!(columns = qstore_database_query (job->database, columns_sql, NULL, error)))
    return FALSE;
  n_columns = qstore_result_get_n_columns (columns);
  job->column_names = g_new0 (char *, n_columns + 1);
  for (guint i = 0; i < n_columns; i++)
    job->column_names[i] = g_strdup (qstore_result_get_column_name (columns, i));

  if (!(count = qstore_database_query (job->database, count_sql, NULL, error)))
    return FALSE;
  if (qstore_result_get_n_rows (count) > 0)
    value = qstore_result_get_value (count, 0, 0);
  if (value != NULL && g_variant_is_of_type (value, G_VARIANT_TYPE_INT64))
    job->count = g_variant_get_int64 (value);
  return TRUE;
}

static void
view_open_thread (GTask        *task,
                  gpointer      source_object,
                  gpointer      task_data,
                  GCancellable *cancellable)
{
  GError *error = NULL;

  if (view_open (task_data, &error))
    g_task_return_boolean (task, TRUE);
  else
    g_task_return_error (task, error);
}

static void
view_open_done (GObject      *object,
                GAsyncResult *result,
                gpointer      user_data)
{
  QStoreInspectorRowModel *self = QSTORE_INSPECTOR_ROW_MODEL (object);
  ViewOpen *job = g_task_get_task_data (G_TASK (result));
  g_autoptr(GError) error = NULL;

  if (!g_task_propagate_boolean (G_TASK (result), &error))
    {
      if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        set_error (self, g_steal_pointer (&error));
      return;
    }

  self->database = g_steal_pointer (&job->database);
  /* Columns first: a view of the model builds its columns before rows
   * arrive. */
  self->column_names = g_steal_pointer (&job->column_names);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_COLUMN_NAMES]);
  set_n_items (self, (guint) CLAMP (job->count, 0, G_MAXUINT));
  /* Rows asked for as the count arrived were queued, the model being
   * busy still: fetch them. */
  start_next_fetch (self);
}

/* GListModel */

static GType
row_model_get_item_type (GListModel *model)
{
  return QSTORE_INSPECTOR_TYPE_ROW;
}

static guint
row_model_get_n_items (GListModel *model)
{
  return QSTORE_INSPECTOR_ROW_MODEL (model)->n_items;
}

static gpointer
row_model_get_item (GListModel *model,
                    guint       position)
{
  QStoreInspectorRowModel *self = QSTORE_INSPECTOR_ROW_MODEL (model);
  guint index = position / PAGE_SIZE;
  Page *page;

  if (position >= self->n_items)
    return NULL;

  page = g_hash_table_lookup (self->pages, GUINT_TO_POINTER (index));
  if (page == NULL)
    {
      page = g_new0 (Page, 1);
      page->rows = g_ptr_array_new_with_free_func (g_object_unref);
      for (guint k = 0; k < PAGE_SIZE; k++)
        g_ptr_array_add (page->rows, row_new (index * PAGE_SIZE + k));
      g_hash_table_insert (self->pages, GUINT_TO_POINTER (index), page);
    }
  page->last_used = ++self->clock;

  if (!page->loaded && !page->queued)
    {
      page->queued = TRUE;
      g_array_append_val (self->queue, index);
      if (!self->busy)
        start_next_fetch (self);
    }

  evict_pages (self);
  /* Eviction never drops the page just used: it is the newest. */
  page = g_hash_table_lookup (self->pages, GUINT_TO_POINTER (index));
  return g_object_ref (g_ptr_array_index (page->rows, position % PAGE_SIZE));
}

static void
list_model_iface_init (GListModelInterface *iface)
{
  iface->get_item_type = row_model_get_item_type;
  iface->get_n_items = row_model_get_n_items;
  iface->get_item = row_model_get_item;
}

/* GObject */

static void
qstore_inspector_row_model_dispose (GObject *object)
{
  QStoreInspectorRowModel *self = QSTORE_INSPECTOR_ROW_MODEL (object);

  g_cancellable_cancel (self->cancellable);
  g_clear_handle_id (&self->release_source, g_source_remove);

  G_OBJECT_CLASS (qstore_inspector_row_model_parent_class)->dispose (object);
}

static void
qstore_inspector_row_model_finalize (GObject *object)
{
  QStoreInspectorRowModel *self = QSTORE_INSPECTOR_ROW_MODEL (object);

  /* Closed here rather than in dispose, which may run while a fetch
   * does: every task holds the model, so none runs now. */
  if (self->database != NULL)
    close_database_in_thread (g_steal_pointer (&self->database));
  g_clear_pointer (&self->relation, g_free);
  g_clear_pointer (&self->column_names, g_strfreev);
  g_clear_object (&self->cancellable);
  g_clear_object (&self->snapshot);
  g_clear_object (&self->store);
  g_clear_object (&self->provider);
  g_clear_pointer (&self->schema, g_free);
  g_clear_pointer (&self->table, g_free);
  g_clear_pointer (&self->pages, g_hash_table_unref);
  g_clear_pointer (&self->starts, g_ptr_array_unref);
  g_clear_pointer (&self->queue, g_array_unref);
  g_clear_error (&self->error);

  G_OBJECT_CLASS (qstore_inspector_row_model_parent_class)->finalize (object);
}

static void
qstore_inspector_row_model_get_property (GObject    *object,
                                         guint       prop_id,
                                         GValue     *value,
                                         GParamSpec *pspec)
{
  QStoreInspectorRowModel *self = QSTORE_INSPECTOR_ROW_MODEL (object);

  switch (prop_id)
    {
    case PROP_N_ITEMS:
      g_value_set_uint (value, self->n_items);
      break;
    case PROP_BUSY:
      g_value_set_boolean (value, self->busy);
      break;
    case PROP_ERROR:
      g_value_set_string (value, self->error ? self->error->message : NULL);
      break;
    case PROP_COLUMN_NAMES:
      g_value_set_boxed (value, self->column_names);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
qstore_inspector_row_model_class_init (QStoreInspectorRowModelClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = qstore_inspector_row_model_dispose;
  object_class->finalize = qstore_inspector_row_model_finalize;
  object_class->get_property = qstore_inspector_row_model_get_property;

  properties[PROP_N_ITEMS] =
    g_param_spec_uint ("n-items", NULL, NULL, 0, G_MAXUINT, 0,
                       G_PARAM_READABLE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);
  properties[PROP_BUSY] =
    g_param_spec_boolean ("busy", NULL, NULL, FALSE,
                          G_PARAM_READABLE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);
  properties[PROP_ERROR] =
    g_param_spec_string ("error", NULL, NULL, NULL,
                         G_PARAM_READABLE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);
  /* A view's columns, known once its query is prepared; NULL for a table,
   * whose catalog entry lists them. */
  properties[PROP_COLUMN_NAMES] =
    g_param_spec_boxed ("column-names", NULL, NULL, G_TYPE_STRV,
                        G_PARAM_READABLE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);
  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
qstore_inspector_row_model_init (QStoreInspectorRowModel *self)
{
  self->pages = g_hash_table_new_full (NULL, NULL, NULL, (GDestroyNotify) page_free);
  self->starts = g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);
  g_ptr_array_add (self->starts, NULL);
  self->queue = g_array_new (FALSE, FALSE, sizeof (guint));
  self->cancellable = g_cancellable_new ();
  self->snapshot_idle_ms = SNAPSHOT_IDLE_MS;
}

/**
 * qstore_inspector_row_model_new:
 * @provider: a provider, opened read-only
 * @schema: the table's schema
 * @table: the table's name
 * @row_count_hint: the row count statistics give, or -1 when unknown
 * @error: return location for a #GError
 *
 * Makes a model of the rows of a table, in key order. Rows are read when
 * a view asks for them.
 *
 * Returns: (transfer full): the model, or %NULL when the table's store
 *   cannot be opened
 */
QStoreInspectorRowModel *
qstore_inspector_row_model_new (QStoreProvider  *provider,
                                const char      *schema,
                                const char      *table,
                                gint64           row_count_hint,
                                GError         **error)
{
  g_autoptr(QStoreInspectorRowModel) self = NULL;

  g_return_val_if_fail (QSTORE_IS_PROVIDER (provider), NULL);
  g_return_val_if_fail (schema != NULL, NULL);
  g_return_val_if_fail (table != NULL, NULL);

  self = g_object_new (QSTORE_INSPECTOR_TYPE_ROW_MODEL, NULL);
  self->provider = g_object_ref (provider);
  self->schema = g_strdup (schema);
  self->table = g_strdup (table);

  if (!(self->store = qstore_provider_get_store (provider, schema, table, error)))
    return NULL;

  /* Without a count, show one row: asking for it reads the first page,
   * which sets the real size. */
  self->n_items = row_count_hint >= 0 ? (guint) MIN (row_count_hint, G_MAXUINT) : 1;
  return g_steal_pointer (&self);
}

static char *
quote_identifier (const char *name)
{
  GString *quoted = g_string_new ("\"");

  for (const char *p = name; *p != '\0'; p++)
    {
      /* An embedded quote is doubled, so any name reads back as itself. */
      if (*p == '"')
        g_string_append_c (quoted, '"');
      g_string_append_c (quoted, *p);
    }
  g_string_append_c (quoted, '"');
  return g_string_free (quoted, FALSE);
}

/**
 * qstore_inspector_row_model_new_for_view:
 * @uri: the store's URI
 * @schema: the view's schema
 * @view: the view's name
 * @error: return location for a #GError; unused, as the store is opened
 *   and the view read in a worker thread, whose failures become the
 *   model's error
 *
 * Makes a model of the rows of a plain view, in the order its query gives
 * them. A view has no stored rows: a worker thread opens the store as a
 * read-only database and runs the view's query, a page at a time.
 *
 * The model starts empty and busy. Once the store is open it notifies
 * #QStoreInspectorRowModel:column-names, then the count arrives as
 * #GListModel::items-changed. When the store does not open as a database
 * or the view's query fails, #QStoreInspectorRowModel:error says why
 * instead, naming the view.
 *
 * Returns: (transfer full): the model
 */
QStoreInspectorRowModel *
qstore_inspector_row_model_new_for_view (const char  *uri,
                                         const char  *schema,
                                         const char  *view,
                                         GError     **error)
{
  g_autoptr(QStoreInspectorRowModel) self = NULL;
  g_autoptr(GTask) task = NULL;
  g_autofree char *quoted_schema = NULL;
  g_autofree char *quoted_view = NULL;
  ViewOpen *job;

  g_return_val_if_fail (uri != NULL, NULL);
  g_return_val_if_fail (schema != NULL, NULL);
  g_return_val_if_fail (view != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  quoted_schema = quote_identifier (schema);
  quoted_view = quote_identifier (view);

  self = g_object_new (QSTORE_INSPECTOR_TYPE_ROW_MODEL, NULL);
  self->schema = g_strdup (schema);
  self->table = g_strdup (view);
  self->relation = g_strconcat (quoted_schema, ".", quoted_view, NULL);

  job = g_new0 (ViewOpen, 1);
  job->uri = g_strdup (uri);
  job->relation = g_strdup (self->relation);

  /* Busy until open: pages asked for meanwhile wait in the queue. */
  set_busy (self, TRUE);
  task = g_task_new (self, self->cancellable, view_open_done, NULL);
  g_task_set_source_tag (task, qstore_inspector_row_model_new_for_view);
  g_task_set_task_data (task, job, (GDestroyNotify) view_open_free);
  g_task_run_in_thread (task, view_open_thread);

  return g_steal_pointer (&self);
}

const char *
qstore_inspector_row_model_get_schema (QStoreInspectorRowModel *self)
{
  g_return_val_if_fail (QSTORE_INSPECTOR_IS_ROW_MODEL (self), NULL);
  return self->schema;
}

const char *
qstore_inspector_row_model_get_table (QStoreInspectorRowModel *self)
{
  g_return_val_if_fail (QSTORE_INSPECTOR_IS_ROW_MODEL (self), NULL);
  return self->table;
}

gboolean
qstore_inspector_row_model_is_busy (QStoreInspectorRowModel *self)
{
  g_return_val_if_fail (QSTORE_INSPECTOR_IS_ROW_MODEL (self), FALSE);
  return self->busy;
}

guint
qstore_inspector_row_model_get_n_loaded_pages (QStoreInspectorRowModel *self)
{
  GHashTableIter iter;
  gpointer value;
  guint n = 0;

  g_return_val_if_fail (QSTORE_INSPECTOR_IS_ROW_MODEL (self), 0);

  g_hash_table_iter_init (&iter, self->pages);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    if (((Page *) value)->loaded)
      n++;
  return n;
}

const GError *
qstore_inspector_row_model_get_error (QStoreInspectorRowModel *self)
{
  g_return_val_if_fail (QSTORE_INSPECTOR_IS_ROW_MODEL (self), NULL);
  return self->error;
}

/**
 * qstore_inspector_row_model_get_column_names:
 * @self: a #QStoreInspectorRowModel
 *
 * Gets the names of a view's columns, in the order of the values of each
 * row. A table's model leaves them to the table's catalog entry.
 *
 * Returns: (transfer none) (nullable) (array zero-terminated=1): the
 *   names, or %NULL for a table or until the view's query is prepared
 */
const char * const *
qstore_inspector_row_model_get_column_names (QStoreInspectorRowModel *self)
{
  g_return_val_if_fail (QSTORE_INSPECTOR_IS_ROW_MODEL (self), NULL);
  return (const char * const *) self->column_names;
}

/* Whether the model holds a read snapshot of its store now. */
gboolean
qstore_inspector_row_model_holds_snapshot (QStoreInspectorRowModel *self)
{
  g_return_val_if_fail (QSTORE_INSPECTOR_IS_ROW_MODEL (self), FALSE);
  return self->snapshot != NULL;
}

/* How long the model keeps its snapshot once no page is loading. */
void
qstore_inspector_row_model_set_snapshot_idle (QStoreInspectorRowModel *self,
                                              guint                    ms)
{
  g_return_if_fail (QSTORE_INSPECTOR_IS_ROW_MODEL (self));
  self->snapshot_idle_ms = ms;
}
