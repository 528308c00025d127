/* qstore-postgres-db.c: an open PostgreSQL location
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "qstore-i18n-private.h"
#include "qstore-postgres-db.h"
#include "qstore-postgres-gaps.h"
#include "qstore-postgres-lock.h"

/* The conninfo as messages show it: as given, unless it holds a password,
 * which is left out. */
static char *
conninfo_for_messages (const char *conninfo)
{
  PQconninfoOption *options = PQconninfoParse (conninfo, NULL);
  gboolean has_password = FALSE;
  GString *out;

  if (options == NULL)
    return g_strdup (conninfo);
  for (PQconninfoOption *o = options; o->keyword != NULL; o++)
    if (g_str_equal (o->keyword, "password") && o->val != NULL)
      has_password = TRUE;
  if (!has_password)
    {
      PQconninfoFree (options);
      return g_strdup (conninfo);
    }

  out = g_string_new (NULL);
  for (PQconninfoOption *o = options; o->keyword != NULL; o++)
    if (o->val != NULL && !g_str_equal (o->keyword, "password"))
      g_string_append_printf (out, "%s%s=%s", out->len ? " " : "", o->keyword, o->val);
  PQconninfoFree (options);
  return g_string_free (out, FALSE);
}

QStorePgDb *
qstore_pg_db_new (const char *conninfo,
                  const char *schema,
                  gboolean    read_only)
{
  QStorePgDb *db = g_new0 (QStorePgDb, 1);
  g_autofree char *shown = conninfo_for_messages (conninfo);

  g_atomic_ref_count_init (&db->ref_count);
  db->conninfo = g_strdup (conninfo);
  db->schema = g_strdup (schema);
  db->what = g_strdup_printf ("The postgres store “%s” at “%s”", schema, shown);
  db->read_only = read_only;
  db->known_stores = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  db->gaps = qstore_pg_gaps_new ();
  g_mutex_init (&db->pool_lock);
  db->readers = g_ptr_array_new_with_free_func ((GDestroyNotify) qstore_pg_conn_unref);
  db->idle = g_ptr_array_new ();
  db->unbegun = g_ptr_array_new ();
  return db;
}

QStorePgDb *
qstore_pg_db_ref (QStorePgDb *db)
{
  g_atomic_ref_count_inc (&db->ref_count);
  return db;
}

void
qstore_pg_db_unref (QStorePgDb *db)
{
  if (!g_atomic_ref_count_dec (&db->ref_count))
    return;
  qstore_pg_db_close (db);
  g_clear_pointer (&db->main, qstore_pg_conn_unref);
  g_ptr_array_unref (db->idle);
  g_ptr_array_unref (db->unbegun);
  g_ptr_array_unref (db->readers);
  g_hash_table_unref (db->known_stores);
  g_hash_table_unref (db->gaps);
  g_mutex_clear (&db->pool_lock);
  g_free (db->conninfo);
  g_free (db->schema);
  g_free (db->what);
  g_free (db);
}

void
qstore_pg_db_close (QStorePgDb *db)
{
  g_mutex_lock (&db->pool_lock);
  g_atomic_int_set (&db->closed, TRUE);
  for (guint i = 0; i < db->readers->len; i++)
    {
      QStorePgConn *conn = db->readers->pdata[i];

      g_mutex_lock (&conn->lock);
      qstore_pg_conn_close (conn);
      g_mutex_unlock (&conn->lock);
    }
  g_ptr_array_set_size (db->idle, 0);
  g_mutex_unlock (&db->pool_lock);

  if (db->main != NULL)
    {
      g_mutex_lock (&db->main->lock);
      if (db->main->pg != NULL)
        {
          if (!db->read_only)
            qstore_pg_lock_release (db->main, db->schema);
          g_debug ("%s: closed; %" G_GUINT64_FORMAT " round trips to the server in this "
                   "process so far, %" G_GUINT64_FORMAT " reads of this writer answered by "
                   "a known gap", db->what, qstore_pg_round_trips (), db->gap_reads);
        }
      qstore_pg_conn_close (db->main);
      g_mutex_unlock (&db->main->lock);
    }
}

/* Opening */

/* What the schema holds, in one round trip: whether it exists, how many
 * of qstore's two tables it has, and how many of their columns have the
 * expected types. */
