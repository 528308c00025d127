/* test-pg-util.h: what the PostgreSQL tests ask the server beside qstore
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <glib.h>
#include <libpq-fe.h>

/* The integer the one-row, one-column query @sql answers on @pg. */
static inline gint64
test_pg_int (PGconn     *pg,
             const char *sql)
{
  PGresult *res = PQexec (pg, sql);
  gint64 n;

  g_assert_cmpint (PQresultStatus (res), ==, PGRES_TUPLES_OK);
  g_assert_cmpint (PQntuples (res), ==, 1);
  n = g_ascii_strtoll (PQgetvalue (res, 0, 0), NULL, 10);
  PQclear (res);
  return n;
}
