/* test-sqlite-format.c: the sqlite provider's file format: big values kept
 * out of the key b-tree, stores of the first format brought up to it,
 * what an iterator hands out once the file is closed under it, and a
 * write after reads when another writer changed the file
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <sqlite3.h>
#include <string.h>

#include <qstore.h>

#include "qstore-fault-private.h"
#include "qstore-test-util.h"

/* SQLite's own view of the file. */
static gint64
sql_int (const char *path,
         const char *sql)
{
  sqlite3 *db = NULL;
  sqlite3_stmt *stmt = NULL;
  gint64 value;

  g_assert_cmpint (sqlite3_open_v2 (path, &db, SQLITE_OPEN_READONLY, NULL), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_prepare_v2 (db, sql, -1, &stmt, NULL), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_step (stmt), ==, SQLITE_ROW);
  value = sqlite3_column_int64 (stmt, 0);
  sqlite3_finalize (stmt);
  sqlite3_close (db);
  return value;
}

/* Integers and NULLs are all the queries below return. */
static void
append_value (GString  *out,
              GVariant *value)
{
  if (qstore_value_is_null (value))
    g_string_append (out, "null");
  else
    g_string_append_printf (out, "i:%" G_GINT64_FORMAT, g_variant_get_int64 (value));
}

static QStoreProvider *
open_sqlite (const char      *path,
             QStoreOpenFlags  flags)
{
  g_autoptr(GError) error = NULL;
  QStoreProvider *provider = qstore_provider_new ("sqlite", path, flags, &error);

  g_assert_no_error (error);
  return provider;
}

static void
assert_clean (QStoreProvider *provider)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(QStoreCheckReport) report = qstore_provider_check (provider, &error);

  g_assert_no_error (error);
  if (!qstore_check_report_is_clean (report))
    {
      g_autofree char *json = qstore_check_report_to_json (report);

      g_error ("the check found problems: %s", json);
    }
}

static void
assert_value (QStoreKV   *kv,
              const char *key,
              gsize       len,
              char        fill)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) value = qstore_kv_get (kv, (const guint8 *) key, strlen (key), &error);
  g_autofree char *expected = g_strnfill (len, fill);

  g_assert_no_error (error);
  g_assert_nonnull (value);
  g_assert_cmpmem (g_bytes_get_data (value, NULL), g_bytes_get_size (value), expected, len);
}

static void
put_filled (QStoreKV   *kv,
            const char *key,
            gsize       len,
            char        fill)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *value = g_strnfill (len, fill);

  qstore_kv_put (kv, (const guint8 *) key, strlen (key), (const guint8 *) value, len,
                 QSTORE_WRITE_NONE, &error);
  g_assert_no_error (error);
}

/* A store the first format wrote (tests/providers/data/sqlite-format1.db,
 * made by the provider as it was before big values moved out: a table
 * t (id, name, body) with an index on name, rows (1, 'small', x'00ff'),
 * (2, 3000 × 'n', 5000 zero bytes), (3, 'three', NULL), and a store
 * main.raw with a = 1, big = 4000 × 'y', c = 3). A read-only open reads
 * it as it is and changes nothing; a writable open brings it to the
 * current format, moving the big values, and everything reads the same. */
