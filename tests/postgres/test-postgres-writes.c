/* test-postgres-writes.c: the writer's batches and its reads by store id
 *
 * Runs under with-postgres.sh. A batch may touch a key many times; the
 * writer keeps the last op per key (an open-addressed set, see
 * qstore-postgres-write.c) as a statement may touch a key once. Big
 * batches plan their statements generically, and the biggest go out in
 * chunks, each key in one of them. The writer's reads name a
 * store by its id, which a rename must not leave stale. A writer's close
 * lets go of its lock before it returns.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "qstore-test-util.h"
#include "test-pg-util.h"

/* What key @i holds after write_pattern(), or NULL. */
static const char *
expected (guint i)
{
  if (i % 3 == 0)
    return "second";
  if (i % 2 == 0)
    return NULL;
  return "first";
}

/* @n keys put, the even ones deleted, those divisible by 3 put again: a
 * batch of about 2.2 ops per key, in one write. */
static void
write_pattern (QStoreKV *store,
               guint     n)
{
  g_autoptr(QStoreBatch) batch = qstore_kv_new_batch (store);
  g_autoptr(GError) error = NULL;

  for (guint i = 0; i < n; i++)
    {
      g_autofree char *key = g_strdup_printf ("k%05u", i);

      qstore_batch_put (batch, (const guint8 *) key, strlen (key), (const guint8 *) "first", 5);
    }
  for (guint i = 0; i < n; i += 2)
    {
      g_autofree char *key = g_strdup_printf ("k%05u", i);

      qstore_batch_delete (batch, (const guint8 *) key, strlen (key));
    }
  for (guint i = 0; i < n; i += 3)
    {
      g_autofree char *key = g_strdup_printf ("k%05u", i);

      qstore_batch_put (batch, (const guint8 *) key, strlen (key), (const guint8 *) "second", 6);
    }
  g_assert_true (qstore_batch_write (batch, QSTORE_WRITE_SYNC, &error));
  g_assert_no_error (error);
}

static void
assert_pattern (QStoreKV *store,
                guint     n)
{
  g_autoptr(QStoreIter) iter = NULL;
  g_autoptr(GError) error = NULL;
  guint count = 0, seen = 0;

  for (guint i = 0; i < n; i++)
    {
      g_autofree char *key = g_strdup_printf ("k%05u", i);
      g_autoptr(GBytes) value = qstore_kv_get (store, (const guint8 *) key, strlen (key), &error);

      g_assert_no_error (error);
      if (expected (i) == NULL)
        g_assert_null (value);
      else
        {
          g_assert_nonnull (value);
          g_assert_cmpmem (g_bytes_get_data (value, NULL), g_bytes_get_size (value),
                           expected (i), strlen (expected (i)));
          count++;
        }
    }

  /* A range: its first page on the writer's session, the rest pooled. */
  iter = qstore_kv_iterate (store, NULL, &error);
  g_assert_no_error (error);
  while (qstore_iter_next (iter, &error))
    {
      gsize len;
      const guint8 *key = qstore_iter_peek_key (iter, &len);
      g_autofree char *text = g_strndup ((const char *) key, len);

      g_assert_nonnull (expected ((guint) g_ascii_strtoull (text + 1, NULL, 10)));
      seen++;
    }
  g_assert_no_error (error);
  g_assert_cmpuint (seen, ==, count);
}

static void
test_last_op_wins (void)
{
  g_autofree char *dir = test_make_tmp_dir ("qstore-pg-writes-XXXXXX");
  g_autofree char *uri = test_provider_uri (dir, "writes");
  g_autoptr(GError) error = NULL;
  g_autoptr(QStoreProvider) provider = qstore_provider_new_for_uri (uri, QSTORE_OPEN_NONE,
                                                                    &error);
  /* Below and above the size from which plans are generic, and a write
   * sent on in several chunks (qstore-postgres-write.c). */
  const guint sizes[] = { 40, 3000, 20000 };

  g_assert_no_error (error);
  for (guint s = 0; s < G_N_ELEMENTS (sizes); s++)
    {
      g_autofree char *table = g_strdup_printf ("t%u", s);
      g_autoptr(QStoreKV) store = qstore_provider_get_store (provider, "w", table, &error);

      g_assert_no_error (error);
      /* Once into a new store, once into one the writer knows by id. */
      write_pattern (store, sizes[s]);
      assert_pattern (store, sizes[s]);
      write_pattern (store, sizes[s]);
      assert_pattern (store, sizes[s]);
    }

  /* After a rename, the writer reads the new name's entries, and none
   * under the old one. */
  {
    g_autoptr(QStoreKV) old_store = qstore_provider_get_store (provider, "w", "t1", &error);
    g_autoptr(QStoreKV) new_store = NULL;
    g_autoptr(GBytes) gone = NULL;

    g_assert_true (qstore_provider_rename_table_stores (provider, "w", "t1", "u", NULL,
                                                        &error));
    g_assert_no_error (error);
    new_store = qstore_provider_get_store (provider, "w", "u", &error);
    g_assert_no_error (error);
    assert_pattern (new_store, sizes[1]);
    gone = qstore_kv_get (old_store, (const guint8 *) "k00001", 6, &error);
    g_assert_no_error (error);
    g_assert_null (gone);
  }

  qstore_provider_close_all (provider);
  test_remove_tree (dir);
}

/* The writer locks held in the server's database, as another session
 * sees them. */
static gint64
writer_locks (PGconn *pg)
{
  return test_pg_int (pg, "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' "
                          "AND database = (SELECT oid FROM pg_database "
                          "WHERE datname = current_database())");
}

/* A writer that closes lets go of the location at once, not when the
 * server gets round to ending its session: another session sees no
 * writer lock right after, and the next open for writing finds the
 * location free. */
static void
test_reopen_at_once (void)
{
  g_autofree char *dir = test_make_tmp_dir ("qstore-pg-writes-XXXXXX");
  g_autofree char *uri = test_provider_uri (dir, "reopen");
  PGconn *pg = PQconnectdb (g_getenv ("QSTORE_TEST_POSTGRES"));

  g_assert_cmpint (PQstatus (pg), ==, CONNECTION_OK);
  for (guint i = 0; i < 40; i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(QStoreProvider) provider = qstore_provider_new_for_uri (uri, QSTORE_OPEN_NONE,
                                                                        &error);
      g_autoptr(QStoreKV) store = NULL;
      g_autofree char *value = g_strdup_printf ("%u", i);
      g_autofree char *last = g_strdup_printf ("%u", i - 1);
      g_autoptr(GBytes) before = NULL;

      g_assert_no_error (error);
      store = qstore_provider_get_store (provider, "w", "t", &error);
      g_assert_no_error (error);
      /* What the last writer wrote. */
      before = qstore_kv_get (store, (const guint8 *) "k", 1, &error);
      g_assert_no_error (error);
      if (i > 0)
        g_assert_cmpmem (g_bytes_get_data (before, NULL), g_bytes_get_size (before),
                         last, strlen (last));
      g_assert_true (qstore_kv_put (store, (const guint8 *) "k", 1, (const guint8 *) value,
                                    strlen (value), QSTORE_WRITE_SYNC, &error));
      g_assert_no_error (error);
      g_assert_cmpint (writer_locks (pg), ==, 1);
      qstore_provider_close_all (provider);
      g_assert_cmpint (writer_locks (pg), ==, 0);
    }
  PQfinish (pg);
  test_remove_tree (dir);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/postgres/writes/last-op-wins", test_last_op_wins);
  g_test_add_func ("/postgres/writes/reopen-at-once", test_reopen_at_once);
  return g_test_run ();
}
