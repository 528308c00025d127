/* qstore-replica-overlay.c: a provider that keeps its writes to itself
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "qstore-error.h"
#include "qstore-i18n-private.h"
#include "qstore-replica-overlay-private.h"

/* Every store name the batch touched has a layer: the base store whose
 * entries show under that name (its own, another's after a rename, or
 * none after a drop) and the entries written over it (a tombstone hides a
 * base entry). Names without a layer read the base store of that name.
 *
 * The net effect is then one restructure of the base provider: names
 * that end up without their own base entries are erased, a layer that
 * shows another base store gets it by a rename (ordered so that a name is
 * moved away before another moves in), and every layer's entries are
 * written under its name. */

typedef struct
{
  char  *base;      /* the base store showing through, or NULL */
  GTree *entries;   /* GBytes key → GBytes value, or the tombstone */
} Layer;

struct _QStoreReplicaOverlay
{
  GObject         parent_instance;

  QStoreProvider *base;
  GHashTable     *layers;      /* name → Layer */
  GHashTable     *base_stores; /* name → QStoreKV of the base */
};

static GBytes *tombstone;

static void qstore_replica_overlay_iface_init (QStoreProviderInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE (QStoreReplicaOverlay, qstore_replica_overlay, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (QSTORE_TYPE_PROVIDER,
                                                      qstore_replica_overlay_iface_init))

/* Layers */

static gint
compare_keys (gconstpointer a,
              gconstpointer b,
              gpointer      data)
{
  return g_bytes_compare (a, b);
}

static GTree *
entries_new (void)
{
  return g_tree_new_full (compare_keys, NULL, (GDestroyNotify) g_bytes_unref,
                          (GDestroyNotify) g_bytes_unref);
}

static void
layer_free (Layer *layer)
{
  g_free (layer->base);
  g_tree_unref (layer->entries);
  g_free (layer);
}

static Layer *
layer_get (QStoreReplicaOverlay *self,
           const char           *name)
{
  Layer *layer = g_hash_table_lookup (self->layers, name);

  if (layer == NULL)
    {
      layer = g_new0 (Layer, 1);
      layer->base = g_strdup (name);
      layer->entries = entries_new ();
      g_hash_table_insert (self->layers, g_strdup (name), layer);
    }
  return layer;
}

static QStoreKV *
base_store (QStoreReplicaOverlay  *self,
            const char            *name,
            GError               **error)
{
  QStoreKV *store = g_hash_table_lookup (self->base_stores, name);

  if (store == NULL)
    {
      store = qstore_provider_open_store (self->base, name, error);
      if (store != NULL)
        g_hash_table_insert (self->base_stores, g_strdup (name), store);
    }
  return store;
}

/* The base store @name reads from, or NULL (nothing from below). */
static const char *
lineage (QStoreReplicaOverlay *self,
         const char           *name)
{
  Layer *layer = g_hash_table_lookup (self->layers, name);

  return layer != NULL ? layer->base : name;
}

/* The store */

#define QSTORE_TYPE_REPLICA_OVERLAY_KV (qstore_replica_overlay_kv_get_type ())
G_DECLARE_FINAL_TYPE (QStoreReplicaOverlayKV, qstore_replica_overlay_kv, QSTORE, REPLICA_OVERLAY_KV, GObject)

struct _QStoreReplicaOverlayKV
{
  GObject               parent_instance;
  QStoreReplicaOverlay *overlay;
  char                 *name;
};

static void qstore_replica_overlay_kv_iface_init (QStoreKVInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE (QStoreReplicaOverlayKV, qstore_replica_overlay_kv, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (QSTORE_TYPE_KV,
                                                      qstore_replica_overlay_kv_iface_init))

static void
qstore_replica_overlay_kv_finalize (GObject *object)
{
  QStoreReplicaOverlayKV *self = QSTORE_REPLICA_OVERLAY_KV (object);

  g_object_unref (self->overlay);
  g_free (self->name);
  G_OBJECT_CLASS (qstore_replica_overlay_kv_parent_class)->finalize (object);
}

static void
qstore_replica_overlay_kv_class_init (QStoreReplicaOverlayKVClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = qstore_replica_overlay_kv_finalize;
}

static void
qstore_replica_overlay_kv_init (QStoreReplicaOverlayKV *self)
{
}

static const char *
kv_get_name (QStoreKV *kv)
{
  return QSTORE_REPLICA_OVERLAY_KV (kv)->name;
}

static QStoreProvider *
kv_get_provider (QStoreKV *kv)
{
  return QSTORE_PROVIDER (QSTORE_REPLICA_OVERLAY_KV (kv)->overlay);
}

static GBytes *
kv_get (QStoreKV      *kv,
        const guint8  *key,
        gsize          key_len,
        GError       **error)
{
  QStoreReplicaOverlayKV *self = QSTORE_REPLICA_OVERLAY_KV (kv);
  Layer *layer = g_hash_table_lookup (self->overlay->layers, self->name);
  const char *from = lineage (self->overlay, self->name);
  QStoreKV *store;

  if (layer != NULL)
    {
      g_autoptr(GBytes) probe = g_bytes_new_static (key, key_len);
      GBytes *value = g_tree_lookup (layer->entries, probe);

      if (value == tombstone)
        return NULL;
      if (value != NULL)
        return g_bytes_ref (value);
    }
  if (from == NULL || !(store = base_store (self->overlay, from, error)))
    return NULL;
  return qstore_kv_get (store, key, key_len, error);
}

/* Iterating: the base store's entries merged with the layer's, walked by
 * key so that writes between steps cannot leave the walk on a freed node. */

#define QSTORE_TYPE_REPLICA_OVERLAY_ITER (qstore_replica_overlay_iter_get_type ())
G_DECLARE_FINAL_TYPE (QStoreReplicaOverlayIter, qstore_replica_overlay_iter, QSTORE, REPLICA_OVERLAY_ITER, QStoreIter)

struct _QStoreReplicaOverlayIter
{
  QStoreIter            parent_instance;
  QStoreReplicaOverlay *overlay;
  char                 *name;
  QStoreIter           *below;        /* the base store's entries, or NULL */
  gboolean              below_valid;
  gboolean              started;
  gboolean              reverse;
  GBytes               *layer_key;    /* the layer's next candidate, or NULL */
  GBytes               *key;          /* the current entry */
  GBytes               *value;
};

G_DEFINE_FINAL_TYPE (QStoreReplicaOverlayIter, qstore_replica_overlay_iter, QSTORE_TYPE_ITER)

static void
overlay_iter_finalize (GObject *object)
{
  QStoreReplicaOverlayIter *self = QSTORE_REPLICA_OVERLAY_ITER (object);

  g_clear_object (&self->below);
  g_clear_pointer (&self->layer_key, g_bytes_unref);
  g_clear_pointer (&self->key, g_bytes_unref);
  g_clear_pointer (&self->value, g_bytes_unref);
  g_object_unref (self->overlay);
  g_free (self->name);
  G_OBJECT_CLASS (qstore_replica_overlay_iter_parent_class)->finalize (object);
}

/* The layer's first key after @after (or at the near bound when NULL) in
 * the direction of the walk. */
static GBytes *
layer_next (QStoreReplicaOverlayIter *self,
            GBytes                   *after)
{
  Layer *layer = g_hash_table_lookup (self->overlay->layers, self->name);
  const QStoreBounds *bounds = qstore_iter_get_bounds (QSTORE_ITER (self));
  GTreeNode *node;

  if (layer == NULL)
    return NULL;
  if (!self->reverse)
    {
      const guint8 *lower;
      gsize len;
      gboolean inclusive;

      if (after != NULL)
        node = g_tree_upper_bound (layer->entries, after);
      else if ((lower = qstore_bounds_get_lower (bounds, &len, &inclusive)) != NULL)
        {
          g_autoptr(GBytes) probe = g_bytes_new_static (lower, len);

          node = g_tree_lower_bound (layer->entries, probe);
        }
      else
        node = g_tree_node_first (layer->entries);
    }
  else
    {
      const guint8 *upper;
      gsize len;
      gboolean inclusive;

      /* The last key below @after, or at most the upper bound */
      if (after != NULL)
        node = g_tree_lower_bound (layer->entries, after);
      else if ((upper = qstore_bounds_get_upper (bounds, &len, &inclusive)) != NULL)
        {
          g_autoptr(GBytes) probe = g_bytes_new_static (upper, len);

          node = g_tree_upper_bound (layer->entries, probe);
        }
      else
        node = NULL;
      node = node != NULL ? g_tree_node_previous (node) : g_tree_node_last (layer->entries);
    }
  return node != NULL ? g_bytes_ref (g_tree_node_key (node)) : NULL;
}

static gboolean
below_step (QStoreReplicaOverlayIter  *self,
            GError                   **error)
{
  GError *local_error = NULL;

  if (self->below == NULL)
    return TRUE;
  self->below_valid = qstore_iter_next (self->below, &local_error);
  if (local_error != NULL)
    {
      g_propagate_error (error, local_error);
      return FALSE;
    }
  return TRUE;
}

static gint
walk_compare (QStoreReplicaOverlayIter *self,
              GBytes                   *a,
              GBytes                   *b)
{
  gint cmp = g_bytes_compare (a, b);

  return self->reverse ? -cmp : cmp;
}

static gboolean
overlay_iter_advance (QStoreIter  *iter,
                      GError     **error)
{
  QStoreReplicaOverlayIter *self = QSTORE_REPLICA_OVERLAY_ITER (iter);

  if (!self->started)
    {
      self->started = TRUE;
      self->layer_key = layer_next (self, NULL);
      if (!below_step (self, error))
        return FALSE;
    }

  for (;;)
    {
      g_autoptr(GBytes) below_key = NULL;
      Layer *layer = g_hash_table_lookup (self->overlay->layers, self->name);
      gboolean from_layer;
      gint cmp;

      if (self->below_valid)
        {
          gsize len;
          const guint8 *data = qstore_iter_peek_key (self->below, &len);

          below_key = g_bytes_new (data, len);
        }
      if (below_key == NULL && self->layer_key == NULL)
        return FALSE;

      cmp = below_key == NULL ? 1 : self->layer_key == NULL ? -1
                                                             : walk_compare (self, below_key, self->layer_key);
      from_layer = cmp >= 0;
      g_clear_pointer (&self->key, g_bytes_unref);
      g_clear_pointer (&self->value, g_bytes_unref);
      if (from_layer)
        {
          GBytes *value = layer != NULL ? g_tree_lookup (layer->entries, self->layer_key) : NULL;
          GBytes *next;

          self->key = g_bytes_ref (self->layer_key);
          self->value = value != NULL && value != tombstone ? g_bytes_ref (value) : NULL;
          next = layer_next (self, self->layer_key);
          g_clear_pointer (&self->layer_key, g_bytes_unref);
          self->layer_key = next;
          /* The layer's entry shadows the base's of the same key. */
          if (cmp == 0 && !below_step (self, error))
            return FALSE;
          if (self->value == NULL)
            continue;
          return TRUE;
        }
      self->key = g_steal_pointer (&below_key);
      {
        gsize len;
        const guint8 *data = qstore_iter_peek_value (self->below, &len);

        self->value = g_bytes_new (data, len);
      }
      if (!below_step (self, error))
        return FALSE;
      return TRUE;
    }
}

static const guint8 *
overlay_iter_peek_key (QStoreIter *iter,
                       gsize      *key_len)
{
  QStoreReplicaOverlayIter *self = QSTORE_REPLICA_OVERLAY_ITER (iter);

  return g_bytes_get_data (self->key, key_len);
}

static const guint8 *
overlay_iter_peek_value (QStoreIter *iter,
                         gsize      *value_len)
{
  QStoreReplicaOverlayIter *self = QSTORE_REPLICA_OVERLAY_ITER (iter);
  const guint8 *data = g_bytes_get_data (self->value, value_len);

  return data != NULL ? data : (const guint8 *) "";
}

static void
qstore_replica_overlay_iter_class_init (QStoreReplicaOverlayIterClass *klass)
{
  QStoreIterClass *iter_class = QSTORE_ITER_CLASS (klass);

  G_OBJECT_CLASS (klass)->finalize = overlay_iter_finalize;
  iter_class->advance = overlay_iter_advance;
  iter_class->peek_key = overlay_iter_peek_key;
  iter_class->peek_value = overlay_iter_peek_value;
}

static void
qstore_replica_overlay_iter_init (QStoreReplicaOverlayIter *self)
{
}

static QStoreIter *
kv_iterate (QStoreKV            *kv,
            const QStoreBounds  *bounds,
            GError             **error)
{
  QStoreReplicaOverlayKV *store = QSTORE_REPLICA_OVERLAY_KV (kv);
  const char *from = lineage (store->overlay, store->name);
  g_autoptr(QStoreBounds) all = bounds == NULL ? qstore_bounds_new () : NULL;
  g_autoptr(QStoreBounds) unlimited = NULL;
  QStoreReplicaOverlayIter *self;

  if (bounds == NULL)
    bounds = all;
  self = qstore_iter_new (QSTORE_TYPE_REPLICA_OVERLAY_ITER, bounds,
                          QSTORE_PROVIDER (store->overlay));
  self->overlay = g_object_ref (store->overlay);
  self->name = g_strdup (store->name);
  self->reverse = qstore_bounds_get_reverse (bounds);
  if (from != NULL)
    {
      QStoreKV *below = base_store (store->overlay, from, error);

      /* Tombstones hide entries, so the limit applies to the merge. */
      unlimited = qstore_bounds_copy (bounds);
      qstore_bounds_unset_limit (unlimited);
      if (below == NULL || !(self->below = qstore_kv_iterate (below, unlimited, error)))
        {
          g_object_unref (self);
          return NULL;
        }
    }
  return QSTORE_ITER (self);
}

static void
qstore_replica_overlay_kv_iface_init (QStoreKVInterface *iface)
{
  iface->get_name = kv_get_name;
  iface->get_provider = kv_get_provider;
  iface->get = kv_get;
  iface->iterate = kv_iterate;
}

/* The provider */

static QStoreKV *
overlay_open_store (QStoreProvider  *provider,
                    const char      *name,
                    GError         **error)
{
  QStoreReplicaOverlayKV *store = g_object_new (QSTORE_TYPE_REPLICA_OVERLAY_KV, NULL);

  store->overlay = g_object_ref (QSTORE_REPLICA_OVERLAY (provider));
  store->name = g_strdup (name);
  return QSTORE_KV (store);
}

static void
apply_op (QStoreReplicaOverlay *self,
          const QStoreWriteOp  *op)
{
  Layer *layer = layer_get (self, qstore_kv_get_name (op->store));
  GBytes *key = g_bytes_new (op->key, op->key_len);

  if (op->kind == QSTORE_WRITE_OP_PUT)
    g_tree_replace (layer->entries, key, g_bytes_new (op->value, op->value_len));
  else
    g_tree_replace (layer->entries, key, g_bytes_ref (tombstone));
}

static gboolean
overlay_write (QStoreProvider       *provider,
               const QStoreWriteOp  *ops,
               gsize                 n_ops,
               QStoreWriteFlags      flags,
               GError              **error)
{
  QStoreReplicaOverlay *self = QSTORE_REPLICA_OVERLAY (provider);

  for (gsize i = 0; i < n_ops; i++)
    apply_op (self, &ops[i]);
  return TRUE;
}

/* Whether @name shows any entry. */
static gboolean
shows_entries (QStoreReplicaOverlay  *self,
               const char            *name,
               gboolean              *shows,
               GError               **error)
{
  g_autoptr(QStoreKV) store = overlay_open_store (QSTORE_PROVIDER (self), name, NULL);
  g_autoptr(QStoreBounds) bounds = qstore_bounds_new ();
  g_autoptr(QStoreIter) iter = NULL;
  GError *local_error = NULL;

  qstore_bounds_set_limit (bounds, 1);
  if (!(iter = kv_iterate (store, bounds, error)))
    return FALSE;
  *shows = qstore_iter_next (iter, &local_error);
  if (local_error != NULL)
    {
      g_propagate_error (error, local_error);
      return FALSE;
    }
  return TRUE;
}

static Layer *
layer_copy (const Layer *layer)
{
  Layer *copy = g_new0 (Layer, 1);
  GTreeNode *node;

  copy->base = g_strdup (layer->base);
  copy->entries = entries_new ();
  for (node = g_tree_node_first (layer->entries); node != NULL; node = g_tree_node_next (node))
    g_tree_insert (copy->entries, g_bytes_ref (g_tree_node_key (node)),
                   g_bytes_ref (g_tree_node_value (node)));
  return copy;
}

static gboolean
overlay_restructure (QStoreProvider       *provider,
                     const char * const   *drop,
                     const char * const   *rename_from,
                     const char * const   *rename_to,
                     const QStoreWriteOp  *ops,
                     gsize                 n_ops,
                     GError              **error)
{
  QStoreReplicaOverlay *self = QSTORE_REPLICA_OVERLAY (provider);
  g_autoptr(GHashTable) saved = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  GHashTableIter iter;
  const char *name;
  Layer *layer;

  /* All or nothing: what a failed rename would leave half done comes back
   * from these copies. */
  for (guint i = 0; rename_from[i] != NULL; i++)
    for (guint k = 0; k < 2; k++)
      {
        const char *touched = k == 0 ? rename_from[i] : rename_to[i];

        if (!g_hash_table_contains (saved, touched))
          {
            layer = g_hash_table_lookup (self->layers, touched);
            g_hash_table_insert (saved, g_strdup (touched), layer != NULL ? layer_copy (layer) : NULL);
          }
      }

  for (guint i = 0; drop[i] != NULL; i++)
    {
      layer = layer_get (self, drop[i]);
      g_clear_pointer (&layer->base, g_free);
      g_tree_unref (layer->entries);
      layer->entries = entries_new ();
    }
  for (guint i = 0; rename_from[i] != NULL; i++)
    {
      Layer *from, *to;
      gboolean occupied = FALSE;

      if (!shows_entries (self, rename_to[i], &occupied, error) || occupied)
        {
          if (occupied)
            g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_EXISTS,
                         _("Store “%s” cannot take the entries of “%s”: it holds entries of its own"),
                         rename_to[i], rename_from[i]);
          g_hash_table_iter_init (&iter, saved);
          while (g_hash_table_iter_next (&iter, (gpointer *) &name, (gpointer *) &layer))
            if (layer != NULL)
              g_hash_table_replace (self->layers, g_strdup (name), layer);
            else
              g_hash_table_remove (self->layers, name);
          g_hash_table_steal_all (saved);
          return FALSE;
        }
      from = layer_get (self, rename_from[i]);
      to = layer_get (self, rename_to[i]);
      g_free (to->base);
      to->base = g_steal_pointer (&from->base);
      g_tree_unref (to->entries);
      to->entries = g_steal_pointer (&from->entries);
      from->entries = entries_new ();
    }
  g_hash_table_iter_init (&iter, saved);
  while (g_hash_table_iter_next (&iter, NULL, (gpointer *) &layer))
    if (layer != NULL)
      layer_free (layer);
  return overlay_write (provider, ops, n_ops, 0, error);
}

static char **
overlay_list_stores (QStoreProvider  *provider,
                     GError         **error)
{
  QStoreReplicaOverlay *self = QSTORE_REPLICA_OVERLAY (provider);
  g_autoptr(GPtrArray) names = g_ptr_array_new ();
  g_auto(GStrv) below = qstore_provider_list_stores (self->base, error);
  GHashTableIter iter;
  const char *name;

  if (below == NULL)
    return NULL;
  for (guint i = 0; below[i] != NULL; i++)
    if (!g_hash_table_contains (self->layers, below[i]))
      g_ptr_array_add (names, g_strdup (below[i]));
  g_hash_table_iter_init (&iter, self->layers);
  while (g_hash_table_iter_next (&iter, (gpointer *) &name, NULL))
    {
      gboolean shows = FALSE;

      if (!shows_entries (self, name, &shows, error))
        {
          g_ptr_array_set_free_func (names, g_free);
          return NULL;
        }
      if (shows)
        g_ptr_array_add (names, g_strdup (name));
    }
  g_ptr_array_add (names, NULL);
  return (char **) g_ptr_array_steal (names, NULL);
}

static gsize
overlay_get_max_key_length (QStoreProvider *provider)
{
  return qstore_provider_get_max_key_length (QSTORE_REPLICA_OVERLAY (provider)->base);
}

static void
overlay_close (QStoreProvider *provider)
{
  /* The provider below is its owner's. */
}

static void
qstore_replica_overlay_iface_init (QStoreProviderInterface *iface)
{
  iface->capabilities = QSTORE_CAPABILITY_ATOMIC_BATCH;
  iface->open_store = overlay_open_store;
  iface->write = overlay_write;
  iface->restructure = overlay_restructure;
  iface->list_stores = overlay_list_stores;
  iface->get_max_key_length = overlay_get_max_key_length;
  iface->close = overlay_close;
}

static void
qstore_replica_overlay_finalize (GObject *object)
{
  QStoreReplicaOverlay *self = QSTORE_REPLICA_OVERLAY (object);

  g_hash_table_unref (self->layers);
  g_hash_table_unref (self->base_stores);
  g_object_unref (self->base);
  G_OBJECT_CLASS (qstore_replica_overlay_parent_class)->finalize (object);
}

static void
qstore_replica_overlay_class_init (QStoreReplicaOverlayClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = qstore_replica_overlay_finalize;
  tombstone = g_bytes_new_static ("", 0);
}

static void
qstore_replica_overlay_init (QStoreReplicaOverlay *self)
{
  self->layers = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, (GDestroyNotify) layer_free);
  self->base_stores = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_object_unref);
}

