/* test-joins.c: equality joins on columns no index covers, on qstore and
 * on plain SQLite
 *
 * qstore answers such a join with a statement's automatic index
 * (`auto-index:COLUMN` in EXPLAIN QUERY PLAN): a lookup structure built
 * from the rows the statement reads. These tests run the same statements
 * on a QStoreDatabase and on an in-memory SQLite database and require the
 * same rows: joins of every pair of column affinities and collations,
 * with the comparison's collation changed by COLLATE, over values that
 * tie under one collation and not another, that SQLite may read as
 * numbers or as text, NULLs and duplicates; self-joins, joins of three
 * tables, outer joins, joins inside correlated subqueries, and statements
 * that write the table they join. Then that the structure is chosen for
 * such a join and not when an index serves it.
 *
 * A walk that an equality on another column constrains checks it before
 * SQLite sees a row (` filter:COLUMN` in the plan): the same comparisons,
 * against constants and parameters, must keep the same rows.
 *
 * An index walk on the inner side of a join runs once per outer row and
 * seeks the iterator the walk before it finished with: every walk must
 * still see exactly its own range.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <sqlite3.h>
#include <string.h>

#include <qstore.h>

#include "qstore-test-util.h"

/* The columns of both tables: every affinity, and the three collations. */
static const char *const column_names[] = { "i", "r", "n", "t", "tn", "tr", "b", "u" };
static const char *const column_defs =
  "id INTEGER PRIMARY KEY, i INTEGER, r REAL, n NUMERIC, t TEXT, "
  "tn TEXT COLLATE NOCASE, tr TEXT COLLATE RTRIM, b BLOB, u";

/* The comparison's collation: the column's, or another one named. */
static const char *const comparisons[] = { "", " COLLATE NOCASE", " COLLATE RTRIM",
                                           " COLLATE BINARY" };

/* Values that tie under one comparison and not another. */
static const char *const pool[] = {
  "NULL", "1", "1.0", "2", "1.5", "'1'", "'01'", "' 1'", "'1.0'", "'1.5'", "'1e0'",
  "'a'", "'A'", "'a '", "'b'", "x'61'", "x'31'", "NULL", "'12345678901234567890'",
  "12345678901234567890", "-3", "'-3'", "'+2'", "'x1'", "0", "'0'", "''",
};

#define N_ROWS 31

typedef struct
{
  char           *dir;
  QStoreDatabase *db;
  sqlite3        *ref;
} Fixture;

static void
both_exec (Fixture    *f,
           const char *sql)
{
  char *message = NULL;

  test_exec (f->db, sql);
  if (sqlite3_exec (f->ref, sql, NULL, NULL, &message) != SQLITE_OK)
    g_error ("SQLite refused “%s”: %s", sql, message);
}

static void
fixture_set_up (Fixture       *f,
                gconstpointer  data)
{
  g_autofree char *uri = NULL;
  g_autoptr(GString) sql = g_string_new (NULL);

  f->dir = test_make_tmp_dir ("qstore-joins-XXXXXX");
  uri = test_provider_uri (f->dir, "store");
  f->db = test_open_database (uri, QSTORE_OPEN_NONE);
  g_assert_cmpint (sqlite3_open (":memory:", &f->ref), ==, SQLITE_OK);

  for (guint t = 0; t < 2; t++)
    {
      const char *name = t == 0 ? "l" : "r";

      g_string_printf (sql, "CREATE TABLE %s(%s)", name, column_defs);
      both_exec (f, sql->str);
      for (guint row = 0; row < N_ROWS; row++)
        {
          g_string_printf (sql, "INSERT INTO %s(i, r, n, t, tn, tr, b, u) VALUES (", name);
          for (guint c = 0; c < G_N_ELEMENTS (column_names); c++)
            {
              /* Each column walks the pool at its own pace, so rows repeat
               * values and pair them differently. */
              guint k = (row * (c + 2 + t) + c * 5 + t * 3) % G_N_ELEMENTS (pool);

              g_string_append_printf (sql, "%s%s", c > 0 ? ", " : "", pool[k]);
            }
          g_string_append_c (sql, ')');
          both_exec (f, sql->str);
        }
    }
}

static void
fixture_tear_down (Fixture       *f,
                   gconstpointer  data)
{
  test_close_database (&f->db);
  sqlite3_close (f->ref);
  test_remove_tree (f->dir);
  g_free (f->dir);
}

