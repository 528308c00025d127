/* qstore-provider.h: storage backends and how they are loaded
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(QSTORE_INSIDE) && !defined(QSTORE_COMPILATION)
# error "Only <qstore.h> can be included directly."
#endif

#include <gio/gio.h>

#include "qstore-kv.h"
#include "qstore-snapshot.h"
#include "qstore-types.h"
#include "qstore-write-op.h"
#include "qstore-write-txn.h"

G_BEGIN_DECLS

/**
 * QSTORE_PROVIDER_EXTENSION_POINT_NAME:
 *
 * The GIO extension point provider plugins implement: each registers a type
 * implementing [iface@Provider] under its name (`memory`, `lmdb`, `sqlite`).
 */
#define QSTORE_PROVIDER_EXTENSION_POINT_NAME "qstore-provider"

/**
 * QSTORE_CATALOG_STORE_NAME:
 *
 * The physical name of the catalog store.
 */
#define QSTORE_CATALOG_STORE_NAME "__catalog__"

/**
 * QSTORE_STATS_STORE_NAME:
 *
 * The physical name of the store that holds every table's statistics.
 */
#define QSTORE_STATS_STORE_NAME "__stats__"

/**
 * QSTORE_CHANGE_LOG_STORE_NAME:
 *
 * The physical name of the store that holds a database's durable change
 * log: one entry per committed transaction, keyed by the transaction id
 * in 8 big-endian bytes. A provider that announces commits (see
 * [method@Provider.watch_commits]) announces those of the writes that put
 * an entry into it.
 */
#define QSTORE_CHANGE_LOG_STORE_NAME "__changes__"

/**
 * QStoreCapabilities:
 * @QSTORE_CAPABILITY_NONE: none of the below
 * @QSTORE_CAPABILITY_PERSISTENT: data survives closing the provider
 * @QSTORE_CAPABILITY_ATOMIC_BATCH: every store shares one durable commit
 *   domain: [method@Provider.begin_atomic_batch] commits across stores
 * @QSTORE_CAPABILITY_SNAPSHOTS: [method@Provider.begin_snapshot] gives a
 *   read handle that sees one committed state while writes continue
 * @QSTORE_CAPABILITY_MULTI_PROCESS: another process may open the same
 *   location read-only while this one writes
 * @QSTORE_CAPABILITY_WRITER_LOCK: a writable open holds the location's
 *   writer lock ([class@LocationLock]) as long as the provider is open: a
 *   second writable open of the location, in this process or another,
 *   fails at once with %QSTORE_ERROR_BUSY (or waits up to the `wait_ms`
 *   option). Read-only opens take no lock and work beside the writer.
 *   Every persistent provider has it; a provider without it (memory)
 *   never shares a location with another open
 * @QSTORE_CAPABILITY_WRITE_TXN: [method@Provider.begin_write] opens a
 *   write transaction that takes writes as they come and stores them all
 *   at once at its commit, holding what it wrote in the provider's files
 *   rather than in memory. Withheld, like the atomic batch, by `?atomic=0`
 * @QSTORE_CAPABILITY_REMOTE: the data lives on a server, and a call may
 *   cost a round trip to it: hand many writes over in one call (one
 *   [method@Provider.write] rather than a write transaction fed chunk by
 *   chunk), which the provider sends as one pipeline
 *
 * What a provider can do.
 */
typedef enum /*< flags,underscore_name=qstore_capabilities >*/
{
  QSTORE_CAPABILITY_NONE = 0,
  QSTORE_CAPABILITY_PERSISTENT = 1 << 0,
  QSTORE_CAPABILITY_ATOMIC_BATCH = 1 << 1,
  QSTORE_CAPABILITY_SNAPSHOTS = 1 << 2,
  QSTORE_CAPABILITY_MULTI_PROCESS = 1 << 3,
  QSTORE_CAPABILITY_WRITER_LOCK = 1 << 4,
  QSTORE_CAPABILITY_WRITE_TXN = 1 << 5,
  QSTORE_CAPABILITY_REMOTE = 1 << 6,
} QStoreCapabilities;

/**
 * QStoreOpenFlags:
 * @QSTORE_OPEN_NONE: open for reading and writing, creating the location
 *   when it does not exist
 * @QSTORE_OPEN_READ_ONLY: open for reading only; the location must exist,
 *   and nothing in it is changed
 * @QSTORE_OPEN_NO_ATOMIC_BATCH: withhold the atomic cross-store batch (the
 *   `?atomic=0` URI option): writes then commit store by store
 *
 * How a location is opened.
 */
