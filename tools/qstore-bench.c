/* qstore-bench.c: throughput of a provider on the bench-baseline workload
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Runs the workload the raw LMDB and raw SQLite baselines run (the same
 * rows, keys, values, random draws and checksums) through one layer of
 * qstore, and prints the same JSON lines, so ratios can be taken in one run:
 *
 * - table `bench(id, name, score)`, name = "name-%08d" of the id,
 *   score = id * 7919 mod 100000;
 * - one splitmix64 stream seeded with 42, drawn in this order only: the
 *   Fisher-Yates shuffle of the ids, N ids for the get phase, 1000 range
 *   starts for the scan phase.
 *
 * The layers:
 *
 * - kv: the provider's stores, as raw_lmdb lays them out. Data store
 *   `bench.bench`, key the 8-byte big-endian id, value u32 LE name length |
 *   name | i64 LE score; index store `bench.bench_idx_score`, key 8-byte BE
 *   score | 8-byte BE id, empty value. One atomic batch per transaction.
 * - table: a QStoreDatabase table, `CREATE TABLE bench(id INTEGER PRIMARY
 *   KEY, name TEXT, score INTEGER)` and `CREATE INDEX bench_score ON
 *   bench(score)`, driven through QStoreTable and the coordinator: rows
 *   go in as values (encoded, constraint-checked, indexed by the table),
 *   reads decode stored rows.
 * - sql: the same table through SQL on the database's own connection, with
  *   the statements raw_sqlite prepares, prepared once and reused; its
 *   BEGIN IMMEDIATE / BEGIN / COMMIT go through qstore_database_exec(), as
 *   an application's do, so that a read transaction reads one snapshot as
 *   SQLite's does (a statement stepped on the connection directly does not
 *   tell qstore that a transaction began).
 * - sql-floor: the sql layer's get and scan on a virtual table that
 *   stores nothing (qstore-bench-floor.c): SQLite's own share of them.
 * - unsafe-window: a workload of its own, --rows events (see
 *   qstore-bench-window.c): guarded applies against plain upserts of the
 *   same rows, and composed-page reads.
 * - replica: a workload of its own (see qstore-bench-replica.c): live
 *   queries' latency and cost to the writer, and a --rows transaction.
 *
 * With --change-log N the table and SQL layers keep a change log (the
 * engine's name ends in +log). The follow_lag phase, never part of the
 * default, measures how long `qstore changes --follow` takes to print a
 * commit (qstore-bench-follow.c).
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <locale.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <sqlite3.h>
#include <qstore.h>

/* The table and SQL layers reach below the public API: the table's value
 * entry points and the database's SQLite connection. */
#include "qstore-bench-follow.h"
#include "qstore-database-private.h"
#include "qstore-table-private.h"

#include "qstore-bench-mixed.h"
#include "qstore-bench-replica.h"
#include "qstore-bench-window.h"
#include "qstore-bench-private.h"
#include "qstore-bench-workload.h"

static const char * const layer_names[] = { "kv", "table", "sql", "sql-floor" };

static const struct {
  const char *name;
  Phase       phase;
} phase_names[] = {
  { "load", PHASE_LOAD },
  { "get", PHASE_GET },
  { "scan", PHASE_SCAN },
  { "small_txn", PHASE_SMALL_TXN },
  { "size", PHASE_SIZE },
  { "follow_lag", PHASE_FOLLOW_LAG },
};

/* The workload */

static void
put_be64 (guint8  *p,
          guint64  v)
{
  for (int i = 7; i >= 0; i--)
    {
      p[i] = (guint8) (v & 0xff);
      v >>= 8;
    }
}

static guint64
get_be64 (const guint8 *p)
{
  guint64 v = 0;

  for (int i = 0; i < 8; i++)
    v = (v << 8) | p[i];
  return v;
}

static gsize
encode_row (guint64  id,
            guint8  *out)
{
  char name[NAME_MAX_LEN];
  guint32 len = (guint32) row_name (id, name);
  guint64 score = (guint64) row_score (id);

  for (int i = 0; i < 4; i++)
    out[i] = (guint8) (len >> (8 * i));
  memcpy (out + 4, name, len);
  for (int i = 0; i < 8; i++)
    out[4 + len + i] = (guint8) (score >> (8 * i));
  return 4 + len + 8;
}

static void
encode_index_key (guint64  id,
                  guint8  *out)
{
  put_be64 (out, (guint64) row_score (id));
  put_be64 (out + 8, id);
}

/* Decodes a stored row and returns what reading it touches. */
static gboolean
touch_row (const guint8  *value,
           gsize          len,
           guint64        id,
           guint64       *sum,
           GError       **error)
{
  guint32 name_len;
  guint64 score = 0;

  if (len < 12)
    goto corrupt;
  name_len = (guint32) value[0] | (guint32) value[1] << 8 |
             (guint32) value[2] << 16 | (guint32) value[3] << 24;
  if ((gsize) name_len + 12 != len)
    goto corrupt;
  for (int i = 7; i >= 0; i--)
    score = (score << 8) | value[4 + name_len + i];
  *sum += row_touch (value + 4, name_len, (gint64) score);
  return TRUE;

corrupt:
  g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_CORRUPT,
               "Row %" G_GUINT64_FORMAT " of bench.bench reads back as %" G_GSIZE_FORMAT
               " bytes that do not decode", id, len);
  return FALSE;
}

/* Expected checksums, computed from the row formulas without the store */

static guint64
expected_score_sum (guint64 first,
                    guint64 count)
{
  guint64 sum = 0;

  for (guint64 id = first; id < first + count; id++)
    sum += (guint64) row_score (id);
  return sum;
}

static guint64
expected_touch (guint64 id)
{
  char name[NAME_MAX_LEN];
  gsize len = row_name (id, name);

  return row_touch ((const guint8 *) name, len, row_score (id));
}

/* Timing and output */

