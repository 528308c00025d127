/* qstore-result.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

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

/* Rows are kept as cells, one per value, with text and blobs in one byte
 * buffer: a GVariant per value costs more to make and free than the
 * statement that read it. GVariants are made when asked for; a row's
 * tuple is made on its first ask and kept, since qstore_result_get_row()
 * hands out a borrowed one. */
typedef struct
{
  guint8  type;                   /* QStoreSqlType */
  guint32 len;                    /* of text or a blob, in bytes */
  union
  {
    gint64 i;
    double d;
    gsize  offset;                /* of text or a blob in @bytes */
  };
} Cell;

struct _QStoreResultColumns
{
  gatomicrefcount ref;
  int             reprepares;     /* the statement's count when read */
  guint           n;
  char          **names;
  char          **types;          /* NULL where a column has no declared type */
};

/* A growing buffer that starts inside the result: most results are one
 * row or a few, and allocating (and freeing) two arrays for them costs
 * more than reading the row. */
typedef struct
{
  guint8 *data;
  gsize   len;
  gsize   allocated;
} Buffer;

#define INLINE_CELLS 4
#define INLINE_BYTES 64

struct _QStoreResult
{
  GObject              parent_instance;

  QStoreResultColumns *columns;
  Buffer               cells;     /* Cell, row after row */
  Buffer               bytes;     /* text (each ending in a NUL) and blobs */
  guint                n_rows;
  GPtrArray           *rows;      /* GVariant (tuple of v), made on demand */
  GPtrArray           *items;     /* QStoreRow, made on demand */
  guint8              *types;     /* each cell's type, row after row, made on demand */
  gint64               changes;
  gint64               last_insert_rowid;
  Cell                 inline_cells[INLINE_CELLS];
  guint8               inline_bytes[INLINE_BYTES];
};

static void
buffer_init (Buffer *buffer,
             void   *inline_data,
             gsize   size)
{
  buffer->data = inline_data;
  buffer->len = 0;
  buffer->allocated = size;
}

/* Makes room for @more bytes at the end; returns where they start. */
static guint8 *
buffer_grow (Buffer       *buffer,
             const void   *inline_data,
             gsize         more)
{
  gsize needed = buffer->len + more;

  if (needed > buffer->allocated)
    {
      gsize allocated = MAX (buffer->allocated * 2, needed);

      if (buffer->data == inline_data)
        {
          guint8 *data = g_malloc (allocated);

          memcpy (data, inline_data, buffer->len);
          buffer->data = data;
        }
      else
        buffer->data = g_realloc (buffer->data, allocated);
      buffer->allocated = allocated;
    }
  buffer->len = needed;
  return buffer->data + needed - more;
}

static void
buffer_clear (Buffer     *buffer,
              const void *inline_data)
{
  if (buffer->data != inline_data)
    g_free (buffer->data);
}

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

/* Column names and declared types */

static QStoreResultColumns *
columns_new (sqlite3_stmt *stmt)
{
  QStoreResultColumns *columns = g_new0 (QStoreResultColumns, 1);
  guint n = stmt != NULL ? (guint) sqlite3_column_count (stmt) : 0;

  g_atomic_ref_count_init (&columns->ref);
  columns->reprepares = stmt != NULL
                        ? sqlite3_stmt_status (stmt, SQLITE_STMTSTATUS_REPREPARE, 0) : 0;
  columns->n = n;
  columns->names = g_new0 (char *, n + 1);
  columns->types = g_new0 (char *, n + 1);
  for (guint i = 0; i < n; i++)
    {
      const char *name = sqlite3_column_name (stmt, i);

      columns->names[i] = g_strdup (name != NULL ? name : "");
      columns->types[i] = g_strdup (sqlite3_column_decltype (stmt, i));
    }
  return columns;
}

static QStoreResultColumns *
columns_ref (QStoreResultColumns *columns)
{
  g_atomic_ref_count_inc (&columns->ref);
  return columns;
}

void
qstore_result_columns_unref (QStoreResultColumns *columns)
{
  if (columns == NULL || !g_atomic_ref_count_dec (&columns->ref))
    return;
  for (guint i = 0; i < columns->n; i++)
    {
      g_free (columns->names[i]);
      g_free (columns->types[i]);
    }
  g_free (columns->names);
  g_free (columns->types);
  g_free (columns);
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
  return QSTORE_RESULT (model)->n_rows;
}

