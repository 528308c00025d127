/* qstore-memory-provider.c: ordered maps in memory
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include <qstore.h>

#include "qstore-fault-private.h"
#include "qstore-i18n-private.h"

/* Each store is a sorted map (GTree of GBytes → GBytes). A map is shared,
 * copy-on-write, between the provider and the snapshots and iterators that
 * read it: a writer that finds its map shared copies it first, so readers
 * keep seeing the state they started with. Keys and values are immutable
 * GBytes, so a copy only duplicates the tree's nodes. The table of maps is
 * shared the same way, so a snapshot is one reference, not a copy of it.
 *
 * A map that serves many point reads gets a hash index beside its tree
 * (a binary search is a dozen dependent loads and calls; a hash probe is
 * one or two). It is built by whichever reader gets there first, only
 * after the map served about a quarter as many point reads as it holds
 * entries, so a map that changes between reads never pays more than a
 * constant factor for it; a writer drops it when it changes the map, which
 * it does only when no reader holds the map. A slot holds what a probe
 * compares and what a hit returns: for a key of up to 8 bytes, a probe
 * reads no memory but the slot's. */

typedef struct
{
  const guint8 *key;      /* NULL: a free slot */
  guint64       head;     /* the key's first 8 bytes, zero-padded */
  gsize         key_len;
  GBytes       *value;
  const guint8 *value_data;
  gsize         value_len;
} Slot;

typedef struct
{
  gsize mask;
  Slot  slots[];
} HashIndex;

typedef struct
{
  gatomicrefcount  ref;
  GTree           *tree;
  gint             lookups;  /* point reads since the last change (atomic) */
  HashIndex       *index;    /* atomic; NULL until built */
} Map;

/* The maps of every store: store name → Map. */
typedef struct
{
  gatomicrefcount  ref;
  GHashTable      *maps;
} MapSet;

static int
compare_keys (gconstpointer a,
              gconstpointer b,
              gpointer      user_data)
{
  gsize a_len, b_len;
  const guint8 *a_data = g_bytes_get_data ((GBytes *) a, &a_len);
  const guint8 *b_data = g_bytes_get_data ((GBytes *) b, &b_len);

  return qstore_key_compare (a_data, a_len, b_data, b_len);
}

static Map *
map_new (void)
{
  Map *map = g_new0 (Map, 1);

  g_atomic_ref_count_init (&map->ref);
  map->tree = g_tree_new_full (compare_keys, NULL,
                               (GDestroyNotify) g_bytes_unref,
                               (GDestroyNotify) g_bytes_unref);
  return map;
}

static Map *
map_ref (Map *map)
{
  g_atomic_ref_count_inc (&map->ref);
  return map;
}

static void
map_unref (Map *map)
{
  if (map != NULL && g_atomic_ref_count_dec (&map->ref))
    {
      g_tree_unref (map->tree);
      g_free (map->index);
      g_free (map);
    }
}

/* A writer is about to change @map, which no reader holds. */
static void
map_changed (Map *map)
{
  g_clear_pointer (&map->index, g_free);
  map->lookups = 0;
}

static gboolean
copy_entry (gpointer key,
            gpointer value,
            gpointer user_data)
{
  g_tree_insert (user_data, g_bytes_ref (key), g_bytes_ref (value));
  return FALSE;
}

static Map *
map_copy (Map *map)
{
  Map *copy = map_new ();

  g_tree_foreach (map->tree, copy_entry, copy->tree);
  return copy;
}

static MapSet *
map_set_new (void)
{
  MapSet *set = g_new0 (MapSet, 1);

  g_atomic_ref_count_init (&set->ref);
  set->maps = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, (GDestroyNotify) map_unref);
  return set;
}

static MapSet *
map_set_ref (MapSet *set)
{
  g_atomic_ref_count_inc (&set->ref);
  return set;
}

static void
map_set_unref (MapSet *set)
{
  if (set != NULL && g_atomic_ref_count_dec (&set->ref))
    {
      g_hash_table_unref (set->maps);
      g_free (set);
    }
}

/* With the lock held: a set of the same maps, each shared. */
static MapSet *
map_set_copy (MapSet *set)
{
  MapSet *copy = map_set_new ();
  GHashTableIter iter;
  gpointer name, map;

  g_hash_table_iter_init (&iter, set->maps);
  while (g_hash_table_iter_next (&iter, &name, &map))
    g_hash_table_insert (copy->maps, g_strdup (name), map_ref (map));
  return copy;
}