static void
test_migration (void)
{
  g_autofree char *fixture = g_test_build_filename (G_TEST_DIST, "providers", "data",
                                                   "sqlite-format1.db", NULL);
  g_autofree char *dir = test_make_tmp_dir ("qstore-sqlite-format-XXXXXX");
  g_autofree char *path = g_build_filename (dir, "store.db", NULL);
  g_autofree char *uri = g_strconcat ("sqlite:", path, NULL);
  g_autofree char *contents = NULL;
  g_autofree char *before = NULL;
  g_autofree char *after = NULL;
  gsize len;

  g_assert_true (g_file_get_contents (fixture, &contents, &len, NULL));
  g_assert_true (g_file_set_contents (path, contents, len, NULL));
  g_assert_cmpint (sql_int (path, "PRAGMA user_version"), ==, 1);
  before = g_compute_checksum_for_data (G_CHECKSUM_SHA256, (const guint8 *) contents, len);

  {
    g_autoptr(QStoreProvider) provider = open_sqlite (path, QSTORE_OPEN_READ_ONLY);
    g_autoptr(QStoreKV) raw = qstore_provider_open_store (provider, "main.raw", NULL);

    assert_value (raw, "big", 4000, 'y');
    assert_value (raw, "a", 1, '1');
    assert_clean (provider);
  }
  g_clear_pointer (&contents, g_free);
  g_assert_true (g_file_get_contents (path, &contents, &len, NULL));
  after = g_compute_checksum_for_data (G_CHECKSUM_SHA256, (const guint8 *) contents, len);
  g_assert_cmpstr (after, ==, before);
  g_assert_cmpint (sql_int (path, "PRAGMA user_version"), ==, 1);

  {
    g_autoptr(QStoreProvider) provider = open_sqlite (path, QSTORE_OPEN_NONE);
    g_autoptr(QStoreKV) raw = qstore_provider_open_store (provider, "main.raw", NULL);

    assert_value (raw, "big", 4000, 'y');
    assert_value (raw, "c", 1, '3');
    assert_clean (provider);
  }
  g_assert_cmpint (sql_int (path, "PRAGMA user_version"), ==, 2);
  /* main.raw's big, t's 5000-byte row, and its index entry with a
   * 3000-byte key. */
  g_assert_cmpint (sql_int (path, "SELECT count(*) FROM big_values"), ==, 3);
  g_assert_cmpint (sql_int (path, "SELECT count(*) FROM kv WHERE typeof (value) = 'integer'"),
                   ==, 3);

  /* The tables read as they did. */
  {
    g_autoptr(QStoreDatabase) db = test_open_database (uri, QSTORE_OPEN_NONE);
    g_autofree char *rows = test_query_text (db, "SELECT id, length (name), length (body) "
                                             "FROM t ORDER BY id", append_value);
    g_autofree char *by_name = test_query_text (db, "SELECT id FROM t WHERE name = "
                                                "printf ('%.3000c', 'n')", append_value);

    g_assert_cmpstr (rows, ==, "i:1|i:5|i:2\ni:2|i:3000|i:5000\ni:3|i:5|null\n");
    g_assert_cmpstr (by_name, ==, "i:2\n");
    test_close_database (&db);
  }

  /* Once is enough. */
  {
    g_autoptr(QStoreProvider) provider = open_sqlite (path, QSTORE_OPEN_NONE);

    assert_clean (provider);
  }
  g_assert_cmpint (sql_int (path, "SELECT count(*) FROM big_values"), ==, 3);
  test_remove_tree (dir);
}

/* Big values come and go with their entries, in every kind of write. */
static void
test_big_values (void)
{
  g_autofree char *dir = test_make_tmp_dir ("qstore-sqlite-format-XXXXXX");
  g_autofree char *path = g_build_filename (dir, "store.db", NULL);
  g_autoptr(QStoreProvider) provider = open_sqlite (path, QSTORE_OPEN_NONE);
  g_autoptr(QStoreKV) kv = qstore_provider_get_store (provider, "main", "t", NULL);
  g_autoptr(GError) error = NULL;
  const char *no_index[] = { NULL };

  put_filled (kv, "small", 10, 's');
  g_assert_cmpint (sql_int (path, "SELECT count(*) FROM big_values"), ==, 0);
  put_filled (kv, "big", 50000, 'b');
  assert_value (kv, "big", 50000, 'b');
  g_assert_cmpint (sql_int (path, "SELECT count(*) FROM big_values"), ==, 1);

  /* Big over big, small over big, big over small. */
  put_filled (kv, "big", 60000, 'c');
  assert_value (kv, "big", 60000, 'c');
  g_assert_cmpint (sql_int (path, "SELECT count(*) FROM big_values"), ==, 1);
  put_filled (kv, "big", 5, 'd');
  assert_value (kv, "big", 5, 'd');
  g_assert_cmpint (sql_int (path, "SELECT count(*) FROM big_values"), ==, 0);
  put_filled (kv, "small", 70000, 'e');
  g_assert_cmpint (sql_int (path, "SELECT count(*) FROM big_values"), ==, 1);

  /* Snapshots and iterators read them too. */
  {
    g_autoptr(QStoreSnapshot) snapshot = qstore_provider_begin_snapshot (provider, &error);
    g_autoptr(QStoreIter) iter = NULL;
    const guint8 *value;
    gsize len;

    g_assert_no_error (error);
    g_assert_true (qstore_snapshot_lookup (snapshot, kv, (const guint8 *) "small", 5, &value,
                                           &len, &error));
    g_assert_cmpuint (len, ==, 70000);
    g_assert_cmpint (value[69999], ==, 'e');
    iter = qstore_snapshot_iterate (snapshot, kv, NULL, &error);
    g_assert_true (qstore_iter_next (iter, &error));
    g_assert_true (qstore_iter_next (iter, &error));
    value = qstore_iter_peek_value (iter, &len);
    g_assert_cmpuint (len, ==, 70000);
    g_assert_cmpint (value[0], ==, 'e');
  }

  qstore_kv_delete (kv, (const guint8 *) "small", 5, QSTORE_WRITE_NONE, &error);
  g_assert_no_error (error);
  g_assert_cmpint (sql_int (path, "SELECT count(*) FROM big_values"), ==, 0);

  /* Renamed stores keep theirs; dropped ones take theirs along. */
  put_filled (kv, "x", 80000, 'x');
  qstore_provider_rename_table_stores (provider, "main", "t", "u", no_index, &error);
  g_assert_no_error (error);
  {
    g_autoptr(QStoreKV) u = qstore_provider_get_store (provider, "main", "u", NULL);

    assert_value (u, "x", 80000, 'x');
  }
  g_assert_cmpint (sql_int (path, "SELECT count(*) FROM big_values"), ==, 1);
  qstore_provider_delete_table_stores (provider, "main", "u", no_index, &error);
  g_assert_no_error (error);
  g_assert_cmpint (sql_int (path, "SELECT count(*) FROM big_values"), ==, 0);

  /* A batch that fails leaves no big value behind. */
  {
    g_autoptr(QStoreAtomicBatch) batch = qstore_provider_begin_atomic_batch (provider);
    g_autofree char *big = g_strnfill (90000, 'z');

    _qstore_fault_arm (QSTORE_FAULT_WRITE_OP, 1);
    qstore_atomic_batch_put (batch, kv, (const guint8 *) "k1", 2, (const guint8 *) big, 90000);
    qstore_atomic_batch_put (batch, kv, (const guint8 *) "k2", 2, (const guint8 *) big, 90000);
    g_assert_false (qstore_atomic_batch_commit (batch, QSTORE_WRITE_NONE, &error));
    g_clear_error (&error);
    _qstore_fault_disarm_all ();
  }
  g_assert_cmpint (sql_int (path, "SELECT count(*) FROM big_values"), ==, 0);
  assert_clean (provider);

  qstore_provider_close_all (provider);
  test_remove_tree (dir);
}

