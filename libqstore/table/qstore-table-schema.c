/* qstore-table-schema.c: what a CREATE TABLE (and its indexes) says
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "qstore-error.h"
#include "qstore-i18n-private.h"
#include "qstore-sql-token-private.h"
#include "qstore-table-schema-private.h"

/* SQLite does the parsing: the table exists on an ordinary connection, and
 * its pragmas say everything but two things. A partial index's predicate
 * and the CHECK constraints exist only in the text of sqlite_master, so a
 * small scanner that knows SQL's quoting finds those two keywords. */

static void
column_free (gpointer data)
{
  QStoreColumn *column = data;

  g_free (column->name);
  g_free (column->decl_type);
  g_free (column->default_sql);
  g_free (column);
}

static void
index_free (gpointer data)
{
  QStoreIndexSchema *index = data;

  g_free (index->name);
  g_clear_pointer (&index->parts, g_array_unref);
  g_free (index->where_sql);
  g_free (index->sql);
  g_free (index);
}

static void
check_free (gpointer data)
{
  QStoreCheck *check = data;

  g_free (check->name);
  g_free (check->expr_sql);
  g_free (check);
}

static void
foreign_key_free (gpointer data)
{
  QStoreForeignKey *fk = data;

  g_free (fk->name);
  g_clear_pointer (&fk->from_columns, g_array_unref);
  g_free (fk->table);
  g_clear_pointer (&fk->to_columns, g_ptr_array_unref);
  g_free (fk->on_update);
  g_free (fk->on_delete);
  g_free (fk);
}

static QStoreTableSchema *
qstore_table_schema_new (void)
{
  QStoreTableSchema *self = g_new0 (QStoreTableSchema, 1);

  g_atomic_ref_count_init (&self->ref);
  self->columns = g_ptr_array_new_with_free_func (column_free);
  self->pk = g_array_new (FALSE, TRUE, sizeof (QStoreKeyPart));
  self->rowid_column = -1;
  self->indexes = g_ptr_array_new_with_free_func (index_free);
  self->checks = g_ptr_array_new_with_free_func (check_free);
  self->foreign_keys = g_ptr_array_new_with_free_func (foreign_key_free);
  return self;
}

QStoreTableSchema *
qstore_table_schema_ref (QStoreTableSchema *self)
{
  g_return_val_if_fail (self != NULL, NULL);

  g_atomic_ref_count_inc (&self->ref);
  return self;
}

void
qstore_table_schema_unref (QStoreTableSchema *self)
{
  g_return_if_fail (self != NULL);

  if (!g_atomic_ref_count_dec (&self->ref))
    return;

  g_free (self->schema);
  g_free (self->name);
  g_free (self->sql);
  g_ptr_array_unref (self->columns);
  g_array_unref (self->pk);
  g_ptr_array_unref (self->indexes);
  g_ptr_array_unref (self->checks);
  g_ptr_array_unref (self->foreign_keys);
  g_free (self);
}

int
qstore_table_schema_find_column (QStoreTableSchema *self,
                                 const char        *name)
{
  g_return_val_if_fail (self != NULL, -1);
  g_return_val_if_fail (name != NULL, -1);

  /* Column names compare as SQLite compares them: ASCII case folded. */
  for (guint i = 0; i < self->columns->len; i++)
    {
      const QStoreColumn *column = g_ptr_array_index (self->columns, i);

      if (g_ascii_strcasecmp (column->name, name) == 0)
        return (int) i;
    }
  return -1;
}

gboolean
qstore_table_schema_is_rowid_table (QStoreTableSchema *self)
{
  g_return_val_if_fail (self != NULL, FALSE);

  return self->pk->len == 0;
}

char *
qstore_table_schema_to_bundle (QStoreTableSchema *self)
{
  GString *out;

  g_return_val_if_fail (self != NULL, NULL);

  out = g_string_new (self->sql);
  g_string_append (out, ";\n");
  for (guint i = 0; i < self->indexes->len; i++)
    {
      const QStoreIndexSchema *index = g_ptr_array_index (self->indexes, i);

      if (index->from_constraint || index->sql == NULL)
        continue;
      g_string_append (out, index->sql);
      g_string_append (out, ";\n");
    }
  return g_string_free (out, FALSE);
}

