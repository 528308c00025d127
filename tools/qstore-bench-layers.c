/* qstore-bench-layers.c: the bench-baseline operations on qstore's table
 * and SQL layers
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

/* The table and SQL layers reach below the public API: the table's value
 * entry points and the database's SQLite connection. */
#include "qstore-database-private.h"
#include "qstore-table-private.h"

#include "qstore-bench-private.h"
#include "qstore-bench-workload.h"

/* The table layer */

static void
row_values (guint64      id,
            char        *name,
            QStoreValue *values)
{
  values[0].type = QSTORE_VALUE_INTEGER;
  values[0].integer = (gint64) id;
  values[1].type = QSTORE_VALUE_TEXT;
  values[1].bytes.data = (const guint8 *) name;
  values[1].bytes.len = row_name (id, name);
  values[2].type = QSTORE_VALUE_INTEGER;
  values[2].integer = row_score (id);
}

static gboolean
table_insert (Bench    *bench,
              guint64   id,
              GError  **error)
{
  char name[NAME_MAX_LEN];
  QStoreValue values[N_COLUMNS];

  row_values (id, name, values);
  return qstore_table_insert_values (bench->table, values, QSTORE_CONFLICT_ABORT,
                                     NULL, NULL, error);
}

/* One transaction of the coordinator, inserting @n rows of @ids (or
 * @first, @first + 1… when @ids is NULL). */
gboolean
bench_table_insert_transaction (Bench          *bench,
                                const guint64  *ids,
                                guint64         first,
                                guint64         n,
                                guint64        *checksum,
                                GError        **error)
{
  qstore_coordinator_begin (bench->coordinator);
  for (guint64 i = 0; i < n; i++)
    {
      guint64 id = ids != NULL ? ids[i] : first + i;

      if (!table_insert (bench, id, error))
        {
          qstore_coordinator_rollback (bench->coordinator);
          return FALSE;
        }
      *checksum += (guint64) row_score (id);
    }
  return qstore_coordinator_commit (bench->coordinator, error);
}

/* Fetches the row stored under the data key @key, decodes it and adds
 * what reading it touches. @id is the row's id, for messages, or -1 when
 * the key came from the index. */
static gboolean
table_read_key (Bench         *bench,
                const guint8  *key,
                gsize          key_len,
                gint64         id,
                guint64       *sum,
                GError       **error)
{
  GError *local_error = NULL;
  QStoreValue values[N_COLUMNS];
  const guint8 *data;
  gsize len;

  /* Borrowed, as raw LMDB reads: inside the phase's read transaction the
   * row is LMDB's own memory. */
  if (!qstore_table_lookup_row (bench->table, key, key_len, &data, &len, &local_error))
    {
      if (local_error != NULL)
        g_propagate_error (error, local_error);
      else if (id >= 0)
        bench_row_missing ((guint64) id, error);
      else
        g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_CORRUPT,
                     "An entry of index bench_score names a row that bench.bench "
                     "does not hold");
      return FALSE;
    }

  if (!qstore_table_decode_row (bench->table, data, len, values, NULL, error))
    return FALSE;
  if (values[1].type != QSTORE_VALUE_TEXT || values[2].type != QSTORE_VALUE_INTEGER)
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_CORRUPT,
                   "Row %" G_GINT64_FORMAT " of bench.bench reads back with a name or "
                   "score of the wrong type", values[0].integer);
      return FALSE;
    }
  *sum += row_touch (values[1].bytes.data, values[1].bytes.len, values[2].integer);
  return TRUE;
}

gboolean
bench_table_read (Bench    *bench,
                  guint64   id,
                  guint64  *sum,
                  GError  **error)
{
  QStoreValue key = { .type = QSTORE_VALUE_INTEGER };

  key.integer = (gint64) id;
  if (!qstore_table_encode_key_prefix (bench->table, -1, &key, 1, bench->key_buf, error))
    return FALSE;
  return table_read_key (bench, bench->key_buf->data, bench->key_buf->len, (gint64) id,
                         sum, error);
}

/* Index entries of scores @lo to @hi, each row fetched by its data key
 * (the entry's value). */
gboolean
bench_table_scan (Bench    *bench,
                  guint64   lo,
                  guint64   hi,
                  guint64  *visited,
                  guint64  *row_sum,
                  GError  **error)
{
  g_autoptr(QStoreBounds) bounds = qstore_bounds_new ();
  GError *local_error = NULL;
  QStoreValue score = { .type = QSTORE_VALUE_INTEGER };

  score.integer = (gint64) lo;
  if (!qstore_table_encode_key_prefix (bench->table, (int) bench->score_index, &score, 1,
                                       bench->bound_buf, error))
    return FALSE;
  qstore_bounds_set_gte (bounds, bench->bound_buf->data, bench->bound_buf->len);
  score.integer = (gint64) hi + 1;
  if (!qstore_table_encode_key_prefix (bench->table, (int) bench->score_index, &score, 1,
                                       bench->bound_buf, error))
    return FALSE;
  qstore_bounds_set_lt (bounds, bench->bound_buf->data, bench->bound_buf->len);

  if (bench->scan_iter != NULL)
    {
      if (!qstore_iter_seek (bench->scan_iter, bounds, error))
        return FALSE;
    }
  else if (!(bench->scan_iter = qstore_table_scan_index (bench->table, bench->score_index,
                                                         bounds, error)))
    return FALSE;
  while (qstore_iter_next (bench->scan_iter, &local_error))
    {
      gsize key_len;
      const guint8 *key = qstore_iter_peek_value (bench->scan_iter, &key_len);

      if (!table_read_key (bench, key, key_len, -1, row_sum, error))
        return FALSE;
      (*visited)++;
    }
  if (local_error != NULL)
    {
      g_propagate_error (error, local_error);
      return FALSE;
    }
  return TRUE;
}

