/* qstore-database-private.h: the database as its layers see it
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <sqlite3.h>

#include "qstore-database.h"
#include "qstore-statement-private.h"
#include "qstore-table-private.h"

G_BEGIN_DECLS

#define QSTORE_VTAB_MODULE_NAME "qstore"

/* Tables named so are kept by qstore's own layers (see
 * qstore_table_name_is_reserved()). */
#define QSTORE_RESERVED_TABLE_PREFIX "_qstore_"

/* One qstore table as the SQL layer sees it: the QStoreTable, plus what the
 * virtual table needs between calls. The virtual table on the main
 * connection holds a reference; DDL that changes the schema swaps @table
 * in place, so statements prepared later see the new one. */
typedef struct
{
  gatomicrefcount    ref;
  QStoreDatabase    *database;      /* not owned: the database outlives its tables */
  QStoreTable       *table;
  QStoreTableSchema *schema;        /* @table's */

  /* A table keyed by its PRIMARY KEY has no rowid, but SQLite wants one per
   * row (it may collect rowids first and update afterwards): ephemeral ids,
   * valid until the transaction ends. */
  GHashTable        *rowid_by_key;  /* GBytes → rowid (as a pointer) */
  GPtrArray         *key_by_rowid;  /* GBytes; rowid n is at n - 1 */

  /* `SELECT <default>` on the scratch connection, per column; NULL when
   * the column has no DEFAULT or it was not needed yet. */
  GPtrArray         *default_stmts;

  /* A table whose contents another object keeps (a materialized view
   * keeps its rows in one): @before_read brings them up to date before a
   * cursor reads them. NULL for the user's own tables. */
  gpointer           owner;
  gboolean         (*before_read) (gpointer   owner,
                                   GError   **error);
} QStoreSqlTable;

QStoreSqlTable *qstore_sql_table_new            (QStoreDatabase     *database,
                                                 QStoreTable        *table);
QStoreSqlTable *qstore_sql_table_ref            (QStoreSqlTable     *self);
void            qstore_sql_table_unref          (QStoreSqlTable     *self);
void            qstore_sql_table_set_table      (QStoreSqlTable     *self,
                                                 QStoreTable        *table);
void            qstore_sql_table_forget_rowids  (QStoreSqlTable     *self);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (QStoreSqlTable, qstore_sql_table_unref)

/* What the database is put together from (qstore-router-private.h),
 * opaque here. */
typedef struct _QStoreDatabaseSetup QStoreDatabaseSetup;

struct _QStoreDatabase
{
  GObject             parent_instance;

  QStoreOpenFlags     flags;
  QStoreProvider     *provider;
  gboolean            owns_provider;  /* closed with the database */
  QStoreCoordinator  *coordinator;
  QStoreKV           *catalog;
  const QStoreDatabaseSetup *setup;

  /* Where users' SQL runs: qstore tables are virtual tables here, TEMP
   * tables are ordinary ones. */
  sqlite3            *db;
  /* Mirrors every qstore table as an ordinary empty table: SQLite parses
   * DDL there, and tables evaluate CHECK constraints and partial-index
   * predicates there. */
  sqlite3            *scratch;

  GHashTable         *tables;       /* lower-cased name → QStoreSqlTable */
  /* Whether a table handed out ephemeral rowids since they were last
   * forgotten: most statements make none, and need not visit every table. */
  gboolean            rowids_given;

  /* Looked up by every statement run, so not among the extension states:
   * the router's statements read before (text → entry), and the
   * automatic indexes kept between runs of a statement. */
  GHashTable         *statements;
  guint64             statements_generation;  /* moves on as entries leave it */
  struct _QStoreAutoShelf *auto_shelf;

  /* What the layers above keep per database (see
   * qstore_database_get_extension_state()). */
  GArray             *extension_states;

  /* The last error a virtual-table callback raised during the statement
   * being run: it keeps its own code, which SQLite's would lose. */
  GError             *callback_error;

  /* The INSERT being run, for the DEFAULTs SQLite leaves to us: its
   * statement's or its cache entry's, lent for the run. */
  const QStoreInsertShape *insert_shape;

