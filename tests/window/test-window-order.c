/* test-window-order.c: what delivery order does and does not change
 *
 * Single-row upserts (with re-deliveries) give the same view in any
 * order: checked over random permutations (QSTORE_WINDOW_PERMUTATIONS, 200
 * on memory and 20 on the persistent providers by default). Where the
 * result depends on the order, one scripted test per case pins what each
 * order gives. Last, the single-upsert path and the complete path are run
 * side by side over the same deliveries and must agree on every outcome,
 * refusal and stored byte.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "window-test-util.h"

#define N_KEYS    50
#define N_EVENTS  100
#define N_REPEATS 20

static guint
env_count (const char *name,
           guint       fallback)
{
  const char *value = g_getenv (name);

  return value != NULL ? (guint) g_ascii_strtoull (value, NULL, 10) : fallback;
}

/* The stream: event i has SUID 1000 + i (random part i % 7, so ticks
 * alone do not decide), a random key and value; then some events again. */
static GPtrArray *
make_stream (GRand *rand)
{
  GPtrArray *stream = g_ptr_array_new_with_free_func (g_object_unref);

  for (guint i = 0; i < N_EVENTS; i++)
    {
      g_autofree char *id = g_strdup_printf ("ev%03u", i);
      g_autofree char *key = g_strdup_printf ("key%02d", g_rand_int_range (rand, 0, N_KEYS));
      g_autofree char *value = g_strdup_printf ("{\"event\": %u, \"v\": %d}", i,
                                                g_rand_int_range (rand, 0, 1000));
      const char *suid = window_suid_r (1000 + i, i % 7);
      QStoreUnsafeEvent *event = qstore_unsafe_event_new (id, suid);

      qstore_unsafe_event_set_updated_at (event, i);
      qstore_unsafe_event_add_upsert (event, key, value, i, suid);
      g_ptr_array_add (stream, event);
    }
  for (guint i = 0; i < N_REPEATS; i++)
    g_ptr_array_add (stream, g_object_ref (g_ptr_array_index (stream,
                                                              g_rand_int_range (rand, 0, N_EVENTS))));
  return stream;
}

static void
shuffle (GPtrArray *array,
         GRand     *rand)
{
  for (guint i = array->len; i > 1; i--)
    {
      guint j = g_rand_int_range (rand, 0, i);
      gpointer t = array->pdata[i - 1];

      array->pdata[i - 1] = array->pdata[j];
      array->pdata[j] = t;
    }
}

/* The view after delivering @stream in its order to a new store: the
 * whole of it, and two pages. */
static char *
deliver (const char *dir,
         guint       run,
         GPtrArray  *stream)
{
  g_autofree char *leaf = g_strdup_printf ("run%u", run);
  g_autofree char *uri = test_provider_uri (dir, leaf);
  g_autoptr(QStoreDatabase) db = test_open_database (uri, QSTORE_OPEN_NONE);
  g_autoptr(QStoreUnsafeWindow) w = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *all = NULL;
  g_autofree char *middle = NULL;
  g_autofree char *last = NULL;

  w = qstore_unsafe_window_new (db, WINDOW_NAME, &error);
  g_assert_no_error (error);
  for (guint i = 0; i < stream->len; i++)
    {
      QStoreUnsafeOutcome outcome;
      gboolean duplicate;

      if (!qstore_unsafe_window_apply (w, g_ptr_array_index (stream, i), &outcome, &duplicate,
                                       &error))
        g_error ("delivery %u: %s", i, error->message);
      g_assert_true (outcome == QSTORE_UNSAFE_OUTCOME_APPLIED ||
                     outcome == QSTORE_UNSAFE_OUTCOME_OLDER ||
                     (outcome == QSTORE_UNSAFE_OUTCOME_NO_CHANGE && duplicate));
    }

  all = window_page (w, 0);
  middle = window_page_full (w, 0, 7, 11, FALSE, &error);
  g_assert_no_error (error);
  last = window_page_full (w, 0, 5, 0, TRUE, &error);
  g_assert_no_error (error);
  g_clear_object (&w);
  test_close_database (&db);
  return g_strconcat (all, "--\n", middle, "--\n", last, NULL);
}

