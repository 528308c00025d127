/* qstore-inspector-row-model.c: the rows of a table or view, fetched page by page
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <glib/gi18n.h>
#include <string.h>

#include "qstore-inspector-names.h"
#include "qstore-inspector-row-model.h"

/* A table can hold millions of rows, so the model never reads them all:
 * it hands out placeholder rows at once and fills them from a worker
 * thread, one page at a time, from a snapshot (so the pages read together
 * come from one committed state while another process writes). An idle
 * model lets its snapshot go: an old LMDB read transaction keeps a writer
 * from reusing pages, so an inspector left open would make the file grow.
 * The next page then comes from a newer state. Only the most recently
 * used pages are kept in memory.
 *
 * Rows come two ways:
 *
 * - A table in its key order is read from its store. Keys have no
 *   offsets, so the model remembers where each page it has passed starts:
 *   a jump far ahead walks keys from the nearest known page start, once.
 *
 * - Through SQL, on the store opened as a read-only database in a worker
 *   thread: a plain view always (SQL computes its rows), and a table
 *   while it is sorted by a column or searched. The store sorts and
 *   filters (ORDER BY, LIKE), counts (count(*)) and hands out one page at
 *   a time (LIMIT … OFFSET); the model never holds more than its pages.
 *   The SQL reads happen inside one read transaction (BEGIN), which is
 *   the snapshot: a new order or search reads the same state; an idle
 *   model ends it (COMMIT), as it lets a table's snapshot go. With
 *   LIMIT, SQLite breaks ties in ORDER BY by the order it scanned the
 *   rows in, so the pages of one order fit together without gaps or
 *   repeats.
 *
 * Everything that reads runs as one job at a time, in order; a change of
 * order or search, or a refresh, starts a new generation, and what jobs
 * of an older one read is dropped. */

#define PAGE_SIZE QSTORE_INSPECTOR_ROW_PAGE_SIZE
#define MAX_PAGES 64
#define SNAPSHOT_IDLE_MS 10000

typedef struct
{
  GPtrArray *rows;        /* QStoreInspectorRow, PAGE_SIZE of them (fewer on the last) */
  guint      listing;     /* the order and search its rows are of */
  gboolean   loaded;
  gboolean   queued;
  guint64    last_used;
} Page;

struct _QStoreInspectorRowModel
{
  GObject          parent_instance;

  char            *uri;
  char            *schema;
  char            *table;         /* the table's or the view's name */
  gboolean         is_view;
  gint64           count_hint;    /* a table's row count, -1 when unknown */
  gboolean         counted;       /* n_items is the count, not a guess */

  /* A table in key order: its store, read through a snapshot. */
  QStoreProvider  *provider;
  QStoreSnapshot  *snapshot;      /* NULL when the provider has none, or idle */
  QStoreKV        *store;

  /* Through SQL: the store opened read-only as a database. */
  char            *relation;      /* "schema"."name", quoted for SQL */
  QStoreDatabase  *database;      /* NULL until opened */
  gboolean         in_transaction;
  char           **column_names;  /* a view's, NULL until known */
  char            *order_column;
  gboolean         descending;
  char            *search;
  char           **search_columns;
  gboolean         need_count;    /* count (again) before the next page */
  gboolean         reset_on_count;/* the count starts a new listing */
  gboolean         restart;       /* the next SQL job reads a newer state */

  guint            snapshot_idle_ms;
  guint            release_source;
  guint            generation;
  guint            listing;       /* bumped by a new order or search */
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
static void start_next_job (QStoreInspectorRowModel *self);

G_DEFINE_FINAL_TYPE_WITH_CODE (QStoreInspectorRowModel, qstore_inspector_row_model, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (G_TYPE_LIST_MODEL, list_model_iface_init))

static void
page_free (Page *page)
{
  g_clear_pointer (&page->rows, g_ptr_array_unref);
  g_free (page);
}

static gboolean
uses_sql (QStoreInspectorRowModel *self)
{
  return self->is_view || self->order_column != NULL || (self->search != NULL && *self->search != '\0');
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
  if (self->is_view)
    {
      g_autofree char *name = qstore_inspector_qualified_name (self->schema, self->table);

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
clear_error (QStoreInspectorRowModel *self)
{
  if (self->error == NULL)
    return;
  g_clear_error (&self->error);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_ERROR]);
}

static void
forget_starts (QStoreInspectorRowModel *self)
{
  g_ptr_array_set_size (self->starts, 0);
  g_ptr_array_add (self->starts, NULL);
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

/* The rows given out for the old listing are replaced by the new one:
 * pages asked for since the listing changed stay, and are read next. */
static void
replace_all (QStoreInspectorRowModel *self,
             guint                    n_items)
{
  guint old = self->n_items;
  GHashTableIter iter;
  gpointer value;
  guint kept = 0;

  g_hash_table_iter_init (&iter, self->pages);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    if (((Page *) value)->listing != self->listing)
      g_hash_table_iter_remove (&iter);
  for (guint i = 0; i < self->queue->len; i++)
    {
      guint index = g_array_index (self->queue, guint, i);

      if (g_hash_table_contains (self->pages, GUINT_TO_POINTER (index)))
        g_array_index (self->queue, guint, kept++) = index;
    }
  g_array_set_size (self->queue, kept);
  forget_starts (self);
  self->n_items = n_items;
  g_list_model_items_changed (G_LIST_MODEL (self), 0, old, n_items);
  if (old != n_items)
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_N_ITEMS]);
}

