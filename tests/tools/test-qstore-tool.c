/* test-qstore-tool.c: the qstore command, run as a user runs it
 *
 * Usage: test-qstore-tool [--tap] PATH-TO-QSTORE
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <stdarg.h>
#include <string.h>

#include <gio/gio.h>
#include <json-glib/json-glib.h>
#include <qstore.h>

#include "tool-test.h"

/* `run` with @env (NULL-terminated `NAME=value`) added to its environment. */
#define run_with_env(env, store, ...) \
  test_run_program (qstore_path, (env), (store), __VA_ARGS__)

#define assert_output(expected, ...) \
  G_STMT_START { \
    g_autofree char *_out = ok (__VA_ARGS__, NULL); \
    g_assert_cmpstr (_out, ==, (expected)); \
  } G_STMT_END

#define assert_usage_error(store, ...) \
  G_STMT_START { \
    g_autoptr(TestRun) _r = run (store, __VA_ARGS__, NULL); \
    g_assert_cmpint (_r->status, ==, 2); \
    g_assert_cmpstr (_r->out, ==, ""); \
    g_assert_true (g_str_has_prefix (_r->err, "qstore: ")); \
    g_assert_nonnull (strstr (_r->err, "Usage: qstore")); \
  } G_STMT_END

/* providers */

typedef struct
{
  const char *name;
  const char *capabilities[8];
} ExpectedProvider;

/* What each provider can do, as the design defines it. */
static const ExpectedProvider expected_providers[] = {
  { "lmdb", { "persistent", "atomic_batch", "snapshots", "multi_process", "writer_lock",
              "write_txn", NULL } },
  { "memory", { "atomic_batch", "snapshots", NULL } },
#ifdef TEST_HAVE_POSTGRES
  { "postgres", { "persistent", "atomic_batch", "snapshots", "multi_process", "writer_lock",
                  "write_txn", "remote", NULL } },
#endif
  { "sqlite", { "persistent", "atomic_batch", "snapshots", "multi_process", "writer_lock",
                "write_txn", NULL } },
};

static void
test_providers_text (void)
{
  g_autoptr(GString) expected = g_string_new (NULL);
  g_autofree char *out = NULL;
  int width = 0;

  /* Names are padded to the longest. */
  for (guint i = 0; i < G_N_ELEMENTS (expected_providers); i++)
    width = MAX (width, (int) strlen (expected_providers[i].name));
  for (guint i = 0; i < G_N_ELEMENTS (expected_providers); i++)
    {
      g_autofree char *list = g_strjoinv (", ", (char **) expected_providers[i].capabilities);

      g_string_append_printf (expected, "%-*s  %s\n", width, expected_providers[i].name, list);
    }

  /* No store is needed. */
  out = ok (NULL, "providers", NULL);
  g_assert_cmpstr (out, ==, expected->str);
}

