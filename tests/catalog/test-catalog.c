/* test-catalog.c: the catalog, its rehydration, views, reclaim, the
 * read-only listing and `qstore catalog`
 *
 * Usage: test-catalog [--tap] PATH-TO-QSTORE, with QSTORE_TEST_PROVIDER set
 * to a provider name. Also run by itself as `test-catalog --hold URI`: it
 * then keeps the database at URI open for writing until its input ends.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include <gio/gio.h>
#include <json-glib/json-glib.h>
#include <qstore.h>

#include "qstore-test-util.h"

static const char *qstore_path;
static const char *self_path;

typedef TestDatabase Fixture;

static void
fixture_setup (Fixture       *f,
               gconstpointer  data)
{
  test_database_set_up (f, "qstore-catalog-XXXXXX");
}

static gboolean
skip_unless_persistent (void)
{
  if (test_provider_persistent ())
    return FALSE;
  g_test_skip ("the provider keeps nothing across a close");
  return TRUE;
}

/* Statements, on the fixture's database */

#define exec_ok(f, sql) test_exec ((f)->db, (sql))
#define exec_fails(f, sql, code, part) test_exec_fails ((f)->db, (sql), (code), (part))

/* Rows are compared as text: values separated by `|`, rows by newlines,
 * NULL as `NULL`. */
static void
append_value (GString  *out,
              GVariant *value)
{
  g_autoptr(GVariant) plain = g_variant_ref (value);

  while (g_variant_is_of_type (plain, G_VARIANT_TYPE_VARIANT))
    {
      GVariant *inner = g_variant_get_variant (plain);

      g_variant_unref (plain);
      plain = inner;
    }
  if (qstore_value_is_null (plain))
    g_string_append (out, "NULL");
  else if (g_variant_is_of_type (plain, G_VARIANT_TYPE_INT64))
    g_string_append_printf (out, "%" G_GINT64_FORMAT, g_variant_get_int64 (plain));
  else if (g_variant_is_of_type (plain, G_VARIANT_TYPE_STRING))
    g_string_append (out, g_variant_get_string (plain, NULL));
  else
    {
      g_autofree char *printed = g_variant_print (plain, FALSE);

      g_string_append (out, printed);
    }
}

static void
assert_rows (Fixture    *f,
             const char *sql,
             const char *expected)
{
  g_autofree char *got = test_query_text (f->db, sql, append_value);

  g_assert_cmpstr (got, ==, expected);
}

/* The catalog */

static char *
hex (const guint8 *data,
     gsize         len)
{
  GString *out = g_string_new (NULL);

  for (gsize i = 0; i < len; i++)
    g_string_append_printf (out, "%02x", data[i]);
  return g_string_free (out, FALSE);
}

/* Every key and value of @provider's catalog store, one `key=value` line
 * each, in hexadecimal. */
static char *
dump_provider_catalog (QStoreProvider *provider)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(QStoreKV) catalog = qstore_provider_get_catalog_store (provider, &error);
  g_autoptr(QStoreIter) iter = NULL;
  GString *out = g_string_new (NULL);

  g_assert_no_error (error);
  iter = qstore_kv_iterate (catalog, NULL, &error);
  g_assert_no_error (error);
  while (qstore_iter_next (iter, &error))
    {
      gsize key_len, value_len;
      const guint8 *key = qstore_iter_peek_key (iter, &key_len);
      const guint8 *value = qstore_iter_peek_value (iter, &value_len);
      g_autofree char *key_hex = hex (key, key_len);
      g_autofree char *value_hex = hex (value, value_len);

      g_string_append_printf (out, "%s=%s\n", key_hex, value_hex);
    }
  g_assert_no_error (error);
  return g_string_free (out, FALSE);
}

/* The catalog of the closed store at @uri, read through a read-only
 * provider. */
static char *
dump_closed_catalog (const char *uri)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(QStoreProvider) provider = qstore_provider_new_for_uri (uri, QSTORE_OPEN_READ_ONLY,
                                                                     &error);
  char *dump;

  g_assert_no_error (error);
  dump = dump_provider_catalog (provider);
  qstore_provider_close_all (provider);
  return dump;
}

static GBytes *
read_catalog (QStoreProvider *provider,
              GBytes         *key)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(QStoreKV) catalog = qstore_provider_get_catalog_store (provider, &error);
  GBytes *value;
  gsize key_len;
  const guint8 *key_data = g_bytes_get_data (key, &key_len);

  g_assert_no_error (error);
  value = qstore_kv_get (catalog, key_data, key_len, &error);
  g_assert_no_error (error);
  return value;
}

static void
write_catalog (QStoreProvider *provider,
               GBytes         *key,
               const char     *value,
               gsize           value_len)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(QStoreKV) catalog = qstore_provider_get_catalog_store (provider, &error);
  gsize key_len;
  const guint8 *key_data = g_bytes_get_data (key, &key_len);

  g_assert_no_error (error);
  qstore_kv_put (catalog, key_data, key_len, (const guint8 *) value, value_len,
                 QSTORE_WRITE_SYNC, &error);
  g_assert_no_error (error);
}

static void
assert_clean_result (Fixture *f)
{
  QStoreRehydrationResult *result = qstore_database_get_rehydration_result (f->db);

  g_assert_nonnull (result);
  for (guint i = 0; i < qstore_rehydration_result_get_n_errors (result); i++)
    g_error ("catalog entry “%s” did not load: %s",
             qstore_rehydration_result_get_error_name (result, i),
             qstore_rehydration_result_get_error_message (result, i));
}

/* The error of @result about entry @name, or -1. */
static int
find_error (QStoreRehydrationResult *result,
            const char              *name)
{
  for (guint i = 0; i < qstore_rehydration_result_get_n_errors (result); i++)
    if (g_str_equal (qstore_rehydration_result_get_error_name (result, i), name))
      return (int) i;
  return -1;
}

static gboolean
store_has_entries (QStoreProvider *provider,
                   const char     *name)
{
  g_autoptr(GError) error = NULL;
  g_auto(GStrv) names = qstore_provider_list_stores (provider, &error);

  g_assert_no_error (error);
  return g_strv_contains ((const char * const *) names, name);
}

/* Close, reopen twice: the catalog bytes after the first and the second
 * reopen are the same, and the result lists no error. */