static void
unref_item (gpointer item)
{
  if (item != NULL)
    g_object_unref (item);
}

static void
unref_row (gpointer row)
{
  if (row != NULL)
    g_variant_unref (row);
}

static gpointer
qstore_result_get_item (GListModel *model,
                        guint       position)
{
  QStoreResult *self = QSTORE_RESULT (model);

  if (position >= self->n_rows)
    return NULL;

  /* Items are made once and kept, so a view sees the same object each
   * time it asks. */
  if (self->items == NULL)
    {
      self->items = g_ptr_array_new_with_free_func (unref_item);
      g_ptr_array_set_size (self->items, self->n_rows);
    }
  if (g_ptr_array_index (self->items, position) == NULL)
    g_ptr_array_index (self->items, position) =
      g_object_new (QSTORE_TYPE_ROW,
                    "values", qstore_result_get_row (self, position),
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

  qstore_result_clear (self);
  buffer_clear (&self->cells, self->inline_cells);
  buffer_clear (&self->bytes, self->inline_bytes);

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
  buffer_init (&self->cells, self->inline_cells, sizeof self->inline_cells);
  buffer_init (&self->bytes, self->inline_bytes, sizeof self->inline_bytes);
}

QStoreResult *
qstore_result_new (void)
{
  return g_object_new (QSTORE_TYPE_RESULT, NULL);
}

void
qstore_result_clear (QStoreResult *self)
{
  g_clear_pointer (&self->columns, qstore_result_columns_unref);
  /* The buffers keep what they grew to, for the next run's rows. */
  self->cells.len = 0;
  self->bytes.len = 0;
  self->n_rows = 0;
  g_clear_pointer (&self->rows, g_ptr_array_unref);
  g_clear_pointer (&self->items, g_ptr_array_unref);
  g_clear_pointer (&self->types, g_free);
  self->changes = 0;
  self->last_insert_rowid = 0;
}

QStoreResult *
qstore_result_new_for_statement (sqlite3_stmt *stmt)
{
  QStoreResult *self = qstore_result_new ();

  self->columns = columns_new (stmt);
  return self;
}

void
qstore_result_take_columns (QStoreResult         *self,
                            sqlite3_stmt         *stmt,
                            QStoreResultColumns **shared)
{
  g_return_if_fail (self->columns == NULL);

  /* A statement SQLite prepared again after a schema change may name
   * other columns than the ones read before. */
  if (shared != NULL && *shared != NULL &&
      (*shared)->reprepares == sqlite3_stmt_status (stmt, SQLITE_STMTSTATUS_REPREPARE, 0))
    {
      self->columns = columns_ref (*shared);
      return;
    }
  self->columns = columns_new (stmt);
  if (shared != NULL)
    {
      qstore_result_columns_unref (*shared);
      *shared = columns_ref (self->columns);
    }
}

/* Appends @len bytes at @data and a NUL, returning where they start. */
static gsize
append_bytes (QStoreResult *self,
              const void   *data,
              gsize         len)
{
  guint8 *to = buffer_grow (&self->bytes, self->inline_bytes, len + 1);

  if (len > 0)
    memcpy (to, data, len);
  to[len] = '\0';
  return to - self->bytes.data;
}

void
qstore_result_add_row (QStoreResult *self,
                       sqlite3_stmt *stmt)
{
  guint n_columns = self->columns->n;
  Cell *cells;

  cells = (Cell *) buffer_grow (&self->cells, self->inline_cells, n_columns * sizeof (Cell));

  for (guint i = 0; i < n_columns; i++)
    {
      Cell *cell = &cells[i];

      switch (sqlite3_column_type (stmt, i))
        {
        case SQLITE_INTEGER:
          cell->type = QSTORE_SQL_TYPE_INTEGER;
          cell->i = sqlite3_column_int64 (stmt, i);
          break;

        case SQLITE_FLOAT:
          cell->type = QSTORE_SQL_TYPE_REAL;
          cell->d = sqlite3_column_double (stmt, i);
          break;

        case SQLITE_TEXT:
          {
            const char *text = (const char *) sqlite3_column_text (stmt, i);
            gsize len = sqlite3_column_bytes (stmt, i);

            cell->type = QSTORE_SQL_TYPE_TEXT;
            /* GVariant strings are valid UTF-8 without NULs; SQLite's
             * text need be neither. */
            if (g_utf8_validate_len (text, len, NULL))
              {
                cell->offset = append_bytes (self, text, len);
                cell->len = len;
              }
            else
              {
                g_autofree char *valid = g_utf8_make_valid (text, len);

                cell->len = strlen (valid);
                cell->offset = append_bytes (self, valid, cell->len);
              }
          }
          break;

        case SQLITE_BLOB:
          {
            const void *data = sqlite3_column_blob (stmt, i);

            cell->type = QSTORE_SQL_TYPE_BLOB;
            cell->len = sqlite3_column_bytes (stmt, i);
            cell->offset = append_bytes (self, data, cell->len);
          }
          break;

        default:
          cell->type = QSTORE_SQL_TYPE_NULL;
          break;
        }
    }
  self->n_rows++;
}

void
qstore_result_set_counts (QStoreResult *self,
                          gint64        changes,
                          gint64        last_insert_rowid)
{
  self->changes = changes;
  self->last_insert_rowid = last_insert_rowid;
}

/* The cell at @row, @column, or NULL after a warning when out of range. */
static const Cell *
cell_at (QStoreResult *self,
         guint         row,
         guint         column)
{
  g_return_val_if_fail (QSTORE_IS_RESULT (self), NULL);
  g_return_val_if_fail (row < self->n_rows, NULL);
  g_return_val_if_fail (column < self->columns->n, NULL);

  return (const Cell *) self->cells.data + (gsize) row * self->columns->n + column;
}

/* A new reference, sunk, to the value of one cell. */
static GVariant *
cell_to_variant (QStoreResult *self,
                 const Cell   *cell)
{
  GVariant *value;

  switch (cell->type)
    {
    case QSTORE_SQL_TYPE_INTEGER:
      value = g_variant_new_int64 (cell->i);
      break;

    case QSTORE_SQL_TYPE_REAL:
      value = g_variant_new_double (cell->d);
      break;

    case QSTORE_SQL_TYPE_TEXT:
      value = g_variant_new_string ((const char *) self->bytes.data + cell->offset);
      break;

    case QSTORE_SQL_TYPE_BLOB:
      value = g_variant_new_fixed_array (G_VARIANT_TYPE_BYTE,
                                         self->bytes.data + cell->offset, cell->len, 1);
      break;

    default:
      value = qstore_value_new_null ();
      break;
    }
  return g_variant_ref_sink (value);
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

  return self->columns != NULL ? self->columns->n : 0;
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
  g_return_val_if_fail (column < qstore_result_get_n_columns (self), NULL);

  return self->columns->names[column];
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
  g_return_val_if_fail (column < qstore_result_get_n_columns (self), NULL);

  return self->columns->types[column];
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

  return self->n_rows;
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
  g_return_val_if_fail (row < self->n_rows, NULL);

  if (self->rows == NULL)
    {
      self->rows = g_ptr_array_new_with_free_func (unref_row);
      g_ptr_array_set_size (self->rows, self->n_rows);
    }
  if (g_ptr_array_index (self->rows, row) == NULL)
    {
      guint n_columns = self->columns->n;
      g_autofree GVariant **children = g_new (GVariant *, MAX (n_columns, 1));

      for (guint i = 0; i < n_columns; i++)
        {
          g_autoptr(GVariant) value = cell_to_variant (self, cell_at (self, row, i));

          children[i] = g_variant_new_variant (value);
        }
      g_ptr_array_index (self->rows, row) =
        g_variant_ref_sink (g_variant_new_tuple (children, n_columns));
    }
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
  const Cell *cell = cell_at (self, row, column);

  return cell != NULL ? cell_to_variant (self, cell) : NULL;
}

/**
 * qstore_result_get_value_type:
 * @self: a #QStoreResult
 * @row: a row index
 * @column: a column index
 *
 * Gets the type of one value. With it and the typed getters below a
 * script reads a value without a #GVariant, as SQLite's column functions
 * do: the quicker way where every row counts.
 *
 * Returns: the value's type
 */
QStoreSqlType
qstore_result_get_value_type (QStoreResult *self,
                              guint         row,
                              guint         column)
{
  const Cell *cell = cell_at (self, row, column);

  return cell != NULL ? cell->type : QSTORE_SQL_TYPE_NULL;
}

/**
 * qstore_result_get_row_types:
 * @self: a #QStoreResult
 * @row: a row index
 * @n_columns: (out): the number of columns
 *
 * Gets the type of every value of a row at once: a binding reads a row
 * with one call per value after it, instead of two.
 *
 * Returns: (array length=n_columns) (transfer none): one #QStoreSqlType
 *   per column, valid as long as @self
 */
const guint8 *
qstore_result_get_row_types (QStoreResult *self,
                             guint         row,
                             gsize        *n_columns)
{
  gsize n_cells;

  g_return_val_if_fail (QSTORE_IS_RESULT (self), NULL);
  g_return_val_if_fail (row < self->n_rows, NULL);
  g_return_val_if_fail (n_columns != NULL, NULL);

  n_cells = (gsize) self->n_rows * self->columns->n;
  if (self->types == NULL)
    {
      const Cell *cells = (const Cell *) self->cells.data;

      self->types = g_malloc (MAX (n_cells, 1));
      for (gsize i = 0; i < n_cells; i++)
        self->types[i] = cells[i].type;
    }
  *n_columns = self->columns->n;
  return self->types + (gsize) row * self->columns->n;
}

/**
 * qstore_result_get_int64:
 * @self: a #QStoreResult
 * @row: a row index
 * @column: a column index
 *
 * Gets an integer value.
 *
 * Returns: the value when it is %QSTORE_SQL_TYPE_INTEGER, else 0
 */
gint64
qstore_result_get_int64 (QStoreResult *self,
                         guint         row,
                         guint         column)
{
  const Cell *cell = cell_at (self, row, column);

  return cell != NULL && cell->type == QSTORE_SQL_TYPE_INTEGER ? cell->i : 0;
}

/**
 * qstore_result_get_double:
 * @self: a #QStoreResult
 * @row: a row index
 * @column: a column index
 *
 * Gets a real value, or an integer one as a double.
 *
 * Returns: the value when it is %QSTORE_SQL_TYPE_REAL or
 *   %QSTORE_SQL_TYPE_INTEGER, else 0
 */
double
qstore_result_get_double (QStoreResult *self,
                          guint         row,
                          guint         column)
{
  const Cell *cell = cell_at (self, row, column);

  if (cell == NULL)
    return 0;
  if (cell->type == QSTORE_SQL_TYPE_REAL)
    return cell->d;
  return cell->type == QSTORE_SQL_TYPE_INTEGER ? (double) cell->i : 0;
}

/**
 * qstore_result_get_text:
 * @self: a #QStoreResult
 * @row: a row index
 * @column: a column index
 *
 * Gets a text value, as [method@Result.get_value] gives it: valid UTF-8,
 * a NUL or a byte that is not UTF-8 replaced by U+FFFD.
 *
 * Returns: (nullable): the text, valid as long as @self, when the value is
 *   %QSTORE_SQL_TYPE_TEXT, else %NULL
 */
const char *
qstore_result_get_text (QStoreResult *self,
                        guint         row,
                        guint         column)
{
  const Cell *cell = cell_at (self, row, column);

  if (cell == NULL || cell->type != QSTORE_SQL_TYPE_TEXT)
    return NULL;
  return (const char *) self->bytes.data + cell->offset;
}

/**
 * qstore_result_get_blob:
 * @self: a #QStoreResult
 * @row: a row index
 * @column: a column index
 *
 * Gets a blob value.
 *
 * Returns: (transfer full) (nullable): a copy of the bytes when the value
 *   is %QSTORE_SQL_TYPE_BLOB, else %NULL
 */
GBytes *
qstore_result_get_blob (QStoreResult *self,
                        guint         row,
                        guint         column)
{
  const Cell *cell = cell_at (self, row, column);

  if (cell == NULL || cell->type != QSTORE_SQL_TYPE_BLOB)
    return NULL;
  return g_bytes_new (self->bytes.data + cell->offset, cell->len);
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
