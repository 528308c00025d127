/* qstore-mview-derive.c: what a change to a source row asks of a view
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "qstore-affinity-private.h"
#include "qstore-error.h"
#include "qstore-mview-derive-private.h"

/* The strategies of a plan (qstore-mview-plan.c) as a change sees them:
 * per key, a change touches the partition of the key it had and, when the
 * key moved or the row is new, the one it has; a group recompute touches
 * the old and new groups alike; a full rebuild has no partitions. */

gboolean
qstore_mview_plan_rebuilds (const Plan *plan)
{
  return plan->strategy == QSTORE_MATERIALIZED_VIEW_STRATEGY_FULL_REBUILD ||
         plan->key_out->len == 0 || plan->key_out->len > QSTORE_MVIEW_MAX_KEY;
}

QStoreMViewTouches
qstore_mview_plan_touches (const Plan         *plan,
                           const QStoreValue  *old_values,
                           const QStoreValue  *new_values,
                           QStoreValue        *old_key,
                           QStoreValue        *new_key)
{
  guint n_key = plan->key_out->len;
  QStoreMViewTouches touches = QSTORE_MVIEW_TOUCHES_NOTHING;

  g_assert (!qstore_mview_plan_rebuilds (plan));

  for (guint k = 0; k < n_key; k++)
    {
      guint column = g_array_index (plan->key_src, guint, k);

      if (old_values != NULL)
        old_key[k] = old_values[column];
      if (new_values != NULL)
        new_key[k] = new_values[column];
    }
  if (old_values != NULL)
    touches |= QSTORE_MVIEW_TOUCHES_OLD;
  if (new_values != NULL &&
      (old_values == NULL || !qstore_mview_rows_equal (old_key, new_key, n_key)))
    touches |= QSTORE_MVIEW_TOUCHES_NEW;
  return touches;
}

static gboolean
encode_key_at (const Plan         *plan,
               const QStoreValue  *values,
               gboolean            from_row,
               GByteArray         *out,
               GError            **error)
{
  for (guint k = 0; k < plan->key_out->len; k++)
    {
      guint j = g_array_index (plan->key_out, guint, k);
      const PlanColumn *column = g_ptr_array_index (plan->columns, j);

      if (!qstore_codec_append_key_value (out, from_row ? &values[j] : &values[k],
                                          column->collation, FALSE, error))
        return FALSE;
    }
  return TRUE;
}

gboolean
qstore_mview_plan_encode_key (const Plan         *plan,
                              const QStoreValue  *key_values,
                              GByteArray         *out,
                              GError            **error)
{
  return encode_key_at (plan, key_values, FALSE, out, error);
}

gboolean
qstore_mview_plan_encode_row_key (const Plan         *plan,
                                  const QStoreValue  *row_values,
                                  GByteArray         *out,
                                  GError            **error)
{
  return encode_key_at (plan, row_values, TRUE, out, error);
}

/* Values */

gboolean
qstore_mview_values_equal (const QStoreValue *a,
                           const QStoreValue *b)
{
  if (a->type != b->type)
    return FALSE;
  switch (a->type)
    {
    case QSTORE_VALUE_NULL:
      return TRUE;
    case QSTORE_VALUE_INTEGER:
      return a->integer == b->integer;
    case QSTORE_VALUE_REAL:
      return memcmp (&a->real, &b->real, sizeof a->real) == 0;
    case QSTORE_VALUE_TEXT:
    case QSTORE_VALUE_BLOB:
    default:
      return a->bytes.len == b->bytes.len &&
             (a->bytes.len == 0 || memcmp (a->bytes.data, b->bytes.data, a->bytes.len) == 0);
    }
}

gboolean
qstore_mview_rows_equal (const QStoreValue *a,
                         const QStoreValue *b,
                         guint              n)
{
  for (guint i = 0; i < n; i++)
    if (!qstore_mview_values_equal (&a[i], &b[i]))
      return FALSE;
  return TRUE;
}

gboolean
qstore_mview_has_null (const QStoreValue *values,
                       guint              n)
{
  for (guint i = 0; i < n; i++)
    if (values[i].type == QSTORE_VALUE_NULL)
      return TRUE;
  return FALSE;
}

GBytes *
qstore_mview_encode_values (const QStoreValue *values,
                            guint              n)
{
  g_autoptr(GByteArray) buffer = g_byte_array_new ();

  qstore_row_encode (buffer, values, n);
  return g_byte_array_free_to_bytes (g_steal_pointer (&buffer));
}

gboolean
qstore_mview_decode_values (GBytes       *row,
                            QStoreValue  *values,
                            guint         n,
                            GError      **error)
{
  QStoreRowReader reader;
  gsize len;
  const guint8 *data = g_bytes_get_data (row, &len);
  guint n_values;

  if (!qstore_row_reader_init (&reader, data, len, &n_values, error))
    return FALSE;
  if (n_values != n)
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_CORRUPT,
                   "A row of %u values was read where %u were expected", n_values, n);
      return FALSE;
    }
  return qstore_row_reader_read (&reader, values, n, error);
}

void
qstore_mview_values_from_statement (sqlite3_stmt *stmt,
                                    QStoreValue  *values,
                                    guint         n)
{
  for (guint i = 0; i < n; i++)
    qstore_value_from_sqlite (sqlite3_column_value (stmt, (int) i), &values[i]);
}