/* The rows of @sql as one text, in a fixed order, each value as quote()
 * writes it (1, 1.0, '1' and x'31' stay apart): computed by each engine
 * over the rows it returned. */
static char *
canonical_sql (const char *sql)
{
  return g_strdup_printf ("SELECT count(*) || ': ' || ifnull(group_concat(r, ' '), '') "
                          "FROM (SELECT r FROM (SELECT quote(c1) || ',' || quote(c2) AS r "
                          "FROM (%s)) ORDER BY r)", sql);
}

static char *
ref_text (Fixture    *f,
          const char *sql)
{
  sqlite3_stmt *stmt = NULL;
  char *text;

  if (sqlite3_prepare_v2 (f->ref, sql, -1, &stmt, NULL) != SQLITE_OK ||
      sqlite3_step (stmt) != SQLITE_ROW)
    g_error ("SQLite failed on “%s”: %s", sql, sqlite3_errmsg (f->ref));
  text = g_strdup ((const char *) sqlite3_column_text (stmt, 0));
  sqlite3_finalize (stmt);
  return text;
}

static char *
qstore_text (QStoreDatabase *db,
             const char     *sql)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(QStoreResult) result = qstore_database_query (db, sql, NULL, &error);
  g_autoptr(GVariant) value = NULL;
  g_autoptr(GVariant) inner = NULL;

  if (result == NULL)
    g_error ("qstore failed on “%s”: %s", sql, error->message);
  g_assert_cmpuint (qstore_result_get_n_rows (result), ==, 1);
  value = qstore_result_get_value (result, 0, 0);
  inner = g_variant_is_of_type (value, G_VARIANT_TYPE_VARIANT)
          ? g_variant_get_variant (value) : g_variant_ref (value);
  return g_variant_dup_string (inner, NULL);
}

/* The query plan of @sql on qstore, its lines joined. */
static char *
qstore_plan (QStoreDatabase *db,
             const char     *sql)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *explain = g_strdup_printf ("EXPLAIN QUERY PLAN %s", sql);
  g_autoptr(QStoreResult) result = qstore_database_query (db, explain, NULL, &error);
  GString *plan = g_string_new (NULL);

  if (result == NULL)
    g_error ("EXPLAIN QUERY PLAN failed on “%s”: %s", sql, error->message);
  for (guint row = 0; row < qstore_result_get_n_rows (result); row++)
    {
      g_autoptr(GVariant) value = qstore_result_get_value (result, row, 3);
      g_autoptr(GVariant) inner = g_variant_is_of_type (value, G_VARIANT_TYPE_VARIANT)
                                  ? g_variant_get_variant (value) : g_variant_ref (value);

      g_string_append_printf (plan, "%s%s", row > 0 ? "; " : "",
                              g_variant_get_string (inner, NULL));
    }
  return g_string_free (plan, FALSE);
}

/* @sql selects two columns c1 and c2: both engines return the same rows. */
static void
assert_same_rows (Fixture    *f,
                  const char *sql)
{
  g_autofree char *canonical = canonical_sql (sql);
  g_autofree char *expected = ref_text (f, canonical);
  g_autofree char *got = qstore_text (f->db, canonical);

  if (g_strcmp0 (expected, got) != 0)
    g_error ("“%s”:\n  SQLite: %s\n  qstore: %s\n  plan: %s", sql, expected, got,
             qstore_plan (f->db, sql));
}

/* The same comparison written either way round, whose operand leads with
 * its collation and affinity: both engines return the same rows for
 * each. Returns the plan of @forward. */
static char *
assert_same_rows_both_ways (Fixture    *f,
                            const char *forward,
                            const char *backward)
{
  assert_same_rows (f, forward);
  assert_same_rows (f, backward);
  return qstore_plan (f->db, forward);
}

/* Both engines hold the same rows in every table. */
static void
assert_same_tables (Fixture *f)
{
  assert_same_rows (f, "SELECT id AS c1, quote(i) || quote(r) || quote(n) || quote(t) || "
                       "quote(tn) || quote(tr) || quote(b) || quote(u) AS c2 FROM l");
  assert_same_rows (f, "SELECT id AS c1, quote(i) || quote(r) || quote(n) || quote(t) || "
                       "quote(tn) || quote(tr) || quote(b) || quote(u) AS c2 FROM r");
}

