/* test-changes-tool.c: `qstore changes`, run as a program
 *
 * Usage: test-changes-tool [--tap] QSTORE
 *
 * Runs against a persistent provider (QSTORE_TEST_PROVIDER): the command
 * is another process, which sees nothing of a memory store.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <signal.h>

#include <gio/gunixinputstream.h>
#include <json-glib/json-glib.h>

#include "qstore-test-util.h"

static const char *qstore;

/* The store of each test, in a directory of its own, not open: the
 * command opens it. */
static void
fixture_setup (TestDatabase  *t,
               gconstpointer  data)
{
  test_database_set_up (t, "qstore-changes-tool-XXXXXX");
  test_close_database (&t->db);
}

static TestRun *
changes (TestDatabase *f,
         const char *first,
         ...)
{
  g_autoptr(GPtrArray) args = g_ptr_array_new ();
  TestRun *run;
  va_list ap;

  g_ptr_array_add (args, (gpointer) "changes");
  va_start (ap, first);
  for (const char *a = first; a != NULL; a = va_arg (ap, const char *))
    g_ptr_array_add (args, (gpointer) a);
  va_end (ap);
  g_ptr_array_add (args, NULL);
  run = test_run_programv (qstore, NULL, f->uri, (const char * const *) args->pdata);
  return run;
}

static JsonObject *
parse_object (const char *line)
{
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GError) error = NULL;
  JsonNode *root;

  json_parser_load_from_data (parser, line, -1, &error);
  if (error != NULL)
    g_error ("“%s” is not JSON: %s", line, error->message);
  root = json_parser_get_root (parser);
  g_assert_true (JSON_NODE_HOLDS_OBJECT (root));
  return json_object_ref (json_node_get_object (root));
}

static char *
member_json (JsonObject *object,
             const char *name)
{
  g_autoptr(JsonGenerator) generator = json_generator_new ();

  g_assert_true (json_object_has_member (object, name));
  json_generator_set_root (generator, json_object_get_member (object, name));
  return json_generator_to_data (generator, NULL);
}

static void
test_no_log (TestDatabase  *f,
             gconstpointer  data)
{
  g_autoptr(TestRun) run = NULL;

  test_exec_at (f->uri, "CREATE TABLE t (a)");
  run = changes (f, NULL);
  g_assert_cmpint (run->status, ==, 1);
  g_assert_cmpstr (run->out, ==, "");
  g_assert_true (g_str_has_prefix (run->err, "qstore: The store at "));
  g_assert_nonnull (strstr (run->err, "keeps no change log: turn it on with PRAGMA "
                                      "qstore.change_log = N"));
}

static void
test_usage (TestDatabase  *f,
            gconstpointer  data)
{
  const char *bad[][3] = {
    { "--since", "-1", NULL },
    { "--observers", "--follow", NULL },
    { "--observers", "--since=3", NULL },
    { "extra", NULL, NULL },
    { "--since", "many", NULL },
  };

  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autoptr(TestRun) run = changes (f, bad[i][0], bad[i][1], NULL);

      g_assert_cmpint (run->status, ==, 2);
      g_assert_true (g_str_has_prefix (run->err, "qstore: "));
      g_assert_nonnull (strstr (run->err, "qstore changes --help"));
    }
  {
    const char *args[] = { "changes", NULL };
    g_autoptr(TestRun) run = test_run_programv (qstore, NULL, NULL, args);

    g_assert_cmpint (run->status, ==, 2);
    g_assert_nonnull (strstr (run->err, "No store given"));
  }
}

static void
fill (TestDatabase *f)
{
  test_exec_at (f->uri,
                "PRAGMA qstore.change_log = 100;"
                "CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT, b BLOB, r REAL);"
                "CREATE TABLE u (x, y);"
                "INSERT INTO t VALUES (1, 'Ada', x'00ff', 1.5), (2, NULL, NULL, NULL);"
                "BEGIN; UPDATE t SET name = 'Bea' WHERE id = 1; DELETE FROM t WHERE id = 2;"
                "INSERT INTO u VALUES ('é', 7); COMMIT");
}

