/* qstore-sqlite-provider.c: the `sqlite` provider, one SQLite file per location
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include <glib/gstdio.h>
#include <gmodule.h>

#include "qstore-sqlite-private.h"

/* The layout: every store is a row of `stores`, every entry a row of `kv`
 * keyed by (store id, key). A WITHOUT ROWID table orders BLOB keys by
 * memcmp and then length, which is exactly qstore's key order, so range
 * scans are index walks. Renaming a store is one UPDATE. */
#define APPLICATION_ID 0x71537472 /* "qStr" */
#define FORMAT_VERSION 1

static const char create_stores_sql[] =
  "CREATE TABLE stores (id INTEGER PRIMARY KEY, name TEXT UNIQUE NOT NULL)";
static const char create_kv_sql[] =
  "CREATE TABLE kv (store_id INTEGER NOT NULL, key BLOB NOT NULL, "
  "value BLOB NOT NULL, PRIMARY KEY (store_id, key)) WITHOUT ROWID";

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
  [QSTORE_SQLITE_STMT_LIST] =
    "SELECT name FROM stores AS s WHERE EXISTS (SELECT 1 FROM kv WHERE kv.store_id = s.id)",
  [QSTORE_SQLITE_STMT_BEGIN_IMMEDIATE] = "BEGIN IMMEDIATE",
  [QSTORE_SQLITE_STMT_DATA_VERSION] = "PRAGMA data_version",
  [QSTORE_SQLITE_STMT_CREATE_STORE] = "INSERT INTO stores (name) VALUES (?1)",
  [QSTORE_SQLITE_STMT_PUT] = "INSERT OR REPLACE INTO kv (store_id, key, value) VALUES (?1, ?2, ?3)",
  [QSTORE_SQLITE_STMT_DELETE] = "DELETE FROM kv WHERE store_id = ?1 AND key = ?2",
  [QSTORE_SQLITE_STMT_DROP_ENTRIES] = "DELETE FROM kv WHERE store_id = " STORE_ID_OF_NAME,
  [QSTORE_SQLITE_STMT_DROP_STORE] = "DELETE FROM stores WHERE name = ?1",
  [QSTORE_SQLITE_STMT_HAS_ENTRIES] =
    "SELECT 1 FROM kv WHERE store_id = " STORE_ID_OF_NAME " LIMIT 1",
  [QSTORE_SQLITE_STMT_RENAME_STORE] = "UPDATE stores SET name = ?2 WHERE name = ?1",
};

/* Both bounds go into the SQL so the walk stops early; the base class
 * applies exclusivity, so inclusive comparisons are enough here. The store
 * is looked up inside the scan itself, so it is resolved in the same read
 * transaction as the entries. */
static const char * const scan_sql[QSTORE_SQLITE_N_SCANS] = {
  [QSTORE_SQLITE_SCAN_FORWARD] =
    "SELECT key, value FROM kv WHERE store_id = " STORE_ID_OF_NAME
    " AND key >= ?2 ORDER BY key",
  [QSTORE_SQLITE_SCAN_FORWARD_UPPER] =
    "SELECT key, value FROM kv WHERE store_id = " STORE_ID_OF_NAME
    " AND key >= ?2 AND key <= ?3 ORDER BY key",
  [QSTORE_SQLITE_SCAN_REVERSE] =
    "SELECT key, value FROM kv WHERE store_id = " STORE_ID_OF_NAME
    " AND key >= ?2 ORDER BY key DESC",
  [QSTORE_SQLITE_SCAN_REVERSE_UPPER] =
    "SELECT key, value FROM kv WHERE store_id = " STORE_ID_OF_NAME
    " AND key >= ?2 AND key <= ?3 ORDER BY key DESC",
};

/* Idle reader connections and idle scan statements kept for reuse; more
 * are opened on demand and closed when given back. */
#define MAX_IDLE_READERS 4
#define MAX_IDLE_SCANS 4
#define DEFAULT_BUSY_TIMEOUT_MS 5000

struct _QStoreSqliteProvider
{
  GObject           parent_instance;

  char             *path;
  gboolean          read_only;
  int               cache_kib;
  int               busy_timeout_ms;

  /* The writer; read-only, the connection plain reads go through. The
   * fields below it are guarded by its lock. */
  QStoreSqliteConn *main;
  GHashTable       *store_ids;   /* name → gint64 *, stores known to exist */
  gint64            data_version;
  gboolean          sync_full;

  GMutex            pool_lock;
  GPtrArray        *readers;     /* every open reader connection */
  GPtrArray        *idle;        /* the readers nobody uses */
  gboolean          closed;
};

static void qstore_sqlite_provider_initable_iface_init (GInitableIface          *iface);
static void qstore_sqlite_provider_iface_init          (QStoreProviderInterface *iface);

G_DEFINE_DYNAMIC_TYPE_EXTENDED (QStoreSqliteProvider, qstore_sqlite_provider,
                                G_TYPE_OBJECT, G_TYPE_FLAG_FINAL,
                                G_IMPLEMENT_INTERFACE_DYNAMIC (G_TYPE_INITABLE,
                                                               qstore_sqlite_provider_initable_iface_init)
                                G_IMPLEMENT_INTERFACE_DYNAMIC (QSTORE_TYPE_PROVIDER,
                                                               qstore_sqlite_provider_iface_init))

/* Errors */

static QStoreError
error_code_for (int rc)
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