/* A probe for lookups: wraps the caller's bytes without copying them. */
static GBytes *
probe_new (const guint8 *key,
           gsize         key_len)
{
  return g_bytes_new_static (key, key_len);
}

/* Provider */

#define QSTORE_TYPE_MEMORY_PROVIDER (qstore_memory_provider_get_type ())
G_DECLARE_FINAL_TYPE (QStoreMemoryProvider, qstore_memory_provider, QSTORE, MEMORY_PROVIDER, GObject)

struct _QStoreMemoryProvider
{
  GObject     parent_instance;
  GMutex      lock;
  MapSet     *set;  /* a store absent from it is empty */
};

static void qstore_memory_provider_iface_init (QStoreProviderInterface *iface);
static void qstore_memory_provider_initable_iface_init (GInitableIface *iface);

/* GInitable comes first: GJS 1.74 gives an object of a type without
 * introspection data the methods of its last interface only. */
G_DEFINE_DYNAMIC_TYPE_EXTENDED (QStoreMemoryProvider, qstore_memory_provider, G_TYPE_OBJECT, G_TYPE_FLAG_FINAL,
                                G_IMPLEMENT_INTERFACE_DYNAMIC (G_TYPE_INITABLE,
                                                               qstore_memory_provider_initable_iface_init)
                                G_IMPLEMENT_INTERFACE_DYNAMIC (QSTORE_TYPE_PROVIDER,
                                                               qstore_memory_provider_iface_init))

/* Returns a new reference to the current map of @name, or NULL when empty. */
static Map *
provider_get_map (QStoreMemoryProvider *self,
                  const char           *name)
{
  Map *map;

  g_mutex_lock (&self->lock);
  map = g_hash_table_lookup (self->set->maps, name);
  if (map != NULL)
    map_ref (map);
  g_mutex_unlock (&self->lock);
  return map;
}

/* With the lock held: the provider's set of maps, which no snapshot
 * shares; its maps may still be shared (see writable_map()). */
static GHashTable *
writable_set (QStoreMemoryProvider *self)
{
  if (g_atomic_int_get ((gint *) &self->set->ref) > 1)
    {
      MapSet *copy = map_set_copy (self->set);

      map_set_unref (self->set);
      self->set = copy;
    }
  return self->set->maps;
}

/* With the lock held: a map of @name in @maps (a set no snapshot shares)
 * that no reader shares, about to change. */
static Map *
writable_map (GHashTable *maps,
              const char *name)
{
  Map *map = g_hash_table_lookup (maps, name);

  if (map == NULL)
    {
      map = map_new ();
      g_hash_table_insert (maps, g_strdup (name), map);
    }
  else if (g_atomic_int_get ((gint *) &map->ref) > 1)
    {
      map = map_copy (map);
      g_hash_table_insert (maps, g_strdup (name), map);
    }
  else
    map_changed (map);
  return map;
}

/* Store */

#define QSTORE_TYPE_MEMORY_STORE (qstore_memory_store_get_type ())
G_DECLARE_FINAL_TYPE (QStoreMemoryStore, qstore_memory_store, QSTORE, MEMORY_STORE, GObject)

struct _QStoreMemoryStore
{
  GObject               parent_instance;
  QStoreMemoryProvider *provider;
  char                 *name;
};

static void qstore_memory_store_kv_iface_init (QStoreKVInterface *iface);

G_DEFINE_DYNAMIC_TYPE_EXTENDED (QStoreMemoryStore, qstore_memory_store, G_TYPE_OBJECT, G_TYPE_FLAG_FINAL,
                                G_IMPLEMENT_INTERFACE_DYNAMIC (QSTORE_TYPE_KV,
                                                               qstore_memory_store_kv_iface_init))

/* Iterator: walks one map it holds a reference on. */

#define QSTORE_TYPE_MEMORY_ITER (qstore_memory_iter_get_type ())
G_DECLARE_FINAL_TYPE (QStoreMemoryIter, qstore_memory_iter, QSTORE, MEMORY_ITER, QStoreIter)