typedef enum /*< flags,underscore_name=qstore_open_flags >*/
{
  QSTORE_OPEN_NONE = 0,
  QSTORE_OPEN_READ_ONLY = 1 << 0,
  QSTORE_OPEN_NO_ATOMIC_BATCH = 1 << 1,
} QStoreOpenFlags;

/**
 * QStoreCommitEvent:
 * @QSTORE_COMMIT_EVENT_COMMITTED: a writer committed a write that put an
 *   entry into the change log. The transaction id it announced is a hint
 *   only (any client of a server may send an announcement): the log is
 *   what to read
 * @QSTORE_COMMIT_EVENT_LOST: the watch lost its connection: commits go
 *   unannounced until %QSTORE_COMMIT_EVENT_RESUMED. The watch connects
 *   again by itself
 * @QSTORE_COMMIT_EVENT_RESUMED: the watch is connected again; what was
 *   committed meanwhile was not announced
 *
 * What a commit watch (see [method@Provider.watch_commits]) tells.
 */
typedef enum /*< underscore_name=qstore_commit_event >*/
{
  QSTORE_COMMIT_EVENT_COMMITTED,
  QSTORE_COMMIT_EVENT_LOST,
  QSTORE_COMMIT_EVENT_RESUMED,
} QStoreCommitEvent;

/**
 * QStoreCommitFunc:
 * @event: what happened
 * @tx_id: the transaction id announced with %QSTORE_COMMIT_EVENT_COMMITTED,
 *   0 when the announcement carried none that reads as one, and for the
 *   other events
 * @user_data: the data given to g_source_set_callback()
 *
 * The callback of a commit watch's #GSource: set it with
 * g_source_set_callback(), cast with G_SOURCE_FUNC().
 *
 * Returns: %G_SOURCE_REMOVE to stop watching, %G_SOURCE_CONTINUE to go on
 */
typedef gboolean (*QStoreCommitFunc) (QStoreCommitEvent  event,
                                      guint64            tx_id,
                                      gpointer           user_data);

#define QSTORE_TYPE_PROVIDER (qstore_provider_get_type ())

QSTORE_AVAILABLE_IN_ALL
G_DECLARE_INTERFACE (QStoreProvider, qstore_provider, QSTORE, PROVIDER, GObject)

/**
 * QStoreProviderInterface:
 * @parent_iface: the parent interface
 * @capabilities: what the implementation can do; set in the interface init
 * @option_names: (array zero-terminated=1): the URI options the
 *   implementation understands besides `atomic`; set in the interface init
 * @open_store: a handle on the named store; opening does not create it
 *   (a store that was never written to reads back empty)
 * @begin_snapshot: a read handle on the current committed state
 * @write: (skip): apply @ops in order, all or nothing, with one durable commit
 *   when %QSTORE_WRITE_SYNC is set. (The providers shipped with qstore
 *   pass a private fault point before each op, so tests can make a commit
 *   fail part-way.)
 * @restructure: (skip): in one all-or-nothing unit, erase the stores named in
 *   @drop, move each store of @rename_from to the same position of
 *   @rename_to (%QSTORE_ERROR_EXISTS when a destination holds entries), then
 *   apply @ops. Names that do not exist are no-ops.
 * @list_stores: the names of the stores that hold entries
 * @get_max_key_length: the longest key the provider stores, 0 for no limit
 * @close: release every resource; the wrappers refuse calls afterwards
 * @check: check the provider's own files and structure without writing,
 *   adding what is wrong to the report under %QSTORE_CHECK_SCOPE_FILE (or
 *   %QSTORE_CHECK_SCOPE_STORE, naming the store); %FALSE with an error
 *   only when the check cannot run. May be %NULL. When it reports a
 *   problem, [method@Provider.check] does not read the stores, as reading
 *   a damaged structure may not be safe
 * @watch_commits: a new #GSource, on a connection of its own, that
 *   dispatches a [callback@CommitFunc] when another handle on the
 *   location commits a write holding a change-log entry, and when the
 *   watch loses and regains its connection. May be %NULL (the provider
 *   cannot tell commits); may return %NULL without an error when this
 *   location cannot. Followers of the change log wait on it instead of
 *   polling
 * @begin_write: a write transaction (providers with
 *   %QSTORE_CAPABILITY_WRITE_TXN; may be %NULL otherwise). It takes the
 *   provider's writer for its whole life, and must pass the private fault
 *   point of @write before each op it applies, as @write does
 *
 * The interface provider plugins implement. They also implement
 * #GInitable: `init` opens the location, read from
 * [method@Provider.get_location], [method@Provider.get_flags] and
 * [method@Provider.get_option]. The public wrappers check arguments,
 * read-only handles and use after close before calling the vfuncs.
 *
 * A provider with %QSTORE_CAPABILITY_WRITER_LOCK calls
 * [method@Provider.lock_location] (or, holding a lock of its own kind,
 * [method@Provider.hold_own_lock]) in `init` when it opens for writing,
 * before it changes anything in the location; opening fails if it does
 * not.
 */
