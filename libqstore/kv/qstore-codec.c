/* qstore-codec.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include "qstore-codec.h"
#include "qstore-codec-private.h"
#include "qstore-error.h"
#include "qstore-i18n-private.h"

/* Key component tags, in SQLite's order of storage classes. */
#define KEY_TAG_NULL    0x00
#define KEY_TAG_NUMERIC 0x01
#define KEY_TAG_TEXT    0x03
#define KEY_TAG_BLOB    0x04

#define KEY_NUMERIC_LEN 17   /* tag + order-preserving double + residual */

/* Escapes inside text and blob components; 0x00 ends them. */
#define KEY_ESCAPE      0x01

#define SIGN_BIT        G_GUINT64_CONSTANT (0x8000000000000000)
#define TWO_POW_63      9223372036854775808.0

/* Rows: a format byte, a varint column count, then per column a tag and
 * its payload. */
#define ROW_FORMAT_1    0x01

#define ROW_TAG_NULL    0x00
#define ROW_TAG_INTEGER 0x01  /* zigzag varint */
#define ROW_TAG_REAL    0x02  /* 8 bytes, IEEE 754, little-endian */
#define ROW_TAG_TEXT    0x03  /* varint length, bytes */
#define ROW_TAG_BLOB    0x04  /* varint length, bytes */

#define VARINT_MAX_LEN  10

/* Catalog key prefixes; the NULs keep them apart from `schema.table`. */
static const char catalog_view_prefix[] = "\0view\0";
static const char catalog_mview_prefix[] = "\0mview\0";
static const char catalog_meta_prefix[] = "\0meta\0";

/**
 * qstore_value_new_null:
 *
 * Creates the value that stands for SQL NULL: the empty maybe of type `mv`.
 *
 * Returns: (transfer none): a new floating #GVariant
 */
GVariant *
qstore_value_new_null (void)
{
  return g_variant_new_maybe (G_VARIANT_TYPE_VARIANT, NULL);
}

/**
 * qstore_value_is_null:
 * @value: a value
 *
 * Checks whether @value is SQL NULL: an empty maybe (of any type), possibly
 * boxed in `v`.
 *
 * Returns: %TRUE if @value is NULL
 */
gboolean
qstore_value_is_null (GVariant *value)
{
  g_autoptr(GVariant) holder = NULL;
  QStoreValue v;

  g_return_val_if_fail (value != NULL, FALSE);

  holder = qstore_value_from_variant (value, &v, NULL);
  return holder != NULL && v.type == QSTORE_VALUE_NULL;
}

/* Keys */

static inline void
write_be64 (guint8  *p,
            guint64  v)
{
  v = GUINT64_TO_BE (v);
  memcpy (p, &v, sizeof v);
}

static inline guint64
read_be64 (const guint8 *p)
{
  guint64 v;

  memcpy (&v, p, sizeof v);
  return GUINT64_FROM_BE (v);
}

static void
complement (guint8 *p,
            gsize   len)
{
  for (gsize i = 0; i < len; i++)
    p[i] = ~p[i];
}

/* The double nearest @value and what is left over, exactly. INT64_MAX and
 * its neighbours round up to 2^63, which int64 cannot hold, hence the
 * special case. */
static gint64
integer_split (gint64  value,
               double *rounded)
{
  double d = (double) value;

  *rounded = d;
  if (d >= TWO_POW_63)
    return (value - G_MAXINT64) - 1;
  return value - (gint64) d;
}

static void
append_numeric (GByteArray *out,
                double      d,
                gint64      residual,
                gboolean    descending)
{
  guint8 buf[KEY_NUMERIC_LEN];
  guint64 bits;

  /* SQL has one zero. */
  if (d == 0.0)
    d = 0.0;

  memcpy (&bits, &d, sizeof bits);
  if (bits & SIGN_BIT)
    bits = ~bits;
  else
    bits ^= SIGN_BIT;

  buf[0] = KEY_TAG_NUMERIC;
  write_be64 (buf + 1, bits);
  write_be64 (buf + 9, (guint64) residual ^ SIGN_BIT);

  if (descending)
    complement (buf, sizeof buf);
  g_byte_array_append (out, buf, sizeof buf);
}

/* Appends a text or blob component: the normal form under @collation,
 * 0x00 and 0x01 escaped, then the 0x00 terminator. */
