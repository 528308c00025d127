/* qstore-lmdb-read.c: read transactions of the LMDB provider
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "qstore-i18n-private.h"
#include "qstore-lmdb-read.h"

/* Read transactions kept begun. A renewed transaction looks up the record
 * of every named database it touches again (a search of LMDB's main
 * tree), so a point read in a fresh one costs two searches. The writer
 * keeps ended ones begun: while the last commit is the one a kept
 * transaction sees and no handle was published since, it reads what a
 * new one would. Only the writer keeps them, and it resets them when it
 * commits, so they never hold pages back from reuse: nobody else
 * commits, and a reader process's kept transaction could. */

/* With env->lock held: a kept transaction ready to read the current
 * state, or NULL. */
static MDB_txn *
take_live_locked (QStoreLmdbEnv *env)
{
  QStoreLmdbLive kept;
  MDB_envinfo info;

  if (env->n_live == 0)
    return NULL;
  kept = env->live[--env->n_live];
  if (kept.epoch == env->epoch && mdb_env_info (env->env, &info) == MDB_SUCCESS &&
      info.me_last_txnid == mdb_txn_id (kept.txn))
    return kept.txn;
  mdb_txn_reset (kept.txn);
  g_ptr_array_add (env->pool, kept.txn);
  return NULL;
}


/* Starts a read transaction. Held ones (snapshots, iterators) are listed
 * so that closing the provider can end them; transient ones end before the
 * call that made them returns, and closing waits for them. */
gboolean
qstore_lmdb_read_begin (QStoreLmdbHandle   *self,
                        QStoreLmdbReadTxn  *rt,
                        gboolean            held,
                        GError            **error)
{
  QStoreLmdbEnv *env = self->env;

  for (guint attempt = 0; ; attempt++)
    {
      MDB_txn *txn = NULL;
      int rc;

      g_mutex_lock (&env->lock);
      while (env->barrier)
        g_cond_wait (&env->cond, &env->lock);
      if (G_UNLIKELY (self->closed))
        {
          g_mutex_unlock (&env->lock);
          qstore_lmdb_set_closed_error (error, env->path);
          return FALSE;
        }

      /* Renewing under the lock makes the transaction and the epoch it
       * records agree: handles are published under the same lock. */
      if ((txn = take_live_locked (env)) != NULL)
        rc = MDB_SUCCESS;
      else if (env->pool->len > 0)
        {
          txn = g_ptr_array_steal_index_fast (env->pool, env->pool->len - 1);
          rc = mdb_txn_renew (txn);
          if (rc != MDB_SUCCESS)
            {
              mdb_txn_abort (txn);
              txn = NULL;
            }
        }
      else
        rc = mdb_txn_begin (env->env, NULL, MDB_RDONLY, &txn);

      if (rc == MDB_SUCCESS)
        {
          rt->txn = txn;
          rt->epoch = env->epoch;
          rt->known_gen = env->known_gen;
          rt->known_gen_valid = env->known_gen_valid;
          rt->have_marker = env->have_marker;
          if (held)
            {
              env->n_held++;
              rt->link.data = rt;
              g_queue_push_tail_link (&self->live, &rt->link);
            }
          else
            {
              env->n_transient++;
              self->n_transient++;
            }
          g_mutex_unlock (&env->lock);
          return TRUE;
        }
      g_mutex_unlock (&env->lock);

      if (rc == MDB_MAP_RESIZED && attempt < QSTORE_LMDB_MAX_RETRIES)
        {
          if (!qstore_lmdb_env_adopt_map_size (env, error))
            return FALSE;
          continue;
        }
      qstore_lmdb_set_error (error, env->path, rc, "Could not start reading");
      return FALSE;
    }
}

