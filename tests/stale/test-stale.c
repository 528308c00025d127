/* test-stale.c: the stale report and `qstore stale`
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Usage: test-stale [--tap] PATH-TO-QSTORE, with QSTORE_TEST_PROVIDER set
 * to `lmdb` or `sqlite`.
 *
 * Materialized views are planted as catalog entries through the provider,
 * as are malformed meta entries: the report reads what is stored, so the
 * verdicts can be checked for every trust basis.
 */
#include "config.h"

#include <json-glib/json-glib.h>
#include <string.h>

#include <qstore.h>

#include "qstore-test-util.h"

static const char *qstore_path;

typedef struct
{
  char *dir;
  char *location;
  char *name;
  char *uri;
} Fixture;

static void
fixture_set_up (Fixture       *f,
                gconstpointer  data)
{
  const char *spec = g_getenv ("QSTORE_TEST_PROVIDER");
  g_autoptr(QStoreDatabase) db = NULL;
  g_autoptr(GError) error = NULL;

  f->name = g_strdup (spec ? spec : "lmdb");
  f->dir = test_make_tmp_dir ("qstore-stale-XXXXXX");
  f->location = g_str_equal (f->name, "sqlite")
    ? g_build_filename (f->dir, "store.db", NULL)
    : g_build_filename (f->dir, "store", NULL);
  f->uri = g_strconcat (f->name, ":", f->location, NULL);

  db = qstore_database_open (f->uri, QSTORE_OPEN_NONE, &error);
  g_assert_no_error (error);
  qstore_database_exec (db,
                        "CREATE TABLE t (id INTEGER PRIMARY KEY, a TEXT NOT NULL, b REAL);"
                        "CREATE TABLE u (k TEXT PRIMARY KEY, v INTEGER);"
                        "CREATE VIEW tv AS SELECT id, a FROM t WHERE b > 0;"
                        "INSERT INTO t VALUES (1, 'one', 1.5), (2, 'two', -1);",
                        &error);
  g_assert_no_error (error);
  qstore_database_close (db, &error);
  g_assert_no_error (error);
}

static void
fixture_tear_down (Fixture       *f,
                   gconstpointer  data)
{
  test_remove_tree (f->dir);
  g_free (f->dir);
  g_free (f->location);
  g_free (f->name);
  g_free (f->uri);
}

static void
plant_meta (Fixture    *f,
            const char *name,
            const char *value)
{
  g_autoptr(GBytes) key = qstore_catalog_key_for_meta (name);

  test_plant (f->uri, key, value);
}

static void
plant_view (Fixture    *f,
            const char *name,
            const char *ddl)
{
  g_autoptr(GBytes) key = qstore_catalog_key_for_materialized_view ("main", name);

  test_plant (f->uri, key, ddl);
}

/* Four materialized views: one over a table, one over it, one reading a
 * table through a plain view, and one whose body does not parse. */
static void
plant_views (Fixture *f)
{
  plant_view (f, "mv1", "CREATE MATERIALIZED VIEW mv1 AS SELECT id, a FROM t");
  plant_view (f, "mv2", "CREATE MATERIALIZED VIEW mv2 AS SELECT a, count(*) AS n FROM mv1 GROUP BY a");
  plant_view (f, "mv3", "CREATE MATERIALIZED VIEW mv3 AS SELECT * FROM tv WHERE id > 0");
  plant_view (f, "mv4", "CREATE MATERIALIZED VIEW mv4 AS SELECT v FROM missing_table");
}

static QStoreStaleReport *
read_report (Fixture    *f,
             const char *uri_suffix)
{
  g_autofree char *uri = g_strconcat (f->uri, uri_suffix, NULL);
  g_autoptr(QStoreProvider) provider = NULL;
  g_autoptr(GError) error = NULL;
  QStoreStaleReport *report;

  provider = qstore_provider_new_for_uri (uri, QSTORE_OPEN_READ_ONLY, &error);
  g_assert_no_error (error);
  report = qstore_stale_report_new (provider, &error);
  g_assert_no_error (error);
  g_assert_nonnull (report);
  qstore_provider_close_all (provider);
  return report;
}