/* Seconds for @n misses near a 10 MB value, as snapshot lookups: the
 * best of three runs, as the machine may be busy. It stops early, with
 * the time so far, once a run is past @give_up seconds. */
static double
time_misses (QStoreProvider *provider,
             guint           n,
             double          give_up)
{
  g_autoptr(QStoreKV) kv = qstore_provider_open_store (provider, "main.t", NULL);
  g_autoptr(QStoreSnapshot) snapshot = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GTimer) timer = g_timer_new ();
  double best = G_MAXDOUBLE;

  put_filled (kv, "m", 10 * 1024 * 1024, 'm');
  for (char c = 'a'; c <= 'z'; c++)
    {
      char key[2] = { c, '\0' };

      if (c != 'm')
        put_filled (kv, key, 100, c);
    }

  snapshot = qstore_provider_begin_snapshot (provider, &error);
  g_assert_no_error (error);
  for (guint run = 0; run < 3; run++)
    {
      g_timer_start (timer);
      for (guint i = 0; i < n; i++)
        {
          char key[16];
          int len = g_snprintf (key, sizeof key, "m%u", i);

          g_assert_false (qstore_snapshot_lookup (snapshot, kv, (const guint8 *) key, len,
                                                  NULL, NULL, &error));
          g_assert_no_error (error);
          if (i % 100 == 99 && g_timer_elapsed (timer, NULL) > give_up)
            return g_timer_elapsed (timer, NULL);
        }
      best = MIN (best, g_timer_elapsed (timer, NULL));
    }
  return best;
}

/* 100,000 misses past one 10 MB value: on the first format each read all
 * of it (230 s where lmdb took 0.24 s through SQL). An SQLite lookup
 * costs a few times an LMDB one whatever the values; the bound is 10x. */