struct _QStoreMemoryIter
{
  QStoreIter    parent_instance;
  Map          *map;
  GTreeNode    *node;
  gboolean      started;
  gboolean      reverse;
  /* The entry of node, read once: the walk peeks at each key twice. */
  const guint8 *key;
  gsize         key_len;
  GBytes       *value;
};

G_DEFINE_DYNAMIC_TYPE_EXTENDED (QStoreMemoryIter, qstore_memory_iter, QSTORE_TYPE_ITER, G_TYPE_FLAG_FINAL, {})

static void
qstore_memory_iter_finalize (GObject *object)
{
  QStoreMemoryIter *self = QSTORE_MEMORY_ITER (object);

  g_clear_pointer (&self->map, map_unref);

  G_OBJECT_CLASS (qstore_memory_iter_parent_class)->finalize (object);
}

static GTreeNode *
first_node (QStoreMemoryIter *self)
{
  const QStoreBounds *bounds = qstore_iter_get_bounds (QSTORE_ITER (self));
  g_autoptr(GBytes) probe = NULL;
  const guint8 *key;
  gsize key_len;
  GTreeNode *node;

  if (!qstore_bounds_get_reverse (bounds))
    {
      key = qstore_bounds_get_lower (bounds, &key_len, NULL);
      if (key == NULL)
        return g_tree_node_first (self->map->tree);
      probe = probe_new (key, key_len);
      return g_tree_lower_bound (self->map->tree, probe);
    }

  key = qstore_bounds_get_upper (bounds, &key_len, NULL);
  if (key == NULL)
    return g_tree_node_last (self->map->tree);
  /* The last node at or below the bound: the one before the first above it. */
  probe = probe_new (key, key_len);
  node = g_tree_upper_bound (self->map->tree, probe);
  return node ? g_tree_node_previous (node) : g_tree_node_last (self->map->tree);
}

/* The iterator's vfuncs below run once or twice per entry of every walk,
 * and are only ever called on an iterator of this class: they cast
 * without a check. */
static gboolean
qstore_memory_iter_advance (QStoreIter  *iter,
                            GError     **error)
{
  QStoreMemoryIter *self = (QStoreMemoryIter *) iter;

  if (self->map == NULL)
    return FALSE;
  if (!self->started)
    {
      self->started = TRUE;
      self->reverse = qstore_bounds_get_reverse (qstore_iter_get_bounds (iter));
      self->node = first_node (self);
    }
  else if (self->node != NULL)
    self->node = self->reverse ? g_tree_node_previous (self->node) : g_tree_node_next (self->node);
  if (self->node == NULL)
    return FALSE;
  self->key = g_bytes_get_data (g_tree_node_key (self->node), &self->key_len);
  self->value = g_tree_node_value (self->node);
  return TRUE;
}

/* The map stays the one the iterator was made on: a seek reads the same
 * state. */
static gboolean
qstore_memory_iter_restart (QStoreIter  *iter,
                            GError     **error)
{
  QStoreMemoryIter *self = (QStoreMemoryIter *) iter;

  self->started = FALSE;
  self->node = NULL;
  return TRUE;
}

static const guint8 *
qstore_memory_iter_peek_key (QStoreIter *iter,
                             gsize      *key_len)
{
  QStoreMemoryIter *self = (QStoreMemoryIter *) iter;

  if (key_len != NULL)
    *key_len = self->key_len;
  return self->key;
}

static const guint8 *
qstore_memory_iter_peek_value (QStoreIter *iter,
                               gsize      *value_len)
{
  QStoreMemoryIter *self = (QStoreMemoryIter *) iter;
  const guint8 *data = g_bytes_get_data (self->value, value_len);

  return data ? data : (const guint8 *) "";
}

static void
qstore_memory_iter_class_init (QStoreMemoryIterClass *klass)
{
  QStoreIterClass *iter_class = QSTORE_ITER_CLASS (klass);

  G_OBJECT_CLASS (klass)->finalize = qstore_memory_iter_finalize;
  iter_class->advance = qstore_memory_iter_advance;
  iter_class->peek_key = qstore_memory_iter_peek_key;
  iter_class->peek_value = qstore_memory_iter_peek_value;
  iter_class->restart = qstore_memory_iter_restart;
}

static void
qstore_memory_iter_class_finalize (QStoreMemoryIterClass *klass)
{
}

