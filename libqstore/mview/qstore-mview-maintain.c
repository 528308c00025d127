/* qstore-mview-maintain.c: keeping views up to date as their sources change
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include <json-glib/json-glib.h>

#include "qstore-affinity-private.h"
#include "qstore-coordinator-private.h"
#include "qstore-enums.h"
#include "qstore-error.h"
#include "qstore-i18n-private.h"
#include "qstore-provider-private.h"
#include "qstore-result-private.h"
#include "qstore-sql-token-private.h"
#include "qstore-table-schema-private.h"
#include "qstore-vtab-private.h"
#include "qstore-mview-derive-private.h"
#include "qstore-mview-maintain-private.h"

/* The coordinator's observer hears every row change; each view that reads
 * the table notes the keys or groups to recompute, or that it must be
 * rebuilt, and does the work before a read of it or before the commit, so
 * the same atomic batch stores the sources and the view. A view that
 * cannot be maintained goes stale instead of wrong. */

static gboolean before_read     (gpointer       mview,
                                 GError       **error);

/* Makes @entry the contents of @view (or of no view): its reads then
 * wait for the view's deferred work, and only the view writes it. */
void
qstore_mview_entry_set_view (QStoreSqlTable *entry,
                             QStoreMView    *view)
{
  entry->owner = view;
  entry->before_read = view != NULL ? before_read : NULL;
  qstore_table_set_contents_of (entry->table, view != NULL ? view->name : NULL);
}

/* The first key after every key that starts with @prefix. */
static GByteArray *
prefix_end (const GByteArray *prefix)
{
  GByteArray *end = g_byte_array_new ();

  g_byte_array_append (end, prefix->data, prefix->len);
  while (end->len > 0)
    {
      if (end->data[end->len - 1] != 0xff)
        {
          end->data[end->len - 1]++;
          return end;
        }
      g_byte_array_set_size (end, end->len - 1);
    }
  g_byte_array_unref (end);
  return NULL;
}

static sqlite3_stmt *
view_statement (QStoreMView    *view,
                sqlite3_stmt  **cached,
                const char     *sql,
                gboolean       *temporary,
                GError        **error)
{
  sqlite3 *conn = view->owner->db->db;
  sqlite3_stmt *stmt = NULL;
  int rc;

  /* A statement still running (a nested read reached this view) cannot
   * be run again: use one of its own. */
  *temporary = *cached != NULL && sqlite3_stmt_busy (*cached);
  if (*cached != NULL && !*temporary)
    {
      sqlite3_reset (*cached);
      sqlite3_clear_bindings (*cached);
      return *cached;
    }
  rc = sqlite3_prepare_v3 (conn, sql, -1, *temporary ? 0 : SQLITE_PREPARE_PERSISTENT, &stmt, NULL);
  if (rc != SQLITE_OK)
    {
      qstore_mview_set_sqlite_error (view->owner->db, conn, rc, view->name, error);
      sqlite3_finalize (stmt);
      return NULL;
    }
  if (!*temporary)
    *cached = stmt;
  return stmt;
}

static void
view_statement_done (sqlite3_stmt *stmt,
                     gboolean      temporary)
{
  if (temporary)
    sqlite3_finalize (stmt);
  else
    sqlite3_reset (stmt);
}

/* Row values shaped like the backing, NULL but for the key columns. */
static void
key_probe (const Plan        *plan,
           const QStoreValue *key_values,
           QStoreValue       *values)
{
  memset (values, 0, plan->columns->len * sizeof (QStoreValue));
  for (guint k = 0; k < plan->key_out->len; k++)
    values[g_array_index (plan->key_out, guint, k)] = key_values[k];
}

/* The rows the backing holds under @prefix: the one of that key, or, when
 * the key holds NULL (NULLs are distinct: such rows get their own
 * suffixes), every row under it. */
