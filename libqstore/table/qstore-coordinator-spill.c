/* qstore-coordinator-spill.c: large transactions written out as they go
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "qstore-coordinator-private.h"
#include "qstore-error.h"
#include "qstore-i18n-private.h"

/* The transaction's writes wait in the pending buffer, which reads merge
 * over committed data. On a provider with write transactions
 * (QSTORE_CAPABILITY_WRITE_TXN) the buffer is written out into one
 * whenever it holds the write-out step (64 MiB unless set), and emptied:
 * from then on the transaction's reads merge the buffer over the write
 * transaction (committed data with the written-out writes over it), and
 * the commit writes what is left into it and commits it. The provider
 * holds written-out writes in its own bounded memory and files, so the
 * writer's memory no longer grows with the transaction; nobody sees them
 * before the commit, and a crash leaves none of them. A commit of more
 * than QSTORE_COORDINATOR_STREAM_OPS writes goes the same way when
 * nothing was written out, for speed: chunk by chunk, each while its
 * entries are in the cache, instead of one array of every write.
 *
 * The step is large on purpose. Each write-out is one sorted batch, and
 * a B-tree takes a sorted batch best in one piece: batches of random keys
 * written out one after another land all over the tree, so every one
 * reads and rewrites pages the previous ones wrote (on sqlite through the
 * WAL, once they outgrow its page cache). A transaction that fits in the
 * step costs what it did with no write-outs at all; one past it pays for
 * a pass over the pages per step. A smaller step is the caller's choice
 * of memory over time.
 *
 * The buffer is written out only where nothing can take its entries back
 * or still points into it: no savepoint level is open (a rollback to one
 * undoes the buffer only, so every level must lie after the last write
 * out) and no iterator of the transaction is alive (its cursors point
 * into the buffer, its committed side reads what the write-out changes).
 * A rollback to the beginning, a rollback and a failed commit abort the
 * write transaction. */

/* A read inside the transaction of a key its buffer does not hold goes
 * to committed data, or through the write transaction once there is one:
 * on sqlite a lookup in a tree whose pages the write-outs changed, read
 * back from the WAL once they outgrew the page cache. The keys written out
 * are kept in a Bloom filter of constant size; a key it has never seen
 * reads committed data, which the write transaction leaves as it found it
 * (the writer lock keeps every other writer out), so the answer is the
 * same. Past some millions of keys the filter fills and more reads take
 * the longer way, never a wrong one. */
#define FILTER_WORDS  (4 * 1024 * 1024 / sizeof (guint64))
#define FILTER_PROBES 4

/* Two 64-bit FNV-1a hashes of the store's name and the key, combined into
 * FILTER_PROBES bit positions. */
static void
filter_hash (const char    *name,
             const guint8  *key,
             gsize          key_len,
             guint64       *h1,
             guint64       *h2)
{
  guint64 h = G_GUINT64_CONSTANT (0xcbf29ce484222325);

  for (const char *c = name; *c != '\0'; c++)
    h = (h ^ (guint8) *c) * G_GUINT64_CONSTANT (0x100000001b3);
  h = (h ^ 0xff) * G_GUINT64_CONSTANT (0x100000001b3);
  for (gsize i = 0; i < key_len; i++)
    h = (h ^ key[i]) * G_GUINT64_CONSTANT (0x100000001b3);
  *h1 = h;
  /* A second, odd, hash from the first one's mixed bits. */
  h ^= h >> 33;
  h *= G_GUINT64_CONSTANT (0xff51afd7ed558ccd);
  h ^= h >> 33;
  *h2 = h | 1;
}

static void
filter_add (QStoreCoordinator *self,
            const char        *name,
            const guint8      *key,
            gsize              key_len)
{
  guint64 h1, h2;

  if (self->spill_filter == NULL)
    self->spill_filter = g_new0 (guint64, FILTER_WORDS);
  filter_hash (name, key, key_len, &h1, &h2);
  for (guint i = 0; i < FILTER_PROBES; i++)
    {
      guint64 bit = (h1 + i * h2) % (FILTER_WORDS * 64);

      self->spill_filter[bit / 64] |= G_GUINT64_CONSTANT (1) << (bit % 64);
    }
}