static void
append_escaped (GByteArray      *out,
                guint8           tag,
                const guint8    *data,
                gsize            len,
                QStoreCollation  collation,
                gboolean         descending)
{
  gsize start = out->len;
  gboolean after_nul = FALSE;
  guint8 *w;

  if (collation == QSTORE_COLLATION_RTRIM)
    {
      while (len > 0 && data[len - 1] == ' ')
        len--;
    }

  g_return_if_fail (len <= (G_MAXUINT - start - 2) / 2);

  g_byte_array_set_size (out, start + 2 * len + 2);
  w = out->data + start;
  *w++ = tag;

  for (gsize i = 0; i < len; i++)
    {
      guint8 c = data[i];

      if (collation == QSTORE_COLLATION_NOCASE)
        {
          /* SQLite's NOCASE stops comparing bytes at the first NUL and then
           * compares lengths only, so everything after it is equal but for
           * its length: a run of NULs of the same length sorts the same. */
          if (after_nul)
            c = 0;
          else if (c == 0)
            after_nul = TRUE;
          else if (c >= 'A' && c <= 'Z')
            c += 'a' - 'A';
        }

      if (c <= KEY_ESCAPE)
        {
          *w++ = KEY_ESCAPE;
          *w++ = c + 1;
        }
      else
        {
          *w++ = c;
        }
    }
  *w++ = 0x00;

  /* Only shrinks: a byte array has nothing to clear in what it drops,
   * and g_byte_array_set_size() would walk GArray's removal path. */
  out->len = w - out->data;
  if (descending)
    complement (out->data + start, out->len - start);
}

/**
 * qstore_codec_append_null: (skip)
 * @out: the key being built
 * @descending: whether the column sorts in descending order
 *
 * Appends a NULL key component; NULL sorts before every other value.
 */
void
qstore_codec_append_null (GByteArray *out,
                          gboolean    descending)
{
  guint8 tag = descending ? (guint8) ~KEY_TAG_NULL : KEY_TAG_NULL;

  g_return_if_fail (out != NULL);

  g_byte_array_append (out, &tag, 1);
}

/**
 * qstore_codec_append_integer: (skip)
 * @out: the key being built
 * @value: the integer
 * @descending: whether the column sorts in descending order
 *
 * Appends a numeric key component. Integers and reals compare by value, so
 * `1` and `1.0` encode alike, and every int64 orders exactly, beyond 2^53
 * too.
 */
void
qstore_codec_append_integer (GByteArray *out,
                             gint64      value,
                             gboolean    descending)
{
  gint64 residual;
  double d;

  g_return_if_fail (out != NULL);

  residual = integer_split (value, &d);
  append_numeric (out, d, residual, descending);
}

static gboolean
check_real (double   value,
            GError **error)
{
  if (isnan (value))
    {
      g_set_error_literal (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                           _("NaN has no place in a key order (SQLite stores it "
                           "as NULL): store NULL instead"));
      return FALSE;
    }
  return TRUE;
}

/**
 * qstore_codec_append_real: (skip)
 * @out: the key being built
 * @value: the real number
 * @descending: whether the column sorts in descending order
 * @error: return location for a #GError
 *
 * Appends a numeric key component. `-0.0` encodes as `0.0`; infinities are
 * fine; NaN is refused with %QSTORE_ERROR_INVALID_ARGUMENT.
 *
 * Returns: %TRUE on success
 */
