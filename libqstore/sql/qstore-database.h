/* qstore-database.h: a store opened as an SQL database
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(QSTORE_INSIDE) && !defined(QSTORE_COMPILATION)
# error "Only <qstore.h> can be included directly."
#endif

#include "qstore-catalog.h"
#include "qstore-rehydration-result.h"
#include "qstore-coordinator.h"
#include "qstore-result.h"
#include "qstore-table.h"

G_BEGIN_DECLS

#define QSTORE_TYPE_DATABASE (qstore_database_get_type ())

QSTORE_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (QStoreDatabase, qstore_database, QSTORE, DATABASE, GObject)

QSTORE_AVAILABLE_IN_ALL
QStoreDatabase    *qstore_database_open            (const char       *uri,
                                                    QStoreOpenFlags   flags,
                                                    GError          **error);
QSTORE_AVAILABLE_IN_ALL
gboolean           qstore_database_close           (QStoreDatabase   *self,
                                                    GError          **error);
QSTORE_AVAILABLE_IN_ALL
gboolean           qstore_database_exec            (QStoreDatabase   *self,
                                                    const char       *sql,
                                                    GError          **error);
QSTORE_AVAILABLE_IN_ALL
gint64             qstore_database_execute         (QStoreDatabase   *self,
                                                    const char       *sql,
                                                    GVariant         *params,
                                                    GError          **error);
QSTORE_AVAILABLE_IN_ALL
QStoreResult      *qstore_database_query           (QStoreDatabase   *self,
                                                    const char       *sql,
                                                    GVariant         *params,
                                                    GError          **error);
QSTORE_AVAILABLE_IN_ALL
gboolean           qstore_table_name_is_reserved   (const char       *name);
QSTORE_AVAILABLE_IN_ALL
gboolean           qstore_database_is_read_only_sql (QStoreDatabase  *self,
                                                    const char       *sql);
QSTORE_AVAILABLE_IN_ALL
QStoreProvider    *qstore_database_get_provider    (QStoreDatabase   *self);
QSTORE_AVAILABLE_IN_ALL
QStoreCoordinator *qstore_database_get_coordinator (QStoreDatabase   *self);
QSTORE_AVAILABLE_IN_ALL
QStoreTable       *qstore_database_get_table       (QStoreDatabase   *self,
                                                    const char       *schema,
                                                    const char       *name);
QSTORE_AVAILABLE_IN_ALL
char             **qstore_database_list_tables     (QStoreDatabase   *self);
QSTORE_AVAILABLE_IN_ALL
QStoreRehydrationResult *qstore_database_get_rehydration_result (QStoreDatabase *self);
QSTORE_AVAILABLE_IN_ALL
QStoreCheckReport *qstore_database_check           (QStoreDatabase   *self,
                                                    GError          **error);
QSTORE_AVAILABLE_IN_ALL
gboolean           qstore_database_reclaim_detached_table (QStoreDatabase      *self,
                                                           const char          *schema,
                                                           const char          *table,
                                                           const char * const  *index_names,
                                                           GError             **error);

G_END_DECLS
