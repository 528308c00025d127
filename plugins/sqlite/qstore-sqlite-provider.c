/* qstore-sqlite-provider.c: the `sqlite` provider, one SQLite file per location
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

/* F_OFD_SETLK */
#define _GNU_SOURCE 1

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include <glib/gstdio.h>
#include <gmodule.h>

#include "qstore-i18n-private.h"
#include "qstore-sqlite-check.h"
#include "qstore-sqlite-schema.h"
#include "qstore-sqlite-store.h"
#include "qstore-sqlite-txn.h"
#include "qstore-sqlite-write.h"

#define QSTORE_TYPE_SQLITE_PROVIDER (qstore_sqlite_provider_get_type ())
G_DECLARE_FINAL_TYPE (QStoreSqliteProvider, qstore_sqlite_provider,
                      QSTORE, SQLITE_PROVIDER, GObject)

struct _QStoreSqliteProvider
{
  GObject          parent_instance;

  QStoreSqliteDb  *db;  /* set by a successful init */
  /* A read-only open found neither -wal nor -shm (see
   * remove_reader_files()). */
  gboolean         found_no_wal;
};

static void qstore_sqlite_provider_initable_iface_init (GInitableIface          *iface);
static void qstore_sqlite_provider_iface_init          (QStoreProviderInterface *iface);

G_DEFINE_DYNAMIC_TYPE_EXTENDED (QStoreSqliteProvider, qstore_sqlite_provider,
                                G_TYPE_OBJECT, G_TYPE_FLAG_FINAL,
                                G_IMPLEMENT_INTERFACE_DYNAMIC (G_TYPE_INITABLE,
                                                               qstore_sqlite_provider_initable_iface_init)
                                G_IMPLEMENT_INTERFACE_DYNAMIC (QSTORE_TYPE_PROVIDER,
                                                               qstore_sqlite_provider_iface_init))

/* Opening the location */

/* The writer lock's file, beside the store's file like SQLite's -wal and
 * -shm. */
#define LOCK_FILE_SUFFIX "-writer.lock"

static gboolean open_main_conn (QStoreSqliteDb  *self,
                                GError         **error);

static gboolean
check_location (QStoreSqliteDb        *self,
                GError               **error)
{
  GStatBuf st;
  int err;

  if (self->path[0] == '\0')
    {
      g_set_error_literal (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                           _("The sqlite provider needs a file: write sqlite:/path/to/file.db"));
      return FALSE;
    }
  /* SQLite's in-memory database lives in one connection, and the provider
   * reads through several. */
  if (g_str_equal (self->path, ":memory:"))
    {
      g_set_error_literal (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                           _("The sqlite provider keeps a store in a file, not in SQLite's "
                           "“:memory:” database: for a store in memory, use memory:; "
                           "to name a file called “:memory:”, write sqlite:./:memory:"));
      return FALSE;
    }

  if (g_stat (self->path, &st) == 0)
    {
      if (S_ISDIR (st.st_mode))
        {
          g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                       _("“%s” is a directory: the sqlite provider keeps a store in one "
                       "file; name a file, such as %s/store.db"), self->path, self->path);
          return FALSE;
        }
      if (!S_ISREG (st.st_mode))
        {
          g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                       _("“%s” is not a regular file: the sqlite provider keeps a store "
                       "in a regular file"), self->path);
          return FALSE;
        }
      return TRUE;
    }

  err = errno;
  if (err == ENOENT || err == ENOTDIR)
    {
      g_autofree char *parent = g_path_get_dirname (self->path);

      if (self->read_only)
        {
          g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_NOT_FOUND,
                       _("There is no sqlite store at “%s”: the file does not exist "
                       "(open it read-write to create it)"), self->path);
          return FALSE;
        }
      if (!g_file_test (parent, G_FILE_TEST_IS_DIR))
        {
          g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_NOT_FOUND,
                       _("Cannot create the sqlite store “%s”: directory “%s” does not "
                       "exist; create it first"), self->path, parent);
          return FALSE;
        }
      if (g_access (parent, W_OK) != 0)
        {
          err = errno;
          g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_IO,
                       _("Cannot create the sqlite store “%s” in directory “%s”: %s; "
                       "check the permissions of the directory"),
                       self->path, parent, g_strerror (err));
          return FALSE;
        }
      return TRUE;
    }

  g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_IO,
               _("Cannot access the sqlite store “%s”: %s; check the permissions "
               "of the file and its directories"), self->path, g_strerror (err));
  return FALSE;
}

