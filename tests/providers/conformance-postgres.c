/* conformance-postgres.c: what only the postgres provider has - a server,
 * a connection string, a schema per location
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Runs on the server tests/postgres/with-postgres.sh starts; its helpers
 * reach the server with psql, outside qstore.
 */
#include "config.h"

#include <string.h>

#include "conformance.h"

char *
pg_schema_of (const char *uri)
{
  const char *at = strstr (uri, "?schema=");
  g_autofree char *encoded = NULL;

  g_assert_nonnull (at);
  at += strlen ("?schema=");
  encoded = g_strndup (at, strcspn (at, "&"));
  return g_uri_unescape_string (encoded, NULL);
}

char *
pg_sql (const char *sql)
{
  const char *argv[] = { "psql", "-X", "-A", "-t", "-q", "-v", "ON_ERROR_STOP=1",
                         "-c", sql, NULL };
  g_autoptr(GError) error = NULL;
  g_autofree char *err = NULL;
  char *out = NULL;
  int status;

  g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, &out, &err,
                &status, &error);
  g_assert_no_error (error);
  if (!g_spawn_check_wait_status (status, NULL))
    g_error ("psql -c %s failed: %s", sql, err);
  return g_strstrip (out);
}

/* A name as an SQL identifier, for pg_sql(). */
static char *
ident (const char *text)
{
  g_auto(GStrv) parts = g_strsplit (text, "\"", -1);
  g_autofree char *doubled = g_strjoinv ("\"\"", parts);

  return g_strdup_printf ("\"%s\"", doubled);
}

/* A name as an SQL literal, for pg_sql(). */
static char *
literal (const char *text)
{
  g_auto(GStrv) parts = g_strsplit (text, "'", -1);
  g_autofree char *doubled = g_strjoinv ("''", parts);

  return g_strdup_printf ("'%s'", doubled);
}

static gboolean
schema_exists (const char *schema)
{
  g_autofree char *lit = literal (schema);
  g_autofree char *sql = g_strdup_printf ("SELECT count(*) FROM pg_namespace WHERE nspname = %s",
                                          lit);
  g_autofree char *out = pg_sql (sql);

  return g_str_equal (out, "1");
}

static char *
uri_for_schema (const char *schema)
{
  g_autofree char *escaped = g_uri_escape_string (schema, NULL, TRUE);
  g_autofree char *conninfo = g_uri_escape_string (g_getenv ("QSTORE_TEST_POSTGRES"),
                                                   "=/ ", TRUE);

  return g_strdup_printf ("postgres:%s?schema=%s", conninfo, escaped);
}

/* Opens @uri expecting @code, and returns the message. */
static char *
open_fails (const char      *uri,
            QStoreOpenFlags  flags,
            int              code)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(QStoreProvider) p = qstore_provider_new_for_uri (uri, flags, &error);

  g_assert_null (p);
  g_assert_error (error, QSTORE_ERROR, code);
  g_test_message ("%s: %s", uri, error->message);
  return g_strdup (error->message);
}

/* A missing location read-only, a schema holding other tables, and names
 * that would break SQL if they were pasted into it. */
void
conformance_postgres_bad_input (Fixture *f)
{
  g_autofree char *missing = g_strconcat (pg_schema_of (f->uri), "_missing", NULL);
  g_autofree char *missing_uri = uri_for_schema (missing);
  g_autofree char *message = NULL;

  /* Not there, read-only: NOT_FOUND, and nothing is created. */
  message = open_fails (missing_uri, QSTORE_OPEN_READ_ONLY, QSTORE_ERROR_NOT_FOUND);
  g_assert_nonnull (strstr (message, missing));
  g_assert_false (schema_exists (missing));
  g_clear_pointer (&message, g_free);

  /* A schema whose kv is someone else's table: CORRUPT, untouched. */
  {
    g_autofree char *junk = g_strconcat (pg_schema_of (f->uri), "_junk", NULL);
    g_autofree char *junk_uri = uri_for_schema (junk);
    g_autofree char *lit = literal (junk);
    g_autofree char *sql = g_strdup_printf ("CREATE SCHEMA \"%s\"; "
                                            "CREATE TABLE \"%s\".kv (a int); "
                                            "INSERT INTO \"%s\".kv VALUES (7)",
                                            junk, junk, junk);
    g_autofree char *after = NULL;

    g_free (pg_sql (sql));
    g_free (open_fails (junk_uri, QSTORE_OPEN_NONE, QSTORE_ERROR_CORRUPT));
    g_free (open_fails (junk_uri, QSTORE_OPEN_READ_ONLY, QSTORE_ERROR_CORRUPT));
    g_free (sql);
    sql = g_strdup_printf ("SELECT string_agg (c.relname, ',') || '/' || "
                           "(SELECT a FROM \"%s\".kv) FROM pg_class c JOIN pg_namespace n "
                           "ON n.oid = c.relnamespace WHERE n.nspname = %s", junk, lit);
    after = pg_sql (sql);
    g_assert_cmpstr (after, ==, "kv/7");
  }

  /* Not a connection string. */
  g_free (open_fails ("postgres:not a conninfo", QSTORE_OPEN_NONE,
                      QSTORE_ERROR_INVALID_ARGUMENT));
  g_free (open_fails ("postgres:", QSTORE_OPEN_NONE, QSTORE_ERROR_INVALID_ARGUMENT));
  message = open_fails ("postgres:password=sekrit host", QSTORE_OPEN_NONE,
                        QSTORE_ERROR_INVALID_ARGUMENT);
  g_assert_null (strstr (message, "sekrit"));
  g_clear_pointer (&message, g_free);
  {
    g_autofree char *long_name = g_strnfill (64, 's');
    g_autofree char *uri = uri_for_schema (long_name);

    g_free (open_fails (uri, QSTORE_OPEN_NONE, QSTORE_ERROR_INVALID_ARGUMENT));
  }
}

