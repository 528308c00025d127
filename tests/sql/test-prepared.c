/* test-prepared.c: QStorePreparedStatement
 *
 * A prepared statement must run exactly as qstore_database_query() runs
 * the same text with the same parameters: each value is checked against
 * what the GVariant path makes of it, and statements keep working across
 * the DDL, transactions and reopenings a database goes through.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <math.h>

#include "qstore-test-util.h"

static void
append_printed (GString  *out,
                GVariant *value)
{
  g_autofree char *printed = g_variant_print (value, TRUE);

  g_string_append (out, printed);
}

static QStorePreparedStatement *
prepare_ok (QStoreDatabase *db,
            const char     *sql)
{
  g_autoptr(GError) error = NULL;
  QStorePreparedStatement *statement = qstore_database_prepare (db, sql, &error);

  g_assert_no_error (error);
  g_assert_nonnull (statement);
  return statement;
}

static char *
run_text (QStorePreparedStatement *statement)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(QStoreResult) result = qstore_prepared_statement_query (statement, &error);

  g_assert_no_error (error);
  return test_result_text (result, append_printed);
}

#define DESCRIBE "SELECT typeof(?1), quote(?1), length(?1), hex(?1)"

/* Each value bound with bind_value() and with its typed bind, against the
 * same value given to qstore_database_query() in a tuple. */
static void
test_values (TestDatabase  *t,
             gconstpointer  data)
{
  static const char *values[] = {
    "@x 0", "@x 9223372036854775807", "@x -9223372036854775808", "@x -1",
    "0.0", "-0.0", "@d inf", "@d -inf", "@d nan", "1.5e300", "-2.5e-300",
    "''", "'plain'", "'\\u00e9\\U0001f600'", "@ay []", "@ay [0x00, 0xff, 0x00]",
    "@mv nothing", "true", "false", "<<'boxed'>>", "@i -7", "@y 255", "@t 18446744073709551615",
  };
  g_autoptr(QStorePreparedStatement) typed = prepare_ok (t->db, DESCRIBE);
  g_autoptr(QStorePreparedStatement) boxed = prepare_ok (t->db, DESCRIBE);

  g_assert_cmpstr (qstore_prepared_statement_get_sql (typed), ==, DESCRIBE);
  g_assert_cmpuint (qstore_prepared_statement_get_n_parameters (typed), ==, 1);

  for (guint i = 0; i < G_N_ELEMENTS (values); i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(GVariant) value = g_variant_parse (NULL, values[i], NULL, NULL, &error);
      g_autoptr(GVariant) inner = NULL;
      g_autoptr(QStoreResult) result = NULL;
      g_autofree char *expected = NULL;
      g_autofree char *through_value = NULL;
      g_autofree char *through_typed = NULL;
      gboolean ok = TRUE;

      g_assert_no_error (error);
      result = qstore_database_query (t->db, DESCRIBE, g_variant_new_tuple (&value, 1), &error);
      if (result == NULL)
        {
          /* What the tuple cannot carry, bind_value() refuses alike. */
          g_autoptr(GError) refused = NULL;

          g_test_message ("%s → %s", values[i], error->message);
          g_assert_false (qstore_prepared_statement_bind_value (boxed, 1, value, &refused));
          g_assert_error (refused, error->domain, error->code);
          g_assert_cmpstr (refused->message, ==, error->message);
          continue;
        }
      expected = test_result_text (result, append_printed);
      g_assert_true (qstore_prepared_statement_bind_value (boxed, 1, value, &error));
      g_assert_no_error (error);
      through_value = run_text (boxed);
      g_test_message ("%s → %s", values[i], expected);
      g_assert_cmpstr (through_value, ==, expected);

      inner = g_variant_is_of_type (value, G_VARIANT_TYPE_VARIANT)
                ? g_variant_get_variant (value) : g_variant_ref (value);
      while (g_variant_is_of_type (inner, G_VARIANT_TYPE_VARIANT))
        {
          GVariant *next = g_variant_get_variant (inner);

          g_variant_unref (inner);
          inner = next;
        }
      switch (g_variant_classify (inner))
        {
        case G_VARIANT_CLASS_INT64:
          ok = qstore_prepared_statement_bind_int64 (typed, 1, g_variant_get_int64 (inner), &error);
          break;
        case G_VARIANT_CLASS_DOUBLE:
          ok = qstore_prepared_statement_bind_double (typed, 1, g_variant_get_double (inner), &error);
          break;
        case G_VARIANT_CLASS_STRING:
          ok = qstore_prepared_statement_bind_text (typed, 1, g_variant_get_string (inner, NULL), &error);
          break;
        case G_VARIANT_CLASS_ARRAY:
          {
            g_autoptr(GBytes) bytes = g_variant_get_data_as_bytes (inner);

            ok = qstore_prepared_statement_bind_blob (typed, 1, bytes, &error);
          }
          break;
        case G_VARIANT_CLASS_MAYBE:
          ok = qstore_prepared_statement_bind_null (typed, 1, &error);
          break;
        default:
          continue;   /* no typed bind of its own */
        }
      g_assert_no_error (error);
      g_assert_true (ok);
      through_typed = run_text (typed);
      g_assert_cmpstr (through_typed, ==, expected);
    }
}