static void
test_permutations (void)
{
  g_autoptr(GRand) rand = g_rand_new_with_seed (g_test_rand_int ());
  g_autoptr(GPtrArray) stream = make_stream (rand);
  g_autoptr(GPtrArray) ordered = NULL;
  g_autofree char *dir = window_test_make_dir ("qstore-window-order-XXXXXX");
  g_autofree char *expected = NULL;
  guint n = env_count ("QSTORE_WINDOW_PERMUTATIONS", test_provider_persistent () ? 20 : 200);

  /* SUID order: each event once, in the order of its id. */
  ordered = g_ptr_array_new_with_free_func (g_object_unref);
  for (guint i = 0; i < N_EVENTS; i++)
    g_ptr_array_add (ordered, g_object_ref (g_ptr_array_index (stream, i)));
  expected = deliver (dir, 0, ordered);
  g_assert_nonnull (strstr (expected, "total "));

  for (guint run = 1; run <= n; run++)
    {
      g_autofree char *got = NULL;

      shuffle (stream, rand);
      got = deliver (dir, run, stream);
      if (g_strcmp0 (got, expected) != 0)
        g_error ("permutation %u gives another view:\n%s\ninstead of\n%s", run, got, expected);
    }
  test_remove_tree (dir);
}

/* Scripted orders */

static void
assert_page (WindowFixture *f,
             const char    *expected)
{
  g_autofree char *page = window_page (f->w, 0);

  g_assert_cmpstr (page, ==, expected);
}

/* An expected row version holds in one order and not in the other. */
static void
test_order_row_version (WindowFixture *f,
                        gconstpointer  data)
{
  g_autoptr(QStoreUnsafeEvent) c = window_upsert_event ("c", 3, "a", "3");

  qstore_unsafe_event_set_expected_row_version (c, 2);

  window_put (f->w, "a", 1, "a", "1");
  window_put (f->w, "b", 2, "a", "2");
  window_apply_expect (f->w, c, QSTORE_UNSAFE_OUTCOME_APPLIED, FALSE);
  assert_page (f, "a=3 v3 000000000000000000300000000000 unsafe\ntotal 1\n");

  window_fixture_recreate (f);
  window_put (f->w, "a", 1, "a", "1");
  window_assert_refused (f->w, c, QSTORE_UNSAFE_WINDOW_ERROR_ROW_CAS_MISMATCH);
  window_put (f->w, "b", 2, "a", "2");
  assert_page (f, "a=2 v2 000000000000000000200000000000 unsafe\ntotal 1\n");
  /* The retry the error invites applies. */
  window_apply_expect (f->w, c, QSTORE_UNSAFE_OUTCOME_APPLIED, FALSE);
}

/* Two SUIDs for one event id: the first to arrive wins. */
static void
test_order_two_suids (WindowFixture *f,
                      gconstpointer  data)
{
  g_autoptr(QStoreUnsafeEvent) five = window_upsert_event ("e", 5, "a", "\"five\"");
  g_autoptr(QStoreUnsafeEvent) seven = window_upsert_event ("e", 7, "a", "\"seven\"");

  window_apply_expect (f->w, five, QSTORE_UNSAFE_OUTCOME_APPLIED, FALSE);
  window_assert_refused (f->w, seven, QSTORE_UNSAFE_WINDOW_ERROR_SUID_CONTRADICTION);
  assert_page (f, "a=\"five\" v5 000000000000000000500000000000 unsafe\ntotal 1\n");

  window_fixture_recreate (f);
  window_apply_expect (f->w, seven, QSTORE_UNSAFE_OUTCOME_APPLIED, FALSE);
  window_assert_refused (f->w, five, QSTORE_UNSAFE_WINDOW_ERROR_SUID_CONTRADICTION);
  assert_page (f, "a=\"seven\" v7 000000000000000000700000000000 unsafe\ntotal 1\n");
}

static void
observe_safe (WindowFixture *f,
              const char    *event_id,
              guint64        n)
{
  g_autoptr(GError) error = NULL;

  g_assert_true (qstore_unsafe_window_observe_safe_receipt (f->w, 0, event_id, S (n), &error));
  g_assert_no_error (error);
}

/* A safe head that moves past a late event refuses it. */
static void
test_order_safe_head (WindowFixture *f,
                      gconstpointer  data)
{
  g_autoptr(QStoreUnsafeEvent) late = window_upsert_event ("e5", 5, "b", "5");

  window_put (f->w, "e7", 7, "a", "7");
  observe_safe (f, "e7", 7);
  window_assert_refused (f->w, late, QSTORE_UNSAFE_WINDOW_ERROR_SAFE_AHEAD);
  assert_page (f, "a=7 v7 000000000000000000700000000000 unsafe\ntotal 1\n");

  window_fixture_recreate (f);
  window_apply_expect (f->w, late, QSTORE_UNSAFE_OUTCOME_APPLIED, FALSE);
  window_put (f->w, "e7", 7, "a", "7");
  observe_safe (f, "e7", 7);
  assert_page (f,
               "b=5 v5 000000000000000000500000000000 unsafe\n"
               "a=7 v7 000000000000000000700000000000 unsafe\n"
               "total 2\n");
}

