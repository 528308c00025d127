/* qstore-mview-extension.c: materialized views in every database: open, read back, close
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include <json-glib/json-glib.h>

#include "qstore-affinity-private.h"
#include "qstore-coordinator-private.h"
#include "qstore-enums.h"
#include "qstore-error.h"
#include "qstore-provider-private.h"
#include "qstore-result-private.h"
#include "qstore-sql-token-private.h"
#include "qstore-table-schema-private.h"
#include "qstore-vtab-private.h"
#include "qstore-mview-ddl-private.h"
#include "qstore-mview-extension-private.h"
#include "qstore-rehydration-result-private.h"

#define CLEAN_SHUTDOWN_META "clean_shutdown"

/* The views' part of a database's life: their state made at open, the
 * clean-shutdown marker consumed, each view read back from the catalog
 * once its sources are loaded (adopted when provably current, else
 * refilled), and at a clean close the durable stale set and the marker
 * written last. */

/* A JSON array of strings, else NULL: malformed means "trust nothing". */
static GHashTable *
parse_name_set (const char *text)
{
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GHashTable) names = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  JsonNode *root;
  JsonArray *array;

  if (text == NULL || !json_parser_load_from_data (parser, text, -1, NULL))
    return NULL;
  root = json_parser_get_root (parser);
  if (root == NULL || !JSON_NODE_HOLDS_ARRAY (root))
    return NULL;
  array = json_node_get_array (root);
  for (guint i = 0; i < json_array_get_length (array); i++)
    {
      JsonNode *element = json_array_get_element (array, i);

      if (!JSON_NODE_HOLDS_VALUE (element) || json_node_get_value_type (element) != G_TYPE_STRING)
        return NULL;
      g_hash_table_add (names, qstore_mview_lower (json_node_get_string (element)));
    }
  return g_steal_pointer (&names);
}

typedef struct
{
  gboolean    use_durable;   /* atomic provider with the durable set present */
  GHashTable *durable;       /* NULL: malformed */
  GHashTable *marker;        /* NULL: absent or malformed */
} Trust;

static gboolean
trust_allows (const Trust *trust,
              const char  *label)
{
  if (trust->use_durable)
    return trust->durable != NULL && !g_hash_table_contains (trust->durable, label);
  return trust->marker != NULL && !g_hash_table_contains (trust->marker, label);
}

typedef struct
{
  QStoreMView *view;
  char        *error;
  gboolean     done;
} Pending;

static void
pending_free (Pending *pending)
{
  if (pending->view != NULL)
    qstore_mview_view_free (pending->view);
  g_free (pending->error);
  g_free (pending);
}

static gboolean
pending_waits_for (GPtrArray   *pendings,
                   Pending     *self_pending,
                   const char  *lower_name)
{
  for (guint i = 0; i < pendings->len; i++)
    {
      Pending *other = g_ptr_array_index (pendings, i);

      if (other != self_pending && !other->done && g_str_equal (other->view->lower, lower_name))
        return TRUE;
    }
  return FALSE;
}

static void
rehydrate_failed (QStoreMViews *self,
                  QStoreMView  *view,
                  const char   *message)
{
  g_autofree char *label = qstore_mview_qualified (view->name);

  qstore_rehydration_result_add_error_entry (self->db->rehydration, label, view->definition,
                                             message);
  g_hash_table_replace (self->unloaded, g_strdup (view->lower), g_strdup (view->definition));
  qstore_mview_hide_backing (self, view->name);
}

/* Phase 3: each view is adopted (its stored contents kept) only when all
 * of these hold: its backing exists with the shape the body has now;
 * every source is a qstore table of this database and every source view
 * was adopted in this open; and the trust basis allows it — the durable
 * stale set with an atomic provider (a crash cannot tear a source from
 * the views over it there, so only a stale view may be behind), else a
 * clean-shutdown marker that does not list it. Anything else is computed
 * again ("refilled"). Views over views wait for the views they read, in
 * rounds; a round without progress leaves errors. */