static void
reopen_twice_stable (Fixture    *f,
                     const char *after)
{
  g_autofree char *first = NULL;
  g_autofree char *second = NULL;

  test_close_database (&f->db);
  f->db = test_open_database (f->uri, QSTORE_OPEN_NONE);
  assert_clean_result (f);
  test_close_database (&f->db);
  first = dump_closed_catalog (f->uri);

  f->db = test_open_database (f->uri, QSTORE_OPEN_NONE);
  assert_clean_result (f);
  test_close_database (&f->db);
  second = dump_closed_catalog (f->uri);

  if (!g_str_equal (first, second))
    g_error ("after %s, the catalog changed between two reopens:\n%s\n---\n%s",
             after, first, second);

  f->db = test_open_database (f->uri, QSTORE_OPEN_NONE);
}

/* Tests */

static void
test_reopen_every_ddl (Fixture       *f,
                       gconstpointer  data)
{
  static const struct
  {
    const char *sql;
    const char *probe;
    const char *expected;
  } steps[] = {
    { "CREATE TABLE p (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE COLLATE NOCASE);"
      "INSERT INTO p VALUES (1, 'one'), (2, 'two')",
      "SELECT id FROM p WHERE name = 'ONE'", "1\n" },
    { "CREATE TABLE t (k TEXT PRIMARY KEY COLLATE NOCASE, a INTEGER DEFAULT 0 CHECK (a >= 0), "
      "b TEXT, p INTEGER REFERENCES p (id), UNIQUE (a, b));"
      "INSERT INTO t VALUES ('x', 1, 'b1', 1), ('Y', 2, 'b2', 2), ('z', 0, 'b0', 1)",
      "SELECT k FROM t WHERE k = 'y'", "Y\n" },
    { "CREATE INDEX t_b ON t (b DESC)",
      "SELECT k FROM t ORDER BY b DESC", "Y\nx\nz\n" },
    { "CREATE UNIQUE INDEX t_pa ON t (p, a) WHERE a > 0",
      "SELECT count(*) FROM t WHERE p = 1 AND a > 0", "1\n" },
    { "CREATE VIEW v AS SELECT k, a FROM t WHERE a > 0",
      "SELECT k FROM v ORDER BY k", "x\nY\n" },
    { "ALTER TABLE t ADD COLUMN c TEXT DEFAULT 'cc'",
      "SELECT group_concat(c) FROM t", "cc,cc,cc\n" },
    { "ALTER TABLE t RENAME COLUMN c TO d",
      "SELECT count(d) FROM t", "3\n" },
    { "ALTER TABLE t DROP COLUMN d",
      "SELECT count(*) FROM t", "3\n" },
    { "ALTER TABLE t RENAME TO t2",
      "SELECT k FROM v ORDER BY k", "x\nY\n" },
    { "DROP INDEX t_b",
      "SELECT k FROM t2 ORDER BY b", "z\nx\nY\n" },
    { "DROP VIEW v",
      "SELECT count(*) FROM sqlite_master WHERE type = 'view'", "0\n" },
    { "CREATE VIEW w AS SELECT count(*) AS n FROM t2",
      "SELECT n FROM w", "3\n" },
    { "CREATE TABLE gone (a PRIMARY KEY, b UNIQUE); INSERT INTO gone VALUES (1, 2);"
      "CREATE INDEX gone_b ON gone (b)",
      "SELECT b FROM gone", "2\n" },
    { "DROP TABLE gone",
      "SELECT count(*) FROM t2", "3\n" },
  };

  if (skip_unless_persistent ())
    return;

  for (guint i = 0; i < G_N_ELEMENTS (steps); i++)
    {
      g_test_message ("step %u: %s", i, steps[i].sql);
      exec_ok (f, steps[i].sql);
      reopen_twice_stable (f, steps[i].sql);
      assert_rows (f, steps[i].probe, steps[i].expected);
    }

  /* What is left reads back as it was made. */
  {
    QStoreRehydrationResult *result = qstore_database_get_rehydration_result (f->db);
    const char * const *tables = qstore_rehydration_result_get_tables (result);
    const char * const *indexes = qstore_rehydration_result_get_indexes (result);
    const char * const *views = qstore_rehydration_result_get_views (result);

    g_assert_cmpuint (g_strv_length ((char **) tables), ==, 2);
    g_assert_true (test_strv_has (tables, "main.p"));
    g_assert_true (test_strv_has (tables, "main.t2"));
    g_assert_true (test_strv_has (indexes, "main.t_pa"));
    g_assert_true (test_strv_has (indexes, "main.sqlite_autoindex_t2_2"));
    g_assert_false (test_strv_has (indexes, "main.t_b"));
    g_assert_cmpuint (g_strv_length ((char **) views), ==, 1);
    g_assert_true (test_strv_has (views, "main.w"));
    g_assert_cmpuint (g_strv_length ((char **) qstore_rehydration_result_get_materialized_views (result)),
                      ==, 0);
  }

  /* The constraints came back too. */
  exec_fails (f, "INSERT INTO t2 VALUES ('x', 5, 'b', 2)", QSTORE_ERROR_CONSTRAINT,
              "UNIQUE constraint failed: t2.k");
  exec_fails (f, "INSERT INTO t2 VALUES ('q', -1, 'b', 2)", QSTORE_ERROR_CONSTRAINT, "CHECK");
  exec_fails (f, "INSERT INTO t2 VALUES ('q', 1, 'b', 1)", QSTORE_ERROR_CONSTRAINT,
              "UNIQUE constraint failed: t2.p, t2.a");
  exec_ok (f, "INSERT INTO t2 VALUES ('q', 7, 'b7', 1)");
  assert_rows (f, "SELECT n FROM w", "4\n");
}

/* Writing what the catalog already holds writes nothing: no transaction
 * is spent on it. */
