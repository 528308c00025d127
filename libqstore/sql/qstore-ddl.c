/* qstore-ddl.c: CREATE, DROP and ALTER on qstore tables
 *
 * SQLite cannot index, alter or persist virtual tables, so qstore takes
 * DDL over. SQLite still parses and validates every statement: it runs on
 * the scratch connection, where each qstore table has an ordinary empty
 * mirror, inside a savepoint that is rolled back when anything later
 * fails. The schema is then read back from scratch, the stores and the
 * catalog are changed, and the virtual table on the main connection
 * follows.
 *
 * The only SQL recognised here by hand is what SQLite refuses to prepare
 * on a virtual table (CREATE INDEX, ALTER TABLE … ADD COLUMN; DROP INDEX,
 * whose index exists only on scratch) and the column list of an INSERT,
 * because SQLite passes omitted columns to a virtual table as NULL and the
 * DEFAULTs are qstore's to apply.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include <json-glib/json-glib.h>

#include "qstore-affinity-private.h"
#include "qstore-alter-private.h"
#include "qstore-catalog-private.h"
#include "qstore-coordinator-private.h"
#include "qstore-ddl-private.h"
#include "qstore-error.h"
#include "qstore-sql-token-private.h"
#include "qstore-provider-private.h"
#include "qstore-vtab-private.h"

/* A name token: SQLite also takes a string literal where a name goes. */
static gboolean
token_is_name (const QStoreSqlToken *token)
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

QStoreSqlLead
qstore_sql_lead (const char *sql)
{
  QStoreSqlToken first, second, third;
  const char *p;

  p = qstore_sql_next_token (sql, &first);
  p = qstore_sql_next_token (p, &second);
  qstore_sql_next_token (p, &third);

  if (qstore_sql_token_is (&first, "CREATE"))
    {
      if (qstore_sql_token_is (&second, "INDEX") ||
          (qstore_sql_token_is (&second, "UNIQUE") && qstore_sql_token_is (&third, "INDEX")))
        return QSTORE_SQL_LEAD_CREATE_INDEX;
    }
  else if (qstore_sql_token_is (&first, "DROP") && qstore_sql_token_is (&second, "INDEX"))
    return QSTORE_SQL_LEAD_DROP_INDEX;
  else if (qstore_sql_token_is (&first, "ALTER") && qstore_sql_token_is (&second, "TABLE"))
    return QSTORE_SQL_LEAD_ALTER_TABLE;

  return QSTORE_SQL_LEAD_OTHER;
}

void
qstore_insert_shape_free (QStoreInsertShape *shape)
{
  if (shape == NULL)
    return;
  g_free (shape->table);
  g_clear_pointer (&shape->columns, g_ptr_array_unref);
  g_free (shape);
}

/* [WITH …] INSERT [OR x] INTO | REPLACE INTO [schema.]table [AS alias]
 * [(columns)] … | DEFAULT VALUES */
QStoreInsertShape *
qstore_sql_insert_shape (const char *sql)
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
          else if (depth == 0 && (qstore_sql_token_is (&token, "INSERT") || qstore_sql_token_is (&token, "REPLACE")))
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
    {
      p = qstore_sql_next_token (p, &token);
    }
  else
    return NULL;

  if (!qstore_sql_token_is (&token, "INTO"))
    return NULL;

  p = qstore_sql_next_token (p, &token);
  if (!token_is_name (&token))
    return NULL;
  shape->table = qstore_sql_token_name (&token);

  p = qstore_sql_next_token (p, &token);
  if (qstore_sql_token_is_punct (&token, '.'))
    {
      p = qstore_sql_next_token (p, &token);
      if (!token_is_name (&token))
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
    {
      shape->default_values = TRUE;
    }
  else if (qstore_sql_token_is_punct (&token, '('))
    {
      shape->columns = g_ptr_array_new_with_free_func (g_free);
      for (;;)
        {
          p = qstore_sql_next_token (p, &token);
          if (!token_is_name (&token))
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

/* Scratch work is undone as a whole when anything later fails. */

static gboolean
scratch_begin (QStoreDatabase  *self,
               GError         **error)
{
  return qstore_database_run (self, self->scratch, "SAVEPOINT qstore_ddl", error);
}

static gboolean
scratch_commit (QStoreDatabase  *self,
                GError         **error)
{
  return qstore_database_run (self, self->scratch, "RELEASE qstore_ddl", error);
}

static void
scratch_undo (QStoreDatabase *self)
{
  sqlite3_exec (self->scratch, "ROLLBACK TO qstore_ddl; RELEASE qstore_ddl", NULL, NULL, NULL);
}

/* Statements run on scratch, with what the authorizer saw. */

typedef struct
{
  int   action;
  char *name;
  char *table;
} ScratchAction;

static int
scratch_authorizer (void       *data,
                    int         action,
                    const char *arg1,
                    const char *arg2,
                    const char *db_name,
                    const char *trigger)
{
  ScratchAction *seen = data;

  if ((action == SQLITE_CREATE_INDEX || action == SQLITE_DROP_INDEX) && seen->action == 0)
    {
      seen->action = action;
      seen->name = g_strdup (arg1);
      seen->table = g_strdup (arg2);
    }
  else if (action == SQLITE_ALTER_TABLE && seen->action == 0)
    {
      /* arg1 is the schema, arg2 the table. */
      seen->action = action;
      seen->table = g_strdup (arg2);
    }
  return SQLITE_OK;
}

static void
scratch_action_clear (ScratchAction *seen)
{
  g_clear_pointer (&seen->name, g_free);
  g_clear_pointer (&seen->table, g_free);
  seen->action = 0;
}

static sqlite3_stmt *
prepare_on_scratch (QStoreDatabase  *self,
                    const char      *sql,
                    const char     **tail,
                    ScratchAction   *seen,
                    GError         **error)
{
  sqlite3_stmt *stmt = NULL;
  int rc;

  sqlite3_set_authorizer (self->scratch, scratch_authorizer, seen);
  rc = sqlite3_prepare_v2 (self->scratch, sql, -1, &stmt, tail);
  sqlite3_set_authorizer (self->scratch, NULL, NULL);

  if (rc != SQLITE_OK)
    {
      qstore_database_set_sqlite_error (self, self->scratch, rc, error);
      return NULL;
    }
  return stmt;
}

static gboolean
step_on_scratch (QStoreDatabase  *self,
                 sqlite3_stmt    *stmt,
                 GError         **error)
{
  int rc;

  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    ;
  if (rc != SQLITE_DONE)
    {
      qstore_database_set_sqlite_error (self, self->scratch, rc, error);
      sqlite3_reset (stmt);
      return FALSE;
    }
  return TRUE;
}

/* Stores */

/* For commits that drop no store but must be all or nothing. */
static const char * const no_stores[] = { NULL };

static GPtrArray *
index_names (QStoreTableSchema *schema)
{
  GPtrArray *names = g_ptr_array_new ();

  for (guint i = 0; i < schema->indexes->len; i++)
    g_ptr_array_add (names, ((QStoreIndexSchema *) g_ptr_array_index (schema->indexes, i))->name);
  g_ptr_array_add (names, NULL);
  return names;
}

static gboolean
store_is_empty (QStoreDatabase  *self,
                const char      *store_name,
                gboolean        *empty,
                GError         **error)
{
  g_autoptr(QStoreKV) store = NULL;
  g_autoptr(QStoreBounds) bounds = qstore_bounds_new ();
  g_autoptr(QStoreIter) iter = NULL;
  GError *local_error = NULL;

  if (!(store = qstore_provider_open_store (self->provider, store_name, error)))
    return FALSE;
  qstore_bounds_set_limit (bounds, 1);
  if (!(iter = qstore_kv_iterate (store, bounds, error)))
    return FALSE;
  *empty = !qstore_iter_next (iter, &local_error);
  if (local_error != NULL)
    {
      g_propagate_error (error, local_error);
      return FALSE;
    }
  return TRUE;
}

/* Refuses store names another table uses (COLLISION, naming both) or
 * that still hold entries of a table no longer in the catalog. */
static gboolean
check_new_store (QStoreDatabase  *self,
                 GHashTable      *used,
                 const char      *store_name,
                 const char      *what,
                 GError         **error)
{
  const char *owner = g_hash_table_lookup (used, store_name);
  gboolean empty;

  if (owner != NULL)
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_COLLISION,
                   "%s would be stored in “%s”, which %s already uses: rename one of "
                   "them, or choose another name",
                   what, store_name, owner);
      return FALSE;
    }
  if (!store_is_empty (self, store_name, &empty, error))
    return FALSE;
  if (!empty)
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_EXISTS,
                   "%s would be stored in “%s”, which still holds the data of a table "
                   "no longer in the catalog: reclaim that storage first, or choose "
                   "another name", what, store_name);
      return FALSE;
    }
  return TRUE;
}

