/* qstore-sqlite-schema.c: the tables of a store file, made, checked and
 * brought up to date when it is opened
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "qstore-i18n-private.h"
#include "qstore-sqlite-schema.h"

/* The layout: every store is a row of `stores`, every entry a row of `kv`
 * keyed by (store id, key). A WITHOUT ROWID table orders BLOB keys by
 * memcmp and then length, which is exactly qstore's key order, so range
 * scans are index walks. Renaming a store is one UPDATE.
 *
 * A WITHOUT ROWID table keeps whole rows in its b-tree, and SQLite reads
 * the whole of a row that does not fit in its page to compare it with a
 * key: a lookup passing one 10 MB value read 10 MB. So an entry too big to
 * stay in its page keeps its value in `big_values`, and `kv.value` holds
 * the id of that row, an INTEGER, where it otherwise holds the BLOB
 * (format 2; format 1 had no `big_values` and only BLOBs, so it reads as
 * format 2, and a writable open moves its big values). */
#define APPLICATION_ID 0x71537472 /* "qStr" */
#define FORMAT_VERSION 2

static const char create_stores_sql[] =
  "CREATE TABLE stores (id INTEGER PRIMARY KEY, name TEXT UNIQUE NOT NULL)";
static const char create_kv_sql[] =
  "CREATE TABLE kv (store_id INTEGER NOT NULL, key BLOB NOT NULL, "
  "value BLOB NOT NULL, PRIMARY KEY (store_id, key)) WITHOUT ROWID";
static const char create_big_values_sql[] =
  "CREATE TABLE big_values (id INTEGER PRIMARY KEY, value BLOB NOT NULL)";

/* What a row of kv costs beyond its key and value: the record header and
 * the store id, with room to spare. */
#define ROW_OVERHEAD 24

gboolean
qstore_sqlite_query_int (QStoreSqliteConn  *conn,
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
                     _("“%s” is not an SQLite database: give the sqlite provider a new "
                     "file name or a qstore store"), conn->path);
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
  return qstore_sqlite_query_int (conn, "PRAGMA application_id", &header->application_id, error) &&
         qstore_sqlite_query_int (conn, "PRAGMA user_version", &header->user_version, error) &&
         qstore_sqlite_query_int (conn, "SELECT count(*) FROM sqlite_master", &header->n_objects, error);
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
               _("“%s” is an SQLite database but not a qstore store: give the sqlite "
               "provider a new file name or a qstore store"), conn->path);
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
                 _("“%s” is marked as a qstore store but its table “%s” is not qstore's: "
                 "it was changed by another program; restore it from a backup"),
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
                   _("“%s” is marked as a qstore store but has no format version: "
                   "it was changed by another program; restore it from a backup"),
                   conn->path);
      return FALSE;
    }
  return check_table (conn, "stores", create_stores_sql, error) &&
         check_table (conn, "kv", create_kv_sql, error) &&
         (header->user_version < 2 ||
          check_table (conn, "big_values", create_big_values_sql, error));
}

/* Creates the schema in a new (empty) database. The writer lock keeps
 * other writers out; the immediate transaction would serialize them too,
 * and whoever came second would find the work done. */
static gboolean
create_schema (QStoreSqliteConn  *conn,
               Header            *header,
               GError           **error)
{
  g_autofree char *stamp = NULL;

  if (!qstore_sqlite_conn_exec (conn, "BEGIN IMMEDIATE", "creating the store", error))
    return FALSE;
  if (!read_header (conn, header, error))
    goto fail;
  if (header->application_id == APPLICATION_ID)
    return qstore_sqlite_conn_exec (conn, "COMMIT", "creating the store", error);
  if (!header_is_blank (header))
    {
      set_foreign_error (conn, error);
      goto fail;
    }

  stamp = g_strdup_printf ("PRAGMA application_id = %d; PRAGMA user_version = %d",
                           APPLICATION_ID, FORMAT_VERSION);
  if (!qstore_sqlite_conn_exec (conn, create_stores_sql, "creating the store", error) ||
      !qstore_sqlite_conn_exec (conn, create_kv_sql, "creating the store", error) ||
      !qstore_sqlite_conn_exec (conn, create_big_values_sql, "creating the store", error) ||
      !qstore_sqlite_conn_exec (conn, stamp, "creating the store", error) ||
      !qstore_sqlite_conn_exec (conn, "COMMIT", "creating the store", error))
    goto fail;
  header->application_id = APPLICATION_ID;
  header->user_version = FORMAT_VERSION;
  return TRUE;

fail:
  if (!sqlite3_get_autocommit (conn->db))
    sqlite3_exec (conn->db, "ROLLBACK", NULL, NULL, NULL);
  return FALSE;
}

