/* qstore-bench-private.h: what qstore-bench's files share
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <sqlite3.h>
#include <qstore.h>

#define N_COLUMNS        3
#define FOLLOW_COMMITS   1000

typedef enum
{
  LAYER_KV,
  LAYER_TABLE,
  LAYER_SQL,
  LAYER_SQL_FLOOR,
} Layer;

/* Workloads of their own, run by qstore-bench-window.c and
 * qstore-bench-replica.c. */
#define LAYER_UNSAFE_WINDOW_NAME "unsafe-window"
#define LAYER_REPLICA_NAME "replica"


typedef enum
{
  PHASE_LOAD      = 1 << 0,
  PHASE_GET       = 1 << 1,
  PHASE_SCAN      = 1 << 2,
  PHASE_SMALL_TXN = 1 << 3,
  PHASE_SIZE      = 1 << 4,
  PHASE_FOLLOW_LAG = 1 << 5,
} Phase;

typedef struct
{
  char              *provider_name;
  char              *engine;
  Layer              layer;
  guint64            rows;
  int                run;
  Phase              phases;
  char              *location;
  char              *uri;
  guint64            small_txns;
  gint64             change_log;
  char              *qstore;

  QStoreProvider    *provider;
  gboolean           atomic;
  gboolean           snapshots;

  /* kv */
  QStoreKV          *data;
  QStoreKV          *index;

  /* table and sql */
  QStoreDatabase    *database;
  QStoreCoordinator *coordinator;
  QStoreTable       *table;
  guint              score_index;
  GByteArray        *key_buf;
  GByteArray        *bound_buf;

  /* sql: the statements of raw_sqlite, prepared once on the database's
   * connection, which the database owns: they are finalized before it
   * closes. sql-floor: the same statements on a connection of its own */
  sqlite3           *db;
  sqlite3_stmt      *st_insert;
  sqlite3_stmt      *st_get;
  sqlite3_stmt      *st_index;

  /* kv and table: the scan phase's one iterator, sought to each range,
   * as raw LMDB keeps one cursor */
  QStoreIter        *scan_iter;

  guint64            rng;
} Bench;

/* The table and SQL layers' operations (qstore-bench-layers.c): one
 * transaction inserting @n rows of @ids from @first, a read of row @id,
 * and a scan of the index from score @lo to @hi, each adding to the
 * phase's checksum. */
gboolean bench_table_insert_transaction (Bench          *bench,
                                         const guint64  *ids,
                                         guint64         first,
                                         guint64         n,
                                         guint64        *checksum,
                                         GError        **error);
gboolean bench_table_read               (Bench          *bench,
                                         guint64         id,
                                         guint64        *sum,
                                         GError        **error);
gboolean bench_table_scan               (Bench          *bench,
                                         guint64         lo,
                                         guint64         hi,
                                         guint64        *visited,
                                         guint64        *row_sum,
                                         GError        **error);
gboolean bench_sql_prepare              (Bench          *bench,
                                         const char     *sql,
                                         sqlite3_stmt  **stmt,
                                         GError        **error);
/* Prepares raw_sqlite's get and index statements (st_get, st_index). */
gboolean bench_sql_prepare_reads        (Bench          *bench,
                                         GError        **error);
gboolean bench_sql_insert_transaction   (Bench          *bench,
                                         const guint64  *ids,
                                         guint64         first,
                                         guint64         n,
                                         guint64        *checksum,
                                         GError        **error);
gboolean bench_sql_read                 (Bench          *bench,
                                         guint64         id,
                                         guint64        *sum,
                                         GError        **error);
gboolean bench_sql_scan                 (Bench          *bench,
                                         guint64         lo,
                                         guint64         hi,
                                         guint64        *visited,
                                         guint64        *row_sum,
                                         GError        **error);
gboolean bench_row_missing              (guint64         id,
                                         GError        **error);

/* The sql-floor layer (qstore-bench-floor.c): opens bench->db with the
 * table that stores nothing, and prepares the statements it reads with. */
gboolean bench_floor_open               (Bench          *bench,
                                         GError        **error);