static gboolean
check_table_stores (QStoreDatabase     *self,
                    QStoreTableSchema  *schema,
                    const char         *except,
                    GError            **error)
{
  g_autoptr(GHashTable) used = qstore_database_store_names (self, except);
  g_autofree char *data_store = qstore_store_name_for_table (schema->schema, schema->name);
  g_autofree char *what = g_strdup_printf ("Table “%s”", schema->name);

  if (!check_new_store (self, used, data_store, what, error))
    return FALSE;

  for (guint i = 0; i < schema->indexes->len; i++)
    {
      QStoreIndexSchema *index = g_ptr_array_index (schema->indexes, i);
      g_autofree char *index_store = qstore_store_name_for_index (schema->schema, schema->name,
                                                                 index->name);
      g_autofree char *index_what = g_strdup_printf ("Index “%s” of table “%s”",
                                                     index->name, schema->name);

      if (!check_new_store (self, used, index_store, index_what, error))
        return FALSE;
    }
  return TRUE;
}

static void
add_op (GArray            *ops,
        QStoreKV          *store,
        QStoreWriteOpKind  kind,
        GBytes            *key,
        const char        *value)
{
  QStoreWriteOp op = { 0 };
  gsize key_len;

  op.store = store;
  op.kind = kind;
  op.key = g_bytes_get_data (key, &key_len);
  op.key_len = key_len;
  if (value != NULL)
    {
      op.value = (const guint8 *) value;
      op.value_len = strlen (value);
    }
  g_array_append_val (ops, op);
}

/* Checks what a DDL statement needs from the table and the database. */
static gboolean
check_ddl_allowed (QStoreDatabase  *self,
                   GError         **error)
{
  return qstore_database_check_writable (self, error);
}

/* CREATE TABLE */

/* The first `ON CONFLICT x` of a constraint in @create_sql, other than the
 * default ABORT, or NULL. SQLite keeps such a clause to itself: a virtual
 * table learns only the statement's own (INSERT OR …), so the clause
 * would be ignored without a word. */
static char *
find_conflict_clause (const char *create_sql)
{
  QStoreSqlToken previous = { QSTORE_SQL_TOKEN_END, NULL, 0 };
  QStoreSqlToken token;
  const char *p = create_sql;

  for (p = qstore_sql_next_token (p, &token); token.kind != QSTORE_SQL_TOKEN_END;
       previous = token, p = qstore_sql_next_token (p, &token))
    {
      QStoreSqlToken resolution;

      if (!qstore_sql_token_is (&previous, "ON") || !qstore_sql_token_is (&token, "CONFLICT"))
        continue;
      qstore_sql_next_token (p, &resolution);
      if (!qstore_sql_token_is (&resolution, "ABORT"))
        return g_strdup_printf ("ON CONFLICT %.*s", (int) resolution.len, resolution.start);
    }
  return NULL;
}

/**
 * qstore_ddl_check_conflict_clauses:
 * @table: the table's name
 * @old_sql: (nullable): its CREATE TABLE before the change, or %NULL for
 *   a new table
 * @new_sql: its CREATE TABLE after the change
 * @error: return location for a #GError
 *
 * Refuses a constraint's own ON CONFLICT clause, unless the table had one
 * before (so that tables made before the rule can still be altered).
 *
 * Returns: %TRUE when @new_sql brings none
 */
gboolean
qstore_ddl_check_conflict_clauses (const char  *table,
                                   const char  *old_sql,
                                   const char  *new_sql,
                                   GError     **error)
{
  g_autofree char *clause = find_conflict_clause (new_sql);
  g_autofree char *old_clause = old_sql != NULL ? find_conflict_clause (old_sql) : NULL;

  if (clause == NULL || old_clause != NULL)
    return TRUE;
  g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_UNSUPPORTED,
               "“%s” on a constraint of table “%s” is not supported (only the statement's "
               "conflict clause reaches qstore): leave it out, and write INSERT OR REPLACE "
               "or INSERT OR IGNORE where a statement should resolve conflicts",
               clause, table);
  return FALSE;
}

static gboolean
check_supported_table (QStoreDatabase  *self,
                       const char      *name,
                       GError         **error)
{
  g_autoptr(GString) problems = g_string_new (NULL);
  sqlite3_stmt *stmt = NULL;

  if (sqlite3_prepare_v2 (self->scratch,
                          "SELECT strict FROM pragma_table_list "
                          "WHERE schema = 'main' AND name = ?1",
                          -1, &stmt, NULL) == SQLITE_OK)
    {
      sqlite3_bind_text (stmt, 1, name, -1, SQLITE_TRANSIENT);
      if (sqlite3_step (stmt) == SQLITE_ROW && sqlite3_column_int (stmt, 0) != 0)
        g_string_append (problems, "STRICT tables are not supported: declare the table "
                                   "without STRICT (CHECK constraints such as "
                                   "typeof(c) = 'integer' hold the types)");
      sqlite3_finalize (stmt);
    }

  stmt = NULL;
  if (problems->len == 0 &&
      sqlite3_prepare_v2 (self->scratch,
                          "SELECT name FROM pragma_table_xinfo(?1, 'main') WHERE hidden > 1",
                          -1, &stmt, NULL) == SQLITE_OK)
    {
      sqlite3_bind_text (stmt, 1, name, -1, SQLITE_TRANSIENT);
      if (sqlite3_step (stmt) == SQLITE_ROW)
        g_string_append_printf (problems, "Generated columns (such as “%s”) are not "
                                          "supported: compute the value when writing, "
                                          "or in a view",
                                (const char *) sqlite3_column_text (stmt, 0));
      sqlite3_finalize (stmt);
    }

  if (problems->len > 0)
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_UNSUPPORTED, "Table “%s”: %s",
                   name, problems->str);
      return FALSE;
    }
  return TRUE;
}

gboolean
qstore_ddl_create_table (QStoreDatabase  *self,
                         const char      *sql,
                         const char      *name,
                         GError         **error)
{
  g_autoptr(QStoreTableSchema) schema = NULL;
  g_autofree char *bundle = NULL;
  QStoreSqlTable *entry;

  /* SQLite prepared it, so an existing table means IF NOT EXISTS. */
  if (qstore_database_lookup (self, name) != NULL)
    return TRUE;
  if (!check_ddl_allowed (self, error))
    return FALSE;

  if (!scratch_begin (self, error))
    return FALSE;

  if (!qstore_database_run (self, self->scratch, sql, error) ||
      !check_supported_table (self, name, error) ||
      !(schema = qstore_table_schema_from_sqlite (self->scratch, "main", name, error)) ||
      !qstore_ddl_check_conflict_clauses (name, NULL, schema->sql, error) ||
      !check_table_stores (self, schema, NULL, error))
    {
      scratch_undo (self);
      return FALSE;
    }

  if (!(entry = qstore_database_attach_table (self, schema, error)))
    {
      scratch_undo (self);
      return FALSE;
    }

  bundle = qstore_table_schema_to_bundle (schema);
  if (!qstore_database_commit_catalog (self, schema->schema, schema->name, bundle, error))
    {
      qstore_database_detach_table (self, schema->name, TRUE);
      scratch_undo (self);
      return FALSE;
    }

  return scratch_commit (self, error);
}

