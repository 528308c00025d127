/* test-window.c: the unsafe window's operations, outcomes and refusals
 *
 * Runs against the provider QSTORE_TEST_PROVIDER names. Every refusal is
 * checked to leave every table of the window as it was.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "window-test-util.h"

/* SUIDs */

static void
assert_invalid_suid (const char *suid,
                     const char *field)
{
  g_autoptr(GError) error = NULL;

  g_assert_false (qstore_suid_validate (suid, field, &error));
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, field));
}

static void
test_suid_validate (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GDateTime) y2k = g_date_time_new_utc (2000, 1, 1, 0, 0, 0);
  g_autoptr(GDateTime) later = g_date_time_add_seconds (y2k, 0.5);
  g_autofree char *a = NULL;
  g_autofree char *b = NULL;
  g_autofree char *c = NULL;

  g_assert_true (qstore_suid_validate ("123456789012345678901234567890", "suid", &error));
  g_assert_no_error (error);
  assert_invalid_suid ("12345678901234567890123456789", "suid");      /* 29 */
  assert_invalid_suid ("1234567890123456789012345678901", "safe_head"); /* 31 */
  assert_invalid_suid ("12345678901234567890123456789x", "target_suid");
  assert_invalid_suid ("１２3456789012345678901234567890", "suid");   /* not ASCII */
  assert_invalid_suid ("", "source_suid");
  assert_invalid_suid (NULL, "suid");

  /* 2000-01-01 is 630822816000000000 ticks after 0001-01-01. */
  a = qstore_suid_new_for_time (y2k);
  g_assert_true (qstore_suid_validate (a, "suid", NULL));
  g_assert_true (g_str_has_prefix (a, "0630822816000000000"));
  b = qstore_suid_new_for_time (later);
  g_assert_true (g_str_has_prefix (b, "0630822816005000000"));
  g_assert_cmpint (qstore_suid_compare (a, b), <, 0);
  g_assert_cmpint (qstore_suid_compare ("", a), <, 0);
  g_assert_cmpint (qstore_suid_compare (a, a), ==, 0);

  c = qstore_suid_new_from_parts (G_GUINT64_CONSTANT (9999999999999999999),
                                  G_GUINT64_CONSTANT (99999999999), &error);
  g_assert_no_error (error);
  g_assert_cmpstr (c, ==, "999999999999999999999999999999");
  g_assert_null (qstore_suid_new_from_parts (0, G_GUINT64_CONSTANT (100000000000), &error));
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT);
}

/* Every entry point checks the SUIDs it is given, naming the field. */
static void
assert_invalid_argument (GError     *error,
                         const char *field)
{
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT);
  if (strstr (error->message, field) == NULL)
    g_error ("“%s” does not name %s", error->message, field);
}

static void
assert_event_refused (QStoreUnsafeWindow *w,
                      QStoreUnsafeEvent  *event,
                      const char         *field)
{
  g_autoptr(GError) error = window_apply_error (w, event);

  assert_invalid_argument (error, field);
}

static void
test_suid_entry_points (WindowFixture *f,
                        gconstpointer  data)
{
  const char *short_suid = "12345678901234567890123456789";
  g_autofree char *before = window_dump (f->t.db, WINDOW_NAME);
  g_autofree char *after = NULL;
  GError *error = NULL;
  gboolean flag;
  guint n;

  {
    g_autoptr(QStoreUnsafeEvent) event = qstore_unsafe_event_new ("e", short_suid);

    assert_event_refused (f->w, event, "suid");
  }
  {
    g_autoptr(QStoreUnsafeEvent) event = qstore_unsafe_event_new ("e", "");

    assert_event_refused (f->w, event, "suid");
  }
  {
    g_autoptr(QStoreUnsafeEvent) event = window_upsert_event ("e", 5, "k", "1");

    qstore_unsafe_event_set_safe_head (event, "1234567890123456789012345678901");
    assert_event_refused (f->w, event, "safe_head");
    /* The empty safe head is "no checkpoint". */
    qstore_unsafe_event_set_safe_head (event, "");
    qstore_unsafe_event_set_target_suid (event, "");
    assert_event_refused (f->w, event, "target_suid");
  }
  {
    g_autoptr(QStoreUnsafeEvent) event = window_event ("e", 5);

    qstore_unsafe_event_add_patch (event, "k", "{}", 1, "x23456789012345678901234567890");
    assert_event_refused (f->w, event, "source_suid");
  }

  qstore_unsafe_window_observe_safe_receipt (f->w, 0, "e", short_suid, &error);
  assert_invalid_argument (error, "suid");
  g_clear_error (&error);
  qstore_unsafe_window_observe_arrival (f->w, 0, "e", "", &flag, &error);
  assert_invalid_argument (error, "suid");
  g_clear_error (&error);
  qstore_unsafe_window_has_target_receipt (f->w, "e", "abc", &flag, &error);
  assert_invalid_argument (error, "suid");
  g_clear_error (&error);
  qstore_unsafe_window_garbage_collect (f->w, 0, 1, "k", 1, short_suid, S (9), &flag, &error);
  assert_invalid_argument (error, "expected_source_suid");
  g_clear_error (&error);
  qstore_unsafe_window_garbage_collect (f->w, 0, 1, "k", 1, S (1), short_suid, &flag, &error);
  assert_invalid_argument (error, "safe_head");
  g_clear_error (&error);
  qstore_unsafe_window_collect_eligible (f->w, 0, 1, "9", &n, &error);
  assert_invalid_argument (error, "safe_head");
  g_clear_error (&error);
  qstore_unsafe_window_finish_kick (f->w, "me", "12", &flag, NULL, &error);
  assert_invalid_argument (error, "reached_suid");
  g_clear_error (&error);
  qstore_unsafe_window_put_safe_row (f->w, 0, "k", "1", 1, "", &error);
  assert_invalid_argument (error, "source_suid");
  g_clear_error (&error);

  after = window_dump (f->t.db, WINDOW_NAME);
  g_assert_cmpstr (before, ==, after);
}

/* A SUID stored by a write around the window is refused when read. */
static void
test_stored_invalid_suid (WindowFixture *f,
                          gconstpointer  data)
{
  g_autoptr(QStoreUnsafeEvent) event = window_upsert_event ("e1", 5, "k", "1");
  g_autoptr(GError) error = NULL;
  g_autofree char *page = NULL;

  test_exec (f->t.db, "INSERT INTO _qstore_window_w_rows VALUES (0, 'k', '0', 1, "
                      "'2024-01-01T00:00:00', 0)");
  window_assert_refused (f->w, event, QSTORE_UNSAFE_WINDOW_ERROR_INVALID_SUID);
  page = window_page_full (f->w, 0, 10, 0, FALSE, &error);
  g_assert_null (page);
  g_assert_error (error, QSTORE_UNSAFE_WINDOW_ERROR, QSTORE_UNSAFE_WINDOW_ERROR_INVALID_SUID);
  g_assert_nonnull (strstr (error->message, "source_suid"));
  g_assert_false (qstore_unsafe_window_error_is_retryable (error));
  g_clear_error (&error);

  /* A receipt's list of marked rows that is not one. */
  {
    g_autoptr(QStoreUnsafeEvent) older = window_upsert_event ("e0", 1, "b", "0");

    window_put (f->w, "e2", 2, "b", "2");
    window_apply_expect (f->w, older, QSTORE_UNSAFE_OUTCOME_OLDER, FALSE);
  }
  test_exec (f->t.db, "UPDATE _qstore_window_w_receipts SET marked_rows = 'b' "
                      "WHERE event_id = 'e0'");
  g_assert_false (qstore_unsafe_window_observe_safe_receipt (f->w, 0, "e0", S (1), &error));
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_CORRUPT);
  g_assert_nonnull (strstr (error->message, "e0"));
}

