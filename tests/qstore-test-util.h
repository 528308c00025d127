/* qstore-test-util.h: what the C test programs share
 *
 * The provider under test (QSTORE_TEST_PROVIDER) and store URIs for it,
 * temporary directories, a database fixture, statements that must succeed
 * or fail, counts of a store's entries, checksums of a directory's files, and running a program (the
 * qstore tool, qstore-bench) as a child. Everything here fails the test
 * on an unexpected error, so callers check only what they test.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include <gio/gio.h>
#include <glib/gstdio.h>
#include <qstore.h>

G_BEGIN_DECLS

/* The provider under test */

/* QSTORE_TEST_PROVIDER: a provider name, optionally followed by URI
 * options (`lmdb?atomic=0`); memory when unset. Or a whole store URI,
 * where `@LOCATION@` stands for a fresh path of each store
 * (`lmdb:@LOCATION@`, `template:`): qstore-conformance --uri sets that. */
static inline const char *
test_provider_spec (void)
{
  const char *spec = g_getenv ("QSTORE_TEST_PROVIDER");

  return spec != NULL ? spec : "memory";
}

/* The provider name of @spec, without its options. */
static inline char *
test_spec_name (const char *spec)
{
  return g_strndup (spec, strcspn (spec, "?:"));
}

/* Whether a store of @spec outlives a close: all but memory's do. */
static inline gboolean
test_spec_persistent (const char *spec)
{
  g_autofree char *name = test_spec_name (spec);

  return !g_str_equal (name, "memory");
}

/* The URI of a store called @leaf in @dir for @spec (a file `LEAF.db` for
 * sqlite, a schema named after @dir and @leaf for postgres, a directory
 * `LEAF` for the others, nothing for memory), with the options of @spec. */
static inline char *
test_spec_uri (const char *spec,
               const char *dir,
               const char *leaf)
{
  g_autofree char *name = test_spec_name (spec);
  const char *options = strchr (spec, '?');
  g_autofree char *location = NULL;

  if (spec[strlen (name)] == ':')
    {
      g_autofree char *path = g_build_filename (dir, leaf, NULL);
      g_auto(GStrv) parts = g_strsplit (spec, "@LOCATION@", -1);

      return g_strjoinv (path, parts);
    }
  if (g_str_equal (name, "memory"))
    location = g_strdup ("");
  else if (g_str_equal (name, "postgres"))
    {
      /* A schema per store, named after @dir and @leaf, on the server
       * tests/postgres/with-postgres.sh started. */
      const char *conninfo = g_getenv ("QSTORE_TEST_POSTGRES");
      g_autofree char *escaped = g_uri_escape_string (conninfo ? conninfo : "dbname=postgres",
                                                      "=/ :@,", TRUE);
      g_autofree char *base = g_path_get_basename (dir);
      g_autofree char *schema = g_strdup_printf ("%s_%s", base, leaf);
      g_autofree char *schema_escaped = g_uri_escape_string (schema, NULL, TRUE);

      return g_strdup_printf ("postgres:%s?schema=%s%s%s", escaped, schema_escaped,
                              options != NULL ? "&" : "", options != NULL ? options + 1 : "");
    }
  else if (g_str_equal (name, "sqlite"))
    location = g_strdup_printf ("%s/%s.db", dir, leaf);
  else
    location = g_strdup_printf ("%s/%s", dir, leaf);
  return g_strdup_printf ("%s:%s%s", name, location, options != NULL ? options : "");
}

static inline char *
test_provider_name (void)
{
  return test_spec_name (test_provider_spec ());
}

static inline gboolean
test_provider_persistent (void)
{
  return test_spec_persistent (test_provider_spec ());
}

/* FALSE where the options withhold the atomic batch (`atomic=0`), so
 * that commits go store by store. */
static inline gboolean
test_provider_atomic (void)
{
  return strstr (test_provider_spec (), "atomic=0") == NULL;
}

static inline char *
test_provider_uri (const char *dir,
                   const char *leaf)
{
  return test_spec_uri (test_provider_spec (), dir, leaf);
}

/* Tunables */

/* QSTORE_TEST_SEED, else a fixed seed: random workloads repeat. */
static inline guint32
test_seed (void)
{
  const char *text = g_getenv ("QSTORE_TEST_SEED");

  return text != NULL ? (guint32) g_ascii_strtoull (text, NULL, 10) : 20240611u;
}

