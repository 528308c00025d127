/* qstore-replica-ddl.c: DDL batches that commit with their marker or not at all
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include <json-glib/json-glib.h>

#include "qstore-error.h"
#include "qstore-i18n-private.h"
#include "qstore-lifecycle-private.h"
#include "qstore-open-private.h"
#include "qstore-replica-overlay-private.h"
#include "qstore-replica-private.h"
#include "qstore-replica-txn.h"
#include "qstore-sql-token-private.h"
#include "qstore-statement-private.h"

/* In a qstore database every DDL statement commits on its own. A batch
 * must commit as one, with its marker: so it runs on a database of its
 * own, opened over an overlay of the replica's provider that keeps every
 * write and restructure in memory (qstore-replica-overlay.c). When every
 * statement ran, its step effects succeeded and the marker is written,
 * the overlay's net effect becomes one all-or-nothing restructure of the
 * store; on any failure the overlay is dropped and nothing happened.
 * The writer and the workers then read the new schema, and live queries
 * over a table the batch created, dropped, altered or wrote are faulted.
 *
 * What each statement did is observed through SQLite's authorizer while
 * it prepares on the batch database's mirror of the schema (scratch),
 * before it runs: names come from SQLite's parser, whatever the quoting
 * and comments. qstore's own statement forms (the ALTER arms SQLite lacks,
 * materialized views) are read by qstore's statement reader. */

#define MARKER_TABLE "_qstore_replica_markers"

typedef struct
{
  char      *sql;
  GPtrArray *created_tables;
  GPtrArray *dropped_tables;
  GPtrArray *altered_tables;
  GPtrArray *created_indexes;
  GPtrArray *dropped_indexes;
  GPtrArray *written_tables;
  GPtrArray *destructive;      /* what it destroys, in words */
  char      *temp;             /* a TEMP object it makes, or NULL */
  gboolean   returns_rows;
} Step;

