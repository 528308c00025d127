/* qstore-postgres-conn.c: one libpq connection and the statements it keeps
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>
#include <unistd.h>

#include "qstore-i18n-private.h"
#include "qstore-postgres-conn.h"

/* Type oids of the parameters (pg_type.dat). */
#define OID_BYTEA 17
#define OID_INT4 23
#define OID_TEXT 25
#define OID_BYTEA_ARRAY 1001
#define OID_INT4_ARRAY 1007

/* How long a connection attempt may take when the conninfo does not say:
 * an unreachable host fails in this time, not in the system's minutes. */
#define DEFAULT_CONNECT_TIMEOUT "10"

/* Statement texts; @schema@ stands for the quoted schema, @store@ for the
 * store's id: found by its name ($1, text), or for the writer's reads,
 * which know the id, $1 itself (an integer), sparing the server a lookup
 * in `stores` per statement. */
#define STORE_ID "@store@"
#define STORE_BY_NAME "(SELECT id FROM @schema@.stores WHERE name = $1)"
#define SCAN "SELECT key, value FROM @schema@.kv WHERE store_id = " STORE_ID " AND "

static const struct
{
  const char *sql;
  int         n_params;
  Oid         types[4];
} statements[QSTORE_PG_N_STMTS] = {
  [QSTORE_PG_STMT_GET] = {
    "SELECT value FROM @schema@.kv WHERE store_id = " STORE_ID " AND key = $2",
    2, { OID_TEXT, OID_BYTEA } },
  [QSTORE_PG_STMT_GET_OR_NEXT] = {
    "SELECT key, value FROM @schema@.kv WHERE store_id = " STORE_ID " AND key >= $2 "
    "ORDER BY key LIMIT 1",
    2, { OID_TEXT, OID_BYTEA } },
  [QSTORE_PG_STMT_LIST] = {
    "SELECT s.name FROM @schema@.stores s "
    "WHERE EXISTS (SELECT 1 FROM @schema@.kv k WHERE k.store_id = s.id) ORDER BY s.name",
    0, { 0 } },
  [QSTORE_PG_STMT_HAS_ENTRIES] = {
    "SELECT 1 FROM @schema@.kv WHERE store_id = " STORE_ID " LIMIT 1",
    1, { OID_TEXT } },
  [QSTORE_PG_STMT_SCAN_FIRST] = {
    SCAN "key >= $2 ORDER BY key LIMIT $3",
    3, { OID_TEXT, OID_BYTEA, OID_INT4 } },
  [QSTORE_PG_STMT_SCAN_FIRST_UPPER] = {
    SCAN "key >= $2 AND key <= $3 ORDER BY key LIMIT $4",
    4, { OID_TEXT, OID_BYTEA, OID_BYTEA, OID_INT4 } },
  [QSTORE_PG_STMT_SCAN_NEXT] = {
    SCAN "key > $2 ORDER BY key LIMIT $3",
    3, { OID_TEXT, OID_BYTEA, OID_INT4 } },
  [QSTORE_PG_STMT_SCAN_NEXT_UPPER] = {
    SCAN "key > $2 AND key <= $3 ORDER BY key LIMIT $4",
    4, { OID_TEXT, OID_BYTEA, OID_BYTEA, OID_INT4 } },
  [QSTORE_PG_STMT_SCAN_REVERSE_FIRST] = {
    SCAN "key >= $2 ORDER BY key DESC LIMIT $3",
    3, { OID_TEXT, OID_BYTEA, OID_INT4 } },
  [QSTORE_PG_STMT_SCAN_REVERSE_FIRST_UPPER] = {
    SCAN "key >= $2 AND key <= $3 ORDER BY key DESC LIMIT $4",
    4, { OID_TEXT, OID_BYTEA, OID_BYTEA, OID_INT4 } },
  [QSTORE_PG_STMT_SCAN_REVERSE_NEXT] = {
    SCAN "key >= $2 AND key < $3 ORDER BY key DESC LIMIT $4",
    4, { OID_TEXT, OID_BYTEA, OID_BYTEA, OID_INT4 } },
  /* The id, whether the row is new or (after a write whose outcome was
   * lost) already there. */
  [QSTORE_PG_STMT_CREATE_STORE] = {
    "INSERT INTO @schema@.stores (name) VALUES ($1) "
    "ON CONFLICT (name) DO UPDATE SET name = EXCLUDED.name RETURNING id",
    1, { OID_TEXT } },
  [QSTORE_PG_STMT_ALL_STORES] = {
    "SELECT id, name FROM @schema@.stores",
    0, { 0 } },
  /* A batch holds each key once (the writer keeps the last op per key),
   * as ON CONFLICT may not touch a row twice. The arrays are unnested in
   * the select list, side by side (they have as many elements): unnest()
   * in FROM would first copy each into a tuple store, which cost the
   * server more than the inserts. */
  [QSTORE_PG_STMT_PUT] = {
    "INSERT INTO @schema@.kv (store_id, key, value) "
    "SELECT " STORE_ID ", unnest ($2::bytea[]), unnest ($3::bytea[]) "
    "ON CONFLICT (store_id, key) DO UPDATE SET value = EXCLUDED.value",
    3, { OID_TEXT, OID_BYTEA_ARRAY, OID_BYTEA_ARRAY } },
  /* Into a store this write creates: no key can be there yet. */
  [QSTORE_PG_STMT_PUT_NEW] = {
    "INSERT INTO @schema@.kv (store_id, key, value) "
    "SELECT " STORE_ID ", unnest ($2::bytea[]), unnest ($3::bytea[])",
    3, { OID_TEXT, OID_BYTEA_ARRAY, OID_BYTEA_ARRAY } },
  [QSTORE_PG_STMT_DELETE] = {
    "DELETE FROM @schema@.kv WHERE store_id = " STORE_ID " AND key = ANY ($2::bytea[])",
    2, { OID_TEXT, OID_BYTEA_ARRAY } },
  [QSTORE_PG_STMT_PUT_BY_ID] = {
    "INSERT INTO @schema@.kv (store_id, key, value) "
    "SELECT unnest ($1::integer[]), unnest ($2::bytea[]), unnest ($3::bytea[]) "
    "ON CONFLICT (store_id, key) DO UPDATE SET value = EXCLUDED.value",
    3, { OID_INT4_ARRAY, OID_BYTEA_ARRAY, OID_BYTEA_ARRAY } },
  [QSTORE_PG_STMT_DELETE_BY_ID] = {
    "DELETE FROM @schema@.kv USING unnest ($1::integer[], $2::bytea[]) AS u (s, k) "
    "WHERE kv.store_id = u.s AND kv.key = u.k",
    2, { OID_INT4_ARRAY, OID_BYTEA_ARRAY } },
  [QSTORE_PG_STMT_LAZY_COMMIT] = {
    "SELECT set_config ('synchronous_commit', $1, true)",
    1, { OID_TEXT } },
  /* A big write plans its statements once, generically: a custom plan
   * would copy its arrays, every key and value, into the plan. */
  [QSTORE_PG_STMT_GENERIC_PLANS] = {
    "SELECT set_config ('plan_cache_mode', 'force_generic_plan', true)",
    0, { 0 } },
  [QSTORE_PG_STMT_NOTIFY] = {
    "SELECT pg_notify ($1, $2)",
    2, { OID_TEXT, OID_TEXT } },
  [QSTORE_PG_STMT_DROP_ENTRIES] = {
    "DELETE FROM @schema@.kv WHERE store_id = " STORE_ID,
    1, { OID_TEXT } },
  [QSTORE_PG_STMT_DROP_STORE] = {
    "DELETE FROM @schema@.stores WHERE name = $1",
    1, { OID_TEXT } },
  [QSTORE_PG_STMT_RENAME_STORE] = {
    "UPDATE @schema@.stores SET name = $2 WHERE name = $1",
    2, { OID_TEXT, OID_TEXT } },
};

