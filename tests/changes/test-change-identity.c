/* test-change-identity.c: change digests, occurrence counters, change
 * keys, claims and replica observations
 *
 * The claims race runs this program twice more as children:
 * `test-change-identity --claim-child URI LOCK SEED` claims the same 1000
 * change keys in an order of its own and prints those it won.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/file.h>
#include <unistd.h>

#include "qstore-test-util.h"

#define N_RACE_KEYS 1000

static const char *self_path;

/* Digests of fixed inputs, computed apart from qstore: SHA-256 of the
 * canonical JSON each comment shows, as a short Python program writes it
 * (json.dumps of each string, keys sorted, reals as "%.17g" with ".0"
 * kept). */
static void
test_digest_golden (void)
{
  g_autofree char *d1 = NULL, *d2 = NULL, *d3 = NULL, *d4 = NULL;

  /* {"key":"[1]","next":{"id":1,"name":"Ada","nick":null,"score":1.5},
   *  "op":"insert","pipe":"search","prev":null} */
  d1 = qstore_change_digest ("search", QSTORE_CHANGE_INSERT, "[1]",
                             g_variant_new_parsed ("{'id': <int64 1>, 'name': <'Ada'>, "
                                                   "'score': <1.5>, 'nick': <@mv nothing>}"),
                             NULL);
  g_assert_cmpstr (d1, ==, "eb0adff660ef38438e2bc1123208a88f15791c1b0212679fa1b3ab25e8b7c159");

  /* {"key":"[\"k1\"]","next":{"b":{"$blob":"AP8="},"k":"k1","v":2},
   *  "op":"update","pipe":"search","prev":{"b":{"$blob":"AP8="},"k":"k1","v":1}} */
  d2 = qstore_change_digest ("search", QSTORE_CHANGE_UPDATE, "[\"k1\"]",
                             g_variant_new_parsed ("{'v': <int64 2>, 'k': <'k1'>, "
                                                   "'b': <[byte 0x00, 0xff]>}"),
                             g_variant_new_parsed ("{'k': <'k1'>, 'v': <int64 1>, "
                                                   "'b': <[byte 0x00, 0xff]>}"));
  g_assert_cmpstr (d2, ==, "4c5541396d52e076881b83e6aad775ceef6f1523cff94390aaa60364733107b8");

  /* {"key":"[7,\"x\"]","next":null,"op":"delete","pipe":"mail",
   *  "prev":{"a":7,"b":"x","c":"é\n\"q\"","r":0.10000000000000001}} */
  d3 = qstore_change_digest ("mail", QSTORE_CHANGE_DELETE, "[7,\"x\"]", NULL,
                             g_variant_new_parsed ("{'a': <int64 7>, 'b': <'x'>, "
                                                   "'c': <'é\\n\"q\"'>, 'r': <0.1>}"));
  g_assert_cmpstr (d3, ==, "e61055ba9d4250b3147560c626fc378862a36b8781f47e6532e2fdc0239302b5");

  /* {"key":"[]","next":{},"op":"insert","pipe":"","prev":null} */
  d4 = qstore_change_digest ("", QSTORE_CHANGE_INSERT, "[]",
                             g_variant_new_array (G_VARIANT_TYPE ("{sv}"), NULL, 0), NULL);
  g_assert_cmpstr (d4, ==, "1e9ec1e2dff3fe0f301a544c53fca14eec9ec1ccbb29049ca6af82cc8a5c5475");
}

