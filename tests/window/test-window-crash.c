/* test-window-crash.c: the unsafe window when commits fail, when its
 * writer is killed, and when deliveries race
 *
 * - fault: a fault injected at every write position of an operation's
 *   commit (_qstore_fault_arm()) leaves nothing of the operation;
 * - crash: a child delivers a stream of events and is SIGKILLed at a
 *   random point; the store is reopened, everything is delivered again in
 *   the same order, and the window must hold exactly what an uninterrupted
 *   run holds (QSTORE_CRASH_ITERATIONS cycles, 100 by default);
 * - duplicates: two threads, or two processes, deliver the same events at
 *   once: exactly one delivery of each applies.
 *
 * `test-window-crash --crash-child URI` and `--deliver-child URI` are the
 * children; `--open-child URI` reports whether a second writer may open.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "window-test-util.h"

static const char *self_path;

static guint
env_count (const char *name,
           guint       fallback)
{
  const char *value = g_getenv (name);

  return value != NULL ? (guint) g_ascii_strtoull (value, NULL, 10) : fallback;
}

/* Faults */

typedef gboolean (*Operation) (WindowFixture *f, GError **error);

/* Arms a fault at each write position of @operation's commit in turn:
 * each fails and leaves every table as it was, until one position past
 * the last, where it succeeds. Returns the dump after it did. */
static char *
fail_at_every_write (WindowFixture *f,
                     Operation      operation)
{
  g_autofree char *before = window_dump (f->t.db, WINDOW_NAME);
  guint position;

  for (position = 0; position < 1000; position++)
    {
      g_autoptr(GError) error = NULL;
      g_autofree char *after = NULL;
      gboolean ok;

      _qstore_fault_arm (QSTORE_FAULT_WRITE_OP, position);
      ok = operation (f, &error);
      _qstore_fault_disarm_all ();
      if (ok)
        break;

      g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_IO);
      g_assert_nonnull (strstr (error->message, "Injected fault"));
      after = window_dump (f->t.db, WINDOW_NAME);
      if (g_strcmp0 (before, after) != 0)
        g_error ("A fault at write %u left a change:\n%s\ninstead of\n%s", position, after, before);
    }

  /* At least the operation's own rows and bookkeeping were written. */
  g_test_message ("%u write positions", position);
  g_assert_cmpuint (position, >=, 2);
  g_assert_cmpuint (position, <, 1000);
  return window_dump (f->t.db, WINDOW_NAME);
}

static gboolean
apply_single (WindowFixture  *f,
              GError        **error)
{
  g_autoptr(QStoreUnsafeEvent) event = window_upsert_event ("single", 20, "a", "{\"v\": 20}");

  qstore_unsafe_event_add_index_entry (event, "i", "a", g_variant_new_string ("x"));
  qstore_unsafe_event_set_record_arrival (event, TRUE);
  return qstore_unsafe_window_apply (f->w, event, NULL, NULL, error);
}

static gboolean
apply_complete (WindowFixture  *f,
                GError        **error)
{
  g_autoptr(QStoreUnsafeEvent) event = window_event ("complete", 21);

  qstore_unsafe_event_add_patch (event, "a", "{\"p\": 1}", 21, S (21));
  qstore_unsafe_event_add_delete (event, "b");
  qstore_unsafe_event_add_upsert (event, "c", "3", 21, S (21));
  qstore_unsafe_event_add_tombstone (event, "d", 21, S (21));
  qstore_unsafe_event_add_index_entry (event, "i", "c", g_variant_new_int64 (3));
  qstore_unsafe_event_set_record_arrival (event, TRUE);
  return qstore_unsafe_window_apply (f->w, event, NULL, NULL, error);
}

static gboolean
apply_older (WindowFixture  *f,
             GError        **error)
{
  g_autoptr(QStoreUnsafeEvent) event = window_upsert_event ("older", 3, "a", "0");

  return qstore_unsafe_window_apply (f->w, event, NULL, NULL, error);
}

static gboolean
observe_safe_receipt (WindowFixture  *f,
                      GError        **error)
{
  return qstore_unsafe_window_observe_safe_receipt (f->w, 0, "older", S (3), error);
}

