/* test-codec.c: keys order as SQLite orders, rows round-trip, catalog keys
 *
 * The order tests use SQLite itself as the oracle. They are seeded; set
 * QSTORE_TEST_SEED to replay a run (the seed is printed).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <float.h>
#include <math.h>
#include <sqlite3.h>
#include <string.h>

#include <qstore.h>

#include "qstore-codec-private.h"

#define TWO_POW_53 (G_GINT64_CONSTANT (1) << 53)

/* Random numbers: splitmix64, so a seed replays on every platform. */

static guint64 rng_state;

static guint64
rng_next (void)
{
  guint64 z = (rng_state += G_GUINT64_CONSTANT (0x9e3779b97f4a7c15));

  z = (z ^ (z >> 30)) * G_GUINT64_CONSTANT (0xbf58476d1ce4e5b9);
  z = (z ^ (z >> 27)) * G_GUINT64_CONSTANT (0x94d049bb133111eb);
  return z ^ (z >> 31);
}

static guint
rng_below (guint n)
{
  return rng_next () % n;
}

static void
rng_seed_for (const char *test)
{
  const char *env = g_getenv ("QSTORE_TEST_SEED");
  guint64 seed = env ? g_ascii_strtoull (env, NULL, 0) : 20240611;

  rng_state = seed ^ g_str_hash (test);
  g_test_message ("%s: seed %" G_GUINT64_FORMAT " (QSTORE_TEST_SEED)", test, seed);
}

/* Hex, for golden vectors and messages */

static char *
to_hex (const guint8 *data,
        gsize         len)
{
  GString *s = g_string_sized_new (2 * len + 1);

  for (gsize i = 0; i < len; i++)
    g_string_append_printf (s, "%02x", data[i]);
  return g_string_free (s, FALSE);
}

/* Parses hex with optional spaces, for golden vectors. */
static GByteArray *
from_hex (const char *hex)
{
  GByteArray *out = g_byte_array_new ();

  while (*hex)
    {
      guint8 b;

      if (*hex == ' ')
        {
          hex++;
          continue;
        }
      g_assert_true (g_ascii_isxdigit (hex[0]) && g_ascii_isxdigit (hex[1]));
      b = (g_ascii_xdigit_value (hex[0]) << 4) | g_ascii_xdigit_value (hex[1]);
      g_byte_array_append (out, &b, 1);
      hex += 2;
    }
  return out;
}

static GBytes *
bytes_from_hex (const char *hex)
{
  return g_byte_array_free_to_bytes (from_hex (hex));
}

static void
assert_hex (const guint8 *data,
            gsize         len,
            const char   *expected)
{
  g_autoptr(GByteArray) want = from_hex (expected);
  g_autofree char *got_hex = to_hex (data, len);
  g_autofree char *want_hex = to_hex (want->data, want->len);

  g_assert_cmpstr (got_hex, ==, want_hex);
}

#define assert_array_hex(array, expected) \
  assert_hex ((array)->data, (array)->len, (expected))

static void
assert_gbytes_hex (GBytes     *bytes,
                   const char *expected)
{
  gsize len;
  const guint8 *data = g_bytes_get_data (bytes, &len);

  assert_hex (data, len, expected);
}

/* Test values with their own bytes */

typedef struct
{
  QStoreValue  v;
  guint8      *owned;
} TestValue;

static void
test_value_clear (TestValue *t)
{
  g_clear_pointer (&t->owned, g_free);
}

static void
test_value_set_bytes (TestValue       *t,
                      QStoreValueType  type,
                      const guint8    *data,
                      gsize            len)
{
  /* Never a NULL pointer, even when empty: SQLite binds NULL for it. */
  t->owned = g_malloc (len + 1);
  if (len > 0)
    memcpy (t->owned, data, len);
  t->owned[len] = 0;
  t->v.type = type;
  t->v.bytes.data = t->owned;
  t->v.bytes.len = len;
}

static char *
describe_value (const QStoreValue *v)
{
  g_autofree char *hex = NULL;

  switch (v->type)
    {
    case QSTORE_VALUE_NULL:
      return g_strdup ("NULL");
    case QSTORE_VALUE_INTEGER:
      return g_strdup_printf ("%" G_GINT64_FORMAT, v->integer);
    case QSTORE_VALUE_REAL:
      return g_strdup_printf ("%.17g (real)", v->real);
    case QSTORE_VALUE_TEXT:
      hex = to_hex (v->bytes.data, v->bytes.len);
      return g_strdup_printf ("text x'%s'", hex);
    case QSTORE_VALUE_BLOB:
      hex = to_hex (v->bytes.data, v->bytes.len);
      return g_strdup_printf ("blob x'%s'", hex);
    default:
      g_assert_not_reached ();
    }
}

static const gint64 special_integers[] = {
  0, 1, -1, 2, -2, 42, -42,
  G_MININT64, G_MAXINT64, G_MININT64 + 1, G_MAXINT64 - 1,
  TWO_POW_53, TWO_POW_53 + 1, TWO_POW_53 - 1, TWO_POW_53 + 2, TWO_POW_53 + 3,
  -TWO_POW_53, -TWO_POW_53 - 1, -TWO_POW_53 + 1, -TWO_POW_53 - 2,
  G_MAXINT64 - 511, G_MAXINT64 - 512, G_MAXINT64 - 513, G_MAXINT64 - 1023,
  G_MAXINT64 - 1024, G_MAXINT64 - 1025,
  G_MININT64 + 511, G_MININT64 + 512, G_MININT64 + 513,
  G_GINT64_CONSTANT (1) << 62, (G_GINT64_CONSTANT (1) << 62) + 1,
  -(G_GINT64_CONSTANT (1) << 62) - 1,
};

static const double special_reals[] = {
  0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, -1.5, 2.0, 42.0, 0.1,
  INFINITY, -INFINITY,
  9007199254740992.0, 9007199254740994.0, -9007199254740992.0,
  9007199254740991.0, 9007199254740993.5 /* rounds to 2^53 + 2 */,
  9223372036854775808.0, -9223372036854775808.0,
  9223372036854774784.0, -9223372036854774784.0,
  18446744073709551616.0, -18446744073709551616.0,
  4611686018427387904.0,
  1e300, -1e300, DBL_MAX, -DBL_MAX, DBL_MIN, -DBL_MIN,
  4.9406564584124654e-324, -4.9406564584124654e-324,
  2.2250738585072009e-308, 1e-300,
};

static const guint8 text_alphabet[] = {
  'a', 'A', 'b', 'B', 'z', 'Z', ' ', ' ', 0x00, 0x01, 0x02, '~', 0x7f,
};

static const guint8 blob_alphabet[] = {
  0x00, 0x01, 0x02, ' ', 'a', 'A', 0x7f, 0x80, 0xfe, 0xff,
};

static void
gen_text (TestValue *t)
{
  GByteArray *b = g_byte_array_new ();
  guint len = rng_below (8) == 0 ? rng_below (13) : rng_below (4);

  for (guint i = 0; i < len; i++)
    {
      guint pick = rng_below (G_N_ELEMENTS (text_alphabet) + 3);

      if (pick < G_N_ELEMENTS (text_alphabet))
        {
          g_byte_array_append (b, &text_alphabet[pick], 1);
        }
      else if (pick == G_N_ELEMENTS (text_alphabet))
        {
          g_byte_array_append (b, (const guint8 *) "\xc3\xa9", 2);  /* é */
        }
      else if (pick == G_N_ELEMENTS (text_alphabet) + 1)
        {
          g_byte_array_append (b, (const guint8 *) "\xc3\x89", 2);  /* É */
        }
      else
        {
          guint8 lone = rng_below (2) ? 0xff : 0xc3;  /* not UTF-8 */

          g_byte_array_append (b, &lone, 1);
        }
    }
  if (rng_below (4) == 0)
    g_byte_array_append (b, (const guint8 *) "   ", 1 + rng_below (3));

  test_value_set_bytes (t, QSTORE_VALUE_TEXT, b->data, b->len);
  g_byte_array_unref (b);
}

static void
gen_blob (TestValue *t)
{
  guint8 buf[6];
  guint len = rng_below (G_N_ELEMENTS (buf) + 1);

  for (guint i = 0; i < len; i++)
    buf[i] = blob_alphabet[rng_below (G_N_ELEMENTS (blob_alphabet))];
  test_value_set_bytes (t, QSTORE_VALUE_BLOB, buf, len);
}

static double
gen_random_real (void)
{
  for (;;)
    {
      guint64 bits = rng_next ();
      double d;

      memcpy (&d, &bits, sizeof d);
      if (!isnan (d))
        return d;
    }
}

