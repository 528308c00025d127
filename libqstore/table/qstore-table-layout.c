/* qstore-table-layout.c: a table's keys, index entries and stored rows
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "qstore-error.h"
#include "qstore-i18n-private.h"
#include "qstore-table-private.h"

/* Physical layout (see DESIGN §3): the data key is the primary key, each
 * column encoded under its collation and direction, or the encoded rowid;
 * the value is every column in declaration order, followed by the rowid
 * when the table has no INTEGER PRIMARY KEY to hold it. An index entry's
 * key is its columns followed by the data key, and its value the data key.
 *
 * SQLite lets the PRIMARY KEY columns of a rowid table (every qstore table)
 * hold NULL, and NULLs are distinct there as in UNIQUE. A row with a NULL
 * in its primary key therefore gets a suffix after the encoded key: an
 * encoded integer, one more than the largest suffix already under the same
 * encoded key (1 for the first). Such rows never collide, sort by their key
 * columns (NULL first) as in SQLite, and are never found by a point read of
 * their key columns, as `= NULL` never holds. A row keeps its suffix while
 * its key columns stay the same; the suffix lives in the key only (index
 * entries end with the whole data key, suffix included). */

/* The smallest key above every key that starts with @prefix, or FALSE when
 * there is none (the prefix is all 0xff). */
gboolean
qstore_table_prefix_successor (const guint8 *prefix,
                               gsize         len,
                               GByteArray   *out)
{
  while (len > 0 && prefix[len - 1] == 0xff)
    len--;
  if (len == 0)
    return FALSE;

  g_byte_array_set_size (out, 0);
  g_byte_array_append (out, prefix, len);
  out->data[len - 1]++;
  return TRUE;
}

/* Appends the data key of a stored row's values (n_values of them). */
gboolean
qstore_table_append_data_key (QStoreTable        *self,
                              const QStoreValue  *values,
                              GByteArray         *out,
                              GError            **error)
{
  QStoreTableSchema *schema = self->schema;

  if (self->rowid_position >= 0)
    {
      g_assert (values[self->rowid_position].type == QSTORE_VALUE_INTEGER);
      qstore_codec_append_integer (out, values[self->rowid_position].integer, FALSE);
      return TRUE;
    }

  for (guint i = 0; i < schema->pk->len; i++)
    {
      const QStoreKeyPart *part = &g_array_index (schema->pk, QStoreKeyPart, i);

      if (!qstore_codec_append_key_value (out, &values[part->column], part->collation,
                                          part->descending, error))
        {
          g_prefix_error (error, _("Table “%s”, column “%s”: "), schema->name,
                          qstore_table_column_at (self, part->column)->name);
          return FALSE;
        }
    }
  return TRUE;
}

/* Appends the index columns of @values; *has_null says whether one of
 * them is NULL (NULLs never conflict in a UNIQUE index). */
gboolean
qstore_table_append_index_columns (QStoreTable        *self,
                                   guint               index,
                                   const QStoreValue  *values,
                                   GByteArray         *out,
                                   gboolean           *has_null,
                                   GError            **error)
{
  const QStoreIndexSchema *schema = qstore_table_index_at (self, index);

  if (has_null != NULL)
    *has_null = FALSE;

  for (guint i = 0; i < schema->parts->len; i++)
    {
      const QStoreKeyPart *part = &g_array_index (schema->parts, QStoreKeyPart, i);
      const QStoreValue *value = &values[part->column];

      if (value->type == QSTORE_VALUE_NULL && has_null != NULL)
        *has_null = TRUE;
      if (!qstore_codec_append_key_value (out, value, part->collation,
                                          part->descending, error))
        {
          g_prefix_error (error, _("Index “%s” of table “%s”, column “%s”: "),
                          schema->name, self->schema->name,
                          qstore_table_column_at (self, part->column)->name);
          return FALSE;
        }
    }
  return TRUE;
}

gboolean
qstore_table_index_entry_key (QStoreTable        *self,
                              guint               index,
                              const QStoreValue  *values,
                              const guint8       *data_key,
                              gsize               data_key_len,
                              GByteArray         *out,
                              GError            **error)
{
  g_byte_array_set_size (out, 0);
  if (!qstore_table_append_index_columns (self, index, values, out, NULL, error))
    return FALSE;
  g_byte_array_append (out, data_key, data_key_len);
  return TRUE;
}

/* Decodes a stored row into @values (n_values slots), borrowing from @row. */
gboolean
qstore_table_read_stored_row (QStoreTable   *self,
                              const guint8  *row,
                              gsize          row_len,
                              QStoreValue   *values,
                              GError       **error)
{
  QStoreRowReader reader;
  guint n;

  if (!qstore_row_reader_init (&reader, row, row_len, &n, error))
    goto corrupt;

  if (n != self->n_values)
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_CORRUPT,
                   _("A row of table “%s” holds %u values where %u are "
                   "expected: the data store does not match the table's "
                   "schema"), self->schema->name, n, self->n_values);
      return FALSE;
    }

  if (!qstore_row_reader_read (&reader, values, n, error))
    goto corrupt;

  if (self->rowid_position >= 0 &&
      values[self->rowid_position].type != QSTORE_VALUE_INTEGER)
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_CORRUPT,
                   _("A row of table “%s” has no integer rowid: the data store "
                   "does not match the table's schema"), self->schema->name);
      return FALSE;
    }
  return TRUE;

