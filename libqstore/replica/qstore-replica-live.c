/* qstore-replica-live.c: a live query, a materialized view kept in memory
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "qstore-affinity-private.h"
#include "qstore-error.h"
#include "qstore-replica-private.h"

/* A live query is planned like a materialized view (qstore_mview_plan_new
 * on the writer) and follows its sources with the same strategies
 * (qstore_mview_plan_touches): per changed source key, per changed group,
 * or a full rebuild. Where a materialized view writes what it computes
 * into its backing table, a live query keeps its rows in memory as a
 * multiset of encoded rows, grouped by partition when it is keyed, and
 * reports what left and what entered.
 *
 * A keyed query computes again only the partitions a transaction touched,
 * unless they are many: past half of what it holds (and a few dozen), one
 * run of the whole query at the commit costs less than a lookup per
 * partition. While a transaction streams, chunks are derived per
 * partition (a run of the whole query per chunk would cost the square of
 * the transaction); what waits for the commit stops growing at
 * QSTORE_REPLICA_DIRTY_PARTITIONS partitions, where a rebuild takes over. */

#define REBUILD_MIN_PARTITIONS 32

struct _QStoreReplicaLive
{
  guint64       id;
  guint64       generation;
  Plan         *plan;
  guint         n_columns;
  gboolean      keyed;
  guint64       tx;

  GHashTable   *rows;          /* GBytes encoded row → count (as a pointer) */
  guint64       n_rows;
  GHashTable   *partitions;    /* keyed: GBytes key → GPtrArray of GBytes rows */

  GHashTable   *dirty;         /* keyed: GBytes key → GBytes encoded key values */
  gboolean      rebuild;
  gboolean      provisional;   /* showed rows of a transaction not yet committed */

  sqlite3      *conn;          /* where the statements below were prepared */
  sqlite3_stmt *all_stmt;
  sqlite3_stmt *key_stmt;
  GByteArray   *key_buf;
};

static GHashTable *
rows_new (void)
{
  return g_hash_table_new_full (g_bytes_hash, g_bytes_equal, (GDestroyNotify) g_bytes_unref, NULL);
}

static GHashTable *
partitions_new (void)
{
  return g_hash_table_new_full (g_bytes_hash, g_bytes_equal, (GDestroyNotify) g_bytes_unref,
                                (GDestroyNotify) g_ptr_array_unref);
}

QStoreReplicaLive *
qstore_replica_live_new (guint64  id,
                         guint64  generation,
                         Plan    *plan)
{
  QStoreReplicaLive *live = g_new0 (QStoreReplicaLive, 1);

  live->id = id;
  live->generation = generation;
  live->plan = plan;
  live->n_columns = plan->columns->len;
  live->keyed = !qstore_mview_plan_rebuilds (plan);
  live->rows = rows_new ();
  live->partitions = partitions_new ();
  live->dirty = g_hash_table_new_full (g_bytes_hash, g_bytes_equal, (GDestroyNotify) g_bytes_unref,
                                       (GDestroyNotify) g_bytes_unref);
  live->key_buf = g_byte_array_new ();
  return live;
}

void
qstore_replica_live_forget_statements (QStoreReplicaLive *live)
{
  g_clear_pointer (&live->all_stmt, sqlite3_finalize);
  g_clear_pointer (&live->key_stmt, sqlite3_finalize);
  live->conn = NULL;
}

void
qstore_replica_live_free (QStoreReplicaLive *live)
{
  if (live == NULL)
    return;
  qstore_replica_live_forget_statements (live);
  g_hash_table_unref (live->rows);
  g_hash_table_unref (live->partitions);
  g_hash_table_unref (live->dirty);
  g_byte_array_unref (live->key_buf);
  qstore_mview_plan_free (live->plan);
  g_free (live);
}

guint64
qstore_replica_live_get_id (QStoreReplicaLive *live)
{
  return live->id;
}

guint64
qstore_replica_live_get_generation (QStoreReplicaLive *live)
{
  return live->generation;
}

const Plan *
qstore_replica_live_get_plan (QStoreReplicaLive *live)
{
  return live->plan;
}

