/* qstore-alter.c: the ALTER TABLE arms SQLite lacks, and DROP COLUMN
 *
 * SQLite alters a table only by ADD, RENAME and DROP COLUMN and RENAME TO.
 * The other arms (NOT NULL, DEFAULT and COLLATE of a column, named
 * constraints, the primary key) are done the way SQLite's documentation
 * recommends for any other change: write the new CREATE TABLE, create it,
 * move the rows over. Here the new text is made from the table's current
 * one: it is cut into column definitions and table constraints, and each
 * of those into its constraints, so an arm changes exactly what it names
 * and every clause it does not touch (ON CONFLICT, AUTOINCREMENT, MATCH,
 * DEFERRABLE…) keeps its original words. That is the only SQL read here;
 * SQLite then validates the result on the scratch connection, and its
 * pragmas, not this cutting, say what the table now is.
 *
 * The rows then move to the new definition (qstore-alter-migrate.c): a
 * refused ALTER leaves the table, its stores and the catalog untouched.
 *
 * DROP COLUMN goes through here too: SQLite refuses to drop a column that
 * an index or a UNIQUE constraint uses, while qstore drops those indexes
 * and constraints with the column, then lets SQLite drop it.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "qstore-affinity-private.h"
#include "qstore-alter-migrate-private.h"
#include "qstore-alter-private.h"
#include "qstore-coordinator-private.h"
#include "qstore-ddl-private.h"
#include "qstore-error.h"
#include "qstore-i18n-private.h"
#include "qstore-sql-token-private.h"

/* Tokens, from the shared tokeniser (qstore_sql_tokenize()) */

/* A run of tokens of one text, [0, end). */
typedef struct
{
  const char *sql;
  GArray     *toks;
  guint       end;
} Tokens;

static const QStoreSqlToken *
tok_at (const Tokens *t,
        guint         i)
{
  return i < t->end ? &g_array_index (t->toks, QStoreSqlToken, i) : NULL;
}

static gboolean
is_word (const Tokens *t,
         guint         i,
         const char   *word)
{
  const QStoreSqlToken *tok = tok_at (t, i);

  return tok != NULL && qstore_sql_token_is (tok, word);
}

static gboolean
is_kind (const Tokens       *t,
         guint               i,
         QStoreSqlTokenKind  kind)
{
  const QStoreSqlToken *tok = tok_at (t, i);

  return tok != NULL && tok->kind == kind;
}

static gboolean
is_punct (const Tokens *t,
          guint         i,
          char          c)
{
  const QStoreSqlToken *tok = tok_at (t, i);

  return tok != NULL && qstore_sql_token_is_punct (tok, c);
}

static gboolean
is_name (const Tokens *t,
         guint         i)
{
  return is_kind (t, i, QSTORE_SQL_TOKEN_WORD) || is_kind (t, i, QSTORE_SQL_TOKEN_QUOTED) ||
         (is_kind (t, i, QSTORE_SQL_TOKEN_STRING) && tok_at (t, i)->start[0] == '\'');
}

/* The text from token @first to token @last, both included. */
static char *
slice (const Tokens *t,
       guint         first,
       guint         last)
{
  const QStoreSqlToken *a = tok_at (t, first);
  const QStoreSqlToken *b = tok_at (t, last);

  return g_strndup (a->start, b->start + b->len - a->start);
}

/* The identifier token @i spells, quotes removed. */
static char *
name_at (const Tokens *t,
         guint         i)
{
  return qstore_sql_token_name (tok_at (t, i));
}

/* Moves *i past the parenthesized group that starts there. */
static gboolean
skip_group (const Tokens *t,
            guint        *i)
{
  const QStoreSqlToken *open = tok_at (t, *i);

  if (open == NULL || !qstore_sql_token_is_punct (open, '('))
    return FALSE;
  for (guint j = *i + 1; j < t->end; j++)
    {
      const QStoreSqlToken *tok = tok_at (t, j);

      if (qstore_sql_token_is_punct (tok, ')') && tok->depth == open->depth)
        {
          *i = j + 1;
          return TRUE;
        }
    }
  return FALSE;
}

/* The names a group lists, "(a, b COLLATE NOCASE DESC)": the first token
 * of each element. */
static GPtrArray *
group_names (const Tokens *t,
             guint         open)
{
  GPtrArray *names = g_ptr_array_new_with_free_func (g_free);
  guint depth = tok_at (t, open)->depth + 1;
  gboolean at_start = TRUE;

  for (guint j = open + 1; j < t->end; j++)
    {
      const QStoreSqlToken *tok = tok_at (t, j);

      if (qstore_sql_token_is_punct (tok, ')') && tok->depth == depth - 1)
        break;
      if (at_start && is_name (t, j))
        g_ptr_array_add (names, name_at (t, j));
      at_start = tok->depth == depth && qstore_sql_token_is_punct (tok, ',');
    }
  return names;
}

/* The model of a CREATE TABLE */

typedef enum
{
  ITEM_PRIMARY_KEY,
  ITEM_NOT_NULL,
  ITEM_NULL,
  ITEM_UNIQUE,
  ITEM_CHECK,
  ITEM_DEFAULT,
  ITEM_COLLATE,
  ITEM_FOREIGN_KEY,     /* REFERENCES on a column, FOREIGN KEY on the table */
  ITEM_GENERATED,
  ITEM_NAME_ONLY,       /* a `CONSTRAINT name` that nothing follows */
} ItemKind;

typedef struct
{
  ItemKind   kind;
  char      *name;          /* the CONSTRAINT name, or NULL */
  char      *name_sql;      /* …as written */
  char      *body;          /* the constraint's text after its name */
  GPtrArray *columns;       /* char *: what a table constraint lists */
  char      *parent;        /* the table a foreign key references */
  GPtrArray *parent_columns;
} Item;

typedef struct
{
  char      *name;
  char      *name_sql;
  char      *type_sql;      /* NULL when the column has no type */
  GPtrArray *items;         /* Item */
} ColumnDef;

