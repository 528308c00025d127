/* qstore-change-follow.c: a change feed that follows a store's change log
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "qstore-change-feed-private.h"
#include "qstore-change-log-private.h"
#include "qstore-codec.h"
#include "qstore-coordinator-private.h"
#include "qstore-error.h"
#include "qstore-i18n-private.h"
#include "qstore-snapshot.h"

/* A follower reads the log through a provider opened read-only, which
 * another process may write meanwhile. It tells only what is committed:
 * entries up to the last transaction id, read in one snapshot
 * with it when the provider has snapshots. (Without an atomic batch the
 * writer stores a commit's entry before its id: an entry beyond the id
 * may still be undone.) */

/* Files changing wake the follower at once; this poll is the bound when
 * no change is seen (a file system that does not report, a provider
 * without files). */
#define FALLBACK_POLL_MS 1000

/* A writer's first write of a commit is seen before the commit is, and
 * the file monitor then holds back the events that follow for up to
 * 100 ms (GLib rests a watch whose events only repeat a change it is
 * still reporting). So after a change the follower keeps polling, every
 * SETTLE_INTERVAL_MS, until SETTLE_MS passed without one: a store that
 * is written is followed closely, one that is not is not polled. */
#define SETTLE_MS          150
#define SETTLE_INTERVAL_MS 2

typedef struct
{
  QStoreSnapshot *snapshot;   /* NULL: read the stores directly */
} Reading;

static void
reading_clear (Reading *r)
{
  g_clear_object (&r->snapshot);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Reading, reading_clear)

static GBytes *
reading_get (Reading       *r,
             QStoreKV      *store,
             GBytes        *key,
             GError       **error)
{
  gsize len;
  const guint8 *data = g_bytes_get_data (key, &len);

  if (r->snapshot != NULL)
    return qstore_snapshot_get (r->snapshot, store, data, len, error);
  return qstore_kv_get (store, data, len, error);
}

static QStoreIter *
reading_iterate (Reading             *r,
                 QStoreKV            *store,
                 const QStoreBounds  *bounds,
                 GError             **error)
{
  if (r->snapshot != NULL)
    return qstore_snapshot_iterate (r->snapshot, store, bounds, error);
  return qstore_kv_iterate (store, bounds, error);
}

/* A catalog meta entry as text: TRUE with *@text NULL when it is absent. */
static gboolean
read_meta (QStoreChangeFeed  *self,
           Reading           *r,
           const char        *name,
           char             **text,
           GError           **error)
{
  g_autoptr(GBytes) key = qstore_catalog_key_for_meta (name);
  g_autoptr(GBytes) value = NULL;
  GError *local_error = NULL;

  *text = NULL;
  value = reading_get (r, self->catalog, key, &local_error);
  if (local_error != NULL)
    {
      g_propagate_error (error, local_error);
      return FALSE;
    }
  if (value != NULL)
    *text = g_strndup (g_bytes_get_data (value, NULL), g_bytes_get_size (value));
  return TRUE;
}

/* The setting, or FALSE with @error unset when there is none. */
static gboolean
read_setting (QStoreChangeFeed        *self,
              Reading                 *r,
              QStoreChangeLogSetting  *setting,
              GError                 **error)
{
  g_autofree char *text = NULL;

  if (!read_meta (self, r, QSTORE_CHANGE_LOG_META, &text, error) || text == NULL)
    return FALSE;
  return qstore_change_log_setting_parse (text, strlen (text),
                                          qstore_provider_get_location (self->provider),
                                          setting, error);
}

/* The last transaction id: what is committed. */
static gboolean
read_committed (QStoreChangeFeed  *self,
                Reading           *r,
                guint64           *tx_id,
                GError           **error)
{
  return qstore_coordinator_read_last_tx_id (self->provider, self->catalog, self->stats,
                                             r->snapshot, tx_id, error);
}

static gboolean
begin_reading (QStoreChangeFeed  *self,
               Reading           *r,
               GError           **error)
{
  if (qstore_provider_get_capabilities (self->provider) & QSTORE_CAPABILITY_SNAPSHOTS)
    return (r->snapshot = qstore_provider_begin_snapshot (self->provider, error)) != NULL;
  return TRUE;
}

