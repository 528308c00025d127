/* test-statement-cache.c: statements run again are prepared once, and
 * never mean what they meant before a change
 *
 * The database keeps the statements it runs prepared, by their text.
 * These tests run the same text before and after what changes its
 * meaning — DDL on the table it names, a TEMP table that hides it, a
 * failed statement, another statement's parameters — and check that the
 * second run does what a fresh statement would.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include <qstore.h>

#include "qstore-database-private.h"
#include "qstore-test-util.h"

static void
append_value (GString  *out,
              GVariant *value)
{
  g_autoptr(GVariant) inner = g_variant_is_of_type (value, G_VARIANT_TYPE_VARIANT)
                              ? g_variant_get_variant (value) : g_variant_ref (value);

  if (g_variant_is_of_type (inner, G_VARIANT_TYPE_INT64))
    g_string_append_printf (out, "%" G_GINT64_FORMAT, g_variant_get_int64 (inner));
  else if (g_variant_is_of_type (inner, G_VARIANT_TYPE_STRING))
    g_string_append (out, g_variant_get_string (inner, NULL));
  else if (qstore_value_is_null (inner))
    g_string_append (out, "NULL");
  else
    g_string_append (out, "?");
}

static char *
query_with (QStoreDatabase *db,
            const char     *sql,
            GVariant       *params)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(QStoreResult) result = qstore_database_query (db, sql, params, &error);

  g_assert_no_error (error);
  return test_result_text (result, append_value);
}

static void
test_schema_change (TestDatabase  *t,
                    gconstpointer  data)
{
  g_autofree char *before = NULL;
  g_autofree char *after = NULL;

  test_exec (t->db, "CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT)");
  test_exec (t->db, "INSERT INTO t VALUES (1, 'one')");
  before = test_query_text (t->db, "SELECT * FROM t", append_value);
  g_assert_cmpstr (before, ==, "1|one\n");

  /* The same text, over a table of another shape. */
  test_exec (t->db, "DROP TABLE t");
  test_exec (t->db, "CREATE TABLE t(x TEXT PRIMARY KEY, y INTEGER, z INTEGER)");
  test_exec (t->db, "INSERT INTO t VALUES ('k', 2, 3)");
  after = test_query_text (t->db, "SELECT * FROM t", append_value);
  g_assert_cmpstr (after, ==, "k|2|3\n");
}

static void
test_temp_table_hides (TestDatabase  *t,
                       gconstpointer  data)
{
  g_autofree char *stored = NULL;
  g_autofree char *temp = NULL;

  test_exec (t->db, "CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT)");
  test_exec (t->db, "INSERT INTO t(b) VALUES ('stored')");

  /* Once a TEMP table of the same name exists, the text writes it. */
  test_exec (t->db, "CREATE TEMP TABLE t(a INTEGER PRIMARY KEY, b TEXT)");
  test_exec (t->db, "INSERT INTO t(b) VALUES ('stored')");
  test_exec (t->db, "DROP TABLE temp.t");

  stored = test_query_text (t->db, "SELECT count(*) FROM main.t", append_value);
  g_assert_cmpstr (stored, ==, "1\n");
  test_exec (t->db, "INSERT INTO t(b) VALUES ('stored')");
  temp = test_query_text (t->db, "SELECT count(*) FROM main.t", append_value);
  g_assert_cmpstr (temp, ==, "2\n");
}

/* What a text writes decides what is refused: a materialized view's
 * rows are the view's alone, a TEMP table of the same name is anyone's. */
static void
test_temp_table_hides_view (TestDatabase  *t,
                            gconstpointer  data)
{
  const char *insert = "INSERT INTO mv VALUES (7)";
  g_autofree char *rows = NULL;

  test_exec (t->db, "CREATE TABLE src(a INTEGER PRIMARY KEY)");
  test_exec (t->db, "CREATE MATERIALIZED VIEW mv AS SELECT a FROM src");
  test_exec_fails (t->db, insert, QSTORE_ERROR_UNSUPPORTED, NULL);

  test_exec (t->db, "CREATE TEMP TABLE mv(a)");
  test_exec (t->db, insert);
  rows = test_query_text (t->db, "SELECT a FROM temp.mv", append_value);
  g_assert_cmpstr (rows, ==, "7\n");

  test_exec (t->db, "DROP TABLE temp.mv");
  test_exec_fails (t->db, insert, QSTORE_ERROR_UNSUPPORTED, NULL);
}

