/* test-alter.c: every ALTER TABLE arm, store-name collisions, and DDL that
 * a crash interrupts
 *
 * Run with QSTORE_TEST_PROVIDER set to a provider name, optionally with
 * URI options (`lmdb?atomic=0`). Each ALTER arm is checked on its success
 * path (rows, indexes, constraints, the catalog after reopen) and on its
 * failure path (the error, the table unchanged and still writable, the
 * catalog unchanged). The crash test runs this program again as a child
 * (`test-alter --crash-child URI SEED`) that runs DDL in a loop, kills it
 * at random points and checks the store it left; QSTORE_CRASH_ITERATIONS
 * sets how many times (20 by default).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <qstore.h>

#include "qstore-test-util.h"

static const char *self_path;

typedef TestDatabase Fixture;

static void
fixture_setup (Fixture       *f,
               gconstpointer  data)
{
  test_database_set_up (f, "qstore-alter-XXXXXX");
}

/* Reopens a persistent store; FALSE (nothing done) for memory. */
static gboolean
reopen (Fixture *f)
{
  QStoreRehydrationResult *result;

  if (!test_provider_persistent ())
    return FALSE;
  test_database_reopen (f);
  result = qstore_database_get_rehydration_result (f->db);
  if (qstore_rehydration_result_get_n_errors (result) > 0)
    g_error ("Reopening left %s: %s", qstore_rehydration_result_get_error_name (result, 0),
             qstore_rehydration_result_get_error_message (result, 0));
  return TRUE;
}

/* Statements, on the fixture's database */

#define exec_ok(f, sql) test_exec ((f)->db, (sql))
#define exec_fails(f, sql, code, part) test_exec_fails ((f)->db, (sql), (code), (part))
/* Fails the same way, and returns the message. */
#define exec_error(f, sql, code) test_exec_error ((f)->db, (sql), (code))

/* Rows are compared as text: values joined by `|`, one row a line. */
static void
append_value (GString  *out,
              GVariant *value)
{
  if (qstore_value_is_null (value))
    g_string_append (out, "NULL");
  else if (g_variant_is_of_type (value, G_VARIANT_TYPE_INT64))
    g_string_append_printf (out, "%" G_GINT64_FORMAT, g_variant_get_int64 (value));
  else if (g_variant_is_of_type (value, G_VARIANT_TYPE_DOUBLE))
    g_string_append_printf (out, "%g", g_variant_get_double (value));
  else if (g_variant_is_of_type (value, G_VARIANT_TYPE_STRING))
    g_string_append (out, g_variant_get_string (value, NULL));
  else
    {
      gsize len;
      const guint8 *data = g_variant_get_fixed_array (value, &len, 1);

      g_string_append (out, "x'");
      for (gsize i = 0; i < len; i++)
        g_string_append_printf (out, "%02x", data[i]);
      g_string_append_c (out, '\'');
    }
}

static void
assert_rows (Fixture    *f,
             const char *sql,
             const char *expected)
{
  g_autofree char *got = test_query_text (f->db, sql, append_value);

  if (!g_str_equal (got, expected))
    g_error ("“%s” gave:\n%sexpected:\n%s", sql, got, expected);
}

static void
assert_plan (Fixture    *f,
             const char *sql,
             const char *plan)
{
  g_autofree char *eqp = g_strconcat ("EXPLAIN QUERY PLAN ", sql, NULL);
  g_autofree char *got = test_query_text (f->db, eqp, append_value);
  g_autofree char *needle = g_strdup_printf (":%s\n", plan);

  if (strstr (got, needle) == NULL)
    g_error ("The plan of “%s” is\n%snot “%s”", sql, got, plan);
}

static const char *
table_sql (Fixture    *f,
           const char *table)
{
  QStoreTable *t = qstore_database_get_table (f->db, NULL, table);

  g_assert_nonnull (t);
  return qstore_table_get_sql (t);
}

/* Stores */

static void
append_bytes (GString      *out,
              const guint8 *data,
              gsize         len)
{
  for (gsize i = 0; i < len; i++)
    g_string_append_printf (out, "%02x", data[i]);
}

/* Every key and value of @store, as text; with @skip_meta, the meta
 * entries of a catalog (the transaction id moves with every commit) are
 * left out. */
static char *
dump_kv (QStoreKV *store,
         gboolean  skip_meta)
{
  g_autoptr(QStoreBounds) all = qstore_bounds_new ();
  g_autoptr(QStoreIter) iter = NULL;
  g_autoptr(GError) error = NULL;
  GString *out = g_string_new (NULL);

  iter = qstore_kv_iterate (store, all, &error);
  g_assert_no_error (error);
  while (qstore_iter_next (iter, &error))
    {
      gsize len;
      const guint8 *data = qstore_iter_peek_key (iter, &len);

      if (skip_meta)
        {
          g_autoptr(GBytes) key = qstore_iter_get_key (iter);

          if (qstore_catalog_key_classify (key, NULL, NULL) == QSTORE_CATALOG_KEY_META)
            continue;
        }
      append_bytes (out, data, len);
      g_string_append_c (out, '=');
      data = qstore_iter_peek_value (iter, &len);
      append_bytes (out, data, len);
      g_string_append_c (out, '\n');
    }
  g_assert_no_error (error);
  return g_string_free (out, FALSE);
}

static char *
dump_store (Fixture    *f,
            const char *name)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(QStoreKV) store = NULL;

  store = qstore_provider_open_store (qstore_database_get_provider (f->db), name, &error);
  g_assert_no_error (error);
  return dump_kv (store, FALSE);
}

static char *
dump_catalog (Fixture *f)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(QStoreKV) catalog = NULL;

  catalog = qstore_provider_get_catalog_store (qstore_database_get_provider (f->db), &error);
  g_assert_no_error (error);
  return dump_kv (catalog, TRUE);
}

static gboolean
store_has_entries (Fixture    *f,
                   const char *name)
{
  g_autofree char *dump = dump_store (f, name);

  return dump[0] != '\0';
}

/* What a failing ALTER must leave as it was. */
typedef struct
{
  char *catalog;
  char *sql;
  char *data;
  GPtrArray *indexes;  /* char *: "name\ndump" */
} Snapshot;

static void
snapshot_clear (Snapshot *snapshot)
{
  g_clear_pointer (&snapshot->catalog, g_free);
  g_clear_pointer (&snapshot->sql, g_free);
  g_clear_pointer (&snapshot->data, g_free);
  g_clear_pointer (&snapshot->indexes, g_ptr_array_unref);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Snapshot, snapshot_clear)

static void
take_snapshot (Fixture    *f,
               const char *table,
               Snapshot   *snapshot)
{
  QStoreTable *t = qstore_database_get_table (f->db, NULL, table);
  g_auto(GStrv) indexes = qstore_table_list_indexes (t);
  g_autofree char *data_store = qstore_store_name_for_table ("main", table);

  snapshot_clear (snapshot);
  snapshot->catalog = dump_catalog (f);
  snapshot->sql = g_strdup (qstore_table_get_sql (t));
  snapshot->data = dump_store (f, data_store);
  snapshot->indexes = g_ptr_array_new_with_free_func (g_free);
  for (guint i = 0; indexes[i] != NULL; i++)
    {
      g_autofree char *store = qstore_store_name_for_index ("main", table, indexes[i]);
      g_autofree char *dump = dump_store (f, store);

      g_ptr_array_add (snapshot->indexes, g_strdup_printf ("%s\n%s", indexes[i], dump));
    }
}

static void
assert_unchanged (Fixture    *f,
                  const char *table,
                  Snapshot   *before)
{
  g_auto(Snapshot) now = { 0 };

  take_snapshot (f, table, &now);
  g_assert_cmpstr (now.sql, ==, before->sql);
  g_assert_cmpstr (now.catalog, ==, before->catalog);
  g_assert_cmpstr (now.data, ==, before->data);
  g_assert_cmpuint (now.indexes->len, ==, before->indexes->len);
  for (guint i = 0; i < now.indexes->len; i++)
    g_assert_cmpstr (now.indexes->pdata[i], ==, before->indexes->pdata[i]);
}

/* Index @index of @table holds exactly one entry per row (per row its
 * predicate holds, @n_partial of them, for a partial index; -1 else):
 * the encoded @columns (under @collations) followed by the data key, with
 * the data key as value. */
