/* qstore-replica.c: one writer, worker threads hosting live queries
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "qstore-error.h"
#include "qstore-i18n-private.h"
#include "qstore-lifecycle-private.h"
#include "qstore-open-private.h"
#include "qstore-replica-private.h"

/**
 * QStoreReplica:
 *
 * A database with one writer and worker threads that keep live queries:
 * register a `SELECT` once, receive its rows, then each change to them as
 * transactions commit, in order, without polling.
 *
 * ## Delivery order
 *
 * 1. [method@Replica.register_query] places the query on worker
 *    `query_id % n_workers`, which runs it on a snapshot of the last
 *    committed transaction and emits [signal@Replica::hydrated] with its
 *    rows and that transaction's id.
 * 2. Each committed transaction that changes what a query reads makes
 *    its worker emit [signal@Replica::changed] slices (the rows that left
 *    and entered the query, at most 1,024 rows each) tagged with the
 *    transaction's id, derived on a snapshot of exactly that transaction.
 *    A large transaction streams: between its statements, every 1,024
 *    captured row changes go to the workers, which may emit slices for it
 *    before it commits.
 * 3. Once the transaction is durable and every slice of it was emitted,
 *    each worker that hosts queries emits [signal@Replica::progressed]
 *    with its place and the transaction's id: every query it hosts is now
 *    at that transaction.
 *
 * A consumer therefore buffers a query's slices until the progress of its
 * worker confirms them; after each progress, the rows it holds are what
 * the query gives on a snapshot at that transaction. Events of one query
 * arrive in order. If a streamed transaction rolls back, the queries that
 * showed slices of it get [signal@Replica::faulted]: the consumer drops
 * what it buffered and registers them again.
 *
 * While a streamed transaction is open the workers' views are
 * speculative ([method@Replica.view_is_speculative]): one-shot reads
 * ([method@Replica.read_snapshot]) are refused with
 * %QSTORE_REPLICA_ERROR_READ_REJECTED and registrations with
 * %QSTORE_REPLICA_ERROR_SPECULATIVE (a first result drawn from rows
 * nobody committed would be wrong for the query's whole life);
 * [method@Replica.destroy_query] works. A transaction that never reached
 * 1,024 changes streams nothing, so reads stay served throughout.
 *
 * Live queries are materialized views kept in memory: the same planner
 * and strategies keep them (per changed source key for a filter or
 * projection of one table that keeps its key, per changed group for a
 * `GROUP BY` SQLite can seek by, else a full run of the query), and a
 * transaction that touches more partitions than half of what a query
 * holds runs it in full.
 *
 * ## Events
 *
 * Workers hand their events to one queue of the length given at open,
 * emptied on the main context of the thread that opened the replica,
 * where the signals are emitted. When it is full, the workers wait, and
 * the writer waits for them: a slow consumer holds writes back rather
 * than growing memory. A call on the thread that opened the replica never
 * waits for itself: it emits the queued events while it waits (calls that
 * would wait again, made from such a handler, are refused with
 * %QSTORE_REPLICA_ERROR_BUSY). Each kind of event has its signal, with
 * the query id first; [signal@Replica::event] carries every event as one
 * compact #GVariant, for forwarding.
 *
 * ## Faults
 *
 * A worker whose thread ends, or whose command runs past a deadline, is
 * replaced and its queries get [signal@Replica::faulted]. A worker place
 * that fails more often than its restart budget (3 times a minute) is
 * retired instead: its queries are refused with
 * %QSTORE_REPLICA_ERROR_DEGRADED.
 *
 * ## Requirements
 *
 * Workers read snapshots: the provider must have
 * %QSTORE_CAPABILITY_SNAPSHOTS. A replica is used from one thread at a
 * time; its events may be delivered on the thread that opened it while
 * another one writes.
 */

G_DEFINE_FINAL_TYPE (QStoreReplica, qstore_replica, G_TYPE_OBJECT)

enum {
  PROP_0,
  PROP_N_WORKERS,
  PROP_QUEUE_LENGTH,
  PROP_WRITE_OUT_STEP,
  N_PROPS
};

enum {
  HYDRATED,
  CHANGED,
  PROGRESSED,
  FAULTED,
  EVENT,
  COMMITTED,
  N_SIGNALS
};

static GParamSpec *properties[N_PROPS];
static guint signals[N_SIGNALS];

static const QStoreDatabaseSetup reader_setup = { NULL, 0, NULL, 0 };

#define API_LOCK(self) (locker = g_rec_mutex_locker_new (&(self)->api_lock))

/* The registry */

static void
entry_free (QStoreReplicaEntry *entry)
{
  g_ptr_array_unref (entry->sources);
  g_free (entry);
}

void
qstore_replica_forget_query_locked (QStoreReplica      *self,
                                    QStoreReplicaEntry *entry)
{
  QStoreReplicaSlot *slot = self->slots != NULL ? &self->slots[entry->worker] : NULL;

  if (slot != NULL && slot->tables != NULL)
    {
      for (guint i = 0; i < entry->sources->len; i++)
        {
          const char *name = entry->sources->pdata[i];
          guint n = GPOINTER_TO_UINT (g_hash_table_lookup (slot->tables, name));

          if (n <= 1)
            g_hash_table_remove (slot->tables, name);
          else
            g_hash_table_insert (slot->tables, g_strdup (name), GUINT_TO_POINTER (n - 1));
        }
      slot->n_queries--;
    }
  g_hash_table_remove (self->queries, &entry->id);
}

/* Delivery */

static GVariant *
event_payload (QStoreReplicaEvent *event)
{
  switch (event->kind)
    {
    case QSTORE_REPLICA_EVENT_HYDRATED:
      return g_variant_new ("(tt@aav)", event->query, event->tx, event->rows);
    case QSTORE_REPLICA_EVENT_CHANGED:
      return g_variant_new ("(tt@aav@aav)", event->query, event->tx, event->removed,
                            event->added);
    case QSTORE_REPLICA_EVENT_PROGRESSED:
      return g_variant_new ("(ut)", event->worker, event->tx);
    case QSTORE_REPLICA_EVENT_FAULTED:
    default:
      return g_variant_new ("(ts)", event->query, event->reason);
    }
}

static const char * const event_names[] = { "hydrated", "changed", "progressed", "faulted" };

/* Whether @event is still wanted: the query it is about is registered
 * under the same registration (a destroyed or re-registered query hears
 * nothing of its past). A fault removes the query. */
