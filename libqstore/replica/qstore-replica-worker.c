/* qstore-replica-worker.c: a worker thread and the live queries it hosts
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "qstore-error.h"
#include "qstore-i18n-private.h"
#include "qstore-replica-private.h"
#include "qstore-table-private.h"

/* A worker owns a reader database over the replica's provider: its own
 * SQLite connection, tables and coordinator, used by this thread alone.
 * It takes its commands in order. A commit comes with a snapshot of the
 * store as that commit left it: the worker pins it, so every read of its
 * queries sees exactly that transaction, whatever the writer did since.
 *
 * A streamed transaction arrives in chunks before its commit. The worker
 * opens a transaction on its own coordinator (never committed) and
 * replays the chunks' rows into it, over the snapshot of the commit
 * before: its queries then read that state plus the transaction so far,
 * and keyed queries emit their Changed slices early. Those slices are
 * provisional until Progressed; a rollback faults the queries that showed
 * them. Queries that rebuild wait for the commit, as does everything once
 * the replayed rows pass QSTORE_REPLICA_SPECULATION_ROWS, so what a
 * worker holds of an open transaction stays bounded. The commit drops
 * the replay and derives the rest on the committed snapshot. */

static void
live_free (gpointer data)
{
  qstore_replica_live_free (data);
}

QStoreReplicaWorker *
qstore_replica_worker_new (QStoreReplicaHub *hub,
                           guint             index,
                           QStoreDatabase   *reader,
                           guint64           tx)
{
  QStoreReplicaWorker *worker = g_new0 (QStoreReplicaWorker, 1);

  g_atomic_ref_count_init (&worker->ref);
  worker->hub = qstore_replica_hub_ref (hub);
  worker->index = index;
  g_queue_init (&worker->commands);
  worker->reader = reader;
  worker->tx = tx;
  worker->queries = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, live_free);
  worker->readers_of = g_hash_table_new_full (qstore_mview_name_hash, qstore_mview_name_equal,
                                              g_free, (GDestroyNotify) g_ptr_array_unref);
  return worker;
}

QStoreReplicaWorker *
qstore_replica_worker_ref (QStoreReplicaWorker *worker)
{
  g_atomic_ref_count_inc (&worker->ref);
  return worker;
}

void
qstore_replica_worker_unref (QStoreReplicaWorker *worker)
{
  if (!g_atomic_ref_count_dec (&worker->ref))
    return;

  g_queue_clear_full (&worker->commands, (GDestroyNotify) qstore_replica_command_free);
  /* Statements of the reader go before it. */
  g_clear_pointer (&worker->readers_of, g_hash_table_unref);
  g_clear_pointer (&worker->queries, g_hash_table_unref);
  if (worker->reader != NULL && worker->speculating)
    qstore_coordinator_rollback (worker->reader->coordinator);
  g_clear_object (&worker->reader);
  if (worker->thread != NULL)
    g_thread_unref (worker->thread);
  qstore_replica_hub_unref (worker->hub);
  g_free (worker);
}

void
qstore_replica_worker_start (QStoreReplicaWorker *worker)
{
  g_autofree char *name = g_strdup_printf ("qstore-replica-%u", worker->index);

  worker->thread = g_thread_new (name, qstore_replica_worker_main,
                                 qstore_replica_worker_ref (worker));
}

/* Events */

/* Hands @event to the owner, waiting while the queue is full: a slow
 * consumer holds the worker back (its command does not count as hung
 * meanwhile). FALSE when nobody listens any more. */
static gboolean
emit (QStoreReplicaWorker *worker,
      QStoreReplicaEvent  *event)
{
  QStoreReplicaHub *hub = worker->hub;
  gint64 busy_since;

  g_mutex_lock (&hub->lock);
  busy_since = worker->busy_since;
  while (hub->events.length >= hub->capacity && !hub->closed && !worker->abandoned)
    {
      worker->busy_since = 0;
      g_cond_wait (&hub->cond, &hub->lock);
    }
  worker->busy_since = busy_since != 0 ? g_get_monotonic_time () : 0;
  if (hub->closed || worker->abandoned)
    {
      g_mutex_unlock (&hub->lock);
      qstore_replica_event_free (event);
      return FALSE;
    }
  qstore_replica_hub_push_locked (hub, event);
  g_mutex_unlock (&hub->lock);
  return TRUE;
}

