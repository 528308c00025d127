/* qstore-coordinator-iter.c: the transaction's writes merged over committed data
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "qstore-coordinator-private.h"
#include "qstore-error.h"
#include "qstore-i18n-private.h"
#include "qstore-iter-private.h"

typedef enum
{
  SOURCE_NONE = 0,
  SOURCE_COMMITTED = 1 << 0,
  SOURCE_PENDING = 1 << 1,
  SOURCE_BOTH = SOURCE_COMMITTED | SOURCE_PENDING,
} Source;

#define QSTORE_TYPE_MERGED_ITER (qstore_merged_iter_get_type ())
G_DECLARE_FINAL_TYPE (QStoreMergedIter, qstore_merged_iter, QSTORE, MERGED_ITER, QStoreIter)

/* Walks the committed data and the transaction's writes side by side.
 * Each side is in range on its own (the committed iterator applies the
 * bounds, the pending cursor stops at the far bound); the base class
 * applies the limit to what comes out. When the transaction writes to the
 * store while iterating, the pending cursor seeks again just past the
 * last key returned, so new writes ahead of the position are seen. */
struct _QStoreMergedIter
{
  QStoreIter           parent_instance;

  QStoreCoordinator   *coordinator;
  guint64              generation;
  guint                store;
  QStoreIter          *committed;
  gboolean             committed_valid;
  QStorePendingCursor  cursor;
  const guint8        *pending_head;
  guint64              stamp;
  gboolean             reverse;
  gboolean             started;
  Source               source;
};

G_DEFINE_FINAL_TYPE (QStoreMergedIter, qstore_merged_iter, QSTORE_TYPE_ITER)

static void
merged_iter_settle_pending (QStoreMergedIter *self,
                            gboolean          found)
{
  const QStoreBounds *bounds = qstore_iter_get_bounds (QSTORE_ITER (self));
  const guint8 *key;
  gsize key_len;

  self->pending_head = found ? qstore_pending_cursor_get_entry (&self->cursor) : NULL;
  if (self->pending_head == NULL)
    return;
  key = qstore_pending_entry_get_key (self->pending_head, &key_len);
  if (self->reverse ? !qstore_bounds_above_lower (bounds, key, key_len)
                    : !qstore_bounds_below_upper (bounds, key, key_len))
    self->pending_head = NULL;
}

static void
merged_iter_step_pending (QStoreMergedIter *self)
{
  merged_iter_settle_pending (self, qstore_pending_cursor_step (&self->cursor, self->reverse));
}

static void
merged_iter_seek_pending (QStoreMergedIter *self,
                          const guint8     *key,
                          gsize             key_len,
                          gboolean          inclusive)
{
  gboolean found = qstore_pending_seek (self->coordinator->pending, self->store,
                                        key, key_len, inclusive, self->reverse,
                                        &self->cursor);

  self->stamp = qstore_pending_store_get_stamp (self->coordinator->pending, self->store);
  merged_iter_settle_pending (self, found);
}

static gboolean
merged_iter_step_committed (QStoreMergedIter  *self,
                            GError           **error)
{
  GError *local_error = NULL;

  self->committed_valid = qstore_iter_next_internal (self->committed, &local_error);
  if (local_error != NULL)
    {
      g_propagate_error (error, local_error);
      return FALSE;
    }
  return TRUE;
}

static const guint8 *
merged_iter_last_key (QStoreMergedIter *self,
                      gsize            *key_len)
{
  if (self->source & SOURCE_PENDING)
    return qstore_pending_entry_get_key (self->pending_head, key_len);
  return QSTORE_ITER_GET_CLASS (self->committed)->peek_key (self->committed, key_len);
}