/* The same content is the same digest, however it is spelled. */
static void
test_digest_canonical (void)
{
  g_autoptr(GVariant) a = g_variant_ref_sink (g_variant_new_parsed ("{'x': <int64 1>, 'y': <'t'>}"));
  g_autoptr(GVariant) b = g_variant_ref_sink (g_variant_new_parsed ("{'y': <'t'>, 'x': <int64 1>}"));
  /* A name given twice keeps its last value. */
  g_autoptr(GVariant) c = g_variant_ref_sink (g_variant_new_parsed ("[{'x', <int64 9>}, {'y', <'t'>}, {'x', <int64 1>}]"));
  g_autoptr(GVariant) other = g_variant_ref_sink (g_variant_new_parsed ("{'x': <int64 2>, 'y': <'t'>}"));
  g_autofree char *da = qstore_change_digest ("p", QSTORE_CHANGE_INSERT, "[1]", a, NULL);
  g_autofree char *db = qstore_change_digest ("p", QSTORE_CHANGE_INSERT, "[1]", b, NULL);
  g_autofree char *dc = qstore_change_digest ("p", QSTORE_CHANGE_INSERT, "[1]", c, NULL);
  g_autofree char *dother = qstore_change_digest ("p", QSTORE_CHANGE_INSERT, "[1]", other, NULL);
  g_autofree char *dpipe = qstore_change_digest ("q", QSTORE_CHANGE_INSERT, "[1]", a, NULL);
  g_autofree char *dop = qstore_change_digest ("p", QSTORE_CHANGE_UPDATE, "[1]", a, NULL);
  g_autofree char *dkey = qstore_change_digest ("p", QSTORE_CHANGE_INSERT, "[2]", a, NULL);
  g_autofree char *dprev = qstore_change_digest ("p", QSTORE_CHANGE_INSERT, "[1]", a, a);

  g_assert_cmpuint (strlen (da), ==, 64);
  g_assert_cmpstr (da, ==, db);
  g_assert_cmpstr (da, ==, dc);
  g_assert_cmpstr (da, !=, dother);
  g_assert_cmpstr (da, !=, dpipe);
  g_assert_cmpstr (da, !=, dop);
  g_assert_cmpstr (da, !=, dkey);
  g_assert_cmpstr (da, !=, dprev);
}

static void
test_key_text (void)
{
  g_autofree char *one = qstore_change_key_text (g_variant_new_parsed ("(<int64 42>,)"));
  g_autofree char *two = qstore_change_key_text (g_variant_new_parsed ("(<'a'>, <1.5>, <@mv nothing>)"));
  g_autofree char *blob = qstore_change_key_text (g_variant_new_parsed ("(<[byte 0x01]>,)"));

  g_assert_cmpstr (one, ==, "[42]");
  g_assert_cmpstr (two, ==, "[\"a\",1.5,null]");
  g_assert_cmpstr (blob, ==, "[{\"$blob\":\"AQ==\"}]");
}

/* What a database's change sets give: the digest of a change is that of
 * its key and records. */
static void
collect (QStoreChangeFeed *feed,
         QStoreChangeSet  *change_set,
         GPtrArray        *sets)
{
  g_ptr_array_add (sets, g_object_ref (change_set));
}

static void
test_digest_for_change (void)
{
  g_autoptr(QStoreDatabase) db = test_open_database ("memory:", QSTORE_OPEN_NONE);
  g_autoptr(QStoreChangeFeed) feed = NULL;
  g_autoptr(GPtrArray) sets = g_ptr_array_new_with_free_func (g_object_unref);
  g_autoptr(GError) error = NULL;
  QStoreChangeSet *set;

  test_exec (db, "CREATE TABLE t (k TEXT PRIMARY KEY, v)");
  feed = qstore_database_subscribe_changes (db, &error);
  g_assert_no_error (error);
  g_signal_connect (feed, "changes", G_CALLBACK (collect), sets);
  test_exec (db, "INSERT INTO t VALUES ('a', 1); UPDATE t SET v = 2; "
                 "INSERT INTO t VALUES ('b', 1); DELETE FROM t WHERE k = 'b'");
  g_assert_cmpuint (sets->len, ==, 4);

  for (guint i = 0; i < sets->len; i++)
    {
      g_autoptr(GVariant) key = NULL, next = NULL, prev = NULL;
      g_autofree char *key_text = NULL, *expected = NULL, *digest = NULL;

      set = sets->pdata[i];
      key = qstore_change_set_get_key (set, 0);
      key_text = qstore_change_key_text (key);
      next = qstore_change_set_get_new_record (set, 0);
      prev = qstore_change_set_get_old_record (set, 0);
      expected = qstore_change_digest ("p", qstore_change_set_get_op (set, 0), key_text, next, prev);
      digest = qstore_change_digest_for_change (set, 0, "p");
      g_assert_cmpstr (digest, ==, expected);
    }

  /* Insert 'a' as {"k":"a","v":1}, by hand. */
  {
    g_autofree char *digest = qstore_change_digest_for_change (sets->pdata[0], 0, "p");
    g_autofree char *by_hand =
      qstore_change_digest ("p", QSTORE_CHANGE_INSERT, "[\"a\"]",
                            g_variant_new_parsed ("{'k': <'a'>, 'v': <int64 1>}"), NULL);

    g_assert_cmpstr (digest, ==, by_hand);
  }
  /* The first and last insert differ only by key. */
  {
    g_autofree char *a = qstore_change_digest_for_change (sets->pdata[0], 0, "p");
    g_autofree char *b = qstore_change_digest_for_change (sets->pdata[2], 0, "p");

    g_assert_cmpstr (a, !=, b);
  }
}