static void
test_every_pair (Fixture       *f,
                 gconstpointer  data)
{
  guint n_auto = 0;
  guint n = 0;

  for (guint a = 0; a < G_N_ELEMENTS (column_names); a++)
    for (guint b = 0; b < G_N_ELEMENTS (column_names); b++)
      for (guint k = 0; k < G_N_ELEMENTS (comparisons); k++)
        {
          g_autofree char *forward =
            g_strdup_printf ("SELECT l.id AS c1, r.id AS c2 FROM l JOIN r ON l.%s = r.%s%s",
                             column_names[a], column_names[b], comparisons[k]);
          g_autofree char *backward =
            g_strdup_printf ("SELECT l.id AS c1, r.id AS c2 FROM l, r WHERE r.%s%s = l.%s",
                             column_names[b], comparisons[k], column_names[a]);
          g_autofree char *plan = assert_same_rows_both_ways (f, forward, backward);

          n++;
          if (strstr (plan, "auto-index:") != NULL)
            n_auto++;
        }

  /* Every one of them is such a join; the planner takes the structure
   * for nearly all (an IN-like comparison SQLite keeps for itself aside). */
  g_test_message ("%u of %u joins used an automatic index", n_auto, n);
  g_assert_cmpuint (n_auto, >=, n * 9 / 10);
}

static void
test_shapes (Fixture       *f,
             gconstpointer  data)
{
  static const char *const statements[] = {
    /* self-joins */
    "SELECT a.id AS c1, b.id AS c2 FROM l AS a JOIN l AS b ON a.t = b.tn",
    "SELECT a.id AS c1, b.id AS c2 FROM l AS a JOIN l AS b ON a.u = b.i AND a.id <> b.id",
    /* three tables */
    "SELECT l.id AS c1, l2.id || '/' || r.id AS c2 FROM l JOIN r ON l.i = r.n "
    "JOIN l AS l2 ON l2.tn = r.t",
    "SELECT l.id AS c1, r.id AS c2 FROM l JOIN r ON l.tr = r.tr JOIN r AS r2 ON r2.b = l.b",
    /* outer joins */
    "SELECT l.id AS c1, r.id AS c2 FROM l LEFT JOIN r ON l.t = r.t",
    "SELECT l.id AS c1, r.id AS c2 FROM l LEFT JOIN r ON l.n = r.u WHERE r.id IS NULL",
    /* correlated subqueries */
    "SELECT l.id AS c1, (SELECT count(*) FROM r JOIN l AS l2 ON l2.u = r.u "
    "WHERE r.i = l.i) AS c2 FROM l",
    "SELECT l.id AS c1, (SELECT group_concat(r.id) FROM r WHERE r.tn = l.t) AS c2 FROM l",
    "SELECT id AS c1, 0 AS c2 FROM l WHERE EXISTS (SELECT 1 FROM r WHERE r.t = l.tn)",
    "SELECT id AS c1, 0 AS c2 FROM l WHERE EXISTS (SELECT 1 FROM r JOIN l AS l2 "
    "ON l2.r = r.n WHERE r.tr = l.tr)",
    /* uncorrelated subqueries */
    "SELECT id AS c1, 0 AS c2 FROM l WHERE i IN (SELECT n FROM r)",
    "SELECT id AS c1, 0 AS c2 FROM l WHERE n IN (SELECT r.u FROM r JOIN l AS l2 ON l2.t = r.tn)",
    /* aggregates over a join */
    "SELECT l.tn AS c1, count(*) AS c2 FROM l JOIN r ON l.tn = r.t GROUP BY l.tn",
    /* a view */
    "SELECT c1, c2 FROM lr",
  };

  both_exec (f, "CREATE VIEW lr AS SELECT l.id AS c1, r.id AS c2 FROM l JOIN r ON l.u = r.t");
  for (guint i = 0; i < G_N_ELEMENTS (statements); i++)
    assert_same_rows (f, statements[i]);
}

/* Statements that write a table they join: SQLite reads what the join
 * selects before the first write, and the structure never outlives a
 * write it did not see. INSERT … SELECT goes in a total order, so that
 * both engines give the new rows the same ids. */