static void
test_providers_json (void)
{
  g_autofree char *out = ok (NULL, "providers", "--json", NULL);
  g_auto(GStrv) lines = g_strsplit (out, "\n", -1);

  g_assert_cmpuint (g_strv_length (lines), ==, G_N_ELEMENTS (expected_providers) + 1);
  g_assert_cmpstr (lines[G_N_ELEMENTS (expected_providers)], ==, "");

  for (guint i = 0; i < G_N_ELEMENTS (expected_providers); i++)
    {
      const ExpectedProvider *e = &expected_providers[i];
      g_autoptr(JsonParser) parser = json_parser_new ();
      g_autoptr(GError) error = NULL;
      JsonObject *object;
      JsonArray *caps;
      QStoreCapabilities lib_caps;
      guint n = g_strv_length ((char **) e->capabilities);

      json_parser_load_from_data (parser, lines[i], -1, &error);
      g_assert_no_error (error);
      g_assert_true (JSON_NODE_HOLDS_OBJECT (json_parser_get_root (parser)));
      object = json_node_get_object (json_parser_get_root (parser));
      g_assert_cmpuint (json_object_get_size (object), ==, 2);
      g_assert_cmpstr (json_object_get_string_member (object, "name"), ==, e->name);
      caps = json_object_get_array_member (object, "capabilities");
      g_assert_nonnull (caps);
      g_assert_cmpuint (json_array_get_length (caps), ==, n);
      for (guint j = 0; j < n; j++)
        g_assert_cmpstr (json_array_get_string_element (caps, j), ==, e->capabilities[j]);

      /* The library, asked directly, agrees with the command. */
      qstore_lookup_provider_capabilities (e->name, &lib_caps, &error);
      g_assert_no_error (error);
      g_assert_cmpint (!!(lib_caps & QSTORE_CAPABILITY_PERSISTENT), ==,
                       g_strv_contains (e->capabilities, "persistent"));
      g_assert_cmpint (!!(lib_caps & QSTORE_CAPABILITY_ATOMIC_BATCH), ==,
                       g_strv_contains (e->capabilities, "atomic_batch"));
      g_assert_cmpint (!!(lib_caps & QSTORE_CAPABILITY_SNAPSHOTS), ==,
                       g_strv_contains (e->capabilities, "snapshots"));
      g_assert_cmpint (!!(lib_caps & QSTORE_CAPABILITY_MULTI_PROCESS), ==,
                       g_strv_contains (e->capabilities, "multi_process"));
      g_assert_cmpint (!!(lib_caps & QSTORE_CAPABILITY_WRITER_LOCK), ==,
                       g_strv_contains (e->capabilities, "writer_lock"));
      g_assert_cmpint (!!(lib_caps & QSTORE_CAPABILITY_WRITE_TXN), ==,
                       g_strv_contains (e->capabilities, "write_txn"));
    }
}

/* kv on persistent providers */

static void
test_put_get_del (Fixture       *f,
                  gconstpointer  data)
{
  g_autoptr(TestRun) missing = NULL;
  g_autoptr(TestRun) elsewhere = NULL;
  g_autofree char *message = NULL;

  assert_output ("", f->uri, "kv", "put", "main.t", "k1", "v1");
  assert_output ("v1\n", f->uri, "kv", "get", "main.t", "k1");
  assert_output ("", f->uri, "kv", "put", "main.t", "k1", "v2");
  assert_output ("v2\n", f->uri, "kv", "get", "main.t", "k1");
  assert_output ("", f->uri, "kv", "put", "--sync", "main.t", "k2", "hello world");
  assert_output ("hello world\n", f->uri, "kv", "get", "main.t", "k2");
  /* An empty value is a value. */
  assert_output ("", f->uri, "kv", "put", "main.t", "k3", "");
  assert_output ("\n", f->uri, "kv", "get", "main.t", "k3");
  /* Values starting with a dash after --. */
  assert_output ("", f->uri, "kv", "put", "main.t", "--", "-k", "-v");
  assert_output ("-v\n", f->uri, "kv", "get", "main.t", "--", "-k");

  assert_output ("", f->uri, "kv", "del", "main.t", "k1");
  missing = run (f->uri, "kv", "get", "main.t", "k1", NULL);
  g_assert_cmpint (missing->status, ==, 1);
  g_assert_cmpstr (missing->out, ==, "");
  message = g_strdup_printf ("qstore: key “k1” not found in store “main.t” at %s\n", f->uri);
  g_assert_cmpstr (missing->err, ==, message);

  /* Deleting an absent key is fine; --sync is accepted. */
  assert_output ("", f->uri, "kv", "del", "--sync", "main.t", "k1");
  assert_output ("hello world\n", f->uri, "kv", "get", "main.t", "k2");

  /* Stores are separate. */
  elsewhere = run (f->uri, "kv", "get", "main.u", "k2", NULL);
  g_assert_cmpint (elsewhere->status, ==, 1);
}