static gint64
down_for (QStoreChangeFeed *self,
          QStoreChangeSet  *next)
{
  if (self->last_time == 0 || next == NULL)
    return -1;
  return MAX (0, (qstore_change_set_get_time (next) - self->last_time) / 1000);
}

/* What the feed missed before @tx_id, the first entry it can read now. */
static char *
missed_reason (QStoreChangeFeed             *self,
               const QStoreChangeLogSetting *setting,
               guint64                       tx_id,
               gboolean                      first)
{
  if (first && self->position + 1 < setting->since)
    return g_strdup_printf ("the change log begins at transaction %" G_GUINT64_FORMAT
                            ", after transaction %" G_GUINT64_FORMAT " this feed had reached",
                            setting->since, self->position);
  if (first)
    return g_strdup_printf ("transactions %" G_GUINT64_FORMAT " to %" G_GUINT64_FORMAT
                            " are no longer in the change log, which keeps the last %"
                            G_GUINT64_FORMAT, self->position + 1, tx_id - 1, setting->retain);
  return g_strdup_printf ("transactions %" G_GUINT64_FORMAT " to %" G_GUINT64_FORMAT
                          " are missing from the change log", self->position + 1, tx_id - 1);
}

static void
tell_gap (QStoreChangeFeed *self,
          const char       *reason,
          gint64            down_for_ms,
          guint64           position)
{
  if (self->position != position)
    {
      self->position = position;
      g_object_notify (G_OBJECT (self), "position");
    }
  qstore_change_feed_emit_gap (self, reason, down_for_ms);
}

static gboolean poll_log (QStoreChangeFeed  *self,
                          GError           **error);

/**
 * qstore_change_feed_poll:
 * @self: a #QStoreChangeFeed
 * @error: return location for a #GError
 *
 * Tells what the change log holds beyond the feed's position: a follower
 * reads every committed entry after [method@ChangeFeed.get_position] and
 * emits [signal@ChangeFeed::changes] for each, and
 * [signal@ChangeFeed::gap] where it cannot have all of them: when it is
 * behind what the log keeps, when the log was turned off or made anew
 * since the last poll, and for an entry that is damaged (skipped, the
 * message names its transaction). After a gap it carries on from the
 * oldest entry it can read.
 *
 * A subscriber, and a bus follower, are told as commits happen:
 * polling them does nothing.
 *
 * Returns: %TRUE when the log could be read (a gap is no error), %FALSE
 *   with the provider's error, %QSTORE_ERROR_CORRUPT when the log's
 *   setting or the store's transaction id is damaged, or
 *   %QSTORE_ERROR_CLOSED after [method@ChangeFeed.close]
 */
