/* qstore-coordinator-private.h
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "qstore-coordinator.h"

G_BEGIN_DECLS

/* The coordinator reads a table's committed row count from `__stats__`
 * once and keeps it. Whoever changes `__stats__` behind its back (dropping
 * or renaming a table's stores) calls this so the next read goes to the
 * store again. Not inside a transaction that touched the table. */
void qstore_coordinator_forget_row_count (QStoreCoordinator *self,
                                          const char        *schema,
                                          const char        *table);

/* Commits as qstore_coordinator_commit() does, but through the provider's
 * restructure: the stores named in @drop (NULL-terminated) are erased in
 * the same all-or-nothing unit as every write of the transaction, with or
 * without an atomic batch. DDL uses it so that rows, index stores and the
 * catalog entry can never be seen half changed after a crash. */
gboolean qstore_coordinator_commit_restructure (QStoreCoordinator   *self,
                                                const char * const  *drop,
                                                GError             **error);

G_END_DECLS
