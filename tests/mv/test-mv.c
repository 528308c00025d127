/* test-mv.c: materialized views — their DDL, strategies, maintenance
 * against an oracle, staleness, trust across reopens, and crashes
 *
 * Usage: test-mv [--tap] [-p PATH…], with QSTORE_TEST_PROVIDER set to a
 * provider spec (memory, lmdb, sqlite, lmdb?atomic=0…). Tests that need a
 * reopen skip on memory. QSTORE_TEST_SEED fixes the random seed,
 * QSTORE_TEST_ORACLE_OPS the length of the oracle run and
 * QSTORE_CRASH_ITERATIONS that of the crash loop.
 *
 * The crash loop runs this program again as a child: `test-mv
 * --crash-child URI SEED FD` writes random transactions and reports each
 * committed transaction's id on file descriptor FD until it is killed.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gio/gio.h>
#include <qstore.h>

#include "qstore-test-util.h"

static const char *self_path;

typedef TestDatabase Fixture;

static void
fixture_setup (Fixture       *f,
               gconstpointer  data)
{
  test_database_set_up (f, "qstore-mv-XXXXXX");
}

/* SQL */

static int
compare_lines (gconstpointer a,
               gconstpointer b)
{
  return strcmp (*(const char * const *) a, *(const char * const *) b);
}

/* The rows of @sql, each printed, sorted, one per line: a multiset. */
static char *
rows_text (QStoreDatabase *db,
           const char     *sql)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(QStoreResult) result = qstore_database_query (db, sql, NULL, &error);
  g_autoptr(GPtrArray) lines = g_ptr_array_new_with_free_func (g_free);
  GString *text = g_string_new (NULL);

  if (result == NULL)
    g_error ("“%s” failed: %s", sql, error->message);
  for (guint i = 0; i < qstore_result_get_n_rows (result); i++)
    g_ptr_array_add (lines, g_variant_print (qstore_result_get_row (result, i), TRUE));
  g_ptr_array_sort (lines, compare_lines);
  for (guint i = 0; i < lines->len; i++)
    g_string_append_printf (text, "%s\n", (const char *) lines->pdata[i]);
  return g_string_free (text, FALSE);
}

static QStoreMaterializedView *
find_view (QStoreDatabase *db,
           const char     *name)
{
  g_autoptr(GListModel) views = qstore_database_list_materialized_views (db);

  for (guint i = 0; i < g_list_model_get_n_items (views); i++)
    {
      g_autoptr(QStoreMaterializedView) view = g_list_model_get_item (views, i);

      if (g_ascii_strcasecmp (qstore_materialized_view_get_name (view), name) == 0)
        return g_steal_pointer (&view);
    }
  return NULL;
}

static QStoreMaterializedViewStrategy
view_strategy (QStoreDatabase *db,
               const char     *name)
{
  g_autoptr(QStoreMaterializedView) view = find_view (db, name);

  g_assert_nonnull (view);
  return qstore_materialized_view_get_strategy (view);
}

static gboolean
view_stale (QStoreDatabase *db,
            const char     *name)
{
  g_autoptr(QStoreMaterializedView) view = find_view (db, name);

  g_assert_nonnull (view);
  return qstore_materialized_view_get_stale (view);
}

/* The view holds what its body gives when run now. */
static void
assert_view_current (QStoreDatabase *db,
                     const char     *name,
                     const char     *context)
{
  g_autoptr(QStoreMaterializedView) view = find_view (db, name);
  g_autofree char *stored_sql = g_strdup_printf ("SELECT * FROM \"%s\"", name);
  g_autofree char *fresh_sql = NULL;
  g_autofree char *stored = NULL;
  g_autofree char *fresh = NULL;

  g_assert_nonnull (view);
  fresh_sql = g_strdup_printf ("SELECT * FROM (%s)", qstore_materialized_view_get_body (view));
  stored = rows_text (db, stored_sql);
  fresh = rows_text (db, fresh_sql);
  if (g_strcmp0 (stored, fresh) != 0)
    g_error ("%s: materialized view “%s” (strategy %d, stale %d) holds\n%s\nbut its body "
             "gives\n%s", context, name, qstore_materialized_view_get_strategy (view),
             qstore_materialized_view_get_stale (view), stored, fresh);
}

/* Stage 1: DDL, the catalog, strategies */

static void
create_sources (QStoreDatabase *db)
{
  test_exec (db,
             "CREATE TABLE t (id INTEGER PRIMARY KEY, g TEXT, h INT, x INT, s TEXT COLLATE NOCASE);"
             "CREATE INDEX t_g ON t (g);"
             "CREATE TABLE u (k TEXT PRIMARY KEY, g TEXT, v REAL);"
             "CREATE TABLE w (a INT NOT NULL, b INT NOT NULL, c TEXT, PRIMARY KEY (a, b));"
             "INSERT INTO t VALUES (1, 'a', 0, 10, 'x'), (2, 'b', 1, 20, 'X'),"
             "                     (3, 'a', 2, 30, 'y'), (4, NULL, 0, 40, NULL);"
             "INSERT INTO u VALUES ('k1', 'a', 1.5), ('k2', 'b', 2.25), (NULL, 'a', 0.5);"
             "INSERT INTO w VALUES (1, 1, 'p'), (1, 2, NULL), (2, 1, 'q');");
}

/* The table holding a view's rows is the view's to write: the table API
 * refuses, and the rows stay as they are. */
static void
assert_contents_refused (QStoreDatabase *db,
                         const char     *name)
{
  QStoreTable *table = qstore_database_get_table (db, NULL, name);
  g_autofree char *before = NULL;
  g_autofree char *after = NULL;
  g_autofree char *all = g_strdup_printf ("SELECT * FROM %s", name);
  g_autoptr(GVariant) first = NULL;
  g_autoptr(GVariant) key = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(QStoreResult) result = NULL;
  guint n_columns;
  GVariantBuilder row;

  g_assert_nonnull (table);
  before = rows_text (db, all);
  result = qstore_database_query (db, all, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (qstore_result_get_n_rows (result), >, 0);
  first = g_variant_ref (qstore_result_get_row (result, 0));
  key = g_variant_get_child_value (first, 0);
  n_columns = qstore_table_get_n_columns (table);

  g_variant_builder_init (&row, G_VARIANT_TYPE ("av"));
  for (guint i = 0; i < n_columns; i++)
    g_variant_builder_add (&row, "v", g_variant_new_int64 (424242 + i));
  g_assert_false (qstore_table_insert (table, g_variant_builder_end (&row), QSTORE_CONFLICT_ABORT, &error));
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_READ_ONLY);
  g_assert_nonnull (strstr (error->message, "materialized view"));
  g_clear_error (&error);

  g_assert_false (qstore_table_update (table, key, first,
                                       QSTORE_CONFLICT_ABORT, &error));
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_READ_ONLY);
  g_clear_error (&error);
  g_assert_false (qstore_table_delete (table, key, &error));
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_READ_ONLY);
  g_clear_error (&error);

  after = rows_text (db, all);
  g_assert_cmpstr (before, ==, after);
}

