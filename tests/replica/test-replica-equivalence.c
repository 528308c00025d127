/* test-replica-equivalence.c: live queries stay what a fresh run gives
 *
 * 50 live queries (filters kept per key, GROUP BY kept per group, joins,
 * ORDER BY … LIMIT and aggregates computed again) follow random write
 * transactions: small and medium ones, large ones that stream, and
 * rollbacks of both. A consumer keeps each query as the documented
 * protocol says (its slices buffered until its worker's progress confirms
 * them; a fault drops them and registers the query again), and after
 * every progress each query it confirms holds what the query gives on a
 * snapshot at that transaction.
 *
 * QSTORE_EQUIVALENCE_TRANSACTIONS sets how many transactions run (the
 * default suite runs 60, `soak` 2,000); QSTORE_TEST_SEED the
 * random seed.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "replica-test-util.h"

#define N_QUERIES 50
#define CHUNK QSTORE_REPLICA_CHUNK_ROWS

enum { TABLE_A = 1 << 0, TABLE_B = 1 << 1, TABLE_C = 1 << 2 };

typedef struct
{
  const char *sql;      /* with one %d */
  guint       tables;
} Template;

static const Template templates[] = {
  { "SELECT id, v, s FROM a WHERE v BETWEEN %d AND %d + 150", TABLE_A },
  { "SELECT * FROM a WHERE g = %d", TABLE_A },
  { "SELECT g, count(*), sum(v), min(s) FROM a WHERE v > %d GROUP BY g", TABLE_A },
  { "SELECT a.id, b.id, b.w FROM a JOIN b ON b.a_id = a.id WHERE a.g = %d", TABLE_A | TABLE_B },
  { "SELECT id, v FROM a ORDER BY v DESC, id LIMIT %d", TABLE_A },
  { "SELECT k, n FROM c WHERE n > %d", TABLE_C },
  { "SELECT a_id, count(*), max(w) FROM b WHERE w >= %d GROUP BY a_id", TABLE_B },
  { "SELECT count(*), sum(w) FROM b WHERE w > %d", TABLE_B },
  { "SELECT k FROM c ORDER BY n, k LIMIT %d", TABLE_C },
  { "SELECT a.g, count(*) FROM a JOIN b ON b.a_id = a.id WHERE b.w > %d GROUP BY a.g",
    TABLE_A | TABLE_B },
};

typedef struct
{
  guint64  tx;
  char    *rows;         /* sorted text */
} Expected;

typedef struct
{
  guint64    tx;
  GPtrArray *removed;    /* char * */
  GPtrArray *added;
} Slice;

typedef struct
{
  guint64     id;
  char       *sql;
  guint       tables;
  guint       worker;
  GHashTable *view;      /* row text → count */
  GPtrArray  *pending;   /* Slice */
  gboolean    live;      /* hydrated, not faulted */
  gboolean    faulted;
  guint64     tx;
  GArray     *expected;  /* Expected, by tx */
} Consumer;

typedef struct
{
  TestReplica  t;
  GRand       *rand;
  Consumer     consumers[N_QUERIES];
  guint        n_checks;
  guint        n_faults;
  guint        n_streamed;
  guint        n_streamed_rollbacks;
  guint        n_rollbacks;
  guint        n_transactions;
} Fixture;

static void
slice_free (Slice *slice)
{
  g_ptr_array_unref (slice->removed);
  g_ptr_array_unref (slice->added);
  g_free (slice);
}

static void
expected_clear (Expected *expected)
{
  g_free (expected->rows);
}

static GPtrArray *
row_texts (GVariant *rows)
{
  GPtrArray *texts = g_ptr_array_new_with_free_func (g_free);

  for (gsize i = 0; i < g_variant_n_children (rows); i++)
    {
      g_autoptr(GVariant) row = g_variant_get_child_value (rows, i);

      g_ptr_array_add (texts, g_variant_print (row, FALSE));
    }
  return texts;
}

static char *
view_text (GHashTable *view)
{
  g_autoptr(GPtrArray) lines = g_ptr_array_new ();
  GString *text = g_string_new (NULL);
  GHashTableIter iter;
  gpointer row, count;

  g_hash_table_iter_init (&iter, view);
  while (g_hash_table_iter_next (&iter, &row, &count))
    for (guint i = 0; i < GPOINTER_TO_UINT (count); i++)
      g_ptr_array_add (lines, row);
  g_ptr_array_sort (lines, test_compare_lines);
  for (guint i = 0; i < lines->len; i++)
    g_string_append_printf (text, "[%s]\n", (char *) lines->pdata[i]);
  return g_string_free (text, FALSE);
}