static void
step_free (Step *step)
{
  g_free (step->sql);
  g_ptr_array_unref (step->created_tables);
  g_ptr_array_unref (step->dropped_tables);
  g_ptr_array_unref (step->altered_tables);
  g_ptr_array_unref (step->created_indexes);
  g_ptr_array_unref (step->dropped_indexes);
  g_ptr_array_unref (step->written_tables);
  g_ptr_array_unref (step->destructive);
  g_free (step->temp);
  g_free (step);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC (Step, step_free)

static Step *
step_new (const char *sql)
{
  Step *step = g_new0 (Step, 1);

  step->sql = g_strdup (sql);
  step->created_tables = g_ptr_array_new_with_free_func (g_free);
  step->dropped_tables = g_ptr_array_new_with_free_func (g_free);
  step->altered_tables = g_ptr_array_new_with_free_func (g_free);
  step->created_indexes = g_ptr_array_new_with_free_func (g_free);
  step->dropped_indexes = g_ptr_array_new_with_free_func (g_free);
  step->written_tables = g_ptr_array_new_with_free_func (g_free);
  step->destructive = g_ptr_array_new_with_free_func (g_free);
  return step;
}

static void
note (GPtrArray  *names,
      const char *name)
{
  if (name != NULL && !g_ptr_array_find_with_equal_func (names, name, g_str_equal, NULL))
    g_ptr_array_add (names, g_strdup (name));
}

/* Observation */

static int
observe (void       *data,
         int         action,
         const char *arg1,
         const char *arg2,
         const char *db_name,
         const char *trigger)
{
  Step *step = data;

  switch (action)
    {
    case SQLITE_CREATE_TABLE:
      note (step->created_tables, arg1);
      break;
    case SQLITE_DROP_TABLE:
      note (step->dropped_tables, arg1);
      break;
    case SQLITE_ALTER_TABLE:
      note (step->altered_tables, arg2);
      break;
    case SQLITE_CREATE_INDEX:
      /* A constraint's own index is part of its table. */
      if (arg1 != NULL && !g_str_has_prefix (arg1, "sqlite_autoindex_"))
        note (step->created_indexes, arg1);
      break;
    case SQLITE_DROP_INDEX:
      note (step->dropped_indexes, arg1);
      break;
    case SQLITE_INSERT:
    case SQLITE_UPDATE:
    case SQLITE_DELETE:
      if (trigger == NULL && arg1 != NULL && !g_str_has_prefix (arg1, "sqlite_"))
        note (step->written_tables, arg1);
      break;
    case SQLITE_CREATE_TEMP_TABLE:
    case SQLITE_CREATE_TEMP_VIEW:
    case SQLITE_CREATE_TEMP_INDEX:
    case SQLITE_CREATE_TEMP_TRIGGER:
    case SQLITE_CREATE_VTABLE:
      if (step->temp == NULL)
        step->temp = g_strdup (arg1);
      break;
    default:
      break;
    }
  return SQLITE_OK;
}

static Step *
observe_statement (QStoreDatabase *db,
                   const char     *sql)
{
  g_autoptr(Step) step = step_new (sql);
  g_auto(QStoreStatement) parsed = { 0 };
  sqlite3_stmt *stmt = NULL;
  int rc;

  sqlite3_set_authorizer (db->scratch, observe, step);
  rc = sqlite3_prepare_v2 (db->scratch, sql, -1, &stmt, NULL);
  sqlite3_set_authorizer (db->scratch, NULL, NULL);
  if (rc == SQLITE_OK && stmt != NULL)
    step->returns_rows = sqlite3_column_count (stmt) > 0 && sqlite3_stmt_readonly (stmt);
  sqlite3_finalize (stmt);

  /* What SQLite has no words for, and what it says nothing about. */
  qstore_statement_parse (sql, &parsed);
  switch (parsed.kind)
    {
    case QSTORE_STATEMENT_CREATE_MATERIALIZED_VIEW:
      note (step->created_tables, parsed.name);
      break;
    case QSTORE_STATEMENT_DROP_MATERIALIZED_VIEW:
      note (step->dropped_tables, parsed.name);
      break;
    case QSTORE_STATEMENT_REFRESH_MATERIALIZED_VIEW:
      note (step->written_tables, parsed.name);
      break;
    case QSTORE_STATEMENT_ALTER_TABLE:
    case QSTORE_STATEMENT_ALTER_TABLE_ARM:
      note (step->altered_tables, parsed.table != NULL ? parsed.table : parsed.name);
      if (parsed.alter == QSTORE_ALTER_DROP_COLUMN)
        g_ptr_array_add (step->destructive,
                         g_strdup_printf ("drops a column of table %s",
                                          parsed.table != NULL ? parsed.table : parsed.name));
      break;
    default:
      break;
    }
  for (guint i = 0; i < step->dropped_tables->len; i++)
    g_ptr_array_add (step->destructive,
                     g_strdup_printf ("drops table %s", (char *) step->dropped_tables->pdata[i]));
  for (guint i = 0; i < step->dropped_indexes->len; i++)
    g_ptr_array_add (step->destructive,
                     g_strdup_printf ("drops index %s", (char *) step->dropped_indexes->pdata[i]));
  return g_steal_pointer (&step);
}

/* Reports */

static GVariant *
strv_variant (GPtrArray *names)
{
  return g_variant_new_strv ((const char * const *) names->pdata, names->len);
}

static GVariant *
step_variant (const Step *step)
{
  g_auto(GVariantDict) dict = G_VARIANT_DICT_INIT (NULL);

  g_variant_dict_insert (&dict, "sql", "s", step->sql);
  g_variant_dict_insert_value (&dict, "created_tables", strv_variant (step->created_tables));
  g_variant_dict_insert_value (&dict, "dropped_tables", strv_variant (step->dropped_tables));
  g_variant_dict_insert_value (&dict, "altered_tables", strv_variant (step->altered_tables));
  g_variant_dict_insert_value (&dict, "created_indexes", strv_variant (step->created_indexes));
  g_variant_dict_insert_value (&dict, "dropped_indexes", strv_variant (step->dropped_indexes));
  g_variant_dict_insert_value (&dict, "written_tables", strv_variant (step->written_tables));
  g_variant_dict_insert_value (&dict, "destructive", strv_variant (step->destructive));
  return g_variant_dict_end (&dict);
}

static GVariant *
report_variant (GPtrArray  *steps,
                const char *marker,
                gboolean    applied,
                guint64     tx)
{
  g_auto(GVariantDict) dict = G_VARIANT_DICT_INIT (NULL);
  g_auto(GVariantBuilder) list = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE ("aa{sv}"));
  g_autoptr(GPtrArray) destructive = g_ptr_array_new ();

  for (guint i = 0; i < steps->len; i++)
    {
      Step *step = steps->pdata[i];

      g_variant_builder_add_value (&list, step_variant (step));
      for (guint k = 0; k < step->destructive->len; k++)
        g_ptr_array_add (destructive, step->destructive->pdata[k]);
    }
  if (marker != NULL)
    g_variant_dict_insert (&dict, "marker", "s", marker);
  g_variant_dict_insert (&dict, "applied", "b", applied);
  g_variant_dict_insert (&dict, "tx", "t", tx);
  g_variant_dict_insert_value (&dict, "steps", g_variant_builder_end (&list));
  g_variant_dict_insert_value (&dict, "destructive", strv_variant (destructive));
  return g_variant_ref_sink (g_variant_dict_end (&dict));
}