static void
gen_value (TestValue *t)
{
  guint kind = rng_below (100);

  memset (t, 0, sizeof *t);

  if (kind < 6)
    {
      t->v.type = QSTORE_VALUE_NULL;
    }
  else if (kind < 14)
    {
      t->v.type = QSTORE_VALUE_INTEGER;
      t->v.integer = special_integers[rng_below (G_N_ELEMENTS (special_integers))];
    }
  else if (kind < 22)
    {
      t->v.type = QSTORE_VALUE_INTEGER;
      t->v.integer = (gint64) rng_below (11) - 5;
    }
  else if (kind < 26)
    {
      t->v.type = QSTORE_VALUE_INTEGER;
      t->v.integer = (gint64) rng_next ();
    }
  else if (kind < 32)
    {
      /* Next to the places where doubles run out of precision. */
      static const gint64 bases[] = { TWO_POW_53, -TWO_POW_53, G_MAXINT64, G_MININT64,
                                      G_GINT64_CONSTANT (1) << 60 };
      gint64 base = bases[rng_below (G_N_ELEMENTS (bases))];
      gint64 delta = (gint64) rng_below (2048);

      t->v.type = QSTORE_VALUE_INTEGER;
      t->v.integer = base > 0 ? base - delta : base + delta;
      if (base == TWO_POW_53 || base == -TWO_POW_53)
        t->v.integer = base + (gint64) rng_below (64) - 32;
    }
  else if (kind < 38)
    {
      t->v.type = QSTORE_VALUE_REAL;
      t->v.real = special_reals[rng_below (G_N_ELEMENTS (special_reals))];
    }
  else if (kind < 43)
    {
      /* Reals equal to integers that may be in the set. */
      t->v.type = QSTORE_VALUE_REAL;
      if (rng_below (2))
        t->v.real = (double) ((gint64) rng_below (11) - 5);
      else
        t->v.real = (double) special_integers[rng_below (G_N_ELEMENTS (special_integers))];
    }
  else if (kind < 46)
    {
      t->v.type = QSTORE_VALUE_REAL;
      t->v.real = gen_random_real ();
    }
  else if (kind < 50)
    {
      t->v.type = QSTORE_VALUE_REAL;
      t->v.real = (double) ((gint64) rng_below (11) - 5) + 0.5;
    }
  else if (kind < 80)
    {
      gen_text (t);
    }
  else
    {
      gen_blob (t);
    }
}

/* Few distinct values, so that leading columns of composite keys tie often
 * and the later columns decide. */
static void
gen_narrow_value (TestValue *t)
{
  static const char *const texts[] = { "", "a", "A", "a ", "b", "a\0x", "a\0y", "A\0", "a\0xx" };
  static const gsize text_lens[] = { 0, 1, 1, 2, 1, 3, 3, 2, 4 };
  guint kind = rng_below (5);

  memset (t, 0, sizeof *t);

  switch (kind)
    {
    case 0:
      t->v.type = QSTORE_VALUE_NULL;
      break;
    case 1:
      {
        static const gint64 ints[] = { -1, 0, 1, TWO_POW_53, TWO_POW_53 + 1 };

        t->v.type = QSTORE_VALUE_INTEGER;
        t->v.integer = ints[rng_below (G_N_ELEMENTS (ints))];
      }
      break;
    case 2:
      {
        static const double reals[] = { 0.0, -0.0, 1.0, 0.5, 9007199254740992.0 };

        t->v.type = QSTORE_VALUE_REAL;
        t->v.real = reals[rng_below (G_N_ELEMENTS (reals))];
      }
      break;
    case 3:
      {
        guint i = rng_below (G_N_ELEMENTS (texts));

        test_value_set_bytes (t, QSTORE_VALUE_TEXT, (const guint8 *) texts[i], text_lens[i]);
      }
      break;
    default:
      {
        static const char *const blobs[] = { "", "\0", "a" };
        guint i = rng_below (G_N_ELEMENTS (blobs));

        test_value_set_bytes (t, QSTORE_VALUE_BLOB, (const guint8 *) blobs[i], i == 0 ? 0 : 1);
      }
      break;
    }
}

/* Encodes through the public append functions, and checks that the C entry
 * point the SQL layer uses writes the same bytes. */
static void
encode_component (GByteArray        *out,
                  const QStoreValue *v,
                  QStoreCollation    collation,
                  gboolean           descending)
{
  g_autoptr(GByteArray) again = g_byte_array_new ();
  g_autoptr(GError) error = NULL;
  guint start = out->len;

  switch (v->type)
    {
    case QSTORE_VALUE_NULL:
      qstore_codec_append_null (out, descending);
      break;
    case QSTORE_VALUE_INTEGER:
      qstore_codec_append_integer (out, v->integer, descending);
      break;
    case QSTORE_VALUE_REAL:
      g_assert_true (qstore_codec_append_real (out, v->real, descending, &error));
      g_assert_no_error (error);
      break;
    case QSTORE_VALUE_TEXT:
      qstore_codec_append_text (out, (const char *) v->bytes.data, v->bytes.len,
                                collation, descending);
      break;
    case QSTORE_VALUE_BLOB:
      qstore_codec_append_blob (out, v->bytes.data, v->bytes.len, descending);
      break;
    default:
      g_assert_not_reached ();
    }

  g_assert_true (qstore_codec_append_key_value (again, v, collation, descending, &error));
  g_assert_no_error (error);
  g_assert_cmpmem (again->data, again->len, out->data + start, out->len - start);
}

/* The SQLite oracle */

static const char *
collation_name (QStoreCollation c)
{
  switch (c)
    {
    case QSTORE_COLLATION_BINARY:
      return "BINARY";
    case QSTORE_COLLATION_NOCASE:
      return "NOCASE";
    case QSTORE_COLLATION_RTRIM:
      return "RTRIM";
    default:
      g_assert_not_reached ();
    }
}

static void
bind_value (sqlite3_stmt      *stmt,
            int                index,
            const QStoreValue *v)
{
  int rc;

  switch (v->type)
    {
    case QSTORE_VALUE_NULL:
      rc = sqlite3_bind_null (stmt, index);
      break;
    case QSTORE_VALUE_INTEGER:
      rc = sqlite3_bind_int64 (stmt, index, v->integer);
      break;
    case QSTORE_VALUE_REAL:
      rc = sqlite3_bind_double (stmt, index, v->real);
      break;
    case QSTORE_VALUE_TEXT:
      /* With an explicit length, so embedded NULs count. */
      rc = sqlite3_bind_text (stmt, index, (const char *) v->bytes.data,
                              v->bytes.len, SQLITE_STATIC);
      break;
    case QSTORE_VALUE_BLOB:
      rc = sqlite3_bind_blob (stmt, index, v->bytes.data, v->bytes.len, SQLITE_STATIC);
      break;
    default:
      g_assert_not_reached ();
    }
  g_assert_cmpint (rc, ==, SQLITE_OK);
}

static void
exec_sql (sqlite3    *db,
          const char *sql)
{
  char *message = NULL;
  int rc = sqlite3_exec (db, sql, NULL, NULL, &message);

  if (rc != SQLITE_OK)
    g_error ("%s: %s", sql, message);
}

static sqlite3_stmt *
prepare (sqlite3    *db,
         const char *sql)
{
  sqlite3_stmt *stmt = NULL;

  if (sqlite3_prepare_v2 (db, sql, -1, &stmt, NULL) != SQLITE_OK)
    g_error ("%s: %s", sql, sqlite3_errmsg (db));
  return stmt;
}

typedef struct
{
  GBytes **keys;
} SortData;

static gint
compare_by_key (gconstpointer a,
                gconstpointer b,
                gpointer      user_data)
{
  const SortData *data = user_data;
  guint ia = *(const guint *) a;
  guint ib = *(const guint *) b;
  gsize la, lb;
  const guint8 *ka = g_bytes_get_data (data->keys[ia], &la);
  const guint8 *kb = g_bytes_get_data (data->keys[ib], &lb);
  int cmp = qstore_key_compare (ka, la, kb, lb);

  if (cmp != 0)
    return cmp;
  return (ia > ib) - (ia < ib);
}

static char *
describe_row (TestValue *row,
              guint      n_cols)
{
  GString *s = g_string_new ("(");

  for (guint c = 0; c < n_cols; c++)
    {
      g_autofree char *d = describe_value (&row[c].v);

      g_string_append_printf (s, "%s%s", c ? ", " : "", d);
    }
  g_string_append_c (s, ')');
  return g_string_free (s, FALSE);
}

/* Inserts @n_rows random rows into an in-memory SQLite table whose columns
 * carry @collations, asks SQLite for their order, and checks that sorting
 * the encoded keys gives the same order and that adjacent rows are equal
 * in SQLite exactly when their keys are equal. */
