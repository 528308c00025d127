/* window-test-util.h: what the unsafe window's C tests share
 *
 * SUIDs by number, events, a fixture (a database of the provider under
 * test with one window), outcomes and refusals that must happen, a dump
 * of every table of a window (to prove a refused operation left nothing
 * behind) and composed pages as text.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "qstore-test-util.h"
#include "qstore-database-private.h"
#include "qstore-fault-private.h"
#include "qstore-unsafe-window-private.h"

G_BEGIN_DECLS

#define WINDOW_NAME "w"

/* The parts of a window, as its table names end. */
static const char * const window_parts[] = {
  "rows", "safe_rows", "index_entries", "receipts", "wait_receipts", "markers",
  "arrivals", "kicks", "generations", "active",
};

/* SUIDs */

/* The SUID of tick @n and random part @r; kept for the life of the test
 * program, so callers never free it. */
static inline const char *
window_suid_r (guint64 n,
               guint64 r)
{
  static GHashTable *interned;
  static GMutex lock;
  g_autofree char *suid = qstore_suid_new_from_parts (n, r, NULL);
  const char *kept;

  g_mutex_lock (&lock);
  if (interned == NULL)
    interned = g_hash_table_new (g_str_hash, g_str_equal);
  kept = g_hash_table_lookup (interned, suid);
  if (kept == NULL)
    {
      kept = g_strdup (suid);
      g_hash_table_add (interned, (char *) kept);
    }
  g_mutex_unlock (&lock);
  return kept;
}

/* SUID number @n: they order as their numbers. */
static inline const char *
S (guint64 n)
{
  return window_suid_r (n, 0);
}

/* Directories */

/* A new directory for a store. The window's loops commit thousands of
 * times; what they test is the process dying (SIGKILL) or a commit
 * failing, never the machine losing power, so a memory-backed file
 * system does as well as a disk and much faster: /dev/shm when there is
 * one. */
static inline char *
window_test_make_dir (const char *tmpl)
{
  g_autofree char *path = NULL;

  if (g_file_test ("/dev/shm", G_FILE_TEST_IS_DIR) && g_access ("/dev/shm", W_OK) == 0)
    {
      path = g_build_filename ("/dev/shm", tmpl, NULL);
      if (g_mkdtemp (path) != NULL)
        return g_steal_pointer (&path);
    }
  return test_make_tmp_dir (tmpl);
}

/* Events */

/* An event @id of SUID @n, stamped with time @n, that upserts @key to
 * @value (version @n, from its own SUID). */
static inline QStoreUnsafeEvent *
window_upsert_event (const char *id,
                     guint64     n,
                     const char *key,
                     const char *value)
{
  QStoreUnsafeEvent *event = qstore_unsafe_event_new (id, S (n));

  qstore_unsafe_event_set_updated_at (event, (gint64) n);
  if (key != NULL)
    qstore_unsafe_event_add_upsert (event, key, value, (gint64) n, S (n));
  return event;
}

/* An event with no mutation yet. */
static inline QStoreUnsafeEvent *
window_event (const char *id,
              guint64     n)
{
  return window_upsert_event (id, n, NULL, NULL);
}

/* Outcomes and refusals */

static inline void
window_apply_expect (QStoreUnsafeWindow  *window,
                     QStoreUnsafeEvent   *event,
                     QStoreUnsafeOutcome  outcome,
                     gboolean             duplicate)
{
  g_autoptr(GError) error = NULL;
  QStoreUnsafeOutcome got = -1;
  gboolean got_duplicate = -1;

  if (!qstore_unsafe_window_apply (window, event, &got, &got_duplicate, &error))
    g_error ("Applying event “%s” failed: %s", qstore_unsafe_event_get_event_id (event),
             error->message);
  if (got != outcome || got_duplicate != duplicate)
    g_error ("Applying event “%s” gave outcome %d (duplicate %d), not %d (duplicate %d)",
             qstore_unsafe_event_get_event_id (event), got, got_duplicate, outcome, duplicate);
}

/* Applies @event, which must fail; returns the error. */
static inline GError *
window_apply_error (QStoreUnsafeWindow *window,
                    QStoreUnsafeEvent  *event)
{
  GError *error = NULL;
  QStoreUnsafeOutcome outcome;
  gboolean duplicate;

  if (qstore_unsafe_window_apply (window, event, &outcome, &duplicate, &error))
    g_error ("Applying event “%s” succeeded (outcome %d) where it should fail",
             qstore_unsafe_event_get_event_id (event), outcome);
  g_assert_nonnull (error);
  return error;
}

#define window_assert_refused(window, event, code) \
  G_STMT_START { \
    g_autoptr(GError) _refusal = window_apply_error ((window), (event)); \
    g_assert_error (_refusal, QSTORE_UNSAFE_WINDOW_ERROR, (code)); \
  } G_STMT_END

/* Applies a plain upsert, which must apply. */
static inline void
window_put (QStoreUnsafeWindow *window,
            const char         *id,
            guint64             n,
            const char         *key,
            const char         *value)
{
  g_autoptr(QStoreUnsafeEvent) event = window_upsert_event (id, n, key, value);

  window_apply_expect (window, event, QSTORE_UNSAFE_OUTCOME_APPLIED, FALSE);
}

