/* qstore-unsafe-window.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "qstore-error.h"
#include "qstore-i18n-private.h"
#include "qstore-suid.h"
#include "qstore-unsafe-event-private.h"
#include "qstore-unsafe-window-private.h"

/**
 * QStoreUnsafeWindow:
 *
 * A materialized view fed by events that carry a sortable unique id (see
 * [func@suid_new_for_time]) and may arrive out of order, late, twice, or
 * contradicting each other.
 *
 * A view has two layers. The *safe* layer is written in SUID order by
 * whoever follows the contiguous head of the stream
 * ([method@UnsafeWindow.put_safe_row]). The *unsafe* layer takes each
 * event as soon as it arrives ([method@UnsafeWindow.apply]), ahead of
 * that head, and decides by SUID whether the event's planned writes may
 * still happen: per row the highest SUID wins, a re-delivered event
 * changes nothing, an event the safe layer covers already is refused.
 * Readers see both layers composed
 * ([method@UnsafeWindow.query_composed_page]).
 *
 * Every operation is one transaction of the window's database: every
 * guard is read before the first write, so an operation that is refused
 * leaves nothing of itself behind, on every provider. The one exception
 * is deliberate: an apply asked to record its event's arrival records it
 * even when the apply is refused, because a first arrival behind the safe
 * head means the view may have missed the event, and that must latch
 * (reads then fail with %QSTORE_UNSAFE_WINDOW_ERROR_BEHIND_FRONTIER until
 * the view is rebuilt into a new generation).
 *
 * The window keeps its state in tables of the database named
 * `_qstore_window_<name>_<part>` (rows, safe rows, index entries,
 * receipts, wait receipts, markers, arrivals, kicks, generations and the
 * active generation), created the first time the window is opened; see
 * qstore_unsafe_window_is_internal_table_name().
 *
 * Windows may be used from several threads: their operations take a lock
 * of the database. The database must not be used by anything else at the
 * same time, and must have no transaction open when a window operation
 * starts: each is a transaction of its own.
 */

struct _QStoreUnsafeWindow
{
  GObject                     parent_instance;

  QStoreDatabase             *database;
  char                       *name;
  QStoreUnsafeStore           store;
  GMutex                     *lock;   /* the database's, shared by its windows */

  gboolean                    fast_path;
  guint                       n_fast_applies;
  QStoreUnsafeWindowTestHook  before_writes;
  QStoreUnsafeWindowTestHook  after_commit;
  gpointer                    hook_data;
};

G_DEFINE_FINAL_TYPE (QStoreUnsafeWindow, qstore_unsafe_window, G_TYPE_OBJECT)

