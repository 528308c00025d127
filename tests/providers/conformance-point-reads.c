/* conformance-point-reads.c: many point reads, then writes, then more
 *
 * A provider may keep faster structures for stores it is asked the same
 * kind of question about many times (the memory provider builds a hash
 * index beside a map that served many point reads, and a snapshot keeps
 * the stores it read last). Whatever it keeps, a read sees the latest
 * write, a snapshot sees its own state, and each store its own entries.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "conformance.h"

#define N_KEYS 64
/* Reads of every key: enough to make any reader-side structure pay. */
#define ROUNDS 8

/* Short keys and long ones that share their first 8 bytes: a provider
 * may compare a key's head apart from the rest. */
static char *
key_of (guint i)
{
  return i % 2 == 0 ? g_strdup_printf ("k%03u", i) : g_strdup_printf ("long-key-%03u", i);
}

/* The value of each key, NULL for absent ones. */
typedef struct
{
  char *values[N_KEYS];
} Expected;

static void
expected_set (Expected   *expected,
              guint       i,
              const char *value)
{
  g_free (expected->values[i]);
  expected->values[i] = g_strdup (value);
}

static void
expected_copy (Expected       *to,
               const Expected *from)
{
  for (guint i = 0; i < N_KEYS; i++)
    expected_set (to, i, from->values[i]);
}

static void
expected_clear (Expected *expected)
{
  for (guint i = 0; i < N_KEYS; i++)
    g_clear_pointer (&expected->values[i], g_free);
}

/* Reads every key of @kv ROUNDS times, through @snapshot when given,
 * expecting @expected[i] (NULL: absent) for key i, and a few keys that
 * were never written as absent. */
static void
read_all (QStoreKV        *kv,
          QStoreSnapshot  *snapshot,
          const Expected  *expected)
{
  /* Prefixes, extensions (one by a NUL) and neighbours of written keys. */
  static const struct { const char *key; gsize len; } never[] = {
    { "k", 1 }, { "k00", 3 }, { "k0000", 5 }, { "k0005", 5 }, { "j999", 4 }, { "k999", 4 },
    { "k000\0", 5 }, { "long-key", 8 }, { "long-key-", 9 }, { "long-key-00", 11 },
    { "long-key-0010", 13 }, { "long-key-001\0", 13 }, { "long-key-999", 12 },
  };
  g_autoptr(GError) error = NULL;

  for (guint round = 0; round < ROUNDS; round++)
    {
      for (guint i = 0; i < N_KEYS; i++)
        {
          g_autofree char *key = key_of (i);

          const char *want = expected->values[i];

          if (snapshot == NULL)
            assert_value (kv, key, want);
          else
            {
              const guint8 *value;
              gsize value_len;
              gboolean found = qstore_snapshot_lookup (snapshot, kv, (const guint8 *) key,
                                                       strlen (key), &value, &value_len, &error);

              g_assert_no_error (error);
              if (want == NULL)
                g_assert_false (found);
              else
                {
                  g_assert_true (found);
                  g_assert_cmpmem (value, value_len, want, strlen (want));
                }
            }
        }
      for (guint i = 0; i < G_N_ELEMENTS (never); i++)
        {
          const guint8 *key = (const guint8 *) never[i].key;

          if (snapshot == NULL)
            {
              g_autoptr(GBytes) value = qstore_kv_get (kv, key, never[i].len, &error);

              g_assert_no_error (error);
              g_assert_null (value);
            }
          else
            {
              g_assert_false (qstore_snapshot_lookup (snapshot, kv, key, never[i].len,
                                                      NULL, NULL, &error));
              g_assert_no_error (error);
            }
        }
    }
}

static QStoreSnapshot *
begin (Fixture *f)
{
  g_autoptr(GError) error = NULL;
  QStoreSnapshot *snapshot = qstore_provider_begin_snapshot (f->provider, &error);

  g_assert_no_error (error);
  return snapshot;
}

/* Point reads before and after writes to the same store: each read sees
 * the latest write, and a snapshot taken between writes its own state. */