guint64
qstore_replica_live_get_tx (QStoreReplicaLive *live)
{
  return live->tx;
}

void
qstore_replica_live_set_tx (QStoreReplicaLive *live,
                            guint64            tx)
{
  live->tx = tx;
}

gboolean
qstore_replica_live_is_provisional (QStoreReplicaLive *live)
{
  return live->provisional;
}

void
qstore_replica_live_set_provisional (QStoreReplicaLive *live,
                                     gboolean           provisional)
{
  live->provisional = provisional;
}

/* Statements */

static sqlite3_stmt *
statement (QStoreReplicaLive  *live,
           QStoreDatabase     *reader,
           sqlite3_stmt      **cached,
           const char         *sql,
           GError            **error)
{
  int rc;

  if (live->conn != reader->db)
    {
      qstore_replica_live_forget_statements (live);
      live->conn = reader->db;
    }
  if (*cached != NULL)
    {
      sqlite3_reset (*cached);
      sqlite3_clear_bindings (*cached);
      return *cached;
    }
  rc = sqlite3_prepare_v3 (reader->db, sql, -1, SQLITE_PREPARE_PERSISTENT, cached, NULL);
  if (rc != SQLITE_OK)
    {
      qstore_database_set_sqlite_error (reader, reader->db, rc, error);
      g_prefix_error (error, "Live query %" G_GUINT64_FORMAT ": ", live->id);
      g_clear_pointer (cached, sqlite3_finalize);
      return NULL;
    }
  return *cached;
}

static gboolean
step_failed (QStoreReplicaLive  *live,
             QStoreDatabase     *reader,
             sqlite3_stmt       *stmt,
             int                 rc,
             GError            **error)
{
  qstore_database_set_sqlite_error (reader, reader->db, rc, error);
  g_prefix_error (error, "Live query %" G_GUINT64_FORMAT ": ", live->id);
  sqlite3_reset (stmt);
  return FALSE;
}

/* Rows */

static guint
row_count (GHashTable *rows,
           GBytes     *row)
{
  return GPOINTER_TO_UINT (g_hash_table_lookup (rows, row));
}

static void
rows_add (GHashTable *rows,
          GBytes     *row,
          guint       n)
{
  guint count = row_count (rows, row);

  g_hash_table_replace (rows, g_bytes_ref (row), GUINT_TO_POINTER (count + n));
}

static void
rows_remove (GHashTable *rows,
             GBytes     *row,
             guint       n)
{
  guint count = row_count (rows, row);

  if (count <= n)
    g_hash_table_remove (rows, row);
  else
    g_hash_table_replace (rows, g_bytes_ref (row), GUINT_TO_POINTER (count - n));
}

static void
append_copies (GPtrArray *out,
               GBytes    *row,
               guint      n)
{
  for (guint i = 0; i < n; i++)
    g_ptr_array_add (out, g_bytes_ref (row));
}

/* The partition key of a row of the view. */
static GBytes *
row_key (QStoreReplicaLive  *live,
         const QStoreValue  *values,
         GError            **error)
{
  g_byte_array_set_size (live->key_buf, 0);
  if (!qstore_mview_plan_encode_row_key (live->plan, values, live->key_buf, error))
    return NULL;
  return g_bytes_new (live->key_buf->data, live->key_buf->len);
}

/* Runs the whole query into @fresh (a multiset) and, keyed, @partitions. */
static gboolean
run_all (QStoreReplicaLive  *live,
         QStoreDatabase     *reader,
         GHashTable         *fresh,
         GHashTable         *partitions,
         GError            **error)
{
  g_autofree QStoreValue *values = g_new0 (QStoreValue, MAX (live->n_columns, 1));
  sqlite3_stmt *stmt;
  int rc;

  if (!(stmt = statement (live, reader, &live->all_stmt, live->plan->all_sql, error)))
    return FALSE;
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      g_autoptr(GBytes) row = NULL;

      qstore_mview_values_from_statement (stmt, values, live->n_columns);
      row = qstore_mview_encode_values (values, live->n_columns);
      rows_add (fresh, row, 1);
      if (partitions != NULL)
        {
          g_autoptr(GBytes) key = row_key (live, values, error);
          GPtrArray *members;

          if (key == NULL)
            {
              sqlite3_reset (stmt);
              return FALSE;
            }
          members = g_hash_table_lookup (partitions, key);
          if (members == NULL)
            {
              members = g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);
              g_hash_table_insert (partitions, g_bytes_ref (key), members);
            }
          g_ptr_array_add (members, g_steal_pointer (&row));
        }
    }
  if (rc != SQLITE_DONE)
    return step_failed (live, reader, stmt, rc, error);
  sqlite3_reset (stmt);
  return TRUE;
}