static void
test_ddl (Fixture       *f,
          gconstpointer  data)
{
  g_autoptr(QStoreMaterializedView) view = NULL;
  g_auto(GStrv) tables = NULL;
  g_autofree char *message = NULL;
  g_autoptr(GListModel) entries = NULL;
  gboolean found = FALSE;

  create_sources (f->db);
  test_exec (f->db,
             "CREATE MATERIALIZED VIEW inv AS SELECT id, g, x * 2 AS x2 FROM t WHERE x > 10");
  test_exec (f->db,
             "CREATE MATERIALIZED VIEW grp AS SELECT g, count(*) AS n, sum(x) AS sx FROM t "
             "GROUP BY g");
  test_exec (f->db,
             "CREATE MATERIALIZED VIEW fullv AS SELECT t.id, u.k FROM t JOIN u ON t.g = u.g");
  test_exec (f->db, "CREATE MATERIALIZED VIEW IF NOT EXISTS inv AS SELECT 1");

  g_assert_cmpint (view_strategy (f->db, "inv"), ==, QSTORE_MATERIALIZED_VIEW_STRATEGY_INVERSE_PROJECTION);
  g_assert_cmpint (view_strategy (f->db, "grp"), ==, QSTORE_MATERIALIZED_VIEW_STRATEGY_GROUP_RECOMPUTE);
  g_assert_cmpint (view_strategy (f->db, "fullv"), ==, QSTORE_MATERIALIZED_VIEW_STRATEGY_FULL_REBUILD);
  assert_view_current (f->db, "inv", "after create");
  assert_view_current (f->db, "grp", "after create");
  assert_view_current (f->db, "fullv", "after create");
  g_assert_cmpint (test_query_int (f->db, "SELECT count(*) FROM inv"), ==, 3);

  view = find_view (f->db, "fullv");
  g_assert_cmpstr (qstore_materialized_view_get_name (view), ==, "fullv");
  g_assert_cmpstr (qstore_materialized_view_get_schema (view), ==, "main");
  g_assert_cmpstr (qstore_materialized_view_get_body (view), ==,
                   "SELECT t.id, u.k FROM t JOIN u ON t.g = u.g");
  g_assert_cmpstr (qstore_materialized_view_get_definition (view), ==,
                   "CREATE MATERIALIZED VIEW fullv AS SELECT t.id, u.k FROM t JOIN u ON t.g = u.g");
  g_assert_cmpstrv (qstore_materialized_view_get_sources (view),
                    ((const char *[]) { "main.t", "main.u", NULL }));
  g_assert_false (qstore_materialized_view_get_stale (view));
  g_assert_null (qstore_materialized_view_get_stale_reason (view));

  /* Its contents are a table of the store, but not one of the list. */
  tables = qstore_database_list_tables (f->db);
  g_assert_cmpstrv (tables, ((const char *[]) { "t", "u", "w", NULL }));

  /* The catalog entry keeps the form `CREATE MATERIALIZED VIEW name AS …`. */
  entries = qstore_catalog_list_entries (qstore_database_get_provider (f->db), NULL);
  for (guint i = 0; i < g_list_model_get_n_items (entries); i++)
    {
      g_autoptr(QStoreCatalogEntry) entry = g_list_model_get_item (entries, i);

      if (qstore_catalog_entry_get_kind (entry) == QSTORE_CATALOG_KEY_MATERIALIZED_VIEW &&
          g_str_equal (qstore_catalog_entry_get_name (entry), "grp"))
        {
          g_assert_cmpstr (qstore_catalog_entry_get_ddl (entry), ==,
                           "CREATE MATERIALIZED VIEW grp AS SELECT g, count(*) AS n, sum(x) AS sx "
                           "FROM t GROUP BY g");
          found = TRUE;
        }
    }
  g_assert_true (found);

  /* Refusals, each saying what to do */
  g_free (test_exec_error (f->db, "CREATE MATERIALIZED VIEW inv AS SELECT 1", QSTORE_ERROR_EXISTS));
  g_free (test_exec_error (f->db, "CREATE MATERIALIZED VIEW t AS SELECT 1", QSTORE_ERROR_EXISTS));
  message = test_exec_error (f->db, "INSERT INTO inv VALUES (9, 'z', 1)", QSTORE_ERROR_UNSUPPORTED);
  g_assert_nonnull (strstr (message, "REFRESH MATERIALIZED VIEW"));
  g_clear_pointer (&message, g_free);
  message = test_exec_error (f->db, "DROP TABLE inv", QSTORE_ERROR_UNSUPPORTED);
  g_assert_nonnull (strstr (message, "DROP MATERIALIZED VIEW"));
  g_clear_pointer (&message, g_free);
  g_free (test_exec_error (f->db, "ALTER TABLE inv ADD COLUMN z", QSTORE_ERROR_UNSUPPORTED));
  g_free (test_exec_error (f->db, "ALTER TABLE inv RENAME TO inv2", QSTORE_ERROR_UNSUPPORTED));
  g_free (test_exec_error (f->db, "CREATE INDEX inv_g ON inv (g)", QSTORE_ERROR_UNSUPPORTED));
  g_free (test_exec_error (f->db, "CREATE MATERIALIZED VIEW bad AS DELETE FROM t",
                           QSTORE_ERROR_INVALID_ARGUMENT));
  g_free (test_exec_error (f->db, "CREATE MATERIALIZED VIEW bad AS SELECT nope FROM t",
                           QSTORE_ERROR_NOT_FOUND));
  g_free (test_exec_error (f->db, "CREATE MATERIALIZED VIEW bad AS SELECT * FROM nowhere",
                           QSTORE_ERROR_NOT_FOUND));
  g_free (test_exec_error (f->db, "CREATE MATERIALIZED VIEW bad", QSTORE_ERROR_INVALID_ARGUMENT));
  g_free (test_exec_error (f->db, "DROP MATERIALIZED VIEW nowhere", QSTORE_ERROR_NOT_FOUND));
  g_free (test_exec_error (f->db, "DROP MATERIALIZED VIEW t", QSTORE_ERROR_NOT_FOUND));
  g_free (test_exec_error (f->db, "REFRESH MATERIALIZED VIEW nowhere", QSTORE_ERROR_NOT_FOUND));
  g_assert_null (find_view (f->db, "bad"));

  /* A column list names the columns. */
  test_exec (f->db, "CREATE MATERIALIZED VIEW named (ident, doubled) AS SELECT id, x * 2 FROM t");
  g_assert_cmpint (test_query_int (f->db, "SELECT sum(doubled) FROM named WHERE ident < 3"), ==, 60);
  g_free (test_exec_error (f->db, "CREATE MATERIALIZED VIEW named2 (a) AS SELECT id, x FROM t",
                           QSTORE_ERROR_INVALID_ARGUMENT));

  /* REFRESH of a live view changes nothing; DROP removes everything. */
  test_exec (f->db, "REFRESH MATERIALIZED VIEW grp");
  assert_view_current (f->db, "grp", "after refresh");
  assert_contents_refused (f->db, "grp");
  assert_contents_refused (f->db, "inv");
  test_exec (f->db, "DROP MATERIALIZED VIEW fullv; DROP MATERIALIZED VIEW IF EXISTS fullv");
  g_assert_null (find_view (f->db, "fullv"));
  g_free (test_exec_error (f->db, "SELECT * FROM fullv", QSTORE_ERROR_NOT_FOUND));
  test_exec (f->db, "CREATE MATERIALIZED VIEW fullv AS SELECT count(*) AS n FROM u");
  g_assert_cmpint (test_query_int (f->db, "SELECT n FROM fullv"), ==, 3);

  if (test_provider_persistent ())
    {
      test_database_reopen (f);
      g_assert_cmpint (view_strategy (f->db, "inv"), ==, QSTORE_MATERIALIZED_VIEW_STRATEGY_INVERSE_PROJECTION);
      g_assert_cmpint (test_query_int (f->db, "SELECT n FROM fullv"), ==, 3);
      assert_view_current (f->db, "grp", "after reopen");
      assert_view_current (f->db, "named", "after reopen");
      assert_contents_refused (f->db, "named");
      g_clear_pointer (&tables, g_strfreev);
      tables = qstore_database_list_tables (f->db);
      g_assert_cmpstrv (tables, ((const char *[]) { "t", "u", "w", NULL }));
    }
}

static void
test_threshold (Fixture       *f,
                gconstpointer  data)
{
  g_autofree char *message = NULL;
  g_autoptr(QStoreResult) result = NULL;
  g_autoptr(GVariant) value = NULL;

  test_exec (f->db, "CREATE TABLE big (id INTEGER PRIMARY KEY, g INT, x INT)");
  test_exec (f->db, "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 60) "
                    "INSERT INTO big SELECT i, i % 7, i * 3 FROM n");

  g_assert_cmpint (qstore_database_get_materialized_view_rebuild_row_threshold (f->db), ==, 10000);
  g_assert_cmpint (test_query_int (f->db, "PRAGMA materialized_view_rebuild_row_threshold"), ==, 10000);
  test_exec (f->db, "PRAGMA materialized_view_rebuild_row_threshold = 50");
  g_assert_cmpint (qstore_database_get_materialized_view_rebuild_row_threshold (f->db), ==, 50);

  /* A full rebuild over 60 rows is refused; the message says how to go on. */
  message = test_exec_error (f->db, "CREATE MATERIALIZED VIEW agg AS SELECT count(*) AS n FROM big",
                             QSTORE_ERROR_UNSUPPORTED);
  g_assert_nonnull (strstr (message, "materialized_view_rebuild_row_threshold (50)"));
  g_assert_nonnull (strstr (message, "PRAGMA materialized_view_rebuild_row_threshold = 60"));
  g_assert_nonnull (strstr (message, "“big”"));
  g_assert_null (find_view (f->db, "agg"));
  g_free (test_exec_error (f->db, "SELECT * FROM agg", QSTORE_ERROR_NOT_FOUND));

  /* Incremental strategies are never refused; a group without an index is
   * rebuilt in full, so it is. */
  test_exec (f->db, "CREATE MATERIALIZED VIEW proj AS SELECT id, x FROM big WHERE g = 3");
  g_free (test_exec_error (f->db,
                           "CREATE MATERIALIZED VIEW byg AS SELECT g, sum(x) AS s FROM big "
                           "GROUP BY g",
                           QSTORE_ERROR_UNSUPPORTED));
  test_exec (f->db, "CREATE INDEX big_g ON big (g)");
  test_exec (f->db, "CREATE MATERIALIZED VIEW byg AS SELECT g, sum(x) AS s FROM big GROUP BY g");
  g_assert_cmpint (view_strategy (f->db, "byg"), ==, QSTORE_MATERIALIZED_VIEW_STRATEGY_GROUP_RECOMPUTE);

  g_free (test_exec_error (f->db, "PRAGMA materialized_view_rebuild_row_threshold = -1",
                           QSTORE_ERROR_INVALID_ARGUMENT));
  g_free (test_exec_error (f->db, "PRAGMA materialized_view_rebuild_row_threshold = lots",
                           QSTORE_ERROR_INVALID_ARGUMENT));
  result = qstore_database_query (f->db, "PRAGMA main.materialized_view_rebuild_row_threshold(60)",
                                  NULL, NULL);
  g_assert_nonnull (result);
  test_exec (f->db, "CREATE MATERIALIZED VIEW agg AS SELECT count(*) AS n FROM big");
  g_assert_cmpint (test_query_int (f->db, "SELECT n FROM agg"), ==, 60);
  qstore_database_set_materialized_view_rebuild_row_threshold (f->db, 0);
  g_free (test_exec_error (f->db, "CREATE MATERIALIZED VIEW agg2 AS SELECT max(x) AS m FROM big",
                           QSTORE_ERROR_UNSUPPORTED));
}