/* Outcomes */

static char *
receipts (WindowFixture *f)
{
  return test_query_text (f->t.db, "SELECT event_id, outcome FROM _qstore_window_w_receipts",
                          window_append_value);
}

static char *
markers (WindowFixture *f)
{
  return test_query_text (f->t.db, "SELECT row_key, event_id, reason FROM _qstore_window_w_markers",
                          window_append_value);
}

static void
test_outcomes (WindowFixture *f,
               gconstpointer  data)
{
  g_autofree char *page = NULL;
  g_autofree char *got_receipts = NULL;
  g_autofree char *got_markers = NULL;

  window_put (f->w, "e5", 5, "a", "{\"n\": 5}");
  {
    g_autoptr(QStoreUnsafeEvent) older = window_upsert_event ("e3", 3, "a", "{\"n\": 3}");

    window_apply_expect (f->w, older, QSTORE_UNSAFE_OUTCOME_OLDER, FALSE);
  }
  {
    g_autoptr(QStoreUnsafeEvent) patch = window_event ("e6", 6);

    qstore_unsafe_event_add_patch (patch, "b", "{\"x\": 1}", 6, S (6));
    window_apply_expect (f->w, patch, QSTORE_UNSAFE_OUTCOME_PATCH_NOT_FOUND, FALSE);
  }
  {
    g_autoptr(QStoreUnsafeEvent) delete = window_event ("e7", 7);

    qstore_unsafe_event_add_delete (delete, "c");
    window_apply_expect (f->w, delete, QSTORE_UNSAFE_OUTCOME_DELETE_WITHOUT_ROW, FALSE);
  }
  {
    g_autoptr(QStoreUnsafeEvent) nothing = window_event ("e8", 8);

    window_apply_expect (f->w, nothing, QSTORE_UNSAFE_OUTCOME_NO_CHANGE, FALSE);
  }
  {
    /* The same event again, with everything it carried: a duplicate. */
    g_autoptr(QStoreUnsafeEvent) again = window_upsert_event ("e5", 5, "a", "{\"n\": 5}");

    window_apply_expect (f->w, again, QSTORE_UNSAFE_OUTCOME_NO_CHANGE, TRUE);
  }

  page = window_page (f->w, 0);
  g_assert_cmpstr (page, ==, "a={\"n\":5} v5 000000000000000000500000000000 unsafe\ntotal 1\n");
  got_receipts = receipts (f);
  g_assert_cmpstr (got_receipts, ==,
                   "'e3'|'older'\n"
                   "'e5'|'applied'\n"
                   "'e6'|'patch-not-found'\n"
                   "'e7'|'delete-without-row'\n"
                   "'e8'|'no-change'\n");
  /* What did not apply is marked, under its rows or its own id. */
  got_markers = markers (f);
  g_assert_cmpstr (got_markers, ==,
                   "'a'|'e3'|'older'\n"
                   "'b'|'e6'|'patch-not-found'\n"
                   "'c'|'e7'|'delete-without-row'\n"
                   "'e8'|'e8'|'no-change'\n");
}

static void
test_outcome_complete_event (WindowFixture *f,
                             gconstpointer  data)
{
  g_autofree char *page = NULL;
  g_autofree char *entries = NULL;

  window_put (f->w, "e1", 1, "a", "{\"x\": 1, \"y\": {\"z\": 1}}");
  window_put (f->w, "e2", 2, "b", "{\"gone\": true}");
  {
    g_autoptr(QStoreUnsafeEvent) event = window_event ("e3", 3);

    qstore_unsafe_event_add_index_entry (event, "by_name", "c", g_variant_new_string ("cee"));
    qstore_unsafe_event_add_index_entry (event, "by_n", "c", g_variant_new_int64 (3));
    qstore_unsafe_event_add_index_entry (event, "by_w", "a", g_variant_new_double (0.5));
    qstore_unsafe_event_add_patch (event, "a", "{\"y\": {\"z\": null, \"q\": 2}, \"w\": 0.5}", 3,
                                   S (3));
    qstore_unsafe_event_add_upsert (event, "c", "[1, 2]", 1, S (3));
    qstore_unsafe_event_add_delete (event, "b");
    window_apply_expect (f->w, event, QSTORE_UNSAFE_OUTCOME_APPLIED, FALSE);
  }

  page = window_page (f->w, 0);
  g_assert_cmpstr (page, ==,
                   "a={\"x\":1,\"y\":{\"q\":2},\"w\":0.5} v3 000000000000000000300000000000 unsafe\n"
                   "c=[1,2] v1 000000000000000000300000000000 unsafe\n"
                   "total 2\n");
  entries = test_query_text (f->t.db, "SELECT row_key, index_id, value_type, value "
                                      "FROM _qstore_window_w_index_entries",
                             window_append_value);
  g_assert_cmpstr (entries, ==,
                   "'a'|'by_w'|'real'|0.5\n"
                   "'c'|'by_n'|'integer'|3\n"
                   "'c'|'by_name'|'text'|'cee'\n");

  /* A new upsert of c replaces its entries with its own (none). */
  window_put (f->w, "e4", 4, "c", "0");
  g_free (entries);
  entries = test_query_text (f->t.db, "SELECT row_key FROM _qstore_window_w_index_entries",
                             window_append_value);
  g_assert_cmpstr (entries, ==, "'a'\n");
}

/* A tombstone is an ordered delete: it hides the key, the safe layer's
 * row included, and an older upsert cannot bring it back. */
static void
test_outcome_tombstone (WindowFixture *f,
                        gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *page = NULL;

  g_assert_true (qstore_unsafe_window_put_safe_row (f->w, 0, "a", "\"safe\"", 1, S (2), &error));
  g_assert_no_error (error);
  {
    g_autoptr(QStoreUnsafeEvent) event = window_event ("t", 5);

    qstore_unsafe_event_add_tombstone (event, "a", 2, S (5));
    window_apply_expect (f->w, event, QSTORE_UNSAFE_OUTCOME_APPLIED, FALSE);
  }
  page = window_page (f->w, 0);
  g_assert_cmpstr (page, ==, "total 0\n");
  {
    g_autoptr(QStoreUnsafeEvent) late = window_upsert_event ("late", 4, "a", "\"late\"");

    window_apply_expect (f->w, late, QSTORE_UNSAFE_OUTCOME_OLDER, FALSE);
  }
  window_put (f->w, "new", 6, "a", "\"new\"");
  g_free (page);
  page = window_page (f->w, 0);
  g_assert_cmpstr (page, ==, "a=\"new\" v6 000000000000000000600000000000 unsafe\ntotal 1\n");
}

/* Refusals */

