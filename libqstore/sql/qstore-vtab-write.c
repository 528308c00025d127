/* qstore-vtab-write.c: writes through the `qstore` virtual table
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * xUpdate applies the column affinity and the DEFAULTs SQLite leaves to
 * virtual tables, then hands the row to the QStoreTable, which checks
 * every constraint.
 */
#include "config.h"

#include <string.h>

#include "qstore-affinity-private.h"
#include "qstore-error.h"
#include "qstore-i18n-private.h"
#include "qstore-vtab-private.h"

static GBytes *
key_for_rowid (QStoreSqlTable  *entry,
               sqlite3_value   *value,
               GError         **error)
{
  gint64 rowid = sqlite3_value_int64 (value);

  if (qstore_vtab_keyed_by_rowid (entry->schema))
    {
      g_autoptr(GByteArray) key = g_byte_array_sized_new (24);

      qstore_codec_append_integer (key, rowid, FALSE);
      return g_byte_array_free_to_bytes (g_steal_pointer (&key));
    }

  if (rowid < 1 || (guint64) rowid > entry->key_by_rowid->len)
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_FAILED,
                   "Row %" G_GINT64_FORMAT " of table “%s” is unknown: table “%s” is keyed "
                   "by its PRIMARY KEY and its rowids last one transaction; select the "
                   "row again", rowid, entry->schema->name, entry->schema->name);
      return NULL;
    }
  return g_bytes_ref (g_ptr_array_index (entry->key_by_rowid, rowid - 1));
}

static QStoreConflict
conflict_for_statement (sqlite3 *db)
{
  switch (sqlite3_vtab_on_conflict (db))
    {
    case SQLITE_ROLLBACK:
      return QSTORE_CONFLICT_ROLLBACK;
    case SQLITE_FAIL:
      return QSTORE_CONFLICT_FAIL;
    case SQLITE_IGNORE:
      return QSTORE_CONFLICT_IGNORE;
    case SQLITE_REPLACE:
      return QSTORE_CONFLICT_REPLACE;
    case SQLITE_ABORT:
    default:
      return QSTORE_CONFLICT_ABORT;
    }
}

/* Which columns the INSERT being run leaves to their DEFAULT; NULL when
 * it gives every column. */
static gboolean *
omitted_columns (QStoreSqlTable *entry)
{
  const QStoreInsertShape *shape = entry->database->insert_shape;
  QStoreTableSchema *schema = entry->schema;
  gboolean *omitted;

  if (shape == NULL || g_ascii_strcasecmp (shape->table, schema->name) != 0)
    return NULL;
  if (!shape->default_values && shape->columns == NULL)
    return NULL;

  omitted = g_new0 (gboolean, MAX (schema->columns->len, 1));
  for (guint i = 0; i < schema->columns->len; i++)
    {
      const char *name = qstore_vtab_schema_column (schema, i)->name;

      omitted[i] = TRUE;
      for (guint k = 0; !shape->default_values && k < shape->columns->len; k++)
        if (g_ascii_strcasecmp (g_ptr_array_index (shape->columns, k), name) == 0)
          omitted[i] = FALSE;
    }
  return omitted;
}

/* A private copy of column @column's DEFAULT, evaluated by SQLite. */
static sqlite3_value *
evaluate_default (QStoreSqlTable  *entry,
                  guint            column,
                  GError         **error)
{
  QStoreDatabase *database = entry->database;
  QStoreColumn *col = qstore_vtab_schema_column (entry->schema, column);
  sqlite3_stmt *stmt = g_ptr_array_index (entry->default_stmts, column);
  sqlite3_value *value;
  int rc;

  if (stmt == NULL)
    {
      g_autofree char *sql = g_strdup_printf ("SELECT %s", col->default_sql);

      rc = sqlite3_prepare_v2 (database->scratch, sql, -1, &stmt, NULL);
      if (rc != SQLITE_OK)
        {
          g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                       _("The DEFAULT of column “%s” of table “%s” cannot be evaluated: %s"),
                       col->name, entry->schema->name, sqlite3_errmsg (database->scratch));
          return NULL;
        }
      g_ptr_array_index (entry->default_stmts, column) = stmt;
    }

  rc = sqlite3_step (stmt);
  if (rc != SQLITE_ROW)
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                   _("The DEFAULT of column “%s” of table “%s” cannot be evaluated: %s"),
                   col->name, entry->schema->name, sqlite3_errmsg (database->scratch));
      sqlite3_reset (stmt);
      return NULL;
    }
  value = sqlite3_value_dup (sqlite3_column_value (stmt, 0));
  sqlite3_reset (stmt);
  return value;
}

