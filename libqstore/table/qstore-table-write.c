/* qstore-table-write.c: a table's write path
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "qstore-error.h"
#include "qstore-i18n-private.h"
#include "qstore-table-private.h"

/* From a row's values to the writes of its transaction: the rowid it gets,
 * the NOT NULL, CHECK, PRIMARY KEY and UNIQUE constraints and what a
 * conflict does (OR REPLACE removes the rows in the way), the index
 * entries that come and go, the change recorded and the row count.
 * Whatever a write decides from reads (the next rowid, a NULL key's
 * suffix, a conflict) it reads through the coordinator, inside the
 * transaction (see QStoreCoordinator). */

/* SQLite gives up on random rowids after this many tries. */
#define RANDOM_ROWID_TRIES 100

void
qstore_table_write_buffers_init (WriteBuffers *buffers)
{
  buffers->key = g_byte_array_sized_new (64);
  buffers->old_entry = g_byte_array_sized_new (64);
  buffers->new_entry = g_byte_array_sized_new (64);
  buffers->row = g_byte_array_sized_new (128);
  buffers->conflicts = g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);
}

void
qstore_table_write_buffers_clear (WriteBuffers *buffers)
{
  g_clear_pointer (&buffers->key, g_byte_array_unref);
  g_clear_pointer (&buffers->old_entry, g_byte_array_unref);
  g_clear_pointer (&buffers->new_entry, g_byte_array_unref);
  g_clear_pointer (&buffers->row, g_byte_array_unref);
  g_clear_pointer (&buffers->conflicts, g_ptr_array_unref);
}

static gboolean
bytes_equal (const guint8 *a,
             gsize         a_len,
             const guint8 *b,
             gsize         b_len)
{
  return a_len == b_len && (a_len == 0 || memcmp (a, b, a_len) == 0);
}

/* Rowids */

static gboolean
rowid_taken (QStoreTable  *self,
             gint64        rowid,
             gboolean     *taken,
             GError      **error)
{
  g_autoptr(GByteArray) owned = g_byte_array_sized_new (32);
  g_autoptr(GError) local_error = NULL;

  qstore_codec_append_integer (owned, rowid, FALSE);
  *taken = qstore_coordinator_lookup (self->coordinator, self->data_store,
                                      owned->data, owned->len, NULL, NULL, &local_error);
  if (local_error != NULL)
    {
      g_propagate_error (error, g_steal_pointer (&local_error));
      return FALSE;
    }
  return TRUE;
}

static gboolean
read_max_rowid (QStoreTable  *self,
                gboolean     *empty,
                gint64       *max,
                GError      **error)
{
  g_autoptr(QStoreBounds) bounds = qstore_bounds_new ();
  g_autoptr(QStoreIter) iter = NULL;
  g_autoptr(GError) local_error = NULL;
  const guint8 *key;
  gsize key_len, pos = 0;
  guint8 on_stack[64];
  g_autofree guint8 *on_heap = NULL;
  guint8 *scratch;
  QStoreValue value;

  qstore_bounds_set_reverse (bounds, TRUE);
  qstore_bounds_set_limit (bounds, 1);
  iter = qstore_coordinator_iterate (self->coordinator, self->data_store, bounds, error);
  if (iter == NULL)
    return FALSE;

  if (!qstore_iter_next (iter, &local_error))
    {
      if (local_error != NULL)
        {
          g_propagate_error (error, g_steal_pointer (&local_error));
          return FALSE;
        }
      *empty = TRUE;
      *max = 0;
      return TRUE;
    }

  /* A damaged key may hold text, which is unescaped to @scratch. */
  key = qstore_iter_peek_key (iter, &key_len);
  scratch = key_len <= sizeof on_stack ? on_stack : (on_heap = g_malloc (key_len));
  if (!qstore_codec_read_key_value (key, key_len, &pos, 0, FALSE, &scratch, &value, error))
    {
      g_prefix_error (error, _("Table “%s”: "), self->schema->name);
      return FALSE;
    }
  if (value.type != QSTORE_VALUE_INTEGER || pos != key_len)
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_CORRUPT,
                   _("Table “%s” holds a key that is no rowid: the data store "
                   "does not match the table's schema"), self->schema->name);
      return FALSE;
    }

  *empty = FALSE;
  *max = value.integer;
  return TRUE;
}

