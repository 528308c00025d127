/* qstore-sqlite-db.c: an open SQLite store file, shared by a provider and
 * everything it hands out
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "qstore-sqlite-db.h"

/* Idle reader connections kept for reuse; more are opened on demand and
 * closed when given back. */
#define MAX_IDLE_READERS 4
#define DEFAULT_BUSY_TIMEOUT_MS 5000
/* Address space, not memory: pages are only read in when touched. */
#define DEFAULT_MMAP_BYTES (1 << 30)

QStoreSqliteDb *
qstore_sqlite_db_new (const char *path,
                      gboolean    read_only)
{
  QStoreSqliteDb *db = g_new0 (QStoreSqliteDb, 1);

  g_atomic_ref_count_init (&db->ref_count);
  db->path = g_strdup (path);
  db->read_only = read_only;
  db->busy_timeout_ms = DEFAULT_BUSY_TIMEOUT_MS;
  db->mmap_bytes = DEFAULT_MMAP_BYTES;
  db->store_ids = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  db->readers = g_ptr_array_new_with_free_func ((GDestroyNotify) qstore_sqlite_conn_unref);
  db->idle = g_ptr_array_new_with_free_func ((GDestroyNotify) qstore_sqlite_conn_unref);
  g_mutex_init (&db->pool_lock);
  return db;
}

QStoreSqliteDb *
qstore_sqlite_db_ref (QStoreSqliteDb *db)
{
  g_atomic_ref_count_inc (&db->ref_count);
  return db;
}

void
qstore_sqlite_db_unref (QStoreSqliteDb *db)
{
  if (!g_atomic_ref_count_dec (&db->ref_count))
    return;

  qstore_sqlite_db_close (db);
  g_clear_pointer (&db->main, qstore_sqlite_conn_unref);
  g_clear_pointer (&db->store_ids, g_hash_table_unref);
  g_clear_pointer (&db->readers, g_ptr_array_unref);
  g_clear_pointer (&db->idle, g_ptr_array_unref);
  g_mutex_clear (&db->pool_lock);
  g_free (db->path);
  g_free (db);
}

/* The reader pool */

QStoreSqliteConn *
qstore_sqlite_db_acquire_reader (QStoreSqliteDb  *self,
                                 gboolean         pin,
                                 GError         **error)
{
  g_autoptr(QStoreSqliteConn) conn = NULL;
  gboolean ok;

  g_mutex_lock (&self->pool_lock);
  if (self->closed)
    {
      g_mutex_unlock (&self->pool_lock);
      qstore_sqlite_set_closed_error (error, self->path);
      return NULL;
    }
  if (self->idle->len > 0)
    conn = g_ptr_array_steal_index_fast (self->idle, self->idle->len - 1);
  g_mutex_unlock (&self->pool_lock);

  if (conn == NULL)
    {
      /* Opening takes a while: do it outside the pool lock. */
      if (!(conn = qstore_sqlite_conn_open (self->path, SQLITE_OPEN_READONLY,
                                            self->busy_timeout_ms, self->cache_kib,
                                            self->mmap_bytes, error)))
        return NULL;

      g_mutex_lock (&self->pool_lock);
      if (self->closed)
        {
          g_mutex_unlock (&self->pool_lock);
          qstore_sqlite_set_closed_error (error, self->path);
          return NULL;
        }
      g_ptr_array_add (self->readers, qstore_sqlite_conn_ref (conn));
      g_mutex_unlock (&self->pool_lock);
    }

  if (!pin)
    return g_steal_pointer (&conn);

  /* A WAL read transaction only takes its snapshot at the first read. */
  g_mutex_lock (&conn->lock);
  ok = qstore_sqlite_conn_check_open (conn, error) &&
       qstore_sqlite_conn_run (conn, QSTORE_SQLITE_STMT_BEGIN,
                               "beginning a read transaction", error) &&
       qstore_sqlite_conn_run (conn, QSTORE_SQLITE_STMT_PIN,
                               "beginning a read transaction", error);
  g_mutex_unlock (&conn->lock);
  if (!ok)
    {
      qstore_sqlite_db_release_reader (self, conn);
      return NULL;
    }
  return g_steal_pointer (&conn);
}

void
qstore_sqlite_db_release_reader (QStoreSqliteDb   *self,
                                 QStoreSqliteConn *conn)
{
  gboolean reusable = FALSE;

  g_mutex_lock (&conn->lock);
  if (conn->db != NULL)
    {
      for (guint i = 0; i < QSTORE_SQLITE_N_STMTS; i++)
        if (conn->stmts[i] != NULL)
          sqlite3_reset (conn->stmts[i]);
      reusable = conn->busy_scans->len == 0;
      if (!sqlite3_get_autocommit (conn->db) &&
          !qstore_sqlite_conn_run (conn, QSTORE_SQLITE_STMT_COMMIT,
                                   "ending a read transaction", NULL))
        reusable = FALSE;
    }
  g_mutex_unlock (&conn->lock);

  g_mutex_lock (&self->pool_lock);
  if (!self->closed)
    {
      if (reusable && self->idle->len < MAX_IDLE_READERS)
        g_ptr_array_add (self->idle, qstore_sqlite_conn_ref (conn));
      else
        {
          g_mutex_lock (&conn->lock);
          qstore_sqlite_conn_close (conn);
          g_mutex_unlock (&conn->lock);
          g_ptr_array_remove_fast (self->readers, conn);
        }
    }
  g_mutex_unlock (&self->pool_lock);
}