/* Reading a WAL database takes its shared-memory file: a reader that can
 * neither find nor create one (the writer is gone and the directory is not
 * ours) cannot read, and SQLite's own message does not say why. */
static void
explain_unreadable_wal (QStoreSqliteDb        *self,
                        GError               **error)
{
  g_autofree char *shm = g_strconcat (self->path, "-shm", NULL);
  g_autofree char *parent = g_path_get_dirname (self->path);

  if (!self->read_only || error == NULL || *error == NULL ||
      !g_error_matches (*error, QSTORE_ERROR, QSTORE_ERROR_IO) ||
      g_file_test (shm, G_FILE_TEST_EXISTS) || g_access (parent, W_OK) == 0)
    return;

  g_clear_error (error);
  g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_IO,
               _("SQLite store “%s” cannot be read: SQLite needs to create “%s” beside "
               "it and directory “%s” is not writable; make the directory writable "
               "or copy the store elsewhere"), self->path, shm, parent);
}

static gboolean
open_main (QStoreProvider   *provider,
           QStoreSqliteDb   *self,
           GError          **error)
{
  g_autofree char *lock_path = NULL;

  if (!check_location (self, error))
    return FALSE;

  if (!self->read_only)
    {
      /* Before anything is written: one writer at a time. */
      lock_path = g_strconcat (self->path, LOCK_FILE_SUFFIX, NULL);
      if (!qstore_provider_lock_location (provider, lock_path, error))
        return FALSE;
    }
  return open_main_conn (self, error);
}

static gboolean
open_main_conn (QStoreSqliteDb  *self,
                GError         **error)
{
  QStoreSqliteConn *conn;

  conn = self->main = qstore_sqlite_conn_open (self->path,
                                               self->read_only
                                               ? SQLITE_OPEN_READONLY
                                               : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
                                               self->busy_timeout_ms, self->cache_kib,
                                               self->mmap_bytes,
                                               error);
  if (conn == NULL)
    return FALSE;

  /* SQLite falls back to read-only when it may not write the file. */
  if (!self->read_only && sqlite3_db_readonly (conn->db, "main") == 1)
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_IO,
                   _("SQLite store “%s” cannot be written (permission denied): make the "
                   "file writable or open it read-only"), self->path);
      return FALSE;
    }

  if (!qstore_sqlite_schema_open (conn, self->read_only, error))
    {
      explain_unreadable_wal (self, error);
      return FALSE;
    }

  if (!self->read_only)
    {
      gint64 version, has_big;

      if (!qstore_sqlite_schema_enable_wal (conn, error) ||
          !qstore_sqlite_conn_exec (conn, "PRAGMA synchronous = NORMAL",
                                    "setting the durability", error) ||
          !qstore_sqlite_query_int (conn, "PRAGMA data_version", &version, error) ||
          !qstore_sqlite_query_int (conn, "SELECT EXISTS (SELECT 1 FROM big_values)",
                                    &has_big, error))
        return FALSE;
      self->sync_full = FALSE;
      self->data_version = version;
      /* The writer is the only one: what it knows of big_values holds. */
      self->has_big = has_big != 0;
      self->inline_max = qstore_sqlite_schema_inline_max (conn);
    }
  return TRUE;
}

