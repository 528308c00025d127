/* test-coordinator-spill.c: large transactions do not grow the writer
 *
 * On a provider with write transactions the coordinator writes its
 * buffer out into one once it holds a step's worth of bytes, so what it
 * holds stays under a bound whatever the transaction writes. The tests
 * take the smallest step, a write-out at every look at the buffer (every
 * QSTORE_COORDINATOR_SPILL_WRITES writes), so that small transactions
 * write out many times;
 * reads inside the transaction, savepoints, rollbacks and crashes behave
 * as with everything in the buffer. Providers without write transactions
 * keep everything in the buffer, which the same counter shows growing.
 * The step as users set it (qstore_coordinator_set_write_out_step()) has
 * tests of its own: its range, and a change inside a transaction.
 *
 * Run with QSTORE_TEST_PROVIDER set to a provider name, optionally
 * followed by URI options (`lmdb`, `sqlite?atomic=0`, …).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <signal.h>
#include <string.h>

#include <qstore.h>

#include "qstore-coordinator-private.h"
#include "qstore-fault-private.h"
#include "qstore-test-util.h"

static const char *self_path;

/* What the buffer may hold: about one write-out's worth of writes
 * (1,024 of some 40 bytes here, in an arena that grows by doubling). */
#define BUFFER_BOUND (256 * 1024)

typedef struct
{
  char               *dir;
  char               *uri;
  QStoreProvider     *provider;
  QStoreCoordinator  *coord;
  QStoreKV           *a;
  QStoreKV           *ai;
  gboolean            spills;   /* the provider has write transactions */
} Fixture;

/* With @smallest, the step is the tests' own: a write-out at every
 * look. */
static void
open_with_step (Fixture  *f,
                gboolean  smallest)
{
  g_autoptr(GError) error = NULL;

  f->provider = qstore_provider_new_for_uri (f->uri, QSTORE_OPEN_NONE, &error);
  g_assert_no_error (error);
  f->spills = (qstore_provider_get_capabilities (f->provider) & QSTORE_CAPABILITY_WRITE_TXN) != 0;
  f->coord = qstore_coordinator_new (f->provider, &error);
  g_assert_no_error (error);
  if (smallest)
    qstore_coordinator_test_set_spill_bytes (f->coord, 0);
  f->a = qstore_provider_open_store (f->provider, "main.a", &error);
  g_assert_no_error (error);
  f->ai = qstore_provider_open_store (f->provider, "main.a_idx_i", &error);
  g_assert_no_error (error);
}

static void
open_all (Fixture *f)
{
  open_with_step (f, TRUE);
}

static void
close_all (Fixture *f)
{
  g_clear_object (&f->a);
  g_clear_object (&f->ai);
  g_clear_object (&f->coord);
  if (f->provider != NULL)
    qstore_provider_close_all (f->provider);
  g_clear_object (&f->provider);
}

static void
fixture_setup (Fixture       *f,
               gconstpointer  data)
{
  f->dir = test_make_tmp_dir ("qstore-spill-XXXXXX");
  f->uri = test_provider_uri (f->dir, "store");
  open_all (f);
}

static void
fixture_teardown (Fixture       *f,
                  gconstpointer  data)
{
  close_all (f);
  test_remove_tree (f->dir);
  g_free (f->dir);
  g_free (f->uri);
}

/* Row @i: key k%08u in main.a, and an index entry i%08u → key in
 * main.a_idx_i. */
static void
put_row (Fixture    *f,
         guint       i,
         const char *value)
{
  char key[16], index_key[16];

  g_snprintf (key, sizeof key, "k%08u", i);
  g_snprintf (index_key, sizeof index_key, "i%08u", i);
  qstore_coordinator_put (f->coord, f->a, (const guint8 *) key, strlen (key),
                          (const guint8 *) value, strlen (value));
  qstore_coordinator_put (f->coord, f->ai, (const guint8 *) index_key, strlen (index_key),
                          (const guint8 *) key, strlen (key));
}

/* Key @i as the transaction sees it, written out or not (a lending read
 * agreeing). */
static char *
cget (Fixture  *f,
      QStoreKV *kv,
      guint     i)
{
  g_autoptr(GBytes) value = NULL;
  char key[16];

  g_snprintf (key, sizeof key, "k%08u", i);
  value = test_coordinator_get (f->coord, kv, key);
  return value ? g_strndup (g_bytes_get_data (value, NULL), g_bytes_get_size (value)) : NULL;
}