gboolean
qstore_change_feed_poll (QStoreChangeFeed  *self,
                         GError           **error)
{
  gboolean ok;

  g_return_val_if_fail (QSTORE_IS_CHANGE_FEED (self), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (self->closed)
    {
      g_set_error_literal (error, QSTORE_ERROR, QSTORE_ERROR_CLOSED,
                           _("The change feed was closed: make a new one to go on"));
      return FALSE;
    }
  if (self->provider == NULL || self->polling)
    return TRUE;

  /* A handler may close the feed, or drop it: the store is let go of
   * once the reading is over. */
  g_object_ref (self);
  self->polling = TRUE;
  ok = poll_log (self, error);
  self->polling = FALSE;
  if (self->closed)
    qstore_change_feed_stop_following (self);
  g_object_unref (self);
  return ok;
}

static gboolean
poll_log (QStoreChangeFeed  *self,
          GError           **error)
{
  g_auto(Reading) r = { NULL };
  g_auto(QStoreChangeLogSetting) setting = { 0 };
  g_autoptr(QStoreBounds) bounds = NULL;
  g_autoptr(QStoreIter) iter = NULL;
  g_autoptr(GError) local_error = NULL;
  guint8 key[QSTORE_CHANGE_LOG_KEY_LEN];
  gboolean recreated, first = TRUE;
  guint64 committed;

  if (!begin_reading (self, &r, error))
    return FALSE;

  if (!read_setting (self, &r, &setting, &local_error))
    {
      if (local_error != NULL)
        {
          g_propagate_error (error, g_steal_pointer (&local_error));
          return FALSE;
        }
      if (!self->log_off)
        {
          self->log_off = TRUE;
          qstore_change_feed_emit_gap (self, "the change log was turned off", -1);
        }
      return TRUE;
    }

  /* Off and on again, or another id: a new log, whose transactions need
   * not follow those of the old one (the store itself may be new). */
  recreated = self->log_off || g_strcmp0 (self->log_id, setting.id) != 0;
  if (recreated)
    {
      g_clear_object (&self->log);
      self->log = qstore_provider_open_store (self->provider, QSTORE_CHANGE_LOG_STORE_NAME, error);
      if (self->log == NULL)
        return FALSE;
    }
  if (!read_committed (self, &r, &committed, error))
    return FALSE;
  if (committed == 0)
    return TRUE;

  bounds = qstore_bounds_new ();
  if (!recreated)
    {
      qstore_change_log_key (self->position + 1, key);
      qstore_bounds_set_gte (bounds, key, sizeof key);
    }
  qstore_change_log_key (committed, key);
  qstore_bounds_set_lte (bounds, key, sizeof key);
  if (!(iter = reading_iterate (&r, self->log, bounds, error)))
    return FALSE;

  while (!self->closed && qstore_iter_next (iter, &local_error))
    {
      g_autoptr(GBytes) entry = NULL;
      g_autoptr(QStoreChangeSet) change_set = NULL;
      g_autoptr(GError) damage = NULL;
      gsize key_len, len;
      const guint8 *entry_key = qstore_iter_peek_key (iter, &key_len);
      const guint8 *data;
      gboolean complete = TRUE;
      guint64 tx_id;

      if (!qstore_change_log_key_parse (entry_key, key_len, &tx_id))
        {
          g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_CORRUPT,
                       _("The change log of the store at “%s” holds a key that is no "
                       "transaction id: it is damaged; turn the log off and on again"),
                       qstore_provider_get_location (self->provider));
          return FALSE;
        }
      data = qstore_iter_peek_value (iter, &len);
      entry = g_bytes_new (data, len);
      change_set = qstore_change_log_decode (tx_id, entry, &complete, &damage);

      if (first && recreated && self->log_id != NULL)
        {
          g_autofree char *reason =
            g_strdup_printf ("the change log was %s: it now begins at transaction %"
                             G_GUINT64_FORMAT, self->log_off ? "turned off and on again"
                                                             : "made anew", tx_id);

          tell_gap (self, reason, down_for (self, change_set), tx_id - 1);
        }
      else if (first && self->position == 0)
        {
          /* Without a position, the feed starts at the oldest entry. */
          self->position = tx_id - 1;
        }
      else if (tx_id > self->position + 1)
        {
          g_autofree char *reason = missed_reason (self, &setting, tx_id, first);

          tell_gap (self, reason, down_for (self, change_set), tx_id - 1);
        }
      if (first)
        {
          g_free (self->log_id);
          self->log_id = g_strdup (setting.id);
          self->log_off = FALSE;
          first = FALSE;
        }

      if (change_set == NULL)
        tell_gap (self, damage->message, -1, tx_id);
      else if (!complete)
        {
          g_autofree char *reason =
            g_strdup_printf ("the changes of transaction %" G_GUINT64_FORMAT
                             " were not all kept in the change log", tx_id);

          tell_gap (self, reason, -1, tx_id);
        }
      else
        qstore_change_feed_emit_changes (self, change_set);
    }
  if (local_error != NULL)
    {
      g_propagate_error (error, g_steal_pointer (&local_error));
      return FALSE;
    }
  return TRUE;
}

/* Following */

static void schedule_poll (QStoreChangeFeed *self,
                           guint             delay_ms);