typedef struct
{
  char      *head;          /* "CREATE TABLE t (" */
  char      *tail;          /* ")" and what follows, such as WITHOUT ROWID */
  GPtrArray *columns;       /* ColumnDef */
  GPtrArray *constraints;   /* Item */
} TableDef;

static void
item_free (gpointer data)
{
  Item *item = data;

  g_free (item->name);
  g_free (item->name_sql);
  g_free (item->body);
  g_clear_pointer (&item->columns, g_ptr_array_unref);
  g_free (item->parent);
  g_clear_pointer (&item->parent_columns, g_ptr_array_unref);
  g_free (item);
}

static Item *
item_new (ItemKind    kind,
          const char *body)
{
  Item *item = g_new0 (Item, 1);

  item->kind = kind;
  item->body = g_strdup (body);
  return item;
}

static void
column_def_free (gpointer data)
{
  ColumnDef *column = data;

  g_free (column->name);
  g_free (column->name_sql);
  g_free (column->type_sql);
  g_ptr_array_unref (column->items);
  g_free (column);
}

static void
table_def_free (TableDef *def)
{
  g_free (def->head);
  g_free (def->tail);
  g_ptr_array_unref (def->columns);
  g_ptr_array_unref (def->constraints);
  g_free (def);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC (TableDef, table_def_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (Item, item_free)

static gboolean
is_column_constraint_start (const Tokens *t,
                            guint         i)
{
  static const char * const words[] = {
    "CONSTRAINT", "PRIMARY", "NOT", "NULL", "UNIQUE", "CHECK", "DEFAULT",
    "COLLATE", "REFERENCES", "GENERATED", "AS",
  };

  for (guint k = 0; k < G_N_ELEMENTS (words); k++)
    if (is_word (t, i, words[k]))
      return TRUE;
  return FALSE;
}

static void
skip_conflict_clause (const Tokens *t,
                      guint        *i)
{
  if (is_word (t, *i, "ON") && is_word (t, *i + 1, "CONFLICT") && is_kind (t, *i + 2, QSTORE_SQL_TOKEN_WORD))
    *i += 3;
}

/* REFERENCES table [(columns)] [ON DELETE|UPDATE action | MATCH name]…
 * [[NOT] DEFERRABLE [INITIALLY DEFERRED|IMMEDIATE]], from the table name. */
static gboolean
parse_references (const Tokens *t,
                  guint        *i,
                  Item         *item)
{
  if (!is_name (t, *i))
    return FALSE;
  item->parent = name_at (t, *i);
  (*i)++;
  if (is_punct (t, *i, '('))
    {
      item->parent_columns = group_names (t, *i);
      if (!skip_group (t, i))
        return FALSE;
    }
  else
    item->parent_columns = g_ptr_array_new_with_free_func (g_free);

  for (;;)
    {
      if (is_word (t, *i, "ON") && (is_word (t, *i + 1, "DELETE") || is_word (t, *i + 1, "UPDATE")))
        {
          *i += 2;
          if (is_word (t, *i, "SET") || is_word (t, *i, "NO"))
            *i += 2;
          else if (is_word (t, *i, "CASCADE") || is_word (t, *i, "RESTRICT"))
            *i += 1;
          else
            return FALSE;
        }
      else if (is_word (t, *i, "MATCH") && is_name (t, *i + 1))
        *i += 2;
      else if (is_word (t, *i, "NOT") && is_word (t, *i + 1, "DEFERRABLE"))
        *i += 2;
      else if (is_word (t, *i, "DEFERRABLE"))
        *i += 1;
      else if (is_word (t, *i, "INITIALLY") && is_kind (t, *i + 1, QSTORE_SQL_TOKEN_WORD))
        *i += 2;
      else
        return TRUE;
    }
}

/* One constraint of a column (@column) or of the table, from *i on. */
static Item *
parse_item (const Tokens *t,
            guint        *i,
            gboolean      column)
{
  g_autoptr(Item) item = g_new0 (Item, 1);
  guint first;

  if (is_word (t, *i, "CONSTRAINT"))
    {
      if (!is_name (t, *i + 1))
        return NULL;
      item->name = name_at (t, *i + 1);
      item->name_sql = slice (t, *i + 1, *i + 1);
      *i += 2;
      /* SQLite lets a name stand alone, before the next constraint or
       * none at all. */
      if (*i >= t->end || (column && !is_column_constraint_start (t, *i)))
        {
          item->kind = ITEM_NAME_ONLY;
          item->body = g_strdup ("");
          return g_steal_pointer (&item);
        }
    }

  first = *i;
  if (is_word (t, *i, "PRIMARY") && is_word (t, *i + 1, "KEY"))
    {
      item->kind = ITEM_PRIMARY_KEY;
      *i += 2;
      if (!column)
        {
          item->columns = group_names (t, *i);
          if (!skip_group (t, i))
            return NULL;
        }
      else if (is_word (t, *i, "ASC") || is_word (t, *i, "DESC"))
        (*i)++;
      skip_conflict_clause (t, i);
      if (column && is_word (t, *i, "AUTOINCREMENT"))
        (*i)++;
    }
  else if (is_word (t, *i, "NOT") && is_word (t, *i + 1, "NULL") && column)
    {
      item->kind = ITEM_NOT_NULL;
      *i += 2;
      skip_conflict_clause (t, i);
    }
  else if (is_word (t, *i, "NULL") && column)
    {
      item->kind = ITEM_NULL;
      *i += 1;
      skip_conflict_clause (t, i);
    }
  else if (is_word (t, *i, "UNIQUE"))
    {
      item->kind = ITEM_UNIQUE;
      *i += 1;
      if (!column)
        {
          item->columns = group_names (t, *i);
          if (!skip_group (t, i))
            return NULL;
        }
      skip_conflict_clause (t, i);
    }
  else if (is_word (t, *i, "CHECK"))
    {
      item->kind = ITEM_CHECK;
      *i += 1;
      if (!skip_group (t, i))
        return NULL;
      skip_conflict_clause (t, i);
    }
  else if (is_word (t, *i, "DEFAULT") && column)
    {
      const QStoreSqlToken *sign;

      item->kind = ITEM_DEFAULT;
      *i += 1;
      sign = tok_at (t, *i);
      if (sign != NULL &&
          (qstore_sql_token_is_punct (sign, '+') || qstore_sql_token_is_punct (sign, '-')))
        (*i)++;
      if (is_punct (t, *i, '('))
        {
          if (!skip_group (t, i))
            return NULL;
        }
      else if (is_kind (t, *i, QSTORE_SQL_TOKEN_NUMBER) || is_kind (t, *i, QSTORE_SQL_TOKEN_STRING) ||
               is_kind (t, *i, QSTORE_SQL_TOKEN_WORD) || is_kind (t, *i, QSTORE_SQL_TOKEN_QUOTED))
        (*i)++;
      else
        return NULL;
    }
  else if (is_word (t, *i, "COLLATE") && column && is_name (t, *i + 1))
    {
      item->kind = ITEM_COLLATE;
      *i += 2;
    }
  else if (is_word (t, *i, "REFERENCES") && column)
    {
      item->kind = ITEM_FOREIGN_KEY;
      *i += 1;
      if (!parse_references (t, i, item))
        return NULL;
    }
  else if (is_word (t, *i, "FOREIGN") && is_word (t, *i + 1, "KEY") && !column)
    {
      item->kind = ITEM_FOREIGN_KEY;
      *i += 2;
      item->columns = group_names (t, *i);
      if (!skip_group (t, i) || !is_word (t, *i, "REFERENCES"))
        return NULL;
      *i += 1;
      if (!parse_references (t, i, item))
        return NULL;
    }
  else if ((is_word (t, *i, "GENERATED") || is_word (t, *i, "AS")) && column)
    {
      item->kind = ITEM_GENERATED;
      if (is_word (t, *i, "GENERATED"))
        *i += 2;   /* ALWAYS */
      if (!is_word (t, *i, "AS"))
        return NULL;
      *i += 1;
      if (!skip_group (t, i))
        return NULL;
      if (is_word (t, *i, "STORED") || is_word (t, *i, "VIRTUAL"))
        (*i)++;
    }
  else
    return NULL;

  item->body = slice (t, first, *i - 1);
  return g_steal_pointer (&item);
}

static gboolean
parse_column (const Tokens *t,
              guint         first,
              ColumnDef    *column)
{
  guint i = first + 1;

  column->name = name_at (t, first);
  column->name_sql = slice (t, first, first);

  while (i < t->end && !is_column_constraint_start (t, i))
    {
      if (is_punct (t, i, '('))
        {
          if (!skip_group (t, &i))
            return FALSE;
        }
      else
        i++;
    }
  if (i > first + 1)
    column->type_sql = slice (t, first + 1, i - 1);

  while (i < t->end)
    {
      Item *item = parse_item (t, &i, TRUE);

      if (item == NULL)
        return FALSE;
      g_ptr_array_add (column->items, item);
    }
  return TRUE;
}

static gboolean
is_table_constraint_start (const Tokens *t,
                           guint         i)
{
  return is_word (t, i, "CONSTRAINT") || is_word (t, i, "PRIMARY") ||
         is_word (t, i, "UNIQUE") || is_word (t, i, "CHECK") || is_word (t, i, "FOREIGN");
}

/* Cuts the CREATE TABLE text @sql, which SQLite accepted, into its parts. */
static TableDef *
table_def_parse (const char  *sql,
                 const char  *table,
                 GError     **error)
{
  g_autoptr(TableDef) def = g_new0 (TableDef, 1);
  g_autoptr(GArray) toks = qstore_sql_tokenize (sql);
  Tokens t = { sql, toks, toks->len };
  guint open = 0, close, segment;

  def->columns = g_ptr_array_new_with_free_func (column_def_free);
  def->constraints = g_ptr_array_new_with_free_func (item_free);

  while (open < t.end && !is_punct (&t, open, '('))
    open++;
  close = open;
  if (open >= t.end || !skip_group (&t, &close))
    goto unreadable;
  close--;

  def->head = g_strndup (sql, tok_at (&t, open)->start + 1 - sql);
  def->tail = g_strdup (tok_at (&t, close)->start);

  segment = open + 1;
  while (segment < close)
    {
      guint end = segment;
      Tokens part;

      /* A definition ends at the next comma between the parentheses. */
      while (end < close && !(is_punct (&t, end, ',') && tok_at (&t, end)->depth == 1))
        end++;
      if (end == segment)
        goto unreadable;

      part = t;
      part.end = end;
      if (is_table_constraint_start (&part, segment))
        {
          guint i = segment;

          /* SQLite lets table constraints follow one another without a
           * comma. */
          while (i < end)
            {
              Item *item = parse_item (&part, &i, FALSE);

              if (item == NULL)
                goto unreadable;
              g_ptr_array_add (def->constraints, item);
            }
        }
      else
        {
          ColumnDef *column = g_new0 (ColumnDef, 1);

          column->items = g_ptr_array_new_with_free_func (item_free);
          g_ptr_array_add (def->columns, column);
          if (!is_name (&part, segment) || !parse_column (&part, segment, column))
            goto unreadable;
        }
      segment = end + 1;
    }

  return g_steal_pointer (&def);

unreadable:
  g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_UNSUPPORTED,
               _("The CREATE TABLE text of table “%s” has a form this ALTER TABLE "
               "cannot change; recreate the table with the new definition and "
               "copy its rows (INSERT … SELECT)"), table);
  return NULL;
}

static void
append_item (GString    *out,
             const Item *item)
{
  if (item->name_sql != NULL)
    g_string_append_printf (out, "CONSTRAINT %s%s", item->name_sql, item->body[0] ? " " : "");
  g_string_append (out, item->body);
}

/* The CREATE TABLE text of @def: the same every time for the same model. */
static char *
table_def_to_sql (TableDef *def)
{
  GString *out = g_string_new (def->head);

  for (guint i = 0; i < def->columns->len; i++)
    {
      ColumnDef *column = g_ptr_array_index (def->columns, i);

      if (i > 0)
        g_string_append (out, ", ");
      g_string_append (out, column->name_sql);
      if (column->type_sql != NULL)
        g_string_append_printf (out, " %s", column->type_sql);
      for (guint j = 0; j < column->items->len; j++)
        {
          g_string_append_c (out, ' ');
          append_item (out, g_ptr_array_index (column->items, j));
        }
    }
  for (guint i = 0; i < def->constraints->len; i++)
    {
      if (i > 0 || def->columns->len > 0)
        g_string_append (out, ", ");
      append_item (out, g_ptr_array_index (def->constraints, i));
    }
  g_string_append (out, def->tail);
  return g_string_free (out, FALSE);
}

static ColumnDef *
find_column_def (TableDef   *def,
                 const char *name)
{
  for (guint i = 0; i < def->columns->len; i++)
    {
      ColumnDef *column = g_ptr_array_index (def->columns, i);

      if (g_ascii_strcasecmp (column->name, name) == 0)
        return column;
    }
  return NULL;
}

/* Removes the items of @items of @kind; returns how many went. */
static guint
remove_items (GPtrArray *items,
              ItemKind   kind)
{
  guint removed = 0;

  for (guint i = items->len; i > 0; i--)
    {
      Item *item = g_ptr_array_index (items, i - 1);

      if (item->kind == kind)
        {
          g_ptr_array_remove_index (items, i - 1);
          removed++;
        }
    }
  return removed;
}

static gboolean
has_item (GPtrArray *items,
          ItemKind   kind)
{
  for (guint i = 0; i < items->len; i++)
    if (((Item *) g_ptr_array_index (items, i))->kind == kind)
      return TRUE;
  return FALSE;
}

/* Every named constraint called @name, with the array that holds it. */
typedef struct
{
  GPtrArray *owner;
  Item      *item;
  ColumnDef *column;   /* NULL for a table constraint */
} NamedItem;

static GArray *
find_named (TableDef   *def,
            const char *name)
{
  GArray *found = g_array_new (FALSE, FALSE, sizeof (NamedItem));

  for (guint i = 0; i < def->columns->len; i++)
    {
      ColumnDef *column = g_ptr_array_index (def->columns, i);

      for (guint j = 0; j < column->items->len; j++)
        {
          Item *item = g_ptr_array_index (column->items, j);
          NamedItem named = { column->items, item, column };

          if (item->name != NULL && g_ascii_strcasecmp (item->name, name) == 0)
            g_array_append_val (found, named);
        }
    }
  for (guint j = 0; j < def->constraints->len; j++)
    {
      Item *item = g_ptr_array_index (def->constraints, j);
      NamedItem named = { def->constraints, item, NULL };

      if (item->name != NULL && g_ascii_strcasecmp (item->name, name) == 0)
        g_array_append_val (found, named);
    }
  return found;
}

static gboolean
names_contain (GPtrArray  *names,
               const char *name)
{
  for (guint i = 0; names != NULL && i < names->len; i++)
    if (g_ascii_strcasecmp (g_ptr_array_index (names, i), name) == 0)
      return TRUE;
  return FALSE;
}

/* The ALTER TABLE statement */

typedef enum
{
  ARM_SET_NOT_NULL,
  ARM_DROP_NOT_NULL,
  ARM_SET_DEFAULT,
  ARM_DROP_DEFAULT,
  ARM_SET_COLLATE,
  ARM_ADD_CONSTRAINT,
  ARM_DROP_CONSTRAINT,
  ARM_RENAME_CONSTRAINT,
  ARM_ALTER_PRIMARY_KEY,
  ARM_DROP_COLUMN,
} Arm;

typedef struct
{
  Arm    arm;
  char  *schema;       /* as written, or NULL */
  char  *table;
  char  *column;       /* ALTER COLUMN, DROP COLUMN */
  char  *column_sql;   /* …as written */
  char  *name;         /* the constraint of ADD, DROP and RENAME CONSTRAINT */
  char  *new_name;     /* RENAME CONSTRAINT … TO */
  char  *new_name_sql;
  char  *text;         /* the DEFAULT, the collation, the key's column list */
  Item  *constraint;   /* ADD CONSTRAINT's constraint */
} Alter;

static void
alter_clear (Alter *alter)
{
  g_clear_pointer (&alter->schema, g_free);
  g_clear_pointer (&alter->table, g_free);
  g_clear_pointer (&alter->column, g_free);
  g_clear_pointer (&alter->column_sql, g_free);
  g_clear_pointer (&alter->name, g_free);
  g_clear_pointer (&alter->new_name, g_free);
  g_clear_pointer (&alter->new_name_sql, g_free);
  g_clear_pointer (&alter->text, g_free);
  g_clear_pointer (&alter->constraint, item_free);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Alter, alter_clear)

static gboolean
syntax_error (const Tokens  *t,
              guint          i,
              const char    *expected,
              GError       **error)
{
  const QStoreSqlToken *tok = tok_at (t, i);

  if (tok == NULL)
    g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_SYNTAX,
                 "incomplete input: ALTER TABLE ends where %s should follow", expected);
  else
    g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_SYNTAX,
                 "near \"%.*s\": syntax error: ALTER TABLE expects %s there",
                 (int) tok->len, tok->start, expected);
  return FALSE;
}

