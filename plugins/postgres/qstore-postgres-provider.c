/* qstore-postgres-provider.c: the `postgres` provider, one schema of a
 * PostgreSQL database per location
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <gmodule.h>

#include "qstore-i18n-private.h"
#include "qstore-postgres-check.h"
#include "qstore-postgres-notify.h"
#include "qstore-postgres-store.h"
#include "qstore-postgres-txn.h"
#include "qstore-postgres-write.h"

#define QSTORE_TYPE_PG_PROVIDER (qstore_pg_provider_get_type ())
G_DECLARE_FINAL_TYPE (QStorePgProvider, qstore_pg_provider, QSTORE, PG_PROVIDER, GObject)

struct _QStorePgProvider
{
  GObject      parent_instance;

  QStorePgDb  *db;  /* set by a successful init */
};

static void qstore_pg_provider_initable_iface_init (GInitableIface          *iface);
static void qstore_pg_provider_iface_init          (QStoreProviderInterface *iface);

G_DEFINE_DYNAMIC_TYPE_EXTENDED (QStorePgProvider, qstore_pg_provider,
                                G_TYPE_OBJECT, G_TYPE_FLAG_FINAL,
                                G_IMPLEMENT_INTERFACE_DYNAMIC (G_TYPE_INITABLE,
                                                               qstore_pg_provider_initable_iface_init)
                                G_IMPLEMENT_INTERFACE_DYNAMIC (QSTORE_TYPE_PROVIDER,
                                                               qstore_pg_provider_iface_init))

/* The schema when the URI names none. */
#define DEFAULT_SCHEMA "qstore"

/* The longest key: a key is part of the primary key's btree entry, which
 * PostgreSQL caps at 2704 bytes (a third of a page) with its header and
 * the store id. */
#define MAX_KEY_LENGTH 2560

/* PostgreSQL truncates longer identifiers. */
#define MAX_SCHEMA_LENGTH 63

static gboolean
check_location (const char  *conninfo,
                const char  *schema,
                GError     **error)
{
  char *message = NULL;
  PQconninfoOption *options;

  if (conninfo == NULL || conninfo[0] == '\0')
    {
      g_set_error_literal (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                           _("The postgres provider needs a connection string: write "
                           "postgres:host=/run/postgresql dbname=app?schema=NAME, or a "
                           "postgresql:// URI with its “?” written %3F"));
      return FALSE;
    }
  /* libpq's own words on what is wrong with it, before connecting. */
  options = PQconninfoParse (conninfo, &message);
  if (options == NULL)
    {
      g_autofree char *why = g_strstrip (g_strdup (message ? message : "out of memory"));

      /* Not repeated: it may hold a password. */
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                   _("The location of the postgres provider is not a PostgreSQL connection "
                   "string: %s; write key=value pairs (host=… dbname=…) or a "
                   "postgresql:// URI"), why);
      PQfreemem (message);
      return FALSE;
    }
  PQconninfoFree (options);

  if (schema[0] == '\0' || strlen (schema) > MAX_SCHEMA_LENGTH ||
      !g_utf8_validate (schema, -1, NULL))
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                   _("Option schema=%s of the postgres provider is not a schema name: "
                   "give 1 to %d bytes of UTF-8, such as schema=inventory"),
                   schema, MAX_SCHEMA_LENGTH);
      return FALSE;
    }
  return TRUE;
}

static gboolean
qstore_pg_provider_initable_init (GInitable     *initable,
                                  GCancellable  *cancellable,
                                  GError       **error)
{
  QStorePgProvider *self = QSTORE_PG_PROVIDER (initable);
  QStoreProvider *provider = QSTORE_PROVIDER (initable);
  const char *schema = qstore_provider_get_option (provider, "schema");
  const char *conninfo = qstore_provider_get_location (provider);
  gboolean read_only = (qstore_provider_get_flags (provider) & QSTORE_OPEN_READ_ONLY) != 0;
  g_autoptr(QStorePgDb) db = NULL;

  if (schema == NULL)
    schema = DEFAULT_SCHEMA;
  if (!check_location (conninfo, schema, error))
    return FALSE;

  /* Dropping @db closes what was opened before a failure, which lets go
   * of the writer lock too. */
  db = qstore_pg_db_new (conninfo, schema, read_only);
  if (!qstore_pg_db_open (db, read_only ? 0 : qstore_provider_get_wait_ms (provider), error))
    return FALSE;
  if (!read_only)
    qstore_provider_hold_own_lock (provider);

  self->db = g_steal_pointer (&db);
  return TRUE;
}

static void
qstore_pg_provider_initable_iface_init (GInitableIface *iface)
{
  iface->init = qstore_pg_provider_initable_init;
}

static gboolean
qstore_pg_provider_write (QStoreProvider       *provider,
                          const QStoreWriteOp  *ops,
                          gsize                 n_ops,
                          QStoreWriteFlags      flags,
                          GError              **error)
{
  return qstore_pg_write (QSTORE_PG_PROVIDER (provider)->db, ops, n_ops,
                          (flags & QSTORE_WRITE_SYNC) != 0, error);
}

