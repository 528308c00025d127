/* qstore-change-feed.h: committed change sets, in order, with gaps told
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(QSTORE_INSIDE) && !defined(QSTORE_COMPILATION)
# error "Only <qstore.h> can be included directly."
#endif

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
