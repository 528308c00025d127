/* conformance-check.c: qstore_provider_check() on every provider, and on
 * damage planted in each provider's files
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <fcntl.h>
#include <glib/gstdio.h>
#include <sqlite3.h>
#include <string.h>
#include <unistd.h>

#include <json-glib/json-glib.h>

#include "conformance.h"

static gboolean
report_mentions (QStoreCheckReport *report,
                 const char        *scope,
                 const char        *object,
                 const char        *text)
{
  for (guint i = 0; i < qstore_check_report_get_n_problems (report); i++)
    {
      const QStoreCheckProblem *p = qstore_check_report_get_problem (report, i);

      if (g_str_equal (qstore_check_problem_get_scope (p), scope) &&
          (object == NULL || g_str_has_suffix (qstore_check_problem_get_object (p), object)) &&
          strstr (qstore_check_problem_get_message (p), text) != NULL)
        return TRUE;
    }
  return FALSE;
}

static void
print_report (QStoreCheckReport *report)
{
  g_autofree char *json = qstore_check_report_to_json (report);

  g_test_message ("report: %s", json);
}

/* A store in good order checks clean, and the report says what it read. */
static void
test_check_clean (Fixture       *f,
                  gconstpointer  data)
{
  g_autoptr(QStoreCheckReport) report = NULL;
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GError) error = NULL;
  g_autofree char *json = NULL;
  const char *names[] = { "main.a", "main.b", "__catalog__" };
  guint64 n_entries = 0;

  for (guint i = 0; i < G_N_ELEMENTS (names); i++)
    {
      g_autoptr(QStoreKV) kv = store (f, names[i]);

      for (guint j = 0; j <= 10 * i; j++)
        {
          g_autofree char *key = g_strdup_printf ("key %03u", j);

          put (kv, key, "value");
          n_entries++;
        }
    }
  /* Bigger than a page of any provider. */
  {
    g_autoptr(QStoreKV) kv = store (f, "main.a");
    g_autofree char *big = g_strnfill (100000, 'x');

    put (kv, "big", big);
    n_entries++;
  }
  if (persistent (f))
    reopen (f, QSTORE_OPEN_READ_ONLY);

  report = qstore_provider_check (f->provider, &error);
  g_assert_no_error (error);
  print_report (report);
  g_assert_true (qstore_check_report_is_clean (report));
  g_assert_cmpuint (qstore_check_report_get_n_problems (report), ==, 0);
  g_assert_cmpuint (qstore_check_report_get_n_checked (report, QSTORE_CHECK_SCOPE_STORE), ==,
                    G_N_ELEMENTS (names));
  g_assert_cmpuint (qstore_check_report_get_n_checked_items (report, QSTORE_CHECK_SCOPE_STORE),
                    ==, n_entries);
  if (persistent (f))
    g_assert_cmpuint (qstore_check_report_get_n_checked (report, QSTORE_CHECK_SCOPE_FILE), ==, 1);

  json = qstore_check_report_to_json (report);
  json_parser_load_from_data (parser, json, -1, &error);
  g_assert_no_error (error);
  g_assert_true (json_object_get_boolean_member (json_node_get_object (json_parser_get_root (parser)),
                                                 "clean"));
}

static void
test_check_closed (Fixture       *f,
                   gconstpointer  data)
{
  g_autoptr(QStoreCheckReport) report = NULL;
  g_autoptr(GError) error = NULL;

  qstore_provider_close_all (f->provider);
  report = qstore_provider_check (f->provider, &error);
  g_assert_null (report);
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_CLOSED);
}

/* Fills main.t, in one write, with keys that fit on one page, and closes
 * the store. */
static void
fill_and_close (Fixture *f)
{
  g_autoptr(QStoreKV) kv = store (f, "main.t");
  g_autoptr(QStoreBatch) batch = qstore_kv_new_batch (kv);
  g_autoptr(GError) error = NULL;

  for (guint i = 0; i < 20; i++)
    {
      g_autofree char *key = g_strdup_printf ("planted-%02u", i);

      qstore_batch_put (batch, (const guint8 *) key, strlen (key), (const guint8 *) "v", 1);
    }
  qstore_batch_write (batch, QSTORE_WRITE_SYNC, &error);
  g_assert_no_error (error);
  g_clear_object (&batch);
  g_clear_object (&kv);
  qstore_provider_close_all (f->provider);
  g_clear_object (&f->provider);
}