static void
set_sqlite_error (GError     **error,
                  sqlite3     *db,
                  int          rc,
                  const char  *path,
                  const char  *doing)
{
  QStoreError code = error_code_for (rc);
  const char *message = db != NULL ? sqlite3_errmsg (db) : sqlite3_errstr (rc);

  g_set_error (error, QSTORE_ERROR, code, "SQLite store “%s”: %s failed: %s%s",
               path, doing, message, hint_for (code));
}

void
qstore_sqlite_conn_set_error (QStoreSqliteConn  *conn,
                              int                rc,
                              const char        *doing,
                              GError           **error)
{
  set_sqlite_error (error, conn->db, rc, conn->path, doing);
}

/* Connections */

static QStoreSqliteConn *
conn_open (QStoreSqliteProvider  *self,
           int                    flags,
           GError               **error)
{
  QStoreSqliteConn *conn;
  sqlite3 *db = NULL;
  int rc;

  rc = sqlite3_open_v2 (self->path, &db,
                        flags | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE, NULL);
  if (rc != SQLITE_OK)
    {
      int err = db != NULL ? sqlite3_system_errno (db) : 0;

      g_set_error (error, QSTORE_ERROR, error_code_for (rc),
                   "SQLite store “%s” cannot be opened: %s%s%s%s",
                   self->path, sqlite3_errstr (rc),
                   err != 0 ? " (" : "", err != 0 ? g_strerror (err) : "", err != 0 ? ")" : "");
      sqlite3_close (db);
      return NULL;
    }

  sqlite3_busy_timeout (db, self->busy_timeout_ms);
  /* The file may come from anywhere: never run what its schema says beyond
   * plain tables (no triggers, views or schema functions). */
  sqlite3_db_config (db, SQLITE_DBCONFIG_DEFENSIVE, 1, NULL);
  sqlite3_db_config (db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, NULL);
  sqlite3_db_config (db, SQLITE_DBCONFIG_ENABLE_TRIGGER, 0, NULL);
  sqlite3_db_config (db, SQLITE_DBCONFIG_ENABLE_VIEW, 0, NULL);
  if (self->cache_kib > 0)
    {
      g_autofree char *sql = g_strdup_printf ("PRAGMA cache_size = -%d", self->cache_kib);

      rc = sqlite3_exec (db, sql, NULL, NULL, NULL);
      if (rc != SQLITE_OK)
        {
          set_sqlite_error (error, db, rc, self->path, "setting the cache size");
          sqlite3_close (db);
          return NULL;
        }
    }

  conn = g_new0 (QStoreSqliteConn, 1);
  g_atomic_ref_count_init (&conn->ref_count);
  g_mutex_init (&conn->lock);
  conn->db = db;
  conn->path = g_strdup (self->path);
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

/* Finalizes every statement, which also ends the read transactions handed
 * out on @conn, and closes it. Called with the lock held. */
static void
conn_close (QStoreSqliteConn *conn)
{
  if (conn->db == NULL)
    return;

  for (guint i = 0; i < QSTORE_SQLITE_N_STMTS; i++)
    g_clear_pointer (&conn->stmts[i], sqlite3_finalize);
  for (guint i = 0; i < QSTORE_SQLITE_N_SCANS; i++)
    finalize_all (conn->idle_scans[i]);
  finalize_all (conn->busy_scans);

  sqlite3_close_v2 (conn->db);
  conn->db = NULL;
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
  conn_close (conn);
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
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_CLOSED,
                   "The sqlite store at “%s” is closed: open it again to use it",
                   conn->path);
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

/* Runs a statement that returns no row worth reading. Called with the lock
 * held; binds are the caller's. */
static gboolean
run_stmt (QStoreSqliteConn  *conn,
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

static gboolean
run (QStoreSqliteConn  *conn,
     QStoreSqliteStmt   which,
     const char        *doing,
     GError           **error)
{
  sqlite3_stmt *stmt = qstore_sqlite_conn_stmt (conn, which, error);

  return stmt != NULL && run_stmt (conn, stmt, doing, error);
}

static gboolean
run_named (QStoreSqliteConn  *conn,
           QStoreSqliteStmt   which,
           const char        *name,
           const char        *doing,
           GError           **error)
{
  sqlite3_stmt *stmt = qstore_sqlite_conn_stmt (conn, which, error);

  if (stmt == NULL)
    return FALSE;
  sqlite3_bind_text (stmt, 1, name, -1, SQLITE_STATIC);
  return run_stmt (conn, stmt, doing, error);
}

/* The reader pool */

QStoreSqliteConn *
qstore_sqlite_provider_acquire_reader (QStoreSqliteProvider  *self,
                                       gboolean               pin,
                                       GError               **error)
{
  g_autoptr(QStoreSqliteConn) conn = NULL;
  gboolean ok;

  g_mutex_lock (&self->pool_lock);
  if (self->closed)
    {
      g_mutex_unlock (&self->pool_lock);
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_CLOSED,
                   "The sqlite store at “%s” is closed: open it again to use it",
                   self->path);
      return NULL;
    }
  if (self->idle->len > 0)
    conn = g_ptr_array_steal_index_fast (self->idle, self->idle->len - 1);
  g_mutex_unlock (&self->pool_lock);

  if (conn == NULL)
    {
      /* Opening takes a while: do it outside the pool lock. */
      if (!(conn = conn_open (self, SQLITE_OPEN_READONLY, error)))
        return NULL;

      g_mutex_lock (&self->pool_lock);
      if (self->closed)
        {
          g_mutex_unlock (&self->pool_lock);
          g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_CLOSED,
                       "The sqlite store at “%s” is closed: open it again to use it",
                       self->path);
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
       run (conn, QSTORE_SQLITE_STMT_BEGIN, "beginning a read transaction", error) &&
       run (conn, QSTORE_SQLITE_STMT_PIN, "beginning a read transaction", error);
  g_mutex_unlock (&conn->lock);
  if (!ok)
    {
      qstore_sqlite_provider_release_reader (self, conn);
      return NULL;
    }
  return g_steal_pointer (&conn);
}

void
qstore_sqlite_provider_release_reader (QStoreSqliteProvider *self,
                                       QStoreSqliteConn     *conn)
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
          !run (conn, QSTORE_SQLITE_STMT_COMMIT, "ending a read transaction", NULL))
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
          conn_close (conn);
          g_mutex_unlock (&conn->lock);
          g_ptr_array_remove_fast (self->readers, conn);
        }
    }
  g_mutex_unlock (&self->pool_lock);
}