static void
test_scan (Fixture       *f,
           gconstpointer  data)
{
  const char *keys[] = { "c", "a", "e", "b", "d" };

  for (guint i = 0; i < G_N_ELEMENTS (keys); i++)
    {
      g_autofree char *value = g_ascii_strup (keys[i], -1);

      assert_output ("", f->uri, "kv", "put", "main.t", keys[i], value);
    }
  assert_output ("", f->uri, "kv", "put", "main.u", "x", "1");

  assert_output ("a\tA\nb\tB\nc\tC\nd\tD\ne\tE\n", f->uri, "kv", "scan", "main.t");
  assert_output ("b\tB\nc\tC\nd\tD\ne\tE\n", f->uri, "kv", "scan", "main.t", "--gte", "b");
  assert_output ("c\tC\nd\tD\ne\tE\n", f->uri, "kv", "scan", "main.t", "--gt", "b");
  assert_output ("a\tA\nb\tB\nc\tC\nd\tD\n", f->uri, "kv", "scan", "main.t", "--lte", "d");
  assert_output ("a\tA\nb\tB\nc\tC\n", f->uri, "kv", "scan", "main.t", "--lt", "d");
  assert_output ("b\tB\nc\tC\n", f->uri, "kv", "scan", "main.t", "--gte", "b", "--lt", "d");
  assert_output ("c\tC\nd\tD\n", f->uri, "kv", "scan", "main.t", "--gt=b", "--lte=d");
  /* Bounds between keys. */
  assert_output ("c\tC\nd\tD\n", f->uri, "kv", "scan", "main.t", "--gte", "bb", "--lt", "dd");
  assert_output ("", f->uri, "kv", "scan", "main.t", "--gt", "e");

  assert_output ("e\tE\nd\tD\nc\tC\nb\tB\na\tA\n", f->uri, "kv", "scan", "main.t", "--reverse");
  assert_output ("d\tD\nc\tC\nb\tB\n", f->uri,
                 "kv", "scan", "main.t", "--reverse", "--gte", "b", "--lt", "e");
  assert_output ("c\tC\nb\tB\n", f->uri,
                 "kv", "scan", "main.t", "--reverse", "--gt", "a", "--lte", "c");

  assert_output ("a\tA\nb\tB\n", f->uri, "kv", "scan", "main.t", "--limit", "2");
  assert_output ("e\tE\nd\tD\n", f->uri, "kv", "scan", "main.t", "--reverse", "--limit", "2");
  assert_output ("c\tC\n", f->uri, "kv", "scan", "main.t", "--gt", "b", "--limit=1");
  assert_output ("", f->uri, "kv", "scan", "main.t", "--limit", "0");
  assert_output ("a\tA\nb\tB\nc\tC\nd\tD\ne\tE\n", f->uri,
                 "kv", "scan", "main.t", "--limit", "100");

  assert_output ("x\t1\n", f->uri, "kv", "scan", "main.u");
  assert_output ("", f->uri, "kv", "scan", "main.never_written");
}