/* The next rowid, as SQLite picks it: one more than the largest, or after
 * that one was used, a random free one. */
static gboolean
next_rowid (QStoreTable  *self,
            gint64       *rowid,
            GError      **error)
{
  guint64 epoch = qstore_coordinator_get_epoch (self->coordinator);
  guint64 tx = qstore_coordinator_get_last_tx_id (self->coordinator);

  /* Each transaction's end moves the epoch on by one, and a commit that
   * wrote moves the transaction id on by one: both by exactly one means
   * the transaction the maximum was known in committed and no other one
   * ran since, so what it wrote is what is committed now. Anything else
   * (a rollback, a ROLLBACK TO, a commit with nothing to write, another
   * transaction) reads the maximum again. */
  if (self->max_rowid_known && self->max_rowid_epoch + 1 == epoch &&
      self->max_rowid_tx + 1 == tx)
    {
      self->max_rowid_epoch = epoch;
      self->max_rowid_tx = tx;
    }
  if (self->max_rowid_known && self->max_rowid_epoch != epoch)
    self->max_rowid_known = FALSE;

  if (self->max_rowid_known)
    {
      gboolean taken;

      if (!rowid_taken (self, self->max_rowid, &taken, error))
        return FALSE;
      if (!taken)
        self->max_rowid_known = FALSE;
    }

  if (!self->max_rowid_known)
    {
      gboolean empty;
      gint64 max;

      if (!read_max_rowid (self, &empty, &max, error))
        return FALSE;
      if (empty)
        {
          *rowid = 1;
          return TRUE;
        }
      self->max_rowid = max;
      self->max_rowid_known = TRUE;
      self->max_rowid_epoch = epoch;
      self->max_rowid_tx = tx;
    }

  if (self->max_rowid < G_MAXINT64)
    {
      *rowid = self->max_rowid + 1;
      return TRUE;
    }

  for (guint i = 0; i < RANDOM_ROWID_TRIES; i++)
    {
      gint64 candidate = (gint64) ((((guint64) g_random_int () << 32) |
                                    g_random_int ()) & G_MAXINT64);
      gboolean taken;

      if (candidate == 0)
        continue;
      if (!rowid_taken (self, candidate, &taken, error))
        return FALSE;
      if (!taken)
        {
          *rowid = candidate;
          return TRUE;
        }
    }

  g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_FAILED,
               _("Table “%s” has no free rowid left (database or disk is "
               "full): delete rows, or give ids explicitly"), self->schema->name);
  return FALSE;
}

static void
note_rowid (QStoreTable *self,
            gint64       rowid)
{
  if (self->max_rowid_known && rowid > self->max_rowid)
    self->max_rowid = rowid;
}

/* Primary keys holding NULL (see the layout in qstore-table-layout.c) */

static gboolean
primary_key_has_null (QStoreTable       *self,
                      const QStoreValue *values)
{
  GArray *pk = self->schema->pk;

  if (self->rowid_position >= 0)
    return FALSE;
  for (guint i = 0; i < pk->len; i++)
    {
      if (values[g_array_index (pk, QStoreKeyPart, i).column].type == QSTORE_VALUE_NULL)
        return TRUE;
    }
  return FALSE;
}

/* Appends to @key, the encoded primary key of a row that holds a NULL,
 * the suffix that sets the row apart: one more than the largest suffix
 * under @key, as the transaction sees it. */