static gboolean
contains_ci (const char *upper,
             const char *needle)
{
  return strstr (upper, needle) != NULL;
}

QStoreAffinity
qstore_affinity_from_decl_type (const char *decl_type)
{
  g_autofree char *upper = NULL;

  /* SQLite's rules (datatype3.html §3.1), applied in this order. */
  if (decl_type == NULL || decl_type[0] == '\0')
    return QSTORE_AFFINITY_BLOB;

  upper = g_ascii_strup (decl_type, -1);
  if (contains_ci (upper, "INT"))
    return QSTORE_AFFINITY_INTEGER;
  if (contains_ci (upper, "CHAR") || contains_ci (upper, "CLOB") ||
      contains_ci (upper, "TEXT"))
    return QSTORE_AFFINITY_TEXT;
  if (contains_ci (upper, "BLOB"))
    return QSTORE_AFFINITY_BLOB;
  if (contains_ci (upper, "REAL") || contains_ci (upper, "FLOA") ||
      contains_ci (upper, "DOUB"))
    return QSTORE_AFFINITY_REAL;
  return QSTORE_AFFINITY_NUMERIC;
}

static char *
trim_sql (const char *start,
          gsize       len)
{
  while (len > 0 && (g_ascii_isspace (start[len - 1]) || start[len - 1] == ';'))
    len--;
  while (len > 0 && g_ascii_isspace (*start))
    {
      start++;
      len--;
    }
  return g_strndup (start, len);
}

/* What follows the last top-level WHERE of a CREATE INDEX, up to its last
 * token (a trailing comment would swallow what we append), or NULL. */
static char *
index_where_sql (const char *sql)
{
  g_autoptr(GArray) tokens = qstore_sql_tokenize (sql);
  const QStoreSqlToken *where = NULL;
  const QStoreSqlToken *last;
  const char *after;

  for (guint i = 0; i < tokens->len; i++)
    {
      const QStoreSqlToken *token = &g_array_index (tokens, QStoreSqlToken, i);

      if (token->depth == 0 && qstore_sql_token_is (token, "WHERE"))
        where = token;
    }

  if (where == NULL)
    return NULL;
  last = &g_array_index (tokens, QStoreSqlToken, tokens->len - 1);
  while (last > where && qstore_sql_token_is_punct (last, ';'))
    last--;
  if (last == where)
    return NULL;
  after = where->start + where->len;
  return trim_sql (after, last->start + last->len - after);
}

/* Every `[CONSTRAINT name] CHECK (expr)` among the column and table
 * definitions (parenthesis depth 1) of a CREATE TABLE. */
static void
collect_checks (const char *sql,
                GPtrArray  *checks)
{
  g_autoptr(GArray) tokens = qstore_sql_tokenize (sql);

  for (guint i = 0; i + 1 < tokens->len; i++)
    {
      const QStoreSqlToken *token = &g_array_index (tokens, QStoreSqlToken, i);
      const QStoreSqlToken *open = &g_array_index (tokens, QStoreSqlToken, i + 1);
      const QStoreSqlToken *name = i >= 1 ? &g_array_index (tokens, QStoreSqlToken, i - 1) : NULL;
      const QStoreSqlToken *close = NULL;
      QStoreCheck *check;
      guint j;

      if (token->depth != 1 || !qstore_sql_token_is (token, "CHECK") ||
          !qstore_sql_token_is_punct (open, '('))
        continue;

      for (j = i + 2; j < tokens->len && close == NULL; j++)
        {
          const QStoreSqlToken *candidate = &g_array_index (tokens, QStoreSqlToken, j);

          if (qstore_sql_token_is_punct (candidate, ')') && candidate->depth == open->depth)
            close = candidate;
        }
      if (close == NULL)
        break;

      check = g_new0 (QStoreCheck, 1);
      check->expr_sql = trim_sql (open->start + 1, close->start - (open->start + 1));
      if (i >= 2 &&
          qstore_sql_token_is (&g_array_index (tokens, QStoreSqlToken, i - 2), "CONSTRAINT") &&
          name->kind != QSTORE_SQL_TOKEN_PUNCT)
        check->name = qstore_sql_token_name (name);
      g_ptr_array_add (checks, check);
      i = j - 1;
    }
}

