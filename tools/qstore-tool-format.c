/* qstore-tool-format.c: keys and values on the command line and in output
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Keys and values are bytes. On input they are taken as they are, or as
 * hexadecimal with --hex. On output:
 *
 * - with --hex, as lowercase hexadecimal;
 * - as text, valid UTF-8 is printed as it is, except that a backslash
 *   becomes `\\` and every ASCII control character (including tab and
 *   newline) and every byte that is not part of valid UTF-8 becomes
 *   `\xHH`. Output is then always valid UTF-8, one entry per line, and
 *   can be decoded back to the exact bytes;
 * - in JSON text mode, valid UTF-8 without NUL is a JSON string (JSON has
 *   its own escapes); anything else is `{"$blob": "<base64>"}`, the form
 *   every qstore JSON output uses for bytes that are not text.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "qstore-tool.h"

/**
 * qstore_tool_parse_data:
 * @text: a key or value as given on the command line
 * @hex: whether @text is hexadecimal
 * @error: return location for a #GError
 *
 * Returns: (transfer full): the bytes @text stands for, or %NULL when
 *   @hex is set and @text is not an even number of hexadecimal digits
 */
GBytes *
qstore_tool_parse_data (const char  *text,
                        gboolean     hex,
                        GError     **error)
{
  gsize len = strlen (text);
  guint8 *data;

  if (!hex)
    return g_bytes_new (text, len);

  if (len % 2 != 0)
    {
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                   "“%s” is not hexadecimal: it has an odd number of digits", text);
      return NULL;
    }
  data = g_malloc (len / 2 + 1);
  for (gsize i = 0; i < len; i += 2)
    {
      int hi = g_ascii_xdigit_value (text[i]);
      int lo = g_ascii_xdigit_value (text[i + 1]);

      if (hi < 0 || lo < 0)
        {
          g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                       "“%s” is not hexadecimal: use the digits 0-9 and a-f", text);
          g_free (data);
          return NULL;
        }
      data[i / 2] = (guint8) (hi << 4 | lo);
    }
  return g_bytes_new_take (data, len / 2);
}

char *
qstore_tool_format_hex (const guint8 *data,
                        gsize         len)
{
  static const char digits[] = "0123456789abcdef";
  char *text = g_malloc (len * 2 + 1);

  for (gsize i = 0; i < len; i++)
    {
      text[2 * i] = digits[data[i] >> 4];
      text[2 * i + 1] = digits[data[i] & 0xf];
    }
  text[len * 2] = '\0';
  return text;
}

char *
qstore_tool_format_text (const guint8 *data,
                         gsize         len)
{
  GString *text = g_string_sized_new (len + 1);
  gsize i = 0;

  while (i < len)
    {
      guint8 c = data[i];

      if (c == '\\')
        {
          g_string_append (text, "\\\\");
          i++;
        }
      else if (c < 0x20 || c == 0x7f)
        {
          g_string_append_printf (text, "\\x%02x", c);
          i++;
        }
      else if (c < 0x80)
        {
          g_string_append_c (text, (char) c);
          i++;
        }
      else
        {
          const char *p = (const char *) data + i;
          gunichar ch = g_utf8_get_char_validated (p, (gssize) (len - i));

          if (ch == (gunichar) -1 || ch == (gunichar) -2)
            {
              g_string_append_printf (text, "\\x%02x", c);
              i++;
            }
          else
            {
              const char *next = g_utf8_next_char (p);

              g_string_append_len (text, p, next - p);
              i += next - p;
            }
        }
    }
  return g_string_free (text, FALSE);
}

char *
qstore_tool_format_data (const guint8 *data,
                         gsize         len,
                         gboolean      hex)
{
  return hex ? qstore_tool_format_hex (data, len) : qstore_tool_format_text (data, len);
}

void
qstore_tool_add_json_data (JsonBuilder  *builder,
                           const guint8 *data,
                           gsize         len,
                           gboolean      hex)
{
  if (hex)
    {
      g_autofree char *text = qstore_tool_format_hex (data, len);

      json_builder_add_string_value (builder, text);
    }
  else if (g_utf8_validate_len ((const char *) data, len, NULL))
    {
      g_autofree char *text = g_strndup ((const char *) data, len);

      json_builder_add_string_value (builder, text);
    }
  else
    {
      g_autofree char *text = g_base64_encode (data, len);

      json_builder_begin_object (builder);
      json_builder_set_member_name (builder, "$blob");
      json_builder_add_string_value (builder, text);
      json_builder_end_object (builder);
    }
}

/* One JSON value per line. */
void
qstore_tool_print_json (JsonNode *node)
{
  g_autoptr(JsonGenerator) generator = json_generator_new ();
  g_autofree char *text = NULL;

  json_generator_set_root (generator, node);
  text = json_generator_to_data (generator, NULL);
  fputs (text, stdout);
  fputc ('\n', stdout);
}

/* A JSON string, escaped by json-glib. */
void
qstore_tool_append_json_string (GString    *out,
                                const char *text)
{
  g_autoptr(JsonGenerator) generator = json_generator_new ();
  g_autoptr(JsonNode) node = json_node_init_string (json_node_alloc (), text);
  g_autofree char *escaped = NULL;

  json_generator_set_root (generator, node);
  escaped = json_generator_to_data (generator, NULL);
  g_string_append (out, escaped);
}

