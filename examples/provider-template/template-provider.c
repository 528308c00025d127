/* template-provider.c: a small qstore provider to start a new one from
 *
 * Every store is a GSequence of entries sorted in qstore's key order, in
 * memory; a GHashTable maps store names to them. One mutex guards all of
 * it, so each write applies as one unit across stores. Nothing survives
 * closing the provider.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <string.h>

#include <qstore.h>

typedef struct
{
  GBytes *key;
  GBytes *value;
} Entry;

static void
entry_free (gpointer data)
{
  Entry *entry = data;

  g_bytes_unref (entry->key);
  g_bytes_unref (entry->value);
  g_free (entry);
}

/* [key-order] */
/* Keys compare as qstore_key_compare() says: bytewise, a shorter key
 * before every longer key it is a prefix of. Iteration, bounds and the
 * table layer all rely on this order. */
static int
compare_entries (gconstpointer a,
                 gconstpointer b,
                 gpointer      user_data)
{
  gsize a_len, b_len;
  const guint8 *a_key = g_bytes_get_data (((const Entry *) a)->key, &a_len);
  const guint8 *b_key = g_bytes_get_data (((const Entry *) b)->key, &b_len);

  return qstore_key_compare (a_key, a_len, b_key, b_len);
}
/* [key-order] */

/* The first entry of @seq whose key is at or after @key. */
static GSequenceIter *
seek (GSequence    *seq,
      const guint8 *key,
      gsize         key_len)
{
  g_autoptr(GBytes) probe = g_bytes_new_static (key, key_len);
  Entry probe_entry = { probe, NULL };
  GSequenceIter *it = g_sequence_search (seq, &probe_entry, compare_entries, NULL);

  /* g_sequence_search() lands after equal keys: step back onto one. */
  if (!g_sequence_iter_is_begin (it))
    {
      GSequenceIter *prev = g_sequence_iter_prev (it);

      if (compare_entries (g_sequence_get (prev), &probe_entry, NULL) == 0)
        return prev;
    }
  return it;
}

static Entry *
lookup (GSequence    *seq,
        const guint8 *key,
        gsize         key_len)
{
  GSequenceIter *it;
  Entry *entry;

  if (seq == NULL)
    return NULL;
  it = seek (seq, key, key_len);
  if (g_sequence_iter_is_end (it))
    return NULL;
  entry = g_sequence_get (it);
  return qstore_key_compare (g_bytes_get_data (entry->key, NULL), g_bytes_get_size (entry->key),
                             key, key_len) == 0 ? entry : NULL;
}

/* Provider */

#define TEMPLATE_TYPE_PROVIDER (template_provider_get_type ())
G_DECLARE_FINAL_TYPE (TemplateProvider, template_provider, TEMPLATE, PROVIDER, GObject)

struct _TemplateProvider
{
  GObject     parent_instance;
  GMutex      lock;
  GHashTable *stores;  /* name → GSequence of Entry; absent = empty */
};

static void template_provider_iface_init (QStoreProviderInterface *iface);
static void template_provider_initable_iface_init (GInitableIface *iface);

/* [dynamic-type] */
/* Types of a module are dynamic: they are registered in g_io_module_load(). */
G_DEFINE_DYNAMIC_TYPE_EXTENDED (TemplateProvider, template_provider, G_TYPE_OBJECT, G_TYPE_FLAG_FINAL,
                                G_IMPLEMENT_INTERFACE_DYNAMIC (G_TYPE_INITABLE,
                                                               template_provider_initable_iface_init)
                                G_IMPLEMENT_INTERFACE_DYNAMIC (QSTORE_TYPE_PROVIDER,
                                                               template_provider_iface_init))
/* [dynamic-type] */

/* Store: a name and the provider; the data stays in the provider. */

#define TEMPLATE_TYPE_STORE (template_store_get_type ())
G_DECLARE_FINAL_TYPE (TemplateStore, template_store, TEMPLATE, STORE, GObject)

struct _TemplateStore
{
  GObject           parent_instance;
  TemplateProvider *provider;
  char             *name;
};

static void template_store_kv_iface_init (QStoreKVInterface *iface);

G_DEFINE_DYNAMIC_TYPE_EXTENDED (TemplateStore, template_store, G_TYPE_OBJECT, G_TYPE_FLAG_FINAL,
                                G_IMPLEMENT_INTERFACE_DYNAMIC (QSTORE_TYPE_KV,
                                                               template_store_kv_iface_init))

/* Iterator */

#define TEMPLATE_TYPE_ITER (template_iter_get_type ())
G_DECLARE_FINAL_TYPE (TemplateIter, template_iter, TEMPLATE, ITER, QStoreIter)