static void
test_hex_and_escapes (Fixture       *f,
                      gconstpointer  data)
{
  assert_output ("", f->uri, "kv", "put", "--hex", "main.b", "00ff", "0102");
  assert_output ("", f->uri, "kv", "put", "--hex", "main.b", "41", "7F");
  assert_output ("", f->uri, "kv", "put", "main.b", "tab\there", "back\\slash\nnew line");
  assert_output ("", f->uri, "kv", "put", "main.b", "z-utf8", "h\xc3\xa9llo \xe2\x82\xac");

  assert_output ("0102\n", f->uri, "kv", "get", "--hex", "main.b", "00ff");
  assert_output ("0102\n", f->uri, "kv", "get", "--hex", "main.b", "00FF");
  assert_output ("\\x7f\n", f->uri, "kv", "get", "main.b", "A");
  assert_output ("h\xc3\xa9llo \xe2\x82\xac\n", f->uri, "kv", "get", "main.b", "z-utf8");

  /* Text output escapes what is not printable UTF-8, and the backslash. */
  assert_output ("\\x00\\xff\t\\x01\\x02\n"
                 "A\t\\x7f\n"
                 "tab\\x09here\tback\\\\slash\\x0anew line\n"
                 "z-utf8\th\xc3\xa9llo \xe2\x82\xac\n",
                 f->uri, "kv", "scan", "main.b");
  assert_output ("00ff\t0102\n"
                 "41\t7f\n"
                 "7461620968657265\t6261636b5c736c6173680a6e6577206c696e65\n"
                 "7a2d75746638\t68c3a96c6c6f20e282ac\n",
                 f->uri, "kv", "scan", "--hex", "main.b");
  assert_output ("41\t7f\n", f->uri, "kv", "scan", "--hex", "main.b", "--gte", "41", "--lt", "7461");

  /* A truncated UTF-8 sequence is escaped byte by byte. */
  assert_output ("", f->uri, "kv", "put", "--hex", "main.c", "61", "c3e282");
  assert_output ("\\xc3\\xe2\\x82\n", f->uri, "kv", "get", "main.c", "a");

  assert_output ("", f->uri, "kv", "del", "--hex", "main.b", "00ff");
  assert_output ("41\t7f\n", f->uri, "kv", "scan", "--hex", "main.b", "--limit", "1");

  /* Hexadecimal input must be hexadecimal. */
  assert_usage_error (f->uri, "kv", "put", "--hex", "main.b", "0g", "00");
  assert_usage_error (f->uri, "kv", "put", "--hex", "main.b", "abc", "00");
  assert_usage_error (f->uri, "kv", "scan", "--hex", "main.b", "--gte", "x");
}

static JsonArray *
parse_array (JsonParser *parser,
             const char *line)
{
  g_autoptr(GError) error = NULL;
  JsonNode *root;

  json_parser_load_from_data (parser, line, -1, &error);
  g_assert_no_error (error);
  root = json_parser_get_root (parser);
  g_assert_true (JSON_NODE_HOLDS_ARRAY (root));
  g_assert_cmpuint (json_array_get_length (json_node_get_array (root)), ==, 2);
  return json_node_get_array (root);
}

static void
test_json (Fixture       *f,
           gconstpointer  data)
{
  g_autofree char *text = NULL;
  g_autofree char *hex = NULL;
  g_autofree char *stores = NULL;
  g_auto(GStrv) lines = NULL;
  g_auto(GStrv) hex_lines = NULL;
  g_autoptr(JsonParser) parser = json_parser_new ();
  JsonArray *a;
  JsonObject *blob;

  assert_output ("", f->uri, "kv", "put", "main.j", "a", "plain");
  assert_output ("", f->uri, "kv", "put", "main.j", "b\"q", "line\nbreak\ttab");
  assert_output ("", f->uri, "kv", "put", "main.j", "c", "\xc3\xa9t\xc3\xa9");
  assert_output ("", f->uri, "kv", "put", "--hex", "main.j", "64", "ff00fe");

  text = ok (f->uri, "kv", "scan", "--json", "main.j", NULL);
  lines = g_strsplit (text, "\n", -1);
  g_assert_cmpuint (g_strv_length (lines), ==, 5);
  g_assert_cmpstr (lines[4], ==, "");

  a = parse_array (parser, lines[0]);
  g_assert_cmpstr (json_array_get_string_element (a, 0), ==, "a");
  g_assert_cmpstr (json_array_get_string_element (a, 1), ==, "plain");
  a = parse_array (parser, lines[1]);
  g_assert_cmpstr (json_array_get_string_element (a, 0), ==, "b\"q");
  g_assert_cmpstr (json_array_get_string_element (a, 1), ==, "line\nbreak\ttab");
  a = parse_array (parser, lines[2]);
  g_assert_cmpstr (json_array_get_string_element (a, 1), ==, "\xc3\xa9t\xc3\xa9");
  /* Bytes that are not UTF-8 become {"$blob": base64}. */
  a = parse_array (parser, lines[3]);
  g_assert_cmpstr (json_array_get_string_element (a, 0), ==, "d");
  blob = json_array_get_object_element (a, 1);
  g_assert_nonnull (blob);
  g_assert_cmpuint (json_object_get_size (blob), ==, 1);
  g_assert_cmpstr (json_object_get_string_member (blob, "$blob"), ==, "/wD+");

  hex = ok (f->uri, "kv", "scan", "--json", "--hex", "--reverse", "--limit", "2", "main.j", NULL);
  hex_lines = g_strsplit (hex, "\n", -1);
  g_assert_cmpuint (g_strv_length (hex_lines), ==, 3);
  a = parse_array (parser, hex_lines[0]);
  g_assert_cmpstr (json_array_get_string_element (a, 0), ==, "64");
  g_assert_cmpstr (json_array_get_string_element (a, 1), ==, "ff00fe");
  a = parse_array (parser, hex_lines[1]);
  g_assert_cmpstr (json_array_get_string_element (a, 0), ==, "63");
  g_assert_cmpstr (json_array_get_string_element (a, 1), ==, "c3a974c3a9");

  stores = ok (f->uri, "kv", "stores", "--json", NULL);
  g_assert_cmpstr (stores, ==, "\"main.j\"\n");
}

