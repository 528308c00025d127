/* test-staging-tool.c: `qstore import`, `qstore staging` and the staging
 * section of `qstore catalog`, run as programs
 *
 * Also: a second import process into a table another one is loading, the
 * progress line on a terminal, and an import stopped by SIGINT.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pty.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <json-glib/json-glib.h>

#include "qstore-test-util.h"

static const char *qstore;

typedef struct
{
  char *dir;
  char *uri;
} Fixture;

static void
fixture_setup (Fixture       *f,
               gconstpointer  data)
{
  f->dir = test_make_tmp_dir ("qstore-staging-tool-XXXXXX");
  f->uri = test_provider_uri (f->dir, "store");
  test_exec_at (f->uri, "CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT NOT NULL, score INTEGER);"
                        "CREATE INDEX t_score ON t (score)");
}

static void
fixture_teardown (Fixture       *f,
                  gconstpointer  data)
{
  test_remove_tree (f->dir);
  g_free (f->dir);
  g_free (f->uri);
}

static char *
write_file (Fixture    *f,
            const char *name,
            const char *contents)
{
  g_autoptr(GError) error = NULL;
  char *path = g_build_filename (f->dir, name, NULL);

  g_file_set_contents (path, contents, -1, &error);
  g_assert_no_error (error);
  return path;
}

static char *
sql (Fixture    *f,
     const char *statement)
{
  g_autoptr(TestRun) run = test_run_program (qstore, NULL, f->uri, "sql", statement, NULL);

  if (run->status != 0)
    g_error ("qstore sql “%s” failed: %s", statement, run->err);
  return g_strdup (run->out);
}

static JsonObject *
parse_object (const char *line)
{
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GError) error = NULL;

  json_parser_load_from_data (parser, line, -1, &error);
  g_assert_no_error (error);
  g_assert_true (JSON_NODE_HOLDS_OBJECT (json_parser_get_root (parser)));
  return json_object_ref (json_node_get_object (json_parser_get_root (parser)));
}

static void
test_import (Fixture       *f,
             gconstpointer  data)
{
  g_autofree char *good = write_file (f, "good.csv", "id,name,score\n1,a,10\n2,b,\"20\"\n");
  g_autofree char *bad = write_file (f, "bad.csv", "id,name,score\n3,c,1\n4,,2\n");
  g_autofree char *pairs = write_file (f, "pairs.csv", "whatever,header\nx,10\ny,20\n");
  g_autofree char *rows = NULL;
  g_autoptr(JsonObject) summary = NULL;
  g_autoptr(TestRun) run = NULL;

  /* Not a terminal: nothing on stdout, nothing on stderr. */
  run = test_run_program (qstore, NULL, f->uri, "import", "t", good, NULL);
  g_assert_cmpint (run->status, ==, 0);
  g_assert_cmpstr (run->out, ==, "");
  g_assert_cmpstr (run->err, ==, "");
  rows = sql (f, "SELECT id, name, score, typeof (score) FROM t ORDER BY id");
  g_assert_cmpstr (rows, ==, "1\ta\t10\tinteger\n2\tb\t20\tinteger\n");
  g_clear_pointer (&run, test_run_free);

  /* A bad row: status 1, its line and column, nothing kept. */
  run = test_run_program (qstore, NULL, f->uri, "import", "--json", "t", bad, NULL);
  g_assert_cmpint (run->status, ==, 1);
  g_assert_true (g_str_has_prefix (run->err, "qstore: "));
  g_assert_nonnull (strstr (run->err, "bad.csv: line 3, column 2 (“name”): NOT NULL constraint "
                                      "failed: t.name. Nothing was imported"));
  summary = parse_object (run->out);
  g_assert_false (json_object_get_boolean_member (summary, "ok"));
  g_assert_cmpint (json_object_get_int_member (summary, "line"), ==, 3);
  g_assert_cmpint (json_object_get_int_member (summary, "column"), ==, 2);
  g_assert_cmpstr (json_object_get_string_member (summary, "column_name"), ==, "name");
  g_assert_cmpint (json_object_get_int_member (summary, "rows_kept"), ==, 0);
  g_free (rows);
  rows = sql (f, "SELECT count(*) FROM t");
  g_assert_cmpstr (rows, ==, "2\n");
  g_clear_pointer (&run, test_run_free);
  json_object_unref (g_steal_pointer (&summary));

  /* A replace, with its summary. */
  run = test_run_program (qstore, NULL, f->uri, "import", "--mode", "replace", "--json",
                          "--no-header", "--columns", "name, id", "t", pairs, NULL);
  g_assert_cmpint (run->status, ==, 1);     /* the header is a row now: "header" is no integer */
  g_assert_nonnull (strstr (run->err, "pairs.csv: line 1, column 2 (“id”): datatype mismatch"));
  g_clear_pointer (&run, test_run_free);
  run = test_run_program (qstore, NULL, f->uri, "import", "--mode", "replace", "--json",
                          "--columns", "name,id", "t", pairs, NULL);
  g_assert_cmpint (run->status, ==, 0);
  summary = parse_object (run->out);
  g_assert_true (json_object_get_boolean_member (summary, "ok"));
  g_assert_cmpstr (json_object_get_string_member (summary, "mode"), ==, "replace");
  g_assert_cmpstr (json_object_get_string_member (summary, "format"), ==, "csv");
  g_assert_cmpint (json_object_get_int_member (summary, "rows"), ==, 2);
  g_assert_cmpstr (json_object_get_string_member (summary, "staging_table"), ==, "_qstore_staging_t");
  g_assert_true (json_object_get_double_member (summary, "seconds") >= 0);
  g_free (rows);
  rows = sql (f, "SELECT id, name, score FROM t ORDER BY id");
  /* --columns name,id: the first field went to name, the header was skipped. */
  g_assert_cmpstr (rows, ==, "10\tx\t\n20\ty\t\n");
}

