/* qstore-sqlite-txn.c: the sqlite provider's open write transactions
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * One SQLite write transaction on the writer's main connection, held open
 * across calls. SQLite keeps the pages it changed in the connection's
 * cache and, once they outgrow cache_size, writes them to the WAL without
 * a commit frame, where no reader looks: the transaction's memory is
 * bounded by the cache, not by what it writes. Nothing reaches a reader
 * or survives a crash before the commit frame. While it is open the
 * writer's plain reads go through reader connections, which see only what
 * is committed (qstore_sqlite_db_get(), qstore_sqlite_db_acquire_plain()).
 */
#include "config.h"

#include "qstore-i18n-private.h"
#include "qstore-sqlite-store.h"
#include "qstore-sqlite-txn.h"
#include "qstore-sqlite-write.h"

struct _QStoreSqliteWriteTxn
{
  QStoreWriteTxn   parent_instance;

  QStoreSqliteDb  *db;
  guint64          serial;  /* db->write_serial while this one is open */
  GByteArray      *value;   /* the last lookup's */
};

G_DEFINE_DYNAMIC_TYPE_EXTENDED (QStoreSqliteWriteTxn, qstore_sqlite_write_txn,
                                QSTORE_TYPE_WRITE_TXN, G_TYPE_FLAG_FINAL, {})

/* Called with the main lock held. */
static gboolean
check_live (QStoreSqliteWriteTxn  *self,
            GError               **error)
{
  QStoreSqliteDb *db = self->db;

  if (!qstore_sqlite_conn_check_open (db->main, error))
    return FALSE;
  if (G_LIKELY (db->write_open && db->write_serial == self->serial))
    return TRUE;
  g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_CLOSED,
               _("The write transaction of the %s store at “%s” is over: begin "
               "another one"), "sqlite", db->path);
  return FALSE;
}

/* Ends the transaction: commits it when @commit, else rolls it back. The
 * scans of iterators still alive are reset first; those iterators then
 * report the transaction over. Called with the main lock held. */
static gboolean
txn_end (QStoreSqliteWriteTxn  *self,
         gboolean               commit,
         GError               **error)
{
  QStoreSqliteDb *db = self->db;
  GPtrArray *scans = db->main->busy_scans;
  gboolean ok;

  if (!check_live (self, error))
    return FALSE;
  for (guint i = 0; i < scans->len; i++)
    sqlite3_reset (g_ptr_array_index (scans, i));
  ok = qstore_sqlite_write_end (db, commit, error);
  db->write_open = FALSE;
  return ok;
}

static gboolean
qstore_sqlite_write_txn_lookup (QStoreSnapshot  *snapshot,
                                QStoreKV        *store,
                                const guint8    *key,
                                gsize            key_len,
                                const guint8   **value,
                                gsize           *value_len,
                                GError         **error)
{
  QStoreSqliteWriteTxn *self = (QStoreSqliteWriteTxn *) snapshot;
  QStoreSqliteConn *conn = self->db->main;

  QStoreSqliteValue found = { self->value, NULL };
  gboolean ok;

  g_mutex_lock (&conn->lock);
  ok = check_live (self, error) &&
       qstore_sqlite_db_get_main (self->db, qstore_kv_get_name (store), key, key_len,
                                  &found, error);
  g_mutex_unlock (&conn->lock);

  if (!ok)
    return FALSE;
  *value = self->value->data;
  *value_len = self->value->len;
  return TRUE;
}

static QStoreIter *
qstore_sqlite_write_txn_iterate (QStoreSnapshot      *snapshot,
                                 QStoreKV            *store,
                                 const QStoreBounds  *bounds,
                                 GError             **error)
{
  QStoreSqliteWriteTxn *self = QSTORE_SQLITE_WRITE_TXN (snapshot);
  QStoreSqliteConn *conn = self->db->main;
  gboolean live;

  g_mutex_lock (&conn->lock);
  live = check_live (self, error);
  g_mutex_unlock (&conn->lock);
  if (!live)
    return NULL;
  return qstore_sqlite_iter_new (self->db, G_OBJECT (self), conn, self->serial,
                                 qstore_kv_get_name (store), bounds, error);
}

static gboolean
qstore_sqlite_write_txn_write (QStoreWriteTxn       *txn,
                               const QStoreWriteOp  *ops,
                               gsize                 n_ops,
                               GError              **error)
{
  QStoreSqliteWriteTxn *self = QSTORE_SQLITE_WRITE_TXN (txn);
  QStoreSqliteConn *conn = self->db->main;
  gboolean ok;

  g_mutex_lock (&conn->lock);
  ok = check_live (self, error) && qstore_sqlite_write_apply (self->db, ops, n_ops, error);
  /* A fault part-way leaves some of @ops: the transaction may not
   * commit. */
  if (!ok)
    txn_end (self, FALSE, NULL);
  g_mutex_unlock (&conn->lock);
  return ok;
}

