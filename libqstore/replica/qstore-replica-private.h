/* qstore-replica-private.h: the replica's parts, and what its tests reach
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "qstore-change-set-private.h"
#include "qstore-coordinator-private.h"
#include "qstore-database-private.h"
#include "qstore-mview-derive-private.h"
#include "qstore-replica.h"

G_BEGIN_DECLS

/* The parts, each in its file:
 *
 * - qstore-replica.c: the object, its registry of live queries, and
 *   delivery: events leave the workers through one bounded queue and are
 *   emitted as signals on the main context of the thread that opened it;
 * - qstore-replica-pool.c: the workers as the writer's side sees them:
 *   commands and their credits, waiting (without ever waiting on itself),
 *   deaths, hangs, respawns and the restart budget;
 * - qstore-replica-worker.c: a worker thread: its reader database pinned
 *   to a snapshot, its live queries, speculation on streamed chunks;
 * - qstore-replica-live.c: one live query, a materialized view kept in
 *   memory (the derivation of qstore-mview-derive.c);
 * - qstore-replica-txn.c: the write transaction, and streaming;
 * - qstore-replica-ddl.c, qstore-replica-overlay.c: DDL batches that
 *   commit with their marker or not at all;
 * - qstore-replica-maintain.c: foreign key audit, maintenance, checkpoint.
 */

/* A worker derives at most this many rows of a streamed transaction
 * ahead of its commit (its overlay of uncommitted rows); past it, what is
 * left waits for the commit. */
#define QSTORE_REPLICA_SPECULATION_ROWS (64 * 1024)
/* Partitions a live query keeps to compute again, per query: past it, the
 * query is computed again whole at the commit. Each is a key and its
 * values, held until the commit once speculation stopped, so a large
 * transaction would otherwise grow every query reading it. */
#define QSTORE_REPLICA_DIRTY_PARTITIONS (4 * 1024)
/* Rows per Changed event. */
#define QSTORE_REPLICA_SLICE_ROWS 1024
/* Commands a worker may have queued that hold a snapshot or rows: the
 * writer waits beyond that, so a slow consumer holds it back rather than
 * growing memory. */
#define QSTORE_REPLICA_CREDITS 8
#define QSTORE_REPLICA_DEFAULT_QUEUE_LENGTH 256
#define QSTORE_REPLICA_DEFAULT_RESTART_BUDGET 3
#define QSTORE_REPLICA_DEFAULT_RESTART_WINDOW_MS (60 * 1000)
#define QSTORE_REPLICA_DEFAULT_DEADLINE_MS (30 * 1000)

/* Events */

typedef enum
{
  QSTORE_REPLICA_EVENT_HYDRATED,
  QSTORE_REPLICA_EVENT_CHANGED,
  QSTORE_REPLICA_EVENT_PROGRESSED,
  QSTORE_REPLICA_EVENT_FAULTED,
} QStoreReplicaEventKind;

typedef struct
{
  QStoreReplicaEventKind kind;
  guint64   query;
  guint64   generation;   /* of the query's registration */
  guint     worker;
  guint64   tx;
  GVariant *rows;         /* hydrated: aav */
  GVariant *removed;      /* changed: aav */
  GVariant *added;
  char     *reason;       /* faulted */
  gboolean  settled;      /* faulted by the writer's side, which forgot the query already */
} QStoreReplicaEvent;

void                qstore_replica_event_free   (QStoreReplicaEvent *event);
QStoreReplicaEvent *qstore_replica_event_new    (QStoreReplicaEventKind kind,
                                                 guint64                query,
                                                 guint64                generation,
                                                 guint                  worker,
                                                 guint64                tx);

/* What the threads share: the events on their way out, under one lock
 * that also guards every worker's commands. */
typedef struct
{
  gatomicrefcount  ref;
  GMutex           lock;
  GCond            cond;       /* broadcast whenever anything below changes */
  GQueue           events;     /* QStoreReplicaEvent */
  guint            capacity;
  gboolean         closed;
  GSource         *source;     /* wakes the owner's main context; NULL once closed */
} QStoreReplicaHub;

