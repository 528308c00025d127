/* qstore-vtab.c: every qstore table, as an SQLite virtual table
 *
 * SQLite is told each table as a rowid virtual table with the same column
 * names, declared types and collations, so it compares and sorts as it
 * would for a native table; qstore keeps the rows, the keys, the indexes
 * and every constraint.
 *
 * Reads: xBestIndex picks a primary-key seek, an index seek or a scan, and
 * names it in idxStr (EXPLAIN QUERY PLAN shows `pk-eq`, `pk-range`,
 * `index-eq:NAME`, `index-range:NAME` or `scan`). No constraint is ever
 * omitted: SQLite re-checks each row, so a plan may return more rows than
 * match (never fewer). That is what makes the one uncertain case safe: a
 * number compared with a TEXT or BLOB column compares numerically or as
 * text depending on the other operand's affinity, which a virtual table
 * cannot see, so the seek then also covers every text value.
 *
 * Writes: xUpdate applies the column affinity and the DEFAULTs SQLite
 * leaves to virtual tables, then hands the row to the QStoreTable, which
 * checks every constraint. Transactions and savepoints go to the
 * database's coordinator, which every table shares: a statement touching
 * several tables calls each hook once per table, so the coordinator's
 * hooks are idempotent.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "qstore-affinity-private.h"
#include "qstore-coordinator-private.h"
#include "qstore-error.h"
#include "qstore-vtab-private.h"

/* The plan, packed into idxNum. */
#define PLAN_SCAN  0
#define PLAN_PK    1
#define PLAN_INDEX 2

#define BOUND_NONE      0
#define BOUND_STRICT    1
#define BOUND_INCLUSIVE 2

#define PLAN_MAX_PARTS   63
#define PLAN_MAX_INDEXES 255

#define PLAN_PACK(kind, index, n_eq, lower, upper, reverse) \
  ((kind) | ((index) << 2) | ((n_eq) << 10) | ((lower) << 16) | ((upper) << 18) | ((reverse) << 20))
#define PLAN_KIND(n)    ((n) & 0x3)
#define PLAN_INDEX_NO(n) (((n) >> 2) & 0xff)
#define PLAN_N_EQ(n)    (((n) >> 10) & 0x3f)
#define PLAN_LOWER(n)   (((n) >> 16) & 0x3)
#define PLAN_UPPER(n)   (((n) >> 18) & 0x3)
#define PLAN_REVERSE(n) (((n) >> 20) & 0x1)

typedef struct _QStoreCursor QStoreCursor;

typedef struct
{
  sqlite3_vtab    base;
  QStoreSqlTable *entry;
  /* A closed cursor kept for the next xOpen: SQLite opens and closes one
   * per statement run. */
  QStoreCursor   *spare;

  /* The row an index walk fetched last, under the shared snapshot of
   * serial last_serial (0: none): a point read of its key that follows
   * (ids from an index, then each row by id) takes it from here. */
  guint64         last_serial;
  GByteArray     *last_key;
  GByteArray     *last_row;
} QStoreVtab;

/* One component of the key a plan walks. */
typedef struct
{
  int              column;     /* -1: the rowid of a table without INTEGER PRIMARY KEY */
  QStoreCollation  collation;
  gboolean         descending;
  QStoreAffinity   affinity;
  gboolean         is_rowid;   /* the rowid (or its INTEGER PRIMARY KEY alias) */
} Part;

/* A byte range of the store a plan walks. */
typedef struct
{
  GByteArray *lower;           /* NULL: unbounded */
  gboolean    lower_inclusive;
  GByteArray *upper;           /* NULL: unbounded */
  gboolean    upper_inclusive;
} Window;

struct _QStoreCursor
{
  sqlite3_vtab_cursor  base;
  QStoreSqlTable      *entry;
  QStoreTable         *table;
  gboolean             by_index;
  guint                index;
  gboolean             reverse;
  GArray              *windows;     /* Window */
  guint                next_window;
  /* Outside a transaction, a walk reads through the snapshot the
   * statements running at the same time share (see
   * qstore_coordinator_hold_snapshot()): one look at the provider's state
   * for all their reads instead of one per read. */
  QStoreSnapshot      *snapshot;
  guint64              snapshot_serial;
  QStoreIter          *iter;
  gboolean             eof;
  gboolean             point;       /* a point read: one row at most */

  /* Kept across xFilter calls: SQLite runs a statement's filter again
   * for every row of an outer loop. */
  GArray              *parts;       /* Part, of the plan below */
  int                  parts_index; /* -1: the primary key; -2: none yet */
  GByteArray          *key_buf;     /* the key of a point read */
  GByteArray          *row_buf;     /* a row read through the snapshot */

  /* The current row */
  const guint8        *key;         /* its data key, borrowed from the iterator */
  gsize                key_len;
  GBytes              *row;         /* when fetched through an index */
  const guint8        *row_data;
  gsize                row_len;
  QStoreValue         *values;
  guint                n_values;
  gint64               rowid;
};

/* Helpers */

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

static QStoreColumn *
schema_column (QStoreTableSchema *schema,
               guint              column)
{
  return g_ptr_array_index (schema->columns, column);
}

static void
append_identifier (GString    *out,
                   const char *name)
{
  g_string_append_c (out, '"');
  for (const char *p = name; *p != '\0'; p++)
    {
      if (*p == '"')
        g_string_append_c (out, '"');
      g_string_append_c (out, *p);
    }
  g_string_append_c (out, '"');
}

/* A declared type is kept as written when it is made of the usual
 * characters; SQLite decides the column's affinity from its text. */
static gboolean
plain_type (const char *type)
{
  for (const char *p = type; *p != '\0'; p++)
    if (!g_ascii_isalnum (*p) && strchr (" _(),.+-", *p) == NULL)
      return FALSE;
  return TRUE;
}