static gboolean
event_wanted (QStoreReplica      *self,
              QStoreReplicaEvent *event)
{
  QStoreReplicaEntry *entry;
  gboolean wanted;

  if (event->kind == QSTORE_REPLICA_EVENT_PROGRESSED)
    return TRUE;

  g_mutex_lock (&self->registry_lock);
  entry = g_hash_table_lookup (self->queries, &event->query);
  if (event->settled)
    {
      gpointer generation;

      wanted = g_hash_table_lookup_extended (self->settled, &event->query, NULL, &generation) &&
               *(guint64 *) generation == event->generation;
      if (wanted)
        g_hash_table_remove (self->settled, &event->query);
    }
  else
    {
      wanted = entry != NULL && entry->generation == event->generation;
      if (wanted && event->kind == QSTORE_REPLICA_EVENT_FAULTED)
        qstore_replica_forget_query_locked (self, entry);
    }
  g_mutex_unlock (&self->registry_lock);
  return wanted;
}

static void
emit_event (QStoreReplica      *self,
            QStoreReplicaEvent *event)
{
  if (!event_wanted (self, event))
    return;

  switch (event->kind)
    {
    case QSTORE_REPLICA_EVENT_HYDRATED:
      g_signal_emit (self, signals[HYDRATED], 0, event->query, event->tx, event->rows);
      break;
    case QSTORE_REPLICA_EVENT_CHANGED:
      g_signal_emit (self, signals[CHANGED], 0, event->query, event->tx, event->removed,
                     event->added);
      break;
    case QSTORE_REPLICA_EVENT_PROGRESSED:
      g_signal_emit (self, signals[PROGRESSED], 0, event->worker, event->tx);
      break;
    case QSTORE_REPLICA_EVENT_FAULTED:
    default:
      g_signal_emit (self, signals[FAULTED], 0, event->query, event->reason);
      break;
    }
  if (g_signal_has_handler_pending (self, signals[EVENT], 0, FALSE))
    {
      g_autoptr(GVariant) payload = g_variant_ref_sink (event_payload (event));

      g_signal_emit (self, signals[EVENT], 0, event_names[event->kind], payload);
    }
}

guint
qstore_replica_deliver (QStoreReplica *self,
                        guint          max)
{
  QStoreReplicaHub *hub = self->hub;
  GQueue batch = G_QUEUE_INIT;
  guint n;

  g_mutex_lock (&hub->lock);
  while (batch.length < max && hub->events.length > 0)
    g_queue_push_tail (&batch, g_queue_pop_head (&hub->events));
  if (hub->events.length > 0 && hub->source != NULL)
    g_source_set_ready_time (hub->source, 0);
  g_cond_broadcast (&hub->cond);
  g_mutex_unlock (&hub->lock);

  n = batch.length;
  g_object_ref (self);
  while (batch.length > 0)
    {
      QStoreReplicaEvent *event = g_queue_pop_head (&batch);

      emit_event (self, event);
      qstore_replica_event_free (event);
    }
  g_object_unref (self);
  return n;
}

typedef struct
{
  GSource        source;
  QStoreReplica *replica;   /* not owned: destroyed before it */
} EventSource;

static gboolean
event_source_dispatch (GSource     *source,
                       GSourceFunc  callback,
                       gpointer     user_data)
{
  g_source_set_ready_time (source, -1);
  qstore_replica_deliver (((EventSource *) source)->replica, 64);
  return G_SOURCE_CONTINUE;
}

static GSourceFuncs event_source_funcs = {
  NULL, NULL, event_source_dispatch, NULL, NULL, NULL
};

static gboolean
check_liveness (gpointer data)
{
  QStoreReplica *self = data;

  /* A writer on another thread may be inside a call: it checks on its
   * own while it waits. */
  if (g_rec_mutex_trylock (&self->api_lock))
    {
      qstore_replica_pool_check (self);
      g_rec_mutex_unlock (&self->api_lock);
    }
  return G_SOURCE_CONTINUE;
}

/* Checks */

gboolean
qstore_replica_check_usable (QStoreReplica  *self,
                             gboolean        waits,
                             GError        **error)
{
  if (self->closed)
    {
      g_set_error_literal (error, QSTORE_ERROR, QSTORE_ERROR_CLOSED,
                           _("The replica is closed: open it again to use it"));
      return FALSE;
    }
  if (waits && self->nested > 0)
    {
      g_set_error_literal (error, QSTORE_REPLICA_ERROR, QSTORE_REPLICA_ERROR_BUSY,
                           _("A replica event handler cannot call this while the replica "
                           "waits for room for its events: call it once the handler "
                           "returned (from an idle callback, for instance)"));
      return FALSE;
    }
  return TRUE;
}

/* Commits and the workers they concern */

static void
pending_free (QStoreReplicaPending *pending)
{
  g_object_unref (pending->change_set);
  g_free (pending->concerned);
  g_free (pending->snapshots);
  g_free (pending);
}

static void
on_committed (QStoreCoordinator *coordinator,
              QStoreChangeSet   *change_set,
              QStoreReplica     *self)
{
  g_autoptr(GHashTable) tables = g_hash_table_new (qstore_mview_name_hash, qstore_mview_name_equal);
  QStoreReplicaPending *pending = g_new0 (QStoreReplicaPending, 1);
  const QStoreChange *changes;
  guint n_changes;

  pending->change_set = g_object_ref (change_set);
  pending->snapshots = g_new0 (QStoreSnapshot *, self->n_workers);
  pending->concerned = g_new0 (gboolean, self->n_workers);
  changes = qstore_change_set_peek_changes (change_set, &n_changes);
  for (guint i = 0; i < n_changes; i++)
    g_hash_table_add (tables, changes[i].table->table);

  /* The snapshots are taken now, while the store is exactly as this
   * commit left it. */
  g_mutex_lock (&self->registry_lock);
  for (guint w = 0; w < self->n_workers; w++)
    {
      QStoreReplicaSlot *slot = &self->slots[w];
      gboolean affected = slot->streamed;
      GHashTableIter iter;
      const char *table;

      if (slot->worker == NULL || (slot->n_queries == 0 && !slot->streamed))
        continue;
      pending->concerned[w] = TRUE;
      g_hash_table_iter_init (&iter, tables);
      while (!affected && g_hash_table_iter_next (&iter, (gpointer *) &table, NULL))
        affected = qstore_replica_slot_reads (slot, table);
      if (affected)
        {
          g_autoptr(GError) error = NULL;

          pending->snapshots[w] = qstore_provider_begin_snapshot (self->provider, &error);
          if (pending->snapshots[w] == NULL)
            g_critical ("Replica worker %u cannot follow transaction %" G_GUINT64_FORMAT
                        ": %s", w, qstore_change_set_get_tx_id (change_set), error->message);
        }
    }
  g_mutex_unlock (&self->registry_lock);
  g_ptr_array_add (self->pending, pending);
}