static void
test_print (TestDatabase  *f,
            gconstpointer  data)
{
  g_autoptr(TestRun) run = NULL;
  g_autoptr(TestRun) later = NULL;
  g_auto(GStrv) lines = NULL;
  g_autofree char *expected = NULL;

  fill (f);
  run = changes (f, NULL);
  g_assert_cmpint (run->status, ==, 0);
  g_assert_cmpstr (run->err, ==, "");
  lines = g_strsplit (run->out, "\n", -1);
  /* The setting, two CREATE TABLEs, two transactions, and the end. */
  g_assert_cmpuint (g_strv_length (lines), ==, 6);
  g_assert_true (g_str_has_prefix (lines[0], "1 "));
  g_assert_true (g_str_has_suffix (lines[3], " t insert [1]; t insert [2]"));
  g_assert_true (g_str_has_suffix (lines[4], " t update [1]; t delete [2]; u insert [1]"));
  g_assert_true (g_str_has_prefix (lines[4], "5 20"));
  g_assert_cmpstr (lines[5], ==, "");

  /* After 4: the last line alone. */
  later = changes (f, "--since", "4", NULL);
  g_assert_cmpint (later->status, ==, 0);
  expected = g_strconcat (lines[4], "\n", NULL);
  g_assert_cmpstr (later->out, ==, expected);
}

static void
test_json (TestDatabase  *f,
           gconstpointer  data)
{
  g_autoptr(TestRun) run = NULL;
  g_auto(GStrv) lines = NULL;
  g_autoptr(JsonObject) four = NULL, five = NULL;
  g_autofree char *rows4 = NULL, *rows5 = NULL, *time = NULL;

  fill (f);
  run = changes (f, "--json", "--since", "3", NULL);
  g_assert_cmpint (run->status, ==, 0);
  lines = g_strsplit (run->out, "\n", -1);
  g_assert_cmpuint (g_strv_length (lines), ==, 3);

  four = parse_object (lines[0]);
  five = parse_object (lines[1]);
  g_assert_cmpint (json_object_get_int_member (four, "tx"), ==, 4);
  g_assert_cmpint (json_object_get_int_member (five, "tx"), ==, 5);
  time = g_strdup (json_object_get_string_member (four, "time"));
  g_assert_true (g_regex_match_simple ("^\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{6}Z$",
                                       time, 0, 0));
  rows4 = member_json (four, "rows");
  rows5 = member_json (five, "rows");
  g_assert_cmpstr (rows4, ==,
                   "[{\"table\":\"t\",\"op\":\"insert\",\"key\":[1],\"old\":null,"
                   "\"new\":{\"id\":1,\"name\":\"Ada\",\"b\":{\"$blob\":\"AP8=\"},\"r\":1.5}},"
                   "{\"table\":\"t\",\"op\":\"insert\",\"key\":[2],\"old\":null,"
                   "\"new\":{\"id\":2,\"name\":null,\"b\":null,\"r\":null}}]");
  g_assert_cmpstr (rows5, ==,
                   "[{\"table\":\"t\",\"op\":\"update\",\"key\":[1],"
                   "\"old\":{\"id\":1,\"name\":\"Ada\",\"b\":{\"$blob\":\"AP8=\"},\"r\":1.5},"
                   "\"new\":{\"id\":1,\"name\":\"Bea\",\"b\":{\"$blob\":\"AP8=\"},\"r\":1.5}},"
                   "{\"table\":\"t\",\"op\":\"delete\",\"key\":[2],"
                   "\"old\":{\"id\":2,\"name\":null,\"b\":null,\"r\":null},\"new\":null},"
                   "{\"table\":\"u\",\"op\":\"insert\",\"key\":[1],\"old\":null,"
                   "\"new\":{\"x\":\"é\",\"y\":7,\"rowid\":1}}]");
}