static gboolean
append_null_key_suffix (QStoreTable  *self,
                        GByteArray   *key,
                        GError      **error)
{
  g_autoptr(QStoreBounds) bounds = qstore_bounds_new ();
  g_autoptr(GByteArray) upper = g_byte_array_new ();
  g_autoptr(QStoreIter) iter = NULL;
  g_autoptr(GError) local_error = NULL;
  gint64 next = 1;

  qstore_bounds_set_gte (bounds, key->data, key->len);
  if (qstore_table_prefix_successor (key->data, key->len, upper))
    qstore_bounds_set_lt (bounds, upper->data, upper->len);
  qstore_bounds_set_reverse (bounds, TRUE);
  qstore_bounds_set_limit (bounds, 1);

  iter = qstore_coordinator_iterate (self->coordinator, self->data_store, bounds, error);
  if (iter == NULL)
    return FALSE;

  if (qstore_iter_next (iter, &local_error))
    {
      gsize len;
      const guint8 *last = qstore_iter_peek_key (iter, &len);
      g_autoptr(GBytes) suffix = NULL;
      g_autoptr(GVariant) decoded = NULL;
      g_autoptr(GVariant) boxed = NULL;
      g_autoptr(GVariant) value = NULL;

      /* Every key in the range is @key followed by one integer. */
      suffix = g_bytes_new (last + key->len, len - key->len);
      decoded = qstore_codec_decode_key (suffix, NULL, 1, NULL);
      if (decoded != NULL)
        {
          boxed = g_variant_get_child_value (decoded, 0);
          value = g_variant_get_variant (boxed);
        }
      if (value == NULL || !g_variant_is_of_type (value, G_VARIANT_TYPE_INT64))
        {
          g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_CORRUPT,
                       _("Table “%s” holds a key that is neither a primary key nor "
                       "one with NULL and its suffix: the data store does not match "
                       "the table's schema"), self->schema->name);
          return FALSE;
        }
      if (g_variant_get_int64 (value) == G_MAXINT64)
        {
          g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_FAILED,
                       _("Table “%s” has no room left for another row with this "
                       "PRIMARY KEY holding NULL (database or disk is full): "
                       "delete such rows, or give the key columns values"),
                       self->schema->name);
          return FALSE;
        }
      next = g_variant_get_int64 (value) + 1;
    }
  else if (local_error != NULL)
    {
      g_propagate_error (error, g_steal_pointer (&local_error));
      return FALSE;
    }

  qstore_codec_append_integer (key, next, FALSE);
  return TRUE;
}

/* Conflicts */

static char *
constraint_columns (QStoreTable *self,
                    GArray      *parts)
{
  GString *out = g_string_new ("UNIQUE constraint failed: ");

  for (guint i = 0; i < parts->len; i++)
    {
      const QStoreKeyPart *part = &g_array_index (parts, QStoreKeyPart, i);

      g_string_append_printf (out, "%s%s.%s", i > 0 ? ", " : "",
                              self->schema->name,
                              qstore_table_column_at (self, part->column)->name);
    }
  return g_string_free (out, FALSE);
}

static char *
primary_key_message (QStoreTable *self)
{
  if (self->schema->rowid_column >= 0)
    return g_strdup_printf ("UNIQUE constraint failed: %s.%s", self->schema->name,
                            qstore_table_column_at (self, self->schema->rowid_column)->name);
  if (self->schema->pk->len == 0)
    return g_strdup_printf ("UNIQUE constraint failed: %s.rowid", self->schema->name);
  return constraint_columns (self, self->schema->pk);
}

static void
add_conflict (GPtrArray    *conflicts,
              const guint8 *key,
              gsize         key_len)
{
  for (guint i = 0; i < conflicts->len; i++)
    {
      gsize len;
      const guint8 *data = g_bytes_get_data (g_ptr_array_index (conflicts, i), &len);

      if (bytes_equal (data, len, key, key_len))
        return;
    }
  g_ptr_array_add (conflicts, g_bytes_new (key, key_len));
}

/* Looks for rows that the row @values (data key @key) would collide with
 * on its primary key (when @check_pk) and its UNIQUE indexes. @self_key is
 * the key the row is stored under now (an update), whose own entries are
 * no conflict. Stops at the first one unless @all. The data keys found go
 * to @conflicts, and *message names the first constraint. */
