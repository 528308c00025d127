/* qstore-key-format.c: which key format a database's stores hold, and
 * upgrading the stores of the first
 *
 * The first key format spent 17 bytes on every number; the second spends
 * its significant bits only (see the codec). The catalog says which one a
 * database holds with a meta entry, written with its first catalog entry. A
 * database with tables and no such entry was written in the first format:
 * opening it for writing upgrades every key of its tables, indexes and
 * materialized views, and every data key an index entry points at, in one
 * transaction with the entry. That transaction is the coordinator's, so a
 * crash in the middle loses nothing on any provider, and reading a key
 * already upgraded leaves it as it is.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "qstore-codec-private.h"
#include "qstore-coordinator-private.h"
#include "qstore-database-private.h"
#include "qstore-error.h"
#include "qstore-i18n-private.h"
#include "qstore-key-format-private.h"
#include "qstore-router-private.h"

/* Store name → whether its values are data keys (an index's), for every
 * store the catalog names: each table's and its indexes', each
 * materialized view's and its indexes'. */
static GHashTable *
stores_with_keys (QStoreDatabase  *self,
                  GArray          *deferred,
                  GError         **error)
{
  g_autoptr(GHashTable) stores = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_auto(GStrv) present = NULL;
  GHashTableIter iter;
  QStoreSqlTable *entry;

  g_hash_table_iter_init (&iter, self->tables);
  while (g_hash_table_iter_next (&iter, NULL, (gpointer *) &entry))
    {
      QStoreTableSchema *schema = entry->schema;

      g_hash_table_insert (stores, qstore_store_name_for_table (schema->schema, schema->name),
                           GINT_TO_POINTER (FALSE));
      for (guint i = 0; i < schema->indexes->len; i++)
        {
          QStoreIndexSchema *index = g_ptr_array_index (schema->indexes, i);

          g_hash_table_insert (stores, qstore_store_name_for_index (schema->schema, schema->name,
                                                                   index->name),
                               GINT_TO_POINTER (TRUE));
        }
    }

  /* A materialized view's indexes are named by its plan, which is not
   * loaded yet: its stores are found by name. The catalog refuses names
   * that two objects' stores would share. */
  if (!(present = qstore_provider_list_stores (self->provider, error)))
    return NULL;
  for (guint k = 0; k < deferred->len; k++)
    {
      QStoreCatalogItem *item = &g_array_index (deferred, QStoreCatalogItem, k);
      g_autofree char *data = NULL;
      g_autofree char *indexes = NULL;

      if (item->kind != QSTORE_CATALOG_KEY_MATERIALIZED_VIEW)
        continue;
      data = qstore_store_name_for_table ("main", item->name);
      indexes = g_strconcat (data, "_idx_", NULL);
      for (guint i = 0; present[i] != NULL; i++)
        if (!g_hash_table_contains (stores, present[i]) &&
            (g_str_equal (present[i], data) || g_str_has_prefix (present[i], indexes)))
          g_hash_table_insert (stores, g_strdup (present[i]),
                               GINT_TO_POINTER (!g_str_equal (present[i], data)));
    }
  return g_steal_pointer (&stores);
}

/* Whether @bytes change on upgrading; @out gets what they become. */
static gboolean
upgrade (const guint8  *bytes,
         gsize          len,
         GByteArray    *out,
         gboolean      *changed,
         GError       **error)
{
  g_byte_array_set_size (out, 0);
  if (!qstore_codec_upgrade_key (bytes, len, out, error))
    return FALSE;
  *changed = out->len != len || memcmp (out->data, bytes, len) != 0;
  return TRUE;
}

/* Rewrites the keys of @store, and its values when they are data keys,
 * as @snapshot has them. Every old key is deleted before any new one is
 * written, since a new key may have the bytes of another old one. */
static gboolean
upgrade_store (QStoreDatabase  *self,
               QStoreSnapshot  *snapshot,
               const char      *name,
               gboolean         values_are_keys,
               GError         **error)
{
  g_autoptr(QStoreKV) store = NULL;
  g_autoptr(GByteArray) key = g_byte_array_new ();
  g_autoptr(GByteArray) value = g_byte_array_new ();

  if (!(store = qstore_provider_open_store (self->provider, name, error)))
    return FALSE;

  for (guint pass = 0; pass < 2; pass++)
    {
      g_autoptr(QStoreIter) entries = NULL;
      g_autoptr(GError) local_error = NULL;

      if (!(entries = qstore_snapshot_iterate (snapshot, store, NULL, error)))
        return FALSE;
      while (qstore_iter_next (entries, &local_error))
        {
          gsize key_len, value_len;
          const guint8 *old_key = qstore_iter_peek_key (entries, &key_len);
          const guint8 *old_value = qstore_iter_peek_value (entries, &value_len);
          gboolean key_changed = FALSE;
          gboolean value_changed = FALSE;

          if (!upgrade (old_key, key_len, key, &key_changed, &local_error) ||
              (values_are_keys && !upgrade (old_value, value_len, value, &value_changed, &local_error)))
            break;
          if (pass == 0 && key_changed)
            qstore_coordinator_delete (self->coordinator, store, old_key, key_len);
          else if (pass == 1 && (key_changed || value_changed))
            qstore_coordinator_put (self->coordinator, store, key->data, key->len,
                                    value_changed ? value->data : old_value,
                                    value_changed ? value->len : value_len);
        }
      if (local_error != NULL)
        {
          g_propagate_prefixed_error (error, g_steal_pointer (&local_error),
                                      _("Store “%s” cannot be upgraded: "), name);
          return FALSE;
        }
    }
  return TRUE;
}