char *
qstore_vtab_declaration (QStoreTableSchema *schema)
{
  GString *sql = g_string_new ("CREATE TABLE x(");

  for (guint i = 0; i < schema->columns->len; i++)
    {
      QStoreColumn *column = schema_column (schema, i);

      if (i > 0)
        g_string_append (sql, ", ");
      append_identifier (sql, column->name);
      if (column->decl_type != NULL && column->decl_type[0] != '\0')
        {
          g_string_append_c (sql, ' ');
          if (plain_type (column->decl_type))
            g_string_append (sql, column->decl_type);
          else
            append_identifier (sql, column->decl_type);
        }
      g_string_append_printf (sql, " COLLATE %s", qstore_collation_name (column->collation));
    }
  g_string_append_c (sql, ')');
  return g_string_free (sql, FALSE);
}

static int
sqlite_code_for_error (const GError *error)
{
  if (error->domain != QSTORE_ERROR)
    return SQLITE_ERROR;

  switch (error->code)
    {
    case QSTORE_ERROR_CONSTRAINT:
      return SQLITE_CONSTRAINT;
    case QSTORE_ERROR_READ_ONLY:
      return SQLITE_READONLY;
    case QSTORE_ERROR_BUSY:
      return SQLITE_BUSY;
    case QSTORE_ERROR_CORRUPT:
      return SQLITE_CORRUPT;
    case QSTORE_ERROR_IO:
      return SQLITE_IOERR;
    default:
      return SQLITE_ERROR;
    }
}

/* Reports @error (taken) to SQLite through @vtab, and keeps it on the
 * database so the caller sees qstore's code rather than SQLite's. */
static int
vtab_fail (sqlite3_vtab   *vtab,
           QStoreDatabase *database,
           GError         *error)
{
  int rc = sqlite_code_for_error (error);

  sqlite3_free (vtab->zErrMsg);
  vtab->zErrMsg = sqlite3_mprintf ("%s", error->message);
  qstore_database_take_callback_error (database, error);
  return rc;
}

/* Plans */

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
                schema_column (schema, key_part->column)->affinity, FALSE };

  if (schema->rowid_column >= 0 && (int) key_part->column == schema->rowid_column)
    part.is_rowid = TRUE;
  return part;
}

/* The key parts of @index (-1: the primary key), followed by those of the
 * data key each index entry ends with. *n_searchable gets how many of them
 * a seek may constrain. */
