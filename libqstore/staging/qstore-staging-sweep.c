/* qstore-staging-sweep.c: dropping what interrupted imports left
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <unistd.h>

#include <json-glib/json-glib.h>

#include "qstore-coordinator.h"
#include "qstore-database-private.h"
#include "qstore-error.h"
#include "qstore-i18n-private.h"
#include "qstore-staged-replace-private.h"
#include "qstore-staging-marker-private.h"
#include "qstore-staging-sweep.h"

static gboolean
check_free (QStoreDatabase  *db,
            const char      *what,
            GError         **error)
{
  if (!qstore_database_check_open (db, error) || !qstore_database_check_writable (db, error))
    return FALSE;
  if (qstore_staging_marker_get_importer (db) != NULL)
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_BUSY,
                   _("An import is running on this database: %s once it has finished"), what);
      return FALSE;
    }
  if (!sqlite3_get_autocommit (db->db) || qstore_coordinator_in_transaction (db->coordinator))
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_BUSY,
                   _("A transaction is open on this database: commit or roll it back, then %s"),
                   what);
      return FALSE;
    }
  return TRUE;
}

static gboolean
drop_run (QStoreDatabase    *db,
          QStoreStagingRun  *run,
          GError           **error)
{
  return qstore_staged_drop (db, qstore_staging_run_get_id (run),
                             qstore_staging_run_get_target (run),
                             qstore_staging_run_get_tables (run), error);
}

/**
 * qstore_staging_sweep:
 * @database: a #QStoreDatabase opened for writing
 * @error: return location for a #GError
 *
 * Drops the staging tables of every droppable run (see
 * qstore_staging_leftovers_new()), judged now, and their marker rows. The
 * runs are read and judged again here, so a run that wrote a heartbeat
 * since they were listed is kept. Only staging tables are dropped: the
 * table a run was replacing is never touched, whatever its marker row
 * says. Resumable runs and runs with a fresh heartbeat stay.
 *
 * Returns: (transfer container) (element-type QStoreStagingRun): the runs
 *   swept, or %NULL on error (the runs swept before it stay swept)
 */
GPtrArray *
qstore_staging_sweep (QStoreDatabase  *database,
                      GError         **error)
{
  g_autoptr(QStoreStagingLeftovers) leftovers = NULL;
  g_autoptr(GPtrArray) droppable = NULL;

  g_return_val_if_fail (QSTORE_IS_DATABASE (database), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!check_free (database, "sweep", error) ||
      !(leftovers = qstore_staging_leftovers_read (database, error)))
    return NULL;

  droppable = qstore_staging_leftovers_get_droppable (leftovers);
  for (guint i = 0; i < droppable->len; i++)
    if (!drop_run (database, droppable->pdata[i], error))
      return NULL;
  return g_steal_pointer (&droppable);
}

/* Whether the process that wrote @run's marker row runs on this machine,
 * by the pid and host its details record. */
static gboolean
writer_alive (QStoreStagingRun *run,
              gint64           *pid)
{
  g_autoptr(JsonParser) parser = json_parser_new ();
  const char *details = qstore_staging_run_get_details (run);
  JsonObject *object;
  JsonNode *root;

  *pid = 0;
  if (details == NULL || !json_parser_load_from_data (parser, details, -1, NULL) ||
      !(root = json_parser_get_root (parser)) || !JSON_NODE_HOLDS_OBJECT (root))
    return FALSE;
  object = json_node_get_object (root);
  *pid = json_object_get_int_member_with_default (object, "pid", 0);
  if (*pid <= 0 || *pid == getpid () ||
      g_strcmp0 (json_object_get_string_member_with_default (object, "host", ""),
                 g_get_host_name ()) != 0)
    return FALSE;
  return kill ((pid_t) *pid, 0) == 0 || errno == EPERM;
}

/**
 * qstore_staging_discard:
 * @database: a #QStoreDatabase opened for writing
 * @target: the table whose interrupted import to discard
 * @error: return location for a #GError
 *
 * Drops the staging tables and the marker row of the run recorded for
 * @target, droppable or not: how an operator gives up a resumable run.
 * @target itself is not touched. A run whose heartbeat is fresh while the
 * process that wrote it still runs on this machine is refused with
 * %QSTORE_ERROR_BUSY: it may be loading right now.
 *
 * Returns: %TRUE when the run was discarded; %FALSE with
 *   %QSTORE_ERROR_NOT_FOUND when none is recorded for @target
 */
gboolean
qstore_staging_discard (QStoreDatabase  *database,
                        const char      *target,
                        GError         **error)
{
  g_autoptr(QStoreStagingLeftovers) leftovers = NULL;
  g_autoptr(GError) local_error = NULL;
  gint64 pid;

  g_return_val_if_fail (QSTORE_IS_DATABASE (database), FALSE);
  g_return_val_if_fail (target != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (!check_free (database, "discard the import", error) ||
      !(leftovers = qstore_staging_leftovers_read (database, error)))
    return FALSE;

  for (guint i = 0; i < g_list_model_get_n_items (G_LIST_MODEL (leftovers)); i++)
    {
      g_autoptr(QStoreStagingRun) run = g_list_model_get_item (G_LIST_MODEL (leftovers), i);
      gint64 age = qstore_staging_run_get_heartbeat_age (run);

      if (g_ascii_strcasecmp (qstore_staging_run_get_target (run), target) != 0)
        continue;
      if (age >= 0 && age <= qstore_staging_leftovers_get_stale_after_ms (leftovers) &&
          writer_alive (run, &pid))
        {
          g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_BUSY,
                       "The import into “%s” may be loading right now (process %" G_GINT64_FORMAT
                       " runs, heartbeat %" G_GINT64_FORMAT " s ago): stop it first",
                       target, pid, age / 1000);
          return FALSE;
        }
      return drop_run (database, run, error);
    }
  g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_NOT_FOUND,
               _("No import into table “%s” is recorded: nothing to discard"), target);
  return FALSE;
}
