/* qstore-unsafe-store.c: the tables of an unsafe window
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A window keeps its state in ordinary tables of its database, so one
 * coordinator transaction covers every write of an operation, on any
 * provider. Each table is reached through QStoreTable's value entry points;
 * keys are the tables' primary keys (or a secondary index where a
 * operation deletes by other columns).
 */
#include "config.h"

#include <string.h>

#include "qstore-codec-private.h"
#include "qstore-database-private.h"
#include "qstore-error.h"
#include "qstore-i18n-private.h"
#include "qstore-suid.h"
#include "qstore-table-private.h"
#include "qstore-unsafe-store-private.h"
#include "qstore-unsafe-window-error.h"

#define MAX_COLUMNS 6

typedef struct
{
  const char *suffix;
  const char *definition;           /* the body of CREATE TABLE */
  const char *index_suffix;         /* NULL, or the index's name after the table's */
  const char *index_columns;
  const char *columns[MAX_COLUMNS + 1];
} TableSpec;

/* Column positions, table by table */
enum { ROW_GENERATION, ROW_KEY, ROW_VALUE, ROW_VERSION, ROW_SOURCE_SUID, ROW_TOMBSTONE };
enum { ENTRY_GENERATION, ENTRY_ROW_KEY, ENTRY_INDEX_ID, ENTRY_VALUE_TYPE, ENTRY_VALUE };
enum { RECEIPT_EVENT_ID, RECEIPT_SUID, RECEIPT_OUTCOME, RECEIPT_OBSERVED_AT, RECEIPT_MARKED_ROWS };
enum { WAIT_GENERATION, WAIT_SUID, WAIT_DEFINITION, WAIT_EVENT_ID, WAIT_OBSERVED_AT };
enum { MARKER_GENERATION, MARKER_ROW_KEY, MARKER_EVENT_ID, MARKER_SUID, MARKER_REASON };
enum { ARRIVAL_GENERATION, ARRIVAL_SAFE_HEAD, ARRIVAL_WATERMARK, ARRIVAL_BEHIND_EVENT_ID,
       ARRIVAL_BEHIND_SUID, ARRIVAL_REBUILD };
enum { KICK_SLOT, KICK_TARGET, KICK_DIRTY, KICK_LEASE_OWNER, KICK_LEASE_UNTIL };
enum { GEN_GENERATION, GEN_DEFINITION };
enum { ACTIVE_SLOT, ACTIVE_GENERATION };

/* The kick and the active generation are single rows. */
#define SINGLE_SLOT 0

static const TableSpec specs[QSTORE_UNSAFE_N_TABLES] = {
  [QSTORE_UNSAFE_TABLE_ROWS] = {
    "rows",
    "generation INTEGER NOT NULL, row_key TEXT NOT NULL, value_json TEXT NOT NULL, "
    "row_version INTEGER NOT NULL, source_suid TEXT NOT NULL, tombstone INTEGER NOT NULL, "
    "PRIMARY KEY (generation, row_key)",
    NULL, NULL,
    { "generation", "row_key", "value_json", "row_version", "source_suid", "tombstone", NULL },
  },
  [QSTORE_UNSAFE_TABLE_SAFE_ROWS] = {
    "safe_rows",
    "generation INTEGER NOT NULL, row_key TEXT NOT NULL, value_json TEXT NOT NULL, "
    "row_version INTEGER NOT NULL, source_suid TEXT NOT NULL, "
    "PRIMARY KEY (generation, row_key)",
    NULL, NULL,
    { "generation", "row_key", "value_json", "row_version", "source_suid", NULL },
  },
  [QSTORE_UNSAFE_TABLE_INDEX_ENTRIES] = {
    "index_entries",
    /* value has no type: it holds text, integers or reals as given. */
    "generation INTEGER NOT NULL, row_key TEXT NOT NULL, index_id TEXT NOT NULL, "
    "value_type TEXT NOT NULL, value NOT NULL, "
    "PRIMARY KEY (generation, row_key, index_id, value_type, value)",
    "by_value", "generation, index_id, value_type, value",
    { "generation", "row_key", "index_id", "value_type", "value", NULL },
  },
  [QSTORE_UNSAFE_TABLE_RECEIPTS] = {
    "receipts",
    /* marked_rows: the JSON array of the row keys the event marked (its
     * markers' keys, so they are found without an index of their own). */
    "event_id TEXT NOT NULL PRIMARY KEY, suid TEXT NOT NULL, outcome TEXT NOT NULL, "
    "observed_at INTEGER NOT NULL, marked_rows TEXT",
    "by_suid", "suid",
    { "event_id", "suid", "outcome", "observed_at", "marked_rows", NULL },
  },
  [QSTORE_UNSAFE_TABLE_WAIT_RECEIPTS] = {
    "wait_receipts",
    "generation INTEGER NOT NULL, suid TEXT NOT NULL, definition_version INTEGER NOT NULL, "
    "event_id TEXT NOT NULL, observed_at INTEGER NOT NULL, "
    "PRIMARY KEY (generation, suid, definition_version, event_id)",
    NULL, NULL,
    { "generation", "suid", "definition_version", "event_id", "observed_at", NULL },
  },
  [QSTORE_UNSAFE_TABLE_MARKERS] = {
    "markers",
    "generation INTEGER NOT NULL, row_key TEXT NOT NULL, event_id TEXT NOT NULL, "
    "suid TEXT NOT NULL, reason TEXT NOT NULL, "
    "PRIMARY KEY (generation, row_key, event_id)",
    NULL, NULL,
    { "generation", "row_key", "event_id", "suid", "reason", NULL },
  },
  [QSTORE_UNSAFE_TABLE_ARRIVALS] = {
    "arrivals",
    "generation INTEGER NOT NULL PRIMARY KEY, safe_head TEXT NOT NULL, "
    "arrival_watermark TEXT NOT NULL, behind_frontier_event_id TEXT, "
    "behind_frontier_suid TEXT, rebuild_required INTEGER NOT NULL",
    NULL, NULL,
    { "generation", "safe_head", "arrival_watermark", "behind_frontier_event_id",
      "behind_frontier_suid", "rebuild_required", NULL },
  },
  [QSTORE_UNSAFE_TABLE_KICKS] = {
    "kicks",
    "slot INTEGER NOT NULL PRIMARY KEY, target_suid TEXT NOT NULL, dirty INTEGER NOT NULL, "
    "lease_owner TEXT, lease_until INTEGER NOT NULL",
    NULL, NULL,
    { "slot", "target_suid", "dirty", "lease_owner", "lease_until", NULL },
  },
  [QSTORE_UNSAFE_TABLE_GENERATIONS] = {
    "generations",
    "generation INTEGER NOT NULL PRIMARY KEY, definition_version INTEGER NOT NULL",
    NULL, NULL,
    { "generation", "definition_version", NULL },
  },
  [QSTORE_UNSAFE_TABLE_ACTIVE] = {
    "active",
    "slot INTEGER NOT NULL PRIMARY KEY, generation INTEGER NOT NULL",
    NULL, NULL,
    { "slot", "generation", NULL },
  },
};

