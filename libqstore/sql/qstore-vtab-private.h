/* qstore-vtab-private.h: the `qstore` virtual-table module
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "qstore-vtab-plan-private.h"

G_BEGIN_DECLS

typedef struct _QStoreCursor QStoreCursor;

#define QSTORE_VTAB_SPARES 4

typedef struct
{
  sqlite3_vtab    base;
  QStoreSqlTable *entry;
  /* Closed cursors kept for the next xOpen: SQLite opens and closes one
   * per statement run, and runs of other statements on the same table
   * often nest in it (ids from an index, then each row by id). */
  QStoreCursor   *spares[QSTORE_VTAB_SPARES];
  guint           n_spares;

  /* The cursor whose index walk fetched a row through the shared
   * snapshot last: a point read of the same key that follows (ids from an
   * index, then each row by id) copies the row from that cursor's buffer
   * while the cursor still sits on it, instead of reading it again. */
  QStoreCursor   *last_walker;
} QStoreVtab;

/* Reports @error (taken) to SQLite through @vtab, and keeps it on the
 * database so the caller sees qstore's code rather than SQLite's. */
int       qstore_vtab_fail               (sqlite3_vtab       *vtab,
                                          QStoreDatabase     *database,
                                          GError             *error);
/* xUpdate (qstore-vtab-write.c) */
int       qstore_vtab_update             (sqlite3_vtab       *vtab,
                                          int                 argc,
                                          sqlite3_value     **argv,
                                          sqlite3_int64      *rowid_out);

/* Registers the module on @self's main connection. */
gboolean  qstore_vtab_register_module    (QStoreDatabase     *self,
                                          GError            **error);
/* The CREATE TABLE SQLite is told for @schema: the columns with their
 * declared types and collations, as a rowid table without constraints. */
char     *qstore_vtab_declaration        (QStoreTableSchema  *schema);

G_END_DECLS
