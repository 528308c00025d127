/* test-replica-ddl.c: DDL batches, their marker and report, and what
 * the workers make of them
 *
 * The seed's six marker tests, translated, then the rest of what DDL on a
 * replica promises.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "replica-test-util.h"

static void
set_up (TestReplica   *t,
        gconstpointer  data)
{
  test_replica_set_up_with (t, 2, 0);
}

static void
tear_down (TestReplica   *t,
           gconstpointer  data)
{
  test_replica_tear_down (t);
}

static GVariant *
apply (QStoreReplica *replica,
       const char    *marker,
       const char    *sql)
{
  g_autoptr(GError) error = NULL;
  GVariant *report = qstore_replica_exec_ddl_with_marker (replica, sql, marker, &error);

  g_assert_no_error (error);
  g_assert_nonnull (report);
  return report;
}

static gboolean
has_marker (QStoreReplica *replica,
            const char    *key)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) report = qstore_replica_get_marker (replica, key, &error);

  g_assert_no_error (error);
  return report != NULL;
}

static gboolean
table_exists (QStoreReplica *replica,
              const char    *name)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(QStoreResult) result =
    qstore_replica_query (replica, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?",
                          g_variant_new ("(s)", name), &error);

  g_assert_no_error (error);
  return qstore_result_get_n_rows (result) > 0;
}

static gboolean
column_present (QStoreReplica *replica,
                const char    *table,
                const char    *column)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(QStoreResult) result =
    qstore_replica_query (replica, "SELECT 1 FROM pragma_table_info(?1) WHERE name = ?2",
                          g_variant_new ("(ss)", table, column), &error);

  g_assert_no_error (error);
  return qstore_result_get_n_rows (result) > 0;
}

/* Every name the steps list under @member, in order. */
static char *
step_names (GVariant   *report,
            const char *member)
{
  g_autoptr(GVariant) steps = g_variant_lookup_value (report, "steps", G_VARIANT_TYPE ("aa{sv}"));
  GString *names = g_string_new (NULL);

  g_assert_nonnull (steps);
  for (gsize i = 0; i < g_variant_n_children (steps); i++)
    {
      g_autoptr(GVariant) step = g_variant_get_child_value (steps, i);
      g_autofree const char **list = NULL;

      g_assert_true (g_variant_lookup (step, member, "^a&s", &list));
      for (guint k = 0; list[k] != NULL; k++)
        g_string_append_printf (names, "%s%s", names->len > 0 ? "," : "", list[k]);
    }
  return g_string_free (names, FALSE);
}

/* The index of the first step that lists something under @member, or -1. */
static int
first_step_with (GVariant   *report,
                 const char *member)
{
  g_autoptr(GVariant) steps = g_variant_lookup_value (report, "steps", G_VARIANT_TYPE ("aa{sv}"));

  for (gsize i = 0; i < g_variant_n_children (steps); i++)
    {
      g_autoptr(GVariant) step = g_variant_get_child_value (steps, i);
      g_autofree const char **list = NULL;

      if (g_variant_lookup (step, member, "^a&s", &list) && list[0] != NULL)
        return (int) i;
    }
  return -1;
}

static gsize
n_steps (GVariant *report)
{
  g_autoptr(GVariant) steps = g_variant_lookup_value (report, "steps", G_VARIANT_TYPE ("aa{sv}"));

  return g_variant_n_children (steps);
}

/* The seed's tests */

/* The report names what each statement created, dropped and altered, in
 * order, whatever the quoting and comments, because SQLite's parser says
 * so; it is kept with the marker. */