/* Values */

static inline QStoreValue
integer_value (gint64 v)
{
  QStoreValue value = { .type = QSTORE_VALUE_INTEGER };

  value.integer = v;
  return value;
}

static inline QStoreValue
text_value (const char *text)
{
  QStoreValue value = { .type = QSTORE_VALUE_NULL };

  if (text != NULL)
    {
      value.type = QSTORE_VALUE_TEXT;
      value.bytes.data = (const guint8 *) text;
      value.bytes.len = strlen (text);
    }
  return value;
}

/* Record cleanup */

void
qstore_unsafe_row_record_clear (QStoreUnsafeRowRecord *row)
{
  g_clear_pointer (&row->row_key, g_free);
  g_clear_pointer (&row->value_json, g_free);
  g_clear_pointer (&row->source_suid, g_free);
}

void
qstore_unsafe_receipt_clear (QStoreUnsafeReceipt *receipt)
{
  g_clear_pointer (&receipt->event_id, g_free);
  g_clear_pointer (&receipt->suid, g_free);
  g_clear_pointer (&receipt->outcome, g_free);
  g_clear_pointer (&receipt->marked_rows, g_free);
}

void
qstore_unsafe_arrival_clear (QStoreUnsafeArrival *arrival)
{
  g_clear_pointer (&arrival->safe_head, g_free);
  g_clear_pointer (&arrival->arrival_watermark, g_free);
  g_clear_pointer (&arrival->behind_event_id, g_free);
  g_clear_pointer (&arrival->behind_suid, g_free);
}

void
qstore_unsafe_kick_clear (QStoreUnsafeKick *kick)
{
  g_clear_pointer (&kick->target_suid, g_free);
  g_clear_pointer (&kick->lease_owner, g_free);
}

/* Setup */

void
qstore_unsafe_store_init (QStoreUnsafeStore *store,
                          QStoreDatabase    *database,
                          const char        *window)
{
  store->database = database;
  store->window = g_strdup (window);
  for (guint i = 0; i < QSTORE_UNSAFE_N_TABLES; i++)
    store->names[i] = g_strconcat (QSTORE_UNSAFE_TABLE_PREFIX, window, "_", specs[i].suffix, NULL);
}

void
qstore_unsafe_store_forget_tables (QStoreUnsafeStore *store)
{
  memset (store->tables, 0, sizeof store->tables);
}

void
qstore_unsafe_store_clear (QStoreUnsafeStore *store)
{
  g_clear_pointer (&store->window, g_free);
  for (guint i = 0; i < QSTORE_UNSAFE_N_TABLES; i++)
    g_clear_pointer (&store->names[i], g_free);
}

gboolean
qstore_unsafe_store_is_table_name (const char *name)
{
  gsize len = strlen (name);

  if (g_ascii_strncasecmp (name, QSTORE_UNSAFE_TABLE_PREFIX,
                           strlen (QSTORE_UNSAFE_TABLE_PREFIX)) != 0)
    return FALSE;
  for (guint i = 0; i < QSTORE_UNSAFE_N_TABLES; i++)
    {
      gsize suffix_len = strlen (specs[i].suffix);

      /* The prefix, a window name of at least one character, "_", the
       * suffix. */
      if (len >= strlen (QSTORE_UNSAFE_TABLE_PREFIX) + 2 + suffix_len &&
          name[len - suffix_len - 1] == '_' &&
          g_ascii_strcasecmp (name + len - suffix_len, specs[i].suffix) == 0)
        return TRUE;
    }
  return FALSE;
}

static QStoreTable *
table_for (QStoreUnsafeStore    *store,
           QStoreUnsafeTableId   id,
           GError              **error)
{
  QStoreTable *table = store->tables[id];

  if (table != NULL)
    return table;
  table = store->tables[id] = qstore_database_get_table (store->database, NULL, store->names[id]);
  if (table == NULL)
    g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_NOT_FOUND,
                 _("Unsafe window “%s”: its table “%s” is gone (dropped around the "
                 "window): open the window again to recreate it empty, or rebuild "
                 "the view"), store->window, store->names[id]);
  return table;
}

static gboolean
check_shape (QStoreUnsafeStore    *store,
             QStoreUnsafeTableId   id,
             GError              **error)
{
  QStoreTable *table = table_for (store, id, error);
  const TableSpec *spec = &specs[id];
  guint n = g_strv_length ((char **) spec->columns);

  if (table == NULL)
    return FALSE;
  if (qstore_table_get_n_columns (table) == n)
    {
      guint i;

      for (i = 0; i < n; i++)
        if (g_ascii_strcasecmp (qstore_table_get_column_name (table, i), spec->columns[i]) != 0)
          break;
      if (i == n)
        return TRUE;
    }

  g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_EXISTS,
               _("Unsafe window “%s”: table “%s” exists but is not a window table "
               "(its columns differ): drop it, or give the window another name"),
               store->window, store->names[id]);
  return FALSE;
}

