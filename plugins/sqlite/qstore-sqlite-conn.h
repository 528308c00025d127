/* qstore-sqlite-conn.h: one SQLite connection and the statements it keeps
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <sqlite3.h>

#include "qstore.h"

G_BEGIN_DECLS

/* The statements a connection keeps prepared. Every name, key and value is
 * a bound parameter. */
typedef enum
{
  /* Any connection */
  QSTORE_SQLITE_STMT_BEGIN,
  QSTORE_SQLITE_STMT_COMMIT,
  QSTORE_SQLITE_STMT_ROLLBACK,
  QSTORE_SQLITE_STMT_PIN,
  QSTORE_SQLITE_STMT_STORE_ID,
  QSTORE_SQLITE_STMT_GET,
  QSTORE_SQLITE_STMT_GET_BY_NAME,
  QSTORE_SQLITE_STMT_GET_BIG,
  QSTORE_SQLITE_STMT_LIST,

  /* The writer */
  QSTORE_SQLITE_STMT_BEGIN_IMMEDIATE,
  QSTORE_SQLITE_STMT_TAKE_WRITE_LOCK,
  QSTORE_SQLITE_STMT_DATA_VERSION,
  QSTORE_SQLITE_STMT_CREATE_STORE,
  QSTORE_SQLITE_STMT_PUT,
  QSTORE_SQLITE_STMT_DELETE,
  QSTORE_SQLITE_STMT_DROP_ENTRIES,
  QSTORE_SQLITE_STMT_DROP_STORE,
  QSTORE_SQLITE_STMT_HAS_ENTRIES,
  QSTORE_SQLITE_STMT_RENAME_STORE,
  QSTORE_SQLITE_STMT_PUT_BIG,
  QSTORE_SQLITE_STMT_DELETE_BIG,
  QSTORE_SQLITE_STMT_DROP_BIG,

  QSTORE_SQLITE_N_STMTS
} QStoreSqliteStmt;

/* Range scans, handed out one per live iterator: ?1 is the store (its
 * name, or with QSTORE_SQLITE_SCAN_BY_ID its id), ?2 the lower bound (an
 * empty blob when there is none), ?3 the upper. */
typedef enum
{
  QSTORE_SQLITE_SCAN_FORWARD,
  QSTORE_SQLITE_SCAN_FORWARD_UPPER,
  QSTORE_SQLITE_SCAN_REVERSE,
  QSTORE_SQLITE_SCAN_REVERSE_UPPER,
  /* Added to one of the above: the store is given by id. */
  QSTORE_SQLITE_SCAN_BY_ID,
  QSTORE_SQLITE_N_SCANS = 2 * QSTORE_SQLITE_SCAN_BY_ID
} QStoreSqliteScan;

/* One SQLite connection. SQLite runs it without a mutex of its own
 * (SQLITE_OPEN_NOMUTEX): @lock serializes every use. Closing the provider
 * sets @db to %NULL (atomically, before anything is finalized) and
 * finalizes everything; holders check that before touching a statement,
 * so objects outliving the close never call SQLite. */
typedef struct
{
  gatomicrefcount  ref_count;
  GMutex           lock;
  sqlite3         *db;
  char            *path;
  sqlite3_stmt    *stmts[QSTORE_SQLITE_N_STMTS];
  GPtrArray       *idle_scans[QSTORE_SQLITE_N_SCANS];
  GPtrArray       *busy_scans;
} QStoreSqliteConn;

QStoreError       qstore_sqlite_error_code_for  (int                    rc);
void              qstore_sqlite_set_error       (GError               **error,
                                                 sqlite3               *db,
                                                 int                    rc,
                                                 const char            *path,
                                                 const char            *doing);

void              qstore_sqlite_set_closed_error (GError              **error,
                                                  const char           *path);

QStoreSqliteConn *qstore_sqlite_conn_open       (const char            *path,
                                                 int                    flags,
                                                 int                    busy_timeout_ms,
                                                 int                    cache_kib,
                                                 int                    mmap_bytes,
                                                 GError               **error);
/* Finalizes every statement, which also ends the read transactions handed
 * out on @conn, and closes it. Called with the lock held. */
void              qstore_sqlite_conn_close      (QStoreSqliteConn      *conn);
QStoreSqliteConn *qstore_sqlite_conn_ref        (QStoreSqliteConn      *conn);
void              qstore_sqlite_conn_unref      (QStoreSqliteConn      *conn);
gboolean          qstore_sqlite_conn_check_open (QStoreSqliteConn      *conn,
                                                 GError               **error);
void              qstore_sqlite_conn_set_error  (QStoreSqliteConn      *conn,
                                                 int                    rc,
                                                 const char            *doing,
                                                 GError               **error);

sqlite3_stmt     *qstore_sqlite_conn_stmt       (QStoreSqliteConn      *conn,
                                                 QStoreSqliteStmt       which,
                                                 GError               **error);
sqlite3_stmt     *qstore_sqlite_conn_take_scan  (QStoreSqliteConn      *conn,
                                                 QStoreSqliteScan       which,
                                                 GError               **error);
void              qstore_sqlite_conn_give_scan  (QStoreSqliteConn      *conn,
                                                 QStoreSqliteScan       which,
                                                 sqlite3_stmt          *stmt);

/* The value of an entry kept in big_values (the INTEGER in kv.value), as
 * a copy; called with the lock held. A missing one is damage. */
GBytes           *qstore_sqlite_conn_read_big   (QStoreSqliteConn      *conn,
                                                 gint64                 id,
                                                 GError               **error);

/* Statements that return no row worth reading; called with the lock held. */
gboolean          qstore_sqlite_conn_run_stmt   (QStoreSqliteConn      *conn,
                                                 sqlite3_stmt          *stmt,
                                                 const char            *doing,
                                                 GError               **error);
gboolean          qstore_sqlite_conn_run        (QStoreSqliteConn      *conn,
                                                 QStoreSqliteStmt       which,
                                                 const char            *doing,
                                                 GError               **error);
gboolean          qstore_sqlite_conn_run_named  (QStoreSqliteConn      *conn,
                                                 QStoreSqliteStmt       which,
                                                 const char            *name,
                                                 const char            *doing,
                                                 GError               **error);
gboolean          qstore_sqlite_conn_exec       (QStoreSqliteConn      *conn,
                                                 const char            *sql,
                                                 const char            *doing,
                                                 GError               **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (QStoreSqliteConn, qstore_sqlite_conn_unref)

G_END_DECLS