static void
test_import_stdin_jsonl (Fixture       *f,
                         gconstpointer  data)
{
  g_autofree char *path = write_file (f, "rows.jsonl",
                                      "{\"id\": 1, \"name\": \"a\"}\n[2, \"b\", 3]\n");
  g_autofree char *command = g_strdup_printf ("'%s' --store '%s' import --format jsonl t - < '%s'",
                                              qstore, f->uri, path);
  g_autofree char *rows = NULL;
  g_autoptr(GError) error = NULL;
  int status;
  const char *argv[] = { "/bin/sh", "-c", command, NULL };

  g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, NULL, NULL, &status,
                &error);
  /* Standard input above; the format also follows a .jsonl name below. */
  g_assert_no_error (error);
  g_assert_true (g_spawn_check_wait_status (status, NULL));
  rows = sql (f, "SELECT id, name, score FROM t ORDER BY id");
  g_assert_cmpstr (rows, ==, "1\ta\t\n2\tb\t3\n");
  {
    g_autoptr(TestRun) run = test_run_program (qstore, NULL, f->uri, "import", "--mode",
                                               "replace", "t", path, NULL);

    g_assert_cmpint (run->status, ==, 0);
  }
}

static void
test_usage (Fixture       *f,
            gconstpointer  data)
{
  const char *cases[][8] = {
    { "import", "t", NULL },
    { "import", "--mode", "swap", "t", "x.csv", NULL },
    { "import", "--format", "xml", "t", "x.csv", NULL },
    { "import", "--header", "--no-header", "t", "x.csv", NULL },
    { "import", "--header", "t", "x.jsonl", NULL },
    { "import", "--resume", "--mode", "append", "t", "x.csv", NULL },
    { "import", "--columns", "a,,b", "t", "x.csv", NULL },
    { "staging", "extra", NULL },
    { "staging", "--sweep", "--discard", "t", NULL },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(TestRun) run = test_run_programv (qstore, NULL, f->uri, cases[i]);

      g_test_message ("%s %s: %s", cases[i][0], cases[i][1], run->err);
      g_assert_cmpint (run->status, ==, 2);
      g_assert_nonnull (strstr (run->err, "Usage: qstore"));
    }
  {
    g_autoptr(TestRun) run = test_run_program (qstore, NULL, f->uri, "import", "t",
                                               "/nonexistent/x.csv", NULL);

    g_assert_cmpint (run->status, ==, 1);
    g_assert_nonnull (strstr (run->err, "Cannot read “/nonexistent/x.csv”"));
  }
}

/* An interrupted replace, then `qstore staging`: listed, kept while
 * fresh, swept once stale; a resumable one never swept, discarded on
 * request; the catalog shows the staging tables in a section of their
 * own. */