static void
test_parameters (TestDatabase  *t,
                 gconstpointer  data)
{
  const char *sql = "SELECT b FROM t WHERE a = ?";
  g_autofree char *one = NULL;
  g_autofree char *two = NULL;
  g_autofree char *none = NULL;
  g_autoptr(GError) error = NULL;

  test_exec (t->db, "CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT)");
  test_exec (t->db, "INSERT INTO t VALUES (1, 'one'), (2, 'two')");
  one = query_with (t->db, sql, g_variant_new ("(x)", (gint64) 1));
  two = query_with (t->db, sql, g_variant_new ("(x)", (gint64) 2));
  g_assert_cmpstr (one, ==, "one\n");
  g_assert_cmpstr (two, ==, "two\n");

  /* Without parameters they are NULL, not the last run's. */
  none = query_with (t->db, sql, NULL);
  g_assert_cmpstr (none, ==, "");

  /* A wrong count fails and leaves the statement fit to run again. */
  g_assert_null (qstore_database_query (t->db, sql, g_variant_new ("(xx)", (gint64) 1,
                                                                  (gint64) 2), &error));
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT);
  g_clear_pointer (&one, g_free);
  one = query_with (t->db, sql, g_variant_new ("(x)", (gint64) 1));
  g_assert_cmpstr (one, ==, "one\n");
}

static void
test_failed_run (TestDatabase  *t,
                 gconstpointer  data)
{
  const char *insert = "INSERT INTO t VALUES (1, 'again')";
  g_autofree char *rows = NULL;

  test_exec (t->db, "CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT NOT NULL)");
  test_exec (t->db, insert);
  test_exec_fails (t->db, insert, QSTORE_ERROR_CONSTRAINT, NULL);
  test_exec_fails (t->db, insert, QSTORE_ERROR_CONSTRAINT, NULL);
  test_exec (t->db, "DELETE FROM t");
  test_exec (t->db, insert);
  rows = test_query_text (t->db, "SELECT * FROM t", append_value);
  g_assert_cmpstr (rows, ==, "1|again\n");
}

/* Inside a transaction and out of it: the same BEGIN/INSERT/COMMIT texts
 * commit each time, and a ROLLBACK undoes only its own. */
static void
test_transactions (TestDatabase  *t,
                   gconstpointer  data)
{
  g_autofree char *rows = NULL;

  test_exec (t->db, "CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT)");
  for (int i = 0; i < 3; i++)
    {
      test_exec (t->db, "BEGIN");
      test_exec (t->db, "INSERT INTO t(b) VALUES ('x')");
      test_exec (t->db, i == 1 ? "ROLLBACK" : "COMMIT");
    }
  rows = test_query_text (t->db, "SELECT count(*) FROM t", append_value);
  g_assert_cmpstr (rows, ==, "2\n");
}

/* A cached INSERT that leaves columns out gives them their DEFAULT at
 * every run, as its text says; the text over a table made again gives the
 * new table's. A value its column converts (text to a number) is stored
 * converted at every run, and one it does not, as it is. */
static void
test_insert_defaults (TestDatabase  *t,
                      gconstpointer  data)
{
  const char *some = "INSERT INTO t(a) VALUES (?)";
  const char *more = "INSERT INTO t(a, c) VALUES (?, ?)";
  const char *rows_sql = "SELECT a, b, c, typeof(c) FROM t ORDER BY a";
  g_autofree char *rows = NULL;
  g_autofree char *again = NULL;

  test_exec (t->db, "CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT DEFAULT 'dflt', "
             "c NUMERIC DEFAULT 7)");
  for (gint64 a = 1; a <= 3; a++)
    g_free (query_with (t->db, some, g_variant_new ("(x)", a)));
  g_free (query_with (t->db, more, g_variant_new ("(xs)", (gint64) 4, "12")));
  g_free (query_with (t->db, more, g_variant_new ("(xs)", (gint64) 5, "twelve")));
  g_free (query_with (t->db, some, g_variant_new ("(x)", (gint64) 6)));
  rows = test_query_text (t->db, rows_sql, append_value);
  g_assert_cmpstr (rows, ==,
                   "1|dflt|7|integer\n2|dflt|7|integer\n3|dflt|7|integer\n"
                   "4|dflt|12|integer\n5|dflt|twelve|text\n6|dflt|7|integer\n");

  test_exec (t->db, "DROP TABLE t");
  test_exec (t->db, "CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT DEFAULT 'new', c NUMERIC)");
  g_free (query_with (t->db, some, g_variant_new ("(x)", (gint64) 1)));
  g_free (query_with (t->db, some, g_variant_new ("(x)", (gint64) 2)));
  again = test_query_text (t->db, rows_sql, append_value);
  g_assert_cmpstr (again, ==, "1|new|NULL|null\n2|new|NULL|null\n");
}

/* How many statements of the main connection have the text @sql, and
 * how often the last of them ran. */
static guint
prepared_runs (QStoreDatabase *db,
               const char     *sql,
               int            *runs)
{
  sqlite3 *conn = qstore_database_get_sqlite (db);
  guint n = 0;

  *runs = 0;
  for (sqlite3_stmt *stmt = sqlite3_next_stmt (conn, NULL); stmt != NULL;
       stmt = sqlite3_next_stmt (conn, stmt))
    if (g_strcmp0 (sqlite3_sql (stmt), sql) == 0)
      {
        n++;
        *runs = sqlite3_stmt_status (stmt, SQLITE_STMTSTATUS_RUN, FALSE);
      }
  return n;
}

