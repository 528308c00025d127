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
#define KEY_TAG_NUMBER  0x02
#define KEY_TAG_TEXT    0x03
#define KEY_TAG_BLOB    0x04

/* Numbers as the first key format wrote them: the tag, then 16 bytes (an
 * order-preserving double and a residual). Only upgrading reads them. */
#define KEY_TAG_NUMBER_1     0x01
#define KEY_NUMBER_1_BODY    16

/* A number's body is at most 19 bytes of 7 bits each (see append_numeric). */
#define KEY_NUMBER_MAX_BODY  19

/* Escapes inside text and blob components; 0x00 ends them. */
#define KEY_ESCAPE      0x01

#define SIGN_BIT        G_GUINT64_CONSTANT (0x8000000000000000)
#define TWO_POW_63      9223372036854775808.0

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

/* The double's bits, made to sort as unsigned integers sort. */
static guint64
sortable_bits (double d)
{
  guint64 bits;

  /* SQL has one zero. */
  if (d == 0.0)
    d = 0.0;
  memcpy (&bits, &d, sizeof bits);
  return (bits & SIGN_BIT) ? ~bits : bits ^ SIGN_BIT;
}

static double
double_from_sortable (guint64 bits)
{
  double d;

  bits = (bits & SIGN_BIT) ? bits ^ SIGN_BIT : ~bits;
  memcpy (&d, &bits, sizeof d);
  return d;
}

/* The 7 bits of the 128-bit @bits from bit @at on (bit 0 the highest),
 * zeros past the end. */
static inline guint
get_group (const guint64 bits[2],
           guint         at)
{
  if (at + 7 <= 64)
    return (bits[0] >> (57 - at)) & 0x7f;
  if (at >= 64)
    return (at <= 121 ? bits[1] >> (121 - at) : bits[1] << (at - 121)) & 0x7f;
  return ((bits[0] << (at - 57)) | (bits[1] >> (121 - at))) & 0x7f;
}

/* Sets the 7 bits of @bits from bit @at on to @group; the bits past the
 * 128th must be zero. */
static inline gboolean
put_group (guint64 bits[2],
           guint   at,
           guint   group)
{
  if (at + 7 <= 64)
    bits[0] |= (guint64) group << (57 - at);
  else if (at >= 64)
    {
      if (at > 121)
        {
          if (group & ((1u << (at - 121)) - 1))
            return FALSE;
          bits[1] |= (guint64) group >> (at - 121);
        }
      else
        bits[1] |= (guint64) group << (121 - at);
    }
  else
    {
      bits[0] |= (guint64) group >> (at - 57);
      bits[1] |= (guint64) group << (121 - at);
    }
  return TRUE;
}

/* Only a double of 2^53 or more in magnitude can stand for more than one
 * int64; numbers there carry the residual, all others none. Whether a
 * number has one depends on its double alone, so the order holds. */
static inline gboolean
has_residual (double d)
{
  return fabs (d) >= 9007199254740992.0;
}

/* A number is the 128 bits "sortable double, then residual + 2^63" (the
 * residual only where has_residual()), trailing zero bits dropped, in
 * groups of 7 bits per byte, high bits first; a byte's lowest bit says
 * whether another follows. Small integers take 3 to 5 bytes and any real
 * 10, where both took 16; byte order is still numeric order, since where
 * two bodies first differ either their bits differ or one has ended, with
 * only zero bits left, while the other has a one bit to come. */