static gboolean
backing_rows (QStoreTable       *backing,
              const GByteArray  *prefix,
              gboolean           exact,
              GPtrArray         *keys,
              GPtrArray         *rows,
              GError           **error)
{
  g_autoptr(QStoreBounds) bounds = NULL;
  g_autoptr(QStoreIter) iter = NULL;
  g_autoptr(GByteArray) end = NULL;
  GError *local_error = NULL;

  if (exact)
    {
      GBytes *row = qstore_table_get_row (backing, prefix->data, prefix->len, &local_error);

      if (local_error != NULL)
        {
          g_propagate_error (error, local_error);
          return FALSE;
        }
      if (row != NULL)
        {
          g_ptr_array_add (keys, g_bytes_new (prefix->data, prefix->len));
          g_ptr_array_add (rows, row);
        }
      return TRUE;
    }

  bounds = qstore_bounds_new ();
  qstore_bounds_set_gte (bounds, prefix->data, prefix->len);
  if ((end = prefix_end (prefix)) != NULL)
    qstore_bounds_set_lt (bounds, end->data, end->len);
  if (!(iter = qstore_table_scan (backing, bounds, error)))
    return FALSE;
  while (qstore_iter_next (iter, &local_error))
    {
      g_ptr_array_add (keys, qstore_iter_get_key (iter));
      g_ptr_array_add (rows, qstore_iter_get_value (iter));
    }
  if (local_error != NULL)
    {
      g_propagate_error (error, local_error);
      return FALSE;
    }
  return TRUE;
}

static gboolean
backing_insert (QStoreTable  *backing,
                QStoreValue  *values,
                const gint64 *rowid,
                GError      **error)
{
  gint64 assigned = 0;
  gboolean ignored = FALSE;

  if (rowid != NULL)
    return qstore_table_insert_values_with_rowid (backing, values, rowid, QSTORE_CONFLICT_ABORT,
                                                  &assigned, &ignored, error);
  return qstore_table_insert_values (backing, values, QSTORE_CONFLICT_ABORT, &assigned,
                                     &ignored, error);
}

/* recompute_partition() for a key without NULL: at most one row. */
static gboolean
recompute_key (QStoreMView        *view,
               QStoreTable        *backing,
               const QStoreValue  *key_values,
               GError            **error)
{
  Plan *plan = view->plan;
  guint n = plan->columns->len;
  guint n_key = plan->key_out->len;
  g_autoptr(GBytes) current = NULL;
  GError *local_error = NULL;
  QStoreRowReader reader;
  sqlite3_stmt *stmt;
  gboolean temporary;
  gboolean found;
  guint n_read;
  int rc;

  if (view->n_values != n)
    {
      view->values = g_renew (QStoreValue, view->values, n);
      view->stored = g_renew (QStoreValue, view->stored, n);
      view->n_values = n;
    }

  if (!(stmt = view_statement (view, &view->key_stmt, plan->key_sql, &temporary, error)))
    return FALSE;
  for (guint k = 0; k < n_key; k++)
    qstore_value_bind (stmt, (int) k + 1, &key_values[k]);
  rc = sqlite3_step (stmt);
  found = rc == SQLITE_ROW;
  if (found)
    {
      qstore_mview_values_from_statement (stmt, view->values, n);
      g_byte_array_set_size (view->row_buf, 0);
      qstore_row_encode (view->row_buf, view->values, n);
      rc = sqlite3_step (stmt);
      if (rc == SQLITE_ROW)
        {
          view_statement_done (stmt, temporary);
          g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_FAILED,
                       _("Materialized view “%s”: its body gives several rows for one key"),
                       view->name);
          return FALSE;
        }
    }
  if (rc != SQLITE_DONE)
    {
      qstore_mview_set_sqlite_error (view->owner->db, view->owner->db->db, rc, view->name, error);
      view_statement_done (stmt, temporary);
      return FALSE;
    }
  view_statement_done (stmt, temporary);

  key_probe (plan, key_values, view->stored);
  if (!qstore_table_encode_key (backing, view->stored, view->key_buf, error))
    return FALSE;
  current = qstore_table_get_row (backing, view->key_buf->data, view->key_buf->len, &local_error);
  if (local_error != NULL)
    {
      g_propagate_error (error, local_error);
      return FALSE;
    }

  if (found)
    {
      /* The values again, now from the copy: the statement moved on. */
      if (!qstore_row_reader_init (&reader, view->row_buf->data, view->row_buf->len, &n_read, error))
        return FALSE;
      if (!qstore_row_reader_read (&reader, view->values, n, error))
        return FALSE;
    }

  if (current != NULL)
    {
      gsize len;
      const guint8 *data = g_bytes_get_data (current, &len);
      gboolean ignored = FALSE;

      if (!found)
        return qstore_table_delete_key (backing, view->key_buf->data, view->key_buf->len, error);
      if (!qstore_table_decode_row (backing, data, len, view->stored, NULL, error))
        return FALSE;
      if (qstore_mview_rows_equal (view->values, view->stored, n))
        return TRUE;
      return qstore_table_update_values (backing, view->key_buf->data, view->key_buf->len,
                                         view->values, QSTORE_CONFLICT_ABORT, &ignored, error);
    }
  return !found || backing_insert (backing, view->values, NULL, error);
}