/* Jobs, in a worker thread */

typedef enum
{
  JOB_PAGE,       /* read one page */
  JOB_COUNT,      /* SQL: open, learn a view's columns, count */
  JOB_RELEASE,    /* SQL: end the read transaction */
} JobKind;

typedef struct
{
  JobKind         kind;
  guint           generation;
  guint           page;          /* the page wanted */

  /* A table's store */
  QStoreSnapshot *snapshot;
  QStoreKV       *store;
  guint           from_page;     /* the nearest page whose start is known */
  GBytes         *from_after;    /* its start: iterate after this key; NULL from the first key */

  /* SQL */
  gboolean        sql;
  char           *uri;
  QStoreDatabase *database;      /* NULL: the job opens it */
  gboolean        opened;        /* the job opened it */
  gboolean        in_transaction;
  gboolean        restart;
  char           *relation;
  char           *order;         /* "ORDER BY …", or NULL */
  char           *pattern;       /* the LIKE pattern, or NULL */
  char          **search_columns;/* NULL: the view's columns */
  char          **column_names;  /* a view's, when asked for or learnt */
  gboolean        want_columns;
  gint64          count;

  GPtrArray      *values;        /* GVariant, NULL where a row did not decode */
  GPtrArray      *errors;        /* char *, NULL where it did */
  GPtrArray      *starts;        /* GBytes: the starts of pages from_page + 1 … */
  gboolean        more;          /* an entry follows the page */
  gboolean        reached;       /* the store has entries up to the page */
  guint           seen;          /* entries before the page, from from_page on, when not reached */
} Job;

/* Rows that did not decode are NULL in Job.values. */
static void
variant_unref0 (gpointer value)
{
  if (value != NULL)
    g_variant_unref (value);
}

static void close_database_in_thread (QStoreDatabase *database);

static void
job_free (Job *job)
{
  g_clear_object (&job->snapshot);
  g_clear_object (&job->store);
  g_clear_pointer (&job->from_after, g_bytes_unref);
  /* A database the job opened and nobody took. */
  if (job->database != NULL && job->opened)
    close_database_in_thread (g_steal_pointer (&job->database));
  g_clear_object (&job->database);
  g_free (job->uri);
  g_free (job->relation);
  g_free (job->order);
  g_free (job->pattern);
  g_strfreev (job->search_columns);
  g_strfreev (job->column_names);
  g_clear_pointer (&job->values, g_ptr_array_unref);
  g_clear_pointer (&job->errors, g_ptr_array_unref);
  g_clear_pointer (&job->starts, g_ptr_array_unref);
  g_free (job);
}

static gboolean
fetch_table_page (Job           *job,
                  GCancellable  *cancellable,
                  GError       **error)
{
  g_autoptr(QStoreBounds) bounds = qstore_bounds_new ();
  g_autoptr(QStoreIter) iter = NULL;
  GError *local_error = NULL;
  guint64 skip = (guint64) (job->page - job->from_page) * PAGE_SIZE;
  guint64 i = 0;

  if (job->from_after != NULL)
    {
      gsize len;
      const guint8 *key = g_bytes_get_data (job->from_after, &len);

      qstore_bounds_set_gt (bounds, key, len);
    }

  if (job->snapshot != NULL)
    iter = qstore_snapshot_iterate (job->snapshot, job->store, bounds, error);
  else
    iter = qstore_kv_iterate (job->store, bounds, error);
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
          job->seen = (guint) i;
          return TRUE;
        }
      if (i % PAGE_SIZE == PAGE_SIZE - 1)
        g_ptr_array_add (job->starts, qstore_iter_get_key (iter));
      i++;
      if (i % 4096 == 0 && g_cancellable_set_error_if_cancelled (cancellable, error))
        return FALSE;
    }

  job->reached = TRUE;
  while (job->values->len < PAGE_SIZE)
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
      g_ptr_array_add (job->values, row);
      g_ptr_array_add (job->errors, decode_error ? g_strdup (decode_error->message) : NULL);
    }

  if (job->values->len == PAGE_SIZE)
    g_ptr_array_add (job->starts, qstore_iter_get_key (iter));

  job->more = qstore_iter_next (iter, &local_error);
  if (local_error != NULL)
    {
      g_propagate_error (error, local_error);
      return FALSE;
    }
  return TRUE;
}

