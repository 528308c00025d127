/* qstore-postgres-store.c: stores, snapshots and iterators of the postgres
 * provider
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "qstore-postgres-store.h"


/* QStorePgStore: a name and its provider. The row in `stores` appears
 * with the first write, so a handle costs nothing. */

struct _QStorePgStore
{
  GObject          parent_instance;

  QStoreProvider  *provider;
  QStorePgDb      *db;
  char            *name;
};

static void qstore_pg_store_kv_iface_init (QStoreKVInterface *iface);

G_DEFINE_DYNAMIC_TYPE_EXTENDED (QStorePgStore, qstore_pg_store,
                                G_TYPE_OBJECT, G_TYPE_FLAG_FINAL,
                                G_IMPLEMENT_INTERFACE_DYNAMIC (QSTORE_TYPE_KV,
                                                               qstore_pg_store_kv_iface_init))

QStoreKV *
qstore_pg_store_new (QStoreProvider *provider,
                     QStorePgDb     *db,
                     const char     *name)
{
  QStorePgStore *self = g_object_new (QSTORE_TYPE_PG_STORE, NULL);

  self->provider = g_object_ref (provider);
  self->db = qstore_pg_db_ref (db);
  self->name = g_strdup (name);
  return QSTORE_KV (self);
}

static const char *
qstore_pg_store_get_name (QStoreKV *kv)
{
  return QSTORE_PG_STORE (kv)->name;
}

static QStoreProvider *
qstore_pg_store_get_provider (QStoreKV *kv)
{
  return QSTORE_PG_STORE (kv)->provider;
}

static GBytes *
qstore_pg_store_get (QStoreKV      *kv,
                     const guint8  *key,
                     gsize          key_len,
                     GError       **error)
{
  QStorePgStore *self = QSTORE_PG_STORE (kv);

  return qstore_pg_db_get (self->db, self->db->main, self->name, key, key_len, error);
}

static QStoreIter *
qstore_pg_store_iterate (QStoreKV            *kv,
                         const QStoreBounds  *bounds,
                         GError             **error)
{
  QStorePgStore *self = QSTORE_PG_STORE (kv);

  return qstore_pg_iter_new (self->db, NULL, 0, self->name, bounds, error);
}

static void
qstore_pg_store_kv_iface_init (QStoreKVInterface *iface)
{
  iface->get_name = qstore_pg_store_get_name;
  iface->get_provider = qstore_pg_store_get_provider;
  iface->get = qstore_pg_store_get;
  iface->iterate = qstore_pg_store_iterate;
}

static void
qstore_pg_store_finalize (GObject *object)
{
  QStorePgStore *self = QSTORE_PG_STORE (object);

  g_clear_object (&self->provider);
  g_clear_pointer (&self->db, qstore_pg_db_unref);
  g_free (self->name);

  G_OBJECT_CLASS (qstore_pg_store_parent_class)->finalize (object);
}

static void
qstore_pg_store_class_init (QStorePgStoreClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = qstore_pg_store_finalize;
}

static void
qstore_pg_store_class_finalize (QStorePgStoreClass *klass)
{
}

static void
qstore_pg_store_init (QStorePgStore *self)
{
}

/* QStorePgSnapshot: a pooled reader connection in a read transaction that
 * has read once, so its state is fixed. Its iterators page through the
 * same transaction: each page is a query of its own, so any number of
 * them share the connection. */

struct _QStorePgSnapshot
{
  QStoreSnapshot   parent_instance;

  QStorePgDb      *db;
  QStorePgConn    *conn;
  /* The location's stores_generation at its creation */
  gint             generation;
  /* The last lookup's result, whose value was handed out without a copy;
   * the next lookup frees it. Guarded by the connection's lock. */
  PGresult        *lookup;
};

G_DEFINE_DYNAMIC_TYPE_EXTENDED (QStorePgSnapshot, qstore_pg_snapshot,
                                QSTORE_TYPE_SNAPSHOT, G_TYPE_FLAG_FINAL, {})

