/* qstore-lmdb-env.c: the LMDB environment of a location
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib/gstdio.h>
#include <lmdb.h>

#include <qstore.h>

#include "qstore-lmdb-provider.h"

/*
 * One location is one LMDB environment (a directory holding data.mdb and
 * lock.mdb). Each store is a named DBI whose name is the store name, so the
 * mapping is the identity: injective, and never a path.
 *
 * DBI handles are the delicate part. LMDB keeps them process-wide, and a
 * read transaction can only use the handles that were open when it began.
 * So every store that exists is kept open, and every read transaction
 * records the "epoch" of the handle table it began with:
 *
 *  - the environment is scanned when it is opened, and every named DBI is
 *    opened then;
 *  - a write that creates stores publishes their handles only after it
 *    committed, with a new epoch, while no read transaction may begin
 *    (the "barrier"); a reader that began earlier treats those stores as
 *    absent, which is what its snapshot holds;
 *  - other processes that create or drop stores bump a generation counter
 *    in the marker DBI; a read transaction whose generation differs from
 *    the one the handle table was built for rescans before it is used.
 *
 * Handles are closed (mdb_drop (…, 1)) only while no read transaction of
 * this process is live, under the barrier, because LMDB frees the name of a
 * closed handle and reuses its slot. When readers are live, a dropped store
 * is emptied instead (mdb_drop (…, 0)); the empty DBI is removed the next
 * time the location is opened for writing.
 */

#define MARKER_DBI_NAME    "__qstore"
#define MARKER_FORMAT_KEY  "format"
#define MARKER_FORMAT      "qstore-lmdb/1"
#define MARKER_FORMAT_BASE "qstore-lmdb/"
#define MARKER_GEN_KEY     "generation"

#define DEFAULT_MAP_SIZE   ((gsize) 1 << 30)
#define DEFAULT_MAX_STORES 1024
#define MAX_MAX_STORES     32767
#define MAX_READERS        1024
#define MAX_VALUE_SIZE     ((gsize) G_MAXUINT32)
#define READ_POOL_SIZE     16
#define MAX_RETRIES        8
#define FILE_MODE          0644

/* A failure already described by a GError (LMDB codes are all different). */
#define RC_ERROR (-1)

/* Shared state */

typedef struct
{
  char    *name;
  MDB_dbi  dbi;
  guint64  epoch;    /* Env.epoch when the handle became usable */
  gint     dropped;  /* atomic: the handle was closed, look the name up again */
} DbiEntry;

typedef struct
{
  gatomicrefcount  ref_count;
  char            *key;          /* in the registry */
  char            *path;
  pid_t            pid;
  guint            n_open;       /* providers using it; registry_lock */
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
  GHashTable      *dbis;         /* name → DbiEntry, the published handles */
  GPtrArray       *retired;      /* closed DbiEntry, stores may still point at them */
  guint64          epoch;
  MDB_dbi          marker_dbi;
  gboolean         have_marker;
  guint64          known_gen;    /* the generation the handle table covers */
  gboolean         known_gen_valid;
  gboolean         barrier;      /* no read transaction may begin */
  guint            n_held;       /* read transactions of snapshots and iterators */
  guint            n_transient;  /* read transactions of single calls */
  GPtrArray       *pool;         /* reset read transactions */
} Env;

typedef struct
{
  MDB_txn  *txn;         /* NULL once the provider closed */
  guint64   epoch;
  guint64   known_gen;
  gboolean  known_gen_valid;
  gboolean  have_marker;
  GSList   *cursors;     /* open cursors, closed with the provider */
  GList     link;        /* in the provider's live read transactions */
} ReadTxn;

/* Types */

#define QSTORE_TYPE_LMDB_PROVIDER (qstore_lmdb_provider_get_type ())
G_DECLARE_FINAL_TYPE (QStoreLmdbProvider, qstore_lmdb_provider, QSTORE, LMDB_PROVIDER, GObject)

#define QSTORE_TYPE_LMDB_KV (qstore_lmdb_kv_get_type ())
G_DECLARE_FINAL_TYPE (QStoreLmdbKV, qstore_lmdb_kv, QSTORE, LMDB_KV, GObject)

#define QSTORE_TYPE_LMDB_SNAPSHOT (qstore_lmdb_snapshot_get_type ())
G_DECLARE_FINAL_TYPE (QStoreLmdbSnapshot, qstore_lmdb_snapshot, QSTORE, LMDB_SNAPSHOT, QStoreSnapshot)

#define QSTORE_TYPE_LMDB_ITER (qstore_lmdb_iter_get_type ())
G_DECLARE_FINAL_TYPE (QStoreLmdbIter, qstore_lmdb_iter, QSTORE, LMDB_ITER, QStoreIter)

struct _QStoreLmdbProvider
{
  GObject   parent_instance;

  Env      *env;          /* set by a successful init, kept until finalize */
  GQueue    live;         /* ReadTxn of snapshots and iterators; env->lock */
  guint     n_transient;  /* env->lock */
  gboolean  closed;       /* env->lock */
};

struct _QStoreLmdbKV
{
  GObject             parent_instance;

  QStoreLmdbProvider *provider;
  char               *name;
  DbiEntry           *entry;   /* atomic: the published handle, once known */

  /* The handle in the write transaction numbered write_serial, also when
   * that transaction made it; env->write_lock. */
  guint64             write_serial;
  MDB_dbi             write_dbi;
};

struct _QStoreLmdbSnapshot
{
  QStoreSnapshot      parent_instance;

  QStoreLmdbProvider *provider;
  ReadTxn            *rt;
};

struct _QStoreLmdbIter
{
  QStoreIter          parent_instance;

  QStoreLmdbProvider *provider;
  QStoreLmdbSnapshot *snapshot;  /* when iterating a snapshot */
  ReadTxn            *rt;        /* the snapshot's, or its own */
  gboolean            owns_rt;
  MDB_cursor         *cursor;    /* NULL when the store does not exist */
  MDB_val             key;
  MDB_val             value;
  gboolean            started;
  gboolean            reverse;
};

static void qstore_lmdb_provider_iface_init (QStoreProviderInterface *iface);
static void qstore_lmdb_initable_iface_init (GInitableIface *iface);
static void qstore_lmdb_kv_iface_init (QStoreKVInterface *iface);

/* GInitable first: GJS resolves the methods of the last interface only on
 * a type it has no introspection data for. */
G_DEFINE_DYNAMIC_TYPE_EXTENDED (QStoreLmdbProvider, qstore_lmdb_provider, G_TYPE_OBJECT, 0,
                                G_IMPLEMENT_INTERFACE_DYNAMIC (G_TYPE_INITABLE,
                                                               qstore_lmdb_initable_iface_init)
                                G_IMPLEMENT_INTERFACE_DYNAMIC (QSTORE_TYPE_PROVIDER,
                                                               qstore_lmdb_provider_iface_init))

G_DEFINE_DYNAMIC_TYPE_EXTENDED (QStoreLmdbKV, qstore_lmdb_kv, G_TYPE_OBJECT, 0,
                                G_IMPLEMENT_INTERFACE_DYNAMIC (QSTORE_TYPE_KV,
                                                               qstore_lmdb_kv_iface_init))

G_DEFINE_DYNAMIC_TYPE (QStoreLmdbSnapshot, qstore_lmdb_snapshot, QSTORE_TYPE_SNAPSHOT)

G_DEFINE_DYNAMIC_TYPE (QStoreLmdbIter, qstore_lmdb_iter, QSTORE_TYPE_ITER)

/* Errors */

static int
error_code_for_mdb (int rc)
{
  switch (rc)
    {
    case MDB_NOTFOUND:
    case ENOENT:
      return QSTORE_ERROR_NOT_FOUND;

    case MDB_CORRUPTED:
    case MDB_PAGE_NOTFOUND:
    case MDB_INVALID:
    case MDB_VERSION_MISMATCH:
    case MDB_INCOMPATIBLE:
      return QSTORE_ERROR_CORRUPT;

    case MDB_BAD_VALSIZE:
      return QSTORE_ERROR_INVALID_ARGUMENT;

    case MDB_READERS_FULL:
    case MDB_MAP_RESIZED:
    case EAGAIN:
    case EBUSY:
    case EDEADLK:
      return QSTORE_ERROR_BUSY;

    case MDB_MAP_FULL:
    case MDB_PANIC:
    case EIO:
    case ENOSPC:
    case EDQUOT:
    case EACCES:
    case EPERM:
    case EROFS:
    case EISDIR:
    case ENOTDIR:
      return QSTORE_ERROR_IO;

    default:
      return QSTORE_ERROR_FAILED;
    }
}

static const char *
hint_for_mdb (int rc)
{
  switch (rc)
    {
    case MDB_MAP_FULL:
      return "raise the map_size option";
    case MDB_DBS_FULL:
      return "raise the max_stores option";
    case MDB_READERS_FULL:
      return "close snapshots and iterators that are no longer needed";
    case MDB_TXN_FULL:
      return "split the write into smaller ones";
    case MDB_BAD_VALSIZE:
      return "keys are limited to the provider's maximum key length and values to 4 GiB";
    case EACCES:
    case EPERM:
    case EROFS:
      return "check the permissions of the directory and its files";
    case EAGAIN:
    case EBUSY:
      return "another process holds a lock on it";
    default:
      return NULL;
    }
}

static void set_mdb_error (GError     **error,
                           const char  *path,
                           int          rc,
                           const char  *format,
                           ...) G_GNUC_PRINTF (4, 5);

/* Maps an LMDB error to the QSTORE_ERROR domain, with LMDB's text and the
 * location. */
static void
set_mdb_error (GError     **error,
               const char  *path,
               int          rc,
               const char  *format,
               ...)
{
  g_autofree char *what = NULL;
  const char *hint = hint_for_mdb (rc);
  va_list args;

  va_start (args, format);
  what = g_strdup_vprintf (format, args);
  va_end (args);

  g_set_error (error, QSTORE_ERROR, error_code_for_mdb (rc),
               "%s in the LMDB store at “%s”: %s%s%s",
               what, path, mdb_strerror (rc),
               hint ? "; " : "", hint ? hint : "");
}

