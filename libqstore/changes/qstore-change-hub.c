/* qstore-change-hub.c: a database's change log and subscribers
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "qstore-change-feed-private.h"
#include "qstore-change-hub-private.h"
#include "qstore-change-log-private.h"
#include "qstore-codec-private.h"
#include "qstore-coordinator-private.h"
#include "qstore-error.h"
#include "qstore-i18n-private.h"

/* One per database, kept as its extension state. It is the coordinator's
 * change log (QStoreCoordinatorLog): at each commit it describes the
 * changed tables and, when the log is on, adds the transaction's entry to
 * the commit, so the entry and the data are stored together; once the
 * transaction is over it tells the change feeds. */
typedef struct
{
  QStoreDatabase        *db;
  QStoreCoordinatorLog   hooks;

  gboolean               on;
  QStoreChangeLogSetting setting;
  QStoreKV              *store;       /* the log, while on */
  GByteArray            *entry;       /* reused for each entry */

  /* QStoreTableSchema (a reference) → its QStoreChangeTable: a schema
   * never changes, DDL makes a new one. Emptied after DDL. */
  GHashTable            *described;

  GPtrArray             *feeds;       /* QStoreChangeFeed, not referenced */
} Hub;

static int hub_key;

#define ENTRY_KEPT_BYTES (64 * 1024)

static Hub *
hub_of (QStoreDatabase *db)
{
  return qstore_database_get_extension_state (db, &hub_key);
}

/* Describing tables */

/* The name the rowid goes by in a table that keeps it apart from its
 * columns: SQLite's first alias no column takes. */
static const char *
rowid_name (QStoreTableSchema *schema)
{
  static const char * const aliases[] = { "rowid", "_rowid_", "oid" };

  for (guint i = 0; i < G_N_ELEMENTS (aliases); i++)
    if (qstore_table_schema_find_column (schema, aliases[i]) < 0)
      return aliases[i];
  return "rowid";
}

static QStoreChangeTable *
describe (Hub                     *self,
          const QStoreChangeTable *table)
{
  QStoreSqlTable *entry = qstore_database_lookup (self->db, table->table);
  QStoreTableSchema *schema;
  QStoreChangeTable *described;
  GStrvBuilder *names;
  guint *key;
  guint n_key, n_columns;

  if (entry == NULL || g_ascii_strcasecmp (entry->schema->schema, table->schema) != 0)
    return NULL;
  schema = entry->schema;
  if ((described = g_hash_table_lookup (self->described, schema)) != NULL)
    return described;

  n_columns = schema->columns->len;
  names = g_strv_builder_new ();
  for (guint i = 0; i < n_columns; i++)
    g_strv_builder_add (names, ((QStoreColumn *) g_ptr_array_index (schema->columns, i))->name);
  if (qstore_table_schema_is_rowid_table (schema))
    {
      n_key = 1;
      key = g_new (guint, 1);
      if (schema->rowid_column >= 0)
        key[0] = (guint) schema->rowid_column;
      else
        {
          key[0] = n_columns;
          g_strv_builder_add (names, rowid_name (schema));
        }
    }
  else
    {
      n_key = schema->pk->len;
      key = g_new (guint, n_key);
      for (guint i = 0; i < n_key; i++)
        key[i] = g_array_index (schema->pk, QStoreKeyPart, i).column;
    }

  described = qstore_change_table_new_described (table->schema, table->table,
                                                 g_strv_builder_end (names), key, n_key);
  g_strv_builder_unref (names);
  g_hash_table_insert (self->described, qstore_table_schema_ref (schema), described);
  return described;
}

static guint
row_width (GBytes *row)
{
  QStoreRowReader reader;
  gsize len;
  const guint8 *data;
  guint n_values = 0;

  if (row == NULL)
    return 0;
  data = g_bytes_get_data (row, &len);
  if (!qstore_row_reader_init (&reader, data, len, &n_values, NULL))
    return G_MAXUINT;
  return n_values;
}

