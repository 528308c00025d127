/* qstore-provider-state-private.h: what libqstore knows of an opened provider
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The lowest module of the key/value layer: stores, snapshots, iterators
 * and the provider's own wrappers all ask it whether a provider is open,
 * writable, and how long a key may be, so none of them has to call up
 * into another.
 */
#pragma once

#include "qstore-location-lock.h"
#include "qstore-types.h"

G_BEGIN_DECLS

typedef struct
{
  char                *name;
  char                *location;
  guint                flags;           /* QStoreOpenFlags */
  gboolean             read_only;
  GHashTable          *options;         /* provider-specific options */
  gsize                max_key_length;  /* 0 for no limit */
  gboolean             closed;
  guint                wait_ms;         /* the wait_ms option */
  QStoreLocationLock  *lock;            /* the writer lock, while open for writing */
  gboolean             own_lock;        /* or the provider holds it another way */
  gpointer             write_txn;       /* the open QStoreWriteTxn, or NULL */
} QStoreProviderState;

QStoreProviderState *qstore_provider_state_new       (const char      *name,
                                                      const char      *location,
                                                      guint            flags,
                                                      gboolean         read_only,
                                                      GHashTable      *options);
/* Attaches @state (transfer full) to @self for the provider's lifetime. */
void                 qstore_provider_state_attach    (QStoreProvider       *self,
                                                      QStoreProviderState  *state);
QStoreProviderState *qstore_provider_get_state       (QStoreProvider  *self);

gboolean qstore_provider_check_open      (QStoreProvider  *self,
                                          GError         **error);
/* Also fails (%QSTORE_ERROR_BUSY) while a write transaction
 * (QStoreWriteTxn) is open on @self: every write goes through it then. */
gboolean qstore_provider_check_writable  (QStoreProvider  *self,
                                          GError         **error);
/* The same on a state in hand: the lookup of a provider's state is a
 * walk of its qdata, under a lock. */
gboolean qstore_provider_state_check_writable (QStoreProviderState  *state,
                                               GError              **error);
/* Where the provider keeps its closed state, for hot paths that hold a
 * reference on the provider and want to skip the lookup per call. */
const gboolean *qstore_provider_get_closed_flag (QStoreProvider *self);
/* For a read of a key of @key_len bytes: -1 when the provider is closed
 * (@error set), 0 when no write could have stored such a key (empty, or
 * longer than the provider's limit), 1 otherwise. */
int      qstore_provider_check_read      (QStoreProvider  *self,
                                          gsize            key_len,
                                          GError         **error);

G_END_DECLS