static void
check_against_sqlite (guint                  n_cols,
                      const QStoreCollation *collations,
                      const gboolean        *descending,
                      guint                  n_rows,
                      guint                  narrow_percent)
{
  g_autoptr(GString) sql = g_string_new (NULL);
  g_autofree TestValue *values = g_new0 (TestValue, (gsize) n_rows * n_cols);
  g_autofree GBytes **keys = g_new0 (GBytes *, n_rows);
  g_autofree guint *by_sqlite = g_new0 (guint, n_rows);
  g_autofree guint *by_key = g_new0 (guint, n_rows);
  sqlite3_stmt *stmt;
  sqlite3 *db = NULL;
  SortData sort_data = { keys };
  guint n_equal = 0;
  guint n;

  g_assert_cmpint (sqlite3_open (":memory:", &db), ==, SQLITE_OK);

  g_string_append (sql, "CREATE TABLE t(i INTEGER PRIMARY KEY");
  for (guint c = 0; c < n_cols; c++)
    g_string_append_printf (sql, ", c%u COLLATE %s", c, collation_name (collations[c]));
  g_string_append (sql, ")");
  exec_sql (db, sql->str);

  g_string_assign (sql, "INSERT INTO t VALUES (?1");
  for (guint c = 0; c < n_cols; c++)
    g_string_append_printf (sql, ", ?%u", c + 2);
  g_string_append (sql, ")");

  exec_sql (db, "BEGIN");
  stmt = prepare (db, sql->str);
  for (guint i = 0; i < n_rows; i++)
    {
      g_autoptr(GByteArray) key = g_byte_array_new ();
      TestValue *row = &values[(gsize) i * n_cols];

      for (guint c = 0; c < n_cols; c++)
        {
          if (rng_below (100) < narrow_percent)
            gen_narrow_value (&row[c]);
          else
            gen_value (&row[c]);
          bind_value (stmt, c + 2, &row[c].v);
          encode_component (key, &row[c].v, collations[c], descending[c]);
        }
      sqlite3_bind_int64 (stmt, 1, i);
      g_assert_cmpint (sqlite3_step (stmt), ==, SQLITE_DONE);
      sqlite3_reset (stmt);
      keys[i] = g_byte_array_free_to_bytes (g_steal_pointer (&key));
      by_key[i] = i;
    }
  sqlite3_finalize (stmt);
  exec_sql (db, "COMMIT");

  g_string_assign (sql, "SELECT i FROM t ORDER BY ");
  for (guint c = 0; c < n_cols; c++)
    g_string_append_printf (sql, "c%u COLLATE %s%s, ", c, collation_name (collations[c]),
                            descending[c] ? " DESC" : "");
  g_string_append (sql, "i");
  g_test_message ("%s", sql->str);

  stmt = prepare (db, sql->str);
  for (n = 0; sqlite3_step (stmt) == SQLITE_ROW; n++)
    {
      g_assert_cmpuint (n, <, n_rows);
      by_sqlite[n] = sqlite3_column_int64 (stmt, 0);
    }
  sqlite3_finalize (stmt);
  g_assert_cmpuint (n, ==, n_rows);

  g_qsort_with_data (by_key, n_rows, sizeof (guint), compare_by_key, &sort_data);

  for (guint k = 0; k < n_rows; k++)
    {
      if (by_sqlite[k] != by_key[k])
        {
          g_autofree char *s = describe_row (&values[(gsize) by_sqlite[k] * n_cols], n_cols);
          g_autofree char *q = describe_row (&values[(gsize) by_key[k] * n_cols], n_cols);

          g_error ("%s: position %u: SQLite has row %u %s, the keys give row %u %s",
                   sql->str, k, by_sqlite[k], s, by_key[k], q);
        }
    }

  /* In a total preorder, equal rows are adjacent: checking neighbours is
   * checking every pair. */
  g_string_assign (sql, "SELECT 1");
  for (guint c = 0; c < n_cols; c++)
    g_string_append_printf (sql, " AND (?%u IS ?%u COLLATE %s)",
                            2 * c + 1, 2 * c + 2, collation_name (collations[c]));
  stmt = prepare (db, sql->str);
  for (guint k = 0; k + 1 < n_rows; k++)
    {
      TestValue *a = &values[(gsize) by_sqlite[k] * n_cols];
      TestValue *b = &values[(gsize) by_sqlite[k + 1] * n_cols];
      gboolean sqlite_equal;
      gboolean keys_equal;

      for (guint c = 0; c < n_cols; c++)
        {
          bind_value (stmt, 2 * c + 1, &a[c].v);
          bind_value (stmt, 2 * c + 2, &b[c].v);
        }
      g_assert_cmpint (sqlite3_step (stmt), ==, SQLITE_ROW);
      sqlite_equal = sqlite3_column_int (stmt, 0) != 0;
      sqlite3_reset (stmt);

      keys_equal = g_bytes_equal (keys[by_sqlite[k]], keys[by_sqlite[k + 1]]);
      if (sqlite_equal != keys_equal)
        {
          g_autofree char *s = describe_row (a, n_cols);
          g_autofree char *q = describe_row (b, n_cols);

          g_error ("%s: %s and %s: SQLite says %s, the keys say %s", sql->str, s, q,
                   sqlite_equal ? "equal" : "different",
                   keys_equal ? "equal" : "different");
        }
      n_equal += sqlite_equal;
    }
  sqlite3_finalize (stmt);

  /* The generators are meant to produce ties; make sure they did. */
  g_assert_cmpuint (n_equal, >, n_rows / 50);

  for (guint i = 0; i < n_rows; i++)
    g_bytes_unref (keys[i]);
  for (gsize i = 0; i < (gsize) n_rows * n_cols; i++)
    test_value_clear (&values[i]);
  sqlite3_close (db);
}

static void
test_order_single (void)
{
  rng_seed_for ("/codec/order/single");

  for (QStoreCollation c = QSTORE_COLLATION_BINARY; c <= QSTORE_COLLATION_RTRIM; c++)
    {
      for (int desc = 0; desc <= 1; desc++)
        {
          gboolean d = desc;

          check_against_sqlite (1, &c, &d, 3000, 10);
        }
    }
}

static void
test_order_composite (void)
{
  rng_seed_for ("/codec/order/composite");

  for (guint round = 0; round < 10; round++)
    {
      QStoreCollation collations[3];
      gboolean descending[3];
      guint n_cols = 2 + rng_below (2);

      for (guint c = 0; c < n_cols; c++)
        {
          collations[c] = rng_below (3);
          descending[c] = rng_below (2);
        }
      check_against_sqlite (n_cols, collations, descending, 2000, 70);
    }
}

/* Golden vectors, written by hand from the format */