static void
test_compare_write (Fixture       *f,
                    gconstpointer  data)
{
  QStoreCoordinator *coordinator;
  g_autofree char *before = NULL;
  g_autofree char *after = NULL;
  guint64 tx;

  exec_ok (f, "CREATE TABLE t (a PRIMARY KEY, b); CREATE INDEX t_b ON t (b);"
              "CREATE TABLE other (x PRIMARY KEY);"
              "CREATE VIEW v AS SELECT a FROM t WHERE b > 0;"
              "CREATE VIEW v2 AS SELECT count(*) FROM t");

  coordinator = qstore_database_get_coordinator (f->db);
  tx = qstore_coordinator_get_last_tx_id (coordinator);

  /* Renaming a table that no view reads leaves every view entry alone
   * (they are compared after each rename, and rewritten only if SQLite
   * changed them): no transaction is spent on them. */
  exec_ok (f, "ALTER TABLE other RENAME TO other2");
  g_assert_cmpuint (qstore_coordinator_get_last_tx_id (coordinator), ==, tx);

  before = dump_provider_catalog (qstore_database_get_provider (f->db));
  exec_ok (f, "CREATE VIEW IF NOT EXISTS v AS SELECT 1");
  exec_ok (f, "CREATE INDEX IF NOT EXISTS t_b ON t (b)");
  exec_ok (f, "CREATE TABLE IF NOT EXISTS t (a PRIMARY KEY, b)");
  g_assert_cmpuint (qstore_coordinator_get_last_tx_id (coordinator), ==, tx);

  after = dump_provider_catalog (qstore_database_get_provider (f->db));
  g_assert_cmpstr (before, ==, after);

  /* Renaming a table a view reads rewrites that view's entry only. */
  exec_ok (f, "ALTER TABLE t RENAME TO t2");
  {
    g_autoptr(GBytes) key_v = qstore_catalog_key_for_view ("main", "v");
    g_autoptr(GBytes) key_v2 = qstore_catalog_key_for_view ("main", "v2");
    g_autoptr(GBytes) v = read_catalog (qstore_database_get_provider (f->db), key_v);
    g_autoptr(GBytes) v2 = read_catalog (qstore_database_get_provider (f->db), key_v2);
    g_autofree char *v_text = g_strndup (g_bytes_get_data (v, NULL), g_bytes_get_size (v));
    g_autofree char *v2_text = g_strndup (g_bytes_get_data (v2, NULL), g_bytes_get_size (v2));

    g_assert_nonnull (strstr (v_text, "t2"));
    g_assert_nonnull (strstr (v2_text, "t2"));
  }
  exec_ok (f, "INSERT INTO t2 VALUES (1, 1)");
  assert_rows (f, "SELECT a FROM v", "1\n");
}

static void
test_corrupt_entry (Fixture       *f,
                    gconstpointer  data)
{
  static const char garbage[] = "\xff\xfe not SQL at all (";
  g_autoptr(GBytes) key_b = qstore_catalog_key_for_table ("main", "b");
  g_autoptr(GBytes) key_c = qstore_catalog_key_for_table ("main", "c");
  g_autoptr(QStoreProvider) provider = NULL;
  g_autoptr(GError) error = NULL;
  QStoreRehydrationResult *result;
  const char *names[] = { "ib", NULL };
  int i;

  if (skip_unless_persistent ())
    return;

  exec_ok (f, "CREATE TABLE a (id INTEGER PRIMARY KEY, v TEXT UNIQUE CHECK (v <> 'bad'));"
              "CREATE TABLE b (id INTEGER PRIMARY KEY, w);"
              "CREATE INDEX ib ON b (w);"
              "CREATE TABLE c (id INTEGER PRIMARY KEY, x);"
              "CREATE VIEW vb AS SELECT w FROM b;"
              "INSERT INTO a VALUES (1, 'one'); INSERT INTO b VALUES (1, 10);"
              "INSERT INTO c VALUES (1, 100)");
  test_close_database (&f->db);

  /* Garbage in b's entry; c's would drop a's table if it ran as is. */
  provider = qstore_provider_new_for_uri (f->uri, QSTORE_OPEN_NONE, &error);
  g_assert_no_error (error);
  write_catalog (provider, key_b, garbage, sizeof garbage - 1);
  {
    static const char sneaky[] = "CREATE TABLE c (id INTEGER PRIMARY KEY, x);\nDROP TABLE a;\n";

    write_catalog (provider, key_c, sneaky, strlen (sneaky));
  }
  qstore_provider_close_all (provider);
  g_clear_object (&provider);

  f->db = test_open_database (f->uri, QSTORE_OPEN_NONE);
  result = qstore_database_get_rehydration_result (f->db);
  g_assert_true (test_strv_has (qstore_rehydration_result_get_tables (result), "main.a"));
  g_assert_false (test_strv_has (qstore_rehydration_result_get_tables (result), "main.b"));
  g_assert_false (test_strv_has (qstore_rehydration_result_get_tables (result), "main.c"));
  g_assert_true (test_strv_has (qstore_rehydration_result_get_indexes (result),
                                "main.sqlite_autoindex_a_1"));
  g_assert_cmpuint (qstore_rehydration_result_get_n_errors (result), ==, 3);

  i = find_error (result, "main.b");
  g_assert_cmpint (i, >=, 0);
  /* The DDL as the catalog holds it (bytes that are not UTF-8 replaced). */
  g_assert_nonnull (strstr (qstore_rehydration_result_get_error_ddl (result, i), "not SQL at all"));
  g_assert_nonnull (strstr (qstore_rehydration_result_get_error_message (result, i), "“main.b”"));

  i = find_error (result, "main.c");
  g_assert_cmpint (i, >=, 0);
  g_assert_nonnull (strstr (qstore_rehydration_result_get_error_ddl (result, i), "DROP TABLE a"));
  g_assert_nonnull (strstr (qstore_rehydration_result_get_error_message (result, i),
                            "changed outside qstore"));

  /* The view over b is defined but cannot be used. */
  i = find_error (result, "main.vb");
  g_assert_cmpint (i, >=, 0);
  g_assert_cmpstr (qstore_rehydration_result_get_error_ddl (result, i), ==,
                   "CREATE VIEW vb AS SELECT w FROM b");
  g_assert_nonnull (strstr (qstore_rehydration_result_get_error_message (result, i),
                            "no such table"));

  /* The good table works: reads, writes, constraints. */
  assert_rows (f, "SELECT v FROM a", "one\n");
  exec_ok (f, "INSERT INTO a VALUES (2, 'two'); UPDATE a SET v = 'uno' WHERE id = 1");
  exec_fails (f, "INSERT INTO a VALUES (3, 'two')", QSTORE_ERROR_CONSTRAINT,
              "UNIQUE constraint failed: a.v");
  exec_fails (f, "INSERT INTO a VALUES (3, 'bad')", QSTORE_ERROR_CONSTRAINT, "CHECK");
  assert_rows (f, "SELECT id, v FROM a ORDER BY id", "1|uno\n2|two\n");
  exec_fails (f, "SELECT * FROM b", QSTORE_ERROR_NOT_FOUND, "no such table");

  /* The bad entries stay as they were. */
  {
    g_autoptr(GBytes) value = read_catalog (qstore_database_get_provider (f->db), key_b);

    g_assert_cmpmem (g_bytes_get_data (value, NULL), g_bytes_get_size (value),
                     garbage, sizeof garbage - 1);
  }

  /* Reclaiming: a loaded table is refused, b's leftovers go, twice is
   * fine. */
  g_assert_false (qstore_database_reclaim_detached_table (f->db, NULL, "a", NULL, &error));
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_EXISTS);
  g_clear_error (&error);

  g_assert_true (store_has_entries (qstore_database_get_provider (f->db), "main.b"));
  g_assert_true (store_has_entries (qstore_database_get_provider (f->db), "main.b_idx_ib"));
  g_assert_cmpint (qstore_catalog_get_row_count (qstore_database_get_provider (f->db), NULL, "b",
                                                 &error), ==, 1);
  g_assert_no_error (error);

  g_assert_true (qstore_database_reclaim_detached_table (f->db, "main", "B", names, &error));
  g_assert_no_error (error);
  g_assert_false (store_has_entries (qstore_database_get_provider (f->db), "main.b"));
  g_assert_false (store_has_entries (qstore_database_get_provider (f->db), "main.b_idx_ib"));
  g_assert_cmpint (qstore_catalog_get_row_count (qstore_database_get_provider (f->db), NULL, "b",
                                                 &error), ==, -1);
  g_assert_no_error (error);
  g_assert_null (read_catalog (qstore_database_get_provider (f->db), key_b));
  g_assert_true (qstore_database_reclaim_detached_table (f->db, NULL, "b", names, &error));
  g_assert_no_error (error);

  /* c's entry goes too; its data store is kept by c's rows. */
  g_assert_true (qstore_database_reclaim_detached_table (f->db, NULL, "c", NULL, &error));
  g_assert_no_error (error);
  g_assert_false (store_has_entries (qstore_database_get_provider (f->db), "main.c"));

  /* What is left: the view over b, which the user drops. */
  test_database_reopen (f);
  result = qstore_database_get_rehydration_result (f->db);
  g_assert_cmpuint (qstore_rehydration_result_get_n_errors (result), ==, 1);
  g_assert_cmpint (find_error (result, "main.vb"), ==, 0);
  exec_ok (f, "DROP VIEW vb");
  test_database_reopen (f);
  assert_clean_result (f);
  assert_rows (f, "SELECT id, v FROM a ORDER BY id", "1|uno\n2|two\n");

  /* A name made free again is free. */
  exec_ok (f, "CREATE TABLE b (id INTEGER PRIMARY KEY, w); CREATE INDEX ib ON b (w)");
  assert_rows (f, "SELECT count(*) FROM b", "0\n");
}

