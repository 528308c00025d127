/* qstore-change-set.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "qstore-change-set-private.h"
#include "qstore-codec.h"

/**
 * QStoreChangeSet:
 *
 * What one committed transaction changed: its transaction id, when it
 * committed, and every row change in the order the tables made them.
 *
 * A change set is delivered by [signal@Coordinator::committed] after the
 * data is durable. It is immutable, so it may be handed to other threads.
 * Rows are kept in their stored encoding and decoded only when asked for:
 * [method@ChangeSet.get_old_row] and [method@ChangeSet.get_new_row] return a
 * tuple with one `v` per column, in declaration order, followed by the
 * rowid when the table keeps it apart from its columns (a table without
 * PRIMARY KEY nor INTEGER PRIMARY KEY).
 *
 * Change sets that come from a database (its change feeds and change log)
 * also say what the values are: [method@ChangeSet.get_names] names them,
 * [method@ChangeSet.get_key] gives a row's key, and
 * [method@ChangeSet.get_old_record] and [method@ChangeSet.get_new_record]
 * give the rows as dictionaries. Those of a bare coordinator do not.
 */

struct _QStoreChangeSet
{
  GObject  parent_instance;

  guint64  tx_id;
  gint64   time;
  GArray  *changes;   /* QStoreChange */
};

G_DEFINE_FINAL_TYPE (QStoreChangeSet, qstore_change_set, G_TYPE_OBJECT)

QStoreChangeTable *
qstore_change_table_new (const char *schema,
                         const char *table)
{
  QStoreChangeTable *self = g_atomic_rc_box_new0 (QStoreChangeTable);

  self->schema = g_strdup (schema);
  self->table = g_strdup (table);
  return self;
}

QStoreChangeTable *
qstore_change_table_ref (QStoreChangeTable *self)
{
  return g_atomic_rc_box_acquire (self);
}

QStoreChangeTable *
qstore_change_table_new_described (const char *schema,
                                   const char *table,
                                   char      **names,
                                   guint      *key,
                                   guint       n_key)
{
  QStoreChangeTable *self = qstore_change_table_new (schema, table);

  self->names = names;
  self->key = key;
  self->n_key = n_key;
  return self;
}

static void
change_table_clear (gpointer data)
{
  QStoreChangeTable *self = data;

  g_free (self->schema);
  g_free (self->table);
  g_strfreev (self->names);
  g_free (self->key);
}

void
qstore_change_table_unref (QStoreChangeTable *self)
{
  g_atomic_rc_box_release_full (self, change_table_clear);
}

void
qstore_change_clear (gpointer data)
{
  QStoreChange *change = data;

  g_clear_pointer (&change->table, qstore_change_table_unref);
  g_clear_pointer (&change->old_row, g_bytes_unref);
  g_clear_pointer (&change->new_row, g_bytes_unref);
}

static void
qstore_change_set_finalize (GObject *object)
{
  QStoreChangeSet *self = QSTORE_CHANGE_SET (object);

  g_clear_pointer (&self->changes, g_array_unref);

  G_OBJECT_CLASS (qstore_change_set_parent_class)->finalize (object);
}

static void
qstore_change_set_class_init (QStoreChangeSetClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = qstore_change_set_finalize;
}

static void
qstore_change_set_init (QStoreChangeSet *self)
{
}

QStoreChangeSet *
qstore_change_set_new_take (guint64  tx_id,
                            gint64   time,
                            GArray  *changes)
{
  QStoreChangeSet *self = g_object_new (QSTORE_TYPE_CHANGE_SET, NULL);

  self->tx_id = tx_id;
  self->time = time;
  self->changes = changes;
  return self;
}

GArray *
qstore_change_set_get_changes (QStoreChangeSet *self)
{
  g_return_val_if_fail (QSTORE_IS_CHANGE_SET (self), NULL);
  return self->changes;
}

static const QStoreChange *
get_change (QStoreChangeSet *self,
            guint            index)
{
  return &g_array_index (self->changes, QStoreChange, index);
}

/**
 * qstore_change_set_get_tx_id:
 * @self: a #QStoreChangeSet
 *
 * Gets the id of the transaction: ids grow by one with each commit that
 * wrote something, and are persisted with the data.
 *
 * Returns: the transaction id
 */
guint64
qstore_change_set_get_tx_id (QStoreChangeSet *self)
{
  g_return_val_if_fail (QSTORE_IS_CHANGE_SET (self), 0);
  return self->tx_id;
}

/**
 * qstore_change_set_get_time:
 * @self: a #QStoreChangeSet
 *
 * Gets when the transaction committed, as g_get_real_time() gives it.
 *
 * Returns: the commit time, in microseconds since the Unix epoch
 */
gint64
qstore_change_set_get_time (QStoreChangeSet *self)
{
  g_return_val_if_fail (QSTORE_IS_CHANGE_SET (self), 0);
  return self->time;
}