static void
test_report_observes_destructive_actions (TestReplica   *t,
                                          gconstpointer  data)
{
  g_autoptr(GVariant) created = NULL;
  g_autoptr(GVariant) dropped = NULL;
  g_autoptr(GVariant) stored = NULL;
  g_autoptr(GVariant) altered = NULL;
  g_autofree char *indexes = NULL;
  g_autofree char *destructive = NULL;
  g_autofree char *tables = NULL;
  g_autofree char *dropped_indexes = NULL;
  g_autofree char *stored_tables = NULL;
  g_autofree char *altered_tables = NULL;

  created = apply (t->replica, "m1",
                   "CREATE TABLE kv (k TEXT PRIMARY KEY NOT NULL, v TEXT); "
                   "CREATE INDEX kv_v ON kv (v)");
  destructive = step_names (created, "destructive");
  g_assert_cmpstr (destructive, ==, "");
  g_assert_cmpuint (n_steps (created), ==, 2);
  /* The explicit index by its name; the primary key's own is not listed. */
  indexes = step_names (created, "created_indexes");
  g_assert_cmpstr (indexes, ==, "kv_v");

  dropped = apply (t->replica, "m2",
                   "CREATE TABLE decoy (d TEXT PRIMARY KEY NOT NULL); "
                   "DROP /* rebuild */ INDEX kv_v; "
                   "DROP -- rebuild\n TABLE \"kv\"; "
                   "CREATE TABLE kv (k TEXT PRIMARY KEY NOT NULL, v TEXT)");
  tables = step_names (dropped, "dropped_tables");
  g_assert_cmpstr (tables, ==, "kv");
  dropped_indexes = step_names (dropped, "dropped_indexes");
  g_assert_cmpstr (dropped_indexes, ==, "kv_v");
  g_assert_cmpint (first_step_with (dropped, "dropped_tables"), ==, 2);
  g_assert_cmpint (first_step_with (dropped, "dropped_indexes"), ==, 1);

  /* The marker row keeps the report: what a replay reads. */
  stored = qstore_replica_get_marker (t->replica, "m2", NULL);
  g_assert_nonnull (stored);
  stored_tables = step_names (stored, "dropped_tables");
  g_assert_cmpstr (stored_tables, ==, "kv");

  altered = apply (t->replica, "m3", "ALTER TABLE kv ADD COLUMN w TEXT");
  altered_tables = step_names (altered, "altered_tables");
  g_assert_cmpstr (altered_tables, ==, "kv");
}

static void
test_success_stamps_marker (TestReplica   *t,
                            gconstpointer  data)
{
  g_autoptr(GVariant) report = apply (t->replica, "m1",
                                      "CREATE TABLE kv (k TEXT PRIMARY KEY NOT NULL, v TEXT)");

  g_assert_true (table_exists (t->replica, "kv"));
  g_assert_true (has_marker (t->replica, "m1"));
  g_assert_false (has_marker (t->replica, "m2"));
}

static void
test_failed_statement_rolls_back (TestReplica   *t,
                                  gconstpointer  data)
{
  g_autoptr(GVariant) first = apply (t->replica, "m1",
                                     "CREATE TABLE kv (k TEXT PRIMARY KEY NOT NULL)");
  g_autoptr(GVariant) report = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *lower = NULL;

  /* The first statement would succeed, the second fails: the whole unit
   * goes. */
  report = qstore_replica_exec_ddl_with_marker (t->replica,
                                                "ALTER TABLE kv ADD COLUMN v TEXT; "
                                                "ALTER TABLE ghost ADD COLUMN x TEXT",
                                                "m2", &error);
  g_assert_null (report);
  g_assert_nonnull (error);
  lower = g_ascii_strdown (error->message, -1);
  g_assert_nonnull (strstr (lower, "no such table"));
  g_assert_false (has_marker (t->replica, "m2"));
  g_assert_false (column_present (t->replica, "kv", "v"));
  g_assert_true (has_marker (t->replica, "m1"));
}

static gboolean
failing_step (GVariant          *step,
              QStoreReplicaTxn  *txn,
              gpointer           user_data,
              GError           **error)
{
  guint *calls = user_data;

  (*calls)++;
  g_set_error_literal (error, QSTORE_ERROR, QSTORE_ERROR_FAILED, "bookkeeping refused");
  return FALSE;
}

static void
test_failed_step_effect_rolls_back (TestReplica   *t,
                                    gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) report = NULL;
  guint calls = 0;

  report = qstore_replica_exec_ddl_with_marker_full (t->replica,
                                                     "CREATE TABLE kv (k TEXT PRIMARY KEY NOT NULL)",
                                                     "m1", failing_step, &calls, &error);
  g_assert_null (report);
  g_assert_nonnull (error);
  g_assert_nonnull (strstr (error->message, "atomic step effects"));
  g_assert_nonnull (strstr (error->message, "bookkeeping refused"));
  g_assert_cmpuint (calls, ==, 1);
  g_assert_false (table_exists (t->replica, "kv"));
  g_assert_false (has_marker (t->replica, "m1"));
}

/* What a replica cannot follow is refused before the marker, and takes
 * the statements before it back. */
static void
test_unsupported_schema_rolls_back (TestReplica   *t,
                                    gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) report = NULL;

  report = qstore_replica_exec_ddl_with_marker (t->replica,
                                                "CREATE TABLE fine (id INTEGER PRIMARY KEY); "
                                                "CREATE TEMP TABLE bad (id INTEGER PRIMARY KEY, "
                                                "payload BLOB)",
                                                "temp-schema", &error);
  g_assert_null (report);
  g_assert_error (error, QSTORE_REPLICA_ERROR, QSTORE_REPLICA_ERROR_UNSUPPORTED_SCHEMA);
  g_assert_nonnull (strstr (error->message, "unsupported"));
  g_assert_false (table_exists (t->replica, "fine"));
  g_assert_false (table_exists (t->replica, "bad"));
  g_assert_false (has_marker (t->replica, "temp-schema"));
}