/* A first arrival behind the frontier fails reads closed; the same
 * event arriving before the safe head moved does not. */
static void
test_order_late_arrival (WindowFixture *f,
                         gconstpointer  data)
{
  g_autoptr(QStoreUnsafeEvent) late = window_upsert_event ("e5", 5, "b", "5");
  g_autoptr(GError) error = NULL;
  g_autofree char *page = NULL;

  qstore_unsafe_event_set_record_arrival (late, TRUE);
  window_put (f->w, "e7", 7, "a", "7");
  observe_safe (f, "e7", 7);
  window_assert_refused (f->w, late, QSTORE_UNSAFE_WINDOW_ERROR_SAFE_AHEAD);
  page = window_page_full (f->w, 0, 10, 0, FALSE, &error);
  g_assert_null (page);
  g_assert_error (error, QSTORE_UNSAFE_WINDOW_ERROR, QSTORE_UNSAFE_WINDOW_ERROR_BEHIND_FRONTIER);

  window_fixture_recreate (f);
  window_apply_expect (f->w, late, QSTORE_UNSAFE_OUTCOME_APPLIED, FALSE);
  window_put (f->w, "e7", 7, "a", "7");
  observe_safe (f, "e7", 7);
  /* Re-delivered now, it is a duplicate, not a late first arrival. */
  window_apply_expect (f->w, late, QSTORE_UNSAFE_OUTCOME_NO_CHANGE, TRUE);
  assert_page (f,
               "b=5 v5 000000000000000000500000000000 unsafe\n"
               "a=7 v7 000000000000000000700000000000 unsafe\n"
               "total 2\n");
}

/* A multi-row event is older as a whole when any of its rows is newer. */
static void
test_order_multi_row_older (WindowFixture *f,
                            gconstpointer  data)
{
  g_autoptr(QStoreUnsafeEvent) m = window_event ("m", 5);

  qstore_unsafe_event_add_upsert (m, "k1", "\"m\"", 5, S (5));
  qstore_unsafe_event_add_upsert (m, "k2", "\"m\"", 5, S (5));

  window_put (f->w, "n", 7, "k1", "\"n\"");
  window_apply_expect (f->w, m, QSTORE_UNSAFE_OUTCOME_OLDER, FALSE);
  assert_page (f, "k1=\"n\" v7 000000000000000000700000000000 unsafe\ntotal 1\n");

  window_fixture_recreate (f);
  window_apply_expect (f->w, m, QSTORE_UNSAFE_OUTCOME_APPLIED, FALSE);
  window_put (f->w, "n", 7, "k1", "\"n\"");
  assert_page (f,
               "k2=\"m\" v5 000000000000000000500000000000 unsafe\n"
               "k1=\"n\" v7 000000000000000000700000000000 unsafe\n"
               "total 2\n");
}

/* A delete leaves no tombstone: an older upsert arriving after it
 * brings the key back; arriving before it, it is deleted. */
static void
test_order_delete_then_older (WindowFixture *f,
                              gconstpointer  data)
{
  g_autoptr(QStoreUnsafeEvent) d = window_event ("d", 7);
  g_autoptr(QStoreUnsafeEvent) u = window_upsert_event ("u", 5, "k", "\"u\"");

  qstore_unsafe_event_add_delete (d, "k");

  window_put (f->w, "p", 3, "k", "\"p\"");
  window_apply_expect (f->w, d, QSTORE_UNSAFE_OUTCOME_APPLIED, FALSE);
  window_apply_expect (f->w, u, QSTORE_UNSAFE_OUTCOME_APPLIED, FALSE);
  assert_page (f, "k=\"u\" v5 000000000000000000500000000000 unsafe\ntotal 1\n");

  window_fixture_recreate (f);
  window_put (f->w, "p", 3, "k", "\"p\"");
  window_apply_expect (f->w, u, QSTORE_UNSAFE_OUTCOME_APPLIED, FALSE);
  window_apply_expect (f->w, d, QSTORE_UNSAFE_OUTCOME_APPLIED, FALSE);
  assert_page (f, "total 0\n");
}

