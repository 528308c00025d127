/* test-conformance.c: every provider behaves the same
 *
 * Built as qstore-conformance, which this tree's tests run and which is
 * installed for plugins built elsewhere. Run with --uri URI, or with
 * QSTORE_TEST_PROVIDER set to a provider name, optionally followed by URI
 * options (`lmdb`, `sqlite?atomic=0`, …).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <string.h>

#include <qstore.h>

#include "qstore-fault-private.h"
#include "conformance.h"

/* Tests */

static void
test_registry (void)
{
  g_auto(GStrv) names = qstore_list_providers ();
  g_autofree char *name = test_provider_name ();
  g_autoptr(GError) error = NULL;
  QStoreCapabilities caps = 0;

  g_assert_true (g_strv_contains ((const char * const *) names, "memory"));
  g_assert_true (g_strv_contains ((const char * const *) names, "lmdb"));
  g_assert_true (g_strv_contains ((const char * const *) names, "sqlite"));

  g_assert_true (qstore_lookup_provider_capabilities (name, &caps, &error));
  g_assert_no_error (error);
  if (g_str_equal (name, "memory"))
    g_assert_cmpint (caps, ==, QSTORE_CAPABILITY_ATOMIC_BATCH | QSTORE_CAPABILITY_SNAPSHOTS);
  else
    g_assert_cmpint (caps, ==, QSTORE_CAPABILITY_PERSISTENT | QSTORE_CAPABILITY_ATOMIC_BATCH |
                               QSTORE_CAPABILITY_SNAPSHOTS | QSTORE_CAPABILITY_MULTI_PROCESS |
                               QSTORE_CAPABILITY_WRITER_LOCK | QSTORE_CAPABILITY_WRITE_TXN |
                               (g_str_equal (name, "postgres") ? QSTORE_CAPABILITY_REMOTE : 0));

  g_assert_false (qstore_lookup_provider_capabilities ("no-such-provider", &caps, &error));
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_NOT_FOUND);
  /* The message lists what exists. */
  g_assert_nonnull (strstr (error->message, "lmdb"));
  g_assert_nonnull (strstr (error->message, "memory"));
  g_assert_nonnull (strstr (error->message, "sqlite"));
}

static void
test_open (Fixture       *f,
           gconstpointer  data)
{
  g_autofree char *name = test_provider_name ();

  g_assert_cmpstr (qstore_provider_get_name (f->provider), ==, name);
  g_assert_false (qstore_provider_is_closed (f->provider));
  if (!test_provider_atomic ())
    {
      g_assert_false (f->caps & QSTORE_CAPABILITY_ATOMIC_BATCH);
      g_assert_null (qstore_provider_begin_atomic_batch (f->provider));
    }
  else
    g_assert_true (f->caps & QSTORE_CAPABILITY_ATOMIC_BATCH);
}

static void
test_point_ops (Fixture       *f,
                gconstpointer  data)
{
  g_autoptr(QStoreKV) kv = store (f, "main.t");
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) missing = NULL;

  assert_value (kv, "k", NULL);
  put (kv, "k", "v1");
  assert_value (kv, "k", "v1");
  put (kv, "k", "v2");
  assert_value (kv, "k", "v2");
  del (kv, "k");
  assert_value (kv, "k", NULL);
  /* Deleting what is absent is fine. */
  del (kv, "k");
  del (kv, "never-there");

  /* Empty values are values. */
  put (kv, "empty", "");
  assert_value (kv, "empty", "");

  /* A value larger than a page (kept apart by some providers) reads back
   * whole, then a small one under the same key. */
  {
    g_autofree char *large = g_strnfill (100000, 'L');

    put (kv, "large", large);
    assert_value (kv, "large", large);
    put (kv, "large", "small again");
    assert_value (kv, "large", "small again");
  }

  /* Binary keys and values keep every byte. */
  {
    const guint8 key[] = { 0x00, 0xff, 0x01, 0x00 };
    const guint8 value[] = { 0x00, 0x00, 0x7f, 0x80, 0xff };
    g_autoptr(GBytes) got = NULL;

    qstore_kv_put (kv, key, sizeof key, value, sizeof value, QSTORE_WRITE_SYNC, &error);
    g_assert_no_error (error);
    got = qstore_kv_get (kv, key, sizeof key, &error);
    g_assert_no_error (error);
    g_assert_nonnull (got);
    g_assert_cmpmem (g_bytes_get_data (got, NULL), g_bytes_get_size (got), value, sizeof value);
    /* A key that is a prefix of a stored key is a different key. */
    g_assert_null (qstore_kv_get (kv, key, 3, &error));
    g_assert_no_error (error);
  }

  /* Empty keys are refused; reading one finds nothing. */
  g_assert_false (qstore_kv_put (kv, (const guint8 *) "", 0, (const guint8 *) "v", 1, 0, &error));
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  missing = qstore_kv_get (kv, (const guint8 *) "", 0, &error);
  g_assert_no_error (error);
  g_assert_null (missing);

  /* Stores are independent. */
  {
    g_autoptr(QStoreKV) other = store (f, "main.u");

    put (other, "k", "other");
    assert_value (kv, "k", NULL);
    assert_value (other, "k", "other");
  }
}

static void
test_key_limit (Fixture       *f,
                gconstpointer  data)
{
  g_autoptr(QStoreKV) kv = store (f, "main.t");
  g_autoptr(GError) error = NULL;
  gsize max = qstore_provider_get_max_key_length (f->provider);
  g_autofree guint8 *big = NULL;
  gsize len = max ? max : 4096;

  big = g_malloc (len + 1);
  memset (big, 'k', len + 1);

  /* The longest allowed key works... */
  g_assert_true (qstore_kv_put (kv, big, len, (const guint8 *) "v", 1, 0, &error));
  g_assert_no_error (error);
  if (max == 0)
    return;

  /* ...one byte more is refused with a clear error, and nothing is written. */
  g_assert_false (qstore_kv_put (kv, big, len + 1, (const guint8 *) "v", 1, 0, &error));
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "main.t"));
  g_clear_error (&error);
  g_assert_null (qstore_kv_get (kv, big, len + 1, &error));
  g_assert_no_error (error);
}

/* The keys the bounds test stores, in key order. */
static const char *bound_keys[] = { "a", "ab", "abc", "b", "ba", "c", "d", NULL };
/* Probe keys: stored ones and ones that fall between. */
static const char *probe_keys[] = { "", "a", "aa", "abc", "abd", "b", "bz", "d", "e", NULL };

typedef enum { BOUND_NONE, BOUND_INCLUSIVE, BOUND_EXCLUSIVE } BoundKind;

static char *
expected_scan (BoundKind   lower_kind,
               const char *lower,
               BoundKind   upper_kind,
               const char *upper,
               gboolean    reverse,
               gint64      limit)
{
  g_autoptr(GPtrArray) hits = g_ptr_array_new ();
  GString *out = g_string_new (NULL);

  for (guint i = 0; bound_keys[i] != NULL; i++)
    {
      int lc = lower_kind == BOUND_NONE ? 1 : strcmp (bound_keys[i], lower);
      int uc = upper_kind == BOUND_NONE ? -1 : strcmp (bound_keys[i], upper);

      if (lower_kind == BOUND_INCLUSIVE ? lc < 0 : lc <= 0)
        continue;
      if (upper_kind == BOUND_INCLUSIVE ? uc > 0 : uc >= 0)
        continue;
      g_ptr_array_add (hits, (gpointer) bound_keys[i]);
    }
  for (guint i = 0; i < hits->len && (limit < 0 || (gint64) i < limit); i++)
    {
      guint at = reverse ? hits->len - 1 - i : i;

      if (i > 0)
        g_string_append_c (out, '|');
      g_string_append (out, hits->pdata[at]);
    }
  return g_string_free (out, FALSE);
}

