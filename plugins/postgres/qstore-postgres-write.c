/* qstore-postgres-write.c: the writes of the postgres provider
 *
 * A write is one pipeline: per store it writes to, at most three
 * statements (create the store's row, delete keys, put keys), with every
 * key and value in array parameters, and the sync that ends it commits
 * it. However many ops it holds, it costs one round trip.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "qstore-fault-private.h"
#include "qstore-i18n-private.h"
#include "qstore-postgres-gaps.h"
#include "qstore-postgres-notify.h"
#include "qstore-postgres-write.h"

/* The parameters of one step, kept until the pipeline is done. */
typedef struct
{
  const char *values[3];
  int         lengths[3];
} Params;

typedef struct
{
  GArray    *steps;    /* QStorePgStep */
  GPtrArray *keep;     /* what the steps point to */
  GPtrArray *created;  /* names whose row the write creates */
  guint64    tx_id;    /* the last change-log entry put, or 0 */
} Plan;

static void
plan_init (Plan *plan)
{
  plan->tx_id = 0;
  plan->steps = g_array_new (FALSE, TRUE, sizeof (QStorePgStep));
  plan->keep = g_ptr_array_new_with_free_func (g_free);
  plan->created = g_ptr_array_new ();
}

static void
plan_clear (Plan *plan)
{
  g_array_unref (plan->steps);
  g_ptr_array_unref (plan->keep);
  g_ptr_array_unref (plan->created);
}

/* The array's bytes are kept with the plan. */
static const char *
keep_array (Plan       *plan,
            GByteArray *array,
            int        *len)
{
  char *data;

  *len = (int) array->len;
  data = (char *) g_byte_array_free (array, FALSE);
  g_ptr_array_add (plan->keep, data);
  return data;
}

static void
add_step (Plan         *plan,
          QStorePgStmt  stmt,
          const char   *name,
          GByteArray   *first,
          GByteArray   *second)
{
  Params *params = g_new0 (Params, 1);
  QStorePgStep step = { .stmt = stmt, .values = params->values, .lengths = params->lengths };

  params->values[0] = name;
  params->lengths[0] = (int) strlen (name);
  step.n_params = 1;
  if (first != NULL)
    {
      params->values[1] = keep_array (plan, first, &params->lengths[1]);
      step.n_params = 2;
    }
  if (second != NULL)
    {
      params->values[2] = keep_array (plan, second, &params->lengths[2]);
      step.n_params = 3;
    }
  g_ptr_array_add (plan->keep, params);
  g_array_append_val (plan->steps, step);
}

/* A change-log key is the transaction id, 8 bytes big-endian. */
static guint64
log_tx_id (const guint8 *key,
           gsize         len)
{
  guint64 tx_id = 0;

  if (len != 8)
    return 0;
  for (gsize i = 0; i < len; i++)
    tx_id = tx_id << 8 | key[i];
  return tx_id;
}

/* Adds the steps of the @n ops of @ops, all on one store, in order. Called with the main
 * lock held. */
static gboolean
plan_run (QStorePgDb           *db,
          Plan                 *plan,
          const QStoreWriteOp **ops,
          gsize                 n,
          GError              **error)
{
  const char *name = qstore_kv_get_name (ops[0]->store);
  g_autoptr(GHashTable) last = NULL;
  GByteArray *put_keys, *put_values, *del_keys;
  guint n_puts = 0, n_dels = 0;
  gboolean is_new = FALSE;
  gboolean is_log = g_str_equal (name, QSTORE_CHANGE_LOG_STORE_NAME);

  for (gsize i = 0; i < n; i++)
    if (!_qstore_fault_check (QSTORE_FAULT_WRITE_OP, error))
      return FALSE;

  /* The last op on a key wins: a statement touches each key once. */
  if (n > 1)
    {
      last = g_hash_table_new_full (g_bytes_hash, g_bytes_equal,
                                    (GDestroyNotify) g_bytes_unref, NULL);
      for (gsize i = 0; i < n; i++)
        g_hash_table_insert (last, g_bytes_new_static (ops[i]->key, ops[i]->key_len),
                             (gpointer) ops[i]);
    }

  for (gsize i = 0; i < n; i++)
    {
      if (last != NULL)
        {
          g_autoptr(GBytes) key = g_bytes_new_static (ops[i]->key, ops[i]->key_len);

          if (g_hash_table_lookup (last, key) != ops[i])
            continue;
        }
      if (ops[i]->kind == QSTORE_WRITE_OP_PUT)
        n_puts++;
      else
        n_dels++;
    }

  put_keys = n_puts ? qstore_pg_array_new (n_puts) : NULL;
  put_values = n_puts ? qstore_pg_array_new (n_puts) : NULL;
  del_keys = n_dels ? qstore_pg_array_new (n_dels) : NULL;
  for (gsize i = 0; i < n; i++)
    {
      if (last != NULL)
        {
          g_autoptr(GBytes) key = g_bytes_new_static (ops[i]->key, ops[i]->key_len);

          if (g_hash_table_lookup (last, key) != ops[i])
            continue;
        }
      if (ops[i]->kind == QSTORE_WRITE_OP_PUT)
        {
          qstore_pg_array_append (put_keys, ops[i]->key, ops[i]->key_len);
          qstore_pg_array_append (put_values, ops[i]->value, ops[i]->value_len);
          if (is_log)
            plan->tx_id = MAX (plan->tx_id, log_tx_id (ops[i]->key, ops[i]->key_len));
        }
      else
        qstore_pg_array_append (del_keys, ops[i]->key, ops[i]->key_len);
    }

  /* The store's row comes with its first put. As the one writer knows
   * every store, one it does not know is new: it holds no key, so its
   * puts need no conflict handling and there is nothing to delete. */
  if (n_puts > 0 && !g_hash_table_contains (db->known_stores, name) &&
      !g_ptr_array_find_with_equal_func (plan->created, name, g_str_equal, NULL))
    {
      add_step (plan, QSTORE_PG_STMT_CREATE_STORE, name, NULL, NULL);
      g_ptr_array_add (plan->created, (gpointer) name);
      is_new = db->stores_complete;
    }
  if (del_keys != NULL && !is_new)
    add_step (plan, QSTORE_PG_STMT_DELETE, name, del_keys, NULL);
  else if (del_keys != NULL)
    g_byte_array_unref (del_keys);
  if (put_keys != NULL)
    add_step (plan, is_new ? QSTORE_PG_STMT_PUT_NEW : QSTORE_PG_STMT_PUT, name,
              put_keys, put_values);
  return TRUE;
}