static gboolean
garbage_collect (WindowFixture  *f,
                 GError        **error)
{
  gboolean collected = FALSE;

  if (!qstore_unsafe_window_garbage_collect (f->w, 0, 1, "c", 21, S (21), S (30), &collected,
                                             error))
    return FALSE;
  g_assert_true (collected);
  return TRUE;
}

static gboolean
acquire_kick (WindowFixture  *f,
              GError        **error)
{
  gboolean acquired = FALSE;

  if (!qstore_unsafe_window_acquire_kick (f->w, "me", 0, 10, &acquired, NULL, error))
    return FALSE;
  g_assert_true (acquired);
  return TRUE;
}

static void
test_faults (WindowFixture *f,
             gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *dump = NULL;
  g_autofree char *page = NULL;

  g_assert_true (qstore_unsafe_window_activate_generation (f->w, 0, 1, &error));
  g_assert_no_error (error);
  window_put (f->w, "a", 10, "a", "{\"v\": 10}");
  window_put (f->w, "b", 11, "b", "11");
  window_put (f->w, "d", 12, "d", "12");

  g_free (fail_at_every_write (f, apply_single));
  g_free (fail_at_every_write (f, apply_complete));
  g_free (fail_at_every_write (f, apply_older));
  dump = fail_at_every_write (f, observe_safe_receipt);
  g_assert_nonnull (strstr (dump, "[markers]\n[arrivals]\n0|'000000000000000000300000000000'"));
  {
    /* The safe layer covers c up to 30. */
    g_autoptr(QStoreUnsafeEvent) event = window_upsert_event ("head", 30, "z", "0");

    qstore_unsafe_event_set_record_arrival (event, TRUE);
    window_apply_expect (f->w, event, QSTORE_UNSAFE_OUTCOME_APPLIED, FALSE);
    g_assert_true (qstore_unsafe_window_observe_safe_receipt (f->w, 0, "head", S (30), &error));
  }
  g_free (fail_at_every_write (f, garbage_collect));
  g_free (fail_at_every_write (f, acquire_kick));

  page = window_page (f->w, 0);
  g_assert_cmpstr (page, ==,
                   "a={\"v\":20,\"p\":1} v21 000000000000000002100000000000 unsafe\n"
                   "z=0 v30 000000000000000003000000000000 unsafe\n"
                   "total 2\n");
}

/* Crashes */

/* The stream the crash child delivers, the same every time: upserts,
 * patches, deletes, tombstones, index entries and re-deliveries over a
 * few keys, some arriving late, with a safe receipt now and then. */
typedef struct
{
  QStoreUnsafeEvent *event;       /* NULL: observe the safe receipt of @safe */
  const char        *safe_id;
  guint64            safe_n;
} Delivery;

static void
delivery_clear (gpointer data)
{
  Delivery *delivery = data;

  g_clear_object (&delivery->event);
}

static GArray *
crash_stream (void)
{
  g_autoptr(GRand) rand = g_rand_new_with_seed (20240614);
  GArray *stream = g_array_new (FALSE, TRUE, sizeof (Delivery));
  g_autoptr(GPtrArray) sent = g_ptr_array_new ();
  g_autoptr(GArray) sent_n = g_array_new (FALSE, FALSE, sizeof (guint64));

  g_array_set_clear_func (stream, delivery_clear);
  for (guint i = 0; i < 80; i++)
    {
      Delivery delivery = { NULL, NULL, 0 };
      int dice = g_rand_int_range (rand, 0, 100);
      /* Mostly ahead, sometimes late. */
      guint64 n = 100 + i * 2 - (dice % 5 == 0 ? (guint64) g_rand_int_range (rand, 1, 30) : 0);
      g_autofree char *id = g_strdup_printf ("ev%02u", i);
      g_autofree char *key = g_strdup_printf ("k%d", g_rand_int_range (rand, 0, 8));
      g_autofree char *value = g_strdup_printf ("{\"i\": %u}", i);

      if (dice < 8 && sent->len > 0)
        {
          /* A re-delivery. */
          delivery.event = g_object_ref (g_ptr_array_index (sent, g_rand_int_range (rand, 0, sent->len)));
          g_array_append_val (stream, delivery);
          continue;
        }
      if (dice < 12 && sent->len > 0)
        {
          guint j = g_rand_int_range (rand, 0, sent->len);

          delivery.safe_id = qstore_unsafe_event_get_event_id (g_ptr_array_index (sent, j));
          delivery.safe_n = g_array_index (sent_n, guint64, j);
          g_array_append_val (stream, delivery);
          continue;
        }

      delivery.event = window_event (id, n);
      if (dice < 50)
        qstore_unsafe_event_add_upsert (delivery.event, key, value, i, S (n));
      else if (dice < 65)
        qstore_unsafe_event_add_patch (delivery.event, key, value, i, S (n));
      else if (dice < 72)
        qstore_unsafe_event_add_delete (delivery.event, key);
      else if (dice < 80)
        qstore_unsafe_event_add_tombstone (delivery.event, key, i, S (n));
      else
        {
          qstore_unsafe_event_add_upsert (delivery.event, key, value, i, S (n));
          qstore_unsafe_event_add_upsert (delivery.event, "shared", value, i, S (n));
        }
      if (dice % 3 == 0)
        qstore_unsafe_event_add_index_entry (delivery.event, "by_i", key, g_variant_new_int64 (i));
      qstore_unsafe_event_set_record_arrival (delivery.event, dice % 2 == 0);
      g_ptr_array_add (sent, delivery.event);
      g_array_append_val (sent_n, n);
      g_array_append_val (stream, delivery);
    }
  return stream;
}