static void
set_closed_error (GError     **error,
                  const char  *path)
{
  g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_CLOSED,
               "The lmdb store at “%s” is closed: open it again to use it", path);
}

/* Handles */

static DbiEntry *
dbi_entry_new (const char *name,
               MDB_dbi     dbi)
{
  DbiEntry *entry = g_new0 (DbiEntry, 1);

  entry->name = g_strdup (name);
  entry->dbi = dbi;
  return entry;
}

static void
dbi_entry_free (gpointer data)
{
  DbiEntry *entry = data;

  g_free (entry->name);
  g_free (entry);
}

static int
read_generation (MDB_txn *txn,
                 MDB_dbi  marker,
                 guint64 *gen)
{
  MDB_val key = { strlen (MARKER_GEN_KEY), (void *) MARKER_GEN_KEY };
  MDB_val value;
  guint64 be;
  int rc;

  rc = mdb_get (txn, marker, &key, &value);
  if (rc == MDB_NOTFOUND)
    {
      *gen = 0;
      return MDB_SUCCESS;
    }
  if (rc != MDB_SUCCESS)
    return rc;
  if (value.mv_size != sizeof be)
    return MDB_CORRUPTED;
  memcpy (&be, value.mv_data, sizeof be);
  *gen = GUINT64_FROM_BE (be);
  return MDB_SUCCESS;
}

static int
write_generation (MDB_txn *txn,
                  MDB_dbi  marker,
                  guint64  gen)
{
  MDB_val key = { strlen (MARKER_GEN_KEY), (void *) MARKER_GEN_KEY };
  guint64 be = GUINT64_TO_BE (gen);
  MDB_val value = { sizeof be, &be };

  return mdb_put (txn, marker, &key, &value, 0);
}

/* Adds the names of the stores that exist as of @txn to @names. */
static int
list_store_names (MDB_txn   *txn,
                  MDB_dbi    main_dbi,
                  GPtrArray *names)
{
  MDB_cursor *cursor;
  MDB_val key, value;
  int rc;

  rc = mdb_cursor_open (txn, main_dbi, &cursor);
  if (rc != MDB_SUCCESS)
    return rc;

  for (rc = mdb_cursor_get (cursor, &key, &value, MDB_FIRST);
       rc == MDB_SUCCESS;
       rc = mdb_cursor_get (cursor, &key, &value, MDB_NEXT))
    {
      /* qstore never makes such names; they cannot be opened by name. */
      if (key.mv_size == 0 || memchr (key.mv_data, '\0', key.mv_size) != NULL)
        continue;
      if (key.mv_size == strlen (MARKER_DBI_NAME) &&
          memcmp (key.mv_data, MARKER_DBI_NAME, key.mv_size) == 0)
        continue;
      g_ptr_array_add (names, g_strndup (key.mv_data, key.mv_size));
    }
  mdb_cursor_close (cursor);

  return rc == MDB_NOTFOUND ? MDB_SUCCESS : rc;
}

/* The environment */

static GMutex registry_lock;
static GHashTable *registry; /* "dev:ino" → Env */

static Env *
env_ref (Env *env)
{
  g_atomic_ref_count_inc (&env->ref_count);
  return env;
}

static void
env_unref (Env *env)
{
  if (!g_atomic_ref_count_dec (&env->ref_count))
    return;

  g_assert (env->env == NULL);
  g_clear_pointer (&env->dbis, g_hash_table_unref);
  g_clear_pointer (&env->retired, g_ptr_array_unref);
  g_clear_pointer (&env->pool, g_ptr_array_unref);
  g_mutex_clear (&env->write_lock);
  g_mutex_clear (&env->lock);
  g_cond_clear (&env->cond);
  g_free (env->key);
  g_free (env->path);
  g_free (env);
}

/* Releases LMDB once no provider uses the environment any more. */
static void
env_close_handles (Env *env)
{
  g_mutex_lock (&env->lock);
  g_assert (env->n_held == 0 && env->n_transient == 0);
  for (guint i = 0; i < env->pool->len; i++)
    mdb_txn_abort (g_ptr_array_index (env->pool, i));
  g_ptr_array_set_size (env->pool, 0);
  mdb_env_close (env->env);
  env->env = NULL;
  g_mutex_unlock (&env->lock);
}

static gsize
env_get_map_size (Env *env)
{
  MDB_envinfo info;

  mdb_env_info (env->env, &info);
  return info.me_mapsize;
}

/* Waits until no read transaction runs and none can begin. Called with
 * write_lock and env->lock held; fails when snapshots or iterators are
 * live, since those cannot be waited for. */
static gboolean
env_quiesce_locked (Env        *env,
                    gboolean    have_barrier,
                    const char *why,
                    int         code,
                    GError    **error)
{
  if (env->n_held > 0)
    {
      g_set_error (error, QSTORE_ERROR, code,
                   "%s, which cannot happen while this process holds %u "
                   "snapshot(s) or iterator(s) on the LMDB store at “%s”: "
                   "release them first%s",
                   why, env->n_held, env->path,
                   code == QSTORE_ERROR_IO ? ", or open the store with a larger map_size option" : "");
      return FALSE;
    }
  if (!have_barrier)
    env->barrier = TRUE;
  while (env->n_transient > 0)
    g_cond_wait (&env->cond, &env->lock);
  return TRUE;
}

static void
env_lift_barrier_locked (Env *env)
{
  env->barrier = FALSE;
  g_cond_broadcast (&env->cond);
}

/* Another process grew the map beyond ours: map the new size. LMDB only
 * allows it while this process has no live transaction. */
static gboolean
env_adopt_map_size_locked (Env       *env,
                           gboolean   have_barrier,
                           GError   **error)
{
  gboolean ok;
  int rc = MDB_SUCCESS;

  g_mutex_lock (&env->lock);
  ok = env_quiesce_locked (env, have_barrier,
                           "Another process grew the LMDB map and this process must map the new size",
                           QSTORE_ERROR_BUSY, error);
  if (ok)
    {
      rc = mdb_env_set_mapsize (env->env, 0);
      if (!have_barrier)
        env_lift_barrier_locked (env);
    }
  g_mutex_unlock (&env->lock);

  if (ok && rc != MDB_SUCCESS)
    {
      set_mdb_error (error, env->path, rc, "Could not map the size another process set");
      return FALSE;
    }
  return ok;
}

static gboolean
env_adopt_map_size (Env     *env,
                    GError **error)
{
  gboolean ok;

  g_mutex_lock (&env->write_lock);
  if (env->env == NULL)
    {
      set_closed_error (error, env->path);
      ok = FALSE;
    }
  else
    ok = env_adopt_map_size_locked (env, FALSE, error);
  g_mutex_unlock (&env->write_lock);
  return ok;
}

/* MDB_MAP_FULL: double the map. Called with write_lock held and no write
 * transaction. */
static gboolean
env_grow_map_locked (Env       *env,
                     gboolean   have_barrier,
                     GError   **error)
{
  g_autofree char *why = NULL;
  gsize old_size, new_size;
  gboolean ok;
  int rc = MDB_SUCCESS;

  g_mutex_lock (&env->lock);
  old_size = env_get_map_size (env);
  new_size = old_size > G_MAXSIZE / 2 ? G_MAXSIZE : old_size * 2;
  why = g_strdup_printf ("The LMDB map (%" G_GSIZE_FORMAT " bytes) is full and must grow",
                         old_size);
  ok = env_quiesce_locked (env, have_barrier, why, QSTORE_ERROR_IO, error);
  if (ok)
    {
      rc = mdb_env_set_mapsize (env->env, new_size);
      if (!have_barrier)
        env_lift_barrier_locked (env);
    }
  g_mutex_unlock (&env->lock);

  if (ok && rc != MDB_SUCCESS)
    {
      set_mdb_error (error, env->path, rc,
                     "The LMDB map is full and could not grow to %" G_GSIZE_FORMAT " bytes",
                     new_size);
      return FALSE;
    }
  return ok;
}

/* Opens the handles of the stores that exist now and have none (another
 * process made them), and records the generation the table covers. */