/* [iter] */
/* An iterator sees the store as it was when it was made, not the writes
 * made while it is open: it copies the entries from its near bound on
 * (references to the keys and values, which are never changed in place).
 * The base class stops it at the far bound and at the limit. */
struct _TemplateIter
{
  QStoreIter  parent_instance;
  GPtrArray  *entries;  /* of Entry, in iteration order */
  guint       next;
  Entry      *current;
};
/* [iter] */

G_DEFINE_DYNAMIC_TYPE_EXTENDED (TemplateIter, template_iter, QSTORE_TYPE_ITER, G_TYPE_FLAG_FINAL, {})

static gboolean
template_iter_advance (QStoreIter  *iter,
                       GError     **error)
{
  TemplateIter *self = TEMPLATE_ITER (iter);

  if (self->next >= self->entries->len)
    return FALSE;
  self->current = g_ptr_array_index (self->entries, self->next++);
  return TRUE;
}

static const guint8 *
template_iter_peek_key (QStoreIter *iter,
                        gsize      *key_len)
{
  return g_bytes_get_data (TEMPLATE_ITER (iter)->current->key, key_len);
}

static const guint8 *
template_iter_peek_value (QStoreIter *iter,
                          gsize      *value_len)
{
  const guint8 *data = g_bytes_get_data (TEMPLATE_ITER (iter)->current->value, value_len);

  /* An empty value is a present one: never hand back NULL. */
  return data ? data : (const guint8 *) "";
}

static void
template_iter_finalize (GObject *object)
{
  g_clear_pointer (&TEMPLATE_ITER (object)->entries, g_ptr_array_unref);

  G_OBJECT_CLASS (template_iter_parent_class)->finalize (object);
}

static void
template_iter_class_init (TemplateIterClass *klass)
{
  QStoreIterClass *iter_class = QSTORE_ITER_CLASS (klass);

  G_OBJECT_CLASS (klass)->finalize = template_iter_finalize;
  iter_class->advance = template_iter_advance;
  iter_class->peek_key = template_iter_peek_key;
  iter_class->peek_value = template_iter_peek_value;
}

static void
template_iter_class_finalize (TemplateIterClass *klass)
{
}

static void
template_iter_init (TemplateIter *self)
{
}

static Entry *
entry_copy (const Entry *entry)
{
  Entry *copy = g_new (Entry, 1);

  copy->key = g_bytes_ref (entry->key);
  copy->value = g_bytes_ref (entry->value);
  return copy;
}

/* With the provider's lock held. */
static QStoreIter *
template_iter_new (TemplateProvider   *provider,
                   GSequence          *seq,
                   const QStoreBounds *bounds)
{
  TemplateIter *self = qstore_iter_new (TEMPLATE_TYPE_ITER, bounds,
                                        QSTORE_PROVIDER (provider));
  gboolean reverse = qstore_bounds_get_reverse (bounds);
  const guint8 *near;
  gsize near_len;
  GSequenceIter *it;

  self->entries = g_ptr_array_new_with_free_func (entry_free);
  if (seq == NULL)
    return QSTORE_ITER (self);

  if (!reverse)
    {
      near = qstore_bounds_get_lower (bounds, &near_len, NULL);
      it = near ? seek (seq, near, near_len) : g_sequence_get_begin_iter (seq);
      for (; !g_sequence_iter_is_end (it); it = g_sequence_iter_next (it))
        g_ptr_array_add (self->entries, entry_copy (g_sequence_get (it)));
    }
  else
    {
      /* From the last entry at or below the upper bound, downwards; one
       * above it is skipped by the base class. */
      near = qstore_bounds_get_upper (bounds, &near_len, NULL);
      it = near ? seek (seq, near, near_len) : g_sequence_get_end_iter (seq);
      if (!g_sequence_iter_is_end (it))
        it = g_sequence_iter_next (it);
      while (!g_sequence_iter_is_begin (it))
        {
          it = g_sequence_iter_prev (it);
          g_ptr_array_add (self->entries, entry_copy (g_sequence_get (it)));
        }
    }
  return QSTORE_ITER (self);
}

/* Store implementation */

static const char *
template_store_get_name (QStoreKV *kv)
{
  return TEMPLATE_STORE (kv)->name;
}

static QStoreProvider *
template_store_get_provider (QStoreKV *kv)
{
  return QSTORE_PROVIDER (TEMPLATE_STORE (kv)->provider);
}

static GBytes *
template_store_get (QStoreKV      *kv,
                    const guint8  *key,
                    gsize          key_len,
                    GError       **error)
{
  TemplateStore *self = TEMPLATE_STORE (kv);
  GBytes *value = NULL;
  Entry *entry;

  g_mutex_lock (&self->provider->lock);
  entry = lookup (g_hash_table_lookup (self->provider->stores, self->name), key, key_len);
  if (entry != NULL)
    value = g_bytes_ref (entry->value);
  g_mutex_unlock (&self->provider->lock);
  return value;
}

