/* qstore-batch.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "qstore-batch.h"
#include "qstore-op-buffer-private.h"
#include "qstore-provider.h"

/* Blocks start small, so a batch of a few writes costs no large allocation,
 * and double up to a size that keeps big batches cheap. */
#define FIRST_BLOCK_SIZE 1024
#define MAX_BLOCK_SIZE (256 * 1024)

void
qstore_op_buffer_init (QStoreOpBuffer *self)
{
  self->ops = g_array_new (FALSE, FALSE, sizeof (QStoreWriteOp));
  self->blocks = g_ptr_array_new_with_free_func (g_free);
  self->used = self->size = 0;
}

void
qstore_op_buffer_clear (QStoreOpBuffer *self)
{
  g_clear_pointer (&self->ops, g_array_unref);
  g_clear_pointer (&self->blocks, g_ptr_array_unref);
}

void
qstore_op_buffer_reset (QStoreOpBuffer *self)
{
  g_array_set_size (self->ops, 0);
  g_ptr_array_set_size (self->blocks, 0);
  self->used = self->size = 0;
}

static guint8 *
arena_copy (QStoreOpBuffer *self,
            const guint8   *data,
            gsize           len)
{
  guint8 *dest;

  if (len > self->size - self->used)
    {
      /* Large values get a block of their own so the shared block is not
       * abandoned half empty. */
      gsize block = self->size ? MIN (self->size * 2, MAX_BLOCK_SIZE) : FIRST_BLOCK_SIZE;
      gsize size = MAX (len, block);

      dest = g_malloc (size);
      g_ptr_array_add (self->blocks, dest);
      if (size > block)
        {
          memcpy (dest, data, len);
          /* Keep filling the previous block: move it back to the end. */
          if (self->blocks->len > 1 && self->size > 0)
            {
              gpointer *pdata = self->blocks->pdata;
              gpointer tmp = pdata[self->blocks->len - 1];

              pdata[self->blocks->len - 1] = pdata[self->blocks->len - 2];
              pdata[self->blocks->len - 2] = tmp;
            }
          return dest;
        }
      self->size = size;
      self->used = 0;
    }
  dest = (guint8 *) g_ptr_array_index (self->blocks, self->blocks->len - 1) + self->used;
  if (len > 0)
    memcpy (dest, data, len);
  self->used += len;
  return dest;
}

void
qstore_op_buffer_add (QStoreOpBuffer    *self,
                      QStoreKV          *store,
                      QStoreWriteOpKind  kind,
                      const guint8      *key,
                      gsize              key_len,
                      const guint8      *value,
                      gsize              value_len)
{
  QStoreWriteOp op = { store, kind, NULL, key_len, NULL, 0 };

  op.key = arena_copy (self, key, key_len);
  if (kind == QSTORE_WRITE_OP_PUT)
    {
      op.value = arena_copy (self, value, value_len);
      op.value_len = value_len;
    }
  g_array_append_val (self->ops, op);
}

/**
 * QStoreBatch:
 *
 * Writes to one store, buffered and then applied in order (the last write
 * to a key wins), all or nothing, by [method@Batch.write].
 *
 * After a successful write the batch is empty and can be reused; after a
 * failed one it keeps its operations, so the write can be retried.
 */
struct _QStoreBatch
{
  GObject         parent_instance;
  QStoreKV       *store;
  QStoreOpBuffer  buffer;
};

G_DEFINE_FINAL_TYPE (QStoreBatch, qstore_batch, G_TYPE_OBJECT)

static void
qstore_batch_finalize (GObject *object)
{
  QStoreBatch *self = QSTORE_BATCH (object);

  qstore_op_buffer_clear (&self->buffer);
  g_clear_object (&self->store);

  G_OBJECT_CLASS (qstore_batch_parent_class)->finalize (object);
}

static void
qstore_batch_class_init (QStoreBatchClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = qstore_batch_finalize;
}

static void
qstore_batch_init (QStoreBatch *self)
{
  qstore_op_buffer_init (&self->buffer);
}

