/* test-qstore-check.c: `qstore check` on sound and damaged stores, and two
 * writer processes on one store
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include <glib/gstdio.h>
#include <json-glib/json-glib.h>

#include "tool-test.h"

/* `check --json`, its exit status asserted against what the report says. */
static JsonObject *
check_json (const char *uri)
{
  g_autoptr(TestRun) r = run (uri, "check", "--json", NULL);
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GError) error = NULL;
  JsonObject *report;

  g_test_message ("check: %s", r->out);
  json_parser_load_from_data (parser, r->out, -1, &error);
  g_assert_no_error (error);
  report = json_object_ref (json_node_get_object (json_parser_get_root (parser)));
  g_assert_cmpint (r->status, ==, json_object_get_boolean_member (report, "clean") ? 0 : 1);
  return report;
}

/* The items checked under @scope for @object, or -1 when not checked. */
static gint64
checked_items (JsonObject *report,
               const char *scope,
               const char *object)
{
  JsonArray *checked = json_object_get_array_member (report, "checked");

  for (guint i = 0; i < json_array_get_length (checked); i++)
    {
      JsonObject *item = json_array_get_object_element (checked, i);

      if (g_str_equal (json_object_get_string_member (item, "scope"), scope) &&
          g_str_equal (json_object_get_string_member (item, "object"), object))
        return json_object_get_int_member (item, "items");
    }
  return -1;
}

/* Whether a problem of @scope about @object says @words. */
static gboolean
has_problem (JsonObject *report,
             const char *scope,
             const char *object,
             const char *words)
{
  JsonArray *problems = json_object_get_array_member (report, "problems");

  for (guint i = 0; i < json_array_get_length (problems); i++)
    {
      JsonObject *problem = json_array_get_object_element (problems, i);

      if (g_str_equal (json_object_get_string_member (problem, "scope"), scope) &&
          g_str_equal (json_object_get_string_member (problem, "object"), object) &&
          strstr (json_object_get_string_member (problem, "message"), words) != NULL)
        return TRUE;
    }
  return FALSE;
}

static void
make_table (Fixture *f)
{
  g_free (ok (f->uri, "sql",
              "CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT, w INT);"
              "CREATE INDEX t_v ON t (v);"
              "CREATE INDEX t_w ON t (w) WHERE w > 10;"
              "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 40)"
              "  INSERT INTO t (v, w) SELECT 'v' || i, i FROM n;"
              "CREATE MATERIALIZED VIEW m AS SELECT v, count(*) AS c FROM t GROUP BY v",
              NULL));
}

/* The first key of @store, in hexadecimal. */
static char *
first_key (Fixture    *f,
           const char *store)
{
  g_autofree char *out = ok (f->uri, "kv", "scan", "--hex", "--limit", "1", store, NULL);
  char *tab = strchr (out, '\t');

  g_assert_nonnull (tab);
  return g_strndup (out, tab - out);
}

static void
test_sound (Fixture       *f,
            gconstpointer  data)
{
  g_autoptr(JsonObject) report = NULL;
  g_autofree char *text = NULL;

  make_table (f);
  report = check_json (f->uri);
  g_assert_true (json_object_get_boolean_member (report, "clean"));
  g_assert_cmpint (checked_items (report, "table", "t"), ==, 40);
  g_assert_cmpint (checked_items (report, "index", "t_v"), ==, 40);
  /* The partial index holds the rows its predicate admits: 11 to 40. */
  g_assert_cmpint (checked_items (report, "index", "t_w"), ==, 30);
  g_assert_cmpint (checked_items (report, "table", "m"), ==, 40);
  g_assert_cmpint (checked_items (report, "store", "main.t"), ==, 40);

  text = ok (f->uri, "check", NULL);
  g_assert_nonnull (strstr (text, "Checked 2 tables (80 rows)\n"));
  g_assert_true (g_str_has_suffix (text, "No problems found\n"));
}

/* Entries taken out of or slipped into an index, and a row stored behind
 * the table's back: each is named, and REINDEX repairs the index. */
