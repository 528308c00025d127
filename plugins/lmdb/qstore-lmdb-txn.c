/* qstore-lmdb-txn.c: the LMDB provider's open write transactions
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * One LMDB write transaction held open across calls. LMDB keeps what it
 * changed in dirty pages and, past its limit of dirty pages, writes them
 * to free pages of the map, where no reader looks: the transaction's
 * memory is bounded by LMDB, not by what it writes. Readers keep their
 * snapshots (MVCC); nothing reaches a reader or survives a crash before
 * mdb_txn_commit() writes the meta page.
 */
#include "config.h"

#include "qstore-i18n-private.h"
#include "qstore-lmdb-txn.h"

struct _QStoreLmdbWriteTxn
{
  QStoreWriteTxn     parent_instance;

  QStoreProvider    *provider;
  QStoreLmdbHandle  *handle;    /* inside @provider */
  QStoreLmdbWrite    wt;        /* wt.txn is NULL once the transaction is over */
  QStoreLmdbReadTxn  rt;        /* the same transaction, for iterators' cursors */
};

G_DEFINE_DYNAMIC_TYPE (QStoreLmdbWriteTxn, qstore_lmdb_write_txn, QSTORE_TYPE_WRITE_TXN)

static gboolean
check_live (QStoreLmdbWriteTxn  *self,
            GError             **error)
{
  if (G_LIKELY (self->wt.txn != NULL))
    return TRUE;
  qstore_lmdb_set_closed_error (error, self->handle->env->path);
  return FALSE;
}

/* Ends the transaction: commits it when @commit, else aborts it. Cursors
 * of iterators still alive are closed first; those iterators then report
 * the transaction closed. */
static gboolean
txn_end (QStoreLmdbWriteTxn  *self,
         gboolean             commit,
         QStoreWriteFlags     flags,
         GError             **error)
{
  QStoreLmdbEnv *env = self->handle->env;
  int rc = MDB_SUCCESS;

  if (self->wt.txn == NULL)
    return check_live (self, error);

  g_mutex_lock (&env->lock);
  for (GSList *l = self->rt.cursors; l != NULL; l = l->next)
    mdb_cursor_close (l->data);
  g_clear_pointer (&self->rt.cursors, g_slist_free);
  self->rt.txn = NULL;
  g_mutex_unlock (&env->lock);

  if (commit)
    rc = qstore_lmdb_write_commit (&self->wt, flags, error);
  if (!commit || rc != MDB_SUCCESS)
    qstore_lmdb_write_abort (&self->wt);
  self->wt.txn = NULL;
  self->handle->write_txn = NULL;
  g_mutex_unlock (&env->write_lock);
  return rc == MDB_SUCCESS;
}

static gboolean
qstore_lmdb_write_txn_lookup (QStoreSnapshot  *snapshot,
                              QStoreKV        *store,
                              const guint8    *key,
                              gsize            key_len,
                              const guint8   **value,
                              gsize           *value_len,
                              GError         **error)
{
  QStoreLmdbWriteTxn *self = (QStoreLmdbWriteTxn *) snapshot;
  QStoreLmdbKV *kv = (QStoreLmdbKV *) store;
  MDB_val k = { key_len, (void *) key };
  MDB_val v;
  MDB_dbi dbi;
  gboolean found;
  int rc;

  if (!check_live (self, error))
    return FALSE;
  rc = qstore_lmdb_write_resolve (&self->wt, kv->name, kv, FALSE, &dbi, &found);
  if (rc == MDB_SUCCESS && !found)
    return FALSE;
  if (rc == MDB_SUCCESS)
    rc = mdb_get (self->wt.txn, dbi, &k, &v);
  if (G_LIKELY (rc == MDB_SUCCESS))
    {
      /* Valid until the transaction changes the page it lies in: the
       * wrapper's contract (until the next lookup) is narrower than that
       * only when a write comes in between, which copies it anyway. */
      *value = v.mv_data;
      *value_len = v.mv_size;
      return TRUE;
    }
  if (rc != MDB_NOTFOUND)
    qstore_lmdb_set_error (error, self->handle->env->path, rc, "Could not read store “%s”",
                           kv->name);
  return FALSE;
}

static QStoreIter *
qstore_lmdb_write_txn_iterate (QStoreSnapshot      *snapshot,
                               QStoreKV            *store,
                               const QStoreBounds  *bounds,
                               GError             **error)
{
  QStoreLmdbWriteTxn *self = QSTORE_LMDB_WRITE_TXN (snapshot);
  QStoreLmdbKV *kv = QSTORE_LMDB_KV (store);
  MDB_dbi dbi = 0;
  gboolean found;
  int rc;

  if (!check_live (self, error))
    return NULL;
  rc = qstore_lmdb_write_resolve (&self->wt, kv->name, kv, FALSE, &dbi, &found);
  if (rc != MDB_SUCCESS)
    {
      qstore_lmdb_set_error (error, self->handle->env->path, rc, "Could not iterate store “%s”",
                             kv->name);
      return NULL;
    }
  return qstore_lmdb_iter_new (self->provider, self->handle, G_OBJECT (self), &self->rt,
                               found, dbi, kv->name, bounds, error);
}