static gboolean
poll_now (gpointer data)
{
  QStoreChangeFeed *self = data;
  g_autoptr(GError) error = NULL;

  g_clear_pointer (&self->wakeup, g_source_unref);
  /* Without the commit watch, the server is likely away: the watch
   * polls when it is back. */
  if (self->commits_lost_at > 0)
    return G_SOURCE_REMOVE;
  if (!qstore_change_feed_poll (self, &error) && !self->closed)
    qstore_change_feed_emit_failed (self, error);
  if (!self->closed && g_get_monotonic_time () < self->settle_until)
    schedule_poll (self, SETTLE_INTERVAL_MS);
  return G_SOURCE_REMOVE;
}

static void
schedule_poll (QStoreChangeFeed *self,
               guint             delay_ms)
{
  if (self->wakeup != NULL || self->closed)
    return;
  self->wakeup = delay_ms == 0 ? g_idle_source_new () : g_timeout_source_new (delay_ms);
  g_source_set_priority (self->wakeup, G_PRIORITY_DEFAULT);
  g_source_set_callback (self->wakeup, poll_now, self, NULL);
  g_source_attach (self->wakeup, self->context);
}

static gboolean
poll_fallback (gpointer data)
{
  QStoreChangeFeed *self = data;
  g_autoptr(GError) error = NULL;

  if (!qstore_change_feed_poll (self, &error) && !self->closed)
    qstore_change_feed_emit_failed (self, error);
  return G_SOURCE_CONTINUE;
}

static void
wake_up (QStoreChangeFeed *self)
{
  /* Events come in bursts (a commit writes several pages): one poll
   * answers them all, and the settling polls after it whatever their
   * events were late for. */
  self->settle_until = g_get_monotonic_time () + SETTLE_MS * G_TIME_SPAN_MILLISECOND;
  if (self->wakeup != NULL && g_source_get_ready_time (self->wakeup) > 0)
    {
      /* A settling poll waits: poll now instead. */
      g_source_destroy (self->wakeup);
      g_clear_pointer (&self->wakeup, g_source_unref);
    }
  schedule_poll (self, 0);
}

static void
on_file_changed (GFileMonitor      *monitor,
                 GFile             *file,
                 GFile             *other,
                 GFileMonitorEvent  event,
                 gpointer           data)
{
  QStoreChangeFeed *self = data;

  if (self->watched_prefix != NULL)
    {
      g_autofree char *name = g_file_get_basename (file);

      if (name == NULL || !g_str_has_prefix (name, self->watched_prefix))
        return;
    }
  wake_up (self);
}

static gboolean
watch (QStoreChangeFeed  *self,
       GError           **error)
{
  const char *location = qstore_provider_get_location (self->provider);
  g_autoptr(GFile) file = NULL;
  g_autoptr(GFile) directory = NULL;
  GFileMonitor *monitor;

  if (location == NULL || location[0] == '\0')
    return TRUE;

  /* The provider's files: an LMDB environment is a directory; an SQLite
   * database is a file, written with its -wal and -shm beside it. */
  file = g_file_new_for_path (location);
  if (g_file_query_file_type (file, G_FILE_QUERY_INFO_NONE, NULL) == G_FILE_TYPE_DIRECTORY)
    directory = g_object_ref (file);
  else
    {
      directory = g_file_get_parent (file);
      self->watched_prefix = g_file_get_basename (file);
    }
  if (directory == NULL)
    return TRUE;

  monitor = g_file_monitor_directory (directory, G_FILE_MONITOR_NONE, NULL, error);
  if (monitor == NULL)
    {
      g_prefix_error (error, _("Watching the files of the store at “%s”: "), location);
      return FALSE;
    }
  /* Every write matters, not one a second. */
  g_file_monitor_set_rate_limit (monitor, 0);
  g_signal_connect (monitor, "changed", G_CALLBACK (on_file_changed), self);
  g_ptr_array_add (self->monitors, monitor);
  return TRUE;
}

/* The provider tells commits as they happen (a PostgreSQL server's
 * LISTEN/NOTIFY): each wakes one poll, and nothing else polls. */