static void
view_add (GHashTable *view,
          const char *row,
          gint        delta)
{
  gint count = GPOINTER_TO_INT (g_hash_table_lookup (view, row)) + delta;

  g_assert_cmpint (count, >=, 0);
  if (count == 0)
    g_hash_table_remove (view, row);
  else
    g_hash_table_replace (view, g_strdup (row), GINT_TO_POINTER (count));
}

/* test_fresh_rows() prints rows as tuples of boxed values: the consumer's
 * rows are printed as arrays of them; both end up as "[…]" lines. */
static char *
fresh_text (QStoreReplica *replica,
            const char    *sql)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(QStoreResult) result = qstore_replica_query (replica, sql, NULL, &error);
  g_autoptr(GVariant) rows = NULL;
  g_autoptr(GHashTable) view = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_autoptr(GPtrArray) texts = NULL;

  g_assert_no_error (error);
  rows = test_result_rows (result);
  texts = row_texts (rows);
  for (guint i = 0; i < texts->len; i++)
    view_add (view, texts->pdata[i], 1);
  return view_text (view);
}

/* What the consumer must hold once it is at @tx. */
static const char *
expected_at (Consumer *consumer,
             guint64   tx)
{
  const char *rows = NULL;

  for (guint i = 0; i < consumer->expected->len; i++)
    {
      Expected *e = &g_array_index (consumer->expected, Expected, i);

      if (e->tx <= tx)
        rows = e->rows;
    }
  g_assert_nonnull (rows);
  return rows;
}

/* What the consumer can no longer be asked for: the results before the
 * one it is at. */
static void
prune_expected (Consumer *consumer)
{
  guint keep = 0;

  for (guint i = 0; i < consumer->expected->len; i++)
    if (g_array_index (consumer->expected, Expected, i).tx <= consumer->tx)
      keep = i;
  if (keep > 0)
    g_array_remove_range (consumer->expected, 0, keep);
}

static void
note_expected (Fixture  *f,
               Consumer *consumer,
               guint64   tx)
{
  Expected e = { tx, fresh_text (f->t.replica, consumer->sql) };

  g_array_append_val (consumer->expected, e);
}

/* Events, as the consumer of the protocol takes them */

static Consumer *
consumer_of (Fixture *f,
             guint64  id)
{
  g_assert_cmpuint (id, <, N_QUERIES);
  return &f->consumers[id];
}

static void
on_hydrated (QStoreReplica *replica,
             guint64        query,
             guint64        tx,
             GVariant      *rows,
             Fixture       *f)
{
  Consumer *consumer = consumer_of (f, query);
  g_autoptr(GPtrArray) texts = row_texts (rows);
  g_autofree char *held = NULL;

  g_assert_false (consumer->live);
  g_hash_table_remove_all (consumer->view);
  g_ptr_array_set_size (consumer->pending, 0);
  for (guint i = 0; i < texts->len; i++)
    view_add (consumer->view, texts->pdata[i], 1);
  consumer->live = TRUE;
  consumer->tx = tx;
  held = view_text (consumer->view);
  g_assert_cmpstr (held, ==, expected_at (consumer, tx));
  prune_expected (consumer);
  f->n_checks++;
}

static void
on_changed (QStoreReplica *replica,
            guint64        query,
            guint64        tx,
            GVariant      *removed,
            GVariant      *added,
            Fixture       *f)
{
  Consumer *consumer = consumer_of (f, query);
  Slice *slice = g_new0 (Slice, 1);

  g_assert_true (consumer->live);
  g_assert_cmpuint (tx, >, consumer->tx);
  slice->tx = tx;
  slice->removed = row_texts (removed);
  slice->added = row_texts (added);
  g_ptr_array_add (consumer->pending, slice);
}