static gboolean
find_conflicts (QStoreTable        *self,
                const QStoreValue  *values,
                const GByteArray   *key,
                gboolean            check_pk,
                const GByteArray   *self_key,
                const gboolean     *in_index,
                gboolean            all,
                GPtrArray          *conflicts,
                char              **message,
                GError            **error)
{
  g_autoptr(GByteArray) prefix = NULL;
  g_autoptr(GByteArray) upper = NULL;

  if (check_pk)
    {
      g_autoptr(GError) local_error = NULL;
      gboolean exists;

      exists = qstore_coordinator_lookup (self->coordinator, self->data_store,
                                          key->data, key->len, NULL, NULL, &local_error);
      if (local_error != NULL)
        {
          g_propagate_error (error, g_steal_pointer (&local_error));
          return FALSE;
        }
      if (exists)
        {
          add_conflict (conflicts, key->data, key->len);
          *message = primary_key_message (self);
          if (!all)
            return TRUE;
        }
    }

  for (guint i = 0; i < self->index_stores->len; i++)
    {
      const QStoreIndexSchema *index = qstore_table_index_at (self, i);
      g_autoptr(QStoreBounds) bounds = NULL;
      g_autoptr(QStoreIter) iter = NULL;
      g_autoptr(GError) local_error = NULL;
      gboolean has_null;

      /* NULLs are distinct, and a row outside a partial index is outside
       * its constraint. */
      if (!index->unique || !in_index[i])
        continue;

      if (prefix == NULL)
        {
          prefix = g_byte_array_new ();
          upper = g_byte_array_new ();
        }
      g_byte_array_set_size (prefix, 0);
      if (!qstore_table_append_index_columns (self, i, values, prefix, &has_null, error))
        return FALSE;
      if (has_null)
        continue;

      bounds = qstore_bounds_new ();
      qstore_bounds_set_gte (bounds, prefix->data, prefix->len);
      if (qstore_table_prefix_successor (prefix->data, prefix->len, upper))
        qstore_bounds_set_lt (bounds, upper->data, upper->len);

      iter = qstore_coordinator_iterate (self->coordinator,
                                         g_ptr_array_index (self->index_stores, i),
                                         bounds, error);
      if (iter == NULL)
        return FALSE;

      while (qstore_iter_next (iter, &local_error))
        {
          gsize len;
          const guint8 *other = qstore_iter_peek_value (iter, &len);

          if (self_key != NULL && bytes_equal (other, len, self_key->data, self_key->len))
            continue;

          add_conflict (conflicts, other, len);
          if (*message == NULL)
            *message = constraint_columns (self, index->parts);
          if (!all)
            return TRUE;
        }
      if (local_error != NULL)
        {
          g_propagate_error (error, g_steal_pointer (&local_error));
          return FALSE;
        }
    }

  return TRUE;
}

/* Writing */

static void
begin_if_needed (QStoreTable *self)
{
  if (!qstore_coordinator_in_transaction (self->coordinator))
    qstore_coordinator_begin (self->coordinator);
}

static gboolean
not_null_violation (QStoreTable        *self,
                    const QStoreValue  *values,
                    guint              *column)
{
  for (guint i = 0; i < self->schema->columns->len; i++)
    {
      if (qstore_table_column_at (self, i)->not_null && values[i].type == QSTORE_VALUE_NULL)
        {
          *column = i;
          return TRUE;
        }
    }
  return FALSE;
}

/* Whether the old row has an entry in partial index @index; an entry
 * exists exactly when its predicate held when it was written. */
static gboolean
old_entry_exists (QStoreTable       *self,
                  guint              index,
                  const GByteArray  *entry,
                  gboolean          *exists,
                  GError           **error)
{
  g_autoptr(GError) local_error = NULL;

  if (qstore_table_index_at (self, index)->where_sql == NULL)
    {
      *exists = TRUE;
      return TRUE;
    }

  *exists = qstore_coordinator_lookup (self->coordinator,
                                       g_ptr_array_index (self->index_stores, index),
                                       entry->data, entry->len, NULL, NULL, &local_error);
  if (local_error != NULL)
    {
      g_propagate_error (error, g_steal_pointer (&local_error));
      return FALSE;
    }
  return TRUE;
}

/* Removes the row stored under @key (its stored bytes @row) and its index
 * entries, and records the delete. */
