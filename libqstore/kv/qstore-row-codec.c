/* qstore-row-codec.c: rows, encoded whole and self-describing
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "qstore-codec.h"
#include "qstore-codec-private.h"
#include "qstore-error.h"
#include "qstore-i18n-private.h"

/* Rows: a format byte, a varint column count, then per column a tag and
 * its payload. */
#define ROW_FORMAT_1    0x01

#define ROW_TAG_NULL    0x00
#define ROW_TAG_INTEGER 0x01  /* zigzag varint */
#define ROW_TAG_REAL    0x02  /* 8 bytes, IEEE 754, little-endian */
#define ROW_TAG_TEXT    0x03  /* varint length, bytes */
#define ROW_TAG_BLOB    0x04  /* varint length, bytes */

#define VARINT_MAX_LEN  10

static void
append_varint (GByteArray *out,
               guint64     v)
{
  guint8 buf[VARINT_MAX_LEN];
  guint n = 0;

  while (v >= 0x80)
    {
      buf[n++] = (v & 0x7f) | 0x80;
      v >>= 7;
    }
  buf[n++] = v;
  g_byte_array_append (out, buf, n);
}

static inline guint64
zigzag_encode (gint64 v)
{
  return ((guint64) v << 1) ^ (guint64) (v >> 63);
}

static inline gint64
zigzag_decode (guint64 u)
{
  return (gint64) ((u >> 1) ^ (~(u & 1) + 1));
}

void
qstore_row_encode (GByteArray        *out,
                   const QStoreValue *values,
                   gsize              n_values)
{
  guint8 format = ROW_FORMAT_1;

  g_return_if_fail (out != NULL);
  g_return_if_fail (values != NULL || n_values == 0);
  g_return_if_fail (n_values <= G_MAXUINT);

  g_byte_array_append (out, &format, 1);
  append_varint (out, n_values);

  for (gsize i = 0; i < n_values; i++)
    {
      const QStoreValue *v = &values[i];
      guint8 tag;

      switch (v->type)
        {
        case QSTORE_VALUE_NULL:
          tag = ROW_TAG_NULL;
          g_byte_array_append (out, &tag, 1);
          break;

        case QSTORE_VALUE_INTEGER:
          tag = ROW_TAG_INTEGER;
          g_byte_array_append (out, &tag, 1);
          append_varint (out, zigzag_encode (v->integer));
          break;

        case QSTORE_VALUE_REAL:
          {
            guint64 bits;

            /* The bits as they are: -0.0 keeps its sign. */
            memcpy (&bits, &v->real, sizeof bits);
            bits = GUINT64_TO_LE (bits);
            tag = ROW_TAG_REAL;
            g_byte_array_append (out, &tag, 1);
            g_byte_array_append (out, (const guint8 *) &bits, sizeof bits);
          }
          break;

        case QSTORE_VALUE_TEXT:
        case QSTORE_VALUE_BLOB:
          g_return_if_fail (v->bytes.len <= G_MAXUINT - out->len - VARINT_MAX_LEN - 1);
          tag = v->type == QSTORE_VALUE_TEXT ? ROW_TAG_TEXT : ROW_TAG_BLOB;
          g_byte_array_append (out, &tag, 1);
          append_varint (out, v->bytes.len);
          if (v->bytes.len > 0)
            g_byte_array_append (out, v->bytes.data, v->bytes.len);
          break;

        default:
          g_assert_not_reached ();
        }
    }
}

static gboolean
row_corrupt (const QStoreRowReader  *reader,
             GError                **error,
             const char             *what)
{
  g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_CORRUPT,
               "Stored row does not decode: %s at byte %" G_GSIZE_FORMAT
               " of %" G_GSIZE_FORMAT "; the row is damaged or was written by "
               "a newer qstore",
               what, (gsize) (reader->p - reader->start),
               (gsize) (reader->end - reader->start));
  return FALSE;
}

static gboolean
read_varint_long (QStoreRowReader  *reader,
                  guint64          *out,
                  GError          **error)
{
  guint64 v = 0;

  for (guint i = 0; i < VARINT_MAX_LEN; i++)
    {
      guint8 b;

      if (reader->p >= reader->end)
        return row_corrupt (reader, error, "a number is cut short");
      b = *reader->p;

      /* The tenth byte carries bit 63 alone. */
      if (i == VARINT_MAX_LEN - 1 && b > 0x01)
        return row_corrupt (reader, error, "a number overflows 64 bits");

      reader->p++;
      v |= (guint64) (b & 0x7f) << (7 * i);
      if ((b & 0x80) == 0)
        {
          /* One encoding per number, so equal rows are equal bytes. */
          if (b == 0 && i > 0)
            {
              reader->p--;
              return row_corrupt (reader, error, "a number is not in its shortest form");
            }
          *out = v;
          return TRUE;
        }
    }

  g_assert_not_reached ();
}

