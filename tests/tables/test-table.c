/* test-table.c: table schemas read from SQLite, and tables over providers
 *
 * Run with QSTORE_TEST_PROVIDER set to a provider name (`memory`, `lmdb`,
 * `sqlite`). Schemas come from real DDL run on a private in-memory SQLite
 * connection, which also holds each table's mirror for CHECK constraints
 * and partial-index predicates.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include <qstore.h>

#include "qstore-coordinator.h"
#include "qstore-table-private.h"

#include "qstore-test-util.h"

typedef struct
{
  char              *dir;
  QStoreProvider    *provider;
  QStoreCoordinator *coordinator;
  sqlite3           *scratch;
  GPtrArray         *change_sets;
} Fixture;

static void
on_committed (QStoreCoordinator *coordinator,
              QStoreChangeSet   *change_set,
              Fixture           *f)
{
  g_ptr_array_add (f->change_sets, g_object_ref (change_set));
}

static void
fixture_setup (Fixture       *f,
               gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *uri = NULL;

  f->dir = test_make_tmp_dir ("qstore-tables-XXXXXX");
  uri = test_provider_uri (f->dir, "store");
  f->provider = qstore_provider_new_for_uri (uri, QSTORE_OPEN_NONE, &error);
  g_assert_no_error (error);
  f->coordinator = qstore_coordinator_new (f->provider, &error);
  g_assert_no_error (error);
  g_assert_cmpint (sqlite3_open (":memory:", &f->scratch), ==, SQLITE_OK);
  f->change_sets = g_ptr_array_new_with_free_func (g_object_unref);
  g_signal_connect (f->coordinator, "committed", G_CALLBACK (on_committed), f);
}

static void
fixture_teardown (Fixture       *f,
                  gconstpointer  data)
{
  if (f->coordinator != NULL)
    g_signal_handlers_disconnect_by_data (f->coordinator, f);
  g_clear_object (&f->coordinator);
  g_clear_object (&f->provider);
  g_clear_pointer (&f->change_sets, g_ptr_array_unref);
  sqlite3_close (f->scratch);
  test_remove_tree (f->dir);
  g_free (f->dir);
}

/* Schemas and tables */

static void
scratch_exec (sqlite3    *db,
              const char *sql)
{
  char *message = NULL;

  if (sqlite3_exec (db, sql, NULL, NULL, &message) != SQLITE_OK)
    g_error ("DDL failed: %s\n%s", message, sql);
}

static QStoreTableSchema *
schema_for (sqlite3    *db,
            const char *ddl,
            const char *table)
{
  g_autoptr(GError) error = NULL;
  QStoreTableSchema *schema;

  if (ddl != NULL)
    scratch_exec (db, ddl);
  schema = qstore_table_schema_from_sqlite (db, "main", table, &error);
  g_assert_no_error (error);
  g_assert_nonnull (schema);
  return schema;
}

static QStoreTable *
table_for (Fixture    *f,
           const char *ddl,
           const char *name)
{
  g_autoptr(QStoreTableSchema) schema = schema_for (f->scratch, ddl, name);
  g_autoptr(GError) error = NULL;
  QStoreTable *table;

  table = qstore_table_new (f->coordinator, schema, f->scratch, &error);
  g_assert_no_error (error);
  g_assert_nonnull (table);
  return table;
}

static const QStoreColumn *
column (QStoreTableSchema *schema,
        guint              i)
{
  g_assert_cmpuint (i, <, schema->columns->len);
  return g_ptr_array_index (schema->columns, i);
}

static const QStoreIndexSchema *
find_index (QStoreTableSchema *schema,
            const char        *name,
            int               *position)
{
  for (guint i = 0; i < schema->indexes->len; i++)
    {
      const QStoreIndexSchema *index = g_ptr_array_index (schema->indexes, i);

      if (g_str_equal (index->name, name))
        {
          if (position != NULL)
            *position = i;
          return index;
        }
    }
  g_error ("no index %s", name);
  return NULL;
}

static void
assert_part (GArray          *parts,
             guint            i,
             guint            column,
             QStoreCollation  collation,
             gboolean         descending)
{
  const QStoreKeyPart *part;

  g_assert_cmpuint (i, <, parts->len);
  part = &g_array_index (parts, QStoreKeyPart, i);
  g_assert_cmpuint (part->column, ==, column);
  g_assert_cmpint (part->collation, ==, collation);
  g_assert_cmpint (part->descending, ==, descending);
}

/* Values */

static QStoreValue
v_int (gint64 i)
{
  QStoreValue v = { .type = QSTORE_VALUE_INTEGER, .integer = i };
  return v;
}

static QStoreValue
v_real (double d)
{
  QStoreValue v = { .type = QSTORE_VALUE_REAL, .real = d };
  return v;
}

static QStoreValue
v_text (const char *s)
{
  QStoreValue v = { .type = QSTORE_VALUE_TEXT };

  v.bytes.data = (const guint8 *) s;
  v.bytes.len = strlen (s);
  return v;
}

static QStoreValue
v_null (void)
{
  QStoreValue v = { .type = QSTORE_VALUE_NULL };
  return v;
}

/* Inserts @values and expects success; returns the rowid. */
static gint64
insert_ok (QStoreTable    *table,
           QStoreValue    *values,
           QStoreConflict  conflict)
{
  g_autoptr(GError) error = NULL;
  gboolean ignored = TRUE;
  gint64 rowid = -12345;

  g_assert_true (qstore_table_insert_values (table, values, conflict, &rowid,
                                             &ignored, &error));
  g_assert_no_error (error);
  g_assert_false (ignored);
  return rowid;
}

static void
insert_fails (QStoreTable    *table,
              QStoreValue    *values,
              QStoreConflict  conflict,
              const char     *message)
{
  g_autoptr(GError) error = NULL;
  gboolean ignored = TRUE;

  g_assert_false (qstore_table_insert_values (table, values, conflict, NULL,
                                              &ignored, &error));
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_CONSTRAINT);
  g_assert_cmpstr (error->message, ==, message);
}

static void
insert_ignored (QStoreTable *table,
                QStoreValue *values)
{
  g_autoptr(GError) error = NULL;
  gboolean ignored = FALSE;

  g_assert_true (qstore_table_insert_values (table, values, QSTORE_CONFLICT_IGNORE,
                                             NULL, &ignored, &error));
  g_assert_no_error (error);
  g_assert_true (ignored);
}

static GByteArray *
key_of (QStoreTable *table,
        QStoreValue *values)
{
  g_autoptr(GError) error = NULL;
  GByteArray *key = g_byte_array_new ();

  g_assert_true (qstore_table_encode_key (table, values, key, &error));
  g_assert_no_error (error);
  return key;
}

static void
commit (Fixture *f)
{
  g_autoptr(GError) error = NULL;

  g_assert_true (qstore_coordinator_commit (f->coordinator, &error));
  g_assert_no_error (error);
  g_assert_false (qstore_coordinator_in_transaction (f->coordinator));
}

/* The row under @key (a GVariant key) printed, or "none". */
static char *
row_text (QStoreTable *table,
          GVariant    *key)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) row = qstore_table_get (table, key, &error);

  g_assert_no_error (error);
  if (row == NULL)
    return g_strdup ("none");
  return g_variant_print (row, TRUE);
}

#define assert_row(table, key, expected) \
  G_STMT_START { \
    g_autofree char *_text = row_text ((table), (key)); \
    g_assert_cmpstr (_text, ==, (expected)); \
  } G_STMT_END

/* Every row printed in key order, joined with " ". */
static char *
all_rows (QStoreTable *table)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) rows = qstore_table_select_range (table, NULL, NULL, FALSE, -1, &error);
  g_autoptr(GString) out = g_string_new (NULL);

  g_assert_no_error (error);
  for (guint i = 0; i < rows->len; i++)
    {
      g_autofree char *text = g_variant_print (g_ptr_array_index (rows, i), FALSE);

      g_string_append_printf (out, "%s%s", i > 0 ? " " : "", text);
    }
  return g_string_free (g_steal_pointer (&out), FALSE);
}

#define assert_rows(table, expected) \
  G_STMT_START { \
    g_autofree char *_text = all_rows (table); \
    g_assert_cmpstr (_text, ==, (expected)); \
  } G_STMT_END

/* Consistency of the data and index stores, read merged through the
 * coordinator or, with @committed, straight from the provider. Every index
 * entry must name an existing row and be exactly that row's key; a full
 * index holds one entry per row. Returns the entries of each index. */
static GArray *
check_consistency (QStoreTable *table,
                   gboolean     committed)
{
  QStoreTableSchema *schema = qstore_table_get_table_schema (table);
  g_autoptr(QStoreBounds) bounds = qstore_bounds_new ();
  g_autoptr(QStoreIter) iter = NULL;
  g_autoptr(GError) error = NULL;
  GArray *counts = g_array_new (FALSE, TRUE, sizeof (guint));
  QStoreKV *data = qstore_table_get_data_store (table);
  guint n_rows = 0;

  iter = committed ? qstore_kv_iterate (data, bounds, &error)
                   : qstore_table_scan (table, bounds, &error);
  g_assert_no_error (error);
  while (qstore_iter_next (iter, &error))
    n_rows++;
  g_assert_no_error (error);
  g_clear_object (&iter);

  if (committed)
    g_assert_cmpint (qstore_table_get_row_count (table), ==, n_rows);

  for (guint i = 0; i < schema->indexes->len; i++)
    {
      const QStoreIndexSchema *index = g_ptr_array_index (schema->indexes, i);
      QStoreKV *store = qstore_table_get_index_store (table, i);
      guint n_entries = 0;

      iter = committed ? qstore_kv_iterate (store, bounds, &error)
                       : qstore_table_scan_index (table, i, bounds, &error);
      g_assert_no_error (error);
      while (qstore_iter_next (iter, &error))
        {
          g_autoptr(GBytes) key = qstore_iter_get_key (iter);
          g_autoptr(GBytes) data_key = qstore_iter_get_value (iter);
          g_autoptr(GBytes) row = NULL;
          g_autoptr(GVariant) values = NULL;
          g_autoptr(GByteArray) expected = g_byte_array_new ();

          row = committed ? qstore_kv_get (data, g_bytes_get_data (data_key, NULL),
                                           g_bytes_get_size (data_key), &error)
                          : qstore_table_get_row (table, g_bytes_get_data (data_key, NULL),
                                                  g_bytes_get_size (data_key), &error);
          g_assert_no_error (error);
          g_assert_nonnull (row);

          values = qstore_codec_decode_row (row, &error);
          g_assert_no_error (error);
          for (guint p = 0; p < index->parts->len; p++)
            {
              const QStoreKeyPart *part = &g_array_index (index->parts, QStoreKeyPart, p);
              g_autoptr(GVariant) value = g_variant_get_child_value (values, part->column);

              g_assert_true (qstore_codec_append_value (expected, value, part->collation,
                                                        part->descending, &error));
              g_assert_no_error (error);
            }
          g_byte_array_append (expected, g_bytes_get_data (data_key, NULL),
                               g_bytes_get_size (data_key));
          g_assert_cmpmem (expected->data, expected->len,
                           g_bytes_get_data (key, NULL), g_bytes_get_size (key));
          n_entries++;
        }
      g_assert_no_error (error);
      g_clear_object (&iter);

      if (index->where_sql == NULL)
        g_assert_cmpuint (n_entries, ==, n_rows);
      g_array_append_val (counts, n_entries);
    }

  return counts;
}

static guint
index_entries (QStoreTable *table,
               gboolean     committed,
               const char  *name)
{
  g_autoptr(GArray) counts = check_consistency (table, committed);
  int position = -1;

  find_index (qstore_table_get_table_schema (table), name, &position);
  return g_array_index (counts, guint, position);
}

/* The values of index @name's entries, in index order, as the first
 * column of each row printed. */
static char *
index_order (QStoreTable *table,
             const char  *name)
{
  g_autoptr(QStoreIter) iter = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GString) out = g_string_new (NULL);
  int position = -1;

  find_index (qstore_table_get_table_schema (table), name, &position);
  iter = qstore_table_scan_index (table, position, NULL, &error);
  g_assert_no_error (error);
  while (qstore_iter_next (iter, &error))
    {
      gsize len;
      const guint8 *data_key = qstore_iter_peek_value (iter, &len);
      g_autoptr(GBytes) row = qstore_table_get_row (table, data_key, len, &error);
      g_autoptr(GVariant) values = NULL;
      g_autoptr(GVariant) first = NULL;
      g_autoptr(GVariant) inner = NULL;
      g_autofree char *text = NULL;

      g_assert_no_error (error);
      values = qstore_codec_decode_row (row, &error);
      g_assert_no_error (error);
      first = g_variant_get_child_value (values, 0);
      inner = g_variant_get_variant (first);
      text = g_variant_print (inner, FALSE);
      g_string_append_printf (out, "%s%s", out->len > 0 ? " " : "", text);
    }
  g_assert_no_error (error);
  return g_string_free (g_steal_pointer (&out), FALSE);
}

#define assert_index_order(table, name, expected) \
  G_STMT_START { \
    g_autofree char *_text = index_order ((table), (name)); \
    g_assert_cmpstr (_text, ==, (expected)); \
  } G_STMT_END