static void
test_writes (Fixture       *f,
             gconstpointer  data)
{
  static const char *const statements[] = {
    "INSERT INTO l(i, r, n, t, tn, tr, b, u) SELECT r.i, l.r, r.n, l.t, r.tn, l.tr, r.b, l.u "
    "FROM l JOIN r ON l.t = r.tn ORDER BY l.id, r.id",
    "INSERT INTO r(i, t, u) SELECT a.i, b.t, a.id FROM r AS a JOIN r AS b ON a.u = b.n "
    "ORDER BY a.id, b.id",
    "UPDATE l SET u = (SELECT count(*) FROM r JOIN l AS l2 ON l2.i = r.n WHERE r.t = l.t)",
    "DELETE FROM r WHERE id IN (SELECT r.id FROM r JOIN l ON l.tn = r.t WHERE l.i > 1)",
    "UPDATE r SET tn = 'A' WHERE u IN (SELECT l.u FROM l JOIN r AS r2 ON r2.b = l.b)",
  };

  for (guint i = 0; i < G_N_ELEMENTS (statements); i++)
    {
      both_exec (f, statements[i]);
      assert_same_tables (f);
      assert_same_rows (f, "SELECT l.id AS c1, r.id AS c2 FROM l JOIN r ON l.t = r.t");
      /* The same text again: its structure from the last run (kept
       * across the subquery's cursors) must not survive the write. */
      assert_same_rows (f, "SELECT l.id AS c1, (SELECT group_concat(r.id) FROM r "
                           "WHERE r.tn = l.t) AS c2 FROM l");
    }

  /* Inside a transaction, the join sees the transaction's own writes. */
  both_exec (f, "BEGIN");
  both_exec (f, "INSERT INTO r(t, tn) SELECT t, t FROM l WHERE id % 3 = 0 ORDER BY id");
  assert_same_rows (f, "SELECT l.id AS c1, r.id AS c2 FROM l JOIN r ON l.t = r.tn");
  both_exec (f, "DELETE FROM l WHERE id % 2 = 0");
  assert_same_rows (f, "SELECT l.id AS c1, r.id AS c2 FROM l JOIN r ON l.tn = r.t");
  both_exec (f, "ROLLBACK");
  assert_same_rows (f, "SELECT l.id AS c1, r.id AS c2 FROM l JOIN r ON l.tn = r.t");
}

/* An index walk, then point reads of the primary key in the same
 * statement: of the row the walk stands on (handed over without a second
 * read) and of other rows (which must not be taken for it). */
static void
test_index_then_key (Fixture       *f,
                     gconstpointer  data)
{
  static const char *const statements[] = {
    "SELECT a.id AS c1, quote(b.id) || quote(b.t) || quote(b.u) AS c2 FROM l AS a "
    "JOIN l AS b ON b.id = a.id WHERE a.i BETWEEN -5 AND 3",
    "SELECT a.id AS c1, quote(b.id) || quote(b.t) || quote(b.u) AS c2 FROM l AS a "
    "JOIN l AS b ON b.id = a.id + 1 WHERE a.i BETWEEN -5 AND 3",
    "SELECT a.id AS c1, quote(b.id) || quote(b.tn) || quote(c.b) AS c2 FROM l AS a "
    "JOIN l AS b ON b.id = a.id JOIN l AS c ON c.id = 32 - a.id WHERE a.i = 2",
    "SELECT id AS c1, quote(t) || quote(r) AS c2 FROM l WHERE id IN "
    "(SELECT id FROM l WHERE i >= 1)",
  };
  g_autofree char *plan = NULL;

  both_exec (f, "CREATE INDEX l_i ON l(i)");
  plan = qstore_plan (f->db, statements[1]);
  g_assert_nonnull (strstr (plan, "index-range:l_i"));
  g_assert_nonnull (strstr (plan, "pk-eq"));
  for (guint i = 0; i < G_N_ELEMENTS (statements); i++)
    assert_same_rows (f, statements[i]);
}

/* Index walks on the inner side of a join, one per outer row, through
 * the snapshot the statement shares: each starts over on its own bounds
 * (a walk seeks the iterator the one before it finished with), on the
 * same table as the outer walk too, forward and in reverse, in a
 * correlated subquery, and after an outer row that found nothing. */