/* Opening the location */

static gboolean
query_int (QStoreSqliteConn  *conn,
           const char        *sql,
           gint64            *value,
           GError           **error)
{
  sqlite3_stmt *stmt = NULL;
  int rc;

  rc = sqlite3_prepare_v2 (conn->db, sql, -1, &stmt, NULL);
  if (rc == SQLITE_OK)
    {
      rc = sqlite3_step (stmt);
      if (rc == SQLITE_ROW)
        {
          *value = sqlite3_column_int64 (stmt, 0);
          rc = SQLITE_OK;
        }
    }
  if (rc != SQLITE_OK)
    {
      if ((rc & 0xff) == SQLITE_NOTADB)
        g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_CORRUPT,
                     "“%s” is not an SQLite database: give the sqlite provider a new "
                     "file name or a qstore store", conn->path);
      else
        {
          qstore_sqlite_conn_set_error (conn, rc, "reading the header", error);
          /* Short of a specific cause, a header SQLite cannot read (such
           * as an unknown schema format) is a damaged file. */
          if (error != NULL && g_error_matches (*error, QSTORE_ERROR, QSTORE_ERROR_FAILED))
            (*error)->code = QSTORE_ERROR_CORRUPT;
        }
    }
  sqlite3_finalize (stmt);
  return rc == SQLITE_OK;
}

typedef struct
{
  gint64 application_id;
  gint64 user_version;
  gint64 n_objects;
} Header;

static gboolean
read_header (QStoreSqliteConn  *conn,
             Header            *header,
             GError           **error)
{
  return query_int (conn, "PRAGMA application_id", &header->application_id, error) &&
         query_int (conn, "PRAGMA user_version", &header->user_version, error) &&
         query_int (conn, "SELECT count(*) FROM sqlite_master", &header->n_objects, error);
}

/* A new or empty file: nobody else has claimed it. */
static gboolean
header_is_blank (const Header *header)
{
  return header->application_id == 0 && header->user_version == 0 && header->n_objects == 0;
}

static void
set_foreign_error (QStoreSqliteConn  *conn,
                   GError           **error)
{
  g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_CORRUPT,
               "“%s” is an SQLite database but not a qstore store: give the sqlite "
               "provider a new file name or a qstore store", conn->path);
}

static gboolean
check_table (QStoreSqliteConn  *conn,
             const char        *name,
             const char        *expected_sql,
             GError           **error)
{
  sqlite3_stmt *stmt = NULL;
  gboolean same = FALSE;
  int rc;

  rc = sqlite3_prepare_v2 (conn->db,
                           "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?1",
                           -1, &stmt, NULL);
  if (rc == SQLITE_OK)
    {
      sqlite3_bind_text (stmt, 1, name, -1, SQLITE_STATIC);
      rc = sqlite3_step (stmt);
      if (rc == SQLITE_ROW)
        {
          const char *sql = (const char *) sqlite3_column_text (stmt, 0);

          same = sql != NULL && strcmp (sql, expected_sql) == 0;
          rc = SQLITE_OK;
        }
      else if (rc == SQLITE_DONE)
        rc = SQLITE_OK;
    }
  if (rc != SQLITE_OK)
    qstore_sqlite_conn_set_error (conn, rc, "reading the schema", error);
  else if (!same)
    g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_CORRUPT,
                 "“%s” is marked as a qstore store but its table “%s” is not qstore's: "
                 "it was changed by another program; restore it from a backup",
                 conn->path, name);
  sqlite3_finalize (stmt);
  return rc == SQLITE_OK && same;
}

static gboolean
check_qstore_file (QStoreSqliteConn  *conn,
                   const Header      *header,
                   GError           **error)
{
  if (header->user_version > FORMAT_VERSION)
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_UNSUPPORTED,
                   "“%s” was written by a newer qstore (sqlite store format %" G_GINT64_FORMAT
                   "; this version reads format %d): open it with a newer qstore",
                   conn->path, header->user_version, FORMAT_VERSION);
      return FALSE;
    }
  if (header->user_version < 1)
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_CORRUPT,
                   "“%s” is marked as a qstore store but has no format version: "
                   "it was changed by another program; restore it from a backup",
                   conn->path);
      return FALSE;
    }
  return check_table (conn, "stores", create_stores_sql, error) &&
         check_table (conn, "kv", create_kv_sql, error);
}