static void
test_stores (Fixture       *f,
             gconstpointer  data)
{
  assert_output ("", f->uri, "kv", "put", "main.u", "k", "v");
  assert_output ("", f->uri, "kv", "put", "main.t", "k", "v");
  assert_output ("", f->uri, "kv", "put", "main.t_idx_by_name", "k", "v");
  assert_output ("main.t\nmain.t_idx_by_name\nmain.u\n", f->uri, "kv", "stores");

  /* Only stores that hold entries are listed. */
  assert_output ("", f->uri, "kv", "del", "main.u", "k");
  assert_output ("main.t\nmain.t_idx_by_name\n", f->uri, "kv", "stores");
}

/* Every regular file of @dir but the ones readers are expected to touch
 * (LMDB's reader table, SQLite's shared-memory index), with a digest of its
 * content. Empty files hold no bytes: a SQLite reader may leave an empty
 * write-ahead log behind. */
static GHashTable *
snapshot_files (const char *dir)
{
  GHashTable *files = test_checksum_tree (dir);
  g_autofree char *empty = g_compute_checksum_for_data (G_CHECKSUM_SHA256,
                                                        (const guchar *) "", 0);
  GHashTableIter iter;
  const char *path;
  const char *sum;

  g_hash_table_iter_init (&iter, files);
  while (g_hash_table_iter_next (&iter, (gpointer *) &path, (gpointer *) &sum))
    {
      g_autofree char *name = g_path_get_basename (path);

      if (g_str_equal (name, "lock.mdb") || g_str_has_suffix (name, "-shm") ||
          g_str_equal (sum, empty))
        g_hash_table_iter_remove (&iter);
    }
  return files;
}

static gboolean
same_files (GHashTable *before,
            GHashTable *after)
{
  GHashTableIter iter;
  gpointer key, value;

  g_hash_table_iter_init (&iter, before);
  while (g_hash_table_iter_next (&iter, &key, &value))
    if (g_strcmp0 (g_hash_table_lookup (after, key), value) != 0)
      return FALSE;
  return g_hash_table_size (after) == g_hash_table_size (before);
}

static void
assert_same_files (GHashTable *before,
                   GHashTable *after)
{
  GHashTableIter iter;
  gpointer key, value;

  g_hash_table_iter_init (&iter, before);
  while (g_hash_table_iter_next (&iter, &key, &value))
    {
      g_test_message ("comparing %s", (const char *) key);
      g_assert_cmpstr (g_hash_table_lookup (after, key), ==, value);
    }
  g_assert_cmpuint (g_hash_table_size (after), ==, g_hash_table_size (before));
}