static gboolean
qstore_pg_provider_restructure (QStoreProvider       *provider,
                                const char * const   *drop,
                                const char * const   *rename_from,
                                const char * const   *rename_to,
                                const QStoreWriteOp  *ops,
                                gsize                 n_ops,
                                GError              **error)
{
  return qstore_pg_restructure (QSTORE_PG_PROVIDER (provider)->db, drop, rename_from,
                                rename_to, ops, n_ops, error);
}

static char **
qstore_pg_provider_list_stores (QStoreProvider  *provider,
                                GError         **error)
{
  return qstore_pg_db_list_stores (QSTORE_PG_PROVIDER (provider)->db, error);
}

static QStoreKV *
qstore_pg_provider_open_store (QStoreProvider  *provider,
                               const char      *name,
                               GError         **error)
{
  /* Nothing to create: the row of a store appears with its first write. */
  return qstore_pg_store_new (provider, QSTORE_PG_PROVIDER (provider)->db, name);
}

static QStoreSnapshot *
qstore_pg_provider_begin_snapshot (QStoreProvider  *provider,
                                   GError         **error)
{
  return qstore_pg_snapshot_new (QSTORE_PG_PROVIDER (provider)->db, error);
}

static QStoreWriteTxn *
qstore_pg_provider_begin_write (QStoreProvider  *provider,
                                GError         **error)
{
  return qstore_pg_write_txn_new (QSTORE_PG_PROVIDER (provider)->db, error);
}

static gboolean
qstore_pg_provider_check (QStoreProvider     *provider,
                          QStoreCheckReport  *report,
                          GError            **error)
{
  return qstore_pg_check (QSTORE_PG_PROVIDER (provider)->db, report, error);
}

static GSource *
qstore_pg_provider_watch_commits (QStoreProvider  *provider,
                                  GError         **error)
{
  return qstore_pg_watch_new (QSTORE_PG_PROVIDER (provider)->db, error);
}

static gsize
qstore_pg_provider_get_max_key_length (QStoreProvider *provider)
{
  return MAX_KEY_LENGTH;
}

static void
qstore_pg_provider_close (QStoreProvider *provider)
{
  QStorePgProvider *self = QSTORE_PG_PROVIDER (provider);

  /* Ending the writer's session lets go of the writer lock. */
  if (self->db != NULL)
    qstore_pg_db_close (self->db);
}

static void
qstore_pg_provider_iface_init (QStoreProviderInterface *iface)
{
  /* wait_ms is libqstore's, as the provider has a writer lock. */
  static const char * const option_names[] = { "schema", NULL };

  iface->capabilities = (QSTORE_CAPABILITY_PERSISTENT |
                         QSTORE_CAPABILITY_ATOMIC_BATCH |
                         QSTORE_CAPABILITY_SNAPSHOTS |
                         QSTORE_CAPABILITY_MULTI_PROCESS |
                         QSTORE_CAPABILITY_WRITER_LOCK |
                         QSTORE_CAPABILITY_WRITE_TXN | QSTORE_CAPABILITY_REMOTE);
  iface->option_names = option_names;
  iface->open_store = qstore_pg_provider_open_store;
  iface->begin_snapshot = qstore_pg_provider_begin_snapshot;
  iface->write = qstore_pg_provider_write;
  iface->restructure = qstore_pg_provider_restructure;
  iface->list_stores = qstore_pg_provider_list_stores;
  iface->get_max_key_length = qstore_pg_provider_get_max_key_length;
  iface->close = qstore_pg_provider_close;
  iface->check = qstore_pg_provider_check;
  iface->watch_commits = qstore_pg_provider_watch_commits;
  iface->begin_write = qstore_pg_provider_begin_write;
}

static void
qstore_pg_provider_finalize (GObject *object)
{
  QStorePgProvider *self = QSTORE_PG_PROVIDER (object);

  qstore_provider_close_all (QSTORE_PROVIDER (self));
  g_clear_pointer (&self->db, qstore_pg_db_unref);

  G_OBJECT_CLASS (qstore_pg_provider_parent_class)->finalize (object);
}

static void
qstore_pg_provider_class_init (QStorePgProviderClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = qstore_pg_provider_finalize;
}

static void
qstore_pg_provider_class_finalize (QStorePgProviderClass *klass)
{
}

static void
qstore_pg_provider_init (QStorePgProvider *self)
{
}

/* The GIO module: its entry points are the only symbols the plugin exports. */

QSTORE_PLUGIN_DEFINE_API_VERSION;

G_MODULE_EXPORT void
g_io_module_load (GIOModule *module)
{
  qstore_pg_provider_register_type (G_TYPE_MODULE (module));
  qstore_pg_store_register_types (G_TYPE_MODULE (module));
  qstore_pg_write_txn_register_type_in (G_TYPE_MODULE (module));
  g_io_extension_point_implement (QSTORE_PROVIDER_EXTENSION_POINT_NAME,
                                  QSTORE_TYPE_PG_PROVIDER, "postgres", 0);
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