static gboolean
on_commit (QStoreCommitEvent  event,
           guint64            tx_id,
           gpointer           data)
{
  QStoreChangeFeed *self = data;

  switch (event)
    {
    case QSTORE_COMMIT_EVENT_COMMITTED:
      /* @tx_id is a hint: whoever sent it, the log says what is there. */
      schedule_poll (self, 0);
      break;
    case QSTORE_COMMIT_EVENT_LOST:
      self->commits_lost_at = g_get_monotonic_time ();
      break;
    case QSTORE_COMMIT_EVENT_RESUMED:
      {
        gint64 down_ms = self->commits_lost_at > 0
                         ? (g_get_monotonic_time () - self->commits_lost_at) / 1000 : -1;
        g_autofree char *reason =
          g_strdup_printf ("the connection that tells this follower of commits was lost: "
                           "commits were not told while it was down; the follower reads "
                           "the change log again after transaction %" G_GUINT64_FORMAT,
                           self->position);

        /* A handler may close the feed, or drop it. */
        g_object_ref (self);
        self->commits_lost_at = 0;
        qstore_change_feed_emit_gap (self, reason, down_ms);
        schedule_poll (self, 0);
        g_object_unref (self);
      }
      break;
    }
  return G_SOURCE_CONTINUE;
}

/* Whether the provider tells commits: then the follower waits on it. */
static gboolean
watch_commits (QStoreChangeFeed  *self,
               gboolean          *watching,
               GError           **error)
{
  GError *local_error = NULL;

  *watching = FALSE;
  self->commits = qstore_provider_watch_commits (self->provider, &local_error);
  if (self->commits == NULL)
    {
      if (local_error == NULL)
        return TRUE;
      g_propagate_error (error, local_error);
      return FALSE;
    }
  g_source_set_callback (self->commits, G_SOURCE_FUNC (on_commit), self, NULL);
  g_source_attach (self->commits, self->context);
  *watching = TRUE;
  return TRUE;
}

/**
 * qstore_change_feed_follow:
 * @self: a #QStoreChangeFeed
 * @error: return location for a #GError
 *
 * Makes a follower poll by itself, from the main context that is the
 * thread's default now. When the provider tells commits as they happen
 * ([method@Provider.watch_commits]: a PostgreSQL server does), the
 * follower polls once at once and then once per commit it is told of,
 * and at no other time. When the watch loses its connection, the
 * follower tells a [signal@ChangeFeed::gap] as the watch connects
 * again (commits made meanwhile were not told), then reads the log
 * again from its position, as usual. Otherwise it polls at once
 * whenever the store's files change (a #GFileMonitor tells it), every
 * 2 ms while they keep changing and for 150 ms after (the monitor
 * reports a file that keeps changing late), and once a second
 * otherwise, in case a change goes unseen. A store nobody writes is
 * then polled once a second. Errors are told by
 * [signal@ChangeFeed::failed]. Following until [method@ChangeFeed.close].
 *
 * A subscriber, and a bus follower, are told as commits happen: this
 * does nothing for them.
 *
 * Returns: %TRUE when the feed follows, %FALSE when the store's files
 *   cannot be watched or the provider's commit watch cannot start
 */
