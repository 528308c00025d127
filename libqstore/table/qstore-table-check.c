/* qstore-table-check.c: a table's rows against its key, indexes and row count
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "qstore-coordinator-private.h"
#include "qstore-error.h"
#include "qstore-i18n-private.h"
#include "qstore-table-private.h"

/* Each row must decode, sit under the key its values give, meet its CHECK
 * constraints and have its entry, naming it, in every index that holds
 * it; an index that holds more entries than that has entries pointing
 * nowhere; and the row count kept in the statistics must be the rows
 * counted. All of it
 * is read under one snapshot when the provider has them, and nothing is
 * written. */

/* Problems listed per table before the rest is only counted. */
#define MAX_PROBLEMS 100

typedef struct
{
  QStoreTable       *table;
  QStoreCheckReport *report;
  QStoreSnapshot    *snapshot;
  guint              n_problems;
} Check;

static void problem (Check        *check,
                     const char   *scope,
                     const char   *object,
                     const guint8 *key,
                     gsize         key_len,
                     const char   *format,
                     ...) G_GNUC_PRINTF (6, 7);

static void
problem (Check        *check,
         const char   *scope,
         const char   *object,
         const guint8 *key,
         gsize         key_len,
         const char   *format,
         ...)
{
  g_autoptr(GBytes) bytes = key != NULL ? g_bytes_new (key, key_len) : NULL;
  g_autofree char *message = NULL;
  va_list args;

  if (check->n_problems++ >= MAX_PROBLEMS)
    return;
  va_start (args, format);
  message = g_strdup_vprintf (format, args);
  va_end (args);
  qstore_check_report_add_problem (check->report, scope, object, bytes, message);
}

static QStoreIter *
iterate (Check     *check,
         QStoreKV  *store,
         GError   **error)
{
  g_autoptr(QStoreBounds) all = qstore_bounds_new ();

  return check->snapshot != NULL ? qstore_snapshot_iterate (check->snapshot, store, all, error)
                                 : qstore_kv_iterate (store, all, error);
}

static GBytes *
get (Check         *check,
     QStoreKV      *store,
     const guint8  *key,
     gsize          key_len,
     GError       **error)
{
  return check->snapshot != NULL ? qstore_snapshot_get (check->snapshot, store, key, key_len, error)
                                 : qstore_kv_get (store, key, key_len, error);
}

/* A row's key is what its primary key encodes to, and when that holds a
 * NULL, followed by the suffix that keeps such rows apart. */
static gboolean
key_matches (QStoreTable       *self,
             const QStoreValue *values,
             const GByteArray  *encoded,
             const guint8      *key,
             gsize              key_len)
{
  gboolean has_null = FALSE;

  if (self->rowid_position < 0)
    for (guint i = 0; i < self->schema->pk->len; i++)
      has_null = has_null ||
                 values[g_array_index (self->schema->pk, QStoreKeyPart, i).column].type ==
                 QSTORE_VALUE_NULL;
  if (has_null ? key_len <= encoded->len : key_len != encoded->len)
    return FALSE;
  return memcmp (encoded->data, key, encoded->len) == 0;
}

/* One stored row: its key, its constraints, its index entries. */
static gboolean
check_row (Check         *check,
           const guint8  *key,
           gsize          key_len,
           const guint8  *row,
           gsize          row_len,
           QStoreValue   *values,
           gboolean      *in_index,
           guint64       *expected,
           GByteArray    *scratch,
           GError       **error)
{
  QStoreTable *self = check->table;
  const char *name = self->schema->name;
  g_autoptr(GError) local_error = NULL;

  if (!qstore_table_read_stored_row (self, row, row_len, values, &local_error))
    {
      problem (check, QSTORE_CHECK_SCOPE_TABLE, name, key, key_len,
               _("A row does not decode: %s"), local_error->message);
      return TRUE;
    }

  g_byte_array_set_size (scratch, 0);
  if (!qstore_table_append_data_key (self, values, scratch, &local_error))
    {
      problem (check, QSTORE_CHECK_SCOPE_TABLE, name, key, key_len,
               _("A row's primary key does not encode: %s"), local_error->message);
      return TRUE;
    }
  if (!key_matches (self, values, scratch, key, key_len))
    problem (check, QSTORE_CHECK_SCOPE_TABLE, name, key, key_len,
             _("A row is stored under another key than its primary key gives"));

  if (!qstore_table_evaluate_row (self, values, in_index, &local_error))
    {
      problem (check, QSTORE_CHECK_SCOPE_TABLE, name, key, key_len,
               _("A row breaks a constraint of the table: %s"), local_error->message);
      return TRUE;
    }

  for (guint i = 0; i < self->index_stores->len; i++)
    {
      const QStoreIndexSchema *index = qstore_table_index_at (self, i);
      g_autoptr(GBytes) found = NULL;

      if (!in_index[i])
        continue;
      expected[i]++;
      if (!qstore_table_index_entry_key (self, i, values, key, key_len, scratch, &local_error))
        {
          problem (check, QSTORE_CHECK_SCOPE_INDEX, index->name, key, key_len,
                   _("A row's entry does not encode: %s"), local_error->message);
          g_clear_error (&local_error);
          continue;
        }
      found = get (check, g_ptr_array_index (self->index_stores, i), scratch->data,
                   scratch->len, error);
      if (found == NULL && error != NULL && *error != NULL)
        return FALSE;
      if (found == NULL)
        problem (check, QSTORE_CHECK_SCOPE_INDEX, index->name, key, key_len,
                 _("A row of table “%s” has no entry in the index"), name);
      /* The entry's value is the data key a walk of the index reads the
       * row by. */
      else if (g_bytes_get_size (found) != key_len ||
               memcmp (g_bytes_get_data (found, NULL), key, key_len) != 0)
        problem (check, QSTORE_CHECK_SCOPE_INDEX, index->name, key, key_len,
                 _("The index entry of a row of table “%s” names another row"), name);
    }
  return TRUE;
}

