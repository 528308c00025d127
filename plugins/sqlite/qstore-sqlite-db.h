/* qstore-sqlite-db.h: an open SQLite store file, shared by a provider and
 * everything it hands out
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "qstore-sqlite-conn.h"

G_BEGIN_DECLS

/* Reference counted: stores, snapshots and iterators keep it (and so their
 * connections' memory) alive after the provider closed, and see @closed. */
typedef struct
{
  gatomicrefcount   ref_count;
  char             *path;
  gboolean          read_only;
  int               cache_kib;
  int               mmap_bytes;
  int               busy_timeout_ms;

  /* The writer; read-only, the connection plain reads go through. The
   * fields below it are guarded by its lock. */
  QStoreSqliteConn *main;
  GHashTable       *store_ids;   /* name → gint64 *, stores known to exist */
  gint64            data_version;
  gboolean          sync_full;
  gsize             inline_max;  /* see qstore_sqlite_schema_inline_max() */
  gboolean          has_big;     /* big_values may hold rows */
  gboolean          reading;     /* the writer's plain reads share one read
                                  * transaction, open until the next write */
  /* A write transaction is open on this connection (qstore-sqlite-txn.c):
   * until it ends, plain reads go through readers, which see only what is
   * committed. @write_serial tells its iterators from earlier ones'. */
  gboolean          write_open;
  guint64           write_serial;

  GMutex            pool_lock;
  GPtrArray        *readers;     /* every open reader connection */
  GPtrArray        *idle;        /* the readers nobody uses */
  gboolean          closed;
} QStoreSqliteDb;

QStoreSqliteDb   *qstore_sqlite_db_new            (const char            *path,
                                                   gboolean               read_only);
QStoreSqliteDb   *qstore_sqlite_db_ref            (QStoreSqliteDb        *db);
void              qstore_sqlite_db_unref          (QStoreSqliteDb        *db);
/* Closes every connection; whatever still holds @db fails with
 * %QSTORE_ERROR_CLOSED from then on. */
void              qstore_sqlite_db_close          (QStoreSqliteDb        *db);

/* A reader connection from the pool, in a read transaction that has read
 * once when @pin (a snapshot), else outside any transaction. */
QStoreSqliteConn *qstore_sqlite_db_acquire_reader (QStoreSqliteDb        *db,
                                                   gboolean               pin,
                                                   GError               **error);
void              qstore_sqlite_db_release_reader (QStoreSqliteDb        *db,
                                                   QStoreSqliteConn      *conn);

/* The connection for a plain read: the main one, unless a write
 * transaction holds it, then a reader. */
QStoreSqliteConn *qstore_sqlite_db_acquire_plain  (QStoreSqliteDb        *db,
                                                   GError               **error);
void              qstore_sqlite_db_release_plain  (QStoreSqliteDb        *db,
                                                   QStoreSqliteConn      *conn);

/* Finds the id of a store, creating its row when @create is set (inside a
 * write transaction). *id is -1 when the store has no row. Called with the
 * main lock held. */
gboolean          qstore_sqlite_db_resolve_store  (QStoreSqliteDb        *db,
                                                   const char            *name,
                                                   gboolean               create,
                                                   gint64                *id,
                                                   GError               **error);
/* Called with the main lock held. */
void              qstore_sqlite_db_forget_stores  (QStoreSqliteDb        *db);
/* Ends the read transaction the writer's plain reads share, before a
 * write or a close. Called with the main lock held. */
void              qstore_sqlite_db_end_read       (QStoreSqliteDb        *db);

/* Where a read puts the value it finds: copied into @into when that is
 * set, else into a new @bytes. */
typedef struct
{
  GByteArray *into;
  GBytes     *bytes;
} QStoreSqliteValue;

/* Both return whether @key was found; %FALSE with @error set on failure. */
gboolean          qstore_sqlite_db_get            (QStoreSqliteDb        *db,
                                                   const char            *name,
                                                   const guint8          *key,
                                                   gsize                  key_len,
                                                   QStoreSqliteValue     *value,
                                                   GError               **error);

/* The writer's own view, in whatever transaction the main connection is
 * in: for an open write transaction. Called with the main lock held. */
gboolean          qstore_sqlite_db_get_main       (QStoreSqliteDb        *db,
                                                   const char            *name,
                                                   const guint8          *key,
                                                   gsize                  key_len,
                                                   QStoreSqliteValue     *value,
                                                   GError               **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (QStoreSqliteDb, qstore_sqlite_db_unref)

G_END_DECLS