static void
test_suid_contradiction (WindowFixture *f,
                         gconstpointer  data)
{
  g_autofree char *before = NULL;
  g_autofree char *after = NULL;

  window_put (f->w, "e5", 5, "a", "1");
  before = window_dump (f->t.db, WINDOW_NAME);
  {
    /* One event id, another SUID. */
    g_autoptr(QStoreUnsafeEvent) event = window_upsert_event ("e5", 6, "a", "1");
    g_autoptr(GError) error = window_apply_error (f->w, event);

    g_assert_error (error, QSTORE_UNSAFE_WINDOW_ERROR, QSTORE_UNSAFE_WINDOW_ERROR_SUID_CONTRADICTION);
    g_assert_nonnull (strstr (error->message, "e5"));
    g_assert_false (qstore_unsafe_window_error_is_retryable (error));
  }
  {
    /* Another event of the same SUID writing another value to the row. */
    g_autoptr(QStoreUnsafeEvent) event = window_upsert_event ("e5b", 5, "a", "2");

    window_assert_refused (f->w, event, QSTORE_UNSAFE_WINDOW_ERROR_SUID_CONTRADICTION);
  }
  {
    g_autoptr(QStoreUnsafeEvent) event = window_event ("e5c", 5);

    qstore_unsafe_event_add_tombstone (event, "a", 5, S (5));
    window_assert_refused (f->w, event, QSTORE_UNSAFE_WINDOW_ERROR_SUID_CONTRADICTION);
  }
  after = window_dump (f->t.db, WINDOW_NAME);
  g_assert_cmpstr (before, ==, after);

  {
    /* The same value from the same SUID is no contradiction. */
    g_autoptr(QStoreUnsafeEvent) event = window_upsert_event ("e5d", 5, "a", " 1 ");

    window_apply_expect (f->w, event, QSTORE_UNSAFE_OUTCOME_APPLIED, FALSE);
  }
}

static void
test_row_cas (WindowFixture *f,
              gconstpointer  data)
{
  g_autofree char *before = NULL;
  g_autofree char *after = NULL;

  window_put (f->w, "e1", 1, "a", "1");
  window_put (f->w, "e2", 2, "b", "2");
  before = window_dump (f->t.db, WINDOW_NAME);
  {
    /* b has version 2. */
    g_autoptr(QStoreUnsafeEvent) event = window_event ("e3", 3);
    g_autoptr(GError) error = NULL;

    qstore_unsafe_event_add_upsert (event, "a", "3", 3, S (3));
    qstore_unsafe_event_add_upsert (event, "b", "3", 3, S (3));
    qstore_unsafe_event_set_expected_row_version (event, 1);
    error = window_apply_error (f->w, event);
    g_assert_error (error, QSTORE_UNSAFE_WINDOW_ERROR, QSTORE_UNSAFE_WINDOW_ERROR_ROW_CAS_MISMATCH);
    g_assert_nonnull (strstr (error->message, "“b”"));
    g_assert_true (qstore_unsafe_window_error_is_retryable (error));
  }
  after = window_dump (f->t.db, WINDOW_NAME);
  g_assert_cmpstr (before, ==, after);

  window_put (f->w, "e4", 4, "b", "4");
  window_put (f->w, "e5", 5, "b", "5");
  {
    /* Two rows that both hold the expected version: each checked on its
     * own, the event applies. */
    g_autoptr(QStoreUnsafeEvent) event = window_event ("e6", 6);
    g_autofree char *page = NULL;

    window_put (f->w, "e1b", 5, "a", "5");
    qstore_unsafe_event_add_upsert (event, "a", "6", 6, S (6));
    qstore_unsafe_event_add_upsert (event, "b", "6", 6, S (6));
    qstore_unsafe_event_add_upsert (event, "c", "6", 6, S (6));
    qstore_unsafe_event_set_expected_row_version (event, 5);
    window_apply_expect (f->w, event, QSTORE_UNSAFE_OUTCOME_APPLIED, FALSE);
    page = window_page (f->w, 0);
    g_assert_cmpstr (page, ==,
                     "a=6 v6 000000000000000000600000000000 unsafe\n"
                     "b=6 v6 000000000000000000600000000000 unsafe\n"
                     "c=6 v6 000000000000000000600000000000 unsafe\n"
                     "total 3\n");
  }
}

static void
test_safe_ahead (WindowFixture *f,
                 gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *before = NULL;
  g_autofree char *after = NULL;

  window_put (f->w, "e9", 9, "z", "9");
  before = window_dump (f->t.db, WINDOW_NAME);
  {
    /* At the delivered safe head, and behind it. */
    g_autoptr(QStoreUnsafeEvent) at = window_upsert_event ("e5", 5, "a", "5");
    g_autoptr(QStoreUnsafeEvent) behind = window_upsert_event ("e4", 4, "a", "4");

    qstore_unsafe_event_set_safe_head (at, S (5));
    window_assert_refused (f->w, at, QSTORE_UNSAFE_WINDOW_ERROR_SAFE_AHEAD);
    qstore_unsafe_event_set_safe_head (behind, S (5));
    window_assert_refused (f->w, behind, QSTORE_UNSAFE_WINDOW_ERROR_SAFE_AHEAD);
  }
  after = window_dump (f->t.db, WINDOW_NAME);
  g_assert_cmpstr (before, ==, after);

  {
    g_autoptr(QStoreUnsafeEvent) ahead = window_upsert_event ("e6", 6, "a", "6");

    qstore_unsafe_event_set_safe_head (ahead, S (5));
    window_apply_expect (f->w, ahead, QSTORE_UNSAFE_OUTCOME_APPLIED, FALSE);
  }

  /* The safe head the window stored fences too, whatever the delivery
   * says. */
  g_assert_true (qstore_unsafe_window_observe_safe_receipt (f->w, 0, "e9", S (9), &error));
  g_assert_no_error (error);
  {
    g_autoptr(QStoreUnsafeEvent) late = window_upsert_event ("e7", 7, "b", "7");

    window_assert_refused (f->w, late, QSTORE_UNSAFE_WINDOW_ERROR_SAFE_AHEAD);
  }
}

/* The hook plays another delivery that records the receipt between the
 * guards and the writes. */
static void
insert_rival_receipt (QStoreUnsafeWindow *window,
                      QStoreUnsafeEvent  *event,
                      gpointer            data)
{
  QStoreTable *receipts = qstore_database_get_table (qstore_unsafe_window_get_database (window),
                                                     NULL, "_qstore_window_w_receipts");
  g_autoptr(GError) error = NULL;

  qstore_table_insert (receipts,
                       g_variant_new ("(vvvvv)",
                                      g_variant_new_string (qstore_unsafe_event_get_event_id (event)),
                                      g_variant_new_string (qstore_unsafe_event_get_suid (event)),
                                      g_variant_new_string ("applied"),
                                      g_variant_new_int64 (0),
                                      qstore_value_new_null ()),
                       QSTORE_CONFLICT_ABORT, &error);
  g_assert_no_error (error);
  (*(guint *) data)++;
}

static void
test_duplicate_race (WindowFixture *f,
                     gconstpointer  data)
{
  g_autofree char *before = window_dump (f->t.db, WINDOW_NAME);
  g_autofree char *after = NULL;
  guint hooked = 0;

  qstore_unsafe_window_set_test_hooks (f->w, insert_rival_receipt, NULL, &hooked);
  for (int fast = 1; fast >= 0; fast--)
    {
      /* A single upsert (the fast path when it is on), then a patch,
       * which only the complete path takes. */
      g_autoptr(QStoreUnsafeEvent) upsert = window_upsert_event ("race", 5, "a", "1");
      g_autoptr(QStoreUnsafeEvent) patch = window_event ("race2", 6);

      qstore_unsafe_event_add_patch (patch, "a", "{}", 6, S (6));
      qstore_unsafe_window_set_fast_path (f->w, fast);
      window_assert_refused (f->w, upsert, QSTORE_UNSAFE_WINDOW_ERROR_DUPLICATE_RACE);
      window_assert_refused (f->w, patch, QSTORE_UNSAFE_WINDOW_ERROR_DUPLICATE_RACE);
    }
  g_assert_cmpuint (hooked, ==, 4);

  /* The rival's receipt went with the rest of the transaction. */
  after = window_dump (f->t.db, WINDOW_NAME);
  g_assert_cmpstr (before, ==, after);

  qstore_unsafe_window_set_test_hooks (f->w, NULL, NULL, NULL);
  window_put (f->w, "race", 5, "a", "1");
}

