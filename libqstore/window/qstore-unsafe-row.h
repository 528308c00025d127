/* qstore-unsafe-row.h: one row of a composed page of an unsafe window
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

#define QSTORE_TYPE_UNSAFE_ROW (qstore_unsafe_row_get_type ())

QSTORE_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (QStoreUnsafeRow, qstore_unsafe_row, QSTORE, UNSAFE_ROW, GObject)

QSTORE_AVAILABLE_IN_ALL
const char *qstore_unsafe_row_get_row_key     (QStoreUnsafeRow *self);
QSTORE_AVAILABLE_IN_ALL
const char *qstore_unsafe_row_get_value_json  (QStoreUnsafeRow *self);
QSTORE_AVAILABLE_IN_ALL
gint64      qstore_unsafe_row_get_row_version (QStoreUnsafeRow *self);
QSTORE_AVAILABLE_IN_ALL
const char *qstore_unsafe_row_get_source_suid (QStoreUnsafeRow *self);
QSTORE_AVAILABLE_IN_ALL
gboolean    qstore_unsafe_row_get_safe        (QStoreUnsafeRow *self);

G_END_DECLS
