/* test-coordinator.c: transactions across stores
 *
 * Run with QSTORE_TEST_PROVIDER set to a provider name, optionally followed
 * by URI options (`lmdb`, `sqlite?atomic=0`, …).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <json-glib/json-glib.h>
#include <string.h>

#include <qstore.h>

#include "qstore-fault-private.h"
#include "qstore-test-util.h"

typedef struct
{
  char               *dir;
  char               *uri;
  QStoreProvider     *provider;
  QStoreCapabilities  caps;
  QStoreCoordinator  *coord;
  QStoreKV           *a;     /* main.a: a table's data */
  QStoreKV           *ai;    /* main.a_idx_i: its index */
  QStoreKV           *b;     /* main.b: another table */
} Fixture;

static QStoreKV *
open_store (QStoreProvider *provider,
            const char     *name)
{
  g_autoptr(GError) error = NULL;
  QStoreKV *kv = qstore_provider_open_store (provider, name, &error);

  g_assert_no_error (error);
  return kv;
}

static QStoreCoordinator *
new_coordinator (QStoreProvider *provider)
{
  g_autoptr(GError) error = NULL;
  QStoreCoordinator *coord = qstore_coordinator_new (provider, &error);

  g_assert_no_error (error);
  g_assert_nonnull (coord);
  return coord;
}

static void
open_all (Fixture *f)
{
  g_autoptr(GError) error = NULL;

  f->provider = qstore_provider_new_for_uri (f->uri, QSTORE_OPEN_NONE, &error);
  g_assert_no_error (error);
  f->caps = qstore_provider_get_capabilities (f->provider);
  f->coord = new_coordinator (f->provider);
  f->a = open_store (f->provider, "main.a");
  f->ai = open_store (f->provider, "main.a_idx_i");
  f->b = open_store (f->provider, "main.b");
}

static void
close_all (Fixture *f)
{
  g_clear_object (&f->a);
  g_clear_object (&f->ai);
  g_clear_object (&f->b);
  g_clear_object (&f->coord);
  if (f->provider != NULL)
    qstore_provider_close_all (f->provider);
  g_clear_object (&f->provider);
}

static void
fixture_setup (Fixture       *f,
               gconstpointer  data)
{
  f->dir = test_make_tmp_dir ("qstore-coordinator-XXXXXX");
  f->uri = test_provider_uri (f->dir, "store");
  open_all (f);
}

static void
fixture_teardown (Fixture       *f,
                  gconstpointer  data)
{
  _qstore_fault_disarm_all ();
  close_all (f);
  test_remove_tree (f->dir);
  g_free (f->dir);
  g_free (f->uri);
}

static gboolean
atomic (Fixture *f)
{
  return (f->caps & QSTORE_CAPABILITY_ATOMIC_BATCH) != 0;
}

/* Helpers over string keys and values */

static void
cput (Fixture    *f,
      QStoreKV   *kv,
      const char *key,
      const char *value)
{
  qstore_coordinator_put (f->coord, kv, (const guint8 *) key, strlen (key),
                          (const guint8 *) value, strlen (value));
}

static void
cdel (Fixture    *f,
      QStoreKV   *kv,
      const char *key)
{
  qstore_coordinator_delete (f->coord, kv, (const guint8 *) key, strlen (key));
}

static char *
bytes_to_string (GBytes *bytes)
{
  gsize len;
  const char *data;

  if (bytes == NULL)
    return NULL;
  data = g_bytes_get_data (bytes, &len);
  return g_strndup (data ? data : "", len);
}

/* What the transaction sees, by a copying read and by a lending one:
 * the two agree in every state a test puts the coordinator in. */
static char *
cget (Fixture    *f,
      QStoreKV   *kv,
      const char *key)
{
  g_autoptr(GBytes) value = test_coordinator_get (f->coord, kv, key);

  return bytes_to_string (value);
}

/* What is committed. */
static char *
kget (QStoreKV   *kv,
      const char *key)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) value = qstore_kv_get (kv, (const guint8 *) key, strlen (key), &error);

  g_assert_no_error (error);
  return bytes_to_string (value);
}

#define assert_cget(f, kv, key, expected) G_STMT_START { \
    g_autofree char *got_ = cget ((f), (kv), (key)); \
    g_assert_cmpstr (got_, ==, (expected)); \
  } G_STMT_END

#define assert_kget(kv, key, expected) G_STMT_START { \
    g_autofree char *got_ = kget ((kv), (key)); \
    g_assert_cmpstr (got_, ==, (expected)); \
  } G_STMT_END

/* "k=v|k=v…" of an iteration. */
static char *
collect (QStoreIter *iter)
{
  g_autoptr(GError) error = NULL;
  GString *out = g_string_new (NULL);

  while (qstore_iter_next (iter, &error))
    {
      gsize key_len, value_len;
      const guint8 *key = qstore_iter_peek_key (iter, &key_len);
      const guint8 *value = qstore_iter_peek_value (iter, &value_len);

      if (out->len > 0)
        g_string_append_c (out, '|');
      g_string_append_len (out, (const char *) key, key_len);
      g_string_append_c (out, '=');
      g_string_append_len (out, (const char *) value, value_len);
    }
  g_assert_no_error (error);
  return g_string_free (out, FALSE);
}

static char *
cscan (Fixture            *f,
       QStoreKV           *kv,
       const QStoreBounds *bounds)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(QStoreIter) iter = qstore_coordinator_iterate (f->coord, kv, bounds, &error);

  g_assert_no_error (error);
  g_assert_nonnull (iter);
  return collect (iter);
}

static char *
kscan (QStoreKV *kv)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(QStoreIter) iter = qstore_kv_iterate (kv, NULL, &error);

  g_assert_no_error (error);
  return collect (iter);
}

#define assert_cscan(f, kv, bounds, expected) G_STMT_START { \
    g_autofree char *got_ = cscan ((f), (kv), (bounds)); \
    g_assert_cmpstr (got_, ==, (expected)); \
  } G_STMT_END

#define assert_kscan(kv, expected) G_STMT_START { \
    g_autofree char *got_ = kscan (kv); \
    g_assert_cmpstr (got_, ==, (expected)); \
  } G_STMT_END

static void
commit_ok (Fixture *f)
{
  g_autoptr(GError) error = NULL;

  g_assert_true (qstore_coordinator_commit (f->coord, &error));
  g_assert_no_error (error);
  g_assert_false (qstore_coordinator_in_transaction (f->coord));
}

#define NO_LIMIT ((gint64) -1)

static QStoreBounds *
bounds_new (const char *gte,
            const char *gt,
            const char *lte,
            const char *lt,
            gboolean    reverse,
            gint64      limit)
{
  QStoreBounds *bounds = qstore_bounds_new ();

  if (gte)
    qstore_bounds_set_gte (bounds, (const guint8 *) gte, strlen (gte));
  if (gt)
    qstore_bounds_set_gt (bounds, (const guint8 *) gt, strlen (gt));
  if (lte)
    qstore_bounds_set_lte (bounds, (const guint8 *) lte, strlen (lte));
  if (lt)
    qstore_bounds_set_lt (bounds, (const guint8 *) lt, strlen (lt));
  qstore_bounds_set_reverse (bounds, reverse);
  if (limit != NO_LIMIT)
    qstore_bounds_set_limit (bounds, limit);
  return bounds;
}

/* Meta entry @name as @store holds it, or NULL. */
static char *
read_meta_in (QStoreProvider *provider,
              const char     *store,
              const char     *name)
{
  g_autoptr(QStoreKV) kv = open_store (provider, store);
  g_autoptr(GBytes) key = qstore_catalog_key_for_meta (name);
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) value = qstore_kv_get (kv, g_bytes_get_data (key, NULL),
                                           g_bytes_get_size (key), &error);

  g_assert_no_error (error);
  return bytes_to_string (value);
}

static char *
read_meta (QStoreProvider *provider,
           const char     *name)
{
  return read_meta_in (provider, "__catalog__", name);
}

static char *
read_stats (QStoreProvider *provider,
            const char     *key)
{
  g_autoptr(QStoreKV) stats = open_store (provider, "__stats__");

  return kget (stats, key);
}

static void
put_tx (QStoreProvider *provider,
        const char     *store,
        const char     *text)
{
  g_autoptr(QStoreKV) kv = open_store (provider, store);
  g_autoptr(GBytes) key = qstore_catalog_key_for_meta ("tx");
  g_autoptr(GError) error = NULL;

  g_assert_true (qstore_kv_put (kv, g_bytes_get_data (key, NULL), g_bytes_get_size (key),
                                (const guint8 *) text, strlen (text), 0, &error));
  g_assert_no_error (error);
}

/* The rowCount of a stats value, checking its shape on the way. */
static gint64
stats_row_count (const char *json,
                 gint64     *updated_at)
{
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GError) error = NULL;
  JsonObject *object;

  g_assert_nonnull (json);
  json_parser_load_from_data (parser, json, -1, &error);
  g_assert_no_error (error);
  g_assert_true (JSON_NODE_HOLDS_OBJECT (json_parser_get_root (parser)));
  object = json_node_get_object (json_parser_get_root (parser));
  g_assert_cmpuint (json_object_get_size (object), ==, 2);
  g_assert_true (json_object_has_member (object, "rowCount"));
  g_assert_true (json_object_has_member (object, "updatedAt"));
  /* Byte for byte as stores written before hold it. */
  {
    g_autofree char *exact = g_strdup_printf ("{\"rowCount\":%" G_GINT64_FORMAT
                                              ",\"updatedAt\":%" G_GINT64_FORMAT "}",
                                              json_object_get_int_member (object, "rowCount"),
                                              json_object_get_int_member (object, "updatedAt"));

    g_assert_cmpstr (json, ==, exact);
  }
  if (updated_at)
    *updated_at = json_object_get_int_member (object, "updatedAt");
  return json_object_get_int_member (object, "rowCount");
}

/* Tests: reading your own writes */

static void
seed_a (Fixture *f)
{
  qstore_coordinator_begin (f->coord);
  cput (f, f->a, "a", "1");
  cput (f, f->a, "c", "3");
  cput (f, f->a, "e", "5");
  cput (f, f->a, "g", "7");
  commit_ok (f);
}