/* Deletes the backing's rows under @keys, then inserts @rows (encoded
 * values, decoded through @values, @n of them). */
static gboolean
replace_rows (QStoreTable   *backing,
              GPtrArray     *keys,
              GPtrArray     *rows,
              QStoreValue   *values,
              guint          n,
              GError       **error)
{
  for (guint i = 0; i < keys->len; i++)
    {
      gsize len;
      const guint8 *data = g_bytes_get_data (keys->pdata[i], &len);

      if (!qstore_table_delete_key (backing, data, len, error))
        return FALSE;
    }
  for (guint i = 0; i < rows->len; i++)
    if (!qstore_mview_decode_values (rows->pdata[i], values, n, error) ||
        !backing_insert (backing, values, NULL, error))
      return FALSE;
  return TRUE;
}

/* Computes again the rows of the view whose key is @key_values (a source
 * row's key, or a group) and makes the backing hold exactly those. */
static gboolean
recompute_partition (QStoreMView        *view,
                     const QStoreValue  *key_values,
                     GError            **error)
{
  Plan *plan = view->plan;
  QStoreTable *backing = qstore_mview_view_backing (view);
  guint n = plan->columns->len;
  guint n_key = plan->key_out->len;
  g_autoptr(GPtrArray) fresh = g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);
  g_autoptr(GPtrArray) old_keys = g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);
  g_autoptr(GPtrArray) old_rows = g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);
  g_autoptr(GByteArray) prefix = g_byte_array_new ();
  g_autofree QStoreValue *values = g_new0 (QStoreValue, n);
  g_autofree QStoreValue *stored = g_new0 (QStoreValue, n);
  sqlite3_stmt *stmt;
  gboolean temporary;
  gboolean with_null = qstore_mview_has_null (key_values, n_key);
  int rc;

  if (backing == NULL)
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_FAILED,
                   _("Materialized view “%s” has lost its contents table"), view->name);
      return FALSE;
    }

  /* The common case, with the view's own buffers (a nested recomputation
   * of the same view, should one happen, takes the general path). */
  if (!with_null && !view->recomputing)
    {
      gboolean ok;

      view->recomputing = TRUE;
      ok = recompute_key (view, backing, key_values, error);
      view->recomputing = FALSE;
      return ok;
    }

  if (!(stmt = view_statement (view, &view->key_stmt, plan->key_sql, &temporary, error)))
    return FALSE;
  for (guint k = 0; k < n_key; k++)
    qstore_value_bind (stmt, (int) k + 1, &key_values[k]);
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      qstore_mview_values_from_statement (stmt, values, n);
      g_ptr_array_add (fresh, qstore_mview_encode_values (values, n));
    }
  if (rc != SQLITE_DONE)
    {
      qstore_mview_set_sqlite_error (view->owner->db, view->owner->db->db, rc, view->name, error);
      view_statement_done (stmt, temporary);
      return FALSE;
    }
  view_statement_done (stmt, temporary);

  key_probe (plan, key_values, values);
  if (!qstore_table_encode_key (backing, values, prefix, error) ||
      !backing_rows (backing, prefix, !with_null, old_keys, old_rows, error))
    return FALSE;

  if (!with_null && fresh->len > 1)
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_FAILED,
                   _("Materialized view “%s”: its body gives %u rows for one key"), view->name,
                   fresh->len);
      return FALSE;
    }

  if (!with_null && fresh->len == 1 && old_rows->len == 1)
    {
      gsize len;
      const guint8 *data = g_bytes_get_data (old_rows->pdata[0], &len);
      gboolean ignored = FALSE;

      if (!qstore_mview_decode_values (fresh->pdata[0], values, n, error) ||
          !qstore_table_decode_row (backing, data, len, stored, NULL, error))
        return FALSE;
      if (qstore_mview_rows_equal (values, stored, n))
        return TRUE;
      return qstore_table_update_values (backing, prefix->data, prefix->len, values,
                                         QSTORE_CONFLICT_ABORT, &ignored, error);
    }

  return replace_rows (backing, old_keys, fresh, values, n, error);
}