QStoreSnapshot *
qstore_pg_snapshot_new (QStorePgDb  *db,
                        GError     **error)
{
  QStorePgSnapshot *self;
  QStorePgConn *conn;
  QStorePgStep step = { .sql = "SELECT 1" };
  gboolean ok = TRUE;

  /* Before its state is fixed: a change after this one tells. */
  gint generation = g_atomic_int_get (&db->stores_generation);

  if (!(conn = qstore_pg_db_acquire_reader (db, error)))
    return NULL;
  /* Read-only, writes of other processes may come before the first read:
   * the state is fixed now, by a statement after BEGIN. */
  if (db->read_only)
    {
      g_mutex_lock (&conn->lock);
      conn->begin_read = TRUE;
      ok = qstore_pg_conn_run (conn, &step, 1, "beginning a snapshot", error);
      if (!ok)
        conn->in_read_txn = TRUE;
      g_mutex_unlock (&conn->lock);
    }
  else
    qstore_pg_db_defer_snapshot (db, conn);
  if (!ok)
    {
      qstore_pg_db_release_reader (db, conn);
      return NULL;
    }

  self = g_object_new (QSTORE_TYPE_PG_SNAPSHOT, NULL);
  self->db = qstore_pg_db_ref (db);
  self->conn = conn;
  self->generation = generation;
  return QSTORE_SNAPSHOT (self);
}

static gboolean
qstore_pg_snapshot_lookup (QStoreSnapshot  *snapshot,
                           QStoreKV        *store,
                           const guint8    *key,
                           gsize            key_len,
                           const guint8   **value,
                           gsize           *value_len,
                           GError         **error)
{
  QStorePgSnapshot *self = QSTORE_PG_SNAPSHOT (snapshot);
  const char *name = qstore_kv_get_name (store);
  int name_len = (int) strlen (name);
  guint32 id_be;
  gboolean by_id;
  gboolean found;

  by_id = qstore_pg_db_snapshot_store (self->db, self->generation, name, &id_be, &name,
                                       &name_len);
  g_mutex_lock (&self->conn->lock);
  found = qstore_pg_db_lookup (self->conn, name, name_len, by_id, key, key_len,
                               &self->lookup, value, value_len, error);
  g_mutex_unlock (&self->conn->lock);
  return found;
}

static QStoreIter *
qstore_pg_snapshot_iterate (QStoreSnapshot      *snapshot,
                            QStoreKV            *store,
                            const QStoreBounds  *bounds,
                            GError             **error)
{
  QStorePgSnapshot *self = QSTORE_PG_SNAPSHOT (snapshot);

  return qstore_pg_iter_new (self->db, G_OBJECT (self), 0, qstore_kv_get_name (store),
                             bounds, error);
}

static void
qstore_pg_snapshot_finalize (GObject *object)
{
  QStorePgSnapshot *self = QSTORE_PG_SNAPSHOT (object);

  /* Its iterators hold a reference, so none is left: the connection goes
   * back to the pool once its read transaction is ended. */
  if (!self->db->read_only)
    qstore_pg_db_forget_snapshot (self->db, self->conn);
  g_mutex_lock (&self->conn->lock);
  qstore_pg_conn_end_read (self->conn);
  g_clear_pointer (&self->lookup, PQclear);
  g_mutex_unlock (&self->conn->lock);
  qstore_pg_db_release_reader (self->db, self->conn);
  g_clear_pointer (&self->db, qstore_pg_db_unref);

  G_OBJECT_CLASS (qstore_pg_snapshot_parent_class)->finalize (object);
}

static void
qstore_pg_snapshot_class_init (QStorePgSnapshotClass *klass)
{
  QStoreSnapshotClass *snapshot_class = QSTORE_SNAPSHOT_CLASS (klass);

  G_OBJECT_CLASS (klass)->finalize = qstore_pg_snapshot_finalize;
  snapshot_class->lookup = qstore_pg_snapshot_lookup;
  snapshot_class->iterate = qstore_pg_snapshot_iterate;
}

static void
qstore_pg_snapshot_class_finalize (QStorePgSnapshotClass *klass)
{
}

static void
qstore_pg_snapshot_init (QStorePgSnapshot *self)
{
}

/* QStorePgIter: keyset pagination. Each page is one query that starts
 * after the last key of the page before, so memory holds one page, and
 * no cursor stays open between calls. Outside a snapshot, the iterator
 * leases a reader connection in a read transaction of its own, so every
 * page sees the state of its creation; it gives it back with the last
 * page. An iterator of a write transaction pages through the writer's
 * session inside it, and ends with it. */

/* Pages start small, for the short scans most reads are, and grow for
 * long ones. */
#define FIRST_PAGE_ROWS 128
#define MAX_PAGE_ROWS 4096

struct _QStorePgIter
{
  QStoreIter         parent_instance;

