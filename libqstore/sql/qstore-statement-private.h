/* qstore-statement-private.h: one SQL statement, read once
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <sqlite3.h>

#include <glib.h>

G_BEGIN_DECLS

/* What a statement is to qstore. Statements SQLite runs as they are
 * (queries, DML, TEMP objects, transaction control, PRAGMAs that are not
 * qstore's) are QSTORE_STATEMENT_SQL; every other kind has one handler
 * (qstore-router-private.h). */
typedef enum
{
  QSTORE_STATEMENT_EMPTY,                       /* blanks and comments only */
  QSTORE_STATEMENT_SQL,
  QSTORE_STATEMENT_CREATE_TABLE,
  QSTORE_STATEMENT_DROP_TABLE,
  QSTORE_STATEMENT_RENAME_TABLE,                /* ALTER TABLE … RENAME TO */
  QSTORE_STATEMENT_ALTER_TABLE,                 /* ADD COLUMN, RENAME COLUMN */
  QSTORE_STATEMENT_ALTER_TABLE_ARM,             /* DROP COLUMN and the arms SQLite lacks */
  QSTORE_STATEMENT_CREATE_INDEX,
  QSTORE_STATEMENT_DROP_INDEX,
  QSTORE_STATEMENT_REINDEX,                     /* REINDEX of a qstore table or index */
  QSTORE_STATEMENT_CREATE_VIEW,
  QSTORE_STATEMENT_DROP_VIEW,
  QSTORE_STATEMENT_CREATE_MATERIALIZED_VIEW,
  QSTORE_STATEMENT_DROP_MATERIALIZED_VIEW,
  QSTORE_STATEMENT_REFRESH_MATERIALIZED_VIEW,
  QSTORE_STATEMENT_SETTING,                     /* PRAGMA [main.]name [= value] of qstore's */
  QSTORE_STATEMENT_N_KINDS
} QStoreStatementKind;

/* What ALTER TABLE does, for QSTORE_STATEMENT_ALTER_TABLE. */
typedef enum
{
  QSTORE_ALTER_OTHER,
  QSTORE_ALTER_ADD_COLUMN,
  QSTORE_ALTER_RENAME_COLUMN,
  QSTORE_ALTER_DROP_COLUMN,
  /* The arms SQLite lacks */
  QSTORE_ALTER_COLUMN,                          /* ALTER [COLUMN] c SET|DROP … */
  QSTORE_ALTER_ADD_CONSTRAINT,
  QSTORE_ALTER_DROP_CONSTRAINT,
  QSTORE_ALTER_RENAME_CONSTRAINT,
  QSTORE_ALTER_PRIMARY_KEY,
} QStoreAlterKind;

/* What an INSERT leaves to the columns' DEFAULT. */
typedef struct
{
  char      *table;                 /* as written */
  gboolean   default_values;        /* INSERT … DEFAULT VALUES */
  GPtrArray *columns;               /* char *: the column list; NULL when none is given */
} QStoreInsertShape;

typedef struct
{
  QStoreStatementKind  kind;
  const char          *start;       /* where it starts in the text given */
  const char          *end;         /* where the next one starts */
  char                *text;        /* the statement alone */

  /* The object it creates, drops, alters, refreshes or sets (unquoted, as
   * written), its schema when one is written, and IF [NOT] EXISTS. For an
   * index: the index, and @table the table it is on (REINDEX of a whole
   * table: @table, and no @name). */
  char                *schema;
  char                *name;
  char                *name_text;   /* @name's token as written */
  char                *table;
  gboolean             if_exists;
  /* Set when the statement is one of qstore's forms but malformed: the
   * handler reports it in its own words. */
  gboolean             malformed;

  QStoreAlterKind      alter;
  char                *new_name;    /* ALTER TABLE … RENAME TO: the new name */

  /* CREATE MATERIALIZED VIEW: the column list (char *, or NULL) and where
   * the SELECT starts in @text. */
  GPtrArray           *columns;
  const char          *body;

  /* SETTING: the value given (NULL to read the setting). */
  char                *value;

  /* ROLLBACK [TO …]: SQLite's rollback hook does not see ROLLBACK TO. */
  gboolean             rolls_back;

  /* What SQLite made of it: the statement prepared on the main
   * connection (NULL for the kinds SQLite has no words for), whether it
   * writes rows of any table or reads any, the qstore table an INSERT,
   * UPDATE or DELETE writes, and for an INSERT what its DEFAULTs are. */
  sqlite3_stmt        *stmt;
  gboolean             writes;
  gboolean             reads;
  int                  dml_action;
  char                *dml_table;
  QStoreInsertShape   *insert_shape;
} QStoreStatement;

/* Reads a statement of qstore's own syntax without a database: what the
 * catalog keeps of a materialized view, for instance. */
void       qstore_statement_parse       (const char         *sql,
                                         QStoreStatement    *statement);
void       qstore_statement_clear       (QStoreStatement    *statement);
/* What the INSERT @sql leaves to the columns' DEFAULT; NULL when @sql is
 * not an INSERT. */
QStoreInsertShape *qstore_statement_insert_shape (const char *sql);
/* The query of a materialized view's catalog entry, `CREATE MATERIALIZED
 * VIEW name AS …`, trimmed; %NULL with %QSTORE_ERROR_CORRUPT when it is
 * not one qstore wrote for @name. @parsed gets the whole statement. */
char      *qstore_statement_definition_body (const char      *name,
                                             const char      *definition,
                                             QStoreStatement *parsed,
                                             GError         **error);
/* The statement's form, such as `DROP MATERIALIZED VIEW`, for messages. */
const char *qstore_statement_verb       (QStoreStatementKind kind);

void       qstore_insert_shape_free     (QStoreInsertShape  *shape);

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (QStoreStatement, qstore_statement_clear)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (QStoreInsertShape, qstore_insert_shape_free)

G_END_DECLS