static guint64
multiset_size (GHashTable *rows)
{
  GHashTableIter iter;
  gpointer count;
  guint64 n = 0;

  g_hash_table_iter_init (&iter, rows);
  while (g_hash_table_iter_next (&iter, NULL, &count))
    n += GPOINTER_TO_UINT (count);
  return n;
}

gboolean
qstore_replica_live_hydrate (QStoreReplicaLive  *live,
                             QStoreDatabase     *reader,
                             GVariant          **rows,
                             GError            **error)
{
  g_hash_table_remove_all (live->rows);
  g_hash_table_remove_all (live->partitions);
  qstore_replica_live_forget_work (live);
  if (!run_all (live, reader, live->rows, live->keyed ? live->partitions : NULL, error))
    return FALSE;
  live->n_rows = multiset_size (live->rows);
  *rows = qstore_replica_live_rows (live);
  return TRUE;
}

/* Following the sources */

gboolean
qstore_replica_live_has_work (QStoreReplicaLive *live)
{
  return live->rebuild || g_hash_table_size (live->dirty) > 0;
}

gboolean
qstore_replica_live_work_is_partial (QStoreReplicaLive *live)
{
  return !live->rebuild;
}

void
qstore_replica_live_forget_work (QStoreReplicaLive *live)
{
  live->rebuild = FALSE;
  g_hash_table_remove_all (live->dirty);
}

void
qstore_replica_live_mark_rebuild (QStoreReplicaLive *live)
{
  live->rebuild = TRUE;
  g_hash_table_remove_all (live->dirty);
}

static gint dirty_peak;

/**
 * qstore_replica_test_take_dirty_peak: (skip)
 *
 * For tests only: the most partitions a live query of this process kept
 * to compute again since the last call, which resets it.
 *
 * Returns: the count
 */
guint
qstore_replica_test_take_dirty_peak (void)
{
  return (guint) g_atomic_int_and (&dirty_peak, 0);
}

static gboolean
note_partition (QStoreReplicaLive  *live,
                const QStoreValue  *key_values,
                GError            **error)
{
  guint n_key = live->plan->key_out->len;
  g_autoptr(GBytes) key = NULL;

  g_byte_array_set_size (live->key_buf, 0);
  if (!qstore_mview_plan_encode_key (live->plan, key_values, live->key_buf, error))
    return FALSE;
  key = g_bytes_new (live->key_buf->data, live->key_buf->len);
  if (!g_hash_table_contains (live->dirty, key))
    g_hash_table_insert (live->dirty, g_steal_pointer (&key),
                         qstore_mview_encode_values (key_values, n_key));

  /* For tests: the most any query held. */
  {
    guint size = g_hash_table_size (live->dirty);
    guint peak = (guint) g_atomic_int_get (&dirty_peak);

    while (size > peak && !g_atomic_int_compare_and_exchange (&dirty_peak, (gint) peak, (gint) size))
      peak = (guint) g_atomic_int_get (&dirty_peak);
  }
  if (g_hash_table_size (live->dirty) > QSTORE_REPLICA_DIRTY_PARTITIONS)
    qstore_replica_live_mark_rebuild (live);
  return TRUE;
}

