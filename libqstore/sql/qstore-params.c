/* qstore-params.c: a statement's parameters from a GVariant
 *
 * Positional parameters come from a tuple, in order; named ones (`:name`,
 * `@name`, `$name`) from an `a{sv}` dictionary, as Python's sqlite3 takes
 * them. Every mismatch between what the statement uses and what was given
 * is an error: a value bound to nothing is as likely a typo as a value
 * missing.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "qstore-affinity-private.h"
#include "qstore-error.h"
#include "qstore-i18n-private.h"
#include "qstore-params-private.h"

#define DICTIONARY_TYPE ((const GVariantType *) "a{s*}")

static const char *
describe (const char *name,
          int         position,
          char        number[16])
{
  if (name != NULL)
    return name;
  g_snprintf (number, 16, "%d", position);
  return number;
}

GVariant *
qstore_params_value_of (GVariant     *given,
                        QStoreValue  *value,
                        GError      **error)
{
  GVariant *inner = g_variant_ref (given);
  GVariant *holder;

  /* g_variant_classify() reads the type's first character, where
   * g_variant_is_of_type() walks a type string: this runs per parameter. */
  while (g_variant_classify (inner) == G_VARIANT_CLASS_VARIANT)
    {
      GVariant *next = g_variant_get_variant (inner);

      g_variant_unref (inner);
      inner = next;
    }

  /* SQLite has no booleans: TRUE and FALSE are 1 and 0. */
  if (g_variant_classify (inner) == G_VARIANT_CLASS_BOOLEAN)
    {
      memset (value, 0, sizeof *value);
      value->type = QSTORE_VALUE_INTEGER;
      value->integer = g_variant_get_boolean (inner);
      return inner;
    }
  holder = qstore_value_from_variant (inner, value, error);
  g_variant_unref (inner);
  return holder;
}

/* Binds one value; @name names the parameter in errors, its position
 * when NULL (spelled out only then: this runs for every parameter of
 * every statement). */
static gboolean
bind_value (sqlite3_stmt  *stmt,
            int            position,
            GVariant      *given,
            const char    *name,
            GError       **error)
{
  g_autoptr(GVariant) holder = NULL;
  g_autoptr(GError) local_error = NULL;
  char number[16];
  QStoreValue value;
  int rc;

  if (!(holder = qstore_params_value_of (given, &value, &local_error)))
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                   _("Parameter %s: %s"), describe (name, position, number),
                   local_error->message);
      return FALSE;
    }

  rc = qstore_value_bind (stmt, position, &value);
  if (rc != SQLITE_OK)
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                   _("Parameter %s cannot be bound: %s"), describe (name, position, number),
                   sqlite3_errstr (rc));
      return FALSE;
    }
  return TRUE;
}

static gboolean
bind_tuple (sqlite3_stmt  *stmt,
            GVariant      *params,
            GError       **error)
{
  int n_expected = sqlite3_bind_parameter_count (stmt);
  int n_given = (int) g_variant_n_children (params);

  if (n_given != n_expected)
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                   _("The statement takes %d parameter%s but %d %s given: pass a tuple "
                   "with one value per parameter"), n_expected, n_expected == 1 ? "" : "s",
                   n_given, n_given == 1 ? "was" : "were");
      return FALSE;
    }

  for (int i = 0; i < n_given; i++)
    {
      g_autoptr(GVariant) child = g_variant_get_child_value (params, i);

      if (!bind_value (stmt, i + 1, child, NULL, error))
        return FALSE;
    }
  return TRUE;
}

/* The statement's parameter names, for messages. */
static char *
describe_names (sqlite3_stmt *stmt)
{
  GString *names = g_string_new (NULL);
  int n = sqlite3_bind_parameter_count (stmt);

  for (int i = 1; i <= n; i++)
    {
      const char *name = sqlite3_bind_parameter_name (stmt, i);

      if (names->len > 0)
        g_string_append (names, ", ");
      g_string_append (names, name != NULL ? name : "?");
    }
  if (names->len == 0)
    g_string_append (names, "none");
  return g_string_free (names, FALSE);
}

gboolean
qstore_params_name_matches (const char *key,
                            const char *name)
{
  return g_str_equal (key, name) || g_str_equal (key, name + 1);
}

static gboolean
bind_dictionary (sqlite3_stmt  *stmt,
                 GVariant      *params,
                 GError       **error)
{
  gsize n_keys = g_variant_n_children (params);
  int n_params = sqlite3_bind_parameter_count (stmt);
  g_autofree gboolean *used = g_new0 (gboolean, n_keys);

  for (int i = 1; i <= n_params; i++)
    {
      const char *name = sqlite3_bind_parameter_name (stmt, i);
      g_autoptr(GVariant) value = NULL;
      const char *found_key = NULL;

      if (name == NULL || name[0] == '?')
        {
          g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                       _("Parameter %d (“%s”) is positional, but the parameters were given "
                       "by name: pass a tuple, or name every parameter (:name, @name or "
                       "$name)"), i, name != NULL ? name : "?");
          return FALSE;
        }

      for (gsize k = 0; k < n_keys; k++)
        {
          g_autoptr(GVariant) entry = g_variant_get_child_value (params, k);
          const char *key = NULL;
          g_autoptr(GVariant) entry_value = NULL;

          g_variant_get (entry, "{&s*}", &key, &entry_value);
          if (!qstore_params_name_matches (key, name))
            continue;
          if (found_key != NULL)
            {
              g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                           _("Parameter “%s” is given twice, as “%s” and as “%s”: give it "
                           "once"), name, found_key, key);
              return FALSE;
            }
          found_key = key;
          used[k] = TRUE;
          value = g_steal_pointer (&entry_value);
        }

      if (value == NULL)
        {
          g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                       _("No value for parameter “%s”: add the key “%s” to the dictionary"),
                       name, name + 1);
          return FALSE;
        }
      if (!bind_value (stmt, i, value, name, error))
        return FALSE;
    }

  for (gsize k = 0; k < n_keys; k++)
    if (!used[k])
      {
        g_autoptr(GVariant) entry = g_variant_get_child_value (params, k);
        g_autofree char *names = describe_names (stmt);
        const char *key = NULL;

        g_variant_get_child (entry, 0, "&s", &key);
        g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                     _("“%s” is not a parameter of the statement (its parameters: %s): "
                     "remove it or correct its name"), key, names);
        return FALSE;
      }
  return TRUE;
}

gboolean
qstore_params_bind (sqlite3_stmt  *stmt,
                    GVariant      *params,
                    GError       **error)
{
  /* Without parameters, they are NULL, as SQLite leaves them. */
  if (params == NULL)
    return TRUE;

  if (g_variant_classify (params) == G_VARIANT_CLASS_TUPLE)
    return bind_tuple (stmt, params, error);
  if (g_variant_is_of_type (params, DICTIONARY_TYPE))
    return bind_dictionary (stmt, params, error);

  g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
               _("Parameters of type “%s” cannot be bound: pass a tuple for positional "
               "parameters or an “a{sv}” dictionary for named ones"),
               g_variant_get_type_string (params));
  return FALSE;
}