static gboolean
env_refresh (Env     *env,
             GError **error)
{
  g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GPtrArray) pending = g_ptr_array_new_with_free_func (dbi_entry_free);
  MDB_txn *txn = NULL;
  MDB_dbi marker;
  gboolean have_marker;
  guint64 gen = 0;
  int rc;

  g_mutex_lock (&env->write_lock);
  if (env->env == NULL)
    {
      g_mutex_unlock (&env->write_lock);
      set_closed_error (error, env->path);
      return FALSE;
    }

  for (guint attempt = 0; ; attempt++)
    {
      rc = mdb_txn_begin (env->env, NULL, MDB_RDONLY, &txn);
      if (rc != MDB_MAP_RESIZED || attempt >= MAX_RETRIES)
        break;
      if (!env_adopt_map_size_locked (env, FALSE, error))
        {
          g_mutex_unlock (&env->write_lock);
          return FALSE;
        }
    }
  if (rc != MDB_SUCCESS)
    {
      set_mdb_error (error, env->path, rc, "Could not start reading the list of stores");
      g_mutex_unlock (&env->write_lock);
      return FALSE;
    }

  /* Only holders of write_lock change these. */
  marker = env->marker_dbi;
  have_marker = env->have_marker;

  if (!have_marker)
    {
      rc = mdb_dbi_open (txn, MARKER_DBI_NAME, 0, &marker);
      if (rc == MDB_SUCCESS)
        have_marker = TRUE;
      else if (rc == MDB_NOTFOUND)
        {
          MDB_stat st;

          rc = mdb_stat (txn, env->main_dbi, &st);
          if (rc == MDB_SUCCESS && st.ms_entries > 0)
            {
              g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_CORRUPT,
                           "“%s” is an LMDB environment but not a qstore store: "
                           "something other than qstore wrote to it",
                           env->path);
              rc = RC_ERROR;
            }
        }
    }
  if (rc == MDB_SUCCESS && have_marker)
    rc = read_generation (txn, marker, &gen);
  if (rc == MDB_SUCCESS)
    rc = list_store_names (txn, env->main_dbi, names);

  for (guint i = 0; rc == MDB_SUCCESS && i < names->len; i++)
    {
      const char *name = g_ptr_array_index (names, i);
      gboolean known;
      MDB_dbi dbi;

      g_mutex_lock (&env->lock);
      known = g_hash_table_contains (env->dbis, name);
      g_mutex_unlock (&env->lock);
      if (known)
        continue;

      rc = mdb_dbi_open (txn, name, 0, &dbi);
      if (rc == MDB_SUCCESS)
        g_ptr_array_add (pending, dbi_entry_new (name, dbi));
      else if (rc == MDB_INCOMPATIBLE || rc == MDB_NOTFOUND)
        rc = MDB_SUCCESS; /* plain data, not a store: nothing to open */
    }

  if (rc != MDB_SUCCESS)
    {
      if (rc != RC_ERROR)
        set_mdb_error (error, env->path, rc, "Could not read the list of stores");
      /* Aborting closes the handles opened above. */
      mdb_txn_abort (txn);
      g_mutex_unlock (&env->write_lock);
      return FALSE;
    }

  /* Committing publishes the handles process-wide: no reader may begin
   * while LMDB updates its handle table. With nothing opened, there is
   * nothing to publish. */
  if (pending->len > 0 || (have_marker && !env->have_marker))
    {
      g_mutex_lock (&env->lock);
      env->barrier = TRUE;
      g_mutex_unlock (&env->lock);
      rc = mdb_txn_commit (txn);
    }
  else
    mdb_txn_abort (txn);

  g_mutex_lock (&env->lock);
  if (rc == MDB_SUCCESS)
    {
      env->epoch++;
      for (guint i = 0; i < pending->len; i++)
        {
          DbiEntry *entry = g_ptr_array_index (pending, i);

          entry->epoch = env->epoch;
          g_hash_table_replace (env->dbis, entry->name, entry);
        }
      g_ptr_array_set_free_func (pending, NULL);
      env->marker_dbi = marker;
      env->have_marker = have_marker;
      env->known_gen = gen;
      env->known_gen_valid = TRUE;
    }
  env_lift_barrier_locked (env);
  g_mutex_unlock (&env->lock);

  g_mutex_unlock (&env->write_lock);

  if (rc != MDB_SUCCESS)
    {
      set_mdb_error (error, env->path, rc, "Could not read the list of stores");
      return FALSE;
    }
  return TRUE;
}

static gboolean
check_format (Env      *env,
              MDB_txn  *txn,
              GError  **error)
{
  MDB_val key = { strlen (MARKER_FORMAT_KEY), (void *) MARKER_FORMAT_KEY };
  MDB_val value;
  g_autofree char *format = NULL;
  guint64 version;
  int rc;

  rc = mdb_get (txn, env->marker_dbi, &key, &value);
  if (rc != MDB_SUCCESS && rc != MDB_NOTFOUND)
    {
      set_mdb_error (error, env->path, rc, "Could not read the qstore format marker");
      return FALSE;
    }
  if (rc == MDB_SUCCESS)
    format = g_strndup (value.mv_data, value.mv_size);

  if (format != NULL && g_str_equal (format, MARKER_FORMAT))
    return TRUE;

  if (format != NULL && g_str_has_prefix (format, MARKER_FORMAT_BASE) &&
      g_ascii_string_to_unsigned (format + strlen (MARKER_FORMAT_BASE), 10, 2, G_MAXUINT64,
                                  &version, NULL))
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_UNSUPPORTED,
                   "The qstore store at “%s” has format %" G_GUINT64_FORMAT ", written by "
                   "a newer qstore; this version reads format 1: use a newer qstore",
                   env->path, version);
      return FALSE;
    }

  g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_CORRUPT,
               "“%s” is an LMDB environment with a damaged qstore marker (format “%s”): "
               "it cannot be read as a qstore store",
               env->path, format ? format : "missing");
  return FALSE;
}

/* Checks the marker, creating it in a new environment, and opens every
 * store. A writable open also removes the stores that were emptied while
 * readers held them. Nothing else uses the environment yet. */
static gboolean
env_load (Env     *env,
          GError **error)
{
  g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GPtrArray) entries = g_ptr_array_new_with_free_func (dbi_entry_free);
  gboolean created = FALSE, removed = FALSE;
  MDB_txn *txn = NULL;
  guint64 gen = 0;
  int rc;

  rc = mdb_txn_begin (env->env, NULL, env->read_only ? MDB_RDONLY : 0, &txn);
  if (rc != MDB_SUCCESS)
    {
      set_mdb_error (error, env->path, rc, "Could not start reading");
      return FALSE;
    }

  rc = mdb_dbi_open (txn, NULL, 0, &env->main_dbi);
  if (rc != MDB_SUCCESS)
    goto mdb_failed;

  rc = mdb_dbi_open (txn, MARKER_DBI_NAME, 0, &env->marker_dbi);
  if (rc == MDB_NOTFOUND)
    {
      MDB_stat st;

      rc = mdb_stat (txn, env->main_dbi, &st);
      if (rc != MDB_SUCCESS)
        goto mdb_failed;
      if (st.ms_entries > 0)
        {
          g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_CORRUPT,
                       "“%s” is an LMDB environment but not a qstore store: it has "
                       "no “%s” marker; open an empty directory or one made by qstore",
                       env->path, MARKER_DBI_NAME);
          goto failed;
        }

      if (!env->read_only)
        {
          MDB_val key = { strlen (MARKER_FORMAT_KEY), (void *) MARKER_FORMAT_KEY };
          MDB_val value = { strlen (MARKER_FORMAT), (void *) MARKER_FORMAT };

          rc = mdb_dbi_open (txn, MARKER_DBI_NAME, MDB_CREATE, &env->marker_dbi);
          if (rc == MDB_SUCCESS)
            rc = mdb_put (txn, env->marker_dbi, &key, &value, 0);
          if (rc == MDB_SUCCESS)
            rc = write_generation (txn, env->marker_dbi, 0);
          if (rc != MDB_SUCCESS)
            goto mdb_failed;
          env->have_marker = TRUE;
          created = TRUE;
        }
    }
  else if (rc == MDB_INCOMPATIBLE)
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_CORRUPT,
                   "“%s” is an LMDB environment but not a qstore store: its “%s” "
                   "entry is plain data",
                   env->path, MARKER_DBI_NAME);
      goto failed;
    }
  else if (rc != MDB_SUCCESS)
    goto mdb_failed;
  else
    {
      env->have_marker = TRUE;
      if (!check_format (env, txn, error))
        goto failed;
      rc = read_generation (txn, env->marker_dbi, &gen);
      if (rc != MDB_SUCCESS)
        goto mdb_failed;
    }

  rc = list_store_names (txn, env->main_dbi, names);
  if (rc != MDB_SUCCESS)
    goto mdb_failed;

  for (guint i = 0; i < names->len; i++)
    {
      const char *name = g_ptr_array_index (names, i);
      MDB_dbi dbi;

      rc = mdb_dbi_open (txn, name, 0, &dbi);
      if (rc == MDB_INCOMPATIBLE)
        {
          g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_CORRUPT,
                       "“%s” holds plain data under “%s” where qstore expects a store: "
                       "it was changed by something other than qstore",
                       env->path, name);
          goto failed;
        }
      if (rc != MDB_SUCCESS)
        goto mdb_failed;

      if (!env->read_only)
        {
          MDB_stat st;

          rc = mdb_stat (txn, dbi, &st);
          if (rc != MDB_SUCCESS)
            goto mdb_failed;
          if (st.ms_entries == 0)
            {
              rc = mdb_drop (txn, dbi, 1);
              if (rc != MDB_SUCCESS)
                goto mdb_failed;
              removed = TRUE;
              continue;
            }
        }
      g_ptr_array_add (entries, dbi_entry_new (name, dbi));
    }

  if (removed && !created)
    {
      rc = write_generation (txn, env->marker_dbi, ++gen);
      if (rc != MDB_SUCCESS)
        goto mdb_failed;
    }

  /* Committing keeps the handles opened above, read-only or not. */
  rc = mdb_txn_commit (txn);
  txn = NULL;
  if (rc != MDB_SUCCESS)
    goto mdb_failed;

  for (guint i = 0; i < entries->len; i++)
    {
      DbiEntry *entry = g_ptr_array_index (entries, i);

      g_hash_table_replace (env->dbis, entry->name, entry);
    }
  g_ptr_array_set_free_func (entries, NULL);
  env->known_gen = gen;
  env->known_gen_valid = TRUE;
  return TRUE;

mdb_failed:
  set_mdb_error (error, env->path, rc, "Could not open the stores");
failed:
  if (txn != NULL)
    mdb_txn_abort (txn);
  return FALSE;
}

