/* qstore-iter.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "qstore-error.h"
#include "qstore-i18n-private.h"
#include "qstore-iter-private.h"
#include "qstore-provider-state-private.h"

/**
 * QStoreIter:
 *
 * A cursor over the entries of one store within a [struct@Bounds], in key
 * order (or reverse key order).
 *
 * Call [method@Iter.next] until it returns %FALSE; then check its error.
 * An iterator holds what it needs to read (a read transaction, a cursor)
 * until it is freed: drop it as soon as you are done, especially when you
 * stop early. Memory does not grow with the size of the range.
 */

typedef struct
{
  QStoreProvider *provider;
  const gboolean *closed;  /* the provider's closed state, when one is set */
  QStoreBounds *bounds;
  guint64       returned;
  gboolean      done;
  gboolean      positioned;
} QStoreIterPrivate;

G_DEFINE_ABSTRACT_TYPE_WITH_PRIVATE (QStoreIter, qstore_iter, G_TYPE_OBJECT)

enum {
  PROP_0,
  PROP_BOUNDS,
  PROP_PROVIDER,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static void
qstore_iter_finalize (GObject *object)
{
  QStoreIterPrivate *priv = qstore_iter_get_instance_private (QSTORE_ITER (object));

  g_clear_pointer (&priv->bounds, qstore_bounds_free);
  g_clear_object (&priv->provider);

  G_OBJECT_CLASS (qstore_iter_parent_class)->finalize (object);
}

/* The bounds as set, or none: made on first use, after which they can
 * no longer be set. */
static QStoreBounds *
iter_bounds (QStoreIterPrivate *priv)
{
  if (G_UNLIKELY (priv->bounds == NULL))
    priv->bounds = qstore_bounds_new ();
  return priv->bounds;
}

static void
set_provider (QStoreIterPrivate *priv,
              QStoreProvider    *provider)
{
  priv->provider = provider != NULL ? g_object_ref (provider) : NULL;
  priv->closed = provider != NULL ? qstore_provider_get_closed_flag (provider) : NULL;
}

static void
qstore_iter_get_property (GObject    *object,
                          guint       prop_id,
                          GValue     *value,
                          GParamSpec *pspec)
{
  QStoreIterPrivate *priv = qstore_iter_get_instance_private (QSTORE_ITER (object));

  switch (prop_id)
    {
    case PROP_BOUNDS:
      g_value_set_boxed (value, iter_bounds (priv));
      break;

    case PROP_PROVIDER:
      g_value_set_object (value, priv->provider);
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
qstore_iter_set_property (GObject      *object,
                          guint         prop_id,
                          const GValue *value,
                          GParamSpec   *pspec)
{
  QStoreIterPrivate *priv = qstore_iter_get_instance_private (QSTORE_ITER (object));

  switch (prop_id)
    {
    case PROP_BOUNDS:
      if (priv->bounds != NULL)
        {
          g_critical ("The bounds of %s %p are already set: they can be given only once, "
                      "when it is made", G_OBJECT_TYPE_NAME (object), object);
          break;
        }
      priv->bounds = g_value_dup_boxed (value);
      break;

    case PROP_PROVIDER:
      if (priv->provider != NULL)
        {
          g_critical ("The provider of %s %p is already set: it can be given only once, "
                      "when it is made", G_OBJECT_TYPE_NAME (object), object);
          break;
        }
      set_provider (priv, g_value_get_object (value));
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
qstore_iter_class_init (QStoreIterClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = qstore_iter_finalize;
  object_class->get_property = qstore_iter_get_property;
  object_class->set_property = qstore_iter_set_property;

  /* Neither property is construct-only: GObject would then set both (to
   * their defaults when not given) on every construction, a good part of
   * the cost of making an iterator. They are set once instead, when the
   * iterator is made, and refused afterwards. */

  /**
   * QStoreIter:bounds:
   *
   * The range this iterator walks (unbounded, forward, when not given).
   * Set it when the iterator is made; afterwards only
   * [method@Iter.seek] changes it.
   */
  properties[PROP_BOUNDS] =
    g_param_spec_boxed ("bounds", NULL, NULL,
                        QSTORE_TYPE_BOUNDS,
                        (G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));

  /**
   * QStoreIter:provider:
   *
   * The provider the iterator reads from. When set, iterating after the
   * provider is closed fails with %QSTORE_ERROR_CLOSED. Set it when the
   * iterator is made: it cannot be changed afterwards.
   */
  properties[PROP_PROVIDER] =
    g_param_spec_object ("provider", NULL, NULL,
                         qstore_provider_get_type (),
                         (G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));

  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
qstore_iter_init (QStoreIter *self)
{
}

/**
 * qstore_iter_new:
 * @iter_type: a subtype of #QStoreIter
 * @bounds: (nullable): the range to walk, copied; %NULL for all of it
 * @provider: (nullable): the provider the iterator reads from, if it
 *   should fail once that is closed
 *
 * For providers: makes an iterator of @iter_type with its bounds and
 * provider set, at a fraction of the cost of passing them as properties
 * to g_object_new(). The subclass then positions it.
 *
 * Returns: (transfer full) (type QStoreIter): a new iterator of @iter_type
 */
gpointer
qstore_iter_new (GType               iter_type,
                 const QStoreBounds *bounds,
                 QStoreProvider     *provider)
{
  QStoreIter *self;
  QStoreIterPrivate *priv;

  g_return_val_if_fail (g_type_is_a (iter_type, QSTORE_TYPE_ITER) &&
                        !G_TYPE_IS_ABSTRACT (iter_type), NULL);
  g_return_val_if_fail (provider == NULL ||
                        G_TYPE_CHECK_INSTANCE_TYPE (provider, qstore_provider_get_type ()),
                        NULL);

  self = g_object_new (iter_type, NULL);
  priv = qstore_iter_get_instance_private (self);
  priv->bounds = bounds != NULL ? qstore_bounds_copy (bounds) : qstore_bounds_new ();
  set_provider (priv, provider);
  return self;
}

/**
 * qstore_iter_next:
 * @self: a #QStoreIter
 * @error: return location for a #GError
 *
 * Moves to the next entry in range.
 *
 * Returns: %TRUE when positioned on an entry; %FALSE at the end of the
 *   range or on error (then @error is set)
 */
gboolean
qstore_iter_next (QStoreIter  *self,
                  GError     **error)
{
  g_return_val_if_fail (QSTORE_IS_ITER (self), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  return qstore_iter_next_internal (self, error);
}

gboolean
qstore_iter_next_internal (QStoreIter  *self,
                           GError     **error)
{
  QStoreIterPrivate *priv = qstore_iter_get_instance_private (self);
  QStoreIterClass *klass;
  const QStoreBounds *bounds;
  gboolean reverse;
  gint64 limit;

  if (priv->done)
    return FALSE;
  if (priv->closed != NULL && *priv->closed &&
      !qstore_provider_check_open (priv->provider, error))
    {
      priv->done = TRUE;
      return FALSE;
    }

  bounds = iter_bounds (priv);
  if (qstore_bounds_get_limit (bounds, &limit) &&
      priv->returned >= (guint64) MAX (limit, 0))
    {
      priv->done = TRUE;
      return FALSE;
    }

  klass = QSTORE_ITER_GET_CLASS (self);
  reverse = qstore_bounds_get_reverse (bounds);

  for (;;)
    {
      const guint8 *key;
      gsize key_len;

      if (!klass->advance (self, error))
        {
          priv->done = TRUE;
          return FALSE;
        }

      key = klass->peek_key (self, &key_len);
      /* Entries before the near bound are only skipped until the first one
       * inside the range: after that, the provider's order guarantees none. */
      if (!priv->positioned)
        {
          if (!(reverse ? qstore_bounds_below_upper (bounds, key, key_len)
                        : qstore_bounds_above_lower (bounds, key, key_len)))
            continue;
          priv->positioned = TRUE;
        }
      if (!(reverse ? qstore_bounds_above_lower (bounds, key, key_len)
                    : qstore_bounds_below_upper (bounds, key, key_len)))
        {
          priv->done = TRUE;
          return FALSE;
        }

      priv->returned++;
      return TRUE;
    }
}

/**
 * qstore_iter_seek:
 * @self: a #QStoreIter
 * @bounds: (nullable): the range to walk now, or %NULL for the whole store
 *   forward
 * @error: return location for a #GError
 *
 * Starts the iteration over again on @bounds, as a new iterator of the
 * same store would, without making one: a program that walks many short
 * ranges keeps one iterator, as it would keep one cursor. The next
 * [method@Iter.next] gives the first entry of @bounds; the limit counts
 * from there. An iterator made in a snapshot or a transaction still
 * reads that state; one made outside both may read a newer state, as a
 * new iterator would.
 *
 * Returns: %TRUE on success; %FALSE with %QSTORE_ERROR_INVALID_ARGUMENT for
 *   a negative limit, %QSTORE_ERROR_UNSUPPORTED when the provider's
 *   iterators cannot start over, or the error the provider met (after
 *   which the iterator gives nothing more)
 */
gboolean
qstore_iter_seek (QStoreIter          *self,
                  const QStoreBounds  *bounds,
                  GError             **error)
{
  QStoreIterPrivate *priv = qstore_iter_get_instance_private (self);
  QStoreIterClass *klass;
  QStoreBounds *old;
  gboolean ok;

  g_return_val_if_fail (QSTORE_IS_ITER (self), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  klass = QSTORE_ITER_GET_CLASS (self);
  if (klass->restart == NULL)
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_UNSUPPORTED,
                   _("An iterator of type “%s” cannot seek: make a new one"),
                   G_OBJECT_TYPE_NAME (self));
      return FALSE;
    }
  if (bounds != NULL && !qstore_bounds_validate (bounds, error))
    return FALSE;
  if (priv->closed != NULL && *priv->closed &&
      !qstore_provider_check_open (priv->provider, error))
    {
      priv->done = TRUE;
      return FALSE;
    }

  /* The old bounds go only once the provider has let go of them. */
  old = priv->bounds;
  priv->bounds = bounds != NULL ? qstore_bounds_copy (bounds) : qstore_bounds_new ();
  priv->returned = 0;
  priv->positioned = FALSE;
  ok = klass->restart (self, error);
  priv->done = !ok;
  g_clear_pointer (&old, qstore_bounds_free);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_BOUNDS]);
  return ok;
}

/**
 * qstore_iter_peek_key:
 * @self: a #QStoreIter positioned on an entry
 * @key_len: (out): length of the key
 *
 * Gets the key of the current entry without copying it.
 *
 * Returns: (array length=key_len) (transfer none): the current key, valid
 *   until the next call to [method@Iter.next]
 */
const guint8 *
qstore_iter_peek_key (QStoreIter *self,
                      gsize      *key_len)
{
  g_return_val_if_fail (QSTORE_IS_ITER (self), NULL);
  return QSTORE_ITER_GET_CLASS (self)->peek_key (self, key_len);
}

/**
 * qstore_iter_peek_value:
 * @self: a #QStoreIter positioned on an entry
 * @value_len: (out): length of the value
 *
 * Gets the value of the current entry without copying it.
 *
 * Returns: (array length=value_len) (transfer none): the current value,
 *   valid until the next call to [method@Iter.next]
 */
const guint8 *
qstore_iter_peek_value (QStoreIter *self,
                        gsize      *value_len)
{
  g_return_val_if_fail (QSTORE_IS_ITER (self), NULL);
  return QSTORE_ITER_GET_CLASS (self)->peek_value (self, value_len);
}

/**
 * qstore_iter_get_key:
 * @self: a #QStoreIter positioned on an entry
 *
 * Copies the key of the current entry.
 *
 * Returns: (transfer full): a copy of the current key
 */
GBytes *
qstore_iter_get_key (QStoreIter *self)
{
  const guint8 *data;
  gsize len;

  g_return_val_if_fail (QSTORE_IS_ITER (self), NULL);
  data = qstore_iter_peek_key (self, &len);
  return g_bytes_new (data, len);
}

/**
 * qstore_iter_get_value:
 * @self: a #QStoreIter positioned on an entry
 *
 * Copies the value of the current entry.
 *
 * Returns: (transfer full): a copy of the current value
 */
GBytes *
qstore_iter_get_value (QStoreIter *self)
{
  const guint8 *data;
  gsize len;

  g_return_val_if_fail (QSTORE_IS_ITER (self), NULL);
  data = qstore_iter_peek_value (self, &len);
  return g_bytes_new (data, len);
}

/**
 * qstore_iter_get_bounds:
 * @self: a #QStoreIter
 *
 * For providers: the range to position on.
 *
 * Returns: (transfer none): the bounds of @self
 */
const QStoreBounds *
qstore_iter_get_bounds (QStoreIter *self)
{
  QStoreIterPrivate *priv = qstore_iter_get_instance_private (self);

  g_return_val_if_fail (QSTORE_IS_ITER (self), NULL);
  return iter_bounds (priv);
}