gboolean
qstore_unsafe_store_create (QStoreUnsafeStore  *store,
                            GError            **error)
{
  /* Tables in the way are found before anything is created. */
  for (guint i = 0; i < QSTORE_UNSAFE_N_TABLES; i++)
    if (qstore_database_get_table (store->database, NULL, store->names[i]) != NULL &&
        !check_shape (store, i, error))
      return FALSE;

  for (guint i = 0; i < QSTORE_UNSAFE_N_TABLES; i++)
    {
      const TableSpec *spec = &specs[i];
      g_autofree char *sql = NULL;

      if (qstore_database_get_table (store->database, NULL, store->names[i]) == NULL)
        {
          sql = g_strdup_printf ("CREATE TABLE IF NOT EXISTS %s (%s)", store->names[i],
                                 spec->definition);
          if (!qstore_database_exec_reserved (store->database, sql, error))
            {
              g_prefix_error (error, _("Unsafe window “%s”: cannot create table “%s”: "),
                              store->window, store->names[i]);
              return FALSE;
            }
        }

      if (spec->index_suffix != NULL)
        {
          g_clear_pointer (&sql, g_free);
          sql = g_strdup_printf ("CREATE INDEX IF NOT EXISTS %s_%s ON %s (%s)",
                                 store->names[i], spec->index_suffix, store->names[i],
                                 spec->index_columns);
          if (!qstore_database_exec_reserved (store->database, sql, error))
            {
              g_prefix_error (error, _("Unsafe window “%s”: cannot index table “%s”: "),
                              store->window, store->names[i]);
              return FALSE;
            }
        }
    }
  /* DDL may have replaced the tables looked up. */
  qstore_unsafe_store_forget_tables (store);
  return TRUE;
}

/* Generic access */

static gboolean
index_position (QStoreUnsafeStore    *store,
                QStoreUnsafeTableId   id,
                QStoreTable          *table,
                guint                *position,
                GError              **error)
{
  QStoreTableSchema *schema = qstore_table_get_table_schema (table);
  g_autofree char *name = g_strconcat (store->names[id], "_", specs[id].index_suffix, NULL);

  for (guint i = 0; i < schema->indexes->len; i++)
    {
      const QStoreIndexSchema *index = g_ptr_array_index (schema->indexes, i);

      if (g_ascii_strcasecmp (index->name, name) == 0)
        {
          *position = i;
          return TRUE;
        }
    }
  g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_NOT_FOUND,
               _("Unsafe window “%s”: index “%s” is gone (dropped around the window): "
               "open the window again to recreate it"), store->window, name);
  return FALSE;
}

/* Reads the row under the full primary key @key into @values (borrowing
 * from *@holder). */
static gboolean
get_values (QStoreUnsafeStore    *store,
            QStoreUnsafeTableId   id,
            const QStoreValue    *key,
            guint                 n_key,
            QStoreValue          *values,
            GBytes              **holder,
            gboolean             *found,
            GError              **error)
{
  QStoreTable *table = table_for (store, id, error);
  g_autoptr(GByteArray) encoded = g_byte_array_sized_new (64);
  g_autoptr(GError) local_error = NULL;
  gsize len;
  const guint8 *data;

  *found = FALSE;
  if (table == NULL ||
      !qstore_table_encode_key_prefix (table, -1, key, n_key, encoded, error))
    return FALSE;
  *holder = qstore_table_get_row (table, encoded->data, encoded->len, &local_error);
  if (*holder == NULL)
    {
      if (local_error == NULL)
        return TRUE;
      g_propagate_error (error, g_steal_pointer (&local_error));
      return FALSE;
    }

  data = g_bytes_get_data (*holder, &len);
  if (!qstore_table_decode_row (table, data, len, values, NULL, error))
    return FALSE;
  *found = TRUE;
  return TRUE;
}

static gboolean
write_values (QStoreUnsafeStore    *store,
              QStoreUnsafeTableId   id,
              QStoreValue          *values,
              QStoreConflict        conflict,
              GError              **error)
{
  QStoreTable *table = table_for (store, id, error);
  gboolean ignored = FALSE;

  return table != NULL &&
         qstore_table_insert_values (table, values, conflict, NULL, &ignored, error);
}

static gboolean
delete_values (QStoreUnsafeStore    *store,
               QStoreUnsafeTableId   id,
               const QStoreValue    *key,
               guint                 n_key,
               GError              **error)
{
  QStoreTable *table = table_for (store, id, error);
  g_autoptr(GByteArray) encoded = g_byte_array_sized_new (64);

  return table != NULL &&
         qstore_table_encode_key_prefix (table, -1, key, n_key, encoded, error) &&
         qstore_table_delete_key (table, encoded->data, encoded->len, error);
}

static void
set_prefix_bounds (QStoreBounds     *bounds,
                   const GByteArray *prefix)
{
  gsize len = prefix->len;

  qstore_bounds_set_gte (bounds, prefix->data, prefix->len);
  /* The first key after every key that starts with @prefix. */
  while (len > 0 && prefix->data[len - 1] == 0xff)
    len--;
  if (len > 0)
    {
      g_autofree guint8 *upper = g_memdup2 (prefix->data, len);

      upper[len - 1]++;
      qstore_bounds_set_lt (bounds, upper, len);
    }
}

/* The entries of the primary key (@index < 0) or of the table's index
 * whose first columns are @prefix. */
