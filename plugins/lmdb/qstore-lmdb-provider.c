/* qstore-lmdb-provider.c: the LMDB provider
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include <glib/gstdio.h>

#include "qstore-i18n-private.h"
#include "qstore-lmdb-check.h"
#include "qstore-lmdb-provider.h"
#include "qstore-lmdb-store.h"
#include "qstore-lmdb-txn.h"
#include "qstore-lmdb-write.h"

/* The writer lock's file, in the environment's directory beside LMDB's
 * own data.mdb and lock.mdb. */
#define LOCK_FILE_NAME "writer.lock"

#define QSTORE_TYPE_LMDB_PROVIDER (qstore_lmdb_provider_get_type ())
G_DECLARE_FINAL_TYPE (QStoreLmdbProvider, qstore_lmdb_provider,
                      QSTORE, LMDB_PROVIDER, GObject)

struct _QStoreLmdbProvider
{
  GObject           parent_instance;

  QStoreLmdbHandle  handle;
};

static void qstore_lmdb_provider_iface_init (QStoreProviderInterface *iface);
static void qstore_lmdb_initable_iface_init (GInitableIface *iface);

/* GInitable first: GJS resolves the methods of the last interface only on
 * a type it has no introspection data for. */
G_DEFINE_DYNAMIC_TYPE_EXTENDED (QStoreLmdbProvider, qstore_lmdb_provider, G_TYPE_OBJECT, 0,
                                G_IMPLEMENT_INTERFACE_DYNAMIC (G_TYPE_INITABLE,
                                                               qstore_lmdb_initable_iface_init)
                                G_IMPLEMENT_INTERFACE_DYNAMIC (QSTORE_TYPE_PROVIDER,
                                                               qstore_lmdb_provider_iface_init))

static QStoreKV *
qstore_lmdb_provider_open_store (QStoreProvider  *provider,
                                 const char      *name,
                                 GError         **error)
{
  QStoreLmdbProvider *self = QSTORE_LMDB_PROVIDER (provider);
  gsize len = strlen (name);

  if (len > self->handle.env->max_key)
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                   "Store name “%.32s…” is %" G_GSIZE_FORMAT " bytes long: the lmdb "
                   "provider names stores of at most %u bytes",
                   name, len, self->handle.env->max_key);
      return NULL;
    }
  return qstore_lmdb_kv_new (provider, &self->handle, name);
}

static QStoreWriteTxn *
qstore_lmdb_provider_begin_write (QStoreProvider  *provider,
                                  GError         **error)
{
  QStoreLmdbProvider *self = QSTORE_LMDB_PROVIDER (provider);

  return qstore_lmdb_write_txn_new (provider, &self->handle, error);
}

static QStoreSnapshot *
qstore_lmdb_provider_begin_snapshot (QStoreProvider  *provider,
                                     GError         **error)
{
  QStoreLmdbProvider *self = QSTORE_LMDB_PROVIDER (provider);

  return qstore_lmdb_snapshot_new (provider, &self->handle, error);
}

static gboolean
qstore_lmdb_provider_write (QStoreProvider       *provider,
                            const QStoreWriteOp  *ops,
                            gsize                 n_ops,
                            QStoreWriteFlags      flags,
                            GError              **error)
{
  return qstore_lmdb_write (&QSTORE_LMDB_PROVIDER (provider)->handle, NULL, NULL, NULL,
                            ops, n_ops, flags, error);
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
  return qstore_lmdb_write (&QSTORE_LMDB_PROVIDER (provider)->handle, drop, rename_from,
                            rename_to, ops, n_ops, QSTORE_WRITE_SYNC, error);
}

static char **
qstore_lmdb_provider_list_stores (QStoreProvider  *provider,
                                  GError         **error)
{
  QStoreLmdbProvider *self = QSTORE_LMDB_PROVIDER (provider);
  g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GPtrArray) result = g_ptr_array_new_with_free_func (g_free);
  QStoreLmdbEnv *env = self->handle.env;
  QStoreLmdbReadTxn *rt;
  int rc;

  rt = qstore_lmdb_read_begin_complete (&self->handle, FALSE, error);
  if (rt == NULL)
    return NULL;

  rc = qstore_lmdb_list_store_names (rt->txn, env->main_dbi, names);
  for (guint i = 0; rc == MDB_SUCCESS && i < names->len; i++)
    {
      char *name = g_ptr_array_index (names, i);
      QStoreLmdbDbi *entry;
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

  qstore_lmdb_read_end (&self->handle, rt, FALSE);
  g_free (rt);

  if (rc != MDB_SUCCESS)
    {
      qstore_lmdb_set_error (error, env->path, rc, "Could not list the stores");
      return NULL;
    }
  g_ptr_array_add (result, NULL);
  return (char **) g_ptr_array_free (g_steal_pointer (&result), FALSE);
}

typedef struct
{
  QStoreCheckReport *report;
  const char        *data_path;
} CheckContext;

