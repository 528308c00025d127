/* qstore-bench-postgres.c: the bench workload as plain SQL through libpq
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The baseline `qstore-bench --provider postgres` is compared with: the
 * statements raw_sqlite runs, on an equivalent table, on the server and
 * database QSTORE_BENCH_POSTGRES names (a libpq connection string), in
 * schema qstore_baseline (dropped first and at the end):
 *
 *   CREATE TABLE bench(id bigint PRIMARY KEY, name text, score bigint)
 *   CREATE INDEX bench_idx_score ON bench(score)
 *
 * Every statement is prepared once; parameters and results are binary;
 * commits are durable (synchronous_commit on). load is one transaction
 * whose INSERTs are pipelined (a sync every 1000 rows), as a libpq program
 * loading rows one statement at a time would; get, scan and small_txn
 * wait for each statement's answer, as raw_sqlite steps its statements.
 * scan is two-step: ids from the index, then each row by id. The JSON
 * lines are those of raw_sqlite, engine "postgres".
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "qstore-bench-workload.h"

#define SCHEMA "qstore_baseline"
#define PIPELINE_ROWS 1000

static PGconn *conn;
static guint64 rows = 100000;
static int run = 1;

static G_NORETURN void
die (const char *what,
     PGresult   *res)
{
  g_printerr ("qstore-bench-postgres: %s failed: %s", what,
              res != NULL ? PQresultErrorMessage (res) : PQerrorMessage (conn));
  exit (1);
}

static void
exec (const char *sql)
{
  PGresult *res = PQexec (conn, sql);

  if (PQresultStatus (res) != PGRES_COMMAND_OK && PQresultStatus (res) != PGRES_TUPLES_OK)
    die (sql, res);
  PQclear (res);
}

static void
prepare (const char *name,
         const char *sql)
{
  PGresult *res = PQprepare (conn, name, sql, 0, NULL);

  if (PQresultStatus (res) != PGRES_COMMAND_OK)
    die (sql, res);
  PQclear (res);
}

/* The parameters of one row, binary. */
typedef struct
{
  guint64 id_be;
  char    name[NAME_MAX_LEN];
  guint64 score_be;
  const char *values[3];
  int lengths[3];
  int formats[3];
} Row;

static void
row_params (Row     *row,
            guint64  id)
{
  row->id_be = GUINT64_TO_BE (id);
  row->score_be = GUINT64_TO_BE ((guint64) row_score (id));
  row->lengths[1] = (int) row_name (id, row->name);
  row->values[0] = (const char *) &row->id_be;
  row->values[1] = row->name;
  row->values[2] = (const char *) &row->score_be;
  row->lengths[0] = row->lengths[2] = 8;
  row->formats[0] = row->formats[1] = row->formats[2] = 1;
}

static guint64
get_be64 (const char *p)
{
  guint64 v;

  memcpy (&v, p, 8);
  return GUINT64_FROM_BE (v);
}

static guint64
get_row (guint64 id)
{
  guint64 id_be = GUINT64_TO_BE (id);
  const char *values[1] = { (const char *) &id_be };
  int lengths[1] = { 8 }, formats[1] = { 1 };
  PGresult *res = PQexecPrepared (conn, "get", 1, values, lengths, formats, 1);
  guint64 touch;

  if (PQresultStatus (res) != PGRES_TUPLES_OK || PQntuples (res) != 1)
    die ("get", res);
  touch = row_touch ((const guint8 *) PQgetvalue (res, 0, 0), PQgetlength (res, 0, 0),
                     (gint64) get_be64 (PQgetvalue (res, 0, 1)));
  PQclear (res);
  return touch;
}

static void
drain (guint n)
{
  for (guint i = 0; i < n; i++)
    {
      PGresult *res = PQgetResult (conn);

      if (PQresultStatus (res) != PGRES_COMMAND_OK)
        die ("insert", res);
      PQclear (res);
      PQclear (PQgetResult (conn));
    }
  {
    PGresult *res = PQgetResult (conn);

    if (PQresultStatus (res) != PGRES_PIPELINE_SYNC)
      die ("sync", res);
    PQclear (res);
  }
}

