/* qstore-vtab.c: every qstore table, as an SQLite virtual table
 *
 * SQLite is told each table as a rowid virtual table with the same column
 * names, declared types and collations, so it compares and sorts as it
 * would for a native table; qstore keeps the rows, the keys, the indexes
 * and every constraint.
 *
 * Reads: xBestIndex picks a primary-key seek, an index seek or a scan, and
 * names it in idxStr (EXPLAIN QUERY PLAN shows `pk-eq`, `pk-range`,
 * `index-eq:NAME`, `index-range:NAME` or `scan`). SQLite re-checks each
 * row, so a plan may return more rows than match (never fewer). That is
 * what makes the one uncertain case safe: a number compared with a TEXT
 * or BLOB column compares numerically or as text depending on the other
 * operand's affinity, which a virtual table cannot see, so the seek then
 * also covers every text value. Only a seek whose key window is exactly
 * the rows its constraints select (on numeric columns and the rowid, see
 * plan_candidate()) spares SQLite the check.
 *
 * Writes (qstore-vtab-write.c): xUpdate applies the column affinity and
 * the DEFAULTs SQLite leaves to virtual tables, then hands the row to the
 * QStoreTable, which checks every constraint. Transactions and savepoints
 * go to the database's coordinator, which every table shares: a statement
 * touching several tables calls each hook once per table, so the
 * coordinator's hooks are idempotent.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "qstore-affinity-private.h"
#include "qstore-coordinator-private.h"
#include "qstore-error.h"
#include "qstore-i18n-private.h"
#include "qstore-iter-private.h"
#include "qstore-snapshot-private.h"
#include "qstore-vtab-auto-private.h"
#include "qstore-vtab-private.h"



struct _QStoreCursor
{
  sqlite3_vtab_cursor  base;
  QStoreSqlTable      *entry;
  QStoreTable         *table;
  gboolean             by_index;
  guint                index;
  gboolean             reverse;
  GArray              *windows;     /* Window */
  guint                next_window;
  /* Outside a transaction, a walk reads through the snapshot the
   * statements running at the same time share (see
   * qstore_coordinator_hold_snapshot()): one look at the provider's state
   * for all their reads instead of one per read. */
  QStoreSnapshot      *snapshot;
  guint64              snapshot_serial;
  QStoreIter          *iter;
  QStoreKV            *iter_store;  /* the store iter walks */
  /* A finished walk's iterator, while its snapshot is the one statements
   * share: the next window over the same store seeks it instead of making
   * another (an inner loop's walk runs once per outer row). At xClose
   * the database keeps it while the snapshot is a read transaction's
   * (qstore_database_keep_read_iter()): it never outlives that. */
  QStoreIter          *spare_iter;
  QStoreKV            *spare_store;
  QStoreSnapshot      *spare_snapshot;
  /* The provider's class of iter: its peeks are called directly, without
   * the public wrappers' type checks on every row. */
  QStoreIterClass     *iter_class;
  gboolean             eof;
  gboolean             point;       /* a point read: one row at most */
  gboolean             covering;    /* PLAN_COVERING: values from the index's keys */

  /* Kept across xFilter calls: SQLite runs a statement's filter again
   * for every row of an outer loop. */
  GArray              *parts;       /* Part, of the plan below */
  int                  parts_index; /* -1: the primary key; -2: none yet */
  GByteArray          *key_buf;     /* the key of a point read */
  GByteArray          *row_buf;     /* a row read by key, not walked to */
  GByteArray          *held_buf;    /* text and blobs of a covering walk's values */

  /* The current row */
  const guint8        *key;         /* its data key, borrowed from the iterator */
  gsize                key_len;
  const guint8        *row_data;
  gsize                row_len;
  QStoreValue         *values;      /* the row's stored values, table->n_values slots */
  guint                n_values;    /* the columns SQLite sees */
  guint                n_slots;
  /* Values are decoded as SQLite asks for them: a statement that reads
   * one column of a wide row decodes only up to it. */
  QStoreRowReader      reader;
  guint                n_decoded;

  /* The plan's filter (PLAN_FILTER): rows whose column's key under the
   * comparison's collation is not filter_key are passed over. A row value
   * of filter_value's type is compared with it directly. */
  gboolean             filter_on;
  guint                filter_column;
  QStoreCollation      filter_collation;
  GByteArray          *filter_key;
  GByteArray          *filter_buf;
  QStoreValue          filter_value;  /* its text in filter_text */
  GByteArray          *filter_text;

  /* An automatic-index plan (PLAN_AUTO): the first probe walks the
   * table, the second builds the structure, the others use it. It lasts
   * as long as the cursor (one run of one statement) and only while the
   * table takes no write. */
  guint                auto_probes;
  QStoreAutoIndex     *auto_index;
  guint64              auto_writes;   /* the table's n_writes it was built at */
  gboolean             auto_walk;     /* the current walk is over auto_matches */
  GArray              *auto_matches;  /* guint32 rows of auto_index */
  guint                auto_next;
  gboolean             auto_off;      /* walk the table instead, for this run */
  const char          *auto_plan;     /* the plan's idxStr, owned by the statement */
};

/* Helpers */

static void
append_identifier (GString    *out,
                   const char *name)
{
  g_string_append_c (out, '"');
  for (const char *p = name; *p != '\0'; p++)
    {
      if (*p == '"')
        g_string_append_c (out, '"');
      g_string_append_c (out, *p);
    }
  g_string_append_c (out, '"');
}

/* A declared type is kept as written when it is made of the usual
 * characters; SQLite decides the column's affinity from its text. */
static gboolean
plain_type (const char *type)
{
  for (const char *p = type; *p != '\0'; p++)
    if (!g_ascii_isalnum (*p) && strchr (" _(),.+-", *p) == NULL)
      return FALSE;
  return TRUE;
}

char *
qstore_vtab_declaration (QStoreTableSchema *schema)
{
  GString *sql = g_string_new ("CREATE TABLE x(");

  for (guint i = 0; i < schema->columns->len; i++)
    {
      QStoreColumn *column = qstore_vtab_schema_column (schema, i);

      if (i > 0)
        g_string_append (sql, ", ");
      append_identifier (sql, column->name);
      if (column->decl_type != NULL && column->decl_type[0] != '\0')
        {
          g_string_append_c (sql, ' ');
          if (plain_type (column->decl_type))
            g_string_append (sql, column->decl_type);
          else
            append_identifier (sql, column->decl_type);
        }
      g_string_append_printf (sql, " COLLATE %s", qstore_collation_name (column->collation));
    }
  g_string_append_c (sql, ')');
  return g_string_free (sql, FALSE);
}