/* Readers inside the writing transaction see the views follow. */
static void
test_row_time (Fixture       *f,
               gconstpointer  data)
{
  const char *views[] = { "inv", "grp", "fullv", "over", NULL };

  create_sources (f->db);
  test_exec (f->db, "CREATE MATERIALIZED VIEW inv AS SELECT id, g, x FROM t WHERE x >= 20");
  test_exec (f->db,
             "CREATE MATERIALIZED VIEW grp AS SELECT g, count(*) AS n, sum(x) AS sx FROM t "
             "GROUP BY g");
  test_exec (f->db, "CREATE MATERIALIZED VIEW fullv AS SELECT count(*) AS n, sum(x) AS sx FROM t");
  test_exec (f->db, "CREATE MATERIALIZED VIEW over AS SELECT id, x + 1 AS y FROM inv");

  test_exec (f->db, "BEGIN; INSERT INTO t VALUES (10, 'c', 0, 99, 'z')");
  g_assert_cmpint (test_query_int (f->db, "SELECT x FROM inv WHERE id = 10"), ==, 99);
  g_assert_cmpint (test_query_int (f->db, "SELECT n FROM grp WHERE g = 'c'"), ==, 1);
  g_assert_cmpint (test_query_int (f->db, "SELECT n FROM fullv"), ==, 5);
  g_assert_cmpint (test_query_int (f->db, "SELECT y FROM over WHERE id = 10"), ==, 100);
  test_exec (f->db, "UPDATE t SET x = 5 WHERE id = 10");
  g_assert_cmpint (test_query_int (f->db, "SELECT count(*) FROM inv WHERE id = 10"), ==, 0);
  g_assert_cmpint (test_query_int (f->db, "SELECT sx FROM grp WHERE g = 'c'"), ==, 5);
  g_assert_cmpint (test_query_int (f->db, "SELECT count(*) FROM over WHERE id = 10"), ==, 0);
  for (guint i = 0; views[i] != NULL; i++)
    assert_view_current (f->db, views[i], "inside the transaction");
  test_exec (f->db, "ROLLBACK");
  for (guint i = 0; views[i] != NULL; i++)
    assert_view_current (f->db, views[i], "after the rollback");
  g_assert_cmpint (test_query_int (f->db, "SELECT n FROM fullv"), ==, 4);

  test_exec (f->db,
             "BEGIN; DELETE FROM t WHERE g = 'a'; SAVEPOINT s1; UPDATE t SET g = 'a' WHERE id = 2");
  g_assert_cmpint (test_query_int (f->db, "SELECT n FROM grp WHERE g = 'a'"), ==, 1);
  test_exec (f->db, "ROLLBACK TO s1");
  g_assert_cmpint (test_query_int (f->db, "SELECT count(*) FROM grp WHERE g = 'a'"), ==, 0);
  for (guint i = 0; views[i] != NULL; i++)
    assert_view_current (f->db, views[i], "after ROLLBACK TO");
  test_exec (f->db, "COMMIT");
  for (guint i = 0; views[i] != NULL; i++)
    assert_view_current (f->db, views[i], "after the commit");

  /* Writes through the table API are followed too. */
  {
    QStoreTable *t = qstore_database_get_table (f->db, NULL, "t");
    g_autoptr(GError) error = NULL;

    qstore_table_insert (t, g_variant_new_parsed ("(<int64 20>, <'d'>, <int64 1>, <int64 70>, <'q'>)"),
                         QSTORE_CONFLICT_ABORT, &error);
    g_assert_no_error (error);
    for (guint i = 0; views[i] != NULL; i++)
      assert_view_current (f->db, views[i], "after a table API write");
  }
}

/* A statement that writes a view's source while it reads the view reads
 * it as it was when the statement began, as SQL statements read their own
 * tables: it adds what it read once, ends, and the view follows after. */
static void
insert_from_view (QStoreDatabase *db,
                  const char     *select,
                  const char     *plain_select)
{
  g_autofree char *insert = g_strdup_printf ("INSERT INTO t (g, h, x) %s", select);
  g_autofree char *count = g_strdup_printf ("SELECT count(*) FROM (%s)", plain_select);
  gint64 before = test_query_int (db, "SELECT count(*) FROM t");
  gint64 read = test_query_int (db, count);

  g_assert_cmpint (read, >, 0);
  test_exec (db, insert);
  g_assert_cmpint (test_query_int (db, "SELECT count(*) FROM t"), ==, before + read);
}

static void
test_reads_before_writes (Fixture       *f,
                          gconstpointer  data)
{
  const char *views[] = { "inv", "grp", "fullv", NULL };
  const char *inv = "SELECT id, g, x FROM t WHERE x >= 20";
  const char *grp = "SELECT g, count(*) AS n FROM t GROUP BY g";
  const char *fullv = "SELECT count(*) AS n, max(x) AS top FROM t";
  g_autofree char *sql = NULL;

  create_sources (f->db);
  sql = g_strdup_printf ("CREATE MATERIALIZED VIEW inv AS %s; CREATE MATERIALIZED VIEW grp AS %s;"
                         "CREATE MATERIALIZED VIEW fullv AS %s", inv, grp, fullv);
  test_exec (f->db, sql);

  /* Each strategy read once, then again for every row of an outer loop. */
  insert_from_view (f->db, "SELECT g, 9, x + 100 FROM inv", inv);
  insert_from_view (f->db, "SELECT inv.g, 8, inv.x FROM u CROSS JOIN inv ON inv.g IS u.g",
                    "SELECT 1 FROM u CROSS JOIN (SELECT id, g, x FROM t WHERE x >= 20) v "
                    "ON v.g IS u.g");
  insert_from_view (f->db, "SELECT g, 7, n FROM grp", grp);
  insert_from_view (f->db, "SELECT 'z', 6, top FROM u CROSS JOIN fullv", "SELECT 1 FROM u");
  for (guint i = 0; views[i] != NULL; i++)
    assert_view_current (f->db, views[i], "after statements that read what they wrote");

  /* Inside a transaction, a statement still reads what the ones before
   * it wrote. */
  test_exec (f->db, "BEGIN; INSERT INTO t VALUES (100, 'q', 0, 50, NULL)");
  insert_from_view (f->db, "SELECT g, 5, x FROM inv WHERE g = 'q'", "SELECT 1");
  for (guint i = 0; views[i] != NULL; i++)
    assert_view_current (f->db, views[i], "inside the transaction");
  test_exec (f->db, "COMMIT");
  g_assert_cmpint (test_query_int (f->db, "SELECT count(*) FROM inv WHERE g = 'q'"), ==, 2);
}

/* Stage 2: every strategy against an oracle */

static const char * const oracle_views[][2] = {
  { "inv_t", "SELECT id, g, x * 2 AS x2, s FROM t WHERE x % 3 <> 0" },
  { "inv_u", "SELECT k, v, g FROM u WHERE v IS NOT NULL" },
  { "inv_w", "SELECT a, b, c FROM w WHERE c IS NOT NULL" },
  { "grp_t", "SELECT g, count(*) AS n, sum(x) AS sx, max(s) AS ms FROM t GROUP BY g" },
  { "grp_having", "SELECT g, count(*) AS n FROM t GROUP BY g HAVING count(*) > 2" },
  { "grp_w", "SELECT a, count(*) AS n, sum(b) AS sb FROM w GROUP BY a" },
  { "full_join", "SELECT t.id, u.k, t.x + u.v AS z FROM t JOIN u ON t.g = u.g" },
  /* The columns USING and NATURAL compare are read by no name. */
  { "using_join", "SELECT t.id, v FROM t JOIN u USING (g)" },
  { "natural_join", "SELECT count(*) AS n FROM t NATURAL JOIN u" },
  { "full_agg", "SELECT count(*) AS n, total(x) AS tx FROM t" },
  { "full_grp", "SELECT h, count(*) AS n FROM t GROUP BY h" },
  { "mm_inv", "SELECT id, x2 + 1 AS y FROM inv_t WHERE x2 > 10" },
  { "mm_grp", "SELECT g, n * 10 AS n10 FROM grp_t" },
  { "mm_full", "SELECT count(*) AS c, total(y) AS ty FROM mm_inv" },
};

static const QStoreMaterializedViewStrategy oracle_strategies[] = {
  QSTORE_MATERIALIZED_VIEW_STRATEGY_INVERSE_PROJECTION,
  QSTORE_MATERIALIZED_VIEW_STRATEGY_INVERSE_PROJECTION,
  QSTORE_MATERIALIZED_VIEW_STRATEGY_INVERSE_PROJECTION,
  QSTORE_MATERIALIZED_VIEW_STRATEGY_GROUP_RECOMPUTE,
  QSTORE_MATERIALIZED_VIEW_STRATEGY_GROUP_RECOMPUTE,
  QSTORE_MATERIALIZED_VIEW_STRATEGY_GROUP_RECOMPUTE,
  QSTORE_MATERIALIZED_VIEW_STRATEGY_FULL_REBUILD,
  QSTORE_MATERIALIZED_VIEW_STRATEGY_FULL_REBUILD,
  QSTORE_MATERIALIZED_VIEW_STRATEGY_FULL_REBUILD,
  QSTORE_MATERIALIZED_VIEW_STRATEGY_FULL_REBUILD,
  QSTORE_MATERIALIZED_VIEW_STRATEGY_FULL_REBUILD,
  QSTORE_MATERIALIZED_VIEW_STRATEGY_INVERSE_PROJECTION,
  QSTORE_MATERIALIZED_VIEW_STRATEGY_INVERSE_PROJECTION,
  QSTORE_MATERIALIZED_VIEW_STRATEGY_FULL_REBUILD,
};

static void
create_oracle_views (QStoreDatabase *db)
{
  for (guint i = 0; i < G_N_ELEMENTS (oracle_views); i++)
    {
      g_autofree char *sql = g_strdup_printf ("CREATE MATERIALIZED VIEW %s AS %s",
                                              oracle_views[i][0], oracle_views[i][1]);

      test_exec (db, sql);
    }
}

static void
check_oracle_views (QStoreDatabase *db,
                    const char     *context)
{
  for (guint i = 0; i < G_N_ELEMENTS (oracle_views); i++)
    assert_view_current (db, oracle_views[i][0], context);
}

static const char *
pick (GRand              *rand,
      const char * const *choices,
      guint               n)
{
  return choices[g_rand_int_range (rand, 0, n)];
}

