/* qstore-staging-marker.c: what every database does about staged imports
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include <json-glib/json-glib.h>

#include "qstore-coordinator-private.h"
#include "qstore-error.h"
#include "qstore-i18n-private.h"
#include "qstore-rehydration-result-private.h"
#include "qstore-result-private.h"
#include "qstore-sql-token-private.h"
#include "qstore-staging-marker-private.h"

/* The import runner lives in a layer above this one (staging/): it
 * writes the marker table through SQL. What every database must do about
 * staged imports whether or not it ever imports lives here, where
 * open/qstore-open.c can list it: reading the marker rows, the leftovers
 * note at open and the stale threshold's setting. */

#define STALE_META "staging_stale_minutes"

typedef struct
{
  gpointer importer;               /* the import running, or NULL */
} StagingState;

static const StagingState *
state_key (void)
{
  static const char key;

  return (const StagingState *) &key;
}

static StagingState *
state_of (QStoreDatabase *db)
{
  return qstore_database_get_extension_state (db, state_key ());
}

static gboolean
attach (QStoreDatabase  *db,
        GError         **error)
{
  qstore_database_add_extension_state (db, state_key (), g_new0 (StagingState, 1), g_free);
  return TRUE;
}

gpointer
qstore_staging_marker_get_importer (QStoreDatabase *db)
{
  return state_of (db)->importer;
}

void
qstore_staging_marker_set_importer (QStoreDatabase *db,
                                    gpointer        importer)
{
  state_of (db)->importer = importer;
}

/* Reading the marker */

static const char *
text_of (GVariant *value)
{
  return value != NULL && g_variant_is_of_type (value, G_VARIANT_TYPE_STRING)
         ? g_variant_get_string (value, NULL) : NULL;
}

static gint64
integer_of (GVariant *value)
{
  if (value == NULL)
    return 0;
  if (g_variant_is_of_type (value, G_VARIANT_TYPE_INT64))
    return g_variant_get_int64 (value);
  if (g_variant_is_of_type (value, G_VARIANT_TYPE_DOUBLE))
    return (gint64) g_variant_get_double (value);
  return 0;
}

/* The JSON array of names; an entry that is not a string is left out, so
 * a damaged list never names a table nobody meant. */
static GStrv
parse_tables (const char *json)
{
  g_autoptr(GStrvBuilder) names = g_strv_builder_new ();
  g_autoptr(JsonParser) parser = json_parser_new ();
  JsonNode *root;

  if (json != NULL && json_parser_load_from_data (parser, json, -1, NULL) &&
      (root = json_parser_get_root (parser)) != NULL && JSON_NODE_HOLDS_ARRAY (root))
    {
      JsonArray *array = json_node_get_array (root);

      for (guint i = 0; i < json_array_get_length (array); i++)
        {
          JsonNode *node = json_array_get_element (array, i);

          if (JSON_NODE_HOLDS_VALUE (node) && json_node_get_value_type (node) == G_TYPE_STRING)
            g_strv_builder_add (names, json_node_get_string (node));
        }
    }
  return g_strv_builder_end (names);
}

/* A row's values by column name: the table may have been written by a
 * later qstore with more columns. */
static GVariant *
column_value (QStoreTable *table,
              GVariant    *row,
              const char  *name)
{
  guint n = qstore_table_get_n_columns (table);

  for (guint i = 0; i < n && i < g_variant_n_children (row); i++)
    if (g_ascii_strcasecmp (qstore_table_get_column_name (table, i), name) == 0)
      {
        g_autoptr(GVariant) child = g_variant_get_child_value (row, i);

        /* Each value is boxed; NULL is an empty maybe. */
        if (g_variant_is_of_type (child, G_VARIANT_TYPE_VARIANT))
          {
            GVariant *inner = g_variant_get_variant (child);

            g_variant_unref (child);
            child = inner;
          }
        if (g_variant_is_of_type (child, G_VARIANT_TYPE_MAYBE))
          return NULL;
        return g_steal_pointer (&child);
      }
  return NULL;
}

