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

/* Ops a streamed write encodes before it sends them on: the server
 * inserts one chunk while the writer encodes the next. */
#define CHUNK_OPS 8192
/* The first chunk is smaller: the server, idle until it comes, starts
 * on it sooner. */
#define FIRST_CHUNK_OPS 1024

/* The parameters of one step, kept until the pipeline is done. */
typedef struct
{
  const char *values[3];
  int         lengths[3];
} Params;

/* A write's statements. A streamed plan sends them on as they fill
 * (see plan_cut()), so what the writer holds of a write stays bounded:
 * keys and values are copied into parameters once, one chunk at a time. */
typedef struct
{
  GArray     *steps;    /* QStorePgStep, not sent yet */
  GPtrArray  *keep;     /* what they point to */
  GPtrArray  *created;  /* names whose row the write creates */
  GPtrArray  *made;     /* their rows' ids: a PGresult ** each */
  guint64     tx_id;    /* the last change-log entry put, or 0 */

  /* Streamed: on the writer's session, in a pipeline begun with the
   * first chunk sent (@begun); @n_chunk ops encoded since the last,
   * which is sent at @chunk_ops. */
  QStorePgConn *stream;
  gboolean    begun;
  guint       n_chunk;
  guint       chunk_ops;

  /* The entries of every store whose id the writer knows, sent as one
   * statement for the puts and one for the deletes: a commit costs the
   * server two statements however many stores it touches. */
  GByteArray *put_ids, *put_keys, *put_values;
  GByteArray *del_ids, *del_keys;
  guint       n_puts, n_dels;

  /* Per store, the last key it puts into the writer's gap (see
   * plan_gap_move()): what is left of the gap once the write is in. */
  GArray     *gap_moves;
} Plan;

typedef struct
{
  const char   *name;
  const guint8 *key;
  gsize         len;
} GapMove;

static void
plan_init (Plan *plan)
{
  memset (plan, 0, sizeof *plan);
  plan->steps = g_array_new (FALSE, TRUE, sizeof (QStorePgStep));
  plan->keep = g_ptr_array_new_with_free_func (g_free);
  plan->created = g_ptr_array_new ();
  plan->made = g_ptr_array_new_with_free_func (g_free);
  /* The counts are written once known. */
  plan->put_ids = qstore_pg_int_array_new (0);
  plan->put_keys = qstore_pg_array_new (0);
  plan->put_values = qstore_pg_array_new (0);
  plan->del_ids = qstore_pg_int_array_new (0);
  plan->del_keys = qstore_pg_array_new (0);
  plan->gap_moves = g_array_new (FALSE, FALSE, sizeof (GapMove));
  plan->chunk_ops = FIRST_CHUNK_OPS;
}

