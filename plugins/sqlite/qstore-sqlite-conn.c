/* qstore-sqlite-conn.c: one SQLite connection and the statements it keeps
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "qstore-i18n-private.h"
#include "qstore-sqlite-conn.h"

/* The statements of the layout qstore-sqlite-schema.c describes. */

#define STORE_ID_OF_NAME "(SELECT id FROM stores WHERE name = ?1)"

static const char * const stmt_sql[QSTORE_SQLITE_N_STMTS] = {
  [QSTORE_SQLITE_STMT_BEGIN] = "BEGIN",
  [QSTORE_SQLITE_STMT_COMMIT] = "COMMIT",
  [QSTORE_SQLITE_STMT_ROLLBACK] = "ROLLBACK",
  [QSTORE_SQLITE_STMT_PIN] = "SELECT id FROM stores LIMIT 1",
  [QSTORE_SQLITE_STMT_STORE_ID] = "SELECT id FROM stores WHERE name = ?1",
  [QSTORE_SQLITE_STMT_GET] = "SELECT value FROM kv WHERE store_id = ?1 AND key = ?2",
  [QSTORE_SQLITE_STMT_GET_BY_NAME] =
    "SELECT value FROM kv WHERE store_id = " STORE_ID_OF_NAME " AND key = ?2",
  [QSTORE_SQLITE_STMT_GET_BIG] = "SELECT value FROM big_values WHERE id = ?1",
  [QSTORE_SQLITE_STMT_LIST] =
    "SELECT name FROM stores AS s WHERE EXISTS (SELECT 1 FROM kv WHERE kv.store_id = s.id)",
  [QSTORE_SQLITE_STMT_BEGIN_IMMEDIATE] = "BEGIN IMMEDIATE",
  /* Writes nothing, but takes the write lock as any write does. */
  [QSTORE_SQLITE_STMT_TAKE_WRITE_LOCK] = "DELETE FROM big_values WHERE 0",
  [QSTORE_SQLITE_STMT_DATA_VERSION] = "PRAGMA data_version",
  [QSTORE_SQLITE_STMT_CREATE_STORE] = "INSERT INTO stores (name) VALUES (?1)",
  [QSTORE_SQLITE_STMT_PUT] = "INSERT OR REPLACE INTO kv (store_id, key, value) VALUES (?1, ?2, ?3)",
  [QSTORE_SQLITE_STMT_DELETE] = "DELETE FROM kv WHERE store_id = ?1 AND key = ?2",
  [QSTORE_SQLITE_STMT_DROP_ENTRIES] = "DELETE FROM kv WHERE store_id = " STORE_ID_OF_NAME,
  [QSTORE_SQLITE_STMT_DROP_STORE] = "DELETE FROM stores WHERE name = ?1",
  [QSTORE_SQLITE_STMT_HAS_ENTRIES] =
    "SELECT 1 FROM kv WHERE store_id = " STORE_ID_OF_NAME " LIMIT 1",
  [QSTORE_SQLITE_STMT_RENAME_STORE] = "UPDATE stores SET name = ?2 WHERE name = ?1",
  [QSTORE_SQLITE_STMT_PUT_BIG] = "INSERT INTO big_values (value) VALUES (?1)",
  /* The big value an entry refers to, before the entry is replaced or
   * deleted. */
  [QSTORE_SQLITE_STMT_DELETE_BIG] =
    "DELETE FROM big_values WHERE id = (SELECT value FROM kv WHERE store_id = ?1 "
    "AND key = ?2 AND typeof (value) = 'integer')",
  [QSTORE_SQLITE_STMT_DROP_BIG] =
    "DELETE FROM big_values WHERE id IN (SELECT value FROM kv WHERE store_id = "
    STORE_ID_OF_NAME " AND typeof (value) = 'integer')",
};

/* Both bounds go into the SQL so the walk stops early; the base class
 * applies exclusivity, so inclusive comparisons are enough here. By name,
 * the store is looked up inside the scan itself, so it is resolved in the
 * same read transaction as the entries; a snapshot knows its stores' ids
 * already. */
#define SCAN_BY_NAME "SELECT key, value FROM kv WHERE store_id = " STORE_ID_OF_NAME
#define SCAN_BY_ID "SELECT key, value FROM kv WHERE store_id = ?1"
#define SCAN_FORWARD " AND key >= ?2 ORDER BY key"
#define SCAN_FORWARD_UPPER " AND key >= ?2 AND key <= ?3 ORDER BY key"
#define SCAN_REVERSE " AND key >= ?2 ORDER BY key DESC"
#define SCAN_REVERSE_UPPER " AND key >= ?2 AND key <= ?3 ORDER BY key DESC"

