/* qstore-coordinator-private.h
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "qstore-change-set-private.h"
#include "qstore-coordinator.h"
#include "qstore-pending-private.h"

G_BEGIN_DECLS

/* The coordinator reads a table's committed row count from `__stats__`
 * once and keeps it. Whoever changes `__stats__` behind its back (dropping
 * or renaming a table's stores) calls this so the next read goes to the
 * store again. Not inside a transaction that touched the table. */
void qstore_coordinator_forget_row_count (QStoreCoordinator *self,
                                          const char        *schema,
                                          const char        *table);

/* Commits as qstore_coordinator_commit() does, but through the provider's
 * restructure: the stores named in @drop (NULL-terminated) are erased in
 * the same all-or-nothing unit as every write of the transaction, with or
 * without an atomic batch. DDL uses it so that rows, index stores and the
 * catalog entry can never be seen half changed after a crash. */
gboolean qstore_coordinator_commit_restructure (QStoreCoordinator   *self,
                                                const char * const  *drop,
                                                GError             **error);

/* Reads of statements that run at the same time outside a transaction
 * share one snapshot, as SQLite's statements on one connection share its
 * read transaction: taken by the first, dropped when the last releases it
 * or a transaction ends (statements starting after a commit see it; those
 * running keep their snapshot). Returns a reference to release with
 * qstore_coordinator_release_snapshot(), or NULL (@error unset) inside a
 * transaction, when the provider has no snapshots, or when none is held
 * and !@create. *@serial tells one shared snapshot from the next: what
 * was read under the same serial is still what the snapshot holds. */
QStoreSnapshot *qstore_coordinator_hold_snapshot    (QStoreCoordinator  *self,
                                                     gboolean            create,
                                                     guint64            *serial,
                                                     GError            **error);
void            qstore_coordinator_release_snapshot (QStoreCoordinator  *self,
                                                     QStoreSnapshot     *snapshot);

/* What the materialized views of a database follow: every row change as
 * it is recorded (whether or not anyone listens to `committed`), the
 * moment before a commit writes, writes undone by a rollback to a
 * savepoint, and the end of each transaction. @committed says whether it
 * ended with a commit that stored its writes. Each callback may be NULL.
 * Callbacks may write through the coordinator (they run inside the
 * transaction), except @ended, which runs after it is over. */
typedef struct
{
  void (*changed)       (gpointer        data,
                         const char     *schema,
                         const char     *table,
                         QStoreChangeOp  op,
                         GBytes         *old_row,
                         GBytes         *new_row);
  void (*before_commit) (gpointer        data);
  void (*undone)        (gpointer        data);
  void (*ended)         (gpointer        data,
                         gboolean        committed);
} QStoreCoordinatorObserver;

/* Installs (or, with NULL, removes) the one observer. @observer must
 * outlive its installation. */
void qstore_coordinator_set_observer (QStoreCoordinator               *self,
                                      const QStoreCoordinatorObserver *observer,
                                      gpointer                         data);

/* What keeps a database's change log and tells its subscribers (the
 * changes layer). @recording: whether the transaction that begins must
 * keep its changes although no `committed` handler is connected.
 * @committing: at every commit that writes something, once the
 * transaction has its id and commit time and before anything is
 * written; @changes is the transaction's QStoreChange array, or NULL
 * when its changes were not all kept. Whatever it writes through the
 * coordinator is stored with the transaction, in the same batch (or,
 * without an atomic batch, under the commit marker); returning FALSE
 * fails the commit. @ended: once a transaction is over, after
 * `committed` was emitted: with the id and the change set a commit gave
 * it (the set is NULL when its changes were not all kept), or with 0 and
 * NULL after a rollback, a failed commit or a commit that wrote nothing.
 * Each callback may be NULL. */
typedef struct
{
  gboolean (*recording)  (gpointer          data);
  gboolean (*committing) (gpointer          data,
                          guint64           tx_id,
                          gint64            time,
                          GArray           *changes,
                          GError          **error);
  void     (*ended)      (gpointer          data,
                          guint64           tx_id,
                          QStoreChangeSet  *change_set);
} QStoreCoordinatorLog;