#define SHAPE_SQL \
  "SELECT (SELECT count(*) FROM pg_namespace WHERE nspname = $1), " \
  "(SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace " \
  " WHERE n.nspname = $1 AND c.relname IN ('stores', 'kv')), " \
  "(SELECT count(*) FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid " \
  " JOIN pg_namespace n ON n.oid = c.relnamespace " \
  " WHERE n.nspname = $1 AND c.relkind = 'r' AND a.attnum > 0 AND NOT a.attisdropped " \
  " AND (c.relname, a.attname, format_type (a.atttypid, a.atttypmod)) IN " \
  "  (('stores', 'id', 'integer'), ('stores', 'name', 'text'), " \
  "   ('kv', 'store_id', 'integer'), ('kv', 'key', 'bytea'), ('kv', 'value', 'bytea')))"

#define N_TABLES 2
#define N_COLUMNS 5

static gboolean
read_shape (QStorePgDb  *db,
            gint64      *has_schema,
            gint64      *n_tables,
            gint64      *n_columns,
            GError     **error)
{
  const char *values[1] = { db->schema };
  int lengths[1] = { (int) strlen (db->schema) };
  PGresult *res = NULL;
  QStorePgStep step = {
    .sql = SHAPE_SQL, .n_params = 1, .values = values, .lengths = lengths, .result = &res,
  };

  if (!qstore_pg_conn_run (db->main, &step, 1, "reading the schema", error))
    return FALSE;
  *has_schema = qstore_pg_result_int (res, 0, 0);
  *n_tables = qstore_pg_result_int (res, 0, 1);
  *n_columns = qstore_pg_result_int (res, 0, 2);
  PQclear (res);
  return TRUE;
}

static gboolean
create_tables (QStorePgDb  *db,
               GError     **error)
{
  char *escaped = PQescapeIdentifier (db->main->pg, db->schema, strlen (db->schema));
  g_autofree char *schema_sql = NULL;
  g_autofree char *stores_sql = NULL;
  g_autofree char *kv_sql = NULL;
  QStorePgStep steps[3] = { { 0 } };

  if (escaped == NULL)
    {
      qstore_pg_set_error (error, db->main, NULL, "quoting the schema name");
      return FALSE;
    }
  schema_sql = g_strdup_printf ("CREATE SCHEMA IF NOT EXISTS %s", escaped);
  stores_sql = g_strdup_printf ("CREATE TABLE IF NOT EXISTS %s.stores ("
                                "id integer GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, "
                                "name text NOT NULL UNIQUE)", escaped);
  /* bytea compares as unsigned bytes, shorter first: the order of
   * qstore_key_compare(). */
  kv_sql = g_strdup_printf ("CREATE TABLE IF NOT EXISTS %s.kv ("
                            "store_id integer NOT NULL, key bytea NOT NULL, "
                            "value bytea NOT NULL, PRIMARY KEY (store_id, key))", escaped);
  PQfreemem (escaped);
  steps[0].sql = schema_sql;
  steps[1].sql = stores_sql;
  steps[2].sql = kv_sql;
  /* One pipeline: one transaction, so a failure leaves no half. */
  return qstore_pg_conn_run (db->main, steps, G_N_ELEMENTS (steps),
                             "creating the schema and its tables", error);
}

gboolean
qstore_pg_db_open (QStorePgDb  *db,
                   guint        wait_ms,
                   GError     **error)
{
  gint64 has_schema, n_tables, n_columns;

  db->main = qstore_pg_conn_open (db->conninfo, db->what, error);
  if (db->main == NULL)
    return FALSE;

  /* Before anything is written: one writer at a time. */
  if (!db->read_only &&
      !qstore_pg_lock_take (db->main, db->schema, wait_ms, error))
    return FALSE;

  if (!read_shape (db, &has_schema, &n_tables, &n_columns, error))
    return FALSE;

  if (n_tables != 0 && (n_tables != N_TABLES || n_columns != N_COLUMNS))
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_CORRUPT,
                   _("%s is not a qstore store: schema “%s” holds tables named stores "
                   "or kv that qstore did not make; name another schema (the schema "
                   "option)"), db->what, db->schema);
      return FALSE;
    }
  if (n_tables == 0)
    {
      if (db->read_only)
        {
          g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_NOT_FOUND,
                       _("%s does not exist: %s (open it read-write to create it)"),
                       db->what,
                       has_schema ? "the schema holds none of its tables"
                                  : "the schema does not exist");
          return FALSE;
        }
      if (!create_tables (db, error))
        return FALSE;
    }

  /* Commits are durable unless a write says otherwise (see
   * qstore_pg_write()), whatever the server's default. */
  if (!db->read_only &&
      !qstore_pg_conn_exec (db->main, "SET synchronous_commit = on",
                            "setting the durability", error))
    return FALSE;
  return qstore_pg_conn_prepare (db->main, db->schema, !db->read_only, !db->read_only,
                                 error) &&
         (db->read_only || qstore_pg_db_load_stores (db, error));
}

