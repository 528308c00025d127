/* test-params.c: parameters and result values at their edges, named
 * parameters, qstore_database_execute() and syntax errors
 *
 * Values that reach a qstore table are compared with the same values in a
 * TEMP table of the same database, which is an ordinary SQLite table: the
 * two must store and return the same thing.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <math.h>

#include "qstore-test-util.h"

#define COLUMNS "(k INTEGER PRIMARY KEY, x, r REAL, i INTEGER, n NUMERIC, t TEXT, b BLOB)"

static void
append_printed (GString  *out,
                GVariant *value)
{
  g_autofree char *printed = g_variant_print (value, TRUE);

  g_string_append (out, printed);
}

static QStoreResult *
query_ok (QStoreDatabase *db,
          const char     *sql,
          GVariant       *params)
{
  g_autoptr(GError) error = NULL;
  QStoreResult *result = qstore_database_query (db, sql, params, &error);

  if (result == NULL)
    g_error ("“%s” failed: %s", sql, error->message);
  return result;
}

static gint64
execute_ok (QStoreDatabase *db,
            const char     *sql,
            GVariant       *params)
{
  g_autoptr(GError) error = NULL;
  gint64 changes = qstore_database_execute (db, sql, params, &error);

  if (changes < 0)
    g_error ("“%s” failed: %s", sql, error->message);
  g_assert_no_error (error);
  return changes;
}

/* qstore_database_execute() must fail with @code, saying @part. */
static void
execute_fails (QStoreDatabase *db,
               const char     *sql,
               GVariant       *params,
               QStoreError     code,
               const char     *part)
{
  g_autoptr(GError) error = NULL;

  g_assert_cmpint (qstore_database_execute (db, sql, params, &error), ==, -1);
  if (!g_error_matches (error, QSTORE_ERROR, code))
    g_error ("“%s” failed with %d (“%s”), not %d", sql, error ? error->code : -1,
             error ? error->message : "no error", code);
  if (part != NULL && strstr (error->message, part) == NULL)
    g_error ("“%s” failed with “%s”, which does not say “%s”", sql, error->message, part);
}

/* The first row of @sql with @params, printed. */
static char *
first_row (QStoreDatabase *db,
           const char     *sql,
           GVariant       *params)
{
  g_autoptr(QStoreResult) result = query_ok (db, sql, params);

  g_assert_cmpuint (qstore_result_get_n_rows (result), >=, 1);
  return g_variant_print (qstore_result_get_row (result, 0), FALSE);
}

static GVariant *
one (GVariant *value)
{
  return g_variant_new_tuple (&value, 1);
}

/* One value bound alone: what SQLite makes of it. */
typedef struct
{
  const char *value;      /* GVariant text */
  const char *described;  /* (typeof, quote, length) as printed */
} BoundCase;

static const BoundCase bound_cases[] = {
  { "@ay []", "(<'blob'>, <\"X''\">, <int64 0>)" },
  { "''", "(<'text'>, <\"''\">, <int64 0>)" },
  { "@ay [0x00, 0xff]", "(<'blob'>, <\"X'00FF'\">, <int64 2>)" },
  { "0.0", "(<'real'>, <'0.0'>, <int64 3>)" },
  { "-0.0", "(<'real'>, <'0.0'>, <int64 3>)" },
  { "@d inf", "(<'real'>, <'Inf'>, <int64 3>)" },
  { "@d -inf", "(<'real'>, <'-Inf'>, <int64 4>)" },
  { "@d nan", "(<'null'>, <'NULL'>, <@mv nothing>)" },
  { "@x 9223372036854775807", "(<'integer'>, <'9223372036854775807'>, <int64 19>)" },
  { "@x -9223372036854775808", "(<'integer'>, <'-9223372036854775808'>, <int64 20>)" },
  { "@t 9223372036854775807", "(<'integer'>, <'9223372036854775807'>, <int64 19>)" },
  { "@y 255", "(<'integer'>, <'255'>, <int64 3>)" },
  { "true", "(<'integer'>, <'1'>, <int64 1>)" },
  { "false", "(<'integer'>, <'0'>, <int64 1>)" },
  { "@mv nothing", "(<'null'>, <'NULL'>, <@mv nothing>)" },
  { "<<'boxed'>>", "(<'text'>, <\"'boxed'\">, <int64 5>)" },
  { "'\\u00e9\\U0001f600'", "(<'text'>, <\"'é😀'\">, <int64 2>)" },
};

