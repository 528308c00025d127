/* qstore-lmdb-store.c: stores, snapshots and iterators of the LMDB provider
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "qstore-i18n-private.h"
#include "qstore-lmdb-store.h"

struct _QStoreLmdbSnapshot
{
  QStoreSnapshot      parent_instance;

  QStoreProvider     *provider;
  QStoreLmdbHandle   *handle;    /* inside @provider */
  QStoreLmdbReadTxn  *rt;
};

struct _QStoreLmdbIter
{
  QStoreIter          parent_instance;

  QStoreProvider     *provider;
  QStoreLmdbHandle   *handle;    /* inside @provider */
  GObject            *owner;     /* the snapshot or write transaction iterated */
  QStoreLmdbReadTxn  *rt;        /* the owner's, or its own */
  gboolean            owns_rt;
  MDB_cursor         *cursor;    /* NULL when the store does not exist */
  MDB_val             key;
  MDB_val             value;
  gboolean            started;
  gboolean            reverse;
};

static void qstore_lmdb_kv_iface_init (QStoreKVInterface *iface);

G_DEFINE_DYNAMIC_TYPE_EXTENDED (QStoreLmdbKV, qstore_lmdb_kv, G_TYPE_OBJECT, 0,
                                G_IMPLEMENT_INTERFACE_DYNAMIC (QSTORE_TYPE_KV,
                                                               qstore_lmdb_kv_iface_init))

G_DEFINE_DYNAMIC_TYPE (QStoreLmdbSnapshot, qstore_lmdb_snapshot, QSTORE_TYPE_SNAPSHOT)

G_DEFINE_DYNAMIC_TYPE (QStoreLmdbIter, qstore_lmdb_iter, QSTORE_TYPE_ITER)

/* Stores */

QStoreLmdbDbi *
qstore_lmdb_kv_lookup_entry (QStoreLmdbKV *self)
{
  QStoreLmdbEnv *env = self->handle->env;
  QStoreLmdbDbi *entry;

  g_mutex_lock (&env->lock);
  entry = g_hash_table_lookup (env->dbis, self->name);
  g_atomic_pointer_set (&self->entry, entry);
  g_mutex_unlock (&env->lock);
  return entry;
}

/* Finds the handle @rt reads @kv through. FALSE means the store does not
 * exist for @rt, provided @rt is complete (see qstore_lmdb_read_check_complete()). */
static inline gboolean
kv_read_dbi (QStoreLmdbKV      *kv,
             QStoreLmdbReadTxn *rt,
             MDB_dbi           *dbi)
{
  QStoreLmdbDbi *entry = qstore_lmdb_kv_get_entry (kv);

  /* A handle published after @rt began belongs to a store created since. */
  if (entry == NULL || entry->epoch > rt->epoch)
    return FALSE;
  *dbi = entry->dbi;
  return TRUE;
}

/* The wrappers call these on every read: no type checks. */
static const char *
qstore_lmdb_kv_get_name (QStoreKV *store)
{
  return ((QStoreLmdbKV *) store)->name;
}

static QStoreProvider *
qstore_lmdb_kv_get_provider (QStoreKV *store)
{
  return ((QStoreLmdbKV *) store)->provider;
}

/* Reads @key into @into when given, else into a new *@bytes. Returns
 * whether it was found; %FALSE with @error set on failure. */