static void
test_read_your_writes (Fixture       *f,
                       gconstpointer  data)
{
  g_autoptr(QStoreBounds) b1 = NULL;
  g_autoptr(GError) error = NULL;

  seed_a (f);
  assert_kscan (f->a, "a=1|c=3|e=5|g=7");

  qstore_coordinator_begin (f->coord);
  g_assert_true (qstore_coordinator_in_transaction (f->coord));
  cput (f, f->a, "b", "2");        /* new */
  cput (f, f->a, "c", "33");       /* overwrites a committed key */
  cdel (f, f->a, "e");             /* hides a committed key */
  cdel (f, f->a, "x");             /* deletes what is not there */
  cput (f, f->a, "h", "8");
  cput (f, f->a, "h", "88");       /* last write wins */
  cput (f, f->a, "i", "9");
  cdel (f, f->a, "i");             /* put then delete in one transaction */
  cput (f, f->a, "empty", "");

  assert_cget (f, f->a, "a", "1");
  assert_cget (f, f->a, "b", "2");
  assert_cget (f, f->a, "c", "33");
  assert_cget (f, f->a, "e", NULL);
  assert_cget (f, f->a, "x", NULL);
  assert_cget (f, f->a, "h", "88");
  assert_cget (f, f->a, "i", NULL);
  assert_cget (f, f->a, "empty", "");
  /* Other stores are untouched; nothing is committed yet. */
  assert_cget (f, f->b, "b", NULL);
  assert_kget (f->a, "b", NULL);
  assert_kget (f->a, "c", "3");

  /* Whole store, both directions. */
  assert_cscan (f, f->a, NULL, "a=1|b=2|c=33|empty=|g=7|h=88");
  b1 = bounds_new (NULL, NULL, NULL, NULL, TRUE, NO_LIMIT);
  assert_cscan (f, f->a, b1, "h=88|g=7|empty=|c=33|b=2|a=1");

  /* Bounds, with tombstones and overwrites at the edges. */
#define CHECK(gte, gt, lte, lt, rev, limit, expected) G_STMT_START { \
    g_autoptr(QStoreBounds) bb_ = bounds_new (gte, gt, lte, lt, rev, limit); \
    assert_cscan (f, f->a, bb_, expected); \
  } G_STMT_END
  CHECK ("b", NULL, NULL, "g", FALSE, NO_LIMIT, "b=2|c=33|empty=");
  CHECK (NULL, "c", "h", NULL, FALSE, NO_LIMIT, "empty=|g=7|h=88");
  CHECK (NULL, "a", "g", NULL, TRUE, NO_LIMIT, "g=7|empty=|c=33|b=2");
  CHECK ("e", NULL, NULL, NULL, FALSE, NO_LIMIT, "empty=|g=7|h=88");
  CHECK (NULL, NULL, "e", NULL, TRUE, NO_LIMIT, "c=33|b=2|a=1");
  CHECK ("e", NULL, "e", NULL, FALSE, NO_LIMIT, "");   /* only a tombstone in range */
  CHECK ("c", NULL, "c", NULL, TRUE, NO_LIMIT, "c=33");
  CHECK ("d", NULL, "dz", NULL, FALSE, NO_LIMIT, "");
  CHECK (NULL, NULL, NULL, NULL, FALSE, 2, "a=1|b=2");
  CHECK (NULL, NULL, NULL, NULL, TRUE, 2, "h=88|g=7");
  CHECK (NULL, NULL, NULL, NULL, FALSE, 0, "");
  /* Deletes do not count against the limit. */
  CHECK ("d", NULL, NULL, NULL, FALSE, 1, "empty=");
  CHECK (NULL, NULL, "f", NULL, TRUE, 2, "empty=|c=33");
  CHECK ("zz", NULL, NULL, NULL, FALSE, NO_LIMIT, "");
#undef CHECK

  {
    g_autoptr(QStoreBounds) negative = qstore_bounds_new ();
    g_autoptr(QStoreIter) iter = NULL;

    qstore_bounds_set_limit (negative, -1);
    iter = qstore_coordinator_iterate (f->coord, f->a, negative, &error);
    g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT);
    g_assert_null (iter);
    g_clear_error (&error);
  }

  /* A store with only pending writes, and one with none. */
  cput (f, f->b, "k", "v");
  assert_cscan (f, f->b, NULL, "k=v");
  assert_cscan (f, f->ai, NULL, "");

  qstore_coordinator_rollback (f->coord);
  g_assert_false (qstore_coordinator_in_transaction (f->coord));
  /* Outside a transaction, reads are of committed data. */
  assert_cget (f, f->a, "c", "3");
  assert_cget (f, f->a, "b", NULL);
  assert_cscan (f, f->a, NULL, "a=1|c=3|e=5|g=7");
  assert_kscan (f->b, "");
}

/* A read transaction sees one state while another writer commits. */
static void
test_read_transaction (Fixture       *f,
                       gconstpointer  data)
{
  g_autoptr(QStoreCoordinator) writer = new_coordinator (f->provider);
  g_autoptr(GError) error = NULL;

  seed_a (f);
  if (!(f->caps & QSTORE_CAPABILITY_SNAPSHOTS))
    {
      g_assert_false (qstore_coordinator_begin_read (f->coord, &error));
      g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_UNSUPPORTED);
      return;
    }

  g_assert_true (qstore_coordinator_begin_read (f->coord, &error));
  g_assert_no_error (error);
  /* Nested: only the outermost end lets go of the state. */
  g_assert_true (qstore_coordinator_begin_read (f->coord, &error));
  g_assert_no_error (error);

  qstore_coordinator_begin (writer);
  qstore_coordinator_put (writer, f->a, (const guint8 *) "c", 1, (const guint8 *) "33", 2);
  qstore_coordinator_delete (writer, f->a, (const guint8 *) "e", 1);
  qstore_coordinator_put (writer, f->b, (const guint8 *) "k", 1, (const guint8 *) "v", 1);
  g_assert_true (qstore_coordinator_commit (writer, &error));
  g_assert_no_error (error);
  assert_kget (f->a, "c", "33");

  assert_cget (f, f->a, "c", "3");
  assert_cget (f, f->a, "e", "5");
  assert_cget (f, f->b, "k", NULL);
  assert_cscan (f, f->a, NULL, "a=1|c=3|e=5|g=7");
  assert_cscan (f, f->b, NULL, "");

  /* No write transaction commits inside it, nor does a read begin
   * inside a write transaction. */
  qstore_coordinator_begin (f->coord);
  cput (f, f->a, "z", "26");
  assert_cget (f, f->a, "z", "26");
  assert_cget (f, f->a, "c", "3");
  g_assert_false (qstore_coordinator_commit (f->coord, &error));
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_READ_ONLY);
  g_assert_nonnull (strstr (error->message, "read transaction"));
  g_clear_error (&error);
  g_assert_false (qstore_coordinator_in_transaction (f->coord));
  assert_kget (f->a, "z", NULL);

  qstore_coordinator_end_read (f->coord);
  assert_cget (f, f->a, "c", "3");
  qstore_coordinator_end_read (f->coord);
  assert_cget (f, f->a, "c", "33");
  assert_cget (f, f->b, "k", "v");
  assert_cscan (f, f->a, NULL, "a=1|c=33|g=7");

  qstore_coordinator_begin (f->coord);
  g_assert_false (qstore_coordinator_begin_read (f->coord, &error));
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_BUSY);
  qstore_coordinator_rollback (f->coord);
}

/* A lending read: what cget() checks against a copying read in every
 * state, plus its edges. */
static void
test_lookup (Fixture       *f,
             gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  const guint8 *value = NULL;
  gsize value_len = 0;

  seed_a (f);
  g_assert_true (qstore_coordinator_lookup (f->coord, f->a, (const guint8 *) "c", 1,
                                            &value, &value_len, &error));
  g_assert_no_error (error);
  g_assert_cmpmem (value, value_len, "3", 1);
  /* Absent keys, and keys no write could store, are not found, without
   * an error; the outputs are optional. */
  g_assert_false (qstore_coordinator_lookup (f->coord, f->a, (const guint8 *) "zz", 2,
                                             &value, &value_len, &error));
  g_assert_no_error (error);
  g_assert_false (qstore_coordinator_lookup (f->coord, f->a, NULL, 0, NULL, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (qstore_coordinator_lookup (f->coord, f->a, (const guint8 *) "e", 1,
                                            NULL, NULL, &error));

  /* A delete of the transaction hides the committed value. */
  qstore_coordinator_begin (f->coord);
  cdel (f, f->a, "e");
  g_assert_false (qstore_coordinator_lookup (f->coord, f->a, (const guint8 *) "e", 1,
                                             &value, &value_len, &error));
  g_assert_no_error (error);
  qstore_coordinator_rollback (f->coord);

  qstore_provider_close_all (f->provider);
  g_assert_false (qstore_coordinator_lookup (f->coord, f->a, (const guint8 *) "c", 1,
                                             &value, &value_len, &error));
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_CLOSED);
}

static void
test_iterate_while_writing (Fixture       *f,
                            gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(QStoreIter) iter = NULL;
  g_autoptr(QStoreIter) reverse = NULL;
  g_autoptr(QStoreBounds) rb = bounds_new (NULL, NULL, NULL, NULL, TRUE, NO_LIMIT);
  GString *seen = g_string_new (NULL);
  g_autofree char *seen_text = NULL;
  g_autofree char *again = NULL;

  seed_a (f);
  qstore_coordinator_begin (f->coord);
  cput (f, f->a, "b", "2");

  iter = qstore_coordinator_iterate (f->coord, f->a, NULL, &error);
  g_assert_no_error (error);
  while (qstore_iter_next (iter, &error))
    {
      g_autoptr(GBytes) key = qstore_iter_get_key (iter);
      g_autofree char *k = bytes_to_string (key);

      g_string_append (seen, k);
      /* Writes ahead of the position are seen, behind it are not, and a
       * delete ahead hides what the iterator had not reached yet. */
      if (g_str_equal (k, "b"))
        {
          cput (f, f->a, "bb", "x");
          cput (f, f->a, "aa", "behind");
          cdel (f, f->a, "c");
        }
      if (g_str_equal (k, "bb"))
        cput (f, f->a, "f", "x");
      /* Rewriting the current key does not lose the position. */
      cput (f, f->a, k, "rewritten");
    }
  g_assert_no_error (error);
  seen_text = g_string_free (seen, FALSE);
  g_assert_cmpstr (seen_text, ==, "abbbefg");
  assert_cscan (f, f->a, NULL,
                "a=rewritten|aa=behind|b=rewritten|bb=rewritten|e=rewritten|f=rewritten|g=rewritten");

  /* The same in reverse. */
  reverse = qstore_coordinator_iterate (f->coord, f->a, rb, &error);
  g_assert_no_error (error);
  g_assert_true (qstore_iter_next (reverse, &error));  /* g */
  cput (f, f->a, "ff", "new");
  cdel (f, f->a, "e");
  g_assert_true (qstore_iter_next (reverse, &error));
  {
    g_autoptr(GBytes) key = qstore_iter_get_key (reverse);
    g_autofree char *k = bytes_to_string (key);

    g_assert_cmpstr (k, ==, "ff");
  }
  g_assert_true (qstore_iter_next (reverse, &error));
  {
    g_autoptr(GBytes) key = qstore_iter_get_key (reverse);
    g_autofree char *k = bytes_to_string (key);

    g_assert_cmpstr (k, ==, "f");
  }
  g_assert_true (qstore_iter_next (reverse, &error));
  {
    g_autoptr(GBytes) key = qstore_iter_get_key (reverse);
    g_autofree char *k = bytes_to_string (key);

    g_assert_cmpstr (k, ==, "bb");
  }

  /* A seek starts over on what the transaction holds now. */
  cput (f, f->a, "0", "first");
  cdel (f, f->a, "g");
  g_assert_true (qstore_iter_seek (iter, NULL, &error));
  g_assert_no_error (error);
  again = collect (iter);
  g_assert_cmpstr (again, ==, "0=first|a=rewritten|aa=behind|b=rewritten|"
                   "bb=rewritten|f=rewritten|ff=new");

  /* An iterator does not outlive its transaction. */
  commit_ok (f);
  g_assert_false (qstore_iter_next (reverse, &error));
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_CLOSED);
  g_clear_error (&error);
  g_assert_true (qstore_iter_seek (reverse, NULL, &error));
  g_assert_false (qstore_iter_next (reverse, &error));
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_CLOSED);
}