static GArray *
plan_parts (QStoreTableSchema *schema,
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
  double    cost;
  double    rows;
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
      if (!part->is_rowid && part->collation != schema_column (schema, column)->collation)
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

  parts = plan_parts (schema, index, &n_searchable);
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
      out->cost = index >= 0 ? 2.0 : 1.0;
    }
  else
    {
      out->rows = MAX (1.0, n_rows * selectivity);
      out->cost = log_rows + out->rows * (index >= 0 ? 2.0 : 1.0);
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
  parts = plan_parts (schema, index, &n_searchable);
  if (!order_matches (schema, info, parts, no_fixed, 0, &out->reverse))
    return FALSE;
  out->ordered = TRUE;
  out->rows = n_rows;
  out->cost = seek_cost (n_rows) + MIN (n_rows, wanted) * 2.0;
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

static int
vtab_best_index (sqlite3_vtab       *vtab,
                 sqlite3_index_info *info)
{
  QStoreVtab *self = (QStoreVtab *) vtab;
  QStoreSqlTable *entry = self->entry;
  QStoreTableSchema *schema = entry->schema;
  g_autoptr(GArray) pk_parts = NULL;
  gboolean no_fixed[PLAN_MAX_PARTS] = { FALSE };
  Candidate best = { 0 };
  Candidate candidate;
  double n_rows;
  guint n_searchable;
  int argv_index = 1;
  const char *name;

  n_rows = qstore_coordinator_get_row_count (qstore_table_get_coordinator (entry->table),
                                             schema->schema, schema->name);
  n_rows = MAX (1.0, n_rows);

  /* A full scan walks the primary key, which may give the order too. */
  best.kind = PLAN_SCAN;
  best.lower = best.upper = -1;
  best.rows = n_rows;
  best.cost = n_rows + 2.0 * (seek_cost (n_rows));
  pk_parts = plan_parts (schema, -1, &n_searchable);
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

  for (guint k = 0; k < best.n_eq; k++)
    info->aConstraintUsage[best.eq[k]].argvIndex = argv_index++;
  if (best.lower >= 0)
    info->aConstraintUsage[best.lower].argvIndex = argv_index++;
  if (best.upper >= 0)
    info->aConstraintUsage[best.upper].argvIndex = argv_index++;

  info->idxNum = PLAN_PACK (best.kind, MAX (best.index, 0), best.n_eq,
                            best.lower >= 0 ? best.lower_op : BOUND_NONE,
                            best.upper >= 0 ? best.upper_op : BOUND_NONE,
                            best.ordered && best.reverse ? 1 : 0);
  info->orderByConsumed = best.ordered;
  info->estimatedCost = best.cost;
  info->estimatedRows = (sqlite3_int64) best.rows;
  if (best.unique)
    info->idxFlags |= SQLITE_INDEX_SCAN_UNIQUE;

  switch (best.kind)
    {
    case PLAN_PK:
      info->idxStr = sqlite3_mprintf (best.n_eq == n_searchable && best.lower < 0 && best.upper < 0
                                      ? "pk-eq" : "pk-range");
      break;

    case PLAN_INDEX:
      {
        QStoreIndexSchema *index = g_ptr_array_index (schema->indexes, best.index);

        if (best.n_eq == index->parts->len)
          name = "index-eq";
        else if (best.n_eq == 0 && best.lower < 0 && best.upper < 0)
          name = "index-walk";
        else
          name = "index-range";
        info->idxStr = sqlite3_mprintf ("%s:%s", name, index->name);
      }
      break;

    case PLAN_SCAN:
    default:
      info->idxStr = sqlite3_mprintf ("scan");
      break;
    }
  info->needToFreeIdxStr = 1;

  return SQLITE_OK;
}

/* Windows */

static void
window_clear (Window *window)
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

static gboolean
encode_constraint (const Part    *part,
                   sqlite3_value *arg,
                   GByteArray    *out,
                   gboolean      *certain,
                   GError       **error)
{
  sqlite3_value *copy = NULL;
  QStoreValue value;
  gboolean ok;

  /* Applying a numeric affinity converts text in place, and SQLite still
   * needs the argument as it was to check the rows: convert a copy. */
  if (sqlite3_value_type (arg) == SQLITE_TEXT)
    {
      copy = sqlite3_value_dup (arg);
      if (copy == NULL)
        {
          g_set_error_literal (error, QSTORE_ERROR, QSTORE_ERROR_FAILED, "Out of memory");
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

static gboolean
build_windows (GArray          *windows,
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

      if (!encode_constraint (part, argv[arg], prefix, &certain, error))
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
          if (!encode_constraint (part, argv[arg++], bound, &certain, error))
            {
              window_clear (&window);
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
    }

  g_array_append_val (windows, window);
  return TRUE;
}

/* Cursors */

static int
vtab_open (sqlite3_vtab         *vtab,
           sqlite3_vtab_cursor **out)
{
  QStoreVtab *self = (QStoreVtab *) vtab;
  QStoreCursor *cursor = g_steal_pointer (&self->spare);

  if (cursor == NULL)
    {
      cursor = g_new0 (QStoreCursor, 1);
      cursor->entry = qstore_sql_table_ref (self->entry);
      cursor->windows = g_array_new (FALSE, FALSE, sizeof (Window));
      g_array_set_clear_func (cursor->windows, (GDestroyNotify) window_clear);
      cursor->parts_index = -2;
      cursor->key_buf = g_byte_array_sized_new (64);
      cursor->row_buf = g_byte_array_sized_new (128);
    }
  memset (&cursor->base, 0, sizeof cursor->base);
  cursor->eof = TRUE;
  *out = &cursor->base;
  return SQLITE_OK;
}

/* Ends the current walk; the table, the value slots and the buffers stay
 * for the next xFilter. */
static void
cursor_reset (QStoreCursor *cursor)
{
  g_clear_object (&cursor->iter);
  g_clear_pointer (&cursor->row, g_bytes_unref);
  if (cursor->snapshot != NULL)
    qstore_coordinator_release_snapshot (cursor->entry->database->coordinator,
                                         g_steal_pointer (&cursor->snapshot));
  if (cursor->windows->len > 0)
    g_array_set_size (cursor->windows, 0);
  cursor->next_window = 0;
  cursor->key = NULL;
  cursor->row_data = NULL;
  cursor->point = FALSE;
  cursor->eof = TRUE;
}

static void
cursor_free (QStoreCursor *cursor)
{
  cursor_reset (cursor);
  g_clear_object (&cursor->table);
  g_clear_pointer (&cursor->values, g_free);
  g_clear_pointer (&cursor->parts, g_array_unref);
  g_byte_array_unref (cursor->key_buf);
  g_byte_array_unref (cursor->row_buf);
  g_array_unref (cursor->windows);
  qstore_sql_table_unref (cursor->entry);
  g_free (cursor);
}

static int
vtab_close (sqlite3_vtab_cursor *base)
{
  QStoreCursor *cursor = (QStoreCursor *) base;
  QStoreVtab *vtab = (QStoreVtab *) base->pVtab;

  cursor_reset (cursor);
  /* Keep one, with its buffers. */
  if (vtab != NULL && vtab->spare == NULL)
    vtab->spare = cursor;
  else
    cursor_free (cursor);
  return SQLITE_OK;
}

static QStoreIter *
open_window (QStoreCursor  *cursor,
             const Window  *window,
             GError       **error)
{
  g_autoptr(QStoreBounds) bounds = qstore_bounds_new ();

  if (window->lower != NULL)
    {
      if (window->lower_inclusive)
        qstore_bounds_set_gte (bounds, window->lower->data, window->lower->len);
      else
        qstore_bounds_set_gt (bounds, window->lower->data, window->lower->len);
    }
  if (window->upper != NULL)
    {
      if (window->upper_inclusive)
        qstore_bounds_set_lte (bounds, window->upper->data, window->upper->len);
      else
        qstore_bounds_set_lt (bounds, window->upper->data, window->upper->len);
    }
  qstore_bounds_set_reverse (bounds, cursor->reverse);

  if (cursor->snapshot != NULL)
    return qstore_snapshot_iterate (cursor->snapshot,
                                    cursor->by_index
                                    ? qstore_table_get_index_store (cursor->table, cursor->index)
                                    : qstore_table_get_data_store (cursor->table),
                                    bounds, error);
  if (cursor->by_index)
    return qstore_table_scan_index (cursor->table, cursor->index, bounds, error);
  return qstore_table_scan (cursor->table, bounds, error);
}

/* Reads the row under @key through the cursor's snapshot into the
 * cursor's own buffer: a later lookup on the shared snapshot may reuse the
 * memory it handed out, and SQLite may ask for this row's columns after
 * another statement read through it. An index walk (@remember) leaves the
 * row for a point read of the same key (see QStoreVtab.last_row). */
static gboolean
snapshot_read_row (QStoreCursor  *cursor,
                   const guint8  *key,
                   gsize          key_len,
                   gboolean       remember,
                   GError       **error)
{
  QStoreVtab *vtab = (QStoreVtab *) cursor->base.pVtab;
  const guint8 *row;
  gsize row_len;

  if (!remember && vtab->last_serial == cursor->snapshot_serial &&
      vtab->last_key->len == key_len && memcmp (vtab->last_key->data, key, key_len) == 0)
    {
      row = vtab->last_row->data;
      row_len = vtab->last_row->len;
    }
  else if (!qstore_snapshot_lookup (cursor->snapshot, qstore_table_get_data_store (cursor->table),
                                    key, key_len, &row, &row_len, error))
    return FALSE;

  g_byte_array_set_size (cursor->row_buf, 0);
  g_byte_array_append (cursor->row_buf, row, row_len);
  cursor->row_data = cursor->row_buf->data;
  cursor->row_len = cursor->row_buf->len;

  if (remember)
    {
      if (vtab->last_key == NULL)
        {
          vtab->last_key = g_byte_array_sized_new (64);
          vtab->last_row = g_byte_array_sized_new (128);
        }
      vtab->last_serial = cursor->snapshot_serial;
      g_byte_array_set_size (vtab->last_key, 0);
      g_byte_array_append (vtab->last_key, key, key_len);
      g_byte_array_set_size (vtab->last_row, 0);
      g_byte_array_append (vtab->last_row, row, row_len);
    }
  return TRUE;
}

/* A walk outside a transaction (nothing pending to merge) reads through
 * the shared snapshot, taking it when no statement holds it yet. */
static gboolean
hold_snapshot (QStoreCursor  *cursor,
               gboolean       create,
               GError       **error)
{
  GError *local_error = NULL;

  cursor->snapshot = qstore_coordinator_hold_snapshot (cursor->entry->database->coordinator,
                                                       create, &cursor->snapshot_serial,
                                                       &local_error);
  if (local_error != NULL)
    {
      g_propagate_error (error, local_error);
      return FALSE;
    }
  return TRUE;
}

/* Moves to the next row of the plan, across its windows. */
static gboolean
cursor_advance (QStoreCursor  *cursor,
                GError       **error)
{
  for (;;)
    {
      GError *local_error = NULL;
      const guint8 *key;
      gsize key_len;

      g_clear_pointer (&cursor->row, g_bytes_unref);
      cursor->row_data = NULL;
      cursor->key = NULL;

      if (cursor->point)
        {
          /* The one row was read by xFilter. */
          cursor->eof = TRUE;
          return TRUE;
        }

      if (cursor->iter == NULL)
        {
          guint n = cursor->windows->len;
          guint w;

          if (cursor->next_window >= n)
            {
              cursor->eof = TRUE;
              return TRUE;
            }
          w = cursor->reverse ? n - 1 - cursor->next_window : cursor->next_window;
          cursor->next_window++;
          cursor->iter = open_window (cursor, &g_array_index (cursor->windows, Window, w), error);
          if (cursor->iter == NULL)
            return FALSE;
        }

      if (!qstore_iter_next (cursor->iter, &local_error))
        {
          g_clear_object (&cursor->iter);
          if (local_error != NULL)
            {
              g_propagate_error (error, local_error);
              return FALSE;
            }
          continue;
        }

      key = qstore_iter_peek_key (cursor->iter, &key_len);
      if (cursor->by_index)
        {
          gboolean found;

          /* An index entry's value is the row's data key. */
          cursor->key = qstore_iter_peek_value (cursor->iter, &cursor->key_len);
          if (cursor->snapshot != NULL)
            {
              found = snapshot_read_row (cursor, cursor->key, cursor->key_len, TRUE,
                                         &local_error);
            }
          else
            {
              cursor->row = qstore_table_get_row (cursor->table, cursor->key, cursor->key_len,
                                                  &local_error);
              found = cursor->row != NULL;
              if (found)
                cursor->row_data = g_bytes_get_data (cursor->row, &cursor->row_len);
            }
          if (local_error != NULL)
            {
              g_propagate_error (error, local_error);
              return FALSE;
            }
          if (!found)
            {
              g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_CORRUPT,
                           "Index “%s” of table “%s” lists a row that does not exist: "
                           "drop and create the index again to rebuild it",
                           ((QStoreIndexSchema *) g_ptr_array_index (cursor->entry->schema->indexes,
                                                                     cursor->index))->name,
                           cursor->entry->schema->name);
              return FALSE;
            }
        }
      else
        {
          cursor->key = key;
          cursor->key_len = key_len;
          cursor->row_data = qstore_iter_peek_value (cursor->iter, &cursor->row_len);
        }

      cursor->rowid = 0;
      return qstore_table_decode_row (cursor->table, cursor->row_data, cursor->row_len,
                                      cursor->values, &cursor->rowid, error);
    }
}

/* Equality on every part of the data key, each value certain (no NULL, no
 * number that a text column might compare as text): the key itself is
 * known, so one point read of it replaces a walk. Returns FALSE (with
 * @error unset) when the plan must walk instead, or on error. */
static gboolean
point_read (QStoreCursor   *cursor,
            int             idx_num,
            int             argc,
            sqlite3_value **argv,
            GError        **error)
{
  guint n_eq = PLAN_N_EQ (idx_num);
  GByteArray *key = cursor->key_buf;

  if (n_eq != cursor->parts->len || (guint) argc < n_eq ||
      PLAN_LOWER (idx_num) != BOUND_NONE || PLAN_UPPER (idx_num) != BOUND_NONE)
    return FALSE;

  g_byte_array_set_size (key, 0);
  for (guint k = 0; k < n_eq; k++)
    {
      const Part *part = &g_array_index (cursor->parts, Part, k);
      gboolean certain;

      /* `IS NULL` finds the rows whose key holds NULL (each under its own
       * suffix): those need the walk. */
      if (sqlite3_value_type (argv[k]) == SQLITE_NULL)
        return FALSE;
      if (!encode_constraint (part, argv[k], key, &certain, error) || !certain)
        return FALSE;
    }

  cursor->point = TRUE;
  cursor->eof = FALSE;

  /* Through the snapshot of the statements running now, if any: a point
   * read alone is cheaper without one. */
  if (!hold_snapshot (cursor, FALSE, error))
    return FALSE;
  if (cursor->snapshot != NULL)
    {
      GError *local_error = NULL;

      if (!snapshot_read_row (cursor, key->data, key->len, FALSE, &local_error))
        {
          if (local_error != NULL)
            {
              g_propagate_error (error, local_error);
              return FALSE;
            }
          cursor->eof = TRUE;
          return TRUE;
        }
    }
  else
    {
      cursor->row = qstore_table_get_row (cursor->table, key->data, key->len, error);
      if (cursor->row == NULL)
        {
          if (error != NULL && *error != NULL)
            return FALSE;
          cursor->eof = TRUE;
          return TRUE;
        }
      cursor->row_data = g_bytes_get_data (cursor->row, &cursor->row_len);
    }

  cursor->key = key->data;
  cursor->key_len = key->len;
  cursor->rowid = 0;
  if (!qstore_table_decode_row (cursor->table, cursor->row_data, cursor->row_len,
                                cursor->values, &cursor->rowid, error))
    return FALSE;
  return TRUE;
}

static int
vtab_filter (sqlite3_vtab_cursor  *base,
             int                   idx_num,
             const char           *idx_str,
             int                   argc,
             sqlite3_value       **argv)
{
  QStoreCursor *cursor = (QStoreCursor *) base;
  QStoreSqlTable *entry = cursor->entry;
  g_autoptr(GError) error = NULL;
  int kind = PLAN_KIND (idx_num);
  guint n_searchable;
  guint n_columns = entry->schema->columns->len;

  /* A materialized view's contents: work its transaction deferred first. */
  if (G_UNLIKELY (entry->before_read != NULL) && !entry->before_read (entry->owner, &error))
    return vtab_fail (base->pVtab, entry->database, g_steal_pointer (&error));

  cursor_reset (cursor);
  /* A schema change gives the entry a new table: the plan's parts were
   * those of the old one. */
  if (cursor->table != entry->table)
    {
      g_set_object (&cursor->table, entry->table);
      g_clear_pointer (&cursor->parts, g_array_unref);
      cursor->parts_index = -2;
    }
  if (cursor->values == NULL || cursor->n_values != n_columns)
    {
      g_free (cursor->values);
      cursor->n_values = n_columns;
      cursor->values = g_new0 (QStoreValue, MAX (cursor->n_values, 1));
    }
  cursor->by_index = kind == PLAN_INDEX;
  cursor->index = PLAN_INDEX_NO (idx_num);
  cursor->reverse = PLAN_REVERSE (idx_num);
  cursor->eof = FALSE;

  if (cursor->by_index && cursor->index >= entry->schema->indexes->len)
    {
      g_set_error (&error, QSTORE_ERROR, QSTORE_ERROR_FAILED,
                   "The plan for table “%s” names an index it no longer has: run the "
                   "statement again", entry->schema->name);
      return vtab_fail (base->pVtab, entry->database, g_steal_pointer (&error));
    }

  if (kind == PLAN_SCAN)
    {
      Window all = { NULL, TRUE, NULL, FALSE };

      if (!hold_snapshot (cursor, TRUE, &error))
        return vtab_fail (base->pVtab, entry->database, g_steal_pointer (&error));
      g_array_append_val (cursor->windows, all);
    }
  else
    {
      int parts_index = cursor->by_index ? (int) cursor->index : -1;

      if (cursor->parts == NULL || cursor->parts_index != parts_index)
        {
          g_clear_pointer (&cursor->parts, g_array_unref);
          cursor->parts = plan_parts (entry->schema, parts_index, &n_searchable);
          cursor->parts_index = parts_index;
        }
      if (kind == PLAN_PK && point_read (cursor, idx_num, argc, argv, &error))
        return SQLITE_OK;
      if (error != NULL ||
          !hold_snapshot (cursor, TRUE, &error) ||
          !build_windows (cursor->windows, cursor->parts, idx_num, argc, argv, &error))
        return vtab_fail (base->pVtab, entry->database, g_steal_pointer (&error));
    }

  if (!cursor_advance (cursor, &error))
    return vtab_fail (base->pVtab, entry->database, g_steal_pointer (&error));
  return SQLITE_OK;
}

static int
vtab_next (sqlite3_vtab_cursor *base)
{
  QStoreCursor *cursor = (QStoreCursor *) base;
  g_autoptr(GError) error = NULL;

  if (!cursor_advance (cursor, &error))
    return vtab_fail (base->pVtab, cursor->entry->database, g_steal_pointer (&error));
  return SQLITE_OK;
}

static int
vtab_eof (sqlite3_vtab_cursor *base)
{
  return ((QStoreCursor *) base)->eof;
}

static int
vtab_column (sqlite3_vtab_cursor *base,
             sqlite3_context     *context,
             int                  column)
{
  QStoreCursor *cursor = (QStoreCursor *) base;

  if (column < 0 || (guint) column >= cursor->n_values || cursor->eof)
    {
      sqlite3_result_null (context);
      return SQLITE_OK;
    }
  qstore_value_to_result (context, &cursor->values[column]);
  return SQLITE_OK;
}

/* The ephemeral rowid standing for the data key @key of a table keyed by
 * its PRIMARY KEY. */
static gint64
rowid_for_key (QStoreSqlTable *entry,
               const guint8   *key,
               gsize           key_len)
{
  g_autoptr(GBytes) bytes = g_bytes_new (key, key_len);
  gpointer found;

  if (g_hash_table_lookup_extended (entry->rowid_by_key, bytes, NULL, &found))
    return GPOINTER_TO_SIZE (found);

  g_ptr_array_add (entry->key_by_rowid, g_bytes_ref (bytes));
  g_hash_table_insert (entry->rowid_by_key, g_steal_pointer (&bytes),
                       GSIZE_TO_POINTER (entry->key_by_rowid->len));
  return entry->key_by_rowid->len;
}

static int
vtab_rowid (sqlite3_vtab_cursor *base,
            sqlite3_int64       *rowid)
{
  QStoreCursor *cursor = (QStoreCursor *) base;

  if (qstore_vtab_keyed_by_rowid (cursor->entry->schema))
    *rowid = cursor->rowid;
  else
    *rowid = rowid_for_key (cursor->entry, cursor->key, cursor->key_len);
  return SQLITE_OK;
}

/* Writes */

static GBytes *
key_for_rowid (QStoreSqlTable  *entry,
               sqlite3_value   *value,
               GError         **error)
{
  gint64 rowid = sqlite3_value_int64 (value);

  if (qstore_vtab_keyed_by_rowid (entry->schema))
    {
      g_autoptr(GByteArray) key = g_byte_array_sized_new (24);

      qstore_codec_append_integer (key, rowid, FALSE);
      return g_byte_array_free_to_bytes (g_steal_pointer (&key));
    }

  if (rowid < 1 || (guint64) rowid > entry->key_by_rowid->len)
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_FAILED,
                   "Row %" G_GINT64_FORMAT " of table “%s” is unknown: table “%s” is keyed "
                   "by its PRIMARY KEY and its rowids last one transaction; select the "
                   "row again", rowid, entry->schema->name, entry->schema->name);
      return NULL;
    }
  return g_bytes_ref (g_ptr_array_index (entry->key_by_rowid, rowid - 1));
}

static QStoreConflict
conflict_for_statement (sqlite3 *db)
{
  switch (sqlite3_vtab_on_conflict (db))
    {
    case SQLITE_ROLLBACK:
      return QSTORE_CONFLICT_ROLLBACK;
    case SQLITE_FAIL:
      return QSTORE_CONFLICT_FAIL;
    case SQLITE_IGNORE:
      return QSTORE_CONFLICT_IGNORE;
    case SQLITE_REPLACE:
      return QSTORE_CONFLICT_REPLACE;
    case SQLITE_ABORT:
    default:
      return QSTORE_CONFLICT_ABORT;
    }
}

/* Which columns the INSERT being run leaves to their DEFAULT; NULL when
 * it gives every column. */
static gboolean *
omitted_columns (QStoreSqlTable *entry)
{
  QStoreInsertShape *shape = entry->database->insert_shape;
  QStoreTableSchema *schema = entry->schema;
  gboolean *omitted;

  if (shape == NULL || g_ascii_strcasecmp (shape->table, schema->name) != 0)
    return NULL;
  if (!shape->default_values && shape->columns == NULL)
    return NULL;

  omitted = g_new0 (gboolean, MAX (schema->columns->len, 1));
  for (guint i = 0; i < schema->columns->len; i++)
    {
      const char *name = schema_column (schema, i)->name;

      omitted[i] = TRUE;
      for (guint k = 0; !shape->default_values && k < shape->columns->len; k++)
        if (g_ascii_strcasecmp (g_ptr_array_index (shape->columns, k), name) == 0)
          omitted[i] = FALSE;
    }
  return omitted;
}

/* A private copy of column @column's DEFAULT, evaluated by SQLite. */
static sqlite3_value *
evaluate_default (QStoreSqlTable  *entry,
                  guint            column,
                  GError         **error)
{
  QStoreDatabase *database = entry->database;
  QStoreColumn *col = schema_column (entry->schema, column);
  sqlite3_stmt *stmt = g_ptr_array_index (entry->default_stmts, column);
  sqlite3_value *value;
  int rc;

  if (stmt == NULL)
    {
      g_autofree char *sql = g_strdup_printf ("SELECT %s", col->default_sql);

      rc = sqlite3_prepare_v2 (database->scratch, sql, -1, &stmt, NULL);
      if (rc != SQLITE_OK)
        {
          g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                       "The DEFAULT of column “%s” of table “%s” cannot be evaluated: %s",
                       col->name, entry->schema->name, sqlite3_errmsg (database->scratch));
          return NULL;
        }
      g_ptr_array_index (entry->default_stmts, column) = stmt;
    }

  rc = sqlite3_step (stmt);
  if (rc != SQLITE_ROW)
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                   "The DEFAULT of column “%s” of table “%s” cannot be evaluated: %s",
                   col->name, entry->schema->name, sqlite3_errmsg (database->scratch));
      sqlite3_reset (stmt);
      return NULL;
    }
  value = sqlite3_value_dup (sqlite3_column_value (stmt, 0));
  sqlite3_reset (stmt);
  return value;
}