/* DROP TABLE */

gboolean
qstore_ddl_drop_table (QStoreDatabase  *self,
                       sqlite3_stmt    *stmt,
                       const char      *name,
                       GError         **error)
{
  g_autoptr(QStoreSqlTable) entry = NULL;
  g_autoptr(GPtrArray) indexes = NULL;
  g_autoptr(GPtrArray) drop = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GArray) ops = g_array_new (FALSE, TRUE, sizeof (QStoreWriteOp));
  g_autoptr(GBytes) catalog_key = NULL;
  g_autoptr(GBytes) stats_key = NULL;
  g_autoptr(QStoreKV) stats = NULL;
  g_autofree char *stats_name = NULL;
  g_autofree char *drop_mirror = NULL;
  g_autofree char *quoted = NULL;
  QStoreTableSchema *schema;
  const char *empty[] = { NULL };
  int rc;

  entry = qstore_database_lookup (self, name);
  g_assert (entry != NULL);
  qstore_sql_table_ref (entry);
  schema = entry->schema;

  if (!check_ddl_allowed (self, error))
    return FALSE;

  /* Storage, statistics and catalog entry go in one all-or-nothing unit. */
  indexes = index_names (schema);
  g_ptr_array_add (drop, qstore_store_name_for_table (schema->schema, schema->name));
  for (guint i = 0; indexes->pdata[i] != NULL; i++)
    g_ptr_array_add (drop, qstore_store_name_for_index (schema->schema, schema->name,
                                                        indexes->pdata[i]));
  g_ptr_array_add (drop, NULL);

  if (!(stats = qstore_provider_get_stats_store (self->provider, error)))
    return FALSE;
  stats_name = qstore_stats_key_for_table (schema->schema, schema->name);
  stats_key = g_bytes_new (stats_name, strlen (stats_name));
  catalog_key = qstore_catalog_key_for_table (schema->schema, schema->name);
  add_op (ops, stats, QSTORE_WRITE_OP_DELETE, stats_key, NULL);
  add_op (ops, qstore_database_get_catalog (self), QSTORE_WRITE_OP_DELETE, catalog_key, NULL);

  if (!qstore_provider_restructure (self->provider, (const char * const *) drop->pdata,
                                    empty, empty, (QStoreWriteOp *) ops->data, ops->len, error))
    return FALSE;
  qstore_database_forget_table_stats (self, schema->schema, schema->name);

  /* SQLite drops the virtual table (its xDestroy frees it); the mirror
   * goes with its indexes. */
  rc = sqlite3_step (stmt);
  if (rc != SQLITE_DONE)
    {
      qstore_database_set_sqlite_error (self, self->db, rc, error);
      return FALSE;
    }
  qstore_database_detach_table (self, schema->name, FALSE);

  quoted = qstore_sql_quote (schema->name);
  drop_mirror = g_strdup_printf ("DROP TABLE main.%s", quoted);
  return qstore_database_run (self, self->scratch, drop_mirror, error);
}

/* CREATE INDEX */

static int
find_index (QStoreTableSchema *schema,
            const char        *name)
{
  for (guint i = 0; i < schema->indexes->len; i++)
    {
      QStoreIndexSchema *index = g_ptr_array_index (schema->indexes, i);

      if (g_ascii_strcasecmp (index->name, name) == 0)
        return i;
    }
  return -1;
}

char *
qstore_ddl_unique_message (QStoreTableSchema *schema,
                           GArray            *parts)
{
  GString *message = g_string_new ("UNIQUE constraint failed: ");

  for (guint i = 0; i < parts->len; i++)
    {
      QStoreKeyPart *part = &g_array_index (parts, QStoreKeyPart, i);
      QStoreColumn *column = g_ptr_array_index (schema->columns, part->column);

      g_string_append_printf (message, "%s%s.%s", i > 0 ? ", " : "", schema->name, column->name);
    }
  return g_string_free (message, FALSE);
}

/* Rows on the scratch mirror (see QStoreMirror): CREATE INDEX, ADD
 * COLUMN and the ALTER arms check rows with SQLite's own semantics. */

void
qstore_mirror_clear (QStoreMirror *mirror)
{
  g_clear_pointer (&mirror->insert, sqlite3_finalize);
  g_clear_pointer (&mirror->predicates, sqlite3_finalize);
  g_clear_pointer (&mirror->clear, sqlite3_finalize);
}

gboolean
qstore_mirror_prepare (QStoreDatabase     *self,
                       QStoreTableSchema  *schema,
                       GPtrArray          *partial,
                       QStoreMirror       *mirror,
                       GError            **error)
{
  g_autofree char *quoted = qstore_sql_quote (schema->name);
  g_autoptr(GString) insert = g_string_new (NULL);
  g_autofree char *clear = g_strdup_printf ("DELETE FROM main.%s", quoted);

  mirror->n_columns = schema->columns->len;
  g_string_printf (insert, "INSERT INTO main.%s VALUES (", quoted);
  for (guint i = 0; i < schema->columns->len; i++)
    g_string_append_printf (insert, "%s?%u", i > 0 ? ", " : "", i + 1);
  g_string_append_c (insert, ')');

  if (sqlite3_prepare_v2 (self->scratch, insert->str, -1, &mirror->insert, NULL) != SQLITE_OK ||
      sqlite3_prepare_v2 (self->scratch, clear, -1, &mirror->clear, NULL) != SQLITE_OK)
    goto failed;

  if (partial != NULL && partial->len > 0)
    {
      g_autoptr(GString) select = g_string_new ("SELECT ");

      for (guint i = 0; i < partial->len; i++)
        {
          QStoreIndexSchema *index = g_ptr_array_index (partial, i);

          g_string_append_printf (select, "%s(%s) IS TRUE", i > 0 ? ", " : "", index->where_sql);
        }
      g_string_append_printf (select, " FROM main.%s", quoted);
      if (sqlite3_prepare_v2 (self->scratch, select->str, -1, &mirror->predicates,
                              NULL) != SQLITE_OK)
        goto failed;
    }
  return TRUE;

failed:
  qstore_database_set_sqlite_error (self, self->scratch, sqlite3_errcode (self->scratch), error);
  return FALSE;
}

gboolean
qstore_mirror_put (QStoreDatabase     *self,
                   QStoreMirror       *mirror,
                   const QStoreValue  *values,
                   gboolean           *holds,
                   GError            **error)
{
  int rc;

  for (guint i = 0; i < mirror->n_columns; i++)
    qstore_value_bind (mirror->insert, i + 1, &values[i]);
  rc = sqlite3_step (mirror->insert);
  sqlite3_reset (mirror->insert);
  sqlite3_clear_bindings (mirror->insert);
  if (rc != SQLITE_DONE)
    {
      qstore_database_set_sqlite_error (self, self->scratch, rc, error);
      return FALSE;
    }

  if (holds != NULL && mirror->predicates != NULL)
    {
      rc = sqlite3_step (mirror->predicates);
      if (rc == SQLITE_ROW)
        for (int i = 0; i < sqlite3_column_count (mirror->predicates); i++)
          holds[i] = sqlite3_column_int (mirror->predicates, i) != 0;
      sqlite3_reset (mirror->predicates);
      if (rc != SQLITE_ROW)
        {
          qstore_database_set_sqlite_error (self, self->scratch, rc, error);
          sqlite3_step (mirror->clear);
          sqlite3_reset (mirror->clear);
          return FALSE;
        }
    }

  sqlite3_step (mirror->clear);
  sqlite3_reset (mirror->clear);
  return TRUE;
}

/**
 * qstore_ddl_build_indexes:
 * @self: the database, in a transaction
 * @table: the table
 * @build: (element-type guint): positions of the indexes to fill
 * @check_unique: whether a UNIQUE index refuses duplicates (NULLs are
 *   distinct), with SQLite's message
 * @error: return location for a #GError
 *
 * Writes the entries of the indexes listed in @build for every row the
 * transaction holds, in one pass over the rows; a partial index takes the
 * rows its predicate holds for, as SQLite evaluates it.
 *
 * Returns: %TRUE on success
 */