/* Entries of @kv as the coordinator sees it: inside a transaction, the
 * merged view. The first key read is returned in *@first. */
static guint
ccount (Fixture   *f,
        QStoreKV  *kv,
        gboolean   reverse,
        char     **first)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(QStoreBounds) bounds = qstore_bounds_new ();
  g_autoptr(QStoreIter) iter = NULL;
  guint n = 0;

  qstore_bounds_set_reverse (bounds, reverse);
  iter = qstore_coordinator_iterate (f->coord, kv, bounds, &error);
  g_assert_no_error (error);
  while (qstore_iter_next (iter, &error))
    {
      if (n++ == 0 && first != NULL)
        {
          gsize len;
          const guint8 *key = qstore_iter_peek_key (iter, &len);

          *first = g_strndup ((const char *) key, len);
        }
    }
  g_assert_no_error (error);
  return n;
}

/* 50,000 rows (100,000 writes) in one transaction: the buffer stays under
 * the bound, the transaction reads all of them, nobody else any, and the
 * commit stores them all. */
static void
test_bounded (Fixture       *f,
              gconstpointer  data)
{
  const guint n = 50000;
  g_autoptr(GError) error = NULL;
  g_autofree char *first = NULL;
  g_autofree char *value = NULL;
  guint spills_before = qstore_coordinator_test_get_n_spills (f->coord);

  qstore_coordinator_begin (f->coord);
  for (guint i = 0; i < n; i++)
    put_row (f, i, "a row value of about forty bytes, or so");
  /* A delete and an overwrite of rows that went out long ago. */
  {
    char key[16];

    g_snprintf (key, sizeof key, "k%08u", 7);
    qstore_coordinator_delete (f->coord, f->a, (const guint8 *) key, strlen (key));
  }
  put_row (f, 8, "rewritten");

  if (f->spills)
    {
      g_assert_cmpuint (qstore_coordinator_test_get_buffer_peak (f->coord), <, BUFFER_BOUND);
      g_assert_cmpuint (qstore_coordinator_test_get_n_spills (f->coord) - spills_before, >=,
                        2 * n / QSTORE_COORDINATOR_SPILL_WRITES - 1);
    }
  else
    {
      /* The counter measures the buffer: without write-outs it holds the
       * whole transaction. */
      g_assert_cmpuint (qstore_coordinator_test_get_buffer_peak (f->coord), >, 10 * BUFFER_BOUND);
      g_assert_cmpuint (qstore_coordinator_test_get_n_spills (f->coord), ==, spills_before);
    }

  value = cget (f, f->a, 0);
  g_assert_cmpstr (value, ==, "a row value of about forty bytes, or so");
  g_clear_pointer (&value, g_free);
  value = cget (f, f->a, 7);
  g_assert_null (value);
  value = cget (f, f->a, 8);
  g_assert_cmpstr (value, ==, "rewritten");
  g_clear_pointer (&value, g_free);
  g_assert_cmpuint (ccount (f, f->a, FALSE, &first), ==, n - 1);
  g_assert_cmpstr (first, ==, "k00000000");
  g_clear_pointer (&first, g_free);
  g_assert_cmpuint (ccount (f, f->a, TRUE, &first), ==, n - 1);
  g_assert_cmpstr (first, ==, "k00049999");
  g_assert_cmpuint (ccount (f, f->ai, FALSE, NULL), ==, n);

  /* Nobody else sees any of it. */
  g_assert_cmpuint (test_kv_count (f->a), ==, 0);
  g_assert_cmpuint (test_kv_count (f->ai), ==, 0);

  g_assert_true (qstore_coordinator_commit (f->coord, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (test_kv_count (f->a), ==, n - 1);
  g_assert_cmpuint (test_kv_count (f->ai), ==, n);
  g_assert_cmpuint (qstore_coordinator_get_last_tx_id (f->coord), ==, 1);

  /* The provider takes writes again, and a reopen reads the same. */
  if (!(qstore_provider_get_capabilities (f->provider) & QSTORE_CAPABILITY_PERSISTENT))
    return;
  close_all (f);
  open_all (f);
  g_assert_cmpuint (test_kv_count (f->a), ==, n - 1);
  value = cget (f, f->a, 8);
  g_assert_cmpstr (value, ==, "rewritten");
  g_assert_cmpuint (qstore_coordinator_get_last_tx_id (f->coord), ==, 1);
}

/* A rollback, and a rollback to the beginning, drop what went out. */
static void
test_rollback (Fixture       *f,
               gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *value = NULL;

  qstore_coordinator_begin (f->coord);
  for (guint i = 0; i < 5000; i++)
    put_row (f, i, "v");
  qstore_coordinator_rollback (f->coord);
  g_assert_cmpuint (test_kv_count (f->a), ==, 0);

  qstore_coordinator_begin (f->coord);
  for (guint i = 0; i < 5000; i++)
    put_row (f, i, "v");
  qstore_coordinator_rollback_to (f->coord, -1);
  g_assert_cmpuint (ccount (f, f->a, FALSE, NULL), ==, 0);
  value = cget (f, f->a, 1);
  g_assert_null (value);
  for (guint i = 10000; i < 12000; i++)
    put_row (f, i, "w");
  g_assert_true (qstore_coordinator_commit (f->coord, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (test_kv_count (f->a), ==, 2000);
  g_assert_cmpuint (qstore_coordinator_get_last_tx_id (f->coord), ==, 1);
}

/* Writes under a savepoint stay in the buffer until it is released, so a
 * rollback to it undoes exactly them; an iterator holds the buffer too. */
static void
test_savepoint_and_iterator (Fixture       *f,
                             gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  guint spills;

  qstore_coordinator_begin (f->coord);
  for (guint i = 0; i < 3000; i++)
    put_row (f, i, "before");
  spills = qstore_coordinator_test_get_n_spills (f->coord);
  g_assert_true (spills > 0 || !f->spills);

  qstore_coordinator_savepoint (f->coord, 0);
  for (guint i = 3000; i < 6000; i++)
    put_row (f, i, "under the savepoint");
  g_assert_cmpuint (qstore_coordinator_test_get_n_spills (f->coord), ==, spills);
  qstore_coordinator_rollback_to (f->coord, 0);
  g_assert_cmpuint (ccount (f, f->a, FALSE, NULL), ==, 3000);
  for (guint i = 3000; i < 4000; i++)
    put_row (f, i, "kept");
  qstore_coordinator_release (f->coord, 0);
  /* Released: what the savepoint kept may go out now. */
  if (f->spills)
    g_assert_cmpuint (qstore_coordinator_test_get_n_spills (f->coord), >, spills);

  {
    g_autoptr(QStoreIter) iter = qstore_coordinator_iterate (f->coord, f->a, NULL, &error);

    g_assert_no_error (error);
    g_assert_true (qstore_iter_next (iter, &error));
    spills = qstore_coordinator_test_get_n_spills (f->coord);
    for (guint i = 4000; i < 7000; i++)
      put_row (f, i, "under an iterator");
    g_assert_cmpuint (qstore_coordinator_test_get_n_spills (f->coord), ==, spills);
    g_assert_true (qstore_iter_next (iter, &error));
    g_assert_no_error (error);
  }
  put_row (f, 7000, "after");
  if (f->spills)
    g_assert_cmpuint (qstore_coordinator_test_get_n_spills (f->coord), >, spills);

  g_assert_true (qstore_coordinator_commit (f->coord, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (test_kv_count (f->a), ==, 7001);
}

/* At the default look interval the buffer goes out once it holds the
 * step's bytes, not before; what went out is read back from the
 * provider's write transaction (a delete too), what did not from
 * committed data, nobody else sees it, and a rollback after it leaves
 * nothing. */
static void
test_step (Fixture       *f,
           gconstpointer  data)
{
  const gsize step = 512 * 1024;
  g_autoptr(GError) error = NULL;
  g_autofree char *value = NULL;
  guint spills = qstore_coordinator_test_get_n_spills (f->coord);
  guint i = 0;

  g_assert_true (qstore_coordinator_set_write_out_step (f->coord, step, &error));
  g_assert_no_error (error);
  qstore_coordinator_begin (f->coord);
  put_row (f, 900000, "committed");
  put_row (f, 900001, "committed, then deleted");
  g_assert_true (qstore_coordinator_commit (f->coord, &error));
  g_assert_no_error (error);

  qstore_coordinator_begin (f->coord);
  {
    char key[16];

    g_snprintf (key, sizeof key, "k%08u", 900001);
    qstore_coordinator_delete (f->coord, f->a, (const guint8 *) key, strlen (key));
  }
  while (qstore_coordinator_test_get_buffer_peak (f->coord) < step / 2 && i < 100000)
    put_row (f, i++, "a row value of about forty bytes, or so");
  /* The buffer was looked at, and kept. */
  g_assert_cmpuint (i, <, 100000);
  g_assert_cmpuint (2 * i, >, 2 * QSTORE_COORDINATOR_SPILL_WRITES);
  g_assert_cmpuint (qstore_coordinator_test_get_n_spills (f->coord), ==, spills);

  for (guint end = i + 20000; i < end; i++)
    put_row (f, i, "a row value of about forty bytes, or so");
  if (!f->spills)
    {
      g_assert_cmpuint (qstore_coordinator_test_get_n_spills (f->coord), ==, spills);
      qstore_coordinator_rollback (f->coord);
      return;
    }
  g_assert_cmpuint (qstore_coordinator_test_get_n_spills (f->coord) - spills, >=, 2);
  /* About a step, give or take the arena's last block. */
  g_assert_cmpuint (qstore_coordinator_test_get_buffer_peak (f->coord), <, 4 * step);

  /* Row 0 and the delete went out first: the buffer has them no more. */
  value = cget (f, f->a, 0);
  g_assert_cmpstr (value, ==, "a row value of about forty bytes, or so");
  g_clear_pointer (&value, g_free);
  value = cget (f, f->a, 900001);
  g_assert_null (value);
  value = cget (f, f->a, 900000);
  g_assert_cmpstr (value, ==, "committed");
  g_clear_pointer (&value, g_free);
  value = cget (f, f->a, 900002);
  g_assert_null (value);
  g_assert_cmpuint (ccount (f, f->a, FALSE, NULL), ==, i + 1);
  g_assert_cmpuint (test_kv_count (f->a), ==, 2);

  qstore_coordinator_rollback (f->coord);
  g_assert_cmpuint (test_kv_count (f->a), ==, 2);
  g_assert_cmpuint (test_kv_count (f->ai), ==, 2);

  /* The write transaction is over: the provider takes writes again. */
  qstore_coordinator_begin (f->coord);
  put_row (f, 1, "after the rollback");
  g_assert_true (qstore_coordinator_commit (f->coord, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (test_kv_count (f->a), ==, 3);
  if (!(qstore_provider_get_capabilities (f->provider) & QSTORE_CAPABILITY_PERSISTENT))
    return;
  close_all (f);
  open_all (f);
  g_assert_cmpuint (test_kv_count (f->a), ==, 3);
  g_assert_cmpuint (test_kv_count (f->ai), ==, 3);
}

/* The write-out step as a setting: its default, its range, a refusal
 * that changes nothing, and a change inside an open transaction that
 * takes effect at the next look at the buffer. */
static void
test_setting (Fixture       *f,
              gconstpointer  data)
{
  const guint64 refused[] = {
    0, 1, QSTORE_COORDINATOR_SPILL_BYTES_MIN - 1, QSTORE_COORDINATOR_SPILL_BYTES_MAX + 1,
    G_MAXUINT64,
  };
  guint spills;
  guint i = 0;

  /* The fixture's step is the tests' own, below the range: start over. */
  close_all (f);
  open_with_step (f, FALSE);
  g_assert_cmpuint (qstore_coordinator_get_write_out_step (f->coord), ==, 64 * 1024 * 1024);

  for (guint k = 0; k < G_N_ELEMENTS (refused); k++)
    {
      g_autoptr(GError) error = NULL;

      g_assert_false (qstore_coordinator_set_write_out_step (f->coord, refused[k], &error));
      g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT);
      g_assert_nonnull (strstr (error->message, "write-out step"));
      g_assert_nonnull (strstr (error->message, "65536 bytes"));
      g_assert_nonnull (strstr (error->message, "1099511627776 bytes"));
      g_assert_cmpuint (qstore_coordinator_get_write_out_step (f->coord), ==, 64 * 1024 * 1024);
    }
  g_assert_true (qstore_coordinator_set_write_out_step (f->coord, QSTORE_COORDINATOR_SPILL_BYTES_MAX,
                                                        NULL));
  g_assert_cmpuint (qstore_coordinator_get_write_out_step (f->coord), ==, G_GUINT64_CONSTANT (1) << 40);
  g_assert_true (qstore_coordinator_set_write_out_step (f->coord, 64 * 1024 * 1024, NULL));

  /* Some megabytes stay in the buffer under the default step... */
  qstore_coordinator_begin (f->coord);
  for (; i < 20000; i++)
    put_row (f, i, "a row value of about forty bytes, or so");
  g_assert_cmpuint (qstore_coordinator_test_get_n_spills (f->coord), ==, 0);
  g_assert_cmpuint (qstore_coordinator_test_get_buffer_peak (f->coord), >, 4 * BUFFER_BOUND);

  /* ...and go out at the next look once the step is the smallest. */
  g_assert_true (qstore_coordinator_set_write_out_step (f->coord, QSTORE_COORDINATOR_SPILL_BYTES_MIN,
                                                        NULL));
  g_assert_cmpuint (qstore_coordinator_get_write_out_step (f->coord), ==, 65536);
  for (guint end = i + QSTORE_COORDINATOR_SPILL_WRITES / 2; i < end; i++)
    put_row (f, i, "a row value of about forty bytes, or so");
  spills = qstore_coordinator_test_get_n_spills (f->coord);
  if (f->spills)
    g_assert_cmpuint (spills, ==, 1);
  else
    g_assert_cmpuint (spills, ==, 0);
  g_assert_cmpuint (ccount (f, f->a, FALSE, NULL), ==, i);
  g_assert_true (qstore_coordinator_commit (f->coord, NULL));
  g_assert_cmpuint (test_kv_count (f->a), ==, i);
}

/* A commit of more writes than QSTORE_COORDINATOR_STREAM_OPS, with
 * nothing written out before, goes through a write transaction chunk by
 * chunk (on a remote provider, as one write): all of it lands, or, when a
 * chunk fails or a key comes too long after chunks went, none of it. */
static void
test_large_commit (Fixture       *f,
                   gconstpointer  data)
{
  const guint rows = QSTORE_COORDINATOR_STREAM_OPS;   /* two writes each */
  gsize max_key = qstore_provider_get_max_key_length (f->provider);
  g_autoptr(GError) error = NULL;
  guint64 last_tx;

  if (!f->spills)
    {
      g_test_skip ("without write transactions a commit goes in one batch");
      return;
    }
  close_all (f);
  open_with_step (f, FALSE);
  last_tx = qstore_coordinator_get_last_tx_id (f->coord);

  /* A write fails in the second chunk. */
  qstore_coordinator_begin (f->coord);
  for (guint i = 0; i < rows; i++)
    put_row (f, i, "failed");
  _qstore_fault_arm (QSTORE_FAULT_WRITE_OP, QSTORE_COORDINATOR_STREAM_OPS + 10);
  g_assert_false (qstore_coordinator_commit (f->coord, &error));
  _qstore_fault_disarm_all ();
  g_assert_nonnull (error);
  g_clear_error (&error);
  g_assert_cmpuint (test_kv_count (f->a), ==, 0);
  g_assert_cmpuint (test_kv_count (f->ai), ==, 0);
  g_assert_cmpuint (qstore_coordinator_get_last_tx_id (f->coord), ==, last_tx);

  /* A key too long for the provider sorts after the first chunk. */
  if (max_key != 0)
    {
      g_autofree char *long_key = g_strnfill (max_key + 1, 'z');

      qstore_coordinator_begin (f->coord);
      for (guint i = 0; i < rows; i++)
        put_row (f, i, "refused");
      qstore_coordinator_put (f->coord, f->a, (const guint8 *) long_key, max_key + 1,
                              (const guint8 *) "v", 1);
      g_assert_false (qstore_coordinator_commit (f->coord, &error));
      g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT);
      g_assert_nonnull (strstr (error->message, "main.a"));
      g_clear_error (&error);
      g_assert_cmpuint (test_kv_count (f->a), ==, 0);
      g_assert_cmpuint (test_kv_count (f->ai), ==, 0);
    }

  qstore_coordinator_begin (f->coord);
  for (guint i = 0; i < rows; i++)
    put_row (f, i, "committed");
  g_assert_true (qstore_coordinator_commit (f->coord, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (qstore_coordinator_test_get_n_spills (f->coord), ==, 0);
  g_assert_cmpuint (test_kv_count (f->a), ==, rows);
  g_assert_cmpuint (test_kv_count (f->ai), ==, rows);
  g_assert_cmpuint (qstore_coordinator_get_last_tx_id (f->coord), ==, last_tx + 1);
  {
    g_autofree char *last = cget (f, f->a, rows - 1);

    g_assert_cmpstr (last, ==, "committed");
  }

  /* It all survives a reopen. */
  close_all (f);
  open_all (f);
  g_assert_cmpuint (test_kv_count (f->a), ==, rows);
  g_assert_cmpuint (qstore_coordinator_get_last_tx_id (f->coord), ==, last_tx + 1);
}

/* Rows of each generation the commit crash child writes: enough writes
 * (a row and an index entry each) that every commit goes through a write
 * transaction in chunks, where the provider is not remote. */
#define CRASH_ROWS (QSTORE_COORDINATOR_STREAM_OPS * 3 / 4)

/* The child of /crash-commit: commits generation after generation of the
 * same rows, each in one transaction, and prints the generation after
 * each commit returned. */
static int
crash_commit_child (const char *uri)
{
  g_autoptr(GError) error = NULL;
  Fixture f = { NULL, (char *) uri, };

  open_with_step (&f, FALSE);
  for (guint gen = qstore_coordinator_get_last_tx_id (f.coord) + 1;; gen++)
    {
      g_autofree char *value = g_strdup_printf ("g%u", gen);

      qstore_coordinator_begin (f.coord);
      for (guint i = 0; i < CRASH_ROWS; i++)
        put_row (&f, i, value);
      if (!qstore_coordinator_commit (f.coord, &error))
        {
          g_printerr ("crash child: %s\n", error->message);
          return 1;
        }
      g_print ("%u\n", gen);
      fflush (stdout);
    }
}

/* Every value of @kv, which must all be one: returns it. */
static char *
single_value (QStoreKV *kv)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(QStoreIter) iter = qstore_kv_iterate (kv, NULL, &error);
  char *value = NULL;
  guint n = 0;

  g_assert_no_error (error);
  while (qstore_iter_next (iter, &error))
    {
      gsize len;
      const guint8 *data = qstore_iter_peek_value (iter, &len);

      if (value == NULL)
        value = g_strndup ((const char *) data, len);
      else if (strlen (value) != len || memcmp (value, data, len) != 0)
        g_error ("Rows of two generations after a crash: %s and %.*s", value, (int) len, data);
      n++;
    }
  g_assert_no_error (error);
  g_assert_cmpuint (n, ==, CRASH_ROWS);
  return value;
}

/* A writer killed in the middle of large commits: after a reopen every
 * commit it reported is there, and no commit is there in part. */
static void
test_crash_commit (Fixture       *f,
                   gconstpointer  data)
{
  g_autoptr(GRand) rand = g_rand_new_with_seed (test_seed ());
  guint iterations = test_env_count ("QSTORE_CRASH_ITERATIONS", 20);
  guint64 reported = 0;
  guint landed_unreported = 0;
  /* A server notices a killed writer's session end, and lets its lock go,
   * only a moment later. */
  g_autofree char *waiting = g_strconcat (f->uri, strchr (f->uri, '?') ? "&" : "?",
                                          "wait_ms=20000", NULL);
  char *uri = f->uri;

  if (!f->spills || !(qstore_provider_get_capabilities (f->provider) & QSTORE_CAPABILITY_PERSISTENT))
    {
      g_test_skip ("commits go in one batch on this provider");
      return;
    }
  /* Generation 1, so that every later one replaces whole rows. */
  close_all (f);
  open_with_step (f, FALSE);
  qstore_coordinator_begin (f->coord);
  for (guint i = 0; i < CRASH_ROWS; i++)
    put_row (f, i, "g1");
  g_assert_true (qstore_coordinator_commit (f->coord, NULL));
  close_all (f);

  for (guint i = 0; i < iterations; i++)
    {
      const char *argv[] = { self_path, "--crash-commit-child", waiting, NULL };
      g_autofree char *value = NULL;
      guint64 before = reported, stored;

      reported = test_kill_reporting_child (argv, g_rand_int_range (rand, 1, 60), reported);
      g_assert_cmpuint (reported, >, before);

      f->uri = waiting;
      open_with_step (f, FALSE);
      f->uri = uri;
      stored = qstore_coordinator_get_last_tx_id (f->coord);
      value = single_value (f->a);
      g_assert_cmpuint (g_ascii_strtoull (value + 1, NULL, 10), ==, stored);
      g_assert_cmpuint (test_kv_count (f->ai), ==, CRASH_ROWS);
      /* The one commit under way may have landed without its report. */
      g_assert_cmpuint (stored, >=, reported);
      g_assert_cmpuint (stored, <=, reported + 1);
      landed_unreported += stored > reported;
      reported = stored;
      close_all (f);
    }
  open_all (f);
  g_test_message ("%u crashes during commits of %u writes; %" G_GUINT64_FORMAT " commits, "
                  "%u of them landed unreported", iterations, CRASH_ROWS * 2, reported,
                  landed_unreported);
}

/* A writer killed with a large transaction open leaves none of it. */
static void
test_crash (Fixture       *f,
            gconstpointer  data)
{
  const char *uri = g_getenv ("QSTORE_SPILL_CRASH_URI");

  if (g_test_subprocess ())
    {
      g_autoptr(QStoreProvider) provider = NULL;
      g_autoptr(QStoreCoordinator) coord = NULL;
      g_autoptr(QStoreKV) a = NULL;
      g_autoptr(GError) error = NULL;

      /* The kill below skips the teardown, and the store is the parent's:
       * the directory the fixture made here goes now. */
      close_all (f);
      test_remove_tree (f->dir);
      provider = qstore_provider_new_for_uri (uri, QSTORE_OPEN_NONE, &error);
      g_assert_no_error (error);
      coord = qstore_coordinator_new (provider, &error);
      g_assert_no_error (error);
      qstore_coordinator_test_set_spill_bytes (coord, 0);
      a = qstore_provider_open_store (provider, "main.a", &error);
      g_assert_no_error (error);
      qstore_coordinator_begin (coord);
      for (guint i = 0; i < 20000; i++)
        {
          char key[16];

          g_snprintf (key, sizeof key, "k%08u", i);
          qstore_coordinator_put (coord, a, (const guint8 *) key, strlen (key),
                                  (const guint8 *) "lost", 4);
        }
      g_assert_cmpuint (qstore_coordinator_test_get_n_spills (coord), >, 0);
      raise (SIGKILL);
      return;
    }

  if (!f->spills || !(qstore_provider_get_capabilities (f->provider) & QSTORE_CAPABILITY_PERSISTENT))
    {
      g_test_skip ("nothing is written out on this provider");
      return;
    }
  qstore_coordinator_begin (f->coord);
  put_row (f, 1, "committed");
  g_assert_true (qstore_coordinator_commit (f->coord, NULL));
  close_all (f);

  g_setenv ("QSTORE_SPILL_CRASH_URI", f->uri, TRUE);
  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_INHERIT_STDERR);
  g_unsetenv ("QSTORE_SPILL_CRASH_URI");
  g_test_trap_assert_failed ();

  open_all (f);
  g_assert_cmpuint (test_kv_count (f->a), ==, 1);
  g_assert_cmpuint (qstore_coordinator_get_last_tx_id (f->coord), ==, 1);
  qstore_coordinator_begin (f->coord);
  put_row (f, 2, "after the crash");
  g_assert_true (qstore_coordinator_commit (f->coord, NULL));
  g_assert_cmpuint (test_kv_count (f->a), ==, 2);
}

int
main (int   argc,
      char *argv[])
{
  g_autofree char *prefix = NULL;

  self_path = argv[0];
  if (argc == 3 && g_str_equal (argv[1], "--crash-commit-child"))
    return crash_commit_child (argv[2]);
  g_test_init (&argc, &argv, NULL);
  prefix = g_strdup_printf ("/coordinator-spill/%s", test_provider_spec ());

#define ADD(name, func) G_STMT_START { \
    g_autofree char *path_ = g_strconcat (prefix, "/", name, NULL); \
    g_test_add (path_, Fixture, NULL, fixture_setup, func, fixture_teardown); \
  } G_STMT_END
  ADD ("bounded", test_bounded);
  ADD ("rollback", test_rollback);
  ADD ("savepoint-and-iterator", test_savepoint_and_iterator);
  ADD ("step", test_step);
  ADD ("setting", test_setting);
  ADD ("large-commit", test_large_commit);
  ADD ("crash", test_crash);
  ADD ("crash-commit", test_crash_commit);
#undef ADD

  return g_test_run ();
}