/* Single writes: one op handed to the provider, as a batch of one would
 * be. (Stores read through their plugin; every write goes through
 * qstore_provider_write(), which is why these live here and not beside
 * the reads in qstore-kv.c.) */

static gboolean
write_one (QStoreKV          *self,
           QStoreWriteOpKind  kind,
           const guint8      *key,
           gsize              key_len,
           const guint8      *value,
           gsize              value_len,
           QStoreWriteFlags   flags,
           GError           **error)
{
  QStoreWriteOp op = { self, kind, key, key_len, value, value_len };

  return qstore_provider_write (qstore_kv_get_provider (self), &op, 1, flags, error);
}

/**
 * qstore_kv_put:
 * @self: a #QStoreKV
 * @key: (array length=key_len): the key
 * @key_len: length of @key
 * @value: (array length=value_len) (nullable): the value
 * @value_len: length of @value
 * @flags: durability flags
 * @error: return location for a #GError
 *
 * Stores @value under @key, replacing any earlier value, in a transaction
 * of its own.
 *
 * Returns: %TRUE on success
 */
gboolean
qstore_kv_put (QStoreKV          *self,
               const guint8      *key,
               gsize              key_len,
               const guint8      *value,
               gsize              value_len,
               QStoreWriteFlags   flags,
               GError           **error)
{
  g_return_val_if_fail (QSTORE_IS_KV (self), FALSE);
  g_return_val_if_fail (key != NULL || key_len == 0, FALSE);
  g_return_val_if_fail (value != NULL || value_len == 0, FALSE);

  return write_one (self, QSTORE_WRITE_OP_PUT, key, key_len,
                    value ? value : (const guint8 *) "", value_len, flags, error);
}

/**
 * qstore_kv_delete:
 * @self: a #QStoreKV
 * @key: (array length=key_len): the key
 * @key_len: length of @key
 * @flags: durability flags
 * @error: return location for a #GError
 *
 * Removes @key, in a transaction of its own. Removing an absent key
 * succeeds.
 *
 * Returns: %TRUE on success
 */
gboolean
qstore_kv_delete (QStoreKV          *self,
                  const guint8      *key,
                  gsize              key_len,
                  QStoreWriteFlags   flags,
                  GError           **error)
{
  g_return_val_if_fail (QSTORE_IS_KV (self), FALSE);
  g_return_val_if_fail (key != NULL || key_len == 0, FALSE);

  return write_one (self, QSTORE_WRITE_OP_DELETE, key, key_len, NULL, 0, flags, error);
}

/**
 * qstore_kv_new_batch:
 * @self: a #QStoreKV
 *
 * Creates an empty batch of writes to @self; nothing is written until
 * [method@Batch.write].
 *
 * Returns: (transfer full): an empty batch of writes to @self
 */
QStoreBatch *
qstore_kv_new_batch (QStoreKV *self)
{
  QStoreBatch *batch;

  g_return_val_if_fail (QSTORE_IS_KV (self), NULL);

  batch = g_object_new (QSTORE_TYPE_BATCH, NULL);
  batch->store = g_object_ref (self);
  return batch;
}

/**
 * qstore_batch_get_store:
 * @self: a #QStoreBatch
 *
 * Gets the store the batch writes to.
 *
 * Returns: (transfer none): the store @self writes to
 */
QStoreKV *
qstore_batch_get_store (QStoreBatch *self)
{
  g_return_val_if_fail (QSTORE_IS_BATCH (self), NULL);
  return self->store;
}

/**
 * qstore_batch_put:
 * @self: a #QStoreBatch
 * @key: (array length=key_len): the key
 * @key_len: length of @key
 * @value: (array length=value_len) (nullable): the value
 * @value_len: length of @value
 *
 * Queues storing @value under @key.
 */
void
qstore_batch_put (QStoreBatch  *self,
                  const guint8 *key,
                  gsize         key_len,
                  const guint8 *value,
                  gsize         value_len)
{
  g_return_if_fail (QSTORE_IS_BATCH (self));
  g_return_if_fail (key != NULL || key_len == 0);
  g_return_if_fail (value != NULL || value_len == 0);

  qstore_op_buffer_add (&self->buffer, self->store, QSTORE_WRITE_OP_PUT,
                        key, key_len, value, value_len);
}