/* Reading the pragmas */

static gboolean
sqlite_failed (sqlite3     *db,
               const char  *table,
               const char  *what,
               GError     **error)
{
  g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_FAILED,
               _("Could not read the schema of table “%s” (%s): %s"),
               table, what, sqlite3_errmsg (db));
  return FALSE;
}

static char *
quote_identifier (const char *name)
{
  GString *out = g_string_new ("\"");

  for (const char *p = name; *p; p++)
    {
      if (*p == '"')
        g_string_append_c (out, '"');
      g_string_append_c (out, *p);
    }
  g_string_append_c (out, '"');
  return g_string_free (out, FALSE);
}

static sqlite3_stmt *
prepare (sqlite3     *db,
         const char  *table,
         const char  *sql,
         GError     **error)
{
  sqlite3_stmt *stmt = NULL;

  if (sqlite3_prepare_v2 (db, sql, -1, &stmt, NULL) != SQLITE_OK)
    {
      sqlite_failed (db, table, sql, error);
      return NULL;
    }
  return stmt;
}

static const char *
column_text (sqlite3_stmt *stmt,
             int           i)
{
  return (const char *) sqlite3_column_text (stmt, i);
}

gboolean
qstore_collation_from_name (const char       *name,
                            QStoreCollation  *out)
{
  if (name == NULL || g_ascii_strcasecmp (name, "BINARY") == 0)
    *out = QSTORE_COLLATION_BINARY;
  else if (g_ascii_strcasecmp (name, "NOCASE") == 0)
    *out = QSTORE_COLLATION_NOCASE;
  else if (g_ascii_strcasecmp (name, "RTRIM") == 0)
    *out = QSTORE_COLLATION_RTRIM;
  else
    return FALSE;
  return TRUE;
}

static gboolean
unsupported_collation (QStoreTableSchema  *self,
                       const char         *where,
                       const char         *collation,
                       GError            **error)
{
  g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_UNSUPPORTED,
               _("Table “%s”: %s uses collation “%s”, which qstore keys cannot "
               "encode: use BINARY, NOCASE or RTRIM"),
               self->name, where, collation);
  return FALSE;
}

static gboolean
read_table_row (QStoreTableSchema  *self,
                sqlite3            *db,
                const char         *schema,
                const char         *table,
                GError            **error)
{
  g_autoptr(sqlite3_stmt) stmt = NULL;
  g_autofree char *quoted_schema = quote_identifier (schema);
  g_autofree char *sql = NULL;
  int rc;

  sql = g_strdup_printf ("SELECT m.name, m.sql, (SELECT l.wr FROM pragma_table_list (m.name) "
                         "AS l WHERE l.schema = ?2) FROM %s.sqlite_master AS m "
                         "WHERE m.type = 'table' AND m.name = ?1 COLLATE NOCASE",
                         quoted_schema);
  stmt = prepare (db, table, sql, error);
  if (stmt == NULL)
    return FALSE;
  sqlite3_bind_text (stmt, 1, table, -1, SQLITE_STATIC);
  sqlite3_bind_text (stmt, 2, schema, -1, SQLITE_STATIC);

  rc = sqlite3_step (stmt);
  if (rc == SQLITE_DONE)
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_NOT_FOUND,
                   _("No table “%s” in schema “%s”: create it first"),
                   table, schema);
      return FALSE;
    }
  if (rc != SQLITE_ROW)
    return sqlite_failed (db, table, "sqlite_master", error);

  self->name = g_strdup (column_text (stmt, 0));
  self->sql = g_strdup (column_text (stmt, 1));
  self->without_rowid = sqlite3_column_int (stmt, 2) != 0;
  if (self->sql == NULL)
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_UNSUPPORTED,
                   _("Table “%s” has no CREATE TABLE text: only ordinary tables "
                   "can be read"), table);
      return FALSE;
    }
  return TRUE;
}

