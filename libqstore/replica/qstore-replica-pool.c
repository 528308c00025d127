/* qstore-replica-pool.c: the workers, as the writer's side sees them
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "qstore-error.h"
#include "qstore-i18n-private.h"
#include "qstore-replica-private.h"

/* Commands go to a worker through its queue, under the hub's lock. Those
 * that hold a snapshot or rows take one of its QSTORE_REPLICA_CREDITS:
 * with none left, the sender waits, so a worker held back by a slow
 * consumer holds the writer back in turn instead of letting memory grow.
 *
 * Waiting never waits on itself: the events a full queue holds can only
 * leave on the owner's main context, so a wait on the thread that opened
 * the replica delivers them as it goes (marked as nested: the handlers
 * run inside the call that waits, and calls that would wait again are
 * refused with QSTORE_REPLICA_ERROR_BUSY). Every wait also looks after
 * the workers: one whose thread ended (a crash, as the test hook makes
 * one) or whose command ran past the deadline is replaced, and its
 * queries are faulted; past the restart budget in its window, the place
 * is retired (degraded) instead. */

#define WAIT_STEP_US     (20 * 1000)
#define CHECK_PERIOD_US  (100 * 1000)

QStoreReplicaReply *
qstore_replica_reply_new (void)
{
  QStoreReplicaReply *reply = g_new0 (QStoreReplicaReply, 1);

  g_atomic_ref_count_init (&reply->ref);
  return reply;
}

QStoreReplicaReply *
qstore_replica_reply_ref (QStoreReplicaReply *reply)
{
  g_atomic_ref_count_inc (&reply->ref);
  return reply;
}

void
qstore_replica_reply_unref (QStoreReplicaReply *reply)
{
  if (!g_atomic_ref_count_dec (&reply->ref))
    return;
  g_clear_pointer (&reply->rows, g_variant_unref);
  g_clear_error (&reply->error);
  g_free (reply);
}

QStoreReplicaCommand *
qstore_replica_command_new (QStoreReplicaCommandKind kind)
{
  QStoreReplicaCommand *command = g_new0 (QStoreReplicaCommand, 1);

  command->kind = kind;
  return command;
}

void
qstore_replica_command_free (QStoreReplicaCommand *command)
{
  if (command == NULL)
    return;
  g_clear_pointer (&command->plan, qstore_mview_plan_free);
  g_clear_object (&command->snapshot);
  g_clear_object (&command->change_set);
  g_clear_pointer (&command->changes, g_array_unref);
  g_clear_object (&command->reader);
  g_clear_pointer (&command->faults, g_hash_table_unref);
  g_clear_pointer (&command->reply, qstore_replica_reply_unref);
  g_free (command);
}

/* Starting and stopping */

static QStoreReplicaWorker *
spawn (QStoreReplica  *self,
       guint           index,
       GError        **error)
{
  QStoreDatabase *reader = qstore_replica_open_reader (self, error);
  QStoreReplicaWorker *worker;

  if (reader == NULL)
    return NULL;
  worker = qstore_replica_worker_new (self->hub, index, reader,
                                      qstore_replica_get_committed_tx_id (self));
  qstore_replica_worker_start (worker);
  return worker;
}

gboolean
qstore_replica_pool_start (QStoreReplica  *self,
                           GError        **error)
{
  self->slots = g_new0 (QStoreReplicaSlot, self->n_workers);
  for (guint i = 0; i < self->n_workers; i++)
    {
      QStoreReplicaSlot *slot = &self->slots[i];

      slot->restarts = g_array_new (FALSE, FALSE, sizeof (gint64));
      slot->tables = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
      if (!(slot->worker = spawn (self, i, error)))
        return FALSE;
    }
  return TRUE;
}

/* With the hub's lock held: takes what @worker will never run, answering
 * whoever waits on it. */