/* The SQL layer */

static gboolean
sql_error (Bench         *bench,
           sqlite3_stmt  *stmt,
           GError       **error)
{
  g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_FAILED, "“%s” failed: %s",
               sqlite3_sql (stmt), sqlite3_errmsg (bench->db));
  sqlite3_reset (stmt);
  return FALSE;
}

gboolean
bench_sql_prepare (Bench          *bench,
                   const char     *sql,
                   sqlite3_stmt  **stmt,
                   GError        **error)
{
  if (sqlite3_prepare_v2 (bench->db, sql, -1, stmt, NULL) == SQLITE_OK)
    return TRUE;
  g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_FAILED, "Cannot prepare “%s”: %s",
               sql, sqlite3_errmsg (bench->db));
  return FALSE;
}

gboolean
bench_sql_prepare_reads (Bench   *bench,
                         GError **error)
{
  return bench_sql_prepare (bench, "SELECT name, score FROM bench WHERE id=?",
                            &bench->st_get, error) &&
         bench_sql_prepare (bench, "SELECT id FROM bench WHERE score BETWEEN ? AND ?",
                            &bench->st_index, error);
}

/* Steps a statement that returns no rows, then resets it. */
static gboolean
sql_run (Bench         *bench,
         sqlite3_stmt  *stmt,
         GError       **error)
{
  if (sqlite3_step (stmt) != SQLITE_DONE)
    return sql_error (bench, stmt, error);
  sqlite3_reset (stmt);
  return TRUE;
}

static gboolean
sql_insert (Bench    *bench,
            guint64   id,
            GError  **error)
{
  char name[NAME_MAX_LEN];
  gsize len = row_name (id, name);

  sqlite3_bind_int64 (bench->st_insert, 1, (sqlite3_int64) id);
  sqlite3_bind_text (bench->st_insert, 2, name, (int) len, SQLITE_STATIC);
  sqlite3_bind_int64 (bench->st_insert, 3, row_score (id));
  return sql_run (bench, bench->st_insert, error);
}

gboolean
bench_sql_read (Bench    *bench,
                guint64   id,
                guint64  *sum,
                GError  **error)
{
  sqlite3_stmt *stmt = bench->st_get;
  const unsigned char *name;
  int rc;

  sqlite3_bind_int64 (stmt, 1, (sqlite3_int64) id);
  rc = sqlite3_step (stmt);
  if (rc == SQLITE_DONE)
    {
      sqlite3_reset (stmt);
      return bench_row_missing (id, error);
    }
  if (rc != SQLITE_ROW)
    return sql_error (bench, stmt, error);
  name = sqlite3_column_text (stmt, 0);
  *sum += row_touch (name, (gsize) sqlite3_column_bytes (stmt, 0),
                     sqlite3_column_int64 (stmt, 1));
  sqlite3_reset (stmt);
  return TRUE;
}

/* Two steps, as raw_sqlite does: ids from the index query, then the get
 * statement per id. */
gboolean
bench_sql_scan (Bench    *bench,
                guint64   lo,
                guint64   hi,
                guint64  *visited,
                guint64  *row_sum,
                GError  **error)
{
  sqlite3_stmt *stmt = bench->st_index;
  int rc;

  sqlite3_bind_int64 (stmt, 1, (sqlite3_int64) lo);
  sqlite3_bind_int64 (stmt, 2, (sqlite3_int64) hi);
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      if (!bench_sql_read (bench, (guint64) sqlite3_column_int64 (stmt, 0), row_sum, error))
        {
          sqlite3_reset (stmt);
          return FALSE;
        }
      (*visited)++;
    }
  if (rc != SQLITE_DONE)
    return sql_error (bench, stmt, error);
  sqlite3_reset (stmt);
  return TRUE;
}

/* One BEGIN IMMEDIATE … COMMIT inserting @n rows. */
gboolean
bench_sql_insert_transaction (Bench          *bench,
                              const guint64  *ids,
                              guint64         first,
                              guint64         n,
                              guint64        *checksum,
                              GError        **error)
{
  if (!qstore_database_exec (bench->database, "BEGIN IMMEDIATE", error))
    return FALSE;
  for (guint64 i = 0; i < n; i++)
    {
      guint64 id = ids != NULL ? ids[i] : first + i;

      if (!sql_insert (bench, id, error))
        return FALSE;
      *checksum += (guint64) row_score (id);
    }
  return qstore_database_exec (bench->database, "COMMIT", error);
}