static gboolean
exec (QStoreSqliteConn  *conn,
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

/* Creates the schema in a new (empty) database. Another process may be
 * doing the same: the immediate transaction serializes us, and whoever
 * comes second finds the work done. */
static gboolean
create_schema (QStoreSqliteConn  *conn,
               Header            *header,
               GError           **error)
{
  g_autofree char *stamp = NULL;

  if (!exec (conn, "BEGIN IMMEDIATE", "creating the store", error))
    return FALSE;
  if (!read_header (conn, header, error))
    goto fail;
  if (header->application_id == APPLICATION_ID)
    return exec (conn, "COMMIT", "creating the store", error);
  if (!header_is_blank (header))
    {
      set_foreign_error (conn, error);
      goto fail;
    }

  stamp = g_strdup_printf ("PRAGMA application_id = %d; PRAGMA user_version = %d",
                           APPLICATION_ID, FORMAT_VERSION);
  if (!exec (conn, create_stores_sql, "creating the store", error) ||
      !exec (conn, create_kv_sql, "creating the store", error) ||
      !exec (conn, stamp, "creating the store", error) ||
      !exec (conn, "COMMIT", "creating the store", error))
    goto fail;
  header->application_id = APPLICATION_ID;
  header->user_version = FORMAT_VERSION;
  return TRUE;

fail:
  if (!sqlite3_get_autocommit (conn->db))
    sqlite3_exec (conn->db, "ROLLBACK", NULL, NULL, NULL);
  return FALSE;
}

static gboolean
enable_wal (QStoreSqliteConn  *conn,
            GError           **error)
{
  sqlite3_stmt *stmt = NULL;
  gboolean wal = FALSE;
  int rc;

  rc = sqlite3_prepare_v2 (conn->db, "PRAGMA journal_mode = WAL", -1, &stmt, NULL);
  if (rc == SQLITE_OK && (rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      const char *mode = (const char *) sqlite3_column_text (stmt, 0);

      wal = mode != NULL && g_ascii_strcasecmp (mode, "wal") == 0;
      rc = SQLITE_OK;
    }
  if (rc != SQLITE_OK)
    qstore_sqlite_conn_set_error (conn, rc, "switching to WAL mode", error);
  else if (!wal)
    g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_IO,
                 "SQLite store “%s” cannot use write-ahead logging: "
                 "keep it on a local file system", conn->path);
  sqlite3_finalize (stmt);
  return rc == SQLITE_OK && wal;
}

static gboolean
check_location (QStoreSqliteProvider  *self,
                GError               **error)
{
  GStatBuf st;
  int err;

  if (self->path[0] == '\0')
    {
      g_set_error_literal (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                           "The sqlite provider needs a file: write sqlite:/path/to/file.db");
      return FALSE;
    }

  if (g_stat (self->path, &st) == 0)
    {
      if (S_ISDIR (st.st_mode))
        {
          g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                       "“%s” is a directory: the sqlite provider keeps a store in one "
                       "file; name a file, such as %s/store.db", self->path, self->path);
          return FALSE;
        }
      if (!S_ISREG (st.st_mode))
        {
          g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                       "“%s” is not a regular file: the sqlite provider keeps a store "
                       "in a regular file", self->path);
          return FALSE;
        }
      return TRUE;
    }

  err = errno;
  if (err == ENOENT || err == ENOTDIR)
    {
      g_autofree char *parent = g_path_get_dirname (self->path);

      if (self->read_only)
        {
          g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_NOT_FOUND,
                       "There is no sqlite store at “%s”: the file does not exist "
                       "(open it read-write to create it)", self->path);
          return FALSE;
        }
      if (!g_file_test (parent, G_FILE_TEST_IS_DIR))
        {
          g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_NOT_FOUND,
                       "Cannot create the sqlite store “%s”: directory “%s” does not "
                       "exist; create it first", self->path, parent);
          return FALSE;
        }
      if (g_access (parent, W_OK) != 0)
        {
          err = errno;
          g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_IO,
                       "Cannot create the sqlite store “%s” in directory “%s”: %s; "
                       "check the permissions of the directory",
                       self->path, parent, g_strerror (err));
          return FALSE;
        }
      return TRUE;
    }

  g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_IO,
               "Cannot access the sqlite store “%s”: %s; check the permissions "
               "of the file and its directories", self->path, g_strerror (err));
  return FALSE;
}

/* Reading a WAL database takes its shared-memory file: a reader that can
 * neither find nor create one (the writer is gone and the directory is not
 * ours) cannot read, and SQLite's own message does not say why. */
static void
explain_unreadable_wal (QStoreSqliteProvider  *self,
                        GError               **error)
{
  g_autofree char *shm = g_strconcat (self->path, "-shm", NULL);
  g_autofree char *parent = g_path_get_dirname (self->path);

  if (!self->read_only || error == NULL || *error == NULL ||
      !g_error_matches (*error, QSTORE_ERROR, QSTORE_ERROR_IO) ||
      g_file_test (shm, G_FILE_TEST_EXISTS) || g_access (parent, W_OK) == 0)
    return;

  g_clear_error (error);
  g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_IO,
               "SQLite store “%s” cannot be read: SQLite needs to create “%s” beside "
               "it and directory “%s” is not writable; make the directory writable "
               "or copy the store elsewhere", self->path, shm, parent);
}