/* The report as the marker row keeps it (JSON), and back, with every
 * member's type. */
static void
add_json (JsonBuilder *builder,
          GVariant    *value)
{
  if (g_variant_is_of_type (value, G_VARIANT_TYPE_STRING))
    json_builder_add_string_value (builder, g_variant_get_string (value, NULL));
  else if (g_variant_is_of_type (value, G_VARIANT_TYPE_BOOLEAN))
    json_builder_add_boolean_value (builder, g_variant_get_boolean (value));
  else if (g_variant_is_of_type (value, G_VARIANT_TYPE_UINT64))
    json_builder_add_int_value (builder, (gint64) g_variant_get_uint64 (value));
  else if (g_variant_is_of_type (value, G_VARIANT_TYPE_VARDICT))
    {
      GVariantIter iter;
      const char *key;
      GVariant *child;

      json_builder_begin_object (builder);
      g_variant_iter_init (&iter, value);
      while (g_variant_iter_loop (&iter, "{&sv}", &key, &child))
        {
          json_builder_set_member_name (builder, key);
          add_json (builder, child);
        }
      json_builder_end_object (builder);
    }
  else
    {
      json_builder_begin_array (builder);
      for (gsize i = 0; i < g_variant_n_children (value); i++)
        {
          g_autoptr(GVariant) child = g_variant_get_child_value (value, i);

          add_json (builder, child);
        }
      json_builder_end_array (builder);
    }
}

static char *
report_json (GVariant *report)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autoptr(JsonGenerator) generator = json_generator_new ();
  g_autoptr(JsonNode) root = NULL;

  add_json (builder, report);
  root = json_builder_get_root (builder);
  json_generator_set_root (generator, root);
  return json_generator_to_data (generator, NULL);
}

