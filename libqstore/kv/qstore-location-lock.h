/* qstore-location-lock.h: one writer per location
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

#define QSTORE_TYPE_LOCATION_LOCK (qstore_location_lock_get_type ())

QSTORE_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (QStoreLocationLock, qstore_location_lock, QSTORE, LOCATION_LOCK, GObject)

QSTORE_AVAILABLE_IN_ALL
QStoreLocationLock *qstore_location_lock_acquire   (const char          *path,
                                                    const char          *location,
                                                    guint                wait_ms,
                                                    GError             **error);
QSTORE_AVAILABLE_IN_ALL
const char         *qstore_location_lock_get_path  (QStoreLocationLock  *self);
QSTORE_AVAILABLE_IN_ALL
gboolean            qstore_location_lock_is_held   (QStoreLocationLock  *self);
QSTORE_AVAILABLE_IN_ALL
void                qstore_location_lock_release   (QStoreLocationLock  *self);
QSTORE_AVAILABLE_IN_ALL
gboolean            qstore_location_lock_query     (const char          *path,
                                                    int                 *holder_pid);

G_END_DECLS