static gboolean
parse_int_option (QStoreSqliteProvider  *self,
                  const char            *option,
                  const char            *example,
                  gint64                 min,
                  gint64                 max,
                  int                   *value,
                  GError               **error)
{
  const char *text = qstore_provider_get_option (QSTORE_PROVIDER (self), option);
  gint64 parsed;

  if (text == NULL)
    return TRUE;
  if (!g_ascii_string_to_signed (text, 10, min, max, &parsed, NULL))
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                   "Option %s=%s of the sqlite provider is not understood: give a "
                   "whole number from %" G_GINT64_FORMAT " to %" G_GINT64_FORMAT
                   ", such as %s=%s", option, text, min, max, option, example);
      return FALSE;
    }
  *value = (int) parsed;
  return TRUE;
}

/* SQLite's unix VFS: every connection to a WAL database holds a read lock
 * on this byte of the -shm file, its "dead man switch". */
#define SHM_DEAD_MAN_SWITCH 128

/* A read-only session on a file in WAL mode that had neither -wal nor
 * -shm makes SQLite create both, and a reader can neither checkpoint nor
 * remove them. Once its own connections are closed, they go again - when
 * it is safe: no writer can come meanwhile (this holds the writer lock),
 * no other connection uses them (nobody holds the -shm's dead man switch)
 * and the -wal holds no frame. */
static void
remove_reader_files (const char *path)
{
#ifdef F_OFD_SETLK
  g_autofree char *lock_path = g_strconcat (path, LOCK_FILE_SUFFIX, NULL);
  g_autofree char *wal = g_strconcat (path, "-wal", NULL);
  g_autofree char *shm = g_strconcat (path, "-shm", NULL);
  g_autoptr(QStoreLocationLock) lock = NULL;
  struct flock fl = { 0 };
  GStatBuf st;
  int fd;

  lock = qstore_location_lock_acquire (lock_path, path, 0, NULL);
  if (lock == NULL || (g_stat (wal, &st) == 0 && st.st_size != 0))
    return;
  fd = open (shm, O_RDWR | O_CLOEXEC);
  if (fd < 0)
    return;
  fl.l_type = F_WRLCK;
  fl.l_whence = SEEK_SET;
  fl.l_start = SHM_DEAD_MAN_SWITCH;
  fl.l_len = 1;
  if (fcntl (fd, F_OFD_SETLK, &fl) == 0)
    {
      g_unlink (wal);
      g_unlink (shm);
    }
  close (fd);
#endif
}

static gboolean
qstore_sqlite_provider_initable_init (GInitable     *initable,
                                      GCancellable  *cancellable,
                                      GError       **error)
{
  QStoreSqliteProvider *self = QSTORE_SQLITE_PROVIDER (initable);
  QStoreProvider *provider = QSTORE_PROVIDER (initable);
  g_autoptr(QStoreSqliteDb) db = NULL;

  db = qstore_sqlite_db_new (qstore_provider_get_location (provider),
                             (qstore_provider_get_flags (provider) & QSTORE_OPEN_READ_ONLY) != 0);
  if (!parse_int_option (self, "cache_size", "65536", 1, G_MAXINT / 1024,
                         &db->cache_kib, error) ||
      !parse_int_option (self, "mmap_size", "1073741824", 0, G_MAXINT,
                         &db->mmap_bytes, error) ||
      !parse_int_option (self, "busy_timeout", "5000", 0, G_MAXINT,
                         &db->busy_timeout_ms, error))
    return FALSE;

  if (db->read_only)
    {
      g_autofree char *wal = g_strconcat (db->path, "-wal", NULL);
      g_autofree char *shm = g_strconcat (db->path, "-shm", NULL);

      self->found_no_wal = !g_file_test (wal, G_FILE_TEST_EXISTS) &&
                           !g_file_test (shm, G_FILE_TEST_EXISTS);
    }

  /* Dropping @db closes what was opened before a failure. */
  if (!open_main (provider, db, error))
    {
      /* What the failed open made goes too. */
      qstore_sqlite_db_close (db);
      if (self->found_no_wal)
        remove_reader_files (db->path);
      return FALSE;
    }

  self->db = g_steal_pointer (&db);
  return TRUE;
}

