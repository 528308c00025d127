/* test-import.c: bulk imports of CSV and JSON lines, the staged replace,
 * resuming, sweeping and what opening a store says about leftovers
 *
 * Runs on the provider QSTORE_TEST_PROVIDER names; what needs a reopen is
 * skipped on memory.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "qstore-test-util.h"

typedef struct
{
  TestDatabase t;
} Fixture;

static void
fixture_setup (Fixture       *f,
               gconstpointer  data)
{
  test_database_set_up (&f->t, "qstore-import-XXXXXX");
  test_exec (f->t.db, "CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT NOT NULL, "
                      "score INTEGER DEFAULT 7, price REAL, note TEXT, data BLOB);"
                      "CREATE INDEX t_score ON t (score);");
}

static void
fixture_teardown (Fixture       *f,
                  gconstpointer  data)
{
  test_database_tear_down (&f->t, data);
}

/* How an import is set up */
typedef struct
{
  QStoreImportMode    mode;
  QStoreImportFormat  format;
  gboolean            no_atomic;
  gboolean            no_header;
  const char         *columns;     /* comma-separated, or NULL */
  gboolean            resume;
} Options;

static QStoreImport *
make_import (QStoreDatabase *db,
             const char     *table,
             const Options  *options)
{
  QStoreImport *import = qstore_import_new (db, table);

  if (options != NULL)
    {
      g_auto(GStrv) columns = options->columns ? g_strsplit (options->columns, ",", -1) : NULL;

      qstore_import_set_mode (import, options->mode);
      qstore_import_set_format (import, options->format);
      qstore_import_set_atomic (import, !options->no_atomic);
      qstore_import_set_header (import, !options->no_header);
      qstore_import_set_columns (import, (const char * const *) columns);
      qstore_import_set_resume (import, options->resume);
    }
  qstore_import_set_source_name (import, "data");
  return import;
}

/* Imports @len bytes of @text (-1: up to its NUL); the import is returned
 * in *@out when given. */
static gboolean
import_text (QStoreDatabase  *db,
             const char      *table,
             const char      *text,
             gssize           len,
             const Options   *options,
             QStoreImport   **out,
             GError         **error)
{
  g_autoptr(QStoreImport) import = make_import (db, table, options);
  g_autoptr(GInputStream) input = NULL;
  gboolean ok;

  if (len < 0)
    len = strlen (text);
  input = g_memory_input_stream_new_from_data (g_memdup2 (text, len), len, g_free);
  ok = qstore_import_run (import, input, NULL, error);
  if (out != NULL)
    *out = g_steal_pointer (&import);
  return ok;
}

static void
import_ok (QStoreDatabase *db,
           const char     *table,
           const char     *text,
           const Options  *options)
{
  g_autoptr(GError) error = NULL;

  if (!import_text (db, table, text, -1, options, NULL, &error))
    g_error ("import of “%s” failed: %s", text, error->message);
}

/* The import must fail with @code, at @line and @column; returns the
 * message. */
static char *
import_fails (QStoreDatabase *db,
              const char     *table,
              const char     *text,
              gssize          len,
              const Options  *options,
              QStoreError     code,
              guint64         line,
              guint           column)
{
  g_autoptr(QStoreImport) import = NULL;
  g_autoptr(GError) error = NULL;

  if (import_text (db, table, text, len, options, &import, &error))
    g_error ("import of “%s” succeeded where it should fail", text);
  g_test_message ("%s", error->message);
  if (!g_error_matches (error, QSTORE_ERROR, code))
    g_error ("import failed with code %d, not %d: %s", error->code, code, error->message);
  if (qstore_import_get_error_line (import) != line ||
      qstore_import_get_error_column (import) != column)
    g_error ("import failed at line %" G_GUINT64_FORMAT ", column %u, not line %"
             G_GUINT64_FORMAT ", column %u: %s", qstore_import_get_error_line (import),
             qstore_import_get_error_column (import), line, column, error->message);
  if (line > 0)
    {
      g_autofree char *where = column > 0
        ? g_strdup_printf ("line %" G_GUINT64_FORMAT ", column %u", line, column)
        : g_strdup_printf ("line %" G_GUINT64_FORMAT, line);

      g_assert_nonnull (strstr (error->message, where));
    }
  return g_strdup (error->message);
}

static void
append_value (GString  *out,
              GVariant *value)
{
  if (g_variant_is_of_type (value, G_VARIANT_TYPE_VARIANT))
    {
      g_autoptr(GVariant) inner = g_variant_get_variant (value);

      append_value (out, inner);
      return;
    }
  if (g_variant_is_of_type (value, G_VARIANT_TYPE_MAYBE))
    g_string_append (out, "NULL");
  else if (g_variant_is_of_type (value, G_VARIANT_TYPE_BYTESTRING))
    {
      gsize n;
      const guint8 *bytes = g_variant_get_fixed_array (value, &n, 1);

      g_string_append (out, "x'");
      for (gsize i = 0; i < n; i++)
        g_string_append_printf (out, "%02x", bytes[i]);
      g_string_append (out, "'");
    }
  else if (g_variant_is_of_type (value, G_VARIANT_TYPE_STRING))
    g_string_append (out, g_variant_get_string (value, NULL));
  else
    {
      g_autofree char *printed = g_variant_print (value, FALSE);

      g_string_append (out, printed);
    }
}

static char *
query (QStoreDatabase *db,
       const char     *sql)
{
  return test_query_text (db, sql, append_value);
}

static void
assert_query (QStoreDatabase *db,
              const char     *sql,
              const char     *expected)
{
  g_autofree char *got = query (db, sql);

  if (g_strcmp0 (got, expected) != 0)
    g_error ("“%s” gives\n%s\nnot\n%s", sql, got, expected);
}

static char *
table_text (QStoreDatabase *db)
{
  return query (db, "SELECT id, name, score, price, note, data, typeof (score) FROM t ORDER BY id");
}

/* CSV */

static void
test_csv_values (Fixture       *f,
                 gconstpointer  data)
{
  /* Quotes, doubled quotes, line breaks inside quotes (LF and CRLF), an
   * empty unquoted field (NULL) and "" (empty text), a byte-order mark,
   * CRLF records and a last record without a line end. */
  import_ok (f->t.db, "t",
             "\xef\xbb\xbfid,name,score,price,note\r\n"
             "1,\"a \"\"b\"\" c\",10,1.5,\"x,y\"\r\n"
             "2,\"two\nlines\",,2,\"\"\r\n"
             "3,\"crlf\r\ninside\",\"30\",,\r\n"
             "\r\n"
             "4,last,0040,4e1,z", NULL);
  assert_query (f->t.db, "SELECT id, name, score, price, note, typeof (score), typeof (note) "
                         "FROM t ORDER BY id",
                "1|a \"b\" c|10|1.5|x,y|integer|text\n"
                "2|two\nlines|NULL|2.0||null|text\n"
                "3|crlf\r\ninside|30|NULL|NULL|integer|null\n"
                "4|last|40|40.0|z|integer|text\n");
}