static void
emit (const char *phase,
      guint64     ops,
      Stamp       t0,
      Stamp       t1,
      guint64     checksum,
      const char *extra)
{
  double secs = seconds_between (t0.wall, t1.wall);
  char a[G_ASCII_DTOSTR_BUF_SIZE], b[G_ASCII_DTOSTR_BUF_SIZE], c[G_ASCII_DTOSTR_BUF_SIZE];

  printf ("{\"engine\":\"postgres\",\"phase\":\"%s\",\"rows\":%" G_GUINT64_FORMAT
          ",\"seconds\":%s,\"ops_per_sec\":%s,\"checksum\":%" G_GUINT64_FORMAT
          ",\"ops\":%" G_GUINT64_FORMAT ",\"cpu_seconds\":%s,\"run\":%d,\"version\":\"%d\""
          ",\"peak_rss_kib\":%ld%s%s}\n", phase, rows,
          g_ascii_formatd (a, sizeof a, "%.6f", secs),
          g_ascii_formatd (b, sizeof b, "%.1f", secs > 0 ? (double) ops / secs : 0.0),
          checksum, ops, g_ascii_formatd (c, sizeof c, "%.6f",
                                          seconds_between (t0.cpu, t1.cpu)),
          run, PQserverVersion (conn), peak_rss_kib (), extra ? "," : "", extra ? extra : "");
  fflush (stdout);
}

