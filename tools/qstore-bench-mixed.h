/* qstore-bench-mixed.h: everyday SQL on qstore and on native SQLite
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* splitmix64: the one random stream of every workload of qstore-bench. */
static inline guint64
qstore_bench_rng_next (guint64 *state)
{
  guint64 z = (*state += G_GUINT64_CONSTANT (0x9E3779B97F4A7C15));

  z = (z ^ (z >> 30)) * G_GUINT64_CONSTANT (0xBF58476D1CE4E5B9);
  z = (z ^ (z >> 27)) * G_GUINT64_CONSTANT (0x94D049BB133111EB);
  return z ^ (z >> 31);
}

/* Runs the mixed workload on a database of @provider at @location (NULL
 * for memory) and on native SQLite (a file next to @location when
 * @persistent, else in memory), @rounds times, and prints one JSON line
 * per query class and one for the total, with the median of the rounds.
 * @only names the classes to run (NULL: all). FALSE when a statement
 * fails or the two engines' results differ. */
gboolean qstore_bench_mixed (const char         *provider,
                             const char         *location,
                             gboolean            persistent,
                             const char *const  *only,
                             guint               rounds,
                             int                 run,
                             GError            **error);

G_END_DECLS