GPtrArray *
qstore_staging_marker_read_runs (QStoreDatabase  *db,
                                 GError         **error)
{
  g_autoptr(GPtrArray) runs = g_ptr_array_new_with_free_func (g_object_unref);
  g_autoptr(GPtrArray) rows = NULL;
  QStoreTable *table;

  table = qstore_database_get_table (db, "main", QSTORE_STAGING_MARKER_TABLE);
  if (table == NULL)
    return g_steal_pointer (&runs);

  if (!(rows = qstore_table_select_range (table, NULL, NULL, FALSE, -1, error)))
    return NULL;

  for (guint i = 0; i < rows->len; i++)
    {
      GVariant *row = rows->pdata[i];
      g_autoptr(GVariant) id = column_value (table, row, "id");
      g_autoptr(GVariant) kind = column_value (table, row, "kind");
      g_autoptr(GVariant) target = column_value (table, row, "target");
      g_autoptr(GVariant) staging = column_value (table, row, "staging");
      g_autoptr(GVariant) started = column_value (table, row, "started");
      g_autoptr(GVariant) heartbeat = column_value (table, row, "heartbeat");
      g_autoptr(GVariant) resumable = column_value (table, row, "resumable");
      g_autoptr(GVariant) state = column_value (table, row, "state");
      g_autoptr(GVariant) details = column_value (table, row, "details");
      g_auto(GStrv) tables = parse_tables (text_of (staging));

      /* A resumable flag that does not read as 0 keeps the run: the safe
       * reading of a damaged row. */
      g_ptr_array_add (runs, qstore_staging_run_new_full (integer_of (id),
                                                          text_of (kind) ? text_of (kind) : "",
                                                          text_of (target) ? text_of (target) : "",
                                                          (const char * const *) tables,
                                                          integer_of (started),
                                                          integer_of (heartbeat),
                                                          resumable == NULL || integer_of (resumable) != 0,
                                                          g_strcmp0 (text_of (state),
                                                                     QSTORE_STAGING_STATE_SWAPPED) == 0,
                                                          text_of (details)));
    }
  return g_steal_pointer (&runs);
}

/* The stale threshold */

static char *
read_setting (QStoreDatabase *db)
{
  g_autoptr(GBytes) key = qstore_catalog_key_for_meta (STALE_META);
  g_autoptr(GBytes) value = NULL;
  gsize key_len;
  const guint8 *key_data = g_bytes_get_data (key, &key_len);

  value = qstore_coordinator_get (db->coordinator, db->catalog, key_data, key_len, NULL);
  if (value == NULL)
    return NULL;
  return g_strndup (g_bytes_get_data (value, NULL), g_bytes_get_size (value));
}

/**
 * qstore_database_get_staging_stale_after_ms:
 * @database: a #QStoreDatabase
 *
 * Gets how long a staged import may go without a heartbeat before its
 * staging tables count as abandoned, for this database now:
 * %QSTORE_STAGING_STALE_MINUTES_ENV, else `PRAGMA
 * qstore.staging_stale_minutes`, else
 * %QSTORE_STAGING_STALE_MINUTES_DEFAULT minutes (see
 * qstore_staging_stale_after_ms()).
 *
 * Returns: the threshold in milliseconds
 */
gint64
qstore_database_get_staging_stale_after_ms (QStoreDatabase *database)
{
  g_autofree char *setting = NULL;

  g_return_val_if_fail (QSTORE_IS_DATABASE (database), 0);

  if (!database->closed)
    setting = read_setting (database);
  return qstore_staging_stale_after_ms (g_getenv (QSTORE_STAGING_STALE_MINUTES_ENV), setting);
}

/**
 * qstore_staging_leftovers_read:
 * @database: a #QStoreDatabase, read-only or not
 * @error: return location for a #GError
 *
 * Reads the staged imports @database records as running or interrupted
 * and judges them now, with the database's stale threshold (see
 * qstore_database_get_staging_stale_after_ms()). Nothing is written.
 *
 * Returns: (transfer full): the leftovers (empty when there are none), or
 *   %NULL when the marker table cannot be read
 */
