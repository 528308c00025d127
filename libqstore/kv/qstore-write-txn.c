/* qstore-write-txn.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "qstore-error.h"
#include "qstore-i18n-private.h"
#include "qstore-kv-private.h"
#include "qstore-provider-state-private.h"
#include "qstore-snapshot-private.h"
#include "qstore-write-txn-private.h"

/**
 * QStoreWriteTxn:
 *
 * An open write transaction of a provider: the writes go into the
 * provider's own transaction as they are made, instead of waiting in the
 * caller's memory for a commit, and are stored all at once by
 * [method@WriteTxn.commit] or not at all. Memory stays bounded however
 * much the transaction writes: the provider spills what it holds to its
 * files, where nobody else sees it until the commit.
 *
 * Get one from [method@Provider.begin_write] (providers with
 * %QSTORE_CAPABILITY_WRITE_TXN). As a [class@Snapshot], it reads the
 * committed state as of its start with its own writes over it; readers
 * elsewhere (snapshots, stores, other processes) see none of its writes
 * until it commits, and a crash before the commit leaves none of them.
 *
 * While it is open, it is the only way to write to its provider: the
 * provider's other writes fail with %QSTORE_ERROR_BUSY. A transaction
 * belongs to the thread that began it: make every call on it, the last
 * unref included, from that thread. Dropping the last reference of an
 * open transaction aborts it; so does closing the provider.
 */

typedef struct
{
  gboolean open;
} QStoreWriteTxnPrivate;

G_DEFINE_ABSTRACT_TYPE_WITH_PRIVATE (QStoreWriteTxn, qstore_write_txn, QSTORE_TYPE_SNAPSHOT)

/* The transaction is over: the provider takes writes again. */
static void
write_txn_end (QStoreWriteTxn *self)
{
  QStoreWriteTxnPrivate *priv = qstore_write_txn_get_instance_private (self);
  QStoreProvider *provider = qstore_snapshot_get_provider (QSTORE_SNAPSHOT (self));

  priv->open = FALSE;
  if (provider != NULL)
    g_atomic_pointer_compare_and_exchange (&qstore_provider_get_state (provider)->write_txn,
                                           self, NULL);
}

static void
qstore_write_txn_dispose (GObject *object)
{
  qstore_write_txn_abort (QSTORE_WRITE_TXN (object));

  G_OBJECT_CLASS (qstore_write_txn_parent_class)->dispose (object);
}

static void
qstore_write_txn_class_init (QStoreWriteTxnClass *klass)
{
  G_OBJECT_CLASS (klass)->dispose = qstore_write_txn_dispose;
}

static void
qstore_write_txn_init (QStoreWriteTxn *self)
{
}

void
qstore_write_txn_set_provider (QStoreWriteTxn *self,
                               QStoreProvider *provider)
{
  QStoreWriteTxnPrivate *priv = qstore_write_txn_get_instance_private (self);

  qstore_snapshot_set_provider (QSTORE_SNAPSHOT (self), provider);
  priv->open = TRUE;
  g_atomic_pointer_set (&qstore_provider_get_state (provider)->write_txn, self);
}

static gboolean
check_open (QStoreWriteTxn  *self,
            GError         **error)
{
  QStoreWriteTxnPrivate *priv = qstore_write_txn_get_instance_private (self);
  QStoreProvider *provider = qstore_snapshot_get_provider (QSTORE_SNAPSHOT (self));

  if (!qstore_provider_check_open (provider, error))
    {
      /* Closing the provider ended the transaction. */
      write_txn_end (self);
      return FALSE;
    }
  if (G_UNLIKELY (!priv->open))
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_CLOSED,
                   _("The write transaction of the %s store at “%s” is over: begin "
                   "another one"),
                   qstore_provider_get_state (provider)->name,
                   qstore_provider_get_state (provider)->location);
      return FALSE;
    }
  return TRUE;
}

/**
 * qstore_write_txn_write: (skip)
 * @self: a #QStoreWriteTxn
 * @ops: (array length=n_ops): the writes, applied in order
 * @n_ops: the number of @ops
 * @error: return location for a #GError
 *
 * Applies @ops inside the transaction: its own reads see them at once,
 * nobody else's until it commits. Any failure aborts the whole
 * transaction, so that it can never commit with a write missing.
 *
 * Returns: %TRUE on success
 */