static void
test_gap (TestDatabase  *f,
          gconstpointer  data)
{
  g_autoptr(TestRun) run = NULL;
  g_auto(GStrv) lines = NULL;
  g_autoptr(JsonObject) gap = NULL, next = NULL;
  JsonObject *inner;

  test_exec_at (f->uri, "PRAGMA qstore.change_log = 3; CREATE TABLE t (a);"
                        "INSERT INTO t VALUES (1); INSERT INTO t VALUES (2);"
                        "INSERT INTO t VALUES (3); INSERT INTO t VALUES (4)");
  run = changes (f, "--json", "--since", "1", NULL);
  g_assert_cmpint (run->status, ==, 0);
  lines = g_strsplit (run->out, "\n", -1);
  g_assert_cmpuint (g_strv_length (lines), ==, 5);
  gap = parse_object (lines[0]);
  inner = json_object_get_object_member (gap, "gap");
  g_assert_nonnull (inner);
  g_assert_cmpstr (json_object_get_string_member (inner, "reason"), ==,
                   "transactions 2 to 3 are no longer in the change log, which keeps the last 3");
  g_assert_true (json_object_get_null_member (inner, "down_for_ms"));
  next = parse_object (lines[1]);
  g_assert_cmpint (json_object_get_int_member (next, "tx"), ==, 4);

  /* The same in text. */
  {
    g_autoptr(TestRun) text = changes (f, "--since", "1", NULL);

    g_assert_true (g_str_has_prefix (text->out, "gap: transactions 2 to 3 are no longer in "
                                                "the change log, which keeps the last 3\n4 "));
  }
}

static void
follow_until_signal (TestDatabase *f,
                     int      signal_number)
{
  g_autoptr(QStoreDatabase) db = test_open_database (f->uri, QSTORE_OPEN_NONE);
  g_autoptr(GSubprocess) follower = NULL;
  g_autoptr(GSubprocessLauncher) launcher = NULL;
  g_autoptr(GString) pending = g_string_new (NULL);
  g_autoptr(GError) error = NULL;
  guint64 since;
  g_autofree char *since_text = NULL;
  int fd;

  since = qstore_coordinator_get_last_tx_id (qstore_database_get_coordinator (db));
  since_text = g_strdup_printf ("%" G_GUINT64_FORMAT, since);
  launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE);
  g_subprocess_launcher_unsetenv (launcher, "QSTORE_STORE");
  follower = g_subprocess_launcher_spawn (launcher, &error, qstore, "--store", f->uri,
                                          "changes", "--follow", "--json", "--since", since_text,
                                          NULL);
  g_assert_no_error (error);
  fd = g_unix_input_stream_get_fd (G_UNIX_INPUT_STREAM (g_subprocess_get_stdout_pipe (follower)));

  /* Each commit is printed as it happens, well before the fallback poll
   * would find it. */
  for (guint i = 0; i < 3; i++)
    {
      g_autofree char *sql = g_strdup_printf ("INSERT INTO t VALUES (%u)", 100 + i);
      g_autofree char *line = NULL;
      g_autoptr(JsonObject) object = NULL;

      test_exec (db, sql);
      line = test_read_line (fd, pending, 5000);
      if (line == NULL)
        g_error ("the follower printed nothing for commit %u", i);
      object = parse_object (line);
      g_assert_cmpint (json_object_get_int_member (object, "tx"), ==, since + 1 + i);
    }

  g_subprocess_send_signal (follower, signal_number);
  g_subprocess_wait (follower, NULL, &error);
  g_assert_no_error (error);
  g_assert_true (g_subprocess_get_if_exited (follower));
  g_assert_cmpint (g_subprocess_get_exit_status (follower), ==, 0);
  test_close_database (&db);
}

static void
test_follow (TestDatabase  *f,
             gconstpointer  data)
{
  test_exec_at (f->uri, "PRAGMA qstore.change_log = 100; CREATE TABLE t (a)");
  follow_until_signal (f, SIGTERM);
  follow_until_signal (f, SIGINT);
}

