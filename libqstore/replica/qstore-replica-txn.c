/* qstore-replica-txn.c: the one write transaction of a replica
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "qstore-error.h"
#include "qstore-i18n-private.h"
#include "qstore-replica-private.h"
#include "qstore-replica-txn.h"
#include "qstore-sql-token-private.h"

/**
 * QStoreReplicaTxn:
 *
 * The write transaction of a [class@Replica] (there is one at a time):
 * statements with parameters, reads that see its own writes, then a
 * commit that returns the transaction's id, or a rollback. Dropping the
 * last reference to an open one rolls it back.
 *
 * Between statements, every [const@REPLICA_CHUNK_ROWS] row changes it
 * made leave for the workers (see [class@Replica]): the writer then holds
 * at most about one chunk of captured changes, whatever the size of the
 * transaction. A single statement that changes more rows is streamed
 * once it ends.
 *
 * Transaction control and DDL are refused: the transaction is this
 * object's, and schema changes go through [method@Replica.exec_ddl],
 * which the workers follow.
 */

struct _QStoreReplicaCommitInfo
{
  guint64  tx_id;
  gboolean wrote;
  guint64  n_changes;
  guint    n_chunks;
};

G_DEFINE_BOXED_TYPE (QStoreReplicaCommitInfo, qstore_replica_commit_info,
                     qstore_replica_commit_info_copy, qstore_replica_commit_info_free)

struct _QStoreReplicaTxn
{
  GObject         parent_instance;

  QStoreReplica  *replica;   /* NULL for a statement step of a DDL batch */
  QStoreDatabase *db;
  gboolean        open;
};

G_DEFINE_FINAL_TYPE (QStoreReplicaTxn, qstore_replica_txn, G_TYPE_OBJECT)

/**
 * qstore_replica_commit_info_copy:
 * @self: a #QStoreReplicaCommitInfo
 *
 * Copies @self.
 *
 * Returns: (transfer full): a copy
 */
QStoreReplicaCommitInfo *
qstore_replica_commit_info_copy (const QStoreReplicaCommitInfo *self)
{
  g_return_val_if_fail (self != NULL, NULL);
  return g_memdup2 (self, sizeof *self);
}

/**
 * qstore_replica_commit_info_free:
 * @self: a #QStoreReplicaCommitInfo
 *
 * Frees @self.
 */
void
qstore_replica_commit_info_free (QStoreReplicaCommitInfo *self)
{
  g_free (self);
}

/**
 * qstore_replica_commit_info_get_tx_id:
 * @self: a #QStoreReplicaCommitInfo
 *
 * Gets the transaction's id: the one [signal@Replica::progressed] confirms.
 * A transaction that wrote nothing gets none: this is then the id of the
 * last committed one.
 *
 * Returns: the transaction id
 */
guint64
qstore_replica_commit_info_get_tx_id (const QStoreReplicaCommitInfo *self)
{
  g_return_val_if_fail (self != NULL, 0);
  return self->tx_id;
}

/**
 * qstore_replica_commit_info_get_wrote:
 * @self: a #QStoreReplicaCommitInfo
 *
 * Tells whether the transaction wrote anything (and got an id of its own).
 *
 * Returns: %TRUE when it wrote
 */
gboolean
qstore_replica_commit_info_get_wrote (const QStoreReplicaCommitInfo *self)
{
  g_return_val_if_fail (self != NULL, FALSE);
  return self->wrote;
}

/**
 * qstore_replica_commit_info_get_n_changes:
 * @self: a #QStoreReplicaCommitInfo
 *
 * Gets how many row changes the transaction made (materialized views kept
 * up to date by it included).
 *
 * Returns: the number of row changes
 */
guint64
qstore_replica_commit_info_get_n_changes (const QStoreReplicaCommitInfo *self)
{
  g_return_val_if_fail (self != NULL, 0);
  return self->n_changes;
}