/* Values take the column's affinity exactly as SQLite's INSERT gives
 * them: an ordinary table with the same columns says what to expect. */
static void
test_csv_affinity (Fixture       *f,
                   gconstpointer  data)
{
  const char *values[] = { "42", "4.0", "4.5", "1e3", " 7", "007", "abc", "0x10", "-0",
                           "9223372036854775807", "9223372036854775808", "1.0e+2", "" };
  g_autoptr(GString) csv = g_string_new ("id,name,score,price,note\n");
  g_autofree char *expected = NULL;
  g_autofree char *got = NULL;

  test_exec (f->t.db, "CREATE TEMP TABLE native (id INTEGER PRIMARY KEY, name TEXT NOT NULL, "
                      "score INTEGER DEFAULT 7, price REAL, note TEXT, data BLOB)");
  for (guint i = 0; i < G_N_ELEMENTS (values); i++)
    {
      g_autofree char *sql = NULL;

      g_string_append_printf (csv, "%u,%s,%s,%s,%s\n", i + 1, values[i], values[i], values[i],
                              values[i]);
      if (*values[i] == '\0')
        sql = g_strdup_printf ("INSERT INTO native (id, name, score, price, note) "
                               "VALUES (%u, '', NULL, NULL, NULL)", i + 1);
      else
        sql = g_strdup_printf ("INSERT INTO native (id, name, score, price, note) "
                               "VALUES (%u, '%s', '%s', '%s', '%s')", i + 1, values[i],
                               values[i], values[i], values[i]);
      test_exec (f->t.db, sql);
    }
  /* An empty unquoted field is NULL: name is NOT NULL, so quote it. */
  g_string_replace (csv, "\n13,,,,\n", "\n13,\"\",,,\n", 1);
  import_ok (f->t.db, "t", csv->str, NULL);

  expected = query (f->t.db, "SELECT id, name, typeof (name), score, typeof (score), price, "
                             "typeof (price), note, typeof (note) FROM native ORDER BY id");
  got = query (f->t.db, "SELECT id, name, typeof (name), score, typeof (score), price, "
                        "typeof (price), note, typeof (note) FROM t ORDER BY id");
  g_assert_cmpstr (got, ==, expected);
}

static void
test_csv_columns (Fixture       *f,
                  gconstpointer  data)
{
  Options no_header = { .no_header = TRUE, .columns = "id,name" };
  Options skip_header = { .columns = "name,id" };
  Options all = { .no_header = TRUE };

  /* Columns left out take their DEFAULT. */
  import_ok (f->t.db, "t", "1,a\n2,b\n", &no_header);
  /* With --columns, a header is read and skipped. */
  import_ok (f->t.db, "t", "whatever,header\nc,3\n", &skip_header);
  /* A header in another order and case maps by name. */
  import_ok (f->t.db, "t", "NAME,Id\nd,4\n", NULL);
  /* No header, no columns: every column in order. */
  import_ok (f->t.db, "t", "5,e,50,5.5,n,\n", &all);
  assert_query (f->t.db, "SELECT id, name, score FROM t ORDER BY id",
                "1|a|7\n2|b|7\n3|c|7\n4|d|7\n5|e|50\n");
}

/* Errors: where they are, and nothing of the import is kept. */
typedef struct
{
  const char *what;
  const char *csv;
  QStoreError code;
  guint64     line;
  guint       column;
  const char *message_part;
} CsvErrorCase;

static const CsvErrorCase csv_errors[] = {
  { "unknown column in the header", "id,name,nope\n1,a,2\n", QSTORE_ERROR_INVALID_ARGUMENT, 1, 3,
    "has no column “nope”" },
  { "column named twice", "id,name,ID\n1,a,2\n", QSTORE_ERROR_INVALID_ARGUMENT, 1, 3,
    "named twice" },
  { "too many fields", "id,name\n1,a\n2,b,c\n", QSTORE_ERROR_INVALID_ARGUMENT, 3, 3,
    "too many" },
  { "too few fields", "id,name,score\n1,a,1\n2,b\n", QSTORE_ERROR_INVALID_ARGUMENT, 3, 3,
    "too few" },
  { "invalid UTF-8", "id,name\n1,a\n2,\"b\xc3\x28\"\n", QSTORE_ERROR_INVALID_ARGUMENT, 3, 2,
    "not valid UTF-8" },
  { "invalid UTF-8 on a later line of a field", "id,name\n1,\"a\nb\xff\"\n",
    QSTORE_ERROR_INVALID_ARGUMENT, 3, 2, "not valid UTF-8" },
  { "quote not closed", "id,name\n1,a\n2,\"open\n3,x\n", QSTORE_ERROR_INVALID_ARGUMENT, 3, 2,
    "not closed" },
  { "quote inside an unquoted field", "id,name\n1,a\"b\n", QSTORE_ERROR_INVALID_ARGUMENT, 2, 2,
    "quote inside" },
  { "text after the closing quote", "id,name\n1,\"a\"b\n", QSTORE_ERROR_INVALID_ARGUMENT, 2, 2,
    "after the closing quote" },
  { "NOT NULL", "id,name\n1,a\n2,\n", QSTORE_ERROR_CONSTRAINT, 3, 2,
    "NOT NULL constraint failed: t.name" },
  { "primary key taken", "id,name\n1,a\n1,b\n", QSTORE_ERROR_CONSTRAINT, 3, 1,
    "UNIQUE constraint failed: t.id" },
  { "integer primary key not an integer", "id,name\nabc,a\n", QSTORE_ERROR_INVALID_ARGUMENT, 2, 1,
    "datatype mismatch" },
  { "empty header field", "id,,name\n1,2,3\n", QSTORE_ERROR_INVALID_ARGUMENT, 1, 2,
    "names no column" },
};

/* Each case fails where it says, and the table stays as it was. */
static void
check_error_cases (QStoreDatabase     *db,
                   const CsvErrorCase *cases,
                   guint               n_cases,
                   const Options      *options)
{
  g_autofree char *before = table_text (db);

  for (guint i = 0; i < n_cases; i++)
    {
      const CsvErrorCase *c = &cases[i];
      g_autofree char *message = NULL;
      g_autofree char *after = NULL;

      g_test_message ("case “%s”", c->what);
      message = import_fails (db, "t", c->csv, -1, options, c->code, c->line, c->column);
      g_assert_nonnull (strstr (message, c->message_part));
      g_assert_true (g_str_has_prefix (message, "data: line "));
      g_assert_nonnull (strstr (message, "Nothing was imported"));
      after = table_text (db);
      g_assert_cmpstr (after, ==, before);
    }
}

static void
test_csv_errors (Fixture       *f,
                 gconstpointer  data)
{
  import_ok (f->t.db, "t", "id,name\n100,kept\n", NULL);
  check_error_cases (f->t.db, csv_errors, G_N_ELEMENTS (csv_errors), NULL);
}

/* Without --no-atomic, a bad row far into the input keeps nothing; with
 * it, the rows before it stay. */