/* What the command reads, it leaves as it was. */
static void
test_read_only (TestDatabase  *f,
                gconstpointer  data)
{
  g_autofree char *name = test_provider_name ();
  g_autofree char *data_file = NULL;
  g_autofree char *before = NULL, *after = NULL;
  g_autoptr(TestRun) run = NULL;

  fill (f);
  data_file = g_str_equal (name, "sqlite") ? g_build_filename (f->dir, "store.db", NULL)
                                           : g_build_filename (f->dir, "store", "data.mdb", NULL);
  g_file_get_contents (data_file, &before, NULL, NULL);
  run = changes (f, "--json", NULL);
  g_assert_cmpint (run->status, ==, 0);
  g_clear_pointer (&run, test_run_free);
  run = changes (f, "--observers", NULL);
  g_assert_cmpint (run->status, ==, 0);
  g_file_get_contents (data_file, &after, NULL, NULL);
  g_assert_nonnull (before);
  g_assert_true (g_strcmp0 (before, after) == 0);
}

static void
test_observers (TestDatabase  *f,
                gconstpointer  data)
{
  g_autoptr(QStoreDatabase) db = NULL;
  g_autoptr(TestRun) run = NULL;
  g_autoptr(TestRun) json = NULL;
  g_auto(GStrv) lines = NULL;
  g_auto(GStrv) fields = NULL;
  g_autoptr(JsonObject) object = NULL;
  g_autoptr(GError) error = NULL;

  db = test_open_database (f->uri, QSTORE_OPEN_NONE);
  /* None yet: no line. */
  run = changes (f, "--observers", NULL);
  g_assert_cmpint (run->status, ==, 0);
  g_assert_cmpstr (run->out, ==, "");
  g_clear_pointer (&run, test_run_free);

  qstore_database_observe_replica (db, "writer", "changes", "{\"position\": 12}", &error);
  g_assert_no_error (error);
  qstore_database_observe_replica (db, "follower", "lag", "[1, 2]", &error);
  g_assert_no_error (error);
  test_close_database (&db);
  g_usleep (20000);

  run = changes (f, "--observers", NULL);
  g_assert_cmpint (run->status, ==, 0);
  lines = g_strsplit (run->out, "\n", -1);
  g_assert_cmpuint (g_strv_length (lines), ==, 3);
  fields = g_strsplit (lines[1], "\t", -1);
  g_assert_cmpuint (g_strv_length (fields), ==, 4);
  g_assert_cmpstr (fields[0], ==, "writer");
  g_assert_cmpstr (fields[1], ==, "changes");
  g_assert_cmpint (g_ascii_strtoll (fields[2], NULL, 10), >=, 20);
  g_assert_cmpstr (fields[3], ==, "{\"position\": 12}");

  json = changes (f, "--observers", "--json", NULL);
  g_assert_cmpint (json->status, ==, 0);
  g_clear_pointer (&lines, g_strfreev);
  lines = g_strsplit (json->out, "\n", -1);
  object = parse_object (lines[0]);
  g_assert_cmpstr (json_object_get_string_member (object, "replica"), ==, "follower");
  g_assert_cmpstr (json_object_get_string_member (object, "kind"), ==, "lag");
  {
    g_autofree char *payload = member_json (object, "payload");

    g_assert_cmpstr (payload, ==, "[1,2]");
  }
  g_assert_cmpint (json_object_get_int_member (object, "staleness_ms"), >=, 20);
  g_assert_true (g_str_has_suffix (json_object_get_string_member (object, "updated_at"), "Z"));
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);
  qstore = test_program_argument (argc, argv, "QSTORE");

#define ADD(name, func) \
  g_test_add ("/changes/tool/" name, TestDatabase, NULL, fixture_setup, func, test_database_tear_down)
  ADD ("no-log", test_no_log);
  ADD ("usage", test_usage);
  ADD ("print", test_print);
  ADD ("json", test_json);
  ADD ("gap", test_gap);
  ADD ("follow", test_follow);
  ADD ("read-only", test_read_only);
  ADD ("observers", test_observers);
#undef ADD

  return g_test_run ();
}
