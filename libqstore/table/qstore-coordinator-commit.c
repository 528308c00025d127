/* qstore-coordinator-commit.c: what a commit writes, and how
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include <json-glib/json-glib.h>

#include "qstore-codec.h"
#include "qstore-coordinator-private.h"
#include "qstore-error.h"
#include "qstore-fault-private.h"
#include "qstore-i18n-private.h"
#include "qstore-provider-private.h"

/* A commit that wrote something writes, with its rows and index entries,
 * the new row count of every table it changed and its transaction id
 * (`\0meta\0tx`), both to `__stats__`, then hands it all to the
 * provider: as one atomic batch, or as a restructure that also drops
 * stores. Without an atomic batch it writes store by store, under the
 * commit marker, and the id goes to the catalog (see QStoreCoordinator).
 * Stores of earlier versions hold the id in the catalog only: the last
 * id is the larger of the two. */

/* Row counts in `__stats__` */

gboolean
qstore_coordinator_load_row_count (QStoreCoordinator  *self,
                                   TableEntry         *entry,
                                   GError            **error)
{
  g_autoptr(GBytes) value = NULL;
  g_autoptr(JsonParser) parser = NULL;
  g_autoptr(GError) parse_error = NULL;
  GError *local_error = NULL;
  JsonNode *root;
  JsonObject *object;
  gconstpointer data;
  gsize len;

  if (entry->loaded)
    return TRUE;

  value = qstore_kv_get (self->stats, (const guint8 *) entry->stats_key,
                         strlen (entry->stats_key), &local_error);
  if (local_error != NULL)
    {
      g_propagate_prefixed_error (error, local_error,
                                  _("Reading the row count of table “%s”: "),
                                  entry->stats_key);
      return FALSE;
    }

  entry->committed = 0;
  entry->loaded = TRUE;
  if (value == NULL)
    return TRUE;

  data = g_bytes_get_data (value, &len);
  parser = json_parser_new ();
  if (json_parser_load_from_data (parser, data ? data : "", len, &parse_error) &&
      (root = json_parser_get_root (parser)) != NULL &&
      JSON_NODE_HOLDS_OBJECT (root) &&
      (object = json_node_get_object (root)) != NULL &&
      json_object_has_member (object, "rowCount") &&
      json_node_get_value_type (json_object_get_member (object, "rowCount")) == G_TYPE_INT64)
    {
      entry->committed = MAX (0, json_object_get_int_member (object, "rowCount"));
      return TRUE;
    }

  /* Statistics are advisory: a damaged entry must not stop writes. It is
   * rewritten from 0 plus this process's changes at the next commit. */
  g_warning ("The statistics of table “%s” are malformed; counting its rows "
             "from 0 (recount the table to repair them)", entry->stats_key);
  return TRUE;
}

/* Writes @value in decimal at @out, which has room for 20 digits; returns
 * the length. Every commit formats its id and row counts: printf's
 * machinery costs more than the rest of building them. */
static gsize
format_decimal (char    *out,
                guint64  value)
{
  char digits[20];
  gsize n = 0;

  do
    {
      digits[n++] = (char) ('0' + value % 10);
      value /= 10;
    }
  while (value != 0);
  for (gsize i = 0; i < n; i++)
    out[i] = digits[n - 1 - i];
  return n;
}

/* Every commit writes one of these per table it changed, byte for byte
 * as json-glib's generator wrote it before. @buf holds ROW_COUNT_JSON_MAX
 * bytes; returns the length written. */
#define ROW_COUNT_JSON_MAX 80
#define ROW_COUNT_HEAD "{\"rowCount\":"
#define ROW_COUNT_TIME ",\"updatedAt\":"

static gsize
row_count_json (char    *buf,
                guint64  count)
{
  gsize len = 0;

  memcpy (buf, ROW_COUNT_HEAD, strlen (ROW_COUNT_HEAD));
  len += strlen (ROW_COUNT_HEAD);
  len += format_decimal (buf + len, count);
  memcpy (buf + len, ROW_COUNT_TIME, strlen (ROW_COUNT_TIME));
  len += strlen (ROW_COUNT_TIME);
  len += format_decimal (buf + len, (guint64) MAX (0, g_get_real_time () / 1000));
  buf[len++] = '}';
  return len;
}