/* lmdb: two entries of a leaf page swap places. The structure is
 * otherwise sound, so only the order gives it away: opening refuses it,
 * and a check (of a store opened without the walk) names the store. Every
 * page holding the keys is changed: pages of older versions may linger
 * among the free ones. */
static void
plant_lmdb (Fixture *f)
{
  g_autofree char *path = g_build_filename (f->dir, "store", "data.mdb", NULL);
  g_autofree char *contents = NULL;
  const char *hit, *from;
  gsize len;
  guint n_planted = 0;
  int fd;

  g_assert_true (g_file_get_contents (path, &contents, &len, NULL));
  fd = open (path, O_WRONLY);
  g_assert_cmpint (fd, >=, 0);
  for (from = contents; (hit = memmem (from, len - (from - contents), "planted-05", 10)) != NULL;
       from = hit + 10)
    {
      gsize page = (hit - contents) / 4096 * 4096;
      guint16 first, second;

      /* A leaf page (flags at 10), whose entry offsets start at 16. */
      if (contents[page + 10] != 0x02)
        continue;
      memcpy (&first, contents + page + 16, 2);
      memcpy (&second, contents + page + 18, 2);
      g_assert_cmpint (pwrite (fd, &second, 2, page + 16), ==, 2);
      g_assert_cmpint (pwrite (fd, &first, 2, page + 18), ==, 2);
      n_planted++;
    }
  close (fd);
  g_assert_cmpuint (n_planted, >, 0);
}

/* sqlite: an entry of a store that does not exist, and a page of garbage
 * in the middle of the kv table. */
static void
plant_sqlite_orphan (Fixture *f)
{
  g_autofree char *path = g_build_filename (f->dir, "store.db", NULL);
  sqlite3 *db = NULL;

  g_assert_cmpint (sqlite3_open (path, &db), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_exec (db, "INSERT INTO kv VALUES (4242, x'6b', x'76')", NULL, NULL,
                                 NULL), ==, SQLITE_OK);
  sqlite3_close (db);
}

static void
plant_sqlite_garbage (Fixture *f)
{
  g_autofree char *path = g_build_filename (f->dir, "store.db", NULL);
  g_autofree char *contents = NULL;
  gsize len, page;
  guint8 garbage[512];
  int fd;

  g_assert_true (g_file_get_contents (path, &contents, &len, NULL));
  page = ((const char *) memmem (contents, len, "planted-05", 10) - contents) / 4096 * 4096;
  g_assert_cmpuint (page, >, 0);
  for (guint i = 0; i < sizeof garbage; i++)
    garbage[i] = (guint8) (i * 37 + 11);
  fd = open (path, O_WRONLY);
  g_assert_cmpint (fd, >=, 0);
  /* Over the page's header and cell pointers. */
  g_assert_cmpint (pwrite (fd, garbage, sizeof garbage, page), ==, sizeof garbage);
  close (fd);
}

static QStoreCheckReport *
check_uri (const char *uri)
{
  g_autoptr(QStoreProvider) provider = open_provider (uri, QSTORE_OPEN_READ_ONLY);
  g_autoptr(GError) error = NULL;
  QStoreCheckReport *report = qstore_provider_check (provider, &error);

  g_assert_no_error (error);
  print_report (report);
  return report;
}

