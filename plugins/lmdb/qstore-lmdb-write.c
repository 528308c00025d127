/* qstore-lmdb-write.c: write transactions of the LMDB provider, the
 * atomic batch among them
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "qstore-fault-private.h"
#include "qstore-i18n-private.h"
#include "qstore-lmdb-store.h"
#include "qstore-lmdb-write.h"

/* Finds the handle of store @name in the write transaction, creating the
 * store when @create. *found is FALSE when it does not exist. */
int
qstore_lmdb_write_resolve (QStoreLmdbWrite  *wt,
                           const char       *name,
                           QStoreLmdbKV     *kv,
                           gboolean          create,
                           MDB_dbi          *dbi,
                           gboolean         *found)
{
  QStoreLmdbEnv *env = wt->env;
  QStoreLmdbDbi *entry;
  int rc;

  /* write_lock is held: the published table cannot change under us, and
   * every published handle predates this transaction. */
  if (kv != NULL)
    entry = qstore_lmdb_kv_get_entry (kv);
  else
    {
      g_mutex_lock (&env->lock);
      entry = g_hash_table_lookup (env->dbis, name);
      g_mutex_unlock (&env->lock);
    }
  if (entry == NULL)
    {
      for (guint i = 0; i < wt->pending->len; i++)
        {
          QStoreLmdbDbi *p = g_ptr_array_index (wt->pending, i);

          if (g_str_equal (p->name, name))
            {
              entry = p;
              break;
            }
        }
    }
  if (entry != NULL)
    {
      *dbi = entry->dbi;
      *found = TRUE;
      return MDB_SUCCESS;
    }

  *found = FALSE;
  /* Neither can exist; the marker is not a store. */
  if (strlen (name) > env->max_key || g_str_equal (name, QSTORE_LMDB_MARKER_DBI_NAME))
    return create ? MDB_BAD_VALSIZE : MDB_SUCCESS;

  rc = mdb_dbi_open (wt->txn, name, 0, dbi);
  if (rc == MDB_NOTFOUND && create)
    {
      rc = mdb_dbi_open (wt->txn, name, MDB_CREATE, dbi);
      if (rc == MDB_SUCCESS)
        wt->set_changed = TRUE;
    }
  if (rc == MDB_NOTFOUND)
    return MDB_SUCCESS;
  if (rc != MDB_SUCCESS)
    return rc;

  g_ptr_array_add (wt->pending, qstore_lmdb_dbi_new (name, *dbi));
  *found = TRUE;
  return MDB_SUCCESS;
}

int
qstore_lmdb_write_drop (QStoreLmdbWrite *wt,
                        const char      *name)
{
  QStoreLmdbEnv *env = wt->env;
  QStoreLmdbDbi *entry;
  gboolean found;
  MDB_dbi dbi;
  int rc;

  rc = qstore_lmdb_write_resolve (wt, name, NULL, FALSE, &dbi, &found);
  if (rc != MDB_SUCCESS || !found)
    return rc;

  /* Readers may hold the handle: empty the store and keep it. */
  if (!wt->may_close)
    return mdb_drop (wt->txn, dbi, 0);

  rc = mdb_drop (wt->txn, dbi, 1);
  if (rc != MDB_SUCCESS)
    return rc;

  /* LMDB closed the handle, whatever becomes of the transaction. */
  wt->set_changed = TRUE;
  wt->hard_dropped = TRUE;
  for (guint i = 0; i < wt->pending->len; i++)
    {
      QStoreLmdbDbi *p = g_ptr_array_index (wt->pending, i);

      if (p->dbi == dbi)
        {
          g_ptr_array_remove_index_fast (wt->pending, i);
          return MDB_SUCCESS;
        }
    }

  /* No reader is live (may_close): stores that still point at the entry
   * see it dropped and look the name up again. */
  g_mutex_lock (&env->lock);
  entry = g_hash_table_lookup (env->dbis, name);
  g_assert (entry != NULL && entry->dbi == dbi);
  g_hash_table_steal (env->dbis, name);
  g_atomic_int_set (&entry->dropped, TRUE);
  g_ptr_array_add (env->retired, entry);
  g_mutex_unlock (&env->lock);
  return MDB_SUCCESS;
}