static gboolean
qstore_merged_iter_advance (QStoreIter  *iter,
                            GError     **error)
{
  QStoreMergedIter *self = QSTORE_MERGED_ITER (iter);
  QStoreCoordinator *coordinator = self->coordinator;

  if (coordinator->generation != self->generation || !coordinator->in_tx)
    {
      g_set_error_literal (error, QSTORE_ERROR, QSTORE_ERROR_CLOSED,
                           _("The transaction this iteration read was committed or "
                           "rolled back: start a new iteration"));
      return FALSE;
    }

  if (!self->started)
    {
      const QStoreBounds *bounds = qstore_iter_get_bounds (iter);
      const guint8 *near;
      gsize near_len;
      gboolean inclusive;

      self->started = TRUE;
      if (!merged_iter_step_committed (self, error))
        return FALSE;
      if (self->reverse)
        near = qstore_bounds_get_upper (bounds, &near_len, &inclusive);
      else
        near = qstore_bounds_get_lower (bounds, &near_len, &inclusive);
      merged_iter_seek_pending (self, near, near_len, inclusive);
    }
  else
    {
      gboolean reseeked = FALSE;

      /* Seek before stepping the committed side: the last key may be
       * borrowed from it. */
      if (self->stamp != qstore_pending_store_get_stamp (coordinator->pending, self->store))
        {
          gsize key_len;
          const guint8 *key = merged_iter_last_key (self, &key_len);

          merged_iter_seek_pending (self, key, key_len, FALSE);
          reseeked = TRUE;
        }
      if ((self->source & SOURCE_COMMITTED) && !merged_iter_step_committed (self, error))
        return FALSE;
      if ((self->source & SOURCE_PENDING) && !reseeked)
        merged_iter_step_pending (self);
    }

  for (;;)
    {
      const guint8 *pending_key = NULL, *committed_key = NULL;
      gsize pending_len = 0, committed_len = 0;
      int cmp;

      if (self->pending_head != NULL)
        pending_key = qstore_pending_entry_get_key (self->pending_head, &pending_len);
      if (self->committed_valid)
        committed_key = QSTORE_ITER_GET_CLASS (self->committed)->peek_key (self->committed, &committed_len);

      if (pending_key == NULL && committed_key == NULL)
        {
          self->source = SOURCE_NONE;
          return FALSE;
        }
      if (pending_key == NULL)
        cmp = 1;
      else if (committed_key == NULL)
        cmp = -1;
      else
        {
          cmp = qstore_key_compare (pending_key, pending_len, committed_key, committed_len);
          if (self->reverse)
            cmp = -cmp;
        }

      if (cmp > 0)
        {
          self->source = SOURCE_COMMITTED;
          return TRUE;
        }
      if (!qstore_pending_entry_is_tombstone (self->pending_head))
        {
          self->source = cmp < 0 ? SOURCE_PENDING : SOURCE_BOTH;
          return TRUE;
        }
      /* A delete hides the committed entry under it. */
      merged_iter_step_pending (self);
      if (cmp == 0 && !merged_iter_step_committed (self, error))
        return FALSE;
    }
}

/* The committed side starts over on the same bounds without their limit
 * (which applies to the merge); the pending side seeks at the first
 * advance, as for a new iterator. */
static gboolean
qstore_merged_iter_restart (QStoreIter  *iter,
                            GError     **error)
{
  QStoreMergedIter *self = QSTORE_MERGED_ITER (iter);
  g_autoptr(QStoreBounds) unlimited = qstore_bounds_copy (qstore_iter_get_bounds (iter));

  qstore_bounds_unset_limit (unlimited);
  if (!qstore_iter_seek (self->committed, unlimited, error))
    return FALSE;
  self->committed_valid = FALSE;
  self->pending_head = NULL;
  self->reverse = qstore_bounds_get_reverse (unlimited);
  self->started = FALSE;
  self->source = SOURCE_NONE;
  return TRUE;
}

static const guint8 *
qstore_merged_iter_peek_key (QStoreIter *iter,
                             gsize      *key_len)
{
  QStoreMergedIter *self = QSTORE_MERGED_ITER (iter);

  return merged_iter_last_key (self, key_len);
}

static const guint8 *
qstore_merged_iter_peek_value (QStoreIter *iter,
                               gsize      *value_len)
{
  QStoreMergedIter *self = QSTORE_MERGED_ITER (iter);

  if (self->source & SOURCE_PENDING)
    return qstore_pending_entry_get_value (self->pending_head, value_len);
  return QSTORE_ITER_GET_CLASS (self->committed)->peek_value (self->committed, value_len);
}