/* Schema reading */

static void
test_schema_columns (void)
{
  sqlite3 *db = NULL;
  g_autoptr(QStoreTableSchema) schema = NULL;
  static const struct { const char *name; const char *type; QStoreAffinity affinity; } expected[] = {
    { "a", "INTEGER", QSTORE_AFFINITY_INTEGER },
    { "b", "VARCHAR(10)", QSTORE_AFFINITY_TEXT },
    { "c", "BLOB", QSTORE_AFFINITY_BLOB },
    { "d", "REAL", QSTORE_AFFINITY_REAL },
    { "e", "", QSTORE_AFFINITY_BLOB },
    { "f", "DECIMAL(10,2)", QSTORE_AFFINITY_NUMERIC },
    { "g", "FLOATING POINT", QSTORE_AFFINITY_INTEGER },
    { "h", "STRING", QSTORE_AFFINITY_NUMERIC },
    { "i", "TEXT", QSTORE_AFFINITY_TEXT },
    { "j", "DOUBLE PRECISION", QSTORE_AFFINITY_REAL },
    { "k", "CLOB", QSTORE_AFFINITY_TEXT },
    { "Mixed Case", "nvarchar", QSTORE_AFFINITY_TEXT },
  };

  g_assert_cmpint (sqlite3_open (":memory:", &db), ==, SQLITE_OK);
  schema = schema_for (db,
                       "CREATE TABLE t(a INTEGER, b VARCHAR(10) NOT NULL DEFAULT 'x', "
                       "c BLOB, d REAL COLLATE NOCASE, e, f DECIMAL(10,2), "
                       "g FLOATING POINT, h STRING, i TEXT COLLATE rtrim DEFAULT (1+2), "
                       "j DOUBLE PRECISION DEFAULT -1.5, k CLOB NOT NULL, "
                       "\"Mixed Case\" nvarchar)",
                       "T");

  g_assert_cmpstr (schema->schema, ==, "main");
  g_assert_cmpstr (schema->name, ==, "t");
  g_assert_true (g_str_has_prefix (schema->sql, "CREATE TABLE t(a INTEGER"));
  g_assert_cmpuint (schema->columns->len, ==, G_N_ELEMENTS (expected));
  for (guint i = 0; i < G_N_ELEMENTS (expected); i++)
    {
      g_assert_cmpstr (column (schema, i)->name, ==, expected[i].name);
      g_assert_cmpstr (column (schema, i)->decl_type, ==, expected[i].type);
      g_assert_cmpint (column (schema, i)->affinity, ==, expected[i].affinity);
      g_assert_cmpint (qstore_affinity_from_decl_type (expected[i].type), ==,
                       expected[i].affinity);
    }

  g_assert_cmpint (column (schema, 0)->collation, ==, QSTORE_COLLATION_BINARY);
  g_assert_cmpint (column (schema, 3)->collation, ==, QSTORE_COLLATION_NOCASE);
  g_assert_cmpint (column (schema, 8)->collation, ==, QSTORE_COLLATION_RTRIM);

  g_assert_true (column (schema, 1)->not_null);
  g_assert_true (column (schema, 10)->not_null);
  g_assert_false (column (schema, 0)->not_null);

  g_assert_cmpstr (column (schema, 1)->default_sql, ==, "'x'");
  g_assert_cmpstr (column (schema, 8)->default_sql, ==, "1+2");
  g_assert_cmpstr (column (schema, 9)->default_sql, ==, "-1.5");
  g_assert_null (column (schema, 0)->default_sql);

  g_assert_cmpint (qstore_table_schema_find_column (schema, "MIXED case"), ==, 11);
  g_assert_cmpint (qstore_table_schema_find_column (schema, "D"), ==, 3);
  g_assert_cmpint (qstore_table_schema_find_column (schema, "zz"), ==, -1);

  /* More of SQLite's rules, in their order of precedence. */
  g_assert_cmpint (qstore_affinity_from_decl_type (NULL), ==, QSTORE_AFFINITY_BLOB);
  g_assert_cmpint (qstore_affinity_from_decl_type ("CHARINT"), ==, QSTORE_AFFINITY_INTEGER);
  g_assert_cmpint (qstore_affinity_from_decl_type ("blobtext"), ==, QSTORE_AFFINITY_TEXT);
  g_assert_cmpint (qstore_affinity_from_decl_type ("floatblob"), ==, QSTORE_AFFINITY_BLOB);
  g_assert_cmpint (qstore_affinity_from_decl_type ("float"), ==, QSTORE_AFFINITY_REAL);
  g_assert_cmpint (qstore_affinity_from_decl_type ("boolean"), ==, QSTORE_AFFINITY_NUMERIC);
  g_assert_cmpint (qstore_affinity_from_decl_type ("datetime"), ==, QSTORE_AFFINITY_NUMERIC);

  /* No primary key: a rowid table. */
  g_assert_true (qstore_table_schema_is_rowid_table (schema));
  g_assert_cmpint (schema->rowid_column, ==, -1);
  g_assert_cmpuint (schema->indexes->len, ==, 0);
  g_assert_cmpuint (schema->checks->len, ==, 0);

  g_clear_pointer (&schema, qstore_table_schema_unref);
  sqlite3_close (db);
}

static void
test_schema_primary_keys (void)
{
  sqlite3 *db = NULL;
  g_autoptr(QStoreTableSchema) schema = NULL;

  g_assert_cmpint (sqlite3_open (":memory:", &db), ==, SQLITE_OK);

  /* Composite, DESC, with a column collation and a PK-clause one. */
  schema = schema_for (db, "CREATE TABLE c(a TEXT COLLATE NOCASE, b INT, "
                           "c TEXT, PRIMARY KEY(b DESC, a, c COLLATE RTRIM))", "c");
  g_assert_false (qstore_table_schema_is_rowid_table (schema));
  g_assert_cmpint (schema->rowid_column, ==, -1);
  g_assert_cmpuint (schema->pk->len, ==, 3);
  assert_part (schema->pk, 0, 1, QSTORE_COLLATION_BINARY, TRUE);
  assert_part (schema->pk, 1, 0, QSTORE_COLLATION_NOCASE, FALSE);
  assert_part (schema->pk, 2, 2, QSTORE_COLLATION_RTRIM, FALSE);
  /* The PK's autoindex is not one of the table's indexes. */
  g_assert_cmpuint (schema->indexes->len, ==, 0);
  g_clear_pointer (&schema, qstore_table_schema_unref);

  /* INTEGER PRIMARY KEY aliases the rowid... */
  schema = schema_for (db, "CREATE TABLE r1(x TEXT, id integer PRIMARY KEY)", "r1");
  g_assert_true (qstore_table_schema_is_rowid_table (schema));
  g_assert_cmpint (schema->rowid_column, ==, 1);
  g_assert_cmpuint (schema->pk->len, ==, 0);
  g_clear_pointer (&schema, qstore_table_schema_unref);

  /* ...also as a table constraint, DESC there included... */
  schema = schema_for (db, "CREATE TABLE r2(id INTEGER, x, PRIMARY KEY(id DESC))", "r2");
  g_assert_true (qstore_table_schema_is_rowid_table (schema));
  g_assert_cmpint (schema->rowid_column, ==, 0);
  g_clear_pointer (&schema, qstore_table_schema_unref);

  /* ...but not as `INTEGER PRIMARY KEY DESC` on the column (SQLite's
   * quirk), nor with another spelling of the type. */
  schema = schema_for (db, "CREATE TABLE r3(id INTEGER PRIMARY KEY DESC, x)", "r3");
  g_assert_false (qstore_table_schema_is_rowid_table (schema));
  g_assert_cmpint (schema->rowid_column, ==, -1);
  g_assert_cmpuint (schema->pk->len, ==, 1);
  assert_part (schema->pk, 0, 0, QSTORE_COLLATION_BINARY, TRUE);
  g_clear_pointer (&schema, qstore_table_schema_unref);

  schema = schema_for (db, "CREATE TABLE r4(id INT PRIMARY KEY, x)", "r4");
  g_assert_false (qstore_table_schema_is_rowid_table (schema));
  assert_part (schema->pk, 0, 0, QSTORE_COLLATION_BINARY, FALSE);
  g_clear_pointer (&schema, qstore_table_schema_unref);

  schema = schema_for (db, "CREATE TABLE r5(id INTEGER, x, PRIMARY KEY(id, x))", "r5");
  g_assert_false (qstore_table_schema_is_rowid_table (schema));
  g_assert_cmpuint (schema->pk->len, ==, 2);
  g_clear_pointer (&schema, qstore_table_schema_unref);

  /* WITHOUT ROWID: the PK, never a rowid alias. */
  schema = schema_for (db, "CREATE TABLE w(id INTEGER PRIMARY KEY, x) WITHOUT ROWID", "w");
  g_assert_false (qstore_table_schema_is_rowid_table (schema));
  g_assert_cmpint (schema->rowid_column, ==, -1);
  g_assert_cmpuint (schema->pk->len, ==, 1);
  assert_part (schema->pk, 0, 0, QSTORE_COLLATION_BINARY, FALSE);
  g_assert_true (column (schema, 0)->not_null);
  g_clear_pointer (&schema, qstore_table_schema_unref);

  sqlite3_close (db);
}

static void
test_schema_indexes (void)
{
  sqlite3 *db = NULL;
  g_autoptr(QStoreTableSchema) schema = NULL;
  const QStoreIndexSchema *index;
  int position;

  g_assert_cmpint (sqlite3_open (":memory:", &db), ==, SQLITE_OK);
  schema = schema_for (db,
                       "CREATE TABLE t(id INTEGER PRIMARY KEY, a TEXT UNIQUE, "
                       "b INT, \"where\" TEXT COLLATE NOCASE, "
                       "UNIQUE(b COLLATE NOCASE, a DESC));"
                       "CREATE INDEX zeta ON t(b DESC, a COLLATE NOCASE);"
                       "create unique index if not exists alpha on t(\"where\") "
                       "  where (a is not null);"
                       "CREATE INDEX mid ON t(a) WHERE a <> 'where (' AND \"where\" > 0 "
                       "  AND (b > 1 OR b < -1) -- where\n;",
                       "t");

  g_assert_cmpuint (schema->indexes->len, ==, 5);

  /* UNIQUE constraints first, in their order, then by name. */
  index = g_ptr_array_index (schema->indexes, 0);
  g_assert_cmpstr (index->name, ==, "sqlite_autoindex_t_1");
  g_assert_true (index->unique);
  g_assert_true (index->from_constraint);
  g_assert_null (index->sql);
  g_assert_null (index->where_sql);
  g_assert_cmpuint (index->parts->len, ==, 1);
  assert_part (index->parts, 0, 1, QSTORE_COLLATION_BINARY, FALSE);

  index = g_ptr_array_index (schema->indexes, 1);
  g_assert_cmpstr (index->name, ==, "sqlite_autoindex_t_2");
  g_assert_true (index->unique);
  g_assert_true (index->from_constraint);
  g_assert_cmpuint (index->parts->len, ==, 2);
  assert_part (index->parts, 0, 2, QSTORE_COLLATION_NOCASE, FALSE);
  assert_part (index->parts, 1, 1, QSTORE_COLLATION_BINARY, TRUE);

  index = find_index (schema, "alpha", &position);
  g_assert_cmpint (position, ==, 2);
  g_assert_true (index->unique);
  g_assert_false (index->from_constraint);
  g_assert_cmpstr (index->sql, ==, "CREATE UNIQUE INDEX alpha on t(\"where\")   "
                                   "where (a is not null)");
  g_assert_cmpstr (index->where_sql, ==, "(a is not null)");
  /* The column's own collation carries over. */
  assert_part (index->parts, 0, 3, QSTORE_COLLATION_NOCASE, FALSE);

  index = find_index (schema, "mid", &position);
  g_assert_cmpint (position, ==, 3);
  g_assert_false (index->unique);
  g_assert_cmpstr (index->where_sql, ==,
                   "a <> 'where (' AND \"where\" > 0   AND (b > 1 OR b < -1)");

  index = find_index (schema, "zeta", &position);
  g_assert_cmpint (position, ==, 4);
  g_assert_false (index->unique);
  g_assert_null (index->where_sql);
  g_assert_cmpuint (index->parts->len, ==, 2);
  assert_part (index->parts, 0, 2, QSTORE_COLLATION_BINARY, TRUE);
  assert_part (index->parts, 1, 1, QSTORE_COLLATION_NOCASE, FALSE);

  g_clear_pointer (&schema, qstore_table_schema_unref);
  sqlite3_close (db);
}

