/* qstore-bench-workload.c: the bench-baseline workload
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <sys/resource.h>

#include <json-glib/json-glib.h>

#include "qstore-bench-workload.h"

guint64
rng_next (guint64 *state)
{
  guint64 z = (*state += G_GUINT64_CONSTANT (0x9E3779B97F4A7C15));

  z = (z ^ (z >> 30)) * G_GUINT64_CONSTANT (0xBF58476D1CE4E5B9);
  z = (z ^ (z >> 27)) * G_GUINT64_CONSTANT (0x94D049BB133111EB);
  return z ^ (z >> 31);
}

gint64
row_score (guint64 id)
{
  return (gint64) ((id * SCORE_FACTOR) % SCORE_MOD);
}

gsize
row_name (guint64  id,
          char    *buf)
{
  return (gsize) g_snprintf (buf, NAME_MAX_LEN, "name-%08d", (int) id);
}

guint64
score_factor_inverse (void)
{
  for (guint64 x = 1; x < SCORE_MOD; x++)
    if ((x * SCORE_FACTOR) % SCORE_MOD == 1)
      return x;
  g_assert_not_reached ();
}

/* What a read of a row touches: its name's length, its score and every
 * byte of its name. */
guint64
row_touch (const guint8 *name,
           gsize         len,
           gint64        score)
{
  guint64 sum = (guint64) len + (guint64) score;

  for (gsize i = 0; i < len; i++)
    sum += name[i];
  return sum;
}

guint64 *
make_shuffled_ids (guint64  n,
                   guint64 *rng)
{
  guint64 *ids = g_new (guint64, MAX (n, 1));

  for (guint64 i = 0; i < n; i++)
    ids[i] = i;
  for (guint64 i = n; i-- > 1;)
    {
      guint64 j = rng_next (rng) % (i + 1);
      guint64 t = ids[i];

      ids[i] = ids[j];
      ids[j] = t;
    }
  return ids;
}

Stamp
stamp_now (void)
{
  Stamp s;

  clock_gettime (CLOCK_MONOTONIC, &s.wall);
  clock_gettime (CLOCK_PROCESS_CPUTIME_ID, &s.cpu);
  return s;
}

double
seconds_between (struct timespec a,
                 struct timespec b)
{
  return (double) (b.tv_sec - a.tv_sec) + (double) (b.tv_nsec - a.tv_nsec) / 1e9;
}

glong
peak_rss_kib (void)
{
  struct rusage usage;

  if (getrusage (RUSAGE_SELF, &usage) != 0)
    return 0;
  return usage.ru_maxrss;
}

void
append_json_string (GString    *line,
                    const char *text)
{
  g_autoptr(JsonNode) node = json_node_init_string (json_node_alloc (), text);
  g_autofree char *encoded = json_to_string (node, FALSE);

  g_string_append (line, encoded);
}
