/* qstore-mview-plan.c: planning a view's body: what it reads, what it gives, how to keep it
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include <json-glib/json-glib.h>

#include "qstore-affinity-private.h"
#include "qstore-coordinator-private.h"
#include "qstore-enums.h"
#include "qstore-error.h"
#include "qstore-i18n-private.h"
#include "qstore-provider-private.h"
#include "qstore-result-private.h"
#include "qstore-sql-token-private.h"
#include "qstore-table-schema-private.h"
#include "qstore-vtab-private.h"
#include "qstore-mview-plan-private.h"

/* A view's body is planned with SQLite's help: the authorizer says which
 * columns of which tables it reads, EXPLAIN says whether a key or a group
 * can be sought, and the body's own result columns give the backing
 * table's shape. The plan then picks the cheapest way to keep the view:
 * per changed key, per changed group, or a full rebuild. */

static gboolean
token_is_name (const QStoreSqlToken *token)
{
  return token->kind == QSTORE_SQL_TOKEN_WORD || token->kind == QSTORE_SQL_TOKEN_QUOTED;
}

char *
qstore_mview_lower (const char *name)
{
  return g_ascii_strdown (name, -1);
}

char *
qstore_mview_qualified (const char *name)
{
  g_autofree char *low = qstore_mview_lower (name);

  return g_strconcat ("main.", low, NULL);
}

/* Case-insensitive (ASCII) keys, so a table name as a table spells it
 * finds the views without a copy per row change. */
guint
qstore_mview_name_hash (gconstpointer key)
{
  guint hash = 5381;

  for (const char *p = key; *p != '\0'; p++)
    hash = hash * 33 + g_ascii_tolower (*p);
  return hash;
}

gboolean
qstore_mview_name_equal (gconstpointer a,
                         gconstpointer b)
{
  return g_ascii_strcasecmp (a, b) == 0;
}

/* Statements */

static void
plan_column_free (PlanColumn *column)
{
  g_free (column->name);
  g_free (column->body_name);
  g_free (column->decl_type);
  g_free (column->origin_db);
  g_free (column->origin_table);
  g_free (column->origin_column);
  g_free (column);
}

static void
plan_source_free (PlanSource *source)
{
  g_free (source->name);
  g_free (source->lower);
  g_free (source->primary_key);
  g_free (source);
}

static void
plan_read_free (PlanRead *read)
{
  g_free (read->table);
  g_free (read->column);
  g_free (read->signature);
  g_free (read);
}

void
qstore_mview_plan_free (Plan *plan)
{
  if (plan == NULL)
    return;
  g_ptr_array_unref (plan->sources);
  g_ptr_array_unref (plan->reads);
  g_ptr_array_unref (plan->columns);
  g_array_unref (plan->key_out);
  g_array_unref (plan->key_src);
  g_free (plan->backing_sql);
  g_free (plan->all_sql);
  g_free (plan->key_sql);
  g_free (plan);
}

static Plan *
plan_new_empty (void)
{
  Plan *plan = g_new0 (Plan, 1);

  plan->sources = g_ptr_array_new_with_free_func ((GDestroyNotify) plan_source_free);
  plan->reads = g_ptr_array_new_with_free_func ((GDestroyNotify) plan_read_free);
  plan->columns = g_ptr_array_new_with_free_func ((GDestroyNotify) plan_column_free);
  plan->key_out = g_array_new (FALSE, FALSE, sizeof (guint));
  plan->key_src = g_array_new (FALSE, FALSE, sizeof (guint));
  plan->source = -1;
  plan->strategy = QSTORE_MATERIALIZED_VIEW_STRATEGY_FULL_REBUILD;
  return plan;
}

gboolean
qstore_mview_plan_is_keyed (const Plan *plan)
{
  return plan->key_out->len > 0;
}

PlanSource *
qstore_mview_plan_find_source (const Plan *plan,
                               const char *lower_name,
                               gboolean    temp)
{
  for (guint i = 0; i < plan->sources->len; i++)
    {
      PlanSource *source = g_ptr_array_index (plan->sources, i);

      if (source->temp == temp && g_str_equal (source->lower, lower_name))
        return source;
    }
  return NULL;
}

/* The views */

