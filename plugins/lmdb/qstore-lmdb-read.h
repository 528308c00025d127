/* qstore-lmdb-read.h: read transactions of the LMDB provider
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "qstore-lmdb-env.h"

G_BEGIN_DECLS

/* What one opened provider holds of its environment. It lives inside the
 * provider object; the stores, snapshots and iterators that point at it
 * hold a reference on that object. */
typedef struct
{
  QStoreLmdbEnv *env;          /* set by a successful init, kept until finalize */
  GQueue         live;         /* QStoreLmdbReadTxn of snapshots and iterators; env->lock */
  guint          n_transient;  /* env->lock */
  gboolean       closed;       /* env->lock */
  gpointer       write_txn;    /* the open QStoreLmdbWriteTxn; its thread only */
} QStoreLmdbHandle;

typedef struct
{
  MDB_txn  *txn;         /* NULL once the provider closed */
  guint64   epoch;
  guint64   known_gen;
  gboolean  known_gen_valid;
  gboolean  have_marker;
  GSList   *cursors;     /* open cursors, closed with the provider */
  GList     link;        /* in the handle's live read transactions */
} QStoreLmdbReadTxn;

/* Starts a read transaction. Held ones (snapshots, iterators) are listed
 * so that closing the provider can end them; transient ones end before the
 * call that made them returns, and closing waits for them. */
gboolean           qstore_lmdb_read_begin          (QStoreLmdbHandle   *handle,
                                                    QStoreLmdbReadTxn  *rt,
                                                    gboolean            held,
                                                    GError            **error);
void               qstore_lmdb_read_end            (QStoreLmdbHandle   *handle,
                                                    QStoreLmdbReadTxn  *rt,
                                                    gboolean            held);
/* Whether every store that exists as of @rt has a handle @rt can use: the
 * generation in @rt is the one the handle table was built for. */
int                qstore_lmdb_read_check_complete (QStoreLmdbEnv      *env,
                                                    QStoreLmdbReadTxn  *rt,
                                                    gboolean           *complete);
/* A read transaction that sees every store of its snapshot: started again
 * after a rescan when another process changed the set of stores. */
QStoreLmdbReadTxn *qstore_lmdb_read_begin_complete (QStoreLmdbHandle   *handle,
                                                    gboolean            held,
                                                    GError            **error);

/* Closes the handle: waits for transient reads, ends the held ones. */
void               qstore_lmdb_handle_close        (QStoreLmdbHandle   *handle);

G_END_DECLS