static gboolean
remove_row (QStoreTable   *self,
            const guint8  *key,
            gsize          key_len,
            GBytes        *row,
            GError       **error)
{
  g_autofree QStoreValue *values = g_new0 (QStoreValue, self->n_values);
  g_autoptr(GByteArray) entry = g_byte_array_new ();
  gsize row_len;
  const guint8 *row_data = g_bytes_get_data (row, &row_len);

  if (!qstore_table_read_stored_row (self, row_data, row_len, values, error))
    return FALSE;

  for (guint i = 0; i < self->index_stores->len; i++)
    {
      gboolean exists;

      if (!qstore_table_index_entry_key (self, i, values, key, key_len, entry, error) ||
          !old_entry_exists (self, i, entry, &exists, error))
        return FALSE;
      if (exists)
        qstore_coordinator_delete (self->coordinator,
                                   g_ptr_array_index (self->index_stores, i),
                                   entry->data, entry->len);
    }

  qstore_coordinator_delete (self->coordinator, self->data_store, key, key_len);
  self->n_writes++;
  qstore_coordinator_record_change (self->coordinator, self->schema->schema,
                                    self->schema->name, QSTORE_CHANGE_DELETE, row, NULL);
  qstore_coordinator_adjust_row_count (self->coordinator, self->schema->schema,
                                       self->schema->name, -1);
  return TRUE;
}

static gboolean
remove_conflicts (QStoreTable  *self,
                  GPtrArray    *conflicts,
                  GError      **error)
{
  for (guint i = 0; i < conflicts->len; i++)
    {
      GBytes *key = g_ptr_array_index (conflicts, i);
      g_autoptr(GBytes) row = NULL;
      gsize key_len;
      const guint8 *key_data = g_bytes_get_data (key, &key_len);

      row = qstore_table_get_row (self, key_data, key_len, error);
      if (row == NULL)
        {
          if (error != NULL && *error != NULL)
            return FALSE;
          continue;
        }
      if (!remove_row (self, key_data, key_len, row, error))
        return FALSE;
    }
  return TRUE;
}

/* The part of a write shared by insert and update, once the new row's
 * values (n_values, rowid in place) are known: constraints, conflicts,
 * then the writes. @old_key and @old_values describe the row being
 * replaced by an update, NULL for an insert. */
