/* qstore-sqlite-store.c: stores, snapshots and iterators of the sqlite provider
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "qstore-i18n-private.h"
#include "qstore-sqlite-store.h"

/* QStoreSqliteStore: a name and its provider. The row in `stores` appears
 * with the first write, so a handle costs nothing. */

struct _QStoreSqliteStore
{
  GObject               parent_instance;

  QStoreProvider       *provider;
  QStoreSqliteDb       *db;
  char                 *name;
};

static void qstore_sqlite_store_kv_iface_init (QStoreKVInterface *iface);

G_DEFINE_DYNAMIC_TYPE_EXTENDED (QStoreSqliteStore, qstore_sqlite_store,
                                G_TYPE_OBJECT, G_TYPE_FLAG_FINAL,
                                G_IMPLEMENT_INTERFACE_DYNAMIC (QSTORE_TYPE_KV,
                                                               qstore_sqlite_store_kv_iface_init))

QStoreKV *
qstore_sqlite_store_new (QStoreProvider *provider,
                         QStoreSqliteDb *db,
                         const char     *name)
{
  QStoreSqliteStore *self = g_object_new (QSTORE_TYPE_SQLITE_STORE, NULL);

  self->provider = g_object_ref (provider);
  self->db = qstore_sqlite_db_ref (db);
  self->name = g_strdup (name);
  return QSTORE_KV (self);
}

static const char *
qstore_sqlite_store_get_name (QStoreKV *kv)
{
  return QSTORE_SQLITE_STORE (kv)->name;
}

static QStoreProvider *
qstore_sqlite_store_get_provider (QStoreKV *kv)
{
  return QSTORE_SQLITE_STORE (kv)->provider;
}

static GBytes *
qstore_sqlite_store_get (QStoreKV      *kv,
                         const guint8  *key,
                         gsize          key_len,
                         GError       **error)
{
  QStoreSqliteStore *self = QSTORE_SQLITE_STORE (kv);
  QStoreSqliteValue value = { NULL, NULL };

  qstore_sqlite_db_get (self->db, self->name, key, key_len, &value, error);
  return value.bytes;
}

static gboolean
qstore_sqlite_store_get_into (QStoreKV      *kv,
                              const guint8  *key,
                              gsize          key_len,
                              GByteArray    *into,
                              GError       **error)
{
  QStoreSqliteStore *self = QSTORE_SQLITE_STORE (kv);
  QStoreSqliteValue value = { into, NULL };

  return qstore_sqlite_db_get (self->db, self->name, key, key_len, &value, error);
}

static QStoreIter *
qstore_sqlite_store_iterate (QStoreKV            *kv,
                             const QStoreBounds  *bounds,
                             GError             **error)
{
  QStoreSqliteStore *self = QSTORE_SQLITE_STORE (kv);
  g_autoptr(QStoreSqliteConn) conn = NULL;

  /* The iterator holds the connection (and, while its scan runs, the read
   * transaction) until it is freed. */
  if (!(conn = qstore_sqlite_db_acquire_reader (self->db, FALSE, error)))
    return NULL;
  return qstore_sqlite_iter_new (self->db, NULL, conn, 0, self->name, bounds, error);
}

static void
qstore_sqlite_store_kv_iface_init (QStoreKVInterface *iface)
{
  iface->get_name = qstore_sqlite_store_get_name;
  iface->get_provider = qstore_sqlite_store_get_provider;
  iface->get = qstore_sqlite_store_get;
  iface->get_into = qstore_sqlite_store_get_into;
  iface->iterate = qstore_sqlite_store_iterate;
}

static void
qstore_sqlite_store_finalize (GObject *object)
{
  QStoreSqliteStore *self = QSTORE_SQLITE_STORE (object);

  g_clear_object (&self->provider);
  g_clear_pointer (&self->db, qstore_sqlite_db_unref);
  g_free (self->name);

  G_OBJECT_CLASS (qstore_sqlite_store_parent_class)->finalize (object);
}

static void
qstore_sqlite_store_class_init (QStoreSqliteStoreClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = qstore_sqlite_store_finalize;
}