/* Tests: savepoints */

static void
test_savepoints (Fixture       *f,
                 gconstpointer  data)
{
  seed_a (f);

  /* Nested levels, rollback_to keeps the level open. */
  qstore_coordinator_begin (f->coord);
  cput (f, f->a, "k1", "1");
  qstore_coordinator_savepoint (f->coord, 0);
  cput (f, f->a, "k2", "2");
  cput (f, f->a, "a", "a-in-0");
  qstore_coordinator_savepoint (f->coord, 1);
  cput (f, f->a, "k3", "3");
  cput (f, f->a, "a", "a-in-1");
  cdel (f, f->a, "c");
  cdel (f, f->a, "k1");
  assert_cscan (f, f->a, NULL, "a=a-in-1|e=5|g=7|k2=2|k3=3");
  qstore_coordinator_rollback_to (f->coord, 1);
  assert_cscan (f, f->a, NULL, "a=a-in-0|c=3|e=5|g=7|k1=1|k2=2");
  /* Level 1 is still open: roll back to it again. */
  cput (f, f->a, "k4", "4");
  cput (f, f->a, "a", "again");
  qstore_coordinator_rollback_to (f->coord, 1);
  assert_cscan (f, f->a, NULL, "a=a-in-0|c=3|e=5|g=7|k1=1|k2=2");
  /* Release merges level 1 into level 0. */
  cput (f, f->a, "k5", "5");
  qstore_coordinator_release (f->coord, 1);
  assert_cscan (f, f->a, NULL, "a=a-in-0|c=3|e=5|g=7|k1=1|k2=2|k5=5");
  qstore_coordinator_rollback_to (f->coord, 0);
  assert_cscan (f, f->a, NULL, "a=1|c=3|e=5|g=7|k1=1");
  /* Releasing every level keeps the writes. */
  cput (f, f->a, "k6", "6");
  qstore_coordinator_release (f->coord, 0);
  assert_cscan (f, f->a, NULL, "a=1|c=3|e=5|g=7|k1=1|k6=6");
  commit_ok (f);
  assert_kscan (f->a, "a=1|c=3|e=5|g=7|k1=1|k6=6");

  /* rollback_to (-1): back to begin, the transaction stays open. */
  qstore_coordinator_begin (f->coord);
  cput (f, f->a, "x", "1");
  qstore_coordinator_savepoint (f->coord, 0);
  cput (f, f->a, "y", "1");
  qstore_coordinator_rollback_to (f->coord, -1);
  g_assert_true (qstore_coordinator_in_transaction (f->coord));
  assert_cscan (f, f->a, NULL, "a=1|c=3|e=5|g=7|k1=1|k6=6");
  cput (f, f->a, "z", "1");
  assert_cget (f, f->a, "z", "1");
  commit_ok (f);
  assert_kget (f->a, "z", "1");
  assert_kget (f->a, "x", NULL);

  /* A level never opened also means begin. */
  qstore_coordinator_begin (f->coord);
  cput (f, f->a, "x", "1");
  qstore_coordinator_savepoint (f->coord, 0);
  cput (f, f->a, "y", "1");
  qstore_coordinator_rollback_to (f->coord, 3);
  assert_cget (f, f->a, "x", NULL);
  assert_cget (f, f->a, "y", NULL);
  /* …and level 3 (with those below it) is open from there. */
  cput (f, f->a, "w", "1");
  qstore_coordinator_rollback_to (f->coord, 2);
  assert_cget (f, f->a, "w", NULL);
  qstore_coordinator_rollback (f->coord);

  /* Re-announcing an open level does not move its mark. */
  qstore_coordinator_begin (f->coord);
  qstore_coordinator_savepoint (f->coord, 0);
  cput (f, f->a, "r1", "1");
  qstore_coordinator_savepoint (f->coord, 0);   /* a late table joins */
  cput (f, f->a, "r2", "2");
  qstore_coordinator_rollback_to (f->coord, 0);
  assert_cget (f, f->a, "r1", NULL);
  assert_cget (f, f->a, "r2", NULL);
  /* Announcing a deeper level opens the ones between at the current state. */
  cput (f, f->a, "r3", "3");
  qstore_coordinator_savepoint (f->coord, 2);
  cput (f, f->a, "r4", "4");
  qstore_coordinator_rollback_to (f->coord, 1);
  assert_cget (f, f->a, "r3", "3");
  assert_cget (f, f->a, "r4", NULL);
  qstore_coordinator_rollback_to (f->coord, 0);
  assert_cget (f, f->a, "r3", NULL);
  qstore_coordinator_rollback (f->coord);

  /* Savepoint calls outside a transaction are harmless. */
  qstore_coordinator_savepoint (f->coord, 0);
  qstore_coordinator_release (f->coord, 0);
  qstore_coordinator_rollback_to (f->coord, 0);
  g_assert_false (qstore_coordinator_in_transaction (f->coord));

  /* Committed data is unchanged by all of this. */
  assert_kscan (f->a, "a=1|c=3|e=5|g=7|k1=1|k6=6|z=1");
}

static void
collect_change_set (QStoreCoordinator *coord,
                    QStoreChangeSet   *changes,
                    gpointer           user_data)
{
  GPtrArray *sets = user_data;

  /* Delivered after the transaction ended and the data is durable. */
  g_assert_false (qstore_coordinator_in_transaction (coord));
  g_assert_cmpuint (qstore_change_set_get_tx_id (changes), ==,
                    qstore_coordinator_get_last_tx_id (coord));
  g_ptr_array_add (sets, g_object_ref (changes));
}

static GBytes *
encode_row (const char *text)
{
  g_autoptr(GError) error = NULL;
  GBytes *row;

  /* (id, name, score) */
  row = qstore_codec_encode_row (g_variant_new ("(@vs@v)",
                                                g_variant_new_variant (g_variant_new_int64 (strlen (text))),
                                                text,
                                                g_variant_new_variant (qstore_value_new_null ())),
                                 &error);
  g_assert_no_error (error);
  return row;
}

static void
assert_row (GVariant   *row,
            const char *text)
{
  g_autoptr(GVariant) expected = NULL;
  g_autoptr(GVariant) owned = row;

  if (text == NULL)
    {
      g_assert_null (row);
      return;
    }
  g_assert_nonnull (row);
  expected = g_variant_ref_sink (g_variant_new ("(@v@v@v)",
                                                g_variant_new_variant (g_variant_new_int64 (strlen (text))),
                                                g_variant_new_variant (g_variant_new_string (text)),
                                                g_variant_new_variant (qstore_value_new_null ())));
  if (!g_variant_equal (row, expected))
    {
      g_autofree char *a = g_variant_print (row, TRUE);
      g_autofree char *b = g_variant_print (expected, TRUE);

      g_error ("row %s, expected %s", a, b);
    }
}

static void
test_savepoints_undo_bookkeeping (Fixture       *f,
                                  gconstpointer  data)
{
  g_autoptr(GPtrArray) sets = g_ptr_array_new_with_free_func (g_object_unref);
  g_autoptr(GBytes) r1 = encode_row ("one");
  g_autoptr(GBytes) r2 = encode_row ("two");
  g_autoptr(GBytes) r3 = encode_row ("three");
  QStoreChangeSet *set;

  g_signal_connect (f->coord, "committed", G_CALLBACK (collect_change_set), sets);

  qstore_coordinator_begin (f->coord);
  cput (f, f->a, "1", "one");
  qstore_coordinator_record_change (f->coord, "main", "a", QSTORE_CHANGE_INSERT, NULL, r1);
  qstore_coordinator_adjust_row_count (f->coord, "main", "a", 1);
  qstore_coordinator_savepoint (f->coord, 0);
  cput (f, f->a, "2", "two");
  qstore_coordinator_record_change (f->coord, "main", "a", QSTORE_CHANGE_INSERT, NULL, r2);
  qstore_coordinator_adjust_row_count (f->coord, "main", "a", 1);
  /* A table first touched inside the savepoint. */
  qstore_coordinator_record_change (f->coord, "main", "b", QSTORE_CHANGE_INSERT, NULL, r3);
  qstore_coordinator_adjust_row_count (f->coord, "main", "b", 1);
  g_assert_cmpint (qstore_coordinator_get_row_count (f->coord, "main", "a"), ==, 2);
  g_assert_cmpint (qstore_coordinator_get_row_count (f->coord, "main", "b"), ==, 1);
  qstore_coordinator_rollback_to (f->coord, 0);
  g_assert_cmpint (qstore_coordinator_get_row_count (f->coord, "main", "a"), ==, 1);
  g_assert_cmpint (qstore_coordinator_get_row_count (f->coord, "main", "b"), ==, 0);
  qstore_coordinator_record_change (f->coord, "main", "a", QSTORE_CHANGE_UPDATE, r1, r3);
  commit_ok (f);

  g_assert_cmpuint (sets->len, ==, 1);
  set = sets->pdata[0];
  g_assert_cmpuint (qstore_change_set_get_n_changes (set), ==, 2);
  g_assert_cmpint (qstore_change_set_get_op (set, 0), ==, QSTORE_CHANGE_INSERT);
  g_assert_cmpint (qstore_change_set_get_op (set, 1), ==, QSTORE_CHANGE_UPDATE);
  assert_row (qstore_change_set_get_new_row (set, 1), "three");
  g_assert_cmpint (qstore_coordinator_get_row_count (f->coord, "main", "a"), ==, 1);
  g_assert_cmpint (qstore_coordinator_get_row_count (f->coord, "main", "b"), ==, 0);
  {
    g_autofree char *stats_b = read_stats (f->provider, "main.b");

    g_assert_null (stats_b);
  }
  assert_kscan (f->a, "1=one");
}