/* One random write (or transaction control) statement. */
static char *
random_statement (GRand    *rand,
                  gboolean  in_transaction,
                  guint    *savepoints)
{
  static const char * const groups[] = { "'a'", "'b'", "'c'", "'d'", "NULL" };
  static const char * const texts[] = { "'x'", "'X'", "'y'", "'Y'", "NULL" };
  static const char * const keys[] = { "'k1'", "'k2'", "'k3'", "'k4'", "'k5'", "'k6'", "NULL" };
  int dice = g_rand_int_range (rand, 0, 100);
  int id = g_rand_int_range (rand, 1, 40);
  int x = g_rand_int_range (rand, -50, 51);

  if (dice < 4)
    {
      if (!in_transaction)
        return g_strdup ("BEGIN");
      if (*savepoints > 0 && dice < 2)
        return g_strdup_printf ("ROLLBACK TO s%u", g_rand_int_range (rand, 1, *savepoints + 1));
      if (*savepoints > 0 && dice < 3)
        {
          guint level = g_rand_int_range (rand, 1, *savepoints + 1);

          *savepoints = level - 1;
          return g_strdup_printf ("RELEASE s%u", level);
        }
      (*savepoints)++;
      return g_strdup_printf ("SAVEPOINT s%u", *savepoints);
    }
  if (dice < 7 && in_transaction)
    {
      *savepoints = 0;
      return g_strdup (dice < 5 ? "ROLLBACK" : "COMMIT");
    }

  switch (g_rand_int_range (rand, 0, 14))
    {
    case 0:
    case 1:
      return g_strdup_printf ("INSERT OR REPLACE INTO t VALUES (%d, %s, %d, %d, %s)", id,
                              pick (rand, groups, 5), g_rand_int_range (rand, 0, 4), x,
                              pick (rand, texts, 5));
    case 2:
      return g_strdup_printf ("INSERT INTO t VALUES (%d, %s, %d, %d, %s)", id,
                              pick (rand, groups, 5), g_rand_int_range (rand, 0, 4), x,
                              pick (rand, texts, 5));
    case 3:
      return g_strdup_printf ("UPDATE t SET x = %d, g = %s WHERE id = %d", x,
                              pick (rand, groups, 5), id);
    case 4:
      /* a primary key change */
      return g_strdup_printf ("UPDATE t SET id = %d WHERE id = %d", g_rand_int_range (rand, 1, 40), id);
    case 5:
      return g_strdup_printf ("DELETE FROM t WHERE id = %d", id);
    case 6:
      return g_strdup_printf ("UPDATE t SET x = x + 1, s = %s WHERE g = %s",
                              pick (rand, texts, 5), pick (rand, groups, 4));
    case 7:
      return g_strdup_printf ("DELETE FROM t WHERE x > %d", g_rand_int_range (rand, 30, 51));
    case 8:
      return g_strdup_printf ("INSERT OR REPLACE INTO u VALUES (%s, %s, %g)", pick (rand, keys, 7),
                              pick (rand, groups, 5), g_rand_int_range (rand, -8, 9) / 4.0);
    case 9:
      return g_strdup_printf ("UPDATE u SET v = NULL WHERE k = %s", pick (rand, keys, 6));
    case 10:
      return g_strdup_printf ("DELETE FROM u WHERE k IS %s", pick (rand, keys, 7));
    case 11:
      return g_strdup_printf ("INSERT OR REPLACE INTO w VALUES (%d, %d, %s)",
                              g_rand_int_range (rand, 1, 5), g_rand_int_range (rand, 1, 6),
                              pick (rand, texts, 5));
    case 12:
      return g_strdup_printf ("UPDATE w SET b = b + 3 WHERE a = %d AND b = %d",
                              g_rand_int_range (rand, 1, 5), g_rand_int_range (rand, 1, 6));
    default:
      return g_strdup_printf ("DELETE FROM w WHERE a = %d", g_rand_int_range (rand, 1, 5));
    }
}

static void
test_oracle (Fixture       *f,
             gconstpointer  data)
{
  g_autoptr(GRand) rand = g_rand_new_with_seed (test_seed ());
  guint n_ops = test_env_count ("QSTORE_TEST_ORACLE_OPS", test_provider_persistent () ? 2000 : 3000);
  gboolean in_transaction = FALSE;
  guint savepoints = 0;
  guint writes = 0;

  g_test_message ("seed %u, %u statements", test_seed (), n_ops);
  create_sources (f->db);
  create_oracle_views (f->db);
  for (guint i = 0; i < G_N_ELEMENTS (oracle_views); i++)
    if (view_strategy (f->db, oracle_views[i][0]) != oracle_strategies[i])
      g_error ("View “%s” has strategy %d, not %d", oracle_views[i][0],
               view_strategy (f->db, oracle_views[i][0]), oracle_strategies[i]);
  check_oracle_views (f->db, "after create");

  for (guint i = 0; i < n_ops; i++)
    {
      g_autofree char *sql = random_statement (rand, in_transaction, &savepoints);
      g_autoptr(GError) error = NULL;

      if (!qstore_database_exec (f->db, sql, &error))
        {
          /* Constraint failures are expected: the statement is undone. */
          if (!g_error_matches (error, QSTORE_ERROR, QSTORE_ERROR_CONSTRAINT) &&
              !g_error_matches (error, QSTORE_ERROR, QSTORE_ERROR_NOT_FOUND))
            g_error ("“%s” failed: %s", sql, error->message);
        }
      else if (!g_str_has_prefix (sql, "SAVEPOINT") && !g_str_has_prefix (sql, "RELEASE") &&
               !g_str_has_prefix (sql, "ROLLBACK") && !g_str_has_prefix (sql, "BEGIN") &&
               !g_str_has_prefix (sql, "COMMIT"))
        writes++;

      if (g_str_equal (sql, "BEGIN"))
        in_transaction = TRUE;
      else if (g_str_equal (sql, "COMMIT") || g_str_equal (sql, "ROLLBACK"))
        in_transaction = FALSE;

      if (g_rand_int_range (rand, 0, 8) == 0)
        {
          g_autofree char *context = g_strdup_printf ("after statement %u “%s”%s", i, sql,
                                                      in_transaction ? " (in a transaction)" : "");

          check_oracle_views (f->db, context);
        }
    }
  if (in_transaction)
    test_exec (f->db, "COMMIT");
  check_oracle_views (f->db, "at the end");
  g_test_message ("%u writes", writes);
  g_assert_cmpuint (writes, >, n_ops / 2);

  for (guint i = 0; i < G_N_ELEMENTS (oracle_views); i++)
    g_assert_false (view_stale (f->db, oracle_views[i][0]));

  if (test_provider_persistent ())
    {
      test_database_reopen (f);
      check_oracle_views (f->db, "after reopen");
    }
}

/* A view over a TEMP table works while the database object lives; on
 * reopen its source is gone, and the view is a collected error. */
static void
test_temp (Fixture       *f,
           gconstpointer  data)
{
  g_autoptr(QStoreMaterializedView) view = NULL;
  QStoreRehydrationResult *result;
  gboolean found_mt = FALSE, found_mt2 = FALSE;

  test_exec (f->db, "CREATE TEMP TABLE tt (id INTEGER PRIMARY KEY, v INT);"
                    "INSERT INTO tt VALUES (1, 10), (2, 20), (3, 1);"
                    "CREATE TABLE keep (id INTEGER PRIMARY KEY);"
                    "CREATE MATERIALIZED VIEW mt AS SELECT id, v FROM tt WHERE v > 5;"
                    "CREATE MATERIALIZED VIEW mt2 AS SELECT count(*) AS n, sum(v) AS s FROM mt");
  view = find_view (f->db, "mt");
  g_assert_cmpint (qstore_materialized_view_get_strategy (view), ==,
                   QSTORE_MATERIALIZED_VIEW_STRATEGY_FULL_REBUILD);
  g_assert_cmpstrv (qstore_materialized_view_get_sources (view),
                    ((const char *[]) { "temp.tt", NULL }));
  assert_view_current (f->db, "mt", "after create");

  test_exec (f->db, "INSERT INTO tt VALUES (4, 40)");
  assert_view_current (f->db, "mt", "after an insert");
  assert_view_current (f->db, "mt2", "after an insert");
  g_assert_cmpint (test_query_int (f->db, "SELECT n FROM mt2"), ==, 3);

  test_exec (f->db, "BEGIN; UPDATE tt SET v = 0 WHERE id = 1");
  assert_view_current (f->db, "mt", "inside a transaction");
  assert_view_current (f->db, "mt2", "inside a transaction");
  test_exec (f->db, "ROLLBACK");
  assert_view_current (f->db, "mt", "after a rollback");
  assert_view_current (f->db, "mt2", "after a rollback");

  test_exec (f->db, "SAVEPOINT a; DELETE FROM tt; INSERT INTO keep VALUES (1)");
  assert_view_current (f->db, "mt2", "inside a savepoint");
  test_exec (f->db, "ROLLBACK TO a; RELEASE a");
  assert_view_current (f->db, "mt", "after ROLLBACK TO");
  assert_view_current (f->db, "mt2", "after ROLLBACK TO");
  g_assert_cmpint (test_query_int (f->db, "SELECT n FROM mt2"), ==, 3);

  if (!test_provider_persistent ())
    return;

  test_database_reopen (f);
  result = qstore_database_get_rehydration_result (f->db);
  for (guint i = 0; i < qstore_rehydration_result_get_n_errors (result); i++)
    {
      const char *name = qstore_rehydration_result_get_error_name (result, i);

      if (g_str_equal (name, "main.mt"))
        {
          found_mt = TRUE;
          g_assert_nonnull (strstr (qstore_rehydration_result_get_error_message (result, i), "tt"));
        }
      found_mt2 = found_mt2 || g_str_equal (name, "main.mt2");
    }
  g_assert_true (found_mt);
  g_assert_true (found_mt2);
  g_assert_null (find_view (f->db, "mt"));
  g_free (test_exec_error (f->db, "SELECT * FROM mt", QSTORE_ERROR_NOT_FOUND));
  g_assert_false (test_strv_has (qstore_rehydration_result_get_tables (result), "main.mt"));

  /* Its name stays taken. */
  g_free (test_exec_error (f->db, "CREATE TABLE mt (x)", QSTORE_ERROR_EXISTS));
  g_free (test_exec_error (f->db, "CREATE VIEW mt2 AS SELECT 1", QSTORE_ERROR_EXISTS));
  g_free (test_exec_error (f->db, "CREATE MATERIALIZED VIEW mt AS SELECT 1", QSTORE_ERROR_EXISTS));

  /* With its source back, REFRESH brings it back; DROP removes one that
   * does not load. */
  test_exec (f->db,
             "CREATE TEMP TABLE tt (id INTEGER PRIMARY KEY, v INT); INSERT INTO tt VALUES (7, 70)");
  test_exec (f->db, "REFRESH MATERIALIZED VIEW mt");
  g_assert_cmpint (test_query_int (f->db, "SELECT v FROM mt"), ==, 70);
  assert_view_current (f->db, "mt", "after refresh");
  test_exec (f->db, "DROP MATERIALIZED VIEW mt2");
  g_free (test_exec_error (f->db, "DROP MATERIALIZED VIEW mt2", QSTORE_ERROR_NOT_FOUND));
  test_database_reopen (f);
  g_assert_null (find_view (f->db, "mt2"));
}

