/* conformance-write-txn.c: open write transactions, on every provider that
 * has them
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A provider with QSTORE_CAPABILITY_WRITE_TXN takes a transaction's
 * writes as they come: its own reads see them, nobody else does, and a
 * commit stores all of them or none, also when the process is killed
 * while the transaction is open or while it commits. The crash cases
 * run the writer as a child process of this program
 * (conformance_write_txn_child()) and kill it.
 */
#include "config.h"

#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "conformance.h"
#include "qstore-fault-private.h"

static const char *self_path;

static gboolean
has_write_txn (Fixture *f)
{
  if (f->caps & QSTORE_CAPABILITY_WRITE_TXN)
    return TRUE;
  g_test_skip ("provider has no write transactions");
  return FALSE;
}

static QStoreWriteTxn *
begin (QStoreProvider *provider)
{
  g_autoptr(GError) error = NULL;
  QStoreWriteTxn *txn = qstore_provider_begin_write (provider, &error);

  g_assert_no_error (error);
  g_assert_nonnull (txn);
  return txn;
}

static void
txn_put (QStoreWriteTxn *txn,
         QStoreKV       *kv,
         const char     *key,
         const char     *value)
{
  g_autoptr(GError) error = NULL;

  qstore_write_txn_put (txn, kv, (const guint8 *) key, strlen (key),
                        (const guint8 *) value, strlen (value), &error);
  g_assert_no_error (error);
}

static void
txn_del (QStoreWriteTxn *txn,
         QStoreKV       *kv,
         const char     *key)
{
  g_autoptr(GError) error = NULL;

  qstore_write_txn_delete (txn, kv, (const guint8 *) key, strlen (key), &error);
  g_assert_no_error (error);
}

/* The value of @key as the transaction (or any snapshot) sees it. */
static char *
txn_get (QStoreSnapshot *snapshot,
         QStoreKV       *kv,
         const char     *key)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) value = qstore_snapshot_get (snapshot, kv, (const guint8 *) key,
                                                 strlen (key), &error);
  gsize len;
  const char *data;

  g_assert_no_error (error);
  if (value == NULL)
    return NULL;
  data = g_bytes_get_data (value, &len);
  return g_strndup (data ? data : "", len);
}

static char *
txn_scan (QStoreSnapshot *snapshot,
          QStoreKV       *kv,
          QStoreBounds   *bounds)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(QStoreIter) iter = qstore_snapshot_iterate (snapshot, kv, bounds, &error);

  g_assert_no_error (error);
  return collect (iter);
}

static guint
count_entries (QStoreKV *kv)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(QStoreBounds) all = qstore_bounds_new ();
  g_autoptr(QStoreIter) iter = qstore_kv_iterate (kv, all, &error);
  guint n = 0;

  g_assert_no_error (error);
  while (qstore_iter_next (iter, &error))
    n++;
  g_assert_no_error (error);
  return n;
}

/* Writes keys k000000… of @n entries in ops of 1,024. */
static void
txn_fill (QStoreWriteTxn *txn,
          QStoreKV       *kv,
          guint           n,
          const char     *value)
{
  for (guint i = 0; i < n; )
    {
      QStoreWriteOp ops[1024];
      char keys[1024][16];
      guint m = MIN (n - i, G_N_ELEMENTS (ops));
      g_autoptr(GError) error = NULL;

      for (guint j = 0; j < m; j++)
        {
          g_snprintf (keys[j], sizeof keys[j], "k%06u", i + j);
          ops[j].store = kv;
          ops[j].kind = QSTORE_WRITE_OP_PUT;
          ops[j].key = (const guint8 *) keys[j];
          ops[j].key_len = strlen (keys[j]);
          ops[j].value = (const guint8 *) value;
          ops[j].value_len = strlen (value);
        }
      g_assert_true (qstore_write_txn_write (txn, ops, m, &error));
      g_assert_no_error (error);
      i += m;
    }
}

/* Tests */

/* Providers without the capability say so; a read-only open never
 * writes. */
static void
test_unsupported (Fixture       *f,
                  gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(QStoreWriteTxn) txn = NULL;

  if (!(f->caps & QSTORE_CAPABILITY_WRITE_TXN))
    {
      txn = qstore_provider_begin_write (f->provider, &error);
      g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_UNSUPPORTED);
      g_assert_null (txn);
      return;
    }
  if (!persistent (f))
    return;
  reopen (f, QSTORE_OPEN_READ_ONLY);
  txn = qstore_provider_begin_write (f->provider, &error);
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_READ_ONLY);
  g_assert_null (txn);
}