void
qstore_lmdb_read_end (QStoreLmdbHandle  *self,
                      QStoreLmdbReadTxn *rt,
                      gboolean           held)
{
  QStoreLmdbEnv *env = self->env;

  g_mutex_lock (&env->lock);
  /* After the provider closed, the transaction is already gone. */
  if (rt->txn != NULL)
    {
      g_assert (rt->cursors == NULL);
      if (!env->read_only && !env->barrier && env->n_live < QSTORE_LMDB_LIVE_SIZE)
        env->live[env->n_live++] = (QStoreLmdbLive) { rt->txn, rt->epoch };
      else
        {
          mdb_txn_reset (rt->txn);
          if (env->pool->len < QSTORE_LMDB_READ_POOL_SIZE)
            g_ptr_array_add (env->pool, rt->txn);
          else
            mdb_txn_abort (rt->txn);
        }
      rt->txn = NULL;
      if (held)
        {
          env->n_held--;
          g_queue_unlink (&self->live, &rt->link);
        }
    }
  if (!held)
    {
      env->n_transient--;
      self->n_transient--;
    }
  if (env->barrier || self->closed)
    g_cond_broadcast (&env->cond);
  g_mutex_unlock (&env->lock);
}

/* Whether every store that exists as of @rt has a handle @rt can use: the
 * generation in @rt is the one the handle table was built for. */
int
qstore_lmdb_read_check_complete (QStoreLmdbEnv     *env,
                                 QStoreLmdbReadTxn *rt,
                                 gboolean          *complete)
{
  int rc;

  *complete = FALSE;
  if (!rt->known_gen_valid)
    return MDB_SUCCESS;

  if (rt->have_marker)
    {
      guint64 gen;

      rc = qstore_lmdb_read_generation (rt->txn, env->marker_dbi, &gen);
      if (rc == MDB_SUCCESS)
        *complete = gen == rt->known_gen;
    }
  else
    {
      MDB_stat st;

      /* No marker yet (an empty environment opened read-only): complete
       * as long as nothing was created since. */
      rc = mdb_stat (rt->txn, env->main_dbi, &st);
      if (rc == MDB_SUCCESS)
        *complete = st.ms_entries == 0;
    }
  return rc;
}

/* A read transaction that sees every store of its snapshot: started again
 * after a rescan when another process changed the set of stores. */
QStoreLmdbReadTxn *
qstore_lmdb_read_begin_complete (QStoreLmdbHandle  *self,
                                 gboolean           held,
                                 GError           **error)
{
  QStoreLmdbEnv *env = self->env;
  QStoreLmdbReadTxn *rt = g_new0 (QStoreLmdbReadTxn, 1);

  for (guint attempt = 0; attempt < QSTORE_LMDB_MAX_RETRIES; attempt++)
    {
      gboolean complete;
      int rc;

      if (!qstore_lmdb_read_begin (self, rt, held, error))
        {
          g_free (rt);
          return NULL;
        }
      rc = qstore_lmdb_read_check_complete (env, rt, &complete);
      if (rc == MDB_SUCCESS && complete)
        return rt;

      qstore_lmdb_read_end (self, rt, held);
      if (rc != MDB_SUCCESS)
        {
          qstore_lmdb_set_error (error, env->path, rc, "Could not read the qstore marker");
          g_free (rt);
          return NULL;
        }
      if (!qstore_lmdb_env_refresh (env, error))
        {
          g_free (rt);
          return NULL;
        }
    }

  g_free (rt);
  g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_BUSY,
               _("The stores of the LMDB store at “%s” keep changing under another "
               "process: try again"), env->path);
  return NULL;
}

/* Ends a held read transaction for good, when the provider closes. */
static void
read_kill_locked (QStoreLmdbEnv     *env,
                  QStoreLmdbReadTxn *rt)
{
  for (GSList *l = rt->cursors; l != NULL; l = l->next)
    mdb_cursor_close (l->data);
  g_clear_pointer (&rt->cursors, g_slist_free);
  mdb_txn_abort (rt->txn);
  rt->txn = NULL;
  env->n_held--;
}


void
qstore_lmdb_handle_close (QStoreLmdbHandle *handle)
{
  QStoreLmdbEnv *env = handle->env;
  GList *link;

  g_mutex_lock (&env->lock);
  handle->closed = TRUE;
  while (handle->n_transient > 0)
    g_cond_wait (&env->cond, &env->lock);
  while ((link = g_queue_pop_head_link (&handle->live)) != NULL)
    read_kill_locked (env, link->data);
  g_mutex_unlock (&env->lock);
}