static const char * const scan_sql[QSTORE_SQLITE_N_SCANS] = {
  [QSTORE_SQLITE_SCAN_FORWARD] = SCAN_BY_NAME SCAN_FORWARD,
  [QSTORE_SQLITE_SCAN_FORWARD_UPPER] = SCAN_BY_NAME SCAN_FORWARD_UPPER,
  [QSTORE_SQLITE_SCAN_REVERSE] = SCAN_BY_NAME SCAN_REVERSE,
  [QSTORE_SQLITE_SCAN_REVERSE_UPPER] = SCAN_BY_NAME SCAN_REVERSE_UPPER,
  [QSTORE_SQLITE_SCAN_BY_ID + QSTORE_SQLITE_SCAN_FORWARD] = SCAN_BY_ID SCAN_FORWARD,
  [QSTORE_SQLITE_SCAN_BY_ID + QSTORE_SQLITE_SCAN_FORWARD_UPPER] = SCAN_BY_ID SCAN_FORWARD_UPPER,
  [QSTORE_SQLITE_SCAN_BY_ID + QSTORE_SQLITE_SCAN_REVERSE] = SCAN_BY_ID SCAN_REVERSE,
  [QSTORE_SQLITE_SCAN_BY_ID + QSTORE_SQLITE_SCAN_REVERSE_UPPER] = SCAN_BY_ID SCAN_REVERSE_UPPER,
};

/* Idle scan statements kept for reuse per connection; more are prepared
 * on demand and finalized when given back. */
#define MAX_IDLE_SCANS 4

/* Errors */

QStoreError
qstore_sqlite_error_code_for (int rc)
{
  switch (rc & 0xff)
    {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return QSTORE_ERROR_BUSY;

    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
    case SQLITE_FORMAT:
      return QSTORE_ERROR_CORRUPT;

    case SQLITE_IOERR:
    case SQLITE_FULL:
    case SQLITE_CANTOPEN:
    case SQLITE_PERM:
    case SQLITE_READONLY:
    case SQLITE_PROTOCOL:
    case SQLITE_NOLFS:
      return QSTORE_ERROR_IO;

    case SQLITE_TOOBIG:
      return QSTORE_ERROR_INVALID_ARGUMENT;

    case SQLITE_CONSTRAINT:
      return QSTORE_ERROR_CONSTRAINT;

    default:
      return QSTORE_ERROR_FAILED;
    }
}

static const char *
hint_for (QStoreError code)
{
  switch (code)
    {
    case QSTORE_ERROR_BUSY:
      return " (another connection holds the lock: retry later)";
    case QSTORE_ERROR_CORRUPT:
      return " (the file is damaged: restore it from a backup)";
    case QSTORE_ERROR_IO:
      return " (check the free disk space and the permissions of the file and its directory)";
    case QSTORE_ERROR_INVALID_ARGUMENT:
      return " (the value is larger than SQLite stores)";
    default:
      return "";
    }
}

void
qstore_sqlite_set_error (GError     **error,
                  sqlite3     *db,
                  int          rc,
                  const char  *path,
                  const char  *doing)
{
  QStoreError code = qstore_sqlite_error_code_for (rc);
  const char *message = db != NULL ? sqlite3_errmsg (db) : sqlite3_errstr (rc);

  g_set_error (error, QSTORE_ERROR, code, _("SQLite store “%s”: %s failed: %s%s"),
               path, doing, message, hint_for (code));
}

void
qstore_sqlite_conn_set_error (QStoreSqliteConn  *conn,
                              int                rc,
                              const char        *doing,
                              GError           **error)
{
  qstore_sqlite_set_error (error, conn->db, rc, conn->path, doing);
}

void
qstore_sqlite_set_closed_error (GError     **error,
                                const char  *path)
{
  g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_CLOSED,
               _("The sqlite store at “%s” is closed: open it again to use it"), path);
}

/* Connections */

