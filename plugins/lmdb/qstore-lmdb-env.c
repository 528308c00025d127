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

#include "qstore-i18n-private.h"
#include "qstore-lmdb-check.h"
#include "qstore-lmdb-env.h"

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

#define MARKER_FORMAT_KEY  "format"
#define MARKER_FORMAT      "qstore-lmdb/1"
#define MARKER_FORMAT_BASE "qstore-lmdb/"
#define MARKER_GEN_KEY     "generation"

G_STATIC_ASSERT ((int) QSTORE_LMDB_VERIFY_META == (int) QSTORE_LMDB_WALK_META);
G_STATIC_ASSERT ((int) QSTORE_LMDB_VERIFY_BRANCHES == (int) QSTORE_LMDB_WALK_BRANCHES);
G_STATIC_ASSERT ((int) QSTORE_LMDB_VERIFY_FULL == (int) QSTORE_LMDB_WALK_FULL);

/* The environment is opened without MDB_WRITEMAP: the map is address
 * space reserved, not disk, and data.mdb grows only as pages are used. A
 * write transaction held open across calls cannot grow the map (LMDB
 * resizes only between transactions), so on 64 bits the default leaves
 * it room enough for any import; a 32-bit address space has no such
 * room. */
#if GLIB_SIZEOF_SIZE_T >= 8
#define DEFAULT_MAP_SIZE   ((gsize) 64 << 30)
#else
#define DEFAULT_MAP_SIZE   ((gsize) 1 << 30)
#endif
#define MAX_READERS        1024
#define FILE_MODE          0644

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

/* Maps an LMDB error to the QSTORE_ERROR domain, with LMDB's text and the
 * location. */
void
qstore_lmdb_set_error (GError     **error,
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
               _("%s in the LMDB store at “%s”: %s%s%s"),
               what, path, mdb_strerror (rc),
               hint ? "; " : "", hint ? hint : "");
}

void
qstore_lmdb_set_closed_error (GError     **error,
                              const char  *path)
{
  g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_CLOSED,
               _("The lmdb store at “%s” is closed: open it again to use it"), path);
}

/* Handles */

QStoreLmdbDbi *
qstore_lmdb_dbi_new (const char *name,
                     MDB_dbi     dbi)
{
  QStoreLmdbDbi *entry = g_new0 (QStoreLmdbDbi, 1);

  entry->name = g_strdup (name);
  entry->dbi = dbi;
  return entry;
}

void
qstore_lmdb_dbi_free (gpointer data)
{
  QStoreLmdbDbi *entry = data;

  g_free (entry->name);
  g_free (entry);
}

int
qstore_lmdb_read_generation (MDB_txn *txn,
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

int
qstore_lmdb_write_generation (MDB_txn *txn,
                              MDB_dbi  marker,
                              guint64  gen)
{
  MDB_val key = { strlen (MARKER_GEN_KEY), (void *) MARKER_GEN_KEY };
  guint64 be = GUINT64_TO_BE (gen);
  MDB_val value = { sizeof be, &be };

  return mdb_put (txn, marker, &key, &value, 0);
}

/* Adds the names of the stores that exist as of @txn to @names. */
int
qstore_lmdb_list_store_names (MDB_txn   *txn,
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
      if (key.mv_size == strlen (QSTORE_LMDB_MARKER_DBI_NAME) &&
          memcmp (key.mv_data, QSTORE_LMDB_MARKER_DBI_NAME, key.mv_size) == 0)
        continue;
      g_ptr_array_add (names, g_strndup (key.mv_data, key.mv_size));
    }
  mdb_cursor_close (cursor);

  return rc == MDB_NOTFOUND ? MDB_SUCCESS : rc;
}

/* The environment */

static GMutex registry_lock;
static GHashTable *registry; /* "dev:ino" → QStoreLmdbEnv */

QStoreLmdbEnv *
qstore_lmdb_env_ref (QStoreLmdbEnv *env)
{
  g_atomic_ref_count_inc (&env->ref_count);
  return env;
}