gboolean
qstore_ddl_build_indexes (QStoreDatabase  *self,
                          QStoreTable     *table,
                          GArray          *build,
                          gboolean         check_unique,
                          GError         **error)
{
  QStoreTableSchema *schema = qstore_table_get_table_schema (table);
  g_autoptr(GPtrArray) partial = g_ptr_array_new ();
  g_autofree int *predicate = g_new0 (int, MAX (build->len, 1));
  g_autofree gboolean *holds = g_new0 (gboolean, MAX (build->len, 1));
  g_autofree QStoreValue *values = g_new0 (QStoreValue, schema->columns->len + 1);
  g_autoptr(QStoreBounds) all = qstore_bounds_new ();
  g_autoptr(QStoreIter) rows = NULL;
  g_autoptr(GByteArray) key = g_byte_array_new ();
  QStoreMirror mirror = { NULL };
  GError *local_error = NULL;
  gboolean ok = TRUE;

  if (build->len == 0)
    return TRUE;

  for (guint b = 0; b < build->len; b++)
    {
      QStoreIndexSchema *index = g_ptr_array_index (schema->indexes,
                                                    g_array_index (build, guint, b));

      predicate[b] = -1;
      if (index->where_sql != NULL)
        {
          predicate[b] = partial->len;
          g_ptr_array_add (partial, index);
        }
    }
  if (partial->len > 0 && !qstore_mirror_prepare (self, schema, partial, &mirror, error))
    {
      qstore_mirror_clear (&mirror);
      return FALSE;
    }

  /* The rows as this transaction has them: moved, or as they were. */
  if (!(rows = qstore_table_scan (table, all, error)))
    {
      qstore_mirror_clear (&mirror);
      return FALSE;
    }

  while (ok && qstore_iter_next (rows, &local_error))
    {
      gsize data_key_len, row_len;
      const guint8 *data_key = qstore_iter_peek_key (rows, &data_key_len);
      const guint8 *row = qstore_iter_peek_value (rows, &row_len);

      if (!qstore_table_decode_row (table, row, row_len, values, NULL, error) ||
          (partial->len > 0 && !qstore_mirror_put (self, &mirror, values, holds, error)))
        {
          ok = FALSE;
          break;
        }

      for (guint b = 0; ok && b < build->len; b++)
        {
          guint position = g_array_index (build, guint, b);
          QStoreIndexSchema *index = g_ptr_array_index (schema->indexes, position);
          QStoreKV *store = qstore_table_get_index_store (table, position);
          gboolean has_null = FALSE;

          if (predicate[b] >= 0 && !holds[predicate[b]])
            continue;

          g_byte_array_set_size (key, 0);
          for (guint i = 0; ok && i < index->parts->len; i++)
            {
              QStoreKeyPart *part = &g_array_index (index->parts, QStoreKeyPart, i);

              if (values[part->column].type == QSTORE_VALUE_NULL)
                has_null = TRUE;
              ok = qstore_codec_append_key_value (key, &values[part->column], part->collation,
                                                  part->descending, error);
            }
          if (!ok)
            break;

          if (check_unique && index->unique && !has_null)
            {
              g_autoptr(QStoreBounds) same = qstore_bounds_new ();
              g_autoptr(QStoreIter) found = NULL;
              gsize found_len;
              const guint8 *found_key;

              /* An entry of another row under the same column values: the
               * first entry at or after the prefix, if it starts with it.
               * (No byte can bound the range from above: a data key may
               * start with 0xff, a DESC NULL.) */
              qstore_bounds_set_gte (same, key->data, key->len);
              qstore_bounds_set_limit (same, 1);
              if (!(found = qstore_coordinator_iterate (self->coordinator, store, same, error)))
                {
                  ok = FALSE;
                  break;
                }
              if (qstore_iter_next (found, &local_error) &&
                  (found_key = qstore_iter_peek_key (found, &found_len)) != NULL &&
                  found_len >= key->len && memcmp (found_key, key->data, key->len) == 0)
                {
                  g_autofree char *message = qstore_ddl_unique_message (schema, index->parts);

                  g_set_error_literal (error, QSTORE_ERROR, QSTORE_ERROR_CONSTRAINT, message);
                  ok = FALSE;
                  break;
                }
              if (local_error != NULL)
                break;
            }

          g_byte_array_append (key, data_key, data_key_len);
          qstore_coordinator_put (self->coordinator, store, key->data, key->len,
                                  data_key, data_key_len);
        }
    }

  qstore_mirror_clear (&mirror);
  if (local_error != NULL)
    {
      g_propagate_error (error, local_error);
      return FALSE;
    }
  return ok;
}

static gboolean
build_one_index (QStoreDatabase  *self,
                 QStoreTable     *table,
                 guint            position,
                 gboolean         check_unique,
                 GError         **error)
{
  g_autoptr(GArray) build = g_array_new (FALSE, FALSE, sizeof (guint));

  g_array_append_val (build, position);
  return qstore_ddl_build_indexes (self, table, build, check_unique, error);
}

gboolean
qstore_ddl_create_index (QStoreDatabase  *self,
                         const char      *sql,
                         const char     **tail,
                         GError         **error)
{
  ScratchAction seen = { 0 };
  sqlite3_stmt *stmt;
  g_autoptr(QStoreTableSchema) schema = NULL;
  g_autoptr(QStoreTable) table = NULL;
  g_autofree char *bundle = NULL;
  g_autofree char *what = NULL;
  g_autofree char *store_name = NULL;
  g_autoptr(GHashTable) used = NULL;
  g_autoptr(GBytes) catalog_key = NULL;
  QStoreSqlTable *entry;
  int position;
  gboolean ok;

  if (!(stmt = prepare_on_scratch (self, sql, tail, &seen, error)))
    {
      scratch_action_clear (&seen);
      return FALSE;
    }

  /* IF NOT EXISTS, and it does. */
  if (seen.action != SQLITE_CREATE_INDEX)
    {
      sqlite3_finalize (stmt);
      scratch_action_clear (&seen);
      return TRUE;
    }

  entry = qstore_database_lookup (self, seen.table);
  if (entry == NULL || !check_ddl_allowed (self, error) || !scratch_begin (self, error))
    {
      if (entry == NULL)
        g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_NOT_FOUND, "no such table: %s", seen.table);
      sqlite3_finalize (stmt);
      scratch_action_clear (&seen);
      return FALSE;
    }

  ok = step_on_scratch (self, stmt, error);
  sqlite3_finalize (stmt);
  if (ok)
    schema = qstore_table_schema_from_sqlite (self->scratch, "main", entry->schema->name, error);
  position = schema != NULL ? find_index (schema, seen.name) : -1;
  if (schema != NULL && position < 0)
    g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_FAILED,
                 "Index “%s” was created but cannot be found on table “%s”",
                 seen.name, entry->schema->name);

  if (position >= 0)
    {
      used = qstore_database_store_names (self, NULL);
      store_name = qstore_store_name_for_index (schema->schema, schema->name, seen.name);
      what = g_strdup_printf ("Index “%s” of table “%s”", seen.name, schema->name);
      if (check_new_store (self, used, store_name, what, error))
        table = qstore_table_new (self->coordinator, schema, self->scratch, error);
    }

  if (table == NULL)
    {
      scratch_undo (self);
      scratch_action_clear (&seen);
      return FALSE;
    }

  /* The entries and the new catalog bundle commit together. */
  qstore_coordinator_begin (self->coordinator);
  if (!build_one_index (self, table, position, TRUE, error))
    {
      qstore_coordinator_rollback (self->coordinator);
      scratch_undo (self);
      scratch_action_clear (&seen);
      return FALSE;
    }

  bundle = qstore_table_schema_to_bundle (schema);
  catalog_key = qstore_catalog_key_for_table (schema->schema, schema->name);
  qstore_catalog_put_if_changed (self, catalog_key, bundle);
  /* One unit even without an atomic batch: a crash must not leave index
   * entries the catalog does not list. */
  if (!qstore_coordinator_commit_restructure (self->coordinator, no_stores, error))
    {
      scratch_undo (self);
      scratch_action_clear (&seen);
      return FALSE;
    }

  qstore_sql_table_set_table (entry, table);
  scratch_action_clear (&seen);
  return scratch_commit (self, error);
}