/* Followers LISTEN on the location's channel: the server tells them once
 * the transaction committed, and never when it did not. */
static void
plan_notify (QStorePgDb *db,
             Plan       *plan)
{
  Params *params = g_new0 (Params, 1);
  char *channel = qstore_pg_notify_channel (db->schema);
  char *payload = g_strdup_printf ("%" G_GUINT64_FORMAT, plan->tx_id);
  QStorePgStep step = {
    .sql = "SELECT pg_notify ($1::text, $2::text)", .n_params = 2,
    .values = params->values, .lengths = params->lengths,
  };

  params->values[0] = channel;
  params->lengths[0] = (int) strlen (channel);
  params->values[1] = payload;
  params->lengths[1] = (int) strlen (payload);
  g_ptr_array_add (plan->keep, channel);
  g_ptr_array_add (plan->keep, payload);
  g_ptr_array_add (plan->keep, params);
  g_array_append_val (plan->steps, step);
}

static gboolean
plan_ops (QStorePgDb           *db,
          Plan                 *plan,
          const QStoreWriteOp  *ops,
          gsize                 n_ops,
          GError              **error)
{
  g_autoptr(GHashTable) by_store = g_hash_table_new (NULL, NULL);
  g_autoptr(GPtrArray) runs = g_ptr_array_new_with_free_func ((GDestroyNotify) g_ptr_array_unref);

  /* Stores are independent and an op's order matters only among the ops
   * of its store: one run per store, however the ops interleave, keeps
   * the statements few. */
  for (gsize i = 0; i < n_ops; i++)
    {
      GPtrArray *run = g_hash_table_lookup (by_store, ops[i].store);

      if (run == NULL)
        {
          run = g_ptr_array_new ();
          g_hash_table_insert (by_store, ops[i].store, run);
          g_ptr_array_add (runs, run);
        }
      g_ptr_array_add (run, (gpointer) &ops[i]);
    }
  for (guint i = 0; i < runs->len; i++)
    {
      GPtrArray *run = runs->pdata[i];

      if (!plan_run (db, plan, (const QStoreWriteOp **) run->pdata, run->len, error))
        return FALSE;
    }
  if (plan->tx_id > 0)
    plan_notify (db, plan);
  return TRUE;
}

static void
plan_sql (Plan       *plan,
          const char *sql)
{
  QStorePgStep step = { .sql = sql };

  g_array_append_val (plan->steps, step);
}

/* synchronous_commit is off for the writer's session; a durable commit
 * turns it on for its own transaction. */
#define SYNC_ON_SQL "SELECT set_config ('synchronous_commit', 'on', true)"

/* What the write put is no longer in a gap; after a failure, which may
 * have committed after all (the answer lost), no gap is sure. */
static void
update_gaps (QStorePgDb           *db,
             const QStoreWriteOp  *ops,
             gsize                 n_ops,
             gboolean              ok)
{
  if (!ok)
    {
      g_hash_table_remove_all (db->gaps);
      return;
    }
  for (gsize i = 0; i < n_ops; i++)
    if (ops[i].kind == QSTORE_WRITE_OP_PUT)
      qstore_pg_gaps_put (db->gaps, qstore_kv_get_name (ops[i].store), ops[i].key,
                          ops[i].key_len);
}