gboolean
qstore_codec_append_real (GByteArray  *out,
                          gdouble      value,
                          gboolean     descending,
                          GError     **error)
{
  g_return_val_if_fail (out != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (!check_real (value, error))
    return FALSE;

  append_numeric (out, value, 0, descending);
  return TRUE;
}

/**
 * qstore_codec_append_text: (skip)
 * @out: the key being built
 * @text: (array length=text_len) (element-type guint8): UTF-8 text; it may
 *   hold NUL bytes
 * @text_len: length of @text in bytes
 * @collation: the column's collation
 * @descending: whether the column sorts in descending order
 *
 * Appends a text key component: the normal form of @text under @collation
 * (ASCII letters lower-cased for NOCASE, trailing spaces removed for RTRIM),
 * so that byte order and equality are those of SQLite. NOCASE, exactly like
 * SQLite's, stops comparing bytes at a NUL: what follows it counts only by
 * its length.
 */
void
qstore_codec_append_text (GByteArray      *out,
                          const char      *text,
                          gsize            text_len,
                          QStoreCollation  collation,
                          gboolean         descending)
{
  g_return_if_fail (out != NULL);
  g_return_if_fail (text != NULL || text_len == 0);
  g_return_if_fail (collation <= QSTORE_COLLATION_RTRIM);

  append_escaped (out, KEY_TAG_TEXT, (const guint8 *) text, text_len,
                  collation, descending);
}

/**
 * qstore_codec_append_blob: (skip)
 * @out: the key being built
 * @data: (array length=data_len): the bytes
 * @data_len: length of @data
 * @descending: whether the column sorts in descending order
 *
 * Appends a blob key component. Blobs sort after text, bytewise.
 */
void
qstore_codec_append_blob (GByteArray   *out,
                          const guint8 *data,
                          gsize         data_len,
                          gboolean      descending)
{
  g_return_if_fail (out != NULL);
  g_return_if_fail (data != NULL || data_len == 0);

  append_escaped (out, KEY_TAG_BLOB, data, data_len,
                  QSTORE_COLLATION_BINARY, descending);
}

gboolean
qstore_codec_append_key_value (GByteArray         *out,
                               const QStoreValue  *value,
                               QStoreCollation     collation,
                               gboolean            descending,
                               GError            **error)
{
  g_assert (out != NULL);
  g_assert (value != NULL);

  switch (value->type)
    {
    case QSTORE_VALUE_NULL:
      qstore_codec_append_null (out, descending);
      return TRUE;

    case QSTORE_VALUE_INTEGER:
      qstore_codec_append_integer (out, value->integer, descending);
      return TRUE;

    case QSTORE_VALUE_REAL:
      return qstore_codec_append_real (out, value->real, descending, error);

    case QSTORE_VALUE_TEXT:
      append_escaped (out, KEY_TAG_TEXT, value->bytes.data, value->bytes.len,
                      collation, descending);
      return TRUE;

    case QSTORE_VALUE_BLOB:
      append_escaped (out, KEY_TAG_BLOB, value->bytes.data, value->bytes.len,
                      QSTORE_COLLATION_BINARY, descending);
      return TRUE;

    default:
      g_assert_not_reached ();
    }
}

/* Values as GVariants */

static GVariant *
text_variant_new (const guint8 *data,
                  gsize         len)
{
  if (len == 0)
    return g_variant_new_string ("");
  return g_variant_new_take_string (g_utf8_make_valid ((const char *) data, len));
}

GVariant *
qstore_value_from_variant (GVariant     *value,
                           QStoreValue  *out,
                           GError      **error)
{
  g_autoptr(GVariant) inner = NULL;
  const GVariantType *type;

  g_assert (value != NULL);

  /* Children of a serialised GVariant are new objects that borrow its data,
   * so the innermost one is what @out's bytes live in. */
  inner = g_variant_ref_sink (value);
  for (;;)
    {
      GVariant *child;

      if (g_variant_is_of_type (inner, G_VARIANT_TYPE_VARIANT))
        child = g_variant_get_variant (inner);
      else if (g_variant_is_of_type (inner, G_VARIANT_TYPE_MAYBE) &&
               g_variant_n_children (inner) == 1)
        child = g_variant_get_child_value (inner, 0);
      else
        break;

      g_variant_unref (inner);
      inner = child;
    }
  value = inner;

  type = g_variant_get_type (value);
  memset (out, 0, sizeof *out);

  if (g_variant_type_is_maybe (type))
    {
      out->type = QSTORE_VALUE_NULL;
      return g_steal_pointer (&inner);
    }

  switch (g_variant_classify (value))
    {
    case G_VARIANT_CLASS_INT64:
      out->type = QSTORE_VALUE_INTEGER;
      out->integer = g_variant_get_int64 (value);
      return g_steal_pointer (&inner);

    case G_VARIANT_CLASS_INT32:
      out->type = QSTORE_VALUE_INTEGER;
      out->integer = g_variant_get_int32 (value);
      return g_steal_pointer (&inner);

    case G_VARIANT_CLASS_UINT32:
      out->type = QSTORE_VALUE_INTEGER;
      out->integer = g_variant_get_uint32 (value);
      return g_steal_pointer (&inner);

    case G_VARIANT_CLASS_INT16:
      out->type = QSTORE_VALUE_INTEGER;
      out->integer = g_variant_get_int16 (value);
      return g_steal_pointer (&inner);

    case G_VARIANT_CLASS_UINT16:
      out->type = QSTORE_VALUE_INTEGER;
      out->integer = g_variant_get_uint16 (value);
      return g_steal_pointer (&inner);

    case G_VARIANT_CLASS_BYTE:
      out->type = QSTORE_VALUE_INTEGER;
      out->integer = g_variant_get_byte (value);
      return g_steal_pointer (&inner);

    case G_VARIANT_CLASS_UINT64:
      if (g_variant_get_uint64 (value) > G_MAXINT64)
        {
          g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                       "Integer %" G_GUINT64_FORMAT " does not fit in 64 signed "
                       "bits: store it as a real or as text",
                       g_variant_get_uint64 (value));
          return NULL;
        }
      out->type = QSTORE_VALUE_INTEGER;
      out->integer = (gint64) g_variant_get_uint64 (value);
      return g_steal_pointer (&inner);

    case G_VARIANT_CLASS_DOUBLE:
      out->type = QSTORE_VALUE_REAL;
      out->real = g_variant_get_double (value);
      return g_steal_pointer (&inner);

    case G_VARIANT_CLASS_STRING:
      {
        gsize len;
        const char *s = g_variant_get_string (value, &len);

        out->type = QSTORE_VALUE_TEXT;
        out->bytes.data = (const guint8 *) s;
        out->bytes.len = len;
        return g_steal_pointer (&inner);
      }

    case G_VARIANT_CLASS_ARRAY:
      if (g_variant_is_of_type (value, G_VARIANT_TYPE_BYTESTRING))
        {
          gsize len;
          const guint8 *data = g_variant_get_fixed_array (value, &len, 1);

          /* An empty array has no data pointer, but an empty blob is
           * still a blob: NULL bytes would make SQLite bind NULL. */
          out->type = QSTORE_VALUE_BLOB;
          out->bytes.data = data != NULL ? data : (const guint8 *) "";
          out->bytes.len = len;
          return g_steal_pointer (&inner);
        }
      break;

    default:
      break;
    }

  g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
               _("A value of type “%s” cannot be stored: use “x” (integer), "
               "“d” (real), “s” (text), “ay” (blob) or qstore_value_new_null()"),
               g_variant_get_type_string (value));
  return NULL;
}

