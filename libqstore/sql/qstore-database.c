/* qstore-database.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "qstore-affinity-private.h"
#include "qstore-catalog-private.h"
#include "qstore-coordinator-private.h"
#include "qstore-ddl-private.h"
#include "qstore-error.h"
#include "qstore-mview-private.h"
#include "qstore-params-private.h"
#include "qstore-result-private.h"
#include "qstore-vtab-private.h"

/**
 * QStoreDatabase:
 *
 * A store opened as an SQL database: SQLite's SQL over tables whose rows
 * live in the store's provider.
 *
 * The database owns an in-memory SQLite connection where every table of
 * the catalog is a virtual table of the `qstore` module. SQL works as in
 * SQLite, with these differences:
 *
 * - DDL is qstore's: `CREATE TABLE` (not TEMP), `CREATE [UNIQUE] INDEX`
 *   (with COLLATE, DESC and WHERE), `DROP TABLE`, `DROP INDEX` and
 *   `ALTER TABLE` (`RENAME TO`, `ADD COLUMN`, `RENAME COLUMN`, `DROP
 *   COLUMN`) change the store and its catalog, which is read back on the
 *   next open (see qstore_database_get_rehydration_result()). SQLite
 *   validates each statement exactly as it would for an ordinary table.
 *   `CREATE TEMP TABLE` makes an ordinary SQLite table that lives as long
 *   as the database object.
 * - `ALTER TABLE` also takes the arms SQLite lacks: `ALTER [COLUMN] c SET
 *   NOT NULL | DROP NOT NULL | SET DEFAULT x | DROP DEFAULT | SET COLLATE
 *   x`, `ADD CONSTRAINT name UNIQUE (…) | CHECK (…) | FOREIGN KEY …`,
 *   `DROP CONSTRAINT name`, `RENAME CONSTRAINT a TO b` and `ALTER PRIMARY
 *   KEY (columns)`. Existing rows are checked first; an ALTER that is
 *   refused leaves the table and the catalog as they were. `DROP COLUMN`
 *   drops the indexes and UNIQUE constraints that use the column with it,
 *   where SQLite refuses.
 * - `CREATE VIEW` and `DROP VIEW` keep views in the catalog too; `CREATE
 *   TEMP VIEW` makes one that lives as long as the database object. A
 *   view over a table that is dropped stays defined, as in SQLite.
 * - `CREATE MATERIALIZED VIEW [IF NOT EXISTS] name [(columns)] AS SELECT
 *   …`, `DROP MATERIALIZED VIEW [IF EXISTS] name` and `REFRESH
 *   MATERIALIZED VIEW name`: a view whose rows are stored and kept up to
 *   date in the transactions that change what it reads (see
 *   [class@MaterializedView] and
 *   qstore_database_list_materialized_views()). It is read like a table
 *   and cannot be written, altered or indexed. `PRAGMA
 *   materialized_view_rebuild_row_threshold [= rows]` reads or sets the
 *   size above which a view that must be computed again in full is
 *   refused.
 * - A DDL statement inside an open transaction first commits it
 *   ("DDL-commit"), then runs on its own; the transaction then goes on as a
 *   new one, so savepoints made before it are gone.
 * - Refused, with what to use instead: UPSERT (`INSERT … ON CONFLICT …
 *   DO`: use `INSERT OR REPLACE` or `INSERT OR IGNORE`), `RETURNING` on
 *   qstore tables (select the rows in a statement of its own), triggers on
 *   qstore tables, virtual tables of other modules (make them TEMP),
 *   `CREATE TABLE … AS SELECT`, STRICT tables and generated columns.
 * - A DEFAULT applies to the columns an INSERT leaves out of its column
 *   list (or all, for `DEFAULT VALUES`); an INSERT made by a TEMP trigger
 *   into a qstore table gets NULL for the columns it leaves out.
 *
 * Outside a transaction each statement commits on its own; `BEGIN`,
 * `COMMIT`, `ROLLBACK`, `SAVEPOINT`, `RELEASE` and `ROLLBACK TO` work as in
 * SQLite, across every table at once (see [class@Coordinator]).
 *
 * A database is used from one thread at a time.
 */

G_DEFINE_FINAL_TYPE (QStoreDatabase, qstore_database, G_TYPE_OBJECT)

#define CLEAN_SHUTDOWN_META "clean_shutdown"

static void
release_read_snapshot (QStoreDatabase *self)
{
  if (self->read_snapshot != NULL)
    qstore_coordinator_release_snapshot (self->coordinator, g_steal_pointer (&self->read_snapshot));
}

static void
teardown (QStoreDatabase *self)
{
  release_read_snapshot (self);
  /* Views hold statements of the main connection. */
  g_clear_pointer (&self->mviews, qstore_mviews_free);
  if (self->db != NULL)
    {
      /* Virtual tables let go of their entries here. */
      sqlite3_close_v2 (self->db);
      self->db = NULL;
    }
  g_clear_pointer (&self->tables, g_hash_table_unref);
  if (self->scratch != NULL)
    {
      sqlite3_close_v2 (self->scratch);
      self->scratch = NULL;
    }
  if (self->coordinator != NULL && qstore_coordinator_in_transaction (self->coordinator))
    qstore_coordinator_rollback (self->coordinator);
  g_clear_object (&self->catalog);
  g_clear_object (&self->coordinator);
  if (self->provider != NULL)
    {
      qstore_provider_close_all (self->provider);
      g_clear_object (&self->provider);
    }
  g_clear_pointer (&self->insert_shape, qstore_insert_shape_free);
  self->closed = TRUE;
}

static void
qstore_database_dispose (GObject *object)
{
  QStoreDatabase *self = QSTORE_DATABASE (object);

  if (!self->closed)
    teardown (self);

  G_OBJECT_CLASS (qstore_database_parent_class)->dispose (object);
}

static void
qstore_database_finalize (GObject *object)
{
  QStoreDatabase *self = QSTORE_DATABASE (object);

  g_clear_error (&self->callback_error);
  g_clear_object (&self->rehydration);
  g_clear_pointer (&self->clean_shutdown, g_free);

  G_OBJECT_CLASS (qstore_database_parent_class)->finalize (object);
}