static GVariant *
variant_from_json (JsonNode *node)
{
  if (JSON_NODE_HOLDS_OBJECT (node))
    {
      JsonObject *object = json_node_get_object (node);
      g_auto(GVariantDict) dict = G_VARIANT_DICT_INIT (NULL);
      g_autoptr(GList) members = json_object_get_members (object);

      for (GList *l = members; l != NULL; l = l->next)
        {
          GVariant *child = variant_from_json (json_object_get_member (object, l->data));

          if (child == NULL)
            return NULL;
          g_variant_dict_insert_value (&dict, l->data, child);
        }
      return g_variant_dict_end (&dict);
    }
  if (JSON_NODE_HOLDS_ARRAY (node))
    {
      JsonArray *array = json_node_get_array (node);
      guint n = json_array_get_length (array);
      gboolean objects = n > 0 && JSON_NODE_HOLDS_OBJECT (json_array_get_element (array, 0));
      g_auto(GVariantBuilder) builder = G_VARIANT_BUILDER_INIT (objects ? G_VARIANT_TYPE ("aa{sv}")
                                                                        : G_VARIANT_TYPE_STRING_ARRAY);

      for (guint i = 0; i < n; i++)
        {
          JsonNode *element = json_array_get_element (array, i);

          if (objects != JSON_NODE_HOLDS_OBJECT (element) ||
              (!objects && json_node_get_value_type (element) != G_TYPE_STRING))
            return NULL;
          g_variant_builder_add_value (&builder, variant_from_json (element));
        }
      return g_variant_builder_end (&builder);
    }
  if (JSON_NODE_HOLDS_VALUE (node))
    switch (json_node_get_value_type (node))
      {
      case G_TYPE_STRING:
        return g_variant_new_string (json_node_get_string (node));
      case G_TYPE_BOOLEAN:
        return g_variant_new_boolean (json_node_get_boolean (node));
      case G_TYPE_INT64:
        return g_variant_new_uint64 ((guint64) json_node_get_int (node));
      default:
        break;
      }
  return NULL;
}

static GVariant *
report_from_json (const char  *json,
                  GError     **error)
{
  g_autoptr(JsonNode) node = json_from_string (json, error);
  GVariant *report;

  if (node == NULL)
    return NULL;
  report = JSON_NODE_HOLDS_OBJECT (node) ? variant_from_json (node) : NULL;
  if (report == NULL)
    {
      g_set_error_literal (error, QSTORE_ERROR, QSTORE_ERROR_CORRUPT,
                           "A DDL marker holds a report qstore did not write: table "
                           MARKER_TABLE " was written around the replica");
      return NULL;
    }
  return g_variant_ref_sink (report);
}

/**
 * qstore_replica_get_marker:
 * @self: a #QStoreReplica
 * @marker_key: a marker key
 * @error: return location for a #GError
 *
 * Reads the marker a DDL batch stamped under @marker_key: the report of
 * what it did, as [method@Replica.exec_ddl_with_marker] returned it.
 *
 * Returns: (transfer full) (nullable): the report (`a{sv}`), or %NULL
 *   without error when no batch stamped @marker_key
 */
GVariant *
qstore_replica_get_marker (QStoreReplica  *self,
                           const char     *marker_key,
                           GError        **error)
{
  g_autoptr(QStoreResult) result = NULL;
  g_autoptr(GVariant) value = NULL;

  g_return_val_if_fail (QSTORE_IS_REPLICA (self), NULL);
  g_return_val_if_fail (marker_key != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!qstore_replica_check_usable (self, FALSE, error))
    return NULL;
  if (qstore_database_lookup (self->reader, MARKER_TABLE) == NULL)
    return NULL;
  result = qstore_replica_query (self, "SELECT report FROM " MARKER_TABLE " WHERE key = ?",
                                 g_variant_new ("(s)", marker_key), error);
  if (result == NULL || qstore_result_get_n_rows (result) == 0)
    return NULL;
  value = qstore_result_get_value (result, 0, 0);
  if (!g_variant_is_of_type (value, G_VARIANT_TYPE_STRING))
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_CORRUPT,
                   _("The marker “%s” holds no report: table %s was written around the replica"),
                   marker_key, MARKER_TABLE);
      return NULL;
    }
  return report_from_json (g_variant_get_string (value, NULL), error);
}

/* Running a batch */

typedef struct
{
  QStoreReplica            *replica;
  const char               *marker;
  gboolean                  trusted;   /* rows may be written (the marker path) */
  QStoreReplicaDdlStepFunc  step_func;
  gpointer                  step_data;
  GPtrArray                *steps;     /* Step */
  GHashTable               *touched;   /* lower-cased tables the batch changed */
} Batch;

static void
touch (Batch     *batch,
       GPtrArray *names)
{
  for (guint i = 0; i < names->len; i++)
    g_hash_table_add (batch->touched, g_ascii_strdown (names->pdata[i], -1));
}