/* Occurrences */

#define D1 "1111111111111111111111111111111111111111111111111111111111111111"
#define D2 "2222222222222222222222222222222222222222222222222222222222222222"
#define D3 "3333333333333333333333333333333333333333333333333333333333333333"
#define D4 "4444444444444444444444444444444444444444444444444444444444444444"

static void
test_counter_occurrences (void)
{
  g_autoptr(QStoreOccurrenceCounter) counter = qstore_occurrence_counter_new (1000, 100);

  g_assert_cmpuint (qstore_occurrence_counter_next (counter, D1, 0), ==, 0);
  g_assert_cmpuint (qstore_occurrence_counter_next (counter, D1, 1), ==, 1);
  g_assert_cmpuint (qstore_occurrence_counter_next (counter, D2, 2), ==, 0);
  g_assert_cmpuint (qstore_occurrence_counter_next (counter, D1, 3), ==, 2);
  g_assert_cmpuint (qstore_occurrence_counter_get_size (counter), ==, 2);
  g_assert_cmpint (qstore_occurrence_counter_get_window_ms (counter), ==, 1000);
  g_assert_cmpuint (qstore_occurrence_counter_get_max_entries (counter), ==, 100);
}

static void
test_counter_window (void)
{
  g_autoptr(QStoreOccurrenceCounter) counter = qstore_occurrence_counter_new (1000, 100);

  qstore_occurrence_counter_next (counter, D1, 0);
  qstore_occurrence_counter_next (counter, D1, 500);
  qstore_occurrence_counter_next (counter, D2, 900);
  /* Seen 1000 ms ago: still within the window. */
  qstore_occurrence_counter_prune (counter, 1500);
  g_assert_cmpuint (qstore_occurrence_counter_get_size (counter), ==, 2);
  /* Older than the window: forgotten; the other stays. */
  qstore_occurrence_counter_prune (counter, 1501);
  g_assert_cmpuint (qstore_occurrence_counter_get_size (counter), ==, 1);
  g_assert_cmpuint (qstore_occurrence_counter_next (counter, D1, 1600), ==, 0);
  g_assert_cmpuint (qstore_occurrence_counter_next (counter, D2, 1600), ==, 1);
  qstore_occurrence_counter_prune (counter, 100000);
  g_assert_cmpuint (qstore_occurrence_counter_get_size (counter), ==, 0);
}

static void
test_counter_max_entries (void)
{
  g_autoptr(QStoreOccurrenceCounter) counter = qstore_occurrence_counter_new (G_MAXINT64 / 4, 3);

  qstore_occurrence_counter_next (counter, D1, 0);
  qstore_occurrence_counter_next (counter, D1, 0);
  qstore_occurrence_counter_next (counter, D2, 1);
  qstore_occurrence_counter_next (counter, D3, 2);
  /* D1 was seen again last: D2 is now the oldest, and goes. */
  g_assert_cmpuint (qstore_occurrence_counter_next (counter, D1, 3), ==, 2);
  qstore_occurrence_counter_next (counter, D4, 4);
  g_assert_cmpuint (qstore_occurrence_counter_get_size (counter), ==, 3);
  g_assert_cmpuint (qstore_occurrence_counter_next (counter, D1, 5), ==, 3);
  g_assert_cmpuint (qstore_occurrence_counter_next (counter, D3, 6), ==, 1);
  /* Evicted: it starts over, and its return evicts the oldest, D4. */
  g_assert_cmpuint (qstore_occurrence_counter_next (counter, D2, 7), ==, 0);
  g_assert_cmpuint (qstore_occurrence_counter_get_size (counter), ==, 3);
  g_assert_cmpuint (qstore_occurrence_counter_next (counter, D4, 8), ==, 0);
}

