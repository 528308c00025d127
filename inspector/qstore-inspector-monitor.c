/* qstore-inspector-monitor.c: notices when another process writes a store
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "qstore-inspector-names.h"
#include "qstore-inspector-monitor.h"

/* A commit reaches a store's files: LMDB writes data.mdb; SQLite in WAL
 * mode appends to the -wal file and, at a checkpoint, writes the database
 * file. The monitor watches the store's folder for changes to those files
 * only: lock.mdb and -shm change whenever anyone reads (this inspector
 * too), and a reader may create an empty -wal, so reacting to them would
 * make every refresh trigger the next. Bursts of changes are gathered:
 * ::changed is emitted at most once per interval, at its end, so a writer
 * that commits all the time causes one refresh per interval. */

#define DEFAULT_INTERVAL_MS 500

struct _QStoreInspectorMonitor
{
  GObject       parent_instance;

  char         *uri;
  GFileMonitor *monitor;
  char        **watched;      /* basenames whose changes count */
  guint         interval_ms;
  guint         timeout;
  guint         n_changes;
};

enum
{
  CHANGED,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

G_DEFINE_FINAL_TYPE (QStoreInspectorMonitor, qstore_inspector_monitor, G_TYPE_OBJECT)

static gboolean
interval_done_cb (gpointer data)
{
  QStoreInspectorMonitor *self = data;

  self->timeout = 0;
  self->n_changes++;
  g_signal_emit (self, signals[CHANGED], 0);
  return G_SOURCE_REMOVE;
}

static void
file_changed_cb (GFileMonitor           *monitor,
                 GFile                  *file,
                 GFile                  *other_file,
                 GFileMonitorEvent       event,
                 QStoreInspectorMonitor *self)
{
  g_autofree char *name = NULL;

  /* Contents only: a file created or removed is a reader's doing as
   * often as a writer's; a writer's commit then changes its contents. */
  if (event != G_FILE_MONITOR_EVENT_CHANGED && event != G_FILE_MONITOR_EVENT_CHANGES_DONE_HINT)
    return;
  name = g_file_get_basename (file);
  if (!g_strv_contains ((const char * const *) self->watched, name))
    return;
  if (self->timeout == 0)
    self->timeout = g_timeout_add (self->interval_ms, interval_done_cb, self);
}

static void
qstore_inspector_monitor_dispose (GObject *object)
{
  QStoreInspectorMonitor *self = QSTORE_INSPECTOR_MONITOR (object);

  g_clear_handle_id (&self->timeout, g_source_remove);
  if (self->monitor != NULL)
    {
      g_signal_handlers_disconnect_by_data (self->monitor, self);
      g_file_monitor_cancel (self->monitor);
    }
  g_clear_object (&self->monitor);

  G_OBJECT_CLASS (qstore_inspector_monitor_parent_class)->dispose (object);
}

static void
qstore_inspector_monitor_finalize (GObject *object)
{
  QStoreInspectorMonitor *self = QSTORE_INSPECTOR_MONITOR (object);

  g_free (self->uri);
  g_strfreev (self->watched);

  G_OBJECT_CLASS (qstore_inspector_monitor_parent_class)->finalize (object);
}

static void
qstore_inspector_monitor_class_init (QStoreInspectorMonitorClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = qstore_inspector_monitor_dispose;
  object_class->finalize = qstore_inspector_monitor_finalize;

  /**
   * QStoreInspectorMonitor::changed:
   *
   * Another process wrote the store; emitted at most once per interval.
   */
  signals[CHANGED] =
    g_signal_new ("changed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL, G_TYPE_NONE, 0);
}

static void
qstore_inspector_monitor_init (QStoreInspectorMonitor *self)
{
  self->interval_ms = DEFAULT_INTERVAL_MS;
}

/**
 * qstore_inspector_monitor_new:
 * @uri: a store URI
 * @error: return location for a #GError
 *
 * Returns: (transfer full) (nullable): a monitor of the store's files, or
 *   %NULL with @error unset for a store that has none (`memory:`), or
 *   with @error set when they cannot be watched
 */
QStoreInspectorMonitor *
qstore_inspector_monitor_new (const char  *uri,
                              GError     **error)
{
  g_autoptr(QStoreInspectorMonitor) self = NULL;
  g_autofree char *location = qstore_inspector_location_of (uri);
  g_autoptr(GFile) folder = NULL;

  g_return_val_if_fail (uri != NULL, NULL);

  self = g_object_new (QSTORE_INSPECTOR_TYPE_MONITOR, NULL);
  self->uri = g_strdup (uri);

  if (g_str_has_prefix (uri, "lmdb:"))
    {
      const char *names[] = { "data.mdb", NULL };

      folder = g_file_new_for_path (location);
      self->watched = g_strdupv ((char **) names);
    }
  else if (g_str_has_prefix (uri, "sqlite:"))
    {
      g_autoptr(GFile) file = g_file_new_for_path (location);
      g_autofree char *name = g_file_get_basename (file);
      g_autofree char *wal = g_strconcat (name, "-wal", NULL);
      g_autofree char *journal = g_strconcat (name, "-journal", NULL);
      const char *names[] = { name, wal, journal, NULL };

      folder = g_file_get_parent (file);
      self->watched = g_strdupv ((char **) names);
    }
  else
    return NULL;

  if (folder == NULL ||
      !(self->monitor = g_file_monitor_directory (folder, G_FILE_MONITOR_NONE, NULL, error)))
    return NULL;
  /* The interval gathers bursts; the monitor's own limit need not. */
  g_file_monitor_set_rate_limit (self->monitor, 100);
  g_signal_connect (self->monitor, "changed", G_CALLBACK (file_changed_cb), self);
  return g_steal_pointer (&self);
}

const char *
qstore_inspector_monitor_get_uri (QStoreInspectorMonitor *self)
{
  g_return_val_if_fail (QSTORE_INSPECTOR_IS_MONITOR (self), NULL);
  return self->uri;
}

/* At most one ::changed per @ms milliseconds. */
void
qstore_inspector_monitor_set_interval (QStoreInspectorMonitor *self,
                                       guint                   ms)
{
  g_return_if_fail (QSTORE_INSPECTOR_IS_MONITOR (self));
  self->interval_ms = MAX (ms, 1);
}

/* How many times ::changed was emitted. */
guint
qstore_inspector_monitor_get_n_changes (QStoreInspectorMonitor *self)
{
  g_return_val_if_fail (QSTORE_INSPECTOR_IS_MONITOR (self), 0);
  return self->n_changes;
}
