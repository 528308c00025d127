/* qstore-pending-entry-private.h: an entry of the write buffer, and the
 * order of its keys
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <string.h>

#include <glib.h>

#include "qstore-bounds-private.h"

G_BEGIN_DECLS

/* Entries are packed byte strings in the arena, with no alignment:
 *
 *   varint key_len | key | flags | varint store
 *   | prev (pointer, when ENTRY_HAS_PREV) | varint value_len | value
 *
 * the value part being absent for a tombstone. The key comes first so a
 * comparison touches only the first bytes. An 8-byte key with a 25-byte
 * value takes 37 bytes. */
enum
{
  ENTRY_TOMBSTONE = 1 << 0,
  ENTRY_HAS_PREV  = 1 << 1,
};

/* Varints */

static inline gsize
varint_len (guint64 v)
{
  gsize n = 1;

  while (v >= 0x80)
    {
      v >>= 7;
      n++;
    }
  return n;
}

static inline guint8 *
varint_put (guint8  *p,
            guint64  v)
{
  while (v >= 0x80)
    {
      *p++ = (guint8) (v | 0x80);
      v >>= 7;
    }
  *p++ = (guint8) v;
  return p;
}

static inline const guint8 *
varint_get (const guint8 *p,
            guint64      *v)
{
  guint64 result = 0;
  guint shift = 0;

  while (*p & 0x80)
    {
      result |= (guint64) (*p++ & 0x7f) << shift;
      shift += 7;
    }
  result |= (guint64) *p++ << shift;
  *v = result;
  return p;
}

/* Entries */

typedef struct
{
  const guint8 *key;
  gsize         key_len;
  guint8        flags;
  guint         store;
  const guint8 *prev;
  guint8       *prev_slot;     /* where prev is stored, when ENTRY_HAS_PREV */
  const guint8 *value;
  gsize         value_len;
  gsize         size;          /* the whole entry */
} EntryInfo;

static inline const guint8 *
entry_key (const guint8 *entry,
           gsize        *key_len)
{
  guint64 len;

  if (G_LIKELY (entry[0] < 0x80))
    {
      *key_len = entry[0];
      return entry + 1;
    }
  entry = varint_get (entry, &len);
  *key_len = len;
  return entry;
}

static inline void
entry_parse (const guint8 *entry,
             EntryInfo    *info)
{
  const guint8 *p;
  guint64 v;

  p = entry_key (entry, &info->key_len);
  info->key = p;
  p += info->key_len;
  info->flags = *p++;
  p = varint_get (p, &v);
  info->store = (guint) v;
  info->prev = NULL;
  info->prev_slot = NULL;
  if (info->flags & ENTRY_HAS_PREV)
    {
      info->prev_slot = (guint8 *) p;
      memcpy (&info->prev, p, sizeof info->prev);
      p += sizeof info->prev;
    }
  info->value = NULL;
  info->value_len = 0;
  if (!(info->flags & ENTRY_TOMBSTONE))
    {
      p = varint_get (p, &v);
      info->value = p;
      info->value_len = v;
      p += v;
    }
  info->size = p - entry;
}

/* Key order */

/* The first 8 bytes, zero-padded, as a big-endian number: comparing two
 * of them orders keys as memcmp would, except that equal prefixes decide
 * nothing. */
static inline guint64
key_prefix (const guint8 *key,
            gsize         key_len)
{
  guint64 prefix = 0;

  memcpy (&prefix, key, MIN (key_len, sizeof prefix));
  return GUINT64_FROM_BE (prefix);
}

static inline int
compare_entry (const guint8 *entry,
               const guint8 *key,
               gsize         key_len)
{
  gsize entry_len;
  const guint8 *entry_bytes = entry_key (entry, &entry_len);

  return qstore_key_compare_inline (entry_bytes, entry_len, key, key_len);
}

/* As compare_entry(), for keys whose prefixes are equal: when both hold 8
 * bytes or more, those are equal and need no second look. */
static inline int
compare_entry_same_prefix (const guint8 *entry,
                           const guint8 *key,
                           gsize         key_len)
{
  gsize entry_len;
  const guint8 *entry_bytes = entry_key (entry, &entry_len);

  if (entry_len >= 8 && key_len >= 8)
    return qstore_key_compare_inline (entry_bytes + 8, entry_len - 8, key + 8, key_len - 8);
  return qstore_key_compare_inline (entry_bytes, entry_len, key, key_len);
}

G_END_DECLS
