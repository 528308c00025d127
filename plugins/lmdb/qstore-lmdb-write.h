/* qstore-lmdb-write.h: write transactions of the LMDB provider
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "qstore-lmdb-read.h"
#include "qstore-lmdb-store.h"

G_BEGIN_DECLS

/* One LMDB write transaction in the making; env->write_lock is held from
 * its begin to its commit or abort. */
typedef struct
{
  QStoreLmdbEnv *env;
  MDB_txn       *txn;
  guint64        serial;        /* stores cache their handle under it */
  GPtrArray     *pending;       /* QStoreLmdbDbi opened by txn, published at commit */
  gboolean       set_changed;   /* stores were created or removed */
  gboolean       hard_dropped;  /* handles were closed */
  gboolean       may_close;     /* no reader is live and none may begin */
} QStoreLmdbWrite;

/* Finds the handle of store @name in the write transaction, creating the
 * store when @create. *found is FALSE when it does not exist. */
int      qstore_lmdb_write_resolve (QStoreLmdbWrite      *wt,
                                    const char           *name,
                                    QStoreLmdbKV         *kv,
                                    gboolean              create,
                                    MDB_dbi              *dbi,
                                    gboolean             *found);
/* Erases store @name (a no-op when it does not exist); closes its handle
 * only when @wt may_close. */
int      qstore_lmdb_write_drop    (QStoreLmdbWrite      *wt,
                                    const char           *name);
/* Applies @ops, passing the write-op fault point before each. */
int      qstore_lmdb_write_apply   (QStoreLmdbWrite      *wt,
                                    const QStoreWriteOp  *ops,
                                    gsize                 n_ops,
                                    GError              **error);
/* Commits (the transaction is gone afterwards, whatever the result) and
 * publishes the store handles it opened. */
int      qstore_lmdb_write_commit  (QStoreLmdbWrite      *wt,
                                    QStoreWriteFlags      flags,
                                    GError              **error);
void     qstore_lmdb_write_abort   (QStoreLmdbWrite      *wt);

/* Runs one write transaction: @drop and the renames first (when
 * restructuring), then @ops. MDB_MAP_FULL grows the map and runs it all
 * again. The ops' stores are the provider's own (QStoreLmdbKV). */
gboolean qstore_lmdb_write (QStoreLmdbHandle     *handle,
                            const char * const   *drop,
                            const char * const   *rename_from,
                            const char * const   *rename_to,
                            const QStoreWriteOp  *ops,
                            gsize                 n_ops,
                            QStoreWriteFlags      flags,
                            GError              **error);

G_END_DECLS
