/* qstore-bookkeeping.c: qstore's own small tables in a database
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "qstore-bookkeeping-private.h"
#include "qstore-database-private.h"
#include "qstore-error.h"
#include "qstore-i18n-private.h"

gboolean
qstore_bookkeeping_prepare (QStoreDatabase  *db,
                            const char      *table,
                            const char      *create_sql,
                            const char      *what,
                            GError         **error)
{
  if (!qstore_database_check_open (db, error) || !qstore_database_check_writable (db, error))
    return FALSE;
  if (!sqlite3_get_autocommit (db->db) || qstore_coordinator_in_transaction (db->coordinator))
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_BUSY,
                   _("%s commits on its own, and the database at “%s” has a transaction "
                   "open: COMMIT or ROLLBACK it first"), what,
                   qstore_provider_get_location (db->provider));
      return FALSE;
    }
  if (qstore_database_lookup (db, table) != NULL)
    return TRUE;
  return qstore_database_exec_reserved (db, create_sql, error);
}