enum {
  PROP_0,
  PROP_DATABASE,
  PROP_NAME,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

#define LOCK_KEY "qstore-unsafe-window-lock"
#define MAX_NAME_LENGTH 48

static void
qstore_unsafe_window_finalize (GObject *object)
{
  QStoreUnsafeWindow *self = QSTORE_UNSAFE_WINDOW (object);

  qstore_unsafe_store_clear (&self->store);
  g_free (self->name);
  g_clear_object (&self->database);

  G_OBJECT_CLASS (qstore_unsafe_window_parent_class)->finalize (object);
}

static void
qstore_unsafe_window_get_property (GObject    *object,
                                   guint       prop_id,
                                   GValue     *value,
                                   GParamSpec *pspec)
{
  QStoreUnsafeWindow *self = QSTORE_UNSAFE_WINDOW (object);

  switch (prop_id)
    {
    case PROP_DATABASE:
      g_value_set_object (value, self->database);
      break;
    case PROP_NAME:
      g_value_set_string (value, self->name);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
qstore_unsafe_window_class_init (QStoreUnsafeWindowClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = qstore_unsafe_window_finalize;
  object_class->get_property = qstore_unsafe_window_get_property;

  /**
   * QStoreUnsafeWindow:database:
   *
   * The database holding the window's tables.
   */
  properties[PROP_DATABASE] =
    g_param_spec_object ("database", NULL, NULL, QSTORE_TYPE_DATABASE,
                         G_PARAM_READABLE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);

  /**
   * QStoreUnsafeWindow:name:
   *
   * The window's name, which its table names carry.
   */
  properties[PROP_NAME] =
    g_param_spec_string ("name", NULL, NULL, NULL,
                         G_PARAM_READABLE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);

  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
qstore_unsafe_window_init (QStoreUnsafeWindow *self)
{
  self->fast_path = TRUE;
}

static void
free_lock (gpointer data)
{
  GMutex *lock = data;

  g_mutex_clear (lock);
  g_free (lock);
}

/* One lock per database, made the first time a window of it needs it. */
static GMutex *
database_lock (QStoreDatabase *database)
{
  static GMutex registry;
  GMutex *lock;

  g_mutex_lock (&registry);
  lock = g_object_get_data (G_OBJECT (database), LOCK_KEY);
  if (lock == NULL)
    {
      lock = g_new0 (GMutex, 1);
      g_mutex_init (lock);
      g_object_set_data_full (G_OBJECT (database), LOCK_KEY, lock, free_lock);
    }
  g_mutex_unlock (&registry);
  return lock;
}

static gboolean
check_name (const char  *name,
            GError     **error)
{
  gsize len = strlen (name);

  if (len == 0 || len > MAX_NAME_LENGTH || !g_ascii_islower (name[0]))
    goto invalid;
  for (gsize i = 0; i < len; i++)
    if (!g_ascii_islower (name[i]) && !g_ascii_isdigit (name[i]) && name[i] != '_')
      goto invalid;
  return TRUE;

invalid:
  {
    g_autofree char *shown = g_strescape (name, NULL);

    g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                 _("“%s” cannot name an unsafe window: use 1 to %d lower-case ASCII "
                 "letters, digits and “_”, starting with a letter"), shown, MAX_NAME_LENGTH);
    return FALSE;
  }
}

/**
 * qstore_unsafe_window_new:
 * @database: the database to keep the window in, open for writing
 * @name: the window's name: 1 to 48 lower-case ASCII letters, digits and
 *   `_`, starting with a letter
 * @error: return location for a #GError
 *
 * Opens the unsafe window @name of @database, creating its tables the
 * first time. Opening it again, in this process or after a reopen, finds
 * what it holds.
 *
 * Returns: (transfer full) (nullable): the window, or %NULL with
 *   %QSTORE_ERROR_INVALID_ARGUMENT for a bad name,
 *   %QSTORE_ERROR_UNSUPPORTED when the store's commits are not all or
 *   nothing (a provider opened with `?atomic=0`), %QSTORE_ERROR_EXISTS
 *   when a table of the window's names is not a window table,
 *   %QSTORE_ERROR_BUSY when @database has a transaction open, or an error
 *   creating the tables
 */
QStoreUnsafeWindow *
qstore_unsafe_window_new (QStoreDatabase  *database,
                          const char      *name,
                          GError         **error)
{
  g_autoptr(QStoreUnsafeWindow) self = NULL;
  gboolean ok;

  g_return_val_if_fail (QSTORE_IS_DATABASE (database), NULL);
  g_return_val_if_fail (name != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!check_name (name, error))
    return NULL;
  /* Without one all-or-nothing commit, a crash could keep half of an
   * apply: a receipt without its rows is an event lost for good. */
  if (!(qstore_provider_get_capabilities (qstore_database_get_provider (database)) &
        QSTORE_CAPABILITY_ATOMIC_BATCH))
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_UNSUPPORTED,
                   _("Unsafe window “%s” needs a store whose commits are all or nothing, "
                   "and “%s” withholds its atomic batch: open it without “?atomic=0”"),
                   name, qstore_provider_get_location (qstore_database_get_provider (database)));
      return NULL;
    }

  self = g_object_new (QSTORE_TYPE_UNSAFE_WINDOW, NULL);
  self->database = g_object_ref (database);
  self->name = g_strdup (name);
  self->lock = database_lock (database);
  qstore_unsafe_store_init (&self->store, database, name);

  qstore_unsafe_window_lock (self);
  ok = qstore_unsafe_window_check_idle (self, error) &&
       qstore_unsafe_store_create (&self->store, error);
  qstore_unsafe_window_unlock (self);
  return ok ? g_steal_pointer (&self) : NULL;
}

/**
 * qstore_unsafe_window_get_database:
 * @self: a #QStoreUnsafeWindow
 *
 * Gets the database holding the window.
 *
 * Returns: (transfer none): the database holding the window
 */
QStoreDatabase *
qstore_unsafe_window_get_database (QStoreUnsafeWindow *self)
{
  g_return_val_if_fail (QSTORE_IS_UNSAFE_WINDOW (self), NULL);
  return self->database;
}

/**
 * qstore_unsafe_window_get_name:
 * @self: a #QStoreUnsafeWindow
 *
 * Gets the window's name.
 *
 * Returns: the window's name
 */
const char *
qstore_unsafe_window_get_name (QStoreUnsafeWindow *self)
{
  g_return_val_if_fail (QSTORE_IS_UNSAFE_WINDOW (self), NULL);
  return self->name;
}

/**
 * qstore_unsafe_window_is_internal_table_name:
 * @name: a table name
 *
 * Tells whether @name is the name of a table an unsafe window keeps its
 * state in (`_qstore_window_<window>_<part>`, in any case). Such tables
 * are the window's: listings of a user's tables leave them out and show
 * them as a kind of their own.
 *
 * Returns: %TRUE for a window's table
 */
gboolean
qstore_unsafe_window_is_internal_table_name (const char *name)
{
  g_return_val_if_fail (name != NULL, FALSE);
  return qstore_unsafe_store_is_table_name (name);
}

/* Shared with the other operations' files */

QStoreUnsafeStore *
qstore_unsafe_window_get_store (QStoreUnsafeWindow *self)
{
  return &self->store;
}

void
qstore_unsafe_window_lock (QStoreUnsafeWindow *self)
{
  g_mutex_lock (self->lock);
}

void
qstore_unsafe_window_unlock (QStoreUnsafeWindow *self)
{
  qstore_unsafe_store_forget_tables (&self->store);
  g_mutex_unlock (self->lock);
}

gboolean
qstore_unsafe_window_check_idle (QStoreUnsafeWindow  *self,
                                 GError             **error)
{
  QStoreCoordinator *coordinator = qstore_database_get_coordinator (self->database);

  if (coordinator == NULL)
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_CLOSED,
                   _("Unsafe window “%s”: its database is closed: open it again and "
                   "make a new window"), self->name);
      return FALSE;
    }
  if (qstore_coordinator_in_transaction (coordinator))
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_BUSY,
                   _("Unsafe window “%s”: the database has a transaction open: commit "
                   "or roll it back first, each window operation is a transaction of "
                   "its own"), self->name);
      return FALSE;
    }
  return TRUE;
}