static void
append_numeric (GByteArray *out,
                double      d,
                gint64      residual,
                gboolean    descending)
{
  guint64 bits[2] = { sortable_bits (d), 0 };
  guint8 buf[1 + KEY_NUMBER_MAX_BODY];
  guint n_bits;
  guint n = 1;

  buf[0] = KEY_TAG_NUMBER;
  if (has_residual (d))
    {
      bits[1] = (guint64) residual ^ SIGN_BIT;

      /* A sortable double is never 0: that would be a NaN. */
      n_bits = bits[1] != 0 ? 128 - __builtin_ctzll (bits[1]) : 64 - __builtin_ctzll (bits[0]);
      for (guint at = 0; at < n_bits; at += 7)
        buf[n++] = (guint8) (get_group (bits, at) << 1) | (at + 7 < n_bits ? 1 : 0);
    }
  else
    {
      /* The usual number: 64 bits, whose groups end with their last one
       * bit. */
      guint64 rest = bits[0];

      do
        {
          guint group = (guint) (rest >> 57);

          rest <<= 7;
          buf[n++] = (guint8) (group << 1) | (rest != 0 ? 1 : 0);
        }
      while (rest != 0);
    }

  if (descending)
    complement (buf, n);
  g_byte_array_append (out, buf, n);
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

gboolean
qstore_codec_check_real (double   value,
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

  if (!qstore_codec_check_real (value, error))
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
      GVariantClass kind = g_variant_classify (inner);
      GVariant *child;

      if (kind == G_VARIANT_CLASS_VARIANT)
        child = g_variant_get_variant (inner);
      else if (kind == G_VARIANT_CLASS_MAYBE && g_variant_n_children (inner) == 1)
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

gboolean
qstore_codec_check_values (GVariant  *values,
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
  if (!qstore_codec_check_values (owned, error))
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

/* Reads into @out the number a sortable double and a residual stand for;
 * FALSE for every pair integer_split() would not have made. */
static gboolean
number_read (guint64      sortable,
             gint64       residual,
             QStoreValue *out)
{
  double d = double_from_sortable (sortable);

  if (isnan (d) || (d == 0.0 && signbit (d)))
    return FALSE;

  if (residual == 0)
    {
      /* The normal form of an integral value that fits is an integer. */
      if (d >= -TWO_POW_63 && d < TWO_POW_63 && (double) (gint64) d == d)
        {
          out->type = QSTORE_VALUE_INTEGER;
          out->integer = (gint64) d;
        }
      else
        {
          out->type = QSTORE_VALUE_REAL;
          out->real = d;
        }
      return TRUE;
    }
  else
    {
      gint64 value;
      gint64 base;
      gint64 r;
      double rd;

      if (!(d >= -TWO_POW_63 && d <= TWO_POW_63))
        return FALSE;

      if (d == TWO_POW_63)
        {
          if (residual > 0)
            return FALSE;
          value = G_MAXINT64 + (residual + 1);
        }
      else
        {
          base = (gint64) d;
          if ((double) base != d)
            return FALSE;
          if ((residual > 0 && base > G_MAXINT64 - residual) ||
              (residual < 0 && base < G_MININT64 - residual))
            return FALSE;
          value = base + residual;
        }

      /* Only the split integer_split() makes is valid. */
      r = integer_split (value, &rd);
      if (r != residual || rd != d)
        return FALSE;

      out->type = QSTORE_VALUE_INTEGER;
      out->integer = value;
      return TRUE;
    }
}

/* Reads the body of a number at @key (already uncomplemented through
 * @flip) into @len bytes; FALSE when it is not one append_numeric()
 * writes. */
static gboolean
read_number (const guint8 *key,
             gsize         key_len,
             guint8        flip,
             gsize        *len,
             QStoreValue  *out)
{
  guint64 bits[2] = { 0, 0 };
  guint8 group = 0;
  gsize n = 0;
  double d;

  do
    {
      if (n == key_len || n == KEY_NUMBER_MAX_BODY)
        return FALSE;
      group = key[n] ^ flip;
      if (!put_group (bits, n * 7, group >> 1))
        return FALSE;
      n++;
    }
  while (group & 1);

  /* No trailing zero bits: the last group holds the last one bit. */
  if ((group >> 1) == 0)
    return FALSE;
  *len = n;

  d = double_from_sortable (bits[0]);
  if (!has_residual (d))
    return bits[1] == 0 && number_read (bits[0], 0, out);
  return number_read (bits[0], (gint64) (bits[1] ^ SIGN_BIT), out);
}

/* Reads a number the first key format wrote: 16 bytes. */
static gboolean
read_number_1 (const guint8 *key,
               gsize         key_len,
               guint8        flip,
               gsize        *len,
               QStoreValue  *out)
{
  guint8 body[KEY_NUMBER_1_BODY];

  if (key_len < sizeof body)
    return FALSE;
  for (gsize i = 0; i < sizeof body; i++)
    body[i] = key[i] ^ flip;
  *len = sizeof body;
  return number_read (read_be64 (body), (gint64) (read_be64 (body + 8) ^ SIGN_BIT), out);
}

/**
 * qstore_codec_read_key_value: (skip)
 * @key: (array length=key_len): a key
 * @key_len: its length
 * @pos: (inout): where the component starts; moved past it
 * @column: the component's number, for the error message
 * @descending: whether the component was encoded descending
 * @scratch: (inout): where text and blob bytes are unescaped to; moved past
 *   them. Unescaped bytes are never more than the key's, so @key_len bytes
 *   hold all the components of @key
 * @out: the value, in its normal form (see qstore_codec_decode_key()); its
 *   bytes point into @scratch
 * @error: return location for a #GError
 *
 * Reads one key component without making a #GVariant.
 *
 * Returns: %TRUE on success, %FALSE with %QSTORE_ERROR_CORRUPT when the
 *   component is malformed
 */
gboolean
qstore_codec_read_key_value (const guint8  *key,
                             gsize          key_len,
                             gsize         *pos,
                             gsize          column,
                             gboolean       descending,
                             guint8       **scratch,
                             QStoreValue   *out,
                             GError       **error)
{
  guint8 flip = descending ? 0xff : 0x00;
  gsize p = *pos;
  guint8 tag;

  if (p >= key_len)
    return key_corrupt (error, column, p, "the key ends before this column");

  tag = key[p++] ^ flip;
  switch (tag)
    {
    case KEY_TAG_NULL:
      out->type = QSTORE_VALUE_NULL;
      *pos = p;
      return TRUE;

    case KEY_TAG_NUMBER:
      {
        gsize len = 0;

        if (!read_number (key + p, key_len - p, flip, &len, out))
          return key_corrupt (error, column, p, "a number is cut short or not in canonical form");
        *pos = p + len;
        return TRUE;
      }

    case KEY_TAG_NUMBER_1:
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_CORRUPT,
                   "Key does not decode: it holds a number in the first key format "
                   "(column %" G_GSIZE_FORMAT ", byte %" G_GSIZE_FORMAT "), which only "
                   "upgrading a database reads", column, p - 1);
      return FALSE;

    case KEY_TAG_TEXT:
    case KEY_TAG_BLOB:
      {
        guint8 *w = *scratch;

        for (;;)
          {
            guint8 c;

            if (p >= key_len)
              return key_corrupt (error, column, p, "text or blob has no terminator");
            c = key[p++] ^ flip;
            if (c == 0x00)
              break;
            if (c == KEY_ESCAPE)
              {
                if (p >= key_len)
                  return key_corrupt (error, column, p, "an escape is cut short");
                c = key[p++] ^ flip;
                if (c != 0x01 && c != 0x02)
                  return key_corrupt (error, column, p - 1, "unknown escape");
                c -= 1;
              }
            *w++ = c;
          }

        out->type = tag == KEY_TAG_TEXT ? QSTORE_VALUE_TEXT : QSTORE_VALUE_BLOB;
        out->bytes.data = *scratch;
        out->bytes.len = w - *scratch;
        *scratch = w;
        *pos = p;
        return TRUE;
      }

    default:
      return key_corrupt (error, column, p - 1, "unknown value tag");
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
  g_autofree guint8 *scratch = NULL;
  const guint8 *data;
  gsize len;
  gsize pos = 0;

  g_return_val_if_fail (key != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  data = g_bytes_get_data (key, &len);
  scratch = g_malloc (MAX (len, 1));

  for (gsize i = 0; i < n_columns; i++)
    {
      guint8 *at = scratch;
      QStoreValue value;

      if (!qstore_codec_read_key_value (data, len, &pos, i, descending ? descending[i] : FALSE,
                                        &at, &value, error))
        return NULL;
      g_variant_builder_add_value (&builder,
                                   g_variant_new_variant (qstore_value_to_variant (&value)));
    }

  if (pos != len)
    {
      key_corrupt (error, n_columns, pos, "bytes follow the last column");
      return NULL;
    }

  return g_variant_ref_sink (g_variant_builder_end (&builder));
}

/* Upgrading */

/**
 * qstore_codec_upgrade_key: (skip)
 * @key: (array length=key_len): a key of any key format
 * @key_len: its length
 * @out: where the same key in this key format is appended
 * @error: return location for a #GError
 *
 * Rewrites the numbers of @key that the first key format wrote; every
 * other component is copied as it is, so a key already in this format
 * comes out unchanged. Directions are read off each component's tag.
 *
 * Returns: %TRUE on success, %FALSE with %QSTORE_ERROR_CORRUPT when @key
 *   is not a key
 */
gboolean
qstore_codec_upgrade_key (const guint8  *key,
                          gsize          key_len,
                          GByteArray    *out,
                          GError       **error)
{
  g_autofree guint8 *scratch = g_malloc (MAX (key_len, 1));
  gsize p = 0;

  for (gsize column = 0; p < key_len; column++)
    {
      gboolean descending = key[p] >= 0x80;
      guint8 flip = descending ? 0xff : 0x00;
      guint8 *at = scratch;
      QStoreValue value;
      gsize start = p;

      if ((key[p] ^ flip) == KEY_TAG_NUMBER_1)
        {
          gsize len = 0;

          if (!read_number_1 (key + p + 1, key_len - p - 1, flip, &len, &value))
            return key_corrupt (error, column, p, "a number is cut short or not in canonical form");
          p += 1 + len;
          if (value.type == QSTORE_VALUE_INTEGER)
            qstore_codec_append_integer (out, value.integer, descending);
          else
            append_numeric (out, value.real, 0, descending);
          continue;
        }

      if (!qstore_codec_read_key_value (key, key_len, &p, column, descending, &at, &value, error))
        return FALSE;
      g_byte_array_append (out, key + start, p - start);
    }
  return TRUE;
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