static gboolean
run_statement (Batch           *batch,
               QStoreDatabase  *db,
               const char      *sql,
               guint            number,
               GError         **error)
{
  g_autoptr(Step) step = observe_statement (db, sql);
  GError *local_error = NULL;

  if (step->temp != NULL)
    {
      g_set_error (error, QSTORE_REPLICA_ERROR, QSTORE_REPLICA_ERROR_UNSUPPORTED_SCHEMA,
                   _("Statement %u of the DDL batch makes “%s”, a TEMP or foreign object, "
                   "which lives on the writer's connection only: it is unsupported in a "
                   "replica, whose workers could never see it. Nothing of the batch was "
                   "applied"), number, step->temp);
      return FALSE;
    }
  if (step->returns_rows)
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                   _("Statement %u of the DDL batch (“%s”) returns rows: read with "
                   "qstore_replica_query()"), number, sql);
      return FALSE;
    }
  if (!batch->trusted && step->written_tables->len > 0)
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                   _("Statement %u of the DDL batch (“%s”) writes rows of %s: write rows in "
                   "a transaction of qstore_replica_begin_write(), or migrate with "
                   "qstore_replica_exec_ddl_with_marker()"), number, sql,
                   (char *) step->written_tables->pdata[0]);
      return FALSE;
    }

  if (!qstore_database_exec (db, sql, &local_error))
    {
      g_propagate_prefixed_error (error, local_error,
                                  _("Statement %u of the DDL batch failed, so nothing of the "
                                  "batch was applied: "), number);
      return FALSE;
    }

  touch (batch, step->created_tables);
  touch (batch, step->dropped_tables);
  touch (batch, step->altered_tables);
  touch (batch, step->written_tables);
  g_ptr_array_add (batch->steps, g_steal_pointer (&step));

  if (batch->step_func != NULL)
    {
      g_autoptr(QStoreReplicaTxn) txn = qstore_replica_txn_new_for_database (db);
      g_autoptr(GVariant) report = g_variant_ref_sink (step_variant (batch->steps->pdata[batch->steps->len - 1]));

      if (!batch->step_func (report, txn, batch->step_data, &local_error))
        {
          if (local_error == NULL)
            g_set_error_literal (&local_error, QSTORE_ERROR, QSTORE_ERROR_FAILED,
                                 _("the step function failed without saying why"));
          g_propagate_prefixed_error (error, local_error,
                                      _("The atomic step effects of statement %u failed, so "
                                      "nothing of the DDL batch was applied: "), number);
          return FALSE;
        }
    }
  return TRUE;
}

static gboolean
stamp (Batch           *batch,
       QStoreDatabase  *db,
       GError         **error)
{
  g_autoptr(GVariant) report = report_variant (batch->steps, batch->marker, TRUE, 0);
  g_autofree char *json = report_json (report);

  if (!qstore_database_exec_reserved (db, "CREATE TABLE IF NOT EXISTS " MARKER_TABLE
                                      " (key TEXT PRIMARY KEY NOT NULL, applied_at INTEGER, "
                                      "report TEXT)", error))
    return FALSE;
  return qstore_database_execute (db, "INSERT INTO " MARKER_TABLE " VALUES (?, ?, ?)",
                                  g_variant_new ("(sxs)", batch->marker,
                                                 g_get_real_time () / 1000, json),
                                  error) >= 0;
}