static void
qstore_sqlite_store_class_finalize (QStoreSqliteStoreClass *klass)
{
}

static void
qstore_sqlite_store_init (QStoreSqliteStore *self)
{
}

/* QStoreSqliteSnapshot: a pooled reader connection in a read transaction
 * that has read once, so its WAL snapshot is fixed. */

struct _QStoreSqliteSnapshot
{
  QStoreSnapshot        parent_instance;

  QStoreSqliteDb       *db;
  QStoreSqliteConn     *conn;
  /* name → gint64 *, -1 for a store with no row, as of the snapshot:
   * the snapshot never changes, so neither does this. */
  GHashTable           *store_ids;
  /* The store of the last lookup and its id: a statement looks rows up
   * in one store after another, and the name and its hash cost more
   * than the rest of the look-up's own work. Held, so the address cannot
   * come back as another store. */
  QStoreKV             *last_store;
  gint64                last_id;
  /* The last lookup's statement is left on its row so its value can be
   * handed out without a copy; the next lookup resets it. */
  gboolean              lookup_pending;
  /* Or the last lookup's value, when it was a big one. */
  GBytes               *big_value;
};

G_DEFINE_DYNAMIC_TYPE_EXTENDED (QStoreSqliteSnapshot, qstore_sqlite_snapshot,
                                QSTORE_TYPE_SNAPSHOT, G_TYPE_FLAG_FINAL, {})

QStoreSnapshot *
qstore_sqlite_snapshot_new (QStoreSqliteDb  *db,
                            GError         **error)
{
  QStoreSqliteSnapshot *self;
  QStoreSqliteConn *conn;

  if (!(conn = qstore_sqlite_db_acquire_reader (db, TRUE, error)))
    return NULL;

  self = g_object_new (QSTORE_TYPE_SQLITE_SNAPSHOT, NULL);
  self->db = qstore_sqlite_db_ref (db);
  self->conn = conn;
  return QSTORE_SNAPSHOT (self);
}

static gboolean
snapshot_cached_store_id (QStoreSqliteSnapshot *self,
                          const char           *name,
                          gint64               *id)
{
  const gint64 *cached = g_hash_table_lookup (self->store_ids, name);

  if (cached == NULL)
    return FALSE;
  *id = *cached;
  return TRUE;
}

/* Called with the connection locked. */
static gboolean
snapshot_store_id (QStoreSqliteSnapshot  *self,
                   const char            *name,
                   gint64                *id,
                   GError               **error)
{
  sqlite3_stmt *stmt;
  int rc;

  if (snapshot_cached_store_id (self, name, id))
    return TRUE;

  if (!(stmt = qstore_sqlite_conn_stmt (self->conn, QSTORE_SQLITE_STMT_STORE_ID, error)))
    return FALSE;
  sqlite3_bind_text (stmt, 1, name, -1, SQLITE_STATIC);
  rc = sqlite3_step (stmt);
  if (rc == SQLITE_ROW)
    *id = sqlite3_column_int64 (stmt, 0);
  else if (rc == SQLITE_DONE)
    *id = -1;
  else
    qstore_sqlite_conn_set_error (self->conn, rc, "looking up a store", error);
  sqlite3_reset (stmt);

  if (rc != SQLITE_ROW && rc != SQLITE_DONE)
    return FALSE;
  g_hash_table_insert (self->store_ids, g_strdup (name), g_memdup2 (id, sizeof *id));
  return TRUE;
}

