/* qstore-unsafe-row-private.h
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "qstore-unsafe-row.h"

G_BEGIN_DECLS

/* Takes the strings. */
QStoreUnsafeRow *qstore_unsafe_row_new (char       *row_key,
                                        char       *value_json,
                                        gint64      row_version,
                                        char       *source_suid,
                                        gboolean    safe);

G_END_DECLS