void
qstore_replica_dispatch_pending (QStoreReplica *self)
{
  while (self->pending->len > 0)
    {
      QStoreReplicaPending *pending = g_ptr_array_steal_index (self->pending, 0);

      for (guint w = 0; w < self->n_workers; w++)
        {
          QStoreReplicaCommand *command;

          if (!pending->concerned[w])
            continue;
          command = qstore_replica_command_new (QSTORE_REPLICA_COMMAND_COMMIT);
          command->credit = TRUE;
          command->tx = qstore_change_set_get_tx_id (pending->change_set);
          command->change_set = g_object_ref (pending->change_set);
          command->snapshot = g_steal_pointer (&pending->snapshots[w]);
          qstore_replica_pool_send (self, w, command);
        }
      g_signal_emit (self, signals[COMMITTED], 0, pending->change_set);
      pending_free (pending);
    }
}

/* Streaming */

void
qstore_replica_stream_changes (QStoreReplica *self,
                               GArray        *changes)
{
  guint64 tx = qstore_replica_get_committed_tx_id (self) + 1;

  for (guint first = 0; first < changes->len; first += QSTORE_REPLICA_CHUNK_ROWS)
    {
      guint n = MIN (changes->len - first, QSTORE_REPLICA_CHUNK_ROWS);
      g_autoptr(GHashTable) tables = g_hash_table_new (qstore_mview_name_hash,
                                                        qstore_mview_name_equal);
      g_autoptr(GArray) chunk = NULL;
      gboolean *to = g_newa (gboolean, self->n_workers);

      for (guint i = first; i < first + n; i++)
        g_hash_table_add (tables, g_array_index (changes, QStoreChange, i).table->table);

      g_mutex_lock (&self->registry_lock);
      for (guint w = 0; w < self->n_workers; w++)
        {
          GHashTableIter iter;
          const char *table;

          to[w] = FALSE;
          if (self->slots[w].worker == NULL)
            continue;
          g_hash_table_iter_init (&iter, tables);
          while (!to[w] && g_hash_table_iter_next (&iter, (gpointer *) &table, NULL))
            to[w] = qstore_replica_slot_reads (&self->slots[w], table);
          self->slots[w].streamed = self->slots[w].streamed || to[w];
        }
      g_mutex_unlock (&self->registry_lock);

      /* The chunk owns its changes; the workers share it. */
      chunk = g_array_sized_new (FALSE, FALSE, sizeof (QStoreChange), n);
      g_array_set_clear_func (chunk, qstore_change_clear);
      for (guint i = first; i < first + n; i++)
        {
          QStoreChange *change = &g_array_index (changes, QStoreChange, i);

          g_array_append_val (chunk, *change);
          memset (change, 0, sizeof *change);
        }

      self->speculative = TRUE;
      self->n_chunks++;
      self->n_streamed += n;
      for (guint w = 0; w < self->n_workers; w++)
        {
          QStoreReplicaCommand *command;

          if (!to[w])
            continue;
          command = qstore_replica_command_new (QSTORE_REPLICA_COMMAND_CHUNK);
          command->credit = TRUE;
          command->tx = tx;
          command->changes = g_array_ref (chunk);
          qstore_replica_pool_send (self, w, command);
        }
    }
}

void
qstore_replica_end_stream (QStoreReplica *self,
                           gboolean       committed)
{
  for (guint w = 0; w < self->n_workers; w++)
    {
      QStoreReplicaSlot *slot = &self->slots[w];

      if (slot->streamed && !committed)
        qstore_replica_pool_send (self, w, qstore_replica_command_new (QSTORE_REPLICA_COMMAND_ABORT));
      g_mutex_lock (&self->registry_lock);
      slot->streamed = FALSE;
      g_mutex_unlock (&self->registry_lock);
    }
  self->speculative = FALSE;
  self->n_chunks = 0;
  self->n_streamed = 0;
}

/* Databases */

QStoreDatabase *
qstore_replica_open_reader (QStoreReplica  *self,
                            GError        **error)
{
  /* No extensions: materialized views' contents are tables to a reader,
   * which follows them as the writer changes them. */
  return qstore_database_open_on_provider (self->provider, QSTORE_OPEN_READ_ONLY,
                                           &reader_setup, error);
}

static gboolean
open_writer (QStoreReplica  *self,
             GError        **error)
{
  self->writer = qstore_database_open_on_provider (self->provider, QSTORE_OPEN_NONE,
                                                   qstore_database_get_full_setup (), error);
  if (self->writer == NULL ||
      !qstore_coordinator_set_write_out_step (self->writer->coordinator, self->write_out_step,
                                              error))
    return FALSE;
  /* Connected before any transaction begins: every commit records its
   * changes for the workers. */
  self->committed_handler = g_signal_connect (self->writer->coordinator, "committed",
                                              G_CALLBACK (on_committed), self);
  return TRUE;
}

static void
close_writer (QStoreReplica *self,
              gboolean       cleanly,
              GError       **error)
{
  if (self->writer == NULL)
    return;
  g_clear_signal_handler (&self->committed_handler, self->writer->coordinator);
  if (cleanly)
    qstore_database_close (self->writer, error);
  g_clear_object (&self->writer);
}

/* After DDL changed the store under it: the writer and the one-off
 * reader read the catalog again. */
gboolean
qstore_replica_reopen_writer (QStoreReplica  *self,
                              GError        **error)
{
  /* What it would write at a clean close, the batch wrote. */
  close_writer (self, FALSE, NULL);
  g_clear_object (&self->reader);
  if (!open_writer (self, error) ||
      !(self->reader = qstore_replica_open_reader (self, error)))
    return FALSE;
  self->schema_cookie = qstore_replica_compute_schema_cookie (self);
  return TRUE;
}

