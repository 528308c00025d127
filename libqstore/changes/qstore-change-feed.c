/* qstore-change-feed.c: committed change sets, in order, with gaps told
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "qstore-change-feed-private.h"

/**
 * QStoreChangeFeed:
 *
 * Every committed [class@ChangeSet] of a database, in commit order, each
 * once: [signal@ChangeFeed::changes]. When the feed learns that it
 * cannot have heard of everything, it says so with
 * [signal@ChangeFeed::gap] instead of going on silently.
 *
 * A gap is not a list of what was missed, which is gone: it tells the
 * listener to derive again whatever it keeps from the database (re-run
 * its queries, rebuild its cache), after which the changes that follow
 * keep it current. That is the whole recovery, and it is always safe.
 *
 * There are three kinds of feed.
 *
 * - A subscriber, from [method@Database.subscribe_changes], hears of the
 *   commits of that database handle, in the same process, once their
 *   data is durable. It never has a gap: nothing stands between it and
 *   the commits. One that subscribes while a transaction is open gets
 *   that transaction whole when its changes are being kept (another
 *   subscriber or the change log keeps them), else it starts with the
 *   next transaction; [method@ChangeFeed.get_position] says where it
 *   starts either way.
 * - A follower, from [ctor@ChangeFeed.new_follower], reads the durable
 *   change log of a store (see `PRAGMA qstore.change_log`) through a
 *   provider it opens read-only, so it may run in another process than
 *   the one that writes. It reads when asked ([method@ChangeFeed.poll])
 *   or by itself ([method@ChangeFeed.follow]). It has a gap when it
 *   falls behind what the log keeps, when the log is turned off or made
 *   anew, and for an entry of the log that is damaged; then it carries
 *   on from the oldest entry the log has.
 * - A bus follower, from [ctor@ChangeFeed.new_for_bus_sync] or
 *   [func@ChangeFeed.new_for_bus], follows a `qstore serve` on D-Bus
 *   (interface `org.qstore.Server1`): it subscribes to the server and
 *   turns each transaction the server tells into the same change set a
 *   subscriber of that database gets, so Python, JavaScript and other
 *   processes follow a running store without opening it. It has a gap
 *   when the server goes away and comes back (another process owns its
 *   name), when the server says it could not send some signals, when a
 *   transaction id is skipped, and for a signal that is not as
 *   `org.qstore.Server1` describes it. Its change sets carry rows, not
 *   their column names ([method@ChangeSet.get_names] is %NULL): the
 *   server does not send them.
 *
 * Change sets are those of [signal@Coordinator::committed], but for the
 * rows of qstore's own bookkeeping tables (`_qstore_…`, such as the change
 * claims), which a feed leaves out: a transaction that only changed those
 * is told as a change set without changes.
 */

G_DEFINE_FINAL_TYPE (QStoreChangeFeed, qstore_change_feed, G_TYPE_OBJECT)

enum {
  PROP_0,
  PROP_POSITION,
  PROP_BUS_NAME,
  PROP_SERVER_OWNER,
  N_PROPS
};

enum {
  CHANGES,
  GAP,
  FAILED,
  N_SIGNALS
};

static GParamSpec *properties[N_PROPS];
static guint signals[N_SIGNALS];

static void
qstore_change_feed_dispose (GObject *object)
{
  QStoreChangeFeed *self = QSTORE_CHANGE_FEED (object);

  qstore_change_feed_close (self);

  G_OBJECT_CLASS (qstore_change_feed_parent_class)->dispose (object);
}

static void
qstore_change_feed_finalize (GObject *object)
{
  qstore_change_feed_free_bus (QSTORE_CHANGE_FEED (object));

  G_OBJECT_CLASS (qstore_change_feed_parent_class)->finalize (object);
}