static void
test_receipt_not_found (WindowFixture *f,
                        gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *before = window_dump (f->t.db, WINDOW_NAME);
  g_autofree char *after = NULL;

  g_assert_false (qstore_unsafe_window_observe_safe_receipt (f->w, 0, "nope", S (3), &error));
  g_assert_error (error, QSTORE_UNSAFE_WINDOW_ERROR, QSTORE_UNSAFE_WINDOW_ERROR_RECEIPT_NOT_FOUND);
  g_assert_nonnull (strstr (error->message, "nope"));
  g_clear_error (&error);

  window_put (f->w, "e3", 3, "a", "1");
  g_free (before);
  before = window_dump (f->t.db, WINDOW_NAME);
  g_assert_false (qstore_unsafe_window_observe_safe_receipt (f->w, 0, "e3", S (4), &error));
  g_assert_error (error, QSTORE_UNSAFE_WINDOW_ERROR, QSTORE_UNSAFE_WINDOW_ERROR_SUID_CONTRADICTION);
  after = window_dump (f->t.db, WINDOW_NAME);
  g_assert_cmpstr (before, ==, after);
}

/* Safe receipts and arrivals */

static void
assert_meta (QStoreUnsafeWindow *w,
             gint64              generation,
             const char         *safe_head,
             const char         *max,
             gboolean            rebuild)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *got_safe = NULL;
  g_autofree char *got_max = NULL;
  gboolean got_rebuild = -1;

  g_assert_true (qstore_unsafe_window_read_meta (w, generation, &got_safe, &got_max,
                                                 &got_rebuild, &error));
  g_assert_no_error (error);
  g_assert_cmpstr (got_safe, ==, safe_head);
  g_assert_cmpstr (got_max, ==, max);
  g_assert_cmpint (got_rebuild, ==, rebuild);
}

static void
test_safe_receipt (WindowFixture *f,
                   gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *got = NULL;

  assert_meta (f->w, 0, "", "", FALSE);
  window_put (f->w, "e5", 5, "a", "5");
  {
    g_autoptr(QStoreUnsafeEvent) older = window_upsert_event ("e3", 3, "a", "3");
    g_autoptr(QStoreUnsafeEvent) other = window_upsert_event ("e4", 4, "a", "4");

    window_apply_expect (f->w, older, QSTORE_UNSAFE_OUTCOME_OLDER, FALSE);
    window_apply_expect (f->w, other, QSTORE_UNSAFE_OUTCOME_OLDER, FALSE);
  }
  assert_meta (f->w, 0, "", S (5), FALSE);

  /* Only the observed event's markers go. */
  g_assert_true (qstore_unsafe_window_observe_safe_receipt (f->w, 0, "e3", S (3), &error));
  g_assert_no_error (error);
  got = markers (f);
  g_assert_cmpstr (got, ==, "'a'|'e4'|'older'\n");
  assert_meta (f->w, 0, S (3), S (5), FALSE);

  /* The safe head moves forward only; another generation has its own. */
  g_assert_true (qstore_unsafe_window_observe_safe_receipt (f->w, 0, "e5", S (5), &error));
  g_assert_true (qstore_unsafe_window_observe_safe_receipt (f->w, 0, "e4", S (4), &error));
  g_assert_no_error (error);
  assert_meta (f->w, 0, S (5), S (5), FALSE);
  assert_meta (f->w, 1, "", S (5), FALSE);
  g_free (got);
  got = markers (f);
  g_assert_cmpstr (got, ==, "");
}

static void
test_arrival_latch (WindowFixture *f,
                    gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *page = NULL;
  gboolean behind = -1;

  window_put (f->w, "e5", 5, "a", "5");
  g_assert_true (qstore_unsafe_window_observe_arrival (f->w, 0, "e5", S (5), &behind, &error));
  g_assert_false (behind);
  g_assert_true (qstore_unsafe_window_observe_safe_receipt (f->w, 0, "e5", S (5), &error));
  g_assert_no_error (error);

  /* A re-delivery of an event the window holds is no first arrival. */
  g_assert_true (qstore_unsafe_window_observe_arrival (f->w, 0, "e5", S (5), &behind, &error));
  g_assert_false (behind);
  assert_meta (f->w, 0, S (5), S (5), FALSE);

  /* An arrival ahead raises the watermark only. */
  g_assert_true (qstore_unsafe_window_observe_arrival (f->w, 0, "e7", S (7), &behind, &error));
  g_assert_false (behind);
  {
    g_autofree char *watermark = test_query_text (f->t.db, "SELECT arrival_watermark, "
                                                           "rebuild_required FROM "
                                                           "_qstore_window_w_arrivals",
                                                  window_append_value);

    g_assert_cmpstr (watermark, ==, "'000000000000000000700000000000'|0\n");
  }

  /* A first arrival behind the safe head latches, and reads fail closed. */
  g_assert_true (qstore_unsafe_window_observe_arrival (f->w, 0, "e4", S (4), &behind, &error));
  g_assert_no_error (error);
  g_assert_true (behind);
  assert_meta (f->w, 0, S (5), S (5), TRUE);
  page = window_page_full (f->w, 0, 10, 0, FALSE, &error);
  g_assert_null (page);
  g_assert_error (error, QSTORE_UNSAFE_WINDOW_ERROR, QSTORE_UNSAFE_WINDOW_ERROR_BEHIND_FRONTIER);
  g_assert_nonnull (strstr (error->message, "e4"));
  g_assert_false (qstore_unsafe_window_error_is_retryable (error));
  g_clear_error (&error);

  /* It stays latched, naming the first event found behind. */
  g_assert_true (qstore_unsafe_window_observe_arrival (f->w, 0, "e3", S (3), &behind, &error));
  g_assert_true (behind);
  page = window_page_full (f->w, 0, 10, 0, FALSE, &error);
  g_assert_error (error, QSTORE_UNSAFE_WINDOW_ERROR, QSTORE_UNSAFE_WINDOW_ERROR_BEHIND_FRONTIER);
  g_assert_nonnull (strstr (error->message, "e4"));
  g_clear_error (&error);
  if (test_provider_persistent ())
    {
      window_fixture_reopen (f);
      assert_meta (f->w, 0, S (5), S (5), TRUE);
    }

  /* The rebuild writes a new generation, which reads. */
  {
    g_autoptr(QStoreUnsafeEvent) event = window_upsert_event ("r1", 6, "a", "6");

    qstore_unsafe_event_set_generation (event, 1);
    window_apply_expect (f->w, event, QSTORE_UNSAFE_OUTCOME_APPLIED, FALSE);
  }
  page = window_page (f->w, 1);
  g_assert_cmpstr (page, ==, "a=6 v6 000000000000000000600000000000 unsafe\ntotal 1\n");
}

