/* qstore-rehydration-result.h: what opening a database read back
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(QSTORE_INSIDE) && !defined(QSTORE_COMPILATION)
# error "Only <qstore.h> can be included directly."
#endif

#include <glib-object.h>

#include "qstore-staging-leftovers.h"
#include "qstore-version-macros.h"

G_BEGIN_DECLS

#define QSTORE_TYPE_REHYDRATION_RESULT (qstore_rehydration_result_get_type ())

QSTORE_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (QStoreRehydrationResult, qstore_rehydration_result, QSTORE, REHYDRATION_RESULT, GObject)

QSTORE_AVAILABLE_IN_ALL
const char * const *qstore_rehydration_result_get_tables        (QStoreRehydrationResult *self);
QSTORE_AVAILABLE_IN_ALL
const char * const *qstore_rehydration_result_get_indexes       (QStoreRehydrationResult *self);
QSTORE_AVAILABLE_IN_ALL
const char * const *qstore_rehydration_result_get_views         (QStoreRehydrationResult *self);
QSTORE_AVAILABLE_IN_ALL
const char * const *qstore_rehydration_result_get_materialized_views (QStoreRehydrationResult *self);
QSTORE_AVAILABLE_IN_ALL
const char * const *qstore_rehydration_result_get_adopted_materialized_views (QStoreRehydrationResult *self);
QSTORE_AVAILABLE_IN_ALL
const char * const *qstore_rehydration_result_get_refilled_materialized_views (QStoreRehydrationResult *self);
QSTORE_AVAILABLE_IN_ALL
guint               qstore_rehydration_result_get_n_errors      (QStoreRehydrationResult *self);
QSTORE_AVAILABLE_IN_ALL
const char         *qstore_rehydration_result_get_error_name    (QStoreRehydrationResult *self,
                                                                 guint                    i);
QSTORE_AVAILABLE_IN_ALL
const char         *qstore_rehydration_result_get_error_ddl     (QStoreRehydrationResult *self,
                                                                 guint                    i);
QSTORE_AVAILABLE_IN_ALL
const char         *qstore_rehydration_result_get_error_message (QStoreRehydrationResult *self,
                                                                 guint                    i);
QSTORE_AVAILABLE_IN_ALL
QStoreStagingLeftovers *qstore_rehydration_result_get_staging_leftovers (QStoreRehydrationResult *self);

G_END_DECLS