static gboolean
write_row_with (QStoreTable        *self,
                WriteBuffers       *buffers,
                QStoreValue        *values,
                gboolean            key_is_new,
                const GByteArray   *old_key,
                const QStoreValue  *old_values,
                GBytes             *old_row,
                QStoreConflict      conflict,
                gboolean           *ignored,
                GError            **error)
{
  GByteArray *key = buffers->key;
  GByteArray *old_entry = buffers->old_entry;
  GByteArray *new_entry = buffers->new_entry;
  GByteArray *encoded = buffers->row;
  GPtrArray *conflicts = buffers->conflicts;
  g_autoptr(GBytes) new_row = NULL;
  gboolean in_index_here[16];
  g_autofree gboolean *in_index_heap = NULL;
  gboolean *in_index;
  g_autofree char *message = NULL;
  g_autoptr(GError) local_error = NULL;
  gboolean key_changed;
  gboolean null_key;
  gboolean ok;
  guint column;

  if (not_null_violation (self, values, &column))
    {
      if (conflict == QSTORE_CONFLICT_IGNORE)
        {
          *ignored = TRUE;
          return TRUE;
        }
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_CONSTRAINT,
                   "NOT NULL constraint failed: %s.%s",
                   self->schema->name, qstore_table_column_at (self, column)->name);
      return FALSE;
    }

  g_byte_array_set_size (key, 0);
  if (!qstore_table_append_data_key (self, values, key, error))
    return FALSE;
  null_key = primary_key_has_null (self, values);

  if (self->index_stores->len <= G_N_ELEMENTS (in_index_here))
    in_index = in_index_here;
  else
    in_index = in_index_heap = g_new (gboolean, self->index_stores->len);
  if (!qstore_table_evaluate_row (self, values, in_index, &local_error))
    {
      if (conflict == QSTORE_CONFLICT_IGNORE &&
          g_error_matches (local_error, QSTORE_ERROR, QSTORE_ERROR_CONSTRAINT))
        {
          *ignored = TRUE;
          return TRUE;
        }
      g_propagate_error (error, g_steal_pointer (&local_error));
      return FALSE;
    }

  if (null_key)
    {
      /* The row stays under its key while its key columns (NULL
       * included) keep their encoding; elsewhere it gets a new suffix. */
      if (old_key != NULL && old_key->len > key->len &&
          memcmp (old_key->data, key->data, key->len) == 0)
        g_byte_array_append (g_byte_array_set_size (key, 0), old_key->data, old_key->len);
      else if (!append_null_key_suffix (self, key, error))
        return FALSE;
    }
  key_changed = old_key == NULL ||
                !bytes_equal (key->data, key->len, old_key->data, old_key->len);

  /* A NULL in the primary key is distinct from every other value, as in
   * a UNIQUE constraint: nothing to check, the suffix keeps the key apart. */
  g_ptr_array_set_size (conflicts, 0);
  ok = find_conflicts (self, values, key, key_changed && !key_is_new && !null_key, old_key,
                       in_index, conflict == QSTORE_CONFLICT_REPLACE, conflicts, &message,
                       error);

  if (ok && conflicts->len > 0)
    {
      switch (conflict)
        {
        case QSTORE_CONFLICT_IGNORE:
          g_ptr_array_set_size (conflicts, 0);
          *ignored = TRUE;
          return TRUE;

        case QSTORE_CONFLICT_REPLACE:
          ok = remove_conflicts (self, conflicts, error);
          break;

        case QSTORE_CONFLICT_ABORT:
        case QSTORE_CONFLICT_ROLLBACK:
        case QSTORE_CONFLICT_FAIL:
        default:
          g_set_error_literal (error, QSTORE_ERROR, QSTORE_ERROR_CONSTRAINT, message);
          ok = FALSE;
          break;
        }
    }
  g_ptr_array_set_size (conflicts, 0);
  if (!ok)
    return FALSE;

  g_byte_array_set_size (encoded, 0);
  qstore_row_encode (encoded, values, self->n_values);
  /* The change set keeps its own copy (the coordinator drops it when
   * nobody listens). */
  new_row = g_bytes_new (encoded->data, encoded->len);

  /* Index entries: the old one out where the old row was in the index,
   * the new one in where the new row is, nothing where they are equal. */
  for (guint i = 0; i < self->index_stores->len; i++)
    {
      QStoreKV *store = g_ptr_array_index (self->index_stores, i);
      gboolean old_in = FALSE;
      gboolean same;

      if (!qstore_table_index_entry_key (self, i, values, key->data, key->len, new_entry, error))
        return FALSE;
      if (old_values != NULL)
        {
          if (!qstore_table_index_entry_key (self, i, old_values, old_key->data, old_key->len,
                                             old_entry, error) ||
              !old_entry_exists (self, i, old_entry, &old_in, error))
            return FALSE;
        }

      same = old_in && bytes_equal (old_entry->data, old_entry->len,
                                    new_entry->data, new_entry->len);
      if (old_in && !(in_index[i] && same))
        qstore_coordinator_delete (self->coordinator, store, old_entry->data, old_entry->len);
      if (in_index[i] && !same)
        qstore_coordinator_put (self->coordinator, store, new_entry->data, new_entry->len,
                                key->data, key->len);
    }

  if (old_key != NULL && key_changed)
    qstore_coordinator_delete (self->coordinator, self->data_store,
                               old_key->data, old_key->len);
  qstore_coordinator_put (self->coordinator, self->data_store, key->data, key->len,
                          encoded->data, encoded->len);
  self->n_writes++;

  if (old_row != NULL)
    {
      qstore_coordinator_record_change (self->coordinator, self->schema->schema,
                                        self->schema->name, QSTORE_CHANGE_UPDATE,
                                        old_row, new_row);
    }
  else
    {
      qstore_coordinator_record_change (self->coordinator, self->schema->schema,
                                        self->schema->name, QSTORE_CHANGE_INSERT,
                                        NULL, new_row);
      qstore_coordinator_adjust_row_count (self->coordinator, self->schema->schema,
                                           self->schema->name, 1);
    }

  if (self->rowid_position >= 0)
    note_rowid (self, values[self->rowid_position].integer);
  return TRUE;
}