static gboolean
sql_exec (Job         *job,
          const char  *sql,
          GError     **error)
{
  return qstore_database_exec (job->database, sql, error);
}

/* The database open, inside a read transaction (of a newer state when
 * the job restarts it). Read-only, as the inspector never changes what
 * it looks at: such an open writes nothing and leaves the clean-shutdown
 * marker in place. */
static gboolean
sql_ready (Job     *job,
           GError **error)
{
  if (job->database == NULL)
    {
      if (!(job->database = qstore_database_open (job->uri, QSTORE_OPEN_READ_ONLY, error)))
        return FALSE;
      job->opened = TRUE;
    }
  if (job->restart && job->in_transaction)
    {
      job->in_transaction = FALSE;
      if (!sql_exec (job, "COMMIT", error))
        return FALSE;
    }
  if (!job->in_transaction)
    {
      if (!sql_exec (job, "BEGIN", error))
        return FALSE;
      job->in_transaction = TRUE;
    }
  return TRUE;
}

/* `WHERE ("a" LIKE ?1 ESCAPE '\' OR "b" LIKE ?1 …)`: a row matches when
 * any column holds the text; SQL's LIKE ignores the case of ASCII
 * letters. Returns NULL when nothing is searched. */
static char *
sql_filter (Job *job)
{
  const char * const *columns = (const char * const *)
    (job->search_columns ? job->search_columns : job->column_names);
  GString *where;

  if (job->pattern == NULL || columns == NULL || columns[0] == NULL)
    return NULL;
  where = g_string_new (" WHERE (");
  for (guint i = 0; columns[i] != NULL; i++)
    {
      g_autofree char *quoted = qstore_inspector_quote_identifier (columns[i]);

      g_string_append_printf (where, "%s%s LIKE ?1 ESCAPE '\\'", i > 0 ? " OR " : "", quoted);
    }
  g_string_append_c (where, ')');
  return g_string_free (where, FALSE);
}

static gboolean
sql_count (Job     *job,
           GError **error)
{
  g_autoptr(QStoreResult) count = NULL;
  g_autoptr(GVariant) value = NULL;
  g_autofree char *where = NULL;
  g_autofree char *sql = NULL;

  if (!sql_ready (job, error))
    return FALSE;

  /* What columns a view gives is known only once SQL has prepared its
   * query; LIMIT 0 prepares it without computing a row. */
  if (job->want_columns)
    {
      g_autofree char *columns_sql = g_strdup_printf ("SELECT * FROM %s LIMIT 0", job->relation);
      g_autoptr(QStoreResult) columns = NULL;
      guint n_columns;

      if (!(columns = qstore_database_query (job->database, columns_sql, NULL, error)))
        return FALSE;
      n_columns = qstore_result_get_n_columns (columns);
      job->column_names = g_new0 (char *, n_columns + 1);
      for (guint i = 0; i < n_columns; i++)
        job->column_names[i] = g_strdup (qstore_result_get_column_name (columns, i));
    }

  where = sql_filter (job);
  sql = g_strdup_printf ("SELECT count(*) FROM %s%s", job->relation, where ? where : "");
  if (!(count = qstore_database_query (job->database, sql,
                                       where ? g_variant_new ("(s)", job->pattern) : NULL, error)))
    return FALSE;
  if (qstore_result_get_n_rows (count) > 0)
    value = qstore_result_get_value (count, 0, 0);
  if (value != NULL && g_variant_is_of_type (value, G_VARIANT_TYPE_INT64))
    job->count = g_variant_get_int64 (value);
  return TRUE;
}

