/* replica-test-util.h: what the replica tests share
 *
 * A fixture (a replica of the provider under test in a directory of its
 * own), a recorder of every event the replica emits, and a consumer that
 * keeps each live query's rows as the documented protocol says: slices
 * buffered until their worker's progress confirms them.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "qstore-test-util.h"
#include "qstore-replica-private.h"

G_BEGIN_DECLS

/* Events */

typedef struct
{
  const char *kind;        /* "hydrated", "changed", "progressed", "faulted" */
  guint64     query;
  guint64     tx;
  guint       worker;
  GVariant   *rows;        /* hydrated */
  GVariant   *removed;     /* changed */
  GVariant   *added;
  char       *reason;      /* faulted */
} TestEvent;

static inline void
test_event_free (TestEvent *event)
{
  g_clear_pointer (&event->rows, g_variant_unref);
  g_clear_pointer (&event->removed, g_variant_unref);
  g_clear_pointer (&event->added, g_variant_unref);
  g_free (event->reason);
  g_free (event);
}

typedef struct
{
  QStoreReplica *replica;
  GPtrArray     *events;   /* TestEvent */
} TestRecorder;

static inline TestEvent *
test_recorder_add (TestRecorder *rec,
                   const char   *kind)
{
  TestEvent *event = g_new0 (TestEvent, 1);

  event->kind = kind;
  g_ptr_array_add (rec->events, event);
  return event;
}

static void
test_on_hydrated (QStoreReplica *replica,
                  guint64        query,
                  guint64        tx,
                  GVariant      *rows,
                  TestRecorder  *rec)
{
  TestEvent *event = test_recorder_add (rec, "hydrated");

  event->query = query;
  event->tx = tx;
  event->rows = g_variant_ref (rows);
}

static void
test_on_changed (QStoreReplica *replica,
                 guint64        query,
                 guint64        tx,
                 GVariant      *removed,
                 GVariant      *added,
                 TestRecorder  *rec)
{
  TestEvent *event = test_recorder_add (rec, "changed");

  event->query = query;
  event->tx = tx;
  event->removed = g_variant_ref (removed);
  event->added = g_variant_ref (added);
}

static void
test_on_progressed (QStoreReplica *replica,
                    guint          worker,
                    guint64        tx,
                    TestRecorder  *rec)
{
  TestEvent *event = test_recorder_add (rec, "progressed");

  event->worker = worker;
  event->tx = tx;
}

static void
test_on_faulted (QStoreReplica *replica,
                 guint64        query,
                 const char    *reason,
                 TestRecorder  *rec)
{
  TestEvent *event = test_recorder_add (rec, "faulted");

  event->query = query;
  event->reason = g_strdup (reason);
}

static inline void
test_recorder_init (TestRecorder  *rec,
                    QStoreReplica *replica)
{
  rec->replica = replica;
  rec->events = g_ptr_array_new_with_free_func ((GDestroyNotify) test_event_free);
  g_signal_connect (replica, "hydrated", G_CALLBACK (test_on_hydrated), rec);
  g_signal_connect (replica, "changed", G_CALLBACK (test_on_changed), rec);
  g_signal_connect (replica, "progressed", G_CALLBACK (test_on_progressed), rec);
  g_signal_connect (replica, "faulted", G_CALLBACK (test_on_faulted), rec);
}

static inline void
test_recorder_clear (TestRecorder *rec)
{
  if (rec->replica != NULL)
    g_signal_handlers_disconnect_by_data (rec->replica, rec);
  g_clear_pointer (&rec->events, g_ptr_array_unref);
}

/* Waits for the workers and delivers what they emitted. */
static inline void
test_drain (QStoreReplica *replica)
{
  g_autoptr(GError) error = NULL;

  qstore_replica_sync (replica, &error);
  g_assert_no_error (error);
  while (g_main_context_iteration (NULL, FALSE))
    ;
}

static inline guint
test_recorder_count (TestRecorder *rec,
                     const char   *kind,
                     guint64       query)
{
  guint n = 0;

  for (guint i = 0; i < rec->events->len; i++)
    {
      TestEvent *event = rec->events->pdata[i];

      if (g_str_equal (event->kind, kind) &&
          (g_str_equal (kind, "progressed") || event->query == query))
        n++;
    }
  return n;
}

/* The last event of @kind about @query (any query for progressed). */
static inline TestEvent *
test_recorder_last (TestRecorder *rec,
                    const char   *kind,
                    guint64       query)
{
  for (guint i = rec->events->len; i > 0; i--)
    {
      TestEvent *event = rec->events->pdata[i - 1];

      if (g_str_equal (event->kind, kind) &&
          (g_str_equal (kind, "progressed") || event->query == query))
        return event;
    }
  return NULL;
}

static inline int
test_compare_lines (gconstpointer a,
                    gconstpointer b)
{
  return strcmp (*(const char * const *) a, *(const char * const *) b);
}