static void
test_bound_values (TestDatabase  *t,
                   gconstpointer  data)
{
  for (guint i = 0; i < G_N_ELEMENTS (bound_cases); i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(GVariant) value = g_variant_parse (NULL, bound_cases[i].value, NULL, NULL, &error);
      g_autofree char *row = NULL;

      g_assert_no_error (error);
      row = first_row (t->db, "SELECT typeof(?1), quote(?1), length(?1)", one (value));
      g_test_message ("%s → %s", bound_cases[i].value, row);
      g_assert_cmpstr (row, ==, bound_cases[i].described);
    }
}

/* What comes back is what went in, to the bit. */
static void
test_returned_values (TestDatabase  *t,
                      gconstpointer  data)
{
  g_autoptr(QStoreResult) result = NULL;
  g_autoptr(GVariant) value = NULL;
  gsize len = 99;

  result = query_ok (t->db, "SELECT ?1, ?2, ?3, ?4, ?5",
                     g_variant_new ("(@ay@sdxx)",
                                    g_variant_new_fixed_array (G_VARIANT_TYPE_BYTE, NULL, 0, 1),
                                    g_variant_new_string (""), -0.0,
                                    G_MAXINT64, G_MININT64));

  value = qstore_result_get_value (result, 0, 0);
  g_assert_true (g_variant_is_of_type (value, G_VARIANT_TYPE_BYTESTRING));
  g_variant_get_fixed_array (value, &len, 1);
  g_assert_cmpuint (len, ==, 0);
  g_clear_pointer (&value, g_variant_unref);

  value = qstore_result_get_value (result, 0, 1);
  g_assert_cmpstr (g_variant_get_type_string (value), ==, "s");
  g_assert_cmpstr (g_variant_get_string (value, NULL), ==, "");
  g_clear_pointer (&value, g_variant_unref);

  value = qstore_result_get_value (result, 0, 2);
  g_assert_true (g_variant_get_double (value) == 0.0);
  g_assert_true (signbit (g_variant_get_double (value)));
  g_clear_pointer (&value, g_variant_unref);

  value = qstore_result_get_value (result, 0, 3);
  g_assert_cmpint (g_variant_get_int64 (value), ==, G_MAXINT64);
  g_clear_pointer (&value, g_variant_unref);
  value = qstore_result_get_value (result, 0, 4);
  g_assert_cmpint (g_variant_get_int64 (value), ==, G_MININT64);
}

/* Text GVariant cannot hold: a NUL inside, bytes that are not UTF-8. */
static void
test_unrepresentable_text (TestDatabase  *t,
                           gconstpointer  data)
{
  static const guint8 nul_inside[] = { 'a', 0, 'b' };
  static const guint8 not_utf8[] = { 'a', 0xff };
  g_autofree char *row = NULL;
  g_autoptr(QStoreResult) result = NULL;
  g_autoptr(GVariant) exact = NULL;
  const guint8 *data_out;
  gsize len;

  test_exec (t->db, "CREATE TABLE v " COLUMNS);
  g_assert_cmpint (execute_ok (t->db, "INSERT INTO v (k, t) VALUES (1, CAST(?1 AS TEXT)), "
                                      "(2, CAST(?2 AS TEXT))",
                               g_variant_new ("(@ay@ay)",
                                              g_variant_new_fixed_array (G_VARIANT_TYPE_BYTE,
                                                                         nul_inside, 3, 1),
                                              g_variant_new_fixed_array (G_VARIANT_TYPE_BYTE,
                                                                         not_utf8, 2, 1))),
                   ==, 2);

  /* Stored as they are: text, every byte kept. */
  row = test_query_text (t->db, "SELECT k, typeof(t), hex(t) FROM v ORDER BY k", append_printed);
  g_assert_cmpstr (row, ==,
                   "int64 1|'text'|'610062'\n"
                   "int64 2|'text'|'61FF'\n");

  /* Read as text, they are made valid (a GVariant string holds neither);
   * read as a blob, they come back exactly. */
  g_clear_pointer (&row, g_free);
  row = test_query_text (t->db, "SELECT t FROM v ORDER BY k", append_printed);
  g_assert_cmpstr (row, ==, "'a\xef\xbf\xbd" "b'\n'a\xef\xbf\xbd'\n");

  result = query_ok (t->db, "SELECT CAST(t AS BLOB) FROM v WHERE k = ?", g_variant_new ("(x)", 1));
  exact = qstore_result_get_value (result, 0, 0);
  data_out = g_variant_get_fixed_array (exact, &len, 1);
  g_assert_cmpmem (data_out, len, nul_inside, sizeof nul_inside);

  /* Reading changed nothing. */
  g_clear_pointer (&row, g_free);
  row = test_query_text (t->db, "SELECT hex(t) FROM v ORDER BY k", append_printed);
  g_assert_cmpstr (row, ==, "'610062'\n'61FF'\n");
}