static void
set_bound (QStoreBounds *bounds,
           gboolean      lower,
           BoundKind     kind,
           const char   *key)
{
  const guint8 *k = (const guint8 *) key;

  if (kind == BOUND_NONE)
    return;
  if (lower)
    (kind == BOUND_INCLUSIVE ? qstore_bounds_set_gte : qstore_bounds_set_gt) (bounds, k, strlen (key));
  else
    (kind == BOUND_INCLUSIVE ? qstore_bounds_set_lte : qstore_bounds_set_lt) (bounds, k, strlen (key));
}

static gboolean provider_is_in_tree (const char *name);

/* Moves @iter (NULL: none) to @bounds and reads what it gives; every other
 * time it reads one entry and seeks again first, as a program that walks
 * many ranges with one iterator may leave one halfway. An iterator that
 * cannot seek is dropped, which only a provider from outside the tree may
 * do. */
static char *
seek_and_collect (QStoreIter         **iter,
                  const QStoreBounds  *bounds,
                  guint                round)
{
  g_autoptr(GError) error = NULL;

  if (*iter == NULL)
    return NULL;
  if (!qstore_iter_seek (*iter, bounds, &error))
    {
      g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_UNSUPPORTED);
      g_assert_false (provider_is_in_tree (test_provider_name ()));
      g_test_message ("%s: %s", G_OBJECT_TYPE_NAME (*iter), error->message);
      g_clear_object (iter);
      return NULL;
    }
  if (round % 2 == 1)
    {
      qstore_iter_next (*iter, &error);
      g_assert_no_error (error);
      g_assert_true (qstore_iter_seek (*iter, bounds, &error));
      g_assert_no_error (error);
    }
  return collect (*iter);
}

static void
test_bounds (Fixture       *f,
             gconstpointer  data)
{
  g_autoptr(QStoreKV) kv = store (f, "main.t");
  g_autoptr(QStoreKV) neighbour = store (f, "main.s");
  const gint64 limits[] = { -1 /* unset */, 0, 1, 3, 100 };
  g_autoptr(QStoreSnapshot) snapshot = NULL;
  g_autoptr(QStoreIter) seeker = NULL;
  g_autoptr(QStoreIter) snapshot_seeker = NULL;
  g_autoptr(GError) error = NULL;
  guint checked = 0;

  for (guint i = 0; bound_keys[i] != NULL; i++)
    put (kv, bound_keys[i], "v");
  /* Entries in other stores never leak into a scan. */
  put (neighbour, "aa", "x");
  put (neighbour, "zz", "x");

  if (f->caps & QSTORE_CAPABILITY_SNAPSHOTS)
    {
      snapshot = qstore_provider_begin_snapshot (f->provider, &error);
      g_assert_no_error (error);
      snapshot_seeker = qstore_snapshot_iterate (snapshot, kv, NULL, &error);
      g_assert_no_error (error);
    }
  /* Each range is also walked by one iterator of each kind, sought to
   * it. */
  seeker = qstore_kv_iterate (kv, NULL, &error);
  g_assert_no_error (error);

  for (BoundKind lk = BOUND_NONE; lk <= BOUND_EXCLUSIVE; lk++)
    for (guint li = 0; probe_keys[li] != NULL; li++)
      for (BoundKind uk = BOUND_NONE; uk <= BOUND_EXCLUSIVE; uk++)
        for (guint ui = 0; probe_keys[ui] != NULL; ui++)
          for (int reverse = 0; reverse <= 1; reverse++)
            for (guint l = 0; l < G_N_ELEMENTS (limits); l++)
              {
                g_autoptr(QStoreBounds) bounds = qstore_bounds_new ();
                g_autofree char *expected = NULL;
                g_autofree char *got = NULL;

                /* A missing bound only needs checking once. */
                if ((lk == BOUND_NONE && li > 0) || (uk == BOUND_NONE && ui > 0))
                  continue;

                set_bound (bounds, TRUE, lk, probe_keys[li]);
                set_bound (bounds, FALSE, uk, probe_keys[ui]);
                qstore_bounds_set_reverse (bounds, reverse);
                if (limits[l] >= 0)
                  qstore_bounds_set_limit (bounds, limits[l]);

                expected = expected_scan (lk, probe_keys[li], uk, probe_keys[ui], reverse, limits[l]);
                got = scan (kv, bounds);
                if (g_strcmp0 (expected, got) != 0)
                  g_error ("lower %d “%s”, upper %d “%s”, reverse %d, limit %" G_GINT64_FORMAT
                           ": expected “%s”, got “%s”", lk, probe_keys[li], uk,
                           probe_keys[ui], reverse, limits[l], expected, got);

                if (snapshot != NULL)
                  {
                    g_autoptr(QStoreIter) iter = qstore_snapshot_iterate (snapshot, kv, bounds, &error);
                    g_autofree char *snap_got = NULL;

                    g_assert_no_error (error);
                    snap_got = collect (iter);
                    g_assert_cmpstr (snap_got, ==, expected);
                  }
                for (guint s = 0; s < 2; s++)
                  {
                    g_autofree char *sought = seek_and_collect (s == 0 ? &seeker : &snapshot_seeker,
                                                                bounds, checked);

                    if (sought != NULL && g_strcmp0 (expected, sought) != 0)
                      g_error ("after a seek to lower %d “%s”, upper %d “%s”, reverse %d, "
                               "limit %" G_GINT64_FORMAT ": expected “%s”, got “%s”", lk,
                               probe_keys[li], uk, probe_keys[ui], reverse, limits[l],
                               expected, sought);
                  }
                checked++;
              }
  g_test_message ("%u bound combinations checked", checked);
  g_assert_cmpuint (checked, >, 1000);

  /* A seek is refused a negative limit, as iterating is. */
  if (seeker != NULL)
    {
      g_autoptr(QStoreBounds) negative = qstore_bounds_new ();

      qstore_bounds_set_limit (negative, -1);
      g_assert_false (qstore_iter_seek (seeker, negative, &error));
      g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT);
    }
}

static void
test_negative_limit (Fixture       *f,
                     gconstpointer  data)
{
  g_autoptr(QStoreKV) kv = store (f, "main.t");
  g_autoptr(QStoreBounds) bounds = qstore_bounds_new ();
  g_autoptr(GError) error = NULL;
  g_autoptr(QStoreIter) iter = NULL;

  put (kv, "a", "1");
  qstore_bounds_set_limit (bounds, -1);
  iter = qstore_kv_iterate (kv, bounds, &error);
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT);
  g_assert_null (iter);
}

#define MANY 5000