QStoreSqliteConn *
qstore_sqlite_db_acquire_plain (QStoreSqliteDb  *self,
                                GError         **error)
{
  gboolean beside_write;

  g_mutex_lock (&self->main->lock);
  beside_write = self->write_open;
  g_mutex_unlock (&self->main->lock);
  return beside_write ? qstore_sqlite_db_acquire_reader (self, FALSE, error)
                      : qstore_sqlite_conn_ref (self->main);
}

void
qstore_sqlite_db_release_plain (QStoreSqliteDb   *self,
                                QStoreSqliteConn *conn)
{
  if (conn != self->main)
    qstore_sqlite_db_release_reader (self, conn);
  qstore_sqlite_conn_unref (conn);
}

/* Store ids */

void
qstore_sqlite_db_forget_stores (QStoreSqliteDb *self)
{
  g_hash_table_remove_all (self->store_ids);
}

gboolean
qstore_sqlite_db_resolve_store (QStoreSqliteDb  *self,
                                const char      *name,
                                gboolean         create,
                                gint64          *id,
                                GError         **error)
{
  QStoreSqliteConn *conn = self->main;
  const gint64 *cached;
  sqlite3_stmt *stmt;
  int rc;

  /* Absent stores are remembered too (as -1): a table's first rows are
   * each checked for existence before its store is made, and SQL for
   * each would cost a read transaction. */
  cached = g_hash_table_lookup (self->store_ids, name);
  if (cached != NULL && (*cached >= 0 || !create))
    {
      *id = *cached;
      return TRUE;
    }

  if (!(stmt = qstore_sqlite_conn_stmt (conn, QSTORE_SQLITE_STMT_STORE_ID, error)))
    return FALSE;
  sqlite3_bind_text (stmt, 1, name, -1, SQLITE_STATIC);
  rc = sqlite3_step (stmt);
  if (rc == SQLITE_ROW)
    *id = sqlite3_column_int64 (stmt, 0);
  else if (rc != SQLITE_DONE)
    qstore_sqlite_conn_set_error (conn, rc, "looking up a store", error);
  sqlite3_reset (stmt);

  if (rc == SQLITE_DONE && !create)
    *id = -1;
  else if (rc == SQLITE_DONE)
    {
      if (!qstore_sqlite_conn_run_named (conn, QSTORE_SQLITE_STMT_CREATE_STORE, name,
                                         "creating a store", error))
        return FALSE;
      *id = sqlite3_last_insert_rowid (conn->db);
    }
  else if (rc != SQLITE_ROW)
    return FALSE;

  g_hash_table_insert (self->store_ids, g_strdup (name), g_memdup2 (id, sizeof *id));
  return TRUE;
}

/* Reading */

void
qstore_sqlite_db_end_read (QStoreSqliteDb *self)
{
  QStoreSqliteConn *conn = self->main;

  if (!self->reading)
    return;
  self->reading = FALSE;
  if (conn->db != NULL && !sqlite3_get_autocommit (conn->db))
    qstore_sqlite_conn_run (conn, QSTORE_SQLITE_STMT_COMMIT, "ending a read transaction", NULL);
}

/* Puts @data into @value. */
static void
value_set (QStoreSqliteValue *value,
           const void        *data,
           gsize              len)
{
  if (value->into != NULL)
    {
      g_byte_array_set_size (value->into, len);
      if (len > 0)
        memcpy (value->into->data, data, len);
    }
  else
    value->bytes = g_bytes_new (data, len);
}

/* Steps @stmt, a lookup bound by the caller, and puts the value it finds
 * into @value. Called with the connection's lock held. */
static gboolean
read_value (QStoreSqliteConn   *conn,
            sqlite3_stmt       *stmt,
            QStoreSqliteValue  *value,
            GError            **error)
{
  int rc = sqlite3_step (stmt);

  if (rc == SQLITE_ROW && sqlite3_column_type (stmt, 0) == SQLITE_INTEGER)
    {
      gint64 id = sqlite3_column_int64 (stmt, 0);
      g_autoptr(GBytes) big = NULL;

      sqlite3_reset (stmt);
      if (!(big = qstore_sqlite_conn_read_big (conn, id, error)))
        return FALSE;
      if (value->into != NULL)
        value_set (value, g_bytes_get_data (big, NULL), g_bytes_get_size (big));
      else
        value->bytes = g_steal_pointer (&big);
      return TRUE;
    }
  if (rc == SQLITE_ROW)
    value_set (value, sqlite3_column_blob (stmt, 0), sqlite3_column_bytes (stmt, 0));
  else if (rc != SQLITE_DONE)
    qstore_sqlite_conn_set_error (conn, rc, "reading a key", error);
  sqlite3_reset (stmt);
  return rc == SQLITE_ROW;
}

