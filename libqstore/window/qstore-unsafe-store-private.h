/* qstore-unsafe-store-private.h: the tables of an unsafe window, as
 * typed records
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "qstore-database.h"
#include "qstore-iter.h"

G_BEGIN_DECLS

/* The tables, each `_qstore_window_<window>_<suffix>` in the window's
 * database. Reads see the open transaction's writes; writes join it. */
typedef enum
{
  QSTORE_UNSAFE_TABLE_ROWS,
  QSTORE_UNSAFE_TABLE_SAFE_ROWS,
  QSTORE_UNSAFE_TABLE_INDEX_ENTRIES,
  QSTORE_UNSAFE_TABLE_RECEIPTS,
  QSTORE_UNSAFE_TABLE_WAIT_RECEIPTS,
  QSTORE_UNSAFE_TABLE_MARKERS,
  QSTORE_UNSAFE_TABLE_ARRIVALS,
  QSTORE_UNSAFE_TABLE_KICKS,
  QSTORE_UNSAFE_TABLE_GENERATIONS,
  QSTORE_UNSAFE_TABLE_ACTIVE,
  QSTORE_UNSAFE_N_TABLES,
} QStoreUnsafeTableId;

#define QSTORE_UNSAFE_TABLE_PREFIX "_qstore_window_"

typedef struct
{
  QStoreDatabase *database;   /* not owned: the window owns it */
  char           *window;
  char           *names[QSTORE_UNSAFE_N_TABLES];
  /* Looked up once per operation: within one, with the lock held, no
   * DDL can replace them. */
  QStoreTable    *tables[QSTORE_UNSAFE_N_TABLES];
} QStoreUnsafeStore;

/* A row of either layer. */
typedef struct
{
  char     *row_key;
  char     *value_json;
  gint64    row_version;
  char     *source_suid;
  gboolean  tombstone;   /* the unsafe layer only */
} QStoreUnsafeRowRecord;

typedef struct
{
  char   *event_id;
  char   *suid;
  char   *outcome;
  gint64  observed_at;
  char   *marked_rows;   /* JSON array of the row keys it marked, or NULL */
} QStoreUnsafeReceipt;

typedef struct
{
  char     *safe_head;           /* "" until a safe receipt is observed */
  char     *arrival_watermark;   /* the largest SUID that arrived */
  char     *behind_event_id;     /* NULL unless rebuild_required */
  char     *behind_suid;
  gboolean  rebuild_required;
} QStoreUnsafeArrival;

typedef struct
{
  char     *target_suid;
  gboolean  dirty;
  char     *lease_owner;         /* NULL when no lease */
  gint64    lease_until;
} QStoreUnsafeKick;

void     qstore_unsafe_row_record_clear    (QStoreUnsafeRowRecord *row);
void     qstore_unsafe_receipt_clear       (QStoreUnsafeReceipt   *receipt);
void     qstore_unsafe_arrival_clear       (QStoreUnsafeArrival   *arrival);
void     qstore_unsafe_kick_clear          (QStoreUnsafeKick      *kick);

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (QStoreUnsafeRowRecord, qstore_unsafe_row_record_clear)
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (QStoreUnsafeReceipt, qstore_unsafe_receipt_clear)
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (QStoreUnsafeArrival, qstore_unsafe_arrival_clear)
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (QStoreUnsafeKick, qstore_unsafe_kick_clear)

/* Setup */
void     qstore_unsafe_store_init          (QStoreUnsafeStore     *store,
                                            QStoreDatabase        *database,
                                            const char            *window);
void     qstore_unsafe_store_clear         (QStoreUnsafeStore     *store);
/* Forgets the tables looked up: at the end of each operation. */
void     qstore_unsafe_store_forget_tables (QStoreUnsafeStore     *store);
/* Creates the tables that do not exist (each DDL statement commits) and
 * checks the shape of those that do. Outside a transaction. */
gboolean qstore_unsafe_store_create        (QStoreUnsafeStore     *store,
                                            GError               **error);
/* Whether @name is one of the table names a window uses. */
gboolean qstore_unsafe_store_is_table_name (const char            *name);

/* Rows of the unsafe layer (!@safe) or of the safe layer */
gboolean qstore_unsafe_store_get_row       (QStoreUnsafeStore      *store,
                                            gboolean                safe,
                                            gint64                  generation,
                                            const char             *row_key,
                                            QStoreUnsafeRowRecord  *row,
                                            gboolean               *found,
                                            GError                **error);
gboolean qstore_unsafe_store_put_row       (QStoreUnsafeStore      *store,
                                            gboolean                safe,
                                            gint64                  generation,
                                            const QStoreUnsafeRowRecord *row,
                                            GError                **error);
gboolean qstore_unsafe_store_delete_row    (QStoreUnsafeStore      *store,
                                            gboolean                safe,
                                            gint64                  generation,
                                            const char             *row_key,
                                            GError                **error);
/* The rows of one generation in key order; read each with
 * qstore_unsafe_store_read_row(). */
QStoreIter *qstore_unsafe_store_scan_rows  (QStoreUnsafeStore      *store,
                                            gboolean                safe,
                                            gint64                  generation,
                                            GError                **error);
gboolean qstore_unsafe_store_read_row      (QStoreUnsafeStore      *store,
                                            gboolean                safe,
                                            QStoreIter             *iter,
                                            QStoreUnsafeRowRecord  *row,
                                            GError                **error);