struct _QStoreProviderInterface
{
  GTypeInterface parent_iface;

  QStoreCapabilities   capabilities;
  const char * const  *option_names;

  QStoreKV       *(*open_store)         (QStoreProvider       *self,
                                         const char           *name,
                                         GError              **error);
  QStoreSnapshot *(*begin_snapshot)     (QStoreProvider       *self,
                                         GError              **error);
  gboolean        (*write)              (QStoreProvider       *self,
                                         const QStoreWriteOp  *ops,
                                         gsize                 n_ops,
                                         QStoreWriteFlags      flags,
                                         GError              **error);
  gboolean        (*restructure)        (QStoreProvider       *self,
                                         const char * const   *drop,
                                         const char * const   *rename_from,
                                         const char * const   *rename_to,
                                         const QStoreWriteOp  *ops,
                                         gsize                 n_ops,
                                         GError              **error);
  char          **(*list_stores)        (QStoreProvider       *self,
                                         GError              **error);
  gsize           (*get_max_key_length) (QStoreProvider       *self);
  void            (*close)              (QStoreProvider       *self);
  gboolean        (*check)              (QStoreProvider       *self,
                                         QStoreCheckReport    *report,
                                         GError              **error);
  GSource        *(*watch_commits)      (QStoreProvider       *self,
                                         GError              **error);
  QStoreWriteTxn *(*begin_write)        (QStoreProvider       *self,
                                         GError              **error);

  /*< private >*/
  gpointer padding[5];
};

/* Loading */
QSTORE_AVAILABLE_IN_ALL
QStoreProvider     *qstore_provider_new                   (const char           *name,
                                                           const char           *location,
                                                           QStoreOpenFlags       flags,
                                                           GError              **error);
QSTORE_AVAILABLE_IN_ALL
QStoreProvider     *qstore_provider_new_with_options      (const char           *name,
                                                           const char           *location,
                                                           QStoreOpenFlags       flags,
                                                           const char * const   *options,
                                                           GError              **error);
QSTORE_AVAILABLE_IN_ALL
QStoreProvider     *qstore_provider_new_for_uri           (const char           *uri,
                                                           QStoreOpenFlags       flags,
                                                           GError              **error);
QSTORE_AVAILABLE_IN_ALL
char              **qstore_list_providers                 (void);
QSTORE_AVAILABLE_IN_ALL
gboolean            qstore_lookup_provider_capabilities   (const char           *name,
                                                           QStoreCapabilities   *capabilities,
                                                           GError              **error);

/* The opened location */
QSTORE_AVAILABLE_IN_ALL
const char         *qstore_provider_get_name              (QStoreProvider       *self);
QSTORE_AVAILABLE_IN_ALL
const char         *qstore_provider_get_location          (QStoreProvider       *self);
QSTORE_AVAILABLE_IN_ALL
QStoreOpenFlags     qstore_provider_get_flags             (QStoreProvider       *self);
QSTORE_AVAILABLE_IN_ALL
const char         *qstore_provider_get_option            (QStoreProvider       *self,
                                                           const char           *option);
QSTORE_AVAILABLE_IN_ALL
QStoreCapabilities  qstore_provider_get_capabilities      (QStoreProvider       *self);
QSTORE_AVAILABLE_IN_ALL
gsize               qstore_provider_get_max_key_length    (QStoreProvider       *self);
QSTORE_AVAILABLE_IN_ALL
gboolean            qstore_provider_is_closed             (QStoreProvider       *self);