static void
test_csv_not_atomic (Fixture       *f,
                     gconstpointer  data)
{
  Options no_atomic = { .no_atomic = TRUE };
  g_autoptr(GString) csv = g_string_new ("id,name\n");
  g_autoptr(QStoreImport) import = NULL;
  g_autoptr(GError) error = NULL;

  /* More rows than one batch holds. */
  for (guint i = 1; i <= 60000; i++)
    g_string_append_printf (csv, "%u,name %u\n", i, i);
  g_string_append (csv, "60001,\n60002,after\n");

  g_free (import_fails (f->t.db, "t", csv->str, csv->len, NULL, QSTORE_ERROR_CONSTRAINT,
                        60002, 2));
  assert_query (f->t.db, "SELECT count(*) FROM t", "0\n");

  g_assert_false (import_text (f->t.db, "t", csv->str, csv->len, &no_atomic, &import, &error));
  g_assert_nonnull (strstr (error->message, "The 60000 rows before the failure were imported"));
  g_assert_cmpuint (qstore_import_get_rows_kept (import), ==, 60000);
  assert_query (f->t.db, "SELECT count(*), min (id), max (id) FROM t", "60000|1|60000\n");
  /* The index followed. */
  assert_query (f->t.db, "SELECT count(*) FROM t WHERE score = 7", "60000\n");
}

/* Records and fields that straddle the reader's buffer. */
static void
test_csv_big (Fixture       *f,
              gconstpointer  data)
{
  g_autoptr(GString) csv = g_string_new ("id,name,note\n");
  g_autoptr(GString) big = g_string_new (NULL);
  g_autofree char *expected = NULL;
  guint64 sum = 0;

  while (big->len < 600 * 1024)
    g_string_append (big, "quote \"\" and comma, and\nline ");
  g_string_append_printf (csv, "1,first,\"%s\"\n", big->str);
  for (guint i = 2; i <= 30000; i++)
    {
      g_string_append_printf (csv, "%u,\"n%u\",x\n", i, i);
      sum += i;
    }
  import_ok (f->t.db, "t", csv->str, NULL);
  g_string_replace (big, "\"\"", "\"", 0);
  expected = g_strdup_printf ("%" G_GSIZE_FORMAT "\n", big->len);
  assert_query (f->t.db, "SELECT length (note) FROM t WHERE id = 1", expected);
  g_free (expected);
  expected = g_strdup_printf ("29999|%" G_GUINT64_FORMAT "\n", sum);
  assert_query (f->t.db, "SELECT count(*), sum (id) FROM t WHERE id > 1 AND name = 'n' || id",
                expected);
}

/* JSON lines */

static void
test_jsonl_values (Fixture       *f,
                   gconstpointer  data)
{
  Options jsonl = { .format = QSTORE_IMPORT_FORMAT_JSONL };
  Options jsonl_columns = { .format = QSTORE_IMPORT_FORMAT_JSONL, .columns = "name,id" };

  import_ok (f->t.db, "t",
             "\xef\xbb\xbf{\"id\": 1, \"name\": \"a\", \"score\": \"12\", \"price\": 2, "
             "\"data\": {\"$blob\": \"AAEC/w==\"}}\r\n"
             "\n"
             "[2, \"b\", null, 1.25, \"note\", null]\n"
             "   \n"
             "{\"NAME\": \"c\", \"id\": 3, \"note\": true}\n"
             "{\"id\": 4, \"name\": \"d\", \"note\": false, \"data\": {\"$blob\": \"\"}}",
             &jsonl);
  import_ok (f->t.db, "t", "[\"e\", 5]\n", &jsonl_columns);
  assert_query (f->t.db, "SELECT id, name, score, typeof (score), price, typeof (price), note, "
                         "data FROM t ORDER BY id",
                "1|a|12|integer|2.0|real|NULL|x'000102ff'\n"
                "2|b|NULL|null|1.25|real|note|NULL\n"
                "3|c|7|integer|NULL|null|1|NULL\n"
                "4|d|7|integer|NULL|null|0|x''\n"
                "5|e|7|integer|NULL|null|NULL|NULL\n");
}

static const CsvErrorCase jsonl_errors[] = {
  { "unknown key", "{\"id\": 1, \"name\": \"a\"}\n{\"id\": 2, \"nope\": 1}\n",
    QSTORE_ERROR_INVALID_ARGUMENT, 2, 2, "has no column “nope”" },
  { "not JSON", "{\"id\": 1, \"name\": \"a\"}\n{\"id\": 2, \"name\" 3}\n",
    QSTORE_ERROR_INVALID_ARGUMENT, 2, 16, "not JSON" },
  { "a nested object", "{\"id\": 1, \"name\": {\"x\": 1}}\n",
    QSTORE_ERROR_INVALID_ARGUMENT, 1, 2, "JSON object is no SQL value" },
  { "a nested array", "{\"id\": 1, \"name\": \"a\", \"note\": [1]}\n",
    QSTORE_ERROR_INVALID_ARGUMENT, 1, 3, "JSON array is no SQL value" },
  { "bad base64", "{\"id\": 1, \"name\": \"a\", \"data\": {\"$blob\": \"AA=A\"}}\n",
    QSTORE_ERROR_INVALID_ARGUMENT, 1, 3, "base64" },
  { "a bare value", "{\"id\": 1, \"name\": \"a\"}\n42\n",
    QSTORE_ERROR_INVALID_ARGUMENT, 2, 0, "a row is a JSON object" },
  { "invalid UTF-8", "{\"id\": 1, \"name\": \"\xe2\x82\"}\n",
    QSTORE_ERROR_INVALID_ARGUMENT, 1, 20, "not valid UTF-8" },
  { "too few values", "[1]\n", QSTORE_ERROR_INVALID_ARGUMENT, 1, 2, "too few" },
  { "NOT NULL", "{\"id\": 1, \"name\": \"a\"}\n{\"id\": 2, \"score\": 1}\n",
    QSTORE_ERROR_CONSTRAINT, 2, 0, "NOT NULL constraint failed: t.name" },
  { "key given twice", "{\"id\": 1, \"name\": \"a\", \"NAME\": \"b\"}\n",
    QSTORE_ERROR_INVALID_ARGUMENT, 1, 3, "given twice" },
};

static void
test_jsonl_errors (Fixture       *f,
                   gconstpointer  data)
{
  Options jsonl = { .format = QSTORE_IMPORT_FORMAT_JSONL };

  import_ok (f->t.db, "t", "{\"id\": 100, \"name\": \"kept\"}\n", &jsonl);
  check_error_cases (f->t.db, jsonl_errors, G_N_ELEMENTS (jsonl_errors), &jsonl);
}

