/* qstore-suid.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "qstore-error.h"
#include "qstore-i18n-private.h"
#include "qstore-suid.h"

/* Ticks are .NET's: 100 ns since 0001-01-01T00:00:00Z. */
#define TICKS_PER_SECOND   G_GUINT64_CONSTANT (10000000)
#define UNIX_EPOCH_SECONDS G_GINT64_CONSTANT (62135596800)
#define MAX_TICKS          G_GUINT64_CONSTANT (9999999999999999999)
#define MAX_RANDOM         G_GUINT64_CONSTANT (99999999999)

/**
 * qstore_suid_new_from_parts:
 * @ticks: the time, in 100 ns ticks since 0001-01-01T00:00:00Z, at most
 *   19 digits
 * @random: the random part, at most 11 digits
 * @error: return location for a #GError
 *
 * Makes the sortable unique id of @ticks and @random, both written with
 * leading zeros. Ids compare as their bytes do, so they order by time
 * first, then by their random part. Tests use this to pick the order of
 * their events.
 *
 * Returns: (transfer full) (nullable): the id, or %NULL with
 *   %QSTORE_ERROR_INVALID_ARGUMENT when a part has too many digits
 */
char *
qstore_suid_new_from_parts (guint64   ticks,
                            guint64   random,
                            GError  **error)
{
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (ticks > MAX_TICKS || random > MAX_RANDOM)
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                   "A sortable unique id holds at most 19 digits of ticks and 11 "
                   "random digits: %" G_GUINT64_FORMAT " and %" G_GUINT64_FORMAT
                   " do not fit", ticks, random);
      return NULL;
    }
  return g_strdup_printf ("%019" G_GUINT64_FORMAT "%011" G_GUINT64_FORMAT, ticks, random);
}

/**
 * qstore_suid_new_for_time:
 * @time: when the event happened
 *
 * Makes a new sortable unique id for an event at @time, with 11 random
 * digits: ids of different times order by time; two ids of one tick
 * differ with near certainty.
 *
 * Returns: (transfer full): the id
 */
char *
qstore_suid_new_for_time (GDateTime *time)
{
  guint64 ticks;
  guint64 random;

  g_return_val_if_fail (time != NULL, NULL);

  /* GDateTime spans years 1 to 9999, always within 19 digits of ticks. */
  ticks = (guint64) (g_date_time_to_unix (time) + UNIX_EPOCH_SECONDS) * TICKS_PER_SECOND +
          (guint64) g_date_time_get_microsecond (time) * 10;
  random = (((guint64) g_random_int () << 32) | g_random_int ()) % (MAX_RANDOM + 1);
  return qstore_suid_new_from_parts (ticks, random, NULL);
}

/**
 * qstore_suid_validate:
 * @suid: (nullable): the text to check
 * @field: what @suid is, for the message, such as `suid` or `safe_head`
 * @error: return location for a #GError
 *
 * Checks that @suid is a sortable unique id: exactly 30 ASCII digits. The
 * empty text, which some operations take for "no checkpoint", is not one:
 * check it before calling this where it is allowed.
 *
 * Returns: %TRUE when @suid is an id; %FALSE with
 *   %QSTORE_ERROR_INVALID_ARGUMENT naming @field otherwise
 */
gboolean
qstore_suid_validate (const char  *suid,
                      const char  *field,
                      GError     **error)
{
  gsize len;

  g_return_val_if_fail (field != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (suid == NULL || suid[0] == '\0')
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                   _("%s is empty: give a sortable unique id of %d digits"),
                   field, QSTORE_SUID_LENGTH);
      return FALSE;
    }

  len = strlen (suid);
  for (gsize i = 0; i < len && i < QSTORE_SUID_LENGTH; i++)
    {
      if (!g_ascii_isdigit (suid[i]))
        {
          g_autofree char *shown = g_strescape (suid, NULL);

          g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                       "%s “%s” is not a sortable unique id: character %" G_GSIZE_FORMAT
                       " is not an ASCII digit", field, shown, i + 1);
          return FALSE;
        }
    }
  if (len != QSTORE_SUID_LENGTH)
    {
      g_autofree char *shown = g_strescape (suid, NULL);

      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                   "%s “%s” is not a sortable unique id: it has %" G_GSIZE_FORMAT
                   " characters where %d digits are needed", field, shown, len,
                   QSTORE_SUID_LENGTH);
      return FALSE;
    }
  return TRUE;
}

/**
 * qstore_suid_compare:
 * @a: a sortable unique id, or the empty text
 * @b: a sortable unique id, or the empty text
 *
 * Compares two ids as their bytes compare, the empty text first.
 *
 * Returns: a negative value when @a sorts before @b, 0 when they are
 *   equal, a positive value otherwise
 */
int
qstore_suid_compare (const char *a,
                     const char *b)
{
  g_return_val_if_fail (a != NULL, 0);
  g_return_val_if_fail (b != NULL, 0);

  /* strcmp compares as unsigned char, which is byte order. */
  return strcmp (a, b);
}