/* Each edge value in every column affinity, in a qstore table and in a
 * TEMP (plain SQLite) table: both must hold the same. */
static const char *const stored_values[] = {
  "@ay []", "''", "0.0", "-0.0", "@d inf", "@d nan", "@x 9223372036854775807",
  "@x -9223372036854775808", "9.2233720368547758e18", "true", "'12'", "'-0.0'", "' 7 '",
  "@ay [0x00]", "'0x10'", "@mv nothing",
};

static void
test_stored_values (TestDatabase  *t,
                    gconstpointer  data)
{
  static const char select[] =
    "SELECT k, typeof(x), quote(x), typeof(r), quote(r), typeof(i), quote(i), "
    "typeof(n), quote(n), typeof(t), quote(t), typeof(b), quote(b) FROM %s ORDER BY k";
  g_autofree char *ours_sql = g_strdup_printf (select, "v");
  g_autofree char *ref_sql = g_strdup_printf (select, "ref");
  g_autofree char *ours = NULL;
  g_autofree char *ref = NULL;
  g_autoptr(QStoreResult) ours_signs = NULL;
  g_autoptr(QStoreResult) ref_signs = NULL;

  test_exec (t->db, "CREATE TABLE v " COLUMNS "; CREATE TEMP TABLE ref " COLUMNS);

  for (guint i = 0; i < G_N_ELEMENTS (stored_values); i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(GVariant) value = g_variant_parse (NULL, stored_values[i], NULL, NULL, &error);
      g_autoptr(GVariant) params = NULL;

      g_assert_no_error (error);
      params = g_variant_ref_sink (g_variant_new ("(xv)", (gint64) i + 1, value));
      g_assert_cmpint (execute_ok (t->db, "INSERT INTO v VALUES (?1, ?2, ?2, ?2, ?2, ?2, ?2)",
                                   params), ==, 1);
      g_assert_cmpint (execute_ok (t->db, "INSERT INTO ref VALUES (?1, ?2, ?2, ?2, ?2, ?2, ?2)",
                                   params), ==, 1);
    }

  ours = test_query_text (t->db, ours_sql, append_printed);
  ref = test_query_text (t->db, ref_sql, append_printed);
  g_test_message ("%s", ours);
  g_assert_cmpstr (ours, ==, ref);

  /* quote() does not show the sign of zero: the values themselves do. */
  ours_signs = query_ok (t->db, "SELECT x, r FROM v WHERE k = 4", NULL);
  ref_signs = query_ok (t->db, "SELECT x, r FROM ref WHERE k = 4", NULL);
  for (guint column = 0; column < 2; column++)
    {
      g_autoptr(GVariant) a = qstore_result_get_value (ours_signs, 0, column);
      g_autoptr(GVariant) b = qstore_result_get_value (ref_signs, 0, column);

      g_assert_cmpstr (g_variant_get_type_string (a), ==, "d");
      g_assert_cmpint (signbit (g_variant_get_double (a)), ==, signbit (g_variant_get_double (b)));
    }
}

