/* test-result.c: what a query returned reads back exactly, however it is
 * asked for
 *
 * A result keeps its rows compactly and makes GVariants when asked; these
 * tests check every kind of value through every way of reading it (one
 * value, a row's tuple, the list model's items), that a borrowed row
 * stays the same, and that a statement run again from the cache names
 * its columns as they are now.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include <sqlite3.h>

#include <qstore.h>

#include "qstore-result-private.h"
#include "qstore-test-util.h"

static QStoreResult *
query (QStoreDatabase *db,
       const char     *sql)
{
  g_autoptr(GError) error = NULL;
  QStoreResult *result = qstore_database_query (db, sql, NULL, &error);

  g_assert_no_error (error);
  g_assert_nonnull (result);
  return result;
}

/* Each kind of value, read as one value, in the row's tuple and in the
 * list model's item: the same, and as today's types say. */
static void
test_values (TestDatabase  *t,
             gconstpointer  data)
{
  const char *sql = "SELECT 42, -1.5, 'héllo', x'00ff10', NULL, CAST(x'61ff62' AS TEXT), "
                    "CAST(x'610062' AS TEXT), '', x''";
  const char *types[] = { "x", "d", "s", "ay", "mv", "s", "s", "s", "ay" };
  g_autoptr(QStoreResult) result = query (t->db, sql);
  g_autoptr(QStoreRow) item = NULL;
  GVariant *row;
  gsize len;

  g_assert_cmpuint (qstore_result_get_n_rows (result), ==, 1);
  g_assert_cmpuint (qstore_result_get_n_columns (result), ==, G_N_ELEMENTS (types));
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (result)), ==, 1);

  row = qstore_result_get_row (result, 0);
  g_assert_true (g_variant_is_of_type (row, G_VARIANT_TYPE ("(vvvvvvvvv)")));
  item = g_list_model_get_item (G_LIST_MODEL (result), 0);
  g_assert_true (qstore_row_get_values (item) == row);

  for (guint i = 0; i < G_N_ELEMENTS (types); i++)
    {
      g_autoptr(GVariant) value = qstore_result_get_value (result, 0, i);
      g_autoptr(GVariant) boxed = g_variant_get_child_value (row, i);
      g_autoptr(GVariant) in_row = g_variant_get_variant (boxed);
      g_autoptr(GVariant) in_item = qstore_row_get_value (item, i);

      g_assert_false (g_variant_is_floating (value));
      g_assert_cmpstr (g_variant_get_type_string (value), ==, types[i]);
      g_assert_true (g_variant_equal (value, in_row));
      g_assert_true (g_variant_equal (value, in_item));
    }

  {
    g_autoptr(GVariant) integer = qstore_result_get_value (result, 0, 0);
    g_autoptr(GVariant) real = qstore_result_get_value (result, 0, 1);
    g_autoptr(GVariant) text = qstore_result_get_value (result, 0, 2);
    g_autoptr(GVariant) blob = qstore_result_get_value (result, 0, 3);
    g_autoptr(GVariant) null = qstore_result_get_value (result, 0, 4);
    g_autoptr(GVariant) invalid = qstore_result_get_value (result, 0, 5);
    g_autoptr(GVariant) nul = qstore_result_get_value (result, 0, 6);
    g_autoptr(GVariant) empty = qstore_result_get_value (result, 0, 7);
    g_autoptr(GVariant) empty_blob = qstore_result_get_value (result, 0, 8);
    const guint8 *bytes;

    g_assert_cmpint (g_variant_get_int64 (integer), ==, 42);
    g_assert_cmpfloat (g_variant_get_double (real), ==, -1.5);
    g_assert_cmpstr (g_variant_get_string (text, NULL), ==, "héllo");
    bytes = g_variant_get_fixed_array (blob, &len, 1);
    g_assert_cmpmem (bytes, len, "\0\377\020", 3);
    g_assert_true (qstore_value_is_null (null));
    /* Text that is not UTF-8, or holds a NUL, comes made valid. */
    g_assert_cmpstr (g_variant_get_string (invalid, NULL), ==, "a\357\277\275b");
    g_assert_cmpstr (g_variant_get_string (nul, NULL), ==, "a\357\277\275b");
    g_assert_cmpstr (g_variant_get_string (empty, NULL), ==, "");
    g_variant_get_fixed_array (empty_blob, &len, 1);
    g_assert_cmpuint (len, ==, 0);
  }

  /* The typed getters give the same values without a GVariant, and
   * nothing for a value of another type. */
  {
    static const QStoreSqlType sql_types[] = {
      QSTORE_SQL_TYPE_INTEGER, QSTORE_SQL_TYPE_REAL, QSTORE_SQL_TYPE_TEXT,
      QSTORE_SQL_TYPE_BLOB, QSTORE_SQL_TYPE_NULL, QSTORE_SQL_TYPE_TEXT,
      QSTORE_SQL_TYPE_TEXT, QSTORE_SQL_TYPE_TEXT, QSTORE_SQL_TYPE_BLOB,
    };
    g_autoptr(GBytes) blob = qstore_result_get_blob (result, 0, 3);
    g_autoptr(GBytes) empty_blob = qstore_result_get_blob (result, 0, 8);

    const guint8 *row_types;
    gsize n_columns = 0;

    for (guint i = 0; i < G_N_ELEMENTS (sql_types); i++)
      g_assert_cmpint (qstore_result_get_value_type (result, 0, i), ==, sql_types[i]);
    row_types = qstore_result_get_row_types (result, 0, &n_columns);
    g_assert_cmpuint (n_columns, ==, G_N_ELEMENTS (sql_types));
    for (guint i = 0; i < G_N_ELEMENTS (sql_types); i++)
      g_assert_cmpint (row_types[i], ==, sql_types[i]);
    g_assert_cmpint (qstore_result_get_int64 (result, 0, 0), ==, 42);
    g_assert_cmpfloat (qstore_result_get_double (result, 0, 1), ==, -1.5);
    g_assert_cmpfloat (qstore_result_get_double (result, 0, 0), ==, 42.0);
    g_assert_cmpstr (qstore_result_get_text (result, 0, 2), ==, "héllo");
    g_assert_cmpmem (g_bytes_get_data (blob, NULL), g_bytes_get_size (blob), "\0\377\020", 3);
    g_assert_cmpstr (qstore_result_get_text (result, 0, 5), ==, "a\357\277\275b");
    g_assert_cmpstr (qstore_result_get_text (result, 0, 6), ==, "a\357\277\275b");
    g_assert_cmpstr (qstore_result_get_text (result, 0, 7), ==, "");
    g_assert_cmpuint (g_bytes_get_size (empty_blob), ==, 0);

    g_assert_cmpint (qstore_result_get_int64 (result, 0, 1), ==, 0);
    g_assert_cmpint (qstore_result_get_int64 (result, 0, 2), ==, 0);
    g_assert_cmpfloat (qstore_result_get_double (result, 0, 2), ==, 0);
    g_assert_null (qstore_result_get_text (result, 0, 0));
    g_assert_null (qstore_result_get_text (result, 0, 4));
    g_assert_null (qstore_result_get_text (result, 0, 3));
    g_assert_null (qstore_result_get_blob (result, 0, 2));
    g_assert_null (qstore_result_get_blob (result, 0, 4));
  }
}

