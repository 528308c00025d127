/* qstore-sqlite-write.c: the sqlite provider's writes, on the writer's
 * main connection
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "qstore-fault-private.h"
#include "qstore-i18n-private.h"
#include "qstore-sqlite-write.h"

/* SQLite applies PRAGMA synchronous when the statement is prepared, not
 * when it runs, so it cannot be kept prepared: run it afresh, only when
 * the level changes. */
static gboolean
set_synchronous (QStoreSqliteDb        *self,
                 gboolean               full,
                 GError               **error)
{
  if (self->sync_full == full)
    return TRUE;
  if (!qstore_sqlite_conn_exec (self->main,
                                full ? "PRAGMA synchronous = FULL" : "PRAGMA synchronous = NORMAL",
                                "setting the durability", error))
    return FALSE;
  self->sync_full = full;
  return TRUE;
}

/* Makes the read transaction the writer's plain reads left open (see
 * qstore_sqlite_db_get()) the write transaction: it keeps the WAL read
 * lock rather than letting it go and taking it again. The writer lock
 * makes ours the only writes, so it sees the last commit and SQLite lets
 * it write; if not, or at another durability (which no transaction can
 * change), the caller begins afresh. */
static gboolean
upgrade_read (QStoreSqliteDb *self,
              gboolean        sync_full)
{
  QStoreSqliteConn *conn = self->main;

  if (!self->reading || self->sync_full != sync_full || sqlite3_get_autocommit (conn->db))
    return FALSE;
  if (!qstore_sqlite_conn_run (conn, QSTORE_SQLITE_STMT_TAKE_WRITE_LOCK,
                               "beginning a write transaction", NULL))
    return FALSE;
  self->reading = FALSE;
  return TRUE;
}

gboolean
qstore_sqlite_write_begin (QStoreSqliteDb        *self,
                           gboolean               sync_full,
                           GError               **error)
{
  QStoreSqliteConn *conn = self->main;
  sqlite3_stmt *stmt;
  gint64 version;
  int rc;

  if (!qstore_sqlite_conn_check_open (conn, error))
    return FALSE;
  if (!upgrade_read (self, sync_full))
    {
      qstore_sqlite_db_end_read (self);
      if (!set_synchronous (self, sync_full, error) ||
          !qstore_sqlite_conn_run (conn, QSTORE_SQLITE_STMT_BEGIN_IMMEDIATE,
                                   "beginning a write transaction", error))
        return FALSE;
    }

  /* Another writer cannot have come and gone while we hold the writer
   * lock, but the file is checked anyway, cheaply: after another writer
   * the ids we know may be stale (it may have dropped or renamed stores). */
  if (!(stmt = qstore_sqlite_conn_stmt (conn, QSTORE_SQLITE_STMT_DATA_VERSION, error)))
    goto fail;
  rc = sqlite3_step (stmt);
  if (rc != SQLITE_ROW)
    {
      qstore_sqlite_conn_set_error (conn, rc, "beginning a write transaction", error);
      sqlite3_reset (stmt);
      goto fail;
    }
  version = sqlite3_column_int64 (stmt, 0);
  sqlite3_reset (stmt);
  if (version != self->data_version)
    {
      qstore_sqlite_db_forget_stores (self);
      /* Nor can what it did to big_values be known. */
      self->has_big = TRUE;
      self->data_version = version;
    }
  return TRUE;

fail:
  qstore_sqlite_conn_run (conn, QSTORE_SQLITE_STMT_ROLLBACK, "rolling back", NULL);
  return FALSE;
}

gboolean
qstore_sqlite_write_end (QStoreSqliteDb        *self,
                         gboolean               ok,
                         GError               **error)
{
  QStoreSqliteConn *conn = self->main;

  if (ok)
    ok = qstore_sqlite_conn_run (conn, QSTORE_SQLITE_STMT_COMMIT, "committing", error);
  if (!ok)
    {
      /* Some failures roll the transaction back by themselves. */
      if (!sqlite3_get_autocommit (conn->db))
        qstore_sqlite_conn_run (conn, QSTORE_SQLITE_STMT_ROLLBACK, "rolling back", NULL);
      /* Rows of stores created in the transaction are gone with it. */
      qstore_sqlite_db_forget_stores (self);
    }
  return ok;
}