/* Reads */

static inline void
window_append_value (GString  *out,
                     GVariant *value)
{
  if (qstore_value_is_null (value))
    g_string_append (out, "NULL");
  else if (g_variant_is_of_type (value, G_VARIANT_TYPE_INT64))
    g_string_append_printf (out, "%" G_GINT64_FORMAT, g_variant_get_int64 (value));
  else if (g_variant_is_of_type (value, G_VARIANT_TYPE_DOUBLE))
    g_string_append_printf (out, "%.17g", g_variant_get_double (value));
  else if (g_variant_is_of_type (value, G_VARIANT_TYPE_STRING))
    g_string_append_printf (out, "'%s'", g_variant_get_string (value, NULL));
  else
    g_string_append (out, "<blob>");
}

/* Every row of every table of window @name, table by table. */
static inline char *
window_dump (QStoreDatabase *db,
             const char     *name)
{
  GString *out = g_string_new (NULL);

  for (guint i = 0; i < G_N_ELEMENTS (window_parts); i++)
    {
      g_autofree char *sql = g_strdup_printf ("SELECT * FROM _qstore_window_%s_%s", name,
                                              window_parts[i]);
      g_autofree char *rows = test_query_text (db, sql, window_append_value);

      g_string_append_printf (out, "[%s]\n%s", window_parts[i], rows);
    }
  return g_string_free (out, FALSE);
}

/* A composed page as text, one row a line: key=value v<version> <suid>
 * <layer>, then the total. NULL with the error when the read fails. */
static inline char *
window_page_full (QStoreUnsafeWindow  *window,
                  gint64               generation,
                  guint                limit,
                  guint                offset,
                  gboolean             descending,
                  GError             **error)
{
  g_autoptr(GListModel) page = NULL;
  GString *out;
  guint total = 0;

  page = qstore_unsafe_window_query_composed_page (window, generation, limit, offset,
                                                   descending, &total, error);
  if (page == NULL)
    return NULL;

  out = g_string_new (NULL);
  for (guint i = 0; i < g_list_model_get_n_items (page); i++)
    {
      g_autoptr(QStoreUnsafeRow) row = g_list_model_get_item (page, i);

      g_string_append_printf (out, "%s=%s v%" G_GINT64_FORMAT " %s %s\n",
                              qstore_unsafe_row_get_row_key (row),
                              qstore_unsafe_row_get_value_json (row),
                              qstore_unsafe_row_get_row_version (row),
                              qstore_unsafe_row_get_source_suid (row),
                              qstore_unsafe_row_get_safe (row) ? "safe" : "unsafe");
    }
  g_string_append_printf (out, "total %u\n", total);
  return g_string_free (out, FALSE);
}

/* The whole view of @generation, which must be readable. */
static inline char *
window_page (QStoreUnsafeWindow *window,
             gint64              generation)
{
  g_autoptr(GError) error = NULL;
  char *text = window_page_full (window, generation, G_MAXUINT, 0, FALSE, &error);

  g_assert_no_error (error);
  return text;
}

/* The fixture */

typedef struct
{
  TestDatabase        t;
  QStoreUnsafeWindow *w;
} WindowFixture;

static inline void
window_fixture_open (WindowFixture *f)
{
  g_autoptr(GError) error = NULL;

  f->w = qstore_unsafe_window_new (f->t.db, WINDOW_NAME, &error);
  g_assert_no_error (error);
}

static inline void
window_fixture_set_up (WindowFixture *f,
                       gconstpointer  data)
{
  f->t.dir = window_test_make_dir ("qstore-window-XXXXXX");
  f->t.uri = test_provider_uri (f->t.dir, "store");
  f->t.db = test_open_database (f->t.uri, QSTORE_OPEN_NONE);
  window_fixture_open (f);
}

/* Closes cleanly and opens again (memory stores start over). */
static inline void
window_fixture_reopen (WindowFixture *f)
{
  g_clear_object (&f->w);
  test_database_reopen (&f->t);
  window_fixture_open (f);
}

/* Starts over with an empty store at the same place. */
static inline void
window_fixture_recreate (WindowFixture *f)
{
  g_clear_object (&f->w);
  test_close_database (&f->t.db);
  test_remove_tree (f->t.dir);
  g_assert_cmpint (g_mkdir (f->t.dir, 0700), ==, 0);
  f->t.db = test_open_database (f->t.uri, QSTORE_OPEN_NONE);
  window_fixture_open (f);
}

static inline void
window_fixture_tear_down (WindowFixture *f,
                          gconstpointer  data)
{
  _qstore_fault_disarm_all ();
  g_clear_object (&f->w);
  test_database_tear_down (&f->t, data);
}

#define WINDOW_TEST(path, func) \
  g_test_add ((path), WindowFixture, NULL, window_fixture_set_up, (func), window_fixture_tear_down)

G_END_DECLS
