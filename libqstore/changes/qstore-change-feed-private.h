/* qstore-change-feed-private.h: feeds as their sources drive them
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <gio/gio.h>

#include "qstore-change-feed.h"
#include "qstore-kv.h"
#include "qstore-provider.h"

G_BEGIN_DECLS

/* A feed is told of change sets in one of three ways: as a database's
 * subscriber (qstore-change-hub.c, through the functions below), by
 * reading a change log as a follower (qstore-change-follow.c), or by
 * following a `qstore serve` on D-Bus (qstore-change-bus.c). The files
 * share the instance struct. */

struct _QStoreChangeFeed
{
  GObject          parent_instance;

  guint64          position;      /* the last transaction accounted for */
  gint64           last_time;     /* the commit time of the last set told, or 0 */
  gboolean         closed;

  /* A subscriber: the database's hub, which it leaves at close. */
  gpointer         hub;
  void           (*unsubscribe) (gpointer          hub,
                                 QStoreChangeFeed *feed);
  gboolean         skip_open;     /* joined a transaction whose changes are not kept */

  /* A follower */
  QStoreProvider  *provider;
  QStoreKV        *catalog;
  QStoreKV        *stats;
  QStoreKV        *log;
  char            *log_id;        /* the id of the log read last, NULL before */
  gboolean         log_off;       /* found without its log, and that was told */
  gboolean         polling;       /* reading the log now */
  GPtrArray       *monitors;      /* GFileMonitor */
  char            *watched_prefix;  /* file names that matter in a watched directory */
  GSource         *timer;         /* the fallback poll */
  GSource         *wakeup;        /* a poll soon, after a file changed */
  gint64           settle_until;  /* polls follow a change until then (monotonic) */
  GSource         *commits;       /* the provider's commit watch, instead of the above */
  gint64           commits_lost_at;  /* when the watch lost its connection (monotonic), or 0 */
  GMainContext    *context;

  /* A follower of a server on the bus (qstore-change-bus.c) */
  struct _QStoreBusFollow *bus;
};

QStoreChangeFeed *qstore_change_feed_new_subscriber (gpointer           hub,
                                                     void             (*unsubscribe) (gpointer          hub,
                                                                                      QStoreChangeFeed *feed),
                                                     guint64            position,
                                                     gboolean           skip_open);
/* What the database's hub tells each subscriber when a transaction ends
 * (see QStoreCoordinatorLog's ended). */
void              qstore_change_feed_deliver        (QStoreChangeFeed  *self,
                                                     guint64            tx_id,
                                                     QStoreChangeSet   *change_set);
/* The database went away: no more change sets. */
void              qstore_change_feed_detach         (QStoreChangeFeed  *self);

/* Telling, for both kinds: @down_for_ms is -1 when unknown. */
void              qstore_change_feed_emit_changes   (QStoreChangeFeed  *self,
                                                     QStoreChangeSet   *change_set);
void              qstore_change_feed_emit_gap       (QStoreChangeFeed  *self,
                                                     const char        *reason,
                                                     gint64             down_for_ms);
void              qstore_change_feed_emit_failed    (QStoreChangeFeed  *self,
                                                     const GError      *error);

/* The follower's part of finalize and close (qstore-change-follow.c). */
void              qstore_change_feed_stop_following (QStoreChangeFeed  *self);
/* The bus follower's (qstore-change-bus.c): unsubscribes. */
void              qstore_change_feed_stop_bus       (QStoreChangeFeed  *self);
void              qstore_change_feed_free_bus       (QStoreChangeFeed  *self);
/* Its properties changed (qstore-change-feed.c owns the pspecs). */
void              qstore_change_feed_notify_owner   (QStoreChangeFeed  *self);

G_END_DECLS