/* One statement, run many times: values stay bound between runs, a new
 * bind replaces one, and a cleared one makes the run fail untouched. */
static void
test_reuse (TestDatabase  *t,
            gconstpointer  data)
{
  g_autoptr(QStorePreparedStatement) insert = NULL;
  g_autoptr(QStorePreparedStatement) lookup = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *row = NULL;

  test_exec (t->db, "CREATE TABLE item (id INTEGER PRIMARY KEY, name TEXT UNIQUE, price REAL)");
  insert = prepare_ok (t->db, "INSERT INTO item (id, name, price) VALUES (?, ?, ?)");
  for (gint64 i = 1; i <= 200; i++)
    {
      g_autofree char *name = g_strdup_printf ("item %" G_GINT64_FORMAT, i);

      g_assert_true (qstore_prepared_statement_bind_int64 (insert, 1, i, &error));
      g_assert_true (qstore_prepared_statement_bind_text (insert, 2, name, &error));
      g_assert_true (qstore_prepared_statement_bind_double (insert, 3, i / 4.0, &error));
      g_assert_cmpint (qstore_prepared_statement_execute (insert, &error), ==, 1);
      g_assert_no_error (error);
    }
  g_assert_cmpint (test_query_int (t->db, "SELECT count(*) FROM item"), ==, 200);
  g_assert_cmpint (test_query_int (t->db, "SELECT sum(id) FROM item WHERE price * 4 = id"),
                   ==, 200 * 201 / 2);

  /* The same values again: the UNIQUE name refuses them, and nothing
   * changes. */
  g_assert_cmpint (qstore_prepared_statement_execute (insert, &error), ==, -1);
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_CONSTRAINT);
  g_clear_error (&error);
  g_assert_cmpint (test_query_int (t->db, "SELECT count(*) FROM item"), ==, 200);

  /* A cleared value is no value. */
  qstore_prepared_statement_clear_bindings (insert);
  g_assert_true (qstore_prepared_statement_bind_int64 (insert, 1, 1000, &error));
  g_assert_true (qstore_prepared_statement_bind_text (insert, 2, "new", &error));
  g_assert_cmpint (qstore_prepared_statement_execute (insert, &error), ==, -1);
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "Parameter 3 has no value"));
  g_clear_error (&error);
  g_assert_cmpint (test_query_int (t->db, "SELECT count(*) FROM item"), ==, 200);

  lookup = prepare_ok (t->db, "SELECT name, price FROM item WHERE id = ?");
  for (gint64 i = 1; i <= 200; i += 37)
    {
      g_autoptr(GVariant) price = g_variant_ref_sink (g_variant_new_double (i / 4.0));
      g_autofree char *printed = g_variant_print (price, TRUE);
      g_autofree char *expected = g_strdup_printf ("'item %" G_GINT64_FORMAT "'|%s\n",
                                                   i, printed);
      g_autofree char *got = NULL;

      g_assert_true (qstore_prepared_statement_bind_int64 (lookup, 1, i, &error));
      got = run_text (lookup);
      g_assert_cmpstr (got, ==, expected);
      g_free (got);
      /* Bound values stay for the next run. */
      got = run_text (lookup);
      g_assert_cmpstr (got, ==, expected);
    }
  row = run_text (lookup);
  g_assert_cmpstr (row, ==, "'item 186'|46.5\n");

  if (test_provider_persistent ())
    {
      g_clear_object (&insert);
      g_clear_object (&lookup);
      test_database_reopen (t);
      g_assert_cmpint (test_query_int (t->db, "SELECT count(*) FROM item"), ==, 200);
    }
}