/* Computes the whole view again and writes what differs. */
gboolean
qstore_mview_rebuild_into (QStoreMView  *view,
                           QStoreTable  *backing,
                           GError      **error)
{
  Plan *plan = view->plan;
  guint n = plan->columns->len;
  g_autofree QStoreValue *values = g_new0 (QStoreValue, n);
  g_autofree QStoreValue *stored = g_new0 (QStoreValue, n);
  g_autoptr(GByteArray) key = g_byte_array_new ();
  g_autoptr(GHashTable) produced = NULL;
  g_autoptr(GPtrArray) null_rows = g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);
  g_autoptr(GPtrArray) extra = g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);
  g_autoptr(QStoreIter) iter = NULL;
  g_autoptr(QStoreBounds) bounds = NULL;
  GError *local_error = NULL;
  sqlite3_stmt *stmt;
  gboolean temporary;
  gboolean keyed = qstore_mview_plan_is_keyed (plan);
  gint64 position = 0;
  int rc;

  if (backing == NULL)
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_FAILED,
                   _("Materialized view “%s” has lost its contents table"), view->name);
      return FALSE;
    }
  if (keyed)
    produced = g_hash_table_new_full (g_bytes_hash, g_bytes_equal,
                                      (GDestroyNotify) g_bytes_unref, NULL);

  if (!(stmt = view_statement (view, &view->all_stmt, plan->all_sql, &temporary, error)))
    return FALSE;
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      g_autoptr(GBytes) current = NULL;
      gboolean ignored = FALSE;
      GBytes *key_bytes;

      qstore_mview_values_from_statement (stmt, values, n);
      if (keyed)
        {
          gboolean null_key = FALSE;

          for (guint k = 0; k < plan->key_out->len; k++)
            null_key = null_key || values[g_array_index (plan->key_out, guint, k)].type == QSTORE_VALUE_NULL;
          /* Rows whose key holds NULL cannot be found again by key: they
           * are written afresh once the others are in place. */
          if (null_key)
            {
              g_ptr_array_add (null_rows, qstore_mview_encode_values (values, n));
              continue;
            }
          if (!qstore_table_encode_key (backing, values, key, &local_error))
            break;
          key_bytes = g_bytes_new (key->data, key->len);
          if (!g_hash_table_add (produced, key_bytes))
            {
              g_set_error (&local_error, QSTORE_ERROR, QSTORE_ERROR_FAILED,
                           _("Materialized view “%s”: its body gives two rows of one key"),
                           view->name);
              break;
            }
        }
      else
        {
          position++;
          g_byte_array_set_size (key, 0);
          qstore_codec_append_integer (key, position, FALSE);
        }

      current = qstore_table_get_row (backing, key->data, key->len, &local_error);
      if (local_error != NULL)
        break;
      if (current != NULL)
        {
          gsize len;
          const guint8 *data = g_bytes_get_data (current, &len);

          if (!qstore_table_decode_row (backing, data, len, stored, NULL, &local_error))
            break;
          if (qstore_mview_rows_equal (values, stored, n))
            continue;
          if (!qstore_table_update_values (backing, key->data, key->len, values,
                                           QSTORE_CONFLICT_ABORT, &ignored, &local_error))
            break;
        }
      else if (!backing_insert (backing, values, keyed ? NULL : &position, &local_error))
        break;
    }
  if (local_error == NULL && rc != SQLITE_DONE)
    qstore_mview_set_sqlite_error (view->owner->db, view->owner->db->db, rc, view->name, &local_error);
  view_statement_done (stmt, temporary);
  if (local_error != NULL)
    {
      g_propagate_error (error, local_error);
      return FALSE;
    }

  /* Rows the body no longer gives */
  bounds = qstore_bounds_new ();
  if (!keyed)
    {
      g_byte_array_set_size (key, 0);
      qstore_codec_append_integer (key, position, FALSE);
      qstore_bounds_set_gt (bounds, key->data, key->len);
    }
  if (!(iter = qstore_table_scan (backing, bounds, error)))
    return FALSE;
  while (qstore_iter_next (iter, &local_error))
    {
      gsize len;
      const guint8 *data = qstore_iter_peek_key (iter, &len);
      g_autoptr(GBytes) stored_key = g_bytes_new (data, len);

      if (!keyed || !g_hash_table_contains (produced, stored_key))
        g_ptr_array_add (extra, g_steal_pointer (&stored_key));
    }
  g_clear_object (&iter);
  if (local_error != NULL)
    {
      g_propagate_error (error, local_error);
      return FALSE;
    }
  return replace_rows (backing, extra, null_rows, values, n, error);
}