/* Quotes, semicolons, backslashes and non-ASCII in the location's name and
 * in store names stay data: the schema is called exactly that, and
 * nothing else in the database is touched. */
static void
test_hostile_location (Fixture       *f,
                       gconstpointer  data)
{
  /* Within the 63 bytes of a name. */
  g_autofree char *schema = g_strdup_printf ("h%08x\"; DROP TABLE sentinel; -- 'é\\ü",
                                             g_random_int ());
  g_autofree char *uri = uri_for_schema (schema);
  const char *store_name = "main.'); DROP TABLE sentinel; --\"é";
  g_autofree char *count = NULL;

  g_free (pg_sql ("CREATE TABLE IF NOT EXISTS sentinel (x int)"));
  {
    g_autoptr(QStoreProvider) p = open_provider (uri, QSTORE_OPEN_NONE);
    g_autoptr(QStoreKV) kv = store_of (p, store_name);

    put (kv, "k'; --", "v\"; DROP");
    assert_value (kv, "k'; --", "v\"; DROP");
  }
  {
    g_autoptr(QStoreProvider) p = open_provider (uri, QSTORE_OPEN_READ_ONLY);
    g_autoptr(QStoreKV) kv = store_of (p, store_name);
    g_auto(GStrv) names = qstore_provider_list_stores (p, NULL);

    assert_value (kv, "k'; --", "v\"; DROP");
    g_assert_nonnull (names);
    g_assert_true (g_strv_contains ((const char * const *) names, store_name));
  }
  g_assert_true (schema_exists (schema));
  count = pg_sql ("SELECT count(*) FROM sentinel");
  g_assert_cmpstr (count, ==, "0");
}

/* A refused password and a server that is not there give QSTORE_ERROR_IO
 * with the SQLSTATE, within the connect timeout. */
