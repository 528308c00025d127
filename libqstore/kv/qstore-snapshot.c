/* qstore-snapshot.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "qstore-error.h"
#include "qstore-kv-private.h"
#include "qstore-provider-state-private.h"
#include "qstore-snapshot-private.h"

/**
 * QStoreSnapshot:
 *
 * A read handle that sees one committed state of every store of a provider
 * while writes continue. Get one from [method@Provider.begin_snapshot]
 * (providers with %QSTORE_CAPABILITY_SNAPSHOTS); release it by dropping the
 * last reference.
 */

/* A join reads a few stores in turn (five for a five-table join): the
 * last ones checked are kept. */
#define N_CHECKED 8

typedef struct
{
  QStoreProvider *provider;
  const gboolean *closed;      /* the provider's closed state */
  gsize           max_key;     /* the provider's key length limit, 0 for none */
  QStoreKV       *checked[N_CHECKED];  /* stores known to be the provider's */
  guint           next_checked;
} QStoreSnapshotPrivate;

G_DEFINE_ABSTRACT_TYPE_WITH_PRIVATE (QStoreSnapshot, qstore_snapshot, G_TYPE_OBJECT)

static void
qstore_snapshot_finalize (GObject *object)
{
  QStoreSnapshotPrivate *priv = qstore_snapshot_get_instance_private (QSTORE_SNAPSHOT (object));

  for (guint i = 0; i < N_CHECKED; i++)
    g_clear_object (&priv->checked[i]);
  g_clear_object (&priv->provider);

  G_OBJECT_CLASS (qstore_snapshot_parent_class)->finalize (object);
}

static void
qstore_snapshot_class_init (QStoreSnapshotClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = qstore_snapshot_finalize;
}

static void
qstore_snapshot_init (QStoreSnapshot *self)
{
}

void
qstore_snapshot_set_provider (QStoreSnapshot *self,
                              QStoreProvider *provider)
{
  QStoreSnapshotPrivate *priv = qstore_snapshot_get_instance_private (self);

  g_set_object (&priv->provider, provider);
  priv->closed = qstore_provider_get_closed_flag (provider);
  priv->max_key = qstore_provider_get_state (provider)->max_key_length;
}

/**
 * qstore_snapshot_get_provider:
 * @self: a #QStoreSnapshot
 *
 * Gets the provider whose stores the snapshot reads.
 *
 * Returns: (transfer none): the provider @self reads from
 */
QStoreProvider *
qstore_snapshot_get_provider (QStoreSnapshot *self)
{
  QStoreSnapshotPrivate *priv = qstore_snapshot_get_instance_private (self);

  g_return_val_if_fail (QSTORE_IS_SNAPSHOT (self), NULL);
  return priv->provider;
}

/* Runs on every lookup: the closed state and the store are checked without
 * calls when the store is one checked lately. Each is held, so its address
 * stands for it alone. */
static gboolean
check_usable (QStoreSnapshot  *self,
              QStoreKV        *store,
              GError         **error)
{
  QStoreSnapshotPrivate *priv = qstore_snapshot_get_instance_private (self);
  guint slot;

  if (G_UNLIKELY (*priv->closed))
    return qstore_provider_check_open (priv->provider, error);
  for (guint i = 0; i < N_CHECKED; i++)
    if (G_LIKELY (store == priv->checked[i]))
      return TRUE;
  if (!qstore_kv_check_provider (store, priv->provider, error))
    return FALSE;
  slot = priv->next_checked++ % N_CHECKED;
  g_set_object (&priv->checked[slot], store);
  return TRUE;
}

/**
 * qstore_snapshot_lookup:
 * @self: a #QStoreSnapshot
 * @store: a store of the snapshot's provider
 * @key: (array length=key_len): the key
 * @key_len: length of @key
 * @value: (out) (array length=value_len) (transfer none) (optional): the
 *   value, valid until the next lookup on @self or its release
 * @value_len: (out) (optional): length of @value
 * @error: return location for a #GError
 *
 * Finds @key as of the snapshot without copying the value.
 *
 * Returns: %TRUE when found; %FALSE when absent or on error (then @error
 *   is set)
 */
gboolean
qstore_snapshot_lookup (QStoreSnapshot  *self,
                        QStoreKV        *store,
                        const guint8    *key,
                        gsize            key_len,
                        const guint8   **value,
                        gsize           *value_len,
                        GError         **error)
{
  g_return_val_if_fail (QSTORE_IS_SNAPSHOT (self), FALSE);
  g_return_val_if_fail (store != NULL, FALSE);
  g_return_val_if_fail (key != NULL || key_len == 0, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  return qstore_snapshot_lookup_internal (self, store, key, key_len, value, value_len, error);
}

gboolean
qstore_snapshot_lookup_internal (QStoreSnapshot  *self,
                                 QStoreKV        *store,
                                 const guint8    *key,
                                 gsize            key_len,
                                 const guint8   **value,
                                 gsize           *value_len,
                                 GError         **error)
{
  QStoreSnapshotPrivate *priv = qstore_snapshot_get_instance_private (self);
  const guint8 *v = NULL;
  gsize v_len = 0;

  if (!check_usable (self, store, error))
    return FALSE;
  /* A key no write could have stored is simply absent. */
  if (G_UNLIKELY (key_len == 0 || (priv->max_key != 0 && key_len > priv->max_key)))
    return FALSE;
  if (!QSTORE_SNAPSHOT_GET_CLASS (self)->lookup (self, store, key, key_len, &v, &v_len, error))
    return FALSE;
  if (value)
    *value = v;
  if (value_len)
    *value_len = v_len;
  return TRUE;
}

/**
 * qstore_snapshot_get:
 * @self: a #QStoreSnapshot
 * @store: a store of the snapshot's provider
 * @key: (array length=key_len): the key
 * @key_len: length of @key
 * @error: return location for a #GError
 *
 * Reads @key as of the snapshot.
 *
 * Returns: (transfer full) (nullable): a copy of the value, or %NULL when
 *   absent (@error unset) or on error
 */
GBytes *
qstore_snapshot_get (QStoreSnapshot  *self,
                     QStoreKV        *store,
                     const guint8    *key,
                     gsize            key_len,
                     GError         **error)
{
  const guint8 *value;
  gsize value_len;

  if (!qstore_snapshot_lookup (self, store, key, key_len, &value, &value_len, error))
    return NULL;
  return g_bytes_new (value, value_len);
}

/**
 * qstore_snapshot_iterate:
 * @self: a #QStoreSnapshot
 * @store: a store of the snapshot's provider
 * @bounds: (nullable): the range, or %NULL for the whole store
 * @error: return location for a #GError
 *
 * Iterates @store as of the snapshot.
 *
 * Returns: (transfer full): an iterator, or %NULL on error
 */
QStoreIter *
qstore_snapshot_iterate (QStoreSnapshot      *self,
                         QStoreKV            *store,
                         const QStoreBounds  *bounds,
                         GError             **error)
{
  g_autoptr(QStoreBounds) all = NULL;

  g_return_val_if_fail (QSTORE_IS_SNAPSHOT (self), NULL);
  g_return_val_if_fail (QSTORE_IS_KV (store), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (bounds == NULL)
    bounds = all = qstore_bounds_new ();
  if (!qstore_bounds_validate (bounds, error))
    return NULL;
  if (!check_usable (self, store, error))
    return NULL;
  return QSTORE_SNAPSHOT_GET_CLASS (self)->iterate (self, store, bounds, error);
}