void
qstore_lmdb_env_unref (QStoreLmdbEnv *env)
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
env_close_handles (QStoreLmdbEnv *env)
{
  g_mutex_lock (&env->lock);
  g_assert (env->n_held == 0 && env->n_transient == 0);
  for (guint i = 0; i < env->pool->len; i++)
    mdb_txn_abort (g_ptr_array_index (env->pool, i));
  g_ptr_array_set_size (env->pool, 0);
  for (guint i = 0; i < env->n_live; i++)
    mdb_txn_abort (env->live[i].txn);
  env->n_live = 0;
  mdb_env_close (env->env);
  env->env = NULL;
  g_mutex_unlock (&env->lock);
}

static gsize
env_get_map_size (QStoreLmdbEnv *env)
{
  MDB_envinfo info;

  mdb_env_info (env->env, &info);
  return info.me_mapsize;
}

void
qstore_lmdb_env_forget_live_locked (QStoreLmdbEnv *env)
{
  for (guint i = 0; i < env->n_live; i++)
    {
      MDB_txn *txn = env->live[i].txn;

      mdb_txn_reset (txn);
      if (env->pool->len < QSTORE_LMDB_READ_POOL_SIZE)
        g_ptr_array_add (env->pool, txn);
      else
        mdb_txn_abort (txn);
    }
  env->n_live = 0;
}

/* Waits until no read transaction runs and none can begin. Called with
 * write_lock and env->lock held; fails when snapshots or iterators are
 * live, since those cannot be waited for. */
static gboolean
env_quiesce_locked (QStoreLmdbEnv  *env,
                    gboolean        have_barrier,
                    const char     *why,
                    int             code,
                    GError        **error)
{
  if (env->n_held > 0)
    {
      g_set_error (error, QSTORE_ERROR, code,
                   _("%s, which cannot happen while this process holds %u "
                   "snapshot(s) or iterator(s) on the LMDB store at “%s”: "
                   "release them first%s"),
                   why, env->n_held, env->path,
                   code == QSTORE_ERROR_IO ? ", or open the store with a larger map_size option" : "");
      return FALSE;
    }
  if (!have_barrier)
    env->barrier = TRUE;
  while (env->n_transient > 0)
    g_cond_wait (&env->cond, &env->lock);
  qstore_lmdb_env_forget_live_locked (env);
  return TRUE;
}

void
qstore_lmdb_env_lift_barrier_locked (QStoreLmdbEnv *env)
{
  env->barrier = FALSE;
  g_cond_broadcast (&env->cond);
}

/* Another process grew the map beyond ours: map the new size. LMDB only
 * allows it while this process has no live transaction. */
gboolean
qstore_lmdb_env_adopt_map_size_locked (QStoreLmdbEnv  *env,
                                       gboolean        have_barrier,
                                       GError        **error)
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
        qstore_lmdb_env_lift_barrier_locked (env);
    }
  g_mutex_unlock (&env->lock);

  if (ok && rc != MDB_SUCCESS)
    {
      qstore_lmdb_set_error (error, env->path, rc, "Could not map the size another process set");
      return FALSE;
    }
  return ok;
}

gboolean
qstore_lmdb_env_adopt_map_size (QStoreLmdbEnv  *env,
                                GError        **error)
{
  gboolean ok;

  g_mutex_lock (&env->write_lock);
  if (env->env == NULL)
    {
      qstore_lmdb_set_closed_error (error, env->path);
      ok = FALSE;
    }
  else
    ok = qstore_lmdb_env_adopt_map_size_locked (env, FALSE, error);
  g_mutex_unlock (&env->write_lock);
  return ok;
}

/* MDB_MAP_FULL: double the map. Called with write_lock held and no write
 * transaction. */
gboolean
qstore_lmdb_env_grow_map_locked (QStoreLmdbEnv  *env,
                                 gboolean        have_barrier,
                                 GError        **error)
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
        qstore_lmdb_env_lift_barrier_locked (env);
    }
  g_mutex_unlock (&env->lock);

  if (ok && rc != MDB_SUCCESS)
    {
      qstore_lmdb_set_error (error, env->path, rc,
                     "The LMDB map is full and could not grow to %" G_GSIZE_FORMAT " bytes",
                     new_size);
      return FALSE;
    }
  return ok;
}

