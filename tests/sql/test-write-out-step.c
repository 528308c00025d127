/* test-write-out-step.c: `PRAGMA qstore.write_out_step`
 *
 * The step at which a transaction's buffer goes into the provider's write
 * transaction, as SQL reads and sets it: per open database, never
 * stored; a bad value is refused and changes nothing; a small step makes
 * a large transaction write out (lmdb, sqlite) while it reads, rolls back
 * and commits as with everything in memory. On memory, which has no write
 * transactions, the step reads back and nothing is written out.
 *
 * Run with QSTORE_TEST_PROVIDER set to a provider name.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include <qstore.h>

#include "qstore-coordinator-private.h"
#include "qstore-test-util.h"

#define DEFAULT_STEP (64 * 1024 * 1024)
#define SMALL_STEP   (64 * 1024)
/* Rows per INSERT, and statements of the large transaction. */
#define STATEMENT_ROWS 2000
#define N_STATEMENTS   20

#define SETTING "qstore.write_out_step"

static void
set_up (TestDatabase  *t,
        gconstpointer  data)
{
  test_database_set_up (t, "qstore-write-out-XXXXXX");
  test_exec (t->db, "CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)");
}

static gboolean
writes_out (QStoreDatabase *db)
{
  return (qstore_provider_get_capabilities (qstore_database_get_provider (db)) &
          QSTORE_CAPABILITY_WRITE_TXN) != 0;
}

static guint
n_spills (QStoreDatabase *db)
{
  return qstore_coordinator_test_get_n_spills (qstore_database_get_coordinator (db));
}

/* Rows @first to @first + STATEMENT_ROWS - 1, in one statement. */
static void
insert_rows (QStoreDatabase *db,
             gint64          first)
{
  g_autofree char *sql = NULL;

  sql = g_strdup_printf ("INSERT INTO t WITH RECURSIVE s(x) AS (SELECT %" G_GINT64_FORMAT
                         " UNION ALL SELECT x + 1 FROM s WHERE x < %" G_GINT64_FORMAT ") "
                         "SELECT x, 'a row value of about forty bytes, or so' FROM s",
                         first, first + STATEMENT_ROWS - 1);
  test_exec (db, sql);
}

static void
append_text (GString  *out,
             GVariant *value)
{
  g_assert_true (g_variant_is_of_type (value, G_VARIANT_TYPE_STRING));
  g_string_append (out, g_variant_get_string (value, NULL));
}

/* Rows of t committed, read past the database and its transaction. */
static guint
committed_rows (QStoreDatabase *db)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(QStoreKV) store = NULL;

  store = qstore_provider_get_store (qstore_database_get_provider (db), "main", "t", &error);
  g_assert_no_error (error);
  return test_kv_count (store);
}

/* The setting reads back what was set, in both of SQLite's forms, inside
 * a transaction too; it belongs to the open database and is not stored. */
static void
test_round_trip (TestDatabase  *t,
                 gconstpointer  data)
{
  g_assert_cmpint (test_query_int (t->db, "PRAGMA " SETTING), ==, DEFAULT_STEP);
  test_exec (t->db, "PRAGMA " SETTING " = 1048576");
  g_assert_cmpint (test_query_int (t->db, "PRAGMA " SETTING), ==, 1048576);
  g_assert_cmpuint (qstore_coordinator_get_write_out_step (qstore_database_get_coordinator (t->db)),
                    ==, 1048576);
  test_exec (t->db, "PRAGMA " SETTING "(65536)");
  g_assert_cmpint (test_query_int (t->db, "pragma QSTORE.Write_Out_Step"), ==, 65536);

  test_exec (t->db, "BEGIN");
  test_exec (t->db, "INSERT INTO t VALUES (1, 'x')");
  test_exec (t->db, "PRAGMA " SETTING " = 4194304");
  g_assert_cmpint (test_query_int (t->db, "PRAGMA " SETTING), ==, 4194304);
  test_exec (t->db, "COMMIT");
  g_assert_cmpint (test_query_int (t->db, "PRAGMA " SETTING), ==, 4194304);

  test_database_reopen (t);
  g_assert_cmpint (test_query_int (t->db, "PRAGMA " SETTING), ==, DEFAULT_STEP);
  if (test_provider_persistent ())
    g_assert_cmpint (test_query_int (t->db, "SELECT count(*) FROM t"), ==, 1);
}

/* Each bad value is refused with the setting's name and what to give,
 * and leaves the step as it was. */
static void
test_bad_values (TestDatabase  *t,
                 gconstpointer  data)
{
  const struct
  {
    const char *value;
    const char *says;
  } bad[] = {
    { "-1", "in digits" },
    { "-65536", "in digits" },
    { "1.5", "in digits" },
    { "1e6", "in digits" },
    { "lots", "in digits" },
    { "'4194304'", "in digits" },
    { "0", "must be from 65536 bytes" },
    { "65535", "must be from 65536 bytes" },
    { "1099511627777", "to 1099511627776 bytes" },
    { "99999999999999999999999", "to 1099511627776 bytes" },
  };

  test_exec (t->db, "PRAGMA " SETTING " = 1048576");
  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autofree char *sql = g_strdup_printf ("PRAGMA " SETTING " = %s", bad[i].value);
      g_autofree char *message = test_exec_error (t->db, sql, QSTORE_ERROR_INVALID_ARGUMENT);

      g_test_message ("%s: %s", sql, message);
      g_assert_nonnull (strstr (message, "PRAGMA " SETTING));
      g_assert_nonnull (strstr (message, bad[i].says));
      g_assert_cmpint (test_query_int (t->db, "PRAGMA " SETTING), ==, 1048576);
    }
  test_exec_fails (t->db, "PRAGMA " SETTING " = ", QSTORE_ERROR_INVALID_ARGUMENT, "in digits");
  test_exec_fails (t->db, "PRAGMA " SETTING " = 65536 65536", QSTORE_ERROR_INVALID_ARGUMENT,
                   "in digits");
  g_assert_cmpint (test_query_int (t->db, "PRAGMA " SETTING), ==, 1048576);
  /* The largest the range takes. */
  test_exec (t->db, "PRAGMA " SETTING " = 1099511627776");
  g_assert_cmpint (test_query_int (t->db, "PRAGMA " SETTING), ==, G_GINT64_CONSTANT (1) << 40);
}