static void
test_schema_constraints (void)
{
  sqlite3 *db = NULL;
  g_autoptr(QStoreTableSchema) schema = NULL;
  const QStoreCheck *check;
  const QStoreForeignKey *fk;

  g_assert_cmpint (sqlite3_open (":memory:", &db), ==, SQLITE_OK);
  schema = schema_for (db,
                       "CREATE TABLE p(id INTEGER PRIMARY KEY, x, y, UNIQUE(x, y));"
                       "CREATE TABLE c(a INT CHECK (a > 0), b TEXT DEFAULT 'check (no)', "
                       "  pid REFERENCES p ON DELETE CASCADE, "
                       "  \"check\" INT, "
                       "  CONSTRAINT \"b len\" CHECK (length(b) < (5)), "
                       "  FOREIGN KEY(a, b) REFERENCES p(x, y) ON UPDATE SET NULL)",
                       "c");

  g_assert_cmpuint (schema->checks->len, ==, 2);
  check = g_ptr_array_index (schema->checks, 0);
  g_assert_null (check->name);
  g_assert_cmpstr (check->expr_sql, ==, "a > 0");
  check = g_ptr_array_index (schema->checks, 1);
  g_assert_cmpstr (check->name, ==, "b len");
  g_assert_cmpstr (check->expr_sql, ==, "length(b) < (5)");

  g_assert_cmpuint (schema->foreign_keys->len, ==, 2);
  for (guint i = 0; i < schema->foreign_keys->len; i++)
    {
      fk = g_ptr_array_index (schema->foreign_keys, i);
      g_assert_cmpstr (fk->table, ==, "p");
      if (fk->from_columns->len == 1)
        {
          g_assert_cmpuint (g_array_index (fk->from_columns, guint, 0), ==, 2);
          g_assert_cmpuint (fk->to_columns->len, ==, 0);
          g_assert_cmpstr (fk->on_delete, ==, "CASCADE");
          g_assert_cmpstr (fk->on_update, ==, "NO ACTION");
        }
      else
        {
          g_assert_cmpuint (fk->from_columns->len, ==, 2);
          g_assert_cmpuint (g_array_index (fk->from_columns, guint, 0), ==, 0);
          g_assert_cmpuint (g_array_index (fk->from_columns, guint, 1), ==, 1);
          g_assert_cmpuint (fk->to_columns->len, ==, 2);
          g_assert_cmpstr (g_ptr_array_index (fk->to_columns, 0), ==, "x");
          g_assert_cmpstr (g_ptr_array_index (fk->to_columns, 1), ==, "y");
          g_assert_cmpstr (fk->on_update, ==, "SET NULL");
          g_assert_cmpstr (fk->on_delete, ==, "NO ACTION");
        }
    }

  g_clear_pointer (&schema, qstore_table_schema_unref);
  sqlite3_close (db);
}

static int
reverse_collation (void       *data,
                   int         a_len,
                   const void *a,
                   int         b_len,
                   const void *b)
{
  return -memcmp (a, b, MIN (a_len, b_len));
}

static void
test_schema_refused (void)
{
  sqlite3 *db = NULL;
  g_autoptr(GError) error = NULL;
  QStoreTableSchema *schema;

  g_assert_cmpint (sqlite3_open (":memory:", &db), ==, SQLITE_OK);
  sqlite3_create_collation (db, "REVERSE", SQLITE_UTF8, NULL, reverse_collation);
  scratch_exec (db,
                "CREATE TABLE coll(a TEXT COLLATE REVERSE);"
                "CREATE TABLE expr(a TEXT); CREATE INDEX expr_i ON expr(lower(a));"
                "CREATE TABLE gen(a INT, b INT AS (a * 2));");

  schema = qstore_table_schema_from_sqlite (db, "main", "coll", &error);
  g_assert_null (schema);
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_UNSUPPORTED);
  g_assert_nonnull (strstr (error->message, "REVERSE"));
  g_clear_error (&error);

  schema = qstore_table_schema_from_sqlite (db, "main", "expr", &error);
  g_assert_null (schema);
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_UNSUPPORTED);
  g_assert_nonnull (strstr (error->message, "expr_i"));
  g_clear_error (&error);

  schema = qstore_table_schema_from_sqlite (db, "main", "gen", &error);
  g_assert_null (schema);
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_UNSUPPORTED);
  g_clear_error (&error);

  schema = qstore_table_schema_from_sqlite (db, "main", "nope", &error);
  g_assert_null (schema);
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_NOT_FOUND);
  g_clear_error (&error);

  sqlite3_close (db);
}

static void
test_schema_bundle (void)
{
  static const char *ddl[] = {
    "CREATE TABLE b(id INTEGER PRIMARY KEY, x TEXT UNIQUE, y INT)",
    "CREATE INDEX b_y ON b(y DESC)",
    "CREATE UNIQUE INDEX a_first ON b(y, x COLLATE NOCASE) WHERE y > 0",
  };
  static const char *expected =
    "CREATE TABLE b(id INTEGER PRIMARY KEY, x TEXT UNIQUE, y INT);\n"
    "CREATE UNIQUE INDEX a_first ON b(y, x COLLATE NOCASE) WHERE y > 0;\n"
    "CREATE INDEX b_y ON b(y DESC);\n";
  sqlite3 *one = NULL;
  sqlite3 *two = NULL;
  sqlite3 *three = NULL;
  g_autoptr(QStoreTableSchema) first = NULL;
  g_autoptr(QStoreTableSchema) second = NULL;
  g_autoptr(QStoreTableSchema) third = NULL;
  g_autofree char *bundle_one = NULL;
  g_autofree char *bundle_two = NULL;
  g_autofree char *bundle_three = NULL;

  /* The same schema made in two orders bundles the same way. */
  g_assert_cmpint (sqlite3_open (":memory:", &one), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_open (":memory:", &two), ==, SQLITE_OK);
  for (guint i = 0; i < G_N_ELEMENTS (ddl); i++)
    scratch_exec (one, ddl[i]);
  scratch_exec (two, ddl[0]);
  scratch_exec (two, ddl[2]);
  scratch_exec (two, ddl[1]);

  first = schema_for (one, NULL, "b");
  second = schema_for (two, NULL, "b");
  bundle_one = qstore_table_schema_to_bundle (first);
  bundle_two = qstore_table_schema_to_bundle (second);
  g_assert_cmpstr (bundle_one, ==, expected);
  g_assert_cmpstr (bundle_two, ==, expected);

  /* Running the bundle gives the schema, and the bundle, back. */
  g_assert_cmpint (sqlite3_open (":memory:", &three), ==, SQLITE_OK);
  third = schema_for (three, bundle_one, "b");
  bundle_three = qstore_table_schema_to_bundle (third);
  g_assert_cmpstr (bundle_three, ==, expected);
  g_assert_cmpuint (third->indexes->len, ==, 3);
  g_assert_cmpstr (((QStoreIndexSchema *) g_ptr_array_index (third->indexes, 0))->name,
                   ==, "sqlite_autoindex_b_1");

  g_clear_pointer (&first, qstore_table_schema_unref);
  g_clear_pointer (&second, qstore_table_schema_unref);
  g_clear_pointer (&third, qstore_table_schema_unref);
  sqlite3_close (one);
  sqlite3_close (two);
  sqlite3_close (three);
}

/* Tables */

static const char people_ddl[] =
  "CREATE TABLE people(id INTEGER PRIMARY KEY, name TEXT COLLATE NOCASE, "
  "  score INT, tag TEXT);"
  "CREATE INDEX people_score ON people(score DESC, name);"
  "CREATE INDEX people_tag ON people(tag) WHERE tag IS NOT NULL;";

static void
test_table_basics (Fixture       *f,
                   gconstpointer  data)
{
  g_autoptr(QStoreTable) table = table_for (f, people_ddl, "people");
  g_autoptr(GError) error = NULL;
  g_auto(GStrv) indexes = qstore_table_list_indexes (table);
  QStoreValue row[4];
  g_autoptr(GByteArray) key = NULL;
  g_autoptr(GBytes) stored = NULL;
  QStoreValue decoded[4];
  g_autoptr(GArray) counts = NULL;
  gint64 rowid = 0;

  g_assert_cmpstr (qstore_table_get_name (table), ==, "people");
  g_assert_cmpstr (qstore_table_get_schema_name (table), ==, "main");
  g_assert_true (g_str_has_prefix (qstore_table_get_sql (table), "CREATE TABLE people("));
  g_assert_cmpuint (qstore_table_get_n_columns (table), ==, 4);
  g_assert_cmpstr (qstore_table_get_column_name (table, 2), ==, "score");
  g_assert_null (qstore_table_get_column_name (table, 4));
  g_assert_cmpuint (g_strv_length (indexes), ==, 2);
  g_assert_cmpstr (indexes[0], ==, "people_score");
  g_assert_cmpstr (indexes[1], ==, "people_tag");
  g_assert_true (qstore_table_get_coordinator (table) == f->coordinator);
  g_assert_cmpstr (qstore_kv_get_name (qstore_table_get_data_store (table)), ==, "main.people");
  g_assert_cmpstr (qstore_kv_get_name (qstore_table_get_index_store (table, 1)), ==,
                   "main.people_idx_people_tag");

  qstore_coordinator_begin (f->coordinator);
  row[0] = v_null (); row[1] = v_text ("Carol"); row[2] = v_int (7); row[3] = v_text ("x");
  g_assert_cmpint (insert_ok (table, row, QSTORE_CONFLICT_ABORT), ==, 1);
  row[0] = v_null (); row[1] = v_text ("alice"); row[2] = v_int (9); row[3] = v_null ();
  g_assert_cmpint (insert_ok (table, row, QSTORE_CONFLICT_ABORT), ==, 2);
  row[0] = v_int (10); row[1] = v_text ("Bob"); row[2] = v_int (7); row[3] = v_text ("y");
  g_assert_cmpint (insert_ok (table, row, QSTORE_CONFLICT_ABORT), ==, 10);
  row[0] = v_null (); row[1] = v_text ("dave"); row[2] = v_real (7.5); row[3] = v_null ();
  g_assert_cmpint (insert_ok (table, row, QSTORE_CONFLICT_ABORT), ==, 11);

  /* Reads see the open transaction. */
  g_assert_cmpint (qstore_table_get_row_count (table), ==, 4);
  assert_row (table, g_variant_new_int64 (10), "(<int64 10>, <'Bob'>, <int64 7>, <'y'>)");
  assert_row (table, g_variant_new_parsed ("(int64 11,)"),
              "(<int64 11>, <'dave'>, <7.5>, <@mv nothing>)");
  assert_row (table, g_variant_new_int64 (3), "none");
  g_assert_cmpuint (index_entries (table, FALSE, "people_tag"), ==, 2);
  /* score DESC, then name under its column's NOCASE: 7 'Bob', 7 'Carol'. */
  assert_index_order (table, "people_score", "2 11 10 1");
  assert_index_order (table, "people_tag", "1 10");

  /* decode_row and encode_key agree with the stored row. */
  row[0] = v_int (10);
  key = key_of (table, row);
  stored = qstore_table_get_row (table, key->data, key->len, &error);
  g_assert_no_error (error);
  g_assert_nonnull (stored);
  g_assert_true (qstore_table_decode_row (table, g_bytes_get_data (stored, NULL),
                                          g_bytes_get_size (stored), decoded, &rowid,
                                          &error));
  g_assert_no_error (error);
  g_assert_cmpint (rowid, ==, 10);
  g_assert_cmpint (decoded[1].type, ==, QSTORE_VALUE_TEXT);
  g_assert_cmpmem (decoded[1].bytes.data, decoded[1].bytes.len, "Bob", 3);

  commit (f);
  counts = check_consistency (table, TRUE);
  g_assert_cmpuint (g_array_index (counts, guint, 1), ==, 2);

  /* Update: score and tag change, the indexes follow. */
  qstore_coordinator_begin (f->coordinator);
  row[0] = v_int (1); row[1] = v_text ("Carol"); row[2] = v_int (1); row[3] = v_null ();
  {
    g_autoptr(GByteArray) old_key = key_of (table, row);
    gboolean ignored = TRUE;

    g_assert_true (qstore_table_update_values (table, old_key->data, old_key->len, row,
                                               QSTORE_CONFLICT_ABORT, &ignored, &error));
    g_assert_no_error (error);
    g_assert_false (ignored);
  }
  assert_index_order (table, "people_score", "2 11 10 1");
  assert_index_order (table, "people_tag", "10");

  /* Delete, including a row that is not there. */
  row[0] = v_int (2);
  {
    g_autoptr(GByteArray) gone = key_of (table, row);
    g_autoptr(GByteArray) never = NULL;

    g_assert_true (qstore_table_delete_key (table, gone->data, gone->len, &error));
    g_assert_no_error (error);
    row[0] = v_int (99);
    never = key_of (table, row);
    g_assert_true (qstore_table_delete_key (table, never->data, never->len, &error));
    g_assert_no_error (error);
  }
  g_assert_cmpint (qstore_table_get_row_count (table), ==, 3);
  assert_index_order (table, "people_score", "11 10 1");
  g_clear_pointer (&counts, g_array_unref);
  counts = check_consistency (table, FALSE);
  commit (f);
  g_clear_pointer (&counts, g_array_unref);
  counts = check_consistency (table, TRUE);
  g_assert_cmpuint (g_array_index (counts, guint, 0), ==, 3);
  g_assert_cmpuint (g_array_index (counts, guint, 1), ==, 1);
  assert_rows (table, "(<int64 1>, <'Carol'>, <int64 1>, <@mv nothing>) "
                      "(<int64 10>, <'Bob'>, <int64 7>, <'y'>) "
                      "(<int64 11>, <'dave'>, <7.5>, <@mv nothing>)");
}