/* Rows from SQL have no key to resume from, so a page is found by its
 * OFFSET: SQL computes and skips every row before it, and a page far
 * down costs more than one near the top. One row more than a page says
 * whether another follows, as for a table's store. */
static gboolean
sql_page (Job     *job,
          GError **error)
{
  g_autofree char *where = NULL;
  g_autofree char *sql = NULL;
  g_autoptr(QStoreResult) result = NULL;
  GVariant *params;
  guint n_rows;

  if (!sql_ready (job, error))
    return FALSE;

  where = sql_filter (job);
  if (where != NULL)
    {
      sql = g_strdup_printf ("SELECT * FROM %s%s%s%s LIMIT ?2 OFFSET ?3", job->relation, where,
                             job->order ? " " : "", job->order ? job->order : "");
      params = g_variant_new ("(sxx)", job->pattern, (gint64) PAGE_SIZE + 1, (gint64) job->page * PAGE_SIZE);
    }
  else
    {
      sql = g_strdup_printf ("SELECT * FROM %s%s%s LIMIT ?1 OFFSET ?2", job->relation,
                             job->order ? " " : "", job->order ? job->order : "");
      params = g_variant_new ("(xx)", (gint64) PAGE_SIZE + 1, (gint64) job->page * PAGE_SIZE);
    }
  if (!(result = qstore_database_query (job->database, sql, params, error)))
    return FALSE;

  n_rows = qstore_result_get_n_rows (result);
  for (guint i = 0; i < n_rows && i < PAGE_SIZE; i++)
    {
      g_ptr_array_add (job->values, g_variant_ref (qstore_result_get_row (result, i)));
      g_ptr_array_add (job->errors, NULL);
    }
  job->reached = TRUE;
  job->more = n_rows > PAGE_SIZE;
  return TRUE;
}

static void
job_thread (GTask        *task,
            gpointer      source_object,
            gpointer      task_data,
            GCancellable *cancellable)
{
  Job *job = task_data;
  GError *error = NULL;
  gboolean ok = TRUE;

  switch (job->kind)
    {
    case JOB_COUNT:
      ok = sql_count (job, &error);
      break;
    case JOB_PAGE:
      ok = job->sql ? sql_page (job, &error) : fetch_table_page (job, cancellable, &error);
      break;
    case JOB_RELEASE:
    default:
      if (job->database != NULL && job->in_transaction)
        {
          /* Ended either way: a failed COMMIT of a read rolls back. */
          job->in_transaction = FALSE;
          ok = sql_exec (job, "COMMIT", &error);
        }
      break;
    }

  if (ok)
    g_task_return_boolean (task, TRUE);
  else
    g_task_return_error (task, error);
}

static void
page_done (QStoreInspectorRowModel *self,
           Job                     *job)
{
  Page *page;

  /* What the walk learnt about page starts. */
  for (guint k = 0; k < job->starts->len; k++)
    {
      guint index = job->from_page + 1 + k;

      if (self->starts->len <= index)
        g_ptr_array_set_size (self->starts, index + 1);
      if (g_ptr_array_index (self->starts, index) == NULL)
        self->starts->pdata[index] = g_bytes_ref (g_ptr_array_index (job->starts, k));
    }

  if (!job->reached)
    {
      /* The table ended before the page: it is shorter than counted. */
      self->counted = TRUE;
      set_n_items (self, job->from_page * PAGE_SIZE + job->seen);
      return;
    }

  {
    guint first = job->page * PAGE_SIZE;
    guint got = job->values->len;

    page = g_hash_table_lookup (self->pages, GUINT_TO_POINTER (job->page));
    if (page != NULL)
      {
        for (guint k = 0; k < page->rows->len && k < got; k++)
          qstore_inspector_row_fill (g_ptr_array_index (page->rows, k),
                                     g_ptr_array_index (job->values, k),
                                     g_ptr_array_index (job->errors, k));
        page->loaded = TRUE;
        page->queued = FALSE;
      }

    /* Row counts come from statistics, which another writer (or a
     * crash) may leave behind the data: the data decides. */
    if (got < PAGE_SIZE || !job->more)
      {
        self->counted = TRUE;
        set_n_items (self, first + got);
      }
    else if (self->n_items <= first + got)
      set_n_items (self, first + got + 1);
  }
}

