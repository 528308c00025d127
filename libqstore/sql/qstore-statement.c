/* qstore-statement.c: the statement forms qstore reads itself
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "qstore-error.h"
#include "qstore-i18n-private.h"
#include "qstore-sql-token-private.h"
#include "qstore-statement-private.h"

/* SQLite parses SQL. What it has no syntax for (materialized views,
 * qstore's settings, the ALTER arms) or refuses on a virtual table before
 * any callback (CREATE INDEX, ALTER TABLE) is recognised here from its
 * leading words; the router (qstore-router.c) does the rest with SQLite's
 * authorizer. */

void
qstore_insert_shape_free (QStoreInsertShape *shape)
{
  if (shape == NULL)
    return;
  g_free (shape->table);
  g_clear_pointer (&shape->columns, g_ptr_array_unref);
  g_free (shape);
}

void
qstore_statement_clear (QStoreStatement *statement)
{
  g_clear_pointer (&statement->text, g_free);
  g_clear_pointer (&statement->schema, g_free);
  g_clear_pointer (&statement->name, g_free);
  g_clear_pointer (&statement->name_text, g_free);
  g_clear_pointer (&statement->table, g_free);
  g_clear_pointer (&statement->new_name, g_free);
  g_clear_pointer (&statement->columns, g_ptr_array_unref);
  g_clear_pointer (&statement->value, g_free);
  g_clear_pointer (&statement->stmt, sqlite3_finalize);
  g_clear_pointer (&statement->dml_table, g_free);
  g_clear_pointer (&statement->insert_shape, qstore_insert_shape_free);
  memset (statement, 0, sizeof *statement);
}

const char *
qstore_statement_verb (QStoreStatementKind kind)
{
  switch (kind)
    {
    case QSTORE_STATEMENT_CREATE_MATERIALIZED_VIEW:
      return "CREATE MATERIALIZED VIEW";
    case QSTORE_STATEMENT_DROP_MATERIALIZED_VIEW:
      return "DROP MATERIALIZED VIEW";
    case QSTORE_STATEMENT_REFRESH_MATERIALIZED_VIEW:
      return "REFRESH MATERIALIZED VIEW";
    case QSTORE_STATEMENT_SETTING:
      return "PRAGMA";
    case QSTORE_STATEMENT_CREATE_TABLE:
      return "CREATE TABLE";
    case QSTORE_STATEMENT_DROP_TABLE:
      return "DROP TABLE";
    case QSTORE_STATEMENT_RENAME_TABLE:
    case QSTORE_STATEMENT_ALTER_TABLE:
    case QSTORE_STATEMENT_ALTER_TABLE_ARM:
      return "ALTER TABLE";
    case QSTORE_STATEMENT_CREATE_INDEX:
      return "CREATE INDEX";
    case QSTORE_STATEMENT_DROP_INDEX:
      return "DROP INDEX";
    case QSTORE_STATEMENT_REINDEX:
      return "REINDEX";
    case QSTORE_STATEMENT_CREATE_VIEW:
      return "CREATE VIEW";
    case QSTORE_STATEMENT_DROP_VIEW:
      return "DROP VIEW";
    case QSTORE_STATEMENT_EMPTY:
    case QSTORE_STATEMENT_SQL:
    case QSTORE_STATEMENT_N_KINDS:
    default:
      return "";
    }
}

/* Reads `[schema.]name` at @p into @statement; NULL when there is none.
 * @strict takes no string literal for a name (qstore's own forms). */