/* Numbers of up to nine bytes (63 bits) that are whole and in their
 * shortest form are read here without the checks of the loop above; it
 * reads the rest, and says what is wrong with a malformed one. */
static inline gboolean
read_varint (QStoreRowReader  *reader,
             guint64          *out,
             GError          **error)
{
  const guint8 *p = reader->p;
  gsize n = MIN ((gsize) (reader->end - p), VARINT_MAX_LEN - 1);
  guint64 v = 0;

  if (G_LIKELY (n >= 1 && p[0] < 0x80))
    {
      *out = p[0];
      reader->p = p + 1;
      return TRUE;
    }
  for (gsize i = 0; i < n; i++)
    {
      v |= (guint64) (p[i] & 0x7f) << (7 * i);
      if (p[i] < 0x80)
        {
          if (G_UNLIKELY (p[i] == 0))
            break;
          *out = v;
          reader->p = p + i + 1;
          return TRUE;
        }
    }
  return read_varint_long (reader, out, error);
}

gboolean
qstore_row_reader_init (QStoreRowReader  *reader,
                        const guint8     *data,
                        gsize             len,
                        guint            *n_values,
                        GError          **error)
{
  guint64 count;

  g_return_val_if_fail (reader != NULL, FALSE);
  g_return_val_if_fail (data != NULL || len == 0, FALSE);

  reader->start = data;
  reader->p = data;
  reader->end = data + len;
  reader->remaining = 0;
  if (n_values != NULL)
    *n_values = 0;

  if (len == 0)
    return row_corrupt (reader, error, "the row is empty");

  if (*reader->p != ROW_FORMAT_1)
    return row_corrupt (reader, error, "unknown row format");
  reader->p++;

  if (!read_varint (reader, &count, error))
    return FALSE;

  /* Every column takes at least its tag byte. */
  if (count > (guint64) (reader->end - reader->p))
    return row_corrupt (reader, error, "more columns announced than the row can hold");

  if (count == 0 && reader->p != reader->end)
    return row_corrupt (reader, error, "bytes follow the last column");

  reader->remaining = count;
  if (n_values != NULL)
    *n_values = count;
  return TRUE;
}

/* One value, without the checks of the callers' arguments. */
static inline gboolean
read_value (QStoreRowReader  *reader,
            QStoreValue      *out,
            GError          **error)
{
  guint8 tag;

  if (reader->p >= reader->end)
    return row_corrupt (reader, error, "the row ends before its last column");

  tag = *reader->p;
  switch (tag)
    {
    case ROW_TAG_NULL:
      reader->p++;
      out->type = QSTORE_VALUE_NULL;
      break;

    case ROW_TAG_INTEGER:
      {
        guint64 u;

        reader->p++;
        if (!read_varint (reader, &u, error))
          return FALSE;
        out->type = QSTORE_VALUE_INTEGER;
        out->integer = zigzag_decode (u);
      }
      break;

    case ROW_TAG_REAL:
      {
        guint64 bits;

        reader->p++;
        if ((gsize) (reader->end - reader->p) < sizeof bits)
          return row_corrupt (reader, error, "a real is cut short");
        memcpy (&bits, reader->p, sizeof bits);
        bits = GUINT64_FROM_LE (bits);
        reader->p += sizeof bits;
        out->type = QSTORE_VALUE_REAL;
        memcpy (&out->real, &bits, sizeof bits);
      }
      break;

    case ROW_TAG_TEXT:
    case ROW_TAG_BLOB:
      {
        guint64 len;

        reader->p++;
        if (!read_varint (reader, &len, error))
          return FALSE;
        if (len > (guint64) (reader->end - reader->p))
          return row_corrupt (reader, error, "text or blob runs past the end of the row");
        out->type = tag == ROW_TAG_TEXT ? QSTORE_VALUE_TEXT : QSTORE_VALUE_BLOB;
        out->bytes.data = reader->p;
        out->bytes.len = len;
        reader->p += len;
      }
      break;

    default:
      return row_corrupt (reader, error, "unknown value tag");
    }

  reader->remaining--;
  if (reader->remaining == 0 && reader->p != reader->end)
    return row_corrupt (reader, error, "bytes follow the last column");

  return TRUE;
}