static void
test_named (TestDatabase  *t,
            gconstpointer  data)
{
  g_autoptr(QStorePreparedStatement) statement = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *row = NULL;

  statement = prepare_ok (t->db, "SELECT :a, @b, $c, :a + 1, ?5");
  /* :a used twice is one parameter; ?5 makes five. */
  g_assert_cmpuint (qstore_prepared_statement_get_n_parameters (statement), ==, 5);
  g_assert_cmpstr (qstore_prepared_statement_get_parameter_name (statement, 1), ==, ":a");
  g_assert_cmpstr (qstore_prepared_statement_get_parameter_name (statement, 2), ==, "@b");
  g_assert_cmpstr (qstore_prepared_statement_get_parameter_name (statement, 3), ==, "$c");
  g_assert_null (qstore_prepared_statement_get_parameter_name (statement, 4));
  g_assert_null (qstore_prepared_statement_get_parameter_name (statement, 5));
  g_assert_null (qstore_prepared_statement_get_parameter_name (statement, 0));
  g_assert_null (qstore_prepared_statement_get_parameter_name (statement, 6));
  g_assert_cmpuint (qstore_prepared_statement_get_parameter_position (statement, "a"), ==, 1);
  g_assert_cmpuint (qstore_prepared_statement_get_parameter_position (statement, ":a"), ==, 1);
  g_assert_cmpuint (qstore_prepared_statement_get_parameter_position (statement, "@b"), ==, 2);
  g_assert_cmpuint (qstore_prepared_statement_get_parameter_position (statement, "c"), ==, 3);
  g_assert_cmpuint (qstore_prepared_statement_get_parameter_position (statement, ":b"), ==, 0);
  g_assert_cmpuint (qstore_prepared_statement_get_parameter_position (statement, "d"), ==, 0);
  g_assert_cmpuint (qstore_prepared_statement_get_parameter_position (statement, "?5"), ==, 0);

  for (guint i = 1; i <= 5; i++)
    g_assert_true (qstore_prepared_statement_bind_int64 (statement, i, i * 10, &error));
  row = run_text (statement);
  g_assert_cmpstr (row, ==, "int64 10|int64 20|int64 30|int64 11|int64 50\n");
}