static void
assert_verdict (QStoreStaleReport  *report,
                const char         *name,
                QStoreStaleVerdict  verdict,
                QStoreStaleReason   reason,
                const char         *subject)
{
  QStoreStaleView *view = qstore_stale_report_lookup_view (report, name);

  g_assert_nonnull (view);
  g_assert_cmpint (qstore_stale_view_get_verdict (view), ==, verdict);
  g_assert_cmpint (qstore_stale_view_get_reason_kind (view), ==, reason);
  g_assert_cmpstr (qstore_stale_view_get_reason_subject (view), ==, subject);
  g_assert_nonnull (qstore_stale_view_get_reason (view));
  g_assert_true (g_str_has_suffix (qstore_stale_view_get_reason (view), "."));
}

static void
test_clean_close (Fixture       *f,
                  gconstpointer  data)
{
  g_autoptr(QStoreStaleReport) report = read_report (f, "");
  const char * const *at_close = qstore_stale_report_get_stale_at_close (report);

  g_assert_true (qstore_stale_report_get_marker_present (report));
  g_assert_false (qstore_stale_report_get_marker_malformed (report));
  g_assert_nonnull (at_close);
  g_assert_null (at_close[0]);
  g_assert_cmpstr (qstore_stale_report_get_marker_text (report), ==, "[]");
  g_assert_false (qstore_stale_report_get_durable_set_present (report));
  g_assert_null (qstore_stale_report_get_durable_stale (report));
  g_assert_true (qstore_stale_report_get_atomic (report));
  g_assert_cmpint (qstore_stale_report_get_trust (report), ==, QSTORE_STALE_TRUST_MARKER);
  g_assert_cmpuint (g_list_model_get_n_items (qstore_stale_report_get_views (report)), ==, 0);
}

static void
test_no_close (Fixture       *f,
               gconstpointer  data)
{
  g_autoptr(QStoreDatabase) db = NULL;
  g_autoptr(QStoreStaleReport) report = NULL;
  g_autoptr(GError) error = NULL;

  /* Opening for writing consumes the marker; dropping the database
   * without closing leaves none, as a crash would. */
  db = qstore_database_open (f->uri, QSTORE_OPEN_NONE, &error);
  g_assert_no_error (error);
  g_clear_object (&db);

  plant_views (f);
  report = read_report (f, "");
  g_assert_false (qstore_stale_report_get_marker_present (report));
  g_assert_null (qstore_stale_report_get_stale_at_close (report));
  g_assert_cmpint (qstore_stale_report_get_trust (report), ==, QSTORE_STALE_TRUST_NONE);
  assert_verdict (report, "main.mv1", QSTORE_STALE_VERDICT_REFILL, QSTORE_STALE_REASON_MARKER_ABSENT, NULL);
  assert_verdict (report, "main.mv2", QSTORE_STALE_VERDICT_REFILL, QSTORE_STALE_REASON_MARKER_ABSENT, NULL);
}

static void
test_trusted_marker (Fixture       *f,
                     gconstpointer  data)
{
  g_autoptr(QStoreStaleReport) report = NULL;
  const char * const *sources;

  plant_views (f);
  plant_view (f, "mv5", "CREATE MATERIALIZED VIEW mv5 AS SELECT");
  report = read_report (f, "");

  g_assert_cmpuint (g_list_model_get_n_items (qstore_stale_report_get_views (report)), ==, 5);
  assert_verdict (report, "main.mv1", QSTORE_STALE_VERDICT_ADOPT, QSTORE_STALE_REASON_TRUSTED_MARKER, NULL);
  assert_verdict (report, "main.mv2", QSTORE_STALE_VERDICT_ADOPT, QSTORE_STALE_REASON_TRUSTED_MARKER, NULL);
  assert_verdict (report, "main.mv3", QSTORE_STALE_VERDICT_ADOPT, QSTORE_STALE_REASON_TRUSTED_MARKER, NULL);
  assert_verdict (report, "main.mv4", QSTORE_STALE_VERDICT_ERROR, QSTORE_STALE_REASON_SOURCE_MISSING,
                  "main.missing_table");
  g_assert_cmpint (qstore_stale_view_get_verdict (qstore_stale_report_lookup_view (report, "main.mv5")),
                   ==, QSTORE_STALE_VERDICT_ERROR);
  g_assert_cmpint (qstore_stale_view_get_reason_kind (qstore_stale_report_lookup_view (report, "main.mv5")),
                   ==, QSTORE_STALE_REASON_DEFINITION_ERROR);

  sources = qstore_stale_view_get_sources (qstore_stale_report_lookup_view (report, "main.mv1"));
  g_assert_cmpstrv (sources, ((const char *[]) { "main.t", NULL }));
  sources = qstore_stale_view_get_sources (qstore_stale_report_lookup_view (report, "main.mv2"));
  g_assert_cmpstrv (sources, ((const char *[]) { "main.mv1", NULL }));
  /* The plain view, and through it the table it reads. */
  sources = qstore_stale_view_get_sources (qstore_stale_report_lookup_view (report, "main.mv3"));
  g_assert_cmpstrv (sources, ((const char *[]) { "main.t", "main.tv", NULL }));
  g_assert_cmpstr (qstore_stale_view_get_body (qstore_stale_report_lookup_view (report, "main.mv1")),
                   ==, "SELECT id, a FROM t");
}