/* Gives each change the description of its table. A change whose rows do
 * not have the table's values now (written before a schema change in the
 * same transaction) keeps none: it says nothing rather than wrong names. */
static void
describe_changes (Hub    *self,
                  GArray *changes)
{
  QStoreChangeTable *last = NULL, *last_described = NULL;

  for (guint i = 0; i < changes->len; i++)
    {
      QStoreChange *change = &g_array_index (changes, QStoreChange, i);
      guint width;

      if (change->table != last)
        {
          last = change->table;
          last_described = last->names != NULL ? NULL : describe (self, last);
        }
      if (last_described == NULL)
        continue;
      width = g_strv_length (last_described->names);
      if ((change->old_row != NULL && row_width (change->old_row) != width) ||
          (change->new_row != NULL && row_width (change->new_row) != width))
        continue;
      qstore_change_table_unref (change->table);
      change->table = qstore_change_table_ref (last_described);
    }
}

/* The coordinator's change log */

static gboolean
hub_recording (gpointer data)
{
  Hub *self = data;

  return self->on || self->feeds->len > 0;
}

static gboolean
hub_committing (gpointer   data,
                guint64    tx_id,
                gint64     time,
                GArray    *changes,
                GError   **error)
{
  Hub *self = data;
  QStoreCoordinator *coordinator = self->db->coordinator;
  guint8 key[QSTORE_CHANGE_LOG_KEY_LEN];

  if (changes != NULL && changes->len > 0 && (self->on || self->feeds->len > 0))
    describe_changes (self, changes);
  if (!self->on)
    return TRUE;

  g_byte_array_set_size (self->entry, 0);
  qstore_change_log_encode (self->entry, tx_id, time, changes);
  qstore_change_log_key (tx_id, key);
  qstore_coordinator_put (coordinator, self->store, key, sizeof key,
                          self->entry->data, self->entry->len);
  /* Kept for the next small entry, not the memory of a large one. */
  if (self->entry->len > ENTRY_KEPT_BYTES)
    {
      g_byte_array_unref (self->entry);
      self->entry = g_byte_array_new ();
    }

  /* Every commit writes an entry, so one falls out with each. */
  if (tx_id > self->setting.retain)
    {
      qstore_change_log_key (tx_id - self->setting.retain, key);
      qstore_coordinator_delete (coordinator, self->store, key, sizeof key);
    }
  return TRUE;
}

/* Bookkeeping rows leave the set; what is left is a new set. */
static QStoreChangeSet *
without_bookkeeping (QStoreChangeSet *change_set)
{
  GArray *changes = qstore_change_set_get_changes (change_set);
  gboolean any = FALSE;
  GArray *kept;

  for (guint i = 0; !any && i < changes->len; i++)
    any = qstore_change_log_is_bookkeeping (g_array_index (changes, QStoreChange, i).table->table);
  if (!any)
    return g_object_ref (change_set);

  kept = g_array_new (FALSE, FALSE, sizeof (QStoreChange));
  g_array_set_clear_func (kept, qstore_change_clear);
  for (guint i = 0; i < changes->len; i++)
    {
      const QStoreChange *change = &g_array_index (changes, QStoreChange, i);
      QStoreChange copy;

      if (qstore_change_log_is_bookkeeping (change->table->table))
        continue;
      copy.table = qstore_change_table_ref (change->table);
      copy.op = change->op;
      copy.old_row = change->old_row != NULL ? g_bytes_ref (change->old_row) : NULL;
      copy.new_row = change->new_row != NULL ? g_bytes_ref (change->new_row) : NULL;
      g_array_append_val (kept, copy);
    }
  return qstore_change_set_new_take (qstore_change_set_get_tx_id (change_set),
                                     qstore_change_set_get_time (change_set), kept);
}

