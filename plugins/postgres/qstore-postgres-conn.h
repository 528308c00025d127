/* qstore-postgres-conn.h: one libpq connection and the statements it keeps
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <libpq-fe.h>

#include "qstore.h"

G_BEGIN_DECLS

/* The statements every connection prepares when it opens. Names are text
 * parameters, keys and values bytea parameters, all sent in binary; the
 * schema is the only thing written into the text, quoted as an
 * identifier. */
typedef enum
{
  QSTORE_PG_STMT_GET,
  /* The key, or else the first one after it: $1 the store, $2 the key */
  QSTORE_PG_STMT_GET_OR_NEXT,
  QSTORE_PG_STMT_LIST,
  QSTORE_PG_STMT_HAS_ENTRIES,

  /* Range scans: $1 the store name, $2 the lower (or, going on, the last)
   * key, $3 the upper key, then the row count. The first page includes
   * its start key, the next ones start after the last key read. */
  QSTORE_PG_STMT_SCAN_FIRST,
  QSTORE_PG_STMT_SCAN_FIRST_UPPER,
  QSTORE_PG_STMT_SCAN_NEXT,
  QSTORE_PG_STMT_SCAN_NEXT_UPPER,
  QSTORE_PG_STMT_SCAN_REVERSE_FIRST,
  QSTORE_PG_STMT_SCAN_REVERSE_FIRST_UPPER,
  QSTORE_PG_STMT_SCAN_REVERSE_NEXT,

  /* The writer: $1 the store name, $2 the keys, $3 the values (arrays) */
  QSTORE_PG_STMT_CREATE_STORE,
  QSTORE_PG_STMT_ALL_STORES,
  QSTORE_PG_STMT_PUT,
  QSTORE_PG_STMT_PUT_NEW,
  QSTORE_PG_STMT_DELETE,
  /* Stores whose id the writer knows, all in one statement: $1 the store
   * ids, $2 the keys (and $3 the values), one element per entry */
  QSTORE_PG_STMT_PUT_BY_ID,
  QSTORE_PG_STMT_DELETE_BY_ID,
  /* A write that need not be durable: $1 'off' */
  QSTORE_PG_STMT_LAZY_COMMIT,
  /* A big write: its statements' plans take no copy of its parameters */
  QSTORE_PG_STMT_GENERIC_PLANS,
  /* $1 the channel, $2 the payload */
  QSTORE_PG_STMT_NOTIFY,
  QSTORE_PG_STMT_DROP_ENTRIES,
  QSTORE_PG_STMT_DROP_STORE,
  QSTORE_PG_STMT_RENAME_STORE,

  QSTORE_PG_N_STMTS
} QStorePgStmt;

/* The longest host name the application name of a session carries (see
 * qstore_pg_conn_open()): the server keeps 63 bytes of it. */
#define QSTORE_PG_APP_HOST_MAX 40

/* The first statement that only the writer prepares. */
#define QSTORE_PG_FIRST_WRITER_STMT QSTORE_PG_STMT_CREATE_STORE

/* One libpq connection. @lock serializes every use; closing sets @pg to
 * %NULL, so holders check it before they touch the connection. */
typedef struct
{
  gatomicrefcount  ref_count;
  GMutex           lock;
  PGconn          *pg;
  /* How messages name the location (the conninfo without a password, and
   * the schema). */
  const char      *what;
  gboolean         prepared_writer;
  /* Left in a read transaction that nobody needs any more: the next use
   * ends it first, in the same round trip. */
  gboolean         in_read_txn;
  /* A ROLLBACK sent by qstore_pg_conn_end_read() whose answer the next
   * use reads first. */
  gboolean         ending_read;
  /* The next use begins a read transaction (QSTORE_PG_BEGIN_READ_SQL)
   * before its statements, in the same round trip. */
  gboolean         begin_read;
  /* The pipeline being sent: where each step sent keeps its result
   * (PGresult **, or NULL), and why a send failed. */
  GPtrArray       *sent;
  GError          *send_error;
} QStorePgConn;

/* A read transaction that sees one committed state until it ends: the
 * state of its first statement. */
#define QSTORE_PG_BEGIN_READ_SQL "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"

/* One statement of a pipeline (see qstore_pg_conn_run()). */
typedef struct
{
  QStorePgStmt        stmt;      /* when @sql is NULL */
  const char         *sql;       /* a statement sent as text */
  int                 n_params;
  const char * const *values;
  const int          *lengths;
  PGresult          **result;    /* where to keep the result, or NULL */
  /* The writer's reads (statements before QSTORE_PG_FIRST_WRITER_STMT):
   * $1 is the store's id, a binary integer, instead of its name. */
  gboolean            by_id;
} QStorePgStep;

/* Opens a connection: %QSTORE_ERROR_IO naming @what (which must outlive
 * the connection) when the server cannot be reached or refuses the login. */