static void
test_inner_index_walks (Fixture       *f,
                        gconstpointer  data)
{
  static const char *const statements[] = {
    "SELECT a.id AS c1, b.id AS c2 FROM l AS a JOIN r AS b ON b.i = a.i",
    "SELECT a.id AS c1, b.id AS c2 FROM l AS a JOIN r AS b ON b.i BETWEEN a.i - 1 AND a.i + 1",
    "SELECT a.id AS c1, b.id AS c2 FROM l AS a JOIN l AS b ON b.i = a.i WHERE a.i > -5",
    "SELECT a.id AS c1, b.id AS c2 FROM l AS a JOIN r AS b ON b.i < a.i AND b.i >= a.i - 2",
    "SELECT a.id AS c1, (SELECT group_concat(id, '/') FROM (SELECT id FROM r WHERE r.i = a.i "
    "ORDER BY r.i DESC, id)) AS c2 FROM l AS a",
    "SELECT a.id AS c1, b.id AS c2 FROM l AS a JOIN r AS b ON b.t = a.t",
  };
  g_autofree char *plan = NULL;

  both_exec (f, "CREATE INDEX r_i ON r(i)");
  both_exec (f, "CREATE INDEX l_i ON l(i)");
  both_exec (f, "CREATE INDEX r_t ON r(t)");
  plan = qstore_plan (f->db, statements[1]);
  g_assert_nonnull (strstr (plan, ":r_i"));
  for (guint i = 0; i < G_N_ELEMENTS (statements); i++)
    assert_same_rows (f, statements[i]);
}

/* The plan takes the structure for an unindexed equality join, and not
 * when an index seeks on the column under the comparison's collation,
 * nor for a constant. */
static void
test_plan (Fixture       *f,
           gconstpointer  data)
{
  g_autofree char *join = qstore_plan (f->db, "SELECT * FROM l JOIN r ON l.id < 5 AND l.t = r.t");
  g_autofree char *constant = qstore_plan (f->db, "SELECT * FROM r WHERE t = 'a'");
  g_autofree char *nocase = NULL;
  g_autofree char *indexed = NULL;
  g_autofree char *other_collation = NULL;

  g_assert_nonnull (strstr (join, "auto-index:t"));
  g_assert_null (strstr (constant, "auto-index"));

  /* A comparison under another collation than the column's is named. */
  nocase = qstore_plan (f->db, "SELECT * FROM l JOIN r ON l.id < 5 AND r.t = l.t COLLATE NOCASE");
  g_assert_nonnull (strstr (nocase, "auto-index:t COLLATE NOCASE"));

  /* An index under another collation does not serve the join. */
  test_exec (f->db, "CREATE INDEX r_t_nocase ON r(t COLLATE NOCASE)");
  other_collation = qstore_plan (f->db, "SELECT * FROM l JOIN r ON l.id < 5 AND l.t = r.t");
  g_assert_nonnull (strstr (other_collation, "auto-index:t"));

  test_exec (f->db, "CREATE INDEX r_t ON r(t)");
  indexed = qstore_plan (f->db, "SELECT * FROM l JOIN r ON l.id < 5 AND l.t = r.t");
  g_assert_null (strstr (indexed, "auto-index"));
  g_assert_nonnull (strstr (indexed, "index-eq:r_t"));
}

/* A parameter is probed once per run: a walk, no structure, the same
 * answer. */
static void
test_parameter (Fixture       *f,
                gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(QStoreResult) result = NULL;
  g_autofree char *plan = qstore_plan (f->db, "SELECT id FROM r WHERE tn = ?");
  g_autofree char *expected = ref_text (f, "SELECT group_concat(id) FROM (SELECT id FROM r "
                                           "WHERE tn = 'a' ORDER BY id)");
  g_autoptr(GVariant) value = NULL;
  g_autoptr(GVariant) inner = NULL;

  g_assert_nonnull (strstr (plan, "auto-index:tn"));
  result = qstore_database_query (f->db, "SELECT group_concat(id) FROM (SELECT id FROM r "
                                         "WHERE tn = ? ORDER BY id)",
                                  g_variant_new ("(s)", "a"), &error);
  g_assert_no_error (error);
  value = qstore_result_get_value (result, 0, 0);
  inner = g_variant_is_of_type (value, G_VARIANT_TYPE_VARIANT)
          ? g_variant_get_variant (value) : g_variant_ref (value);
  g_assert_cmpstr (g_variant_get_string (inner, NULL), ==, expected);
}

/* Equality of every column with every value of the pool, under every
 * collation, either way round: a walk filtered on it keeps what SQLite
 * keeps. */