/* Edge values as primary keys and in lookups. */
static void
test_key_values (TestDatabase  *t,
                 gconstpointer  data)
{
  static const char *const keys[] = {
    "@ay []", "''", "0.0", "@x 9223372036854775807", "@x -9223372036854775808", "@ay [0x00]",
  };
  g_autofree char *ours = NULL;
  g_autofree char *ref = NULL;
  g_autofree char *found = NULL;
  g_autoptr(QStoreResult) result = NULL;

  test_exec (t->db, "CREATE TABLE kv (k PRIMARY KEY, note); CREATE TEMP TABLE ref (k PRIMARY KEY, note)");
  for (guint i = 0; i < G_N_ELEMENTS (keys); i++)
    {
      g_autoptr(GVariant) key = g_variant_parse (NULL, keys[i], NULL, NULL, NULL);
      g_autoptr(GVariant) params = g_variant_ref_sink (g_variant_new ("(vs)", key, keys[i]));

      execute_ok (t->db, "INSERT INTO kv VALUES (?, ?)", params);
      execute_ok (t->db, "INSERT INTO ref VALUES (?, ?)", params);
    }

  /* -0.0 is 0.0: the key is taken, as in SQLite. */
  execute_fails (t->db, "INSERT INTO kv VALUES (?, 'minus zero')", g_variant_new ("(d)", -0.0),
                 QSTORE_ERROR_CONSTRAINT, "UNIQUE");
  execute_fails (t->db, "INSERT INTO ref VALUES (?, 'minus zero')", g_variant_new ("(d)", -0.0),
                 QSTORE_ERROR_CONSTRAINT, "UNIQUE");

  ours = test_query_text (t->db, "SELECT typeof(k), quote(k), note FROM kv ORDER BY k", append_printed);
  ref = test_query_text (t->db, "SELECT typeof(k), quote(k), note FROM ref ORDER BY k", append_printed);
  g_assert_cmpstr (ours, ==, ref);

  /* The empty blob is found as a blob: not as empty text, not as NULL. */
  result = query_ok (t->db, "SELECT note FROM kv WHERE k = ?",
                     one (g_variant_new_fixed_array (G_VARIANT_TYPE_BYTE, NULL, 0, 1)));
  found = test_result_text (result, append_printed);
  g_assert_cmpstr (found, ==, "'@ay []'\n");
}

/* NaN becomes NULL when bound, as SQLite makes it: a NOT NULL column
 * refuses it. */
static void
test_nan (TestDatabase  *t,
          gconstpointer  data)
{
  g_autofree char *rows = NULL;

  test_exec (t->db, "CREATE TABLE m (k INTEGER PRIMARY KEY, v REAL NOT NULL, w REAL);"
                    "CREATE TEMP TABLE ref (k INTEGER PRIMARY KEY, v REAL NOT NULL, w REAL)");
  execute_fails (t->db, "INSERT INTO m VALUES (1, ?, 0)", g_variant_new ("(d)", NAN),
                 QSTORE_ERROR_CONSTRAINT, "NOT NULL constraint failed: m.v");
  execute_fails (t->db, "INSERT INTO ref VALUES (1, ?, 0)", g_variant_new ("(d)", NAN),
                 QSTORE_ERROR_CONSTRAINT, "NOT NULL constraint failed: ref.v");
  g_assert_cmpint (execute_ok (t->db, "INSERT INTO m VALUES (2, 1, ?)", g_variant_new ("(d)", NAN)),
                   ==, 1);
  rows = test_query_text (t->db, "SELECT k, typeof(w) FROM m", append_printed);
  g_assert_cmpstr (rows, ==, "int64 2|'null'\n");
}

static void
test_unsupported_values (TestDatabase  *t,
                         gconstpointer  data)
{
  execute_fails (t->db, "SELECT ?", g_variant_new ("(t)", (guint64) G_MAXINT64 + 1),
                 QSTORE_ERROR_INVALID_ARGUMENT, "Parameter 1: Integer 9223372036854775808");
  execute_fails (t->db, "SELECT ?, ?", g_variant_new ("(s(ii))", "x", 1, 2),
                 QSTORE_ERROR_INVALID_ARGUMENT, "Parameter 2: A value of type “(ii)”");
  execute_fails (t->db, "SELECT :a", g_variant_new_parsed ("{'a': <['x']>}"),
                 QSTORE_ERROR_INVALID_ARGUMENT, "Parameter :a: A value of type “as”");
  execute_fails (t->db, "SELECT ?", g_variant_new_parsed ("['x']"),
                 QSTORE_ERROR_INVALID_ARGUMENT, "Parameters of type “as” cannot be bound");
  execute_fails (t->db, "SELECT ?", g_variant_new_parsed ("{1: <2>}"),
                 QSTORE_ERROR_INVALID_ARGUMENT, "“a{iv}”");
}

/* Named parameters */