static gsize round_trips;

guint64
qstore_pg_round_trips (void)
{
  return (guint64) (gsize) g_atomic_pointer_get (&round_trips);
}

/* Errors */

QStoreError
qstore_pg_error_code_for (const char *sqlstate)
{
  if (sqlstate == NULL || strlen (sqlstate) != 5)
    return QSTORE_ERROR_IO;

  /* serialization_failure, deadlock_detected, lock_not_available: someone
   * else holds what this needs, and trying again may work. */
  if (g_str_equal (sqlstate, "40001") || g_str_equal (sqlstate, "40P01") ||
      g_str_equal (sqlstate, "55P03"))
    return QSTORE_ERROR_BUSY;
  /* read_only_sql_transaction: a standby, or a read-only default. */
  if (g_str_equal (sqlstate, "25006"))
    return QSTORE_ERROR_READ_ONLY;
  /* The tables of the location are not what qstore made. */
  if (g_str_equal (sqlstate, "42P01") || g_str_equal (sqlstate, "42703") ||
      g_str_equal (sqlstate, "42804") || g_str_equal (sqlstate, "XX001") ||
      g_str_equal (sqlstate, "XX002"))
    return QSTORE_ERROR_CORRUPT;
  if (g_str_equal (sqlstate, "54000"))
    return QSTORE_ERROR_INVALID_ARGUMENT;

  /* 08 connection exception, 28 invalid authorization, 42501 insufficient
   * privilege, 53 insufficient resources (disk full, out of memory), 57
   * operator intervention (shutdown), 58 system error. */
  if (g_str_has_prefix (sqlstate, "08") || g_str_has_prefix (sqlstate, "28") ||
      g_str_equal (sqlstate, "42501") || g_str_has_prefix (sqlstate, "53") ||
      g_str_has_prefix (sqlstate, "57") || g_str_has_prefix (sqlstate, "58"))
    return QSTORE_ERROR_IO;
  return QSTORE_ERROR_FAILED;
}