static void
test_check_planted (Fixture       *f,
                    gconstpointer  data)
{
  g_autofree char *name = test_provider_name ();
  g_autofree char *base = g_strndup (f->uri, strcspn (f->uri, "?"));

  if (!persistent (f))
    {
      g_test_skip ("a memory store has no files to damage");
      return;
    }
  fill_and_close (f);

  if (g_str_equal (name, "postgres"))
    {
      g_autoptr(QStoreCheckReport) orphan = NULL;
      g_autofree char *schema = pg_schema_of (f->uri);

      pg_plant_orphan (f->uri);
      orphan = check_uri (f->uri);
      g_assert_true (report_mentions (orphan, QSTORE_CHECK_SCOPE_FILE, schema,
                                      "1 entries belong to no store"));
    }
  else if (g_str_equal (name, "lmdb"))
    {
      g_autofree char *unchecked = g_strconcat (base, "?verify=meta", NULL);
      g_autoptr(QStoreProvider) refused = NULL;
      g_autoptr(QStoreCheckReport) report = NULL;
      g_autoptr(GError) error = NULL;

      plant_lmdb (f);
      refused = qstore_provider_new_for_uri (f->uri, QSTORE_OPEN_READ_ONLY, &error);
      g_assert_null (refused);
      g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_CORRUPT);
      g_assert_nonnull (strstr (error->message, "“main.t”"));
      g_assert_nonnull (strstr (error->message, "out of order"));

      report = check_uri (unchecked);
      g_assert_false (qstore_check_report_is_clean (report));
      g_assert_true (report_mentions (report, QSTORE_CHECK_SCOPE_STORE, "main.t", "out of order"));
      /* Reading a damaged structure is not safe: the stores are not read. */
      g_assert_cmpuint (qstore_check_report_get_n_checked (report, QSTORE_CHECK_SCOPE_STORE), ==, 0);
      g_assert_nonnull (qstore_check_report_get_notes (report)[0]);
    }
  else
    {
      g_autoptr(QStoreCheckReport) orphan = NULL;
      g_autoptr(QStoreCheckReport) garbage = NULL;

      plant_sqlite_orphan (f);
      orphan = check_uri (f->uri);
      g_assert_true (report_mentions (orphan, QSTORE_CHECK_SCOPE_FILE, "store.db",
                                      "1 entries belong to no store"));

      plant_sqlite_garbage (f);
      garbage = check_uri (f->uri);
      g_assert_false (qstore_check_report_is_clean (garbage));
      g_assert_cmpuint (qstore_check_report_get_n_checked (garbage, QSTORE_CHECK_SCOPE_STORE), ==, 0);
    }
}

/* Odd locations get messages that say what is there. */
static void
test_check_odd_locations (Fixture       *f,
                          gconstpointer  data)
{
  g_autofree char *name = test_provider_name ();
  g_autoptr(QStoreProvider) provider = NULL;
  g_autoptr(GError) error = NULL;

  if (g_str_equal (name, "lmdb"))
    {
      g_autofree char *empty = g_build_filename (f->dir, "empty", NULL);
      g_autofree char *empty_data = g_build_filename (empty, "data.mdb", NULL);
      g_autofree char *dangling = g_build_filename (f->dir, "dangling", NULL);
      g_autofree char *dangling_data = g_build_filename (dangling, "data.mdb", NULL);

      /* An empty data.mdb: not "Bad file descriptor". */
      g_assert_cmpint (g_mkdir (empty, 0755), ==, 0);
      g_assert_true (g_file_set_contents (empty_data, "", 0, NULL));
      provider = qstore_provider_new ("lmdb", empty, QSTORE_OPEN_READ_ONLY, &error);
      g_assert_null (provider);
      g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_NOT_FOUND);
      g_assert_nonnull (strstr (error->message, "data.mdb is missing or empty"));
      g_clear_error (&error);

      /* A writable open that cannot make data.mdb does not say "open it
       * for writing". */
      g_assert_cmpint (g_mkdir (dangling, 0755), ==, 0);
      g_assert_cmpint (symlink ("no/such/dir/data.mdb", dangling_data), ==, 0);
      provider = qstore_provider_new ("lmdb", dangling, QSTORE_OPEN_NONE, &error);
      g_assert_null (provider);
      g_assert_nonnull (strstr (error->message, dangling));
      g_assert_null (strstr (error->message, "open it for writing"));
      g_clear_error (&error);
    }
  else if (g_str_equal (name, "sqlite"))
    {
      provider = qstore_provider_new_for_uri ("sqlite::memory:", QSTORE_OPEN_NONE, &error);
      g_assert_null (provider);
      g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT);
      g_assert_nonnull (strstr (error->message, "memory:"));
      g_assert_null (strstr (error->message, "write-ahead"));
    }
  else if (g_str_equal (name, "postgres"))
    {
      /* A file name where a connection string belongs. */
      provider = qstore_provider_new ("postgres", "/var/db/store.db", QSTORE_OPEN_NONE, &error);
      g_assert_null (provider);
      g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT);
      g_assert_nonnull (strstr (error->message, "connection string"));
    }
  else
    g_test_skip ("memory: takes no location");
}