static void
qstore_database_class_init (QStoreDatabaseClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = qstore_database_dispose;
  object_class->finalize = qstore_database_finalize;
}

static void
qstore_database_init (QStoreDatabase *self)
{
  self->tables = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                        (GDestroyNotify) qstore_sql_table_unref);
}

/* Errors */

static QStoreError
error_code_for_sqlite (int         rc,
                       const char *message)
{
  switch (rc & 0xff)
    {
    case SQLITE_CONSTRAINT:
      return QSTORE_ERROR_CONSTRAINT;
    case SQLITE_READONLY:
      return QSTORE_ERROR_READ_ONLY;
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return QSTORE_ERROR_BUSY;
    case SQLITE_MISMATCH:
    case SQLITE_RANGE:
    case SQLITE_TOOBIG:
      return QSTORE_ERROR_INVALID_ARGUMENT;
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return QSTORE_ERROR_CORRUPT;
    case SQLITE_IOERR:
    case SQLITE_FULL:
    case SQLITE_CANTOPEN:
      return QSTORE_ERROR_IO;
    case SQLITE_NOMEM:
    case SQLITE_INTERNAL:
      return QSTORE_ERROR_FAILED;
    case SQLITE_ERROR:
    default:
      break;
    }

  if (message == NULL)
    return QSTORE_ERROR_FAILED;
  if (strstr (message, "syntax error") != NULL || g_str_has_prefix (message, "incomplete input") ||
      g_str_has_prefix (message, "unrecognized token"))
    return QSTORE_ERROR_SYNTAX;
  if (g_str_has_prefix (message, "no such "))
    return QSTORE_ERROR_NOT_FOUND;
  if (strstr (message, "already exists") != NULL)
    return QSTORE_ERROR_EXISTS;
  /* Everything else SQLite reports as a plain error is about the SQL it
   * was given: a syntax error, a wrong number of values… */
  return QSTORE_ERROR_INVALID_ARGUMENT;
}

void
qstore_database_take_callback_error (QStoreDatabase *self,
                                     GError         *error)
{
  g_clear_error (&self->callback_error);
  self->callback_error = error;
}

void
qstore_database_set_sqlite_error (QStoreDatabase  *self,
                                  sqlite3         *conn,
                                  int              rc,
                                  GError         **error)
{
  const char *message;

  /* A failure raised in one of our callbacks keeps its own code. */
  if (self->callback_error != NULL)
    {
      g_propagate_error (error, g_steal_pointer (&self->callback_error));
      return;
    }

  message = conn != NULL ? sqlite3_errmsg (conn) : sqlite3_errstr (rc);
  g_set_error_literal (error, QSTORE_ERROR, error_code_for_sqlite (rc, message), message);
}

static gboolean
check_open (QStoreDatabase  *self,
            GError         **error)
{
  if (self->closed)
    {
      g_set_error_literal (error, QSTORE_ERROR, QSTORE_ERROR_CLOSED,
                           "The database was closed: open it again to use it");
      return FALSE;
    }
  return TRUE;
}

gboolean
qstore_database_check_writable (QStoreDatabase  *self,
                                GError         **error)
{
  if (self->flags & QSTORE_OPEN_READ_ONLY)
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_READ_ONLY,
                   "The database at “%s” was opened read-only: open it without "
                   "QSTORE_OPEN_READ_ONLY to change it (TEMP tables can be written)",
                   qstore_provider_get_location (self->provider));
      return FALSE;
    }
  return TRUE;
}

gboolean
qstore_database_run (QStoreDatabase  *self,
                     sqlite3         *conn,
                     const char      *sql,
                     GError         **error)
{
  char *message = NULL;
  int rc;

  rc = sqlite3_exec (conn, sql, NULL, NULL, &message);
  if (rc != SQLITE_OK)
    {
      if (self->callback_error != NULL)
        g_propagate_error (error, g_steal_pointer (&self->callback_error));
      else
        g_set_error_literal (error, QSTORE_ERROR, error_code_for_sqlite (rc, message),
                             message != NULL ? message : sqlite3_errstr (rc));
      sqlite3_free (message);
      return FALSE;
    }
  return TRUE;
}

QStoreKV *
qstore_database_get_catalog (QStoreDatabase *self)
{
  return self->catalog;
}

/* Tables */

QStoreSqlTable *
qstore_database_lookup (QStoreDatabase *self,
                        const char     *name)
{
  g_autofree char *key = NULL;

  if (name == NULL || self->tables == NULL)
    return NULL;
  key = g_ascii_strdown (name, -1);
  return g_hash_table_lookup (self->tables, key);
}

QStoreSqlTable *
qstore_database_attach_table (QStoreDatabase     *self,
                              QStoreTableSchema  *schema,
                              GError            **error)
{
  g_autoptr(QStoreTable) table = NULL;
  g_autofree char *key = g_ascii_strdown (schema->name, -1);
  g_autofree char *quoted = NULL;
  g_autofree char *sql = NULL;
  QStoreSqlTable *entry;
  gboolean ok;

  if (!(table = qstore_table_new (self->coordinator, schema, self->scratch, error)))
    return NULL;

  entry = qstore_sql_table_new (self, table);
  g_hash_table_replace (self->tables, g_strdup (key), entry);

  quoted = qstore_sql_quote (schema->name);
  sql = g_strdup_printf ("CREATE VIRTUAL TABLE main.%s USING " QSTORE_VTAB_MODULE_NAME, quoted);
  ok = qstore_database_run (self, self->db, sql, error);
  if (!ok)
    {
      g_hash_table_remove (self->tables, key);
      return NULL;
    }
  return entry;
}

void
qstore_database_detach_table (QStoreDatabase *self,
                              const char     *name,
                              gboolean        drop_virtual_table)
{
  g_autofree char *key = g_ascii_strdown (name, -1);

  if (drop_virtual_table)
    {
      g_autofree char *quoted = qstore_sql_quote (name);
      g_autofree char *sql = g_strdup_printf ("DROP TABLE main.%s", quoted);

      sqlite3_exec (self->db, sql, NULL, NULL, NULL);
    }
  g_hash_table_remove (self->tables, key);
}