static void
emit_changed (QStoreReplicaWorker *worker,
              QStoreReplicaLive   *live,
              guint64              tx,
              GPtrArray           *removed,
              GPtrArray           *added)
{
  guint r = 0, a = 0;

  /* Slices of at most QSTORE_REPLICA_SLICE_ROWS rows, removals first. */
  while (r < removed->len || a < added->len)
    {
      QStoreReplicaEvent *event;
      guint n_removed = MIN (removed->len - r, QSTORE_REPLICA_SLICE_ROWS);
      guint n_added = MIN (added->len - a, QSTORE_REPLICA_SLICE_ROWS - n_removed);

      event = qstore_replica_event_new (QSTORE_REPLICA_EVENT_CHANGED,
                                        qstore_replica_live_get_id (live),
                                        qstore_replica_live_get_generation (live),
                                        worker->index, tx);
      event->removed = qstore_replica_rows_to_variant (removed, r, n_removed);
      event->added = qstore_replica_rows_to_variant (added, a, n_added);
      r += n_removed;
      a += n_added;
      if (!emit (worker, event))
        return;
    }
}

/* The queries by source */

static void
index_query (QStoreReplicaWorker *worker,
             QStoreReplicaLive   *live,
             gboolean             add)
{
  const Plan *plan = qstore_replica_live_get_plan (live);

  for (guint i = 0; i < plan->sources->len; i++)
    {
      PlanSource *source = g_ptr_array_index (plan->sources, i);
      GPtrArray *readers = g_hash_table_lookup (worker->readers_of, source->lower);

      if (add)
        {
          if (readers == NULL)
            {
              readers = g_ptr_array_new ();
              g_hash_table_insert (worker->readers_of, g_strdup (source->lower), readers);
            }
          g_ptr_array_add (readers, live);
        }
      else if (readers != NULL)
        {
          g_ptr_array_remove (readers, live);
          if (readers->len == 0)
            g_hash_table_remove (worker->readers_of, source->lower);
        }
    }
}

static void
drop_query (QStoreReplicaWorker *worker,
            QStoreReplicaLive   *live)
{
  guint64 id = qstore_replica_live_get_id (live);

  index_query (worker, live, FALSE);
  g_hash_table_remove (worker->queries, &id);
}

static void
fault (QStoreReplicaWorker *worker,
       QStoreReplicaLive   *live,
       const char          *reason)
{
  QStoreReplicaEvent *event;

  event = qstore_replica_event_new (QSTORE_REPLICA_EVENT_FAULTED,
                                    qstore_replica_live_get_id (live),
                                    qstore_replica_live_get_generation (live),
                                    worker->index, worker->tx);
  event->reason = g_strdup (reason);
  drop_query (worker, live);
  emit (worker, event);
}

static GPtrArray *
all_queries (QStoreReplicaWorker *worker)
{
  GPtrArray *all = g_ptr_array_new ();
  GHashTableIter iter;
  gpointer live;

  g_hash_table_iter_init (&iter, worker->queries);
  while (g_hash_table_iter_next (&iter, NULL, &live))
    g_ptr_array_add (all, live);
  return all;
}

/* Registration */

static void
run_register (QStoreReplicaWorker  *worker,
              QStoreReplicaCommand *command)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) rows = NULL;
  QStoreReplicaLive *live;
  QStoreReplicaEvent *event;
  guint64 *key = g_new (guint64, 1);

  live = qstore_replica_live_new (command->query, command->generation,
                                  g_steal_pointer (&command->plan));
  *key = command->query;
  g_hash_table_replace (worker->queries, key, live);
  index_query (worker, live, TRUE);

  /* Registration is refused while a transaction streams, so the reader
   * holds no replay here: the snapshot is exactly @tx. */
  qstore_coordinator_pin_snapshot (worker->reader->coordinator, command->snapshot);
  if (!qstore_replica_live_hydrate (live, worker->reader, &rows, &error))
    {
      fault (worker, live, error->message);
      return;
    }
  qstore_replica_live_set_tx (live, command->tx);
  qstore_database_forget_rowids (worker->reader);

  event = qstore_replica_event_new (QSTORE_REPLICA_EVENT_HYDRATED, command->query,
                                    command->generation, worker->index, command->tx);
  event->rows = g_steal_pointer (&rows);
  emit (worker, event);
}

