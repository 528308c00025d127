/* qstore-inspector-row.c: one row of a table or view, and its values as text
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <glib/gi18n.h>
#include <json-glib/json-glib.h>
#include <math.h>
#include <string.h>

#include "qstore-inspector-row.h"

/* A row is a placeholder until its page is read: the model hands rows
 * out at once and fills them later, and whoever shows one listens to
 * ::notify::loaded. Values come as the codec decodes them (a tuple of
 * `v`): NULL, int64, double, text, or bytes for a blob.
 *
 * Each value reads three ways: shortened on one line for a table cell;
 * whole, for the clipboard (as text, tab-separated, or as JSON); and as a
 * hex dump for a blob in the row's details. */

struct _QStoreInspectorRow
{
  GObject   parent_instance;

  guint     position;
  GVariant *values;       /* a tuple of `v`, NULL until loaded */
  char     *error;        /* why the row did not decode */
  gboolean  loaded;
};

enum
{
  PROP_0,
  PROP_POSITION,
  PROP_LOADED,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

G_DEFINE_FINAL_TYPE (QStoreInspectorRow, qstore_inspector_row, G_TYPE_OBJECT)

static void
qstore_inspector_row_finalize (GObject *object)
{
  QStoreInspectorRow *self = QSTORE_INSPECTOR_ROW (object);

  g_clear_pointer (&self->values, g_variant_unref);
  g_clear_pointer (&self->error, g_free);

  G_OBJECT_CLASS (qstore_inspector_row_parent_class)->finalize (object);
}

static void
qstore_inspector_row_get_property (GObject    *object,
                                   guint       prop_id,
                                   GValue     *value,
                                   GParamSpec *pspec)
{
  QStoreInspectorRow *self = QSTORE_INSPECTOR_ROW (object);

  switch (prop_id)
    {
    case PROP_POSITION:
      g_value_set_uint (value, self->position);
      break;
    case PROP_LOADED:
      g_value_set_boolean (value, self->loaded);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
qstore_inspector_row_class_init (QStoreInspectorRowClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = qstore_inspector_row_finalize;
  object_class->get_property = qstore_inspector_row_get_property;

  properties[PROP_POSITION] =
    g_param_spec_uint ("position", NULL, NULL, 0, G_MAXUINT, 0,
                       G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  /* Notified each time the row is filled: when its page is read, and
   * again when a refresh reads it anew. */
  properties[PROP_LOADED] =
    g_param_spec_boolean ("loaded", NULL, NULL, FALSE,
                          G_PARAM_READABLE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);
  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
qstore_inspector_row_init (QStoreInspectorRow *self)
{
}

QStoreInspectorRow *
qstore_inspector_row_new (guint position)
{
  QStoreInspectorRow *self = g_object_new (QSTORE_INSPECTOR_TYPE_ROW, NULL);

  self->position = position;
  return self;
}

/* Sets the row's values (a tuple of `v`), or why it did not decode. */
void
qstore_inspector_row_fill (QStoreInspectorRow *self,
                           GVariant           *values,
                           const char         *error)
{
  g_return_if_fail (QSTORE_INSPECTOR_IS_ROW (self));

  g_clear_pointer (&self->values, g_variant_unref);
  g_clear_pointer (&self->error, g_free);
  self->values = values ? g_variant_ref (values) : NULL;
  self->error = g_strdup (error);
  self->loaded = TRUE;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_LOADED]);
}

guint
qstore_inspector_row_get_position (QStoreInspectorRow *self)
{
  g_return_val_if_fail (QSTORE_INSPECTOR_IS_ROW (self), 0);
  return self->position;
}

gboolean
qstore_inspector_row_is_loaded (QStoreInspectorRow *self)
{
  g_return_val_if_fail (QSTORE_INSPECTOR_IS_ROW (self), FALSE);
  return self->loaded;
}

/* Returns: (transfer none) (nullable): the row's values, a tuple of `v` */
GVariant *
qstore_inspector_row_get_values (QStoreInspectorRow *self)
{
  g_return_val_if_fail (QSTORE_INSPECTOR_IS_ROW (self), NULL);
  return self->values;
}

const char *
qstore_inspector_row_get_error (QStoreInspectorRow *self)
{
  g_return_val_if_fail (QSTORE_INSPECTOR_IS_ROW (self), NULL);
  return self->error;
}

/* Returns: (transfer full) (nullable): the value of @column, unboxed */
GVariant *
qstore_inspector_row_get_value (QStoreInspectorRow *self,
                                guint               column)
{
  g_autoptr(GVariant) boxed = NULL;

  g_return_val_if_fail (QSTORE_INSPECTOR_IS_ROW (self), NULL);

  if (self->values == NULL || column >= g_variant_n_children (self->values))
    return NULL;
  boxed = g_variant_get_child_value (self->values, column);
  if (g_variant_is_of_type (boxed, G_VARIANT_TYPE_VARIANT))
    return g_variant_get_variant (boxed);
  return g_steal_pointer (&boxed);
}

/* Values */

/* Long text is cut for a table cell: the whole value is in the row's
 * details, and a cell only needs to be recognisable. */
#define MAX_CELL_CHARS 200

static gboolean
is_null (GVariant *value)
{
  return value == NULL || qstore_value_is_null (value);
}

/* The fewest digits that read back as the same double: 0.1, not
 * 0.10000000000000001. */
static char *
format_double (double value)
{
  char buffer[G_ASCII_DTOSTR_BUF_SIZE];

  g_ascii_formatd (buffer, sizeof buffer, "%.15g", value);
  if (g_ascii_strtod (buffer, NULL) != value)
    g_ascii_formatd (buffer, sizeof buffer, "%.17g", value);
  return g_strdup (buffer);
}

/**
 * qstore_inspector_format_value:
 * @value: a value as the codec decodes it
 * @is_null: (out) (optional): whether @value is SQL NULL
 * @is_number: (out) (optional): whether @value is an integer or a real
 *
 * Formats a value for one table cell: on one line, long text shortened,
 * blobs as their size and first bytes.
 *
 * Returns: (transfer full): the text to show
 */
char *
qstore_inspector_format_value (GVariant *value,
                               gboolean *null_out,
                               gboolean *is_number)
{
  if (null_out)
    *null_out = FALSE;
  if (is_number)
    *is_number = FALSE;

  if (is_null (value))
    {
      if (null_out)
        *null_out = TRUE;
      return g_strdup ("NULL");
    }

  if (g_variant_is_of_type (value, G_VARIANT_TYPE_INT64))
    {
      if (is_number)
        *is_number = TRUE;
      return g_strdup_printf ("%" G_GINT64_FORMAT, g_variant_get_int64 (value));
    }

  if (g_variant_is_of_type (value, G_VARIANT_TYPE_DOUBLE))
    {
      char buffer[G_ASCII_DTOSTR_BUF_SIZE];

      if (is_number)
        *is_number = TRUE;
      return g_strdup (g_ascii_formatd (buffer, sizeof buffer, "%.15g",
                                        g_variant_get_double (value)));
    }

  if (g_variant_is_of_type (value, G_VARIANT_TYPE_STRING))
    {
      const char *text = g_variant_get_string (value, NULL);
      GString *line = g_string_new (NULL);
      glong n_chars = 0;

      for (const char *p = text; *p != '\0' && n_chars < MAX_CELL_CHARS; p = g_utf8_next_char (p), n_chars++)
        {
          gunichar c = g_utf8_get_char (p);

          /* One line per cell: line breaks and tabs show as their symbols. */
          if (c == '\n')
            g_string_append (line, "⏎");
          else if (c == '\t')
            g_string_append (line, "⇥");
          else
            g_string_append_unichar (line, c);
        }
      if (g_utf8_strlen (text, -1) > MAX_CELL_CHARS)
        g_string_append (line, "…");
      return g_string_free (line, FALSE);
    }

  if (g_variant_is_of_type (value, G_VARIANT_TYPE_BYTESTRING))
    {
      gsize len;
      const guint8 *data = g_variant_get_fixed_array (value, &len, 1);
      GString *text = g_string_new (NULL);
      g_autofree char *size = g_format_size_full (len, G_FORMAT_SIZE_LONG_FORMAT);

      /* Translators: a blob value in a table cell; %s is its size, such as "12 bytes" */
      g_string_append_printf (text, _("blob, %s"), size);
      if (len > 0)
        g_string_append (text, ": ");
      for (gsize i = 0; i < MIN (len, 16); i++)
        g_string_append_printf (text, "%02x", data[i]);
      if (len > 16)
        g_string_append (text, "…");
      return g_string_free (text, FALSE);
    }

  return g_variant_print (value, FALSE);
}

/* Returns: the SQL storage class of @value: NULL, INTEGER, REAL, TEXT or BLOB */
const char *
qstore_inspector_value_type_name (GVariant *value)
{
  if (is_null (value))
    return "NULL";
  if (g_variant_is_of_type (value, G_VARIANT_TYPE_INT64))
    return "INTEGER";
  if (g_variant_is_of_type (value, G_VARIANT_TYPE_DOUBLE))
    return "REAL";
  if (g_variant_is_of_type (value, G_VARIANT_TYPE_STRING))
    return "TEXT";
  return "BLOB";
}

/**
 * qstore_inspector_value_to_text:
 * @value: (nullable): a value as the codec decodes it
 *
 * The whole value as text, as the clipboard takes it: text as it is,
 * numbers in full, a blob as an SQL blob literal (`x'00ff'`), NULL as
 * nothing (as spreadsheets read an empty cell).
 *
 * Returns: (transfer full): the text
 */
char *
qstore_inspector_value_to_text (GVariant *value)
{
  if (is_null (value))
    return g_strdup ("");
  if (g_variant_is_of_type (value, G_VARIANT_TYPE_INT64))
    return g_strdup_printf ("%" G_GINT64_FORMAT, g_variant_get_int64 (value));
  if (g_variant_is_of_type (value, G_VARIANT_TYPE_DOUBLE))
    return format_double (g_variant_get_double (value));
  if (g_variant_is_of_type (value, G_VARIANT_TYPE_STRING))
    return g_variant_dup_string (value, NULL);
  if (g_variant_is_of_type (value, G_VARIANT_TYPE_BYTESTRING))
    {
      gsize len;
      const guint8 *data = g_variant_get_fixed_array (value, &len, 1);
      GString *text = g_string_sized_new (len * 2 + 3);

      g_string_append (text, "x'");
      for (gsize i = 0; i < len; i++)
        g_string_append_printf (text, "%02x", data[i]);
      g_string_append_c (text, '\'');
      return g_string_free (text, FALSE);
    }
  return g_variant_print (value, FALSE);
}

/**
 * qstore_inspector_hex_dump:
 * @bytes: a blob
 * @max_bytes: how much of it to show at most
 *
 * Returns: (transfer full): 16 bytes a line: their offset, their hex and
 *   the printable ones as ASCII; a last line says how much more there is
 */
char *
qstore_inspector_hex_dump (GBytes *bytes,
                           gsize   max_bytes)
{
  gsize len;
  const guint8 *data = g_bytes_get_data (bytes, &len);
  gsize shown = MIN (len, max_bytes);
  GString *dump = g_string_new (NULL);

  for (gsize line = 0; line < shown; line += 16)
    {
      g_string_append_printf (dump, "%08" G_GSIZE_MODIFIER "x ", line);
      for (gsize i = line; i < line + 16; i++)
        {
          if (i % 8 == 0)
            g_string_append_c (dump, ' ');
          if (i < shown)
            g_string_append_printf (dump, "%02x ", data[i]);
          else
            g_string_append (dump, "   ");
        }
      g_string_append (dump, " |");
      for (gsize i = line; i < line + 16 && i < shown; i++)
        g_string_append_c (dump, g_ascii_isprint (data[i]) ? (char) data[i] : '.');
      g_string_append (dump, "|\n");
    }
  if (shown < len)
    {
      g_autofree char *more = g_format_size_full (len - shown, G_FORMAT_SIZE_LONG_FORMAT);

      /* Translators: the end of a blob's hex dump; %s is the size left
       * out, such as “1.2 MB (1,234,567 bytes)” */
      g_string_append_printf (dump, _("… and %s more"), more);
    }
  else if (dump->len > 0)
    g_string_truncate (dump, dump->len - 1);
  return g_string_free (dump, FALSE);
}

/* A field of tab-separated text: quoted, as spreadsheets read it, when it
 * holds a tab, a line break or a quote. */
static void
append_field (GString    *text,
              const char *field)
{
  if (strpbrk (field, "\t\n\r\"") == NULL)
    {
      g_string_append (text, field);
      return;
    }
  g_string_append_c (text, '"');
  for (const char *p = field; *p != '\0'; p++)
    {
      if (*p == '"')
        g_string_append_c (text, '"');
      g_string_append_c (text, *p);
    }
  g_string_append_c (text, '"');
}

/**
 * qstore_inspector_rows_to_text:
 * @rows: (element-type QStoreInspectorRow): loaded rows
 * @column: the one column to take, or -1 for all of them
 *
 * Returns: (transfer full): one line per row, its values separated by
 *   tabs (qstore_inspector_value_to_text()); a single value alone as it is
 */
char *
qstore_inspector_rows_to_text (GPtrArray *rows,
                               int        column)
{
  GString *text = g_string_new (NULL);

  for (guint r = 0; r < rows->len; r++)
    {
      QStoreInspectorRow *row = g_ptr_array_index (rows, r);
      guint n = row->values ? g_variant_n_children (row->values) : 0;

      if (r > 0)
        g_string_append_c (text, '\n');
      for (guint c = 0; c < n; c++)
        {
          g_autoptr(GVariant) value = NULL;
          g_autofree char *field = NULL;

          if (column >= 0 && c != (guint) column)
            continue;
          value = qstore_inspector_row_get_value (row, c);
          field = qstore_inspector_value_to_text (value);
          if (column >= 0 && rows->len == 1)
            g_string_append (text, field);
          else
            {
              if (column < 0 && c > 0)
                g_string_append_c (text, '\t');
              append_field (text, field);
            }
        }
    }
  return g_string_free (text, FALSE);
}

/* Returns: (transfer full): @value as `qstore sql --json` writes it */
JsonNode *
qstore_inspector_value_to_json (GVariant *value)
{
  JsonNode *node = json_node_alloc ();

  if (is_null (value))
    return json_node_init_null (node);
  if (g_variant_is_of_type (value, G_VARIANT_TYPE_INT64))
    return json_node_init_int (node, g_variant_get_int64 (value));
  if (g_variant_is_of_type (value, G_VARIANT_TYPE_DOUBLE))
    {
      double d = g_variant_get_double (value);

      /* JSON has no infinities or NaN. */
      return isfinite (d) ? json_node_init_double (node, d) : json_node_init_null (node);
    }
  if (g_variant_is_of_type (value, G_VARIANT_TYPE_STRING))
    return json_node_init_string (node, g_variant_get_string (value, NULL));
  if (g_variant_is_of_type (value, G_VARIANT_TYPE_BYTESTRING))
    {
      /* As `qstore sql --json` writes a blob. */
      gsize len;
      const guint8 *data = g_variant_get_fixed_array (value, &len, 1);
      g_autofree char *base64 = g_base64_encode (data, len);
      JsonObject *object = json_object_new ();

      json_object_set_string_member (object, "$blob", base64);
      json_node_init_object (node, object);
      json_object_unref (object);
      return node;
    }
  return json_node_init_null (node);
}

/**
 * qstore_inspector_rows_to_json:
 * @rows: (element-type QStoreInspectorRow): loaded rows
 * @column_names: the names of the rows' columns, in order
 * @as_array: whether to give an array even for one row
 *
 * Returns: (transfer full): the rows as JSON objects keyed by column name
 *   (in an array, unless there is one row and @as_array is %FALSE); a blob
 *   is `{"$blob": "<base64>"}`
 */
char *
qstore_inspector_rows_to_json (GPtrArray          *rows,
                               const char * const *column_names,
                               gboolean            as_array)
{
  g_autoptr(JsonGenerator) generator = json_generator_new ();
  g_autoptr(JsonNode) root = NULL;
  JsonArray *array = json_array_new ();

  for (guint r = 0; r < rows->len; r++)
    {
      QStoreInspectorRow *row = g_ptr_array_index (rows, r);
      JsonObject *object = json_object_new ();

      for (guint c = 0; column_names[c] != NULL; c++)
        {
          g_autoptr(GVariant) value = qstore_inspector_row_get_value (row, c);

          json_object_set_member (object, column_names[c], qstore_inspector_value_to_json (value));
        }
      json_array_add_object_element (array, object);
    }

  if (rows->len == 1 && !as_array)
    root = json_node_copy (json_array_get_element (array, 0));
  else
    root = json_node_init_array (json_node_alloc (), array);
  json_array_unref (array);

  json_generator_set_root (generator, root);
  json_generator_set_pretty (generator, TRUE);
  json_generator_set_indent (generator, 2);
  return json_generator_to_data (generator, NULL);
}