static gboolean
read_columns (QStoreTableSchema  *self,
              sqlite3            *db,
              const char         *quoted_schema,
              const char         *quoted_table,
              GArray             *pk_positions,
              GError            **error)
{
  g_autoptr(sqlite3_stmt) stmt = NULL;
  g_autofree char *sql = NULL;
  int rc;

  sql = g_strdup_printf ("PRAGMA %s.table_xinfo(%s)", quoted_schema, quoted_table);
  stmt = prepare (db, self->name, sql, error);
  if (stmt == NULL)
    return FALSE;

  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      QStoreColumn *column = g_new0 (QStoreColumn, 1);
      const char *decl_type = NULL;
      const char *collation = NULL;
      int not_null = 0;
      int primary_key = 0;
      int autoinc = 0;
      int pk_position;

      column->name = g_strdup (column_text (stmt, 1));
      column->default_sql = g_strdup (column_text (stmt, 4));
      pk_position = sqlite3_column_int (stmt, 5);
      g_ptr_array_add (self->columns, column);

      if (sqlite3_column_int (stmt, 6) >= 2)
        {
          g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_UNSUPPORTED,
                       _("Table “%s”: column “%s” is generated, which qstore "
                       "tables do not support: compute the value when writing"),
                       self->name, column->name);
          return FALSE;
        }

      if (sqlite3_table_column_metadata (db, self->schema, self->name, column->name,
                                         &decl_type, &collation, &not_null,
                                         &primary_key, &autoinc) != SQLITE_OK)
        return sqlite_failed (db, self->name, "column metadata", error);

      column->decl_type = g_strdup (decl_type ? decl_type : "");
      column->affinity = qstore_affinity_from_decl_type (column->decl_type);
      column->not_null = not_null != 0;
      if (!qstore_collation_from_name (collation, &column->collation))
        {
          g_autofree char *where = g_strdup_printf ("column “%s”", column->name);

          return unsupported_collation (self, where, collation, error);
        }

      if (pk_position > 0)
        {
          guint position = self->columns->len - 1;

          if ((guint) pk_position > pk_positions->len)
            g_array_set_size (pk_positions, pk_position);
          g_array_index (pk_positions, guint, pk_position - 1) = position;
        }
    }
  if (rc != SQLITE_DONE)
    return sqlite_failed (db, self->name, "table_xinfo", error);

  if (self->columns->len == 0)
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_NOT_FOUND,
                   _("Table “%s” has no columns"), self->name);
      return FALSE;
    }
  return TRUE;
}

/* The key columns of index @name, from index_xinfo. */
static gboolean
read_index_parts (QStoreTableSchema  *self,
                  sqlite3            *db,
                  const char         *quoted_schema,
                  const char         *name,
                  GArray             *parts,
                  GError            **error)
{
  g_autoptr(sqlite3_stmt) stmt = NULL;
  g_autofree char *quoted_index = quote_identifier (name);
  g_autofree char *sql = NULL;
  int rc;

  sql = g_strdup_printf ("PRAGMA %s.index_xinfo(%s)", quoted_schema, quoted_index);
  stmt = prepare (db, self->name, sql, error);
  if (stmt == NULL)
    return FALSE;

  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      QStoreKeyPart part = { 0, };
      int cid = sqlite3_column_int (stmt, 1);
      const char *collation = column_text (stmt, 4);

      /* Rows with key = 0 are the row locator SQLite appends. */
      if (sqlite3_column_int (stmt, 5) == 0)
        continue;

      if (cid < 0)
        {
          g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_UNSUPPORTED,
                       _("Index “%s” of table “%s” is on an expression or the "
                       "rowid, which qstore indexes do not support: index "
                       "plain columns"), name, self->name);
          return FALSE;
        }

      part.column = cid;
      part.descending = sqlite3_column_int (stmt, 3) != 0;
      if (!qstore_collation_from_name (collation, &part.collation))
        {
          g_autofree char *where = g_strdup_printf ("index “%s”", name);

          return unsupported_collation (self, where, collation, error);
        }
      g_array_append_val (parts, part);
    }
  if (rc != SQLITE_DONE)
    return sqlite_failed (db, self->name, "index_xinfo", error);
  return TRUE;
}