static gboolean
expect_end (const Tokens  *t,
            guint          i,
            GError       **error)
{
  return i >= t->end || syntax_error (t, i, "the end of the statement", error);
}

/* A DEFAULT as a column constraint takes a literal, a signed number, a
 * name or a parenthesized expression: anything else is put in
 * parentheses, as the expression it is. */
static char *
default_text (const Tokens *t,
              guint         first)
{
  g_autofree char *text = slice (t, first, t->end - 1);
  guint i = first;
  const QStoreSqlToken *sign = tok_at (t, i);

  if (qstore_sql_token_is_punct (sign, '+') || qstore_sql_token_is_punct (sign, '-'))
    i++;
  if (i + 1 == t->end && (is_kind (t, i, QSTORE_SQL_TOKEN_NUMBER) || is_kind (t, i, QSTORE_SQL_TOKEN_STRING) ||
                          (i == first && (is_kind (t, i, QSTORE_SQL_TOKEN_WORD) || is_kind (t, i, QSTORE_SQL_TOKEN_QUOTED)))))
    return g_steal_pointer (&text);
  if (i == first && is_punct (t, i, '('))
    {
      guint j = i;

      if (skip_group (t, &j) && j == t->end)
        return g_steal_pointer (&text);
    }
  return g_strdup_printf ("(%s)", text);
}