/* DROP INDEX */

int
qstore_ddl_is_index_drop (QStoreDatabase  *self,
                          const char      *sql,
                          GError         **error)
{
  ScratchAction seen = { 0 };
  GError *local_error = NULL;
  sqlite3_stmt *stmt;
  int found;

  /* The index exists on scratch only if the authorizer sees it dropped. */
  stmt = prepare_on_scratch (self, sql, NULL, &seen, &local_error);
  if (stmt == NULL)
    {
      scratch_action_clear (&seen);
      /* Scratch knows why a qstore table's index cannot go (an index of
       * a UNIQUE constraint); an unknown index may be the main's. */
      if (g_str_has_prefix (local_error->message, "no such index"))
        {
          g_error_free (local_error);
          return 0;
        }
      g_propagate_error (error, local_error);
      return -1;
    }
  found = seen.action == SQLITE_DROP_INDEX && qstore_database_lookup (self, seen.table) != NULL;
  sqlite3_finalize (stmt);
  scratch_action_clear (&seen);
  return found ? 1 : 0;
}

gboolean
qstore_ddl_drop_index (QStoreDatabase  *self,
                       const char      *sql,
                       const char     **tail,
                       GError         **error)
{
  ScratchAction seen = { 0 };
  g_autoptr(QStoreTableSchema) schema = NULL;
  g_autoptr(QStoreTable) table = NULL;
  g_autoptr(GBytes) catalog_key = NULL;
  g_autofree char *bundle = NULL;
  g_autofree char *store_name = NULL;
  const char *drop[2] = { NULL, NULL };
  const char *empty[] = { NULL };
  QStoreWriteOp op = { 0 };
  QStoreSqlTable *entry;
  sqlite3_stmt *stmt;
  gsize key_len;
  gboolean ok;

  if (!(stmt = prepare_on_scratch (self, sql, tail, &seen, error)))
    {
      scratch_action_clear (&seen);
      return FALSE;
    }
  entry = seen.action == SQLITE_DROP_INDEX ? qstore_database_lookup (self, seen.table) : NULL;
  if (entry == NULL)
    {
      /* Gone meanwhile: the statement says what SQLite makes of it. */
      ok = step_on_scratch (self, stmt, error);
      sqlite3_finalize (stmt);
      scratch_action_clear (&seen);
      return ok;
    }

  if (!check_ddl_allowed (self, error) || !scratch_begin (self, error))
    {
      sqlite3_finalize (stmt);
      scratch_action_clear (&seen);
      return FALSE;
    }

  ok = step_on_scratch (self, stmt, error);
  sqlite3_finalize (stmt);
  if (ok && (schema = qstore_table_schema_from_sqlite (self->scratch, "main", entry->schema->name,
                                                       error)))
    table = qstore_table_new (self->coordinator, schema, self->scratch, error);
  if (table == NULL)
    {
      scratch_undo (self);
      scratch_action_clear (&seen);
      return FALSE;
    }

  /* The index store goes with the catalog bundle that no longer lists it. */
  store_name = qstore_store_name_for_index (schema->schema, schema->name, seen.name);
  drop[0] = store_name;
  bundle = qstore_table_schema_to_bundle (schema);
  catalog_key = qstore_catalog_key_for_table (schema->schema, schema->name);
  op.store = qstore_database_get_catalog (self);
  op.kind = QSTORE_WRITE_OP_PUT;
  op.key = g_bytes_get_data (catalog_key, &key_len);
  op.key_len = key_len;
  op.value = (const guint8 *) bundle;
  op.value_len = strlen (bundle);

  if (!qstore_provider_restructure (self->provider, drop, empty, empty, &op,
                                    qstore_catalog_differs (self, catalog_key, bundle) ? 1 : 0,
                                    error))
    {
      scratch_undo (self);
      scratch_action_clear (&seen);
      return FALSE;
    }

  qstore_sql_table_set_table (entry, table);
  scratch_action_clear (&seen);
  return scratch_commit (self, error);
}

/* ALTER TABLE … ADD COLUMN, RENAME COLUMN, DROP COLUMN */

QStoreSqlAlter
qstore_sql_alter_kind (const char *sql)
{
  const char *p = sql;
  QStoreSqlToken token;

  p = qstore_sql_next_token (p, &token);   /* ALTER */
  p = qstore_sql_next_token (p, &token);   /* TABLE */
  p = qstore_sql_next_token (p, &token);   /* name */
  p = qstore_sql_next_token (p, &token);
  if (qstore_sql_token_is_punct (&token, '.'))
    {
      p = qstore_sql_next_token (p, &token);
      p = qstore_sql_next_token (p, &token);
    }

  if (qstore_sql_token_is (&token, "ALTER"))
    {
      QStoreSqlToken second;

      p = qstore_sql_next_token (p, &token);
      qstore_sql_next_token (p, &second);
      if (qstore_sql_token_is (&token, "PRIMARY") && qstore_sql_token_is (&second, "KEY"))
        return QSTORE_SQL_ALTER_PRIMARY_KEY;
      return QSTORE_SQL_ALTER_COLUMN;
    }
  if (qstore_sql_token_is (&token, "ADD"))
    {
      qstore_sql_next_token (p, &token);
      return qstore_sql_token_is (&token, "CONSTRAINT") ? QSTORE_SQL_ALTER_ADD_CONSTRAINT
                                             : QSTORE_SQL_ALTER_ADD_COLUMN;
    }
  if (qstore_sql_token_is (&token, "DROP"))
    {
      qstore_sql_next_token (p, &token);
      return qstore_sql_token_is (&token, "CONSTRAINT") ? QSTORE_SQL_ALTER_DROP_CONSTRAINT
                                             : QSTORE_SQL_ALTER_DROP_COLUMN;
    }
  if (qstore_sql_token_is (&token, "RENAME"))
    {
      qstore_sql_next_token (p, &token);
      if (qstore_sql_token_is (&token, "CONSTRAINT"))
        return QSTORE_SQL_ALTER_RENAME_CONSTRAINT;
      return qstore_sql_token_is (&token, "TO") ? QSTORE_SQL_ALTER_OTHER : QSTORE_SQL_ALTER_RENAME_COLUMN;
    }
  return QSTORE_SQL_ALTER_OTHER;
}

/* SQLite adds a column to a table with rows only when its DEFAULT is a
 * literal (its sqlite3ValueFromExpr() must evaluate it): a string, a blob,
 * a signed number, NULL, TRUE or FALSE. */
static gboolean
default_is_constant (const char *default_sql)
{
  const char *p;
  QStoreSqlToken token;

  if (default_sql == NULL)
    return TRUE;

  p = qstore_sql_skip_blank (default_sql);
  if (*p == '-' || *p == '+')
    p = qstore_sql_skip_blank (p + 1);

  if ((p[0] == 'x' || p[0] == 'X') && p[1] == '\'')
    p = qstore_sql_next_token (p + 1, &token);
  else if (*p == '\'')
    p = qstore_sql_next_token (p, &token);
  else if (g_ascii_isdigit (*p) || *p == '.')
    {
      for (p++; g_ascii_isalnum (*p) || *p == '.' ||
                ((*p == '+' || *p == '-') && (p[-1] == 'e' || p[-1] == 'E')); p++)
        ;
    }
  else
    {
      p = qstore_sql_next_token (p, &token);
      if (!qstore_sql_token_is (&token, "NULL") && !qstore_sql_token_is (&token, "TRUE") &&
          !qstore_sql_token_is (&token, "FALSE"))
        return FALSE;
    }

  return *qstore_sql_skip_blank (p) == '\0';
}