/**
 * qstore_replica_commit_info_get_n_chunks:
 * @self: a #QStoreReplicaCommitInfo
 *
 * Gets how many chunks of changes left for the workers before the commit.
 *
 * Returns: the number of streamed chunks, 0 for a transaction that did not
 *   stream
 */
guint
qstore_replica_commit_info_get_n_chunks (const QStoreReplicaCommitInfo *self)
{
  g_return_val_if_fail (self != NULL, 0);
  return self->n_chunks;
}

/* The transaction */

static void
qstore_replica_txn_dispose (GObject *object)
{
  QStoreReplicaTxn *self = QSTORE_REPLICA_TXN (object);

  if (self->open && self->replica != NULL)
    qstore_replica_txn_rollback (self);

  G_OBJECT_CLASS (qstore_replica_txn_parent_class)->dispose (object);
}

static void
qstore_replica_txn_finalize (GObject *object)
{
  QStoreReplicaTxn *self = QSTORE_REPLICA_TXN (object);

  g_clear_object (&self->db);
  g_clear_object (&self->replica);

  G_OBJECT_CLASS (qstore_replica_txn_parent_class)->finalize (object);
}

static void
qstore_replica_txn_class_init (QStoreReplicaTxnClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = qstore_replica_txn_dispose;
  object_class->finalize = qstore_replica_txn_finalize;
}

static void
qstore_replica_txn_init (QStoreReplicaTxn *self)
{
}

QStoreReplicaTxn *
qstore_replica_txn_new (QStoreReplica *replica)
{
  QStoreReplicaTxn *self = g_object_new (QSTORE_TYPE_REPLICA_TXN, NULL);

  self->replica = g_object_ref (replica);
  self->db = g_object_ref (replica->writer);
  self->open = TRUE;
  return self;
}

QStoreReplicaTxn *
qstore_replica_txn_new_for_database (QStoreDatabase *database)
{
  QStoreReplicaTxn *self = g_object_new (QSTORE_TYPE_REPLICA_TXN, NULL);

  self->db = g_object_ref (database);
  self->open = TRUE;
  return self;
}

/**
 * qstore_replica_begin_write:
 * @self: a #QStoreReplica
 * @error: return location for a #GError
 *
 * Opens the write transaction.
 *
 * Returns: (transfer full): the transaction, or %NULL with
 *   %QSTORE_REPLICA_ERROR_WRITE_OPEN when one is open already
 */
QStoreReplicaTxn *
qstore_replica_begin_write (QStoreReplica  *self,
                            GError        **error)
{
  g_autoptr(GRecMutexLocker) locker = NULL;
  QStoreReplicaTxn *txn;

  g_return_val_if_fail (QSTORE_IS_REPLICA (self), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!qstore_replica_check_usable (self, TRUE, error))
    return NULL;
  locker = g_rec_mutex_locker_new (&self->api_lock);
  if (self->txn != NULL)
    {
      g_set_error_literal (error, QSTORE_REPLICA_ERROR, QSTORE_REPLICA_ERROR_WRITE_OPEN,
                           _("A write transaction of the replica is open already: commit or "
                           "roll it back first (there is one writer)"));
      return NULL;
    }
  qstore_replica_dispatch_pending (self);
  if (!qstore_database_exec (self->writer, "BEGIN", error))
    return NULL;
  txn = qstore_replica_txn_new (self);
  self->txn = txn;
  return txn;
}

/**
 * qstore_replica_get_write_out_step:
 * @self: a #QStoreReplica
 *
 * Gets the write-out step of the replica's writer: see
 * [method@Replica.set_write_out_step].
 *
 * Returns: the step in bytes
 */
guint64
qstore_replica_get_write_out_step (QStoreReplica *self)
{
  g_autoptr(GRecMutexLocker) locker = NULL;

  g_return_val_if_fail (QSTORE_IS_REPLICA (self), 0);

  /* The writer's coordinator holds it too; this copy is what each new
   * writer (DDL opens one) gets. */
  locker = g_rec_mutex_locker_new (&self->api_lock);
  return self->write_out_step;
}