static gboolean
kv_read (QStoreLmdbKV  *self,
         const guint8  *key,
         gsize          key_len,
         GByteArray    *into,
         GBytes       **bytes,
         GError       **error)
{
  QStoreLmdbEnv *env = self->handle->env;

  for (guint attempt = 0; attempt < QSTORE_LMDB_MAX_RETRIES; attempt++)
    {
      QStoreLmdbReadTxn rt = { 0 };
      MDB_val k = { key_len, (void *) key };
      MDB_val v;
      gboolean found = FALSE, complete = TRUE;
      MDB_dbi dbi;
      int rc;

      if (!qstore_lmdb_read_begin (self->handle, &rt, FALSE, error))
        return FALSE;

      if (G_LIKELY (kv_read_dbi (self, &rt, &dbi)))
        {
          rc = mdb_get (rt.txn, dbi, &k, &v);
          if (rc == MDB_SUCCESS)
            {
              found = TRUE;
              if (into != NULL)
                {
                  g_byte_array_set_size (into, v.mv_size);
                  if (v.mv_size > 0)
                    memcpy (into->data, v.mv_data, v.mv_size);
                }
              else
                *bytes = g_bytes_new (v.mv_data, v.mv_size);
            }
          else if (rc == MDB_NOTFOUND)
            rc = MDB_SUCCESS;
        }
      else
        rc = qstore_lmdb_read_check_complete (env, &rt, &complete);

      qstore_lmdb_read_end (self->handle, &rt, FALSE);

      if (rc != MDB_SUCCESS)
        {
          qstore_lmdb_set_error (error, env->path, rc, "Could not read store “%s”", self->name);
          return FALSE;
        }
      if (complete)
        return found;
      /* The store may have been made by another process: look again. */
      if (!qstore_lmdb_env_refresh (env, error))
        return FALSE;
    }

  g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_BUSY,
               _("The stores of the LMDB store at “%s” keep changing under another "
               "process: try again"), env->path);
  return FALSE;
}

static GBytes *
qstore_lmdb_kv_get (QStoreKV      *store,
                    const guint8  *key,
                    gsize          key_len,
                    GError       **error)
{
  GBytes *value = NULL;

  kv_read ((QStoreLmdbKV *) store, key, key_len, NULL, &value, error);
  return value;
}

static gboolean
qstore_lmdb_kv_get_into (QStoreKV      *store,
                         const guint8  *key,
                         gsize          key_len,
                         GByteArray    *value,
                         GError       **error)
{
  return kv_read ((QStoreLmdbKV *) store, key, key_len, value, NULL, error);
}

QStoreIter *
qstore_lmdb_iter_new (QStoreProvider      *provider,
                      QStoreLmdbHandle    *handle,
                      GObject             *owner,
                      QStoreLmdbReadTxn   *rt,
                      gboolean             exists,
                      MDB_dbi              dbi,
                      const char          *name,
                      const QStoreBounds  *bounds,
                      GError             **error)
{
  g_autoptr(QStoreLmdbIter) self = NULL;
  QStoreLmdbEnv *env = handle->env;

  self = qstore_iter_new (QSTORE_TYPE_LMDB_ITER, bounds, provider);
  self->provider = g_object_ref (provider);
  self->handle = handle;
  self->reverse = qstore_bounds_get_reverse (bounds);
  self->rt = rt;
  if (owner != NULL)
    self->owner = g_object_ref (owner);
  else
    self->owns_rt = TRUE;

  /* A store that does not exist yields nothing: no cursor. */
  if (exists)
    {
      int rc = MDB_SUCCESS;
      gboolean closed;

      g_mutex_lock (&env->lock);
      closed = self->rt->txn == NULL;
      if (!closed)
        {
          rc = mdb_cursor_open (self->rt->txn, dbi, &self->cursor);
          if (rc == MDB_SUCCESS)
            self->rt->cursors = g_slist_prepend (self->rt->cursors, self->cursor);
          else
            self->cursor = NULL;
        }
      g_mutex_unlock (&env->lock);

      if (closed)
        {
          qstore_lmdb_set_closed_error (error, env->path);
          return NULL;
        }
      if (rc != MDB_SUCCESS)
        {
          qstore_lmdb_set_error (error, env->path, rc, "Could not iterate store “%s”", name);
          return NULL;
        }
    }

  return QSTORE_ITER (g_steal_pointer (&self));
}