/* The generic part of the check, on a provider whose store iterates out
 * of order (no real provider can be made to). */

#define TEST_TYPE_DISORDER_PROVIDER (test_disorder_provider_get_type ())
G_DECLARE_FINAL_TYPE (TestDisorderProvider, test_disorder_provider, TEST, DISORDER_PROVIDER, GObject)
#define TEST_TYPE_DISORDER_KV (test_disorder_kv_get_type ())
G_DECLARE_FINAL_TYPE (TestDisorderKV, test_disorder_kv, TEST, DISORDER_KV, GObject)
#define TEST_TYPE_DISORDER_ITER (test_disorder_iter_get_type ())
G_DECLARE_FINAL_TYPE (TestDisorderIter, test_disorder_iter, TEST, DISORDER_ITER, QStoreIter)

static const char * const disorder_keys[] = { "a", "c", "b", "d", "d" };

struct _TestDisorderProvider { GObject parent_instance; };
struct _TestDisorderKV { GObject parent_instance; QStoreProvider *provider; };
struct _TestDisorderIter { QStoreIter parent_instance; int pos; };

static void test_disorder_provider_iface_init (QStoreProviderInterface *iface);
static void test_disorder_initable_iface_init (GInitableIface *iface);
static void test_disorder_kv_iface_init (QStoreKVInterface *iface);

G_DEFINE_TYPE_WITH_CODE (TestDisorderProvider, test_disorder_provider, G_TYPE_OBJECT,
                         G_IMPLEMENT_INTERFACE (G_TYPE_INITABLE, test_disorder_initable_iface_init)
                         G_IMPLEMENT_INTERFACE (QSTORE_TYPE_PROVIDER,
                                                test_disorder_provider_iface_init))
G_DEFINE_TYPE_WITH_CODE (TestDisorderKV, test_disorder_kv, G_TYPE_OBJECT,
                         G_IMPLEMENT_INTERFACE (QSTORE_TYPE_KV, test_disorder_kv_iface_init))
G_DEFINE_TYPE (TestDisorderIter, test_disorder_iter, QSTORE_TYPE_ITER)

static gboolean
test_disorder_iter_advance (QStoreIter  *iter,
                            GError     **error)
{
  TestDisorderIter *self = TEST_DISORDER_ITER (iter);

  return ++self->pos < (int) G_N_ELEMENTS (disorder_keys);
}

static const guint8 *
test_disorder_iter_peek (QStoreIter *iter,
                         gsize      *len)
{
  const char *key = disorder_keys[TEST_DISORDER_ITER (iter)->pos];

  *len = strlen (key);
  return (const guint8 *) key;
}

static void
test_disorder_iter_class_init (TestDisorderIterClass *klass)
{
  QSTORE_ITER_CLASS (klass)->advance = test_disorder_iter_advance;
  QSTORE_ITER_CLASS (klass)->peek_key = test_disorder_iter_peek;
  QSTORE_ITER_CLASS (klass)->peek_value = test_disorder_iter_peek;
}

static void
test_disorder_iter_init (TestDisorderIter *self)
{
  self->pos = -1;
}

static const char *
test_disorder_kv_get_name (QStoreKV *kv)
{
  return "main.t";
}

static QStoreProvider *
test_disorder_kv_get_provider (QStoreKV *kv)
{
  return TEST_DISORDER_KV (kv)->provider;
}

static QStoreIter *
test_disorder_kv_iterate (QStoreKV            *kv,
                          const QStoreBounds  *bounds,
                          GError             **error)
{
  return g_object_new (TEST_TYPE_DISORDER_ITER, "bounds", bounds, NULL);
}