/* The commit marker */

/* Keeps the store names of a marker, so a later marker still lists them. */
void
qstore_coordinator_remember_marker_stores (QStoreCoordinator *self,
                                           const char        *marker)
{
  g_autoptr(JsonParser) parser = json_parser_new ();
  JsonNode *root;
  JsonArray *stores;

  if (!json_parser_load_from_data (parser, marker, -1, NULL))
    return;
  root = json_parser_get_root (parser);
  if (root == NULL || !JSON_NODE_HOLDS_OBJECT (root))
    return;
  stores = json_object_get_array_member (json_node_get_object (root), "stores");
  if (stores == NULL)
    return;
  for (guint i = 0; i < json_array_get_length (stores); i++)
    {
      JsonNode *node = json_array_get_element (stores, i);
      const char *name;

      if (json_node_get_value_type (node) != G_TYPE_STRING)
        continue;
      name = json_node_get_string (node);
      if (!g_ptr_array_find_with_equal_func (self->interrupted_stores, name, g_str_equal, NULL))
        g_ptr_array_add (self->interrupted_stores, g_strdup (name));
    }
}

/* Writing a commit */

static int
store_rank (const char *name)
{
  if (g_str_equal (name, QSTORE_STATS_STORE_NAME))
    return 1;
  if (g_str_equal (name, QSTORE_CATALOG_STORE_NAME))
    return 2;
  return 0;
}

static gint
compare_store_ids (gconstpointer a,
                   gconstpointer b,
                   gpointer      user_data)
{
  QStorePending *pending = user_data;
  const char *name_a = qstore_pending_store_get_name (pending, *(const guint *) a);
  const char *name_b = qstore_pending_store_get_name (pending, *(const guint *) b);
  int rank_a = store_rank (name_a), rank_b = store_rank (name_b);

  if (rank_a != rank_b)
    return rank_a - rank_b;
  return strcmp (name_a, name_b);
}

static void
pending_put_meta (QStoreCoordinator *self,
                  GBytes            *key,
                  const char        *value)
{
  guint catalog = qstore_pending_lookup_store (self->pending, self->catalog, TRUE);
  gsize key_len;
  const guint8 *key_data = g_bytes_get_data (key, &key_len);

  qstore_pending_write (self->pending, catalog, key_data, key_len,
                        (const guint8 *) value, value ? strlen (value) : 0,
                        value == NULL);
}

static char *
marker_json (QStoreCoordinator *self,
             guint64            tx_id,
             GPtrArray         *stores)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autoptr(JsonGenerator) generator = json_generator_new ();
  g_autoptr(JsonNode) root = NULL;

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "tx");
  json_builder_add_int_value (builder, (gint64) tx_id);
  json_builder_set_member_name (builder, "stores");
  json_builder_begin_array (builder);
  for (guint i = 0; i < stores->len; i++)
    json_builder_add_string_value (builder, stores->pdata[i]);
  json_builder_end_array (builder);
  json_builder_end_object (builder);
  root = json_builder_get_root (builder);
  json_generator_set_root (generator, root);
  return json_generator_to_data (generator, NULL);
}

typedef struct
{
  guint store;
  gsize first_op;
  gsize n_ops;
} StoreSlice;

/* The undo journal (qstore_coordinator_set_undo_journal()) */

#define UNDO_TYPE "a(sa(aymay))"

static gboolean
is_meta_key (const QStoreWriteOp *op,
             GBytes              *key)
{
  gsize len;
  const guint8 *data = g_bytes_get_data (key, &len);

  return op->key_len == len && memcmp (op->key, data, len) == 0;
}

/* What every key of the commit held before it, store by store: a
 * GVariant of UNDO_TYPE. The marker and the journal are left out: they
 * are the commit's own bookkeeping. */
