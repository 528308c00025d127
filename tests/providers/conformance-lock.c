/* conformance-lock.c: one writer per location, on every provider
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The writer is a child process of this test program (see
 * conformance_lock_child()), so the lock is seen across processes, and
 * can be killed.
 */
#include "config.h"

#include <signal.h>
#include <sys/prctl.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "conformance.h"

static const char *self_path;

/* @uri with one more option. */
static char *
uri_with (const char *uri,
          const char *option)
{
  return g_strconcat (uri, strchr (uri, '?') != NULL ? "&" : "?", option, NULL);
}

static gboolean
has_writer_lock (Fixture *f)
{
  if (f->caps & QSTORE_CAPABILITY_WRITER_LOCK)
    return TRUE;
  /* The contract: a provider whose locations outlive it locks them. */
  g_assert_false (persistent (f));
  g_test_skip ("every open of this provider is its own store");
  return FALSE;
}

/* Children */

/* --hold-writer URI MS: opens URI for writing, writes k = from-child,
 * says "ready PID", then holds the location MS milliseconds (until it is
 * killed when negative) and closes it. */
static int
hold_writer (const char *uri,
             gint64      hold_ms)
{
  g_autoptr(QStoreProvider) provider = NULL;
  g_autoptr(QStoreKV) kv = NULL;

  /* A test that fails before killing it must not leave it behind. */
  prctl (PR_SET_PDEATHSIG, SIGKILL);
  provider = open_provider (uri, QSTORE_OPEN_NONE);
  kv = qstore_provider_open_store (provider, "main.t", NULL);
  put (kv, "k", "from-child");
  g_print ("ready %d\n", (int) getpid ());
  fflush (stdout);
  g_usleep ((hold_ms < 0 ? 120 * 1000 : hold_ms) * 1000);
  qstore_provider_close_all (provider);
  return 0;
}

/* --count-writer URI N: N times, opens URI for writing (waiting for the
 * other writers), adds one to the counter and closes it. */
static int
count_writer (const char *uri,
              guint       n)
{
  g_autofree char *waiting = uri_with (uri, "wait_ms=60000");

  for (guint i = 0; i < n; i++)
    {
      g_autoptr(QStoreProvider) provider = open_provider (waiting, QSTORE_OPEN_NONE);
      g_autoptr(QStoreKV) kv = qstore_provider_open_store (provider, "main.count", NULL);
      g_autofree char *value = get (kv, "n");
      g_autofree char *next = g_strdup_printf ("%u", value ? (guint) atoi (value) + 1 : 1);

      /* Another writer between the read and the write would lose one. */
      g_usleep (g_random_int_range (0, 500));
      put (kv, "n", next);
      qstore_provider_close_all (provider);
    }
  return 0;
}

/* --try-writer URI: tries to open URI for writing and says how it went. */
static int
try_writer (const char *uri)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(QStoreProvider) provider = qstore_provider_new_for_uri (uri, QSTORE_OPEN_NONE, &error);

  if (provider != NULL)
    g_print ("opened\n");
  else
    g_print ("code=%d message=%s\n", error->code, error->message);
  return 0;
}

int
conformance_lock_child (int    argc,
                        char **argv)
{
  self_path = argv[0];
  if (argc == 4 && g_str_equal (argv[1], "--hold-writer"))
    return hold_writer (argv[2], g_ascii_strtoll (argv[3], NULL, 10));
  if (argc == 4 && g_str_equal (argv[1], "--count-writer"))
    return count_writer (argv[2], (guint) g_ascii_strtoull (argv[3], NULL, 10));
  if (argc == 3 && g_str_equal (argv[1], "--try-writer"))
    return try_writer (argv[2]);
  return -1;
}

typedef struct
{
  GPid  pid;
  int   out_fd;
} Child;