/* Reclaim erases exactly the named stores: a table literally named like
 * an index store of the detached table is not touched, and is refused. */
static void
test_reclaim_sibling (Fixture       *f,
                      gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  const char *names[] = { "x", NULL };
  const char *other_names[] = { "y", NULL };

  exec_ok (f, "CREATE TABLE t_idx_x (id INTEGER PRIMARY KEY, v);"
              "INSERT INTO t_idx_x VALUES (1, 'kept')");

  g_assert_false (qstore_database_reclaim_detached_table (f->db, NULL, "t", names, &error));
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_COLLISION);
  g_assert_nonnull (strstr (error->message, "main.t_idx_x"));
  g_clear_error (&error);
  assert_rows (f, "SELECT v FROM t_idx_x", "kept\n");

  /* Another index name of a detached t: the sibling stays. */
  g_assert_true (qstore_database_reclaim_detached_table (f->db, NULL, "t", other_names, &error));
  g_assert_no_error (error);
  assert_rows (f, "SELECT v FROM t_idx_x", "kept\n");

  if (test_provider_persistent ())
    {
      test_database_reopen (f);
      assert_clean_result (f);
      assert_rows (f, "SELECT v FROM t_idx_x", "kept\n");
    }
}

static void
test_views (Fixture       *f,
            gconstpointer  data)
{
  g_autoptr(GBytes) key_v = qstore_catalog_key_for_view ("main", "v");
  g_autoptr(GBytes) key_w = qstore_catalog_key_for_view ("main", "w");
  g_autoptr(GBytes) key_x = qstore_catalog_key_for_view ("main", "x");
  g_autoptr(GBytes) key_tv = qstore_catalog_key_for_view ("main", "tv");
  QStoreRehydrationResult *result;
  QStoreProvider *provider;

  exec_ok (f, "CREATE TABLE t (a INTEGER PRIMARY KEY, b TEXT);"
              "INSERT INTO t VALUES (1, 'one'), (2, 'two'), (3, 'three');"
              "CREATE VIEW V AS SELECT a, b FROM t WHERE a > 1;"
              "CREATE VIEW w AS SELECT count(*) AS n FROM v;"
              "CREATE TEMP VIEW tv AS SELECT 1");
  assert_rows (f, "SELECT n FROM w", "2\n");

  provider = qstore_database_get_provider (f->db);
  {
    static const char expected[] = "CREATE VIEW V AS SELECT a, b FROM t WHERE a > 1";
    g_autoptr(GBytes) v = read_catalog (provider, key_v);
    g_autoptr(GBytes) tv = read_catalog (provider, key_tv);

    g_assert_nonnull (v);
    g_assert_cmpmem (g_bytes_get_data (v, NULL), g_bytes_get_size (v),
                     expected, strlen (expected));
    g_assert_null (tv);
  }

  /* DDL-commit: the insert before CREATE VIEW is committed with it. */
  exec_ok (f, "BEGIN; INSERT INTO t VALUES (4, 'four'); CREATE VIEW x AS SELECT b FROM t; "
              "ROLLBACK");
  assert_rows (f, "SELECT n FROM w", "3\n");
  {
    g_autoptr(GBytes) x = read_catalog (provider, key_x);

    g_assert_nonnull (x);
  }

  exec_fails (f, "CREATE VIEW v AS SELECT 1", QSTORE_ERROR_EXISTS, "already exists");
  exec_ok (f, "DROP VIEW IF EXISTS nosuch");
  exec_fails (f, "DROP VIEW nosuch", QSTORE_ERROR_NOT_FOUND, "no such view");

  if (!test_provider_persistent ())
    {
      exec_ok (f, "DROP VIEW x");
      g_assert_null (read_catalog (provider, key_x));
      return;
    }

  test_database_reopen (f);
  assert_clean_result (f);
  result = qstore_database_get_rehydration_result (f->db);
  g_assert_true (test_strv_has (qstore_rehydration_result_get_views (result), "main.v"));
  g_assert_true (test_strv_has (qstore_rehydration_result_get_views (result), "main.w"));
  g_assert_true (test_strv_has (qstore_rehydration_result_get_views (result), "main.x"));
  assert_rows (f, "SELECT n FROM w", "3\n");
  assert_rows (f, "SELECT b FROM v ORDER BY a", "two\nthree\nfour\n");
  exec_fails (f, "SELECT * FROM tv", QSTORE_ERROR_NOT_FOUND, "no such table");

  /* A view over a dropped table: an error at the next open, its entry
   * kept, and it works again once the table is back. */
  exec_ok (f, "DROP TABLE t");
  test_database_reopen (f);
  result = qstore_database_get_rehydration_result (f->db);
  g_assert_cmpuint (qstore_rehydration_result_get_n_errors (result), ==, 3);
  g_assert_cmpint (find_error (result, "main.v"), >=, 0);
  g_assert_cmpint (find_error (result, "main.w"), >=, 0);
  g_assert_cmpint (find_error (result, "main.x"), >=, 0);
  g_assert_cmpstr (qstore_rehydration_result_get_error_ddl (result, find_error (result, "main.w")),
                   ==, "CREATE VIEW w AS SELECT count(*) AS n FROM v");
  g_assert_nonnull (strstr (qstore_rehydration_result_get_error_message (result,
                                                                         find_error (result, "main.v")),
                            "no such table: main.t"));
  g_assert_cmpuint (g_strv_length ((char **) qstore_rehydration_result_get_views (result)), ==, 0);
  provider = qstore_database_get_provider (f->db);
  {
    g_autoptr(GBytes) v = read_catalog (provider, key_v);
    g_autoptr(GBytes) w = read_catalog (provider, key_w);

    g_assert_nonnull (v);
    g_assert_nonnull (w);
  }
  exec_fails (f, "SELECT * FROM w", QSTORE_ERROR_NOT_FOUND, "no such table");

  exec_ok (f, "CREATE TABLE t (a INTEGER PRIMARY KEY, b TEXT); INSERT INTO t VALUES (5, 'five')");
  assert_rows (f, "SELECT n FROM w", "1\n");
  exec_ok (f, "DROP VIEW x");
  g_assert_null (read_catalog (provider, key_x));

  test_database_reopen (f);
  assert_clean_result (f);
  assert_rows (f, "SELECT b FROM v", "five\n");
  g_assert_false (test_strv_has (qstore_rehydration_result_get_views (qstore_database_get_rehydration_result (f->db)),
                                 "main.x"));
}

