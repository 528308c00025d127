/* qstore-fault.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "qstore-error.h"
#include "qstore-fault-private.h"
#include "qstore-i18n-private.h"

/* Fault points are checked on hot paths (once per written key), so the
 * common case, nothing armed, is one atomic read. */
static gint n_armed;
static GMutex lock;
static GHashTable *armed; /* point → remaining hits before the fault */

static void
arm_locked (const char *point,
            guint       after_hits)
{
  if (armed == NULL)
    armed = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_hash_table_replace (armed, g_strdup (point), GUINT_TO_POINTER (after_hits));
  g_atomic_int_set (&n_armed, g_hash_table_size (armed));
}

/* QSTORE_FAULTS="point:hits,…" arms faults in processes a test spawns. */
static void
arm_from_environment (void)
{
  static gsize done;

  if (g_once_init_enter (&done))
    {
      const char *spec = g_getenv ("QSTORE_FAULTS");

      if (spec != NULL)
        {
          g_auto(GStrv) items = g_strsplit (spec, ",", -1);

          g_mutex_lock (&lock);
          for (guint i = 0; items[i] != NULL; i++)
            {
              char *colon = strchr (items[i], ':');
              guint64 hits = 0;

              if (colon != NULL)
                {
                  *colon = '\0';
                  hits = g_ascii_strtoull (colon + 1, NULL, 10);
                }
              if (items[i][0] != '\0')
                arm_locked (items[i], (guint) hits);
            }
          g_mutex_unlock (&lock);
        }
      g_once_init_leave (&done, 1);
    }
}

void
_qstore_fault_arm (const char *point,
                   guint       after_hits)
{
  g_return_if_fail (point != NULL);

  arm_from_environment ();
  g_mutex_lock (&lock);
  arm_locked (point, after_hits);
  g_mutex_unlock (&lock);
}

void
_qstore_fault_disarm_all (void)
{
  arm_from_environment ();
  g_mutex_lock (&lock);
  if (armed != NULL)
    g_hash_table_remove_all (armed);
  g_atomic_int_set (&n_armed, 0);
  g_mutex_unlock (&lock);
}

gboolean
_qstore_fault_check (const char  *point,
                     GError     **error)
{
  gpointer remaining;
  gboolean strike = FALSE;

  arm_from_environment ();
  if (G_LIKELY (g_atomic_int_get (&n_armed) == 0))
    return TRUE;

  g_mutex_lock (&lock);
  if (g_hash_table_lookup_extended (armed, point, NULL, &remaining))
    {
      guint hits = GPOINTER_TO_UINT (remaining);

      if (hits == 0)
        {
          g_hash_table_remove (armed, point);
          g_atomic_int_set (&n_armed, g_hash_table_size (armed));
          strike = TRUE;
        }
      else
        g_hash_table_insert (armed, g_strdup (point), GUINT_TO_POINTER (hits - 1));
    }
  g_mutex_unlock (&lock);

  if (strike)
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_IO,
                   _("Injected fault at “%s”"), point);
      return FALSE;
    }
  return TRUE;
}
