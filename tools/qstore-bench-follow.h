/* qstore-bench-follow.h: how long `qstore changes --follow` takes to tell a commit
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <qstore.h>

G_BEGIN_DECLS

/* Runs `@qstore --store @uri changes --follow` as a child, then commits
 * @n_commits small transactions through @db one after the other, each
 * once the child printed the one before, and gives the median and the
 * 99th percentile of the milliseconds from a commit returning to its
 * line arriving. Turns the change log of @db on when it is off. */
gboolean qstore_bench_follow_lag (QStoreDatabase  *db,
                                  const char      *uri,
                                  const char      *qstore,
                                  guint            n_commits,
                                  double          *median_ms,
                                  double          *p99_ms,
                                  GError         **error);

G_END_DECLS