static gboolean
rebuild (QStoreMView  *view,
         GError      **error)
{
  return qstore_mview_rebuild_into (view, qstore_mview_view_backing (view), error);
}

/* Staleness and the durable stale set */

static gboolean
view_has_work (QStoreMView *view)
{
  return view->dirty || g_hash_table_size (view->dirty_keys) > 0;
}

void
qstore_mview_view_forget_work (QStoreMView *view)
{
  view->dirty = FALSE;
  view->touched = FALSE;
  g_hash_table_remove_all (view->dirty_keys);
  g_hash_table_remove_all (view->touched_keys);
}

gboolean
qstore_mview_plan_reads_view (const Plan  *plan,
                              QStoreMView *upstream)
{
  return plan != NULL && qstore_mview_plan_find_source (plan, upstream->lower, FALSE) != NULL;
}

/* Which live views read each table, for the row changes. */
void
qstore_mview_rebuild_dependents (QStoreMViews *self)
{
  g_hash_table_remove_all (self->dependents);
  for (guint i = 0; i < self->order->len; i++)
    {
      QStoreMView *view = g_ptr_array_index (self->order, i);

      if (view->stale || view->plan == NULL)
        continue;
      for (guint k = 0; k < view->plan->sources->len; k++)
        {
          PlanSource *source = g_ptr_array_index (view->plan->sources, k);
          Dependents *dependents;
          QStoreSqlTable *entry;

          /* TEMP tables are followed through SQLite's hooks instead. */
          if (source->temp || !(entry = qstore_database_lookup (self->db, source->name)))
            continue;
          dependents = g_hash_table_lookup (self->dependents, source->lower);
          if (dependents == NULL)
            {
              dependents = g_new0 (Dependents, 1);
              dependents->entry = qstore_sql_table_ref (entry);
              dependents->views = g_ptr_array_new ();
              g_hash_table_insert (self->dependents, g_strdup (source->lower), dependents);
            }
          g_ptr_array_add (dependents->views, view);
        }
    }
  qstore_mview_update_observer (self);
}

void
qstore_mview_mark_stale_quietly (QStoreMViews *self,
                                 QStoreMView  *view,
                                 const char   *reason)
{
  if (view->stale)
    return;
  view->stale = TRUE;
  g_free (view->stale_reason);
  view->stale_reason = g_strdup (reason);
  qstore_mview_view_forget_work (view);
  qstore_mview_view_finalize_statements (view);
  g_debug ("Materialized view “%s” is stale: %s", view->name, reason);

  /* What reads a view no longer followed is not followed either. */
  for (guint i = 0; i < self->order->len; i++)
    {
      QStoreMView *other = g_ptr_array_index (self->order, i);

      if (other != view && !other->stale && qstore_mview_plan_reads_view (other->plan, view))
        {
          g_autofree char *why = g_strdup_printf ("it reads main.%s, which is stale", view->lower);

          qstore_mview_mark_stale_quietly (self, other, why);
        }
    }
}

static void
mark_stale (QStoreMViews *self,
            QStoreMView  *view,
            const char   *reason)
{
  if (view->stale)
    return;
  qstore_mview_mark_stale_quietly (self, view, reason);
  qstore_mview_rebuild_dependents (self);
  qstore_mview_persist_stale_set_or_warn (self);
}

static void
maintenance_failed (QStoreMView *view,
                    GError      *error)
{
  g_autofree char *reason = g_strdup_printf ("keeping it up to date failed: %s", error->message);

  /* Not a program error: a TEMP source dropped, a body that fails on
   * some rows… The view says why it is stale. */
  g_debug ("Materialized view “%s” is stale: %s", view->name, reason);
  mark_stale (view->owner, view, reason);
}

/* Deferred work */

static void
note_work (QStoreMViews *self)
{
  self->maybe_work = TRUE;
}