/* What an import refuses before it reads anything. */
static void
test_refusals (Fixture       *f,
               gconstpointer  data)
{
  Options replace = { .mode = QSTORE_IMPORT_MODE_REPLACE };
  Options resume_append = { .resume = TRUE, .no_atomic = TRUE };
  g_autoptr(GError) error = NULL;

  g_assert_false (import_text (f->t.db, "nope", "id\n1\n", -1, NULL, NULL, &error));
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_NOT_FOUND);
  g_clear_error (&error);

  g_assert_false (import_text (f->t.db, "_qstore_staging_t", "id\n1\n", -1, &replace, NULL, &error));
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);

  g_assert_false (import_text (f->t.db, "t", "id\n1\n", -1, &resume_append, NULL, &error));
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);

  test_exec (f->t.db, "BEGIN");
  g_assert_false (import_text (f->t.db, "t", "id,name\n1,a\n", -1, NULL, NULL, &error));
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_BUSY);
  g_clear_error (&error);
  test_exec (f->t.db, "ROLLBACK");

  test_exec (f->t.db, "CREATE MATERIALIZED VIEW mv AS SELECT id, name FROM t");
  g_assert_false (import_text (f->t.db, "mv", "id,name\n1,a\n", -1, NULL, NULL, &error));
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_READ_ONLY);
  g_clear_error (&error);
  assert_query (f->t.db, "SELECT count(*) FROM t", "0\n");
}

/* Replace */

static void
test_replace (Fixture       *f,
              gconstpointer  data)
{
  Options replace = { .mode = QSTORE_IMPORT_MODE_REPLACE };
  g_autoptr(QStoreImport) import = NULL;
  g_autoptr(GError) error = NULL;
  g_auto(GStrv) tables = NULL;
  g_autofree char *before = NULL;

  test_exec (f->t.db, "CREATE UNIQUE INDEX t_note ON t (note) WHERE note IS NOT NULL;"
                      "CREATE MATERIALIZED VIEW high AS SELECT id, name FROM t WHERE score > 5;"
                      "CREATE MATERIALIZED VIEW per_score AS SELECT score, count(*) AS n "
                      "FROM t GROUP BY score");
  import_ok (f->t.db, "t", "id,name,score,note\n1,old1,10,a\n2,old2,1,b\n3,old3,10,c\n", NULL);
  assert_query (f->t.db, "SELECT id, name FROM high ORDER BY id", "1|old1\n3|old3\n");

  g_assert_true (import_text (f->t.db, "t", "id,name,score,note\n7,new7,9,a\n8,new8,9,b\n",
                              -1, &replace, &import, &error));
  g_assert_no_error (error);
  g_assert_cmpstr (qstore_import_get_staging_table (import), ==, "_qstore_staging_t");
  g_assert_cmpuint (qstore_import_get_rows (import), ==, 2);
  assert_query (f->t.db, "SELECT id, name, score, note FROM t ORDER BY id",
                "7|new7|9|a\n8|new8|9|b\n");
  /* The indexes and the materialized views followed the swap. */
  assert_query (f->t.db, "SELECT id FROM t WHERE score = 9 ORDER BY id", "7\n8\n");
  assert_query (f->t.db, "SELECT id FROM t WHERE note = 'b'", "8\n");
  assert_query (f->t.db, "SELECT id, name FROM high ORDER BY id", "7|new7\n8|new8\n");
  assert_query (f->t.db, "SELECT score, n FROM per_score", "9|2\n");
  /* Nothing stays behind. */
  g_assert_null (qstore_database_get_table (f->t.db, NULL, "_qstore_staging_t"));
  g_assert_null (qstore_database_get_table (f->t.db, NULL, QSTORE_STAGING_MARKER_TABLE));

  /* A failed replace leaves the table, its indexes and views as they
   * were, and no staging table. */
  before = table_text (f->t.db);
  g_free (import_fails (f->t.db, "t", "id,name,score,note\n9,x,1,z\n10,y,1,z\n", -1, &replace,
                        QSTORE_ERROR_CONSTRAINT, 3, 4));
  g_assert_cmpstr (table_text (f->t.db), ==, before);
  assert_query (f->t.db, "SELECT id, name FROM high ORDER BY id", "7|new7\n8|new8\n");
  g_assert_null (qstore_database_get_table (f->t.db, NULL, "_qstore_staging_t"));
  g_assert_null (qstore_database_get_table (f->t.db, NULL, QSTORE_STAGING_MARKER_TABLE));
  tables = qstore_database_list_tables (f->t.db);
  g_assert_cmpuint (g_strv_length (tables), ==, 1);
}

/* Names that need quoting, and a comma (the marker lists staging tables
 * as JSON, never split on commas). */
static void
test_replace_quoted_names (Fixture       *f,
                           gconstpointer  data)
{
  Options replace = { .mode = QSTORE_IMPORT_MODE_REPLACE };
  Options replace_no_atomic = { .mode = QSTORE_IMPORT_MODE_REPLACE, .no_atomic = TRUE };
  g_autoptr(QStoreStagingLeftovers) leftovers = NULL;
  g_autoptr(QStoreStagingRun) run = NULL;
  g_autoptr(GPtrArray) swept = NULL;
  g_autoptr(GError) error = NULL;
  const char *name = "we,ird \"one\"";

  test_exec (f->t.db, "CREATE TABLE \"we,ird \"\"one\"\"\" (\"the id\" INTEGER PRIMARY KEY, "
                      "\"a,b\" TEXT UNIQUE, c INTEGER REFERENCES \"we,ird \"\"one\"\"\" (\"the id\"));"
                      "CREATE INDEX \"odd, index\" ON \"we,ird \"\"one\"\"\" (c DESC) WHERE c > 0");
  import_ok (f->t.db, name, "the id,\"a,b\",c\n1,x,1\n2,y,1\n", NULL);
  import_ok (f->t.db, name, "the id,\"a,b\",c\n5,p,5\n6,q,0\n", &replace);
  assert_query (f->t.db, "SELECT * FROM \"we,ird \"\"one\"\"\" ORDER BY 1", "5|p|5\n6|q|0\n");
  assert_query (f->t.db, "SELECT \"the id\" FROM \"we,ird \"\"one\"\"\" WHERE c > 0 ORDER BY c DESC",
                "5\n");

  /* Left over, listed under its own name, and swept without touching
   * the table. */
  g_assert_false (import_text (f->t.db, name, "the id,\"a,b\",c\n7,r,1\n8,r,1\n", -1,
                               &replace_no_atomic, NULL, &error));
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_CONSTRAINT);
  g_clear_error (&error);
  leftovers = qstore_staging_leftovers_read (f->t.db, &error);
  g_assert_no_error (error);
  run = g_list_model_get_item (G_LIST_MODEL (leftovers), 0);
  g_assert_cmpstr (qstore_staging_run_get_target (run), ==, name);
  g_assert_cmpstr (qstore_staging_run_get_tables (run)[0], ==, "_qstore_staging_we,ird \"one\"");
  g_assert_null (qstore_staging_run_get_tables (run)[1]);
  test_exec (f->t.db, "UPDATE _qstore_replace_in_progress SET resumable = 0, "
                      "heartbeat = heartbeat - 7200000");
  swept = qstore_staging_sweep (f->t.db, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (swept->len, ==, 1);
  g_assert_null (qstore_database_get_table (f->t.db, NULL, "_qstore_staging_we,ird \"one\""));
  assert_query (f->t.db, "SELECT * FROM \"we,ird \"\"one\"\"\" ORDER BY 1", "5|p|5\n6|q|0\n");
}

