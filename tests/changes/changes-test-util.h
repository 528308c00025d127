/* changes-test-util.h: what the change stream tests share
 *
 * A random workload over five tables of different key shapes, and a
 * model that change sets are replayed onto: every update and delete must
 * find the row its old image shows, and at the end the model must hold
 * exactly the tables' rows.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "qstore-test-util.h"

G_BEGIN_DECLS

/* Five tables: an INTEGER PRIMARY KEY, a text key with a blob, a
 * composite key, a rowid table, and a NOCASE key with an index. */
static const char *const workload_tables[] = { "t0", "t1", "t2", "t3", "t4", NULL };

#define WORKLOAD_DDL \
  "CREATE TABLE t0 (id INTEGER PRIMARY KEY, v TEXT, n REAL);" \
  "CREATE TABLE t1 (k TEXT PRIMARY KEY, v INTEGER, b BLOB);" \
  "CREATE TABLE t2 (a INTEGER, b TEXT, c, PRIMARY KEY (a, b));" \
  "CREATE TABLE t3 (x INTEGER, y TEXT);" \
  "CREATE TABLE t4 (k TEXT COLLATE NOCASE PRIMARY KEY, v INTEGER);" \
  "CREATE INDEX t4_v ON t4 (v);"

#define WORKLOAD_KEYS 60

static inline char *
workload_statement (GRand *rand)
{
  int k = g_rand_int_range (rand, 0, WORKLOAD_KEYS);
  int v = g_rand_int_range (rand, -50, 50);

  switch (g_rand_int_range (rand, 0, 16))
    {
    case 0:
      return g_strdup_printf ("INSERT OR IGNORE INTO t0 VALUES (%d, 'v%d é', %d.5)", k, v, v);
    case 1:
      return g_strdup_printf ("UPDATE t0 SET v = NULL, n = n * 2 WHERE id = %d", k);
    case 2:
      /* A key change; it may collide (a constraint error the caller skips). */
      return g_strdup_printf ("UPDATE t0 SET id = %d WHERE id = %d", k + 1, k);
    case 3:
      return g_strdup_printf ("INSERT OR REPLACE INTO t1 VALUES ('k%d', %d, x'%02x00ff')", k, v,
                              (guint) (v & 0xff));
    case 4:
      return g_strdup_printf ("DELETE FROM t1 WHERE v %% 7 = %d", k % 7);
    case 5:
      return g_strdup_printf ("INSERT OR IGNORE INTO t2 VALUES (%d, 'b%d', %d)", k % 10, k % 6, v);
    case 6:
      return g_strdup_printf ("UPDATE t2 SET c = '%d' WHERE a = %d", v, k % 10);
    case 7:
      return g_strdup_printf ("DELETE FROM t2 WHERE a = %d AND b = 'b%d'", k % 10, k % 6);
    case 8:
      return g_strdup_printf ("INSERT INTO t3 VALUES (%d, %s)", k, v < 0 ? "NULL" : "'y'");
    case 9:
      return g_strdup_printf ("DELETE FROM t3 WHERE x = %d", k);
    case 10:
      return g_strdup_printf ("UPDATE t3 SET y = 'z%d' WHERE x >= %d AND x < %d", v, k, k + 3);
    case 11:
      return g_strdup_printf ("INSERT OR REPLACE INTO t4 VALUES ('%s%d', %d)",
                              v < 0 ? "K" : "k", k, v);
    case 12:
      return g_strdup_printf ("UPDATE t4 SET v = v + 1 WHERE v BETWEEN %d AND %d", v, v + 10);
    case 13:
      return g_strdup_printf ("DELETE FROM t4 WHERE k = 'k%d'", k);
    case 14:
      return g_strdup_printf ("UPDATE t1 SET k = 'k%d' WHERE k = 'k%d'", k + 1, k);
    default:
      return g_strdup_printf ("DELETE FROM t0 WHERE id = %d", k);
    }
}

static inline gboolean
workload_exec (QStoreDatabase  *db,
               const char      *sql,
               GError         **error)
{
  GError *local_error = NULL;

  if (qstore_database_exec (db, sql, &local_error))
    return TRUE;
  /* Collisions are part of a random workload. */
  if (g_error_matches (local_error, QSTORE_ERROR, QSTORE_ERROR_CONSTRAINT))
    {
      g_error_free (local_error);
      return TRUE;
    }
  g_propagate_prefixed_error (error, local_error, "“%s”: ", sql);
  return FALSE;
}

/* One random transaction: most commit, some roll back, some roll back to
 * a savepoint, some are a single statement. *@committed says whether it
 * may have committed something. */
