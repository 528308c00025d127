/* qstore-change-feed.h: committed change sets, in order, with gaps told
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(QSTORE_INSIDE) && !defined(QSTORE_COMPILATION)
# error "Only <qstore.h> can be included directly."
#endif

#include <gio/gio.h>

#include "qstore-change-set.h"
#include "qstore-database.h"

G_BEGIN_DECLS

/**
 * QSTORE_CHANGE_FEED_MAX_SUBSCRIBERS:
 *
 * How many change feeds one database hands out at a time (see
 * [method@Database.subscribe_changes]).
 */
#define QSTORE_CHANGE_FEED_MAX_SUBSCRIBERS 512

/**
 * QSTORE_SERVER_NAME_PREFIX:
 *
 * What the bus name of a `qstore serve` begins with: the server of id
 * `shop` is `org.qstore.Server.shop`.
 */
#define QSTORE_SERVER_NAME_PREFIX "org.qstore.Server."

/**
 * QSTORE_SERVER_PATH:
 *
 * The object path at which a `qstore serve` exports its interface.
 */
#define QSTORE_SERVER_PATH "/org/qstore/Server"

/**
 * QSTORE_SERVER_INTERFACE:
 *
 * The D-Bus interface of `qstore serve` that this version of qstore
 * speaks (described in `org.qstore.Server1.xml`).
 */
#define QSTORE_SERVER_INTERFACE "org.qstore.Server1"

/**
 * QStoreBusFollowFlags:
 * @QSTORE_BUS_FOLLOW_NONE: the server must be on the bus when the feed
 *   is made
 * @QSTORE_BUS_FOLLOW_WAIT: a server that is not on the bus yet is waited
 *   for: the feed is made at once and follows the server when it starts
 *
 * How [ctor@ChangeFeed.new_for_bus_sync] and
 * [func@ChangeFeed.new_for_bus] treat a server that is not running.
 */
typedef enum /*< flags,underscore_name=qstore_bus_follow_flags >*/
{
  QSTORE_BUS_FOLLOW_NONE = 0,
  QSTORE_BUS_FOLLOW_WAIT = 1 << 0,
} QStoreBusFollowFlags;

#define QSTORE_TYPE_CHANGE_FEED (qstore_change_feed_get_type ())

QSTORE_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (QStoreChangeFeed, qstore_change_feed, QSTORE, CHANGE_FEED, GObject)

QSTORE_AVAILABLE_IN_ALL
QStoreChangeFeed *qstore_database_subscribe_changes (QStoreDatabase    *self,
                                                     GError           **error);
QSTORE_AVAILABLE_IN_ALL
QStoreChangeFeed *qstore_change_feed_new_follower   (const char        *uri,
                                                     guint64            since,
                                                     GError           **error);
QSTORE_AVAILABLE_IN_ALL
void              qstore_change_feed_new_for_bus    (GDBusConnection      *connection,
                                                     const char           *server,
                                                     QStoreBusFollowFlags  flags,
                                                     GCancellable         *cancellable,
                                                     GAsyncReadyCallback   callback,
                                                     gpointer              user_data);
QSTORE_AVAILABLE_IN_ALL
QStoreChangeFeed *qstore_change_feed_new_for_bus_finish (GAsyncResult     *result,
                                                         GError          **error);
QSTORE_AVAILABLE_IN_ALL
QStoreChangeFeed *qstore_change_feed_new_for_bus_sync (GDBusConnection      *connection,
                                                       const char           *server,
                                                       QStoreBusFollowFlags  flags,
                                                       GCancellable         *cancellable,
                                                       GError              **error);
QSTORE_AVAILABLE_IN_ALL
const char       *qstore_change_feed_get_bus_name   (QStoreChangeFeed  *self);
QSTORE_AVAILABLE_IN_ALL
const char       *qstore_change_feed_get_server_owner (QStoreChangeFeed *self);
QSTORE_AVAILABLE_IN_ALL
guint64           qstore_change_feed_get_position   (QStoreChangeFeed  *self);
QSTORE_AVAILABLE_IN_ALL
gboolean          qstore_change_feed_is_follower    (QStoreChangeFeed  *self);
QSTORE_AVAILABLE_IN_ALL
gboolean          qstore_change_feed_poll           (QStoreChangeFeed  *self,
                                                     GError           **error);
QSTORE_AVAILABLE_IN_ALL
gboolean          qstore_change_feed_follow         (QStoreChangeFeed  *self,
                                                     GError           **error);
QSTORE_AVAILABLE_IN_ALL
void              qstore_change_feed_close          (QStoreChangeFeed  *self);

G_END_DECLS