static gboolean
parse_alter_column (const Tokens  *t,
                    guint          i,
                    Alter         *alter,
                    GError       **error)
{
  static const char expected[] = "SET NOT NULL, DROP NOT NULL, SET DEFAULT value, "
                                 "DROP DEFAULT or SET COLLATE name";

  if (is_word (t, i, "SET") && is_word (t, i + 1, "NOT") && is_word (t, i + 2, "NULL"))
    {
      alter->arm = ARM_SET_NOT_NULL;
      return expect_end (t, i + 3, error);
    }
  if (is_word (t, i, "DROP") && is_word (t, i + 1, "NOT") && is_word (t, i + 2, "NULL"))
    {
      alter->arm = ARM_DROP_NOT_NULL;
      return expect_end (t, i + 3, error);
    }
  if (is_word (t, i, "SET") && is_word (t, i + 1, "DEFAULT"))
    {
      alter->arm = ARM_SET_DEFAULT;
      if (i + 2 >= t->end)
        return syntax_error (t, i + 2, "the new DEFAULT value", error);
      alter->text = default_text (t, i + 2);
      return TRUE;
    }
  if (is_word (t, i, "DROP") && is_word (t, i + 1, "DEFAULT"))
    {
      alter->arm = ARM_DROP_DEFAULT;
      return expect_end (t, i + 2, error);
    }
  if (is_word (t, i, "SET") && is_word (t, i + 1, "COLLATE"))
    {
      alter->arm = ARM_SET_COLLATE;
      if (!is_name (t, i + 2))
        return syntax_error (t, i + 2, "a collation name", error);
      alter->text = slice (t, i + 2, i + 2);
      return expect_end (t, i + 3, error);
    }
  return syntax_error (t, i, expected, error);
}