/* Stage 3: staleness */

static void
create_stale_fixture (QStoreDatabase *db)
{
  test_exec (db, "CREATE TABLE t (id INTEGER PRIMARY KEY, a TEXT, b INT, c INT);"
                 "CREATE TABLE other (id INTEGER PRIMARY KEY, z INT);"
                 "INSERT INTO t VALUES (1, 'p', 1, 1), (2, 'q', 1, 2), (3, NULL, 2, 3);"
                 "CREATE MATERIALIZED VIEW mv_a AS SELECT id, a FROM t;"
                 "CREATE MATERIALIZED VIEW mv_b AS SELECT b, count(*) AS n FROM t GROUP BY b;"
                 "CREATE MATERIALIZED VIEW mv_over AS SELECT id, a FROM mv_a WHERE a IS NOT NULL;"
                 "CREATE MATERIALIZED VIEW mv_o AS SELECT id, z FROM other");
}

static void
assert_all_live (QStoreDatabase *db,
                 const char     *context)
{
  const char *views[] = { "mv_a", "mv_b", "mv_over", "mv_o", NULL };

  for (guint i = 0; views[i] != NULL; i++)
    {
      if (view_stale (db, views[i]))
        g_error ("%s: view “%s” went stale", context, views[i]);
      assert_view_current (db, views[i], context);
    }
}

static char *
durable_set (QStoreDatabase *db)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(QStoreStaleReport) report = qstore_stale_report_new (qstore_database_get_provider (db),
                                                                 &error);
  const char * const *names;

  g_assert_no_error (error);
  if (!qstore_stale_report_get_durable_set_present (report))
    return NULL;
  names = qstore_stale_report_get_durable_stale (report);
  return names != NULL ? g_strjoinv (",", (char **) names) : g_strdup ("malformed");
}

static void
test_stale (Fixture       *f,
            gconstpointer  data)
{
  g_autoptr(QStoreMaterializedView) view = NULL;
  g_autofree char *message = NULL;

  create_stale_fixture (f->db);
  assert_all_live (f->db, "after create");

  /* What the bodies do not read leaves them live, and followed. */
  test_exec (f->db, "ALTER TABLE t ADD COLUMN d INT DEFAULT 5");
  assert_all_live (f->db, "after ADD COLUMN");
  test_exec (f->db, "CREATE INDEX t_c ON t (c)");
  assert_all_live (f->db, "after CREATE INDEX");
  test_exec (f->db, "ALTER TABLE t DROP COLUMN c");
  assert_all_live (f->db, "after DROP COLUMN of an unread column");
  test_exec (f->db, "ALTER TABLE t ALTER COLUMN d SET DEFAULT 1");
  assert_all_live (f->db, "after SET DEFAULT");
  test_exec (f->db, "ALTER TABLE t ALTER COLUMN d SET COLLATE NOCASE");
  assert_all_live (f->db, "after SET COLLATE of an unread column");
  test_exec (f->db, "CREATE INDEX t_b ON t (b)");
  g_assert_cmpint (view_strategy (f->db, "mv_b"), ==, QSTORE_MATERIALIZED_VIEW_STRATEGY_GROUP_RECOMPUTE);
  test_exec (f->db, "DROP INDEX t_b");
  g_assert_cmpint (view_strategy (f->db, "mv_b"), ==, QSTORE_MATERIALIZED_VIEW_STRATEGY_FULL_REBUILD);
  test_exec (f->db,
             "INSERT INTO t (id, a, b) VALUES (4, 'r', 2); UPDATE t SET a = 'pp' WHERE id = 1");
  assert_all_live (f->db, "after writes");
  if (test_provider_persistent () && test_provider_atomic ())
    {
      g_autofree char *set = durable_set (f->db);

      g_assert_cmpstr (set, ==, "");
    }

  /* A read column re-collated: stale, and so is the view over it. */
  test_exec (f->db, "ALTER TABLE t ALTER COLUMN a SET COLLATE NOCASE");
  g_assert_true (view_stale (f->db, "mv_a"));
  g_assert_true (view_stale (f->db, "mv_over"));
  g_assert_false (view_stale (f->db, "mv_b"));
  g_assert_false (view_stale (f->db, "mv_o"));
  view = find_view (f->db, "mv_a");
  g_assert_nonnull (strstr (qstore_materialized_view_get_stale_reason (view), "t.a"));
  g_clear_object (&view);
  view = find_view (f->db, "mv_over");
  g_assert_nonnull (strstr (qstore_materialized_view_get_stale_reason (view), "mv_a"));
  g_clear_object (&view);
  if (test_provider_persistent () && test_provider_atomic ())
    {
      g_autofree char *set = durable_set (f->db);

      g_assert_cmpstr (set, ==, "main.mv_a,main.mv_over");
    }

  /* Stale views keep their last contents and are no longer followed. */
  test_exec (f->db, "INSERT INTO t (id, a, b) VALUES (5, 's', 3)");
  g_assert_cmpint (test_query_int (f->db, "SELECT count(*) FROM mv_a"), ==, 4);
  g_assert_cmpint (test_query_int (f->db, "SELECT count(*) FROM mv_a WHERE id = 5"), ==, 0);
  assert_view_current (f->db, "mv_b", "beside stale views");

  /* REFRESH: the view over it waits for its source. */
  message = test_exec_error (f->db, "REFRESH MATERIALIZED VIEW mv_over", QSTORE_ERROR_FAILED);
  g_assert_nonnull (strstr (message, "refresh “mv_a” first"));
  test_exec (f->db, "REFRESH MATERIALIZED VIEW mv_a");
  g_assert_false (view_stale (f->db, "mv_a"));
  g_assert_true (view_stale (f->db, "mv_over"));
  assert_view_current (f->db, "mv_a", "after refresh");
  test_exec (f->db, "REFRESH MATERIALIZED VIEW mv_over");
  assert_all_live (f->db, "after both refreshes");
  test_exec (f->db, "INSERT INTO t (id, a, b) VALUES (6, 'T', 3)");
  assert_all_live (f->db, "refreshed views are followed again");
  if (test_provider_persistent () && test_provider_atomic ())
    {
      g_autofree char *set = durable_set (f->db);

      g_assert_cmpstr (set, ==, "");
    }

  /* A read column renamed; a read column dropped. */
  test_exec (f->db, "ALTER TABLE t RENAME COLUMN a TO a2");
  g_assert_true (view_stale (f->db, "mv_a"));
  g_assert_true (view_stale (f->db, "mv_over"));
  g_assert_false (view_stale (f->db, "mv_b"));
  g_free (test_exec_error (f->db, "REFRESH MATERIALIZED VIEW mv_a", QSTORE_ERROR_NOT_FOUND));
  test_exec (f->db, "ALTER TABLE t DROP COLUMN b");
  g_assert_true (view_stale (f->db, "mv_b"));
  g_assert_false (view_stale (f->db, "mv_o"));

  /* The primary key changed; the source dropped. */
  test_exec (f->db, "ALTER TABLE other ADD COLUMN y INT");
  g_assert_false (view_stale (f->db, "mv_o"));
  test_exec (f->db, "ALTER TABLE other ALTER PRIMARY KEY (id, z)");
  g_assert_true (view_stale (f->db, "mv_o"));
  view = find_view (f->db, "mv_o");
  g_assert_nonnull (strstr (qstore_materialized_view_get_stale_reason (view), "primary key"));
  g_clear_object (&view);
  test_exec (f->db, "REFRESH MATERIALIZED VIEW mv_o");
  g_assert_false (view_stale (f->db, "mv_o"));
  test_exec (f->db, "DROP TABLE other");
  g_assert_true (view_stale (f->db, "mv_o"));
  g_assert_cmpint (test_query_int (f->db, "SELECT count(*) FROM mv_o"), ==, 0);

  /* Dropping a view makes the views over it stale. */
  test_exec (f->db, "ALTER TABLE t RENAME COLUMN a2 TO a; REFRESH MATERIALIZED VIEW mv_a;"
                    "REFRESH MATERIALIZED VIEW mv_over");
  g_assert_false (view_stale (f->db, "mv_over"));
  test_exec (f->db, "DROP MATERIALIZED VIEW mv_a");
  g_assert_true (view_stale (f->db, "mv_over"));
}

/* Stage 4: adopt only what is provably current */

static void
create_trust_fixture (QStoreDatabase *db)
{
  test_exec (db, "CREATE TABLE t (id INTEGER PRIMARY KEY, a TEXT, b INT);"
                 "CREATE INDEX t_b ON t (b);"
                 "INSERT INTO t VALUES (1, 'p', 1), (2, 'q', 1), (3, 'r', 2);"
                 "CREATE MATERIALIZED VIEW mv_a AS SELECT id, a FROM t;"
                 "CREATE MATERIALIZED VIEW mv_b AS SELECT b, count(*) AS n FROM t GROUP BY b;"
                 "CREATE MATERIALIZED VIEW mv_over AS SELECT id, a FROM mv_a WHERE id < 100;"
                 "CREATE MATERIALIZED VIEW mv_full AS SELECT count(*) AS n FROM mv_over");
}