static void
test_large_iteration (Fixture       *f,
                      gconstpointer  data)
{
  g_autoptr(QStoreKV) kv = store (f, "main.big");
  g_autoptr(QStoreBatch) batch = qstore_kv_new_batch (kv);
  g_autoptr(GError) error = NULL;

  for (guint i = 0; i < MANY; i++)
    {
      char key[16], value[32];

      g_snprintf (key, sizeof key, "%08u", i);
      g_snprintf (value, sizeof value, "value-%u", i);
      qstore_batch_put (batch, (const guint8 *) key, strlen (key),
                        (const guint8 *) value, strlen (value));
    }
  g_assert_cmpuint (qstore_batch_get_n_ops (batch), ==, MANY);
  g_assert_true (qstore_batch_write (batch, QSTORE_WRITE_SYNC, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (qstore_batch_get_n_ops (batch), ==, 0);

  for (int reverse = 0; reverse <= 1; reverse++)
    {
      g_autoptr(QStoreBounds) bounds = qstore_bounds_new ();
      g_autoptr(QStoreIter) iter = NULL;
      guint n = 0;

      qstore_bounds_set_reverse (bounds, reverse);
      iter = qstore_kv_iterate (kv, bounds, &error);
      g_assert_no_error (error);
      while (qstore_iter_next (iter, &error))
        {
          guint expected = reverse ? MANY - 1 - n : n;
          char key[16], value[32];
          g_autoptr(GBytes) k = qstore_iter_get_key (iter);
          g_autoptr(GBytes) v = qstore_iter_get_value (iter);

          g_snprintf (key, sizeof key, "%08u", expected);
          g_snprintf (value, sizeof value, "value-%u", expected);
          g_assert_cmpmem (g_bytes_get_data (k, NULL), g_bytes_get_size (k), key, strlen (key));
          g_assert_cmpmem (g_bytes_get_data (v, NULL), g_bytes_get_size (v), value, strlen (value));
          n++;
        }
      g_assert_no_error (error);
      g_assert_cmpuint (n, ==, MANY);
      /* An exhausted iterator stays exhausted. */
      g_assert_false (qstore_iter_next (iter, &error));
      g_assert_no_error (error);
    }

  /* Abandon an iteration early: what it held is released and writes go on. */
  for (guint round = 0; round < 50; round++)
    {
      g_autoptr(QStoreIter) iter = qstore_kv_iterate (kv, NULL, &error);

      g_assert_no_error (error);
      for (guint i = 0; i < 10; i++)
        g_assert_true (qstore_iter_next (iter, &error));
    }
  put (kv, "after", "abandoned");
  assert_value (kv, "after", "abandoned");
}

static void
test_iterator_consistency (Fixture       *f,
                           gconstpointer  data)
{
  g_autoptr(QStoreKV) kv = store (f, "main.t");
  g_autoptr(QStoreIter) iter = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *seen = NULL;

  put (kv, "a", "1");
  put (kv, "b", "2");
  iter = qstore_kv_iterate (kv, NULL, &error);
  g_assert_no_error (error);
  g_assert_true (qstore_iter_next (iter, &error));
  /* Writes made while an iterator is open are not seen by it. */
  put (kv, "c", "3");
  del (kv, "b");
  g_assert_true (qstore_iter_next (iter, &error));
  {
    g_autoptr(GBytes) k = qstore_iter_get_key (iter);

    g_assert_cmpmem (g_bytes_get_data (k, NULL), g_bytes_get_size (k), "b", 1);
  }
  g_assert_false (qstore_iter_next (iter, &error));
  g_assert_no_error (error);

  seen = scan (kv, NULL);
  g_assert_cmpstr (seen, ==, "a|c");
}

static void
test_batch (Fixture       *f,
            gconstpointer  data)
{
  g_autoptr(QStoreKV) kv = store (f, "main.t");
  g_autoptr(QStoreBatch) batch = qstore_kv_new_batch (kv);
  g_autoptr(GError) error = NULL;

  put (kv, "j", "old");
  put (kv, "gone", "old");
  qstore_batch_put (batch, (const guint8 *) "k", 1, (const guint8 *) "1", 1);
  qstore_batch_put (batch, (const guint8 *) "k", 1, (const guint8 *) "2", 1);
  qstore_batch_delete (batch, (const guint8 *) "j", 1);
  qstore_batch_put (batch, (const guint8 *) "j", 1, (const guint8 *) "3", 1);
  qstore_batch_put (batch, (const guint8 *) "x", 1, (const guint8 *) "4", 1);
  qstore_batch_delete (batch, (const guint8 *) "x", 1);
  qstore_batch_delete (batch, (const guint8 *) "gone", 4);
  g_assert_true (qstore_batch_get_store (batch) == kv);

  /* Nothing is visible before the write. */
  assert_value (kv, "k", NULL);
  g_assert_true (qstore_batch_write (batch, QSTORE_WRITE_NONE, &error));
  g_assert_no_error (error);

  assert_value (kv, "k", "2");
  assert_value (kv, "j", "3");
  assert_value (kv, "x", NULL);
  assert_value (kv, "gone", NULL);

  /* A failing batch changes nothing, keeps its ops and can be retried. */
  if (!conformance_faults_reach_provider (f))
    {
      g_test_skip ("the provider passes no qstore fault points: a write failing part-way "
                   "is not tested");
      return;
    }
  qstore_batch_put (batch, (const guint8 *) "k", 1, (const guint8 *) "new", 3);
  qstore_batch_put (batch, (const guint8 *) "m", 1, (const guint8 *) "new", 3);
  qstore_batch_put (batch, (const guint8 *) "n", 1, (const guint8 *) "new", 3);
  _qstore_fault_arm (QSTORE_FAULT_WRITE_OP, 1);
  g_assert_false (qstore_batch_write (batch, QSTORE_WRITE_SYNC, &error));
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_IO);
  g_clear_error (&error);
  assert_value (kv, "k", "2");
  assert_value (kv, "m", NULL);
  assert_value (kv, "n", NULL);
  g_assert_cmpuint (qstore_batch_get_n_ops (batch), ==, 3);
  g_assert_true (qstore_batch_write (batch, QSTORE_WRITE_SYNC, &error));
  g_assert_no_error (error);
  assert_value (kv, "k", "new");
  assert_value (kv, "n", "new");
}

static void
test_atomic_batch (Fixture       *f,
                   gconstpointer  data)
{
  g_autoptr(QStoreKV) a = store (f, "main.a");
  g_autoptr(QStoreKV) b = store (f, "main.b");
  g_autoptr(QStoreKV) c = store (f, "main.c");
  g_autoptr(QStoreAtomicBatch) batch = NULL;
  g_autoptr(GError) error = NULL;
  gboolean faults;

  put (a, "k", "a0");
  put (b, "k", "b0");
  put (c, "k", "c0");

  batch = qstore_provider_begin_atomic_batch (f->provider);
  if (!test_provider_atomic ())
    {
      /* Withheld: no batch, and a direct multi-store write is refused. */
      QStoreWriteOp ops[2] = {
        { a, QSTORE_WRITE_OP_PUT, (const guint8 *) "k", 1, (const guint8 *) "x", 1 },
        { b, QSTORE_WRITE_OP_PUT, (const guint8 *) "k", 1, (const guint8 *) "x", 1 },
      };

      g_assert_null (batch);
      g_assert_false (qstore_provider_write (f->provider, ops, 2, 0, &error));
      g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_UNSUPPORTED);
      assert_value (a, "k", "a0");
      assert_value (b, "k", "b0");
      return;
    }
  g_assert_nonnull (batch);

  faults = conformance_faults_reach_provider (f);
  if (!faults)
    g_test_message ("the provider passes no qstore fault points: a commit failing part-way "
                    "is not tested");
  for (guint fail_at = 0; faults && fail_at < 6; fail_at++)
    {
      qstore_atomic_batch_put (batch, a, (const guint8 *) "k", 1, (const guint8 *) "a1", 2);
      qstore_atomic_batch_put (batch, b, (const guint8 *) "k", 1, (const guint8 *) "b1", 2);
      qstore_atomic_batch_delete (batch, c, (const guint8 *) "k", 1);
      qstore_atomic_batch_put (batch, a, (const guint8 *) "new", 3, (const guint8 *) "a", 1);
      qstore_atomic_batch_put (batch, b, (const guint8 *) "new", 3, (const guint8 *) "b", 1);
      qstore_atomic_batch_put (batch, c, (const guint8 *) "new", 3, (const guint8 *) "c", 1);

      _qstore_fault_arm (QSTORE_FAULT_WRITE_OP, fail_at);
      g_assert_false (qstore_atomic_batch_commit (batch, QSTORE_WRITE_SYNC, &error));
      g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_IO);
      g_clear_error (&error);
      _qstore_fault_disarm_all ();

      /* Part of the batch was applied inside the provider before the
       * fault; none of it may remain. */
      assert_value (a, "k", "a0");
      assert_value (b, "k", "b0");
      assert_value (c, "k", "c0");
      assert_value (a, "new", NULL);
      assert_value (b, "new", NULL);
      assert_value (c, "new", NULL);
      g_clear_object (&batch);
      batch = qstore_provider_begin_atomic_batch (f->provider);
    }

  qstore_atomic_batch_put (batch, a, (const guint8 *) "k", 1, (const guint8 *) "a1", 2);
  qstore_atomic_batch_put (batch, b, (const guint8 *) "k", 1, (const guint8 *) "b1", 2);
  qstore_atomic_batch_delete (batch, c, (const guint8 *) "k", 1);
  g_assert_cmpuint (qstore_atomic_batch_get_n_ops (batch), ==, 3);
  g_assert_true (qstore_atomic_batch_commit (batch, QSTORE_WRITE_SYNC, &error));
  g_assert_no_error (error);
  assert_value (a, "k", "a1");
  assert_value (b, "k", "b1");
  assert_value (c, "k", NULL);

  if (persistent (f))
    {
      g_autoptr(QStoreKV) a2 = NULL;
      g_autoptr(QStoreKV) c2 = NULL;

      g_clear_object (&batch);
      g_clear_object (&a);
      g_clear_object (&b);
      g_clear_object (&c);
      reopen (f, QSTORE_OPEN_NONE);
      a2 = store (f, "main.a");
      c2 = store (f, "main.c");
      assert_value (a2, "k", "a1");
      assert_value (c2, "k", NULL);
    }
}