static gboolean
open_main (QStoreSqliteProvider  *self,
           GError               **error)
{
  QStoreSqliteConn *conn;
  Header header = { 0 };

  if (!check_location (self, error))
    return FALSE;

  conn = self->main = conn_open (self,
                                 self->read_only
                                 ? SQLITE_OPEN_READONLY
                                 : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
                                 error);
  if (conn == NULL)
    return FALSE;

  /* SQLite falls back to read-only when it may not write the file. */
  if (!self->read_only && sqlite3_db_readonly (conn->db, "main") == 1)
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_IO,
                   "SQLite store “%s” cannot be written (permission denied): make the "
                   "file writable or open it read-only", self->path);
      return FALSE;
    }

  if (!read_header (conn, &header, error))
    {
      explain_unreadable_wal (self, error);
      return FALSE;
    }

  if (header.application_id != APPLICATION_ID)
    {
      if (!header_is_blank (&header))
        {
          set_foreign_error (conn, error);
          return FALSE;
        }
      if (self->read_only)
        {
          g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_NOT_FOUND,
                       "“%s” holds no qstore store yet: open it read-write once to "
                       "create one", self->path);
          return FALSE;
        }
      if (!create_schema (conn, &header, error))
        return FALSE;
    }

  if (!check_qstore_file (conn, &header, error))
    return FALSE;

  if (!self->read_only)
    {
      gint64 version;

      if (!enable_wal (conn, error) ||
          !exec (conn, "PRAGMA synchronous = NORMAL", "setting the durability", error) ||
          !query_int (conn, "PRAGMA data_version", &version, error))
        return FALSE;
      self->sync_full = FALSE;
      self->data_version = version;
    }
  return TRUE;
}

static gboolean
parse_int_option (QStoreSqliteProvider  *self,
                  const char            *option,
                  const char            *example,
                  gint64                 min,
                  gint64                 max,
                  int                   *value,
                  GError               **error)
{
  const char *text = qstore_provider_get_option (QSTORE_PROVIDER (self), option);
  gint64 parsed;

  if (text == NULL)
    return TRUE;
  if (!g_ascii_string_to_signed (text, 10, min, max, &parsed, NULL))
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                   "Option %s=%s of the sqlite provider is not understood: give a "
                   "whole number from %" G_GINT64_FORMAT " to %" G_GINT64_FORMAT
                   ", such as %s=%s", option, text, min, max, option, example);
      return FALSE;
    }
  *value = (int) parsed;
  return TRUE;
}

static void close_connections (QStoreSqliteProvider *self);

static gboolean
qstore_sqlite_provider_initable_init (GInitable     *initable,
                                      GCancellable  *cancellable,
                                      GError       **error)
{
  QStoreSqliteProvider *self = QSTORE_SQLITE_PROVIDER (initable);
  QStoreProvider *provider = QSTORE_PROVIDER (initable);

  self->path = g_strdup (qstore_provider_get_location (provider));
  self->read_only = (qstore_provider_get_flags (provider) & QSTORE_OPEN_READ_ONLY) != 0;

  if (!parse_int_option (self, "cache_size", "65536", 1, G_MAXINT / 1024,
                         &self->cache_kib, error) ||
      !parse_int_option (self, "busy_timeout", "5000", 0, G_MAXINT,
                         &self->busy_timeout_ms, error))
    return FALSE;

  if (!open_main (self, error))
    {
      /* The wrapper does not close what failed to open. */
      close_connections (self);
      return FALSE;
    }
  return TRUE;
}

static void
qstore_sqlite_provider_initable_iface_init (GInitableIface *iface)
{
  iface->init = qstore_sqlite_provider_initable_init;
}

/* Store ids */

static void
forget_store_ids (QStoreSqliteProvider *self)
{
  g_hash_table_remove_all (self->store_ids);
}

/* Finds the id of a store, creating its row when @create is set (inside a
 * write transaction). *id is -1 when the store has no row. Called with the
 * main lock held. */
static gboolean
resolve_store (QStoreSqliteProvider  *self,
               const char            *name,
               gboolean               create,
               gint64                *id,
               GError               **error)
{
  QStoreSqliteConn *conn = self->main;
  const gint64 *cached;
  sqlite3_stmt *stmt;
  int rc;

  cached = g_hash_table_lookup (self->store_ids, name);
  if (cached != NULL)
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

  if (rc == SQLITE_DONE)
    {
      *id = -1;
      if (!create)
        return TRUE;

      if (!run_named (conn, QSTORE_SQLITE_STMT_CREATE_STORE, name, "creating a store", error))
        return FALSE;
      *id = sqlite3_last_insert_rowid (conn->db);
    }
  else if (rc != SQLITE_ROW)
    return FALSE;

  g_hash_table_insert (self->store_ids, g_strdup (name), g_memdup2 (id, sizeof *id));
  return TRUE;
}

/* Reading */