/* A --no-atomic replace that fails stays resumable: listed, never swept
 * however old, refused to a new import, and resumed from where its
 * stored rows end. */
static void
test_resume (Fixture       *f,
             gconstpointer  data)
{
  Options replace_no_atomic = { .mode = QSTORE_IMPORT_MODE_REPLACE, .no_atomic = TRUE };
  Options replace = { .mode = QSTORE_IMPORT_MODE_REPLACE };
  Options resume = { .mode = QSTORE_IMPORT_MODE_REPLACE, .no_atomic = TRUE, .resume = TRUE };
  g_autoptr(GString) bad = g_string_new ("id,name\n");
  g_autoptr(GString) good = NULL;
  g_autoptr(QStoreStagingLeftovers) leftovers = NULL;
  g_autoptr(QStoreStagingRun) run = NULL;
  g_autoptr(GPtrArray) swept = NULL;
  g_autoptr(QStoreImport) import = NULL;
  g_autoptr(GError) error = NULL;
  g_auto(GStrv) tables = NULL;
  g_autofree char *message = NULL;
  g_autofree char *expected = NULL;

  import_ok (f->t.db, "t", "id,name\n1,old\n", NULL);
  for (guint i = 1; i <= 70000; i++)
    g_string_append_printf (bad, "%u,n%u\n", i, i);
  good = g_string_new (bad->str);
  g_string_append (bad, "70001,\n70002,x\n");
  g_string_append (good, "70001,fixed\n70002,x\n");

  message = import_fails (f->t.db, "t", bad->str, bad->len, &replace_no_atomic,
                          QSTORE_ERROR_CONSTRAINT, 70002, 2);
  g_assert_nonnull (strstr (message, "the 70000 rows before the failure are staged"));
  assert_query (f->t.db, "SELECT id, name FROM t", "1|old\n");
  tables = qstore_database_list_tables (f->t.db);
  g_assert_cmpstr (tables[0], ==, "t");
  g_assert_null (tables[1]);

  leftovers = qstore_staging_leftovers_read (f->t.db, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (leftovers)), ==, 1);
  run = g_list_model_get_item (G_LIST_MODEL (leftovers), 0);
  g_assert_cmpstr (qstore_staging_run_get_target (run), ==, "t");
  g_assert_cmpstr (qstore_staging_run_get_tables (run)[0], ==, "_qstore_staging_t");
  g_assert_true (qstore_staging_run_get_resumable (run));
  g_assert_false (qstore_staging_run_get_droppable (run));

  /* However old its heartbeat, a resumable run is not swept. */
  test_exec (f->t.db, "UPDATE _qstore_replace_in_progress SET heartbeat = heartbeat - 86400000");
  swept = qstore_staging_sweep (f->t.db, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (swept->len, ==, 0);
  assert_query (f->t.db, "SELECT count(*) FROM _qstore_staging_t", "70000\n");

  /* A new import into the table is refused, saying what to do. */
  g_assert_false (import_text (f->t.db, "t", good->str, good->len, &replace, NULL, &error));
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_EXISTS);
  g_assert_nonnull (strstr (error->message, "--resume"));
  g_clear_error (&error);

  /* A record that does not count the staged rows (a torn commit where
   * stores commit one by one) is not continued. */
  test_exec (f->t.db, "UPDATE _qstore_replace_in_progress SET details = json_set (details, '$.rows', 69999)");
  g_assert_false (import_text (f->t.db, "t", good->str, good->len, &resume, NULL, &error));
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_CORRUPT);
  g_assert_nonnull (strstr (error->message, "recorded 69999 staged rows, but “_qstore_staging_t” holds 70000"));
  g_clear_error (&error);
  assert_query (f->t.db, "SELECT id, name FROM t", "1|old\n");
  test_exec (f->t.db, "UPDATE _qstore_replace_in_progress SET details = json_set (details, '$.rows', 70000)");

  /* Resumed: only what is after the stored rows is read. */
  g_assert_true (import_text (f->t.db, "t", good->str, good->len, &resume, &import, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (qstore_import_get_rows (import), ==, 2);
  expected = g_strdup_printf ("70002|1|70002|70001\n");
  assert_query (f->t.db, "SELECT count(*), min (id), max (id), "
                         "(SELECT id FROM t WHERE name = 'fixed') FROM t", expected);
  g_assert_null (qstore_database_get_table (f->t.db, NULL, "_qstore_staging_t"));

  /* Nothing left to resume. */
  g_assert_false (import_text (f->t.db, "t", good->str, good->len, &resume, NULL, &error));
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_NOT_FOUND);
}

/* Leaves an interrupted run for @target, as a process killed while
 * loading would: its marker row and a staging table with a row. */
static void
leave_run (QStoreDatabase *db,
           const char     *target,
           gboolean        resumable)
{
  Options options = { .mode = QSTORE_IMPORT_MODE_REPLACE, .no_atomic = TRUE };
  g_autofree char *sql = NULL;
  g_autoptr(GError) error = NULL;

  /* A failed --no-atomic run leaves exactly that; then the flag is set as
   * the case needs. */
  g_assert_false (import_text (db, target, "id,name\n50,left\n51,\n", -1, &options, NULL, &error));
  sql = g_strdup_printf ("UPDATE _qstore_replace_in_progress SET resumable = %d "
                         "WHERE target = '%s'", resumable, target);
  test_exec (db, sql);
}

static void
age_runs (QStoreDatabase *db,
          gint64          minutes)
{
  g_autofree char *sql = g_strdup_printf ("UPDATE _qstore_replace_in_progress "
                                          "SET heartbeat = heartbeat - %" G_GINT64_FORMAT,
                                          minutes * 60000);

  test_exec (db, sql);
}