static void
test_reads_change_nothing (Fixture       *f,
                           gconstpointer  data)
{
  g_autoptr(GHashTable) before = NULL;
  g_autoptr(GHashTable) after = NULL;
  g_autoptr(TestRun) absent = NULL;
  g_autoptr(TestRun) nowhere = NULL;
  g_autofree char *missing_uri = test_spec_uri (f->provider, f->dir, "missing");
  g_autofree char *missing_path = NULL;

  for (guint i = 0; i < 10; i++)
    {
      g_autofree char *key = g_strdup_printf ("key%03u", i);

      assert_output ("", f->uri, "kv", "put", "main.t", key, "value");
    }
  assert_output ("", f->uri, "sql", "CREATE TABLE s (a)", "INSERT INTO s VALUES (1)");

  before = snapshot_files (f->dir);
  g_assert_cmpuint (g_hash_table_size (before), >, 0);

  assert_output ("value\n", f->uri, "kv", "get", "main.t", "key007");
  absent = run (f->uri, "kv", "get", "main.t", "nokey", NULL);
  g_assert_cmpint (absent->status, ==, 1);
  assert_output ("key000\tvalue\nkey001\tvalue\n", f->uri, "kv", "scan", "main.t", "--limit", "2");
  assert_output ("key009\tvalue\n", f->uri, "kv", "scan", "main.t", "--reverse", "--limit", "1");
  assert_output ("__catalog__\n__stats__\nmain.s\nmain.t\n", f->uri, "kv", "stores");
  /* SQL that only reads opens the store read-only: no clean-shutdown
   * marker is consumed or written. */
  assert_output ("1\n", f->uri, "sql", "SELECT count(*) FROM s");
  assert_output ("1\n10000\n", f->uri, "sql",
                 "BEGIN; SELECT a FROM s; PRAGMA materialized_view_rebuild_row_threshold; COMMIT");

  after = snapshot_files (f->dir);
  assert_same_files (before, after);

  /* The same comparison sees a write. */
  assert_output ("", f->uri, "sql", "INSERT INTO s VALUES (2)");
  g_clear_pointer (&after, g_hash_table_unref);
  after = snapshot_files (f->dir);
  g_assert_false (same_files (before, after));

  /* A read does not create a location that does not exist. */
  nowhere = run (missing_uri, "kv", "get", "main.t", "k", NULL);
  g_assert_cmpint (nowhere->status, ==, 1);
  g_assert_true (g_str_has_prefix (nowhere->err, "qstore: "));
  missing_path = g_strdup (strchr (missing_uri, ':') + 1);
  g_assert_false (g_file_test (missing_path, G_FILE_TEST_EXISTS));
}

/* memory: nothing outlives one invocation */

static void
test_memory (void)
{
  g_autoptr(TestRun) get = NULL;
  g_autofree char *scan = NULL;
  g_autofree char *stores = NULL;

  assert_output ("", "memory:", "kv", "put", "main.t", "k", "v");
  get = run ("memory:", "kv", "get", "main.t", "k", NULL);
  g_assert_cmpint (get->status, ==, 1);
  g_assert_cmpstr (get->err, ==, "qstore: key “k” not found in store “main.t” at memory:\n");
  scan = ok ("memory:", "kv", "scan", "main.t", NULL);
  g_assert_cmpstr (scan, ==, "");
  stores = ok ("memory:", "kv", "stores", NULL);
  g_assert_cmpstr (stores, ==, "");
}

/* Errors and usage */

static void
test_store_from_environment (Fixture       *f,
                             gconstpointer  data)
{
  g_autofree char *other = test_spec_uri (f->provider, f->dir, "other");
  g_autofree char *env_store = g_strconcat ("QSTORE_STORE=", f->uri, NULL);
  g_autofree char *env_other = g_strconcat ("QSTORE_STORE=", other, NULL);
  const char *env[] = { env_store, NULL };
  const char *env_wrong[] = { env_other, NULL };
  g_autoptr(TestRun) from_env = NULL;
  g_autoptr(TestRun) overridden = NULL;

  assert_output ("", f->uri, "kv", "put", "main.t", "k", "here");
  assert_output ("", other, "kv", "put", "main.t", "k", "there");

  from_env = run_with_env (env, NULL, "kv", "get", "main.t", "k", NULL);
  g_assert_cmpint (from_env->status, ==, 0);
  g_assert_cmpstr (from_env->out, ==, "here\n");

  /* --store wins over QSTORE_STORE. */
  overridden = run_with_env (env_wrong, f->uri, "kv", "get", "main.t", "k", NULL);
  g_assert_cmpint (overridden->status, ==, 0);
  g_assert_cmpstr (overridden->out, ==, "here\n");
}