gboolean
qstore_unsafe_window_begin (QStoreUnsafeWindow  *self,
                            GError             **error)
{
  if (!qstore_unsafe_window_check_idle (self, error))
    return FALSE;
  qstore_coordinator_begin (qstore_database_get_coordinator (self->database));
  return TRUE;
}

gboolean
qstore_unsafe_window_commit (QStoreUnsafeWindow  *self,
                             GError             **error)
{
  QStoreCoordinator *coordinator = qstore_database_get_coordinator (self->database);

  if (qstore_coordinator_commit (coordinator, error))
    return TRUE;
  /* A failed commit wrote nothing; make sure the transaction is over. */
  qstore_coordinator_rollback (coordinator);
  g_prefix_error (error, _("Unsafe window “%s”: "), self->name);
  return FALSE;
}

void
qstore_unsafe_window_rollback (QStoreUnsafeWindow *self)
{
  QStoreCoordinator *coordinator = qstore_database_get_coordinator (self->database);

  if (coordinator != NULL)
    qstore_coordinator_rollback (coordinator);
}

gboolean
qstore_unsafe_window_end (QStoreUnsafeWindow  *self,
                          gboolean             ok,
                          gboolean             wrote,
                          GError             **error)
{
  if (ok && wrote)
    return qstore_unsafe_window_commit (self, error);
  qstore_unsafe_window_rollback (self);
  return ok;
}

gboolean
qstore_unsafe_window_get_fast_path (QStoreUnsafeWindow *self)
{
  return self->fast_path;
}

void
qstore_unsafe_window_count_fast_apply (QStoreUnsafeWindow *self)
{
  self->n_fast_applies++;
}

guint
qstore_unsafe_window_get_n_fast_applies (QStoreUnsafeWindow *self)
{
  g_return_val_if_fail (QSTORE_IS_UNSAFE_WINDOW (self), 0);
  return self->n_fast_applies;
}

void
qstore_unsafe_window_run_hook (QStoreUnsafeWindow *self,
                               gboolean            after_commit,
                               QStoreUnsafeEvent  *event)
{
  QStoreUnsafeWindowTestHook hook = after_commit ? self->after_commit : self->before_writes;

  if (G_UNLIKELY (hook != NULL))
    hook (self, event, self->hook_data);
}

