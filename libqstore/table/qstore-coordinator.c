/* qstore-coordinator.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "qstore-change-set-private.h"
#include "qstore-codec.h"
#include "qstore-coordinator-private.h"
#include "qstore-error.h"
#include "qstore-i18n-private.h"
#include "qstore-pending-private.h"
#include "qstore-provider-private.h"
#include "qstore-snapshot-private.h"

/**
 * QStoreCoordinator:
 *
 * One transaction across every table of a database: the unit of
 * cross-table atomicity.
 *
 * Between [method@Coordinator.begin] and [method@Coordinator.commit],
 * writes ([method@Coordinator.put], [method@Coordinator.delete]) are
 * buffered per store, the last write to a key winning. Reads
 * ([method@Coordinator.get], [method@Coordinator.iterate]) see the
 * transaction's own writes merged over the committed data, in key order,
 * forward and reverse. Outside a transaction they read committed data.
 *
 * Savepoints are numbered by depth, as SQLite numbers them for virtual
 * tables: [method@Coordinator.savepoint], [method@Coordinator.release] and
 * [method@Coordinator.rollback_to] undo buffered writes, recorded changes
 * and row-count adjustments alike.
 *
 * Commit gives the transaction the next id, writes every table's new row
 * count and the id (`\0meta\0tx`) to `__stats__`, then hands
 * every write to the provider in one all-or-nothing, synchronous batch
 * when it has %QSTORE_CAPABILITY_ATOMIC_BATCH. A failed commit leaves
 * nothing behind. Then [signal@Coordinator::committed] tells what changed.
 *
 * A transaction larger than memory can commit on a provider with write
 * transactions: its buffer goes into one as it grows, in steps set with
 * [method@Coordinator.set_write_out_step].
 *
 * Without an atomic batch (`?atomic=0`), commit first writes the marker
 * `\0meta\0commit`, `{"tx": N, "stores": [...]}`, synchronously to the
 * catalog, then writes one store at a time — data and index stores by
 * name, then `__stats__`, then `__catalog__` with the transaction id and,
 * last, the removal of the marker. Each store's write is atomic on its own,
 * but a crash or failure in between *tears* the transaction: the stores
 * written keep its writes while the others do not, so one table's index
 * may disagree with its data, two tables may hold half of a transaction,
 * row counts may be off and the transaction id is not advanced (no change
 * set is emitted for it). The marker survives such a tear and lists the
 * stores involved; [method@Coordinator.get_interrupted_commit] reports it
 * so the database can repair those tables (rebuild their indexes, count
 * their rows again). The next successful commit removes the marker.
 *
 * A coordinator is not thread-safe: one transaction at a time, used from
 * one thread at a time. It takes no locks; the provider protects its own
 * stores. Change sets it emits are immutable and may go to other threads.
 *
 * Every read a commit depends on — the rowid a new row gets, a table's
 * row count, whether a PRIMARY KEY or UNIQUE value is still free — is made
 * through the coordinator inside the open transaction
 * ([method@Coordinator.get], [method@Coordinator.iterate],
 * [method@Coordinator.get_row_count]), so it sees the committed data and
 * the transaction's own writes: the view of the one writer. That is sound
 * only because a location has one writer: one writable provider, which
 * holds the location's writer lock, and one coordinator over it. Whatever
 * else comes to write a location, such as a replica's writer, must be
 * that writer and make those reads in its view; a second writer would
 * decide from reads the other one makes stale (two rows given one rowid,
 * a row count that loses an insert, a duplicate key).
 */