/* Tests: commit */

static gsize
fill_three_stores (Fixture *f,
                   gboolean with_changes)
{
  g_autoptr(GBytes) r1 = encode_row ("x");

  /* Writes to three stores; returns how many ops the commit writes. */
  cput (f, f->a, "k1", "new");
  cput (f, f->a, "k2", "new");
  cdel (f, f->a, "old");
  cput (f, f->ai, "i1", "k1");
  cput (f, f->ai, "i2", "k2");
  cput (f, f->b, "m1", "new");
  cput (f, f->b, "m2", "new");
  cdel (f, f->b, "gone");
  qstore_coordinator_adjust_row_count (f->coord, "main", "a", 2);
  qstore_coordinator_adjust_row_count (f->coord, "main", "b", 1);
  if (with_changes)
    qstore_coordinator_record_change (f->coord, "main", "a", QSTORE_CHANGE_INSERT, NULL, r1);
  /* 8 writes, 2 stats entries, the transaction id */
  return 8 + 2 + 1;
}

static void
test_atomic_commit (Fixture       *f,
                    gconstpointer  data)
{
  g_autoptr(GPtrArray) sets = g_ptr_array_new_with_free_func (g_object_unref);
  g_autofree char *a_before = NULL, *ai_before = NULL, *b_before = NULL;
  g_autofree char *stats_a_before = NULL, *stats_b_before = NULL, *tx_before = NULL;
  const guint ks[] = { 0, 1, 2, 5, 9, 10 };
  gsize n_ops;

  if (!atomic (f))
    {
      g_test_skip ("the provider is open without an atomic batch (see /marker)");
      return;
    }

  g_signal_connect (f->coord, "committed", G_CALLBACK (collect_change_set), sets);

  qstore_coordinator_begin (f->coord);
  cput (f, f->a, "old", "committed");
  cput (f, f->a, "k1", "committed");
  cput (f, f->b, "gone", "committed");
  qstore_coordinator_adjust_row_count (f->coord, "main", "a", 2);
  qstore_coordinator_adjust_row_count (f->coord, "main", "b", 1);
  commit_ok (f);
  g_assert_cmpuint (qstore_coordinator_get_last_tx_id (f->coord), ==, 1);
  g_assert_cmpuint (sets->len, ==, 1);

  a_before = kscan (f->a);
  ai_before = kscan (f->ai);
  b_before = kscan (f->b);
  stats_a_before = read_stats (f->provider, "main.a");
  stats_b_before = read_stats (f->provider, "main.b");
  tx_before = read_meta_in (f->provider, "__stats__", "tx");
  g_assert_cmpstr (tx_before, ==, "1");

  for (guint i = 0; i < G_N_ELEMENTS (ks); i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(QStoreCoordinator) other = NULL;
      g_autofree char *tx = NULL, *stats_a = NULL, *stats_b = NULL;

      qstore_coordinator_begin (f->coord);
      n_ops = fill_three_stores (f, TRUE);
      g_assert_cmpuint (ks[i], <, n_ops);
      _qstore_fault_arm (QSTORE_FAULT_WRITE_OP, ks[i]);
      g_assert_false (qstore_coordinator_commit (f->coord, &error));
      g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_IO);
      _qstore_fault_disarm_all ();

      /* The transaction is over and left nothing. */
      g_assert_false (qstore_coordinator_in_transaction (f->coord));
      assert_kscan (f->a, a_before);
      assert_kscan (f->ai, ai_before);
      assert_kscan (f->b, b_before);
      stats_a = read_stats (f->provider, "main.a");
      stats_b = read_stats (f->provider, "main.b");
      g_assert_cmpstr (stats_a, ==, stats_a_before);
      g_assert_cmpstr (stats_b, ==, stats_b_before);
      tx = read_meta_in (f->provider, "__stats__", "tx");
      g_assert_cmpstr (tx, ==, "1");
      g_assert_cmpuint (qstore_coordinator_get_last_tx_id (f->coord), ==, 1);
      g_assert_cmpint (qstore_coordinator_get_row_count (f->coord, "main", "a"), ==, 2);
      g_assert_cmpint (qstore_coordinator_get_row_count (f->coord, "main", "b"), ==, 1);
      g_assert_cmpuint (sets->len, ==, 1);
      other = new_coordinator (f->provider);
      g_assert_cmpuint (qstore_coordinator_get_last_tx_id (other), ==, 1);
      g_assert_null (qstore_coordinator_get_interrupted_commit (other));

      /* The next transaction starts clean: none of the failed writes. */
      qstore_coordinator_begin (f->coord);
      assert_cget (f, f->a, "k2", NULL);
      assert_cget (f, f->a, "old", "committed");
      assert_cscan (f, f->b, NULL, "gone=committed");
      g_assert_cmpint (qstore_coordinator_get_row_count (f->coord, "main", "a"), ==, 2);
      qstore_coordinator_rollback (f->coord);
    }

  /* Without a fault the same transaction commits. */
  qstore_coordinator_begin (f->coord);
  fill_three_stores (f, TRUE);
  commit_ok (f);
  g_assert_cmpuint (qstore_coordinator_get_last_tx_id (f->coord), ==, 2);
  g_assert_cmpuint (sets->len, ==, 2);
  assert_kscan (f->a, "k1=new|k2=new");
  assert_kscan (f->ai, "i1=k1|i2=k2");
  assert_kscan (f->b, "m1=new|m2=new");
  {
    g_autofree char *stats_a = read_stats (f->provider, "main.a");
    g_autofree char *stats_b = read_stats (f->provider, "main.b");

    g_assert_cmpint (stats_row_count (stats_a, NULL), ==, 4);
    g_assert_cmpint (stats_row_count (stats_b, NULL), ==, 2);
  }
}

static void
test_commit_refuses_long_keys (Fixture       *f,
                               gconstpointer  data)
{
  gsize max = qstore_provider_get_max_key_length (f->provider);
  g_autoptr(GError) error = NULL;
  g_autofree guint8 *big = NULL;

  if (max == 0)
    {
      g_test_skip ("the provider has no key length limit");
      return;
    }
  big = g_malloc (max + 1);
  memset (big, 'k', max + 1);

  qstore_coordinator_begin (f->coord);
  cput (f, f->a, "fine", "v");
  qstore_coordinator_put (f->coord, f->b, big, max + 1, (const guint8 *) "v", 1);
  g_assert_false (qstore_coordinator_commit (f->coord, &error));
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "main.b"));
  /* Refused before anything was written, even store by store. */
  assert_kscan (f->a, "");
  g_assert_null (qstore_coordinator_get_interrupted_commit (f->coord));
  {
    g_autofree char *marker = read_meta (f->provider, "commit");

    g_assert_null (marker);
  }
  g_assert_cmpuint (qstore_coordinator_get_last_tx_id (f->coord), ==, 0);
}