static const char *
read_name (const char      *p,
           gboolean         strict,
           QStoreStatement *statement)
{
  QStoreSqlToken first, dot, second;
  const char *after_first, *after_dot;

  after_first = qstore_sql_next_token (p, &first);
  if (!qstore_sql_token_is_name (&first) || (strict && first.kind == QSTORE_SQL_TOKEN_STRING))
    return NULL;
  after_dot = qstore_sql_next_token (after_first, &dot);
  if (qstore_sql_token_is_punct (&dot, '.'))
    {
      const char *after_second = qstore_sql_next_token (after_dot, &second);

      if (!qstore_sql_token_is_name (&second) ||
          (strict && second.kind == QSTORE_SQL_TOKEN_STRING))
        return NULL;
      statement->schema = qstore_sql_token_name (&first);
      statement->name = qstore_sql_token_name (&second);
      statement->name_text = g_strndup (second.start, second.len);
      return after_second;
    }
  statement->name = qstore_sql_token_name (&first);
  statement->name_text = g_strndup (first.start, first.len);
  return after_first;
}

/* Whether the statement ends at @p: `;` or the end. */
static gboolean
ends_at (const char *p)
{
  QStoreSqlToken token;

  qstore_sql_next_token (p, &token);
  return token.kind == QSTORE_SQL_TOKEN_END || qstore_sql_token_is_punct (&token, ';');
}

/* PRAGMA [schema.]name [= value | (value)] */
static void
parse_pragma (const char      *p,
              QStoreStatement *statement)
{
  QStoreSqlToken token;
  gboolean paren;

  statement->kind = QSTORE_STATEMENT_SETTING;
  if (!(p = read_name (p, TRUE, statement)))
    {
      statement->malformed = TRUE;
      return;
    }

  p = qstore_sql_next_token (p, &token);
  if (!qstore_sql_token_is_punct (&token, '=') && !qstore_sql_token_is_punct (&token, '('))
    {
      statement->malformed = token.kind != QSTORE_SQL_TOKEN_END &&
                             !qstore_sql_token_is_punct (&token, ';');
      return;
    }

  paren = qstore_sql_token_is_punct (&token, '(');
  p = qstore_sql_next_token (p, &token);
  if (qstore_sql_token_is_punct (&token, '-') || qstore_sql_token_is_punct (&token, '+'))
    {
      QStoreSqlToken number;
      const char *after = qstore_sql_next_token (p, &number);

      statement->value = g_strdup_printf ("%c%.*s", token.start[0], (int) number.len,
                                          number.start);
      p = after;
      token = number;
    }
  else
    {
      statement->value = g_strndup (token.start, token.len);
      p = token.start + token.len;
    }
  if (token.kind == QSTORE_SQL_TOKEN_END || token.kind == QSTORE_SQL_TOKEN_PUNCT)
    statement->malformed = TRUE;
  if (paren)
    {
      p = qstore_sql_next_token (p, &token);
      if (!qstore_sql_token_is_punct (&token, ')'))
        statement->malformed = TRUE;
    }
  if (!ends_at (p))
    statement->malformed = TRUE;
}

/* {CREATE [IF NOT EXISTS] | DROP [IF EXISTS] | REFRESH} MATERIALIZED VIEW
 * [schema.]name …; @p is past the three leading words. */
static void
parse_materialized_view (const char      *p,
                         QStoreStatement *statement)
{
  QStoreSqlToken token;
  const char *after;

  after = qstore_sql_next_token (p, &token);
  if (statement->kind == QSTORE_STATEMENT_CREATE_MATERIALIZED_VIEW &&
      qstore_sql_token_is (&token, "IF"))
    {
      QStoreSqlToken not_token, exists;

      after = qstore_sql_next_token (after, &not_token);
      after = qstore_sql_next_token (after, &exists);
      if (!qstore_sql_token_is (&not_token, "NOT") || !qstore_sql_token_is (&exists, "EXISTS"))
        goto malformed;
      statement->if_exists = TRUE;
      p = after;
    }
  else if (statement->kind == QSTORE_STATEMENT_DROP_MATERIALIZED_VIEW &&
           qstore_sql_token_is (&token, "IF"))
    {
      after = qstore_sql_next_token (after, &token);
      if (!qstore_sql_token_is (&token, "EXISTS"))
        goto malformed;
      statement->if_exists = TRUE;
      p = after;
    }

  if (!(p = read_name (p, TRUE, statement)))
    goto malformed;

  if (statement->kind != QSTORE_STATEMENT_CREATE_MATERIALIZED_VIEW)
    {
      if (!ends_at (p))
        goto malformed;
      return;
    }

  after = qstore_sql_next_token (p, &token);
  if (qstore_sql_token_is_punct (&token, '('))
    {
      statement->columns = g_ptr_array_new_with_free_func (g_free);
      for (;;)
        {
          after = qstore_sql_next_token (after, &token);
          if (!qstore_sql_token_is_name (&token) || token.kind == QSTORE_SQL_TOKEN_STRING)
            goto malformed;
          g_ptr_array_add (statement->columns, qstore_sql_token_name (&token));
          after = qstore_sql_next_token (after, &token);
          if (qstore_sql_token_is_punct (&token, ')'))
            break;
          if (!qstore_sql_token_is_punct (&token, ','))
            goto malformed;
        }
      after = qstore_sql_next_token (after, &token);
    }
  if (!qstore_sql_token_is (&token, "AS"))
    goto malformed;
  statement->body = qstore_sql_skip_blank (after);
  return;

malformed:
  statement->malformed = TRUE;
}