static int
sqlite_code_for_error (const GError *error)
{
  if (error->domain != QSTORE_ERROR)
    return SQLITE_ERROR;

  switch (error->code)
    {
    case QSTORE_ERROR_CONSTRAINT:
      return SQLITE_CONSTRAINT;
    case QSTORE_ERROR_READ_ONLY:
      return SQLITE_READONLY;
    case QSTORE_ERROR_BUSY:
      return SQLITE_BUSY;
    case QSTORE_ERROR_CORRUPT:
      return SQLITE_CORRUPT;
    case QSTORE_ERROR_IO:
      return SQLITE_IOERR;
    default:
      return SQLITE_ERROR;
    }
}

/* Reports @error (taken) to SQLite through @vtab, and keeps it on the
 * database so the caller sees qstore's code rather than SQLite's. */
int
qstore_vtab_fail (sqlite3_vtab   *vtab,
                  QStoreDatabase *database,
                  GError         *error)
{
  int rc = sqlite_code_for_error (error);

  sqlite3_free (vtab->zErrMsg);
  vtab->zErrMsg = sqlite3_mprintf ("%s", error->message);
  qstore_database_take_callback_error (database, error);
  return rc;
}

/* Plans: qstore-vtab-plan.c */

static int
vtab_best_index (sqlite3_vtab       *vtab,
                 sqlite3_index_info *info)
{
  QStoreSqlTable *entry = ((QStoreVtab *) vtab)->entry;
  QStoreDatabase *database = entry->database;

  if (database->columns_used != NULL)
    database->columns_used (database->columns_used_data, entry, info->colUsed);
  return qstore_vtab_best_index (entry, info);
}

/* Cursors */

static QStoreAutoShelf *
vtab_shelf (QStoreDatabase *database,
            gboolean        create)
{
  if (database->auto_shelf == NULL && create)
    database->auto_shelf = qstore_auto_shelf_new ();
  return database->auto_shelf;
}

/* What the table's contents are as the cursor reads them now: an
 * automatic index built under another token is not taken again. */
static void
auto_token (QStoreCursor    *cursor,
            QStoreAutoToken *token)
{
  QStoreCoordinator *coordinator = cursor->entry->database->coordinator;
  QStoreSnapshot *held;

  token->writes = cursor->table->n_writes;
  token->in_transaction = qstore_coordinator_in_transaction (coordinator);
  token->serial = 0;
  held = qstore_coordinator_hold_snapshot (coordinator, FALSE, &token->serial, NULL);
  if (held != NULL)
    qstore_coordinator_release_snapshot (coordinator, held);
}

static int
vtab_open (sqlite3_vtab         *vtab,
           sqlite3_vtab_cursor **out)
{
  QStoreVtab *self = (QStoreVtab *) vtab;
  QStoreCursor *cursor = self->n_spares > 0 ? self->spares[--self->n_spares] : NULL;

  if (cursor == NULL)
    {
      cursor = g_new0 (QStoreCursor, 1);
      cursor->entry = qstore_sql_table_ref (self->entry);
      cursor->windows = g_array_new (FALSE, FALSE, sizeof (Window));
      g_array_set_clear_func (cursor->windows, (GDestroyNotify) qstore_vtab_window_clear);
      cursor->parts_index = -2;
      cursor->key_buf = g_byte_array_sized_new (64);
      cursor->row_buf = g_byte_array_sized_new (128);
      cursor->held_buf = g_byte_array_sized_new (64);
      cursor->filter_key = g_byte_array_sized_new (64);
      cursor->filter_buf = g_byte_array_sized_new (64);
      cursor->filter_text = g_byte_array_sized_new (64);
    }
  memset (&cursor->base, 0, sizeof cursor->base);
  cursor->eof = TRUE;
  qstore_auto_shelf_opened (vtab_shelf (self->entry->database, TRUE));
  *out = &cursor->base;
  return SQLITE_OK;
}

static void
cursor_drop_spare (QStoreCursor *cursor)
{
  g_clear_object (&cursor->spare_iter);
  g_clear_object (&cursor->spare_snapshot);
  cursor->spare_store = NULL;
}

/* Lets go of the current window's iterator, keeping it for a seek when it
 * read through a snapshot. */
static void
cursor_end_walk (QStoreCursor *cursor)
{
  if (cursor->iter == NULL)
    return;
  if (cursor->snapshot == NULL)
    {
      g_clear_object (&cursor->iter);
      return;
    }
  cursor_drop_spare (cursor);
  cursor->spare_iter = g_steal_pointer (&cursor->iter);
  cursor->spare_store = cursor->iter_store;
  cursor->spare_snapshot = g_object_ref (cursor->snapshot);
}

/* Ends the current walk; the table, the value slots and the buffers stay
 * for the next xFilter. */
static void
cursor_reset (QStoreCursor *cursor)
{
  cursor_end_walk (cursor);
  if (cursor->snapshot != NULL)
    qstore_coordinator_release_snapshot (cursor->entry->database->coordinator,
                                         g_steal_pointer (&cursor->snapshot));
  if (cursor->windows->len > 0)
    g_array_set_size (cursor->windows, 0);
  cursor->next_window = 0;
  cursor->key = NULL;
  cursor->row_data = NULL;
  cursor->point = FALSE;
  cursor->auto_walk = FALSE;
  cursor->filter_on = FALSE;
  cursor->eof = TRUE;
}

/* The end of a statement run: its automatic index goes. */
static void
cursor_forget_auto (QStoreCursor *cursor)
{
  g_clear_pointer (&cursor->auto_index, qstore_auto_index_free);
  cursor->auto_probes = 0;
  cursor->auto_off = FALSE;
  cursor->auto_plan = NULL;
}

static void
cursor_free (QStoreCursor *cursor)
{
  cursor_reset (cursor);
  cursor_drop_spare (cursor);
  cursor_forget_auto (cursor);
  g_clear_pointer (&cursor->auto_matches, g_array_unref);
  g_clear_object (&cursor->table);
  g_clear_pointer (&cursor->values, g_free);
  g_clear_pointer (&cursor->parts, g_array_unref);
  g_byte_array_unref (cursor->key_buf);
  g_byte_array_unref (cursor->row_buf);
  g_byte_array_unref (cursor->held_buf);
  g_byte_array_unref (cursor->filter_key);
  g_byte_array_unref (cursor->filter_buf);
  g_byte_array_unref (cursor->filter_text);
  g_array_unref (cursor->windows);
  qstore_sql_table_unref (cursor->entry);
  g_free (cursor);
}