static const char * const trust_views[] = { "mv_a", "mv_b", "mv_over", "mv_full", NULL };

static void
with_catalog (const char  *uri,
              const char  *meta,
              const char  *value)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(QStoreProvider) provider = qstore_provider_new_for_uri (uri, QSTORE_OPEN_NONE, &error);
  g_autoptr(QStoreKV) catalog = NULL;
  g_autoptr(GBytes) key = qstore_catalog_key_for_meta (meta);
  gsize len;
  const guint8 *data = g_bytes_get_data (key, &len);

  g_assert_no_error (error);
  catalog = qstore_provider_get_catalog_store (provider, &error);
  g_assert_no_error (error);
  if (value != NULL)
    qstore_kv_put (catalog, data, len, (const guint8 *) value, strlen (value), QSTORE_WRITE_SYNC, &error);
  else
    qstore_kv_delete (catalog, data, len, QSTORE_WRITE_SYNC, &error);
  g_assert_no_error (error);
  qstore_provider_close_all (provider);
}

/* A row written into mv_a's stored contents behind the database's back:
 * it survives only if the next open adopts mv_a. */
static void
plant_row (const char *uri)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(QStoreProvider) provider = qstore_provider_new_for_uri (uri, QSTORE_OPEN_NONE, &error);
  g_autoptr(QStoreKV) store = NULL;
  g_autoptr(GBytes) key = NULL;
  g_autoptr(GBytes) row = NULL;
  const QStoreCollation binary[] = { QSTORE_COLLATION_BINARY };
  const gboolean ascending[] = { FALSE };

  g_assert_no_error (error);
  store = qstore_provider_get_store (provider, "main", "mv_a", &error);
  g_assert_no_error (error);
  key = qstore_codec_encode_key (g_variant_new_parsed ("(<int64 999>,)"), binary, ascending, 1, &error);
  g_assert_no_error (error);
  row = qstore_codec_encode_row (g_variant_new_parsed ("(<int64 999>, <'planted'>)"), &error);
  g_assert_no_error (error);
  qstore_kv_put (store, g_bytes_get_data (key, NULL), g_bytes_get_size (key),
                 g_bytes_get_data (row, NULL), g_bytes_get_size (row), QSTORE_WRITE_SYNC, &error);
  g_assert_no_error (error);
  qstore_provider_close_all (provider);
}

static gboolean
planted_row_seen (QStoreDatabase *db)
{
  return test_query_int (db, "SELECT count(*) FROM mv_a WHERE id = 999") == 1;
}

/* Which views the last open adopted, as "a,b": the rest were refilled. */
static char *
adopted (QStoreDatabase *db)
{
  QStoreRehydrationResult *result = qstore_database_get_rehydration_result (db);
  const char * const *names = qstore_rehydration_result_get_adopted_materialized_views (result);
  const char * const *refilled = qstore_rehydration_result_get_refilled_materialized_views (result);
  g_autoptr(GPtrArray) sorted = g_ptr_array_new ();
  GString *text = g_string_new (NULL);

  g_assert_cmpuint (qstore_rehydration_result_get_n_errors (result), ==, 0);
  g_assert_cmpuint (g_strv_length ((char **) names) + g_strv_length ((char **) refilled), ==, 4);
  for (guint i = 0; names[i] != NULL; i++)
    g_ptr_array_add (sorted, (gpointer) names[i]);
  g_ptr_array_sort (sorted, compare_lines);
  for (guint i = 0; i < sorted->len; i++)
    g_string_append_printf (text, "%s%s", i > 0 ? "," : "", (const char *) sorted->pdata[i] + 5);
  return g_string_free (text, FALSE);
}

static void
assert_trust_views_current (QStoreDatabase *db,
                            const char     *context)
{
  for (guint i = 0; trust_views[i] != NULL; i++)
    {
      g_assert_false (view_stale (db, trust_views[i]));
      assert_view_current (db, trust_views[i], context);
    }
}

static void
test_trust_clean (Fixture       *f,
                  gconstpointer  data)
{
  g_autofree char *list = NULL;

  if (!test_provider_persistent ())
    {
      g_test_skip ("a memory store is gone once closed");
      return;
    }
  create_trust_fixture (f->db);
  test_close_database (&f->db);
  plant_row (f->uri);

  f->db = test_open_database (f->uri, QSTORE_OPEN_NONE);
  list = adopted (f->db);
  g_assert_cmpstr (list, ==, "mv_a,mv_b,mv_full,mv_over");
  g_assert_true (planted_row_seen (f->db));
  /* REFRESH computes it again. */
  test_exec (f->db, "REFRESH MATERIALIZED VIEW mv_a; REFRESH MATERIALIZED VIEW mv_over;"
                    "REFRESH MATERIALIZED VIEW mv_full");
  g_assert_false (planted_row_seen (f->db));
  assert_trust_views_current (f->db, "after refresh");
}

/* Malformed marker or durable set: nothing is trusted. */
static void
test_trust_malformed (Fixture       *f,
                      gconstpointer  data)
{
  g_autofree char *list = NULL;

  if (!test_provider_persistent ())
    {
      g_test_skip ("a memory store is gone once closed");
      return;
    }
  create_trust_fixture (f->db);
  test_close_database (&f->db);

  if (test_provider_atomic ())
    {
      /* The durable set decides; malformed, it trusts nothing. */
      plant_row (f->uri);
      with_catalog (f->uri, "stale_mvs", "{\"not\": \"a list\"}");
      f->db = test_open_database (f->uri, QSTORE_OPEN_NONE);
      list = adopted (f->db);
      g_assert_cmpstr (list, ==, "");
      g_assert_false (planted_row_seen (f->db));
      assert_trust_views_current (f->db, "after a malformed durable set");
      test_close_database (&f->db);
      g_clear_pointer (&list, g_free);

      /* Without the set, the marker decides. */
      with_catalog (f->uri, "stale_mvs", NULL);
    }

  plant_row (f->uri);
  with_catalog (f->uri, "clean_shutdown", "[\"main.mv_a\"");
  f->db = test_open_database (f->uri, QSTORE_OPEN_NONE);
  list = adopted (f->db);
  g_assert_cmpstr (list, ==, "");
  g_assert_false (planted_row_seen (f->db));
  assert_trust_views_current (f->db, "after a malformed marker");
  test_close_database (&f->db);
  g_clear_pointer (&list, g_free);

  if (test_provider_atomic ())
    with_catalog (f->uri, "stale_mvs", NULL);
  with_catalog (f->uri, "clean_shutdown", "[42]");
  plant_row (f->uri);
  f->db = test_open_database (f->uri, QSTORE_OPEN_NONE);
  list = adopted (f->db);
  g_assert_cmpstr (list, ==, "");
  g_assert_false (planted_row_seen (f->db));
}

/* Stale at a clean close: those refill, the others adopt. */
static void
test_trust_stale_at_close (Fixture       *f,
                           gconstpointer  data)
{
  g_autoptr(QStoreStaleReport) report = NULL;
  g_autoptr(QStoreProvider) provider = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *list = NULL;

  if (!test_provider_persistent ())
    {
      g_test_skip ("a memory store is gone once closed");
      return;
    }
  create_trust_fixture (f->db);
  test_exec (f->db, "ALTER TABLE t ALTER COLUMN a SET COLLATE NOCASE");
  g_assert_true (view_stale (f->db, "mv_a"));
  g_assert_true (view_stale (f->db, "mv_over"));
  g_assert_true (view_stale (f->db, "mv_full"));
  g_assert_false (view_stale (f->db, "mv_b"));
  test_close_database (&f->db);

  provider = qstore_provider_new_for_uri (f->uri, QSTORE_OPEN_READ_ONLY, &error);
  g_assert_no_error (error);
  report = qstore_stale_report_new (provider, &error);
  g_assert_no_error (error);
  qstore_provider_close_all (provider);
  g_assert_cmpstr (qstore_stale_report_get_marker_text (report), ==,
                   "[\"main.mv_a\",\"main.mv_full\",\"main.mv_over\"]");
  g_assert_cmpint (qstore_stale_report_get_trust (report), ==,
                   test_provider_atomic () ? QSTORE_STALE_TRUST_DURABLE_SET
                                           : QSTORE_STALE_TRUST_MARKER);

  f->db = test_open_database (f->uri, QSTORE_OPEN_NONE);
  list = adopted (f->db);
  g_assert_cmpstr (list, ==, "mv_b");
  assert_trust_views_current (f->db, "after reopen");
}

/* The marker is consumed by the open that reads it; a session that ends
 * without close leaves none. */
static void
test_trust_marker_once (Fixture       *f,
                        gconstpointer  data)
{
  g_autoptr(QStoreStaleReport) report = NULL;
  g_autoptr(QStoreProvider) provider = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *list = NULL;

  if (!test_provider_persistent ())
    {
      g_test_skip ("a memory store is gone once closed");
      return;
    }
  create_trust_fixture (f->db);
  test_close_database (&f->db);
  f->db = test_open_database (f->uri, QSTORE_OPEN_NONE);

  provider = qstore_provider_new_for_uri (f->uri, QSTORE_OPEN_READ_ONLY, &error);
  g_assert_no_error (error);
  report = qstore_stale_report_new (provider, &error);
  g_assert_no_error (error);
  qstore_provider_close_all (provider);
  g_assert_false (qstore_stale_report_get_marker_present (report));

  /* Dropped without close, as a crash would. */
  g_clear_object (&f->db);
  plant_row (f->uri);
  f->db = test_open_database (f->uri, QSTORE_OPEN_NONE);
  list = adopted (f->db);
  if (test_provider_atomic ())
    {
      /* The durable set vouches for every view: none was stale. */
      g_assert_cmpstr (list, ==, "mv_a,mv_b,mv_full,mv_over");
      g_assert_true (planted_row_seen (f->db));
      test_exec (f->db, "REFRESH MATERIALIZED VIEW mv_a; REFRESH MATERIALIZED VIEW mv_over;"
                        "REFRESH MATERIALIZED VIEW mv_full");
    }
  else
    {
      g_assert_cmpstr (list, ==, "");
      g_assert_false (planted_row_seen (f->db));
    }
  assert_trust_views_current (f->db, "after an open without close");
}

