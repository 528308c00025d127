/* qstore-ddl-private.h: DDL on qstore tables
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "qstore-database-private.h"
#include "qstore-result.h"

G_BEGIN_DECLS

/* What every DDL statement shares (qstore-ddl.c) */

/* Scratch work is undone as a whole when anything later fails. */
gboolean  qstore_ddl_scratch_begin      (QStoreDatabase     *self,
                                         GError            **error);
gboolean  qstore_ddl_scratch_commit     (QStoreDatabase     *self,
                                         GError            **error);
void      qstore_ddl_scratch_undo       (QStoreDatabase     *self);

/* What the authorizer saw of a statement prepared on scratch: the first
 * index created or dropped, or the table altered. */
typedef struct
{
  int   action;
  char *name;
  char *table;
} QStoreScratchAction;

void      qstore_scratch_action_clear   (QStoreScratchAction *seen);
/* Prepares @sql on scratch; *@tail (when given) gets the rest. */
sqlite3_stmt *qstore_ddl_prepare_on_scratch (QStoreDatabase      *self,
                                             const char          *sql,
                                             const char         **tail,
                                             QStoreScratchAction *seen,
                                             GError             **error);
gboolean  qstore_ddl_step_on_scratch    (QStoreDatabase     *self,
                                         sqlite3_stmt       *stmt,
                                         GError            **error);

/* For commits that drop no store but must be all or nothing. */
extern const char * const qstore_ddl_no_stores[];
/* The names of @schema's indexes, NULL-terminated (not owned). */
GPtrArray *qstore_ddl_index_names       (QStoreTableSchema  *schema);
gboolean  qstore_ddl_store_is_empty     (QStoreDatabase     *self,
                                         const char         *store_name,
                                         gboolean           *empty,
                                         GError            **error);
/* Refuses store names another table uses (COLLISION, naming both) or
 * that still hold entries of a table no longer in the catalog. */
gboolean  qstore_ddl_check_new_store    (QStoreDatabase     *self,
                                         GHashTable         *used,
                                         const char         *store_name,
                                         const char         *what,
                                         GError            **error);
/* The same for every store of @schema, other tables but @except. */
gboolean  qstore_ddl_check_table_stores (QStoreDatabase     *self,
                                         QStoreTableSchema  *schema,
                                         const char         *except,
                                         GError            **error);
void      qstore_ddl_add_op             (GArray             *ops,
                                         QStoreKV           *store,
                                         QStoreWriteOpKind   kind,
                                         GBytes             *key,
                                         const char         *value);
/* Refuses a constraint's own ON CONFLICT clause, unless the table had one
 * before (so that tables made before the rule can still be altered). */
gboolean  qstore_ddl_check_conflict_clauses (const char  *table,
                                             const char  *old_sql,
                                             const char  *new_sql,
                                             GError     **error);
/* Refuses what qstore tables do not support (STRICT, generated columns). */
gboolean  qstore_ddl_check_supported_table (QStoreDatabase  *self,
                                            const char      *name,
                                            GError         **error);
/* The position of index @name in @schema, or -1. */
int       qstore_ddl_find_index         (QStoreTableSchema  *schema,
                                         const char         *name);

/* A row put for a moment in the (empty) scratch mirror of a table:
 * SQLite applies its NOT NULL and CHECK constraints, with its own
 * messages, and says which partial indexes hold the row. */
typedef struct
{
  sqlite3_stmt *insert;
  sqlite3_stmt *predicates;   /* NULL without partial indexes to test */
  sqlite3_stmt *clear;
  guint         n_columns;
} QStoreMirror;

/* @partial: (nullable): the partial indexes whose predicates
 * qstore_mirror_put() reports, in order. */
gboolean  qstore_mirror_prepare     (QStoreDatabase     *self,
                                     QStoreTableSchema  *schema,
                                     GPtrArray          *partial,
                                     QStoreMirror       *mirror,
                                     GError            **error);
/* Puts @values in the mirror, which must take them, and with @holds
 * reads which partial indexes hold the row. */
gboolean  qstore_mirror_put         (QStoreDatabase     *self,
                                     QStoreMirror       *mirror,
                                     const QStoreValue  *values,
                                     gboolean           *holds,
                                     GError            **error);
void      qstore_mirror_clear       (QStoreMirror       *mirror);

/* SQLite's message for a UNIQUE violation over @parts of @schema. */
char     *qstore_ddl_unique_message  (QStoreTableSchema  *schema,
                                      GArray             *parts);
gboolean  qstore_ddl_build_indexes   (QStoreDatabase     *self,
                                      QStoreTable        *table,
                                      GArray             *build,
                                      gboolean            check_unique,
                                      GError            **error);

gboolean  qstore_ddl_build_one_index    (QStoreDatabase     *self,
                                         QStoreTable        *table,
                                         guint               position,
                                         gboolean            check_unique,
                                         GError            **error);

/* Erases every entry of index @position of @table and fills it again from
 * the rows, in the coordinator's open transaction. */
gboolean  qstore_ddl_rebuild_index      (QStoreDatabase     *self,
                                         QStoreTable        *table,
                                         guint               position,
                                         gboolean            check_unique,
                                         GError            **error);

/* Statement handlers (qstore-ddl-table.c, qstore-ddl-index.c) */

gboolean  qstore_ddl_create_table   (QStoreDatabase     *self,
                                     QStoreStatement    *statement,
                                     QStoreResult      **result,
                                     GError            **error);
gboolean  qstore_ddl_drop_table     (QStoreDatabase     *self,
                                     QStoreStatement    *statement,
                                     QStoreResult      **result,
                                     GError            **error);
/* ALTER TABLE … ADD COLUMN or RENAME COLUMN on a qstore table, which
 * SQLite refuses to prepare on a virtual table: run on scratch. */
gboolean  qstore_ddl_alter_columns  (QStoreDatabase     *self,
                                     QStoreStatement    *statement,
                                     QStoreResult      **result,
                                     GError            **error);
/* ALTER TABLE … RENAME TO. */
gboolean  qstore_ddl_rename         (QStoreDatabase     *self,
                                     QStoreStatement    *statement,
                                     QStoreResult      **result,
                                     GError            **error);
gboolean  qstore_ddl_create_index   (QStoreDatabase     *self,
                                     QStoreStatement    *statement,
                                     QStoreResult      **result,
                                     GError            **error);
gboolean  qstore_ddl_drop_index     (QStoreDatabase     *self,
                                     QStoreStatement    *statement,
                                     QStoreResult      **result,
                                     GError            **error);
/* REINDEX of a qstore index, or of every index of a qstore table. */
gboolean  qstore_ddl_reindex        (QStoreDatabase     *self,
                                     QStoreStatement    *statement,
                                     QStoreResult      **result,
                                     GError            **error);

/* Called by xRename: moves the stores and rewrites the catalog. */
gboolean  qstore_ddl_rename_table   (QStoreDatabase     *self,
                                     QStoreSqlTable     *entry,
                                     const char         *new_name,
                                     GError            **error);

/* After a commit without an atomic batch was interrupted, rebuilds the
 * indexes and recounts the rows of the tables it was writing. */
gboolean  qstore_ddl_repair_interrupted_commit (QStoreDatabase  *self,
                                                GError         **error);

G_END_DECLS
