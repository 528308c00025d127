/* qstore-pending-private.h: the write buffer of one transaction
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "qstore-kv.h"

G_BEGIN_DECLS

/* Buffered writes of one transaction, per store, last write wins per key.
 *
 * Every write becomes an *entry* appended to an arena: the key and value
 * bytes are copied there, packed, and never move until the buffer is
 * cleared. Each store keeps a B+ tree of entry pointers ordered by key;
 * writes to a store nothing has read yet in the transaction are only
 * listed, and sorted into its tree at once when it is first read, a
 * savepoint opens or the commit counts them.
 * While undo is enabled (a savepoint is open) an entry also records the
 * entry it replaced, so qstore_pending_undo_to() can walk the arena back
 * from a mark and restore every tree. The walk needs no other log: the
 * arena itself is the log. */
typedef struct _QStorePending QStorePending;

/* A position in the arena: everything written after it can be undone. */
typedef struct
{
  guint block;
  gsize offset;
} QStorePendingMark;

/* A position in one store's tree. Valid until the tree changes: compare
 * qstore_pending_store_get_stamp() and seek again when it moved. */
typedef struct
{
  gpointer leaf;
  int      slot;
} QStorePendingCursor;

QStorePending     *qstore_pending_new               (void);
void               qstore_pending_free              (QStorePending        *self);
/* Drops every entry and lets go of every store's handle (the end of a
 * transaction). */
void               qstore_pending_clear             (QStorePending        *self);
/* Drops every entry but keeps stores and their stamps (back to begin).
 * The arena stays: entries handed out remain readable. */
void               qstore_pending_reset             (QStorePending        *self);
gsize              qstore_pending_get_n_entries     (QStorePending        *self);
/* The bytes the arena holds (keys, values and entry headers). */
gsize              qstore_pending_get_size          (QStorePending        *self);

void               qstore_pending_set_undo          (QStorePending        *self,
                                                     gboolean              undo);
QStorePendingMark  qstore_pending_mark              (QStorePending        *self);
void               qstore_pending_undo_to           (QStorePending        *self,
                                                     QStorePendingMark     mark);

/* Stores: a small integer per physical store name. The first #QStoreKV a
 * transaction names a store with is the one written. */
guint              qstore_pending_lookup_store      (QStorePending        *self,
                                                     QStoreKV             *kv,
                                                     gboolean              create);
guint              qstore_pending_get_n_stores      (QStorePending        *self);
QStoreKV          *qstore_pending_store_get_kv      (QStorePending        *self,
                                                     guint                 store);
const char        *qstore_pending_store_get_name    (QStorePending        *self,
                                                     guint                 store);
gsize              qstore_pending_store_get_n_entries (QStorePending      *self,
                                                     guint                 store);
guint64            qstore_pending_store_get_stamp   (QStorePending        *self,
                                                     guint                 store);

#define QSTORE_PENDING_NO_STORE G_MAXUINT

/* Writes. @value NULL with @tombstone: a delete. */
void               qstore_pending_write             (QStorePending        *self,
                                                     guint                 store,
                                                     const guint8         *key,
                                                     gsize                 key_len,
                                                     const guint8         *value,
                                                     gsize                 value_len,
                                                     gboolean              tombstone);

/* Entries, as handed out by lookups and cursors (pointers into the arena,
 * valid until the buffer is cleared). */
const guint8      *qstore_pending_lookup            (QStorePending        *self,
                                                     guint                 store,
                                                     const guint8         *key,
                                                     gsize                 key_len);
const guint8      *qstore_pending_entry_get_key     (const guint8         *entry,
                                                     gsize                *key_len);
/* NULL for a delete. */
const guint8      *qstore_pending_entry_get_value   (const guint8         *entry,
                                                     gsize                *value_len);
gboolean           qstore_pending_entry_is_tombstone (const guint8        *entry);

/* Cursors. The seeks position on the first entry at/after (@reverse: the
 * last entry at/before) @key, or strictly after/before it when
 * !@inclusive; @key NULL means the first (last) entry of the store. */
gboolean           qstore_pending_seek              (QStorePending        *self,
                                                     guint                 store,
                                                     const guint8         *key,
                                                     gsize                 key_len,
                                                     gboolean              inclusive,
                                                     gboolean              reverse,
                                                     QStorePendingCursor  *cursor);
gboolean           qstore_pending_cursor_step       (QStorePendingCursor  *cursor,
                                                     gboolean              reverse);
const guint8      *qstore_pending_cursor_get_entry  (const QStorePendingCursor *cursor);

G_END_DECLS
