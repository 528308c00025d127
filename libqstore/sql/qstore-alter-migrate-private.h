/* qstore-alter-migrate-private.h: moving a table's rows to a new definition
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "qstore-database-private.h"

G_BEGIN_DECLS

/* An index SQLite's CREATE TABLE does not make (it has its own CREATE
 * INDEX). */
gboolean  qstore_alter_is_explicit_index (const QStoreIndexSchema *index);
/* Replaces the mirror of @old on scratch by @sql, with @old's explicit
 * indexes but those in @skip. */
gboolean  qstore_alter_replace_mirror    (QStoreDatabase     *self,
                                          QStoreTableSchema  *old,
                                          const char         *sql,
                                          GHashTable         *skip,
                                          GError            **error);

typedef struct
{
  QStoreDatabase     *db;
  QStoreTable        *old_table;
  QStoreTable        *new_table;
  QStoreTableSchema  *old_schema;
  QStoreTableSchema  *new_schema;
  int                *old_column;    /* new column → its old position */
  gboolean            validate;      /* every row through the new mirror */
} QStoreMigration;

/* Moves the rows of @m's old table to the new one, with their index
 * entries and the new catalog entry, all or nothing. */
gboolean  qstore_alter_migrate           (QStoreMigration    *m,
                                          GError            **error);

/* Whether `PRAGMA foreign_keys` is on, so SQLite would enforce a new
 * FOREIGN KEY. */
gboolean  qstore_alter_foreign_keys_enforced (QStoreDatabase *self);
/* Checks the rows of @table against the FOREIGN KEY @name: @columns
 * reference @referenced (NULL: the primary key) of @parent_table. */
gboolean  qstore_alter_check_foreign_key (QStoreDatabase  *self,
                                          const char      *table,
                                          const char      *name,
                                          GPtrArray       *columns,
                                          const char      *parent_table,
                                          GPtrArray       *referenced,
                                          GError         **error);

G_END_DECLS