static void
assert_index (Fixture               *f,
              const char            *table,
              const char            *index,
              guint                  n_columns,
              const guint           *columns,
              const QStoreCollation *collations,
              int                    n_partial)
{
  QStoreProvider *provider = qstore_database_get_provider (f->db);
  g_autoptr(GHashTable) expected = g_hash_table_new_full (g_bytes_hash, g_bytes_equal,
                                                          (GDestroyNotify) g_bytes_unref,
                                                          (GDestroyNotify) g_bytes_unref);
  g_autoptr(QStoreKV) data = NULL;
  g_autoptr(QStoreKV) entries = NULL;
  g_autoptr(QStoreBounds) all = qstore_bounds_new ();
  g_autoptr(QStoreIter) iter = NULL;
  g_autoptr(GError) error = NULL;
  guint n_rows = 0, n_entries = 0;

  data = qstore_provider_get_store (provider, "main", table, &error);
  g_assert_no_error (error);
  entries = qstore_provider_get_index_store (provider, "main", table, index, &error);
  g_assert_no_error (error);

  iter = qstore_kv_iterate (data, all, &error);
  g_assert_no_error (error);
  while (qstore_iter_next (iter, &error))
    {
      g_autoptr(GBytes) key = qstore_iter_get_key (iter);
      g_autoptr(GBytes) value = qstore_iter_get_value (iter);
      g_autoptr(GVariant) row = qstore_codec_decode_row (value, &error);
      g_auto(GVariantBuilder) builder = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_TUPLE);
      g_autoptr(GBytes) prefix = NULL;
      g_autoptr(GByteArray) entry = g_byte_array_new ();

      g_assert_no_error (error);
      for (guint i = 0; i < n_columns; i++)
        {
          g_autoptr(GVariant) column = g_variant_get_child_value (row, columns[i]);

          g_variant_builder_add_value (&builder, column);
        }
      prefix = qstore_codec_encode_key (g_variant_builder_end (&builder), collations, NULL,
                                        n_columns, &error);
      g_assert_no_error (error);
      g_byte_array_append (entry, g_bytes_get_data (prefix, NULL), g_bytes_get_size (prefix));
      g_byte_array_append (entry, g_bytes_get_data (key, NULL), g_bytes_get_size (key));
      g_hash_table_insert (expected, g_byte_array_free_to_bytes (g_steal_pointer (&entry)),
                           g_bytes_ref (key));
      n_rows++;
    }
  g_assert_no_error (error);
  g_clear_object (&iter);

  iter = qstore_kv_iterate (entries, all, &error);
  g_assert_no_error (error);
  while (qstore_iter_next (iter, &error))
    {
      g_autoptr(GBytes) key = qstore_iter_get_key (iter);
      g_autoptr(GBytes) value = qstore_iter_get_value (iter);
      GBytes *data_key = g_hash_table_lookup (expected, key);

      if (data_key == NULL)
        g_error ("Index “%s” of table “%s” holds an entry no row has", index, table);
      g_assert_true (g_bytes_equal (data_key, value));
      n_entries++;
    }
  g_assert_no_error (error);
  g_assert_cmpuint (n_entries, ==, n_partial >= 0 ? (guint) n_partial : n_rows);
}

static const QStoreCollation binary[] = { QSTORE_COLLATION_BINARY, QSTORE_COLLATION_BINARY };
static const QStoreCollation nocase[] = { QSTORE_COLLATION_NOCASE, QSTORE_COLLATION_NOCASE };

/* ALTER COLUMN … SET / DROP NOT NULL */

static void
test_not_null (Fixture       *f,
               gconstpointer  data)
{
  g_auto(Snapshot) before = { 0 };
  g_autofree char *message = NULL;
  static const guint a[] = { 1 };

  exec_ok (f, "CREATE TABLE t (id INTEGER PRIMARY KEY, a TEXT, b INTEGER NULL);"
              "CREATE INDEX t_a ON t (a);"
              "INSERT INTO t VALUES (1, 'x', 10), (2, NULL, 20), (3, 'z', NULL)");

  /* A row holds NULL: refused, and nothing changes. */
  take_snapshot (f, "t", &before);
  message = exec_error (f, "ALTER TABLE t ALTER COLUMN a SET NOT NULL", QSTORE_ERROR_CONSTRAINT);
  g_assert_nonnull (strstr (message, "NOT NULL constraint failed: t.a"));
  g_assert_nonnull (strstr (message, "“a”"));
  assert_unchanged (f, "t", &before);
  exec_ok (f, "INSERT INTO t VALUES (4, NULL, 40)");
  exec_ok (f, "DELETE FROM t WHERE id = 4");

  exec_ok (f, "UPDATE t SET a = 'y' WHERE a IS NULL");
  exec_ok (f, "ALTER TABLE t ALTER COLUMN a SET NOT NULL");
  g_assert_nonnull (strstr (table_sql (f, "t"), "a TEXT NOT NULL"));
  exec_fails (f, "INSERT INTO t VALUES (4, NULL, 40)", QSTORE_ERROR_CONSTRAINT,
              "NOT NULL constraint failed: t.a");
  /* Setting it again changes nothing. */
  exec_ok (f, "ALTER TABLE t ALTER a SET NOT NULL");
  assert_rows (f, "SELECT id, a, b FROM t ORDER BY id", "1|x|10\n2|y|20\n3|z|NULL\n");
  assert_index (f, "t", "t_a", 1, a, binary, -1);
  assert_plan (f, "SELECT id FROM t WHERE a = 'y'", "index-eq:t_a covering");

  /* A column that said NULL says NOT NULL instead. */
  exec_fails (f, "ALTER TABLE t ALTER COLUMN b SET NOT NULL", QSTORE_ERROR_CONSTRAINT,
              "NOT NULL constraint failed: t.b");
  exec_ok (f, "UPDATE t SET b = 30 WHERE id = 3; ALTER TABLE t ALTER COLUMN b SET NOT NULL");
  g_assert_null (strstr (table_sql (f, "t"), "b INTEGER NULL"));

  if (reopen (f))
    {
      exec_fails (f, "INSERT INTO t VALUES (4, NULL, 40)", QSTORE_ERROR_CONSTRAINT,
                  "NOT NULL constraint failed: t.a");
      assert_index (f, "t", "t_a", 1, a, binary, -1);
    }

  exec_ok (f, "ALTER TABLE t ALTER COLUMN a DROP NOT NULL");
  exec_ok (f, "INSERT INTO t VALUES (4, NULL, 40)");
  assert_rows (f, "SELECT id FROM t WHERE a IS NULL", "4\n");
  exec_ok (f, "ALTER TABLE t ALTER COLUMN a DROP NOT NULL");
  if (reopen (f))
    {
      exec_ok (f, "INSERT INTO t VALUES (5, NULL, 50)");
      exec_fails (f, "INSERT INTO t VALUES (6, 'q', NULL)", QSTORE_ERROR_CONSTRAINT,
                  "NOT NULL constraint failed: t.b");
      assert_rows (f, "SELECT count(*) FROM t WHERE a IS NULL", "2\n");
    }
  exec_fails (f, "ALTER TABLE t ALTER COLUMN missing SET NOT NULL", QSTORE_ERROR_NOT_FOUND,
              "missing");
}

/* ALTER COLUMN … SET / DROP DEFAULT */

static void
test_default (Fixture       *f,
              gconstpointer  data)
{
  g_auto(Snapshot) before = { 0 };

  exec_ok (f, "CREATE TABLE t (id INTEGER PRIMARY KEY, a TEXT DEFAULT 'old', b REAL);"
              "INSERT INTO t (id) VALUES (1)");

  exec_ok (f, "ALTER TABLE t ALTER COLUMN a SET DEFAULT 'new'");
  exec_ok (f, "ALTER TABLE t ALTER COLUMN b SET DEFAULT -2.5");
  exec_ok (f, "INSERT INTO t (id) VALUES (2)");
  /* Existing rows keep their values. */
  assert_rows (f, "SELECT id, a, b FROM t ORDER BY id", "1|old|NULL\n2|new|-2.5\n");

  /* An expression, with or without its parentheses. */
  exec_ok (f, "ALTER TABLE t ALTER COLUMN b SET DEFAULT 1 + 2");
  exec_ok (f, "INSERT INTO t (id) VALUES (3)");
  exec_ok (f, "ALTER TABLE t ALTER COLUMN a SET DEFAULT ('a' || 'b')");
  exec_ok (f, "INSERT INTO t (id) VALUES (4)");
  assert_rows (f, "SELECT id, a, b, typeof (b) FROM t WHERE id >= 3 ORDER BY id",
               "3|new|3|real\n4|ab|3|real\n");

  /* What SQLite refuses as a DEFAULT is refused, and nothing changes. */
  take_snapshot (f, "t", &before);
  exec_fails (f, "ALTER TABLE t ALTER COLUMN a SET DEFAULT (b + 1)", QSTORE_ERROR_INVALID_ARGUMENT,
              "default value of column [a] is not constant");
  exec_fails (f, "ALTER TABLE t ALTER COLUMN a SET DEFAULT", QSTORE_ERROR_SYNTAX,
              "DEFAULT");
  assert_unchanged (f, "t", &before);
  exec_ok (f, "INSERT INTO t (id) VALUES (5)");
  assert_rows (f, "SELECT a FROM t WHERE id = 5", "ab\n");

  if (reopen (f))
    {
      exec_ok (f, "INSERT INTO t (id) VALUES (6)");
      assert_rows (f, "SELECT a, b FROM t WHERE id = 6", "ab|3\n");
    }

  exec_ok (f, "ALTER TABLE t ALTER COLUMN a DROP DEFAULT");
  exec_ok (f, "INSERT INTO t (id) VALUES (7)");
  assert_rows (f, "SELECT a, b FROM t WHERE id = 7", "NULL|3\n");
  g_assert_null (strstr (table_sql (f, "t"), "'b')"));
  if (reopen (f))
    {
      exec_ok (f, "INSERT INTO t (id) VALUES (8)");
      assert_rows (f, "SELECT a, b FROM t WHERE id = 8", "NULL|3\n");
    }
}

