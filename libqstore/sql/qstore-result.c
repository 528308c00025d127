/* qstore-result.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "qstore-codec.h"
#include "qstore-result-private.h"

/**
 * QStoreRow:
 *
 * One row of a [class@Result]: a tuple of `v`, one per column, each boxing
 * an integer (`x`), a real (`d`), text (`s`), a blob (`ay`) or NULL (the
 * empty maybe, see qstore_value_is_null()). Rows are the items of the
 * result's #GListModel, so a #GtkColumnView can show them.
 */
struct _QStoreRow
{
  GObject   parent_instance;

  GVariant *values;
};

/**
 * QStoreResult:
 *
 * What one SQL statement returned: its column names and declared types,
 * its rows, and how many rows it changed. A result is immutable. It is a
 * #GListModel of [class@Row].
 */
struct _QStoreResult
{
  GObject     parent_instance;

  GPtrArray  *names;    /* char * */
  GPtrArray  *types;    /* char *, NULL where the column has no declared type */
  GPtrArray  *rows;     /* GVariant (tuple of v) */
  GPtrArray  *items;    /* QStoreRow, made on demand; NULL until asked for */
  gint64      changes;
  gint64      last_insert_rowid;
};

enum {
  ROW_PROP_0,
  ROW_PROP_VALUES,
  ROW_N_PROPS
};

static GParamSpec *row_properties[ROW_N_PROPS];

G_DEFINE_FINAL_TYPE (QStoreRow, qstore_row, G_TYPE_OBJECT)

static void
qstore_row_finalize (GObject *object)
{
  QStoreRow *self = QSTORE_ROW (object);

  g_clear_pointer (&self->values, g_variant_unref);

  G_OBJECT_CLASS (qstore_row_parent_class)->finalize (object);
}