gint64
qstore_replica_compute_schema_cookie (QStoreReplica *self)
{
  g_autoptr(GChecksum) checksum = g_checksum_new (G_CHECKSUM_SHA256);
  g_autoptr(QStoreKV) catalog = NULL;
  g_autoptr(QStoreIter) iter = NULL;
  guint8 digest[32];
  gsize digest_len = sizeof digest;
  guint64 cookie = 0;

  if (!(catalog = qstore_provider_get_catalog_store (self->provider, NULL)) ||
      !(iter = qstore_kv_iterate (catalog, NULL, NULL)))
    return 0;
  while (qstore_iter_next (iter, NULL))
    {
      g_autoptr(GBytes) key = qstore_iter_get_key (iter);
      gsize len;
      const guint8 *value;

      if (qstore_catalog_key_classify (key, NULL, NULL) == QSTORE_CATALOG_KEY_META)
        continue;
      value = qstore_iter_peek_value (iter, &len);
      g_checksum_update (checksum, g_bytes_get_data (key, NULL), g_bytes_get_size (key));
      g_checksum_update (checksum, (const guint8 *) "\0", 1);
      g_checksum_update (checksum, value, len);
      g_checksum_update (checksum, (const guint8 *) "\0", 1);
    }
  g_checksum_get_digest (checksum, digest, &digest_len);
  for (guint i = 0; i < 8; i++)
    cookie = (cookie << 8) | digest[i];
  return (gint64) (cookie & G_MAXINT64);
}

/* The object */

static void
teardown (QStoreReplica *self,
          gboolean       cleanly,
          GError       **error)
{
  if (self->hub != NULL)
    {
      g_mutex_lock (&self->hub->lock);
      self->hub->closed = TRUE;
      g_cond_broadcast (&self->hub->cond);
      g_mutex_unlock (&self->hub->lock);
    }
  qstore_replica_pool_stop (self);
  if (self->hub != NULL)
    {
      GSource *source;

      g_mutex_lock (&self->hub->lock);
      source = g_steal_pointer (&self->hub->source);
      g_mutex_unlock (&self->hub->lock);
      if (source != NULL)
        {
          g_source_destroy (source);
          g_source_unref (source);
        }
    }
  if (self->liveness != NULL)
    {
      g_source_destroy (self->liveness);
      g_clear_pointer (&self->liveness, g_source_unref);
    }
  g_clear_pointer (&self->pending, g_ptr_array_unref);
  g_clear_object (&self->reader);
  close_writer (self, cleanly, error);
  if (self->provider != NULL)
    {
      qstore_provider_close_all (self->provider);
      g_clear_object (&self->provider);
    }
  self->closed = TRUE;
}

static void
qstore_replica_dispose (GObject *object)
{
  QStoreReplica *self = QSTORE_REPLICA (object);

  /* Without a close, as a crash would: no clean-shutdown marker. */
  if (!self->closed)
    teardown (self, FALSE, NULL);

  G_OBJECT_CLASS (qstore_replica_parent_class)->dispose (object);
}

static void
qstore_replica_finalize (GObject *object)
{
  QStoreReplica *self = QSTORE_REPLICA (object);

  g_clear_pointer (&self->hub, qstore_replica_hub_unref);
  g_clear_pointer (&self->queries, g_hash_table_unref);
  g_clear_pointer (&self->settled, g_hash_table_unref);
  g_clear_pointer (&self->context, g_main_context_unref);
  g_clear_pointer (&self->owner, g_thread_unref);
  g_free (self->uri);
  g_mutex_clear (&self->registry_lock);
  g_rec_mutex_clear (&self->api_lock);

  G_OBJECT_CLASS (qstore_replica_parent_class)->finalize (object);
}

