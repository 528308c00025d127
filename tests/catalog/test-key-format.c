/* test-key-format.c: stores of the first key format, upgraded on open
 *
 * first-key-format/ holds a store of each persistent provider written by
 * qstore before keys changed format (store.sql made it, through `qstore
 * sql`), with what queries.sql printed on it then (expected.txt):
 * numbers of every kind in keys, primary and secondary, ascending and
 * descending, unique and partial indexes, a materialized view, a view and
 * a change log.
 *
 *   upgrade    read-only, the store is refused with a clear error and
 *              left as it is; for writing, it is upgraded, then every
 *              query prints what it printed before, the check finds
 *              nothing, and the next open writes nothing
 *   faults     an upgrade failing at any write of its commit leaves a
 *              store the next open upgrades whole
 *   kill       a writer killed by SIGKILL at a random moment of its
 *              upgrade: once it said the open returned, the store is of
 *              this format; either way the next open finds it whole
 *              (QSTORE_CRASH_ITERATIONS cycles, 20 by default)
 *   corrupt    a key that is not one fails the upgrade, naming its
 *              store, and nothing is written
 *   marked     a new store says its format with its first table; a
 *              format this version does not know is refused
 */
#include "config.h"

#include "qstore-codec-private.h"
#include "qstore-coordinator-private.h"
#include "qstore-fault-private.h"
#include "qstore-test-util.h"

static const char *qstore_path;
static const char *self_path;

/* A copy of the provider's first-format store in a new directory; its
 * URI, with the options of the provider under test. */
static char *
copy_fixture (char **dir)
{
  g_autofree char *name = test_provider_name ();
  g_autofree char *source = g_test_build_filename (G_TEST_DIST, "first-key-format",
                                                   g_str_equal (name, "lmdb") ? "lmdb/data.mdb"
                                                                              : "sqlite.db",
                                                   NULL);
  g_autofree char *target = NULL;
  g_autofree char *contents = NULL;
  g_autoptr(GError) error = NULL;
  gsize len;

  *dir = test_make_tmp_dir ("qstore-key-format-XXXXXX");
  if (g_str_equal (name, "lmdb"))
    {
      g_autofree char *store = g_build_filename (*dir, "store", NULL);

      g_assert_cmpint (g_mkdir (store, 0755), ==, 0);
      target = g_build_filename (store, "data.mdb", NULL);
    }
  else
    target = g_build_filename (*dir, "store.db", NULL);
  g_file_get_contents (source, &contents, &len, &error);
  g_assert_no_error (error);
  g_file_set_contents (target, contents, len, &error);
  g_assert_no_error (error);
  return test_provider_uri (*dir, "store");
}

/* What queries.sql prints on @uri, as the fixture's expected.txt has it. */
static char *
run_queries (const char *uri)
{
  g_autofree char *path = g_test_build_filename (G_TEST_DIST, "first-key-format", "queries.sql", NULL);
  g_autofree char *text = NULL;
  g_auto(GStrv) queries = NULL;
  g_autoptr(GError) error = NULL;
  GString *out = g_string_new (NULL);

  g_file_get_contents (path, &text, NULL, &error);
  g_assert_no_error (error);
  queries = g_strsplit (text, "\n", -1);
  for (guint i = 0; queries[i] != NULL; i++)
    {
      g_autoptr(TestRun) run = NULL;

      if (queries[i][0] == '\0')
        continue;
      run = test_run_program (qstore_path, NULL, uri, "sql", queries[i], NULL);
      g_string_append_printf (out, "-- %s\n%s%s", queries[i], run->out, run->err);
    }
  return g_string_free (out, FALSE);
}

static void
assert_answers_as_before (const char *uri)
{
  g_autofree char *path = g_test_build_filename (G_TEST_DIST, "first-key-format", "expected.txt", NULL);
  g_autofree char *expected = NULL;
  g_autofree char *got = run_queries (uri);
  g_autoptr(GError) error = NULL;

  g_file_get_contents (path, &expected, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (got, ==, expected);
}

/* Every entry of every store at @uri, in hex, the catalog's too when
 * @with_catalog: what a failed open must leave as it found it. */
static char *
dump (const char *uri,
      gboolean    with_catalog)
{
  g_autoptr(QStoreProvider) provider = NULL;
  g_autoptr(GError) error = NULL;
  g_auto(GStrv) names = NULL;
  GString *out = g_string_new (NULL);

  provider = qstore_provider_new_for_uri (uri, QSTORE_OPEN_READ_ONLY, &error);
  g_assert_no_error (error);
  names = qstore_provider_list_stores (provider, &error);
  g_assert_no_error (error);
  for (guint i = 0; names[i] != NULL; i++)
    {
      g_autoptr(QStoreKV) store = NULL;
      g_autoptr(QStoreIter) iter = NULL;

      if (!with_catalog && g_str_equal (names[i], QSTORE_CATALOG_STORE_NAME))
        continue;
      store = qstore_provider_open_store (provider, names[i], &error);
      g_assert_no_error (error);
      iter = qstore_kv_iterate (store, NULL, &error);
      g_assert_no_error (error);
      g_string_append_printf (out, "%s\n", names[i]);
      while (qstore_iter_next (iter, &error))
        {
          gsize key_len, value_len;
          const guint8 *key = qstore_iter_peek_key (iter, &key_len);
          const guint8 *value = qstore_iter_peek_value (iter, &value_len);

          for (gsize k = 0; k < key_len; k++)
            g_string_append_printf (out, "%02x", key[k]);
          g_string_append_c (out, ' ');
          for (gsize k = 0; k < value_len; k++)
            g_string_append_printf (out, "%02x", value[k]);
          g_string_append_c (out, '\n');
        }
      g_assert_no_error (error);
    }
  qstore_provider_close_all (provider);
  return g_string_free (out, FALSE);
}

static void
assert_refused_read_only (const char *uri)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(QStoreDatabase) db = qstore_database_open (uri, QSTORE_OPEN_READ_ONLY, &error);

  g_assert_null (db);
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_READ_ONLY);
  g_assert_nonnull (strstr (error->message, "earlier version of qstore"));
}