/* The line is assembled here rather than by JsonGenerator because the
 * baseline's tools read numbers in fixed notation, and json-glib writes
 * doubles with 17 significant digits, in exponent form when small. Strings
 * are still encoded by json-glib. @extra is more `"member":value` pairs. */
static void
emit_phase (Bench      *bench,
            const char *phase,
            guint64     ops,
            Stamp       t0,
            Stamp       t1,
            guint64     checksum,
            const char *extra)
{
  g_autoptr(GString) line = g_string_new ("{\"engine\":");
  double secs = seconds_between (t0.wall, t1.wall);
  double cpu = seconds_between (t0.cpu, t1.cpu);
  char buf[G_ASCII_DTOSTR_BUF_SIZE];

  append_json_string (line, bench->engine);
  g_string_append (line, ",\"phase\":");
  append_json_string (line, phase);
  g_string_append_printf (line, ",\"rows\":%" G_GUINT64_FORMAT, bench->rows);
  g_string_append_printf (line, ",\"seconds\":%s",
                          g_ascii_formatd (buf, sizeof buf, "%.6f", secs));
  g_string_append_printf (line, ",\"ops_per_sec\":%s",
                          g_ascii_formatd (buf, sizeof buf, "%.1f",
                                           secs > 0 ? (double) ops / secs : 0.0));
  g_string_append_printf (line, ",\"checksum\":%" G_GUINT64_FORMAT, checksum);
  g_string_append_printf (line, ",\"ops\":%" G_GUINT64_FORMAT, ops);
  g_string_append_printf (line, ",\"cpu_seconds\":%s",
                          g_ascii_formatd (buf, sizeof buf, "%.6f", cpu));
  g_string_append_printf (line, ",\"run\":%d", bench->run);
  g_string_append (line, ",\"version\":");
  append_json_string (line, "qstore " PACKAGE_VERSION);
  g_string_append_printf (line, ",\"peak_rss_kib\":%ld", peak_rss_kib ());
  if (extra != NULL && extra[0] != '\0')
    g_string_append_printf (line, ",%s", extra);
  g_string_append (line, "}\n");

  fputs (line->str, stdout);
  fflush (stdout);
}

static gboolean
check_checksum (const char  *phase,
                const char  *what,
                guint64      got,
                guint64      expected,
                GError     **error)
{
  if (got == expected)
    return TRUE;
  g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_CORRUPT,
               "The %s phase read back a %s of %" G_GUINT64_FORMAT " where the workload "
               "defines %" G_GUINT64_FORMAT ": the provider returned wrong data",
               phase, what, got, expected);
  return FALSE;
}

gboolean
bench_row_missing (guint64   id,
                   GError  **error)
{
  g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_NOT_FOUND,
               "Row %" G_GUINT64_FORMAT " is missing from bench.bench", id);
  return FALSE;
}

/* Phases */

static gboolean
load_kv (Bench     *bench,
         guint64   *ids,
         guint64   *checksum,
         GError   **error)
{
  g_autoptr(QStoreAtomicBatch) atomic = NULL;
  g_autoptr(QStoreBatch) rows = NULL;
  g_autoptr(QStoreBatch) index = NULL;

  if (bench->atomic)
    atomic = qstore_provider_begin_atomic_batch (bench->provider);
  else
    {
      rows = qstore_kv_new_batch (bench->data);
      index = qstore_kv_new_batch (bench->index);
    }
  for (guint64 i = 0; i < bench->rows; i++)
    {
      guint8 key[8], value[ROW_MAX_LEN], index_key[16];
      gsize value_len;

      put_be64 (key, ids[i]);
      value_len = encode_row (ids[i], value);
      encode_index_key (ids[i], index_key);
      if (atomic != NULL)
        {
          qstore_atomic_batch_put (atomic, bench->data, key, 8, value, value_len);
          qstore_atomic_batch_put (atomic, bench->index, index_key, 16, NULL, 0);
        }
      else
        {
          qstore_batch_put (rows, key, 8, value, value_len);
          qstore_batch_put (index, index_key, 16, NULL, 0);
        }
      *checksum += (guint64) row_score (ids[i]);
    }
  if (atomic != NULL)
    return qstore_atomic_batch_commit (atomic, QSTORE_WRITE_SYNC, error);
  return qstore_batch_write (rows, QSTORE_WRITE_SYNC, error) &&
         qstore_batch_write (index, QSTORE_WRITE_SYNC, error);
}

static gboolean
phase_load (Bench     *bench,
            guint64   *ids,
            gboolean   report,
            GError   **error)
{
  guint64 checksum = 0;
  gboolean ok = FALSE;
  Stamp t0, t1;

  t0 = stamp_now ();
  switch (bench->layer)
    {
    case LAYER_KV:
      ok = load_kv (bench, ids, &checksum, error);
      break;
    case LAYER_TABLE:
      ok = bench_table_insert_transaction (bench, ids, 0, bench->rows, &checksum, error);
      break;
    case LAYER_SQL:
      ok = bench_sql_insert_transaction (bench, ids, 0, bench->rows, &checksum, error);
      break;
    case LAYER_SQL_FLOOR:
      g_assert_not_reached ();
    }
  if (!ok)
    return FALSE;
  t1 = stamp_now ();

  if (!check_checksum ("load", "sum of scores", checksum,
                       expected_score_sum (0, bench->rows), error))
    return FALSE;
  if (report)
    emit_phase (bench, "load", bench->rows, t0, t1, checksum,
                bench->atomic ? "\"atomic\":true" : "\"atomic\":false");
  return TRUE;
}