/* Runs @stmt, bound by the caller, to its end. */
static gboolean
step_done (QStoreSqliteConn  *conn,
           sqlite3_stmt      *stmt,
           const char        *doing,
           GError           **error)
{
  int rc = sqlite3_step (stmt);

  sqlite3_reset (stmt);
  if (G_LIKELY (rc == SQLITE_DONE))
    return TRUE;
  qstore_sqlite_conn_set_error (conn, rc, doing, error);
  return FALSE;
}

/* Removes the big value the entry (@id, @key) refers to, if any: before
 * the entry is replaced or deleted. Only when big values exist. */
static gboolean
drop_big_value (QStoreSqliteDb       *self,
                gint64                id,
                const QStoreWriteOp  *op,
                GError              **error)
{
  sqlite3_stmt *stmt;

  if (!self->has_big)
    return TRUE;
  if (!(stmt = qstore_sqlite_conn_stmt (self->main, QSTORE_SQLITE_STMT_DELETE_BIG, error)))
    return FALSE;
  sqlite3_bind_int64 (stmt, 1, id);
  sqlite3_bind_blob64 (stmt, 2, op->key, op->key_len, SQLITE_STATIC);
  return step_done (self->main, stmt, "replacing a big value", error);
}

static gboolean
apply_put (QStoreSqliteDb       *self,
           gint64                id,
           const QStoreWriteOp  *op,
           GError              **error)
{
  QStoreSqliteConn *conn = self->main;
  const guint8 *value = op->value != NULL ? op->value : (const guint8 *) "";
  sqlite3_stmt *stmt;

  if (!drop_big_value (self, id, op, error) ||
      !(stmt = qstore_sqlite_conn_stmt (conn, QSTORE_SQLITE_STMT_PUT, error)))
    return FALSE;

  sqlite3_bind_int64 (stmt, 1, id);
  sqlite3_bind_blob64 (stmt, 2, op->key, op->key_len, SQLITE_STATIC);
  /* Too big for the entry's page: the value goes to big_values, so that
   * lookups passing this row do not read it. */
  if (G_UNLIKELY (op->key_len + op->value_len > self->inline_max))
    {
      sqlite3_stmt *big = qstore_sqlite_conn_stmt (conn, QSTORE_SQLITE_STMT_PUT_BIG, error);

      if (big == NULL)
        return FALSE;
      sqlite3_bind_blob64 (big, 1, value, op->value_len, SQLITE_STATIC);
      if (!step_done (conn, big, "writing a big value", error))
        return FALSE;
      self->has_big = TRUE;
      sqlite3_bind_int64 (stmt, 3, sqlite3_last_insert_rowid (conn->db));
    }
  else
    sqlite3_bind_blob64 (stmt, 3, value, op->value_len, SQLITE_STATIC);
  return step_done (conn, stmt, "writing a key", error);
}

static gboolean
apply_delete (QStoreSqliteDb       *self,
              gint64                id,
              const QStoreWriteOp  *op,
              GError              **error)
{
  sqlite3_stmt *stmt;

  if (!drop_big_value (self, id, op, error) ||
      !(stmt = qstore_sqlite_conn_stmt (self->main, QSTORE_SQLITE_STMT_DELETE, error)))
    return FALSE;
  sqlite3_bind_int64 (stmt, 1, id);
  sqlite3_bind_blob64 (stmt, 2, op->key, op->key_len, SQLITE_STATIC);
  return step_done (self->main, stmt, "deleting a key", error);
}

