/* qstore-bench-workload.h: the bench-baseline workload, shared by
 * qstore-bench and the PostgreSQL baseline
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The rows, their formulas, the one random stream both programs draw from
 * in the same order, and the timing of a phase.
 */
#pragma once

#include <time.h>

#include <glib.h>

#define BENCH_SEED       42
#define SCAN_COUNT       1000
#define SCAN_LO_MOD      99990
#define SCAN_WIDTH       10
#define SMALL_TXN_COUNT  10000
#define SCORE_MOD        100000
#define SCORE_FACTOR     7919
#define MAX_ROWS         99000000
#define NAME_MAX_LEN     32
#define ROW_MAX_LEN      (4 + NAME_MAX_LEN + 8)
typedef struct
{
  struct timespec wall;
  struct timespec cpu;
} Stamp;

/* The splitmix64 stream. */
guint64   rng_next           (guint64        *state);
/* A row: its score and its name ("name-%08d"), written to @buf of
 * NAME_MAX_LEN bytes. */
gint64    row_score          (guint64         id);
gsize     row_name           (guint64         id,
                              char           *buf);
/* The inverse of SCORE_FACTOR modulo SCORE_MOD: the ids of score s are
 * s * inverse mod SCORE_MOD, plus multiples of SCORE_MOD. */
guint64   score_factor_inverse (void);
/* What a read of a row touches, for the checksums. */
guint64   row_touch          (const guint8   *name,
                              gsize           len,
                              gint64          score);
/* The ids 0 … @n - 1 in the workload's shuffled load order. */
guint64  *make_shuffled_ids  (guint64         n,
                              guint64        *rng);

Stamp     stamp_now          (void);
double    seconds_between    (struct timespec a,
                              struct timespec b);
glong     peak_rss_kib       (void);
void      append_json_string (GString        *line,
                              const char     *text);
