/* qstore-bench-floor.c: the sql-floor layer, SQLite's own share of the
 * sql layer
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The sql layer runs raw_sqlite's statements on qstore's virtual tables,
 * so every read pays SQLite's machinery for a virtual table (a cursor
 * opened and closed per statement run, xFilter, xColumn per value, the
 * results copied) besides qstore's own work. This layer runs the same
 * statements, through the same functions, on a virtual table that stores
 * nothing: it computes each row from the workload's formulas. Its get and
 * scan phases are what SQL through virtual tables would cost on a provider
 * that took no time, so native SQLite's ops/s over its ops/s bounds the
 * ratio the sql layer can reach.
 */
#include "config.h"

#include <string.h>

#include "qstore-bench-private.h"
#include "qstore-bench-workload.h"

typedef struct
{
  sqlite3_vtab base;
  guint64      rows;
  guint64      inverse;
} Floor;

/* The plans: a point read by id, or a walk of the ids by score as the
 * index on score holds them. */
enum
{
  PLAN_ALL,
  PLAN_ID,
  PLAN_SCORES,
};

typedef struct
{
  sqlite3_vtab_cursor base;
  guint64             id;
  guint64             score;     /* PLAN_SCORES: the score being walked */
  guint64             last;      /* the last id (PLAN_ALL) or score (PLAN_SCORES) */
  int                 plan;
  gboolean            eof;
} FloorCursor;

static int
floor_connect (sqlite3             *db,
               void                *aux,
               int                  argc,
               const char * const  *argv,
               sqlite3_vtab       **out,
               char               **err)
{
  Floor *floor;
  int rc = sqlite3_declare_vtab (db, "CREATE TABLE x(id INTEGER PRIMARY KEY, name TEXT, "
                                     "score INTEGER)");

  if (rc != SQLITE_OK)
    return rc;
  floor = sqlite3_malloc (sizeof *floor);
  if (floor == NULL)
    return SQLITE_NOMEM;
  memset (floor, 0, sizeof *floor);
  floor->rows = *(const guint64 *) aux;
  floor->inverse = score_factor_inverse ();
  *out = &floor->base;
  return SQLITE_OK;
}

static int
floor_disconnect (sqlite3_vtab *vtab)
{
  sqlite3_free (vtab);
  return SQLITE_OK;
}

/* Takes what qstore's planner takes for these statements: an equality
 * on the id, else the bounds of a score range; both exact, so SQLite does
 * not check them again. */
static int
floor_best_index (sqlite3_vtab       *vtab,
                  sqlite3_index_info *info)
{
  int id_eq = -1, score_ge = -1, score_le = -1;

  for (int i = 0; i < info->nConstraint; i++)
    {
      const struct sqlite3_index_constraint *c = &info->aConstraint[i];

      if (!c->usable)
        continue;
      if (c->iColumn <= 0 && c->op == SQLITE_INDEX_CONSTRAINT_EQ)
        id_eq = i;
      else if (c->iColumn == 2 && c->op == SQLITE_INDEX_CONSTRAINT_GE)
        score_ge = i;
      else if (c->iColumn == 2 && c->op == SQLITE_INDEX_CONSTRAINT_LE)
        score_le = i;
    }

  if (id_eq >= 0)
    {
      info->aConstraintUsage[id_eq].argvIndex = 1;
      info->aConstraintUsage[id_eq].omit = 1;
      info->idxNum = PLAN_ID;
      info->idxFlags = SQLITE_INDEX_SCAN_UNIQUE;
      info->estimatedCost = 1;
      info->estimatedRows = 1;
    }
  else if (score_ge >= 0 && score_le >= 0)
    {
      info->aConstraintUsage[score_ge].argvIndex = 1;
      info->aConstraintUsage[score_ge].omit = 1;
      info->aConstraintUsage[score_le].argvIndex = 2;
      info->aConstraintUsage[score_le].omit = 1;
      info->idxNum = PLAN_SCORES;
      info->estimatedCost = 10;
      info->estimatedRows = 10;
    }
  else
    {
      info->idxNum = PLAN_ALL;
      info->estimatedCost = (double) ((Floor *) vtab)->rows;
      info->estimatedRows = (sqlite3_int64) ((Floor *) vtab)->rows;
    }
  return SQLITE_OK;
}

static int
floor_open (sqlite3_vtab         *vtab,
            sqlite3_vtab_cursor **out)
{
  FloorCursor *cursor = sqlite3_malloc (sizeof *cursor);

  if (cursor == NULL)
    return SQLITE_NOMEM;
  memset (cursor, 0, sizeof *cursor);
  *out = &cursor->base;
  return SQLITE_OK;
}

static int
floor_close (sqlite3_vtab_cursor *cursor)
{
  sqlite3_free (cursor);
  return SQLITE_OK;
}

/* The first id of a score from cursor->score on, as the index orders
 * them: by score, then id. */