static GBytes *
build_undo (QStoreCoordinator  *self,
            QStoreWriteOp      *ops,
            GArray             *slices,
            GError            **error)
{
  g_autoptr(GBytes) marker_key = qstore_catalog_key_for_meta (META_COMMIT);
  g_autoptr(GBytes) undo_key = qstore_catalog_key_for_meta (META_UNDO);
  g_auto(GVariantBuilder) builder = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE (UNDO_TYPE));
  g_autoptr(GVariant) journal = NULL;

  for (guint i = 0; i < slices->len; i++)
    {
      StoreSlice *slice = &g_array_index (slices, StoreSlice, i);
      const char *name = qstore_pending_store_get_name (self->pending, slice->store);

      g_variant_builder_open (&builder, G_VARIANT_TYPE ("(sa(aymay))"));
      g_variant_builder_add (&builder, "s", name);
      g_variant_builder_open (&builder, G_VARIANT_TYPE ("a(aymay)"));
      for (gsize k = slice->first_op; k < slice->first_op + slice->n_ops; k++)
        {
          const QStoreWriteOp *op = &ops[k];
          g_autoptr(GBytes) old = NULL;
          GError *local_error = NULL;
          GVariant *old_value = NULL;

          if (op->store == self->catalog &&
              (is_meta_key (op, marker_key) || is_meta_key (op, undo_key)))
            continue;
          old = qstore_kv_get (op->store, op->key, op->key_len, &local_error);
          if (local_error != NULL)
            {
              g_propagate_prefixed_error (error, local_error,
                                          _("Reading what store “%s” holds before a commit "
                                          "without an atomic batch: "), name);
              return NULL;
            }
          if (old != NULL)
            old_value = g_variant_new_from_bytes (G_VARIANT_TYPE_BYTESTRING, old, TRUE);
          g_variant_builder_add_value (&builder,
                                       g_variant_new ("(@ay@may)",
                                                      g_variant_new_fixed_array (G_VARIANT_TYPE_BYTE,
                                                                                 op->key, op->key_len, 1),
                                                      g_variant_new_maybe (G_VARIANT_TYPE_BYTESTRING,
                                                                           old_value)));
        }
      g_variant_builder_close (&builder);
      g_variant_builder_close (&builder);
    }
  journal = g_variant_ref_sink (g_variant_builder_end (&builder));
  return g_variant_get_data_as_bytes (journal);
}

/* Puts back what the journal says every store held, then removes the
 * journal. Each write is synchronous, so nothing of the commit can become
 * durable after the journal is gone. */
static gboolean
apply_undo (QStoreCoordinator  *self,
            GBytes             *journal,
            GError            **error)
{
  g_autoptr(GVariant) stores = g_variant_new_from_bytes (G_VARIANT_TYPE (UNDO_TYPE), journal,
                                                         FALSE);
  g_autoptr(GBytes) undo_key = qstore_catalog_key_for_meta (META_UNDO);
  QStoreWriteOp remove = { 0 };
  GVariantIter iter;
  const char *name;
  GVariant *entries;

  /* Tests make the undo fail, as a crash before it would. */
  if (!_qstore_fault_check (QSTORE_COORDINATOR_FAULT_UNDO, error))
    return FALSE;
  if (!g_variant_is_normal_form (stores))
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_CORRUPT,
                   _("The undo journal of the commit interrupted in the %s store at “%s” "
                   "is damaged"),
                   qstore_provider_get_name (self->provider),
                   qstore_provider_get_location (self->provider));
      return FALSE;
    }

  g_variant_iter_init (&iter, stores);
  while (g_variant_iter_next (&iter, "(&s@a(aymay))", &name, &entries))
    {
      g_autoptr(GVariant) owned = entries;
      g_autoptr(QStoreKV) kv = NULL;
      g_autofree QStoreWriteOp *ops = NULL;
      gsize n = g_variant_n_children (entries);
      gboolean ok;

      if (g_str_equal (name, QSTORE_CATALOG_STORE_NAME))
        kv = g_object_ref (self->catalog);
      else if (g_str_equal (name, QSTORE_STATS_STORE_NAME))
        kv = g_object_ref (self->stats);
      else if (!(kv = qstore_provider_open_store (self->provider, name, error)))
        return FALSE;

      ops = g_new0 (QStoreWriteOp, MAX (n, 1));
      for (gsize i = 0; i < n; i++)
        {
          g_autoptr(GVariant) entry = g_variant_get_child_value (entries, i);
          g_autoptr(GVariant) key = g_variant_get_child_value (entry, 0);
          g_autoptr(GVariant) maybe = g_variant_get_child_value (entry, 1);
          g_autoptr(GVariant) old = g_variant_get_maybe (maybe);

          ops[i].store = kv;
          ops[i].key = g_variant_get_fixed_array (key, &ops[i].key_len, 1);
          if (old != NULL)
            {
              ops[i].kind = QSTORE_WRITE_OP_PUT;
              ops[i].value = g_variant_get_fixed_array (old, &ops[i].value_len, 1);
            }
          else
            ops[i].kind = QSTORE_WRITE_OP_DELETE;
        }
      /* The entries live as long as @stores: the pointers stay valid. */
      ok = n == 0 || qstore_provider_write (self->provider, ops, n, QSTORE_WRITE_SYNC, error);
      if (!ok)
        {
          g_prefix_error (error, _("Undoing the interrupted commit in store “%s”: "), name);
          return FALSE;
        }
    }

  remove.store = self->catalog;
  remove.kind = QSTORE_WRITE_OP_DELETE;
  remove.key = g_bytes_get_data (undo_key, &remove.key_len);
  return qstore_provider_write (self->provider, &remove, 1, QSTORE_WRITE_SYNC, error);
}