/* Reads one row, through the snapshot when the provider has them. */
static gboolean
read_row_kv (Bench           *bench,
             QStoreSnapshot  *snapshot,
             guint64          id,
             guint64         *sum,
             GError         **error)
{
  g_autoptr(GBytes) bytes = NULL;
  const guint8 *value = NULL;
  gsize value_len = 0;
  gboolean found;
  guint8 key[8];

  put_be64 (key, id);
  if (snapshot != NULL)
    found = qstore_snapshot_lookup (snapshot, bench->data, key, 8, &value, &value_len, error);
  else if ((bytes = qstore_kv_get (bench->data, key, 8, error)) != NULL)
    {
      value = g_bytes_get_data (bytes, &value_len);
      found = TRUE;
    }
  else
    found = FALSE;

  if (!found)
    {
      /* Absent without an error: the load lost it. */
      if (error == NULL || *error == NULL)
        bench_row_missing (id, error);
      return FALSE;
    }
  return touch_row (value, value_len, id, sum, error);
}

static gboolean
read_row (Bench           *bench,
          QStoreSnapshot  *snapshot,
          guint64          id,
          guint64         *sum,
          GError         **error)
{
  switch (bench->layer)
    {
    case LAYER_KV:
      return read_row_kv (bench, snapshot, id, sum, error);
    case LAYER_TABLE:
      return bench_table_read (bench, id, sum, error);
    case LAYER_SQL:
    case LAYER_SQL_FLOOR:
      return bench_sql_read (bench, id, sum, error);
    }
  g_assert_not_reached ();
}

static gboolean
floor_exec (Bench       *bench,
            const char  *sql,
            GError     **error)
{
  if (sqlite3_exec (bench->db, sql, NULL, NULL, NULL) == SQLITE_OK)
    return TRUE;
  g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_FAILED, "%s: %s", sql,
               sqlite3_errmsg (bench->db));
  return FALSE;
}

/* A read transaction, as raw LMDB's one read transaction per phase and
 * SQLite's BEGIN: the provider's snapshot at the key/value layer, the
 * coordinator's read transaction at the table layer, BEGIN at the SQL
 * layer. */
static gboolean
begin_read (Bench            *bench,
            QStoreSnapshot  **snapshot,
            GError          **error)
{
  *snapshot = NULL;
  switch (bench->layer)
    {
    case LAYER_KV:
      if (bench->snapshots &&
          !(*snapshot = qstore_provider_begin_snapshot (bench->provider, error)))
        return FALSE;
      return TRUE;
    case LAYER_TABLE:
      return !bench->snapshots || qstore_coordinator_begin_read (bench->coordinator, error);
    case LAYER_SQL:
      return qstore_database_exec (bench->database, "BEGIN", error);
    case LAYER_SQL_FLOOR:
      return floor_exec (bench, "BEGIN", error);
    }
  g_assert_not_reached ();
}

static gboolean
end_read (Bench            *bench,
          QStoreSnapshot  **snapshot,
          GError          **error)
{
  g_clear_object (snapshot);
  if (bench->layer == LAYER_SQL)
    return qstore_database_exec (bench->database, "COMMIT", error);
  if (bench->layer == LAYER_SQL_FLOOR)
    return floor_exec (bench, "COMMIT", error);
  if (bench->layer == LAYER_TABLE && bench->snapshots)
    qstore_coordinator_end_read (bench->coordinator);
  return TRUE;
}

static const char *
snapshot_extra (Bench *bench)
{
  return bench->layer != LAYER_SQL && bench->snapshots
         ? "\"snapshot\":true" : "\"snapshot\":false";
}

static gboolean
phase_get (Bench   *bench,
           GError **error)
{
  g_autoptr(QStoreSnapshot) snapshot = NULL;
  guint64 rng_before = bench->rng;
  guint64 checksum = 0;
  guint64 expected = 0;
  Stamp t0, t1;

  t0 = stamp_now ();
  if (!begin_read (bench, &snapshot, error))
    return FALSE;
  for (guint64 i = 0; i < bench->rows; i++)
    if (!read_row (bench, snapshot, qstore_bench_rng_next (&bench->rng) % bench->rows,
                   &checksum, error))
      return FALSE;
  if (!end_read (bench, &snapshot, error))
    return FALSE;
  t1 = stamp_now ();

  /* Replay the same draws against the row formulas. */
  for (guint64 i = 0; i < bench->rows; i++)
    expected += expected_touch (qstore_bench_rng_next (&rng_before) % bench->rows);
  g_assert (rng_before == bench->rng);
  if (!check_checksum ("get", "checksum", checksum, expected, error))
    return FALSE;

  emit_phase (bench, "get", bench->rows, t0, t1, checksum, snapshot_extra (bench));
  return TRUE;
}

