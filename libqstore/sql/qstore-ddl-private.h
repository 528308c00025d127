/* qstore-ddl-private.h: DDL on qstore tables, and the little SQL
 * recognition SQLite cannot do for virtual tables
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "qstore-database-private.h"

G_BEGIN_DECLS

/* What a statement starts with, for the kinds SQLite refuses to prepare on
 * a virtual table (or cannot see, for indexes that live on scratch). */
typedef enum
{
  QSTORE_SQL_LEAD_OTHER,
  QSTORE_SQL_LEAD_CREATE_INDEX,
  QSTORE_SQL_LEAD_DROP_INDEX,
  QSTORE_SQL_LEAD_ALTER_TABLE,
} QStoreSqlLead;

/* @name as an SQL identifier, in double quotes. */
char              *qstore_sql_quote             (const char          *name);
/* Skips white space, comments and empty statements. */
const char        *qstore_sql_skip_space        (const char          *sql);
QStoreSqlLead      qstore_sql_lead              (const char          *sql);
/* The target and column list of an INSERT (or REPLACE) statement; NULL
 * when @sql is not one this scan understands. */
QStoreInsertShape *qstore_sql_insert_shape      (const char          *sql);
void               qstore_insert_shape_free     (QStoreInsertShape   *shape);
typedef enum
{
  QSTORE_SQL_ALTER_OTHER,
  QSTORE_SQL_ALTER_ADD_COLUMN,
  QSTORE_SQL_ALTER_RENAME_COLUMN,
  QSTORE_SQL_ALTER_DROP_COLUMN,
  /* The arms SQLite lacks (qstore-alter-private.h) */
  QSTORE_SQL_ALTER_COLUMN,              /* ALTER [COLUMN] c SET|DROP … */
  QSTORE_SQL_ALTER_ADD_CONSTRAINT,
  QSTORE_SQL_ALTER_DROP_CONSTRAINT,
  QSTORE_SQL_ALTER_RENAME_CONSTRAINT,
  QSTORE_SQL_ALTER_PRIMARY_KEY,
} QStoreSqlAlter;

/* What @sql, ALTER TABLE …, does to columns. */
QStoreSqlAlter     qstore_sql_alter_kind        (const char          *sql);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (QStoreInsertShape, qstore_insert_shape_free)

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

/* Handlers. @sql is one statement. */
gboolean  qstore_ddl_check_conflict_clauses (const char  *table,
                                             const char  *old_sql,
                                             const char  *new_sql,
                                             GError     **error);
gboolean  qstore_ddl_create_table   (QStoreDatabase     *self,
                                     const char         *sql,
                                     const char         *name,
                                     GError            **error);
gboolean  qstore_ddl_drop_table     (QStoreDatabase     *self,
                                     sqlite3_stmt       *stmt,
                                     const char         *name,
                                     GError            **error);
/* Prepare @sql on scratch; *tail gets the rest. */
gboolean  qstore_ddl_create_index   (QStoreDatabase     *self,
                                     const char         *sql,
                                     const char        **tail,
                                     GError            **error);
/* Whether @sql, DROP INDEX …, drops an index of a qstore table: 1 if so,
 * 0 if not, -1 with @error when SQLite refuses it on such a table. */
int       qstore_ddl_is_index_drop  (QStoreDatabase     *self,
                                     const char         *sql,
                                     GError            **error);
gboolean  qstore_ddl_drop_index     (QStoreDatabase     *self,
                                     const char         *sql,
                                     const char        **tail,
                                     GError            **error);
/* ALTER TABLE … ADD COLUMN, RENAME COLUMN or DROP COLUMN on a qstore
 * table, which SQLite refuses to prepare on a virtual table. */
gboolean  qstore_ddl_alter_columns  (QStoreDatabase     *self,
                                     const char         *sql,
                                     const char        **tail,
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