static void
test_misses_past_big_value (void)
{
  g_autofree char *dir = test_make_tmp_dir ("qstore-sqlite-format-XXXXXX");
  g_autofree char *sqlite_path = g_build_filename (dir, "store.db", NULL);
  g_autofree char *lmdb_path = g_build_filename (dir, "lmdb", NULL);
  g_autoptr(QStoreProvider) sqlite = open_sqlite (sqlite_path, QSTORE_OPEN_NONE);
  g_autoptr(QStoreProvider) lmdb = NULL;
  g_autoptr(GError) error = NULL;
  double sqlite_s, lmdb_s, bound;

  lmdb = qstore_provider_new ("lmdb", lmdb_path, QSTORE_OPEN_NONE, &error);
  g_assert_no_error (error);

  lmdb_s = time_misses (lmdb, 100000, G_MAXDOUBLE);
  /* The floor keeps a very fast lmdb run on a busy machine from making
   * the ratio noise: a bound of 1 s still catches the first format, which
   * takes about 3 s here. */
  bound = 10 * MAX (lmdb_s, 0.1);
  sqlite_s = time_misses (sqlite, 100000, bound);
  g_test_message ("100000 misses past a 10 MB value: sqlite %.3f s, lmdb %.3f s (%.1fx)",
                  sqlite_s, lmdb_s, sqlite_s / lmdb_s);
  g_assert_cmpfloat (sqlite_s, <, bound);

  qstore_provider_close_all (sqlite);
  qstore_provider_close_all (lmdb);
  test_remove_tree (dir);
}

/* Pages read through the map (the default) or with pread() only
 * (mmap_size=0) give the same values; a store first looked up while
 * absent is found once written (the provider remembers absent stores);
 * the writer's reads see its every write. */
static void
test_map_size (void)
{
  g_autofree char *dir = test_make_tmp_dir ("qstore-sqlite-format-XXXXXX");
  g_autofree char *path = g_build_filename (dir, "store.db", NULL);
  const char *const options[] = { "", "?mmap_size=0", "?mmap_size=65536" };
  g_autoptr(GError) error = NULL;
  g_autofree char *bad_uri = g_strconcat ("sqlite:", path, "?mmap_size=-1", NULL);
  g_autoptr(QStoreProvider) bad = NULL;

  for (guint i = 0; i < G_N_ELEMENTS (options); i++)
    {
      g_autofree char *uri = g_strconcat ("sqlite:", path, options[i], NULL);
      g_autoptr(QStoreProvider) provider = qstore_provider_new_for_uri (uri, QSTORE_OPEN_NONE,
                                                                        &error);
      g_autofree char *store_name = g_strdup_printf ("t%u", i);
      g_autoptr(QStoreKV) kv = NULL;
      g_autoptr(GBytes) absent = NULL;

      g_assert_no_error (error);
      kv = qstore_provider_get_store (provider, "main", store_name, &error);
      g_assert_no_error (error);
      absent = qstore_kv_get (kv, (const guint8 *) "a", 1, &error);
      g_assert_no_error (error);
      g_assert_null (absent);

      put_filled (kv, "a", 10, 'a');
      put_filled (kv, "b", 20000, 'b');
      assert_value (kv, "a", 10, 'a');
      assert_value (kv, "b", 20000, 'b');
      /* Reads between writes share a read transaction: each write ends
       * it, so the next read sees the write. */
      put_filled (kv, "a", 12, 'c');
      assert_value (kv, "a", 12, 'c');
      put_filled (kv, "a", 10, 'a');
      assert_value (kv, "a", 10, 'a');
      /* Every store written so far reads back through this open. */
      for (guint j = 0; j < i; j++)
        {
          g_autofree char *earlier_name = g_strdup_printf ("t%u", j);
          g_autoptr(QStoreKV) earlier = qstore_provider_get_store (provider, "main",
                                                                   earlier_name, &error);

          g_assert_no_error (error);
          assert_value (earlier, "a", 10, 'a');
          assert_value (earlier, "b", 20000, 'b');
        }
      assert_clean (provider);
      qstore_provider_close_all (provider);
    }

  bad = qstore_provider_new_for_uri (bad_uri, QSTORE_OPEN_NONE, &error);
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "mmap_size"));
  g_assert_null (bad);

  test_remove_tree (dir);
}

/* A row an iterator stands on lives in SQLite's statement, which the
 * provider's close finalizes: from then on the iterator hands out no
 * memory of it (it peeks without its connection's lock, so this is what
 * the close's order guarantees), and it fails when moved on. */
