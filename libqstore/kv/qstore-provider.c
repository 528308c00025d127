/* qstore-provider.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "qstore-error.h"
#include "qstore-i18n-private.h"
#include "qstore-kv-private.h"
#include "qstore-plugin-loader-private.h"
#include "qstore-provider-private.h"
#include "qstore-write-txn-private.h"
#include "qstore-snapshot-private.h"

/**
 * QStoreProvider:
 *
 * A storage backend opened at a location, handing out named ordered
 * stores ([iface@KV]).
 *
 * Providers are GIO modules that implement the extension point
 * %QSTORE_PROVIDER_EXTENSION_POINT_NAME. They are searched for in the
 * colon-separated directories of `QSTORE_PLUGIN_DIR`, then in the installed
 * plugin directory (`$libdir/qstore-1/plugins`, the `pluginsdir` variable
 * of `qstore-1.pc`). A plugin built for another
 * %QSTORE_PLUGIN_API_VERSION is not loaded. Open one with
 * [func@Provider.new] or [func@Provider.new_for_uri]:
 *
 * ```c
 * g_autoptr(QStoreProvider) p = qstore_provider_new_for_uri ("lmdb:/tmp/store", 0, &error);
 * ```
 */

G_DEFINE_INTERFACE (QStoreProvider, qstore_provider, G_TYPE_OBJECT)

static void
qstore_provider_default_init (QStoreProviderInterface *iface)
{
}

/* Plugin loading */

static GIOExtensionPoint *
ensure_extension_point (void)
{
  static gsize point;

  if (g_once_init_enter (&point))
    {
      GIOExtensionPoint *p = g_io_extension_point_register (QSTORE_PROVIDER_EXTENSION_POINT_NAME);

      g_io_extension_point_set_required_type (p, QSTORE_TYPE_PROVIDER);
      g_once_init_leave (&point, (gsize) p);
    }
  return (GIOExtensionPoint *) point;
}

/* What was refused at load (plugins of another plugin API version), for
 * the message of a provider that is not found. */
static GPtrArray *plugin_refusals;

static GIOExtensionPoint *
load_plugins (void)
{
  static gsize loaded;

  if (g_once_init_enter (&loaded))
    {
      g_autoptr(GHashTable) seen = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
      const char *env = g_getenv ("QSTORE_PLUGIN_DIR");

      ensure_extension_point ();
      plugin_refusals = g_ptr_array_new_with_free_func (g_free);
      if (env != NULL && env[0] != '\0')
        {
          g_auto(GStrv) dirs = g_strsplit (env, G_SEARCHPATH_SEPARATOR_S, -1);

          for (guint i = 0; dirs[i] != NULL; i++)
            if (dirs[i][0] != '\0')
              qstore_plugin_load_directory (dirs[i], seen, plugin_refusals);
        }
      qstore_plugin_load_directory (QSTORE_PLUGIN_INSTALL_DIR, seen, plugin_refusals);
      g_once_init_leave (&loaded, 1);
    }
  return ensure_extension_point ();
}

static gint
compare_strings (gconstpointer a,
                 gconstpointer b)
{
  return strcmp (*(const char * const *) a, *(const char * const *) b);
}

/**
 * qstore_list_providers:
 *
 * Lists the providers that can be loaded.
 *
 * Returns: (transfer full) (array zero-terminated=1): the provider names,
 *   sorted
 */
char **
qstore_list_providers (void)
{
  GPtrArray *names = g_ptr_array_new ();

  for (GList *l = g_io_extension_point_get_extensions (load_plugins ()); l; l = l->next)
    g_ptr_array_add (names, g_strdup (g_io_extension_get_name (l->data)));
  g_ptr_array_sort (names, compare_strings);
  g_ptr_array_add (names, NULL);
  return (char **) g_ptr_array_free (names, FALSE);
}

static GType
lookup_provider_type (const char  *name,
                      GError     **error)
{
  GIOExtension *extension;

  extension = g_io_extension_point_get_extension_by_name (load_plugins (), name);
  if (extension == NULL)
    {
      g_auto(GStrv) names = qstore_list_providers ();
      g_autofree char *list = g_strjoinv (", ", names);
      g_autoptr(GString) message = g_string_new (NULL);

      g_string_printf (message, _("No provider named “%s”; the providers are: %s "
                                  "(QSTORE_PLUGIN_DIR adds plugin directories)"),
                       name, names[0] ? list : "none found");
      /* It may be one of them. */
      for (guint i = 0; i < plugin_refusals->len; i++)
        g_string_append_printf (message, "; %s", (const char *) plugin_refusals->pdata[i]);
      g_set_error_literal (error, QSTORE_ERROR, QSTORE_ERROR_NOT_FOUND, message->str);
      return G_TYPE_INVALID;
    }
  return g_io_extension_get_type (extension);
}

static QStoreProviderInterface *
peek_type_iface (GType  type,
                 gpointer *klass_out)
{
  gpointer klass = g_type_class_ref (type);

  *klass_out = klass;
  return g_type_interface_peek (klass, QSTORE_TYPE_PROVIDER);
}

/**
 * qstore_lookup_provider_capabilities:
 * @name: a provider name
 * @capabilities: (out): what the provider can do
 * @error: return location for a #GError
 *
 * Tells what a provider can do without opening a location.
 *
 * Returns: (skip): %TRUE when the provider exists
 */