/* Opens @uri for writing, which upgrades it; its check finds nothing.
 * Returns the last transaction's id. */
static guint64
assert_upgrades_whole (const char *uri)
{
  g_autoptr(QStoreCheckReport) report = NULL;
  g_autoptr(GError) error = NULL;
  QStoreDatabase *db = test_open_database (uri, QSTORE_OPEN_NONE);
  guint64 tx_id = qstore_coordinator_get_last_tx_id (qstore_database_get_coordinator (db));

  report = qstore_database_check (db, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (qstore_check_report_get_n_problems (report), ==, 0);
  test_close_database (&db);
  return tx_id;
}

static void
test_upgrade (void)
{
  g_autofree char *dir = NULL;
  g_autofree char *uri = copy_fixture (&dir);
  g_autofree char *before = dump (uri, TRUE);
  g_autofree char *after = NULL;
  g_autofree char *unchanged = NULL;
  QStoreDatabase *db;
  guint64 tx_id;

  assert_refused_read_only (uri);
  unchanged = dump (uri, TRUE);
  g_assert_cmpstr (unchanged, ==, before);

  tx_id = assert_upgrades_whole (uri);

  /* Smaller: every number in a key was 17 bytes. */
  after = dump (uri, TRUE);
  g_assert_cmpstr (after, !=, before);
  g_assert_cmpuint (strlen (after), <, strlen (before));
  assert_answers_as_before (uri);

  /* Once upgraded, an open writes nothing, and reading needs no writer. */
  db = test_open_database (uri, QSTORE_OPEN_NONE);
  g_assert_cmpuint (qstore_coordinator_get_last_tx_id (qstore_database_get_coordinator (db)), ==, tx_id);
  test_close_database (&db);
  db = test_open_database (uri, QSTORE_OPEN_READ_ONLY);
  test_close_database (&db);

  test_remove_tree (dir);
}

static void
test_faults (void)
{
  guint position;

  /* A fault past the upgrade's commit strikes where the open only warns
   * and goes on: the materialized views' own bookkeeping. */
  g_log_set_always_fatal (G_LOG_FATAL_MASK | G_LOG_LEVEL_CRITICAL);

  for (position = 0; position < 2000; position++)
    {
      g_autofree char *dir = NULL;
      g_autofree char *uri = copy_fixture (&dir);
      g_autoptr(GError) error = NULL;
      g_autoptr(QStoreDatabase) db = NULL;

      _qstore_fault_arm (QSTORE_FAULT_WRITE_OP, position);
      db = qstore_database_open (uri, QSTORE_OPEN_NONE, &error);
      _qstore_fault_disarm_all ();
      if (db != NULL)
        {
          test_close_database (&db);
          test_remove_tree (dir);
          break;
        }
      g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_IO);
      g_assert_nonnull (strstr (error->message, "Injected fault"));

      /* Where commits go store by store, the next open undoes the part
       * written first. Either way, it upgrades the whole store: checked
       * at every position, queried at every eighth (a process a query). */
      if (test_provider_atomic ())
        assert_refused_read_only (uri);
      assert_upgrades_whole (uri);
      if (position % 8 == 0)
        assert_answers_as_before (uri);
      test_remove_tree (dir);
    }

  g_test_message ("%u write positions", position);
  g_assert_cmpuint (position, >=, 20);
  g_assert_cmpuint (position, <, 2000);
}

/* --upgrade-child URI: says 0, opens URI for writing, which upgrades it,
 * says 1 once the open returned, and waits to be killed. */
static int
upgrade_child (const char *uri)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(QStoreDatabase) db = NULL;

  g_print ("0\n");
  if (!(db = qstore_database_open (uri, QSTORE_OPEN_NONE, &error)))
    {
      g_printerr ("upgrade child: %s\n", error->message);
      return 1;
    }
  g_print ("1\n");
  for (;;)
    g_usleep (G_USEC_PER_SEC);
}