static const char *
hint_for (const char *sqlstate)
{
  if (sqlstate == NULL)
    return "";
  if (g_str_equal (sqlstate, "40001") || g_str_equal (sqlstate, "40P01"))
    return " (nothing was written: retry)";
  if (g_str_has_prefix (sqlstate, "53"))
    return " (nothing was written: free space on the server, then retry)";
  if (g_str_equal (sqlstate, "08001"))
    return " (check that the server runs, and the host and port of the connection)";
  if (g_str_has_prefix (sqlstate, "08") || g_str_has_prefix (sqlstate, "57"))
    return " (the connection to the server is lost: close the store and open it again)";
  if (g_str_has_prefix (sqlstate, "28"))
    return " (check the user and password of the connection)";
  if (g_str_equal (sqlstate, "3D000"))
    return " (create the database, or name another with dbname=)";
  if (g_str_equal (sqlstate, "42501"))
    return " (grant the connection's user access to the schema)";
  return "";
}

/* libpq's messages end in a newline and may span lines. */
static char *
clean_message (const char *message)
{
  g_auto(GStrv) words = g_strsplit_set (message != NULL && message[0] ? message : "no message",
                                        " \n\t", -1);
  GString *out = g_string_new (NULL);

  /* One line, one space between words. */
  for (guint i = 0; words[i] != NULL; i++)
    if (words[i][0] != '\0')
      g_string_append_printf (out, "%s%s", out->len ? " " : "", words[i]);
  return g_string_free (out, FALSE);
}

void
qstore_pg_set_error (GError         **error,
                     QStorePgConn    *conn,
                     const PGresult  *res,
                     const char      *doing)
{
  const char *sqlstate = res != NULL ? PQresultErrorField (res, PG_DIAG_SQLSTATE) : NULL;
  g_autofree char *message = NULL;

  /* Errors libpq makes itself carry no SQLSTATE: they are the client's,
   * a connection that broke ("connection failure"). */
  if (sqlstate == NULL)
    sqlstate = "08006";
  /* The server's own words, without its "ERROR:" and context lines. */
  if (res != NULL && PQresultErrorField (res, PG_DIAG_MESSAGE_PRIMARY) != NULL)
    message = clean_message (PQresultErrorField (res, PG_DIAG_MESSAGE_PRIMARY));
  else
    message = clean_message (res != NULL && PQresultErrorMessage (res)[0] != '\0'
                             ? PQresultErrorMessage (res)
                             : conn->pg != NULL ? PQerrorMessage (conn->pg) : NULL);
  g_set_error (error, QSTORE_ERROR, qstore_pg_error_code_for (sqlstate),
               _("%s: %s failed: %s (SQLSTATE %s)%s"), conn->what, doing, message,
               sqlstate != NULL ? sqlstate : "none", hint_for (sqlstate));
}