/* A count from the environment variable @name, else @fallback. */
static inline guint
test_env_count (const char *name,
                guint       fallback)
{
  const char *text = g_getenv (name);
  guint64 value;

  if (text == NULL || !g_ascii_string_to_unsigned (text, 10, 1, G_MAXUINT, &value, NULL))
    return fallback;
  return (guint) value;
}

/* Stores */

/* How many entries @iter has left; it ends consumed. */
static inline guint
test_iter_count (QStoreIter *iter)
{
  g_autoptr(GError) error = NULL;
  guint n = 0;

  while (qstore_iter_next (iter, &error))
    n++;
  g_assert_no_error (error);
  return n;
}

/* The value of @key as @coord sees it, read by a copying read and by a
 * lending one, which must agree. */
static inline GBytes *
test_coordinator_get (QStoreCoordinator *coord,
                      QStoreKV          *kv,
                      const char        *key)
{
  g_autoptr(GError) error = NULL;
  GBytes *value = qstore_coordinator_get (coord, kv, (const guint8 *) key, strlen (key), &error);
  const guint8 *lent = NULL;
  gsize lent_len = 0;
  gboolean found;

  g_assert_no_error (error);
  found = qstore_coordinator_lookup (coord, kv, (const guint8 *) key, strlen (key),
                                     &lent, &lent_len, &error);
  g_assert_no_error (error);
  g_assert_cmpint (found, ==, value != NULL);
  if (found)
    g_assert_cmpmem (lent, lent_len, g_bytes_get_data (value, NULL), g_bytes_get_size (value));
  return value;
}

/* How many entries store @kv holds, as a fresh read sees it. */
static inline guint
test_kv_count (QStoreKV *kv)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(QStoreIter) iter = qstore_kv_iterate (kv, NULL, &error);

  g_assert_no_error (error);
  return test_iter_count (iter);
}

/* Files */

/* A new directory in the temporary directory; @tmpl ends in XXXXXX. */
static inline char *
test_make_tmp_dir (const char *tmpl)
{
  g_autoptr(GError) error = NULL;
  char *dir = g_dir_make_tmp (tmpl, &error);

  g_assert_no_error (error);
  return dir;
}

/* Removes @path and everything below it; a missing @path is no error. */
static inline void
test_remove_tree (const char *path)
{
  GDir *dir = g_dir_open (path, 0, NULL);

  if (dir != NULL)
    {
      const char *name;

      while ((name = g_dir_read_name (dir)) != NULL)
        {
          g_autofree char *child = g_build_filename (path, name, NULL);

          test_remove_tree (child);
        }
      g_dir_close (dir);
    }
  g_remove (path);
}

/* The SHA-256 of every file below @dir, by its path relative to @dir,
 * lock files and empty files included: what a test may ignore differs
 * from test to test. */
static inline GHashTable *
test_checksum_tree (const char *dir)
{
  GHashTable *sums = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  g_autoptr(GPtrArray) pending = g_ptr_array_new_with_free_func (g_free);

  g_assert_true (g_file_test (dir, G_FILE_TEST_IS_DIR));
  g_ptr_array_add (pending, g_strdup (""));
  while (pending->len > 0)
    {
      g_autofree char *relative = g_ptr_array_steal_index (pending, pending->len - 1);
      g_autofree char *path = g_build_filename (dir, relative, NULL);
      g_autofree char *contents = NULL;
      g_autoptr(GError) error = NULL;
      GDir *d;
      const char *name;
      gsize len;

      if (!g_file_test (path, G_FILE_TEST_IS_DIR))
        {
          g_file_get_contents (path, &contents, &len, &error);
          g_assert_no_error (error);
          g_hash_table_insert (sums, g_steal_pointer (&relative),
                               g_compute_checksum_for_data (G_CHECKSUM_SHA256,
                                                            (const guchar *) contents, len));
          continue;
        }
      d = g_dir_open (path, 0, &error);
      g_assert_no_error (error);
      while ((name = g_dir_read_name (d)) != NULL)
        g_ptr_array_add (pending, g_build_filename (relative, name, NULL));
      g_dir_close (d);
    }
  return sums;
}

/* Databases */

/* Writes (or deletes, with @value NULL) a catalog entry through a
 * provider opened for writing. */