/* Reads, inserts, updates and deletes run again are prepared once. */
static void
test_prepared_once (TestDatabase  *t,
                    gconstpointer  data)
{
  static const char * const texts[] = {
    "INSERT INTO t(b) VALUES (?)",
    "SELECT b FROM t WHERE a = ?",
    "UPDATE t SET b = b || ? WHERE a = 1",
    "DELETE FROM t WHERE a > 100 AND b = ?",
  };
  g_autofree char *rows = NULL;

  test_exec (t->db, "CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT)");
  for (guint run = 0; run < 5; run++)
    for (guint i = 0; i < G_N_ELEMENTS (texts); i++)
      g_free (query_with (t->db, texts[i], g_variant_new ("(s)", "x")));

  for (guint i = 0; i < G_N_ELEMENTS (texts); i++)
    {
      int runs;

      g_assert_cmpuint (prepared_runs (t->db, texts[i], &runs), ==, 1);
      g_assert_cmpint (runs, ==, 5);
    }
  rows = test_query_text (t->db, "SELECT a, b FROM t WHERE a = 1", append_value);
  g_assert_cmpstr (rows, ==, "1|xxxxxx\n");
}

/* A prepared statement takes its text's entry without looking the text
 * up, the same entry a query of that text takes; once the cache has let
 * entries go, it reads its text again. */
static void
test_prepared_statement (TestDatabase  *t,
                         gconstpointer  data)
{
  const char *text = "SELECT b FROM t WHERE a = ?";
  g_autoptr(QStorePreparedStatement) select = NULL;
  g_autoptr(GError) error = NULL;
  int runs;

  test_exec (t->db, "CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT)");
  test_exec (t->db, "INSERT INTO t VALUES (1, 'one'), (2, 'two')");
  select = qstore_database_prepare (t->db, text, &error);
  g_assert_no_error (error);

  for (gint64 run = 0; run < 6; run++)
    {
      g_autoptr(QStoreResult) result = NULL;
      g_autofree char *rows = NULL;

      g_assert_true (qstore_prepared_statement_bind_int64 (select, 1, run % 2 + 1, &error));
      result = qstore_prepared_statement_query (select, &error);
      g_assert_no_error (error);
      g_assert_cmpstr (qstore_result_get_text (result, 0, 0), ==, run % 2 ? "two" : "one");
      rows = query_with (t->db, text, g_variant_new ("(x)", (gint64) 2));
      g_assert_cmpstr (rows, ==, "two\n");
    }
  g_assert_cmpuint (prepared_runs (t->db, text, &runs), ==, 1);
  g_assert_cmpint (runs, ==, 12);

  /* More texts than the cache keeps empty it. */
  for (guint i = 0; i < 100; i++)
    {
      g_autofree char *other = g_strdup_printf ("SELECT b FROM t WHERE a = %u", i);

      g_free (query_with (t->db, other, NULL));
    }
  g_assert_cmpuint (prepared_runs (t->db, text, &runs), ==, 0);
  test_exec (t->db, "UPDATE t SET b = 'uno' WHERE a = 1");
  g_assert_true (qstore_prepared_statement_bind_int64 (select, 1, 1, &error));
  {
    g_autoptr(QStoreResult) result = qstore_prepared_statement_query (select, &error);

    g_assert_no_error (error);
    g_assert_cmpstr (qstore_result_get_text (result, 0, 0), ==, "uno");
  }
  g_assert_cmpuint (prepared_runs (t->db, text, &runs), ==, 1);
  g_assert_cmpint (runs, ==, 1);
}

static void
set_up (TestDatabase  *t,
        gconstpointer  data)
{
  test_database_set_up (t, "qstore-cache-XXXXXX");
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add ("/sql/statement-cache/prepared-once", TestDatabase, NULL, set_up,
              test_prepared_once, test_database_tear_down);
  g_test_add ("/sql/statement-cache/prepared-statement", TestDatabase, NULL, set_up,
              test_prepared_statement, test_database_tear_down);
  g_test_add ("/sql/statement-cache/schema-change", TestDatabase, NULL, set_up,
              test_schema_change, test_database_tear_down);
  g_test_add ("/sql/statement-cache/temp-table-hides", TestDatabase, NULL, set_up,
              test_temp_table_hides, test_database_tear_down);
  g_test_add ("/sql/statement-cache/temp-table-hides-view", TestDatabase, NULL, set_up,
              test_temp_table_hides_view, test_database_tear_down);
  g_test_add ("/sql/statement-cache/insert-defaults", TestDatabase, NULL, set_up,
              test_insert_defaults, test_database_tear_down);
  g_test_add ("/sql/statement-cache/parameters", TestDatabase, NULL, set_up,
              test_parameters, test_database_tear_down);
  g_test_add ("/sql/statement-cache/failed-run", TestDatabase, NULL, set_up,
              test_failed_run, test_database_tear_down);
  g_test_add ("/sql/statement-cache/transactions", TestDatabase, NULL, set_up,
              test_transactions, test_database_tear_down);
  return g_test_run ();
}