static void
values_free (sqlite3_value **copies,
             guint           n)
{
  for (guint i = 0; i < n; i++)
    sqlite3_value_free (copies[i]);
  g_free (copies);
}

static gboolean
mismatch (QStoreTableSchema  *schema,
          GError            **error)
{
  if (schema->rowid_column < 0)
    g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                 "datatype mismatch: the rowid of table “%s” takes integers only",
                 schema->name);
  else
    g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                 "datatype mismatch: column “%s” of table “%s” is an INTEGER PRIMARY KEY "
                 "and takes integers only",
                 qstore_vtab_schema_column (schema, schema->rowid_column)->name, schema->name);
  return FALSE;
}

/* Whether applying @affinity to @value converts it in place (a number to
 * text, text to a number): SQLite's argument must stay as it is, so a
 * copy is converted instead. */
static gboolean
converts_in_place (QStoreAffinity  affinity,
                   sqlite3_value  *value)
{
  int type = sqlite3_value_type (value);

  switch (affinity)
    {
    case QSTORE_AFFINITY_TEXT:
      return type == SQLITE_INTEGER || type == SQLITE_FLOAT;
    case QSTORE_AFFINITY_NUMERIC:
    case QSTORE_AFFINITY_INTEGER:
    case QSTORE_AFFINITY_REAL:
      return type == SQLITE_TEXT;
    case QSTORE_AFFINITY_BLOB:
    default:
      return FALSE;
    }
}

/* The rowid SQLite passes apart (argv[1]), made an integer as SQLite
 * makes a rowid: FALSE for anything else, NULL included ("datatype
 * mismatch"). */
static gboolean
rowid_argument (sqlite3_value *value,
                gint64        *rowid)
{
  sqlite3_value *copy;
  gboolean ok;

  if (sqlite3_value_type (value) == SQLITE_INTEGER)
    {
      *rowid = sqlite3_value_int64 (value);
      return TRUE;
    }
  if (sqlite3_value_type (value) == SQLITE_NULL || (copy = sqlite3_value_dup (value)) == NULL)
    return FALSE;
  ok = qstore_affinity_to_integer (copy, rowid);
  sqlite3_value_free (copy);
  return ok;
}

static int
vtab_mismatch (sqlite3_vtab   *vtab,
               QStoreDatabase *database)
{
  GError *error = NULL;

  mismatch (((QStoreVtab *) vtab)->entry->schema, &error);
  qstore_vtab_fail (vtab, database, error);
  return SQLITE_MISMATCH;
}

