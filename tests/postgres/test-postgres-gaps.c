/* test-postgres-gaps.c: the writer's known gaps never hide a key
 *
 * Runs under with-postgres.sh. The postgres writer answers reads of keys
 * it knows absent without asking the server (qstore-postgres-gaps.c):
 * a key it put since, or one below the gap, must still be found, so
 * that every PRIMARY KEY conflict is still told.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "qstore-test-util.h"

static void
assert_conflict (QStoreDatabase *db,
                 const char     *sql)
{
  g_autoptr(GError) error = NULL;

  g_assert_false (qstore_database_exec (db, sql, &error));
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_CONSTRAINT);
}

static void
test_conflicts (void)
{
  g_autofree char *dir = test_make_tmp_dir ("qstore-pg-gaps-XXXXXX");
  g_autofree char *uri = test_provider_uri (dir, "gaps");
  g_autoptr(QStoreDatabase) db = test_open_database (uri, QSTORE_OPEN_NONE);

  test_exec (db, "CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)");
  test_exec (db, "CREATE TABLE k (name TEXT PRIMARY KEY)");
  test_exec (db, "INSERT INTO t VALUES (1, 'a'), (2, 'b'), (10, 'c')");
  test_exec (db, "INSERT INTO k VALUES ('m')");

  /* A gap from 3 up to 10: 10 and what is below stay taken. */
  test_exec (db, "INSERT INTO t VALUES (3, 'd')");
  assert_conflict (db, "INSERT INTO t VALUES (10, 'x')");
  assert_conflict (db, "INSERT INTO t VALUES (2, 'x')");
  assert_conflict (db, "INSERT INTO t VALUES (3, 'x')");

  /* Rising keys in one transaction, then each again after the commit. */
  test_exec (db, "BEGIN");
  for (int i = 11; i < 40; i++)
    {
      g_autofree char *sql = g_strdup_printf ("INSERT INTO t VALUES (%d, 'r')", i);

      test_exec (db, sql);
    }
  assert_conflict (db, "INSERT INTO t VALUES (20, 'x')");
  test_exec (db, "COMMIT");
  for (int i = 11; i < 40; i += 7)
    {
      g_autofree char *sql = g_strdup_printf ("INSERT INTO t VALUES (%d, 'x')", i);

      assert_conflict (db, sql);
    }
  test_exec (db, "INSERT INTO t VALUES (40, 'e')");
  assert_conflict (db, "INSERT INTO t VALUES (40, 'x')");

  /* Text keys: a gap after 'm' does not hide a key put below it. */
  test_exec (db, "INSERT INTO k VALUES ('n')");
  test_exec (db, "INSERT INTO k VALUES ('a')");
  assert_conflict (db, "INSERT INTO k VALUES ('a')");
  assert_conflict (db, "INSERT INTO k VALUES ('n')");

  /* A delete, then the key again. */
  test_exec (db, "DELETE FROM t WHERE id = 40");
  test_exec (db, "INSERT INTO t VALUES (40, 'f')");
  g_assert_cmpint (test_query_int (db, "SELECT count(*) FROM t"), ==, 34);

  test_close_database (&db);
  test_remove_tree (dir);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/postgres/gaps/conflicts", test_conflicts);
  return g_test_run ();
}