static void
hub_ended (gpointer         data,
           guint64          tx_id,
           QStoreChangeSet *change_set)
{
  Hub *self = data;
  g_autoptr(GPtrArray) feeds = NULL;
  g_autoptr(QStoreChangeSet) told = NULL;

  if (self->feeds->len == 0)
    return;

  if (change_set != NULL)
    told = without_bookkeeping (change_set);
  /* A handler may subscribe or close feeds. */
  feeds = g_ptr_array_new_full (self->feeds->len, g_object_unref);
  for (guint i = 0; i < self->feeds->len; i++)
    g_ptr_array_add (feeds, g_object_ref (self->feeds->pdata[i]));
  for (guint i = 0; i < feeds->len; i++)
    qstore_change_feed_deliver (feeds->pdata[i], tx_id, told);
}

/* Subscribers */

static void
unsubscribe (gpointer          data,
             QStoreChangeFeed *feed)
{
  Hub *self = data;

  g_ptr_array_remove_fast (self->feeds, feed);
}

/**
 * qstore_database_subscribe_changes:
 * @self: a #QStoreDatabase
 * @error: return location for a #GError
 *
 * Subscribes to what the database commits: the feed emits
 * [signal@ChangeFeed::changes] for each committed transaction, in commit
 * order, once its data is durable, until it is closed
 * ([method@ChangeFeed.close]) or the database is.
 *
 * A feed subscribed while a transaction is open gets that transaction
 * whole when its changes are being kept (the change log or another feed
 * keeps them), else it starts with the next one; either way its
 * [method@ChangeFeed.get_position] is the transaction before the first it
 * will be told of, so it never misses one silently.
 *
 * A database hands out at most %QSTORE_CHANGE_FEED_MAX_SUBSCRIBERS feeds
 * at a time.
 *
 * Returns: (transfer full): the feed, or %NULL with %QSTORE_ERROR_BUSY
 *   when the database has as many feeds as it hands out, or
 *   %QSTORE_ERROR_CLOSED when it is closed
 */
QStoreChangeFeed *
qstore_database_subscribe_changes (QStoreDatabase  *self,
                                   GError         **error)
{
  Hub *hub;
  QStoreChangeFeed *feed;
  gboolean skip_open;

  g_return_val_if_fail (QSTORE_IS_DATABASE (self), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!qstore_database_check_open (self, error))
    return NULL;
  hub = hub_of (self);
  g_assert (hub != NULL);

  /* Every commit is handed to each feed in turn before the committing
   * call returns, so the count bounds what a commit waits on; and a
   * program that subscribes in a loop and never closes is stopped at a
   * few hundred feeds, with this message, rather than slowing every
   * commit until memory runs out. A process holds one feed per live
   * query or cache: far fewer. An unbounded count is where such a leak
   * would hide. */
  if (hub->feeds->len >= QSTORE_CHANGE_FEED_MAX_SUBSCRIBERS)
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_BUSY,
                   _("The database at “%s” already hands out %u change feeds, as many as it "
                   "will: close the feeds no longer listened to (qstore_change_feed_close())"),
                   qstore_provider_get_location (self->provider),
                   QSTORE_CHANGE_FEED_MAX_SUBSCRIBERS);
      return NULL;
    }

  skip_open = qstore_coordinator_in_transaction (self->coordinator) &&
              !qstore_coordinator_get_recording (self->coordinator);
  feed = qstore_change_feed_new_subscriber (hub, unsubscribe,
                                            qstore_coordinator_get_last_tx_id (self->coordinator),
                                            skip_open);
  g_ptr_array_add (hub->feeds, feed);
  return feed;
}

/* The log setting */

