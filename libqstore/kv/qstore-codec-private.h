/* qstore-codec-private.h: the codec on plain C values
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "qstore-codec.h"

G_BEGIN_DECLS

typedef enum
{
  QSTORE_VALUE_NULL,
  QSTORE_VALUE_INTEGER,
  QSTORE_VALUE_REAL,
  QSTORE_VALUE_TEXT,
  QSTORE_VALUE_BLOB,
} QStoreValueType;

/* One SQL value. Text and blob bytes are borrowed, never owned: text is
 * UTF-8 by convention but may hold any bytes, NUL included (SQLite allows it).
 * The data pointer is never NULL, even for empty text or an empty blob:
 * SQLite takes a NULL pointer for SQL NULL. */
typedef struct
{
  QStoreValueType type;
  union
  {
    gint64 integer;
    double real;
    struct
    {
      const guint8 *data;
      gsize         len;
    } bytes;
  };
} QStoreValue;

gboolean  qstore_codec_append_key_value  (GByteArray         *out,
                                          const QStoreValue  *value,
                                          QStoreCollation     collation,
                                          gboolean            descending,
                                          GError            **error);
/* One key component into @out, its text or blob bytes unescaped to
 * *@scratch (which moves past them): see the function's comment. */
gboolean  qstore_codec_read_key_value    (const guint8       *key,
                                          gsize               key_len,
                                          gsize              *pos,
                                          gsize               column,
                                          gboolean            descending,
                                          guint8            **scratch,
                                          QStoreValue        *out,
                                          GError            **error);
/* What keys and rows both refuse: NaN, and values not in a tuple or
 * array of `v`. */
gboolean  qstore_codec_check_real        (double              value,
                                          GError            **error);
gboolean  qstore_codec_check_values      (GVariant           *values,
                                          GError            **error);
/* The format of the keys this codec writes, as the catalog's meta entry
 * QSTORE_KEY_FORMAT_META names it; qstore_database_put_catalog() writes
 * it with every catalog entry, so with the first table. */
#define QSTORE_KEY_FORMAT_META "key_format"
#define QSTORE_KEY_FORMAT      "2"

gboolean  qstore_codec_upgrade_key       (const guint8       *key,
                                          gsize               key_len,
                                          GByteArray         *out,
                                          GError            **error);

/* Converts a GVariant value (see qstore-codec.h; "v" boxes and non-empty
 * maybes are looked through; a floating @value is sunk) into @out. Returns
 * the GVariant @out borrows its bytes from: keep it while @out is used,
 * then unref it. NULL with QSTORE_ERROR_INVALID_ARGUMENT for other types. */
GVariant *qstore_value_from_variant      (GVariant           *value,
                                          QStoreValue        *out,
                                          GError            **error);
/* Returns a new floating GVariant; text that is not UTF-8 (or holds NUL) is
 * made valid with g_utf8_make_valid(). */
GVariant *qstore_value_to_variant        (const QStoreValue  *value);

void      qstore_row_encode              (GByteArray         *out,
                                          const QStoreValue  *values,
                                          gsize               n_values);

typedef struct
{
  const guint8 *start;
  const guint8 *p;
  const guint8 *end;
  guint         remaining;
} QStoreRowReader;

/* Reads the header of the row in @data; @n_values gets the column count.
 * Then call qstore_row_reader_next() exactly that many times: values borrow
 * from @data (zero copy). Malformed input, trailing bytes included, is
 * %QSTORE_ERROR_CORRUPT. */
gboolean  qstore_row_reader_init         (QStoreRowReader    *reader,
                                          const guint8       *data,
                                          gsize               len,
                                          guint              *n_values,
                                          GError            **error);
gboolean  qstore_row_reader_next         (QStoreRowReader    *reader,
                                          QStoreValue        *out,
                                          GError            **error);
/* The next @n values into @out, at the cost of one call: only the fields
 * their types use are set. */
gboolean  qstore_row_reader_read         (QStoreRowReader    *reader,
                                          QStoreValue        *out,
                                          guint               n,
                                          GError            **error);

G_END_DECLS