static void
qstore_sqlite_provider_initable_iface_init (GInitableIface *iface)
{
  iface->init = qstore_sqlite_provider_initable_init;
}

/* Writing */

static gboolean
qstore_sqlite_provider_write (QStoreProvider       *provider,
                              const QStoreWriteOp  *ops,
                              gsize                 n_ops,
                              QStoreWriteFlags      flags,
                              GError              **error)
{
  QStoreSqliteDb *self = QSTORE_SQLITE_PROVIDER (provider)->db;
  QStoreSqliteConn *conn = self->main;
  gboolean ok = FALSE;

  g_mutex_lock (&conn->lock);
  /* Without a sync request, WAL at synchronous=NORMAL stays consistent but
   * may lose the last commits on power failure. */
  if (qstore_sqlite_write_begin (self, (flags & QSTORE_WRITE_SYNC) != 0, error))
    ok = qstore_sqlite_write_end (self, qstore_sqlite_write_apply (self, ops, n_ops, error),
                                  error);
  g_mutex_unlock (&conn->lock);
  return ok;
}

static gboolean
qstore_sqlite_provider_restructure (QStoreProvider       *provider,
                                    const char * const   *drop,
                                    const char * const   *rename_from,
                                    const char * const   *rename_to,
                                    const QStoreWriteOp  *ops,
                                    gsize                 n_ops,
                                    GError              **error)
{
  QStoreSqliteDb *self = QSTORE_SQLITE_PROVIDER (provider)->db;
  QStoreSqliteConn *conn = self->main;
  gboolean ok = FALSE;

  g_mutex_lock (&conn->lock);
  if (qstore_sqlite_write_begin (self, TRUE, error))
    {
      ok = qstore_sqlite_write_restructure (self, drop, rename_from, rename_to, error) &&
           qstore_sqlite_write_apply (self, ops, n_ops, error);
      ok = qstore_sqlite_write_end (self, ok, error);
    }
  g_mutex_unlock (&conn->lock);
  return ok;
}

static char **
qstore_sqlite_provider_list_stores (QStoreProvider  *provider,
                                    GError         **error)
{
  QStoreSqliteDb *self = QSTORE_SQLITE_PROVIDER (provider)->db;
  g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  QStoreSqliteConn *conn;
  sqlite3_stmt *stmt;
  int rc = SQLITE_ERROR;

  if (!(conn = qstore_sqlite_db_acquire_plain (self, error)))
    return NULL;
  g_mutex_lock (&conn->lock);
  if (qstore_sqlite_conn_check_open (conn, error) &&
      (stmt = qstore_sqlite_conn_stmt (conn, QSTORE_SQLITE_STMT_LIST, error)) != NULL)
    {
      while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
        {
          const char *name = (const char *) sqlite3_column_text (stmt, 0);

          /* Only names qstore could have written (a damaged file may
           * hold anything). */
          if (name != NULL && g_utf8_validate (name, -1, NULL))
            g_ptr_array_add (names, g_strdup (name));
        }
      if (rc != SQLITE_DONE)
        qstore_sqlite_conn_set_error (conn, rc, "listing the stores", error);
      sqlite3_reset (stmt);
    }
  g_mutex_unlock (&conn->lock);
  qstore_sqlite_db_release_plain (self, conn);

  if (rc != SQLITE_DONE)
    return NULL;
  g_ptr_array_add (names, NULL);
  return (char **) g_ptr_array_free (g_steal_pointer (&names), FALSE);
}

static QStoreKV *
qstore_sqlite_provider_open_store (QStoreProvider  *provider,
                                   const char      *name,
                                   GError         **error)
{
  /* Nothing to create: the row of a store appears with its first write. */
  return qstore_sqlite_store_new (provider, QSTORE_SQLITE_PROVIDER (provider)->db, name);
}

static QStoreWriteTxn *
qstore_sqlite_provider_begin_write (QStoreProvider  *provider,
                                    GError         **error)
{
  return qstore_sqlite_write_txn_new (QSTORE_SQLITE_PROVIDER (provider)->db, error);
}