static void
qstore_memory_iter_init (QStoreMemoryIter *self)
{
}

/* Takes @map (may be NULL: an empty store). */
static QStoreIter *
memory_iter_new (QStoreProvider     *provider,
                 Map                *map,
                 const QStoreBounds *bounds)
{
  QStoreMemoryIter *iter = qstore_iter_new (QSTORE_TYPE_MEMORY_ITER, bounds, provider);

  iter->map = map;
  return QSTORE_ITER (iter);
}

typedef struct
{
  const guint8 *key;
  gsize         key_len;
} Probe;

static int
search_probe (gconstpointer node_key,
              gconstpointer user_data)
{
  const Probe *probe = user_data;
  gsize len;
  const guint8 *data = g_bytes_get_data ((GBytes *) node_key, &len);

  return qstore_key_compare (probe->key, probe->key_len, data, len);
}

static guint64
key_head (const guint8 *key,
          gsize         key_len)
{
  guint64 head = 0;

  memcpy (&head, key, MIN (key_len, 8));
  return head;
}

static guint64
key_hash (const guint8 *key,
          gsize         key_len)
{
  guint64 h = G_GUINT64_CONSTANT (0x9E3779B97F4A7C15) ^ key_len;
  guint64 word;

  for (; key_len >= 8; key += 8, key_len -= 8)
    {
      memcpy (&word, key, 8);
      h = (h ^ word) * G_GUINT64_CONSTANT (0xBF58476D1CE4E5B9);
      h ^= h >> 29;
    }
  word = 0;
  memcpy (&word, key, key_len);
  h = (h ^ word) * G_GUINT64_CONSTANT (0x94D049BB133111EB);
  return h ^ (h >> 32);
}

static gboolean
index_entry (gpointer key,
             gpointer value,
             gpointer user_data)
{
  HashIndex *index = user_data;
  gsize key_len, value_len;
  const guint8 *key_data = g_bytes_get_data (key, &key_len);
  const guint8 *value_data = g_bytes_get_data (value, &value_len);
  gsize i;

  /* No write stores an empty key, nor does a read ask for one; a NULL
   * key marks a free slot. */
  if (key_len == 0)
    return FALSE;
  for (i = key_hash (key_data, key_len) & index->mask;
       index->slots[i].key != NULL;
       i = (i + 1) & index->mask)
    ;
  index->slots[i] = (Slot) { key_data, key_head (key_data, key_len), key_len, value,
                            value_data != NULL ? value_data : (const guint8 *) "", value_len };
  return FALSE;
}

/* The hash index of @map, which the caller holds, built now if the map
 * served enough point reads to pay for it; NULL for none. */
static HashIndex *
map_get_index (Map *map)
{
  HashIndex *index = g_atomic_pointer_get (&map->index);
  guint n = (guint) g_tree_nnodes (map->tree);
  gsize size = 4;

  if (G_LIKELY (index != NULL))
    return index;
  if (n < 8 || (guint) g_atomic_int_add (&map->lookups, 1) < n / 4)
    return NULL;

  /* At most half full: a probe mostly stops at its first or second slot. */
  while (size < 2 * (gsize) n)
    size *= 2;
  index = g_malloc0 (sizeof (HashIndex) + size * sizeof (Slot));
  index->mask = size - 1;
  g_tree_foreach (map->tree, index_entry, index);
  /* Another reader may have built it at the same time: keep the first. */
  if (!g_atomic_pointer_compare_and_exchange (&map->index, NULL, index))
    {
      g_free (index);
      return g_atomic_pointer_get (&map->index);
    }
  return index;
}

/* A point read searches with the caller's bytes as they are: no probe
 * object is made for it. Returns the value, and its bytes in @data and
 * @len. */
static GBytes *
map_lookup (Map           *map,
            const guint8  *key,
            gsize          key_len,
            const guint8 **data,
            gsize         *len)
{
  HashIndex *index;
  guint64 head;

  if (map == NULL)
    return NULL;
  index = map_get_index (map);
  if (index == NULL)
    {
      Probe probe = { key, key_len };
      GBytes *found = g_tree_search (map->tree, search_probe, &probe);

      if (found != NULL)
        {
          *data = g_bytes_get_data (found, len);
          if (*data == NULL)
            *data = (const guint8 *) "";
        }
      return found;
    }

  head = key_head (key, key_len);
  for (gsize i = key_hash (key, key_len) & index->mask;
       index->slots[i].key != NULL;
       i = (i + 1) & index->mask)
    {
      const Slot *slot = &index->slots[i];

      if (slot->head == head && slot->key_len == key_len &&
          (key_len <= 8 || memcmp (slot->key + 8, key + 8, key_len - 8) == 0))
        {
          *data = slot->value_data;
          *len = slot->value_len;
          return slot->value;
        }
    }
  return NULL;
}

