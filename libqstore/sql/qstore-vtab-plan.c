/* qstore-vtab-plan.c: how a statement walks a qstore table
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * SQLite asks the virtual table (xBestIndex) how it would answer the
 * constraints and ORDER BY of a loop; the answer, packed into idxNum, is a
 * walk of the primary key or of one index, with equalities on its first
 * parts and at most one range after them, forward or backward. At xFilter
 * the constraints' values become byte windows of that store.
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include "qstore-affinity-private.h"
#include "qstore-coordinator-private.h"
#include "qstore-error.h"
#include "qstore-i18n-private.h"
#include "qstore-vtab-plan-private.h"

const char *
qstore_collation_name (QStoreCollation collation)
{
  switch (collation)
    {
    case QSTORE_COLLATION_NOCASE:
      return "NOCASE";
    case QSTORE_COLLATION_RTRIM:
      return "RTRIM";
    case QSTORE_COLLATION_BINARY:
    default:
      return "BINARY";
    }
}

gboolean
qstore_vtab_keyed_by_rowid (QStoreTableSchema *schema)
{
  return schema->rowid_column >= 0 || schema->pk->len == 0;
}

QStoreColumn *
qstore_vtab_schema_column (QStoreTableSchema *schema,
               guint              column)
{
  return g_ptr_array_index (schema->columns, column);
}

/* Whether a key holds @part's value as the row does. Text under NOCASE
 * or RTRIM is kept in its normal form, and a column without affinity may
 * hold 1 and 1.0, which keys do not tell apart; with a numeric affinity
 * an integral real is stored as an integer anyway (see
 * qstore_affinity_apply()), and with REAL every number is a real. */
gboolean
qstore_vtab_part_is_exact (const Part *part)
{
  return part->is_rowid ||
         (part->collation == QSTORE_COLLATION_BINARY && part->affinity != QSTORE_AFFINITY_BLOB);
}

/* Plans */

/* Whether the keys of @parts hold every column in @used (SQLite's
 * colUsed: bit 63 stands for all columns from the 64th on). */
static gboolean
parts_cover (GArray         *parts,
             sqlite3_uint64  used)
{
  sqlite3_uint64 held = 0;

  for (guint k = 0; k < parts->len; k++)
    {
      const Part *part = &g_array_index (parts, Part, k);

      if (part->column >= 0 && part->column < 63 && qstore_vtab_part_is_exact (part))
        held |= (sqlite3_uint64) 1 << part->column;
    }
  return (used & ~held) == 0;
}

/* What reading one row of a walk costs: an index entry, then the row
 * unless the index covers the statement. */
static double
row_cost (int      index,
          gboolean covering)
{
  return index >= 0 && !covering ? 2.0 : 1.0;
}

static Part
rowid_part (QStoreTableSchema *schema)
{
  Part part = { schema->rowid_column, QSTORE_COLLATION_BINARY, FALSE,
                QSTORE_AFFINITY_INTEGER, TRUE };

  return part;
}

static Part
key_part (QStoreTableSchema   *schema,
          const QStoreKeyPart *key_part)
{
  Part part = { (int) key_part->column, key_part->collation, key_part->descending,
                qstore_vtab_schema_column (schema, key_part->column)->affinity, FALSE };

  if (schema->rowid_column >= 0 && (int) key_part->column == schema->rowid_column)
    part.is_rowid = TRUE;
  return part;
}

/* The key parts of @index (-1: the primary key), followed by those of the
 * data key each index entry ends with. *n_searchable gets how many of them
 * a seek may constrain. */
GArray *
qstore_vtab_plan_parts (QStoreTableSchema *schema,
            int                index,
            guint             *n_searchable)
{
  GArray *parts = g_array_new (FALSE, FALSE, sizeof (Part));
  Part part;

  if (index >= 0)
    {
      QStoreIndexSchema *index_schema = g_ptr_array_index (schema->indexes, index);

      for (guint i = 0; i < index_schema->parts->len; i++)
        {
          part = key_part (schema, &g_array_index (index_schema->parts, QStoreKeyPart, i));
          g_array_append_val (parts, part);
        }
      *n_searchable = parts->len;
    }

  if (qstore_vtab_keyed_by_rowid (schema))
    {
      part = rowid_part (schema);
      g_array_append_val (parts, part);
    }
  else
    {
      for (guint i = 0; i < schema->pk->len; i++)
        {
          part = key_part (schema, &g_array_index (schema->pk, QStoreKeyPart, i));
          g_array_append_val (parts, part);
        }
    }

  if (index < 0)
    *n_searchable = parts->len;
  return parts;
}

