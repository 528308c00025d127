/* qstore-postgres-check.c: the postgres provider's own check
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "qstore-postgres-check.h"

/* What the rows must satisfy: each query counts the rows that do not.
 * The server keeps its own pages and indexes sound (amcheck, for those
 * who want to see); these are what only qstore knows. */
static const struct
{
  const char *sql;
  const char *problem;
} rules[] = {
  { "SELECT count(*) FROM @schema@.kv WHERE store_id NOT IN (SELECT id FROM @schema@.stores)",
    "entries belong to no store" },
  { "SELECT count(*) FROM @schema@.kv WHERE length (key) = 0",
    "entries have an empty key" },
};

/* Runs a count(*) of @sql on the schema @quoted. */
static gboolean
count (QStorePgConn  *conn,
       const char    *quoted,
       const char    *sql,
       gint64        *n,
       GError       **error)
{
  g_auto(GStrv) parts = g_strsplit (sql, "@schema@", -1);
  g_autofree char *text = g_strjoinv ((char *) quoted, parts);

  return qstore_pg_conn_query_int (conn, text, NULL, n, "checking the tables", error);
}

gboolean
qstore_pg_check (QStorePgDb         *db,
                 QStoreCheckReport  *report,
                 GError            **error)
{
  QStorePgConn *conn;
  char *escaped;
  g_autofree char *quoted = NULL;
  gboolean ok = TRUE;

  /* What is committed, not an open write transaction's. */
  if (!(conn = qstore_pg_db_lock_committed (db, error)))
    return FALSE;
  if (!qstore_pg_conn_check_open (conn, error))
    {
      qstore_pg_db_unlock_committed (db, conn);
      return FALSE;
    }
  escaped = PQescapeIdentifier (conn->pg, db->schema, strlen (db->schema));
  quoted = g_strdup (escaped ? escaped : "");
  PQfreemem (escaped);

  for (guint i = 0; i < G_N_ELEMENTS (rules) && ok; i++)
    {
      gint64 n;

      ok = count (conn, quoted, rules[i].sql, &n, error);
      if (ok && n != 0)
        {
          g_autofree char *problem = g_strdup_printf ("%" G_GINT64_FORMAT " %s", n,
                                                      rules[i].problem);

          qstore_check_report_add_problem (report, QSTORE_CHECK_SCOPE_FILE, db->schema, NULL,
                                           problem);
        }
    }
  if (ok)
    {
      gint64 n;

      ok = count (conn, quoted, "SELECT count(*) FROM @schema@.kv", &n, error);
      if (ok)
        qstore_check_report_add_checked (report, QSTORE_CHECK_SCOPE_FILE, db->schema, n);
    }
  qstore_pg_db_unlock_committed (db, conn);
  return ok;
}