static void
qstore_replica_get_property (GObject    *object,
                             guint       prop_id,
                             GValue     *value,
                             GParamSpec *pspec)
{
  QStoreReplica *self = QSTORE_REPLICA (object);

  switch (prop_id)
    {
    case PROP_N_WORKERS:
      g_value_set_uint (value, self->n_workers);
      break;

    case PROP_QUEUE_LENGTH:
      g_value_set_uint (value, self->hub != NULL ? self->hub->capacity : 0);
      break;

    case PROP_WRITE_OUT_STEP:
      g_value_set_uint64 (value, qstore_replica_get_write_out_step (self));
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
qstore_replica_set_property (GObject      *object,
                             guint         prop_id,
                             const GValue *value,
                             GParamSpec   *pspec)
{
  QStoreReplica *self = QSTORE_REPLICA (object);
  g_autoptr(GError) error = NULL;

  switch (prop_id)
    {
    case PROP_WRITE_OUT_STEP:
      /* The range is the pspec's: only a closed replica refuses. */
      if (!qstore_replica_set_write_out_step (self, g_value_get_uint64 (value), &error))
        g_critical ("%s", error->message);
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
qstore_replica_class_init (QStoreReplicaClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = qstore_replica_dispose;
  object_class->finalize = qstore_replica_finalize;
  object_class->get_property = qstore_replica_get_property;
  object_class->set_property = qstore_replica_set_property;

  /**
   * QStoreReplica:n-workers:
   *
   * How many worker threads host the live queries.
   */
  properties[PROP_N_WORKERS] =
    g_param_spec_uint ("n-workers", NULL, NULL, 1, G_MAXUINT, 1,
                       G_PARAM_READABLE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);

  /**
   * QStoreReplica:queue-length:
   *
   * How many events may wait for the consumer before the workers wait.
   */
  properties[PROP_QUEUE_LENGTH] =
    g_param_spec_uint ("queue-length", NULL, NULL, 1, G_MAXUINT, QSTORE_REPLICA_DEFAULT_QUEUE_LENGTH,
                       G_PARAM_READABLE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);

  /**
   * QStoreReplica:write-out-step:
   *
   * The bytes of a write transaction the writer keeps in memory before
   * it writes them out into the provider's own write transaction: see
   * [method@Replica.set_write_out_step].
   */
  properties[PROP_WRITE_OUT_STEP] =
    g_param_spec_uint64 ("write-out-step", NULL, NULL,
                         QSTORE_COORDINATOR_SPILL_BYTES_MIN, QSTORE_COORDINATOR_SPILL_BYTES_MAX,
                         QSTORE_COORDINATOR_SPILL_BYTES,
                         G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);

  g_object_class_install_properties (object_class, N_PROPS, properties);

  /**
   * QStoreReplica::hydrated:
   * @self: the replica
   * @query_id: the live query
   * @tx_id: the transaction its rows are at
   * @rows: every row of the query, each an array of boxed values (`aav`)
   *
   * A registered query ran: its rows as transaction @tx_id left them. The
   * first event of a registration.
   */
  signals[HYDRATED] =
    g_signal_new ("hydrated", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                  G_TYPE_NONE, 3, G_TYPE_UINT64, G_TYPE_UINT64, G_TYPE_VARIANT);

  /**
   * QStoreReplica::changed:
   * @self: the replica
   * @query_id: the live query
   * @tx_id: the transaction that changed its rows
   * @removed: rows that left the query (`aav`)
   * @added: rows that entered it (`aav`)
   *
   * A slice of what transaction @tx_id did to the query: apply it to what
   * you hold once [signal@Replica::progressed] confirms @tx_id. A
   * transaction's changes may come in several slices.
   */
  signals[CHANGED] =
    g_signal_new ("changed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                  G_TYPE_NONE, 4, G_TYPE_UINT64, G_TYPE_UINT64, G_TYPE_VARIANT, G_TYPE_VARIANT);

  /**
   * QStoreReplica::progressed:
   * @self: the replica
   * @worker: the worker's place
   * @tx_id: the transaction
   *
   * Transaction @tx_id is durable and the worker at @worker emitted every
   * slice of it: each query it hosts ([method@Replica.get_worker_for_query])
   * is at @tx_id.
   */
  signals[PROGRESSED] =
    g_signal_new ("progressed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                  G_TYPE_NONE, 2, G_TYPE_UINT, G_TYPE_UINT64);

  /**
   * QStoreReplica::faulted:
   * @self: the replica
   * @query_id: the live query
   * @reason: why
   *
   * The query ended: drop the slices it has not confirmed, and register
   * it again to go on. It ends when a streamed transaction it showed
   * slices of rolls back, when its worker fails, or when computing it
   * fails.
   */
  signals[FAULTED] =
    g_signal_new ("faulted", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                  G_TYPE_NONE, 2, G_TYPE_UINT64, G_TYPE_STRING);

  /**
   * QStoreReplica::event:
   * @self: the replica
   * @kind: `hydrated`, `changed`, `progressed` or `faulted`
   * @payload: the event: `(ttaav)` query, transaction and rows;
   *   `(ttaavaav)` query, transaction, removed and added rows; `(ut)`
   *   worker and transaction; `(ts)` query and reason
   *
   * Every event, after the signal of its kind, as one value: what a
   * service forwards.
   */
  signals[EVENT] =
    g_signal_new ("event", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                  G_TYPE_NONE, 2, G_TYPE_STRING, G_TYPE_VARIANT);

  /**
   * QStoreReplica::committed:
   * @self: the replica
   * @change_set: what the transaction changed
   *
   * A transaction of the replica's writer committed, and its changes went
   * to the workers. Emitted on the thread that committed, in commit order.
   * A transaction that streamed to the workers while it ran
   * ([const@REPLICA_CHUNK_ROWS]) carries only the changes made after its
   * last streamed chunk in @change_set; its commit info counts them all.
   */
  signals[COMMITTED] =
    g_signal_new ("committed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                  G_TYPE_NONE, 1, QSTORE_TYPE_CHANGE_SET);
}

static void
qstore_replica_init (QStoreReplica *self)
{
  g_mutex_init (&self->registry_lock);
  g_rec_mutex_init (&self->api_lock);
  self->queries = g_hash_table_new_full (g_int64_hash, g_int64_equal, NULL,
                                         (GDestroyNotify) entry_free);
  self->settled = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, g_free);
  self->pending = g_ptr_array_new_with_free_func ((GDestroyNotify) pending_free);
  self->restart_budget = QSTORE_REPLICA_DEFAULT_RESTART_BUDGET;
  self->restart_window_us = (gint64) QSTORE_REPLICA_DEFAULT_RESTART_WINDOW_MS * 1000;
  self->deadline_us = (gint64) QSTORE_REPLICA_DEFAULT_DEADLINE_MS * 1000;
  self->write_out_step = QSTORE_COORDINATOR_SPILL_BYTES;
}

/**
 * qstore_replica_open:
 * @uri: where the store is, as for qstore_database_open()
 * @n_workers: how many worker threads host live queries; 0 for one per
 *   processor
 * @queue_length: how many events may wait for the consumer; 0 for 256
 * @error: return location for a #GError
 *
 * Opens the store at @uri as a replica: one writer, and @n_workers
 * threads each reading its own snapshot. Events are delivered on the
 * thread-default main context of the calling thread.
 *
 * Returns: (transfer full): the replica, or %NULL with
 *   %QSTORE_ERROR_UNSUPPORTED when the provider has no snapshots, or the
 *   error of opening the store
 */
QStoreReplica *
qstore_replica_open (const char  *uri,
                     guint        n_workers,
                     guint        queue_length,
                     GError     **error)
{
  g_autoptr(QStoreReplica) self = NULL;
  g_autoptr(QStoreProvider) provider = NULL;
  EventSource *source;

  g_return_val_if_fail (uri != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!(provider = qstore_provider_new_for_uri (uri, QSTORE_OPEN_NONE, error)))
    return NULL;
  if (!(qstore_provider_get_capabilities (provider) & QSTORE_CAPABILITY_SNAPSHOTS))
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_UNSUPPORTED,
                   _("The %s provider of “%s” has no snapshots, and a replica's workers each "
                   "read one committed state while the writer goes on: open it with a "
                   "provider that has them (memory, lmdb or sqlite)"),
                   qstore_provider_get_name (provider), uri);
      qstore_provider_close_all (provider);
      return NULL;
    }

  self = g_object_new (QSTORE_TYPE_REPLICA, NULL);
  self->uri = g_strdup (uri);
  self->provider = g_steal_pointer (&provider);
  self->n_workers = n_workers > 0 ? n_workers : MAX (1, (guint) g_get_num_processors ());
  self->owner = g_thread_ref (g_thread_self ());
  self->context = g_main_context_ref_thread_default ();
  self->hub = qstore_replica_hub_new (queue_length > 0 ? queue_length
                                                       : QSTORE_REPLICA_DEFAULT_QUEUE_LENGTH);

  if (!open_writer (self, error) ||
      !(self->reader = qstore_replica_open_reader (self, error)))
    return NULL;

  source = (EventSource *) g_source_new (&event_source_funcs, sizeof (EventSource));
  source->replica = self;
  g_source_set_static_name ((GSource *) source, "QStoreReplica events");
  g_source_set_ready_time ((GSource *) source, -1);
  g_source_attach ((GSource *) source, self->context);
  self->hub->source = (GSource *) source;

  if (!qstore_replica_pool_start (self, error))
    return NULL;

  self->liveness = g_timeout_source_new (500);
  g_source_set_static_name (self->liveness, "QStoreReplica liveness");
  g_source_set_callback (self->liveness, check_liveness, self, NULL);
  g_source_attach (self->liveness, self->context);

  self->schema_cookie = qstore_replica_compute_schema_cookie (self);
  return g_steal_pointer (&self);
}

/**
 * qstore_replica_close:
 * @self: a #QStoreReplica
 * @error: return location for a #GError
 *
 * Stops the workers, rolls back a write transaction still open, and
 * closes the store cleanly. Events not delivered yet are dropped. Closing
 * twice is fine.
 *
 * Returns: %TRUE on success; the replica is closed either way
 */
gboolean
qstore_replica_close (QStoreReplica  *self,
                      GError        **error)
{
  GError *local_error = NULL;

  g_return_val_if_fail (QSTORE_IS_REPLICA (self), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (self->closed)
    return TRUE;
  if (!qstore_replica_check_usable (self, TRUE, error))
    return FALSE;
  {
    g_autoptr(GRecMutexLocker) locker = g_rec_mutex_locker_new (&self->api_lock);

    qstore_replica_rollback_write (self);
    teardown (self, TRUE, &local_error);
  }
  if (local_error != NULL)
    {
      g_propagate_error (error, local_error);
      return FALSE;
    }
  return TRUE;
}

/**
 * qstore_replica_get_n_workers:
 * @self: a #QStoreReplica
 *
 * Gets how many worker threads host live queries.
 *
 * Returns: the number of workers
 */
guint
qstore_replica_get_n_workers (QStoreReplica *self)
{
  g_return_val_if_fail (QSTORE_IS_REPLICA (self), 0);
  return self->n_workers;
}

/**
 * qstore_replica_get_queue_length:
 * @self: a #QStoreReplica
 *
 * Gets how many events may wait for the consumer before workers wait.
 *
 * Returns: the length of the event queue
 */
guint
qstore_replica_get_queue_length (QStoreReplica *self)
{
  g_return_val_if_fail (QSTORE_IS_REPLICA (self), 0);
  return self->hub->capacity;
}

/**
 * qstore_replica_get_committed_tx_id:
 * @self: a #QStoreReplica
 *
 * Gets the id of the last durably committed transaction.
 *
 * Returns: the transaction id, 0 when none committed yet
 */
guint64
qstore_replica_get_committed_tx_id (QStoreReplica *self)
{
  g_return_val_if_fail (QSTORE_IS_REPLICA (self), 0);
  if (self->writer == NULL)
    return 0;
  return qstore_coordinator_get_last_tx_id (self->writer->coordinator);
}

/**
 * qstore_replica_get_schema_cookie:
 * @self: a #QStoreReplica
 *
 * Gets a number that changes whenever the schema does (a digest of the
 * catalog's tables, indexes and views): compare it across calls to learn
 * that DDL ran.
 *
 * Returns: the schema cookie, never negative
 */
gint64
qstore_replica_get_schema_cookie (QStoreReplica *self)
{
  g_return_val_if_fail (QSTORE_IS_REPLICA (self), 0);
  return self->schema_cookie;
}

/**
 * qstore_replica_view_is_speculative:
 * @self: a #QStoreReplica
 *
 * Tells whether the workers' views hold uncommitted rows: from the moment
 * the open write transaction streams its first chunk until it commits or
 * rolls back. One-shot reads and registrations are refused meanwhile;
 * this lets a caller wait for the commit instead.
 *
 * Returns: %TRUE while a streamed transaction is open
 */
gboolean
qstore_replica_view_is_speculative (QStoreReplica *self)
{
  g_return_val_if_fail (QSTORE_IS_REPLICA (self), FALSE);
  return self->speculative;
}

/**
 * qstore_replica_is_write_open:
 * @self: a #QStoreReplica
 *
 * Tells whether a write transaction is open.
 *
 * Returns: %TRUE between qstore_replica_begin_write() and its end
 */
gboolean
qstore_replica_is_write_open (QStoreReplica *self)
{
  g_return_val_if_fail (QSTORE_IS_REPLICA (self), FALSE);
  return self->txn != NULL;
}

/* Live queries */

/**
 * qstore_replica_get_worker_for_query:
 * @self: a #QStoreReplica
 * @query_id: a live query id
 *
 * Tells which worker hosts (or would host) query @query_id: the one its
 * [signal@Replica::progressed] comes from.
 *
 * Returns: the worker's place, @query_id modulo the number of workers
 */
guint
qstore_replica_get_worker_for_query (QStoreReplica *self,
                                     guint64        query_id)
{
  g_return_val_if_fail (QSTORE_IS_REPLICA (self), 0);
  return (guint) (query_id % self->n_workers);
}

/**
 * qstore_replica_worker_is_degraded:
 * @self: a #QStoreReplica
 * @worker: a worker's place
 *
 * Tells whether the worker at @worker was retired after it failed more
 * often than its restart budget allows.
 *
 * Returns: %TRUE when the place is retired
 */
gboolean
qstore_replica_worker_is_degraded (QStoreReplica *self,
                                   guint          worker)
{
  g_return_val_if_fail (QSTORE_IS_REPLICA (self), FALSE);
  g_return_val_if_fail (worker < self->n_workers, FALSE);

  if (self->slots == NULL)
    return FALSE;
  return self->slots[worker].degraded;
}

static gboolean
check_place (QStoreReplica  *self,
             guint           worker,
             GError        **error)
{
  qstore_replica_pool_check (self);
  if (self->slots[worker].degraded)
    {
      g_set_error (error, QSTORE_REPLICA_ERROR, QSTORE_REPLICA_ERROR_DEGRADED,
                   _("Replica worker %u failed more often than its restart budget allows and "
                   "is retired: queries it would host (ids ≡ %u mod %u) are refused until the "
                   "replica is opened again"), worker, worker, self->n_workers);
      return FALSE;
    }
  return TRUE;
}

/**
 * qstore_replica_register_query:
 * @self: a #QStoreReplica
 * @query_id: an id of the caller's choosing, not in use
 * @sql: one `SELECT`
 * @worker: (out) (optional): the place of the worker that hosts it
 * @error: return location for a #GError
 *
 * Registers a live query on worker `@query_id % n_workers`. Its
 * [signal@Replica::hydrated] event follows, with its rows at the last
 * committed transaction, then its changes as transactions commit.
 *
 * Refused with %QSTORE_REPLICA_ERROR_SPECULATIVE while a streamed
 * transaction is open (see [method@Replica.view_is_speculative]), with
 * %QSTORE_REPLICA_ERROR_DEGRADED when its worker is retired, with
 * %QSTORE_ERROR_EXISTS when @query_id is in use, and with the SQL error
 * when @sql is not one query that only reads (TEMP tables, which workers
 * cannot see, included).
 *
 * Returns: %TRUE when the query is registered
 */
gboolean
qstore_replica_register_query (QStoreReplica  *self,
                               guint64         query_id,
                               const char     *sql,
                               guint          *worker,
                               GError        **error)
{
  g_autoptr(GRecMutexLocker) locker = NULL;
  g_autofree char *label = NULL;
  g_autofree char *name = NULL;
  g_autoptr(Plan) plan = NULL;
  g_autoptr(QStoreSnapshot) snapshot = NULL;
  QStoreReplicaEntry *entry;
  QStoreReplicaCommand *command;
  QStoreReplicaSlot *slot;
  guint place;

  g_return_val_if_fail (QSTORE_IS_REPLICA (self), FALSE);
  g_return_val_if_fail (sql != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (!qstore_replica_check_usable (self, TRUE, error))
    return FALSE;
  API_LOCK (self);

  if (self->speculative)
    {
      g_set_error (error, QSTORE_REPLICA_ERROR, QSTORE_REPLICA_ERROR_SPECULATIVE,
                   "Live query %" G_GUINT64_FORMAT " cannot be registered while the open write "
                   "transaction streams (its first rows would hold uncommitted ones): "
                   "register it after the commit", query_id);
      return FALSE;
    }
  place = qstore_replica_get_worker_for_query (self, query_id);
  if (!check_place (self, place, error))
    return FALSE;

  g_mutex_lock (&self->registry_lock);
  entry = g_hash_table_lookup (self->queries, &query_id);
  g_mutex_unlock (&self->registry_lock);
  if (entry != NULL)
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_EXISTS,
                   "Live query %" G_GUINT64_FORMAT " is registered already: destroy it first, "
                   "or choose another id", query_id);
      return FALSE;
    }

  label = g_strdup_printf ("Live query %" G_GUINT64_FORMAT, query_id);
  name = g_strdup_printf ("_qstore_live_%" G_GUINT64_FORMAT, query_id);
  if (!(plan = qstore_mview_plan_new_for (self->writer, label, name, sql, NULL, error)))
    return FALSE;
  if (plan->has_temp)
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                   _("%s reads a TEMP table, which lives on the writer's connection only: the "
                   "workers cannot see it; query qstore tables"), label);
      return FALSE;
    }

  /* Commits before it reach the worker first; the query starts at the
   * state the last of them left. */
  qstore_replica_dispatch_pending (self);
  if (!(snapshot = qstore_provider_begin_snapshot (self->provider, error)))
    return FALSE;

  slot = &self->slots[place];
  entry = g_new0 (QStoreReplicaEntry, 1);
  entry->id = query_id;
  entry->worker = place;
  entry->sources = g_ptr_array_new_with_free_func (g_free);
  for (guint i = 0; i < plan->sources->len; i++)
    g_ptr_array_add (entry->sources,
                     g_strdup (((PlanSource *) g_ptr_array_index (plan->sources, i))->lower));

  g_mutex_lock (&self->registry_lock);
  entry->generation = ++self->next_generation;
  g_hash_table_insert (self->queries, &entry->id, entry);
  g_hash_table_remove (self->settled, &query_id);
  for (guint i = 0; i < entry->sources->len; i++)
    {
      const char *source = entry->sources->pdata[i];
      guint n = GPOINTER_TO_UINT (g_hash_table_lookup (slot->tables, source));

      g_hash_table_insert (slot->tables, g_strdup (source), GUINT_TO_POINTER (n + 1));
    }
  slot->n_queries++;
  g_mutex_unlock (&self->registry_lock);

  command = qstore_replica_command_new (QSTORE_REPLICA_COMMAND_REGISTER);
  command->credit = TRUE;
  command->query = query_id;
  command->generation = entry->generation;
  command->tx = qstore_replica_get_committed_tx_id (self);
  command->plan = g_steal_pointer (&plan);
  command->snapshot = g_steal_pointer (&snapshot);
  qstore_replica_pool_send (self, place, command);

  if (worker != NULL)
    *worker = place;
  return TRUE;
}

/**
 * qstore_replica_destroy_query:
 * @self: a #QStoreReplica
 * @query_id: a live query id
 *
 * Tears a live query down. No event of it arrives after this returns.
 * Allowed at any time, a streaming transaction included, and from event
 * handlers.
 *
 * Returns: %TRUE when a live query was registered under @query_id
 */
gboolean
qstore_replica_destroy_query (QStoreReplica *self,
                              guint64        query_id)
{
  g_autoptr(GRecMutexLocker) locker = NULL;
  QStoreReplicaEntry *entry;
  QStoreReplicaCommand *command;
  gboolean found;

  g_return_val_if_fail (QSTORE_IS_REPLICA (self), FALSE);

  if (self->closed)
    return FALSE;
  API_LOCK (self);

  g_mutex_lock (&self->registry_lock);
  found = g_hash_table_remove (self->settled, &query_id);
  entry = g_hash_table_lookup (self->queries, &query_id);
  if (entry != NULL)
    {
      command = qstore_replica_command_new (QSTORE_REPLICA_COMMAND_DESTROY);
      command->query = query_id;
      command->generation = entry->generation;
      if (self->slots[entry->worker].worker != NULL)
        {
          QStoreReplicaWorker *worker = self->slots[entry->worker].worker;

          /* A command without credit never waits: safe from handlers. */
          g_mutex_lock (&self->hub->lock);
          g_queue_push_tail (&worker->commands, command);
          g_cond_broadcast (&self->hub->cond);
          g_mutex_unlock (&self->hub->lock);
        }
      else
        qstore_replica_command_free (command);
      qstore_replica_forget_query_locked (self, entry);
      found = TRUE;
    }
  g_mutex_unlock (&self->registry_lock);
  return found;
}

/**
 * qstore_replica_read_snapshot:
 * @self: a #QStoreReplica
 * @query_id: a live query id
 * @tx_id: (out) (optional): the transaction the rows are at
 * @error: return location for a #GError
 *
 * Reads the rows a live query holds now, once, from its worker (after
 * every commit made before this call).
 *
 * Refused with %QSTORE_REPLICA_ERROR_READ_REJECTED while a streamed
 * transaction is open: the views hold rows nobody committed.
 *
 * Returns: (transfer full): the rows (`aav`), or %NULL with
 *   %QSTORE_ERROR_NOT_FOUND for a query that is not registered
 */
GVariant *
qstore_replica_read_snapshot (QStoreReplica  *self,
                              guint64         query_id,
                              guint64        *tx_id,
                              GError        **error)
{
  g_autoptr(GRecMutexLocker) locker = NULL;
  g_autoptr(QStoreReplicaReply) reply = NULL;
  QStoreReplicaCommand *command;
  gboolean registered;
  guint place;

  g_return_val_if_fail (QSTORE_IS_REPLICA (self), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!qstore_replica_check_usable (self, TRUE, error))
    return NULL;
  API_LOCK (self);

  if (self->speculative)
    {
      g_set_error (error, QSTORE_REPLICA_ERROR, QSTORE_REPLICA_ERROR_READ_REJECTED,
                   "The rows of live query %" G_GUINT64_FORMAT " cannot be read while the open "
                   "write transaction streams (they hold uncommitted ones): read them after the "
                   "commit", query_id);
      return NULL;
    }
  g_mutex_lock (&self->registry_lock);
  registered = g_hash_table_contains (self->queries, &query_id);
  g_mutex_unlock (&self->registry_lock);
  place = qstore_replica_get_worker_for_query (self, query_id);
  if (!registered)
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_NOT_FOUND,
                   "No live query %" G_GUINT64_FORMAT " is registered: register it first",
                   query_id);
      return NULL;
    }
  if (!check_place (self, place, error))
    return NULL;

  qstore_replica_dispatch_pending (self);
  reply = qstore_replica_reply_new ();
  command = qstore_replica_command_new (QSTORE_REPLICA_COMMAND_READ);
  command->query = query_id;
  command->reply = qstore_replica_reply_ref (reply);
  if (!qstore_replica_pool_send (self, place, command))
    return (check_place (self, place, error), NULL);
  qstore_replica_pool_wait_reply (self, reply);
  if (reply->error != NULL)
    {
      g_propagate_error (error, g_steal_pointer (&reply->error));
      return NULL;
    }
  if (tx_id != NULL)
    *tx_id = reply->tx;
  return g_steal_pointer (&reply->rows);
}

