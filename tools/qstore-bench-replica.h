/* qstore-bench-replica.h: qstore-bench's replica layer
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "qstore-bench-window.h"

G_BEGIN_DECLS

/* Runs the replica workload on @uri, with a transaction of @n_rows rows
 * for its large_txn phase, and reports its phases through @emit:
 * progressed_latency, write_q0, write_q10, write_q100, large_txn. A
 * @write_out_step other than 0 is set on the replica first. */
gboolean bench_replica_run (const char       *uri,
                            guint64           n_rows,
                            guint64           write_out_step,
                            BenchWindowEmit   emit,
                            gpointer          data,
                            GError          **error);

G_END_DECLS