/* An apply asked to record its arrival records it even when refused. */
static void
test_arrival_recorded_on_refusal (WindowFixture *f,
                                  gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *page = NULL;

  window_put (f->w, "e5", 5, "a", "5");
  g_assert_true (qstore_unsafe_window_observe_safe_receipt (f->w, 0, "e5", S (5), &error));
  g_assert_no_error (error);

  {
    /* Without asking, a late event is refused and latches nothing. */
    g_autoptr(QStoreUnsafeEvent) late = window_upsert_event ("e4", 4, "b", "4");

    window_assert_refused (f->w, late, QSTORE_UNSAFE_WINDOW_ERROR_SAFE_AHEAD);
    assert_meta (f->w, 0, S (5), S (5), FALSE);
    qstore_unsafe_event_set_record_arrival (late, TRUE);
    window_assert_refused (f->w, late, QSTORE_UNSAFE_WINDOW_ERROR_SAFE_AHEAD);
    assert_meta (f->w, 0, S (5), S (5), TRUE);
  }
  page = window_page_full (f->w, 0, 10, 0, FALSE, &error);
  g_assert_error (error, QSTORE_UNSAFE_WINDOW_ERROR, QSTORE_UNSAFE_WINDOW_ERROR_BEHIND_FRONTIER);
  g_clear_error (&error);

  /* Recording the arrival of an apply that goes through raises the
   * watermark in the same transaction. */
  {
    g_autoptr(QStoreUnsafeEvent) event = window_upsert_event ("g1", 9, "a", "9");
    g_autofree char *watermark = NULL;

    qstore_unsafe_event_set_generation (event, 1);
    qstore_unsafe_event_set_record_arrival (event, TRUE);
    window_apply_expect (f->w, event, QSTORE_UNSAFE_OUTCOME_APPLIED, FALSE);
    watermark = test_query_text (f->t.db, "SELECT generation, arrival_watermark FROM "
                                          "_qstore_window_w_arrivals WHERE generation = 1",
                                 window_append_value);
    g_assert_cmpstr (watermark, ==, "1|'000000000000000000900000000000'\n");
  }
}

/* Receipts */

static void
test_receipts (WindowFixture *f,
               gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  gboolean found = -1;

  window_put (f->w, "e5", 5, "a", "5");
  g_assert_true (qstore_unsafe_window_has_target_receipt (f->w, "e5", S (5), &found, &error));
  g_assert_true (found);
  g_assert_true (qstore_unsafe_window_has_target_receipt (f->w, "e5", S (6), &found, &error));
  g_assert_false (found);
  g_assert_true (qstore_unsafe_window_has_target_receipt (f->w, "e6", S (5), &found, &error));
  g_assert_false (found);
  g_assert_no_error (error);

  /* Wait receipts only for the active generation, bound to its
   * definition. */
  g_assert_true (qstore_unsafe_window_has_wait_receipt (f->w, 0, 1, "e5", S (5), &found, &error));
  g_assert_false (found);
  g_assert_true (qstore_unsafe_window_activate_generation (f->w, 0, 1, &error));
  window_put (f->w, "e6", 6, "a", "6");
  g_assert_true (qstore_unsafe_window_has_wait_receipt (f->w, 0, 1, "e6", S (6), &found, &error));
  g_assert_true (found);
  g_assert_true (qstore_unsafe_window_has_wait_receipt (f->w, 0, 2, "e6", S (6), &found, &error));
  g_assert_false (found);
  {
    g_autoptr(QStoreUnsafeEvent) candidate = window_upsert_event ("e7", 7, "a", "7");

    qstore_unsafe_event_set_generation (candidate, 1);
    window_apply_expect (f->w, candidate, QSTORE_UNSAFE_OUTCOME_APPLIED, FALSE);
    g_assert_true (qstore_unsafe_window_has_wait_receipt (f->w, 1, 1, "e7", S (7), &found, &error));
    g_assert_false (found);
  }
  g_assert_no_error (error);
}

/* Kicks */

static void
assert_acquire (QStoreUnsafeWindow *w,
                const char         *owner,
                gint64              now,
                gboolean            acquired,
                const char         *target)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *got_target = NULL;
  gboolean got = -1;

  g_assert_true (qstore_unsafe_window_acquire_kick (w, owner, now, 100, &got, &got_target,
                                                    &error));
  g_assert_no_error (error);
  g_assert_cmpint (got, ==, acquired);
  g_assert_cmpstr (got_target, ==, target);
}

static void
assert_finish (QStoreUnsafeWindow *w,
               const char         *owner,
               const char         *reached,
               gboolean            settled,
               gboolean            dirty)
{
  g_autoptr(GError) error = NULL;
  gboolean got_settled = -1;
  gboolean got_dirty = -1;

  g_assert_true (qstore_unsafe_window_finish_kick (w, owner, reached, &got_settled, &got_dirty,
                                                   &error));
  g_assert_no_error (error);
  g_assert_cmpint (got_settled, ==, settled);
  if (settled)
    g_assert_cmpint (got_dirty, ==, dirty);
}

static void
test_kicks (WindowFixture *f,
            gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  gboolean acquired = -1;

  /* Nothing applied, nothing due. */
  assert_acquire (f->w, "a", 0, FALSE, NULL);

  window_put (f->w, "e5", 5, "x", "5");
  assert_acquire (f->w, "a", 0, TRUE, S (5));
  /* Held by a until 100. */
  g_assert_false (qstore_unsafe_window_acquire_kick (f->w, "b", 50, 100, &acquired, NULL, &error));
  g_assert_error (error, QSTORE_UNSAFE_WINDOW_ERROR, QSTORE_UNSAFE_WINDOW_ERROR_KICK_LEASE_HELD);
  g_assert_true (qstore_unsafe_window_error_is_retryable (error));
  g_assert_nonnull (strstr (error->message, "“a”"));
  g_assert_false (acquired);
  g_clear_error (&error);

  /* The target reached: the kick is clean, nothing is due. */
  assert_finish (f->w, "b", S (5), FALSE, FALSE);
  assert_finish (f->w, "a", S (5), TRUE, FALSE);
  assert_acquire (f->w, "b", 50, FALSE, NULL);

  /* An apply during a lease keeps the kick due after it. */
  window_put (f->w, "e6", 6, "x", "6");
  assert_acquire (f->w, "a", 200, TRUE, S (6));
  window_put (f->w, "e8", 8, "x", "8");
  {
    /* A target SUID further than the event's own. */
    g_autoptr(QStoreUnsafeEvent) event = window_upsert_event ("e7", 7, "y", "7");

    qstore_unsafe_event_set_target_suid (event, S (9));
    window_apply_expect (f->w, event, QSTORE_UNSAFE_OUTCOME_APPLIED, FALSE);
  }
  assert_finish (f->w, "a", S (9), TRUE, TRUE);

  /* Not reached: stays due; the empty text reached nothing. */
  assert_acquire (f->w, "b", 300, TRUE, S (9));
  assert_finish (f->w, "b", S (8), TRUE, TRUE);
  assert_acquire (f->w, "a", 400, TRUE, S (9));
  assert_finish (f->w, "a", "", TRUE, TRUE);

  /* An expired lease: another owner takes it; the first can no longer
   * settle it. */
  assert_acquire (f->w, "a", 500, TRUE, S (9));
  window_put (f->w, "e10", 10, "x", "10");
  assert_acquire (f->w, "b", 601, TRUE, S (10));
  assert_finish (f->w, "a", S (10), FALSE, FALSE);
  assert_finish (f->w, "b", S (10), TRUE, FALSE);

  /* The same owner takes its own lease again when the kick is due. */
  window_put (f->w, "e11", 11, "x", "11");
  assert_acquire (f->w, "c", 700, TRUE, S (11));
  window_put (f->w, "e12", 12, "x", "12");
  assert_acquire (f->w, "c", 710, TRUE, S (12));

  g_assert_false (qstore_unsafe_window_acquire_kick (f->w, "", 0, 100, &acquired, NULL, &error));
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  g_assert_false (qstore_unsafe_window_acquire_kick (f->w, "a", 0, 0, &acquired, NULL, &error));
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT);
}