static int
write_rename (QStoreLmdbWrite    *wt,
              const char  *from,
              const char  *to,
              GError     **error)
{
  MDB_dbi from_dbi, to_dbi;
  gboolean from_found, to_found;
  MDB_cursor *cursor;
  MDB_val key, value;
  int rc;

  if (g_str_equal (from, to))
    return MDB_SUCCESS;

  rc = qstore_lmdb_write_resolve (wt, to, NULL, FALSE, &to_dbi, &to_found);
  if (rc == MDB_SUCCESS && to_found)
    {
      MDB_stat st;

      rc = mdb_stat (wt->txn, to_dbi, &st);
      if (rc == MDB_SUCCESS && st.ms_entries > 0)
        {
          g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_EXISTS,
                       _("Cannot move store “%s” to “%s” in the LMDB store at “%s”: "
                       "“%s” holds entries; drop it first"),
                       from, to, wt->env->path, to);
          return QSTORE_LMDB_RC_ERROR;
        }
    }
  if (rc == MDB_SUCCESS)
    rc = qstore_lmdb_write_resolve (wt, from, NULL, FALSE, &from_dbi, &from_found);
  if (rc != MDB_SUCCESS || !from_found)
    return rc;

  rc = qstore_lmdb_write_resolve (wt, to, NULL, TRUE, &to_dbi, &to_found);
  if (rc != MDB_SUCCESS)
    return rc;

  rc = mdb_cursor_open (wt->txn, from_dbi, &cursor);
  if (rc != MDB_SUCCESS)
    return rc;
  for (rc = mdb_cursor_get (cursor, &key, &value, MDB_FIRST);
       rc == MDB_SUCCESS;
       rc = mdb_cursor_get (cursor, &key, &value, MDB_NEXT))
    {
      /* The destination is empty and keys come in order. */
      rc = mdb_put (wt->txn, to_dbi, &key, &value, MDB_APPEND);
      if (rc != MDB_SUCCESS)
        break;
    }
  mdb_cursor_close (cursor);
  if (rc != MDB_NOTFOUND)
    return rc;

  return qstore_lmdb_write_drop (wt, from);
}

/* The store a run of ops writes to, and the cursor that ops in key order
 * (a commit's are) go through: it searches only its current leaf when
 * the next key falls there, skipping most of the descent. An op whose
 * key does not follow the previous one's searches from the root, as the
 * cursor's look at its leaf first would only cost it more. */
typedef struct
{
  QStoreKV   *store;
  MDB_dbi     dbi;
  MDB_cursor *cursor;
  gboolean    exists;
  MDB_val     prev;      /* the previous op's key, the caller's bytes */
} Run;

static void
run_end (Run *run)
{
  g_clear_pointer (&run->cursor, mdb_cursor_close);
  run->store = NULL;
}

static int
run_begin (QStoreLmdbWrite *wt,
           Run             *run,
           QStoreLmdbKV    *kv,
           gboolean         create)
{
  MDB_dbi dbi;
  int rc;

  run_end (run);
  /* Only found handles are cached: another handle on the same store may
   * create it later in the transaction. */
  if (kv->write_serial == wt->serial)
    {
      dbi = kv->write_dbi;
      run->exists = TRUE;
    }
  else
    {
      rc = qstore_lmdb_write_resolve (wt, kv->name, kv, create, &dbi, &run->exists);
      if (rc != MDB_SUCCESS)
        return rc;
      if (run->exists)
        {
          kv->write_serial = wt->serial;
          kv->write_dbi = dbi;
        }
    }
  run->store = (QStoreKV *) kv;
  run->dbi = dbi;
  run->prev.mv_data = NULL;
  return run->exists ? mdb_cursor_open (wt->txn, dbi, &run->cursor) : MDB_SUCCESS;
}

/* Whether @key follows the previous op's, or opens the run. */
static gboolean
run_in_order (QStoreLmdbWrite *wt,
              Run             *run,
              MDB_val         *key)
{
  gboolean in_order = run->prev.mv_data == NULL ||
                      mdb_cmp (wt->txn, run->dbi, key, &run->prev) > 0;

  run->prev = *key;
  return in_order;
}