static inline gboolean
workload_transaction (QStoreDatabase  *db,
                      GRand           *rand,
                      gboolean        *committed,
                      GError         **error)
{
  int dice = g_rand_int_range (rand, 0, 100);
  int n = g_rand_int_range (rand, 1, 5);

  *committed = FALSE;
  if (dice < 15)
    {
      g_autofree char *sql = workload_statement (rand);

      *committed = TRUE;
      return workload_exec (db, sql, error);
    }
  if (!qstore_database_exec (db, "BEGIN", error))
    return FALSE;
  for (int i = 0; i < n; i++)
    {
      g_autofree char *sql = workload_statement (rand);

      if (!workload_exec (db, sql, error))
        return FALSE;
    }
  if (dice < 25)
    {
      g_autofree char *sql = workload_statement (rand);

      if (!qstore_database_exec (db, "SAVEPOINT s", error) ||
          !workload_exec (db, sql, error) ||
          !qstore_database_exec (db, "ROLLBACK TO s", error) ||
          !qstore_database_exec (db, "RELEASE s", error))
        return FALSE;
    }
  if (dice < 35)
    return qstore_database_exec (db, "ROLLBACK", error);
  *committed = TRUE;
  return qstore_database_exec (db, "COMMIT", error);
}

/* A gap handler: keeps "reason" strings in a GPtrArray. */
static inline void
record_gap (QStoreChangeFeed *feed,
            const char       *reason,
            gint64            down_for_ms,
            GPtrArray        *gaps)
{
  g_ptr_array_add (gaps, g_strdup (reason));
}

/* A changes handler: keeps the change sets in a GPtrArray. */
static inline void
collect_set (QStoreChangeFeed *feed,
             QStoreChangeSet  *change_set,
             GPtrArray        *sets)
{
  g_ptr_array_add (sets, g_object_ref (change_set));
}

/* The model: table → key text → row text. */
typedef struct
{
  GHashTable *tables;
  guint64     position;      /* the last transaction replayed */
  guint       n_changes;
} Model;

static inline void
model_init (Model *model)
{
  model->tables = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                         (GDestroyNotify) g_hash_table_unref);
  model->position = 0;
  model->n_changes = 0;
}

static inline void
model_clear (Model *model)
{
  g_clear_pointer (&model->tables, g_hash_table_unref);
}

static inline GHashTable *
model_table (Model      *model,
             const char *table)
{
  GHashTable *rows = g_hash_table_lookup (model->tables, table);

  if (rows == NULL)
    {
      rows = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
      g_hash_table_insert (model->tables, g_strdup (table), rows);
    }
  return rows;
}

static inline int
compare_strings (gconstpointer a,
                 gconstpointer b)
{
  return strcmp (*(const char * const *) a, *(const char * const *) b);
}

/* A row as text: its named values in name order, so a row read back by
 * SQL prints the same. */
static inline char *
record_text (GVariant *record)
{
  g_autoptr(GPtrArray) items = g_ptr_array_new_with_free_func (g_free);
  GVariantIter iter;
  const char *name;
  GVariant *value;

  g_variant_iter_init (&iter, record);
  while (g_variant_iter_next (&iter, "{&sv}", &name, &value))
    {
      g_autofree char *printed = g_variant_print (value, TRUE);

      g_ptr_array_add (items, g_strdup_printf ("%s=%s", name, printed));
      g_variant_unref (value);
    }
  g_ptr_array_sort (items, compare_strings);
  g_ptr_array_add (items, NULL);
  return g_strjoinv ("|", (char **) items->pdata);
}

static inline char *
key_text (GVariant *key)
{
  g_assert_nonnull (key);
  return qstore_change_key_text (key);
}

/* Replays @change_set onto @model, checking each old image against the
 * row the model holds under its key. */
static inline void
model_apply (Model           *model,
             QStoreChangeSet *change_set,
             const char      *context)
{
  guint64 tx_id = qstore_change_set_get_tx_id (change_set);

  if (tx_id <= model->position)
    g_error ("%s: transaction %" G_GUINT64_FORMAT " comes after %" G_GUINT64_FORMAT,
             context, tx_id, model->position);
  for (guint i = 0; i < qstore_change_set_get_n_changes (change_set); i++)
    {
      GHashTable *rows = model_table (model, qstore_change_set_get_table (change_set, i));
      QStoreChangeOp op = qstore_change_set_get_op (change_set, i);

      if (op != QSTORE_CHANGE_INSERT)
        {
          g_autoptr(GVariant) old_key = qstore_change_set_get_old_key (change_set, i);
          g_autoptr(GVariant) old_record = qstore_change_set_get_old_record (change_set, i);
          g_autofree char *k = key_text (old_key);
          g_autofree char *text = record_text (old_record);
          const char *held = g_hash_table_lookup (rows, k);

          if (g_strcmp0 (held, text) != 0)
            g_error ("%s: transaction %" G_GUINT64_FORMAT " changes %s %s from “%s”, but the "
                     "replay holds “%s”", context, tx_id,
                     qstore_change_set_get_table (change_set, i), k, text, held);
          g_hash_table_remove (rows, k);
        }
      if (op != QSTORE_CHANGE_DELETE)
        {
          g_autoptr(GVariant) new_key = qstore_change_set_get_key (change_set, i);
          g_autoptr(GVariant) new_record = qstore_change_set_get_new_record (change_set, i);
          g_autofree char *k = key_text (new_key);

          if (g_hash_table_contains (rows, k))
            g_error ("%s: transaction %" G_GUINT64_FORMAT " writes %s %s over a row the "
                     "replay holds", context, tx_id, qstore_change_set_get_table (change_set, i), k);
          g_hash_table_insert (rows, g_steal_pointer (&k), record_text (new_record));
        }
      model->n_changes++;
    }
  model->position = tx_id;
}