static gboolean
qstore_sqlite_snapshot_lookup (QStoreSnapshot  *snapshot,
                               QStoreKV        *store,
                               const guint8    *key,
                               gsize            key_len,
                               const guint8   **value,
                               gsize           *value_len,
                               GError         **error)
{
  /* The base class checked it (and a cast per lookup is not free). */
  QStoreSqliteSnapshot *self = (QStoreSqliteSnapshot *) snapshot;
  QStoreSqliteConn *conn = self->conn;
  gboolean found = FALSE;
  sqlite3_stmt *stmt;
  gint64 id;
  int rc;

  g_mutex_lock (&conn->lock);
  if (!qstore_sqlite_conn_check_open (conn, error) ||
      !(stmt = qstore_sqlite_conn_stmt (conn, QSTORE_SQLITE_STMT_GET, error)))
    goto out;

  if (self->lookup_pending)
    {
      sqlite3_reset (stmt);
      self->lookup_pending = FALSE;
    }

  if (store == self->last_store)
    id = self->last_id;
  else if (snapshot_store_id (self, qstore_kv_get_name (store), &id, error))
    {
      g_set_object (&self->last_store, store);
      self->last_id = id;
    }
  else
    goto out;
  if (id < 0)
    goto out;

  sqlite3_bind_int64 (stmt, 1, id);
  sqlite3_bind_blob64 (stmt, 2, key, key_len, SQLITE_STATIC);
  rc = sqlite3_step (stmt);
  if (rc == SQLITE_ROW && sqlite3_column_type (stmt, 0) == SQLITE_INTEGER)
    {
      gint64 big_id = sqlite3_column_int64 (stmt, 0);

      sqlite3_reset (stmt);
      g_clear_pointer (&self->big_value, g_bytes_unref);
      self->big_value = qstore_sqlite_conn_read_big (conn, big_id, error);
      if (self->big_value != NULL)
        {
          *value = g_bytes_get_data (self->big_value, value_len);
          if (*value == NULL)
            *value = (const guint8 *) "";
          found = TRUE;
        }
    }
  else if (rc == SQLITE_ROW)
    {
      const guint8 *data = sqlite3_column_blob (stmt, 0);

      *value_len = sqlite3_column_bytes (stmt, 0);
      *value = data != NULL ? data : (const guint8 *) "";
      self->lookup_pending = TRUE;
      found = TRUE;
    }
  else
    {
      if (rc != SQLITE_DONE)
        qstore_sqlite_conn_set_error (conn, rc, "reading a key", error);
      sqlite3_reset (stmt);
    }

out:
  g_mutex_unlock (&conn->lock);
  return found;
}

static QStoreIter *
qstore_sqlite_snapshot_iterate (QStoreSnapshot      *snapshot,
                                QStoreKV            *store,
                                const QStoreBounds  *bounds,
                                GError             **error)
{
  QStoreSqliteSnapshot *self = QSTORE_SQLITE_SNAPSHOT (snapshot);

  return qstore_sqlite_iter_new (self->db, G_OBJECT (self), self->conn, 0,
                                 qstore_kv_get_name (store), bounds, error);
}

static void
qstore_sqlite_snapshot_finalize (GObject *object)
{
  QStoreSqliteSnapshot *self = QSTORE_SQLITE_SNAPSHOT (object);

  /* Its iterators hold a reference, so none is left: the connection goes
   * back to the pool, its read transaction ended. */
  qstore_sqlite_db_release_reader (self->db, self->conn);
  qstore_sqlite_conn_unref (self->conn);
  g_clear_pointer (&self->store_ids, g_hash_table_unref);
  g_clear_object (&self->last_store);
  g_clear_pointer (&self->big_value, g_bytes_unref);
  g_clear_pointer (&self->db, qstore_sqlite_db_unref);

  G_OBJECT_CLASS (qstore_sqlite_snapshot_parent_class)->finalize (object);
}

static void
qstore_sqlite_snapshot_class_init (QStoreSqliteSnapshotClass *klass)
{
  QStoreSnapshotClass *snapshot_class = QSTORE_SNAPSHOT_CLASS (klass);

  G_OBJECT_CLASS (klass)->finalize = qstore_sqlite_snapshot_finalize;
  snapshot_class->lookup = qstore_sqlite_snapshot_lookup;
  snapshot_class->iterate = qstore_sqlite_snapshot_iterate;
}

static void
qstore_sqlite_snapshot_class_finalize (QStoreSqliteSnapshotClass *klass)
{
}

static void
qstore_sqlite_snapshot_init (QStoreSqliteSnapshot *self)
{
  self->store_ids = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
}

/* QStoreSqliteIter: one scan statement stepped row by row, so memory does
 * not grow with the range. */

struct _QStoreSqliteIter
{
  QStoreIter            parent_instance;