void
qstore_pg_set_closed_error (GError    **error,
                            const char  *what)
{
  g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_CLOSED,
               _("%s was closed: open it again to use it"), what);
}

/* Opening */

static void
set_connect_error (GError     **error,
                   PGconn      *pg,
                   const char  *what)
{
  g_autofree char *message = clean_message (pg != NULL ? PQerrorMessage (pg) : "out of memory");
  /* libpq keeps the server's SQLSTATE of a refused login to itself: tell
   * a refused login (28P01, invalid password) from a server that cannot
   * be reached (08001) by what it says. */
  const char *sqlstate = strstr (message, "authentication failed") != NULL ||
                         strstr (message, "password") != NULL ? "28P01" : "08001";
  QStoreError code = QSTORE_ERROR_IO;

  /* invalid_catalog_name: the server is there, the database is not. */
  if (strstr (message, "FATAL: database") != NULL && strstr (message, "does not exist") != NULL)
    {
      sqlstate = "3D000";
      code = QSTORE_ERROR_NOT_FOUND;
    }
  g_set_error (error, QSTORE_ERROR, code,
               _("%s cannot be opened: connecting to the PostgreSQL server failed: %s "
               "(SQLSTATE %s)%s"), what, message, sqlstate, hint_for (sqlstate));
}

/* The server's notices and warnings (a shutdown on its way, say) are
 * not the application's output: they go to the debug log. */
static void
log_notice (void       *data,
            const char *message)
{
  g_debug ("PostgreSQL server: %s", message);
}

QStorePgConn *
qstore_pg_conn_open (const char  *conninfo,
                     const char  *what,
                     GError     **error)
{
  g_autofree char *app = NULL;
  g_autofree char *host = NULL;
  const char *keywords[5];
  const char *values[5];
  QStorePgConn *conn;
  PGconn *pg;

  /* The writer lock's holder is named by the session's application name:
   * the process and host that hold it (63 bytes at most). */
  host = g_strndup (g_get_host_name (), QSTORE_PG_APP_HOST_MAX);
  app = g_strdup_printf ("qstore/%d@%s", (int) getpid (), host);
  /* Later keywords win: the conninfo's own connect_timeout over the
   * default, the application name over the conninfo's. */
  keywords[0] = "connect_timeout";
  values[0] = DEFAULT_CONNECT_TIMEOUT;
  keywords[1] = "dbname";
  values[1] = conninfo;
  keywords[2] = "application_name";
  values[2] = app;
  keywords[3] = "client_encoding";
  values[3] = "UTF8";
  keywords[4] = NULL;
  values[4] = NULL;

  pg = PQconnectdbParams (keywords, values, TRUE);
  if (pg == NULL || PQstatus (pg) != CONNECTION_OK)
    {
      set_connect_error (error, pg, what);
      PQfinish (pg);
      return NULL;
    }

  PQsetNoticeProcessor (pg, log_notice, NULL);
  conn = g_new0 (QStorePgConn, 1);
  g_atomic_ref_count_init (&conn->ref_count);
  g_mutex_init (&conn->lock);
  conn->pg = pg;
  conn->what = what;
  return conn;
}

/* @text with every @what replaced by @with. */
static char *
replace (const char *text,
         const char *what,
         const char *with)
{
  g_auto(GStrv) parts = g_strsplit (text, what, -1);

  return g_strjoinv (with, parts);
}

/* Prepared statements are named q (by store name) or i (by store id),
 * then their number: made once, as formatting them per statement cost
 * a get a good part of its client time. */
static char statement_names[2][QSTORE_PG_N_STMTS][8];

static const char *
statement_name (QStorePgStmt stmt,
                gboolean     by_id)
{
  static gsize made;

  if (g_once_init_enter (&made))
    {
      for (guint i = 0; i < QSTORE_PG_N_STMTS; i++)
        for (guint j = 0; j < 2; j++)
          g_snprintf (statement_names[j][i], sizeof statement_names[j][i], "%c%u",
                      j ? 'i' : 'q', i);
      g_once_init_leave (&made, 1);
    }
  return statement_names[by_id ? 1 : 0][stmt];
}