GBytes *
qstore_sqlite_provider_get (QStoreSqliteProvider  *self,
                            const char            *name,
                            const guint8          *key,
                            gsize                  key_len,
                            GError               **error)
{
  QStoreSqliteConn *conn = self->main;
  GBytes *value = NULL;
  sqlite3_stmt *stmt;
  int rc;

  g_mutex_lock (&conn->lock);
  if (!qstore_sqlite_conn_check_open (conn, error))
    goto out;

  if (self->read_only)
    {
      /* Another process writes, and may rename or drop stores at any
       * time: resolve the name in the same statement as the key. */
      if (!(stmt = qstore_sqlite_conn_stmt (conn, QSTORE_SQLITE_STMT_GET_BY_NAME, error)))
        goto out;
      sqlite3_bind_text (stmt, 1, name, -1, SQLITE_STATIC);
    }
  else
    {
      gint64 id;

      /* Ours are the only writes (another writing process is seen, and
       * the ids forgotten, at our next write), so the ids we know hold. */
      if (!resolve_store (self, name, FALSE, &id, error) || id < 0)
        goto out;
      if (!(stmt = qstore_sqlite_conn_stmt (conn, QSTORE_SQLITE_STMT_GET, error)))
        goto out;
      sqlite3_bind_int64 (stmt, 1, id);
    }
  sqlite3_bind_blob64 (stmt, 2, key, key_len, SQLITE_STATIC);

  rc = sqlite3_step (stmt);
  if (rc == SQLITE_ROW)
    {
      const void *data = sqlite3_column_blob (stmt, 0);

      value = g_bytes_new (data, sqlite3_column_bytes (stmt, 0));
    }
  else if (rc != SQLITE_DONE)
    qstore_sqlite_conn_set_error (conn, rc, "reading a key", error);
  sqlite3_reset (stmt);

out:
  g_mutex_unlock (&conn->lock);
  return value;
}

/* Writing. Every function below is called with the main lock held. */

/* SQLite applies PRAGMA synchronous when the statement is prepared, not
 * when it runs, so it cannot be kept prepared: run it afresh, only when
 * the level changes. */
static gboolean
set_synchronous (QStoreSqliteProvider  *self,
                 gboolean               full,
                 GError               **error)
{
  if (self->sync_full == full)
    return TRUE;
  if (!exec (self->main,
             full ? "PRAGMA synchronous = FULL" : "PRAGMA synchronous = NORMAL",
             "setting the durability", error))
    return FALSE;
  self->sync_full = full;
  return TRUE;
}

static gboolean
begin_write (QStoreSqliteProvider  *self,
             GError               **error)
{
  QStoreSqliteConn *conn = self->main;
  sqlite3_stmt *stmt;
  gint64 version;
  int rc;

  if (!run (conn, QSTORE_SQLITE_STMT_BEGIN_IMMEDIATE, "beginning a write transaction", error))
    return FALSE;

  /* Another process may have written since: then the ids we know may be
   * stale (it may have dropped or renamed stores). */
  if (!(stmt = qstore_sqlite_conn_stmt (conn, QSTORE_SQLITE_STMT_DATA_VERSION, error)))
    goto fail;
  rc = sqlite3_step (stmt);
  if (rc != SQLITE_ROW)
    {
      qstore_sqlite_conn_set_error (conn, rc, "beginning a write transaction", error);
      sqlite3_reset (stmt);
      goto fail;
    }
  version = sqlite3_column_int64 (stmt, 0);
  sqlite3_reset (stmt);
  if (version != self->data_version)
    {
      forget_store_ids (self);
      self->data_version = version;
    }
  return TRUE;

fail:
  run (conn, QSTORE_SQLITE_STMT_ROLLBACK, "rolling back", NULL);
  return FALSE;
}

static gboolean
end_write (QStoreSqliteProvider  *self,
           gboolean               ok,
           GError               **error)
{
  QStoreSqliteConn *conn = self->main;

  if (ok)
    ok = run (conn, QSTORE_SQLITE_STMT_COMMIT, "committing", error);
  if (!ok)
    {
      /* Some failures roll the transaction back by themselves. */
      if (!sqlite3_get_autocommit (conn->db))
        run (conn, QSTORE_SQLITE_STMT_ROLLBACK, "rolling back", NULL);
      /* Rows of stores created in the transaction are gone with it. */
      forget_store_ids (self);
    }
  return ok;
}

static gboolean
apply_ops (QStoreSqliteProvider  *self,
           const QStoreWriteOp   *ops,
           gsize                  n_ops,
           GError               **error)
{
  QStoreSqliteConn *conn = self->main;
  sqlite3_stmt *put, *del;
  QStoreKV *store = NULL;
  gint64 id = -1;

  if (!(put = qstore_sqlite_conn_stmt (conn, QSTORE_SQLITE_STMT_PUT, error)) ||
      !(del = qstore_sqlite_conn_stmt (conn, QSTORE_SQLITE_STMT_DELETE, error)))
    return FALSE;

  for (gsize i = 0; i < n_ops; i++)
    {
      const QStoreWriteOp *op = &ops[i];
      gboolean is_put = op->kind == QSTORE_WRITE_OP_PUT;
      sqlite3_stmt *stmt;
      int rc;

      if (!_qstore_fault_check (QSTORE_FAULT_WRITE_OP, error))
        return FALSE;

      /* Ops come grouped by store: resolve a store once per run, and once
       * more when a put follows deletes on a store that has no row yet. */
      if (op->store != store || (id < 0 && is_put))
        {
          store = op->store;
          if (!resolve_store (self, qstore_kv_get_name (store), is_put, &id, error))
            return FALSE;
        }

      if (is_put)
        {
          stmt = put;
          sqlite3_bind_int64 (stmt, 1, id);
          sqlite3_bind_blob64 (stmt, 2, op->key, op->key_len, SQLITE_STATIC);
          sqlite3_bind_blob64 (stmt, 3, op->value != NULL ? op->value : (const guint8 *) "",
                               op->value_len, SQLITE_STATIC);
        }
      else if (id >= 0)
        {
          stmt = del;
          sqlite3_bind_int64 (stmt, 1, id);
          sqlite3_bind_blob64 (stmt, 2, op->key, op->key_len, SQLITE_STATIC);
        }
      else
        continue; /* nothing to delete in a store that was never written */

      rc = sqlite3_step (stmt);
      if (G_UNLIKELY (rc != SQLITE_DONE))
        {
          qstore_sqlite_conn_set_error (conn, rc, is_put ? "writing a key" : "deleting a key",
                                        error);
          sqlite3_reset (stmt);
          return FALSE;
        }
      sqlite3_reset (stmt);
    }
  return TRUE;
}

