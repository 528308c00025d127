/* qstore-lmdb-env.h: the LMDB environment of a location
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <lmdb.h>

#include "qstore.h"

G_BEGIN_DECLS

#define QSTORE_LMDB_MARKER_DBI_NAME  "__qstore"
#define QSTORE_LMDB_DEFAULT_MAX_STORES 1024
#define QSTORE_LMDB_MAX_MAX_STORES   32767
#define QSTORE_LMDB_MAX_VALUE_SIZE   ((gsize) G_MAXUINT32)
/* Attempts at a read or write that another process keeps invalidating
 * (a map that grew, stores created or dropped). */
#define QSTORE_LMDB_MAX_RETRIES      8

/* How much of the page structure opening walks (see qstore-lmdb-check.h):
 * the `verify` option. Auto walks all of a file up to
 * QSTORE_LMDB_VERIFY_FULL_MAX bytes and the branch pages of a larger one. */
typedef enum
{
  QSTORE_LMDB_VERIFY_META,
  QSTORE_LMDB_VERIFY_BRANCHES,
  QSTORE_LMDB_VERIFY_FULL,
  QSTORE_LMDB_VERIFY_AUTO,
} QStoreLmdbVerify;

#define QSTORE_LMDB_VERIFY_FULL_MAX ((guint64) 64 << 20)

/* Reset read transactions kept for reuse. */
#define QSTORE_LMDB_READ_POOL_SIZE 16

/* A failure already described by a GError (LMDB codes are all different). */
#define QSTORE_LMDB_RC_ERROR (-1)

/* A published DBI handle: the store @name can be read through @dbi by
 * read transactions that began at @epoch or later. */
typedef struct
{
  char    *name;
  MDB_dbi  dbi;
  guint64  epoch;    /* QStoreLmdbEnv.epoch when the handle became usable */
  gint     dropped;  /* atomic: the handle was closed, look the name up again */
} QStoreLmdbDbi;

/* A read transaction kept begun after it ended: the next read takes it as
 * it is while nothing was committed or published since. */
typedef struct
{
  MDB_txn *txn;
  guint64  epoch;
} QStoreLmdbLive;

/* The most kept at once: reads in a row need one or two. */
#define QSTORE_LMDB_LIVE_SIZE 4

/* One LMDB environment, shared by the providers of this process that
 * opened its directory. */
typedef struct
{
  gatomicrefcount  ref_count;
  char            *key;          /* in the registry */
  char            *path;
  pid_t            pid;
  guint            n_open;       /* providers using it; registry lock */
  gboolean         read_only;

  MDB_env         *env;          /* NULL once closed */
  MDB_dbi          main_dbi;
  guint            max_key;

  /* Serializes write transactions and the read transactions that open
   * handles: LMDB allows only one transaction at a time to open DBIs. */
  GMutex           write_lock;
  guint64          write_serial;  /* write_lock */

  /* Protects everything below; taken after write_lock. */
  GMutex           lock;
  GCond            cond;
  GHashTable      *dbis;         /* name → QStoreLmdbDbi, the published handles */
  GPtrArray       *retired;      /* closed QStoreLmdbDbi, stores may still point at them */
  guint64          epoch;
  MDB_dbi          marker_dbi;
  gboolean         have_marker;
  guint64          known_gen;    /* the generation the handle table covers */
  gboolean         known_gen_valid;
  gboolean         barrier;      /* no read transaction may begin */
  guint            n_held;       /* read transactions of snapshots and iterators */
  guint            n_transient;  /* read transactions of single calls */
  GPtrArray       *pool;         /* reset read transactions */
  /* Ended ones not reset (writers only), the last ended last */
  QStoreLmdbLive   live[QSTORE_LMDB_LIVE_SIZE];
  guint            n_live;
} QStoreLmdbEnv;

/* Resets the read transactions kept begun (QStoreLmdbEnv.live), with
 * env->lock held: a commit of the writer's made them stale. */
void           qstore_lmdb_env_forget_live_locked (QStoreLmdbEnv *env);

/* Errors */
void           qstore_lmdb_set_error          (GError        **error,
                                               const char     *path,
                                               int             rc,
                                               const char     *format,
                                               ...) G_GNUC_PRINTF (4, 5);
void           qstore_lmdb_set_closed_error   (GError        **error,
                                               const char     *path);

/* Handles */
QStoreLmdbDbi *qstore_lmdb_dbi_new            (const char     *name,
                                               MDB_dbi         dbi);
void           qstore_lmdb_dbi_free           (gpointer        data);
int            qstore_lmdb_read_generation    (MDB_txn        *txn,
                                               MDB_dbi         marker,
                                               guint64        *gen);
int            qstore_lmdb_write_generation   (MDB_txn        *txn,
                                               MDB_dbi         marker,
                                               guint64         gen);
int            qstore_lmdb_list_store_names   (MDB_txn        *txn,
                                               MDB_dbi         main_dbi,
                                               GPtrArray      *names);

/* The environment. Opening shares the environment of a directory this
 * process already opened; every acquire is paired with a release. */
QStoreLmdbEnv *qstore_lmdb_env_acquire        (const char       *path,
                                               gboolean          read_only,
                                               gsize             map_size,
                                               guint             max_stores,
                                               QStoreLmdbVerify  verify,
                                               GError          **error);
void           qstore_lmdb_env_release        (QStoreLmdbEnv  *env);
QStoreLmdbEnv *qstore_lmdb_env_ref            (QStoreLmdbEnv  *env);
void           qstore_lmdb_env_unref          (QStoreLmdbEnv  *env);

/* Lets read transactions begin again; called with env->lock held. */
void           qstore_lmdb_env_lift_barrier_locked (QStoreLmdbEnv *env);
/* Another process grew the map beyond ours: map the new size. The
 * _locked variants are called with write_lock held; @have_barrier says
 * whether the caller already keeps readers out. */
gboolean       qstore_lmdb_env_adopt_map_size (QStoreLmdbEnv  *env,
                                               GError        **error);
gboolean       qstore_lmdb_env_adopt_map_size_locked (QStoreLmdbEnv  *env,
                                                      gboolean        have_barrier,
                                                      GError        **error);
/* Before a write transaction held open: grow the map while less of it is
 * free than is used, with no write transaction running. */
void           qstore_lmdb_env_make_room_locked (QStoreLmdbEnv  *env);
/* MDB_MAP_FULL: double the map, with no write transaction running. */
gboolean       qstore_lmdb_env_grow_map_locked (QStoreLmdbEnv  *env,
                                                gboolean        have_barrier,
                                                GError        **error);
/* Opens the handles of the stores that exist now and have none (another
 * process made them), and records the generation the table covers. */
gboolean       qstore_lmdb_env_refresh        (QStoreLmdbEnv  *env,
                                               GError        **error);

G_END_DECLS