/**
 * qstore_replica_sync:
 * @self: a #QStoreReplica
 * @error: return location for a #GError
 *
 * Waits until every worker handled what earlier calls gave it, replacing
 * workers that died or hung on the way. On the thread that opened the
 * replica, the events this produced are delivered before it returns; on
 * another, they are queued for its main context.
 *
 * Returns: %TRUE on success
 */
gboolean
qstore_replica_sync (QStoreReplica  *self,
                     GError        **error)
{
  g_autoptr(GRecMutexLocker) locker = NULL;
  g_autoptr(GPtrArray) replies = g_ptr_array_new_with_free_func ((GDestroyNotify) qstore_replica_reply_unref);

  g_return_val_if_fail (QSTORE_IS_REPLICA (self), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (!qstore_replica_check_usable (self, TRUE, error))
    return FALSE;
  API_LOCK (self);

  qstore_replica_dispatch_pending (self);
  qstore_replica_pool_check (self);
  for (guint w = 0; w < self->n_workers; w++)
    {
      QStoreReplicaReply *reply = qstore_replica_reply_new ();
      QStoreReplicaCommand *command = qstore_replica_command_new (QSTORE_REPLICA_COMMAND_SYNC);

      command->reply = qstore_replica_reply_ref (reply);
      if (qstore_replica_pool_send (self, w, command))
        g_ptr_array_add (replies, reply);
      else
        qstore_replica_reply_unref (reply);
    }
  for (guint i = 0; i < replies->len; i++)
    qstore_replica_pool_wait_reply (self, replies->pdata[i]);
  /* A worker that died on the way left faults to report. */
  qstore_replica_pool_check (self);
  if (g_thread_self () == self->owner)
    while (qstore_replica_deliver (self, 64) > 0)
      ;
  return TRUE;
}

/**
 * qstore_replica_query:
 * @self: a #QStoreReplica
 * @sql: one statement that only reads
 * @params: (nullable): its parameters, as for qstore_database_query()
 * @error: return location for a #GError
 *
 * Runs a query on a snapshot of the last committed transaction: an open
 * write transaction's rows are not seen.
 *
 * Returns: (transfer full): the rows, or %NULL with
 *   %QSTORE_ERROR_READ_ONLY for a statement that writes
 */
QStoreResult *
qstore_replica_query (QStoreReplica  *self,
                      const char     *sql,
                      GVariant       *params,
                      GError        **error)
{
  g_autoptr(GRecMutexLocker) locker = NULL;
  g_autoptr(GVariant) owned = params != NULL ? g_variant_ref_sink (params) : NULL;
  g_autoptr(QStoreSnapshot) snapshot = NULL;
  QStoreResult *result;

  g_return_val_if_fail (QSTORE_IS_REPLICA (self), NULL);
  g_return_val_if_fail (sql != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!qstore_replica_check_usable (self, FALSE, error))
    return NULL;
  API_LOCK (self);

  if (!qstore_database_is_read_only_sql (self->reader, sql))
    {
      g_set_error_literal (error, QSTORE_ERROR, QSTORE_ERROR_READ_ONLY,
                           _("A replica's reads only read: write in a transaction of "
                           "qstore_replica_begin_write()"));
      return NULL;
    }
  if (!(snapshot = qstore_provider_begin_snapshot (self->provider, error)))
    return NULL;
  qstore_coordinator_pin_snapshot (self->reader->coordinator, snapshot);
  result = qstore_database_query (self->reader, sql, owned, error);
  qstore_coordinator_pin_snapshot (self->reader->coordinator, NULL);
  qstore_database_forget_rowids (self->reader);
  return result;
}

/**
 * qstore_replica_test_get_queued_events: (skip)
 * @self: a replica
 *
 * For tests only.
 *
 * Returns: how many events wait for the consumer
 */
guint
qstore_replica_test_get_queued_events (QStoreReplica *self)
{
  guint n;

  g_mutex_lock (&self->hub->lock);
  n = self->hub->events.length;
  g_mutex_unlock (&self->hub->lock);
  return n;
}
