/* qstore-write-out.c: `PRAGMA qstore.write_out_step`
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "qstore-coordinator.h"
#include "qstore-error.h"
#include "qstore-i18n-private.h"
#include "qstore-write-out-private.h"

/* Like SQLite's `cache_size`, a setting of this open database: another
 * process, or the next open, has its own. The coordinator says what
 * range it takes. */
gboolean
qstore_write_out_step_setting (QStoreDatabase   *db,
                               QStoreStatement  *statement,
                               QStoreResult    **result,
                               GError          **error)
{
  g_autoptr(GError) parse_error = NULL;
  gboolean malformed = statement->malformed;
  guint64 n_bytes = 0;

  if (!malformed && statement->value != NULL &&
      !g_ascii_string_to_unsigned (statement->value, 10, 0, G_MAXUINT64, &n_bytes, &parse_error))
    {
      /* Digits past what 64 bits hold: as far out of range as it gets. */
      if (g_error_matches (parse_error, G_NUMBER_PARSER_ERROR, G_NUMBER_PARSER_ERROR_OUT_OF_BOUNDS))
        n_bytes = G_MAXUINT64;
      else
        malformed = TRUE;
    }
  if (malformed)
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                   _("PRAGMA %s takes a number of bytes, in digits (such as PRAGMA %s = "
                   "4194304 for 4 MiB)"),
                   QSTORE_WRITE_OUT_STEP_SETTING, QSTORE_WRITE_OUT_STEP_SETTING);
      return FALSE;
    }

  if (statement->value != NULL &&
      !qstore_coordinator_set_write_out_step (db->coordinator, n_bytes, error))
    {
      g_prefix_error (error, "PRAGMA %s = %s: ", QSTORE_WRITE_OUT_STEP_SETTING, statement->value);
      return FALSE;
    }
  return qstore_router_setting_result (db, "write_out_step", statement->value == NULL,
                                       (gint64) qstore_coordinator_get_write_out_step (db->coordinator),
                                       result, error);
}