/* Delivers one item; refusals are outcomes of the stream too. */
static gboolean
deliver (QStoreUnsafeWindow  *w,
         const Delivery      *delivery,
         GError             **error)
{
  g_autoptr(GError) local_error = NULL;
  gboolean ok;

  if (delivery->event != NULL)
    ok = qstore_unsafe_window_apply (w, delivery->event, NULL, NULL, &local_error);
  else
    ok = qstore_unsafe_window_observe_safe_receipt (w, 0, delivery->safe_id, S (delivery->safe_n),
                                                    &local_error);
  if (ok || local_error->domain == QSTORE_UNSAFE_WINDOW_ERROR)
    return TRUE;
  g_propagate_error (error, g_steal_pointer (&local_error));
  return FALSE;
}

static int
crash_child (const char *uri)
{
  g_autoptr(GArray) stream = crash_stream ();
  g_autoptr(QStoreDatabase) db = NULL;
  g_autoptr(QStoreUnsafeWindow) w = NULL;
  g_autoptr(GError) error = NULL;

  db = qstore_database_open (uri, QSTORE_OPEN_NONE, &error);
  if (db != NULL)
    w = qstore_unsafe_window_new (db, WINDOW_NAME, &error);
  if (w == NULL)
    {
      g_printerr ("crash child: %s\n", error->message);
      return 1;
    }
  for (guint i = 0; i < stream->len; i++)
    {
      if (!deliver (w, &g_array_index (stream, Delivery, i), &error))
        {
          g_printerr ("crash child: delivery %u: %s\n", i, error->message);
          return 1;
        }
      /* Reported once the delivery returned: its commit is durable. */
      printf ("%u\n", i);
      fflush (stdout);
    }
  /* Wait for the kill. */
  for (;;)
    pause ();
  return 0;
}

/* Delivers the whole stream; returns the window's dump. */
static char *
deliver_all (QStoreDatabase *db)
{
  g_autoptr(GArray) stream = crash_stream ();
  g_autoptr(QStoreUnsafeWindow) w = NULL;
  g_autoptr(GError) error = NULL;

  w = qstore_unsafe_window_new (db, WINDOW_NAME, &error);
  g_assert_no_error (error);
  for (guint i = 0; i < stream->len; i++)
    if (!deliver (w, &g_array_index (stream, Delivery, i), &error))
      g_error ("delivery %u: %s", i, error->message);
  return g_strconcat (window_dump (db, WINDOW_NAME), window_page (w, 0), NULL);
}

/* Reads reports until the @wanted-th or the end; returns the last. */
static int
read_reports (FILE *out,
              int   wanted)
{
  char line[64];
  int last = -1;

  while ((wanted < 0 || last < wanted) && fgets (line, sizeof line, out) != NULL)
    last = (int) g_ascii_strtoll (line, NULL, 10);
  return last;
}