static void
scores_settle (FloorCursor *cursor)
{
  const Floor *floor = (const Floor *) cursor->base.pVtab;

  for (; cursor->score <= cursor->last; cursor->score++)
    {
      cursor->id = (cursor->score * floor->inverse) % SCORE_MOD;
      if (cursor->id < floor->rows)
        return;
    }
  cursor->eof = TRUE;
}

static int
floor_filter (sqlite3_vtab_cursor  *base,
              int                   plan,
              const char           *plan_text,
              int                   argc,
              sqlite3_value       **argv)
{
  FloorCursor *cursor = (FloorCursor *) base;
  const Floor *floor = (const Floor *) base->pVtab;

  cursor->plan = plan;
  cursor->eof = FALSE;
  switch (plan)
    {
    case PLAN_ID:
      {
        sqlite3_int64 id = sqlite3_value_int64 (argv[0]);

        cursor->id = (guint64) id;
        cursor->eof = sqlite3_value_type (argv[0]) != SQLITE_INTEGER || id < 0 ||
                      (guint64) id >= floor->rows;
      }
      break;

    case PLAN_SCORES:
      {
        sqlite3_int64 lo = sqlite3_value_int64 (argv[0]);
        sqlite3_int64 hi = sqlite3_value_int64 (argv[1]);

        cursor->score = (guint64) MAX (lo, 0);
        cursor->last = (guint64) CLAMP (hi, -1, SCORE_MOD - 1);
        if (hi < 0 || lo > hi)
          cursor->eof = TRUE;
        else
          scores_settle (cursor);
      }
      break;

    default:
      cursor->id = 0;
      cursor->last = floor->rows - 1;
      break;
    }
  return SQLITE_OK;
}

static int
floor_next (sqlite3_vtab_cursor *base)
{
  FloorCursor *cursor = (FloorCursor *) base;
  const Floor *floor = (const Floor *) base->pVtab;

  switch (cursor->plan)
    {
    case PLAN_ID:
      cursor->eof = TRUE;
      break;

    case PLAN_SCORES:
      cursor->id += SCORE_MOD;
      if (cursor->id >= floor->rows)
        {
          cursor->score++;
          scores_settle (cursor);
        }
      break;

    default:
      cursor->eof = cursor->id++ >= cursor->last;
      break;
    }
  return SQLITE_OK;
}

static int
floor_eof (sqlite3_vtab_cursor *base)
{
  return ((FloorCursor *) base)->eof;
}

static int
floor_column (sqlite3_vtab_cursor *base,
              sqlite3_context     *context,
              int                  column)
{
  FloorCursor *cursor = (FloorCursor *) base;

  switch (column)
    {
    case 1:
      {
        char name[NAME_MAX_LEN];

        /* "name-%08d" without printf, which would cost more than the
         * rest of the read; measured by SQLite (-1), so that it knows
         * the text ends in a NUL, as qstore's values say. */
        memcpy (name, "name-", 5);
        for (guint64 i = 0, v = cursor->id; i < 8; i++, v /= 10)
          name[12 - i] = (char) ('0' + v % 10);
        name[13] = '\0';
        sqlite3_result_text (context, name, -1, SQLITE_TRANSIENT);
      }
      break;
    case 2:
      sqlite3_result_int64 (context, row_score (cursor->id));
      break;
    default:
      sqlite3_result_int64 (context, (sqlite3_int64) cursor->id);
      break;
    }
  return SQLITE_OK;
}

static int
floor_rowid (sqlite3_vtab_cursor *base,
             sqlite3_int64       *rowid)
{
  *rowid = (sqlite3_int64) ((FloorCursor *) base)->id;
  return SQLITE_OK;
}

static const sqlite3_module floor_module = {
  .iVersion = 1,
  .xCreate = floor_connect,
  .xConnect = floor_connect,
  .xBestIndex = floor_best_index,
  .xDisconnect = floor_disconnect,
  .xDestroy = floor_disconnect,
  .xOpen = floor_open,
  .xClose = floor_close,
  .xFilter = floor_filter,
  .xNext = floor_next,
  .xEof = floor_eof,
  .xColumn = floor_column,
  .xRowid = floor_rowid,
};

gboolean
bench_floor_open (Bench   *bench,
                  GError **error)
{
  /* A connection of its own, as qstore's: in memory, without a mutex. */
  int rc = sqlite3_open_v2 (":memory:", &bench->db,
                            SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                            NULL);

  if (rc == SQLITE_OK)
    rc = sqlite3_create_module (bench->db, "bench_floor", &floor_module, &bench->rows);
  if (rc == SQLITE_OK)
    rc = sqlite3_exec (bench->db, "CREATE VIRTUAL TABLE bench USING bench_floor", NULL, NULL,
                       NULL);
  if (rc != SQLITE_OK)
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_FAILED,
                   "Cannot set up the sql-floor table: %s",
                   bench->db != NULL ? sqlite3_errmsg (bench->db) : sqlite3_errstr (rc));
      return FALSE;
    }
  return bench_sql_prepare_reads (bench, error);
}