static void
flush_view (QStoreMView *view)
{
  g_autoptr(GError) error = NULL;

  if (view->flushing || view->stale)
    return;
  view->flushing = TRUE;
  while (!view->stale && view_has_work (view))
    {
      if (view->dirty)
        {
          view->dirty = FALSE;
          if (!rebuild (view, &error))
            break;
          continue;
        }
      else
        {
          g_autoptr(GHashTable) keys = view->dirty_keys;
          g_autofree QStoreValue *values = g_new0 (QStoreValue, MAX (view->plan->key_out->len, 1));
          GHashTableIter iter;
          GBytes *key;

          view->dirty_keys = g_hash_table_new_full (g_bytes_hash, g_bytes_equal,
                                                    (GDestroyNotify) g_bytes_unref, NULL);
          g_hash_table_iter_init (&iter, keys);
          while (g_hash_table_iter_next (&iter, (gpointer *) &key, NULL))
            if (!qstore_mview_decode_values (key, values, view->plan->key_out->len, &error) ||
                !recompute_partition (view, values, &error))
              break;
          if (error != NULL)
            break;
        }
    }
  view->flushing = FALSE;
  if (error != NULL)
    maintenance_failed (view, error);
}

QStoreMView *
qstore_mview_upstream_view (QStoreMViews     *self,
                            const PlanSource *source)
{
  return source->temp ? NULL : g_hash_table_lookup (self->views, source->lower);
}

/* Flushes what @view reads first, then @view. */
static void
flush_with_upstream (QStoreMView *view,
                     guint        depth)
{
  if (view->stale || view->flushing || depth > 64)
    return;
  for (guint i = 0; i < view->plan->sources->len; i++)
    {
      QStoreMView *upstream = qstore_mview_upstream_view (view->owner, g_ptr_array_index (view->plan->sources, i));

      if (upstream != NULL)
        flush_with_upstream (upstream, depth + 1);
    }
  flush_view (view);
}

static void
flush_all (QStoreMViews *self)
{
  gboolean again = TRUE;

  if (!self->maybe_work)
    return;
  /* Each view's sources first; a flush may give work to views over it. */
  for (guint round = 0; again && round <= self->order->len + 1; round++)
    {
      again = FALSE;
      for (guint i = 0; i < self->order->len; i++)
        flush_with_upstream (g_ptr_array_index (self->order, i), 0);
      for (guint i = 0; i < self->order->len; i++)
        again = again || view_has_work (g_ptr_array_index (self->order, i));
    }
  self->maybe_work = again;
}

/* Does the deferred work of @view and what it reads, or of every view
 * (@view NULL). */
static gboolean
bring_up_to_date (QStoreMViews  *self,
                  QStoreMView   *view,
                  GError       **error)
{
  QStoreCoordinator *coordinator = self->db->coordinator;
  gboolean own_transaction;

  /* Only a view over TEMP tables has work outside a transaction (SQLite
   * wrote them without qstore): it is done in a transaction of its own. */
  own_transaction = !qstore_coordinator_in_transaction (coordinator);
  if (own_transaction)
    {
      if (self->db->flags & QSTORE_OPEN_READ_ONLY)
        return TRUE;
      qstore_coordinator_begin (coordinator);
    }
  if (view != NULL)
    flush_with_upstream (view, 0);
  else
    flush_all (self);
  if (own_transaction && !qstore_coordinator_commit (coordinator, error))
    {
      if (view != NULL)
        g_prefix_error (error, _("Materialized view “%s” cannot be brought up to date: "),
                        view->name);
      return FALSE;
    }
  return TRUE;
}

static gboolean
before_read (gpointer   mview,
             GError   **error)
{
  QStoreMView *view = mview;
  QStoreMViews *self = view->owner;

  /* A statement that writes reads the views as they were when it began:
   * were they to follow its own writes, `INSERT INTO src SELECT … FROM
   * view` would read the rows it adds, without end. */
  if (!self->maybe_work || view->stale || view->flushing || self->writing > 0)
    return TRUE;
  return bring_up_to_date (self, view, error);
}

gboolean
qstore_mview_before_write (QStoreDatabase  *db,
                           GError         **error)
{
  QStoreMViews *self = qstore_mview_mviews_of (db);

  if (self == NULL)
    return TRUE;
  if (self->maybe_work && self->writing == 0 && !bring_up_to_date (self, NULL, error))
    return FALSE;
  self->writing++;
  return TRUE;
}

void
qstore_mview_after_write (QStoreDatabase *db)
{
  QStoreMViews *self = qstore_mview_mviews_of (db);

  if (self != NULL && self->writing > 0)
    self->writing--;
}