static void
test_crash (void)
{
  g_autoptr(QStoreDatabase) reference_db = test_open_database ("memory:", QSTORE_OPEN_NONE);
  g_autofree char *expected = deliver_all (reference_db);
  g_autoptr(GRand) rand = g_rand_new_with_seed (g_test_rand_int ());
  g_autoptr(GArray) stream = crash_stream ();
  guint iterations = env_count ("QSTORE_CRASH_ITERATIONS", 100);
  guint mid_stream = 0;

  if (!test_provider_persistent ())
    {
      g_test_skip ("a crash of a memory store leaves nothing to check");
      return;
    }

  for (guint i = 0; i < iterations; i++)
    {
      g_autofree char *dir = window_test_make_dir ("qstore-window-crash-XXXXXX");
      g_autofree char *uri = test_provider_uri (dir, "store");
      const char *argv[] = { self_path, "--crash-child", uri, NULL };
      g_autoptr(QStoreDatabase) db = NULL;
      g_autoptr(QStoreUnsafeWindow) w = NULL;
      g_autoptr(GError) error = NULL;
      g_autofree char *got = NULL;
      int wanted = g_rand_int_range (rand, -1, stream->len);
      GPid pid;
      int out_fd;
      FILE *out;
      int reported;
      int status;

      /* Most children find the window made; the others make it, and may
       * die doing so. */
      if (i % 4 != 0)
        {
          db = test_open_database (uri, QSTORE_OPEN_NONE);
          w = qstore_unsafe_window_new (db, WINDOW_NAME, &error);
          g_assert_no_error (error);
          g_clear_object (&w);
          test_close_database (&db);
        }

      g_spawn_async_with_pipes (NULL, (char **) argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD, NULL, NULL,
                                &pid, NULL, &out_fd, NULL, &error);
      g_assert_no_error (error);
      out = fdopen (out_fd, "r");
      /* -1: killed while it opens the store. */
      reported = wanted < 0 ? -1 : read_reports (out, wanted);
      kill (pid, SIGKILL);
      waitpid (pid, &status, 0);
      g_spawn_close_pid (pid);
      if (!WIFSIGNALED (status))
        g_error ("The crash child stopped before it was killed (status %d)", status);
      reported = MAX (reported, read_reports (out, -1));
      fclose (out);
      if (reported + 1 < (int) stream->len)
        mid_stream++;

      db = test_open_database (uri, QSTORE_OPEN_NONE);
      w = qstore_unsafe_window_new (db, WINDOW_NAME, &error);
      g_assert_no_error (error);
      /* Every apply the child reported is there. */
      for (int j = 0; j <= reported; j++)
        {
          const Delivery *delivery = &g_array_index (stream, Delivery, j);
          gboolean found = FALSE;
          QStoreUnsafeEvent *event = delivery->event;
          g_autofree char *in_reference = NULL;

          if (event == NULL)
            continue;
          g_assert_true (qstore_unsafe_window_has_target_receipt (w,
                                                                  qstore_unsafe_event_get_event_id (event),
                                                                  qstore_unsafe_event_get_suid (event),
                                                                  &found, &error));
          g_assert_no_error (error);
          in_reference = g_strdup_printf ("'%s'|'%s'", qstore_unsafe_event_get_event_id (event),
                                          qstore_unsafe_event_get_suid (event));
          if (strstr (expected, in_reference) != NULL && !found)
            g_error ("crash %u: delivery %d (event “%s”) was reported but is gone", i, j,
                     qstore_unsafe_event_get_event_id (event));
        }
      g_clear_object (&w);

      got = deliver_all (db);
      if (g_strcmp0 (got, expected) != 0)
        g_error ("crash %u after delivery %d: the window holds\n%s\ninstead of\n%s", i, reported,
                 got, expected);
      test_close_database (&db);
      test_remove_tree (dir);
    }
  g_test_message ("%u crashes, %u of them before the end of the stream", iterations, mid_stream);
  g_assert_cmpuint (mid_stream, >, 0);
}

/* Duplicates from two threads */

typedef struct
{
  QStoreUnsafeWindow *windows[2];
  GMutex              lock;
  GCond               cond;
  gint                joined;
  guint               ready;
  char               *results[2][50];
} Race;

