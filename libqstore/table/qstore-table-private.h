/* qstore-table-private.h: the table API the SQL layer drives
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "qstore-table.h"
#include "qstore-table-schema-private.h"

G_BEGIN_DECLS

/* Binds @schema to its stores in the coordinator's provider. @eval_db is an
 * SQLite connection the table may create private helper tables on, to
 * evaluate CHECK constraints and partial-index predicates with SQLite's own
 * semantics (affinity, collation, functions). Nothing is written. */
QStoreTable             *qstore_table_new                (QStoreCoordinator        *coordinator,
                                                          QStoreTableSchema        *schema,
                                                          sqlite3                  *eval_db,
                                                          GError                  **error);
QStoreTableSchema       *qstore_table_get_table_schema   (QStoreTable              *self);
void                     qstore_table_set_contents_of    (QStoreTable              *self,
                                                          const char               *view);
QStoreKV                *qstore_table_get_data_store     (QStoreTable              *self);
QStoreKV                *qstore_table_get_index_store    (QStoreTable              *self,
                                                          guint                     index);

/* Writes take values in column order that already carry the column
 * affinity (the SQL layer applies it). All run inside the coordinator's
 * transaction (they begin one when none is open, and the caller commits).
 * On a conflict: ABORT/FAIL/ROLLBACK return FALSE with
 * QSTORE_ERROR_CONSTRAINT and SQLite's message ("UNIQUE constraint failed:
 * t.a, t.b", "NOT NULL constraint failed: t.a", "CHECK constraint failed:
 * name"), nothing of this row written; IGNORE returns TRUE with *ignored set;
 * REPLACE deletes the rows in the way (recording their deletes) and writes.
 * For a rowid table or an INTEGER PRIMARY KEY given as NULL, a new id is
 * assigned as SQLite would (max + 1, or a free random one after INT64_MAX)
 * and returned in *rowid.
 *
 * A PRIMARY KEY column (not an INTEGER PRIMARY KEY) may hold NULL, as in
 * SQLite's rowid tables: such rows never conflict on the primary key (see
 * qstore_table_encode_key() for their keys). */
gboolean                 qstore_table_insert_values      (QStoreTable              *self,
                                                          QStoreValue              *values,
                                                          QStoreConflict            conflict,
                                                          gint64                   *rowid,
                                                          gboolean                 *ignored,
                                                          GError                  **error);
/* The same, with the rowid of `INSERT INTO t(rowid, …)` when
 * @explicit_rowid is not NULL: the new row's rowid in a table without
 * INTEGER PRIMARY KEY (a row that has it already conflicts as "UNIQUE
 * constraint failed: t.rowid"), the INTEGER PRIMARY KEY's value when that
 * column is NULL (a value in the column wins). A table keyed by another
 * PRIMARY KEY keeps no rowid: QSTORE_ERROR_UNSUPPORTED. */
gboolean                 qstore_table_insert_values_with_rowid (QStoreTable        *self,
                                                          QStoreValue              *values,
                                                          const gint64             *explicit_rowid,
                                                          QStoreConflict            conflict,
                                                          gint64                   *rowid,
                                                          gboolean                 *ignored,
                                                          GError                  **error);
/* Replaces the row stored under @old_key; a changed primary key moves it
 * (decided on encoded keys: a NOCASE case-only change stays in place). A
 * table without INTEGER PRIMARY KEY keeps the row's rowid. */
gboolean                 qstore_table_update_values      (QStoreTable              *self,
                                                          const guint8             *old_key,
                                                          gsize                     old_key_len,
                                                          QStoreValue              *values,
                                                          QStoreConflict            conflict,
                                                          gboolean                 *ignored,
                                                          GError                  **error);
/* The same, with the rowid of `UPDATE t SET rowid = …` when @new_rowid is
 * not NULL: the row moves to that rowid (conflicting like an insert with
 * an explicit rowid); with an INTEGER PRIMARY KEY the column takes it
 * unless the new values change the column themselves. A table keyed by
 * another PRIMARY KEY keeps no rowid: QSTORE_ERROR_UNSUPPORTED. */
gboolean                 qstore_table_update_values_with_rowid (QStoreTable        *self,
                                                          const guint8             *old_key,
                                                          gsize                     old_key_len,
                                                          QStoreValue              *values,
                                                          const gint64             *new_rowid,
                                                          QStoreConflict            conflict,
                                                          gboolean                 *ignored,
                                                          GError                  **error);
gboolean                 qstore_table_delete_key         (QStoreTable              *self,
                                                          const guint8             *key,
                                                          gsize                     key_len,
                                                          GError                  **error);

/* Keys. A row whose PRIMARY KEY holds a NULL is stored under its encoded
 * key followed by a suffix that keeps it apart from other such rows (see
 * QStoreTableSchema.pk): the key encoded here is then only the prefix of
 * those rows' keys, under which no row is ever stored. */
gboolean                 qstore_table_encode_key         (QStoreTable              *self,
                                                          const QStoreValue        *values,
                                                          GByteArray               *out,
                                                          GError                  **error);
/* The key prefix of the first @n_parts key parts of index @index (-1: the
 * primary key) from @values (one value per part), for seeks. */
gboolean                 qstore_table_encode_key_prefix  (QStoreTable              *self,
                                                          int                       index,
                                                          const QStoreValue        *values,
                                                          guint                     n_parts,
                                                          GByteArray               *out,
                                                          GError                  **error);

/* Reads, merging the transaction's own writes */
GBytes                  *qstore_table_get_row            (QStoreTable              *self,
                                                          const guint8             *key,
                                                          gsize                     key_len,
                                                          GError                  **error);