/* Index entries of scores @lo to @hi, each row fetched by its id. */
static gboolean
scan_kv (Bench           *bench,
         QStoreSnapshot  *snapshot,
         guint64          lo,
         guint64          hi,
         guint64         *visited,
         guint64         *row_sum,
         GError         **error)
{
  g_autoptr(QStoreBounds) bounds = qstore_bounds_new ();
  GError *local_error = NULL;
  guint8 from[16], to[16];

  put_be64 (from, lo);
  put_be64 (from + 8, 0);
  put_be64 (to, hi + 1);
  put_be64 (to + 8, 0);
  qstore_bounds_set_gte (bounds, from, 16);
  qstore_bounds_set_lt (bounds, to, 16);

  if (bench->scan_iter != NULL)
    {
      if (!qstore_iter_seek (bench->scan_iter, bounds, error))
        return FALSE;
    }
  else if (snapshot != NULL)
    bench->scan_iter = qstore_snapshot_iterate (snapshot, bench->index, bounds, error);
  else
    bench->scan_iter = qstore_kv_iterate (bench->index, bounds, error);
  if (bench->scan_iter == NULL)
    return FALSE;
  while (qstore_iter_next (bench->scan_iter, &local_error))
    {
      gsize key_len;
      const guint8 *key = qstore_iter_peek_key (bench->scan_iter, &key_len);

      if (key_len != 16)
        {
          g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_CORRUPT,
                       "An entry of bench.bench_idx_score has a key of %" G_GSIZE_FORMAT
                       " bytes instead of 16", key_len);
          return FALSE;
        }
      if (!read_row_kv (bench, snapshot, get_be64 (key + 8), row_sum, error))
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

static gboolean
phase_scan (Bench   *bench,
            GError **error)
{
  g_autoptr(QStoreSnapshot) snapshot = NULL;
  g_autofree char *extra = NULL;
  guint64 rng_before = bench->rng;
  guint64 visited = 0, row_sum = 0;
  guint64 expected_visited = 0, expected_sum = 0;
  guint64 inverse;
  Stamp t0, t1;

  t0 = stamp_now ();
  if (!begin_read (bench, &snapshot, error))
    return FALSE;
  for (int s = 0; s < SCAN_COUNT; s++)
    {
      guint64 lo = qstore_bench_rng_next (&bench->rng) % SCAN_LO_MOD;
      guint64 hi = lo + SCAN_WIDTH - 1;
      gboolean ok = FALSE;

      switch (bench->layer)
        {
        case LAYER_KV:
          ok = scan_kv (bench, snapshot, lo, hi, &visited, &row_sum, error);
          break;
        case LAYER_TABLE:
          ok = bench_table_scan (bench, lo, hi, &visited, &row_sum, error);
          break;
        case LAYER_SQL:
        case LAYER_SQL_FLOOR:
          ok = bench_sql_scan (bench, lo, hi, &visited, &row_sum, error);
          break;
        }
      if (!ok)
        return FALSE;
    }
  g_clear_object (&bench->scan_iter);
  if (!end_read (bench, &snapshot, error))
    return FALSE;
  t1 = stamp_now ();

  /* Replay the draws: score s is held by the ids s * inverse mod 100000,
   * plus multiples of 100000, below the row count. */
  inverse = score_factor_inverse ();
  for (int s = 0; s < SCAN_COUNT; s++)
    {
      guint64 lo = qstore_bench_rng_next (&rng_before) % SCAN_LO_MOD;

      for (guint64 score = lo; score < lo + SCAN_WIDTH; score++)
        for (guint64 id = (score * inverse) % SCORE_MOD; id < bench->rows; id += SCORE_MOD)
          {
            expected_sum += expected_touch (id);
            expected_visited++;
          }
    }
  g_assert (rng_before == bench->rng);
  if (!check_checksum ("scan", "count of rows visited", visited, expected_visited, error) ||
      !check_checksum ("scan", "row sum", row_sum, expected_sum, error))
    return FALSE;

  extra = g_strdup_printf ("\"rows_visited\":%" G_GUINT64_FORMAT
                           ",\"row_sum\":%" G_GUINT64_FORMAT ",%s",
                           visited, row_sum, snapshot_extra (bench));
  emit_phase (bench, "scan", SCAN_COUNT, t0, t1, visited, extra);
  return TRUE;
}

/* One row and its index entry in one durable write. */
static gboolean
kv_insert_transaction (Bench    *bench,
                       guint64   id,
                       guint64  *checksum,
                       GError  **error)
{
  guint8 key[8], value[ROW_MAX_LEN], index_key[16];
  gsize value_len;

  put_be64 (key, id);
  value_len = encode_row (id, value);
  encode_index_key (id, index_key);
  if (bench->atomic)
    {
      g_autoptr(QStoreAtomicBatch) batch = qstore_provider_begin_atomic_batch (bench->provider);

      qstore_atomic_batch_put (batch, bench->data, key, 8, value, value_len);
      qstore_atomic_batch_put (batch, bench->index, index_key, 16, NULL, 0);
      if (!qstore_atomic_batch_commit (batch, QSTORE_WRITE_SYNC, error))
        return FALSE;
    }
  else if (!qstore_kv_put (bench->data, key, 8, value, value_len, QSTORE_WRITE_SYNC, error) ||
           !qstore_kv_put (bench->index, index_key, 16, NULL, 0, QSTORE_WRITE_SYNC, error))
    return FALSE;
  *checksum += (guint64) row_score (id);
  return TRUE;
}

static gboolean
phase_small_txn (Bench   *bench,
                 GError **error)
{
  guint64 checksum = 0;
  Stamp t0, t1;

  t0 = stamp_now ();
  for (guint64 i = 0; i < bench->small_txns; i++)
    {
      guint64 id = bench->rows + i;
      gboolean ok = FALSE;

      switch (bench->layer)
        {
        case LAYER_KV:
          ok = kv_insert_transaction (bench, id, &checksum, error);
          break;
        case LAYER_TABLE:
          ok = bench_table_insert_transaction (bench, NULL, id, 1, &checksum, error);
          break;
        case LAYER_SQL:
          ok = bench_sql_insert_transaction (bench, NULL, id, 1, &checksum, error);
          break;
        case LAYER_SQL_FLOOR:
          g_assert_not_reached ();
        }
      if (!ok)
        return FALSE;
    }
  t1 = stamp_now ();

  if (!check_checksum ("small_txn", "sum of scores", checksum,
                       expected_score_sum (bench->rows, bench->small_txns), error))
    return FALSE;
  emit_phase (bench, "small_txn", bench->small_txns, t0, t1, checksum,
              bench->atomic ? "\"atomic\":true" : "\"atomic\":false");
  return TRUE;
}

static gboolean
phase_follow_lag (Bench   *bench,
                  GError **error)
{
  char median[G_ASCII_DTOSTR_BUF_SIZE], p99[G_ASCII_DTOSTR_BUF_SIZE];
  g_autofree char *extra = NULL;
  double median_ms, p99_ms;
  Stamp t0, t1;

  if (bench->database == NULL || bench->location == NULL)
    {
      g_set_error_literal (error, QSTORE_ERROR, QSTORE_ERROR_UNSUPPORTED,
                           "The follow_lag phase follows a store from another process: use "
                           "--layer table or sql and a persistent provider");
      return FALSE;
    }
  t0 = stamp_now ();
  if (!qstore_bench_follow_lag (bench->database, bench->uri, bench->qstore, FOLLOW_COMMITS,
                                &median_ms, &p99_ms, error))
    return FALSE;
  t1 = stamp_now ();
  extra = g_strdup_printf ("\"median_ms\":%s,\"p99_ms\":%s",
                           g_ascii_formatd (median, sizeof median, "%.3f", median_ms),
                           g_ascii_formatd (p99, sizeof p99, "%.3f", p99_ms));
  emit_phase (bench, "follow_lag", FOLLOW_COMMITS, t0, t1, 0, extra);
  return TRUE;
}

/* The location on disk: a directory (its regular files count) or a file
 * (with SQLite's companions). Nothing for a location that is not on disk. */
static const char * const file_companions[] = { "", "-wal", "-shm", "-journal" };

static void
location_usage (const char *location,
                guint64    *apparent,
                guint64    *allocated)
{
  GStatBuf st;

  *apparent = *allocated = 0;
  if (location == NULL || g_stat (location, &st) != 0)
    return;
  if (S_ISDIR (st.st_mode))
    {
      g_autoptr(GDir) dir = g_dir_open (location, 0, NULL);
      const char *name;

      while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
        {
          g_autofree char *path = g_build_filename (location, name, NULL);

          if (g_stat (path, &st) == 0 && S_ISREG (st.st_mode))
            {
              *apparent += (guint64) st.st_size;
              *allocated += (guint64) st.st_blocks * 512;
            }
        }
      return;
    }
  for (guint i = 0; i < G_N_ELEMENTS (file_companions); i++)
    {
      g_autofree char *path = g_strconcat (location, file_companions[i], NULL);

      if (g_stat (path, &st) == 0 && S_ISREG (st.st_mode))
        {
          *apparent += (guint64) st.st_size;
          *allocated += (guint64) st.st_blocks * 512;
        }
    }
}

static void
location_remove (const char *location)
{
  GStatBuf st;

  if (location == NULL || g_stat (location, &st) != 0)
    return;
  if (S_ISDIR (st.st_mode))
    {
      g_autoptr(GDir) dir = g_dir_open (location, 0, NULL);
      const char *name;

      while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
        {
          g_autofree char *path = g_build_filename (location, name, NULL);

          g_remove (path);
        }
      g_rmdir (location);
      return;
    }
  for (guint i = 0; i < G_N_ELEMENTS (file_companions); i++)
    {
      g_autofree char *path = g_strconcat (location, file_companions[i], NULL);

      g_remove (path);
    }
}

static void
phase_size (Bench *bench)
{
  g_autofree char *extra = NULL;
  guint64 apparent, allocated;
  Stamp t;

  location_usage (bench->location, &apparent, &allocated);
  extra = g_strdup_printf ("\"bytes\":%" G_GUINT64_FORMAT ",\"allocated_bytes\":%" G_GUINT64_FORMAT,
                           apparent, allocated);
  t = stamp_now ();
  emit_phase (bench, "size", 0, t, t, 0, extra);
}

/* Options */

static gboolean
parse_phases (const char  *text,
              Phase       *phases,
              GError     **error)
{
  g_auto(GStrv) names = g_strsplit (text, ",", -1);

  *phases = 0;
  for (guint i = 0; names[i] != NULL; i++)
    {
      gboolean known = FALSE;

      for (guint j = 0; j < G_N_ELEMENTS (phase_names); j++)
        if (g_str_equal (g_strstrip (names[i]), phase_names[j].name))
          {
            *phases |= phase_names[j].phase;
            known = TRUE;
          }
      if (!known)
        {
          g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                       "Unknown phase “%s” in --phases: the phases are "
                       "load, get, scan, small_txn, size and follow_lag", names[i]);
          return FALSE;
        }
    }
  return TRUE;
}