QStorePgConn *qstore_pg_conn_open       (const char          *conninfo,
                                         const char          *what,
                                         GError             **error);
/* Prepares the statements on @schema's tables, which must exist; the
 * writer's too when @writer is set, and the reads by store id when
 * @by_ids is. */
gboolean      qstore_pg_conn_prepare    (QStorePgConn        *conn,
                                         const char          *schema,
                                         gboolean             writer,
                                         gboolean             by_ids,
                                         GError             **error);
QStorePgConn *qstore_pg_conn_ref        (QStorePgConn        *conn);
void          qstore_pg_conn_unref      (QStorePgConn        *conn);
/* Called with the lock held. */
void          qstore_pg_conn_close      (QStorePgConn        *conn);
gboolean      qstore_pg_conn_check_open (QStorePgConn        *conn,
                                         GError             **error);
gboolean      qstore_pg_conn_is_broken  (QStorePgConn        *conn);

/* Ends the read transaction @conn is in without waiting for the server:
 * an idle session in a transaction would hold back the server's cleanup
 * of old row versions for as long as it stays idle. Called with the lock
 * held. */
void          qstore_pg_conn_end_read   (QStorePgConn        *conn);

/* Sends @steps as one pipeline and one sync (one round trip), which the
 * server runs as one transaction unless the steps say otherwise. Fails
 * with the first error; then nothing of it is committed. Called with the
 * lock held. */
gboolean      qstore_pg_conn_run        (QStorePgConn        *conn,
                                         const QStorePgStep  *steps,
                                         guint                n_steps,
                                         const char          *doing,
                                         GError             **error);
/* qstore_pg_conn_run() in parts, for a pipeline too large to hold at
 * once: each step's parameters may go once it is sent, libpq having
 * copied them (and sent them on, once they fill its buffer). Once
 * _begin() succeeded, _end() is called whatever happens: it sends the
 * sync and reads every answer (one round trip), and tells the first
 * failure. Called with the lock held. */
gboolean      qstore_pg_conn_pipeline_begin (QStorePgConn        *conn,
                                             const char          *doing,
                                             GError             **error);
void          qstore_pg_conn_pipeline_send  (QStorePgConn        *conn,
                                             const QStorePgStep  *steps,
                                             guint                n_steps,
                                             const char          *doing);
/* Sends on what libpq still holds of the steps sent: it sends whole
 * buffers as it goes, so the end of the last statement would wait for
 * the next one, or the sync, and the server with it. */
void          qstore_pg_conn_pipeline_flush (QStorePgConn        *conn,
                                             const char          *doing);
gboolean      qstore_pg_conn_pipeline_end   (QStorePgConn        *conn,
                                             const char          *doing,
                                             GError             **error);
/* One statement sent as text, outside a pipeline. */
gboolean      qstore_pg_conn_exec       (QStorePgConn        *conn,
                                         const char          *sql,
                                         const char          *doing,
                                         GError             **error);
/* A statement with one text parameter that returns one bigint or boolean,
 * as a gint64. */
gboolean      qstore_pg_conn_query_int  (QStorePgConn        *conn,
                                         const char          *sql,
                                         const char          *param,
                                         gint64              *value,
                                         const char          *doing,
                                         GError             **error);

/* A binary boolean or integer column of a result. */
gint64        qstore_pg_result_int      (const PGresult      *res,
                                         int                  row,
                                         int                  column);

/* Round trips to the server this process made so far, for debugging
 * (the postgres provider's close logs them with g_debug()). */
guint64       qstore_pg_round_trips     (void);

/* The QSTORE_ERROR code for an SQLSTATE. */
QStoreError   qstore_pg_error_code_for  (const char          *sqlstate);
/* Sets @error from a failed result (or from the connection when @res is
 * NULL): the code for its SQLSTATE, and a message naming the location,
 * what was being done, the server's message and the SQLSTATE. */
void          qstore_pg_set_error       (GError             **error,
                                         QStorePgConn        *conn,
                                         const PGresult      *res,
                                         const char          *doing);
void          qstore_pg_set_closed_error (GError            **error,
                                          const char         *what);

/* A bytea[] array parameter in PostgreSQL's binary format. */
GByteArray   *qstore_pg_array_new       (guint                n_elements);
void          qstore_pg_array_append    (GByteArray          *array,
                                         const guint8        *data,
                                         gsize                len);
/* An integer[] one; qstore_pg_array_set_length() when the count of
 * elements is known only at the end. */
GByteArray   *qstore_pg_int_array_new   (guint                n_elements);
void          qstore_pg_int_array_append (GByteArray         *array,
                                          gint32              value);
void          qstore_pg_array_set_length (GByteArray         *array,
                                          guint               n_elements);
/* Makes room for @bytes more of elements, so appending them does not
 * grow @array step by step. */
void          qstore_pg_array_reserve   (GByteArray          *array,
                                         gsize                bytes);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (QStorePgConn, qstore_pg_conn_unref)

G_END_DECLS