static Env *
env_open (const char  *path,
          const char  *key,
          gboolean     read_only,
          gsize        map_size,
          guint        max_stores,
          GError     **error)
{
  Env *env = g_new0 (Env, 1);
  g_autofree char *lock_path = g_build_filename (path, "lock.mdb", NULL);
  /* LMDB makes its lock file even for a read-only open: an open that
   * fails must not leave one behind in a directory that is no store. */
  gboolean had_lock = g_file_test (lock_path, G_FILE_TEST_EXISTS);
  int rc;

  g_atomic_ref_count_init (&env->ref_count);
  env->key = g_strdup (key);
  env->path = g_strdup (path);
  env->pid = getpid ();
  env->read_only = read_only;
  g_mutex_init (&env->write_lock);
  g_mutex_init (&env->lock);
  g_cond_init (&env->cond);
  env->dbis = g_hash_table_new_full (g_str_hash, g_str_equal, NULL, dbi_entry_free);
  env->retired = g_ptr_array_new_with_free_func (dbi_entry_free);
  env->pool = g_ptr_array_new ();

  rc = mdb_env_create (&env->env);
  if (rc == MDB_SUCCESS)
    rc = mdb_env_set_maxdbs (env->env, max_stores + 1);
  if (rc == MDB_SUCCESS)
    rc = mdb_env_set_maxreaders (env->env, MAX_READERS);
  if (rc == MDB_SUCCESS && map_size != 0)
    rc = mdb_env_set_mapsize (env->env, map_size);
  if (rc == MDB_SUCCESS)
    rc = mdb_env_open (env->env, path, MDB_NOTLS | (read_only ? MDB_RDONLY : 0), FILE_MODE);

  if (rc != MDB_SUCCESS)
    {
      if (rc == MDB_INVALID)
        g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_CORRUPT,
                     "“%s” is not a qstore store: its data.mdb (or lock.mdb) is not an "
                     "LMDB file; give the directory of a qstore store or an empty one",
                     path);
      else if (rc == MDB_VERSION_MISMATCH)
        g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_CORRUPT,
                     "“%s” was written by an incompatible version of LMDB (%s): "
                     "it cannot be opened with LMDB %d.%d.%d",
                     path, mdb_strerror (rc),
                     MDB_VERSION_MAJOR, MDB_VERSION_MINOR, MDB_VERSION_PATCH);
      else if (rc == ENOENT)
        g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_NOT_FOUND,
                     "No qstore store at “%s”: it has no data.mdb "
                     "(open it for writing to create one)", path);
      else
        set_mdb_error (error, path, rc, "Could not open the environment");

      if (env->env != NULL)
        mdb_env_close (env->env);
      env->env = NULL;
      env_unref (env);
      if (!had_lock)
        g_unlink (lock_path);
      return NULL;
    }

  /* Without an explicit size, keep the size the environment was last used
   * with when it is larger than the default. */
  if (map_size == 0 && env_get_map_size (env) < DEFAULT_MAP_SIZE)
    mdb_env_set_mapsize (env->env, DEFAULT_MAP_SIZE);

  env->max_key = mdb_env_get_maxkeysize (env->env);

  if (!env_load (env, error))
    {
      mdb_env_close (env->env);
      env->env = NULL;
      env_unref (env);
      if (!had_lock)
        g_unlink (lock_path);
      return NULL;
    }

  return env;
}

/* Read transactions */

/* Starts a read transaction. Held ones (snapshots, iterators) are listed
 * so that closing the provider can end them; transient ones end before the
 * call that made them returns, and closing waits for them. */
static gboolean
read_begin (QStoreLmdbProvider  *self,
            ReadTxn             *rt,
            gboolean             held,
            GError             **error)
{
  Env *env = self->env;

  for (guint attempt = 0; ; attempt++)
    {
      MDB_txn *txn = NULL;
      int rc;

      g_mutex_lock (&env->lock);
      while (env->barrier)
        g_cond_wait (&env->cond, &env->lock);
      if (G_UNLIKELY (self->closed))
        {
          g_mutex_unlock (&env->lock);
          set_closed_error (error, env->path);
          return FALSE;
        }

      /* Renewing under the lock makes the transaction and the epoch it
       * records agree: handles are published under the same lock. */
      if (env->pool->len > 0)
        {
          txn = g_ptr_array_steal_index_fast (env->pool, env->pool->len - 1);
          rc = mdb_txn_renew (txn);
          if (rc != MDB_SUCCESS)
            {
              mdb_txn_abort (txn);
              txn = NULL;
            }
        }
      else
        rc = mdb_txn_begin (env->env, NULL, MDB_RDONLY, &txn);

      if (rc == MDB_SUCCESS)
        {
          rt->txn = txn;
          rt->epoch = env->epoch;
          rt->known_gen = env->known_gen;
          rt->known_gen_valid = env->known_gen_valid;
          rt->have_marker = env->have_marker;
          if (held)
            {
              env->n_held++;
              rt->link.data = rt;
              g_queue_push_tail_link (&self->live, &rt->link);
            }
          else
            {
              env->n_transient++;
              self->n_transient++;
            }
          g_mutex_unlock (&env->lock);
          return TRUE;
        }
      g_mutex_unlock (&env->lock);

      if (rc == MDB_MAP_RESIZED && attempt < MAX_RETRIES)
        {
          if (!env_adopt_map_size (env, error))
            return FALSE;
          continue;
        }
      set_mdb_error (error, env->path, rc, "Could not start reading");
      return FALSE;
    }
}

static void
read_end (QStoreLmdbProvider *self,
          ReadTxn            *rt,
          gboolean            held)
{
  Env *env = self->env;

  g_mutex_lock (&env->lock);
  /* After the provider closed, the transaction is already gone. */
  if (rt->txn != NULL)
    {
      g_assert (rt->cursors == NULL);
      mdb_txn_reset (rt->txn);
      if (env->pool->len < READ_POOL_SIZE)
        g_ptr_array_add (env->pool, rt->txn);
      else
        mdb_txn_abort (rt->txn);
      rt->txn = NULL;
      if (held)
        {
          env->n_held--;
          g_queue_unlink (&self->live, &rt->link);
        }
    }
  if (!held)
    {
      env->n_transient--;
      self->n_transient--;
    }
  if (env->barrier || self->closed)
    g_cond_broadcast (&env->cond);
  g_mutex_unlock (&env->lock);
}

/* Whether every store that exists as of @rt has a handle @rt can use: the
 * generation in @rt is the one the handle table was built for. */
static int
read_check_complete (Env      *env,
                     ReadTxn  *rt,
                     gboolean *complete)
{
  int rc;

  *complete = FALSE;
  if (!rt->known_gen_valid)
    return MDB_SUCCESS;

  if (rt->have_marker)
    {
      guint64 gen;

      rc = read_generation (rt->txn, env->marker_dbi, &gen);
      if (rc == MDB_SUCCESS)
        *complete = gen == rt->known_gen;
    }
  else
    {
      MDB_stat st;

      /* No marker yet (an empty environment opened read-only): complete
       * as long as nothing was created since. */
      rc = mdb_stat (rt->txn, env->main_dbi, &st);
      if (rc == MDB_SUCCESS)
        *complete = st.ms_entries == 0;
    }
  return rc;
}

/* A read transaction that sees every store of its snapshot: started again
 * after a rescan when another process changed the set of stores. */
static ReadTxn *
read_begin_complete (QStoreLmdbProvider  *self,
                     gboolean             held,
                     GError             **error)
{
  Env *env = self->env;
  ReadTxn *rt = g_new0 (ReadTxn, 1);

  for (guint attempt = 0; attempt < MAX_RETRIES; attempt++)
    {
      gboolean complete;
      int rc;

      if (!read_begin (self, rt, held, error))
        {
          g_free (rt);
          return NULL;
        }
      rc = read_check_complete (env, rt, &complete);
      if (rc == MDB_SUCCESS && complete)
        return rt;

      read_end (self, rt, held);
      if (rc != MDB_SUCCESS)
        {
          set_mdb_error (error, env->path, rc, "Could not read the qstore marker");
          g_free (rt);
          return NULL;
        }
      if (!env_refresh (env, error))
        {
          g_free (rt);
          return NULL;
        }
    }

  g_free (rt);
  g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_BUSY,
               "The stores of the LMDB store at “%s” keep changing under another "
               "process: try again", env->path);
  return NULL;
}

/* Ends a held read transaction for good, when the provider closes. */
static void
read_kill_locked (Env     *env,
                  ReadTxn *rt)
{
  for (GSList *l = rt->cursors; l != NULL; l = l->next)
    mdb_cursor_close (l->data);
  g_clear_pointer (&rt->cursors, g_slist_free);
  mdb_txn_abort (rt->txn);
  rt->txn = NULL;
  env->n_held--;
}

/* Stores */

static DbiEntry *
kv_lookup_entry (QStoreLmdbKV *self)
{
  Env *env = self->provider->env;
  DbiEntry *entry;

  g_mutex_lock (&env->lock);
  entry = g_hash_table_lookup (env->dbis, self->name);
  g_atomic_pointer_set (&self->entry, entry);
  g_mutex_unlock (&env->lock);
  return entry;
}

/* The published handle of the store, NULL when it has none. */
static inline DbiEntry *
kv_get_entry (QStoreLmdbKV *self)
{
  DbiEntry *entry = g_atomic_pointer_get (&self->entry);

  if (G_LIKELY (entry != NULL && !g_atomic_int_get (&entry->dropped)))
    return entry;
  return kv_lookup_entry (self);
}

/* Finds the handle @rt reads @kv through. FALSE means the store does not
 * exist for @rt, provided @rt is complete (see read_check_complete()). */
static inline gboolean
kv_read_dbi (QStoreLmdbKV *kv,
             ReadTxn      *rt,
             MDB_dbi      *dbi)
{
  DbiEntry *entry = kv_get_entry (kv);

  /* A handle published after @rt began belongs to a store created since. */
  if (entry == NULL || entry->epoch > rt->epoch)
    return FALSE;
  *dbi = entry->dbi;
  return TRUE;
}

/* The wrappers call these on every read: no type checks. */
static const char *
qstore_lmdb_kv_get_name (QStoreKV *store)
{
  return ((QStoreLmdbKV *) store)->name;
}

static QStoreProvider *
qstore_lmdb_kv_get_provider (QStoreKV *store)
{
  return (QStoreProvider *) ((QStoreLmdbKV *) store)->provider;
}