gboolean
qstore_lookup_provider_capabilities (const char          *name,
                                     QStoreCapabilities  *capabilities,
                                     GError             **error)
{
  GType type;
  gpointer klass;

  g_return_val_if_fail (name != NULL, FALSE);

  type = lookup_provider_type (name, error);
  if (type == G_TYPE_INVALID)
    return FALSE;
  *capabilities = peek_type_iface (type, &klass)->capabilities;
  g_type_class_unref (klass);
  return TRUE;
}

/* The longest wait_ms accepted: a day. */
#define MAX_WAIT_MS (24u * 60 * 60 * 1000)

/* libqstore's own options, which every provider (atomic) or every provider
 * with a writer lock (wait_ms) takes. */
static gboolean
parse_own_option (QStoreProviderInterface  *iface,
                  const char               *key,
                  const char               *value,
                  QStoreOpenFlags          *flags,
                  guint                    *wait_ms,
                  gboolean                 *handled,
                  GError                  **error)
{
  guint64 n;

  *handled = TRUE;
  if (g_str_equal (key, "atomic"))
    {
      if (g_str_equal (value, "0") || g_str_equal (value, "false"))
        *flags |= QSTORE_OPEN_NO_ATOMIC_BATCH;
      else if (!g_str_equal (value, "1") && !g_str_equal (value, "true"))
        {
          g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                       "Option atomic=%s is not understood: use atomic=0 or atomic=1",
                       value);
          return FALSE;
        }
      return TRUE;
    }
  if (g_str_equal (key, "wait_ms") && (iface->capabilities & QSTORE_CAPABILITY_WRITER_LOCK))
    {
      if (!g_ascii_string_to_unsigned (value, 10, 0, MAX_WAIT_MS, &n, NULL))
        {
          g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                       "Option wait_ms=%s is not understood: give how long to wait for "
                       "another writer, in milliseconds from 0 to %u, such as wait_ms=5000",
                       value, MAX_WAIT_MS);
          return FALSE;
        }
      *wait_ms = (guint) n;
      return TRUE;
    }
  *handled = FALSE;
  return TRUE;
}

static gboolean
parse_options (QStoreProviderInterface  *iface,
               const char               *provider_name,
               const char * const       *options,
               QStoreOpenFlags          *flags,
               guint                    *wait_ms,
               GHashTable               *parsed,
               GError                  **error)
{
  g_autoptr(GHashTable) seen = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);

  for (guint i = 0; options != NULL && options[i] != NULL; i++)
    {
      const char *eq = strchr (options[i], '=');
      g_autofree char *key = g_strndup (options[i], eq ? (gsize) (eq - options[i]) : strlen (options[i]));
      const char *value = eq ? eq + 1 : "";
      gboolean handled;

      /* Silently letting the first (or last) of two win hides a mistake. */
      if (!g_hash_table_add (seen, g_strdup (key)))
        {
          g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                       _("Option “%s” is given more than once: give each option once"),
                       key);
          return FALSE;
        }

      if (!parse_own_option (iface, key, value, flags, wait_ms, &handled, error))
        return FALSE;
      if (handled)
        continue;

      if (iface->option_names == NULL ||
          !g_strv_contains ((const char * const *) iface->option_names, key))
        {
          g_autofree char *known = NULL;

          if (iface->option_names != NULL && iface->option_names[0] != NULL)
            known = g_strjoinv (", ", (char **) iface->option_names);
          g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                       _("Provider “%s” has no option “%s”; its options are: atomic%s%s%s"),
                       provider_name, key,
                       (iface->capabilities & QSTORE_CAPABILITY_WRITER_LOCK) ? ", wait_ms" : "",
                       known ? ", " : "", known ? known : "");
          return FALSE;
        }
      g_hash_table_replace (parsed, g_steal_pointer (&key), g_strdup (value));
    }
  return TRUE;
}

void
qstore_provider_init_state (QStoreProvider  *self,
                            const char      *name,
                            const char      *location,
                            QStoreOpenFlags  flags)
{
  QStoreProviderInterface *iface = QSTORE_PROVIDER_GET_IFACE (self);
  QStoreProviderState *state;

  state = qstore_provider_state_new (name, location, flags, (flags & QSTORE_OPEN_READ_ONLY) != 0,
                                     g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                                            g_free));
  state->max_key_length = iface->get_max_key_length ? iface->get_max_key_length (self) : 0;
  qstore_provider_state_attach (self, state);
}

/**
 * qstore_provider_new_with_options:
 * @name: the provider name (`memory`, `lmdb`, `sqlite`…)
 * @location: (nullable): where the data lives: a directory for lmdb, a file
 *   for sqlite, nothing for memory
 * @flags: how to open
 * @options: (nullable) (array zero-terminated=1): `key=value` options, as
 *   after the `?` of a URI
 * @error: return location for a #GError
 *
 * Loads the provider @name and opens @location.
 *
 * Returns: (transfer full): the opened provider, or %NULL on error (an
 *   unknown @name is %QSTORE_ERROR_NOT_FOUND and lists the known ones)
 */