/* ALTER COLUMN … SET COLLATE on a column with UNIQUE constraints and
 * indexes */

static void
test_collate_unique (Fixture       *f,
                     gconstpointer  data)
{
  g_auto(Snapshot) before = { 0 };
  g_autofree char *message = NULL;
  static const guint k[] = { 1 };
  static const guint kv[] = { 1, 2 };

  exec_ok (f, "CREATE TABLE t (id INTEGER PRIMARY KEY, k TEXT UNIQUE, v INTEGER);"
              "CREATE INDEX t_k ON t (k);"
              "CREATE INDEX t_kv ON t (k COLLATE BINARY, v);"
              "INSERT INTO t VALUES (1, 'a', 1), (2, 'A', 2), (3, 'b', 3)");

  /* 'a' and 'A' are one value under NOCASE. */
  take_snapshot (f, "t", &before);
  message = exec_error (f, "ALTER TABLE t ALTER COLUMN k SET COLLATE NOCASE",
                        QSTORE_ERROR_CONSTRAINT);
  g_assert_nonnull (strstr (message, "UNIQUE constraint failed: t.k"));
  assert_unchanged (f, "t", &before);
  exec_ok (f, "INSERT INTO t VALUES (4, 'B', 4)");
  assert_rows (f, "SELECT id FROM t WHERE k = 'B'", "4\n");
  exec_ok (f, "DELETE FROM t WHERE id = 4");

  /* An unknown collation is SQLite's to refuse. */
  exec_fails (f, "ALTER TABLE t ALTER COLUMN k SET COLLATE nosuch", QSTORE_ERROR_NOT_FOUND,
              "no such collation sequence: nosuch");
  assert_unchanged (f, "t", &before);

  exec_ok (f, "DELETE FROM t WHERE id = 2");
  exec_ok (f, "ALTER TABLE t ALTER COLUMN k SET COLLATE NOCASE");
  g_assert_nonnull (strstr (table_sql (f, "t"), "k TEXT UNIQUE COLLATE NOCASE"));
  exec_fails (f, "INSERT INTO t VALUES (5, 'A', 5)", QSTORE_ERROR_CONSTRAINT,
              "UNIQUE constraint failed: t.k");
  /* The UNIQUE index and the index without COLLATE follow the column;
   * the one that names BINARY keeps it, as in SQLite. */
  assert_index (f, "t", "sqlite_autoindex_t_1", 1, k, nocase, -1);
  assert_index (f, "t", "t_k", 1, k, nocase, -1);
  {
    static const QStoreCollation kept[] = { QSTORE_COLLATION_BINARY, QSTORE_COLLATION_BINARY };

    assert_index (f, "t", "t_kv", 2, kv, kept, -1);
  }
  assert_rows (f, "SELECT id FROM t WHERE k = 'B'", "3\n");
  assert_rows (f, "SELECT id, k FROM t ORDER BY k", "1|a\n3|b\n");

  if (reopen (f))
    {
      assert_rows (f, "SELECT id FROM t WHERE k = 'A'", "1\n");
      exec_fails (f, "INSERT INTO t VALUES (5, 'B', 5)", QSTORE_ERROR_CONSTRAINT,
                  "UNIQUE constraint failed: t.k");
      assert_index (f, "t", "t_k", 1, k, nocase, -1);
    }

  /* Back to BINARY: nothing collides, every index is rebuilt. */
  exec_ok (f, "ALTER TABLE t ALTER COLUMN k SET COLLATE BINARY");
  exec_ok (f, "INSERT INTO t VALUES (5, 'B', 5)");
  assert_index (f, "t", "sqlite_autoindex_t_1", 1, k, binary, -1);
  assert_index (f, "t", "t_k", 1, k, binary, -1);
}

/* SET COLLATE on a PRIMARY KEY column re-keys the rows. */

static void
test_collate_primary_key (Fixture       *f,
                          gconstpointer  data)
{
  g_auto(Snapshot) before = { 0 };
  static const guint v[] = { 1 };

  exec_ok (f, "CREATE TABLE t (k TEXT PRIMARY KEY, v INTEGER);"
              "CREATE INDEX t_v ON t (v);"
              "INSERT INTO t VALUES ('a', 1), ('B', 2), ('c', 3), ('x', 4), ('X', 5)");

  take_snapshot (f, "t", &before);
  exec_fails (f, "ALTER TABLE t ALTER COLUMN k SET COLLATE NOCASE", QSTORE_ERROR_CONSTRAINT,
              "UNIQUE constraint failed: t.k");
  assert_unchanged (f, "t", &before);
  exec_ok (f, "UPDATE t SET v = 40 WHERE k = 'x'");
  assert_rows (f, "SELECT v FROM t WHERE k = 'x'", "40\n");

  exec_ok (f, "DELETE FROM t WHERE k = 'X'");
  exec_ok (f, "ALTER TABLE t ALTER COLUMN k SET COLLATE NOCASE");
  assert_rows (f, "SELECT k, v FROM t", "a|1\nB|2\nc|3\nx|40\n");
  assert_plan (f, "SELECT v FROM t WHERE k = 'b'", "pk-eq");
  assert_rows (f, "SELECT v FROM t WHERE k = 'b'", "2\n");
  assert_index (f, "t", "t_v", 1, v, binary, -1);
  assert_rows (f, "SELECT k FROM t WHERE v = 40", "x\n");
  exec_fails (f, "INSERT INTO t VALUES ('A', 9)", QSTORE_ERROR_CONSTRAINT,
              "UNIQUE constraint failed: t.k");
  exec_ok (f, "INSERT INTO t VALUES ('d', 9)");
  g_assert_cmpint (qstore_table_get_row_count (qstore_database_get_table (f->db, NULL, "t")),
                   ==, 5);

  if (reopen (f))
    {
      assert_rows (f, "SELECT k, v FROM t", "a|1\nB|2\nc|3\nd|9\nx|40\n");
      assert_rows (f, "SELECT v FROM t WHERE k = 'C'", "3\n");
      assert_index (f, "t", "t_v", 1, v, binary, -1);
      g_assert_cmpint (qstore_table_get_row_count (qstore_database_get_table (f->db, NULL, "t")),
                       ==, 5);
    }
}

/* ADD CONSTRAINT */

static void
test_add_constraint (Fixture       *f,
                     gconstpointer  data)
{
  g_auto(Snapshot) before = { 0 };
  static const guint b[] = { 1 };

  exec_ok (f, "CREATE TABLE t (id INTEGER PRIMARY KEY, b TEXT, c INTEGER, p INTEGER);"
              "CREATE TABLE parent (id INTEGER PRIMARY KEY);"
              "INSERT INTO parent VALUES (1), (2);"
              "INSERT INTO t VALUES (1, 'x', 5, 1), (2, 'x', -1, 7), (3, NULL, 2, NULL),"
              " (4, NULL, 3, 2)");

  /* UNIQUE over rows that repeat a value: refused, no store is built. */
  take_snapshot (f, "t", &before);
  exec_fails (f, "ALTER TABLE t ADD CONSTRAINT ub UNIQUE (b)", QSTORE_ERROR_CONSTRAINT,
              "UNIQUE constraint failed: t.b");
  assert_unchanged (f, "t", &before);
  g_assert_false (store_has_entries (f, "main.t_idx_sqlite_autoindex_t_1"));

  /* CHECK over a row that fails it. */
  exec_fails (f, "ALTER TABLE t ADD CONSTRAINT positive CHECK (c > 0)", QSTORE_ERROR_CONSTRAINT,
              "CHECK constraint failed: positive");
  assert_unchanged (f, "t", &before);

  /* What is not a constraint, or not one of these. */
  exec_fails (f, "ALTER TABLE t ADD CONSTRAINT k PRIMARY KEY (b)", QSTORE_ERROR_UNSUPPORTED,
              "ALTER PRIMARY KEY");
  exec_fails (f, "ALTER TABLE t ADD CONSTRAINT k NOT NULL", QSTORE_ERROR_SYNTAX,
              "syntax error");
  exec_fails (f, "ALTER TABLE t ADD CONSTRAINT k UNIQUE (nosuch)", QSTORE_ERROR_NOT_FOUND,
              "nosuch");
  assert_unchanged (f, "t", &before);
  exec_ok (f, "INSERT INTO t VALUES (5, 'y', -5, NULL); DELETE FROM t WHERE id = 5");

  exec_ok (f, "UPDATE t SET b = 'w' WHERE id = 2; UPDATE t SET c = 1 WHERE id = 2");
  exec_ok (f, "ALTER TABLE t ADD CONSTRAINT ub UNIQUE (b)");
  exec_ok (f, "ALTER TABLE t ADD CONSTRAINT positive CHECK (c > 0)");
  exec_fails (f, "ALTER TABLE t ADD CONSTRAINT ub UNIQUE (c)", QSTORE_ERROR_EXISTS, "“ub”");
  assert_index (f, "t", "sqlite_autoindex_t_1", 1, b, binary, -1);
  assert_plan (f, "SELECT id FROM t WHERE b = 'w'", "index-eq:sqlite_autoindex_t_1 covering");
  assert_rows (f, "SELECT id FROM t WHERE b = 'w'", "2\n");
  exec_fails (f, "INSERT INTO t VALUES (6, 'x', 1, NULL)", QSTORE_ERROR_CONSTRAINT,
              "UNIQUE constraint failed: t.b");
  exec_fails (f, "INSERT INTO t VALUES (6, 'q', 0, NULL)", QSTORE_ERROR_CONSTRAINT,
              "CHECK constraint failed: positive");
  /* NULLs are distinct. */
  exec_ok (f, "INSERT INTO t VALUES (6, NULL, 1, NULL)");

  /* FOREIGN KEY: existing rows are checked where SQLite enforces
   * foreign keys (PRAGMA foreign_keys), and not otherwise, as SQLite. */
  exec_ok (f, "PRAGMA foreign_keys = ON");
  g_clear_pointer (&before.catalog, g_free);
  before.catalog = dump_catalog (f);
  exec_fails (f, "ALTER TABLE t ADD CONSTRAINT fk FOREIGN KEY (p) REFERENCES parent (id)",
              QSTORE_ERROR_CONSTRAINT, "FOREIGN KEY constraint failed");
  {
    g_autofree char *catalog = dump_catalog (f);

    g_assert_cmpstr (catalog, ==, before.catalog);
  }
  exec_ok (f, "PRAGMA foreign_keys = OFF");
  exec_ok (f, "ALTER TABLE t ADD CONSTRAINT fk FOREIGN KEY (p) REFERENCES parent (id)");
  exec_ok (f, "ALTER TABLE t DROP CONSTRAINT fk");
  exec_ok (f, "UPDATE t SET p = 1 WHERE id = 2; PRAGMA foreign_keys = ON");
  exec_ok (f, "ALTER TABLE t ADD CONSTRAINT fk FOREIGN KEY (p) REFERENCES parent (id) "
              "ON DELETE CASCADE");
  exec_ok (f, "PRAGMA foreign_keys = OFF");
  g_assert_nonnull (strstr (table_sql (f, "t"),
                            "CONSTRAINT fk FOREIGN KEY (p) REFERENCES parent (id) "
                            "ON DELETE CASCADE"));

  if (reopen (f))
    {
      assert_rows (f, "SELECT id, b, c, p FROM t ORDER BY id",
                   "1|x|5|1\n2|w|1|1\n3|NULL|2|NULL\n4|NULL|3|2\n6|NULL|1|NULL\n");
      exec_fails (f, "INSERT INTO t VALUES (7, 'w', 1, NULL)", QSTORE_ERROR_CONSTRAINT,
                  "UNIQUE constraint failed: t.b");
      exec_fails (f, "INSERT INTO t VALUES (7, 'z', -1, NULL)", QSTORE_ERROR_CONSTRAINT,
                  "CHECK constraint failed: positive");
      assert_index (f, "t", "sqlite_autoindex_t_1", 1, b, binary, -1);
      g_assert_nonnull (strstr (table_sql (f, "t"), "CONSTRAINT fk FOREIGN KEY"));
    }
}