static void
test_kill (void)
{
  guint cycles = test_env_count ("QSTORE_CRASH_ITERATIONS", 20);
  guint acknowledged = 0;
  GRand *rand = g_rand_new_with_seed (test_seed ());

  for (guint cycle = 0; cycle < cycles; cycle++)
    {
      g_autofree char *dir = NULL;
      g_autofree char *uri = copy_fixture (&dir);
      const char *argv[] = { self_path, "--upgrade-child", uri, NULL };

      /* Opening and upgrading this store takes tens of milliseconds. */
      if (test_kill_reporting_child (argv, g_rand_int_range (rand, 0, 40), 0) == 1)
        {
          QStoreDatabase *db = test_open_database (uri, QSTORE_OPEN_READ_ONLY);

          test_close_database (&db);
          acknowledged++;
        }
      assert_upgrades_whole (uri);
      if (cycle % 5 == 0)
        assert_answers_as_before (uri);
      test_remove_tree (dir);
    }
  g_test_message ("%u cycles, %u killed after the open returned", cycles, acknowledged);
  g_rand_free (rand);
}

static void
test_corrupt (void)
{
  g_autofree char *dir = NULL;
  g_autofree char *uri = copy_fixture (&dir);
  g_autoptr(QStoreProvider) provider = NULL;
  g_autoptr(QStoreKV) store = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(QStoreDatabase) db = NULL;
  g_autofree char *before = NULL;
  /* A first-format number cut short. */
  const guint8 bad[] = { 0x01, 0xbf, 0xf0 };

  provider = qstore_provider_new_for_uri (uri, QSTORE_OPEN_NONE, &error);
  g_assert_no_error (error);
  store = qstore_provider_get_index_store (provider, "main", "n", "n_r", &error);
  g_assert_no_error (error);
  qstore_kv_put (store, bad, sizeof bad, bad, sizeof bad, QSTORE_WRITE_SYNC, &error);
  g_assert_no_error (error);
  g_clear_object (&store);
  qstore_provider_close_all (provider);
  before = dump (uri, FALSE);

  /* The open writes its own bookkeeping to the catalog before it reads
   * the tables, so only the tables' stores are compared. */
  db = qstore_database_open (uri, QSTORE_OPEN_NONE, &error);
  g_assert_null (db);
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_CORRUPT);
  g_assert_nonnull (strstr (error->message, "main.n_idx_n_r"));
  g_assert_cmpstr (dump (uri, FALSE), ==, before);
  assert_refused_read_only (uri);
  test_remove_tree (dir);
}

static void
test_marked (void)
{
  g_autofree char *dir = test_make_tmp_dir ("qstore-key-format-XXXXXX");
  g_autofree char *uri = test_provider_uri (dir, "new");
  g_autoptr(GBytes) key = qstore_catalog_key_for_meta ("key_format");
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) format = NULL;
  g_autoptr(QStoreKV) catalog = NULL;
  g_autofree char *before = NULL;
  g_autofree char *after = NULL;
  QStoreDatabase *db;
  gsize key_len;
  const guint8 *key_data = g_bytes_get_data (key, &key_len);

  db = test_open_database (uri, QSTORE_OPEN_NONE);
  catalog = qstore_provider_get_catalog_store (qstore_database_get_provider (db), &error);
  g_assert_no_error (error);
  g_assert_null (qstore_kv_get (catalog, key_data, key_len, &error));
  g_assert_no_error (error);
  test_exec (db, "CREATE TABLE t (id INTEGER PRIMARY KEY, x REAL)");
  format = qstore_kv_get (catalog, key_data, key_len, &error);
  g_assert_no_error (error);
  g_assert_nonnull (format);
  g_assert_cmpmem (g_bytes_get_data (format, NULL), g_bytes_get_size (format), "2", 1);
  g_clear_object (&catalog);
  test_close_database (&db);

  if (!test_provider_persistent ())
    {
      test_remove_tree (dir);
      return;
    }

  /* A format to come is refused, read-only or not, and left alone. */
  test_plant (uri, key, "3");
  before = dump (uri, TRUE);
  for (guint read_only = 0; read_only < 2; read_only++)
    {
      g_autoptr(QStoreDatabase) refused = qstore_database_open (uri, read_only ? QSTORE_OPEN_READ_ONLY
                                                                                : QSTORE_OPEN_NONE,
                                                                &error);

      g_assert_null (refused);
      g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_UNSUPPORTED);
      g_assert_nonnull (strstr (error->message, "format “3”"));
      g_clear_error (&error);
    }
  after = dump (uri, TRUE);
  g_assert_cmpstr (after, ==, before);
  test_remove_tree (dir);
}

int
main (int   argc,
      char *argv[])
{
  if (argc == 3 && g_str_equal (argv[1], "--upgrade-child"))
    return upgrade_child (argv[2]);

  g_test_init (&argc, &argv, NULL);
  self_path = argv[0];
  qstore_path = test_program_argument (argc, argv, "QSTORE");

  g_test_add_func ("/key-format/marked", test_marked);
  if (test_provider_persistent ())
    {
      g_test_add_func ("/key-format/upgrade", test_upgrade);
      g_test_add_func ("/key-format/faults", test_faults);
      g_test_add_func ("/key-format/kill", test_kill);
      g_test_add_func ("/key-format/corrupt", test_corrupt);
    }
  return g_test_run ();
}
