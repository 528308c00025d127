/* qstore-lmdb-check.h: what can be checked of an LMDB file without LMDB
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "qstore.h"

G_BEGIN_DECLS

/* How much of the page structure a walk reads. */
typedef enum
{
  QSTORE_LMDB_WALK_META,      /* nothing beyond the meta pages */
  QSTORE_LMDB_WALK_BRANCHES,  /* branch pages: where every page is, not what leaves hold */
  QSTORE_LMDB_WALK_FULL,      /* every page reachable, leaves and overflow pages included */
} QStoreLmdbWalk;

/* What the meta pages say, read with plain reads before LMDB maps a byte. */
typedef struct
{
  gboolean  empty;        /* data.mdb is missing or has no byte */
  guint64   size;         /* data.mdb's size in bytes */
  guint     page_size;
  guint64   last_page;    /* of the newer meta page */
  guint64   txnid;        /* of the newer meta page */
} QStoreLmdbFileInfo;

/* Reads and checks both meta pages of DIR/data.mdb and that the roots the
 * newer one names lie inside the file. Damage is %QSTORE_ERROR_CORRUPT,
 * naming what is wrong; a missing or empty file is not an error (see
 * @info->empty). */
gboolean qstore_lmdb_check_meta (const char           *dir,
                                 QStoreLmdbFileInfo   *info,
                                 GError              **error);

/* A walk reports this many problems, and counts the others. */
#define QSTORE_LMDB_MAX_REPORTED_PROBLEMS 50

/* A problem a walk found: @where is a store name, or "data.mdb" for the
 * file's own structure. */
typedef void (*QStoreLmdbProblemFunc) (const char *where,
                                       const char *message,
                                       gpointer    user_data);

typedef struct
{
  guint    n_stores;
  guint64  n_entries;
  guint64  n_pages;        /* pages read */
  gboolean foreign;        /* the main database is not a qstore one (no marker) */
} QStoreLmdbWalkStats;

/* Walks the page structure of the snapshot that transaction @txnid
 * committed, reading DIR/data.mdb with plain reads (the caller keeps that
 * snapshot alive with a read transaction). Every problem goes to @func,
 * up to a limit; a damaged subtree is not walked further. Returns the
 * number of problems, or -1 with @error set when the file cannot be read
 * or the snapshot is gone. */
int      qstore_lmdb_check_walk (const char             *dir,
                                 guint64                 txnid,
                                 QStoreLmdbWalk          mode,
                                 QStoreLmdbProblemFunc   func,
                                 gpointer                user_data,
                                 QStoreLmdbWalkStats    *stats,
                                 GError                **error);

G_END_DECLS