static void
test_counter_seed (void)
{
  g_autoptr(QStoreOccurrenceCounter) counter = qstore_occurrence_counter_new (1000, 100);
  const char *keys[] = { D1 ":0", D1 ":4", D2 ":2", "not a key", D3 ":x", D1 ":1", NULL };

  g_assert_cmpuint (qstore_occurrence_counter_seed_from_change_keys (counter, keys, 10), ==, 4);
  g_assert_cmpuint (qstore_occurrence_counter_get_size (counter), ==, 2);
  g_assert_cmpuint (qstore_occurrence_counter_next (counter, D1, 20), ==, 5);
  g_assert_cmpuint (qstore_occurrence_counter_next (counter, D2, 20), ==, 3);
  g_assert_cmpuint (qstore_occurrence_counter_next (counter, D3, 20), ==, 0);
  /* Seeded entries age like any other. */
  qstore_occurrence_counter_prune (counter, 1015);
  g_assert_cmpuint (qstore_occurrence_counter_get_size (counter), ==, 3);
  qstore_occurrence_counter_prune (counter, 1021);
  g_assert_cmpuint (qstore_occurrence_counter_get_size (counter), ==, 0);
}

/* Change keys */

static void
test_keys (void)
{
  g_autofree char *key = qstore_compose_change_key (D1, 7);
  g_autofree char *zero = qstore_compose_change_key (D2, 0);
  g_autofree char *max = qstore_compose_change_key (D3, G_MAXUINT);
  g_autofree char *digest = NULL;
  guint occurrence = 99;

  g_assert_cmpstr (key, ==, D1 ":7");
  g_assert_cmpstr (zero, ==, D2 ":0");
  digest = qstore_parse_change_key (key, &occurrence);
  g_assert_cmpstr (digest, ==, D1);
  g_assert_cmpuint (occurrence, ==, 7);
  g_clear_pointer (&digest, g_free);
  digest = qstore_parse_change_key (max, &occurrence);
  g_assert_cmpstr (digest, ==, D3);
  g_assert_cmpuint (occurrence, ==, G_MAXUINT);
  g_clear_pointer (&digest, g_free);
  digest = qstore_parse_change_key (zero, NULL);
  g_assert_cmpstr (digest, ==, D2);

  /* Composing needs a digest. */
  g_assert_null (qstore_compose_change_key ("abc", 1));
  g_assert_null (qstore_compose_change_key (D1 "0", 1));
  g_assert_null (qstore_compose_change_key ("AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", 1));
}

static void
test_keys_malformed (void)
{
  static const char *malformed[] = {
    "",
    ":",
    "abc:1",
    D1,
    D1 ":",
    D1 ":01",
    D1 ":-1",
    D1 ":+1",
    D1 ": 1",
    D1 ":1 ",
    D1 ":1x",
    D1 ":1:2",
    D1 ":4294967296",
    D1 ":99999999999999999999999",
    "111111111111111111111111111111111111111111111111111111111111111:1",   /* 63 digits */
    D1 "1:1",                                                              /* 65 digits */
    "ABCDEF1111111111111111111111111111111111111111111111111111111111:1",  /* upper case */
    "g111111111111111111111111111111111111111111111111111111111111111:1",  /* not hex */
  };

  g_assert_null (qstore_parse_change_key (NULL, NULL));
  for (guint i = 0; i < G_N_ELEMENTS (malformed); i++)
    {
      guint occurrence = 5;
      g_autofree char *digest = qstore_parse_change_key (malformed[i], &occurrence);

      if (digest != NULL)
        g_error ("“%s” parsed as a change key", malformed[i]);
      g_assert_cmpuint (occurrence, ==, 0);
    }
}