static gboolean
parse_alter (const char   *sql,
             Alter        *alter,
             const char  **tail,
             GError      **error)
{
  g_autoptr(GArray) toks = qstore_sql_tokenize (sql);
  Tokens t = { sql, toks, toks->len };
  guint i;

  /* The statement ends at the first semicolon outside parentheses. */
  for (i = 0; i < t.end; i++)
    if (is_punct (&t, i, ';') && tok_at (&t, i)->depth == 0)
      break;
  *tail = i < t.end ? tok_at (&t, i)->start + 1 : sql + strlen (sql);
  t.end = i;

  if (!is_word (&t, 0, "ALTER") || !is_word (&t, 1, "TABLE"))
    return syntax_error (&t, 0, "ALTER TABLE", error);
  if (!is_name (&t, 2))
    return syntax_error (&t, 2, "a table name", error);
  i = 3;
  if (is_punct (&t, 3, '.'))
    {
      if (!is_name (&t, 4))
        return syntax_error (&t, 4, "a table name", error);
      alter->schema = name_at (&t, 2);
      alter->table = name_at (&t, 4);
      i = 5;
    }
  else
    alter->table = name_at (&t, 2);

  if (is_word (&t, i, "ALTER") && is_word (&t, i + 1, "PRIMARY") && is_word (&t, i + 2, "KEY"))
    {
      guint end = i + 3;

      alter->arm = ARM_ALTER_PRIMARY_KEY;
      if (!is_punct (&t, end, '(') || !skip_group (&t, &end))
        return syntax_error (&t, i + 3, "the key's columns in parentheses", error);
      alter->text = slice (&t, i + 3, end - 1);
      return expect_end (&t, end, error);
    }

  if (is_word (&t, i, "ALTER"))
    {
      i++;
      if (is_word (&t, i, "COLUMN"))
        i++;
      if (!is_name (&t, i))
        return syntax_error (&t, i, "a column name", error);
      alter->column = name_at (&t, i);
      return parse_alter_column (&t, i + 1, alter, error);
    }

  if (is_word (&t, i, "ADD") && is_word (&t, i + 1, "CONSTRAINT"))
    {
      guint start = i + 1;

      alter->arm = ARM_ADD_CONSTRAINT;
      if (!is_name (&t, i + 2))
        return syntax_error (&t, i + 2, "the constraint's name", error);
      alter->name = name_at (&t, i + 2);
      alter->constraint = parse_item (&t, &start, FALSE);
      if (alter->constraint == NULL || alter->constraint->kind == ITEM_NAME_ONLY)
        return syntax_error (&t, i + 3, "UNIQUE (…), CHECK (…) or FOREIGN KEY (…) REFERENCES …",
                             error);
      return expect_end (&t, start, error);
    }

  if (is_word (&t, i, "DROP") && is_word (&t, i + 1, "CONSTRAINT"))
    {
      alter->arm = ARM_DROP_CONSTRAINT;
      if (!is_name (&t, i + 2))
        return syntax_error (&t, i + 2, "the constraint's name", error);
      alter->name = name_at (&t, i + 2);
      return expect_end (&t, i + 3, error);
    }

  if (is_word (&t, i, "RENAME") && is_word (&t, i + 1, "CONSTRAINT"))
    {
      alter->arm = ARM_RENAME_CONSTRAINT;
      if (!is_name (&t, i + 2))
        return syntax_error (&t, i + 2, "the constraint's name", error);
      alter->name = name_at (&t, i + 2);
      if (!is_word (&t, i + 3, "TO"))
        return syntax_error (&t, i + 3, "TO", error);
      if (!is_name (&t, i + 4))
        return syntax_error (&t, i + 4, "the constraint's new name", error);
      alter->new_name = name_at (&t, i + 4);
      alter->new_name_sql = slice (&t, i + 4, i + 4);
      return expect_end (&t, i + 5, error);
    }

  if (is_word (&t, i, "DROP"))
    {
      alter->arm = ARM_DROP_COLUMN;
      i++;
      if (is_word (&t, i, "COLUMN"))
        i++;
      if (!is_name (&t, i))
        return syntax_error (&t, i, "a column name", error);
      alter->column = name_at (&t, i);
      alter->column_sql = slice (&t, i, i);
      return expect_end (&t, i + 1, error);
    }

  return syntax_error (&t, i, "ALTER COLUMN, ALTER PRIMARY KEY, ADD CONSTRAINT, "
                       "DROP CONSTRAINT, RENAME CONSTRAINT or DROP COLUMN", error);
}