static void
test_stale_at_close (Fixture       *f,
                     gconstpointer  data)
{
  g_autoptr(QStoreStaleReport) report = NULL;
  const char * const *at_close;

  plant_views (f);
  plant_meta (f, "clean_shutdown", "[\"main.mv1\"]");
  report = read_report (f, "");

  at_close = qstore_stale_report_get_stale_at_close (report);
  g_assert_cmpstrv (at_close, ((const char *[]) { "main.mv1", NULL }));
  assert_verdict (report, "main.mv1", QSTORE_STALE_VERDICT_REFILL, QSTORE_STALE_REASON_STALE_AT_CLOSE, NULL);
  /* A view over a refilled view refills too. */
  assert_verdict (report, "main.mv2", QSTORE_STALE_VERDICT_REFILL, QSTORE_STALE_REASON_SOURCE_REFILLED,
                  "main.mv1");
  assert_verdict (report, "main.mv3", QSTORE_STALE_VERDICT_ADOPT, QSTORE_STALE_REASON_TRUSTED_MARKER, NULL);
}

static void
test_malformed_marker (Fixture       *f,
                       gconstpointer  data)
{
  const char *payloads[] = { "{", "{\"main.mv1\": true}", "[\"main.mv1\", 3]", "\xff\xfe" };

  plant_views (f);
  for (guint i = 0; i < G_N_ELEMENTS (payloads); i++)
    {
      g_autoptr(QStoreStaleReport) report = NULL;

      plant_meta (f, "clean_shutdown", payloads[i]);
      report = read_report (f, "");
      g_assert_true (qstore_stale_report_get_marker_present (report));
      g_assert_true (qstore_stale_report_get_marker_malformed (report));
      g_assert_null (qstore_stale_report_get_stale_at_close (report));
      g_assert_nonnull (qstore_stale_report_get_marker_text (report));
      g_assert_cmpint (qstore_stale_report_get_trust (report), ==, QSTORE_STALE_TRUST_NONE);
      assert_verdict (report, "main.mv1", QSTORE_STALE_VERDICT_REFILL,
                      QSTORE_STALE_REASON_MARKER_MALFORMED, NULL);
      assert_verdict (report, "main.mv3", QSTORE_STALE_VERDICT_REFILL,
                      QSTORE_STALE_REASON_MARKER_MALFORMED, NULL);
    }
}