gboolean
qstore_mview_set_sqlite_error (QStoreDatabase  *db,
                               sqlite3         *conn,
                               int              rc,
                               const char      *view,
                               GError         **error)
{
  qstore_database_set_sqlite_error (db, conn, rc, error);
  g_prefix_error (error, _("Materialized view “%s”: "), view);
  return FALSE;
}

typedef struct
{
  GPtrArray  *reads;     /* char *: "db\ttable\tcolumn" */
  GHashTable *seen;      /* the same, folded to lower case */
  int         refused;   /* the first action that is not a read, or 0 */
} PlanAuth;

/* A column read twice, or once by name and once by a join, is listed once. */
static void
plan_auth_add (PlanAuth   *auth,
               const char *db_name,
               const char *table,
               const char *column)
{
  char *read = g_strdup_printf ("%s\t%s\t%s", db_name, table, column);
  char *folded = g_ascii_strdown (read, -1);

  if (g_hash_table_add (auth->seen, folded))
    g_ptr_array_add (auth->reads, read);
  else
    g_free (read);
}

static int
plan_authorizer (void       *data,
                 int         action,
                 const char *arg1,
                 const char *arg2,
                 const char *db_name,
                 const char *inner)
{
  PlanAuth *auth = data;

  switch (action)
    {
    case SQLITE_READ:
      if (arg1 != NULL && g_ascii_strncasecmp (arg1, "sqlite_", 7) != 0)
        plan_auth_add (auth, db_name != NULL ? db_name : "main", arg1, arg2 != NULL ? arg2 : "");
      return SQLITE_OK;

    case SQLITE_SELECT:
    case SQLITE_FUNCTION:
    case SQLITE_RECURSIVE:
      return SQLITE_OK;

    default:
      if (auth->refused == 0)
        auth->refused = action;
      return SQLITE_DENY;
    }
}

/* The planner names the columns a join's USING or NATURAL compares, which
 * the authorizer does not: without them a change to such a column, or to
 * a table read only through one, would pass the view by. */
static void
plan_columns_used (gpointer        data,
                   QStoreSqlTable *entry,
                   guint64         mask)
{
  PlanAuth *auth = data;
  GPtrArray *columns = entry->schema->columns;

  for (guint i = 0; i < columns->len; i++)
    if (mask & (G_GUINT64_CONSTANT (1) << MIN (i, 63)))
      plan_auth_add (auth, "main", entry->schema->name,
                     ((QStoreColumn *) g_ptr_array_index (columns, i))->name);
}

static QStoreCollation
collation_from_name (const char *name)
{
  if (name != NULL && g_ascii_strcasecmp (name, "NOCASE") == 0)
    return QSTORE_COLLATION_NOCASE;
  if (name != NULL && g_ascii_strcasecmp (name, "RTRIM") == 0)
    return QSTORE_COLLATION_RTRIM;
  return QSTORE_COLLATION_BINARY;
}

static char *
primary_key_signature (QStoreTableSchema *schema)
{
  GString *text = g_string_new (NULL);

  if (schema->rowid_column >= 0)
    g_string_append_printf (text, "rowid=%s",
                            ((QStoreColumn *) g_ptr_array_index (schema->columns,
                                                                 schema->rowid_column))->name);
  else if (schema->pk->len == 0)
    g_string_append (text, "rowid");
  for (guint i = 0; i < schema->pk->len; i++)
    {
      QStoreKeyPart *part = &g_array_index (schema->pk, QStoreKeyPart, i);
      QStoreColumn *column = g_ptr_array_index (schema->columns, part->column);

      g_string_append_printf (text, "%s%s %s%s", i > 0 ? ", " : "", column->name,
                              qstore_collation_name (part->collation),
                              part->descending ? " DESC" : "");
    }
  return g_string_free (text, FALSE);
}

static gboolean
is_rowid_name (const char *name)
{
  return g_ascii_strcasecmp (name, "rowid") == 0 || g_ascii_strcasecmp (name, "oid") == 0 ||
         g_ascii_strcasecmp (name, "_rowid_") == 0;
}