/* DROP CONSTRAINT and RENAME CONSTRAINT */

static void
test_drop_rename_constraint (Fixture       *f,
                             gconstpointer  data)
{
  g_auto(Snapshot) before = { 0 };
  static const guint b[] = { 2 };

  exec_ok (f, "CREATE TABLE t (id INTEGER CONSTRAINT pk PRIMARY KEY,"
              " a TEXT CONSTRAINT ua UNIQUE, b TEXT, c INTEGER CONSTRAINT small CHECK (c < 10),"
              " CONSTRAINT ub UNIQUE (b) ON CONFLICT ABORT);"
              "INSERT INTO t VALUES (1, 'a1', 'b1', 1), (2, 'a2', 'b2', 2)");
  g_assert_true (store_has_entries (f, "main.t_idx_sqlite_autoindex_t_2"));

  take_snapshot (f, "t", &before);
  exec_fails (f, "ALTER TABLE t DROP CONSTRAINT nosuch", QSTORE_ERROR_NOT_FOUND, "nosuch");
  exec_fails (f, "ALTER TABLE t DROP CONSTRAINT pk", QSTORE_ERROR_UNSUPPORTED,
              "ALTER PRIMARY KEY");
  exec_fails (f, "ALTER TABLE t RENAME CONSTRAINT ua TO UB", QSTORE_ERROR_EXISTS, "“UB”");
  exec_fails (f, "ALTER TABLE t RENAME CONSTRAINT nosuch TO x", QSTORE_ERROR_NOT_FOUND, "nosuch");
  assert_unchanged (f, "t", &before);

  /* The first UNIQUE goes: its store is erased, and the second one's
   * index takes its number. */
  exec_ok (f, "ALTER TABLE t DROP CONSTRAINT ua");
  exec_ok (f, "INSERT INTO t VALUES (3, 'a1', 'b3', 3)");
  {
    g_auto(GStrv) indexes = qstore_table_list_indexes (qstore_database_get_table (f->db, NULL,
                                                                                  "t"));

    g_assert_cmpuint (g_strv_length (indexes), ==, 1);
    g_assert_cmpstr (indexes[0], ==, "sqlite_autoindex_t_1");
  }
  g_assert_false (store_has_entries (f, "main.t_idx_sqlite_autoindex_t_2"));
  assert_index (f, "t", "sqlite_autoindex_t_1", 1, b, binary, -1);
  /* Clauses the arm does not touch keep their words. */
  g_assert_nonnull (strstr (table_sql (f, "t"), "CONSTRAINT ub UNIQUE (b) ON CONFLICT ABORT"));
  g_assert_nonnull (strstr (table_sql (f, "t"), "id INTEGER CONSTRAINT pk PRIMARY KEY"));
  exec_fails (f, "INSERT INTO t VALUES (4, 'a4', 'b2', 4)", QSTORE_ERROR_CONSTRAINT,
              "UNIQUE constraint failed: t.b");
  assert_rows (f, "SELECT id FROM t ORDER BY id", "1\n2\n3\n");

  exec_ok (f, "ALTER TABLE t RENAME CONSTRAINT small TO tiny");
  g_assert_nonnull (strstr (table_sql (f, "t"), "CONSTRAINT tiny CHECK (c < 10)"));
  exec_fails (f, "INSERT INTO t VALUES (5, 'a5', 'b5', 50)", QSTORE_ERROR_CONSTRAINT,
              "CHECK constraint failed: tiny");
  exec_ok (f, "ALTER TABLE t RENAME CONSTRAINT ub TO unique_b");

  if (reopen (f))
    {
      exec_fails (f, "INSERT INTO t VALUES (5, 'a5', 'b5', 50)", QSTORE_ERROR_CONSTRAINT,
                  "CHECK constraint failed: tiny");
      assert_index (f, "t", "sqlite_autoindex_t_1", 1, b, binary, -1);
      g_assert_false (store_has_entries (f, "main.t_idx_sqlite_autoindex_t_2"));
    }

  exec_ok (f, "ALTER TABLE t DROP CONSTRAINT TINY");
  exec_ok (f, "ALTER TABLE t DROP CONSTRAINT unique_b");
  exec_ok (f, "INSERT INTO t VALUES (5, 'a5', 'b1', 50)");
  assert_rows (f, "SELECT count(*) FROM t WHERE b = 'b1'", "2\n");
  g_assert_false (store_has_entries (f, "main.t_idx_sqlite_autoindex_t_1"));
  if (reopen (f))
    {
      assert_rows (f, "SELECT id FROM t ORDER BY id", "1\n2\n3\n5\n");
      g_assert_null (strstr (table_sql (f, "t"), "UNIQUE"));
      g_assert_null (strstr (table_sql (f, "t"), "CHECK"));
    }
}

/* ALTER PRIMARY KEY */

