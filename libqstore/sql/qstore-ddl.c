/* qstore-ddl.c: what DDL on qstore tables shares
 *
 * SQLite cannot index, alter or persist virtual tables, so qstore takes
 * DDL over. SQLite still parses and validates every statement: it runs on
 * the scratch connection, where each qstore table has an ordinary empty
 * mirror, inside a savepoint that is rolled back when anything later
 * fails. The schema is then read back from scratch, the stores and the
 * catalog are changed, and the virtual table on the main connection
 * follows. This file holds what every DDL statement uses: scratch work,
 * store-name checks, the mirror rows are checked on, and index building.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "qstore-affinity-private.h"
#include "qstore-coordinator-private.h"
#include "qstore-ddl-private.h"
#include "qstore-error.h"
#include "qstore-i18n-private.h"
#include "qstore-sql-token-private.h"
#include "qstore-provider-private.h"

/* Scratch work is undone as a whole when anything later fails. */

gboolean
qstore_ddl_scratch_begin (QStoreDatabase  *self,
               GError         **error)
{
  return qstore_database_run (self, self->scratch, "SAVEPOINT qstore_ddl", error);
}

gboolean
qstore_ddl_scratch_commit (QStoreDatabase  *self,
                GError         **error)
{
  return qstore_database_run (self, self->scratch, "RELEASE qstore_ddl", error);
}

void
qstore_ddl_scratch_undo (QStoreDatabase *self)
{
  sqlite3_exec (self->scratch, "ROLLBACK TO qstore_ddl; RELEASE qstore_ddl", NULL, NULL, NULL);
}

/* Statements run on scratch, with what the authorizer saw. */

static int
scratch_authorizer (void       *data,
                    int         action,
                    const char *arg1,
                    const char *arg2,
                    const char *db_name,
                    const char *trigger)
{
  QStoreScratchAction *seen = data;

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

void
qstore_scratch_action_clear (QStoreScratchAction *seen)
{
  g_clear_pointer (&seen->name, g_free);
  g_clear_pointer (&seen->table, g_free);
  seen->action = 0;
}

sqlite3_stmt *
qstore_ddl_prepare_on_scratch (QStoreDatabase  *self,
                    const char      *sql,
                    const char     **tail,
                    QStoreScratchAction   *seen,
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

gboolean
qstore_ddl_step_on_scratch (QStoreDatabase  *self,
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
const char * const qstore_ddl_no_stores[] = { NULL };

GPtrArray *
qstore_ddl_index_names (QStoreTableSchema *schema)
{
  GPtrArray *names = g_ptr_array_new ();

  for (guint i = 0; i < schema->indexes->len; i++)
    g_ptr_array_add (names, ((QStoreIndexSchema *) g_ptr_array_index (schema->indexes, i))->name);
  g_ptr_array_add (names, NULL);
  return names;
}

gboolean
qstore_ddl_store_is_empty (QStoreDatabase  *self,
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
gboolean
qstore_ddl_check_new_store (QStoreDatabase  *self,
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
                   _("%s would be stored in “%s”, which %s already uses: rename one of "
                   "them, or choose another name"),
                   what, store_name, owner);
      return FALSE;
    }
  if (!qstore_ddl_store_is_empty (self, store_name, &empty, error))
    return FALSE;
  if (!empty)
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_EXISTS,
                   _("%s would be stored in “%s”, which still holds the data of a table "
                   "no longer in the catalog: reclaim that storage first, or choose "
                   "another name"), what, store_name);
      return FALSE;
    }
  return TRUE;
}

gboolean
qstore_ddl_check_table_stores (QStoreDatabase     *self,
                    QStoreTableSchema  *schema,
                    const char         *except,
                    GError            **error)
{
  g_autoptr(GHashTable) used = qstore_database_store_names (self, except);
  g_autofree char *data_store = qstore_store_name_for_table (schema->schema, schema->name);
  g_autofree char *what = g_strdup_printf ("Table “%s”", schema->name);

  if (!qstore_ddl_check_new_store (self, used, data_store, what, error))
    return FALSE;

  for (guint i = 0; i < schema->indexes->len; i++)
    {
      QStoreIndexSchema *index = g_ptr_array_index (schema->indexes, i);
      g_autofree char *index_store = qstore_store_name_for_index (schema->schema, schema->name,
                                                                 index->name);
      g_autofree char *index_what = g_strdup_printf ("Index “%s” of table “%s”",
                                                     index->name, schema->name);

      if (!qstore_ddl_check_new_store (self, used, index_store, index_what, error))
        return FALSE;
    }
  return TRUE;
}

void
qstore_ddl_add_op (GArray            *ops,
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
               _("“%s” on a constraint of table “%s” is not supported (only the statement's "
               "conflict clause reaches qstore): leave it out, and write INSERT OR REPLACE "
               "or INSERT OR IGNORE where a statement should resolve conflicts"),
               clause, table);
  return FALSE;
}

gboolean
qstore_ddl_check_supported_table (QStoreDatabase  *self,
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
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_UNSUPPORTED, _("Table “%s”: %s"),
                   name, problems->str);
      return FALSE;
    }
  return TRUE;
}

int
qstore_ddl_find_index (QStoreTableSchema *schema,
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

gboolean
qstore_ddl_build_one_index (QStoreDatabase  *self,
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
qstore_ddl_rebuild_index (QStoreDatabase  *self,
                          QStoreTable     *table,
                          guint            position,
                          gboolean         check_unique,
                          GError         **error)
{
  QStoreKV *store = qstore_table_get_index_store (table, position);
  g_autoptr(QStoreBounds) all = qstore_bounds_new ();
  g_autoptr(QStoreIter) entries = NULL;
  GError *local_error = NULL;

  if (!(entries = qstore_coordinator_iterate (self->coordinator, store, all, error)))
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
  return qstore_ddl_build_one_index (self, table, position, check_unique, error);
}