gboolean
qstore_coordinator_spill_may_hold (QStoreCoordinator *self,
                                   QStoreKV          *store,
                                   const guint8      *key,
                                   gsize              key_len)
{
  guint64 h1, h2;

  if (self->spill_filter == NULL)
    return TRUE;
  filter_hash (qstore_kv_get_name (store), key, key_len, &h1, &h2);
  for (guint i = 0; i < FILTER_PROBES; i++)
    {
      guint64 bit = (h1 + i * h2) % (FILTER_WORDS * 64);

      if (!(self->spill_filter[bit / 64] & (G_GUINT64_CONSTANT (1) << (bit % 64))))
        return FALSE;
    }
  return TRUE;
}

/* Writes handed to the provider at a time: the buffer itself stays
 * whole until all went out, so the array of them need not be as large as
 * the buffer. */
#define SPILL_CHUNK 4096

/* The arena's blocks and the trees over them, counted as the bytes the
 * buffer holds. */
static void
note_buffer_size (QStoreCoordinator *self)
{
  gsize size = qstore_pending_get_size (self->pending);

  if (size > self->buffer_peak)
    self->buffer_peak = size;
}

static gboolean
may_spill (QStoreCoordinator *self)
{
  return self->in_tx && self->levels->len == 0 && self->live_iters == 0 &&
         self->pinned == NULL && self->spill_error == NULL && self->spill_writes > 0 &&
         !self->spill_refused &&
         (qstore_provider_get_capabilities (self->provider) & QSTORE_CAPABILITY_WRITE_TXN);
}

/* Hands the buffer's entries to @txn, store by store in key order and
 * SPILL_CHUNK at a time: each chunk goes while its entries are still in
 * the cache. A key longer than @max_key (0: any length) is refused with
 * the commit's message. @remember notes each key as written out (a
 * write-out, not a commit). */
static gboolean
write_buffer (QStoreCoordinator  *self,
              QStoreWriteTxn     *txn,
              gsize               max_key,
              gboolean            remember,
              GError            **error)
{
  g_autoptr(GArray) ops = g_array_sized_new (FALSE, FALSE, sizeof (QStoreWriteOp), SPILL_CHUNK);

  for (guint store = 0; store < qstore_pending_get_n_stores (self->pending); store++)
    {
      QStoreKV *kv = qstore_pending_store_get_kv (self->pending, store);
      const char *name = qstore_pending_store_get_name (self->pending, store);
      QStorePendingCursor cursor;
      gboolean more;

      for (more = qstore_pending_seek (self->pending, store, NULL, 0, TRUE, FALSE, &cursor);
           more;
           more = qstore_pending_cursor_step (&cursor, FALSE))
        {
          const guint8 *entry = qstore_pending_cursor_get_entry (&cursor);
          QStoreWriteOp op;

          qstore_coordinator_entry_op (kv, entry, &op);
          if (!qstore_coordinator_check_key_length (self, name, op.key_len, max_key, error))
            return FALSE;
          g_array_append_val (ops, op);
          if (remember)
            {
              filter_add (self, name, op.key, op.key_len);
              if (!g_hash_table_contains (self->spilled_stores, name))
                g_hash_table_add (self->spilled_stores, g_strdup (name));
            }
          if (ops->len == SPILL_CHUNK)
            {
              if (!qstore_write_txn_write (txn, (QStoreWriteOp *) ops->data, ops->len, error))
                return FALSE;
              g_array_set_size (ops, 0);
            }
        }
    }
  return ops->len == 0 || qstore_write_txn_write (txn, (QStoreWriteOp *) ops->data, ops->len, error);
}

/* Writes the buffer out into the write transaction and empties it. A key
 * the provider cannot store stays in the buffer, for the commit to refuse
 * with its message. */
static gboolean
spill (QStoreCoordinator  *self,
       GError            **error)
{
  gsize max_key = qstore_provider_get_max_key_length (self->provider);

  /* Nothing may go out when something cannot: the commit refuses the
   * transaction anyway, and with it all its writes. */
  for (guint store = 0; max_key != 0 && store < qstore_pending_get_n_stores (self->pending); store++)
    {
      QStorePendingCursor cursor;
      gboolean more;

      for (more = qstore_pending_seek (self->pending, store, NULL, 0, TRUE, FALSE, &cursor);
           more;
           more = qstore_pending_cursor_step (&cursor, FALSE))
        {
          gsize key_len;

          qstore_pending_entry_get_key (qstore_pending_cursor_get_entry (&cursor), &key_len);
          if (key_len > max_key)
            {
              /* Until the transaction ends: measuring again at every
               * look would read the whole buffer each time. */
              self->spill_refused = TRUE;
              return TRUE;
            }
        }
    }

  if (self->spill == NULL && !(self->spill = qstore_provider_begin_write (self->provider, error)))
    return FALSE;
  if (!write_buffer (self, self->spill, 0, TRUE, error))
    return FALSE;

  /* Nothing points into the buffer (no iterator is alive): its arena
   * goes, not only its trees. */
  qstore_pending_clear (self->pending);
  self->unspilled = 0;
  self->n_spills++;
  return TRUE;
}