static void
test_disorder_kv_iface_init (QStoreKVInterface *iface)
{
  iface->get_name = test_disorder_kv_get_name;
  iface->get_provider = test_disorder_kv_get_provider;
  iface->iterate = test_disorder_kv_iterate;
}

static void
test_disorder_kv_finalize (GObject *object)
{
  g_clear_object (&TEST_DISORDER_KV (object)->provider);
  G_OBJECT_CLASS (test_disorder_kv_parent_class)->finalize (object);
}

static void
test_disorder_kv_class_init (TestDisorderKVClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = test_disorder_kv_finalize;
}

static void
test_disorder_kv_init (TestDisorderKV *self)
{
}

static QStoreKV *
test_disorder_open_store (QStoreProvider  *provider,
                          const char      *name,
                          GError         **error)
{
  TestDisorderKV *kv = g_object_new (TEST_TYPE_DISORDER_KV, NULL);

  kv->provider = g_object_ref (provider);
  return QSTORE_KV (kv);
}

static char **
test_disorder_list_stores (QStoreProvider  *provider,
                           GError         **error)
{
  const char *names[] = { "main.t", NULL };

  return g_strdupv ((char **) names);
}

static void
test_disorder_close (QStoreProvider *provider)
{
}

static void
test_disorder_provider_iface_init (QStoreProviderInterface *iface)
{
  iface->open_store = test_disorder_open_store;
  iface->list_stores = test_disorder_list_stores;
  iface->close = test_disorder_close;
}

static gboolean
test_disorder_init (GInitable     *initable,
                    GCancellable  *cancellable,
                    GError       **error)
{
  return TRUE;
}

static void
test_disorder_initable_iface_init (GInitableIface *iface)
{
  iface->init = test_disorder_init;
}

static void
test_disorder_provider_class_init (TestDisorderProviderClass *klass)
{
}

static void
test_disorder_provider_init (TestDisorderProvider *self)
{
}

static void
test_check_key_order (void)
{
  g_autoptr(QStoreProvider) provider = NULL;
  g_autoptr(QStoreCheckReport) report = NULL;
  g_autoptr(GError) error = NULL;
  const QStoreCheckProblem *problem;
  gsize len;
  const char *key;

  /* Loading the plugins registers the extension point. */
  g_strfreev (qstore_list_providers ());
  g_io_extension_point_implement (QSTORE_PROVIDER_EXTENSION_POINT_NAME,
                                  TEST_TYPE_DISORDER_PROVIDER, "test-disorder", 0);
  provider = qstore_provider_new ("test-disorder", NULL, QSTORE_OPEN_NONE, &error);
  g_assert_no_error (error);

  report = qstore_provider_check (provider, &error);
  g_assert_no_error (error);
  print_report (report);
  /* "b" after "c", and the second "d". */
  g_assert_cmpuint (qstore_check_report_get_n_problems (report), ==, 2);
  problem = qstore_check_report_get_problem (report, 0);
  g_assert_cmpstr (qstore_check_problem_get_scope (problem), ==, QSTORE_CHECK_SCOPE_STORE);
  g_assert_cmpstr (qstore_check_problem_get_object (problem), ==, "main.t");
  key = g_bytes_get_data (qstore_check_problem_get_key (problem), &len);
  g_assert_cmpmem (key, len, "b", 1);
  g_assert_cmpuint (qstore_check_report_get_n_checked_items (report, QSTORE_CHECK_SCOPE_STORE),
                    ==, G_N_ELEMENTS (disorder_keys));
}

/* qstore_iter_new() sets what the properties would, copying the bounds;
 * either way they are given once, when the iterator is made. */