int
qstore_vtab_update (sqlite3_vtab   *vtab,
                    int             argc,
                    sqlite3_value **argv,
                    sqlite3_int64  *rowid_out)
{
  QStoreVtab *self = (QStoreVtab *) vtab;
  QStoreSqlTable *entry = self->entry;
  QStoreDatabase *database = entry->database;
  QStoreTableSchema *schema = entry->schema;
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) old_key = NULL;
  g_autofree QStoreValue *values = NULL;
  g_autofree gboolean *omitted = NULL;
  sqlite3_value **copies;
  guint n_columns = schema->columns->len;
  gboolean keyed_by_rowid = qstore_vtab_keyed_by_rowid (schema);
  gboolean insert;
  gboolean ignored = FALSE;
  gboolean ok;
  QStoreConflict conflict;

  if (!qstore_database_check_writable (database, &error))
    return qstore_vtab_fail (vtab, database, g_steal_pointer (&error));

  if (argc == 1)
    {
      gsize key_len;
      const guint8 *key;

      if (!(old_key = key_for_rowid (entry, argv[0], &error)))
        return qstore_vtab_fail (vtab, database, g_steal_pointer (&error));
      key = g_bytes_get_data (old_key, &key_len);
      if (!qstore_table_delete_key (entry->table, key, key_len, &error))
        return qstore_vtab_fail (vtab, database, g_steal_pointer (&error));
      return SQLITE_OK;
    }

  g_assert ((guint) argc == n_columns + 2);

  insert = sqlite3_value_type (argv[0]) == SQLITE_NULL;
  if (insert)
    omitted = omitted_columns (entry);

  copies = g_new0 (sqlite3_value *, MAX (n_columns, 1));
  values = g_new0 (QStoreValue, MAX (n_columns, 1));

  for (guint i = 0; i < n_columns; i++)
    {
      QStoreColumn *column = qstore_vtab_schema_column (schema, i);
      gboolean is_rowid = (int) i == schema->rowid_column;
      sqlite3_value *value = argv[2 + i];

      /* SQLite ignores an INTEGER PRIMARY KEY's DEFAULT: left out, it is
       * a new rowid. The values point into SQLite's arguments or into
       * the copies, alive until the row is written. */
      if (omitted != NULL && omitted[i] && column->default_sql != NULL && !is_rowid)
        value = copies[i] = evaluate_default (entry, i, &error);
      else if (converts_in_place (is_rowid ? QSTORE_AFFINITY_INTEGER : column->affinity, value))
        value = copies[i] = sqlite3_value_dup (value);
      if (value == NULL)
        {
          if (error == NULL)
            g_set_error_literal (&error, QSTORE_ERROR, QSTORE_ERROR_FAILED, _("Out of memory"));
          values_free (copies, n_columns);
          return qstore_vtab_fail (vtab, database, g_steal_pointer (&error));
        }

      if (is_rowid)
        {
          gint64 id;

          if (sqlite3_value_type (value) == SQLITE_NULL)
            values[i].type = QSTORE_VALUE_NULL;
          else if (qstore_affinity_to_integer (value, &id))
            {
              values[i].type = QSTORE_VALUE_INTEGER;
              values[i].integer = id;
            }
          else
            {
              values_free (copies, n_columns);
              mismatch (schema, &error);
              qstore_vtab_fail (vtab, database, g_steal_pointer (&error));
              return SQLITE_MISMATCH;
            }
        }
      else
        {
          qstore_affinity_apply (column->affinity, value, &values[i]);
        }
    }

  conflict = conflict_for_statement (database->db);

  /* Under REPLACE, SQLite puts a NOT NULL column's DEFAULT in place of a
   * NULL (without one, the NOT NULL constraint fails as usual). */
  if (conflict == QSTORE_CONFLICT_REPLACE)
    {
      for (guint i = 0; i < n_columns; i++)
        {
          QStoreColumn *column = qstore_vtab_schema_column (schema, i);
          sqlite3_value *fallback;

          if (!column->not_null || column->default_sql == NULL ||
              values[i].type != QSTORE_VALUE_NULL || (int) i == schema->rowid_column)
            continue;
          if (!(fallback = evaluate_default (entry, i, &error)))
            {
              values_free (copies, n_columns);
              return qstore_vtab_fail (vtab, database, g_steal_pointer (&error));
            }
          sqlite3_value_free (copies[i]);
          copies[i] = fallback;
          qstore_affinity_apply (column->affinity, copies[i], &values[i]);
        }
    }

  if (insert)
    {
      gint64 rowid = 0;
      gint64 explicit_rowid = 0;
      gboolean has_rowid = FALSE;

      /* `INSERT INTO t(rowid, …)`: SQLite passes the rowid apart. A table
       * keyed by another PRIMARY KEY refuses it (QStoreTable says so). */
      if (sqlite3_value_type (argv[1]) != SQLITE_NULL)
        {
          if (keyed_by_rowid && !rowid_argument (argv[1], &explicit_rowid))
            {
              values_free (copies, n_columns);
              return vtab_mismatch (vtab, database);
            }
          has_rowid = TRUE;
        }

      ok = qstore_table_insert_values_with_rowid (entry->table, values,
                                                  has_rowid ? &explicit_rowid : NULL,
                                                  conflict, &rowid, &ignored, &error);
      if (ok && !ignored)
        *rowid_out = keyed_by_rowid ? rowid : sqlite3_last_insert_rowid (database->db);
    }
  else
    {
      gint64 new_rowid = 0;
      gboolean rowid_changed = FALSE;
      gsize key_len;
      const guint8 *key;

      old_key = key_for_rowid (entry, argv[0], &error);
      ok = old_key != NULL;

      /* `UPDATE t SET rowid = …` passes the new rowid apart; anything but
       * an integer is SQLite's "datatype mismatch". */
      if (ok && !rowid_argument (argv[1], &new_rowid))
        {
          values_free (copies, n_columns);
          return vtab_mismatch (vtab, database);
        }
      rowid_changed = ok && new_rowid != sqlite3_value_int64 (argv[0]);

      if (ok)
        {
          key = g_bytes_get_data (old_key, &key_len);
          ok = qstore_table_update_values_with_rowid (entry->table, key, key_len, values,
                                                      rowid_changed ? &new_rowid : NULL,
                                                      conflict, &ignored, &error);
        }
    }

  values_free (copies, n_columns);

  if (!ok)
    return qstore_vtab_fail (vtab, database, g_steal_pointer (&error));
  /* Under OR IGNORE, SQLite takes a constraint failure as "skip the row":
   * it then counts no change and keeps last_insert_rowid(). */
  if (ignored)
    return SQLITE_CONSTRAINT;
  return SQLITE_OK;
}