static void
test_errors (TestDatabase  *t,
             gconstpointer  data)
{
  g_autoptr(QStorePreparedStatement) statement = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) blob = g_bytes_new ("x", 1);

  test_exec (t->db, "CREATE TABLE t (a INTEGER PRIMARY KEY, b NOT NULL)");

  /* What cannot be prepared says why, as running it would. */
  g_assert_null (qstore_database_prepare (t->db, "SELECT 1; SELECT 2", &error));
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  g_assert_null (qstore_database_prepare (t->db, "SELEC 1", &error));
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_SYNTAX);
  g_clear_error (&error);
  g_assert_null (qstore_database_prepare (t->db, "SELECT * FROM nowhere WHERE a = ?", &error));
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_NOT_FOUND);
  g_clear_error (&error);

  statement = prepare_ok (t->db, "INSERT INTO t (a, b) VALUES (?, ?)");

  /* Positions the statement does not have. */
  g_assert_false (qstore_prepared_statement_bind_int64 (statement, 0, 1, &error));
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "there is no parameter 0"));
  g_clear_error (&error);
  g_assert_false (qstore_prepared_statement_bind_blob (statement, 3, blob, &error));
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  g_assert_false (qstore_prepared_statement_bind_null (statement, 3, &error));
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);

  /* Values SQL cannot hold, and text that is not UTF-8. */
  g_assert_false (qstore_prepared_statement_bind_value (statement, 1,
                                                        g_variant_new ("(ii)", 1, 2), &error));
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "Parameter 1"));
  g_clear_error (&error);
  g_assert_false (qstore_prepared_statement_bind_text (statement, 2, "\xff\xfe", &error));
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);

  /* Nothing was bound by the failed binds: the run fails, writing
   * nothing. */
  g_assert_cmpint (qstore_prepared_statement_execute (statement, &error), ==, -1);
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "Parameter 1 has no value"));
  g_clear_error (&error);
  g_assert_cmpint (test_query_int (t->db, "SELECT count(*) FROM t"), ==, 0);

  /* A constraint violation is the statement's error; the next run goes on. */
  g_assert_true (qstore_prepared_statement_bind_int64 (statement, 1, 7, &error));
  g_assert_true (qstore_prepared_statement_bind_null (statement, 2, &error));
  g_assert_cmpint (qstore_prepared_statement_execute (statement, &error), ==, -1);
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_CONSTRAINT);
  g_clear_error (&error);
  g_assert_true (qstore_prepared_statement_bind_blob (statement, 2, blob, &error));
  g_assert_cmpint (qstore_prepared_statement_execute (statement, &error), ==, 1);
  g_assert_no_error (error);

  /* A closed database runs nothing. */
  test_close_database (&t->db);
  g_assert_cmpint (qstore_prepared_statement_execute (statement, &error), ==, -1);
  g_assert_nonnull (error);
  g_clear_error (&error);
  t->db = test_open_database (t->uri, QSTORE_OPEN_NONE);
  if (test_provider_persistent ())
    g_assert_cmpint (test_query_int (t->db, "SELECT count(*) FROM t"), ==, 1);
}

/* DDL between runs is seen, as qstore_database_query() sees it. */
static void
test_ddl_between_runs (TestDatabase  *t,
                       gconstpointer  data)
{
  g_autoptr(QStorePreparedStatement) select = NULL;
  g_autoptr(QStorePreparedStatement) create = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(QStoreResult) result = NULL;
  g_autofree char *rows = NULL;

  test_exec (t->db, "CREATE TABLE t (a INTEGER PRIMARY KEY, b)");
  test_exec (t->db, "INSERT INTO t VALUES (1, 'one')");
  select = prepare_ok (t->db, "SELECT * FROM t WHERE a >= ?");
  g_assert_true (qstore_prepared_statement_bind_int64 (select, 1, 0, &error));
  rows = run_text (select);
  g_assert_cmpstr (rows, ==, "int64 1|'one'\n");
  g_clear_pointer (&rows, g_free);

  test_exec (t->db, "ALTER TABLE t ADD COLUMN c DEFAULT 'new'");
  rows = run_text (select);
  g_assert_cmpstr (rows, ==, "int64 1|'one'|'new'\n");
  g_clear_pointer (&rows, g_free);

  test_exec (t->db, "DROP TABLE t");
  result = qstore_prepared_statement_query (select, &error);
  g_assert_null (result);
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_NOT_FOUND);
  g_clear_error (&error);

  /* A table of that name again, of other columns. */
  test_exec (t->db, "CREATE TABLE t (a INTEGER PRIMARY KEY, x, y, z)");
  test_exec (t->db, "INSERT INTO t VALUES (5, 1, 2, 3)");
  rows = run_text (select);
  g_assert_cmpstr (rows, ==, "int64 5|int64 1|int64 2|int64 3\n");

  /* DDL prepared runs as DDL. */
  create = prepare_ok (t->db, "CREATE TABLE u (k PRIMARY KEY)");
  g_assert_cmpuint (qstore_prepared_statement_get_n_parameters (create), ==, 0);
  g_assert_cmpint (qstore_prepared_statement_execute (create, &error), ==, 0);
  g_assert_no_error (error);
  g_assert_cmpint (qstore_prepared_statement_execute (create, &error), ==, -1);
  g_assert_nonnull (strstr (error->message, "already exists"));
}