/* A private copy of @column's DEFAULT, with its affinity; NULL for none. */
static sqlite3_value *
evaluate_default (QStoreDatabase  *self,
                  QStoreColumn    *column,
                  QStoreValue     *out,
                  GError         **error)
{
  g_autofree char *sql = NULL;
  sqlite3_stmt *stmt = NULL;
  sqlite3_value *value;

  memset (out, 0, sizeof *out);
  if (column->default_sql == NULL)
    return NULL;

  sql = g_strdup_printf ("SELECT %s", column->default_sql);
  if (sqlite3_prepare_v2 (self->scratch, sql, -1, &stmt, NULL) != SQLITE_OK ||
      sqlite3_step (stmt) != SQLITE_ROW)
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                   "The DEFAULT of column “%s” cannot be evaluated: %s",
                   column->name, sqlite3_errmsg (self->scratch));
      sqlite3_finalize (stmt);
      return NULL;
    }
  value = sqlite3_value_dup (sqlite3_column_value (stmt, 0));
  sqlite3_finalize (stmt);

  /* Rows that predate the column read its DEFAULT the way SQLite reads a
   * literal (sqlite3ValueFromExpr()): a number for a column without
   * affinity gets numeric affinity, so 3.0 reads back as 3. */
  if (column->affinity == QSTORE_AFFINITY_BLOB &&
      (sqlite3_value_type (value) == SQLITE_INTEGER || sqlite3_value_type (value) == SQLITE_FLOAT))
    qstore_affinity_apply (QSTORE_AFFINITY_NUMERIC, value, out);
  else
    qstore_affinity_apply (column->affinity, value, out);
  return value;
}

static gboolean
table_has_rows (QStoreTable  *table,
                gboolean     *has_rows,
                GError      **error)
{
  g_autoptr(QStoreBounds) first = qstore_bounds_new ();
  g_autoptr(QStoreIter) iter = NULL;
  GError *local_error = NULL;

  qstore_bounds_set_limit (first, 1);
  if (!(iter = qstore_table_scan (table, first, error)))
    return FALSE;
  *has_rows = qstore_iter_next (iter, &local_error);
  if (local_error != NULL)
    {
      g_propagate_error (error, local_error);
      return FALSE;
    }
  return TRUE;
}

/* Rewrites every row of @old_table in @new_table's column layout: a column
 * added at the end takes @added, a dropped one (@dropped) goes. When
 * @check, each new row must pass the CHECK constraints, which SQLite
 * evaluates on the mirror. */
static gboolean
rewrite_rows (QStoreDatabase     *self,
              QStoreTable        *old_table,
              QStoreTable        *new_table,
              const QStoreValue  *added,
              int                 dropped,
              gboolean            check,
              GError            **error)
{
  QStoreTableSchema *old_schema = qstore_table_get_table_schema (old_table);
  QStoreTableSchema *new_schema = qstore_table_get_table_schema (new_table);
  guint n_old = old_schema->columns->len;
  guint n_new = new_schema->columns->len;
  gboolean keeps_rowid = new_schema->rowid_column < 0 &&
                         qstore_table_schema_is_rowid_table (new_schema);
  g_autofree QStoreValue *old_values = g_new0 (QStoreValue, n_old + 1);
  g_autofree QStoreValue *new_values = g_new0 (QStoreValue, n_new + 2);
  g_autoptr(QStoreBounds) all = qstore_bounds_new ();
  g_autoptr(QStoreIter) rows = NULL;
  g_autoptr(GByteArray) row = g_byte_array_new ();
  QStoreMirror checker = { NULL };
  GError *local_error = NULL;
  gboolean ok = TRUE;

  if (check && !qstore_mirror_prepare (self, new_schema, NULL, &checker, error))
    {
      qstore_mirror_clear (&checker);
      return FALSE;
    }

  if (!(rows = qstore_table_scan (old_table, all, error)))
    {
      qstore_mirror_clear (&checker);
      return FALSE;
    }

  while (ok && qstore_iter_next (rows, &local_error))
    {
      gsize key_len, data_len;
      const guint8 *key = qstore_iter_peek_key (rows, &key_len);
      const guint8 *data = qstore_iter_peek_value (rows, &data_len);
      gint64 rowid = 0;
      guint k = 0;

      if (!qstore_table_decode_row (old_table, data, data_len, old_values, &rowid, error))
        {
          ok = FALSE;
          break;
        }

      for (guint i = 0; i < n_old; i++)
        if ((int) i != dropped)
          new_values[k++] = old_values[i];
      if (k < n_new)
        new_values[k++] = *added;
      g_assert (k == n_new);

      if (check)
        {
          if (!qstore_mirror_put (self, &checker, new_values, NULL, &local_error))
            {
              /* SQLite's own words for an ALTER that existing rows fail. */
              if (g_error_matches (local_error, QSTORE_ERROR, QSTORE_ERROR_CONSTRAINT))
                {
                  g_clear_error (&local_error);
                  g_set_error_literal (error, QSTORE_ERROR, QSTORE_ERROR_CONSTRAINT,
                                       "CHECK constraint failed");
                }
              ok = FALSE;
              break;
            }
        }

      if (keeps_rowid)
        {
          new_values[k].type = QSTORE_VALUE_INTEGER;
          new_values[k].integer = rowid;
          k++;
        }

      g_byte_array_set_size (row, 0);
      qstore_row_encode (row, new_values, k);
      qstore_coordinator_put (self->coordinator, qstore_table_get_data_store (new_table),
                              key, key_len, row->data, row->len);
    }

  qstore_mirror_clear (&checker);
  if (local_error != NULL)
    {
      g_propagate_error (error, local_error);
      return FALSE;
    }
  return ok;
}