QStoreReplicaHub *qstore_replica_hub_new   (guint             capacity);
QStoreReplicaHub *qstore_replica_hub_ref   (QStoreReplicaHub *hub);
void              qstore_replica_hub_unref (QStoreReplicaHub *hub);
/* With the lock held: queues @event and wakes the owner. */
void              qstore_replica_hub_push_locked (QStoreReplicaHub   *hub,
                                                  QStoreReplicaEvent *event);

/* Live queries (qstore-replica-live.c) */

typedef struct _QStoreReplicaLive QStoreReplicaLive;

QStoreReplicaLive *qstore_replica_live_new          (guint64              id,
                                                     guint64              generation,
                                                     Plan                *plan);
void               qstore_replica_live_free         (QStoreReplicaLive   *live);
guint64            qstore_replica_live_get_id       (QStoreReplicaLive   *live);
guint64            qstore_replica_live_get_generation (QStoreReplicaLive *live);
const Plan        *qstore_replica_live_get_plan     (QStoreReplicaLive   *live);
guint64            qstore_replica_live_get_tx       (QStoreReplicaLive   *live);
void               qstore_replica_live_set_tx       (QStoreReplicaLive   *live,
                                                     guint64              tx);
/* Runs the query on @reader and keeps its rows; *@rows gets them (aav). */
gboolean           qstore_replica_live_hydrate      (QStoreReplicaLive   *live,
                                                     QStoreDatabase      *reader,
                                                     GVariant           **rows,
                                                     GError             **error);
/* Notes what a change of one of its sources asks of the query: the
 * partitions to compute again, or a rebuild. */
gboolean           qstore_replica_live_note_change  (QStoreReplicaLive   *live,
                                                     QStoreTable         *source,
                                                     const QStoreChange  *change,
                                                     GError             **error);
gboolean           qstore_replica_live_has_work     (QStoreReplicaLive   *live);
void               qstore_replica_live_mark_rebuild (QStoreReplicaLive   *live);
/* Whether its work is per partition (rather than a rebuild). */
gboolean           qstore_replica_live_work_is_partial (QStoreReplicaLive *live);
void               qstore_replica_live_forget_work  (QStoreReplicaLive   *live);
/* Does the work on @reader: @removed and @added get the rows that left
 * and entered the view (encoded rows, GBytes). With @may_rebuild, many
 * partitions are computed by one run of the whole query instead. */
gboolean           qstore_replica_live_flush        (QStoreReplicaLive   *live,
                                                     QStoreDatabase      *reader,
                                                     gboolean             may_rebuild,
                                                     GPtrArray           *removed,
                                                     GPtrArray           *added,
                                                     GError             **error);
/* The rows it holds now (aav). */
GVariant          *qstore_replica_live_rows         (QStoreReplicaLive   *live);
/* Encoded rows as an aav value. */
GVariant          *qstore_replica_rows_to_variant   (GPtrArray           *rows,
                                                     guint                first,
                                                     guint                n);
/* Statements prepared on the reader go before the reader does. */
void               qstore_replica_live_forget_statements (QStoreReplicaLive *live);
gboolean           qstore_replica_live_is_provisional (QStoreReplicaLive *live);
void               qstore_replica_live_set_provisional (QStoreReplicaLive *live,
                                                     gboolean             provisional);

/* Workers (qstore-replica-worker.c, qstore-replica-pool.c) */

typedef enum
{
  QSTORE_REPLICA_COMMAND_REGISTER,
  QSTORE_REPLICA_COMMAND_COMMIT,
  QSTORE_REPLICA_COMMAND_CHUNK,
  QSTORE_REPLICA_COMMAND_ABORT,
  QSTORE_REPLICA_COMMAND_DESTROY,
  QSTORE_REPLICA_COMMAND_READ,
  QSTORE_REPLICA_COMMAND_RELOAD,
  QSTORE_REPLICA_COMMAND_SYNC,
  QSTORE_REPLICA_COMMAND_STOP,
  QSTORE_REPLICA_COMMAND_KILL,
  QSTORE_REPLICA_COMMAND_STALL,
} QStoreReplicaCommandKind;

/* An answer the writer's side waits for. */
typedef struct
{
  gatomicrefcount ref;
  gboolean        done;      /* under the hub's lock */
  GVariant       *rows;
  guint64         tx;
  GError         *error;
} QStoreReplicaReply;