/* Store implementation */

static const char *
qstore_memory_store_get_name (QStoreKV *kv)
{
  return QSTORE_MEMORY_STORE (kv)->name;
}

static QStoreProvider *
qstore_memory_store_get_provider (QStoreKV *kv)
{
  /* An upcast: the provider implements the interface. */
  return (QStoreProvider *) QSTORE_MEMORY_STORE (kv)->provider;
}

static GBytes *
qstore_memory_store_get (QStoreKV      *kv,
                         const guint8  *key,
                         gsize          key_len,
                         GError       **error)
{
  QStoreMemoryStore *self = QSTORE_MEMORY_STORE (kv);
  Map *map = provider_get_map (self->provider, self->name);
  const guint8 *data;
  gsize len;
  GBytes *value = map_lookup (map, key, key_len, &data, &len);

  if (value != NULL)
    g_bytes_ref (value);
  map_unref (map);
  return value;
}

static gboolean
qstore_memory_store_get_into (QStoreKV      *kv,
                              const guint8  *key,
                              gsize          key_len,
                              GByteArray    *value,
                              GError       **error)
{
  QStoreMemoryStore *self = QSTORE_MEMORY_STORE (kv);
  Map *map = provider_get_map (self->provider, self->name);
  const guint8 *data;
  gsize len;
  gboolean found = map_lookup (map, key, key_len, &data, &len) != NULL;

  if (found)
    {
      g_byte_array_set_size (value, len);
      if (len > 0)
        memcpy (value->data, data, len);
    }
  map_unref (map);
  return found;
}

static QStoreIter *
qstore_memory_store_iterate (QStoreKV            *kv,
                             const QStoreBounds  *bounds,
                             GError             **error)
{
  QStoreMemoryStore *self = QSTORE_MEMORY_STORE (kv);

  return memory_iter_new (QSTORE_PROVIDER (self->provider),
                          provider_get_map (self->provider, self->name), bounds);
}

static void
qstore_memory_store_finalize (GObject *object)
{
  QStoreMemoryStore *self = QSTORE_MEMORY_STORE (object);

  g_clear_object (&self->provider);
  g_free (self->name);

  G_OBJECT_CLASS (qstore_memory_store_parent_class)->finalize (object);
}

static void
qstore_memory_store_kv_iface_init (QStoreKVInterface *iface)
{
  iface->get_name = qstore_memory_store_get_name;
  iface->get_provider = qstore_memory_store_get_provider;
  iface->get = qstore_memory_store_get;
  iface->get_into = qstore_memory_store_get_into;
  iface->iterate = qstore_memory_store_iterate;
}

static void
qstore_memory_store_class_init (QStoreMemoryStoreClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = qstore_memory_store_finalize;
}

static void
qstore_memory_store_class_finalize (QStoreMemoryStoreClass *klass)
{
}

static void
qstore_memory_store_init (QStoreMemoryStore *self)
{
}

/* Snapshot: a reference on the set of maps as it was when the snapshot
 * began. */

#define QSTORE_TYPE_MEMORY_SNAPSHOT (qstore_memory_snapshot_get_type ())
G_DECLARE_FINAL_TYPE (QStoreMemorySnapshot, qstore_memory_snapshot, QSTORE, MEMORY_SNAPSHOT, QStoreSnapshot)

#define N_RECENT 8

struct _QStoreMemorySnapshot
{
  QStoreSnapshot  parent_instance;
  MapSet         *set;
  /* The maps of the stores read last (a join reads a few in turn), so
   * most reads find theirs without hashing its name. Each store is held:
   * its address is not reused for another while it is here. */
  struct
  {
    QStoreKV     *store;
    Map          *map;     /* borrowed from set, which no one changes */
  }               recent[N_RECENT];
  guint           next_recent;
};