static char *
index_sql (sqlite3     *db,
           const char  *quoted_schema,
           const char  *name)
{
  g_autoptr(sqlite3_stmt) stmt = NULL;
  g_autofree char *sql = NULL;

  sql = g_strdup_printf ("SELECT sql FROM %s.sqlite_master "
                         "WHERE type = 'index' AND name = ?1", quoted_schema);
  if (sqlite3_prepare_v2 (db, sql, -1, &stmt, NULL) != SQLITE_OK)
    return NULL;
  sqlite3_bind_text (stmt, 1, name, -1, SQLITE_STATIC);
  if (sqlite3_step (stmt) != SQLITE_ROW)
    return NULL;
  return g_strdup (column_text (stmt, 0));
}

/* Autoindexes in constraint order (their number), then explicit indexes by
 * name: the same schema always lists, and bundles, the same way. */
static int
index_compare (gconstpointer a,
               gconstpointer b)
{
  const QStoreIndexSchema *x = *(QStoreIndexSchema * const *) a;
  const QStoreIndexSchema *y = *(QStoreIndexSchema * const *) b;
  int cmp;

  if (x->from_constraint != y->from_constraint)
    return x->from_constraint ? -1 : 1;
  if (x->from_constraint)
    {
      const char *xn = strrchr (x->name, '_');
      const char *yn = strrchr (y->name, '_');
      gint64 xi = xn ? g_ascii_strtoll (xn + 1, NULL, 10) : 0;
      gint64 yi = yn ? g_ascii_strtoll (yn + 1, NULL, 10) : 0;

      if (xi != yi)
        return xi < yi ? -1 : 1;
    }
  cmp = g_ascii_strcasecmp (x->name, y->name);
  return cmp != 0 ? cmp : strcmp (x->name, y->name);
}

static gboolean
read_indexes (QStoreTableSchema  *self,
              sqlite3            *db,
              const char         *quoted_schema,
              const char         *quoted_table,
              GArray             *pk_positions,
              GError            **error)
{
  g_autoptr(sqlite3_stmt) stmt = NULL;
  g_autofree char *sql = NULL;
  gboolean have_pk_index = FALSE;
  int rc;

  sql = g_strdup_printf ("PRAGMA %s.index_list(%s)", quoted_schema, quoted_table);
  stmt = prepare (db, self->name, sql, error);
  if (stmt == NULL)
    return FALSE;

  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      const char *name = column_text (stmt, 1);
      const char *origin = column_text (stmt, 3);

      if (g_strcmp0 (origin, "pk") == 0)
        {
          /* The PK's autoindex knows its order, directions and collations. */
          have_pk_index = TRUE;
          if (!read_index_parts (self, db, quoted_schema, name, self->pk, error))
            return FALSE;
        }
      else
        {
          QStoreIndexSchema *index = g_new0 (QStoreIndexSchema, 1);

          index->name = g_strdup (name);
          index->unique = sqlite3_column_int (stmt, 2) != 0;
          index->from_constraint = g_strcmp0 (origin, "u") == 0;
          index->parts = g_array_new (FALSE, TRUE, sizeof (QStoreKeyPart));
          g_ptr_array_add (self->indexes, index);

          if (!read_index_parts (self, db, quoted_schema, name, index->parts, error))
            return FALSE;

          if (!index->from_constraint)
            {
              index->sql = index_sql (db, quoted_schema, name);
              if (index->sql == NULL)
                return sqlite_failed (db, self->name, "index text", error);
              if (sqlite3_column_int (stmt, 4) != 0)
                index->where_sql = index_where_sql (index->sql);
            }
        }
    }
  if (rc != SQLITE_DONE)
    return sqlite_failed (db, self->name, "index_list", error);

  g_ptr_array_sort (self->indexes, index_compare);

  /* A PRIMARY KEY without an autoindex is the INTEGER PRIMARY KEY that
   * aliases the rowid (SQLite decides that, with its DESC quirk), so the
   * table stays keyed by the rowid. */
  if (!have_pk_index && pk_positions->len == 1)
    self->rowid_column = g_array_index (pk_positions, guint, 0);
  else if (!have_pk_index && pk_positions->len > 1)
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_FAILED,
                   _("Table “%s” has a composite PRIMARY KEY SQLite keeps no "
                   "index for"), self->name);
      return FALSE;
    }
  return TRUE;
}