static void
test_primary_key (Fixture       *f,
                  gconstpointer  data)
{
  g_auto(Snapshot) before = { 0 };
  static const guint c[] = { 2 };
  static const guint b[] = { 1 };

  /* A table keyed by its rowid. */
  exec_ok (f, "CREATE TABLE t (a INTEGER, b TEXT, c TEXT, UNIQUE (b));"
              "CREATE INDEX t_c ON t (c);"
              "CREATE INDEX t_part ON t (c) WHERE a > 1;"
              "INSERT INTO t VALUES (1, 'one', 'x'), (2, 'two', 'y'), (2, 'deux', 'z')");

  take_snapshot (f, "t", &before);
  exec_fails (f, "ALTER TABLE t ALTER PRIMARY KEY (a)", QSTORE_ERROR_CONSTRAINT,
              "UNIQUE constraint failed: t.a");
  exec_fails (f, "ALTER TABLE t ALTER PRIMARY KEY (nosuch)", QSTORE_ERROR_NOT_FOUND,
              "nosuch");
  exec_fails (f, "ALTER TABLE t ALTER PRIMARY KEY a", QSTORE_ERROR_SYNTAX,
              "syntax error");
  assert_unchanged (f, "t", &before);
  exec_ok (f, "INSERT INTO t VALUES (9, 'nine', 'w'); DELETE FROM t WHERE a = 9");

  /* Composite and DESC: the key is (a, b DESC). */
  exec_ok (f, "ALTER TABLE t ALTER PRIMARY KEY (a, b DESC)");
  assert_rows (f, "SELECT a, b, c FROM t", "1|one|x\n2|two|y\n2|deux|z\n");
  assert_plan (f, "SELECT c FROM t WHERE a = 2 AND b = 'deux'", "pk-eq");
  assert_rows (f, "SELECT c FROM t WHERE a = 2 AND b = 'deux'", "z\n");
  assert_index (f, "t", "t_c", 1, c, binary, -1);
  assert_index (f, "t", "t_part", 1, c, binary, 2);
  assert_index (f, "t", "sqlite_autoindex_t_1", 1, b, binary, -1);
  exec_fails (f, "INSERT INTO t VALUES (2, 'two', 'q')", QSTORE_ERROR_CONSTRAINT, NULL);

  /* An INTEGER column made the key aliases the rowid. */
  exec_ok (f, "ALTER TABLE t ADD COLUMN id INTEGER");
  take_snapshot (f, "t", &before);
  exec_fails (f, "ALTER TABLE t ALTER PRIMARY KEY (id)", QSTORE_ERROR_CONSTRAINT,
              "INTEGER PRIMARY KEY");
  assert_unchanged (f, "t", &before);
  exec_ok (f, "UPDATE t SET id = 10 * a + length(b)");
  exec_ok (f, "ALTER TABLE t ALTER PRIMARY KEY (id)");
  assert_rows (f, "SELECT rowid, id, b FROM t", "13|13|one\n23|23|two\n24|24|deux\n");
  exec_ok (f, "INSERT INTO t (a, b, c) VALUES (3, 'three', 'v')");
  assert_rows (f, "SELECT last_insert_rowid(), id FROM t WHERE b = 'three'", "25|25\n");
  assert_index (f, "t", "t_c", 1, c, binary, -1);
  assert_index (f, "t", "t_part", 1, c, binary, 3);

  if (reopen (f))
    {
      assert_rows (f, "SELECT id, a, b, c FROM t",
                   "13|1|one|x\n23|2|two|y\n24|2|deux|z\n25|3|three|v\n");
      assert_plan (f, "SELECT b FROM t WHERE id = 24", "pk-eq");
      assert_index (f, "t", "t_c", 1, c, binary, -1);
      exec_fails (f, "INSERT INTO t (id, b) VALUES (13, 'dup')", QSTORE_ERROR_CONSTRAINT,
                  "UNIQUE constraint failed: t.id");
    }

  /* And back to a text key. */
  exec_ok (f, "ALTER TABLE t ALTER PRIMARY KEY (c)");
  assert_rows (f, "SELECT c, b FROM t", "v|three\nx|one\ny|two\nz|deux\n");
  assert_index (f, "t", "sqlite_autoindex_t_1", 1, b, binary, -1);
  g_assert_cmpint (qstore_table_get_row_count (qstore_database_get_table (f->db, NULL, "t")),
                   ==, 4);
}

/* A key column that holds NULL: as in SQLite's rowid tables, such rows
 * are distinct, and they keep apart under the new key. */
static void
test_primary_key_null (Fixture       *f,
                       gconstpointer  data)
{
  static const guint c[] = { 2 };

  exec_ok (f, "CREATE TABLE n (id INTEGER PRIMARY KEY, b TEXT, c INTEGER);"
              "CREATE INDEX n_c ON n (c);"
              "INSERT INTO n VALUES (1, NULL, 1), (2, 'x', 2), (3, NULL, 3)");
  exec_ok (f, "ALTER TABLE n ALTER PRIMARY KEY (b)");
  assert_rows (f, "SELECT id, b, c FROM n", "1|NULL|1\n3|NULL|3\n2|x|2\n");
  assert_index (f, "n", "n_c", 1, c, binary, -1);
  exec_ok (f, "INSERT INTO n VALUES (4, NULL, 4); UPDATE n SET c = 30 WHERE id = 3");
  assert_rows (f, "SELECT id FROM n WHERE c = 30", "3\n");
  exec_fails (f, "INSERT INTO n VALUES (5, 'x', 5)", QSTORE_ERROR_CONSTRAINT,
              "UNIQUE constraint failed: n.b");
  assert_index (f, "n", "n_c", 1, c, binary, -1);
  if (reopen (f))
    {
      assert_rows (f, "SELECT id, b, c FROM n", "1|NULL|1\n3|NULL|30\n4|NULL|4\n2|x|2\n");
      assert_index (f, "n", "n_c", 1, c, binary, -1);
    }
}

/* DROP COLUMN prunes the indexes and UNIQUE constraints over the column,
 * where SQLite refuses. */

static void
test_drop_column (Fixture       *f,
                  gconstpointer  data)
{
  g_auto(Snapshot) before = { 0 };
  static const guint c_after_a[] = { 2 };
  static const guint b_after_a[] = { 1 };
  static const guint c_after_b[] = { 1 };

  exec_ok (f, "CREATE TABLE t (id INTEGER PRIMARY KEY, a TEXT, b TEXT UNIQUE, c INTEGER,"
              " d INTEGER CHECK (d >= 0), UNIQUE (a, c));"
              "CREATE INDEX t_a ON t (a);"
              "CREATE INDEX t_c ON t (c);"
              "CREATE INDEX t_bc ON t (b, c) WHERE c > 1;"
              "CREATE INDEX t_where_a ON t (c) WHERE a IS NOT NULL;"
              "INSERT INTO t VALUES (1, 'x', 'p', 1, 0), (2, 'y', 'q', 2, 0), (3, NULL, 'r', 3, 0)");

  /* What SQLite refuses for other reasons stays refused, in its words. */
  take_snapshot (f, "t", &before);
  exec_fails (f, "ALTER TABLE t DROP COLUMN id", QSTORE_ERROR_INVALID_ARGUMENT,
              "cannot drop PRIMARY KEY column: \"id\"");
  exec_fails (f, "ALTER TABLE t DROP COLUMN nosuch", QSTORE_ERROR_NOT_FOUND,
              "no such column: \"nosuch\"");
  assert_unchanged (f, "t", &before);

  exec_ok (f, "ALTER TABLE t DROP COLUMN a");
  {
    g_auto(GStrv) indexes = qstore_table_list_indexes (qstore_database_get_table (f->db, NULL,
                                                                                  "t"));
    g_autofree char *list = g_strjoinv (",", indexes);

    g_assert_cmpstr (list, ==, "sqlite_autoindex_t_1,t_bc,t_c");
  }
  g_assert_false (store_has_entries (f, "main.t_idx_t_a"));
  g_assert_false (store_has_entries (f, "main.t_idx_t_where_a"));
  g_assert_false (store_has_entries (f, "main.t_idx_sqlite_autoindex_t_2"));
  assert_index (f, "t", "t_c", 1, c_after_a, binary, -1);
  assert_index (f, "t", "sqlite_autoindex_t_1", 1, b_after_a, binary, -1);
  assert_rows (f, "SELECT * FROM t ORDER BY id", "1|p|1|0\n2|q|2|0\n3|r|3|0\n");
  /* UNIQUE (a, c) went: c may repeat now; b may not. */
  exec_ok (f, "INSERT INTO t VALUES (4, 's', 3, 0)");
  exec_fails (f, "INSERT INTO t VALUES (5, 'p', 5, 0)", QSTORE_ERROR_CONSTRAINT,
              "UNIQUE constraint failed: t.b");

  /* b takes its UNIQUE and the index over (b, c) along. */
  exec_ok (f, "ALTER TABLE t DROP b");
  assert_rows (f, "SELECT * FROM t ORDER BY id", "1|1|0\n2|2|0\n3|3|0\n4|3|0\n");
  g_assert_false (store_has_entries (f, "main.t_idx_t_bc"));
  g_assert_false (store_has_entries (f, "main.t_idx_sqlite_autoindex_t_1"));
  assert_index (f, "t", "t_c", 1, c_after_b, binary, -1);
  assert_plan (f, "SELECT id FROM t WHERE c = 3", "index-eq:t_c covering");
  assert_rows (f, "SELECT id FROM t WHERE c = 3 ORDER BY id", "3\n4\n");

  if (reopen (f))
    {
      assert_rows (f, "SELECT * FROM t ORDER BY id", "1|1|0\n2|2|0\n3|3|0\n4|3|0\n");
      assert_index (f, "t", "t_c", 1, c_after_b, binary, -1);
      exec_fails (f, "INSERT INTO t VALUES (5, 1, -1)", QSTORE_ERROR_CONSTRAINT, "CHECK");
    }
}

/* The statement forms themselves */