static void
test_staging (Fixture       *f,
              gconstpointer  data)
{
  g_autofree char *bad = write_file (f, "bad.csv", "id,name\n1,a\n2,\n");
  g_autoptr(TestRun) run = NULL;
  g_autoptr(JsonObject) listed = NULL;
  g_auto(GStrv) lines = NULL;
  g_autofree char *ignored = NULL;

  run = test_run_program (qstore, NULL, f->uri, "staging", NULL);
  g_assert_cmpint (run->status, ==, 0);
  g_assert_cmpstr (run->out, ==, "stale threshold 30 min; 0 runs, 0 droppable\n");
  g_clear_pointer (&run, test_run_free);

  run = test_run_program (qstore, NULL, f->uri, "import", "--mode", "replace", "--no-atomic",
                          "t", bad, NULL);
  g_assert_cmpint (run->status, ==, 1);
  g_assert_nonnull (strstr (run->err, "the 1 row before the failure is staged"));
  g_clear_pointer (&run, test_run_free);

  /* The catalog: tables, then the bookkeeping. */
  run = test_run_program (qstore, NULL, f->uri, "catalog", NULL);
  g_assert_cmpint (run->status, ==, 0);
  lines = g_strsplit (g_strchomp (run->out), "\n", -1);
  g_assert_cmpuint (g_strv_length (lines), >=, 3);
  g_assert_true (g_str_has_prefix (lines[g_strv_length (lines) - 3], "table\tmain.t\t"));
  g_assert_true (g_str_has_prefix (lines[g_strv_length (lines) - 2],
                                   "staging_table\tmain._qstore_replace_in_progress\t"));
  g_assert_true (g_str_has_prefix (lines[g_strv_length (lines) - 1],
                                   "staging_table\tmain._qstore_staging_t\t"));
  g_clear_pointer (&run, test_run_free);

  run = test_run_program (qstore, NULL, f->uri, "staging", "--json", NULL);
  g_assert_cmpint (run->status, ==, 0);
  g_assert_cmpstr (run->err, ==, "");     /* the open's note is the listing */
  listed = parse_object (run->out);
  g_assert_cmpstr (json_object_get_string_member (listed, "target"), ==, "t");
  g_assert_true (json_object_get_boolean_member (listed, "resumable"));
  g_assert_false (json_object_get_boolean_member (listed, "droppable"));
  g_assert_cmpint (json_object_get_int_member (listed, "stale_after_ms"), ==, 30 * 60000);
  g_assert_true (g_str_has_prefix (json_object_get_string_member (listed, "reason"), "kept: resumable"));
  g_clear_pointer (&run, test_run_free);

  /* However old, a resumable run is not swept... */
  ignored = sql (f, "UPDATE _qstore_replace_in_progress SET heartbeat = heartbeat - 86400000");
  run = test_run_program (qstore, NULL, f->uri, "staging", "--sweep", NULL);
  g_assert_cmpint (run->status, ==, 0);
  g_assert_true (g_str_has_prefix (run->out, "stale threshold 30 min; 1 run, 0 droppable\nt\t"
                                             "_qstore_staging_t\tstarted "));
  g_assert_nonnull (strstr (run->out, "\theartbeat 1 d 0 h ago\tresumable\tkept: resumable"));
  g_clear_pointer (&run, test_run_free);

  /* ... but one that is not, is; the table keeps its rows. */
  g_free (ignored);
  ignored = sql (f, "UPDATE _qstore_replace_in_progress SET resumable = 0");
  run = test_run_program (qstore, NULL, f->uri, "staging", NULL);
  g_assert_nonnull (strstr (run->out, "1 run, 1 droppable"));
  g_assert_nonnull (strstr (run->out, "droppable: no heartbeat for 1 d (the threshold is 30 min) "
                                      "and not resumable"));
  g_clear_pointer (&run, test_run_free);
  {
    const char * const env[] = { "QSTORE_STAGING_STALE_MINUTES=3000", NULL };

    /* The environment decides the threshold: a day is not 3000 minutes. */
    run = test_run_program (qstore, env, f->uri, "staging", "--sweep", NULL);
    g_assert_cmpint (run->status, ==, 0);
    g_assert_nonnull (strstr (run->out, "stale threshold 2 d 2 h; 1 run, 0 droppable"));
    g_clear_pointer (&run, test_run_free);
  }
  run = test_run_program (qstore, NULL, f->uri, "staging", "--sweep", NULL);
  g_assert_cmpint (run->status, ==, 0);
  g_assert_true (g_str_has_prefix (run->out, "dropped\tt\t_qstore_staging_t\t"));
  g_assert_nonnull (strstr (run->out, "stale threshold 30 min; 0 runs, 0 droppable\n"));
  g_clear_pointer (&run, test_run_free);
  g_free (ignored);
  ignored = sql (f, "SELECT count(*) FROM t");
  g_assert_cmpstr (ignored, ==, "0\n");

  /* --discard gives up a resumable run. */
  run = test_run_program (qstore, NULL, f->uri, "import", "--mode", "replace", "--no-atomic",
                          "t", bad, NULL);
  g_clear_pointer (&run, test_run_free);
  run = test_run_program (qstore, NULL, f->uri, "staging", "--discard", "t", NULL);
  g_assert_cmpint (run->status, ==, 0);
  g_assert_true (g_str_has_prefix (run->out, "discarded the import into t\n"));
  g_clear_pointer (&run, test_run_free);
  run = test_run_program (qstore, NULL, f->uri, "staging", "--discard", "t", NULL);
  g_assert_cmpint (run->status, ==, 1);
  g_assert_nonnull (strstr (run->err, "No import into table “t” is recorded"));
}