static QStoreIter *
scan_prefix (QStoreUnsafeStore    *store,
             QStoreUnsafeTableId   id,
             gboolean              by_index,
             const QStoreValue    *prefix,
             guint                 n_prefix,
             gboolean              reverse,
             gint64                limit,
             GError              **error)
{
  QStoreTable *table = table_for (store, id, error);
  g_autoptr(GByteArray) encoded = g_byte_array_sized_new (64);
  g_autoptr(QStoreBounds) bounds = qstore_bounds_new ();
  guint index = 0;

  if (table == NULL ||
      (by_index && !index_position (store, id, table, &index, error)) ||
      !qstore_table_encode_key_prefix (table, by_index ? (int) index : -1, prefix, n_prefix,
                                       encoded, error))
    return NULL;

  if (encoded->len > 0)
    set_prefix_bounds (bounds, encoded);
  qstore_bounds_set_reverse (bounds, reverse);
  if (limit >= 0)
    qstore_bounds_set_limit (bounds, limit);
  return by_index ? qstore_table_scan_index (table, index, bounds, error)
                  : qstore_table_scan (table, bounds, error);
}

/* Deletes every row under @prefix of the primary key or of the index
 * (whose entries hold data keys). Keys are collected first: the
 * transaction's own deletes must not move the cursor. */
static gboolean
delete_prefix (QStoreUnsafeStore    *store,
               QStoreUnsafeTableId   id,
               gboolean              by_index,
               const QStoreValue    *prefix,
               guint                 n_prefix,
               GError              **error)
{
  g_autoptr(QStoreIter) iter = scan_prefix (store, id, by_index, prefix, n_prefix, FALSE, -1,
                                            error);
  g_autoptr(GPtrArray) keys = g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);
  g_autoptr(GError) local_error = NULL;
  QStoreTable *table;

  if (iter == NULL)
    return FALSE;
  while (qstore_iter_next (iter, &local_error))
    g_ptr_array_add (keys, by_index ? qstore_iter_get_value (iter) : qstore_iter_get_key (iter));
  if (local_error != NULL)
    {
      g_propagate_error (error, g_steal_pointer (&local_error));
      return FALSE;
    }
  g_clear_object (&iter);

  table = table_for (store, id, error);
  if (table == NULL)
    return FALSE;
  for (guint i = 0; i < keys->len; i++)
    {
      gsize len;
      const guint8 *key = g_bytes_get_data (g_ptr_array_index (keys, i), &len);

      if (!qstore_table_delete_key (table, key, len, error))
        return FALSE;
    }
  return TRUE;
}

/* Typed reads of stored values: anything else was written around the
 * window. */

static gboolean
not_what_the_window_wrote (QStoreUnsafeStore    *store,
                           QStoreUnsafeTableId   id,
                           guint                 column,
                           const char           *what,
                           GError              **error)
{
  g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_CORRUPT,
               _("Unsafe window “%s”: column “%s” of table “%s” holds a value that is "
               "not %s: the table was written around the window; rebuild the view"),
               store->window, specs[id].columns[column], store->names[id], what);
  return FALSE;
}

static gboolean
read_text (QStoreUnsafeStore    *store,
           QStoreUnsafeTableId   id,
           const QStoreValue    *values,
           guint                 column,
           gboolean              nullable,
           char                **out,
           GError              **error)
{
  const QStoreValue *value = &values[column];

  if (value->type == QSTORE_VALUE_NULL && nullable)
    {
      *out = NULL;
      return TRUE;
    }
  if (value->type != QSTORE_VALUE_TEXT)
    return not_what_the_window_wrote (store, id, column, "text", error);
  *out = g_strndup ((const char *) value->bytes.data, value->bytes.len);
  return TRUE;
}

static gboolean
read_integer (QStoreUnsafeStore    *store,
              QStoreUnsafeTableId   id,
              const QStoreValue    *values,
              guint                 column,
              gint64               *out,
              GError              **error)
{
  if (values[column].type != QSTORE_VALUE_INTEGER)
    return not_what_the_window_wrote (store, id, column, "an integer", error);
  *out = values[column].integer;
  return TRUE;
}

/* A SUID read back: the window orders by it, so a malformed one stops
 * the operation rather than being compared. */
static gboolean
check_stored_suid (QStoreUnsafeStore    *store,
                   QStoreUnsafeTableId   id,
                   guint                 column,
                   const char           *suid,
                   gsize                 len,
                   GError              **error)
{
  g_autoptr(GError) local_error = NULL;
  g_autofree char *text = NULL;
  gsize i;

  for (i = 0; i < len && g_ascii_isdigit (suid[i]); i++)
    ;
  if (len == QSTORE_SUID_LENGTH && i == len)
    return TRUE;

  text = g_strndup (suid, len);
  qstore_suid_validate (text, specs[id].columns[column], &local_error);
  g_set_error (error, QSTORE_UNSAFE_WINDOW_ERROR, QSTORE_UNSAFE_WINDOW_ERROR_INVALID_SUID,
               _("Unsafe window “%s”, table “%s”: %s (it was written around the window; "
               "rebuild the view)"), store->window, store->names[id],
               local_error != NULL ? local_error->message : "a SUID holds a NUL");
  return FALSE;
}

static gboolean
read_suid (QStoreUnsafeStore    *store,
           QStoreUnsafeTableId   id,
           const QStoreValue    *values,
           guint                 column,
           gboolean              empty_allowed,
           gboolean              nullable,
           char                **out,
           GError              **error)
{
  if (!read_text (store, id, values, column, nullable, out, error))
    return FALSE;
  if (*out == NULL || (empty_allowed && (*out)[0] == '\0') ||
      check_stored_suid (store, id, column, *out, values[column].bytes.len, error))
    return TRUE;
  g_clear_pointer (out, g_free);
  return FALSE;
}

/* Rows */

