/* qstore-occurrence-counter.h: how often a change digest was seen lately
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

#define QSTORE_TYPE_OCCURRENCE_COUNTER (qstore_occurrence_counter_get_type ())

QSTORE_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (QStoreOccurrenceCounter, qstore_occurrence_counter, QSTORE, OCCURRENCE_COUNTER, GObject)

QSTORE_AVAILABLE_IN_ALL
QStoreOccurrenceCounter *qstore_occurrence_counter_new            (gint64                    window_ms,
                                                                   guint                     max_entries);
QSTORE_AVAILABLE_IN_ALL
QStoreOccurrenceCounter *qstore_occurrence_counter_new_for_claims (guint                     max_entries);
QSTORE_AVAILABLE_IN_ALL
gint64                   qstore_occurrence_counter_get_window_ms  (QStoreOccurrenceCounter  *self);
QSTORE_AVAILABLE_IN_ALL
guint                    qstore_occurrence_counter_get_max_entries (QStoreOccurrenceCounter *self);
QSTORE_AVAILABLE_IN_ALL
guint                    qstore_occurrence_counter_get_size       (QStoreOccurrenceCounter  *self);
QSTORE_AVAILABLE_IN_ALL
guint                    qstore_occurrence_counter_next           (QStoreOccurrenceCounter  *self,
                                                                   const char               *digest,
                                                                   gint64                    now_ms);
QSTORE_AVAILABLE_IN_ALL
void                     qstore_occurrence_counter_prune          (QStoreOccurrenceCounter  *self,
                                                                   gint64                    now_ms);
QSTORE_AVAILABLE_IN_ALL
guint                    qstore_occurrence_counter_seed_from_change_keys (QStoreOccurrenceCounter *self,
                                                                          const char * const      *change_keys,
                                                                          gint64                   now_ms);

G_END_DECLS