static void
count_done (QStoreInspectorRowModel *self,
            Job                     *job)
{
  guint count = (guint) CLAMP (job->count, 0, G_MAXUINT);

  self->need_count = FALSE;
  self->counted = TRUE;
  /* Columns first: a view of the model builds its columns before rows
   * arrive. */
  if (job->want_columns && job->column_names != NULL)
    {
      self->column_names = g_steal_pointer (&job->column_names);
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_COLUMN_NAMES]);
    }
  if (self->reset_on_count)
    {
      self->reset_on_count = FALSE;
      replace_all (self, count);
    }
  else
    set_n_items (self, count);
}

static void
job_done (GObject      *object,
          GAsyncResult *result,
          gpointer      user_data)
{
  QStoreInspectorRowModel *self = QSTORE_INSPECTOR_ROW_MODEL (object);
  Job *job = g_task_get_task_data (G_TASK (result));
  g_autoptr(GError) error = NULL;
  gboolean ok = g_task_propagate_boolean (G_TASK (result), &error);

  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    return;

  /* The database and its transaction are the model's whatever the job's
   * generation: one job runs at a time, so they are what it left. */
  if (job->sql)
    {
      if (job->opened && self->database == NULL)
        {
          self->database = g_steal_pointer (&job->database);
          job->opened = FALSE;
        }
      self->in_transaction = job->in_transaction;
      if (job->restart)
        self->restart = FALSE;
    }

  /* Not busy once what the job read is in, and only if no other job
   * follows: whoever waits for the model to be idle finds the rows. */
  self->busy = FALSE;
  if (job->generation == self->generation)
    {
      if (!ok)
        {
          self->busy = TRUE;
          set_error (self, g_steal_pointer (&error));
          return;
        }
      if (job->kind == JOB_COUNT)
        count_done (self, job);
      else if (job->kind == JOB_PAGE)
        page_done (self, job);
    }

  start_next_job (self);
  if (!self->busy)
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_BUSY]);
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

static Job *
job_new (QStoreInspectorRowModel *self,
         JobKind                  kind)
{
  Job *job = g_new0 (Job, 1);

  job->kind = kind;
  job->generation = self->generation;
  job->values = g_ptr_array_new_with_free_func (variant_unref0);
  job->errors = g_ptr_array_new_with_free_func (g_free);
  job->starts = g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);
  if (kind != JOB_PAGE || uses_sql (self))
    {
      job->sql = TRUE;
      job->uri = g_strdup (self->uri);
      job->database = self->database ? g_object_ref (self->database) : NULL;
      job->in_transaction = self->in_transaction;
      job->restart = self->restart;
      job->relation = g_strdup (self->relation);
      if (self->order_column != NULL)
        {
          g_autofree char *quoted = qstore_inspector_quote_identifier (self->order_column);

          job->order = g_strdup_printf ("ORDER BY %s %s", quoted, self->descending ? "DESC" : "ASC");
        }
      if (self->search != NULL && *self->search != '\0')
        {
          GString *pattern = g_string_new ("%");

          /* The text itself: its own % and _ match only themselves. */
          for (const char *p = self->search; *p != '\0'; p++)
            {
              if (*p == '%' || *p == '_' || *p == '\\')
                g_string_append_c (pattern, '\\');
              g_string_append_c (pattern, *p);
            }
          g_string_append_c (pattern, '%');
          job->pattern = g_string_free (pattern, FALSE);
        }
      job->search_columns = g_strdupv (self->search_columns);
      job->column_names = g_strdupv (self->column_names);
      job->want_columns = self->is_view && self->column_names == NULL;
    }
  return job;
}

static void
run_job (QStoreInspectorRowModel *self,
         Job                     *job)
{
  g_autoptr(GTask) task = NULL;

  g_clear_handle_id (&self->release_source, g_source_remove);
  set_busy (self, TRUE);
  task = g_task_new (self, self->cancellable, job_done, NULL);
  g_task_set_source_tag (task, run_job);
  g_task_set_task_data (task, job, (GDestroyNotify) job_free);
  g_task_run_in_thread (task, job_thread);
}

static gboolean
release_snapshot_cb (gpointer data)
{
  QStoreInspectorRowModel *self = data;

  self->release_source = 0;
  g_clear_object (&self->snapshot);
  if (self->in_transaction && !self->busy)
    run_job (self, job_new (self, JOB_RELEASE));
  return G_SOURCE_REMOVE;
}

/* A table model reads through a snapshot when its provider has them. */
static gboolean
take_snapshot (QStoreInspectorRowModel *self)
{
  GError *error = NULL;

  if (self->snapshot != NULL ||
      !(qstore_provider_get_capabilities (self->provider) & QSTORE_CAPABILITY_SNAPSHOTS))
    return TRUE;
  if ((self->snapshot = qstore_provider_begin_snapshot (self->provider, &error)))
    return TRUE;
  set_error (self, error);
  return FALSE;
}