/* Runs inside a transaction are the transaction's. */
static void
test_transaction (TestDatabase  *t,
                  gconstpointer  data)
{
  g_autoptr(QStorePreparedStatement) insert = NULL;
  g_autoptr(GError) error = NULL;

  test_exec (t->db, "CREATE TABLE t (a INTEGER PRIMARY KEY)");
  insert = prepare_ok (t->db, "INSERT INTO t VALUES (?)");

  test_exec (t->db, "BEGIN");
  for (gint64 i = 0; i < 50; i++)
    {
      g_assert_true (qstore_prepared_statement_bind_int64 (insert, 1, i, &error));
      g_assert_cmpint (qstore_prepared_statement_execute (insert, &error), ==, 1);
    }
  test_exec (t->db, "ROLLBACK");
  g_assert_cmpint (test_query_int (t->db, "SELECT count(*) FROM t"), ==, 0);

  test_exec (t->db, "BEGIN");
  for (gint64 i = 0; i < 50; i++)
    {
      g_assert_true (qstore_prepared_statement_bind_int64 (insert, 1, i, &error));
      g_assert_cmpint (qstore_prepared_statement_execute (insert, &error), ==, 1);
    }
  test_exec (t->db, "COMMIT");
  g_clear_object (&insert);
  if (test_provider_persistent ())
    test_database_reopen (t);
  g_assert_cmpint (test_query_int (t->db, "SELECT count(*), sum(a) FROM t"), ==, 50);
  g_assert_cmpint (test_query_int (t->db, "SELECT sum(a) FROM t"), ==, 49 * 50 / 2);
}

/* A statement does not keep its database alive; run after the database
 * is gone, it fails. */
static void
test_outlives_database (TestDatabase  *t,
                        gconstpointer  data)
{
  g_autoptr(QStorePreparedStatement) statement = NULL;
  g_autoptr(GError) error = NULL;
  QStoreDatabase *db;

  test_exec (t->db, "CREATE TABLE t (a INTEGER PRIMARY KEY)");
  statement = prepare_ok (t->db, "INSERT INTO t VALUES (?)");
  g_assert_true (qstore_prepared_statement_bind_int64 (statement, 1, 1, &error));
  g_assert_cmpint (qstore_prepared_statement_execute (statement, &error), ==, 1);

  /* Let go without closing: the database is finalized all the same. */
  db = g_steal_pointer (&t->db);
  g_object_add_weak_pointer (G_OBJECT (db), (gpointer *) &db);
  g_object_unref (db);
  g_assert_null (db);

  g_assert_cmpint (qstore_prepared_statement_execute (statement, &error), ==, -1);
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_CLOSED);
  g_assert_nonnull (strstr (error->message, "is gone"));
  g_clear_error (&error);
  g_assert_null (qstore_prepared_statement_query (statement, &error));
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_CLOSED);
  g_clear_error (&error);
  g_assert_false (qstore_prepared_statement_step (statement, &error));
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_CLOSED);
  g_clear_error (&error);
  /* Its own getters still answer. */
  g_assert_cmpuint (qstore_prepared_statement_get_n_parameters (statement), ==, 1);

  t->db = test_open_database (t->uri, QSTORE_OPEN_NONE);
  if (test_provider_persistent ())
    g_assert_cmpint (test_query_int (t->db, "SELECT count(*) FROM t"), ==, 1);
}

/* Every value of the row step() is on, printed as the GVariant a result
 * gives for it, from the typed getters (and checked against the one
 * get_value() gives). */