/**
 * qstore_batch_delete:
 * @self: a #QStoreBatch
 * @key: (array length=key_len): the key
 * @key_len: length of @key
 *
 * Queues removing @key.
 */
void
qstore_batch_delete (QStoreBatch  *self,
                     const guint8 *key,
                     gsize         key_len)
{
  g_return_if_fail (QSTORE_IS_BATCH (self));
  g_return_if_fail (key != NULL || key_len == 0);

  qstore_op_buffer_add (&self->buffer, self->store, QSTORE_WRITE_OP_DELETE,
                        key, key_len, NULL, 0);
}

/**
 * qstore_batch_get_n_ops:
 * @self: a #QStoreBatch
 *
 * Counts the writes queued since the batch was created or last written.
 *
 * Returns: how many writes are queued
 */
guint
qstore_batch_get_n_ops (QStoreBatch *self)
{
  g_return_val_if_fail (QSTORE_IS_BATCH (self), 0);
  return self->buffer.ops->len;
}

/**
 * qstore_batch_write:
 * @self: a #QStoreBatch
 * @flags: durability flags
 * @error: return location for a #GError
 *
 * Applies the queued writes in order, all or nothing.
 *
 * Returns: %TRUE on success
 */
gboolean
qstore_batch_write (QStoreBatch       *self,
                    QStoreWriteFlags   flags,
                    GError           **error)
{
  g_return_val_if_fail (QSTORE_IS_BATCH (self), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (self->buffer.ops->len == 0)
    return TRUE;
  if (!qstore_provider_write (qstore_kv_get_provider (self->store),
                              (const QStoreWriteOp *) self->buffer.ops->data,
                              self->buffer.ops->len, flags, error))
    return FALSE;
  qstore_op_buffer_reset (&self->buffer);
  return TRUE;
}

/**
 * QStoreAtomicBatch:
 *
 * Writes addressed by (store, key) across the stores of one provider,
 * committed all or nothing in one durable transaction. Only providers with
 * %QSTORE_CAPABILITY_ATOMIC_BATCH hand these out.
 *
 * After a successful commit the batch is empty and can be reused; after a
 * failed one it keeps its operations.
 */
struct _QStoreAtomicBatch
{
  GObject          parent_instance;
  QStoreProvider  *provider;
  GHashTable      *stores;      /* the stores ops point to, kept alive */
  QStoreKV        *last_store;  /* in stores: consecutive ops mostly repeat it */
  QStoreOpBuffer   buffer;
};

G_DEFINE_FINAL_TYPE (QStoreAtomicBatch, qstore_atomic_batch, G_TYPE_OBJECT)

static void
qstore_atomic_batch_finalize (GObject *object)
{
  QStoreAtomicBatch *self = QSTORE_ATOMIC_BATCH (object);

  qstore_op_buffer_clear (&self->buffer);
  g_clear_pointer (&self->stores, g_hash_table_unref);
  g_clear_object (&self->provider);

  G_OBJECT_CLASS (qstore_atomic_batch_parent_class)->finalize (object);
}

static void
qstore_atomic_batch_class_init (QStoreAtomicBatchClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = qstore_atomic_batch_finalize;
}

static void
qstore_atomic_batch_init (QStoreAtomicBatch *self)
{
  qstore_op_buffer_init (&self->buffer);
  self->stores = g_hash_table_new_full (NULL, NULL, g_object_unref, NULL);
}

/**
 * qstore_provider_begin_atomic_batch:
 * @self: a #QStoreProvider
 *
 * Starts a batch that commits across stores all or nothing.
 *
 * Returns: (transfer full) (nullable): a new batch, or %NULL when the
 *   provider has no atomic cross-store commit (see
 *   %QSTORE_CAPABILITY_ATOMIC_BATCH)
 */
QStoreAtomicBatch *
qstore_provider_begin_atomic_batch (QStoreProvider *self)
{
  QStoreAtomicBatch *batch;

  g_return_val_if_fail (QSTORE_IS_PROVIDER (self), NULL);

  if (!(qstore_provider_get_capabilities (self) & QSTORE_CAPABILITY_ATOMIC_BATCH))
    return NULL;

  batch = g_object_new (QSTORE_TYPE_ATOMIC_BATCH, NULL);
  batch->provider = g_object_ref (self);
  return batch;
}

static void
hold_store (QStoreAtomicBatch *self,
            QStoreKV          *store)
{
  if (store == self->last_store)
    return;
  if (!g_hash_table_contains (self->stores, store))
    g_hash_table_add (self->stores, g_object_ref (store));
  self->last_store = store;
}

/**
 * qstore_atomic_batch_put:
 * @self: a #QStoreAtomicBatch
 * @store: a store of the batch's provider
 * @key: (array length=key_len): the key
 * @key_len: length of @key
 * @value: (array length=value_len) (nullable): the value
 * @value_len: length of @value
 *
 * Queues storing @value under @key in @store.
 */
void
qstore_atomic_batch_put (QStoreAtomicBatch *self,
                         QStoreKV          *store,
                         const guint8      *key,
                         gsize              key_len,
                         const guint8      *value,
                         gsize              value_len)
{
  g_return_if_fail (QSTORE_IS_ATOMIC_BATCH (self));
  g_return_if_fail (store == self->last_store || QSTORE_IS_KV (store));
  g_return_if_fail (key != NULL || key_len == 0);
  g_return_if_fail (value != NULL || value_len == 0);

  hold_store (self, store);
  qstore_op_buffer_add (&self->buffer, store, QSTORE_WRITE_OP_PUT,
                        key, key_len, value, value_len);
}

/**
 * qstore_atomic_batch_delete:
 * @self: a #QStoreAtomicBatch
 * @store: a store of the batch's provider
 * @key: (array length=key_len): the key
 * @key_len: length of @key
 *
 * Queues removing @key from @store.
 */
void
qstore_atomic_batch_delete (QStoreAtomicBatch *self,
                            QStoreKV          *store,
                            const guint8      *key,
                            gsize              key_len)
{
  g_return_if_fail (QSTORE_IS_ATOMIC_BATCH (self));
  g_return_if_fail (store == self->last_store || QSTORE_IS_KV (store));
  g_return_if_fail (key != NULL || key_len == 0);

  hold_store (self, store);
  qstore_op_buffer_add (&self->buffer, store, QSTORE_WRITE_OP_DELETE,
                        key, key_len, NULL, 0);
}

/**
 * qstore_atomic_batch_get_n_ops:
 * @self: a #QStoreAtomicBatch
 *
 * Counts the writes queued since the batch was created or last committed.
 *
 * Returns: how many writes are queued
 */
guint
qstore_atomic_batch_get_n_ops (QStoreAtomicBatch *self)
{
  g_return_val_if_fail (QSTORE_IS_ATOMIC_BATCH (self), 0);
  return self->buffer.ops->len;
}

/**
 * qstore_atomic_batch_commit:
 * @self: a #QStoreAtomicBatch
 * @flags: durability flags
 * @error: return location for a #GError
 *
 * Applies every queued write in order, across stores, all or nothing.
 *
 * Returns: %TRUE on success
 */
gboolean
qstore_atomic_batch_commit (QStoreAtomicBatch  *self,
                            QStoreWriteFlags    flags,
                            GError            **error)
{
  g_return_val_if_fail (QSTORE_IS_ATOMIC_BATCH (self), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (self->buffer.ops->len == 0)
    return TRUE;
  if (!qstore_provider_write (self->provider,
                              (const QStoreWriteOp *) self->buffer.ops->data,
                              self->buffer.ops->len, flags, error))
    return FALSE;
  qstore_op_buffer_reset (&self->buffer);
  g_hash_table_remove_all (self->stores);
  self->last_store = NULL;
  return TRUE;
}
