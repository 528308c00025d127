/* qstore-lmdb-store.h: stores, snapshots and iterators of the LMDB provider
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "qstore-lmdb-read.h"

G_BEGIN_DECLS

#define QSTORE_TYPE_LMDB_KV (qstore_lmdb_kv_get_type ())
G_DECLARE_FINAL_TYPE (QStoreLmdbKV, qstore_lmdb_kv, QSTORE, LMDB_KV, GObject)

#define QSTORE_TYPE_LMDB_SNAPSHOT (qstore_lmdb_snapshot_get_type ())
G_DECLARE_FINAL_TYPE (QStoreLmdbSnapshot, qstore_lmdb_snapshot,
                      QSTORE, LMDB_SNAPSHOT, QStoreSnapshot)

#define QSTORE_TYPE_LMDB_ITER (qstore_lmdb_iter_get_type ())
G_DECLARE_FINAL_TYPE (QStoreLmdbIter, qstore_lmdb_iter, QSTORE, LMDB_ITER, QStoreIter)

struct _QStoreLmdbKV
{
  GObject             parent_instance;

  QStoreProvider     *provider;
  QStoreLmdbHandle   *handle;  /* inside @provider */
  char               *name;
  QStoreLmdbDbi      *entry;   /* atomic: the published handle, once known */

  /* The handle in the write transaction numbered write_serial, also when
   * that transaction made it; env->write_lock. */
  guint64             write_serial;
  MDB_dbi             write_dbi;
};

/* @handle lives inside @provider. */
QStoreKV       *qstore_lmdb_kv_new                (QStoreProvider    *provider,
                                                   QStoreLmdbHandle  *handle,
                                                   const char        *name);
QStoreSnapshot *qstore_lmdb_snapshot_new          (QStoreProvider    *provider,
                                                   QStoreLmdbHandle  *handle,
                                                   GError           **error);

QStoreLmdbDbi  *qstore_lmdb_kv_lookup_entry       (QStoreLmdbKV      *self);

/* An iterator through @rt over the store whose handle is @dbi (named
 * @name), or over nothing when !@exists. It holds a reference on @owner,
 * whose transaction @rt is; without an owner it owns @rt (held) and ends
 * it when finalized. */
QStoreIter     *qstore_lmdb_iter_new              (QStoreProvider      *provider,
                                                   QStoreLmdbHandle    *handle,
                                                   GObject             *owner,
                                                   QStoreLmdbReadTxn   *rt,
                                                   gboolean             exists,
                                                   MDB_dbi              dbi,
                                                   const char          *name,
                                                   const QStoreBounds  *bounds,
                                                   GError             **error);

/* The published handle of the store, NULL when it has none. */
static inline QStoreLmdbDbi *
qstore_lmdb_kv_get_entry (QStoreLmdbKV *self)
{
  QStoreLmdbDbi *entry = g_atomic_pointer_get (&self->entry);

  if (G_LIKELY (entry != NULL && !g_atomic_int_get (&entry->dropped)))
    return entry;
  return qstore_lmdb_kv_lookup_entry (self);
}

void            qstore_lmdb_store_register_types  (GTypeModule       *module);

G_END_DECLS