static GQueue
take_commands_locked (QStoreReplicaWorker *worker,
                      const char          *why)
{
  GQueue taken = worker->commands;

  g_queue_init (&worker->commands);
  for (GList *l = taken.head; l != NULL; l = l->next)
    {
      QStoreReplicaCommand *command = l->data;

      if (command->reply != NULL && !command->reply->done)
        {
          g_set_error (&command->reply->error, QSTORE_REPLICA_ERROR, QSTORE_REPLICA_ERROR_DEGRADED,
                       "Replica worker %u %s before it answered", worker->index, why);
          command->reply->done = TRUE;
        }
    }
  worker->credits = 0;
  return taken;
}

void
qstore_replica_pool_stop (QStoreReplica *self)
{
  QStoreReplicaHub *hub = self->hub;

  if (self->slots == NULL)
    return;

  g_mutex_lock (&hub->lock);
  for (guint i = 0; i < self->n_workers; i++)
    {
      QStoreReplicaWorker *worker = self->slots[i].worker;

      if (worker != NULL && !worker->exited)
        g_queue_push_head (&worker->commands,
                           qstore_replica_command_new (QSTORE_REPLICA_COMMAND_STOP));
    }
  g_cond_broadcast (&hub->cond);
  g_mutex_unlock (&hub->lock);

  for (guint i = 0; i < self->n_workers; i++)
    {
      QStoreReplicaSlot *slot = &self->slots[i];

      if (slot->worker != NULL)
        {
          gint64 deadline = g_get_monotonic_time () + self->deadline_us;
          gboolean exited;

          /* A hung worker is left to itself: it stops on its own, and frees
           * what it holds, once it wakes up. */
          g_mutex_lock (&hub->lock);
          while (!(exited = slot->worker->exited) &&
                 g_cond_wait_until (&hub->cond, &hub->lock, deadline))
            ;
          if (!exited)
            {
              GQueue left;

              slot->worker->abandoned = TRUE;
              left = take_commands_locked (slot->worker, "stopped");
              g_cond_broadcast (&hub->cond);
              g_mutex_unlock (&hub->lock);
              g_queue_clear_full (&left, (GDestroyNotify) qstore_replica_command_free);
            }
          else
            {
              g_mutex_unlock (&hub->lock);
              g_thread_join (g_thread_ref (slot->worker->thread));
            }
          g_clear_pointer (&slot->worker, qstore_replica_worker_unref);
        }
      g_clear_pointer (&slot->restarts, g_array_unref);
      g_clear_pointer (&slot->tables, g_hash_table_unref);
    }
  g_clear_pointer (&self->slots, g_free);
}

/* Faults, respawns and the restart budget */

/* Faults every query of place @index: the worker that held them is gone. */
static void
fault_place (QStoreReplica *self,
             guint          index,
             const char    *reason)
{
  g_autoptr(GPtrArray) faulted = g_ptr_array_new ();
  QStoreReplicaSlot *slot = &self->slots[index];
  GHashTableIter iter;
  QStoreReplicaEntry *entry;

  g_mutex_lock (&self->registry_lock);
  g_hash_table_iter_init (&iter, self->queries);
  while (g_hash_table_iter_next (&iter, NULL, (gpointer *) &entry))
    if (entry->worker == index)
      g_ptr_array_add (faulted, entry);
  g_mutex_lock (&self->hub->lock);
  for (guint i = 0; i < faulted->len; i++)
    {
      QStoreReplicaEntry *lost = faulted->pdata[i];
      QStoreReplicaEvent *event;

      event = qstore_replica_event_new (QSTORE_REPLICA_EVENT_FAULTED, lost->id, lost->generation,
                                        index, qstore_replica_get_committed_tx_id (self));
      event->reason = g_strdup (reason);
      event->settled = TRUE;
      /* Beyond the capacity: the owner cannot wait on itself, and there
       * is at most one per query. */
      qstore_replica_hub_push_locked (self->hub, event);
      g_hash_table_insert (self->settled, g_memdup2 (&lost->id, sizeof lost->id),
                           g_memdup2 (&lost->generation, sizeof lost->generation));
      qstore_replica_forget_query_locked (self, lost);
    }
  g_mutex_unlock (&self->hub->lock);
  g_mutex_unlock (&self->registry_lock);
  slot->streamed = FALSE;
}