gboolean
qstore_pg_conn_prepare (QStorePgConn  *conn,
                        const char    *schema,
                        gboolean       writer,
                        gboolean       by_ids,
                        GError       **error)
{
  g_autofree char *quoted = NULL;
  guint n = writer ? QSTORE_PG_N_STMTS : QSTORE_PG_FIRST_WRITER_STMT;
  guint n_sent = 0;
  char *escaped;
  gboolean ok;

  escaped = PQescapeIdentifier (conn->pg, schema, strlen (schema));
  if (escaped == NULL)
    {
      qstore_pg_set_error (error, conn, NULL, "quoting the schema name");
      return FALSE;
    }
  quoted = g_strdup (escaped);
  PQfreemem (escaped);

  /* Every statement is prepared in one round trip: by store name, and the
   * reads by store id too when the location has a writer, who knows the
   * ids. */
  ok = PQenterPipelineMode (conn->pg) == 1;
  for (guint i = 0; i < n && ok; i++)
    {
      gboolean twin = by_ids && i < QSTORE_PG_FIRST_WRITER_STMT &&
                      strstr (statements[i].sql, STORE_ID) != NULL;

      for (guint by_id = 0; by_id <= (twin ? 1 : 0) && ok; by_id++)
        {
          g_autofree char *unquoted = NULL;
          g_autofree char *text = NULL;
          Oid types[G_N_ELEMENTS (statements[i].types)];

          unquoted = replace (statements[i].sql, STORE_ID, by_id ? "$1" : STORE_BY_NAME);
          text = replace (unquoted, "@schema@", quoted);
          memcpy (types, statements[i].types, sizeof types);
          if (by_id)
            types[0] = OID_INT4;
          ok = PQsendPrepare (conn->pg, statement_name ((QStorePgStmt) i, by_id), text,
                              statements[i].n_params, types) == 1;
          n_sent++;
        }
    }
  if (ok)
    ok = PQpipelineSync (conn->pg) == 1;
  if (!ok)
    {
      qstore_pg_set_error (error, conn, NULL, "preparing the statements");
      PQexitPipelineMode (conn->pg);
      return FALSE;
    }
  for (guint i = 0; i < n_sent; i++)
    {
      PGresult *res = PQgetResult (conn->pg);

      if (res == NULL || PQresultStatus (res) != PGRES_COMMAND_OK)
        {
          if (ok)
            qstore_pg_set_error (error, conn, res, "preparing the statements");
          ok = FALSE;
        }
      PQclear (res);
      if (res == NULL)
        break;
      /* Each result is followed by a NULL. */
      PQclear (PQgetResult (conn->pg));
    }
  {
    PGresult *res;

    while ((res = PQgetResult (conn->pg)) != NULL)
      {
        ExecStatusType status = PQresultStatus (res);

        PQclear (res);
        if (status == PGRES_PIPELINE_SYNC)
          break;
      }
  }
  PQexitPipelineMode (conn->pg);
  conn->prepared_writer = ok && writer;
  return ok;
}

QStorePgConn *
qstore_pg_conn_ref (QStorePgConn *conn)
{
  g_atomic_ref_count_inc (&conn->ref_count);
  return conn;
}

void
qstore_pg_conn_close (QStorePgConn *conn)
{
  g_clear_pointer (&conn->pg, PQfinish);
}

void
qstore_pg_conn_unref (QStorePgConn *conn)
{
  if (!g_atomic_ref_count_dec (&conn->ref_count))
    return;
  qstore_pg_conn_close (conn);
  g_clear_pointer (&conn->sent, g_ptr_array_unref);
  g_clear_error (&conn->send_error);
  g_mutex_clear (&conn->lock);
  g_free (conn);
}

gboolean
qstore_pg_conn_check_open (QStorePgConn  *conn,
                           GError       **error)
{
  if (G_LIKELY (conn->pg != NULL))
    return TRUE;
  qstore_pg_set_closed_error (error, conn->what);
  return FALSE;
}

gboolean
qstore_pg_conn_is_broken (QStorePgConn *conn)
{
  return conn->pg == NULL || PQstatus (conn->pg) != CONNECTION_OK;
}

/* Running statements */