static void
test_foreign_store_refused (Fixture       *f,
                            gconstpointer  data)
{
  /* Another open of the provider under test, at a location of its own:
   * only that provider is sure to be there. */
  g_autofree char *other_uri = test_provider_uri (f->dir, "other");
  g_autoptr(QStoreProvider) other = open_provider (other_uri, 0);
  g_autoptr(QStoreKV) mine = store (f, "main.t");
  g_autoptr(QStoreKV) theirs = NULL;
  g_autoptr(GError) error = NULL;
  QStoreWriteOp op = { NULL, QSTORE_WRITE_OP_PUT, (const guint8 *) "k", 1, (const guint8 *) "v", 1 };

  theirs = qstore_provider_open_store (other, "main.t", &error);
  g_assert_no_error (error);
  op.store = theirs;
  g_assert_false (qstore_provider_write (f->provider, &op, 1, 0, &error));
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT);
  assert_value (mine, "k", NULL);
}

static void
test_persistence (Fixture       *f,
                  gconstpointer  data)
{
  g_autoptr(QStoreKV) kv = store (f, "main.t");
  g_autoptr(GError) error = NULL;

  if (!persistent (f))
    {
      g_test_skip ("provider is not persistent");
      return;
    }

  put (kv, "k1", "v1");
  g_assert_true (qstore_kv_put (kv, (const guint8 *) "k2", 2, (const guint8 *) "v2", 2,
                                QSTORE_WRITE_SYNC, &error));
  g_assert_no_error (error);
  put (kv, "gone", "x");
  del (kv, "gone");
  g_clear_object (&kv);

  reopen (f, QSTORE_OPEN_NONE);
  kv = store (f, "main.t");
  assert_value (kv, "k1", "v1");
  assert_value (kv, "k2", "v2");
  assert_value (kv, "gone", NULL);
  g_clear_object (&kv);

  /* Read-only: reads work, every write is refused, nothing changes. */
  reopen (f, QSTORE_OPEN_READ_ONLY);
  kv = store (f, "main.t");
  assert_value (kv, "k1", "v1");
  g_assert_false (qstore_kv_put (kv, (const guint8 *) "k3", 2, (const guint8 *) "v", 1, 0, &error));
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_READ_ONLY);
  g_clear_error (&error);
  g_assert_false (qstore_provider_delete_table_stores (f->provider, "main", "t", NULL, &error));
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_READ_ONLY);
  g_clear_error (&error);
  assert_value (kv, "k3", NULL);
  assert_value (kv, "k1", "v1");
}

static void
test_closed (Fixture       *f,
             gconstpointer  data)
{
  g_autoptr(QStoreKV) kv = store (f, "main.t");
  g_autoptr(QStoreIter) iter = NULL;
  g_autoptr(QStoreSnapshot) snapshot = NULL;
  g_autoptr(QStoreBatch) batch = qstore_kv_new_batch (kv);
  g_autoptr(GError) error = NULL;

  put (kv, "a", "1");
  put (kv, "b", "2");
  iter = qstore_kv_iterate (kv, NULL, &error);
  g_assert_no_error (error);
  if (f->caps & QSTORE_CAPABILITY_SNAPSHOTS)
    {
      snapshot = qstore_provider_begin_snapshot (f->provider, &error);
      g_assert_no_error (error);
    }

  qstore_provider_close_all (f->provider);
  g_assert_true (qstore_provider_is_closed (f->provider));
  qstore_provider_close_all (f->provider);

  g_assert_null (qstore_kv_get (kv, (const guint8 *) "a", 1, &error));
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_CLOSED);
  g_clear_error (&error);
  g_assert_false (qstore_kv_put (kv, (const guint8 *) "a", 1, (const guint8 *) "1", 1, 0, &error));
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_CLOSED);
  g_clear_error (&error);
  g_assert_null (qstore_kv_iterate (kv, NULL, &error));
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_CLOSED);
  g_clear_error (&error);
  if (snapshot != NULL)
    {
      g_assert_null (qstore_snapshot_get (snapshot, kv, (const guint8 *) "a", 1, &error));
      g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_CLOSED);
      g_clear_error (&error);
    }
  qstore_batch_put (batch, (const guint8 *) "c", 1, (const guint8 *) "3", 1);
  g_assert_false (qstore_batch_write (batch, 0, &error));
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_CLOSED);
  g_clear_error (&error);
  g_assert_null (qstore_provider_open_store (f->provider, "main.x", &error));
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_CLOSED);
  g_clear_error (&error);
  g_assert_null (qstore_provider_list_stores (f->provider, &error));
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_CLOSED);
  g_clear_error (&error);

  /* An iterator opened before the close stops with CLOSED; it and the
   * snapshot outlive the close, and freeing them later is safe. */
  g_assert_false (qstore_iter_next (iter, &error));
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_CLOSED);
  g_clear_error (&error);
  g_clear_object (&iter);
}