/* Installs (or, with NULL, removes) the one log. @log must outlive its
 * installation. */
void qstore_coordinator_set_log (QStoreCoordinator          *self,
                                 const QStoreCoordinatorLog *log,
                                 gpointer                    data);

/* Without an atomic batch a commit goes store by store, and a crash in
 * between tears it (see QStoreCoordinator). With the undo journal on,
 * the commit marker is written together with the value every key of the
 * commit had before (`\0meta\0undo`), and a torn commit is undone from
 * it: right away when a store write fails, else by the next coordinator
 * that opens the location for writing. Every store then holds what it
 * held before the commit; the marker stays, as after any interruption.
 * A change log turns it on, so that the log and the data it describes
 * cannot disagree. */
void qstore_coordinator_set_undo_journal (QStoreCoordinator *self,
                                          gboolean           enabled);

/* The fault point (_qstore_fault_arm()) passed before a torn commit is
 * undone: armed, the undo fails as if the process had died first, and
 * is left to the next commit or open. */
#define QSTORE_COORDINATOR_FAULT_UNDO "commit-undo"

/* Whether a transaction is open and keeping its changes: a subscriber
 * that joins it now will get its change set. */
gboolean qstore_coordinator_get_recording (QStoreCoordinator *self);

/* A reader that must see one committed state while the writer moves on
 * (a replica's worker) pins a snapshot of it: every read of committed
 * data then goes through @snapshot, outside a transaction and under the
 * transaction's own writes inside one, and commit is refused, since
 * what it would decide rests on a state the store has moved past. NULL
 * unpins. */
void     qstore_coordinator_pin_snapshot (QStoreCoordinator *self,
                                          QStoreSnapshot    *snapshot);

/* Streaming a large transaction: hands over the changes recorded so far
 * in the open transaction, once there are at least @min_changes of them,
 * and forgets them, so the transaction is not held whole until it
 * commits. Only while no savepoint level is open (between statements): a
 * rollback to one could take them back. Returns NULL otherwise, or when
 * nobody records (no handler was connected to `committed` as the
 * transaction began). The change set `committed` emits then holds only
 * what was recorded after the last take: only the owner of a database's
 * writer, which hears every handler of it, may take. */
GArray  *qstore_coordinator_take_changes (QStoreCoordinator *self,
                                          guint              min_changes);

/* The last committed transaction id of a database, as @snapshot (or,
 * when NULL, the committed state) holds it: the larger of the ids in
 * @stats and in @catalog (see qstore-coordinator-commit.c), 0 when
 * neither holds one. A malformed id is %QSTORE_ERROR_CORRUPT. */
gboolean qstore_coordinator_read_last_tx_id (QStoreProvider  *provider,
                                             QStoreKV        *catalog,
                                             QStoreKV        *stats,
                                             QStoreSnapshot  *snapshot,
                                             guint64         *tx_id,
                                             GError         **error);

/* Inside the coordinator: qstore-coordinator.c (the object, transactions,
 * writes, point reads and bookkeeping), qstore-coordinator-iter.c,
 * qstore-coordinator-commit.c and qstore-coordinator-savepoint.c share the
 * instance struct and the helpers below. Other layers use the functions
 * above only. */

#define META_TX "tx"
#define META_COMMIT "commit"
#define META_UNDO "undo"

typedef struct
{
  char              *stats_key;   /* `schema.table`, lower-cased */
  QStoreChangeTable *name;        /* as first spelled */
  gint64             delta;       /* this transaction's adjustment */
  gint64             committed;   /* the committed count, once loaded */
  gboolean           loaded;
  gboolean           in_tx;       /* listed in tx_tables */
} TableEntry;

typedef struct
{
  QStorePendingMark  mark;
  guint              n_changes;
  guint              n_tx_tables;
  gint64            *deltas;      /* of the first n_tx_tables tables */
} Level;

struct _QStoreCoordinator
{
  GObject         parent_instance;

  QStoreProvider *provider;
  QStoreKV       *catalog;
  QStoreKV       *stats;
  guint64         last_tx_id;
  GBytes         *tx_key;              /* the key of last_tx_id, in either store */