gboolean
qstore_replica_live_note_change (QStoreReplicaLive  *live,
                                 QStoreTable        *source,
                                 const QStoreChange *change,
                                 GError            **error)
{
  guint n_source = qstore_table_get_n_columns (source);
  g_autofree QStoreValue *old_values = NULL;
  g_autofree QStoreValue *new_values = NULL;
  QStoreValue old_key[QSTORE_MVIEW_MAX_KEY], new_key[QSTORE_MVIEW_MAX_KEY];
  QStoreMViewTouches touches;

  if (live->rebuild)
    return TRUE;
  if (!live->keyed)
    {
      qstore_replica_live_mark_rebuild (live);
      return TRUE;
    }

  if (change->old_row != NULL)
    {
      gsize len;
      const guint8 *data = g_bytes_get_data (change->old_row, &len);

      old_values = g_new0 (QStoreValue, MAX (n_source, 1));
      if (!qstore_table_decode_row (source, data, len, old_values, NULL, error))
        return FALSE;
    }
  if (change->new_row != NULL)
    {
      gsize len;
      const guint8 *data = g_bytes_get_data (change->new_row, &len);

      new_values = g_new0 (QStoreValue, MAX (n_source, 1));
      if (!qstore_table_decode_row (source, data, len, new_values, NULL, error))
        return FALSE;
    }

  touches = qstore_mview_plan_touches (live->plan, old_values, new_values, old_key, new_key);
  if ((touches & QSTORE_MVIEW_TOUCHES_OLD) && !note_partition (live, old_key, error))
    return FALSE;
  if (!live->rebuild && (touches & QSTORE_MVIEW_TOUCHES_NEW) && !note_partition (live, new_key, error))
    return FALSE;
  return TRUE;
}

/* Differences of two multisets: what @before has more of goes to
 * @removed, what @after has more of to @added. */
static void
diff_multisets (GHashTable *before,
                GHashTable *after,
                GPtrArray  *removed,
                GPtrArray  *added)
{
  GHashTableIter iter;
  GBytes *row;
  gpointer count;

  g_hash_table_iter_init (&iter, before);
  while (g_hash_table_iter_next (&iter, (gpointer *) &row, &count))
    {
      guint had = GPOINTER_TO_UINT (count), has = row_count (after, row);

      if (had > has)
        append_copies (removed, row, had - has);
    }
  g_hash_table_iter_init (&iter, after);
  while (g_hash_table_iter_next (&iter, (gpointer *) &row, &count))
    {
      guint has = GPOINTER_TO_UINT (count), had = row_count (before, row);

      if (has > had)
        append_copies (added, row, has - had);
    }
}

static gboolean
flush_rebuild (QStoreReplicaLive  *live,
               QStoreDatabase     *reader,
               GPtrArray          *removed,
               GPtrArray          *added,
               GError            **error)
{
  g_autoptr(GHashTable) fresh = rows_new ();
  g_autoptr(GHashTable) partitions = live->keyed ? partitions_new () : NULL;

  if (!run_all (live, reader, fresh, partitions, error))
    return FALSE;
  diff_multisets (live->rows, fresh, removed, added);
  g_hash_table_unref (live->rows);
  live->rows = g_steal_pointer (&fresh);
  if (partitions != NULL)
    {
      g_hash_table_unref (live->partitions);
      live->partitions = g_steal_pointer (&partitions);
    }
  live->n_rows = multiset_size (live->rows);
  return TRUE;
}