/* The transaction reads its own writes, in key order both ways, across
 * stores (one of them new); nobody else sees them until the commit, and
 * nothing else writes meanwhile. */
static void
test_read_own_writes (Fixture       *f,
                      gconstpointer  data)
{
  g_autoptr(QStoreKV) a = NULL;
  g_autoptr(QStoreKV) b = NULL;
  g_autoptr(QStoreSnapshot) before = NULL;
  g_autoptr(QStoreWriteTxn) txn = NULL;
  g_autoptr(QStoreBounds) all = qstore_bounds_new ();
  g_autoptr(QStoreBounds) back = qstore_bounds_new ();
  g_autoptr(QStoreBounds) range = qstore_bounds_new ();
  g_autoptr(GError) error = NULL;
  g_autofree char *value = NULL;
  g_autofree char *keys = NULL;

  if (!has_write_txn (f))
    return;
  a = store (f, "main.a");
  b = store (f, "main.b");
  put (a, "a1", "old1");
  put (a, "a2", "old2");
  put (a, "a3", "old3");
  before = qstore_provider_begin_snapshot (f->provider, &error);
  g_assert_no_error (error);

  txn = begin (f->provider);
  g_assert_true (qstore_write_txn_is_open (txn));
  txn_put (txn, a, "a2", "new2");
  txn_del (txn, a, "a3");
  txn_put (txn, a, "a0", "new0");
  txn_put (txn, b, "b1", "new-b1");
  txn_del (txn, b, "nothing-here");

  value = txn_get (QSTORE_SNAPSHOT (txn), a, "a2");
  g_assert_cmpstr (value, ==, "new2");
  g_clear_pointer (&value, g_free);
  value = txn_get (QSTORE_SNAPSHOT (txn), a, "a3");
  g_assert_null (value);
  value = txn_get (QSTORE_SNAPSHOT (txn), b, "b1");
  g_assert_cmpstr (value, ==, "new-b1");
  g_clear_pointer (&value, g_free);
  keys = txn_scan (QSTORE_SNAPSHOT (txn), a, all);
  g_assert_cmpstr (keys, ==, "a0|a1|a2");
  g_clear_pointer (&keys, g_free);
  qstore_bounds_set_reverse (back, TRUE);
  keys = txn_scan (QSTORE_SNAPSHOT (txn), a, back);
  g_assert_cmpstr (keys, ==, "a2|a1|a0");
  g_clear_pointer (&keys, g_free);
  qstore_bounds_set_gt (range, (const guint8 *) "a0", 2);
  qstore_bounds_set_lte (range, (const guint8 *) "a9", 2);
  keys = txn_scan (QSTORE_SNAPSHOT (txn), a, range);
  g_assert_cmpstr (keys, ==, "a1|a2");
  g_clear_pointer (&keys, g_free);

  /* Nobody else sees any of it: the stores, an older snapshot, a new one. */
  assert_value (a, "a2", "old2");
  assert_value (a, "a3", "old3");
  assert_value (a, "a0", NULL);
  assert_value (b, "b1", NULL);
  keys = scan (a, all);
  g_assert_cmpstr (keys, ==, "a1|a2|a3");
  g_clear_pointer (&keys, g_free);
  value = txn_get (before, a, "a2");
  g_assert_cmpstr (value, ==, "old2");
  g_clear_pointer (&value, g_free);
  {
    g_autoptr(QStoreSnapshot) during = qstore_provider_begin_snapshot (f->provider, &error);
    g_auto(GStrv) names = qstore_provider_list_stores (f->provider, &error);

    g_assert_no_error (error);
    value = txn_get (during, b, "b1");
    g_assert_null (value);
    /* main.b has its first entry in the transaction only. */
    g_assert_true (g_strv_contains ((const char * const *) names, "main.a"));
    g_assert_false (g_strv_contains ((const char * const *) names, "main.b"));
  }

  /* Every other write waits for it, refused rather than blocked. */
  g_assert_false (qstore_kv_put (a, (const guint8 *) "x", 1, (const guint8 *) "y", 1,
                                 QSTORE_WRITE_NONE, &error));
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_BUSY);
  g_clear_error (&error);
  {
    g_autoptr(QStoreWriteTxn) second = qstore_provider_begin_write (f->provider, &error);

    g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_BUSY);
    g_assert_null (second);
    g_clear_error (&error);
  }

  g_assert_true (qstore_write_txn_commit (txn, QSTORE_WRITE_SYNC, &error));
  g_assert_no_error (error);
  g_assert_false (qstore_write_txn_is_open (txn));

  /* All of it, at once; the old snapshot still sees the old state. */
  keys = scan (a, all);
  g_assert_cmpstr (keys, ==, "a0|a1|a2");
  g_clear_pointer (&keys, g_free);
  assert_value (a, "a2", "new2");
  assert_value (b, "b1", "new-b1");
  {
    g_auto(GStrv) names = qstore_provider_list_stores (f->provider, &error);

    g_assert_no_error (error);
    g_assert_true (g_strv_contains ((const char * const *) names, "main.b"));
  }
  value = txn_get (before, a, "a3");
  g_assert_cmpstr (value, ==, "old3");
  g_clear_pointer (&value, g_free);

  /* The transaction is over; the provider takes writes again. */
  g_assert_false (qstore_write_txn_put (txn, a, (const guint8 *) "z", 1,
                                        (const guint8 *) "z", 1, &error));
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_CLOSED);
  g_clear_error (&error);
  put (a, "x", "y");
  assert_value (a, "x", "y");

  if (persistent (f))
    {
      g_clear_object (&a);
      g_clear_object (&b);
      g_clear_object (&before);
      reopen (f, QSTORE_OPEN_NONE);
      a = store (f, "main.a");
      b = store (f, "main.b");
      keys = scan (a, all);
      g_assert_cmpstr (keys, ==, "a0|a1|a2|x");
      assert_value (b, "b1", "new-b1");
    }
}

