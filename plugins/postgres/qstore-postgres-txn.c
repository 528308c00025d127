/* qstore-postgres-txn.c: the postgres provider's open write transactions
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * One PostgreSQL transaction held open on the writer's session, the one
 * holding the writer lock: its writes go out as they come, in the same
 * statements as one-shot writes, and the server keeps them (in its
 * buffers, then its files), so the writer's memory does not grow with
 * the transaction. Its own reads go through that session and see its
 * writes over committed data; nobody else sees them before the COMMIT,
 * and a writer that dies, or a session that breaks, takes them along
 * (the server rolls back a transaction whose session ended). While it is
 * open, plain reads, snapshots and the list of stores go through reader
 * sessions, which see what is committed only. Change-log notifications
 * sent inside it reach listeners at its commit, never before.
 */
#include "config.h"

#include <string.h>

#include "qstore-i18n-private.h"
#include "qstore-postgres-store.h"
#include "qstore-postgres-txn.h"
#include "qstore-postgres-write.h"

struct _QStorePgWriteTxn
{
  QStoreWriteTxn   parent_instance;

  QStorePgDb      *db;
  guint64          serial;  /* db->txn_serial while this one is open */
  PGresult        *lookup;  /* the last lookup's, whose value was handed out */
};

G_DEFINE_DYNAMIC_TYPE_EXTENDED (QStorePgWriteTxn, qstore_pg_write_txn,
                                QSTORE_TYPE_WRITE_TXN, G_TYPE_FLAG_FINAL, {})

static gboolean
qstore_pg_write_txn_lookup (QStoreSnapshot  *snapshot,
                            QStoreKV        *store,
                            const guint8    *key,
                            gsize            key_len,
                            const guint8   **value,
                            gsize           *value_len,
                            GError         **error)
{
  QStorePgWriteTxn *self = QSTORE_PG_WRITE_TXN (snapshot);
  QStorePgDb *db = self->db;
  const char *name = qstore_kv_get_name (store);
  int name_len = (int) strlen (name);
  guint32 id_be;
  gboolean found;

  /* The writer's gaps are not asked: a gap read from committed data may
   * hold keys the transaction put. */
  g_mutex_lock (&db->main->lock);
  found = qstore_pg_db_check_write_txn (db, self->serial, error) &&
          qstore_pg_db_lookup (db->main, name, name_len,
                               qstore_pg_db_writer_store (db, name, &id_be, &name, &name_len),
                               key, key_len, &self->lookup, value, value_len, error);
  g_mutex_unlock (&db->main->lock);
  return found;
}

static QStoreIter *
qstore_pg_write_txn_iterate (QStoreSnapshot      *snapshot,
                             QStoreKV            *store,
                             const QStoreBounds  *bounds,
                             GError             **error)
{
  QStorePgWriteTxn *self = QSTORE_PG_WRITE_TXN (snapshot);

  return qstore_pg_iter_new (self->db, NULL, self->serial, qstore_kv_get_name (store),
                             bounds, error);
}

/* Runs @func with the main lock held while the transaction is the one
 * open; a failure rolls it back, as the whole transaction may not
 * commit with a write missing. */
static gboolean
txn_step (QStorePgWriteTxn  *self,
          gboolean         (*func) (QStorePgDb *, gconstpointer, gsize, GError **),
          gconstpointer      data,
          gsize              n,
          GError           **error)
{
  QStorePgDb *db = self->db;
  gboolean ok;

  g_mutex_lock (&db->main->lock);
  ok = qstore_pg_db_check_write_txn (db, self->serial, error);
  if (ok && !(ok = func (db, data, n, error)))
    qstore_pg_txn_end (db, FALSE, FALSE, NULL);
  g_mutex_unlock (&db->main->lock);
  return ok;
}

static gboolean
write_ops (QStorePgDb     *db,
           gconstpointer   ops,
           gsize           n_ops,
           GError        **error)
{
  return qstore_pg_txn_write (db, ops, n_ops, error);
}

static gboolean
drop_stores (QStorePgDb     *db,
             gconstpointer   names,
             gsize           n,
             GError        **error)
{
  return qstore_pg_txn_drop (db, names, error);
}