  QStorePgDb        *db;
  QStorePgSnapshot  *snapshot;     /* set for snapshot iterators */
  guint64            txn_serial;   /* set for a write transaction's */
  /* The write transaction began before the first page: read elsewhere */
  gboolean           moved;
  QStorePgConn      *conn;         /* the snapshot's, or leased; NULL once given back */
  gboolean           in_txn;       /* the leased connection is in a read transaction */
  gboolean           on_main;      /* @conn is the writer's, for a first page */
  char              *name;
  gboolean           reverse;
  const guint8      *lower;        /* in the iterator's own copy of the bounds */
  gsize              lower_len;
  const guint8      *upper;        /* NULL when unbounded */
  gsize              upper_len;
  gint64             budget;       /* rows the limit can still use, -1 for no limit */

  PGresult          *page;
  int                row;          /* the current row of @page, -1 before the first */
  gboolean           last_page;    /* no row after @page */
  int                page_rows;    /* the size of the next page */
};

G_DEFINE_DYNAMIC_TYPE_EXTENDED (QStorePgIter, qstore_pg_iter,
                                QSTORE_TYPE_ITER, G_TYPE_FLAG_FINAL, {})

/* Lets go of a leased connection, ending its read transaction. */
static void
iter_give_back (QStorePgIter *self)
{
  QStorePgConn *conn = g_steal_pointer (&self->conn);

  if (conn == NULL)
    return;
  if (self->snapshot != NULL || self->on_main)
    {
      qstore_pg_conn_unref (conn);
      return;
    }
  if (self->in_txn)
    {
      g_mutex_lock (&conn->lock);
      qstore_pg_conn_end_read (conn);
      g_mutex_unlock (&conn->lock);
    }
  qstore_pg_db_release_reader (self->db, conn);
}

/* Reads the next page: the first when @self->page is NULL, else the one
 * after its last row; @begin: in a read transaction begun with it. */
static gboolean
iter_fetch (QStorePgIter  *self,
            gboolean       begin,
            GError       **error)
{
  gboolean first = self->page == NULL;
  int rows = self->page_rows;
  guint32 rows_be, id_be;
  const char *values[4];
  int lengths[4];
  QStorePgStep step = { 0 };
  PGresult *res = NULL;
  const char *from;
  int from_len;
  int n = 0;
  gboolean ok;

  if (self->budget >= 0 && self->budget < rows)
    rows = (int) self->budget;
  rows_be = GUINT32_TO_BE ((guint32) rows);

  if (first)
    {
      from = self->lower != NULL ? (const char *) self->lower : "";
      from_len = self->lower != NULL ? (int) self->lower_len : 0;
    }
  else
    {
      int last = PQntuples (self->page) - 1;

      from = PQgetvalue (self->page, last, 0);
      from_len = PQgetlength (self->page, last, 0);
    }

  g_mutex_lock (&self->conn->lock);
  /* A write transaction's pages, while it lasts; a plain first page
   * never inside one. */
  if (self->txn_serial != 0 &&
      !qstore_pg_db_check_write_txn (self->db, self->txn_serial, error))
    {
      g_mutex_unlock (&self->conn->lock);
      return FALSE;
    }
  if (self->on_main && self->txn_serial == 0 && self->db->txn_open)
    {
      g_mutex_unlock (&self->conn->lock);
      self->moved = TRUE;
      return FALSE;
    }
  values[n] = self->name;
  lengths[n] = (int) strlen (self->name);
  /* On the writer's session (a first page), as its gets: by the id; a
   * snapshot's too while the id names the same store in its state. */
  if (self->on_main)
    step.by_id = qstore_pg_db_writer_store (self->db, self->name, &id_be, &values[n],
                                            &lengths[n]);
  else if (self->snapshot != NULL)
    step.by_id = qstore_pg_db_snapshot_store (self->db, self->snapshot->generation,
                                              self->name, &id_be, &values[n], &lengths[n]);
  n++;
  if (self->reverse)
    {
      /* Reverse: down from the upper bound (or the last key read) to the
       * lower bound. */
      values[n] = self->lower != NULL ? (const char *) self->lower : "";
      lengths[n++] = self->lower != NULL ? (int) self->lower_len : 0;
      if (!first)
        {
          step.stmt = QSTORE_PG_STMT_SCAN_REVERSE_NEXT;
          values[n] = from;
          lengths[n++] = from_len;
        }
      else if (self->upper != NULL)
        {
          step.stmt = QSTORE_PG_STMT_SCAN_REVERSE_FIRST_UPPER;
          values[n] = (const char *) self->upper;
          lengths[n++] = (int) self->upper_len;
        }
      else
        step.stmt = QSTORE_PG_STMT_SCAN_REVERSE_FIRST;
    }
  else
    {
      values[n] = from;
      lengths[n++] = from_len;
      if (self->upper != NULL)
        {
          values[n] = (const char *) self->upper;
          lengths[n++] = (int) self->upper_len;
        }
      step.stmt = first ? (self->upper ? QSTORE_PG_STMT_SCAN_FIRST_UPPER
                                        : QSTORE_PG_STMT_SCAN_FIRST)
                         : (self->upper ? QSTORE_PG_STMT_SCAN_NEXT_UPPER
                                        : QSTORE_PG_STMT_SCAN_NEXT);
    }
  values[n] = (const char *) &rows_be;
  lengths[n++] = 4;
  step.n_params = n;
  step.values = values;
  step.lengths = lengths;
  step.result = &res;

  if (begin)
    {
      self->conn->begin_read = TRUE;
      self->in_txn = TRUE;
    }
  ok = qstore_pg_conn_run (self->conn, &step, 1, "reading a range", error);
  g_mutex_unlock (&self->conn->lock);
  if (!ok)
    return FALSE;

  g_clear_pointer (&self->page, PQclear);
  self->page = res;
  self->row = -1;
  if (self->budget >= 0)
    self->budget -= PQntuples (res);
  self->last_page = PQntuples (res) < rows || self->budget == 0;
  self->page_rows = MIN (self->page_rows * 4, MAX_PAGE_ROWS);
  if (self->last_page)
    iter_give_back (self);
  return TRUE;
}