gboolean
qstore_database_redeclare (QStoreDatabase  *self,
                           QStoreSqlTable  *entry,
                           GError         **error)
{
  g_autofree char *quoted = qstore_sql_quote (entry->schema->name);
  g_autofree char *drop = g_strdup_printf ("DROP TABLE main.%s", quoted);
  g_autofree char *create = g_strdup_printf ("CREATE VIRTUAL TABLE main.%s USING "
                                             QSTORE_VTAB_MODULE_NAME, quoted);

  /* Dropping the virtual table leaves the storage alone: only the DROP
   * TABLE statement's own handling erases it. */
  return qstore_database_run (self, self->db, drop, error) &&
         qstore_database_run (self, self->db, create, error);
}

void
qstore_database_rename_entry (QStoreDatabase *self,
                              QStoreSqlTable *entry,
                              QStoreTable    *table)
{
  g_autofree char *old_key = g_ascii_strdown (entry->schema->name, -1);

  qstore_sql_table_ref (entry);
  g_hash_table_remove (self->tables, old_key);
  qstore_sql_table_set_table (entry, table);
  g_hash_table_replace (self->tables, g_ascii_strdown (entry->schema->name, -1), entry);
}

GHashTable *
qstore_database_store_names (QStoreDatabase *self,
                             const char     *except)
{
  GHashTable *names = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  GHashTableIter iter;
  QStoreSqlTable *entry;

  g_hash_table_iter_init (&iter, self->tables);
  while (g_hash_table_iter_next (&iter, NULL, (gpointer *) &entry))
    {
      QStoreTableSchema *schema = entry->schema;

      if (except != NULL && g_ascii_strcasecmp (schema->name, except) == 0)
        continue;

      g_hash_table_replace (names, qstore_store_name_for_table (schema->schema, schema->name),
                            g_strdup_printf ("table “%s”", schema->name));
      for (guint i = 0; i < schema->indexes->len; i++)
        {
          QStoreIndexSchema *index = g_ptr_array_index (schema->indexes, i);

          g_hash_table_replace (names,
                                qstore_store_name_for_index (schema->schema, schema->name,
                                                             index->name),
                                g_strdup_printf ("index “%s” of table “%s”",
                                                 index->name, schema->name));
        }
    }
  return names;
}

GPtrArray *
qstore_database_rewritten_tables (QStoreDatabase  *self,
                                  const char      *except,
                                  GError         **error)
{
  g_autoptr(GPtrArray) tables = g_ptr_array_new_with_free_func (g_object_unref);
  sqlite3_stmt *stmt = NULL;
  GHashTableIter iter;
  QStoreSqlTable *entry;

  if (sqlite3_prepare_v2 (self->scratch,
                          "SELECT sql FROM main.sqlite_master WHERE type = 'table' AND name = ?1",
                          -1, &stmt, NULL) != SQLITE_OK)
    {
      qstore_database_set_sqlite_error (self, self->scratch, sqlite3_errcode (self->scratch),
                                        error);
      return NULL;
    }

  g_hash_table_iter_init (&iter, self->tables);
  while (g_hash_table_iter_next (&iter, NULL, (gpointer *) &entry))
    {
      QStoreTableSchema *schema = entry->schema;
      g_autoptr(QStoreTableSchema) new_schema = NULL;
      QStoreTable *table;
      gboolean changed;

      if (g_ascii_strcasecmp (schema->name, except) == 0)
        continue;

      sqlite3_bind_text (stmt, 1, schema->name, -1, SQLITE_STATIC);
      changed = sqlite3_step (stmt) == SQLITE_ROW &&
                g_strcmp0 ((const char *) sqlite3_column_text (stmt, 0), schema->sql) != 0;
      sqlite3_reset (stmt);
      if (!changed)
        continue;

      if (!(new_schema = qstore_table_schema_from_sqlite (self->scratch, "main", schema->name,
                                                          error)) ||
          !(table = qstore_table_new (self->coordinator, new_schema, self->scratch, error)))
        {
          sqlite3_finalize (stmt);
          return NULL;
        }
      g_ptr_array_add (tables, table);
    }

  sqlite3_finalize (stmt);
  return g_steal_pointer (&tables);
}

void
qstore_database_apply_tables (QStoreDatabase *self,
                              GPtrArray      *tables)
{
  for (guint i = 0; i < tables->len; i++)
    {
      QStoreTable *table = g_ptr_array_index (tables, i);
      QStoreSqlTable *entry = qstore_database_lookup (self, qstore_table_get_name (table));

      if (entry != NULL)
        qstore_sql_table_set_table (entry, table);
    }
}

void
qstore_database_forget_table_stats (QStoreDatabase *self,
                                    const char     *schema,
                                    const char     *table)
{
  qstore_coordinator_forget_row_count (self->coordinator, schema, table);
}

gboolean
qstore_database_commit_catalog (QStoreDatabase  *self,
                                const char      *schema,
                                const char      *table,
                                const char      *bundle,
                                GError         **error)
{
  g_autoptr(GBytes) key = qstore_catalog_key_for_table (schema, table);

  qstore_coordinator_begin (self->coordinator);
  qstore_catalog_put_if_changed (self, key, bundle);
  return qstore_coordinator_commit (self->coordinator, error);
}

/* Opening and closing */

static sqlite3 *
open_connection (GError **error)
{
  sqlite3 *db = NULL;
  int rc;

  rc = sqlite3_open_v2 (":memory:", &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL);
  if (rc != SQLITE_OK)
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_FAILED,
                   "SQLite cannot open an in-memory database: %s",
                   db != NULL ? sqlite3_errmsg (db) : sqlite3_errstr (rc));
      sqlite3_close_v2 (db);
      return NULL;
    }
  sqlite3_extended_result_codes (db, 1);
  return db;
}

/* The main connection's authorizer for good (see
 * qstore_database_set_authorizer()). */