/* The workers read the new schema; queries over what changed fault. */
static void
reload_workers (QStoreReplica *self,
                GHashTable    *touched)
{
  for (guint w = 0; w < self->n_workers; w++)
    {
      g_autoptr(GError) error = NULL;
      QStoreReplicaCommand *command;
      QStoreDatabase *reader;
      GHashTableIter iter;
      QStoreReplicaEntry *entry;

      if (self->slots[w].worker == NULL)
        continue;
      if (!(reader = qstore_replica_open_reader (self, &error)))
        {
          /* Without a reader the worker cannot go on: let it be replaced. */
          g_warning ("Replica worker %u cannot read the new schema: %s", w, error->message);
          qstore_replica_test_kill_worker (self, w);
          continue;
        }
      command = qstore_replica_command_new (QSTORE_REPLICA_COMMAND_RELOAD);
      command->reader = reader;
      command->faults = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, g_free);

      g_mutex_lock (&self->registry_lock);
      g_hash_table_iter_init (&iter, self->queries);
      while (g_hash_table_iter_next (&iter, NULL, (gpointer *) &entry))
        {
          if (entry->worker != w)
            continue;
          for (guint i = 0; i < entry->sources->len; i++)
            if (g_hash_table_contains (touched, entry->sources->pdata[i]))
              {
                g_hash_table_insert (command->faults, g_memdup2 (&entry->id, sizeof entry->id),
                                     g_strdup_printf ("DDL changed table %s, which it reads: "
                                                      "register it again",
                                                      (char *) entry->sources->pdata[i]));
                break;
              }
        }
      g_mutex_unlock (&self->registry_lock);
      qstore_replica_pool_send (self, w, command);
    }
}

static GVariant *
run_batch (QStoreReplica             *self,
           const char                *sql,
           const char                *marker,
           QStoreReplicaDdlStepFunc   step_func,
           gpointer                   user_data,
           GError                   **error)
{
  g_autoptr(GRecMutexLocker) locker = NULL;
  g_autoptr(QStoreProvider) overlay = NULL;
  g_autoptr(QStoreDatabase) db = NULL;
  g_autoptr(GPtrArray) steps = g_ptr_array_new_with_free_func ((GDestroyNotify) step_free);
  g_autoptr(GHashTable) touched = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  Batch batch = { self, marker, marker != NULL, step_func, user_data, steps, touched };
  const char *p;
  guint number = 0;
  guint64 step;

  if (!qstore_replica_check_usable (self, TRUE, error))
    return NULL;
  locker = g_rec_mutex_locker_new (&self->api_lock);
  if (self->txn != NULL)
    {
      g_set_error_literal (error, QSTORE_REPLICA_ERROR, QSTORE_REPLICA_ERROR_WRITE_OPEN,
                           _("DDL is refused while a write transaction is open (the workers "
                           "would not see it until the commit): commit or roll it back first"));
      return NULL;
    }

  if (marker != NULL)
    {
      GError *local_error = NULL;
      g_autoptr(GVariant) stamped = qstore_replica_get_marker (self, marker, &local_error);

      if (local_error != NULL)
        {
          g_propagate_error (error, local_error);
          return NULL;
        }
      /* Applied before: nothing to do, and the report says what it did. */
      if (stamped != NULL)
        {
          g_auto(GVariantDict) dict = G_VARIANT_DICT_INIT (stamped);

          g_variant_dict_insert (&dict, "applied", "b", FALSE);
          return g_variant_ref_sink (g_variant_dict_end (&dict));
        }
    }

  qstore_replica_dispatch_pending (self);
  overlay = qstore_replica_overlay_new (self->provider);
  /* The batch writes as the replica's writer does; a step one of its
   * statements sets (`PRAGMA qstore.write_out_step`) becomes the writer's
   * when the batch commits. */
  if (!(db = qstore_database_open_on_provider (overlay, QSTORE_OPEN_NONE,
                                               qstore_database_get_full_setup (), error)) ||
      !qstore_coordinator_set_write_out_step (db->coordinator, self->write_out_step, error))
    return NULL;

  for (p = qstore_sql_skip_space (sql); *p != '\0'; p = qstore_sql_skip_space (p))
    {
      const char *end = qstore_sql_statement_end (p);
      g_autofree char *text = g_strndup (p, end - p);

      if (!run_statement (&batch, db, text, ++number, error))
        return NULL;
      p = end;
    }
  if (marker != NULL && !stamp (&batch, db, error))
    return NULL;
  step = qstore_coordinator_get_write_out_step (db->coordinator);
  /* Its clean close is part of the batch: the writer finds the views'
   * marker it leaves. */
  if (!qstore_database_close (db, error) ||
      !qstore_replica_overlay_flush (QSTORE_REPLICA_OVERLAY (overlay), error))
    return NULL;

  if (!qstore_replica_reopen_writer (self, error))
    {
      g_prefix_error (error, _("The DDL batch committed, but the replica cannot read its "
                             "schema back: "));
      return NULL;
    }
  if (!qstore_replica_set_write_out_step (self, step, error))
    return NULL;
  reload_workers (self, touched);
  return report_variant (steps, marker, TRUE, qstore_replica_get_committed_tx_id (self));
}