static void
test_connect_errors (Fixture       *f,
                     gconstpointer  data)
{
  const char *tcp = g_getenv ("QSTORE_TEST_POSTGRES_TCP");
  g_autofree char *port = NULL;
  g_autofree char *message = NULL;
  g_autofree char *uri = NULL;
  gint64 start;

  g_assert_nonnull (tcp);
  port = g_strdup (strstr (tcp, "port=") + 5);
  port[strcspn (port, " ")] = '\0';

  /* The wrong password. */
  uri = g_strdup_printf ("postgres:host=127.0.0.1 port=%s dbname=postgres user=%s "
                         "password=wrong?schema=pw", port,
                         g_getenv ("QSTORE_TEST_POSTGRES_PASSWORD_USER"));
  start = g_get_monotonic_time ();
  message = open_fails (uri, QSTORE_OPEN_NONE, QSTORE_ERROR_IO);
  g_assert_cmpint (g_get_monotonic_time () - start, <, 5 * G_USEC_PER_SEC);
  g_assert_nonnull (strstr (message, "SQLSTATE 28P01"));
  g_assert_nonnull (strstr (message, "password authentication failed"));
  /* The password is not repeated. */
  g_assert_null (strstr (message, "wrong"));
  g_clear_pointer (&message, g_free);
  g_clear_pointer (&uri, g_free);

  /* The right one gets in, and can make its schema. */
  uri = g_strdup_printf ("postgres:host=127.0.0.1 port=%s dbname=postgres user=%s "
                         "password=%s?schema=pw", port,
                         g_getenv ("QSTORE_TEST_POSTGRES_PASSWORD_USER"),
                         g_getenv ("QSTORE_TEST_POSTGRES_PASSWORD"));
  {
    g_autoptr(QStoreProvider) p = open_provider (uri, QSTORE_OPEN_NONE);
    g_autoptr(QStoreKV) kv = store_of (p, "main.t");

    put (kv, "k", "v");
    assert_value (kv, "k", "v");
  }
  g_clear_pointer (&uri, g_free);

  /* The server is there, the database is not. */
  uri = g_strdup_printf ("postgres:host=127.0.0.1 port=%s user=postgres dbname=nosuchdb?schema=x",
                         port);
  message = open_fails (uri, QSTORE_OPEN_NONE, QSTORE_ERROR_NOT_FOUND);
  g_assert_nonnull (strstr (message, "SQLSTATE 3D000"));
  g_clear_pointer (&message, g_free);
  g_clear_pointer (&uri, g_free);

  /* Nobody listens on the port: refused at once. */
  start = g_get_monotonic_time ();
  message = open_fails ("postgres:host=127.0.0.1 port=1 dbname=postgres?schema=x",
                        QSTORE_OPEN_NONE, QSTORE_ERROR_IO);
  g_assert_cmpint (g_get_monotonic_time () - start, <, 5 * G_USEC_PER_SEC);
  g_assert_nonnull (strstr (message, "SQLSTATE 08001"));
  g_clear_pointer (&message, g_free);

  /* A host that never answers (TEST-NET-1, RFC 5737): the connect timeout,
   * not the system's minutes. */
  start = g_get_monotonic_time ();
  message = open_fails ("postgres:host=192.0.2.1 port=5432 dbname=postgres "
                        "connect_timeout=2?schema=x", QSTORE_OPEN_NONE, QSTORE_ERROR_IO);
  g_assert_cmpint (g_get_monotonic_time () - start, <, 6 * G_USEC_PER_SEC);
  g_assert_nonnull (strstr (message, "SQLSTATE 08001"));
}

/* A server that goes away: the writer's next write fails with a clear
 * error and commits nothing; a new open after the restart finds every
 * acknowledged write. */
static void
test_server_gone (Fixture       *f,
                  gconstpointer  data)
{
  const char *ctl = g_getenv ("QSTORE_TEST_POSTGRES_CTL");
  g_autoptr(QStoreKV) kv = store (f, "main.t");
  g_autoptr(GError) error = NULL;
  const char *stop[] = { ctl, "stop", NULL };
  const char *start[] = { ctl, "start", NULL };
  int status;

  g_assert_nonnull (ctl);
  g_assert_true (qstore_kv_put (kv, (const guint8 *) "k", 1, (const guint8 *) "v1", 2,
                                QSTORE_WRITE_SYNC, &error));
  g_assert_no_error (error);

  g_spawn_sync (NULL, (char **) stop, NULL, G_SPAWN_DEFAULT, NULL, NULL, NULL, NULL,
                &status, &error);
  g_assert_no_error (error);
  g_assert_true (g_spawn_check_wait_status (status, NULL));

  g_assert_false (qstore_kv_put (kv, (const guint8 *) "k", 1, (const guint8 *) "v2", 2,
                                 QSTORE_WRITE_SYNC, &error));
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_IO);
  g_test_message ("%s", error->message);
  g_assert_nonnull (strstr (error->message, "SQLSTATE"));
  g_clear_error (&error);

  g_spawn_sync (NULL, (char **) start, NULL, G_SPAWN_DEFAULT, NULL, NULL, NULL, NULL,
                &status, &error);
  g_assert_no_error (error);
  g_assert_true (g_spawn_check_wait_status (status, NULL));

  /* The old handle stays broken (its writer lock went with its session),
   * a new one reads what was acknowledged. */
  g_assert_false (qstore_kv_put (kv, (const guint8 *) "k", 1, (const guint8 *) "v3", 2, 0,
                                 &error));
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_IO);
  g_clear_error (&error);
  g_clear_object (&kv);
  reopen (f, QSTORE_OPEN_NONE);
  kv = store (f, "main.t");
  assert_value (kv, "k", "v1");
}

/* Writes the server refuses: a serialization failure and a full disk,
 * raised by a trigger as the server raises them. Each is a clear error
 * with its SQLSTATE, and commits nothing of the batch. */