/* Create, copy, drop, rename: one migration, one commit, and the rows
 * moved with it. */
static void
test_create_copy_swap (TestReplica   *t,
                       gconstpointer  data)
{
  g_autoptr(GVariant) schema = NULL;
  g_autoptr(GVariant) reshape = NULL;
  g_autofree char *value = NULL;
  g_autofree char *count = NULL;

  schema = apply (t->replica, "schema",
                  "CREATE TABLE kv (k TEXT PRIMARY KEY NOT NULL, v TEXT NOT NULL); "
                  "INSERT INTO kv VALUES ('a', 'value')");
  test_register (t->replica, 1, "SELECT k, v FROM kv");
  test_drain (t->replica);

  reshape = apply (t->replica, "reshape",
                   "CREATE TABLE kv_new (k TEXT PRIMARY KEY NOT NULL, v TEXT NOT NULL, note TEXT); "
                   "INSERT INTO kv_new (k, v) SELECT k, v FROM kv; "
                   "DROP TABLE kv; "
                   "ALTER TABLE kv_new RENAME TO kv");
  g_assert_true (has_marker (t->replica, "reshape"));
  g_assert_true (column_present (t->replica, "kv", "note"));
  g_assert_false (table_exists (t->replica, "kv_new"));
  value = test_fresh_rows (t->replica, "SELECT v FROM kv WHERE k = 'a'");
  g_assert_cmpstr (value, ==, "[<'value'>]\n");
  count = test_fresh_rows (t->replica, "SELECT count(*) FROM kv");
  g_assert_cmpstr (count, ==, "[<int64 1>]\n");

  /* The live query read the table the migration replaced. */
  test_drain (t->replica);
  g_assert_cmpuint (test_recorder_count (&t->rec, "faulted", 1), ==, 1);
}

/* Beyond the seed */

static void
test_marker_applied_twice_is_noop (TestReplica   *t,
                                   gconstpointer  data)
{
  const char *sql = "CREATE TABLE IF NOT EXISTS log (id INTEGER PRIMARY KEY, what TEXT); "
                    "INSERT INTO log (what) VALUES ('migrated')";
  g_autoptr(GVariant) first = apply (t->replica, "once", sql);
  g_autoptr(GVariant) second = apply (t->replica, "once", sql);
  g_autofree char *count = NULL;
  gboolean applied = TRUE;

  g_assert_true (g_variant_lookup (first, "applied", "b", &applied) && applied);
  g_assert_true (g_variant_lookup (second, "applied", "b", &applied));
  g_assert_false (applied);
  g_assert_cmpuint (n_steps (second), ==, 2);
  count = test_fresh_rows (t->replica, "SELECT count(*) FROM log");
  g_assert_cmpstr (count, ==, "[<int64 1>]\n");
}

static void
test_ddl_refusals (TestReplica   *t,
                   gconstpointer  data)
{
  g_autoptr(QStoreReplicaTxn) txn = NULL;
  g_autoptr(GError) error = NULL;
  gint64 cookie;

  test_ddl (t->replica, "CREATE TABLE t (id INTEGER PRIMARY KEY, v INTEGER)");

  /* While a write is open */
  txn = test_txn_begin (t->replica);
  g_assert_false (qstore_replica_exec_ddl (t->replica, "CREATE TABLE u (x)", &error));
  g_assert_error (error, QSTORE_REPLICA_ERROR, QSTORE_REPLICA_ERROR_WRITE_OPEN);
  g_clear_error (&error);
  g_assert_null (qstore_replica_exec_ddl_with_marker (t->replica, "CREATE TABLE u (x)", "u", &error));
  g_assert_error (error, QSTORE_REPLICA_ERROR, QSTORE_REPLICA_ERROR_WRITE_OPEN);
  g_clear_error (&error);
  /* DDL inside the transaction is refused too. */
  g_assert_cmpint (qstore_replica_txn_exec (txn, "CREATE TABLE u (x)", NULL, &error), ==, -1);
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  qstore_replica_txn_rollback (txn);
  g_assert_false (table_exists (t->replica, "u"));

  /* Rows belong in a write transaction, unless in a migration. */
  cookie = qstore_replica_get_schema_cookie (t->replica);
  g_assert_false (qstore_replica_exec_ddl (t->replica, "CREATE TABLE u (x); INSERT INTO t VALUES (1, 1)",
                                           &error));
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  g_assert_false (table_exists (t->replica, "u"));

  /* A batch is one commit: the second statement fails, the first goes. */
  g_assert_false (qstore_replica_exec_ddl (t->replica, "CREATE TABLE u (x); CREATE TABLE u (y)", &error));
  g_assert_nonnull (error);
  g_clear_error (&error);
  g_assert_false (table_exists (t->replica, "u"));
  g_assert_cmpint (qstore_replica_get_schema_cookie (t->replica), ==, cookie);

  /* TEMP objects stay out of a replica. */
  g_assert_false (qstore_replica_exec_ddl (t->replica, "CREATE TEMP VIEW tv AS SELECT 1", &error));
  g_assert_error (error, QSTORE_REPLICA_ERROR, QSTORE_REPLICA_ERROR_UNSUPPORTED_SCHEMA);
  g_clear_error (&error);

  /* The cookie follows the schema, not the rows. */
  test_write (t->replica, "INSERT INTO t VALUES (1, 1)");
  g_assert_cmpint (qstore_replica_get_schema_cookie (t->replica), ==, cookie);
  test_ddl (t->replica, "CREATE INDEX t_v ON t (v)");
  g_assert_cmpint (qstore_replica_get_schema_cookie (t->replica), !=, cookie);
  g_assert_cmpint (qstore_replica_get_schema_cookie (t->replica), >=, 0);
}