static void
update_tag (QStoreTable *table,
            gint64       id,
            const char  *tag)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) current = NULL;
  g_autoptr(GVariant) name = NULL;
  g_autoptr(GVariant) score = NULL;
  GVariant *row;

  current = qstore_table_get (table, g_variant_new_int64 (id), &error);
  g_assert_no_error (error);
  g_assert_nonnull (current);
  name = g_variant_get_child_value (current, 1);
  score = g_variant_get_child_value (current, 2);
  row = g_variant_new ("(x@v@v@v)", id, name, score,
                       g_variant_new_variant (tag ? g_variant_new_string (tag)
                                                  : qstore_value_new_null ()));
  g_assert_true (qstore_table_update (table, g_variant_new_int64 (id), row,
                                      QSTORE_CONFLICT_ABORT, &error));
  g_assert_no_error (error);
}

static void
test_table_partial_index (Fixture       *f,
                          gconstpointer  data)
{
  g_autoptr(QStoreTable) table = table_for (f, people_ddl, "people");
  g_autoptr(GError) error = NULL;

  for (gint64 id = 1; id <= 3; id++)
    {
      g_assert_true (qstore_table_insert (table,
                                          g_variant_new ("(xsxmv)", id, "n", id, NULL),
                                          QSTORE_CONFLICT_ABORT, &error));
      g_assert_no_error (error);
    }
  g_assert_cmpuint (index_entries (table, TRUE, "people_tag"), ==, 0);

  /* In, in again elsewhere, out. */
  update_tag (table, 2, "b");
  update_tag (table, 3, "a");
  g_assert_cmpuint (index_entries (table, TRUE, "people_tag"), ==, 2);
  assert_index_order (table, "people_tag", "3 2");
  update_tag (table, 2, "c");
  assert_index_order (table, "people_tag", "3 2");
  update_tag (table, 3, "d");
  assert_index_order (table, "people_tag", "2 3");
  update_tag (table, 2, NULL);
  g_assert_cmpuint (index_entries (table, TRUE, "people_tag"), ==, 1);
  assert_index_order (table, "people_tag", "3");

  /* Deleting a row outside the index leaves it alone, inside removes. */
  g_assert_true (qstore_table_delete (table, g_variant_new_int64 (2), &error));
  g_assert_no_error (error);
  g_assert_cmpuint (index_entries (table, TRUE, "people_tag"), ==, 1);
  g_assert_true (qstore_table_delete (table, g_variant_new_int64 (3), &error));
  g_assert_no_error (error);
  g_assert_cmpuint (index_entries (table, TRUE, "people_tag"), ==, 0);
  g_assert_cmpint (qstore_table_get_row_count (table), ==, 1);
}

static void
test_table_pk_change (Fixture       *f,
                      gconstpointer  data)
{
  g_autoptr(QStoreTable) table =
    table_for (f,
               "CREATE TABLE k(code TEXT PRIMARY KEY COLLATE NOCASE, v INT);"
               "CREATE INDEX k_v ON k(v);",
               "k");
  g_autoptr(GError) error = NULL;
  g_autoptr(GByteArray) before = NULL;
  g_autoptr(GByteArray) after = NULL;
  g_autoptr(GArray) counts = NULL;
  QStoreValue row[2];

  g_assert_false (qstore_table_schema_is_rowid_table (qstore_table_get_table_schema (table)));
  g_assert_true (qstore_table_insert (table, g_variant_new ("(sx)", "abc", (gint64) 1),
                                      QSTORE_CONFLICT_ABORT, &error));
  g_assert_no_error (error);
  g_assert_true (qstore_table_insert (table, g_variant_new ("(sx)", "m", (gint64) 2),
                                      QSTORE_CONFLICT_ABORT, &error));
  g_assert_no_error (error);
  g_ptr_array_set_size (f->change_sets, 0);

  /* A case-only change: the same key under NOCASE, the row stays. */
  row[0] = v_text ("abc"); row[1] = v_int (0);
  before = key_of (table, row);
  row[0] = v_text ("ABC");
  after = key_of (table, row);
  g_assert_cmpmem (before->data, before->len, after->data, after->len);

  g_assert_true (qstore_table_update (table, g_variant_new_parsed ("('aBc',)"),
                                      g_variant_new ("(sx)", "ABC", (gint64) 5),
                                      QSTORE_CONFLICT_ABORT, &error));
  g_assert_no_error (error);
  assert_row (table, g_variant_new_string ("abc"), "(<'ABC'>, <int64 5>)");
  assert_rows (table, "(<'ABC'>, <int64 5>) (<'m'>, <int64 2>)");
  g_assert_cmpuint (f->change_sets->len, ==, 1);
  {
    QStoreChangeSet *changes = g_ptr_array_index (f->change_sets, 0);
    g_autoptr(GVariant) old_row = NULL;
    g_autoptr(GVariant) new_row = NULL;
    g_autofree char *old_text = NULL;
    g_autofree char *new_text = NULL;

    g_assert_cmpuint (qstore_change_set_get_n_changes (changes), ==, 1);
    g_assert_cmpint (qstore_change_set_get_op (changes, 0), ==, QSTORE_CHANGE_UPDATE);
    old_row = qstore_change_set_get_old_row (changes, 0);
    new_row = qstore_change_set_get_new_row (changes, 0);
    old_text = g_variant_print (old_row, FALSE);
    new_text = g_variant_print (new_row, FALSE);
    g_assert_cmpstr (old_text, ==, "(<'abc'>, <int64 1>)");
    g_assert_cmpstr (new_text, ==, "(<'ABC'>, <int64 5>)");
  }

  /* A real change moves the row; its index entry follows. */
  g_assert_true (qstore_table_update (table, g_variant_new_string ("ABC"),
                                      g_variant_new ("(sx)", "zz", (gint64) 5),
                                      QSTORE_CONFLICT_ABORT, &error));
  g_assert_no_error (error);
  assert_row (table, g_variant_new_string ("abc"), "none");
  assert_rows (table, "(<'m'>, <int64 2>) (<'zz'>, <int64 5>)");
  counts = check_consistency (table, TRUE);
  g_assert_cmpuint (g_array_index (counts, guint, 0), ==, 2);
  g_assert_cmpint (qstore_table_get_row_count (table), ==, 2);

  /* Moving onto an existing key conflicts... */
  g_assert_false (qstore_table_update (table, g_variant_new_string ("zz"),
                                       g_variant_new ("(sx)", "M", (gint64) 5),
                                       QSTORE_CONFLICT_ABORT, &error));
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_CONSTRAINT);
  g_assert_cmpstr (error->message, ==, "UNIQUE constraint failed: k.code");
  g_clear_error (&error);
  g_assert_false (qstore_coordinator_in_transaction (f->coordinator));

  /* ...and with REPLACE takes its place. */
  g_assert_true (qstore_table_update (table, g_variant_new_string ("zz"),
                                      g_variant_new ("(sx)", "M", (gint64) 5),
                                      QSTORE_CONFLICT_REPLACE, &error));
  g_assert_no_error (error);
  assert_rows (table, "(<'M'>, <int64 5>)");
  g_clear_pointer (&counts, g_array_unref);
  counts = check_consistency (table, TRUE);
  g_assert_cmpint (qstore_table_get_row_count (table), ==, 1);

  /* Updating a row that is not there. */
  g_assert_false (qstore_table_update (table, g_variant_new_string ("nope"),
                                       g_variant_new ("(sx)", "nope", (gint64) 5),
                                       QSTORE_CONFLICT_ABORT, &error));
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_NOT_FOUND);
}

static const char unique_ddl[] =
  "CREATE TABLE u(id INTEGER PRIMARY KEY, email TEXT COLLATE NOCASE UNIQUE, "
  "  a INT, b INT, UNIQUE(a, b));";

static void
u_row (QStoreValue *row,
       gint64       id,
       const char  *email,
       gint64       a,
       gint64       b)
{
  row[0] = id < 0 ? v_null () : v_int (id);
  row[1] = email ? v_text (email) : v_null ();
  row[2] = a < 0 ? v_null () : v_int (a);
  row[3] = b < 0 ? v_null () : v_int (b);
}

static void
test_table_conflicts (Fixture       *f,
                      gconstpointer  data)
{
  g_autoptr(QStoreTable) table = table_for (f, unique_ddl, "u");
  g_autoptr(GError) error = NULL;
  g_autoptr(GArray) counts = NULL;
  QStoreValue row[4];
  static const QStoreConflict failing[] = {
    QSTORE_CONFLICT_ABORT, QSTORE_CONFLICT_FAIL, QSTORE_CONFLICT_ROLLBACK,
  };

  qstore_coordinator_begin (f->coordinator);
  u_row (row, 1, "Ann@x", 1, 1);
  insert_ok (table, row, QSTORE_CONFLICT_ABORT);
  u_row (row, 2, "bob@x", 1, 2);
  insert_ok (table, row, QSTORE_CONFLICT_ABORT);
  /* NULLs are distinct: in a single-column and in a composite UNIQUE. */
  u_row (row, 3, NULL, 1, -1);
  insert_ok (table, row, QSTORE_CONFLICT_ABORT);
  u_row (row, 4, NULL, 1, -1);
  insert_ok (table, row, QSTORE_CONFLICT_ABORT);
  commit (f);
  g_ptr_array_set_size (f->change_sets, 0);

  qstore_coordinator_begin (f->coordinator);
  for (guint i = 0; i < G_N_ELEMENTS (failing); i++)
    {
      u_row (row, 1, "other@x", 5, 5);
      insert_fails (table, row, failing[i], "UNIQUE constraint failed: u.id");
      /* UNIQUE under NOCASE. */
      u_row (row, 9, "ANN@X", 5, 5);
      insert_fails (table, row, failing[i], "UNIQUE constraint failed: u.email");
      u_row (row, 9, "new@x", 1, 2);
      insert_fails (table, row, failing[i], "UNIQUE constraint failed: u.a, u.b");
    }

  /* IGNORE keeps what is there. */
  u_row (row, 1, "other@x", 5, 5);
  insert_ignored (table, row);
  u_row (row, 9, "aNN@x", 5, 5);
  insert_ignored (table, row);
  u_row (row, 9, "new@x", 1, 2);
  insert_ignored (table, row);
  g_assert_cmpint (qstore_table_get_row_count (table), ==, 4);
  assert_row (table, g_variant_new_int64 (1), "(<int64 1>, <'Ann@x'>, <int64 1>, <int64 1>)");

  /* Updates conflict with others, never with themselves. */
  {
    g_autoptr(GByteArray) key = NULL;
    gboolean ignored = TRUE;

    u_row (row, 2, "BOB@X", 1, 2);
    key = key_of (table, row);
    g_assert_true (qstore_table_update_values (table, key->data, key->len, row,
                                               QSTORE_CONFLICT_ABORT, &ignored, &error));
    g_assert_no_error (error);
    g_assert_false (ignored);

    u_row (row, 2, "ann@X", 1, 2);
    g_assert_false (qstore_table_update_values (table, key->data, key->len, row,
                                                QSTORE_CONFLICT_ABORT, &ignored, &error));
    g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_CONSTRAINT);
    g_assert_cmpstr (error->message, ==, "UNIQUE constraint failed: u.email");
    g_clear_error (&error);

    g_assert_true (qstore_table_update_values (table, key->data, key->len, row,
                                               QSTORE_CONFLICT_IGNORE, &ignored, &error));
    g_assert_no_error (error);
    g_assert_true (ignored);
    assert_row (table, g_variant_new_int64 (2), "(<int64 2>, <'BOB@X'>, <int64 1>, <int64 2>)");
  }
  commit (f);
  counts = check_consistency (table, TRUE);

  /* REPLACE removes every row in the way: here three, on the PK and on
   * both UNIQUE constraints, recording their deletes. */
  g_ptr_array_set_size (f->change_sets, 0);
  u_row (row, 3, "ann@X", 1, 2);
  qstore_coordinator_begin (f->coordinator);
  insert_ok (table, row, QSTORE_CONFLICT_REPLACE);
  commit (f);
  assert_rows (table,
               "(<int64 3>, <'ann@X'>, <int64 1>, <int64 2>) "
               "(<int64 4>, <@mv nothing>, <int64 1>, <@mv nothing>)");
  g_assert_cmpint (qstore_table_get_row_count (table), ==, 2);
  g_clear_pointer (&counts, g_array_unref);
  counts = check_consistency (table, TRUE);
  g_assert_cmpuint (g_array_index (counts, guint, 0), ==, 2);

  g_assert_cmpuint (f->change_sets->len, ==, 1);
  {
    QStoreChangeSet *changes = g_ptr_array_index (f->change_sets, 0);
    guint n_deletes = 0;

    g_assert_cmpuint (qstore_change_set_get_n_changes (changes), ==, 4);
    for (guint i = 0; i < 3; i++)
      {
        g_autoptr(GVariant) old_row = qstore_change_set_get_old_row (changes, i);

        g_assert_cmpint (qstore_change_set_get_op (changes, i), ==, QSTORE_CHANGE_DELETE);
        g_assert_cmpstr (qstore_change_set_get_table (changes, i), ==, "u");
        g_assert_nonnull (old_row);
        n_deletes++;
      }
    g_assert_cmpuint (n_deletes, ==, 3);
    g_assert_cmpint (qstore_change_set_get_op (changes, 3), ==, QSTORE_CHANGE_INSERT);
  }
}