static int
vtab_close (sqlite3_vtab_cursor *base)
{
  QStoreCursor *cursor = (QStoreCursor *) base;
  QStoreVtab *vtab = (QStoreVtab *) base->pVtab;
  QStoreAutoShelf *shelf = vtab_shelf (cursor->entry->database, FALSE);

  cursor_reset (cursor);
  /* For the read transaction's next walk of the store. */
  if (cursor->spare_iter != NULL)
    qstore_database_keep_read_iter (cursor->entry->database, cursor->spare_snapshot,
                                    cursor->spare_store, g_steal_pointer (&cursor->spare_iter));
  cursor_drop_spare (cursor);
  /* What an automatic-index plan learnt, for the same plan opened again
   * in this statement (a correlated subquery's). */
  if (shelf != NULL && cursor->auto_probes > 0 && !cursor->auto_off && cursor->auto_plan != NULL)
    {
      QStoreAutoToken token;

      auto_token (cursor, &token);
      if (token.writes == cursor->auto_writes || cursor->auto_index == NULL)
        qstore_auto_shelf_put (shelf, vtab, cursor->auto_plan,
                               g_steal_pointer (&cursor->auto_index), cursor->auto_probes,
                               &token);
    }
  cursor_forget_auto (cursor);
  if (shelf != NULL)
    qstore_auto_shelf_closed (shelf);
  if (vtab != NULL && vtab->last_walker == cursor)
    vtab->last_walker = NULL;
  /* Keep a few, with their buffers. */
  if (vtab != NULL && vtab->n_spares < G_N_ELEMENTS (vtab->spares))
    vtab->spares[vtab->n_spares++] = cursor;
  else
    cursor_free (cursor);
  return SQLITE_OK;
}

static QStoreIter *
open_window (QStoreCursor  *cursor,
             const Window  *window,
             GError       **error)
{
  g_autoptr(QStoreBounds) bounds = qstore_bounds_new ();

  if (window->lower != NULL)
    {
      if (window->lower_inclusive)
        qstore_bounds_set_gte (bounds, window->lower->data, window->lower->len);
      else
        qstore_bounds_set_gt (bounds, window->lower->data, window->lower->len);
    }
  if (window->upper != NULL)
    {
      if (window->upper_inclusive)
        qstore_bounds_set_lte (bounds, window->upper->data, window->upper->len);
      else
        qstore_bounds_set_lt (bounds, window->upper->data, window->upper->len);
    }
  qstore_bounds_set_reverse (bounds, cursor->reverse);

  if (cursor->snapshot != NULL)
    {
      QStoreKV *store = cursor->by_index
                        ? qstore_table_get_index_store (cursor->table, cursor->index)
                        : qstore_table_get_data_store (cursor->table);
      g_autoptr(QStoreIter) iter = NULL;

      cursor->iter_store = store;
      if (cursor->spare_iter != NULL && cursor->spare_store == store &&
          cursor->spare_snapshot == cursor->snapshot)
        {
          iter = g_steal_pointer (&cursor->spare_iter);
          cursor_drop_spare (cursor);
        }
      else
        iter = qstore_database_take_read_iter (cursor->entry->database, cursor->snapshot, store);
      if (iter != NULL)
        {
          GError *local_error = NULL;

          if (qstore_iter_seek (iter, bounds, &local_error))
            return g_steal_pointer (&iter);
          if (!g_error_matches (local_error, QSTORE_ERROR, QSTORE_ERROR_UNSUPPORTED))
            {
              g_propagate_error (error, local_error);
              return NULL;
            }
          g_error_free (local_error);
        }
      return qstore_snapshot_iterate (cursor->snapshot, store, bounds, error);
    }
  if (cursor->by_index)
    return qstore_table_scan_index (cursor->table, cursor->index, bounds, error);
  return qstore_table_scan (cursor->table, bounds, error);
}

/* The row @walker's index walk holds now, if it is @key's under the
 * snapshot of @serial: that walk read it into its own buffer. */
static gboolean
walker_holds (QStoreCursor *walker,
              guint64       serial,
              const guint8 *key,
              gsize         key_len)
{
  return walker->snapshot != NULL && walker->snapshot_serial == serial &&
         walker->key != NULL && walker->row_data == walker->row_buf->data &&
         walker->key_len == key_len && memcmp (walker->key, key, key_len) == 0;
}

/* Copies @row into the cursor's buffer as its current row: the memory a
 * read lends is reused by the next one, which another cursor may make
 * before SQLite asks for this row's columns. */
/* g_byte_array_set_size() for the buffers a cursor refills per row or
 * per run: a byte array needs nothing but its length moved when it
 * shrinks or stays, and that is the common case. */
static inline void
buffer_set_len (GByteArray *buffer,
                gsize       len)
{
  if (len <= buffer->len)
    buffer->len = (guint) len;
  else
    g_byte_array_set_size (buffer, (guint) len);
}

static void
keep_row (QStoreCursor *cursor,
          const guint8 *row,
          gsize         row_len)
{
  buffer_set_len (cursor->row_buf, row_len);
  if (row_len > 0)
    memcpy (cursor->row_buf->data, row, row_len);
  cursor->row_data = cursor->row_buf->data;
  cursor->row_len = row_len;
}

/* Reads the row under @key as the table's coordinator sees it (with the
 * transaction's own writes) into the cursor's buffer. */
static gboolean
read_row (QStoreCursor  *cursor,
          const guint8  *key,
          gsize          key_len,
          GError       **error)
{
  const guint8 *row;
  gsize row_len;

  if (!qstore_table_lookup_row (cursor->table, key, key_len, &row, &row_len, error))
    return FALSE;
  keep_row (cursor, row, row_len);
  return TRUE;
}

/* Reads the row under @key through the cursor's snapshot into the
 * cursor's own buffer: a later lookup on the shared snapshot may reuse the
 * memory it handed out, and SQLite may ask for this row's columns after
 * another statement read through it. An index walk (@remember) leaves its
 * row there for a point read of the same key (see QStoreVtab.last_walker). */
static gboolean
snapshot_read_row (QStoreCursor  *cursor,
                   const guint8  *key,
                   gsize          key_len,
                   gboolean       remember,
                   GError       **error)
{
  QStoreVtab *vtab = (QStoreVtab *) cursor->base.pVtab;
  QStoreCursor *walker = vtab->last_walker;
  const guint8 *row;
  gsize row_len;

  if (!remember && walker != NULL && walker != cursor &&
      walker_holds (walker, cursor->snapshot_serial, key, key_len))
    {
      row = walker->row_buf->data;
      row_len = walker->row_buf->len;
    }
  else if (!qstore_snapshot_lookup_internal (cursor->snapshot,
                                             qstore_table_get_data_store (cursor->table),
                                             key, key_len, &row, &row_len, error))
    return FALSE;

  keep_row (cursor, row, row_len);
  if (remember)
    vtab->last_walker = cursor;
  return TRUE;
}

