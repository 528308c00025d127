/* qstore-bounds-private.h: the key order, for callers that compare in
 * their hottest loops
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <string.h>

#include <glib.h>

G_BEGIN_DECLS

/* qstore_key_compare(), inline. */
static inline int
qstore_key_compare_inline (const guint8 *a,
                           gsize         a_len,
                           const guint8 *b,
                           gsize         b_len)
{
  gsize common = MIN (a_len, b_len);
  int cmp = common > 0 ? memcmp (a, b, common) : 0;

  if (cmp != 0)
    return cmp;
  return (a_len > b_len) - (a_len < b_len);
}

G_END_DECLS