/* Foreign keys, validated when SQLite would enforce them */

/* The arms */

typedef struct
{
  gboolean    changed;      /* FALSE: the arm is a no-op */
  gboolean    validate;     /* existing rows must pass the new definition */
  GHashTable *pruned;       /* QStoreIndexSchema * of @old dropped with a column */
  char       *what;         /* what the statement does, for messages */
} Edit;

static void
edit_clear (Edit *edit)
{
  g_clear_pointer (&edit->pruned, g_hash_table_unref);
  g_clear_pointer (&edit->what, g_free);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Edit, edit_clear)

static gboolean
constraint_name_free (TableDef    *def,
                      const char  *table,
                      const char  *name,
                      GError     **error)
{
  g_autoptr(GArray) found = find_named (def, name);

  if (found->len > 0)
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_EXISTS,
                   _("Table “%s” already has a constraint named “%s”: choose another name"),
                   table, name);
      return FALSE;
    }
  return TRUE;
}

static gboolean
edit_column (TableDef           *def,
             QStoreTableSchema  *old,
             Alter              *alter,
             Edit               *edit,
             GError            **error)
{
  ColumnDef *column = find_column_def (def, alter->column);
  int position = qstore_table_schema_find_column (old, alter->column);

  if (column == NULL || position < 0)
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_NOT_FOUND,
                   "no such column: “%s” (table “%s” has no column of that name)",
                   alter->column, old->name);
      return FALSE;
    }

  switch (alter->arm)
    {
    case ARM_SET_NOT_NULL:
      edit->what = g_strdup_printf ("Column “%s” of table “%s” cannot be made NOT NULL",
                                    column->name, old->name);
      if (has_item (column->items, ITEM_NOT_NULL))
        return TRUE;
      /* A plain NULL constraint says the opposite: it goes. */
      remove_items (column->items, ITEM_NULL);
      g_ptr_array_add (column->items, item_new (ITEM_NOT_NULL, "NOT NULL"));
      edit->changed = TRUE;
      edit->validate = TRUE;
      return TRUE;

    case ARM_DROP_NOT_NULL:
      edit->what = g_strdup_printf ("Column “%s” of table “%s” cannot drop NOT NULL",
                                    column->name, old->name);
      edit->changed = remove_items (column->items, ITEM_NOT_NULL) > 0;
      return TRUE;

    case ARM_SET_DEFAULT:
      {
        g_autofree char *body = g_strdup_printf ("DEFAULT %s", alter->text);

        edit->what = g_strdup_printf ("Column “%s” of table “%s” cannot take DEFAULT %s",
                                      column->name, old->name, alter->text);
        remove_items (column->items, ITEM_DEFAULT);
        g_ptr_array_add (column->items, item_new (ITEM_DEFAULT, body));
        edit->changed = TRUE;
        return TRUE;
      }

    case ARM_DROP_DEFAULT:
      edit->what = g_strdup_printf ("Column “%s” of table “%s” cannot drop its DEFAULT",
                                    column->name, old->name);
      edit->changed = remove_items (column->items, ITEM_DEFAULT) > 0;
      return TRUE;

    case ARM_SET_COLLATE:
      {
        g_autofree char *body = g_strdup_printf ("COLLATE %s", alter->text);

        edit->what = g_strdup_printf ("Column “%s” of table “%s” cannot take collation %s",
                                      column->name, old->name, alter->text);
        remove_items (column->items, ITEM_COLLATE);
        g_ptr_array_add (column->items, item_new (ITEM_COLLATE, body));
        edit->changed = TRUE;
        return TRUE;
      }

    default:
      g_assert_not_reached ();
    }
}