QStoreProvider *
qstore_provider_new_with_options (const char          *name,
                                  const char          *location,
                                  QStoreOpenFlags      flags,
                                  const char * const  *options,
                                  GError             **error)
{
  g_autoptr(GHashTable) parsed = NULL;
  g_autoptr(GObject) object = NULL;
  QStoreProviderInterface *iface;
  QStoreProviderState *state;
  guint wait_ms = 0;
  gpointer klass;
  gboolean ok;
  GType type;

  g_return_val_if_fail (name != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  type = lookup_provider_type (name, error);
  if (type == G_TYPE_INVALID)
    return NULL;

  parsed = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  ok = parse_options (peek_type_iface (type, &klass), name, options, &flags, &wait_ms,
                      parsed, error);
  g_type_class_unref (klass);
  if (!ok)
    return NULL;

  object = g_object_new (type, NULL);
  state = qstore_provider_state_new (name, location, flags,
                                     (flags & QSTORE_OPEN_READ_ONLY) != 0,
                                     g_steal_pointer (&parsed));
  state->wait_ms = wait_ms;
  qstore_provider_state_attach (QSTORE_PROVIDER (object), state);

  if (!G_IS_INITABLE (object))
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_FAILED,
                   _("Provider “%s” is broken: its type does not implement GInitable"), name);
      return NULL;
    }
  if (!g_initable_init (G_INITABLE (object), NULL, error))
    {
      /* Nothing was opened, so finalizing must not try to close it. */
      state->closed = TRUE;
      if (state->lock != NULL)
        qstore_location_lock_release (state->lock);
      return NULL;
    }

  iface = QSTORE_PROVIDER_GET_IFACE (object);
  /* The writer lock is the provider's promise: hold it to the letter. */
  if ((iface->capabilities & QSTORE_CAPABILITY_WRITER_LOCK) && !state->read_only &&
      state->lock == NULL && !state->own_lock)
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_FAILED,
                   "Provider “%s” is broken: it opened “%s” for writing without taking "
                   "the location's writer lock", name, state->location);
      qstore_provider_close_all (QSTORE_PROVIDER (object));
      return NULL;
    }

  /* Asked on every read and write: ask the plugin once. */
  state->max_key_length = iface->get_max_key_length
                          ? iface->get_max_key_length (QSTORE_PROVIDER (object)) : 0;
  return QSTORE_PROVIDER (g_steal_pointer (&object));
}

/**
 * qstore_provider_new:
 * @name: the provider name (`memory`, `lmdb`, `sqlite`…)
 * @location: (nullable): where the data lives
 * @flags: how to open
 * @error: return location for a #GError
 *
 * Loads the provider @name and opens @location with default options.
 *
 * Returns: (transfer full): the opened provider, or %NULL on error
 */
QStoreProvider *
qstore_provider_new (const char       *name,
                     const char       *location,
                     QStoreOpenFlags   flags,
                     GError          **error)
{
  return qstore_provider_new_with_options (name, location, flags, NULL, error);
}

/**
 * qstore_provider_new_for_uri:
 * @uri: `provider:location[?option=value&…]`, such as `lmdb:/var/db/x`,
 *   `sqlite:data.db?atomic=0` or `memory:`
 * @flags: how to open
 * @error: return location for a #GError
 *
 * Opens the location a URI names. The location is percent-decoded.
 *
 * Returns: (transfer full): the opened provider, or %NULL on error
 */
QStoreProvider *
qstore_provider_new_for_uri (const char       *uri,
                             QStoreOpenFlags   flags,
                             GError          **error)
{
  g_autofree char *name = NULL;
  g_autofree char *location = NULL;
  g_autoptr(GPtrArray) options = g_ptr_array_new_with_free_func (g_free);
  const char *colon, *query;

  g_return_val_if_fail (uri != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  colon = strchr (uri, ':');
  if (colon == NULL || colon == uri)
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                   _("“%s” is not a store URI: write provider:location, "
                   "such as lmdb:/path/to/dir, sqlite:/path/to/file or memory:"),
                   uri);
      return NULL;
    }
  name = g_strndup (uri, colon - uri);

  query = strchr (colon + 1, '?');
  if (query != NULL)
    {
      g_auto(GStrv) pairs = g_strsplit (query + 1, "&", -1);

      for (guint i = 0; pairs[i] != NULL; i++)
        {
          char *option = g_uri_unescape_string (pairs[i], NULL);

          if (option == NULL)
            {
              g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                           _("Option “%s” of URI “%s” is not properly percent-encoded"),
                           pairs[i], uri);
              return NULL;
            }
          if (option[0] != '\0')
            g_ptr_array_add (options, option);
          else
            g_free (option);
        }
    }
  g_ptr_array_add (options, NULL);

  {
    g_autofree char *raw = g_strndup (colon + 1, query ? (gsize) (query - colon - 1) : strlen (colon + 1));

    location = g_uri_unescape_string (raw, NULL);
    if (location == NULL)
      {
        g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                     _("Location “%s” of URI “%s” is not properly percent-encoded "
                     "(or encodes a NUL byte)"), raw, uri);
        return NULL;
      }
  }

  return qstore_provider_new_with_options (name, location, flags,
                                           (const char * const *) options->pdata, error);
}

/* Accessors */

/**
 * qstore_provider_get_name:
 * @self: a #QStoreProvider
 *
 * Gets the name of the provider, such as `lmdb`.
 *
 * Returns: the name the provider was loaded under
 */
const char *
qstore_provider_get_name (QStoreProvider *self)
{
  g_return_val_if_fail (QSTORE_IS_PROVIDER (self), NULL);
  return qstore_provider_get_state (self)->name;
}

/**
 * qstore_provider_get_location:
 * @self: a #QStoreProvider
 *
 * Gets the location the provider opened, as given to [func@Provider.new] or
 * in the URI.
 *
 * Returns: the location the provider opened (empty for memory)
 */
const char *
qstore_provider_get_location (QStoreProvider *self)
{
  g_return_val_if_fail (QSTORE_IS_PROVIDER (self), NULL);
  return qstore_provider_get_state (self)->location;
}