static QStoreUnsafeTableId
rows_table (gboolean safe)
{
  return safe ? QSTORE_UNSAFE_TABLE_SAFE_ROWS : QSTORE_UNSAFE_TABLE_ROWS;
}

static gboolean
decode_row (QStoreUnsafeStore      *store,
            gboolean                safe,
            const QStoreValue      *values,
            QStoreUnsafeRowRecord  *row,
            GError                **error)
{
  QStoreUnsafeTableId id = rows_table (safe);
  gint64 tombstone = 0;

  memset (row, 0, sizeof *row);
  if (!read_text (store, id, values, ROW_KEY, FALSE, &row->row_key, error) ||
      !read_text (store, id, values, ROW_VALUE, FALSE, &row->value_json, error) ||
      !read_integer (store, id, values, ROW_VERSION, &row->row_version, error) ||
      !read_suid (store, id, values, ROW_SOURCE_SUID, FALSE, FALSE, &row->source_suid, error) ||
      (!safe && !read_integer (store, id, values, ROW_TOMBSTONE, &tombstone, error)))
    {
      qstore_unsafe_row_record_clear (row);
      return FALSE;
    }
  row->tombstone = tombstone != 0;
  return TRUE;
}

gboolean
qstore_unsafe_store_get_row (QStoreUnsafeStore      *store,
                             gboolean                safe,
                             gint64                  generation,
                             const char             *row_key,
                             QStoreUnsafeRowRecord  *row,
                             gboolean               *found,
                             GError                **error)
{
  QStoreValue key[2] = { integer_value (generation), text_value (row_key) };
  QStoreValue values[MAX_COLUMNS];
  g_autoptr(GBytes) holder = NULL;

  if (!get_values (store, rows_table (safe), key, 2, values, &holder, found, error))
    return FALSE;
  return !*found || decode_row (store, safe, values, row, error);
}

gboolean
qstore_unsafe_store_put_row (QStoreUnsafeStore            *store,
                             gboolean                      safe,
                             gint64                        generation,
                             const QStoreUnsafeRowRecord  *row,
                             GError                      **error)
{
  QStoreValue values[MAX_COLUMNS] = {
    [ROW_GENERATION] = integer_value (generation),
    [ROW_KEY] = text_value (row->row_key),
    [ROW_VALUE] = text_value (row->value_json),
    [ROW_VERSION] = integer_value (row->row_version),
    [ROW_SOURCE_SUID] = text_value (row->source_suid),
    [ROW_TOMBSTONE] = integer_value (row->tombstone ? 1 : 0),
  };

  return write_values (store, rows_table (safe), values, QSTORE_CONFLICT_REPLACE, error);
}

gboolean
qstore_unsafe_store_delete_row (QStoreUnsafeStore  *store,
                                gboolean            safe,
                                gint64              generation,
                                const char         *row_key,
                                GError            **error)
{
  QStoreValue key[2] = { integer_value (generation), text_value (row_key) };

  return delete_values (store, rows_table (safe), key, 2, error);
}

QStoreIter *
qstore_unsafe_store_scan_rows (QStoreUnsafeStore  *store,
                               gboolean            safe,
                               gint64              generation,
                               GError            **error)
{
  QStoreValue prefix = integer_value (generation);

  return scan_prefix (store, rows_table (safe), FALSE, &prefix, 1, FALSE, -1, error);
}

gboolean
qstore_unsafe_store_read_row (QStoreUnsafeStore      *store,
                              gboolean                safe,
                              QStoreIter             *iter,
                              QStoreUnsafeRowRecord  *row,
                              GError                **error)
{
  QStoreTable *table = table_for (store, rows_table (safe), error);
  QStoreValue values[MAX_COLUMNS];
  gsize len;
  const guint8 *data;

  if (table == NULL)
    return FALSE;
  data = qstore_iter_peek_value (iter, &len);
  return qstore_table_decode_row (table, data, len, values, NULL, error) &&
         decode_row (store, safe, values, row, error);
}

gboolean
qstore_unsafe_store_peek_row (QStoreUnsafeStore    *store,
                              gboolean              safe,
                              QStoreIter           *iter,
                              QStoreUnsafeRowPeek  *peek,
                              GError              **error)
{
  QStoreUnsafeTableId id = rows_table (safe);
  QStoreTable *table = table_for (store, id, error);
  QStoreValue values[MAX_COLUMNS];
  gsize len;
  const guint8 *data;

  if (table == NULL)
    return FALSE;
  data = qstore_iter_peek_value (iter, &len);
  if (!qstore_table_decode_row (table, data, len, values, NULL, error))
    return FALSE;
  if (values[ROW_KEY].type != QSTORE_VALUE_TEXT)
    return not_what_the_window_wrote (store, id, ROW_KEY, "text", error);
  if (values[ROW_SOURCE_SUID].type != QSTORE_VALUE_TEXT)
    return not_what_the_window_wrote (store, id, ROW_SOURCE_SUID, "text", error);
  if (!safe && values[ROW_TOMBSTONE].type != QSTORE_VALUE_INTEGER)
    return not_what_the_window_wrote (store, id, ROW_TOMBSTONE, "an integer", error);
  if (!check_stored_suid (store, id, ROW_SOURCE_SUID,
                          (const char *) values[ROW_SOURCE_SUID].bytes.data,
                          values[ROW_SOURCE_SUID].bytes.len, error))
    return FALSE;

  peek->row_key = (const char *) values[ROW_KEY].bytes.data;
  peek->row_key_len = values[ROW_KEY].bytes.len;
  peek->source_suid = (const char *) values[ROW_SOURCE_SUID].bytes.data;
  peek->tombstone = !safe && values[ROW_TOMBSTONE].integer != 0;
  return TRUE;
}

/* Index entries */