/* A refilled view forces the views over it to refill. */
static void
test_trust_upstream (Fixture       *f,
                     gconstpointer  data)
{
  g_autofree char *list = NULL;

  if (!test_provider_persistent ())
    {
      g_test_skip ("a memory store is gone once closed");
      return;
    }
  create_trust_fixture (f->db);
  test_close_database (&f->db);
  if (test_provider_atomic ())
    with_catalog (f->uri, "stale_mvs", "[\"main.mv_a\"]");
  else
    with_catalog (f->uri, "clean_shutdown", "[\"main.mv_a\"]");
  f->db = test_open_database (f->uri, QSTORE_OPEN_NONE);
  list = adopted (f->db);
  g_assert_cmpstr (list, ==, "mv_b");
  assert_trust_views_current (f->db, "after reopen");
}

/* Killed with SIGKILL after making a view stale and writing on. */
static int
hold_child (const char *uri)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(QStoreDatabase) db = qstore_database_open (uri, QSTORE_OPEN_NONE, &error);

  if (db == NULL ||
      /* Stale by the first ALTER; the second gives the views their old
       * shape back, so only the durable set can tell they are behind. */
      !qstore_database_exec (db, "ALTER TABLE t ALTER COLUMN a SET COLLATE NOCASE;"
                                 "ALTER TABLE t ALTER COLUMN a SET COLLATE BINARY;"
                                 "INSERT INTO t VALUES (10, 's', 3), (11, 't', 1);"
                                 "UPDATE t SET b = 2 WHERE id = 1", &error))
    {
      g_printerr ("hold child: %s\n", error->message);
      return 1;
    }
  printf ("ready\n");
  fflush (stdout);
  for (;;)
    g_usleep (G_USEC_PER_SEC);
  return 0;
}