/**
 * qstore_provider_get_flags:
 * @self: a #QStoreProvider
 *
 * Gets the flags the provider was opened with, including
 * %QSTORE_OPEN_NO_ATOMIC_BATCH when the URI said `?atomic=0`.
 *
 * Returns: the flags the provider was opened with
 */
QStoreOpenFlags
qstore_provider_get_flags (QStoreProvider *self)
{
  g_return_val_if_fail (QSTORE_IS_PROVIDER (self), 0);
  return qstore_provider_get_state (self)->flags;
}

/**
 * qstore_provider_get_option:
 * @self: a #QStoreProvider
 * @option: an option name
 *
 * Looks up a provider-specific option given after the `?` of the URI or to
 * [func@Provider.new_with_options].
 *
 * Returns: (nullable): the value of a provider-specific option, or %NULL
 *   when it was not given
 */
const char *
qstore_provider_get_option (QStoreProvider *self,
                            const char     *option)
{
  g_return_val_if_fail (QSTORE_IS_PROVIDER (self), NULL);
  g_return_val_if_fail (option != NULL, NULL);
  return g_hash_table_lookup (qstore_provider_get_state (self)->options, option);
}

static QStoreCapabilities
capabilities_of (QStoreProvider      *self,
                 QStoreProviderState *state)
{
  QStoreCapabilities caps = QSTORE_PROVIDER_GET_IFACE (self)->capabilities;

  if (state->flags & QSTORE_OPEN_NO_ATOMIC_BATCH)
    caps &= ~(QSTORE_CAPABILITY_ATOMIC_BATCH | QSTORE_CAPABILITY_WRITE_TXN);
  return caps;
}

/**
 * qstore_provider_get_capabilities:
 * @self: a #QStoreProvider
 *
 * Tells what this opened provider can do.
 *
 * Returns: what this opened provider can do (`?atomic=0` removes
 *   %QSTORE_CAPABILITY_ATOMIC_BATCH and %QSTORE_CAPABILITY_WRITE_TXN)
 */
QStoreCapabilities
qstore_provider_get_capabilities (QStoreProvider *self)
{
  g_return_val_if_fail (QSTORE_IS_PROVIDER (self), 0);

  return capabilities_of (self, qstore_provider_get_state (self));
}

/**
 * qstore_provider_watch_commits:
 * @self: a #QStoreProvider
 * @error: return location for a #GError
 *
 * Makes a source that tells, as they happen, the commits that other
 * handles on this location make with an entry in the change log
 * (%QSTORE_CHANGE_LOG_STORE_NAME), for followers that would otherwise
 * poll. Set its callback, a [callback@CommitFunc] cast with G_SOURCE_FUNC(),
 * with g_source_set_callback(), then attach it. The watch has a
 * connection of its own: when it loses it, it tells
 * %QSTORE_COMMIT_EVENT_LOST, connects again by itself and tells
 * %QSTORE_COMMIT_EVENT_RESUMED; commits made meanwhile are not told.
 *
 * A provider that cannot tell commits (its interface leaves
 * `watch_commits` unset) returns %NULL without an error: poll instead.
 *
 * Returns: (transfer full) (nullable): the source, or %NULL: without an
 *   error when the provider cannot tell commits, with one (the
 *   provider's, or %QSTORE_ERROR_CLOSED) when it could not start
 */
GSource *
qstore_provider_watch_commits (QStoreProvider  *self,
                               GError         **error)
{
  QStoreProviderInterface *iface;

  g_return_val_if_fail (QSTORE_IS_PROVIDER (self), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!qstore_provider_check_open (self, error))
    return NULL;
  iface = QSTORE_PROVIDER_GET_IFACE (self);
  return iface->watch_commits != NULL ? iface->watch_commits (self, error) : NULL;
}

/**
 * qstore_provider_get_max_key_length:
 * @self: a #QStoreProvider
 *
 * Tells how long a key the provider can store.
 *
 * Returns: the longest key the provider stores, or 0 when there is no limit
 */
gsize
qstore_provider_get_max_key_length (QStoreProvider *self)
{
  g_return_val_if_fail (QSTORE_IS_PROVIDER (self), 0);

  return qstore_provider_get_state (self)->max_key_length;
}

/**
 * qstore_provider_is_closed:
 * @self: a #QStoreProvider
 *
 * Tells whether the provider was closed.
 *
 * Returns: whether [method@Provider.close_all] was called
 */
gboolean
qstore_provider_is_closed (QStoreProvider *self)
{
  g_return_val_if_fail (QSTORE_IS_PROVIDER (self), TRUE);
  return qstore_provider_get_state (self)->closed;
}

/**
 * qstore_provider_lock_location:
 * @self: a #QStoreProvider being opened for writing
 * @lock_path: the lock file the provider keeps for its location, in or
 *   beside it
 * @error: return location for a #GError
 *
 * For provider implementations: takes the location's writer lock (see
 * [class@LocationLock]) for as long as @self stays open, waiting up to the
 * `wait_ms` option when another open holds it. Call it from `init` when
 * opening for writing, before changing anything in the location; closing
 * the provider releases it once the provider's own `close` is done.
 *
 * Returns: %TRUE when @self holds the lock; %FALSE with
 *   %QSTORE_ERROR_BUSY when another open holds it
 */
