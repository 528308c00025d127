/* qstore-bounds.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "qstore-bounds.h"
#include "qstore-bounds-private.h"
#include "qstore-error.h"

/**
 * QStoreBounds:
 *
 * A key range for [method@KV.iterate]: an optional lower bound (`gte` or
 * `gt`), an optional upper bound (`lte` or `lt`), a direction and an optional
 * limit on the number of entries returned.
 *
 * Setting `gte` replaces a `gt` set earlier (and likewise for the upper
 * bound): a range has one lower and one upper bound.
 *
 * The limit is unset by default (no limit). A limit of 0 returns nothing; a
 * negative limit is refused by [method@KV.iterate] with
 * %QSTORE_ERROR_INVALID_ARGUMENT.
 */
struct _QStoreBounds
{
  GBytes   *lower;
  GBytes   *upper;
  gint64    limit;
  guint     lower_inclusive : 1;
  guint     upper_inclusive : 1;
  guint     reverse : 1;
  guint     has_limit : 1;
};

G_DEFINE_BOXED_TYPE (QStoreBounds, qstore_bounds, qstore_bounds_copy, qstore_bounds_free)

/**
 * qstore_key_compare:
 * @a: (array length=a_len): a key
 * @a_len: length of @a
 * @b: (array length=b_len): another key
 * @b_len: length of @b
 *
 * Compares two keys the way every provider orders them: unsigned bytes,
 * lexicographically, a proper prefix first.
 *
 * Returns: negative, zero or positive as @a sorts before, with or after @b
 */
int
qstore_key_compare (const guint8 *a,
                    gsize         a_len,
                    const guint8 *b,
                    gsize         b_len)
{
  return qstore_key_compare_inline (a, a_len, b, b_len);
}

/**
 * qstore_bounds_new:
 *
 * Creates a range with no bounds, going forward, with no limit.
 *
 * Returns: (transfer full): an unbounded, forward range with no limit
 */
QStoreBounds *
qstore_bounds_new (void)
{
  return g_new0 (QStoreBounds, 1);
}

/**
 * qstore_bounds_copy:
 * @self: a #QStoreBounds
 *
 * Copies a range.
 *
 * Returns: (transfer full): a copy of @self
 */
QStoreBounds *
qstore_bounds_copy (const QStoreBounds *self)
{
  QStoreBounds *copy;

  g_return_val_if_fail (self != NULL, NULL);

  copy = g_memdup2 (self, sizeof *self);
  if (copy->lower)
    g_bytes_ref (copy->lower);
  if (copy->upper)
    g_bytes_ref (copy->upper);
  return copy;
}

/**
 * qstore_bounds_free:
 * @self: (transfer full): a #QStoreBounds
 *
 * Frees a range.
 */
void
qstore_bounds_free (QStoreBounds *self)
{
  if (self == NULL)
    return;
  g_clear_pointer (&self->lower, g_bytes_unref);
  g_clear_pointer (&self->upper, g_bytes_unref);
  g_free (self);
}

static void
set_bound (GBytes       **slot,
           const guint8  *key,
           gsize          key_len)
{
  g_clear_pointer (slot, g_bytes_unref);
  *slot = g_bytes_new (key, key_len);
}

/**
 * qstore_bounds_set_gte:
 * @self: a #QStoreBounds
 * @key: (array length=key_len): the smallest key included
 * @key_len: length of @key
 *
 * Sets the lower bound, inclusive, replacing any earlier lower bound.
 */
void
qstore_bounds_set_gte (QStoreBounds *self,
                       const guint8 *key,
                       gsize         key_len)
{
  g_return_if_fail (self != NULL);
  set_bound (&self->lower, key, key_len);
  self->lower_inclusive = TRUE;
}

/**
 * qstore_bounds_set_gt:
 * @self: a #QStoreBounds
 * @key: (array length=key_len): every key returned sorts after this one
 * @key_len: length of @key
 *
 * Sets the lower bound, exclusive, replacing any earlier lower bound.
 */
void
qstore_bounds_set_gt (QStoreBounds *self,
                      const guint8 *key,
                      gsize         key_len)
{
  g_return_if_fail (self != NULL);
  set_bound (&self->lower, key, key_len);
  self->lower_inclusive = FALSE;
}

/**
 * qstore_bounds_set_lte:
 * @self: a #QStoreBounds
 * @key: (array length=key_len): the largest key included
 * @key_len: length of @key
 *
 * Sets the upper bound, inclusive, replacing any earlier upper bound.
 */
void
qstore_bounds_set_lte (QStoreBounds *self,
                       const guint8 *key,
                       gsize         key_len)
{
  g_return_if_fail (self != NULL);
  set_bound (&self->upper, key, key_len);
  self->upper_inclusive = TRUE;
}

/**
 * qstore_bounds_set_lt:
 * @self: a #QStoreBounds
 * @key: (array length=key_len): every key returned sorts before this one
 * @key_len: length of @key
 *
 * Sets the upper bound, exclusive, replacing any earlier upper bound.
 */
void
qstore_bounds_set_lt (QStoreBounds *self,
                      const guint8 *key,
                      gsize         key_len)
{
  g_return_if_fail (self != NULL);
  set_bound (&self->upper, key, key_len);
  self->upper_inclusive = FALSE;
}

/**
 * qstore_bounds_set_reverse:
 * @self: a #QStoreBounds
 * @reverse: %TRUE to iterate from the largest key down
 *
 * Sets the direction of iteration. The bounds keep their meaning: a reverse
 * iteration starts at the upper bound.
 */
void
qstore_bounds_set_reverse (QStoreBounds *self,
                           gboolean      reverse)
{
  g_return_if_fail (self != NULL);
  self->reverse = !!reverse;
}

