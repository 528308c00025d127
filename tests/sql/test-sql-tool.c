/* test-sql-tool.c: `qstore sql`, run as a user runs it
 *
 * Usage: test-sql-tool [--tap] PATH-TO-QSTORE, with QSTORE_TEST_PROVIDER
 * set to a provider name.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include <gio/gio.h>
#include <json-glib/json-glib.h>
#include <qstore.h>

#include "qstore-test-util.h"

static const char *qstore_path;

typedef struct
{
  char *dir;
  char *uri;
} Fixture;

static void
fixture_setup (Fixture       *f,
               gconstpointer  data)
{
  f->dir = test_make_tmp_dir ("qstore-sql-tool-XXXXXX");
  f->uri = test_provider_uri (f->dir, "store");
}

static void
fixture_teardown (Fixture       *f,
                  gconstpointer  data)
{
  test_remove_tree (f->dir);
  g_free (f->dir);
  g_free (f->uri);
}

/* Runs `qstore --store STORE ARGS…` (NULL-terminated). */
#define run(store, ...) test_run_program (qstore_path, NULL, (store), __VA_ARGS__)

static void
assert_ok (TestRun    *r,
           const char *out)
{
  if (r->status != 0)
    g_error ("qstore exited with %d: %s", r->status, r->err);
  g_assert_cmpstr (r->err, ==, "");
  g_assert_cmpstr (r->out, ==, out);
}

static const char setup_sql[] =
  "CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT, score REAL, data);"
  "INSERT INTO t (name, score, data) VALUES ('ann', 1.5, NULL), (NULL, 2, x'0001'),"
  " ('tab\there', 1e20, 7)";

static void
test_list_mode (Fixture       *f,
                gconstpointer  data)
{
  g_autoptr(TestRun) r = NULL;

  r = run (f->uri, "sql", setup_sql, "SELECT id, name, score FROM t WHERE id < 3",
           "SELECT count(*), sum(score) > 0 FROM t; SELECT 'done'", NULL);
  assert_ok (r, "1\tann\t1.5\n"
                "2\t\t2.0\n"
                "3\t1\n"
                "done\n");
}

static void
test_list_mode_rows (Fixture       *f,
                     gconstpointer  data)
{
  g_autoptr(TestRun) r = NULL;
  /* Blobs print as their bytes, as sqlite3 does. */
  static const char expected[] = "1\tann\t1.5\t\n"
                                 "2\t\t2.0\t\x00\x01\n"
                                 "3\ttab\there\t1.0e+20\t7\n";
  gsize len;
  const char *out;

  r = run (f->uri, "sql", setup_sql, "SELECT id, name, score, data FROM t ORDER BY id", NULL);
  g_assert_cmpint (r->status, ==, 0);
  g_assert_cmpstr (r->err, ==, "");
  out = g_bytes_get_data (r->raw_out, &len);
  g_assert_cmpmem (out, len, expected, sizeof expected - 1);
}

static void
test_json (Fixture       *f,
           gconstpointer  data)
{
  g_autoptr(TestRun) r = NULL;
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GError) error = NULL;
  g_auto(GStrv) lines = NULL;
  JsonArray *row;

  r = run (f->uri, "sql", "--json", setup_sql, "SELECT id, name, score, data FROM t ORDER BY id",
           NULL);
  g_assert_cmpint (r->status, ==, 0);
  g_assert_cmpstr (r->out, ==,
                   "[1,\"ann\",1.5,null]\n"
                   "[2,null,2.0,{\"$blob\":\"AAE=\"}]\n"
                   "[3,\"tab\\there\",1e+20,7]\n");

  /* Every line is JSON that reads back with its types. */
  lines = g_strsplit (r->out, "\n", -1);
  for (guint i = 0; lines[i] != NULL && lines[i][0] != '\0'; i++)
    {
      json_parser_load_from_data (parser, lines[i], -1, &error);
      g_assert_no_error (error);
      g_assert_true (JSON_NODE_HOLDS_ARRAY (json_parser_get_root (parser)));
    }
  json_parser_load_from_data (parser, lines[1], -1, &error);
  row = json_node_get_array (json_parser_get_root (parser));
  g_assert_cmpint (json_node_get_value_type (json_array_get_element (row, 0)), ==, G_TYPE_INT64);
  g_assert_cmpint (json_node_get_value_type (json_array_get_element (row, 2)), ==, G_TYPE_DOUBLE);
  g_assert_true (JSON_NODE_HOLDS_NULL (json_array_get_element (row, 1)));
  g_assert_cmpstr (json_object_get_string_member (json_array_get_object_element (row, 3), "$blob"),
                   ==, "AAE=");
}