QStoreSqliteConn *
qstore_sqlite_conn_open (const char  *path,
                         int          flags,
                         int          busy_timeout_ms,
                         int          cache_kib,
                         int          mmap_bytes,
                         GError     **error)
{
  QStoreSqliteConn *conn;
  sqlite3 *db = NULL;
  int rc;

  rc = sqlite3_open_v2 (path, &db,
                        flags | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE, NULL);
  if (rc != SQLITE_OK)
    {
      int err = db != NULL ? sqlite3_system_errno (db) : 0;

      g_set_error (error, QSTORE_ERROR, qstore_sqlite_error_code_for (rc),
                   _("SQLite store “%s” cannot be opened: %s%s%s%s"),
                   path, sqlite3_errstr (rc),
                   err != 0 ? " (" : "", err != 0 ? g_strerror (err) : "", err != 0 ? ")" : "");
      sqlite3_close (db);
      return NULL;
    }

  sqlite3_busy_timeout (db, busy_timeout_ms);
  /* The file may come from anywhere: never run what its schema says beyond
   * plain tables (no triggers, views or schema functions). */
  sqlite3_db_config (db, SQLITE_DBCONFIG_DEFENSIVE, 1, NULL);
  sqlite3_db_config (db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, NULL);
  sqlite3_db_config (db, SQLITE_DBCONFIG_ENABLE_TRIGGER, 0, NULL);
  sqlite3_db_config (db, SQLITE_DBCONFIG_ENABLE_VIEW, 0, NULL);
  if (cache_kib > 0)
    {
      g_autofree char *sql = g_strdup_printf ("PRAGMA cache_size = -%d", cache_kib);

      rc = sqlite3_exec (db, sql, NULL, NULL, NULL);
      if (rc != SQLITE_OK)
        {
          qstore_sqlite_set_error (error, db, rc, path, "setting the cache size");
          sqlite3_close (db);
          return NULL;
        }
    }
  /* Reading pages through a map spares a pread() and a copy per page that
   * is not in this connection's cache: every new read snapshot starts
   * with a cold cache, so this is most of a point lookup's cost. Nothing
   * shrinks the file under the map: one writer, and it never vacuums. */
  if (mmap_bytes > 0)
    {
      g_autofree char *sql = g_strdup_printf ("PRAGMA mmap_size = %d", mmap_bytes);

      rc = sqlite3_exec (db, sql, NULL, NULL, NULL);
      if (rc != SQLITE_OK)
        {
          qstore_sqlite_set_error (error, db, rc, path, "setting the map size");
          sqlite3_close (db);
          return NULL;
        }
    }

  conn = g_new0 (QStoreSqliteConn, 1);
  g_atomic_ref_count_init (&conn->ref_count);
  g_mutex_init (&conn->lock);
  conn->db = db;
  conn->path = g_strdup (path);
  for (guint i = 0; i < QSTORE_SQLITE_N_SCANS; i++)
    conn->idle_scans[i] = g_ptr_array_new ();
  conn->busy_scans = g_ptr_array_new ();
  return conn;
}

static void
finalize_all (GPtrArray *stmts)
{
  for (guint i = 0; i < stmts->len; i++)
    sqlite3_finalize (g_ptr_array_index (stmts, i));
  g_ptr_array_set_size (stmts, 0);
}

void
qstore_sqlite_conn_close (QStoreSqliteConn *conn)
{
  sqlite3 *db = conn->db;

  if (db == NULL)
    return;
  /* First: iterators peek at their rows without the lock, and must see
   * the close before the rows' memory goes. */
  g_atomic_pointer_set (&conn->db, NULL);

  for (guint i = 0; i < QSTORE_SQLITE_N_STMTS; i++)
    g_clear_pointer (&conn->stmts[i], sqlite3_finalize);
  for (guint i = 0; i < QSTORE_SQLITE_N_SCANS; i++)
    finalize_all (conn->idle_scans[i]);
  finalize_all (conn->busy_scans);

  sqlite3_close_v2 (db);
}

QStoreSqliteConn *
qstore_sqlite_conn_ref (QStoreSqliteConn *conn)
{
  g_atomic_ref_count_inc (&conn->ref_count);
  return conn;
}

void
qstore_sqlite_conn_unref (QStoreSqliteConn *conn)
{
  if (!g_atomic_ref_count_dec (&conn->ref_count))
    return;

  /* Connections are closed by their provider; this is the last resort for
   * one that never made it into the provider's list. */
  qstore_sqlite_conn_close (conn);
  for (guint i = 0; i < QSTORE_SQLITE_N_SCANS; i++)
    g_ptr_array_unref (conn->idle_scans[i]);
  g_ptr_array_unref (conn->busy_scans);
  g_mutex_clear (&conn->lock);
  g_free (conn->path);
  g_free (conn);
}

gboolean
qstore_sqlite_conn_check_open (QStoreSqliteConn  *conn,
                               GError           **error)
{
  if (G_UNLIKELY (conn->db == NULL))
    {
      qstore_sqlite_set_closed_error (error, conn->path);
      return FALSE;
    }
  return TRUE;
}

static sqlite3_stmt *
conn_prepare (QStoreSqliteConn  *conn,
              const char        *sql,
              GError           **error)
{
  sqlite3_stmt *stmt = NULL;
  int rc;

  rc = sqlite3_prepare_v3 (conn->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &stmt, NULL);
  if (rc != SQLITE_OK)
    {
      qstore_sqlite_conn_set_error (conn, rc, "preparing a statement", error);
      sqlite3_finalize (stmt);
      return NULL;
    }
  return stmt;
}