void
qstore_unsafe_window_set_test_hooks (QStoreUnsafeWindow         *self,
                                     QStoreUnsafeWindowTestHook  before_writes,
                                     QStoreUnsafeWindowTestHook  after_commit,
                                     gpointer                    data)
{
  g_return_if_fail (QSTORE_IS_UNSAFE_WINDOW (self));

  self->before_writes = before_writes;
  self->after_commit = after_commit;
  self->hook_data = data;
}

void
qstore_unsafe_window_set_fast_path (QStoreUnsafeWindow *self,
                                    gboolean            enabled)
{
  g_return_if_fail (QSTORE_IS_UNSAFE_WINDOW (self));
  self->fast_path = !!enabled;
}

/* Argument checks */

gboolean
qstore_unsafe_window_check_generation (QStoreUnsafeWindow  *self,
                                       gint64               generation,
                                       GError             **error)
{
  if (generation >= 0)
    return TRUE;
  g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
               "Unsafe window “%s”: generation %" G_GINT64_FORMAT " is negative: "
               "generations count from 0", self->name, generation);
  return FALSE;
}

gboolean
qstore_unsafe_window_check_text (QStoreUnsafeWindow  *self,
                                 const char          *text,
                                 const char          *field,
                                 GError             **error)
{
  if (text[0] != '\0' && g_utf8_validate (text, -1, NULL))
    return TRUE;
  g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
               _("Unsafe window “%s”: %s is %s"), self->name, field,
               text[0] == '\0' ? "empty" : "not valid UTF-8");
  return FALSE;
}

gboolean
qstore_unsafe_window_check_suid (QStoreUnsafeWindow  *self,
                                 const char          *suid,
                                 const char          *field,
                                 gboolean             empty_allowed,
                                 GError             **error)
{
  if (empty_allowed && suid[0] == '\0')
    return TRUE;
  if (qstore_suid_validate (suid, field, error))
    return TRUE;
  g_prefix_error (error, _("Unsafe window “%s”: "), self->name);
  return FALSE;
}

/* Arrivals */

static const char *
max_suid (const char *a,
          const char *b)
{
  return qstore_suid_compare (a, b) >= 0 ? a : b;
}

gboolean
qstore_unsafe_window_record_arrival (QStoreUnsafeWindow  *self,
                                     gint64               generation,
                                     const char          *event_id,
                                     const char          *suid,
                                     gboolean             first,
                                     gboolean            *behind_frontier,
                                     GError             **error)
{
  g_auto(QStoreUnsafeArrival) arrival = { 0 };
  gboolean found;
  gboolean behind;
  gboolean changed;

  if (!qstore_unsafe_store_get_arrival (&self->store, generation, &arrival, &found, error))
    return FALSE;
  if (!found)
    {
      arrival.safe_head = g_strdup ("");
      arrival.arrival_watermark = g_strdup (suid);
    }

  /* Only a first arrival can be missed: a re-delivery of an event the
   * window received is a duplicate, whatever the safe head says. */
  behind = first && arrival.safe_head[0] != '\0' &&
           qstore_suid_compare (suid, arrival.safe_head) <= 0;
  changed = !found;

  if (qstore_suid_compare (suid, arrival.arrival_watermark) > 0)
    {
      g_free (arrival.arrival_watermark);
      arrival.arrival_watermark = g_strdup (suid);
      changed = TRUE;
    }
  /* Latched: the first event found behind stays the one reported. */
  if (behind && !arrival.rebuild_required)
    {
      arrival.rebuild_required = TRUE;
      arrival.behind_event_id = g_strdup (event_id);
      arrival.behind_suid = g_strdup (suid);
      changed = TRUE;
    }

  if (behind_frontier != NULL)
    *behind_frontier = behind;
  return !changed ||
         qstore_unsafe_store_put_arrival (&self->store, generation, &arrival, error);
}

gboolean
qstore_unsafe_window_get_fence (QStoreUnsafeWindow  *self,
                                gint64               generation,
                                const char          *delivered,
                                char               **fence,
                                GError             **error)
{
  g_auto(QStoreUnsafeArrival) arrival = { 0 };
  gboolean found;

  if (!qstore_unsafe_store_get_arrival (&self->store, generation, &arrival, &found, error))
    return FALSE;
  *fence = g_strdup (found ? max_suid (delivered, arrival.safe_head) : delivered);
  return TRUE;
}