static void
test_statements (Fixture       *f,
                 gconstpointer  data)
{
  exec_ok (f, "CREATE TABLE t (a TEXT, b INTEGER)");
  exec_ok (f, "CREATE TEMP TABLE tmp (a)");

  exec_fails (f, "ALTER TABLE nosuch ALTER COLUMN a SET NOT NULL", QSTORE_ERROR_NOT_FOUND,
              "no such table: nosuch");
  exec_fails (f, "ALTER TABLE tmp ALTER COLUMN a SET NOT NULL", QSTORE_ERROR_UNSUPPORTED,
              "not a qstore table");
  exec_fails (f, "ALTER TABLE t ALTER COLUMN a SET NULL", QSTORE_ERROR_SYNTAX,
              "near \"SET\"");
  exec_fails (f, "ALTER TABLE t ALTER COLUMN a SET NOT NULL extra", QSTORE_ERROR_SYNTAX,
              "near \"extra\"");
  exec_fails (f, "ALTER TABLE t RENAME CONSTRAINT a", QSTORE_ERROR_SYNTAX, "TO");

  /* Statements go on after one, with comments and quoted names. */
  exec_ok (f, "ALTER TABLE main.\"t\" ALTER COLUMN \"a\" SET DEFAULT 'x;y' /* ; */; "
              "INSERT INTO t (b) VALUES (1); ALTER TABLE t ALTER b SET NOT NULL");
  assert_rows (f, "SELECT a, b FROM t", "x;y|1\n");

  /* A DDL statement inside a transaction commits it first. */
  exec_ok (f, "BEGIN; INSERT INTO t VALUES ('kept', 2); ALTER TABLE t ALTER COLUMN a DROP DEFAULT;"
              " INSERT INTO t (b) VALUES (3); ROLLBACK");
  assert_rows (f, "SELECT a, b FROM t ORDER BY b", "x;y|1\nkept|2\n");
}

/* Store-name collisions: two logical objects whose physical store names
 * come out the same */

static void
assert_collision (Fixture    *f,
                  const char *sql,
                  const char *store,
                  const char *first,
                  const char *second)
{
  g_autofree char *message = exec_error (f, sql, QSTORE_ERROR_COLLISION);

  if (strstr (message, store) == NULL || strstr (message, first) == NULL ||
      strstr (message, second) == NULL || strstr (message, "rename one") == NULL)
    g_error ("“%s” was refused with “%s”, which should name store “%s”, %s and %s, "
             "and say to rename one", sql, message, store, first, second);
}

static void
test_collision_index_table (Fixture       *f,
                            gconstpointer  data)
{
  /* Index first, then the table. */
  exec_ok (f, "CREATE TABLE t (id INTEGER PRIMARY KEY, v);"
              "CREATE INDEX archive ON t (v);"
              "INSERT INTO t VALUES (1, 'one')");
  assert_collision (f, "CREATE TABLE t_idx_archive (x)", "main.t_idx_archive",
                    "“t_idx_archive”", "index “archive” of table “t”");
  g_assert_null (qstore_database_get_table (f->db, NULL, "t_idx_archive"));
  assert_rows (f, "SELECT id FROM t WHERE v = 'one'", "1\n");
  assert_plan (f, "SELECT id FROM t WHERE v = 'one'", "index-eq:archive");

  /* Table first, then the index (index names are the database's, so
   * this one has another). */
  exec_ok (f, "CREATE TABLE u_idx_old (x); INSERT INTO u_idx_old VALUES ('sibling');"
              "CREATE TABLE u (id INTEGER PRIMARY KEY, v); INSERT INTO u VALUES (1, 'one')");
  assert_collision (f, "CREATE INDEX old ON u (v)", "main.u_idx_old",
                    "“old” of table “u”", "table “u_idx_old”");
  assert_plan (f, "SELECT id FROM u WHERE v = 'one'", "scan filter:v");
  assert_rows (f, "SELECT x FROM u_idx_old", "sibling\n");
  assert_rows (f, "SELECT id, v FROM u", "1|one\n");
  /* The name is free for another table's index. */
  exec_ok (f, "CREATE INDEX old ON t (id)");

  if (reopen (f))
    {
      assert_rows (f, "SELECT x FROM u_idx_old", "sibling\n");
      assert_rows (f, "SELECT id FROM t WHERE v = 'one'", "1\n");
      assert_plan (f, "SELECT id FROM u WHERE v = 'one'", "scan filter:v");
    }
}

static void
test_collision_index_index (Fixture       *f,
                            gconstpointer  data)
{
  /* Index b_idx_c on a, then index c on a_idx_b: both main.a_idx_b_idx_c. */
  exec_ok (f, "CREATE TABLE a (x); CREATE TABLE a_idx_b (y);"
              "INSERT INTO a VALUES (1); INSERT INTO a_idx_b VALUES (2);"
              "CREATE INDEX b_idx_c ON a (x)");
  assert_collision (f, "CREATE INDEX c ON a_idx_b (y)", "main.a_idx_b_idx_c",
                    "“c” of table “a_idx_b”", "index “b_idx_c” of table “a”");
  assert_plan (f, "SELECT * FROM a_idx_b WHERE y = 2", "scan filter:y");
  assert_rows (f, "SELECT x FROM a WHERE x = 1", "1\n");
  assert_plan (f, "SELECT x FROM a WHERE x = 1", "index-eq:b_idx_c");

  /* The other order. */
  exec_ok (f, "DROP INDEX b_idx_c; CREATE INDEX c ON a_idx_b (y)");
  assert_collision (f, "CREATE INDEX b_idx_c ON a (x)", "main.a_idx_b_idx_c",
                    "“b_idx_c” of table “a”", "index “c” of table “a_idx_b”");
  assert_rows (f, "SELECT y FROM a_idx_b WHERE y = 2", "2\n");
  assert_plan (f, "SELECT y FROM a_idx_b WHERE y = 2", "index-eq:c");
  assert_rows (f, "SELECT x FROM a", "1\n");

  if (reopen (f))
    {
      assert_rows (f, "SELECT y FROM a_idx_b WHERE y = 2", "2\n");
      assert_plan (f, "SELECT x FROM a WHERE x = 1", "scan filter:x");
    }
}

static void
test_collision_rename (Fixture       *f,
                       gconstpointer  data)
{
  /* Renaming a table onto the store of another table's index. */
  exec_ok (f, "CREATE TABLE q (v); CREATE INDEX archive ON q (v); INSERT INTO q VALUES (1);"
              "CREATE TABLE mover (w); INSERT INTO mover VALUES (2)");
  assert_collision (f, "ALTER TABLE mover RENAME TO q_idx_archive", "main.q_idx_archive",
                    "“q_idx_archive”", "index “archive” of table “q”");
  assert_rows (f, "SELECT w FROM mover", "2\n");
  assert_rows (f, "SELECT v FROM q WHERE v = 1", "1\n");

  /* Renaming a table whose index store would land on a sibling table. */
  exec_ok (f, "CREATE TABLE t (v); CREATE INDEX x ON t (v); INSERT INTO t VALUES (3);"
              "CREATE TABLE u_idx_x (s); INSERT INTO u_idx_x VALUES ('sibling')");
  assert_collision (f, "ALTER TABLE t RENAME TO u", "main.u_idx_x",
                    "“x” of table “u”", "table “u_idx_x”");
  assert_rows (f, "SELECT v FROM t WHERE v = 3", "3\n");
  assert_plan (f, "SELECT v FROM t WHERE v = 3", "index-eq:x");
  assert_rows (f, "SELECT s FROM u_idx_x", "sibling\n");

  if (reopen (f))
    {
      assert_rows (f, "SELECT w FROM mover", "2\n");
      assert_rows (f, "SELECT s FROM u_idx_x", "sibling\n");
      assert_rows (f, "SELECT v FROM t WHERE v = 3", "3\n");
    }
}

static void
test_collision_footprint_swap (Fixture       *f,
                               gconstpointer  data)
{
  /* t with index x renamed to t_idx_x: its data store would move onto
   * its own index store. */
  exec_ok (f, "CREATE TABLE t (v); CREATE INDEX x ON t (v); INSERT INTO t VALUES (1), (2)");
  assert_collision (f, "ALTER TABLE t RENAME TO t_idx_x", "main.t_idx_x",
                    "“t_idx_x”", "index “x” of table “t”");
  assert_rows (f, "SELECT v FROM t ORDER BY v", "1\n2\n");
  assert_plan (f, "SELECT v FROM t WHERE v = 2", "index-eq:x");

  /* u_idx_z with index z renamed to u: the index store would move onto
   * the table's own data store. */
  exec_ok (f, "CREATE TABLE u_idx_z (v); CREATE INDEX z2 ON u_idx_z (v);"
              "CREATE INDEX z ON u_idx_z (v); INSERT INTO u_idx_z VALUES (3)");
  assert_collision (f, "ALTER TABLE u_idx_z RENAME TO u", "main.u_idx_z",
                    "“z” of table “u”", "table “u_idx_z”");
  assert_rows (f, "SELECT v FROM u_idx_z WHERE v = 3", "3\n");
  g_assert_null (qstore_database_get_table (f->db, NULL, "u"));

  /* Empty tables are refused as well: the names, not the contents,
   * decide. */
  exec_ok (f, "CREATE TABLE e (v); CREATE INDEX y ON e (v)");
  assert_collision (f, "ALTER TABLE e RENAME TO e_idx_y", "main.e_idx_y",
                    "“e_idx_y”", "index “y” of table “e”");

  if (reopen (f))
    {
      assert_rows (f, "SELECT v FROM t ORDER BY v", "1\n2\n");
      assert_rows (f, "SELECT v FROM u_idx_z", "3\n");
    }
}

/* Dropping or renaming t, whose index x has the store a sibling table's
 * name merely resembles, leaves the sibling alone. */