static void
test_iter_construct (void)
{
  g_autoptr(QStoreProvider) provider = NULL;
  g_autoptr(QStoreBounds) bounds = qstore_bounds_new ();
  g_autoptr(QStoreBounds) other = qstore_bounds_new ();
  g_autoptr(QStoreIter) iter = NULL;
  g_autoptr(QStoreIter) by_property = NULL;
  g_autoptr(QStoreIter) plain = NULL;
  g_autoptr(QStoreProvider) got_provider = NULL;
  g_autoptr(GError) error = NULL;
  const QStoreBounds *got;
  const guint8 *key;
  gsize len;

  provider = qstore_provider_new ("memory", NULL, QSTORE_OPEN_NONE, &error);
  g_assert_no_error (error);
  qstore_bounds_set_gte (bounds, (const guint8 *) "b", 1);
  qstore_bounds_set_lte (bounds, (const guint8 *) "c", 1);
  qstore_bounds_set_gte (other, (const guint8 *) "a", 1);

  iter = qstore_iter_new (TEST_TYPE_DISORDER_ITER, bounds, provider);
  got = qstore_iter_get_bounds (iter);
  g_assert_true (got != bounds);
  /* A copy: changing the caller's bounds afterwards changes nothing. */
  qstore_bounds_set_gte (bounds, (const guint8 *) "z", 1);
  key = qstore_bounds_get_lower (got, &len, NULL);
  g_assert_cmpmem (key, len, "b", 1);
  g_object_get (iter, "provider", &got_provider, NULL);
  g_assert_true (got_provider == provider);

  /* Given once: a later change is refused and leaves them as they were. */
  g_test_expect_message ("qstore", G_LOG_LEVEL_CRITICAL, "*bounds*already set*");
  g_object_set (iter, "bounds", other, NULL);
  g_test_assert_expected_messages ();
  g_test_expect_message ("qstore", G_LOG_LEVEL_CRITICAL, "*provider*already set*");
  g_object_set (iter, "provider", NULL, NULL);
  g_test_assert_expected_messages ();
  g_assert_true (qstore_iter_get_bounds (iter) == got);

  /* The iterator applies them: "a" is before the range, "d" after it. */
  g_assert_true (qstore_iter_next (iter, &error));
  key = qstore_iter_peek_key (iter, &len);
  g_assert_cmpmem (key, len, "c", 1);
  g_assert_true (qstore_iter_next (iter, &error));
  key = qstore_iter_peek_key (iter, &len);
  g_assert_cmpmem (key, len, "b", 1);
  g_assert_false (qstore_iter_next (iter, &error));
  g_assert_no_error (error);

  /* The properties still work, for bindings and providers built on them. */
  by_property = g_object_new (TEST_TYPE_DISORDER_ITER, "bounds", other, NULL);
  key = qstore_bounds_get_lower (qstore_iter_get_bounds (by_property), &len, NULL);
  g_assert_cmpmem (key, len, "a", 1);

  /* Not given: all of it, and no longer to be given once looked at. */
  plain = g_object_new (TEST_TYPE_DISORDER_ITER, NULL);
  g_assert_null (qstore_bounds_get_lower (qstore_iter_get_bounds (plain), &len, NULL));
  g_test_expect_message ("qstore", G_LOG_LEVEL_CRITICAL, "*bounds*already set*");
  g_object_set (plain, "bounds", other, NULL);
  g_test_assert_expected_messages ();
  g_assert_null (qstore_bounds_get_lower (qstore_iter_get_bounds (plain), &len, NULL));

  /* The provider given to qstore_iter_new() is watched like the
   * property's. */
  g_clear_object (&iter);
  iter = qstore_iter_new (TEST_TYPE_DISORDER_ITER, NULL, provider);
  qstore_provider_close_all (provider);
  g_assert_false (qstore_iter_next (iter, &error));
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_CLOSED);
}

void
conformance_add_check_tests (const char *prefix)
{
#define ADD(name, func) G_STMT_START { \
    g_autofree char *path_ = g_strconcat (prefix, "/check/", name, NULL); \
    g_test_add (path_, Fixture, NULL, fixture_setup, func, fixture_teardown); \
  } G_STMT_END

  ADD ("clean", test_check_clean);
  ADD ("closed", test_check_closed);
  ADD ("planted", test_check_planted);
  ADD ("odd-locations", test_check_odd_locations);
#undef ADD
  g_test_add_func ("/providers/check/key-order", test_check_key_order);
  g_test_add_func ("/providers/iter/construct", test_iter_construct);
}