QStoreStagingLeftovers *
qstore_staging_leftovers_read (QStoreDatabase  *database,
                               GError         **error)
{
  g_autoptr(GPtrArray) runs = NULL;

  g_return_val_if_fail (QSTORE_IS_DATABASE (database), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!qstore_database_check_open (database, error) ||
      !(runs = qstore_staging_marker_read_runs (database, error)))
    return NULL;
  return qstore_staging_leftovers_new (runs, g_get_real_time () / 1000,
                                       qstore_database_get_staging_stale_after_ms (database));
}

/* `PRAGMA qstore.staging_stale_minutes [= N]`: kept in the catalog, so
 * that the next open, in any process, judges with it. */
gboolean
qstore_staging_stale_minutes_setting (QStoreDatabase   *db,
                                      QStoreStatement  *statement,
                                      QStoreResult    **result,
                                      GError          **error)
{
  g_autoptr(sqlite3_stmt) stmt = NULL;
  g_autoptr(QStoreResult) rows = NULL;
  g_autofree char *setting = NULL;
  gint64 minutes;

  if (statement->malformed ||
      (statement->value != NULL && !g_str_equal (statement->value, "0") &&
       !qstore_staging_parse_minutes (statement->value, &minutes)))
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                   _("PRAGMA %s takes a whole number of minutes, 1 or more (such as PRAGMA %s "
                   "= 60), or 0 to go back to the default of %d"),
                   QSTORE_STAGING_STALE_SETTING, QSTORE_STAGING_STALE_SETTING,
                   QSTORE_STAGING_STALE_MINUTES_DEFAULT);
      return FALSE;
    }

  if (statement->value != NULL)
    {
      g_autoptr(GBytes) key = qstore_catalog_key_for_meta (STALE_META);
      gboolean own_transaction;

      if (!qstore_database_check_writable (db, error))
        return FALSE;
      /* Inside a transaction that writes, the setting commits with it. */
      own_transaction = !qstore_coordinator_in_transaction (db->coordinator);
      if (own_transaction)
        qstore_coordinator_begin (db->coordinator);
      if (g_str_equal (statement->value, "0"))
        qstore_coordinator_delete (db->coordinator, db->catalog,
                                   g_bytes_get_data (key, NULL), g_bytes_get_size (key));
      else
        {
          g_autofree char *text = g_strdup_printf ("%" G_GINT64_FORMAT, minutes);

          qstore_database_put_catalog (db, key, text);
        }
      if (own_transaction && !qstore_coordinator_commit (db->coordinator, error))
        return FALSE;
      if (result != NULL)
        {
          *result = qstore_result_new_for_statement (NULL);
          qstore_result_set_counts (*result, 0, sqlite3_last_insert_rowid (db->db));
        }
      return TRUE;
    }

  setting = read_setting (db);
  if (sqlite3_prepare_v2 (db->db, "SELECT ?1 AS staging_stale_minutes", -1, &stmt, NULL) != SQLITE_OK)
    {
      qstore_database_set_sqlite_error (db, db->db, sqlite3_errcode (db->db), error);
      return FALSE;
    }
  if (qstore_staging_parse_minutes (setting, &minutes))
    sqlite3_bind_int64 (stmt, 1, minutes);
  rows = qstore_result_new_for_statement (stmt);
  if (sqlite3_step (stmt) == SQLITE_ROW)
    qstore_result_add_row (rows, stmt);
  qstore_result_set_counts (rows, 0, sqlite3_last_insert_rowid (db->db));
  if (result != NULL)
    *result = g_steal_pointer (&rows);
  return TRUE;
}

/* Open */

/* The note: leftovers are said out loud, or nobody learns they exist
 * until a disk fills up. Open never refuses and never drops anything
 * because of them. Staging tables and the marker are bookkeeping, not
 * tables of the user's: they leave the list of tables that loaded. */