/* The kick's target survives the receipts it came from. */
static void
test_kick_target_after_gc (WindowFixture *f,
                           gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  gboolean collected = FALSE;

  g_assert_true (qstore_unsafe_window_activate_generation (f->w, 0, 1, &error));
  g_assert_no_error (error);
  for (guint n = 3; n <= 5; n += 2)
    {
      g_autofree char *id = g_strdup_printf ("e%u", n);
      g_autoptr(QStoreUnsafeEvent) event = window_upsert_event (id, n, id, "0");

      qstore_unsafe_event_set_record_arrival (event, TRUE);
      window_apply_expect (f->w, event, QSTORE_UNSAFE_OUTCOME_APPLIED, FALSE);
    }
  g_assert_true (qstore_unsafe_window_observe_safe_receipt (f->w, 0, "e5", S (5), &error));
  g_assert_true (qstore_unsafe_window_garbage_collect (f->w, 0, 1, "e5", 5, S (5), S (5),
                                                       &collected, &error));
  g_assert_no_error (error);
  g_assert_true (collected);
  assert_acquire (f->w, "a", 0, TRUE, S (5));
}

/* Garbage collection */

typedef struct
{
  const char *what;
  void      (*spoil) (WindowFixture *f, gint64 *definition, gint64 *version, const char **suid,
                      const char **safe_head);
} Spoiler;

/* A row the safe layer covers, with every recovery predicate holding. */
static void
collectable (WindowFixture *f)
{
  g_autoptr(GError) error = NULL;

  g_assert_true (qstore_unsafe_window_activate_generation (f->w, 0, 1, &error));
  g_assert_no_error (error);
  {
    g_autoptr(QStoreUnsafeEvent) event = window_upsert_event ("e5", 5, "a", "5");

    qstore_unsafe_event_add_index_entry (event, "i", "a", g_variant_new_int64 (5));
    qstore_unsafe_event_set_record_arrival (event, TRUE);
    window_apply_expect (f->w, event, QSTORE_UNSAFE_OUTCOME_APPLIED, FALSE);
  }
  {
    /* Leaves a marker on a. */
    g_autoptr(QStoreUnsafeEvent) older = window_upsert_event ("e4", 4, "a", "4");

    window_apply_expect (f->w, older, QSTORE_UNSAFE_OUTCOME_OLDER, FALSE);
  }
  window_put (f->w, "e9", 9, "b", "9");
  g_assert_true (qstore_unsafe_window_observe_safe_receipt (f->w, 0, "e5", S (5), &error));
  g_assert_no_error (error);
}

static void spoil_nothing (WindowFixture *f, gint64 *d, gint64 *v, const char **s,
                           const char **h) { }

static void
spoil_safe_head_behind (WindowFixture *f, gint64 *d, gint64 *v, const char **s, const char **h)
{
  *h = S (4);
}

static void
spoil_no_safe_head (WindowFixture *f, gint64 *d, gint64 *v, const char **s, const char **h)
{
  *h = "";
}

static void
spoil_watermark (WindowFixture *f, gint64 *d, gint64 *v, const char **s, const char **h)
{
  test_exec (f->t.db, "UPDATE _qstore_window_w_arrivals SET arrival_watermark = "
                      "'000000000000000000400000000000'");
}

static void
spoil_no_arrival (WindowFixture *f, gint64 *d, gint64 *v, const char **s, const char **h)
{
  test_exec (f->t.db, "DELETE FROM _qstore_window_w_arrivals");
}

static void
spoil_rebuild (WindowFixture *f, gint64 *d, gint64 *v, const char **s, const char **h)
{
  gboolean behind;

  g_assert_true (qstore_unsafe_window_observe_arrival (f->w, 0, "late", S (2), &behind, NULL));
  g_assert_true (behind);
}

static void
spoil_inactive (WindowFixture *f, gint64 *d, gint64 *v, const char **s, const char **h)
{
  g_assert_true (qstore_unsafe_window_activate_generation (f->w, 1, 1, NULL));
}

static void
spoil_definition (WindowFixture *f, gint64 *d, gint64 *v, const char **s, const char **h)
{
  *d = 2;
}

static void
spoil_version (WindowFixture *f, gint64 *d, gint64 *v, const char **s, const char **h)
{
  *v = 4;
}

static void
spoil_suid (WindowFixture *f, gint64 *d, gint64 *v, const char **s, const char **h)
{
  *s = S (4);
}

static void
spoil_row (WindowFixture *f, gint64 *d, gint64 *v, const char **s, const char **h)
{
  test_exec (f->t.db, "DELETE FROM _qstore_window_w_rows WHERE row_key = 'a'");
}

static const Spoiler spoilers[] = {
  { "every predicate holds", spoil_nothing },
  { "the safe head is behind the row", spoil_safe_head_behind },
  { "no safe head", spoil_no_safe_head },
  { "the arrival watermark is behind the row", spoil_watermark },
  { "no arrival recorded", spoil_no_arrival },
  { "a rebuild is required", spoil_rebuild },
  { "the generation is not active", spoil_inactive },
  { "the definition changed", spoil_definition },
  { "the row version changed", spoil_version },
  { "the row SUID changed", spoil_suid },
  { "the row is gone", spoil_row },
};

static void
test_gc_predicates (WindowFixture *f,
                    gconstpointer  data)
{
  for (guint i = 0; i < G_N_ELEMENTS (spoilers); i++)
    {
      g_autoptr(GError) error = NULL;
      g_autofree char *before = NULL;
      g_autofree char *after = NULL;
      const char *suid = S (5);
      const char *safe_head = S (7);
      gint64 definition = 1;
      gint64 version = 5;
      gboolean collected = -1;

      g_test_message ("%s", spoilers[i].what);
      window_fixture_recreate (f);

      collectable (f);
      spoilers[i].spoil (f, &definition, &version, &suid, &safe_head);
      before = window_dump (f->t.db, WINDOW_NAME);
      g_assert_true (qstore_unsafe_window_garbage_collect (f->w, 0, definition, "a", version, suid,
                                                           safe_head, &collected, &error));
      g_assert_no_error (error);
      after = window_dump (f->t.db, WINDOW_NAME);

      if (i > 0)
        {
          g_assert_false (collected);
          g_assert_cmpstr (before, ==, after);
          continue;
        }

      /* The row goes with its entries, markers and receipts; b stays. */
      g_assert_true (collected);
      {
        g_autofree char *page = window_page (f->w, 0);
        g_autofree char *left = test_query_text (f->t.db,
                                                 "SELECT (SELECT count(*) FROM _qstore_window_w_index_entries), "
                                                 "(SELECT count(*) FROM _qstore_window_w_markers), "
                                                 "(SELECT group_concat(event_id) FROM _qstore_window_w_receipts), "
                                                 "(SELECT group_concat(event_id) FROM _qstore_window_w_wait_receipts)",
                                                 window_append_value);

        g_assert_cmpstr (page, ==, "b=9 v9 000000000000000000900000000000 unsafe\ntotal 1\n");
        g_assert_cmpstr (left, ==, "0|0|'e4,e9'|'e4,e9'\n");
      }
    }
}