/* Many rows of text of growing length: each reads back as written, a
 * borrowed row is the same tuple each time it is asked for, and rows
 * asked for out of order are right. */
static void
test_many_rows (TestDatabase  *t,
                gconstpointer  data)
{
  g_autoptr(QStoreResult) result = NULL;
  guint n = 500;

  test_exec (t->db, "CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT, c REAL, d BLOB)");
  test_exec (t->db, "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 500) "
                    "INSERT INTO t SELECT i, substr(hex(randomblob(300)), 1, i), "
                    "CASE WHEN i % 3 = 0 THEN NULL ELSE i / 4.0 END, zeroblob(i % 7) FROM n");
  result = query (t->db, "SELECT a, b, length(b), c, d FROM t ORDER BY a DESC");
  g_assert_cmpuint (qstore_result_get_n_rows (result), ==, n);

  for (guint r = 0; r < n; r += 7)
    {
      guint row = (r * 37) % n;
      GVariant *tuple = qstore_result_get_row (result, row);
      g_autoptr(GVariant) a = qstore_result_get_value (result, row, 0);
      g_autoptr(GVariant) b = qstore_result_get_value (result, row, 1);
      g_autoptr(GVariant) c = qstore_result_get_value (result, row, 3);
      g_autoptr(GVariant) d = qstore_result_get_value (result, row, 4);
      gint64 id = n - row;
      gsize len;

      const guint8 *types;
      gsize n_columns;

      g_assert_true (qstore_result_get_row (result, row) == tuple);
      /* Each row's types are its own. */
      types = qstore_result_get_row_types (result, row, &n_columns);
      g_assert_cmpuint (n_columns, ==, 5);
      for (guint i = 0; i < n_columns; i++)
        g_assert_cmpint (types[i], ==, qstore_result_get_value_type (result, row, i));
      g_assert_cmpint (types[3], ==, id % 3 == 0 ? QSTORE_SQL_TYPE_NULL : QSTORE_SQL_TYPE_REAL);
      g_assert_cmpint (g_variant_get_int64 (a), ==, id);
      g_assert_cmpuint (strlen (g_variant_get_string (b, NULL)), ==, id);
      if (id % 3 == 0)
        g_assert_true (qstore_value_is_null (c));
      else
        g_assert_cmpfloat (g_variant_get_double (c), ==, id / 4.0);
      g_variant_get_fixed_array (d, &len, 1);
      g_assert_cmpuint (len, ==, id % 7);
      for (guint i = 0; i < 5; i++)
        {
          g_autoptr(GVariant) boxed = g_variant_get_child_value (tuple, i);
          g_autoptr(GVariant) inner = g_variant_get_variant (boxed);
          g_autoptr(GVariant) value = qstore_result_get_value (result, row, i);

          g_assert_true (g_variant_equal (inner, value));
        }
    }
}