static void
test_golden_keys (void)
{
  g_autoptr(GByteArray) b = g_byte_array_new ();
  g_autoptr(GError) error = NULL;

#define RESET() g_byte_array_set_size (b, 0)
#define REAL(x, desc) G_STMT_START { \
    g_assert_true (qstore_codec_append_real (b, (x), (desc), &error)); \
    g_assert_no_error (error); \
  } G_STMT_END

  qstore_codec_append_null (b, FALSE);
  assert_array_hex (b, "00");
  RESET ();
  qstore_codec_append_null (b, TRUE);
  assert_array_hex (b, "ff");
  RESET ();

  qstore_codec_append_integer (b, 0, FALSE);
  assert_array_hex (b, "02 80");
  RESET ();
  REAL (0.0, FALSE);
  assert_array_hex (b, "02 80");
  RESET ();
  REAL (-0.0, FALSE);
  assert_array_hex (b, "02 80");
  RESET ();
  qstore_codec_append_integer (b, 1, FALSE);
  assert_array_hex (b, "02 bff8");
  RESET ();
  REAL (1.0, FALSE);
  assert_array_hex (b, "02 bff8");
  RESET ();
  qstore_codec_append_integer (b, -1, FALSE);
  assert_array_hex (b, "02 4107ffffffffffffff80");
  RESET ();
  REAL (1.5, FALSE);
  assert_array_hex (b, "02 bffc");
  RESET ();
  REAL (INFINITY, FALSE);
  assert_array_hex (b, "02 fff90101010101010140");
  RESET ();
  REAL (-INFINITY, FALSE);
  assert_array_hex (b, "02 0107ffffffffffffffc0");
  RESET ();
  REAL (4.9406564584124654e-324, FALSE);
  assert_array_hex (b, "02 81010101010101010180");
  RESET ();
  REAL (-4.9406564584124654e-324, FALSE);
  assert_array_hex (b, "02 7ffffffffffffffffe");
  RESET ();
  /* INT64_MAX rounds to 2^63 and is 1 below it. */
  qstore_codec_append_integer (b, G_MAXINT64, FALSE);
  assert_array_hex (b, "02 c3f1010101010101013fffffffffffffffffc0");
  RESET ();
  REAL (9223372036854775808.0, FALSE);
  assert_array_hex (b, "02 c3f10101010101010140");
  RESET ();
  qstore_codec_append_integer (b, G_MININT64, FALSE);
  assert_array_hex (b, "02 3d0fffffffffffffffc0");
  RESET ();
  /* 2^53 + 1 rounds (to even) down to 2^53. */
  qstore_codec_append_integer (b, TWO_POW_53 + 1, FALSE);
  assert_array_hex (b, "02 c3a10101010101010141010101010101010140");
  RESET ();
  qstore_codec_append_integer (b, -TWO_POW_53 - 1, FALSE);
  assert_array_hex (b, "02 3d5fffffffffffffffbfffffffffffffffffc0");
  RESET ();
  qstore_codec_append_integer (b, 1, TRUE);
  assert_array_hex (b, "fd 4007");
  RESET ();

  qstore_codec_append_text (b, "aB", 2, QSTORE_COLLATION_BINARY, FALSE);
  assert_array_hex (b, "03 6142 00");
  RESET ();
  qstore_codec_append_text (b, "aB", 2, QSTORE_COLLATION_NOCASE, FALSE);
  assert_array_hex (b, "03 6162 00");
  RESET ();
  qstore_codec_append_text (b, "a ", 2, QSTORE_COLLATION_BINARY, FALSE);
  assert_array_hex (b, "03 6120 00");
  RESET ();
  qstore_codec_append_text (b, " a  ", 4, QSTORE_COLLATION_RTRIM, FALSE);
  assert_array_hex (b, "03 2061 00");
  RESET ();
  qstore_codec_append_text (b, "A  ", 3, QSTORE_COLLATION_RTRIM, FALSE);
  assert_array_hex (b, "03 41 00");
  RESET ();
  qstore_codec_append_text (b, "\0\1x", 3, QSTORE_COLLATION_BINARY, FALSE);
  assert_array_hex (b, "03 0101 0102 78 00");
  RESET ();
  /* NOCASE: after the first NUL only the length counts. */
  qstore_codec_append_text (b, "A\0Bc", 4, QSTORE_COLLATION_NOCASE, FALSE);
  assert_array_hex (b, "03 61 0101 0101 0101 00");
  RESET ();
  /* Only ASCII folds. */
  qstore_codec_append_text (b, "\xc3\x80" "B", 3, QSTORE_COLLATION_NOCASE, FALSE);
  assert_array_hex (b, "03 c380 62 00");
  RESET ();
  qstore_codec_append_text (b, "a", 1, QSTORE_COLLATION_BINARY, TRUE);
  assert_array_hex (b, "fc 9e ff");
  RESET ();
  qstore_codec_append_text (b, "", 0, QSTORE_COLLATION_BINARY, FALSE);
  assert_array_hex (b, "03 00");
  RESET ();
  qstore_codec_append_text (b, NULL, 0, QSTORE_COLLATION_NOCASE, TRUE);
  assert_array_hex (b, "fc ff");
  RESET ();

  qstore_codec_append_blob (b, (const guint8 *) "\0\1\xff", 3, FALSE);
  assert_array_hex (b, "04 0101 0102 ff 00");
  RESET ();
  qstore_codec_append_blob (b, NULL, 0, FALSE);
  assert_array_hex (b, "04 00");
  RESET ();
  qstore_codec_append_blob (b, (const guint8 *) "\2", 1, TRUE);
  assert_array_hex (b, "fb fd ff");
  RESET ();

  /* GVariant values, boxed or not, and other integer types. */
  g_assert_true (qstore_codec_append_value (b, g_variant_new_variant (g_variant_new_int64 (5)),
                                            QSTORE_COLLATION_BINARY, FALSE, &error));
  g_assert_true (qstore_codec_append_value (b, g_variant_new_int32 (5),
                                            QSTORE_COLLATION_BINARY, FALSE, &error));
  g_assert_true (qstore_codec_append_value (b, g_variant_new_string ("Hi "),
                                            QSTORE_COLLATION_RTRIM, FALSE, &error));
  g_assert_true (qstore_codec_append_value (b, qstore_value_new_null (),
                                            QSTORE_COLLATION_BINARY, TRUE, &error));
  g_assert_no_error (error);
  assert_array_hex (b, "02 c10a"
                       "02 c10a"
                       "03 4869 00"
                       "ff");
  RESET ();

#undef RESET
#undef REAL
}

static GVariant *
make_tuple (GVariant *first,
            ...)
{
  GVariantBuilder builder;
  va_list ap;

  g_variant_builder_init (&builder, G_VARIANT_TYPE_TUPLE);
  va_start (ap, first);
  for (GVariant *v = first; v != NULL; v = va_arg (ap, GVariant *))
    g_variant_builder_add_value (&builder, v);
  va_end (ap);
  return g_variant_builder_end (&builder);
}

static GVariant *
make_blob (const void *data,
           gsize       len)
{
  return g_variant_new_fixed_array (G_VARIANT_TYPE_BYTE, data, len, 1);
}

static void
test_golden_composite (void)
{
  const QStoreCollation collations[] = {
    QSTORE_COLLATION_BINARY, QSTORE_COLLATION_BINARY, QSTORE_COLLATION_NOCASE,
  };
  const gboolean descending[] = { FALSE, TRUE, FALSE };
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) key = NULL;
  g_autoptr(GBytes) key_av = NULL;
  g_autoptr(GVariant) av = NULL;
  GVariant *children[3];

  key = qstore_codec_encode_key (make_tuple (qstore_value_new_null (),
                                             g_variant_new_int64 (1),
                                             g_variant_new_string ("Ab"),
                                             NULL),
                                 collations, descending, 3, &error);
  g_assert_no_error (error);
  assert_gbytes_hex (key, "00 fd4007 03 6162 00");

  /* The same as an "av". */
  children[0] = g_variant_new_variant (qstore_value_new_null ());
  children[1] = g_variant_new_variant (g_variant_new_int64 (1));
  children[2] = g_variant_new_variant (g_variant_new_string ("AB"));
  av = g_variant_ref_sink (g_variant_new_array (G_VARIANT_TYPE_VARIANT, children, 3));
  key_av = qstore_codec_encode_key (av, collations, descending, 3, &error);
  g_assert_no_error (error);
  g_assert_true (g_bytes_equal (key, key_av));

  /* NULL collations and directions: BINARY, ascending. */
  g_clear_pointer (&key, g_bytes_unref);
  key = qstore_codec_encode_key (make_tuple (g_variant_new_string ("Ab"),
                                             make_blob ("\0", 1), NULL),
                                 NULL, NULL, 2, &error);
  g_assert_no_error (error);
  assert_gbytes_hex (key, "03 4162 00 04 0101 00");

  g_clear_pointer (&key, g_bytes_unref);
  key = qstore_codec_encode_key (g_variant_new_tuple (NULL, 0), NULL, NULL, 0, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (g_bytes_get_size (key), ==, 0);
}

static void
test_golden_rows (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) row = NULL;

  row = qstore_codec_encode_row (make_tuple (qstore_value_new_null (),
                                             g_variant_new_int64 (1),
                                             g_variant_new_int64 (-1),
                                             g_variant_new_double (1.5),
                                             g_variant_new_string ("hi"),
                                             make_blob ("\0\xff", 2),
                                             NULL),
                                 &error);
  g_assert_no_error (error);
  assert_gbytes_hex (row, "01 06 00 0102 0101 02 000000000000f83f 03 02 6869 04 02 00ff");
  g_clear_pointer (&row, g_bytes_unref);

  row = qstore_codec_encode_row (make_tuple (g_variant_new_int64 (300),
                                             g_variant_new_int64 (G_MININT64),
                                             g_variant_new_int64 (G_MAXINT64),
                                             g_variant_new_double (-0.0),
                                             NULL),
                                 &error);
  g_assert_no_error (error);
  assert_gbytes_hex (row, "01 04 01 d804 01 ffffffffffffffffff01 01 feffffffffffffffff01"
                          " 02 0000000000000080");
  g_clear_pointer (&row, g_bytes_unref);

  row = qstore_codec_encode_row (g_variant_new_tuple (NULL, 0), &error);
  g_assert_no_error (error);
  assert_gbytes_hex (row, "01 00");
}

/* Key decoding */

/* The normal form of text under @collation, written out plainly. */
static GByteArray *
reference_normal_form (const QStoreValue *v,
                       QStoreCollation    collation)
{
  GByteArray *out = g_byte_array_new ();
  gsize len = v->bytes.len;
  gboolean seen_nul = FALSE;

  if (collation == QSTORE_COLLATION_RTRIM)
    while (len > 0 && v->bytes.data[len - 1] == ' ')
      len--;
  for (gsize i = 0; i < len; i++)
    {
      guint8 c = v->bytes.data[i];

      if (collation == QSTORE_COLLATION_NOCASE)
        {
          if (seen_nul)
            c = 0;
          else if (c == 0)
            seen_nul = TRUE;
          else
            c = g_ascii_tolower (c);
        }
      g_byte_array_append (out, &c, 1);
    }
  return out;
}

static GVariant *
expected_decoded (const QStoreValue *v,
                  QStoreCollation    collation)
{
  g_autoptr(GByteArray) normal = NULL;

  switch (v->type)
    {
    case QSTORE_VALUE_NULL:
      return qstore_value_new_null ();
    case QSTORE_VALUE_INTEGER:
      return g_variant_new_int64 (v->integer);
    case QSTORE_VALUE_REAL:
      if (v->real >= -9223372036854775808.0 && v->real < 9223372036854775808.0 &&
          (double) (gint64) v->real == v->real)
        return g_variant_new_int64 ((gint64) v->real);
      return g_variant_new_double (v->real);
    case QSTORE_VALUE_TEXT:
      normal = reference_normal_form (v, collation);
      if (normal->len == 0)
        return g_variant_new_string ("");
      return g_variant_new_take_string (g_utf8_make_valid ((const char *) normal->data,
                                                           normal->len));
    case QSTORE_VALUE_BLOB:
      return make_blob (v->bytes.data, v->bytes.len);
    default:
      g_assert_not_reached ();
    }
}