/* Deriving */

static QStoreTable *
reader_table (QStoreReplicaWorker *worker,
              const char          *name)
{
  QStoreSqlTable *entry = qstore_database_lookup (worker->reader, name);

  return entry != NULL ? entry->table : NULL;
}

/* Notes @changes in every query that reads their tables; @touched gets
 * those queries. */
static void
note_changes (QStoreReplicaWorker *worker,
              const QStoreChange  *changes,
              guint                n_changes,
              GHashTable          *touched)
{
  for (guint i = 0; i < n_changes; i++)
    {
      const QStoreChange *change = &changes[i];
      GPtrArray *readers = g_hash_table_lookup (worker->readers_of, change->table->table);
      QStoreTable *source;

      if (readers == NULL || !(source = reader_table (worker, change->table->table)))
        continue;
      for (guint k = 0; k < readers->len; k++)
        {
          QStoreReplicaLive *live = readers->pdata[k];
          g_autoptr(GError) error = NULL;

          g_hash_table_add (touched, live);
          if (!qstore_replica_live_note_change (live, source, change, &error))
            {
              /* The query forgets the partition it cannot name: the
               * rebuild names every row again. */
              g_debug ("Live query %" G_GUINT64_FORMAT ": %s; computing it again in full",
                       qstore_replica_live_get_id (live), error->message);
              qstore_replica_live_mark_rebuild (live);
            }
        }
    }
}

/* Derives the work of @live, emitting what changed under @tx. */
static void
flush (QStoreReplicaWorker *worker,
       QStoreReplicaLive   *live,
       guint64              tx,
       gboolean             provisional)
{
  g_autoptr(GPtrArray) removed = g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);
  g_autoptr(GPtrArray) added = g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);
  g_autoptr(GError) error = NULL;

  if (!qstore_replica_live_has_work (live))
    return;
  if (!qstore_replica_live_flush (live, worker->reader, !provisional, removed, added, &error))
    {
      fault (worker, live, error->message);
      return;
    }
  if (removed->len == 0 && added->len == 0)
    return;
  if (provisional)
    qstore_replica_live_set_provisional (live, TRUE);
  emit_changed (worker, live, tx, removed, added);
}

/* Replaying a streamed transaction */

/* The data key of the stored row @row: encoded from its values, and for a
 * primary key holding NULL (stored under a suffix) found among the rows
 * under that prefix. */
static gboolean
stored_key (QStoreTable   *table,
            GBytes        *row,
            GByteArray    *key,
            GError       **error)
{
  QStoreTableSchema *schema = qstore_table_get_table_schema (table);
  gsize len;
  const guint8 *data = g_bytes_get_data (row, &len);
  g_autofree QStoreValue *values = g_new0 (QStoreValue, table->n_values + 1);
  g_autoptr(GByteArray) end = g_byte_array_new ();
  g_autoptr(QStoreBounds) bounds = NULL;
  g_autoptr(QStoreIter) iter = NULL;
  GError *local_error = NULL;
  gboolean with_null = FALSE;

  if (!qstore_table_read_stored_row (table, data, len, values, error))
    return FALSE;
  g_byte_array_set_size (key, 0);
  if (!qstore_table_append_data_key (table, values, key, error))
    return FALSE;
  if (table->rowid_position < 0)
    for (guint i = 0; i < schema->pk->len; i++)
      with_null = with_null ||
                  values[g_array_index (schema->pk, QStoreKeyPart, i).column].type == QSTORE_VALUE_NULL;
  if (!with_null)
    return TRUE;

  bounds = qstore_bounds_new ();
  qstore_bounds_set_gt (bounds, key->data, key->len);
  if (qstore_table_prefix_successor (key->data, key->len, end))
    qstore_bounds_set_lt (bounds, end->data, end->len);
  if (!(iter = qstore_table_scan (table, bounds, error)))
    return FALSE;
  while (qstore_iter_next (iter, &local_error))
    {
      gsize value_len, key_len;
      const guint8 *value = qstore_iter_peek_value (iter, &value_len);

      if (value_len == len && memcmp (value, data, len) == 0)
        {
          const guint8 *found = qstore_iter_peek_key (iter, &key_len);

          g_byte_array_set_size (key, 0);
          g_byte_array_append (key, found, key_len);
          return TRUE;
        }
    }
  if (local_error != NULL)
    g_propagate_error (error, local_error);
  else
    g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_NOT_FOUND,
                 _("A row of table “%s” the writer changed is not in the worker's view"),
                 schema->name);
  return FALSE;
}