void
qstore_coordinator_try_spill (QStoreCoordinator *self)
{
  GError *local_error = NULL;

  if (self->unspilled < self->spill_writes || self->spill_writes == 0)
    return;
  if (!may_spill (self))
    {
      /* Inside a statement, or under an iterator: the buffer grows until
       * it ends. */
      if (self->unspilled % 1024 == 0)
        note_buffer_size (self);
      return;
    }
  note_buffer_size (self);
  self->unspilled = 0;
  if (qstore_pending_get_size (self->pending) < self->spill_bytes)
    return;
  if (!spill (self, &local_error))
    {
      /* Writes that went out are lost with the write transaction: the
       * transaction cannot commit, and its reads fail from now on rather
       * than miss them. */
      g_clear_object (&self->spill);
      self->spill_error = local_error;
    }
}

void
qstore_coordinator_spill_abort (QStoreCoordinator *self)
{
  note_buffer_size (self);
  if (self->spill != NULL)
    qstore_write_txn_abort (self->spill);
  g_clear_object (&self->spill);
  g_clear_error (&self->spill_error);
  g_hash_table_remove_all (self->spilled_stores);
  self->unspilled = 0;
  self->spill_refused = FALSE;
  g_clear_pointer (&self->spill_filter, g_free);
}

gboolean
qstore_coordinator_spill_check (QStoreCoordinator  *self,
                                GError            **error)
{
  if (G_LIKELY (self->spill_error == NULL))
    return TRUE;
  if (error != NULL)
    *error = g_error_copy (self->spill_error);
  return FALSE;
}

gboolean
qstore_coordinator_writes_out (QStoreCoordinator *self)
{
  return self->spill != NULL;
}

gboolean
qstore_coordinator_spill_commit (QStoreCoordinator    *self,
                                 const char * const   *drop,
                                 GError              **error)
{
  g_autoptr(QStoreWriteTxn) txn = g_steal_pointer (&self->spill);

  if (txn == NULL && !(txn = qstore_provider_begin_write (self->provider, error)))
    return FALSE;
  /* A restructure erases first, then writes the transaction's writes: the
   * written-out ones came earlier, so a store that received some of them
   * cannot also be erased in this commit. */
  for (guint i = 0; drop != NULL && drop[i] != NULL; i++)
    {
      if (g_hash_table_contains (self->spilled_stores, drop[i]))
        {
          g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_UNSUPPORTED,
                       _("The transaction wrote to store “%s” and erases it in the same "
                       "commit, after more writes than it keeps in memory: commit the "
                       "writes first"), drop[i]);
          qstore_write_txn_abort (txn);
          return FALSE;
        }
    }
  if (drop != NULL && drop[0] != NULL && !qstore_write_txn_drop_stores (txn, drop, error))
    return FALSE;
  if (!write_buffer (self, txn, qstore_provider_get_max_key_length (self->provider), FALSE,
                     error))
    {
      qstore_write_txn_abort (txn);
      return FALSE;
    }
  return qstore_write_txn_commit (txn, QSTORE_WRITE_SYNC, error);
}

/* "65536 bytes (64.0 KiB)" */
static char *
size_text (guint64 n_bytes)
{
  g_autofree char *number = g_strdup_printf ("%" G_GUINT64_FORMAT, n_bytes);
  g_autofree char *size = g_format_size_full (n_bytes, G_FORMAT_SIZE_IEC_UNITS);

  return g_strdup_printf (_("%s bytes (%s)"), number, size);
}

/**
 * qstore_coordinator_get_write_out_step:
 * @self: a #QStoreCoordinator
 *
 * Gets the write-out step: see [method@Coordinator.set_write_out_step].
 *
 * Returns: the step in bytes
 */
guint64
qstore_coordinator_get_write_out_step (QStoreCoordinator *self)
{
  g_return_val_if_fail (QSTORE_IS_COORDINATOR (self), 0);

  return self->spill_bytes;
}