static void
qstore_change_feed_get_property (GObject    *object,
                                 guint       prop_id,
                                 GValue     *value,
                                 GParamSpec *pspec)
{
  QStoreChangeFeed *self = QSTORE_CHANGE_FEED (object);

  switch (prop_id)
    {
    case PROP_POSITION:
      g_value_set_uint64 (value, self->position);
      break;

    case PROP_BUS_NAME:
      g_value_set_string (value, qstore_change_feed_get_bus_name (self));
      break;

    case PROP_SERVER_OWNER:
      g_value_set_string (value, qstore_change_feed_get_server_owner (self));
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
qstore_change_feed_class_init (QStoreChangeFeedClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = qstore_change_feed_dispose;
  object_class->finalize = qstore_change_feed_finalize;
  object_class->get_property = qstore_change_feed_get_property;

  /**
   * QStoreChangeFeed:position:
   *
   * The id of the last transaction the feed accounted for: told of it,
   * skipped it as one that was open when it subscribed, or had a gap
   * that ended there. The next change set told has a larger id.
   */
  properties[PROP_POSITION] =
    g_param_spec_uint64 ("position", NULL, NULL,
                         0, G_MAXUINT64, 0,
                         G_PARAM_READABLE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);

  /**
   * QStoreChangeFeed:bus-name:
   *
   * The well-known bus name of the server a bus follower follows, such
   * as `org.qstore.Server.shop`; %NULL for the other kinds of feed.
   */
  properties[PROP_BUS_NAME] =
    g_param_spec_string ("bus-name", NULL, NULL, NULL,
                         G_PARAM_READABLE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);

  /**
   * QStoreChangeFeed:server-owner:
   *
   * The unique bus name of the server process a bus follower follows
   * now: set once the server accepted its subscription, %NULL while no
   * server runs (or the one that runs refused). It changes when the
   * server goes away and when it comes back.
   */
  properties[PROP_SERVER_OWNER] =
    g_param_spec_string ("server-owner", NULL, NULL, NULL,
                         G_PARAM_READABLE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);

  g_object_class_install_properties (object_class, N_PROPS, properties);

  /**
   * QStoreChangeFeed::changes:
   * @self: the feed
   * @change_set: what one transaction changed
   *
   * Emitted for every committed transaction, in commit order: its id is
   * larger than the last one told, and one larger unless
   * [signal@ChangeFeed::gap] came in between. (After a gap, a bus
   * follower goes on from whatever id its server has: a server restarted
   * on a store made anew may count from 1 again.)
   */
  signals[CHANGES] =
    g_signal_new ("changes",
                  G_TYPE_FROM_CLASS (klass),
                  G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL,
                  G_TYPE_NONE, 1, QSTORE_TYPE_CHANGE_SET);

  /**
   * QStoreChangeFeed::gap:
   * @self: the feed
   * @reason: why changes were missed, for a log line
   * @down_for_ms: how long, in milliseconds, the feed was known to miss
   *   commits, or -1 when that is not known
   *
   * Emitted when the feed learns that it missed committed changes.
   * Derive again everything that depends on the database: the change
   * sets that follow are those that come after the gap.
   */
  signals[GAP] =
    g_signal_new ("gap",
                  G_TYPE_FROM_CLASS (klass),
                  G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL,
                  G_TYPE_NONE, 2, G_TYPE_STRING, G_TYPE_INT64);

  /**
   * QStoreChangeFeed::failed:
   * @self: the feed
   * @error: what went wrong
   *
   * Emitted when a follower that follows by itself
   * ([method@ChangeFeed.follow]) cannot read the log. It keeps trying at
   * each change of the store's files and at its fallback poll; close it
   * to stop.
   *
   * A bus follower emits it when a server that (re)appeared on the bus
   * cannot be followed (it refused the subscription, or it speaks
   * another version of the interface; it tries again when the name gets
   * another owner) and when the bus connection closes (it stops then).
   */
  signals[FAILED] =
    g_signal_new ("failed",
                  G_TYPE_FROM_CLASS (klass),
                  G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL,
                  G_TYPE_NONE, 1, G_TYPE_ERROR);
}

static void
qstore_change_feed_init (QStoreChangeFeed *self)
{
}

QStoreChangeFeed *
qstore_change_feed_new_subscriber (gpointer   hub,
                                   void     (*unsubscribe) (gpointer          hub,
                                                            QStoreChangeFeed *feed),
                                   guint64    position,
                                   gboolean   skip_open)
{
  QStoreChangeFeed *self = g_object_new (QSTORE_TYPE_CHANGE_FEED, NULL);

  self->hub = hub;
  self->unsubscribe = unsubscribe;
  self->position = position;
  self->skip_open = skip_open;
  return self;
}

static void
set_position (QStoreChangeFeed *self,
              guint64           position)
{
  if (self->position == position)
    return;
  self->position = position;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_POSITION]);
}