static void
test_durable_set (Fixture       *f,
                  gconstpointer  data)
{
  g_autoptr(QStoreStaleReport) report = NULL;
  g_autoptr(QStoreStaleReport) non_atomic = NULL;
  g_autoptr(QStoreStaleReport) malformed = NULL;

  plant_views (f);
  plant_meta (f, "stale_mvs", "[\"main.mv3\"]");
  /* With the set, an atomic provider trusts it even without a marker. */
  plant_meta (f, "clean_shutdown", NULL);
  report = read_report (f, "");

  g_assert_false (qstore_stale_report_get_marker_present (report));
  g_assert_true (qstore_stale_report_get_durable_set_present (report));
  g_assert_false (qstore_stale_report_get_durable_set_malformed (report));
  g_assert_cmpstrv (qstore_stale_report_get_durable_stale (report), ((const char *[]) { "main.mv3", NULL }));
  g_assert_cmpint (qstore_stale_report_get_trust (report), ==, QSTORE_STALE_TRUST_DURABLE_SET);
  assert_verdict (report, "main.mv1", QSTORE_STALE_VERDICT_ADOPT, QSTORE_STALE_REASON_TRUSTED_DURABLE_SET, NULL);
  assert_verdict (report, "main.mv2", QSTORE_STALE_VERDICT_ADOPT, QSTORE_STALE_REASON_TRUSTED_DURABLE_SET, NULL);
  assert_verdict (report, "main.mv3", QSTORE_STALE_VERDICT_REFILL, QSTORE_STALE_REASON_IN_DURABLE_SET, NULL);

  /* Without atomic commits the set is no basis: the (absent) marker is. */
  non_atomic = read_report (f, "?atomic=0");
  g_assert_false (qstore_stale_report_get_atomic (non_atomic));
  g_assert_true (qstore_stale_report_get_durable_set_present (non_atomic));
  g_assert_cmpint (qstore_stale_report_get_trust (non_atomic), ==, QSTORE_STALE_TRUST_NONE);
  assert_verdict (non_atomic, "main.mv1", QSTORE_STALE_VERDICT_REFILL, QSTORE_STALE_REASON_MARKER_ABSENT, NULL);

  plant_meta (f, "stale_mvs", "[\"main.mv3\"");
  plant_meta (f, "clean_shutdown", "[]");
  malformed = read_report (f, "");
  g_assert_true (qstore_stale_report_get_durable_set_malformed (malformed));
  g_assert_null (qstore_stale_report_get_durable_stale (malformed));
  g_assert_cmpint (qstore_stale_report_get_trust (malformed), ==, QSTORE_STALE_TRUST_NONE);
  assert_verdict (malformed, "main.mv1", QSTORE_STALE_VERDICT_REFILL,
                  QSTORE_STALE_REASON_DURABLE_SET_MALFORMED, NULL);
}

static void
test_cycle (Fixture       *f,
            gconstpointer  data)
{
  g_autoptr(QStoreStaleReport) report = NULL;

  plant_view (f, "ca", "CREATE MATERIALIZED VIEW ca AS SELECT * FROM cb");
  plant_view (f, "cb", "CREATE MATERIALIZED VIEW cb AS SELECT * FROM ca");
  report = read_report (f, "");
  g_assert_cmpint (qstore_stale_view_get_verdict (qstore_stale_report_lookup_view (report, "main.ca")),
                   ==, QSTORE_STALE_VERDICT_ERROR);
  g_assert_cmpint (qstore_stale_view_get_verdict (qstore_stale_report_lookup_view (report, "main.cb")),
                   ==, QSTORE_STALE_VERDICT_ERROR);
}

/* Reading is not consuming: the marker's bytes are still there. */
static void
test_read_only (Fixture       *f,
                gconstpointer  data)
{
  g_autoptr(QStoreProvider) provider = NULL;
  g_autoptr(QStoreKV) catalog = NULL;
  g_autoptr(GBytes) key = qstore_catalog_key_for_meta ("clean_shutdown");
  g_autoptr(GBytes) value = NULL;
  g_autoptr(GError) error = NULL;

  plant_views (f);
  for (int i = 0; i < 3; i++)
    {
      g_autoptr(QStoreStaleReport) report = read_report (f, "");

      g_assert_true (qstore_stale_report_get_marker_present (report));
    }

  provider = qstore_provider_new_for_uri (f->uri, QSTORE_OPEN_READ_ONLY, &error);
  g_assert_no_error (error);
  catalog = qstore_provider_get_catalog_store (provider, &error);
  value = qstore_kv_get (catalog, g_bytes_get_data (key, NULL), g_bytes_get_size (key), &error);
  g_assert_no_error (error);
  g_assert_nonnull (value);
  g_assert_cmpmem (g_bytes_get_data (value, NULL), g_bytes_get_size (value), "[]", 2);
  qstore_provider_close_all (provider);
}

static JsonObject *
run_json (Fixture    *f,
          const char *extra,
          JsonParser *parser)
{
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;
  g_autoptr(GError) error = NULL;
  int status = 0;
  const char *argv[] = { qstore_path, "--store", f->uri, "stale", "--json", extra, NULL };

  g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, &err, &status, &error);
  g_assert_no_error (error);
  g_assert_true (g_spawn_check_wait_status (status, NULL));
  g_assert_cmpstr (err, ==, "");
  /* One JSON value on one line. */
  g_assert_true (g_str_has_suffix (out, "}\n"));
  g_assert_null (strchr (out, '\n') == out + strlen (out) - 1 ? NULL : "more than one line");
  json_parser_load_from_data (parser, out, -1, &error);
  g_assert_no_error (error);
  return json_node_get_object (json_parser_get_root (parser));
}