static gboolean
qstore_sqlite_provider_write (QStoreProvider       *provider,
                              const QStoreWriteOp  *ops,
                              gsize                 n_ops,
                              QStoreWriteFlags      flags,
                              GError              **error)
{
  QStoreSqliteProvider *self = QSTORE_SQLITE_PROVIDER (provider);
  QStoreSqliteConn *conn = self->main;
  gboolean ok = FALSE;

  g_mutex_lock (&conn->lock);
  /* Without a sync request, WAL at synchronous=NORMAL stays consistent but
   * may lose the last commits on power failure. */
  if (qstore_sqlite_conn_check_open (conn, error) &&
      set_synchronous (self, (flags & QSTORE_WRITE_SYNC) != 0, error) &&
      begin_write (self, error))
    ok = end_write (self, apply_ops (self, ops, n_ops, error), error);
  g_mutex_unlock (&conn->lock);
  return ok;
}

static gboolean
restructure_stores (QStoreSqliteProvider  *self,
                    const char * const    *drop,
                    const char * const    *rename_from,
                    const char * const    *rename_to,
                    GError               **error)
{
  QStoreSqliteConn *conn = self->main;

  for (guint i = 0; drop != NULL && drop[i] != NULL; i++)
    {
      if (!run_named (conn, QSTORE_SQLITE_STMT_DROP_ENTRIES, drop[i], "dropping a store", error) ||
          !run_named (conn, QSTORE_SQLITE_STMT_DROP_STORE, drop[i], "dropping a store", error))
        return FALSE;
    }

  for (guint i = 0; rename_from != NULL && rename_from[i] != NULL; i++)
    {
      const char *from = rename_from[i];
      const char *to = rename_to[i];
      sqlite3_stmt *stmt;
      int rc;

      g_assert (to != NULL);
      if (strcmp (from, to) == 0)
        continue;

      if (!(stmt = qstore_sqlite_conn_stmt (conn, QSTORE_SQLITE_STMT_HAS_ENTRIES, error)))
        return FALSE;
      sqlite3_bind_text (stmt, 1, to, -1, SQLITE_STATIC);
      rc = sqlite3_step (stmt);
      if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        qstore_sqlite_conn_set_error (conn, rc, "renaming a store", error);
      sqlite3_reset (stmt);
      if (rc == SQLITE_ROW)
        {
          g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_EXISTS,
                       "Cannot rename store “%s” to “%s” in “%s”: “%s” already holds "
                       "entries; drop it first", from, to, self->path, to);
          return FALSE;
        }
      if (rc != SQLITE_DONE)
        return FALSE;

      /* A leftover row of an emptied destination would clash on the name. */
      if (!run_named (conn, QSTORE_SQLITE_STMT_DROP_STORE, to, "renaming a store", error))
        return FALSE;
      if (!(stmt = qstore_sqlite_conn_stmt (conn, QSTORE_SQLITE_STMT_RENAME_STORE, error)))
        return FALSE;
      sqlite3_bind_text (stmt, 1, from, -1, SQLITE_STATIC);
      sqlite3_bind_text (stmt, 2, to, -1, SQLITE_STATIC);
      if (!run_stmt (conn, stmt, "renaming a store", error))
        return FALSE;
    }
  return TRUE;
}

static gboolean
qstore_sqlite_provider_restructure (QStoreProvider       *provider,
                                    const char * const   *drop,
                                    const char * const   *rename_from,
                                    const char * const   *rename_to,
                                    const QStoreWriteOp  *ops,
                                    gsize                 n_ops,
                                    GError              **error)
{
  QStoreSqliteProvider *self = QSTORE_SQLITE_PROVIDER (provider);
  QStoreSqliteConn *conn = self->main;
  gboolean ok = FALSE;

  g_mutex_lock (&conn->lock);
  if (qstore_sqlite_conn_check_open (conn, error) &&
      set_synchronous (self, TRUE, error) &&
      begin_write (self, error))
    {
      ok = restructure_stores (self, drop, rename_from, rename_to, error);
      /* Names now map to other ids: what the ops resolve must come from
       * the transaction, not from before it. */
      forget_store_ids (self);
      ok = end_write (self, ok && apply_ops (self, ops, n_ops, error), error);
    }
  g_mutex_unlock (&conn->lock);
  return ok;
}