static gboolean
run_plan (QStorePgDb  *db,
          Plan        *plan,
          const char  *doing,
          GError     **error)
{
  if (!qstore_pg_conn_run (db->main, (QStorePgStep *) plan->steps->data, plan->steps->len,
                           doing, error))
    return FALSE;
  for (guint i = 0; i < plan->created->len; i++)
    g_hash_table_add (db->known_stores, g_strdup (plan->created->pdata[i]));
  return TRUE;
}

gboolean
qstore_pg_write (QStorePgDb           *db,
                 const QStoreWriteOp  *ops,
                 gsize                 n_ops,
                 gboolean              sync,
                 GError              **error)
{
  Plan plan;
  gboolean ok = FALSE;

  plan_init (&plan);
  g_mutex_lock (&db->main->lock);
  if (sync)
    plan_sql (&plan, SYNC_ON_SQL);
  if (qstore_pg_conn_check_open (db->main, error) &&
      plan_ops (db, &plan, ops, n_ops, error))
    {
      ok = plan.steps->len == 0 || run_plan (db, &plan, "writing", error);
      update_gaps (db, ops, n_ops, ok);
    }
  g_mutex_unlock (&db->main->lock);
  plan_clear (&plan);
  return ok;
}

/* Restructuring, in an explicit transaction: a rename must see what the
 * statements before it did. Called with the main lock held. */

static gboolean
run_named (QStorePgDb    *db,
           QStorePgStmt   stmt,
           const char    *name,
           const char    *other,
           PGresult     **result,
           GError       **error)
{
  const char *values[2] = { name, other };
  int lengths[2] = { (int) strlen (name), other ? (int) strlen (other) : 0 };
  QStorePgStep step = {
    .stmt = stmt, .n_params = other ? 2 : 1, .values = values, .lengths = lengths,
    .result = result,
  };

  return qstore_pg_conn_run (db->main, &step, 1, "restructuring the stores", error);
}

static gboolean
restructure_stores (QStorePgDb          *db,
                    const char * const  *drop,
                    const char * const  *rename_from,
                    const char * const  *rename_to,
                    GError             **error)
{
  for (guint i = 0; drop != NULL && drop[i] != NULL; i++)
    if (!run_named (db, QSTORE_PG_STMT_DROP_ENTRIES, drop[i], NULL, NULL, error) ||
        !run_named (db, QSTORE_PG_STMT_DROP_STORE, drop[i], NULL, NULL, error))
      return FALSE;

  for (guint i = 0; rename_from != NULL && rename_from[i] != NULL; i++)
    {
      const char *from = rename_from[i];
      const char *to = rename_to[i];
      PGresult *res = NULL;
      gboolean taken;

      g_assert (to != NULL);
      if (strcmp (from, to) == 0)
        continue;
      if (!run_named (db, QSTORE_PG_STMT_HAS_ENTRIES, to, NULL, &res, error))
        return FALSE;
      taken = PQntuples (res) > 0;
      PQclear (res);
      if (taken)
        {
          g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_EXISTS,
                       _("Cannot rename store “%s” to “%s” in %s: “%s” already holds "
                       "entries; drop it first"), from, to, db->what, to);
          return FALSE;
        }
      /* A leftover row of an emptied destination would clash on the name. */
      if (!run_named (db, QSTORE_PG_STMT_DROP_STORE, to, NULL, NULL, error) ||
          !run_named (db, QSTORE_PG_STMT_RENAME_STORE, from, to, NULL, error))
        return FALSE;
    }
  return TRUE;
}

gboolean
qstore_pg_restructure (QStorePgDb           *db,
                       const char * const   *drop,
                       const char * const   *rename_from,
                       const char * const   *rename_to,
                       const QStoreWriteOp  *ops,
                       gsize                 n_ops,
                       GError              **error)
{
  Plan plan;
  gboolean ok = FALSE;

  plan_init (&plan);
  g_mutex_lock (&db->main->lock);
  /* Names now map to other rows: until the stores are listed again, none
   * is taken for new. */
  g_hash_table_remove_all (db->known_stores);
  db->stores_complete = FALSE;
  g_hash_table_remove_all (db->gaps);
  if (qstore_pg_conn_check_open (db->main, error) &&
      qstore_pg_conn_exec (db->main, "BEGIN", "restructuring the stores", error))
    {
      plan_sql (&plan, SYNC_ON_SQL);
      ok = restructure_stores (db, drop, rename_from, rename_to, error) &&
           plan_ops (db, &plan, ops, n_ops, error);
      if (ok)
        {
          plan_sql (&plan, "COMMIT");
          ok = run_plan (db, &plan, "restructuring the stores", error);
        }
      /* A failed statement leaves the transaction open and aborted. */
      if (!ok && db->main->pg != NULL &&
          PQtransactionStatus (db->main->pg) != PQTRANS_IDLE)
        qstore_pg_conn_exec (db->main, "ROLLBACK", "rolling back", NULL);
      /* Drops and renames changed which stores exist. A failure here
       * leaves the list incomplete, which only costs speed. */
      qstore_pg_db_load_stores (db, NULL);
    }
  g_mutex_unlock (&db->main->lock);
  plan_clear (&plan);
  return ok;
}