/**
 * qstore_unsafe_window_observe_arrival:
 * @self: a #QStoreUnsafeWindow
 * @generation: the generation the event arrived for
 * @event_id: the event's identity
 * @suid: the event's sortable unique id
 * @behind_frontier: (out) (optional): whether the arrival latched
 *   rebuild-required
 * @error: return location for a #GError
 *
 * Records that an event arrived, independently of whether it is applied:
 * the generation's arrival watermark rises to @suid. The first arrival of
 * an event (one the window holds no receipt of with this SUID) at or
 * behind the stored safe head means the view may have missed it: the
 * generation latches rebuild-required, and its composed pages fail with
 * %QSTORE_UNSAFE_WINDOW_ERROR_BEHIND_FRONTIER until the view is rebuilt
 * into a new generation.
 *
 * Returns: (skip): %TRUE on success
 */
gboolean
qstore_unsafe_window_observe_arrival (QStoreUnsafeWindow  *self,
                                      gint64               generation,
                                      const char          *event_id,
                                      const char          *suid,
                                      gboolean            *behind_frontier,
                                      GError             **error)
{
  g_auto(QStoreUnsafeReceipt) receipt = { 0 };
  gboolean found = FALSE;
  gboolean behind = FALSE;
  gboolean ok;

  g_return_val_if_fail (QSTORE_IS_UNSAFE_WINDOW (self), FALSE);
  g_return_val_if_fail (event_id != NULL, FALSE);
  g_return_val_if_fail (suid != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (!qstore_unsafe_window_check_generation (self, generation, error) ||
      !qstore_unsafe_window_check_text (self, event_id, "event_id", error) ||
      !qstore_unsafe_window_check_suid (self, suid, "suid", FALSE, error))
    return FALSE;

  qstore_unsafe_window_lock (self);
  ok = qstore_unsafe_window_begin (self, error);
  if (ok)
    {
      ok = qstore_unsafe_store_get_receipt (&self->store, event_id, &receipt, &found, error) &&
           qstore_unsafe_window_record_arrival (self, generation, event_id, suid,
                                                !found || strcmp (receipt.suid, suid) != 0,
                                                &behind, error);
      ok = qstore_unsafe_window_end (self, ok, TRUE, error);
    }
  qstore_unsafe_window_unlock (self);

  if (behind_frontier != NULL)
    *behind_frontier = ok && behind;
  return ok;
}

/* Drops the markers the event of @receipt left in @generation: its
 * receipt lists their keys. */
static gboolean
delete_markers (QStoreUnsafeWindow         *self,
                gint64                      generation,
                const QStoreUnsafeReceipt  *receipt,
                GError                    **error)
{
  g_autoptr(JsonParser) parser = NULL;
  JsonNode *root;
  JsonArray *keys;

  if (receipt->marked_rows == NULL)
    return TRUE;

  parser = json_parser_new_immutable ();
  if (!json_parser_load_from_data (parser, receipt->marked_rows, -1, NULL) ||
      (root = json_parser_get_root (parser)) == NULL || !JSON_NODE_HOLDS_ARRAY (root))
    goto corrupt;
  keys = json_node_get_array (root);
  for (guint i = 0; i < json_array_get_length (keys); i++)
    {
      JsonNode *key = json_array_get_element (keys, i);

      if (!JSON_NODE_HOLDS_VALUE (key) || json_node_get_value_type (key) != G_TYPE_STRING)
        goto corrupt;
      if (!qstore_unsafe_store_delete_marker (&self->store, generation, json_node_get_string (key),
                                              receipt->event_id, error))
        return FALSE;
    }
  return TRUE;

corrupt:
  g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_CORRUPT,
               _("Unsafe window “%s”: the receipt of event “%s” lists its marked rows as "
               "“%s”, not a JSON array of row keys: it was written around the window; "
               "rebuild the view"), self->name, receipt->event_id, receipt->marked_rows);
  return FALSE;
}

/**
 * qstore_unsafe_window_observe_safe_receipt:
 * @self: a #QStoreUnsafeWindow
 * @generation: the generation whose safe layer reached the event
 * @event_id: the event the safe layer applied
 * @suid: its sortable unique id
 * @error: return location for a #GError
 *
 * Tells the window that the safe layer of @generation applied the event:
 * its stored safe head advances to @suid (it never moves back) and the
 * markers the event left are dropped. Only an event the window itself
 * received, with this exact SUID, is observed: that is what proves the
 * unsafe layer and the safe one saw the same event.
 *
 * Returns: %TRUE on success; %FALSE with
 *   %QSTORE_UNSAFE_WINDOW_ERROR_RECEIPT_NOT_FOUND when the window has no
 *   receipt of @event_id, or %QSTORE_UNSAFE_WINDOW_ERROR_SUID_CONTRADICTION
 *   when it has one with another SUID; nothing changes then
 */