/**
 * qstore_replica_set_write_out_step:
 * @self: a #QStoreReplica
 * @n_bytes: the bytes of a write transaction the writer keeps in memory,
 *   from 64 KiB (65536) to 1 TiB
 * @error: return location for a #GError
 *
 * Sets how much of a write transaction the replica's writer keeps in
 * memory, as [method@Coordinator.set_write_out_step] does for its
 * coordinator (the [property@Replica:write-out-step] property). On a
 * provider with write transactions (lmdb, sqlite), a transaction's writes
 * go into the provider's own write transaction, which no worker sees
 * before the commit, whenever the writer's buffer holds @n_bytes; with the
 * streamed chunks of [const@REPLICA_CHUNK_ROWS] rows, this bounds the
 * writer's memory however large the transaction. The default is 64 MiB; a
 * smaller step bounds the writer tighter, and makes a large transaction
 * of random keys slower to write. On memory, which has no write
 * transactions, the step reads back and changes nothing.
 *
 * It takes effect at once, in an open write transaction too (at its next
 * 1,024 writes), and stays through [method@Replica.exec_ddl], until the
 * replica is closed; it is not stored. A DDL batch writes under it, and
 * `PRAGMA qstore.write_out_step = BYTES` in a batch sets it when the batch
 * commits.
 *
 * Returns: %TRUE, or %FALSE with %QSTORE_ERROR_INVALID_ARGUMENT when
 *   @n_bytes is out of range (the step is then unchanged) or
 *   %QSTORE_ERROR_CLOSED when the replica is closed
 */
gboolean
qstore_replica_set_write_out_step (QStoreReplica  *self,
                                   guint64         n_bytes,
                                   GError        **error)
{
  g_autoptr(GRecMutexLocker) locker = NULL;

  g_return_val_if_fail (QSTORE_IS_REPLICA (self), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (!qstore_replica_check_usable (self, FALSE, error))
    return FALSE;
  locker = g_rec_mutex_locker_new (&self->api_lock);
  if (!qstore_coordinator_set_write_out_step (self->writer->coordinator, n_bytes, error))
    return FALSE;
  if (self->write_out_step != n_bytes)
    {
      self->write_out_step = n_bytes;
      g_object_notify (G_OBJECT (self), "write-out-step");
    }
  return TRUE;
}

static gboolean
check_open (QStoreReplicaTxn  *self,
            GError           **error)
{
  if (!self->open)
    {
      g_set_error_literal (error, QSTORE_ERROR, QSTORE_ERROR_CLOSED,
                           _("The replica transaction is over (committed or rolled back): "
                           "begin another one"));
      return FALSE;
    }
  if (self->replica != NULL && !qstore_replica_check_usable (self->replica, TRUE, error))
    return FALSE;
  return TRUE;
}

/* What a statement of the transaction may not be: transaction control,
 * which is this object's, and (but in a DDL batch) DDL. */
static gboolean
check_statement (QStoreReplicaTxn  *self,
                 const char        *sql,
                 GError           **error)
{
  static const char * const control[] = { "BEGIN", "COMMIT", "END", "ROLLBACK", "SAVEPOINT",
                                          "RELEASE", NULL };
  static const char * const schema[] = { "CREATE", "DROP", "ALTER", "REINDEX", "VACUUM",
                                         "ATTACH", "DETACH", "PRAGMA", "ANALYZE", NULL };
  QStoreSqlToken token;

  qstore_sql_next_token (qstore_sql_skip_space (sql), &token);
  if (token.kind != QSTORE_SQL_TOKEN_WORD)
    return TRUE;
  for (guint i = 0; control[i] != NULL; i++)
    if (qstore_sql_token_is (&token, control[i]))
      {
        g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                     _("%s is not run inside a replica transaction: the transaction is the "
                     "object's own; end it with its commit or rollback"), control[i]);
        return FALSE;
      }
  for (guint i = 0; self->replica != NULL && schema[i] != NULL; i++)
    if (qstore_sql_token_is (&token, schema[i]))
      {
        g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                     _("%s is not run inside a replica transaction: change the schema with "
                     "qstore_replica_exec_ddl(), which the workers follow"), schema[i]);
        return FALSE;
      }
  return TRUE;
}