static void
test_decode_key (void)
{
  rng_seed_for ("/codec/key/decode");

  for (guint round = 0; round < 2000; round++)
    {
      g_autoptr(GByteArray) key = g_byte_array_new ();
      g_autoptr(GBytes) bytes = NULL;
      g_autoptr(GVariant) decoded = NULL;
      g_autoptr(GBytes) again = NULL;
      g_autoptr(GError) error = NULL;
      QStoreCollation collations[3];
      gboolean descending[3];
      TestValue values[3];
      gboolean reencodable = TRUE;
      guint n_cols = 1 + rng_below (3);

      for (guint c = 0; c < n_cols; c++)
        {
          collations[c] = rng_below (3);
          descending[c] = rng_below (2);
          gen_value (&values[c]);
          encode_component (key, &values[c].v, collations[c], descending[c]);
          if (values[c].v.type == QSTORE_VALUE_TEXT &&
              !g_utf8_validate_len ((const char *) values[c].v.bytes.data,
                                    values[c].v.bytes.len, NULL))
            reencodable = FALSE;
        }
      bytes = g_byte_array_free_to_bytes (g_steal_pointer (&key));

      decoded = qstore_codec_decode_key (bytes, descending, n_cols, &error);
      g_assert_no_error (error);
      g_assert_true (g_variant_is_of_type (decoded, G_VARIANT_TYPE_TUPLE));
      g_assert_cmpuint (g_variant_n_children (decoded), ==, n_cols);

      for (guint c = 0; c < n_cols; c++)
        {
          g_autoptr(GVariant) boxed = g_variant_get_child_value (decoded, c);
          g_autoptr(GVariant) got = NULL;
          g_autoptr(GVariant) want = g_variant_ref_sink (expected_decoded (&values[c].v,
                                                                           collations[c]));

          g_assert_true (g_variant_is_of_type (boxed, G_VARIANT_TYPE_VARIANT));
          got = g_variant_get_variant (boxed);
          if (!g_variant_equal (got, want))
            {
              g_autofree char *d = describe_value (&values[c].v);
              g_autofree char *g = g_variant_print (got, TRUE);
              g_autofree char *w = g_variant_print (want, TRUE);

              g_error ("%s decoded as %s, expected %s", d, g, w);
            }
        }

      /* Normal forms are fixed points: encoding them again gives the key. */
      if (reencodable)
        {
          again = qstore_codec_encode_key (decoded, collations, descending, n_cols, &error);
          g_assert_no_error (error);
          g_assert_true (g_bytes_equal (again, bytes));
        }

      for (guint c = 0; c < n_cols; c++)
        test_value_clear (&values[c]);
    }
}

static void
assert_key_corrupt (const char     *hex,
                    const gboolean *descending,
                    gsize           n_columns)
{
  g_autoptr(GBytes) key = bytes_from_hex (hex);
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) decoded = qstore_codec_decode_key (key, descending, n_columns, &error);

  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_CORRUPT);
  g_assert_null (decoded);
}

/* A number as the first key format wrote it: 0x01, the double's bits made
 * sortable, then the int64's distance from that double plus 2^63, both
 * big-endian; every byte complemented when descending. */
static void
append_number_1 (GByteArray *out,
                 double      d,
                 gint64      residual,
                 gboolean    descending)
{
  guint8 buf[17] = { 0x01 };
  guint64 bits;

  if (d == 0.0)
    d = 0.0;
  memcpy (&bits, &d, sizeof bits);
  bits = (bits >> 63) ? ~bits : bits | G_GUINT64_CONSTANT (0x8000000000000000);
  for (guint i = 0; i < 8; i++)
    {
      buf[1 + i] = (guint8) (bits >> (56 - 8 * i));
      buf[9 + i] = (guint8) (((guint64) residual ^ G_GUINT64_CONSTANT (0x8000000000000000)) >> (56 - 8 * i));
    }
  if (descending)
    for (guint i = 0; i < sizeof buf; i++)
      buf[i] = ~buf[i];
  g_byte_array_append (out, buf, sizeof buf);
}

static void
append_integer_1 (GByteArray *out,
                  gint64      value,
                  gboolean    descending)
{
  double d = (double) value;

  /* INT64_MAX and its neighbours round up to 2^63. */
  if (d >= 9223372036854775808.0)
    append_number_1 (out, d, (value - G_MAXINT64) - 1, descending);
  else
    append_number_1 (out, d, value - (gint64) d, descending);
}

static void
assert_upgrades_to (GByteArray *from,
                    GByteArray *want)
{
  g_autoptr(GByteArray) got = g_byte_array_new ();
  g_autoptr(GError) error = NULL;
  g_autofree char *got_hex = NULL;
  g_autofree char *want_hex = to_hex (want->data, want->len);

  g_assert_true (qstore_codec_upgrade_key (from->data, from->len, got, &error));
  g_assert_no_error (error);
  got_hex = to_hex (got->data, got->len);
  g_assert_cmpstr (got_hex, ==, want_hex);
}

/* Keys of the first format come out as this format writes them, and keys
 * of this format come out unchanged, whatever the mix of components. */
static void
test_upgrade_key (void)
{
  const gint64 edges[] = { 0, 1, -1, 9007199254740993, -9007199254740993, G_MAXINT64, G_MININT64 };
  g_autoptr(GError) error = NULL;
  g_autoptr(GByteArray) out = g_byte_array_new ();

  rng_seed_for ("/codec/key/upgrade");

  for (guint round = 0; round < 3000; round++)
    {
      g_autoptr(GByteArray) first = g_byte_array_new ();
      g_autoptr(GByteArray) now = g_byte_array_new ();
      guint n_cols = 1 + rng_below (4);

      for (guint c = 0; c < n_cols; c++)
        {
          gboolean descending = rng_below (2);
          TestValue value;

          gen_value (&value);
          if (round % 7 == 0)
            {
              value.v.type = QSTORE_VALUE_INTEGER;
              value.v.integer = edges[rng_below (G_N_ELEMENTS (edges))];
            }
          encode_component (now, &value.v, QSTORE_COLLATION_BINARY, descending);
          if (value.v.type == QSTORE_VALUE_INTEGER)
            append_integer_1 (first, value.v.integer, descending);
          else if (value.v.type == QSTORE_VALUE_REAL)
            append_number_1 (first, value.v.real, 0, descending);
          else
            encode_component (first, &value.v, QSTORE_COLLATION_BINARY, descending);
        }

      assert_upgrades_to (first, now);
      assert_upgrades_to (now, now);
    }

  /* What is not a key of either format is refused. */
  g_assert_false (qstore_codec_upgrade_key ((const guint8 *) "\x01\xbf", 2, out, &error));
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_CORRUPT);
  g_clear_error (&error);
  g_assert_false (qstore_codec_upgrade_key ((const guint8 *) "\x05", 1, out, &error));
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_CORRUPT);
}