static void
test_server_errors (Fixture       *f,
                    gconstpointer  data)
{
  g_autofree char *schema = pg_schema_of (f->uri);
  g_autofree char *quoted = ident (schema);
  g_autofree char *sql = NULL;
  g_autoptr(QStoreKV) a = store (f, "main.a");
  g_autoptr(QStoreKV) b = store (f, "main.b");
  struct { const char *value; int code; const char *sqlstate; } cases[] = {
    { "serialize", QSTORE_ERROR_BUSY, "SQLSTATE 40001" },
    { "full", QSTORE_ERROR_IO, "SQLSTATE 53100" },
  };

  put (a, "before", "x");
  sql = g_strdup_printf ("CREATE FUNCTION %1$s.refuse () RETURNS trigger LANGUAGE plpgsql AS $f$ "
                         "BEGIN "
                         "IF NEW.value = 'serialize'::bytea THEN "
                         "  RAISE EXCEPTION 'could not serialize access' "
                         "  USING ERRCODE = 'serialization_failure'; END IF; "
                         "IF NEW.value = 'full'::bytea THEN "
                         "  RAISE EXCEPTION 'could not extend file: No space left on device' "
                         "  USING ERRCODE = 'disk_full'; END IF; "
                         "RETURN NEW; END $f$; "
                         "CREATE TRIGGER refuse BEFORE INSERT OR UPDATE ON %1$s.kv "
                         "FOR EACH ROW EXECUTE FUNCTION %1$s.refuse ()", quoted);
  g_free (pg_sql (sql));

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(QStoreAtomicBatch) batch = qstore_provider_begin_atomic_batch (f->provider);
      g_autoptr(QStoreBatch) plain = qstore_kv_new_batch (a);
      g_autoptr(GError) error = NULL;

      if (batch != NULL)
        {
          qstore_atomic_batch_put (batch, a, (const guint8 *) "k", 1, (const guint8 *) "v", 1);
          qstore_atomic_batch_put (batch, b, (const guint8 *) "k", 1,
                                   (const guint8 *) cases[i].value, strlen (cases[i].value));
          g_assert_false (qstore_atomic_batch_commit (batch, QSTORE_WRITE_SYNC, &error));
        }
      else
        {
          /* ?atomic=0: a batch on one store is still all or nothing. */
          qstore_batch_put (plain, (const guint8 *) "k", 1, (const guint8 *) "v", 1);
          qstore_batch_put (plain, (const guint8 *) "k2", 2, (const guint8 *) cases[i].value,
                            strlen (cases[i].value));
          g_assert_false (qstore_batch_write (plain, QSTORE_WRITE_SYNC, &error));
        }
      g_assert_error (error, QSTORE_ERROR, cases[i].code);
      g_test_message ("%s", error->message);
      g_assert_nonnull (strstr (error->message, cases[i].sqlstate));
      g_assert_nonnull (strstr (error->message, schema));
      assert_value (a, "k", NULL);
      assert_value (b, "k", NULL);
    }

  /* The writer goes on. */
  put (a, "after", "y");
  assert_value (a, "after", "y");
  assert_value (a, "before", "x");
}

/* The server's own count of the entries, outside qstore. */
char *
pg_count_entries (const char *uri)
{
  g_autofree char *schema = pg_schema_of (uri);
  g_autofree char *quoted = ident (schema);
  g_autofree char *sql = g_strdup_printf ("SELECT count(*) FROM %s.kv", quoted);

  return pg_sql (sql);
}

/* An entry of a store that does not exist, planted through psql. */
void
pg_plant_orphan (const char *uri)
{
  g_autofree char *schema = pg_schema_of (uri);
  g_autofree char *quoted = ident (schema);
  g_autofree char *sql = g_strdup_printf ("INSERT INTO %s.kv VALUES (4242, 'k', 'v')",
                                          quoted);

  g_free (pg_sql (sql));
}

void
conformance_add_postgres_tests (const char *prefix)
{
  g_autofree char *name = test_provider_name ();

  if (!g_str_equal (name, "postgres"))
    return;
#define ADD(name, func) G_STMT_START { \
    g_autofree char *path_ = g_strconcat (prefix, "/postgres/", name, NULL); \
    g_test_add (path_, Fixture, NULL, fixture_setup, func, fixture_teardown); \
  } G_STMT_END

  ADD ("hostile-location", test_hostile_location);
  ADD ("connect-errors", test_connect_errors);
  ADD ("server-gone", test_server_gone);
  ADD ("server-errors", test_server_errors);
#undef ADD
}