static void
test_damaged (Fixture       *f,
              gconstpointer  data)
{
  g_autoptr(JsonObject) missing = NULL;
  g_autoptr(JsonObject) extra = NULL;
  g_autoptr(JsonObject) repaired = NULL;
  g_autoptr(JsonObject) forged = NULL;
  g_autoptr(TestRun) text = NULL;
  g_autofree char *entry = NULL;
  g_autofree char *row_key = NULL;
  g_autofree char *row = NULL;

  make_table (f);
  entry = first_key (f, "main.t_idx_t_v");
  g_free (ok (f->uri, "kv", "del", "--hex", "main.t_idx_t_v", entry, NULL));
  missing = check_json (f->uri);
  g_assert_true (has_problem (missing, "index", "t_v", "has no entry in the index"));
  g_assert_cmpint (json_array_get_length (json_object_get_array_member (missing, "problems")),
                   ==, 1);
  text = run (f->uri, "check", NULL);
  g_assert_cmpint (text->status, ==, 1);
  g_assert_nonnull (strstr (text->out, "index “t_v”: A row of table “t” has no entry"));
  g_assert_true (g_str_has_suffix (text->out, "1 problem found\n"));

  /* Back, plus one that points nowhere. */
  g_free (ok (f->uri, "kv", "put", "--hex", "main.t_idx_t_v", entry, "", NULL));
  g_free (ok (f->uri, "kv", "put", "--hex", "main.t_idx_t_v", "ff00", "", NULL));
  extra = check_json (f->uri);
  g_assert_true (has_problem (extra, "index", "t_v", "41 entries for 40 rows"));
  /* The entry put back holds no data key: a walk of the index would read
   * no row through it. */
  g_assert_true (has_problem (extra, "index", "t_v",
                              "The index entry of a row of table “t” names another row"));
  g_assert_cmpint (json_array_get_length (json_object_get_array_member (extra, "problems")),
                   ==, 2);

  g_free (ok (f->uri, "sql", "REINDEX t_v", NULL));
  repaired = check_json (f->uri);
  g_assert_true (json_object_get_boolean_member (repaired, "clean"));

  /* A row copied under a key its values do not give, with no count. */
  row_key = first_key (f, "main.t");
  {
    g_autofree char *out = ok (f->uri, "kv", "scan", "--hex", "--limit", "1", "main.t", NULL);

    row = g_strdup (strchr (out, '\t') + 1);
    g_strchomp (row);
  }
  g_free (ok (f->uri, "kv", "put", "--hex", "main.t", "80000000000003e8", row, NULL));
  forged = check_json (f->uri);
  g_assert_true (has_problem (forged, "table", "t", "stored under another key"));
  g_assert_true (has_problem (forged, "table", "t", "count 40 rows, the table holds 41"));
}

/* A truncated lmdb file: every command ends with an error or an answer,
 * never a signal (test_run_program() asserts a normal exit). */
static void
test_truncated (Fixture       *f,
                gconstpointer  data)
{
  g_autofree char *data_path = g_build_filename (f->dir, "store", "data.mdb", NULL);
  g_autofree char *copy_dir = g_build_filename (f->dir, "copy", NULL);
  g_autofree char *copy_uri = g_strdup_printf ("lmdb:%s", copy_dir);
  g_autofree char *copy_path = g_build_filename (copy_dir, "data.mdb", NULL);
  g_autofree char *contents = NULL;
  gsize size;

  make_table (f);
  g_assert_true (g_file_get_contents (data_path, &contents, &size, NULL));
  g_assert_cmpint (g_mkdir (copy_dir, 0700), ==, 0);

  {
    const gsize cuts[] = { 0, 4096, 8192, size / 2, size - 1 };

    for (guint i = 0; i < G_N_ELEMENTS (cuts); i++)
      {
        g_autoptr(TestRun) check = NULL;
        g_autoptr(TestRun) catalog = NULL;
        g_autoptr(TestRun) select = NULL;

        g_assert_true (g_file_set_contents (copy_path, contents, cuts[i], NULL));
        check = run (copy_uri, "check", NULL);
        catalog = run (copy_uri, "catalog", NULL);
        select = run (copy_uri, "sql", "SELECT count(*) FROM t", NULL);
        g_test_message ("cut at %" G_GSIZE_FORMAT ": check %d, catalog %d, select %d: %s",
                        cuts[i], check->status, catalog->status, select->status, check->out);
        /* A cut that takes only unused bytes leaves a sound store; one
         * that takes more is an error wherever it shows, and the check
         * names it. */
        g_assert_true (select->status == 1 || g_str_equal (select->out, "40\n"));
        g_assert_cmpint (catalog->status, <=, 1);
        g_assert_cmpint (check->status, <=, 1);
        if (select->status != 0 || catalog->status != 0)
          g_assert_cmpint (check->status, ==, 1);
        if (check->status == 1)
          g_assert_true (check->out[0] != '\0' || check->err[0] != '\0');
      }
  }
}

/* Two processes inserting through the command line: every insert either
 * lands or is refused with the one-writer message, never lost. */