/* About log2 of @n_rows: what finding one key costs. */
static double
seek_cost (double n_rows)
{
  return g_bit_storage ((gulong) MIN (n_rows, (double) G_MAXULONG)) + 1.0;
}

static gboolean
constraint_on_part (QStoreTableSchema  *schema,
                    sqlite3_index_info *info,
                    int                 i,
                    const Part         *part)
{
  const struct sqlite3_index_constraint *constraint = &info->aConstraint[i];
  int column = constraint->iColumn;

  if (!constraint->usable)
    return FALSE;

  if (column < 0)
    {
      /* The rowid of a table keyed by its PRIMARY KEY is ephemeral. */
      if (!qstore_vtab_keyed_by_rowid (schema))
        return FALSE;
      return part->is_rowid;
    }
  if (column != part->column)
    return FALSE;

  /* Integers only: the collation cannot matter. */
  if (part->is_rowid)
    return TRUE;
  return g_ascii_strcasecmp (sqlite3_vtab_collation (info, i),
                             qstore_collation_name (part->collation)) == 0;
}

static gboolean
is_eq (unsigned char op)
{
  return op == SQLITE_INDEX_CONSTRAINT_EQ || op == SQLITE_INDEX_CONSTRAINT_IS;
}

/* Whether equality on @part with constraint @i surely selects one value,
 * so rows come out ordered by the following parts. */
static gboolean
eq_is_certain (sqlite3_index_info *info,
               int                 i,
               const Part         *part)
{
  sqlite3_value *rhs = NULL;

  if (part->affinity != QSTORE_AFFINITY_TEXT && part->affinity != QSTORE_AFFINITY_BLOB)
    return TRUE;
  if (sqlite3_vtab_rhs_value (info, i, &rhs) != SQLITE_OK || rhs == NULL)
    return FALSE;
  return sqlite3_value_type (rhs) == SQLITE_TEXT || sqlite3_value_type (rhs) == SQLITE_BLOB;
}

/* Whether SQLite compares @part's values always as their keys order
 * them. On a numeric column (or the rowid) it gives the other operand
 * numeric affinity, as qstore_affinity_for_compare() does, and text and
 * blobs sort above every number in keys as in SQLite. Any other column
 * compares as the other operand's affinity says, which a virtual table
 * cannot see. */
static gboolean
part_compares_as_keys (const Part *part)
{
  return part->is_rowid || part->affinity == QSTORE_AFFINITY_INTEGER ||
         part->affinity == QSTORE_AFFINITY_REAL || part->affinity == QSTORE_AFFINITY_NUMERIC;
}

/* SQLite re-checks a row a virtual table returns for `x IN (…)` by
 * comparing x with each value as if the value had no affinity, so for a
 * TEXT or BLOB column it may compare as text where an ordinary table
 * compares numerically (`textcol IN (SELECT realcol …)`). Left to SQLite,
 * the IN is evaluated as for an ordinary table. */
static gboolean
in_needs_sqlite (sqlite3_index_info *info,
                 int                 i,
                 const Part         *part)
{
  if (part->affinity != QSTORE_AFFINITY_TEXT && part->affinity != QSTORE_AFFINITY_BLOB)
    return FALSE;
  return sqlite3_vtab_in (info, i, -1) != 0;
}

typedef struct
{
  int       kind;
  int       index;
  guint     n_eq;
  int       eq[PLAN_MAX_PARTS];
  int       lower;
  int       lower_op;
  int       upper;
  int       upper_op;
  gboolean  unique;
  gboolean  ordered;
  gboolean  reverse;
  gboolean  covering;
  gboolean  exact;     /* SQLite need not check the constraints again */
  double    cost;
  double    rows;
  QStoreCollation collation;    /* PLAN_AUTO's comparison */
} Candidate;

/* Whether the rows of @parts, the first @n_fixed of them held to one
 * value, come out in the order SQLite asks for. */