/* Resolves the name in the same statement as the key: for readers of a
 * store another process writes, which may rename or drop stores at any
 * time, and for plain reads beside an open write transaction, whose ids
 * may not be committed. Called with the connection's lock held. */
static gboolean
get_by_name (QStoreSqliteConn   *conn,
             const char         *name,
             const guint8       *key,
             gsize               key_len,
             QStoreSqliteValue  *value,
             GError            **error)
{
  sqlite3_stmt *stmt;

  if (!qstore_sqlite_conn_check_open (conn, error) ||
      !(stmt = qstore_sqlite_conn_stmt (conn, QSTORE_SQLITE_STMT_GET_BY_NAME, error)))
    return FALSE;
  sqlite3_bind_text (stmt, 1, name, -1, SQLITE_STATIC);
  sqlite3_bind_blob64 (stmt, 2, key, key_len, SQLITE_STATIC);
  return read_value (conn, stmt, value, error);
}

/* A plain read while a write transaction is open on the main connection:
 * through a reader, which sees only what is committed. */
static gboolean
get_beside_write (QStoreSqliteDb     *self,
                  const char         *name,
                  const guint8       *key,
                  gsize               key_len,
                  QStoreSqliteValue  *value,
                  GError            **error)
{
  g_autoptr(QStoreSqliteConn) conn = qstore_sqlite_db_acquire_reader (self, FALSE, error);
  gboolean found;

  if (conn == NULL)
    return FALSE;
  g_mutex_lock (&conn->lock);
  found = get_by_name (conn, name, key, key_len, value, error);
  g_mutex_unlock (&conn->lock);
  qstore_sqlite_db_release_reader (self, conn);
  return found;
}

gboolean
qstore_sqlite_db_get_main (QStoreSqliteDb     *self,
                           const char         *name,
                           const guint8       *key,
                           gsize               key_len,
                           QStoreSqliteValue  *value,
                           GError            **error)
{
  sqlite3_stmt *stmt;
  gint64 id;

  /* The writer lock makes ours the only writes, so the ids we know hold. */
  if (!qstore_sqlite_db_resolve_store (self, name, FALSE, &id, error) || id < 0 ||
      !(stmt = qstore_sqlite_conn_stmt (self->main, QSTORE_SQLITE_STMT_GET, error)))
    return FALSE;
  sqlite3_bind_int64 (stmt, 1, id);
  sqlite3_bind_blob64 (stmt, 2, key, key_len, SQLITE_STATIC);
  return read_value (self->main, stmt, value, error);
}

gboolean
qstore_sqlite_db_get (QStoreSqliteDb     *self,
                      const char         *name,
                      const guint8       *key,
                      gsize               key_len,
                      QStoreSqliteValue  *value,
                      GError            **error)
{
  QStoreSqliteConn *conn = self->main;
  gboolean found = FALSE;

  g_mutex_lock (&conn->lock);
  if (self->read_only)
    {
      found = get_by_name (conn, name, key, key_len, value, error);
      goto out;
    }
  if (!qstore_sqlite_conn_check_open (conn, error))
    goto out;
  if (self->write_open)
    {
      g_mutex_unlock (&conn->lock);
      return get_beside_write (self, name, key, key_len, value, error);
    }

  /* The writer lock makes ours the only writes, so a read transaction
   * left open sees every commit until our next write, which ends it: the
   * reads in between share it rather than each taking and dropping the
   * WAL read lock (two fcntl() calls and a look at the -shm). */
  if (!self->reading && sqlite3_get_autocommit (conn->db))
    self->reading = qstore_sqlite_conn_run (conn, QSTORE_SQLITE_STMT_BEGIN,
                                            "beginning a read transaction", NULL);
  found = qstore_sqlite_db_get_main (self, name, key, key_len, value, error);

out:
  g_mutex_unlock (&conn->lock);
  return found;
}

void
qstore_sqlite_db_close (QStoreSqliteDb *self)
{
  g_mutex_lock (&self->pool_lock);
  self->closed = TRUE;
  for (guint i = 0; i < self->readers->len; i++)
    {
      QStoreSqliteConn *conn = g_ptr_array_index (self->readers, i);

      g_mutex_lock (&conn->lock);
      qstore_sqlite_conn_close (conn);
      g_mutex_unlock (&conn->lock);
    }
  g_ptr_array_set_size (self->idle, 0);
  g_ptr_array_set_size (self->readers, 0);
  g_mutex_unlock (&self->pool_lock);

  /* With our readers gone, the checkpoint can reach the end of the WAL
   * (unless another process still reads). */
  if (self->main != NULL)
    {
      g_mutex_lock (&self->main->lock);
      qstore_sqlite_db_end_read (self);
      /* Closing the connection rolls an open write transaction back. */
      if (self->main->db != NULL && !self->read_only && !self->write_open)
        sqlite3_wal_checkpoint_v2 (self->main->db, NULL, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
      qstore_sqlite_conn_close (self->main);
      self->write_open = FALSE;
      qstore_sqlite_db_forget_stores (self);
      g_mutex_unlock (&self->main->lock);
    }
}