/**
 * qstore_replica_exec_ddl:
 * @self: a #QStoreReplica
 * @sql: one or more statements that change the schema
 * @error: return location for a #GError
 *
 * Changes the schema: every statement of @sql commits, or none does. The
 * workers read the new schema; live queries over a table it created,
 * dropped or altered are faulted. Statements that write rows are refused
 * (use a write transaction, or qstore_replica_exec_ddl_with_marker() for
 * a migration that moves rows), as are TEMP objects, which the workers
 * could not see (%QSTORE_REPLICA_ERROR_UNSUPPORTED_SCHEMA).
 *
 * Refused with %QSTORE_REPLICA_ERROR_WRITE_OPEN while a write transaction
 * is open.
 *
 * Returns: %TRUE when the statements committed
 */
gboolean
qstore_replica_exec_ddl (QStoreReplica  *self,
                         const char     *sql,
                         GError        **error)
{
  g_autoptr(GVariant) report = NULL;

  g_return_val_if_fail (QSTORE_IS_REPLICA (self), FALSE);
  g_return_val_if_fail (sql != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  report = run_batch (self, sql, NULL, NULL, NULL, error);
  return report != NULL;
}

/**
 * qstore_replica_exec_ddl_with_marker:
 * @self: a #QStoreReplica
 * @sql: the statements of a migration: DDL, and statements that move rows
 * @marker_key: the idempotency marker to stamp
 * @error: return location for a #GError
 *
 * Applies a migration and stamps its marker in the same commit: either
 * every statement and the marker are stored, or nothing is. When the
 * marker exists already, nothing runs and its report comes back with
 * `applied` false, so retrying a migration that was applied is safe.
 *
 * The report is an `a{sv}` dictionary: `marker` (s), `applied` (b), `tx`
 * (t, the last committed transaction after it), `steps` (aa{sv}: for each
 * statement in order, `sql`, and the tables and indexes SQLite's
 * authorizer saw it touch: `created_tables`, `dropped_tables`,
 * `altered_tables`, `created_indexes`, `dropped_indexes`,
 * `written_tables`, and `destructive`, what it destroys in words), and
 * `destructive` (as, every step's). The marker row keeps it.
 *
 * Returns: (transfer full): the report, or %NULL on error
 */
GVariant *
qstore_replica_exec_ddl_with_marker (QStoreReplica  *self,
                                     const char     *sql,
                                     const char     *marker_key,
                                     GError        **error)
{
  return qstore_replica_exec_ddl_with_marker_full (self, sql, marker_key, NULL, NULL, error);
}

/**
 * qstore_replica_exec_ddl_with_marker_full:
 * @self: a #QStoreReplica
 * @sql: the statements of a migration
 * @marker_key: the idempotency marker to stamp
 * @step_func: (scope call) (nullable): called after each statement
 * @user_data: data for @step_func
 * @error: return location for a #GError
 *
 * qstore_replica_exec_ddl_with_marker() with bookkeeping of the caller's
 * that commits with the migration: @step_func runs after each statement,
 * with what it did, and may run statements in the same commit. When it
 * fails, nothing of the migration is stored.
 *
 * Returns: (transfer full): the report, or %NULL on error
 */
GVariant *
qstore_replica_exec_ddl_with_marker_full (QStoreReplica             *self,
                                          const char                *sql,
                                          const char                *marker_key,
                                          QStoreReplicaDdlStepFunc   step_func,
                                          gpointer                   user_data,
                                          GError                   **error)
{
  g_return_val_if_fail (QSTORE_IS_REPLICA (self), NULL);
  g_return_val_if_fail (sql != NULL, NULL);
  g_return_val_if_fail (marker_key != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  return run_batch (self, sql, marker_key, step_func, user_data, error);
}