void
qstore_change_feed_emit_changes (QStoreChangeFeed *self,
                                 QStoreChangeSet  *change_set)
{
  set_position (self, qstore_change_set_get_tx_id (change_set));
  self->last_time = qstore_change_set_get_time (change_set);
  g_signal_emit (self, signals[CHANGES], 0, change_set);
}

void
qstore_change_feed_emit_gap (QStoreChangeFeed *self,
                             const char       *reason,
                             gint64            down_for_ms)
{
  g_signal_emit (self, signals[GAP], 0, reason, down_for_ms);
}

void
qstore_change_feed_emit_failed (QStoreChangeFeed *self,
                                const GError     *error)
{
  g_signal_emit (self, signals[FAILED], 0, error);
}

void
qstore_change_feed_deliver (QStoreChangeFeed *self,
                            guint64           tx_id,
                            QStoreChangeSet  *change_set)
{
  gboolean skip_open = self->skip_open;

  if (self->closed)
    return;
  self->skip_open = FALSE;

  /* Ended without a commit, or told before the feed began. */
  if (tx_id == 0 || tx_id <= self->position)
    return;

  if (change_set == NULL)
    {
      g_autofree char *reason = NULL;

      /* The transaction that was open when the feed subscribed, whose
       * changes nobody kept: the feed starts after it. */
      if (skip_open && tx_id == self->position + 1)
        {
          set_position (self, tx_id);
          return;
        }
      reason = g_strdup_printf ("the changes of transaction %" G_GUINT64_FORMAT
                                " were not kept", tx_id);
      set_position (self, tx_id);
      qstore_change_feed_emit_gap (self, reason, -1);
      return;
    }

  if (tx_id > self->position + 1)
    {
      g_autofree char *reason =
        g_strdup_printf ("transactions %" G_GUINT64_FORMAT " to %" G_GUINT64_FORMAT
                         " committed without this feed being told",
                         self->position + 1, tx_id - 1);

      qstore_change_feed_emit_gap (self, reason, -1);
    }
  qstore_change_feed_emit_changes (self, change_set);
}

void
qstore_change_feed_notify_owner (QStoreChangeFeed *self)
{
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_SERVER_OWNER]);
}

void
qstore_change_feed_detach (QStoreChangeFeed *self)
{
  self->hub = NULL;
  self->unsubscribe = NULL;
}

/**
 * qstore_change_feed_get_position:
 * @self: a #QStoreChangeFeed
 *
 * Gets the id of the last transaction the feed accounted for (see
 * [property@ChangeFeed:position]).
 *
 * Returns: the transaction id, 0 before the first
 */
guint64
qstore_change_feed_get_position (QStoreChangeFeed *self)
{
  g_return_val_if_fail (QSTORE_IS_CHANGE_FEED (self), 0);
  return self->position;
}

/**
 * qstore_change_feed_is_follower:
 * @self: a #QStoreChangeFeed
 *
 * Tells a follower of a change log from a database's subscriber (and
 * from a bus follower, which [method@ChangeFeed.get_bus_name] tells).
 *
 * Returns: %TRUE when the feed was made by
 *   [ctor@ChangeFeed.new_follower]
 */
gboolean
qstore_change_feed_is_follower (QStoreChangeFeed *self)
{
  g_return_val_if_fail (QSTORE_IS_CHANGE_FEED (self), FALSE);
  return self->provider != NULL;
}

/**
 * qstore_change_feed_close:
 * @self: a #QStoreChangeFeed
 *
 * Stops the feed: a subscriber leaves its database (which may then hand
 * out another), a follower stops following and lets go of its store, a
 * bus follower unsubscribes from its server. No
 * signal is emitted afterwards. Closing twice is fine; dropping the last
 * reference closes the feed.
 */
void
qstore_change_feed_close (QStoreChangeFeed *self)
{
  g_return_if_fail (QSTORE_IS_CHANGE_FEED (self));

  if (self->closed)
    return;
  self->closed = TRUE;
  if (self->unsubscribe != NULL)
    self->unsubscribe (self->hub, self);
  qstore_change_feed_detach (self);
  if (self->bus != NULL)
    qstore_change_feed_stop_bus (self);
  /* A poll reading now lets go of the store when it is done. */
  if (!self->polling)
    qstore_change_feed_stop_following (self);
}