gboolean
qstore_provider_lock_location (QStoreProvider  *self,
                               const char      *lock_path,
                               GError         **error)
{
  QStoreProviderState *state;
  g_autofree char *what = NULL;

  g_return_val_if_fail (QSTORE_IS_PROVIDER (self), FALSE);
  g_return_val_if_fail (lock_path != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  state = qstore_provider_get_state (self);
  g_return_val_if_fail (!state->read_only, FALSE);

  if (state->lock != NULL)
    return TRUE;
  what = g_strdup_printf ("The %s store at “%s”", state->name, state->location);
  state->lock = qstore_location_lock_acquire (lock_path, what, state->wait_ms, error);
  return state->lock != NULL;
}

/**
 * qstore_provider_get_wait_ms:
 * @self: a #QStoreProvider
 *
 * For provider implementations that keep the writer lock themselves (see
 * [method@Provider.hold_own_lock]): how long a writable open waits for
 * another writer, the `wait_ms` option.
 *
 * Returns: the wait in milliseconds, 0 to fail at once
 */
guint
qstore_provider_get_wait_ms (QStoreProvider *self)
{
  g_return_val_if_fail (QSTORE_IS_PROVIDER (self), 0);
  return qstore_provider_get_state (self)->wait_ms;
}

/**
 * qstore_provider_hold_own_lock:
 * @self: a #QStoreProvider being opened for writing
 *
 * For provider implementations whose locations are not files, such as a
 * database on a server: says that @self took the location's writer lock
 * by its own means (a lock the server holds for its session), instead of
 * [method@Provider.lock_location]. Call it from `init` once the lock is
 * taken; the provider lets go of it in its `close`.
 */
void
qstore_provider_hold_own_lock (QStoreProvider *self)
{
  QStoreProviderState *state;

  g_return_if_fail (QSTORE_IS_PROVIDER (self));
  state = qstore_provider_get_state (self);
  g_return_if_fail (!state->read_only);
  state->own_lock = TRUE;
}

static gboolean
check_store_name (QStoreProvider  *self,
                  const char      *name,
                  GError         **error)
{
  if (name[0] == '\0')
    {
      g_set_error_literal (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                           _("A store name must not be empty"));
      return FALSE;
    }
  if (!g_utf8_validate (name, -1, NULL))
    {
      g_set_error_literal (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                           _("A store name must be valid UTF-8"));
      return FALSE;
    }
  if (g_str_has_prefix (name, "__qstore"))
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                   _("Store name “%s” is reserved: names starting with “__qstore” "
                   "are the providers' own"), name);
      return FALSE;
    }
  return TRUE;
}

/* Stores */

/**
 * qstore_provider_open_store:
 * @self: a #QStoreProvider
 * @name: a physical store name, such as `main.t`
 * @error: return location for a #GError
 *
 * Gets a handle on a store by its physical name. Opening does not create
 * anything: a store that was never written reads back empty. Names are
 * taken as they are (case matters here: the name builders lower-case).
 *
 * Returns: (transfer full): the store, or %NULL on error
 */
QStoreKV *
qstore_provider_open_store (QStoreProvider  *self,
                            const char      *name,
                            GError         **error)
{
  g_return_val_if_fail (QSTORE_IS_PROVIDER (self), NULL);
  g_return_val_if_fail (name != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!qstore_provider_check_open (self, error) || !check_store_name (self, name, error))
    return NULL;
  return QSTORE_PROVIDER_GET_IFACE (self)->open_store (self, name, error);
}

/**
 * qstore_provider_get_store:
 * @self: a #QStoreProvider
 * @schema: the schema, such as `main`
 * @table: the table
 * @error: return location for a #GError
 *
 * Gets the data store of a table, named by [func@store_name_for_table].
 *
 * Returns: (transfer full): the data store of a table, or %NULL on error
 */
QStoreKV *
qstore_provider_get_store (QStoreProvider  *self,
                           const char      *schema,
                           const char      *table,
                           GError         **error)
{
  g_autofree char *name = NULL;

  g_return_val_if_fail (schema != NULL && table != NULL, NULL);
  name = qstore_store_name_for_table (schema, table);
  return qstore_provider_open_store (self, name, error);
}

/**
 * qstore_provider_get_index_store:
 * @self: a #QStoreProvider
 * @schema: the schema
 * @table: the table
 * @index: the index
 * @error: return location for a #GError
 *
 * Gets the store of a secondary index, named by [func@store_name_for_index].
 *
 * Returns: (transfer full): the store of a secondary index, or %NULL on
 *   error
 */
QStoreKV *
qstore_provider_get_index_store (QStoreProvider  *self,
                                 const char      *schema,
                                 const char      *table,
                                 const char      *index,
                                 GError         **error)
{
  g_autofree char *name = NULL;

  g_return_val_if_fail (schema != NULL && table != NULL && index != NULL, NULL);
  name = qstore_store_name_for_index (schema, table, index);
  return qstore_provider_open_store (self, name, error);
}

/**
 * qstore_provider_get_stats_store:
 * @self: a #QStoreProvider
 * @error: return location for a #GError
 *
 * Gets the store that holds every table's statistics.
 *
 * Returns: (transfer full): the store of every table's statistics
 *   (%QSTORE_STATS_STORE_NAME), or %NULL on error
 */
QStoreKV *
qstore_provider_get_stats_store (QStoreProvider  *self,
                                 GError         **error)
{
  return qstore_provider_open_store (self, QSTORE_STATS_STORE_NAME, error);
}

/**
 * qstore_provider_get_catalog_store:
 * @self: a #QStoreProvider
 * @error: return location for a #GError
 *
 * Gets the catalog store.
 *
 * Returns: (transfer full): the catalog store (%QSTORE_CATALOG_STORE_NAME),
 *   or %NULL on error
 */