static int
dispatch_authorizer (void       *data,
                     int         action,
                     const char *arg1,
                     const char *arg2,
                     const char *db_name,
                     const char *inner)
{
  QStoreDatabase *self = data;

  if (self->authorizer == NULL)
    return SQLITE_OK;
  return self->authorizer (self->authorizer_data, action, arg1, arg2, db_name, inner);
}

/* The clean-shutdown marker is single use: reading it at open consumes it,
 * so a crash before the next close leaves none. */
static gboolean
consume_clean_shutdown (QStoreDatabase  *self,
                        GError         **error)
{
  g_autoptr(GBytes) key = qstore_catalog_key_for_meta (CLEAN_SHUTDOWN_META);
  g_autoptr(GBytes) value = NULL;
  GError *local_error = NULL;
  QStoreWriteOp op = { 0 };
  gsize key_len;

  op.key = g_bytes_get_data (key, &key_len);
  op.key_len = key_len;
  value = qstore_kv_get (self->catalog, op.key, op.key_len, &local_error);
  if (local_error != NULL)
    {
      g_propagate_error (error, local_error);
      return FALSE;
    }
  if (value == NULL)
    return TRUE;

  self->clean_shutdown = g_strndup (g_bytes_get_data (value, NULL), g_bytes_get_size (value));
  if (self->flags & QSTORE_OPEN_READ_ONLY)
    return TRUE;

  op.store = self->catalog;
  op.kind = QSTORE_WRITE_OP_DELETE;
  return qstore_provider_write (self->provider, &op, 1, QSTORE_WRITE_SYNC, error);
}

static gboolean
write_clean_shutdown (QStoreDatabase  *self,
                      GError         **error)
{
  g_autoptr(GBytes) key = qstore_catalog_key_for_meta (CLEAN_SHUTDOWN_META);
  /* The materialized views stale at close refill at the next open. */
  g_autofree char *stale = qstore_mview_stale_json (self);
  QStoreWriteOp op = { 0 };
  gsize key_len;

  op.store = self->catalog;
  op.kind = QSTORE_WRITE_OP_PUT;
  op.key = g_bytes_get_data (key, &key_len);
  op.key_len = key_len;
  op.value = (const guint8 *) stale;
  op.value_len = strlen (stale);
  return qstore_provider_write (self->provider, &op, 1, QSTORE_WRITE_SYNC, error);
}

/**
 * qstore_database_open:
 * @uri: where the store is, as `provider:location` (such as
 *   `lmdb:/path/to/dir` or `memory:`), with `?atomic=0` and other
 *   provider options after the location
 * @flags: how to open it
 * @error: return location for a #GError
 *
 * Opens the store at @uri as an SQL database: loads the provider, reads
 * the catalog and makes every table and view it lists available to SQL.
 * A catalog entry that cannot be read back does not stop the others:
 * qstore_database_get_rehydration_result() says what loaded and what did
 * not, and why.
 *
 * Returns: (transfer full): the database, or %NULL on error
 */
QStoreDatabase *
qstore_database_open (const char       *uri,
                      QStoreOpenFlags   flags,
                      GError          **error)
{
  g_autoptr(QStoreDatabase) self = NULL;
  g_autoptr(QStoreProvider) provider = NULL;

  g_return_val_if_fail (uri != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!(provider = qstore_provider_new_for_uri (uri, flags, error)))
    return NULL;

  self = g_object_new (QSTORE_TYPE_DATABASE, NULL);
  self->flags = qstore_provider_get_flags (provider) | flags;
  self->provider = g_steal_pointer (&provider);

  if (!(self->coordinator = qstore_coordinator_new (self->provider, error)) ||
      !(self->catalog = qstore_provider_get_catalog_store (self->provider, error)) ||
      !(self->db = open_connection (error)) ||
      !(self->scratch = open_connection (error)) ||
      !qstore_vtab_register_module (self, error) ||
      !consume_clean_shutdown (self, error))
    return NULL;

  sqlite3_set_authorizer (self->db, dispatch_authorizer, self);
  self->mviews = qstore_mviews_new (self);
  qstore_catalog_rehydrate (self);

  if (!qstore_ddl_repair_interrupted_commit (self, error))
    return NULL;

  /* Materialized views last: they read whole tables. */
  qstore_mview_rehydrate (self);

  return g_steal_pointer (&self);
}

/**
 * qstore_database_close:
 * @self: a #QStoreDatabase
 * @error: return location for a #GError
 *
 * Closes the database cleanly: a transaction still open is rolled back, a
 * clean-shutdown marker is written last, and every resource is released.
 * Dropping the last reference without closing releases them too, but
 * leaves no marker, as a crash would. Closing twice is fine.
 *
 * Returns: %TRUE on success; the database is closed either way
 */