/* The claims' lifetime, from the environment */

static void
test_ttl (void)
{
  static const struct { const char *value; gint64 ms; } cases[] = {
    { NULL, 3600000 },
    { "", 3600000 },
    { "   ", 3600000 },
    { "1", 3600000 },
    { "2", 7200000 },
    { " 2 ", 7200000 },
    { "0.5", 1800000 },
    { "1e1", 36000000 },
    { "1000000", G_GINT64_CONSTANT (3600000000000) },
    { "1000001", 3600000 },
    { "0", 3600000 },
    { "-1", 3600000 },
    { "-0.5", 3600000 },
    { "abc", 3600000 },
    { "2h", 3600000 },
    { "0x10", 3600000 },
    { "inf", 3600000 },
    { "nan", 3600000 },
    { "1e400", 3600000 },
    { "1,5", 3600000 },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      gint64 ms = qstore_change_claims_ttl_ms_for_hours (cases[i].value);

      if (ms != cases[i].ms)
        g_error ("“%s” hours gave %" G_GINT64_FORMAT " ms, not %" G_GINT64_FORMAT,
                 cases[i].value ? cases[i].value : "(unset)", ms, cases[i].ms);
    }

  /* From the environment, read each time; the window is twice it. */
  g_unsetenv (QSTORE_CHANGE_CLAIMS_TTL_ENV);
  g_assert_cmpint (qstore_change_claims_get_ttl_ms (), ==, 3600000);
  g_assert_cmpint (qstore_change_claims_get_window_ms (), ==, 7200000);
  g_setenv (QSTORE_CHANGE_CLAIMS_TTL_ENV, "3", TRUE);
  g_assert_cmpint (qstore_change_claims_get_ttl_ms (), ==, 10800000);
  g_assert_cmpint (qstore_change_claims_get_window_ms (), ==, 21600000);
  {
    g_autoptr(QStoreOccurrenceCounter) counter = qstore_occurrence_counter_new_for_claims (10);

    g_assert_cmpint (qstore_occurrence_counter_get_window_ms (counter), ==, 21600000);
  }
  g_setenv (QSTORE_CHANGE_CLAIMS_TTL_ENV, "-3", TRUE);
  g_assert_cmpint (qstore_change_claims_get_window_ms (), ==, 7200000);
  g_unsetenv (QSTORE_CHANGE_CLAIMS_TTL_ENV);
}

/* Claims */

static char *
race_key (guint i)
{
  g_autofree char *seed = g_strdup_printf ("change %u", i);
  g_autofree char *digest = g_compute_checksum_for_string (G_CHECKSUM_SHA256, seed, -1);

  return qstore_compose_change_key (digest, i % 3);
}