QStoreKV *
qstore_provider_get_catalog_store (QStoreProvider  *self,
                                   GError         **error)
{
  return qstore_provider_open_store (self, QSTORE_CATALOG_STORE_NAME, error);
}

/**
 * qstore_provider_list_stores:
 * @self: a #QStoreProvider
 * @error: return location for a #GError
 *
 * Lists the stores of the location that hold at least one entry.
 *
 * Returns: (transfer full) (array zero-terminated=1): the names of the
 *   stores that hold entries, sorted, or %NULL on error
 */
char **
qstore_provider_list_stores (QStoreProvider  *self,
                             GError         **error)
{
  char **names;

  g_return_val_if_fail (QSTORE_IS_PROVIDER (self), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!qstore_provider_check_open (self, error))
    return NULL;
  names = QSTORE_PROVIDER_GET_IFACE (self)->list_stores (self, error);
  if (names != NULL)
    qsort (names, g_strv_length (names), sizeof (char *), compare_strings);
  return names;
}

static gboolean
restructure (QStoreProvider      *self,
             GPtrArray           *drop,
             GPtrArray           *rename_from,
             GPtrArray           *rename_to,
             const QStoreWriteOp *ops,
             gsize                n_ops,
             GError             **error)
{
  if (!qstore_provider_check_writable (self, error))
    return FALSE;
  g_ptr_array_add (drop, NULL);
  g_ptr_array_add (rename_from, NULL);
  g_ptr_array_add (rename_to, NULL);
  return QSTORE_PROVIDER_GET_IFACE (self)->restructure (self,
                                                        (const char * const *) drop->pdata,
                                                        (const char * const *) rename_from->pdata,
                                                        (const char * const *) rename_to->pdata,
                                                        ops, n_ops, error);
}