gboolean
qstore_unsafe_store_add_index_entry (QStoreUnsafeStore  *store,
                                     gint64              generation,
                                     const char         *row_key,
                                     const char         *index_id,
                                     GVariant           *value,
                                     GError            **error)
{
  QStoreValue values[MAX_COLUMNS] = {
    [ENTRY_GENERATION] = integer_value (generation),
    [ENTRY_ROW_KEY] = text_value (row_key),
    [ENTRY_INDEX_ID] = text_value (index_id),
  };

  if (g_variant_is_of_type (value, G_VARIANT_TYPE_STRING))
    {
      values[ENTRY_VALUE_TYPE] = text_value ("text");
      values[ENTRY_VALUE] = text_value (g_variant_get_string (value, NULL));
    }
  else if (g_variant_is_of_type (value, G_VARIANT_TYPE_INT64))
    {
      values[ENTRY_VALUE_TYPE] = text_value ("integer");
      values[ENTRY_VALUE] = integer_value (g_variant_get_int64 (value));
    }
  else
    {
      g_assert (g_variant_is_of_type (value, G_VARIANT_TYPE_DOUBLE));
      values[ENTRY_VALUE_TYPE] = text_value ("real");
      values[ENTRY_VALUE].type = QSTORE_VALUE_REAL;
      values[ENTRY_VALUE].real = g_variant_get_double (value);
    }
  /* An entry the event lists twice is one entry. */
  return write_values (store, QSTORE_UNSAFE_TABLE_INDEX_ENTRIES, values,
                       QSTORE_CONFLICT_IGNORE, error);
}

gboolean
qstore_unsafe_store_delete_index_entries (QStoreUnsafeStore  *store,
                                          gint64              generation,
                                          const char         *row_key,
                                          GError            **error)
{
  QStoreValue prefix[2] = { integer_value (generation), text_value (row_key) };

  return delete_prefix (store, QSTORE_UNSAFE_TABLE_INDEX_ENTRIES, FALSE, prefix, 2, error);
}

/* Receipts */

static gboolean
decode_receipt (QStoreUnsafeStore    *store,
                const QStoreValue    *values,
                QStoreUnsafeReceipt  *receipt,
                GError              **error)
{
  QStoreUnsafeTableId id = QSTORE_UNSAFE_TABLE_RECEIPTS;

  memset (receipt, 0, sizeof *receipt);
  if (!read_text (store, id, values, RECEIPT_EVENT_ID, FALSE, &receipt->event_id, error) ||
      !read_suid (store, id, values, RECEIPT_SUID, FALSE, FALSE, &receipt->suid, error) ||
      !read_text (store, id, values, RECEIPT_OUTCOME, FALSE, &receipt->outcome, error) ||
      !read_integer (store, id, values, RECEIPT_OBSERVED_AT, &receipt->observed_at, error) ||
      !read_text (store, id, values, RECEIPT_MARKED_ROWS, TRUE, &receipt->marked_rows, error))
    {
      qstore_unsafe_receipt_clear (receipt);
      return FALSE;
    }
  return TRUE;
}

gboolean
qstore_unsafe_store_get_receipt (QStoreUnsafeStore    *store,
                                 const char           *event_id,
                                 QStoreUnsafeReceipt  *receipt,
                                 gboolean             *found,
                                 GError              **error)
{
  QStoreValue key = text_value (event_id);
  QStoreValue values[MAX_COLUMNS];
  g_autoptr(GBytes) holder = NULL;

  if (!get_values (store, QSTORE_UNSAFE_TABLE_RECEIPTS, &key, 1, values, &holder, found, error))
    return FALSE;
  return !*found || decode_receipt (store, values, receipt, error);
}

gboolean
qstore_unsafe_store_insert_receipt (QStoreUnsafeStore          *store,
                                    const QStoreUnsafeReceipt  *receipt,
                                    GError                    **error)
{
  QStoreValue values[MAX_COLUMNS] = {
    [RECEIPT_EVENT_ID] = text_value (receipt->event_id),
    [RECEIPT_SUID] = text_value (receipt->suid),
    [RECEIPT_OUTCOME] = text_value (receipt->outcome),
    [RECEIPT_OBSERVED_AT] = integer_value (receipt->observed_at),
    [RECEIPT_MARKED_ROWS] = text_value (receipt->marked_rows),
  };

  return write_values (store, QSTORE_UNSAFE_TABLE_RECEIPTS, values, QSTORE_CONFLICT_ABORT, error);
}

gboolean
qstore_unsafe_store_max_receipt_suid (QStoreUnsafeStore  *store,
                                      char              **suid,
                                      GError            **error)
{
  g_autoptr(QStoreIter) iter = NULL;
  g_autoptr(GError) local_error = NULL;
  QStoreTable *table;
  g_autoptr(GBytes) holder = NULL;
  QStoreValue values[MAX_COLUMNS];
  g_auto(QStoreUnsafeReceipt) receipt = { 0 };
  gsize len;
  const guint8 *key;

  *suid = NULL;
  iter = scan_prefix (store, QSTORE_UNSAFE_TABLE_RECEIPTS, TRUE, NULL, 0, TRUE, 1, error);
  if (iter == NULL)
    return FALSE;
  if (!qstore_iter_next (iter, &local_error))
    {
      if (local_error != NULL)
        {
          g_propagate_error (error, g_steal_pointer (&local_error));
          return FALSE;
        }
      *suid = g_strdup ("");
      return TRUE;
    }

  /* The index entry's value is the receipt's data key. */
  table = table_for (store, QSTORE_UNSAFE_TABLE_RECEIPTS, error);
  if (table == NULL)
    return FALSE;
  key = qstore_iter_peek_value (iter, &len);
  holder = qstore_table_get_row (table, key, len, &local_error);
  if (holder == NULL)
    {
      if (local_error != NULL)
        g_propagate_error (error, g_steal_pointer (&local_error));
      else
        g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_CORRUPT,
                     _("Unsafe window “%s”: an entry of index “%s_%s” points to no receipt"),
                     store->window, store->names[QSTORE_UNSAFE_TABLE_RECEIPTS],
                     specs[QSTORE_UNSAFE_TABLE_RECEIPTS].index_suffix);
      return FALSE;
    }
  key = g_bytes_get_data (holder, &len);
  if (!qstore_table_decode_row (table, key, len, values, NULL, error) ||
      !decode_receipt (store, values, &receipt, error))
    return FALSE;
  *suid = g_steal_pointer (&receipt.suid);
  return TRUE;
}

