/* qstore-sqlite-private.h: the SQLite provider's shared internals
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <sqlite3.h>

#include "qstore.h"
#include "qstore-fault-private.h"

G_BEGIN_DECLS

#define QSTORE_TYPE_SQLITE_PROVIDER (qstore_sqlite_provider_get_type ())
G_DECLARE_FINAL_TYPE (QStoreSqliteProvider, qstore_sqlite_provider, QSTORE, SQLITE_PROVIDER, GObject)

#define QSTORE_TYPE_SQLITE_STORE (qstore_sqlite_store_get_type ())
G_DECLARE_FINAL_TYPE (QStoreSqliteStore, qstore_sqlite_store, QSTORE, SQLITE_STORE, GObject)

#define QSTORE_TYPE_SQLITE_ITER (qstore_sqlite_iter_get_type ())
G_DECLARE_FINAL_TYPE (QStoreSqliteIter, qstore_sqlite_iter, QSTORE, SQLITE_ITER, QStoreIter)

#define QSTORE_TYPE_SQLITE_SNAPSHOT (qstore_sqlite_snapshot_get_type ())
G_DECLARE_FINAL_TYPE (QStoreSqliteSnapshot, qstore_sqlite_snapshot, QSTORE, SQLITE_SNAPSHOT, QStoreSnapshot)

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
  QSTORE_SQLITE_STMT_LIST,

  /* The writer */
  QSTORE_SQLITE_STMT_BEGIN_IMMEDIATE,
  QSTORE_SQLITE_STMT_DATA_VERSION,
  QSTORE_SQLITE_STMT_CREATE_STORE,
  QSTORE_SQLITE_STMT_PUT,
  QSTORE_SQLITE_STMT_DELETE,
  QSTORE_SQLITE_STMT_DROP_ENTRIES,
  QSTORE_SQLITE_STMT_DROP_STORE,
  QSTORE_SQLITE_STMT_HAS_ENTRIES,
  QSTORE_SQLITE_STMT_RENAME_STORE,

  QSTORE_SQLITE_N_STMTS
} QStoreSqliteStmt;

/* Range scans, handed out one per live iterator: ?1 is the store name,
 * ?2 the lower bound (an empty blob when there is none), ?3 the upper. */
typedef enum
{
  QSTORE_SQLITE_SCAN_FORWARD,
  QSTORE_SQLITE_SCAN_FORWARD_UPPER,
  QSTORE_SQLITE_SCAN_REVERSE,
  QSTORE_SQLITE_SCAN_REVERSE_UPPER,

  QSTORE_SQLITE_N_SCANS
} QStoreSqliteScan;

/* One SQLite connection. SQLite runs it without a mutex of its own
 * (SQLITE_OPEN_NOMUTEX): @lock serializes every use. Closing the provider
 * finalizes everything and sets @db to %NULL; holders check that before
 * touching a statement, so objects outliving the close never call SQLite. */
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

QStoreSqliteConn *qstore_sqlite_conn_ref        (QStoreSqliteConn      *conn);
void              qstore_sqlite_conn_unref      (QStoreSqliteConn      *conn);
sqlite3_stmt     *qstore_sqlite_conn_stmt       (QStoreSqliteConn      *conn,
                                                 QStoreSqliteStmt       which,
                                                 GError               **error);
sqlite3_stmt     *qstore_sqlite_conn_take_scan  (QStoreSqliteConn      *conn,
                                                 QStoreSqliteScan       which,
                                                 GError               **error);
void              qstore_sqlite_conn_give_scan  (QStoreSqliteConn      *conn,
                                                 QStoreSqliteScan       which,
                                                 sqlite3_stmt          *stmt);
gboolean          qstore_sqlite_conn_check_open (QStoreSqliteConn      *conn,
                                                 GError               **error);
void              qstore_sqlite_conn_set_error  (QStoreSqliteConn      *conn,
                                                 int                    rc,
                                                 const char            *doing,
                                                 GError               **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (QStoreSqliteConn, qstore_sqlite_conn_unref)

QStoreSqliteConn *qstore_sqlite_provider_acquire_reader (QStoreSqliteProvider  *self,
                                                         gboolean               pin,
                                                         GError               **error);
void              qstore_sqlite_provider_release_reader (QStoreSqliteProvider  *self,
                                                         QStoreSqliteConn      *conn);
GBytes           *qstore_sqlite_provider_get            (QStoreSqliteProvider  *self,
                                                         const char            *name,
                                                         const guint8          *key,
                                                         gsize                  key_len,
                                                         GError               **error);

QStoreKV         *qstore_sqlite_store_new               (QStoreSqliteProvider  *provider,
                                                         const char            *name);
QStoreSnapshot   *qstore_sqlite_snapshot_new            (QStoreSqliteProvider  *provider,
                                                         GError               **error);
QStoreIter       *qstore_sqlite_iter_new                (QStoreSqliteProvider  *provider,
                                                         QStoreSqliteSnapshot  *snapshot,
                                                         QStoreSqliteConn      *conn,
                                                         const char            *name,
                                                         const QStoreBounds    *bounds,
                                                         GError               **error);

void              qstore_sqlite_store_register_types    (GTypeModule           *module);

G_END_DECLS