/* Before a write transaction held open across calls, which cannot grow
 * the map when it fills: doubles the map until at least as much of it is
 * free as data.mdb uses. Only as far as nothing of this process reads
 * (growing waits for no one); the transaction then gets what room there
 * is. Called with write_lock held and no write transaction. */
void
qstore_lmdb_env_make_room_locked (QStoreLmdbEnv *env)
{
  for (guint i = 0; i < 8; i++)
    {
      MDB_envinfo info;
      MDB_stat stat;
      guint64 used;

      if (mdb_env_info (env->env, &info) != MDB_SUCCESS ||
          mdb_env_stat (env->env, &stat) != MDB_SUCCESS)
        return;
      used = ((guint64) info.me_last_pgno + 1) * stat.ms_psize;
      if (info.me_mapsize >= G_MAXSIZE / 2 || info.me_mapsize - MIN (used, info.me_mapsize) >= used)
        return;
      if (!qstore_lmdb_env_grow_map_locked (env, FALSE, NULL))
        return;
    }
}

/* Opens the handles of the stores that exist now and have none (another
 * process made them), and records the generation the table covers. */
gboolean
qstore_lmdb_env_refresh (QStoreLmdbEnv  *env,
                         GError        **error)
{
  g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GPtrArray) pending = g_ptr_array_new_with_free_func (qstore_lmdb_dbi_free);
  MDB_txn *txn = NULL;
  MDB_dbi marker;
  gboolean have_marker;
  guint64 gen = 0;
  int rc;

  g_mutex_lock (&env->write_lock);
  if (env->env == NULL)
    {
      g_mutex_unlock (&env->write_lock);
      qstore_lmdb_set_closed_error (error, env->path);
      return FALSE;
    }

  for (guint attempt = 0; ; attempt++)
    {
      rc = mdb_txn_begin (env->env, NULL, MDB_RDONLY, &txn);
      if (rc != MDB_MAP_RESIZED || attempt >= QSTORE_LMDB_MAX_RETRIES)
        break;
      if (!qstore_lmdb_env_adopt_map_size_locked (env, FALSE, error))
        {
          g_mutex_unlock (&env->write_lock);
          return FALSE;
        }
    }
  if (rc != MDB_SUCCESS)
    {
      qstore_lmdb_set_error (error, env->path, rc, "Could not start reading the list of stores");
      g_mutex_unlock (&env->write_lock);
      return FALSE;
    }

  /* Only holders of write_lock change these. */
  marker = env->marker_dbi;
  have_marker = env->have_marker;

  if (!have_marker)
    {
      rc = mdb_dbi_open (txn, QSTORE_LMDB_MARKER_DBI_NAME, 0, &marker);
      if (rc == MDB_SUCCESS)
        have_marker = TRUE;
      else if (rc == MDB_NOTFOUND)
        {
          MDB_stat st;

          rc = mdb_stat (txn, env->main_dbi, &st);
          if (rc == MDB_SUCCESS && st.ms_entries > 0)
            {
              g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_CORRUPT,
                           _("“%s” is an LMDB environment but not a qstore store: "
                           "something other than qstore wrote to it"),
                           env->path);
              rc = QSTORE_LMDB_RC_ERROR;
            }
        }
    }
  if (rc == MDB_SUCCESS && have_marker)
    rc = qstore_lmdb_read_generation (txn, marker, &gen);
  if (rc == MDB_SUCCESS)
    rc = qstore_lmdb_list_store_names (txn, env->main_dbi, names);

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
        g_ptr_array_add (pending, qstore_lmdb_dbi_new (name, dbi));
      else if (rc == MDB_INCOMPATIBLE || rc == MDB_NOTFOUND)
        rc = MDB_SUCCESS; /* plain data, not a store: nothing to open */
    }

  if (rc != MDB_SUCCESS)
    {
      if (rc != QSTORE_LMDB_RC_ERROR)
        qstore_lmdb_set_error (error, env->path, rc, "Could not read the list of stores");
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
          QStoreLmdbDbi *entry = g_ptr_array_index (pending, i);

          entry->epoch = env->epoch;
          g_hash_table_replace (env->dbis, entry->name, entry);
        }
      g_ptr_array_set_free_func (pending, NULL);
      env->marker_dbi = marker;
      env->have_marker = have_marker;
      env->known_gen = gen;
      env->known_gen_valid = TRUE;
    }
  qstore_lmdb_env_lift_barrier_locked (env);
  g_mutex_unlock (&env->lock);

  g_mutex_unlock (&env->write_lock);

  if (rc != MDB_SUCCESS)
    {
      qstore_lmdb_set_error (error, env->path, rc, "Could not read the list of stores");
      return FALSE;
    }
  return TRUE;
}