static QStoreIter *
qstore_lmdb_kv_iterate (QStoreKV            *store,
                        const QStoreBounds  *bounds,
                        GError             **error)
{
  QStoreLmdbKV *self = QSTORE_LMDB_KV (store);
  QStoreLmdbReadTxn *rt;

  /* The iterator owns the transaction: finalizing it ends the transaction,
   * also when creating the iterator fails. */
  MDB_dbi dbi = 0;
  gboolean exists;

  rt = qstore_lmdb_read_begin_complete (self->handle, TRUE, error);
  if (rt == NULL)
    return NULL;
  exists = kv_read_dbi (self, rt, &dbi);
  return qstore_lmdb_iter_new (self->provider, self->handle, NULL, rt, exists, dbi,
                               self->name, bounds, error);
}

static void
qstore_lmdb_kv_finalize (GObject *object)
{
  QStoreLmdbKV *self = QSTORE_LMDB_KV (object);

  g_free (self->name);
  g_clear_object (&self->provider);

  G_OBJECT_CLASS (qstore_lmdb_kv_parent_class)->finalize (object);
}

static void
qstore_lmdb_kv_class_init (QStoreLmdbKVClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = qstore_lmdb_kv_finalize;
}

static void
qstore_lmdb_kv_class_finalize (QStoreLmdbKVClass *klass)
{
}

static void
qstore_lmdb_kv_init (QStoreLmdbKV *self)
{
}

static void
qstore_lmdb_kv_iface_init (QStoreKVInterface *iface)
{
  iface->get_name = qstore_lmdb_kv_get_name;
  iface->get_provider = qstore_lmdb_kv_get_provider;
  iface->get = qstore_lmdb_kv_get;
  iface->get_into = qstore_lmdb_kv_get_into;
  iface->iterate = qstore_lmdb_kv_iterate;
}

QStoreKV *
qstore_lmdb_kv_new (QStoreProvider   *provider,
                    QStoreLmdbHandle *handle,
                    const char       *name)
{
  QStoreLmdbKV *kv = g_object_new (QSTORE_TYPE_LMDB_KV, NULL);

  kv->provider = g_object_ref (provider);
  kv->handle = handle;
  kv->name = g_strdup (name);
  return QSTORE_KV (kv);
}

/* Iterators */

static int
qstore_lmdb_iter_position (QStoreLmdbIter *self)
{
  const QStoreBounds *bounds = qstore_iter_get_bounds (QSTORE_ITER (self));
  guint max_key = self->handle->env->max_key;
  const guint8 *bound;
  gsize bound_len;
  int rc;

  /* A bound longer than any stored key is cut to that length: the cut
   * bound orders the stored keys the same way, and the base class skips
   * whatever lands on the wrong side of the real bound. */
  if (!self->reverse)
    {
      bound = qstore_bounds_get_lower (bounds, &bound_len, NULL);
      if (bound != NULL && bound_len > 0)
        {
          self->key.mv_size = MIN (bound_len, max_key);
          self->key.mv_data = (void *) bound;
          rc = mdb_cursor_get (self->cursor, &self->key, &self->value, MDB_SET_RANGE);
        }
      else
        rc = mdb_cursor_get (self->cursor, &self->key, &self->value, MDB_FIRST);
    }
  else
    {
      bound = qstore_bounds_get_upper (bounds, &bound_len, NULL);
      if (bound == NULL)
        rc = mdb_cursor_get (self->cursor, &self->key, &self->value, MDB_LAST);
      else if (bound_len == 0)
        /* Every key is past an empty bound: the base class skips the
         * first one and the step back ends the range. */
        rc = mdb_cursor_get (self->cursor, &self->key, &self->value, MDB_FIRST);
      else
        {
          /* The first key at or after the bound; when it is past the
           * bound, the base class skips it and the next step goes back. */
          self->key.mv_size = MIN (bound_len, max_key);
          self->key.mv_data = (void *) bound;
          rc = mdb_cursor_get (self->cursor, &self->key, &self->value, MDB_SET_RANGE);
          if (rc == MDB_NOTFOUND)
            rc = mdb_cursor_get (self->cursor, &self->key, &self->value, MDB_LAST);
        }
    }
  return rc;
}