static void
test_table_rollback_conflict (Fixture       *f,
                              gconstpointer  data)
{
  g_autoptr(QStoreTable) table = table_for (f, unique_ddl, "u");
  g_autoptr(GError) error = NULL;

  g_assert_true (qstore_table_insert (table, g_variant_new_parsed ("(int64 1, <'a'>, <int64 1>, <int64 1>)"),
                                      QSTORE_CONFLICT_ABORT, &error));
  g_assert_no_error (error);

  /* ABORT and FAIL leave the transaction open with its earlier writes. */
  qstore_coordinator_begin (f->coordinator);
  g_assert_true (qstore_table_insert (table, g_variant_new_parsed ("(int64 2, <'b'>, <int64 2>, <int64 2>)"),
                                      QSTORE_CONFLICT_ABORT, &error));
  g_assert_no_error (error);
  g_assert_false (qstore_table_insert (table, g_variant_new_parsed ("(int64 3, <'A'>, <int64 3>, <int64 3>)"),
                                       QSTORE_CONFLICT_FAIL, &error));
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_CONSTRAINT);
  g_clear_error (&error);
  g_assert_true (qstore_coordinator_in_transaction (f->coordinator));
  g_assert_cmpint (qstore_table_get_row_count (table), ==, 2);

  /* ROLLBACK ends it: the earlier insert is gone too. */
  g_assert_false (qstore_table_insert (table, g_variant_new_parsed ("(int64 3, <'A'>, <int64 3>, <int64 3>)"),
                                       QSTORE_CONFLICT_ROLLBACK, &error));
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_CONSTRAINT);
  g_assert_cmpstr (error->message, ==, "UNIQUE constraint failed: u.email");
  g_assert_false (qstore_coordinator_in_transaction (f->coordinator));
  assert_rows (table, "(<int64 1>, <'a'>, <int64 1>, <int64 1>)");
  g_assert_cmpint (qstore_table_get_row_count (table), ==, 1);
}

static void
test_table_partial_unique (Fixture       *f,
                           gconstpointer  data)
{
  g_autoptr(QStoreTable) table =
    table_for (f,
               "CREATE TABLE p(id INTEGER PRIMARY KEY, name TEXT, active INT);"
               "CREATE UNIQUE INDEX p_active ON p(name) WHERE active = 1;",
               "p");
  g_autoptr(GError) error = NULL;
  QStoreValue row[3];

  qstore_coordinator_begin (f->coordinator);
  row[0] = v_int (1); row[1] = v_text ("x"); row[2] = v_int (0);
  insert_ok (table, row, QSTORE_CONFLICT_ABORT);
  row[0] = v_int (2);
  insert_ok (table, row, QSTORE_CONFLICT_ABORT);
  row[0] = v_int (3); row[2] = v_int (1);
  insert_ok (table, row, QSTORE_CONFLICT_ABORT);
  g_assert_cmpuint (index_entries (table, FALSE, "p_active"), ==, 1);

  /* A second active "x" conflicts; an inactive one never does. */
  row[0] = v_int (4); row[2] = v_int (1);
  insert_fails (table, row, QSTORE_CONFLICT_ABORT, "UNIQUE constraint failed: p.name");
  /* The predicate is SQLite's: '1' compares equal to 1 only after the
   * column's affinity, which the mirror applies. */
  row[2] = v_text ("1");
  insert_fails (table, row, QSTORE_CONFLICT_ABORT, "UNIQUE constraint failed: p.name");
  row[2] = v_int (2);
  insert_ok (table, row, QSTORE_CONFLICT_ABORT);

  /* Activating another "x" by update conflicts; REPLACE removes row 3. */
  {
    g_autoptr(GByteArray) key = NULL;
    gboolean ignored;

    row[0] = v_int (1); row[1] = v_text ("x"); row[2] = v_int (1);
    key = key_of (table, row);
    g_assert_false (qstore_table_update_values (table, key->data, key->len, row,
                                                QSTORE_CONFLICT_ABORT, &ignored, &error));
    g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_CONSTRAINT);
    g_assert_cmpstr (error->message, ==, "UNIQUE constraint failed: p.name");
    g_clear_error (&error);
    g_assert_true (qstore_table_update_values (table, key->data, key->len, row,
                                               QSTORE_CONFLICT_REPLACE, &ignored, &error));
    g_assert_no_error (error);
  }
  commit (f);
  assert_rows (table,
               "(<int64 1>, <'x'>, <int64 1>) (<int64 2>, <'x'>, <int64 0>) "
               "(<int64 4>, <'x'>, <int64 2>)");
  g_assert_cmpuint (index_entries (table, TRUE, "p_active"), ==, 1);
}

static void
test_table_not_null_check (Fixture       *f,
                           gconstpointer  data)
{
  g_autoptr(QStoreTable) table =
    table_for (f,
               "CREATE TABLE c(id INTEGER PRIMARY KEY NOT NULL, a INT NOT NULL "
               "  CHECK (a > 0), b TEXT, CONSTRAINT \"b len\" CHECK (length(b) < 5));",
               "c");
  g_autoptr(GError) error = NULL;
  QStoreValue row[3];

  qstore_coordinator_begin (f->coordinator);
  /* A NULL INTEGER PRIMARY KEY is assigned, NOT NULL or not. */
  row[0] = v_null (); row[1] = v_int (1); row[2] = v_text ("ok");
  g_assert_cmpint (insert_ok (table, row, QSTORE_CONFLICT_ABORT), ==, 1);

  row[0] = v_null (); row[1] = v_null (); row[2] = v_text ("ok");
  insert_fails (table, row, QSTORE_CONFLICT_ABORT, "NOT NULL constraint failed: c.a");
  insert_fails (table, row, QSTORE_CONFLICT_REPLACE, "NOT NULL constraint failed: c.a");
  insert_ignored (table, row);

  row[1] = v_int (0);
  insert_fails (table, row, QSTORE_CONFLICT_ABORT, "CHECK constraint failed: a > 0");
  insert_fails (table, row, QSTORE_CONFLICT_REPLACE, "CHECK constraint failed: a > 0");
  insert_ignored (table, row);

  row[1] = v_int (3); row[2] = v_text ("too long");
  insert_fails (table, row, QSTORE_CONFLICT_FAIL, "CHECK constraint failed: b len");

  /* A CHECK on NULL passes, as in SQL. */
  row[2] = v_null ();
  g_assert_cmpint (insert_ok (table, row, QSTORE_CONFLICT_ABORT), ==, 2);

  /* Updates are checked too. */
  {
    g_autoptr(GByteArray) key = NULL;
    gboolean ignored;

    row[0] = v_int (2); row[1] = v_int (-1); row[2] = v_null ();
    key = key_of (table, row);
    g_assert_false (qstore_table_update_values (table, key->data, key->len, row,
                                                QSTORE_CONFLICT_ABORT, &ignored, &error));
    g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_CONSTRAINT);
    g_assert_cmpstr (error->message, ==, "CHECK constraint failed: a > 0");
    g_clear_error (&error);

    /* An INTEGER PRIMARY KEY holds integers only. */
    row[0] = v_text ("two"); row[1] = v_int (1);
    g_assert_false (qstore_table_update_values (table, key->data, key->len, row,
                                                QSTORE_CONFLICT_ABORT, &ignored, &error));
    g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT);
    g_clear_error (&error);
  }
  commit (f);
  g_assert_cmpint (qstore_table_get_row_count (table), ==, 2);

  /* The mirror is left empty. */
  {
    sqlite3_stmt *stmt = NULL;

    g_assert_cmpint (sqlite3_prepare_v2 (f->scratch, "SELECT count(*) FROM c", -1,
                                         &stmt, NULL), ==, SQLITE_OK);
    g_assert_cmpint (sqlite3_step (stmt), ==, SQLITE_ROW);
    g_assert_cmpint (sqlite3_column_int (stmt, 0), ==, 0);
    sqlite3_finalize (stmt);
  }
}


/* The data keys of @table in key order, as the transaction sees them. */
static GPtrArray *
data_keys (QStoreTable *table)
{
  g_autoptr(QStoreIter) iter = NULL;
  g_autoptr(GError) error = NULL;
  GPtrArray *keys = g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);

  iter = qstore_table_scan (table, NULL, &error);
  g_assert_no_error (error);
  while (qstore_iter_next (iter, &error))
    g_ptr_array_add (keys, qstore_iter_get_key (iter));
  g_assert_no_error (error);
  return keys;
}

static gboolean
update_key (QStoreTable     *table,
            GBytes          *key,
            QStoreValue     *row,
            QStoreConflict   conflict,
            GError         **error)
{
  gboolean ignored = TRUE;
  gboolean ok;

  ok = qstore_table_update_values (table, g_bytes_get_data (key, NULL), g_bytes_get_size (key),
                                   row, conflict, &ignored, error);
  if (ok)
    g_assert_false (ignored);
  return ok;
}