/* Waits until the store records a run into t. */
static void
wait_for_run (Fixture *f)
{
  for (guint tries = 0; tries < 500; tries++)
    {
      g_autoptr(TestRun) run = test_run_program (qstore, NULL, f->uri, "staging", "--json", NULL);

      if (run->status == 0 && strstr (run->out, "\"target\":\"t\"") != NULL)
        return;
      g_usleep (20000);
    }
  g_error ("The first import never recorded its run");
}

/* A second import process into the table the first is loading is
 * refused (by the run the first recorded, or by the store's writer
 * lock), and the first one's swap is whole. */
static void
test_concurrent_processes (Fixture       *f,
                           gconstpointer  data)
{
  g_autofree char *other = write_file (f, "other.csv", "id,name\n99,other\n");
  g_autoptr(GSubprocessLauncher) launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDIN_PIPE |
                                                                       G_SUBPROCESS_FLAGS_STDERR_PIPE);
  g_autoptr(GSubprocess) first = NULL;
  g_autoptr(GString) rows = g_string_new ("id,name\n");
  g_autoptr(TestRun) second = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *content = NULL;
  GOutputStream *stdin_pipe;

  first = g_subprocess_launcher_spawn (launcher, &error, qstore, "--store", f->uri, "import",
                                       "--mode", "replace", "t", "-", NULL);
  g_assert_no_error (error);
  stdin_pipe = g_subprocess_get_stdin_pipe (first);
  for (guint i = 1; i <= 1000; i++)
    g_string_append_printf (rows, "%u,first %u\n", i, i);
  g_output_stream_write_all (stdin_pipe, rows->str, rows->len, NULL, NULL, &error);
  g_assert_no_error (error);
  g_output_stream_flush (stdin_pipe, NULL, NULL);
  wait_for_run (f);

  second = test_run_program (qstore, NULL, f->uri, "import", "--mode", "replace", "t", other, NULL);
  g_test_message ("the second import: %s", second->err);
  /* Refused by the run the first recorded, or, where the store admits
   * one writer at a time, at open: either way a clear message. */
  g_assert_cmpint (second->status, ==, 1);
  g_assert_nonnull (strstr (second->err, "qstore: "));
  if (strstr (second->err, "Another import into table “t” is running") == NULL)
    g_test_message ("refused at open rather than by the recorded run");

  g_output_stream_write_all (stdin_pipe, "1001,last\n", 10, NULL, NULL, &error);
  g_assert_no_error (error);
  g_output_stream_close (stdin_pipe, NULL, &error);
  g_assert_no_error (error);
  g_subprocess_wait_check (first, NULL, &error);
  g_assert_no_error (error);

  content = sql (f, "SELECT count(*), sum (id), max (name) FROM t");
  g_assert_cmpstr (content, ==, "1001\t501501\tlast\n");
}