/* A walk outside a transaction (nothing pending to merge) reads through
 * the shared snapshot, taking it when no statement holds it yet; inside
 * BEGIN … COMMIT, the read transaction's. */
static gboolean
hold_snapshot (QStoreCursor  *cursor,
               gboolean       create,
               GError       **error)
{
  QStoreDatabase *db = cursor->entry->database;
  GError *local_error = NULL;

  qstore_database_update_read_snapshot (db, TRUE);
  cursor->snapshot = qstore_coordinator_hold_snapshot (db->coordinator,
                                                       create, &cursor->snapshot_serial,
                                                       &local_error);
  if (local_error != NULL)
    {
      g_propagate_error (error, local_error);
      return FALSE;
    }
  return TRUE;
}

/* Takes cursor->row_data as the current row; its values are decoded
 * later, as asked for (row_decode_to()). */
static gboolean
row_start (QStoreCursor  *cursor,
           GError       **error)
{
  QStoreTable *table = cursor->table;
  guint n;

  cursor->n_decoded = 0;
  if (!qstore_row_reader_init (&cursor->reader, cursor->row_data, cursor->row_len, &n, error))
    {
      g_prefix_error (error, _("Table “%s”: "), cursor->entry->schema->name);
      return FALSE;
    }
  if (n != table->n_values)
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_CORRUPT,
                   _("A row of table “%s” holds %u values where %u are expected: the data "
                   "store does not match the table's schema"),
                   cursor->entry->schema->name, n, table->n_values);
      return FALSE;
    }
  return TRUE;
}

/* Decodes the current row's values up to slot @slot. */
static gboolean
row_decode_to (QStoreCursor  *cursor,
               guint          slot,
               GError       **error)
{
  if (cursor->n_decoded > slot)
    return TRUE;
  if (!qstore_row_reader_read (&cursor->reader, &cursor->values[cursor->n_decoded],
                               slot + 1 - cursor->n_decoded, error))
    {
      g_prefix_error (error, _("Table “%s”: "), cursor->entry->schema->name);
      return FALSE;
    }
  cursor->n_decoded = slot + 1;
  return TRUE;
}

/* Takes the values of a covering walk's row from its index entry's key,
 * each exact part's into its slot; the statement reads no other column.
 * *held is FALSE when the row must be read after all: an integer
 * INT64_MIN in a numeric column may stand for the real -2^63, which
 * SQLite keeps as a real there. */
static gboolean
covering_start (QStoreCursor  *cursor,
                gboolean      *held,
                GError       **error)
{
  gsize key_len, pos = 0;
  const guint8 *key = cursor->iter_class->peek_key (cursor->iter, &key_len);
  guint8 *scratch;

  *held = FALSE;
  buffer_set_len (cursor->held_buf, key_len);
  scratch = cursor->held_buf->data;
  for (guint k = 0; k < cursor->parts->len; k++)
    {
      const Part *part = &g_array_index (cursor->parts, Part, k);
      QStoreValue value;

      if (!qstore_codec_read_key_value (key, key_len, &pos, k, part->descending, &scratch,
                                        &value, error))
        {
          g_prefix_error (error, _("Index “%s” of table “%s”: "),
                          ((QStoreIndexSchema *) g_ptr_array_index (cursor->entry->schema->indexes,
                                                                    cursor->index))->name,
                          cursor->entry->schema->name);
          return FALSE;
        }
      if (!qstore_vtab_part_is_exact (part))
        continue;
      if (value.type == QSTORE_VALUE_INTEGER && part->affinity == QSTORE_AFFINITY_REAL)
        {
          value.type = QSTORE_VALUE_REAL;
          value.real = (double) value.integer;
        }
      else if (value.type == QSTORE_VALUE_INTEGER && value.integer == G_MININT64 &&
               !part->is_rowid)
        return TRUE;
      cursor->values[part->column >= 0 ? (guint) part->column
                                       : (guint) cursor->table->rowid_position] = value;
    }
  cursor->n_decoded = cursor->n_slots;
  *held = TRUE;
  return TRUE;
}

/* Moves to the next row of the plan, across its windows. */
static gboolean
cursor_step (QStoreCursor  *cursor,
             GError       **error)
{
  for (;;)
    {
      GError *local_error = NULL;

      cursor->row_data = NULL;
      cursor->key = NULL;

      if (cursor->point)
        {
          /* The one row was read by xFilter. */
          cursor->eof = TRUE;
          return TRUE;
        }

      if (cursor->auto_walk)
        {
          if (cursor->auto_next >= cursor->auto_matches->len)
            {
              cursor->eof = TRUE;
              return TRUE;
            }
          qstore_auto_index_get_row (cursor->auto_index,
                                     g_array_index (cursor->auto_matches, guint32,
                                                    cursor->auto_next++),
                                     &cursor->key, &cursor->key_len,
                                     &cursor->row_data, &cursor->row_len);
          return row_start (cursor, error);
        }

      if (cursor->iter == NULL)
        {
          guint n = cursor->windows->len;
          guint w;

          if (cursor->next_window >= n)
            {
              cursor->eof = TRUE;
              return TRUE;
            }
          w = cursor->reverse ? n - 1 - cursor->next_window : cursor->next_window;
          cursor->next_window++;
          cursor->iter = open_window (cursor, &g_array_index (cursor->windows, Window, w), error);
          if (cursor->iter == NULL)
            return FALSE;
          cursor->iter_class = QSTORE_ITER_GET_CLASS (cursor->iter);
        }

      if (!qstore_iter_next_internal (cursor->iter, &local_error))
        {
          if (local_error != NULL)
            {
              g_clear_object (&cursor->iter);
              g_propagate_error (error, local_error);
              return FALSE;
            }
          cursor_end_walk (cursor);
          continue;
        }

      if (cursor->by_index)
        {
          gboolean found;

          /* An index entry's value is the row's data key. */
          cursor->key = cursor->iter_class->peek_value (cursor->iter, &cursor->key_len);
          if (cursor->covering)
            {
              if (!covering_start (cursor, &found, error))
                return FALSE;
              if (found)
                return TRUE;
            }
          if (cursor->snapshot != NULL)
            {
              found = snapshot_read_row (cursor, cursor->key, cursor->key_len, TRUE,
                                         &local_error);
            }
          else
            found = read_row (cursor, cursor->key, cursor->key_len, &local_error);
          if (local_error != NULL)
            {
              g_propagate_error (error, local_error);
              return FALSE;
            }
          if (!found)
            {
              g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_CORRUPT,
                           _("Index “%s” of table “%s” lists a row that does not exist: "
                           "drop and create the index again to rebuild it"),
                           ((QStoreIndexSchema *) g_ptr_array_index (cursor->entry->schema->indexes,
                                                                     cursor->index))->name,
                           cursor->entry->schema->name);
              return FALSE;
            }
        }
      else
        {
          cursor->key = cursor->iter_class->peek_key (cursor->iter, &cursor->key_len);
          cursor->row_data = cursor->iter_class->peek_value (cursor->iter, &cursor->row_len);
        }

      return row_start (cursor, error);
    }
}