static void
test_sibling_survives (Fixture       *f,
                       gconstpointer  data)
{
  exec_ok (f, "CREATE TABLE t (v); CREATE INDEX x ON t (v); INSERT INTO t VALUES (1);"
              "CREATE TABLE t_idx_y (s); CREATE INDEX z ON t_idx_y (s);"
              "INSERT INTO t_idx_y VALUES ('sibling')");
  exec_ok (f, "DROP TABLE t");
  assert_rows (f, "SELECT s FROM t_idx_y", "sibling\n");
  assert_rows (f, "SELECT s FROM t_idx_y WHERE s = 'sibling'", "sibling\n");
  if (reopen (f))
    assert_rows (f, "SELECT s FROM t_idx_y WHERE s = 'sibling'", "sibling\n");

  /* Renamed the same way. */
  exec_ok (f, "CREATE TABLE t (v); CREATE INDEX x ON t (v); INSERT INTO t VALUES (2)");
  exec_ok (f, "ALTER TABLE t RENAME TO w");
  assert_rows (f, "SELECT s FROM t_idx_y", "sibling\n");
  assert_rows (f, "SELECT v FROM w WHERE v = 2", "2\n");
  g_assert_false (store_has_entries (f, "main.t"));
  g_assert_false (store_has_entries (f, "main.t_idx_x"));
  g_assert_true (store_has_entries (f, "main.t_idx_y"));
  if (reopen (f))
    {
      assert_rows (f, "SELECT s FROM t_idx_y WHERE s = 'sibling'", "sibling\n");
      assert_rows (f, "SELECT v FROM w WHERE v = 2", "2\n");
      exec_ok (f, "DROP TABLE w");
      assert_rows (f, "SELECT s FROM t_idx_y", "sibling\n");
    }
  if (reopen (f))
    assert_rows (f, "SELECT s FROM t_idx_y", "sibling\n");
}

/* Crash safety */

static gboolean
run (QStoreDatabase *db,
     const char     *sql)
{
  g_autoptr(GError) error = NULL;

  if (!qstore_database_exec (db, sql, &error))
    {
      g_printerr ("crash child: “%s” failed: %s\n", sql, error->message);
      return FALSE;
    }
  return TRUE;
}

/* The child: DDL in a loop until it is killed. */
static int
crash_child (const char *uri,
             guint       seed)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(QStoreDatabase) db = qstore_database_open (uri, QSTORE_OPEN_NONE, &error);
  g_autoptr(GRand) rand = g_rand_new_with_seed (seed);
  g_auto(GStrv) existing = NULL;

  if (db == NULL)
    {
      g_printerr ("crash child: %s\n", error->message);
      return 3;
    }
  /* What earlier children left goes first. */
  existing = qstore_database_list_tables (db);
  for (guint i = 0; existing[i] != NULL; i++)
    {
      g_autofree char *drop = g_strdup_printf ("DROP TABLE \"%s\"", existing[i]);

      if (!run (db, drop))
        return 3;
    }

  /* Ready: the parent's clock starts now. */
  if (write (STDOUT_FILENO, "r", 1) != 1)
    return 3;

  for (guint n = 0;; n++)
    {
      g_autofree char *t = g_strdup_printf ("t%u_%u", seed, n);
      g_autofree char *r = g_strdup_printf ("r%u_%u", seed, n);
      g_autoptr(GString) sql = g_string_new (NULL);
      guint rows = g_rand_int_range (rand, 1, 40);

      g_string_printf (sql, "CREATE TABLE %s (id INTEGER PRIMARY KEY, k TEXT, v INTEGER, "
                            "w TEXT, UNIQUE (k));"
                            "CREATE INDEX %s_v ON %s (v);"
                            "CREATE INDEX %s_w ON %s (w) WHERE v > 10;",
                       t, t, t, t, t);
      if (!run (db, sql->str))
        return 3;

      g_string_printf (sql, "BEGIN;");
      for (guint i = 0; i < rows; i++)
        g_string_append_printf (sql, "INSERT INTO %s (k, v, w) VALUES ('k%u', %u, 'w%u');",
                                t, i, g_rand_int_range (rand, 0, 30), i);
      g_string_append (sql, "COMMIT;");
      /* An index built over rows. */
      g_string_append_printf (sql, "CREATE INDEX %s_late ON %s (w, v)", t, t);
      if (!run (db, sql->str))
        return 3;

      g_string_printf (sql, "ALTER TABLE %s RENAME TO %s", t, r);
      if (!run (db, sql->str))
        return 3;
      /* Re-keys: by k, then k under another collation, then back. */
      g_string_printf (sql, "ALTER TABLE %s ALTER PRIMARY KEY (k);"
                            "ALTER TABLE %s ALTER COLUMN k SET COLLATE NOCASE;"
                            "ALTER TABLE %s ADD CONSTRAINT c_%u CHECK (v >= 0);"
                            "ALTER TABLE %s ADD CONSTRAINT u_%u UNIQUE (w);"
                            "UPDATE %s SET v = v + 1 WHERE id %% 3 = 0;"
                            "ALTER TABLE %s DROP COLUMN w;"
                            "ALTER TABLE %s ALTER PRIMARY KEY (id);"
                            "DELETE FROM %s WHERE id %% 5 = 0",
                       r, r, r, n, r, n, r, r, r, r);
      if (!run (db, sql->str))
        return 3;

      /* Keep a few tables; drop the others. */
      if (n >= 2)
        {
          g_autofree char *drop = g_strdup_printf ("DROP TABLE r%u_%u", seed, n - 2);

          if (!run (db, drop))
            return 3;
        }
    }
}

static GHashTable *
scan_keys (QStoreKV *store,
           guint    *n)
{
  GHashTable *keys = g_hash_table_new_full (g_bytes_hash, g_bytes_equal,
                                            (GDestroyNotify) g_bytes_unref, NULL);
  g_autoptr(QStoreBounds) all = qstore_bounds_new ();
  g_autoptr(QStoreIter) iter = NULL;
  g_autoptr(GError) error = NULL;

  *n = 0;
  iter = qstore_kv_iterate (store, all, &error);
  g_assert_no_error (error);
  while (qstore_iter_next (iter, &error))
    {
      g_hash_table_add (keys, qstore_iter_get_key (iter));
      (*n)++;
    }
  g_assert_no_error (error);
  return keys;
}

/* Every row of @data is stored under the key its primary key columns
 * give (as the catalog entry @entry describes them): rows and their keys
 * never come from two different definitions. */
static void
check_data_keys (QStoreKV           *data,
                 QStoreCatalogEntry *entry)
{
  GListModel *columns = qstore_catalog_entry_get_columns (entry);
  g_autoptr(GArray) pk = g_array_new (FALSE, FALSE, sizeof (guint));
  g_autoptr(GArray) collations = g_array_new (FALSE, FALSE, sizeof (QStoreCollation));
  g_autoptr(QStoreBounds) all = qstore_bounds_new ();
  g_autoptr(QStoreIter) iter = NULL;
  g_autoptr(GError) error = NULL;
  gboolean integer_key = FALSE;

  for (guint position = 1;; position++)
    {
      guint found = G_MAXUINT;

      for (guint i = 0; i < g_list_model_get_n_items (columns); i++)
        {
          g_autoptr(QStoreColumnInfo) column = g_list_model_get_item (columns, i);

          if (qstore_column_info_get_primary_key_position (column) == position)
            {
              QStoreCollation collation = qstore_column_info_get_collation (column);

              found = i;
              g_array_append_val (collations, collation);
              integer_key = g_ascii_strcasecmp (qstore_column_info_get_declared_type (column),
                                                "INTEGER") == 0;
            }
        }
      if (found == G_MAXUINT)
        break;
      g_array_append_val (pk, found);
    }
  /* Without a key, the rowid is the key, and only the row knows it. */
  if (pk->len == 0)
    return;
  integer_key = integer_key && pk->len == 1;

  iter = qstore_kv_iterate (data, all, &error);
  g_assert_no_error (error);
  while (qstore_iter_next (iter, &error))
    {
      g_autoptr(GBytes) key = qstore_iter_get_key (iter);
      g_autoptr(GBytes) value = qstore_iter_get_value (iter);
      g_autoptr(GVariant) row = qstore_codec_decode_row (value, &error);
      g_auto(GVariantBuilder) builder = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_TUPLE);
      g_autoptr(GBytes) expected = NULL;

      g_assert_no_error (error);
      if (integer_key)
        {
          g_autoptr(GVariant) boxed = g_variant_get_child_value (row, g_array_index (pk, guint, 0));
          g_autoptr(GVariant) id = g_variant_get_variant (boxed);
          g_autoptr(GByteArray) encoded = g_byte_array_new ();

          g_assert_true (g_variant_is_of_type (id, G_VARIANT_TYPE_INT64));
          qstore_codec_append_integer (encoded, g_variant_get_int64 (id), FALSE);
          expected = g_byte_array_free_to_bytes (g_steal_pointer (&encoded));
        }
      else
        {
          for (guint i = 0; i < pk->len; i++)
            {
              g_autoptr(GVariant) column = g_variant_get_child_value (row, g_array_index (pk, guint, i));

              g_variant_builder_add_value (&builder, column);
            }
          expected = qstore_codec_encode_key (g_variant_builder_end (&builder),
                                              (const QStoreCollation *) collations->data, NULL,
                                              pk->len, &error);
          g_assert_no_error (error);
        }
      if (!g_bytes_equal (expected, key))
        g_error ("After a crash, a row of table “%s” is stored under a key its primary key "
                 "does not give", qstore_catalog_entry_get_name (entry));
    }
  g_assert_no_error (error);
}