static void
test_collect_eligible (WindowFixture *f,
                       gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *page = NULL;
  guint n = G_MAXUINT;

  g_assert_true (qstore_unsafe_window_activate_generation (f->w, 0, 1, &error));
  for (guint i = 1; i <= 6; i++)
    {
      g_autoptr(QStoreUnsafeEvent) event = NULL;
      g_autofree char *id = g_strdup_printf ("e%u", i);
      g_autofree char *key = g_strdup_printf ("k%u", i);

      event = window_upsert_event (id, i, key, "0");
      qstore_unsafe_event_set_record_arrival (event, TRUE);
      window_apply_expect (f->w, event, QSTORE_UNSAFE_OUTCOME_APPLIED, FALSE);
    }
  g_assert_true (qstore_unsafe_window_collect_eligible (f->w, 0, 1, "", &n, &error));
  g_assert_cmpuint (n, ==, 0);
  g_assert_true (qstore_unsafe_window_collect_eligible (f->w, 0, 2, S (4), &n, &error));
  g_assert_cmpuint (n, ==, 0);
  g_assert_true (qstore_unsafe_window_collect_eligible (f->w, 0, 1, S (4), &n, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (n, ==, 4);
  page = window_page (f->w, 0);
  g_assert_cmpstr (page, ==,
                   "k5=0 v5 000000000000000000500000000000 unsafe\n"
                   "k6=0 v6 000000000000000000600000000000 unsafe\n"
                   "total 2\n");
}

/* Composed pages */

static void
test_composed_pages (WindowFixture *f,
                     gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *page = NULL;

  /* Safe rows a (3), b (6), c (4); unsafe rows b (6, a tie), c (8), d (5),
   * e (tombstone over safe e), and one of another generation. */
  g_assert_true (qstore_unsafe_window_put_safe_row (f->w, 0, "a", "\"a-safe\"", 1, S (3), &error));
  g_assert_true (qstore_unsafe_window_put_safe_row (f->w, 0, "b", "\"b-safe\"", 1, S (6), &error));
  g_assert_true (qstore_unsafe_window_put_safe_row (f->w, 0, "c", "\"c-safe\"", 1, S (4), &error));
  g_assert_true (qstore_unsafe_window_put_safe_row (f->w, 0, "e", "\"e-safe\"", 1, S (1), &error));
  g_assert_no_error (error);
  window_put (f->w, "u6", 6, "b", "\"b-unsafe\"");
  window_put (f->w, "u8", 8, "c", "\"c-unsafe\"");
  window_put (f->w, "u5", 5, "d", "\"d-unsafe\"");
  {
    g_autoptr(QStoreUnsafeEvent) tomb = window_event ("u7", 7);
    g_autoptr(QStoreUnsafeEvent) other = window_upsert_event ("g1", 9, "z", "1");

    qstore_unsafe_event_add_tombstone (tomb, "e", 2, S (7));
    window_apply_expect (f->w, tomb, QSTORE_UNSAFE_OUTCOME_APPLIED, FALSE);
    qstore_unsafe_event_set_generation (other, 1);
    window_apply_expect (f->w, other, QSTORE_UNSAFE_OUTCOME_APPLIED, FALSE);
  }

  page = window_page (f->w, 0);
  g_assert_cmpstr (page, ==,
                   "a=\"a-safe\" v1 000000000000000000300000000000 safe\n"
                   "d=\"d-unsafe\" v5 000000000000000000500000000000 unsafe\n"
                   "b=\"b-safe\" v1 000000000000000000600000000000 safe\n"
                   "c=\"c-unsafe\" v8 000000000000000000800000000000 unsafe\n"
                   "total 4\n");
  g_free (page);
  page = window_page_full (f->w, 0, 2, 1, FALSE, &error);
  g_assert_cmpstr (page, ==,
                   "d=\"d-unsafe\" v5 000000000000000000500000000000 unsafe\n"
                   "b=\"b-safe\" v1 000000000000000000600000000000 safe\n"
                   "total 4\n");
  g_free (page);
  page = window_page_full (f->w, 0, 3, 0, TRUE, &error);
  g_assert_cmpstr (page, ==,
                   "c=\"c-unsafe\" v8 000000000000000000800000000000 unsafe\n"
                   "b=\"b-safe\" v1 000000000000000000600000000000 safe\n"
                   "d=\"d-unsafe\" v5 000000000000000000500000000000 unsafe\n"
                   "total 4\n");
  g_free (page);
  page = window_page_full (f->w, 0, 5, 4, FALSE, &error);
  g_assert_cmpstr (page, ==, "total 4\n");
  g_free (page);
  page = window_page_full (f->w, 0, 0, 0, FALSE, &error);
  g_assert_cmpstr (page, ==, "total 4\n");
  g_free (page);
  page = window_page (f->w, 2);
  g_assert_cmpstr (page, ==, "total 0\n");

  /* Equal SUIDs order by row key. */
  window_put (f->w, "u5b", 5, "a2", "0");
  g_free (page);
  page = window_page_full (f->w, 0, 2, 1, FALSE, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (page, ==,
                   "a2=0 v5 000000000000000000500000000000 unsafe\n"
                   "d=\"d-unsafe\" v5 000000000000000000500000000000 unsafe\n"
                   "total 5\n");

  g_assert_true (qstore_unsafe_window_delete_safe_row (f->w, 0, "a", &error));
  g_free (page);
  page = window_page_full (f->w, 0, 1, 0, FALSE, &error);
  g_assert_cmpstr (page, ==, "a2=0 v5 000000000000000000500000000000 unsafe\ntotal 4\n");
}

/* Bad input, and the window's own tables */

static void
test_bad_input (WindowFixture *f,
                gconstpointer  data)
{
  const char *bad_names[] = { "", "Upper", "1st", "a-b", "a b", "x123456789012345678901234567890123456789012345678" };
  g_autofree char *before = window_dump (f->t.db, WINDOW_NAME);
  g_autofree char *after = NULL;
  GError *error = NULL;
  gboolean flag;

  for (guint i = 0; i < G_N_ELEMENTS (bad_names); i++)
    {
      g_assert_null (qstore_unsafe_window_new (f->t.db, bad_names[i], &error));
      g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT);
      g_clear_error (&error);
    }

  {
    g_autoptr(QStoreUnsafeEvent) event = window_upsert_event ("e", 5, "k", "{\"a\": ");

    assert_event_refused (f->w, event, "upsert 1 (row “k”): its value");
  }
  {
    g_autoptr(QStoreUnsafeEvent) event = window_event ("e", 5);

    qstore_unsafe_event_add_patch (event, "k", "nope", 5, S (5));
    assert_event_refused (f->w, event, "patch 1 (row “k”): its patch");
  }
  {
    g_autoptr(QStoreUnsafeEvent) event = window_upsert_event ("e", 5, "k", "1");

    qstore_unsafe_event_add_index_entry (event, "i", "k", g_variant_new_boolean (TRUE));
    assert_event_refused (f->w, event, "index entry 1");
  }
  {
    g_autoptr(QStoreUnsafeEvent) event = window_upsert_event ("", 5, "k", "1");

    assert_event_refused (f->w, event, "event id");
  }
  {
    g_autoptr(QStoreUnsafeEvent) event = window_upsert_event ("e", 5, "k", "1");

    qstore_unsafe_event_set_generation (event, -1);
    assert_event_refused (f->w, event, "generation");
  }
  qstore_unsafe_window_put_safe_row (f->w, 0, "k", "{", 1, S (1), &error);
  assert_invalid_argument (error, "value_json");
  g_clear_error (&error);
  g_assert_null (qstore_unsafe_window_query_composed_page (f->w, -1, 1, 0, FALSE, NULL, &error));
  assert_invalid_argument (error, "generation");
  g_clear_error (&error);
  qstore_unsafe_window_observe_safe_receipt (f->w, 0, "", S (1), &error);
  assert_invalid_argument (error, "event_id");
  g_clear_error (&error);

  after = window_dump (f->t.db, WINDOW_NAME);
  g_assert_cmpstr (before, ==, after);

  /* A store whose commits can tear. */
  {
    g_autoptr(QStoreDatabase) torn = test_open_database ("memory:?atomic=0", QSTORE_OPEN_NONE);

    g_assert_null (qstore_unsafe_window_new (torn, "w", &error));
    g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_UNSUPPORTED);
    g_assert_nonnull (strstr (error->message, "atomic=0"));
    g_clear_error (&error);
    test_close_database (&torn);
  }

  /* A table in the way that is not a window's (SQL refuses the name to
   * users; another layer or an older version may have made it). */
  test_exec_fails (f->t.db, "CREATE TABLE _qstore_window_other_receipts (a, b)",
                   QSTORE_ERROR_INVALID_ARGUMENT, "are qstore's own");
  g_assert_true (qstore_database_exec_reserved (f->t.db,
                                                "CREATE TABLE _qstore_window_other_receipts (a, b)",
                                                NULL));
  g_assert_null (qstore_unsafe_window_new (f->t.db, "other", &error));
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_EXISTS);
  g_assert_nonnull (strstr (error->message, "_qstore_window_other_receipts"));
  g_clear_error (&error);

  /* A transaction of someone else (SQL's BEGIN opens it at the first
   * write). */
  test_exec (f->t.db, "CREATE TABLE t (a)");
  test_exec (f->t.db, "BEGIN");
  test_exec (f->t.db, "INSERT INTO t VALUES (1)");
  {
    g_autoptr(QStoreUnsafeEvent) event = window_upsert_event ("e", 5, "k", "1");
    g_autoptr(GError) refusal = window_apply_error (f->w, event);

    g_assert_error (refusal, QSTORE_ERROR, QSTORE_ERROR_BUSY);
  }
  g_assert_false (qstore_unsafe_window_has_target_receipt (f->w, "e", S (5), &flag, &error));
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_BUSY);
  g_clear_error (&error);
  test_exec (f->t.db, "ROLLBACK");
  window_put (f->w, "e", 5, "k", "1");

  /* A closed database. */
  test_close_database (&f->t.db);
  {
    g_autoptr(QStoreUnsafeEvent) event = window_upsert_event ("e2", 6, "k", "1");
    g_autoptr(GError) refusal = window_apply_error (f->w, event);

    g_assert_error (refusal, QSTORE_ERROR, QSTORE_ERROR_CLOSED);
  }
}