static void qstore_coordinator_initable_iface_init (GInitableIface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE (QStoreCoordinator, qstore_coordinator, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (G_TYPE_INITABLE,
                                                      qstore_coordinator_initable_iface_init))

enum {
  PROP_0,
  PROP_PROVIDER,
  N_PROPS
};

enum {
  COMMITTED,
  N_SIGNALS
};

static GParamSpec *properties[N_PROPS];
static guint signals[N_SIGNALS];

/* Tables and their row counts */

static void
table_entry_free (gpointer data)
{
  TableEntry *entry = data;

  g_free (entry->stats_key);
  qstore_change_table_unref (entry->name);
  g_free (entry);
}

static TableEntry *
lookup_table (QStoreCoordinator *self,
              const char        *schema,
              const char        *table)
{
  g_autofree char *key = NULL;
  TableEntry *entry;

  /* Tables write row after row: skip the key building for the same one. */
  if (self->last_table != NULL &&
      strcmp (self->last_table->name->table, table) == 0 &&
      strcmp (self->last_table->name->schema, schema) == 0)
    return self->last_table;

  key = qstore_stats_key_for_table (schema, table);
  entry = g_hash_table_lookup (self->tables, key);
  if (entry == NULL)
    {
      entry = g_new0 (TableEntry, 1);
      entry->stats_key = g_steal_pointer (&key);
      entry->name = qstore_change_table_new (schema, table);
      g_hash_table_insert (self->tables, entry->stats_key, entry);
    }
  self->last_table = entry;
  return entry;
}

static void
touch_table (QStoreCoordinator *self,
             TableEntry        *entry)
{
  if (!entry->in_tx)
    {
      entry->in_tx = TRUE;
      g_ptr_array_add (self->tx_tables, entry);
    }
}

/* Telling of ended transactions */

/* A transaction that ended, waiting to be told: handlers of `committed`
 * may commit again, and what they commit is told after what they are
 * being told of, so every listener hears of commits in their order. */
typedef struct
{
  guint64          tx_id;        /* 0: ended without a commit */
  QStoreChangeSet *change_set;   /* NULL: not kept, or no commit */
} Notice;

static void
notice_free (gpointer data)
{
  Notice *notice = data;

  g_clear_object (&notice->change_set);
  g_free (notice);
}

static void
notify_ended (QStoreCoordinator *self,
              guint64            tx_id,
              QStoreChangeSet   *change_set)
{
  Notice *notice;

  /* Nothing to tell: a rollback matters only to the change log. */
  if (tx_id == 0 && (self->log == NULL || self->log->ended == NULL))
    return;

  notice = g_new0 (Notice, 1);
  notice->tx_id = tx_id;
  notice->change_set = change_set != NULL ? g_object_ref (change_set) : NULL;
  if (self->notify_queue == NULL)
    self->notify_queue = g_queue_new ();
  g_queue_push_tail (self->notify_queue, notice);
  if (self->notifying)
    return;

  self->notifying = TRUE;
  g_object_ref (self);
  while ((notice = g_queue_pop_head (self->notify_queue)) != NULL)
    {
      if (notice->change_set != NULL)
        g_signal_emit (self, signals[COMMITTED], 0, notice->change_set);
      if (self->log != NULL && self->log->ended != NULL)
        self->log->ended (self->log_data, notice->tx_id, notice->change_set);
      notice_free (notice);
    }
  self->notifying = FALSE;
  g_object_unref (self);
}

/* Lifecycle */

static GArray *
changes_new (void)
{
  GArray *changes = g_array_new (FALSE, FALSE, sizeof (QStoreChange));

  g_array_set_clear_func (changes, qstore_change_clear);
  return changes;
}

static void
qstore_coordinator_finalize (GObject *object)
{
  QStoreCoordinator *self = QSTORE_COORDINATOR (object);

  qstore_coordinator_spill_abort (self);
  g_clear_pointer (&self->spilled_stores, g_hash_table_unref);
  g_clear_pointer (&self->pending, qstore_pending_free);
  g_clear_pointer (&self->changes, g_array_unref);
  g_clear_pointer (&self->levels, g_array_unref);
  g_clear_pointer (&self->tx_tables, g_ptr_array_unref);
  g_clear_pointer (&self->tables, g_hash_table_unref);
  g_clear_pointer (&self->interrupted, g_free);
  g_clear_pointer (&self->interrupted_stores, g_ptr_array_unref);
  g_clear_pointer (&self->pending_undo, g_bytes_unref);
  g_clear_pointer (&self->tx_key, g_bytes_unref);
  if (self->notify_queue != NULL)
    g_queue_free_full (self->notify_queue, notice_free);
  g_clear_object (&self->catalog);
  g_clear_object (&self->stats);
  g_clear_object (&self->read_kv);
  g_clear_pointer (&self->lent, g_byte_array_unref);
  g_clear_object (&self->shared_snapshot);
  g_clear_object (&self->pinned);
  g_clear_object (&self->provider);

  G_OBJECT_CLASS (qstore_coordinator_parent_class)->finalize (object);
}

static void
qstore_coordinator_get_property (GObject    *object,
                                 guint       prop_id,
                                 GValue     *value,
                                 GParamSpec *pspec)
{
  QStoreCoordinator *self = QSTORE_COORDINATOR (object);

  switch (prop_id)
    {
    case PROP_PROVIDER:
      g_value_set_object (value, self->provider);
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
qstore_coordinator_set_property (GObject      *object,
                                 guint         prop_id,
                                 const GValue *value,
                                 GParamSpec   *pspec)
{
  QStoreCoordinator *self = QSTORE_COORDINATOR (object);

  switch (prop_id)
    {
    case PROP_PROVIDER:
      self->provider = g_value_dup_object (value);
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
qstore_coordinator_class_init (QStoreCoordinatorClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = qstore_coordinator_finalize;
  object_class->get_property = qstore_coordinator_get_property;
  object_class->set_property = qstore_coordinator_set_property;

  /**
   * QStoreCoordinator:provider:
   *
   * The provider whose stores the coordinator writes.
   */
  properties[PROP_PROVIDER] =
    g_param_spec_object ("provider", NULL, NULL,
                         QSTORE_TYPE_PROVIDER,
                         (G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY |
                          G_PARAM_STATIC_STRINGS));

  g_object_class_install_properties (object_class, N_PROPS, properties);

  /**
   * QStoreCoordinator::committed:
   * @self: the coordinator
   * @changes: what the transaction changed
   *
   * Emitted once per committed transaction that wrote something, in commit
   * order, after its data is durable and the transaction has ended. A
   * handler may begin and commit the next transaction: that one is told
   * once every handler has heard of this one. Not emitted for a rollback
   * or a failed commit.
   *
   * Changes are kept only while someone listens (a handler, or the change
   * log and the change feeds of a database). A handler connected while a
   * transaction is open gets that transaction whole when its changes are
   * being kept, else it starts with the next one. A change feed
   * (qstore_database_subscribe_changes()) knows which of the two it was.
   */
  signals[COMMITTED] =
    g_signal_new ("committed",
                  G_TYPE_FROM_CLASS (klass),
                  G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL,
                  G_TYPE_NONE, 1, QSTORE_TYPE_CHANGE_SET);
}

static void
qstore_coordinator_init (QStoreCoordinator *self)
{
  self->pending = qstore_pending_new ();
  self->tx_key = qstore_catalog_key_for_meta (META_TX);
  self->lent = g_byte_array_sized_new (64);
  self->spilled_stores = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  self->spill_writes = QSTORE_COORDINATOR_SPILL_WRITES;
  self->spill_bytes = QSTORE_COORDINATOR_SPILL_BYTES;
  self->changes = changes_new ();
  self->levels = g_array_new (FALSE, FALSE, sizeof (Level));
  g_array_set_clear_func (self->levels, qstore_coordinator_level_clear);
  self->tx_tables = g_ptr_array_new ();
  self->tables = g_hash_table_new_full (g_str_hash, g_str_equal, NULL, table_entry_free);
  self->interrupted_stores = g_ptr_array_new_with_free_func (g_free);
}

static GBytes *
read_meta (QStoreCoordinator  *self,
           const char         *name,
           GError            **error)
{
  g_autoptr(GBytes) key = qstore_catalog_key_for_meta (name);
  gsize len;
  const guint8 *data = g_bytes_get_data (key, &len);

  return qstore_kv_get (self->catalog, data, len, error);
}

/* The id under @key in @store, into *@tx_id when larger. */
static gboolean
read_tx_id (QStoreProvider  *provider,
            QStoreKV        *store,
            QStoreSnapshot  *snapshot,
            GBytes          *key,
            guint64         *tx_id,
            GError         **error)
{
  g_autoptr(GBytes) value = NULL;
  g_autofree char *text = NULL;
  GError *local_error = NULL;
  const guint8 *key_data;
  gsize key_len, len;
  const char *data;
  guint64 id;

  key_data = g_bytes_get_data (key, &key_len);
  value = snapshot != NULL ? qstore_snapshot_get (snapshot, store, key_data, key_len, &local_error)
                           : qstore_kv_get (store, key_data, key_len, &local_error);
  if (local_error != NULL)
    {
      g_propagate_prefixed_error (error, local_error,
                                  _("Reading “%s” of the %s store at “%s”: "),
                                  qstore_kv_get_name (store), qstore_provider_get_name (provider),
                                  qstore_provider_get_location (provider));
      return FALSE;
    }
  if (value == NULL)
    return TRUE;

  data = g_bytes_get_data (value, &len);
  text = g_strndup (data != NULL ? data : "", len);
  if (len == 0 || len > 20 || strspn (text, "0123456789") != len ||
      !g_ascii_string_to_unsigned (text, 10, 0, G_MAXUINT64, &id, NULL))
    {
      g_autofree char *shown = g_utf8_make_valid (text, MIN (len, 40));

      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_CORRUPT,
                   _("The %s store at “%s” holds a malformed last transaction id “%s” in "
                   "“%s” (a decimal number is expected): the store is damaged; restore it "
                   "from a backup"),
                   qstore_provider_get_name (provider), qstore_provider_get_location (provider),
                   shown, qstore_kv_get_name (store));
      return FALSE;
    }
  *tx_id = MAX (*tx_id, id);
  return TRUE;
}

gboolean
qstore_coordinator_read_last_tx_id (QStoreProvider  *provider,
                                    QStoreKV        *catalog,
                                    QStoreKV        *stats,
                                    QStoreSnapshot  *snapshot,
                                    guint64         *tx_id,
                                    GError         **error)
{
  g_autoptr(GBytes) key = qstore_catalog_key_for_meta (META_TX);

  *tx_id = 0;
  return read_tx_id (provider, stats, snapshot, key, tx_id, error) &&
         read_tx_id (provider, catalog, snapshot, key, tx_id, error);
}

static gboolean
qstore_coordinator_initable_init (GInitable     *initable,
                                  GCancellable  *cancellable,
                                  GError       **error)
{
  QStoreCoordinator *self = QSTORE_COORDINATOR (initable);
  g_autoptr(GBytes) marker = NULL;
  GError *local_error = NULL;

  if (self->provider == NULL)
    {
      g_set_error_literal (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                           _("A coordinator needs a provider: create it with "
                           "qstore_coordinator_new()"));
      return FALSE;
    }

  if (!(self->catalog = qstore_provider_get_catalog_store (self->provider, error)) ||
      !(self->stats = qstore_provider_get_stats_store (self->provider, error)))
    return FALSE;
  self->closed = qstore_provider_get_closed_flag (self->provider);
  self->max_key = qstore_provider_get_max_key_length (self->provider);

  if (!qstore_coordinator_read_last_tx_id (self->provider, self->catalog, self->stats, NULL,
                                           &self->last_tx_id, error))
    return FALSE;
  marker = read_meta (self, META_COMMIT, &local_error);
  if (local_error != NULL)
    {
      g_propagate_prefixed_error (error, local_error,
                                  _("Reading the catalog of the %s store at “%s”: "),
                                  qstore_provider_get_name (self->provider),
                                  qstore_provider_get_location (self->provider));
      return FALSE;
    }

  if (marker != NULL)
    {
      gsize len;
      const char *data = g_bytes_get_data (marker, &len);

      self->interrupted = g_utf8_make_valid (data ? data : "", len);
      qstore_coordinator_remember_marker_stores (self, self->interrupted);
    }

  return qstore_coordinator_recover_undo (self, error);
}

static void
qstore_coordinator_initable_iface_init (GInitableIface *iface)
{
  iface->init = qstore_coordinator_initable_init;
}

/**
 * qstore_coordinator_new:
 * @provider: an opened provider
 * @error: return location for a #GError
 *
 * Creates the coordinator of the database in @provider: there should be
 * exactly one per database, shared by every table. It reads the last
 * committed transaction id (`\0meta\0tx` in `__stats__` or, written by
 * a commit store by store or by an earlier version, in the catalog: the
 * larger; 0 when absent)
 * and the marker of a commit a crash interrupted, if any (see
 * [method@Coordinator.get_interrupted_commit]).
 *
 * Returns: (transfer full): the coordinator, or %NULL with
 *   %QSTORE_ERROR_CORRUPT when the stored transaction id is malformed, or
 *   the provider's error when the catalog cannot be read
 */
QStoreCoordinator *
qstore_coordinator_new (QStoreProvider  *provider,
                        GError         **error)
{
  g_return_val_if_fail (QSTORE_IS_PROVIDER (provider), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  return g_initable_new (QSTORE_TYPE_COORDINATOR, NULL, error,
                         "provider", provider,
                         NULL);
}

/**
 * qstore_coordinator_get_provider:
 * @self: a #QStoreCoordinator
 *
 * Gets the provider the coordinator writes to.
 *
 * Returns: (transfer none): the provider
 */
QStoreProvider *
qstore_coordinator_get_provider (QStoreCoordinator *self)
{
  g_return_val_if_fail (QSTORE_IS_COORDINATOR (self), NULL);
  return self->provider;
}

/**
 * qstore_coordinator_get_last_tx_id:
 * @self: a #QStoreCoordinator
 *
 * Gets the id of the last committed transaction; the next commit that
 * writes something gets this plus one.
 *
 * Returns: the last committed transaction id, 0 when none ever committed
 */
guint64
qstore_coordinator_get_last_tx_id (QStoreCoordinator *self)
{
  g_return_val_if_fail (QSTORE_IS_COORDINATOR (self), 0);
  return self->last_tx_id;
}

/**
 * qstore_coordinator_get_epoch:
 * @self: a #QStoreCoordinator
 *
 * Gets a number that changes whenever writes the coordinator has shown
 * may be taken back: when a transaction ends (committed or rolled back)
 * and on every [method@Coordinator.rollback_to]. What a caller derives
 * from reads — such as the largest key of a store — stays true while the
 * epoch is the same and the caller's own writes keep it up to date; after
 * a change it must be read again.
 *
 * Returns: the current epoch
 */
guint64
qstore_coordinator_get_epoch (QStoreCoordinator *self)
{
  g_return_val_if_fail (QSTORE_IS_COORDINATOR (self), 0);
  return self->epoch;
}

/**
 * qstore_coordinator_get_interrupted_commit:
 * @self: a #QStoreCoordinator
 *
 * Tells whether a commit without an atomic batch was interrupted: by a
 * crash before this coordinator was created, or by a failure part-way
 * through one of its own commits. The value is the commit marker as
 * stored, the JSON object `{"tx": N, "stores": ["main.t", …]}` naming
 * every store the commit was writing. Those stores may disagree with each
 * other: rebuild the indexes and recount the rows of the tables they
 * belong to. A marker that does not parse means "repair everything".
 *
 * The marker stays in the catalog until the next successful commit, which
 * removes it (and this returns %NULL again): repair through this
 * coordinator before committing anything else. A commit made without an
 * atomic batch lists the stores of the earlier marker in its own, so
 * nothing is forgotten if it is interrupted too.
 *
 * Returns: (nullable): the marker, or %NULL when no commit was interrupted
 */
const char *
qstore_coordinator_get_interrupted_commit (QStoreCoordinator *self)
{
  g_return_val_if_fail (QSTORE_IS_COORDINATOR (self), NULL);
  return self->interrupted;
}

/* Transactions */

static void
end_transaction (QStoreCoordinator *self)
{
  gboolean committed = self->committing;

  self->committing = FALSE;
  qstore_coordinator_spill_abort (self);
  self->live_iters = 0;
  qstore_pending_clear (self->pending);
  g_array_set_size (self->changes, 0);
  for (guint i = 0; i < self->tx_tables->len; i++)
    {
      TableEntry *entry = self->tx_tables->pdata[i];

      entry->delta = 0;
      entry->in_tx = FALSE;
    }
  g_ptr_array_set_size (self->tx_tables, 0);
  g_array_set_size (self->levels, 0);
  self->in_tx = FALSE;
  self->generation++;
  self->epoch++;
  /* Statements that start from now on must see what was just committed;
   * those holding the snapshot keep it. */
  g_clear_object (&self->shared_snapshot);
  self->shared_snapshot_users = 0;

  if (G_UNLIKELY (self->observer != NULL) && self->observer->ended != NULL)
    self->observer->ended (self->observer_data, committed);
  /* A commit is told once its change set is made (commit_restructure()). */
  if (!committed)
    notify_ended (self, 0, NULL);
}

/**
 * qstore_coordinator_begin:
 * @self: a #QStoreCoordinator
 *
 * Begins a transaction. Every table of the database shares it, so a
 * transaction already open is simply kept: each table may call this when
 * it joins.
 */
void
qstore_coordinator_begin (QStoreCoordinator *self)
{
  g_return_if_fail (QSTORE_IS_COORDINATOR (self));

  if (self->in_tx)
    return;
  self->in_tx = TRUE;
  self->buffer_peak = 0;
  /* Rows are kept for a change set only when someone will see it: a large
   * transaction would otherwise hold every row twice. */
  self->recording = g_signal_has_handler_pending (self, signals[COMMITTED], 0, TRUE) ||
                    (self->log != NULL && self->log->recording != NULL &&
                     self->log->recording (self->log_data));
  self->dropped_changes = FALSE;
}

/**
 * qstore_coordinator_in_transaction:
 * @self: a #QStoreCoordinator
 *
 * Tells whether a transaction is open.
 *
 * Returns: %TRUE between [method@Coordinator.begin] and the end of the
 *   transaction
 */
gboolean
qstore_coordinator_in_transaction (QStoreCoordinator *self)
{
  g_return_val_if_fail (QSTORE_IS_COORDINATOR (self), FALSE);
  return self->in_tx;
}

/**
 * qstore_coordinator_rollback:
 * @self: a #QStoreCoordinator
 *
 * Ends the transaction, discarding its writes, recorded changes and row
 * count adjustments. Without a transaction, nothing happens.
 */
void
qstore_coordinator_rollback (QStoreCoordinator *self)
{
  g_return_if_fail (QSTORE_IS_COORDINATOR (self));

  if (self->in_tx)
    end_transaction (self);
}

/**
 * qstore_coordinator_commit:
 * @self: a #QStoreCoordinator
 * @error: return location for a #GError
 *
 * Ends the transaction, making its writes durable. A transaction that
 * wrote nothing just ends. Otherwise it gets the next transaction id,
 * every table whose row count changed gets its `__stats__` entry
 * rewritten, and everything is written in one synchronous, all-or-nothing
 * batch (see [class@Coordinator] for providers without one); then
 * [signal@Coordinator::committed] is emitted.
 *
 * On failure the transaction is over too: its writes are discarded,
 * nothing of it is stored (with an atomic batch), the transaction id is
 * not advanced, and the next transaction starts clean. Without a
 * transaction, this does nothing and succeeds: every table may call it.
 *
 * Returns: %TRUE when the transaction committed (or there was none)
 */
gboolean
qstore_coordinator_commit (QStoreCoordinator  *self,
                           GError            **error)
{
  g_return_val_if_fail (QSTORE_IS_COORDINATOR (self), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  return qstore_coordinator_commit_restructure (self, NULL, error);
}

gboolean
qstore_coordinator_commit_restructure (QStoreCoordinator   *self,
                                       const char * const  *drop,
                                       GError             **error)
{
  g_autoptr(QStoreChangeSet) change_set = NULL;
  gboolean anything = FALSE;
  gboolean complete;
  guint64 tx_id;
  gint64 time;

  g_return_val_if_fail (QSTORE_IS_COORDINATOR (self), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (G_UNLIKELY (self->pinned != NULL))
    {
      if (self->read_depth > 0)
        g_set_error_literal (error, QSTORE_ERROR, QSTORE_ERROR_READ_ONLY,
                             _("A read transaction is open: end it before committing "
                             "writes"));
      else
        g_set_error_literal (error, QSTORE_ERROR, QSTORE_ERROR_READ_ONLY,
                             "This coordinator reads a pinned snapshot: it cannot commit "
                             "(commit through the database's writer)");
      if (self->in_tx)
        end_transaction (self);
      return FALSE;
    }

  if (!self->in_tx)
    {
      if (drop == NULL || drop[0] == NULL)
        return TRUE;
      return qstore_provider_restructure (self->provider, drop, NULL, NULL, NULL, 0, error);
    }

  /* Views maintained at commit time write before anything is decided. */
  if (G_UNLIKELY (self->observer != NULL) && self->observer->before_commit != NULL)
    self->observer->before_commit (self->observer_data);

  if (!qstore_coordinator_spill_check (self, error))
    {
      end_transaction (self);
      return FALSE;
    }
  anything = self->spill != NULL || qstore_pending_get_n_entries (self->pending) > 0 ||
             self->changes->len > 0;
  for (guint i = 0; !anything && i < self->tx_tables->len; i++)
    anything = ((TableEntry *) self->tx_tables->pdata[i])->delta != 0;
  if (!anything)
    {
      gboolean ok = TRUE;

      if (drop != NULL && drop[0] != NULL)
        ok = qstore_provider_restructure (self->provider, drop, NULL, NULL, NULL, 0, error);
      end_transaction (self);
      return ok;
    }

  tx_id = self->last_tx_id + 1;
  time = g_get_real_time ();
  complete = !self->dropped_changes;
  /* The change log writes its entry into this very commit. */
  if (G_UNLIKELY (self->log != NULL) && self->log->committing != NULL &&
      !self->log->committing (self->log_data, tx_id, time,
                              complete ? self->changes : NULL, error))
    {
      end_transaction (self);
      return FALSE;
    }
  if (!qstore_coordinator_commit_pending (self, tx_id, drop, error))
    {
      end_transaction (self);
      return FALSE;
    }

  self->last_tx_id = tx_id;
  for (guint i = 0; i < self->tx_tables->len; i++)
    {
      TableEntry *entry = self->tx_tables->pdata[i];

      if (entry->delta != 0)
        entry->committed = MAX (0, entry->committed + entry->delta);
    }
  if (complete)
    {
      change_set = qstore_change_set_new_take (tx_id, time, g_steal_pointer (&self->changes));
      self->changes = changes_new ();
    }
  self->committing = TRUE;
  end_transaction (self);

  notify_ended (self, tx_id, change_set);
  return TRUE;
}

/* Read transactions */

/**
 * qstore_coordinator_begin_read:
 * @self: a #QStoreCoordinator
 * @error: return location for a #GError
 *
 * Begins a read transaction: until [method@Coordinator.end_read], every
 * read through the coordinator (point reads and iterators of every table,
 * and SQL statements) sees the state committed when it began, whatever
 * other processes commit meanwhile. An index entry and the row it names
 * are then read from the same state, and a run of point reads costs one
 * read transaction of the provider instead of one each.
 *
 * Read transactions nest: each call needs its own end_read. A write
 * transaction cannot commit while one is open: it fails with
 * %QSTORE_ERROR_READ_ONLY.
 *
 * Returns: %TRUE when reading; %FALSE inside a write transaction
 *   (%QSTORE_ERROR_BUSY) or on a provider without snapshots
 *   (%QSTORE_ERROR_UNSUPPORTED)
 */
gboolean
qstore_coordinator_begin_read (QStoreCoordinator  *self,
                               GError            **error)
{
  g_autoptr(QStoreSnapshot) snapshot = NULL;

  g_return_val_if_fail (QSTORE_IS_COORDINATOR (self), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (self->read_depth > 0)
    {
      self->read_depth++;
      return TRUE;
    }
  if (self->in_tx)
    {
      g_set_error_literal (error, QSTORE_ERROR, QSTORE_ERROR_BUSY,
                           _("A write transaction is open: a read transaction begins "
                           "only outside one"));
      return FALSE;
    }
  if (self->pinned != NULL)
    {
      g_set_error_literal (error, QSTORE_ERROR, QSTORE_ERROR_BUSY,
                           _("This coordinator already reads a pinned snapshot"));
      return FALSE;
    }
  if (!(qstore_provider_get_capabilities (self->provider) & QSTORE_CAPABILITY_SNAPSHOTS))
    {
      g_set_error_literal (error, QSTORE_ERROR, QSTORE_ERROR_UNSUPPORTED,
                           _("The provider has no snapshots: it cannot hold a read "
                           "transaction"));
      return FALSE;
    }
  /* Inside SQL's BEGIN, read what its statements read. */
  if (self->shared_snapshot != NULL)
    snapshot = g_object_ref (self->shared_snapshot);
  else if (!(snapshot = qstore_provider_begin_snapshot (self->provider, error)))
    return FALSE;
  qstore_coordinator_pin_snapshot (self, snapshot);
  self->read_depth = 1;
  return TRUE;
}

/**
 * qstore_coordinator_end_read:
 * @self: a #QStoreCoordinator
 *
 * Ends a read transaction begun by [method@Coordinator.begin_read]. When
 * the outermost one ends, reads see the latest committed state again.
 */
void
qstore_coordinator_end_read (QStoreCoordinator *self)
{
  g_return_if_fail (QSTORE_IS_COORDINATOR (self));
  g_return_if_fail (self->read_depth > 0);

  if (--self->read_depth == 0)
    qstore_coordinator_pin_snapshot (self, NULL);
}

/* Writes */

/**
 * qstore_coordinator_put:
 * @self: a #QStoreCoordinator
 * @store: a store of the coordinator's provider
 * @key: (array length=key_len): the key, not empty
 * @key_len: length of @key
 * @value: (array length=value_len) (nullable): the value
 * @value_len: length of @value
 *
 * Buffers a put in the open transaction. The bytes are copied. A key
 * longer than the provider stores makes the commit fail.
 */
void
qstore_coordinator_put (QStoreCoordinator *self,
                        QStoreKV          *store,
                        const guint8      *key,
                        gsize              key_len,
                        const guint8      *value,
                        gsize              value_len)
{
  guint id;

  g_return_if_fail (QSTORE_IS_COORDINATOR (self));
  g_return_if_fail (QSTORE_IS_KV (store));
  g_return_if_fail (key != NULL && key_len > 0);
  g_return_if_fail (value != NULL || value_len == 0);
  g_return_if_fail (self->in_tx);

  id = qstore_pending_lookup_store (self->pending, store, TRUE);
  qstore_pending_write (self->pending, id, key, key_len, value, value_len, FALSE);
  if (G_UNLIKELY (++self->unspilled >= self->spill_writes))
    qstore_coordinator_try_spill (self);
}

/**
 * qstore_coordinator_delete:
 * @self: a #QStoreCoordinator
 * @store: a store of the coordinator's provider
 * @key: (array length=key_len): the key, not empty
 * @key_len: length of @key
 *
 * Buffers a delete in the open transaction. Deleting an absent key is
 * fine.
 */
void
qstore_coordinator_delete (QStoreCoordinator *self,
                           QStoreKV          *store,
                           const guint8      *key,
                           gsize              key_len)
{
  guint id;

  g_return_if_fail (QSTORE_IS_COORDINATOR (self));
  g_return_if_fail (QSTORE_IS_KV (store));
  g_return_if_fail (key != NULL && key_len > 0);
  g_return_if_fail (self->in_tx);

  id = qstore_pending_lookup_store (self->pending, store, TRUE);
  qstore_pending_write (self->pending, id, key, key_len, NULL, 0, TRUE);
  if (G_UNLIKELY (++self->unspilled >= self->spill_writes))
    qstore_coordinator_try_spill (self);
}

/* Reads */

/* Where a committed read of @key goes, with qstore_kv_get()'s checks made
 * against what the coordinator keeps of its provider: a snapshot (the
 * pinned one, or the transaction's written-out writes) in *@snapshot, or
 * the store itself when that is %NULL. FALSE when the key cannot be stored
 * (with @error unset) or on error. */
static gboolean
committed_source (QStoreCoordinator  *self,
                  QStoreKV           *store,
                  const guint8       *key,
                  gsize               key_len,
                  QStoreSnapshot    **snapshot,
                  GError            **error)
{
  *snapshot = NULL;
  if (G_UNLIKELY (*self->closed))
    {
      qstore_provider_check_open (self->provider, error);
      return FALSE;
    }
  /* A key no write could have stored is simply absent. */
  if (G_UNLIKELY (key_len == 0 || (self->max_key != 0 && key_len > self->max_key)))
    return FALSE;
  if (G_UNLIKELY (self->pinned != NULL))
    {
      *snapshot = self->pinned;
      return TRUE;
    }
  if (G_UNLIKELY (self->spill != NULL || self->spill_error != NULL) && self->in_tx)
    {
      if (!qstore_coordinator_spill_check (self, error))
        return FALSE;
      if (qstore_coordinator_spill_may_hold (self, store, key, key_len))
        {
          *snapshot = QSTORE_SNAPSHOT (self->spill);
          return TRUE;
        }
    }
  if (G_UNLIKELY (store != self->read_kv))
    {
      g_set_object (&self->read_kv, store);
      self->read_iface = QSTORE_KV_GET_IFACE (store);
    }
  return TRUE;
}

/* The transaction's own last write to @key, if it made one: its value, or
 * %NULL for a delete. */
static gboolean
own_write (QStoreCoordinator  *self,
           QStoreKV           *store,
           const guint8       *key,
           gsize               key_len,
           const guint8      **value,
           gsize              *value_len)
{
  const guint8 *entry;
  guint id;

  if (!self->in_tx || key_len == 0)
    return FALSE;
  id = qstore_pending_lookup_store (self->pending, store, FALSE);
  if (id == QSTORE_PENDING_NO_STORE)
    return FALSE;
  entry = qstore_pending_lookup (self->pending, id, key, key_len);
  if (entry == NULL)
    return FALSE;
  *value = qstore_pending_entry_get_value (entry, value_len);
  return TRUE;
}

/**
 * qstore_coordinator_get:
 * @self: a #QStoreCoordinator
 * @store: a store of the coordinator's provider
 * @key: (array length=key_len): the key
 * @key_len: length of @key
 * @error: return location for a #GError
 *
 * Reads a key as the open transaction sees it: its own last write to the
 * key if there is one, else the committed value. Outside a transaction,
 * reads the committed value.
 *
 * Returns: (transfer full) (nullable): a copy of the value, or %NULL when
 *   the key is absent (with @error unset) or on error
 */
GBytes *
qstore_coordinator_get (QStoreCoordinator  *self,
                        QStoreKV           *store,
                        const guint8       *key,
                        gsize               key_len,
                        GError            **error)
{
  const guint8 *value;
  gsize value_len;
  QStoreSnapshot *snapshot;

  g_return_val_if_fail (QSTORE_IS_COORDINATOR (self), NULL);
  g_return_val_if_fail (store == self->read_kv || QSTORE_IS_KV (store), NULL);
  g_return_val_if_fail (key != NULL || key_len == 0, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (own_write (self, store, key, key_len, &value, &value_len))
    return value ? g_bytes_new (value, value_len) : NULL;
  if (!committed_source (self, store, key, key_len, &snapshot, error))
    return NULL;
  if (snapshot != NULL)
    return qstore_snapshot_get (snapshot, store, key, key_len, error);
  return self->read_iface->get (store, key, key_len, error);
}

/**
 * qstore_coordinator_lookup:
 * @self: a #QStoreCoordinator
 * @store: a store of the coordinator's provider
 * @key: (array length=key_len): the key
 * @key_len: length of @key
 * @value: (out) (array length=value_len) (transfer none) (optional): the
 *   value, valid until the next read or write through @self (SQL
 *   statements on its database included) or the end of its read
 *   transaction
 * @value_len: (out) (optional): length of @value
 * @error: return location for a #GError
 *
 * Reads a key as [method@Coordinator.get] does, without copying the value
 * where the provider lends it: inside a read transaction, a provider with
 * mapped pages (LMDB) hands out its own memory.
 *
 * Returns: %TRUE when found; %FALSE when absent or on error (then @error
 *   is set)
 */
gboolean
qstore_coordinator_lookup (QStoreCoordinator  *self,
                           QStoreKV           *store,
                           const guint8       *key,
                           gsize               key_len,
                           const guint8      **value,
                           gsize              *value_len,
                           GError            **error)
{
  const guint8 *v = NULL;
  gsize v_len = 0;
  QStoreSnapshot *snapshot;

  g_return_val_if_fail (QSTORE_IS_COORDINATOR (self), FALSE);
  g_return_val_if_fail (store == self->read_kv || QSTORE_IS_KV (store), FALSE);
  g_return_val_if_fail (key != NULL || key_len == 0, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (own_write (self, store, key, key_len, &v, &v_len))
    {
      if (v == NULL)
        return FALSE;
    }
  else if (!committed_source (self, store, key, key_len, &snapshot, error))
    return FALSE;
  else if (snapshot != NULL)
    {
      if (!qstore_snapshot_lookup_internal (snapshot, store, key, key_len, &v, &v_len, error))
        return FALSE;
    }
  else if (self->read_iface->get_into != NULL)
    {
      /* One buffer for every read: nothing is allocated per key. */
      if (!self->read_iface->get_into (store, key, key_len, self->lent, error))
        return FALSE;
      v = self->lent->data;
      v_len = self->lent->len;
    }
  else
    {
      g_autoptr(GBytes) bytes = self->read_iface->get (store, key, key_len, error);

      if (bytes == NULL)
        return FALSE;
      v = g_bytes_get_data (bytes, &v_len);
      g_byte_array_set_size (self->lent, 0);
      g_byte_array_append (self->lent, v, v_len);
      v = self->lent->data;
    }
  if (value != NULL)
    *value = v;
  if (value_len != NULL)
    *value_len = v_len;
  return TRUE;
}

/* Bookkeeping */

/**
 * qstore_coordinator_record_change:
 * @self: a #QStoreCoordinator
 * @schema: the table's schema
 * @table: the table
 * @op: what happened to the row
 * @old_row: (nullable): the row before, as stored (%NULL for an insert)
 * @new_row: (nullable): the row after, as stored (%NULL for a delete)
 *
 * Records a row change for the transaction's [class@ChangeSet]. The rows
 * are referenced, not copied, and decoded only when a subscriber asks.
 * Rolling back to a savepoint forgets the changes recorded after it.
 *
 * Nothing is kept when no handler was connected to
 * [signal@Coordinator::committed] as the transaction began: nobody would
 * see the change set.
 */
void
qstore_coordinator_record_change (QStoreCoordinator *self,
                                  const char        *schema,
                                  const char        *table,
                                  QStoreChangeOp     op,
                                  GBytes            *old_row,
                                  GBytes            *new_row)
{
  QStoreChange change;
  TableEntry *entry;

  g_return_if_fail (QSTORE_IS_COORDINATOR (self));
  g_return_if_fail (schema != NULL && table != NULL);
  g_return_if_fail (self->in_tx);

  if (!self->recording)
    {
      self->dropped_changes = TRUE;
    }
  else
    {
      entry = lookup_table (self, schema, table);
      change.table = qstore_change_table_ref (entry->name);
      change.op = op;
      change.old_row = old_row ? g_bytes_ref (old_row) : NULL;
      change.new_row = new_row ? g_bytes_ref (new_row) : NULL;
      g_array_append_val (self->changes, change);
    }

  /* After the change is listed: what views write because of it follows
   * it in the change set. */
  if (G_UNLIKELY (self->observer != NULL) && self->observer->changed != NULL)
    self->observer->changed (self->observer_data, schema, table, op, old_row, new_row);
}

/**
 * qstore_coordinator_adjust_row_count:
 * @self: a #QStoreCoordinator
 * @schema: the table's schema
 * @table: the table
 * @delta: rows added (negative: removed)
 *
 * Adds to the table's row count in the open transaction. The count is
 * written to `__stats__` at commit; rolling back discards the adjustment.
 */
void
qstore_coordinator_adjust_row_count (QStoreCoordinator *self,
                                     const char        *schema,
                                     const char        *table,
                                     gint64             delta)
{
  TableEntry *entry;

  g_return_if_fail (QSTORE_IS_COORDINATOR (self));
  g_return_if_fail (schema != NULL && table != NULL);
  g_return_if_fail (self->in_tx);

  entry = lookup_table (self, schema, table);
  touch_table (self, entry);
  entry->delta += delta;
}

/**
 * qstore_coordinator_get_row_count:
 * @self: a #QStoreCoordinator
 * @schema: the table's schema
 * @table: the table
 *
 * Gets the number of rows of a table as the open transaction sees it: the
 * committed count from `__stats__` (read once, then kept) plus the
 * transaction's adjustments. A count that cannot be read counts as 0.
 *
 * Returns: the row count
 */
gint64
qstore_coordinator_get_row_count (QStoreCoordinator *self,
                                  const char        *schema,
                                  const char        *table)
{
  g_autoptr(GError) error = NULL;
  TableEntry *entry;

  g_return_val_if_fail (QSTORE_IS_COORDINATOR (self), 0);
  g_return_val_if_fail (schema != NULL && table != NULL, 0);

  entry = lookup_table (self, schema, table);
  if (!qstore_coordinator_load_row_count (self, entry, &error))
    {
      g_warning ("%s", error->message);
      return MAX (0, entry->delta);
    }
  return MAX (0, entry->committed + entry->delta);
}

QStoreSnapshot *
qstore_coordinator_hold_snapshot (QStoreCoordinator  *self,
                                  gboolean            create,
                                  guint64            *serial,
                                  GError            **error)
{
  g_return_val_if_fail (QSTORE_IS_COORDINATOR (self), NULL);
  g_return_val_if_fail (serial != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (self->in_tx)
    return NULL;
  if (self->pinned != NULL)
    {
      *serial = self->pinned_serial;
      return g_object_ref (self->pinned);
    }
  if (self->shared_snapshot == NULL)
    {
      if (!create ||
          !(qstore_provider_get_capabilities (self->provider) & QSTORE_CAPABILITY_SNAPSHOTS))
        return NULL;
      self->shared_snapshot = qstore_provider_begin_snapshot (self->provider, error);
      if (self->shared_snapshot == NULL)
        return NULL;
      self->shared_snapshot_serial++;
    }
  self->shared_snapshot_users++;
  *serial = self->shared_snapshot_serial;
  return g_object_ref (self->shared_snapshot);
}

void
qstore_coordinator_release_snapshot (QStoreCoordinator *self,
                                     QStoreSnapshot    *snapshot)
{
  g_return_if_fail (QSTORE_IS_COORDINATOR (self));
  /* Not QSTORE_IS_SNAPSHOT(): an ancestry walk per statement, for a
   * snapshot qstore_coordinator_hold_snapshot() gave. */
  g_return_if_fail (snapshot != NULL);

  /* One taken before a commit replaced it only loses the caller's ref. */
  if (snapshot != self->pinned && snapshot == self->shared_snapshot &&
      --self->shared_snapshot_users == 0)
    g_clear_object (&self->shared_snapshot);
  g_object_unref (snapshot);
}

void
qstore_coordinator_forget_row_count (QStoreCoordinator *self,
                                     const char        *schema,
                                     const char        *table)
{
  TableEntry *entry;

  g_return_if_fail (QSTORE_IS_COORDINATOR (self));
  g_return_if_fail (schema != NULL && table != NULL);

  entry = lookup_table (self, schema, table);
  entry->loaded = FALSE;
  entry->committed = 0;
}

void
qstore_coordinator_set_observer (QStoreCoordinator               *self,
                                 const QStoreCoordinatorObserver *observer,
                                 gpointer                         data)
{
  g_return_if_fail (QSTORE_IS_COORDINATOR (self));

  self->observer = observer;
  self->observer_data = observer != NULL ? data : NULL;
}

void
qstore_coordinator_set_log (QStoreCoordinator          *self,
                            const QStoreCoordinatorLog *log,
                            gpointer                    data)
{
  g_return_if_fail (QSTORE_IS_COORDINATOR (self));

  self->log = log;
  self->log_data = log != NULL ? data : NULL;
}

void
qstore_coordinator_set_undo_journal (QStoreCoordinator *self,
                                     gboolean           enabled)
{
  g_return_if_fail (QSTORE_IS_COORDINATOR (self));

  self->undo_journal = enabled;
}

gboolean
qstore_coordinator_get_recording (QStoreCoordinator *self)
{
  g_return_val_if_fail (QSTORE_IS_COORDINATOR (self), FALSE);

  return self->in_tx && self->recording;
}

void
qstore_coordinator_pin_snapshot (QStoreCoordinator *self,
                                 QStoreSnapshot    *snapshot)
{
  g_return_if_fail (QSTORE_IS_COORDINATOR (self));
  g_return_if_fail (snapshot == NULL || QSTORE_IS_SNAPSHOT (snapshot));

  g_set_object (&self->pinned, snapshot);
  /* What the SQL layer remembers of reads under the old one is stale. */
  self->pinned_serial = ++self->shared_snapshot_serial;
}

GArray *
qstore_coordinator_take_changes (QStoreCoordinator *self,
                                 guint              min_changes)
{
  GArray *taken;

  g_return_val_if_fail (QSTORE_IS_COORDINATOR (self), NULL);

  if (!self->in_tx || !self->recording || self->levels->len > 0 ||
      self->changes->len == 0 || self->changes->len < min_changes)
    return NULL;
  taken = g_steal_pointer (&self->changes);
  self->changes = changes_new ();
  return taken;
}