/* Rows as text, sorted: what two sets of rows are compared by. */
static inline char *
test_rows_text (GVariant *rows)
{
  g_autoptr(GPtrArray) lines = g_ptr_array_new_with_free_func (g_free);
  GString *text = g_string_new (NULL);

  for (gsize i = 0; i < g_variant_n_children (rows); i++)
    {
      g_autoptr(GVariant) row = g_variant_get_child_value (rows, i);

      g_ptr_array_add (lines, g_variant_print (row, FALSE));
    }
  g_ptr_array_sort (lines, test_compare_lines);
  for (guint i = 0; i < lines->len; i++)
    g_string_append_printf (text, "%s\n", (char *) lines->pdata[i]);
  return g_string_free (text, FALSE);
}

/* A query result's rows, as the replica gives rows (aav). */
static inline GVariant *
test_result_rows (QStoreResult *result)
{
  GVariantBuilder builder;

  g_variant_builder_init (&builder, G_VARIANT_TYPE ("aav"));
  for (guint r = 0; r < qstore_result_get_n_rows (result); r++)
    {
      g_variant_builder_open (&builder, G_VARIANT_TYPE ("av"));
      for (guint c = 0; c < qstore_result_get_n_columns (result); c++)
        g_variant_builder_add (&builder, "v", qstore_result_get_value (result, r, c));
      g_variant_builder_close (&builder);
    }
  return g_variant_ref_sink (g_variant_builder_end (&builder));
}

/* What @sql gives on the last committed state, as sorted text. */
static inline char *
test_fresh_rows (QStoreReplica *replica,
                 const char    *sql)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(QStoreResult) result = qstore_replica_query (replica, sql, NULL, &error);
  g_autoptr(GVariant) rows = NULL;

  g_assert_no_error (error);
  rows = test_result_rows (result);
  return test_rows_text (rows);
}

/* The fixture */

typedef struct
{
  char          *dir;
  char          *uri;
  QStoreReplica *replica;
  TestRecorder   rec;
} TestReplica;

static inline QStoreReplica *
test_open_replica (const char *uri,
                   guint       n_workers,
                   guint       queue_length)
{
  g_autoptr(GError) error = NULL;
  QStoreReplica *replica = qstore_replica_open (uri, n_workers, queue_length, &error);

  g_assert_no_error (error);
  g_assert_nonnull (replica);
  return replica;
}

static inline void
test_replica_set_up_with (TestReplica *t,
                          guint        n_workers,
                          guint        queue_length)
{
  t->dir = test_make_tmp_dir ("qstore-replica-XXXXXX");
  t->uri = test_provider_uri (t->dir, "store");
  t->replica = test_open_replica (t->uri, n_workers, queue_length);
  test_recorder_init (&t->rec, t->replica);
}

static inline void
test_replica_tear_down (TestReplica *t)
{
  g_autoptr(GError) error = NULL;

  test_recorder_clear (&t->rec);
  if (t->replica != NULL)
    {
      qstore_replica_close (t->replica, &error);
      g_assert_no_error (error);
      g_clear_object (&t->replica);
    }
  test_remove_tree (t->dir);
  g_free (t->dir);
  g_free (t->uri);
}

static inline void
test_ddl (QStoreReplica *replica,
          const char    *sql)
{
  g_autoptr(GError) error = NULL;

  qstore_replica_exec_ddl (replica, sql, &error);
  g_assert_no_error (error);
}

static inline void
test_register (QStoreReplica *replica,
               guint64        id,
               const char    *sql)
{
  g_autoptr(GError) error = NULL;

  qstore_replica_register_query (replica, id, sql, NULL, &error);
  g_assert_no_error (error);
}

static inline void
test_txn_exec (QStoreReplicaTxn *txn,
           const char       *sql,
           GVariant         *params)
{
  g_autoptr(GError) error = NULL;

  qstore_replica_txn_exec (txn, sql, params, &error);
  g_assert_no_error (error);
}

static inline guint64
test_txn_commit (QStoreReplicaTxn *txn)
{
  g_autoptr(GError) error = NULL;
  guint64 tx = qstore_replica_txn_commit (txn, &error);

  g_assert_no_error (error);
  return tx;
}

static inline QStoreReplicaTxn *
test_txn_begin (QStoreReplica *replica)
{
  g_autoptr(GError) error = NULL;
  QStoreReplicaTxn *txn = qstore_replica_begin_write (replica, &error);

  g_assert_no_error (error);
  return txn;
}

/* One write transaction of @sql (no parameters). */
static inline guint64
test_write (QStoreReplica *replica,
            const char    *sql)
{
  g_autoptr(QStoreReplicaTxn) txn = test_txn_begin (replica);

  test_txn_exec (txn, sql, NULL);
  return test_txn_commit (txn);
}

static inline guint
test_n_rows (GVariant *rows)
{
  return (guint) g_variant_n_children (rows);
}

G_END_DECLS