int
main (int    argc,
      char **argv)
{
  const char *conninfo = g_getenv ("QSTORE_BENCH_POSTGRES");
  guint64 rng = BENCH_SEED;
  g_autofree guint64 *order = NULL;
  guint64 cks = 0, visited = 0, rowsum = 0;
  Stamp t0, t1;
  Row row;

  g_autoptr(GOptionContext) context = NULL;
  g_autoptr(GError) error = NULL;
  gint64 n_rows = (gint64) rows;
  int small_txns = SMALL_TXN_COUNT;
  const GOptionEntry entries[] = {
    { "rows", 'n', 0, G_OPTION_ARG_INT64, &n_rows, "Rows to load (default 100000)", "N" },
    { "small-txns", 0, 0, G_OPTION_ARG_INT, &small_txns,
      "Transactions of the small_txn phase (default 10000; 0 leaves the phase out)", "N" },
    { "run", 0, 0, G_OPTION_ARG_INT, &run, "Run number copied into the output (default 1)", "K" },
    { NULL }
  };

  context = g_option_context_new (NULL);
  g_option_context_set_summary (context, "The bench workload as plain SQL through libpq, on the "
                                "server QSTORE_BENCH_POSTGRES names (a connection string).");
  g_option_context_add_main_entries (context, entries, NULL);
  if (!g_option_context_parse (context, &argc, &argv, &error))
    {
      g_printerr ("qstore-bench-postgres: %s\n", error->message);
      return 2;
    }
  if (conninfo == NULL || n_rows < 1 || n_rows > MAX_ROWS || small_txns < 0)
    {
      g_printerr ("qstore-bench-postgres: set QSTORE_BENCH_POSTGRES to a connection string, "
                  "--rows from 1 to %d and --small-txns to 0 or more\n", MAX_ROWS);
      return 2;
    }
  rows = (guint64) n_rows;
  conn = PQconnectdb (conninfo);
  if (PQstatus (conn) != CONNECTION_OK)
    die ("connecting", NULL);

  exec ("SET client_min_messages = warning");
  exec ("DROP SCHEMA IF EXISTS " SCHEMA " CASCADE");
  exec ("CREATE SCHEMA " SCHEMA);
  exec ("CREATE TABLE " SCHEMA ".bench(id bigint PRIMARY KEY, name text, score bigint)");
  exec ("CREATE INDEX bench_idx_score ON " SCHEMA ".bench(score)");
  exec ("SET synchronous_commit = on");
  prepare ("ins", "INSERT INTO " SCHEMA ".bench(id, name, score) VALUES ($1, $2, $3)");
  prepare ("get", "SELECT name, score FROM " SCHEMA ".bench WHERE id = $1");
  prepare ("idx", "SELECT id FROM " SCHEMA ".bench WHERE score BETWEEN $1 AND $2");
  order = make_shuffled_ids (rows, &rng);

  /* 1. load: every row in one durable transaction */
  t0 = stamp_now ();
  exec ("BEGIN");
  if (PQenterPipelineMode (conn) != 1)
    die ("entering pipeline mode", NULL);
  for (guint64 i = 0; i < rows; i++)
    {
      row_params (&row, order[i]);
      if (PQsendQueryPrepared (conn, "ins", 3, row.values, row.lengths, row.formats, 1) != 1)
        die ("insert", NULL);
      cks += (guint64) row_score (order[i]);
      if ((i + 1) % PIPELINE_ROWS == 0 || i + 1 == rows)
        {
          if (PQpipelineSync (conn) != 1)
            die ("sync", NULL);
          drain ((i % PIPELINE_ROWS) + 1);
        }
    }
  PQexitPipelineMode (conn);
  exec ("COMMIT");
  t1 = stamp_now ();
  emit ("load", rows, t0, t1, cks, NULL);

  /* 2. get: random point lookups in one read transaction */
  cks = 0;
  t0 = stamp_now ();
  exec ("BEGIN");
  for (guint64 i = 0; i < rows; i++)
    cks += get_row (rng_next (&rng) % rows);
  exec ("COMMIT");
  t1 = stamp_now ();
  emit ("get", rows, t0, t1, cks, NULL);

  /* 3. scan: ids of a score range through the index, then each row */
  t0 = stamp_now ();
  exec ("BEGIN");
  for (int s = 0; s < SCAN_COUNT; s++)
    {
      guint64 lo = rng_next (&rng) % SCAN_LO_MOD;
      guint64 lo_be = GUINT64_TO_BE (lo), hi_be = GUINT64_TO_BE (lo + SCAN_WIDTH - 1);
      const char *values[2] = { (const char *) &lo_be, (const char *) &hi_be };
      int lengths[2] = { 8, 8 }, formats[2] = { 1, 1 };
      PGresult *res = PQexecPrepared (conn, "idx", 2, values, lengths, formats, 1);

      if (PQresultStatus (res) != PGRES_TUPLES_OK)
        die ("scan", res);
      for (int r = 0; r < PQntuples (res); r++)
        {
          rowsum += get_row (get_be64 (PQgetvalue (res, r, 0)));
          visited++;
        }
      PQclear (res);
    }
  exec ("COMMIT");
  t1 = stamp_now ();
  {
    g_autofree char *extra = g_strdup_printf ("\"rows_visited\":%" G_GUINT64_FORMAT
                                              ",\"row_sum\":%" G_GUINT64_FORMAT,
                                              visited, rowsum);

    emit ("scan", SCAN_COUNT, t0, t1, visited, extra);
  }

  /* 4. small_txn: separate durable transactions of one row each */
  if (small_txns > 0)
    {
      cks = 0;
      t0 = stamp_now ();
      for (guint64 i = 0; i < (guint64) small_txns; i++)
        {
          PGresult *res;

          exec ("BEGIN");
          row_params (&row, rows + i);
          res = PQexecPrepared (conn, "ins", 3, row.values, row.lengths, row.formats, 1);
          if (PQresultStatus (res) != PGRES_COMMAND_OK)
            die ("insert", res);
          PQclear (res);
          exec ("COMMIT");
          cks += (guint64) row_score (rows + i);
        }
      t1 = stamp_now ();
      emit ("small_txn", (guint64) small_txns, t0, t1, cks, NULL);
    }

  exec ("DROP SCHEMA " SCHEMA " CASCADE");
  PQfinish (conn);
  return 0;
}