static void
test_claims (void)
{
  g_autofree char *dir = test_make_tmp_dir ("qstore-claims-XXXXXX");
  g_autofree char *uri = test_provider_uri (dir, "store");
  g_autoptr(QStoreDatabase) db = test_open_database (uri, QSTORE_OPEN_NONE);
  g_autoptr(GError) error = NULL;
  g_auto(GStrv) listed = NULL;
  g_autofree char *k1 = race_key (1), *k2 = race_key (2), *k3 = race_key (3);
  guint64 removed = 99;

  /* Nothing claimed yet: nothing listed, nothing swept. */
  listed = qstore_database_list_change_claims (db, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (g_strv_length (listed), ==, 0);
  removed = qstore_database_sweep_change_claims (db, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (removed, ==, 0);

  g_assert_true (qstore_database_claim_change (db, k1, &error));
  g_assert_no_error (error);
  g_assert_false (qstore_database_claim_change (db, k1, &error));
  g_assert_no_error (error);
  g_assert_true (qstore_database_claim_change (db, k2, &error));

  g_assert_false (qstore_database_claim_change (db, "not a change key", &error));
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "qstore_compose_change_key"));
  g_clear_error (&error);

  test_exec (db, "BEGIN");
  g_assert_false (qstore_database_claim_change (db, k3, &error));
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_BUSY);
  g_assert_nonnull (strstr (error->message, "COMMIT or ROLLBACK"));
  g_clear_error (&error);
  test_exec (db, "ROLLBACK");

  g_clear_pointer (&listed, g_strfreev);
  listed = qstore_database_list_change_claims (db, &error);
  g_assert_cmpuint (g_strv_length (listed), ==, 2);
  g_assert_true (g_strv_contains ((const char * const *) listed, k1));
  g_assert_true (g_strv_contains ((const char * const *) listed, k2));
  g_assert_cmpint (g_ascii_strcasecmp (listed[0], listed[1]), <, 0);

  /* A claim lives for the lifetime the environment sets: 1.8 s here,
   * long enough for the claims below to follow each other within it
   * even on a loaded machine. */
  g_setenv (QSTORE_CHANGE_CLAIMS_TTL_ENV, "0.0005", TRUE);
  g_usleep (2 * G_USEC_PER_SEC);
  g_assert_true (qstore_database_claim_change (db, k3, &error));
  g_clear_pointer (&listed, g_strfreev);
  listed = qstore_database_list_change_claims (db, &error);
  g_assert_cmpuint (g_strv_length (listed), ==, 1);
  g_assert_cmpstr (listed[0], ==, k3);
  /* Expired: taken over by the next claimant. */
  g_assert_true (qstore_database_claim_change (db, k1, &error));
  g_assert_false (qstore_database_claim_change (db, k1, &error));
  g_usleep (2 * G_USEC_PER_SEC);
  removed = qstore_database_sweep_change_claims (db, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (removed, ==, 3);
  g_unsetenv (QSTORE_CHANGE_CLAIMS_TTL_ENV);
  g_assert_cmpint (test_query_int (db, "SELECT count(*) FROM _qstore_change_claims"), ==, 0);
  test_close_database (&db);

  if (test_provider_persistent ())
    {
      db = test_open_database (uri, QSTORE_OPEN_READ_ONLY);
      g_assert_false (qstore_database_claim_change (db, k1, &error));
      g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_READ_ONLY);
      test_close_database (&db);
    }
  test_remove_tree (dir);
}

/* Two processes claim the same keys at the same time; each key is won
 * once. Writers take turns on a location: each child holds the lock file
 * while it has the store open for writing, so the turns are the same
 * whether or not the provider also locks the location itself. */
static int
claim_child (const char *uri,
             const char *lock_path,
             guint       seed)
{
  g_autoptr(GRand) rand = g_rand_new_with_seed (seed);
  guint order[N_RACE_KEYS];
  int lock_fd = open (lock_path, O_RDWR | O_CREAT, 0600);

  if (lock_fd < 0)
    {
      g_printerr ("claim child: cannot open %s\n", lock_path);
      return 1;
    }
  for (guint i = 0; i < N_RACE_KEYS; i++)
    order[i] = i;
  for (guint i = N_RACE_KEYS - 1; i > 0; i--)
    {
      guint j = g_rand_int_range (rand, 0, i + 1), swap = order[i];

      order[i] = order[j];
      order[j] = swap;
    }

  for (guint start = 0; start < N_RACE_KEYS; )
    {
      g_autoptr(QStoreDatabase) db = NULL;
      g_autoptr(GError) error = NULL;
      guint batch = g_rand_int_range (rand, 1, 40);

      flock (lock_fd, LOCK_EX);
      if (!(db = qstore_database_open (uri, QSTORE_OPEN_NONE, &error)))
        {
          g_printerr ("claim child: %s\n", error->message);
          return 1;
        }
      for (guint i = start; i < start + batch && i < N_RACE_KEYS; i++)
        {
          g_autofree char *key = race_key (order[i]);

          if (qstore_database_claim_change (db, key, &error))
            printf ("%s\n", key);
          else if (error != NULL)
            {
              g_printerr ("claim child: %s\n", error->message);
              return 1;
            }
        }
      if (!qstore_database_close (db, &error))
        {
          g_printerr ("claim child: %s\n", error->message);
          return 1;
        }
      flock (lock_fd, LOCK_UN);
      start += batch;
      /* Let the other one have its turn. */
      g_usleep (g_rand_int_range (rand, 0, 500));
    }
  fflush (stdout);
  return 0;
}