/* What the body reads of column @column, for the staleness check. */
static char *
read_signature (QStoreDatabase *db,
                gboolean        temp,
                const char     *table,
                const char     *column)
{
  if (*column == '\0')
    return g_strdup ("");

  if (temp)
    {
      const char *type = NULL, *collation = NULL;

      if (sqlite3_table_column_metadata (db->db, "temp", table, column, &type, &collation,
                                         NULL, NULL, NULL) != SQLITE_OK)
        return NULL;
      return g_strdup_printf ("%s|%s", type != NULL ? type : "",
                              qstore_collation_name (collation_from_name (collation)));
    }
  else
    {
      QStoreSqlTable *entry = qstore_database_lookup (db, table);
      int i;

      if (entry == NULL)
        return NULL;
      i = qstore_table_schema_find_column (entry->schema, column);
      if (i < 0)
        return is_rowid_name (column) ? g_strdup ("rowid") : NULL;
      return g_strdup_printf ("%s|%s",
                              ((QStoreColumn *) g_ptr_array_index (entry->schema->columns, i))->decl_type,
                              qstore_collation_name (((QStoreColumn *) g_ptr_array_index (entry->schema->columns, i))->collation));
    }
}

static int
compare_sources (gconstpointer a,
                 gconstpointer b)
{
  const PlanSource *x = *(PlanSource * const *) a;
  const PlanSource *y = *(PlanSource * const *) b;

  if (x->temp != y->temp)
    return x->temp ? 1 : -1;
  return strcmp (x->lower, y->lower);
}

static int
compare_reads (gconstpointer a,
               gconstpointer b)
{
  const PlanRead *x = *(PlanRead * const *) a;
  const PlanRead *y = *(PlanRead * const *) b;
  int cmp = strcmp (x->table, y->table);

  return cmp != 0 ? cmp : strcmp (x->column, y->column);
}

/* The shape of a body, as far as choosing a strategy needs it. */
typedef struct
{
  gboolean   simple;       /* starts with SELECT, one SELECT in all, no compound */
  gboolean   distinct;
  gboolean   limit;
  gboolean   window;
  gboolean   group_by;
  gboolean   group_plain;  /* every GROUP BY term is a plain column name */
  gboolean   having;
  GPtrArray *group_columns; /* char * */
} BodyShape;