static void
test_persists (Fixture       *f,
               gconstpointer  data)
{
  g_autoptr(TestRun) first = NULL;
  g_autoptr(TestRun) second = NULL;
  const char * const args[] = { "sql", "SELECT name FROM t ORDER BY id LIMIT 1", NULL };
  g_autofree char *store_env = g_strconcat ("QSTORE_STORE=", f->uri, NULL);
  const char * const env[] = { store_env, NULL };

  if (!test_provider_persistent ())
    {
      g_test_skip ("The provider keeps nothing across runs");
      return;
    }

  first = run (f->uri, "sql", setup_sql, NULL);
  assert_ok (first, "");
  /* The store may also come from QSTORE_STORE. */
  second = test_run_programv (qstore_path, env, NULL, args);
  assert_ok (second, "ann\n");
}

static void
test_statements_split (Fixture       *f,
                       gconstpointer  data)
{
  g_autoptr(TestRun) r = NULL;

  /* A trigger body holds semicolons of its own. */
  r = run (f->uri, "sql",
           "CREATE TABLE t (a, b); CREATE TEMP TABLE x (a);"
           "CREATE TEMP TRIGGER copy AFTER INSERT ON x BEGIN "
           "  INSERT INTO t VALUES (new.a, 'one;two'); INSERT INTO t VALUES (new.a + 1, ';'); END;"
           "INSERT INTO x VALUES (5); -- a comment; with a semicolon\n"
           "SELECT a, b FROM t ORDER BY a; /* the end */", NULL);
  assert_ok (r, "5\tone;two\n6\t;\n");
}

static void
test_errors (Fixture       *f,
             gconstpointer  data)
{
  g_autoptr(TestRun) r = NULL;
  g_autoptr(TestRun) no_sql = NULL;
  g_autoptr(TestRun) no_store = NULL;
  g_autoptr(TestRun) after = NULL;

  r = run (f->uri, "sql", "CREATE TABLE t (a PRIMARY KEY); INSERT INTO t VALUES (1)",
           "SELECT 'before'", "INSERT INTO t VALUES (1)", "SELECT 'never'", NULL);
  g_assert_cmpint (r->status, ==, 1);
  g_assert_cmpstr (r->out, ==, "before\n");
  g_assert_cmpstr (r->err, ==, "qstore: UNIQUE constraint failed: t.a\n");

  if (test_provider_persistent ())
    {
      after = run (f->uri, "sql", "SELECT count(*) FROM t", NULL);
      assert_ok (after, "1\n");
    }

  g_clear_pointer (&r, test_run_free);
  r = run (f->uri, "sql", "SELECT * FROM missing", NULL);
  g_assert_cmpint (r->status, ==, 1);
  g_assert_cmpstr (r->err, ==, "qstore: no such table: missing\n");

  no_sql = run (f->uri, "sql", NULL);
  g_assert_cmpint (no_sql->status, ==, 2);
  g_assert_nonnull (strstr (no_sql->err, "No SQL given"));

  no_store = run (NULL, "sql", "SELECT 1", NULL);
  g_assert_cmpint (no_store->status, ==, 2);
  g_assert_nonnull (strstr (no_store->err, "No store given"));
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);
  qstore_path = test_program_argument (argc, argv, "PATH-TO-QSTORE");

  g_test_add ("/sql-tool/list-mode", Fixture, NULL, fixture_setup, test_list_mode,
              fixture_teardown);
  g_test_add ("/sql-tool/list-mode-rows", Fixture, NULL, fixture_setup, test_list_mode_rows,
              fixture_teardown);
  g_test_add ("/sql-tool/json", Fixture, NULL, fixture_setup, test_json, fixture_teardown);
  g_test_add ("/sql-tool/persists", Fixture, NULL, fixture_setup, test_persists, fixture_teardown);
  g_test_add ("/sql-tool/statements", Fixture, NULL, fixture_setup, test_statements_split,
              fixture_teardown);
  g_test_add ("/sql-tool/errors", Fixture, NULL, fixture_setup, test_errors, fixture_teardown);

  return g_test_run ();
}