gboolean
qstore_pg_db_load_stores (QStorePgDb  *db,
                          GError     **error)
{
  PGresult *res = NULL;
  QStorePgStep step = { .stmt = QSTORE_PG_STMT_ALL_STORES, .result = &res };

  qstore_pg_db_stores_changed (db);
  g_hash_table_remove_all (db->known_stores);
  db->stores_complete = FALSE;
  if (!qstore_pg_conn_run (db->main, &step, 1, "listing the stores", error))
    return FALSE;
  for (int i = 0; i < PQntuples (res); i++)
    g_hash_table_insert (db->known_stores,
                         g_strndup (PQgetvalue (res, i, 1), PQgetlength (res, i, 1)),
                         GINT_TO_POINTER (qstore_pg_result_int (res, i, 0)));
  PQclear (res);
  db->stores_complete = TRUE;
  qstore_pg_db_stores_changed (db);
  return TRUE;
}

void
qstore_pg_db_stores_changed (QStorePgDb *db)
{
  g_atomic_int_inc (&db->stores_generation);
}

gboolean
qstore_pg_db_snapshot_store (QStorePgDb  *db,
                             gint         generation,
                             const char  *name,
                             guint32     *id_be,
                             const char **value,
                             int         *length)
{
  gboolean by_id = FALSE;

  if (db->read_only || !g_mutex_trylock (&db->main->lock))
    return FALSE;
  if (!db->txn_restructured && g_atomic_int_get (&db->stores_generation) == generation)
    by_id = qstore_pg_db_writer_store (db, name, id_be, value, length);
  g_mutex_unlock (&db->main->lock);
  return by_id;
}

/* The reader pool */

QStorePgConn *
qstore_pg_db_acquire_reader (QStorePgDb  *db,
                             GError     **error)
{
  QStorePgConn *conn = NULL;

  g_mutex_lock (&db->pool_lock);
  if (db->closed)
    qstore_pg_set_closed_error (error, db->what);
  else if (db->idle->len > 0)
    conn = qstore_pg_conn_ref (g_ptr_array_steal_index_fast (db->idle, db->idle->len - 1));
  g_mutex_unlock (&db->pool_lock);
  if (conn != NULL || db->closed)
    return conn;

  /* Connecting takes a round trip or more: not under the pool's lock. */
  conn = qstore_pg_conn_open (db->conninfo, db->what, error);
  if (conn == NULL)
    return NULL;
  if (!qstore_pg_conn_prepare (conn, db->schema, FALSE, !db->read_only, error))
    {
      qstore_pg_conn_unref (conn);
      return NULL;
    }

  g_mutex_lock (&db->pool_lock);
  if (db->closed)
    {
      g_mutex_unlock (&db->pool_lock);
      qstore_pg_conn_unref (conn);
      qstore_pg_set_closed_error (error, db->what);
      return NULL;
    }
  g_ptr_array_add (db->readers, qstore_pg_conn_ref (conn));
  g_mutex_unlock (&db->pool_lock);
  return conn;
}

void
qstore_pg_db_release_reader (QStorePgDb   *db,
                             QStorePgConn *conn)
{
  gboolean broken;

  g_mutex_lock (&conn->lock);
  broken = qstore_pg_conn_is_broken (conn);
  g_mutex_unlock (&conn->lock);

  g_mutex_lock (&db->pool_lock);
  if (broken)
    g_ptr_array_remove_fast (db->readers, conn);
  else if (!db->closed)
    g_ptr_array_add (db->idle, conn);
  g_mutex_unlock (&db->pool_lock);
  qstore_pg_conn_unref (conn);
}