static int
send_step (QStorePgConn       *conn,
           const QStorePgStep *step)
{
  int formats[4] = { 1, 1, 1, 1 };

  g_assert (step->n_params <= (int) G_N_ELEMENTS (formats));
  if (step->sql != NULL)
    return PQsendQueryParams (conn->pg, step->sql, step->n_params, NULL,
                              (const char * const *) step->values, step->lengths,
                              formats, 1);
  return PQsendQueryPrepared (conn->pg, statement_name (step->stmt, step->by_id),
                              step->n_params, (const char * const *) step->values,
                              step->lengths, formats, 1);
}

void
qstore_pg_conn_end_read (QStorePgConn *conn)
{
  /* Not begun yet: there is nothing to end. */
  if (conn->begin_read)
    {
      conn->begin_read = FALSE;
      return;
    }
  if (conn->pg == NULL || conn->ending_read)
    return;
  /* Sent now, answered while nobody waits: its answer is read with the
   * next use's. Should sending fail, that use ends the transaction. */
  conn->in_read_txn = FALSE;
  if (PQsendQuery (conn->pg, "ROLLBACK") == 1 && PQflush (conn->pg) == 0)
    conn->ending_read = TRUE;
  else
    conn->in_read_txn = TRUE;
}

/* Reads the answer to qstore_pg_conn_end_read()'s ROLLBACK. */
static void
finish_end_read (QStorePgConn *conn)
{
  PGresult *res;

  if (!conn->ending_read)
    return;
  conn->ending_read = FALSE;
  while ((res = PQgetResult (conn->pg)) != NULL)
    {
      /* The transaction may still be open: end it with what comes next. */
      if (PQresultStatus (res) != PGRES_COMMAND_OK)
        conn->in_read_txn = TRUE;
      PQclear (res);
    }
}

gboolean
qstore_pg_conn_pipeline_begin (QStorePgConn  *conn,
                               const char    *doing,
                               GError       **error)
{
  QStorePgStep prefix[2] = { { 0 } };
  guint n_prefix = 0;

  if (!qstore_pg_conn_check_open (conn, error))
    return FALSE;
  finish_end_read (conn);
  if (PQenterPipelineMode (conn->pg) != 1)
    {
      qstore_pg_set_error (error, conn, NULL, doing);
      return FALSE;
    }
  if (conn->sent == NULL)
    conn->sent = g_ptr_array_new ();
  g_ptr_array_set_size (conn->sent, 0);
  g_clear_error (&conn->send_error);

  /* A read transaction left open by the last user ends first; one asked
   * for begins before the steps, in the same round trip. */
  if (conn->in_read_txn)
    prefix[n_prefix++].sql = "ROLLBACK";
  if (conn->begin_read)
    prefix[n_prefix++].sql = QSTORE_PG_BEGIN_READ_SQL;
  conn->in_read_txn = FALSE;
  conn->begin_read = FALSE;
  qstore_pg_conn_pipeline_send (conn, prefix, n_prefix, doing);
  return TRUE;
}

void
qstore_pg_conn_pipeline_send (QStorePgConn        *conn,
                              const QStorePgStep  *steps,
                              guint                n_steps,
                              const char          *doing)
{
  for (guint i = 0; i < n_steps && conn->send_error == NULL; i++)
    {
      if (steps[i].result != NULL)
        *steps[i].result = NULL;
      g_ptr_array_add (conn->sent, steps[i].result);
      if (send_step (conn, &steps[i]) != 1)
        qstore_pg_set_error (&conn->send_error, conn, NULL, doing);
    }
}

void
qstore_pg_conn_pipeline_flush (QStorePgConn *conn,
                               const char   *doing)
{
  if (conn->send_error == NULL && PQflush (conn->pg) != 0)
    qstore_pg_set_error (&conn->send_error, conn, NULL, doing);
}

/* Clears what the steps sent so far kept. */
static void
clear_results (QStorePgConn *conn)
{
  for (guint i = 0; i < conn->sent->len; i++)
    {
      PGresult **result = conn->sent->pdata[i];

      if (result != NULL)
        g_clear_pointer (result, PQclear);
    }
}