/* Whether the catalog has a table or a materialized view: the first
 * format's keys are theirs. */
static gboolean
has_stores_with_keys (QStoreDatabase  *self,
                      gboolean        *found,
                      GError         **error)
{
  g_autoptr(QStoreIter) entries = NULL;
  g_autoptr(GError) local_error = NULL;

  *found = FALSE;
  if (!(entries = qstore_kv_iterate (self->catalog, NULL, error)))
    return FALSE;
  while (!*found && qstore_iter_next (entries, &local_error))
    {
      g_autoptr(GBytes) key = qstore_iter_get_key (entries);
      QStoreCatalogKeyKind kind = qstore_catalog_key_classify (key, NULL, NULL);

      *found = kind == QSTORE_CATALOG_KEY_TABLE || kind == QSTORE_CATALOG_KEY_MATERIALIZED_VIEW;
    }
  if (local_error != NULL)
    {
      g_propagate_error (error, g_steal_pointer (&local_error));
      return FALSE;
    }
  return TRUE;
}

gboolean
qstore_key_format_check (QStoreDatabase  *self,
                         gboolean        *first_format,
                         GError         **error)
{
  g_autoptr(GBytes) meta = qstore_catalog_key_for_meta (QSTORE_KEY_FORMAT_META);
  g_autoptr(GBytes) format = NULL;
  g_autoptr(GError) local_error = NULL;
  gsize meta_len;
  const guint8 *meta_data = g_bytes_get_data (meta, &meta_len);

  *first_format = FALSE;
  format = qstore_kv_get (self->catalog, meta_data, meta_len, &local_error);
  if (local_error != NULL)
    {
      g_propagate_error (error, g_steal_pointer (&local_error));
      return FALSE;
    }
  if (format != NULL)
    {
      gsize len;
      const char *text = g_bytes_get_data (format, &len);

      if (len == strlen (QSTORE_KEY_FORMAT) && memcmp (text, QSTORE_KEY_FORMAT, len) == 0)
        return TRUE;
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_UNSUPPORTED,
                   _("The %s store at “%s” holds keys in format “%.*s”, which this version "
                     "of qstore does not know: a newer version wrote it"),
                   qstore_provider_get_name (self->provider),
                   qstore_provider_get_location (self->provider), (int) MIN (len, 16), text);
      return FALSE;
    }

  if (!has_stores_with_keys (self, first_format, error))
    return FALSE;
  if (*first_format && (self->flags & QSTORE_OPEN_READ_ONLY))
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_READ_ONLY,
                   _("The %s store at “%s” was written by an earlier version of qstore: "
                     "open it once for writing, which upgrades its keys, before opening "
                     "it read-only"),
                   qstore_provider_get_name (self->provider),
                   qstore_provider_get_location (self->provider));
      return FALSE;
    }
  return TRUE;
}

gboolean
qstore_key_format_upgrade (QStoreDatabase  *self,
                           GArray          *deferred,
                           GError         **error)
{
  g_autoptr(GBytes) meta = qstore_catalog_key_for_meta (QSTORE_KEY_FORMAT_META);
  g_autoptr(GHashTable) stores = NULL;
  g_autoptr(QStoreSnapshot) snapshot = NULL;
  GHashTableIter iter;
  gpointer name, values_are_keys;

  if (!(stores = stores_with_keys (self, deferred, error)) ||
      !(snapshot = qstore_provider_begin_snapshot (self->provider, error)))
    return FALSE;

  qstore_coordinator_begin (self->coordinator);
  g_hash_table_iter_init (&iter, stores);
  while (g_hash_table_iter_next (&iter, &name, &values_are_keys))
    if (!upgrade_store (self, snapshot, name, GPOINTER_TO_INT (values_are_keys), error))
      {
        qstore_coordinator_rollback (self->coordinator);
        return FALSE;
      }
  qstore_database_put_catalog (self, meta, QSTORE_KEY_FORMAT);
  return TRUE;
}