/* Whether the current row may pass the plan's filter: its value's key is
 * the filter's (NULL equals nothing). Keys are the same bytes exactly
 * when SQLite finds the values equal, so no row it would keep is lost. */
static gboolean
filter_keeps (QStoreCursor  *cursor,
              gboolean      *keep,
              GError       **error)
{
  const QStoreValue *value;

  if (!row_decode_to (cursor, cursor->filter_column, error))
    return FALSE;
  value = &cursor->values[cursor->filter_column];
  cursor->filter_buf->len = 0;
  if (value->type == QSTORE_VALUE_NULL)
    *keep = FALSE;
  else if (value->type == cursor->filter_value.type && value->type == QSTORE_VALUE_INTEGER)
    *keep = value->integer == cursor->filter_value.integer;
  else if (value->type == cursor->filter_value.type && value->type == QSTORE_VALUE_TEXT)
    *keep = value->bytes.len == cursor->filter_text->len &&
            memcmp (value->bytes.data, cursor->filter_text->data, value->bytes.len) == 0;
  else if (!qstore_codec_append_key_value (cursor->filter_buf, value, cursor->filter_collation,
                                           FALSE, error))
    return FALSE;
  else
    *keep = cursor->filter_buf->len == cursor->filter_key->len &&
            memcmp (cursor->filter_buf->data, cursor->filter_key->data,
                    cursor->filter_key->len) == 0;
  return TRUE;
}

/* Moves to the next row of the plan that its filter keeps. */
static gboolean
cursor_advance (QStoreCursor  *cursor,
                GError       **error)
{
  gboolean keep = FALSE;

  while (!keep)
    {
      if (!cursor_step (cursor, error))
        return FALSE;
      if (cursor->eof || !cursor->filter_on)
        return TRUE;
      if (!filter_keeps (cursor, &keep, error))
        return FALSE;
    }
  return TRUE;
}

/* Filters the walk on `column = arg` under @collation. Returns FALSE
 * when no row can pass (`c = NULL`), or on error. */
static gboolean
filter_start (QStoreCursor     *cursor,
              guint             column,
              QStoreCollation   collation,
              sqlite3_value    *arg,
              GError          **error)
{
  QStoreTableSchema *schema = cursor->entry->schema;
  Part part = { (int) column, collation, FALSE,
                qstore_vtab_schema_column (schema, column)->affinity, FALSE };
  gboolean certain;

  if (sqlite3_value_type (arg) == SQLITE_NULL)
    return FALSE;
  buffer_set_len (cursor->filter_key, 0);
  if (!qstore_vtab_encode_constraint (&part, arg, cursor->filter_key, &certain, error))
    return FALSE;
  /* A number against a TEXT or BLOB column may compare as a number or as
   * text (see qstore-vtab-auto.c): no filter then. */
  cursor->filter_on = certain;
  cursor->filter_column = column;
  cursor->filter_collation = part.collation;

  /* Pairs SQLite finds equal exactly when they are the same, compared
   * without their keys: an integer with a row's integer in a numeric
   * column, a text in binary order with a row's text in a TEXT or BLOB
   * column. */
  cursor->filter_value.type = QSTORE_VALUE_NULL;
  if (sqlite3_value_type (arg) == SQLITE_INTEGER &&
      (part.affinity == QSTORE_AFFINITY_NUMERIC || part.affinity == QSTORE_AFFINITY_INTEGER ||
       part.affinity == QSTORE_AFFINITY_REAL))
    {
      cursor->filter_value.type = QSTORE_VALUE_INTEGER;
      cursor->filter_value.integer = sqlite3_value_int64 (arg);
    }
  else if (sqlite3_value_type (arg) == SQLITE_TEXT && part.collation == QSTORE_COLLATION_BINARY &&
           (part.affinity == QSTORE_AFFINITY_TEXT || part.affinity == QSTORE_AFFINITY_BLOB))
    {
      const guint8 *text = sqlite3_value_text (arg);

      cursor->filter_value.type = QSTORE_VALUE_TEXT;
      buffer_set_len (cursor->filter_text, 0);
      g_byte_array_append (cursor->filter_text, text, sqlite3_value_bytes (arg));
    }
  return TRUE;
}

/* Equality on every part of the data key, each value certain (no NULL, no
 * number that a text column might compare as text): the key itself is
 * known, so one point read of it replaces a walk. Returns FALSE (with
 * @error unset) when the plan must walk instead, or on error. */
static gboolean
point_read (QStoreCursor   *cursor,
            int             idx_num,
            int             argc,
            sqlite3_value **argv,
            GError        **error)
{
  guint n_eq = PLAN_N_EQ (idx_num);
  GByteArray *key = cursor->key_buf;
  GError *local_error = NULL;
  gboolean found;

  if (n_eq != cursor->parts->len || (guint) argc < n_eq ||
      PLAN_LOWER (idx_num) != BOUND_NONE || PLAN_UPPER (idx_num) != BOUND_NONE)
    return FALSE;

  buffer_set_len (key, 0);
  for (guint k = 0; k < n_eq; k++)
    {
      const Part *part = &g_array_index (cursor->parts, Part, k);
      gboolean certain;

      /* `IS NULL` finds the rows whose key holds NULL (each under its own
       * suffix): those need the walk. */
      if (sqlite3_value_type (argv[k]) == SQLITE_NULL)
        return FALSE;
      if (!qstore_vtab_encode_constraint (part, argv[k], key, &certain, error) || !certain)
        return FALSE;
    }

  cursor->point = TRUE;
  cursor->eof = FALSE;

  /* Through the snapshot of the statements running now, if any: a point
   * read alone is cheaper without one. */
  if (!hold_snapshot (cursor, FALSE, error))
    return FALSE;
  found = cursor->snapshot != NULL
          ? snapshot_read_row (cursor, key->data, key->len, FALSE, &local_error)
          : read_row (cursor, key->data, key->len, &local_error);
  if (!found)
    {
      if (local_error != NULL)
        {
          g_propagate_error (error, local_error);
          return FALSE;
        }
      cursor->eof = TRUE;
      return TRUE;
    }

  cursor->key = key->data;
  cursor->key_len = key->len;
  return row_start (cursor, error);
}