gboolean
qstore_coordinator_recover_undo (QStoreCoordinator  *self,
                                 GError            **error)
{
  g_autoptr(GBytes) key = qstore_catalog_key_for_meta (META_UNDO);
  g_autoptr(GBytes) journal = NULL;
  g_autoptr(GError) local_error = NULL;
  gsize key_len;
  const guint8 *key_data = g_bytes_get_data (key, &key_len);

  if (self->pending_undo != NULL)
    journal = g_bytes_ref (self->pending_undo);
  else
    {
      /* Nobody can undo through a read-only handle: its reads may see a
       * torn commit, the writer's next open undoes it. */
      if (qstore_provider_get_flags (self->provider) & QSTORE_OPEN_READ_ONLY)
        return TRUE;
      journal = qstore_kv_get (self->catalog, key_data, key_len, &local_error);
      if (local_error != NULL)
        {
          g_propagate_prefixed_error (error, g_steal_pointer (&local_error),
                                      _("Reading the undo journal of the %s store at “%s”: "),
                                      qstore_provider_get_name (self->provider),
                                      qstore_provider_get_location (self->provider));
          return FALSE;
        }
      if (journal == NULL)
        return TRUE;
    }

  if (!apply_undo (self, journal, &local_error))
    {
      if (!g_error_matches (local_error, QSTORE_ERROR, QSTORE_ERROR_CORRUPT))
        {
          g_clear_pointer (&self->pending_undo, g_bytes_unref);
          self->pending_undo = g_bytes_ref (journal);
          g_propagate_error (error, g_steal_pointer (&local_error));
          return FALSE;
        }
      /* Nothing can be undone from it: the marker's repair is all that is
       * left. */
      g_warning ("%s; the commit it was for is repaired as a torn one", local_error->message);
      {
        QStoreWriteOp remove = { 0 };

        g_clear_error (&local_error);
        remove.store = self->catalog;
        remove.kind = QSTORE_WRITE_OP_DELETE;
        remove.key = key_data;
        remove.key_len = key_len;
        if (!qstore_provider_write (self->provider, &remove, 1, QSTORE_WRITE_SYNC, error))
          return FALSE;
      }
    }
  g_clear_pointer (&self->pending_undo, g_bytes_unref);
  return TRUE;
}

/* Without an atomic batch: marker, then store by store, marker removal
 * last. Each provider write is synchronous so none of them can become
 * durable after the marker's removal. */