QStoreReplicaReply *qstore_replica_reply_new   (void);
QStoreReplicaReply *qstore_replica_reply_ref   (QStoreReplicaReply *reply);
void                qstore_replica_reply_unref (QStoreReplicaReply *reply);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (QStoreReplicaReply, qstore_replica_reply_unref)

typedef struct
{
  QStoreReplicaCommandKind kind;
  gboolean            credit;       /* holds one of the worker's credits */
  guint64             tx;
  guint64             query;
  guint64             generation;
  Plan               *plan;         /* register */
  QStoreSnapshot     *snapshot;     /* register, commit (NULL: nothing to derive) */
  QStoreChangeSet    *change_set;   /* commit */
  GArray             *changes;      /* chunk: QStoreChange, shared */
  QStoreDatabase     *reader;       /* reload */
  GHashTable         *faults;       /* reload: query id (guint64 *) → reason */
  QStoreReplicaReply *reply;        /* read, sync */
  guint               stall_ms;
} QStoreReplicaCommand;

QStoreReplicaCommand *qstore_replica_command_new  (QStoreReplicaCommandKind kind);
void                  qstore_replica_command_free (QStoreReplicaCommand    *command);

typedef struct
{
  gatomicrefcount    ref;
  QStoreReplicaHub  *hub;
  guint              index;
  GThread           *thread;

  /* Under the hub's lock */
  GQueue             commands;      /* QStoreReplicaCommand */
  guint              credits;       /* commands holding a credit */
  gint64             busy_since;    /* monotonic; 0 while idle or held back */
  QStoreReplicaReply *current_reply; /* of the command it runs */
  gboolean           exited;        /* the thread is gone (stopped or killed) */
  gboolean           abandoned;     /* the writer's side gave up on it */

  /* The thread's own */
  QStoreDatabase    *reader;
  GHashTable        *queries;       /* guint64 id → QStoreReplicaLive */
  GHashTable        *readers_of;    /* table (any case) → GPtrArray of QStoreReplicaLive */
  guint64            tx;            /* the last transaction it derived */
  gboolean           speculating;   /* replaying a streamed transaction */
  gboolean           spec_given_up;
  guint64            spec_rows;
} QStoreReplicaWorker;

QStoreReplicaWorker *qstore_replica_worker_new   (QStoreReplicaHub    *hub,
                                                  guint                index,
                                                  QStoreDatabase      *reader,
                                                  guint64              tx);
QStoreReplicaWorker *qstore_replica_worker_ref   (QStoreReplicaWorker *worker);
void                 qstore_replica_worker_unref (QStoreReplicaWorker *worker);
/* Starts the thread. */
void                 qstore_replica_worker_start (QStoreReplicaWorker *worker);

/* What the writer's side keeps of each worker place, across respawns. */
typedef struct
{
  QStoreReplicaWorker *worker;      /* NULL once degraded */
  gboolean             degraded;
  GArray              *restarts;    /* gint64, monotonic */
  GHashTable          *tables;      /* lower-cased source → number of queries */
  guint                n_queries;
  gboolean             streamed;    /* chunks of the open write went to it */
} QStoreReplicaSlot;

/* A live query as the writer's side registered it. */
typedef struct
{
  guint64    id;
  guint64    generation;
  guint      worker;
  GPtrArray *sources;               /* char *, lower-cased */
} QStoreReplicaEntry;

/* A commit heard from the writer, with the snapshot of its state each
 * worker it concerns derives on; handed to them once the commit returned. */
typedef struct
{
  QStoreChangeSet  *change_set;
  QStoreSnapshot  **snapshots;      /* n_workers, NULL where nothing to derive */
  gboolean         *concerned;      /* n_workers */
} QStoreReplicaPending;

struct _QStoreReplica
{
  GObject             parent_instance;

  char               *uri;
  QStoreProvider     *provider;
  QStoreDatabase     *writer;
  QStoreDatabase     *reader;       /* one-off reads of committed state */
  gulong              committed_handler;
  GPtrArray          *pending;      /* QStoreReplicaPending */
  gint64              schema_cookie;

  /* Every call takes it: the liveness check on the owner's main context
   * must not run while a writer on another thread is inside one. */
  GRecMutex           api_lock;

  /* Delivery */
  QStoreReplicaHub   *hub;
  GThread            *owner;
  GMainContext       *context;
  GSource            *liveness;
  guint               nested;       /* delivering from inside a wait */

