/* qstore-sql-token-private.h: the little SQL tokenising qstore does itself
 *
 * SQLite parses SQL; qstore only recognises the few statement shapes SQLite
 * lacks or refuses on virtual tables, and the shape of a view's body.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <glib.h>
#include <sqlite3.h>

G_BEGIN_DECLS

G_DEFINE_AUTOPTR_CLEANUP_FUNC (sqlite3_stmt, sqlite3_finalize)

typedef enum
{
  QSTORE_SQL_TOKEN_END,
  QSTORE_SQL_TOKEN_WORD,
  QSTORE_SQL_TOKEN_QUOTED,    /* "id", `id`, [id] */
  QSTORE_SQL_TOKEN_STRING,    /* 'text', x'0102' */
  QSTORE_SQL_TOKEN_NUMBER,    /* 12, 1.5e3 */
  QSTORE_SQL_TOKEN_PUNCT,
} QStoreSqlTokenKind;

typedef struct
{
  QStoreSqlTokenKind  kind;
  const char         *start;
  gsize               len;
  guint               depth;   /* parentheses around it: set by qstore_sql_tokenize() */
} QStoreSqlToken;

/* Skips white space and comments. */
const char *qstore_sql_skip_blank     (const char           *p);
/* Reads the token at @p into @token; returns where the next one starts. */
const char *qstore_sql_next_token     (const char           *p,
                                       QStoreSqlToken       *token);
/* Whether @token is the keyword @word (ASCII case-insensitive). */
gboolean    qstore_sql_token_is       (const QStoreSqlToken *token,
                                       const char           *word);
gboolean    qstore_sql_token_is_punct (const QStoreSqlToken *token,
                                       char                  c);
/* Every token of @sql (an array of QStoreSqlToken), each with its
 * parenthesis depth; a closing parenthesis sits at its opening one's. */
GArray     *qstore_sql_tokenize       (const char           *sql);
/* The identifier a word, quoted or string token spells, unquoted. */
char       *qstore_sql_token_name     (const QStoreSqlToken *token);
/* Whether @token can be a name: SQLite also takes a string literal where
 * a name goes. */
gboolean    qstore_sql_token_is_name  (const QStoreSqlToken *token);

/* @name as an SQL identifier, in double quotes. */
char       *qstore_sql_quote          (const char           *name);
/* Skips white space, comments and empty statements. */
const char *qstore_sql_skip_space     (const char           *sql);
/* Where the statement that starts at @sql ends: after its `;`, as
 * sqlite3_complete() decides (a trigger's body holds `;` of its own), or
 * at the end of the text. */
const char *qstore_sql_statement_end  (const char           *sql);

G_END_DECLS