static gboolean
qstore_lmdb_iter_advance (QStoreIter  *iter,
                          GError     **error)
{
  QStoreLmdbIter *self = (QStoreLmdbIter *) iter;
  int rc;

  if (G_UNLIKELY (self->rt->txn == NULL))
    {
      qstore_lmdb_set_closed_error (error, self->handle->env->path);
      return FALSE;
    }
  if (self->cursor == NULL)
    return FALSE;

  if (G_LIKELY (self->started))
    rc = mdb_cursor_get (self->cursor, &self->key, &self->value,
                         self->reverse ? MDB_PREV : MDB_NEXT);
  else
    {
      self->started = TRUE;
      rc = qstore_lmdb_iter_position (self);
    }

  if (G_LIKELY (rc == MDB_SUCCESS))
    return TRUE;
  if (rc == MDB_NOTFOUND)
    return FALSE;
  qstore_lmdb_set_error (error, self->handle->env->path, rc, "Could not iterate");
  return FALSE;
}

/* The cursor stays in the read transaction it was opened in: a seek
 * reads the same state. */
static gboolean
qstore_lmdb_iter_restart (QStoreIter  *iter,
                          GError     **error)
{
  QStoreLmdbIter *self = (QStoreLmdbIter *) iter;

  self->started = FALSE;
  self->reverse = qstore_bounds_get_reverse (qstore_iter_get_bounds (iter));
  return TRUE;
}

static const guint8 *
qstore_lmdb_iter_peek_key (QStoreIter *iter,
                           gsize      *key_len)
{
  QStoreLmdbIter *self = (QStoreLmdbIter *) iter;

  *key_len = self->key.mv_size;
  return self->key.mv_data;
}

static const guint8 *
qstore_lmdb_iter_peek_value (QStoreIter *iter,
                             gsize      *value_len)
{
  QStoreLmdbIter *self = (QStoreLmdbIter *) iter;

  *value_len = self->value.mv_size;
  return self->value.mv_data;
}

static void
qstore_lmdb_iter_finalize (GObject *object)
{
  QStoreLmdbIter *self = QSTORE_LMDB_ITER (object);

  if (self->rt != NULL)
    {
      QStoreLmdbEnv *env = self->handle->env;

      g_mutex_lock (&env->lock);
      /* Closing the provider closed the cursor already. */
      if (self->cursor != NULL && self->rt->txn != NULL)
        {
          self->rt->cursors = g_slist_remove (self->rt->cursors, self->cursor);
          mdb_cursor_close (self->cursor);
        }
      self->cursor = NULL;
      g_mutex_unlock (&env->lock);

      if (self->owns_rt)
        {
          qstore_lmdb_read_end (self->handle, self->rt, TRUE);
          g_free (self->rt);
        }
      self->rt = NULL;
    }
  g_clear_object (&self->owner);
  g_clear_object (&self->provider);

  G_OBJECT_CLASS (qstore_lmdb_iter_parent_class)->finalize (object);
}

static void
qstore_lmdb_iter_class_init (QStoreLmdbIterClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  QStoreIterClass *iter_class = QSTORE_ITER_CLASS (klass);

  object_class->finalize = qstore_lmdb_iter_finalize;
  iter_class->advance = qstore_lmdb_iter_advance;
  iter_class->peek_key = qstore_lmdb_iter_peek_key;
  iter_class->peek_value = qstore_lmdb_iter_peek_value;
  iter_class->restart = qstore_lmdb_iter_restart;
}

static void
qstore_lmdb_iter_class_finalize (QStoreLmdbIterClass *klass)
{
}

static void
qstore_lmdb_iter_init (QStoreLmdbIter *self)
{
}

/* Snapshots */