static void
test_snapshot_isolation (Fixture       *f,
                         gconstpointer  data)
{
  g_autoptr(QStoreKV) kv = store (f, "main.t");
  g_autoptr(QStoreKV) fresh = store (f, "main.fresh");
  g_autoptr(QStoreSnapshot) snapshot = NULL;
  g_autoptr(GError) error = NULL;
  const guint8 *value;
  gsize value_len;

  put (kv, "k", "before");
  put (kv, "gone", "here");
  if (!(f->caps & QSTORE_CAPABILITY_SNAPSHOTS))
    {
      g_assert_null (qstore_provider_begin_snapshot (f->provider, &error));
      g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_UNSUPPORTED);
      g_test_skip ("the provider has no snapshots: only their refusal is tested");
      return;
    }
  snapshot = qstore_provider_begin_snapshot (f->provider, &error);
  g_assert_no_error (error);
  g_assert_true (qstore_snapshot_get_provider (snapshot) == f->provider);

  put (kv, "k", "after");
  put (kv, "new", "x");
  del (kv, "gone");
  put (fresh, "f", "x");

  /* The snapshot sees the state it began with... */
  g_assert_true (qstore_snapshot_lookup (snapshot, kv, (const guint8 *) "k", 1, &value, &value_len, &error));
  g_assert_cmpmem (value, value_len, "before", 6);
  g_assert_false (qstore_snapshot_lookup (snapshot, kv, (const guint8 *) "new", 3, &value, &value_len, &error));
  g_assert_no_error (error);
  g_assert_true (qstore_snapshot_lookup (snapshot, kv, (const guint8 *) "gone", 4, NULL, NULL, &error));
  g_assert_false (qstore_snapshot_lookup (snapshot, fresh, (const guint8 *) "f", 1, NULL, NULL, &error));
  g_assert_no_error (error);
  {
    g_autoptr(QStoreIter) iter = qstore_snapshot_iterate (snapshot, kv, NULL, &error);
    g_autofree char *keys = NULL;

    g_assert_no_error (error);
    keys = collect (iter);
    g_assert_cmpstr (keys, ==, "gone|k");

    /* ... also after a seek, whatever was written meanwhile. */
    put (kv, "later", "x");
    if (qstore_iter_seek (iter, NULL, &error))
      {
        g_autofree char *again = collect (iter);

        g_assert_cmpstr (again, ==, "gone|k");
      }
    else
      g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_UNSUPPORTED);
    g_clear_error (&error);
  }
  {
    g_autoptr(QStoreIter) iter = qstore_snapshot_iterate (snapshot, fresh, NULL, &error);
    g_autofree char *keys = NULL;

    g_assert_no_error (error);
    keys = collect (iter);
    g_assert_cmpstr (keys, ==, "");
  }

  /* ...while plain reads see the latest commit. */
  assert_value (kv, "k", "after");
  assert_value (kv, "gone", NULL);

  /* Two lookups: the first value may be invalidated by the second, but each
   * is right when read. */
  {
    g_autoptr(GBytes) v1 = qstore_snapshot_get (snapshot, kv, (const guint8 *) "k", 1, &error);
    g_autoptr(GBytes) v2 = qstore_snapshot_get (snapshot, kv, (const guint8 *) "gone", 4, &error);

    g_assert_cmpmem (g_bytes_get_data (v1, NULL), g_bytes_get_size (v1), "before", 6);
    g_assert_cmpmem (g_bytes_get_data (v2, NULL), g_bytes_get_size (v2), "here", 4);
  }
}

static void
put_stats (Fixture    *f,
           const char *table,
           const char *json)
{
  g_autoptr(QStoreKV) stats = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *key = qstore_stats_key_for_table ("main", table);

  stats = qstore_provider_get_stats_store (f->provider, &error);
  g_assert_no_error (error);
  put (stats, key, json);
}

static char *
get_stats (Fixture    *f,
           const char *table)
{
  g_autoptr(QStoreKV) stats = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *key = qstore_stats_key_for_table ("main", table);

  stats = qstore_provider_get_stats_store (f->provider, &error);
  g_assert_no_error (error);
  return get (stats, key);
}

static void
test_delete_table_stores (Fixture       *f,
                          gconstpointer  data)
{
  const char *t_indexes[] = { "y", "z", NULL };
  g_autoptr(GError) error = NULL;
  g_auto(GStrv) names = NULL;

  /* Table t with indexes y and z; siblings whose names look like more
   * index stores of t, and a table whose name extends t's. */
  {
    g_autoptr(QStoreKV) t = NULL, ty = NULL, tz = NULL, sibling = NULL, longer = NULL;

    t = qstore_provider_get_store (f->provider, "main", "t", &error);
    ty = qstore_provider_get_index_store (f->provider, "main", "t", "y", &error);
    tz = qstore_provider_get_index_store (f->provider, "main", "T", "Z", &error);
    sibling = qstore_provider_get_store (f->provider, "main", "t_idx_x", &error);
    longer = qstore_provider_get_store (f->provider, "main", "t2", &error);
    g_assert_no_error (error);
    g_assert_cmpstr (qstore_kv_get_name (tz), ==, "main.t_idx_z");
    put (t, "r", "row");
    put (ty, "i", "idx");
    put (tz, "i", "idx");
    put (sibling, "r", "sibling row");
    put (longer, "r", "t2 row");
  }
  put_stats (f, "t", "{\"rowCount\":1}");
  put_stats (f, "t_idx_x", "{\"rowCount\":1}");

  g_assert_true (qstore_provider_delete_table_stores (f->provider, "main", "t", t_indexes, &error));
  g_assert_no_error (error);
  /* Deleting again is a no-op. */
  g_assert_true (qstore_provider_delete_table_stores (f->provider, "main", "t", t_indexes, &error));
  g_assert_no_error (error);

  for (int pass = 0; pass < (persistent (f) ? 2 : 1); pass++)
    {
      g_autoptr(QStoreKV) t = qstore_provider_get_store (f->provider, "main", "t", &error);
      g_autoptr(QStoreKV) ty = qstore_provider_get_index_store (f->provider, "main", "t", "y", &error);
      g_autoptr(QStoreKV) tz = qstore_provider_get_index_store (f->provider, "main", "t", "z", &error);
      g_autoptr(QStoreKV) sibling = qstore_provider_get_store (f->provider, "main", "t_idx_x", &error);
      g_autoptr(QStoreKV) longer = qstore_provider_get_store (f->provider, "main", "t2", &error);
      g_autofree char *t_keys = scan (t, NULL);
      g_autofree char *ty_keys = scan (ty, NULL);
      g_autofree char *tz_keys = scan (tz, NULL);
      g_autofree char *t_stats = get_stats (f, "t");
      g_autofree char *sibling_stats = get_stats (f, "t_idx_x");

      g_assert_cmpstr (t_keys, ==, "");
      g_assert_cmpstr (ty_keys, ==, "");
      g_assert_cmpstr (tz_keys, ==, "");
      g_assert_null (t_stats);
      assert_value (sibling, "r", "sibling row");
      assert_value (longer, "r", "t2 row");
      g_assert_cmpstr (sibling_stats, ==, "{\"rowCount\":1}");

      if (pass == 0 && persistent (f))
        {
          g_clear_object (&t);
          g_clear_object (&ty);
          g_clear_object (&tz);
          g_clear_object (&sibling);
          g_clear_object (&longer);
          reopen (f, QSTORE_OPEN_NONE);
        }
    }

  names = qstore_provider_list_stores (f->provider, &error);
  g_assert_no_error (error);
  g_assert_false (g_strv_contains ((const char * const *) names, "main.t"));
  g_assert_false (g_strv_contains ((const char * const *) names, "main.t_idx_y"));
  g_assert_true (g_strv_contains ((const char * const *) names, "main.t_idx_x"));
  g_assert_true (g_strv_contains ((const char * const *) names, "main.t2"));
  g_assert_true (g_strv_contains ((const char * const *) names, QSTORE_STATS_STORE_NAME));

  /* An index store alone. */
  {
    g_autoptr(QStoreKV) ui = qstore_provider_get_index_store (f->provider, "main", "u", "i", &error);
    g_autoptr(QStoreKV) u = qstore_provider_get_store (f->provider, "main", "u", &error);
    g_autofree char *keys = NULL;

    put (u, "r", "row");
    put (ui, "i", "idx");
    g_assert_true (qstore_provider_delete_index_store (f->provider, "main", "u", "i", &error));
    g_assert_no_error (error);
    keys = scan (ui, NULL);
    g_assert_cmpstr (keys, ==, "");
    assert_value (u, "r", "row");
  }
}