static gboolean
read_setting (Hub      *self,
              GError  **error)
{
  g_autoptr(GBytes) key = qstore_catalog_key_for_meta (QSTORE_CHANGE_LOG_META);
  g_autoptr(GBytes) value = NULL;
  g_autoptr(GError) local_error = NULL;
  gsize key_len, len;
  const guint8 *key_data = g_bytes_get_data (key, &key_len);
  const char *text;

  value = qstore_kv_get (self->db->catalog, key_data, key_len, &local_error);
  if (local_error != NULL)
    {
      g_propagate_prefixed_error (error, g_steal_pointer (&local_error),
                                  _("Reading the change log setting: "));
      return FALSE;
    }
  if (value == NULL)
    return TRUE;

  text = g_bytes_get_data (value, &len);
  if (!qstore_change_log_setting_parse (text, len,
                                        qstore_provider_get_location (self->db->provider),
                                        &self->setting, &local_error))
    {
      /* One damaged setting must not keep the database shut: it runs
       * without a log, and followers report the damage. */
      g_warning ("%s", local_error->message);
      return TRUE;
    }
  self->on = TRUE;
  return TRUE;
}

static gboolean
open_log_store (Hub      *self,
                GError  **error)
{
  g_clear_object (&self->store);
  self->store = qstore_provider_open_store (self->db->provider, QSTORE_CHANGE_LOG_STORE_NAME,
                                            error);
  return self->store != NULL;
}

static void
set_on (Hub      *self,
        gboolean  on)
{
  self->on = on;
  /* The log and the data it describes must not disagree after a crash,
   * even where commits go store by store. */
  qstore_coordinator_set_undo_journal (self->db->coordinator, on);
}

static void
put_setting (Hub *self)
{
  g_autoptr(GBytes) key = qstore_catalog_key_for_meta (QSTORE_CHANGE_LOG_META);
  g_autofree char *json = self->on ? qstore_change_log_setting_json (&self->setting) : NULL;
  gsize key_len;
  const guint8 *key_data = g_bytes_get_data (key, &key_len);

  if (json != NULL)
    qstore_coordinator_put (self->db->coordinator, self->db->catalog, key_data, key_len,
                            (const guint8 *) json, strlen (json));
  else
    qstore_coordinator_delete (self->db->coordinator, self->db->catalog, key_data, key_len);
}

/* Removes the entries the log no longer keeps once transaction @tx_id
 * commits, in the open transaction. */
static gboolean
prune (Hub      *self,
       guint64   tx_id,
       GError  **error)
{
  g_autoptr(QStoreBounds) bounds = qstore_bounds_new ();
  g_autoptr(QStoreIter) iter = NULL;
  GError *local_error = NULL;
  guint8 key[QSTORE_CHANGE_LOG_KEY_LEN];

  if (tx_id <= self->setting.retain)
    return TRUE;
  qstore_change_log_key (tx_id - self->setting.retain + 1, key);
  qstore_bounds_set_lt (bounds, key, sizeof key);
  if (!(iter = qstore_coordinator_iterate (self->db->coordinator, self->store, bounds, error)))
    return FALSE;
  while (qstore_iter_next (iter, &local_error))
    {
      gsize len;
      const guint8 *old = qstore_iter_peek_key (iter, &len);

      qstore_coordinator_delete (self->db->coordinator, self->store, old, len);
    }
  if (local_error != NULL)
    {
      g_propagate_error (error, local_error);
      return FALSE;
    }
  return TRUE;
}

/* Commits the setting change: turning the log on writes its first entry
 * with it, turning it off drops the log's store with it. */
static gboolean
change_setting (Hub      *self,
                guint64   retain,
                GError  **error)
{
  QStoreCoordinator *coordinator = self->db->coordinator;
  guint64 next = qstore_coordinator_get_last_tx_id (coordinator) + 1;
  g_auto(QStoreChangeLogSetting) before = { 0 };
  gboolean was_on = self->on;
  gboolean ok;

  before.retain = self->setting.retain;
  before.id = g_strdup (self->setting.id);
  before.since = self->setting.since;

  if (retain > 0 && !was_on)
    {
      if (!open_log_store (self, error))
        return FALSE;
      g_free (self->setting.id);
      self->setting.id = g_uuid_string_random ();
      self->setting.since = next;
    }
  self->setting.retain = retain;
  set_on (self, retain > 0);

  qstore_coordinator_begin (coordinator);
  put_setting (self);
  if (retain > 0)
    {
      ok = prune (self, next, error) && qstore_coordinator_commit (coordinator, error);
    }
  else
    {
      const char * const drop[] = { QSTORE_CHANGE_LOG_STORE_NAME, NULL };

      ok = qstore_coordinator_commit_restructure (coordinator, drop, error);
    }

  if (!ok)
    {
      qstore_coordinator_rollback (coordinator);
      qstore_change_log_setting_clear (&self->setting);
      self->setting = before;
      memset (&before, 0, sizeof before);
      set_on (self, was_on);
      return FALSE;
    }
  if (retain == 0)
    {
      g_clear_object (&self->store);
      qstore_change_log_setting_clear (&self->setting);
    }
  return TRUE;
}