sqlite3_stmt *
qstore_sqlite_conn_stmt (QStoreSqliteConn  *conn,
                         QStoreSqliteStmt   which,
                         GError           **error)
{
  if (G_UNLIKELY (conn->stmts[which] == NULL))
    conn->stmts[which] = conn_prepare (conn, stmt_sql[which], error);
  return conn->stmts[which];
}

sqlite3_stmt *
qstore_sqlite_conn_take_scan (QStoreSqliteConn  *conn,
                              QStoreSqliteScan   which,
                              GError           **error)
{
  GPtrArray *idle = conn->idle_scans[which];
  sqlite3_stmt *stmt;

  if (idle->len > 0)
    stmt = g_ptr_array_steal_index_fast (idle, idle->len - 1);
  else if ((stmt = conn_prepare (conn, scan_sql[which], error)) == NULL)
    return NULL;
  g_ptr_array_add (conn->busy_scans, stmt);
  return stmt;
}

void
qstore_sqlite_conn_give_scan (QStoreSqliteConn *conn,
                              QStoreSqliteScan  which,
                              sqlite3_stmt     *stmt)
{
  /* After the close the statement is already finalized. */
  if (conn->db == NULL)
    return;

  g_ptr_array_remove_fast (conn->busy_scans, stmt);
  sqlite3_reset (stmt);
  sqlite3_clear_bindings (stmt);
  if (conn->idle_scans[which]->len < MAX_IDLE_SCANS)
    g_ptr_array_add (conn->idle_scans[which], stmt);
  else
    sqlite3_finalize (stmt);
}

GBytes *
qstore_sqlite_conn_read_big (QStoreSqliteConn  *conn,
                             gint64             id,
                             GError           **error)
{
  sqlite3_stmt *stmt = qstore_sqlite_conn_stmt (conn, QSTORE_SQLITE_STMT_GET_BIG, error);
  GBytes *value = NULL;
  int rc;

  if (stmt == NULL)
    return NULL;
  sqlite3_bind_int64 (stmt, 1, id);
  rc = sqlite3_step (stmt);
  if (rc == SQLITE_ROW && sqlite3_column_type (stmt, 0) == SQLITE_BLOB)
    value = g_bytes_new (sqlite3_column_blob (stmt, 0), sqlite3_column_bytes (stmt, 0));
  else if (rc == SQLITE_ROW || rc == SQLITE_DONE)
    g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_CORRUPT,
                 "SQLite store “%s” is damaged: an entry refers to big value %" G_GINT64_FORMAT
                 ", which is missing; restore it from a backup", conn->path, id);
  else
    qstore_sqlite_conn_set_error (conn, rc, "reading a big value", error);
  sqlite3_reset (stmt);
  return value;
}

/* Binds are the caller's. */
gboolean
qstore_sqlite_conn_run_stmt (QStoreSqliteConn  *conn,
                             sqlite3_stmt      *stmt,
                             const char        *doing,
                             GError           **error)
{
  int rc = sqlite3_step (stmt);

  if (rc != SQLITE_DONE && rc != SQLITE_ROW)
    {
      qstore_sqlite_conn_set_error (conn, rc, doing, error);
      sqlite3_reset (stmt);
      return FALSE;
    }
  sqlite3_reset (stmt);
  return TRUE;
}

gboolean
qstore_sqlite_conn_run (QStoreSqliteConn  *conn,
                        QStoreSqliteStmt   which,
                        const char        *doing,
                        GError           **error)
{
  sqlite3_stmt *stmt = qstore_sqlite_conn_stmt (conn, which, error);

  return stmt != NULL && qstore_sqlite_conn_run_stmt (conn, stmt, doing, error);
}

gboolean
qstore_sqlite_conn_run_named (QStoreSqliteConn  *conn,
                              QStoreSqliteStmt   which,
                              const char        *name,
                              const char        *doing,
                              GError           **error)
{
  sqlite3_stmt *stmt = qstore_sqlite_conn_stmt (conn, which, error);

  if (stmt == NULL)
    return FALSE;
  sqlite3_bind_text (stmt, 1, name, -1, SQLITE_STATIC);
  return qstore_sqlite_conn_run_stmt (conn, stmt, doing, error);
}

gboolean
qstore_sqlite_conn_exec (QStoreSqliteConn  *conn,
                         const char        *sql,
                         const char        *doing,
                         GError           **error)
{
  int rc = sqlite3_exec (conn->db, sql, NULL, NULL, NULL);

  if (rc != SQLITE_OK)
    {
      qstore_sqlite_conn_set_error (conn, rc, doing, error);
      return FALSE;
    }
  return TRUE;
}