static void
values_free (sqlite3_value **copies,
             guint           n)
{
  for (guint i = 0; i < n; i++)
    sqlite3_value_free (copies[i]);
  g_free (copies);
}

static gboolean
mismatch (QStoreTableSchema  *schema,
          GError            **error)
{
  if (schema->rowid_column < 0)
    g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                 "datatype mismatch: the rowid of table “%s” takes integers only",
                 schema->name);
  else
    g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                 "datatype mismatch: column “%s” of table “%s” is an INTEGER PRIMARY KEY "
                 "and takes integers only",
                 schema_column (schema, schema->rowid_column)->name, schema->name);
  return FALSE;
}

/* The rowid SQLite passes apart (argv[1]), made an integer as SQLite
 * makes a rowid: FALSE for anything else, NULL included ("datatype
 * mismatch"). */
static gboolean
rowid_argument (sqlite3_value *value,
                gint64        *rowid)
{
  sqlite3_value *copy;
  gboolean ok;

  if (sqlite3_value_type (value) == SQLITE_INTEGER)
    {
      *rowid = sqlite3_value_int64 (value);
      return TRUE;
    }
  if (sqlite3_value_type (value) == SQLITE_NULL || (copy = sqlite3_value_dup (value)) == NULL)
    return FALSE;
  ok = qstore_affinity_to_integer (copy, rowid);
  sqlite3_value_free (copy);
  return ok;
}

