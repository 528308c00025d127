/* qstore-postgres-gaps.c: what the one writer knows is not there
 *
 * The table layer reads a row's key before it writes it (is the key
 * taken?), which costs the writer a round trip per row: a load of many
 * rows would wait on the server once per row. But the writer is the only
 * one who writes the location (it holds the writer lock), so what it
 * read stays true until it writes itself. A read of a key that is absent
 * asks for the first key at or after it instead, in the same round trip,
 * and keeps the gap between the two: [key, next key), or [key, end) when
 * there is none. Later reads inside the gap need no round trip: a load
 * of new, rising keys reads the server once. A write that puts a key
 * inside a gap keeps only the part of it above the key; a delete only
 * widens what is absent, so gaps stay as they are. One gap per store,
 * the latest; a restructure or a failed write forgets them all.
 *
 * While a write transaction is open, its writes shrink the gaps as
 * commits do, so a gap holds no key of the committed state nor of the
 * transaction's. Plain reads meanwhile see committed data only: a gap one
 * of them finds may hold keys the transaction put before, so it serves
 * plain reads until the transaction ends and goes with its commit.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "qstore-postgres-gaps.h"

typedef struct
{
  GBytes *from;  /* the first key of the gap */
  GBytes *to;    /* the first key after it, or NULL: to the end */
  gboolean provisional;
} Gap;

static void
gap_free (Gap *gap)
{
  g_bytes_unref (gap->from);
  g_clear_pointer (&gap->to, g_bytes_unref);
  g_free (gap);
}

static int
compare (GBytes       *bytes,
         const guint8 *key,
         gsize         len)
{
  gsize bytes_len;
  const guint8 *data = g_bytes_get_data (bytes, &bytes_len);

  return qstore_key_compare (data, bytes_len, key, len);
}

GHashTable *
qstore_pg_gaps_new (void)
{
  return g_hash_table_new_full (g_str_hash, g_str_equal, g_free, (GDestroyNotify) gap_free);
}

gboolean
qstore_pg_gaps_hold (GHashTable   *gaps,
                     const char   *name,
                     const guint8 *key,
                     gsize         len)
{
  Gap *gap = g_hash_table_lookup (gaps, name);

  return gap != NULL && compare (gap->from, key, len) <= 0 &&
         (gap->to == NULL || compare (gap->to, key, len) > 0);
}

gboolean
qstore_pg_gaps_above (GHashTable   *gaps,
                      const char   *name,
                      const guint8 *key,
                      gsize         len)
{
  Gap *gap = g_hash_table_lookup (gaps, name);

  return gap != NULL && gap->to != NULL && compare (gap->to, key, len) <= 0;
}

void
qstore_pg_gaps_set (GHashTable   *gaps,
                    const char   *name,
                    const guint8 *from,
                    gsize         from_len,
                    const guint8 *to,
                    gsize         to_len,
                    gboolean      provisional)
{
  Gap *gap = g_new0 (Gap, 1);

  gap->from = g_bytes_new (from, from_len);
  if (to != NULL)
    gap->to = g_bytes_new (to, to_len);
  gap->provisional = provisional;
  g_hash_table_replace (gaps, g_strdup (name), gap);
}

static gboolean
settle_one (gpointer key,
            gpointer value,
            gpointer committed)
{
  Gap *gap = value;

  if (!gap->provisional)
    return FALSE;
  gap->provisional = FALSE;
  return GPOINTER_TO_INT (committed);
}

void
qstore_pg_gaps_settle (GHashTable *gaps,
                       gboolean    committed)
{
  g_hash_table_foreach_remove (gaps, settle_one, GINT_TO_POINTER (committed));
}

void
qstore_pg_gaps_put (GHashTable   *gaps,
                    const char   *name,
                    const guint8 *key,
                    gsize         len)
{
  Gap *gap;
  guint8 *after;

  if (!qstore_pg_gaps_hold (gaps, name, key, len))
    return;
  /* What is left above @key: from its successor, @key and a 0 byte. */
  gap = g_hash_table_lookup (gaps, name);
  after = g_malloc (len + 1);
  memcpy (after, key, len);
  after[len] = 0;
  g_bytes_unref (gap->from);
  gap->from = g_bytes_new_take (after, len + 1);
  if (gap->to != NULL && compare (gap->to, after, len + 1) <= 0)
    g_hash_table_remove (gaps, name);
}