gboolean
qstore_unsafe_store_delete_receipts_of_suid (QStoreUnsafeStore  *store,
                                             const char         *suid,
                                             GError            **error)
{
  QStoreValue prefix = text_value (suid);

  return delete_prefix (store, QSTORE_UNSAFE_TABLE_RECEIPTS, TRUE, &prefix, 1, error);
}

/* Wait receipts */

gboolean
qstore_unsafe_store_add_wait_receipt (QStoreUnsafeStore  *store,
                                      gint64              generation,
                                      gint64              definition_version,
                                      const char         *event_id,
                                      const char         *suid,
                                      gint64              observed_at,
                                      GError            **error)
{
  QStoreValue values[MAX_COLUMNS] = {
    [WAIT_GENERATION] = integer_value (generation),
    [WAIT_SUID] = text_value (suid),
    [WAIT_DEFINITION] = integer_value (definition_version),
    [WAIT_EVENT_ID] = text_value (event_id),
    [WAIT_OBSERVED_AT] = integer_value (observed_at),
  };

  return write_values (store, QSTORE_UNSAFE_TABLE_WAIT_RECEIPTS, values,
                       QSTORE_CONFLICT_IGNORE, error);
}

gboolean
qstore_unsafe_store_has_wait_receipt (QStoreUnsafeStore  *store,
                                      gint64              generation,
                                      gint64              definition_version,
                                      const char         *event_id,
                                      const char         *suid,
                                      gboolean           *found,
                                      GError            **error)
{
  QStoreValue key[4] = {
    [WAIT_GENERATION] = integer_value (generation),
    [WAIT_SUID] = text_value (suid),
    [WAIT_DEFINITION] = integer_value (definition_version),
    [WAIT_EVENT_ID] = text_value (event_id),
  };
  QStoreValue values[MAX_COLUMNS];
  g_autoptr(GBytes) holder = NULL;

  return get_values (store, QSTORE_UNSAFE_TABLE_WAIT_RECEIPTS, key, 4, values, &holder, found,
                     error);
}

gboolean
qstore_unsafe_store_delete_wait_receipts (QStoreUnsafeStore  *store,
                                          gint64              generation,
                                          const char         *suid,
                                          GError            **error)
{
  QStoreValue prefix[2] = { integer_value (generation), text_value (suid) };

  return delete_prefix (store, QSTORE_UNSAFE_TABLE_WAIT_RECEIPTS, FALSE, prefix, 2, error);
}

/* Markers */

gboolean
qstore_unsafe_store_add_marker (QStoreUnsafeStore  *store,
                                gint64              generation,
                                const char         *row_key,
                                const char         *event_id,
                                const char         *suid,
                                const char         *reason,
                                GError            **error)
{
  QStoreValue values[MAX_COLUMNS] = {
    [MARKER_GENERATION] = integer_value (generation),
    [MARKER_ROW_KEY] = text_value (row_key),
    [MARKER_EVENT_ID] = text_value (event_id),
    [MARKER_SUID] = text_value (suid),
    [MARKER_REASON] = text_value (reason),
  };

  return write_values (store, QSTORE_UNSAFE_TABLE_MARKERS, values, QSTORE_CONFLICT_IGNORE, error);
}

gboolean
qstore_unsafe_store_delete_marker (QStoreUnsafeStore  *store,
                                   gint64              generation,
                                   const char         *row_key,
                                   const char         *event_id,
                                   GError            **error)
{
  QStoreValue key[3] = { integer_value (generation), text_value (row_key), text_value (event_id) };

  return delete_values (store, QSTORE_UNSAFE_TABLE_MARKERS, key, 3, error);
}

gboolean
qstore_unsafe_store_delete_markers_of_row (QStoreUnsafeStore  *store,
                                           gint64              generation,
                                           const char         *row_key,
                                           GError            **error)
{
  QStoreValue prefix[2] = { integer_value (generation), text_value (row_key) };

  return delete_prefix (store, QSTORE_UNSAFE_TABLE_MARKERS, FALSE, prefix, 2, error);
}

/* Arrivals */

gboolean
qstore_unsafe_store_get_arrival (QStoreUnsafeStore    *store,
                                 gint64                generation,
                                 QStoreUnsafeArrival  *arrival,
                                 gboolean             *found,
                                 GError              **error)
{
  QStoreUnsafeTableId id = QSTORE_UNSAFE_TABLE_ARRIVALS;
  QStoreValue key = integer_value (generation);
  QStoreValue values[MAX_COLUMNS];
  g_autoptr(GBytes) holder = NULL;
  gint64 rebuild = 0;

  memset (arrival, 0, sizeof *arrival);
  if (!get_values (store, id, &key, 1, values, &holder, found, error))
    return FALSE;
  if (!*found)
    return TRUE;

  if (!read_suid (store, id, values, ARRIVAL_SAFE_HEAD, TRUE, FALSE, &arrival->safe_head, error) ||
      !read_suid (store, id, values, ARRIVAL_WATERMARK, TRUE, FALSE, &arrival->arrival_watermark,
                  error) ||
      !read_text (store, id, values, ARRIVAL_BEHIND_EVENT_ID, TRUE, &arrival->behind_event_id,
                  error) ||
      !read_suid (store, id, values, ARRIVAL_BEHIND_SUID, FALSE, TRUE, &arrival->behind_suid,
                  error) ||
      !read_integer (store, id, values, ARRIVAL_REBUILD, &rebuild, error))
    {
      qstore_unsafe_arrival_clear (arrival);
      return FALSE;
    }
  arrival->rebuild_required = rebuild != 0;
  return TRUE;
}

