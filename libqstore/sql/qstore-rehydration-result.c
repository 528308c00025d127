/* qstore-rehydration-result.c: what opening a database read back
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "qstore-rehydration-result-private.h"

/**
 * QStoreRehydrationResult:
 *
 * What opening a database read back from its catalog (see
 * qstore_database_get_rehydration_result()): the tables, indexes, views
 * and materialized views now available, each as `schema.name`, and the
 * entries that failed, each with its DDL and why.
 *
 * One entry that fails never stops the others from loading. The staging
 * tables of imports are not listed among the tables: the staged imports
 * that left them are (see
 * qstore_rehydration_result_get_staging_leftovers()).
 */
struct _QStoreRehydrationResult
{
  GObject    parent_instance;

  GPtrArray *tables;
  GPtrArray *indexes;
  GPtrArray *views;
  GPtrArray *materialized_views;
  GPtrArray *adopted_materialized_views;
  GPtrArray *refilled_materialized_views;
  GPtrArray *error_names;
  GPtrArray *error_ddl;
  GPtrArray *error_messages;
  QStoreStagingLeftovers *staging_leftovers;
};

G_DEFINE_FINAL_TYPE (QStoreRehydrationResult, qstore_rehydration_result, G_TYPE_OBJECT)

static void
qstore_rehydration_result_finalize (GObject *object)
{
  QStoreRehydrationResult *self = QSTORE_REHYDRATION_RESULT (object);

  g_ptr_array_unref (self->tables);
  g_ptr_array_unref (self->indexes);
  g_ptr_array_unref (self->views);
  g_ptr_array_unref (self->materialized_views);
  g_ptr_array_unref (self->adopted_materialized_views);
  g_ptr_array_unref (self->refilled_materialized_views);
  g_ptr_array_unref (self->error_names);
  g_ptr_array_unref (self->error_ddl);
  g_ptr_array_unref (self->error_messages);
  g_clear_object (&self->staging_leftovers);

  G_OBJECT_CLASS (qstore_rehydration_result_parent_class)->finalize (object);
}

static void
qstore_rehydration_result_class_init (QStoreRehydrationResultClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = qstore_rehydration_result_finalize;
}

/* NULL-terminated, so each list is a strv as it is. */
static GPtrArray *
strv_array_new (void)
{
  return g_ptr_array_new_null_terminated (0, g_free, TRUE);
}

/* An array that never held anything may have no storage yet. */
static const char * const *
strv_of (GPtrArray *array)
{
  static const char * const empty[] = { NULL };

  return array->pdata != NULL ? (const char * const *) array->pdata : empty;
}

static void
qstore_rehydration_result_init (QStoreRehydrationResult *self)
{
  self->tables = strv_array_new ();
  self->indexes = strv_array_new ();
  self->views = strv_array_new ();
  self->materialized_views = strv_array_new ();
  self->adopted_materialized_views = strv_array_new ();
  self->refilled_materialized_views = strv_array_new ();
  self->error_names = g_ptr_array_new_with_free_func (g_free);
  self->error_ddl = g_ptr_array_new_with_free_func (g_free);
  self->error_messages = g_ptr_array_new_with_free_func (g_free);
}

static void
add_name (GPtrArray  *list,
          const char *schema,
          const char *name)
{
  g_ptr_array_add (list, g_strdup_printf ("%s.%s", schema, name));
}

/**
 * qstore_rehydration_result_get_tables:
 * @self: a #QStoreRehydrationResult
 *
 * Gets the tables that loaded, as `schema.name` (the name as declared), in
 * catalog order.
 *
 * Returns: (transfer none) (array zero-terminated=1): the tables
 */
const char * const *
qstore_rehydration_result_get_tables (QStoreRehydrationResult *self)
{
  g_return_val_if_fail (QSTORE_IS_REHYDRATION_RESULT (self), NULL);

  return strv_of (self->tables);
}

/**
 * qstore_rehydration_result_get_indexes:
 * @self: a #QStoreRehydrationResult
 *
 * Gets the indexes of the tables that loaded, as `schema.name`: those of
 * CREATE INDEX statements and those SQLite makes for UNIQUE constraints
 * (`sqlite_autoindex_<table>_<n>`).
 *
 * Returns: (transfer none) (array zero-terminated=1): the indexes
 */