static void
test_decode_key_corrupt (void)
{
  const gboolean desc[] = { TRUE, TRUE };
  g_autoptr(GByteArray) key = g_byte_array_new ();
  g_autoptr(GBytes) good = NULL;
  const guint8 *data;
  gsize len;

  assert_key_corrupt ("", NULL, 1);
  assert_key_corrupt ("05", NULL, 1);                       /* unused tag */
  assert_key_corrupt ("02", NULL, 1);                       /* a number cut short */
  assert_key_corrupt ("02 bff9", NULL, 1);
  assert_key_corrupt ("03 61", NULL, 1);                    /* no terminator */
  assert_key_corrupt ("03 61 01", NULL, 1);                 /* escape cut short */
  assert_key_corrupt ("03 01 03 00", NULL, 1);              /* unknown escape */
  assert_key_corrupt ("04 01 00 00", NULL, 1);
  assert_key_corrupt ("00 00", NULL, 1);                    /* trailing bytes */
  assert_key_corrupt ("00", NULL, 2);                       /* a column short */
  assert_key_corrupt ("00", desc, 1);                       /* wrong direction */
  /* The first key format's 1, which only upgrading reads. */
  assert_key_corrupt ("01 bff0000000000000 8000000000000000", NULL, 1);
  /* 1 with a zero group after its last one bit, and with a group too many. */
  assert_key_corrupt ("02 bff9 00", NULL, 1);
  assert_key_corrupt ("02 bff9010101010101010101010101010101010100", NULL, 1);
  /* Bits past the 128th. */
  assert_key_corrupt ("02 c3a1010101010101014101010101010101010142", NULL, 1);
  /* 1.5 with a residual: only numbers of 2^53 and more have one. */
  assert_key_corrupt ("02 bffd0101010101010101010101010101010140", NULL, 1);
  /* 2^53 without its residual. */
  assert_key_corrupt ("02 c3a0", NULL, 1);
  /* -0.0 and NaN are never written. */
  assert_key_corrupt ("02 7fffffffffffffffff80", NULL, 1);
  assert_key_corrupt ("02 fffc", NULL, 1);
  /* 2^53 + 5 rounds to 2^53 + 4, so 2^53 with residual 5 is not canonical. */
  assert_key_corrupt ("02 c3a10101010101010141010101010101010340", NULL, 1);
  /* 2^63 with residual 0 is the real 2^63; with +1 it is past INT64_MAX. */
  assert_key_corrupt ("02 c3f10101010101010141010101010101010140", NULL, 1);
  /* 2^64 is beyond every integer. */
  assert_key_corrupt ("02 c3f9010101010101013fffffffffffffffffc0", NULL, 1);

  /* Every proper prefix of a valid key is refused. */
  qstore_codec_append_integer (key, 7, TRUE);
  qstore_codec_append_text (key, "x\0y", 3, QSTORE_COLLATION_BINARY, FALSE);
  qstore_codec_append_null (key, TRUE);
  good = g_byte_array_free_to_bytes (g_steal_pointer (&key));
  data = g_bytes_get_data (good, &len);
  for (gsize cut = 0; cut < len; cut++)
    {
      const gboolean dirs[] = { TRUE, FALSE, TRUE };
      g_autoptr(GBytes) prefix = g_bytes_new (data, cut);
      g_autoptr(GError) error = NULL;
      g_autoptr(GVariant) decoded = qstore_codec_decode_key (prefix, dirs, 3, &error);

      g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_CORRUPT);
      g_assert_null (decoded);
    }
}

/* Random damage to keys: refused or decoded, never a crash or an over-read. */
static void
test_decode_key_fuzz (void)
{
  rng_seed_for ("/codec/key/fuzz");

  for (guint round = 0; round < 3000; round++)
    {
      g_autoptr(GByteArray) key = g_byte_array_new ();
      g_autoptr(GBytes) bytes = NULL;
      g_autoptr(GVariant) decoded = NULL;
      g_autoptr(GError) error = NULL;
      gboolean descending[3];
      guint8 *copy;
      guint n_cols = 1 + rng_below (3);
      gsize len;

      for (guint c = 0; c < n_cols; c++)
        {
          TestValue v;

          descending[c] = rng_below (2);
          gen_value (&v);
          encode_component (key, &v.v, rng_below (3), descending[c]);
          test_value_clear (&v);
        }

      for (guint flips = 1 + rng_below (3); flips > 0; flips--)
        key->data[rng_below (key->len)] = rng_next ();
      if (rng_below (4) == 0)
        g_byte_array_set_size (key, rng_below (key->len + 1));

      /* An exact-size copy, so that reading past the end is caught by
       * sanitizers and valgrind. */
      len = key->len;
      copy = g_memdup2 (key->data, len);
      bytes = g_bytes_new_take (copy, len);

      decoded = qstore_codec_decode_key (bytes, descending, n_cols, &error);
      if (decoded == NULL)
        g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_CORRUPT);
      else
        g_assert_cmpuint (g_variant_n_children (decoded), ==, n_cols);
    }
}

static void
test_encode_errors (void)
{
  g_autoptr(GByteArray) b = g_byte_array_new ();
  const gboolean desc[] = { FALSE };
  GError *error = NULL;
  GBytes *key;

  g_assert_false (qstore_codec_append_real (b, NAN, FALSE, &error));
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT);
  g_assert_cmpuint (b->len, ==, 0);
  g_clear_error (&error);

  g_assert_false (qstore_codec_append_value (b, g_variant_new_double (-NAN),
                                             QSTORE_COLLATION_BINARY, FALSE, &error));
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);

  g_assert_false (qstore_codec_append_value (b, g_variant_new_boolean (TRUE),
                                             QSTORE_COLLATION_BINARY, FALSE, &error));
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);

  g_assert_false (qstore_codec_append_value (b, g_variant_new_uint64 (G_MAXUINT64),
                                             QSTORE_COLLATION_BINARY, FALSE, &error));
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  g_assert_cmpuint (b->len, ==, 0);

  /* A maybe that holds a value is that value. */
  g_assert_true (qstore_codec_append_value (b, g_variant_new_maybe (NULL, g_variant_new_int64 (0)),
                                            QSTORE_COLLATION_BINARY, FALSE, &error));
  g_assert_no_error (error);
  assert_array_hex (b, "02 80");

  key = qstore_codec_encode_key (make_tuple (g_variant_new_int64 (1), NULL), NULL, desc, 2, &error);
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT);
  g_assert_null (key);
  g_clear_error (&error);

  key = qstore_codec_encode_key (g_variant_new_int64 (1), NULL, NULL, 1, &error);
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT);
  g_assert_null (key);
  g_clear_error (&error);

  key = qstore_codec_encode_key (make_tuple (g_variant_new_int64 (1),
                                             g_variant_new ("ai", NULL), NULL),
                                 NULL, NULL, 2, &error);
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "column 1"));
  g_assert_null (key);
  g_clear_error (&error);

  key = qstore_codec_encode_row (make_tuple (g_variant_new_double (NAN), NULL), &error);
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT);
  g_assert_null (key);
  g_clear_error (&error);

  key = qstore_codec_encode_row (g_variant_new_string ("not a row"), &error);
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT);
  g_assert_null (key);
  g_clear_error (&error);

  g_assert_true (qstore_value_is_null (qstore_value_new_null ()));
  g_assert_true (qstore_value_is_null (g_variant_new_variant (qstore_value_new_null ())));
  g_assert_true (qstore_value_is_null (g_variant_new_maybe (G_VARIANT_TYPE_INT64, NULL)));
  g_assert_false (qstore_value_is_null (g_variant_new_int64 (0)));
  g_assert_false (qstore_value_is_null (g_variant_new_string ("")));
}

/* Rows */

static GVariant *
unbox_child (GVariant *tuple,
             gsize     i)
{
  g_autoptr(GVariant) boxed = g_variant_get_child_value (tuple, i);

  g_assert_true (g_variant_is_of_type (boxed, G_VARIANT_TYPE_VARIANT));
  return g_variant_get_variant (boxed);
}

static void
test_row_roundtrip (void)
{
  g_autoptr(GPtrArray) values = g_ptr_array_new_with_free_func ((GDestroyNotify) g_variant_unref);
  g_autofree guint8 *large = g_malloc (1 << 20);
  g_autoptr(GString) long_text = g_string_new (NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) row = NULL;
  g_autoptr(GVariant) decoded = NULL;
  g_autoptr(GVariant) negative_zero = NULL;
  g_autoptr(GVariant) from_int32 = NULL;

  rng_seed_for ("/codec/row/roundtrip");
  for (gsize i = 0; i < (1 << 20); i++)
    large[i] = rng_next ();
  for (guint i = 0; i < 10000; i++)
    g_string_append (long_text, "Mixed Case Text ");

#define ADD(v) g_ptr_array_add (values, g_variant_ref_sink (v))
  ADD (qstore_value_new_null ());
  ADD (g_variant_new_int64 (0));
  ADD (g_variant_new_int64 (1));
  ADD (g_variant_new_int64 (-1));
  ADD (g_variant_new_int64 (63));
  ADD (g_variant_new_int64 (-64));
  ADD (g_variant_new_int64 (64));
  ADD (g_variant_new_int64 (G_MININT64));
  ADD (g_variant_new_int64 (G_MAXINT64));
  ADD (g_variant_new_int64 (TWO_POW_53 + 1));
  ADD (g_variant_new_double (1.0));
  ADD (g_variant_new_double (0.0));
  ADD (g_variant_new_double (INFINITY));
  ADD (g_variant_new_double (-INFINITY));
  ADD (g_variant_new_double (DBL_MIN));
  ADD (g_variant_new_double (4.9406564584124654e-324));
  ADD (g_variant_new_double (-DBL_MAX));
  ADD (g_variant_new_double (0.1));
  ADD (g_variant_new_double (9223372036854775808.0));
  ADD (g_variant_new_string (""));
  ADD (g_variant_new_string ("Hello World  "));
  ADD (g_variant_new_string ("h\xc3\xa9llo W\xc3\xb6rld"));
  ADD (g_variant_new_string (long_text->str));
  ADD (make_blob (NULL, 0));
  ADD (make_blob ("\0\1\xff", 3));
  ADD (make_blob (large, 1 << 20));
#undef ADD

  /* Boxed in "v", as an "av", with -0.0 and an int32 added at the end. */
  {
    GVariantBuilder builder;

    g_variant_builder_init (&builder, G_VARIANT_TYPE ("av"));
    for (guint i = 0; i < values->len; i++)
      g_variant_builder_add (&builder, "v", g_ptr_array_index (values, i));
    g_variant_builder_add (&builder, "v", g_variant_new_double (-0.0));
    g_variant_builder_add (&builder, "v", g_variant_new_int32 (-7));
    row = qstore_codec_encode_row (g_variant_builder_end (&builder), &error);
  }
  g_assert_no_error (error);
  g_assert_nonnull (row);
  /* Compact: the large values dominate. */
  g_assert_cmpuint (g_bytes_get_size (row), <, (1 << 20) + long_text->len + 400);

  decoded = qstore_codec_decode_row (row, &error);
  g_assert_no_error (error);
  g_assert_true (g_variant_is_of_type (decoded, G_VARIANT_TYPE_TUPLE));
  g_assert_cmpuint (g_variant_n_children (decoded), ==, values->len + 2);

  for (guint i = 0; i < values->len; i++)
    {
      g_autoptr(GVariant) got = unbox_child (decoded, i);
      GVariant *want = g_ptr_array_index (values, i);

      if (!g_variant_equal (got, want))
        {
          g_autofree char *g = g_variant_print (got, TRUE);
          g_autofree char *w = g_variant_print (want, TRUE);

          g_error ("column %u: %.200s came back as %.200s", i, w, g);
        }
    }

  negative_zero = unbox_child (decoded, values->len);
  g_assert_true (g_variant_is_of_type (negative_zero, G_VARIANT_TYPE_DOUBLE));
  g_assert_cmpfloat (g_variant_get_double (negative_zero), ==, 0.0);

  from_int32 = unbox_child (decoded, values->len + 1);
  g_assert_true (g_variant_is_of_type (from_int32, G_VARIANT_TYPE_INT64));
  g_assert_cmpint (g_variant_get_int64 (from_int32), ==, -7);
}