/* The coordinator's observer */

void
qstore_mview_on_changed (gpointer        data,
                         const char     *schema,
                         const char     *table,
                         QStoreChangeOp  op,
                         GBytes         *old_row,
                         GBytes         *new_row)
{
  QStoreMViews *self = data;
  Dependents *dependents = g_hash_table_lookup (self->dependents, table);
  g_autoptr(GPtrArray) views = NULL;
  QStoreTable *source;
  guint n_columns;
  QStoreValue local_old[32], local_new[32];
  g_autofree QStoreValue *heap_old = NULL, *heap_new = NULL;
  QStoreValue *old_values, *new_values;
  gboolean old_decoded = FALSE, new_decoded = FALSE;

  if (dependents == NULL)
    return;
  source = dependents->entry->table;
  n_columns = dependents->entry->schema->columns->len;
  if (n_columns <= G_N_ELEMENTS (local_old))
    {
      old_values = local_old;
      new_values = local_new;
    }
  else
    {
      old_values = heap_old = g_new0 (QStoreValue, n_columns);
      new_values = heap_new = g_new0 (QStoreValue, n_columns);
    }

  /* Maintenance may make views stale, which changes the list. */
  views = g_ptr_array_copy (dependents->views, NULL, NULL);
  for (guint i = 0; i < views->len; i++)
    {
      QStoreMView *view = g_ptr_array_index (views, i);
      g_autoptr(GError) error = NULL;
      Plan *plan = view->plan;
      guint n_key = plan->key_out->len;
      QStoreValue old_key[QSTORE_MVIEW_MAX_KEY], new_key[QSTORE_MVIEW_MAX_KEY];
      QStoreMViewTouches touches;

      if (view->stale)
        continue;

      if (qstore_mview_plan_rebuilds (plan))
        {
          view->dirty = TRUE;
          view->touched = TRUE;
          note_work (self);
          continue;
        }

      if (old_row != NULL && !old_decoded)
        {
          gsize len;
          const guint8 *data = g_bytes_get_data (old_row, &len);

          if (!qstore_table_decode_row (source, data, len, old_values, NULL, &error))
            {
              maintenance_failed (view, error);
              continue;
            }
          old_decoded = TRUE;
        }
      if (new_row != NULL && !new_decoded)
        {
          gsize len;
          const guint8 *data = g_bytes_get_data (new_row, &len);

          if (!qstore_table_decode_row (source, data, len, new_values, NULL, &error))
            {
              maintenance_failed (view, error);
              continue;
            }
          new_decoded = TRUE;
        }

      touches = qstore_mview_plan_touches (plan, old_row != NULL ? old_values : NULL,
                                           new_row != NULL ? new_values : NULL,
                                           old_key, new_key);
      if (plan->strategy == QSTORE_MATERIALIZED_VIEW_STRATEGY_INVERSE_PROJECTION &&
          self->writing == 0)
        {
          /* At row time: the old key's row, and the new key's if it moved. */
          if (((touches & QSTORE_MVIEW_TOUCHES_OLD) &&
               !recompute_partition (view, old_key, &error)) ||
              ((touches & QSTORE_MVIEW_TOUCHES_NEW) &&
               !recompute_partition (view, new_key, &error)))
            maintenance_failed (view, error);
          continue;
        }

      /* A group, or during a writing statement a projected row, waits for
       * a read of the view or the commit. */
      if (touches & QSTORE_MVIEW_TOUCHES_OLD)
        {
          GBytes *key = qstore_mview_encode_values (old_key, n_key);

          g_hash_table_add (view->touched_keys, g_bytes_ref (key));
          g_hash_table_add (view->dirty_keys, key);
        }
      if (touches & QSTORE_MVIEW_TOUCHES_NEW)
        {
          GBytes *key = qstore_mview_encode_values (new_key, n_key);

          g_hash_table_add (view->touched_keys, g_bytes_ref (key));
          g_hash_table_add (view->dirty_keys, key);
        }
      note_work (self);
    }
}

/* The durable stale set that could not be written when it changed (the
 * provider held the transaction's write transaction) goes into the commit,
 * after the maintenance that may make more views stale: it is stored with
 * the writes the stale views do not follow, or not at all. */