static void
test_rename_table_stores (Fixture       *f,
                          gconstpointer  data)
{
  const char *indexes[] = { "i", NULL };
  g_autoptr(GError) error = NULL;

  {
    g_autoptr(QStoreKV) t = qstore_provider_get_store (f->provider, "main", "t", &error);
    g_autoptr(QStoreKV) ti = qstore_provider_get_index_store (f->provider, "main", "t", "i", &error);
    g_autoptr(QStoreKV) busy = qstore_provider_get_store (f->provider, "main", "busy", &error);

    put (t, "r", "row");
    put (ti, "k", "idx");
    put (busy, "r", "busy row");
  }
  put_stats (f, "t", "{\"rowCount\":1}");

  /* A destination that holds entries is refused, and nothing moves. */
  g_assert_false (qstore_provider_rename_table_stores (f->provider, "main", "t", "busy", indexes, &error));
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_EXISTS);
  g_clear_error (&error);
  {
    g_autoptr(QStoreKV) t = qstore_provider_get_store (f->provider, "main", "t", &error);
    g_autoptr(QStoreKV) busy = qstore_provider_get_store (f->provider, "main", "busy", &error);
    g_autofree char *t_stats = get_stats (f, "t");

    assert_value (t, "r", "row");
    assert_value (busy, "r", "busy row");
    g_assert_cmpstr (t_stats, ==, "{\"rowCount\":1}");
  }

  /* An occupied index destination is refused too, all or nothing. */
  {
    g_autoptr(QStoreKV) ni = qstore_provider_get_index_store (f->provider, "main", "n", "i", &error);

    put (ni, "k", "in the way");
    g_assert_false (qstore_provider_rename_table_stores (f->provider, "main", "t", "n", indexes, &error));
    g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_EXISTS);
    g_clear_error (&error);
    {
      g_autoptr(QStoreKV) t = qstore_provider_get_store (f->provider, "main", "t", &error);
      g_autoptr(QStoreKV) n = qstore_provider_get_store (f->provider, "main", "n", &error);
      g_autofree char *n_keys = scan (n, NULL);

      assert_value (t, "r", "row");
      g_assert_cmpstr (n_keys, ==, "");
    }
    del (ni, "k");
  }

  /* Into a free name: data, index and stats move; the old names read empty. */
  g_assert_true (qstore_provider_rename_table_stores (f->provider, "main", "t", "n", indexes, &error));
  g_assert_no_error (error);
  for (int pass = 0; pass < (persistent (f) ? 2 : 1); pass++)
    {
      g_autoptr(QStoreKV) t = qstore_provider_get_store (f->provider, "main", "t", &error);
      g_autoptr(QStoreKV) ti = qstore_provider_get_index_store (f->provider, "main", "t", "i", &error);
      g_autoptr(QStoreKV) n = qstore_provider_get_store (f->provider, "main", "n", &error);
      g_autoptr(QStoreKV) ni = qstore_provider_get_index_store (f->provider, "main", "n", "i", &error);
      g_autofree char *t_keys = scan (t, NULL);
      g_autofree char *ti_keys = scan (ti, NULL);
      g_autofree char *t_stats = get_stats (f, "t");
      g_autofree char *n_stats = get_stats (f, "n");

      g_assert_cmpstr (t_keys, ==, "");
      g_assert_cmpstr (ti_keys, ==, "");
      assert_value (n, "r", "row");
      assert_value (ni, "k", "idx");
      g_assert_null (t_stats);
      g_assert_cmpstr (n_stats, ==, "{\"rowCount\":1}");

      if (pass == 0 && persistent (f))
        {
          g_clear_object (&t);
          g_clear_object (&ti);
          g_clear_object (&n);
          g_clear_object (&ni);
          reopen (f, QSTORE_OPEN_NONE);
        }
    }

  /* A case-only rename names the same stores: nothing moves, nothing lost. */
  g_assert_true (qstore_provider_rename_table_stores (f->provider, "main", "n", "N", indexes, &error));
  g_assert_no_error (error);
  {
    g_autoptr(QStoreKV) n = qstore_provider_get_store (f->provider, "main", "n", &error);

    assert_value (n, "r", "row");
  }
}

static void
test_hostile_names (Fixture       *f,
                    gconstpointer  data)
{
  g_autofree char *provider_name = test_provider_name ();
  g_autofree char *long_name = g_strnfill (1000, 'n');
  const char *names[] = {
    "../x", "a/b", "..", ".", "/abs", "x/../../y", "a\\b", "a%2Fb", "a%2fb",
    "tàble✓", "日本.表", "T", "t", "a b", "a\tb", "-", "con", "nul", "main.t",
    "main.t_idx_x", "*", "?", "a;b", "'; DROP TABLE kv; --", NULL,
  };
  g_autoptr(GPtrArray) stores = g_ptr_array_new_with_free_func (g_object_unref);
  g_autoptr(GError) error = NULL;
  g_autoptr(GDir) parent = NULL;
  g_auto(GStrv) listed = NULL;
  guint n_entries = 0;
  const char *entry;

  for (guint i = 0; names[i] != NULL; i++)
    {
      QStoreKV *kv = store (f, names[i]);

      g_assert_cmpstr (qstore_kv_get_name (kv), ==, names[i]);
      put (kv, "k", names[i]);
      g_ptr_array_add (stores, kv);
    }

  /* A very long name is stored or refused cleanly. */
  {
    g_autoptr(QStoreKV) kv = qstore_provider_open_store (f->provider, long_name, &error);

    if (kv != NULL)
      {
        g_autofree char *short_name = g_strnfill (999, 'n');
        g_autoptr(QStoreKV) shorter = store (f, short_name);

        put (kv, "k", "long");
        assert_value (kv, "k", "long");
        assert_value (shorter, "k", NULL);
      }
    else
      {
        g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT);
        g_clear_error (&error);
      }
  }

  /* Reserved and empty names are refused. */
  g_assert_null (qstore_provider_open_store (f->provider, "", &error));
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  g_assert_null (qstore_provider_open_store (f->provider, "__qstore_meta", &error));
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  g_assert_null (qstore_provider_open_store (f->provider, "bad\xff", &error));
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);

  /* Every name is its own store: no two collide. */
  for (guint i = 0; i < stores->len; i++)
    assert_value (stores->pdata[i], "k", names[i]);

  if (persistent (f))
    {
      g_ptr_array_set_size (stores, 0);
      reopen (f, QSTORE_OPEN_NONE);
      for (guint i = 0; names[i] != NULL; i++)
        g_ptr_array_add (stores, store (f, names[i]));
      for (guint i = 0; i < stores->len; i++)
        assert_value (stores->pdata[i], "k", names[i]);
    }

  listed = qstore_provider_list_stores (f->provider, &error);
  g_assert_no_error (error);
  for (guint i = 0; names[i] != NULL; i++)
    g_assert_true (g_strv_contains ((const char * const *) listed, names[i]));

  /* Nothing was created beside the location. */
  parent = g_dir_open (f->dir, 0, &error);
  g_assert_no_error (error);
  while ((entry = g_dir_read_name (parent)) != NULL)
    {
      g_autofree char *name = test_provider_name ();

      /* lmdb: the directory; sqlite: the file, its -wal and -shm and the
       * writer's lock file, all named after it. */
      if (g_str_equal (name, "lmdb"))
        g_assert_cmpstr (entry, ==, "store");
      else
        g_assert_true (g_str_has_prefix (entry, "store.db"));
      n_entries++;
    }
  /* postgres keeps its stores on the server. */
  if (!persistent (f) || g_str_equal (provider_name, "postgres"))
    g_assert_cmpuint (n_entries, ==, 0);
  else
    g_assert_cmpuint (n_entries, >=, 1);
}

