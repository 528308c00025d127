/* qstore-views.c: views kept in the catalog
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A view lives on the main connection, where SQLite keeps it; its CREATE
 * VIEW text is kept in the catalog so that the next open makes it again.
 */
#include "config.h"

#include "qstore-coordinator-private.h"
#include "qstore-error.h"
#include "qstore-i18n-private.h"
#include "qstore-sql-token-private.h"
#include "qstore-views-private.h"

static char *
view_sql (QStoreDatabase *self,
          const char     *name)
{
  g_autoptr(sqlite3_stmt) stmt = NULL;
  char *sql = NULL;

  if (sqlite3_prepare_v2 (self->db,
                          "SELECT sql FROM main.sqlite_master "
                          "WHERE type = 'view' AND name = ?1 COLLATE NOCASE",
                          -1, &stmt, NULL) != SQLITE_OK)
    return NULL;
  sqlite3_bind_text (stmt, 1, name, -1, SQLITE_TRANSIENT);
  if (sqlite3_step (stmt) == SQLITE_ROW && sqlite3_column_text (stmt, 0) != NULL)
    sql = g_strdup ((const char *) sqlite3_column_text (stmt, 0));
  return sql;
}

static void
drop_view_quietly (QStoreDatabase *self,
                   const char     *name)
{
  g_autofree char *quoted = qstore_sql_quote (name);
  g_autofree char *sql = g_strdup_printf ("DROP VIEW IF EXISTS main.%s", quoted);

  sqlite3_exec (self->db, sql, NULL, NULL, NULL);
}

gboolean
qstore_views_create (QStoreDatabase   *self,
                     QStoreStatement  *statement,
                     QStoreResult    **result,
                     GError          **error)
{
  const char *name = statement->name;
  sqlite3_stmt *stmt = statement->stmt;
  g_autofree char *before = view_sql (self, name);
  g_autofree char *sql = NULL;
  g_autoptr(GBytes) key = NULL;
  int rc;

  rc = sqlite3_step (stmt);
  if (rc != SQLITE_DONE)
    {
      qstore_database_set_sqlite_error (self, self->db, rc, error);
      return FALSE;
    }

  /* IF NOT EXISTS, and it does: its entry was written when it was made. */
  if (before != NULL)
    return TRUE;

  if (!(sql = view_sql (self, name)))
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_FAILED,
                   _("View “%s” was created but cannot be found"), name);
      return FALSE;
    }

  key = qstore_catalog_key_for_view ("main", name);
  qstore_coordinator_begin (self->coordinator);
  qstore_database_put_catalog (self, key, sql);
  if (!qstore_coordinator_commit (self->coordinator, error))
    {
      drop_view_quietly (self, name);
      return FALSE;
    }
  return TRUE;
}

gboolean
qstore_views_drop (QStoreDatabase   *self,
                   QStoreStatement  *statement,
                   QStoreResult    **result,
                   GError          **error)
{
  const char *name = statement->name;
  sqlite3_stmt *stmt = statement->stmt;
  g_autofree char *before = view_sql (self, name);
  g_autoptr(GBytes) key = qstore_catalog_key_for_view ("main", name);
  g_autoptr(GBytes) current = NULL;
  gsize key_len;
  const guint8 *key_data = g_bytes_get_data (key, &key_len);
  int rc;

  rc = sqlite3_step (stmt);
  if (rc != SQLITE_DONE)
    {
      qstore_database_set_sqlite_error (self, self->db, rc, error);
      return FALSE;
    }

  qstore_coordinator_begin (self->coordinator);
  current = qstore_coordinator_get (self->coordinator, self->catalog, key_data, key_len, NULL);
  if (current != NULL)
    qstore_coordinator_delete (self->coordinator, self->catalog, key_data, key_len);
  if (!qstore_coordinator_commit (self->coordinator, error))
    {
      /* The catalog still has it: so does the session. */
      if (before != NULL)
        sqlite3_exec (self->db, before, NULL, NULL, NULL);
      return FALSE;
    }
  return TRUE;
}

gboolean
qstore_views_sync (QStoreDatabase  *self,
                   GError         **error)
{
  g_autoptr(sqlite3_stmt) stmt = NULL;

  if (sqlite3_prepare_v2 (self->db,
                          "SELECT name, sql FROM main.sqlite_master WHERE type = 'view'",
                          -1, &stmt, NULL) != SQLITE_OK)
    {
      qstore_database_set_sqlite_error (self, self->db, sqlite3_errcode (self->db), error);
      return FALSE;
    }

  qstore_coordinator_begin (self->coordinator);
  while (sqlite3_step (stmt) == SQLITE_ROW)
    {
      const char *name = (const char *) sqlite3_column_text (stmt, 0);
      const char *sql = (const char *) sqlite3_column_text (stmt, 1);
      g_autoptr(GBytes) key = NULL;

      if (name == NULL || sql == NULL)
        continue;
      key = qstore_catalog_key_for_view ("main", name);
      qstore_database_put_catalog (self, key, sql);
    }
  return qstore_coordinator_commit (self->coordinator, error);
}