gboolean
qstore_ddl_alter_columns (QStoreDatabase  *self,
                          const char      *sql,
                          const char     **tail,
                          GError         **error)
{
  ScratchAction seen = { 0 };
  g_autoptr(QStoreTableSchema) old_schema = NULL;
  g_autoptr(QStoreTableSchema) schema = NULL;
  g_autoptr(QStoreTable) old_table = NULL;
  g_autoptr(QStoreTable) table = NULL;
  g_autoptr(GPtrArray) others = NULL;
  g_autoptr(GBytes) catalog_key = NULL;
  g_autofree char *bundle = NULL;
  g_autofree char *upper = NULL;
  sqlite3_value *default_value = NULL;
  QStoreSqlAlter kind = qstore_sql_alter_kind (sql);
  QStoreValue added = { 0 };
  QStoreSqlTable *entry;
  sqlite3_stmt *stmt;
  gboolean has_rows = FALSE;
  int dropped = -1;
  gboolean ok;

  /* DROP COLUMN takes the indexes that use the column along, and SQLite
   * has no words for the other arms: qstore-alter.c runs those. */
  if (kind == QSTORE_SQL_ALTER_DROP_COLUMN || kind >= QSTORE_SQL_ALTER_COLUMN)
    return qstore_alter_table (self, sql, tail, error);

  if (!(stmt = prepare_on_scratch (self, sql, tail, &seen, error)))
    {
      scratch_action_clear (&seen);
      return FALSE;
    }
  entry = seen.action == SQLITE_ALTER_TABLE ? qstore_database_lookup (self, seen.table) : NULL;
  scratch_action_clear (&seen);
  if (entry == NULL || kind == QSTORE_SQL_ALTER_OTHER)
    {
      g_set_error_literal (error, QSTORE_ERROR, QSTORE_ERROR_UNSUPPORTED,
                           "This ALTER TABLE is not supported on qstore tables: use ADD "
                           "COLUMN, RENAME COLUMN, DROP COLUMN, RENAME TO, ALTER COLUMN, "
                           "ADD/DROP/RENAME CONSTRAINT or ALTER PRIMARY KEY");
      sqlite3_finalize (stmt);
      return FALSE;
    }

  old_schema = qstore_table_schema_ref (entry->schema);
  old_table = g_object_ref (entry->table);
  if (!check_ddl_allowed (self, error) || !table_has_rows (old_table, &has_rows, error) ||
      !scratch_begin (self, error))
    {
      sqlite3_finalize (stmt);
      return FALSE;
    }

  ok = step_on_scratch (self, stmt, error);
  sqlite3_finalize (stmt);
  if (!ok ||
      !(schema = qstore_table_schema_from_sqlite (self->scratch, "main", old_schema->name,
                                                  error)) ||
      !qstore_ddl_check_conflict_clauses (old_schema->name, old_schema->sql, schema->sql, error) ||
      !(table = qstore_table_new (self->coordinator, schema, self->scratch, error)))
    goto fail;

  if (kind == QSTORE_SQL_ALTER_ADD_COLUMN)
    {
      QStoreColumn *column = g_ptr_array_index (schema->columns, schema->columns->len - 1);

      /* What SQLite checks only when the table has rows, which its mirror
       * never has. */
      if (has_rows && !default_is_constant (column->default_sql))
        {
          g_set_error_literal (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                               "Cannot add a column with non-constant default");
          goto fail;
        }
      default_value = evaluate_default (self, column, &added, error);
      if (column->default_sql != NULL && default_value == NULL)
        goto fail;
      if (has_rows && column->not_null && added.type == QSTORE_VALUE_NULL)
        {
          g_set_error_literal (error, QSTORE_ERROR, QSTORE_ERROR_CONSTRAINT,
                               "Cannot add a NOT NULL column with default value NULL");
          goto fail;
        }
    }
  else if (kind == QSTORE_SQL_ALTER_DROP_COLUMN)
    {
      for (guint i = 0; i < old_schema->columns->len && dropped < 0; i++)
        {
          QStoreColumn *column = g_ptr_array_index (old_schema->columns, i);

          if (qstore_table_schema_find_column (schema, column->name) < 0)
            dropped = i;
        }
      g_assert (dropped >= 0);
    }

  others = qstore_database_rewritten_tables (self, old_schema->name, error);
  if (others == NULL)
    goto fail;

  /* The rows in their new layout and the catalog commit together. */
  qstore_coordinator_begin (self->coordinator);
  upper = g_ascii_strup (schema->sql, -1);
  if (has_rows && kind != QSTORE_SQL_ALTER_RENAME_COLUMN &&
      !rewrite_rows (self, old_table, table, &added, dropped,
                     kind == QSTORE_SQL_ALTER_ADD_COLUMN && strstr (upper, "CHECK") != NULL,
                     error))
    {
      qstore_coordinator_rollback (self->coordinator);
      goto fail;
    }

  bundle = qstore_table_schema_to_bundle (schema);
  catalog_key = qstore_catalog_key_for_table (schema->schema, schema->name);
  qstore_catalog_put_if_changed (self, catalog_key, bundle);
  for (guint i = 0; i < others->len; i++)
    {
      QStoreTableSchema *other = qstore_table_get_table_schema (g_ptr_array_index (others, i));
      g_autoptr(GBytes) other_key = qstore_catalog_key_for_table (other->schema, other->name);
      g_autofree char *other_bundle = qstore_table_schema_to_bundle (other);

      qstore_catalog_put_if_changed (self, other_key, other_bundle);
    }
  /* Rows in their new layout must never meet the old catalog entry. */
  if (!qstore_coordinator_commit_restructure (self->coordinator, no_stores, error))
    goto fail;

  sqlite3_value_free (default_value);
  qstore_sql_table_set_table (entry, table);
  qstore_database_apply_tables (self, others);
  if (!scratch_commit (self, error))
    return FALSE;
  /* SQLite learns a virtual table's columns when it connects. */
  return qstore_database_redeclare (self, entry, error);

fail:
  sqlite3_value_free (default_value);
  scratch_undo (self);
  return FALSE;
}

/* ALTER TABLE … RENAME TO, from xRename */

/* What an index of table @old_name is called once the table is @new_name:
 * SQLite renames the autoindexes of UNIQUE constraints with the table. */
static char *
renamed_index (const char *index,
               const char *old_name,
               const char *new_name)
{
  g_autofree char *prefix = g_strdup_printf ("sqlite_autoindex_%s_", old_name);

  if (g_ascii_strncasecmp (index, prefix, strlen (prefix)) == 0)
    return g_strdup_printf ("sqlite_autoindex_%s_%s", new_name, index + strlen (prefix));
  return g_strdup (index);
}

gboolean
qstore_ddl_rename_table (QStoreDatabase  *self,
                         QStoreSqlTable  *entry,
                         const char      *new_name,
                         GError         **error)
{
  g_autoptr(QStoreTableSchema) old_schema = qstore_table_schema_ref (entry->schema);
  g_autoptr(QStoreTableSchema) schema = NULL;
  g_autoptr(QStoreTable) table = NULL;
  g_autoptr(GPtrArray) from = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GPtrArray) to = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GPtrArray) keep = g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);
  g_autoptr(GPtrArray) texts = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GArray) ops = g_array_new (FALSE, TRUE, sizeof (QStoreWriteOp));
  g_autoptr(QStoreKV) stats = NULL;
  g_autoptr(GBytes) stats_value = NULL;
  g_autofree char *rename = NULL;
  g_autofree char *old_quoted = NULL;
  g_autofree char *new_quoted = NULL;
  g_autofree char *old_stats = NULL;
  g_autofree char *new_stats = NULL;
  g_autoptr(GPtrArray) others = NULL;
  GBytes *old_key, *new_key;
  const char *empty[] = { NULL };
  GError *local_error = NULL;

  if (!check_ddl_allowed (self, error) || !scratch_begin (self, error))
    return FALSE;

  old_quoted = qstore_sql_quote (old_schema->name);
  new_quoted = qstore_sql_quote (new_name);
  rename = g_strdup_printf ("ALTER TABLE main.%s RENAME TO %s", old_quoted, new_quoted);
  if (!qstore_database_run (self, self->scratch, rename, error) ||
      !(schema = qstore_table_schema_from_sqlite (self->scratch, "main", new_name, error)) ||
      /* The table's own stores count as taken: a rename whose new names
       * land on them (t with index x to t_idx_x) would move a store onto
       * one not yet moved away. SQLite refuses renames that only change
       * case, the one kind that keeps every name. */
      !check_table_stores (self, schema, NULL, error) ||
      !(table = qstore_table_new (self->coordinator, schema, self->scratch, error)))
    goto fail;

  /* Stores move pairwise; a rename that only changes case keeps them. */
  g_ptr_array_add (from, qstore_store_name_for_table (old_schema->schema, old_schema->name));
  g_ptr_array_add (to, qstore_store_name_for_table (schema->schema, schema->name));
  for (guint i = 0; i < old_schema->indexes->len; i++)
    {
      QStoreIndexSchema *index = g_ptr_array_index (old_schema->indexes, i);
      g_autofree char *name = renamed_index (index->name, old_schema->name, schema->name);

      if (find_index (schema, name) < 0)
        {
          g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_FAILED,
                       "Index “%s” of table “%s” cannot be found after renaming the "
                       "table to “%s”", index->name, old_schema->name, schema->name);
          goto fail;
        }
      g_ptr_array_add (from, qstore_store_name_for_index (old_schema->schema, old_schema->name,
                                                          index->name));
      g_ptr_array_add (to, qstore_store_name_for_index (schema->schema, schema->name, name));
    }
  for (guint i = from->len; i > 0; i--)
    if (g_str_equal (from->pdata[i - 1], to->pdata[i - 1]))
      {
        g_ptr_array_remove_index (from, i - 1);
        g_ptr_array_remove_index (to, i - 1);
      }
  g_ptr_array_add (from, NULL);
  g_ptr_array_add (to, NULL);

  /* The statistics move too. */
  if (!(stats = qstore_provider_get_stats_store (self->provider, error)))
    goto fail;
  old_stats = qstore_stats_key_for_table (old_schema->schema, old_schema->name);
  new_stats = qstore_stats_key_for_table (schema->schema, schema->name);
  if (!g_str_equal (old_stats, new_stats))
    {
      stats_value = qstore_kv_get (stats, (const guint8 *) old_stats, strlen (old_stats),
                                   &local_error);
      if (local_error != NULL)
        {
          g_propagate_error (error, local_error);
          goto fail;
        }
      if (stats_value != NULL)
        {
          old_key = g_bytes_new (old_stats, strlen (old_stats));
          new_key = g_bytes_new (new_stats, strlen (new_stats));
          g_ptr_array_add (keep, old_key);
          g_ptr_array_add (keep, new_key);
          g_ptr_array_add (texts, g_strndup (g_bytes_get_data (stats_value, NULL),
                                             g_bytes_get_size (stats_value)));
          add_op (ops, stats, QSTORE_WRITE_OP_DELETE, old_key, NULL);
          add_op (ops, stats, QSTORE_WRITE_OP_PUT, new_key, texts->pdata[texts->len - 1]);
        }
    }

  /* The catalog: the new entry, then the old one's deletion; other tables
   * whose FOREIGN KEYs SQLite rewrote to the new name get theirs again. */
  old_key = qstore_catalog_key_for_table (old_schema->schema, old_schema->name);
  new_key = qstore_catalog_key_for_table (schema->schema, schema->name);
  g_ptr_array_add (keep, old_key);
  g_ptr_array_add (keep, new_key);
  g_ptr_array_add (texts, qstore_table_schema_to_bundle (schema));
  if (qstore_catalog_differs (self, new_key, texts->pdata[texts->len - 1]))
    add_op (ops, qstore_database_get_catalog (self), QSTORE_WRITE_OP_PUT, new_key,
            texts->pdata[texts->len - 1]);
  if (!g_bytes_equal (old_key, new_key))
    add_op (ops, qstore_database_get_catalog (self), QSTORE_WRITE_OP_DELETE, old_key, NULL);

  others = qstore_database_rewritten_tables (self, old_schema->name, error);
  if (others == NULL)
    goto fail;
  for (guint i = 0; i < others->len; i++)
    {
      QStoreTableSchema *other = qstore_table_get_table_schema (g_ptr_array_index (others, i));
      GBytes *key = qstore_catalog_key_for_table (other->schema, other->name);

      g_ptr_array_add (keep, key);
      g_ptr_array_add (texts, qstore_table_schema_to_bundle (other));
      if (qstore_catalog_differs (self, key, texts->pdata[texts->len - 1]))
        add_op (ops, qstore_database_get_catalog (self), QSTORE_WRITE_OP_PUT, key,
                texts->pdata[texts->len - 1]);
    }

  if (!qstore_provider_restructure (self->provider,
                                    empty,
                                    (const char * const *) from->pdata,
                                    (const char * const *) to->pdata,
                                    (QStoreWriteOp *) ops->data, ops->len, error))
    goto fail;

  qstore_database_forget_table_stats (self, old_schema->schema, old_schema->name);
  qstore_database_forget_table_stats (self, schema->schema, schema->name);
  qstore_database_rename_entry (self, entry, table);
  qstore_database_apply_tables (self, others);
  return scratch_commit (self, error);