static gboolean
order_matches (QStoreTableSchema  *schema,
               sqlite3_index_info *info,
               GArray             *parts,
               const gboolean     *fixed,
               guint               n_fixed,
               gboolean           *reverse)
{
  int direction = -1;
  guint j = 0;

  if (info->nOrderBy == 0)
    return FALSE;

  for (int t = 0; t < info->nOrderBy; t++)
    {
      int column = info->aOrderBy[t].iColumn;
      gboolean is_rowid_term = column < 0;
      gboolean on_fixed = FALSE;
      const Part *part;
      int this_direction;

      if (is_rowid_term && !qstore_vtab_keyed_by_rowid (schema))
        return FALSE;

      for (guint k = 0; k < n_fixed; k++)
        {
          const Part *p = &g_array_index (parts, Part, k);

          if (fixed[k] && (is_rowid_term ? p->is_rowid : p->column == column))
            on_fixed = TRUE;
        }
      if (on_fixed)
        continue;

      while (j < n_fixed && fixed[j])
        j++;
      if (j >= parts->len)
        return FALSE;

      part = &g_array_index (parts, Part, j);
      if (is_rowid_term ? !part->is_rowid : part->column != column)
        return FALSE;
      /* SQLite passes ORDER BY terms only under the column's own collation. */
      if (!part->is_rowid && part->collation != qstore_vtab_schema_column (schema, column)->collation)
        return FALSE;

      this_direction = (info->aOrderBy[t].desc != 0) != (part->descending != FALSE);
      if (direction >= 0 && direction != this_direction)
        return FALSE;
      direction = this_direction;
      j++;
    }

  *reverse = direction == 1;
  return TRUE;
}

#define EQ_ROWS 10.0

static gboolean
plan_candidate (QStoreTableSchema  *schema,
                sqlite3_index_info *info,
                int                 index,
                double              n_rows,
                Candidate          *out)
{
  g_autoptr(GArray) parts = NULL;
  gboolean fixed[PLAN_MAX_PARTS] = { FALSE };
  guint n_searchable;
  gboolean all_certain = TRUE;
  double selectivity = 1.0;
  double log_rows = seek_cost (n_rows);

  memset (out, 0, sizeof *out);
  out->kind = index >= 0 ? PLAN_INDEX : PLAN_PK;
  out->index = index;
  out->lower = out->upper = -1;

  parts = qstore_vtab_plan_parts (schema, index, &n_searchable);
  n_searchable = MIN (n_searchable, PLAN_MAX_PARTS);

  for (guint p = 0; p < n_searchable; p++)
    {
      const Part *part = &g_array_index (parts, Part, p);
      int found = -1;

      for (int i = 0; i < info->nConstraint && found < 0; i++)
        if (is_eq (info->aConstraint[i].op) && constraint_on_part (schema, info, i, part) &&
            !in_needs_sqlite (info, i, part))
          found = i;
      if (found < 0)
        break;

      out->eq[out->n_eq] = found;
      /* Equal under NOCASE or RTRIM is not equal under BINARY: only a
       * BINARY equality holds a column to one value for any ORDER BY. */
      fixed[out->n_eq] = eq_is_certain (info, found, part) &&
                         info->aConstraint[found].op == SQLITE_INDEX_CONSTRAINT_EQ &&
                         part->collation == QSTORE_COLLATION_BINARY;
      if (!fixed[out->n_eq])
        all_certain = FALSE;
      out->n_eq++;
      selectivity *= 0.1;
    }

  if (out->n_eq < n_searchable)
    {
      const Part *part = &g_array_index (parts, Part, out->n_eq);

      for (int i = 0; i < info->nConstraint; i++)
        {
          unsigned char op = info->aConstraint[i].op;

          if (!constraint_on_part (schema, info, i, part))
            continue;
          if (out->lower < 0 &&
              (op == SQLITE_INDEX_CONSTRAINT_GT || op == SQLITE_INDEX_CONSTRAINT_GE))
            {
              out->lower = i;
              out->lower_op = op == SQLITE_INDEX_CONSTRAINT_GT ? BOUND_STRICT : BOUND_INCLUSIVE;
              selectivity *= 0.3;
            }
          else if (out->upper < 0 &&
                   (op == SQLITE_INDEX_CONSTRAINT_LT || op == SQLITE_INDEX_CONSTRAINT_LE))
            {
              out->upper = i;
              out->upper_op = op == SQLITE_INDEX_CONSTRAINT_LT ? BOUND_STRICT : BOUND_INCLUSIVE;
              selectivity *= 0.3;
            }
        }
    }

  if (out->n_eq == 0 && out->lower < 0 && out->upper < 0)
    return FALSE;
  out->covering = index >= 0 && parts_cover (parts, info->colUsed);

  /* The window holds exactly the rows the constraints select when each
   * is on a part that compares as keys do, and none is IS, whose window
   * takes the NULLs. */
  out->exact = TRUE;
  for (guint k = 0; k < out->n_eq; k++)
    out->exact = out->exact && part_compares_as_keys (&g_array_index (parts, Part, k)) &&
                 info->aConstraint[out->eq[k]].op == SQLITE_INDEX_CONSTRAINT_EQ;
  if (out->lower >= 0 || out->upper >= 0)
    out->exact = out->exact && part_compares_as_keys (&g_array_index (parts, Part, out->n_eq));

  if (out->n_eq == n_searchable && all_certain)
    {
      QStoreIndexSchema *index_schema = NULL;

      if (index >= 0)
        index_schema = g_ptr_array_index (schema->indexes, index);

      out->unique = index_schema == NULL || index_schema->unique;
    }

  if (out->unique)
    {
      out->rows = 1;
      out->cost = row_cost (index, out->covering);
    }
  else
    {
      out->rows = MAX (1.0, n_rows * selectivity);
      /* Without statistics, SQLite takes an equality on an index to match
       * about ten rows, whatever the table's size: so does qstore, or a
       * seek on a large table would look dearer than a walk of a small
       * one feeding it. */
      if (out->n_eq > 0)
        out->rows = MIN (out->rows, EQ_ROWS);
      out->cost = log_rows + out->rows * row_cost (index, out->covering);
    }

  out->ordered = order_matches (schema, info, parts, fixed, out->n_eq, &out->reverse);
  return TRUE;
}