/* One job at a time: this runs only when none is under way, so the
 * database is used by one thread at a time. */
static void
start_next_job (QStoreInspectorRowModel *self)
{
  Job *job;
  Page *page = NULL;
  guint index = 0;

  if (self->busy || self->error != NULL)
    return;

  if (uses_sql (self) && self->need_count)
    {
      run_job (self, job_new (self, JOB_COUNT));
      return;
    }

  /* The newest request first: that is where the view is now. */
  while (self->queue->len > 0)
    {
      index = g_array_index (self->queue, guint, self->queue->len - 1);
      g_array_set_size (self->queue, self->queue->len - 1);
      page = g_hash_table_lookup (self->pages, GUINT_TO_POINTER (index));
      if (page != NULL && !page->loaded && (guint64) index * PAGE_SIZE < self->n_items)
        break;
      if (page != NULL)
        page->queued = FALSE;
      page = NULL;
    }

  if (page == NULL)
    {
      if ((self->snapshot != NULL || self->in_transaction) && self->release_source == 0)
        self->release_source = g_timeout_add (self->snapshot_idle_ms, release_snapshot_cb, self);
      return;
    }

  job = job_new (self, JOB_PAGE);
  job->page = index;
  if (!job->sql)
    {
      if (!take_snapshot (self))
        {
          job_free (job);
          return;
        }
      job->snapshot = self->snapshot ? g_object_ref (self->snapshot) : NULL;
      job->store = g_object_ref (self->store);

      /* The nearest page at or before @index whose start is known. */
      for (guint p = MIN (index, self->starts->len - 1); ; p--)
        {
          if (p == 0 || g_ptr_array_index (self->starts, p) != NULL)
            {
              job->from_page = p;
              if (p > 0)
                job->from_after = g_bytes_ref (g_ptr_array_index (self->starts, p));
              break;
            }
        }
    }
  else
    job->from_page = index;
  run_job (self, job);
}

/* Closing a database */

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
  /* A page of the old order: the rows asked for now are of the new one. */
  if (page != NULL && page->listing != self->listing)
    {
      g_hash_table_remove (self->pages, GUINT_TO_POINTER (index));
      page = NULL;
    }
  if (page == NULL)
    {
      page = g_new0 (Page, 1);
      page->listing = self->listing;
      page->rows = g_ptr_array_new_with_free_func (g_object_unref);
      for (guint k = 0; k < PAGE_SIZE; k++)
        g_ptr_array_add (page->rows, qstore_inspector_row_new (index * PAGE_SIZE + k));
      g_hash_table_insert (self->pages, GUINT_TO_POINTER (index), page);
    }
  page->last_used = ++self->clock;

  if (!page->loaded && !page->queued)
    {
      page->queued = TRUE;
      g_array_append_val (self->queue, index);
      start_next_job (self);
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

  /* Closed here rather than in dispose, which may run while a job does:
   * every job holds the model, so none runs now. */
  if (self->database != NULL)
    close_database_in_thread (g_steal_pointer (&self->database));
  g_clear_pointer (&self->uri, g_free);
  g_clear_pointer (&self->relation, g_free);
  g_clear_pointer (&self->column_names, g_strfreev);
  g_clear_pointer (&self->order_column, g_free);
  g_clear_pointer (&self->search, g_free);
  g_clear_pointer (&self->search_columns, g_strfreev);
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
  self->count_hint = -1;
}

static QStoreInspectorRowModel *
model_new (const char *uri,
           const char *schema,
           const char *name)
{
  QStoreInspectorRowModel *self = g_object_new (QSTORE_INSPECTOR_TYPE_ROW_MODEL, NULL);
  g_autofree char *quoted_schema = qstore_inspector_quote_identifier (schema);
  g_autofree char *quoted_name = qstore_inspector_quote_identifier (name);

  self->uri = g_strdup (uri);
  self->schema = g_strdup (schema);
  self->table = g_strdup (name);
  self->relation = g_strconcat (quoted_schema, ".", quoted_name, NULL);
  return self;
}