/* Abort, a dropped reference and a failed write all leave nothing. */
static void
test_abort (Fixture       *f,
            gconstpointer  data)
{
  g_autoptr(QStoreKV) a = NULL;
  g_autoptr(QStoreBounds) all = qstore_bounds_new ();
  g_autoptr(GError) error = NULL;
  g_autofree char *keys = NULL;

  if (!has_write_txn (f))
    return;
  a = store (f, "main.a");
  put (a, "a1", "old1");

  {
    g_autoptr(QStoreWriteTxn) txn = begin (f->provider);

    txn_put (txn, a, "a1", "new1");
    txn_put (txn, a, "a2", "new2");
    qstore_write_txn_abort (txn);
    g_assert_false (qstore_write_txn_is_open (txn));
    g_assert_false (qstore_write_txn_commit (txn, QSTORE_WRITE_NONE, &error));
    g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_CLOSED);
    g_clear_error (&error);
  }
  keys = scan (a, all);
  g_assert_cmpstr (keys, ==, "a1");
  g_clear_pointer (&keys, g_free);
  assert_value (a, "a1", "old1");

  /* Dropped without a commit. */
  {
    g_autoptr(QStoreWriteTxn) txn = begin (f->provider);

    txn_put (txn, a, "a3", "new3");
    txn_del (txn, a, "a1");
  }
  keys = scan (a, all);
  g_assert_cmpstr (keys, ==, "a1");
  g_clear_pointer (&keys, g_free);

  /* A write failing part-way ends the transaction: the writes before it,
   * in this call and the earlier ones, are gone too. */
  if (conformance_faults_reach_provider (f))
    {
      g_autoptr(QStoreWriteTxn) txn = begin (f->provider);

      txn_put (txn, a, "a4", "new4");
      _qstore_fault_arm (QSTORE_FAULT_WRITE_OP, 300);
      {
        g_autoptr(QStoreWriteTxn) owned = g_object_ref (txn);
        QStoreWriteOp ops[1024];
        char names[1024][16];

        for (guint i = 0; i < G_N_ELEMENTS (ops); i++)
          {
            g_snprintf (names[i], sizeof names[i], "f%04u", i);
            ops[i] = (QStoreWriteOp) { a, QSTORE_WRITE_OP_PUT, (const guint8 *) names[i],
                                       strlen (names[i]), (const guint8 *) "v", 1 };
          }
        g_assert_false (qstore_write_txn_write (owned, ops, G_N_ELEMENTS (ops), &error));
        g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_IO);
        g_clear_error (&error);
      }
      _qstore_fault_disarm_all ();
      g_assert_false (qstore_write_txn_is_open (txn));
      g_assert_false (qstore_write_txn_commit (txn, QSTORE_WRITE_NONE, &error));
      g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_CLOSED);
      g_clear_error (&error);
      keys = scan (a, all);
      g_assert_cmpstr (keys, ==, "a1");
      g_clear_pointer (&keys, g_free);
    }

  /* Writes go on as before. */
  put (a, "a5", "v5");
  assert_value (a, "a5", "v5");
}