/* An index walked from end to end, for its order: worth it when the
 * statement wants that order (ORDER BY, GROUP BY, DISTINCT) and would
 * otherwise sort every row, above all under a LIMIT, which stops the walk
 * early. Each step reads the index entry and then its row. */
static gboolean
plan_ordered_walk (QStoreTableSchema  *schema,
                   sqlite3_index_info *info,
                   int                 index,
                   double              n_rows,
                   double              wanted,
                   Candidate          *out)
{
  gboolean no_fixed[PLAN_MAX_PARTS] = { FALSE };
  g_autoptr(GArray) parts = NULL;
  guint n_searchable;

  memset (out, 0, sizeof *out);
  out->kind = PLAN_INDEX;
  out->index = index;
  out->lower = out->upper = -1;
  parts = qstore_vtab_plan_parts (schema, index, &n_searchable);
  if (!order_matches (schema, info, parts, no_fixed, 0, &out->reverse))
    return FALSE;
  out->ordered = TRUE;
  out->covering = parts_cover (parts, info->colUsed);
  out->rows = n_rows;
  out->cost = seek_cost (n_rows) + MIN (n_rows, wanted) * row_cost (index, out->covering);
  return TRUE;
}

/* How many rows the statement reads at most: LIMIT plus OFFSET, more
 * when other terms filter the rows, or all of them. A LIMIT given as a
 * parameter has no value yet at planning: paging asks for few rows, so
 * a thousand is assumed. */
static double
rows_wanted (sqlite3_index_info *info,
             double              n_rows)
{
  double limit = -1;
  double offset = 0;
  double filters = 1;

  for (int i = 0; i < info->nConstraint; i++)
    {
      unsigned char op = info->aConstraint[i].op;
      sqlite3_value *value = NULL;
      double n = 1000;

      if (op != SQLITE_INDEX_CONSTRAINT_LIMIT && op != SQLITE_INDEX_CONSTRAINT_OFFSET)
        {
          if (info->aConstraint[i].usable)
            filters *= 4;
          continue;
        }
      if (sqlite3_vtab_rhs_value (info, i, &value) == SQLITE_OK &&
          sqlite3_value_numeric_type (value) == SQLITE_INTEGER)
        n = MAX (0, sqlite3_value_int64 (value));
      if (op == SQLITE_INDEX_CONSTRAINT_LIMIT)
        limit = n;
      else
        offset = n;
    }
  if (limit < 0)
    return n_rows;
  return MIN (n_rows, (limit + offset) * filters);
}

/* Whether a walk of the primary key or of a whole index seeks on
 * @column under @collation: then no automatic index is needed. */
static gboolean
column_is_indexed (QStoreTableSchema *schema,
                   int                column,
                   QStoreCollation    collation)
{
  if (column == schema->rowid_column)
    return TRUE;
  if (schema->pk->len > 0)
    {
      const QStoreKeyPart *first = &g_array_index (schema->pk, QStoreKeyPart, 0);

      if ((int) first->column == column && first->collation == collation)
        return TRUE;
    }
  for (guint i = 0; i < schema->indexes->len && i < PLAN_MAX_INDEXES; i++)
    {
      QStoreIndexSchema *index = g_ptr_array_index (schema->indexes, i);
      const QStoreKeyPart *first;

      if (index->where_sql != NULL || index->parts->len == 0)
        continue;
      first = &g_array_index (index->parts, QStoreKeyPart, 0);
      if ((int) first->column == column && first->collation == collation)
        return TRUE;
    }
  return FALSE;
}

