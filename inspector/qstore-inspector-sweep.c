/* qstore-inspector-sweep.c: the one write the inspector makes
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <glib/gi18n.h>

#include "qstore-inspector-sweep.h"

/* Everywhere else the inspector opens stores read-only. A sweep the
 * person confirmed opens the store for writing for that one operation,
 * in a worker thread, and closes it again. It drops exactly the runs the
 * person was shown: when the store's runs changed in between (an import
 * beat again, or another became droppable), nothing is dropped and the
 * person looks again. */

/* How long the inspector's own readers may take to let go of the store
 * (a row count or a page of rows being read) before a writable open in
 * this process can succeed. */
#define RELEASE_WAIT_MS 2000
#define RELEASE_STEP_MS 100

/**
 * qstore_inspector_staging_run_key:
 * @run: a staged import
 *
 * Returns: (transfer full): what tells @run apart from any other run,
 *   also from a later one into the same table
 */
char *
qstore_inspector_staging_run_key (QStoreStagingRun *run)
{
  g_autofree char *tables = g_strjoinv (",", (char **) qstore_staging_run_get_tables (run));

  return g_strdup_printf ("%" G_GINT64_FORMAT "/%" G_GINT64_FORMAT "/%s/%s",
                          qstore_staging_run_get_id (run), qstore_staging_run_get_started (run),
                          qstore_staging_run_get_target (run), tables);
}

typedef struct
{
  char  *uri;
  GStrv  confirmed;
} SweepData;

static void
sweep_data_free (SweepData *data)
{
  g_free (data->uri);
  g_strfreev (data->confirmed);
  g_free (data);
}

static gboolean
same_runs (GPtrArray          *runs,
           const char * const *keys)
{
  if (runs->len != g_strv_length ((char **) keys))
    return FALSE;
  for (guint i = 0; i < runs->len; i++)
    {
      g_autofree char *key = qstore_inspector_staging_run_key (runs->pdata[i]);

      if (!g_strv_contains (keys, key))
        return FALSE;
    }
  return TRUE;
}

static GPtrArray *
sweep (SweepData  *data,
       GError    **error)
{
  g_autoptr(QStoreProvider) probe = NULL;
  g_autoptr(QStoreDatabase) database = NULL;
  g_autoptr(QStoreStagingLeftovers) leftovers = NULL;
  g_autoptr(GPtrArray) droppable = NULL;
  g_autoptr(GPtrArray) swept = NULL;
  GError *local_error = NULL;

  /* A writable open creates a store that is not there: one that vanished
   * since it was read must not come back empty. */
  if (!(probe = qstore_provider_new_for_uri (data->uri, QSTORE_OPEN_READ_ONLY, error)))
    return NULL;
  g_clear_object (&probe);

  for (gint64 start = g_get_monotonic_time (); ; )
    {
      database = qstore_database_open (data->uri, QSTORE_OPEN_NONE, &local_error);
      if (database != NULL ||
          !g_error_matches (local_error, QSTORE_ERROR, QSTORE_ERROR_BUSY) ||
          g_get_monotonic_time () - start >= RELEASE_WAIT_MS * 1000)
        break;
      g_clear_error (&local_error);
      g_usleep (RELEASE_STEP_MS * 1000);
    }
  if (database == NULL)
    {
      g_propagate_error (error, local_error);
      return NULL;
    }

  if (!(leftovers = qstore_staging_leftovers_read (database, error)))
    return NULL;
  droppable = qstore_staging_leftovers_get_droppable (leftovers);
  if (!same_runs (droppable, (const char * const *) data->confirmed))
    {
      qstore_database_close (database, NULL);
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_FAILED,
                           _("The interrupted imports changed since the page was read, so nothing "
                             "was dropped. Look at them again, then sweep."));
      return NULL;
    }

  if (!(swept = qstore_staging_sweep (database, &local_error)))
    {
      qstore_database_close (database, NULL);
      g_propagate_error (error, local_error);
      return NULL;
    }
  if (!qstore_database_close (database, error))
    return NULL;
  return g_steal_pointer (&swept);
}

static void
sweep_thread (GTask        *task,
              gpointer      source_object,
              gpointer      task_data,
              GCancellable *cancellable)
{
  GError *error = NULL;
  GPtrArray *swept = sweep (task_data, &error);

  if (swept == NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, swept, (GDestroyNotify) g_ptr_array_unref);
}

/**
 * qstore_inspector_sweep_async:
 * @uri: the store's URI
 * @confirmed: the keys (qstore_inspector_staging_run_key()) of the
 *   droppable runs the person confirmed dropping
 * @cancellable: (nullable): a #GCancellable; a sweep that started is not
 *   stopped half-way
 * @callback: called when the store is closed again
 * @user_data: for @callback
 *
 * Opens the store for writing, drops the staging tables of the droppable
 * runs when they are exactly @confirmed (see qstore_staging_sweep()), and
 * closes it. The caller must hold no read-only handle on the store in
 * this process: LMDB opens a store once per process.
 */
void
qstore_inspector_sweep_async (const char          *uri,
                              const char * const  *confirmed,
                              GCancellable        *cancellable,
                              GAsyncReadyCallback  callback,
                              gpointer             user_data)
{
  g_autoptr(GTask) task = NULL;
  SweepData *data;

  g_return_if_fail (uri != NULL);
  g_return_if_fail (confirmed != NULL);

  data = g_new0 (SweepData, 1);
  data->uri = g_strdup (uri);
  data->confirmed = g_strdupv ((char **) confirmed);

  task = g_task_new (NULL, cancellable, callback, user_data);
  g_task_set_source_tag (task, qstore_inspector_sweep_async);
  g_task_set_task_data (task, data, (GDestroyNotify) sweep_data_free);
  g_task_run_in_thread (task, sweep_thread);
}

/* Returns: (transfer container) (element-type QStoreStagingRun): the runs
 *   whose staging tables were dropped */
GPtrArray *
qstore_inspector_sweep_finish (GAsyncResult  *result,
                               GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, NULL), NULL);
  return g_task_propagate_pointer (G_TASK (result), error);
}