/* Queries over tables DDL did not touch go on; the others fault. */
static void
test_ddl_and_live_queries (TestReplica   *t,
                           gconstpointer  data)
{
  g_autofree char *rows = NULL;
  g_autoptr(GVariant) snapshot = NULL;

  test_ddl (t->replica, "CREATE TABLE a (id INTEGER PRIMARY KEY, v INTEGER);"
                        "CREATE TABLE b (id INTEGER PRIMARY KEY, v INTEGER)");
  test_register (t->replica, 1, "SELECT * FROM a");
  test_register (t->replica, 2, "SELECT * FROM b");
  test_write (t->replica, "INSERT INTO a VALUES (1, 10)");
  test_ddl (t->replica, "ALTER TABLE b ADD COLUMN w TEXT");
  test_write (t->replica, "INSERT INTO a VALUES (2, 20)");
  test_drain (t->replica);

  g_assert_cmpuint (test_recorder_count (&t->rec, "faulted", 1), ==, 0);
  g_assert_cmpuint (test_recorder_count (&t->rec, "faulted", 2), ==, 1);
  snapshot = qstore_replica_read_snapshot (t->replica, 1, NULL, NULL);
  g_assert_nonnull (snapshot);
  rows = test_rows_text (snapshot);
  g_assert_cmpstr (rows, ==, "[<int64 1>, <int64 10>]\n[<int64 2>, <int64 20>]\n");
}

/* Materialized views go through a batch and stay maintained after it. */
static void
test_ddl_materialized_view (TestReplica   *t,
                            gconstpointer  data)
{
  g_autofree char *rows = NULL;

  test_ddl (t->replica, "CREATE TABLE t (id INTEGER PRIMARY KEY, g INTEGER)");
  test_write (t->replica, "INSERT INTO t VALUES (1, 1), (2, 1), (3, 2)");
  test_ddl (t->replica, "CREATE MATERIALIZED VIEW big AS SELECT id, g FROM t WHERE g > 1");
  test_register (t->replica, 1, "SELECT * FROM big");
  test_write (t->replica, "UPDATE t SET g = 5 WHERE id = 1");
  test_drain (t->replica);
  rows = test_fresh_rows (t->replica, "SELECT * FROM big");
  g_assert_cmpstr (rows, ==, "[<int64 1>, <int64 5>]\n[<int64 3>, <int64 2>]\n");
  g_assert_cmpuint (test_recorder_count (&t->rec, "changed", 1), ==, 1);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

#define ADD(path, func) \
  g_test_add ("/replica/ddl/" path, TestReplica, NULL, set_up, func, tear_down)

  ADD ("seed/report-observes-destructive-actions", test_report_observes_destructive_actions);
  ADD ("seed/success-stamps-marker", test_success_stamps_marker);
  ADD ("seed/failed-statement-rolls-back", test_failed_statement_rolls_back);
  ADD ("seed/failed-step-effect-rolls-back", test_failed_step_effect_rolls_back);
  ADD ("seed/unsupported-schema-rolls-back", test_unsupported_schema_rolls_back);
  ADD ("seed/create-copy-swap", test_create_copy_swap);
  ADD ("marker-applied-twice-is-noop", test_marker_applied_twice_is_noop);
  ADD ("refusals", test_ddl_refusals);
  ADD ("live-queries", test_ddl_and_live_queries);
  ADD ("materialized-view", test_ddl_materialized_view);

  return g_test_run ();
}