/* The read-only listing */

static QStoreCatalogEntry *
find_entry (GListModel           *entries,
            QStoreCatalogKeyKind  kind,
            const char           *name)
{
  for (guint i = 0; i < g_list_model_get_n_items (entries); i++)
    {
      g_autoptr(QStoreCatalogEntry) entry = g_list_model_get_item (entries, i);

      if (qstore_catalog_entry_get_kind (entry) == kind &&
          g_str_equal (qstore_catalog_entry_get_name (entry), name))
        return entry;
    }
  return NULL;
}

static QStoreColumnInfo *
column (QStoreCatalogEntry *entry,
        guint               i)
{
  GListModel *columns = qstore_catalog_entry_get_columns (entry);
  g_autoptr(QStoreColumnInfo) info = g_list_model_get_item (columns, i);

  g_assert_nonnull (info);
  return info;
}

static void
check_listing (QStoreProvider *provider,
               gint64          t_rows)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GListModel) entries = qstore_catalog_list_entries (provider, &error);
  QStoreCatalogEntry *t, *k, *v, *bad, *tx, *mv, *contents;
  QStoreColumnInfo *info;
  const char * const *index_names;
  const char * const *index_ddl;

  g_assert_no_error (error);
  g_assert_nonnull (entries);
  g_assert_true (g_list_model_get_item_type (entries) == QSTORE_TYPE_CATALOG_ENTRY);

  /* Key order: meta, views, then tables. */
  {
    g_autoptr(GBytes) previous = NULL;

    for (guint i = 0; i < g_list_model_get_n_items (entries); i++)
      {
        g_autoptr(QStoreCatalogEntry) entry = g_list_model_get_item (entries, i);
        GBytes *key = qstore_catalog_entry_get_key (entry);

        if (previous != NULL)
          g_assert_cmpint (g_bytes_compare (previous, key), <, 0);
        g_clear_pointer (&previous, g_bytes_unref);
        previous = g_bytes_ref (key);
      }
  }

  tx = find_entry (entries, QSTORE_CATALOG_KEY_META, "tx");
  g_assert_nonnull (tx);
  g_assert_null (qstore_catalog_entry_get_schema (tx));
  g_assert_null (qstore_catalog_entry_get_ddl (tx));
  g_assert_cmpint (g_ascii_strtoll (qstore_catalog_entry_get_value (tx), NULL, 10), >, 0);

  v = find_entry (entries, QSTORE_CATALOG_KEY_VIEW, "v");
  g_assert_nonnull (v);
  g_assert_cmpstr (qstore_catalog_entry_get_schema (v), ==, "main");
  g_assert_cmpstr (qstore_catalog_entry_get_ddl (v), ==, "CREATE VIEW v AS SELECT name FROM t");
  g_assert_null (qstore_catalog_entry_get_value (v));
  g_assert_null (qstore_catalog_entry_get_error (v));

  t = find_entry (entries, QSTORE_CATALOG_KEY_TABLE, "t");
  g_assert_nonnull (t);
  g_assert_cmpstr (qstore_catalog_entry_get_schema (t), ==, "main");
  g_assert_null (qstore_catalog_entry_get_error (t));
  g_assert_cmpstr (qstore_catalog_entry_get_ddl (t), ==,
                   "CREATE TABLE T (id INTEGER PRIMARY KEY, name TEXT NOT NULL COLLATE NOCASE "
                   "DEFAULT 'n', score REAL, UNIQUE (name, score));\n"
                   "CREATE INDEX t_score ON t (score DESC);\n");
  g_assert_cmpuint (g_list_model_get_n_items (qstore_catalog_entry_get_columns (t)), ==, 3);
  info = column (t, 0);
  g_assert_cmpstr (qstore_column_info_get_name (info), ==, "id");
  g_assert_cmpstr (qstore_column_info_get_declared_type (info), ==, "INTEGER");
  g_assert_cmpuint (qstore_column_info_get_primary_key_position (info), ==, 1);
  g_assert_null (qstore_column_info_get_default_value (info));
  info = column (t, 1);
  g_assert_cmpstr (qstore_column_info_get_name (info), ==, "name");
  g_assert_cmpint (qstore_column_info_get_collation (info), ==, QSTORE_COLLATION_NOCASE);
  g_assert_true (qstore_column_info_get_not_null (info));
  g_assert_cmpstr (qstore_column_info_get_default_value (info), ==, "'n'");
  g_assert_cmpuint (qstore_column_info_get_primary_key_position (info), ==, 0);
  info = column (t, 2);
  g_assert_cmpstr (qstore_column_info_get_declared_type (info), ==, "REAL");
  g_assert_false (qstore_column_info_get_not_null (info));
  g_assert_cmpint (qstore_column_info_get_collation (info), ==, QSTORE_COLLATION_BINARY);

  index_names = qstore_catalog_entry_get_index_names (t);
  index_ddl = qstore_catalog_entry_get_index_ddl (t);
  g_assert_cmpuint (g_strv_length ((char **) index_names), ==, 2);
  g_assert_cmpstr (index_names[0], ==, "sqlite_autoindex_T_1");
  g_assert_cmpstr (index_ddl[0], ==, "");
  g_assert_cmpstr (index_names[1], ==, "t_score");
  g_assert_cmpstr (index_ddl[1], ==, "CREATE INDEX t_score ON t (score DESC)");

  /* A composite key: positions in PRIMARY KEY order. */
  k = find_entry (entries, QSTORE_CATALOG_KEY_TABLE, "k");
  g_assert_nonnull (k);
  g_assert_cmpuint (qstore_column_info_get_primary_key_position (column (k, 0)), ==, 2);
  g_assert_cmpuint (qstore_column_info_get_primary_key_position (column (k, 1)), ==, 1);
  g_assert_cmpuint (qstore_column_info_get_primary_key_position (column (k, 2)), ==, 0);
  g_assert_cmpuint (g_strv_length ((char **) qstore_catalog_entry_get_index_names (k)), ==, 0);

  /* A bundle that does not parse is listed with why. */
  bad = find_entry (entries, QSTORE_CATALOG_KEY_TABLE, "bad");
  g_assert_nonnull (bad);
  g_assert_nonnull (qstore_catalog_entry_get_error (bad));
  g_assert_nonnull (strstr (qstore_catalog_entry_get_error (bad), "main.bad"));
  g_assert_cmpuint (g_list_model_get_n_items (qstore_catalog_entry_get_columns (bad)), ==, 0);
  g_assert_cmpstr (qstore_catalog_entry_get_ddl (bad), ==, "CREATE TABLE bad (");

  /* A materialized view: its query, and the columns of the table holding
   * its rows, which is marked as its contents. */
  mv = find_entry (entries, QSTORE_CATALOG_KEY_MATERIALIZED_VIEW, "mv");
  g_assert_nonnull (mv);
  g_assert_null (qstore_catalog_entry_get_error (mv));
  g_assert_cmpstr (qstore_catalog_entry_get_body (mv), ==, "SELECT name, id FROM t WHERE score > 1");
  g_assert_false (qstore_catalog_entry_is_materialized_view_contents (mv));
  contents = find_entry (entries, QSTORE_CATALOG_KEY_TABLE, "mv");
  g_assert_nonnull (contents);
  g_assert_true (qstore_catalog_entry_is_materialized_view_contents (contents));
  g_assert_null (qstore_catalog_entry_get_body (contents));
  g_assert_true (qstore_catalog_entry_get_columns (mv) == qstore_catalog_entry_get_columns (contents));
  g_assert_cmpuint (g_list_model_get_n_items (qstore_catalog_entry_get_columns (mv)), ==, 2);
  g_assert_cmpstr (qstore_column_info_get_name (column (mv, 0)), ==, "who");
  g_assert_cmpuint (qstore_column_info_get_primary_key_position (column (mv, 1)), ==, 1);
  g_assert_false (qstore_catalog_entry_is_materialized_view_contents (t));
  g_assert_cmpint (qstore_catalog_get_row_count (provider, "main", "mv", &error), ==, t_rows - 1);
  g_assert_no_error (error);

  /* One whose definition qstore did not write: why, and no query. */
  mv = find_entry (entries, QSTORE_CATALOG_KEY_MATERIALIZED_VIEW, "mv_bad");
  g_assert_nonnull (mv);
  g_assert_null (qstore_catalog_entry_get_body (mv));
  g_assert_nonnull (strstr (qstore_catalog_entry_get_error (mv), "“main.mv_bad” is not a CREATE "
                                                                 "MATERIALIZED VIEW"));
  g_assert_cmpuint (g_list_model_get_n_items (qstore_catalog_entry_get_columns (mv)), ==, 0);

  g_assert_cmpint (qstore_catalog_get_row_count (provider, NULL, "T", &error), ==, t_rows);
  g_assert_no_error (error);
  g_assert_cmpint (qstore_catalog_get_row_count (provider, "main", "k", &error), ==, -1);
  g_assert_no_error (error);
  g_assert_cmpint (qstore_catalog_get_row_count (provider, "main", "nosuch", &error), ==, -1);
  g_assert_no_error (error);
}