static void
test_table_null_primary_key (Fixture       *f,
                             gconstpointer  data)
{
  g_autoptr(QStoreTable) table =
    table_for (f,
               "CREATE TABLE n(a INT, b INTEGER, c TEXT UNIQUE, PRIMARY KEY (b, a));"
               "CREATE INDEX n_a ON n(a);",
               "n");
  g_autoptr(QStoreTable) desc =
    table_for (f, "CREATE TABLE d(k TEXT, v INT, PRIMARY KEY (k DESC));", "d");
  g_autoptr(QStoreTable) without =
    table_for (f, "CREATE TABLE w(k TEXT, j INT, v, PRIMARY KEY (k, j)) WITHOUT ROWID;", "w");
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) keys = NULL;
  g_autoptr(GPtrArray) after = NULL;
  g_autoptr(GByteArray) prefix = NULL;
  g_autoptr(GBytes) stored = NULL;
  g_autoptr(GArray) counts = NULL;
  QStoreValue row[3];

  /* SQLite takes both: NULLs in a PRIMARY KEY are distinct. */
  qstore_coordinator_begin (f->coordinator);
  row[0] = v_null (); row[1] = v_int (2); row[2] = v_text ("p");
  insert_ok (table, row, QSTORE_CONFLICT_ABORT);
  row[2] = v_text ("q");
  insert_ok (table, row, QSTORE_CONFLICT_ABORT);
  row[0] = v_int (1); row[1] = v_int (2); row[2] = v_text ("r");
  insert_ok (table, row, QSTORE_CONFLICT_ABORT);
  row[0] = v_int (7); row[1] = v_null (); row[2] = v_null ();
  insert_ok (table, row, QSTORE_CONFLICT_ABORT);
  row[0] = v_null (); row[1] = v_null (); row[2] = v_null ();
  insert_ok (table, row, QSTORE_CONFLICT_ABORT);
  insert_ok (table, row, QSTORE_CONFLICT_ABORT);
  /* Without NULL, the key is still unique. */
  row[0] = v_int (1); row[1] = v_int (2); row[2] = v_text ("s");
  insert_fails (table, row, QSTORE_CONFLICT_ABORT, "UNIQUE constraint failed: n.b, n.a");
  g_assert_cmpint (qstore_table_get_row_count (table), ==, 6);

  /* Key order: b, then a, NULL first, as ORDER BY b, a in SQLite. */
  assert_rows (table,
               "(<@mv nothing>, <@mv nothing>, <@mv nothing>) "
               "(<@mv nothing>, <@mv nothing>, <@mv nothing>) "
               "(<int64 7>, <@mv nothing>, <@mv nothing>) "
               "(<@mv nothing>, <int64 2>, <'p'>) "
               "(<@mv nothing>, <int64 2>, <'q'>) "
               "(<int64 1>, <int64 2>, <'r'>)");
  assert_index_order (table, "n_a", "nothing nothing nothing nothing 1 7");

  /* A point read of the key columns finds none of them (`= NULL` never
   * holds); the key they share is a prefix of theirs. */
  row[0] = v_null (); row[1] = v_int (2);
  prefix = key_of (table, row);
  stored = qstore_table_get_row (table, prefix->data, prefix->len, &error);
  g_assert_no_error (error);
  g_assert_null (stored);
  assert_row (table, g_variant_new_parsed ("(int64 2, @mv nothing)"), "none");
  keys = data_keys (table);
  g_assert_cmpuint (keys->len, ==, 6);
  for (guint i = 3; i < 5; i++)
    {
      gsize len;
      const guint8 *key = g_bytes_get_data (g_ptr_array_index (keys, i), &len);

      g_assert_cmpuint (len, >, prefix->len);
      g_assert_cmpmem (key, prefix->len, prefix->data, prefix->len);
    }
  counts = check_consistency (table, FALSE);
  commit (f);
  g_clear_pointer (&counts, g_array_unref);
  counts = check_consistency (table, TRUE);

  /* An update that keeps the key columns keeps the row's key... */
  qstore_coordinator_begin (f->coordinator);
  row[0] = v_null (); row[1] = v_int (2); row[2] = v_text ("P");
  g_assert_true (update_key (table, g_ptr_array_index (keys, 3), row,
                             QSTORE_CONFLICT_ABORT, &error));
  g_assert_no_error (error);
  after = data_keys (table);
  g_assert_cmpuint (after->len, ==, 6);
  g_assert_true (g_bytes_equal (g_ptr_array_index (after, 3), g_ptr_array_index (keys, 3)));
  g_clear_pointer (&after, g_ptr_array_unref);

  /* ...from NULL to a value it moves, and conflicts as any key... */
  row[0] = v_int (1); row[1] = v_int (2); row[2] = v_text ("q");
  g_assert_false (update_key (table, g_ptr_array_index (keys, 4), row,
                              QSTORE_CONFLICT_ABORT, &error));
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_CONSTRAINT);
  g_assert_cmpstr (error->message, ==, "UNIQUE constraint failed: n.b, n.a");
  g_clear_error (&error);
  row[0] = v_int (0);
  g_assert_true (update_key (table, g_ptr_array_index (keys, 4), row,
                             QSTORE_CONFLICT_ABORT, &error));
  g_assert_no_error (error);
  assert_row (table, g_variant_new_parsed ("(int64 2, int64 0)"),
              "(<int64 0>, <int64 2>, <'q'>)");

  /* ...and from a value to NULL, next to the others with that key. */
  row[0] = v_null (); row[1] = v_int (2); row[2] = v_text ("r");
  g_assert_true (update_key (table, g_ptr_array_index (keys, 5), row,
                             QSTORE_CONFLICT_ABORT, &error));
  g_assert_no_error (error);
  assert_row (table, g_variant_new_parsed ("(int64 2, int64 1)"), "none");
  assert_rows (table,
               "(<@mv nothing>, <@mv nothing>, <@mv nothing>) "
               "(<@mv nothing>, <@mv nothing>, <@mv nothing>) "
               "(<int64 7>, <@mv nothing>, <@mv nothing>) "
               "(<@mv nothing>, <int64 2>, <'P'>) "
               "(<@mv nothing>, <int64 2>, <'r'>) "
               "(<int64 0>, <int64 2>, <'q'>)");
  g_clear_pointer (&counts, g_array_unref);
  counts = check_consistency (table, FALSE);

  /* REPLACE removes the row in the way of a UNIQUE column, whatever its
   * key; a NULL key is in nobody's way. */
  row[0] = v_null (); row[1] = v_int (2); row[2] = v_text ("q");
  insert_ok (table, row, QSTORE_CONFLICT_REPLACE);
  assert_row (table, g_variant_new_parsed ("(int64 2, int64 0)"), "none");
  g_assert_cmpint (qstore_table_get_row_count (table), ==, 6);

  /* Deletes by the stored key. */
  g_clear_pointer (&keys, g_ptr_array_unref);
  keys = data_keys (table);
  g_assert_cmpuint (keys->len, ==, 6);
  for (guint i = 0; i < 2; i++)
    {
      GBytes *key = g_ptr_array_index (keys, i);

      g_assert_true (qstore_table_delete_key (table, g_bytes_get_data (key, NULL),
                                              g_bytes_get_size (key), &error));
      g_assert_no_error (error);
    }
  commit (f);
  assert_rows (table,
               "(<int64 7>, <@mv nothing>, <@mv nothing>) "
               "(<@mv nothing>, <int64 2>, <'P'>) "
               "(<@mv nothing>, <int64 2>, <'r'>) "
               "(<@mv nothing>, <int64 2>, <'q'>)");
  g_clear_pointer (&counts, g_array_unref);
  counts = check_consistency (table, TRUE);
  g_assert_cmpuint (g_array_index (counts, guint, 0), ==, 4);
  assert_index_order (table, "n_a", "nothing nothing nothing 7");

  /* A descending key puts NULL last, as ORDER BY k DESC does. */
  qstore_coordinator_begin (f->coordinator);
  row[0] = v_text ("a"); row[1] = v_int (1);
  insert_ok (desc, row, QSTORE_CONFLICT_ABORT);
  row[0] = v_null (); row[1] = v_int (2);
  insert_ok (desc, row, QSTORE_CONFLICT_ABORT);
  row[0] = v_text ("b"); row[1] = v_int (3);
  insert_ok (desc, row, QSTORE_CONFLICT_ABORT);
  row[0] = v_null (); row[1] = v_int (4);
  insert_ok (desc, row, QSTORE_CONFLICT_ABORT);
  commit (f);
  assert_rows (desc, "(<'b'>, <int64 3>) (<'a'>, <int64 1>) "
                     "(<@mv nothing>, <int64 2>) (<@mv nothing>, <int64 4>)");

  /* WITHOUT ROWID makes every PRIMARY KEY column NOT NULL. */
  qstore_coordinator_begin (f->coordinator);
  row[0] = v_text ("x"); row[1] = v_null (); row[2] = v_int (1);
  insert_fails (without, row, QSTORE_CONFLICT_ABORT, "NOT NULL constraint failed: w.j");
  row[0] = v_null (); row[1] = v_int (1);
  insert_fails (without, row, QSTORE_CONFLICT_ABORT, "NOT NULL constraint failed: w.k");
  qstore_coordinator_rollback (f->coordinator);
  g_assert_cmpint (qstore_table_get_row_count (without), ==, 0);
}

static void
test_table_rowids (Fixture       *f,
                   gconstpointer  data)
{
  g_autoptr(QStoreTable) plain = table_for (f, "CREATE TABLE r(x TEXT);", "r");
  g_autoptr(QStoreTable) ipk = table_for (f, "CREATE TABLE i(id INTEGER PRIMARY KEY, x);", "i");
  g_autoptr(GError) error = NULL;
  g_autoptr(GByteArray) key = g_byte_array_new ();
  QStoreValue row[2];
  gint64 rowid = 0;
  gint64 big;

  /* A table without a primary key: ids 1, 2, 3, kept in the row. */
  qstore_coordinator_begin (f->coordinator);
  row[0] = v_text ("a");
  g_assert_cmpint (insert_ok (plain, row, QSTORE_CONFLICT_ABORT), ==, 1);
  g_assert_cmpint (insert_ok (plain, row, QSTORE_CONFLICT_ABORT), ==, 2);
  g_assert_cmpint (insert_ok (plain, row, QSTORE_CONFLICT_ABORT), ==, 3);
  commit (f);

  /* Deleting the largest makes its id the next again; others do not. */
  row[0] = v_int (3);
  g_assert_true (qstore_table_encode_key_prefix (plain, -1, row, 1, key, &error));
  g_assert_no_error (error);
  g_assert_true (qstore_table_delete_key (plain, key->data, key->len, &error));
  g_assert_no_error (error);
  row[0] = v_text ("b");
  g_assert_cmpint (insert_ok (plain, row, QSTORE_CONFLICT_ABORT), ==, 3);
  row[0] = v_int (2);
  g_assert_true (qstore_table_encode_key_prefix (plain, -1, row, 1, key, &error));
  g_assert_true (qstore_table_delete_key (plain, key->data, key->len, &error));
  row[0] = v_text ("c");
  g_assert_cmpint (insert_ok (plain, row, QSTORE_CONFLICT_ABORT), ==, 4);
  commit (f);

  /* The rowid is kept through an update. */
  row[0] = v_int (4);
  g_assert_true (qstore_table_encode_key_prefix (plain, -1, row, 1, key, &error));
  row[0] = v_text ("C");
  g_assert_true (qstore_table_update_values (plain, key->data, key->len, row,
                                             QSTORE_CONFLICT_ABORT, NULL, &error));
  g_assert_no_error (error);
  {
    g_autoptr(GBytes) stored = qstore_table_get_row (plain, key->data, key->len, &error);
    QStoreValue decoded[1];

    g_assert_nonnull (stored);
    g_assert_true (qstore_table_decode_row (plain, g_bytes_get_data (stored, NULL),
                                            g_bytes_get_size (stored), decoded, &rowid,
                                            &error));
    g_assert_no_error (error);
    g_assert_cmpint (rowid, ==, 4);
    g_assert_cmpmem (decoded[0].bytes.data, decoded[0].bytes.len, "C", 1);
  }
  commit (f);
  assert_rows (plain, "(<'a'>,) (<'b'>,) (<'C'>,)");
  g_assert_cmpint (qstore_table_get_row_count (plain), ==, 3);

  /* INTEGER PRIMARY KEY: explicit ids move the maximum. */
  qstore_coordinator_begin (f->coordinator);
  row[0] = v_int (100); row[1] = v_text ("x");
  g_assert_cmpint (insert_ok (ipk, row, QSTORE_CONFLICT_ABORT), ==, 100);
  row[0] = v_null ();
  g_assert_cmpint (insert_ok (ipk, row, QSTORE_CONFLICT_ABORT), ==, 101);
  row[0] = v_int (-5);
  g_assert_cmpint (insert_ok (ipk, row, QSTORE_CONFLICT_ABORT), ==, -5);
  row[0] = v_null ();
  g_assert_cmpint (insert_ok (ipk, row, QSTORE_CONFLICT_ABORT), ==, 102);
  row[0] = v_int (101);
  insert_fails (ipk, row, QSTORE_CONFLICT_ABORT, "UNIQUE constraint failed: i.id");
  commit (f);

  /* A rolled-back insert gives its id back. */
  qstore_coordinator_begin (f->coordinator);
  row[0] = v_null ();
  g_assert_cmpint (insert_ok (ipk, row, QSTORE_CONFLICT_ABORT), ==, 103);
  qstore_coordinator_rollback (f->coordinator);
  qstore_coordinator_begin (f->coordinator);
  g_assert_cmpint (insert_ok (ipk, row, QSTORE_CONFLICT_ABORT), ==, 103);

  /* Past the largest id, free ones are picked at random. */
  row[0] = v_int (G_MAXINT64);
  g_assert_cmpint (insert_ok (ipk, row, QSTORE_CONFLICT_ABORT), ==, G_MAXINT64);
  row[0] = v_null ();
  big = insert_ok (ipk, row, QSTORE_CONFLICT_ABORT);
  g_assert_cmpint (big, >, 0);
  g_assert_cmpint (big, !=, G_MAXINT64);
  g_assert_cmpint (big, !=, 100);
  commit (f);
  g_assert_cmpint (qstore_table_get_row_count (ipk), ==, 7);
  {
    g_autoptr(GArray) counts = check_consistency (ipk, TRUE);
  }
}


/* A rollback may bring back rows above the largest rowid a table saw:
 * the next id must still be above every row. */
static void
test_table_rowid_after_rollback (Fixture       *f,
                                 gconstpointer  data)
{
  g_autoptr(QStoreTable) plain = table_for (f, "CREATE TABLE r(x TEXT NOT NULL);", "r");
  g_autoptr(QStoreTable) ipk =
    table_for (f, "CREATE TABLE i(id INTEGER PRIMARY KEY, x TEXT NOT NULL);", "i");
  QStoreTable *tables[] = { plain, ipk };
  g_autoptr(GError) error = NULL;
  QStoreValue row[2];
  guint64 epoch;

  for (guint t = 0; t < G_N_ELEMENTS (tables); t++)
    {
      QStoreTable *table = tables[t];
      guint x = t == 0 ? 0 : 1;
      g_autoptr(GByteArray) key = g_byte_array_new ();

      qstore_coordinator_begin (f->coordinator);
      row[0] = v_null (); row[1] = v_null ();
      for (gint64 id = 1; id <= 3; id++)
        {
          row[x] = v_text ("kept");
          g_assert_cmpint (insert_ok (table, row, QSTORE_CONFLICT_ABORT), ==, id);
        }
      commit (f);

      /* The largest row goes, the next id is read below it, then the
       * insert fails and everything is rolled back: row 3 is back. */
      epoch = qstore_coordinator_get_epoch (f->coordinator);
      qstore_coordinator_begin (f->coordinator);
      row[0] = v_int (3);
      g_assert_true (qstore_table_encode_key_prefix (table, -1, row, 1, key, &error));
      g_assert_true (qstore_table_delete_key (table, key->data, key->len, &error));
      g_assert_no_error (error);
      row[0] = v_null (); row[x] = v_null ();
      insert_fails (table, row, QSTORE_CONFLICT_ABORT,
                    t == 0 ? "NOT NULL constraint failed: r.x"
                           : "NOT NULL constraint failed: i.x");
      qstore_coordinator_rollback (f->coordinator);
      g_assert_cmpuint (qstore_coordinator_get_epoch (f->coordinator), !=, epoch);

      qstore_coordinator_begin (f->coordinator);
      row[x] = v_text ("new");
      g_assert_cmpint (insert_ok (table, row, QSTORE_CONFLICT_REPLACE), ==, 4);

      /* The same through ROLLBACK TO a savepoint. */
      qstore_coordinator_savepoint (f->coordinator, 0);
      epoch = qstore_coordinator_get_epoch (f->coordinator);
      row[0] = v_int (4);
      g_assert_true (qstore_table_encode_key_prefix (table, -1, row, 1, key, &error));
      g_assert_true (qstore_table_delete_key (table, key->data, key->len, &error));
      g_assert_no_error (error);
      row[0] = v_null (); row[x] = v_null ();
      insert_fails (table, row, QSTORE_CONFLICT_ABORT,
                    t == 0 ? "NOT NULL constraint failed: r.x"
                           : "NOT NULL constraint failed: i.x");
      qstore_coordinator_rollback_to (f->coordinator, 0);
      g_assert_cmpuint (qstore_coordinator_get_epoch (f->coordinator), !=, epoch);
      row[x] = v_text ("newer");
      g_assert_cmpint (insert_ok (table, row, QSTORE_CONFLICT_REPLACE), ==, 5);
      commit (f);

      g_assert_cmpint (qstore_table_get_row_count (table), ==, 5);
      if (t == 0)
        assert_rows (table, "(<'kept'>,) (<'kept'>,) (<'kept'>,) (<'new'>,) (<'newer'>,)");
      else
        assert_rows (table, "(<int64 1>, <'kept'>) (<int64 2>, <'kept'>) (<int64 3>, <'kept'>) "
                            "(<int64 4>, <'new'>) (<int64 5>, <'newer'>)");
    }
}