/**
 * qstore_bounds_set_limit:
 * @self: a #QStoreBounds
 * @limit: how many entries to return at most; 0 returns none, a negative
 *   value makes iteration fail with %QSTORE_ERROR_INVALID_ARGUMENT
 *
 * Sets how many entries an iteration returns at most.
 */
void
qstore_bounds_set_limit (QStoreBounds *self,
                         gint64        limit)
{
  g_return_if_fail (self != NULL);
  self->limit = limit;
  self->has_limit = TRUE;
}

/**
 * qstore_bounds_unset_limit:
 * @self: a #QStoreBounds
 *
 * Removes the limit: every entry in range is returned.
 */
void
qstore_bounds_unset_limit (QStoreBounds *self)
{
  g_return_if_fail (self != NULL);
  self->limit = 0;
  self->has_limit = FALSE;
}

static const guint8 *
get_bound (GBytes   *bound,
           gboolean  bound_inclusive,
           gsize    *key_len,
           gboolean *inclusive)
{
  gsize len = 0;
  const guint8 *data = NULL;

  if (bound != NULL)
    data = g_bytes_get_data (bound, &len);
  if (key_len)
    *key_len = len;
  if (inclusive)
    *inclusive = bound_inclusive;
  /* An empty key is a real bound: never confuse it with "no bound". */
  return bound != NULL && data == NULL ? (const guint8 *) "" : data;
}

/**
 * qstore_bounds_get_lower:
 * @self: a #QStoreBounds
 * @key_len: (out) (optional): length of the bound
 * @inclusive: (out) (optional): whether the bound itself is included
 *
 * Gets the lower bound.
 *
 * Returns: (nullable) (array length=key_len) (transfer none): the lower
 *   bound, or %NULL when there is none
 */
const guint8 *
qstore_bounds_get_lower (const QStoreBounds *self,
                         gsize              *key_len,
                         gboolean           *inclusive)
{
  g_return_val_if_fail (self != NULL, NULL);
  return get_bound (self->lower, self->lower_inclusive, key_len, inclusive);
}

/**
 * qstore_bounds_get_upper:
 * @self: a #QStoreBounds
 * @key_len: (out) (optional): length of the bound
 * @inclusive: (out) (optional): whether the bound itself is included
 *
 * Gets the upper bound.
 *
 * Returns: (nullable) (array length=key_len) (transfer none): the upper
 *   bound, or %NULL when there is none
 */
const guint8 *
qstore_bounds_get_upper (const QStoreBounds *self,
                         gsize              *key_len,
                         gboolean           *inclusive)
{
  g_return_val_if_fail (self != NULL, NULL);
  return get_bound (self->upper, self->upper_inclusive, key_len, inclusive);
}

/**
 * qstore_bounds_get_reverse:
 * @self: a #QStoreBounds
 *
 * Tells the direction of iteration.
 *
 * Returns: whether iteration runs from the largest key down
 */
gboolean
qstore_bounds_get_reverse (const QStoreBounds *self)
{
  g_return_val_if_fail (self != NULL, FALSE);
  return self->reverse;
}

/**
 * qstore_bounds_get_limit:
 * @self: a #QStoreBounds
 * @limit: (out) (optional): the limit, when one is set
 *
 * Gets the limit on the number of entries returned.
 *
 * Returns: %TRUE when a limit is set
 */
gboolean
qstore_bounds_get_limit (const QStoreBounds *self,
                         gint64             *limit)
{
  g_return_val_if_fail (self != NULL, FALSE);
  if (limit)
    *limit = self->limit;
  return self->has_limit;
}

/**
 * qstore_bounds_validate:
 * @self: a #QStoreBounds
 * @error: return location for a #GError
 *
 * Checks that @self can be iterated: a set limit must not be negative.
 *
 * Returns: %TRUE when @self is valid
 */
gboolean
qstore_bounds_validate (const QStoreBounds  *self,
                        GError             **error)
{
  g_return_val_if_fail (self != NULL, FALSE);

  if (self->has_limit && self->limit < 0)
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                   "Iteration limit %" G_GINT64_FORMAT " is negative: "
                   "use 0 for no entries or leave the limit unset for all",
                   self->limit);
      return FALSE;
    }
  return TRUE;
}

/**
 * qstore_bounds_above_lower:
 * @self: a #QStoreBounds
 * @key: (array length=key_len): a key
 * @key_len: length of @key
 *
 * For providers: tells whether @key is on the right side of the lower bound.
 *
 * Returns: %TRUE when @key satisfies the lower bound (or there is none)
 */
gboolean
qstore_bounds_above_lower (const QStoreBounds *self,
                           const guint8       *key,
                           gsize               key_len)
{
  gsize len;
  const guint8 *data;
  int cmp;

  if (self->lower == NULL)
    return TRUE;
  data = g_bytes_get_data (self->lower, &len);
  cmp = qstore_key_compare_inline (key, key_len, data, len);
  return self->lower_inclusive ? cmp >= 0 : cmp > 0;
}

/**
 * qstore_bounds_below_upper:
 * @self: a #QStoreBounds
 * @key: (array length=key_len): a key
 * @key_len: length of @key
 *
 * For providers: tells whether @key is on the right side of the upper bound.
 *
 * Returns: %TRUE when @key satisfies the upper bound (or there is none)
 */
gboolean
qstore_bounds_below_upper (const QStoreBounds *self,
                           const guint8       *key,
                           gsize               key_len)
{
  gsize len;
  const guint8 *data;
  int cmp;

  if (self->upper == NULL)
    return TRUE;
  data = g_bytes_get_data (self->upper, &len);
  cmp = qstore_key_compare_inline (key, key_len, data, len);
  return self->upper_inclusive ? cmp <= 0 : cmp < 0;
}