static void
test_filter (Fixture       *f,
             gconstpointer  data)
{
  guint n_filtered = 0;
  guint n = 0;

  for (guint c = 0; c < G_N_ELEMENTS (column_names); c++)
    for (guint v = 0; v < G_N_ELEMENTS (pool); v++)
      for (guint k = 0; k < G_N_ELEMENTS (comparisons); k++)
        {
          g_autofree char *forward =
            g_strdup_printf ("SELECT id AS c1, %s AS c2 FROM l WHERE %s = %s%s",
                             column_names[c], column_names[c], pool[v], comparisons[k]);
          g_autofree char *backward =
            g_strdup_printf ("SELECT id AS c1, %s AS c2 FROM l WHERE %s%s = %s",
                             column_names[c], pool[v], comparisons[k], column_names[c]);
          g_autofree char *plan = assert_same_rows_both_ways (f, forward, backward);

          n++;
          /* A constant under COLLATE is an expression to the planner:
           * it probes an automatic index once, a walk filtered the same. */
          if (strstr (plan, " filter:") != NULL || strstr (plan, "auto-index:") != NULL)
            n_filtered++;
          else if (k == 0 && strcmp (pool[v], "NULL") != 0)
            g_error ("“%s” walks unfiltered: %s", forward, plan);
        }

  /* `c = NULL` is false before any walk; every other one is filtered. */
  g_test_message ("%u of %u walks were filtered", n_filtered, n);
  g_assert_cmpuint (n_filtered, >=, n * 9 / 10);
}

/* The filter beside a seek, beside a write to the table it walks, and
 * not for IN, which SQLite would answer with one walk per value. */
static void
test_filter_shapes (Fixture       *f,
                    gconstpointer  data)
{
  static const char *const reads[] = {
    "SELECT id AS c1, t AS c2 FROM l WHERE i BETWEEN -5 AND 3 AND t = 'a'",
    "SELECT id AS c1, tn AS c2 FROM l WHERE i > 0 AND tn = 'A'",
    "SELECT id AS c1, u AS c2 FROM l WHERE id > 3 AND u = 1",
    "SELECT l.id AS c1, r.id AS c2 FROM l JOIN r ON r.id = l.id WHERE r.tr = 'a' AND l.n = 1",
    "SELECT id AS c1, 0 AS c2 FROM l WHERE t IN ('a', 'b', '1')",
  };
  static const char *const writes[] = {
    "UPDATE l SET t = 'z', u = 'a' WHERE tn = 'a'",
    "INSERT INTO l(i, t, tn, u) SELECT i, tn, t, id FROM l WHERE u = 'a' ORDER BY id",
    "DELETE FROM r WHERE b = x'61'",
  };
  g_autofree char *range = NULL;
  g_autofree char *in = NULL;

  both_exec (f, "CREATE INDEX l_i ON l(i)");
  range = qstore_plan (f->db, reads[0]);
  g_assert_nonnull (strstr (range, "index-range:l_i filter:t"));
  in = qstore_plan (f->db, reads[4]);
  g_assert_null (strstr (in, "filter:"));

  for (guint i = 0; i < G_N_ELEMENTS (reads); i++)
    assert_same_rows (f, reads[i]);
  for (guint i = 0; i < G_N_ELEMENTS (writes); i++)
    {
      both_exec (f, writes[i]);
      assert_same_tables (f);
    }
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add ("/sql/joins/every-pair", Fixture, NULL, fixture_set_up, test_every_pair,
              fixture_tear_down);
  g_test_add ("/sql/joins/shapes", Fixture, NULL, fixture_set_up, test_shapes,
              fixture_tear_down);
  g_test_add ("/sql/joins/writes", Fixture, NULL, fixture_set_up, test_writes,
              fixture_tear_down);
  g_test_add ("/sql/joins/index-then-key", Fixture, NULL, fixture_set_up, test_index_then_key,
              fixture_tear_down);
  g_test_add ("/sql/joins/inner-index-walks", Fixture, NULL, fixture_set_up,
              test_inner_index_walks, fixture_tear_down);
  g_test_add ("/sql/joins/plan", Fixture, NULL, fixture_set_up, test_plan,
              fixture_tear_down);
  g_test_add ("/sql/joins/parameter", Fixture, NULL, fixture_set_up, test_parameter,
              fixture_tear_down);
  g_test_add ("/sql/joins/filter", Fixture, NULL, fixture_set_up, test_filter,
              fixture_tear_down);
  g_test_add ("/sql/joins/filter-shapes", Fixture, NULL, fixture_set_up, test_filter_shapes,
              fixture_tear_down);
  return g_test_run ();
}