static gboolean
replay_change (QStoreTable         *table,
               const QStoreChange  *change,
               GError             **error)
{
  QStoreTableSchema *schema = qstore_table_get_table_schema (table);
  guint n_columns = schema->columns->len;
  g_autofree QStoreValue *values = g_new0 (QStoreValue, MAX (n_columns, 1));
  g_autoptr(GByteArray) key = g_byte_array_new ();
  gboolean rowid_keyed = schema->pk->len == 0 && schema->rowid_column < 0;
  gboolean ignored = FALSE;
  gint64 rowid = 0, assigned = 0;

  if (change->old_row != NULL && !stored_key (table, change->old_row, key, error))
    return FALSE;
  if (change->new_row != NULL)
    {
      gsize len;
      const guint8 *data = g_bytes_get_data (change->new_row, &len);

      if (!qstore_table_decode_row (table, data, len, values, &rowid, error))
        return FALSE;
    }

  switch (change->op)
    {
    case QSTORE_CHANGE_INSERT:
      return qstore_table_insert_values_with_rowid (table, values, rowid_keyed ? &rowid : NULL,
                                                    QSTORE_CONFLICT_ABORT, &assigned,
                                                    &ignored, error);
    case QSTORE_CHANGE_UPDATE:
      return qstore_table_update_values_with_rowid (table, key->data, key->len, values,
                                                    rowid_keyed ? &rowid : NULL,
                                                    QSTORE_CONFLICT_ABORT, &ignored, error);
    case QSTORE_CHANGE_DELETE:
    default:
      return qstore_table_delete_key (table, key->data, key->len, error);
    }
}

static void
give_up_speculation (QStoreReplicaWorker *worker,
                     const char          *why)
{
  g_debug ("Replica worker %u derives the rest of the open transaction at its commit: %s",
           worker->index, why);
  if (worker->speculating)
    qstore_coordinator_rollback (worker->reader->coordinator);
  worker->speculating = FALSE;
  worker->spec_given_up = TRUE;
}

static void
run_chunk (QStoreReplicaWorker  *worker,
           QStoreReplicaCommand *command)
{
  g_autoptr(GHashTable) touched = g_hash_table_new (NULL, NULL);
  const QStoreChange *changes = (const QStoreChange *) command->changes->data;
  guint n = command->changes->len;
  GHashTableIter iter;
  gpointer live;

  if (!worker->speculating && !worker->spec_given_up)
    {
      qstore_coordinator_begin (worker->reader->coordinator);
      worker->speculating = TRUE;
      worker->spec_rows = 0;
    }

  if (worker->speculating)
    {
      for (guint i = 0; i < n; i++)
        {
          g_autoptr(GError) error = NULL;
          QStoreTable *table;

          if (!g_hash_table_contains (worker->readers_of, changes[i].table->table) ||
              !(table = reader_table (worker, changes[i].table->table)))
            continue;
          if (!replay_change (table, &changes[i], &error))
            {
              give_up_speculation (worker, error->message);
              break;
            }
        }
      worker->spec_rows += n;
      if (worker->speculating && worker->spec_rows > QSTORE_REPLICA_SPECULATION_ROWS)
        give_up_speculation (worker, "its rows would take too much memory");
    }

  note_changes (worker, changes, n, touched);
  if (!worker->speculating)
    return;

  /* Keyed queries derive the chunk now; rebuilds wait for the commit. */
  g_hash_table_iter_init (&iter, touched);
  while (g_hash_table_iter_next (&iter, &live, NULL))
    if (qstore_replica_live_work_is_partial (live))
      flush (worker, live, command->tx, TRUE);
}