static void
add_problem (const char *where,
             const char *message,
             gpointer    user_data)
{
  CheckContext *context = user_data;

  if (g_str_equal (where, "data.mdb"))
    qstore_check_report_add_problem (context->report, QSTORE_CHECK_SCOPE_FILE,
                                     context->data_path, NULL, message);
  else
    qstore_check_report_add_problem (context->report, QSTORE_CHECK_SCOPE_STORE, where, NULL,
                                     message);
}

/* The whole page structure, whatever the size, in a read transaction
 * that keeps the snapshot walked in place. */
static gboolean
qstore_lmdb_provider_check (QStoreProvider     *provider,
                            QStoreCheckReport  *report,
                            GError            **error)
{
  QStoreLmdbProvider *self = QSTORE_LMDB_PROVIDER (provider);
  g_autofree char *data_path = g_build_filename (self->handle.env->path, "data.mdb", NULL);
  CheckContext context = { report, data_path };

  for (guint attempt = 0; attempt < QSTORE_LMDB_MAX_RETRIES; attempt++)
    {
      g_autoptr(GError) local_error = NULL;
      QStoreLmdbReadTxn rt = { 0 };
      QStoreLmdbWalkStats stats;
      int n;

      if (!qstore_lmdb_read_begin (&self->handle, &rt, FALSE, error))
        return FALSE;
      n = qstore_lmdb_check_walk (self->handle.env->path, mdb_txn_id (rt.txn),
                                  QSTORE_LMDB_WALK_FULL, add_problem, &context, &stats,
                                  &local_error);
      qstore_lmdb_read_end (&self->handle, &rt, FALSE);

      if (n < 0 && g_error_matches (local_error, QSTORE_ERROR, QSTORE_ERROR_BUSY))
        continue;
      if (n < 0)
        {
          g_propagate_error (error, g_steal_pointer (&local_error));
          return FALSE;
        }
      qstore_check_report_add_checked (report, QSTORE_CHECK_SCOPE_FILE, data_path,
                                       stats.n_pages);
      if (n > QSTORE_LMDB_MAX_REPORTED_PROBLEMS)
        {
          g_autofree char *note = g_strdup_printf (_("data.mdb shows %d problems; the first %d "
                                                   "are listed"), n,
                                                   QSTORE_LMDB_MAX_REPORTED_PROBLEMS);

          qstore_check_report_add_note (report, note);
        }
      qstore_check_report_add_note (report, _("LMDB keeps no checksums: a changed byte inside "
                                    "a key or value that keeps the keys in order cannot be "
                                    "told from a real one"));
      return TRUE;
    }
  g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_BUSY,
               _("The LMDB store at “%s” keeps changing under another process while it is "
               "checked: try again"), self->handle.env->path);
  return FALSE;
}

static gsize
qstore_lmdb_provider_get_max_key_length (QStoreProvider *provider)
{
  QStoreLmdbProvider *self = (QStoreLmdbProvider *) provider;

  return self->handle.env != NULL ? self->handle.env->max_key : 0;
}

static void
qstore_lmdb_provider_close (QStoreProvider *provider)
{
  QStoreLmdbProvider *self = QSTORE_LMDB_PROVIDER (provider);

  if (self->handle.env == NULL)
    return;
  qstore_lmdb_write_txn_close (&self->handle);
  qstore_lmdb_handle_close (&self->handle);
  qstore_lmdb_env_release (self->handle.env);
}