static gboolean
check_format (QStoreLmdbEnv  *env,
              MDB_txn        *txn,
              GError        **error)
{
  MDB_val key = { strlen (MARKER_FORMAT_KEY), (void *) MARKER_FORMAT_KEY };
  MDB_val value;
  g_autofree char *format = NULL;
  guint64 version;
  int rc;

  rc = mdb_get (txn, env->marker_dbi, &key, &value);
  if (rc != MDB_SUCCESS && rc != MDB_NOTFOUND)
    {
      qstore_lmdb_set_error (error, env->path, rc, "Could not read the qstore format marker");
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
               _("“%s” is an LMDB environment with a damaged qstore marker (format “%s”): "
               "it cannot be read as a qstore store"),
               env->path, format ? format : "missing");
  return FALSE;
}

/* Checks the marker, creating it in a new environment, and opens every
 * store. A writable open also removes the stores that were emptied while
 * readers held them. Nothing else uses the environment yet. */
static gboolean
env_load (QStoreLmdbEnv  *env,
          GError        **error)
{
  g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GPtrArray) entries = g_ptr_array_new_with_free_func (qstore_lmdb_dbi_free);
  gboolean created = FALSE, removed = FALSE;
  MDB_txn *txn = NULL;
  guint64 gen = 0;
  int rc;

  rc = mdb_txn_begin (env->env, NULL, env->read_only ? MDB_RDONLY : 0, &txn);
  if (rc != MDB_SUCCESS)
    {
      qstore_lmdb_set_error (error, env->path, rc, "Could not start reading");
      return FALSE;
    }

  rc = mdb_dbi_open (txn, NULL, 0, &env->main_dbi);
  if (rc != MDB_SUCCESS)
    goto mdb_failed;

  rc = mdb_dbi_open (txn, QSTORE_LMDB_MARKER_DBI_NAME, 0, &env->marker_dbi);
  if (rc == MDB_NOTFOUND)
    {
      MDB_stat st;

      rc = mdb_stat (txn, env->main_dbi, &st);
      if (rc != MDB_SUCCESS)
        goto mdb_failed;
      if (st.ms_entries > 0)
        {
          g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_CORRUPT,
                       _("“%s” is an LMDB environment but not a qstore store: it has "
                       "no “%s” marker; open an empty directory or one made by qstore"),
                       env->path, QSTORE_LMDB_MARKER_DBI_NAME);
          goto failed;
        }

      if (!env->read_only)
        {
          MDB_val key = { strlen (MARKER_FORMAT_KEY), (void *) MARKER_FORMAT_KEY };
          MDB_val value = { strlen (MARKER_FORMAT), (void *) MARKER_FORMAT };

          rc = mdb_dbi_open (txn, QSTORE_LMDB_MARKER_DBI_NAME, MDB_CREATE, &env->marker_dbi);
          if (rc == MDB_SUCCESS)
            rc = mdb_put (txn, env->marker_dbi, &key, &value, 0);
          if (rc == MDB_SUCCESS)
            rc = qstore_lmdb_write_generation (txn, env->marker_dbi, 0);
          if (rc != MDB_SUCCESS)
            goto mdb_failed;
          env->have_marker = TRUE;
          created = TRUE;
        }
    }
  else if (rc == MDB_INCOMPATIBLE)
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_CORRUPT,
                   _("“%s” is an LMDB environment but not a qstore store: its “%s” "
                   "entry is plain data"),
                   env->path, QSTORE_LMDB_MARKER_DBI_NAME);
      goto failed;
    }
  else if (rc != MDB_SUCCESS)
    goto mdb_failed;
  else
    {
      env->have_marker = TRUE;
      if (!check_format (env, txn, error))
        goto failed;
      rc = qstore_lmdb_read_generation (txn, env->marker_dbi, &gen);
      if (rc != MDB_SUCCESS)
        goto mdb_failed;
    }

  rc = qstore_lmdb_list_store_names (txn, env->main_dbi, names);
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
                       _("“%s” holds plain data under “%s” where qstore expects a store: "
                       "it was changed by something other than qstore"),
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
      g_ptr_array_add (entries, qstore_lmdb_dbi_new (name, dbi));
    }

  if (removed && !created)
    {
      rc = qstore_lmdb_write_generation (txn, env->marker_dbi, ++gen);
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
      QStoreLmdbDbi *entry = g_ptr_array_index (entries, i);

      g_hash_table_replace (env->dbis, entry->name, entry);
    }
  g_ptr_array_set_free_func (entries, NULL);
  env->known_gen = gen;
  env->known_gen_valid = TRUE;
  return TRUE;