GVariant *
qstore_value_to_variant (const QStoreValue *value)
{
  g_assert (value != NULL);

  switch (value->type)
    {
    case QSTORE_VALUE_NULL:
      return qstore_value_new_null ();

    case QSTORE_VALUE_INTEGER:
      return g_variant_new_int64 (value->integer);

    case QSTORE_VALUE_REAL:
      return g_variant_new_double (value->real);

    case QSTORE_VALUE_TEXT:
      return text_variant_new (value->bytes.data, value->bytes.len);

    case QSTORE_VALUE_BLOB:
      return g_variant_new_fixed_array (G_VARIANT_TYPE_BYTE,
                                        value->bytes.data, value->bytes.len, 1);

    default:
      g_assert_not_reached ();
    }
}

/**
 * qstore_codec_append_value: (skip)
 * @out: the key being built
 * @value: the value: `x`, `d`, `s`, `ay` or NULL (see
 *   qstore_value_new_null()), possibly boxed in `v`
 * @collation: the column's collation, used for text
 * @descending: whether the column sorts in descending order
 * @error: return location for a #GError
 *
 * Appends the key component for @value. Other integer types (`y`, `n`, `q`,
 * `i`, `u`, and `t` up to %G_MAXINT64) are taken as integers.
 *
 * Returns: %TRUE on success; %FALSE with %QSTORE_ERROR_INVALID_ARGUMENT for
 *   a value of another type or NaN
 */