/* Takes the bounds now set and reads their first page, from a connection
 * chosen as for a new iterator. */
static gboolean
iter_start (QStorePgIter  *self,
            GError       **error)
{
  const QStoreBounds *bounds = qstore_iter_get_bounds (QSTORE_ITER (self));
  QStorePgDb *db = self->db;
  gint64 limit;
  gboolean fetched;

  /* The iterator's own copy of the bounds lives until they change. */
  self->lower = qstore_bounds_get_lower (bounds, &self->lower_len, NULL);
  self->upper = qstore_bounds_get_upper (bounds, &self->upper_len, NULL);
  self->reverse = qstore_bounds_get_reverse (bounds);
  /* One row more than the limit: an exclusive bound may skip the first. */
  self->budget = qstore_bounds_get_limit (bounds, &limit) ? MAX (limit, 0) + 1 : -1;
  self->page_rows = FIRST_PAGE_ROWS;
  self->row = -1;
  self->last_page = FALSE;
  self->moved = FALSE;
  self->in_txn = FALSE;
  self->on_main = FALSE;

  if (self->txn_serial != 0)
    {
      self->conn = qstore_pg_conn_ref (db->main);
      self->on_main = TRUE;
    }
  else if (self->snapshot != NULL)
    self->conn = qstore_pg_conn_ref (self->snapshot->conn);
  else if (!db->read_only && !qstore_pg_db_in_write_txn (db))
    {
      self->conn = qstore_pg_conn_ref (db->main);
      self->on_main = TRUE;
    }
  else if (!(self->conn = qstore_pg_db_acquire_reader (db, error)))
    return FALSE;

  /* The first page now: outside a snapshot, this fixes the state the
   * iterator sees to that of this moment. A range that fits in it needs
   * no transaction: a statement sees one state, so the writer's session
   * reads it, as it reads keys, and no pooled one is woken. A longer one
   * is read again from its start on a pooled session, in a read
   * transaction that the next pages share; nothing was handed out yet,
   * so that is still the same state. A write transaction's iterator
   * reads all its pages inside it. */
  if (self->budget == 0)
    {
      self->last_page = TRUE;
      iter_give_back (self);
      return TRUE;
    }
  fetched = iter_fetch (self, FALSE, error);
  if (!fetched && !self->moved)
    return FALSE;
  if (self->snapshot == NULL && self->txn_serial == 0 && (self->moved || !self->last_page))
    {
      iter_give_back (self);
      self->on_main = FALSE;
      if (!(self->conn = qstore_pg_db_acquire_reader (db, error)))
        return FALSE;
      g_clear_pointer (&self->page, PQclear);
      self->budget = qstore_bounds_get_limit (bounds, &limit) ? MAX (limit, 0) + 1 : -1;
      self->page_rows = FIRST_PAGE_ROWS;
      if (!iter_fetch (self, TRUE, error))
        return FALSE;
    }
  return TRUE;
}

