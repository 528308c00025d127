/* qstore-mview.c: materialized views that maintain themselves
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
#include "qstore-fault-private.h"
#include "qstore-i18n-private.h"
#include "qstore-provider-private.h"
#include "qstore-result-private.h"
#include "qstore-sql-token-private.h"
#include "qstore-table-schema-private.h"
#include "qstore-vtab-private.h"
#include "qstore-mview-private.h"

/* A materialized view's rows live in a qstore table named after it (its
 * backing), written in the same transaction as the changes to what it
 * reads. This file holds the views of a database (QStoreMViews), the
 * public QStoreMaterializedView snapshot, and the durable set of stale
 * views in the catalog: with an atomic provider, a view not in that set
 * is current whatever happened, so its backing is reused on reopen. The
 * other jobs have files of their own: planning (qstore-mview-plan.c),
 * maintenance (qstore-mview-maintain.c), DDL and staleness
 * (qstore-mview-ddl.c), and reading the views back at open
 * (qstore-mview-extension.c). */

/**
 * QStoreMaterializedView:
 *
 * A materialized view of a database, as it stood when
 * [method@Database.list_materialized_views] listed it: its definition,
 * what it reads, how it is kept up to date and whether it is stale.
 *
 * A materialized view is made with `CREATE MATERIALIZED VIEW name AS
 * SELECT …`; its contents are stored in the database and read with
 * `SELECT … FROM name`. Writes to what it reads update it in the same
 * transaction. A view is *stale* when a change to what it reads (a column
 * dropped, renamed or re-collated, the primary key changed, a source
 * dropped) means its definition no longer reads the same thing: it then
 * keeps its last contents and is no longer updated until `REFRESH
 * MATERIALIZED VIEW name` computes it again.
 *
 * The object is immutable.
 */
struct _QStoreMaterializedView
{
  GObject                         parent_instance;

  char                           *name;
  char                           *body;
  char                           *definition;
  QStoreMaterializedViewStrategy  strategy;
  GStrv                           sources;
  gboolean                        stale;
  char                           *stale_reason;
};

enum {
  VIEW_PROP_0,
  VIEW_PROP_NAME,
  VIEW_PROP_SCHEMA,
  VIEW_PROP_BODY,
  VIEW_PROP_DEFINITION,
  VIEW_PROP_STRATEGY,
  VIEW_PROP_SOURCES,
  VIEW_PROP_STALE,
  VIEW_PROP_STALE_REASON,
  VIEW_N_PROPS
};

static GParamSpec *view_properties[VIEW_N_PROPS];

G_DEFINE_FINAL_TYPE (QStoreMaterializedView, qstore_materialized_view, G_TYPE_OBJECT)

static void
qstore_materialized_view_finalize (GObject *object)
{
  QStoreMaterializedView *self = QSTORE_MATERIALIZED_VIEW (object);

  g_free (self->name);
  g_free (self->body);
  g_free (self->definition);
  g_strfreev (self->sources);
  g_free (self->stale_reason);

  G_OBJECT_CLASS (qstore_materialized_view_parent_class)->finalize (object);
}