static void
test_errors (Fixture       *f,
             gconstpointer  data)
{
  g_autoptr(QStoreBounds) negative = qstore_bounds_new ();
  g_autoptr(QStoreProvider) none = NULL;
  g_autoptr(GError) limit_error = NULL;
  g_autoptr(GError) provider_error = NULL;
  g_autoptr(TestRun) unknown = NULL;
  g_autoptr(TestRun) no_store = NULL;
  g_autoptr(TestRun) no_store_write = NULL;
  g_autoptr(TestRun) limit = NULL;
  g_autoptr(TestRun) limit_eq = NULL;
  g_autoptr(TestRun) empty_key = NULL;
  g_autofree char *expected = NULL;

  assert_output ("", f->uri, "kv", "put", "main.t", "k", "v");

  /* An unknown provider: the library's message, which names the known ones. */
  none = qstore_provider_new_for_uri ("nosuch:/x", QSTORE_OPEN_READ_ONLY, &provider_error);
  g_assert_null (none);
  g_assert_error (provider_error, QSTORE_ERROR, QSTORE_ERROR_NOT_FOUND);
  unknown = run ("nosuch:/x", "kv", "get", "main.t", "k", NULL);
  g_assert_cmpint (unknown->status, ==, 1);
  g_assert_cmpstr (unknown->out, ==, "");
  expected = g_strdup_printf ("qstore: %s\n", provider_error->message);
  g_assert_cmpstr (unknown->err, ==, expected);
  g_assert_nonnull (strstr (unknown->err, "nosuch"));
  g_assert_nonnull (strstr (unknown->err, "lmdb"));
  g_assert_nonnull (strstr (unknown->err, "memory"));
  g_assert_nonnull (strstr (unknown->err, "sqlite"));
  g_clear_pointer (&expected, g_free);

  /* No store given. */
  no_store = run (NULL, "kv", "get", "main.t", "k", NULL);
  g_assert_cmpint (no_store->status, ==, 2);
  g_assert_cmpstr (no_store->out, ==, "");
  g_assert_nonnull (strstr (no_store->err, "--store"));
  g_assert_nonnull (strstr (no_store->err, "QSTORE_STORE"));
  no_store_write = run (NULL, "kv", "put", "main.t", "k", "v", NULL);
  g_assert_cmpint (no_store_write->status, ==, 2);

  /* A limit that is not a number is bad usage; a negative one is the
   * library's to refuse. */
  assert_usage_error (f->uri, "kv", "scan", "main.t", "--limit", "abc");
  assert_usage_error (f->uri, "kv", "scan", "main.t", "--limit", "");
  assert_usage_error (f->uri, "kv", "scan", "main.t", "--limit", "1.5");
  qstore_bounds_set_limit (negative, -1);
  g_assert_false (qstore_bounds_validate (negative, &limit_error));
  g_assert_error (limit_error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT);
  expected = g_strdup_printf ("qstore: %s\n", limit_error->message);
  limit = run (f->uri, "kv", "scan", "main.t", "--limit", "-1", NULL);
  g_assert_cmpint (limit->status, ==, 1);
  g_assert_cmpstr (limit->out, ==, "");
  g_assert_cmpstr (limit->err, ==, expected);
  limit_eq = run (f->uri, "kv", "scan", "main.t", "--limit=-1", NULL);
  g_assert_cmpint (limit_eq->status, ==, 1);
  g_assert_cmpstr (limit_eq->err, ==, expected);

  /* Empty keys are refused by the library. */
  empty_key = run (f->uri, "kv", "put", "main.t", "", "v", NULL);
  g_assert_cmpint (empty_key->status, ==, 1);
  g_assert_true (g_str_has_prefix (empty_key->err, "qstore: "));
  g_assert_nonnull (strstr (empty_key->err, "main.t"));

  /* Bad usage. */
  assert_usage_error (f->uri, "nosuchcommand");
  assert_usage_error (f->uri, "kv", "nosuchcommand");
  assert_usage_error (f->uri, "kv");
  assert_usage_error (NULL, "--bogus", "providers");
  assert_usage_error (f->uri, "kv", "get", "main.t");
  assert_usage_error (f->uri, "kv", "get", "main.t", "k", "extra");
  assert_usage_error (f->uri, "kv", "put", "main.t", "k");
  assert_usage_error (f->uri, "kv", "get", "--bogus", "main.t", "k");
  assert_usage_error (f->uri, "kv", "scan", "main.t", "--gte", "a", "--gt", "b");
  assert_usage_error (f->uri, "kv", "scan", "main.t", "--lte", "a", "--lt", "b");
  assert_usage_error (NULL, "providers", "extra");
  {
    g_autoptr(TestRun) nothing = run (NULL, NULL, NULL);

    g_assert_cmpint (nothing->status, ==, 2);
    g_assert_nonnull (strstr (nothing->err, "No command"));
  }

  /* Nothing above wrote anything. */
  assert_output ("k\tv\n", f->uri, "kv", "scan", "main.t");
}

