/* qstore-params.c: a statement's parameters from a GVariant
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "qstore-affinity-private.h"
#include "qstore-error.h"
#include "qstore-params-private.h"

gboolean
qstore_params_bind (sqlite3_stmt  *stmt,
                    GVariant      *params,
                    GError       **error)
{
  int n_expected = sqlite3_bind_parameter_count (stmt);
  int n_given = params != NULL ? (int) g_variant_n_children (params) : 0;

  /* Without a tuple, parameters are NULL, as SQLite leaves them. */
  if (params == NULL)
    return TRUE;

  if (n_given != n_expected)
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                   "The statement takes %d parameter%s but %d %s given: pass a tuple "
                   "with one value per parameter", n_expected, n_expected == 1 ? "" : "s",
                   n_given, n_given == 1 ? "was" : "were");
      return FALSE;
    }

  for (int i = 0; i < n_given; i++)
    {
      g_autoptr(GVariant) child = g_variant_get_child_value (params, i);
      g_autoptr(GVariant) inner = g_variant_ref (child);
      g_autoptr(GVariant) holder = NULL;
      g_autoptr(GError) local_error = NULL;
      QStoreValue value;

      while (g_variant_is_of_type (inner, G_VARIANT_TYPE_VARIANT))
        {
          GVariant *next = g_variant_get_variant (inner);

          g_variant_unref (inner);
          inner = next;
        }

      if (g_variant_is_of_type (inner, G_VARIANT_TYPE_BOOLEAN))
        {
          sqlite3_bind_int (stmt, i + 1, g_variant_get_boolean (inner));
          continue;
        }

      if (!(holder = qstore_value_from_variant (inner, &value, &local_error)))
        {
          g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                       "Parameter %d: %s", i + 1, local_error->message);
          return FALSE;
        }
      qstore_value_bind (stmt, i + 1, &value);
    }
  return TRUE;
}