/* SIGINT stops an import: nothing kept, no staging table left. */
static void
test_interrupt (Fixture       *f,
                gconstpointer  data)
{
  g_autoptr(GSubprocessLauncher) launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDIN_PIPE |
                                                                       G_SUBPROCESS_FLAGS_STDERR_PIPE);
  g_autoptr(GSubprocess) import = NULL;
  g_autoptr(GBytes) err = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *content = NULL;
  g_autofree char *message = NULL;
  GOutputStream *stdin_pipe;

  import = g_subprocess_launcher_spawn (launcher, &error, qstore, "--store", f->uri, "import",
                                        "--mode", "replace", "t", "-", NULL);
  g_assert_no_error (error);
  stdin_pipe = g_subprocess_get_stdin_pipe (import);
  g_output_stream_write_all (stdin_pipe, "id,name\n1,a\n", 12, NULL, NULL, &error);
  g_output_stream_flush (stdin_pipe, NULL, NULL);
  wait_for_run (f);
  g_subprocess_send_signal (import, SIGINT);
  {
    g_autoptr(GOutputStream) collected = g_memory_output_stream_new_resizable ();

    g_output_stream_splice (collected, g_subprocess_get_stderr_pipe (import),
                            G_OUTPUT_STREAM_SPLICE_CLOSE_TARGET, NULL, &error);
    g_assert_no_error (error);
    err = g_memory_output_stream_steal_as_bytes (G_MEMORY_OUTPUT_STREAM (collected));
  }
  g_subprocess_wait (import, NULL, &error);
  g_assert_no_error (error);
  g_assert_true (g_subprocess_get_if_exited (import));
  g_assert_cmpint (g_subprocess_get_exit_status (import), ==, 1);
  message = g_strndup (g_bytes_get_data (err, NULL), g_bytes_get_size (err));
  g_assert_nonnull (strstr (message, "Nothing was imported: table “t” is as it was"));

  content = sql (f, "SELECT count(*) FROM t");
  g_assert_cmpstr (content, ==, "0\n");
  {
    g_autoptr(TestRun) run = test_run_program (qstore, NULL, f->uri, "staging", NULL);

    g_assert_nonnull (strstr (run->out, "0 runs"));
  }
}

/* On a terminal, a progress line updated a few times a second at most. */
static void
test_progress_terminal (Fixture       *f,
                        gconstpointer  data)
{
  int input[2];
  int master = -1;
  pid_t pid;
  g_autoptr(GString) output = g_string_new (NULL);
  gint64 start, seconds;
  guint updates = 0;
  int status = 0;
  const char *p;

  g_assert_cmpint (pipe (input), ==, 0);
  pid = forkpty (&master, NULL, NULL, NULL);
  g_assert_cmpint (pid, >=, 0);
  if (pid == 0)
    {
      dup2 (input[0], STDIN_FILENO);
      close (input[0]);
      close (input[1]);
      execl (qstore, qstore, "--store", f->uri, "import", "t", "-", NULL);
      _exit (127);
    }
  close (input[0]);

  /* About 1.6 s of rows arriving. */
  start = g_get_monotonic_time ();
  g_assert_cmpint (write (input[1], "id,name\n", 8), ==, 8);
  for (guint batch = 0; batch < 80; batch++)
    {
      g_autoptr(GString) rows = g_string_new (NULL);
      char buffer[4096];
      gssize n;

      for (guint i = 0; i < 300; i++)
        g_string_append_printf (rows, "%u,n\n", batch * 300 + i + 1);
      g_assert_cmpint (write (input[1], rows->str, rows->len), ==, (gssize) rows->len);
      g_usleep (20000);
      /* Keep the terminal drained. */
      fcntl (master, F_SETFL, O_NONBLOCK);
      while ((n = read (master, buffer, sizeof buffer)) > 0)
        g_string_append_len (output, buffer, n);
    }
  close (input[1]);
  fcntl (master, F_SETFL, 0);
  for (;;)
    {
      char buffer[4096];
      gssize n = read (master, buffer, sizeof buffer);

      if (n <= 0)
        break;
      g_string_append_len (output, buffer, n);
    }
  waitpid (pid, &status, 0);
  seconds = (g_get_monotonic_time () - start) / G_USEC_PER_SEC + 1;
  close (master);

  g_assert_true (WIFEXITED (status) && WEXITSTATUS (status) == 0);
  for (p = output->str; (p = strstr (p, " rows/s ")) != NULL; p++)
    updates++;
  g_test_message ("%u progress updates in about %" G_GINT64_FORMAT " s: %s", updates, seconds,
                  output->str);
  g_assert_cmpuint (updates, >=, 2);
  g_assert_cmpuint (updates, <=, seconds * 4 + 1);
  g_assert_nonnull (strstr (output->str, "\r\033[K"));
  g_assert_nonnull (strstr (output->str, "24000 rows imported into “t”"));
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);
  qstore = test_program_argument (argc, argv, "QSTORE");

#define ADD(path, func) \
  g_test_add (path, Fixture, NULL, fixture_setup, func, fixture_teardown)

  ADD ("/staging-tool/import", test_import);
  ADD ("/staging-tool/import-stdin-jsonl", test_import_stdin_jsonl);
  ADD ("/staging-tool/usage", test_usage);
  ADD ("/staging-tool/staging", test_staging);
  ADD ("/staging-tool/concurrent-processes", test_concurrent_processes);
  ADD ("/staging-tool/interrupt", test_interrupt);
  ADD ("/staging-tool/progress-terminal", test_progress_terminal);

  return g_test_run ();
}