static void
qstore_materialized_view_get_property (GObject    *object,
                                       guint       prop_id,
                                       GValue     *value,
                                       GParamSpec *pspec)
{
  QStoreMaterializedView *self = QSTORE_MATERIALIZED_VIEW (object);

  switch (prop_id)
    {
    case VIEW_PROP_NAME:
      g_value_set_string (value, self->name);
      break;

    case VIEW_PROP_SCHEMA:
      g_value_set_string (value, "main");
      break;

    case VIEW_PROP_BODY:
      g_value_set_string (value, self->body);
      break;

    case VIEW_PROP_DEFINITION:
      g_value_set_string (value, self->definition);
      break;

    case VIEW_PROP_STRATEGY:
      g_value_set_enum (value, self->strategy);
      break;

    case VIEW_PROP_SOURCES:
      g_value_set_boxed (value, self->sources);
      break;

    case VIEW_PROP_STALE:
      g_value_set_boolean (value, self->stale);
      break;

    case VIEW_PROP_STALE_REASON:
      g_value_set_string (value, self->stale_reason);
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
qstore_materialized_view_class_init (QStoreMaterializedViewClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = qstore_materialized_view_finalize;
  object_class->get_property = qstore_materialized_view_get_property;

  /**
   * QStoreMaterializedView:name:
   *
   * The view's name, as declared.
   */
  view_properties[VIEW_PROP_NAME] =
    g_param_spec_string ("name", NULL, NULL, NULL,
                         G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

  /**
   * QStoreMaterializedView:schema:
   *
   * The view's schema: `main`.
   */
  view_properties[VIEW_PROP_SCHEMA] =
    g_param_spec_string ("schema", NULL, NULL, NULL,
                         G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

  /**
   * QStoreMaterializedView:body:
   *
   * The SELECT that defines the view.
   */
  view_properties[VIEW_PROP_BODY] =
    g_param_spec_string ("body", NULL, NULL, NULL,
                         G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

  /**
   * QStoreMaterializedView:definition:
   *
   * The view's `CREATE MATERIALIZED VIEW` statement, as the catalog keeps
   * it.
   */
  view_properties[VIEW_PROP_DEFINITION] =
    g_param_spec_string ("definition", NULL, NULL, NULL,
                         G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

  /**
   * QStoreMaterializedView:strategy:
   *
   * How the view follows the changes of what it reads.
   */
  view_properties[VIEW_PROP_STRATEGY] =
    g_param_spec_enum ("strategy", NULL, NULL,
                       QSTORE_TYPE_MATERIALIZED_VIEW_STRATEGY,
                       QSTORE_MATERIALIZED_VIEW_STRATEGY_FULL_REBUILD,
                       G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

  /**
   * QStoreMaterializedView:sources:
   *
   * The tables (and materialized views) the view reads, as `schema.name`
   * in lower case: `main` for the database's, `temp` for TEMP tables.
   */
  view_properties[VIEW_PROP_SOURCES] =
    g_param_spec_boxed ("sources", NULL, NULL, G_TYPE_STRV,
                        G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

  /**
   * QStoreMaterializedView:stale:
   *
   * Whether the view is stale: no longer kept up to date, because what it
   * reads changed underneath its definition. `REFRESH MATERIALIZED VIEW`
   * brings it back.
   */
  view_properties[VIEW_PROP_STALE] =
    g_param_spec_boolean ("stale", NULL, NULL, FALSE,
                          G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

  /**
   * QStoreMaterializedView:stale-reason:
   *
   * Why the view is stale, or %NULL.
   */
  view_properties[VIEW_PROP_STALE_REASON] =
    g_param_spec_string ("stale-reason", NULL, NULL, NULL,
                         G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

  g_object_class_install_properties (object_class, VIEW_N_PROPS, view_properties);
}

static void
qstore_materialized_view_init (QStoreMaterializedView *self)
{
}

/**
 * qstore_materialized_view_get_name:
 * @self: a #QStoreMaterializedView
 *
 * Gets the view's name, as declared.
 *
 * Returns: (transfer none): the name
 */
const char *
qstore_materialized_view_get_name (QStoreMaterializedView *self)
{
  g_return_val_if_fail (QSTORE_IS_MATERIALIZED_VIEW (self), NULL);
  return self->name;
}

/**
 * qstore_materialized_view_get_schema:
 * @self: a #QStoreMaterializedView
 *
 * Gets the view's schema.
 *
 * Returns: (transfer none): `main`, the only schema
 */
const char *
qstore_materialized_view_get_schema (QStoreMaterializedView *self)
{
  g_return_val_if_fail (QSTORE_IS_MATERIALIZED_VIEW (self), NULL);
  return "main";
}

/**
 * qstore_materialized_view_get_body:
 * @self: a #QStoreMaterializedView
 *
 * Gets the query that defines the view.
 *
 * Returns: (transfer none): the SELECT
 */
const char *
qstore_materialized_view_get_body (QStoreMaterializedView *self)
{
  g_return_val_if_fail (QSTORE_IS_MATERIALIZED_VIEW (self), NULL);
  return self->body;
}

/**
 * qstore_materialized_view_get_definition:
 * @self: a #QStoreMaterializedView
 *
 * Gets the view's definition as the catalog keeps it: `CREATE
 * MATERIALIZED VIEW name AS SELECT …`.
 *
 * Returns: (transfer none): the statement
 */
const char *
qstore_materialized_view_get_definition (QStoreMaterializedView *self)
{
  g_return_val_if_fail (QSTORE_IS_MATERIALIZED_VIEW (self), NULL);
  return self->definition;
}

/**
 * qstore_materialized_view_get_strategy:
 * @self: a #QStoreMaterializedView
 *
 * Gets how the view follows the changes of what it reads.
 *
 * Returns: the strategy
 */
QStoreMaterializedViewStrategy
qstore_materialized_view_get_strategy (QStoreMaterializedView *self)
{
  g_return_val_if_fail (QSTORE_IS_MATERIALIZED_VIEW (self),
                        QSTORE_MATERIALIZED_VIEW_STRATEGY_FULL_REBUILD);
  return self->strategy;
}

/**
 * qstore_materialized_view_get_sources:
 * @self: a #QStoreMaterializedView
 *
 * Gets the tables the view reads: the database's tables and materialized
 * views as `main.name`, TEMP tables as `temp.name`, in lower case. Plain
 * views are looked through: the tables they read are listed.
 *
 * Returns: (transfer none) (array zero-terminated=1): the sources, sorted
 */
const char * const *
qstore_materialized_view_get_sources (QStoreMaterializedView *self)
{
  g_return_val_if_fail (QSTORE_IS_MATERIALIZED_VIEW (self), NULL);
  return (const char * const *) self->sources;
}

/**
 * qstore_materialized_view_get_stale:
 * @self: a #QStoreMaterializedView
 *
 * Gets whether the view is stale: it keeps its last contents but is no
 * longer kept up to date, until `REFRESH MATERIALIZED VIEW`.
 *
 * Returns: %TRUE when the view is stale
 */
gboolean
qstore_materialized_view_get_stale (QStoreMaterializedView *self)
{
  g_return_val_if_fail (QSTORE_IS_MATERIALIZED_VIEW (self), FALSE);
  return self->stale;
}

/**
 * qstore_materialized_view_get_stale_reason:
 * @self: a #QStoreMaterializedView
 *
 * Gets why the view is stale.
 *
 * Returns: (transfer none) (nullable): the reason, or %NULL when the view
 *   is not stale
 */
const char *
qstore_materialized_view_get_stale_reason (QStoreMaterializedView *self)
{
  g_return_val_if_fail (QSTORE_IS_MATERIALIZED_VIEW (self), NULL);
  return self->stale_reason;
}

/* Plans: what a body reads, what it gives, and how to keep it */

/* Its address finds a database's views. */
static const char mviews_key = 0;

QStoreMViews *
qstore_mview_mviews_of (QStoreDatabase *db)
{
  return qstore_database_get_extension_state (db, &mviews_key);
}

void
qstore_mview_mviews_attach (QStoreDatabase *db,
                            QStoreMViews   *self,
                            GDestroyNotify  free)
{
  qstore_database_add_extension_state (db, &mviews_key, self, free);
}

void
qstore_mview_dependents_free (Dependents *dependents)
{
  qstore_sql_table_unref (dependents->entry);
  g_ptr_array_unref (dependents->views);
  g_free (dependents);
}

void
qstore_mview_view_finalize_statements (QStoreMView *view)
{
  g_clear_pointer (&view->key_stmt, sqlite3_finalize);
  g_clear_pointer (&view->all_stmt, sqlite3_finalize);
}

void
qstore_mview_view_free (QStoreMView *view)
{
  QStoreSqlTable *entry = qstore_database_lookup (view->owner->db, view->name);

  if (entry != NULL && entry->owner == view)
    {
      entry->owner = NULL;
      entry->before_read = NULL;
      qstore_table_set_contents_of (entry->table, NULL);
    }
  qstore_mview_view_finalize_statements (view);
  g_free (view->name);
  g_free (view->lower);
  g_free (view->definition);
  g_free (view->body);
  g_clear_pointer (&view->column_names, g_ptr_array_unref);
  qstore_mview_plan_free (view->plan);
  g_free (view->stale_reason);
  g_hash_table_unref (view->dirty_keys);
  g_hash_table_unref (view->touched_keys);
  g_byte_array_unref (view->row_buf);
  g_byte_array_unref (view->key_buf);
  g_free (view->values);
  g_free (view->stored);
  g_free (view);
}

QStoreMView *
qstore_mview_view_new (QStoreMViews *owner,
                       const char   *name,
                       const char   *definition,
                       const char   *body,
                       GPtrArray    *column_names)
{
  QStoreMView *view = g_new0 (QStoreMView, 1);

  view->owner = owner;
  view->name = g_strdup (name);
  view->lower = qstore_mview_lower (name);
  view->definition = g_strdup (definition);
  view->body = g_strdup (body);
  view->column_names = column_names != NULL ? g_ptr_array_ref (column_names) : NULL;
  view->dirty_keys = g_hash_table_new_full (g_bytes_hash, g_bytes_equal,
                                            (GDestroyNotify) g_bytes_unref, NULL);
  view->touched_keys = g_hash_table_new_full (g_bytes_hash, g_bytes_equal,
                                              (GDestroyNotify) g_bytes_unref, NULL);
  view->row_buf = g_byte_array_new ();
  view->key_buf = g_byte_array_new ();
  return view;
}

QStoreMView *
qstore_mview_lookup_view (QStoreMViews *self,
                          const char   *name)
{
  g_autofree char *key = NULL;

  if (name == NULL)
    return NULL;
  key = qstore_mview_lower (name);
  return g_hash_table_lookup (self->views, key);
}

QStoreSqlTable *
qstore_mview_view_entry (QStoreMView *view)
{
  return qstore_database_lookup (view->owner->db, view->name);
}

QStoreTable *
qstore_mview_view_backing (QStoreMView *view)
{
  QStoreSqlTable *entry = qstore_mview_view_entry (view);

  return entry != NULL ? entry->table : NULL;
}

/* Planning */

static int
compare_names (gconstpointer a,
               gconstpointer b)
{
  return strcmp (*(const char * const *) a, *(const char * const *) b);
}

/* The views that may be behind, as the marker and the durable set list
 * them: the stale ones and those that did not load (nothing follows
 * them); with @all, every view. */
char *
qstore_mview_names_json (QStoreMViews *self,
                         gboolean      all)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autoptr(JsonGenerator) generator = json_generator_new ();
  g_autoptr(JsonNode) root = NULL;
  g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  GHashTableIter iter;
  const char *name;

  for (guint i = 0; i < self->order->len; i++)
    {
      QStoreMView *view = g_ptr_array_index (self->order, i);

      if (all || view->stale)
        g_ptr_array_add (names, qstore_mview_qualified (view->name));
    }
  g_hash_table_iter_init (&iter, self->unloaded);
  while (g_hash_table_iter_next (&iter, (gpointer *) &name, NULL))
    g_ptr_array_add (names, qstore_mview_qualified (name));
  g_ptr_array_sort (names, compare_names);

  json_builder_begin_array (builder);
  for (guint i = 0; i < names->len; i++)
    json_builder_add_string_value (builder, g_ptr_array_index (names, i));
  json_builder_end_array (builder);
  root = json_builder_get_root (builder);
  json_generator_set_root (generator, root);
  return json_generator_to_data (generator, NULL);
}

gboolean
qstore_mview_write_meta (QStoreMViews  *self,
                         const char    *name,
                         const char    *value,
                         GError       **error)
{
  g_autoptr(GBytes) key = qstore_catalog_key_for_meta (name);
  QStoreWriteOp op = { 0 };
  gsize key_len;

  op.store = qstore_database_get_catalog (self->db);
  op.kind = value != NULL ? QSTORE_WRITE_OP_PUT : QSTORE_WRITE_OP_DELETE;
  op.key = g_bytes_get_data (key, &key_len);
  op.key_len = key_len;
  op.value = (const guint8 *) value;
  op.value_len = value != NULL ? strlen (value) : 0;
  return qstore_provider_write (qstore_database_get_provider (self->db), &op, 1,
                                QSTORE_WRITE_SYNC, error);
}

char *
qstore_mview_stale_json (QStoreMViews *self)
{
  return qstore_mview_names_json (self, FALSE);
}

/* Only a provider whose commits cannot tear a source from the views over
 * it keeps the durable set: it is what lets a later open trust a view
 * after a crash. It is written synchronously, only when it changes, and
 * always after the DDL that changed it committed, before any write that
 * the stale view will not follow.
 *
 * Inside a transaction that wrote out into the provider's write
 * transaction the provider refuses that write. No write of that
 * transaction is durable before its commit, so the set goes into the
 * commit itself (qstore_mview_on_before_commit()), atomic with every write
 * the view does not follow, and counts as written only once the commit
 * succeeded; after a rollback or a failed commit it is written at once,
 * and failing that, by the next commit (QStoreMViews.unsaved). */
gboolean
qstore_mview_persist_stale_set (QStoreMViews  *self,
                                gboolean       at_close,
                                GError       **error)
{
  g_autofree char *json = NULL;

  /* While views are read back, those not read yet are not in the list:
   * the set written then would vouch for them. The end of the rehydration
   * writes it. */
  if (!self->atomic || (self->db->flags & QSTORE_OPEN_READ_ONLY) || self->rehydrating)
    return TRUE;
  /* A store that never had a view needs no set. */
  if (self->order->len == 0 && self->durable_text == NULL &&
      g_hash_table_size (self->unloaded) == 0)
    return TRUE;

  json = qstore_mview_stale_json (self);
  if (self->durable_known && g_strcmp0 (json, self->durable_text) == 0)
    {
      self->unsaved = FALSE;
      return TRUE;
    }
  if (self->db->coordinator != NULL && qstore_coordinator_writes_out (self->db->coordinator))
    {
      self->unsaved = TRUE;
      qstore_mview_update_observer (self);
      return TRUE;
    }
  if (!_qstore_fault_check (QSTORE_MVIEW_FAULT_STALE_SET, error) ||
      !qstore_mview_write_meta (self, STALE_SET_META, json, error))
    {
      g_prefix_error (error, _("The durable set of stale materialized views cannot be written%s: "),
                      at_close ? " at close" : "");
      return FALSE;
    }
  g_free (self->durable_text);
  self->durable_text = g_steal_pointer (&json);
  self->durable_known = TRUE;
  self->unsaved = FALSE;
  return TRUE;
}

/* The views follow the coordinator while one of them is live, and while
 * the durable set is due, so that its hooks carry the set into the next
 * commit and settle it when the transaction ends. */
void
qstore_mview_update_observer (QStoreMViews *self)
{
  gboolean want = self->unsaved;

  for (guint i = 0; !want && i < self->order->len; i++)
    want = !((QStoreMView *) g_ptr_array_index (self->order, i))->stale;
  if (want == self->observing)
    return;
  self->observing = want;
  qstore_coordinator_set_observer (self->db->coordinator, want ? &self->observer : NULL, self);
}

void
qstore_mview_persist_stale_set_or_warn (QStoreMViews *self)
{
  g_autoptr(GError) error = NULL;

  if (!qstore_mview_persist_stale_set (self, FALSE, &error))
    {
      /* The next commit carries it, before anything the stale view does
       * not follow is stored through the coordinator; close writes it
       * again. */
      g_warning ("%s", error->message);
      self->durable_known = FALSE;
      self->unsaved = TRUE;
      qstore_mview_update_observer (self);
    }
}

gboolean
qstore_mview_read_meta_text (QStoreMViews  *self,
                             const char    *name,
                             char         **text,
                             GError       **error)
{
  g_autoptr(GBytes) key = qstore_catalog_key_for_meta (name);
  g_autoptr(GBytes) value = NULL;
  GError *local_error = NULL;
  gsize key_len;
  const guint8 *key_data = g_bytes_get_data (key, &key_len);

  value = qstore_kv_get (qstore_database_get_catalog (self->db), key_data, key_len, &local_error);
  if (local_error != NULL)
    {
      g_propagate_error (error, local_error);
      return FALSE;
    }
  *text = value != NULL ? g_strndup (g_bytes_get_data (value, NULL), g_bytes_get_size (value))
                        : NULL;
  return TRUE;
}

static int
compare_view_names (gconstpointer a,
                    gconstpointer b,
                    gpointer      data)
{
  return g_ascii_strcasecmp (QSTORE_MATERIALIZED_VIEW ((gpointer) a)->name,
                             QSTORE_MATERIALIZED_VIEW ((gpointer) b)->name);
}

/**
 * qstore_database_list_materialized_views:
 * @self: a #QStoreDatabase
 *
 * Lists the materialized views of the database as they stand now: each
 * one's definition, the tables it reads, its strategy and whether it is
 * stale. Views whose catalog entry did not load at open are not listed
 * (see qstore_database_get_rehydration_result()).
 *
 * Returns: (transfer full): a #GListModel of [class@MaterializedView],
 *   sorted by name
 */
GListModel *
qstore_database_list_materialized_views (QStoreDatabase *self)
{
  QStoreMViews *mviews;
  GListStore *store;

  g_return_val_if_fail (QSTORE_IS_DATABASE (self), NULL);

  store = g_list_store_new (QSTORE_TYPE_MATERIALIZED_VIEW);
  if ((mviews = qstore_mview_mviews_of (self)) == NULL)
    return G_LIST_MODEL (store);

  for (guint i = 0; i < mviews->order->len; i++)
    {
      QStoreMView *view = g_ptr_array_index (mviews->order, i);
      g_autoptr(QStoreMaterializedView) item = g_object_new (QSTORE_TYPE_MATERIALIZED_VIEW, NULL);
      g_autoptr(GStrvBuilder) sources = g_strv_builder_new ();

      item->name = g_strdup (view->name);
      item->body = g_strdup (view->body);
      item->definition = g_strdup (view->definition);
      item->strategy = view->plan != NULL ? view->plan->strategy
                                          : QSTORE_MATERIALIZED_VIEW_STRATEGY_FULL_REBUILD;
      item->stale = view->stale;
      item->stale_reason = g_strdup (view->stale_reason);
      for (guint k = 0; view->plan != NULL && k < view->plan->sources->len; k++)
        {
          PlanSource *source = g_ptr_array_index (view->plan->sources, k);
          g_autofree char *name = g_strconcat (source->temp ? "temp." : "main.", source->lower, NULL);

          g_strv_builder_add (sources, name);
        }
      item->sources = g_strv_builder_end (sources);
      g_list_store_insert_sorted (store, item, compare_view_names, NULL);
    }
  return G_LIST_MODEL (store);
}

/**
 * qstore_database_get_materialized_view_rebuild_row_threshold:
 * @self: a #QStoreDatabase
 *
 * Gets the number of rows above which `CREATE MATERIALIZED VIEW` refuses a
 * view that would be computed again in full on every transaction that
 * changes a source (%QSTORE_MATERIALIZED_VIEW_STRATEGY_FULL_REBUILD). SQL
 * reads it with `PRAGMA materialized_view_rebuild_row_threshold`.
 *
 * Returns: the threshold, 10000 unless changed
 */
gint64
qstore_database_get_materialized_view_rebuild_row_threshold (QStoreDatabase *self)
{
  QStoreMViews *mviews;

  g_return_val_if_fail (QSTORE_IS_DATABASE (self), DEFAULT_REBUILD_ROW_THRESHOLD);

  mviews = qstore_mview_mviews_of (self);
  return mviews != NULL ? mviews->threshold : DEFAULT_REBUILD_ROW_THRESHOLD;
}

/**
 * qstore_database_set_materialized_view_rebuild_row_threshold:
 * @self: a #QStoreDatabase
 * @threshold: the largest number of rows a source of a fully rebuilt view
 *   may hold when the view is created, 0 or more
 *
 * Sets the threshold of
 * qstore_database_get_materialized_view_rebuild_row_threshold() for this
 * database object (it is not stored). SQL sets it with `PRAGMA
 * materialized_view_rebuild_row_threshold = N`. Views already created
 * are not affected.
 */
void
qstore_database_set_materialized_view_rebuild_row_threshold (QStoreDatabase *self,
                                                             gint64          threshold)
{
  QStoreMViews *mviews;

  g_return_if_fail (QSTORE_IS_DATABASE (self));
  g_return_if_fail (threshold >= 0);

  if ((mviews = qstore_mview_mviews_of (self)) != NULL)
    mviews->threshold = threshold;
}