static void
qstore_row_get_property (GObject    *object,
                         guint       prop_id,
                         GValue     *value,
                         GParamSpec *pspec)
{
  QStoreRow *self = QSTORE_ROW (object);

  switch (prop_id)
    {
    case ROW_PROP_VALUES:
      g_value_set_variant (value, self->values);
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
qstore_row_set_property (GObject      *object,
                         guint         prop_id,
                         const GValue *value,
                         GParamSpec   *pspec)
{
  QStoreRow *self = QSTORE_ROW (object);

  switch (prop_id)
    {
    case ROW_PROP_VALUES:
      g_clear_pointer (&self->values, g_variant_unref);
      self->values = g_value_dup_variant (value);
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
qstore_row_class_init (QStoreRowClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = qstore_row_finalize;
  object_class->get_property = qstore_row_get_property;
  object_class->set_property = qstore_row_set_property;

  /**
   * QStoreRow:values:
   *
   * The row's values: a tuple of `v`, one per column.
   */
  row_properties[ROW_PROP_VALUES] =
    g_param_spec_variant ("values", NULL, NULL,
                          G_VARIANT_TYPE_TUPLE, NULL,
                          G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY |
                          G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);

  g_object_class_install_properties (object_class, ROW_N_PROPS, row_properties);
}

static void
qstore_row_init (QStoreRow *self)
{
}

/**
 * qstore_row_get_values:
 * @self: a #QStoreRow
 *
 * Gets every value of the row.
 *
 * Returns: (transfer none): a tuple of `v`, one per column
 */
GVariant *
qstore_row_get_values (QStoreRow *self)
{
  g_return_val_if_fail (QSTORE_IS_ROW (self), NULL);

  return self->values;
}

/**
 * qstore_row_get_value:
 * @self: a #QStoreRow
 * @column: a column position
 *
 * Gets one value of the row.
 *
 * Returns: (transfer full): the value, unboxed from its `v`: `x`, `d`, `s`,
 *   `ay`, or the NULL maybe
 */
GVariant *
qstore_row_get_value (QStoreRow *self,
                      guint      column)
{
  g_autoptr(GVariant) boxed = NULL;

  g_return_val_if_fail (QSTORE_IS_ROW (self), NULL);
  g_return_val_if_fail (column < g_variant_n_children (self->values), NULL);

  boxed = g_variant_get_child_value (self->values, column);
  return g_variant_get_variant (boxed);
}

/* The result */

static void qstore_result_list_model_init (GListModelInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE (QStoreResult, qstore_result, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (G_TYPE_LIST_MODEL,
                                                      qstore_result_list_model_init))

static GType
qstore_result_get_item_type (GListModel *model)
{
  return QSTORE_TYPE_ROW;
}

static guint
qstore_result_get_n_items (GListModel *model)
{
  return QSTORE_RESULT (model)->rows->len;
}

static void
unref_item (gpointer item)
{
  if (item != NULL)
    g_object_unref (item);
}

static gpointer
qstore_result_get_item (GListModel *model,
                        guint       position)
{
  QStoreResult *self = QSTORE_RESULT (model);

  if (position >= self->rows->len)
    return NULL;

  /* Items are made once and kept, so a view sees the same object each
   * time it asks. */
  if (self->items == NULL)
    {
      self->items = g_ptr_array_new_with_free_func (unref_item);
      g_ptr_array_set_size (self->items, self->rows->len);
    }
  if (g_ptr_array_index (self->items, position) == NULL)
    g_ptr_array_index (self->items, position) =
      g_object_new (QSTORE_TYPE_ROW,
                    "values", g_ptr_array_index (self->rows, position),
                    NULL);

  return g_object_ref (g_ptr_array_index (self->items, position));
}

static void
qstore_result_list_model_init (GListModelInterface *iface)
{
  iface->get_item_type = qstore_result_get_item_type;
  iface->get_n_items = qstore_result_get_n_items;
  iface->get_item = qstore_result_get_item;
}

static void
qstore_result_finalize (GObject *object)
{
  QStoreResult *self = QSTORE_RESULT (object);

  g_clear_pointer (&self->names, g_ptr_array_unref);
  g_clear_pointer (&self->types, g_ptr_array_unref);
  g_clear_pointer (&self->rows, g_ptr_array_unref);
  g_clear_pointer (&self->items, g_ptr_array_unref);

  G_OBJECT_CLASS (qstore_result_parent_class)->finalize (object);
}

static void
qstore_result_class_init (QStoreResultClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = qstore_result_finalize;
}

static void
qstore_result_init (QStoreResult *self)
{
  self->names = g_ptr_array_new_with_free_func (g_free);
  self->types = g_ptr_array_new_with_free_func (g_free);
  self->rows = g_ptr_array_new_with_free_func ((GDestroyNotify) g_variant_unref);
}

QStoreResult *
qstore_result_new_for_statement (sqlite3_stmt *stmt)
{
  QStoreResult *self = g_object_new (QSTORE_TYPE_RESULT, NULL);
  int n_columns = stmt != NULL ? sqlite3_column_count (stmt) : 0;

  for (int i = 0; i < n_columns; i++)
    {
      const char *name = sqlite3_column_name (stmt, i);

      g_ptr_array_add (self->names, g_strdup (name != NULL ? name : ""));
      g_ptr_array_add (self->types, g_strdup (sqlite3_column_decltype (stmt, i)));
    }

  return self;
}

GVariant *
qstore_result_column_to_variant (sqlite3_stmt *stmt,
                                 int           column)
{
  switch (sqlite3_column_type (stmt, column))
    {
    case SQLITE_INTEGER:
      return g_variant_new_int64 (sqlite3_column_int64 (stmt, column));

    case SQLITE_FLOAT:
      return g_variant_new_double (sqlite3_column_double (stmt, column));

    case SQLITE_TEXT:
      {
        const char *text = (const char *) sqlite3_column_text (stmt, column);
        gsize len = sqlite3_column_bytes (stmt, column);

        /* GVariant strings are valid UTF-8 without NULs; SQLite's text
         * need be neither. */
        if (g_utf8_validate_len (text, len, NULL))
          return g_variant_new_string (text);
        return g_variant_new_take_string (g_utf8_make_valid (text, len));
      }

    case SQLITE_BLOB:
      {
        const void *data = sqlite3_column_blob (stmt, column);
        gsize len = sqlite3_column_bytes (stmt, column);

        return g_variant_new_fixed_array (G_VARIANT_TYPE_BYTE, data, len, 1);
      }

    case SQLITE_NULL:
    default:
      return qstore_value_new_null ();
    }
}

void
qstore_result_add_row (QStoreResult *self,
                       sqlite3_stmt *stmt)
{
  g_autofree GVariant **children = NULL;
  guint n_columns = self->names->len;
  GVariant *row;

  children = g_new (GVariant *, n_columns);
  for (guint i = 0; i < n_columns; i++)
    children[i] = g_variant_new_variant (qstore_result_column_to_variant (stmt, i));

  row = g_variant_ref_sink (g_variant_new_tuple (children, n_columns));
  g_ptr_array_add (self->rows, row);
}

void
qstore_result_set_counts (QStoreResult *self,
                          gint64        changes,
                          gint64        last_insert_rowid)
{
  self->changes = changes;
  self->last_insert_rowid = last_insert_rowid;
}

/**
 * qstore_result_get_n_columns:
 * @self: a #QStoreResult
 *
 * Gets the number of columns of the result (0 for statements that return
 * no rows, such as INSERT).
 *
 * Returns: the number of columns
 */
guint
qstore_result_get_n_columns (QStoreResult *self)
{
  g_return_val_if_fail (QSTORE_IS_RESULT (self), 0);

  return self->names->len;
}

/**
 * qstore_result_get_column_name:
 * @self: a #QStoreResult
 * @column: a column position
 *
 * Gets a column's name, as SQLite names it (the alias of `AS`, else the
 * expression's text).
 *
 * Returns: (transfer none): the name
 */
const char *
qstore_result_get_column_name (QStoreResult *self,
                               guint         column)
{
  g_return_val_if_fail (QSTORE_IS_RESULT (self), NULL);
  g_return_val_if_fail (column < self->names->len, NULL);

  return g_ptr_array_index (self->names, column);
}

/**
 * qstore_result_get_column_type:
 * @self: a #QStoreResult
 * @column: a column position
 *
 * Gets the declared type of a column that comes straight from a table
 * column, such as `INTEGER` or `VARCHAR(20)`.
 *
 * Returns: (transfer none) (nullable): the declared type, or %NULL for a
 *   column computed by an expression or declared without a type
 */
const char *
qstore_result_get_column_type (QStoreResult *self,
                               guint         column)
{
  g_return_val_if_fail (QSTORE_IS_RESULT (self), NULL);
  g_return_val_if_fail (column < self->types->len, NULL);

  return g_ptr_array_index (self->types, column);
}

/**
 * qstore_result_get_n_rows:
 * @self: a #QStoreResult
 *
 * Gets the number of rows returned.
 *
 * Returns: the number of rows
 */
guint
qstore_result_get_n_rows (QStoreResult *self)
{
  g_return_val_if_fail (QSTORE_IS_RESULT (self), 0);

  return self->rows->len;
}

/**
 * qstore_result_get_row:
 * @self: a #QStoreResult
 * @row: a row position
 *
 * Gets one row.
 *
 * Returns: (transfer none): a tuple of `v`, one per column
 */
GVariant *
qstore_result_get_row (QStoreResult *self,
                       guint         row)
{
  g_return_val_if_fail (QSTORE_IS_RESULT (self), NULL);
  g_return_val_if_fail (row < self->rows->len, NULL);

  return g_ptr_array_index (self->rows, row);
}

/**
 * qstore_result_get_value:
 * @self: a #QStoreResult
 * @row: a row position
 * @column: a column position
 *
 * Gets one value.
 *
 * Returns: (transfer full): the value, unboxed from its `v`: `x`, `d`, `s`,
 *   `ay`, or the NULL maybe (see qstore_value_is_null())
 */
GVariant *
qstore_result_get_value (QStoreResult *self,
                         guint         row,
                         guint         column)
{
  g_autoptr(GVariant) boxed = NULL;

  g_return_val_if_fail (QSTORE_IS_RESULT (self), NULL);
  g_return_val_if_fail (row < self->rows->len, NULL);
  g_return_val_if_fail (column < self->names->len, NULL);

  boxed = g_variant_get_child_value (g_ptr_array_index (self->rows, row), column);
  return g_variant_get_variant (boxed);
}

/**
 * qstore_result_get_changes:
 * @self: a #QStoreResult
 *
 * Gets how many rows the statement inserted, updated or deleted, as
 * SQLite's `changes()` counts them (rows skipped by `OR IGNORE` do not
 * count).
 *
 * Returns: the number of changed rows
 */
gint64
qstore_result_get_changes (QStoreResult *self)
{
  g_return_val_if_fail (QSTORE_IS_RESULT (self), 0);

  return self->changes;
}

/**
 * qstore_result_get_last_insert_rowid:
 * @self: a #QStoreResult
 *
 * Gets `last_insert_rowid()` after the statement: the rowid (or INTEGER
 * PRIMARY KEY) of the last row inserted into a table keyed by rowid.
 *
 * Returns: the rowid
 */
gint64
qstore_result_get_last_insert_rowid (QStoreResult *self)
{
  g_return_val_if_fail (QSTORE_IS_RESULT (self), 0);

  return self->last_insert_rowid;
}