/* Past this, an automatic index is given up and the table walked for
 * each probe instead. */
#define AUTO_MAX_BYTES (256 * 1024 * 1024)

/* Builds the automatic index of @column from every row the statement
 * reads: through the shared snapshot outside a transaction, through the
 * coordinator (with the transaction's own writes) inside one. */
static gboolean
auto_build (QStoreCursor     *cursor,
            guint             column,
            QStoreCollation   collation,
            GError          **error)
{
  QStoreColumn *col = qstore_vtab_schema_column (cursor->entry->schema, column);
  Window all = { NULL, TRUE, NULL, FALSE };
  QStoreAutoIndex *index;
  QStoreIter *iter;
  QStoreIterClass *iter_class;
  gboolean ok = TRUE;

  cursor->by_index = FALSE;
  cursor->reverse = FALSE;
  if (!hold_snapshot (cursor, TRUE, error) ||
      !(iter = open_window (cursor, &all, error)))
    return FALSE;
  iter_class = QSTORE_ITER_GET_CLASS (iter);

  index = qstore_auto_index_new (column, collation, col->affinity);
  while (ok)
    {
      GError *local_error = NULL;
      const guint8 *key, *row;
      gsize key_len, row_len;

      if (!qstore_iter_next_internal (iter, &local_error))
        {
          if (local_error != NULL)
            {
              g_propagate_error (error, local_error);
              ok = FALSE;
            }
          break;
        }
      key = iter_class->peek_key (iter, &key_len);
      row = iter_class->peek_value (iter, &row_len);
      cursor->row_data = row;
      cursor->row_len = row_len;
      ok = row_start (cursor, error) && row_decode_to (cursor, column, error) &&
           qstore_auto_index_add (index, key, key_len, row, row_len, &cursor->values[column],
                                  error);
      if (ok && qstore_auto_index_get_size (index) > AUTO_MAX_BYTES)
        {
          g_clear_pointer (&index, qstore_auto_index_free);
          cursor->auto_off = TRUE;
          break;
        }
    }
  g_object_unref (iter);
  cursor->row_data = NULL;
  if (cursor->snapshot != NULL)
    qstore_coordinator_release_snapshot (cursor->entry->database->coordinator,
                                         g_steal_pointer (&cursor->snapshot));
  if (!ok)
    {
      qstore_auto_index_free (index);
      return FALSE;
    }
  cursor->auto_index = index;
  cursor->auto_writes = cursor->table->n_writes;
  return TRUE;
}

static gboolean
auto_filter (QStoreCursor   *cursor,
             int             idx_num,
             const char     *idx_str,
             int             argc,
             sqlite3_value **argv,
             GError        **error)
{
  guint column = PLAN_INDEX_NO (idx_num);
  QStoreCollation collation = PLAN_COLLATION (idx_num);

  if (column >= cursor->entry->schema->columns->len || argc < 1)
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_FAILED,
                   _("The plan for table “%s” names a column it no longer has: run the "
                   "statement again"), cursor->entry->schema->name);
      return FALSE;
    }

  if (cursor->auto_probes == 0 && cursor->auto_index == NULL && !cursor->auto_off)
    {
      QStoreAutoShelf *shelf = vtab_shelf (cursor->entry->database, FALSE);
      QStoreAutoToken token;

      auto_token (cursor, &token);
      cursor->auto_plan = idx_str;
      if (shelf != NULL)
        cursor->auto_index = qstore_auto_shelf_take (shelf, cursor->base.pVtab, idx_str, &token,
                                                     &cursor->auto_probes);
      cursor->auto_writes = token.writes;
    }

  /* Rows written since it was built (by this statement or by the work
   * it set off) are not in it: the table is walked from then on. */
  if (cursor->auto_index != NULL &&
      (!qstore_auto_index_is_for (cursor->auto_index, column, collation) ||
       cursor->auto_writes != cursor->table->n_writes))
    {
      g_clear_pointer (&cursor->auto_index, qstore_auto_index_free);
      cursor->auto_off = TRUE;
    }

  if (cursor->auto_index == NULL && !cursor->auto_off && ++cursor->auto_probes >= 2 &&
      !auto_build (cursor, column, collation, error))
    return FALSE;

  if (cursor->auto_index == NULL)
    {
      /* One probe so far: a walk of the table, filtered on the probe. */
      Window all = { NULL, TRUE, NULL, FALSE };

      if (!filter_start (cursor, column, collation, argv[0], error))
        {
          cursor->eof = TRUE;
          return error == NULL || *error == NULL;
        }
      if (!hold_snapshot (cursor, TRUE, error))
        return FALSE;
      g_array_append_val (cursor->windows, all);
      return cursor_advance (cursor, error);
    }

  if (cursor->auto_matches == NULL)
    cursor->auto_matches = g_array_new (FALSE, FALSE, sizeof (guint32));
  if (!qstore_auto_index_probe (cursor->auto_index, argv[0], cursor->auto_matches, error))
    return FALSE;
  cursor->auto_walk = TRUE;
  cursor->auto_next = 0;
  return cursor_advance (cursor, error);
}

