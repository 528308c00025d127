/* qstore-lifecycle-private.h: opening a database
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "qstore-router-private.h"

G_BEGIN_DECLS

/* Opens the store at @uri as a database that runs @setup's statement
 * handlers and extensions (@setup outlives the database): loads the
 * provider, reads the catalog back, repairs a commit interrupted last
 * time, then lets the extensions read their entries. */
QStoreDatabase *qstore_database_open_with_setup (const char                 *uri,
                                                 QStoreOpenFlags             flags,
                                                 const QStoreDatabaseSetup  *setup,
                                                 GError                    **error);
/* The same over @provider, which the caller opened and keeps: the
 * database never closes it, so several databases may share one provider
 * (a replica's writer and its workers' readers). */
QStoreDatabase *qstore_database_open_on_provider (QStoreProvider             *provider,
                                                  QStoreOpenFlags             flags,
                                                  const QStoreDatabaseSetup  *setup,
                                                  GError                    **error);

G_END_DECLS