/* Streams what the transaction changed so far, once it makes a chunk. */
static void
pump (QStoreReplicaTxn *self)
{
  g_autoptr(GArray) changes = NULL;

  if (self->replica == NULL)
    return;
  changes = qstore_coordinator_take_changes (self->db->coordinator, QSTORE_REPLICA_CHUNK_ROWS);
  if (changes != NULL)
    qstore_replica_stream_changes (self->replica, changes);
}

/**
 * qstore_replica_txn_exec:
 * @self: a #QStoreReplicaTxn
 * @sql: one statement that writes (or reads)
 * @params: (nullable): its parameters: a tuple for `?`, or an `a{sv}`
 *   dictionary for named ones
 * @error: return location for a #GError
 *
 * Runs one statement in the transaction. A failed statement changes
 * nothing; the transaction stays open.
 *
 * Returns: how many rows the statement inserted, updated or deleted, or
 *   -1 on error
 */
gint64
qstore_replica_txn_exec (QStoreReplicaTxn  *self,
                         const char        *sql,
                         GVariant          *params,
                         GError           **error)
{
  g_autoptr(GVariant) owned = params != NULL ? g_variant_ref_sink (params) : NULL;
  g_autoptr(GRecMutexLocker) locker = NULL;
  gint64 n;

  g_return_val_if_fail (QSTORE_IS_REPLICA_TXN (self), -1);
  g_return_val_if_fail (sql != NULL, -1);
  g_return_val_if_fail (error == NULL || *error == NULL, -1);

  if (!check_open (self, error) || !check_statement (self, sql, error))
    return -1;
  if (self->replica != NULL)
    locker = g_rec_mutex_locker_new (&self->replica->api_lock);
  n = qstore_database_execute (self->db, sql, owned, error);
  if (n >= 0)
    pump (self);
  return n;
}

/**
 * qstore_replica_txn_query:
 * @self: a #QStoreReplicaTxn
 * @sql: one statement
 * @params: (nullable): its parameters, as for qstore_replica_txn_exec()
 * @error: return location for a #GError
 *
 * Runs one statement in the transaction and returns its rows: reads see
 * the transaction's own writes.
 *
 * Returns: (transfer full): the rows, or %NULL on error
 */
QStoreResult *
qstore_replica_txn_query (QStoreReplicaTxn  *self,
                          const char        *sql,
                          GVariant          *params,
                          GError           **error)
{
  g_autoptr(GVariant) owned = params != NULL ? g_variant_ref_sink (params) : NULL;
  g_autoptr(GRecMutexLocker) locker = NULL;
  QStoreResult *result;

  g_return_val_if_fail (QSTORE_IS_REPLICA_TXN (self), NULL);
  g_return_val_if_fail (sql != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!check_open (self, error) || !check_statement (self, sql, error))
    return NULL;
  if (self->replica != NULL)
    locker = g_rec_mutex_locker_new (&self->replica->api_lock);
  result = qstore_database_query (self->db, sql, owned, error);
  if (result != NULL)
    pump (self);
  return result;
}

static void
end (QStoreReplicaTxn *self)
{
  self->open = FALSE;
  if (self->replica->txn == self)
    self->replica->txn = NULL;
}

/**
 * qstore_replica_txn_commit_with_info:
 * @self: a #QStoreReplicaTxn
 * @error: return location for a #GError
 *
 * Commits the transaction, as qstore_replica_txn_commit() does, and tells
 * what it was.
 *
 * Returns: (transfer full): what the transaction was, or %NULL on error
 */