static void
test_help_and_version (void)
{
  g_autofree char *version = ok (NULL, "--version", NULL);
  g_autofree char *help = ok (NULL, "--help", NULL);
  g_autofree char *kv_help = ok (NULL, "kv", "--help", NULL);
  g_autofree char *scan_help = ok (NULL, "kv", "scan", "--help", NULL);
  g_autofree char *expected_version = g_strdup_printf ("qstore %s\n", PACKAGE_VERSION);

  g_assert_cmpstr (version, ==, expected_version);
  g_assert_nonnull (strstr (help, "Usage:\n  qstore [OPTION…] COMMAND"));
  g_assert_nonnull (strstr (help, "--store"));
  g_assert_nonnull (strstr (help, "  providers  "));
  g_assert_nonnull (strstr (help, "  kv  "));
  g_assert_nonnull (strstr (kv_help, "Usage:\n  qstore kv [OPTION…] COMMAND"));
  for (guint i = 0; i < 5; i++)
    {
      const char *sub[] = { "  put ", "  get ", "  del ", "  scan ", "  stores " };

      g_assert_nonnull (strstr (kv_help, sub[i]));
    }
  g_assert_nonnull (strstr (scan_help, "Usage:\n  qstore kv scan [OPTION…] STORE"));
  g_assert_nonnull (strstr (scan_help, "--reverse"));
  g_assert_nonnull (strstr (scan_help, "--limit"));
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);
  qstore_path = test_program_argument (argc, argv, "PATH-TO-QSTORE");

  g_test_add_func ("/tools/qstore/providers/text", test_providers_text);
  g_test_add_func ("/tools/qstore/providers/json", test_providers_json);
  g_test_add_func ("/tools/qstore/help-and-version", test_help_and_version);
  g_test_add_func ("/tools/qstore/memory", test_memory);
  add_persistent ("/tools/qstore", "put-get-del", test_put_get_del);
  add_persistent ("/tools/qstore", "scan", test_scan);
  add_persistent ("/tools/qstore", "hex-and-escapes", test_hex_and_escapes);
  add_persistent ("/tools/qstore", "json", test_json);
  add_persistent ("/tools/qstore", "stores", test_stores);
  add_persistent ("/tools/qstore", "reads-change-nothing", test_reads_change_nothing);
  add_persistent ("/tools/qstore", "store-from-environment", test_store_from_environment);
  add_persistent ("/tools/qstore", "errors", test_errors);

  return g_test_run ();
}