static GBytes *
qstore_lmdb_kv_get (QStoreKV      *store,
                    const guint8  *key,
                    gsize          key_len,
                    GError       **error)
{
  QStoreLmdbKV *self = (QStoreLmdbKV *) store;
  Env *env = self->provider->env;

  for (guint attempt = 0; attempt < MAX_RETRIES; attempt++)
    {
      ReadTxn rt = { 0 };
      MDB_val k = { key_len, (void *) key };
      MDB_val v;
      GBytes *value = NULL;
      gboolean complete = TRUE;
      MDB_dbi dbi;
      int rc;

      if (!read_begin (self->provider, &rt, FALSE, error))
        return NULL;

      if (G_LIKELY (kv_read_dbi (self, &rt, &dbi)))
        {
          rc = mdb_get (rt.txn, dbi, &k, &v);
          if (rc == MDB_SUCCESS)
            value = g_bytes_new (v.mv_data, v.mv_size);
          else if (rc == MDB_NOTFOUND)
            rc = MDB_SUCCESS;
        }
      else
        rc = read_check_complete (env, &rt, &complete);

      read_end (self->provider, &rt, FALSE);

      if (rc != MDB_SUCCESS)
        {
          set_mdb_error (error, env->path, rc, "Could not read store “%s”", self->name);
          return NULL;
        }
      if (complete)
        return value;
      /* The store may have been made by another process: look again. */
      if (!env_refresh (env, error))
        return NULL;
    }

  g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_BUSY,
               "The stores of the LMDB store at “%s” keep changing under another "
               "process: try again", env->path);
  return NULL;
}

static QStoreIter *
iter_new (QStoreLmdbProvider  *provider,
          QStoreLmdbKV        *kv,
          QStoreLmdbSnapshot  *snapshot,
          ReadTxn             *own_rt,
          const QStoreBounds  *bounds,
          GError             **error)
{
  g_autoptr(QStoreLmdbIter) self = NULL;
  Env *env = provider->env;
  MDB_dbi dbi;

  self = g_object_new (QSTORE_TYPE_LMDB_ITER,
                       "bounds", bounds,
                       "provider", provider,
                       NULL);
  self->provider = g_object_ref (provider);
  self->reverse = qstore_bounds_get_reverse (bounds);
  if (snapshot != NULL)
    {
      self->snapshot = g_object_ref (snapshot);
      self->rt = snapshot->rt;
    }
  else
    {
      self->rt = own_rt;
      self->owns_rt = TRUE;
    }

  /* A store that does not exist yields nothing: no cursor. */
  if (kv_read_dbi (kv, self->rt, &dbi))
    {
      int rc = MDB_SUCCESS;
      gboolean closed;

      g_mutex_lock (&env->lock);
      closed = self->rt->txn == NULL;
      if (!closed)
        {
          rc = mdb_cursor_open (self->rt->txn, dbi, &self->cursor);
          if (rc == MDB_SUCCESS)
            self->rt->cursors = g_slist_prepend (self->rt->cursors, self->cursor);
          else
            self->cursor = NULL;
        }
      g_mutex_unlock (&env->lock);

      if (closed)
        {
          set_closed_error (error, env->path);
          return NULL;
        }
      if (rc != MDB_SUCCESS)
        {
          set_mdb_error (error, env->path, rc, "Could not iterate store “%s”", kv->name);
          return NULL;
        }
    }

  return QSTORE_ITER (g_steal_pointer (&self));
}

static QStoreIter *
qstore_lmdb_kv_iterate (QStoreKV            *store,
                        const QStoreBounds  *bounds,
                        GError             **error)
{
  QStoreLmdbKV *self = QSTORE_LMDB_KV (store);
  ReadTxn *rt;

  /* The iterator owns the transaction: finalizing it ends the transaction,
   * also when creating the iterator fails. */
  rt = read_begin_complete (self->provider, TRUE, error);
  if (rt == NULL)
    return NULL;
  return iter_new (self->provider, self, NULL, rt, bounds, error);
}

static void
qstore_lmdb_kv_finalize (GObject *object)
{
  QStoreLmdbKV *self = QSTORE_LMDB_KV (object);

  g_free (self->name);
  g_clear_object (&self->provider);

  G_OBJECT_CLASS (qstore_lmdb_kv_parent_class)->finalize (object);
}

static void
qstore_lmdb_kv_class_init (QStoreLmdbKVClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = qstore_lmdb_kv_finalize;
}

static void
qstore_lmdb_kv_class_finalize (QStoreLmdbKVClass *klass)
{
}

static void
qstore_lmdb_kv_init (QStoreLmdbKV *self)
{
}

static void
qstore_lmdb_kv_iface_init (QStoreKVInterface *iface)
{
  iface->get_name = qstore_lmdb_kv_get_name;
  iface->get_provider = qstore_lmdb_kv_get_provider;
  iface->get = qstore_lmdb_kv_get;
  iface->iterate = qstore_lmdb_kv_iterate;
}

/* Iterators */

static int
qstore_lmdb_iter_position (QStoreLmdbIter *self)
{
  const QStoreBounds *bounds = qstore_iter_get_bounds (QSTORE_ITER (self));
  guint max_key = self->provider->env->max_key;
  const guint8 *bound;
  gsize bound_len;
  int rc;

  /* A bound longer than any stored key is cut to that length: the cut
   * bound orders the stored keys the same way, and the base class skips
   * whatever lands on the wrong side of the real bound. */
  if (!self->reverse)
    {
      bound = qstore_bounds_get_lower (bounds, &bound_len, NULL);
      if (bound != NULL && bound_len > 0)
        {
          self->key.mv_size = MIN (bound_len, max_key);
          self->key.mv_data = (void *) bound;
          rc = mdb_cursor_get (self->cursor, &self->key, &self->value, MDB_SET_RANGE);
        }
      else
        rc = mdb_cursor_get (self->cursor, &self->key, &self->value, MDB_FIRST);
    }
  else
    {
      bound = qstore_bounds_get_upper (bounds, &bound_len, NULL);
      if (bound == NULL)
        rc = mdb_cursor_get (self->cursor, &self->key, &self->value, MDB_LAST);
      else if (bound_len == 0)
        /* Every key is past an empty bound: the base class skips the
         * first one and the step back ends the range. */
        rc = mdb_cursor_get (self->cursor, &self->key, &self->value, MDB_FIRST);
      else
        {
          /* The first key at or after the bound; when it is past the
           * bound, the base class skips it and the next step goes back. */
          self->key.mv_size = MIN (bound_len, max_key);
          self->key.mv_data = (void *) bound;
          rc = mdb_cursor_get (self->cursor, &self->key, &self->value, MDB_SET_RANGE);
          if (rc == MDB_NOTFOUND)
            rc = mdb_cursor_get (self->cursor, &self->key, &self->value, MDB_LAST);
        }
    }
  return rc;
}

static gboolean
qstore_lmdb_iter_advance (QStoreIter  *iter,
                          GError     **error)
{
  QStoreLmdbIter *self = (QStoreLmdbIter *) iter;
  int rc;

  if (G_UNLIKELY (self->rt->txn == NULL))
    {
      set_closed_error (error, self->provider->env->path);
      return FALSE;
    }
  if (self->cursor == NULL)
    return FALSE;

  if (G_LIKELY (self->started))
    rc = mdb_cursor_get (self->cursor, &self->key, &self->value,
                         self->reverse ? MDB_PREV : MDB_NEXT);
  else
    {
      self->started = TRUE;
      rc = qstore_lmdb_iter_position (self);
    }

  if (G_LIKELY (rc == MDB_SUCCESS))
    return TRUE;
  if (rc == MDB_NOTFOUND)
    return FALSE;
  set_mdb_error (error, self->provider->env->path, rc, "Could not iterate");
  return FALSE;
}

static const guint8 *
qstore_lmdb_iter_peek_key (QStoreIter *iter,
                           gsize      *key_len)
{
  QStoreLmdbIter *self = (QStoreLmdbIter *) iter;

  *key_len = self->key.mv_size;
  return self->key.mv_data;
}

static const guint8 *
qstore_lmdb_iter_peek_value (QStoreIter *iter,
                             gsize      *value_len)
{
  QStoreLmdbIter *self = (QStoreLmdbIter *) iter;

  *value_len = self->value.mv_size;
  return self->value.mv_data;
}

static void
qstore_lmdb_iter_finalize (GObject *object)
{
  QStoreLmdbIter *self = QSTORE_LMDB_ITER (object);

  if (self->rt != NULL)
    {
      Env *env = self->provider->env;

      g_mutex_lock (&env->lock);
      /* Closing the provider closed the cursor already. */
      if (self->cursor != NULL && self->rt->txn != NULL)
        {
          self->rt->cursors = g_slist_remove (self->rt->cursors, self->cursor);
          mdb_cursor_close (self->cursor);
        }
      self->cursor = NULL;
      g_mutex_unlock (&env->lock);

      if (self->owns_rt)
        {
          read_end (self->provider, self->rt, TRUE);
          g_free (self->rt);
        }
      self->rt = NULL;
    }
  g_clear_object (&self->snapshot);
  g_clear_object (&self->provider);

  G_OBJECT_CLASS (qstore_lmdb_iter_parent_class)->finalize (object);
}

static void
qstore_lmdb_iter_class_init (QStoreLmdbIterClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  QStoreIterClass *iter_class = QSTORE_ITER_CLASS (klass);

  object_class->finalize = qstore_lmdb_iter_finalize;
  iter_class->advance = qstore_lmdb_iter_advance;
  iter_class->peek_key = qstore_lmdb_iter_peek_key;
  iter_class->peek_value = qstore_lmdb_iter_peek_value;
}

static void
qstore_lmdb_iter_class_finalize (QStoreLmdbIterClass *klass)
{
}

static void
qstore_lmdb_iter_init (QStoreLmdbIter *self)
{
}

/* Snapshots */