static void
rehydrate (QStoreDatabase *db,
           GArray         *items)
{
  QStoreMViews *self = qstore_mview_mviews_of (db);
  QStoreRehydrationResult *result = db->rehydration;
  gboolean read_only = (db->flags & QSTORE_OPEN_READ_ONLY) != 0;
  g_autoptr(GPtrArray) pendings = g_ptr_array_new_with_free_func ((GDestroyNotify) pending_free);
  g_autoptr(GHashTable) adopted = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_autoptr(GError) error = NULL;
  g_autofree char *durable = NULL;
  Trust trust = { FALSE, NULL, NULL };
  gboolean progressed = TRUE;

  self->rehydrating = TRUE;

  /* The trust basis, read before anything is written. */
  if (!qstore_mview_read_meta_text (self, STALE_SET_META, &durable, &error))
    {
      g_warning ("The durable set of stale materialized views cannot be read, so no stored "
                 "view is trusted: %s", error->message);
      g_clear_error (&error);
      trust.use_durable = self->atomic;
    }
  else if (self->atomic)
    {
      trust.use_durable = durable != NULL;
      trust.durable = parse_name_set (durable);
      self->durable_text = g_strdup (durable);
      self->durable_known = TRUE;
    }
  else if (durable != NULL && !read_only)
    {
      /* Commits that go store by store can tear a view from its sources,
       * and this session does not keep the set: a set left by an earlier
       * atomic session must not vouch for views after it. */
      if (!qstore_mview_write_meta (self, STALE_SET_META, NULL, &error))
        {
          g_warning ("%s", error->message);
          g_clear_error (&error);
        }
    }
  trust.marker = parse_name_set (self->clean_shutdown);

  for (guint i = 0; i < items->len; i++)
    {
      QStoreCatalogItem *item = &g_array_index (items, QStoreCatalogItem, i);
      const char *schema = item->schema;
      const char *name = item->name;
      const char *definition = item->text;
      g_autofree char *label = g_strdup_printf ("%s.%s", schema, name);
      QStoreMView *view;

      if (!g_str_equal (schema, "main"))
        {
          g_autofree char *message =
            g_strdup_printf ("Materialized view “%s” is in schema “%s”, which is not "
                             "supported: only “main” is", label, schema);

          qstore_rehydration_result_add_error_entry (result, label, definition, message);
          continue;
        }
      if (!(view = qstore_mview_view_from_definition (self, name, definition, &error)))
        {
          qstore_rehydration_result_add_error_entry (result, label, definition, error->message);
          g_hash_table_replace (self->unloaded, qstore_mview_lower (name), g_strdup (definition));
          qstore_mview_hide_backing (self, name);
          g_clear_error (&error);
          continue;
        }
      {
        Pending *pending = g_new0 (Pending, 1);

        pending->view = view;
        g_ptr_array_add (pendings, pending);
      }
    }

  while (progressed)
    {
      progressed = FALSE;
      for (guint i = 0; i < pendings->len; i++)
        {
          Pending *pending = g_ptr_array_index (pendings, i);
          QStoreMView *view = pending->view;
          g_autofree char *label = NULL;
          QStoreSqlTable *entry;
          gboolean waits = FALSE;
          gboolean adopt;
          Plan *plan;

          if (pending->done)
            continue;

          /* A view whose source is not there yet may find it in a later
           * round (a view over a view whose contents are not stored). */
          if (!(plan = qstore_mview_plan_new (db, view->name, view->body, view->column_names, &error)))
            {
              g_free (pending->error);
              pending->error = g_strdup (error->message);
              g_clear_error (&error);
              continue;
            }
          for (guint k = 0; !waits && k < plan->sources->len; k++)
            {
              PlanSource *source = g_ptr_array_index (plan->sources, k);

              waits = !source->temp && pending_waits_for (pendings, pending, source->lower);
            }
          if (waits)
            {
              qstore_mview_plan_free (plan);
              continue;
            }

          label = qstore_mview_qualified (view->name);
          entry = qstore_mview_view_entry (view);
          adopt = entry != NULL && g_strcmp0 (entry->schema->sql, plan->backing_sql) == 0 &&
                  entry->schema->indexes->len == 0 && !plan->has_temp &&
                  trust_allows (&trust, label);
          for (guint k = 0; adopt && k < plan->sources->len; k++)
            {
              PlanSource *source = g_ptr_array_index (plan->sources, k);

              if (g_hash_table_contains (self->views, source->lower) &&
                  !g_hash_table_contains (adopted, source->lower))
                adopt = FALSE;
            }

          view->plan = plan;
          pending->done = TRUE;
          progressed = TRUE;

          if (adopt)
            {
              g_hash_table_add (adopted, g_strdup (view->lower));
              qstore_rehydration_result_add_materialized_view (result, label, TRUE);
            }
          else if (read_only)
            {
              if (entry == NULL)
                {
                  rehydrate_failed (self, view,
                                    "Its contents are not stored and the database was opened "
                                    "read-only: open it for writing to compute them");
                  continue;
                }
              /* It may be behind, and nothing may be written: it is kept, as stale. */
              view->stale = TRUE;
              view->stale_reason = g_strdup ("its stored contents may be behind, and the "
                                             "database was opened read-only");
              qstore_rehydration_result_add_materialized_view (result, label, FALSE);
            }
          else if (!qstore_mview_materialize (self, view, FALSE, &error))
            {
              rehydrate_failed (self, view, error->message);
              g_clear_error (&error);
              continue;
            }
          else
            qstore_rehydration_result_add_materialized_view (result, label, FALSE);

          qstore_rehydration_result_forget_table (result, label);
          qstore_mview_register_view (self, g_steal_pointer (&pending->view));
        }
    }

  for (guint i = 0; i < pendings->len; i++)
    {
      Pending *pending = g_ptr_array_index (pendings, i);

      if (pending->done)
        continue;
      rehydrate_failed (self, pending->view,
                        pending->error != NULL
                          ? pending->error
                          : "It reads a materialized view that does not load, or materialized "
                            "views read each other in a cycle");
    }

  g_clear_pointer (&trust.durable, g_hash_table_unref);
  g_clear_pointer (&trust.marker, g_hash_table_unref);

  qstore_mview_rebuild_dependents (self);
  /* Refilled views are current, adopted ones were not stale: the stored
   * set may name views that no longer are. */
  self->rehydrating = FALSE;
  qstore_mview_persist_stale_set_or_warn (self);
}