/* The largest rowid a table knew outlives the commit of its transaction,
 * and only that: the next transaction starts from it; after a rollback,
 * after a commit another handle of the table made, or in a new handle,
 * the next id is read again and still comes after every row. */
static void
test_table_rowid_across_commits (Fixture       *f,
                                 gconstpointer  data)
{
  g_autoptr(QStoreTableSchema) schema =
    schema_for (f->scratch, "CREATE TABLE c(x TEXT NOT NULL);", "c");
  g_autoptr(QStoreTable) one = NULL;
  g_autoptr(QStoreTable) other = NULL;
  g_autoptr(GByteArray) key = g_byte_array_new ();
  g_autoptr(GError) error = NULL;
  QStoreValue row[1] = { v_text ("r") };

  one = qstore_table_new (f->coordinator, schema, f->scratch, &error);
  g_assert_no_error (error);
  other = qstore_table_new (f->coordinator, schema, f->scratch, &error);
  g_assert_no_error (error);

  /* Transaction after transaction, each commit carrying the count on. */
  for (gint64 id = 1; id <= 3; id++)
    {
      qstore_coordinator_begin (f->coordinator);
      g_assert_cmpint (insert_ok (one, row, QSTORE_CONFLICT_ABORT), ==, id);
      commit (f);
    }

  /* Another handle of the same table writes in a transaction of its own:
   * the first must not hand out 4 again (it would replace that row). */
  qstore_coordinator_begin (f->coordinator);
  g_assert_cmpint (insert_ok (other, row, QSTORE_CONFLICT_ABORT), ==, 4);
  commit (f);
  qstore_coordinator_begin (f->coordinator);
  g_assert_cmpint (insert_ok (one, row, QSTORE_CONFLICT_ABORT), ==, 5);
  commit (f);

  /* A rolled back insert gives its id back, as in SQLite. */
  qstore_coordinator_begin (f->coordinator);
  g_assert_cmpint (insert_ok (one, row, QSTORE_CONFLICT_ABORT), ==, 6);
  qstore_coordinator_rollback (f->coordinator);
  qstore_coordinator_begin (f->coordinator);
  g_assert_cmpint (insert_ok (one, row, QSTORE_CONFLICT_ABORT), ==, 6);
  commit (f);

  /* A rollback brings back the largest row after the maximum was read
   * below it (the failed insert reads it before it fails). */
  qstore_coordinator_begin (f->coordinator);
  row[0] = v_int (6);
  g_assert_true (qstore_table_encode_key_prefix (one, -1, row, 1, key, &error));
  g_assert_no_error (error);
  g_assert_true (qstore_table_delete_key (one, key->data, key->len, &error));
  g_assert_no_error (error);
  row[0] = v_null ();
  insert_fails (one, row, QSTORE_CONFLICT_ABORT, "NOT NULL constraint failed: c.x");
  qstore_coordinator_rollback (f->coordinator);
  row[0] = v_text ("r");
  qstore_coordinator_begin (f->coordinator);
  g_assert_cmpint (insert_ok (one, row, QSTORE_CONFLICT_ABORT), ==, 7);
  commit (f);

  /* The largest row deleted and committed: its id comes back too. */
  qstore_coordinator_begin (f->coordinator);
  row[0] = v_int (7);
  g_assert_true (qstore_table_encode_key_prefix (one, -1, row, 1, key, &error));
  g_assert_no_error (error);
  g_assert_true (qstore_table_delete_key (one, key->data, key->len, &error));
  g_assert_no_error (error);
  commit (f);
  row[0] = v_text ("r");
  qstore_coordinator_begin (f->coordinator);
  g_assert_cmpint (insert_ok (one, row, QSTORE_CONFLICT_ABORT), ==, 7);
  commit (f);

  /* A new handle, as after a reopen, reads where the rows end. */
  g_clear_object (&other);
  other = qstore_table_new (f->coordinator, schema, f->scratch, &error);
  g_assert_no_error (error);
  qstore_coordinator_begin (f->coordinator);
  g_assert_cmpint (insert_ok (other, row, QSTORE_CONFLICT_ABORT), ==, 8);
  commit (f);
  g_assert_cmpint (qstore_table_get_row_count (one), ==, 8);
}

static gint64
insert_with_rowid (QStoreTable    *table,
                   QStoreValue    *values,
                   gint64          explicit_rowid,
                   QStoreConflict  conflict,
                   GError        **error)
{
  gboolean ignored = TRUE;
  gint64 rowid = -12345;

  if (!qstore_table_insert_values_with_rowid (table, values, &explicit_rowid, conflict,
                                              &rowid, &ignored, error))
    return -1;
  if (ignored)
    return 0;
  return rowid;
}

static gboolean
move_rowid (QStoreTable     *table,
            gint64           old_rowid,
            QStoreValue     *values,
            gint64           new_rowid,
            QStoreConflict   conflict,
            gboolean        *ignored,
            GError         **error)
{
  g_autoptr(GByteArray) key = g_byte_array_new ();
  QStoreValue id = v_int (old_rowid);

  g_assert_true (qstore_table_encode_key_prefix (table, -1, &id, 1, key, NULL));
  return qstore_table_update_values_with_rowid (table, key->data, key->len, values,
                                                &new_rowid, conflict, ignored, error);
}

static void
test_table_explicit_rowid (Fixture       *f,
                           gconstpointer  data)
{
  g_autoptr(QStoreTable) plain =
    table_for (f, "CREATE TABLE r(x TEXT UNIQUE, y INT); CREATE INDEX r_y ON r(y);", "r");
  g_autoptr(QStoreTable) ipk = table_for (f, "CREATE TABLE i(id INTEGER PRIMARY KEY, x);", "i");
  g_autoptr(QStoreTable) keyed = table_for (f, "CREATE TABLE k(name TEXT PRIMARY KEY, x);", "k");
  g_autoptr(GError) error = NULL;
  g_autoptr(GArray) counts = NULL;
  gboolean ignored = FALSE;
  QStoreValue row[2];

  /* A table without INTEGER PRIMARY KEY takes the rowid given. */
  qstore_coordinator_begin (f->coordinator);
  row[0] = v_text ("a"); row[1] = v_int (1);
  g_assert_cmpint (insert_with_rowid (plain, row, 10, QSTORE_CONFLICT_ABORT, &error), ==, 10);
  g_assert_no_error (error);
  row[0] = v_text ("b"); row[1] = v_int (2);
  g_assert_cmpint (insert_ok (plain, row, QSTORE_CONFLICT_ABORT), ==, 11);
  row[0] = v_text ("c"); row[1] = v_int (3);
  g_assert_cmpint (insert_with_rowid (plain, row, -4, QSTORE_CONFLICT_ABORT, &error), ==, -4);
  g_assert_no_error (error);
  row[0] = v_text ("d"); row[1] = v_int (4);
  g_assert_cmpint (insert_ok (plain, row, QSTORE_CONFLICT_ABORT), ==, 12);

  /* A rowid taken: SQLite's message, IGNORE and REPLACE. */
  row[0] = v_text ("e"); row[1] = v_int (5);
  g_assert_cmpint (insert_with_rowid (plain, row, 10, QSTORE_CONFLICT_ABORT, &error), ==, -1);
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_CONSTRAINT);
  g_assert_cmpstr (error->message, ==, "UNIQUE constraint failed: r.rowid");
  g_clear_error (&error);
  g_assert_cmpint (insert_with_rowid (plain, row, 10, QSTORE_CONFLICT_IGNORE, &error), ==, 0);
  g_assert_no_error (error);
  g_assert_cmpint (insert_with_rowid (plain, row, 10, QSTORE_CONFLICT_REPLACE, &error), ==, 10);
  g_assert_no_error (error);
  g_assert_cmpint (qstore_table_get_row_count (plain), ==, 4);
  commit (f);
  assert_rows (plain, "(<'c'>, <int64 3>) (<'e'>, <int64 5>) (<'b'>, <int64 2>) "
                      "(<'d'>, <int64 4>)");
  assert_index_order (plain, "r_y", "'b' 'c' 'd' 'e'");

  /* An update moves the row to the rowid given, its index entries with it. */
  qstore_coordinator_begin (f->coordinator);
  row[0] = v_text ("B"); row[1] = v_int (20);
  g_assert_true (move_rowid (plain, 11, row, 20, QSTORE_CONFLICT_ABORT, &ignored, &error));
  g_assert_no_error (error);
  g_assert_false (ignored);
  g_assert_cmpint (qstore_table_get_row_count (plain), ==, 4);
  assert_rows (plain, "(<'c'>, <int64 3>) (<'e'>, <int64 5>) (<'d'>, <int64 4>) "
                      "(<'B'>, <int64 20>)");
  counts = check_consistency (plain, FALSE);
  row[0] = v_null (); row[1] = v_null ();
  g_assert_cmpint (insert_ok (plain, row, QSTORE_CONFLICT_ABORT), ==, 21);

  /* Onto a rowid taken: the same conflicts as an insert. */
  row[0] = v_text ("C"); row[1] = v_int (3);
  g_assert_false (move_rowid (plain, -4, row, 20, QSTORE_CONFLICT_ABORT, &ignored, &error));
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_CONSTRAINT);
  g_assert_cmpstr (error->message, ==, "UNIQUE constraint failed: r.rowid");
  g_clear_error (&error);
  g_assert_true (move_rowid (plain, -4, row, 20, QSTORE_CONFLICT_IGNORE, &ignored, &error));
  g_assert_no_error (error);
  g_assert_true (ignored);
  g_assert_true (move_rowid (plain, -4, row, 20, QSTORE_CONFLICT_REPLACE, &ignored, &error));
  g_assert_no_error (error);
  g_assert_false (ignored);
  commit (f);
  assert_rows (plain, "(<'e'>, <int64 5>) (<'d'>, <int64 4>) (<'C'>, <int64 3>) "
                      "(<@mv nothing>, <@mv nothing>)");
  g_clear_pointer (&counts, g_array_unref);
  counts = check_consistency (plain, TRUE);
  g_assert_cmpint (qstore_table_get_row_count (plain), ==, 4);

  /* With an INTEGER PRIMARY KEY, the rowid fills the column left NULL;
   * a value in the column wins. An update moves the column along unless
   * it changes the column itself. */
  qstore_coordinator_begin (f->coordinator);
  row[0] = v_null (); row[1] = v_text ("one");
  g_assert_cmpint (insert_with_rowid (ipk, row, 7, QSTORE_CONFLICT_ABORT, &error), ==, 7);
  row[0] = v_int (9); row[1] = v_text ("two");
  g_assert_cmpint (insert_with_rowid (ipk, row, 8, QSTORE_CONFLICT_ABORT, &error), ==, 9);
  g_assert_no_error (error);
  row[0] = v_int (7); row[1] = v_text ("ONE");
  g_assert_true (move_rowid (ipk, 7, row, 30, QSTORE_CONFLICT_ABORT, &ignored, &error));
  g_assert_no_error (error);
  row[0] = v_int (40); row[1] = v_text ("TWO");
  g_assert_true (move_rowid (ipk, 9, row, 31, QSTORE_CONFLICT_ABORT, &ignored, &error));
  g_assert_no_error (error);
  commit (f);
  assert_rows (ipk, "(<int64 30>, <'ONE'>) (<int64 40>, <'TWO'>)");

  /* A table keyed by another PRIMARY KEY has no rowid to give. */
  row[0] = v_text ("n"); row[1] = v_int (1);
  g_assert_cmpint (insert_with_rowid (keyed, row, 1, QSTORE_CONFLICT_ABORT, &error), ==, -1);
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_UNSUPPORTED);
  g_clear_error (&error);
  qstore_coordinator_rollback (f->coordinator);
  g_assert_cmpint (qstore_table_get_row_count (keyed), ==, 0);
}