/* What a store must look like after any crash. */
static void
check_after_crash (const char *uri)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(QStoreDatabase) db = qstore_database_open (uri, QSTORE_OPEN_NONE, &error);
  QStoreProvider *provider;
  QStoreRehydrationResult *result;
  g_autoptr(GListModel) entries = NULL;
  g_autoptr(GHashTable) owned = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_auto(GStrv) stores = NULL;

  g_assert_no_error (error);
  provider = qstore_database_get_provider (db);
  result = qstore_database_get_rehydration_result (db);
  if (qstore_rehydration_result_get_n_errors (result) > 0)
    g_error ("After a crash, %s does not load: %s",
             qstore_rehydration_result_get_error_name (result, 0),
             qstore_rehydration_result_get_error_message (result, 0));

  entries = qstore_catalog_list_entries (provider, &error);
  g_assert_no_error (error);
  for (guint i = 0; i < g_list_model_get_n_items (entries); i++)
    {
      g_autoptr(QStoreCatalogEntry) entry = g_list_model_get_item (entries, i);
      const char *name = qstore_catalog_entry_get_name (entry);
      const char * const *index_names = qstore_catalog_entry_get_index_names (entry);
      const char * const *index_ddl = qstore_catalog_entry_get_index_ddl (entry);
      QStoreTable *table;
      g_auto(GStrv) indexes = NULL;
      g_autoptr(QStoreKV) data = NULL;
      g_autoptr(GHashTable) keys = NULL;
      g_autofree char *count_sql = NULL;
      g_autoptr(QStoreResult) count = NULL;
      g_autoptr(GVariant) counted = NULL;
      guint n_rows, n_indexes = 0;

      if (qstore_catalog_entry_get_kind (entry) != QSTORE_CATALOG_KEY_TABLE)
        continue;

      /* The table opens, with every index its entry names. */
      table = qstore_database_get_table (db, NULL, name);
      if (table == NULL)
        g_error ("After a crash, table “%s” of the catalog is not there", name);
      indexes = qstore_table_list_indexes (table);
      for (guint j = 0; index_names != NULL && index_names[j] != NULL; j++)
        {
          g_assert_true (g_strv_contains ((const char * const *) indexes, index_names[j]));
          n_indexes++;
        }
      g_assert_cmpuint (n_indexes, ==, g_strv_length (indexes));

      data = qstore_provider_get_store (provider, "main", name, &error);
      g_assert_no_error (error);
      keys = scan_keys (data, &n_rows);
      check_data_keys (data, entry);
      g_hash_table_add (owned, qstore_store_name_for_table ("main", name));

      /* Counts: the statistics and SQL agree with the rows. */
      g_assert_cmpint (qstore_table_get_row_count (table), ==, n_rows);
      count_sql = g_strdup_printf ("SELECT count(*) FROM \"%s\"", name);
      count = qstore_database_query (db, count_sql, NULL, &error);
      g_assert_no_error (error);
      counted = qstore_result_get_value (count, 0, 0);
      g_assert_cmpint (g_variant_get_int64 (counted), ==, n_rows);

      /* Every index entry points at a row, once; a full index has one
       * entry per row. */
      for (guint j = 0; indexes[j] != NULL; j++)
        {
          g_autoptr(QStoreKV) store = NULL;
          g_autoptr(QStoreBounds) all = qstore_bounds_new ();
          g_autoptr(QStoreIter) iter = NULL;
          g_autoptr(GHashTable) seen = g_hash_table_new_full (g_bytes_hash, g_bytes_equal,
                                                              (GDestroyNotify) g_bytes_unref,
                                                              NULL);
          gboolean partial = FALSE;
          guint n_entries = 0;

          for (guint k = 0; index_ddl != NULL && index_ddl[k] != NULL; k++)
            if (strstr (index_ddl[k], indexes[j]) != NULL && strstr (index_ddl[k], " WHERE ") != NULL)
              partial = TRUE;

          store = qstore_provider_get_index_store (provider, "main", name, indexes[j], &error);
          g_assert_no_error (error);
          g_hash_table_add (owned, qstore_store_name_for_index ("main", name, indexes[j]));
          iter = qstore_kv_iterate (store, all, &error);
          g_assert_no_error (error);
          while (qstore_iter_next (iter, &error))
            {
              gsize key_len, value_len;
              const guint8 *key = qstore_iter_peek_key (iter, &key_len);
              const guint8 *value = qstore_iter_peek_value (iter, &value_len);
              GBytes *data_key = qstore_iter_get_value (iter);

              if (!g_hash_table_contains (keys, data_key))
                g_error ("After a crash, index “%s” of “%s” points at a row that is not "
                         "there", indexes[j], name);
              g_assert_true (key_len > value_len &&
                             memcmp (key + key_len - value_len, value, value_len) == 0);
              g_assert_false (g_hash_table_contains (seen, data_key));
              g_hash_table_add (seen, data_key);
              n_entries++;
            }
          g_assert_no_error (error);
          if (!partial && n_entries != n_rows)
            g_error ("After a crash, index “%s” of “%s” has %u entries for %u rows",
                     indexes[j], name, n_entries, n_rows);
        }
    }

  /* No store holds entries of something the catalog no longer has. */
  stores = qstore_provider_list_stores (provider, &error);
  g_assert_no_error (error);
  for (guint i = 0; stores[i] != NULL; i++)
    {
      if (g_str_equal (stores[i], "__catalog__") || g_str_equal (stores[i], "__stats__"))
        continue;
      if (!g_hash_table_contains (owned, stores[i]))
        g_error ("After a crash, store “%s” holds entries no table of the catalog owns",
                 stores[i]);
    }

  qstore_database_close (db, &error);
  g_assert_no_error (error);
}

static guint
crash_iterations (void)
{
  const char *env = g_getenv ("QSTORE_CRASH_ITERATIONS");
  guint64 n;

  if (env != NULL && g_ascii_string_to_unsigned (env, 10, 1, 100000, &n, NULL))
    return n;
  return 20;
}

static void
test_crash (Fixture       *f,
            gconstpointer  data)
{
  g_autoptr(GRand) rand = g_rand_new_with_seed (g_test_rand_int ());
  guint iterations = crash_iterations ();

  if (!test_provider_persistent ())
    {
      g_test_skip ("a crash of a memory store leaves nothing to check");
      return;
    }
  test_close_database (&f->db);

  for (guint i = 0; i < iterations; i++)
    {
      g_autoptr(GError) error = NULL;
      g_autofree char *seed = g_strdup_printf ("%u", g_rand_int (rand));
      const char *argv[] = { self_path, "--crash-child", f->uri, seed, NULL };
      GPid pid;
      int out = -1, err = -1, status = 0;
      char ready;
      gulong delay = g_rand_int_range (rand, 0, 250000);

      g_spawn_async_with_pipes (NULL, (char **) argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD, NULL, NULL,
                                &pid, NULL, &out, &err, &error);
      g_assert_no_error (error);

      if (read (out, &ready, 1) != 1)
        {
          char message[4096] = "";
          gssize len = read (err, message, sizeof message - 1);

          message[MAX (len, 0)] = '\0';
          g_error ("The crash child never got ready: %s", message);
        }
      g_usleep (delay);
      kill (pid, SIGKILL);
      while (waitpid (pid, &status, 0) < 0 && errno == EINTR)
        ;
      g_spawn_close_pid (pid);
      if (!WIFSIGNALED (status))
        {
          char message[4096] = "";
          gssize len = read (err, message, sizeof message - 1);

          message[MAX (len, 0)] = '\0';
          g_error ("The crash child stopped before it was killed (status %d): %s",
                   status, message);
        }
      close (out);
      close (err);

      check_after_crash (f->uri);
    }
}

int
main (int    argc,
      char **argv)
{
  if (argc == 4 && g_str_equal (argv[1], "--crash-child"))
    return crash_child (argv[2], (guint) g_ascii_strtoull (argv[3], NULL, 10));

  self_path = argv[0];
  g_test_init (&argc, &argv, NULL);

#define ADD(path, func) \
  g_test_add (path, Fixture, NULL, fixture_setup, func, test_database_tear_down)

  ADD ("/alter/not-null", test_not_null);
  ADD ("/alter/default", test_default);
  ADD ("/alter/collate-unique", test_collate_unique);
  ADD ("/alter/collate-primary-key", test_collate_primary_key);
  ADD ("/alter/add-constraint", test_add_constraint);
  ADD ("/alter/drop-rename-constraint", test_drop_rename_constraint);
  ADD ("/alter/primary-key", test_primary_key);
  ADD ("/alter/primary-key-null", test_primary_key_null);
  ADD ("/alter/drop-column", test_drop_column);
  ADD ("/alter/statements", test_statements);
  ADD ("/collision/index-table", test_collision_index_table);
  ADD ("/collision/index-index", test_collision_index_index);
  ADD ("/collision/rename", test_collision_rename);
  ADD ("/collision/footprint-swap", test_collision_footprint_swap);
  ADD ("/collision/sibling-survives", test_sibling_survives);
  ADD ("/crash/ddl", test_crash);

  return g_test_run ();
}