static void
make_listing_content (Fixture *f)
{
  g_autoptr(GBytes) key_bad = qstore_catalog_key_for_table ("main", "bad");
  g_autoptr(GBytes) key_bad_mv = qstore_catalog_key_for_materialized_view ("main", "mv_bad");
  /* Names another view than its key. */
  const char *bad_mv = "CREATE MATERIALIZED VIEW other AS SELECT 1";

  exec_ok (f, "CREATE TABLE T (id INTEGER PRIMARY KEY, name TEXT NOT NULL COLLATE NOCASE "
              "DEFAULT 'n', score REAL, UNIQUE (name, score));"
              "CREATE INDEX t_score ON t (score DESC);"
              "CREATE TABLE k (a TEXT, b INTEGER, c, PRIMARY KEY (b, a));"
              "CREATE VIEW v AS SELECT name FROM t;"
              "INSERT INTO t (name, score) VALUES ('a', 1), ('b', 2), ('c', 3);"
              "CREATE MATERIALIZED VIEW MV (who, id) AS SELECT name, id FROM t WHERE score > 1;");
  write_catalog (qstore_database_get_provider (f->db), key_bad, "CREATE TABLE bad (", 18);
  write_catalog (qstore_database_get_provider (f->db), key_bad_mv, bad_mv, strlen (bad_mv));
}