/* An iterator over the transaction ends with it; closing the provider
 * aborts the transaction. */
static void
test_end_and_close (Fixture       *f,
                    gconstpointer  data)
{
  g_autoptr(QStoreKV) a = NULL;
  g_autoptr(QStoreWriteTxn) txn = NULL;
  g_autoptr(QStoreIter) iter = NULL;
  g_autoptr(QStoreBounds) all = qstore_bounds_new ();
  g_autoptr(GError) error = NULL;

  if (!has_write_txn (f))
    return;
  a = store (f, "main.a");
  txn = begin (f->provider);
  txn_put (txn, a, "a1", "v1");
  txn_put (txn, a, "a2", "v2");
  iter = qstore_snapshot_iterate (QSTORE_SNAPSHOT (txn), a, all, &error);
  g_assert_no_error (error);
  g_assert_true (qstore_iter_next (iter, &error));
  g_assert_no_error (error);
  g_assert_true (qstore_write_txn_commit (txn, QSTORE_WRITE_NONE, &error));
  g_assert_no_error (error);
  g_assert_false (qstore_iter_next (iter, &error));
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_CLOSED);
  g_clear_error (&error);
  g_clear_object (&iter);
  g_clear_object (&txn);
  assert_value (a, "a2", "v2");

  if (!persistent (f))
    return;
  txn = begin (f->provider);
  txn_put (txn, a, "a3", "v3");
  qstore_provider_close_all (f->provider);
  g_assert_false (qstore_write_txn_is_open (txn));
  g_assert_false (qstore_write_txn_put (txn, a, (const guint8 *) "z", 1,
                                        (const guint8 *) "z", 1, &error));
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_CLOSED);
  g_clear_error (&error);
  g_clear_object (&txn);
  g_clear_object (&a);
  reopen (f, QSTORE_OPEN_NONE);
  a = store (f, "main.a");
  assert_value (a, "a3", NULL);
  assert_value (a, "a2", "v2");
}

/* Stores dropped inside the transaction read back empty in it, and stay
 * as they were for everybody else until the commit. */
static void
test_drop (Fixture       *f,
           gconstpointer  data)
{
  g_autoptr(QStoreKV) a = NULL;
  g_autoptr(QStoreKV) b = NULL;
  g_autoptr(QStoreWriteTxn) txn = NULL;
  g_autoptr(QStoreBounds) all = qstore_bounds_new ();
  g_autoptr(GError) error = NULL;
  g_autofree char *keys = NULL;
  const char * const drop[] = { "main.a", "main.never", NULL };

  if (!has_write_txn (f))
    return;
  a = store (f, "main.a");
  b = store (f, "main.b");
  put (a, "a1", "v1");
  put (b, "b1", "v1");
  txn = begin (f->provider);
  txn_put (txn, b, "b2", "v2");
  g_assert_true (qstore_write_txn_drop_stores (txn, drop, &error));
  g_assert_no_error (error);
  keys = txn_scan (QSTORE_SNAPSHOT (txn), a, all);
  g_assert_cmpstr (keys, ==, "");
  g_clear_pointer (&keys, g_free);
  assert_value (a, "a1", "v1");
  /* Written after the drop: kept. */
  txn_put (txn, a, "a2", "v2");
  g_assert_true (qstore_write_txn_commit (txn, QSTORE_WRITE_SYNC, &error));
  g_assert_no_error (error);
  keys = scan (a, all);
  g_assert_cmpstr (keys, ==, "a2");
  g_clear_pointer (&keys, g_free);
  keys = scan (b, all);
  g_assert_cmpstr (keys, ==, "b1|b2");
}