static QStoreIter *
template_store_iterate (QStoreKV            *kv,
                        const QStoreBounds  *bounds,
                        GError             **error)
{
  TemplateStore *self = TEMPLATE_STORE (kv);
  QStoreIter *iter;

  g_mutex_lock (&self->provider->lock);
  iter = template_iter_new (self->provider,
                            g_hash_table_lookup (self->provider->stores, self->name), bounds);
  g_mutex_unlock (&self->provider->lock);
  return iter;
}

static void
template_store_finalize (GObject *object)
{
  TemplateStore *self = TEMPLATE_STORE (object);

  g_clear_object (&self->provider);
  g_free (self->name);

  G_OBJECT_CLASS (template_store_parent_class)->finalize (object);
}

static void
template_store_kv_iface_init (QStoreKVInterface *iface)
{
  iface->get_name = template_store_get_name;
  iface->get_provider = template_store_get_provider;
  iface->get = template_store_get;
  iface->iterate = template_store_iterate;
}

static void
template_store_class_init (TemplateStoreClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = template_store_finalize;
}

static void
template_store_class_finalize (TemplateStoreClass *klass)
{
}

static void
template_store_init (TemplateStore *self)
{
}

/* Provider implementation */

static GHashTable *
stores_new (void)
{
  return g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                (GDestroyNotify) g_sequence_free);
}

/* [init] */
/* GInitable.init opens the location qstore_provider_new() was given;
 * bad input is a QSTORE_ERROR that names it and says what to do. */
static gboolean
template_provider_initable_init (GInitable     *initable,
                                 GCancellable  *cancellable,
                                 GError       **error)
{
  TemplateProvider *self = TEMPLATE_PROVIDER (initable);
  const char *location = qstore_provider_get_location (QSTORE_PROVIDER (self));

  if (location[0] != '\0')
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                   "The template provider keeps its stores in memory and takes no "
                   "location (got “%s”): use template:", location);
      return FALSE;
    }
  self->stores = stores_new ();
  return TRUE;
}
/* [init] */

static QStoreKV *
template_provider_open_store (QStoreProvider  *provider,
                              const char      *name,
                              GError         **error)
{
  TemplateStore *store = g_object_new (TEMPLATE_TYPE_STORE, NULL);

  store->provider = g_object_ref (TEMPLATE_PROVIDER (provider));
  store->name = g_strdup (name);
  return QSTORE_KV (store);
}

/* With the lock held. */
static void
apply_op (GHashTable          *stores,
          const QStoreWriteOp *op)
{
  const char *name = qstore_kv_get_name (op->store);
  GSequence *seq = g_hash_table_lookup (stores, name);
  Entry *entry = lookup (seq, op->key, op->key_len);

  if (op->kind == QSTORE_WRITE_OP_DELETE)
    {
      if (entry != NULL)
        g_sequence_remove (g_sequence_lookup (seq, entry, compare_entries, NULL));
      /* An empty store is an absent one: list_stores() leaves it out. */
      if (seq != NULL && g_sequence_is_empty (seq))
        g_hash_table_remove (stores, name);
      return;
    }

  if (entry != NULL)
    {
      g_bytes_unref (entry->value);
      entry->value = g_bytes_new (op->value, op->value_len);
      return;
    }
  if (seq == NULL)
    {
      seq = g_sequence_new (entry_free);
      g_hash_table_insert (stores, g_strdup (name), seq);
    }
  entry = g_new (Entry, 1);
  entry->key = g_bytes_new (op->key, op->key_len);
  entry->value = g_bytes_new (op->value, op->value_len);
  g_sequence_insert_sorted (seq, entry, compare_entries, NULL);
}

/* [write] */
/* write() applies @ops in order, all or none. Nothing here can fail
 * half-way, so holding the lock over the whole loop makes the unit: no
 * reader sees part of it. A provider that can fail part-way must undo
 * what it applied (or apply nothing until all succeeded). With
 * QSTORE_WRITE_SYNC in @flags a persistent provider returns only once
 * the write is durable. */
static gboolean
template_provider_write (QStoreProvider       *provider,
                         const QStoreWriteOp  *ops,
                         gsize                 n_ops,
                         QStoreWriteFlags      flags,
                         GError              **error)
{
  TemplateProvider *self = TEMPLATE_PROVIDER (provider);

  g_mutex_lock (&self->lock);
  for (gsize i = 0; i < n_ops; i++)
    apply_op (self->stores, &ops[i]);
  g_mutex_unlock (&self->lock);
  return TRUE;
}
/* [write] */