static void
test_table_row_counts (Fixture       *f,
                       gconstpointer  data)
{
  g_autoptr(QStoreTable) table = table_for (f, people_ddl, "people");
  g_autoptr(QStoreTable) other = table_for (f, "CREATE TABLE o(x);", "o");
  g_autoptr(GError) error = NULL;
  QStoreValue row[4];

  g_assert_cmpint (qstore_table_get_row_count (table), ==, 0);
  qstore_coordinator_begin (f->coordinator);
  for (int i = 0; i < 5; i++)
    {
      row[0] = v_null (); row[1] = v_text ("n"); row[2] = v_int (i); row[3] = v_null ();
      insert_ok (table, row, QSTORE_CONFLICT_ABORT);
    }
  insert_ok (other, row, QSTORE_CONFLICT_ABORT);
  g_assert_cmpint (qstore_table_get_row_count (table), ==, 5);
  commit (f);
  g_assert_cmpint (qstore_table_get_row_count (table), ==, 5);
  g_assert_cmpint (qstore_table_get_row_count (other), ==, 1);

  /* A rollback discards the count's changes with the rows. */
  qstore_coordinator_begin (f->coordinator);
  g_assert_true (qstore_table_delete (table, g_variant_new_int64 (1), &error));
  g_assert_true (qstore_table_delete (table, g_variant_new_int64 (2), &error));
  g_assert_cmpint (qstore_table_get_row_count (table), ==, 3);
  qstore_coordinator_rollback (f->coordinator);
  g_assert_cmpint (qstore_table_get_row_count (table), ==, 5);

  /* The count is persisted in __stats__ as JSON. */
  {
    g_autoptr(QStoreKV) stats = qstore_provider_get_stats_store (f->provider, &error);
    g_autofree char *stats_key = qstore_stats_key_for_table ("main", "people");
    g_autoptr(GBytes) value = NULL;
    g_autofree char *text = NULL;

    g_assert_no_error (error);
    value = qstore_kv_get (stats, (const guint8 *) stats_key, strlen (stats_key), &error);
    g_assert_no_error (error);
    g_assert_nonnull (value);
    text = g_strndup (g_bytes_get_data (value, NULL), g_bytes_get_size (value));
    g_assert_nonnull (strstr (text, "\"rowCount\""));
    g_assert_nonnull (strstr (text, "5"));
  }
}

static void
test_table_changes (Fixture       *f,
                    gconstpointer  data)
{
  g_autoptr(QStoreTable) table = table_for (f, people_ddl, "people");
  g_autoptr(GError) error = NULL;
  QStoreChangeSet *changes;
  static const char *expected[][3] = {
    { "insert", "", "(<int64 1>, <'a'>, <int64 1>, <@mv nothing>)" },
    { "update", "(<int64 1>, <'a'>, <int64 1>, <@mv nothing>)",
                "(<int64 1>, <'a'>, <int64 2>, <'t'>)" },
    { "insert", "", "(<int64 2>, <'b'>, <int64 3>, <@mv nothing>)" },
    { "delete", "(<int64 1>, <'a'>, <int64 2>, <'t'>)", "" },
  };

  qstore_coordinator_begin (f->coordinator);
  g_assert_true (qstore_table_insert (table, g_variant_new ("(xsxmv)", (gint64) 1, "a", (gint64) 1, NULL),
                                      QSTORE_CONFLICT_ABORT, &error));
  g_assert_true (qstore_table_update (table, g_variant_new_int64 (1),
                                      g_variant_new ("(xsx@mv)", (gint64) 1, "a", (gint64) 2,
                                                     g_variant_new_maybe (G_VARIANT_TYPE_VARIANT,
                                                                          g_variant_new_variant (g_variant_new_string ("t")))),
                                      QSTORE_CONFLICT_ABORT, &error));
  g_assert_no_error (error);
  g_assert_true (qstore_table_insert (table, g_variant_new ("(xsxmv)", (gint64) 2, "b", (gint64) 3, NULL),
                                      QSTORE_CONFLICT_ABORT, &error));
  g_assert_true (qstore_table_delete (table, g_variant_new_parsed ("(int64 1,)"), &error));
  g_assert_no_error (error);
  g_assert_cmpuint (f->change_sets->len, ==, 0);
  commit (f);

  g_assert_cmpuint (f->change_sets->len, ==, 1);
  changes = g_ptr_array_index (f->change_sets, 0);
  g_assert_cmpuint (qstore_change_set_get_tx_id (changes), ==,
                    qstore_coordinator_get_last_tx_id (f->coordinator));
  g_assert_cmpuint (qstore_change_set_get_n_changes (changes), ==, G_N_ELEMENTS (expected));
  for (guint i = 0; i < G_N_ELEMENTS (expected); i++)
    {
      g_autoptr(GVariant) old_row = qstore_change_set_get_old_row (changes, i);
      g_autoptr(GVariant) new_row = qstore_change_set_get_new_row (changes, i);
      g_autofree char *old_text = old_row ? g_variant_print (old_row, TRUE) : g_strdup ("");
      g_autofree char *new_text = new_row ? g_variant_print (new_row, TRUE) : g_strdup ("");
      QStoreChangeOp op = qstore_change_set_get_op (changes, i);

      g_assert_cmpstr (qstore_change_set_get_schema (changes, i), ==, "main");
      g_assert_cmpstr (qstore_change_set_get_table (changes, i), ==, "people");
      g_assert_cmpstr (op == QSTORE_CHANGE_INSERT ? "insert" :
                       op == QSTORE_CHANGE_UPDATE ? "update" : "delete", ==, expected[i][0]);
      g_assert_cmpstr (old_text, ==, expected[i][1]);
      g_assert_cmpstr (new_text, ==, expected[i][2]);
    }

  /* Ignored writes record nothing; nothing pending commits nothing. */
  g_assert_true (qstore_table_insert (table, g_variant_new ("(xsxmv)", (gint64) 2, "b", (gint64) 3, NULL),
                                      QSTORE_CONFLICT_IGNORE, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (f->change_sets->len, ==, 1);
}

static void
test_table_variant_api (Fixture       *f,
                        gconstpointer  data)
{
  g_autoptr(QStoreTable) table =
    table_for (f, "CREATE TABLE v(g TEXT COLLATE NOCASE, n INT, d REAL, b BLOB, "
                  "PRIMARY KEY(g, n DESC));", "v");
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) rows = NULL;
  static const char *groups[] = { "b", "A", "c" };

  /* Outside a transaction every write commits at once. */
  for (guint i = 0; i < G_N_ELEMENTS (groups); i++)
    for (gint64 n = 1; n <= 3; n++)
      {
        g_assert_true (qstore_table_insert (table,
                                            g_variant_new_parsed ("(%s, %x, <%d>, <@ay [0x00, 0x02]>)",
                                                                  groups[i], n, n / 2.0),
                                            QSTORE_CONFLICT_ABORT, &error));
        g_assert_no_error (error);
        g_assert_false (qstore_coordinator_in_transaction (f->coordinator));
      }
  {
    g_autoptr(GArray) counts = check_consistency (table, TRUE);
  }
  g_assert_cmpint (qstore_table_get_row_count (table), ==, 9);

  assert_row (table, g_variant_new_parsed ("('a', int64 2)"),
              "(<'A'>, <int64 2>, <1.0>, <[byte 0x00, 0x02]>)");
  assert_row (table, g_variant_new_parsed ("('a', int64 4)"), "none");

  /* Key order: g under NOCASE, then n descending. */
  rows = qstore_table_select_range (table, g_variant_new_parsed ("('B',)"),
                                    g_variant_new_parsed ("('c', int64 2)"),
                                    FALSE, -1, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (rows->len, ==, 5);
  {
    static const char *expected[] = { "('b', 3)", "('b', 2)", "('b', 1)", "('c', 3)", "('c', 2)" };

    for (guint i = 0; i < rows->len; i++)
      {
        GVariant *row = g_ptr_array_index (rows, i);
        g_autoptr(GVariant) g = g_variant_get_child_value (row, 0);
        g_autoptr(GVariant) n = g_variant_get_child_value (row, 1);
        g_autoptr(GVariant) gs = g_variant_get_variant (g);
        g_autoptr(GVariant) ns = g_variant_get_variant (n);
        g_autofree char *text = g_strdup_printf ("('%s', %" G_GINT64_FORMAT ")",
                                                 g_variant_get_string (gs, NULL),
                                                 g_variant_get_int64 (ns));

        g_assert_cmpstr (text, ==, expected[i]);
      }
  }
  g_clear_pointer (&rows, g_ptr_array_unref);

  /* Reverse, with a limit. */
  rows = qstore_table_select_range (table, NULL, g_variant_new_parsed ("('b',)"),
                                    TRUE, 2, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (rows->len, ==, 2);
  {
    g_autofree char *first = g_variant_print (g_ptr_array_index (rows, 0), FALSE);
    g_autofree char *second = g_variant_print (g_ptr_array_index (rows, 1), FALSE);

    g_assert_cmpstr (first, ==, "(<'b'>, <int64 1>, <0.5>, <[byte 0x00, 0x02]>)");
    g_assert_cmpstr (second, ==, "(<'b'>, <int64 2>, <1.0>, <[byte 0x00, 0x02]>)");
  }
  g_clear_pointer (&rows, g_ptr_array_unref);

  rows = qstore_table_select_range (table, NULL, NULL, FALSE, 0, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (rows->len, ==, 0);
  g_clear_pointer (&rows, g_ptr_array_unref);

  /* Update and delete by key, `av` rows too. */
  {
    GVariantBuilder builder;

    g_variant_builder_init (&builder, G_VARIANT_TYPE ("av"));
    g_variant_builder_add (&builder, "v", g_variant_new_string ("a"));
    g_variant_builder_add (&builder, "v", g_variant_new_int64 (1));
    g_variant_builder_add (&builder, "v", qstore_value_new_null ());
    g_variant_builder_add (&builder, "v", g_variant_new_string ("now text"));
    g_assert_true (qstore_table_update (table, g_variant_new_parsed ("('A', int64 1)"),
                                        g_variant_builder_end (&builder),
                                        QSTORE_CONFLICT_ABORT, &error));
    g_assert_no_error (error);
  }
  assert_row (table, g_variant_new_parsed ("('a', int64 1)"),
              "(<'a'>, <int64 1>, <@mv nothing>, <'now text'>)");
  g_assert_true (qstore_table_delete (table, g_variant_new_parsed ("('C', int64 3)"), &error));
  g_assert_no_error (error);
  g_assert_cmpint (qstore_table_get_row_count (table), ==, 8);

  /* Bad shapes are refused with a message. */
  g_assert_false (qstore_table_insert (table, g_variant_new_parsed ("('x', int64 1)"),
                                       QSTORE_CONFLICT_ABORT, &error));
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  g_assert_null (qstore_table_get (table, g_variant_new_parsed ("('a', int64 1, 3)"), &error));
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  g_assert_false (qstore_table_insert (table, g_variant_new_parsed ("('x', int64 1, <true>, <3>)"),
                                       QSTORE_CONFLICT_ABORT, &error));
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  g_assert_false (qstore_coordinator_in_transaction (f->coordinator));

  /* NaN cannot be a key. */
  g_assert_false (qstore_table_insert (table, g_variant_new_parsed ("(<'x'>, <%d>, <1.0>, <2.0>)",
                                                                     NAN),
                                       QSTORE_CONFLICT_ABORT, &error));
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  g_assert_false (qstore_coordinator_in_transaction (f->coordinator));
  g_assert_cmpint (qstore_table_get_row_count (table), ==, 8);
}

static void
test_table_needs_mirror (Fixture       *f,
                         gconstpointer  data)
{
  g_autoptr(QStoreTableSchema) schema =
    schema_for (f->scratch, "CREATE TABLE m(a INT CHECK (a > 0));", "m");
  g_autoptr(GError) error = NULL;
  g_autoptr(QStoreTable) table = NULL;
  sqlite3 *empty = NULL;

  table = qstore_table_new (f->coordinator, schema, NULL, &error);
  g_assert_null (table);
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);

  g_assert_cmpint (sqlite3_open (":memory:", &empty), ==, SQLITE_OK);
  table = qstore_table_new (f->coordinator, schema, empty, &error);
  g_assert_null (table);
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_NOT_FOUND);
  sqlite3_close (empty);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/tables/schema/columns", test_schema_columns);
  g_test_add_func ("/tables/schema/primary-keys", test_schema_primary_keys);
  g_test_add_func ("/tables/schema/indexes", test_schema_indexes);
  g_test_add_func ("/tables/schema/constraints", test_schema_constraints);
  g_test_add_func ("/tables/schema/refused", test_schema_refused);
  g_test_add_func ("/tables/schema/bundle", test_schema_bundle);

#define ADD(path, func) \
  g_test_add ("/tables/table/" path, Fixture, NULL, fixture_setup, func, fixture_teardown)
  ADD ("basics", test_table_basics);
  ADD ("partial-index", test_table_partial_index);
  ADD ("pk-change", test_table_pk_change);
  ADD ("conflicts", test_table_conflicts);
  ADD ("rollback-conflict", test_table_rollback_conflict);
  ADD ("partial-unique", test_table_partial_unique);
  ADD ("not-null-check", test_table_not_null_check);
  ADD ("rowids", test_table_rowids);
  ADD ("null-primary-key", test_table_null_primary_key);
  ADD ("rowid-after-rollback", test_table_rowid_after_rollback);
  ADD ("rowid-across-commits", test_table_rowid_across_commits);
  ADD ("explicit-rowid", test_table_explicit_rowid);
  ADD ("row-counts", test_table_row_counts);
  ADD ("changes", test_table_changes);
  ADD ("variant-api", test_table_variant_api);
  ADD ("needs-mirror", test_table_needs_mirror);
#undef ADD

  return g_test_run ();
}