G_DEFINE_DYNAMIC_TYPE_EXTENDED (QStoreMemorySnapshot, qstore_memory_snapshot, QSTORE_TYPE_SNAPSHOT, G_TYPE_FLAG_FINAL, {})

/* The map of @store, a store of this provider (QStoreSnapshot checked
 * that), in the snapshot; NULL when empty. */
static Map *
snapshot_map (QStoreMemorySnapshot *self,
              QStoreKV             *store)
{
  guint slot;
  Map *map;

  for (guint i = 0; i < N_RECENT; i++)
    if (self->recent[i].store == store)
      return self->recent[i].map;

  map = g_hash_table_lookup (self->set->maps, QSTORE_MEMORY_STORE (store)->name);
  slot = self->next_recent++ % N_RECENT;
  g_set_object (&self->recent[slot].store, store);
  self->recent[slot].map = map;
  return map;
}

static gboolean
qstore_memory_snapshot_lookup (QStoreSnapshot  *snapshot,
                               QStoreKV        *store,
                               const guint8    *key,
                               gsize            key_len,
                               const guint8   **value,
                               gsize           *value_len,
                               GError         **error)
{
  /* Only ever called on a snapshot of this class: no checked cast on
   * this path, which every point read takes. */
  return map_lookup (snapshot_map ((QStoreMemorySnapshot *) snapshot, store),
                     key, key_len, value, value_len) != NULL;
}

static QStoreIter *
qstore_memory_snapshot_iterate (QStoreSnapshot      *snapshot,
                                QStoreKV            *store,
                                const QStoreBounds  *bounds,
                                GError             **error)
{
  Map *map = snapshot_map (QSTORE_MEMORY_SNAPSHOT (snapshot), store);

  return memory_iter_new (qstore_snapshot_get_provider (snapshot),
                          map ? map_ref (map) : NULL, bounds);
}

static void
qstore_memory_snapshot_finalize (GObject *object)
{
  QStoreMemorySnapshot *self = QSTORE_MEMORY_SNAPSHOT (object);

  for (guint i = 0; i < N_RECENT; i++)
    g_clear_object (&self->recent[i].store);
  g_clear_pointer (&self->set, map_set_unref);

  G_OBJECT_CLASS (qstore_memory_snapshot_parent_class)->finalize (object);
}

static void
qstore_memory_snapshot_class_init (QStoreMemorySnapshotClass *klass)
{
  QStoreSnapshotClass *snapshot_class = QSTORE_SNAPSHOT_CLASS (klass);

  G_OBJECT_CLASS (klass)->finalize = qstore_memory_snapshot_finalize;
  snapshot_class->lookup = qstore_memory_snapshot_lookup;
  snapshot_class->iterate = qstore_memory_snapshot_iterate;
}

static void
qstore_memory_snapshot_class_finalize (QStoreMemorySnapshotClass *klass)
{
}

static void
qstore_memory_snapshot_init (QStoreMemorySnapshot *self)
{
}

/* Provider implementation */

static gboolean
qstore_memory_provider_initable_init (GInitable     *initable,
                                      GCancellable  *cancellable,
                                      GError       **error)
{
  QStoreMemoryProvider *self = QSTORE_MEMORY_PROVIDER (initable);
  const char *location = qstore_provider_get_location (QSTORE_PROVIDER (self));

  if (location[0] != '\0')
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                   _("The memory provider takes no location (got “%s”): use memory:"),
                   location);
      return FALSE;
    }
  self->set = map_set_new ();
  return TRUE;
}

static QStoreKV *
qstore_memory_provider_open_store (QStoreProvider  *provider,
                                   const char      *name,
                                   GError         **error)
{
  QStoreMemoryStore *store = g_object_new (QSTORE_TYPE_MEMORY_STORE, NULL);

  store->provider = g_object_ref (QSTORE_MEMORY_PROVIDER (provider));
  store->name = g_strdup (name);
  return QSTORE_KV (store);
}

static QStoreSnapshot *
qstore_memory_provider_begin_snapshot (QStoreProvider  *provider,
                                       GError         **error)
{
  QStoreMemoryProvider *self = QSTORE_MEMORY_PROVIDER (provider);
  QStoreMemorySnapshot *snapshot = g_object_new (QSTORE_TYPE_MEMORY_SNAPSHOT, NULL);

  g_mutex_lock (&self->lock);
  snapshot->set = map_set_ref (self->set);
  g_mutex_unlock (&self->lock);
  return QSTORE_SNAPSHOT (snapshot);
}