/* Opening and closing */

/* The clean-shutdown marker is single use: reading it at open consumes it,
 * so a crash before the next close leaves none. */
static gboolean
consume_clean_shutdown (QStoreMViews  *self,
                        GError       **error)
{
  QStoreDatabase *db = self->db;
  g_autoptr(GBytes) key = qstore_catalog_key_for_meta (CLEAN_SHUTDOWN_META);
  g_autoptr(GBytes) value = NULL;
  GError *local_error = NULL;
  QStoreWriteOp op = { 0 };
  gsize key_len;

  op.key = g_bytes_get_data (key, &key_len);
  op.key_len = key_len;
  value = qstore_kv_get (db->catalog, op.key, op.key_len, &local_error);
  if (local_error != NULL)
    {
      g_propagate_error (error, local_error);
      return FALSE;
    }
  if (value == NULL)
    return TRUE;

  self->clean_shutdown = g_strndup (g_bytes_get_data (value, NULL), g_bytes_get_size (value));
  if (db->flags & QSTORE_OPEN_READ_ONLY)
    return TRUE;

  op.store = db->catalog;
  op.kind = QSTORE_WRITE_OP_DELETE;
  return qstore_provider_write (db->provider, &op, 1, QSTORE_WRITE_SYNC, error);
}

static void
mviews_free (QStoreMViews *self)
{
  if (self->observing && self->db->coordinator != NULL)
    qstore_coordinator_set_observer (self->db->coordinator, NULL, NULL);
  if (self->hooks && self->db->db != NULL)
    {
      sqlite3_update_hook (self->db->db, NULL, NULL);
      sqlite3_rollback_hook (self->db->db, NULL, NULL);
    }
  g_hash_table_unref (self->dependents);
  g_ptr_array_unref (self->order);
  g_hash_table_unref (self->views);
  g_hash_table_unref (self->unloaded);
  g_free (self->clean_shutdown);
  g_free (self->durable_text);
  g_free (self->committing);
  g_free (self);
}

static gboolean
attach (QStoreDatabase  *db,
        GError         **error)
{
  QStoreMViews *self = g_new0 (QStoreMViews, 1);

  self->db = db;
  self->views = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, (GDestroyNotify) qstore_mview_view_free);
  self->order = g_ptr_array_new ();
  self->dependents = g_hash_table_new_full (qstore_mview_name_hash, qstore_mview_name_equal, g_free,
                                            (GDestroyNotify) qstore_mview_dependents_free);
  self->unloaded = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  self->threshold = DEFAULT_REBUILD_ROW_THRESHOLD;
  self->atomic = (qstore_provider_get_capabilities (db->provider) &
                  QSTORE_CAPABILITY_ATOMIC_BATCH) != 0;
  self->observer.changed = qstore_mview_on_changed;
  self->observer.before_commit = qstore_mview_on_before_commit;
  self->observer.undone = qstore_mview_on_undone;
  self->observer.ended = qstore_mview_on_ended;
  qstore_mview_mviews_attach (db, self, (GDestroyNotify) mviews_free);
  return consume_clean_shutdown (self, error);
}

/* A clean close: the durable set, then the marker, written last, that
 * names the views stale at close (they refill at the next open). */
static gboolean
close_cleanly (QStoreDatabase  *db,
               GError         **error)
{
  QStoreMViews *self = qstore_mview_mviews_of (db);
  g_autoptr(GBytes) key = qstore_catalog_key_for_meta (CLEAN_SHUTDOWN_META);
  g_autofree char *stale = NULL;
  QStoreWriteOp op = { 0 };
  gsize key_len;

  if (!qstore_mview_persist_stale_set (self, TRUE, error))
    return FALSE;

  stale = qstore_mview_stale_json (self);
  op.store = db->catalog;
  op.kind = QSTORE_WRITE_OP_PUT;
  op.key = g_bytes_get_data (key, &key_len);
  op.key_len = key_len;
  op.value = (const guint8 *) stale;
  op.value_len = strlen (stale);
  return qstore_provider_write (db->provider, &op, 1, QSTORE_WRITE_SYNC, error);
}

const QStoreDatabaseExtension qstore_mview_extension = {
  .attach = attach,
  .catalog_kind = QSTORE_CATALOG_KEY_MATERIALIZED_VIEW,
  .rehydrate = rehydrate,
  .check_statement = qstore_mview_check_statement,
  .before_write = qstore_mview_before_write,
  .after_write = qstore_mview_after_write,
  .before_ddl = qstore_mview_before_ddl,
  .after_ddl = qstore_mview_after_ddl,
  .close = close_cleanly,
};

/* Public API */