static gboolean
qstore_pg_write_txn_write (QStoreWriteTxn       *txn,
                           const QStoreWriteOp  *ops,
                           gsize                 n_ops,
                           GError              **error)
{
  return txn_step (QSTORE_PG_WRITE_TXN (txn), write_ops, ops, n_ops, error);
}

static gboolean
qstore_pg_write_txn_drop (QStoreWriteTxn      *txn,
                          const char * const  *names,
                          GError             **error)
{
  return txn_step (QSTORE_PG_WRITE_TXN (txn), drop_stores, names, 0, error);
}

/* Ends the transaction if it is still the one open. */
static gboolean
txn_end (QStorePgWriteTxn  *self,
         gboolean           commit,
         gboolean           sync,
         GError           **error)
{
  QStorePgDb *db = self->db;
  gboolean ok;

  g_mutex_lock (&db->main->lock);
  ok = qstore_pg_db_check_write_txn (db, self->serial, error) &&
       qstore_pg_txn_end (db, commit, sync, error);
  g_clear_pointer (&self->lookup, PQclear);
  g_mutex_unlock (&db->main->lock);
  return ok;
}

static gboolean
qstore_pg_write_txn_commit (QStoreWriteTxn    *txn,
                            QStoreWriteFlags   flags,
                            GError           **error)
{
  return txn_end (QSTORE_PG_WRITE_TXN (txn), TRUE, (flags & QSTORE_WRITE_SYNC) != 0, error);
}

static void
qstore_pg_write_txn_abort (QStoreWriteTxn *txn)
{
  txn_end (QSTORE_PG_WRITE_TXN (txn), FALSE, FALSE, NULL);
}

static void
qstore_pg_write_txn_finalize (GObject *object)
{
  QStorePgWriteTxn *self = QSTORE_PG_WRITE_TXN (object);

  /* The base class ended it in dispose. */
  g_clear_pointer (&self->lookup, PQclear);
  g_clear_pointer (&self->db, qstore_pg_db_unref);

  G_OBJECT_CLASS (qstore_pg_write_txn_parent_class)->finalize (object);
}

static void
qstore_pg_write_txn_class_init (QStorePgWriteTxnClass *klass)
{
  QStoreSnapshotClass *snapshot_class = QSTORE_SNAPSHOT_CLASS (klass);
  QStoreWriteTxnClass *txn_class = QSTORE_WRITE_TXN_CLASS (klass);

  G_OBJECT_CLASS (klass)->finalize = qstore_pg_write_txn_finalize;
  snapshot_class->lookup = qstore_pg_write_txn_lookup;
  snapshot_class->iterate = qstore_pg_write_txn_iterate;
  txn_class->write = qstore_pg_write_txn_write;
  txn_class->commit = qstore_pg_write_txn_commit;
  txn_class->abort = qstore_pg_write_txn_abort;
  txn_class->drop = qstore_pg_write_txn_drop;
}

static void
qstore_pg_write_txn_class_finalize (QStorePgWriteTxnClass *klass)
{
}

static void
qstore_pg_write_txn_init (QStorePgWriteTxn *self)
{
}

QStoreWriteTxn *
qstore_pg_write_txn_new (QStorePgDb  *db,
                         GError     **error)
{
  QStorePgWriteTxn *self;
  guint64 serial = 0;

  g_mutex_lock (&db->main->lock);
  /* The provider's state refuses a second one first; this holds if two
   * threads ask at once. Its BEGIN goes with its first write. */
  if (db->txn_open)
    g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_BUSY,
                 _("%s already has a write transaction open: commit or abort it first"),
                 db->what);
  else if (qstore_pg_conn_check_open (db->main, error))
    {
      db->txn_open = TRUE;
      db->txn_begun = FALSE;
      db->txn_restructured = FALSE;
      serial = ++db->txn_serial;
    }
  g_mutex_unlock (&db->main->lock);
  if (serial == 0)
    return NULL;

  self = g_object_new (QSTORE_TYPE_PG_WRITE_TXN, NULL);
  self->db = qstore_pg_db_ref (db);
  self->serial = serial;
  return QSTORE_WRITE_TXN (self);
}

void
qstore_pg_write_txn_register_type_in (GTypeModule *module)
{
  qstore_pg_write_txn_register_type (module);
}