gboolean
qstore_provider_restructure (QStoreProvider       *self,
                             const char * const   *drop,
                             const char * const   *rename_from,
                             const char * const   *rename_to,
                             const QStoreWriteOp  *ops,
                             gsize                 n_ops,
                             GError              **error)
{
  const char * const none[] = { NULL };

  g_return_val_if_fail (QSTORE_IS_PROVIDER (self), FALSE);
  g_return_val_if_fail (ops != NULL || n_ops == 0, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (!qstore_provider_check_writable (self, error))
    return FALSE;
  for (gsize i = 0; i < n_ops; i++)
    if (!qstore_kv_check_provider (ops[i].store, self, error))
      return FALSE;
  return QSTORE_PROVIDER_GET_IFACE (self)->restructure (self,
                                                        drop ? drop : none,
                                                        rename_from ? rename_from : none,
                                                        rename_to ? rename_to : none,
                                                        ops, n_ops, error);
}

/**
 * qstore_provider_delete_table_stores:
 * @self: a #QStoreProvider
 * @schema: the schema
 * @table: the table
 * @index_names: (nullable) (array zero-terminated=1): the table's indexes
 * @error: return location for a #GError
 *
 * Erases, all or nothing, the table's data store, exactly the index stores
 * named, and its statistics entry. Nothing is found by scanning names: a
 * sibling table whose name merely looks like an index store of this one
 * is left alone. Erasing what does not exist is a no-op.
 *
 * Returns: %TRUE on success
 */
gboolean
qstore_provider_delete_table_stores (QStoreProvider      *self,
                                     const char          *schema,
                                     const char          *table,
                                     const char * const  *index_names,
                                     GError             **error)
{
  g_autoptr(GPtrArray) drop = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GPtrArray) none_from = g_ptr_array_new ();
  g_autoptr(GPtrArray) none_to = g_ptr_array_new ();
  g_autoptr(QStoreKV) stats = NULL;
  g_autofree char *stats_key = NULL;
  QStoreWriteOp op = { 0 };

  g_return_val_if_fail (QSTORE_IS_PROVIDER (self), FALSE);
  g_return_val_if_fail (schema != NULL && table != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (!(stats = qstore_provider_get_stats_store (self, error)))
    return FALSE;
  g_ptr_array_add (drop, qstore_store_name_for_table (schema, table));
  for (guint i = 0; index_names != NULL && index_names[i] != NULL; i++)
    g_ptr_array_add (drop, qstore_store_name_for_index (schema, table, index_names[i]));

  stats_key = qstore_stats_key_for_table (schema, table);
  op.store = stats;
  op.kind = QSTORE_WRITE_OP_DELETE;
  op.key = (const guint8 *) stats_key;
  op.key_len = strlen (stats_key);

  return restructure (self, drop, none_from, none_to, &op, 1, error);
}

/**
 * qstore_provider_delete_index_store:
 * @self: a #QStoreProvider
 * @schema: the schema
 * @table: the table
 * @index: the index
 * @error: return location for a #GError
 *
 * Erases one index store. Erasing what does not exist is a no-op.
 *
 * Returns: %TRUE on success
 */
gboolean
qstore_provider_delete_index_store (QStoreProvider  *self,
                                    const char      *schema,
                                    const char      *table,
                                    const char      *index,
                                    GError         **error)
{
  g_autoptr(GPtrArray) drop = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GPtrArray) none_from = g_ptr_array_new ();
  g_autoptr(GPtrArray) none_to = g_ptr_array_new ();

  g_return_val_if_fail (QSTORE_IS_PROVIDER (self), FALSE);
  g_return_val_if_fail (schema != NULL && table != NULL && index != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  g_ptr_array_add (drop, qstore_store_name_for_index (schema, table, index));
  return restructure (self, drop, none_from, none_to, NULL, 0, error);
}

/**
 * qstore_provider_rename_table_stores:
 * @self: a #QStoreProvider
 * @schema: the schema
 * @old_table: the table's current name
 * @new_table: its new name
 * @index_names: (nullable) (array zero-terminated=1): the table's indexes
 * @error: return location for a #GError
 *
 * Moves, all or nothing, the table's data store, the named index stores and
 * its statistics entry to the new name. A destination that holds entries is
 * refused with %QSTORE_ERROR_EXISTS and nothing moves.
 *
 * Returns: %TRUE on success
 */
gboolean
qstore_provider_rename_table_stores (QStoreProvider      *self,
                                     const char          *schema,
                                     const char          *old_table,
                                     const char          *new_table,
                                     const char * const  *index_names,
                                     GError             **error)
{
  g_autoptr(GPtrArray) none = g_ptr_array_new ();
  g_autoptr(GPtrArray) from = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GPtrArray) to = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(QStoreKV) stats = NULL;
  g_autoptr(GBytes) stats_value = NULL;
  g_autofree char *old_key = NULL;
  g_autofree char *new_key = NULL;
  GError *local_error = NULL;
  QStoreWriteOp ops[2] = { { 0 } };
  gsize n_ops = 0;

  g_return_val_if_fail (QSTORE_IS_PROVIDER (self), FALSE);
  g_return_val_if_fail (schema != NULL && old_table != NULL && new_table != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  g_ptr_array_add (from, qstore_store_name_for_table (schema, old_table));
  g_ptr_array_add (to, qstore_store_name_for_table (schema, new_table));
  /* A rename that only changes case names the same stores. */
  if (g_str_equal (from->pdata[0], to->pdata[0]))
    return qstore_provider_check_writable (self, error);

  for (guint i = 0; index_names != NULL && index_names[i] != NULL; i++)
    {
      g_ptr_array_add (from, qstore_store_name_for_index (schema, old_table, index_names[i]));
      g_ptr_array_add (to, qstore_store_name_for_index (schema, new_table, index_names[i]));
    }

  if (!(stats = qstore_provider_get_stats_store (self, error)))
    return FALSE;
  old_key = qstore_stats_key_for_table (schema, old_table);
  new_key = qstore_stats_key_for_table (schema, new_table);
  stats_value = qstore_kv_get (stats, (const guint8 *) old_key, strlen (old_key), &local_error);
  if (local_error != NULL)
    {
      g_propagate_error (error, local_error);
      return FALSE;
    }
  if (stats_value != NULL)
    {
      gsize len;
      const guint8 *data = g_bytes_get_data (stats_value, &len);

      ops[n_ops++] = (QStoreWriteOp) { stats, QSTORE_WRITE_OP_DELETE,
                                       (const guint8 *) old_key, strlen (old_key), NULL, 0 };
      ops[n_ops++] = (QStoreWriteOp) { stats, QSTORE_WRITE_OP_PUT,
                                       (const guint8 *) new_key, strlen (new_key),
                                       data ? data : (const guint8 *) "", len };
    }

  return restructure (self, none, from, to, ops, n_ops, error);
}

/* Reading and writing */

/**
 * qstore_provider_begin_snapshot:
 * @self: a #QStoreProvider
 * @error: return location for a #GError
 *
 * Opens a read handle on the current committed state of every store.
 *
 * Returns: (transfer full): the snapshot, or %NULL on error
 *   (%QSTORE_ERROR_UNSUPPORTED without %QSTORE_CAPABILITY_SNAPSHOTS)
 */
QStoreSnapshot *
qstore_provider_begin_snapshot (QStoreProvider  *self,
                                GError         **error)
{
  QStoreSnapshot *snapshot;

  g_return_val_if_fail (QSTORE_IS_PROVIDER (self), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!qstore_provider_check_open (self, error))
    return NULL;
  if (!(qstore_provider_get_capabilities (self) & QSTORE_CAPABILITY_SNAPSHOTS))
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_UNSUPPORTED,
                   _("Provider “%s” has no snapshots"), qstore_provider_get_state (self)->name);
      return NULL;
    }
  snapshot = QSTORE_PROVIDER_GET_IFACE (self)->begin_snapshot (self, error);
  if (snapshot != NULL)
    qstore_snapshot_set_provider (snapshot, self);
  return snapshot;
}

/**
 * qstore_provider_begin_write:
 * @self: a #QStoreProvider
 * @error: return location for a #GError
 *
 * Opens a write transaction on every store of the provider (see
 * [class@WriteTxn]). One at a time: while it is open, this call and every
 * other write to the provider fail with %QSTORE_ERROR_BUSY.
 *
 * Returns: (transfer full): the transaction, or %NULL on error
 *   (%QSTORE_ERROR_UNSUPPORTED without %QSTORE_CAPABILITY_WRITE_TXN)
 */
QStoreWriteTxn *
qstore_provider_begin_write (QStoreProvider  *self,
                             GError         **error)
{
  QStoreProviderInterface *iface;
  QStoreWriteTxn *txn;

  g_return_val_if_fail (QSTORE_IS_PROVIDER (self), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!qstore_provider_check_writable (self, error))
    return NULL;
  iface = QSTORE_PROVIDER_GET_IFACE (self);
  if (!(qstore_provider_get_capabilities (self) & QSTORE_CAPABILITY_WRITE_TXN) ||
      iface->begin_write == NULL)
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_UNSUPPORTED,
                   _("Provider “%s” has no write transactions"),
                   qstore_provider_get_state (self)->name);
      return NULL;
    }
  txn = iface->begin_write (self, error);
  if (txn != NULL)
    qstore_write_txn_set_provider (txn, self);
  return txn;
}

