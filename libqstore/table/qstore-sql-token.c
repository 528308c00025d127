/* qstore-sql-token.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "qstore-sql-token-private.h"

const char *
qstore_sql_skip_blank (const char *p)
{
  for (;;)
    {
      if (g_ascii_isspace (*p))
        p++;
      else if (p[0] == '-' && p[1] == '-')
        {
          while (*p != '\0' && *p != '\n')
            p++;
        }
      else if (p[0] == '/' && p[1] == '*')
        {
          p += 2;
          while (*p != '\0' && !(p[0] == '*' && p[1] == '/'))
            p++;
          if (*p != '\0')
            p += 2;
        }
      else
        return p;
    }
}

static gboolean
is_word_char (char c)
{
  return g_ascii_isalnum (c) || c == '_' || c == '$' || (guchar) c >= 0x80;
}

const char *
qstore_sql_next_token (const char     *p,
                       QStoreSqlToken *token)
{
  p = qstore_sql_skip_blank (p);
  token->start = p;

  if (*p == '\0')
    token->kind = QSTORE_SQL_TOKEN_END;
  else if (*p == '\'' || *p == '"' || *p == '`' ||
           ((*p == 'x' || *p == 'X') && p[1] == '\''))
    {
      char quote;

      /* A blob literal, x'0102', is one string token. */
      if (*p == 'x' || *p == 'X')
        p++;
      quote = *p++;

      token->kind = quote == '\'' ? QSTORE_SQL_TOKEN_STRING : QSTORE_SQL_TOKEN_QUOTED;
      while (*p != '\0')
        {
          if (*p == quote && p[1] == quote)
            p += 2;
          else if (*p == quote)
            {
              p++;
              break;
            }
          else
            p++;
        }
    }
  else if (*p == '[')
    {
      token->kind = QSTORE_SQL_TOKEN_QUOTED;
      while (*p != '\0' && *p != ']')
        p++;
      if (*p == ']')
        p++;
    }
  else if (g_ascii_isdigit (*p) || (*p == '.' && g_ascii_isdigit (p[1])))
    {
      /* 12, 1.5, .5, 1e-3, 0x1F */
      token->kind = QSTORE_SQL_TOKEN_NUMBER;
      for (p++; is_word_char (*p) || *p == '.' ||
                ((*p == '+' || *p == '-') && (p[-1] == 'e' || p[-1] == 'E')); p++)
        ;
    }
  else if (is_word_char (*p))
    {
      token->kind = QSTORE_SQL_TOKEN_WORD;
      while (is_word_char (*p))
        p++;
    }
  else
    {
      token->kind = QSTORE_SQL_TOKEN_PUNCT;
      p++;
    }

  token->len = p - token->start;
  return p;
}

gboolean
qstore_sql_token_is (const QStoreSqlToken *token,
                     const char           *word)
{
  return token->kind == QSTORE_SQL_TOKEN_WORD && strlen (word) == token->len &&
         g_ascii_strncasecmp (token->start, word, token->len) == 0;
}

gboolean
qstore_sql_token_is_punct (const QStoreSqlToken *token,
                           char                  c)
{
  return token->kind == QSTORE_SQL_TOKEN_PUNCT && token->start[0] == c;
}

char *
qstore_sql_token_name (const QStoreSqlToken *token)
{
  GString *name;
  char quote;

  if (token->kind == QSTORE_SQL_TOKEN_WORD)
    return g_strndup (token->start, token->len);

  quote = token->start[0];
  if (quote == '[')
    return g_strndup (token->start + 1, MAX (token->len, 2) - 2);

  name = g_string_new (NULL);
  for (gsize i = 1; i + 1 < token->len; i++)
    {
      g_string_append_c (name, token->start[i]);
      if (token->start[i] == quote && token->start[i + 1] == quote)
        i++;
    }
  return g_string_free (name, FALSE);
}

GArray *
qstore_sql_tokenize (const char *sql)
{
  GArray *tokens = g_array_new (FALSE, FALSE, sizeof (QStoreSqlToken));
  QStoreSqlToken token = { 0 };
  guint depth = 0;

  for (const char *p = qstore_sql_next_token (sql, &token); token.kind != QSTORE_SQL_TOKEN_END;
       p = qstore_sql_next_token (p, &token))
    {
      if (qstore_sql_token_is_punct (&token, ')') && depth > 0)
        depth--;
      token.depth = depth;
      if (qstore_sql_token_is_punct (&token, '('))
        depth++;
      g_array_append_val (tokens, token);
    }
  return tokens;
}

gboolean
qstore_sql_token_is_name (const QStoreSqlToken *token)
{
  return token->kind == QSTORE_SQL_TOKEN_WORD || token->kind == QSTORE_SQL_TOKEN_QUOTED ||
         (token->kind == QSTORE_SQL_TOKEN_STRING && token->start[0] == '\'');
}

char *
qstore_sql_quote (const char *name)
{
  GString *quoted = g_string_new ("\"");

  for (const char *p = name; *p != '\0'; p++)
    {
      if (*p == '"')
        g_string_append_c (quoted, '"');
      g_string_append_c (quoted, *p);
    }
  g_string_append_c (quoted, '"');
  return g_string_free (quoted, FALSE);
}

const char *
qstore_sql_skip_space (const char *sql)
{
  for (;;)
    {
      sql = qstore_sql_skip_blank (sql);
      if (*sql != ';')
        return sql;
      sql++;
    }
}

const char *
qstore_sql_statement_end (const char *sql)
{
  QStoreSqlToken token;
  const char *p = sql;

  for (;;)
    {
      p = qstore_sql_next_token (p, &token);
      if (token.kind == QSTORE_SQL_TOKEN_END)
        return token.start;
      if (qstore_sql_token_is_punct (&token, ';'))
        {
          g_autofree char *text = g_strndup (sql, p - sql);

          if (sqlite3_complete (text))
            return p;
        }
    }
}
