/* qstore-database.c: the database object, its tables, its catalog writes
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "qstore-codec-private.h"
#include "qstore-coordinator-private.h"
#include "qstore-database-private.h"
#include "qstore-error.h"
#include "qstore-i18n-private.h"
#include "qstore-sql-token-private.h"
#include "qstore-staging-leftovers-private.h"

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
 * - `PRAGMA qstore.write_out_step [= bytes]` reads or sets, for this open
 *   database only, how much of a transaction the writer keeps in memory
 *   before it goes into the provider's write transaction (see
 *   [method@Coordinator.set_write_out_step]).
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

/* What the layers above keep */

typedef struct
{
  gconstpointer  key;
  gpointer       state;
  GDestroyNotify free;
} ExtensionState;

static void
extension_state_clear (gpointer data)
{
  ExtensionState *e = data;

  if (e->free != NULL)
    e->free (e->state);
}

void
qstore_database_add_extension_state (QStoreDatabase *self,
                                     gconstpointer   key,
                                     gpointer        state,
                                     GDestroyNotify  free)
{
  ExtensionState e = { key, state, free };

  g_array_append_val (self->extension_states, e);
}

gpointer
qstore_database_get_extension_state (QStoreDatabase *self,
                                     gconstpointer   key)
{
  for (guint i = 0; self->extension_states != NULL && i < self->extension_states->len; i++)
    {
      ExtensionState *e = &g_array_index (self->extension_states, ExtensionState, i);

      if (e->key == key)
        return e->state;
    }
  return NULL;
}

/* An iterator over the read transaction's snapshot, kept between walks:
 * an index walk run once per statement (the outer loop of "ids from the
 * index, then each row") seeks it instead of opening another. */
typedef struct
{
  QStoreKV   *store;
  QStoreIter *iter;
} ReadIter;

/* Enough for the walks of a few statements run in turn. */
#define READ_ITERS_MAX 8

static void
read_iter_clear (ReadIter *kept)
{
  g_clear_object (&kept->iter);
  g_clear_object (&kept->store);
}

void
qstore_database_release_read_snapshot (QStoreDatabase *self)
{
  /* The iterators first: they read the snapshot too. */
  if (self->read_iters != NULL && self->read_iters->len > 0)
    g_array_set_size (self->read_iters, 0);
  if (self->read_snapshot != NULL)
    qstore_coordinator_release_snapshot (self->coordinator, g_steal_pointer (&self->read_snapshot));
}

void
qstore_database_keep_read_iter (QStoreDatabase *self,
                                QStoreSnapshot *snapshot,
                                QStoreKV       *store,
                                QStoreIter     *iter)
{
  ReadIter kept = { store, iter };

  if (snapshot == NULL || snapshot != self->read_snapshot)
    {
      g_object_unref (iter);
      return;
    }
  if (self->read_iters == NULL)
    {
      self->read_iters = g_array_new (FALSE, FALSE, sizeof (ReadIter));
      g_array_set_clear_func (self->read_iters, (GDestroyNotify) read_iter_clear);
    }
  if (self->read_iters->len == READ_ITERS_MAX)
    g_array_remove_index (self->read_iters, 0);
  g_object_ref (store);
  g_array_append_val (self->read_iters, kept);
}

QStoreIter *
qstore_database_take_read_iter (QStoreDatabase *self,
                                QStoreSnapshot *snapshot,
                                QStoreKV       *store)
{
  if (snapshot == NULL || snapshot != self->read_snapshot || self->read_iters == NULL)
    return NULL;
  for (guint i = self->read_iters->len; i-- > 0;)
    {
      ReadIter *kept = &g_array_index (self->read_iters, ReadIter, i);

      if (kept->store == store)
        {
          QStoreIter *iter = g_steal_pointer (&kept->iter);

          g_array_remove_index (self->read_iters, i);
          return iter;
        }
    }
  return NULL;
}