static inline void
test_plant (const char *uri,
            GBytes     *key,
            const char *value)
{
  g_autoptr(QStoreProvider) provider = NULL;
  g_autoptr(QStoreKV) catalog = NULL;
  g_autoptr(GError) error = NULL;
  gsize key_len;
  const guint8 *key_data = g_bytes_get_data (key, &key_len);

  provider = qstore_provider_new_for_uri (uri, QSTORE_OPEN_NONE, &error);
  g_assert_no_error (error);
  catalog = qstore_provider_get_catalog_store (provider, &error);
  g_assert_no_error (error);
  if (value != NULL)
    qstore_kv_put (catalog, key_data, key_len, (const guint8 *) value, strlen (value),
                   QSTORE_WRITE_SYNC, &error);
  else
    qstore_kv_delete (catalog, key_data, key_len, QSTORE_WRITE_SYNC, &error);
  g_assert_no_error (error);
  qstore_provider_close_all (provider);
}

static inline QStoreDatabase *
test_open_database (const char      *uri,
                    QStoreOpenFlags  flags)
{
  g_autoptr(GError) error = NULL;
  QStoreDatabase *db = qstore_database_open (uri, flags, &error);

  g_assert_no_error (error);
  g_assert_nonnull (db);
  return db;
}

/* Closes *@db, which must close cleanly, and clears it; does nothing when
 * it is NULL already. */
static inline void
test_close_database (QStoreDatabase **db)
{
  g_autoptr(GError) error = NULL;

  if (*db == NULL)
    return;
  qstore_database_close (*db, &error);
  g_assert_no_error (error);
  g_clear_object (db);
}

/* A fixture: a database of the provider under test, in a directory of its
 * own that tearing down removes. */
typedef struct
{
  char           *dir;
  char           *uri;
  QStoreDatabase *db;
} TestDatabase;

/* Creates the directory from @tmpl (see test_make_tmp_dir()) and opens
 * the database in it. */
static inline void
test_database_set_up (TestDatabase *t,
                      const char   *tmpl)
{
  t->dir = test_make_tmp_dir (tmpl);
  t->uri = test_provider_uri (t->dir, "store");
  t->db = test_open_database (t->uri, QSTORE_OPEN_NONE);
}

static inline void
test_database_reopen (TestDatabase *t)
{
  test_close_database (&t->db);
  t->db = test_open_database (t->uri, QSTORE_OPEN_NONE);
}

/* Closes the database and removes its directory; fit to be a GTest
 * fixture teardown. */
static inline void
test_database_tear_down (TestDatabase  *t,
                         gconstpointer  data)
{
  test_close_database (&t->db);
  test_remove_tree (t->dir);
  g_free (t->dir);
  g_free (t->uri);
}

/* Statements */

/* Runs @sql, which must succeed. */
static inline void
test_exec (QStoreDatabase *db,
           const char     *sql)
{
  g_autoptr(GError) error = NULL;

  if (!qstore_database_exec (db, sql, &error))
    g_error ("“%s” failed: %s", sql, error->message);
}

/* Runs @sql, which must succeed, on the store at @uri, and closes it
 * cleanly. */
static inline void
test_exec_at (const char *uri,
              const char *sql)
{
  g_autoptr(QStoreDatabase) db = NULL;
  g_autoptr(GError) error = NULL;

  db = test_open_database (uri, QSTORE_OPEN_NONE);
  qstore_database_exec (db, sql, &error);
  g_assert_no_error (error);
  qstore_database_close (db, &error);
  g_assert_no_error (error);
}

/* Runs @sql, which must fail with @code; returns the message. */
static inline char *
test_exec_error (QStoreDatabase *db,
                 const char     *sql,
                 QStoreError     code)
{
  g_autoptr(GError) error = NULL;

  if (qstore_database_exec (db, sql, &error))
    g_error ("“%s” succeeded where it should fail", sql);
  if (!g_error_matches (error, QSTORE_ERROR, code))
    g_error ("“%s” failed with code %d (“%s”), not %d", sql, error->code, error->message, code);
  return g_strdup (error->message);
}

/* Runs @sql, which must fail with @code and a message that says
 * @message_part, unless that is NULL. */
static inline void
test_exec_fails (QStoreDatabase *db,
                 const char     *sql,
                 QStoreError     code,
                 const char     *message_part)
{
  g_autofree char *message = test_exec_error (db, sql, code);

  if (message_part != NULL && strstr (message, message_part) == NULL)
    g_error ("“%s” failed with “%s”, which does not say “%s”", sql, message, message_part);
}

/* Writes one value of a result to @out. */
typedef void (*TestAppendValue) (GString  *out,
                                 GVariant *value);

/* The rows of @result as text: each value as @append_value writes it,
 * values joined by `|`, one row a line. */