static int
usage_error (const char *message)
{
  g_printerr ("qstore-bench: %s\nRun “qstore-bench --help” for more information.\n", message);
  return 2;
}

/* The table and SQL layers: a database with the bench table (untimed). */
static gboolean
open_database (Bench            *bench,
               QStoreOpenFlags   flags,
               GError          **error)
{
  g_autofree char *escaped = NULL;
  QStoreTableSchema *schema;
  const char *index_name;
  const char *ddl;

  /* The SQL layer runs raw_sqlite's DDL, its index name included; the
   * table layer names its index bench_score. Only the index store's name
   * differs. */
  if (bench->layer == LAYER_SQL)
    {
      index_name = "bench_idx_score";
      ddl = "CREATE TABLE bench(id INTEGER PRIMARY KEY, name TEXT, score INTEGER);\n"
            "CREATE INDEX bench_idx_score ON bench(score);";
    }
  else
    {
      index_name = "bench_score";
      ddl = "CREATE TABLE bench(id INTEGER PRIMARY KEY, name TEXT, score INTEGER);\n"
            "CREATE INDEX bench_score ON bench(score);";
    }

  if (bench->location != NULL)
    escaped = g_uri_escape_string (bench->location, "/", FALSE);
  bench->uri = g_strdup_printf ("%s:%s", bench->provider_name, escaped != NULL ? escaped : "");
  if (!(bench->database = qstore_database_open (bench->uri, flags, error)) ||
      !qstore_database_exec (bench->database, ddl, error))
    return FALSE;
  if (bench->change_log > 0)
    {
      g_autofree char *pragma = g_strdup_printf ("PRAGMA qstore.change_log = %" G_GINT64_FORMAT,
                                                 bench->change_log);

      if (!qstore_database_exec (bench->database, pragma, error))
        return FALSE;
    }

  bench->provider = g_object_ref (qstore_database_get_provider (bench->database));
  bench->coordinator = g_object_ref (qstore_database_get_coordinator (bench->database));
  bench->table = qstore_database_get_table (bench->database, "main", "bench");
  if (bench->table == NULL)
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_NOT_FOUND,
                   "The database has no table “bench” after its CREATE TABLE ran");
      return FALSE;
    }
  g_object_ref (bench->table);

  schema = qstore_table_get_table_schema (bench->table);
  for (bench->score_index = 0; bench->score_index < schema->indexes->len; bench->score_index++)
    {
      QStoreIndexSchema *index = g_ptr_array_index (schema->indexes, bench->score_index);

      if (g_ascii_strcasecmp (index->name, index_name) == 0)
        break;
    }
  if (bench->score_index == schema->indexes->len)
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_NOT_FOUND,
                   "Table “bench” has no index “%s” after its CREATE INDEX ran", index_name);
      return FALSE;
    }
  bench->key_buf = g_byte_array_sized_new (16);
  bench->bound_buf = g_byte_array_sized_new (16);

  if (bench->layer != LAYER_SQL)
    return TRUE;
  bench->db = qstore_database_get_sqlite (bench->database);
  return bench_sql_prepare (bench, "INSERT INTO bench(id, name, score) VALUES(?, ?, ?)",
                            &bench->st_insert, error) &&
         bench_sql_prepare_reads (bench, error);
}