static void
test_bad_input (Fixture       *f,
                gconstpointer  data)
{
  g_autofree char *name = test_provider_name ();
  g_autoptr(GError) error = NULL;
  g_autoptr(QStoreProvider) p = NULL;

  p = qstore_provider_new ("no-such-provider", "/tmp", 0, &error);
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_NOT_FOUND);
  g_assert_nonnull (strstr (error->message, name));
  g_clear_error (&error);

  p = qstore_provider_new_for_uri ("no-colon-here", 0, &error);
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);

  {
    g_autofree char *uri = g_strdup_printf ("%s:%s/x?no_such_option=1", name, f->dir);

    p = qstore_provider_new_for_uri (uri, 0, &error);
    g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT);
    g_assert_nonnull (strstr (error->message, "no_such_option"));
    g_clear_error (&error);
  }
  {
    g_autofree char *uri = g_strdup_printf ("%s:%s/x?atomic=maybe", name, f->dir);

    p = qstore_provider_new_for_uri (uri, 0, &error);
    g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT);
    g_clear_error (&error);
  }
  {
    /* An encoded NUL never reaches a provider. */
    g_autofree char *uri = g_strdup_printf ("%s:%s/x%%00y", name, f->dir);

    p = qstore_provider_new_for_uri (uri, 0, &error);
    g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT);
    g_clear_error (&error);
  }

  if (g_str_equal (name, "memory"))
    {
      p = qstore_provider_new ("memory", "/somewhere", 0, &error);
      g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT);
      return;
    }
  if (g_str_equal (name, "postgres"))
    {
      conformance_postgres_bad_input (f);
      return;
    }

  /* A missing location opened read-only. */
  {
    g_autofree char *missing = g_build_filename (f->dir, "missing", NULL);

    p = qstore_provider_new (name, missing, QSTORE_OPEN_READ_ONLY, &error);
    g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_NOT_FOUND);
    g_clear_error (&error);
    g_assert_false (g_file_test (missing, G_FILE_TEST_EXISTS));
  }

  /* Garbage where the store should be: refused as corrupt, file untouched. */
  {
    g_autofree char *garbage = NULL;
    g_autofree char *location = NULL;
    g_autofree char *after = NULL;
    gsize after_len;
    char junk[8192];

    for (guint i = 0; i < sizeof junk; i++)
      junk[i] = (char) (i * 7919 + 13);
    if (g_str_equal (name, "lmdb"))
      {
        location = g_build_filename (f->dir, "junk-env", NULL);
        g_assert_cmpint (g_mkdir (location, 0700), ==, 0);
        garbage = g_build_filename (location, "data.mdb", NULL);
      }
    else
      {
        location = g_build_filename (f->dir, "junk.db", NULL);
        garbage = g_strdup (location);
      }
    g_assert_true (g_file_set_contents (garbage, junk, sizeof junk, NULL));

    p = qstore_provider_new (name, location, 0, &error);
    g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_CORRUPT);
    g_clear_error (&error);
    p = qstore_provider_new (name, location, QSTORE_OPEN_READ_ONLY, &error);
    g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_CORRUPT);
    g_clear_error (&error);

    g_assert_true (g_file_get_contents (garbage, &after, &after_len, NULL));
    g_assert_cmpmem (after, after_len, junk, sizeof junk);
    /* Nothing is left beside it: no lock file, no journal. */
    {
      g_autofree char *where = g_str_equal (name, "lmdb") ? g_strdup (location)
                                                          : g_path_get_dirname (location);
      g_autoptr(GHashTable) files = test_checksum_tree (where);
      guint expected = g_str_equal (name, "lmdb") ? 1 : g_hash_table_size (files);

      if (!g_str_equal (name, "lmdb"))
        {
          g_autofree char *wal = g_strconcat (location, "-wal", NULL);
          g_autofree char *shm = g_strconcat (location, "-shm", NULL);

          g_assert_false (g_file_test (wal, G_FILE_TEST_EXISTS));
          g_assert_false (g_file_test (shm, G_FILE_TEST_EXISTS));
        }
      g_assert_cmpuint (g_hash_table_size (files), ==, expected);
    }
  }

  /* A store of the other persistent kind is not ours. */
  {
    const char *other = g_str_equal (name, "lmdb") ? "sqlite" : "lmdb";
    g_autofree char *other_dir = g_build_filename (f->dir, "other", NULL);
    g_autofree char *other_location = NULL;
    g_autoptr(QStoreProvider) q = NULL;

    g_assert_cmpint (g_mkdir (other_dir, 0700), ==, 0);
    other_location = g_str_equal (other, "sqlite")
      ? g_build_filename (other_dir, "data.mdb", NULL)   /* an SQLite file where lmdb wants its data */
      : g_build_filename (other_dir, "env", NULL);
    q = qstore_provider_new (other, other_location, 0, &error);
    g_assert_no_error (error);
    {
      g_autoptr(QStoreKV) kv = store (&(Fixture) { .provider = q }, "main.t");

      put (kv, "k", "v");
    }
    qstore_provider_close_all (q);

    if (g_str_equal (name, "lmdb"))
      p = qstore_provider_new (name, other_dir, 0, &error);
    else
      {
        g_autofree char *data = g_build_filename (other_location, "data.mdb", NULL);

        p = qstore_provider_new (name, data, 0, &error);
      }
    g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_CORRUPT);
    g_clear_error (&error);
  }
}

static int
run_tool (const char * const *argv,
          char              **out)
{
  g_autoptr(GError) error = NULL;
  int status = -1;

  if (!g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL,
                     out, NULL, &status, &error))
    g_error ("cannot run %s: %s", argv[0], error->message);
  return g_spawn_check_wait_status (status, NULL) ? 0 : 1;
}

/* The provider's files are readable by the engine's own tools. */
static void
test_native_tools (Fixture       *f,
                   gconstpointer  data)
{
  g_autofree char *name = test_provider_name ();
  g_autofree char *out = NULL;

  if (!persistent (f))
    {
      g_test_skip ("provider has no files");
      return;
    }
  {
    g_autoptr(QStoreKV) kv = store (f, "main.t");
    g_autoptr(QStoreBatch) batch = qstore_kv_new_batch (kv);
    g_autoptr(GError) error = NULL;

    for (guint i = 0; i < 2000; i++)
      {
        char key[16];

        g_snprintf (key, sizeof key, "k%05u", i);
        qstore_batch_put (batch, (const guint8 *) key, strlen (key), (const guint8 *) key, strlen (key));
      }
    g_assert_true (qstore_batch_write (batch, QSTORE_WRITE_SYNC, &error));
    g_assert_no_error (error);
  }
  qstore_provider_close_all (f->provider);

  if (g_str_equal (name, "postgres"))
    {
      g_autofree char *count = pg_count_entries (f->uri);

      g_assert_cmpstr (count, ==, "2000");
    }
  else if (g_str_equal (name, "lmdb"))
    {
      g_autofree char *dir = g_build_filename (f->dir, "store", NULL);
      const char *argv[] = { "mdb_stat", "-a", dir, NULL };

      g_assert_cmpint (run_tool (argv, &out), ==, 0);
      g_assert_nonnull (strstr (out, "main.t"));
      g_assert_nonnull (strstr (out, "Entries: 2000"));
    }
  else
    {
      g_autofree char *file = g_build_filename (f->dir, "store.db", NULL);
      const char *argv[] = { "sqlite3", file, "PRAGMA integrity_check", NULL };

      g_assert_cmpint (run_tool (argv, &out), ==, 0);
      g_assert_cmpstr (out, ==, "ok\n");
    }
}