static gboolean
template_provider_restructure (QStoreProvider       *provider,
                               const char * const   *drop,
                               const char * const   *rename_from,
                               const char * const   *rename_to,
                               const QStoreWriteOp  *ops,
                               gsize                 n_ops,
                               GError              **error)
{
  TemplateProvider *self = TEMPLATE_PROVIDER (provider);

  g_mutex_lock (&self->lock);
  /* Check first, change after: a refused restructure changes nothing. */
  for (guint i = 0; rename_from[i] != NULL; i++)
    if (g_hash_table_contains (self->stores, rename_to[i]) &&
        !g_strv_contains (drop, rename_to[i]))
      {
        g_mutex_unlock (&self->lock);
        g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_EXISTS,
                     "Cannot move store “%s” to “%s”: the destination holds entries",
                     rename_from[i], rename_to[i]);
        return FALSE;
      }

  for (guint i = 0; drop[i] != NULL; i++)
    g_hash_table_remove (self->stores, drop[i]);
  for (guint i = 0; rename_from[i] != NULL; i++)
    {
      gpointer name, seq;

      if (g_hash_table_steal_extended (self->stores, rename_from[i], &name, &seq))
        {
          g_free (name);
          g_hash_table_insert (self->stores, g_strdup (rename_to[i]), seq);
        }
    }
  for (gsize i = 0; i < n_ops; i++)
    apply_op (self->stores, &ops[i]);
  g_mutex_unlock (&self->lock);
  return TRUE;
}

static char **
template_provider_list_stores (QStoreProvider  *provider,
                               GError         **error)
{
  TemplateProvider *self = TEMPLATE_PROVIDER (provider);
  g_autofree char **keys = NULL;
  char **names;

  /* Only stores that hold entries are in the table. */
  g_mutex_lock (&self->lock);
  keys = (char **) g_hash_table_get_keys_as_array (self->stores, NULL);
  names = g_strdupv (keys);
  g_mutex_unlock (&self->lock);
  return names;
}

/* [close] */
/* close() releases everything; qstore refuses every later call on the
 * provider, its stores and its iterators with QSTORE_ERROR_CLOSED, so
 * the implementation need not check. */
static void
template_provider_close (QStoreProvider *provider)
{
  TemplateProvider *self = TEMPLATE_PROVIDER (provider);

  g_mutex_lock (&self->lock);
  g_hash_table_remove_all (self->stores);
  g_mutex_unlock (&self->lock);
}
/* [close] */

static void
template_provider_finalize (GObject *object)
{
  TemplateProvider *self = TEMPLATE_PROVIDER (object);

  qstore_provider_close_all (QSTORE_PROVIDER (self));
  g_clear_pointer (&self->stores, g_hash_table_unref);
  g_mutex_clear (&self->lock);

  G_OBJECT_CLASS (template_provider_parent_class)->finalize (object);
}

/* [capabilities] */
/* Capabilities promise what the conformance suite then checks. One lock
 * over every store makes each write one unit: ATOMIC_BATCH. Without
 * PERSISTENT, SNAPSHOTS or WRITER_LOCK, qstore refuses what needs them. */
static void
template_provider_iface_init (QStoreProviderInterface *iface)
{
  iface->capabilities = QSTORE_CAPABILITY_ATOMIC_BATCH;
  iface->option_names = NULL;
  iface->open_store = template_provider_open_store;
  iface->write = template_provider_write;
  iface->restructure = template_provider_restructure;
  iface->list_stores = template_provider_list_stores;
  iface->close = template_provider_close;
}
/* [capabilities] */

static void
template_provider_initable_iface_init (GInitableIface *iface)
{
  iface->init = template_provider_initable_init;
}

static void
template_provider_class_init (TemplateProviderClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = template_provider_finalize;
}

static void
template_provider_class_finalize (TemplateProviderClass *klass)
{
}

static void
template_provider_init (TemplateProvider *self)
{
  g_mutex_init (&self->lock);
}

/* [module] */
/* The GIO module entry points. qstore reads the plugin API version
 * first and loads nothing built for another one. */
QSTORE_PLUGIN_DEFINE_API_VERSION;

G_MODULE_EXPORT void
g_io_module_load (GIOModule *module)
{
  GTypeModule *type_module = G_TYPE_MODULE (module);

  template_provider_register_type (type_module);
  template_store_register_type (type_module);
  template_iter_register_type (type_module);

  /* The name is the URI scheme: template: */
  g_io_extension_point_implement (QSTORE_PROVIDER_EXTENSION_POINT_NAME,
                                  TEMPLATE_TYPE_PROVIDER, "template", 0);
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
/* [module] */
