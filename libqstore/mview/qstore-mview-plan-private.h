/* qstore-mview-plan-private.h: planning a view's body
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "qstore-database-private.h"
#include "qstore-materialized-view.h"

G_BEGIN_DECLS

typedef struct
{
  char            *name;          /* in the backing */
  char            *body_name;     /* as `SELECT * FROM (body)` names it */
  char            *decl_type;     /* NULL: none */
  QStoreCollation  collation;
  char            *origin_db;     /* of a plain reference to a source column, or NULL */
  char            *origin_table;  /* lower-cased */
  char            *origin_column;
} PlanColumn;

typedef struct
{
  char     *name;                 /* as the table spells it */
  char     *lower;
  gboolean  temp;
  char     *primary_key;          /* what its key is made of, for the staleness check */
} PlanSource;

typedef struct
{
  char *table;                    /* lower-cased; "temp." prefixed for TEMP tables */
  char *column;                   /* "" when the body reads no column of it */
  char *signature;                /* declared type and collation, NULL when absent */
} PlanRead;

typedef struct
{
  GPtrArray                      *sources;      /* PlanSource, sorted */
  GPtrArray                      *reads;        /* PlanRead, sorted */
  GPtrArray                      *columns;      /* PlanColumn */
  GArray                         *key_out;      /* guint: backing columns of its primary key */
  GArray                         *key_src;      /* guint: the source column of each */
  int                             source;       /* the one source of a keyed view, or -1 */
  QStoreMaterializedViewStrategy  strategy;
  gboolean                        has_temp;
  char                           *backing_sql;  /* the backing's CREATE TABLE */
  char                           *all_sql;      /* SELECT * FROM (body) */
  char                           *key_sql;      /* … WHERE key IS ?, keyed views only */
} Plan;



char *qstore_mview_lower (const char *name);
char *qstore_mview_qualified (const char *name);
guint qstore_mview_name_hash (gconstpointer key);
gboolean qstore_mview_name_equal (gconstpointer a,
                                  gconstpointer b);
void qstore_mview_plan_free (Plan *plan);
gboolean qstore_mview_plan_is_keyed (const Plan *plan);
PlanSource *qstore_mview_plan_find_source (const Plan *plan,
                                           const char *lower_name,
                                           gboolean    temp);
gboolean qstore_mview_set_sqlite_error (QStoreDatabase  *db,
                                        sqlite3         *conn,
                                        int              rc,
                                        const char      *view,
                                        GError         **error);
Plan *qstore_mview_plan_new (QStoreDatabase  *db,
                             const char      *name,
                             const char      *body,
                             GPtrArray       *column_names,
                             GError         **error);
/* The same for a view that errors call @label (such as a replica's
 * “Live query 7”). */
Plan *qstore_mview_plan_new_for (QStoreDatabase  *db,
                                 const char      *label,
                                 const char      *name,
                                 const char      *body,
                                 GPtrArray       *column_names,
                                 GError         **error);
char *qstore_mview_plan_difference (const Plan *old,
                                    const Plan *new);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (Plan, qstore_mview_plan_free)

G_END_DECLS