typedef struct
{
  const char *uri;
  guint       tag;
  guint       n;
  guint       landed;
  guint       busy;
  GPtrArray  *values;   /* char *: the values that landed */
} Writer;

static gpointer
writer_run (gpointer data)
{
  Writer *w = data;

  for (guint i = 0; i < w->n; i++)
    {
      g_autofree char *value = g_strdup_printf ("%u", w->tag * 100000 + i);
      g_autofree char *sql = g_strdup_printf ("INSERT INTO t (v) VALUES (%s)", value);
      g_autoptr(TestRun) r = run (w->uri, "sql", sql, NULL);

      if (r->status == 0)
        {
          w->landed++;
          g_ptr_array_add (w->values, g_steal_pointer (&value));
        }
      else
        {
          /* Any other failure is a test failure, reported by the main
           * thread from the message kept here. */
          if (strstr (r->err, "a location has one writer at a time") != NULL)
            w->busy++;
          else
            g_ptr_array_add (w->values, g_strdup_printf ("failed: %s", r->err));
        }
    }
  return NULL;
}

static int
compare_numbers (gconstpointer a,
                 gconstpointer b)
{
  gint64 x = g_ascii_strtoll (*(const char * const *) a, NULL, 10);
  gint64 y = g_ascii_strtoll (*(const char * const *) b, NULL, 10);

  return x < y ? -1 : x > y;
}

static void
race (const char *uri,
      const char *base_uri,
      guint       n,
      guint      *landed,
      guint      *busy)
{
  Writer writers[2];
  GThread *threads[2];
  g_autoptr(GPtrArray) acknowledged = g_ptr_array_new_with_free_func (g_free);
  g_autofree char *stored = NULL;
  g_autofree char *expected = NULL;

  for (guint k = 0; k < 2; k++)
    {
      writers[k] = (Writer) { uri, k + 1, n, 0, 0, g_ptr_array_new_with_free_func (g_free) };
      threads[k] = g_thread_new ("writer", writer_run, &writers[k]);
    }
  *landed = *busy = 0;
  for (guint k = 0; k < 2; k++)
    {
      g_thread_join (threads[k]);
      *landed += writers[k].landed;
      *busy += writers[k].busy;
    }

  /* Exactly the values whose insert was acknowledged, each once. */
  stored = ok (base_uri, "sql", "SELECT v FROM t ORDER BY v", NULL);
  g_test_message ("%u inserts landed, %u refused as busy", *landed, *busy);
  for (guint k = 0; k < 2; k++)
    {
      for (guint i = 0; i < writers[k].values->len; i++)
        {
          const char *value = g_ptr_array_index (writers[k].values, i);

          g_assert_false (g_str_has_prefix (value, "failed: "));
          g_ptr_array_add (acknowledged, g_strdup_printf ("%s\n", value));
        }
      g_ptr_array_unref (writers[k].values);
    }
  g_ptr_array_sort (acknowledged, compare_numbers);
  g_ptr_array_add (acknowledged, NULL);
  expected = g_strjoinv ("", (char **) acknowledged->pdata);
  g_assert_cmpstr (stored, ==, expected);
  g_assert_cmpuint (*landed + *busy, ==, 2 * n);
}

static void
test_two_writers (Fixture       *f,
                  gconstpointer  data)
{
  guint n = g_test_slow () ? 200 : 40;
  g_autofree char *waiting = g_strdup_printf ("%s?wait_ms=20000", f->uri);
  guint landed, busy;

  g_free (ok (f->uri, "sql", "CREATE TABLE t (id INTEGER PRIMARY KEY, v INT)", NULL));
  race (f->uri, f->uri, n, &landed, &busy);
  g_assert_cmpuint (landed, >, 0);

  /* Waiting for the other writer, every insert lands. */
  g_free (ok (f->uri, "sql", "DELETE FROM t", NULL));
  race (waiting, f->uri, n, &landed, &busy);
  g_assert_cmpuint (landed, ==, 2 * n);
  g_assert_cmpuint (busy, ==, 0);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);
  qstore_path = test_program_argument (argc, argv, "PATH-TO-QSTORE");

  add_persistent ("/tools/check", "sound", test_sound);
  add_persistent ("/tools/check", "damaged", test_damaged);
  add_persistent ("/tools/check", "two-writers", test_two_writers);
  g_test_add ("/tools/check/truncated/lmdb", Fixture, "lmdb", fixture_setup, test_truncated,
              fixture_teardown);

  return g_test_run ();
}