/* Of what the structure costs to build (a walk of the table), the share
 * each probe is charged: it pays once several probes share it. Above an
 * index seek's cost, so that a real index always wins. */
#define AUTO_BUILD_SHARE 0.1

/* An automatic index (qstore-vtab-auto.c) for an equality on a column no
 * index seeks on, its other side coming from an outer loop (or a
 * parameter): SQLite would otherwise walk the whole table for every row
 * of that loop. The cursor walks the table on the first probe and builds
 * the structure on the second, so a statement that probes once pays no
 * more than a scan. A constant (`c = 5`) is probed once: no plan. Nor
 * for `c IN (…)`, which SQLite checks in one walk of the table. */
static gboolean
plan_auto (QStoreTableSchema  *schema,
           sqlite3_index_info *info,
           double              n_rows,
           Candidate          *out)
{
  for (int i = 0; i < info->nConstraint; i++)
    {
      const struct sqlite3_index_constraint *constraint = &info->aConstraint[i];
      sqlite3_value *rhs = NULL;
      QStoreCollation collation;

      if (!constraint->usable || constraint->op != SQLITE_INDEX_CONSTRAINT_EQ ||
          constraint->iColumn < 0 || constraint->iColumn > PLAN_MAX_AUTO_COLUMN)
        continue;
      if (!qstore_collation_from_name (sqlite3_vtab_collation (info, i), &collation) ||
          column_is_indexed (schema, constraint->iColumn, collation))
        continue;
      if (sqlite3_vtab_rhs_value (info, i, &rhs) == SQLITE_OK)
        continue;
      if (sqlite3_vtab_in (info, i, -1))
        continue;

      memset (out, 0, sizeof *out);
      out->kind = PLAN_AUTO;
      out->index = constraint->iColumn;
      out->n_eq = 1;
      out->eq[0] = i;
      out->lower = out->upper = -1;
      out->collation = collation;
      out->rows = MAX (1.0, MIN (n_rows * 0.1, EQ_ROWS));
      out->cost = seek_cost (n_rows) + out->rows + n_rows * AUTO_BUILD_SHARE;
      return TRUE;
    }
  return FALSE;
}

/* The constraint a walk's filter checks: an equality on a column the plan
 * does not seek on. SQLite checks every row the walk returns anyway; the
 * filter spares it the rows that cannot match (their columns read out,
 * the comparison, the step back). Not for `c IN (…)`: SQLite would run
 * the walk once per value. Returns -1 when there is none. */
static int
plan_filter (sqlite3_index_info *info,
             QStoreCollation    *collation)
{
  for (int i = 0; i < info->nConstraint; i++)
    {
      const struct sqlite3_index_constraint *constraint = &info->aConstraint[i];

      if (constraint->usable && constraint->op == SQLITE_INDEX_CONSTRAINT_EQ &&
          constraint->iColumn >= 0 && constraint->iColumn <= PLAN_MAX_FILTER_COLUMN &&
          info->aConstraintUsage[i].argvIndex == 0 &&
          qstore_collation_from_name (sqlite3_vtab_collation (info, i), collation) &&
          !sqlite3_vtab_in (info, i, -1))
        return i;
    }
  return -1;
}

/* How a column compares under @collation, for a plan's name. */
static char *
column_label (QStoreTableSchema *schema,
              int                column,
              QStoreCollation    collation)
{
  QStoreColumn *c = qstore_vtab_schema_column (schema, column);

  if (collation == c->collation)
    return g_strdup (c->name);
  return g_strdup_printf ("%s COLLATE %s", c->name, qstore_collation_name (collation));
}

/* SQLite sorts what an unordered plan gives when the statement wants an
 * order: the choice weighs that in. */
#define SORT_COST_PER_ROW_AND_LEVEL 0.04

static double
choice_cost (const Candidate    *c,
             sqlite3_index_info *info)
{
  if (c->ordered || info->nOrderBy == 0)
    return c->cost;
  return c->cost + c->rows * seek_cost (c->rows) * SORT_COST_PER_ROW_AND_LEVEL;
}

static gboolean
candidate_better (const Candidate    *a,
                  const Candidate    *b,
                  sqlite3_index_info *info)
{
  double a_cost = choice_cost (a, info);
  double b_cost = choice_cost (b, info);

  if (a_cost != b_cost)
    return a_cost < b_cost;
  return a->ordered && !b->ordered;
}

/* SQLite checks every constraint on the rows a plan returns, and takes
 * the plan's row estimate as what the loop yields: the constraints the
 * plan does not use filter those rows further. The same guesses as
 * SQLite's for an ordinary table's terms no index serves: an equality
 * keeps a quarter of the rows, anything else a little less than all. */
