/* qstore-affinity.c
 *
 * SQLite applies no column affinity to values written into a virtual
 * table, so qstore applies it, with SQLite's own conversions
 * (sqlite3_value_numeric_type() is exactly what numeric affinity does to
 * text), and a table declared in qstore stores what the same table would
 * store in SQLite.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "qstore-affinity-private.h"

void
qstore_value_from_sqlite (sqlite3_value *value,
                          QStoreValue   *out)
{
  memset (out, 0, sizeof *out);

  switch (sqlite3_value_type (value))
    {
    case SQLITE_INTEGER:
      out->type = QSTORE_VALUE_INTEGER;
      out->integer = sqlite3_value_int64 (value);
      break;

    case SQLITE_FLOAT:
      out->type = QSTORE_VALUE_REAL;
      out->real = sqlite3_value_double (value);
      break;

    case SQLITE_TEXT:
      out->type = QSTORE_VALUE_TEXT;
      out->bytes.data = sqlite3_value_text (value);
      out->bytes.len = sqlite3_value_bytes (value);
      break;

    case SQLITE_BLOB:
      out->type = QSTORE_VALUE_BLOB;
      out->bytes.data = sqlite3_value_blob (value);
      out->bytes.len = sqlite3_value_bytes (value);
      if (out->bytes.data == NULL)
        out->bytes.data = (const guint8 *) "";
      break;

    case SQLITE_NULL:
    default:
      out->type = QSTORE_VALUE_NULL;
      break;
    }
}

void
qstore_value_to_result (sqlite3_context   *context,
                        const QStoreValue *value)
{
  char terminated[256];

  switch (value->type)
    {
    case QSTORE_VALUE_INTEGER:
      sqlite3_result_int64 (context, value->integer);
      break;

    case QSTORE_VALUE_REAL:
      sqlite3_result_double (context, value->real);
      break;

    case QSTORE_VALUE_TEXT:
      /* SQLite marks text as NUL-terminated only when it measured it
       * itself; unmarked, each sqlite3_column_text() of it reallocates to
       * add the NUL. Short text without a NUL of its own goes with one. */
      if (value->bytes.len < sizeof terminated &&
          memchr (value->bytes.data, '\0', value->bytes.len) == NULL)
        {
          memcpy (terminated, value->bytes.data, value->bytes.len);
          terminated[value->bytes.len] = '\0';
          sqlite3_result_text (context, terminated, -1, SQLITE_TRANSIENT);
        }
      else
        sqlite3_result_text64 (context, (const char *) value->bytes.data, value->bytes.len,
                               SQLITE_TRANSIENT, SQLITE_UTF8);
      break;

    case QSTORE_VALUE_BLOB:
      sqlite3_result_blob64 (context, value->bytes.data, value->bytes.len, SQLITE_TRANSIENT);
      break;

    case QSTORE_VALUE_NULL:
    default:
      sqlite3_result_null (context);
      break;
    }
}

int
qstore_value_bind (sqlite3_stmt      *stmt,
                   int                position,
                   const QStoreValue *value)
{
  switch (value->type)
    {
    case QSTORE_VALUE_INTEGER:
      return sqlite3_bind_int64 (stmt, position, value->integer);

    case QSTORE_VALUE_REAL:
      return sqlite3_bind_double (stmt, position, value->real);

    case QSTORE_VALUE_TEXT:
      return sqlite3_bind_text64 (stmt, position, (const char *) value->bytes.data,
                                  value->bytes.len, SQLITE_TRANSIENT, SQLITE_UTF8);

    case QSTORE_VALUE_BLOB:
      return sqlite3_bind_blob64 (stmt, position, value->bytes.data, value->bytes.len,
                                  SQLITE_TRANSIENT);

    case QSTORE_VALUE_NULL:
    default:
      return sqlite3_bind_null (stmt, position);
    }
}

/* SQLite keeps a real as an integer when it converts back exactly, but
 * never for the extreme integers (its sqlite3VdbeIntegerAffinity()). */
static gboolean
real_is_integer (double  r,
                 gint64 *out)
{
  gint64 ix;

  if (!(r > -9223372036854775808.0 && r < 9223372036854775808.0))
    return FALSE;
  ix = (gint64) r;
  if ((double) ix != r || ix == G_MININT64 || ix == G_MAXINT64)
    return FALSE;
  *out = ix;
  return TRUE;
}

void
qstore_affinity_apply (QStoreAffinity  affinity,
                       sqlite3_value  *value,
                       QStoreValue    *out)
{
  int type = sqlite3_value_type (value);

  switch (affinity)
    {
    case QSTORE_AFFINITY_TEXT:
      if (type == SQLITE_INTEGER || type == SQLITE_FLOAT)
        {
          /* SQLite's own rendering: "%!.15g" for reals. */
          memset (out, 0, sizeof *out);
          out->type = QSTORE_VALUE_TEXT;
          out->bytes.data = sqlite3_value_text (value);
          out->bytes.len = sqlite3_value_bytes (value);
          return;
        }
      break;

    case QSTORE_AFFINITY_NUMERIC:
    case QSTORE_AFFINITY_INTEGER:
      if (type == SQLITE_TEXT)
        type = sqlite3_value_numeric_type (value);
      if (type == SQLITE_FLOAT)
        {
          gint64 ix;

          qstore_value_from_sqlite (value, out);
          if (real_is_integer (out->real, &ix))
            {
              out->type = QSTORE_VALUE_INTEGER;
              out->integer = ix;
            }
          return;
        }
      break;

    case QSTORE_AFFINITY_REAL:
      if (type == SQLITE_TEXT)
        type = sqlite3_value_numeric_type (value);
      if (type == SQLITE_INTEGER)
        {
          memset (out, 0, sizeof *out);
          out->type = QSTORE_VALUE_REAL;
          out->real = (double) sqlite3_value_int64 (value);
          return;
        }
      if (type == SQLITE_FLOAT)
        {
          /* SQLite keeps an integral real of a REAL column as an integer
           * and reads it back as a real, which turns -0.0 into 0.0. */
          qstore_value_from_sqlite (value, out);
          if (out->real == 0.0)
            out->real = 0.0;
          return;
        }
      break;

    case QSTORE_AFFINITY_BLOB:
    default:
      break;
    }

  qstore_value_from_sqlite (value, out);
}

gboolean
qstore_affinity_to_integer (sqlite3_value *value,
                            gint64        *out)
{
  QStoreValue converted;

  qstore_affinity_apply (QSTORE_AFFINITY_INTEGER, value, &converted);
  if (converted.type != QSTORE_VALUE_INTEGER)
    return FALSE;
  *out = converted.integer;
  return TRUE;
}

gboolean
qstore_affinity_for_compare (QStoreAffinity  affinity,
                             sqlite3_value  *value,
                             QStoreValue    *out)
{
  int type = sqlite3_value_type (value);

  switch (affinity)
    {
    case QSTORE_AFFINITY_NUMERIC:
    case QSTORE_AFFINITY_INTEGER:
    case QSTORE_AFFINITY_REAL:
      /* A numeric column always makes the comparison numeric. */
      if (type == SQLITE_TEXT)
        sqlite3_value_numeric_type (value);
      qstore_value_from_sqlite (value, out);
      return TRUE;

    case QSTORE_AFFINITY_TEXT:
    case QSTORE_AFFINITY_BLOB:
    default:
      qstore_value_from_sqlite (value, out);
      return type != SQLITE_INTEGER && type != SQLITE_FLOAT;
    }
}