static void
recover (QStoreReplica *self,
         guint          index,
         gboolean       hung)
{
  QStoreReplicaSlot *slot = &self->slots[index];
  QStoreReplicaWorker *old = slot->worker;
  g_autoptr(GError) error = NULL;
  g_autofree char *reason = NULL;
  GQueue left;
  gint64 now = g_get_monotonic_time ();
  guint kept = 0;

  g_mutex_lock (&self->hub->lock);
  old->abandoned = TRUE;
  left = take_commands_locked (old, hung ? "stopped answering" : "died");
  if (old->current_reply != NULL && !old->current_reply->done)
    {
      g_set_error (&old->current_reply->error, QSTORE_REPLICA_ERROR, QSTORE_REPLICA_ERROR_DEGRADED,
                   _("Replica worker %u stopped answering"), index);
      old->current_reply->done = TRUE;
    }
  g_cond_broadcast (&self->hub->cond);
  g_mutex_unlock (&self->hub->lock);
  g_queue_clear_full (&left, (GDestroyNotify) qstore_replica_command_free);

  if (!hung)
    g_thread_join (g_thread_ref (old->thread));
  slot->worker = NULL;
  qstore_replica_worker_unref (old);

  reason = g_strdup_printf ("replica worker %u %s: register the query again", index,
                            hung ? "stopped answering and was replaced" : "died and was replaced");

  /* Restarts within the window, this one included */
  for (guint i = 0; i < slot->restarts->len; i++)
    {
      gint64 when = g_array_index (slot->restarts, gint64, i);

      if (now - when < self->restart_window_us)
        g_array_index (slot->restarts, gint64, kept++) = when;
    }
  g_array_set_size (slot->restarts, kept);
  g_array_append_val (slot->restarts, now);

  if (slot->restarts->len > self->restart_budget ||
      !(slot->worker = spawn (self, index, &error)))
    {
      g_free (reason);
      reason = g_strdup_printf ("replica worker %u failed %u times within %" G_GINT64_FORMAT
                                " s and its shard is retired: open the replica again",
                                index, slot->restarts->len, self->restart_window_us / G_USEC_PER_SEC);
      slot->degraded = TRUE;
      g_warning ("Replica worker %u is retired after %u failures%s%s", index,
                 slot->restarts->len, error != NULL ? ": " : "",
                 error != NULL ? error->message : "");
    }
  fault_place (self, index, reason);
}

void
qstore_replica_pool_check (QStoreReplica *self)
{
  gint64 now = g_get_monotonic_time ();

  for (guint i = 0; self->slots != NULL && i < self->n_workers; i++)
    {
      QStoreReplicaWorker *worker = self->slots[i].worker;
      gboolean exited, hung;

      if (worker == NULL)
        continue;
      g_mutex_lock (&self->hub->lock);
      exited = worker->exited;
      hung = !exited && worker->busy_since != 0 && now - worker->busy_since > self->deadline_us;
      g_mutex_unlock (&self->hub->lock);
      if (exited || hung)
        recover (self, i, hung);
    }
}

/* Waiting */

/* With the hub's lock held: one step of a wait. Returns with the lock
 * held again. */
static void
wait_step (QStoreReplica *self,
           gint64        *last_check)
{
  QStoreReplicaHub *hub = self->hub;
  gint64 now;

  if (g_thread_self () == self->owner && hub->events.length > 0)
    {
      g_mutex_unlock (&hub->lock);
      self->nested++;
      qstore_replica_deliver (self, 64);
      self->nested--;
      g_mutex_lock (&hub->lock);
      return;
    }
  g_cond_wait_until (&hub->cond, &hub->lock, g_get_monotonic_time () + WAIT_STEP_US);
  now = g_get_monotonic_time ();
  if (now - *last_check >= CHECK_PERIOD_US)
    {
      *last_check = now;
      g_mutex_unlock (&hub->lock);
      qstore_replica_pool_check (self);
      g_mutex_lock (&hub->lock);
    }
}