static void
test_named (TestDatabase  *t,
            gconstpointer  data)
{
  g_autofree char *row = NULL;

  /* Each prefix, keyed without it or with it. */
  row = first_row (t->db, "SELECT :a, @b, $c, :a || @b",
                   g_variant_new_parsed ("{'a': <'x'>, '@b': <int64 2>, 'c': <@ay []>}"));
  g_assert_cmpstr (row, ==, "(<'x'>, <int64 2>, <@ay []>, <'x2'>)");

  /* `a{ss}` or any `a{s*}` is a dictionary too; a key may name several
   * parameters that differ only in their prefix. */
  g_clear_pointer (&row, g_free);
  row = first_row (t->db, "SELECT :v, $v", g_variant_new_parsed ("{'v': 'same'}"));
  g_assert_cmpstr (row, ==, "(<'same'>, <'same'>)");

  /* `?NNN` and named parameters by position, from a tuple. */
  g_clear_pointer (&row, g_free);
  row = first_row (t->db, "SELECT :b, :a", g_variant_new ("(ss)", "first", "second"));
  g_assert_cmpstr (row, ==, "(<'first'>, <'second'>)");

  test_exec (t->db, "CREATE TABLE item (id INTEGER PRIMARY KEY, name TEXT, price REAL)");
  g_assert_cmpint (execute_ok (t->db, "INSERT INTO item (name, price) VALUES (:name, :price)",
                               g_variant_new_parsed ("{'name': <'pear'>, 'price': <0.5>}")), ==, 1);
  g_assert_cmpint (execute_ok (t->db, "UPDATE item SET price = :price WHERE name = :name",
                               g_variant_new_parsed ("{':name': <'pear'>, ':price': <0.25>}")),
                   ==, 1);
  g_clear_pointer (&row, g_free);
  row = test_query_text (t->db, "SELECT name, price FROM item", append_printed);
  g_assert_cmpstr (row, ==, "'pear'|0.25\n");
}

static void
test_named_errors (TestDatabase  *t,
                   gconstpointer  data)
{
  test_exec (t->db, "CREATE TABLE item (id INTEGER PRIMARY KEY, name TEXT)");

  execute_fails (t->db, "INSERT INTO item (name) VALUES (:name)", g_variant_new_parsed ("@a{sv} {}"),
                 QSTORE_ERROR_INVALID_ARGUMENT,
                 "No value for parameter “:name”: add the key “name” to the dictionary");
  execute_fails (t->db, "INSERT INTO item (name) VALUES (:name)",
                 g_variant_new_parsed ("{'name': <'x'>, 'nmae': <'y'>}"),
                 QSTORE_ERROR_INVALID_ARGUMENT,
                 "“nmae” is not a parameter of the statement (its parameters: :name)");
  execute_fails (t->db, "INSERT INTO item (name) VALUES (:name)",
                 g_variant_new_parsed ("{'name': <'x'>, ':name': <'y'>}"),
                 QSTORE_ERROR_INVALID_ARGUMENT, "given twice");
  execute_fails (t->db, "INSERT INTO item (id, name) VALUES (?, :name)",
                 g_variant_new_parsed ("{'name': <'x'>}"),
                 QSTORE_ERROR_INVALID_ARGUMENT, "Parameter 1 (“?”) is positional");
  execute_fails (t->db, "INSERT INTO item (id, name) VALUES (?1, :name)",
                 g_variant_new_parsed ("{'name': <'x'>}"),
                 QSTORE_ERROR_INVALID_ARGUMENT, "Parameter 1 (“?1”) is positional");
  execute_fails (t->db, "INSERT INTO item (id, name) VALUES (?, ?)", g_variant_new ("(x)", 1),
                 QSTORE_ERROR_INVALID_ARGUMENT, "The statement takes 2 parameters but 1 was given");
  execute_fails (t->db, "INSERT INTO item (name) VALUES ('x')", g_variant_new ("(x)", 1),
                 QSTORE_ERROR_INVALID_ARGUMENT, "The statement takes 0 parameters but 1 was given");
  execute_fails (t->db, "INSERT INTO item (name) VALUES ('x')", g_variant_new_parsed ("{'a': <1>}"),
                 QSTORE_ERROR_INVALID_ARGUMENT, "(its parameters: none)");

  /* Nothing was written by the refused statements. */
  g_assert_cmpint (execute_ok (t->db, "DELETE FROM item", NULL), ==, 0);
}

/* qstore_database_execute() */

