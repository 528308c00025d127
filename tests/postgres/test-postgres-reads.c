/* test-postgres-reads.c: the state a postgres iterator sees
 *
 * Runs under with-postgres.sh. An iterator outside a snapshot reads a
 * range that fits in its first page with one statement and no
 * transaction; a longer range is read again in a read transaction that
 * its next pages share. Either way it sees the state of its creation,
 * whatever the writer does meanwhile. A snapshot names a store by its id
 * only while the id names the same store in its state.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "qstore-test-util.h"

static void
put_key (QStoreKV   *kv,
         const char *key)
{
  g_autoptr(GError) error = NULL;

  g_assert_true (qstore_kv_put (kv, (const guint8 *) key, strlen (key),
                                (const guint8 *) "v", 1, 0, &error));
  g_assert_no_error (error);
}

/* Creates an iterator over a store of @n keys, then changes the store:
 * the iterator sees the @n keys, exactly. */
static void
check_range (QStoreProvider *provider,
             const char     *name,
             guint           n)
{
  g_autoptr(QStoreKV) kv = qstore_provider_open_store (provider, name, NULL);
  g_autoptr(QStoreIter) iter = NULL;
  g_autoptr(GError) error = NULL;
  guint seen = 0;

  for (guint i = 0; i < n; i++)
    {
      g_autofree char *key = g_strdup_printf ("k%05u", i);

      put_key (kv, key);
    }
  iter = qstore_kv_iterate (kv, NULL, &error);
  g_assert_no_error (error);

  /* After the iterator's creation: one key more at each end, the
   * second one gone. */
  put_key (kv, "a");
  put_key (kv, "z");
  g_assert_true (qstore_kv_delete (kv, (const guint8 *) "k00001", 6, 0, &error));
  g_assert_no_error (error);

  while (qstore_iter_next (iter, &error))
    {
      g_autofree char *expected = g_strdup_printf ("k%05u", seen);
      gsize len;
      const guint8 *key = qstore_iter_peek_key (iter, &len);

      g_assert_cmpmem (key, len, expected, strlen (expected));
      seen++;
    }
  g_assert_no_error (error);
  g_assert_cmpuint (seen, ==, n);
}

static void
test_iterator_state (void)
{
  g_autofree char *dir = test_make_tmp_dir ("qstore-pg-reads-XXXXXX");
  g_autofree char *uri = test_provider_uri (dir, "reads");
  g_autoptr(QStoreProvider) provider = NULL;
  g_autoptr(GError) error = NULL;

  provider = qstore_provider_new_for_uri (uri, QSTORE_OPEN_NONE, &error);
  g_assert_no_error (error);
  /* Fits in the first page (128 rows), then three pages and more. */
  check_range (provider, "main.short", 10);
  check_range (provider, "main.long", 700);
  test_remove_tree (dir);
}

static void
assert_value (QStoreSnapshot *snapshot,
              QStoreKV       *kv,
              const char     *expected)
{
  g_autoptr(GError) error = NULL;
  const guint8 *value = NULL;
  gsize len = 0;
  gboolean found = qstore_snapshot_lookup (snapshot, kv, (const guint8 *) "k", 1, &value, &len,
                                           &error);

  g_assert_no_error (error);
  g_assert_cmpint (found, ==, expected != NULL);
  if (expected != NULL)
    g_assert_cmpmem (value, len, expected, strlen (expected));
}

static guint
snapshot_count (QStoreSnapshot *snapshot,
                QStoreKV       *kv)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(QStoreIter) iter = qstore_snapshot_iterate (snapshot, kv, NULL, &error);

  g_assert_no_error (error);
  return test_iter_count (iter);
}

static void
put_value (QStoreKV   *kv,
           const char *value)
{
  g_autoptr(GError) error = NULL;

  g_assert_true (qstore_kv_put (kv, (const guint8 *) "k", 1, (const guint8 *) value,
                                strlen (value), QSTORE_WRITE_SYNC, &error));
  g_assert_no_error (error);
}

/* A snapshot reads a store by the id the writer knows for its name only
 * while that id names the same store in the snapshot's state: not after
 * a rename, nor while or after a write transaction that dropped and
 * made the store again. */
static void
test_snapshot_names (void)
{
  g_autofree char *dir = test_make_tmp_dir ("qstore-pg-reads-XXXXXX");
  g_autofree char *uri = test_provider_uri (dir, "names");
  g_autoptr(QStoreProvider) provider = NULL;
  g_autoptr(QStoreKV) a = NULL;
  g_autoptr(QStoreKV) b = NULL;
  g_autoptr(QStoreSnapshot) before = NULL;
  g_autoptr(QStoreSnapshot) during = NULL;
  g_autoptr(QStoreWriteTxn) txn = NULL;
  g_autoptr(GError) error = NULL;
  const char * const drop[] = { "main.a", NULL };

  provider = qstore_provider_new_for_uri (uri, QSTORE_OPEN_NONE, &error);
  g_assert_no_error (error);
  a = qstore_provider_open_store (provider, "main.a", &error);
  b = qstore_provider_open_store (provider, "main.b", &error);
  g_assert_no_error (error);
  put_value (a, "old");

  before = qstore_provider_begin_snapshot (provider, &error);
  g_assert_no_error (error);
  assert_value (before, a, "old");
  g_assert_true (qstore_provider_rename_table_stores (provider, "main", "a", "b", NULL, &error));
  g_assert_no_error (error);
  put_value (a, "new");
  assert_value (before, a, "old");
  assert_value (before, b, NULL);
  g_assert_cmpuint (snapshot_count (before, b), ==, 0);
  g_assert_cmpuint (snapshot_count (before, a), ==, 1);

  txn = qstore_provider_begin_write (provider, &error);
  g_assert_no_error (error);
  g_assert_true (qstore_write_txn_drop_stores (txn, drop, &error));
  g_assert_no_error (error);
  g_assert_true (qstore_write_txn_put (txn, a, (const guint8 *) "k", 1, (const guint8 *) "txn", 3,
                                       &error));
  g_assert_no_error (error);
  during = qstore_provider_begin_snapshot (provider, &error);
  g_assert_no_error (error);
  assert_value (during, a, "new");
  g_assert_cmpuint (snapshot_count (during, a), ==, 1);
  g_assert_true (qstore_write_txn_commit (txn, QSTORE_WRITE_SYNC, &error));
  g_assert_no_error (error);
  assert_value (during, a, "new");
  assert_value (before, a, "old");
  g_assert_cmpuint (snapshot_count (during, a), ==, 1);
  {
    g_autoptr(QStoreSnapshot) after = qstore_provider_begin_snapshot (provider, &error);

    g_assert_no_error (error);
    assert_value (after, a, "txn");
    assert_value (after, b, "old");
  }
  g_clear_object (&before);
  g_clear_object (&during);
  qstore_provider_close_all (provider);
  test_remove_tree (dir);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/postgres/reads/iterator-state", test_iterator_state);
  g_test_add_func ("/postgres/reads/snapshot-names", test_snapshot_names);
  return g_test_run ();
}