static void
test_tx_ids (Fixture       *f,
             gconstpointer  data)
{
  /* An atomic commit keeps the id with the row counts; one made store by
   * store, with the marker's removal in the catalog. */
  const char *kept_in = atomic (f) ? "__stats__" : "__catalog__";
  const char *other = atomic (f) ? "__catalog__" : "__stats__";
  g_autoptr(GError) error = NULL;
  g_autoptr(QStoreCoordinator) second = NULL;

  g_assert_cmpuint (qstore_coordinator_get_last_tx_id (f->coord), ==, 0);
  g_assert_null (read_meta_in (f->provider, kept_in, "tx"));

  for (guint i = 1; i <= 3; i++)
    {
      g_autofree char *value = g_strdup_printf ("v%u", i);
      g_autofree char *expected = g_strdup_printf ("%u", i);
      g_autofree char *tx = NULL;
      g_autofree char *elsewhere = NULL;

      qstore_coordinator_begin (f->coord);
      cput (f, f->a, "k", value);
      commit_ok (f);
      g_assert_cmpuint (qstore_coordinator_get_last_tx_id (f->coord), ==, i);
      tx = read_meta_in (f->provider, kept_in, "tx");
      g_assert_cmpstr (tx, ==, expected);
      elsewhere = read_meta_in (f->provider, other, "tx");
      g_assert_null (elsewhere);
    }

  /* A transaction that wrote nothing takes no id; nor does a rollback. */
  qstore_coordinator_begin (f->coord);
  commit_ok (f);
  qstore_coordinator_begin (f->coord);
  cput (f, f->a, "k", "rolled back");
  qstore_coordinator_rollback (f->coord);
  qstore_coordinator_begin (f->coord);
  cput (f, f->a, "k", "undone");
  qstore_coordinator_rollback_to (f->coord, -1);
  commit_ok (f);
  g_assert_cmpuint (qstore_coordinator_get_last_tx_id (f->coord), ==, 3);
  /* Committing without a transaction is a no-op. */
  commit_ok (f);

  second = new_coordinator (f->provider);
  g_assert_cmpuint (qstore_coordinator_get_last_tx_id (second), ==, 3);
  g_clear_object (&second);

  if (f->caps & QSTORE_CAPABILITY_PERSISTENT)
    {
      close_all (f);
      open_all (f);
      g_assert_cmpuint (qstore_coordinator_get_last_tx_id (f->coord), ==, 3);
      assert_kget (f->a, "k", "v3");
      qstore_coordinator_begin (f->coord);
      cput (f, f->a, "k", "v4");
      commit_ok (f);
      g_assert_cmpuint (qstore_coordinator_get_last_tx_id (f->coord), ==, 4);
    }

  /* The last id is the larger of the two stores': a store of an earlier
   * version holds it in the catalog only, and commits store by store go
   * on writing it there. Ids go on from it. */
  put_tx (f->provider, other, "41");
  second = new_coordinator (f->provider);
  g_assert_cmpuint (qstore_coordinator_get_last_tx_id (second), ==, 41);
  qstore_coordinator_begin (second);
  qstore_coordinator_put (second, f->a, (const guint8 *) "k", 1, (const guint8 *) "v42", 3);
  g_assert_true (qstore_coordinator_commit (second, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (qstore_coordinator_get_last_tx_id (second), ==, 42);
  {
    g_autofree char *tx = read_meta_in (f->provider, kept_in, "tx");

    g_assert_cmpstr (tx, ==, "42");
  }
  g_clear_object (&second);
  put_tx (f->provider, other, "7");
  second = new_coordinator (f->provider);
  g_assert_cmpuint (qstore_coordinator_get_last_tx_id (second), ==, 42);
  g_clear_object (&second);

  /* A malformed id is damage, not zero, in either store; the message
   * names the store. */
  for (guint s = 0; s < 2; s++)
    {
      const char *store = s == 0 ? "__catalog__" : "__stats__";
      const char *bad[] = { "12x", "", "-1", " 7", "99999999999999999999999" };
      g_autofree char *good = read_meta_in (f->provider, store, "tx");

      for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
        {
          QStoreCoordinator *broken;

          put_tx (f->provider, store, bad[i]);
          broken = qstore_coordinator_new (f->provider, &error);
          g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_CORRUPT);
          g_assert_nonnull (strstr (error->message, store));
          g_assert_null (broken);
          g_clear_error (&error);
        }
      put_tx (f->provider, store, good);
    }
  put_tx (f->provider, "__catalog__", "18446744073709551614");
  second = new_coordinator (f->provider);
  g_assert_cmpuint (qstore_coordinator_get_last_tx_id (second), ==, G_MAXUINT64 - 1);
}

#define N_MANY 40

/* The value store @i holds after one transaction wrote "first" to every
 * store and each of three more wrote "r<round>" to every seventh store
 * counted from the end, starting at its round. */
static char *
many_expected (guint i)
{
  char *value = g_strdup ("first");

  for (guint round = 0; round < 3; round++)
    if ((N_MANY - 1 - i) % 7 == round % 7 && N_MANY - 1 - i >= round)
      {
        g_free (value);
        value = g_strdup_printf ("r%u", round);
      }
  return value;
}

/* The write buffer keeps the stores a transaction wrote, idle, for the
 * next one: each transaction still writes each store through a handle it
 * was given, after one that wrote more stores than are kept, and after the
 * handle the last one wrote through was let go. */
static void
test_stores_across_transactions (Fixture       *f,
                                 gconstpointer  data)
{
  QStoreKV *many[N_MANY];
  g_autoptr(QStoreKV) again = NULL;

  for (guint i = 0; i < N_MANY; i++)
    {
      g_autofree char *name = g_strdup_printf ("main.m%u", i);

      many[i] = open_store (f->provider, name);
    }

  qstore_coordinator_begin (f->coord);
  for (guint i = 0; i < N_MANY; i++)
    cput (f, many[i], "k", "first");
  commit_ok (f);

  for (guint round = 0; round < 3; round++)
    {
      g_autofree char *value = g_strdup_printf ("r%u", round);

      qstore_coordinator_begin (f->coord);
      for (guint i = round; i < N_MANY; i += 7)
        cput (f, many[N_MANY - 1 - i], "k", value);
      commit_ok (f);
    }
  for (guint i = 0; i < N_MANY; i++)
    {
      g_autofree char *want = many_expected (i);

      assert_kget (many[i], "k", want);
    }

  /* The last transaction wrote main.m39; its handle goes, a new one
   * writes. */
  g_clear_object (&many[N_MANY - 1]);
  again = open_store (f->provider, "main.m39");
  qstore_coordinator_begin (f->coord);
  cput (f, again, "k", "again");
  cput (f, many[0], "k", "zero");
  commit_ok (f);
  assert_kget (again, "k", "again");
  assert_kget (many[0], "k", "zero");

  for (guint i = 0; i < N_MANY - 1; i++)
    g_object_unref (many[i]);
}

/* A store the last transaction wrote is dropped, and another made under
 * its name: the next transaction writes through the new store's handle,
 * while the program still holds the old one. Then the same after a
 * rename moved the old store away. */
static void
test_store_replaced_between_transactions (Fixture       *f,
                                          gconstpointer  data)
{
  g_autofree char *name = qstore_store_name_for_table ("main", "d");
  g_autofree char *moved_name = qstore_store_name_for_table ("main", "moved");
  g_autoptr(QStoreKV) old = open_store (f->provider, name);
  g_autoptr(QStoreKV) replaced = NULL;
  g_autoptr(QStoreKV) moved = NULL;
  g_autoptr(QStoreKV) last = NULL;
  g_autoptr(QStoreKV) reader = NULL;
  g_autoptr(GError) error = NULL;

  qstore_coordinator_begin (f->coord);
  cput (f, old, "k", "old");
  commit_ok (f);

  g_assert_true (qstore_provider_delete_table_stores (f->provider, "main", "d", NULL, &error));
  g_assert_no_error (error);
  replaced = open_store (f->provider, name);
  qstore_coordinator_begin (f->coord);
  cput (f, replaced, "k", "new");
  commit_ok (f);
  reader = open_store (f->provider, name);
  assert_kget (reader, "k", "new");

  g_assert_true (qstore_provider_rename_table_stores (f->provider, "main", "d", "moved", NULL,
                                                      &error));
  g_assert_no_error (error);
  last = open_store (f->provider, name);
  qstore_coordinator_begin (f->coord);
  cput (f, last, "j", "last");
  commit_ok (f);
  g_clear_object (&reader);
  reader = open_store (f->provider, name);
  assert_kget (reader, "j", "last");
  assert_kget (reader, "k", NULL);
  moved = open_store (f->provider, moved_name);
  assert_kget (moved, "k", "new");
  assert_kget (moved, "j", NULL);
}

static void
test_row_counts (Fixture       *f,
                 gconstpointer  data)
{
  g_autoptr(QStoreCoordinator) second = NULL;
  g_autofree char *stats1 = NULL;
  gint64 before, after, updated_at = 0;

  g_assert_cmpint (qstore_coordinator_get_row_count (f->coord, "main", "t"), ==, 0);

  before = g_get_real_time () / 1000;
  qstore_coordinator_begin (f->coord);
  qstore_coordinator_adjust_row_count (f->coord, "main", "t", 2);
  /* Names are case-insensitive, as SQL's are. */
  qstore_coordinator_adjust_row_count (f->coord, "Main", "T", 1);
  g_assert_cmpint (qstore_coordinator_get_row_count (f->coord, "main", "t"), ==, 3);
  /* A table whose count does not change gets no stats entry. */
  qstore_coordinator_adjust_row_count (f->coord, "main", "u", 1);
  qstore_coordinator_adjust_row_count (f->coord, "main", "u", -1);
  commit_ok (f);
  after = g_get_real_time () / 1000;

  stats1 = read_stats (f->provider, "main.t");
  g_assert_cmpint (stats_row_count (stats1, &updated_at), ==, 3);
  g_assert_cmpint (updated_at, >=, before);
  g_assert_cmpint (updated_at, <=, after);
  {
    g_autofree char *stats_u = read_stats (f->provider, "main.u");

    g_assert_null (stats_u);
  }

  /* Discarded at rollback, and the stored value is untouched. */
  qstore_coordinator_begin (f->coord);
  qstore_coordinator_adjust_row_count (f->coord, "main", "t", -1);
  g_assert_cmpint (qstore_coordinator_get_row_count (f->coord, "main", "t"), ==, 2);
  qstore_coordinator_rollback (f->coord);
  g_assert_cmpint (qstore_coordinator_get_row_count (f->coord, "main", "t"), ==, 3);
  {
    g_autofree char *stats = read_stats (f->provider, "main.t");

    g_assert_cmpstr (stats, ==, stats1);
  }

  /* Savepoints undo adjustments. */
  qstore_coordinator_begin (f->coord);
  qstore_coordinator_adjust_row_count (f->coord, "main", "t", 5);
  qstore_coordinator_savepoint (f->coord, 0);
  qstore_coordinator_adjust_row_count (f->coord, "main", "t", 10);
  qstore_coordinator_rollback_to (f->coord, 0);
  qstore_coordinator_adjust_row_count (f->coord, "main", "t", -1);
  commit_ok (f);
  g_assert_cmpint (qstore_coordinator_get_row_count (f->coord, "main", "t"), ==, 7);
  {
    g_autofree char *stats = read_stats (f->provider, "main.t");

    g_assert_cmpint (stats_row_count (stats, NULL), ==, 7);
  }

  /* A new coordinator reads the stored count. */
  second = new_coordinator (f->provider);
  g_assert_cmpint (qstore_coordinator_get_row_count (second, "main", "t"), ==, 7);
  g_clear_object (&second);

  /* A damaged stats entry does not stop commits: it is rewritten. */
  {
    g_autoptr(QStoreKV) stats = open_store (f->provider, "__stats__");
    g_autoptr(GError) error = NULL;
    g_autofree char *fixed = NULL;

    g_assert_true (qstore_kv_put (stats, (const guint8 *) "main.v", 6,
                                  (const guint8 *) "{broken", 7, 0, &error));
    g_assert_no_error (error);
    second = new_coordinator (f->provider);
    g_test_expect_message ("qstore", G_LOG_LEVEL_WARNING, "*main.v*malformed*");
    qstore_coordinator_begin (second);
    qstore_coordinator_adjust_row_count (second, "main", "v", 4);
    g_assert_true (qstore_coordinator_commit (second, &error));
    g_assert_no_error (error);
    g_test_assert_expected_messages ();
    fixed = read_stats (f->provider, "main.v");
    g_assert_cmpint (stats_row_count (fixed, NULL), ==, 4);
  }
}

static void
test_committed_signal (Fixture       *f,
                       gconstpointer  data)
{
  g_autoptr(GPtrArray) sets = g_ptr_array_new_with_free_func (g_object_unref);
  g_autoptr(GBytes) r1 = encode_row ("one");
  g_autoptr(GBytes) r2 = encode_row ("two");
  g_autoptr(GBytes) r3 = encode_row ("three");
  g_autoptr(GError) error = NULL;
  QStoreChangeSet *set;
  gint64 before, after;

  g_signal_connect (f->coord, "committed", G_CALLBACK (collect_change_set), sets);

  before = g_get_real_time ();
  qstore_coordinator_begin (f->coord);
  cput (f, f->a, "1", "one");
  qstore_coordinator_record_change (f->coord, "main", "A", QSTORE_CHANGE_INSERT, NULL, r1);
  qstore_coordinator_record_change (f->coord, "aux", "b", QSTORE_CHANGE_UPDATE, r2, r3);
  qstore_coordinator_record_change (f->coord, "main", "A", QSTORE_CHANGE_DELETE, r1, NULL);
  g_assert_cmpuint (sets->len, ==, 0);
  commit_ok (f);
  after = g_get_real_time ();

  g_assert_cmpuint (sets->len, ==, 1);
  set = sets->pdata[0];
  g_assert_cmpuint (qstore_change_set_get_tx_id (set), ==, 1);
  g_assert_cmpint (qstore_change_set_get_time (set), >=, before);
  g_assert_cmpint (qstore_change_set_get_time (set), <=, after);
  g_assert_cmpuint (qstore_change_set_get_n_changes (set), ==, 3);

  g_assert_cmpstr (qstore_change_set_get_schema (set, 0), ==, "main");
  g_assert_cmpstr (qstore_change_set_get_table (set, 0), ==, "A");
  g_assert_cmpint (qstore_change_set_get_op (set, 0), ==, QSTORE_CHANGE_INSERT);
  assert_row (qstore_change_set_get_old_row (set, 0), NULL);
  assert_row (qstore_change_set_get_new_row (set, 0), "one");

  g_assert_cmpstr (qstore_change_set_get_schema (set, 1), ==, "aux");
  g_assert_cmpstr (qstore_change_set_get_table (set, 1), ==, "b");
  g_assert_cmpint (qstore_change_set_get_op (set, 1), ==, QSTORE_CHANGE_UPDATE);
  assert_row (qstore_change_set_get_old_row (set, 1), "two");
  assert_row (qstore_change_set_get_new_row (set, 1), "three");

  g_assert_cmpstr (qstore_change_set_get_table (set, 2), ==, "A");
  g_assert_cmpint (qstore_change_set_get_op (set, 2), ==, QSTORE_CHANGE_DELETE);
  assert_row (qstore_change_set_get_old_row (set, 2), "one");
  assert_row (qstore_change_set_get_new_row (set, 2), NULL);

  /* None on rollback… */
  qstore_coordinator_begin (f->coord);
  cput (f, f->a, "2", "two");
  qstore_coordinator_record_change (f->coord, "main", "a", QSTORE_CHANGE_INSERT, NULL, r2);
  qstore_coordinator_rollback (f->coord);
  g_assert_cmpuint (sets->len, ==, 1);

  /* …nor for a transaction that wrote nothing… */
  qstore_coordinator_begin (f->coord);
  commit_ok (f);
  g_assert_cmpuint (sets->len, ==, 1);

  /* …nor for a failed commit. */
  qstore_coordinator_begin (f->coord);
  cput (f, f->a, "3", "three");
  qstore_coordinator_record_change (f->coord, "main", "a", QSTORE_CHANGE_INSERT, NULL, r3);
  _qstore_fault_arm (QSTORE_FAULT_WRITE_OP, 0);
  g_assert_false (qstore_coordinator_commit (f->coord, &error));
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_IO);
  g_clear_error (&error);
  _qstore_fault_disarm_all ();
  g_assert_cmpuint (sets->len, ==, 1);

  /* Writes without row changes (DDL, say) still take an id and tell so. */
  qstore_coordinator_begin (f->coord);
  cput (f, f->b, "x", "y");
  commit_ok (f);
  g_assert_cmpuint (sets->len, ==, 2);
  set = sets->pdata[1];
  g_assert_cmpuint (qstore_change_set_get_tx_id (set), ==, 2);
  g_assert_cmpuint (qstore_change_set_get_n_changes (set), ==, 0);

  /* The change set outlives the coordinator. */
  g_clear_object (&f->coord);
  set = sets->pdata[0];
  g_assert_cmpstr (qstore_change_set_get_table (set, 0), ==, "A");
  assert_row (qstore_change_set_get_new_row (set, 0), "one");
}