static void
test_internal_names (WindowFixture *f,
                     gconstpointer  data)
{
  g_auto(GStrv) tables = qstore_database_list_tables (f->t.db);

  for (guint i = 0; i < G_N_ELEMENTS (window_parts); i++)
    {
      g_autofree char *name = g_strdup_printf ("_qstore_window_%s_%s", WINDOW_NAME, window_parts[i]);

      g_assert_true (qstore_unsafe_window_is_internal_table_name (name));
    }
  /* The database holds the window's tables and nothing else, and the
   * user's list of tables leaves them out. */
  g_assert_cmpuint (g_strv_length (tables), ==, 0);
  {
    g_autoptr(GError) error = NULL;
    QStoreProvider *provider = qstore_database_get_provider (f->t.db);
    g_autoptr(GListModel) entries = qstore_catalog_list_entries (provider, &error);
    guint n_window_tables = 0;

    g_assert_no_error (error);
    for (guint i = 0; i < g_list_model_get_n_items (entries); i++)
      {
        g_autoptr(QStoreCatalogEntry) entry = g_list_model_get_item (entries, i);

        if (qstore_catalog_entry_get_kind (entry) != QSTORE_CATALOG_KEY_TABLE)
          continue;
        g_assert_true (qstore_unsafe_window_is_internal_table_name (
                         qstore_catalog_entry_get_name (entry)));
        n_window_tables++;
      }
    g_assert_cmpuint (n_window_tables, ==, G_N_ELEMENTS (window_parts));
  }

  g_assert_true (qstore_unsafe_window_is_internal_table_name ("_QSTORE_WINDOW_my_view_rows"));
  g_assert_false (qstore_unsafe_window_is_internal_table_name ("_qstore_window__rows"));
  g_assert_false (qstore_unsafe_window_is_internal_table_name ("_qstore_window_x_other"));
  g_assert_false (qstore_unsafe_window_is_internal_table_name ("qstore_window_x_rows"));
  g_assert_false (qstore_unsafe_window_is_internal_table_name ("orders"));
  g_assert_false (qstore_unsafe_window_is_internal_table_name ("_qstore_staging_orders"));
}

/* What a window holds survives a reopen, and a second window of another
 * name shares nothing with it. */
static void
test_reopen (WindowFixture *f,
             gconstpointer  data)
{
  g_autoptr(QStoreUnsafeWindow) other = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *page = NULL;
  g_autofree char *dump = NULL;
  g_autofree char *reopened = NULL;

  window_put (f->w, "e5", 5, "a", "5");
  other = qstore_unsafe_window_new (f->t.db, "other", &error);
  g_assert_no_error (error);
  page = window_page (other, 0);
  g_assert_cmpstr (page, ==, "total 0\n");
  window_put (other, "e5", 5, "a", "50");

  if (!test_provider_persistent ())
    return;
  dump = window_dump (f->t.db, WINDOW_NAME);
  g_clear_object (&other);
  window_fixture_reopen (f);
  reopened = window_dump (f->t.db, WINDOW_NAME);
  g_assert_cmpstr (dump, ==, reopened);
  {
    g_autoptr(QStoreUnsafeEvent) again = window_upsert_event ("e5", 5, "a", "5");

    window_apply_expect (f->w, again, QSTORE_UNSAFE_OUTCOME_NO_CHANGE, TRUE);
  }
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/window/suid/validate", test_suid_validate);
  WINDOW_TEST ("/window/suid/entry-points", test_suid_entry_points);
  WINDOW_TEST ("/window/suid/stored", test_stored_invalid_suid);
  WINDOW_TEST ("/window/outcome/each", test_outcomes);
  WINDOW_TEST ("/window/outcome/complete-event", test_outcome_complete_event);
  WINDOW_TEST ("/window/outcome/tombstone", test_outcome_tombstone);
  WINDOW_TEST ("/window/error/suid-contradiction", test_suid_contradiction);
  WINDOW_TEST ("/window/error/row-cas-mismatch", test_row_cas);
  WINDOW_TEST ("/window/error/safe-ahead", test_safe_ahead);
  WINDOW_TEST ("/window/error/duplicate-race", test_duplicate_race);
  WINDOW_TEST ("/window/error/receipt-not-found", test_receipt_not_found);
  WINDOW_TEST ("/window/safe-receipt", test_safe_receipt);
  WINDOW_TEST ("/window/arrival/latch", test_arrival_latch);
  WINDOW_TEST ("/window/arrival/recorded-on-refusal", test_arrival_recorded_on_refusal);
  WINDOW_TEST ("/window/receipts", test_receipts);
  WINDOW_TEST ("/window/kicks", test_kicks);
  WINDOW_TEST ("/window/kicks/target-after-gc", test_kick_target_after_gc);
  WINDOW_TEST ("/window/gc/predicates", test_gc_predicates);
  WINDOW_TEST ("/window/gc/collect-eligible", test_collect_eligible);
  WINDOW_TEST ("/window/pages", test_composed_pages);
  WINDOW_TEST ("/window/bad-input", test_bad_input);
  WINDOW_TEST ("/window/internal-names", test_internal_names);
  WINDOW_TEST ("/window/reopen", test_reopen);

  return g_test_run ();
}