typedef struct
{
  const char *store;
  GBytes     *key;
  GBytes     *old_value;  /* NULL: the key was absent */
} Undo;

/* With the lock held: applies @ops to @maps; on failure restores what it
 * changed, so the maps are as before. */
static gboolean
apply_ops (GHashTable           *maps,
           const QStoreWriteOp  *ops,
           gsize                 n_ops,
           GError              **error)
{
  g_autoptr(GArray) undo = g_array_sized_new (FALSE, FALSE, sizeof (Undo), n_ops);
  QStoreKV *last_store = NULL;
  Map *map = NULL;
  gboolean ok = TRUE;

  for (gsize i = 0; i < n_ops; i++)
    {
      const QStoreWriteOp *op = &ops[i];
      const char *name = QSTORE_MEMORY_STORE (op->store)->name;
      GBytes *key, *old;
      Undo entry;

      if (!_qstore_fault_check (QSTORE_FAULT_WRITE_OP, error))
        {
          ok = FALSE;
          break;
        }

      /* Ops come store by store; once made writable, a map stays ours
       * while the lock is held. */
      if (op->store != last_store)
        {
          map = writable_map (maps, name);
          last_store = op->store;
        }
      key = g_bytes_new (op->key, op->key_len);
      old = g_tree_lookup (map->tree, key);
      entry.store = name;
      entry.key = g_bytes_ref (key);
      entry.old_value = old ? g_bytes_ref (old) : NULL;
      g_array_append_val (undo, entry);

      if (op->kind == QSTORE_WRITE_OP_PUT)
        g_tree_replace (map->tree, key, g_bytes_new (op->value, op->value_len));
      else
        {
          g_tree_remove (map->tree, key);
          g_bytes_unref (key);
        }
    }

  for (guint i = undo->len; i > 0; i--)
    {
      Undo *entry = &g_array_index (undo, Undo, i - 1);

      if (!ok)
        {
          Map *map = writable_map (maps, entry->store);

          if (entry->old_value != NULL)
            g_tree_replace (map->tree, g_bytes_ref (entry->key), g_bytes_ref (entry->old_value));
          else
            g_tree_remove (map->tree, entry->key);
        }
      g_bytes_unref (entry->key);
      g_clear_pointer (&entry->old_value, g_bytes_unref);
    }
  return ok;
}

static gboolean
qstore_memory_provider_write (QStoreProvider       *provider,
                              const QStoreWriteOp  *ops,
                              gsize                 n_ops,
                              QStoreWriteFlags      flags,
                              GError              **error)
{
  QStoreMemoryProvider *self = QSTORE_MEMORY_PROVIDER (provider);
  gboolean ok;

  g_mutex_lock (&self->lock);
  ok = apply_ops (writable_set (self), ops, n_ops, error);
  g_mutex_unlock (&self->lock);
  return ok;
}

static gboolean
map_is_empty (Map *map)
{
  return map == NULL || g_tree_nnodes (map->tree) == 0;
}

static gboolean
qstore_memory_provider_restructure (QStoreProvider       *provider,
                                    const char * const   *drop,
                                    const char * const   *rename_from,
                                    const char * const   *rename_to,
                                    const QStoreWriteOp  *ops,
                                    gsize                 n_ops,
                                    GError              **error)
{
  QStoreMemoryProvider *self = QSTORE_MEMORY_PROVIDER (provider);
  MapSet *next;
  gboolean ok = TRUE;

  /* Work on a table of shared maps: writes copy what they touch, and the
   * current table stays as it was until everything succeeded. */
  g_mutex_lock (&self->lock);
  next = map_set_copy (self->set);

  for (guint i = 0; drop[i] != NULL; i++)
    g_hash_table_remove (next->maps, drop[i]);

  for (guint i = 0; ok && rename_from[i] != NULL; i++)
    {
      Map *source = g_hash_table_lookup (next->maps, rename_from[i]);

      if (!map_is_empty (g_hash_table_lookup (next->maps, rename_to[i])))
        {
          g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_EXISTS,
                       _("Cannot move store “%s” to “%s”: the destination holds entries"),
                       rename_from[i], rename_to[i]);
          ok = FALSE;
          break;
        }
      if (source != NULL)
        {
          g_hash_table_insert (next->maps, g_strdup (rename_to[i]), map_ref (source));
          g_hash_table_remove (next->maps, rename_from[i]);
        }
      else
        g_hash_table_remove (next->maps, rename_to[i]);
    }

  if (ok)
    ok = apply_ops (next->maps, ops, n_ops, error);
  if (ok)
    {
      MapSet *old = self->set;

      self->set = next;
      next = old;
    }
  g_mutex_unlock (&self->lock);
  map_set_unref (next);
  return ok;
}