static gboolean
write_row (QStoreTable        *self,
           QStoreValue        *values,
           gboolean            key_is_new,
           const GByteArray   *old_key,
           const QStoreValue  *old_values,
           GBytes             *old_row,
           QStoreConflict      conflict,
           gboolean           *ignored,
           GError            **error)
{
  WriteBuffers nested;
  gboolean ok;

  if (!self->writing)
    {
      self->writing = TRUE;
      ok = write_row_with (self, &self->buffers, values, key_is_new, old_key, old_values,
                           old_row, conflict, ignored, error);
      self->writing = FALSE;
      return ok;
    }

  qstore_table_write_buffers_init (&nested);
  ok = write_row_with (self, &nested, values, key_is_new, old_key, old_values, old_row,
                       conflict, ignored, error);
  qstore_table_write_buffers_clear (&nested);
  return ok;
}

static gboolean
datatype_mismatch (QStoreTable  *self,
                   GError      **error)
{
  g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
               "datatype mismatch: column “%s” of table “%s” is an INTEGER "
               "PRIMARY KEY and holds integers only",
               qstore_table_column_at (self, self->schema->rowid_column)->name, self->schema->name);
  return FALSE;
}

static gboolean
no_rowid (QStoreTable  *self,
          GError      **error)
{
  g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_UNSUPPORTED,
               _("Table “%s” is keyed by its PRIMARY KEY and keeps no rowid: "
               "leave the rowid out"), self->schema->name);
  return FALSE;
}

gboolean
qstore_table_insert_values (QStoreTable     *self,
                            QStoreValue     *values,
                            QStoreConflict   conflict,
                            gint64          *rowid,
                            gboolean        *ignored,
                            GError         **error)
{
  return qstore_table_insert_values_with_rowid (self, values, NULL, conflict, rowid,
                                                ignored, error);
}