static void
carry_stale_set (QStoreMViews *self)
{
  QStoreCoordinator *coordinator = self->db->coordinator;
  QStoreKV *catalog = qstore_database_get_catalog (self->db);
  g_autoptr(GBytes) key = qstore_catalog_key_for_meta (STALE_SET_META);
  g_autofree char *json = qstore_mview_stale_json (self);
  gsize key_len;
  const guint8 *key_data = g_bytes_get_data (key, &key_len);

  g_clear_pointer (&self->committing, g_free);
  if (self->durable_known && g_strcmp0 (json, self->durable_text) == 0)
    return;
  qstore_coordinator_put (coordinator, catalog, key_data, key_len,
                          (const guint8 *) json, strlen (json));
  self->committing = g_steal_pointer (&json);
}

void
qstore_mview_on_before_commit (gpointer data)
{
  QStoreMViews *self = data;

  flush_all (self);
  if (self->unsaved)
    carry_stale_set (self);
}

/* After the transaction: the set its commit carried is the store's now;
 * if it did not commit, nothing of it was stored, and the provider takes
 * writes again: the set is written at once. */
static void
settle_stale_set (QStoreMViews *self,
                  gboolean      committed)
{
  g_autofree char *carried = g_steal_pointer (&self->committing);

  if (carried != NULL && committed)
    {
      g_free (self->durable_text);
      self->durable_text = g_steal_pointer (&carried);
      self->durable_known = TRUE;
      self->unsaved = FALSE;
    }
  if (self->unsaved)
    qstore_mview_persist_stale_set_or_warn (self);
  qstore_mview_update_observer (self);
}

void
qstore_mview_on_undone (gpointer data)
{
  QStoreMViews *self = data;

  for (guint i = 0; i < self->order->len; i++)
    {
      QStoreMView *view = g_ptr_array_index (self->order, i);
      GHashTableIter iter;
      GBytes *key;

      if (view->stale)
        continue;
      /* Work done after the savepoint is undone with it: do again all this
       * transaction asked for. */
      view->dirty = view->dirty || view->touched || view->plan->has_temp;
      g_hash_table_iter_init (&iter, view->touched_keys);
      while (g_hash_table_iter_next (&iter, (gpointer *) &key, NULL))
        g_hash_table_add (view->dirty_keys, g_bytes_ref (key));
      if (view_has_work (view))
        note_work (self);
    }
}

void
qstore_mview_on_ended (gpointer data,
                       gboolean committed)
{
  QStoreMViews *self = data;

  for (guint i = 0; i < self->order->len; i++)
    {
      QStoreMView *view = g_ptr_array_index (self->order, i);

      /* Whatever the transaction wrote is stored or gone with its
       * sources; a TEMP table's rows are SQLite's, and what was written
       * for them may have been rolled back. */
      if (view->plan != NULL && view->plan->has_temp && !view->stale)
        {
          gboolean dirty = view->dirty || !committed;

          qstore_mview_view_forget_work (view);
          view->dirty = dirty;
          if (dirty)
            note_work (self);
        }
      else
        qstore_mview_view_forget_work (view);
    }
  settle_stale_set (self, committed);
}

/* TEMP sources: SQLite writes them, so its hooks say when. */

void
qstore_mview_mark_temp_views (QStoreMViews *self,
                              const char   *table)
{
  for (guint i = 0; i < self->order->len; i++)
    {
      QStoreMView *view = g_ptr_array_index (self->order, i);
      g_autofree char *low = NULL;

      if (view->stale || view->plan == NULL || !view->plan->has_temp)
        continue;
      if (table != NULL)
        {
          low = qstore_mview_lower (table);
          if (qstore_mview_plan_find_source (view->plan, low, TRUE) == NULL)
            continue;
        }
      view->dirty = TRUE;
      note_work (self);
    }
}

static void
on_sqlite_update (void          *data,
                  int            op,
                  const char    *db_name,
                  const char    *table,
                  sqlite3_int64  rowid)
{
  if (g_strcmp0 (db_name, "temp") == 0)
    qstore_mview_mark_temp_views (data, table);
}

static void
on_sqlite_rollback (void *data)
{
  qstore_mview_mark_temp_views (data, NULL);
}

void
qstore_mview_install_hooks (QStoreMViews *self)
{
  if (self->hooks)
    return;
  self->hooks = TRUE;
  sqlite3_update_hook (self->db->db, on_sqlite_update, self);
  sqlite3_rollback_hook (self->db->db, on_sqlite_rollback, self);
}

/* Registering views and writing their contents */