/* Patches: in SUID order both apply; a later patch first makes the
 * earlier one older; a patch before its row finds none. */
static void
test_order_patches (WindowFixture *f,
                    gconstpointer  data)
{
  g_autoptr(QStoreUnsafeEvent) p1 = window_event ("p1", 5);
  g_autoptr(QStoreUnsafeEvent) p2 = window_event ("p2", 6);

  qstore_unsafe_event_add_patch (p1, "k", "{\"a\": 1}", 5, S (5));
  qstore_unsafe_event_add_patch (p2, "k", "{\"b\": 2}", 6, S (6));

  window_put (f->w, "base", 1, "k", "{\"x\": 0}");
  window_apply_expect (f->w, p1, QSTORE_UNSAFE_OUTCOME_APPLIED, FALSE);
  window_apply_expect (f->w, p2, QSTORE_UNSAFE_OUTCOME_APPLIED, FALSE);
  assert_page (f, "k={\"x\":0,\"a\":1,\"b\":2} v6 000000000000000000600000000000 unsafe\ntotal 1\n");

  window_fixture_recreate (f);
  window_put (f->w, "base", 1, "k", "{\"x\": 0}");
  window_apply_expect (f->w, p2, QSTORE_UNSAFE_OUTCOME_APPLIED, FALSE);
  window_apply_expect (f->w, p1, QSTORE_UNSAFE_OUTCOME_OLDER, FALSE);
  assert_page (f, "k={\"x\":0,\"b\":2} v6 000000000000000000600000000000 unsafe\ntotal 1\n");

  window_fixture_recreate (f);
  window_apply_expect (f->w, p1, QSTORE_UNSAFE_OUTCOME_PATCH_NOT_FOUND, FALSE);
  window_put (f->w, "base", 1, "k", "{\"x\": 0}");
  window_apply_expect (f->w, p2, QSTORE_UNSAFE_OUTCOME_APPLIED, FALSE);
  assert_page (f, "k={\"x\":0,\"b\":2} v6 000000000000000000600000000000 unsafe\ntotal 1\n");
}

/* The two paths side by side */

typedef enum
{
  STEP_APPLY,
  STEP_OBSERVE_SAFE,
} StepKind;

typedef struct
{
  StepKind    kind;
  const char *id;
  guint64     n;          /* the event's SUID */
  const char *key;        /* an upsert of key = value, from the event's SUID */
  const char *value;
  guint64     source;     /* another source SUID for the upsert, or 0 */
  gint64      expected;   /* an expected row version, or -1 */
  guint64     safe_head;  /* a delivered safe head, or 0 */
  gboolean    arrival;
  gboolean    index;      /* an index entry for the row */
  gboolean    tombstone;  /* a tombstone instead of the upsert */
} Step;

#define UPSERT(id, n, key, value) { STEP_APPLY, id, n, key, value, 0, -1, 0, FALSE, FALSE, FALSE }

static const Step steps[] = {
  UPSERT ("fresh", 10, "a", "1"),
  UPSERT ("fresh", 10, "a", "1"),                        /* duplicate */
  UPSERT ("fresh", 11, "a", "1"),                        /* another SUID */
  UPSERT ("old", 9, "a", "0"),                           /* older */
  UPSERT ("same", 10, "a", "1"),                         /* same SUID, same value */
  UPSERT ("clash", 10, "a", "2"),                        /* same SUID, another value */
  { STEP_APPLY, "cas-ok", 12, "a", "3", 0, 10, 0, FALSE, FALSE, FALSE },
  { STEP_APPLY, "cas-bad", 13, "a", "4", 0, 10, 0, FALSE, FALSE, FALSE },
  { STEP_APPLY, "cas-new", 13, "b", "4", 0, 99, 0, FALSE, TRUE, FALSE },
  { STEP_APPLY, "behind-delivered", 14, "c", "5", 0, -1, 14, FALSE, FALSE, FALSE },
  { STEP_APPLY, "ahead-delivered", 15, "c", "5", 0, -1, 14, TRUE, TRUE, FALSE },
  { STEP_APPLY, "other-source", 16, "c", "6", 15, -1, 0, FALSE, FALSE, FALSE },
  { STEP_APPLY, "tomb", 17, "d", NULL, 0, -1, 0, FALSE, FALSE, TRUE },
  UPSERT ("over-tomb", 18, "d", "7"),
  UPSERT ("under-tomb", 16, "d", "7"),
  { STEP_OBSERVE_SAFE, "over-tomb", 18, NULL, NULL, 0, -1, 0, FALSE, FALSE, FALSE },
  UPSERT ("fenced", 17, "e", "8"),                       /* the stored safe head */
  { STEP_APPLY, "late-arrival", 16, "f", "9", 0, -1, 0, TRUE, FALSE, FALSE },
  UPSERT ("after", 19, "e", "8"),
  { STEP_APPLY, "after", 19, "e", "8", 0, -1, 0, TRUE, FALSE, FALSE },
};