/**
 * qstore_coordinator_set_write_out_step:
 * @self: a #QStoreCoordinator
 * @n_bytes: the bytes a transaction's buffer holds before it is written
 *   out, from 64 KiB (65536) to 1 TiB
 * @error: return location for a #GError
 *
 * Sets how much of a transaction the writer keeps in memory. On a
 * provider with write transactions (%QSTORE_CAPABILITY_WRITE_TXN) the
 * buffer of an open transaction goes into the provider's own write
 * transaction, which nobody sees before the commit, whenever it holds as
 * many bytes as @n_bytes says, so the buffer stays near that however much
 * the transaction writes. The default, 64 MiB, costs nothing to a
 * transaction that fits in it; a smaller step bounds the writer's memory
 * tighter, but each write-out of random keys rewrites pages all over the
 * provider's B-tree, so a large load of them takes longer.
 *
 * The step takes effect at once, in an open transaction too: its buffer
 * is measured against the new step at the next look, which comes every
 * 1,024 writes. It belongs to this coordinator and is not stored.
 * Without write transactions the provider keeps a transaction in memory
 * whole, whatever the step.
 *
 * Returns: %TRUE, or %FALSE with %QSTORE_ERROR_INVALID_ARGUMENT when
 *   @n_bytes is out of range; the step is then unchanged
 */
gboolean
qstore_coordinator_set_write_out_step (QStoreCoordinator  *self,
                                       guint64             n_bytes,
                                       GError            **error)
{
  g_return_val_if_fail (QSTORE_IS_COORDINATOR (self), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (n_bytes < QSTORE_COORDINATOR_SPILL_BYTES_MIN || n_bytes > QSTORE_COORDINATOR_SPILL_BYTES_MAX)
    {
      g_autofree char *min = size_text (QSTORE_COORDINATOR_SPILL_BYTES_MIN);
      g_autofree char *max = size_text (QSTORE_COORDINATOR_SPILL_BYTES_MAX);
      g_autofree char *fallback = size_text (QSTORE_COORDINATOR_SPILL_BYTES);

      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                   _("The write-out step, the bytes a transaction's buffer holds before "
                   "it goes into the provider's write transaction, must be from %s to %s; "
                   "the default is %s"),
                   min, max, fallback);
      return FALSE;
    }
  self->spill_bytes = n_bytes;
  return TRUE;
}

/**
 * qstore_coordinator_test_get_buffer_peak: (skip)
 * @self: a #QStoreCoordinator
 *
 * For tests: the most bytes the transaction's write buffer held in the
 * transaction that is open, or else the last one.
 *
 * Returns: a size in bytes
 */
gsize
qstore_coordinator_test_get_buffer_peak (QStoreCoordinator *self)
{
  g_return_val_if_fail (QSTORE_IS_COORDINATOR (self), 0);

  note_buffer_size (self);
  return self->buffer_peak;
}

/**
 * qstore_coordinator_test_set_spill_writes: (skip)
 * @self: a #QStoreCoordinator
 * @n_writes: writes between two looks at the buffer's size, 0 for never
 *   writing out
 *
 * For tests: how often the buffer is measured against the write-out
 * step.
 */
void
qstore_coordinator_test_set_spill_writes (QStoreCoordinator *self,
                                          guint              n_writes)
{
  g_return_if_fail (QSTORE_IS_COORDINATOR (self));

  self->spill_writes = n_writes;
}

/**
 * qstore_coordinator_test_set_spill_bytes: (skip)
 * @self: a #QStoreCoordinator
 * @n_bytes: bytes the buffer holds before it is written out, 0 for at
 *   every look
 *
 * For tests: a write-out step below the range of
 * qstore_coordinator_set_write_out_step(), for a write-out at every look
 * however few bytes a test's writes take.
 */
void
qstore_coordinator_test_set_spill_bytes (QStoreCoordinator *self,
                                         guint64            n_bytes)
{
  g_return_if_fail (QSTORE_IS_COORDINATOR (self));

  self->spill_bytes = n_bytes;
}

/**
 * qstore_coordinator_test_get_n_spills: (skip)
 * @self: a #QStoreCoordinator
 *
 * For tests: how many times this coordinator wrote its buffer out.
 *
 * Returns: the count
 */
guint
qstore_coordinator_test_get_n_spills (QStoreCoordinator *self)
{
  g_return_val_if_fail (QSTORE_IS_COORDINATOR (self), 0);

  return self->n_spills;
}