static void
test_reads_after_writes (Fixture       *f,
                         gconstpointer  data)
{
  g_autoptr(QStoreKV) kv = store (f, "main.t");
  Expected expected = { { NULL } };
  Expected older = { { NULL } };
  g_autoptr(QStoreSnapshot) held = NULL;
  gboolean snapshots = (f->caps & QSTORE_CAPABILITY_SNAPSHOTS) != 0;

  for (guint i = 0; i < N_KEYS; i++)
    {
      g_autofree char *key = key_of (i);
      g_autofree char *value = g_strdup_printf ("value-%u", i);

      expected_set (&expected, i, value);
      put (kv, key, value);
    }
  read_all (kv, NULL, &expected);
  if (snapshots)
    {
      g_autoptr(QStoreSnapshot) snapshot = begin (f);

      read_all (kv, snapshot, &expected);
    }

  /* No snapshot holds the store now: a change, a removal, a new key. */
  put (kv, "k010", "changed");
  expected_set (&expected, 10, "changed");
  del (kv, "k020");
  expected_set (&expected, 20, NULL);
  put (kv, "long-key-011", "changed too");
  expected_set (&expected, 11, "changed too");
  put (kv, "k0035", "new");
  read_all (kv, NULL, &expected);
  assert_value (kv, "k0035", "new");
  if (!snapshots)
    {
      expected_clear (&expected);
      g_test_skip ("the provider has no snapshots: only plain reads are tested");
      return;
    }
  {
    g_autoptr(QStoreSnapshot) snapshot = begin (f);

    read_all (kv, snapshot, &expected);
  }

  /* A snapshot that read the store many times keeps its state while the
   * store changes under it. */
  held = begin (f);
  read_all (kv, held, &expected);
  expected_copy (&older, &expected);
  put (kv, "k030", "later");
  expected_set (&expected, 30, "later");
  put (kv, "k020", "back");
  expected_set (&expected, 20, "back");
  del (kv, "k040");
  expected_set (&expected, 40, NULL);
  del (kv, "long-key-013");
  expected_set (&expected, 13, NULL);
  read_all (kv, held, &older);
  read_all (kv, NULL, &expected);
  {
    g_autoptr(QStoreSnapshot) snapshot = begin (f);

    read_all (kv, snapshot, &expected);
  }
  expected_clear (&expected);
  expected_clear (&older);
}

#define N_STORES 11

/* One snapshot reading more stores in turn than a provider would keep at
 * hand: each lookup answers from its own store, and a store of another
 * provider is still refused after all of them. */
static void
test_many_stores (Fixture       *f,
                  gconstpointer  data)
{
  g_autofree char *other_uri = test_provider_uri (f->dir, "other");
  g_autoptr(QStoreProvider) other = NULL;
  g_autoptr(QStoreKV) theirs = NULL;
  g_autoptr(QStoreSnapshot) snapshot = NULL;
  g_autoptr(GError) error = NULL;
  QStoreKV *stores[N_STORES];

  if (!(f->caps & QSTORE_CAPABILITY_SNAPSHOTS))
    {
      g_test_skip ("the provider has no snapshots");
      return;
    }
  for (guint s = 0; s < N_STORES; s++)
    {
      g_autofree char *name = g_strdup_printf ("main.t%u", s);

      stores[s] = store (f, name);
      for (guint i = 0; i < 16; i++)
        {
          g_autofree char *key = key_of (i);
          g_autofree char *value = g_strdup_printf ("%u:%u", s, i);

          put (stores[s], key, value);
        }
    }

  snapshot = begin (f);
  for (guint round = 0; round < 4; round++)
    for (guint i = 0; i < 16; i++)
      for (guint s = 0; s < N_STORES; s++)
        {
          /* Forward, then in an order that skips about. */
          guint which = round % 2 == 0 ? s : (s * 7 + round) % N_STORES;
          g_autofree char *key = key_of (i);
          g_autofree char *want = g_strdup_printf ("%u:%u", which, i);
          const guint8 *value;
          gsize value_len;

          g_assert_true (qstore_snapshot_lookup (snapshot, stores[which], (const guint8 *) key,
                                                 strlen (key), &value, &value_len, &error));
          g_assert_no_error (error);
          g_assert_cmpmem (value, value_len, want, strlen (want));
        }

  other = open_provider (other_uri, 0);
  theirs = qstore_provider_open_store (other, "main.t0", &error);
  g_assert_no_error (error);
  g_assert_false (qstore_snapshot_lookup (snapshot, theirs, (const guint8 *) "k000", 4,
                                          NULL, NULL, &error));
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT);

  for (guint s = 0; s < N_STORES; s++)
    g_object_unref (stores[s]);
}

void
conformance_add_point_read_tests (const char *prefix)
{
  g_autofree char *writes = g_strconcat (prefix, "/core/point-reads-after-writes", NULL);
  g_autofree char *stores = g_strconcat (prefix, "/snapshots/point-reads-many-stores", NULL);

  g_test_add (writes, Fixture, NULL, fixture_setup, test_reads_after_writes, fixture_teardown);
  g_test_add (stores, Fixture, NULL, fixture_setup, test_many_stores, fixture_teardown);
}