static gboolean
count_entries (Check     *check,
               QStoreKV  *store,
               guint64   *n_entries,
               GError   **error)
{
  g_autoptr(QStoreIter) iter = iterate (check, store, error);
  g_autoptr(GError) local_error = NULL;

  *n_entries = 0;
  if (iter == NULL)
    return FALSE;
  while (qstore_iter_next (iter, &local_error))
    (*n_entries)++;
  if (local_error != NULL)
    {
      g_propagate_error (error, g_steal_pointer (&local_error));
      return FALSE;
    }
  return TRUE;
}

static gboolean
check_table (Check   *check,
             GError **error)
{
  QStoreTable *self = check->table;
  const char *name = self->schema->name;
  guint n_indexes = self->index_stores->len;
  g_autofree QStoreValue *values = g_new0 (QStoreValue, MAX (self->n_values, 1));
  g_autofree gboolean *in_index = g_new0 (gboolean, MAX (n_indexes, 1));
  g_autofree guint64 *expected = g_new0 (guint64, MAX (n_indexes, 1));
  g_autoptr(GByteArray) scratch = g_byte_array_new ();
  g_autoptr(QStoreIter) rows = NULL;
  g_autoptr(GError) local_error = NULL;
  guint64 n_rows = 0;
  gint64 counted;

  rows = iterate (check, self->data_store, error);
  if (rows == NULL)
    return FALSE;
  while (qstore_iter_next (rows, &local_error))
    {
      gsize key_len, row_len;
      const guint8 *key = qstore_iter_peek_key (rows, &key_len);
      const guint8 *row = qstore_iter_peek_value (rows, &row_len);

      n_rows++;
      if (!check_row (check, key, key_len, row, row_len, values, in_index, expected, scratch,
                      error))
        return FALSE;
    }
  if (local_error != NULL)
    {
      g_propagate_error (error, g_steal_pointer (&local_error));
      return FALSE;
    }
  qstore_check_report_add_checked (check->report, QSTORE_CHECK_SCOPE_TABLE, name, n_rows);

  for (guint i = 0; i < n_indexes; i++)
    {
      const QStoreIndexSchema *index = qstore_table_index_at (self, i);
      guint64 n_entries;

      if (!count_entries (check, g_ptr_array_index (self->index_stores, i), &n_entries, error))
        return FALSE;
      qstore_check_report_add_checked (check->report, QSTORE_CHECK_SCOPE_INDEX, index->name,
                                       n_entries);
      if (n_entries > expected[i])
        problem (check, QSTORE_CHECK_SCOPE_INDEX, index->name, NULL, 0,
                 "The index holds %" G_GUINT64_FORMAT " entries for %" G_GUINT64_FORMAT
                 " rows of table “%s”: %" G_GUINT64_FORMAT " point to no row; "
                 "REINDEX %s rebuilds it", n_entries, expected[i], name,
                 n_entries - expected[i], index->name);
    }

  counted = qstore_coordinator_get_row_count (self->coordinator, self->schema->schema, name);
  if (counted != (gint64) n_rows)
    problem (check, QSTORE_CHECK_SCOPE_TABLE, name, NULL, 0,
             "The statistics count %" G_GINT64_FORMAT " rows, the table holds %"
             G_GUINT64_FORMAT, counted, n_rows);

  if (check->n_problems > MAX_PROBLEMS)
    {
      g_autofree char *note = g_strdup_printf (_("Table “%s”: %u more problems were not listed"),
                                               name, check->n_problems - MAX_PROBLEMS);

      qstore_check_report_add_note (check->report, note);
    }
  return TRUE;
}

/**
 * qstore_table_check:
 * @self: a #QStoreTable
 * @report: the report to add what is found to
 * @error: return location for a #GError
 *
 * Checks the table without writing: every row decodes, is stored under
 * the key its primary key gives and meets the table's CHECK constraints;
 * every index holds exactly one entry for each row it should hold (a
 * partial index, those its predicate admits); and the row count in the
 * statistics is the number of rows. What is wrong goes to @report as
 * problems of scope %QSTORE_CHECK_SCOPE_TABLE or %QSTORE_CHECK_SCOPE_INDEX
 * (the first hundred per table; the rest is counted in a note), and what
 * was checked as checked items.
 *
 * Everything is read in one snapshot of the store when its provider has
 * them; run it outside a transaction.
 *
 * Returns: %FALSE with @error set when the table could not be read to
 *   the end (the report then holds what was found until then)
 */
gboolean
qstore_table_check (QStoreTable        *self,
                    QStoreCheckReport  *report,
                    GError            **error)
{
  Check check = { self, report, NULL, 0 };
  guint64 serial;
  gboolean ok;

  g_return_val_if_fail (QSTORE_IS_TABLE (self), FALSE);
  g_return_val_if_fail (QSTORE_IS_CHECK_REPORT (report), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (qstore_coordinator_in_transaction (self->coordinator))
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                   _("Table “%s” is checked outside a transaction: commit or roll back first"),
                   self->schema->name);
      return FALSE;
    }
  check.snapshot = qstore_coordinator_hold_snapshot (self->coordinator, TRUE, &serial, error);
  if (check.snapshot == NULL && error != NULL && *error != NULL)
    return FALSE;
  ok = check_table (&check, error);
  if (check.snapshot != NULL)
    qstore_coordinator_release_snapshot (self->coordinator, check.snapshot);
  return ok;
}
