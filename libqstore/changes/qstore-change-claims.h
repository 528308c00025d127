/* qstore-change-claims.h: a change's side effect runs once among consumers
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(QSTORE_INSIDE) && !defined(QSTORE_COMPILATION)
# error "Only <qstore.h> can be included directly."
#endif

#include "qstore-database.h"

G_BEGIN_DECLS

/**
 * QSTORE_CHANGE_CLAIMS_TTL_ENV:
 *
 * The environment variable that sets how many hours a change claim lives
 * (fractions allowed). Unset, empty, not a number, not more than 0, or
 * more than a million hours, it is
 * %QSTORE_CHANGE_CLAIMS_DEFAULT_TTL_HOURS.
 */
#define QSTORE_CHANGE_CLAIMS_TTL_ENV "QSTORE_CHANGE_CLAIMS_TTL_HOURS"

/**
 * QSTORE_CHANGE_CLAIMS_DEFAULT_TTL_HOURS:
 *
 * How many hours a change claim lives unless %QSTORE_CHANGE_CLAIMS_TTL_ENV
 * says otherwise.
 */
#define QSTORE_CHANGE_CLAIMS_DEFAULT_TTL_HOURS 1

/**
 * QSTORE_CHANGE_CLAIMS_TABLE:
 *
 * The table of a database that holds its change claims.
 */
#define QSTORE_CHANGE_CLAIMS_TABLE "_qstore_change_claims"

QSTORE_AVAILABLE_IN_ALL
gint64    qstore_change_claims_ttl_ms_for_hours     (const char      *hours);
QSTORE_AVAILABLE_IN_ALL
gint64    qstore_change_claims_get_ttl_ms           (void);
QSTORE_AVAILABLE_IN_ALL
gint64    qstore_change_claims_get_window_ms        (void);

QSTORE_AVAILABLE_IN_ALL
gboolean  qstore_database_claim_change              (QStoreDatabase  *self,
                                                     const char      *change_key,
                                                     GError         **error);
QSTORE_AVAILABLE_IN_ALL
guint64   qstore_database_sweep_change_claims       (QStoreDatabase  *self,
                                                     GError         **error);
QSTORE_AVAILABLE_IN_ALL
char    **qstore_database_list_change_claims        (QStoreDatabase  *self,
                                                     GError         **error);

G_END_DECLS