  /* Point reads skip the public wrappers' lookups: the provider's closed
   * state and key limit are kept here, and the interface of the store
   * read last. */
  const gboolean *closed;
  gsize           max_key;
  QStoreKV       *read_kv;
  QStoreKVInterface *read_iface;
  GByteArray     *lent;                /* the value qstore_coordinator_lookup() lent last */

  /* The snapshot statements running side by side outside a transaction
   * share, and how many of them hold it. */
  QStoreSnapshot *shared_snapshot;
  guint           shared_snapshot_users;
  guint64         shared_snapshot_serial;  /* bumped for each new one */
  QStoreSnapshot *pinned;              /* qstore_coordinator_pin_snapshot() */
  guint64         pinned_serial;
  guint           read_depth;          /* open qstore_coordinator_begin_read() calls */
  char           *interrupted;         /* the commit marker left behind, or NULL */
  GPtrArray      *interrupted_stores;  /* its store names */

  gboolean        in_tx;
  gboolean        recording;           /* keeps changes: someone listens to `committed` */
  gboolean        dropped_changes;     /* changes went unrecorded in this transaction */
  guint64         generation;          /* bumped when a transaction ends */
  guint64         epoch;               /* bumped when writes are undone or a transaction ends */
  QStorePending  *pending;
  GArray         *changes;             /* QStoreChange */
  GHashTable     *tables;              /* stats key → TableEntry */
  GPtrArray      *tx_tables;           /* TableEntry touched by this transaction */
  TableEntry     *last_table;
  GArray         *levels;              /* Level */

  /* Materialized-view maintenance (qstore_coordinator_set_observer()) */
  const QStoreCoordinatorObserver *observer;
  gpointer        observer_data;
  gboolean        committing;          /* the transaction ending now was stored */

  /* The change log (qstore_coordinator_set_log()) */
  const QStoreCoordinatorLog *log;
  gpointer        log_data;
  gboolean        undo_journal;
  GBytes         *pending_undo;        /* a journal not applied yet, or NULL */
  GQueue         *notify_queue;        /* Notice: ended transactions not told yet */
  gboolean        notifying;

  /* Writes written out of the buffer (qstore-coordinator-spill.c) */
  QStoreWriteTxn *spill;               /* holds them until the commit, or NULL */
  GError         *spill_error;         /* writing out failed: the transaction cannot commit */
  GHashTable     *spilled_stores;      /* names of the stores written out to */
  guint           unspilled;           /* writes buffered since the buffer was measured */
  guint           spill_writes;        /* measure it after this many, 0 never write out */
  guint64         spill_bytes;         /* write out once it holds this many bytes */
  gboolean        spill_refused;       /* the buffer holds a key the provider refuses */
  guint64        *spill_filter;        /* the keys written out, as a Bloom filter, or NULL */
  guint           live_iters;          /* merged iterators of this transaction alive */
  guint           n_spills;
  gsize           buffer_peak;         /* the most bytes the buffer held in the transaction */
};

/* Row counts, the commit marker and the commit's writes
 * (qstore-coordinator-commit.c) */
gboolean qstore_coordinator_load_row_count         (QStoreCoordinator   *self,
                                                    TableEntry          *entry,
                                                    GError             **error);
void     qstore_coordinator_remember_marker_stores (QStoreCoordinator   *self,
                                                    const char          *marker);
gboolean qstore_coordinator_commit_pending         (QStoreCoordinator   *self,
                                                    guint64              tx_id,
                                                    const char * const  *drop,
                                                    GError             **error);
/* The op that writes buffer entry @entry of @store to the provider. */
static inline void
qstore_coordinator_entry_op (QStoreKV      *store,
                             const guint8  *entry,
                             QStoreWriteOp *op)
{
  op->store = store;
  op->key = qstore_pending_entry_get_key (entry, &op->key_len);
  op->value = qstore_pending_entry_get_value (entry, &op->value_len);
  op->kind = op->value != NULL ? QSTORE_WRITE_OP_PUT : QSTORE_WRITE_OP_DELETE;
}