static void
rehydrate (QStoreDatabase *db,
           GArray         *items)
{
  QStoreRehydrationResult *result = qstore_database_get_rehydration_result (db);
  g_autoptr(QStoreStagingLeftovers) leftovers = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *note = NULL;
  g_auto(GStrv) loaded = g_strdupv ((char **) qstore_rehydration_result_get_tables (result));

  for (guint i = 0; loaded[i] != NULL; i++)
    {
      const char *dot = strchr (loaded[i], '.');

      if (dot != NULL && qstore_staging_is_reserved_name (dot + 1))
        qstore_rehydration_result_forget_table (result, loaded[i]);
    }

  if (!(leftovers = qstore_staging_leftovers_read (db, &error)))
    {
      qstore_rehydration_result_add_error_entry (result, "main." QSTORE_STAGING_MARKER_TABLE,
                                                 "", error->message);
      return;
    }
  qstore_rehydration_result_set_staging_leftovers (result, leftovers);
  if ((note = qstore_staging_leftovers_describe (leftovers)) != NULL)
    g_message ("%s: %s", qstore_provider_get_location (db->provider), note);
}

/* Reserved names */

typedef struct
{
  char *staging;                   /* the first staging table read */
} Reads;

static int
reads_authorizer (void       *data,
                  int         action,
                  const char *arg1,
                  const char *arg2,
                  const char *db_name,
                  const char *trigger)
{
  Reads *reads = data;

  if (action == SQLITE_READ && arg1 != NULL && reads->staging == NULL &&
      qstore_staging_is_reserved_name (arg1))
    reads->staging = g_strdup (arg1);
  return SQLITE_OK;
}

/* The first name of @sql that is reserved. SQLite's authorizer does not
 * see the columns a JOIN … USING or NATURAL JOIN compares, so a table
 * read only through those is found by its name. */
static char *
names_reserved (const char *sql)
{
  g_autoptr(GArray) tokens = qstore_sql_tokenize (sql);

  for (guint i = 0; i < tokens->len; i++)
    {
      QStoreSqlToken *token = &g_array_index (tokens, QStoreSqlToken, i);
      g_autofree char *name = NULL;

      if (token->kind != QSTORE_SQL_TOKEN_WORD && token->kind != QSTORE_SQL_TOKEN_QUOTED)
        continue;
      name = qstore_sql_token_name (token);
      if (qstore_staging_is_reserved_name (name))
        return g_steal_pointer (&name);
    }
  return NULL;
}

/* A materialized view over a staging table would follow a table that
 * exists for one import and then goes. Read through a view, the table
 * shows in the authorizer's reads; named in the body, in its words. */
static gboolean
check_view_body (QStoreDatabase   *db,
                 QStoreStatement  *statement,
                 GError          **error)
{
  g_autofree char *staging = NULL;
  Reads reads = { NULL };
  sqlite3_stmt *stmt = NULL;

  if (statement->body == NULL)
    return TRUE;
  qstore_database_set_authorizer (db, reads_authorizer, &reads);
  sqlite3_prepare_v2 (db->db, statement->body, -1, &stmt, NULL);
  qstore_database_set_authorizer (db, NULL, NULL);
  sqlite3_finalize (stmt);
  staging = reads.staging != NULL ? reads.staging : names_reserved (statement->body);
  if (staging == NULL)
    return TRUE;
  g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_UNSUPPORTED,
               _("Materialized view “%s” cannot read “%s”: it belongs to a staged import and "
               "is dropped when the import ends; read the table the import replaces instead"),
               statement->name, staging);
  return FALSE;
}

/* The reserved names themselves are the router's rule
 * (qstore_table_name_is_reserved()); what is the import's own is that no
 * materialized view follows one of its tables. */
static gboolean
check_statement (QStoreDatabase   *db,
                 QStoreStatement  *statement,
                 GError          **error)
{
  if (statement->kind != QSTORE_STATEMENT_CREATE_MATERIALIZED_VIEW)
    return TRUE;
  return check_view_body (db, statement, error);
}

const QStoreDatabaseExtension qstore_staging_marker_extension = {
  .attach = attach,
  /* No catalog entry of its own: it reads the marker table, which loads
   * as any table does. */
  .catalog_kind = QSTORE_CATALOG_KEY_META,
  .rehydrate = rehydrate,
  .check_statement = check_statement,
};