gboolean
qstore_pg_conn_pipeline_end (QStorePgConn  *conn,
                             const char    *doing,
                             GError       **error)
{
  gboolean ok = conn->send_error == NULL;

  if (ok)
    ok = PQpipelineSync (conn->pg) == 1;
  if (!ok)
    {
      if (conn->send_error != NULL)
        g_propagate_error (error, g_steal_pointer (&conn->send_error));
      else
        qstore_pg_set_error (error, conn, NULL, doing);
      clear_results (conn);
      PQexitPipelineMode (conn->pg);
      return FALSE;
    }
  g_atomic_pointer_add (&round_trips, 1);

  for (guint i = 0; i < conn->sent->len; i++)
    {
      PGresult *res = PQgetResult (conn->pg);
      ExecStatusType status = PQresultStatus (res);
      PGresult **keep = conn->sent->pdata[i];

      if (res == NULL)
        {
          /* The connection broke before the server answered. */
          if (ok)
            qstore_pg_set_error (error, conn, NULL, doing);
          ok = FALSE;
          break;
        }
      if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK)
        {
          if (ok && status != PGRES_PIPELINE_ABORTED)
            {
              qstore_pg_set_error (error, conn, res, doing);
              ok = FALSE;
            }
          PQclear (res);
        }
      else if (keep != NULL)
        *keep = res;
      else
        PQclear (res);
      /* Each statement's results end with a NULL. */
      PQclear (PQgetResult (conn->pg));
    }

  /* Up to the sync, which ends the pipeline's implicit transaction: its
   * commit may fail still (a deferred constraint, a serialization
   * failure), and then nothing of it is there. */
  if (conn->pg != NULL && PQstatus (conn->pg) == CONNECTION_OK)
    {
      PGresult *res;
      gboolean failed = FALSE;

      /* An error is followed by a NULL, then the sync. */
      while ((res = PQgetResult (conn->pg)) != NULL || failed)
        {
          ExecStatusType status = PQresultStatus (res);

          failed = res != NULL && status == PGRES_FATAL_ERROR;
          if (failed && ok)
            {
              qstore_pg_set_error (error, conn, res, doing);
              ok = FALSE;
            }
          PQclear (res);
          if (status == PGRES_PIPELINE_SYNC ||
              (res == NULL && PQstatus (conn->pg) != CONNECTION_OK))
            break;
        }
    }
  PQexitPipelineMode (conn->pg);

  if (!ok)
    clear_results (conn);
  return ok;
}

/* One statement and nothing to end or begin first (a get, a page): sent
 * with its sync outside pipeline mode, the same messages and round trip
 * for less of libpq's work than entering and leaving the mode. */
static gboolean
run_one (QStorePgConn        *conn,
         const QStorePgStep  *step,
         const char          *doing,
         GError             **error)
{
  PGresult *res;
  gboolean ok = TRUE;
  gboolean answered = FALSE;

  if (send_step (conn, step) != 1)
    {
      qstore_pg_set_error (error, conn, NULL, doing);
      return FALSE;
    }
  g_atomic_pointer_add (&round_trips, 1);
  /* Results up to the server's ready message, which ends with a NULL;
   * an error may come at the sync still, as its commit fails. */
  while ((res = PQgetResult (conn->pg)) != NULL)
    {
      ExecStatusType status = PQresultStatus (res);

      answered = TRUE;
      if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK)
        {
          if (ok)
            qstore_pg_set_error (error, conn, res, doing);
          ok = FALSE;
          PQclear (res);
        }
      else if (step->result != NULL && *step->result == NULL)
        *step->result = res;
      else
        PQclear (res);
    }
  if (ok && !answered)
    {
      /* The connection broke before the server answered. */
      qstore_pg_set_error (error, conn, NULL, doing);
      ok = FALSE;
    }
  if (!ok && step->result != NULL)
    g_clear_pointer (step->result, PQclear);
  return ok;
}

gboolean
qstore_pg_conn_run (QStorePgConn        *conn,
                    const QStorePgStep  *steps,
                    guint                n_steps,
                    const char          *doing,
                    GError             **error)
{
  for (guint i = 0; i < n_steps; i++)
    if (steps[i].result != NULL)
      *steps[i].result = NULL;
  if (n_steps == 1 && !conn->in_read_txn && !conn->begin_read)
    {
      if (!qstore_pg_conn_check_open (conn, error))
        return FALSE;
      finish_end_read (conn);
      /* The ROLLBACK that failed leaves a transaction to end first. */
      if (!conn->in_read_txn)
        return run_one (conn, steps, doing, error);
    }
  if (!qstore_pg_conn_pipeline_begin (conn, doing, error))
    return FALSE;
  qstore_pg_conn_pipeline_send (conn, steps, n_steps, doing);
  return qstore_pg_conn_pipeline_end (conn, doing, error);
}