/* The child of test_read_only_listing: keeps the database open for
 * writing, and writes, until its input ends. */
static int
hold_database (const char *uri)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(QStoreDatabase) db = qstore_database_open (uri, QSTORE_OPEN_NONE, &error);
  char line[64];

  if (db == NULL ||
      !qstore_database_exec (db, "INSERT INTO t (name, score) VALUES ('held', 4)", &error))
    {
      g_printerr ("holder: %s\n", error->message);
      return 1;
    }
  printf ("ready\n");
  fflush (stdout);

  while (fgets (line, sizeof line, stdin) != NULL)
    ;

  if (!qstore_database_exec (db, "INSERT INTO t (name, score) VALUES ('after', 5)", &error) ||
      !qstore_database_close (db, &error))
    {
      g_printerr ("holder: %s\n", error->message);
      return 1;
    }
  return 0;
}

static void
test_read_only_listing (Fixture       *f,
                        gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GSubprocess) holder = NULL;
  g_autoptr(GDataInputStream) out = NULL;
  g_autoptr(QStoreProvider) provider = NULL;
  g_autofree char *line = NULL;
  g_autofree char *before = NULL;
  g_autofree char *after = NULL;

  make_listing_content (f);

  if (!test_provider_persistent ())
    {
      /* One process: the database's own provider. */
      before = dump_provider_catalog (qstore_database_get_provider (f->db));
      check_listing (qstore_database_get_provider (f->db), 3);
      after = dump_provider_catalog (qstore_database_get_provider (f->db));
      g_assert_cmpstr (before, ==, after);
      return;
    }

  test_close_database (&f->db);

  /* Another process writes the store while this one reads it. */
  holder = g_subprocess_new (G_SUBPROCESS_FLAGS_STDIN_PIPE | G_SUBPROCESS_FLAGS_STDOUT_PIPE,
                             &error, self_path, "--hold", f->uri, NULL);
  g_assert_no_error (error);
  out = g_data_input_stream_new (g_subprocess_get_stdout_pipe (holder));
  line = g_data_input_stream_read_line_utf8 (out, NULL, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (line, ==, "ready");

  provider = qstore_provider_new_for_uri (f->uri, QSTORE_OPEN_READ_ONLY, &error);
  g_assert_no_error (error);
  before = dump_provider_catalog (provider);
  check_listing (provider, 4);
  after = dump_provider_catalog (provider);
  g_assert_cmpstr (before, ==, after);

  /* The writer goes on meanwhile. */
  g_output_stream_close (g_subprocess_get_stdin_pipe (holder), NULL, &error);
  g_assert_no_error (error);
  g_subprocess_wait_check (holder, NULL, &error);
  g_assert_no_error (error);

  qstore_provider_close_all (provider);
  g_clear_object (&provider);
  provider = qstore_provider_new_for_uri (f->uri, QSTORE_OPEN_READ_ONLY, &error);
  g_assert_no_error (error);
  g_assert_cmpint (qstore_catalog_get_row_count (provider, NULL, "t", &error), ==, 5);
  g_assert_no_error (error);
  qstore_provider_close_all (provider);

  f->db = test_open_database (f->uri, QSTORE_OPEN_NONE);
}

/* `qstore catalog` */

/* Lock files and SQLite's shared-memory index may come and go with any
 * reader; everything else must be as it was, byte for byte. An empty
 * write-ahead log SQLite leaves behind holds nothing. */
static gboolean
is_lock_file (const char *path)
{
  return g_str_has_suffix (path, "-shm") || g_str_has_suffix (path, "lock.mdb");
}

static void
assert_same_files (GHashTable *before,
                   GHashTable *after)
{
  GHashTableIter iter;
  const char *path;
  const char *sum;
  g_autofree char *empty = g_compute_checksum_for_data (G_CHECKSUM_SHA256,
                                                        (const guint8 *) "", 0);

  g_hash_table_iter_init (&iter, before);
  while (g_hash_table_iter_next (&iter, (gpointer *) &path, (gpointer *) &sum))
    {
      if (is_lock_file (path))
        continue;
      if (!g_hash_table_contains (after, path))
        g_error ("%s was removed", path);
      if (!g_str_equal (sum, g_hash_table_lookup (after, path)))
        g_error ("%s changed", path);
    }

  g_hash_table_iter_init (&iter, after);
  while (g_hash_table_iter_next (&iter, (gpointer *) &path, (gpointer *) &sum))
    {
      if (is_lock_file (path) || g_hash_table_contains (before, path))
        continue;
      if (g_str_has_suffix (path, "-wal") && g_str_equal (sum, empty))
        continue;
      g_error ("%s was created", path);
    }
}

