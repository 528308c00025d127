/* qstore-staging-leftovers-private.h: making runs from marker rows
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "qstore-staging-leftovers.h"

G_BEGIN_DECLS

/* The kind of marker row a staged import writes. */
#define QSTORE_STAGING_KIND "staging"

/* A run as its marker row holds it; @heartbeat 0 when it never beat. */
QStoreStagingRun *qstore_staging_run_new_full (gint64               id,
                                               const char          *kind,
                                               const char          *target,
                                               const char * const  *tables,
                                               gint64               started,
                                               gint64               heartbeat,
                                               gboolean             resumable,
                                               gboolean             swapped,
                                               const char          *details);

/* Whether @name is reserved for staged imports: a staging table's, or the
 * marker table's. Such tables are bookkeeping, not the user's. */
gboolean          qstore_staging_is_reserved_name (const char *name);

/* "4 min", "2 h 5 min": how long @ms lasts, for people. */
char             *qstore_staging_format_duration (gint64 ms);

G_END_DECLS
