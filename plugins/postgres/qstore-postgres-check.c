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
count (QStorePgDb  *db,
       const char  *quoted,
       const char  *sql,
       gint64      *n,
       GError     **error)
{
  g_auto(GStrv) parts = g_strsplit (sql, "@schema@", -1);
  g_autofree char *text = g_strjoinv ((char *) quoted, parts);

  return qstore_pg_conn_query_int (db->main, text, NULL, n, "checking the tables", error);
}

gboolean
qstore_pg_check (QStorePgDb         *db,
                 QStoreCheckReport  *report,
                 GError            **error)
{
  char *escaped;
  g_autofree char *quoted = NULL;
  gboolean ok = TRUE;

  g_mutex_lock (&db->main->lock);
  if (!qstore_pg_conn_check_open (db->main, error))
    {
      g_mutex_unlock (&db->main->lock);
      return FALSE;
    }
  escaped = PQescapeIdentifier (db->main->pg, db->schema, strlen (db->schema));
  quoted = g_strdup (escaped ? escaped : "");
  PQfreemem (escaped);

  for (guint i = 0; i < G_N_ELEMENTS (rules) && ok; i++)
    {
      gint64 n;

      ok = count (db, quoted, rules[i].sql, &n, error);
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

      ok = count (db, quoted, "SELECT count(*) FROM @schema@.kv", &n, error);
      if (ok)
        qstore_check_report_add_checked (report, QSTORE_CHECK_SCOPE_FILE, db->schema, n);
    }
  g_mutex_unlock (&db->main->lock);
  return ok;
}