void
qstore_pg_db_forget_idle_readers (QStorePgDb *db)
{
  g_mutex_lock (&db->pool_lock);
  /* @readers holds the references: removing one closes it. */
  for (guint i = 0; i < db->idle->len; i++)
    g_ptr_array_remove_fast (db->readers, db->idle->pdata[i]);
  g_ptr_array_set_size (db->idle, 0);
  g_mutex_unlock (&db->pool_lock);
}

/* Snapshots begun with their first read */

void
qstore_pg_db_defer_snapshot (QStorePgDb   *db,
                             QStorePgConn *conn)
{
  g_mutex_lock (&conn->lock);
  conn->begin_read = TRUE;
  g_mutex_unlock (&conn->lock);
  g_mutex_lock (&db->pool_lock);
  g_ptr_array_add (db->unbegun, conn);
  g_mutex_unlock (&db->pool_lock);
}

void
qstore_pg_db_forget_snapshot (QStorePgDb   *db,
                              QStorePgConn *conn)
{
  g_mutex_lock (&db->pool_lock);
  g_ptr_array_remove_fast (db->unbegun, conn);
  g_mutex_unlock (&db->pool_lock);
}

void
qstore_pg_db_begin_snapshots (QStorePgDb *db)
{
  g_mutex_lock (&db->pool_lock);
  for (guint i = 0; i < db->unbegun->len; i++)
    {
      QStorePgConn *conn = db->unbegun->pdata[i];
      QStorePgStep step = { .sql = "SELECT 1" };

      /* A snapshot that read once has begun. */
      g_mutex_lock (&conn->lock);
      if (conn->begin_read &&
          !qstore_pg_conn_run (conn, &step, 1, "beginning a snapshot", NULL))
        {
          /* Its state is lost: its reads fail rather than see the write. */
          g_debug ("%s: a snapshot could not begin before a write", db->what);
          qstore_pg_conn_close (conn);
        }
      g_mutex_unlock (&conn->lock);
    }
  g_ptr_array_set_size (db->unbegun, 0);
  g_mutex_unlock (&db->pool_lock);
}

/* Reading */

gboolean
qstore_pg_db_writer_store (QStorePgDb  *db,
                           const char  *name,
                           guint32     *id_be,
                           const char **value,
                           int         *length)
{
  gpointer id;

  if (db->read_only || !g_hash_table_lookup_extended (db->known_stores, name, NULL, &id))
    return FALSE;
  *id_be = GUINT32_TO_BE ((guint32) GPOINTER_TO_INT (id));
  *value = (const char *) id_be;
  *length = 4;
  return TRUE;
}

gboolean
qstore_pg_db_in_write_txn (QStorePgDb *db)
{
  gboolean open;

  if (db->read_only)
    return FALSE;
  g_mutex_lock (&db->main->lock);
  open = db->txn_open;
  g_mutex_unlock (&db->main->lock);
  return open;
}

QStorePgConn *
qstore_pg_db_lock_committed (QStorePgDb  *db,
                             GError     **error)
{
  QStorePgConn *conn = db->main;

  /* Not inside a write transaction: its writes are not there yet. */
  g_mutex_lock (&conn->lock);
  if (!db->txn_open)
    return conn;
  g_mutex_unlock (&conn->lock);
  if (!(conn = qstore_pg_db_acquire_reader (db, error)))
    return NULL;
  g_mutex_lock (&conn->lock);
  return conn;
}

void
qstore_pg_db_unlock_committed (QStorePgDb   *db,
                               QStorePgConn *conn)
{
  g_mutex_unlock (&conn->lock);
  if (conn != db->main)
    qstore_pg_db_release_reader (db, conn);
}

gboolean
qstore_pg_db_check_write_txn (QStorePgDb  *db,
                              guint64      serial,
                              GError     **error)
{
  if (!qstore_pg_conn_check_open (db->main, error))
    return FALSE;
  if (G_LIKELY (db->txn_open && db->txn_serial == serial))
    return TRUE;
  g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_CLOSED,
               _("%s: the write transaction is over: begin another one"), db->what);
  return FALSE;
}