static void
test_sweep (Fixture       *f,
            gconstpointer  data)
{
  g_autoptr(GPtrArray) swept = NULL;
  g_autoptr(QStoreStagingLeftovers) leftovers = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *before = NULL;

  test_exec (f->t.db, "CREATE TABLE u (id INTEGER PRIMARY KEY, name TEXT NOT NULL)");
  import_ok (f->t.db, "t", "id,name\n1,t-row\n", NULL);
  import_ok (f->t.db, "u", "id,name\n1,u-row\n", NULL);
  leave_run (f->t.db, "t", FALSE);
  leave_run (f->t.db, "u", TRUE);
  before = query (f->t.db, "SELECT * FROM t UNION ALL SELECT *, NULL, NULL, NULL, NULL FROM u");

  /* Fresh: nothing goes. */
  swept = qstore_staging_sweep (f->t.db, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (swept->len, ==, 0);
  g_clear_pointer (&swept, g_ptr_array_unref);

  /* Past the threshold: the one that is not resumable goes, and only its
   * staging table; the targets keep their rows. */
  age_runs (f->t.db, 31);
  swept = qstore_staging_sweep (f->t.db, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (swept->len, ==, 1);
  g_assert_cmpstr (qstore_staging_run_get_target (swept->pdata[0]), ==, "t");
  g_assert_null (qstore_database_get_table (f->t.db, NULL, "_qstore_staging_t"));
  g_assert_nonnull (qstore_database_get_table (f->t.db, NULL, "_qstore_staging_u"));
  g_assert_cmpstr (query (f->t.db, "SELECT * FROM t UNION ALL SELECT *, NULL, NULL, NULL, NULL FROM u"),
                   ==, before);
  leftovers = qstore_staging_leftovers_read (f->t.db, &error);
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (leftovers)), ==, 1);

  /* A marker row naming the target itself (damaged, or written by hand)
   * never drops it. */
  test_exec (f->t.db, "UPDATE _qstore_replace_in_progress SET resumable = 0, "
                      "staging = '[\"u\", \"t\", \"_qstore_staging_u\"]'");
  g_clear_pointer (&swept, g_ptr_array_unref);
  swept = qstore_staging_sweep (f->t.db, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (swept->len, ==, 1);
  g_assert_nonnull (qstore_database_get_table (f->t.db, NULL, "u"));
  g_assert_nonnull (qstore_database_get_table (f->t.db, NULL, "t"));
  g_assert_null (qstore_database_get_table (f->t.db, NULL, "_qstore_staging_u"));
  g_assert_null (qstore_database_get_table (f->t.db, NULL, QSTORE_STAGING_MARKER_TABLE));
  g_assert_cmpstr (query (f->t.db, "SELECT * FROM t UNION ALL SELECT *, NULL, NULL, NULL, NULL FROM u"),
                   ==, before);
}

static void
test_discard (Fixture       *f,
              gconstpointer  data)
{
  g_autoptr(GError) error = NULL;

  leave_run (f->t.db, "t", TRUE);
  g_assert_false (qstore_staging_discard (f->t.db, "nope", &error));
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_NOT_FOUND);
  g_clear_error (&error);
  g_assert_true (qstore_staging_discard (f->t.db, "T", &error));
  g_assert_no_error (error);
  g_assert_null (qstore_database_get_table (f->t.db, NULL, "_qstore_staging_t"));
  import_ok (f->t.db, "t", "id,name\n1,a\n", &(Options) { .mode = QSTORE_IMPORT_MODE_REPLACE });
}

/* One import at a time: a second one on the same database, started from
 * the first one's progress, is refused and the first completes. A second
 * import into a target whose run is recorded as loading is refused. */
static void
on_progress_start_another (QStoreImport *first,
                           guint64       rows,
                           guint64       bytes,
                           GError      **second_error)
{
  Options replace = { .mode = QSTORE_IMPORT_MODE_REPLACE };

  if (*second_error == NULL)
    g_assert_false (import_text (qstore_import_get_database (first), "t", "id,name\n1,x\n", -1,
                                 &replace, NULL, second_error));
}

static void
test_concurrent (Fixture       *f,
                 gconstpointer  data)
{
  Options replace = { .mode = QSTORE_IMPORT_MODE_REPLACE };
  g_autoptr(QStoreImport) first = make_import (f->t.db, "t", &replace);
  g_autoptr(GString) csv = g_string_new ("id,name\n");
  g_autoptr(GInputStream) input = NULL;
  g_autoptr(GError) second_error = NULL;
  g_autoptr(GError) error = NULL;

  for (guint i = 1; i <= 5000; i++)
    g_string_append_printf (csv, "%u,n%u\n", i, i);
  input = g_memory_input_stream_new_from_data (csv->str, csv->len, NULL);
  g_signal_connect (first, "progress", G_CALLBACK (on_progress_start_another), &second_error);
  g_assert_true (qstore_import_run (first, input, NULL, &error));
  g_assert_no_error (error);
  g_assert_error (second_error, QSTORE_ERROR, QSTORE_ERROR_BUSY);
  assert_query (f->t.db, "SELECT count(*), sum (id) FROM t", "5000|12502500\n");

  /* A run recorded as loading, with a fresh heartbeat (another process,
   * or one killed a moment ago): refused, and the table stays. */
  leave_run (f->t.db, "t", FALSE);
  g_clear_error (&error);
  g_assert_false (import_text (f->t.db, "t", "id,name\n1,x\n", -1, &replace, NULL, &error));
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_BUSY);
  g_assert_nonnull (strstr (error->message, "Another import into table “t” is running"));
  g_clear_error (&error);
  /* Once stale, it is refused as a leftover to sweep. */
  age_runs (f->t.db, 60);
  g_assert_false (import_text (f->t.db, "t", "id,name\n1,x\n", -1, &replace, NULL, &error));
  g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_EXISTS);
  g_assert_nonnull (strstr (error->message, "--sweep"));
  assert_query (f->t.db, "SELECT count(*), sum (id) FROM t", "5000|12502500\n");
}

static void
on_progress_cancel (QStoreImport *import,
                    guint64       rows,
                    guint64       bytes,
                    GCancellable *cancellable)
{
  g_cancellable_cancel (cancellable);
}

static void
on_progress_record (QStoreImport *import,
                    guint64       rows,
                    guint64       bytes,
                    GArray       *seen)
{
  g_array_append_val (seen, rows);
}

static void
test_progress_cancel (Fixture       *f,
                      gconstpointer  data)
{
  Options replace = { .mode = QSTORE_IMPORT_MODE_REPLACE };
  g_autoptr(GString) csv = g_string_new ("id,name\n");
  g_autoptr(GCancellable) cancellable = g_cancellable_new ();
  g_autoptr(GArray) seen = g_array_new (FALSE, FALSE, sizeof (guint64));
  g_autoptr(GError) error = NULL;

  for (guint i = 1; i <= 3000; i++)
    g_string_append_printf (csv, "%u,n%u\n", i, i);

  {
    g_autoptr(QStoreImport) import = make_import (f->t.db, "t", NULL);
    g_autoptr(GInputStream) input = g_memory_input_stream_new_from_data (csv->str, csv->len, NULL);

    g_signal_connect (import, "progress", G_CALLBACK (on_progress_record), seen);
    g_assert_true (qstore_import_run (import, input, NULL, &error));
    g_assert_cmpuint (seen->len, >=, 1);
    g_assert_cmpuint (g_array_index (seen, guint64, seen->len - 1), ==, 3000);
    for (guint i = 1; i < seen->len; i++)
      g_assert_cmpuint (g_array_index (seen, guint64, i - 1), <=, g_array_index (seen, guint64, i));
    g_assert_cmpuint (qstore_import_get_bytes_read (import), ==, csv->len);
  }

  {
    g_autoptr(QStoreImport) import = make_import (f->t.db, "t", &replace);
    g_autoptr(GInputStream) input = g_memory_input_stream_new_from_data (csv->str, csv->len, NULL);
    g_autofree char *before = table_text (f->t.db);

    g_signal_connect (import, "progress", G_CALLBACK (on_progress_cancel), cancellable);
    g_assert_false (qstore_import_run (import, input, cancellable, &error));
    g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
    g_assert_cmpstr (table_text (f->t.db), ==, before);
    g_assert_null (qstore_database_get_table (f->t.db, NULL, "_qstore_staging_t"));
  }
}