static int
vtab_filter (sqlite3_vtab_cursor  *base,
             int                   idx_num,
             const char           *idx_str,
             int                   argc,
             sqlite3_value       **argv)
{
  QStoreCursor *cursor = (QStoreCursor *) base;
  QStoreSqlTable *entry = cursor->entry;
  g_autoptr(GError) error = NULL;
  int kind = PLAN_KIND (idx_num);
  guint n_searchable;
  guint n_columns = entry->schema->columns->len;

  /* A materialized view's contents: work its transaction deferred first. */
  if (G_UNLIKELY (entry->before_read != NULL) && !entry->before_read (entry->owner, &error))
    return qstore_vtab_fail (base->pVtab, entry->database, g_steal_pointer (&error));

  cursor_reset (cursor);
  /* A schema change gives the entry a new table: the plan's parts were
   * those of the old one. */
  if (cursor->table != entry->table)
    {
      g_set_object (&cursor->table, entry->table);
      g_clear_pointer (&cursor->auto_index, qstore_auto_index_free);
      g_clear_pointer (&cursor->parts, g_array_unref);
      cursor->parts_index = -2;
    }
  if (cursor->values == NULL || cursor->n_values != n_columns ||
      cursor->n_slots != cursor->table->n_values)
    {
      g_free (cursor->values);
      cursor->n_values = n_columns;
      cursor->n_slots = cursor->table->n_values;
      cursor->values = g_new0 (QStoreValue, MAX (cursor->n_slots, 1));
    }
  cursor->by_index = kind == PLAN_INDEX;
  cursor->covering = cursor->by_index && PLAN_COVERING (idx_num);
  /* The slots of columns an index does not hold stay NULL. */
  if (cursor->covering)
    memset (cursor->values, 0, cursor->n_slots * sizeof *cursor->values);
  cursor->index = PLAN_INDEX_NO (idx_num);
  cursor->reverse = PLAN_REVERSE (idx_num);
  cursor->eof = FALSE;

  if (cursor->by_index && cursor->index >= entry->schema->indexes->len)
    {
      g_set_error (&error, QSTORE_ERROR, QSTORE_ERROR_FAILED,
                   _("The plan for table “%s” names an index it no longer has: run the "
                   "statement again"), entry->schema->name);
      return qstore_vtab_fail (base->pVtab, entry->database, g_steal_pointer (&error));
    }

  if (PLAN_FILTER (idx_num) >= 0)
    {
      if ((guint) PLAN_FILTER (idx_num) >= n_columns || argc < 1)
        {
          g_set_error (&error, QSTORE_ERROR, QSTORE_ERROR_FAILED,
                       _("The plan for table “%s” names a column it no longer has: run the "
                       "statement again"), entry->schema->name);
          return qstore_vtab_fail (base->pVtab, entry->database, g_steal_pointer (&error));
        }
      argc--;
      if (!filter_start (cursor, PLAN_FILTER (idx_num), PLAN_COLLATION (idx_num), argv[argc],
                         &error))
        {
          if (error != NULL)
            return qstore_vtab_fail (base->pVtab, entry->database, g_steal_pointer (&error));
          cursor->eof = TRUE;
          return SQLITE_OK;
        }
    }

  /* SQLite does not check an exact plan's constraints again: with a NULL
   * argument, none holds. */
  if (PLAN_EXACT (idx_num))
    for (int i = 0; i < argc; i++)
      if (sqlite3_value_type (argv[i]) == SQLITE_NULL)
        {
          cursor->eof = TRUE;
          return SQLITE_OK;
        }

  if (kind == PLAN_AUTO)
    {
      if (!auto_filter (cursor, idx_num, idx_str, argc, argv, &error))
        return qstore_vtab_fail (base->pVtab, entry->database, g_steal_pointer (&error));
      return SQLITE_OK;
    }

  if (kind == PLAN_SCAN)
    {
      Window all = { NULL, TRUE, NULL, FALSE };

      if (!hold_snapshot (cursor, TRUE, &error))
        return qstore_vtab_fail (base->pVtab, entry->database, g_steal_pointer (&error));
      g_array_append_val (cursor->windows, all);
    }
  else
    {
      int parts_index = cursor->by_index ? (int) cursor->index : -1;

      if (cursor->parts == NULL || cursor->parts_index != parts_index)
        {
          g_clear_pointer (&cursor->parts, g_array_unref);
          cursor->parts = qstore_vtab_plan_parts (entry->schema, parts_index, &n_searchable);
          cursor->parts_index = parts_index;
        }
      if (kind == PLAN_PK && point_read (cursor, idx_num, argc, argv, &error))
        return SQLITE_OK;
      if (error != NULL ||
          !hold_snapshot (cursor, TRUE, &error) ||
          !qstore_vtab_build_windows (cursor->windows, cursor->parts, idx_num, argc, argv, &error))
        return qstore_vtab_fail (base->pVtab, entry->database, g_steal_pointer (&error));
    }

  if (!cursor_advance (cursor, &error))
    return qstore_vtab_fail (base->pVtab, entry->database, g_steal_pointer (&error));
  return SQLITE_OK;
}

static int
vtab_next (sqlite3_vtab_cursor *base)
{
  QStoreCursor *cursor = (QStoreCursor *) base;
  g_autoptr(GError) error = NULL;

  if (!cursor_advance (cursor, &error))
    return qstore_vtab_fail (base->pVtab, cursor->entry->database, g_steal_pointer (&error));
  return SQLITE_OK;
}

static int
vtab_eof (sqlite3_vtab_cursor *base)
{
  return ((QStoreCursor *) base)->eof;
}

static int
vtab_column (sqlite3_vtab_cursor *base,
             sqlite3_context     *context,
             int                  column)
{
  QStoreCursor *cursor = (QStoreCursor *) base;
  GError *error = NULL;

  if (column < 0 || (guint) column >= cursor->n_values || cursor->eof)
    {
      sqlite3_result_null (context);
      return SQLITE_OK;
    }
  if (!row_decode_to (cursor, column, &error))
    return qstore_vtab_fail (base->pVtab, cursor->entry->database, error);
  qstore_value_to_result (context, &cursor->values[column]);
  return SQLITE_OK;
}

/* The ephemeral rowid standing for the data key @key of a table keyed by
 * its PRIMARY KEY. */
static gint64
rowid_for_key (QStoreSqlTable *entry,
               const guint8   *key,
               gsize           key_len)
{
  g_autoptr(GBytes) bytes = g_bytes_new (key, key_len);
  gpointer found;

  if (g_hash_table_lookup_extended (entry->rowid_by_key, bytes, NULL, &found))
    return GPOINTER_TO_SIZE (found);

  g_ptr_array_add (entry->key_by_rowid, g_bytes_ref (bytes));
  g_hash_table_insert (entry->rowid_by_key, g_steal_pointer (&bytes),
                       GSIZE_TO_POINTER (entry->key_by_rowid->len));
  entry->database->rowids_given = TRUE;
  return entry->key_by_rowid->len;
}

static int
vtab_rowid (sqlite3_vtab_cursor *base,
            sqlite3_int64       *rowid)
{
  QStoreCursor *cursor = (QStoreCursor *) base;

  if (qstore_vtab_keyed_by_rowid (cursor->entry->schema))
    {
      int position = cursor->table->rowid_position;
      GError *error = NULL;

      if (position < 0 || !row_decode_to (cursor, position, &error) ||
          cursor->values[position].type != QSTORE_VALUE_INTEGER)
        {
          if (error == NULL)
            g_set_error (&error, QSTORE_ERROR, QSTORE_ERROR_CORRUPT,
                         _("A row of table “%s” has no integer rowid: the data store does not "
                         "match the table's schema"), cursor->entry->schema->name);
          return qstore_vtab_fail (base->pVtab, cursor->entry->database, error);
        }
      *rowid = cursor->values[position].integer;
    }
  else
    *rowid = rowid_for_key (cursor->entry, cursor->key, cursor->key_len);
  return SQLITE_OK;
}

/* Transactions: every table shares the coordinator, and SQLite calls each
 * hook once per table, so each one does its work only once. */