QSTORE_AVAILABLE_IN_ALL
QStoreCheckReport  *qstore_provider_check                 (QStoreProvider       *self,
                                                           GError              **error);
QSTORE_AVAILABLE_IN_ALL
GSource            *qstore_provider_watch_commits         (QStoreProvider       *self,
                                                           GError              **error);

/* For implementations */
QSTORE_AVAILABLE_IN_ALL
gboolean            qstore_provider_lock_location         (QStoreProvider       *self,
                                                           const char           *lock_path,
                                                           GError              **error);
QSTORE_AVAILABLE_IN_ALL
guint               qstore_provider_get_wait_ms           (QStoreProvider       *self);
QSTORE_AVAILABLE_IN_ALL
void                qstore_provider_hold_own_lock         (QStoreProvider       *self);

/* Stores */
QSTORE_AVAILABLE_IN_ALL
QStoreKV           *qstore_provider_open_store            (QStoreProvider       *self,
                                                           const char           *name,
                                                           GError              **error);
QSTORE_AVAILABLE_IN_ALL
QStoreKV           *qstore_provider_get_store             (QStoreProvider       *self,
                                                           const char           *schema,
                                                           const char           *table,
                                                           GError              **error);
QSTORE_AVAILABLE_IN_ALL
QStoreKV           *qstore_provider_get_index_store       (QStoreProvider       *self,
                                                           const char           *schema,
                                                           const char           *table,
                                                           const char           *index,
                                                           GError              **error);
QSTORE_AVAILABLE_IN_ALL
QStoreKV           *qstore_provider_get_stats_store       (QStoreProvider       *self,
                                                           GError              **error);
QSTORE_AVAILABLE_IN_ALL
QStoreKV           *qstore_provider_get_catalog_store     (QStoreProvider       *self,
                                                           GError              **error);
QSTORE_AVAILABLE_IN_ALL
char              **qstore_provider_list_stores           (QStoreProvider       *self,
                                                           GError              **error);
QSTORE_AVAILABLE_IN_ALL
gboolean            qstore_provider_delete_table_stores   (QStoreProvider       *self,
                                                           const char           *schema,
                                                           const char           *table,
                                                           const char * const   *index_names,
                                                           GError              **error);
QSTORE_AVAILABLE_IN_ALL
gboolean            qstore_provider_delete_index_store    (QStoreProvider       *self,
                                                           const char           *schema,
                                                           const char           *table,
                                                           const char           *index,
                                                           GError              **error);
QSTORE_AVAILABLE_IN_ALL
gboolean            qstore_provider_rename_table_stores   (QStoreProvider       *self,
                                                           const char           *schema,
                                                           const char           *old_table,
                                                           const char           *new_table,
                                                           const char * const   *index_names,
                                                           GError              **error);

/* Reading and writing */
QSTORE_AVAILABLE_IN_ALL
QStoreSnapshot     *qstore_provider_begin_snapshot        (QStoreProvider       *self,
                                                           GError              **error);
QSTORE_AVAILABLE_IN_ALL
QStoreAtomicBatch  *qstore_provider_begin_atomic_batch    (QStoreProvider       *self);
QSTORE_AVAILABLE_IN_ALL
QStoreWriteTxn     *qstore_provider_begin_write           (QStoreProvider       *self,
                                                           GError              **error);
QSTORE_AVAILABLE_IN_ALL
gboolean            qstore_provider_write                 (QStoreProvider       *self,
                                                           const QStoreWriteOp  *ops,
                                                           gsize                 n_ops,
                                                           QStoreWriteFlags      flags,
                                                           GError              **error);
QSTORE_AVAILABLE_IN_ALL
void                qstore_provider_close_all             (QStoreProvider       *self);

/* Physical store names */
QSTORE_AVAILABLE_IN_ALL
char               *qstore_store_name_for_table           (const char           *schema,
                                                           const char           *table);
QSTORE_AVAILABLE_IN_ALL
char               *qstore_store_name_for_index           (const char           *schema,
                                                           const char           *table,
                                                           const char           *index);
QSTORE_AVAILABLE_IN_ALL
char               *qstore_stats_key_for_table            (const char           *schema,
                                                           const char           *table);

G_END_DECLS