/* A read of @key in @store on @conn: QSTORE_PG_STMT_GET, or
 * QSTORE_PG_STMT_GET_OR_NEXT (the key, or else the first one after it).
 * The result holds no row when there is none; %NULL on error. */
static PGresult *
read_key (QStorePgConn  *conn,
          QStorePgStmt   stmt,
          gboolean       by_id,
          const char    *store,
          int            store_len,
          const guint8  *key,
          gsize          key_len,
          GError       **error)
{
  const char *values[2] = { store, (const char *) key };
  int lengths[2] = { store_len, (int) key_len };
  PGresult *res = NULL;
  QStorePgStep step = {
    .stmt = stmt, .n_params = 2, .values = values, .lengths = lengths,
    .result = &res, .by_id = by_id,
  };

  if (!qstore_pg_conn_run (conn, &step, 1, "reading a key", error))
    return NULL;
  return res;
}

/* Keeps the gap that @res, the key or the next one after @key, shows. */
static void
note_gap (QStorePgDb      *db,
          const char      *name,
          const guint8    *key,
          gsize            key_len,
          const PGresult  *res,
          gboolean         provisional)
{
  const guint8 *found;
  gsize found_len;

  if (PQntuples (res) == 0)
    {
      qstore_pg_gaps_set (db->gaps, name, key, key_len, NULL, 0, provisional);
      return;
    }
  found = (const guint8 *) PQgetvalue (res, 0, 0);
  found_len = PQgetlength (res, 0, 0);
  if (qstore_key_compare (found, found_len, key, key_len) != 0)
    qstore_pg_gaps_set (db->gaps, name, key, key_len, found, found_len, provisional);
}

/* While a write transaction holds the writer's session, a plain read
 * goes to a reader, which sees committed data only. What it finds absent
 * is a gap of the committed state until the transaction ends (@serial). */
static PGresult *
reader_get_or_next (QStorePgDb    *db,
                    const char    *name,
                    const guint8  *key,
                    gsize          key_len,
                    guint64        serial,
                    GError       **error)
{
  QStorePgConn *conn = qstore_pg_db_acquire_reader (db, error);
  PGresult *res;

  if (conn == NULL)
    return NULL;
  g_mutex_lock (&conn->lock);
  res = read_key (conn, QSTORE_PG_STMT_GET_OR_NEXT, FALSE, name, (int) strlen (name), key,
                  key_len, error);
  g_mutex_unlock (&conn->lock);
  qstore_pg_db_release_reader (db, conn);
  if (res == NULL)
    return NULL;

  g_mutex_lock (&db->main->lock);
  if (db->txn_open && db->txn_serial == serial)
    note_gap (db, name, key, key_len, res, TRUE);
  g_mutex_unlock (&db->main->lock);
  return res;
}

/* The value of @key alone, on the writer's session: %NULL with no error
 * when it is absent. */
static GBytes *
exact_get (QStorePgConn  *conn,
           gboolean       by_id,
           const char    *store,
           int            store_len,
           const guint8  *key,
           gsize          key_len,
           gboolean      *found,
           GError       **error)
{
  PGresult *res = read_key (conn, QSTORE_PG_STMT_GET, by_id, store, store_len, key, key_len,
                            error);

  *found = FALSE;
  if (res == NULL)
    return NULL;
  if (PQntuples (res) == 0)
    {
      PQclear (res);
      return NULL;
    }
  *found = TRUE;
  /* The value stays in the result, which goes with the bytes. */
  return g_bytes_new_with_free_func (PQgetvalue (res, 0, 0), PQgetlength (res, 0, 0),
                                     (GDestroyNotify) PQclear, res);
}

/* The writer's read: from its gaps, or the key or the one after it. A
 * run of gets that find their keys (reads of rows, not checks before
 * inserts) asks for the key alone, which spares the server an ordered
 * range read per get; the first one that misses sends the next get back
 * to asking for the next key too, so its gap is known again. */