fail:
  scratch_undo (self);
  return FALSE;
}

/* Repair after an interrupted commit */

/* Which stores the marker names; NULL means every store. */
static GHashTable *
marker_stores (const char *marker)
{
  g_autoptr(JsonParser) parser = json_parser_new ();
  GHashTable *stores;
  JsonNode *root;
  JsonArray *array;

  if (!json_parser_load_from_data (parser, marker, -1, NULL))
    return NULL;
  root = json_parser_get_root (parser);
  if (!JSON_NODE_HOLDS_OBJECT (root) ||
      !json_object_has_member (json_node_get_object (root), "stores") ||
      !JSON_NODE_HOLDS_ARRAY (json_object_get_member (json_node_get_object (root), "stores")))
    return NULL;

  stores = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  array = json_object_get_array_member (json_node_get_object (root), "stores");
  for (guint i = 0; i < json_array_get_length (array); i++)
    {
      JsonNode *element = json_array_get_element (array, i);

      if (JSON_NODE_HOLDS_VALUE (element) && json_node_get_value_type (element) == G_TYPE_STRING)
        g_hash_table_add (stores, g_strdup (json_node_get_string (element)));
    }
  return stores;
}

static gboolean
table_touched (QStoreTableSchema *schema,
               GHashTable        *stores)
{
  g_autofree char *data_store = NULL;

  if (stores == NULL)
    return TRUE;

  data_store = qstore_store_name_for_table (schema->schema, schema->name);
  if (g_hash_table_contains (stores, data_store))
    return TRUE;
  for (guint i = 0; i < schema->indexes->len; i++)
    {
      QStoreIndexSchema *index = g_ptr_array_index (schema->indexes, i);
      g_autofree char *index_store = qstore_store_name_for_index (schema->schema, schema->name,
                                                                 index->name);

      if (g_hash_table_contains (stores, index_store))
        return TRUE;
    }
  return FALSE;
}

/* Rebuilds @table's indexes from its rows and recounts them, in the open
 * transaction. */
static gboolean
repair_table (QStoreDatabase  *self,
              QStoreTable     *table,
              GError         **error)
{
  QStoreTableSchema *schema = qstore_table_get_table_schema (table);
  g_autoptr(QStoreBounds) all = qstore_bounds_new ();
  g_autoptr(QStoreIter) rows = NULL;
  GError *local_error = NULL;
  gint64 count = 0;

  for (guint i = 0; i < schema->indexes->len; i++)
    {
      QStoreKV *store = qstore_table_get_index_store (table, i);
      g_autoptr(QStoreIter) entries = qstore_coordinator_iterate (self->coordinator, store, all,
                                                                  error);

      if (entries == NULL)
        return FALSE;
      while (qstore_iter_next (entries, &local_error))
        {
          gsize key_len;
          const guint8 *key = qstore_iter_peek_key (entries, &key_len);

          qstore_coordinator_delete (self->coordinator, store, key, key_len);
        }
      if (local_error != NULL)
        {
          g_propagate_error (error, local_error);
          return FALSE;
        }
      /* The rows are what they are: a torn commit may have left two with
       * one UNIQUE value, and the index must list both. */
      if (!build_one_index (self, table, i, FALSE, error))
        return FALSE;
    }

  if (!(rows = qstore_table_scan (table, all, error)))
    return FALSE;
  while (qstore_iter_next (rows, &local_error))
    count++;
  if (local_error != NULL)
    {
      g_propagate_error (error, local_error);
      return FALSE;
    }

  qstore_coordinator_adjust_row_count (self->coordinator, schema->schema, schema->name,
                                       count - qstore_coordinator_get_row_count (self->coordinator,
                                                                                 schema->schema,
                                                                                 schema->name));
  return TRUE;
}

gboolean
qstore_ddl_repair_interrupted_commit (QStoreDatabase  *self,
                                      GError         **error)
{
  const char *marker = qstore_coordinator_get_interrupted_commit (self->coordinator);
  g_autoptr(GHashTable) stores = NULL;
  GHashTableIter iter;
  QStoreSqlTable *entry;

  if (marker == NULL || (self->flags & QSTORE_OPEN_READ_ONLY))
    return TRUE;

  /* A marker that does not parse: repair everything. */
  stores = marker_stores (marker);

  qstore_coordinator_begin (self->coordinator);
  g_hash_table_iter_init (&iter, self->tables);
  while (g_hash_table_iter_next (&iter, NULL, (gpointer *) &entry))
    {
      if (!table_touched (entry->schema, stores))
        continue;
      if (!repair_table (self, entry->table, error))
        {
          g_prefix_error (error, "Table “%s” cannot be repaired after an interrupted commit: ",
                          entry->schema->name);
          qstore_coordinator_rollback (self->coordinator);
          return FALSE;
        }
    }

  /* Committing removes the marker, even with nothing to repair. */
  return qstore_coordinator_commit (self->coordinator, error);
}