QStoreProvider *
qstore_replica_overlay_new (QStoreProvider *base)
{
  QStoreReplicaOverlay *self = g_object_new (QSTORE_TYPE_REPLICA_OVERLAY, NULL);

  self->base = g_object_ref (base);
  /* Without the atomic batch below, the database over it commits as it
   * would below: the same code paths, kept to memory. */
  qstore_provider_init_state (QSTORE_PROVIDER (self), qstore_provider_get_name (base),
                              qstore_provider_get_location (base),
                              qstore_provider_get_flags (base) & QSTORE_OPEN_NO_ATOMIC_BATCH);
  return QSTORE_PROVIDER (self);
}

/* Flushing */

typedef struct
{
  char *from;
  char *to;
} Rename;

gboolean
qstore_replica_overlay_flush (QStoreReplicaOverlay  *self,
                              GError               **error)
{
  g_autoptr(GPtrArray) drop = g_ptr_array_new ();
  g_autoptr(GPtrArray) from = g_ptr_array_new ();
  g_autoptr(GPtrArray) to = g_ptr_array_new ();
  g_autoptr(GArray) renames = g_array_new (FALSE, FALSE, sizeof (Rename));
  g_autoptr(GHashTable) sources = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr(GArray) ops = g_array_new (FALSE, FALSE, sizeof (QStoreWriteOp));
  GHashTableIter iter;
  const char *name;
  Layer *layer;

  g_hash_table_iter_init (&iter, self->layers);
  while (g_hash_table_iter_next (&iter, (gpointer *) &name, (gpointer *) &layer))
    if (layer->base != NULL && !g_str_equal (layer->base, name))
      {
        Rename rename = { layer->base, (char *) name };

        g_array_append_val (renames, rename);
        g_hash_table_add (sources, layer->base);
      }

  /* A name that does not end up showing its own base entries is erased,
   * unless a rename moves them away anyway. */
  g_hash_table_iter_init (&iter, self->layers);
  while (g_hash_table_iter_next (&iter, (gpointer *) &name, (gpointer *) &layer))
    if ((layer->base == NULL || !g_str_equal (layer->base, name)) &&
        !g_hash_table_contains (sources, name))
      g_ptr_array_add (drop, (char *) name);

  /* Renames whose destination is not still to be moved away go first. */
  while (renames->len > 0)
    {
      gboolean progressed = FALSE;

      for (guint i = 0; i < renames->len; i++)
        {
          Rename *rename = &g_array_index (renames, Rename, i);
          gboolean waits = FALSE;

          for (guint k = 0; !waits && k < renames->len; k++)
            waits = k != i && g_str_equal (g_array_index (renames, Rename, k).from, rename->to);
          if (waits)
            continue;
          g_ptr_array_add (from, rename->from);
          g_ptr_array_add (to, rename->to);
          g_array_remove_index (renames, i);
          progressed = TRUE;
          break;
        }
      if (!progressed)
        {
          g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_UNSUPPORTED,
                       _("The DDL batch exchanges the names of stores in a cycle (such as "
                       "“%s” and “%s”): rename them in two batches"),
                       g_array_index (renames, Rename, 0).from,
                       g_array_index (renames, Rename, 0).to);
          return FALSE;
        }
    }

  g_hash_table_iter_init (&iter, self->layers);
  while (g_hash_table_iter_next (&iter, (gpointer *) &name, (gpointer *) &layer))
    {
      QStoreKV *store;
      GTreeNode *node;

      if (g_tree_nnodes (layer->entries) == 0)
        continue;
      if (!(store = base_store (self, name, error)))
        return FALSE;
      for (node = g_tree_node_first (layer->entries); node != NULL; node = g_tree_node_next (node))
        {
          GBytes *key = g_tree_node_key (node), *value = g_tree_node_value (node);
          QStoreWriteOp op = { 0 };

          op.store = store;
          op.key = g_bytes_get_data (key, &op.key_len);
          if (value == tombstone)
            op.kind = QSTORE_WRITE_OP_DELETE;
          else
            {
              op.kind = QSTORE_WRITE_OP_PUT;
              op.value = g_bytes_get_data (value, &op.value_len);
              if (op.value == NULL)
                op.value = (const guint8 *) "";
            }
          g_array_append_val (ops, op);
        }
    }

  g_ptr_array_add (drop, NULL);
  g_ptr_array_add (from, NULL);
  g_ptr_array_add (to, NULL);
  return qstore_provider_restructure (self->base, (const char * const *) drop->pdata,
                                      (const char * const *) from->pdata,
                                      (const char * const *) to->pdata,
                                      (const QStoreWriteOp *) ops->data, ops->len, error);
}
