/* qstore-vtab-auto-private.h: a statement's automatic index over one column
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <sqlite3.h>

#include "qstore-codec-private.h"
#include "qstore-table-schema-private.h"

G_BEGIN_DECLS

typedef struct _QStoreAutoIndex QStoreAutoIndex;

/* An empty structure for the values of column @column (of @affinity),
 * compared under @collation. */
QStoreAutoIndex *qstore_auto_index_new       (guint               column,
                                              QStoreCollation     collation,
                                              QStoreAffinity      affinity);
void             qstore_auto_index_free      (QStoreAutoIndex    *self);
gboolean         qstore_auto_index_is_for    (QStoreAutoIndex    *self,
                                              guint               column,
                                              QStoreCollation     collation);
/* Bytes held: rows, keys and the table. */
gsize            qstore_auto_index_get_size  (QStoreAutoIndex    *self);

/* Copies one row in: its data key, its stored bytes, and @value, its
 * value in the column (borrowed for the call only). */
gboolean         qstore_auto_index_add       (QStoreAutoIndex    *self,
                                              const guint8       *key,
                                              gsize               key_len,
                                              const guint8       *row,
                                              gsize               row_len,
                                              const QStoreValue  *value,
                                              GError            **error);

/* Sets @matches (guint32 row numbers, ascending, no repeats) to the rows
 * whose value may equal @arg under SQLite's comparison: exactly those when
 * the comparison's meaning is certain, else a superset SQLite's own check
 * of each row narrows. NULL matches nothing. */
gboolean         qstore_auto_index_probe     (QStoreAutoIndex    *self,
                                              sqlite3_value      *arg,
                                              GArray             *matches,
                                              GError            **error);

/* Row @n as added: its data key and stored bytes, valid as long as @self. */
void             qstore_auto_index_get_row   (QStoreAutoIndex    *self,
                                              guint32             n,
                                              const guint8      **key,
                                              gsize              *key_len,
                                              const guint8      **row,
                                              gsize              *row_len);

/* A correlated subquery's tables are opened again for every row of the
 * query around it: what a cursor learnt about its automatic index (the
 * structure, or how many probes it saw) is shelved when it closes, for
 * the next cursor of the same plan in the same statement run. The shelf
 * empties when no cursor of the database is open: statements have
 * ended. A shelved structure is taken only under the same token (the
 * table's writes, the transaction, the snapshot). */
typedef struct _QStoreAutoShelf QStoreAutoShelf;

typedef struct
{
  guint64  writes;       /* the table's n_writes */
  guint64  in_transaction;
  guint64  serial;       /* the shared snapshot held, 0 for none */
} QStoreAutoToken;

QStoreAutoShelf *qstore_auto_shelf_new          (void);
void             qstore_auto_shelf_free         (QStoreAutoShelf       *self);
void             qstore_auto_shelf_opened       (QStoreAutoShelf       *self);
void             qstore_auto_shelf_closed       (QStoreAutoShelf       *self);
/* Shelves @index (taken; may be NULL) and @probes for @owner's plan
 * @plan (its idxStr). */
void             qstore_auto_shelf_put          (QStoreAutoShelf       *self,
                                                 gconstpointer          owner,
                                                 const char            *plan,
                                                 QStoreAutoIndex       *index,
                                                 guint                  probes,
                                                 const QStoreAutoToken *token);
/* What was shelved for @owner's @plan under @token: the structure (or
 * NULL) and, in *@probes, the probes so far (0 when nothing matches). */
QStoreAutoIndex *qstore_auto_shelf_take         (QStoreAutoShelf       *self,
                                                 gconstpointer          owner,
                                                 const char            *plan,
                                                 const QStoreAutoToken *token,
                                                 guint                 *probes);
/* Forgets what @owner shelved (it goes away). */
void             qstore_auto_shelf_forget       (QStoreAutoShelf       *self,
                                                 gconstpointer          owner);

G_END_DECLS