/* Statements between BEGIN and COMMIT that only read see one state of
 * the store, taken by the first walk or point read of a qstore table
 * (@take), as SQLite's own read transactions do: without it, each would
 * see what was committed when it started, and each would cost a provider
 * read transaction. Once a statement writes, the transaction's reads go
 * through the coordinator and the state is let go; so it is when the
 * transaction ends. Looking at the connection rather than at the
 * statements that pass the router keeps this true for statements stepped
 * on the connection directly. */
void
qstore_database_update_read_snapshot (QStoreDatabase *self,
                                      gboolean        take)
{
  guint64 serial;

  if (sqlite3_get_autocommit (self->db) ||
      qstore_coordinator_in_transaction (self->coordinator))
    qstore_database_release_read_snapshot (self);
  else if (take && self->read_snapshot == NULL)
    /* A provider without snapshots reads what is committed. */
    self->read_snapshot = qstore_coordinator_hold_snapshot (self->coordinator, TRUE,
                                                            &serial, NULL);
}

void
qstore_database_teardown (QStoreDatabase *self)
{
  qstore_database_release_read_snapshot (self);
  g_clear_pointer (&self->read_iters, g_array_unref);
  /* The layers above hold statements of the main connection. */
  g_clear_pointer (&self->extension_states, g_array_unref);
  g_clear_pointer (&self->statements, g_hash_table_unref);
  if (self->db != NULL)
    {
      /* Virtual tables let go of their entries here, and the module of
       * its shelf. */
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
      if (self->owns_provider)
        qstore_provider_close_all (self->provider);
      g_clear_object (&self->provider);
    }
  self->closed = TRUE;
}

static void
qstore_database_dispose (GObject *object)
{
  QStoreDatabase *self = QSTORE_DATABASE (object);

  if (!self->closed)
    qstore_database_teardown (self);

  G_OBJECT_CLASS (qstore_database_parent_class)->dispose (object);
}