gboolean
qstore_codec_append_value (GByteArray       *out,
                           GVariant         *value,
                           QStoreCollation   collation,
                           gboolean          descending,
                           GError          **error)
{
  g_autoptr(GVariant) holder = NULL;
  QStoreValue v;

  g_return_val_if_fail (out != NULL, FALSE);
  g_return_val_if_fail (value != NULL, FALSE);
  g_return_val_if_fail (collation <= QSTORE_COLLATION_RTRIM, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  holder = qstore_value_from_variant (value, &v, error);
  if (holder == NULL)
    return FALSE;
  return qstore_codec_append_key_value (out, &v, collation, descending, error);
}

static gboolean
values_container_check (GVariant  *values,
                        GError   **error)
{
  if (g_variant_is_of_type (values, G_VARIANT_TYPE_TUPLE) ||
      g_variant_is_of_type (values, G_VARIANT_TYPE ("av")))
    return TRUE;

  g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
               _("Values must come as a tuple or an “av” array, not as “%s”"),
               g_variant_get_type_string (values));
  return FALSE;
}

/**
 * qstore_codec_encode_key:
 * @values: a tuple (or `av`) of values, one per column, each as in
 *   qstore_codec_append_value()
 * @collations: (array length=n_columns) (nullable): each column's
 *   collation; %NULL for BINARY everywhere
 * @descending: (array length=n_columns) (nullable): whether each column
 *   sorts in descending order; %NULL for ascending everywhere
 * @n_columns: the number of columns
 * @error: return location for a #GError
 *
 * Encodes a whole key: the concatenation of its components. Keys compare
 * under memcmp (a proper prefix first) as SQLite orders the rows with
 * `ORDER BY` over those columns, collations and directions.
 *
 * Returns: (transfer full): the key, or %NULL with
 *   %QSTORE_ERROR_INVALID_ARGUMENT
 */
GBytes *
qstore_codec_encode_key (GVariant               *values,
                         const QStoreCollation  *collations,
                         const gboolean         *descending,
                         gsize                   n_columns,
                         GError                **error)
{
  g_autoptr(GVariant) owned = NULL;
  g_autoptr(GByteArray) out = NULL;
  gsize n_values;

  g_return_val_if_fail (values != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  owned = g_variant_ref_sink (values);
  if (!values_container_check (owned, error))
    return NULL;

  n_values = g_variant_n_children (owned);
  if (n_values != n_columns)
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                   "Key has %" G_GSIZE_FORMAT " values for %" G_GSIZE_FORMAT
                   " columns: give one value per key column",
                   n_values, n_columns);
      return NULL;
    }

  out = g_byte_array_sized_new (16 * n_columns);
  for (gsize i = 0; i < n_columns; i++)
    {
      g_autoptr(GVariant) child = g_variant_get_child_value (owned, i);
      g_autoptr(GVariant) holder = NULL;
      QStoreCollation collation = collations ? collations[i] : QSTORE_COLLATION_BINARY;
      QStoreValue v;

      g_return_val_if_fail (collation <= QSTORE_COLLATION_RTRIM, NULL);

      holder = qstore_value_from_variant (child, &v, error);
      if (holder == NULL ||
          !qstore_codec_append_key_value (out, &v, collation,
                                          descending ? descending[i] : FALSE,
                                          error))
        {
          g_prefix_error (error, "Key column %" G_GSIZE_FORMAT ": ", i);
          return NULL;
        }
    }

  return g_byte_array_free_to_bytes (g_steal_pointer (&out));
}

static gboolean
key_corrupt (GError       **error,
             gsize          column,
             gsize          offset,
             const char    *what)
{
  g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_CORRUPT,
               "Key does not decode: %s (column %" G_GSIZE_FORMAT ", byte %"
               G_GSIZE_FORMAT "); the store holds a key this codec did not "
               "write, or the column directions given do not match it",
               what, column, offset);
  return FALSE;
}

/* Decodes one numeric component body (16 bytes, already uncomplemented)
 * and refuses every form append_numeric() would not have written. */
static GVariant *
decode_numeric (const guint8 *body)
{
  guint64 bits = read_be64 (body);
  gint64 residual = (gint64) (read_be64 (body + 8) ^ SIGN_BIT);
  double d;

  if (bits & SIGN_BIT)
    bits ^= SIGN_BIT;
  else
    bits = ~bits;
  memcpy (&d, &bits, sizeof d);

  if (isnan (d) || (d == 0.0 && signbit (d)))
    return NULL;

  if (residual == 0)
    {
      /* The normal form of an integral value that fits is an integer. */
      if (d >= -TWO_POW_63 && d < TWO_POW_63 && (double) (gint64) d == d)
        return g_variant_new_int64 ((gint64) d);
      return g_variant_new_double (d);
    }
  else
    {
      gint64 value;
      gint64 base;
      gint64 r;
      double rd;

      if (!(d >= -TWO_POW_63 && d <= TWO_POW_63))
        return NULL;

      if (d == TWO_POW_63)
        {
          if (residual > 0)
            return NULL;
          value = G_MAXINT64 + (residual + 1);
        }
      else
        {
          base = (gint64) d;
          if ((double) base != d)
            return NULL;
          if ((residual > 0 && base > G_MAXINT64 - residual) ||
              (residual < 0 && base < G_MININT64 - residual))
            return NULL;
          value = base + residual;
        }

      /* Only the split integer_split() makes is valid. */
      r = integer_split (value, &rd);
      if (r != residual || rd != d)
        return NULL;

      return g_variant_new_int64 (value);
    }
}

