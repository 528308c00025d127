/* qstore-replica-hub.c: the events workers leave for the replica's owner
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Workers push events into the hub, a queue bounded by the capacity the
 * replica was opened with; the owner's main context takes them out. A
 * full queue makes workers wait: a slow consumer holds them back rather
 * than growing memory.
 */
#include "config.h"

#include "qstore-replica-private.h"

QStoreReplicaEvent *
qstore_replica_event_new (QStoreReplicaEventKind kind,
                          guint64                query,
                          guint64                generation,
                          guint                  worker,
                          guint64                tx)
{
  QStoreReplicaEvent *event = g_new0 (QStoreReplicaEvent, 1);

  event->kind = kind;
  event->query = query;
  event->generation = generation;
  event->worker = worker;
  event->tx = tx;
  return event;
}

void
qstore_replica_event_free (QStoreReplicaEvent *event)
{
  g_clear_pointer (&event->rows, g_variant_unref);
  g_clear_pointer (&event->removed, g_variant_unref);
  g_clear_pointer (&event->added, g_variant_unref);
  g_free (event->reason);
  g_free (event);
}

QStoreReplicaHub *
qstore_replica_hub_new (guint capacity)
{
  QStoreReplicaHub *hub = g_new0 (QStoreReplicaHub, 1);

  g_atomic_ref_count_init (&hub->ref);
  g_mutex_init (&hub->lock);
  g_cond_init (&hub->cond);
  g_queue_init (&hub->events);
  hub->capacity = capacity;
  return hub;
}

QStoreReplicaHub *
qstore_replica_hub_ref (QStoreReplicaHub *hub)
{
  g_atomic_ref_count_inc (&hub->ref);
  return hub;
}

void
qstore_replica_hub_unref (QStoreReplicaHub *hub)
{
  if (!g_atomic_ref_count_dec (&hub->ref))
    return;
  g_queue_clear_full (&hub->events, (GDestroyNotify) qstore_replica_event_free);
  g_mutex_clear (&hub->lock);
  g_cond_clear (&hub->cond);
  g_free (hub);
}

void
qstore_replica_hub_push_locked (QStoreReplicaHub   *hub,
                                QStoreReplicaEvent *event)
{
  g_queue_push_tail (&hub->events, event);
  /* Only the first wakes the owner: it empties the queue or arms itself
   * again. */
  if (hub->events.length == 1 && hub->source != NULL)
    g_source_set_ready_time (hub->source, 0);
  g_cond_broadcast (&hub->cond);
}
