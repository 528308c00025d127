/* qstore-alter-private.h: the ALTER TABLE arms SQLite lacks, and DROP
 * COLUMN
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "qstore-database-private.h"
#include "qstore-result.h"

G_BEGIN_DECLS

/* Runs an ALTER TABLE of a qstore table that SQLite cannot: DROP COLUMN
 * and the arms it has no words for. */
gboolean  qstore_alter_table  (QStoreDatabase   *self,
                               QStoreStatement  *statement,
                               QStoreResult    **result,
                               GError          **error);

G_END_DECLS