static void
body_shape_clear (BodyShape *shape)
{
  g_clear_pointer (&shape->group_columns, g_ptr_array_unref);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (BodyShape, body_shape_clear)

static gboolean
ends_group_by (const QStoreSqlToken *token)
{
  return token->kind == QSTORE_SQL_TOKEN_END || qstore_sql_token_is_punct (token, ';') ||
         qstore_sql_token_is (token, "HAVING") || qstore_sql_token_is (token, "WINDOW") ||
         qstore_sql_token_is (token, "ORDER") || qstore_sql_token_is (token, "LIMIT") ||
         qstore_sql_token_is (token, "UNION") || qstore_sql_token_is (token, "INTERSECT") ||
         qstore_sql_token_is (token, "EXCEPT");
}

static void
scan_body (const char *body,
           BodyShape  *shape)
{
  QStoreSqlToken token;
  const char *p = body;
  guint n_select = 0;
  int depth = 0;
  gboolean first = TRUE;
  gboolean compound = FALSE;

  shape->group_columns = g_ptr_array_new_with_free_func (g_free);
  shape->group_plain = TRUE;
  shape->simple = TRUE;

  for (;;)
    {
      p = qstore_sql_next_token (p, &token);
      if (token.kind == QSTORE_SQL_TOKEN_END)
        break;

      if (first)
        {
          first = FALSE;
          if (!qstore_sql_token_is (&token, "SELECT"))
            shape->simple = FALSE;
          n_select++;
          p = qstore_sql_next_token (p, &token);
          if (qstore_sql_token_is (&token, "DISTINCT"))
            {
              shape->distinct = TRUE;
              continue;
            }
          if (token.kind == QSTORE_SQL_TOKEN_END)
            break;
        }

      if (qstore_sql_token_is_punct (&token, '('))
        depth++;
      else if (qstore_sql_token_is_punct (&token, ')'))
        depth--;
      else if (qstore_sql_token_is (&token, "SELECT") || qstore_sql_token_is (&token, "VALUES"))
        n_select++;
      else if (qstore_sql_token_is (&token, "OVER") || qstore_sql_token_is (&token, "WINDOW"))
        shape->window = TRUE;
      else if (depth == 0 && (qstore_sql_token_is (&token, "UNION") || qstore_sql_token_is (&token, "INTERSECT") ||
                              qstore_sql_token_is (&token, "EXCEPT")))
        compound = TRUE;
      else if (depth == 0 && (qstore_sql_token_is (&token, "LIMIT") || qstore_sql_token_is (&token, "OFFSET")))
        shape->limit = TRUE;
      else if (depth == 0 && qstore_sql_token_is (&token, "HAVING"))
        shape->having = TRUE;
      else if (depth == 0 && qstore_sql_token_is (&token, "GROUP"))
        {
          QStoreSqlToken by;

          p = qstore_sql_next_token (p, &by);
          if (!qstore_sql_token_is (&by, "BY"))
            {
              shape->simple = FALSE;
              continue;
            }
          shape->group_by = TRUE;
          /* term [, term]*: each a name, optionally qualified */
          for (;;)
            {
              QStoreSqlToken parts[4];
              guint n = 0;
              const char *q = p;

              for (;;)
                {
                  QStoreSqlToken t;
                  const char *after = qstore_sql_next_token (q, &t);

                  if (ends_group_by (&t) || qstore_sql_token_is_punct (&t, ','))
                    break;
                  if (n < G_N_ELEMENTS (parts))
                    parts[n] = t;
                  n++;
                  q = after;
                  if (qstore_sql_token_is_punct (&t, '('))
                    {
                      /* an expression: skip to its end */
                      int inner = 1;

                      while (inner > 0)
                        {
                          q = qstore_sql_next_token (q, &t);
                          if (t.kind == QSTORE_SQL_TOKEN_END)
                            break;
                          if (qstore_sql_token_is_punct (&t, '('))
                            inner++;
                          else if (qstore_sql_token_is_punct (&t, ')'))
                            inner--;
                          else if (qstore_sql_token_is (&t, "SELECT"))
                            n_select++;
                        }
                    }
                }
              p = q;

              if ((n == 1 && token_is_name (&parts[0])) ||
                  (n == 3 && token_is_name (&parts[0]) && qstore_sql_token_is_punct (&parts[1], '.') &&
                   token_is_name (&parts[2])))
                g_ptr_array_add (shape->group_columns, qstore_sql_token_name (&parts[n - 1]));
              else
                shape->group_plain = FALSE;

              p = qstore_sql_next_token (p, &token);
              if (!qstore_sql_token_is_punct (&token, ','))
                break;
            }
          /* @token ends the GROUP BY: look at it as usual */
          if (token.kind == QSTORE_SQL_TOKEN_END)
            break;
          if (qstore_sql_token_is (&token, "HAVING"))
            shape->having = TRUE;
          else if (qstore_sql_token_is (&token, "WINDOW"))
            shape->window = TRUE;
          else if (qstore_sql_token_is (&token, "LIMIT"))
            shape->limit = TRUE;
          else if (qstore_sql_token_is (&token, "UNION") || qstore_sql_token_is (&token, "INTERSECT") ||
                   qstore_sql_token_is (&token, "EXCEPT"))
            compound = TRUE;
        }
    }

  if (n_select != 1 || compound)
    shape->simple = FALSE;
}

/* Opcodes of the body's program: how many cursors it opens on tables and
 * whether it aggregates. */
static gboolean
explain_body (sqlite3     *conn,
              const char  *body,
              guint       *n_cursors,
              gboolean    *aggregate)
{
  g_autofree char *sql = g_strconcat ("EXPLAIN ", body, NULL);
  g_autoptr(sqlite3_stmt) stmt = NULL;

  *n_cursors = 0;
  *aggregate = FALSE;
  if (sqlite3_prepare_v2 (conn, sql, -1, &stmt, NULL) != SQLITE_OK)
    return FALSE;
  while (sqlite3_step (stmt) == SQLITE_ROW)
    {
      const char *opcode = (const char *) sqlite3_column_text (stmt, 1);

      if (opcode == NULL)
        continue;
      if (g_str_equal (opcode, "VOpen") || g_str_equal (opcode, "OpenRead"))
        (*n_cursors)++;
      else if (g_str_has_prefix (opcode, "Agg"))
        *aggregate = TRUE;
    }
  return TRUE;
}

/* Whether SQLite would walk a whole table for @sql. */
static gboolean
query_scans (sqlite3    *conn,
             const char *sql)
{
  g_autofree char *explain = g_strconcat ("EXPLAIN QUERY PLAN ", sql, NULL);
  g_autoptr(sqlite3_stmt) stmt = NULL;
  gboolean scans = FALSE;

  if (sqlite3_prepare_v2 (conn, explain, -1, &stmt, NULL) != SQLITE_OK)
    return TRUE;
  while (sqlite3_step (stmt) == SQLITE_ROW)
    {
      const char *detail = (const char *) sqlite3_column_text (stmt, 3);

      if (detail == NULL)
        continue;
      if (g_str_has_prefix (detail, "SCAN ") &&
          (strstr (detail, "VIRTUAL TABLE") == NULL || g_str_has_suffix (detail, ":scan")))
        {
          /* the subquery's own rows are no table */
          if (!g_str_has_prefix (detail, "SCAN (subquery") && !g_str_has_prefix (detail, "SCAN CONSTANT"))
            scans = TRUE;
        }
    }
  return scans;
}

static PlanColumn *
find_output_column (Plan              *plan,
                    const PlanSource  *source,
                    const char        *column)
{
  for (guint j = 0; j < plan->columns->len; j++)
    {
      PlanColumn *out = g_ptr_array_index (plan->columns, j);

      if (out->origin_table != NULL && g_strcmp0 (out->origin_db, "main") == 0 &&
          g_str_equal (out->origin_table, source->lower) &&
          g_ascii_strcasecmp (out->origin_column, column) == 0)
        return out;
    }
  return NULL;
}

static guint
output_position (Plan       *plan,
                 PlanColumn *column)
{
  guint j;

  g_ptr_array_find (plan->columns, column, &j);
  return j;
}

/* Picks the backing's key and the strategy. */
static void
plan_strategy (QStoreDatabase  *db,
               Plan            *plan,
               const char      *body)
{
  g_auto(BodyShape) shape = { 0 };
  PlanSource *source;
  QStoreSqlTable *entry;
  QStoreTableSchema *schema;
  guint n_cursors;
  gboolean aggregate;
  gboolean candidate = FALSE;
  gboolean grouped = FALSE;

  if (plan->sources->len != 1 || plan->has_temp)
    return;
  source = g_ptr_array_index (plan->sources, 0);
  entry = qstore_database_lookup (db, source->name);
  if (entry == NULL)
    return;
  schema = entry->schema;

  scan_body (body, &shape);
  if (!shape.simple || shape.distinct || shape.limit || shape.window)
    return;
  if (!explain_body (db->db, body, &n_cursors, &aggregate) || n_cursors != 1)
    return;

  if (!aggregate && !shape.group_by && !shape.having)
    {
      /* Inverse projection: every key column of the source passes through. */
      g_autoptr(GArray) key = g_array_new (FALSE, FALSE, sizeof (QStoreKeyPart));

      if (schema->rowid_column >= 0)
        {
          QStoreKeyPart part = { schema->rowid_column, QSTORE_COLLATION_BINARY, FALSE };

          g_array_append_val (key, part);
        }
      else
        g_array_append_vals (key, schema->pk->data, schema->pk->len);

      candidate = key->len > 0;
      for (guint k = 0; candidate && k < key->len; k++)
        {
          QStoreKeyPart *part = &g_array_index (key, QStoreKeyPart, k);
          QStoreColumn *column = g_ptr_array_index (schema->columns, part->column);
          PlanColumn *out = find_output_column (plan, source, column->name);
          guint j;

          /* The key's collation must be the one the lookup compares with. */
          if (out == NULL || (schema->rowid_column < 0 && part->collation != column->collation))
            {
              candidate = FALSE;
              break;
            }
          j = output_position (plan, out);
          g_array_append_val (plan->key_out, j);
          g_array_append_val (plan->key_src, part->column);
        }
    }
  else if (aggregate && shape.group_by && shape.group_plain && shape.group_columns->len > 0)
    {
      candidate = TRUE;
      grouped = TRUE;
      for (guint k = 0; candidate && k < shape.group_columns->len; k++)
        {
          const char *name = g_ptr_array_index (shape.group_columns, k);
          int c = qstore_table_schema_find_column (schema, name);
          PlanColumn *out;
          guint j;
          gboolean seen = FALSE;

          if (c < 0 || !(out = find_output_column (plan, source, name)))
            {
              candidate = FALSE;
              break;
            }
          /* A result column named like the term but reading something else
           * would make the term ambiguous. */
          for (guint i = 0; i < plan->columns->len; i++)
            {
              PlanColumn *other = g_ptr_array_index (plan->columns, i);

              if (g_ascii_strcasecmp (other->body_name, name) == 0 &&
                  (other->origin_table == NULL || !g_str_equal (other->origin_table, source->lower) ||
                   g_ascii_strcasecmp (other->origin_column, name) != 0))
                candidate = FALSE;
            }
          j = output_position (plan, out);
          for (guint i = 0; i < plan->key_out->len; i++)
            seen = seen || g_array_index (plan->key_out, guint, i) == j;
          if (seen)
            continue;
          g_array_append_val (plan->key_out, j);
          g_array_append_val (plan->key_src, c);
        }
    }

  if (!candidate)
    {
      g_array_set_size (plan->key_out, 0);
      g_array_set_size (plan->key_src, 0);
      return;
    }

  plan->source = 0;
  {
    GString *sql = g_string_new (plan->all_sql);

    for (guint k = 0; k < plan->key_out->len; k++)
      {
        PlanColumn *out = g_ptr_array_index (plan->columns, g_array_index (plan->key_out, guint, k));
        g_autofree char *quoted = qstore_sql_quote (out->body_name);

        g_string_append_printf (sql, "%s%s IS ?%u", k == 0 ? " WHERE " : " AND ", quoted, k + 1);
      }
    plan->key_sql = g_string_free (sql, FALSE);
  }

  /* The key lookup must reach the source through its key or an index:
   * a lookup that walks the table costs more than one rebuild per
   * transaction. The backing keeps its key either way. */
  if (!query_scans (db->db, plan->key_sql))
    plan->strategy = grouped ? QSTORE_MATERIALIZED_VIEW_STRATEGY_GROUP_RECOMPUTE
                             : QSTORE_MATERIALIZED_VIEW_STRATEGY_INVERSE_PROJECTION;
}

static char *
backing_sql (QStoreDatabase *db,
             const char     *name,
             Plan           *plan)
{
  GString *sql = g_string_new ("CREATE TABLE ");
  g_autofree char *quoted = qstore_sql_quote (name);
  QStoreSqlTable *source = NULL;

  if (plan->source >= 0)
    source = qstore_database_lookup (db, ((PlanSource *) g_ptr_array_index (plan->sources,
                                                                            plan->source))->name);

  g_string_append_printf (sql, "%s (", quoted);
  for (guint j = 0; j < plan->columns->len; j++)
    {
      PlanColumn *column = g_ptr_array_index (plan->columns, j);
      g_autofree char *column_name = qstore_sql_quote (column->name);
      const char *type = column->decl_type;

      /* A lone INTEGER key column would alias the rowid and take integers
       * only; unless the source's does too, keep its affinity without it. */
      if (plan->key_out->len == 1 && g_array_index (plan->key_out, guint, 0) == j &&
          type != NULL && g_ascii_strcasecmp (type, "INTEGER") == 0 &&
          (source == NULL ||
           source->schema->rowid_column != (gint) g_array_index (plan->key_src, guint, 0)))
        type = "INT";

      g_string_append_printf (sql, "%s%s", j > 0 ? ", " : "", column_name);
      if (type != NULL && *type != '\0')
        g_string_append_printf (sql, " %s", type);
      if (column->collation != QSTORE_COLLATION_BINARY)
        g_string_append_printf (sql, " COLLATE %s", qstore_collation_name (column->collation));
    }
  if (qstore_mview_plan_is_keyed (plan))
    {
      g_string_append (sql, ", PRIMARY KEY (");
      for (guint k = 0; k < plan->key_out->len; k++)
        {
          PlanColumn *column = g_ptr_array_index (plan->columns, g_array_index (plan->key_out, guint, k));
          g_autofree char *column_name = qstore_sql_quote (column->name);

          g_string_append_printf (sql, "%s%s", k > 0 ? ", " : "", column_name);
        }
      g_string_append (sql, ")");
    }
  g_string_append (sql, ")");
  return g_string_free (sql, FALSE);
}

static Plan *
plan_failed (QStoreDatabase  *db,
             int              rc,
             const char      *label,
             GError         **error)
{
  qstore_database_set_sqlite_error (db, db->db, rc, error);
  g_prefix_error (error, "%s: ", label);
  return NULL;
}

/* Plans the body of view @name: what it reads (from SQLite's authorizer
 * while it prepares), what it gives, its key and its strategy. */
Plan *
qstore_mview_plan_new (QStoreDatabase  *db,
                       const char      *name,
                       const char      *body,
                       GPtrArray       *column_names,
                       GError         **error)
{
  g_autofree char *label = g_strdup_printf ("Materialized view “%s”", name);

  return qstore_mview_plan_new_for (db, label, name, body, column_names, error);
}

Plan *
qstore_mview_plan_new_for (QStoreDatabase  *db,
                           const char      *label,
                           const char      *name,
                           const char      *body,
                           GPtrArray       *column_names,
                           GError         **error)
{
  g_autoptr(Plan) plan = plan_new_empty ();
  g_autoptr(sqlite3_stmt) stmt = NULL;
  g_autoptr(GHashTable) seen = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_autoptr(GHashTable) names = g_hash_table_new_full (qstore_mview_name_hash, qstore_mview_name_equal, g_free, NULL);
  PlanAuth auth = { g_ptr_array_new_with_free_func (g_free), seen, 0 };
  g_autofree char *view_lower = qstore_mview_lower (name);
  int (*previous) (void *, int, const char *, const char *, const char *, const char *);
  gpointer previous_data;
  const char *tail = NULL;
  int rc;

  /* Whatever authorizes the statement being run, if any, comes back. */
  previous = db->authorizer;
  previous_data = db->authorizer_data;
  qstore_database_set_authorizer (db, plan_authorizer, &auth);
  db->columns_used = plan_columns_used;
  db->columns_used_data = &auth;
  rc = sqlite3_prepare_v2 (db->db, body, -1, &stmt, &tail);
  db->columns_used = NULL;
  db->columns_used_data = NULL;
  qstore_database_set_authorizer (db, previous, previous_data);
  if (rc != SQLITE_OK)
    {
      g_ptr_array_unref (auth.reads);
      if (auth.refused != 0)
        {
          g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                       _("%s: its body must be a query that only reads (SELECT …)"), label);
          return NULL;
        }
      return plan_failed (db, rc, label, error);
    }
  if (stmt == NULL || *qstore_sql_skip_space (tail) != '\0' || !sqlite3_stmt_readonly (stmt) ||
      sqlite3_column_count (stmt) == 0)
    {
      g_ptr_array_unref (auth.reads);
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                   _("%s: its body must be one SELECT that returns columns"), label);
      return NULL;
    }
  g_clear_pointer (&stmt, sqlite3_finalize);

  /* Sources and what is read of them */
  for (guint i = 0; i < auth.reads->len; i++)
    {
      g_auto(GStrv) parts = g_strsplit (g_ptr_array_index (auth.reads, i), "\t", 3);
      gboolean temp = g_ascii_strcasecmp (parts[0], "temp") == 0;
      g_autofree char *table_lower = qstore_mview_lower (parts[1]);
      QStoreSqlTable *entry = NULL;
      PlanSource *source;
      PlanRead *read;

      if (!temp)
        {
          if (g_ascii_strcasecmp (parts[0], "main") != 0 ||
              !(entry = qstore_database_lookup (db, parts[1])))
            continue;   /* a plain view, read through: its tables are listed too */
          if (g_str_equal (table_lower, view_lower))
            {
              g_ptr_array_unref (auth.reads);
              g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                           _("%s cannot read itself"), label);
              return NULL;
            }
        }

      source = qstore_mview_plan_find_source (plan, table_lower, temp);
      if (source == NULL)
        {
          source = g_new0 (PlanSource, 1);
          source->name = g_strdup (entry != NULL ? entry->schema->name : parts[1]);
          source->lower = g_strdup (table_lower);
          source->temp = temp;
          source->primary_key = entry != NULL ? primary_key_signature (entry->schema) : g_strdup ("");
          g_ptr_array_add (plan->sources, source);
          plan->has_temp = plan->has_temp || temp;
        }

      read = g_new0 (PlanRead, 1);
      read->table = temp ? g_strconcat ("temp.", table_lower, NULL) : g_strdup (table_lower);
      read->column = g_strdup (parts[2]);
      read->signature = read_signature (db, temp, parts[1], parts[2]);
      g_ptr_array_add (plan->reads, read);
    }
  g_ptr_array_unref (auth.reads);
  g_ptr_array_sort (plan->sources, compare_sources);
  g_ptr_array_sort (plan->reads, compare_reads);

  /* What it gives */
  plan->all_sql = g_strdup_printf ("SELECT * FROM (%s)", body);
  rc = sqlite3_prepare_v2 (db->db, plan->all_sql, -1, &stmt, NULL);
  if (rc != SQLITE_OK)
    return plan_failed (db, rc, label, error);
  if (column_names != NULL && column_names->len != (guint) sqlite3_column_count (stmt))
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                   _("%s names %u columns but its body gives %d: name "
                   "each column once"), label, column_names->len, sqlite3_column_count (stmt));
      return NULL;
    }
  for (int j = 0; j < sqlite3_column_count (stmt); j++)
    {
      PlanColumn *column = g_new0 (PlanColumn, 1);
      const char *origin_db = sqlite3_column_database_name (stmt, j);
      const char *origin_table = sqlite3_column_table_name (stmt, j);
      const char *origin_column = sqlite3_column_origin_name (stmt, j);
      const char *type = sqlite3_column_decltype (stmt, j);

      g_ptr_array_add (plan->columns, column);
      column->body_name = g_strdup (sqlite3_column_name (stmt, j));
      column->name = g_strdup (column_names != NULL ? g_ptr_array_index (column_names, j)
                                                    : column->body_name);
      column->decl_type = type != NULL ? g_strdup (type) : NULL;
      if (!g_hash_table_add (names, g_strdup (column->name)))
        {
          g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                       _("%s has two columns named “%s”: name them apart "
                       "(… AS other_name)"), label, column->name);
          return NULL;
        }

      if (origin_table != NULL && origin_column != NULL && origin_db != NULL)
        {
          column->origin_db = qstore_mview_lower (origin_db);
          column->origin_table = qstore_mview_lower (origin_table);
          column->origin_column = g_strdup (origin_column);
          if (g_str_equal (column->origin_db, "temp"))
            {
              const char *collation = NULL;

              if (sqlite3_table_column_metadata (db->db, "temp", origin_table, origin_column,
                                                 NULL, &collation, NULL, NULL, NULL) == SQLITE_OK)
                column->collation = collation_from_name (collation);
            }
          else
            {
              QStoreSqlTable *entry = qstore_database_lookup (db, origin_table);
              int i = entry != NULL ? qstore_table_schema_find_column (entry->schema, origin_column) : -1;

              if (i >= 0)
                column->collation = ((QStoreColumn *) g_ptr_array_index (entry->schema->columns, i))->collation;
            }
        }
    }
  g_clear_pointer (&stmt, sqlite3_finalize);

  plan_strategy (db, plan, body);
  plan->backing_sql = backing_sql (db, name, plan);
  return g_steal_pointer (&plan);
}