/* The rows of @table as record_text() writes them, sorted. */
static inline char *
table_text (QStoreDatabase *db,
            const char     *table)
{
  g_autofree char *sql = g_str_equal (table, "t3")
                           ? g_strdup ("SELECT rowid AS rowid, * FROM t3")
                           : g_strdup_printf ("SELECT * FROM %s", table);
  g_autoptr(GError) error = NULL;
  g_autoptr(QStoreResult) result = qstore_database_query (db, sql, NULL, &error);
  g_autoptr(GPtrArray) rows = g_ptr_array_new_with_free_func (g_free);

  g_assert_no_error (error);
  for (guint r = 0; r < qstore_result_get_n_rows (result); r++)
    {
      g_auto(GVariantBuilder) builder = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_VARDICT);
      g_autoptr(GVariant) record = NULL;

      for (guint c = 0; c < qstore_result_get_n_columns (result); c++)
        {
          g_autoptr(GVariant) value = qstore_result_get_value (result, r, c);

          g_variant_builder_add (&builder, "{sv}", qstore_result_get_column_name (result, c), value);
        }
      record = g_variant_ref_sink (g_variant_builder_end (&builder));
      g_ptr_array_add (rows, record_text (record));
    }
  g_ptr_array_sort (rows, compare_strings);
  g_ptr_array_add (rows, NULL);
  return g_strjoinv ("\n", (char **) rows->pdata);
}

static inline char *
model_table_text (Model      *model,
                  const char *table)
{
  g_autoptr(GPtrArray) rows = g_ptr_array_new ();
  GHashTable *held = model_table (model, table);
  GHashTableIter iter;
  gpointer text;

  g_hash_table_iter_init (&iter, held);
  while (g_hash_table_iter_next (&iter, NULL, &text))
    g_ptr_array_add (rows, text);
  g_ptr_array_sort (rows, compare_strings);
  g_ptr_array_add (rows, NULL);
  return g_strjoinv ("\n", (char **) rows->pdata);
}

/* The replay holds exactly the rows of @tables (NULL-terminated). */
static inline void
model_assert_tables_of (Model              *model,
                        QStoreDatabase     *db,
                        const char * const *tables,
                        const char         *context)
{
  for (guint i = 0; tables[i] != NULL; i++)
    {
      g_autofree char *actual = table_text (db, tables[i]);
      g_autofree char *replayed = model_table_text (model, tables[i]);

      if (g_strcmp0 (actual, replayed) != 0)
        g_error ("%s: table %s holds\n%s\nbut the replay of the changes gives\n%s", context,
                 tables[i], actual, replayed);
    }
}

static inline void
model_assert_tables (Model          *model,
                     QStoreDatabase *db,
                     const char     *context)
{
  model_assert_tables_of (model, db, workload_tables, context);
}

/* Reads the store's change log from after the model's position and
 * replays it; no gap is allowed. */
static inline void
model_follow (Model      *model,
              const char *uri,
              const char *context)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(QStoreChangeFeed) feed = qstore_change_feed_new_follower (uri, model->position,
                                                                      &error);
  g_autoptr(GPtrArray) sets = g_ptr_array_new_with_free_func (g_object_unref);
  g_autoptr(GPtrArray) gaps = g_ptr_array_new_with_free_func (g_free);

  g_assert_no_error (error);
  g_signal_connect (feed, "changes", G_CALLBACK (collect_set), sets);
  g_signal_connect (feed, "gap", G_CALLBACK (record_gap), gaps);
  qstore_change_feed_poll (feed, &error);
  g_assert_no_error (error);
  if (gaps->len > 0)
    g_error ("%s: the change log has a gap: %s", context, (char *) gaps->pdata[0]);
  for (guint i = 0; i < sets->len; i++)
    model_apply (model, sets->pdata[i], context);
  qstore_change_feed_close (feed);
}

G_END_DECLS