/* Reals print in the fewest digits that read back as the same double (0.3,
 * not 0.29999999999999999) and keep a decimal point or an exponent, so they
 * read back as reals; JSON has no infinities, and 1e999 reads back as one. */
static void
append_json_real (GString *out,
                  double   value)
{
  char buffer[G_ASCII_DTOSTR_BUF_SIZE];

  if (isinf (value))
    {
      g_string_append (out, value > 0 ? "1e999" : "-1e999");
      return;
    }
  for (int digits = 15; digits <= 17; digits++)
    {
      char format[8];

      g_snprintf (format, sizeof format, "%%.%dg", digits);
      g_ascii_formatd (buffer, sizeof buffer, format, value);
      if (g_ascii_strtod (buffer, NULL) == value)
        break;
    }
  g_string_append (out, buffer);
  if (strpbrk (buffer, ".eE") == NULL)
    g_string_append (out, ".0");
}

void
qstore_tool_append_json_value (GString  *out,
                               GVariant *value)
{
  if (qstore_value_is_null (value))
    g_string_append (out, "null");
  else if (g_variant_is_of_type (value, G_VARIANT_TYPE_INT64))
    g_string_append_printf (out, "%" G_GINT64_FORMAT, g_variant_get_int64 (value));
  else if (g_variant_is_of_type (value, G_VARIANT_TYPE_DOUBLE))
    append_json_real (out, g_variant_get_double (value));
  else if (g_variant_is_of_type (value, G_VARIANT_TYPE_STRING))
    qstore_tool_append_json_string (out, g_variant_get_string (value, NULL));
  else
    {
      gsize len;
      const guint8 *data = g_variant_get_fixed_array (value, &len, 1);
      g_autofree char *text = g_base64_encode (data, len);

      g_string_append (out, "{\"$blob\":");
      qstore_tool_append_json_string (out, text);
      g_string_append_c (out, '}');
    }
}

/* A tuple (or array) of boxed values as a JSON array. */
void
qstore_tool_append_json_tuple (GString  *out,
                               GVariant *tuple)
{
  gsize n = g_variant_n_children (tuple);

  g_string_append_c (out, '[');
  for (gsize i = 0; i < n; i++)
    {
      g_autoptr(GVariant) boxed = g_variant_get_child_value (tuple, i);
      g_autoptr(GVariant) value = g_variant_get_variant (boxed);

      if (i > 0)
        g_string_append_c (out, ',');
      qstore_tool_append_json_value (out, value);
    }
  g_string_append_c (out, ']');
}

/* Microseconds since the epoch as an ISO 8601 UTC time. */
void
qstore_tool_append_json_change (GString         *out,
                                QStoreChangeSet *change_set,
                                guint            index)
{
  g_autoptr(GVariant) old_row = qstore_change_set_get_old_row (change_set, index);
  g_autoptr(GVariant) new_row = qstore_change_set_get_new_row (change_set, index);
  g_autofree char *table = g_strdup_printf ("%s.%s",
                                            qstore_change_set_get_schema (change_set, index),
                                            qstore_change_set_get_table (change_set, index));
  const char *op = qstore_change_op_get_name (qstore_change_set_get_op (change_set, index));

  g_string_append (out, "{\"table\":");
  qstore_tool_append_json_string (out, table);
  g_string_append (out, ",\"op\":");
  qstore_tool_append_json_string (out, op != NULL ? op : "unknown");
  g_string_append (out, ",\"old\":");
  if (old_row != NULL)
    qstore_tool_append_json_tuple (out, old_row);
  else
    g_string_append (out, "null");
  g_string_append (out, ",\"new\":");
  if (new_row != NULL)
    qstore_tool_append_json_tuple (out, new_row);
  else
    g_string_append (out, "null");
  g_string_append_c (out, '}');
}

char *
qstore_tool_format_time (gint64 usec)
{
  g_autoptr(GDateTime) seconds = g_date_time_new_from_unix_utc (usec / G_USEC_PER_SEC);
  g_autoptr(GDateTime) time = NULL;

  if (seconds == NULL)
    return g_strdup_printf ("%" G_GINT64_FORMAT, usec);
  time = g_date_time_add (seconds, usec % G_USEC_PER_SEC);
  return g_date_time_format (time, "%Y-%m-%dT%H:%M:%S.%fZ");
}

void
qstore_tool_print_line (GString *line)
{
  g_string_append_c (line, '\n');
  fputs (line->str, stdout);
  /* A follower's reader waits for each line. */
  fflush (stdout);
}

/* A follower's gap: transactions may have been missed, for @reason. */
void
qstore_tool_print_gap (gboolean    json,
                       const char *reason,
                       gint64      down_for_ms)
{
  g_autoptr(GString) line = g_string_new (NULL);

  if (json)
    {
      g_string_append (line, "{\"gap\":{\"reason\":");
      qstore_tool_append_json_string (line, reason);
      if (down_for_ms >= 0)
        g_string_append_printf (line, ",\"down_for_ms\":%" G_GINT64_FORMAT "}}", down_for_ms);
      else
        g_string_append (line, ",\"down_for_ms\":null}}");
    }
  else if (down_for_ms >= 0)
    g_string_append_printf (line, "gap: %s (down for %" G_GINT64_FORMAT " ms)", reason,
                            down_for_ms);
  else
    g_string_append_printf (line, "gap: %s", reason);
  qstore_tool_print_line (line);
}