/**
 * qstore_inspector_row_model_new:
 * @uri: the store's URI, for reading through SQL once sorted or searched
 * @provider: a provider, opened read-only on @uri
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
qstore_inspector_row_model_new (const char      *uri,
                                QStoreProvider  *provider,
                                const char      *schema,
                                const char      *table,
                                gint64           row_count_hint,
                                GError         **error)
{
  g_autoptr(QStoreInspectorRowModel) self = NULL;

  g_return_val_if_fail (uri != NULL, NULL);
  g_return_val_if_fail (QSTORE_IS_PROVIDER (provider), NULL);
  g_return_val_if_fail (schema != NULL, NULL);
  g_return_val_if_fail (table != NULL, NULL);

  self = model_new (uri, schema, table);
  self->provider = g_object_ref (provider);
  if (!(self->store = qstore_provider_get_store (provider, schema, table, error)))
    return NULL;

  /* Without a count, show one row: asking for it reads the first page,
   * which sets the real size. */
  self->count_hint = row_count_hint;
  self->counted = row_count_hint >= 0;
  self->n_items = row_count_hint >= 0 ? (guint) MIN (row_count_hint, G_MAXUINT) : 1;
  return g_steal_pointer (&self);
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
  QStoreInspectorRowModel *self;

  g_return_val_if_fail (uri != NULL, NULL);
  g_return_val_if_fail (schema != NULL, NULL);
  g_return_val_if_fail (view != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  self = model_new (uri, schema, view);
  self->is_view = TRUE;
  self->need_count = TRUE;
  /* Busy until counted: pages asked for meanwhile wait in the queue. */
  start_next_job (self);
  return self;
}

/* Listing again */

/* A new order or search: the rows shown stay until the new count
 * arrives, then every row is replaced. Back in a table's key order, the
 * rows are replaced at once. */
static void
relist (QStoreInspectorRowModel *self)
{
  self->generation++;
  self->listing++;
  g_array_set_size (self->queue, 0);
  clear_error (self);

  if (uses_sql (self))
    {
      self->need_count = TRUE;
      self->reset_on_count = TRUE;
      start_next_job (self);
      return;
    }

  self->need_count = FALSE;
  self->reset_on_count = FALSE;
  self->counted = self->count_hint >= 0;
  replace_all (self, self->count_hint >= 0 ? (guint) MIN (self->count_hint, G_MAXUINT) : 1);
}

/**
 * qstore_inspector_row_model_set_order:
 * @self: a #QStoreInspectorRowModel
 * @column: (nullable): the column to sort by, %NULL for the table's key
 *   order (or the order a view's query gives)
 * @descending: whether the largest value comes first
 *
 * Sorts the rows: the store does it, through SQL, page by page.
 */
void
qstore_inspector_row_model_set_order (QStoreInspectorRowModel *self,
                                      const char              *column,
                                      gboolean                 descending)
{
  g_return_if_fail (QSTORE_INSPECTOR_IS_ROW_MODEL (self));

  if (column == NULL)
    descending = FALSE;
  if (g_strcmp0 (column, self->order_column) == 0 && descending == self->descending)
    return;
  g_free (self->order_column);
  self->order_column = g_strdup (column);
  self->descending = descending;
  relist (self);
}

/* Returns: (nullable): the column the rows are sorted by */
const char *
qstore_inspector_row_model_get_order (QStoreInspectorRowModel *self,
                                      gboolean                *descending)
{
  g_return_val_if_fail (QSTORE_INSPECTOR_IS_ROW_MODEL (self), NULL);

  if (descending != NULL)
    *descending = self->descending;
  return self->order_column;
}

/**
 * qstore_inspector_row_model_set_search:
 * @self: a #QStoreInspectorRowModel
 * @text: (nullable): the text a row must hold, in any of @columns; %NULL
 *   or "" for every row
 * @columns: (nullable) (array zero-terminated=1): the columns to look in;
 *   %NULL for all of a view's columns
 *
 * Keeps the rows that hold @text (ignoring the case of ASCII letters),
 * as the store finds them through SQL.
 */
void
qstore_inspector_row_model_set_search (QStoreInspectorRowModel *self,
                                       const char              *text,
                                       const char * const      *columns)
{
  g_return_if_fail (QSTORE_INSPECTOR_IS_ROW_MODEL (self));

  if (text != NULL && *text == '\0')
    text = NULL;
  g_strfreev (self->search_columns);
  self->search_columns = g_strdupv ((char **) columns);
  if (g_strcmp0 (text, self->search) == 0)
    return;
  g_free (self->search);
  self->search = g_strdup (text);
  relist (self);
}

const char *
qstore_inspector_row_model_get_search (QStoreInspectorRowModel *self)
{
  g_return_val_if_fail (QSTORE_INSPECTOR_IS_ROW_MODEL (self), NULL);
  return self->search;
}