static gboolean
qstore_lmdb_snapshot_lookup (QStoreSnapshot  *snapshot,
                             QStoreKV        *store,
                             const guint8    *key,
                             gsize            key_len,
                             const guint8   **value,
                             gsize           *value_len,
                             GError         **error)
{
  QStoreLmdbSnapshot *self = (QStoreLmdbSnapshot *) snapshot;
  /* The wrapper checked that @store belongs to this provider. */
  QStoreLmdbKV *kv = (QStoreLmdbKV *) store;
  MDB_val k = { key_len, (void *) key };
  MDB_val v;
  MDB_dbi dbi;
  int rc;

  if (G_UNLIKELY (self->rt->txn == NULL))
    {
      set_closed_error (error, self->provider->env->path);
      return FALSE;
    }
  if (!kv_read_dbi (kv, self->rt, &dbi))
    return FALSE;

  rc = mdb_get (self->rt->txn, dbi, &k, &v);
  if (G_LIKELY (rc == MDB_SUCCESS))
    {
      /* LMDB's own memory, valid as long as the read transaction. */
      *value = v.mv_data;
      *value_len = v.mv_size;
      return TRUE;
    }
  if (rc != MDB_NOTFOUND)
    set_mdb_error (error, self->provider->env->path, rc, "Could not read store “%s”", kv->name);
  return FALSE;
}

static QStoreIter *
qstore_lmdb_snapshot_iterate (QStoreSnapshot      *snapshot,
                              QStoreKV            *store,
                              const QStoreBounds  *bounds,
                              GError             **error)
{
  QStoreLmdbSnapshot *self = QSTORE_LMDB_SNAPSHOT (snapshot);

  return iter_new (self->provider, QSTORE_LMDB_KV (store), self, NULL, bounds, error);
}

static void
qstore_lmdb_snapshot_finalize (GObject *object)
{
  QStoreLmdbSnapshot *self = QSTORE_LMDB_SNAPSHOT (object);

  if (self->rt != NULL)
    {
      read_end (self->provider, self->rt, TRUE);
      g_clear_pointer (&self->rt, g_free);
    }
  g_clear_object (&self->provider);

  G_OBJECT_CLASS (qstore_lmdb_snapshot_parent_class)->finalize (object);
}

static void
qstore_lmdb_snapshot_class_init (QStoreLmdbSnapshotClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  QStoreSnapshotClass *snapshot_class = QSTORE_SNAPSHOT_CLASS (klass);

  object_class->finalize = qstore_lmdb_snapshot_finalize;
  snapshot_class->lookup = qstore_lmdb_snapshot_lookup;
  snapshot_class->iterate = qstore_lmdb_snapshot_iterate;
}

static void
qstore_lmdb_snapshot_class_finalize (QStoreLmdbSnapshotClass *klass)
{
}

static void
qstore_lmdb_snapshot_init (QStoreLmdbSnapshot *self)
{
}

/* Writing */

typedef struct
{
  Env        *env;
  MDB_txn    *txn;
  guint64     serial;        /* stores cache their handle under it */
  GPtrArray  *pending;       /* DbiEntry opened by txn, published at commit */
  gboolean    set_changed;   /* stores were created or removed */
  gboolean    hard_dropped;  /* handles were closed */
  gboolean    may_close;     /* no reader is live and none may begin */

  /* The store of the previous op, so runs of ops on one store resolve it
   * once. */
  QStoreKV   *store;
  MDB_dbi     dbi;
  gboolean    exists;
} WriteTxn;

/* Finds the handle of store @name in the write transaction, creating the
 * store when @create. *found is FALSE when it does not exist. */
static int
write_resolve (WriteTxn     *wt,
               const char   *name,
               QStoreLmdbKV *kv,
               gboolean      create,
               MDB_dbi      *dbi,
               gboolean     *found)
{
  Env *env = wt->env;
  DbiEntry *entry;
  int rc;

  /* write_lock is held: the published table cannot change under us, and
   * every published handle predates this transaction. */
  if (kv != NULL)
    entry = kv_get_entry (kv);
  else
    {
      g_mutex_lock (&env->lock);
      entry = g_hash_table_lookup (env->dbis, name);
      g_mutex_unlock (&env->lock);
    }
  if (entry == NULL)
    {
      for (guint i = 0; i < wt->pending->len; i++)
        {
          DbiEntry *p = g_ptr_array_index (wt->pending, i);

          if (g_str_equal (p->name, name))
            {
              entry = p;
              break;
            }
        }
    }
  if (entry != NULL)
    {
      *dbi = entry->dbi;
      *found = TRUE;
      return MDB_SUCCESS;
    }

  *found = FALSE;
  /* Neither can exist; the marker is not a store. */
  if (strlen (name) > env->max_key || g_str_equal (name, MARKER_DBI_NAME))
    return create ? MDB_BAD_VALSIZE : MDB_SUCCESS;

  rc = mdb_dbi_open (wt->txn, name, 0, dbi);
  if (rc == MDB_NOTFOUND && create)
    {
      rc = mdb_dbi_open (wt->txn, name, MDB_CREATE, dbi);
      if (rc == MDB_SUCCESS)
        wt->set_changed = TRUE;
    }
  if (rc == MDB_NOTFOUND)
    return MDB_SUCCESS;
  if (rc != MDB_SUCCESS)
    return rc;

  g_ptr_array_add (wt->pending, dbi_entry_new (name, *dbi));
  *found = TRUE;
  return MDB_SUCCESS;
}

static int
write_drop (WriteTxn   *wt,
            const char *name)
{
  Env *env = wt->env;
  DbiEntry *entry;
  gboolean found;
  MDB_dbi dbi;
  int rc;

  rc = write_resolve (wt, name, NULL, FALSE, &dbi, &found);
  if (rc != MDB_SUCCESS || !found)
    return rc;

  /* Readers may hold the handle: empty the store and keep it. */
  if (!wt->may_close)
    return mdb_drop (wt->txn, dbi, 0);

  rc = mdb_drop (wt->txn, dbi, 1);
  if (rc != MDB_SUCCESS)
    return rc;

  /* LMDB closed the handle, whatever becomes of the transaction. */
  wt->set_changed = TRUE;
  wt->hard_dropped = TRUE;
  for (guint i = 0; i < wt->pending->len; i++)
    {
      DbiEntry *p = g_ptr_array_index (wt->pending, i);

      if (p->dbi == dbi)
        {
          g_ptr_array_remove_index_fast (wt->pending, i);
          return MDB_SUCCESS;
        }
    }

  /* No reader is live (may_close): stores that still point at the entry
   * see it dropped and look the name up again. */
  g_mutex_lock (&env->lock);
  entry = g_hash_table_lookup (env->dbis, name);
  g_assert (entry != NULL && entry->dbi == dbi);
  g_hash_table_steal (env->dbis, name);
  g_atomic_int_set (&entry->dropped, TRUE);
  g_ptr_array_add (env->retired, entry);
  g_mutex_unlock (&env->lock);
  return MDB_SUCCESS;
}

static int
write_rename (WriteTxn    *wt,
              const char  *from,
              const char  *to,
              GError     **error)
{
  MDB_dbi from_dbi, to_dbi;
  gboolean from_found, to_found;
  MDB_cursor *cursor;
  MDB_val key, value;
  int rc;

  if (g_str_equal (from, to))
    return MDB_SUCCESS;

  rc = write_resolve (wt, to, NULL, FALSE, &to_dbi, &to_found);
  if (rc == MDB_SUCCESS && to_found)
    {
      MDB_stat st;

      rc = mdb_stat (wt->txn, to_dbi, &st);
      if (rc == MDB_SUCCESS && st.ms_entries > 0)
        {
          g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_EXISTS,
                       "Cannot move store “%s” to “%s” in the LMDB store at “%s”: "
                       "“%s” holds entries; drop it first",
                       from, to, wt->env->path, to);
          return RC_ERROR;
        }
    }
  if (rc == MDB_SUCCESS)
    rc = write_resolve (wt, from, NULL, FALSE, &from_dbi, &from_found);
  if (rc != MDB_SUCCESS || !from_found)
    return rc;

  rc = write_resolve (wt, to, NULL, TRUE, &to_dbi, &to_found);
  if (rc != MDB_SUCCESS)
    return rc;

  rc = mdb_cursor_open (wt->txn, from_dbi, &cursor);
  if (rc != MDB_SUCCESS)
    return rc;
  for (rc = mdb_cursor_get (cursor, &key, &value, MDB_FIRST);
       rc == MDB_SUCCESS;
       rc = mdb_cursor_get (cursor, &key, &value, MDB_NEXT))
    {
      /* The destination is empty and keys come in order. */
      rc = mdb_put (wt->txn, to_dbi, &key, &value, MDB_APPEND);
      if (rc != MDB_SUCCESS)
        break;
    }
  mdb_cursor_close (cursor);
  if (rc != MDB_NOTFOUND)
    return rc;

  return write_drop (wt, from);
}

static int
write_apply (WriteTxn             *wt,
             const QStoreWriteOp  *ops,
             gsize                 n_ops,
             GError              **error)
{
  /* A fresh serial: handles cached before drops and renames are stale. */
  wt->serial = ++wt->env->write_serial;
  wt->store = NULL;

  for (gsize i = 0; i < n_ops; i++)
    {
      const QStoreWriteOp *op = &ops[i];
      QStoreLmdbKV *kv = (QStoreLmdbKV *) op->store;
      MDB_val key = { op->key_len, (void *) op->key };
      MDB_val value = { op->value_len, (void *) op->value };
      gboolean put = op->kind == QSTORE_WRITE_OP_PUT;
      int rc = MDB_SUCCESS;

      if (!qstore_fault_check (QSTORE_FAULT_WRITE_OP, error))
        return RC_ERROR;

      /* A put to a store that does not exist yet creates it. Only found
       * handles are cached: another handle on the same store may create
       * it later in the transaction. */
      if (op->store != wt->store || (put && !wt->exists))
        {
          if (kv->write_serial == wt->serial)
            {
              wt->dbi = kv->write_dbi;
              wt->exists = TRUE;
            }
          else
            {
              rc = write_resolve (wt, kv->name, kv, put, &wt->dbi, &wt->exists);
              if (rc == MDB_SUCCESS && wt->exists)
                {
                  kv->write_serial = wt->serial;
                  kv->write_dbi = wt->dbi;
                }
            }
          wt->store = rc == MDB_SUCCESS ? op->store : NULL;
        }

      if (rc != MDB_SUCCESS)
        ;
      else if (put)
        {
          if (G_UNLIKELY (op->value_len > MAX_VALUE_SIZE))
            {
              g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                           "Value of %" G_GSIZE_FORMAT " bytes written to store “%s”: "
                           "LMDB stores values of at most %" G_GSIZE_FORMAT " bytes",
                           op->value_len, kv->name, MAX_VALUE_SIZE);
              return RC_ERROR;
            }
          rc = mdb_put (wt->txn, wt->dbi, &key, &value, 0);
        }
      else if (wt->exists)
        {
          rc = mdb_del (wt->txn, wt->dbi, &key, NULL);
          if (rc == MDB_NOTFOUND)
            rc = MDB_SUCCESS;
        }

      if (G_UNLIKELY (rc != MDB_SUCCESS))
        {
          set_mdb_error (error, wt->env->path, rc, "Could not write to store “%s”", kv->name);
          return rc;
        }
    }
  return MDB_SUCCESS;
}