gboolean
qstore_database_close (QStoreDatabase  *self,
                       GError         **error)
{
  gboolean ok = TRUE;

  g_return_val_if_fail (QSTORE_IS_DATABASE (self), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (self->closed)
    return TRUE;

  if (!sqlite3_get_autocommit (self->db))
    sqlite3_exec (self->db, "ROLLBACK", NULL, NULL, NULL);
  if (qstore_coordinator_in_transaction (self->coordinator))
    qstore_coordinator_rollback (self->coordinator);

  /* Nothing is queued for later: the marker is written last. */
  if (!(self->flags & QSTORE_OPEN_READ_ONLY))
    ok = qstore_mview_write_durable_set (self, error) && write_clean_shutdown (self, error);

  teardown (self);
  return ok;
}

/* Running statements */

enum
{
  KIND_OTHER,
  KIND_CREATE_TABLE,
  KIND_DROP_TABLE,
  KIND_RENAME_TABLE,
  KIND_CREATE_VIEW,
  KIND_DROP_VIEW,
};

/* What preparing a statement on the main connection showed. */
typedef struct
{
  QStoreDatabase *self;
  int             kind;
  char           *table;          /* the qstore table of the DDL */
  char           *refusal;        /* why the statement is refused */
  int             dml_action;     /* SQLITE_INSERT/UPDATE/DELETE on a qstore table */
  char           *dml_table;
  gboolean        is_dml;         /* writes rows of any table */
  gboolean        has_select;
  gboolean        drops_index;
} Classification;

static void
classification_clear (Classification *c)
{
  g_clear_pointer (&c->table, g_free);
  g_clear_pointer (&c->refusal, g_free);
  g_clear_pointer (&c->dml_table, g_free);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Classification, classification_clear)

static int
classify_authorizer (void       *data,
                     int         action,
                     const char *arg1,
                     const char *arg2,
                     const char *db_name,
                     const char *trigger)
{
  Classification *c = data;
  gboolean in_main = g_strcmp0 (db_name, "main") == 0;

  switch (action)
    {
    case SQLITE_CREATE_TABLE:
      if (in_main && c->kind == KIND_OTHER)
        {
          c->kind = KIND_CREATE_TABLE;
          c->table = g_strdup (arg1);
        }
      break;

    case SQLITE_DROP_VTABLE:
      if (in_main && c->kind == KIND_OTHER && g_strcmp0 (arg2, QSTORE_VTAB_MODULE_NAME) == 0)
        {
          c->kind = KIND_DROP_TABLE;
          c->table = g_strdup (arg1);
        }
      break;

    case SQLITE_ALTER_TABLE:
      if (g_strcmp0 (arg1, "main") == 0 && c->kind == KIND_OTHER &&
          qstore_database_lookup (c->self, arg2) != NULL)
        {
          c->kind = KIND_RENAME_TABLE;
          c->table = g_strdup (arg2);
        }
      break;

    case SQLITE_CREATE_VTABLE:
      if (in_main && c->refusal == NULL)
        c->refusal = g_strdup_printf ("Virtual table “%s” (module “%s”) would not be kept "
                                      "by qstore: create it as TEMP (CREATE VIRTUAL TABLE "
                                      "temp.%s USING …)", arg1, arg2, arg1);
      break;

    case SQLITE_CREATE_VIEW:
      if (in_main && c->kind == KIND_OTHER)
        {
          c->kind = KIND_CREATE_VIEW;
          c->table = g_strdup (arg1);
        }
      break;

    case SQLITE_DROP_VIEW:
      if (in_main && c->kind == KIND_OTHER)
        {
          c->kind = KIND_DROP_VIEW;
          c->table = g_strdup (arg1);
        }
      break;

    case SQLITE_INSERT:
    case SQLITE_UPDATE:
    case SQLITE_DELETE:
      if (trigger == NULL && arg1 != NULL && !g_str_has_prefix (arg1, "sqlite_"))
        {
          c->is_dml = TRUE;
          if (in_main && c->dml_action == 0 && qstore_database_lookup (c->self, arg1) != NULL)
            {
              c->dml_action = action;
              c->dml_table = g_strdup (arg1);
            }
        }
      break;

    case SQLITE_SELECT:
      c->has_select = TRUE;
      break;

    case SQLITE_DROP_INDEX:
    case SQLITE_DROP_TEMP_INDEX:
      c->drops_index = TRUE;
      break;

    default:
      break;
    }

  return SQLITE_OK;
}

/* SQLite's words for what a virtual table cannot do, and what to say. */
static gboolean
refused_form (const char  *message,
              char       **refusal)
{
  if (g_str_has_prefix (message, "UPSERT not implemented for virtual table"))
    *refusal = g_strdup_printf ("INSERT … ON CONFLICT … DO (UPSERT) is not supported on "
                                "qstore tables (%s): use INSERT OR REPLACE or INSERT OR IGNORE",
                                message);
  else if (g_str_has_prefix (message, "UPDATE RETURNING is not available"))
    *refusal = g_strdup ("UPDATE … RETURNING is not supported on qstore tables: run the "
                         "UPDATE, then SELECT the rows");
  else if (g_str_has_prefix (message, "DELETE RETURNING is not available"))
    *refusal = g_strdup ("DELETE … RETURNING is not supported on qstore tables: SELECT the "
                         "rows first, then DELETE them");
  else if (g_str_has_prefix (message, "cannot create triggers on virtual tables"))
    *refusal = g_strdup ("Triggers on qstore tables are not supported: make the follow-up "
                         "changes in the same transaction, or subscribe to the "
                         "coordinator's “committed” signal");
  else
    return FALSE;
  return TRUE;
}

static void
forget_rowids (QStoreDatabase *self)
{
  GHashTableIter iter;
  QStoreSqlTable *entry;

  g_hash_table_iter_init (&iter, self->tables);
  while (g_hash_table_iter_next (&iter, NULL, (gpointer *) &entry))
    qstore_sql_table_forget_rowids (entry);
}

/* DDL-commit: DDL runs outside any transaction. One that is open commits
 * first; afterwards a new one begins, so the caller's COMMIT or ROLLBACK
 * still finds one. */
static gboolean
ddl_begin (QStoreDatabase  *self,
           gboolean        *reopen,
           GError         **error)
{
  *reopen = FALSE;
  if (!qstore_database_check_writable (self, error))
    return FALSE;
  if (!sqlite3_get_autocommit (self->db))
    {
      if (!qstore_database_run (self, self->db, "COMMIT", error))
        return FALSE;
      *reopen = TRUE;
    }
  /* Writes made through the table API outside SQL's transaction. */
  if (!qstore_coordinator_commit (self->coordinator, error))
    return FALSE;
  qstore_mview_before_ddl (self);
  return TRUE;
}

static gboolean
ddl_end (QStoreDatabase  *self,
         gboolean         reopen,
         gboolean         ok,
         GError         **error)
{
  /* What the DDL changed may be what a materialized view reads. */
  qstore_mview_after_ddl (self);
  if (reopen && !qstore_database_run (self, self->db, "BEGIN", ok ? error : NULL))
    return FALSE;
  return ok;
}

/* Statements between BEGIN and COMMIT that only read see one state of
 * the store, taken when the transaction begins, as SQLite's own read
 * transactions do: without it, each would see what was committed when it
 * started. A statement that writes makes it a write transaction, whose
 * reads go through the coordinator. */
static void
update_read_snapshot (QStoreDatabase *self)
{
  guint64 serial;

  if (!sqlite3_get_autocommit (self->db) &&
      !qstore_coordinator_in_transaction (self->coordinator))
    {
      /* A provider without snapshots reads what is committed. */
      if (self->read_snapshot == NULL)
        self->read_snapshot = qstore_coordinator_hold_snapshot (self->coordinator, TRUE,
                                                                &serial, NULL);
    }
  else
    release_read_snapshot (self);
}

/* Steps @stmt to the end, into @result when given. */
static gboolean
step_statement (QStoreDatabase  *self,
                sqlite3_stmt    *stmt,
                gboolean         is_dml,
                QStoreResult    *result,
                GError         **error)
{
  int rc;

  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    if (result != NULL)
      qstore_result_add_row (result, stmt);

  if (rc != SQLITE_DONE)
    {
      qstore_database_set_sqlite_error (self, self->db, rc, error);
      return FALSE;
    }

  if (result != NULL)
    qstore_result_set_counts (result, is_dml ? sqlite3_changes64 (self->db) : 0,
                              sqlite3_last_insert_rowid (self->db));
  return TRUE;
}

static gboolean
check_single (const char  *tail,
              gboolean     single,
              GError     **error)
{
  if (single && *qstore_sql_skip_space (tail) != '\0')
    {
      g_set_error_literal (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                           "Only one statement runs here, and more follow: run several "
                           "with qstore_database_exec(), or one at a time");
      return FALSE;
    }
  return TRUE;
}

static QStoreResult *
empty_result (QStoreDatabase *self)
{
  QStoreResult *result = qstore_result_new_for_statement (NULL);

  qstore_result_set_counts (result, 0, sqlite3_last_insert_rowid (self->db));
  return result;
}

static gboolean
drop_index (QStoreDatabase  *self,
            sqlite3_stmt    *stmt,
            const char      *start,
            const char     **tail,
            gboolean         single,
            QStoreResult   **result,
            GError         **error)
{
  gboolean reopen;
  gboolean ok;

  sqlite3_finalize (stmt);
  if (!ddl_begin (self, &reopen, error))
    return FALSE;
  ok = qstore_ddl_drop_index (self, start, tail, error);
  if (!ddl_end (self, reopen, ok, error))
    return FALSE;
  if (result != NULL)
    *result = empty_result (self);
  return check_single (*tail, single, error);
}

/* Runs the first statement of @sql; *tail gets where the next starts. */
static gboolean
run_statement (QStoreDatabase  *self,
               const char      *sql,
               const char     **tail,
               GVariant        *params,
               gboolean         single,
               QStoreResult   **result,
               GError         **error)
{
  g_auto(Classification) c = { 0 };
  g_autoptr(QStoreResult) rows = NULL;
  const char *start = qstore_sql_skip_space (sql);
  sqlite3_stmt *stmt = NULL;
  QStoreSqlLead lead;
  gboolean reopen;
  gboolean ok;
  int rc;

  *tail = start;
  if (*start == '\0')
    {
      if (result != NULL)
        *result = empty_result (self);
      return TRUE;
    }

  g_clear_error (&self->callback_error);
  lead = qstore_sql_lead (start);

  /* Materialized views: statements SQLite has no syntax for. */
  switch (qstore_mview_classify_statement (self, start, error))
    {
    case QSTORE_MVIEW_STATEMENT_REFUSED:
      return FALSE;

    case QSTORE_MVIEW_STATEMENT_DDL:
      if (!ddl_begin (self, &reopen, error))
        return FALSE;
      ok = qstore_mview_run_ddl (self, start, tail, error);
      if (!ddl_end (self, reopen, ok, error))
        return FALSE;
      if (result != NULL)
        *result = empty_result (self);
      return check_single (*tail, single, error);

    case QSTORE_MVIEW_STATEMENT_SETTING:
      return qstore_mview_run_setting (self, start, tail, result, error) &&
             check_single (*tail, single, error);

    case QSTORE_MVIEW_STATEMENT_NONE:
    default:
      break;
    }

  c.self = self;
  qstore_database_set_authorizer (self, classify_authorizer, &c);
  rc = sqlite3_prepare_v2 (self->db, start, -1, &stmt, tail);
  qstore_database_set_authorizer (self, NULL, NULL);

  /* Index DDL on a qstore table: the index lives on scratch. */
  if (lead == QSTORE_SQL_LEAD_CREATE_INDEX && rc != SQLITE_OK &&
      strstr (sqlite3_errmsg (self->db), "virtual tables may not be indexed") != NULL)
    {
      if (!ddl_begin (self, &reopen, error))
        return FALSE;
      ok = qstore_ddl_create_index (self, start, tail, error);
      if (!ddl_end (self, reopen, ok, error))
        return FALSE;
      if (result != NULL)
        *result = empty_result (self);
      return check_single (*tail, single, error);
    }

  if (lead == QSTORE_SQL_LEAD_DROP_INDEX && !c.drops_index)
    {
      int ours = qstore_ddl_is_index_drop (self, start, error);

      if (ours < 0)
        {
          sqlite3_finalize (stmt);
          return FALSE;
        }
      if (ours > 0)
        return drop_index (self, stmt, start, tail, single, result, error);
    }

  /* Column changes on a qstore table: SQLite refuses them on a virtual
   * table, so they run on scratch; the ALTER arms SQLite lacks fail to
   * prepare anywhere, and qstore runs them. */
  if (lead == QSTORE_SQL_LEAD_ALTER_TABLE && rc != SQLITE_OK &&
      (g_str_has_prefix (sqlite3_errmsg (self->db), "virtual tables may not be altered") ||
       g_str_has_prefix (sqlite3_errmsg (self->db), "cannot rename columns of virtual table") ||
       g_str_has_prefix (sqlite3_errmsg (self->db), "cannot drop column from virtual table") ||
       qstore_sql_alter_kind (start) >= QSTORE_SQL_ALTER_COLUMN))
    {
      if (!ddl_begin (self, &reopen, error))
        return FALSE;
      ok = qstore_ddl_alter_columns (self, start, tail, error);
      if (!ddl_end (self, reopen, ok, error))
        return FALSE;
      if (result != NULL)
        *result = empty_result (self);
      return check_single (*tail, single, error);
    }

  if (rc != SQLITE_OK)
    {
      const char *message = sqlite3_errmsg (self->db);
      g_autofree char *refusal = NULL;

      if (refused_form (message, &refusal))
        g_set_error_literal (error, QSTORE_ERROR, QSTORE_ERROR_UNSUPPORTED, refusal);
      else
        qstore_database_set_sqlite_error (self, self->db, rc, error);
      return FALSE;
    }

  /* Only a comment. */
  if (stmt == NULL)
    {
      if (result != NULL)
        *result = empty_result (self);
      return TRUE;
    }

  if (!check_single (*tail, single, error))
    {
      sqlite3_finalize (stmt);
      return FALSE;
    }

  if (c.refusal != NULL)
    {
      sqlite3_finalize (stmt);
      g_set_error_literal (error, QSTORE_ERROR, QSTORE_ERROR_UNSUPPORTED, c.refusal);
      return FALSE;
    }

  if (!qstore_mview_check_target (self, c.kind != KIND_DROP_VIEW ? c.table : NULL,
                                  c.dml_table, error))
    {
      sqlite3_finalize (stmt);
      return FALSE;
    }

  switch (c.kind)
    {
    case KIND_CREATE_TABLE:
      {
        g_autofree char *text = g_strndup (start, *tail - start);

        sqlite3_finalize (stmt);
        if (c.has_select)
          {
            g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_UNSUPPORTED,
                         "CREATE TABLE … AS SELECT is not supported for qstore table “%s”: "
                         "create the table, then INSERT INTO %s SELECT …", c.table, c.table);
            return FALSE;
          }
        if (!ddl_begin (self, &reopen, error))
          return FALSE;
        ok = qstore_ddl_create_table (self, text, c.table, error);
        if (!ddl_end (self, reopen, ok, error))
          return FALSE;
        if (result != NULL)
          *result = empty_result (self);
        return TRUE;
      }

    case KIND_DROP_TABLE:
      if (!ddl_begin (self, &reopen, error))
        {
          sqlite3_finalize (stmt);
          return FALSE;
        }
      ok = qstore_ddl_drop_table (self, stmt, c.table, error);
      sqlite3_finalize (stmt);
      if (!ddl_end (self, reopen, ok, error))
        return FALSE;
      if (result != NULL)
        *result = empty_result (self);
      return TRUE;

    case KIND_RENAME_TABLE:
      /* xRename does the work while SQLite renames the virtual table. */
      if (!ddl_begin (self, &reopen, error))
        {
          sqlite3_finalize (stmt);
          return FALSE;
        }
      ok = step_statement (self, stmt, FALSE, NULL, error);
      sqlite3_finalize (stmt);
      /* SQLite rewrote the views that read the table. */
      ok = ok && qstore_catalog_sync_views (self, error);
      if (!ddl_end (self, reopen, ok, error))
        return FALSE;
      if (result != NULL)
        *result = empty_result (self);
      return TRUE;

    case KIND_CREATE_VIEW:
    case KIND_DROP_VIEW:
      if (!ddl_begin (self, &reopen, error))
        {
          sqlite3_finalize (stmt);
          return FALSE;
        }
      if (c.kind == KIND_CREATE_VIEW)
        ok = qstore_catalog_create_view (self, stmt, c.table, error);
      else
        ok = qstore_catalog_drop_view (self, stmt, c.table, error);
      sqlite3_finalize (stmt);
      if (!ddl_end (self, reopen, ok, error))
        return FALSE;
      if (result != NULL)
        *result = empty_result (self);
      return TRUE;

    default:
      break;
    }

  if (c.dml_action == SQLITE_INSERT && sqlite3_column_count (stmt) > 0)
    {
      sqlite3_finalize (stmt);
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_UNSUPPORTED,
                   "INSERT … RETURNING is not supported on qstore table “%s”: it would "
                   "report the values before qstore applies column affinity and assigns "
                   "ids; SELECT the row afterwards (last_insert_rowid() gives its rowid)",
                   c.dml_table);
      return FALSE;
    }

  if (!qstore_params_bind (stmt, params, error))
    {
      sqlite3_finalize (stmt);
      return FALSE;
    }

  g_clear_pointer (&self->insert_shape, qstore_insert_shape_free);
  if (c.dml_action == SQLITE_INSERT)
    self->insert_shape = qstore_sql_insert_shape (start);

  if (result != NULL)
    rows = qstore_result_new_for_statement (stmt);
  update_read_snapshot (self);
  ok = step_statement (self, stmt, c.is_dml, rows, error);
  sqlite3_finalize (stmt);
  g_clear_pointer (&self->insert_shape, qstore_insert_shape_free);
  update_read_snapshot (self);

  /* Ephemeral rowids last one transaction. */
  if (sqlite3_get_autocommit (self->db))
    forget_rowids (self);

  if (ok && result != NULL)
    *result = g_steal_pointer (&rows);
  return ok;
}