static double
unused_filter (sqlite3_index_info *info)
{
  double keep = 1.0;

  for (int i = 0; i < info->nConstraint; i++)
    {
      unsigned char op = info->aConstraint[i].op;

      if (!info->aConstraint[i].usable || info->aConstraintUsage[i].argvIndex > 0 ||
          op == SQLITE_INDEX_CONSTRAINT_LIMIT || op == SQLITE_INDEX_CONSTRAINT_OFFSET)
        continue;
      keep *= is_eq (op) ? 0.25 : 0.9;
    }
  return keep;
}

int
qstore_vtab_best_index (QStoreSqlTable     *entry,
                        sqlite3_index_info *info)
{
  QStoreTableSchema *schema = entry->schema;
  g_autoptr(GArray) pk_parts = NULL;
  gboolean no_fixed[PLAN_MAX_PARTS] = { FALSE };
  Candidate best = { 0 };
  Candidate candidate;
  double n_rows;
  guint n_searchable;
  int argv_index = 1;
  int filter = -1;
  QStoreCollation filter_collation = QSTORE_COLLATION_BINARY;
  g_autofree char *plan = NULL;

  n_rows = qstore_coordinator_get_row_count (qstore_table_get_coordinator (entry->table),
                                             schema->schema, schema->name);
  n_rows = MAX (1.0, n_rows);

  /* A full scan walks the primary key, which may give the order too. */
  best.kind = PLAN_SCAN;
  best.lower = best.upper = -1;
  best.rows = n_rows;
  best.cost = n_rows + 2.0 * (seek_cost (n_rows));
  pk_parts = qstore_vtab_plan_parts (schema, -1, &n_searchable);
  best.ordered = order_matches (schema, info, pk_parts, no_fixed, 0, &best.reverse);

  if (plan_candidate (schema, info, -1, n_rows, &candidate) && candidate_better (&candidate, &best, info))
    best = candidate;

  for (guint i = 0; i < schema->indexes->len && i < PLAN_MAX_INDEXES; i++)
    {
      QStoreIndexSchema *index = g_ptr_array_index (schema->indexes, i);

      /* A partial index lacks rows the query may want. */
      if (index->where_sql != NULL)
        continue;
      if (plan_candidate (schema, info, i, n_rows, &candidate) &&
          candidate_better (&candidate, &best, info))
        best = candidate;
      if (info->nOrderBy > 0 && !best.ordered &&
          plan_ordered_walk (schema, info, i, n_rows, rows_wanted (info, n_rows), &candidate) &&
          candidate_better (&candidate, &best, info))
        best = candidate;
    }

  if (plan_auto (schema, info, n_rows, &candidate) && candidate_better (&candidate, &best, info))
    best = candidate;

  for (guint k = 0; k < best.n_eq; k++)
    info->aConstraintUsage[best.eq[k]].argvIndex = argv_index++;
  if (best.lower >= 0)
    info->aConstraintUsage[best.lower].argvIndex = argv_index++;
  if (best.upper >= 0)
    info->aConstraintUsage[best.upper].argvIndex = argv_index++;
  for (int i = 0; best.exact && i < info->nConstraint; i++)
    if (info->aConstraintUsage[i].argvIndex > 0)
      info->aConstraintUsage[i].omit = 1;

  info->idxNum = PLAN_PACK (best.kind, MAX (best.index, 0), best.n_eq,
                            best.lower >= 0 ? best.lower_op : BOUND_NONE,
                            best.upper >= 0 ? best.upper_op : BOUND_NONE,
                            best.ordered && best.reverse ? 1 : 0);
  if (best.kind == PLAN_AUTO)
    info->idxNum |= PLAN_PACK_COLLATION (best.collation);
  if (best.covering)
    info->idxNum |= PLAN_PACK_COVERING;
  if (best.exact)
    info->idxNum |= PLAN_PACK_EXACT;
  info->orderByConsumed = best.ordered;
  info->estimatedCost = best.cost;
  info->estimatedRows = (sqlite3_int64) MAX (1.0, best.rows * unused_filter (info));
  if (best.unique)
    info->idxFlags |= SQLITE_INDEX_SCAN_UNIQUE;
  else if (best.kind != PLAN_AUTO && (filter = plan_filter (info, &filter_collation)) >= 0)
    {
      info->aConstraintUsage[filter].argvIndex = argv_index++;
      info->idxNum |= PLAN_PACK_FILTER (info->aConstraint[filter].iColumn) |
                      PLAN_PACK_COLLATION (filter_collation);
    }

  switch (best.kind)
    {
    case PLAN_PK:
      plan = g_strdup (best.n_eq == n_searchable && best.lower < 0 && best.upper < 0
                       ? "pk-eq" : "pk-range");
      break;

    case PLAN_INDEX:
      {
        QStoreIndexSchema *index = g_ptr_array_index (schema->indexes, best.index);
        const char *name;

        if (best.n_eq == index->parts->len)
          name = "index-eq";
        else if (best.n_eq == 0 && best.lower < 0 && best.upper < 0)
          name = "index-walk";
        else
          name = "index-range";
        plan = g_strdup_printf ("%s:%s%s", name, index->name, best.covering ? " covering" : "");
      }
      break;

    case PLAN_AUTO:
      {
        g_autofree char *label = column_label (schema, best.index, best.collation);

        plan = g_strconcat ("auto-index:", label, NULL);
      }
      break;

    case PLAN_SCAN:
    default:
      plan = g_strdup ("scan");
      break;
    }
  if (filter >= 0)
    {
      g_autofree char *label = column_label (schema, info->aConstraint[filter].iColumn,
                                             filter_collation);

      info->idxStr = sqlite3_mprintf ("%s filter:%s", plan, label);
    }
  else
    info->idxStr = sqlite3_mprintf ("%s", plan);
  info->needToFreeIdxStr = 1;

  return SQLITE_OK;
}