static int
write_commit (WriteTxn          *wt,
              QStoreWriteFlags   flags,
              GError           **error)
{
  Env *env = wt->env;
  gboolean publish = wt->pending->len > 0 || wt->set_changed;
  gboolean sync = (flags & QSTORE_WRITE_SYNC) != 0;
  guint64 old_gen = 0;
  int rc;

  /* Readers in other processes learn from the generation that the set of
   * stores changed. */
  if (wt->set_changed)
    {
      rc = read_generation (wt->txn, env->marker_dbi, &old_gen);
      if (rc == MDB_SUCCESS)
        rc = write_generation (wt->txn, env->marker_dbi, old_gen + 1);
      if (rc != MDB_SUCCESS)
        {
          set_mdb_error (error, env->path, rc, "Could not record the change of stores");
          return rc;
        }
    }

  /* New handles become usable process-wide at commit: readers that began
   * before must not see them, readers that begin after must. */
  if (publish && !wt->may_close)
    {
      g_mutex_lock (&env->lock);
      env->barrier = TRUE;
      g_mutex_unlock (&env->lock);
    }

  /* Without SYNC, skip the sync of the meta page only: the data pages are
   * still synced, so a crash may lose this commit but never corrupts
   * (unlike MDB_NOSYNC). */
  if (!sync)
    mdb_env_set_flags (env->env, MDB_NOMETASYNC, 1);
  rc = mdb_txn_commit (wt->txn);
  if (!sync)
    mdb_env_set_flags (env->env, MDB_NOMETASYNC, 0);
  /* Committed, or aborted by LMDB. */
  wt->txn = NULL;

  if (publish)
    {
      g_mutex_lock (&env->lock);
      if (rc == MDB_SUCCESS)
        {
          env->epoch++;
          for (guint i = 0; i < wt->pending->len; i++)
            {
              DbiEntry *entry = g_ptr_array_index (wt->pending, i);

              entry->epoch = env->epoch;
              g_hash_table_replace (env->dbis, entry->name, entry);
            }
          g_ptr_array_set_free_func (wt->pending, NULL);
          g_ptr_array_set_size (wt->pending, 0);
          g_ptr_array_set_free_func (wt->pending, dbi_entry_free);

          if (wt->set_changed && env->known_gen_valid && env->known_gen == old_gen)
            env->known_gen = old_gen + 1;
        }
      if (!wt->may_close)
        env_lift_barrier_locked (env);
      g_mutex_unlock (&env->lock);
    }

  if (rc != MDB_SUCCESS)
    set_mdb_error (error, env->path, rc, "Could not commit");
  return rc;
}

static void
write_abort (WriteTxn *wt)
{
  Env *env = wt->env;

  if (wt->txn != NULL)
    mdb_txn_abort (wt->txn);
  wt->txn = NULL;
  /* Aborting closed the handles the transaction opened. */
  g_ptr_array_set_size (wt->pending, 0);

  if (wt->hard_dropped)
    {
      /* The stores whose handles were closed still exist: have the next
       * reader rescan. */
      g_mutex_lock (&env->lock);
      env->known_gen_valid = FALSE;
      g_mutex_unlock (&env->lock);
    }
  wt->set_changed = FALSE;
  wt->hard_dropped = FALSE;
  wt->store = NULL;
}

/* Runs one write transaction: @drop and the renames first (when
 * restructuring), then @ops. MDB_MAP_FULL grows the map and runs it all
 * again. */
static gboolean
run_write (QStoreLmdbProvider   *self,
           const char * const   *drop,
           const char * const   *rename_from,
           const char * const   *rename_to,
           const QStoreWriteOp  *ops,
           gsize                 n_ops,
           QStoreWriteFlags      flags,
           GError              **error)
{
  Env *env = self->env;
  WriteTxn wt = { 0 };
  gboolean closed;
  gboolean ok = FALSE;

  wt.env = env;
  wt.pending = g_ptr_array_new_with_free_func (dbi_entry_free);

  g_mutex_lock (&env->write_lock);

  g_mutex_lock (&env->lock);
  closed = self->closed;
  g_mutex_unlock (&env->lock);
  if (closed)
    {
      g_mutex_unlock (&env->write_lock);
      g_ptr_array_unref (wt.pending);
      set_closed_error (error, env->path);
      return FALSE;
    }

  /* Closing handles is only safe while no reader of this process is live;
   * the barrier keeps new ones out until the restructure is over. */
  if ((drop != NULL && drop[0] != NULL) || (rename_from != NULL && rename_from[0] != NULL))
    {
      g_mutex_lock (&env->lock);
      if (env->n_held == 0)
        {
          env->barrier = TRUE;
          while (env->n_transient > 0)
            g_cond_wait (&env->cond, &env->lock);
          wt.may_close = TRUE;
        }
      g_mutex_unlock (&env->lock);
    }

  for (guint attempt = 0; ; attempt++)
    {
      g_autoptr(GError) local_error = NULL;
      int rc;

      rc = mdb_txn_begin (env->env, NULL, 0, &wt.txn);
      if (rc != MDB_SUCCESS)
        {
          wt.txn = NULL;
          set_mdb_error (&local_error, env->path, rc, "Could not start writing");
        }

      for (guint i = 0; rc == MDB_SUCCESS && drop != NULL && drop[i] != NULL; i++)
        {
          rc = write_drop (&wt, drop[i]);
          if (rc != MDB_SUCCESS)
            set_mdb_error (&local_error, env->path, rc, "Could not drop store “%s”", drop[i]);
        }
      for (guint i = 0;
           rc == MDB_SUCCESS && rename_from != NULL && rename_from[i] != NULL && rename_to[i] != NULL;
           i++)
        {
          rc = write_rename (&wt, rename_from[i], rename_to[i], &local_error);
          if (rc != MDB_SUCCESS && rc != RC_ERROR)
            set_mdb_error (&local_error, env->path, rc, "Could not move store “%s” to “%s”",
                           rename_from[i], rename_to[i]);
        }
      if (rc == MDB_SUCCESS)
        rc = write_apply (&wt, ops, n_ops, &local_error);
      if (rc == MDB_SUCCESS)
        rc = write_commit (&wt, flags, &local_error);

      if (rc == MDB_SUCCESS)
        {
          ok = TRUE;
          break;
        }
      write_abort (&wt);

      if (rc == MDB_MAP_FULL && attempt < 64)
        {
          if (!env_grow_map_locked (env, wt.may_close, error))
            break;
          continue;
        }
      if (rc == MDB_MAP_RESIZED && attempt < MAX_RETRIES)
        {
          if (!env_adopt_map_size_locked (env, wt.may_close, error))
            break;
          continue;
        }
      g_propagate_error (error, g_steal_pointer (&local_error));
      break;
    }

  if (wt.may_close)
    {
      g_mutex_lock (&env->lock);
      env_lift_barrier_locked (env);
      g_mutex_unlock (&env->lock);
    }
  g_mutex_unlock (&env->write_lock);

  g_ptr_array_unref (wt.pending);
  return ok;
}

/* The provider */

static QStoreKV *
qstore_lmdb_provider_open_store (QStoreProvider  *provider,
                                 const char      *name,
                                 GError         **error)
{
  QStoreLmdbProvider *self = QSTORE_LMDB_PROVIDER (provider);
  QStoreLmdbKV *kv;
  gsize len = strlen (name);

  if (len > self->env->max_key)
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                   "Store name “%.32s…” is %" G_GSIZE_FORMAT " bytes long: the lmdb "
                   "provider names stores of at most %u bytes",
                   name, len, self->env->max_key);
      return NULL;
    }

  kv = g_object_new (QSTORE_TYPE_LMDB_KV, NULL);
  kv->provider = g_object_ref (self);
  kv->name = g_strdup (name);
  return QSTORE_KV (kv);
}

static QStoreSnapshot *
qstore_lmdb_provider_begin_snapshot (QStoreProvider  *provider,
                                     GError         **error)
{
  QStoreLmdbProvider *self = QSTORE_LMDB_PROVIDER (provider);
  QStoreLmdbSnapshot *snapshot;
  ReadTxn *rt;

  rt = read_begin_complete (self, TRUE, error);
  if (rt == NULL)
    return NULL;

  snapshot = g_object_new (QSTORE_TYPE_LMDB_SNAPSHOT, NULL);
  snapshot->provider = g_object_ref (self);
  snapshot->rt = rt;
  return QSTORE_SNAPSHOT (snapshot);
}

static gboolean
qstore_lmdb_provider_write (QStoreProvider       *provider,
                            const QStoreWriteOp  *ops,
                            gsize                 n_ops,
                            QStoreWriteFlags      flags,
                            GError              **error)
{
  return run_write (QSTORE_LMDB_PROVIDER (provider), NULL, NULL, NULL, ops, n_ops, flags, error);
}

static gboolean
qstore_lmdb_provider_restructure (QStoreProvider       *provider,
                                  const char * const   *drop,
                                  const char * const   *rename_from,
                                  const char * const   *rename_to,
                                  const QStoreWriteOp  *ops,
                                  gsize                 n_ops,
                                  GError              **error)
{
  return run_write (QSTORE_LMDB_PROVIDER (provider), drop, rename_from, rename_to,
                    ops, n_ops, QSTORE_WRITE_SYNC, error);
}