gboolean
qstore_unsafe_window_observe_safe_receipt (QStoreUnsafeWindow  *self,
                                           gint64               generation,
                                           const char          *event_id,
                                           const char          *suid,
                                           GError             **error)
{
  g_auto(QStoreUnsafeReceipt) receipt = { 0 };
  g_auto(QStoreUnsafeArrival) arrival = { 0 };
  gboolean found;
  gboolean ok;

  g_return_val_if_fail (QSTORE_IS_UNSAFE_WINDOW (self), FALSE);
  g_return_val_if_fail (event_id != NULL, FALSE);
  g_return_val_if_fail (suid != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (!qstore_unsafe_window_check_generation (self, generation, error) ||
      !qstore_unsafe_window_check_text (self, event_id, "event_id", error) ||
      !qstore_unsafe_window_check_suid (self, suid, "suid", FALSE, error))
    return FALSE;

  qstore_unsafe_window_lock (self);
  ok = qstore_unsafe_window_begin (self, error);
  if (!ok)
    goto out;

  /* The guards */
  ok = qstore_unsafe_store_get_receipt (&self->store, event_id, &receipt, &found, error);
  if (ok && !found)
    {
      g_set_error (error, QSTORE_UNSAFE_WINDOW_ERROR, QSTORE_UNSAFE_WINDOW_ERROR_RECEIPT_NOT_FOUND,
                   _("Unsafe window “%s”: event “%s” was never applied here, so its safe "
                   "receipt cannot be observed: apply it first"), self->name, event_id);
      ok = FALSE;
    }
  else if (ok && strcmp (receipt.suid, suid) != 0)
    {
      g_set_error (error, QSTORE_UNSAFE_WINDOW_ERROR, QSTORE_UNSAFE_WINDOW_ERROR_SUID_CONTRADICTION,
                   _("Unsafe window “%s”: event “%s” was applied with SUID %s, but the safe "
                   "layer reports SUID %s: one event id must keep one SUID"), self->name,
                   event_id, receipt.suid, suid);
      ok = FALSE;
    }
  ok = ok && qstore_unsafe_store_get_arrival (&self->store, generation, &arrival, &found, error);

  /* The writes */
  if (ok && (!found || qstore_suid_compare (suid, arrival.safe_head) > 0))
    {
      if (!found)
        arrival.arrival_watermark = g_strdup (suid);
      g_free (arrival.safe_head);
      arrival.safe_head = g_strdup (suid);
      ok = qstore_unsafe_store_put_arrival (&self->store, generation, &arrival, error);
    }
  ok = ok && delete_markers (self, generation, &receipt, error);
  ok = qstore_unsafe_window_end (self, ok, TRUE, error);

out:
  qstore_unsafe_window_unlock (self);
  return ok;
}

/**
 * qstore_unsafe_window_read_meta:
 * @self: a #QStoreUnsafeWindow
 * @generation: a generation
 * @safe_contiguous_head: (out) (optional) (transfer full): the safe head
 *   stored for @generation, or the empty text when none was observed
 * @unsafe_observed_max_suid: (out) (optional) (transfer full): the
 *   largest SUID the window holds a receipt of, or the empty text
 * @rebuild_required: (out) (optional): whether @generation latched
 *   rebuild-required
 * @error: return location for a #GError
 *
 * Reads where the window stands. Unlike composed pages, this works while
 * a rebuild is required: it is how a caller learns that one is.
 *
 * Returns: (skip): %TRUE on success
 */
gboolean
qstore_unsafe_window_read_meta (QStoreUnsafeWindow  *self,
                                gint64               generation,
                                char               **safe_contiguous_head,
                                char               **unsafe_observed_max_suid,
                                gboolean            *rebuild_required,
                                GError             **error)
{
  g_auto(QStoreUnsafeArrival) arrival = { 0 };
  g_autofree char *max = NULL;
  gboolean found = FALSE;
  gboolean ok;

  g_return_val_if_fail (QSTORE_IS_UNSAFE_WINDOW (self), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (!qstore_unsafe_window_check_generation (self, generation, error))
    return FALSE;

  qstore_unsafe_window_lock (self);
  ok = qstore_unsafe_window_check_idle (self, error) &&
       qstore_unsafe_store_get_arrival (&self->store, generation, &arrival, &found, error) &&
       qstore_unsafe_store_max_receipt_suid (&self->store, &max, error);
  qstore_unsafe_window_unlock (self);
  if (!ok)
    return FALSE;

  if (safe_contiguous_head != NULL)
    *safe_contiguous_head = g_strdup (found ? arrival.safe_head : "");
  if (unsafe_observed_max_suid != NULL)
    *unsafe_observed_max_suid = g_steal_pointer (&max);
  if (rebuild_required != NULL)
    *rebuild_required = found && arrival.rebuild_required;
  return TRUE;
}

/**
 * qstore_unsafe_window_has_target_receipt:
 * @self: a #QStoreUnsafeWindow
 * @event_id: an event's identity
 * @suid: its sortable unique id
 * @found: (out): whether the window holds a receipt of @event_id with
 *   exactly @suid
 * @error: return location for a #GError
 *
 * Tells whether the window received an event, as a follower waiting for
 * it asks.
 *
 * Returns: (skip): %TRUE on success
 */
gboolean
qstore_unsafe_window_has_target_receipt (QStoreUnsafeWindow  *self,
                                         const char          *event_id,
                                         const char          *suid,
                                         gboolean            *found,
                                         GError             **error)
{
  g_auto(QStoreUnsafeReceipt) receipt = { 0 };
  gboolean exists = FALSE;
  gboolean ok;

  g_return_val_if_fail (QSTORE_IS_UNSAFE_WINDOW (self), FALSE);
  g_return_val_if_fail (event_id != NULL, FALSE);
  g_return_val_if_fail (suid != NULL, FALSE);
  g_return_val_if_fail (found != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  *found = FALSE;
  if (!qstore_unsafe_window_check_text (self, event_id, "event_id", error) ||
      !qstore_unsafe_window_check_suid (self, suid, "suid", FALSE, error))
    return FALSE;

  qstore_unsafe_window_lock (self);
  ok = qstore_unsafe_window_check_idle (self, error) &&
       qstore_unsafe_store_get_receipt (&self->store, event_id, &receipt, &exists, error);
  qstore_unsafe_window_unlock (self);

  *found = ok && exists && strcmp (receipt.suid, suid) == 0;
  return ok;
}

/**
 * qstore_unsafe_window_has_wait_receipt:
 * @self: a #QStoreUnsafeWindow
 * @generation: a generation
 * @definition_version: the version of the view's definition
 * @event_id: an event's identity
 * @suid: its sortable unique id
 * @found: (out): whether the event was applied while @generation was the
 *   active one with @definition_version
 * @error: return location for a #GError
 *
 * Tells whether the event reached this very generation and definition of
 * the view. Unlike the receipt, which is the window's and outlives
 * rebuilds, this one is bound to them: waiting on it cannot be satisfied
 * by a generation the reader no longer sees.
 *
 * Returns: (skip): %TRUE on success
 */
gboolean
qstore_unsafe_window_has_wait_receipt (QStoreUnsafeWindow  *self,
                                       gint64               generation,
                                       gint64               definition_version,
                                       const char          *event_id,
                                       const char          *suid,
                                       gboolean            *found,
                                       GError             **error)
{
  gboolean ok;

  g_return_val_if_fail (QSTORE_IS_UNSAFE_WINDOW (self), FALSE);
  g_return_val_if_fail (event_id != NULL, FALSE);
  g_return_val_if_fail (suid != NULL, FALSE);
  g_return_val_if_fail (found != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  *found = FALSE;
  if (!qstore_unsafe_window_check_generation (self, generation, error) ||
      !qstore_unsafe_window_check_text (self, event_id, "event_id", error) ||
      !qstore_unsafe_window_check_suid (self, suid, "suid", FALSE, error))
    return FALSE;

  qstore_unsafe_window_lock (self);
  ok = qstore_unsafe_window_check_idle (self, error) &&
       qstore_unsafe_store_has_wait_receipt (&self->store, generation, definition_version,
                                             event_id, suid, found, error);
  qstore_unsafe_window_unlock (self);
  return ok;
}

/**
 * qstore_unsafe_window_activate_generation:
 * @self: a #QStoreUnsafeWindow
 * @generation: the generation readers use from now on
 * @definition_version: the version of the view's definition it was built
 *   with
 * @error: return location for a #GError
 *
 * Makes @generation the active one, built with @definition_version. Only
 * the active generation, with its definition, gets wait receipts and may
 * be garbage collected: rows of a candidate or retired generation, or of
 * a changed definition, stay until that generation is active again.
 *
 * Returns: %TRUE on success
 */
gboolean
qstore_unsafe_window_activate_generation (QStoreUnsafeWindow  *self,
                                          gint64               generation,
                                          gint64               definition_version,
                                          GError             **error)
{
  gboolean ok;

  g_return_val_if_fail (QSTORE_IS_UNSAFE_WINDOW (self), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (!qstore_unsafe_window_check_generation (self, generation, error))
    return FALSE;

  qstore_unsafe_window_lock (self);
  ok = qstore_unsafe_window_begin (self, error);
  if (ok)
    {
      ok = qstore_unsafe_store_put_definition (&self->store, generation, definition_version,
                                               error) &&
           qstore_unsafe_store_put_active (&self->store, generation, error);
      ok = qstore_unsafe_window_end (self, ok, TRUE, error);
    }
  qstore_unsafe_window_unlock (self);
  return ok;
}

/**
 * qstore_unsafe_window_put_safe_row:
 * @self: a #QStoreUnsafeWindow
 * @generation: the generation
 * @row_key: the row
 * @value_json: its value, as JSON
 * @row_version: its version
 * @source_suid: the SUID of the state it holds
 * @error: return location for a #GError
 *
 * Writes a row of the safe layer, as the follower of the stream's
 * contiguous head computed it. Composed pages prefer it to an unsafe row
 * of the same key unless that one holds a newer SUID.
 *
 * Returns: %TRUE on success
 */
gboolean
qstore_unsafe_window_put_safe_row (QStoreUnsafeWindow  *self,
                                   gint64               generation,
                                   const char          *row_key,
                                   const char          *value_json,
                                   gint64               row_version,
                                   const char          *source_suid,
                                   GError             **error)
{
  g_autofree char *canonical = NULL;
  QStoreUnsafeRowRecord row = { 0 };
  gboolean ok;

  g_return_val_if_fail (QSTORE_IS_UNSAFE_WINDOW (self), FALSE);
  g_return_val_if_fail (row_key != NULL, FALSE);
  g_return_val_if_fail (value_json != NULL, FALSE);
  g_return_val_if_fail (source_suid != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (!qstore_unsafe_window_check_generation (self, generation, error) ||
      !qstore_unsafe_window_check_suid (self, source_suid, "source_suid", FALSE, error))
    return FALSE;
  if (!g_utf8_validate (row_key, -1, NULL))
    return qstore_unsafe_window_check_text (self, row_key, "row_key", error);
  canonical = qstore_unsafe_json_canonical (value_json, "value_json", NULL, error);
  if (canonical == NULL)
    {
      g_prefix_error (error, _("Unsafe window “%s”, safe row “%s”: "), self->name, row_key);
      return FALSE;
    }

  row.row_key = (char *) row_key;
  row.value_json = canonical;
  row.row_version = row_version;
  row.source_suid = (char *) source_suid;

  qstore_unsafe_window_lock (self);
  ok = qstore_unsafe_window_begin (self, error);
  if (ok)
    {
      ok = qstore_unsafe_store_put_row (&self->store, TRUE, generation, &row, error);
      ok = qstore_unsafe_window_end (self, ok, TRUE, error);
    }
  qstore_unsafe_window_unlock (self);
  return ok;
}

/**
 * qstore_unsafe_window_delete_safe_row:
 * @self: a #QStoreUnsafeWindow
 * @generation: the generation
 * @row_key: the row
 * @error: return location for a #GError
 *
 * Removes a row of the safe layer; removing one that does not exist
 * changes nothing.
 *
 * Returns: %TRUE on success
 */
gboolean
qstore_unsafe_window_delete_safe_row (QStoreUnsafeWindow  *self,
                                      gint64               generation,
                                      const char          *row_key,
                                      GError             **error)
{
  gboolean ok;

  g_return_val_if_fail (QSTORE_IS_UNSAFE_WINDOW (self), FALSE);
  g_return_val_if_fail (row_key != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (!qstore_unsafe_window_check_generation (self, generation, error))
    return FALSE;

  qstore_unsafe_window_lock (self);
  ok = qstore_unsafe_window_begin (self, error);
  if (ok)
    {
      ok = qstore_unsafe_store_delete_row (&self->store, TRUE, generation, row_key, error);
      ok = qstore_unsafe_window_end (self, ok, TRUE, error);
    }
  qstore_unsafe_window_unlock (self);
  return ok;
}