/* Windows */

void
qstore_vtab_window_clear (Window *window)
{
  if (window->lower != NULL)
    g_byte_array_unref (window->lower);
  if (window->upper != NULL)
    g_byte_array_unref (window->upper);
}

static GByteArray *
bytes_copy (const GByteArray *bytes)
{
  GByteArray *copy = g_byte_array_sized_new (bytes->len + 24);

  g_byte_array_append (copy, bytes->data, bytes->len);
  return copy;
}

/* The least key above every key that starts with @prefix, or NULL when
 * there is none (an empty prefix or all 0xff). */
static GByteArray *
prefix_end (const GByteArray *prefix)
{
  GByteArray *end = bytes_copy (prefix);

  while (end->len > 0 && end->data[end->len - 1] == 0xff)
    g_byte_array_set_size (end, end->len - 1);
  if (end->len == 0)
    {
      g_byte_array_unref (end);
      return NULL;
    }
  end->data[end->len - 1]++;
  return end;
}

/* Every key that starts with @prefix. */
static Window
window_for_prefix (const GByteArray *prefix)
{
  Window window = { NULL, TRUE, NULL, FALSE };

  if (prefix->len > 0)
    {
      window.lower = bytes_copy (prefix);
      window.upper = prefix_end (prefix);
    }
  return window;
}

gboolean
qstore_vtab_encode_constraint (const Part    *part,
                   sqlite3_value *arg,
                   GByteArray    *out,
                   gboolean      *certain,
                   GError       **error)
{
  sqlite3_value *copy = NULL;
  QStoreValue value;
  gboolean ok;

  /* Applying a numeric affinity converts text in place, and SQLite still
   * needs the argument as it was to check the rows: convert a copy. Other
   * affinities leave the argument as it is. */
  if (sqlite3_value_type (arg) == SQLITE_TEXT &&
      (part->affinity == QSTORE_AFFINITY_NUMERIC || part->affinity == QSTORE_AFFINITY_INTEGER ||
       part->affinity == QSTORE_AFFINITY_REAL))
    {
      copy = sqlite3_value_dup (arg);
      if (copy == NULL)
        {
          g_set_error_literal (error, QSTORE_ERROR, QSTORE_ERROR_FAILED, _("Out of memory"));
          return FALSE;
        }
      arg = copy;
    }

  *certain = qstore_affinity_for_compare (part->affinity, arg, &value);
  ok = qstore_codec_append_key_value (out, &value, part->collation, part->descending, error);
  g_clear_pointer (&copy, sqlite3_value_free);
  return ok;
}

/* The first byte of every text value of @part: text sorts in one run. */
static guint8
text_tag (const Part *part)
{
  g_autoptr(GByteArray) empty = g_byte_array_new ();

  qstore_codec_append_text (empty, "", 0, part->collation, part->descending);
  return empty->data[0];
}

static int
compare_windows (gconstpointer a,
                 gconstpointer b)
{
  const Window *wa = a;
  const Window *wb = b;

  if (wa->lower == NULL || wb->lower == NULL)
    return (wa->lower != NULL) - (wb->lower != NULL);
  return qstore_key_compare (wa->lower->data, wa->lower->len, wb->lower->data, wb->lower->len);
}