static int
vtab_mismatch (sqlite3_vtab   *vtab,
               QStoreDatabase *database)
{
  GError *error = NULL;

  mismatch (((QStoreVtab *) vtab)->entry->schema, &error);
  vtab_fail (vtab, database, error);
  return SQLITE_MISMATCH;
}

static int
vtab_update (sqlite3_vtab   *vtab,
             int             argc,
             sqlite3_value **argv,
             sqlite3_int64  *rowid_out)
{
  QStoreVtab *self = (QStoreVtab *) vtab;
  QStoreSqlTable *entry = self->entry;
  QStoreDatabase *database = entry->database;
  QStoreTableSchema *schema = entry->schema;
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) old_key = NULL;
  g_autofree QStoreValue *values = NULL;
  g_autofree gboolean *omitted = NULL;
  sqlite3_value **copies;
  guint n_columns = schema->columns->len;
  gboolean keyed_by_rowid = qstore_vtab_keyed_by_rowid (schema);
  gboolean insert;
  gboolean ignored = FALSE;
  gboolean ok;
  QStoreConflict conflict;

  if (!qstore_database_check_writable (database, &error))
    return vtab_fail (vtab, database, g_steal_pointer (&error));

  if (argc == 1)
    {
      gsize key_len;
      const guint8 *key;

      if (!(old_key = key_for_rowid (entry, argv[0], &error)))
        return vtab_fail (vtab, database, g_steal_pointer (&error));
      key = g_bytes_get_data (old_key, &key_len);
      if (!qstore_table_delete_key (entry->table, key, key_len, &error))
        return vtab_fail (vtab, database, g_steal_pointer (&error));
      return SQLITE_OK;
    }

  g_assert ((guint) argc == n_columns + 2);

  insert = sqlite3_value_type (argv[0]) == SQLITE_NULL;
  if (insert)
    omitted = omitted_columns (entry);

  copies = g_new0 (sqlite3_value *, MAX (n_columns, 1));
  values = g_new0 (QStoreValue, MAX (n_columns, 1));

  for (guint i = 0; i < n_columns; i++)
    {
      QStoreColumn *column = schema_column (schema, i);

      /* SQLite ignores an INTEGER PRIMARY KEY's DEFAULT: left out, it is
       * a new rowid. */
      if (omitted != NULL && omitted[i] && column->default_sql != NULL &&
          (int) i != schema->rowid_column)
        copies[i] = evaluate_default (entry, i, &error);
      else
        copies[i] = sqlite3_value_dup (argv[2 + i]);
      if (copies[i] == NULL)
        {
          if (error == NULL)
            g_set_error_literal (&error, QSTORE_ERROR, QSTORE_ERROR_FAILED, "Out of memory");
          values_free (copies, n_columns);
          return vtab_fail (vtab, database, g_steal_pointer (&error));
        }

      if ((int) i == schema->rowid_column)
        {
          gint64 id;

          if (sqlite3_value_type (copies[i]) == SQLITE_NULL)
            values[i].type = QSTORE_VALUE_NULL;
          else if (qstore_affinity_to_integer (copies[i], &id))
            {
              values[i].type = QSTORE_VALUE_INTEGER;
              values[i].integer = id;
            }
          else
            {
              values_free (copies, n_columns);
              mismatch (schema, &error);
              vtab_fail (vtab, database, g_steal_pointer (&error));
              return SQLITE_MISMATCH;
            }
        }
      else
        {
          qstore_affinity_apply (column->affinity, copies[i], &values[i]);
        }
    }

  conflict = conflict_for_statement (database->db);

  /* Under REPLACE, SQLite puts a NOT NULL column's DEFAULT in place of a
   * NULL (without one, the NOT NULL constraint fails as usual). */
  if (conflict == QSTORE_CONFLICT_REPLACE)
    {
      for (guint i = 0; i < n_columns; i++)
        {
          QStoreColumn *column = schema_column (schema, i);
          sqlite3_value *fallback;

          if (!column->not_null || column->default_sql == NULL ||
              values[i].type != QSTORE_VALUE_NULL || (int) i == schema->rowid_column)
            continue;
          if (!(fallback = evaluate_default (entry, i, &error)))
            {
              values_free (copies, n_columns);
              return vtab_fail (vtab, database, g_steal_pointer (&error));
            }
          sqlite3_value_free (copies[i]);
          copies[i] = fallback;
          qstore_affinity_apply (column->affinity, copies[i], &values[i]);
        }
    }

  if (insert)
    {
      gint64 rowid = 0;
      gint64 explicit_rowid = 0;
      gboolean has_rowid = FALSE;

      /* `INSERT INTO t(rowid, …)`: SQLite passes the rowid apart. A table
       * keyed by another PRIMARY KEY refuses it (QStoreTable says so). */
      if (sqlite3_value_type (argv[1]) != SQLITE_NULL)
        {
          if (keyed_by_rowid && !rowid_argument (argv[1], &explicit_rowid))
            {
              values_free (copies, n_columns);
              return vtab_mismatch (vtab, database);
            }
          has_rowid = TRUE;
        }

      ok = qstore_table_insert_values_with_rowid (entry->table, values,
                                                  has_rowid ? &explicit_rowid : NULL,
                                                  conflict, &rowid, &ignored, &error);
      if (ok && !ignored)
        *rowid_out = keyed_by_rowid ? rowid : sqlite3_last_insert_rowid (database->db);
    }
  else
    {
      gint64 new_rowid = 0;
      gboolean rowid_changed = FALSE;
      gsize key_len;
      const guint8 *key;

      old_key = key_for_rowid (entry, argv[0], &error);
      ok = old_key != NULL;

      /* `UPDATE t SET rowid = …` passes the new rowid apart; anything but
       * an integer is SQLite's "datatype mismatch". */
      if (ok && !rowid_argument (argv[1], &new_rowid))
        {
          values_free (copies, n_columns);
          return vtab_mismatch (vtab, database);
        }
      rowid_changed = ok && new_rowid != sqlite3_value_int64 (argv[0]);

      if (ok)
        {
          key = g_bytes_get_data (old_key, &key_len);
          ok = qstore_table_update_values_with_rowid (entry->table, key, key_len, values,
                                                      rowid_changed ? &new_rowid : NULL,
                                                      conflict, &ignored, &error);
        }
    }

  values_free (copies, n_columns);

  if (!ok)
    return vtab_fail (vtab, database, g_steal_pointer (&error));
  /* Under OR IGNORE, SQLite takes a constraint failure as "skip the row":
   * it then counts no change and keeps last_insert_rowid(). */
  if (ignored)
    return SQLITE_CONSTRAINT;
  return SQLITE_OK;
}

