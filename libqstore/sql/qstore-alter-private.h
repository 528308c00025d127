/* qstore-alter-private.h: the ALTER TABLE arms SQLite lacks, and DROP
 * COLUMN with its indexes
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "qstore-database-private.h"

G_BEGIN_DECLS

/* Runs the first statement of @sql, an ALTER TABLE on a qstore table that
 * SQLite cannot run itself:
 *
 *   ALTER TABLE t ALTER [COLUMN] c SET NOT NULL | DROP NOT NULL
 *                                | SET DEFAULT expr | DROP DEFAULT
 *                                | SET COLLATE name
 *   ALTER TABLE t ADD CONSTRAINT name UNIQUE (…) | CHECK (…) | FOREIGN KEY …
 *   ALTER TABLE t DROP CONSTRAINT name
 *   ALTER TABLE t RENAME CONSTRAINT a TO b
 *   ALTER TABLE t ALTER PRIMARY KEY (columns)
 *   ALTER TABLE t DROP [COLUMN] c
 *
 * Every arm either happens completely (rows, indexes, catalog entry, in
 * one all-or-nothing unit) or leaves the table, its stores and the catalog
 * as they were. *tail gets where the next statement starts. */
gboolean  qstore_alter_table  (QStoreDatabase  *self,
                               const char      *sql,
                               const char     **tail,
                               GError         **error);

G_END_DECLS