static gboolean
edit_constraints (QStoreDatabase     *self,
                  TableDef           *def,
                  QStoreTableSchema  *old,
                  Alter              *alter,
                  Edit               *edit,
                  GError            **error)
{
  g_autoptr(GArray) found = NULL;

  switch (alter->arm)
    {
    case ARM_ADD_CONSTRAINT:
      {
        Item *item = alter->constraint;

        edit->what = g_strdup_printf ("Constraint “%s” cannot be added to table “%s”",
                                      alter->name, old->name);
        if (item->kind == ITEM_PRIMARY_KEY)
          {
            g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_UNSUPPORTED,
                         _("%s: a table has one PRIMARY KEY; change it with ALTER TABLE %s "
                         "ALTER PRIMARY KEY (…)"), edit->what, old->name);
            return FALSE;
          }
        if (!constraint_name_free (def, old->name, alter->name, error))
          return FALSE;
        if (item->kind == ITEM_FOREIGN_KEY && qstore_alter_foreign_keys_enforced (self) &&
            !qstore_alter_check_foreign_key (self, old->name, alter->name, item->columns,
                                             item->parent, item->parent_columns, error))
          return FALSE;

        g_ptr_array_add (def->constraints, g_steal_pointer (&alter->constraint));
        edit->changed = TRUE;
        edit->validate = item->kind == ITEM_CHECK;
        return TRUE;
      }

    case ARM_DROP_CONSTRAINT:
      edit->what = g_strdup_printf ("Constraint “%s” cannot be dropped from table “%s”",
                                    alter->name, old->name);
      found = find_named (def, alter->name);
      if (found->len == 0)
        {
          g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_NOT_FOUND,
                       _("Table “%s” has no constraint named “%s”"), old->name, alter->name);
          return FALSE;
        }
      for (guint i = 0; i < found->len; i++)
        if (g_array_index (found, NamedItem, i).item->kind == ITEM_PRIMARY_KEY)
          {
            g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_UNSUPPORTED,
                         _("%s: it is the PRIMARY KEY, which the rows are stored by; "
                         "change it with ALTER TABLE %s ALTER PRIMARY KEY (…)"),
                         edit->what, old->name);
            return FALSE;
          }
      for (guint i = 0; i < found->len; i++)
        {
          NamedItem *named = &g_array_index (found, NamedItem, i);

          g_ptr_array_remove (named->owner, named->item);
        }
      edit->changed = TRUE;
      return TRUE;

    case ARM_RENAME_CONSTRAINT:
      edit->what = g_strdup_printf ("Constraint “%s” of table “%s” cannot be renamed",
                                    alter->name, old->name);
      found = find_named (def, alter->name);
      if (found->len == 0)
        {
          g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_NOT_FOUND,
                       _("Table “%s” has no constraint named “%s”"), old->name, alter->name);
          return FALSE;
        }
      if (g_ascii_strcasecmp (alter->name, alter->new_name) != 0 &&
          !constraint_name_free (def, old->name, alter->new_name, error))
        return FALSE;
      for (guint i = 0; i < found->len; i++)
        {
          Item *item = g_array_index (found, NamedItem, i).item;

          g_free (item->name);
          g_free (item->name_sql);
          item->name = g_strdup (alter->new_name);
          item->name_sql = g_strdup (alter->new_name_sql);
        }
      edit->changed = TRUE;
      return TRUE;

    case ARM_ALTER_PRIMARY_KEY:
      {
        g_autofree char *body = g_strdup_printf ("PRIMARY KEY %s", alter->text);

        edit->what = g_strdup_printf ("The PRIMARY KEY of table “%s” cannot become %s",
                                      old->name, alter->text);
        for (guint i = 0; i < def->columns->len; i++)
          remove_items (((ColumnDef *) g_ptr_array_index (def->columns, i))->items,
                        ITEM_PRIMARY_KEY);
        remove_items (def->constraints, ITEM_PRIMARY_KEY);
        g_ptr_array_add (def->constraints, item_new (ITEM_PRIMARY_KEY, body));
        edit->changed = TRUE;
        /* NOT NULL of key columns, and an INTEGER PRIMARY KEY's type. */
        edit->validate = TRUE;
        return TRUE;
      }

    default:
      g_assert_not_reached ();
    }
}

/* Whether @sql, a predicate, mentions column @name. */
static gboolean
mentions_column (const char *sql,
                 const char *name)
{
  g_autoptr(GArray) toks = NULL;
  Tokens t;

  if (sql == NULL)
    return FALSE;
  toks = qstore_sql_tokenize (sql);
  t = (Tokens) { sql, toks, toks->len };
  for (guint i = 0; i < t.end; i++)
    {
      g_autofree char *word = NULL;

      if (!is_kind (&t, i, QSTORE_SQL_TOKEN_WORD) && !is_kind (&t, i, QSTORE_SQL_TOKEN_QUOTED))
        continue;
      word = name_at (&t, i);
      if (g_ascii_strcasecmp (word, name) == 0)
        return TRUE;
    }
  return FALSE;
}

static gboolean
uses_column (QStoreIndexSchema *index,
             int                position,
             const char        *name)
{
  for (guint i = 0; i < index->parts->len; i++)
    if (g_array_index (index->parts, QStoreKeyPart, i).column == (guint) position)
      return TRUE;
  return mentions_column (index->where_sql, name);
}

/* DROP COLUMN: the indexes and UNIQUE constraints that use the column go
 * with it; SQLite then drops it (and refuses what still needs it). */
static void
edit_drop_column (TableDef           *def,
                  QStoreTableSchema  *old,
                  Alter              *alter,
                  Edit               *edit)
{
  int position = qstore_table_schema_find_column (old, alter->column);

  edit->pruned = g_hash_table_new (NULL, NULL);
  if (position < 0)
    return;

  for (guint i = 0; i < old->indexes->len; i++)
    {
      QStoreIndexSchema *index = g_ptr_array_index (old->indexes, i);

      if (qstore_alter_is_explicit_index (index) && uses_column (index, position, alter->column))
        g_hash_table_add (edit->pruned, index);
    }

  for (guint i = 0; i < def->columns->len; i++)
    {
      ColumnDef *column = g_ptr_array_index (def->columns, i);

      if (g_ascii_strcasecmp (column->name, alter->column) == 0)
        edit->changed |= remove_items (column->items, ITEM_UNIQUE) > 0;
    }
  for (guint i = def->constraints->len; i > 0; i--)
    {
      Item *item = g_ptr_array_index (def->constraints, i - 1);

      if (item->kind == ITEM_UNIQUE && names_contain (item->columns, alter->column))
        {
          g_ptr_array_remove_index (def->constraints, i - 1);
          edit->changed = TRUE;
        }
    }
}

/* Runs the DROP COLUMN itself on the mirror, with SQLite's checks and
 * messages. */
