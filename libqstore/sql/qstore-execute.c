/* qstore-execute.c: one statement with parameters, for its changes
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "qstore-database.h"

/**
 * qstore_database_execute:
 * @self: a #QStoreDatabase
 * @sql: one SQL statement
 * @params: (nullable): the statement's parameters: a tuple for positional
 *   ones, an `a{sv}` dictionary for named ones, as for
 *   qstore_database_query(); %NULL leaves every parameter NULL. A floating
 *   reference is consumed.
 * @error: return location for a #GError
 *
 * Runs one statement with parameters, such as a parameterised INSERT,
 * and discards any rows it returns. This is the parameter-taking sibling
 * of qstore_database_exec(); use qstore_database_query() to read rows.
 *
 * |[<!-- language="C" -->
 * gint64 n = qstore_database_execute (db, "UPDATE item SET price = :price WHERE name = :name",
 *                                     g_variant_new_parsed ("{'price': <0.4>, 'name': <'pear'>}"),
 *                                     &error);
 * ]|
 *
 * Errors are as for qstore_database_exec(), and
 * %QSTORE_ERROR_INVALID_ARGUMENT for parameters that do not match the
 * statement (a wrong count, a missing or unknown name, a value of a type
 * SQL cannot hold).
 *
 * Returns: how many rows the statement inserted, updated or deleted (as
 *   qstore_result_get_changes() counts them; 0 for other statements), or
 *   -1 on error
 */
gint64
qstore_database_execute (QStoreDatabase  *self,
                         const char      *sql,
                         GVariant        *params,
                         GError         **error)
{
  g_autoptr(GVariant) owned = params != NULL ? g_variant_ref_sink (params) : NULL;
  g_autoptr(QStoreResult) result = NULL;

  g_return_val_if_fail (QSTORE_IS_DATABASE (self), -1);
  g_return_val_if_fail (sql != NULL, -1);
  g_return_val_if_fail (error == NULL || *error == NULL, -1);

  result = qstore_database_query (self, sql, owned, error);
  if (result == NULL)
    return -1;
  return qstore_result_get_changes (result);
}