  QStoreSqliteDb       *db;
  /* The snapshot or write transaction the iterator reads; without one it
   * leases @conn itself. */
  GObject              *owner;
  QStoreSqliteConn     *conn;
  guint64               write_serial;  /* of its write transaction, or 0 */
  char                 *name;       /* the store's */
  QStoreSqliteScan      scan;
  sqlite3_stmt         *stmt;       /* NULL once the scan is over */
  int                   first_rc;   /* the step taken at creation, 0 once used */
  const guint8         *key;
  gsize                 key_len;
  const guint8         *value;
  gsize                 value_len;
  GBytes               *big_value;  /* the current entry's, when big */
};

G_DEFINE_DYNAMIC_TYPE_EXTENDED (QStoreSqliteIter, qstore_sqlite_iter,
                                QSTORE_TYPE_ITER, G_TYPE_FLAG_FINAL, {})

/* Called with the connection locked. Each column is fetched once as a
 * value and read through that: every sqlite3_column_*() call checks the
 * statement and its error state again, which cost more per row than the
 * reads themselves. An unprotected value may be read like this because
 * the connection has no mutex of its own (SQLITE_OPEN_NOMUTEX) and its
 * lock is held. The key is a BLOB (NOT NULL in the schema); the value a
 * BLOB, or the INTEGER id of a big value. */
static gboolean
iter_take_row (QStoreSqliteIter  *self,
               GError           **error)
{
  sqlite3_value *key = sqlite3_column_value (self->stmt, 0);
  sqlite3_value *value = sqlite3_column_value (self->stmt, 1);
  const guint8 *data;

  data = sqlite3_value_blob (key);
  self->key_len = sqlite3_value_bytes (key);
  self->key = data != NULL ? data : (const guint8 *) "";
  g_clear_pointer (&self->big_value, g_bytes_unref);
  if (G_UNLIKELY (sqlite3_value_type (value) == SQLITE_INTEGER))
    {
      self->big_value = qstore_sqlite_conn_read_big (self->conn,
                                                     sqlite3_value_int64 (value),
                                                     error);
      if (self->big_value == NULL)
        return FALSE;
      data = g_bytes_get_data (self->big_value, &self->value_len);
    }
  else
    {
      data = sqlite3_value_blob (value);
      self->value_len = sqlite3_value_bytes (value);
    }
  self->value = data != NULL ? data : (const guint8 *) "";
  return TRUE;
}

/* Called with the connection locked. */
static void
iter_finish (QStoreSqliteIter *self)
{
  if (self->stmt != NULL)
    qstore_sqlite_conn_give_scan (self->conn, self->scan, g_steal_pointer (&self->stmt));
  self->key = self->value = NULL;
  self->key_len = self->value_len = 0;
}

/* Called with the connection locked: takes the scan statement and binds
 * the store. FALSE with no error when a snapshot knows the store has no
 * row, so there is nothing to read. */
static gboolean
iter_take_scan (QStoreSqliteIter    *self,
                const char          *name,
                const QStoreBounds  *bounds,
                GError             **error)
{
  const guint8 *lower, *upper;
  gsize lower_len, upper_len;
  gint64 id = -1;

  lower = qstore_bounds_get_lower (bounds, &lower_len, NULL);
  upper = qstore_bounds_get_upper (bounds, &upper_len, NULL);
  if (qstore_bounds_get_reverse (bounds))
    self->scan = upper ? QSTORE_SQLITE_SCAN_REVERSE_UPPER : QSTORE_SQLITE_SCAN_REVERSE;
  else
    self->scan = upper ? QSTORE_SQLITE_SCAN_FORWARD_UPPER : QSTORE_SQLITE_SCAN_FORWARD;

  /* A snapshot that knows the store's id already spares the scan the
   * look-up; finding the id first would cost more than it saves, since a
   * scan resolves its store once. */
  if (QSTORE_IS_SQLITE_SNAPSHOT (self->owner) &&
      snapshot_cached_store_id (QSTORE_SQLITE_SNAPSHOT (self->owner), name, &id))
    {
      if (id < 0)
        return FALSE;
      self->scan += QSTORE_SQLITE_SCAN_BY_ID;
    }

  if (!(self->stmt = qstore_sqlite_conn_take_scan (self->conn, self->scan, error)))
    return FALSE;
  if (id >= 0)
    sqlite3_bind_int64 (self->stmt, 1, id);
  else
    sqlite3_bind_text (self->stmt, 1, name, -1, SQLITE_TRANSIENT);
  if (lower != NULL)
    sqlite3_bind_blob64 (self->stmt, 2, lower, lower_len, SQLITE_STATIC);
  else
    sqlite3_bind_zeroblob (self->stmt, 2, 0);
  if (upper != NULL)
    sqlite3_bind_blob64 (self->stmt, 3, upper, upper_len, SQLITE_STATIC);
  return TRUE;
}

