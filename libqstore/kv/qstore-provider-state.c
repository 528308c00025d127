/* qstore-provider-state.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "qstore-error.h"
#include "qstore-i18n-private.h"
#include "qstore-provider-state-private.h"

static G_DEFINE_QUARK (qstore-provider-state, provider_state)

QStoreProviderState *
qstore_provider_state_new (const char *name,
                           const char *location,
                           guint       flags,
                           gboolean    read_only,
                           GHashTable *options)
{
  QStoreProviderState *state = g_new0 (QStoreProviderState, 1);

  state->name = g_strdup (name);
  state->location = g_strdup (location ? location : "");
  state->flags = flags;
  state->read_only = read_only;
  state->options = options;
  return state;
}

static void
provider_state_free (gpointer data)
{
  QStoreProviderState *state = data;

  g_free (state->name);
  g_free (state->location);
  g_clear_pointer (&state->options, g_hash_table_unref);
  g_clear_object (&state->lock);
  g_free (state);
}

void
qstore_provider_state_attach (QStoreProvider      *self,
                              QStoreProviderState *state)
{
  g_object_set_qdata_full (G_OBJECT (self), provider_state_quark (), state, provider_state_free);
}

QStoreProviderState *
qstore_provider_get_state (QStoreProvider *self)
{
  QStoreProviderState *state = g_object_get_qdata (G_OBJECT (self), provider_state_quark ());

  /* Providers are made by qstore_provider_new_with_options(), or by
   * libqstore itself (qstore_provider_init_state()). */
  g_assert (state != NULL);
  return state;
}

const gboolean *
qstore_provider_get_closed_flag (QStoreProvider *self)
{
  return &qstore_provider_get_state (self)->closed;
}

static gboolean
state_check_open (QStoreProviderState  *state,
                  GError              **error)
{
  if (G_UNLIKELY (state->closed))
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_CLOSED,
                   "The %s store at “%s” is closed: open it again to use it",
                   state->name, state->location);
      return FALSE;
    }
  return TRUE;
}

gboolean
qstore_provider_check_open (QStoreProvider  *self,
                            GError         **error)
{
  return state_check_open (qstore_provider_get_state (self), error);
}

gboolean
qstore_provider_state_check_writable (QStoreProviderState  *state,
                                      GError              **error)
{
  if (!state_check_open (state, error))
    return FALSE;
  if (G_UNLIKELY (state->read_only))
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_READ_ONLY,
                   "The %s store at “%s” is open read-only: writes are refused",
                   state->name, state->location);
      return FALSE;
    }
  if (G_UNLIKELY (g_atomic_pointer_get (&state->write_txn) != NULL))
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_BUSY,
                   _("A write transaction is open on the %s store at “%s”: write through "
                   "it, or commit or abort it first"),
                   state->name, state->location);
      return FALSE;
    }
  return TRUE;
}

gboolean
qstore_provider_check_writable (QStoreProvider  *self,
                                GError         **error)
{
  return qstore_provider_state_check_writable (qstore_provider_get_state (self), error);
}

int
qstore_provider_check_read (QStoreProvider  *self,
                            gsize            key_len,
                            GError         **error)
{
  QStoreProviderState *state = qstore_provider_get_state (self);

  if (G_UNLIKELY (state->closed))
    return qstore_provider_check_open (self, error) ? 1 : -1;
  if (G_UNLIKELY (key_len == 0 ||
                  (state->max_key_length != 0 && key_len > state->max_key_length)))
    return 0;
  return 1;
}