const char * const *
qstore_rehydration_result_get_indexes (QStoreRehydrationResult *self)
{
  g_return_val_if_fail (QSTORE_IS_REHYDRATION_RESULT (self), NULL);

  return strv_of (self->indexes);
}

/**
 * qstore_rehydration_result_get_views:
 * @self: a #QStoreRehydrationResult
 *
 * Gets the views that loaded and can be queried, as `schema.name`.
 *
 * Returns: (transfer none) (array zero-terminated=1): the views
 */
const char * const *
qstore_rehydration_result_get_views (QStoreRehydrationResult *self)
{
  g_return_val_if_fail (QSTORE_IS_REHYDRATION_RESULT (self), NULL);

  return strv_of (self->views);
}

/**
 * qstore_rehydration_result_get_materialized_views:
 * @self: a #QStoreRehydrationResult
 *
 * Gets the materialized views that loaded, as `schema.name`.
 *
 * Returns: (transfer none) (array zero-terminated=1): the materialized
 *   views
 */
const char * const *
qstore_rehydration_result_get_materialized_views (QStoreRehydrationResult *self)
{
  g_return_val_if_fail (QSTORE_IS_REHYDRATION_RESULT (self), NULL);

  return strv_of (self->materialized_views);
}

/**
 * qstore_rehydration_result_get_adopted_materialized_views:
 * @self: a #QStoreRehydrationResult
 *
 * Gets the materialized views whose stored contents were kept as they
 * were ("adopted"): the store proved them current (a clean shutdown that
 * did not list them as stale, or, with an atomic provider, the durable
 * stale set not listing them) and every materialized view they read was
 * adopted too.
 *
 * Returns: (transfer none) (array zero-terminated=1): the views, as
 *   `schema.name` in lower case
 */
const char * const *
qstore_rehydration_result_get_adopted_materialized_views (QStoreRehydrationResult *self)
{
  g_return_val_if_fail (QSTORE_IS_REHYDRATION_RESULT (self), NULL);

  return strv_of (self->adopted_materialized_views);
}

/**
 * qstore_rehydration_result_get_refilled_materialized_views:
 * @self: a #QStoreRehydrationResult
 *
 * Gets the materialized views whose contents were computed again from
 * what they read ("refilled"), because nothing proved the stored
 * contents current.
 *
 * Returns: (transfer none) (array zero-terminated=1): the views, as
 *   `schema.name` in lower case
 */
const char * const *
qstore_rehydration_result_get_refilled_materialized_views (QStoreRehydrationResult *self)
{
  g_return_val_if_fail (QSTORE_IS_REHYDRATION_RESULT (self), NULL);

  return strv_of (self->refilled_materialized_views);
}

/**
 * qstore_rehydration_result_get_n_errors:
 * @self: a #QStoreRehydrationResult
 *
 * Gets how many catalog entries failed to load.
 *
 * Returns: the number of errors
 */
guint
qstore_rehydration_result_get_n_errors (QStoreRehydrationResult *self)
{
  g_return_val_if_fail (QSTORE_IS_REHYDRATION_RESULT (self), 0);

  return self->error_messages->len;
}

/**
 * qstore_rehydration_result_get_error_name:
 * @self: a #QStoreRehydrationResult
 * @i: the error's position, below qstore_rehydration_result_get_n_errors()
 *
 * Gets which entry error @i is about: `schema.name` of its table or view,
 * as its catalog key spells it, or the key itself when it is not a catalog
 * key.
 *
 * Returns: (transfer none): the entry's name
 */
const char *
qstore_rehydration_result_get_error_name (QStoreRehydrationResult *self,
                                          guint                    i)
{
  g_return_val_if_fail (QSTORE_IS_REHYDRATION_RESULT (self), NULL);
  g_return_val_if_fail (i < self->error_names->len, NULL);

  return self->error_names->pdata[i];
}