/* CREATE [UNIQUE] INDEX [IF NOT EXISTS] [s.]index ON [s.]table … */
static void
parse_create_index (const char      *p,
                    QStoreStatement *statement)
{
  QStoreSqlToken token;
  QStoreStatement on = { 0 };
  const char *after;

  after = qstore_sql_next_token (p, &token);
  if (qstore_sql_token_is (&token, "IF"))
    {
      after = qstore_sql_next_token (after, &token);
      after = qstore_sql_next_token (after, &token);
      p = after;
    }
  if (!(p = read_name (p, FALSE, statement)))
    return;
  p = qstore_sql_next_token (p, &token);
  if (qstore_sql_token_is (&token, "ON") && read_name (p, FALSE, &on))
    statement->table = g_steal_pointer (&on.name);
  qstore_statement_clear (&on);
}

/* ALTER TABLE [s.]t …: the table and what is done to it. */
static void
parse_alter_table (const char      *p,
                   QStoreStatement *statement)
{
  QStoreSqlToken token, second;

  if (!(p = read_name (p, FALSE, statement)))
    return;
  statement->table = g_strdup (statement->name);

  p = qstore_sql_next_token (p, &token);
  p = qstore_sql_next_token (p, &second);
  if (qstore_sql_token_is (&token, "ALTER"))
    {
      QStoreSqlToken third;

      qstore_sql_next_token (p, &third);
      statement->alter = qstore_sql_token_is (&second, "PRIMARY") &&
                         qstore_sql_token_is (&third, "KEY") ? QSTORE_ALTER_PRIMARY_KEY
                                                             : QSTORE_ALTER_COLUMN;
    }
  else if (qstore_sql_token_is (&token, "ADD"))
    statement->alter = qstore_sql_token_is (&second, "CONSTRAINT") ? QSTORE_ALTER_ADD_CONSTRAINT
                                                                   : QSTORE_ALTER_ADD_COLUMN;
  else if (qstore_sql_token_is (&token, "DROP"))
    statement->alter = qstore_sql_token_is (&second, "CONSTRAINT") ? QSTORE_ALTER_DROP_CONSTRAINT
                                                                   : QSTORE_ALTER_DROP_COLUMN;
  else if (qstore_sql_token_is (&token, "RENAME"))
    {
      QStoreSqlToken third;

      qstore_sql_next_token (p, &third);
      if (qstore_sql_token_is (&second, "CONSTRAINT"))
        statement->alter = QSTORE_ALTER_RENAME_CONSTRAINT;
      else if (!qstore_sql_token_is (&second, "TO"))
        statement->alter = QSTORE_ALTER_RENAME_COLUMN;
      else if (qstore_sql_token_is_name (&third))
        statement->new_name = qstore_sql_token_name (&third);
    }
  /* DROP COLUMN takes the indexes that use the column along, which
   * SQLite refuses to do: qstore runs it as it runs the arms. */
  if (statement->alter == QSTORE_ALTER_DROP_COLUMN || statement->alter >= QSTORE_ALTER_COLUMN)
    statement->kind = QSTORE_STATEMENT_ALTER_TABLE_ARM;
}