/* Tests: without an atomic batch
 *
 * Commit writes the marker {"tx": N, "stores": [...]} synchronously, then
 * one store at a time: data and index stores by name, `__stats__`, then
 * `__catalog__` (transaction id, catalog entries and the marker's removal).
 * Each store's write is all or nothing, but an interruption between two of
 * them tears the transaction:
 *   - stores written before it keep the transaction's writes, the others
 *     do not: a table's index can disagree with its data, and two tables
 *     can each hold half of the transaction;
 *   - row counts in `__stats__` are not updated when it comes before them;
 *   - catalog entries (DDL) and the transaction id are not written, so the
 *     half-applied writes carry no id and no change set is emitted.
 * The marker is left behind and names every store involved, so the
 * database can rebuild those tables' indexes and recount their rows. */

typedef struct
{
  char              *dir;
  char              *uri;
  QStoreProvider    *provider;
  QStoreCoordinator *coord;
  QStoreKV          *a, *b, *catalog;
} Scratch;

static void
scratch_open (Scratch    *s,
              const char *parent,
              guint       n)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *leaf = g_strdup_printf ("store-%u", n);

  s->uri = test_provider_uri (parent, leaf);
  s->provider = qstore_provider_new_for_uri (s->uri, QSTORE_OPEN_NONE, &error);
  g_assert_no_error (error);
  s->coord = new_coordinator (s->provider);
  s->a = open_store (s->provider, "main.a");
  s->b = open_store (s->provider, "main.b");
  s->catalog = open_store (s->provider, "__catalog__");
}

static void
scratch_close (Scratch *s)
{
  g_clear_object (&s->a);
  g_clear_object (&s->b);
  g_clear_object (&s->catalog);
  g_clear_object (&s->coord);
  qstore_provider_close_all (s->provider);
  g_clear_object (&s->provider);
  g_clear_pointer (&s->uri, g_free);
}

static void
sput (Scratch    *s,
      QStoreKV   *kv,
      const char *key,
      const char *value)
{
  qstore_coordinator_put (s->coord, kv, (const guint8 *) key, strlen (key),
                          (const guint8 *) value, strlen (value));
}

static void
assert_marker (const char  *marker,
               guint64      tx,
               const char **stores)
{
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GError) error = NULL;
  JsonObject *object;
  JsonArray *array;
  guint n = g_strv_length ((char **) stores);

  g_assert_nonnull (marker);
  json_parser_load_from_data (parser, marker, -1, &error);
  g_assert_no_error (error);
  object = json_node_get_object (json_parser_get_root (parser));
  g_assert_cmpint (json_object_get_int_member (object, "tx"), ==, (gint64) tx);
  array = json_object_get_array_member (object, "stores");
  g_assert_cmpuint (json_array_get_length (array), ==, n);
  for (guint i = 0; i < n; i++)
    g_assert_cmpstr (json_array_get_string_element (array, i), ==, stores[i]);
}