/* Text with NUL and bytes that are not UTF-8 goes through the C API
 * unchanged, and without copies. */
static void
test_row_raw_text (void)
{
  static const guint8 odd[] = { 'a', 0x00, 'B', 0xff, 0xc3 };
  g_autoptr(GByteArray) out = g_byte_array_new ();
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) decoded = NULL;
  g_autoptr(GVariant) text = NULL;
  g_autoptr(GBytes) bytes = NULL;
  QStoreValue in[3] = { { 0 } };
  QStoreRowReader reader;
  QStoreValue v;
  guint n;

  in[0].type = QSTORE_VALUE_TEXT;
  in[0].bytes.data = odd;
  in[0].bytes.len = sizeof odd;
  in[1].type = QSTORE_VALUE_BLOB;
  in[1].bytes.data = odd;
  in[1].bytes.len = sizeof odd;
  in[2].type = QSTORE_VALUE_REAL;
  in[2].real = -0.0;

  qstore_row_encode (out, in, G_N_ELEMENTS (in));

  g_assert_true (qstore_row_reader_init (&reader, out->data, out->len, &n, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (n, ==, 3);
  for (guint i = 0; i < 2; i++)
    {
      g_assert_true (qstore_row_reader_next (&reader, &v, &error));
      g_assert_no_error (error);
      g_assert_cmpint (v.type, ==, in[i].type);
      g_assert_cmpmem (v.bytes.data, v.bytes.len, odd, sizeof odd);
      g_assert_true (v.bytes.data > out->data && v.bytes.data + v.bytes.len <= out->data + out->len);
    }
  g_assert_true (qstore_row_reader_next (&reader, &v, &error));
  g_assert_no_error (error);
  g_assert_cmpint (v.type, ==, QSTORE_VALUE_REAL);
  g_assert_true (v.real == 0.0 && signbit (v.real));

  /* Through GVariants, text is made valid. */
  bytes = g_bytes_new (out->data, out->len);
  decoded = qstore_codec_decode_row (bytes, &error);
  g_assert_no_error (error);
  text = unbox_child (decoded, 0);
  g_assert_cmpstr (g_variant_get_string (text, NULL), ==,
                   "a\xef\xbf\xbd" "B\xef\xbf\xbd\xef\xbf\xbd");
}

/* Value by value, or (@batch) all in one call. */
static gboolean
decode_row_raw (const guint8  *data,
                gsize          len,
                gboolean       batch,
                GByteArray   **reencoded,
                GError       **error)
{
  g_autofree QStoreValue *values = NULL;
  QStoreRowReader reader;
  guint n;

  if (!qstore_row_reader_init (&reader, data, len, &n, error))
    return FALSE;
  values = g_new0 (QStoreValue, n);
  if (batch && !qstore_row_reader_read (&reader, values, n, error))
    return FALSE;
  for (guint i = 0; i < n; i++)
    {
      if (!batch && !qstore_row_reader_next (&reader, &values[i], error))
        return FALSE;
      /* Zero copy, and never outside the row. */
      if (values[i].type == QSTORE_VALUE_TEXT || values[i].type == QSTORE_VALUE_BLOB)
        g_assert_true (values[i].bytes.data >= data &&
                       values[i].bytes.len <= len &&
                       values[i].bytes.data - data <= (gssize) (len - values[i].bytes.len));
    }

  *reencoded = g_byte_array_new ();
  qstore_row_encode (*reencoded, values, n);
  return TRUE;
}

static void
assert_row_corrupt (const char *hex)
{
  g_autoptr(GBytes) row = bytes_from_hex (hex);
  g_autoptr(GByteArray) again = NULL;
  g_autoptr(GVariant) decoded = NULL;
  g_autoptr(GError) error = NULL;
  gsize len;
  const guint8 *data = g_bytes_get_data (row, &len);

  for (int batch = 0; batch <= 1; batch++)
    {
      g_assert_false (decode_row_raw (data, len, batch, &again, &error));
      g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_CORRUPT);
      g_clear_error (&error);
    }

  decoded = qstore_codec_decode_row (row, &error);
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_CORRUPT);
  g_assert_null (decoded);
}

static GBytes *
sample_row (void)
{
  g_autoptr(GError) error = NULL;
  GBytes *row;

  row = qstore_codec_encode_row (make_tuple (qstore_value_new_null (),
                                             g_variant_new_int64 (-300),
                                             g_variant_new_int64 (G_MININT64),
                                             g_variant_new_double (-2.5),
                                             g_variant_new_string ("Text"),
                                             g_variant_new_string (""),
                                             make_blob ("\0\1\2", 3),
                                             make_blob (NULL, 0),
                                             NULL),
                                 &error);
  g_assert_no_error (error);
  return row;
}

static void
test_row_corrupt (void)
{
  g_autoptr(GBytes) good = sample_row ();
  const guint8 *data;
  gsize len;

  assert_row_corrupt ("");
  assert_row_corrupt ("02 00");                          /* unknown format */
  assert_row_corrupt ("00 00");
  assert_row_corrupt ("01");                             /* no count */
  assert_row_corrupt ("01 00 00");                       /* trailing bytes */
  assert_row_corrupt ("01 01 00 00");
  assert_row_corrupt ("01 02 00");                       /* count mismatch */
  assert_row_corrupt ("01 05 00");
  assert_row_corrupt ("01 ffffffffffffffffff01 00");     /* absurd count */
  assert_row_corrupt ("01 01 07");                       /* unknown tag */
  assert_row_corrupt ("01 01 01");                       /* integer missing */
  assert_row_corrupt ("01 01 01 80");                    /* varint cut short */
  assert_row_corrupt ("01 01 01 8000");                  /* overlong: 0 in 2 bytes */
  assert_row_corrupt ("01 01 01 ff8000");                /* … 127 in 3 bytes */
  assert_row_corrupt ("01 01 01 ffffffffffffffff00");    /* … in 9 bytes */
  assert_row_corrupt ("01 01 01 ffff");                  /* 3 bytes cut short */
  assert_row_corrupt ("01 8100 00");                     /* overlong count */
  assert_row_corrupt ("01 01 01 ffffffffffffffffff02");  /* overflows 64 bits */
  assert_row_corrupt ("01 01 01 ffffffffffffffffff8001");/* 11 bytes */
  assert_row_corrupt ("01 01 02 0000000000");            /* real cut short */
  assert_row_corrupt ("01 01 03 05 6162");               /* text runs past the end */
  assert_row_corrupt ("01 02 03 02 61");                 /* … with a column to follow */
  assert_row_corrupt ("01 02 04 01");
  assert_row_corrupt ("01 01 04 ffffffffffffffffff01");  /* huge blob length */
  assert_row_corrupt ("01 01 03 02 616263");             /* trailing after text */

  /* Every proper prefix of a valid row is refused. */
  data = g_bytes_get_data (good, &len);
  for (gsize cut = 0; cut < len; cut++)
    {
      g_autofree guint8 *copy = g_memdup2 (data, cut);
      g_autoptr(GByteArray) again = NULL;
      g_autoptr(GError) error = NULL;

      for (int batch = 0; batch <= 1; batch++)
        {
          g_assert_false (decode_row_raw (copy, cut, batch, &again, &error));
          g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_CORRUPT);
          g_clear_error (&error);
        }
    }
}