int
qstore_lmdb_write_apply (QStoreLmdbWrite      *wt,
                         const QStoreWriteOp  *ops,
                         gsize                 n_ops,
                         GError              **error)
{
  Run run = { NULL, };
  int rc = MDB_SUCCESS;

  /* A fresh serial: handles cached before drops and renames are stale. */
  wt->serial = ++wt->env->write_serial;

  for (gsize i = 0; i < n_ops; i++)
    {
      const QStoreWriteOp *op = &ops[i];
      QStoreLmdbKV *kv = (QStoreLmdbKV *) op->store;
      MDB_val key = { op->key_len, (void *) op->key };
      MDB_val value = { op->value_len, (void *) op->value };
      gboolean put = op->kind == QSTORE_WRITE_OP_PUT;

      if (!_qstore_fault_check (QSTORE_FAULT_WRITE_OP, error))
        {
          rc = QSTORE_LMDB_RC_ERROR;
          break;
        }

      /* A put to a store that does not exist yet creates it. */
      if (op->store != run.store || (put && !run.exists))
        rc = run_begin (wt, &run, kv, put);

      if (rc != MDB_SUCCESS || !run.exists)
        ;
      else if (put)
        {
          if (G_UNLIKELY (op->value_len > QSTORE_LMDB_MAX_VALUE_SIZE))
            {
              g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                           "Value of %" G_GSIZE_FORMAT " bytes written to store “%s”: "
                           "LMDB stores values of at most %" G_GSIZE_FORMAT " bytes",
                           op->value_len, kv->name, QSTORE_LMDB_MAX_VALUE_SIZE);
              rc = QSTORE_LMDB_RC_ERROR;
              break;
            }
          if (run_in_order (wt, &run, &key))
            rc = mdb_cursor_put (run.cursor, &key, &value, 0);
          else
            rc = mdb_put (wt->txn, run.dbi, &key, &value, 0);
        }
      else
        {
          if (!run_in_order (wt, &run, &key))
            rc = mdb_del (wt->txn, run.dbi, &key, NULL);
          else if ((rc = mdb_cursor_get (run.cursor, &key, NULL, MDB_SET)) == MDB_SUCCESS)
            rc = mdb_cursor_del (run.cursor, 0);
          if (rc == MDB_NOTFOUND)
            rc = MDB_SUCCESS;
        }

      if (G_UNLIKELY (rc != MDB_SUCCESS))
        {
          qstore_lmdb_set_error (error, wt->env->path, rc, "Could not write to store “%s”", kv->name);
          break;
        }
    }
  run_end (&run);
  return rc;
}

int
qstore_lmdb_write_commit (QStoreLmdbWrite   *wt,
                          QStoreWriteFlags   flags,
                          GError           **error)
{
  QStoreLmdbEnv *env = wt->env;
  gboolean publish = wt->pending->len > 0 || wt->set_changed;
  gboolean sync = (flags & QSTORE_WRITE_SYNC) != 0;
  guint64 old_gen = 0;
  int rc;

  /* Readers in other processes learn from the generation that the set of
   * stores changed. */
  if (wt->set_changed)
    {
      rc = qstore_lmdb_read_generation (wt->txn, env->marker_dbi, &old_gen);
      if (rc == MDB_SUCCESS)
        rc = qstore_lmdb_write_generation (wt->txn, env->marker_dbi, old_gen + 1);
      if (rc != MDB_SUCCESS)
        {
          qstore_lmdb_set_error (error, env->path, rc, "Could not record the change of stores");
          return rc;
        }
    }

  /* New handles become usable process-wide at commit: readers that began
   * before must not see them, readers that begin after must. */
  if (publish && !wt->may_close)
    {
      g_mutex_lock (&env->lock);
      env->barrier = TRUE;
      g_mutex_unlock (&env->lock);
    }

  /* Without SYNC, skip the sync of the meta page only: the data pages are
   * still synced, so a crash may lose this commit but never corrupts
   * (unlike MDB_NOSYNC). */
  if (!sync)
    mdb_env_set_flags (env->env, MDB_NOMETASYNC, 1);
  rc = mdb_txn_commit (wt->txn);
  if (!sync)
    mdb_env_set_flags (env->env, MDB_NOMETASYNC, 0);
  /* Committed, or aborted by LMDB. */
  wt->txn = NULL;
  if (rc == MDB_SUCCESS)
    {
      g_mutex_lock (&env->lock);
      qstore_lmdb_env_forget_live_locked (env);
      g_mutex_unlock (&env->lock);
    }

  if (publish)
    {
      g_mutex_lock (&env->lock);
      if (rc == MDB_SUCCESS)
        {
          env->epoch++;
          for (guint i = 0; i < wt->pending->len; i++)
            {
              QStoreLmdbDbi *entry = g_ptr_array_index (wt->pending, i);

              entry->epoch = env->epoch;
              g_hash_table_replace (env->dbis, entry->name, entry);
            }
          g_ptr_array_set_free_func (wt->pending, NULL);
          g_ptr_array_set_size (wt->pending, 0);
          g_ptr_array_set_free_func (wt->pending, qstore_lmdb_dbi_free);

          if (wt->set_changed && env->known_gen_valid && env->known_gen == old_gen)
            env->known_gen = old_gen + 1;
        }
      if (!wt->may_close)
        qstore_lmdb_env_lift_barrier_locked (env);
      g_mutex_unlock (&env->lock);
    }

  if (rc != MDB_SUCCESS)
    qstore_lmdb_set_error (error, env->path, rc, "Could not commit");
  return rc;
}