static void
test_marker (Fixture       *f,
             gconstpointer  data)
{
  const char *all[] = { "main.a", "main.b", "__stats__", "__catalog__", NULL };
  /* Ops: marker 1 | main.a 2 | main.b 1 | __stats__ 1 | __catalog__ 3
   * (bundle, tx id, marker removal). Failing op k stops at: */
  struct { guint k; gboolean marker; gboolean a; gboolean b; gboolean stats; } cases[] = {
    { 0, FALSE, FALSE, FALSE, FALSE },   /* the marker itself: nothing written */
    { 1, TRUE,  FALSE, FALSE, FALSE },   /* main.a's first op */
    { 2, TRUE,  FALSE, FALSE, FALSE },   /* main.a's second op: main.a is atomic */
    { 3, TRUE,  TRUE,  FALSE, FALSE },   /* main.b */
    { 4, TRUE,  TRUE,  TRUE,  FALSE },   /* __stats__ */
    { 5, TRUE,  TRUE,  TRUE,  TRUE  },   /* __catalog__ */
    { 7, TRUE,  TRUE,  TRUE,  TRUE  },   /* the marker's removal, last */
  };

  if (atomic (f))
    {
      g_test_skip ("the provider has an atomic batch (see /atomic-commit)");
      return;
    }

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      Scratch s = { 0 };
      g_autoptr(GError) error = NULL;
      g_autoptr(QStoreCoordinator) reopened = NULL;
      g_autofree char *marker = NULL, *tx = NULL, *stats = NULL, *bundle = NULL;
      g_autoptr(GBytes) bundle_key = qstore_catalog_key_for_table ("main", "a");

      scratch_open (&s, f->dir, i);
      qstore_coordinator_begin (s.coord);
      sput (&s, s.b, "b1", "v");
      sput (&s, s.a, "a2", "v");
      sput (&s, s.a, "a1", "v");
      qstore_coordinator_put (s.coord, s.catalog, g_bytes_get_data (bundle_key, NULL),
                              g_bytes_get_size (bundle_key),
                              (const guint8 *) "CREATE TABLE a(x);\n", 19);
      qstore_coordinator_adjust_row_count (s.coord, "main", "a", 2);

      _qstore_fault_arm (QSTORE_FAULT_WRITE_OP, cases[i].k);
      g_assert_false (qstore_coordinator_commit (s.coord, &error));
      g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_IO);
      g_clear_error (&error);
      _qstore_fault_disarm_all ();
      g_assert_false (qstore_coordinator_in_transaction (s.coord));
      g_assert_cmpuint (qstore_coordinator_get_last_tx_id (s.coord), ==, 0);

      /* Which stores were written shows the order. */
      {
        g_autofree char *a = kscan (s.a), *b = kscan (s.b);

        g_assert_cmpstr (a, ==, cases[i].a ? "a1=v|a2=v" : "");
        g_assert_cmpstr (b, ==, cases[i].b ? "b1=v" : "");
      }
      stats = read_stats (s.provider, "main.a");
      if (cases[i].stats)
        g_assert_cmpint (stats_row_count (stats, NULL), ==, 2);
      else
        g_assert_null (stats);
      /* The catalog write is the last: it never landed. */
      tx = read_meta (s.provider, "tx");
      g_assert_null (tx);
      bundle = kget (s.catalog, "main.a");
      g_assert_null (bundle);

      marker = read_meta (s.provider, "commit");
      if (!cases[i].marker)
        {
          g_assert_null (marker);
          g_assert_null (qstore_coordinator_get_interrupted_commit (s.coord));
          scratch_close (&s);
          continue;
        }
      assert_marker (marker, 1, all);
      /* Reported by the coordinator that was interrupted… */
      g_assert_cmpstr (qstore_coordinator_get_interrupted_commit (s.coord), ==, marker);
      /* …and by a new one, as after a crash. */
      reopened = new_coordinator (s.provider);
      g_assert_cmpstr (qstore_coordinator_get_interrupted_commit (reopened), ==, marker);
      g_assert_cmpuint (qstore_coordinator_get_last_tx_id (reopened), ==, 0);
      g_clear_object (&reopened);

      /* A later commit interrupted too lists the earlier stores as well. */
      qstore_coordinator_begin (s.coord);
      sput (&s, s.b, "b2", "v");
      qstore_coordinator_adjust_row_count (s.coord, "main", "b", 1);
      _qstore_fault_arm (QSTORE_FAULT_WRITE_OP, 1);
      g_assert_false (qstore_coordinator_commit (s.coord, &error));
      g_clear_error (&error);
      _qstore_fault_disarm_all ();
      g_clear_pointer (&marker, g_free);
      marker = read_meta (s.provider, "commit");
      assert_marker (marker, 1, all);

      /* A commit that completes removes the marker and takes the id. */
      qstore_coordinator_begin (s.coord);
      sput (&s, s.b, "b3", "v");
      sput (&s, s.a, "a3", "v");
      qstore_coordinator_commit (s.coord, &error);
      g_assert_no_error (error);
      g_clear_pointer (&marker, g_free);
      marker = read_meta (s.provider, "commit");
      g_assert_null (marker);
      g_assert_null (qstore_coordinator_get_interrupted_commit (s.coord));
      g_assert_cmpuint (qstore_coordinator_get_last_tx_id (s.coord), ==, 1);
      g_clear_pointer (&tx, g_free);
      tx = read_meta (s.provider, "tx");
      g_assert_cmpstr (tx, ==, "1");
      reopened = new_coordinator (s.provider);
      g_assert_null (qstore_coordinator_get_interrupted_commit (reopened));
      g_clear_object (&reopened);
      scratch_close (&s);
    }

  /* A crash: the marker is on disk, a fresh process reports it. */
  if (f->caps & QSTORE_CAPABILITY_PERSISTENT)
    {
      Scratch s = { 0 };
      g_autoptr(GError) error = NULL;
      g_autoptr(GError) local_error = NULL;
      const char *only_a[] = { "main.a", "__catalog__", NULL };

      scratch_open (&s, f->dir, 100);
      qstore_coordinator_begin (s.coord);
      sput (&s, s.a, "a1", "v");
      _qstore_fault_arm (QSTORE_FAULT_WRITE_OP, 1);
      g_assert_false (qstore_coordinator_commit (s.coord, &error));
      _qstore_fault_disarm_all ();
      g_clear_object (&s.a);
      g_clear_object (&s.b);
      g_clear_object (&s.catalog);
      g_clear_object (&s.coord);
      qstore_provider_close_all (s.provider);
      g_clear_object (&s.provider);

      s.provider = qstore_provider_new_for_uri (s.uri, QSTORE_OPEN_NONE, &local_error);
      g_assert_no_error (local_error);
      s.coord = new_coordinator (s.provider);
      s.a = open_store (s.provider, "main.a");
      s.b = open_store (s.provider, "main.b");
      s.catalog = open_store (s.provider, "__catalog__");
      assert_marker (qstore_coordinator_get_interrupted_commit (s.coord), 1, only_a);
      scratch_close (&s);
    }

  /* A transaction writing one store only needs no marker. */
  {
    Scratch s = { 0 };
    g_autoptr(GError) error = NULL;
    g_autofree char *marker = NULL;

    scratch_open (&s, f->dir, 200);
    qstore_coordinator_begin (s.coord);
    qstore_coordinator_put (s.coord, s.catalog, (const guint8 *) "main.z", 6,
                            (const guint8 *) "CREATE TABLE z(x);\n", 19);
    /* One op for the bundle, one for the id, in one write: fail the second. */
    _qstore_fault_arm (QSTORE_FAULT_WRITE_OP, 1);
    g_assert_false (qstore_coordinator_commit (s.coord, &error));
    _qstore_fault_disarm_all ();
    marker = read_meta (s.provider, "commit");
    g_assert_null (marker);
    assert_kget (s.catalog, "main.z", NULL);
    scratch_close (&s);
  }
}

/* Tests: against a model */

static gint
compare_bytes (gconstpointer a,
               gconstpointer b,
               gpointer      user_data)
{
  gsize la, lb;
  const guint8 *da = g_bytes_get_data ((GBytes *) a, &la);
  const guint8 *db = g_bytes_get_data ((GBytes *) b, &lb);

  return qstore_key_compare (da ? da : (const guint8 *) "", la, db ? db : (const guint8 *) "", lb);
}

static GTree *
model_new (void)
{
  return g_tree_new_full (compare_bytes, NULL, (GDestroyNotify) g_bytes_unref,
                          (GDestroyNotify) g_bytes_unref);
}

static gboolean
copy_entry (gpointer key,
            gpointer value,
            gpointer data)
{
  g_tree_insert (data, g_bytes_ref (key), g_bytes_ref (value));
  return FALSE;
}

static GTree *
model_copy (GTree *model)
{
  GTree *copy = model_new ();

  g_tree_foreach (model, copy_entry, copy);
  return copy;
}

static GBytes *
random_key (void)
{
  /* Few distinct bytes, short keys: collisions, prefixes, 0x00 and 0xff. */
  static const guint8 alphabet[] = { 0x00, 0x01, 'a', 'b', 0x7f, 0x80, 0xff };
  guint8 key[6];
  guint len = g_test_rand_int_range (1, 6);

  for (guint i = 0; i < len; i++)
    key[i] = alphabet[g_test_rand_int_range (0, G_N_ELEMENTS (alphabet))];
  return g_bytes_new (key, len);
}

static GBytes *
random_value (void)
{
  guint8 value[40];
  guint len = g_test_rand_int_range (0, 3) == 0 ? 8 : g_test_rand_int_range (0, 40);

  for (guint i = 0; i < len; i++)
    value[i] = g_test_rand_int_range (0, 256);
  return g_bytes_new (value, len);
}

typedef struct
{
  GString            *out;
  const QStoreBounds *bounds;
} ModelScan;

static void
append_entry (GString      *out,
              const guint8 *key,
              gsize         key_len,
              const guint8 *value,
              gsize         value_len)
{
  g_autofree char *k = g_base64_encode (key, key_len);
  g_autofree char *v = g_base64_encode (value, value_len);

  g_string_append_printf (out, "%s=%s|", k, v);
}

static gboolean
model_scan_entry (gpointer key,
                  gpointer value,
                  gpointer data)
{
  ModelScan *scan = data;
  gsize kl, vl;
  const guint8 *k = g_bytes_get_data (key, &kl);
  const guint8 *v = g_bytes_get_data (value, &vl);

  if (qstore_bounds_above_lower (scan->bounds, k, kl) &&
      qstore_bounds_below_upper (scan->bounds, k, kl))
    append_entry (scan->out, k, kl, v, vl);
  return FALSE;
}

static char *
model_scan (GTree              *model,
            const QStoreBounds *bounds)
{
  ModelScan scan = { g_string_new (NULL), bounds };
  g_auto(GStrv) parts = NULL;
  GString *out = g_string_new (NULL);
  gint64 limit = -1;
  guint n;

  g_tree_foreach (model, model_scan_entry, &scan);
  parts = g_strsplit (scan.out->str, "|", -1);
  g_string_free (scan.out, TRUE);
  /* The trailing "|" leaves one empty part (and "" splits into none). */
  n = MAX (g_strv_length (parts), 1) - 1;
  if (!qstore_bounds_get_limit (bounds, &limit))
    limit = G_MAXINT64;
  for (guint i = 0; i < n && (gint64) i < limit; i++)
    {
      guint at = qstore_bounds_get_reverse (bounds) ? n - 1 - i : i;

      g_string_append (out, parts[at]);
      g_string_append_c (out, '|');
    }
  return g_string_free (out, FALSE);
}

static char *
iter_scan (QStoreIter *iter)
{
  g_autoptr(GError) error = NULL;
  GString *out = g_string_new (NULL);

  while (qstore_iter_next (iter, &error))
    {
      gsize kl, vl;
      const guint8 *k = qstore_iter_peek_key (iter, &kl);
      const guint8 *v = qstore_iter_peek_value (iter, &vl);

      append_entry (out, k, kl, v, vl);
    }
  g_assert_no_error (error);
  return g_string_free (out, FALSE);
}

static QStoreBounds *
random_bounds (void)
{
  QStoreBounds *bounds = qstore_bounds_new ();
  g_autoptr(GBytes) lower = random_key ();
  g_autoptr(GBytes) upper = random_key ();

  switch (g_test_rand_int_range (0, 3))
    {
    case 1:
      qstore_bounds_set_gte (bounds, g_bytes_get_data (lower, NULL), g_bytes_get_size (lower));
      break;
    case 2:
      qstore_bounds_set_gt (bounds, g_bytes_get_data (lower, NULL), g_bytes_get_size (lower));
      break;
    default:
      break;
    }
  switch (g_test_rand_int_range (0, 3))
    {
    case 1:
      qstore_bounds_set_lte (bounds, g_bytes_get_data (upper, NULL), g_bytes_get_size (upper));
      break;
    case 2:
      qstore_bounds_set_lt (bounds, g_bytes_get_data (upper, NULL), g_bytes_get_size (upper));
      break;
    default:
      break;
    }
  qstore_bounds_set_reverse (bounds, g_test_rand_bit ());
  if (g_test_rand_int_range (0, 4) == 0)
    qstore_bounds_set_limit (bounds, g_test_rand_int_range (0, 20));
  return bounds;
}