/* One line the child printed, without its newline; NULL at the end. */
static char *
read_line (int fd)
{
  GString *line = g_string_new (NULL);
  char c;

  while (read (fd, &c, 1) == 1)
    {
      if (c == '\n')
        return g_string_free (line, FALSE);
      g_string_append_c (line, c);
    }
  g_string_free (line, TRUE);
  return NULL;
}

/* Starts a writer that holds @uri for @hold_ms and returns once it holds
 * it. */
static void
child_start (Child      *child,
             const char *uri,
             gint64      hold_ms)
{
  g_autofree char *ms = g_strdup_printf ("%" G_GINT64_FORMAT, hold_ms);
  const char *argv[] = { self_path, "--hold-writer", uri, ms, NULL };
  g_autoptr(GError) error = NULL;
  g_autofree char *line = NULL;

  g_spawn_async_with_pipes (NULL, (char **) argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD, NULL, NULL,
                            &child->pid, NULL, &child->out_fd, NULL, &error);
  g_assert_no_error (error);
  line = read_line (child->out_fd);
  g_assert_nonnull (line);
  g_assert_true (g_str_has_prefix (line, "ready "));
}

/* Waits for the child to end; returns its wait status. */
static int
child_wait (Child *child)
{
  int status = 0;

  g_assert_cmpint (waitpid (child->pid, &status, 0), ==, child->pid);
  g_spawn_close_pid (child->pid);
  close (child->out_fd);
  return status;
}

/* Tests */

/* A second writable open in the same process is refused, naming the
 * location; readers still come in; the writer is unharmed; once it
 * closes, the next writer comes in. */
static void
test_lock_in_process (Fixture       *f,
                      gconstpointer  data)
{
  g_autoptr(QStoreKV) kv = NULL;
  g_autoptr(QStoreProvider) second = NULL;
  g_autoptr(QStoreProvider) reader = NULL;
  g_autoptr(QStoreKV) read_kv = NULL;
  g_autoptr(GError) error = NULL;

  if (!has_writer_lock (f))
    return;

  kv = store (f, "main.t");
  put (kv, "k", "v");

  second = qstore_provider_new_for_uri (f->uri, QSTORE_OPEN_NONE, &error);
  g_assert_null (second);
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_BUSY);
  g_assert_nonnull (strstr (error->message, qstore_provider_get_location (f->provider)));
  g_assert_nonnull (strstr (error->message, "this process"));
  g_clear_error (&error);

  reader = open_provider (f->uri, QSTORE_OPEN_READ_ONLY);
  read_kv = qstore_provider_open_store (reader, "main.t", &error);
  g_assert_no_error (error);
  assert_value (read_kv, "k", "v");

  put (kv, "k", "w");
  assert_value (kv, "k", "w");

  qstore_provider_close_all (f->provider);
  second = open_provider (f->uri, QSTORE_OPEN_NONE);
  g_clear_object (&kv);
  kv = qstore_provider_open_store (second, "main.t", &error);
  g_assert_no_error (error);
  assert_value (kv, "k", "w");
}

/* A writer in another process is refused while this one holds the
 * location, with the location and this process's id in the message. */
static void
test_lock_other_process (Fixture       *f,
                         gconstpointer  data)
{
  g_autoptr(QStoreKV) kv = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *out = NULL;
  g_autofree char *by = g_strdup_printf ("by process %d", (int) getpid ());
  g_autofree char *code = g_strdup_printf ("code=%d ", QSTORE_ERROR_BUSY);
  const char *argv[] = { self_path, "--try-writer", f->uri, NULL };
  int status;

  if (!has_writer_lock (f))
    return;

  kv = store (f, "main.t");
  put (kv, "k", "v");

  g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, NULL,
                &status, &error);
  g_assert_no_error (error);
  g_assert_true (g_spawn_check_wait_status (status, NULL));
  g_assert_true (g_str_has_prefix (out, code));
  g_assert_nonnull (strstr (out, qstore_provider_get_location (f->provider)));
  g_assert_nonnull (strstr (out, by));

  /* Once this one closes, the other process gets in. */
  qstore_provider_close_all (f->provider);
  g_clear_pointer (&out, g_free);
  g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, NULL,
                &status, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (out, ==, "opened\n");
}