static gboolean
write_store_by_store (QStoreCoordinator  *self,
                      guint64             tx_id,
                      QStoreWriteOp      *ops,
                      gsize               n_ops,
                      GArray             *slices,
                      GError            **error)
{
  g_autoptr(GPtrArray) stores = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GBytes) marker_key = qstore_catalog_key_for_meta (META_COMMIT);
  g_autoptr(GBytes) undo_key = qstore_catalog_key_for_meta (META_UNDO);
  g_autoptr(GBytes) undo = NULL;
  g_autofree char *marker = NULL;
  QStoreWriteOp op = { 0 };
  QStoreWriteOp first[2] = { { 0 } };
  StoreSlice *last;
  gsize marker_key_len, undo_key_len;
  const guint8 *marker_key_data = g_bytes_get_data (marker_key, &marker_key_len);
  const guint8 *undo_key_data = g_bytes_get_data (undo_key, &undo_key_len);

  for (guint i = 0; i < self->interrupted_stores->len; i++)
    g_ptr_array_add (stores, g_strdup (self->interrupted_stores->pdata[i]));
  for (guint i = 0; i < slices->len; i++)
    {
      const char *name = qstore_pending_store_get_name (self->pending,
                                                        g_array_index (slices, StoreSlice, i).store);

      if (!g_ptr_array_find_with_equal_func (stores, name, g_str_equal, NULL))
        g_ptr_array_add (stores, g_strdup (name));
    }
  marker = marker_json (self, tx_id, stores);
  if (self->undo_journal && !(undo = build_undo (self, ops, slices, error)))
    return FALSE;

  /* The marker and the journal land together, before anything else. */
  first[0].store = self->catalog;
  first[0].kind = QSTORE_WRITE_OP_PUT;
  first[0].key = marker_key_data;
  first[0].key_len = marker_key_len;
  first[0].value = (const guint8 *) marker;
  first[0].value_len = strlen (marker);
  if (undo != NULL)
    {
      first[1].store = self->catalog;
      first[1].kind = QSTORE_WRITE_OP_PUT;
      first[1].key = undo_key_data;
      first[1].key_len = undo_key_len;
      first[1].value = g_bytes_get_data (undo, &first[1].value_len);
    }
  if (!qstore_provider_write (self->provider, first, undo != NULL ? 2 : 1,
                              QSTORE_WRITE_SYNC, error))
    return FALSE;

  /* The catalog is last (store_rank): its write also carries the marker's
   * removal, through the same store handle as its other ops. */
  last = &g_array_index (slices, StoreSlice, slices->len - 1);
  g_assert (g_str_equal (qstore_pending_store_get_name (self->pending, last->store),
                         QSTORE_CATALOG_STORE_NAME));
  op.store = qstore_pending_store_get_kv (self->pending, last->store);
  op.kind = QSTORE_WRITE_OP_DELETE;
  op.key = marker_key_data;
  op.key_len = marker_key_len;
  /* qstore_coordinator_commit_pending() left room for it, and for the
   * journal's removal. */
  g_assert (last->first_op + last->n_ops == n_ops);
  ops[n_ops] = op;
  last->n_ops++;
  if (undo != NULL)
    {
      op.key = undo_key_data;
      op.key_len = undo_key_len;
      ops[n_ops + 1] = op;
      last->n_ops++;
    }

  for (guint i = 0; i < slices->len; i++)
    {
      StoreSlice *slice = &g_array_index (slices, StoreSlice, i);

      if (!qstore_provider_write (self->provider, &ops[slice->first_op],
                                  slice->n_ops, QSTORE_WRITE_SYNC, error))
        {
          /* The marker is durable: report it, and list its stores in the
           * next one. */
          g_free (self->interrupted);
          self->interrupted = g_steal_pointer (&marker);
          qstore_coordinator_remember_marker_stores (self, self->interrupted);
          if (undo != NULL)
            {
              GError *undo_error = NULL;

              /* Undone now, or by the next commit or open. */
              self->pending_undo = g_bytes_ref (undo);
              if (!qstore_coordinator_recover_undo (self, &undo_error))
                {
                  g_prefix_error (error, "Commit %" G_GUINT64_FORMAT " was interrupted after "
                                  "writing %u of %u stores, and cannot be undone yet (%s): ",
                                  tx_id, i, slices->len, undo_error->message);
                  g_error_free (undo_error);
                  return FALSE;
                }
              g_prefix_error (error, "Commit %" G_GUINT64_FORMAT " was interrupted after "
                              "writing %u of %u stores, and was undone: ", tx_id, i,
                              slices->len);
              return FALSE;
            }
          g_prefix_error (error, "Commit %" G_GUINT64_FORMAT " was interrupted after "
                          "writing %u of %u stores (the database must repair the "
                          "stores its marker lists): ", tx_id, i, slices->len);
          return FALSE;
        }
    }

  g_clear_pointer (&self->interrupted, g_free);
  g_ptr_array_set_size (self->interrupted_stores, 0);
  return TRUE;
}