/* Transactions: every table shares the coordinator, and SQLite calls each
 * hook once per table, so each one does its work only once. */

static QStoreCoordinator *
vtab_coordinator (sqlite3_vtab *vtab)
{
  return ((QStoreVtab *) vtab)->entry->database->coordinator;
}

static int
vtab_begin (sqlite3_vtab *vtab)
{
  QStoreCoordinator *coordinator = vtab_coordinator (vtab);

  if (!qstore_coordinator_in_transaction (coordinator))
    qstore_coordinator_begin (coordinator);
  return SQLITE_OK;
}

static int
vtab_sync (sqlite3_vtab *vtab)
{
  QStoreCoordinator *coordinator = vtab_coordinator (vtab);
  GError *error = NULL;

  if (qstore_coordinator_in_transaction (coordinator) &&
      !qstore_coordinator_commit (coordinator, &error))
    return vtab_fail (vtab, ((QStoreVtab *) vtab)->entry->database, error);
  return SQLITE_OK;
}

static int
vtab_commit (sqlite3_vtab *vtab)
{
  qstore_sql_table_forget_rowids (((QStoreVtab *) vtab)->entry);
  return SQLITE_OK;
}

static int
vtab_rollback (sqlite3_vtab *vtab)
{
  QStoreCoordinator *coordinator = vtab_coordinator (vtab);

  if (qstore_coordinator_in_transaction (coordinator))
    qstore_coordinator_rollback (coordinator);
  qstore_sql_table_forget_rowids (((QStoreVtab *) vtab)->entry);
  return SQLITE_OK;
}