static gboolean
qstore_sqlite_write_txn_drop (QStoreWriteTxn      *txn,
                              const char * const  *names,
                              GError             **error)
{
  QStoreSqliteWriteTxn *self = QSTORE_SQLITE_WRITE_TXN (txn);
  QStoreSqliteConn *conn = self->db->main;
  gboolean ok;

  g_mutex_lock (&conn->lock);
  ok = check_live (self, error) &&
       qstore_sqlite_write_restructure (self->db, names, NULL, NULL, error);
  if (!ok)
    txn_end (self, FALSE, NULL);
  g_mutex_unlock (&conn->lock);
  return ok;
}

static gboolean
qstore_sqlite_write_txn_commit (QStoreWriteTxn    *txn,
                                QStoreWriteFlags   flags,
                                GError           **error)
{
  QStoreSqliteWriteTxn *self = QSTORE_SQLITE_WRITE_TXN (txn);
  QStoreSqliteConn *conn = self->db->main;
  gboolean ok;

  /* It began at synchronous=FULL whatever @flags say: the level cannot
   * change inside a transaction, and one sync per large transaction is
   * cheap. */
  g_mutex_lock (&conn->lock);
  ok = txn_end (self, TRUE, error);
  g_mutex_unlock (&conn->lock);
  return ok;
}

static void
qstore_sqlite_write_txn_abort (QStoreWriteTxn *txn)
{
  QStoreSqliteWriteTxn *self = QSTORE_SQLITE_WRITE_TXN (txn);
  QStoreSqliteConn *conn = self->db->main;

  g_mutex_lock (&conn->lock);
  txn_end (self, FALSE, NULL);
  g_mutex_unlock (&conn->lock);
}

static void
qstore_sqlite_write_txn_finalize (GObject *object)
{
  QStoreSqliteWriteTxn *self = QSTORE_SQLITE_WRITE_TXN (object);

  /* The base class ended it in dispose. */
  g_clear_pointer (&self->value, g_byte_array_unref);
  g_clear_pointer (&self->db, qstore_sqlite_db_unref);

  G_OBJECT_CLASS (qstore_sqlite_write_txn_parent_class)->finalize (object);
}

static void
qstore_sqlite_write_txn_class_init (QStoreSqliteWriteTxnClass *klass)
{
  QStoreSnapshotClass *snapshot_class = QSTORE_SNAPSHOT_CLASS (klass);
  QStoreWriteTxnClass *txn_class = QSTORE_WRITE_TXN_CLASS (klass);

  G_OBJECT_CLASS (klass)->finalize = qstore_sqlite_write_txn_finalize;
  snapshot_class->lookup = qstore_sqlite_write_txn_lookup;
  snapshot_class->iterate = qstore_sqlite_write_txn_iterate;
  txn_class->write = qstore_sqlite_write_txn_write;
  txn_class->commit = qstore_sqlite_write_txn_commit;
  txn_class->abort = qstore_sqlite_write_txn_abort;
  txn_class->drop = qstore_sqlite_write_txn_drop;
}

static void
qstore_sqlite_write_txn_class_finalize (QStoreSqliteWriteTxnClass *klass)
{
}

static void
qstore_sqlite_write_txn_init (QStoreSqliteWriteTxn *self)
{
  self->value = g_byte_array_sized_new (64);
}

QStoreWriteTxn *
qstore_sqlite_write_txn_new (QStoreSqliteDb  *db,
                             GError         **error)
{
  QStoreSqliteConn *conn = db->main;
  QStoreSqliteWriteTxn *self;
  guint64 serial = 0;
  gboolean ok;

  g_mutex_lock (&conn->lock);
  /* The provider's state refuses a second one first; this holds if two
   * threads ask at once. */
  if (db->write_open)
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_BUSY,
                   _("The sqlite store at “%s” already has a write transaction open: "
                   "commit or abort it first"), db->path);
      ok = FALSE;
    }
  else
    ok = qstore_sqlite_write_begin (db, TRUE, error);
  if (ok)
    {
      db->write_open = TRUE;
      serial = ++db->write_serial;
    }
  g_mutex_unlock (&conn->lock);
  if (!ok)
    return NULL;

  self = g_object_new (QSTORE_TYPE_SQLITE_WRITE_TXN, NULL);
  self->db = qstore_sqlite_db_ref (db);
  self->serial = serial;
  return QSTORE_WRITE_TXN (self);
}

void
qstore_sqlite_write_txn_register_type_in (GTypeModule *module)
{
  qstore_sqlite_write_txn_register_type (module);
}