gboolean
qstore_unsafe_store_put_arrival (QStoreUnsafeStore          *store,
                                 gint64                      generation,
                                 const QStoreUnsafeArrival  *arrival,
                                 GError                    **error)
{
  QStoreValue values[MAX_COLUMNS] = {
    [ARRIVAL_GENERATION] = integer_value (generation),
    [ARRIVAL_SAFE_HEAD] = text_value (arrival->safe_head),
    [ARRIVAL_WATERMARK] = text_value (arrival->arrival_watermark),
    [ARRIVAL_BEHIND_EVENT_ID] = text_value (arrival->behind_event_id),
    [ARRIVAL_BEHIND_SUID] = text_value (arrival->behind_suid),
    [ARRIVAL_REBUILD] = integer_value (arrival->rebuild_required ? 1 : 0),
  };

  return write_values (store, QSTORE_UNSAFE_TABLE_ARRIVALS, values, QSTORE_CONFLICT_REPLACE,
                       error);
}

/* The kick */

gboolean
qstore_unsafe_store_get_kick (QStoreUnsafeStore  *store,
                              QStoreUnsafeKick   *kick,
                              gboolean           *found,
                              GError            **error)
{
  QStoreUnsafeTableId id = QSTORE_UNSAFE_TABLE_KICKS;
  QStoreValue key = integer_value (SINGLE_SLOT);
  QStoreValue values[MAX_COLUMNS];
  g_autoptr(GBytes) holder = NULL;
  gint64 dirty = 0;

  memset (kick, 0, sizeof *kick);
  if (!get_values (store, id, &key, 1, values, &holder, found, error))
    return FALSE;
  if (!*found)
    return TRUE;

  if (!read_suid (store, id, values, KICK_TARGET, FALSE, FALSE, &kick->target_suid, error) ||
      !read_integer (store, id, values, KICK_DIRTY, &dirty, error) ||
      !read_text (store, id, values, KICK_LEASE_OWNER, TRUE, &kick->lease_owner, error) ||
      !read_integer (store, id, values, KICK_LEASE_UNTIL, &kick->lease_until, error))
    {
      qstore_unsafe_kick_clear (kick);
      return FALSE;
    }
  kick->dirty = dirty != 0;
  return TRUE;
}

gboolean
qstore_unsafe_store_put_kick (QStoreUnsafeStore       *store,
                              const QStoreUnsafeKick  *kick,
                              GError                 **error)
{
  QStoreValue values[MAX_COLUMNS] = {
    [KICK_SLOT] = integer_value (SINGLE_SLOT),
    [KICK_TARGET] = text_value (kick->target_suid),
    [KICK_DIRTY] = integer_value (kick->dirty ? 1 : 0),
    [KICK_LEASE_OWNER] = text_value (kick->lease_owner),
    [KICK_LEASE_UNTIL] = integer_value (kick->lease_until),
  };

  return write_values (store, QSTORE_UNSAFE_TABLE_KICKS, values, QSTORE_CONFLICT_REPLACE, error);
}

/* Generations */

gboolean
qstore_unsafe_store_get_definition (QStoreUnsafeStore  *store,
                                    gint64              generation,
                                    gint64             *definition_version,
                                    gboolean           *found,
                                    GError            **error)
{
  QStoreValue key = integer_value (generation);
  QStoreValue values[MAX_COLUMNS];
  g_autoptr(GBytes) holder = NULL;

  if (!get_values (store, QSTORE_UNSAFE_TABLE_GENERATIONS, &key, 1, values, &holder, found,
                   error))
    return FALSE;
  return !*found || read_integer (store, QSTORE_UNSAFE_TABLE_GENERATIONS, values, GEN_DEFINITION,
                                  definition_version, error);
}

gboolean
qstore_unsafe_store_put_definition (QStoreUnsafeStore  *store,
                                    gint64              generation,
                                    gint64              definition_version,
                                    GError            **error)
{
  QStoreValue values[MAX_COLUMNS] = {
    [GEN_GENERATION] = integer_value (generation),
    [GEN_DEFINITION] = integer_value (definition_version),
  };

  return write_values (store, QSTORE_UNSAFE_TABLE_GENERATIONS, values, QSTORE_CONFLICT_REPLACE,
                       error);
}

gboolean
qstore_unsafe_store_get_active (QStoreUnsafeStore  *store,
                                gint64             *generation,
                                gboolean           *found,
                                GError            **error)
{
  QStoreValue key = integer_value (SINGLE_SLOT);
  QStoreValue values[MAX_COLUMNS];
  g_autoptr(GBytes) holder = NULL;

  if (!get_values (store, QSTORE_UNSAFE_TABLE_ACTIVE, &key, 1, values, &holder, found, error))
    return FALSE;
  return !*found || read_integer (store, QSTORE_UNSAFE_TABLE_ACTIVE, values, ACTIVE_GENERATION,
                                  generation, error);
}

gboolean
qstore_unsafe_store_put_active (QStoreUnsafeStore  *store,
                                gint64              generation,
                                GError            **error)
{
  QStoreValue values[MAX_COLUMNS] = {
    [ACTIVE_SLOT] = integer_value (SINGLE_SLOT),
    [ACTIVE_GENERATION] = integer_value (generation),
  };

  return write_values (store, QSTORE_UNSAFE_TABLE_ACTIVE, values, QSTORE_CONFLICT_REPLACE, error);
}