static void
test_claims_race (void)
{
  g_autofree char *dir = test_make_tmp_dir ("qstore-claims-XXXXXX");
  g_autofree char *uri = test_provider_uri (dir, "store");
  g_autofree char *lock = g_build_filename (dir, "writer.lock", NULL);
  g_autoptr(GHashTable) won = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_autoptr(QStoreDatabase) db = NULL;
  g_auto(GStrv) listed = NULL;
  g_autoptr(GError) error = NULL;
  GSubprocess *children[2];
  guint counts[2] = { 0, 0 };

  if (!test_provider_persistent ())
    {
      g_test_skip ("another process sees nothing of a memory store");
      return;
    }
  /* The store exists before the race starts. */
  db = test_open_database (uri, QSTORE_OPEN_NONE);
  test_close_database (&db);

  for (guint c = 0; c < 2; c++)
    {
      g_autofree char *seed = g_strdup_printf ("%u", 7 + c);

      children[c] = g_subprocess_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE, &error, self_path,
                                      "--claim-child", uri, lock, seed, NULL);
      g_assert_no_error (error);
    }
  for (guint c = 0; c < 2; c++)
    {
      g_autofree char *out = NULL;
      g_auto(GStrv) lines = NULL;

      g_subprocess_communicate_utf8 (children[c], NULL, NULL, &out, NULL, &error);
      g_assert_no_error (error);
      g_assert_true (g_subprocess_get_successful (children[c]));
      lines = g_strsplit (out, "\n", -1);
      for (guint i = 0; lines[i] != NULL; i++)
        {
          if (lines[i][0] == '\0')
            continue;
          if (!g_hash_table_add (won, g_strdup (lines[i])))
            g_error ("change key %s was claimed twice", lines[i]);
          counts[c]++;
        }
      g_object_unref (children[c]);
    }
  g_test_message ("the children won %u and %u claims", counts[0], counts[1]);
  g_assert_cmpuint (g_hash_table_size (won), ==, N_RACE_KEYS);
  /* Both had turns: the claims were contested, not taken in sequence. */
  g_assert_cmpuint (counts[0], >, 0);
  g_assert_cmpuint (counts[1], >, 0);

  db = test_open_database (uri, QSTORE_OPEN_NONE);
  listed = qstore_database_list_change_claims (db, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (g_strv_length (listed), ==, N_RACE_KEYS);
  for (guint i = 0; listed[i] != NULL; i++)
    g_assert_true (g_hash_table_contains (won, listed[i]));
  test_close_database (&db);
  test_remove_tree (dir);
}

/* Replica observations */