static void
end_speculation (QStoreReplicaWorker *worker)
{
  if (worker->speculating)
    qstore_coordinator_rollback (worker->reader->coordinator);
  worker->speculating = FALSE;
  worker->spec_given_up = FALSE;
  worker->spec_rows = 0;
}

static void
run_commit (QStoreReplicaWorker  *worker,
            QStoreReplicaCommand *command)
{
  g_autoptr(GHashTable) touched = g_hash_table_new (NULL, NULL);
  g_autoptr(GPtrArray) queries = NULL;
  QStoreReplicaEvent *event;

  end_speculation (worker);
  worker->tx = command->tx;
  if (command->snapshot != NULL)
    qstore_coordinator_pin_snapshot (worker->reader->coordinator, command->snapshot);

  if (command->change_set != NULL && command->snapshot != NULL)
    {
      guint n_changes;
      const QStoreChange *changes = qstore_change_set_peek_changes (command->change_set,
                                                                    &n_changes);

      note_changes (worker, changes, n_changes, touched);
    }

  queries = all_queries (worker);
  for (guint i = 0; i < queries->len; i++)
    {
      QStoreReplicaLive *live = queries->pdata[i];

      /* Work left by chunks the commit settles, and the commit's own. */
      if (command->snapshot != NULL)
        flush (worker, live, command->tx, FALSE);
      else
        qstore_replica_live_forget_work (live);
    }
  queries = (g_ptr_array_unref (queries), all_queries (worker));
  for (guint i = 0; i < queries->len; i++)
    {
      qstore_replica_live_set_provisional (queries->pdata[i], FALSE);
      qstore_replica_live_set_tx (queries->pdata[i], command->tx);
    }
  qstore_database_forget_rowids (worker->reader);

  event = qstore_replica_event_new (QSTORE_REPLICA_EVENT_PROGRESSED, 0, 0, worker->index,
                                    command->tx);
  emit (worker, event);
}

static void
run_abort (QStoreReplicaWorker *worker)
{
  g_autoptr(GPtrArray) queries = all_queries (worker);

  end_speculation (worker);
  for (guint i = 0; i < queries->len; i++)
    {
      QStoreReplicaLive *live = queries->pdata[i];

      qstore_replica_live_forget_work (live);
      if (qstore_replica_live_is_provisional (live))
        fault (worker, live, "the transaction it showed changes of was rolled back: "
                             "discard them and register the query again");
    }
  qstore_database_forget_rowids (worker->reader);
}

static void
run_read (QStoreReplicaWorker  *worker,
          QStoreReplicaCommand *command)
{
  QStoreReplicaHub *hub = worker->hub;
  QStoreReplicaLive *live = g_hash_table_lookup (worker->queries, &command->query);
  QStoreReplicaReply *reply = command->reply;

  g_mutex_lock (&hub->lock);
  if (live == NULL)
    g_set_error (&reply->error, QSTORE_ERROR, QSTORE_ERROR_NOT_FOUND,
                 "No live query %" G_GUINT64_FORMAT " is registered: register it first",
                 command->query);
  else
    {
      g_mutex_unlock (&hub->lock);
      reply->rows = qstore_replica_live_rows (live);
      reply->tx = qstore_replica_live_get_tx (live);
      g_mutex_lock (&hub->lock);
    }
  reply->done = TRUE;
  g_cond_broadcast (&hub->cond);
  g_mutex_unlock (&hub->lock);
}