static gboolean
parse_options (QStoreProvider    *provider,
               gsize             *map_size,
               guint             *max_stores,
               QStoreLmdbVerify  *verify,
               GError           **error)
{
  static const char * const verify_names[] = {
    [QSTORE_LMDB_VERIFY_META] = "meta",
    [QSTORE_LMDB_VERIFY_BRANCHES] = "branches",
    [QSTORE_LMDB_VERIFY_FULL] = "full",
    [QSTORE_LMDB_VERIFY_AUTO] = "auto",
  };
  const char *value;
  guint64 n;

  *map_size = 0;
  *max_stores = QSTORE_LMDB_DEFAULT_MAX_STORES;
  *verify = QSTORE_LMDB_VERIFY_AUTO;

  value = qstore_provider_get_option (provider, "verify");
  if (value != NULL)
    {
      guint i;

      for (i = 0; i < G_N_ELEMENTS (verify_names); i++)
        if (g_str_equal (value, verify_names[i]))
          break;
      if (i == G_N_ELEMENTS (verify_names))
        {
          g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                       _("Option verify=%s is not understood: give how much of the file to "
                       "check when opening: verify=auto, full, branches or meta"), value);
          return FALSE;
        }
      *verify = i;
    }

  value = qstore_provider_get_option (provider, "map_size");
  if (value != NULL)
    {
      if (!g_ascii_string_to_unsigned (value, 10, 1, G_MAXSIZE, &n, NULL))
        {
          g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                       _("Option map_size=%s is not understood: give the map size in "
                       "bytes, such as map_size=1073741824"), value);
          return FALSE;
        }
      *map_size = n;
    }

  value = qstore_provider_get_option (provider, "max_stores");
  if (value != NULL)
    {
      if (!g_ascii_string_to_unsigned (value, 10, 1, QSTORE_LMDB_MAX_MAX_STORES, &n, NULL))
        {
          g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                       _("Option max_stores=%s is not understood: give a number of "
                       "stores from 1 to %d, such as max_stores=1024"),
                       value, QSTORE_LMDB_MAX_MAX_STORES);
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
  g_autofree char *lock_path = NULL;
  GStatBuf st;
  QStoreLmdbVerify verify;
  gsize map_size;
  guint max_stores;
  QStoreLmdbEnv *env;

  if (!parse_options (provider, &map_size, &max_stores, &verify, error))
    return FALSE;

  if (location == NULL || location[0] == '\0')
    {
      g_set_error_literal (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                           _("The lmdb provider keeps a store in a directory: "
                           "give one, as in lmdb:/path/to/dir"));
      return FALSE;
    }

  if (g_stat (location, &st) != 0)
    {
      int errsv = errno;

      if (errsv != ENOENT)
        {
          g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_IO,
                       _("Cannot open the lmdb store at “%s”: %s"),
                       location, g_strerror (errsv));
          return FALSE;
        }
      if (read_only)
        {
          g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_NOT_FOUND,
                       _("No qstore store at “%s”: the directory does not exist "
                       "(a read-only open does not create it)"), location);
          return FALSE;
        }
      if (g_mkdir_with_parents (location, 0755) != 0 || g_stat (location, &st) != 0)
        {
          errsv = errno;
          g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_IO,
                       _("Cannot create the directory “%s” for an lmdb store: %s"),
                       location, g_strerror (errsv));
          return FALSE;
        }
    }

  if (!S_ISDIR (st.st_mode))
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                   _("“%s” is not a directory: the lmdb provider keeps a store in a "
                   "directory (data.mdb and lock.mdb); give a directory path"),
                   location);
      return FALSE;
    }

  if (read_only)
    {
      g_autofree char *data = g_build_filename (location, "data.mdb", NULL);

      if (!g_file_test (data, G_FILE_TEST_EXISTS))
        {
          g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_NOT_FOUND,
                       _("No qstore store at “%s”: the directory has no data.mdb "
                       "(open it for writing to create one)"), location);
          return FALSE;
        }
    }

  if (!read_only)
    {
      /* Before anything is written: one writer at a time. */
      lock_path = g_build_filename (location, LOCK_FILE_NAME, NULL);
      if (!qstore_provider_lock_location (provider, lock_path, error))
        return FALSE;
    }

  env = qstore_lmdb_env_acquire (location, read_only, map_size, max_stores, verify, error);
  if (env == NULL)
    return FALSE;

  self->handle.env = env;
  return TRUE;
}

static void
qstore_lmdb_provider_finalize (GObject *object)
{
  QStoreLmdbProvider *self = QSTORE_LMDB_PROVIDER (object);

  qstore_provider_close_all (QSTORE_PROVIDER (self));
  g_clear_pointer (&self->handle.env, qstore_lmdb_env_unref);

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
  g_queue_init (&self->handle.live);
}

static void
qstore_lmdb_provider_iface_init (QStoreProviderInterface *iface)
{
  static const char * const option_names[] = { "map_size", "max_stores", "verify", NULL };

  iface->capabilities = (QSTORE_CAPABILITY_PERSISTENT |
                         QSTORE_CAPABILITY_ATOMIC_BATCH |
                         QSTORE_CAPABILITY_SNAPSHOTS |
                         QSTORE_CAPABILITY_MULTI_PROCESS |
                         QSTORE_CAPABILITY_WRITER_LOCK |
                         QSTORE_CAPABILITY_WRITE_TXN);
  iface->option_names = option_names;
  iface->open_store = qstore_lmdb_provider_open_store;
  iface->begin_snapshot = qstore_lmdb_provider_begin_snapshot;
  iface->write = qstore_lmdb_provider_write;
  iface->restructure = qstore_lmdb_provider_restructure;
  iface->list_stores = qstore_lmdb_provider_list_stores;
  iface->get_max_key_length = qstore_lmdb_provider_get_max_key_length;
  iface->close = qstore_lmdb_provider_close;
  iface->check = qstore_lmdb_provider_check;
  iface->begin_write = qstore_lmdb_provider_begin_write;
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

  qstore_lmdb_store_register_types (type_module);
  qstore_lmdb_write_txn_register_type_in (type_module);
  qstore_lmdb_provider_register_type (type_module);

  g_io_extension_point_implement (QSTORE_PROVIDER_EXTENSION_POINT_NAME,
                                  QSTORE_TYPE_LMDB_PROVIDER,
                                  "lmdb",
                                  0);
}