static gboolean
read_foreign_keys (QStoreTableSchema  *self,
                   sqlite3            *db,
                   const char         *quoted_schema,
                   const char         *quoted_table,
                   GError            **error)
{
  g_autoptr(sqlite3_stmt) stmt = NULL;
  g_autofree char *sql = NULL;
  QStoreForeignKey *fk = NULL;
  int last_id = -1;
  int rc;

  sql = g_strdup_printf ("PRAGMA %s.foreign_key_list(%s)", quoted_schema, quoted_table);
  stmt = prepare (db, self->name, sql, error);
  if (stmt == NULL)
    return FALSE;

  /* One row per column pair; rows of one constraint share its id. */
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      int id = sqlite3_column_int (stmt, 0);
      const char *from = column_text (stmt, 3);
      const char *to = column_text (stmt, 4);
      int position;
      guint upos;

      if (fk == NULL || id != last_id)
        {
          fk = g_new0 (QStoreForeignKey, 1);
          fk->from_columns = g_array_new (FALSE, FALSE, sizeof (guint));
          fk->table = g_strdup (column_text (stmt, 2));
          fk->to_columns = g_ptr_array_new_with_free_func (g_free);
          fk->on_update = g_strdup (column_text (stmt, 5));
          fk->on_delete = g_strdup (column_text (stmt, 6));
          g_ptr_array_add (self->foreign_keys, fk);
          last_id = id;
        }

      position = from ? qstore_table_schema_find_column (self, from) : -1;
      if (position < 0)
        {
          g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_NOT_FOUND,
                       _("Table “%s”: a FOREIGN KEY names column “%s”, which "
                       "the table does not have"), self->name, from ? from : "");
          return FALSE;
        }
      upos = position;
      g_array_append_val (fk->from_columns, upos);
      if (to != NULL)
        g_ptr_array_add (fk->to_columns, g_strdup (to));
    }
  if (rc != SQLITE_DONE)
    return sqlite_failed (db, self->name, "foreign_key_list", error);
  return TRUE;
}

QStoreTableSchema *
qstore_table_schema_from_sqlite (sqlite3     *scratch,
                                 const char  *schema,
                                 const char  *table,
                                 GError     **error)
{
  g_autoptr(QStoreTableSchema) self = NULL;
  g_autoptr(GArray) pk_positions = NULL;
  g_autofree char *quoted_schema = NULL;
  g_autofree char *quoted_table = NULL;

  g_return_val_if_fail (scratch != NULL, NULL);
  g_return_val_if_fail (table != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (schema == NULL)
    schema = "main";

  self = qstore_table_schema_new ();
  self->schema = g_strdup (schema);
  quoted_schema = quote_identifier (schema);

  if (!read_table_row (self, scratch, schema, table, error))
    return NULL;
  quoted_table = quote_identifier (self->name);

  pk_positions = g_array_new (FALSE, TRUE, sizeof (guint));
  if (!read_columns (self, scratch, quoted_schema, quoted_table, pk_positions, error) ||
      !read_indexes (self, scratch, quoted_schema, quoted_table, pk_positions, error) ||
      !read_foreign_keys (self, scratch, quoted_schema, quoted_table, error))
    return NULL;

  collect_checks (self->sql, self->checks);

  return g_steal_pointer (&self);
}