static QStoreSnapshot *
qstore_sqlite_provider_begin_snapshot (QStoreProvider  *provider,
                                       GError         **error)
{
  return qstore_sqlite_snapshot_new (QSTORE_SQLITE_PROVIDER (provider)->db, error);
}

static gboolean
qstore_sqlite_provider_check (QStoreProvider     *provider,
                              QStoreCheckReport  *report,
                              GError            **error)
{
  return qstore_sqlite_check (QSTORE_SQLITE_PROVIDER (provider)->db, report, error);
}

static gsize
qstore_sqlite_provider_get_max_key_length (QStoreProvider *provider)
{
  return 0;
}

/* Closing */

static void
qstore_sqlite_provider_close (QStoreProvider *provider)
{
  QStoreSqliteProvider *self = QSTORE_SQLITE_PROVIDER (provider);

  if (self->db == NULL)
    return;
  qstore_sqlite_db_close (self->db);
  if (self->found_no_wal)
    remove_reader_files (self->db->path);
}

static void
qstore_sqlite_provider_iface_init (QStoreProviderInterface *iface)
{
  static const char * const option_names[] = { "cache_size", "mmap_size", "busy_timeout", NULL };

  iface->capabilities = (QSTORE_CAPABILITY_PERSISTENT |
                         QSTORE_CAPABILITY_ATOMIC_BATCH |
                         QSTORE_CAPABILITY_SNAPSHOTS |
                         QSTORE_CAPABILITY_MULTI_PROCESS |
                         QSTORE_CAPABILITY_WRITER_LOCK |
                         QSTORE_CAPABILITY_WRITE_TXN);
  iface->option_names = option_names;
  iface->open_store = qstore_sqlite_provider_open_store;
  iface->begin_snapshot = qstore_sqlite_provider_begin_snapshot;
  iface->begin_write = qstore_sqlite_provider_begin_write;
  iface->write = qstore_sqlite_provider_write;
  iface->restructure = qstore_sqlite_provider_restructure;
  iface->list_stores = qstore_sqlite_provider_list_stores;
  iface->get_max_key_length = qstore_sqlite_provider_get_max_key_length;
  iface->close = qstore_sqlite_provider_close;
  iface->check = qstore_sqlite_provider_check;
}

static void
qstore_sqlite_provider_finalize (GObject *object)
{
  QStoreSqliteProvider *self = QSTORE_SQLITE_PROVIDER (object);

  qstore_provider_close_all (QSTORE_PROVIDER (self));

  g_clear_pointer (&self->db, qstore_sqlite_db_unref);

  G_OBJECT_CLASS (qstore_sqlite_provider_parent_class)->finalize (object);
}

static void
qstore_sqlite_provider_class_init (QStoreSqliteProviderClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = qstore_sqlite_provider_finalize;
}

static void
qstore_sqlite_provider_class_finalize (QStoreSqliteProviderClass *klass)
{
}

static void
qstore_sqlite_provider_init (QStoreSqliteProvider *self)
{
}

/* The GIO module: its entry points are the only symbols the plugin exports. */

QSTORE_PLUGIN_DEFINE_API_VERSION;

G_MODULE_EXPORT void
g_io_module_load (GIOModule *module)
{
  qstore_sqlite_provider_register_type (G_TYPE_MODULE (module));
  qstore_sqlite_store_register_types (G_TYPE_MODULE (module));
  qstore_sqlite_write_txn_register_type_in (G_TYPE_MODULE (module));
  g_io_extension_point_implement (QSTORE_PROVIDER_EXTENSION_POINT_NAME,
                                  QSTORE_TYPE_SQLITE_PROVIDER, "sqlite", 0);
}

G_MODULE_EXPORT void
g_io_module_unload (GIOModule *module)
{
}

G_MODULE_EXPORT char **
g_io_module_query (void)
{
  char *points[] = { (char *) QSTORE_PROVIDER_EXTENSION_POINT_NAME, NULL };

  return g_strdupv (points);
}