gboolean
qstore_pg_conn_exec (QStorePgConn  *conn,
                     const char    *sql,
                     const char    *doing,
                     GError       **error)
{
  QStorePgStep step = { .sql = sql };

  return qstore_pg_conn_run (conn, &step, 1, doing, error);
}

gboolean
qstore_pg_conn_query_int (QStorePgConn  *conn,
                          const char    *sql,
                          const char    *param,
                          gint64        *value,
                          const char    *doing,
                          GError       **error)
{
  const char *values[1] = { param };
  int lengths[1] = { param != NULL ? (int) strlen (param) : 0 };
  PGresult *res = NULL;
  QStorePgStep step = {
    .sql = sql, .n_params = param != NULL ? 1 : 0,
    .values = values, .lengths = lengths, .result = &res,
  };

  if (!qstore_pg_conn_run (conn, &step, 1, doing, error))
    return FALSE;
  if (PQntuples (res) != 1 || PQnfields (res) != 1 || PQgetisnull (res, 0, 0))
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_FAILED,
                   _("%s: %s gave no answer"), conn->what, doing);
      PQclear (res);
      return FALSE;
    }
  *value = qstore_pg_result_int (res, 0, 0);
  PQclear (res);
  return TRUE;
}

gint64
qstore_pg_result_int (const PGresult *res,
                      int             row,
                      int             column)
{
  const guint8 *data = (const guint8 *) PQgetvalue (res, row, column);
  int len = PQgetlength (res, row, column);
  gint64 value = 0;

  /* Binary: a boolean is one byte, integers are big-endian. */
  for (int i = 0; i < len; i++)
    value = (value << 8) | data[i];
  if (len == 4)
    value = (gint32) value;
  return value;
}

/* Array parameters */

/* Room for @n more bytes at the end of @array: where they go. One
 * resize per element instead of one append per field. */
static inline guint8 *
array_extend (GByteArray *array,
              gsize       n)
{
  guint at = array->len;

  g_byte_array_set_size (array, at + (guint) n);
  return array->data + at;
}

static inline void
put_be32 (guint8  *at,
          guint32  n)
{
  guint32 be = GUINT32_TO_BE (n);

  memcpy (at, &be, 4);
}

static GByteArray *
array_new (Oid   type,
           guint n_elements)
{
  GByteArray *array = g_byte_array_new ();
  guint8 *at = array_extend (array, 20);

  /* One dimension, no NULLs, of @type; its length and lower bound. */
  put_be32 (at, 1);
  put_be32 (at + 4, 0);
  put_be32 (at + 8, type);
  put_be32 (at + 12, n_elements);
  put_be32 (at + 16, 1);
  return array;
}

GByteArray *
qstore_pg_array_new (guint n_elements)
{
  return array_new (OID_BYTEA, n_elements);
}

GByteArray *
qstore_pg_int_array_new (guint n_elements)
{
  return array_new (OID_INT4, n_elements);
}

void
qstore_pg_int_array_append (GByteArray *array,
                            gint32      value)
{
  guint8 *at = array_extend (array, 8);

  put_be32 (at, 4);
  put_be32 (at + 4, (guint32) value);
}

void
qstore_pg_array_reserve (GByteArray *array,
                         gsize       bytes)
{
  guint len = array->len;

  /* Growing allocates; shrinking back only sets the length. */
  g_byte_array_set_size (array, len + (guint) bytes);
  g_byte_array_set_size (array, len);
}

void
qstore_pg_array_set_length (GByteArray *array,
                            guint       n_elements)
{
  guint32 be = GUINT32_TO_BE (n_elements);

  /* After the dimensions, the flags and the element type. */
  memcpy (array->data + 12, &be, 4);
}

void
qstore_pg_array_append (GByteArray   *array,
                        const guint8 *data,
                        gsize         len)
{
  guint8 *at = array_extend (array, 4 + len);

  put_be32 (at, (guint32) len);
  if (len > 0)
    memcpy (at + 4, data, len);
}