/* Called with the connection locked: takes the scan of the iterator's
 * bounds and steps it once. Outside a snapshot, that step is what starts
 * the read transaction, so the iterator sees the state of this moment. */
static gboolean
iter_start (QStoreSqliteIter  *self,
            GError           **error)
{
  GError *local_error = NULL;

  /* Bind the iterator's own copy of the bounds: it lives as long as the
   * statement is ours. */
  if (!iter_take_scan (self, self->name, qstore_iter_get_bounds (QSTORE_ITER (self)),
                       &local_error))
    {
      /* A store a snapshot does not hold: nothing to read. */
      self->first_rc = SQLITE_DONE;
      if (local_error == NULL)
        return TRUE;
      g_propagate_error (error, local_error);
      return FALSE;
    }
  self->first_rc = sqlite3_step (self->stmt);
  if (self->first_rc == SQLITE_ROW || self->first_rc == SQLITE_DONE)
    return TRUE;
  qstore_sqlite_conn_set_error (self->conn, self->first_rc, "reading a range", error);
  self->first_rc = 0;
  iter_finish (self);
  return FALSE;
}

/* Called with the connection locked. */
static gboolean
iter_check_write_txn (QStoreSqliteIter  *self,
                      GError           **error)
{
  if (self->write_serial == 0 ||
      (self->db->write_open && self->db->write_serial == self->write_serial))
    return TRUE;
  /* Its transaction ended, which reset the scan. */
  iter_finish (self);
  g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_CLOSED,
               _("The write transaction of the %s store at “%s” is over: begin "
               "another one"), "sqlite", self->db->path);
  return FALSE;
}

QStoreIter *
qstore_sqlite_iter_new (QStoreSqliteDb      *db,
                        GObject             *owner,
                        QStoreSqliteConn    *conn,
                        guint64              write_serial,
                        const char          *name,
                        const QStoreBounds  *bounds,
                        GError             **error)
{
  g_autoptr(QStoreSqliteIter) self = NULL;
  gboolean ok;

  self = qstore_iter_new (QSTORE_TYPE_SQLITE_ITER, bounds, NULL);
  self->db = qstore_sqlite_db_ref (db);
  self->owner = owner != NULL ? g_object_ref (owner) : NULL;
  self->conn = qstore_sqlite_conn_ref (conn);
  self->write_serial = write_serial;
  self->name = g_strdup (name);

  g_mutex_lock (&conn->lock);
  ok = qstore_sqlite_conn_check_open (conn, error) && iter_start (self, error);
  g_mutex_unlock (&conn->lock);

  if (!ok)
    return NULL;
  return QSTORE_ITER (g_steal_pointer (&self));
}

/* A scan of the new bounds on the same connection: in a snapshot or a
 * write transaction, the same state; outside one, as of now. */
static gboolean
qstore_sqlite_iter_restart (QStoreIter  *iter,
                            GError     **error)
{
  QStoreSqliteIter *self = (QStoreSqliteIter *) iter;
  QStoreSqliteConn *conn = self->conn;
  gboolean ok;

  g_mutex_lock (&conn->lock);
  iter_finish (self);
  self->first_rc = 0;
  ok = qstore_sqlite_conn_check_open (conn, error) && iter_check_write_txn (self, error) &&
       iter_start (self, error);
  g_mutex_unlock (&conn->lock);
  return ok;
}