#define N_RACES 50

static char *
race_result (QStoreUnsafeWindow *w,
             guint               round)
{
  g_autofree char *id = g_strdup_printf ("race%u", round);
  g_autoptr(QStoreUnsafeEvent) event = window_upsert_event (id, 100 + round, "k", "1");
  g_autoptr(GError) error = NULL;
  QStoreUnsafeOutcome outcome;
  gboolean duplicate;

  if (round % 2 == 1)
    qstore_unsafe_event_add_upsert (event, "other", "2", round, S (100 + round));
  if (qstore_unsafe_window_apply (w, event, &outcome, &duplicate, &error))
    return g_strdup (outcome == QSTORE_UNSAFE_OUTCOME_APPLIED && !duplicate ? "applied"
                     : duplicate ? "duplicate" : "other");
  if (g_error_matches (error, QSTORE_UNSAFE_WINDOW_ERROR, QSTORE_UNSAFE_WINDOW_ERROR_DUPLICATE_RACE))
    return g_strdup ("duplicate");
  return g_strdup (error->message);
}

static gpointer
race_thread (gpointer data)
{
  Race *race = data;
  guint me = (guint) g_atomic_int_add (&race->joined, 1);

  for (guint round = 0; round < N_RACES; round++)
    {
      /* Both start each round together. */
      g_mutex_lock (&race->lock);
      race->ready++;
      if (race->ready == 2 * (round + 1))
        g_cond_broadcast (&race->cond);
      while (race->ready < 2 * (round + 1))
        g_cond_wait (&race->cond, &race->lock);
      g_mutex_unlock (&race->lock);

      race->results[me][round] = race_result (race->windows[me], round);
    }
  return NULL;
}

static void
test_duplicate_threads (WindowFixture *f,
                        gconstpointer  data)
{
  Race race = { { NULL, NULL } };
  g_autoptr(GError) error = NULL;
  GThread *threads[2];

  race.windows[0] = f->w;
  /* Another window object of the same name and database. */
  race.windows[1] = qstore_unsafe_window_new (f->t.db, WINDOW_NAME, &error);
  g_assert_no_error (error);
  g_mutex_init (&race.lock);
  g_cond_init (&race.cond);

  for (guint i = 0; i < 2; i++)
    threads[i] = g_thread_new ("race", race_thread, &race);
  for (guint i = 0; i < 2; i++)
    g_thread_join (threads[i]);

  for (guint round = 0; round < N_RACES; round++)
    {
      const char *a = race.results[0][round];
      const char *b = race.results[1][round];
      gboolean found;

      if (!((g_str_equal (a, "applied") && g_str_equal (b, "duplicate")) ||
            (g_str_equal (a, "duplicate") && g_str_equal (b, "applied"))))
        g_error ("round %u: the deliveries gave “%s” and “%s”", round, a, b);
      {
        g_autofree char *id = g_strdup_printf ("race%u", round);

        g_assert_true (qstore_unsafe_window_has_target_receipt (f->w, id, S (100 + round), &found,
                                                                &error));
        g_assert_true (found);
      }
      g_free (race.results[0][round]);
      g_free (race.results[1][round]);
    }
  g_object_unref (race.windows[1]);
  g_mutex_clear (&race.lock);
  g_cond_clear (&race.cond);
}

/* Duplicates from two processes */

#define N_PROCESS_EVENTS 20

static QStoreDatabase *
open_retrying (const char  *uri,
               GError     **error)
{
  gint64 deadline = g_get_monotonic_time () + 60 * G_USEC_PER_SEC;

  for (;;)
    {
      g_autoptr(GError) local_error = NULL;
      QStoreDatabase *db = qstore_database_open (uri, QSTORE_OPEN_NONE, &local_error);

      if (db != NULL)
        return db;
      if (!g_error_matches (local_error, QSTORE_ERROR, QSTORE_ERROR_BUSY) ||
          g_get_monotonic_time () > deadline)
        {
          g_propagate_error (error, g_steal_pointer (&local_error));
          return NULL;
        }
      g_usleep (5000);
    }
}