static char *
stepped_row_text (QStorePreparedStatement *statement)
{
  GString *out = g_string_new (NULL);
  gsize n_columns;
  const guint8 *types = qstore_prepared_statement_get_row_types (statement, &n_columns);

  for (guint i = 0; i < n_columns; i++)
    {
      g_autoptr(GVariant) value = NULL;
      g_autoptr(GVariant) boxed = NULL;
      g_autoptr(GBytes) blob = NULL;

      g_assert_cmpint (qstore_prepared_statement_get_value_type (statement, i), ==, types[i]);
      switch (types[i])
        {
        case QSTORE_SQL_TYPE_INTEGER:
          value = g_variant_new_int64 (qstore_prepared_statement_get_int64 (statement, i));
          break;
        case QSTORE_SQL_TYPE_REAL:
          value = g_variant_new_double (qstore_prepared_statement_get_double (statement, i));
          break;
        case QSTORE_SQL_TYPE_TEXT:
          value = g_variant_new_string (qstore_prepared_statement_get_text (statement, i));
          break;
        case QSTORE_SQL_TYPE_BLOB:
          blob = qstore_prepared_statement_get_blob (statement, i);
          value = g_variant_new_from_bytes (G_VARIANT_TYPE_BYTESTRING, blob, TRUE);
          break;
        default:
          g_assert_cmpint (types[i], ==, QSTORE_SQL_TYPE_NULL);
          value = g_variant_new_maybe (G_VARIANT_TYPE_VARIANT, NULL);
          g_assert_null (qstore_prepared_statement_get_text (statement, i));
          break;
        }
      g_variant_ref_sink (value);
      boxed = qstore_prepared_statement_get_value (statement, i);
      g_assert_true (g_variant_equal (boxed, value));
      g_string_append (out, i > 0 ? "|" : "");
      append_printed (out, value);
    }
  g_string_append_c (out, '\n');
  return g_string_free (out, FALSE);
}

/* Every row step() walks, as stepped_row_text() prints them. */
static char *
step_text (QStorePreparedStatement *statement)
{
  g_autoptr(GError) error = NULL;
  GString *out = g_string_new (NULL);

  while (qstore_prepared_statement_step (statement, &error))
    {
      g_autofree char *row = stepped_row_text (statement);

      g_string_append (out, row);
    }
  g_assert_no_error (error);
  return g_string_free (out, FALSE);
}

/* step() walks the rows query() returns, with the same values; a run
 * is read whole at its first step, and ends after its last row, at a
 * bind or at reset(). */