/* The same without a copy: see qstore_coordinator_lookup(). */
gboolean                 qstore_table_lookup_row         (QStoreTable              *self,
                                                          const guint8             *key,
                                                          gsize                     key_len,
                                                          const guint8            **row,
                                                          gsize                    *row_len,
                                                          GError                  **error);
/* Rows of the data store within @bounds (keys are data keys). */
QStoreIter              *qstore_table_scan               (QStoreTable              *self,
                                                          const QStoreBounds       *bounds,
                                                          GError                  **error);
/* Entries of index @index within @bounds; each value is a data key. */
QStoreIter              *qstore_table_scan_index         (QStoreTable              *self,
                                                          guint                     index,
                                                          const QStoreBounds       *bounds,
                                                          GError                  **error);

/* Decodes a stored row into @values (n_columns of them; zero copy from
 * @row). For a rowid table *rowid gets the row's rowid. */
gboolean                 qstore_table_decode_row         (QStoreTable              *self,
                                                          const guint8             *row,
                                                          gsize                     row_len,
                                                          QStoreValue              *values,
                                                          gint64                   *rowid,
                                                          GError                  **error);

/* Inside the table: qstore-table.c (the object, its reads and the GVariant
 * API), qstore-table-layout.c, qstore-table-eval.c and qstore-table-write.c
 * share the instance struct and the helpers below. Other layers use the
 * functions above only. */

typedef struct
{
  GByteArray *key;
  GByteArray *old_entry;
  GByteArray *new_entry;
  GByteArray *row;
  GPtrArray  *conflicts;   /* GBytes */
} WriteBuffers;

struct _QStoreTable
{
  GObject             parent_instance;

  QStoreCoordinator  *coordinator;
  QStoreTableSchema  *schema;
  sqlite3            *eval_db;

  QStoreKV           *data_store;
  GPtrArray          *index_stores;     /* QStoreKV, as schema->indexes */

  guint               n_values;         /* values in a stored row */
  gint                rowid_position;   /* where the row holds its rowid, or -1 */

  /* Partial indexes, and their column in the predicate query. */
  GArray             *predicate_column; /* int per index, -1 when not partial */
  gboolean            needs_eval;

  sqlite3_stmt       *eval_savepoint;
  sqlite3_stmt       *eval_rollback;
  sqlite3_stmt       *eval_release;
  sqlite3_stmt       *eval_insert;
  sqlite3_stmt       *eval_predicates;

  /* The largest rowid, trusted while the coordinator's epoch stays the
   * same (a rollback may bring back rows above it) and its row still
   * exists: every write through this table keeps it at or above the true
   * maximum, so a point read confirms it (a delete drops that row). It
   * also outlives the end of its transaction when that was a commit:
   * max_rowid_tx is the last committed transaction id it was known
   * under, so epoch + 1 with tx + 1 means exactly that one commit and
   * nothing else happened since (see next_rowid()). */
  gboolean            max_rowid_known;
  gint64              max_rowid;
  guint64             max_rowid_epoch;
  guint64             max_rowid_tx;

  /* The materialized view whose rows this table holds: the view writes
   * them, nobody else. */
  char               *contents_of;

  /* The buffers of write_row(), kept from row to row; a write that
   * starts while another is under way (from a change observer) gets its
   * own. */
  WriteBuffers        buffers;
  gboolean            writing;

  /* Rows written or removed through this table so far: what was read
   * from it under the same count is still what it holds (a statement's
   * automatic index is rebuilt when the count moved). */
  guint64             n_writes;
};

static inline const QStoreColumn *
qstore_table_column_at (QStoreTable *self,
                        guint        position)
{
  return g_ptr_array_index (self->schema->columns, position);
}

static inline const QStoreIndexSchema *
qstore_table_index_at (QStoreTable *self,
                       guint        position)
{
  return g_ptr_array_index (self->schema->indexes, position);
}

/* Keys, index entries and stored rows (qstore-table-layout.c) */
gboolean                 qstore_table_prefix_successor   (const guint8             *prefix,
                                                          gsize                     len,
                                                          GByteArray               *out);
gboolean                 qstore_table_append_data_key    (QStoreTable              *self,
                                                          const QStoreValue        *values,
                                                          GByteArray               *out,
                                                          GError                  **error);
gboolean                 qstore_table_append_index_columns (QStoreTable            *self,
                                                          guint                     index,
                                                          const QStoreValue        *values,
                                                          GByteArray               *out,
                                                          gboolean                 *has_null,
                                                          GError                  **error);
gboolean                 qstore_table_index_entry_key    (QStoreTable              *self,
                                                          guint                     index,
                                                          const QStoreValue        *values,
                                                          const guint8             *data_key,
                                                          gsize                     data_key_len,
                                                          GByteArray               *out,
                                                          GError                  **error);
gboolean                 qstore_table_read_stored_row    (QStoreTable              *self,
                                                          const guint8             *row,
                                                          gsize                     row_len,
                                                          QStoreValue              *values,
                                                          GError                  **error);

/* CHECK constraints and partial-index predicates, evaluated on the
 * mirror (qstore-table-eval.c) */
gboolean                 qstore_table_prepare_evaluation (QStoreTable              *self,
                                                          GError                  **error);
gboolean                 qstore_table_evaluate_row       (QStoreTable              *self,
                                                          const QStoreValue        *values,
                                                          gboolean                 *in_index,
                                                          GError                  **error);

/* The write path (qstore-table-write.c) */
void                     qstore_table_write_buffers_init (WriteBuffers             *buffers);
void                     qstore_table_write_buffers_clear (WriteBuffers            *buffers);

G_END_DECLS