/* A statement run again from the cache names its columns as the table
 * now has them, once DDL changed it. */
static void
test_columns_after_ddl (TestDatabase  *t,
                        gconstpointer  data)
{
  g_autoptr(QStoreResult) first = NULL;
  g_autoptr(QStoreResult) second = NULL;
  g_autoptr(QStoreResult) third = NULL;

  test_exec (t->db, "CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT)");
  test_exec (t->db, "INSERT INTO t VALUES (1, 'one')");
  first = query (t->db, "SELECT * FROM t");
  second = query (t->db, "SELECT * FROM t");
  g_assert_cmpuint (qstore_result_get_n_columns (second), ==, 2);
  g_assert_cmpstr (qstore_result_get_column_name (second, 1), ==, "b");
  g_assert_cmpstr (qstore_result_get_column_type (second, 1), ==, "TEXT");

  test_exec (t->db, "ALTER TABLE t ADD COLUMN c VARCHAR(20) DEFAULT 'x'");
  third = query (t->db, "SELECT * FROM t");
  g_assert_cmpuint (qstore_result_get_n_columns (third), ==, 3);
  g_assert_cmpstr (qstore_result_get_column_name (third, 2), ==, "c");
  g_assert_cmpstr (qstore_result_get_column_type (third, 2), ==, "VARCHAR(20)");
  /* What was returned before is as it was. */
  g_assert_cmpuint (qstore_result_get_n_columns (first), ==, 2);
  g_assert_cmpstr (qstore_result_get_column_name (first, 0), ==, "a");
}

/* The columns kept for a statement's next run: taken again while SQLite
 * has not prepared the statement again, read afresh once a schema change
 * made it do so. */
static void
test_shared_columns (void)
{
  g_autoptr(QStoreResultColumns) shared = NULL;
  g_autoptr(QStoreResult) first = qstore_result_new ();
  g_autoptr(QStoreResult) second = qstore_result_new ();
  g_autoptr(QStoreResult) third = qstore_result_new ();
  sqlite3_stmt *stmt = NULL;
  sqlite3 *db = NULL;

  g_assert_cmpint (sqlite3_open (":memory:", &db), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_exec (db, "CREATE TABLE t(a INTEGER, b TEXT); "
                                 "INSERT INTO t VALUES (1, 'one')", NULL, NULL, NULL), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_prepare_v2 (db, "SELECT * FROM t", -1, &stmt, NULL), ==, SQLITE_OK);

  g_assert_cmpint (sqlite3_step (stmt), ==, SQLITE_ROW);
  qstore_result_take_columns (first, stmt, &shared);
  qstore_result_add_row (first, stmt);
  sqlite3_reset (stmt);
  g_assert_cmpint (sqlite3_step (stmt), ==, SQLITE_ROW);
  qstore_result_take_columns (second, stmt, &shared);
  sqlite3_reset (stmt);
  g_assert_true (qstore_result_get_column_name (first, 1) ==
                 qstore_result_get_column_name (second, 1));

  g_assert_cmpint (sqlite3_exec (db, "ALTER TABLE t ADD COLUMN c REAL", NULL, NULL, NULL),
                   ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_step (stmt), ==, SQLITE_ROW);
  qstore_result_take_columns (third, stmt, &shared);
  qstore_result_add_row (third, stmt);
  g_assert_cmpuint (qstore_result_get_n_columns (third), ==, 3);
  g_assert_cmpstr (qstore_result_get_column_name (third, 2), ==, "c");
  g_assert_cmpstr (qstore_result_get_column_type (third, 2), ==, "REAL");
  g_assert_cmpuint (qstore_result_get_n_columns (first), ==, 2);
  {
    g_autoptr(GVariant) c = qstore_result_get_value (third, 0, 2);

    g_assert_true (qstore_value_is_null (c));
  }

  sqlite3_finalize (stmt);
  sqlite3_close (db);
}

static void
set_up (TestDatabase  *t,
        gconstpointer  data)
{
  test_database_set_up (t, "qstore-result-XXXXXX");
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add ("/sql/result/values", TestDatabase, NULL, set_up,
              test_values, test_database_tear_down);
  g_test_add ("/sql/result/many-rows", TestDatabase, NULL, set_up,
              test_many_rows, test_database_tear_down);
  g_test_add ("/sql/result/columns-after-ddl", TestDatabase, NULL, set_up,
              test_columns_after_ddl, test_database_tear_down);
  g_test_add_func ("/sql/result/shared-columns", test_shared_columns);
  return g_test_run ();
}
