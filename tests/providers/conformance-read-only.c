/* conformance-read-only.c: a read-only session leaves a location as it
 * found it
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "conformance.h"

/* Reads everything there is, every way there is. */
static void
read_session (const char *uri)
{
  g_autoptr(QStoreProvider) provider = open_provider (uri, QSTORE_OPEN_READ_ONLY);
  g_autoptr(QStoreSnapshot) snapshot = NULL;
  g_autoptr(QStoreCheckReport) report = NULL;
  g_autoptr(GError) error = NULL;
  g_auto(GStrv) names = qstore_provider_list_stores (provider, &error);

  g_assert_no_error (error);
  g_assert_nonnull (names[0]);
  snapshot = qstore_provider_begin_snapshot (provider, &error);
  g_assert_no_error (error);
  for (guint i = 0; names[i] != NULL; i++)
    {
      g_autoptr(QStoreKV) kv = store_of (provider, names[i]);
      g_autoptr(QStoreIter) iter = qstore_snapshot_iterate (snapshot, kv, NULL, &error);
      g_autofree char *keys = NULL;
      g_autofree char *again = NULL;

      g_assert_no_error (error);
      keys = collect (iter);
      again = scan (kv, NULL);
      g_assert_cmpstr (keys, ==, again);
      g_free (get (kv, "k1"));
    }
  report = qstore_provider_check (provider, &error);
  g_assert_no_error (error);
  g_assert_true (qstore_check_report_is_clean (report));
  qstore_provider_close_all (provider);
}

/* The files of the location, and, unless @names_only, what they hold:
 * the lock files readers register in (LMDB's lock.mdb, SQLite's -shm)
 * change by design and are compared by name only. */
static void
assert_same_files (GHashTable *before,
                   GHashTable *after,
                   gboolean    names_only)
{
  GHashTableIter iter;
  gpointer name, sum;

  g_hash_table_iter_init (&iter, after);
  while (g_hash_table_iter_next (&iter, &name, &sum))
    if (!g_hash_table_contains (before, name))
      g_error ("a read-only session left a new file: %s", (const char *) name);
  g_hash_table_iter_init (&iter, before);
  while (g_hash_table_iter_next (&iter, &name, &sum))
    {
      const char *now = g_hash_table_lookup (after, name);

      if (now == NULL)
        g_error ("a read-only session removed %s", (const char *) name);
      if (!names_only && !g_str_has_suffix (name, "lock.mdb") &&
          !g_str_has_suffix (name, "-shm") && !g_str_equal (now, sum))
        g_error ("a read-only session changed %s", (const char *) name);
    }
}

static void
write_some (QStoreProvider *provider)
{
  g_autoptr(QStoreKV) kv = store_of (provider, "main.t");
  g_autofree char *big = g_strnfill (20000, 'b');

  put (kv, "k1", "v1");
  put (kv, "k2", big);
}

static void
test_read_only_no_trace (Fixture       *f,
                         gconstpointer  data)
{
  g_autoptr(GHashTable) before = NULL;
  g_autoptr(GHashTable) after = NULL;

  if (!persistent (f))
    {
      g_test_skip ("a memory store has no files");
      return;
    }

  /* No writer: the location is exactly as the writer left it. */
  write_some (f->provider);
  qstore_provider_close_all (f->provider);
  before = test_checksum_tree (f->dir);
  read_session (f->uri);
  after = test_checksum_tree (f->dir);
  assert_same_files (before, after, FALSE);
  g_clear_pointer (&before, g_hash_table_unref);
  g_clear_pointer (&after, g_hash_table_unref);

  /* Beside a writer: no file appears or goes. */
  reopen (f, QSTORE_OPEN_NONE);
  write_some (f->provider);
  before = test_checksum_tree (f->dir);
  read_session (f->uri);
  after = test_checksum_tree (f->dir);
  assert_same_files (before, after, TRUE);
}

void
conformance_add_read_only_tests (const char *prefix)
{
  g_autofree char *path = g_strconcat (prefix, "/read-only/no-trace", NULL);

  g_test_add (path, Fixture, NULL, fixture_setup, test_read_only_no_trace, fixture_teardown);
}