/* What a step did, as text. */
static char *
run_step (QStoreUnsafeWindow *w,
          const Step         *step)
{
  g_autoptr(GError) error = NULL;
  QStoreUnsafeOutcome outcome = 0;
  gboolean duplicate = FALSE;
  gboolean ok;

  if (step->kind == STEP_OBSERVE_SAFE)
    {
      ok = qstore_unsafe_window_observe_safe_receipt (w, 0, step->id, S (step->n), &error);
    }
  else
    {
      g_autoptr(QStoreUnsafeEvent) event = window_event (step->id, step->n);
      const char *source = S (step->source != 0 ? step->source : step->n);

      if (step->tombstone)
        qstore_unsafe_event_add_tombstone (event, step->key, step->n, source);
      else
        qstore_unsafe_event_add_upsert (event, step->key, step->value, step->n, source);
      if (step->expected >= 0)
        qstore_unsafe_event_set_expected_row_version (event, step->expected);
      if (step->safe_head != 0)
        qstore_unsafe_event_set_safe_head (event, S (step->safe_head));
      if (step->index)
        qstore_unsafe_event_add_index_entry (event, "i", step->key, g_variant_new_int64 (step->n));
      qstore_unsafe_event_set_record_arrival (event, step->arrival);
      ok = qstore_unsafe_window_apply (w, event, &outcome, &duplicate, &error);
    }

  if (!ok)
    return g_strdup_printf ("%s: error %s %d", step->id, g_quark_to_string (error->domain),
                            error->code);
  return g_strdup_printf ("%s: ok %d %d", step->id, outcome, duplicate);
}

static void
test_paths_agree (WindowFixture *f,
                  gconstpointer  data)
{
  g_autoptr(QStoreUnsafeWindow) complete = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GHashTable) seen = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_autofree char *fast_dump = NULL;
  g_autofree char *complete_dump = NULL;

  complete = qstore_unsafe_window_new (f->t.db, "complete", &error);
  g_assert_no_error (error);
  qstore_unsafe_window_set_fast_path (complete, FALSE);

  for (guint i = 0; i < G_N_ELEMENTS (steps); i++)
    {
      g_autofree char *by_fast = run_step (f->w, &steps[i]);
      g_autofree char *by_complete = run_step (complete, &steps[i]);

      g_test_message ("%s", by_fast);
      g_assert_cmpstr (by_fast, ==, by_complete);
      /* Every kind of result shows up. */
      g_hash_table_add (seen, g_strdup (strchr (by_fast, ':') + 2));
      fast_dump = window_dump (f->t.db, WINDOW_NAME);
      complete_dump = window_dump (f->t.db, "complete");
      g_assert_cmpstr (fast_dump, ==, complete_dump);
      g_clear_pointer (&fast_dump, g_free);
      g_clear_pointer (&complete_dump, g_free);
    }

  /* The fast path wrote some applies itself, the other window none. */
  g_assert_cmpuint (qstore_unsafe_window_get_n_fast_applies (f->w), >=, 5);
  g_assert_cmpuint (qstore_unsafe_window_get_n_fast_applies (complete), ==, 0);
  g_assert_cmpuint (g_hash_table_size (seen), >=, 6);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/window/order/permutations", test_permutations);
  WINDOW_TEST ("/window/order/row-version", test_order_row_version);
  WINDOW_TEST ("/window/order/two-suids", test_order_two_suids);
  WINDOW_TEST ("/window/order/safe-head", test_order_safe_head);
  WINDOW_TEST ("/window/order/late-arrival", test_order_late_arrival);
  WINDOW_TEST ("/window/order/multi-row-older", test_order_multi_row_older);
  WINDOW_TEST ("/window/order/delete-then-older", test_order_delete_then_older);
  WINDOW_TEST ("/window/order/patches", test_order_patches);
  WINDOW_TEST ("/window/paths-agree", test_paths_agree);

  return g_test_run ();
}
