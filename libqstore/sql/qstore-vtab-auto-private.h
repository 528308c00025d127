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

G_END_DECLS
