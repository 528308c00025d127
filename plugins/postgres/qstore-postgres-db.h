/* qstore-postgres-db.h: an open PostgreSQL location (a schema in a
 * database), shared by a provider and everything it hands out
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "qstore-postgres-conn.h"

G_BEGIN_DECLS

/* Reference counted: stores, snapshots and iterators keep it alive after
 * the provider closed, and see @closed. */
typedef struct
{
  gatomicrefcount  ref_count;
  char            *conninfo;
  char            *schema;
  /* How messages name the location: the schema and the conninfo without
   * its password. */
  char            *what;
  gboolean         read_only;

  /* The writer's session, which holds the writer lock; read-only, the
   * connection plain reads go through. The fields below it are guarded by
   * its lock. */
  QStorePgConn    *main;
  /* Names known to have a row in `stores`, to its id (GINT_TO_POINTER) */
  GHashTable      *known_stores;
  /* @known_stores holds every store: the one writer loaded them, and
   * made every store since. */
  gboolean         stores_complete;
  /* Changes (atomically, with the main lock held) before and after
   * anything that may give a store's name another id or none: drops and
   * renames, a write transaction that made or dropped stores, a reload
   * of @known_stores. A snapshot taken in between names stores by id
   * only while it is unchanged (see qstore_pg_db_snapshot_store()). */
  gint             stores_generation;
  /* The writer's: keys it knows no store holds (qstore-postgres-gaps.c),
   * and how many reads they answered. */
  GHashTable      *gaps;
  guint64          gap_reads;
  /* The writer's last get found its key: the next asks for that key
   * only, which costs the server less than the key or the next one. */
  gboolean         last_get_found;
  /* A write transaction (qstore-postgres-txn.c) holds the writer's
   * session: its BEGIN went out with its first write (@txn_begun). Plain
   * reads go through readers meanwhile, which see only what is
   * committed. @txn_serial tells its iterators whether it is still the
   * one open. */
  gboolean         txn_open;
  gboolean         txn_begun;
  guint64          txn_serial;
  /* It created or erased stores, whose ids an abort takes back. */
  gboolean         txn_restructured;

  GMutex           pool_lock;
  GPtrArray       *readers;       /* every open reader connection */
  GPtrArray       *idle;          /* the readers nobody uses */
  /* Readers of snapshots that may not have begun their read transaction
   * yet (see qstore_pg_db_begin_snapshots()) */
  GPtrArray       *unbegun;
  gboolean         closed;
} QStorePgDb;

QStorePgDb   *qstore_pg_db_new            (const char       *conninfo,
                                           const char       *schema,
                                           gboolean          read_only);
QStorePgDb   *qstore_pg_db_ref            (QStorePgDb       *db);
void          qstore_pg_db_unref          (QStorePgDb       *db);

/* Connects, and opening for writing, takes the writer lock (waiting up to
 * @wait_ms) and creates the schema and its tables; checks they are what
 * qstore made. */
gboolean      qstore_pg_db_open           (QStorePgDb       *db,
                                           guint             wait_ms,
                                           GError          **error);
/* Closes every connection, which lets go of the writer lock; whatever
 * still holds @db fails with %QSTORE_ERROR_CLOSED from then on. */
void          qstore_pg_db_close          (QStorePgDb       *db);

/* A reader connection from the pool (a new one when none is idle). */
QStorePgConn *qstore_pg_db_acquire_reader (QStorePgDb       *db,
                                           GError          **error);
/* Gives @conn back; a broken one is dropped. */
void          qstore_pg_db_release_reader (QStorePgDb       *db,
                                           QStorePgConn     *conn);
/* Closes the readers nobody uses: after the server went away, they may
 * be broken without knowing it yet. */
void          qstore_pg_db_forget_idle_readers (QStorePgDb  *db);

/* A writable location's snapshot begins its read transaction with its
 * first read, in the same round trip. The one writer begins every such
 * transaction not begun yet before it writes, so a snapshot still sees
 * the state of its creation. */
void          qstore_pg_db_defer_snapshot (QStorePgDb       *db,
                                           QStorePgConn     *conn);
void          qstore_pg_db_forget_snapshot (QStorePgDb      *db,
                                            QStorePgConn    *conn);
/* Called with the main lock held. */
void          qstore_pg_db_begin_snapshots (QStorePgDb      *db);

/* Whether a write transaction holds the writer's session now. */
gboolean      qstore_pg_db_in_write_txn   (QStorePgDb       *db);
/* A session that sees committed data only, locked: the writer's, or a
 * pooled one while a write transaction holds the writer's. */
QStorePgConn *qstore_pg_db_lock_committed   (QStorePgDb     *db,
                                             GError        **error);
void          qstore_pg_db_unlock_committed (QStorePgDb     *db,
                                             QStorePgConn   *conn);
/* %QSTORE_ERROR_CLOSED unless the write transaction @serial is the one
 * open. Called with the main lock held. */
gboolean      qstore_pg_db_check_write_txn (QStorePgDb      *db,
                                            guint64          serial,
                                            GError         **error);

GBytes       *qstore_pg_db_get            (QStorePgDb       *db,
                                           QStorePgConn     *conn,
                                           const char       *name,
                                           const guint8     *key,
                                           gsize             key_len,
                                           GError          **error);
/* A snapshot's lookup on @conn, locked: the value stays in *@keep, which
 * the next lookup frees. @store names the store (@store_len bytes): its
 * id in binary when @by_id, else its name. %FALSE without error when the
 * key is absent. */
gboolean      qstore_pg_db_lookup         (QStorePgConn     *conn,
                                           const char       *store,
                                           int               store_len,
                                           gboolean          by_id,
                                           const guint8     *key,
                                           gsize             key_len,
                                           PGresult        **keep,
                                           const guint8    **value,
                                           gsize            *value_len,
                                           GError          **error);
char        **qstore_pg_db_list_stores    (QStorePgDb       *db,
                                           GError          **error);
/* The writer's reads name a store it knows by its id: sets @value and
 * @length to @id_be, the id in binary, and returns %TRUE; %FALSE for a
 * store whose id it does not know (or on a read-only open), which is
 * then named. Called with the main lock held. */
gboolean      qstore_pg_db_writer_store   (QStorePgDb       *db,
                                           const char       *name,
                                           guint32          *id_be,
                                           const char      **value,
                                           int              *length);

/* A snapshot's reads name a store by its id, as the writer's do, when
 * the writer knows it, no drop or rename came since @generation (the
 * snapshot's, taken at its creation) and no open write transaction
 * made or dropped stores: the id then names in the snapshot's state the
 * store it names now, or one that did not exist yet, whose entries the
 * snapshot does not see either. Never waits for the writer: while it is
 * busy, the store is named. */
gboolean      qstore_pg_db_snapshot_store (QStorePgDb       *db,
                                           gint              generation,
                                           const char       *name,
                                           guint32          *id_be,
                                           const char      **value,
                                           int              *length);
/* Called with the main lock held, before and after a change that
 * @stores_generation tells. */
void          qstore_pg_db_stores_changed (QStorePgDb       *db);

/* The writer: fills @known_stores with every store. Called with the main
 * lock held. */
gboolean      qstore_pg_db_load_stores    (QStorePgDb       *db,
                                           GError          **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (QStorePgDb, qstore_pg_db_unref)

G_END_DECLS