static gboolean
qstore_sqlite_iter_advance (QStoreIter  *iter,
                            GError     **error)
{
  /* The base class calls its vfuncs only on its own instances: the
   * checked cast would cost a function call per row. */
  QStoreSqliteIter *self = (QStoreSqliteIter *) iter;
  QStoreSqliteConn *conn = self->conn;
  gboolean ok = FALSE;
  int rc;

  g_mutex_lock (&conn->lock);
  if (!qstore_sqlite_conn_check_open (conn, error) || !iter_check_write_txn (self, error))
    goto out;

  if (self->first_rc != 0)
    {
      rc = self->first_rc;
      self->first_rc = 0;
    }
  else if (self->stmt != NULL)
    rc = sqlite3_step (self->stmt);
  else
    goto out;

  if (rc == SQLITE_ROW && iter_take_row (self, error))
    ok = TRUE;
  else if (rc == SQLITE_ROW)
    iter_finish (self);
  else
    {
      if (rc != SQLITE_DONE)
        qstore_sqlite_conn_set_error (conn, rc, "reading a range", error);
      /* Done: let go of the scan (and outside a snapshot, of the read
       * transaction) right away. */
      iter_finish (self);
    }

out:
  g_mutex_unlock (&conn->lock);
  return ok;
}

/* The base class peeks at the key of every row, and the caller most
 * often at both key and value: without the lock, which advance() already
 * took. The close clears conn->db before the rows' memory goes. */
static const guint8 *
peek (QStoreSqliteIter *self,
      const guint8     *data,
      gsize             len,
      gsize            *len_out)
{
  gboolean live = g_atomic_pointer_get (&self->conn->db) != NULL && data != NULL;

  *len_out = live ? len : 0;
  return live ? data : (const guint8 *) "";
}

static const guint8 *
qstore_sqlite_iter_peek_key (QStoreIter *iter,
                             gsize      *key_len)
{
  QStoreSqliteIter *self = (QStoreSqliteIter *) iter;

  return peek (self, self->key, self->key_len, key_len);
}

static const guint8 *
qstore_sqlite_iter_peek_value (QStoreIter *iter,
                               gsize      *value_len)
{
  QStoreSqliteIter *self = (QStoreSqliteIter *) iter;

  return peek (self, self->value, self->value_len, value_len);
}

static void
qstore_sqlite_iter_finalize (GObject *object)
{
  QStoreSqliteIter *self = QSTORE_SQLITE_ITER (object);

  if (self->conn != NULL)
    {
      g_mutex_lock (&self->conn->lock);
      iter_finish (self);
      g_mutex_unlock (&self->conn->lock);
      if (self->owner == NULL)
        qstore_sqlite_db_release_reader (self->db, self->conn);
      qstore_sqlite_conn_unref (self->conn);
    }
  g_clear_object (&self->owner);
  g_clear_pointer (&self->big_value, g_bytes_unref);
  g_clear_pointer (&self->db, qstore_sqlite_db_unref);
  g_free (self->name);

  G_OBJECT_CLASS (qstore_sqlite_iter_parent_class)->finalize (object);
}

static void
qstore_sqlite_iter_class_init (QStoreSqliteIterClass *klass)
{
  QStoreIterClass *iter_class = QSTORE_ITER_CLASS (klass);

  G_OBJECT_CLASS (klass)->finalize = qstore_sqlite_iter_finalize;
  iter_class->advance = qstore_sqlite_iter_advance;
  iter_class->peek_key = qstore_sqlite_iter_peek_key;
  iter_class->peek_value = qstore_sqlite_iter_peek_value;
  iter_class->restart = qstore_sqlite_iter_restart;
}

static void
qstore_sqlite_iter_class_finalize (QStoreSqliteIterClass *klass)
{
}

static void
qstore_sqlite_iter_init (QStoreSqliteIter *self)
{
}

void
qstore_sqlite_store_register_types (GTypeModule *module)
{
  qstore_sqlite_store_register_type (module);
  qstore_sqlite_snapshot_register_type (module);
  qstore_sqlite_iter_register_type (module);
}