/**
 * qstore_database_exec:
 * @self: a #QStoreDatabase
 * @sql: one or more SQL statements
 * @error: return location for a #GError
 *
 * Runs SQL statements in order and discards the rows they return. It
 * stops at the first that fails; those before it stay done (each one
 * committed, unless a transaction is open).
 *
 * Errors are in the %QSTORE_ERROR domain: %QSTORE_ERROR_CONSTRAINT for a
 * constraint, %QSTORE_ERROR_NOT_FOUND for a table, column or index that
 * does not exist, %QSTORE_ERROR_SYNTAX for a syntax error,
 * %QSTORE_ERROR_UNSUPPORTED for the refused forms, %QSTORE_ERROR_READ_ONLY
 * for a write to a read-only database.
 *
 * Returns: %TRUE when every statement succeeded
 */
gboolean
qstore_database_exec (QStoreDatabase  *self,
                      const char      *sql,
                      GError         **error)
{
  const char *p;

  g_return_val_if_fail (QSTORE_IS_DATABASE (self), FALSE);
  g_return_val_if_fail (sql != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (!check_open (self, error))
    return FALSE;

  p = sql;
  while (*qstore_sql_skip_space (p) != '\0')
    {
      const char *tail = NULL;

      if (!run_statement (self, p, &tail, NULL, FALSE, NULL, error))
        return FALSE;
      /* Never stand still, whatever SQLite consumed. */
      p = tail > p ? tail : p + strlen (p);
    }
  return TRUE;
}

/**
 * qstore_database_query:
 * @self: a #QStoreDatabase
 * @sql: one SQL statement
 * @params: (nullable): a tuple with one value per parameter (`?`, `?NNN`,
 *   `:name`… in order), or an `a{sv}` dictionary with one value per named
 *   parameter (`:name`, `@name`, `$name`, keyed `name` or with its
 *   prefix). Values are `x`, `d`, `s`, `ay`, `b`, the NULL maybe (see
 *   qstore_value_new_null()), or any of them boxed in `v`; %NULL leaves
 *   every parameter NULL. A floating reference is consumed.
 * @error: return location for a #GError
 *
 * Runs one statement and returns what it returned. Statements that return
 * no rows (INSERT, CREATE TABLE…) give an empty result whose changes and
 * last_insert_rowid() are set. Errors are as for
 * qstore_database_exec().
 *
 * Returns: (transfer full): the result, or %NULL on error
 */
QStoreResult *
qstore_database_query (QStoreDatabase  *self,
                       const char      *sql,
                       GVariant        *params,
                       GError         **error)
{
  g_autoptr(GVariant) owned = NULL;
  QStoreResult *result = NULL;
  const char *tail = NULL;

  g_return_val_if_fail (QSTORE_IS_DATABASE (self), NULL);
  g_return_val_if_fail (sql != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (params != NULL)
    owned = g_variant_ref_sink (params);

  if (!check_open (self, error))
    return NULL;

  if (!run_statement (self, sql, &tail, owned, TRUE, &result, error))
    {
      g_clear_object (&result);
      return NULL;
    }
  return result;
}

/**
 * qstore_database_get_provider:
 * @self: a #QStoreDatabase
 *
 * Gets the provider the database keeps its tables in.
 *
 * Returns: (transfer none) (nullable): the provider, or %NULL once closed
 */
QStoreProvider *
qstore_database_get_provider (QStoreDatabase *self)
{
  g_return_val_if_fail (QSTORE_IS_DATABASE (self), NULL);

  return self->provider;
}

/**
 * qstore_database_get_coordinator:
 * @self: a #QStoreDatabase
 *
 * Gets the coordinator every table of the database shares; connect to its
 * [signal@Coordinator::committed] signal to follow the changes.
 *
 * Returns: (transfer none) (nullable): the coordinator, or %NULL once
 *   closed
 */
QStoreCoordinator *
qstore_database_get_coordinator (QStoreDatabase *self)
{
  g_return_val_if_fail (QSTORE_IS_DATABASE (self), NULL);

  return self->coordinator;
}

/**
 * qstore_database_get_table:
 * @self: a #QStoreDatabase
 * @schema: (nullable): the schema, `main` (the only one), or %NULL for it
 * @name: the table's name, in any case
 *
 * Looks a table up. A materialized view's name gives the table holding
 * its rows: it can be read, but writing it fails with
 * %QSTORE_ERROR_READ_ONLY, since the view keeps it up to date.
 *
 * Returns: (transfer none) (nullable): the table, or %NULL when there is
 *   none of that name
 */
QStoreTable *
qstore_database_get_table (QStoreDatabase *self,
                           const char     *schema,
                           const char     *name)
{
  QStoreSqlTable *entry;

  g_return_val_if_fail (QSTORE_IS_DATABASE (self), NULL);
  g_return_val_if_fail (name != NULL, NULL);

  if (schema != NULL && g_ascii_strcasecmp (schema, "main") != 0)
    return NULL;
  entry = qstore_database_lookup (self, name);
  return entry != NULL ? entry->table : NULL;
}

/**
 * qstore_database_get_rehydration_result:
 * @self: a #QStoreDatabase
 *
 * Gets what opening the database read back from its catalog: the tables,
 * indexes and views that loaded, and each entry that did not, with its
 * DDL and why. Such an entry stays in the catalog as it is; fix what it
 * needs, or remove a table's leftovers with
 * qstore_database_reclaim_detached_table().
 *
 * Returns: (transfer none): the result
 */
QStoreRehydrationResult *
qstore_database_get_rehydration_result (QStoreDatabase *self)
{
  g_return_val_if_fail (QSTORE_IS_DATABASE (self), NULL);

  return self->rehydration;
}

static int
compare_names (gconstpointer a,
               gconstpointer b)
{
  return g_strcmp0 (*(const char * const *) a, *(const char * const *) b);
}

/**
 * qstore_database_list_tables:
 * @self: a #QStoreDatabase
 *
 * Lists the tables of the database (not TEMP tables), by name as declared.
 *
 * Returns: (transfer full) (array zero-terminated=1): the names, sorted
 */
char **
qstore_database_list_tables (QStoreDatabase *self)
{
  GPtrArray *names = g_ptr_array_new ();
  GHashTableIter iter;
  QStoreSqlTable *entry;

  g_return_val_if_fail (QSTORE_IS_DATABASE (self), NULL);

  if (self->tables != NULL)
    {
      g_hash_table_iter_init (&iter, self->tables);
      while (g_hash_table_iter_next (&iter, NULL, (gpointer *) &entry))
        if (entry->mview == NULL)   /* a materialized view's contents */
          g_ptr_array_add (names, g_strdup (entry->schema->name));
    }
  g_ptr_array_sort (names, compare_names);
  g_ptr_array_add (names, NULL);
  return (char **) g_ptr_array_free (names, FALSE);
}