static GBytes *
writer_get (QStorePgDb    *db,
            const char    *name,
            const guint8  *key,
            gsize          key_len,
            GError       **error)
{
  QStorePgConn *conn = db->main;
  PGresult *res = NULL;
  const char *store = name;
  int store_len = (int) strlen (name);
  guint32 id_be;
  gboolean by_id;

  g_mutex_lock (&conn->lock);
  /* A writer whose session broke may no longer be the one writer. */
  if (!qstore_pg_conn_is_broken (conn) && qstore_pg_gaps_hold (db->gaps, name, key, key_len))
    {
      db->gap_reads++;
      g_mutex_unlock (&conn->lock);
      return NULL;
    }
  if (db->txn_open)
    {
      guint64 serial = db->txn_serial;

      g_mutex_unlock (&conn->lock);
      res = reader_get_or_next (db, name, key, key_len, serial, error);
    }
  else
    {
      by_id = qstore_pg_db_writer_store (db, name, &id_be, &store, &store_len);
      if (db->last_get_found)
        {
          GBytes *value = exact_get (conn, by_id, store, store_len, key, key_len,
                                     &db->last_get_found, error);

          g_mutex_unlock (&conn->lock);
          return value;
        }
      res = read_key (conn, QSTORE_PG_STMT_GET_OR_NEXT, by_id, store, store_len, key, key_len,
                      error);
      if (res != NULL)
        {
          note_gap (db, name, key, key_len, res, FALSE);
          db->last_get_found = PQntuples (res) > 0 &&
                               qstore_key_compare ((const guint8 *) PQgetvalue (res, 0, 0),
                                                   PQgetlength (res, 0, 0), key, key_len) == 0;
        }
      g_mutex_unlock (&conn->lock);
    }
  if (res == NULL)
    return NULL;
  if (PQntuples (res) == 0 ||
      qstore_key_compare ((const guint8 *) PQgetvalue (res, 0, 0), PQgetlength (res, 0, 0),
                          key, key_len) != 0)
    {
      PQclear (res);
      return NULL;
    }
  return g_bytes_new_with_free_func (PQgetvalue (res, 0, 1), PQgetlength (res, 0, 1),
                                     (GDestroyNotify) PQclear, res);
}

GBytes *
qstore_pg_db_get (QStorePgDb    *db,
                  QStorePgConn  *conn,
                  const char    *name,
                  const guint8  *key,
                  gsize          key_len,
                  GError       **error)
{
  GBytes *value;
  gboolean found;

  if (conn == db->main && !db->read_only)
    return writer_get (db, name, key, key_len, error);
  g_mutex_lock (&conn->lock);
  value = exact_get (conn, FALSE, name, (int) strlen (name), key, key_len, &found, error);
  g_mutex_unlock (&conn->lock);
  return value;
}

gboolean
qstore_pg_db_lookup (QStorePgConn   *conn,
                     const char     *store,
                     int             store_len,
                     gboolean        by_id,
                     const guint8   *key,
                     gsize           key_len,
                     PGresult      **keep,
                     const guint8  **value,
                     gsize          *value_len,
                     GError        **error)
{
  g_clear_pointer (keep, PQclear);
  *keep = read_key (conn, QSTORE_PG_STMT_GET, by_id, store, store_len, key, key_len, error);
  if (*keep == NULL || PQntuples (*keep) == 0)
    return FALSE;
  *value = (const guint8 *) PQgetvalue (*keep, 0, 0);
  *value_len = PQgetlength (*keep, 0, 0);
  return TRUE;
}

char **
qstore_pg_db_list_stores (QStorePgDb  *db,
                          GError     **error)
{
  g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  PGresult *res = NULL;
  QStorePgStep step = { .stmt = QSTORE_PG_STMT_LIST, .result = &res };
  QStorePgConn *conn = qstore_pg_db_lock_committed (db, error);
  gboolean ok;

  if (conn == NULL)
    return NULL;
  ok = qstore_pg_conn_run (conn, &step, 1, "listing the stores", error);
  qstore_pg_db_unlock_committed (db, conn);
  if (!ok)
    return NULL;
  for (int i = 0; i < PQntuples (res); i++)
    {
      g_autofree char *name = g_strndup (PQgetvalue (res, i, 0), PQgetlength (res, i, 0));

      /* Only names qstore could have written. */
      if (g_utf8_validate (name, -1, NULL))
        g_ptr_array_add (names, g_steal_pointer (&name));
    }
  PQclear (res);
  g_ptr_array_add (names, NULL);
  return (char **) g_ptr_array_free (g_steal_pointer (&names), FALSE);
}