  /* Workers */
  guint               n_workers;
  QStoreReplicaSlot  *slots;
  guint               restart_budget;
  gint64              restart_window_us;
  gint64              deadline_us;

  /* Live queries; the registry is read when events are delivered, which
   * may be on another thread than the writer's. */
  GMutex              registry_lock;
  GHashTable         *queries;      /* guint64 id → QStoreReplicaEntry */
  GHashTable         *settled;      /* guint64 id → guint64 generation: faults not delivered yet */
  guint64             next_generation;

  /* The write */
  QStoreReplicaTxn   *txn;          /* not owned */
  guint64             write_out_step; /* for the writer's coordinator, opened again after DDL */
  gboolean            speculative;
  guint               n_chunks;
  guint64             n_streamed;

  gboolean            closed;
};

/* qstore-replica.c */
gboolean  qstore_replica_check_usable      (QStoreReplica  *self,
                                            gboolean        waits,
                                            GError        **error);
/* Hands every commit heard since the last call to the workers. */
void      qstore_replica_dispatch_pending  (QStoreReplica  *self);
/* Delivers up to @max queued events; returns how many. */
guint     qstore_replica_deliver           (QStoreReplica  *self,
                                            guint           max);
void      qstore_replica_forget_query_locked (QStoreReplica *self,
                                              QStoreReplicaEntry *entry);
/* Tables the open write streamed, and the workers that heard of them. */
void      qstore_replica_stream_changes    (QStoreReplica  *self,
                                            GArray         *changes);
void      qstore_replica_end_stream        (QStoreReplica  *self,
                                            gboolean        committed);
gboolean  qstore_replica_reopen_writer     (QStoreReplica  *self,
                                            GError        **error);
QStoreDatabase *qstore_replica_open_reader (QStoreReplica  *self,
                                            GError        **error);
gint64    qstore_replica_compute_schema_cookie (QStoreReplica *self);

/* qstore-replica-pool.c */
gboolean  qstore_replica_pool_start        (QStoreReplica  *self,
                                            GError        **error);
void      qstore_replica_pool_stop         (QStoreReplica  *self);
/* Queues @command for worker @index (taken); a command that holds a
 * credit waits for one. FALSE (command dropped) when that worker is
 * gone for good. */
gboolean  qstore_replica_pool_send         (QStoreReplica        *self,
                                            guint                 index,
                                            QStoreReplicaCommand *command);
/* Waits until @reply is done. */
void      qstore_replica_pool_wait_reply   (QStoreReplica       *self,
                                            QStoreReplicaReply  *reply);
/* Recovers dead and hung workers. */
void      qstore_replica_pool_check        (QStoreReplica  *self);
gboolean  qstore_replica_slot_reads        (QStoreReplicaSlot *slot,
                                            const char        *table);

/* qstore-replica-worker.c */
gpointer  qstore_replica_worker_main       (gpointer        data);

/* qstore-replica-txn.c */
QStoreReplicaTxn *qstore_replica_txn_new   (QStoreReplica  *replica);
/* Rolls back the write transaction, if one is open. */
void              qstore_replica_rollback_write (QStoreReplica *self);
QStoreReplicaTxn *qstore_replica_txn_new_for_database (QStoreDatabase *database);

/* Tests: exported, but not part of the API (nothing installs this
 * header). */
QSTORE_AVAILABLE_IN_ALL
void      qstore_replica_test_kill_worker     (QStoreReplica    *self,
                                               guint             worker);
QSTORE_AVAILABLE_IN_ALL
void      qstore_replica_test_stall_worker    (QStoreReplica    *self,
                                               guint             worker,
                                               guint             ms);
QSTORE_AVAILABLE_IN_ALL
void      qstore_replica_test_set_fault_limits (QStoreReplica   *self,
                                               guint             restart_budget,
                                               guint             restart_window_ms,
                                               guint             deadline_ms);
QSTORE_AVAILABLE_IN_ALL
guint     qstore_replica_test_get_capture_length (QStoreReplicaTxn *txn);
QSTORE_AVAILABLE_IN_ALL
guint     qstore_replica_test_get_queued_events  (QStoreReplica  *self);
QSTORE_AVAILABLE_IN_ALL
guint     qstore_replica_test_take_dirty_peak    (void);

G_END_DECLS
