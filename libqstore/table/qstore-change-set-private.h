/* qstore-change-set-private.h: building change sets
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "qstore-change-set.h"

G_BEGIN_DECLS

/* A table's name as changes carry it: shared, reference counted, so a
 * million changes to one table hold one copy of it. Described, it also
 * says what its rows hold: @names, one per value of a stored row (the
 * columns, then the rowid when the table keeps one apart), and @key, the
 * positions of the values that make a row's key. The coordinator does
 * not know them; the change log describes the tables it writes. */
typedef struct
{
  char  *schema;
  char  *table;
  char **names;    /* NULL when not described */
  guint *key;
  guint  n_key;
} QStoreChangeTable;

QStoreChangeTable *qstore_change_table_new   (const char        *schema,
                                              const char        *table);
/* Takes @names and @key. */
QStoreChangeTable *qstore_change_table_new_described (const char *schema,
                                                      const char *table,
                                                      char      **names,
                                                      guint      *key,
                                                      guint       n_key);
QStoreChangeTable *qstore_change_table_ref   (QStoreChangeTable *self);
void               qstore_change_table_unref (QStoreChangeTable *self);

typedef struct
{
  QStoreChangeTable *table;    /* a reference */
  QStoreChangeOp     op;
  GBytes            *old_row;  /* NULL for an insert */
  GBytes            *new_row;  /* NULL for a delete */
} QStoreChange;

/* For g_array_set_clear_func() on an array of QStoreChange. */
void             qstore_change_clear          (gpointer     change);

/* Takes @changes, a GArray of QStoreChange with qstore_change_clear() as
 * its clear function. */
QStoreChangeSet *qstore_change_set_new_take   (guint64      tx_id,
                                               gint64       time,
                                               GArray      *changes);
/* The changes as recorded (rows still encoded), for those that follow
 * them row by row without decoding them into GVariants. */
const QStoreChange *qstore_change_set_peek_changes (QStoreChangeSet *self,
                                                    guint           *n_changes);

/* The set's QStoreChange array, not to be changed. */
GArray          *qstore_change_set_get_changes (QStoreChangeSet *self);

G_END_DECLS