/* Why @new no longer reads what @old did, or NULL when it reads the same. */
char *
qstore_mview_plan_difference (const Plan *old,
                              const Plan *new)
{
  for (guint i = 0; i < old->sources->len; i++)
    {
      PlanSource *a = g_ptr_array_index (old->sources, i);
      PlanSource *b = qstore_mview_plan_find_source (new, a->lower, a->temp);

      if (b == NULL)
        return g_strdup_printf ("it no longer reads “%s”", a->name);
      if (g_strcmp0 (a->primary_key, b->primary_key) != 0)
        return g_strdup_printf ("the primary key of “%s” changed", a->name);
    }
  for (guint i = 0; i < new->sources->len; i++)
    {
      PlanSource *b = g_ptr_array_index (new->sources, i);

      if (qstore_mview_plan_find_source (old, b->lower, b->temp) == NULL)
        return g_strdup_printf ("it now reads “%s”", b->name);
    }
  for (guint i = 0; i < MAX (old->reads->len, new->reads->len); i++)
    {
      PlanRead *a = i < old->reads->len ? g_ptr_array_index (old->reads, i) : NULL;
      PlanRead *b = i < new->reads->len ? g_ptr_array_index (new->reads, i) : NULL;

      if (a == NULL)
        return g_strdup_printf ("it now reads column “%s.%s”", b->table, b->column);
      if (b == NULL || compare_reads (&a, &b) != 0)
        return g_strdup_printf ("column “%s.%s” it reads is gone", a->table, a->column);
      if (g_strcmp0 (a->signature, b->signature) != 0)
        return g_strdup_printf ("column “%s.%s” it reads changed its type or collation",
                                a->table, a->column);
    }
  if (g_strcmp0 (old->backing_sql, new->backing_sql) != 0)
    return g_strdup ("its result columns changed");
  return NULL;
}

/* Maintenance */