gboolean
qstore_write_txn_write (QStoreWriteTxn       *self,
                        const QStoreWriteOp  *ops,
                        gsize                 n_ops,
                        GError              **error)
{
  QStoreProvider *provider;
  gsize max_key;

  g_return_val_if_fail (QSTORE_IS_WRITE_TXN (self), FALSE);
  g_return_val_if_fail (ops != NULL || n_ops == 0, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (!check_open (self, error))
    return FALSE;
  if (n_ops == 0)
    return TRUE;

  provider = qstore_snapshot_get_provider (QSTORE_SNAPSHOT (self));
  max_key = qstore_provider_get_state (provider)->max_key_length;
  for (gsize i = 0; i < n_ops; i++)
    {
      const QStoreWriteOp *op = &ops[i];
      GError *local_error = NULL;

      if ((i == 0 || op->store != ops[i - 1].store) &&
          !qstore_kv_check_provider (op->store, provider, &local_error))
        ;
      else if (G_UNLIKELY (op->key_len == 0))
        g_set_error (&local_error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                     _("Empty key written to store “%s”: keys must not be empty"),
                     qstore_kv_get_name (op->store));
      else if (G_UNLIKELY (max_key != 0 && op->key_len > max_key))
        g_set_error (&local_error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                     "Key of %" G_GSIZE_FORMAT " bytes written to store “%s”: "
                     "provider “%s” stores keys of at most %" G_GSIZE_FORMAT " bytes",
                     op->key_len, qstore_kv_get_name (op->store),
                     qstore_provider_get_state (provider)->name, max_key);
      if (local_error != NULL)
        {
          qstore_write_txn_abort (self);
          g_propagate_error (error, local_error);
          return FALSE;
        }
    }

  if (!QSTORE_WRITE_TXN_GET_CLASS (self)->write (self, ops, n_ops, error))
    {
      /* The implementation aborted it. */
      write_txn_end (self);
      return FALSE;
    }
  return TRUE;
}

/**
 * qstore_write_txn_put:
 * @self: a #QStoreWriteTxn
 * @store: a store of the transaction's provider
 * @key: (array length=key_len): the key
 * @key_len: length of @key
 * @value: (array length=value_len): the value
 * @value_len: length of @value
 * @error: return location for a #GError
 *
 * Stores @value under @key inside the transaction, as
 * [method@WriteTxn.write] does with one put.
 *
 * Returns: %TRUE on success
 */
gboolean
qstore_write_txn_put (QStoreWriteTxn  *self,
                      QStoreKV        *store,
                      const guint8    *key,
                      gsize            key_len,
                      const guint8    *value,
                      gsize            value_len,
                      GError         **error)
{
  QStoreWriteOp op = { store, QSTORE_WRITE_OP_PUT, key, key_len, value, value_len };

  g_return_val_if_fail (QSTORE_IS_KV (store), FALSE);
  g_return_val_if_fail (key != NULL || key_len == 0, FALSE);
  g_return_val_if_fail (value != NULL || value_len == 0, FALSE);

  return qstore_write_txn_write (self, &op, 1, error);
}

/**
 * qstore_write_txn_delete:
 * @self: a #QStoreWriteTxn
 * @store: a store of the transaction's provider
 * @key: (array length=key_len): the key
 * @key_len: length of @key
 * @error: return location for a #GError
 *
 * Removes @key inside the transaction (an absent key is fine), as
 * [method@WriteTxn.write] does with one delete.
 *
 * Returns: %TRUE on success
 */
gboolean
qstore_write_txn_delete (QStoreWriteTxn  *self,
                         QStoreKV        *store,
                         const guint8    *key,
                         gsize            key_len,
                         GError         **error)
{
  QStoreWriteOp op = { store, QSTORE_WRITE_OP_DELETE, key, key_len, NULL, 0 };

  g_return_val_if_fail (QSTORE_IS_KV (store), FALSE);
  g_return_val_if_fail (key != NULL || key_len == 0, FALSE);

  return qstore_write_txn_write (self, &op, 1, error);
}

/**
 * qstore_write_txn_drop_stores:
 * @self: a #QStoreWriteTxn
 * @names: (array zero-terminated=1): physical names of the stores to erase
 * @error: return location for a #GError
 *
 * Erases the named stores inside the transaction: its own reads find them
 * empty at once, everybody else when it commits. Names that do not exist
 * are no-ops. A failure aborts the whole transaction.
 *
 * Returns: %TRUE on success
 */
gboolean
qstore_write_txn_drop_stores (QStoreWriteTxn      *self,
                              const char * const  *names,
                              GError             **error)
{
  g_return_val_if_fail (QSTORE_IS_WRITE_TXN (self), FALSE);
  g_return_val_if_fail (names != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (!check_open (self, error))
    return FALSE;
  if (names[0] == NULL)
    return TRUE;
  if (!QSTORE_WRITE_TXN_GET_CLASS (self)->drop (self, names, error))
    {
      write_txn_end (self);
      return FALSE;
    }
  return TRUE;
}

/**
 * qstore_write_txn_commit:
 * @self: a #QStoreWriteTxn
 * @flags: durability flags
 * @error: return location for a #GError
 *
 * Stores every write of the transaction at once. Whether it succeeds or
 * fails, the transaction is over; after a failure, none of its writes is
 * stored.
 *
 * Returns: %TRUE on success
 */
gboolean
qstore_write_txn_commit (QStoreWriteTxn    *self,
                         QStoreWriteFlags   flags,
                         GError           **error)
{
  gboolean ok;

  g_return_val_if_fail (QSTORE_IS_WRITE_TXN (self), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (!check_open (self, error))
    return FALSE;
  ok = QSTORE_WRITE_TXN_GET_CLASS (self)->commit (self, flags, error);
  write_txn_end (self);
  return ok;
}

/**
 * qstore_write_txn_abort:
 * @self: a #QStoreWriteTxn
 *
 * Ends the transaction without storing any of its writes. Aborting a
 * transaction that is over does nothing.
 */
void
qstore_write_txn_abort (QStoreWriteTxn *self)
{
  QStoreWriteTxnPrivate *priv = qstore_write_txn_get_instance_private (self);

  g_return_if_fail (QSTORE_IS_WRITE_TXN (self));

  if (!priv->open)
    return;
  QSTORE_WRITE_TXN_GET_CLASS (self)->abort (self);
  write_txn_end (self);
}

/**
 * qstore_write_txn_is_open:
 * @self: a #QStoreWriteTxn
 *
 * Tells whether the transaction still takes writes: %FALSE once it
 * committed, aborted, failed, or its provider closed.
 *
 * Returns: whether @self is open
 */
gboolean
qstore_write_txn_is_open (QStoreWriteTxn *self)
{
  QStoreWriteTxnPrivate *priv = qstore_write_txn_get_instance_private (self);

  g_return_val_if_fail (QSTORE_IS_WRITE_TXN (self), FALSE);

  return priv->open &&
    !qstore_provider_get_state (qstore_snapshot_get_provider (QSTORE_SNAPSHOT (self)))->closed;
}