static void
test_cli (Fixture       *f,
          gconstpointer  data)
{
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(JsonParser) parser2 = json_parser_new ();
  g_autoptr(JsonParser) parser3 = json_parser_new ();
  g_autoptr(QStoreStaleReport) after = NULL;
  JsonObject *root;
  JsonObject *marker;
  JsonArray *views;

  plant_views (f);
  plant_meta (f, "clean_shutdown", "[\"main.mv1\"]");

  root = run_json (f, NULL, parser);
  marker = json_object_get_object_member (root, "clean_shutdown_marker");
  g_assert_true (json_object_get_boolean_member (marker, "present"));
  g_assert_cmpstr (json_array_get_string_element (json_object_get_array_member (marker, "stale_at_close"), 0),
                   ==, "main.mv1");
  g_assert_false (json_object_get_boolean_member (json_object_get_object_member (root, "durable_stale_set"),
                                                  "present"));
  g_assert_true (json_object_get_null_member (json_object_get_object_member (root, "durable_stale_set"),
                                              "stale"));
  g_assert_true (json_object_get_null_member (root, "stale_now"));
  views = json_object_get_array_member (root, "next_open");
  g_assert_cmpuint (json_array_get_length (views), ==, 4);
  for (guint i = 0; i < 4; i++)
    {
      JsonObject *view = json_array_get_object_element (views, i);
      const char *name = json_object_get_string_member (view, "name");
      const char *verdict = json_object_get_string_member (view, "verdict");

      if (g_str_equal (name, "main.mv1") || g_str_equal (name, "main.mv2"))
        g_assert_cmpstr (verdict, ==, "refill");
      else if (g_str_equal (name, "main.mv3"))
        g_assert_cmpstr (verdict, ==, "adopt");
      else
        g_assert_cmpstr (verdict, ==, "error");
    }

  /* Malformed: null lists. */
  plant_meta (f, "clean_shutdown", "not json");
  root = run_json (f, NULL, parser2);
  marker = json_object_get_object_member (root, "clean_shutdown_marker");
  g_assert_true (json_object_get_boolean_member (marker, "present"));
  g_assert_true (json_object_get_null_member (marker, "stale_at_close"));

  /* --write opens the store as a program would: stale_now is a list, and
   * closing writes a fresh marker. */
  root = run_json (f, "--write", parser3);
  g_assert_false (json_object_get_null_member (root, "stale_now"));
  g_assert_cmpuint (json_array_get_length (json_object_get_array_member (root, "stale_now")), ==, 0);
  after = read_report (f, "");
  g_assert_true (qstore_stale_report_get_marker_present (after));
  g_assert_false (qstore_stale_report_get_marker_malformed (after));
}

static void
test_cli_text (Fixture       *f,
               gconstpointer  data)
{
  g_autofree char *out = NULL;
  g_autoptr(GError) error = NULL;
  int status = 0;
  const char *argv[] = { qstore_path, "--store", f->uri, "stale", NULL };

  g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL, &out, NULL, &status, &error);
  g_assert_no_error (error);
  g_assert_true (g_spawn_check_wait_status (status, NULL));
  g_assert_nonnull (strstr (out, "clean-shutdown marker: present, stale at close: (none)\n"));
  g_assert_nonnull (strstr (out, "durable stale set: absent\n"));
  g_assert_nonnull (strstr (out, "materialized views: none\n"));
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);
  qstore_path = test_program_argument (argc, argv, "PATH-TO-QSTORE");

#define ADD(name, func) \
  g_test_add ("/stale/" name, Fixture, NULL, fixture_set_up, func, fixture_tear_down)
  ADD ("clean-close", test_clean_close);
  ADD ("no-close", test_no_close);
  ADD ("trusted-marker", test_trusted_marker);
  ADD ("stale-at-close", test_stale_at_close);
  ADD ("malformed-marker", test_malformed_marker);
  ADD ("durable-set", test_durable_set);
  ADD ("cycle", test_cycle);
  ADD ("read-only", test_read_only);
  ADD ("cli-json", test_cli);
  ADD ("cli-text", test_cli_text);
#undef ADD

  return g_test_run ();
}