mdb_failed:
  qstore_lmdb_set_error (error, env->path, rc, "Could not open the stores");
failed:
  if (txn != NULL)
    mdb_txn_abort (txn);
  return FALSE;
}

static void
note_problem (const char *where,
              const char *message,
              gpointer    user_data)
{
  GPtrArray *problems = user_data;

  g_ptr_array_add (problems, g_strdup (message));
}

/* Walks the structure LMDB is about to trust, in a read transaction that
 * keeps the snapshot walked from being reused by a writer. */
static gboolean
env_verify (QStoreLmdbEnv   *env,
            QStoreLmdbWalk   mode,
            GError         **error)
{
  for (guint attempt = 0; attempt < QSTORE_LMDB_MAX_RETRIES; attempt++)
    {
      g_autoptr(GPtrArray) problems = g_ptr_array_new_with_free_func (g_free);
      GError *local_error = NULL;
      QStoreLmdbWalkStats stats;
      MDB_txn *txn;
      int rc, n;

      rc = mdb_txn_begin (env->env, NULL, MDB_RDONLY, &txn);
      if (rc != MDB_SUCCESS)
        {
          qstore_lmdb_set_error (error, env->path, rc, "Could not start reading");
          return FALSE;
        }
      n = qstore_lmdb_check_walk (env->path, mdb_txn_id (txn), mode, note_problem, problems,
                                  &stats, &local_error);
      mdb_txn_abort (txn);

      /* A writer in another process moved on meanwhile: walk again. */
      if (n < 0 && g_error_matches (local_error, QSTORE_ERROR, QSTORE_ERROR_BUSY))
        {
          g_clear_error (&local_error);
          continue;
        }
      if (n < 0)
        {
          g_propagate_error (error, local_error);
          return FALSE;
        }
      if (n > 0)
        {
          g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_CORRUPT,
                       _("The LMDB store at “%s” is damaged: %s%s; restore it from a backup"),
                       env->path, (const char *) g_ptr_array_index (problems, 0),
                       n > 1 ? " (and more)" : "");
          return FALSE;
        }
      return TRUE;
    }
  g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_BUSY,
               _("The LMDB store at “%s” keeps changing under another process while it is "
               "checked: try again"), env->path);
  return FALSE;
}