static void
test_cli (Fixture       *f,
          gconstpointer  data)
{
  const char *json_args[] = { "catalog", "--json", NULL };
  const char *plain_args[] = { "catalog", NULL };
  const char *extra_args[] = { "catalog", "extra", NULL };
  g_autoptr(GHashTable) before = NULL;
  g_autoptr(GHashTable) after = NULL;
  g_autoptr(TestRun) json = NULL;
  g_autoptr(TestRun) plain = NULL;
  g_autoptr(TestRun) usage = NULL;
  g_auto(GStrv) lines = NULL;
  g_auto(GStrv) plain_lines = NULL;
  gboolean seen_table = FALSE, seen_view = FALSE, seen_meta = FALSE, seen_bad = FALSE;
  gboolean seen_mv = FALSE, seen_contents = FALSE;

  if (skip_unless_persistent ())
    return;

  make_listing_content (f);
  test_close_database (&f->db);

  before = test_checksum_tree (f->dir);
  json = test_run_programv (qstore_path, NULL, f->uri, json_args);
  plain = test_run_programv (qstore_path, NULL, f->uri, plain_args);
  after = test_checksum_tree (f->dir);
  assert_same_files (before, after);

  g_assert_cmpint (json->status, ==, 0);
  g_assert_cmpstr (json->err, ==, "");
  lines = g_strsplit (json->out, "\n", -1);
  for (guint i = 0; lines[i] != NULL && lines[i][0] != '\0'; i++)
    {
      g_autoptr(JsonParser) parser = json_parser_new ();
      g_autoptr(GError) error = NULL;
      JsonObject *object;
      const char *kind;

      json_parser_load_from_data (parser, lines[i], -1, &error);
      g_assert_no_error (error);
      g_assert_true (JSON_NODE_HOLDS_OBJECT (json_parser_get_root (parser)));
      object = json_node_get_object (json_parser_get_root (parser));
      kind = json_object_get_string_member (object, "kind");
      g_assert_true (json_object_has_member (object, "schema"));
      g_assert_true (json_object_has_member (object, "name"));

      if (g_str_equal (kind, "meta"))
        {
          seen_meta = TRUE;
          g_assert_true (json_object_get_null_member (object, "schema"));
          g_assert_true (json_object_has_member (object, "value"));
          g_assert_false (json_object_has_member (object, "ddl"));
          if (g_str_equal (json_object_get_string_member (object, "name"), "clean_shutdown"))
            g_assert_cmpstr (json_object_get_string_member (object, "value"), ==, "[]");
        }
      else if (g_str_equal (kind, "view"))
        {
          seen_view = TRUE;
          g_assert_cmpstr (json_object_get_string_member (object, "schema"), ==, "main");
          g_assert_cmpstr (json_object_get_string_member (object, "name"), ==, "v");
          g_assert_cmpstr (json_object_get_string_member (object, "ddl"), ==,
                           "CREATE VIEW v AS SELECT name FROM t");
        }
      else if (g_str_equal (kind, "table"))
        {
          const char *name = json_object_get_string_member (object, "name");

          g_assert_cmpstr (json_object_get_string_member (object, "schema"), ==, "main");
          if (g_str_equal (name, "t"))
            {
              seen_table = TRUE;
              g_assert_cmpstr (json_object_get_string_member (object, "ddl"), ==,
                               "CREATE TABLE T (id INTEGER PRIMARY KEY, name TEXT NOT NULL "
                               "COLLATE NOCASE DEFAULT 'n', score REAL, UNIQUE (name, score));\n"
                               "CREATE INDEX t_score ON t (score DESC);\n");
              g_assert_false (json_object_has_member (object, "error"));
            }
          else if (g_str_equal (name, "bad"))
            {
              seen_bad = TRUE;
              g_assert_true (json_object_has_member (object, "error"));
            }
        }
      else if (g_str_equal (kind, "materialized_view"))
        {
          if (g_str_equal (json_object_get_string_member (object, "name"), "mv"))
            {
              seen_mv = TRUE;
              g_assert_cmpstr (json_object_get_string_member (object, "body"), ==,
                               "SELECT name, id FROM t WHERE score > 1");
            }
          else
            g_assert_true (json_object_has_member (object, "error"));
        }
      else if (g_str_equal (kind, "materialized_view_contents"))
        {
          seen_contents = TRUE;
          g_assert_cmpstr (json_object_get_string_member (object, "name"), ==, "mv");
          g_assert_nonnull (strstr (json_object_get_string_member (object, "ddl"), "CREATE TABLE"));
        }
      else
        g_error ("unexpected kind “%s”", kind);
    }
  g_assert_true (seen_table && seen_view && seen_meta && seen_bad && seen_mv && seen_contents);

  /* The plain listing: one line per entry, the same entries. */
  g_assert_cmpint (plain->status, ==, 0);
  plain_lines = g_strsplit (plain->out, "\n", -1);
  g_assert_cmpuint (g_strv_length (lines), ==, g_strv_length (plain_lines));
  g_assert_nonnull (strstr (plain->out, "view\tmain.v\tCREATE VIEW v AS SELECT name FROM t\n"));
  g_assert_nonnull (strstr (plain->out,
                            "table\tmain.t\tCREATE TABLE T (id INTEGER PRIMARY KEY, name TEXT "
                            "NOT NULL COLLATE NOCASE DEFAULT 'n', score REAL, UNIQUE (name, "
                            "score)); CREATE INDEX t_score ON t (score DESC);\n"));

  usage = test_run_programv (qstore_path, NULL, f->uri, extra_args);
  g_assert_cmpint (usage->status, ==, 2);

  /* Reading did not consume the clean-shutdown marker. */
  {
    g_autoptr(GError) error = NULL;
    g_autoptr(QStoreProvider) provider = qstore_provider_new_for_uri (f->uri,
                                                                       QSTORE_OPEN_READ_ONLY,
                                                                       &error);
    g_autoptr(GBytes) key = qstore_catalog_key_for_meta ("clean_shutdown");
    g_autoptr(GBytes) marker = NULL;

    g_assert_no_error (error);
    marker = read_catalog (provider, key);
    g_assert_nonnull (marker);
    g_assert_cmpmem (g_bytes_get_data (marker, NULL), g_bytes_get_size (marker), "[]", 2);
    qstore_provider_close_all (provider);
  }

  f->db = test_open_database (f->uri, QSTORE_OPEN_NONE);
  assert_rows (f, "SELECT count(*) FROM t", "3\n");
}

static void
test_cli_missing_store (Fixture       *f,
                        gconstpointer  data)
{
  const char *args[] = { "catalog", NULL };
  g_autofree char *uri = NULL;
  g_autofree char *missing = NULL;
  g_autofree char *name = test_provider_name ();
  g_autoptr(TestRun) run = NULL;

  if (skip_unless_persistent ())
    return;

  missing = g_build_filename (f->dir, "nothing-here", NULL);
  uri = g_strdup_printf ("%s:%s/x", name, missing);
  run = test_run_programv (qstore_path, NULL, uri, args);
  g_assert_cmpint (run->status, ==, 1);
  g_assert_true (g_str_has_prefix (run->err, "qstore: "));
  /* Read-only: nothing was created. */
  g_assert_false (g_file_test (missing, G_FILE_TEST_EXISTS));
}

int
main (int    argc,
      char **argv)
{
  if (argc == 3 && g_str_equal (argv[1], "--hold"))
    return hold_database (argv[2]);

  self_path = argv[0];
  g_test_init (&argc, &argv, NULL);
  qstore_path = test_program_argument (argc, argv, "PATH-TO-QSTORE");

#define ADD(path, func) \
  g_test_add (path, Fixture, NULL, fixture_setup, func, test_database_tear_down)

  ADD ("/catalog/reopen-every-ddl", test_reopen_every_ddl);
  ADD ("/catalog/compare-write", test_compare_write);
  ADD ("/catalog/corrupt-entry", test_corrupt_entry);
  ADD ("/catalog/reclaim-sibling", test_reclaim_sibling);
  ADD ("/catalog/views", test_views);
  ADD ("/catalog/read-only-listing", test_read_only_listing);
  ADD ("/catalog/cli", test_cli);
  ADD ("/catalog/cli-missing-store", test_cli_missing_store);

  return g_test_run ();
}