gboolean
qstore_coordinator_check_key_length (QStoreCoordinator  *self,
                                     const char         *name,
                                     gsize               key_len,
                                     gsize               max_key,
                                     GError            **error)
{
  /* Checked here, not by the provider, so a commit made store by store
   * is refused before it writes anything. */
  if (max_key == 0 || key_len <= max_key)
    return TRUE;
  g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
               "A key of %" G_GSIZE_FORMAT " bytes was written to store "
               "“%s”, but the %s provider stores keys of at most "
               "%" G_GSIZE_FORMAT " bytes: shorten the key columns",
               key_len, name, qstore_provider_get_name (self->provider), max_key);
  return FALSE;
}

gboolean
qstore_coordinator_commit_pending (QStoreCoordinator   *self,
                                   guint64              tx_id,
                                   const char * const  *drop,
                                   GError             **error)
{
  gboolean atomic = (qstore_provider_get_capabilities (self->provider) &
                     QSTORE_CAPABILITY_ATOMIC_BATCH) != 0;
  gsize max_key = qstore_provider_get_max_key_length (self->provider);
  guint n_stores = qstore_pending_get_n_stores (self->pending);
  /* Sized for every store the commit may add (the statistics, the
   * catalog): they never grow. */
  g_autoptr(GArray) store_ids = g_array_sized_new (FALSE, FALSE, sizeof (guint), n_stores + 2);
  g_autoptr(GArray) slices = g_array_sized_new (FALSE, FALSE, sizeof (StoreSlice), n_stores + 2);
  g_autofree QStoreWriteOp *ops = NULL;
  gsize n_ops = 0, max_ops = 0;
  char tx_text[24];
  guint stats_id;

  /* What commit adds is never undone by a savepoint. */
  qstore_pending_set_undo (self->pending, FALSE);

  /* A torn commit whose undo failed comes first: nothing may be written
   * over it. */
  if (self->pending_undo != NULL && !qstore_coordinator_recover_undo (self, error))
    return FALSE;

  stats_id = qstore_pending_lookup_store (self->pending, self->stats, TRUE);
  for (guint i = 0; i < self->tx_tables->len; i++)
    {
      TableEntry *entry = self->tx_tables->pdata[i];
      char json[ROW_COUNT_JSON_MAX];
      gsize json_len;

      if (entry->delta == 0)
        continue;
      if (!qstore_coordinator_load_row_count (self, entry, error))
        return FALSE;
      json_len = row_count_json (json, (guint64) MAX (0, entry->committed + entry->delta));
      qstore_pending_write (self->pending, stats_id,
                            (const guint8 *) entry->stats_key, strlen (entry->stats_key),
                            (const guint8 *) json, json_len, FALSE);
    }

  /* The id goes with the row counts, so a small commit writes one store
   * fewer. Store by store, it goes with the marker's removal, last, so a
   * torn commit does not advance it. */
  tx_text[format_decimal (tx_text, tx_id)] = '\0';
  if (atomic)
    {
      gsize key_len;
      const guint8 *key = g_bytes_get_data (self->tx_key, &key_len);

      qstore_pending_write (self->pending, stats_id, key, key_len,
                            (const guint8 *) tx_text, strlen (tx_text), FALSE);
    }
  else
    pending_put_meta (self, self->tx_key, tx_text);
  /* A marker a crash left is removed by the next commit that completes
   * (without an atomic batch, the protocol below removes it once more,
   * last). */
  if (self->interrupted != NULL)
    {
      g_autoptr(GBytes) marker_key = qstore_catalog_key_for_meta (META_COMMIT);

      pending_put_meta (self, marker_key, NULL);
    }

  for (guint i = 0; i < qstore_pending_get_n_stores (self->pending); i++)
    {
      gsize n = qstore_pending_store_get_n_entries (self->pending, i);

      if (n > 0)
        g_array_append_val (store_ids, i);
      max_ops += n;
    }
  g_array_sort_with_data (store_ids, compare_store_ids, self->pending);

  /* A transaction that wrote out ends in its write transaction, and a
   * large one goes through one too (see qstore-coordinator-spill.c): the
   * array of all its writes, a third of the buffer's size, is never
   * made. Not on a server, where a chunk costs a round trip and one
   * write goes out as one pipeline. */
  if (self->spill != NULL ||
      (max_ops > QSTORE_COORDINATOR_STREAM_OPS && (drop == NULL || drop[0] == NULL) &&
       (qstore_provider_get_capabilities (self->provider) &
        (QSTORE_CAPABILITY_WRITE_TXN | QSTORE_CAPABILITY_REMOTE)) == QSTORE_CAPABILITY_WRITE_TXN))
    {
      gboolean ok = qstore_coordinator_spill_commit (self, drop, error);

      qstore_pending_reset (self->pending);
      if (!ok)
        return FALSE;
      g_clear_pointer (&self->interrupted, g_free);
      g_ptr_array_set_size (self->interrupted_stores, 0);
      return TRUE;
    }

  /* Exactly the size needed (a GArray would round it up to a power of
   * two), with room for the removals of the marker and the undo journal
   * by write_store_by_store(). A large transaction holds one op per
   * buffered write. */
  ops = g_new (QStoreWriteOp, max_ops + 2);
  for (guint i = 0; i < store_ids->len; i++)
    {
      guint store = g_array_index (store_ids, guint, i);
      QStoreKV *kv = qstore_pending_store_get_kv (self->pending, store);
      const char *name = qstore_pending_store_get_name (self->pending, store);
      QStorePendingCursor cursor;
      StoreSlice slice = { store, n_ops, 0 };
      gboolean more;

      for (more = qstore_pending_seek (self->pending, store, NULL, 0, TRUE, FALSE, &cursor);
           more;
           more = qstore_pending_cursor_step (&cursor, FALSE))
        {
          const guint8 *entry = qstore_pending_cursor_get_entry (&cursor);
          QStoreWriteOp op;

          qstore_coordinator_entry_op (kv, entry, &op);
          if (!qstore_coordinator_check_key_length (self, name, op.key_len, max_key, error))
            return FALSE;
          g_assert (n_ops < max_ops);
          ops[n_ops++] = op;
        }
      slice.n_ops = n_ops - slice.first_op;
      g_array_append_val (slices, slice);
    }

  /* The ops point into the buffer's arena, not its trees: free those
   * before the provider allocates for its own write. Whatever happens
   * next, the transaction ends. */
  qstore_pending_reset (self->pending);

  if (drop != NULL)
    {
      /* Restructuring is all or nothing on every provider. */
      if (!qstore_provider_restructure (self->provider, drop, NULL, NULL,
                                        ops, n_ops, error))
        return FALSE;
      g_clear_pointer (&self->interrupted, g_free);
      g_ptr_array_set_size (self->interrupted_stores, 0);
      return TRUE;
    }
  if (atomic || slices->len == 1)
    {
      if (!qstore_provider_write (self->provider, ops, n_ops, QSTORE_WRITE_SYNC, error))
        return FALSE;
      g_clear_pointer (&self->interrupted, g_free);
      g_ptr_array_set_size (self->interrupted_stores, 0);
      return TRUE;
    }
  return write_store_by_store (self, tx_id, ops, n_ops, slices, error);
}