static void
plan_clear (Plan *plan)
{
  g_array_unref (plan->steps);
  g_ptr_array_unref (plan->keep);
  g_ptr_array_unref (plan->created);
  g_ptr_array_unref (plan->made);
  g_clear_pointer (&plan->put_ids, g_byte_array_unref);
  g_clear_pointer (&plan->put_keys, g_byte_array_unref);
  g_clear_pointer (&plan->put_values, g_byte_array_unref);
  g_clear_pointer (&plan->del_ids, g_byte_array_unref);
  g_clear_pointer (&plan->del_keys, g_byte_array_unref);
  g_array_unref (plan->gap_moves);
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

/* A step of @stmt: @text (a name, or NULL), then the arrays given. */
static QStorePgStep *
add_step (Plan         *plan,
          QStorePgStmt  stmt,
          const char   *text,
          GByteArray   *first,
          GByteArray   *second,
          GByteArray   *third)
{
  Params *params = g_new0 (Params, 1);
  QStorePgStep step = { .stmt = stmt, .values = params->values, .lengths = params->lengths };
  GByteArray *arrays[3] = { first, second, third };

  if (text != NULL)
    {
      params->values[0] = text;
      params->lengths[0] = (int) strlen (text);
      step.n_params = 1;
    }
  for (guint i = 0; i < G_N_ELEMENTS (arrays) && arrays[i] != NULL; i++)
    {
      params->values[step.n_params] = keep_array (plan, arrays[i],
                                                  &params->lengths[step.n_params]);
      step.n_params++;
    }
  g_ptr_array_add (plan->keep, params);
  g_array_append_val (plan->steps, step);
  return &g_array_index (plan->steps, QStorePgStep, plan->steps->len - 1);
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

static guint64
key_hash (const guint8 *key,
          gsize         len)
{
  guint64 h = G_GUINT64_CONSTANT (0x9e3779b97f4a7c15) ^ len;
  gsize i = 0;

  for (; i + 8 <= len; i += 8)
    {
      guint64 word;

      memcpy (&word, key + i, 8);
      h = (h ^ word) * G_GUINT64_CONSTANT (0xff51afd7ed558ccd);
      h ^= h >> 33;
    }
  for (; i < len; i++)
    h = (h ^ key[i]) * G_GUINT64_CONSTANT (0x100000001b3);
  /* Every bit of the key moves the low bits, which pick the slot: keys
   * often differ only in their last bytes (big-endian numbers), which a
   * multiplication alone carries up only. */
  h ^= h >> 33;
  h *= G_GUINT64_CONSTANT (0xc4ceb9fe1a85ec53);
  h ^= h >> 33;
  h *= G_GUINT64_CONSTANT (0xff51afd7ed558ccd);
  return h ^ (h >> 33);
}

/* Which of the @n ops of one store are the last on their key (the others
 * are dropped: a statement may touch a key once), as one flag per op.
 * An open-addressed set of op indexes, filled from the last op back: a
 * table of GBytes cost a big commit more than its statements did. */
static guint8 *
last_ops (const QStoreWriteOp **ops,
          gsize                 n)
{
  guint8 *last = g_new0 (guint8, n);
  gsize size = 16;
  guint32 *slots;

  while (size < n * 2)
    size *= 2;
  slots = g_new (guint32, size);
  memset (slots, 0xff, size * sizeof *slots);
  for (gsize i = n; i-- > 0;)
    {
      const QStoreWriteOp *op = ops[i];
      gsize slot = key_hash (op->key, op->key_len) & (size - 1);

      while (slots[slot] != G_MAXUINT32)
        {
          const QStoreWriteOp *other = ops[slots[slot]];

          if (other->key_len == op->key_len &&
              (op->key_len == 0 || memcmp (other->key, op->key, op->key_len) == 0))
            break;
          slot = (slot + 1) & (size - 1);
        }
      if (slots[slot] == G_MAXUINT32)
        {
          slots[slot] = (guint32) i;
          last[i] = TRUE;
        }
    }
  g_free (slots);
  return last;
}

static gint
compare_ops (gconstpointer a,
             gconstpointer b,
             gpointer      data)
{
  const QStoreWriteOp *x = *(const QStoreWriteOp * const *) a;
  const QStoreWriteOp *y = *(const QStoreWriteOp * const *) b;

  return qstore_key_compare (x->key, x->key_len, y->key, y->key_len);
}

/* The ops of @ops that @last keeps (all when it is NULL), in key order:
 * the server then inserts into the primary key's pages one after another
 * instead of all over it, which halves its time for a load of keys in
 * random order. They often come sorted (the table layer's commits do):
 * then they are only checked. */
static GPtrArray *
kept_in_order (const QStoreWriteOp **ops,
               gsize                 n,
               const guint8         *last)
{
  GPtrArray *kept = g_ptr_array_sized_new (n);
  gboolean sorted = TRUE;

  for (gsize i = 0; i < n; i++)
    {
      if (last != NULL && !last[i])
        continue;
      if (sorted && kept->len > 0 &&
          compare_ops (&kept->pdata[kept->len - 1], &ops[i], NULL) > 0)
        sorted = FALSE;
      g_ptr_array_add (kept, (gpointer) ops[i]);
    }
  if (!sorted)
    g_qsort_with_data (kept->pdata, kept->len, sizeof (gpointer), compare_ops, NULL);
  return kept;
}

/* A fresh array for the next chunk, with room for a whole chunk of
 * entries the size of the @n that the last one held in @len bytes. */
static GByteArray *
array_like (guint    len,
            guint    n,
            gboolean ints)
{
  GByteArray *array = ints ? qstore_pg_int_array_new (0) : qstore_pg_array_new (0);

  if (n > 0 && len > array->len)
    qstore_pg_array_reserve (array, (gsize) (len - array->len) / n * CHUNK_OPS);
  return array;
}

/* The shared statements of the stores known by id, for the entries
 * encoded so far; fresh arrays for the next ones. */
static void
plan_flush_shared (Plan *plan)
{
  /* Deletes first: a key is in one of them at most, so the order only
   * matters for the statement count. */
  if (plan->n_dels > 0)
    {
      guint ids_len = plan->del_ids->len, keys_len = plan->del_keys->len;

      qstore_pg_array_set_length (plan->del_ids, plan->n_dels);
      qstore_pg_array_set_length (plan->del_keys, plan->n_dels);
      add_step (plan, QSTORE_PG_STMT_DELETE_BY_ID, NULL, g_steal_pointer (&plan->del_ids),
                g_steal_pointer (&plan->del_keys), NULL);
      plan->del_ids = array_like (ids_len, plan->n_dels, TRUE);
      plan->del_keys = array_like (keys_len, plan->n_dels, FALSE);
      plan->n_dels = 0;
    }
  if (plan->n_puts > 0)
    {
      guint ids_len = plan->put_ids->len, keys_len = plan->put_keys->len;
      guint values_len = plan->put_values->len;

      qstore_pg_array_set_length (plan->put_ids, plan->n_puts);
      qstore_pg_array_set_length (plan->put_keys, plan->n_puts);
      qstore_pg_array_set_length (plan->put_values, plan->n_puts);
      add_step (plan, QSTORE_PG_STMT_PUT_BY_ID, NULL, g_steal_pointer (&plan->put_ids),
                g_steal_pointer (&plan->put_keys), g_steal_pointer (&plan->put_values));
      plan->put_ids = array_like (ids_len, plan->n_puts, TRUE);
      plan->put_keys = array_like (keys_len, plan->n_puts, FALSE);
      plan->put_values = array_like (values_len, plan->n_puts, FALSE);
      plan->n_puts = 0;
    }
}

/* A streamed plan sends the steps it holds and lets go of their
 * parameters, which libpq copied. A failure is told when the pipeline
 * ends. */
static void
plan_send (Plan       *plan,
           const char *doing)
{
  if (plan->stream == NULL || plan->steps->len == 0)
    return;
  if (!plan->begun)
    {
      /* Fails only when the session is not there or not idle: nothing
       * is sent, and the write says so. */
      if (!qstore_pg_conn_pipeline_begin (plan->stream, doing, NULL))
        return;
      plan->begun = TRUE;
    }
  qstore_pg_conn_pipeline_send (plan->stream, (QStorePgStep *) plan->steps->data,
                                plan->steps->len, doing);
  g_array_set_size (plan->steps, 0);
  g_ptr_array_set_size (plan->keep, 0);
}

/* The entries of one store its own statements (by name) carry. */
typedef struct
{
  GByteArray *put_keys, *put_values, *del_keys;
  guint       n_puts, n_dels;
} Named;

static void
named_flush (Plan       *plan,
             Named      *named,
             const char *name,
             gboolean    is_new)
{
  guint keys_len = named->put_keys->len, values_len = named->put_values->len;
  guint dels_len = named->del_keys->len;

  if (named->n_dels > 0 && !is_new)
    {
      qstore_pg_array_set_length (named->del_keys, named->n_dels);
      add_step (plan, QSTORE_PG_STMT_DELETE, name, g_steal_pointer (&named->del_keys),
                NULL, NULL);
    }
  if (named->n_puts > 0)
    {
      qstore_pg_array_set_length (named->put_keys, named->n_puts);
      qstore_pg_array_set_length (named->put_values, named->n_puts);
      add_step (plan, is_new ? QSTORE_PG_STMT_PUT_NEW : QSTORE_PG_STMT_PUT, name,
                g_steal_pointer (&named->put_keys), g_steal_pointer (&named->put_values),
                NULL);
    }
  g_clear_pointer (&named->put_keys, g_byte_array_unref);
  g_clear_pointer (&named->put_values, g_byte_array_unref);
  g_clear_pointer (&named->del_keys, g_byte_array_unref);
  named->put_keys = array_like (keys_len, named->n_puts, FALSE);
  named->put_values = array_like (values_len, named->n_puts, FALSE);
  named->del_keys = array_like (dels_len, named->n_dels, FALSE);
  named->n_puts = named->n_dels = 0;
}

/* Once a chunk is encoded, a streamed plan sends it on. */
static void
plan_cut (Plan       *plan,
          Named      *named,
          const char *name,
          gboolean    is_new)
{
  if (plan->stream == NULL || ++plan->n_chunk < plan->chunk_ops)
    return;
  plan->n_chunk = 0;
  plan->chunk_ops = CHUNK_OPS;
  plan_flush_shared (plan);
  if (named != NULL)
    named_flush (plan, named, name, is_new);
  plan_send (plan, "writing");
  /* The server inserts this chunk while the next one is encoded. */
  if (plan->begun)
    qstore_pg_conn_pipeline_flush (plan->stream, "writing");
}

/* Puts in key order move a gap of the writer's (see
 * qstore-postgres-gaps.c) up to the last of them inside it: that one
 * move is kept for when the write is in, instead of one per put. */
static void
plan_gap_move (QStorePgDb *db,
               Plan       *plan,
               const char *name,
               GPtrArray  *kept)
{
  for (guint i = kept->len; i-- > 0;)
    {
      const QStoreWriteOp *op = kept->pdata[i];

      if (op->kind != QSTORE_WRITE_OP_PUT ||
          qstore_pg_gaps_above (db->gaps, name, op->key, op->key_len))
        continue;
      if (qstore_pg_gaps_hold (db->gaps, name, op->key, op->key_len))
        {
          GapMove move = { name, op->key, op->key_len };

          g_array_append_val (plan->gap_moves, move);
        }
      return;
    }
}

/* Makes room at once for the entries of the first @n ops of @kept (a
 * chunk at most): the arrays then grow once, not step by step. */
static void
plan_reserve (GPtrArray  *kept,
              GByteArray *ids,
              GByteArray *put_keys,
              GByteArray *put_values,
              GByteArray *del_keys)
{
  gsize n_puts = 0, key_bytes = 0, value_bytes = 0, del_bytes = 0;

  for (guint i = 0; i < MIN (kept->len, CHUNK_OPS); i++)
    {
      const QStoreWriteOp *op = kept->pdata[i];

      if (op->kind == QSTORE_WRITE_OP_PUT)
        {
          n_puts++;
          key_bytes += 4 + op->key_len;
          value_bytes += 4 + op->value_len;
        }
      else
        del_bytes += 4 + op->key_len;
    }
  if (ids != NULL)
    qstore_pg_array_reserve (ids, 8 * n_puts);
  qstore_pg_array_reserve (put_keys, key_bytes);
  qstore_pg_array_reserve (put_values, value_bytes);
  qstore_pg_array_reserve (del_keys, del_bytes);
}

/* Adds the steps of the @n ops of @ops, all on store @name, in order.
 * Called with the main lock held. */
static void
plan_run (QStorePgDb           *db,
          Plan                 *plan,
          const char           *name,
          const QStoreWriteOp **ops,
          gsize                 n)
{
  g_autofree guint8 *last = NULL;
  g_autoptr(GPtrArray) kept = NULL;
  Named named = { NULL };
  gboolean has_puts = FALSE;
  gboolean is_new = FALSE;
  gboolean is_log = g_str_equal (name, QSTORE_CHANGE_LOG_STORE_NAME);
  gpointer id = NULL;
  gboolean by_id;

  /* The last op on a key wins: a statement touches each key once, and
   * in a streamed write each key is in one chunk only. */
  if (n > 1)
    last = last_ops (ops, n);
  kept = kept_in_order (ops, n, last);

  /* A store whose id is known goes into the shared statements; any other
   * by its name, in statements of its own. */
  by_id = g_hash_table_lookup_extended (db->known_stores, name, NULL, &id);
  if (!by_id)
    {
      for (guint i = 0; i < kept->len && !has_puts; i++)
        has_puts = ((const QStoreWriteOp *) kept->pdata[i])->kind == QSTORE_WRITE_OP_PUT;
      /* The store's row comes with its first put. As the one writer knows
       * every store, one it does not know is new: it holds no key, so its
       * puts need no conflict handling and there is nothing to delete. */
      if (has_puts)
        {
          PGresult **made = g_new0 (PGresult *, 1);

          add_step (plan, QSTORE_PG_STMT_CREATE_STORE, name, NULL, NULL, NULL)->result = made;
          g_ptr_array_add (plan->created, (gpointer) name);
          g_ptr_array_add (plan->made, made);
          is_new = db->stores_complete;
        }
      named.put_keys = qstore_pg_array_new (0);
      named.put_values = qstore_pg_array_new (0);
      named.del_keys = qstore_pg_array_new (0);
    }
  if (by_id)
    plan_reserve (kept, plan->put_ids, plan->put_keys, plan->put_values, plan->del_keys);
  else
    plan_reserve (kept, NULL, named.put_keys, named.put_values, named.del_keys);
  plan_gap_move (db, plan, name, kept);
  for (guint i = 0; i < kept->len; i++)
    {
      const QStoreWriteOp *op = kept->pdata[i];

      if (op->kind == QSTORE_WRITE_OP_PUT)
        {
          if (by_id)
            {
              qstore_pg_int_array_append (plan->put_ids, GPOINTER_TO_INT (id));
              plan->n_puts++;
            }
          else
            named.n_puts++;
          qstore_pg_array_append (by_id ? plan->put_keys : named.put_keys,
                                  op->key, op->key_len);
          qstore_pg_array_append (by_id ? plan->put_values : named.put_values,
                                  op->value, op->value_len);
          if (is_log)
            plan->tx_id = MAX (plan->tx_id, log_tx_id (op->key, op->key_len));
        }
      else
        {
          if (by_id)
            {
              qstore_pg_int_array_append (plan->del_ids, GPOINTER_TO_INT (id));
              plan->n_dels++;
            }
          else
            named.n_dels++;
          qstore_pg_array_append (by_id ? plan->del_keys : named.del_keys,
                                  op->key, op->key_len);
        }
      plan_cut (plan, by_id ? NULL : &named, name, is_new);
    }
  if (!by_id)
    {
      named_flush (plan, &named, name, is_new);
      g_clear_pointer (&named.put_keys, g_byte_array_unref);
      g_clear_pointer (&named.put_values, g_byte_array_unref);
      g_clear_pointer (&named.del_keys, g_byte_array_unref);
    }
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
    .stmt = QSTORE_PG_STMT_NOTIFY, .n_params = 2,
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

/* Every op passes the fault point before anything is sent: a streamed
 * write must not fail half sent. */
static gboolean
check_faults (gsize    n_ops,
              GError **error)
{
  for (gsize i = 0; i < n_ops; i++)
    if (!_qstore_fault_check (QSTORE_FAULT_WRITE_OP, error))
      return FALSE;
  return TRUE;
}

static void
plan_ops (QStorePgDb           *db,
          Plan                 *plan,
          const QStoreWriteOp  *ops,
          gsize                 n_ops)
{
  g_autoptr(GHashTable) by_store = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr(GPtrArray) runs = g_ptr_array_new_with_free_func ((GDestroyNotify) g_ptr_array_unref);

  /* Stores are independent and an op's order matters only among the ops
   * of its store: one run per store name (handles of one store are one
   * store), however the ops interleave, keeps the statements few. */
  for (gsize i = 0; i < n_ops; i++)
    {
      const char *name = qstore_kv_get_name (ops[i].store);
      GPtrArray *run = g_hash_table_lookup (by_store, name);

      if (run == NULL)
        {
          run = g_ptr_array_new ();
          g_hash_table_insert (by_store, (gpointer) name, run);
          g_ptr_array_add (runs, run);
        }
      g_ptr_array_add (run, (gpointer) &ops[i]);
    }
  for (guint i = 0; i < runs->len; i++)
    {
      GPtrArray *run = runs->pdata[i];
      const QStoreWriteOp *first = run->pdata[0];

      plan_run (db, plan, qstore_kv_get_name (first->store),
                (const QStoreWriteOp **) run->pdata, run->len);
    }
  plan_flush_shared (plan);
  if (plan->tx_id > 0)
    plan_notify (db, plan);
}

static void
plan_sql (Plan       *plan,
          const char *sql)
{
  QStorePgStep step = { .sql = sql };

  g_array_append_val (plan->steps, step);
}

static void
plan_stmt (Plan         *plan,
           QStorePgStmt  stmt)
{
  QStorePgStep step = { .stmt = stmt };

  g_array_append_val (plan->steps, step);
}

/* What the write put is no longer in a gap; after a failure, which may
 * have committed after all (the answer lost), no gap is sure, nor that a
 * store the writer does not know is empty. */
static void
update_gaps (QStorePgDb *db,
             Plan       *plan,
             gboolean    ok)
{
  if (!ok)
    {
      g_hash_table_remove_all (db->gaps);
      db->stores_complete = FALSE;
      return;
    }
  for (guint i = 0; i < plan->gap_moves->len; i++)
    {
      GapMove *move = &g_array_index (plan->gap_moves, GapMove, i);

      qstore_pg_gaps_put (db->gaps, move->name, move->key, move->len);
    }
}

/* The new rows' ids, for the next writes' shared statements. */
static void
note_created (QStorePgDb *db,
              Plan       *plan)
{
  for (guint i = 0; i < plan->created->len; i++)
    {
      PGresult **made = plan->made->pdata[i];

      if (PQntuples (*made) == 1)
        g_hash_table_insert (db->known_stores, g_strdup (plan->created->pdata[i]),
                             GINT_TO_POINTER (qstore_pg_result_int (*made, 0, 0)));
      g_clear_pointer (made, PQclear);
    }
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
  note_created (db, plan);
  return TRUE;
}

/* From this many ops, a write's statements are planned without looking
 * at their parameters: a custom plan copies the arrays of keys and values
 * into the plan, which costs the server more than planning saves. */
#define GENERIC_PLAN_OPS 256

/* Sends @ops: inside the write transaction when @in_txn (its BEGIN goes
 * with its first write), else as one transaction of their own. Called
 * with the main lock held. */
static gboolean
write_locked (QStorePgDb           *db,
              const QStoreWriteOp  *ops,
              gsize                 n_ops,
              gboolean              sync,
              gboolean              in_txn,
              GError              **error)
{
  Plan plan;
  gboolean ok = FALSE;
  const char *off = "off";
  guint n_setup;

  plan_init (&plan);
  /* Snapshots must not see the write: those not begun begin now. A write
   * transaction's writes are seen by nobody before its commit, which
   * begins them. */
  if (!in_txn)
    qstore_pg_db_begin_snapshots (db);
  else if (!db->txn_begun)
    plan_sql (&plan, "BEGIN");
  /* synchronous_commit is on for the writer's session (the coordinator's
   * commits are all durable); a write that need not be turns it off for
   * its own transaction. */
  if (!sync)
    {
      QStorePgStep step = { .stmt = QSTORE_PG_STMT_LAZY_COMMIT, .n_params = 1 };
      static const int off_len = 3;

      step.values = &off;
      step.lengths = &off_len;
      g_array_append_val (plan.steps, step);
    }
  if (n_ops >= GENERIC_PLAN_OPS)
    plan_stmt (&plan, QSTORE_PG_STMT_GENERIC_PLANS);
  n_setup = plan.steps->len;
  if (qstore_pg_conn_check_open (db->main, error) && check_faults (n_ops, error))
    {
      plan.stream = db->main;
      plan_ops (db, &plan, ops, n_ops);
      if (plan.begun || plan.steps->len > n_setup)
        {
          plan_send (&plan, "writing");
          if (plan.begun)
            ok = qstore_pg_conn_pipeline_end (db->main, "writing", error);
          else if (qstore_pg_conn_check_open (db->main, error))
            qstore_pg_set_error (error, db->main, NULL, "writing");
          if (ok)
            note_created (db, &plan);
          if (in_txn)
            {
              db->txn_begun = TRUE;
              if (plan.created->len > 0)
                db->txn_restructured = TRUE;
            }
        }
      else
        ok = TRUE;
      update_gaps (db, &plan, ok);
    }
  plan_clear (&plan);
  return ok;
}

gboolean
qstore_pg_write (QStorePgDb           *db,
                 const QStoreWriteOp  *ops,
                 gsize                 n_ops,
                 gboolean              sync,
                 GError              **error)
{
  gboolean ok;

  g_mutex_lock (&db->main->lock);
  ok = write_locked (db, ops, n_ops, sync, FALSE, error);
  g_mutex_unlock (&db->main->lock);
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
  qstore_pg_db_begin_snapshots (db);
  /* Names now map to other rows: until the stores are listed again, none
   * is taken for new. */
  qstore_pg_db_stores_changed (db);
  g_hash_table_remove_all (db->known_stores);
  db->stores_complete = FALSE;
  g_hash_table_remove_all (db->gaps);
  if (qstore_pg_conn_check_open (db->main, error) &&
      qstore_pg_conn_exec (db->main, "BEGIN", "restructuring the stores", error))
    {
      ok = check_faults (n_ops, error) &&
           restructure_stores (db, drop, rename_from, rename_to, error);
      if (ok)
        {
          plan_ops (db, &plan, ops, n_ops);
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
  qstore_pg_db_stores_changed (db);
  g_mutex_unlock (&db->main->lock);
  plan_clear (&plan);
  return ok;
}

/* The write transaction */

gboolean
qstore_pg_txn_write (QStorePgDb           *db,
                     const QStoreWriteOp  *ops,
                     gsize                 n_ops,
                     GError              **error)
{
  /* Its commit says how durable it is. */
  return write_locked (db, ops, n_ops, TRUE, TRUE, error);
}

gboolean
qstore_pg_txn_drop (QStorePgDb          *db,
                    const char * const  *names,
                    GError             **error)
{
  if (!qstore_pg_conn_check_open (db->main, error))
    return FALSE;
  if (!db->txn_begun)
    {
      if (!qstore_pg_conn_exec (db->main, "BEGIN", "beginning a write transaction", error))
        return FALSE;
      db->txn_begun = TRUE;
    }
  /* A name put again later in the transaction gets a new row. */
  db->txn_restructured = TRUE;
  qstore_pg_db_stores_changed (db);
  for (guint i = 0; names[i] != NULL; i++)
    g_hash_table_remove (db->known_stores, names[i]);
  return restructure_stores (db, names, NULL, NULL, error);
}

/* COMMIT, with synchronous_commit off for its transaction unless @sync. */
static gboolean
txn_commit (QStorePgDb  *db,
            gboolean     sync,
            GError     **error)
{
  const char *off = "off";
  const int off_len = 3;
  QStorePgStep steps[2] = { { 0 } };
  PGresult *res = NULL;
  guint n = 0;
  gboolean ok;

  if (!sync)
    steps[n++] = (QStorePgStep) {
      .stmt = QSTORE_PG_STMT_LAZY_COMMIT, .n_params = 1, .values = &off, .lengths = &off_len,
    };
  steps[n++] = (QStorePgStep) { .sql = "COMMIT", .result = &res };
  /* Snapshots taken while it was open see the state before it. */
  qstore_pg_db_begin_snapshots (db);
  if (!qstore_pg_conn_check_open (db->main, error) ||
      !qstore_pg_conn_run (db->main, steps, n, "committing a write transaction", error))
    return FALSE;
  /* COMMIT of a transaction the server gave up is a ROLLBACK. */
  ok = g_str_equal (PQcmdStatus (res), "COMMIT");
  if (!ok)
    g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_FAILED,
                 _("%s: committing a write transaction failed: the server rolled it back, "
                 "so none of its writes is stored"), db->what);
  PQclear (res);
  return ok;
}

gboolean
qstore_pg_txn_end (QStorePgDb  *db,
                   gboolean     commit,
                   gboolean     sync,
                   GError     **error)
{
  QStorePgConn *conn = db->main;
  gboolean ok = TRUE;
  gboolean committed;

  if (db->txn_begun && commit)
    ok = txn_commit (db, sync, error);
  committed = commit && ok;
  /* Whatever is left of it (a failed statement leaves it open, aborted)
   * goes; a session that broke took it along. */
  if (db->txn_begun && !committed && !qstore_pg_conn_is_broken (conn) &&
      PQtransactionStatus (conn->pg) != PQTRANS_IDLE)
    qstore_pg_conn_exec (conn, "ROLLBACK", "rolling back a write transaction", NULL);
  if (!ok)
    {
      /* The outcome of a commit whose answer was lost is unknown. */
      g_hash_table_remove_all (db->gaps);
      db->stores_complete = FALSE;
    }
  qstore_pg_gaps_settle (db->gaps, committed);
  /* The ids of the stores it made or erased are taken back. */
  if (db->txn_begun && !committed && (db->txn_restructured || !db->stores_complete))
    qstore_pg_db_load_stores (db, NULL);
  /* Stores it made or dropped are there now, or gone. */
  if (db->txn_restructured)
    qstore_pg_db_stores_changed (db);
  db->txn_open = FALSE;
  db->txn_begun = FALSE;
  db->txn_restructured = FALSE;
  return ok;
}