  /* The authorizer of the main connection while a statement prepares
   * (qstore_database_set_authorizer()), or NULL. */
  int               (*authorizer) (void *, int, const char *, const char *,
                                   const char *, const char *);
  gpointer            authorizer_data;

  /* Hears, while a statement prepares on the main connection, which
   * columns of each qstore table it uses (the planner's colUsed: bit i is
   * column i, bit 63 every column from 63 on), or NULL. The authorizer
   * misses the columns that a join's USING or NATURAL compares. */
  void              (*columns_used) (gpointer        data,
                                     QStoreSqlTable *entry,
                                     guint64         mask);
  gpointer            columns_used_data;

  /* What ALTER TABLE … RENAME TO does to a qstore table's stores and
   * catalog, called from the virtual table's xRename. */
  gboolean          (*rename_table) (QStoreDatabase  *self,
                                     QStoreSqlTable  *entry,
                                     const char      *new_name,
                                     GError         **error);

  /* Above 0 while a layer of qstore runs its own DDL
   * (qstore_database_exec_reserved()): the only time a table with a
   * reserved name may be created. */
  guint               reserved_ddl;

  /* Inside BEGIN … COMMIT until a statement writes: the state every
   * statement reads (qstore_database_update_read_snapshot()), and the
   * iterators finished walks left over it (ReadIter), for the next walk
   * of their store to seek (qstore_database_take_read_iter()). */
  QStoreSnapshot     *read_snapshot;
  GArray             *read_iters;

  QStoreRehydrationResult *rehydration;  /* what open read back from the catalog */
  gboolean            closed;
};

/* Lifetime */

/* Releases everything: what the layers above keep first, then the
 * connections, the coordinator and the provider. Closing without a
 * marker, as a crash would. */
void            qstore_database_teardown            (QStoreDatabase  *self);

/* What a layer above keeps for this database: @state, freed with @free
 * at teardown (before the connections close), found again by @key. */
void            qstore_database_add_extension_state (QStoreDatabase  *self,
                                                     gconstpointer    key,
                                                     gpointer         state,
                                                     GDestroyNotify   free);
gpointer        qstore_database_get_extension_state (QStoreDatabase  *self,
                                                     gconstpointer    key);

/* Ends what BEGIN … COMMIT read while it only read (the router's). */
void            qstore_database_release_read_snapshot (QStoreDatabase *self);
void            qstore_database_update_read_snapshot  (QStoreDatabase *self,
                                                       gboolean        take);

/* Keeps @iter (transfer full), a finished walk of @store through
 * @snapshot, while @snapshot is the read transaction's; lets go of it
 * otherwise. */
void            qstore_database_keep_read_iter        (QStoreDatabase *self,
                                                       QStoreSnapshot *snapshot,
                                                       QStoreKV       *store,
                                                       QStoreIter     *iter);
/* An iterator kept for @store through @snapshot, to seek, or NULL. */
QStoreIter     *qstore_database_take_read_iter        (QStoreDatabase *self,
                                                       QStoreSnapshot *snapshot,
                                                       QStoreKV       *store);

/* Errors */
gboolean        qstore_database_check_open          (QStoreDatabase  *self,
                                                     GError         **error);
gboolean        qstore_database_check_writable      (QStoreDatabase  *self,
                                                     GError         **error);
void            qstore_database_take_callback_error (QStoreDatabase  *self,
                                                     GError          *error);
void            qstore_database_set_sqlite_error    (QStoreDatabase  *self,
                                                     sqlite3         *conn,
                                                     int              rc,
                                                     GError         **error);

/* Sets what authorizes statements prepared on the main connection, until
 * set again (NULL: everything is allowed). Use it rather than
 * sqlite3_set_authorizer(): installing an authorizer expires every
 * prepared statement of the connection, so the main connection keeps one
 * installed for good and it calls this one. */
static inline void
qstore_database_set_authorizer (QStoreDatabase *self,
                                int           (*authorizer) (void *, int, const char *,
                                                             const char *, const char *,
                                                             const char *),
                                gpointer        data)
{
  self->authorizer = authorizer;
  self->authorizer_data = data;
}