/**
 * qstore_change_set_get_n_changes:
 * @self: a #QStoreChangeSet
 *
 * Gets the number of row changes. A transaction that only changed the
 * schema has none.
 *
 * Returns: the number of row changes
 */
guint
qstore_change_set_get_n_changes (QStoreChangeSet *self)
{
  g_return_val_if_fail (QSTORE_IS_CHANGE_SET (self), 0);
  return self->changes->len;
}

/**
 * qstore_change_set_get_schema:
 * @self: a #QStoreChangeSet
 * @index: a change, below [method@ChangeSet.get_n_changes]
 *
 * Gets the schema of the table a change is in.
 *
 * Returns: the schema, such as `main`
 */
const char *
qstore_change_set_get_schema (QStoreChangeSet *self,
                              guint            index)
{
  g_return_val_if_fail (QSTORE_IS_CHANGE_SET (self), NULL);
  g_return_val_if_fail (index < self->changes->len, NULL);
  return get_change (self, index)->table->schema;
}

/**
 * qstore_change_set_get_table:
 * @self: a #QStoreChangeSet
 * @index: a change, below [method@ChangeSet.get_n_changes]
 *
 * Gets the table a change is in, spelled as the table spells its name.
 *
 * Returns: the table name
 */
const char *
qstore_change_set_get_table (QStoreChangeSet *self,
                             guint            index)
{
  g_return_val_if_fail (QSTORE_IS_CHANGE_SET (self), NULL);
  g_return_val_if_fail (index < self->changes->len, NULL);
  return get_change (self, index)->table->table;
}

/**
 * qstore_change_set_get_op:
 * @self: a #QStoreChangeSet
 * @index: a change, below [method@ChangeSet.get_n_changes]
 *
 * Gets what happened to the row.
 *
 * Returns: the kind of change
 */
QStoreChangeOp
qstore_change_set_get_op (QStoreChangeSet *self,
                          guint            index)
{
  g_return_val_if_fail (QSTORE_IS_CHANGE_SET (self), QSTORE_CHANGE_INSERT);
  g_return_val_if_fail (index < self->changes->len, QSTORE_CHANGE_INSERT);
  return get_change (self, index)->op;
}

static GVariant *
decode_row (GBytes *row)
{
  g_autoptr(GError) error = NULL;
  GVariant *decoded;

  if (row == NULL)
    return NULL;
  decoded = qstore_codec_decode_row (row, &error);
  /* Rows are recorded by tables from their own encoding: one that does not
   * decode is a bug, not bad input. */
  if (decoded == NULL)
    g_critical ("A recorded row does not decode: %s", error->message);
  return decoded;
}

/**
 * qstore_change_set_get_old_row:
 * @self: a #QStoreChangeSet
 * @index: a change, below [method@ChangeSet.get_n_changes]
 *
 * Decodes the row as it was before the change.
 *
 * Returns: (transfer full) (nullable): a tuple of the row's values, each
 *   boxed in `v` (NULL is the empty maybe `mv`), or %NULL for an insert
 */
GVariant *
qstore_change_set_get_old_row (QStoreChangeSet *self,
                               guint            index)
{
  g_return_val_if_fail (QSTORE_IS_CHANGE_SET (self), NULL);
  g_return_val_if_fail (index < self->changes->len, NULL);
  return decode_row (get_change (self, index)->old_row);
}

/**
 * qstore_change_set_get_new_row:
 * @self: a #QStoreChangeSet
 * @index: a change, below [method@ChangeSet.get_n_changes]
 *
 * Decodes the row as it is after the change.
 *
 * Returns: (transfer full) (nullable): a tuple of the row's values, each
 *   boxed in `v`, or %NULL for a delete
 */
GVariant *
qstore_change_set_get_new_row (QStoreChangeSet *self,
                               guint            index)
{
  g_return_val_if_fail (QSTORE_IS_CHANGE_SET (self), NULL);
  g_return_val_if_fail (index < self->changes->len, NULL);
  return decode_row (get_change (self, index)->new_row);
}

/**
 * qstore_change_set_get_names:
 * @self: a #QStoreChangeSet
 * @index: a change, below [method@ChangeSet.get_n_changes]
 *
 * Gets the names of the values of the change's rows, in the order
 * [method@ChangeSet.get_old_row] gives them: the columns, then `rowid`
 * (or `_rowid_`, or `oid`, whichever no column takes) when the table
 * keeps its rowid apart from its columns.
 *
 * Returns: (transfer none) (nullable) (array zero-terminated=1): the
 *   names, or %NULL when the change set does not describe the table (one
 *   a coordinator made without a database)
 */
const char * const *
qstore_change_set_get_names (QStoreChangeSet *self,
                             guint            index)
{
  g_return_val_if_fail (QSTORE_IS_CHANGE_SET (self), NULL);
  g_return_val_if_fail (index < self->changes->len, NULL);
  return (const char * const *) get_change (self, index)->table->names;
}