/* A writer in another process refuses the next one at once, naming the
 * location and its pid; readers work beside it. Once it is killed it
 * leaves no lock behind: the next writer comes in at once and finds what
 * it committed. */
static void
test_lock_killed_writer (Fixture       *f,
                         gconstpointer  data)
{
  g_autoptr(QStoreProvider) refused = NULL;
  g_autoptr(QStoreProvider) reader = NULL;
  g_autoptr(QStoreProvider) next = NULL;
  g_autoptr(QStoreKV) kv = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *by = NULL;
  g_autofree char *waiting = uri_with (f->uri, "wait_ms=10000");
  Child child = { 0 };
  gint64 start;
  int status;

  if (!has_writer_lock (f))
    return;
  qstore_provider_close_all (f->provider);

  child_start (&child, f->uri, -1);
  by = g_strdup_printf ("by process %d", (int) child.pid);

  /* At once: no waiting on the holder (sqlite's busy_timeout is 5 s). */
  start = g_get_monotonic_time ();
  refused = qstore_provider_new_for_uri (f->uri, QSTORE_OPEN_NONE, &error);
  g_assert_cmpint (g_get_monotonic_time () - start, <, G_USEC_PER_SEC);
  g_assert_null (refused);
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_BUSY);
  g_assert_nonnull (strstr (error->message, qstore_provider_get_location (f->provider)));
  g_assert_nonnull (strstr (error->message, by));
  g_clear_error (&error);

  reader = open_provider (f->uri, QSTORE_OPEN_READ_ONLY);
  kv = qstore_provider_open_store (reader, "main.t", &error);
  g_assert_no_error (error);
  assert_value (kv, "k", "from-child");
  g_clear_object (&kv);
  g_clear_object (&reader);

  kill (child.pid, SIGKILL);
  status = child_wait (&child);
  g_assert_true (WIFSIGNALED (status));

  /* The holder's death releases the lock: at once for a lock the kernel
   * holds, once the server notices the dropped connection for one a
   * database server holds, so the open may wait a little. */
  start = g_get_monotonic_time ();
  next = open_provider (waiting, QSTORE_OPEN_NONE);
  g_assert_cmpint (g_get_monotonic_time () - start, <, 10 * G_USEC_PER_SEC);
  kv = qstore_provider_open_store (next, "main.t", &error);
  g_assert_no_error (error);
  assert_value (kv, "k", "from-child");
  put (kv, "k", "after");
  assert_value (kv, "k", "after");
}

/* ?wait_ms waits for the writer: too short a wait fails BUSY after the
 * wait, a long enough one gets in once the writer closes. */
static void
test_lock_wait (Fixture       *f,
                gconstpointer  data)
{
  g_autofree char *short_wait = uri_with (f->uri, "wait_ms=100");
  g_autofree char *long_wait = uri_with (f->uri, "wait_ms=20000");
  g_autoptr(QStoreProvider) refused = NULL;
  g_autoptr(QStoreProvider) next = NULL;
  g_autoptr(GError) error = NULL;
  Child child = { 0 };
  gint64 start, waited;
  int status;

  if (!has_writer_lock (f))
    return;
  qstore_provider_close_all (f->provider);

  child_start (&child, f->uri, 800);

  start = g_get_monotonic_time ();
  refused = qstore_provider_new_for_uri (short_wait, QSTORE_OPEN_NONE, &error);
  waited = g_get_monotonic_time () - start;
  g_assert_null (refused);
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_BUSY);
  g_assert_cmpint (waited, >=, 100 * 1000);

  start = g_get_monotonic_time ();
  next = open_provider (long_wait, QSTORE_OPEN_NONE);
  waited = g_get_monotonic_time () - start;
  /* It did wait for the writer, and no longer than it had to. */
  g_assert_cmpint (waited, >=, 200 * 1000);
  g_assert_cmpint (waited, <, 15 * G_USEC_PER_SEC);
  status = child_wait (&child);
  g_assert_true (g_spawn_check_wait_status (status, NULL));
}