void
qstore_statement_parse (const char      *sql,
                        QStoreStatement *statement)
{
  QStoreSqlToken first, second, third;
  const char *p;

  memset (statement, 0, sizeof *statement);
  statement->start = qstore_sql_skip_space (sql);
  statement->end = qstore_sql_statement_end (statement->start);
  statement->text = g_strndup (statement->start, statement->end - statement->start);
  statement->kind = QSTORE_STATEMENT_SQL;

  p = qstore_sql_next_token (statement->text, &first);
  if (first.kind == QSTORE_SQL_TOKEN_END)
    {
      statement->kind = QSTORE_STATEMENT_EMPTY;
      return;
    }
  statement->rolls_back = qstore_sql_token_is (&first, "ROLLBACK");
  if (qstore_sql_token_is (&first, "PRAGMA"))
    {
      parse_pragma (p, statement);
      return;
    }
  /* REINDEX [schema.]name; a bare REINDEX is SQLite's. */
  if (qstore_sql_token_is (&first, "REINDEX"))
    {
      if (read_name (p, FALSE, statement) != NULL)
        statement->kind = QSTORE_STATEMENT_REINDEX;
      return;
    }

  p = qstore_sql_next_token (p, &second);
  if (qstore_sql_token_is (&first, "ALTER") && qstore_sql_token_is (&second, "TABLE"))
    {
      statement->kind = QSTORE_STATEMENT_ALTER_TABLE;
      parse_alter_table (p, statement);
      return;
    }
  if (qstore_sql_token_is (&first, "DROP") && qstore_sql_token_is (&second, "INDEX"))
    {
      statement->kind = QSTORE_STATEMENT_DROP_INDEX;
      return;
    }

  p = qstore_sql_next_token (p, &third);
  if (qstore_sql_token_is (&first, "CREATE") &&
      (qstore_sql_token_is (&second, "INDEX") ||
       (qstore_sql_token_is (&second, "UNIQUE") && qstore_sql_token_is (&third, "INDEX"))))
    {
      statement->kind = QSTORE_STATEMENT_CREATE_INDEX;
      parse_create_index (qstore_sql_token_is (&second, "INDEX") ? third.start : p, statement);
      return;
    }

  if (!qstore_sql_token_is (&second, "MATERIALIZED") || !qstore_sql_token_is (&third, "VIEW"))
    return;
  if (qstore_sql_token_is (&first, "CREATE"))
    statement->kind = QSTORE_STATEMENT_CREATE_MATERIALIZED_VIEW;
  else if (qstore_sql_token_is (&first, "DROP"))
    statement->kind = QSTORE_STATEMENT_DROP_MATERIALIZED_VIEW;
  else if (qstore_sql_token_is (&first, "REFRESH"))
    statement->kind = QSTORE_STATEMENT_REFRESH_MATERIALIZED_VIEW;
  else
    return;
  parse_materialized_view (p, statement);
}

/* [WITH …] INSERT [OR x] INTO | REPLACE INTO [schema.]table [AS alias]
 * [(columns)] … | DEFAULT VALUES */
