/* qstore-bench-window.h: qstore-bench's unsafe-window layer
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <time.h>

#include <glib.h>

G_BEGIN_DECLS

/* The times a phase started (index 0) and ended (index 1). */
typedef struct
{
  struct timespec wall[2];
  struct timespec cpu[2];
} BenchWindowTimes;

/* Notes the time a phase starts (@at 0) or ends (@at 1). */
void   bench_window_stamp   (BenchWindowTimes       *times,
                             guint                   at);
/* The wall-clock seconds between the two. */
double bench_window_seconds (const BenchWindowTimes *times);

/* Prints one phase as qstore-bench prints its own (@extra: more
 * `"member":value` pairs, or NULL). */
typedef void (*BenchWindowEmit) (gpointer                data,
                                 const char             *phase,
                                 guint64                 ops,
                                 const BenchWindowTimes *times,
                                 guint64                 checksum,
                                 const char             *extra);

/* Runs the window's workload on @uri with @n_events events and reports
 * its phases through @emit: plain_upsert, apply_in_order,
 * apply_shuffled, composed_page. */
gboolean bench_window_run (const char       *uri,
                           guint64           n_events,
                           BenchWindowEmit   emit,
                           gpointer          data,
                           GError          **error);

G_END_DECLS