QStoreReplicaCommitInfo *
qstore_replica_txn_commit_with_info (QStoreReplicaTxn  *self,
                                     GError           **error)
{
  g_autoptr(GRecMutexLocker) locker = NULL;
  QStoreReplica *replica = self->replica;
  QStoreReplicaCommitInfo *info;
  GError *local_error = NULL;
  guint64 before;

  g_return_val_if_fail (QSTORE_IS_REPLICA_TXN (self), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!check_open (self, error))
    return NULL;
  if (replica == NULL)
    {
      g_set_error_literal (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                           _("The statements of a DDL batch commit with the batch"));
      return NULL;
    }
  locker = g_rec_mutex_locker_new (&replica->api_lock);

  before = qstore_replica_get_committed_tx_id (replica);
  info = g_new0 (QStoreReplicaCommitInfo, 1);
  info->n_chunks = replica->n_chunks;
  info->n_changes = replica->n_streamed;

  if (!qstore_database_exec (self->db, "COMMIT", &local_error))
    {
      if (!sqlite3_get_autocommit (self->db->db))
        qstore_database_exec (self->db, "ROLLBACK", NULL);
      qstore_replica_end_stream (replica, FALSE);
      end (self);
      g_free (info);
      g_propagate_prefixed_error (error, local_error, _("The replica transaction rolled back: "));
      return NULL;
    }

  info->tx_id = qstore_replica_get_committed_tx_id (replica);
  info->wrote = info->tx_id != before;
  for (guint i = 0; i < replica->pending->len; i++)
    info->n_changes += qstore_change_set_get_n_changes (((QStoreReplicaPending *) replica->pending->pdata[i])->change_set);
  qstore_replica_dispatch_pending (replica);
  qstore_replica_end_stream (replica, info->wrote);
  end (self);
  return info;
}

/**
 * qstore_replica_txn_commit:
 * @self: a #QStoreReplicaTxn
 * @error: return location for a #GError
 *
 * Commits the transaction: durably, in one all-or-nothing unit. Returns
 * without waiting for the workers; [signal@Replica::progressed] tells when
 * they derived it. On failure the transaction is rolled back.
 *
 * Returns: the transaction's id (the last committed one when it wrote
 *   nothing), or 0 with @error set
 */
guint64
qstore_replica_txn_commit (QStoreReplicaTxn  *self,
                           GError           **error)
{
  g_autoptr(QStoreReplicaCommitInfo) info = qstore_replica_txn_commit_with_info (self, error);

  return info != NULL ? info->tx_id : 0;
}

/**
 * qstore_replica_txn_rollback:
 * @self: a #QStoreReplicaTxn
 *
 * Rolls the transaction back. When it streamed changes, the queries that
 * showed some are faulted. Rolling back a transaction that is over does
 * nothing.
 */
void
qstore_replica_txn_rollback (QStoreReplicaTxn *self)
{
  g_autoptr(GRecMutexLocker) locker = NULL;

  g_return_if_fail (QSTORE_IS_REPLICA_TXN (self));

  if (!self->open || self->replica == NULL || self->replica->closed)
    return;
  locker = g_rec_mutex_locker_new (&self->replica->api_lock);
  qstore_database_exec (self->db, "ROLLBACK", NULL);
  qstore_replica_end_stream (self->replica, FALSE);
  end (self);
}

void
qstore_replica_rollback_write (QStoreReplica *self)
{
  if (self->txn != NULL)
    qstore_replica_txn_rollback (self->txn);
}

/**
 * qstore_replica_txn_is_open:
 * @self: a #QStoreReplicaTxn
 *
 * Tells whether the transaction is still open.
 *
 * Returns: %FALSE once it committed or rolled back
 */
gboolean
qstore_replica_txn_is_open (QStoreReplicaTxn *self)
{
  g_return_val_if_fail (QSTORE_IS_REPLICA_TXN (self), FALSE);
  return self->open;
}

/**
 * qstore_replica_test_get_capture_length: (skip)
 * @txn: an open transaction
 *
 * For tests only.
 *
 * Returns: how many captured row changes the writer holds, not streamed yet
 */
guint
qstore_replica_test_get_capture_length (QStoreReplicaTxn *txn)
{
  return txn->db->coordinator->changes->len;
}