static void
qstore_merged_iter_finalize (GObject *object)
{
  QStoreMergedIter *self = QSTORE_MERGED_ITER (object);

  /* The coordinator writes its buffer out only while none is alive. */
  if (self->coordinator->generation == self->generation)
    {
      g_assert (self->coordinator->live_iters > 0);
      self->coordinator->live_iters--;
    }
  g_clear_object (&self->committed);
  g_clear_object (&self->coordinator);

  G_OBJECT_CLASS (qstore_merged_iter_parent_class)->finalize (object);
}

static void
qstore_merged_iter_class_init (QStoreMergedIterClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  QStoreIterClass *iter_class = QSTORE_ITER_CLASS (klass);

  object_class->finalize = qstore_merged_iter_finalize;
  iter_class->advance = qstore_merged_iter_advance;
  iter_class->peek_key = qstore_merged_iter_peek_key;
  iter_class->peek_value = qstore_merged_iter_peek_value;
  iter_class->restart = qstore_merged_iter_restart;
}

static void
qstore_merged_iter_init (QStoreMergedIter *self)
{
}

/**
 * qstore_coordinator_iterate:
 * @self: a #QStoreCoordinator
 * @store: a store of the coordinator's provider
 * @bounds: (nullable): the range, or %NULL for the whole store
 * @error: return location for a #GError
 *
 * Iterates a range as the open transaction sees it: its own writes merged
 * over the committed entries, in key order (or reverse key order), its
 * deletes hiding committed keys, with the bounds and limit of
 * [method@KV.iterate]. Writes the transaction makes to @store while
 * iterating are seen when they land ahead of the position.
 *
 * Within a transaction, the iterator is valid until the transaction ends:
 * afterwards it fails with %QSTORE_ERROR_CLOSED. Outside a transaction,
 * this is [method@KV.iterate].
 *
 * Returns: (transfer full): the iterator, or %NULL on error
 *   (%QSTORE_ERROR_INVALID_ARGUMENT for a negative limit)
 */
QStoreIter *
qstore_coordinator_iterate (QStoreCoordinator   *self,
                            QStoreKV            *store,
                            const QStoreBounds  *bounds,
                            GError             **error)
{
  g_autoptr(QStoreBounds) all = NULL;
  g_autoptr(QStoreBounds) unlimited = NULL;
  g_autoptr(QStoreIter) committed = NULL;
  QStoreMergedIter *iter;

  g_return_val_if_fail (QSTORE_IS_COORDINATOR (self), NULL);
  g_return_val_if_fail (QSTORE_IS_KV (store), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!self->in_tx)
    return self->pinned != NULL ? qstore_snapshot_iterate (self->pinned, store, bounds, error)
                                : qstore_kv_iterate (store, bounds, error);

  if (bounds == NULL)
    bounds = all = qstore_bounds_new ();
  if (!qstore_bounds_validate (bounds, error))
    return NULL;

  /* Deletes hide committed entries, so the limit applies to the merge. */
  unlimited = qstore_bounds_copy (bounds);
  qstore_bounds_unset_limit (unlimited);
  if (!qstore_coordinator_spill_check (self, error))
    return NULL;
  if (self->pinned != NULL)
    committed = qstore_snapshot_iterate (self->pinned, store, unlimited, error);
  else if (self->spill != NULL)
    committed = qstore_snapshot_iterate (QSTORE_SNAPSHOT (self->spill), store, unlimited, error);
  else
    committed = qstore_kv_iterate (store, unlimited, error);
  if (committed == NULL)
    return NULL;

  iter = qstore_iter_new (QSTORE_TYPE_MERGED_ITER, bounds, NULL);
  iter->coordinator = g_object_ref (self);
  iter->generation = self->generation;
  iter->store = qstore_pending_lookup_store (self->pending, store, TRUE);
  iter->committed = g_steal_pointer (&committed);
  iter->reverse = qstore_bounds_get_reverse (bounds);
  self->live_iters++;
  return QSTORE_ITER (iter);
}