static char **
qstore_memory_provider_list_stores (QStoreProvider  *provider,
                                    GError         **error)
{
  QStoreMemoryProvider *self = QSTORE_MEMORY_PROVIDER (provider);
  GPtrArray *names = g_ptr_array_new ();
  GHashTableIter iter;
  gpointer name, map;

  g_mutex_lock (&self->lock);
  g_hash_table_iter_init (&iter, self->set->maps);
  while (g_hash_table_iter_next (&iter, &name, &map))
    if (!map_is_empty (map))
      g_ptr_array_add (names, g_strdup (name));
  g_mutex_unlock (&self->lock);
  g_ptr_array_add (names, NULL);
  return (char **) g_ptr_array_free (names, FALSE);
}

static void
qstore_memory_provider_close (QStoreProvider *provider)
{
  QStoreMemoryProvider *self = QSTORE_MEMORY_PROVIDER (provider);

  /* Snapshots and iterators hold their own references. */
  g_mutex_lock (&self->lock);
  if (self->set != NULL)
    g_hash_table_remove_all (writable_set (self));
  g_mutex_unlock (&self->lock);
}

static void
qstore_memory_provider_finalize (GObject *object)
{
  QStoreMemoryProvider *self = QSTORE_MEMORY_PROVIDER (object);

  qstore_provider_close_all (QSTORE_PROVIDER (self));
  g_clear_pointer (&self->set, map_set_unref);
  g_mutex_clear (&self->lock);

  G_OBJECT_CLASS (qstore_memory_provider_parent_class)->finalize (object);
}

static void
qstore_memory_provider_iface_init (QStoreProviderInterface *iface)
{
  iface->capabilities = QSTORE_CAPABILITY_ATOMIC_BATCH | QSTORE_CAPABILITY_SNAPSHOTS;
  iface->option_names = NULL;
  iface->open_store = qstore_memory_provider_open_store;
  iface->begin_snapshot = qstore_memory_provider_begin_snapshot;
  iface->write = qstore_memory_provider_write;
  iface->restructure = qstore_memory_provider_restructure;
  iface->list_stores = qstore_memory_provider_list_stores;
  iface->close = qstore_memory_provider_close;
}

static void
qstore_memory_provider_initable_iface_init (GInitableIface *iface)
{
  iface->init = qstore_memory_provider_initable_init;
}

static void
qstore_memory_provider_class_init (QStoreMemoryProviderClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = qstore_memory_provider_finalize;
}

static void
qstore_memory_provider_class_finalize (QStoreMemoryProviderClass *klass)
{
}

static void
qstore_memory_provider_init (QStoreMemoryProvider *self)
{
  g_mutex_init (&self->lock);
}

/* Module entry points */

QSTORE_PLUGIN_DEFINE_API_VERSION;

G_MODULE_EXPORT void
g_io_module_load (GIOModule *module)
{
  GTypeModule *type_module = G_TYPE_MODULE (module);

  qstore_memory_provider_register_type (type_module);
  qstore_memory_store_register_type (type_module);
  qstore_memory_iter_register_type (type_module);
  qstore_memory_snapshot_register_type (type_module);

  g_io_extension_point_implement (QSTORE_PROVIDER_EXTENSION_POINT_NAME,
                                  QSTORE_TYPE_MEMORY_PROVIDER, "memory", 0);
}

G_MODULE_EXPORT void
g_io_module_unload (GIOModule *module)
{
}

G_MODULE_EXPORT char **
g_io_module_query (void)
{
  return g_strsplit (QSTORE_PROVIDER_EXTENSION_POINT_NAME, "!", 0);
}