/**
 * qstore_rehydration_result_get_error_ddl:
 * @self: a #QStoreRehydrationResult
 * @i: the error's position, below qstore_rehydration_result_get_n_errors()
 *
 * Gets the DDL of the entry error @i is about, as the catalog holds it.
 *
 * Returns: (transfer none): the DDL
 */
const char *
qstore_rehydration_result_get_error_ddl (QStoreRehydrationResult *self,
                                         guint                    i)
{
  g_return_val_if_fail (QSTORE_IS_REHYDRATION_RESULT (self), NULL);
  g_return_val_if_fail (i < self->error_ddl->len, NULL);

  return self->error_ddl->pdata[i];
}

/**
 * qstore_rehydration_result_get_error_message:
 * @self: a #QStoreRehydrationResult
 * @i: the error's position, below qstore_rehydration_result_get_n_errors()
 *
 * Gets why the entry of error @i did not load.
 *
 * Returns: (transfer none): the message
 */
const char *
qstore_rehydration_result_get_error_message (QStoreRehydrationResult *self,
                                             guint                    i)
{
  g_return_val_if_fail (QSTORE_IS_REHYDRATION_RESULT (self), NULL);
  g_return_val_if_fail (i < self->error_messages->len, NULL);

  return self->error_messages->pdata[i];
}

/**
 * qstore_rehydration_result_get_staging_leftovers:
 * @self: a #QStoreRehydrationResult
 *
 * Gets the staged imports (`qstore import --mode replace`) the database
 * records as running or interrupted, judged when it opened: which staging
 * tables each left, how old its heartbeat was, and whether they may be
 * dropped, and why. Opening reports them, and logs one line when there are
 * any, but never drops anything: `qstore staging --sweep` does.
 *
 * Returns: (transfer none) (nullable): the leftovers (empty when there are
 *   none), or %NULL when the database could not read its marker table (the
 *   errors say why)
 */
QStoreStagingLeftovers *
qstore_rehydration_result_get_staging_leftovers (QStoreRehydrationResult *self)
{
  g_return_val_if_fail (QSTORE_IS_REHYDRATION_RESULT (self), NULL);

  return self->staging_leftovers;
}

void
qstore_rehydration_result_set_staging_leftovers (QStoreRehydrationResult *self,
                                                 QStoreStagingLeftovers  *leftovers)
{
  g_set_object (&self->staging_leftovers, leftovers);
}

void
qstore_rehydration_result_add_materialized_view (QStoreRehydrationResult *self,
                                                 const char              *name,
                                                 gboolean                 adopted)
{
  g_ptr_array_add (self->materialized_views, g_strdup (name));
  g_ptr_array_add (adopted ? self->adopted_materialized_views
                           : self->refilled_materialized_views, g_strdup (name));
}

void
qstore_rehydration_result_add_error_entry (QStoreRehydrationResult *self,
                                           const char              *name,
                                           const char              *ddl,
                                           const char              *message)
{
  g_debug ("Catalog entry “%s” not loaded: %s", name, message);
  g_ptr_array_add (self->error_names, g_strdup (name));
  g_ptr_array_add (self->error_ddl, g_strdup (ddl));
  g_ptr_array_add (self->error_messages, g_strdup (message));
}

void
qstore_rehydration_result_add_table (QStoreRehydrationResult *self,
                                     const char              *schema,
                                     const char              *name)
{
  add_name (self->tables, schema, name);
}

void
qstore_rehydration_result_add_index (QStoreRehydrationResult *self,
                                     const char              *schema,
                                     const char              *name)
{
  add_name (self->indexes, schema, name);
}

void
qstore_rehydration_result_add_view (QStoreRehydrationResult *self,
                                    const char              *schema,
                                    const char              *name)
{
  add_name (self->views, schema, name);
}

void
qstore_rehydration_result_forget_table (QStoreRehydrationResult *self,
                                        const char              *name)
{
  for (guint i = 0; i < self->tables->len; i++)
    if (g_ascii_strcasecmp (self->tables->pdata[i], name) == 0)
      {
        g_ptr_array_remove_index (self->tables, i);
        return;
      }
}