/**
 * qstore_inspector_row_model_reload:
 * @self: a #QStoreInspectorRowModel
 * @row_count_hint: a table's new row count, -1 when unknown
 *
 * Reads the rows again from a newer state of the store, as a refresh
 * does. The rows given out stay, with their values, until their page is
 * read anew; so does the count, until the new one is known: a view of
 * the model keeps where it was scrolled to, and its selection.
 */
void
qstore_inspector_row_model_reload (QStoreInspectorRowModel *self,
                                   gint64                   row_count_hint)
{
  g_autoptr(GPtrArray) pages = g_ptr_array_new ();
  GHashTableIter iter;
  gpointer key, value;

  g_return_if_fail (QSTORE_INSPECTOR_IS_ROW_MODEL (self));

  self->generation++;
  clear_error (self);
  g_array_set_size (self->queue, 0);
  if (!self->is_view)
    self->count_hint = row_count_hint;

  /* Every page held is read again, the most recently used first. */
  g_hash_table_iter_init (&iter, self->pages);
  while (g_hash_table_iter_next (&iter, &key, &value))
    {
      Page *page = value;

      page->loaded = FALSE;
      page->queued = TRUE;
      g_ptr_array_add (pages, key);
    }
  for (guint i = 0; i < pages->len; i++)
    for (guint j = i + 1; j < pages->len; j++)
      {
        Page *a = g_hash_table_lookup (self->pages, pages->pdata[i]);
        Page *b = g_hash_table_lookup (self->pages, pages->pdata[j]);

        if (a->last_used > b->last_used)
          {
            gpointer swap = pages->pdata[i];

            pages->pdata[i] = pages->pdata[j];
            pages->pdata[j] = swap;
          }
      }
  for (guint i = 0; i < pages->len; i++)
    {
      guint index = GPOINTER_TO_UINT (pages->pdata[i]);

      g_array_append_val (self->queue, index);
    }

  if (uses_sql (self))
    {
      self->restart = TRUE;
      self->need_count = TRUE;
      self->reset_on_count = FALSE;
    }
  else
    {
      g_clear_object (&self->snapshot);
      forget_starts (self);
      self->counted = row_count_hint >= 0;
      if (row_count_hint >= 0)
        set_n_items (self, (guint) MIN (row_count_hint, G_MAXUINT));
    }
  start_next_job (self);
}

/* Getters */

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
qstore_inspector_row_model_is_view (QStoreInspectorRowModel *self)
{
  g_return_val_if_fail (QSTORE_INSPECTOR_IS_ROW_MODEL (self), FALSE);
  return self->is_view;
}

gboolean
qstore_inspector_row_model_is_busy (QStoreInspectorRowModel *self)
{
  g_return_val_if_fail (QSTORE_INSPECTOR_IS_ROW_MODEL (self), FALSE);
  return self->busy || (self->need_count && self->error == NULL && uses_sql (self));
}

/* Whether the rows are read through SQL now (a view, or a table sorted or
 * searched), rather than from a table's store in key order. */
gboolean
qstore_inspector_row_model_uses_sql (QStoreInspectorRowModel *self)
{
  g_return_val_if_fail (QSTORE_INSPECTOR_IS_ROW_MODEL (self), FALSE);
  return uses_sql (self);
}

/* Whether the number of items is the count of rows, rather than what is
 * known so far of a table whose statistics hold no count. */
gboolean
qstore_inspector_row_model_is_counted (QStoreInspectorRowModel *self)
{
  g_return_val_if_fail (QSTORE_INSPECTOR_IS_ROW_MODEL (self), FALSE);
  return self->counted && !(self->need_count && uses_sql (self));
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

/* Whether the model holds a read snapshot of its store now: a table's
 * snapshot, or the read transaction of its SQL. */
gboolean
qstore_inspector_row_model_holds_snapshot (QStoreInspectorRowModel *self)
{
  g_return_val_if_fail (QSTORE_INSPECTOR_IS_ROW_MODEL (self), FALSE);
  return self->snapshot != NULL || self->in_transaction;
}

/* How long the model keeps its snapshot once no page is loading. */
void
qstore_inspector_row_model_set_snapshot_idle (QStoreInspectorRowModel *self,
                                              guint                    ms)
{
  g_return_if_fail (QSTORE_INSPECTOR_IS_ROW_MODEL (self));
  self->snapshot_idle_ms = ms;
}