/* qstore_database_exec() for a layer of qstore creating the tables it
 * keeps its state in, whose names are reserved. Exported for tests that
 * plant such tables. */
QSTORE_AVAILABLE_IN_ALL
gboolean        qstore_database_exec_reserved       (QStoreDatabase  *self,
                                                     const char      *sql,
                                                     GError         **error);

/* Runs @sql (statements without results) on @conn. */
gboolean        qstore_database_run                 (QStoreDatabase  *self,
                                                     sqlite3         *conn,
                                                     const char      *sql,
                                                     GError         **error);

/* The main connection, where users' SQL runs: for in-tree programs that
 * prepare their statements once and step them directly (qstore-bench).
 * Inline because the library exports no private symbol. Valid until the
 * database is closed; finalize every statement prepared on it first. */
static inline sqlite3 *
qstore_database_get_sqlite (QStoreDatabase *self)
{
  return self->db;
}

/* The catalog */

QStoreKV       *qstore_database_get_catalog         (QStoreDatabase  *self);
/* Compare-write: stages @value under @key of the catalog in the
 * coordinator's open transaction unless the catalog, as that transaction
 * sees it, already holds exactly these bytes. Unchanged entries are never
 * rewritten, so reopening a store leaves its catalog byte-identical. A
 * read that fails counts as a difference: writing is always correct. */
void            qstore_database_put_catalog         (QStoreDatabase  *self,
                                                     GBytes          *key,
                                                     const char      *value);
/* The same decision for writes that bypass the coordinator
 * (qstore_provider_restructure()): whether the committed catalog holds
 * something other than @value under @key. */
gboolean        qstore_database_catalog_differs     (QStoreDatabase  *self,
                                                     GBytes          *key,
                                                     const char      *value);
/* Writes one catalog bundle in a transaction of its own. */
gboolean        qstore_database_commit_catalog      (QStoreDatabase  *self,
                                                     const char      *schema,
                                                     const char      *table,
                                                     const char      *bundle,
                                                     GError         **error);

/* Tables */
QStoreSqlTable *qstore_database_lookup              (QStoreDatabase  *self,
                                                     const char      *name);
/* Makes the QStoreTable for @schema (which exists on scratch) and its
 * virtual table on the main connection. Returns the entry (owned by the
 * database). */
QStoreSqlTable *qstore_database_attach_table        (QStoreDatabase     *self,
                                                     QStoreTableSchema  *schema,
                                                     GError            **error);
/* Forgets a table; @drop_virtual_table also drops it from the main
 * connection (else SQLite already did). */
void            qstore_database_detach_table        (QStoreDatabase  *self,
                                                     const char      *name,
                                                     gboolean         drop_virtual_table);
/* Connects SQLite to the table again, so it sees its current columns. */
gboolean        qstore_database_redeclare           (QStoreDatabase  *self,
                                                     QStoreSqlTable  *entry,
                                                     GError         **error);
/* Moves @entry to @table's name. */
void            qstore_database_rename_entry        (QStoreDatabase  *self,
                                                     QStoreSqlTable  *entry,
                                                     QStoreTable     *table);
/* Store name → what uses it, for every table but @except. */
GHashTable     *qstore_database_store_names         (QStoreDatabase  *self,
                                                     const char      *except);
/* New QStoreTables for the tables (but @except) whose CREATE TABLE text
 * SQLite rewrote on scratch (a renamed table their FOREIGN KEYs name). */
GPtrArray      *qstore_database_rewritten_tables    (QStoreDatabase  *self,
                                                     const char      *except,
                                                     GError         **error);
void            qstore_database_apply_tables        (QStoreDatabase  *self,
                                                     GPtrArray       *tables);
void            qstore_database_forget_table_stats  (QStoreDatabase  *self,
                                                     const char      *schema,
                                                     const char      *table);
/* Forgets every table's ephemeral rowids (they last one transaction). */
void            qstore_database_forget_rowids       (QStoreDatabase  *self);

G_END_DECLS