static gboolean
qstore_lmdb_write_txn_write (QStoreWriteTxn       *txn,
                             const QStoreWriteOp  *ops,
                             gsize                 n_ops,
                             GError              **error)
{
  QStoreLmdbWriteTxn *self = QSTORE_LMDB_WRITE_TXN (txn);
  int rc;

  if (!check_live (self, error))
    return FALSE;
  rc = qstore_lmdb_write_apply (&self->wt, ops, n_ops, error);
  if (rc == MDB_SUCCESS)
    return TRUE;
  /* A failed put leaves LMDB's transaction unusable; a fault leaves it
   * with some of @ops. Neither may commit. (MDB_MAP_FULL cannot grow the
   * map here as a one-shot write does: LMDB resizes only between
   * transactions, and this one holds writes nobody else has.) */
  if (rc == MDB_MAP_FULL)
    g_prefix_error (error, "%s", _("The transaction outgrew the LMDB map, which cannot grow "
                                   "while it is open, and was rolled back: "));
  txn_end (self, FALSE, 0, NULL);
  return FALSE;
}

static gboolean
qstore_lmdb_write_txn_drop (QStoreWriteTxn      *txn,
                            const char * const  *names,
                            GError             **error)
{
  QStoreLmdbWriteTxn *self = QSTORE_LMDB_WRITE_TXN (txn);

  if (!check_live (self, error))
    return FALSE;
  /* may_close is FALSE: readers may hold the handles, so the stores are
   * emptied and kept, as a restructure beside live readers does. */
  for (guint i = 0; names[i] != NULL; i++)
    {
      int rc = qstore_lmdb_write_drop (&self->wt, names[i]);

      if (rc != MDB_SUCCESS)
        {
          qstore_lmdb_set_error (error, self->handle->env->path, rc,
                                 "Could not drop store “%s”", names[i]);
          txn_end (self, FALSE, 0, NULL);
          return FALSE;
        }
    }
  return TRUE;
}

static gboolean
qstore_lmdb_write_txn_commit (QStoreWriteTxn    *txn,
                              QStoreWriteFlags   flags,
                              GError           **error)
{
  return txn_end (QSTORE_LMDB_WRITE_TXN (txn), TRUE, flags, error);
}

static void
qstore_lmdb_write_txn_abort (QStoreWriteTxn *txn)
{
  txn_end (QSTORE_LMDB_WRITE_TXN (txn), FALSE, 0, NULL);
}

static void
qstore_lmdb_write_txn_finalize (GObject *object)
{
  QStoreLmdbWriteTxn *self = QSTORE_LMDB_WRITE_TXN (object);

  /* The base class aborted it in dispose. */
  g_assert (self->wt.txn == NULL);
  g_clear_pointer (&self->wt.pending, g_ptr_array_unref);
  g_clear_object (&self->provider);

  G_OBJECT_CLASS (qstore_lmdb_write_txn_parent_class)->finalize (object);
}

static void
qstore_lmdb_write_txn_class_init (QStoreLmdbWriteTxnClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  QStoreSnapshotClass *snapshot_class = QSTORE_SNAPSHOT_CLASS (klass);
  QStoreWriteTxnClass *txn_class = QSTORE_WRITE_TXN_CLASS (klass);

  object_class->finalize = qstore_lmdb_write_txn_finalize;
  snapshot_class->lookup = qstore_lmdb_write_txn_lookup;
  snapshot_class->iterate = qstore_lmdb_write_txn_iterate;
  txn_class->write = qstore_lmdb_write_txn_write;
  txn_class->commit = qstore_lmdb_write_txn_commit;
  txn_class->abort = qstore_lmdb_write_txn_abort;
  txn_class->drop = qstore_lmdb_write_txn_drop;
}

static void
qstore_lmdb_write_txn_class_finalize (QStoreLmdbWriteTxnClass *klass)
{
}

static void
qstore_lmdb_write_txn_init (QStoreLmdbWriteTxn *self)
{
}

QStoreWriteTxn *
qstore_lmdb_write_txn_new (QStoreProvider    *provider,
                           QStoreLmdbHandle  *handle,
                           GError           **error)
{
  QStoreLmdbEnv *env = handle->env;
  QStoreLmdbWriteTxn *self;
  MDB_txn *txn = NULL;
  gboolean closed;
  int rc;

  g_mutex_lock (&env->write_lock);
  g_mutex_lock (&env->lock);
  closed = handle->closed;
  g_mutex_unlock (&env->lock);
  if (closed)
    {
      g_mutex_unlock (&env->write_lock);
      qstore_lmdb_set_closed_error (error, env->path);
      return NULL;
    }

  qstore_lmdb_env_make_room_locked (env);
  for (guint attempt = 0; ; attempt++)
    {
      rc = mdb_txn_begin (env->env, NULL, 0, &txn);
      if (rc != MDB_MAP_RESIZED || attempt >= QSTORE_LMDB_MAX_RETRIES)
        break;
      if (!qstore_lmdb_env_adopt_map_size_locked (env, FALSE, error))
        {
          g_mutex_unlock (&env->write_lock);
          return NULL;
        }
    }
  if (rc != MDB_SUCCESS)
    {
      g_mutex_unlock (&env->write_lock);
      qstore_lmdb_set_error (error, env->path, rc, "Could not start writing");
      return NULL;
    }

  self = g_object_new (QSTORE_TYPE_LMDB_WRITE_TXN, NULL);
  self->provider = g_object_ref (provider);
  self->handle = handle;
  self->wt.env = env;
  self->wt.txn = txn;
  self->wt.pending = g_ptr_array_new_with_free_func (qstore_lmdb_dbi_free);
  self->rt.txn = txn;
  handle->write_txn = self;
  return QSTORE_WRITE_TXN (self);
}

void
qstore_lmdb_write_txn_close (QStoreLmdbHandle *handle)
{
  if (handle->write_txn != NULL)
    txn_end (handle->write_txn, FALSE, 0, NULL);
}

void
qstore_lmdb_write_txn_register_type_in (GTypeModule *module)
{
  qstore_lmdb_write_txn_register_type (module);
}
