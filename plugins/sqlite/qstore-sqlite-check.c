/* qstore-sqlite-check.c: what can be checked of a store file
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "qstore-sqlite-check.h"
#include "qstore-sqlite-schema.h"

/* SQLite lists at most this many problems. */
#define MAX_PROBLEMS 100

/* Rules of qstore's layout that SQLite does not enforce: each counts the
 * rows breaking it, and the problem says how many (an SQL printf format).
 * The last ones are about big_values, which format 1 files lack. */
static const struct
{
  const char *sql;
  const char *problem;
} rules[] = {
  { "SELECT count(*) FROM kv WHERE store_id NOT IN (SELECT id FROM stores)",
    "%d entries belong to no store" },
  { "SELECT count(*) FROM kv WHERE typeof(key) != 'blob' OR length(key) = 0",
    "%d entries have an empty key or one that is not bytes" },
  { "SELECT count(*) FROM kv WHERE typeof(value) NOT IN ('blob', 'integer')",
    "%d entries have a value that is neither bytes nor a big value" },
#define FIRST_BIG_VALUES_RULE 3
  { "SELECT count(*) FROM kv WHERE typeof(value) = 'integer' "
    "AND value NOT IN (SELECT id FROM big_values)",
    "%d entries refer to big values that are missing" },
  { "SELECT count(*) - count(DISTINCT value) FROM kv WHERE typeof(value) = 'integer'",
    "%d entries refer to a big value another entry refers to" },
  { "SELECT count(*) FROM big_values "
    "WHERE id NOT IN (SELECT value FROM kv WHERE typeof(value) = 'integer')",
    "%d big values belong to no entry" },
};

/* Runs @sql, handing each row's first column, as text, to @report as a
 * problem unless it is @fine. */
static gboolean
collect (QStoreSqliteConn   *conn,
         const char         *sql,
         const char         *fine,
         QStoreCheckReport  *report,
         GError            **error)
{
  sqlite3_stmt *stmt = NULL;
  int rc;

  rc = sqlite3_prepare_v2 (conn->db, sql, -1, &stmt, NULL);
  while (rc == SQLITE_OK && (rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      const char *text = (const char *) sqlite3_column_text (stmt, 0);

      if (text != NULL && g_strcmp0 (text, fine) != 0)
        qstore_check_report_add_problem (report, QSTORE_CHECK_SCOPE_FILE, conn->path, NULL,
                                         text);
      rc = SQLITE_OK;
    }
  sqlite3_finalize (stmt);
  if (rc != SQLITE_DONE && rc != SQLITE_OK)
    {
      /* Damage that stops SQLite's own check is a finding too. */
      if (qstore_sqlite_error_code_for (rc) == QSTORE_ERROR_CORRUPT)
        {
          qstore_check_report_add_problem (report, QSTORE_CHECK_SCOPE_FILE, conn->path, NULL,
                                           sqlite3_errmsg (conn->db));
          return TRUE;
        }
      qstore_sqlite_conn_set_error (conn, rc, "checking the file", error);
      return FALSE;
    }
  return TRUE;
}

static gboolean
check_rules (QStoreSqliteConn   *conn,
             QStoreCheckReport  *report,
             GError            **error)
{
  gint64 have_big_values = 0;
  guint n_rules = FIRST_BIG_VALUES_RULE;

  if (!qstore_sqlite_query_int (conn, "SELECT count(*) FROM sqlite_master "
                                "WHERE type = 'table' AND name = 'big_values'",
                                &have_big_values, error))
    return FALSE;
  if (have_big_values)
    n_rules = G_N_ELEMENTS (rules);

  for (guint i = 0; i < n_rules; i++)
    {
      g_autofree char *sql = g_strdup_printf ("SELECT printf ('%s', n) FROM (SELECT (%s) AS n) "
                                              "WHERE n > 0", rules[i].problem, rules[i].sql);

      if (!collect (conn, sql, NULL, report, error))
        return FALSE;
    }
  return TRUE;
}

gboolean
qstore_sqlite_check (QStoreSqliteDb     *db,
                     QStoreCheckReport  *report,
                     GError            **error)
{
  g_autoptr(QStoreSqliteConn) conn = NULL;
  g_autofree char *integrity = g_strdup_printf ("PRAGMA integrity_check (%d)", MAX_PROBLEMS);
  gint64 pages = 0;
  gboolean ok;

  /* One read transaction: the check sees one state of the file. */
  if (!(conn = qstore_sqlite_db_acquire_reader (db, TRUE, error)))
    return FALSE;

  g_mutex_lock (&conn->lock);
  ok = qstore_sqlite_conn_check_open (conn, error) &&
       collect (conn, integrity, "ok", report, error);
  /* qstore's rules only mean something in a file SQLite can read. */
  if (ok && qstore_check_report_is_clean (report))
    ok = check_rules (conn, report, error);
  if (ok)
    {
      sqlite3_stmt *stmt = NULL;

      if (sqlite3_prepare_v2 (conn->db, "PRAGMA page_count", -1, &stmt, NULL) == SQLITE_OK &&
          sqlite3_step (stmt) == SQLITE_ROW)
        pages = sqlite3_column_int64 (stmt, 0);
      sqlite3_finalize (stmt);
      qstore_check_report_add_checked (report, QSTORE_CHECK_SCOPE_FILE, conn->path, pages);
    }
  g_mutex_unlock (&conn->lock);

  qstore_sqlite_db_release_reader (db, conn);
  return ok;
}