static void
on_progressed (QStoreReplica *replica,
               guint          worker,
               guint64        tx,
               Fixture       *f)
{
  for (guint q = 0; q < N_QUERIES; q++)
    {
      Consumer *consumer = &f->consumers[q];
      g_autofree char *held = NULL;
      guint kept = 0;

      if (!consumer->live || consumer->worker != worker)
        continue;
      g_assert_cmpuint (tx, >=, consumer->tx);
      for (guint i = 0; i < consumer->pending->len; i++)
        {
          Slice *slice = consumer->pending->pdata[i];

          if (slice->tx > tx)
            {
              consumer->pending->pdata[kept++] = slice;
              continue;
            }
          for (guint k = 0; k < slice->removed->len; k++)
            view_add (consumer->view, slice->removed->pdata[k], -1);
          for (guint k = 0; k < slice->added->len; k++)
            view_add (consumer->view, slice->added->pdata[k], 1);
          slice_free (slice);
        }
      consumer->pending->len = kept;
      consumer->tx = tx;

      held = view_text (consumer->view);
      if (g_strcmp0 (held, expected_at (consumer, tx)) != 0)
        g_error ("Live query %" G_GUINT64_FORMAT " (%s) at transaction %" G_GUINT64_FORMAT
                 " holds\n%s\nwhere a fresh run gives\n%s", consumer->id, consumer->sql, tx, held,
                 expected_at (consumer, tx));
      prune_expected (consumer);
      f->n_checks++;
    }
}

static void
on_faulted (QStoreReplica *replica,
            guint64        query,
            const char    *reason,
            Fixture       *f)
{
  Consumer *consumer = consumer_of (f, query);

  g_assert_true (consumer->live);
  consumer->live = FALSE;
  consumer->faulted = TRUE;
  g_ptr_array_set_size (consumer->pending, 0);
  f->n_faults++;
}

static void
register_consumer (Fixture  *f,
                   Consumer *consumer)
{
  g_autoptr(GError) error = NULL;

  /* The query's first rows are at the last commit. */
  note_expected (f, consumer, qstore_replica_get_committed_tx_id (f->t.replica));
  consumer->faulted = FALSE;
  g_assert_true (qstore_replica_register_query (f->t.replica, consumer->id, consumer->sql,
                                                &consumer->worker, &error));
  g_assert_no_error (error);
}

/* Writes */

static void
exec (QStoreReplicaTxn *txn,
      const char       *sql,
      GVariant         *params)
{
  g_autoptr(GError) error = NULL;

  qstore_replica_txn_exec (txn, sql, params, &error);
  g_assert_no_error (error);
}

/* One random row change; returns the table it wrote. */
static guint
random_change (Fixture          *f,
               QStoreReplicaTxn *txn,
               guint             tables)
{
  GRand *r = f->rand;
  guint which;

  do
    which = 1u << g_rand_int_range (r, 0, 3);
  while (!(tables & which));

  switch (which)
    {
    case TABLE_A:
      switch (g_rand_int_range (r, 0, 6))
        {
        case 0:
        case 1:
          exec (txn, "INSERT OR REPLACE INTO a VALUES (?, ?, ?, ?)",
                g_variant_new ("(xxxs)", (gint64) g_rand_int_range (r, 1, 1200),
                               (gint64) g_rand_int_range (r, 0, 20),
                               (gint64) g_rand_int_range (r, 0, 1000),
                               g_rand_boolean (r) ? "x" : "y"));
          break;
        case 2:
          exec (txn, "UPDATE a SET v = ? WHERE id = ?",
                g_variant_new ("(xx)", (gint64) g_rand_int_range (r, 0, 1000),
                               (gint64) g_rand_int_range (r, 1, 1200)));
          break;
        case 3:
          exec (txn, "UPDATE a SET g = ? WHERE id = ?",
                g_variant_new ("(xx)", (gint64) g_rand_int_range (r, 0, 20),
                               (gint64) g_rand_int_range (r, 1, 1200)));
          break;
        case 4:
          exec (txn, "DELETE FROM a WHERE id = ?",
                g_variant_new ("(x)", (gint64) g_rand_int_range (r, 1, 1200)));
          break;
        default:
          /* A key that moves */
          exec (txn, "UPDATE OR REPLACE a SET id = ? WHERE id = ?",
                g_variant_new ("(xx)", (gint64) g_rand_int_range (r, 1, 1200),
                               (gint64) g_rand_int_range (r, 1, 1200)));
          break;
        }
      break;

    case TABLE_B:
      switch (g_rand_int_range (r, 0, 3))
        {
        case 0:
          exec (txn, "INSERT OR REPLACE INTO b VALUES (?, ?, ?)",
                g_variant_new ("(xxx)", (gint64) g_rand_int_range (r, 1, 1000),
                               (gint64) g_rand_int_range (r, 1, 1200),
                               (gint64) g_rand_int_range (r, 0, 100)));
          break;
        case 1:
          exec (txn, "UPDATE b SET w = ?, a_id = ? WHERE id = ?",
                g_variant_new ("(xxx)", (gint64) g_rand_int_range (r, 0, 100),
                               (gint64) g_rand_int_range (r, 1, 1200),
                               (gint64) g_rand_int_range (r, 1, 1000)));
          break;
        default:
          exec (txn, "DELETE FROM b WHERE id = ?",
                g_variant_new ("(x)", (gint64) g_rand_int_range (r, 1, 1000)));
          break;
        }
      break;

    default:
      {
        g_autofree char *key = g_strdup_printf (g_rand_boolean (r) ? "key%d" : "KEY%d",
                                                g_rand_int_range (r, 0, 300));

        if (g_rand_int_range (r, 0, 4) == 0)
          exec (txn, "DELETE FROM c WHERE k = ?", g_variant_new ("(s)", key));
        else
          exec (txn, "INSERT OR REPLACE INTO c VALUES (?, ?)",
                g_variant_new ("(sx)", key, (gint64) g_rand_int_range (r, 0, 100)));
      }
      break;
    }
  return which;
}