static int
deliver_child (const char *uri)
{
  g_autoptr(QStoreDatabase) db = NULL;
  g_autoptr(QStoreUnsafeWindow) w = NULL;
  g_autoptr(GError) error = NULL;

  db = open_retrying (uri, &error);
  if (db != NULL)
    w = qstore_unsafe_window_new (db, WINDOW_NAME, &error);
  if (w == NULL)
    {
      g_printerr ("deliver child: %s\n", error->message);
      return 1;
    }
  for (guint i = 0; i < N_PROCESS_EVENTS; i++)
    {
      g_autofree char *result = race_result (w, i);

      printf ("%s\n", result);
    }
  g_clear_object (&w);
  if (!qstore_database_close (db, &error))
    {
      g_printerr ("deliver child: %s\n", error->message);
      return 1;
    }
  return 0;
}

static int
open_child (const char *uri)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(QStoreDatabase) db = qstore_database_open (uri, QSTORE_OPEN_NONE, &error);

  printf ("%s\n", db != NULL ? "opened" : g_error_matches (error, QSTORE_ERROR, QSTORE_ERROR_BUSY)
                                          ? "busy" : error->message);
  return 0;
}

static void
test_duplicate_processes (WindowFixture *f,
                          gconstpointer  data)
{
  GSubprocess *children[2] = { NULL, NULL };
  GStrv lines[2] = { NULL, NULL };
  g_autoptr(GError) error = NULL;

  if (!test_provider_persistent ())
    {
      g_test_skip ("a memory store is one process's");
      return;
    }

  {
    /* Two writers could each pass the guards and both commit: the window
     * relies on one writer per location. */
    const char *args[] = { "--open-child", f->t.uri, NULL };
    g_autoptr(TestRun) run = test_run_programv (self_path, NULL, NULL, args);

    if (g_str_equal (run->out, "opened\n"))
      {
        g_test_skip ("this build lets a second process open the store for writing while "
                     "the first holds it: it does not enforce one writer per location");
        return;
      }
    g_assert_cmpstr (run->out, ==, "busy\n");
  }

  g_clear_object (&f->w);
  test_close_database (&f->t.db);
  for (guint i = 0; i < 2; i++)
    {
      children[i] = g_subprocess_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE, &error, self_path,
                                      "--deliver-child", f->t.uri, NULL);
      g_assert_no_error (error);
    }
  for (guint i = 0; i < 2; i++)
    {
      g_autofree char *out = NULL;

      g_subprocess_communicate_utf8 (children[i], NULL, NULL, &out, NULL, &error);
      g_assert_no_error (error);
      g_assert_true (g_subprocess_get_if_exited (children[i]));
      g_assert_cmpint (g_subprocess_get_exit_status (children[i]), ==, 0);
      lines[i] = g_strsplit (out, "\n", -1);
      g_assert_cmpuint (g_strv_length (lines[i]), ==, N_PROCESS_EVENTS + 1);
    }
  for (guint i = 0; i < N_PROCESS_EVENTS; i++)
    if (!((g_str_equal (lines[0][i], "applied") && g_str_equal (lines[1][i], "duplicate")) ||
          (g_str_equal (lines[0][i], "duplicate") && g_str_equal (lines[1][i], "applied"))))
      g_error ("event %u: the processes gave “%s” and “%s”", i, lines[0][i], lines[1][i]);
  for (guint i = 0; i < 2; i++)
    {
      g_object_unref (children[i]);
      g_strfreev (lines[i]);
    }

  f->t.db = test_open_database (f->t.uri, QSTORE_OPEN_NONE);
  window_fixture_open (f);
}

int
main (int    argc,
      char **argv)
{
  self_path = argv[0];
  if (argc == 3 && g_str_equal (argv[1], "--crash-child"))
    return crash_child (argv[2]);
  if (argc == 3 && g_str_equal (argv[1], "--deliver-child"))
    return deliver_child (argv[2]);
  if (argc == 3 && g_str_equal (argv[1], "--open-child"))
    return open_child (argv[2]);

  g_test_init (&argc, &argv, NULL);

  WINDOW_TEST ("/window/fault/every-write", test_faults);
  WINDOW_TEST ("/window/duplicates/threads", test_duplicate_threads);
  WINDOW_TEST ("/window/duplicates/processes", test_duplicate_processes);
  g_test_add_func ("/window/crash", test_crash);

  return g_test_run ();
}