static inline char *
test_result_text (QStoreResult    *result,
                  TestAppendValue  append_value)
{
  GString *out = g_string_new (NULL);

  for (guint row = 0; row < qstore_result_get_n_rows (result); row++)
    {
      for (guint column = 0; column < qstore_result_get_n_columns (result); column++)
        {
          g_autoptr(GVariant) value = qstore_result_get_value (result, row, column);

          if (column > 0)
            g_string_append_c (out, '|');
          append_value (out, value);
        }
      g_string_append_c (out, '\n');
    }
  return g_string_free (out, FALSE);
}

/* test_result_text() of the rows of @sql, which must run. */
static inline char *
test_query_text (QStoreDatabase  *db,
                 const char      *sql,
                 TestAppendValue  append_value)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(QStoreResult) result = qstore_database_query (db, sql, NULL, &error);

  if (result == NULL)
    g_error ("“%s” failed: %s", sql, error->message);
  return test_result_text (result, append_value);
}

/* The one integer the query @sql returns, which must run. */
static inline gint64
test_query_int (QStoreDatabase *db,
                const char     *sql)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(QStoreResult) result = qstore_database_query (db, sql, NULL, &error);
  g_autoptr(GVariant) value = NULL;

  if (result == NULL)
    g_error ("“%s” failed: %s", sql, error->message);
  g_assert_cmpuint (qstore_result_get_n_rows (result), ==, 1);
  value = qstore_result_get_value (result, 0, 0);
  return g_variant_get_int64 (value);
}

static inline gboolean
test_strv_has (const char * const *strv,
               const char         *s)
{
  return strv != NULL && g_strv_contains (strv, s);
}

/* Programs run as a child */

/* The path of the program under test, the one argument g_test_init()
 * leaves in @argv (@what names it in the usage); without it, exits with
 * the usage. */
static inline const char *
test_program_argument (int          argc,
                       char       **argv,
                       const char  *what)
{
  if (argc < 2)
    {
      g_printerr ("Usage: %s [--tap] %s\n", argv[0], what);
      exit (2);
    }
  return argv[1];
}

/* What a program run by test_run_programv() did. */
typedef struct
{
  int     status;   /* its exit status */
  char   *out;
  char   *err;
  GBytes *raw_out;  /* stdout as bytes, NULs included */
} TestRun;

static inline void
test_run_free (TestRun *run)
{
  g_clear_pointer (&run->raw_out, g_bytes_unref);
  g_free (run->out);
  g_free (run->err);
  g_free (run);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC (TestRun, test_run_free)

/* Empty output may come back as bytes without data. */
static inline char *
test_run_text (GBytes *bytes)
{
  gsize len;
  const char *data = g_bytes_get_data (bytes, &len);

  return len > 0 ? g_strndup (data, len) : g_strdup ("");
}

/* Runs @program with `--store STORE` when @store is not NULL, then @args
 * (NULL-terminated), until it exits. Messages are compared exactly, so the
 * language and the charset are pinned; QSTORE_STORE is unset unless @env
 * (NULL-terminated `NAME=value` pairs, or NULL) sets it. */
static inline TestRun *
test_run_programv (const char         *program,
                   const char * const *env,
                   const char         *store,
                   const char * const *args)
{
  g_autoptr(GSubprocessLauncher) launcher = NULL;
  g_autoptr(GSubprocess) process = NULL;
  g_autoptr(GPtrArray) argv = g_ptr_array_new ();
  g_autoptr(GBytes) out = NULL;
  g_autoptr(GBytes) err = NULL;
  g_autoptr(GError) error = NULL;
  TestRun *run = g_new0 (TestRun, 1);

  launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE |
                                        G_SUBPROCESS_FLAGS_STDERR_PIPE);
  g_subprocess_launcher_setenv (launcher, "LC_ALL", "C.UTF-8", TRUE);
  g_subprocess_launcher_unsetenv (launcher, "QSTORE_STORE");
  for (guint i = 0; env != NULL && env[i] != NULL; i++)
    {
      g_auto(GStrv) pair = g_strsplit (env[i], "=", 2);

      g_subprocess_launcher_setenv (launcher, pair[0], pair[1], TRUE);
    }

  g_ptr_array_add (argv, (gpointer) program);
  if (store != NULL)
    {
      g_ptr_array_add (argv, (gpointer) "--store");
      g_ptr_array_add (argv, (gpointer) store);
    }
  for (guint i = 0; args[i] != NULL; i++)
    g_ptr_array_add (argv, (gpointer) args[i]);
  g_ptr_array_add (argv, NULL);

  process = g_subprocess_launcher_spawnv (launcher, (const char * const *) argv->pdata, &error);
  g_assert_no_error (error);
  g_subprocess_communicate (process, NULL, NULL, &out, &err, &error);
  g_assert_no_error (error);
  g_assert_true (g_subprocess_get_if_exited (process));

  run->status = g_subprocess_get_exit_status (process);
  run->out = test_run_text (out);
  run->err = test_run_text (err);
  run->raw_out = g_bytes_ref (out);
  return run;
}

