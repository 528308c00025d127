/* qstore-inspector-row-dialog.h: one row, every value in full
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <adwaita.h>

#include "qstore-inspector-row.h"

G_BEGIN_DECLS

GtkWindow *qstore_inspector_row_dialog_new (GtkWindow          *parent,
                                            const char         *table,
                                            const char * const *column_names,
                                            QStoreInspectorRow *row);

G_END_DECLS