/* While rows land, the heartbeat is written every couple of seconds:
 * a load held up for more than two seconds beats again as soon as it
 * moves on. */
typedef struct
{
  gboolean slept;
  GArray  *beats;     /* gint64: each heartbeat seen */
} Beats;

static void
on_progress_watch_beat (QStoreImport *import,
                        guint64       rows,
                        guint64       bytes,
                        Beats        *beats)
{
  g_autoptr(QStoreStagingLeftovers) leftovers = NULL;
  g_autoptr(QStoreStagingRun) run = NULL;
  gint64 beat;

  leftovers = qstore_staging_leftovers_read (qstore_import_get_database (import), NULL);
  g_assert_nonnull (leftovers);
  run = g_list_model_get_item (G_LIST_MODEL (leftovers), 0);
  beat = qstore_staging_run_get_heartbeat (run);
  if (beats->beats->len == 0 || g_array_index (beats->beats, gint64, beats->beats->len - 1) != beat)
    g_array_append_val (beats->beats, beat);
  if (!beats->slept)
    {
      beats->slept = TRUE;
      g_usleep (2200 * 1000);
    }
}

static void
test_heartbeat (Fixture       *f,
                gconstpointer  data)
{
  Options replace = { .mode = QSTORE_IMPORT_MODE_REPLACE };
  g_autoptr(QStoreImport) import = make_import (f->t.db, "t", &replace);
  g_autoptr(GString) csv = g_string_new ("id,name\n");
  g_autoptr(GInputStream) input = NULL;
  g_autoptr(GError) error = NULL;
  Beats beats = { FALSE, g_array_new (FALSE, FALSE, sizeof (gint64)) };

  if (test_provider_persistent ())
    {
      g_test_skip ("the same on every provider: run on memory");
      g_array_unref (beats.beats);
      return;
    }
  for (guint i = 1; i <= 20000; i++)
    g_string_append_printf (csv, "%u,n%u\n", i, i);
  input = g_memory_input_stream_new_from_data (csv->str, csv->len, NULL);
  g_signal_connect (import, "progress", G_CALLBACK (on_progress_watch_beat), &beats);
  g_assert_true (qstore_import_run (import, input, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (beats.beats->len, >=, 2);
  g_assert_cmpint (g_array_index (beats.beats, gint64, beats.beats->len - 1) -
                   g_array_index (beats.beats, gint64, 0), >=, 2000);
  g_array_unref (beats.beats);
}

/* Names reserved for staged imports, and views over staging tables. */
static void
test_reserved (Fixture       *f,
               gconstpointer  data)
{
  g_autoptr(GError) error = NULL;

  /* Refused, naming the object: every `_qstore_` name is qstore's own. */
  test_exec_fails (f->t.db, "CREATE TABLE _qstore_staging_x (a)", QSTORE_ERROR_INVALID_ARGUMENT,
                   "“_qstore_staging_x”");
  test_exec_fails (f->t.db, "CREATE TABLE \"_QSTORE_STAGING_y\" (a)", QSTORE_ERROR_INVALID_ARGUMENT,
                   "“_QSTORE_STAGING_y”");
  test_exec_fails (f->t.db, "CREATE TABLE " QSTORE_STAGING_MARKER_TABLE " (a)",
                   QSTORE_ERROR_INVALID_ARGUMENT, "“" QSTORE_STAGING_MARKER_TABLE "”");
  test_exec_fails (f->t.db, "CREATE INDEX _qstore_staging_i ON t (name)",
                   QSTORE_ERROR_INVALID_ARGUMENT, "“_qstore_staging_i”");
  test_exec_fails (f->t.db, "CREATE VIEW _qstore_staging_v AS SELECT 1",
                   QSTORE_ERROR_INVALID_ARGUMENT, "“_qstore_staging_v”");
  test_exec_fails (f->t.db, "ALTER TABLE t RENAME TO _qstore_staging_t",
                   QSTORE_ERROR_INVALID_ARGUMENT, "“_qstore_staging_t”");
  test_exec_fails (f->t.db, "CREATE MATERIALIZED VIEW _qstore_staging_m AS SELECT id FROM t",
                   QSTORE_ERROR_INVALID_ARGUMENT, "“_qstore_staging_m”");
  /* TEMP objects are the connection's own, and other names are fine. */
  test_exec (f->t.db, "CREATE TEMP TABLE _qstore_staging_temp (a); CREATE TABLE qstore_staging_x (a)");

  leave_run (f->t.db, "t", TRUE);
  test_exec_fails (f->t.db, "CREATE MATERIALIZED VIEW m AS SELECT id FROM _qstore_staging_t",
                   QSTORE_ERROR_UNSUPPORTED, "belongs to a staged import");
  test_exec_fails (f->t.db, "CREATE MATERIALIZED VIEW m AS SELECT t.id FROM t JOIN "
                            "_qstore_staging_t s USING (id)",
                   QSTORE_ERROR_UNSUPPORTED, "belongs to a staged import");
  /* Staging tables are not listed among the tables. */
  {
    g_auto(GStrv) tables = qstore_database_list_tables (f->t.db);

    g_assert_cmpuint (g_strv_length (tables), ==, 2);
    g_assert_true (g_strv_contains ((const char * const *) tables, "t"));
    g_assert_true (g_strv_contains ((const char * const *) tables, "qstore_staging_x"));
  }
}

/* PRAGMA qstore.staging_stale_minutes: kept in the catalog, checked, and
 * outranked by the environment. */
static void
test_setting (Fixture       *f,
              gconstpointer  data)
{
  assert_query (f->t.db, "PRAGMA qstore.staging_stale_minutes", "NULL\n");
  g_assert_cmpint (qstore_database_get_staging_stale_after_ms (f->t.db), ==, 30 * 60000);
  test_exec (f->t.db, "PRAGMA qstore.staging_stale_minutes = 45");
  assert_query (f->t.db, "PRAGMA qstore.staging_stale_minutes", "45\n");
  assert_query (f->t.db, "PRAGMA QSTORE.STAGING_STALE_MINUTES", "45\n");
  g_assert_cmpint (qstore_database_get_staging_stale_after_ms (f->t.db), ==, 45 * 60000);

  test_exec_fails (f->t.db, "PRAGMA qstore.staging_stale_minutes = -5",
                   QSTORE_ERROR_INVALID_ARGUMENT, "whole number of minutes");
  test_exec_fails (f->t.db, "PRAGMA qstore.staging_stale_minutes = 1.5",
                   QSTORE_ERROR_INVALID_ARGUMENT, "whole number of minutes");
  test_exec_fails (f->t.db, "PRAGMA qstore.staging_stale_minutes = 'abc'",
                   QSTORE_ERROR_INVALID_ARGUMENT, "whole number of minutes");
  assert_query (f->t.db, "PRAGMA qstore.staging_stale_minutes", "45\n");

  /* Only schema qstore, name staging_stale_minutes is the setting. */
  assert_query (f->t.db, "PRAGMA staging_stale_minutes", "");
  assert_query (f->t.db, "PRAGMA main.staging_stale_minutes", "");
  test_exec_fails (f->t.db, "PRAGMA qstore.staging_stale", QSTORE_ERROR_INVALID_ARGUMENT,
                   "unknown database qstore");

  /* The environment outranks it; a bad value falls through to it. */
  g_setenv (QSTORE_STAGING_STALE_MINUTES_ENV, "5", TRUE);
  g_assert_cmpint (qstore_database_get_staging_stale_after_ms (f->t.db), ==, 5 * 60000);
  g_setenv (QSTORE_STAGING_STALE_MINUTES_ENV, "1.5", TRUE);
  g_assert_cmpint (qstore_database_get_staging_stale_after_ms (f->t.db), ==, 45 * 60000);
  g_unsetenv (QSTORE_STAGING_STALE_MINUTES_ENV);

  if (test_provider_persistent ())
    {
      test_database_reopen (&f->t);
      assert_query (f->t.db, "PRAGMA qstore.staging_stale_minutes", "45\n");
    }
  test_exec (f->t.db, "PRAGMA qstore.staging_stale_minutes = 0");
  assert_query (f->t.db, "PRAGMA qstore.staging_stale_minutes", "NULL\n");
  g_assert_cmpint (qstore_database_get_staging_stale_after_ms (f->t.db), ==, 30 * 60000);
}

/* Opening reports the leftovers, with one log line, and neither refuses
 * nor drops anything; read-only opens too. */
static void
test_open_note (Fixture       *f,
                gconstpointer  data)
{
  g_autoptr(QStoreDatabase) reader = NULL;
  QStoreRehydrationResult *result;
  QStoreStagingLeftovers *leftovers;
  g_autoptr(QStoreStagingRun) run = NULL;
  const char * const *tables;

  if (!test_provider_persistent ())
    {
      g_test_skip ("needs a store that outlives its close");
      return;
    }
  test_exec (f->t.db, "CREATE TABLE u (id INTEGER PRIMARY KEY, name TEXT NOT NULL)");
  leave_run (f->t.db, "t", FALSE);
  age_runs (f->t.db, 90);
  leave_run (f->t.db, "u", TRUE);

  g_test_expect_message ("qstore", G_LOG_LEVEL_MESSAGE,
                         "*2 staged imports left staging tables: _qstore_staging_t (into “t”, "
                         "heartbeat 1 h 30 min ago; droppable: no heartbeat for 1 h 30 min "
                         "(the threshold is 30 min) and not resumable);"
                         " _qstore_staging_u (into “u”, heartbeat * ago; kept: resumable*");
  test_database_reopen (&f->t);
  g_test_assert_expected_messages ();

  result = qstore_database_get_rehydration_result (f->t.db);
  leftovers = qstore_rehydration_result_get_staging_leftovers (result);
  g_assert_nonnull (leftovers);
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (leftovers)), ==, 2);
  g_assert_cmpuint (qstore_staging_leftovers_get_n_droppable (leftovers), ==, 1);
  run = g_list_model_get_item (G_LIST_MODEL (leftovers), 0);
  g_assert_true (qstore_staging_run_get_droppable (run));
  g_assert_cmpint (qstore_staging_run_get_heartbeat_age (run), >=, 90 * 60000);

  /* Bookkeeping is not among the tables that loaded; nothing was dropped. */
  tables = qstore_rehydration_result_get_tables (result);
  g_assert_cmpuint (g_strv_length ((char **) tables), ==, 2);
  g_assert_nonnull (qstore_database_get_table (f->t.db, NULL, "_qstore_staging_t"));
  g_assert_nonnull (qstore_database_get_table (f->t.db, NULL, "_qstore_staging_u"));

  /* Read-only, the same note and nothing written. */
  g_test_expect_message ("qstore", G_LOG_LEVEL_MESSAGE, "*2 staged imports left*");
  reader = test_open_database (f->t.uri, QSTORE_OPEN_READ_ONLY);
  g_test_assert_expected_messages ();
  leftovers = qstore_rehydration_result_get_staging_leftovers (qstore_database_get_rehydration_result (reader));
  g_assert_cmpuint (qstore_staging_leftovers_get_n_droppable (leftovers), ==, 1);
  g_assert_null (qstore_staging_sweep (reader, NULL));
  test_close_database (&reader);

  /* No leftovers, no line. */
  g_assert_true (qstore_staging_discard (f->t.db, "u", NULL));
  g_assert_cmpuint (qstore_staging_sweep (f->t.db, NULL)->len, ==, 1);
  test_database_reopen (&f->t);
  leftovers = qstore_rehydration_result_get_staging_leftovers (qstore_database_get_rehydration_result (f->t.db));
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (leftovers)), ==, 0);
}