gboolean
qstore_change_feed_follow (QStoreChangeFeed  *self,
                           GError           **error)
{
  gboolean watching;

  g_return_val_if_fail (QSTORE_IS_CHANGE_FEED (self), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (self->closed)
    {
      g_set_error_literal (error, QSTORE_ERROR, QSTORE_ERROR_CLOSED,
                           _("The change feed was closed: make a new one to go on"));
      return FALSE;
    }
  if (self->provider == NULL || self->context != NULL)
    return TRUE;

  self->context = g_main_context_ref_thread_default ();
  if (!watch_commits (self, &watching, error))
    {
      qstore_change_feed_stop_following (self);
      return FALSE;
    }
  if (watching)
    {
      /* Listening before this poll: a commit after it is told. */
      schedule_poll (self, 0);
      return TRUE;
    }

  self->monitors = g_ptr_array_new_with_free_func (g_object_unref);
  if (!watch (self, error))
    {
      qstore_change_feed_stop_following (self);
      return FALSE;
    }
  self->timer = g_timeout_source_new (FALLBACK_POLL_MS);
  g_source_set_callback (self->timer, poll_fallback, self, NULL);
  g_source_attach (self->timer, self->context);
  wake_up (self);
  return TRUE;
}

void
qstore_change_feed_stop_following (QStoreChangeFeed *self)
{
  if (self->monitors != NULL)
    {
      for (guint i = 0; i < self->monitors->len; i++)
        {
          g_file_monitor_cancel (self->monitors->pdata[i]);
          g_signal_handlers_disconnect_by_data (self->monitors->pdata[i], self);
        }
      g_clear_pointer (&self->monitors, g_ptr_array_unref);
    }
  if (self->commits != NULL)
    {
      g_source_destroy (self->commits);
      g_clear_pointer (&self->commits, g_source_unref);
    }
  if (self->timer != NULL)
    {
      g_source_destroy (self->timer);
      g_clear_pointer (&self->timer, g_source_unref);
    }
  if (self->wakeup != NULL)
    {
      g_source_destroy (self->wakeup);
      g_clear_pointer (&self->wakeup, g_source_unref);
    }
  g_clear_pointer (&self->context, g_main_context_unref);
  g_clear_pointer (&self->watched_prefix, g_free);
  g_clear_object (&self->log);
  g_clear_object (&self->catalog);
  g_clear_object (&self->stats);
  if (self->provider != NULL)
    qstore_provider_close_all (self->provider);
  g_clear_object (&self->provider);
  g_clear_pointer (&self->log_id, g_free);
}

/**
 * qstore_change_feed_new_follower:
 * @uri: the store, as for qstore_provider_new_for_uri(); it is opened
 *   read-only
 * @since: the last transaction already seen, or 0 to start at the oldest
 *   entry the log keeps
 * @error: return location for a #GError
 *
 * Makes a feed that reads the durable change log of the store at @uri
 * (see [class@ChangeFeed]), from the transaction after @since. It opens
 * the store read-only, so it may follow a store another process writes
 * (with a provider that has %QSTORE_CAPABILITY_MULTI_PROCESS). Nothing is
 * read until [method@ChangeFeed.poll] or [method@ChangeFeed.follow].
 *
 * A @since that the log no longer keeps (or never kept) is told as a gap
 * at the first poll.
 *
 * Returns: (transfer full): the feed, or %NULL with
 *   %QSTORE_ERROR_NOT_FOUND when the store keeps no change log,
 *   %QSTORE_ERROR_CORRUPT when its setting is damaged, or the provider's
 *   error
 */
QStoreChangeFeed *
qstore_change_feed_new_follower (const char  *uri,
                                 guint64      since,
                                 GError     **error)
{
  g_autoptr(QStoreChangeFeed) self = NULL;
  g_auto(Reading) r = { NULL };
  g_auto(QStoreChangeLogSetting) setting = { 0 };
  GError *local_error = NULL;

  g_return_val_if_fail (uri != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  self = g_object_new (QSTORE_TYPE_CHANGE_FEED, NULL);
  self->position = since;
  if (!(self->provider = qstore_provider_new_for_uri (uri, QSTORE_OPEN_READ_ONLY, error)) ||
      !(self->catalog = qstore_provider_get_catalog_store (self->provider, error)) ||
      !(self->stats = qstore_provider_get_stats_store (self->provider, error)) ||
      !(self->log = qstore_provider_open_store (self->provider, QSTORE_CHANGE_LOG_STORE_NAME,
                                                error)) ||
      !begin_reading (self, &r, error))
    return NULL;

  if (!read_setting (self, &r, &setting, &local_error))
    {
      if (local_error != NULL)
        g_propagate_error (error, local_error);
      else
        g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_NOT_FOUND,
                     "The store at “%s” keeps no change log: turn it on with PRAGMA "
                     QSTORE_CHANGE_LOG_SETTING " = N, N the number of transactions to keep",
                     qstore_provider_get_location (self->provider));
      return NULL;
    }
  self->log_id = g_strdup (setting.id);
  return g_steal_pointer (&self);
}