static QStoreCoordinator *
vtab_coordinator (sqlite3_vtab *vtab)
{
  return ((QStoreVtab *) vtab)->entry->database->coordinator;
}

static int
vtab_begin (sqlite3_vtab *vtab)
{
  QStoreCoordinator *coordinator = vtab_coordinator (vtab);

  if (!qstore_coordinator_in_transaction (coordinator))
    qstore_coordinator_begin (coordinator);
  return SQLITE_OK;
}

static int
vtab_sync (sqlite3_vtab *vtab)
{
  QStoreCoordinator *coordinator = vtab_coordinator (vtab);
  GError *error = NULL;

  if (qstore_coordinator_in_transaction (coordinator) &&
      !qstore_coordinator_commit (coordinator, &error))
    return qstore_vtab_fail (vtab, ((QStoreVtab *) vtab)->entry->database, error);
  return SQLITE_OK;
}

static int
vtab_commit (sqlite3_vtab *vtab)
{
  qstore_sql_table_forget_rowids (((QStoreVtab *) vtab)->entry);
  return SQLITE_OK;
}

static int
vtab_rollback (sqlite3_vtab *vtab)
{
  QStoreCoordinator *coordinator = vtab_coordinator (vtab);

  if (qstore_coordinator_in_transaction (coordinator))
    qstore_coordinator_rollback (coordinator);
  qstore_sql_table_forget_rowids (((QStoreVtab *) vtab)->entry);
  return SQLITE_OK;
}

static int
vtab_savepoint (sqlite3_vtab *vtab,
                int           depth)
{
  QStoreCoordinator *coordinator = vtab_coordinator (vtab);

  /* After a DDL-commit the coordinator has no transaction any more, while
   * SQLite's goes on. */
  if (!qstore_coordinator_in_transaction (coordinator))
    qstore_coordinator_begin (coordinator);
  qstore_coordinator_savepoint (coordinator, depth);
  return SQLITE_OK;
}

static int
vtab_release (sqlite3_vtab *vtab,
              int           depth)
{
  QStoreCoordinator *coordinator = vtab_coordinator (vtab);

  if (qstore_coordinator_in_transaction (coordinator))
    qstore_coordinator_release (coordinator, depth);
  return SQLITE_OK;
}

static int
vtab_rollback_to (sqlite3_vtab *vtab,
                  int           depth)
{
  QStoreCoordinator *coordinator = vtab_coordinator (vtab);

  if (qstore_coordinator_in_transaction (coordinator))
    qstore_coordinator_rollback_to (coordinator, depth);
  return SQLITE_OK;
}

static int
vtab_rename (sqlite3_vtab *vtab,
             const char   *new_name)
{
  QStoreVtab *self = (QStoreVtab *) vtab;
  GError *error = NULL;

  if (!self->entry->database->rename_table (self->entry->database, self->entry, new_name,
                                                &error))
    return qstore_vtab_fail (vtab, self->entry->database, error);
  return SQLITE_OK;
}

/* Connecting */

static int
vtab_connect (sqlite3            *db,
              void               *aux,
              int                 argc,
              const char * const *argv,
              sqlite3_vtab      **out,
              char              **errmsg)
{
  QStoreDatabase *database = aux;
  g_autofree char *declaration = NULL;
  QStoreSqlTable *entry;
  QStoreVtab *vtab;
  int rc;

  entry = argc >= 3 ? qstore_database_lookup (database, argv[2]) : NULL;
  if (entry == NULL)
    {
      *errmsg = sqlite3_mprintf ("Table “%s” is not a qstore table: create it with "
                                 "CREATE TABLE", argc >= 3 ? argv[2] : "");
      return SQLITE_ERROR;
    }

  declaration = qstore_vtab_declaration (entry->schema);
  rc = sqlite3_declare_vtab (db, declaration);
  if (rc != SQLITE_OK)
    {
      *errmsg = sqlite3_mprintf ("Table “%s” cannot be declared to SQLite (%s): %s",
                                 entry->schema->name, sqlite3_errmsg (db), declaration);
      return rc;
    }
  sqlite3_vtab_config (db, SQLITE_VTAB_CONSTRAINT_SUPPORT, 1);

  vtab = g_new0 (QStoreVtab, 1);
  vtab->entry = qstore_sql_table_ref (entry);
  *out = &vtab->base;
  return SQLITE_OK;
}

static int
vtab_disconnect (sqlite3_vtab *base)
{
  QStoreVtab *vtab = (QStoreVtab *) base;
  QStoreAutoShelf *shelf = vtab_shelf (vtab->entry->database, FALSE);

  if (shelf != NULL)
    qstore_auto_shelf_forget (shelf, vtab);
  while (vtab->n_spares > 0)
    cursor_free (vtab->spares[--vtab->n_spares]);
  sqlite3_free (vtab->base.zErrMsg);
  qstore_sql_table_unref (vtab->entry);
  g_free (vtab);
  return SQLITE_OK;
}

static const sqlite3_module qstore_module = {
  .iVersion = 2,
  .xCreate = vtab_connect,
  .xConnect = vtab_connect,
  .xBestIndex = vtab_best_index,
  .xDisconnect = vtab_disconnect,
  /* The stores are erased by the DROP TABLE handling before SQLite drops
   * the virtual table. */
  .xDestroy = vtab_disconnect,
  .xOpen = vtab_open,
  .xClose = vtab_close,
  .xFilter = vtab_filter,
  .xNext = vtab_next,
  .xEof = vtab_eof,
  .xColumn = vtab_column,
  .xRowid = vtab_rowid,
  .xUpdate = qstore_vtab_update,
  .xBegin = vtab_begin,
  .xSync = vtab_sync,
  .xCommit = vtab_commit,
  .xRollback = vtab_rollback,
  .xRename = vtab_rename,
  .xSavepoint = vtab_savepoint,
  .xRelease = vtab_release,
  .xRollbackTo = vtab_rollback_to,
};

/* When the connection closes, after every table let go of what the shelf
 * kept for it. */
static void
module_destroy (void *data)
{
  QStoreDatabase *self = data;

  g_clear_pointer (&self->auto_shelf, qstore_auto_shelf_free);
}

gboolean
qstore_vtab_register_module (QStoreDatabase  *self,
                             GError         **error)
{
  int rc;

  rc = sqlite3_create_module_v2 (self->db, QSTORE_VTAB_MODULE_NAME, &qstore_module, self,
                                 module_destroy);
  if (rc != SQLITE_OK)
    {
      qstore_database_set_sqlite_error (self, self->db, rc, error);
      return FALSE;
    }
  return TRUE;
}