/* Narrows @window, within @prefix, to the keys whose next part, @part,
 * is not NULL: those sort first, or last when @part is descending. */
static void
exclude_nulls (Window           *window,
               const GByteArray *prefix,
               const Part       *part)
{
  g_autoptr(GByteArray) nulls = bytes_copy (prefix);

  qstore_codec_append_null (nulls, part->descending);
  if (!part->descending)
    {
      g_autoptr(GByteArray) past = prefix_end (nulls);

      if (window->lower == NULL || qstore_key_compare (window->lower->data, window->lower->len,
                                                       past->data, past->len) < 0)
        {
          g_clear_pointer (&window->lower, g_byte_array_unref);
          window->lower = g_steal_pointer (&past);
          window->lower_inclusive = TRUE;
        }
    }
  else if (window->upper == NULL || qstore_key_compare (nulls->data, nulls->len,
                                                         window->upper->data,
                                                         window->upper->len) < 0)
    {
      g_clear_pointer (&window->upper, g_byte_array_unref);
      window->upper = g_steal_pointer (&nulls);
      window->upper_inclusive = FALSE;
    }
}

gboolean
qstore_vtab_build_windows (GArray          *windows,
               GArray          *parts,
               int              idx_num,
               int              argc,
               sqlite3_value  **argv,
               GError         **error)
{
  g_autoptr(GByteArray) prefix = g_byte_array_new ();
  guint n_eq = PLAN_N_EQ (idx_num);
  int lower_op = PLAN_LOWER (idx_num);
  int upper_op = PLAN_UPPER (idx_num);
  int arg = 0;
  Window window;

  for (guint k = 0; k < n_eq && arg < argc; k++, arg++)
    {
      const Part *part = &g_array_index (parts, Part, k);
      gsize before = prefix->len;
      gboolean certain;

      if (!qstore_vtab_encode_constraint (part, argv[arg], prefix, &certain, error))
        return FALSE;

      if (!certain)
        {
          g_autoptr(GByteArray) text_prefix = NULL;
          guint8 tag = text_tag (part);

          /* The number itself, and every text value (which SQLite may
           * compare as a number). */
          window = window_for_prefix (prefix);
          g_array_append_val (windows, window);

          g_byte_array_set_size (prefix, before);
          text_prefix = bytes_copy (prefix);
          g_byte_array_append (text_prefix, &tag, 1);
          window = window_for_prefix (text_prefix);
          g_array_append_val (windows, window);

          g_array_sort (windows, compare_windows);
          return TRUE;
        }
    }

  window = window_for_prefix (prefix);

  if (n_eq < parts->len && (lower_op != BOUND_NONE || upper_op != BOUND_NONE))
    {
      const Part *part = &g_array_index (parts, Part, n_eq);

      for (int side = 0; side < 2; side++)
        {
          int op = side == 0 ? lower_op : upper_op;
          gboolean low_value = side == 0;   /* `>`/`>=`, else `<`/`<=` */
          g_autoptr(GByteArray) bound = NULL;
          gboolean certain;
          gboolean strict = op == BOUND_STRICT;
          gboolean byte_lower;

          if (op == BOUND_NONE || arg >= argc)
            continue;

          bound = bytes_copy (prefix);
          if (!qstore_vtab_encode_constraint (part, argv[arg++], bound, &certain, error))
            {
              qstore_vtab_window_clear (&window);
              return FALSE;
            }

          /* Text sorts above every number: a bound from below keeps every
           * text value; one from above would cut them off. */
          if (!certain && !low_value)
            continue;

          /* A descending part turns value order around in bytes. */
          byte_lower = low_value != (part->descending != FALSE);

          if (byte_lower)
            {
              /* Strict: past every key with v here; else from v on. */
              GByteArray *start = strict ? prefix_end (bound) : g_byte_array_ref (bound);

              if (window.lower != NULL)
                g_byte_array_unref (window.lower);
              window.lower = start;
              window.lower_inclusive = TRUE;
            }
          else
            {
              /* Strict: before v; else up to every key with v here. */
              GByteArray *end = strict ? g_byte_array_ref (bound) : prefix_end (bound);

              if (window.upper != NULL)
                g_byte_array_unref (window.upper);
              window.upper = end;
              window.upper_inclusive = FALSE;
            }
        }

      /* An upper bound alone: the NULLs, which keys sort first, never
       * match it. */
      if (upper_op != BOUND_NONE && lower_op == BOUND_NONE)
        exclude_nulls (&window, prefix, part);
    }

  g_array_append_val (windows, window);
  return TRUE;
}

/* Cursors */