/* With the step at its smallest a transaction of some megabytes writes
 * out as it goes: what went out reads back inside it (a delete too),
 * what never went out reads committed data, nobody else sees any of it,
 * and a rollback leaves nothing. The same transaction under the default
 * step keeps everything in memory. */
static void
test_writes_out (TestDatabase  *t,
                 gconstpointer  data)
{
  const gint64 n = (gint64) STATEMENT_ROWS * N_STATEMENTS;
  QStoreCoordinator *coordinator = qstore_database_get_coordinator (t->db);
  g_autofree char *value = NULL;
  guint spills;

  test_exec (t->db, "INSERT INTO t VALUES (900000, 'committed'), (900001, 'deleted later')");

  /* The default step holds it all. */
  test_exec (t->db, "BEGIN");
  for (guint i = 0; i < N_STATEMENTS; i++)
    insert_rows (t->db, (gint64) i * STATEMENT_ROWS);
  g_assert_cmpuint (n_spills (t->db), ==, 0);
  g_assert_cmpuint (qstore_coordinator_test_get_buffer_peak (coordinator), >, 2 * 1024 * 1024);
  test_exec (t->db, "ROLLBACK");

  test_exec (t->db, "PRAGMA " SETTING " = 65536");
  test_exec (t->db, "BEGIN");
  test_exec (t->db, "DELETE FROM t WHERE id = 900001");
  for (guint i = 0; i < N_STATEMENTS; i++)
    insert_rows (t->db, (gint64) i * STATEMENT_ROWS);
  spills = n_spills (t->db);
  if (!writes_out (t->db))
    {
      g_assert_cmpuint (spills, ==, 0);
      test_exec (t->db, "ROLLBACK");
      g_assert_cmpint (test_query_int (t->db, "SELECT count(*) FROM t"), ==, 2);
      return;
    }
  /* A write-out after each statement: each buffers more than the step. */
  g_assert_cmpuint (spills, >=, N_STATEMENTS);
  /* About a statement's writes, give or take the arena's last block. */
  g_assert_cmpuint (qstore_coordinator_test_get_buffer_peak (coordinator), <, 1024 * 1024);

  value = test_query_text (t->db, "SELECT v FROM t WHERE id = 0", append_text);
  g_assert_cmpstr (value, ==, "a row value of about forty bytes, or so\n");
  g_clear_pointer (&value, g_free);
  g_assert_cmpint (test_query_int (t->db, "SELECT count(*) FROM t WHERE id = 900001"), ==, 0);
  value = test_query_text (t->db, "SELECT v FROM t WHERE id = 900000", append_text);
  g_assert_cmpstr (value, ==, "committed\n");
  g_assert_cmpint (test_query_int (t->db, "SELECT count(*) FROM t"), ==, n + 1);
  g_assert_cmpint (test_query_int (t->db, "SELECT max(id) FROM t WHERE id < 900000"), ==, n - 1);
  g_assert_cmpuint (committed_rows (t->db), ==, 2);

  test_exec (t->db, "ROLLBACK");
  g_assert_cmpuint (committed_rows (t->db), ==, 2);
  g_assert_cmpint (test_query_int (t->db, "SELECT count(*) FROM t"), ==, 2);

  /* The write transaction is over: the next commits, and stays. */
  test_exec (t->db, "BEGIN");
  for (guint i = 0; i < 4; i++)
    insert_rows (t->db, (gint64) i * STATEMENT_ROWS);
  g_assert_cmpuint (n_spills (t->db), >, spills);
  test_exec (t->db, "COMMIT");
  g_assert_cmpuint (committed_rows (t->db), ==, 4 * STATEMENT_ROWS + 2);
  test_database_reopen (t);
  g_assert_cmpint (test_query_int (t->db, "SELECT count(*) FROM t"), ==, 4 * STATEMENT_ROWS + 2);
}

int
main (int   argc,
      char *argv[])
{
  g_autofree char *prefix = NULL;

  g_test_init (&argc, &argv, NULL);
  prefix = g_strdup_printf ("/write-out-step/%s", test_provider_spec ());

#define ADD(name, func) G_STMT_START { \
    g_autofree char *path_ = g_strconcat (prefix, "/", name, NULL); \
    g_test_add (path_, TestDatabase, NULL, set_up, func, test_database_tear_down); \
  } G_STMT_END
  ADD ("round-trip", test_round_trip);
  ADD ("bad-values", test_bad_values);
  ADD ("writes-out", test_writes_out);
#undef ADD

  return g_test_run ();
}