static gboolean
drop_column_on_scratch (QStoreDatabase     *self,
                        QStoreTableSchema  *old,
                        Alter              *alter,
                        Edit               *edit,
                        GError            **error)
{
  g_autofree char *table = qstore_sql_quote (old->name);
  /* The column as written: SQLite's messages quote it. */
  g_autofree char *sql = g_strdup_printf ("ALTER TABLE main.%s DROP COLUMN %s", table,
                                          alter->column_sql);
  GHashTableIter iter;
  QStoreIndexSchema *index;

  /* When the table text was not rewritten, the mirror still has them. */
  if (!edit->changed)
    {
      g_hash_table_iter_init (&iter, edit->pruned);
      while (g_hash_table_iter_next (&iter, (gpointer *) &index, NULL))
        {
          g_autofree char *quoted = qstore_sql_quote (index->name);
          g_autofree char *drop = g_strdup_printf ("DROP INDEX main.%s", quoted);

          if (!qstore_database_run (self, self->scratch, drop, error))
            return FALSE;
        }
    }
  return qstore_database_run (self, self->scratch, sql, error);
}

static gboolean
check_not_exists (QStoreDatabase  *self,
                  Alter           *alter,
                  GError         **error)
{
  /* Another kind of table SQLite knows: not one of qstore's. */
  if (sqlite3_table_column_metadata (self->db, alter->schema, alter->table, NULL,
                                     NULL, NULL, NULL, NULL, NULL) == SQLITE_OK)
    g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_UNSUPPORTED,
                 _("Table “%s” is not a qstore table, and SQLite's own tables take only "
                 "ADD, RENAME and DROP COLUMN and RENAME TO: recreate it with the new "
                 "definition"), alter->table);
  else
    g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_NOT_FOUND, "no such table: %s%s%s",
                 alter->schema ? alter->schema : "", alter->schema ? "." : "", alter->table);
  return FALSE;
}

gboolean
qstore_alter_table (QStoreDatabase   *self,
                    QStoreStatement  *statement,
                    QStoreResult    **result,
                    GError          **error)
{
  const char *sql = statement->text;
  const char *tail = NULL;
  g_auto(Alter) alter = { 0 };
  g_auto(Edit) edit = { 0 };
  g_autoptr(TableDef) def = NULL;
  g_autoptr(QStoreTableSchema) old_schema = NULL;
  g_autoptr(QStoreTableSchema) new_schema = NULL;
  g_autoptr(QStoreTable) new_table = NULL;
  g_autofree char *new_sql = NULL;
  g_autofree int *old_column = NULL;
  QStoreSqlTable *entry;
  QStoreMigration migration = { 0 };
  GError *local_error = NULL;
  int dropped = -1;

  if (!parse_alter (sql, &alter, &tail, error))
    return FALSE;

  entry = alter.schema == NULL || g_ascii_strcasecmp (alter.schema, "main") == 0
          ? qstore_database_lookup (self, alter.table) : NULL;
  if (entry == NULL)
    return check_not_exists (self, &alter, error);
  if (!qstore_database_check_writable (self, error))
    return FALSE;

  old_schema = qstore_table_schema_ref (entry->schema);
  if (!(def = table_def_parse (old_schema->sql, old_schema->name, error)))
    return FALSE;

  switch (alter.arm)
    {
    case ARM_SET_NOT_NULL:
    case ARM_DROP_NOT_NULL:
    case ARM_SET_DEFAULT:
    case ARM_DROP_DEFAULT:
    case ARM_SET_COLLATE:
      if (!edit_column (def, old_schema, &alter, &edit, error))
        return FALSE;
      break;

    case ARM_DROP_COLUMN:
      edit_drop_column (def, old_schema, &alter, &edit);
      dropped = qstore_table_schema_find_column (old_schema, alter.column);
      break;

    default:
      if (!edit_constraints (self, def, old_schema, &alter, &edit, error))
        return FALSE;
      break;
    }

  if (!edit.changed && alter.arm != ARM_DROP_COLUMN)
    return TRUE;

  if (!qstore_ddl_scratch_begin (self, error))
    return FALSE;

  new_sql = table_def_to_sql (def);
  if ((edit.changed && !qstore_alter_replace_mirror (self, old_schema, new_sql, edit.pruned, &local_error)) ||
      (alter.arm == ARM_DROP_COLUMN &&
       !drop_column_on_scratch (self, old_schema, &alter, &edit, &local_error)) ||
      !(new_schema = qstore_table_schema_from_sqlite (self->scratch, "main", old_schema->name,
                                                      &local_error)) ||
      !qstore_ddl_check_conflict_clauses (old_schema->name, old_schema->sql, new_schema->sql,
                                          &local_error) ||
      !(new_table = qstore_table_new (self->coordinator, new_schema, self->scratch,
                                      &local_error)))
    goto fail;

  /* Where each column of the new definition was. */
  old_column = g_new0 (int, new_schema->columns->len + 1);
  for (guint i = 0; i < new_schema->columns->len; i++)
    old_column[i] = dropped >= 0 && (int) i >= dropped ? (int) i + 1 : (int) i;
  g_assert (new_schema->columns->len + (dropped >= 0 ? 1 : 0) == old_schema->columns->len);

  migration.db = self;
  migration.old_table = entry->table;
  migration.new_table = new_table;
  migration.old_schema = old_schema;
  migration.new_schema = new_schema;
  migration.old_column = old_column;
  migration.validate = edit.validate;
  if (!qstore_alter_migrate (&migration, &local_error))
    goto fail;

  qstore_sql_table_set_table (entry, new_table);
  if (!qstore_ddl_scratch_commit (self, error))
    return FALSE;
  /* SQLite learns a virtual table's columns and collations when it
   * connects. */
  return qstore_database_redeclare (self, entry, error);

fail:
  qstore_ddl_scratch_undo (self);
  /* DROP COLUMN keeps SQLite's words; the other arms say what failed. */
  if (edit.what != NULL)
    g_prefix_error (&local_error, _("%s: "), edit.what);
  g_propagate_error (error, local_error);
  return FALSE;
}