/* Random damage to rows: each either decodes to a row that encodes back to
 * the very same bytes (the format has one encoding per row) or is refused as
 * corrupt, through both the C and the GVariant API. */
static void
test_row_fuzz (void)
{
  g_autoptr(GBytes) base = sample_row ();
  gsize base_len;
  const guint8 *base_data = g_bytes_get_data (base, &base_len);
  guint n_ok = 0;

  rng_seed_for ("/codec/row/fuzz");

  for (guint round = 0; round < 5000; round++)
    {
      g_autoptr(GByteArray) mutated = g_byte_array_new ();
      g_autoptr(GByteArray) again = NULL;
      g_autoptr(GBytes) exact = NULL;
      g_autoptr(GVariant) decoded = NULL;
      g_autoptr(GError) error = NULL;
      g_autoptr(GError) error2 = NULL;
      gboolean ok;

      g_byte_array_append (mutated, base_data, base_len);
      switch (rng_below (4))
        {
        case 0:
          /* A small change inside a byte keeps more rows valid. */
          mutated->data[rng_below (mutated->len)] ^= 1 << rng_below (8);
          break;
        case 1:
          for (guint flips = 1 + rng_below (3); flips > 0; flips--)
            mutated->data[rng_below (mutated->len)] = rng_next ();
          break;
        case 2:
          g_byte_array_remove_index (mutated, rng_below (mutated->len));
          break;
        default:
          {
            guint at = rng_below (mutated->len + 1);

            g_byte_array_set_size (mutated, mutated->len + 1);
            memmove (mutated->data + at + 1, mutated->data + at, mutated->len - 1 - at);
            mutated->data[at] = rng_next ();
          }
          break;
        }

      exact = g_bytes_new_take (g_memdup2 (mutated->data, mutated->len), mutated->len);
      {
        gsize len;
        const guint8 *data = g_bytes_get_data (exact, &len);

        ok = decode_row_raw (data, len, round % 2, &again, &error);
        if (ok)
          {
            g_assert_no_error (error);
            g_assert_cmpmem (again->data, again->len, data, len);
            n_ok++;
          }
        else
          {
            g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_CORRUPT);
          }
      }

      decoded = qstore_codec_decode_row (exact, &error2);
      if (ok)
        {
          g_assert_no_error (error2);
          g_assert_nonnull (decoded);
        }
      else
        {
          g_assert_error (error2, QSTORE_ERROR, QSTORE_ERROR_CORRUPT);
          g_assert_null (decoded);
        }
    }

  /* Both outcomes happened. */
  g_assert_cmpuint (n_ok, >, 100);
  g_assert_cmpuint (n_ok, <, 4900);
}

/* Catalog keys */

static void
assert_classify (GBytes               *key,
                 QStoreCatalogKeyKind  kind,
                 const char           *schema,
                 const char           *name)
{
  /* Not owned: classify must overwrite them. */
  char *got_schema = (char *) "unset";
  char *got_name = (char *) "unset";

  g_assert_cmpint (qstore_catalog_key_classify (key, &got_schema, &got_name), ==, kind);
  g_assert_cmpstr (got_schema, ==, schema);
  g_assert_cmpstr (got_name, ==, name);
  g_free (got_schema);
  g_free (got_name);
  /* The out arguments are optional. */
  g_assert_cmpint (qstore_catalog_key_classify (key, NULL, NULL), ==, kind);
}

static void
assert_invalid (const char *data,
                gsize       len)
{
  g_autoptr(GBytes) key = g_bytes_new (data, len);
  char *schema = (char *) "unset";
  char *name = (char *) "unset";

  g_assert_cmpint (qstore_catalog_key_classify (key, &schema, &name), ==,
                   QSTORE_CATALOG_KEY_INVALID);
  g_assert_null (schema);
  g_assert_null (name);
}

#define INVALID(literal) assert_invalid (literal, sizeof literal - 1)

static void
test_catalog_keys (void)
{
  g_autoptr(GBytes) table = qstore_catalog_key_for_table ("Main", "Users");
  g_autoptr(GBytes) view = qstore_catalog_key_for_view ("main", "Recent");
  g_autoptr(GBytes) mview = qstore_catalog_key_for_materialized_view ("Aux", "Totals");
  g_autoptr(GBytes) meta = qstore_catalog_key_for_meta ("clean_shutdown");
  g_autoptr(GBytes) dotted = qstore_catalog_key_for_table ("main", "a.B.c");
  g_autoptr(GBytes) dots = qstore_catalog_key_for_view ("main", "..");
  g_autoptr(GBytes) unicode = qstore_catalog_key_for_table ("main", "\xc3\x80" "Bc\xc3\xa9");
  g_autoptr(GBytes) meta_like = qstore_catalog_key_for_table ("meta", "view");
  g_autoptr(GBytes) meta_dotted = qstore_catalog_key_for_meta ("stale.MVs");
  g_autoptr(GBytes) empty_meta = qstore_catalog_key_for_meta ("");

  assert_gbytes_hex (table, "6d61696e 2e 7573657273");                 /* main.users */
  assert_gbytes_hex (view, "00 76696577 00 6d61696e 2e 726563656e74");  /* \0view\0main.recent */
  assert_gbytes_hex (mview, "00 6d76696577 00 617578 2e 746f74616c73"); /* \0mview\0aux.totals */
  assert_gbytes_hex (meta, "00 6d657461 00 636c65616e5f73687574646f776e");

  assert_classify (table, QSTORE_CATALOG_KEY_TABLE, "main", "users");
  assert_classify (view, QSTORE_CATALOG_KEY_VIEW, "main", "recent");
  assert_classify (mview, QSTORE_CATALOG_KEY_MATERIALIZED_VIEW, "aux", "totals");
  assert_classify (meta, QSTORE_CATALOG_KEY_META, NULL, "clean_shutdown");
  /* Names may hold dots: the schema ends at the first. */
  assert_classify (dotted, QSTORE_CATALOG_KEY_TABLE, "main", "a.b.c");
  assert_classify (dots, QSTORE_CATALOG_KEY_VIEW, "main", "..");
  /* Only ASCII is folded. */
  assert_classify (unicode, QSTORE_CATALOG_KEY_TABLE, "main", "\xc3\x80" "bc\xc3\xa9");
  assert_classify (meta_like, QSTORE_CATALOG_KEY_TABLE, "meta", "view");
  /* Meta names are kept as they are, dots and case included. */
  assert_classify (meta_dotted, QSTORE_CATALOG_KEY_META, NULL, "stale.MVs");
  assert_classify (empty_meta, QSTORE_CATALOG_KEY_META, NULL, "");

  INVALID ("");
  INVALID ("nodot");
  INVALID ("\0");
  INVALID ("\0view");
  INVALID ("\0view\0");
  INVALID ("\0view\0nodot");
  INVALID ("\0mview\0nodot");
  INVALID ("\0meta");
  INVALID ("\0meta.x");
  INVALID ("\0metax\0a");
  INVALID ("\0META\0a");
  INVALID ("\0meta\0a\0b");
  INVALID ("\0meta\0\0");
  INVALID ("\0\0meta\0a");
  INVALID ("\0table\0main.t");
  INVALID ("\0view\0main.v\0");
  INVALID ("\0view\0main\0.v");
  INVALID ("main.t\0x");
  INVALID ("ma\0in.t");
  INVALID (" \0meta\0a");
}

static void
test_catalog_bad_schema (void)
{
  GBytes *key;

  /* A dot in a schema would make the key ambiguous: a programming error. */
  g_test_expect_message ("qstore", G_LOG_LEVEL_CRITICAL, "*strchr*");
  key = qstore_catalog_key_for_table ("a.b", "c");
  g_test_assert_expected_messages ();
  g_assert_null (key);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/codec/key/golden", test_golden_keys);
  g_test_add_func ("/codec/key/golden-composite", test_golden_composite);
  g_test_add_func ("/codec/key/encode-errors", test_encode_errors);
  g_test_add_func ("/codec/key/decode", test_decode_key);
  g_test_add_func ("/codec/key/decode-corrupt", test_decode_key_corrupt);
  g_test_add_func ("/codec/key/fuzz", test_decode_key_fuzz);
  g_test_add_func ("/codec/key/upgrade", test_upgrade_key);
  g_test_add_func ("/codec/order/single", test_order_single);
  g_test_add_func ("/codec/order/composite", test_order_composite);
  g_test_add_func ("/codec/row/golden", test_golden_rows);
  g_test_add_func ("/codec/row/roundtrip", test_row_roundtrip);
  g_test_add_func ("/codec/row/raw-text", test_row_raw_text);
  g_test_add_func ("/codec/row/corrupt", test_row_corrupt);
  g_test_add_func ("/codec/row/fuzz", test_row_fuzz);
  g_test_add_func ("/codec/catalog/keys", test_catalog_keys);
  g_test_add_func ("/codec/catalog/bad-schema", test_catalog_bad_schema);

  return g_test_run ();
}