static void
test_step (TestDatabase  *t,
           gconstpointer  data)
{
  g_autoptr(QStorePreparedStatement) select = NULL;
  g_autoptr(QStorePreparedStatement) insert = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *all = NULL;
  g_autofree char *walked = NULL;
  g_autofree char *again = NULL;

  test_exec (t->db, "CREATE TABLE item (id INTEGER PRIMARY KEY, name TEXT, price REAL, "
                    "data BLOB, note)");
  test_exec (t->db, "INSERT INTO item VALUES (1, 'one', 1.5, x'00ff', NULL), "
                    "(2, 'two', NULL, NULL, 7), (3, '', -0.25, x'', 'n'), "
                    "(4, 'f\u00fcr', 4e300, x'41', 2.5)");
  select = prepare_ok (t->db, "SELECT id, name, price, data, note FROM item WHERE id >= ? "
                              "ORDER BY id");
  g_assert_true (qstore_prepared_statement_bind_int64 (select, 1, 1, &error));

  all = run_text (select);
  g_assert_cmpuint (strlen (all), >, 0);
  walked = step_text (select);
  g_assert_cmpstr (walked, ==, all);
  /* Past the last row, the next step runs the statement again. */
  again = step_text (select);
  g_assert_cmpstr (again, ==, all);

  /* The whole run is read at its first step: a row added while it is
   * walked is not in it, and is in the next. */
  g_assert_true (qstore_prepared_statement_step (select, &error));
  g_assert_cmpint (qstore_prepared_statement_get_int64 (select, 0), ==, 1);
  test_exec (t->db, "INSERT INTO item (id, name) VALUES (5, 'five')");
  for (gint64 id = 2; id <= 4; id++)
    {
      g_assert_true (qstore_prepared_statement_step (select, &error));
      g_assert_cmpint (qstore_prepared_statement_get_int64 (select, 0), ==, id);
    }
  g_assert_false (qstore_prepared_statement_step (select, &error));
  g_assert_no_error (error);
  g_clear_pointer (&again, g_free);
  again = step_text (select);
  g_assert_true (g_str_has_suffix (again, "\nint64 5|'five'|@mv nothing|@mv nothing|@mv nothing\n"));

  /* A bind ends the run: the next step reads the new one. */
  g_assert_true (qstore_prepared_statement_step (select, &error));
  g_assert_true (qstore_prepared_statement_step (select, &error));
  g_assert_cmpint (qstore_prepared_statement_get_int64 (select, 0), ==, 2);
  g_assert_true (qstore_prepared_statement_bind_int64 (select, 1, 4, &error));
  g_assert_true (qstore_prepared_statement_step (select, &error));
  g_assert_cmpint (qstore_prepared_statement_get_int64 (select, 0), ==, 4);
  g_assert_cmpstr (qstore_prepared_statement_get_text (select, 1), ==, "f\u00fcr");
  /* So does reset(). */
  g_assert_true (qstore_prepared_statement_step (select, &error));
  g_assert_cmpint (qstore_prepared_statement_get_int64 (select, 0), ==, 5);
  qstore_prepared_statement_reset (select);
  g_assert_true (qstore_prepared_statement_step (select, &error));
  g_assert_cmpint (qstore_prepared_statement_get_int64 (select, 0), ==, 4);
  qstore_prepared_statement_reset (select);

  /* No row to read: a programming error, told as such. */
  g_test_expect_message ("qstore", G_LOG_LEVEL_CRITICAL, "*on_row*");
  g_assert_cmpint (qstore_prepared_statement_get_int64 (select, 0), ==, 0);
  g_test_assert_expected_messages ();

  /* A write runs at its step, which has no row to give; a failing one
   * fails there and changes nothing. */
  insert = prepare_ok (t->db, "INSERT INTO item (id, name) VALUES (?, ?)");
  g_assert_false (qstore_prepared_statement_step (insert, &error));
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  g_assert_true (qstore_prepared_statement_bind_int64 (insert, 1, 6, &error));
  g_assert_true (qstore_prepared_statement_bind_text (insert, 2, "six", &error));
  g_assert_false (qstore_prepared_statement_step (insert, &error));
  g_assert_no_error (error);
  g_assert_cmpint (test_query_int (t->db, "SELECT count(*) FROM item"), ==, 6);
  g_assert_false (qstore_prepared_statement_step (insert, &error));
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_CONSTRAINT);
  g_clear_error (&error);
  g_assert_cmpint (test_query_int (t->db, "SELECT count(*) FROM item"), ==, 6);

  /* After a failed run, the next step runs again. */
  g_assert_true (qstore_prepared_statement_bind_int64 (select, 1, 6, &error));
  g_clear_pointer (&walked, g_free);
  walked = step_text (select);
  g_assert_cmpstr (walked, ==, "int64 6|'six'|@mv nothing|@mv nothing|@mv nothing\n");

  if (test_provider_persistent ())
    {
      g_clear_object (&insert);
      g_clear_object (&select);
      test_database_reopen (t);
      g_assert_cmpint (test_query_int (t->db, "SELECT count(*) FROM item"), ==, 6);
    }
}

static void
set_up (TestDatabase  *t,
        gconstpointer  data)
{
  test_database_set_up (t, "qstore-prepared-XXXXXX");
}

int
main (int   argc,
      char *argv[])
{
  static const struct
  {
    const char *path;
    void (*func) (TestDatabase *, gconstpointer);
  } tests[] = {
    { "/prepared/values", test_values },
    { "/prepared/reuse", test_reuse },
    { "/prepared/named", test_named },
    { "/prepared/errors", test_errors },
    { "/prepared/ddl-between-runs", test_ddl_between_runs },
    { "/prepared/transaction", test_transaction },
    { "/prepared/outlives-database", test_outlives_database },
    { "/prepared/step", test_step },
  };

  g_test_init (&argc, &argv, NULL);

  for (guint i = 0; i < G_N_ELEMENTS (tests); i++)
    g_test_add (tests[i].path, TestDatabase, NULL,
                set_up, tests[i].func, test_database_tear_down);

  return g_test_run ();
}