static void
test_observations (void)
{
  g_autofree char *dir = test_make_tmp_dir ("qstore-observe-XXXXXX");
  g_autofree char *uri = test_provider_uri (dir, "store");
  g_autoptr(QStoreDatabase) db = test_open_database (uri, QSTORE_OPEN_NONE);
  g_autoptr(GListModel) list = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *big = g_strnfill (QSTORE_REPLICA_OBSERVATION_MAX_PAYLOAD + 1, ' ');
  QStoreReplicaObservation *observation = NULL;
  gint64 before = g_get_real_time () / 1000;

  /* Nothing observed yet. */
  list = qstore_replica_observation_list (qstore_database_get_provider (db), &error);
  g_assert_no_error (error);
  g_assert_cmpuint (g_list_model_get_n_items (list), ==, 0);
  g_clear_object (&list);

  g_assert_true (qstore_database_observe_replica (db, "host-b:12", "changes",
                                                  "{\"position\": 4}", &error));
  g_assert_no_error (error);
  g_assert_true (qstore_database_observe_replica (db, "host-a:7", "changes",
                                                  "{\"position\": 9, \"lag_ms\": 3}", &error));
  g_assert_true (qstore_database_observe_replica (db, "host-a:7", "subscribers", "2", &error));
  g_usleep (30000);
  /* Upserted: one row per (replica, kind), the latest payload. */
  g_assert_true (qstore_database_observe_replica (db, "host-a:7", "changes",
                                                  "{\"position\": 10, \"lag_ms\": 1}", &error));
  g_assert_no_error (error);

  g_assert_false (qstore_database_observe_replica (db, "host-a:7", "changes", "{position", &error));
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "is not JSON"));
  g_clear_error (&error);
  g_assert_false (qstore_database_observe_replica (db, "host-a:7", "changes", big, &error));
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "keep the details"));
  g_clear_error (&error);
  g_assert_false (qstore_database_observe_replica (db, "", "changes", "1", &error));
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);

  list = qstore_replica_observation_list (qstore_database_get_provider (db), &error);
  g_assert_no_error (error);
  g_assert_cmpuint (g_list_model_get_n_items (list), ==, 3);
  observation = g_list_model_get_item (list, 0);
  g_assert_cmpstr (qstore_replica_observation_get_replica_id (observation), ==, "host-a:7");
  g_assert_cmpstr (qstore_replica_observation_get_kind (observation), ==, "changes");
  g_assert_cmpstr (qstore_replica_observation_get_payload (observation), ==,
                   "{\"position\": 10, \"lag_ms\": 1}");
  g_assert_cmpint (qstore_replica_observation_get_updated_at (observation), >=, before + 30);
  g_clear_object (&observation);
  observation = g_list_model_get_item (list, 1);
  g_assert_cmpstr (qstore_replica_observation_get_kind (observation), ==, "subscribers");
  g_assert_cmpint (qstore_replica_observation_get_staleness_ms (observation), >=, 30);
  g_clear_object (&observation);
  observation = g_list_model_get_item (list, 2);
  g_assert_cmpstr (qstore_replica_observation_get_replica_id (observation), ==, "host-b:12");
  g_assert_cmpint (qstore_replica_observation_get_staleness_ms (observation), >=, 30);
  g_clear_object (&observation);
  g_clear_object (&list);
  g_assert_cmpint (test_query_int (db, "SELECT count(*) FROM _qstore_replica_observations"), ==, 3);

  /* What a process that only follows reads: a read-only provider. */
  if (test_provider_persistent ())
    {
      g_autoptr(QStoreProvider) reader = NULL;

      test_close_database (&db);
      reader = qstore_provider_new_for_uri (uri, QSTORE_OPEN_READ_ONLY, &error);
      g_assert_no_error (error);
      g_usleep (20000);
      list = qstore_replica_observation_list (reader, &error);
      g_assert_no_error (error);
      g_assert_cmpuint (g_list_model_get_n_items (list), ==, 3);
      /* It ages. */
      observation = g_list_model_get_item (list, 0);
      g_assert_cmpint (qstore_replica_observation_get_staleness_ms (observation), >=, 20);
      g_clear_object (&observation);
      qstore_provider_close_all (reader);
    }
  test_close_database (&db);
  test_remove_tree (dir);
}

int
main (int    argc,
      char **argv)
{
  self_path = argv[0];
  if (argc == 5 && g_str_equal (argv[1], "--claim-child"))
    return claim_child (argv[2], argv[3], (guint) g_ascii_strtoull (argv[4], NULL, 10));
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/identity/digest/golden", test_digest_golden);
  g_test_add_func ("/identity/digest/canonical", test_digest_canonical);
  g_test_add_func ("/identity/digest/key-text", test_key_text);
  g_test_add_func ("/identity/digest/change", test_digest_for_change);
  g_test_add_func ("/identity/counter/occurrences", test_counter_occurrences);
  g_test_add_func ("/identity/counter/window", test_counter_window);
  g_test_add_func ("/identity/counter/max-entries", test_counter_max_entries);
  g_test_add_func ("/identity/counter/seed", test_counter_seed);
  g_test_add_func ("/identity/keys", test_keys);
  g_test_add_func ("/identity/keys/malformed", test_keys_malformed);
  g_test_add_func ("/identity/claims/ttl", test_ttl);
  g_test_add_func ("/identity/claims", test_claims);
  g_test_add_func ("/identity/claims/race", test_claims_race);
  g_test_add_func ("/identity/observations", test_observations);

  return g_test_run ();
}