static GVariant *
decode_key_component (const guint8  *key,
                      gsize          key_len,
                      gsize         *pos,
                      gsize          column,
                      gboolean       descending,
                      GError       **error)
{
  guint8 flip = descending ? 0xff : 0x00;
  gsize p = *pos;
  guint8 tag;

  if (p >= key_len)
    {
      key_corrupt (error, column, p, "the key ends before this column");
      return NULL;
    }

  tag = key[p++] ^ flip;
  switch (tag)
    {
    case KEY_TAG_NULL:
      *pos = p;
      return qstore_value_new_null ();

    case KEY_TAG_NUMERIC:
      {
        guint8 body[KEY_NUMERIC_LEN - 1];
        GVariant *number;

        if (key_len - p < sizeof body)
          {
            key_corrupt (error, column, p, "a number is cut short");
            return NULL;
          }
        for (gsize i = 0; i < sizeof body; i++)
          body[i] = key[p + i] ^ flip;

        number = decode_numeric (body);
        if (number == NULL)
          {
            key_corrupt (error, column, p, "a number is not in canonical form");
            return NULL;
          }
        *pos = p + sizeof body;
        return number;
      }

    case KEY_TAG_TEXT:
    case KEY_TAG_BLOB:
      {
        g_autoptr(GByteArray) bytes = g_byte_array_new ();

        for (;;)
          {
            guint8 c;

            if (p >= key_len)
              {
                key_corrupt (error, column, p, "text or blob has no terminator");
                return NULL;
              }
            c = key[p++] ^ flip;
            if (c == 0x00)
              break;
            if (c == KEY_ESCAPE)
              {
                if (p >= key_len)
                  {
                    key_corrupt (error, column, p, "an escape is cut short");
                    return NULL;
                  }
                c = key[p++] ^ flip;
                if (c != 0x01 && c != 0x02)
                  {
                    key_corrupt (error, column, p - 1, "unknown escape");
                    return NULL;
                  }
                c -= 1;
              }
            g_byte_array_append (bytes, &c, 1);
          }

        *pos = p;
        if (tag == KEY_TAG_TEXT)
          return text_variant_new (bytes->data, bytes->len);
        return g_variant_new_fixed_array (G_VARIANT_TYPE_BYTE,
                                          bytes->data, bytes->len, 1);
      }

    default:
      key_corrupt (error, column, p - 1, "unknown value tag");
      return NULL;
    }
}

/**
 * qstore_codec_decode_key:
 * @key: a key made by qstore_codec_encode_key() or the append functions
 * @descending: (array length=n_columns) (nullable): the directions the key
 *   was encoded with; %NULL for ascending everywhere
 * @n_columns: the number of columns in @key
 * @error: return location for a #GError
 *
 * Decodes a key into the normal forms of its values: NOCASE text comes back
 * lower-cased, RTRIM text without its trailing spaces, and a number that is
 * integral and fits in 64 bits comes back as an integer (`1.0` as `1`),
 * since keys do not tell them apart. Text that is not valid UTF-8 (or holds
 * NUL) is made valid with g_utf8_make_valid().
 *
 * Returns: (transfer full): a tuple of @n_columns values, each boxed in
 *   `v`, or %NULL with %QSTORE_ERROR_CORRUPT when @key is malformed, holds
 *   fewer or more than @n_columns components
 */