gboolean
qstore_replica_pool_send (QStoreReplica        *self,
                          guint                 index,
                          QStoreReplicaCommand *command)
{
  QStoreReplicaHub *hub = self->hub;
  QStoreReplicaSlot *slot = &self->slots[index];
  gint64 last_check = g_get_monotonic_time ();

  g_mutex_lock (&hub->lock);
  for (;;)
    {
      QStoreReplicaWorker *worker = slot->worker;

      if (worker == NULL)
        {
          g_mutex_unlock (&hub->lock);
          qstore_replica_command_free (command);
          return FALSE;
        }
      if (worker->exited)
        {
          g_mutex_unlock (&hub->lock);
          qstore_replica_pool_check (self);
          g_mutex_lock (&hub->lock);
          continue;
        }
      if (!command->credit || worker->credits < QSTORE_REPLICA_CREDITS)
        {
          if (command->credit)
            worker->credits++;
          g_queue_push_tail (&worker->commands, command);
          g_cond_broadcast (&hub->cond);
          g_mutex_unlock (&hub->lock);
          return TRUE;
        }
      wait_step (self, &last_check);
    }
}

void
qstore_replica_pool_wait_reply (QStoreReplica      *self,
                                QStoreReplicaReply *reply)
{
  gint64 last_check = g_get_monotonic_time ();

  g_mutex_lock (&self->hub->lock);
  while (!reply->done)
    wait_step (self, &last_check);
  g_mutex_unlock (&self->hub->lock);
}

gboolean
qstore_replica_slot_reads (QStoreReplicaSlot *slot,
                           const char        *table)
{
  g_autofree char *lower = g_ascii_strdown (table, -1);

  return g_hash_table_contains (slot->tables, lower);
}

/* Test hooks */

static void
send_hook (QStoreReplica            *self,
           guint                     worker,
           QStoreReplicaCommandKind  kind,
           guint                     ms)
{
  QStoreReplicaCommand *command;

  g_return_if_fail (QSTORE_IS_REPLICA (self));
  g_return_if_fail (worker < self->n_workers);

  command = qstore_replica_command_new (kind);
  command->stall_ms = ms;
  qstore_replica_pool_send (self, worker, command);
}

/**
 * qstore_replica_test_kill_worker: (skip)
 * @self: a replica
 * @worker: a worker's place
 *
 * Ends the thread of worker @worker as a crash would, once it reaches
 * this command. For tests only.
 */
void
qstore_replica_test_kill_worker (QStoreReplica *self,
                                 guint          worker)
{
  send_hook (self, worker, QSTORE_REPLICA_COMMAND_KILL, 0);
}

/**
 * qstore_replica_test_stall_worker: (skip)
 * @self: a replica
 * @worker: a worker's place
 * @ms: how long it stops answering
 *
 * Makes worker @worker stop answering for @ms milliseconds. For tests
 * only.
 */
void
qstore_replica_test_stall_worker (QStoreReplica *self,
                                  guint          worker,
                                  guint          ms)
{
  send_hook (self, worker, QSTORE_REPLICA_COMMAND_STALL, ms);
}

/**
 * qstore_replica_test_set_fault_limits: (skip)
 * @self: a replica
 * @restart_budget: respawns allowed per worker within @restart_window_ms
 * @restart_window_ms: the window
 * @deadline_ms: how long a command may run before its worker counts as hung
 *
 * Makes worker faults quick to provoke. For tests only.
 */
void
qstore_replica_test_set_fault_limits (QStoreReplica *self,
                                      guint          restart_budget,
                                      guint          restart_window_ms,
                                      guint          deadline_ms)
{
  g_return_if_fail (QSTORE_IS_REPLICA (self));

  self->restart_budget = restart_budget;
  self->restart_window_us = (gint64) restart_window_ms * 1000;
  self->deadline_us = (gint64) deadline_ms * 1000;
}