gboolean
qstore_row_reader_next (QStoreRowReader  *reader,
                        QStoreValue      *out,
                        GError          **error)
{
  g_return_val_if_fail (reader != NULL, FALSE);
  g_return_val_if_fail (out != NULL, FALSE);
  g_return_val_if_fail (reader->remaining > 0, FALSE);

  memset (out, 0, sizeof *out);
  return read_value (reader, out, error);
}

gboolean
qstore_row_reader_read (QStoreRowReader  *reader,
                        QStoreValue      *out,
                        guint             n,
                        GError          **error)
{
  g_return_val_if_fail (reader != NULL, FALSE);
  g_return_val_if_fail (n == 0 || out != NULL, FALSE);
  g_return_val_if_fail (n <= reader->remaining, FALSE);

  for (guint i = 0; i < n; i++)
    if (!read_value (reader, &out[i], error))
      return FALSE;
  return TRUE;
}

/**
 * qstore_codec_encode_row:
 * @row: a tuple (or `av`) of values, each as in qstore_codec_append_value()
 * @error: return location for a #GError
 *
 * Encodes a full row compactly, keeping every value as it is: text keeps
 * its case and trailing spaces, integers stay integers and reals reals.
 *
 * Returns: (transfer full): the encoded row, or %NULL with
 *   %QSTORE_ERROR_INVALID_ARGUMENT for a value that cannot be stored
 *   (another type, or NaN)
 */
GBytes *
qstore_codec_encode_row (GVariant  *row,
                         GError   **error)
{
  g_autoptr(GVariant) owned = NULL;
  g_autoptr(GByteArray) out = NULL;
  g_autoptr(GPtrArray) holders = NULL;
  g_autofree QStoreValue *values = NULL;
  gsize n_values;

  g_return_val_if_fail (row != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  owned = g_variant_ref_sink (row);
  if (!qstore_codec_check_values (owned, error))
    return NULL;

  n_values = g_variant_n_children (owned);
  values = g_new0 (QStoreValue, n_values);
  holders = g_ptr_array_new_full (n_values, (GDestroyNotify) g_variant_unref);

  for (gsize i = 0; i < n_values; i++)
    {
      g_autoptr(GVariant) child = g_variant_get_child_value (owned, i);
      GVariant *holder = qstore_value_from_variant (child, &values[i], error);

      if (holder == NULL)
        {
          g_prefix_error (error, "Row column %" G_GSIZE_FORMAT ": ", i);
          return NULL;
        }
      g_ptr_array_add (holders, holder);
      if (values[i].type == QSTORE_VALUE_REAL && !qstore_codec_check_real (values[i].real, error))
        {
          g_prefix_error (error, "Row column %" G_GSIZE_FORMAT ": ", i);
          return NULL;
        }
    }

  out = g_byte_array_new ();
  qstore_row_encode (out, values, n_values);
  return g_byte_array_free_to_bytes (g_steal_pointer (&out));
}

/**
 * qstore_codec_decode_row:
 * @row: a row made by qstore_codec_encode_row()
 * @error: return location for a #GError
 *
 * Decodes a row. Text that is not valid UTF-8 (or holds NUL) is made valid
 * with g_utf8_make_valid().
 *
 * Returns: (transfer full): a tuple of the row's values, each boxed in
 *   `v`, or %NULL with %QSTORE_ERROR_CORRUPT when @row is malformed
 */
GVariant *
qstore_codec_decode_row (GBytes  *row,
                         GError **error)
{
  g_auto(GVariantBuilder) builder = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_TUPLE);
  QStoreRowReader reader;
  const guint8 *data;
  gsize len;
  guint n_values;

  g_return_val_if_fail (row != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  data = g_bytes_get_data (row, &len);
  if (!qstore_row_reader_init (&reader, data, len, &n_values, error))
    return NULL;

  for (guint i = 0; i < n_values; i++)
    {
      QStoreValue v;
      GVariant *value;

      if (!qstore_row_reader_next (&reader, &v, error))
        return NULL;

      if (v.type == QSTORE_VALUE_BLOB && v.bytes.len >= 4096)
        {
          /* Large blobs share the row's memory rather than being copied. */
          g_autoptr(GBytes) slice = g_bytes_new_from_bytes (row, v.bytes.data - data,
                                                            v.bytes.len);

          value = g_variant_new_from_bytes (G_VARIANT_TYPE_BYTESTRING, slice, TRUE);
        }
      else
        {
          value = qstore_value_to_variant (&v);
        }
      g_variant_builder_add_value (&builder, g_variant_new_variant (value));
    }

  return g_variant_ref_sink (g_variant_builder_end (&builder));
}