gboolean
qstore_table_insert_values_with_rowid (QStoreTable     *self,
                                       QStoreValue     *values,
                                       const gint64    *explicit_rowid,
                                       QStoreConflict   conflict,
                                       gint64          *rowid,
                                       gboolean        *ignored,
                                       GError         **error)
{
  QStoreValue row_here[16];
  g_autofree QStoreValue *row_heap = NULL;
  QStoreValue *row;
  gboolean assigned = FALSE;
  gboolean ignored_here = FALSE;
  guint n_columns;

  g_return_val_if_fail (QSTORE_IS_TABLE (self), FALSE);
  g_return_val_if_fail (values != NULL, FALSE);
  g_return_val_if_fail (conflict <= QSTORE_CONFLICT_REPLACE, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (ignored != NULL)
    *ignored = FALSE;

  if (explicit_rowid != NULL && self->rowid_position < 0)
    return no_rowid (self, error);

  begin_if_needed (self);

  n_columns = self->schema->columns->len;
  if (self->n_values <= G_N_ELEMENTS (row_here))
    row = row_here;
  else
    row = row_heap = g_new (QStoreValue, self->n_values);
  memset (row, 0, self->n_values * sizeof (QStoreValue));
  memcpy (row, values, n_columns * sizeof (QStoreValue));

  if (self->rowid_position >= 0)
    {
      QStoreValue *slot = &row[self->rowid_position];

      /* An INTEGER PRIMARY KEY given a value is the rowid. */
      if (self->schema->rowid_column >= 0 && slot->type != QSTORE_VALUE_NULL)
        {
          if (slot->type != QSTORE_VALUE_INTEGER)
            return datatype_mismatch (self, error);
        }
      else if (explicit_rowid != NULL)
        {
          slot->type = QSTORE_VALUE_INTEGER;
          slot->integer = *explicit_rowid;
        }
      else
        {
          gint64 id;

          if (!next_rowid (self, &id, error))
            return FALSE;
          slot->type = QSTORE_VALUE_INTEGER;
          slot->integer = id;
          assigned = TRUE;
        }
    }

  if (!write_row (self, row, assigned, NULL, NULL, NULL, conflict, &ignored_here, error))
    return FALSE;

  if (ignored != NULL)
    *ignored = ignored_here;
  if (rowid != NULL && self->rowid_position >= 0 && !ignored_here)
    *rowid = row[self->rowid_position].integer;
  return TRUE;
}

gboolean
qstore_table_update_values (QStoreTable     *self,
                            const guint8    *old_key,
                            gsize            old_key_len,
                            QStoreValue     *values,
                            QStoreConflict   conflict,
                            gboolean        *ignored,
                            GError         **error)
{
  return qstore_table_update_values_with_rowid (self, old_key, old_key_len, values, NULL,
                                                conflict, ignored, error);
}

gboolean
qstore_table_update_values_with_rowid (QStoreTable     *self,
                                       const guint8    *old_key,
                                       gsize            old_key_len,
                                       QStoreValue     *values,
                                       const gint64    *new_rowid,
                                       QStoreConflict   conflict,
                                       gboolean        *ignored,
                                       GError         **error)
{
  g_autoptr(GBytes) old_row = NULL;
  g_autoptr(GByteArray) old_key_array = NULL;
  g_autofree QStoreValue *old_values = NULL;
  g_autofree QStoreValue *row = NULL;
  g_autoptr(GError) local_error = NULL;
  gboolean ignored_here = FALSE;
  const guint8 *old_data;
  gsize old_len;

  g_return_val_if_fail (QSTORE_IS_TABLE (self), FALSE);
  g_return_val_if_fail (old_key != NULL || old_key_len == 0, FALSE);
  g_return_val_if_fail (values != NULL, FALSE);
  g_return_val_if_fail (conflict <= QSTORE_CONFLICT_REPLACE, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (ignored != NULL)
    *ignored = FALSE;

  if (new_rowid != NULL && self->rowid_position < 0)
    return no_rowid (self, error);

  begin_if_needed (self);

  old_row = qstore_table_get_row (self, old_key, old_key_len, &local_error);
  if (old_row == NULL)
    {
      if (local_error != NULL)
        g_propagate_error (error, g_steal_pointer (&local_error));
      else
        g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_NOT_FOUND,
                     _("Table “%s” has no row under the key to update: read it "
                     "again, it may have been deleted"), self->schema->name);
      return FALSE;
    }

  old_values = g_new0 (QStoreValue, self->n_values);
  old_data = g_bytes_get_data (old_row, &old_len);
  if (!qstore_table_read_stored_row (self, old_data, old_len, old_values, error))
    return FALSE;

  row = g_new0 (QStoreValue, self->n_values);
  memcpy (row, values, self->schema->columns->len * sizeof (QStoreValue));
  if (self->rowid_position >= 0)
    {
      QStoreValue *slot = &row[self->rowid_position];
      const QStoreValue *old_id = &old_values[self->rowid_position];

      if (self->schema->rowid_column >= 0)
        {
          /* The rowid and its INTEGER PRIMARY KEY are one: a new rowid
           * moves the column, unless the column itself was changed. */
          if (new_rowid != NULL &&
              slot->type == QSTORE_VALUE_INTEGER && slot->integer == old_id->integer)
            {
              slot->type = QSTORE_VALUE_INTEGER;
              slot->integer = *new_rowid;
            }
          if (slot->type != QSTORE_VALUE_INTEGER)
            return datatype_mismatch (self, error);
        }
      else if (new_rowid != NULL)
        {
          slot->type = QSTORE_VALUE_INTEGER;
          slot->integer = *new_rowid;
        }
      else
        {
          /* Otherwise the row keeps its rowid. */
          *slot = *old_id;
        }
    }

  old_key_array = g_byte_array_sized_new (old_key_len);
  g_byte_array_append (old_key_array, old_key, old_key_len);

  if (!write_row (self, row, FALSE, old_key_array, old_values, old_row, conflict,
                  &ignored_here, error))
    return FALSE;

  if (ignored != NULL)
    *ignored = ignored_here;
  return TRUE;
}

gboolean
qstore_table_delete_key (QStoreTable   *self,
                         const guint8  *key,
                         gsize          key_len,
                         GError       **error)
{
  g_autoptr(GBytes) row = NULL;
  g_autoptr(GError) local_error = NULL;

  g_return_val_if_fail (QSTORE_IS_TABLE (self), FALSE);
  g_return_val_if_fail (key != NULL || key_len == 0, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  begin_if_needed (self);

  row = qstore_table_get_row (self, key, key_len, &local_error);
  if (row == NULL)
    {
      /* Deleting what is not there changes nothing, as in SQL. */
      if (local_error != NULL)
        {
          g_propagate_error (error, g_steal_pointer (&local_error));
          return FALSE;
        }
      return TRUE;
    }

  return remove_row (self, key, key_len, row, error);
}