void
qstore_lmdb_write_abort (QStoreLmdbWrite *wt)
{
  QStoreLmdbEnv *env = wt->env;

  if (wt->txn != NULL)
    mdb_txn_abort (wt->txn);
  wt->txn = NULL;
  /* Aborting closed the handles the transaction opened. */
  g_ptr_array_set_size (wt->pending, 0);

  if (wt->hard_dropped)
    {
      /* The stores whose handles were closed still exist: have the next
       * reader rescan. */
      g_mutex_lock (&env->lock);
      env->known_gen_valid = FALSE;
      g_mutex_unlock (&env->lock);
    }
  wt->set_changed = FALSE;
  wt->hard_dropped = FALSE;
}

gboolean
qstore_lmdb_write (QStoreLmdbHandle     *self,
                   const char * const   *drop,
                   const char * const   *rename_from,
                   const char * const   *rename_to,
                   const QStoreWriteOp  *ops,
                   gsize                 n_ops,
                   QStoreWriteFlags      flags,
                   GError              **error)
{
  QStoreLmdbEnv *env = self->env;
  QStoreLmdbWrite wt = { 0 };
  gboolean closed;
  gboolean ok = FALSE;

  wt.env = env;
  wt.pending = g_ptr_array_new_with_free_func (qstore_lmdb_dbi_free);

  g_mutex_lock (&env->write_lock);

  g_mutex_lock (&env->lock);
  closed = self->closed;
  g_mutex_unlock (&env->lock);
  if (closed)
    {
      g_mutex_unlock (&env->write_lock);
      g_ptr_array_unref (wt.pending);
      qstore_lmdb_set_closed_error (error, env->path);
      return FALSE;
    }

  /* Closing handles is only safe while no reader of this process is live;
   * the barrier keeps new ones out until the restructure is over. */
  if ((drop != NULL && drop[0] != NULL) || (rename_from != NULL && rename_from[0] != NULL))
    {
      g_mutex_lock (&env->lock);
      if (env->n_held == 0)
        {
          env->barrier = TRUE;
          while (env->n_transient > 0)
            g_cond_wait (&env->cond, &env->lock);
          qstore_lmdb_env_forget_live_locked (env);
          wt.may_close = TRUE;
        }
      g_mutex_unlock (&env->lock);
    }

  for (guint attempt = 0; ; attempt++)
    {
      g_autoptr(GError) local_error = NULL;
      int rc;

      rc = mdb_txn_begin (env->env, NULL, 0, &wt.txn);
      if (rc != MDB_SUCCESS)
        {
          wt.txn = NULL;
          qstore_lmdb_set_error (&local_error, env->path, rc, "Could not start writing");
        }

      for (guint i = 0; rc == MDB_SUCCESS && drop != NULL && drop[i] != NULL; i++)
        {
          rc = qstore_lmdb_write_drop (&wt, drop[i]);
          if (rc != MDB_SUCCESS)
            qstore_lmdb_set_error (&local_error, env->path, rc, "Could not drop store “%s”", drop[i]);
        }
      for (guint i = 0;
           rc == MDB_SUCCESS && rename_from != NULL && rename_from[i] != NULL && rename_to[i] != NULL;
           i++)
        {
          rc = write_rename (&wt, rename_from[i], rename_to[i], &local_error);
          if (rc != MDB_SUCCESS && rc != QSTORE_LMDB_RC_ERROR)
            qstore_lmdb_set_error (&local_error, env->path, rc, "Could not move store “%s” to “%s”",
                           rename_from[i], rename_to[i]);
        }
      if (rc == MDB_SUCCESS)
        rc = qstore_lmdb_write_apply (&wt, ops, n_ops, &local_error);
      if (rc == MDB_SUCCESS)
        rc = qstore_lmdb_write_commit (&wt, flags, &local_error);

      if (rc == MDB_SUCCESS)
        {
          ok = TRUE;
          break;
        }
      qstore_lmdb_write_abort (&wt);

      if (rc == MDB_MAP_FULL && attempt < 64)
        {
          if (!qstore_lmdb_env_grow_map_locked (env, wt.may_close, error))
            break;
          continue;
        }
      if (rc == MDB_MAP_RESIZED && attempt < QSTORE_LMDB_MAX_RETRIES)
        {
          if (!qstore_lmdb_env_adopt_map_size_locked (env, wt.may_close, error))
            break;
          continue;
        }
      g_propagate_error (error, g_steal_pointer (&local_error));
      break;
    }

  if (wt.may_close)
    {
      g_mutex_lock (&env->lock);
      qstore_lmdb_env_lift_barrier_locked (env);
      g_mutex_unlock (&env->lock);
    }
  g_mutex_unlock (&env->write_lock);

  g_ptr_array_unref (wt.pending);
  return ok;
}