GVariant *
qstore_codec_decode_key (GBytes          *key,
                         const gboolean  *descending,
                         gsize            n_columns,
                         GError         **error)
{
  g_auto(GVariantBuilder) builder = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_TUPLE);
  const guint8 *data;
  gsize len;
  gsize pos = 0;

  g_return_val_if_fail (key != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  data = g_bytes_get_data (key, &len);

  for (gsize i = 0; i < n_columns; i++)
    {
      GVariant *value;

      value = decode_key_component (data, len, &pos, i,
                                    descending ? descending[i] : FALSE, error);
      if (value == NULL)
        return NULL;
      g_variant_builder_add_value (&builder, g_variant_new_variant (value));
    }

  if (pos != len)
    {
      key_corrupt (error, n_columns, pos, "bytes follow the last column");
      return NULL;
    }

  return g_variant_ref_sink (g_variant_builder_end (&builder));
}

/* Rows */

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

/* Most numbers of a row (lengths, column counts, ids) fit in one or two
 * bytes: those are read without the loop and its checks (a second byte of
 * 0 is not the shortest form, which the loop reports). */
static inline gboolean
read_varint (QStoreRowReader  *reader,
             guint64          *out,
             GError          **error)
{
  const guint8 *p = reader->p;
  gsize left = reader->end - p;

  if (G_LIKELY (left >= 1 && p[0] < 0x80))
    {
      *out = p[0];
      reader->p = p + 1;
      return TRUE;
    }
  if (G_LIKELY (left >= 2 && p[1] < 0x80 && p[1] != 0))
    {
      *out = (guint64) (p[0] & 0x7f) | (guint64) p[1] << 7;
      reader->p = p + 2;
      return TRUE;
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

gboolean
qstore_row_reader_next (QStoreRowReader  *reader,
                        QStoreValue      *out,
                        GError          **error)
{
  guint8 tag;

  g_return_val_if_fail (reader != NULL, FALSE);
  g_return_val_if_fail (out != NULL, FALSE);
  g_return_val_if_fail (reader->remaining > 0, FALSE);

  memset (out, 0, sizeof *out);

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
  if (!values_container_check (owned, error))
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
      if (values[i].type == QSTORE_VALUE_REAL && !check_real (values[i].real, error))
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

/* Catalog keys */

static GBytes *
catalog_key (const char *prefix,
             gsize       prefix_len,
             const char *schema,
             const char *name)
{
  g_autoptr(GByteArray) out = g_byte_array_new ();
  g_autofree char *schema_down = NULL;
  g_autofree char *name_down = NULL;

  g_byte_array_append (out, (const guint8 *) prefix, prefix_len);
  if (schema != NULL)
    {
      /* SQL names are case-insensitive for ASCII only, as in SQLite. */
      schema_down = g_ascii_strdown (schema, -1);
      name_down = g_ascii_strdown (name, -1);
      g_byte_array_append (out, (const guint8 *) schema_down, strlen (schema_down));
      g_byte_array_append (out, (const guint8 *) ".", 1);
      g_byte_array_append (out, (const guint8 *) name_down, strlen (name_down));
    }
  else
    {
      g_byte_array_append (out, (const guint8 *) name, strlen (name));
    }

  return g_byte_array_free_to_bytes (g_steal_pointer (&out));
}

/**
 * qstore_catalog_key_for_table:
 * @schema: the schema, such as `main`; it must not contain `.`
 * @table: the table name; it may contain `.`
 *
 * Makes the catalog key of a table: `schema.table`, ASCII letters
 * lower-cased.
 *
 * Returns: (transfer full): the key
 */
GBytes *
qstore_catalog_key_for_table (const char *schema,
                              const char *table)
{
  g_return_val_if_fail (schema != NULL && strchr (schema, '.') == NULL, NULL);
  g_return_val_if_fail (table != NULL, NULL);

  return catalog_key ("", 0, schema, table);
}

/**
 * qstore_catalog_key_for_view:
 * @schema: the schema, such as `main`; it must not contain `.`
 * @view: the view name; it may contain `.`
 *
 * Makes the catalog key of a view: `\0view\0schema.view`, ASCII letters
 * lower-cased.
 *
 * Returns: (transfer full): the key
 */
GBytes *
qstore_catalog_key_for_view (const char *schema,
                             const char *view)
{
  g_return_val_if_fail (schema != NULL && strchr (schema, '.') == NULL, NULL);
  g_return_val_if_fail (view != NULL, NULL);

  return catalog_key (catalog_view_prefix, sizeof catalog_view_prefix - 1,
                      schema, view);
}

/**
 * qstore_catalog_key_for_materialized_view:
 * @schema: the schema, such as `main`; it must not contain `.`
 * @view: the materialized view's name; it may contain `.`
 *
 * Makes the catalog key of a materialized view: `\0mview\0schema.view`,
 * ASCII letters lower-cased.
 *
 * Returns: (transfer full): the key
 */
GBytes *
qstore_catalog_key_for_materialized_view (const char *schema,
                                          const char *view)
{
  g_return_val_if_fail (schema != NULL && strchr (schema, '.') == NULL, NULL);
  g_return_val_if_fail (view != NULL, NULL);

  return catalog_key (catalog_mview_prefix, sizeof catalog_mview_prefix - 1,
                      schema, view);
}

/**
 * qstore_catalog_key_for_meta:
 * @name: the entry's name, such as `clean_shutdown`; kept as it is
 *
 * Makes the catalog key of a bookkeeping entry: `\0meta\0name`.
 *
 * Returns: (transfer full): the key
 */
GBytes *
qstore_catalog_key_for_meta (const char *name)
{
  g_return_val_if_fail (name != NULL, NULL);

  return catalog_key (catalog_meta_prefix, sizeof catalog_meta_prefix - 1,
                      NULL, name);
}

/**
 * qstore_catalog_key_classify:
 * @key: a key of the catalog store
 * @schema: (out) (optional) (nullable) (transfer full): the schema, %NULL
 *   for meta entries and invalid keys
 * @name: (out) (optional) (nullable) (transfer full): the object's or the
 *   meta entry's name, %NULL for invalid keys
 *
 * Tells what a catalog key names. The schema ends at the first `.`, so
 * object names may contain dots. Empty keys, unknown `\0…` prefixes, keys
 * without a `.` (but for meta) and names holding NUL are
 * %QSTORE_CATALOG_KEY_INVALID.
 *
 * Returns: the kind of key
 */
QStoreCatalogKeyKind
qstore_catalog_key_classify (GBytes  *key,
                             char   **schema,
                             char   **name)
{
  static const struct
  {
    const char           *prefix;
    gsize                 len;
    QStoreCatalogKeyKind  kind;
  } prefixes[] = {
    { catalog_view_prefix, sizeof catalog_view_prefix - 1, QSTORE_CATALOG_KEY_VIEW },
    { catalog_mview_prefix, sizeof catalog_mview_prefix - 1, QSTORE_CATALOG_KEY_MATERIALIZED_VIEW },
    { catalog_meta_prefix, sizeof catalog_meta_prefix - 1, QSTORE_CATALOG_KEY_META },
  };
  QStoreCatalogKeyKind kind = QSTORE_CATALOG_KEY_INVALID;
  const char *data;
  const char *dot;
  gsize len;

  g_return_val_if_fail (key != NULL, QSTORE_CATALOG_KEY_INVALID);

  if (schema != NULL)
    *schema = NULL;
  if (name != NULL)
    *name = NULL;

  data = g_bytes_get_data (key, &len);
  if (len == 0)
    return QSTORE_CATALOG_KEY_INVALID;

  if (data[0] != '\0')
    {
      kind = QSTORE_CATALOG_KEY_TABLE;
    }
  else
    {
      for (guint i = 0; i < G_N_ELEMENTS (prefixes); i++)
        {
          if (len >= prefixes[i].len &&
              memcmp (data, prefixes[i].prefix, prefixes[i].len) == 0)
            {
              kind = prefixes[i].kind;
              data += prefixes[i].len;
              len -= prefixes[i].len;
              break;
            }
        }
      if (kind == QSTORE_CATALOG_KEY_INVALID)
        return QSTORE_CATALOG_KEY_INVALID;
    }

  if (memchr (data, '\0', len) != NULL)
    return QSTORE_CATALOG_KEY_INVALID;

  if (kind == QSTORE_CATALOG_KEY_META)
    {
      if (name != NULL)
        *name = g_strndup (data, len);
      return kind;
    }

  dot = memchr (data, '.', len);
  if (dot == NULL)
    return QSTORE_CATALOG_KEY_INVALID;

  if (schema != NULL)
    *schema = g_strndup (data, dot - data);
  if (name != NULL)
    *name = g_strndup (dot + 1, len - (dot + 1 - data));
  return kind;
}