static void
test_execute (TestDatabase  *t,
              gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *rows = NULL;

  g_assert_cmpint (execute_ok (t->db, "CREATE TABLE item (id INTEGER PRIMARY KEY, name TEXT UNIQUE)",
                               NULL), ==, 0);
  g_assert_cmpint (execute_ok (t->db, "INSERT INTO item (name) VALUES (?), (?), (?)",
                               g_variant_new ("(sss)", "a", "b", "c")), ==, 3);
  g_assert_cmpint (execute_ok (t->db, "INSERT OR IGNORE INTO item (name) VALUES (?), (?)",
                               g_variant_new ("(ss)", "a", "d")), ==, 1);
  g_assert_cmpint (execute_ok (t->db, "UPDATE item SET name = upper(name) WHERE id > ?",
                               g_variant_new ("(x)", 1)), ==, 3);
  g_assert_cmpint (execute_ok (t->db, "SELECT * FROM item", NULL), ==, 0);
  g_assert_cmpint (execute_ok (t->db, "DELETE FROM item WHERE name = ?", g_variant_new ("(s)", "B")),
                   ==, 1);
  /* Without parameters, a statement's parameters are NULL. */
  g_assert_cmpint (execute_ok (t->db, "DELETE FROM item WHERE name IS ?", NULL), ==, 0);

  execute_fails (t->db, "INSERT INTO item (name) VALUES (?)", g_variant_new ("(s)", "a"),
                 QSTORE_ERROR_CONSTRAINT, "UNIQUE constraint failed: item.name");
  execute_fails (t->db, "INSERT INTO item (name) VALUES ('y'); INSERT INTO item (name) VALUES ('z')",
                 NULL, QSTORE_ERROR_INVALID_ARGUMENT, "Only one statement runs here");

  /* Inside a transaction the count is the statement's own. */
  g_assert_cmpint (execute_ok (t->db, "BEGIN", NULL), ==, 0);
  g_assert_cmpint (execute_ok (t->db, "INSERT INTO item (name) VALUES (?)", g_variant_new ("(s)", "e")),
                   ==, 1);
  g_assert_cmpint (execute_ok (t->db, "ROLLBACK", NULL), ==, 0);

  rows = test_query_text (t->db, "SELECT id, name FROM item ORDER BY id", append_printed);
  g_assert_cmpstr (rows, ==, "int64 1|'a'\nint64 3|'C'\nint64 4|'D'\n");

  if (test_provider_persistent ())
    test_database_reopen (t);
  g_assert_cmpint (execute_ok (t->db, "DELETE FROM item", NULL), ==, 3);
}

/* Syntax errors */

static void
test_syntax_errors (TestDatabase  *t,
                    gconstpointer  data)
{
  static const struct
  {
    const char *sql;
    const char *part;
  } cases[] = {
    { "SELEC 1", "near \"SELEC\": syntax error" },
    { "SELECT (1", "incomplete input" },
    { "SELECT 'unterminated", "unrecognized token" },
    { "CREATE TABLE u (a,", "incomplete input" },
    { "INSERT INTO nowhere VALUES", "incomplete input" },
    { "ALTER TABLE t ALTER COLUMN a SET NULL", "near \"SET\"" },
  };

  test_exec (t->db, "CREATE TABLE t (a PRIMARY KEY)");
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(QStoreResult) result = NULL;

      test_exec_fails (t->db, cases[i].sql, QSTORE_ERROR_SYNTAX, cases[i].part);
      result = qstore_database_query (t->db, cases[i].sql, NULL, &error);
      g_assert_null (result);
      g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_SYNTAX);
      execute_fails (t->db, cases[i].sql, NULL, QSTORE_ERROR_SYNTAX, cases[i].part);
    }

  /* What parses but does not make sense keeps its own code. */
  test_exec_fails (t->db, "SELECT nosuch FROM t", QSTORE_ERROR_NOT_FOUND, "no such column");
  test_exec_fails (t->db, "SELECT count(1, 2)", QSTORE_ERROR_INVALID_ARGUMENT,
                   "wrong number of arguments");
}

static void
set_up (TestDatabase  *t,
        gconstpointer  data)
{
  test_database_set_up (t, "qstore-params-XXXXXX");
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
    { "/params/bound-values", test_bound_values },
    { "/params/returned-values", test_returned_values },
    { "/params/unrepresentable-text", test_unrepresentable_text },
    { "/params/stored-values", test_stored_values },
    { "/params/key-values", test_key_values },
    { "/params/nan", test_nan },
    { "/params/unsupported-values", test_unsupported_values },
    { "/params/named", test_named },
    { "/params/named-errors", test_named_errors },
    { "/params/execute", test_execute },
    { "/params/syntax-errors", test_syntax_errors },
  };

  g_test_init (&argc, &argv, NULL);

  for (guint i = 0; i < G_N_ELEMENTS (tests); i++)
    g_test_add (tests[i].path, TestDatabase, NULL,
                set_up, tests[i].func, test_database_tear_down);

  return g_test_run ();
}