gboolean
qstore_change_hub_log_setting (QStoreDatabase   *db,
                               QStoreStatement  *statement,
                               QStoreResult    **result,
                               GError          **error)
{
  Hub *self = hub_of (db);
  guint64 retain = 0;

  if (statement->malformed ||
      (statement->value != NULL &&
       !g_ascii_string_to_unsigned (statement->value, 10, 0, G_MAXINT64, &retain, NULL)))
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                   "PRAGMA " QSTORE_CHANGE_LOG_SETTING " takes the number of transactions "
                   "the change log keeps, or 0 to turn it off (such as PRAGMA "
                   QSTORE_CHANGE_LOG_SETTING " = 10000)");
      return FALSE;
    }

  if (statement->value != NULL)
    {
      if (!qstore_database_check_writable (db, error))
        return FALSE;
      if (!sqlite3_get_autocommit (db->db) || qstore_coordinator_in_transaction (db->coordinator))
        {
          g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_BUSY,
                       "PRAGMA " QSTORE_CHANGE_LOG_SETTING " cannot change inside a "
                       "transaction, whose changes would be half logged: COMMIT or "
                       "ROLLBACK first");
          return FALSE;
        }
      if (retain != (self->on ? self->setting.retain : 0) && !change_setting (self, retain, error))
        return FALSE;
    }
  return qstore_router_setting_result (db, "change_log", statement->value == NULL,
                                       self->on ? (gint64) self->setting.retain : 0,
                                       result, error);
}

/* The extension */

static void
hub_free (gpointer data)
{
  Hub *self = data;

  qstore_coordinator_set_log (self->db->coordinator, NULL, NULL);
  qstore_coordinator_set_undo_journal (self->db->coordinator, FALSE);
  for (guint i = 0; i < self->feeds->len; i++)
    qstore_change_feed_detach (self->feeds->pdata[i]);
  g_ptr_array_unref (self->feeds);
  g_hash_table_unref (self->described);
  g_byte_array_unref (self->entry);
  g_clear_object (&self->store);
  qstore_change_log_setting_clear (&self->setting);
  g_free (self);
}

static gboolean
attach (QStoreDatabase  *db,
        GError         **error)
{
  Hub *self = g_new0 (Hub, 1);

  self->db = db;
  self->feeds = g_ptr_array_new ();
  self->described = g_hash_table_new_full (g_direct_hash, g_direct_equal,
                                           (GDestroyNotify) qstore_table_schema_unref,
                                           (GDestroyNotify) qstore_change_table_unref);
  self->entry = g_byte_array_new ();
  self->hooks.recording = hub_recording;
  self->hooks.committing = hub_committing;
  self->hooks.ended = hub_ended;
  qstore_database_add_extension_state (db, &hub_key, self, hub_free);
  qstore_coordinator_set_log (db->coordinator, &self->hooks, self);

  if (!read_setting (self, error))
    return FALSE;
  if (self->on)
    {
      if (!open_log_store (self, error))
        return FALSE;
      set_on (self, TRUE);
    }
  return TRUE;
}

static void
after_ddl (QStoreDatabase *db)
{
  g_hash_table_remove_all (hub_of (db)->described);
}

const QStoreDatabaseExtension qstore_changes_extension = {
  .attach = attach,
  .after_ddl = after_ddl,
};