static gboolean
flush_partition (QStoreReplicaLive  *live,
                 QStoreDatabase     *reader,
                 GBytes             *key,
                 GBytes             *key_values,
                 GPtrArray          *removed,
                 GPtrArray          *added,
                 GError            **error)
{
  guint n_key = live->plan->key_out->len;
  QStoreValue values[QSTORE_MVIEW_MAX_KEY];
  g_autofree QStoreValue *row_values = g_new0 (QStoreValue, MAX (live->n_columns, 1));
  g_autoptr(GHashTable) before = rows_new ();
  g_autoptr(GHashTable) after = rows_new ();
  g_autoptr(GPtrArray) fresh = g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);
  GPtrArray *old;
  sqlite3_stmt *stmt;
  guint first_removed = removed->len, first_added = added->len;
  int rc;

  if (!qstore_mview_decode_values (key_values, values, n_key, error) ||
      !(stmt = statement (live, reader, &live->key_stmt, live->plan->key_sql, error)))
    return FALSE;
  for (guint k = 0; k < n_key; k++)
    qstore_value_bind (stmt, (int) k + 1, &values[k]);
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      GBytes *row;

      qstore_mview_values_from_statement (stmt, row_values, live->n_columns);
      row = qstore_mview_encode_values (row_values, live->n_columns);
      rows_add (after, row, 1);
      g_ptr_array_add (fresh, row);
    }
  if (rc != SQLITE_DONE)
    return step_failed (live, reader, stmt, rc, error);
  sqlite3_reset (stmt);

  old = g_hash_table_lookup (live->partitions, key);
  for (guint i = 0; old != NULL && i < old->len; i++)
    rows_add (before, old->pdata[i], 1);
  diff_multisets (before, after, removed, added);

  for (guint i = first_removed; i < removed->len; i++)
    rows_remove (live->rows, removed->pdata[i], 1);
  for (guint i = first_added; i < added->len; i++)
    rows_add (live->rows, added->pdata[i], 1);
  live->n_rows = live->n_rows - (removed->len - first_removed) + (added->len - first_added);

  if (fresh->len == 0)
    g_hash_table_remove (live->partitions, key);
  else
    g_hash_table_replace (live->partitions, g_bytes_ref (key), g_steal_pointer (&fresh));
  return TRUE;
}

gboolean
qstore_replica_live_flush (QStoreReplicaLive  *live,
                           QStoreDatabase     *reader,
                           gboolean            may_rebuild,
                           GPtrArray          *removed,
                           GPtrArray          *added,
                           GError            **error)
{
  guint n_dirty = g_hash_table_size (live->dirty);
  gboolean ok = TRUE;

  if (live->rebuild ||
      (may_rebuild && n_dirty > REBUILD_MIN_PARTITIONS &&
       n_dirty > g_hash_table_size (live->partitions) / 2))
    ok = flush_rebuild (live, reader, removed, added, error);
  else
    {
      GHashTableIter iter;
      GBytes *key, *key_values;

      g_hash_table_iter_init (&iter, live->dirty);
      while (ok && g_hash_table_iter_next (&iter, (gpointer *) &key, (gpointer *) &key_values))
        ok = flush_partition (live, reader, key, key_values, removed, added, error);
    }
  qstore_replica_live_forget_work (live);
  return ok;
}

/* Rows as values */

static GVariant *
row_to_variant (GBytes *row)
{
  QStoreRowReader reader;
  gsize len;
  const guint8 *data = g_bytes_get_data (row, &len);
  g_autofree GVariant **children = NULL;
  guint n;

  /* Rows were encoded here: they decode. */
  if (!qstore_row_reader_init (&reader, data, len, &n, NULL))
    g_assert_not_reached ();
  children = g_new (GVariant *, MAX (n, 1));
  for (guint i = 0; i < n; i++)
    {
      QStoreValue value;

      if (!qstore_row_reader_next (&reader, &value, NULL))
        g_assert_not_reached ();
      children[i] = g_variant_new_variant (qstore_value_to_variant (&value));
    }
  return g_variant_new_array (G_VARIANT_TYPE_VARIANT, children, n);
}

GVariant *
qstore_replica_rows_to_variant (GPtrArray *rows,
                                guint      first,
                                guint      n)
{
  g_auto(GVariantBuilder) builder = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE ("aav"));

  for (guint i = first; i < first + n && i < rows->len; i++)
    g_variant_builder_add_value (&builder, row_to_variant (rows->pdata[i]));
  return g_variant_ref_sink (g_variant_builder_end (&builder));
}

GVariant *
qstore_replica_live_rows (QStoreReplicaLive *live)
{
  g_autoptr(GPtrArray) all = g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);
  GHashTableIter iter;
  GBytes *row;
  gpointer count;

  g_hash_table_iter_init (&iter, live->rows);
  while (g_hash_table_iter_next (&iter, (gpointer *) &row, &count))
    append_copies (all, row, GPOINTER_TO_UINT (count));
  return qstore_replica_rows_to_variant (all, 0, all->len);
}