static void
test_trust_crash (Fixture       *f,
                  gconstpointer  data)
{
  const char *argv[] = { self_path, "--hold-child", NULL, NULL };
  g_autoptr(GError) error = NULL;
  g_autofree char *list = NULL;
  GPid pid;
  int out_fd;
  char buffer[16] = { 0 };
  int status;

  if (!test_provider_persistent ())
    {
      g_test_skip ("a memory store is gone once closed");
      return;
    }
  create_trust_fixture (f->db);
  test_close_database (&f->db);

  argv[2] = f->uri;
  g_spawn_async_with_pipes (NULL, (char **) argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD, NULL, NULL,
                            &pid, NULL, &out_fd, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (read (out_fd, buffer, 6), ==, 6);
  g_assert_cmpstr (buffer, ==, "ready\n");
  kill (pid, SIGKILL);
  waitpid (pid, &status, 0);
  g_spawn_close_pid (pid);
  close (out_fd);

  f->db = test_open_database (f->uri, QSTORE_OPEN_NONE);
  list = adopted (f->db);
  if (test_provider_atomic ())
    /* The stale views are in the durable set; the other one is trusted
     * even after a crash: its source and it commit together. */
    g_assert_cmpstr (list, ==, "mv_b");
  else
    g_assert_cmpstr (list, ==, "");
  assert_trust_views_current (f->db, "after a crash");
  g_assert_cmpint (test_query_int (f->db, "SELECT n FROM mv_b WHERE b = 2"), ==, 2);
}

/* A writer that makes a view stale, waits, then writes its source
 * without maintaining it: the scenario where another handle's clean close
 * used to write a clean-shutdown marker of its own, which then vouched for
 * the view behind its source. */
static int
forgery_child (const char *uri)
{
  g_autoptr(QStoreDatabase) db = NULL;
  g_autoptr(GError) error = NULL;
  char line[16];

  if (!(db = qstore_database_open (uri, QSTORE_OPEN_NONE, &error)) ||
      !qstore_database_exec (db, "ALTER TABLE src ALTER COLUMN v SET COLLATE NOCASE", &error))
    {
      g_printerr ("forgery child: %s\n", error->message);
      return 1;
    }
  printf ("stale\n");
  fflush (stdout);
  if (fgets (line, sizeof line, stdin) == NULL ||
      !qstore_database_exec (db, "INSERT INTO src VALUES (3, 'c')", &error))
    {
      g_printerr ("forgery child: %s\n", error != NULL ? error->message : "no go");
      return 1;
    }
  printf ("inserted\n");
  fflush (stdout);
  for (;;)
    g_usleep (G_USEC_PER_SEC);
  return 0;
}

static void
test_marker_forgery (Fixture       *f,
                     gconstpointer  data)
{
  const char *argv[] = { self_path, "--forgery-child", NULL, NULL };
  const char *tool = g_getenv ("QSTORE_TOOL");
  g_autoptr(GError) error = NULL;
  g_autoptr(TestRun) reader = NULL;
  QStoreRehydrationResult *result;
  char buffer[16] = { 0 };
  GPid pid;
  int in_fd, out_fd;
  int status;

  if (!test_provider_persistent ())
    {
      g_test_skip ("a memory store is gone once closed");
      return;
    }
  test_exec (f->db, "CREATE TABLE src (id INTEGER PRIMARY KEY, v TEXT);"
                    "INSERT INTO src VALUES (1, 'a'), (2, 'b');"
                    "CREATE MATERIALIZED VIEW mv AS SELECT id, v FROM src");
  test_close_database (&f->db);

  argv[2] = f->uri;
  g_spawn_async_with_pipes (NULL, (char **) argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD, NULL, NULL,
                            &pid, &in_fd, &out_fd, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (read (out_fd, buffer, 6), ==, 6);
  g_assert_cmpstr (buffer, ==, "stale\n");

  /* A reader meanwhile opens read-only and writes no marker. */
  reader = test_run_program (tool, NULL, f->uri, "sql", "SELECT count(*) FROM src", NULL);
  g_assert_cmpint (reader->status, ==, 0);
  g_assert_cmpstr (reader->out, ==, "2\n");

  g_assert_cmpint (write (in_fd, "go\n", 3), ==, 3);
  memset (buffer, 0, sizeof buffer);
  g_assert_cmpint (read (out_fd, buffer, 9), ==, 9);
  g_assert_cmpstr (buffer, ==, "inserted\n");
  kill (pid, SIGKILL);
  waitpid (pid, &status, 0);
  g_spawn_close_pid (pid);
  close (in_fd);
  close (out_fd);

  /* Nothing vouches for the view: it is computed again, not adopted
   * behind its source. */
  f->db = test_open_database (f->uri, QSTORE_OPEN_NONE);
  result = qstore_database_get_rehydration_result (f->db);
  g_assert_cmpuint (g_strv_length ((char **) qstore_rehydration_result_get_adopted_materialized_views (result)), ==, 0);
  g_assert_true (g_strv_contains (qstore_rehydration_result_get_refilled_materialized_views (result),
                                  "main.mv"));
  g_assert_cmpint (test_query_int (f->db, "SELECT count(*) FROM mv"), ==,
                   test_query_int (f->db, "SELECT count(*) FROM src"));
  g_assert_cmpint (test_query_int (f->db, "SELECT count(*) FROM mv"), ==, 3);
}

/* Stage 5: the crash loop */

/* One step of a writer's session: a transaction of random writes
 * committed (its id in the log table, *committed set) or rolled back, or
 * DDL that makes views stale, or REFRESH of the stale ones, or a clean
 * close and reopen (*db replaced). */
static gboolean
session_step (QStoreDatabase **db,
              const char      *uri,
              GRand           *rand,
              gint64           next,
              gboolean        *committed,
              GError         **error)
{
  int dice = g_rand_int_range (rand, 0, 100);
  guint savepoints = 0;

  *committed = FALSE;
  if (dice < 3 && test_provider_persistent ())
    {
      /* A clean close leaves a marker for the next open to trust. */
      if (!qstore_database_close (*db, error))
        return FALSE;
      g_clear_object (db);
      *db = qstore_database_open (uri, QSTORE_OPEN_NONE, error);
      return *db != NULL;
    }

  if (dice < 5)
    {
      /* DDL that makes views stale (durably so, with an atomic provider),
       * and, by the next step's toss, brings them back. */
      return qstore_database_exec (*db, g_rand_boolean (rand)
                                          ? "ALTER TABLE t ALTER COLUMN s SET COLLATE BINARY"
                                          : "ALTER TABLE t ALTER COLUMN s SET COLLATE NOCASE",
                                   error);
    }
  if (dice < 8)
    {
      g_autoptr(GListModel) views = qstore_database_list_materialized_views (*db);

      for (guint i = 0; i < g_list_model_get_n_items (views); i++)
        {
          g_autoptr(QStoreMaterializedView) view = g_list_model_get_item (views, i);
          g_autoptr(GError) local_error = NULL;
          g_autofree char *sql = NULL;

          if (!qstore_materialized_view_get_stale (view))
            continue;
          sql = g_strdup_printf ("REFRESH MATERIALIZED VIEW %s",
                                 qstore_materialized_view_get_name (view));
          /* Over a view still stale, it waits for a later step. */
          if (!qstore_database_exec (*db, sql, &local_error) &&
              !g_error_matches (local_error, QSTORE_ERROR, QSTORE_ERROR_FAILED))
            {
              g_propagate_error (error, g_steal_pointer (&local_error));
              return FALSE;
            }
        }
      return TRUE;
    }

  if (!qstore_database_exec (*db, "BEGIN", error))
    return FALSE;
  for (int n = g_rand_int_range (rand, 1, 9); n > 0; n--)
    {
      g_autofree char *sql = random_statement (rand, TRUE, &savepoints);
      g_autoptr(GError) local_error = NULL;

      /* Transaction control is the caller's. */
      if (g_str_equal (sql, "COMMIT") || g_str_equal (sql, "ROLLBACK") ||
          g_str_equal (sql, "BEGIN"))
        continue;
      if (!qstore_database_exec (*db, sql, &local_error) &&
          !g_error_matches (local_error, QSTORE_ERROR, QSTORE_ERROR_CONSTRAINT) &&
          !g_error_matches (local_error, QSTORE_ERROR, QSTORE_ERROR_NOT_FOUND))
        {
          g_prefix_error (&local_error, "“%s”: ", sql);
          g_propagate_error (error, g_steal_pointer (&local_error));
          return FALSE;
        }
    }
  {
    g_autofree char *log = g_strdup_printf ("INSERT INTO log VALUES (%" G_GINT64_FORMAT ")", next);

    if (!qstore_database_exec (*db, log, error))
      return FALSE;
  }
  if (dice < 14)
    return qstore_database_exec (*db, "ROLLBACK", error);
  if (!qstore_database_exec (*db, "COMMIT", error))
    return FALSE;
  *committed = TRUE;
  return TRUE;
}

static int
crash_child (const char *uri,
             guint       seed)
{
  g_autoptr(GRand) rand = g_rand_new_with_seed (seed);
  g_autoptr(QStoreDatabase) db = NULL;
  g_autoptr(GError) error = NULL;
  gint64 next;

  if (!(db = qstore_database_open (uri, QSTORE_OPEN_NONE, &error)))
    {
      g_printerr ("crash child: %s\n", error->message);
      return 1;
    }
  next = test_query_int (db, "SELECT coalesce(max(tx), 0) + 1 FROM log");

  for (;;)
    {
      gboolean committed;

      if (!session_step (&db, uri, rand, next, &committed, &error))
        {
          g_printerr ("crash child: %s\n", error->message);
          return 1;
        }
      if (committed)
        {
          /* Reported only once the commit returned: it is durable. */
          printf ("%" G_GINT64_FORMAT "\n", next);
          fflush (stdout);
          next++;
        }
    }
  return 0;
}

/* The crash child's session in this process, every view checked after
 * every step: maintenance, staleness and REFRESH mixed. */
static void
test_oracle_ddl (Fixture       *f,
                 gconstpointer  data)
{
  g_autoptr(GRand) rand = g_rand_new_with_seed (test_seed ());
  guint steps = test_env_count ("QSTORE_TEST_ORACLE_OPS", test_provider_persistent () ? 300 : 600);
  gint64 next = 1;

  create_sources (f->db);
  create_oracle_views (f->db);
  test_exec (f->db, "CREATE TABLE log (tx INTEGER PRIMARY KEY)");

  for (guint i = 0; i < steps; i++)
    {
      g_autoptr(GError) error = NULL;
      g_autofree char *context = g_strdup_printf ("after step %u", i);
      gboolean committed;

      if (!session_step (&f->db, f->uri, rand, next, &committed, &error))
        g_error ("%s: %s", context, error->message);
      if (committed)
        next++;
      for (guint v = 0; v < G_N_ELEMENTS (oracle_views); v++)
        if (!view_stale (f->db, oracle_views[v][0]))
          assert_view_current (f->db, oracle_views[v][0], context);
    }
}

/* Reads the transaction ids the child reported; returns the largest. */
static gint64
read_reports (int      fd,
              GString *pending,
              gint64   largest,
              int      timeout_ms)
{
  gint64 deadline = g_get_monotonic_time () + (gint64) timeout_ms * 1000;

  for (;;)
    {
      GPollFD poll_fd = { fd, G_IO_IN | G_IO_HUP, 0 };
      gint64 left = timeout_ms < 0 ? -1 : (deadline - g_get_monotonic_time ()) / 1000;
      char buffer[4096];
      gssize n;
      char *newline;

      if (timeout_ms >= 0 && left <= 0)
        break;
      if (g_poll (&poll_fd, 1, (int) left) <= 0)
        break;
      n = read (fd, buffer, sizeof buffer);
      if (n <= 0)
        break;
      g_string_append_len (pending, buffer, n);
      while ((newline = strchr (pending->str, '\n')) != NULL)
        {
          gint64 id = g_ascii_strtoll (pending->str, NULL, 10);

          largest = MAX (largest, id);
          g_string_erase (pending, 0, newline - pending->str + 1);
        }
    }
  return largest;
}

static gint64
read_first_report (int      fd,
                   GString *pending)
{
  gint64 deadline = g_get_monotonic_time () + 60 * G_USEC_PER_SEC;
  gint64 reported = 0;

  while (reported == 0 && g_get_monotonic_time () < deadline)
    reported = read_reports (fd, pending, 0, 100);
  g_assert_cmpint (reported, >, 0);
  return reported;
}

static void
check_after_crash (Fixture *f,
                   gint64   reported,
                   guint    iteration)
{
  g_autofree char *context = g_strdup_printf ("after crash %u", iteration);
  QStoreRehydrationResult *result;
  g_autofree char *count_sql = NULL;

  f->db = test_open_database (f->uri, QSTORE_OPEN_NONE);
  result = qstore_database_get_rehydration_result (f->db);
  if (qstore_rehydration_result_get_n_errors (result) > 0)
    g_error ("%s: %s does not load: %s", context, qstore_rehydration_result_get_error_name (result, 0),
             qstore_rehydration_result_get_error_message (result, 0));

  {
    g_autofree char *adopted_list = g_strjoinv (",", (char **) qstore_rehydration_result_get_adopted_materialized_views (result));
    g_autofree char *refilled_list = g_strjoinv (",", (char **) qstore_rehydration_result_get_refilled_materialized_views (result));
    char *detailed = g_strdup_printf ("%s (adopted: %s; refilled: %s)", context, adopted_list,
                                      refilled_list);

    g_free (context);
    context = detailed;
  }

  /* Every reported commit is there (ids are consecutive). */
  g_assert_cmpint (test_query_int (f->db, "SELECT coalesce(max(tx), 0) FROM log"), >=, reported);
  count_sql = g_strdup_printf ("SELECT count(*) FROM log WHERE tx <= %" G_GINT64_FORMAT, reported);
  g_assert_cmpint (test_query_int (f->db, count_sql), ==, reported);

  for (guint i = 0; i < G_N_ELEMENTS (oracle_views); i++)
    {
      if (view_stale (f->db, oracle_views[i][0]))
        g_error ("%s: view “%s” is stale", context, oracle_views[i][0]);
      assert_view_current (f->db, oracle_views[i][0], context);
    }
  test_close_database (&f->db);
}

static void
test_crash (Fixture       *f,
            gconstpointer  data)
{
  g_autoptr(GRand) rand = g_rand_new_with_seed (test_seed ());
  guint iterations = test_env_count ("QSTORE_CRASH_ITERATIONS", 25);
  gint64 reported = 0;

  if (!test_provider_persistent ())
    {
      g_test_skip ("a crash of a memory store leaves nothing to check");
      return;
    }
  create_sources (f->db);
  create_oracle_views (f->db);
  test_exec (f->db, "CREATE TABLE log (tx INTEGER PRIMARY KEY)");
  test_close_database (&f->db);

  for (guint i = 0; i < iterations; i++)
    {
      g_autofree char *seed = g_strdup_printf ("%u", test_seed () + i);
      const char *argv[] = { self_path, "--crash-child", f->uri, seed, NULL };
      g_autoptr(GString) pending = g_string_new (NULL);
      g_autoptr(GError) error = NULL;
      GPid pid;
      int out_fd;
      int status;

      g_spawn_async_with_pipes (NULL, (char **) argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD, NULL, NULL,
                                &pid, NULL, &out_fd, NULL, &error);
      g_assert_no_error (error);
      reported = read_reports (out_fd, pending, reported, g_rand_int_range (rand, 20, 400));
      /* A loaded machine may keep the child from committing inside any
       * window: the last cycle waits for one acknowledgement at least, so
       * the test always checks acknowledged work. */
      if (reported == 0 && i == iterations - 1)
        reported = read_first_report (out_fd, pending);
      kill (pid, SIGKILL);
      waitpid (pid, &status, 0);
      g_spawn_close_pid (pid);
      if (!WIFSIGNALED (status))
        g_error ("The crash child stopped before it was killed (status %d)", status);
      reported = read_reports (out_fd, pending, reported, -1);
      close (out_fd);

      check_after_crash (f, reported, i);
    }
  g_test_message ("%u crashes, %" G_GINT64_FORMAT " commits reported", iterations, reported);
  g_assert_cmpint (reported, >, 0);
}

/* MAIN */
int
main (int    argc,
      char **argv)
{
  self_path = argv[0];
  if (argc == 3 && g_str_equal (argv[1], "--hold-child"))
    return hold_child (argv[2]);
  if (argc == 3 && g_str_equal (argv[1], "--forgery-child"))
    return forgery_child (argv[2]);
  if (argc == 4 && g_str_equal (argv[1], "--crash-child"))
    return crash_child (argv[2], (guint) g_ascii_strtoull (argv[3], NULL, 10));
  g_test_init (&argc, &argv, NULL);

#define ADD(name, func) \
  g_test_add ("/mv/" name, Fixture, NULL, fixture_setup, func, test_database_tear_down)
  ADD ("ddl", test_ddl);
  ADD ("threshold", test_threshold);
  ADD ("row-time", test_row_time);
  ADD ("reads-before-writes", test_reads_before_writes);
  ADD ("oracle", test_oracle);
  ADD ("oracle-ddl", test_oracle_ddl);
  ADD ("temp", test_temp);
  ADD ("stale", test_stale);
  ADD ("trust/clean", test_trust_clean);
  ADD ("trust/malformed", test_trust_malformed);
  ADD ("trust/stale-at-close", test_trust_stale_at_close);
  ADD ("trust/marker-once", test_trust_marker_once);
  ADD ("trust/upstream-refilled", test_trust_upstream);
  ADD ("trust/crash", test_trust_crash);
  ADD ("trust/marker-forgery", test_marker_forgery);
  ADD ("crash", test_crash);
#undef ADD

  return g_test_run ();
}