gboolean
qstore_sqlite_schema_enable_wal (QStoreSqliteConn  *conn,
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
                 _("SQLite store “%s” cannot use write-ahead logging: "
                 "keep it on a local file system"), conn->path);
  sqlite3_finalize (stmt);
  return rc == SQLITE_OK && wal;
}

gsize
qstore_sqlite_schema_inline_max (QStoreSqliteConn *conn)
{
  gint64 page_size = 4096;

  /* SQLite keeps at most this much of a row in an index page (its
   * maxLocal): (usable size - 12) * 64 / 255 - 23. */
  qstore_sqlite_query_int (conn, "PRAGMA page_size", &page_size, NULL);
  return (gsize) ((page_size - 12) * 64 / 255 - 23 - ROW_OVERHEAD);
}

/* Format 1 to 2: the table for big values, and the big values moved to
 * it, in one transaction (the writer lock keeps everyone else out). */
static gboolean
migrate_1_to_2 (QStoreSqliteConn  *conn,
                GError           **error)
{
  g_autofree char *move = g_strdup_printf (
    "CREATE TEMP TABLE moving AS SELECT store_id, key FROM kv "
    "WHERE length (key) + length (value) > %" G_GSIZE_FORMAT ";"
    "INSERT INTO big_values (id, value) SELECT m.rowid, kv.value FROM temp.moving AS m "
    "JOIN kv ON kv.store_id = m.store_id AND kv.key = m.key;"
    "UPDATE kv SET value = (SELECT m.rowid FROM temp.moving AS m "
    "WHERE m.store_id = kv.store_id AND m.key = kv.key) "
    "WHERE (store_id, key) IN (SELECT store_id, key FROM temp.moving);"
    "DROP TABLE temp.moving;", qstore_sqlite_schema_inline_max (conn));
  g_autofree char *stamp = g_strdup_printf ("PRAGMA user_version = %d", FORMAT_VERSION);

  if (!qstore_sqlite_conn_exec (conn, "BEGIN IMMEDIATE", "moving big values", error))
    return FALSE;
  if (!qstore_sqlite_conn_exec (conn, create_big_values_sql, "moving big values", error) ||
      !qstore_sqlite_conn_exec (conn, move, "moving big values", error) ||
      !qstore_sqlite_conn_exec (conn, stamp, "moving big values", error) ||
      !qstore_sqlite_conn_exec (conn, "COMMIT", "moving big values", error))
    {
      if (!sqlite3_get_autocommit (conn->db))
        sqlite3_exec (conn->db, "ROLLBACK", NULL, NULL, NULL);
      return FALSE;
    }
  return TRUE;
}

gboolean
qstore_sqlite_schema_open (QStoreSqliteConn  *conn,
                           gboolean           read_only,
                           GError           **error)
{
  Header header = { 0 };

  if (!read_header (conn, &header, error))
    return FALSE;

  if (header.application_id != APPLICATION_ID)
    {
      if (!header_is_blank (&header))
        {
          set_foreign_error (conn, error);
          return FALSE;
        }
      if (read_only)
        {
          g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_NOT_FOUND,
                       _("“%s” holds no qstore store yet: open it read-write once to "
                       "create one"), conn->path);
          return FALSE;
        }
      if (!create_schema (conn, &header, error))
        return FALSE;
    }

  if (!check_qstore_file (conn, &header, error))
    return FALSE;
  if (header.user_version < FORMAT_VERSION && !read_only)
    return migrate_1_to_2 (conn, error);
  return TRUE;
}