/* Two processes that read a counter and write it back, each under the
 * lock, lose no update. */
static void
test_lock_two_writers (Fixture       *f,
                       gconstpointer  data)
{
  const char *argv[] = { self_path, "--count-writer", f->uri, "40", NULL };
  g_autoptr(QStoreKV) kv = NULL;
  g_autoptr(GError) error = NULL;
  GPid pids[2];

  if (!has_writer_lock (f))
    return;
  qstore_provider_close_all (f->provider);

  for (guint i = 0; i < G_N_ELEMENTS (pids); i++)
    {
      g_spawn_async (NULL, (char **) argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD, NULL, NULL,
                     &pids[i], &error);
      g_assert_no_error (error);
    }
  for (guint i = 0; i < G_N_ELEMENTS (pids); i++)
    {
      int status;

      g_assert_cmpint (waitpid (pids[i], &status, 0), ==, pids[i]);
      g_spawn_close_pid (pids[i]);
      g_assert_true (g_spawn_check_wait_status (status, NULL));
    }

  g_clear_object (&f->provider);
  f->provider = open_provider (f->uri, QSTORE_OPEN_READ_ONLY);
  kv = store (f, "main.count");
  assert_value (kv, "n", "80");
}

/* Options given twice are refused, naming the option; wait_ms takes a
 * number, and only providers with a writer lock take it. */
static void
test_lock_options (Fixture       *f,
                   gconstpointer  data)
{
  g_autofree char *base = g_strndup (f->uri, strcspn (f->uri, "?"));
  struct { const char *options; const char *named; } refused[] = {
    { "atomic=0&atomic=1", "atomic" },
    { "atomic=1&atomic=1", "atomic" },
    { "wait_ms=1&wait_ms=2", "wait_ms" },
    { "wait_ms=soon", "wait_ms" },
    { "wait_ms=-1", "wait_ms" },
  };

  /* The fixture's writer would make every open below BUSY. */
  qstore_provider_close_all (f->provider);

  for (guint i = 0; i < G_N_ELEMENTS (refused); i++)
    {
      g_autofree char *uri = uri_with (base, refused[i].options);
      g_autoptr(GError) error = NULL;
      g_autoptr(QStoreProvider) provider = qstore_provider_new_for_uri (uri, QSTORE_OPEN_NONE,
                                                                        &error);

      g_assert_null (provider);
      g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT);
      g_assert_nonnull (strstr (error->message, refused[i].named));
    }

  {
    g_autofree char *uri = uri_with (base, "wait_ms=0");
    g_autoptr(GError) error = NULL;
    g_autoptr(QStoreProvider) provider = qstore_provider_new_for_uri (uri, QSTORE_OPEN_NONE,
                                                                      &error);

    if (!(f->caps & QSTORE_CAPABILITY_WRITER_LOCK))
      {
        g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT);
        g_assert_nonnull (strstr (error->message, "no option “wait_ms”"));
      }
    else
      g_assert_no_error (error);
  }
}

void
conformance_add_lock_tests (const char *prefix)
{
#define ADD(name, func) G_STMT_START { \
    g_autofree char *path_ = g_strconcat (prefix, "/writer-lock/", name, NULL); \
    g_test_add (path_, Fixture, NULL, fixture_setup, func, fixture_teardown); \
  } G_STMT_END

  ADD ("in-process", test_lock_in_process);
  ADD ("other-process", test_lock_other_process);
  ADD ("killed-writer", test_lock_killed_writer);
  ADD ("wait", test_lock_wait);
  ADD ("two-writers", test_lock_two_writers);
  ADD ("options", test_lock_options);
#undef ADD
}