static void
deliver (Fixture *f)
{
  while (g_main_context_iteration (NULL, FALSE))
    ;
}

static void
reregister_faulted (Fixture *f)
{
  for (guint q = 0; q < N_QUERIES; q++)
    if (f->consumers[q].faulted)
      register_consumer (f, &f->consumers[q]);
}

static void
one_transaction (Fixture *f)
{
  GRand *r = f->rand;
  g_autoptr(QStoreReplicaTxn) txn = test_txn_begin (f->t.replica);
  guint kind = g_rand_int_range (r, 0, 100);
  gboolean large = kind >= 82 && kind < 92;
  gboolean rollback = (kind >= 70 && kind < 82) || kind >= 96;
  guint n = large ? (guint) (2 * CHUNK + g_rand_int_range (r, 50, 600))
                  : kind < 60 ? (guint) g_rand_int_range (r, 1, 6) : (guint) g_rand_int_range (r, 20, 60);
  guint written = 0;
  guint64 tx;

  if (kind >= 96)
    {
      large = TRUE;
      n = (guint) (2 * CHUNK + g_rand_int_range (r, 50, 300));
    }
  for (guint i = 0; i < n; i++)
    written |= random_change (f, txn, large ? TABLE_A | TABLE_B : TABLE_A | TABLE_B | TABLE_C);

  /* A large one has streamed (some statements change no row). */
  large = qstore_replica_view_is_speculative (f->t.replica);
  if (large)
    f->n_streamed++;
  /* Events flow while the transaction is open: provisional slices. */
  if (g_rand_int_range (r, 0, 4) == 0)
    deliver (f);

  if (rollback)
    {
      qstore_replica_txn_rollback (txn);
      f->n_rollbacks++;
      if (large)
        f->n_streamed_rollbacks++;
    }
  else
    {
      tx = test_txn_commit (txn);
      for (guint q = 0; q < N_QUERIES; q++)
        if (f->consumers[q].tables & written && !f->consumers[q].faulted)
          note_expected (f, &f->consumers[q], tx);
    }
  f->n_transactions++;

  if (g_rand_int_range (r, 0, 3) == 0)
    deliver (f);
  reregister_faulted (f);
}