/* Refuses a key longer than @max_key (0: any length) written to store
 * @name, before anything of the commit is written. */
gboolean qstore_coordinator_check_key_length       (QStoreCoordinator   *self,
                                                    const char          *name,
                                                    gsize                key_len,
                                                    gsize                max_key,
                                                    GError             **error);
/* The undo journal: a torn commit undone at open (or reported) */
gboolean qstore_coordinator_recover_undo           (QStoreCoordinator   *self,
                                                    GError             **error);

/* Writing the buffer out into the provider's write transaction
 * (qstore-coordinator-spill.c). Every QSTORE_COORDINATOR_SPILL_WRITES
 * writes call qstore_coordinator_try_spill(), as does the release of the
 * last savepoint level; it writes the buffer out once it holds the
 * write-out step (qstore_coordinator_set_write_out_step(), by default
 * QSTORE_COORDINATOR_SPILL_BYTES, from QSTORE_COORDINATOR_SPILL_BYTES_MIN
 * to QSTORE_COORDINATOR_SPILL_BYTES_MAX). Reads of committed data go
 * through self->spill while it is set, and fail with
 * qstore_coordinator_spill_check()'s error once writing out failed. */
#define QSTORE_COORDINATOR_SPILL_WRITES    1024
#define QSTORE_COORDINATOR_SPILL_BYTES     (G_GUINT64_CONSTANT (64) * 1024 * 1024)
/* Below it, the 1,024 writes between two looks at the buffer fill the
 * step by themselves (rows of a few small columns do): a smaller one
 * would write out at every look just the same. */
#define QSTORE_COORDINATOR_SPILL_BYTES_MIN (G_GUINT64_CONSTANT (64) * 1024)
/* Above it, no machine holds the buffer: a typing error, not a setting. */
#define QSTORE_COORDINATOR_SPILL_BYTES_MAX (G_GUINT64_CONSTANT (1) << 40)

/* A commit of more writes than this goes through a write transaction
 * (where the provider has them), in chunks. */
#define QSTORE_COORDINATOR_STREAM_OPS      4096

void     qstore_coordinator_try_spill              (QStoreCoordinator   *self);
gboolean qstore_coordinator_spill_check            (QStoreCoordinator   *self,
                                                    GError             **error);
/* Drops @drop, writes the buffer into the write transaction (begun when
 * nothing was written out) and commits it. */
gboolean qstore_coordinator_spill_commit           (QStoreCoordinator   *self,
                                                    const char * const  *drop,
                                                    GError             **error);
/* Whether @key of @store may have been written out: when not, the write
 * transaction holds for it what committed data holds. */
gboolean qstore_coordinator_spill_may_hold         (QStoreCoordinator   *self,
                                                    QStoreKV            *store,
                                                    const guint8        *key,
                                                    gsize                key_len);
/* Aborts the write transaction: back to the beginning, or the end. */
void     qstore_coordinator_spill_abort            (QStoreCoordinator   *self);
/* Whether the open transaction wrote out into a write transaction of the
 * provider: until it ends, the provider refuses every other write. */
gboolean qstore_coordinator_writes_out             (QStoreCoordinator   *self);

/* For tests (exported, not API): the buffer's peak in bytes in the open
 * or last transaction, the thresholds, and how many write outs there
 * were. */
QSTORE_AVAILABLE_IN_ALL
gsize    qstore_coordinator_test_get_buffer_peak   (QStoreCoordinator   *self);
QSTORE_AVAILABLE_IN_ALL
void     qstore_coordinator_test_set_spill_writes  (QStoreCoordinator   *self,
                                                    guint                n_writes);
QSTORE_AVAILABLE_IN_ALL
void     qstore_coordinator_test_set_spill_bytes   (QStoreCoordinator   *self,
                                                    guint64              n_bytes);
QSTORE_AVAILABLE_IN_ALL
guint    qstore_coordinator_test_get_n_spills      (QStoreCoordinator   *self);

/* Savepoint levels (qstore-coordinator-savepoint.c) */
void     qstore_coordinator_level_clear            (gpointer             data);

G_END_DECLS