/**
 * qstore_provider_write: (skip)
 * @self: a #QStoreProvider
 * @ops: (array length=n_ops): the writes, applied in order
 * @n_ops: the number of @ops
 * @flags: durability flags
 * @error: return location for a #GError
 *
 * Applies @ops all or nothing in one transaction. This is what batches and
 * the transaction coordinator commit through; the ops point into the
 * caller's memory, nothing is copied. Without
 * %QSTORE_CAPABILITY_ATOMIC_BATCH, @ops must all address one store.
 *
 * Returns: %TRUE on success
 */
gboolean
qstore_provider_write (QStoreProvider       *self,
                       const QStoreWriteOp  *ops,
                       gsize                 n_ops,
                       QStoreWriteFlags      flags,
                       GError              **error)
{
  QStoreProviderState *state;
  gsize max_key;
  gboolean atomic;

  g_return_val_if_fail (QSTORE_IS_PROVIDER (self), FALSE);
  g_return_val_if_fail (ops != NULL || n_ops == 0, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  state = qstore_provider_get_state (self);
  if (!qstore_provider_state_check_writable (state, error))
    return FALSE;
  if (n_ops == 0)
    return TRUE;

  max_key = state->max_key_length;
  atomic = (capabilities_of (self, state) & QSTORE_CAPABILITY_ATOMIC_BATCH) != 0;
  for (gsize i = 0; i < n_ops; i++)
    {
      const QStoreWriteOp *op = &ops[i];

      /* Stores repeat: only check a store when it changes. */
      if (i == 0 || op->store != ops[i - 1].store)
        {
          if (!qstore_kv_check_provider (op->store, self, error))
            return FALSE;
          if (!atomic && op->store != ops[0].store)
            {
              g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_UNSUPPORTED,
                           _("Provider “%s” is open without an atomic batch: "
                           "write stores “%s” and “%s” separately"),
                           state->name, qstore_kv_get_name (ops[0].store),
                           qstore_kv_get_name (op->store));
              return FALSE;
            }
        }
      if (G_UNLIKELY (op->key_len == 0))
        {
          g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                       _("Empty key written to store “%s”: keys must not be empty"),
                       qstore_kv_get_name (op->store));
          return FALSE;
        }
      if (G_UNLIKELY (max_key != 0 && op->key_len > max_key))
        {
          g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                       "Key of %" G_GSIZE_FORMAT " bytes written to store “%s”: "
                       "provider “%s” stores keys of at most %" G_GSIZE_FORMAT " bytes",
                       op->key_len, qstore_kv_get_name (op->store), state->name, max_key);
          return FALSE;
        }
    }

  return QSTORE_PROVIDER_GET_IFACE (self)->write (self, ops, n_ops, flags, error);
}

/**
 * qstore_provider_close_all:
 * @self: a #QStoreProvider
 *
 * Closes the location. Every later call on the provider, its stores, its
 * snapshots and its iterators fails with %QSTORE_ERROR_CLOSED. Closing
 * twice is harmless; the last unref closes too.
 */
void
qstore_provider_close_all (QStoreProvider *self)
{
  QStoreProviderState *state;

  g_return_if_fail (QSTORE_IS_PROVIDER (self));

  state = qstore_provider_get_state (self);
  if (state->closed)
    return;
  state->closed = TRUE;
  QSTORE_PROVIDER_GET_IFACE (self)->close (self);
  /* Only once the plugin wrote its last byte may another writer come. */
  if (state->lock != NULL)
    qstore_location_lock_release (state->lock);
}

/* Physical store names */

/**
 * qstore_store_name_for_table:
 * @schema: the schema
 * @table: the table
 *
 * Builds the physical name of a table's data store, `schema.table`,
 * ASCII lower-cased (SQL names are case-insensitive for ASCII only).
 *
 * Returns: (transfer full): the store name
 */
char *
qstore_store_name_for_table (const char *schema,
                             const char *table)
{
  g_autofree char *name = NULL;

  g_return_val_if_fail (schema != NULL && table != NULL, NULL);
  name = g_strconcat (schema, ".", table, NULL);
  return g_ascii_strdown (name, -1);
}

/**
 * qstore_store_name_for_index:
 * @schema: the schema
 * @table: the table
 * @index: the index
 *
 * Builds the physical name of an index store, `schema.table_idx_index`,
 * ASCII lower-cased. Because `_idx_` may appear in any name, two objects
 * can map to one store name; the catalog refuses such collisions.
 *
 * Returns: (transfer full): the store name
 */
char *
qstore_store_name_for_index (const char *schema,
                             const char *table,
                             const char *index)
{
  g_autofree char *name = NULL;

  g_return_val_if_fail (schema != NULL && table != NULL && index != NULL, NULL);
  name = g_strconcat (schema, ".", table, "_idx_", index, NULL);
  return g_ascii_strdown (name, -1);
}

/**
 * qstore_stats_key_for_table:
 * @schema: the schema
 * @table: the table
 *
 * Builds a table's key in the statistics store, `schema.table`, ASCII
 * lower-cased.
 *
 * Returns: (transfer full): the key
 */
char *
qstore_stats_key_for_table (const char *schema,
                            const char *table)
{
  return qstore_store_name_for_table (schema, table);
}