static void
test_iterator_after_close (void)
{
  g_autofree char *dir = test_make_tmp_dir ("qstore-sqlite-format-XXXXXX");
  g_autofree char *path = g_build_filename (dir, "store.db", NULL);
  g_autoptr(QStoreProvider) provider = open_sqlite (path, QSTORE_OPEN_NONE);
  g_autoptr(QStoreKV) kv = qstore_provider_get_store (provider, "main", "t", NULL);
  g_autoptr(QStoreSnapshot) snapshot = NULL;
  g_autoptr(QStoreIter) plain = NULL;
  g_autoptr(QStoreIter) pinned = NULL;
  g_autoptr(GError) error = NULL;
  QStoreIter *iters[2];
  const guint8 *data;
  gsize len;

  put_filled (kv, "k", 10, 'v');
  put_filled (kv, "l", 10, 'w');
  snapshot = qstore_provider_begin_snapshot (provider, &error);
  g_assert_no_error (error);
  plain = qstore_kv_iterate (kv, NULL, &error);
  g_assert_no_error (error);
  pinned = qstore_snapshot_iterate (snapshot, kv, NULL, &error);
  g_assert_no_error (error);
  iters[0] = plain;
  iters[1] = pinned;

  for (guint i = 0; i < G_N_ELEMENTS (iters); i++)
    {
      g_assert_true (qstore_iter_next (iters[i], &error));
      data = qstore_iter_peek_key (iters[i], &len);
      g_assert_cmpmem (data, len, "k", 1);
      data = qstore_iter_peek_value (iters[i], &len);
      g_assert_cmpmem (data, len, "vvvvvvvvvv", 10);
    }

  qstore_provider_close_all (provider);
  for (guint i = 0; i < G_N_ELEMENTS (iters); i++)
    {
      data = qstore_iter_peek_key (iters[i], &len);
      g_assert_nonnull (data);
      g_assert_cmpuint (len, ==, 0);
      data = qstore_iter_peek_value (iters[i], &len);
      g_assert_nonnull (data);
      g_assert_cmpuint (len, ==, 0);
      g_assert_false (qstore_iter_next (iters[i], &error));
      g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_CLOSED);
      g_clear_error (&error);
    }
  test_remove_tree (dir);
}

static void
outside_exec (const char *path,
              const char *sql)
{
  sqlite3 *db = NULL;

  g_assert_cmpint (sqlite3_open_v2 (path, &db, SQLITE_OPEN_READWRITE, NULL), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_exec (db, sql, NULL, NULL, NULL), ==, SQLITE_OK);
  sqlite3_close (db);
}

/* A write after plain reads goes on in the read transaction they left
 * open. It begins afresh when that one cannot write: at another
 * durability, or when a writer outside qstore changed the file since it
 * began (SQLite refuses a stale read transaction the write lock). */
static void
test_write_after_reads (void)
{
  g_autofree char *dir = test_make_tmp_dir ("qstore-sqlite-format-XXXXXX");
  g_autofree char *path = g_build_filename (dir, "store.db", NULL);
  g_autoptr(QStoreProvider) provider = open_sqlite (path, QSTORE_OPEN_NONE);
  g_autoptr(QStoreKV) kv = qstore_provider_get_store (provider, "main", "t", NULL);
  g_autoptr(GError) error = NULL;
  const QStoreWriteFlags flags[] = { QSTORE_WRITE_SYNC, QSTORE_WRITE_NONE, QSTORE_WRITE_NONE };

  put_filled (kv, "a", 10, 'a');
  for (guint i = 0; i < G_N_ELEMENTS (flags); i++)
    {
      char key[] = { 'b' + i, '\0' };

      assert_value (kv, "a", 10, 'a');
      qstore_kv_put (kv, (const guint8 *) key, 1, (const guint8 *) key, 1, flags[i], &error);
      g_assert_no_error (error);
    }

  assert_value (kv, "a", 10, 'a');
  outside_exec (path, "INSERT INTO kv (store_id, key, value) "
                      "SELECT store_id, CAST ('o' AS BLOB), value FROM kv WHERE key = CAST ('a' AS BLOB)");
  put_filled (kv, "z", 5, 'z');

  assert_value (kv, "o", 10, 'a');
  assert_value (kv, "z", 5, 'z');
  for (guint i = 0; i < G_N_ELEMENTS (flags); i++)
    {
      char key[] = { 'b' + i, '\0' };

      assert_value (kv, key, 1, key[0]);
    }
  assert_clean (provider);

  g_clear_object (&kv);
  g_clear_object (&provider);
  g_assert_cmpint (sql_int (path, "SELECT count(*) FROM kv"), ==, 6);
  test_remove_tree (dir);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/sqlite-format/migration", test_migration);
  g_test_add_func ("/sqlite-format/big-values", test_big_values);
  g_test_add_func ("/sqlite-format/misses-past-big-value", test_misses_past_big_value);
  g_test_add_func ("/sqlite-format/map-size", test_map_size);
  g_test_add_func ("/sqlite-format/iterator-after-close", test_iterator_after_close);
  g_test_add_func ("/sqlite-format/write-after-reads", test_write_after_reads);

  return g_test_run ();
}