static QStoreLmdbEnv *
env_open (const char      *path,
          const char      *key,
          gboolean         read_only,
          gsize            map_size,
          guint            max_stores,
          QStoreLmdbVerify  verify,
          GError         **error)
{
  QStoreLmdbFileInfo info;
  QStoreLmdbEnv *env = g_new0 (QStoreLmdbEnv, 1);
  g_autofree char *lock_path = g_build_filename (path, "lock.mdb", NULL);
  /* LMDB makes its lock file even for a read-only open: an open that
   * fails must not leave one behind in a directory that is no store. */
  gboolean had_lock = g_file_test (lock_path, G_FILE_TEST_EXISTS);
  QStoreLmdbWalk walk;
  int rc;

  /* Before LMDB maps a byte of it: LMDB follows what the file says. */
  if (!qstore_lmdb_check_meta (path, &info, error))
    {
      g_free (env);
      return NULL;
    }
  if (info.empty && read_only)
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_NOT_FOUND,
                   _("No qstore store at “%s”: its data.mdb is missing or empty (a store "
                   "whose creation did not finish, or a truncated file); open it for "
                   "writing to start a new, empty store there"), path);
      g_free (env);
      return NULL;
    }
  if (verify == QSTORE_LMDB_VERIFY_AUTO)
    walk = info.size <= QSTORE_LMDB_VERIFY_FULL_MAX ? QSTORE_LMDB_WALK_FULL
                                                    : QSTORE_LMDB_WALK_BRANCHES;
  else
    walk = (QStoreLmdbWalk) verify;

  g_atomic_ref_count_init (&env->ref_count);
  env->key = g_strdup (key);
  env->path = g_strdup (path);
  env->pid = getpid ();
  env->read_only = read_only;
  g_mutex_init (&env->write_lock);
  g_mutex_init (&env->lock);
  g_cond_init (&env->cond);
  env->dbis = g_hash_table_new_full (g_str_hash, g_str_equal, NULL, qstore_lmdb_dbi_free);
  env->retired = g_ptr_array_new_with_free_func (qstore_lmdb_dbi_free);
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
                     _("“%s” is not a qstore store: its data.mdb (or lock.mdb) is not an "
                     "LMDB file; give the directory of a qstore store or an empty one"),
                     path);
      else if (rc == MDB_VERSION_MISMATCH)
        g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_CORRUPT,
                     _("“%s” was written by an incompatible version of LMDB (%s): "
                     "it cannot be opened with LMDB %d.%d.%d"),
                     path, mdb_strerror (rc),
                     MDB_VERSION_MAJOR, MDB_VERSION_MINOR, MDB_VERSION_PATCH);
      else if (rc == ENOENT && read_only)
        g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_NOT_FOUND,
                     _("No qstore store at “%s”: it has no data.mdb "
                     "(open it for writing to create one)"), path);
      else if (rc == ENOENT)
        g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_IO,
                     _("Cannot create data.mdb of the LMDB store at “%s”: %s (is data.mdb "
                     "a link to a place that does not exist?)"), path, g_strerror (rc));
      else
        qstore_lmdb_set_error (error, path, rc, "Could not open the environment");

      if (env->env != NULL)
        mdb_env_close (env->env);
      env->env = NULL;
      qstore_lmdb_env_unref (env);
      if (!had_lock)
        g_unlink (lock_path);
      return NULL;
    }

  /* Without an explicit size, keep the size the environment was last used
   * with when it is larger than the default. */
  if (map_size == 0 && env_get_map_size (env) < DEFAULT_MAP_SIZE)
    mdb_env_set_mapsize (env->env, DEFAULT_MAP_SIZE);

  env->max_key = mdb_env_get_maxkeysize (env->env);

  if ((!info.empty && !env_verify (env, walk, error)) || !env_load (env, error))
    {
      mdb_env_close (env->env);
      env->env = NULL;
      qstore_lmdb_env_unref (env);
      if (!had_lock)
        g_unlink (lock_path);
      return NULL;
    }

  return env;
}


/* The registry of the environments this process has open */

QStoreLmdbEnv *
qstore_lmdb_env_acquire (const char        *path,
                         gboolean           read_only,
                         gsize              map_size,
                         guint              max_stores,
                         QStoreLmdbVerify   verify,
                         GError           **error)
{
  g_autofree char *key = NULL;
  QStoreLmdbEnv *env;
  GStatBuf st;

  if (g_stat (path, &st) != 0)
    {
      int errsv = errno;

      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_IO,
                   _("Cannot open the lmdb store at “%s”: %s"), path, g_strerror (errsv));
      return NULL;
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
                       _("The lmdb store at “%s” is already open read-only in this "
                       "process: close that handle before opening it for writing"),
                       path);
          return NULL;
        }
      qstore_lmdb_env_ref (env);
      env->n_open++;
    }
  else
    {
      env = env_open (path, key, read_only, map_size, max_stores, verify, error);
      if (env == NULL)
        {
          g_mutex_unlock (&registry_lock);
          return NULL;
        }
      env->n_open = 1;
      g_hash_table_replace (registry, env->key, env);
    }
  g_mutex_unlock (&registry_lock);
  return env;
}

void
qstore_lmdb_env_release (QStoreLmdbEnv *env)
{
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