static void
check_against_model (Fixture *f,
                     GTree   *model,
                     gboolean committed)
{
  for (guint i = 0; i < 3; i++)
    {
      g_autoptr(QStoreBounds) bounds = random_bounds ();
      g_autoptr(GError) error = NULL;
      g_autoptr(QStoreIter) iter = committed ? qstore_kv_iterate (f->a, bounds, &error)
                                             : qstore_coordinator_iterate (f->coord, f->a, bounds, &error);
      g_autofree char *expected = model_scan (model, bounds);
      g_autofree char *got = NULL;

      g_assert_no_error (error);
      got = iter_scan (iter);
      g_assert_cmpstr (got, ==, expected);

      /* Sought to another range, it gives what a new iterator would. */
      {
        g_autoptr(QStoreBounds) other = random_bounds ();
        g_autofree char *other_expected = model_scan (model, other);
        g_autofree char *other_got = NULL;

        g_assert_true (qstore_iter_seek (iter, other, &error));
        g_assert_no_error (error);
        other_got = iter_scan (iter);
        g_assert_cmpstr (other_got, ==, other_expected);
      }
    }
  for (guint i = 0; i < 5; i++)
    {
      g_autoptr(GBytes) key = random_key ();
      g_autoptr(GError) error = NULL;
      g_autoptr(GBytes) got = qstore_coordinator_get (f->coord, f->a,
                                                      g_bytes_get_data (key, NULL),
                                                      g_bytes_get_size (key), &error);
      GBytes *expected = g_tree_lookup (model, key);

      g_assert_no_error (error);
      if (expected == NULL)
        g_assert_null (got);
      else
        {
          g_assert_nonnull (got);
          g_assert_true (g_bytes_equal (got, expected));
        }
    }
}

static void
test_model (Fixture       *f,
            gconstpointer  data)
{
  g_autoptr(GTree) committed = model_new ();
  g_autoptr(GPtrArray) levels = g_ptr_array_new_with_free_func ((GDestroyNotify) g_tree_unref);
  guint rounds = g_test_thorough () ? 40 : 8;

  for (guint round = 0; round < rounds; round++)
    {
      g_autoptr(GTree) current = model_copy (committed);

      qstore_coordinator_begin (f->coord);
      g_ptr_array_set_size (levels, 0);

      for (guint step = 0; step < 400; step++)
        {
          int what = g_test_rand_int_range (0, 100);

          if (what < 55)
            {
              GBytes *key = random_key ();
              GBytes *value = random_value ();

              qstore_coordinator_put (f->coord, f->a, g_bytes_get_data (key, NULL),
                                      g_bytes_get_size (key),
                                      g_bytes_get_data (value, NULL), g_bytes_get_size (value));
              g_tree_replace (current, key, value);
            }
          else if (what < 75)
            {
              g_autoptr(GBytes) key = random_key ();

              qstore_coordinator_delete (f->coord, f->a, g_bytes_get_data (key, NULL),
                                         g_bytes_get_size (key));
              g_tree_remove (current, key);
            }
          else if (what < 82)
            {
              int depth = g_test_rand_int_range (0, 4);

              qstore_coordinator_savepoint (f->coord, depth);
              while ((int) levels->len <= depth)
                g_ptr_array_add (levels, model_copy (current));
            }
          else if (what < 87)
            {
              int depth = g_test_rand_int_range (0, 4);

              qstore_coordinator_release (f->coord, depth);
              if ((guint) depth < levels->len)
                g_ptr_array_set_size (levels, depth);
            }
          else if (what < 93)
            {
              int depth = g_test_rand_int_range (-1, 5);

              qstore_coordinator_rollback_to (f->coord, depth);
              g_tree_unref (current);
              if (depth < 0 || (guint) depth >= levels->len)
                {
                  current = model_copy (committed);
                  g_ptr_array_set_size (levels, 0);
                  while ((int) levels->len <= depth)
                    g_ptr_array_add (levels, model_copy (current));
                }
              else
                {
                  current = model_copy (levels->pdata[depth]);
                  g_ptr_array_set_size (levels, depth + 1);
                }
            }
          else
            check_against_model (f, current, FALSE);
        }
      check_against_model (f, current, FALSE);

      if (g_test_rand_int_range (0, 4) == 0)
        {
          qstore_coordinator_rollback (f->coord);
        }
      else
        {
          commit_ok (f);
          g_tree_unref (committed);
          committed = g_steal_pointer (&current);
        }
      check_against_model (f, committed, TRUE);
    }
}

/* Many keys: node splits in every direction, undo across them. */
static void
test_large (Fixture       *f,
            gconstpointer  data)
{
  const guint n = g_test_thorough () ? 200000 : 20000;
  g_autofree guint *order = g_new (guint, n);
  g_autoptr(GError) error = NULL;

  for (guint i = 0; i < n; i++)
    order[i] = i;
  for (guint i = n - 1; i > 0; i--)
    {
      guint j = g_test_rand_int_range (0, i + 1);
      guint t = order[i];

      order[i] = order[j];
      order[j] = t;
    }

  for (guint pattern = 0; pattern < 3; pattern++)
    {
      qstore_coordinator_begin (f->coord);
      /* even keys before the savepoint, in random, ascending or descending order */
      for (guint i = 0; i < n; i++)
        {
          guint v = pattern == 0 ? order[i] : pattern == 1 ? i : n - 1 - i;
          guint32 key = GUINT32_TO_BE (v * 2);

          qstore_coordinator_put (f->coord, f->a, (const guint8 *) &key, sizeof key,
                                  (const guint8 *) &v, sizeof v);
        }
      qstore_coordinator_savepoint (f->coord, 0);
      /* odd keys, overwrites of some even ones, deletes of others */
      for (guint i = 0; i < n; i++)
        {
          guint v = order[i];
          guint32 odd = GUINT32_TO_BE (v * 2 + 1);
          guint32 even = GUINT32_TO_BE (v * 2);
          guint big = v + 1000000000;

          qstore_coordinator_put (f->coord, f->a, (const guint8 *) &odd, sizeof odd,
                                  (const guint8 *) &v, sizeof v);
          if (v % 3 == 0)
            qstore_coordinator_put (f->coord, f->a, (const guint8 *) &even, sizeof even,
                                    (const guint8 *) &big, sizeof big);
          else if (v % 3 == 1)
            qstore_coordinator_delete (f->coord, f->a, (const guint8 *) &even, sizeof even);
        }

      for (gboolean reverse = FALSE; reverse <= TRUE; reverse++)
        {
          g_autoptr(QStoreBounds) bounds = qstore_bounds_new ();
          g_autoptr(QStoreIter) iter = NULL;
          guint count = 0;
          gint64 previous = reverse ? G_MAXINT64 : -1;

          qstore_bounds_set_reverse (bounds, reverse);
          iter = qstore_coordinator_iterate (f->coord, f->a, bounds, &error);
          g_assert_no_error (error);
          while (qstore_iter_next (iter, &error))
            {
              gsize len;
              guint32 key;
              guint value, k;

              memcpy (&key, qstore_iter_peek_key (iter, &len), sizeof key);
              memcpy (&value, qstore_iter_peek_value (iter, &len), sizeof value);
              k = GUINT32_FROM_BE (key);
              g_assert_true (reverse ? (gint64) k < previous : (gint64) k > previous);
              previous = k;
              if (k % 2 == 1)
                g_assert_cmpuint (value, ==, k / 2);
              else
                {
                  g_assert_cmpuint ((k / 2) % 3, !=, 1);
                  g_assert_cmpuint (value, ==, (k / 2) % 3 == 0 ? k / 2 + 1000000000 : k / 2);
                }
              count++;
            }
          g_assert_no_error (error);
          g_assert_cmpuint (count, ==, n + n - (n + 1) / 3);
        }

      qstore_coordinator_rollback_to (f->coord, 0);
      {
        g_autoptr(QStoreIter) iter = qstore_coordinator_iterate (f->coord, f->a, NULL, &error);
        guint count = 0;

        g_assert_no_error (error);
        while (qstore_iter_next (iter, &error))
          {
            gsize len;
            guint32 key;
            guint value;

            memcpy (&key, qstore_iter_peek_key (iter, &len), sizeof key);
            memcpy (&value, qstore_iter_peek_value (iter, &len), sizeof value);
            g_assert_cmpuint (GUINT32_FROM_BE (key), ==, count * 2);
            g_assert_cmpuint (value, ==, count);
            count++;
          }
        g_assert_no_error (error);
        g_assert_cmpuint (count, ==, n);
      }
      qstore_coordinator_rollback (f->coord);
    }
}

int
main (int   argc,
      char *argv[])
{
  g_autofree char *prefix = NULL;

  g_test_init (&argc, &argv, NULL);

  prefix = g_strdup_printf ("/coordinator/%s", test_provider_spec ());
#define ADD(name, func) G_STMT_START { \
    g_autofree char *path_ = g_strconcat (prefix, "/", name, NULL); \
    g_test_add (path_, Fixture, NULL, fixture_setup, func, fixture_teardown); \
  } G_STMT_END

  ADD ("read-your-writes", test_read_your_writes);
  ADD ("iterate-while-writing", test_iterate_while_writing);
  ADD ("read-transaction", test_read_transaction);
  ADD ("lookup", test_lookup);
  ADD ("savepoints", test_savepoints);
  ADD ("savepoints-bookkeeping", test_savepoints_undo_bookkeeping);
  ADD ("atomic-commit", test_atomic_commit);
  ADD ("long-keys", test_commit_refuses_long_keys);
  ADD ("tx-ids", test_tx_ids);
  ADD ("row-counts", test_row_counts);
  ADD ("stores-across-transactions", test_stores_across_transactions);
  ADD ("store-replaced-between-transactions", test_store_replaced_between_transactions);
  ADD ("committed-signal", test_committed_signal);
  ADD ("marker", test_marker);
  ADD ("model", test_model);
  ADD ("large", test_large);
#undef ADD

  return g_test_run ();
}
