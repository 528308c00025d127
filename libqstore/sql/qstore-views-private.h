/* qstore-views-private.h: views kept in the catalog
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "qstore-database-private.h"
#include "qstore-result.h"

G_BEGIN_DECLS

/* CREATE VIEW and DROP VIEW (the statement prepared on the main
 * connection): run, then the catalog follows. */
gboolean  qstore_views_create  (QStoreDatabase   *self,
                                QStoreStatement  *statement,
                                QStoreResult    **result,
                                GError          **error);
gboolean  qstore_views_drop    (QStoreDatabase   *self,
                                QStoreStatement  *statement,
                                QStoreResult    **result,
                                GError          **error);
/* Rewrites the entries of views whose text SQLite changed (renaming a
 * table rewrites the views that read it). */
gboolean  qstore_views_sync    (QStoreDatabase   *self,
                                GError          **error);

G_END_DECLS
