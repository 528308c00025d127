/* qstore-rehydration-result-private.h: filling a rehydration result
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "qstore-rehydration-result.h"

G_BEGIN_DECLS

/* @schema.@name loaded. */
void      qstore_rehydration_result_add_table             (QStoreRehydrationResult *self,
                                                           const char              *schema,
                                                           const char              *name);
void      qstore_rehydration_result_add_index             (QStoreRehydrationResult *self,
                                                           const char              *schema,
                                                           const char              *name);
void      qstore_rehydration_result_add_view              (QStoreRehydrationResult *self,
                                                           const char              *schema,
                                                           const char              *name);
/* @name is `schema.name`. */
void      qstore_rehydration_result_add_materialized_view (QStoreRehydrationResult *self,
                                                           const char              *name,
                                                           gboolean                 adopted);
/* An entry that did not load: its name, its DDL and why. */
void      qstore_rehydration_result_add_error_entry       (QStoreRehydrationResult *self,
                                                           const char              *name,
                                                           const char              *ddl,
                                                           const char              *message);
/* A table that loaded and turned out to be a materialized view's contents. */
void      qstore_rehydration_result_forget_table          (QStoreRehydrationResult *self,
                                                           const char              *name);

/* The staged imports the marker table records, judged at open. */
void      qstore_rehydration_result_set_staging_leftovers (QStoreRehydrationResult *self,
                                                           QStoreStagingLeftovers  *leftovers);

G_END_DECLS