/* What orders a row, borrowed from @iter's current row until it moves:
 * its key and SUID (checked, as every SUID read back is), and whether it
 * is a tombstone. */
typedef struct
{
  const char *row_key;
  gsize       row_key_len;
  const char *source_suid;    /* QSTORE_SUID_LENGTH bytes, not terminated */
  gboolean    tombstone;
} QStoreUnsafeRowPeek;

gboolean qstore_unsafe_store_peek_row      (QStoreUnsafeStore      *store,
                                            gboolean                safe,
                                            QStoreIter             *iter,
                                            QStoreUnsafeRowPeek    *peek,
                                            GError                **error);

/* Index entries */
gboolean qstore_unsafe_store_add_index_entry      (QStoreUnsafeStore  *store,
                                                   gint64              generation,
                                                   const char         *row_key,
                                                   const char         *index_id,
                                                   GVariant           *value,
                                                   GError            **error);
gboolean qstore_unsafe_store_delete_index_entries (QStoreUnsafeStore  *store,
                                                   gint64              generation,
                                                   const char         *row_key,
                                                   GError            **error);

/* Receipts: one per event id, whatever the generation */
gboolean qstore_unsafe_store_get_receipt   (QStoreUnsafeStore      *store,
                                            const char             *event_id,
                                            QStoreUnsafeReceipt    *receipt,
                                            gboolean               *found,
                                            GError                **error);
/* QSTORE_ERROR_CONSTRAINT when the event has a receipt already. */
gboolean qstore_unsafe_store_insert_receipt (QStoreUnsafeStore     *store,
                                             const QStoreUnsafeReceipt *receipt,
                                             GError               **error);
/* "" when there is none. */
gboolean qstore_unsafe_store_max_receipt_suid (QStoreUnsafeStore   *store,
                                               char               **suid,
                                               GError             **error);
gboolean qstore_unsafe_store_delete_receipts_of_suid (QStoreUnsafeStore  *store,
                                                      const char         *suid,
                                                      GError            **error);

/* Wait receipts: bound to a generation and its definition */
gboolean qstore_unsafe_store_add_wait_receipt     (QStoreUnsafeStore  *store,
                                                   gint64              generation,
                                                   gint64              definition_version,
                                                   const char         *event_id,
                                                   const char         *suid,
                                                   gint64              observed_at,
                                                   GError            **error);
gboolean qstore_unsafe_store_has_wait_receipt     (QStoreUnsafeStore  *store,
                                                   gint64              generation,
                                                   gint64              definition_version,
                                                   const char         *event_id,
                                                   const char         *suid,
                                                   gboolean           *found,
                                                   GError            **error);
gboolean qstore_unsafe_store_delete_wait_receipts (QStoreUnsafeStore  *store,
                                                   gint64              generation,
                                                   const char         *suid,
                                                   GError            **error);

/* Markers: events that did not apply, until the safe layer covers them */
gboolean qstore_unsafe_store_add_marker              (QStoreUnsafeStore  *store,
                                                      gint64              generation,
                                                      const char         *row_key,
                                                      const char         *event_id,
                                                      const char         *suid,
                                                      const char         *reason,
                                                      GError            **error);
gboolean qstore_unsafe_store_delete_marker         (QStoreUnsafeStore  *store,
                                                      gint64              generation,
                                                      const char         *row_key,
                                                      const char         *event_id,
                                                      GError            **error);
gboolean qstore_unsafe_store_delete_markers_of_row   (QStoreUnsafeStore  *store,
                                                      gint64              generation,
                                                      const char         *row_key,
                                                      GError            **error);

/* Arrivals, per generation */
gboolean qstore_unsafe_store_get_arrival   (QStoreUnsafeStore      *store,
                                            gint64                  generation,
                                            QStoreUnsafeArrival    *arrival,
                                            gboolean               *found,
                                            GError                **error);
gboolean qstore_unsafe_store_put_arrival   (QStoreUnsafeStore      *store,
                                            gint64                  generation,
                                            const QStoreUnsafeArrival *arrival,
                                            GError                **error);

/* The kick: one per window */
gboolean qstore_unsafe_store_get_kick      (QStoreUnsafeStore      *store,
                                            QStoreUnsafeKick       *kick,
                                            gboolean               *found,
                                            GError                **error);
gboolean qstore_unsafe_store_put_kick      (QStoreUnsafeStore      *store,
                                            const QStoreUnsafeKick *kick,
                                            GError                **error);

/* Generations: the definition of each, and the active one */
gboolean qstore_unsafe_store_get_definition (QStoreUnsafeStore     *store,
                                             gint64                 generation,
                                             gint64                *definition_version,
                                             gboolean              *found,
                                             GError               **error);
gboolean qstore_unsafe_store_put_definition (QStoreUnsafeStore     *store,
                                             gint64                 generation,
                                             gint64                 definition_version,
                                             GError               **error);
gboolean qstore_unsafe_store_get_active    (QStoreUnsafeStore      *store,
                                            gint64                 *generation,
                                            gboolean               *found,
                                            GError                **error);
gboolean qstore_unsafe_store_put_active    (QStoreUnsafeStore      *store,
                                            gint64                  generation,
                                            GError                **error);

G_END_DECLS