static char **
qstore_sqlite_provider_list_stores (QStoreProvider  *provider,
                                    GError         **error)
{
  QStoreSqliteProvider *self = QSTORE_SQLITE_PROVIDER (provider);
  QStoreSqliteConn *conn = self->main;
  g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  sqlite3_stmt *stmt;
  int rc = SQLITE_ERROR;

  g_mutex_lock (&conn->lock);
  if (qstore_sqlite_conn_check_open (conn, error) &&
      (stmt = qstore_sqlite_conn_stmt (conn, QSTORE_SQLITE_STMT_LIST, error)) != NULL)
    {
      while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
        {
          const char *name = (const char *) sqlite3_column_text (stmt, 0);

          /* Only names qstore could have written (a damaged file may
           * hold anything). */
          if (name != NULL && g_utf8_validate (name, -1, NULL))
            g_ptr_array_add (names, g_strdup (name));
        }
      if (rc != SQLITE_DONE)
        qstore_sqlite_conn_set_error (conn, rc, "listing the stores", error);
      sqlite3_reset (stmt);
    }
  g_mutex_unlock (&conn->lock);

  if (rc != SQLITE_DONE)
    return NULL;
  g_ptr_array_add (names, NULL);
  return (char **) g_ptr_array_free (g_steal_pointer (&names), FALSE);
}

static QStoreKV *
qstore_sqlite_provider_open_store (QStoreProvider  *provider,
                                   const char      *name,
                                   GError         **error)
{
  /* Nothing to create: the row of a store appears with its first write. */
  return qstore_sqlite_store_new (QSTORE_SQLITE_PROVIDER (provider), name);
}

static QStoreSnapshot *
qstore_sqlite_provider_begin_snapshot (QStoreProvider  *provider,
                                       GError         **error)
{
  return qstore_sqlite_snapshot_new (QSTORE_SQLITE_PROVIDER (provider), error);
}

static gsize
qstore_sqlite_provider_get_max_key_length (QStoreProvider *provider)
{
  return 0;
}

/* Closing */

static void
close_connections (QStoreSqliteProvider *self)
{
  g_mutex_lock (&self->pool_lock);
  self->closed = TRUE;
  for (guint i = 0; i < self->readers->len; i++)
    {
      QStoreSqliteConn *conn = g_ptr_array_index (self->readers, i);

      g_mutex_lock (&conn->lock);
      conn_close (conn);
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
      if (self->main->db != NULL && !self->read_only)
        sqlite3_wal_checkpoint_v2 (self->main->db, NULL, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
      conn_close (self->main);
      forget_store_ids (self);
      g_mutex_unlock (&self->main->lock);
    }
}

static void
qstore_sqlite_provider_close (QStoreProvider *provider)
{
  close_connections (QSTORE_SQLITE_PROVIDER (provider));
}

static void
qstore_sqlite_provider_iface_init (QStoreProviderInterface *iface)
{
  static const char * const option_names[] = { "cache_size", "busy_timeout", NULL };

  iface->capabilities = (QSTORE_CAPABILITY_PERSISTENT |
                         QSTORE_CAPABILITY_ATOMIC_BATCH |
                         QSTORE_CAPABILITY_SNAPSHOTS |
                         QSTORE_CAPABILITY_MULTI_PROCESS);
  iface->option_names = option_names;
  iface->open_store = qstore_sqlite_provider_open_store;
  iface->begin_snapshot = qstore_sqlite_provider_begin_snapshot;
  iface->write = qstore_sqlite_provider_write;
  iface->restructure = qstore_sqlite_provider_restructure;
  iface->list_stores = qstore_sqlite_provider_list_stores;
  iface->get_max_key_length = qstore_sqlite_provider_get_max_key_length;
  iface->close = qstore_sqlite_provider_close;
}

static void
qstore_sqlite_provider_finalize (GObject *object)
{
  QStoreSqliteProvider *self = QSTORE_SQLITE_PROVIDER (object);

  qstore_provider_close_all (QSTORE_PROVIDER (self));

  g_clear_pointer (&self->main, qstore_sqlite_conn_unref);
  g_clear_pointer (&self->store_ids, g_hash_table_unref);
  g_clear_pointer (&self->readers, g_ptr_array_unref);
  g_clear_pointer (&self->idle, g_ptr_array_unref);
  g_mutex_clear (&self->pool_lock);
  g_free (self->path);

  G_OBJECT_CLASS (qstore_sqlite_provider_parent_class)->finalize (object);
}

static void
qstore_sqlite_provider_class_init (QStoreSqliteProviderClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = qstore_sqlite_provider_finalize;
}

static void
qstore_sqlite_provider_class_finalize (QStoreSqliteProviderClass *klass)
{
}

static void
qstore_sqlite_provider_init (QStoreSqliteProvider *self)
{
  self->busy_timeout_ms = DEFAULT_BUSY_TIMEOUT_MS;
  self->store_ids = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  self->readers = g_ptr_array_new_with_free_func ((GDestroyNotify) qstore_sqlite_conn_unref);
  self->idle = g_ptr_array_new_with_free_func ((GDestroyNotify) qstore_sqlite_conn_unref);
  g_mutex_init (&self->pool_lock);
}

/* The GIO module: its entry points are the only symbols the plugin exports. */

G_MODULE_EXPORT void
g_io_module_load (GIOModule *module)
{
  qstore_sqlite_provider_register_type (G_TYPE_MODULE (module));
  qstore_sqlite_store_register_types (G_TYPE_MODULE (module));
  g_io_extension_point_implement (QSTORE_PROVIDER_EXTENSION_POINT_NAME,
                                  QSTORE_TYPE_SQLITE_PROVIDER, "sqlite", 0);
}

G_MODULE_EXPORT void
g_io_module_unload (GIOModule *module)
{
}

G_MODULE_EXPORT char **
g_io_module_query (void)
{
  char *points[] = { (char *) QSTORE_PROVIDER_EXTENSION_POINT_NAME, NULL };

  return g_strdupv (points);
}