/* Many more writes than one op list would hold, read back inside, then
 * committed. */
static void
test_large (Fixture       *f,
            gconstpointer  data)
{
  g_autoptr(QStoreKV) a = NULL;
  g_autoptr(QStoreWriteTxn) txn = NULL;
  g_autoptr(QStoreBounds) all = qstore_bounds_new ();
  g_autoptr(GError) error = NULL;
  g_autofree char *value = NULL;
  const guint n = 100000;
  guint inside = 0;

  if (!has_write_txn (f))
    return;
  a = store (f, "main.big");
  txn = begin (f->provider);
  txn_fill (txn, a, n, "a value of some thirty bytes..");
  {
    g_autoptr(QStoreIter) iter = qstore_snapshot_iterate (QSTORE_SNAPSHOT (txn), a, all, &error);

    g_assert_no_error (error);
    while (qstore_iter_next (iter, &error))
      inside++;
    g_assert_no_error (error);
  }
  g_assert_cmpuint (inside, ==, n);
  g_assert_cmpuint (count_entries (a), ==, 0);
  g_assert_true (qstore_write_txn_commit (txn, QSTORE_WRITE_SYNC, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (count_entries (a), ==, n);
  value = get (a, "k099999");
  g_assert_cmpstr (value, ==, "a value of some thirty bytes..");
}

/* The LMDB map */

static gboolean
is_lmdb (Fixture *f)
{
  if (g_str_equal (qstore_provider_get_name (f->provider), "lmdb") &&
      (f->caps & QSTORE_CAPABILITY_WRITE_TXN))
    return TRUE;
  g_test_skip ("the map is lmdb's, and only a write transaction cannot grow it");
  return FALSE;
}

/* Writes @n entries of @value_len bytes from key number @first through
 * @txn, or (NULL) one-shot to @provider, 1,024 at a time; FALSE with
 * @error at the first write that fails. */
static gboolean
fill_some (QStoreProvider  *provider,
           QStoreWriteTxn  *txn,
           QStoreKV        *kv,
           guint            first,
           guint            n,
           gsize            value_len,
           GError         **error)
{
  g_autofree char *value = g_strnfill (value_len, 'v');

  for (guint i = 0; i < n; )
    {
      QStoreWriteOp ops[1024];
      char keys[1024][16];
      guint m = MIN (n - i, G_N_ELEMENTS (ops));

      for (guint j = 0; j < m; j++)
        {
          g_snprintf (keys[j], sizeof keys[j], "k%07u", first + i + j);
          ops[j].store = kv;
          ops[j].kind = QSTORE_WRITE_OP_PUT;
          ops[j].key = (const guint8 *) keys[j];
          ops[j].key_len = strlen (keys[j]);
          ops[j].value = (const guint8 *) value;
          ops[j].value_len = value_len;
        }
      if (txn != NULL ? !qstore_write_txn_write (txn, ops, m, error)
                      : !qstore_provider_write (provider, ops, m, QSTORE_WRITE_NONE, error))
        return FALSE;
      i += m;
    }
  return TRUE;
}

static char *
small_map_uri (Fixture *f)
{
  g_autofree char *dir = g_build_filename (f->dir, "small", NULL);

  g_assert_cmpint (g_mkdir_with_parents (dir, 0700), ==, 0);
  return g_strdup_printf ("lmdb:%s?map_size=%u", dir, 4u << 20);
}

/* A transaction that outgrows a small map fails with a message that says
 * what to do, and leaves the store exactly as it was. */
static void
test_map_full (Fixture       *f,
               gconstpointer  data)
{
  g_autofree char *uri = NULL;
  g_autoptr(QStoreProvider) provider = NULL;
  g_autoptr(QStoreKV) kv = NULL;
  g_autoptr(QStoreWriteTxn) txn = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *base = NULL;

  if (!is_lmdb (f))
    return;
  uri = small_map_uri (f);
  provider = open_provider (uri, QSTORE_OPEN_NONE);
  kv = store_of (provider, "main.big");
  put (kv, "base", "committed");

  /* Some 16 MB into a 4 MiB map. */
  txn = begin (provider);
  g_assert_false (fill_some (provider, txn, kv, 0, 80000, 200, &error));
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_IO);
  g_assert_nonnull (strstr (error->message, "outgrew the LMDB map"));
  g_assert_nonnull (strstr (error->message, "map_size"));
  g_test_message ("%s", error->message);
  g_clear_error (&error);
  g_assert_false (qstore_write_txn_is_open (txn));
  g_clear_object (&txn);
  g_assert_cmpuint (count_entries (kv), ==, 1);

  g_clear_object (&kv);
  qstore_provider_close_all (provider);
  g_clear_object (&provider);
  provider = open_provider (uri, QSTORE_OPEN_NONE);
  kv = store_of (provider, "main.big");
  g_assert_cmpuint (count_entries (kv), ==, 1);
  base = get (kv, "base");
  g_assert_cmpstr (base, ==, "committed");
  /* One-shot writes still grow the map. */
  g_assert_true (fill_some (provider, NULL, kv, 0, 80000, 200, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (count_entries (kv), ==, 80001);
  g_clear_object (&kv);
  qstore_provider_close_all (provider);
}

/* A write transaction begins with at least as much of the map free as
 * the store uses: a store that filled its map grows it first. */
static void
test_map_room (Fixture       *f,
               gconstpointer  data)
{
  g_autofree char *uri = NULL;
  g_autoptr(QStoreProvider) provider = NULL;
  g_autoptr(QStoreKV) kv = NULL;
  g_autoptr(QStoreWriteTxn) txn = NULL;
  g_autoptr(GError) error = NULL;

  if (!is_lmdb (f))
    return;
  uri = small_map_uri (f);
  provider = open_provider (uri, QSTORE_OPEN_NONE);
  kv = store_of (provider, "main.big");
  /* Some 9 MB, one-shot: the map grows to fit. */
  g_assert_true (fill_some (provider, NULL, kv, 0, 40000, 200, &error));
  g_assert_no_error (error);

  txn = begin (provider);
  g_assert_true (fill_some (provider, txn, kv, 40000, 30000, 200, &error));
  g_assert_no_error (error);
  g_assert_true (qstore_write_txn_commit (txn, QSTORE_WRITE_SYNC, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (count_entries (kv), ==, 70000);
  g_clear_object (&kv);
  qstore_provider_close_all (provider);
}

/* The map size data.mdb's newer meta page records. */
static guint64
recorded_map_size (const char *dir)
{
  g_autofree char *path = g_build_filename (dir, "data.mdb", NULL);
  g_autofree char *contents = NULL;
  g_autoptr(GError) error = NULL;
  guint64 size[2], txnid[2];
  guint32 page_size;
  gsize len;

  g_assert_true (g_file_get_contents (path, &contents, &len, &error));
  g_assert_no_error (error);
  /* A meta page: its 16-byte header, magic (4), version (4), address
   * (8), map size (8), the free database's record (its first 4 bytes the
   * page size) and the main one's (48 each), last page (8), txnid (8). */
  memcpy (&page_size, contents + 16 + 24, sizeof page_size);
  g_assert_cmpuint (len, >=, (gsize) page_size * 2);
  for (guint i = 0; i < 2; i++)
    {
      memcpy (&size[i], contents + i * page_size + 16 + 16, sizeof size[i]);
      memcpy (&txnid[i], contents + i * page_size + 16 + 24 + 2 * 48 + 8, sizeof txnid[i]);
    }
  return txnid[1] > txnid[0] ? size[1] : size[0];
}

/* Without the map_size option the map is large where address space is:
 * it costs nothing, since data.mdb grows only as pages are used. */
static void
test_map_default (Fixture       *f,
                  gconstpointer  data)
{
  g_autofree char *dir = NULL;
  g_autofree char *uri = NULL;
  g_autoptr(QStoreProvider) provider = NULL;
  g_autoptr(QStoreKV) kv = NULL;
  GStatBuf st;
  g_autofree char *file = NULL;

  if (!is_lmdb (f))
    return;
  dir = g_build_filename (f->dir, "default", NULL);
  g_assert_cmpint (g_mkdir_with_parents (dir, 0700), ==, 0);
  uri = g_strdup_printf ("lmdb:%s", dir);
  provider = open_provider (uri, QSTORE_OPEN_NONE);
  kv = store_of (provider, "main.t");
  put (kv, "a", "1");
  g_clear_object (&kv);
  qstore_provider_close_all (provider);

  if (sizeof (gsize) >= 8)
    g_assert_cmpuint (recorded_map_size (dir), ==, G_GUINT64_CONSTANT (64) << 30);
  else
    g_assert_cmpuint (recorded_map_size (dir), ==, G_GUINT64_CONSTANT (1) << 30);
  file = g_build_filename (dir, "data.mdb", NULL);
  g_assert_cmpint (g_stat (file, &st), ==, 0);
  g_assert_cmpint (st.st_size, <, 1 << 20);
}

/* Crashes */

/* --txn-writer URI N MODE: writes N entries to main.crash through a write
 * transaction, over the committed base (main.crash:base = committed) and
 * then: MODE "open" says "written" and waits to be killed; MODE "commit"
 * says "committing", commits and says "committed", then waits. */
static int
txn_writer (const char *uri,
            guint       n,
            const char *mode)
{
  g_autoptr(QStoreProvider) provider = NULL;
  g_autoptr(QStoreKV) kv = NULL;
  g_autoptr(QStoreWriteTxn) txn = NULL;
  g_autoptr(GError) error = NULL;

  prctl (PR_SET_PDEATHSIG, SIGKILL);
  provider = open_provider (uri, QSTORE_OPEN_NONE);
  kv = store_of (provider, "main.crash");
  txn = begin (provider);
  txn_put (txn, kv, "base", "overwritten");
  txn_fill (txn, kv, n, "crash test value");
  if (g_str_equal (mode, "open"))
    {
      g_print ("written\n");
      fflush (stdout);
    }
  else
    {
      g_print ("committing\n");
      fflush (stdout);
      if (!qstore_write_txn_commit (txn, QSTORE_WRITE_SYNC, &error))
        g_error ("commit: %s", error->message);
      g_print ("committed\n");
      fflush (stdout);
    }
  g_usleep (60 * G_USEC_PER_SEC);
  return 0;
}

int
conformance_write_txn_child (int    argc,
                             char **argv)
{
  self_path = argv[0];
  if (argc == 5 && g_str_equal (argv[1], "--txn-writer"))
    return txn_writer (argv[2], (guint) g_ascii_strtoull (argv[3], NULL, 10), argv[4]);
  return -1;
}

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

/* Runs the child writer on @f's location and kills it @delay_us after it
 * says @wait_for; returns whether it had said "committed" by then. */
static gboolean
kill_writer (Fixture    *f,
             guint       n,
             const char *mode,
             const char *wait_for,
             gulong      delay_us)
{
  g_autofree char *count = g_strdup_printf ("%u", n);
  const char *argv[] = { self_path, "--txn-writer", f->uri, count, mode, NULL };
  g_autoptr(GError) error = NULL;
  g_autofree char *line = NULL;
  gboolean committed = FALSE;
  GPid pid;
  int out_fd, status;

  g_spawn_async_with_pipes (NULL, (char **) argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD, NULL, NULL,
                            &pid, NULL, &out_fd, NULL, &error);
  g_assert_no_error (error);
  line = read_line (out_fd);
  g_assert_cmpstr (line, ==, wait_for);
  if (delay_us > 0)
    g_usleep (delay_us);
  g_assert_cmpint (kill (pid, SIGKILL), ==, 0);
  g_assert_cmpint (waitpid (pid, &status, 0), ==, pid);
  g_assert_true (WIFSIGNALED (status) && WTERMSIG (status) == SIGKILL);
  g_spawn_close_pid (pid);
  /* What it said before it died. */
  g_clear_pointer (&line, g_free);
  while ((line = read_line (out_fd)) != NULL)
    {
      committed |= g_str_equal (line, "committed");
      g_clear_pointer (&line, g_free);
    }
  close (out_fd);

  /* A server frees a killed client's lock when it notices the session
   * ended, which a loaded machine delays: wait for it, as a user's next
   * writer would with ?wait_ms. */
  if (f->caps & QSTORE_CAPABILITY_WRITER_LOCK)
    {
      g_autofree char *waiting = g_strconcat (f->uri, strchr (f->uri, '?') != NULL ? "&" : "?",
                                              "wait_ms=10000", NULL);
      g_autoptr(QStoreProvider) provider = open_provider (waiting, QSTORE_OPEN_NONE);

      qstore_provider_close_all (provider);
    }
  return committed;
}

/* Killed with the transaction open: nothing of it is stored, the
 * committed state is intact, and the location opens for writing. */
static void
test_crash_open (Fixture       *f,
                 gconstpointer  data)
{
  g_autoptr(QStoreKV) kv = NULL;

  if (!has_write_txn (f) || !persistent (f))
    return;
  kv = store (f, "main.crash");
  put (kv, "base", "committed");
  g_clear_object (&kv);
  qstore_provider_close_all (f->provider);

  kill_writer (f, 50000, "open", "written", 0);

  reopen (f, QSTORE_OPEN_NONE);
  kv = store (f, "main.crash");
  assert_value (kv, "base", "committed");
  g_assert_cmpuint (count_entries (kv), ==, 1);
  put (kv, "after", "crash");
  assert_value (kv, "after", "crash");
}

/* Killed while committing, at several moments: all of the transaction or
 * none of it, all of it once the commit returned. */
static void
test_crash_commit (Fixture       *f,
                   gconstpointer  data)
{
  const gulong delays_us[] = { 0, 500, 2000, 8000, 30000, 200000 };
  const guint n = 100000;
  guint n_all = 0, n_none = 0;

  if (!has_write_txn (f) || !persistent (f))
    return;
  qstore_provider_close_all (f->provider);

  for (guint i = 0; i < G_N_ELEMENTS (delays_us); i++)
    {
      g_autoptr(QStoreKV) kv = NULL;
      g_autofree char *base = NULL;
      gboolean committed;
      guint entries;

      /* A fresh base each round: the last round may have committed. */
      reopen (f, QSTORE_OPEN_NONE);
      kv = store (f, "main.crash");
      {
        g_autoptr(QStoreBatch) wipe = qstore_kv_new_batch (kv);
        g_autoptr(QStoreBounds) all = qstore_bounds_new ();
        g_autoptr(QStoreIter) iter = qstore_kv_iterate (kv, all, NULL);
        g_autoptr(GError) error = NULL;

        while (qstore_iter_next (iter, &error))
          {
            gsize len;
            const guint8 *key = qstore_iter_peek_key (iter, &len);

            qstore_batch_delete (wipe, key, len);
          }
        g_assert_no_error (error);
        g_clear_object (&iter);
        qstore_batch_put (wipe, (const guint8 *) "base", 4, (const guint8 *) "committed", 9);
        g_assert_true (qstore_batch_write (wipe, QSTORE_WRITE_SYNC, &error));
        g_assert_no_error (error);
      }
      g_clear_object (&kv);
      qstore_provider_close_all (f->provider);

      committed = kill_writer (f, n, "commit", "committing", delays_us[i]);

      reopen (f, QSTORE_OPEN_NONE);
      kv = store (f, "main.crash");
      base = get (kv, "base");
      entries = count_entries (kv);
      if (g_str_equal (base, "committed"))
        {
          g_assert_false (committed);
          g_assert_cmpuint (entries, ==, 1);
          n_none++;
        }
      else
        {
          g_assert_cmpstr (base, ==, "overwritten");
          g_assert_cmpuint (entries, ==, n + 1);
          n_all++;
        }
      g_test_message ("killed %lu µs into the commit: %s stored", delays_us[i],
                      g_str_equal (base, "committed") ? "nothing" : "everything");
      g_clear_object (&kv);
      qstore_provider_close_all (f->provider);
    }
  /* The last delay is long past the commit. */
  g_assert_cmpuint (n_all, >, 0);
  reopen (f, QSTORE_OPEN_NONE);
}

void
conformance_add_write_txn_tests (const char *prefix)
{
#define ADD(case_name, func) G_STMT_START { \
    g_autofree char *path_ = g_strconcat (prefix, "/write-txn/", case_name, NULL); \
    g_test_add (path_, Fixture, NULL, fixture_setup, func, fixture_teardown); \
  } G_STMT_END

  ADD ("unsupported", test_unsupported);
  ADD ("read-own-writes", test_read_own_writes);
  ADD ("abort", test_abort);
  ADD ("end-and-close", test_end_and_close);
  ADD ("drop", test_drop);
  ADD ("large", test_large);
  ADD ("map-full", test_map_full);
  ADD ("map-room", test_map_room);
  ADD ("map-default", test_map_default);
  ADD ("crash-open", test_crash_open);
  ADD ("crash-commit", test_crash_commit);
#undef ADD
}