static void
run_reload (QStoreReplicaWorker  *worker,
            QStoreReplicaCommand *command)
{
  g_autoptr(GPtrArray) queries = all_queries (worker);

  end_speculation (worker);
  for (guint i = 0; i < queries->len; i++)
    {
      QStoreReplicaLive *live = queries->pdata[i];
      guint64 id = qstore_replica_live_get_id (live);
      const char *reason = g_hash_table_lookup (command->faults, &id);

      qstore_replica_live_forget_statements (live);
      if (reason != NULL)
        fault (worker, live, reason);
    }
  g_clear_object (&worker->reader);
  worker->reader = g_steal_pointer (&command->reader);
}

static void
reply_done (QStoreReplicaWorker *worker,
            QStoreReplicaReply  *reply)
{
  g_mutex_lock (&worker->hub->lock);
  reply->done = TRUE;
  g_cond_broadcast (&worker->hub->cond);
  g_mutex_unlock (&worker->hub->lock);
}

static void
stall (QStoreReplicaWorker *worker,
       guint                ms)
{
  gint64 until = g_get_monotonic_time () + (gint64) ms * 1000;

  while (g_get_monotonic_time () < until && !g_atomic_int_get (&worker->abandoned))
    g_usleep (5000);
}

gpointer
qstore_replica_worker_main (gpointer data)
{
  QStoreReplicaWorker *worker = data;
  QStoreReplicaHub *hub = worker->hub;

  for (;;)
    {
      QStoreReplicaCommand *command;

      g_mutex_lock (&hub->lock);
      while (worker->commands.length == 0 && !worker->abandoned)
        g_cond_wait (&hub->cond, &hub->lock);
      if (worker->abandoned)
        {
          g_mutex_unlock (&hub->lock);
          break;
        }
      command = g_queue_pop_head (&worker->commands);
      worker->busy_since = g_get_monotonic_time ();
      worker->current_reply = command->reply;
      g_mutex_unlock (&hub->lock);

      switch (command->kind)
        {
        case QSTORE_REPLICA_COMMAND_KILL:
          /* A crash, as the test hook asks: the thread is gone at once,
           * with everything it held left as it was. */
          g_mutex_lock (&hub->lock);
          worker->exited = TRUE;
          g_cond_broadcast (&hub->cond);
          g_mutex_unlock (&hub->lock);
          qstore_replica_command_free (command);
          qstore_replica_worker_unref (worker);
          return NULL;

        case QSTORE_REPLICA_COMMAND_STOP:
          qstore_replica_command_free (command);
          goto out;

        case QSTORE_REPLICA_COMMAND_REGISTER:
          run_register (worker, command);
          break;
        case QSTORE_REPLICA_COMMAND_COMMIT:
          run_commit (worker, command);
          break;
        case QSTORE_REPLICA_COMMAND_CHUNK:
          run_chunk (worker, command);
          break;
        case QSTORE_REPLICA_COMMAND_ABORT:
          run_abort (worker);
          break;
        case QSTORE_REPLICA_COMMAND_DESTROY:
          {
            QStoreReplicaLive *live = g_hash_table_lookup (worker->queries, &command->query);

            if (live != NULL && qstore_replica_live_get_generation (live) == command->generation)
              drop_query (worker, live);
          }
          break;
        case QSTORE_REPLICA_COMMAND_READ:
          run_read (worker, command);
          break;
        case QSTORE_REPLICA_COMMAND_RELOAD:
          run_reload (worker, command);
          break;
        case QSTORE_REPLICA_COMMAND_SYNC:
          reply_done (worker, command->reply);
          break;
        case QSTORE_REPLICA_COMMAND_STALL:
          stall (worker, command->stall_ms);
          break;
        default:
          g_assert_not_reached ();
        }

      g_mutex_lock (&hub->lock);
      if (command->credit && worker->credits > 0)
        worker->credits--;
      worker->busy_since = 0;
      worker->current_reply = NULL;
      g_cond_broadcast (&hub->cond);
      g_mutex_unlock (&hub->lock);
      qstore_replica_command_free (command);
    }

out:
  g_mutex_lock (&hub->lock);
  worker->exited = TRUE;
  g_cond_broadcast (&hub->cond);
  g_mutex_unlock (&hub->lock);
  qstore_replica_worker_unref (worker);
  return NULL;
}