/* The catalog listing tells staging tables apart. */
static void
test_catalog_entry (Fixture       *f,
                    gconstpointer  data)
{
  g_autoptr(GListModel) entries = NULL;
  g_autoptr(GError) error = NULL;
  guint staging = 0, tables = 0;

  leave_run (f->t.db, "t", TRUE);
  entries = qstore_catalog_list_entries (qstore_database_get_provider (f->t.db), &error);
  g_assert_no_error (error);
  for (guint i = 0; i < g_list_model_get_n_items (entries); i++)
    {
      g_autoptr(QStoreCatalogEntry) entry = g_list_model_get_item (entries, i);

      if (qstore_catalog_entry_get_kind (entry) != QSTORE_CATALOG_KEY_TABLE)
        continue;
      if (qstore_catalog_entry_is_staging_table (entry))
        {
          g_assert_true (g_str_has_prefix (qstore_catalog_entry_get_name (entry), "_qstore_"));
          staging++;
        }
      else
        tables++;
    }
  g_assert_cmpuint (staging, ==, 2);     /* the staging table and the marker */
  g_assert_cmpuint (tables, ==, 1);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);

#define ADD(path, func) \
  g_test_add (path, Fixture, NULL, fixture_setup, func, fixture_teardown)

  ADD ("/import/csv/values", test_csv_values);
  ADD ("/import/csv/affinity", test_csv_affinity);
  ADD ("/import/csv/columns", test_csv_columns);
  ADD ("/import/csv/errors", test_csv_errors);
  ADD ("/import/csv/not-atomic", test_csv_not_atomic);
  ADD ("/import/csv/big", test_csv_big);
  ADD ("/import/jsonl/values", test_jsonl_values);
  ADD ("/import/jsonl/errors", test_jsonl_errors);
  ADD ("/import/refusals", test_refusals);
  ADD ("/import/replace", test_replace);
  ADD ("/import/replace-quoted-names", test_replace_quoted_names);
  ADD ("/import/resume", test_resume);
  ADD ("/import/sweep", test_sweep);
  ADD ("/import/discard", test_discard);
  ADD ("/import/concurrent", test_concurrent);
  ADD ("/import/progress-cancel", test_progress_cancel);
  ADD ("/import/heartbeat", test_heartbeat);
  ADD ("/staging/reserved", test_reserved);
  ADD ("/staging/setting", test_setting);
  ADD ("/staging/open-note", test_open_note);
  ADD ("/staging/catalog-entry", test_catalog_entry);

  return g_test_run ();
}