static gboolean
qstore_lmdb_snapshot_lookup (QStoreSnapshot  *snapshot,
                             QStoreKV        *store,
                             const guint8    *key,
                             gsize            key_len,
                             const guint8   **value,
                             gsize           *value_len,
                             GError         **error)
{
  QStoreLmdbSnapshot *self = (QStoreLmdbSnapshot *) snapshot;
  /* The wrapper checked that @store belongs to this provider. */
  QStoreLmdbKV *kv = (QStoreLmdbKV *) store;
  MDB_val k = { key_len, (void *) key };
  MDB_val v;
  MDB_dbi dbi;
  int rc;

  if (G_UNLIKELY (self->rt->txn == NULL))
    {
      qstore_lmdb_set_closed_error (error, self->handle->env->path);
      return FALSE;
    }
  if (!kv_read_dbi (kv, self->rt, &dbi))
    return FALSE;

  rc = mdb_get (self->rt->txn, dbi, &k, &v);
  if (G_LIKELY (rc == MDB_SUCCESS))
    {
      /* LMDB's own memory, valid as long as the read transaction. */
      *value = v.mv_data;
      *value_len = v.mv_size;
      return TRUE;
    }
  if (rc != MDB_NOTFOUND)
    qstore_lmdb_set_error (error, self->handle->env->path, rc, "Could not read store “%s”", kv->name);
  return FALSE;
}

static QStoreIter *
qstore_lmdb_snapshot_iterate (QStoreSnapshot      *snapshot,
                              QStoreKV            *store,
                              const QStoreBounds  *bounds,
                              GError             **error)
{
  QStoreLmdbSnapshot *self = QSTORE_LMDB_SNAPSHOT (snapshot);
  QStoreLmdbKV *kv = QSTORE_LMDB_KV (store);
  MDB_dbi dbi = 0;
  gboolean exists;

  if (G_UNLIKELY (self->rt->txn == NULL))
    {
      qstore_lmdb_set_closed_error (error, self->handle->env->path);
      return NULL;
    }
  exists = kv_read_dbi (kv, self->rt, &dbi);
  return qstore_lmdb_iter_new (self->provider, self->handle, G_OBJECT (self), self->rt,
                               exists, dbi, kv->name, bounds, error);
}

static void
qstore_lmdb_snapshot_finalize (GObject *object)
{
  QStoreLmdbSnapshot *self = QSTORE_LMDB_SNAPSHOT (object);

  if (self->rt != NULL)
    {
      qstore_lmdb_read_end (self->handle, self->rt, TRUE);
      g_clear_pointer (&self->rt, g_free);
    }
  g_clear_object (&self->provider);

  G_OBJECT_CLASS (qstore_lmdb_snapshot_parent_class)->finalize (object);
}

static void
qstore_lmdb_snapshot_class_init (QStoreLmdbSnapshotClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  QStoreSnapshotClass *snapshot_class = QSTORE_SNAPSHOT_CLASS (klass);

  object_class->finalize = qstore_lmdb_snapshot_finalize;
  snapshot_class->lookup = qstore_lmdb_snapshot_lookup;
  snapshot_class->iterate = qstore_lmdb_snapshot_iterate;
}

static void
qstore_lmdb_snapshot_class_finalize (QStoreLmdbSnapshotClass *klass)
{
}

static void
qstore_lmdb_snapshot_init (QStoreLmdbSnapshot *self)
{
}

QStoreSnapshot *
qstore_lmdb_snapshot_new (QStoreProvider    *provider,
                          QStoreLmdbHandle  *handle,
                          GError           **error)
{
  QStoreLmdbSnapshot *snapshot;
  QStoreLmdbReadTxn *rt;

  rt = qstore_lmdb_read_begin_complete (handle, TRUE, error);
  if (rt == NULL)
    return NULL;

  snapshot = g_object_new (QSTORE_TYPE_LMDB_SNAPSHOT, NULL);
  snapshot->provider = g_object_ref (provider);
  snapshot->handle = handle;
  snapshot->rt = rt;
  return QSTORE_SNAPSHOT (snapshot);
}

void
qstore_lmdb_store_register_types (GTypeModule *module)
{
  qstore_lmdb_kv_register_type (module);
  qstore_lmdb_snapshot_register_type (module);
  qstore_lmdb_iter_register_type (module);
}
