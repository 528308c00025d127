/* qstore-vtab-plan-private.h: how a statement walks a qstore table
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "qstore-database-private.h"

G_BEGIN_DECLS

/* The plan, packed into idxNum. */
#define PLAN_SCAN  0
#define PLAN_PK    1
#define PLAN_INDEX 2
/* A statement's automatic index (qstore-vtab-auto.c): the column in the
 * index bits, the comparison's collation in PLAN_COLLATION. */
#define PLAN_AUTO  3

#define BOUND_NONE      0
#define BOUND_STRICT    1
#define BOUND_INCLUSIVE 2

#define PLAN_MAX_PARTS   63
#define PLAN_MAX_INDEXES 255
#define PLAN_MAX_AUTO_COLUMN 255

#define PLAN_PACK(kind, index, n_eq, lower, upper, reverse) \
  ((kind) | ((index) << 2) | ((n_eq) << 10) | ((lower) << 16) | ((upper) << 18) | ((reverse) << 20))
#define PLAN_KIND(n)    ((n) & 0x3)
#define PLAN_INDEX_NO(n) (((n) >> 2) & 0xff)
#define PLAN_N_EQ(n)    (((n) >> 10) & 0x3f)
#define PLAN_LOWER(n)   (((n) >> 16) & 0x3)
#define PLAN_UPPER(n)   (((n) >> 18) & 0x3)
#define PLAN_REVERSE(n) (((n) >> 20) & 0x1)
#define PLAN_PACK_COLLATION(collation) ((collation) << 21)
#define PLAN_COLLATION(n) ((QStoreCollation) (((n) >> 21) & 0x3))
/* A walk (not PLAN_AUTO) may also check one equality on a column it does
 * not seek on, before SQLite sees a row: the column plus one in the filter
 * bits (0: none), the comparison's collation in PLAN_COLLATION, the value
 * in the last argument. */
#define PLAN_MAX_FILTER_COLUMN 126
#define PLAN_PACK_FILTER(column) (((column) + 1) << 23)
#define PLAN_FILTER(n)  ((int) (((n) >> 23) & 0x7f) - 1)
/* An index walk whose keys hold every column the statement reads
 * (qstore_vtab_part_is_exact()): the rows themselves are not read. */
#define PLAN_PACK_COVERING (1 << 30)
#define PLAN_COVERING(n) (((n) >> 30) & 0x1)
/* A seek whose key window holds exactly the rows its constraints select
 * (plan_candidate() in qstore-vtab-plan.c tells which): SQLite does not check them
 * again, so a NULL argument must select nothing. */
#define PLAN_PACK_EXACT ((int) 0x80000000u)
#define PLAN_EXACT(n) (((guint) (n) >> 31) & 0x1)

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

const char *qstore_collation_name (QStoreCollation collation);
gboolean qstore_vtab_part_is_exact (const Part *part);
gboolean qstore_vtab_keyed_by_rowid (QStoreTableSchema *schema);
QStoreColumn *qstore_vtab_schema_column (QStoreTableSchema *schema,
                                         guint              column);
GArray *qstore_vtab_plan_parts (QStoreTableSchema *schema,
                                int                index,
                                guint             *n_searchable);
int qstore_vtab_best_index (QStoreSqlTable     *entry,
                            sqlite3_index_info *info);
void qstore_vtab_window_clear (Window *window);
gboolean qstore_vtab_encode_constraint (const Part    *part,
                                        sqlite3_value *arg,
                                        GByteArray    *out,
                                        gboolean      *certain,
                                        GError       **error);
gboolean qstore_vtab_build_windows (GArray          *windows,
                                    GArray          *parts,
                                    int              idx_num,
                                    int              argc,
                                    sqlite3_value  **argv,
                                    GError         **error);

G_END_DECLS