static int
vtab_savepoint (sqlite3_vtab *vtab,
                int           depth)
{
  QStoreCoordinator *coordinator = vtab_coordinator (vtab);

  /* After a DDL-commit the coordinator has no transaction any more, while
   * SQLite's goes on. */
  if (!qstore_coordinator_in_transaction (coordinator))
    qstore_coordinator_begin (coordinator);
  qstore_coordinator_savepoint (coordinator, depth);
  return SQLITE_OK;
}

static int
vtab_release (sqlite3_vtab *vtab,
              int           depth)
{
  QStoreCoordinator *coordinator = vtab_coordinator (vtab);

  if (qstore_coordinator_in_transaction (coordinator))
    qstore_coordinator_release (coordinator, depth);
  return SQLITE_OK;
}

static int
vtab_rollback_to (sqlite3_vtab *vtab,
                  int           depth)
{
  QStoreCoordinator *coordinator = vtab_coordinator (vtab);

  if (qstore_coordinator_in_transaction (coordinator))
    qstore_coordinator_rollback_to (coordinator, depth);
  return SQLITE_OK;
}

static int
vtab_rename (sqlite3_vtab *vtab,
             const char   *new_name)
{
  QStoreVtab *self = (QStoreVtab *) vtab;
  GError *error = NULL;

  if (!self->entry->database->rename_table (self->entry->database, self->entry, new_name,
                                                &error))
    return vtab_fail (vtab, self->entry->database, error);
  return SQLITE_OK;
}