QStoreInsertShape *
qstore_statement_insert_shape (const char *sql)
{
  g_autoptr(QStoreInsertShape) shape = g_new0 (QStoreInsertShape, 1);
  const char *p = sql;
  QStoreSqlToken token;

  p = qstore_sql_next_token (p, &token);
  if (qstore_sql_token_is (&token, "WITH"))
    {
      int depth = 0;

      /* The common table expressions end where INSERT or REPLACE starts. */
      for (;;)
        {
          p = qstore_sql_next_token (p, &token);
          if (token.kind == QSTORE_SQL_TOKEN_END)
            return NULL;
          if (qstore_sql_token_is_punct (&token, '('))
            depth++;
          else if (qstore_sql_token_is_punct (&token, ')'))
            depth--;
          else if (depth == 0 && (qstore_sql_token_is (&token, "INSERT") ||
                                  qstore_sql_token_is (&token, "REPLACE")))
            break;
        }
    }

  if (qstore_sql_token_is (&token, "INSERT"))
    {
      p = qstore_sql_next_token (p, &token);
      if (qstore_sql_token_is (&token, "OR"))
        {
          p = qstore_sql_next_token (p, &token);
          p = qstore_sql_next_token (p, &token);
        }
    }
  else if (qstore_sql_token_is (&token, "REPLACE"))
    p = qstore_sql_next_token (p, &token);
  else
    return NULL;

  if (!qstore_sql_token_is (&token, "INTO"))
    return NULL;

  p = qstore_sql_next_token (p, &token);
  if (!qstore_sql_token_is_name (&token))
    return NULL;
  shape->table = qstore_sql_token_name (&token);

  p = qstore_sql_next_token (p, &token);
  if (qstore_sql_token_is_punct (&token, '.'))
    {
      p = qstore_sql_next_token (p, &token);
      if (!qstore_sql_token_is_name (&token))
        return NULL;
      g_free (shape->table);
      shape->table = qstore_sql_token_name (&token);
      p = qstore_sql_next_token (p, &token);
    }

  if (qstore_sql_token_is (&token, "AS"))
    {
      p = qstore_sql_next_token (p, &token);
      p = qstore_sql_next_token (p, &token);
    }

  if (qstore_sql_token_is (&token, "DEFAULT"))
    shape->default_values = TRUE;
  else if (qstore_sql_token_is_punct (&token, '('))
    {
      shape->columns = g_ptr_array_new_with_free_func (g_free);
      for (;;)
        {
          p = qstore_sql_next_token (p, &token);
          if (!qstore_sql_token_is_name (&token))
            return NULL;
          g_ptr_array_add (shape->columns, qstore_sql_token_name (&token));
          p = qstore_sql_next_token (p, &token);
          if (qstore_sql_token_is_punct (&token, ')'))
            break;
          if (!qstore_sql_token_is_punct (&token, ','))
            return NULL;
        }
    }

  return g_steal_pointer (&shape);
}

/* Trims the `;` and blanks after a view's query. */
static char *
trimmed_body (const char *body)
{
  char *text = g_strstrip (g_strdup (body));
  gsize len = strlen (text);

  while (len > 0 && (text[len - 1] == ';' || g_ascii_isspace (text[len - 1])))
    text[--len] = '\0';
  return text;
}

char *
qstore_statement_definition_body (const char       *name,
                                  const char       *definition,
                                  QStoreStatement  *parsed,
                                  GError          **error)
{
  g_auto(QStoreStatement) statement = { 0 };

  qstore_statement_parse (definition, &statement);
  if (statement.kind != QSTORE_STATEMENT_CREATE_MATERIALIZED_VIEW || statement.malformed ||
      g_ascii_strcasecmp (statement.name, name) != 0 ||
      *qstore_sql_skip_space (statement.end) != '\0')
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_CORRUPT,
                   _("The catalog entry of materialized view “main.%s” is not a CREATE "
                   "MATERIALIZED VIEW %s AS SELECT … statement: it was changed outside qstore; "
                   "drop the view with DROP MATERIALIZED VIEW and create it again"), name, name);
      return NULL;
    }
  if (statement.schema != NULL && g_ascii_strcasecmp (statement.schema, "main") != 0)
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_UNSUPPORTED,
                   _("Materialized view “%s.%s” is in schema “%s”, which is not supported: only "
                   "“main” is"), statement.schema, name, statement.schema);
      return NULL;
    }
  if (parsed != NULL)
    {
      *parsed = statement;
      memset (&statement, 0, sizeof statement);
      return trimmed_body (parsed->body);
    }
  return trimmed_body (statement.body);
}