static GVariant *
key_of (const QStoreChange *change,
        GBytes             *stored)
{
  g_autoptr(GVariant) row = NULL;
  g_auto(GVariantBuilder) builder = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_TUPLE);

  if (change->table->names == NULL || stored == NULL || !(row = decode_row (stored)))
    return NULL;
  for (guint i = 0; i < change->table->n_key; i++)
    {
      g_autoptr(GVariant) part = NULL;

      if (change->table->key[i] >= g_variant_n_children (row))
        return NULL;
      part = g_variant_get_child_value (row, change->table->key[i]);
      g_variant_builder_add_value (&builder, part);
    }
  return g_variant_ref_sink (g_variant_builder_end (&builder));
}

/**
 * qstore_change_set_get_key:
 * @self: a #QStoreChangeSet
 * @index: a change, below [method@ChangeSet.get_n_changes]
 *
 * Gets the key of the changed row: its PRIMARY KEY columns, or its rowid
 * when it has none, taken from the row after the change (before it, for
 * a delete). An update that changes the key gives the new one; the old
 * one is in [method@ChangeSet.get_old_row].
 *
 * Returns: (transfer full) (nullable): a tuple of the key's values, each
 *   boxed in `v`, or %NULL when the change set does not describe the
 *   table
 */
GVariant *
qstore_change_set_get_key (QStoreChangeSet *self,
                           guint            index)
{
  const QStoreChange *change;

  g_return_val_if_fail (QSTORE_IS_CHANGE_SET (self), NULL);
  g_return_val_if_fail (index < self->changes->len, NULL);

  change = get_change (self, index);
  return key_of (change, change->new_row != NULL ? change->new_row : change->old_row);
}

/**
 * qstore_change_set_get_old_key:
 * @self: a #QStoreChangeSet
 * @index: a change, below [method@ChangeSet.get_n_changes]
 *
 * Gets the key the row had before the change: where an update or a
 * delete finds it. An update that changes the key has another one in
 * [method@ChangeSet.get_key].
 *
 * Returns: (transfer full) (nullable): a tuple of the key's values, each
 *   boxed in `v`, or %NULL for an insert or when the change set does not
 *   describe the table
 */
GVariant *
qstore_change_set_get_old_key (QStoreChangeSet *self,
                               guint            index)
{
  g_return_val_if_fail (QSTORE_IS_CHANGE_SET (self), NULL);
  g_return_val_if_fail (index < self->changes->len, NULL);
  return key_of (get_change (self, index), get_change (self, index)->old_row);
}

static GVariant *
record_of (const QStoreChange *change,
           GBytes             *stored)
{
  g_auto(GVariantBuilder) builder = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_VARDICT);
  g_autoptr(GVariant) row = NULL;
  char **names = change->table->names;
  gsize n;

  if (stored == NULL || names == NULL || !(row = decode_row (stored)))
    return NULL;
  n = g_variant_n_children (row);
  for (gsize i = 0; i < n && names[i] != NULL; i++)
    {
      g_autoptr(GVariant) boxed = g_variant_get_child_value (row, i);

      g_variant_builder_add_value (&builder,
                                   g_variant_new_dict_entry (g_variant_new_string (names[i]),
                                                             boxed));
    }
  return g_variant_ref_sink (g_variant_builder_end (&builder));
}

/**
 * qstore_change_set_get_old_record:
 * @self: a #QStoreChangeSet
 * @index: a change, below [method@ChangeSet.get_n_changes]
 *
 * Gets the row as it was before the change, as a dictionary from the
 * names of [method@ChangeSet.get_names] to the values (NULL is the empty
 * maybe `mv`).
 *
 * Returns: (transfer full) (nullable): an `a{sv}`, or %NULL for an insert
 *   or when the change set does not describe the table
 */
GVariant *
qstore_change_set_get_old_record (QStoreChangeSet *self,
                                  guint            index)
{
  g_return_val_if_fail (QSTORE_IS_CHANGE_SET (self), NULL);
  g_return_val_if_fail (index < self->changes->len, NULL);
  return record_of (get_change (self, index), get_change (self, index)->old_row);
}

/**
 * qstore_change_set_get_new_record:
 * @self: a #QStoreChangeSet
 * @index: a change, below [method@ChangeSet.get_n_changes]
 *
 * Gets the row as it is after the change, as a dictionary (see
 * [method@ChangeSet.get_old_record]).
 *
 * Returns: (transfer full) (nullable): an `a{sv}`, or %NULL for a delete
 *   or when the change set does not describe the table
 */
GVariant *
qstore_change_set_get_new_record (QStoreChangeSet *self,
                                  guint            index)
{
  g_return_val_if_fail (QSTORE_IS_CHANGE_SET (self), NULL);
  g_return_val_if_fail (index < self->changes->len, NULL);
  return record_of (get_change (self, index), get_change (self, index)->new_row);
}

const QStoreChange *
qstore_change_set_peek_changes (QStoreChangeSet *self,
                                guint           *n_changes)
{
  g_return_val_if_fail (QSTORE_IS_CHANGE_SET (self), NULL);

  *n_changes = self->changes->len;
  return (const QStoreChange *) self->changes->data;
}