static void
test_equivalence (Fixture       *f,
                  gconstpointer  data)
{
  const char *env = g_getenv ("QSTORE_EQUIVALENCE_TRANSACTIONS");
  guint n = env != NULL ? (guint) g_ascii_strtoull (env, NULL, 10) : 60;
  g_autoptr(QStoreReplicaTxn) seed = NULL;

  test_ddl (f->t.replica,
            "CREATE TABLE a (id INTEGER PRIMARY KEY, g INTEGER, v INTEGER, s TEXT);"
            "CREATE INDEX a_g ON a (g);"
            "CREATE TABLE b (id INTEGER PRIMARY KEY, a_id INTEGER, w INTEGER);"
            "CREATE INDEX b_a ON b (a_id);"
            "CREATE TABLE c (k TEXT PRIMARY KEY COLLATE NOCASE, n INTEGER)");
  seed = test_txn_begin (f->t.replica);
  for (gint64 i = 1; i <= 800; i++)
    {
      exec (seed, "INSERT INTO a VALUES (?, ?, ?, ?)",
            g_variant_new ("(xxxs)", i, i % 20, (i * 37) % 1000, i % 3 ? "x" : "y"));
      exec (seed, "INSERT INTO b VALUES (?, ?, ?)", g_variant_new ("(xxx)", i, (i * 7) % 900 + 1, i % 100));
    }
  for (gint64 i = 0; i < 200; i++)
    {
      g_autofree char *key = g_strdup_printf ("key%" G_GINT64_FORMAT, i);

      exec (seed, "INSERT INTO c VALUES (?, ?)", g_variant_new ("(sx)", key, i % 50));
    }
  test_txn_commit (seed);

  for (guint q = 0; q < N_QUERIES; q++)
    {
      Consumer *consumer = &f->consumers[q];
      const Template *template = &templates[q % G_N_ELEMENTS (templates)];
      int param = (int) (q / G_N_ELEMENTS (templates)) * 7 + 2;

      consumer->id = q;
      if (strstr (template->sql, "LIMIT") != NULL)
        param = 3 + (int) q;
      else if (strstr (template->sql, "BETWEEN") != NULL || strstr (template->sql, "v >") != NULL)
        param = (int) q * 19;
      {
        g_auto(GStrv) parts = g_strsplit (template->sql, "%d", -1);
        g_autofree char *number = g_strdup_printf ("%d", param);

        consumer->sql = g_strjoinv (number, parts);
      }
      consumer->tables = template->tables;
      register_consumer (f, consumer);
    }

  for (guint i = 0; i < n; i++)
    one_transaction (f);
  test_drain (f->t.replica);
  reregister_faulted (f);
  test_drain (f->t.replica);

  g_test_message ("%u transactions (%u streamed, %u rolled back of which %u streamed), "
                  "%u checks, %u faults", f->n_transactions, f->n_streamed, f->n_rollbacks,
                  f->n_streamed_rollbacks, f->n_checks, f->n_faults);
  g_assert_cmpuint (f->n_streamed, >, 0);
  g_assert_cmpuint (f->n_streamed_rollbacks, >, 0);
  /* Every query was checked after the last transaction. */
  for (guint q = 0; q < N_QUERIES; q++)
    {
      Consumer *consumer = &f->consumers[q];
      g_autofree char *held = view_text (consumer->view);
      g_autofree char *fresh = fresh_text (f->t.replica, consumer->sql);

      g_assert_true (consumer->live);
      g_assert_cmpuint (consumer->pending->len, ==, 0);
      g_assert_cmpstr (held, ==, fresh);
    }
  g_assert_cmpuint (f->n_checks, >, N_QUERIES * f->n_transactions / 4);
}

static void
set_up (Fixture       *f,
        gconstpointer  data)
{
  const char *seed = g_getenv ("QSTORE_TEST_SEED");
  guint32 value = seed != NULL ? (guint32) g_ascii_strtoull (seed, NULL, 10) : 20240615;

  g_test_message ("seed %u (QSTORE_TEST_SEED)", value);
  f->rand = g_rand_new_with_seed (value);
  test_replica_set_up_with (&f->t, 2, 64);
  for (guint q = 0; q < N_QUERIES; q++)
    {
      f->consumers[q].view = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
      f->consumers[q].pending = g_ptr_array_new_with_free_func ((GDestroyNotify) slice_free);
      f->consumers[q].expected = g_array_new (FALSE, TRUE, sizeof (Expected));
      g_array_set_clear_func (f->consumers[q].expected, (GDestroyNotify) expected_clear);
    }
  g_signal_connect (f->t.replica, "hydrated", G_CALLBACK (on_hydrated), f);
  g_signal_connect (f->t.replica, "changed", G_CALLBACK (on_changed), f);
  g_signal_connect (f->t.replica, "progressed", G_CALLBACK (on_progressed), f);
  g_signal_connect (f->t.replica, "faulted", G_CALLBACK (on_faulted), f);
}

static void
tear_down (Fixture       *f,
           gconstpointer  data)
{
  g_signal_handlers_disconnect_by_data (f->t.replica, f);
  test_replica_tear_down (&f->t);
  for (guint q = 0; q < N_QUERIES; q++)
    {
      g_free (f->consumers[q].sql);
      g_hash_table_unref (f->consumers[q].view);
      g_ptr_array_unref (f->consumers[q].pending);
      g_array_unref (f->consumers[q].expected);
    }
  g_rand_free (f->rand);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);
  g_test_add ("/replica/equivalence", Fixture, NULL, set_up, test_equivalence, tear_down);
  return g_test_run ();
}
