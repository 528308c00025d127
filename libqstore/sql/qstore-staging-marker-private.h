/* qstore-staging-marker-private.h: what every database does about staged
 * imports, and the marker table the import layer writes
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "qstore-router-private.h"
#include "qstore-staging-leftovers-private.h"
#include "qstore-staging-marker.h"

G_BEGIN_DECLS

/* The marker table: one row per run. `staging` is a JSON array of the
 * run's staging tables (a table's name may hold a comma); times are
 * milliseconds since the Unix epoch; `details` is the JSON object of
 * qstore_staging_run_get_details(). At most one run per target. */
#define QSTORE_STAGING_MARKER_DDL \
  "CREATE TABLE " QSTORE_STAGING_MARKER_TABLE " (" \
  "id INTEGER PRIMARY KEY, " \
  "kind TEXT NOT NULL, " \
  "target TEXT NOT NULL COLLATE NOCASE UNIQUE, " \
  "staging TEXT NOT NULL, " \
  "started INTEGER NOT NULL, " \
  "heartbeat INTEGER, " \
  "resumable INTEGER NOT NULL, " \
  "state TEXT NOT NULL, " \
  "details TEXT)"

/* The marker's `state`: rows landing, or the swap committed. */
#define QSTORE_STAGING_STATE_LOADING "loading"
#define QSTORE_STAGING_STATE_SWAPPED "swapped"

/* `PRAGMA qstore.staging_stale_minutes`: schema `qstore`, this name. */
#define QSTORE_STAGING_STALE_SETTING "qstore.staging_stale_minutes"

/* What every database gets: the leftovers note at open, and the refusal
 * of a materialized view over a staging table. */
extern const QStoreDatabaseExtension qstore_staging_marker_extension;

gboolean qstore_staging_stale_minutes_setting (QStoreDatabase    *db,
                                               QStoreStatement   *statement,
                                               QStoreResult     **result,
                                               GError           **error);

/* The import running on @db (one at a time: an import holds transactions
 * open between its statements), or NULL. */
gpointer qstore_staging_marker_get_importer   (QStoreDatabase    *db);
void     qstore_staging_marker_set_importer   (QStoreDatabase    *db,
                                               gpointer           importer);

/* Every marker row as a run, not judged, in id order: an empty array when
 * there is no marker table. */
GPtrArray *qstore_staging_marker_read_runs    (QStoreDatabase    *db,
                                               GError           **error);

G_END_DECLS
