/* qstore-unsafe-event.h: one event for an unsafe window, as its
 * materializer planned it
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(QSTORE_INSIDE) && !defined(QSTORE_COMPILATION)
# error "Only <qstore.h> can be included directly."
#endif

#include <glib-object.h>

#include "qstore-version-macros.h"

G_BEGIN_DECLS

#define QSTORE_TYPE_UNSAFE_EVENT (qstore_unsafe_event_get_type ())

QSTORE_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (QStoreUnsafeEvent, qstore_unsafe_event, QSTORE, UNSAFE_EVENT, GObject)

QSTORE_AVAILABLE_IN_ALL
QStoreUnsafeEvent *qstore_unsafe_event_new                        (const char        *event_id,
                                                                   const char        *suid);
QSTORE_AVAILABLE_IN_ALL
const char        *qstore_unsafe_event_get_event_id               (QStoreUnsafeEvent *self);
QSTORE_AVAILABLE_IN_ALL
const char        *qstore_unsafe_event_get_suid                   (QStoreUnsafeEvent *self);

QSTORE_AVAILABLE_IN_ALL
void               qstore_unsafe_event_set_generation             (QStoreUnsafeEvent *self,
                                                                   gint64             generation);
QSTORE_AVAILABLE_IN_ALL
gint64             qstore_unsafe_event_get_generation             (QStoreUnsafeEvent *self);
QSTORE_AVAILABLE_IN_ALL
void               qstore_unsafe_event_set_safe_head              (QStoreUnsafeEvent *self,
                                                                   const char        *safe_head);
QSTORE_AVAILABLE_IN_ALL
const char        *qstore_unsafe_event_get_safe_head              (QStoreUnsafeEvent *self);
QSTORE_AVAILABLE_IN_ALL
void               qstore_unsafe_event_set_expected_row_version   (QStoreUnsafeEvent *self,
                                                                   gint64             version);
QSTORE_AVAILABLE_IN_ALL
void               qstore_unsafe_event_clear_expected_row_version (QStoreUnsafeEvent *self);
QSTORE_AVAILABLE_IN_ALL
gboolean           qstore_unsafe_event_get_expected_row_version   (QStoreUnsafeEvent *self,
                                                                   gint64            *version);
QSTORE_AVAILABLE_IN_ALL
void               qstore_unsafe_event_set_updated_at             (QStoreUnsafeEvent *self,
                                                                   gint64             updated_at_ms);
QSTORE_AVAILABLE_IN_ALL
gint64             qstore_unsafe_event_get_updated_at             (QStoreUnsafeEvent *self);
QSTORE_AVAILABLE_IN_ALL
void               qstore_unsafe_event_set_record_arrival         (QStoreUnsafeEvent *self,
                                                                   gboolean           record_arrival);
QSTORE_AVAILABLE_IN_ALL
gboolean           qstore_unsafe_event_get_record_arrival         (QStoreUnsafeEvent *self);
QSTORE_AVAILABLE_IN_ALL
void               qstore_unsafe_event_set_target_suid            (QStoreUnsafeEvent *self,
                                                                   const char        *target_suid);
QSTORE_AVAILABLE_IN_ALL
const char        *qstore_unsafe_event_get_target_suid            (QStoreUnsafeEvent *self);

QSTORE_AVAILABLE_IN_ALL
void               qstore_unsafe_event_add_upsert                 (QStoreUnsafeEvent *self,
                                                                   const char        *row_key,
                                                                   const char        *value_json,
                                                                   gint64             row_version,
                                                                   const char        *source_suid);
QSTORE_AVAILABLE_IN_ALL
void               qstore_unsafe_event_add_tombstone              (QStoreUnsafeEvent *self,
                                                                   const char        *row_key,
                                                                   gint64             row_version,
                                                                   const char        *source_suid);
QSTORE_AVAILABLE_IN_ALL
void               qstore_unsafe_event_add_patch                  (QStoreUnsafeEvent *self,
                                                                   const char        *row_key,
                                                                   const char        *patch_json,
                                                                   gint64             row_version,
                                                                   const char        *source_suid);
QSTORE_AVAILABLE_IN_ALL
void               qstore_unsafe_event_add_delete                 (QStoreUnsafeEvent *self,
                                                                   const char        *row_key);
QSTORE_AVAILABLE_IN_ALL
void               qstore_unsafe_event_add_index_entry            (QStoreUnsafeEvent *self,
                                                                   const char        *index_id,
                                                                   const char        *row_key,
                                                                   GVariant          *value);
QSTORE_AVAILABLE_IN_ALL
guint              qstore_unsafe_event_get_n_mutations            (QStoreUnsafeEvent *self);

G_END_DECLS
