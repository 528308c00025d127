/* qstore-staging-leftovers.h: staged imports that did not finish, and what
 * may be done about them
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(QSTORE_INSIDE) && !defined(QSTORE_COMPILATION)
# error "Only <qstore.h> can be included directly."
#endif

#include <gio/gio.h>

#include "qstore-version-macros.h"

G_BEGIN_DECLS

/**
 * QSTORE_STAGING_TABLE_PREFIX:
 *
 * What the name of a staging table starts with: a replace import into
 * table `t` loads into `_qstore_staging_t` first. Names with this prefix
 * are reserved: a user's CREATE TABLE with one is refused.
 */
#define QSTORE_STAGING_TABLE_PREFIX "_qstore_staging_"

/**
 * QSTORE_STAGING_MARKER_TABLE:
 *
 * The table that records every staged import while it runs, one row per
 * run (see [class@StagingRun]).
 */
#define QSTORE_STAGING_MARKER_TABLE "_qstore_replace_in_progress"

/**
 * QSTORE_STAGING_STALE_MINUTES_ENV:
 *
 * The environment variable that sets, in minutes, how long a staged run
 * may go without a heartbeat before its staging tables count as abandoned.
 * It outranks the database's `PRAGMA qstore.staging_stale_minutes`.
 */
#define QSTORE_STAGING_STALE_MINUTES_ENV "QSTORE_STAGING_STALE_MINUTES"

/**
 * QSTORE_STAGING_STALE_MINUTES_DEFAULT:
 *
 * The stale threshold, in minutes, when neither
 * %QSTORE_STAGING_STALE_MINUTES_ENV nor the database's setting gives a
 * usable one.
 */
#define QSTORE_STAGING_STALE_MINUTES_DEFAULT 30

#define QSTORE_TYPE_STAGING_RUN (qstore_staging_run_get_type ())

QSTORE_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (QStoreStagingRun, qstore_staging_run, QSTORE, STAGING_RUN, GObject)

QSTORE_AVAILABLE_IN_ALL
QStoreStagingRun   *qstore_staging_run_new               (const char          *target,
                                                          const char * const  *tables,
                                                          gint64               started,
                                                          gint64               heartbeat,
                                                          gboolean             resumable);
QSTORE_AVAILABLE_IN_ALL
gint64              qstore_staging_run_get_id            (QStoreStagingRun    *self);
QSTORE_AVAILABLE_IN_ALL
const char         *qstore_staging_run_get_kind          (QStoreStagingRun    *self);
QSTORE_AVAILABLE_IN_ALL
const char         *qstore_staging_run_get_target        (QStoreStagingRun    *self);
QSTORE_AVAILABLE_IN_ALL
const char * const *qstore_staging_run_get_tables        (QStoreStagingRun    *self);
QSTORE_AVAILABLE_IN_ALL
gint64              qstore_staging_run_get_started       (QStoreStagingRun    *self);
QSTORE_AVAILABLE_IN_ALL
gint64              qstore_staging_run_get_heartbeat     (QStoreStagingRun    *self);
QSTORE_AVAILABLE_IN_ALL
gboolean            qstore_staging_run_get_resumable     (QStoreStagingRun    *self);
QSTORE_AVAILABLE_IN_ALL
gboolean            qstore_staging_run_get_swapped       (QStoreStagingRun    *self);
QSTORE_AVAILABLE_IN_ALL
const char         *qstore_staging_run_get_details       (QStoreStagingRun    *self);
QSTORE_AVAILABLE_IN_ALL
gboolean            qstore_staging_run_get_judged        (QStoreStagingRun    *self);
QSTORE_AVAILABLE_IN_ALL
gboolean            qstore_staging_run_get_droppable     (QStoreStagingRun    *self);
QSTORE_AVAILABLE_IN_ALL
const char         *qstore_staging_run_get_reason        (QStoreStagingRun    *self);
QSTORE_AVAILABLE_IN_ALL
gint64              qstore_staging_run_get_heartbeat_age (QStoreStagingRun    *self);

#define QSTORE_TYPE_STAGING_LEFTOVERS (qstore_staging_leftovers_get_type ())

QSTORE_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (QStoreStagingLeftovers, qstore_staging_leftovers, QSTORE, STAGING_LEFTOVERS, GObject)

QSTORE_AVAILABLE_IN_ALL
QStoreStagingLeftovers *qstore_staging_leftovers_new          (GPtrArray              *runs,
                                                               gint64                  now,
                                                               gint64                  stale_after_ms);
QSTORE_AVAILABLE_IN_ALL
gint64              qstore_staging_leftovers_get_now          (QStoreStagingLeftovers *self);
QSTORE_AVAILABLE_IN_ALL
gint64              qstore_staging_leftovers_get_stale_after_ms (QStoreStagingLeftovers *self);
QSTORE_AVAILABLE_IN_ALL
guint               qstore_staging_leftovers_get_n_droppable  (QStoreStagingLeftovers *self);
QSTORE_AVAILABLE_IN_ALL
GPtrArray          *qstore_staging_leftovers_get_droppable    (QStoreStagingLeftovers *self);
QSTORE_AVAILABLE_IN_ALL
char               *qstore_staging_leftovers_describe         (QStoreStagingLeftovers *self);

QSTORE_AVAILABLE_IN_ALL
gint64              qstore_staging_stale_after_ms             (const char             *env_value,
                                                               const char             *setting_value);
QSTORE_AVAILABLE_IN_ALL
gboolean            qstore_staging_parse_minutes              (const char             *text,
                                                               gint64                 *minutes);
QSTORE_AVAILABLE_IN_ALL
gboolean            qstore_is_staging_table_name              (const char             *name);
QSTORE_AVAILABLE_IN_ALL
char               *qstore_staging_table_name_for             (const char             *target);

G_END_DECLS