/* Lets go of every store, statement and handle; the database is closed
 * cleanly when @clean, else only released (after a failure). */
static gboolean
bench_close (Bench     *bench,
             gboolean   clean,
             GError   **error)
{
  gboolean ok = TRUE;

  g_clear_object (&bench->scan_iter);
  g_clear_pointer (&bench->st_insert, sqlite3_finalize);
  g_clear_pointer (&bench->st_get, sqlite3_finalize);
  g_clear_pointer (&bench->st_index, sqlite3_finalize);
  /* Only the floor's connection is the bench's own. */
  if (bench->layer == LAYER_SQL_FLOOR)
    sqlite3_close (bench->db);
  bench->db = NULL;
  g_clear_pointer (&bench->key_buf, g_byte_array_unref);
  g_clear_pointer (&bench->bound_buf, g_byte_array_unref);
  g_clear_object (&bench->table);
  g_clear_object (&bench->coordinator);
  g_clear_object (&bench->data);
  g_clear_object (&bench->index);
  if (bench->database != NULL)
    {
      if (clean)
        ok = qstore_database_close (bench->database, error);
      g_clear_object (&bench->database);
    }
  if (bench->provider != NULL)
    qstore_provider_close_all (bench->provider);
  g_clear_object (&bench->provider);
  return ok;
}

static int
fail (Bench        *bench,
      const GError *error,
      gboolean      keep)
{
  g_printerr ("qstore-bench: %s\n", error->message);
  bench_close (bench, FALSE, NULL);
  if (!keep)
    location_remove (bench->location);
  return 1;
}

static void
bench_clear (Bench *bench)
{
  bench_close (bench, FALSE, NULL);
  g_clear_pointer (&bench->provider_name, g_free);
  g_clear_pointer (&bench->engine, g_free);
  g_clear_pointer (&bench->location, g_free);
  g_clear_pointer (&bench->uri, g_free);
  g_clear_pointer (&bench->qstore, g_free);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Bench, bench_clear)

static void
window_emit (gpointer                data,
             const char             *phase,
             guint64                 ops,
             const BenchWindowTimes *times,
             guint64                 checksum,
             const char             *extra)
{
  Stamp t0 = { times->wall[0], times->cpu[0] };
  Stamp t1 = { times->wall[1], times->cpu[1] };

  emit_phase (data, phase, ops, t0, t1, checksum, extra);
}