corrupt:
  g_prefix_error (error, _("Table “%s”: "), self->schema->name);
  return FALSE;
}

gboolean
qstore_table_decode_row (QStoreTable   *self,
                         const guint8  *row,
                         gsize          row_len,
                         QStoreValue   *values,
                         gint64        *rowid,
                         GError       **error)
{
  guint n_columns;

  g_return_val_if_fail (QSTORE_IS_TABLE (self), FALSE);
  g_return_val_if_fail (row != NULL || row_len == 0, FALSE);
  g_return_val_if_fail (values != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  n_columns = self->schema->columns->len;
  if (rowid != NULL)
    *rowid = 0;

  if (self->n_values == n_columns)
    {
      if (!qstore_table_read_stored_row (self, row, row_len, values, error))
        return FALSE;
    }
  else
    {
      g_autofree QStoreValue *all = g_new (QStoreValue, self->n_values);

      if (!qstore_table_read_stored_row (self, row, row_len, all, error))
        return FALSE;
      memcpy (values, all, n_columns * sizeof (QStoreValue));
      if (rowid != NULL)
        *rowid = all[self->rowid_position].integer;
      return TRUE;
    }

  if (rowid != NULL && self->rowid_position >= 0)
    *rowid = values[self->rowid_position].integer;
  return TRUE;
}

gboolean
qstore_table_encode_key (QStoreTable        *self,
                         const QStoreValue  *values,
                         GByteArray         *out,
                         GError            **error)
{
  QStoreTableSchema *schema;

  g_return_val_if_fail (QSTORE_IS_TABLE (self), FALSE);
  g_return_val_if_fail (values != NULL, FALSE);
  g_return_val_if_fail (out != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  schema = self->schema;
  g_byte_array_set_size (out, 0);

  if (qstore_table_schema_is_rowid_table (schema))
    {
      if (schema->rowid_column < 0)
        {
          g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                       _("Table “%s” has no PRIMARY KEY: its rows are keyed by "
                       "their rowid, which the row values do not hold"),
                       schema->name);
          return FALSE;
        }
      if (values[schema->rowid_column].type != QSTORE_VALUE_INTEGER)
        {
          g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                       "datatype mismatch: column “%s” of table “%s” is an "
                       "INTEGER PRIMARY KEY and holds integers only",
                       qstore_table_column_at (self, schema->rowid_column)->name, schema->name);
          return FALSE;
        }
      qstore_codec_append_integer (out, values[schema->rowid_column].integer, FALSE);
      return TRUE;
    }

  return qstore_table_append_data_key (self, values, out, error);
}

gboolean
qstore_table_encode_key_prefix (QStoreTable        *self,
                                int                 index,
                                const QStoreValue  *values,
                                guint               n_parts,
                                GByteArray         *out,
                                GError            **error)
{
  QStoreTableSchema *schema;
  GArray *parts;

  g_return_val_if_fail (QSTORE_IS_TABLE (self), FALSE);
  g_return_val_if_fail (index >= -1 && index < (int) self->schema->indexes->len, FALSE);
  g_return_val_if_fail (values != NULL || n_parts == 0, FALSE);
  g_return_val_if_fail (out != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  schema = self->schema;
  g_byte_array_set_size (out, 0);

  if (index < 0 && qstore_table_schema_is_rowid_table (schema))
    {
      /* The key of a rowid table has one part, the rowid. */
      if (n_parts > 1)
        {
          g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                       _("Table “%s” is keyed by its rowid alone: give one value, "
                       "not %u"), schema->name, n_parts);
          return FALSE;
        }
      if (n_parts == 1)
        return qstore_codec_append_key_value (out, &values[0], QSTORE_COLLATION_BINARY,
                                              FALSE, error);
      return TRUE;
    }

  parts = index < 0 ? schema->pk : qstore_table_index_at (self, index)->parts;
  if (n_parts > parts->len)
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                   _("%s “%s” has %u columns: give at most that many values, not %u"),
                   index < 0 ? "The primary key of table" : "Index",
                   index < 0 ? schema->name : qstore_table_index_at (self, index)->name,
                   parts->len, n_parts);
      return FALSE;
    }

  for (guint i = 0; i < n_parts; i++)
    {
      const QStoreKeyPart *part = &g_array_index (parts, QStoreKeyPart, i);

      if (!qstore_codec_append_key_value (out, &values[i], part->collation,
                                          part->descending, error))
        return FALSE;
    }
  return TRUE;
}
