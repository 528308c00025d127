/* qstore-mview-private.h: how the database keeps its materialized views
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "qstore-catalog-private.h"
#include "qstore-database-private.h"
#include "qstore-materialized-view.h"

G_BEGIN_DECLS

typedef struct _QStoreMViews QStoreMViews;

/* Made at open (before the catalog is read), freed by teardown before the
 * SQLite connections close. */
QStoreMViews *qstore_mviews_new                   (QStoreDatabase  *db);
void          qstore_mviews_free                  (QStoreMViews    *self);

typedef enum
{
  QSTORE_MVIEW_STATEMENT_NONE,      /* not ours: run it as usual */
  QSTORE_MVIEW_STATEMENT_DDL,       /* CREATE / DROP / REFRESH MATERIALIZED VIEW */
  QSTORE_MVIEW_STATEMENT_SETTING,   /* PRAGMA materialized_view_rebuild_row_threshold */
  QSTORE_MVIEW_STATEMENT_REFUSED,   /* error set: DDL on a view's contents */
} QStoreMViewStatement;

/* What the statement at @sql is to the views. Called for every statement
 * before SQLite prepares it. */
QStoreMViewStatement qstore_mview_classify_statement (QStoreDatabase  *db,
                                                      const char      *sql,
                                                      GError         **error);
/* Runs the DDL statement at @sql (DDL-commit already happened); *tail
 * gets where the next statement starts. */
gboolean      qstore_mview_run_ddl                (QStoreDatabase  *db,
                                                   const char      *sql,
                                                   const char     **tail,
                                                   GError         **error);
gboolean      qstore_mview_run_setting            (QStoreDatabase  *db,
                                                   const char      *sql,
                                                   const char     **tail,
                                                   QStoreResult   **result,
                                                   GError         **error);
/* Refuses DDL on table or view @ddl_table (DROP TABLE, ALTER TABLE …
 * RENAME, CREATE TABLE, CREATE VIEW) and writes to @dml_table when they
 * are aimed at a materialized view or its name; either may be NULL. */
gboolean      qstore_mview_check_target           (QStoreDatabase  *db,
                                                   const char      *ddl_table,
                                                   const char      *dml_table,
                                                   GError         **error);
/* Before any DDL statement (outside any transaction): with an atomic
 * provider, every view is durably listed as stale, since the DDL's commit
 * may change what a view reads before the true set can be written. */
void          qstore_mview_before_ddl             (QStoreDatabase  *db);
/* After any DDL statement (failed or not, outside any transaction): the
 * views whose definition now reads something else go stale. */
void          qstore_mview_after_ddl              (QStoreDatabase  *db);
/* Before a cursor reads @mview's contents (QStoreSqlTable.mview): work
 * deferred in the transaction is done first. */
gboolean      qstore_mview_before_read            (gpointer         mview,
                                                   GError         **error);

/* Open and close */
char         *qstore_mview_definition_body        (const char      *name,
                                                   const char      *definition,
                                                   GError         **error);
void          qstore_mview_queue_rehydrate        (QStoreDatabase  *db,
                                                   const char      *schema,
                                                   const char      *name,
                                                   const char      *definition);
/* Phase 3 of the rehydration, once tables are loaded and repaired. */
void          qstore_mview_rehydrate              (QStoreDatabase  *db);
/* The JSON array of the views stale now, as the clean-shutdown marker
 * and the durable stale set hold it. */
char         *qstore_mview_stale_json             (QStoreDatabase  *db);
/* At close, before the marker: the durable stale set, when the provider
 * has an atomic batch. */
gboolean      qstore_mview_write_durable_set      (QStoreDatabase  *db,
                                                   GError         **error);

G_END_DECLS
