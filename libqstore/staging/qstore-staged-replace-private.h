/* qstore-staged-replace-private.h: a replace import's staging table, its
 * marker row and the swap
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "qstore-database.h"
#include "qstore-staging-leftovers.h"

G_BEGIN_DECLS

/* The marker row of the run in progress. */
typedef struct
{
  gint64  id;
  char   *target;
  char   *staging;
} QStoreStagedRun;

void       qstore_staged_run_clear         (QStoreStagedRun   *run);

/* The run the marker table records for @target, or NULL (@error unset)
 * when there is none. */
QStoreStagingRun *qstore_staged_find_run   (QStoreDatabase    *db,
                                            const char        *target,
                                            GError           **error);

/* Refuses, saying what to do, when a run is recorded for @target. */
gboolean   qstore_staged_check_free        (QStoreDatabase    *db,
                                            const char        *target,
                                            GError           **error);

/* Records a new run for @target (its marker row, with a first heartbeat,
 * committed), then creates its staging table: a clone of @target's
 * schema, indexes included. On failure nothing is left but, possibly, a
 * marker row naming a staging table that does not exist. */
gboolean   qstore_staged_begin             (QStoreDatabase    *db,
                                            const char        *target,
                                            gboolean           resumable,
                                            const char        *details,
                                            QStoreStagedRun   *run,
                                            GError           **error);

/* Takes over @found (resume). */
void       qstore_staged_adopt             (QStoreStagedRun   *run,
                                            QStoreStagingRun  *found);

/* In the open transaction: the heartbeat, and @details (NULL: as it is). */
gboolean   qstore_staged_beat              (QStoreDatabase    *db,
                                            QStoreStagedRun   *run,
                                            const char        *details,
                                            GError           **error);

/* One transaction: the target's rows deleted, the staged rows inserted,
 * the marker row marked swapped. Then the staging table and the marker
 * row go. A failure before the commit (*@committed FALSE) leaves the
 * target as it was; after it, only the tidying up failed. */
gboolean   qstore_staged_swap              (QStoreDatabase    *db,
                                            QStoreStagedRun   *run,
                                            gboolean          *committed,
                                            GError           **error);

/* Drops @tables (only staging tables, never @target) and then marker row
 * @id, and the marker table once it is empty. */
gboolean   qstore_staged_drop              (QStoreDatabase     *db,
                                            gint64              id,
                                            const char         *target,
                                            const char * const *tables,
                                            GError            **error);

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (QStoreStagedRun, qstore_staged_run_clear)

G_END_DECLS