gboolean
qstore_sqlite_write_apply (QStoreSqliteDb        *self,
                           const QStoreWriteOp   *ops,
                           gsize                  n_ops,
                           GError               **error)
{
  QStoreKV *store = NULL;
  gint64 id = -1;

  for (gsize i = 0; i < n_ops; i++)
    {
      const QStoreWriteOp *op = &ops[i];
      gboolean is_put = op->kind == QSTORE_WRITE_OP_PUT;

      if (!_qstore_fault_check (QSTORE_FAULT_WRITE_OP, error))
        return FALSE;

      /* Ops come grouped by store: resolve a store once per run, and once
       * more when a put follows deletes on a store that has no row yet. */
      if (op->store != store || (id < 0 && is_put))
        {
          store = op->store;
          if (!qstore_sqlite_db_resolve_store (self, qstore_kv_get_name (store), is_put,
                                               &id, error))
            return FALSE;
        }

      if (is_put)
        {
          if (!apply_put (self, id, op, error))
            return FALSE;
        }
      /* Nothing to delete in a store that was never written. */
      else if (id >= 0 && !apply_delete (self, id, op, error))
        return FALSE;
    }
  return TRUE;
}

static gboolean
restructure_stores (QStoreSqliteDb        *self,
                    const char * const    *drop,
                    const char * const    *rename_from,
                    const char * const    *rename_to,
                    GError               **error)
{
  QStoreSqliteConn *conn = self->main;

  for (guint i = 0; drop != NULL && drop[i] != NULL; i++)
    {
      if ((self->has_big &&
           !qstore_sqlite_conn_run_named (conn, QSTORE_SQLITE_STMT_DROP_BIG, drop[i],
                                          "dropping a store", error)) ||
          !qstore_sqlite_conn_run_named (conn, QSTORE_SQLITE_STMT_DROP_ENTRIES, drop[i],
                                         "dropping a store", error) ||
          !qstore_sqlite_conn_run_named (conn, QSTORE_SQLITE_STMT_DROP_STORE, drop[i],
                                         "dropping a store", error))
        return FALSE;
    }

  for (guint i = 0; rename_from != NULL && rename_from[i] != NULL; i++)
    {
      const char *from = rename_from[i];
      const char *to = rename_to[i];
      sqlite3_stmt *stmt;
      int rc;

      g_assert (to != NULL);
      if (strcmp (from, to) == 0)
        continue;

      if (!(stmt = qstore_sqlite_conn_stmt (conn, QSTORE_SQLITE_STMT_HAS_ENTRIES, error)))
        return FALSE;
      sqlite3_bind_text (stmt, 1, to, -1, SQLITE_STATIC);
      rc = sqlite3_step (stmt);
      if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        qstore_sqlite_conn_set_error (conn, rc, "renaming a store", error);
      sqlite3_reset (stmt);
      if (rc == SQLITE_ROW)
        {
          g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_EXISTS,
                       _("Cannot rename store “%s” to “%s” in “%s”: “%s” already holds "
                       "entries; drop it first"), from, to, self->path, to);
          return FALSE;
        }
      if (rc != SQLITE_DONE)
        return FALSE;

      /* A leftover row of an emptied destination would clash on the name. */
      if (!qstore_sqlite_conn_run_named (conn, QSTORE_SQLITE_STMT_DROP_STORE, to,
                                         "renaming a store", error))
        return FALSE;
      if (!(stmt = qstore_sqlite_conn_stmt (conn, QSTORE_SQLITE_STMT_RENAME_STORE, error)))
        return FALSE;
      sqlite3_bind_text (stmt, 1, from, -1, SQLITE_STATIC);
      sqlite3_bind_text (stmt, 2, to, -1, SQLITE_STATIC);
      if (!qstore_sqlite_conn_run_stmt (conn, stmt, "renaming a store", error))
        return FALSE;
    }
  return TRUE;
}

gboolean
qstore_sqlite_write_restructure (QStoreSqliteDb        *self,
                                 const char * const    *drop,
                                 const char * const    *rename_from,
                                 const char * const    *rename_to,
                                 GError               **error)
{
  gboolean ok = restructure_stores (self, drop, rename_from, rename_to, error);

  /* Names now map to other ids: what later writes resolve must come from
   * the transaction, not from before it. */
  qstore_sqlite_db_forget_stores (self);
  return ok;
}