static char **
qstore_lmdb_provider_list_stores (QStoreProvider  *provider,
                                  GError         **error)
{
  QStoreLmdbProvider *self = QSTORE_LMDB_PROVIDER (provider);
  g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GPtrArray) result = g_ptr_array_new_with_free_func (g_free);
  Env *env = self->env;
  ReadTxn *rt;
  int rc;

  rt = read_begin_complete (self, FALSE, error);
  if (rt == NULL)
    return NULL;

  rc = list_store_names (rt->txn, env->main_dbi, names);
  for (guint i = 0; rc == MDB_SUCCESS && i < names->len; i++)
    {
      char *name = g_ptr_array_index (names, i);
      DbiEntry *entry;
      MDB_stat st;

      g_mutex_lock (&env->lock);
      entry = g_hash_table_lookup (env->dbis, name);
      g_mutex_unlock (&env->lock);
      if (entry == NULL || entry->epoch > rt->epoch)
        continue;

      rc = mdb_stat (rt->txn, entry->dbi, &st);
      if (rc == MDB_SUCCESS && st.ms_entries > 0)
        g_ptr_array_add (result, g_steal_pointer (&names->pdata[i]));
    }

  read_end (self, rt, FALSE);
  g_free (rt);

  if (rc != MDB_SUCCESS)
    {
      set_mdb_error (error, env->path, rc, "Could not list the stores");
      return NULL;
    }
  g_ptr_array_add (result, NULL);
  return (char **) g_ptr_array_free (g_steal_pointer (&result), FALSE);
}

static gsize
qstore_lmdb_provider_get_max_key_length (QStoreProvider *provider)
{
  QStoreLmdbProvider *self = (QStoreLmdbProvider *) provider;

  return self->env != NULL ? self->env->max_key : 0;
}

static void
qstore_lmdb_provider_close (QStoreProvider *provider)
{
  QStoreLmdbProvider *self = QSTORE_LMDB_PROVIDER (provider);
  Env *env = self->env;
  GList *link;

  if (env == NULL)
    return;

  g_mutex_lock (&env->lock);
  self->closed = TRUE;
  while (self->n_transient > 0)
    g_cond_wait (&env->cond, &env->lock);
  while ((link = g_queue_pop_head_link (&self->live)) != NULL)
    read_kill_locked (env, link->data);
  g_mutex_unlock (&env->lock);

  g_mutex_lock (&registry_lock);
  if (--env->n_open == 0)
    {
      if (registry != NULL && g_hash_table_lookup (registry, env->key) == env)
        g_hash_table_remove (registry, env->key);
      /* Let a write or a rescan under way finish first. */
      g_mutex_lock (&env->write_lock);
      env_close_handles (env);
      g_mutex_unlock (&env->write_lock);
    }
  g_mutex_unlock (&registry_lock);
}

static gboolean
parse_options (QStoreProvider  *provider,
               gsize           *map_size,
               guint           *max_stores,
               GError         **error)
{
  const char *value;
  guint64 n;

  *map_size = 0;
  *max_stores = DEFAULT_MAX_STORES;

  value = qstore_provider_get_option (provider, "map_size");
  if (value != NULL)
    {
      if (!g_ascii_string_to_unsigned (value, 10, 1, G_MAXSIZE, &n, NULL))
        {
          g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                       "Option map_size=%s is not understood: give the map size in "
                       "bytes, such as map_size=1073741824", value);
          return FALSE;
        }
      *map_size = n;
    }

  value = qstore_provider_get_option (provider, "max_stores");
  if (value != NULL)
    {
      if (!g_ascii_string_to_unsigned (value, 10, 1, MAX_MAX_STORES, &n, NULL))
        {
          g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                       "Option max_stores=%s is not understood: give a number of "
                       "stores from 1 to %d, such as max_stores=1024",
                       value, MAX_MAX_STORES);
          return FALSE;
        }
      *max_stores = n;
    }
  return TRUE;
}

static gboolean
qstore_lmdb_provider_initable_init (GInitable     *initable,
                                    GCancellable  *cancellable,
                                    GError       **error)
{
  QStoreLmdbProvider *self = QSTORE_LMDB_PROVIDER (initable);
  QStoreProvider *provider = QSTORE_PROVIDER (initable);
  const char *location = qstore_provider_get_location (provider);
  gboolean read_only = (qstore_provider_get_flags (provider) & QSTORE_OPEN_READ_ONLY) != 0;
  g_autofree char *key = NULL;
  GStatBuf st;
  gsize map_size;
  guint max_stores;
  Env *env;

  if (!parse_options (provider, &map_size, &max_stores, error))
    return FALSE;

  if (location == NULL || location[0] == '\0')
    {
      g_set_error_literal (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                           "The lmdb provider keeps a store in a directory: "
                           "give one, as in lmdb:/path/to/dir");
      return FALSE;
    }

  if (g_stat (location, &st) != 0)
    {
      int errsv = errno;

      if (errsv != ENOENT)
        {
          g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_IO,
                       "Cannot open the lmdb store at “%s”: %s",
                       location, g_strerror (errsv));
          return FALSE;
        }
      if (read_only)
        {
          g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_NOT_FOUND,
                       "No qstore store at “%s”: the directory does not exist "
                       "(a read-only open does not create it)", location);
          return FALSE;
        }
      if (g_mkdir_with_parents (location, 0755) != 0 || g_stat (location, &st) != 0)
        {
          errsv = errno;
          g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_IO,
                       "Cannot create the directory “%s” for an lmdb store: %s",
                       location, g_strerror (errsv));
          return FALSE;
        }
    }

  if (!S_ISDIR (st.st_mode))
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                   "“%s” is not a directory: the lmdb provider keeps a store in a "
                   "directory (data.mdb and lock.mdb); give a directory path",
                   location);
      return FALSE;
    }

  if (read_only)
    {
      g_autofree char *data = g_build_filename (location, "data.mdb", NULL);

      if (!g_file_test (data, G_FILE_TEST_EXISTS))
        {
          g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_NOT_FOUND,
                       "No qstore store at “%s”: the directory has no data.mdb "
                       "(open it for writing to create one)", location);
          return FALSE;
        }
    }

  /* LMDB must not open one environment twice in a process (closing one
   * would drop the other's file locks): providers of one directory share
   * it. */
  key = g_strdup_printf ("%" G_GUINT64_FORMAT ":%" G_GUINT64_FORMAT,
                         (guint64) st.st_dev, (guint64) st.st_ino);

  g_mutex_lock (&registry_lock);
  if (registry == NULL)
    registry = g_hash_table_new (g_str_hash, g_str_equal);
  env = g_hash_table_lookup (registry, key);
  /* A child process must not use its parent's environment. */
  if (env != NULL && env->pid != getpid ())
    env = NULL;

  if (env != NULL)
    {
      if (env->read_only && !read_only)
        {
          g_mutex_unlock (&registry_lock);
          g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_BUSY,
                       "The lmdb store at “%s” is already open read-only in this "
                       "process: close that handle before opening it for writing",
                       location);
          return FALSE;
        }
      env_ref (env);
      env->n_open++;
    }
  else
    {
      env = env_open (location, key, read_only, map_size, max_stores, error);
      if (env == NULL)
        {
          g_mutex_unlock (&registry_lock);
          return FALSE;
        }
      env->n_open = 1;
      g_hash_table_replace (registry, env->key, env);
    }
  g_mutex_unlock (&registry_lock);

  self->env = env;
  return TRUE;
}

static void
qstore_lmdb_provider_finalize (GObject *object)
{
  QStoreLmdbProvider *self = QSTORE_LMDB_PROVIDER (object);

  qstore_provider_close_all (QSTORE_PROVIDER (self));
  g_clear_pointer (&self->env, env_unref);

  G_OBJECT_CLASS (qstore_lmdb_provider_parent_class)->finalize (object);
}

static void
qstore_lmdb_provider_class_init (QStoreLmdbProviderClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = qstore_lmdb_provider_finalize;
}

static void
qstore_lmdb_provider_class_finalize (QStoreLmdbProviderClass *klass)
{
}

static void
qstore_lmdb_provider_init (QStoreLmdbProvider *self)
{
  g_queue_init (&self->live);
}

static void
qstore_lmdb_provider_iface_init (QStoreProviderInterface *iface)
{
  static const char * const option_names[] = { "map_size", "max_stores", NULL };

  iface->capabilities = (QSTORE_CAPABILITY_PERSISTENT |
                         QSTORE_CAPABILITY_ATOMIC_BATCH |
                         QSTORE_CAPABILITY_SNAPSHOTS |
                         QSTORE_CAPABILITY_MULTI_PROCESS);
  iface->option_names = option_names;
  iface->open_store = qstore_lmdb_provider_open_store;
  iface->begin_snapshot = qstore_lmdb_provider_begin_snapshot;
  iface->write = qstore_lmdb_provider_write;
  iface->restructure = qstore_lmdb_provider_restructure;
  iface->list_stores = qstore_lmdb_provider_list_stores;
  iface->get_max_key_length = qstore_lmdb_provider_get_max_key_length;
  iface->close = qstore_lmdb_provider_close;
}

static void
qstore_lmdb_initable_iface_init (GInitableIface *iface)
{
  iface->init = qstore_lmdb_provider_initable_init;
}

void
qstore_lmdb_register_types (GIOModule *module)
{
  GTypeModule *type_module = G_TYPE_MODULE (module);

  qstore_lmdb_kv_register_type (type_module);
  qstore_lmdb_snapshot_register_type (type_module);
  qstore_lmdb_iter_register_type (type_module);
  qstore_lmdb_provider_register_type (type_module);

  g_io_extension_point_implement (QSTORE_PROVIDER_EXTENSION_POINT_NAME,
                                  QSTORE_TYPE_LMDB_PROVIDER,
                                  "lmdb",
                                  0);
}
