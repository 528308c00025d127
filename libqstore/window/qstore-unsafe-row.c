/* qstore-unsafe-row.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "qstore-unsafe-row-private.h"

/**
 * QStoreUnsafeRow:
 *
 * One row of a page composed by [method@UnsafeWindow.query_composed_page]:
 * the winner for its key of the safe and the unsafe layer.
 */

struct _QStoreUnsafeRow
{
  GObject   parent_instance;

  char     *row_key;
  char     *value_json;
  gint64    row_version;
  char     *source_suid;
  gboolean  safe;
};

G_DEFINE_FINAL_TYPE (QStoreUnsafeRow, qstore_unsafe_row, G_TYPE_OBJECT)

static void
qstore_unsafe_row_finalize (GObject *object)
{
  QStoreUnsafeRow *self = QSTORE_UNSAFE_ROW (object);

  g_free (self->row_key);
  g_free (self->value_json);
  g_free (self->source_suid);

  G_OBJECT_CLASS (qstore_unsafe_row_parent_class)->finalize (object);
}

static void
qstore_unsafe_row_class_init (QStoreUnsafeRowClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = qstore_unsafe_row_finalize;
}

static void
qstore_unsafe_row_init (QStoreUnsafeRow *self)
{
}

QStoreUnsafeRow *
qstore_unsafe_row_new (char     *row_key,
                       char     *value_json,
                       gint64    row_version,
                       char     *source_suid,
                       gboolean  safe)
{
  QStoreUnsafeRow *self = g_object_new (QSTORE_TYPE_UNSAFE_ROW, NULL);

  self->row_key = row_key;
  self->value_json = value_json;
  self->row_version = row_version;
  self->source_suid = source_suid;
  self->safe = safe;
  return self;
}

/**
 * qstore_unsafe_row_get_row_key:
 * @self: a #QStoreUnsafeRow
 *
 * Gets the row's key.
 *
 * Returns: the row's key
 */
const char *
qstore_unsafe_row_get_row_key (QStoreUnsafeRow *self)
{
  g_return_val_if_fail (QSTORE_IS_UNSAFE_ROW (self), NULL);
  return self->row_key;
}

/**
 * qstore_unsafe_row_get_value_json:
 * @self: a #QStoreUnsafeRow
 *
 * Gets the row's value.
 *
 * Returns: the row's value, as compact JSON
 */
const char *
qstore_unsafe_row_get_value_json (QStoreUnsafeRow *self)
{
  g_return_val_if_fail (QSTORE_IS_UNSAFE_ROW (self), NULL);
  return self->value_json;
}

/**
 * qstore_unsafe_row_get_row_version:
 * @self: a #QStoreUnsafeRow
 *
 * Gets the row's version.
 *
 * Returns: the row's version
 */
gint64
qstore_unsafe_row_get_row_version (QStoreUnsafeRow *self)
{
  g_return_val_if_fail (QSTORE_IS_UNSAFE_ROW (self), 0);
  return self->row_version;
}

/**
 * qstore_unsafe_row_get_source_suid:
 * @self: a #QStoreUnsafeRow
 *
 * Gets the SUID of the state the row holds.
 *
 * Returns: the SUID of the state the row holds
 */
const char *
qstore_unsafe_row_get_source_suid (QStoreUnsafeRow *self)
{
  g_return_val_if_fail (QSTORE_IS_UNSAFE_ROW (self), NULL);
  return self->source_suid;
}

/**
 * qstore_unsafe_row_get_safe:
 * @self: a #QStoreUnsafeRow
 *
 * Tells which layer the row won from: the safe layer wins a tie of SUIDs.
 *
 * Returns: %TRUE when the row comes from the safe layer, %FALSE when from
 *   the unsafe one
 */
gboolean
qstore_unsafe_row_get_safe (QStoreUnsafeRow *self)
{
  g_return_val_if_fail (QSTORE_IS_UNSAFE_ROW (self), FALSE);
  return self->safe;
}