static void
qstore_database_finalize (GObject *object)
{
  QStoreDatabase *self = QSTORE_DATABASE (object);

  g_clear_error (&self->callback_error);
  g_clear_object (&self->rehydration);

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
  self->extension_states = g_array_new (FALSE, TRUE, sizeof (ExtensionState));
  g_array_set_clear_func (self->extension_states, extension_state_clear);
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

gboolean
qstore_database_check_open (QStoreDatabase  *self,
                            GError         **error)
{
  if (self->closed)
    {
      g_set_error_literal (error, QSTORE_ERROR, QSTORE_ERROR_CLOSED,
                           _("The database was closed: open it again to use it"));
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
                   _("The database at “%s” was opened read-only: open it without "
                   "QSTORE_OPEN_READ_ONLY to change it (TEMP tables can be written)"),
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
  qstore_database_put_catalog (self, key, bundle);
  return qstore_coordinator_commit (self->coordinator, error);
}

void
qstore_database_forget_rowids (QStoreDatabase *self)
{
  GHashTableIter iter;
  QStoreSqlTable *entry;

  if (!self->rowids_given)
    return;
  self->rowids_given = FALSE;
  g_hash_table_iter_init (&iter, self->tables);
  while (g_hash_table_iter_next (&iter, NULL, (gpointer *) &entry))
    qstore_sql_table_forget_rowids (entry);
}

/* Compare-write */

static gboolean
same_bytes (GBytes     *current,
            const char *value)
{
  gsize len;
  const char *data;

  if (current == NULL)
    return FALSE;
  data = g_bytes_get_data (current, &len);
  return len == strlen (value) && (len == 0 || memcmp (data, value, len) == 0);
}

static void
put_if_changed (QStoreDatabase *self,
                GBytes         *key,
                const char     *value)
{
  g_autoptr(GBytes) current = NULL;
  gsize key_len;
  const guint8 *key_data = g_bytes_get_data (key, &key_len);

  current = qstore_coordinator_get (self->coordinator, self->catalog, key_data, key_len, NULL);
  if (same_bytes (current, value))
    return;
  qstore_coordinator_put (self->coordinator, self->catalog, key_data, key_len,
                          (const guint8 *) value, strlen (value));
}

void
qstore_database_put_catalog (QStoreDatabase *self,
                             GBytes         *key,
                             const char     *value)
{
  g_autoptr(GBytes) format_key = qstore_catalog_key_for_meta (QSTORE_KEY_FORMAT_META);

  put_if_changed (self, key, value);
  /* A catalog with entries tells which format their stores' keys are in. */
  put_if_changed (self, format_key, QSTORE_KEY_FORMAT);
}

gboolean
qstore_database_catalog_differs (QStoreDatabase *self,
                                 GBytes         *key,
                                 const char     *value)
{
  g_autoptr(GBytes) current = NULL;
  gsize key_len;
  const guint8 *key_data = g_bytes_get_data (key, &key_len);

  current = qstore_kv_get (self->catalog, key_data, key_len, NULL);
  return !same_bytes (current, value);
}

/* QStoreSqlTable */

static void
finalize_statement (gpointer stmt)
{
  sqlite3_finalize (stmt);
}

QStoreSqlTable *
qstore_sql_table_new (QStoreDatabase *database,
                      QStoreTable    *table)
{
  QStoreSqlTable *self = g_new0 (QStoreSqlTable, 1);

  g_atomic_ref_count_init (&self->ref);
  self->database = database;
  self->rowid_by_key = g_hash_table_new_full (g_bytes_hash, g_bytes_equal,
                                              (GDestroyNotify) g_bytes_unref, NULL);
  self->key_by_rowid = g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);
  self->default_stmts = g_ptr_array_new_with_free_func (finalize_statement);
  qstore_sql_table_set_table (self, table);
  return self;
}

QStoreSqlTable *
qstore_sql_table_ref (QStoreSqlTable *self)
{
  g_atomic_ref_count_inc (&self->ref);
  return self;
}

void
qstore_sql_table_unref (QStoreSqlTable *self)
{
  if (!g_atomic_ref_count_dec (&self->ref))
    return;

  g_clear_pointer (&self->default_stmts, g_ptr_array_unref);
  g_clear_pointer (&self->rowid_by_key, g_hash_table_unref);
  g_clear_pointer (&self->key_by_rowid, g_ptr_array_unref);
  g_clear_object (&self->table);
  g_free (self);
}

void
qstore_sql_table_set_table (QStoreSqlTable *self,
                            QStoreTable    *table)
{
  g_set_object (&self->table, table);
  self->schema = qstore_table_get_table_schema (table);
  /* The DEFAULTs may have changed with the schema. */
  g_ptr_array_set_size (self->default_stmts, 0);
  g_ptr_array_set_size (self->default_stmts, self->schema->columns->len);
  qstore_sql_table_forget_rowids (self);
}

void
qstore_sql_table_forget_rowids (QStoreSqlTable *self)
{
  if (self->key_by_rowid->len == 0)
    return;
  g_hash_table_remove_all (self->rowid_by_key);
  g_ptr_array_set_size (self->key_by_rowid, 0);
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
 * Lists the user's tables of the database, by name as declared: not TEMP
 * tables, not the contents of materialized views, and not the tables
 * qstore's own layers keep (see qstore_table_name_is_reserved()).
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
        if (entry->owner == NULL && !qstore_table_name_is_reserved (entry->schema->name))
          g_ptr_array_add (names, g_strdup (entry->schema->name));
    }
  g_ptr_array_sort (names, compare_names);
  g_ptr_array_add (names, NULL);
  return (char **) g_ptr_array_free (names, FALSE);
}

/**
 * qstore_table_name_is_reserved:
 * @name: a table's name
 *
 * Tells whether @name belongs to qstore itself: names that start with
 * `_qstore_` (in any case) are those of the tables qstore's own layers
 * keep their state in, such as an unsafe window's or a staged import's.
 * SQL refuses to create such a table, and
 * qstore_database_list_tables() leaves them out; they can still be read.
 *
 * Returns: %TRUE when @name is reserved
 */
gboolean
qstore_table_name_is_reserved (const char *name)
{
  g_return_val_if_fail (name != NULL, FALSE);

  return g_ascii_strncasecmp (name, QSTORE_RESERVED_TABLE_PREFIX,
                              strlen (QSTORE_RESERVED_TABLE_PREFIX)) == 0;
}
