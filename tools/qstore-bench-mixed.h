/* qstore-bench-mixed.h: everyday SQL on qstore and on native SQLite
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Runs the mixed workload on a database of @provider at @location (NULL
 * for memory) and on native SQLite (a file next to @location when
 * @persistent, else in memory), and prints one JSON line per query class
 * and one for the total. FALSE when a statement fails or the two engines'
 * results differ. */
gboolean qstore_bench_mixed (const char  *provider,
                             const char  *location,
                             gboolean     persistent,
                             int          run,
                             GError     **error);

G_END_DECLS