/* Connecting */

static int
vtab_connect (sqlite3            *db,
              void               *aux,
              int                 argc,
              const char * const *argv,
              sqlite3_vtab      **out,
              char              **errmsg)
{
  QStoreDatabase *database = aux;
  g_autofree char *declaration = NULL;
  QStoreSqlTable *entry;
  QStoreVtab *vtab;
  int rc;

  entry = argc >= 3 ? qstore_database_lookup (database, argv[2]) : NULL;
  if (entry == NULL)
    {
      *errmsg = sqlite3_mprintf ("Table “%s” is not a qstore table: create it with "
                                 "CREATE TABLE", argc >= 3 ? argv[2] : "");
      return SQLITE_ERROR;
    }

  declaration = qstore_vtab_declaration (entry->schema);
  rc = sqlite3_declare_vtab (db, declaration);
  if (rc != SQLITE_OK)
    {
      *errmsg = sqlite3_mprintf ("Table “%s” cannot be declared to SQLite (%s): %s",
                                 entry->schema->name, sqlite3_errmsg (db), declaration);
      return rc;
    }
  sqlite3_vtab_config (db, SQLITE_VTAB_CONSTRAINT_SUPPORT, 1);

  vtab = g_new0 (QStoreVtab, 1);
  vtab->entry = qstore_sql_table_ref (entry);
  *out = &vtab->base;
  return SQLITE_OK;
}

static int
vtab_disconnect (sqlite3_vtab *base)
{
  QStoreVtab *vtab = (QStoreVtab *) base;

  g_clear_pointer (&vtab->spare, cursor_free);
  g_clear_pointer (&vtab->last_key, g_byte_array_unref);
  g_clear_pointer (&vtab->last_row, g_byte_array_unref);
  sqlite3_free (vtab->base.zErrMsg);
  qstore_sql_table_unref (vtab->entry);
  g_free (vtab);
  return SQLITE_OK;
}

static const sqlite3_module qstore_module = {
  .iVersion = 2,
  .xCreate = vtab_connect,
  .xConnect = vtab_connect,
  .xBestIndex = vtab_best_index,
  .xDisconnect = vtab_disconnect,
  /* The stores are erased by the DROP TABLE handling before SQLite drops
   * the virtual table. */
  .xDestroy = vtab_disconnect,
  .xOpen = vtab_open,
  .xClose = vtab_close,
  .xFilter = vtab_filter,
  .xNext = vtab_next,
  .xEof = vtab_eof,
  .xColumn = vtab_column,
  .xRowid = vtab_rowid,
  .xUpdate = vtab_update,
  .xBegin = vtab_begin,
  .xSync = vtab_sync,
  .xCommit = vtab_commit,
  .xRollback = vtab_rollback,
  .xRename = vtab_rename,
  .xSavepoint = vtab_savepoint,
  .xRelease = vtab_release,
  .xRollbackTo = vtab_rollback_to,
};

gboolean
qstore_vtab_register_module (QStoreDatabase  *self,
                             GError         **error)
{
  int rc;

  rc = sqlite3_create_module_v2 (self->db, QSTORE_VTAB_MODULE_NAME, &qstore_module, self, NULL);
  if (rc != SQLITE_OK)
    {
      qstore_database_set_sqlite_error (self, self->db, rc, error);
      return FALSE;
    }
  return TRUE;
}