int
main (int    argc,
      char **argv)
{
  g_autoptr(GOptionContext) context = NULL;
  g_autoptr(GError) error = NULL;
  g_auto(Bench) bench = { NULL };
  g_autofree char *provider_name = NULL;
  g_autofree char *layer = NULL;
  g_autofree char *phases_text = NULL;
  g_autofree char *classes_text = NULL;
  g_auto(GStrv) classes = NULL;
  g_autofree char *workload = NULL;
  g_autofree char *dir = NULL;
  g_autofree guint64 *ids = NULL;
  gint64 rows = -1;
  gint64 small_txns = SMALL_TXN_COUNT;
  gint64 write_out_step = 0;
  int run = 1;
  int rounds = -1;
  gboolean keep = FALSE;
  gboolean no_atomic = FALSE;
  gboolean window_layer, replica_layer;
  QStoreCapabilities caps;
  const GOptionEntry entries[] = {
    { "provider", 'p', 0, G_OPTION_ARG_STRING, &provider_name,
      "The provider to measure: memory, lmdb, sqlite…", "NAME" },
    { "layer", 0, 0, G_OPTION_ARG_STRING, &layer,
      "The layer the workload goes through: kv (the default), table, sql, "
      "sql-floor (get and scan on a virtual table that stores nothing; no provider), "
      "unsafe-window or replica", "LAYER" },
    { "workload", 'w', 0, G_OPTION_ARG_STRING, &workload,
      "baseline (the default: the bench-baseline phases) or mixed (everyday SQL against "
      "native SQLite, per query class; with --layer sql)", "NAME" },
    { "rows", 'n', 0, G_OPTION_ARG_INT64, &rows,
      "Rows to load, from 1 to 99000000 (default 1000000); events for unsafe-window "
      "(default 10000); rows of the large transaction for replica (default 1000000)", "N" },
    { "small-txns", 0, 0, G_OPTION_ARG_INT64, &small_txns,
      "Transactions of the small_txn phase (default 10000, as bench-baseline runs)", "N" },
    { "phases", 0, 0, G_OPTION_ARG_STRING, &phases_text,
      "Comma-separated phases to run and report (default: all of "
      "load,get,scan,small_txn,size)", "LIST" },
    { "classes", 0, 0, G_OPTION_ARG_STRING, &classes_text,
      "Comma-separated query classes of the mixed workload to run (default: all)", "LIST" },
    { "rounds", 0, 0, G_OPTION_ARG_INT, &rounds,
      "Rounds of the mixed workload, each on both engines; the median is printed "
      "(default 5)", "N" },
    { "dir", 'd', 0, G_OPTION_ARG_FILENAME, &dir,
      "Where the store is created (default ./tmp)", "DIR" },
    { "run", 0, 0, G_OPTION_ARG_INT, &run,
      "Run number copied into the output (default 1)", "K" },
    { "keep", 0, 0, G_OPTION_ARG_NONE, &keep,
      "Do not delete the store at exit", NULL },
    { "no-atomic", 0, 0, G_OPTION_ARG_NONE, &no_atomic,
      "Withhold the atomic batch, as ?atomic=0 does: writes go store by store", NULL },
    { "change-log", 0, 0, G_OPTION_ARG_INT64, &bench.change_log,
      "Keep a change log of N transactions (table and sql layers)", "N" },
    { "write-out-step", 0, 0, G_OPTION_ARG_INT64, &write_out_step,
      "Bytes of a write transaction the replica's writer keeps in memory (default 67108864; "
      "with --layer replica)", "BYTES" },
    { "qstore", 0, 0, G_OPTION_ARG_FILENAME, &bench.qstore,
      "The qstore command follow_lag runs (default: the one beside qstore-bench)", "PATH" },
    G_OPTION_ENTRY_NULL
  };

  setlocale (LC_ALL, "");
  g_set_prgname ("qstore-bench");

  context = g_option_context_new ("");
  g_option_context_set_summary (context,
                                "Measure a provider on the workload of bench-baseline (raw LMDB and "
                                "raw SQLite) and print one JSON line per phase.");
  g_option_context_set_description (context,
                                    "The store goes to DIR/qstore-PROVIDER-PID (.db for sqlite) and is "
                                    "deleted at exit unless --keep is given.\n"
                                    "Phases left out still draw their random numbers, so the others see "
                                    "the same ids. When get or scan runs without load, the rows are "
                                    "loaded first without being reported.\n"
                                    "Every checksum is checked against the workload's formulas: a "
                                    "mismatch is an error (exit status 1).");
  g_option_context_add_main_entries (context, entries, NULL);
  if (!g_option_context_parse (context, &argc, &argv, &error))
    return usage_error (error->message);
  if (argc > 1)
    {
      g_autofree char *message = g_strdup_printf ("Unexpected argument “%s”", argv[1]);

      return usage_error (message);
    }
  bench.layer = LAYER_KV;
  window_layer = g_strcmp0 (layer, LAYER_UNSAFE_WINDOW_NAME) == 0;
  replica_layer = g_strcmp0 (layer, LAYER_REPLICA_NAME) == 0;
  if (layer != NULL && !window_layer && !replica_layer)
    {
      guint i;

      for (i = 0; i < G_N_ELEMENTS (layer_names); i++)
        if (g_str_equal (layer, layer_names[i]))
          break;
      if (i == G_N_ELEMENTS (layer_names))
        {
          g_autofree char *message =
            g_strdup_printf ("Layer “%s” cannot be measured: use --layer kv, table, sql, "
                             "sql-floor, unsafe-window or replica", layer);

          return usage_error (message);
        }
      bench.layer = (Layer) i;
    }
  if (bench.layer == LAYER_SQL_FLOOR && provider_name != NULL)
    return usage_error ("--layer sql-floor reads no provider: leave out --provider");
  if (bench.layer != LAYER_SQL_FLOOR && provider_name == NULL)
    return usage_error ("Give the provider to measure with --provider (memory, lmdb, sqlite…)");
  if (rows == -1)
    rows = window_layer ? 10000 : 1000000;
  if (workload != NULL && !g_str_equal (workload, "baseline") && !g_str_equal (workload, "mixed"))
    return usage_error ("Unknown --workload: use baseline or mixed");
  if (workload != NULL && g_str_equal (workload, "mixed") && bench.layer != LAYER_SQL)
    return usage_error ("--workload mixed runs SQL: add --layer sql");
  if (classes_text != NULL && (workload == NULL || !g_str_equal (workload, "mixed")))
    return usage_error ("--classes chooses query classes of --workload mixed");
  if (classes_text != NULL)
    classes = g_strsplit (classes_text, ",", -1);
  if (rounds != -1 && (workload == NULL || !g_str_equal (workload, "mixed")))
    return usage_error ("--rounds repeats --workload mixed");
  if (rounds == -1)
    rounds = 5;
  if (rounds < 1 || rounds > 1000)
    return usage_error ("--rounds must be from 1 to 1000");
  if (rows < 1 || rows > MAX_ROWS)
    return usage_error ("--rows must be from 1 to 99000000");
  if (small_txns < 1 || small_txns > MAX_ROWS)
    return usage_error ("--small-txns must be from 1 to 99000000");
  if (write_out_step != 0 && !replica_layer)
    return usage_error ("--write-out-step sets the replica's writer: add --layer replica");
  if (write_out_step < 0)
    return usage_error ("--write-out-step takes a number of bytes");
  bench.phases = PHASE_LOAD | PHASE_GET | PHASE_SCAN | PHASE_SMALL_TXN | PHASE_SIZE;
  if (bench.layer == LAYER_SQL_FLOOR && phases_text == NULL)
    bench.phases = PHASE_GET | PHASE_SCAN;
  if (phases_text != NULL && !parse_phases (phases_text, &bench.phases, &error))
    return usage_error (error->message);
  if (bench.layer == LAYER_SQL_FLOOR && (bench.phases & ~(PHASE_GET | PHASE_SCAN)) != 0)
    return usage_error ("--layer sql-floor stores nothing: its phases are get and scan");

  bench.provider_name = g_steal_pointer (&provider_name);
  if (bench.change_log < 0 ||
      (bench.change_log > 0 && bench.layer != LAYER_TABLE && bench.layer != LAYER_SQL))
    return usage_error ("--change-log takes a number of transactions, with --layer table or sql");
  if (bench.layer == LAYER_SQL_FLOOR)
    bench.engine = g_strdup (layer_names[bench.layer]);
  else
    bench.engine = g_strdup_printf ("qstore-%s-%s%s", bench.provider_name,
                                    window_layer ? LAYER_UNSAFE_WINDOW_NAME
                                    : replica_layer ? LAYER_REPLICA_NAME
                                    : layer_names[bench.layer],
                                    bench.change_log > 0 ? "+log" : "");
  if (bench.qstore == NULL)
    {
      g_autofree char *here = g_path_get_dirname (argv[0]);

      bench.qstore = g_build_filename (here, "qstore", NULL);
    }
  bench.rows = (guint64) rows;
  bench.small_txns = (guint64) small_txns;
  bench.run = run;
  bench.rng = BENCH_SEED;

  /* Untimed: the location, the stores, the shuffled order. */
  if (bench.layer == LAYER_SQL_FLOOR)
    caps = 0;
  else if (!qstore_lookup_provider_capabilities (bench.provider_name, &caps, &error))
    return fail (&bench, error, keep);
  if (caps & QSTORE_CAPABILITY_PERSISTENT)
    {
      if (dir == NULL)
        dir = g_strdup ("tmp");
      if (g_mkdir_with_parents (dir, 0755) != 0)
        {
          int saved_errno = errno;

          g_set_error (&error, QSTORE_ERROR, QSTORE_ERROR_IO,
                       "Cannot create the directory “%s”: %s", dir, g_strerror (saved_errno));
          return fail (&bench, error, keep);
        }
      bench.location = g_strdup_printf ("%s/qstore-%s-%d%s", dir, bench.provider_name,
                                        (int) getpid (),
                                        g_str_equal (bench.provider_name, "sqlite") ? ".db" : "");
    }
  /* postgres: a server's database, in its default schema (see README). */
  if (g_strcmp0 (bench.provider_name, "postgres") == 0)
    {
      g_free (bench.location);
      bench.location = g_strdup (g_getenv ("QSTORE_BENCH_POSTGRES"));
    }

  if (window_layer || replica_layer)
    {
      g_autofree char *escaped = NULL;
      g_autofree char *uri = NULL;

      if (bench.location != NULL)
        escaped = g_uri_escape_string (bench.location, "/", FALSE);
      uri = g_strdup_printf ("%s:%s%s", bench.provider_name, escaped != NULL ? escaped : "",
                             no_atomic ? "?atomic=0" : "");
      if (!(window_layer ? bench_window_run (uri, bench.rows, window_emit, &bench, &error)
                         : bench_replica_run (uri, bench.rows, (guint64) write_out_step,
                                              window_emit, &bench, &error)))
        return fail (&bench, error, keep);
      if (!keep)
        location_remove (bench.location);
      return 0;
    }

  if (workload != NULL && g_str_equal (workload, "mixed"))
    {
      gboolean ok = qstore_bench_mixed (bench.provider_name, bench.location,
                                        (caps & QSTORE_CAPABILITY_PERSISTENT) != 0,
                                        (const char *const *) classes, rounds, run, &error);

      if (!keep)
        location_remove (bench.location);
      if (!ok)
        {
          g_printerr ("qstore-bench: %s\n", error->message);
          return 1;
        }
      return 0;
    }

  if (bench.layer == LAYER_KV)
    {
      bench.provider = qstore_provider_new (bench.provider_name, bench.location,
                                            no_atomic ? QSTORE_OPEN_NO_ATOMIC_BATCH
                                                      : QSTORE_OPEN_NONE,
                                            &error);
      if (bench.provider == NULL ||
          !(bench.data = qstore_provider_get_store (bench.provider, "bench", "bench", &error)) ||
          !(bench.index = qstore_provider_get_index_store (bench.provider, "bench", "bench",
                                                           "score", &error)))
        return fail (&bench, error, keep);
    }
  else if (bench.layer == LAYER_SQL_FLOOR)
    {
      if (!bench_floor_open (&bench, &error))
        return fail (&bench, error, keep);
    }
  else if (!open_database (&bench,
                           no_atomic ? QSTORE_OPEN_NO_ATOMIC_BATCH : QSTORE_OPEN_NONE,
                           &error))
    return fail (&bench, error, keep);
  if (bench.provider != NULL)
    {
      caps = qstore_provider_get_capabilities (bench.provider);
      bench.atomic = (caps & QSTORE_CAPABILITY_ATOMIC_BATCH) != 0;
      bench.snapshots = (caps & QSTORE_CAPABILITY_SNAPSHOTS) != 0;
    }
  ids = make_shuffled_ids (bench.rows, &bench.rng);

  /* The floor's rows are there without a load. */
  if ((bench.phases & (PHASE_LOAD | PHASE_GET | PHASE_SCAN)) && bench.layer != LAYER_SQL_FLOOR)
    if (!phase_load (&bench, ids, (bench.phases & PHASE_LOAD) != 0, &error))
      return fail (&bench, error, keep);
  g_clear_pointer (&ids, g_free);

  if (bench.phases & PHASE_GET)
    {
      if (!phase_get (&bench, &error))
        return fail (&bench, error, keep);
    }
  else
    for (guint64 i = 0; i < bench.rows; i++)
      qstore_bench_rng_next (&bench.rng);

  if (bench.phases & PHASE_SCAN)
    {
      if (!phase_scan (&bench, &error))
        return fail (&bench, error, keep);
    }
  else
    for (guint i = 0; i < SCAN_COUNT; i++)
      qstore_bench_rng_next (&bench.rng);

  if (bench.phases & PHASE_SMALL_TXN)
    if (!phase_small_txn (&bench, &error))
      return fail (&bench, error, keep);

  if (bench.phases & PHASE_FOLLOW_LAG)
    if (!phase_follow_lag (&bench, &error))
      return fail (&bench, error, keep);

  /* Sizes are taken with everything closed, as the baseline does. */
  if (!bench_close (&bench, TRUE, &error))
    return fail (&bench, error, keep);
  if (bench.phases & PHASE_SIZE)
    phase_size (&bench);

  if (!keep)
    location_remove (bench.location);
  return 0;
}
