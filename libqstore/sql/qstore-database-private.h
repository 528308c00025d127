/* qstore-database-private.h: what the SQL front's pieces share
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <sqlite3.h>

#include "qstore-database.h"
#include "qstore-table-private.h"

G_BEGIN_DECLS

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

  /* The materialized view whose contents the table holds, or NULL (not
   * owned; see qstore-mview-private.h). */
  gpointer           mview;
} QStoreSqlTable;

QStoreSqlTable *qstore_sql_table_new            (QStoreDatabase     *database,
                                                 QStoreTable        *table);
QStoreSqlTable *qstore_sql_table_ref            (QStoreSqlTable     *self);
void            qstore_sql_table_unref          (QStoreSqlTable     *self);
void            qstore_sql_table_set_table      (QStoreSqlTable     *self,
                                                 QStoreTable        *table);
void            qstore_sql_table_forget_rowids  (QStoreSqlTable     *self);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (QStoreSqlTable, qstore_sql_table_unref)

/* What the INSERT being run leaves to the columns' DEFAULT. */
typedef struct
{
  char     *table;                  /* as written */
  gboolean  default_values;         /* INSERT … DEFAULT VALUES */
  GPtrArray *columns;               /* char *: the column list; NULL when none is given */
} QStoreInsertShape;

struct _QStoreDatabase
{
  GObject             parent_instance;

  QStoreOpenFlags     flags;
  QStoreProvider     *provider;
  QStoreCoordinator  *coordinator;
  QStoreKV           *catalog;

  /* Where users' SQL runs: qstore tables are virtual tables here, TEMP
   * tables are ordinary ones. */
  sqlite3            *db;
  /* Mirrors every qstore table as an ordinary empty table: SQLite parses
   * DDL there, and tables evaluate CHECK constraints and partial-index
   * predicates there. */
  sqlite3            *scratch;

  GHashTable         *tables;       /* lower-cased name → QStoreSqlTable */

  /* The last error a virtual-table callback raised during the statement
   * being run: it keeps its own code, which SQLite's would lose. */
  GError             *callback_error;

  /* The INSERT being run, for the DEFAULTs SQLite leaves to us. */
  QStoreInsertShape  *insert_shape;

  /* The authorizer of the main connection while a statement prepares
   * (qstore_database_set_authorizer()), or NULL. */
  int               (*authorizer) (void *, int, const char *, const char *,
                                   const char *, const char *);
  gpointer            authorizer_data;

  /* Inside BEGIN … COMMIT until a statement writes: the state every
   * statement reads, as in SQLite's read transactions. */
  QStoreSnapshot     *read_snapshot;

  QStoreRehydrationResult *rehydration;  /* what open read back from the catalog */
  struct _QStoreMViews *mviews;          /* the materialized views (qstore-mview.c) */
  char               *clean_shutdown;      /* the marker found at open, or NULL */
  gboolean            closed;
};

/* Errors */
void            qstore_database_take_callback_error (QStoreDatabase  *self,
                                                     GError          *error);
void            qstore_database_set_sqlite_error    (QStoreDatabase  *self,
                                                     sqlite3         *conn,
                                                     int              rc,
                                                     GError         **error);
gboolean        qstore_database_check_writable      (QStoreDatabase  *self,
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

/* Runs @sql (statements without results) on @conn. */
gboolean        qstore_database_run                 (QStoreDatabase  *self,
                                                     sqlite3         *conn,
                                                     const char      *sql,
                                                     GError         **error);

QStoreKV       *qstore_database_get_catalog         (QStoreDatabase  *self);

/* The main connection, where users' SQL runs: for in-tree programs that
 * prepare their statements once and step them directly (qstore-bench).
 * Inline because the library exports no private symbol. Valid until the
 * database is closed; finalize every statement prepared on it first. */
static inline sqlite3 *
qstore_database_get_sqlite (QStoreDatabase *self)
{
  return self->db;
}

/* Tables */
QStoreSqlTable *qstore_database_lookup              (QStoreDatabase  *self,
                                                     const char      *name);
/* Makes the QStoreTable for @schema (which exists on scratch) and its
 * virtual table on the main connection. Returns the entry (owned by the
 * database). */
QStoreSqlTable *qstore_database_attach_table        (QStoreDatabase  *self,
                                                     QStoreTableSchema *schema,
                                                     GError         **error);
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

/* Writes one catalog bundle in a transaction of its own. */
gboolean        qstore_database_commit_catalog      (QStoreDatabase  *self,
                                                     const char      *schema,
                                                     const char      *table,
                                                     const char      *bundle,
                                                     GError         **error);

G_END_DECLS