/* test_run_program() with a va_list. */
static inline TestRun *
test_run_program_va (const char         *program,
                     const char * const *env,
                     const char         *store,
                     const char         *first,
                     va_list             ap)
{
  g_autoptr(GPtrArray) args = g_ptr_array_new ();

  for (const char *a = first; a != NULL; a = va_arg (ap, const char *))
    g_ptr_array_add (args, (gpointer) a);
  g_ptr_array_add (args, NULL);
  return test_run_programv (program, env, store, (const char * const *) args->pdata);
}

/* test_run_programv() with the arguments from @first to a NULL. */
static inline G_GNUC_NULL_TERMINATED TestRun *
test_run_program (const char         *program,
                  const char * const *env,
                  const char         *store,
                  const char         *first,
                  ...)
{
  TestRun *run;
  va_list ap;

  va_start (ap, first);
  run = test_run_program_va (program, env, store, first, ap);
  va_end (ap);
  return run;
}

/* Reads the next line a child writes to @fd, without its newline,
 * keeping what follows in @pending; NULL when none came within
 * @timeout_ms (-1: wait as long as it takes) or the output ended. */
static inline char *
test_read_line (int      fd,
                GString *pending,
                int      timeout_ms)
{
  gint64 deadline = g_get_monotonic_time () + (gint64) timeout_ms * 1000;

  for (;;)
    {
      char *newline = strchr (pending->str, '\n');
      GPollFD poll_fd = { fd, G_IO_IN | G_IO_HUP, 0 };
      gint64 left = timeout_ms < 0 ? -1 : MAX (0, (deadline - g_get_monotonic_time ()) / 1000);
      char buffer[4096];
      gssize n;

      if (newline != NULL)
        {
          char *line = g_strndup (pending->str, newline - pending->str);

          g_string_erase (pending, 0, newline - pending->str + 1);
          return line;
        }
      if ((timeout_ms >= 0 && left == 0) || g_poll (&poll_fd, 1, (int) left) <= 0)
        return NULL;
      n = read (fd, buffer, sizeof buffer);
      if (n <= 0)
        return NULL;
      g_string_append_len (pending, buffer, n);
    }
}

/* Reads the numbers a child reports, one per line, until @timeout_ms
 * passed (-1: until its output ends) or, with @first, one came; returns
 * the largest of them and @largest. */
static inline guint64
test_read_largest (int      fd,
                   GString *pending,
                   guint64  largest,
                   int      timeout_ms,
                   gboolean first)
{
  gint64 deadline = g_get_monotonic_time () + (gint64) timeout_ms * 1000;

  for (;;)
    {
      int left = timeout_ms < 0 ? -1 : (int) MAX (0, (deadline - g_get_monotonic_time ()) / 1000);
      g_autofree char *line = test_read_line (fd, pending, left);

      if (line == NULL)
        return largest;
      largest = MAX (largest, g_ascii_strtoull (line, NULL, 10));
      if (first)
        return largest;
    }
}

/* Runs @argv, a child that prints a number on a line after each step it
 * made (a commit, say), and kills it with SIGKILL @delay_ms after its
 * first report, at a random moment of its work rather than of its start.
 * Returns the largest number it printed, or @largest when larger. */
static inline guint64
test_kill_reporting_child (const char * const *argv,
                           int                 delay_ms,
                           guint64             largest)
{
  g_autoptr(GString) pending = g_string_new (NULL);
  g_autoptr(GError) error = NULL;
  GPid pid;
  int out_fd, status;

  g_spawn_async_with_pipes (NULL, (char **) argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD, NULL,
                            NULL, &pid, NULL, &out_fd, NULL, &error);
  g_assert_no_error (error);
  largest = test_read_largest (out_fd, pending, largest, 30000, TRUE);
  largest = test_read_largest (out_fd, pending, largest, delay_ms, FALSE);
  kill (pid, SIGKILL);
  waitpid (pid, &status, 0);
  g_spawn_close_pid (pid);
  if (!WIFSIGNALED (status))
    g_error ("The crash child stopped before it was killed (status %d)", status);
  largest = test_read_largest (out_fd, pending, largest, -1, FALSE);
  close (out_fd);
  return largest;
}

G_END_DECLS