/* Another process reads while this one holds the store open for writing. */
static void
test_second_process (Fixture       *f,
                     gconstpointer  data)
{
  g_autoptr(QStoreKV) kv = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(QStoreSnapshot) snapshot = NULL;

  if (!(f->caps & QSTORE_CAPABILITY_MULTI_PROCESS))
    {
      g_test_skip ("provider is single-process");
      return;
    }

  kv = store (f, "main.t");
  put (kv, "k", "committed");
  /* An open read snapshot and an uncommitted batch must not stop the reader. */
  snapshot = qstore_provider_begin_snapshot (f->provider, &error);
  g_assert_no_error (error);

  g_setenv ("QSTORE_TEST_CHILD_URI", f->uri, TRUE);
  g_test_trap_subprocess ("/providers/child-reader", 20 * G_USEC_PER_SEC, 0);
  g_test_trap_assert_passed ();
  g_test_trap_assert_stdout ("*value=committed*absent=yes*");

  /* The writer is still fine, and sees the same. */
  put (kv, "k", "later");
  assert_value (kv, "k", "later");
}

static void
test_child_reader (void)
{
  const char *uri = g_getenv ("QSTORE_TEST_CHILD_URI");
  g_autoptr(QStoreProvider) provider = NULL;
  g_autoptr(QStoreKV) kv = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *value = NULL;

  if (!g_test_subprocess ())
    {
      g_test_skip ("only runs as the child of /providers/*/second-process");
      return;
    }
  provider = qstore_provider_new_for_uri (uri, QSTORE_OPEN_READ_ONLY, &error);
  g_assert_no_error (error);
  kv = qstore_provider_open_store (provider, "main.t", &error);
  g_assert_no_error (error);
  value = get (kv, "k");
  g_print ("value=%s\n", value);
  {
    g_autofree char *absent = get (kv, "nope");

    g_print ("absent=%s\n", absent ? "no" : "yes");
  }
  /* The reader cannot write. */
  g_assert_false (qstore_kv_put (kv, (const guint8 *) "x", 1, (const guint8 *) "y", 1, 0, &error));
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_READ_ONLY);
}

/* The providers of this tree: the cases that know their files, their
 * command line tools or the list of plugins run on them only. */
static gboolean
provider_is_in_tree (const char *name)
{
  const char * const in_tree[] = { "memory", "lmdb", "sqlite", "postgres", NULL };

  return g_strv_contains (in_tree, name);
}

#define RUNNER_HELP \
  "Runs qstore's provider conformance cases on one provider.\n\n" \
  "  --uri URI         the store to test; @LOCATION@ in it stands for a fresh\n" \
  "                    path for each case (lmdb:@LOCATION@); default:\n" \
  "                    $QSTORE_TEST_PROVIDER, else memory\n" \
  "  --plugin-dir DIR  a directory searched for plugins first\n\n" \
  "Each case's path names the capability it checks: core, atomic-batch,\n" \
  "persistent, snapshots, multi-process, writer-lock, read-only; check and\n" \
  "tree for what knows this tree's own providers. GTest's options follow."

/* `--uri URI` and `--plugin-dir DIR` (also as `--uri=URI`), taken out of
 * @argv before GTest sees it: the provider under test, and a directory
 * searched for its plugin before QSTORE_PLUGIN_DIR. */
static void
parse_runner_options (int    *argc,
                      char ***argv)
{
  const char * const options[] = { "--uri", "--plugin-dir" };
  int kept = 1;

  for (int i = 1; i < *argc; i++)
    {
      const char *arg = (*argv)[i];
      const char *value = NULL;
      guint which = G_N_ELEMENTS (options);

      for (guint o = 0; o < G_N_ELEMENTS (options); o++)
        {
          gsize len = strlen (options[o]);

          if (g_str_equal (arg, options[o]) && i + 1 < *argc)
            value = (*argv)[++i];
          else if (g_str_has_prefix (arg, options[o]) && arg[len] == '=')
            value = arg + len + 1;
          if (value != NULL)
            {
              which = o;
              break;
            }
        }

      if (which == 0)
        g_setenv ("QSTORE_TEST_PROVIDER", value, TRUE);
      else if (which == 1)
        {
          const char *dirs = g_getenv ("QSTORE_PLUGIN_DIR");
          g_autofree char *joined = dirs && dirs[0] ? g_strjoin (G_SEARCHPATH_SEPARATOR_S, value,
                                                                 dirs, NULL)
                                                    : g_strdup (value);

          g_setenv ("QSTORE_PLUGIN_DIR", joined, TRUE);
        }
      else
        {
          if (g_str_equal (arg, "--help") || g_str_equal (arg, "-h"))
            g_print ("%s\n", RUNNER_HELP);
          (*argv)[kept++] = (*argv)[i];
        }
    }
  (*argv)[kept] = NULL;
  *argc = kept;
}

int
main (int   argc,
      char *argv[])
{
  g_autofree char *prefix = NULL;
  g_autofree char *name = NULL;
  const char *spec;
  gboolean in_tree;
  int status;

  if ((status = conformance_lock_child (argc, argv)) >= 0 ||
      (status = conformance_write_txn_child (argc, argv)) >= 0)
    return status;
  parse_runner_options (&argc, &argv);
  g_test_init (&argc, &argv, NULL);
  conformance_report_failures ();

  spec = test_provider_spec ();
  name = test_provider_name ();
  in_tree = provider_is_in_tree (name);
  /* A whole URI would split the path: the provider's name stands for it. */
  prefix = g_strdup_printf ("/providers/%s", strchr (spec, ':') ? name : spec);
#define ADD(capability, case_name, func) G_STMT_START { \
    g_autofree char *path_ = g_strconcat (prefix, "/", capability, "/", case_name, NULL); \
    g_test_add (path_, Fixture, NULL, fixture_setup, func, fixture_teardown); \
  } G_STMT_END

  g_test_add_func ("/providers/child-reader", test_child_reader);
  ADD ("core", "open", test_open);
  ADD ("core", "point-ops", test_point_ops);
  ADD ("core", "key-limit", test_key_limit);
  ADD ("core", "bounds", test_bounds);
  ADD ("core", "negative-limit", test_negative_limit);
  ADD ("core", "large-iteration", test_large_iteration);
  ADD ("core", "iterator-consistency", test_iterator_consistency);
  ADD ("core", "batch", test_batch);
  ADD ("core", "foreign-store", test_foreign_store_refused);
  ADD ("core", "closed", test_closed);
  ADD ("core", "delete-table-stores", test_delete_table_stores);
  ADD ("core", "rename-table-stores", test_rename_table_stores);
  ADD ("core", "hostile-names", test_hostile_names);
  ADD ("atomic-batch", "atomic-batch", test_atomic_batch);
  ADD ("persistent", "persistence", test_persistence);
  ADD ("snapshots", "snapshot-isolation", test_snapshot_isolation);
  ADD ("multi-process", "second-process", test_second_process);
  conformance_add_lock_tests (prefix);
  conformance_add_read_only_tests (prefix);
  conformance_add_write_txn_tests (prefix);
  conformance_add_point_read_tests (prefix);
  conformance_add_write_order_tests (prefix);
  if (in_tree)
    {
      /* What knows this tree's providers: their names, files and tools. */
      g_test_add_func ("/providers/tree/registry", test_registry);
      ADD ("tree", "bad-input", test_bad_input);
      ADD ("tree", "native-tools", test_native_tools);
      conformance_add_check_tests (prefix);
      conformance_add_postgres_tests (prefix);
    }
#undef ADD

  return g_test_run ();
}