QStoreIter *
qstore_pg_iter_new (QStorePgDb          *db,
                    GObject             *snapshot,
                    guint64              txn_serial,
                    const char          *name,
                    const QStoreBounds  *bounds,
                    GError             **error)
{
  g_autoptr(QStorePgIter) self = NULL;

  self = qstore_iter_new (QSTORE_TYPE_PG_ITER, bounds, NULL);
  self->db = qstore_pg_db_ref (db);
  self->name = g_strdup (name);
  self->txn_serial = txn_serial;
  if (txn_serial == 0 && snapshot != NULL)
    self->snapshot = g_object_ref (QSTORE_PG_SNAPSHOT (snapshot));
  if (!iter_start (self, error))
    return NULL;
  return QSTORE_ITER (g_steal_pointer (&self));
}

/* Starts over as a new iterator of the same snapshot or write
 * transaction would; outside both, on the state of this moment. */
static gboolean
qstore_pg_iter_restart (QStoreIter  *iter,
                        GError     **error)
{
  QStorePgIter *self = QSTORE_PG_ITER (iter);

  if (g_atomic_int_get (&self->db->closed))
    {
      qstore_pg_set_closed_error (error, self->db->what);
      return FALSE;
    }
  iter_give_back (self);
  g_clear_pointer (&self->page, PQclear);
  return iter_start (self, error);
}

static gboolean
qstore_pg_iter_advance (QStoreIter  *iter,
                        GError     **error)
{
  QStorePgIter *self = QSTORE_PG_ITER (iter);

  /* Even with rows left in the page: the provider's close ends it, and
   * a write transaction's end its iterators. */
  if (g_atomic_int_get (&self->db->closed))
    {
      qstore_pg_set_closed_error (error, self->db->what);
      return FALSE;
    }
  if (self->txn_serial != 0)
    {
      gboolean live;

      g_mutex_lock (&self->db->main->lock);
      live = qstore_pg_db_check_write_txn (self->db, self->txn_serial, error);
      g_mutex_unlock (&self->db->main->lock);
      if (!live)
        {
          iter_give_back (self);
          return FALSE;
        }
    }
  if (self->page == NULL)
    return FALSE;
  if (self->row + 1 < PQntuples (self->page))
    {
      self->row++;
      return TRUE;
    }
  if (self->last_page || PQntuples (self->page) == 0)
    {
      self->row = PQntuples (self->page);
      return FALSE;
    }
  if (!iter_fetch (self, FALSE, error))
    {
      iter_give_back (self);
      return FALSE;
    }
  if (PQntuples (self->page) == 0)
    return FALSE;
  self->row = 0;
  return TRUE;
}

static const guint8 *
peek (QStorePgIter *self,
      int           column,
      gsize        *len)
{
  /* A page outlives the connection it came from: it stays readable after
   * the provider closed. */
  if (self->page == NULL || self->row < 0 || self->row >= PQntuples (self->page))
    {
      *len = 0;
      return (const guint8 *) "";
    }
  *len = PQgetlength (self->page, self->row, column);
  return (const guint8 *) PQgetvalue (self->page, self->row, column);
}

static const guint8 *
qstore_pg_iter_peek_key (QStoreIter *iter,
                         gsize      *key_len)
{
  return peek (QSTORE_PG_ITER (iter), 0, key_len);
}

static const guint8 *
qstore_pg_iter_peek_value (QStoreIter *iter,
                           gsize      *value_len)
{
  return peek (QSTORE_PG_ITER (iter), 1, value_len);
}

static void
qstore_pg_iter_finalize (GObject *object)
{
  QStorePgIter *self = QSTORE_PG_ITER (object);

  iter_give_back (self);
  g_clear_pointer (&self->page, PQclear);
  g_clear_object (&self->snapshot);
  g_clear_pointer (&self->db, qstore_pg_db_unref);
  g_free (self->name);

  G_OBJECT_CLASS (qstore_pg_iter_parent_class)->finalize (object);
}

static void
qstore_pg_iter_class_init (QStorePgIterClass *klass)
{
  QStoreIterClass *iter_class = QSTORE_ITER_CLASS (klass);

  G_OBJECT_CLASS (klass)->finalize = qstore_pg_iter_finalize;
  iter_class->advance = qstore_pg_iter_advance;
  iter_class->peek_key = qstore_pg_iter_peek_key;
  iter_class->peek_value = qstore_pg_iter_peek_value;
  iter_class->restart = qstore_pg_iter_restart;
}

static void
qstore_pg_iter_class_finalize (QStorePgIterClass *klass)
{
}

static void
qstore_pg_iter_init (QStorePgIter *self)
{
}

void
qstore_pg_store_register_types (GTypeModule *module)
{
  qstore_pg_store_register_type (module);
  qstore_pg_snapshot_register_type (module);
  qstore_pg_iter_register_type (module);
}
