/* test-differential.c: random SQL, run on qstore and on plain SQLite
 *
 * A seeded generator writes a stream of statements — DDL with every kind
 * of key, collation, UNIQUE, CHECK and partial index, INSERT/UPDATE/DELETE
 * with every conflict clause, SELECTs that seek on keys and indexes with
 * values of the wrong type, joins, aggregates, subqueries and
 * transactions with savepoints — over a small domain of values, so that
 * conflicts and collation ties are frequent. Every statement runs on a
 * QStoreDatabase and on an in-memory SQLite database with the same DDL,
 * and the two must agree: the same rows (in order where the statement's
 * ORDER BY fixes the order, as a multiset otherwise), the same class of
 * error, the same changes() after a write, the same last_insert_rowid()
 * after an insert into a table keyed by its rowid. Every table is
 * compared in full at intervals, and persistent stores are closed and
 * opened again now and then.
 *
 * The generator stays inside what qstore promises to do as SQLite does.
 * It writes no UPSERT, RETURNING or triggers (refused by qstore), no DDL
 * inside a transaction (qstore commits the transaction first), and never
 * reads the rowid of a table keyed by another PRIMARY KEY (there it is an
 * ephemeral number). Where SQLite's own answer depends on the order it
 * visits rows (which differs between an ordinary table and a virtual
 * one), the statement is shaped so that it does not: LIMIT only under a
 * total order, INSERT … SELECT under a total order, UPDATEs that could
 * conflict touch one row. It also steps around a few wrong answers of
 * SQLite 3.40 itself, each noted where it is avoided.
 *
 * Environment:
 * - QSTORE_TEST_PROVIDER: a provider (`memory`, `lmdb`, `sqlite`, with
 *   optional URI options), or several separated by commas, run in turn.
 * - QSTORE_DIFF_SEED, QSTORE_DIFF_STATEMENTS: the seed and the number of
 *   statements (defaults from --seed=N and --statements=N, else a random
 *   seed and 3000 statements).
 * - QSTORE_DIFF_MINIMIZE=1: on a mismatch, shrink the statements that led
 *   to it to a few that still show it (for at most five minutes, or as
 *   many seconds as the value says when larger), and print those.
 * - QSTORE_DIFF_REPLAY=FILE: run the statements of FILE (as printed for a
 *   mismatch: one per line, `-- check` and `-- reopen` lines, `-- ordered`
 *   and `-- rowid` after a statement) instead of generating any.
 * - QSTORE_DIFF_TRACE=FILE: write every statement run to FILE.
 * - QSTORE_DIFF_VERBOSE=1: print every statement and SQLite's outcome.
 * - QSTORE_DIFF_SKIP=SHAPE,…: write no statements of these shapes, to look
 *   past a known mismatch while it is being fixed: `rollback` (no ROLLBACK,
 *   ROLLBACK TO or OR ROLLBACK), `affinity-seek` (IN subqueries only over
 *   columns of one affinity), `replace-default` (no DEFAULT on NOT NULL
 *   columns), `null-keys` (PRIMARY KEY columns NOT NULL), `explicit-collate`
 *   (no `c COLLATE x = v` in WHERE clauses).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <sqlite3.h>
#include <string.h>

#include <qstore.h>

#include "qstore-test-util.h"

#define DEFAULT_STATEMENTS 3000
#define CHECK_EVERY        50
#define REOPEN_EVERY       400
#define MAX_TABLES         5
#define MAX_ROWS           60

static guint64 option_seed;
static gboolean option_seed_set;
static guint option_statements = DEFAULT_STATEMENTS;

/* sqlite3_mprintf(), whose %Q and %w quote literals and identifiers, into
 * memory g_free() takes. */
static char *
sql_printf (const char *format,
            ...)
{
  va_list args;
  char *text;
  char *copy;

  va_start (args, format);
  text = sqlite3_vmprintf (format, args);
  va_end (args);
  copy = g_strdup (text);
  sqlite3_free (text);
  return copy;
}

/* Outcomes */

typedef enum
{
  CLASS_OK,
  CLASS_CONSTRAINT,
  CLASS_MISMATCH,
  CLASS_NO_TABLE,
  CLASS_SYNTAX,
  CLASS_REFUSED,
  CLASS_OTHER,
} ErrorClass;

static const char *const class_names[] = {
  "success", "constraint", "datatype mismatch", "no such table", "syntax error",
  "refused by qstore", "other error",
};

typedef struct
{
  ErrorClass  klass;
  char       *message;
  GPtrArray  *rows;        /* char *, each row in the canonical form below */
  guint       n_columns;
  gboolean    is_write;
  gint64      changes;     /* after a write that succeeded */
  gint64      changes_fn;  /* what SELECT changes() says right after it */
  gint64      last_rowid;
} Outcome;

static void
outcome_init (Outcome *o)
{
  memset (o, 0, sizeof *o);
  o->rows = g_ptr_array_new_with_free_func (g_free);
}

static void
outcome_clear (Outcome *o)
{
  g_clear_pointer (&o->message, g_free);
  g_clear_pointer (&o->rows, g_ptr_array_unref);
}

static gboolean
is_write_statement (const char *sql)
{
  while (g_ascii_isspace (*sql))
    sql++;
  return g_ascii_strncasecmp (sql, "INSERT", 6) == 0 ||
         g_ascii_strncasecmp (sql, "REPLACE", 7) == 0 ||
         g_ascii_strncasecmp (sql, "UPDATE", 6) == 0 ||
         g_ascii_strncasecmp (sql, "DELETE", 6) == 0;
}

static gboolean
is_ddl_statement (const char *sql)
{
  while (g_ascii_isspace (*sql))
    sql++;
  return g_ascii_strncasecmp (sql, "CREATE", 6) == 0 ||
         g_ascii_strncasecmp (sql, "DROP", 4) == 0 ||
         g_ascii_strncasecmp (sql, "ALTER", 5) == 0;
}

static ErrorClass
class_for_message (const char *message)
{
  if (strstr (message, "constraint failed") != NULL)
    return CLASS_CONSTRAINT;
  if (strstr (message, "datatype mismatch") != NULL)
    return CLASS_MISMATCH;
  if (strstr (message, "no such table") != NULL)
    return CLASS_NO_TABLE;
  if (strstr (message, "syntax error") != NULL || strstr (message, "incomplete input") != NULL)
    return CLASS_SYNTAX;
  return CLASS_OTHER;
}

static ErrorClass
class_for_sqlite (int         rc,
                  const char *message)
{
  switch (rc & 0xff)
    {
    case SQLITE_CONSTRAINT:
      return CLASS_CONSTRAINT;
    case SQLITE_MISMATCH:
      return CLASS_MISMATCH;
    default:
      return class_for_message (message);
    }
}

static ErrorClass
class_for_error (const GError *error)
{
  if (error->domain == QSTORE_ERROR && error->code == QSTORE_ERROR_CONSTRAINT)
    return CLASS_CONSTRAINT;
  if (error->domain == QSTORE_ERROR && error->code == QSTORE_ERROR_UNSUPPORTED)
    return CLASS_REFUSED;
  return class_for_message (error->message);
}

/* Values print as SQL literals that keep the storage class apart:
 * 5, 5.0, '5', x'35', NULL. */
static void
append_real (GString *s,
             double   d)
{
  char buf[64];

  sqlite3_snprintf (sizeof buf, buf, "%!.17g", d);
  g_string_append (s, buf);
}

static void
append_text (GString    *s,
             const char *text,
             gsize       len)
{
  g_string_append_c (s, '\'');
  for (gsize i = 0; i < len; i++)
    {
      if (text[i] == '\'')
        g_string_append_c (s, '\'');
      g_string_append_c (s, text[i]);
    }
  g_string_append_c (s, '\'');
}

static void
append_blob (GString      *s,
             const guint8 *data,
             gsize         len)
{
  g_string_append (s, "x'");
  for (gsize i = 0; i < len; i++)
    g_string_append_printf (s, "%02X", data[i]);
  g_string_append_c (s, '\'');
}

static char *
row_from_stmt (sqlite3_stmt *stmt)
{
  GString *s = g_string_new ("(");
  int n = sqlite3_column_count (stmt);

  for (int i = 0; i < n; i++)
    {
      if (i > 0)
        g_string_append (s, ", ");
      switch (sqlite3_column_type (stmt, i))
        {
        case SQLITE_INTEGER:
          g_string_append_printf (s, "%" G_GINT64_FORMAT, (gint64) sqlite3_column_int64 (stmt, i));
          break;
        case SQLITE_FLOAT:
          append_real (s, sqlite3_column_double (stmt, i));
          break;
        case SQLITE_TEXT:
          append_text (s, (const char *) sqlite3_column_text (stmt, i),
                       sqlite3_column_bytes (stmt, i));
          break;
        case SQLITE_BLOB:
          append_blob (s, sqlite3_column_blob (stmt, i), sqlite3_column_bytes (stmt, i));
          break;
        default:
          g_string_append (s, "NULL");
          break;
        }
    }
  g_string_append_c (s, ')');
  return g_string_free (s, FALSE);
}

static char *
row_from_variant (GVariant *row)
{
  GString *s = g_string_new ("(");
  gsize n = g_variant_n_children (row);

  for (gsize i = 0; i < n; i++)
    {
      g_autoptr(GVariant) boxed = g_variant_get_child_value (row, i);
      g_autoptr(GVariant) value = g_variant_is_of_type (boxed, G_VARIANT_TYPE_VARIANT)
                                  ? g_variant_get_variant (boxed) : g_variant_ref (boxed);

      if (i > 0)
        g_string_append (s, ", ");
      if (g_variant_is_of_type (value, G_VARIANT_TYPE_INT64))
        g_string_append_printf (s, "%" G_GINT64_FORMAT, g_variant_get_int64 (value));
      else if (g_variant_is_of_type (value, G_VARIANT_TYPE_DOUBLE))
        append_real (s, g_variant_get_double (value));
      else if (g_variant_is_of_type (value, G_VARIANT_TYPE_STRING))
        {
          gsize len;
          const char *text = g_variant_get_string (value, &len);

          append_text (s, text, len);
        }
      else if (g_variant_is_of_type (value, G_VARIANT_TYPE_BYTESTRING))
        {
          gsize len;
          const guint8 *data = g_variant_get_fixed_array (value, &len, 1);

          append_blob (s, data, len);
        }
      else if (qstore_value_is_null (value))
        g_string_append (s, "NULL");
      else
        {
          g_autofree char *printed = g_variant_print (value, TRUE);

          g_string_append_printf (s, "<unexpected %s>", printed);
        }
    }
  g_string_append_c (s, ')');
  return g_string_free (s, FALSE);
}

/* Runs one statement on the plain SQLite database. */
static void
ref_run (sqlite3    *ref,
         const char *sql,
         Outcome    *out)
{
  sqlite3_stmt *stmt = NULL;
  int rc;

  out->is_write = is_write_statement (sql);
  rc = sqlite3_prepare_v2 (ref, sql, -1, &stmt, NULL);
  if (rc != SQLITE_OK)
    {
      out->message = g_strdup (sqlite3_errmsg (ref));
      out->klass = class_for_sqlite (sqlite3_extended_errcode (ref), out->message);
      return;
    }
  if (stmt == NULL)
    return;

  out->n_columns = sqlite3_column_count (stmt);
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    g_ptr_array_add (out->rows, row_from_stmt (stmt));
  if (rc != SQLITE_DONE)
    {
      out->message = g_strdup (sqlite3_errmsg (ref));
      out->klass = class_for_sqlite (rc, out->message);
    }
  sqlite3_finalize (stmt);

  if (out->klass == CLASS_OK && out->is_write)
    {
      out->changes = sqlite3_changes64 (ref);
      out->last_rowid = sqlite3_last_insert_rowid (ref);
      if (sqlite3_prepare_v2 (ref, "SELECT changes()", -1, &stmt, NULL) == SQLITE_OK &&
          sqlite3_step (stmt) == SQLITE_ROW)
        out->changes_fn = sqlite3_column_int64 (stmt, 0);
      sqlite3_finalize (stmt);
    }
}

/* Runs one statement on qstore. */
static void
qstore_run (QStoreDatabase *db,
            const char     *sql,
            Outcome        *out)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(QStoreResult) result = NULL;
  guint n_rows;

  out->is_write = is_write_statement (sql);
  result = qstore_database_query (db, sql, NULL, &error);
  if (result == NULL)
    {
      out->message = g_strdup (error->message);
      out->klass = class_for_error (error);
      return;
    }

  out->n_columns = qstore_result_get_n_columns (result);
  n_rows = qstore_result_get_n_rows (result);
  for (guint i = 0; i < n_rows; i++)
    g_ptr_array_add (out->rows, row_from_variant (qstore_result_get_row (result, i)));

  if (out->is_write)
    {
      g_autoptr(QStoreResult) changes = NULL;

      out->changes = qstore_result_get_changes (result);
      out->last_rowid = qstore_result_get_last_insert_rowid (result);
      changes = qstore_database_query (db, "SELECT changes()", NULL, &error);
      if (changes != NULL && qstore_result_get_n_rows (changes) == 1)
        {
          g_autoptr(GVariant) value = qstore_result_get_value (changes, 0, 0);

          if (g_variant_is_of_type (value, G_VARIANT_TYPE_VARIANT))
            {
              g_autoptr(GVariant) inner = g_variant_get_variant (value);

              g_variant_unref (g_steal_pointer (&value));
              value = g_steal_pointer (&inner);
            }
          if (g_variant_is_of_type (value, G_VARIANT_TYPE_INT64))
            out->changes_fn = g_variant_get_int64 (value);
          else
            out->changes_fn = -1;
        }
      else
        out->changes_fn = -1;
    }
}

static int
compare_strings (gconstpointer a,
                 gconstpointer b)
{
  return strcmp (*(const char * const *) a, *(const char * const *) b);
}

static GPtrArray *
sorted_copy (GPtrArray *rows)
{
  GPtrArray *copy = g_ptr_array_new ();

  for (guint i = 0; i < rows->len; i++)
    g_ptr_array_add (copy, rows->pdata[i]);
  g_ptr_array_sort (copy, compare_strings);
  return copy;
}

static void
append_rows (GString    *s,
             const char *label,
             GPtrArray  *rows)
{
  g_string_append_printf (s, "\n  %s (%u row%s):", label, rows->len, rows->len == 1 ? "" : "s");
  for (guint i = 0; i < rows->len && i < 12; i++)
    g_string_append_printf (s, " %s", (const char *) rows->pdata[i]);
  if (rows->len > 12)
    g_string_append (s, " …");
}

/* Says how @q (qstore) differs from @r (SQLite), or returns NULL. The text
 * starts with a word naming the kind of difference. */
static char *
compare_outcomes (const Outcome *q,
                  const Outcome *r,
                  gboolean       ordered,
                  gboolean       compare_rowid)
{
  if (q->klass != r->klass)
    return g_strdup_printf ("error-class: qstore gave %s (%s), SQLite gave %s (%s)",
                            class_names[q->klass], q->message ? q->message : "-",
                            class_names[r->klass], r->message ? r->message : "-");
  if (q->klass != CLASS_OK)
    return NULL;

  if (q->n_columns != r->n_columns)
    return g_strdup_printf ("columns: qstore returned %u, SQLite %u", q->n_columns, r->n_columns);

  {
    g_autoptr(GPtrArray) qrows = ordered ? g_ptr_array_ref (q->rows) : sorted_copy (q->rows);
    g_autoptr(GPtrArray) rrows = ordered ? g_ptr_array_ref (r->rows) : sorted_copy (r->rows);
    gboolean same = qrows->len == rrows->len;

    for (guint i = 0; same && i < qrows->len; i++)
      same = strcmp (qrows->pdata[i], rrows->pdata[i]) == 0;
    if (!same)
      {
        GString *s = g_string_new (ordered ? "rows (ordered):" : "rows (as a multiset):");

        append_rows (s, "qstore", qrows);
        append_rows (s, "SQLite", rrows);
        for (guint i = 0; i < MIN (qrows->len, rrows->len); i++)
          if (strcmp (qrows->pdata[i], rrows->pdata[i]) != 0)
            {
              g_string_append_printf (s, "\n  first difference at row %u: %s vs %s", i,
                                      (const char *) qrows->pdata[i],
                                      (const char *) rrows->pdata[i]);
              break;
            }
        return g_string_free (s, FALSE);
      }
  }

  if (r->is_write)
    {
      if (q->changes != r->changes || q->changes_fn != r->changes_fn)
        return g_strdup_printf ("changes: qstore reported %" G_GINT64_FORMAT " (changes() %"
                                G_GINT64_FORMAT "), SQLite %" G_GINT64_FORMAT,
                                q->changes, q->changes_fn, r->changes);
      if (compare_rowid && r->changes > 0 && q->last_rowid != r->last_rowid)
        return g_strdup_printf ("last_insert_rowid: qstore %" G_GINT64_FORMAT ", SQLite %"
                                G_GINT64_FORMAT, q->last_rowid, r->last_rowid);
    }
  return NULL;
}

/* The statements run */

typedef enum
{
  ENTRY_SQL,
  ENTRY_CHECK,   /* compare every table in full */
  ENTRY_REOPEN,  /* close the qstore database and open it again */
} EntryKind;

enum
{
  ENTRY_ORDERED = 1 << 0,  /* the rows come in an order the statement fixes */
  ENTRY_ROWID   = 1 << 1,  /* an insert into a table keyed by its rowid */
};

typedef struct
{
  EntryKind  kind;
  guint      flags;
  char      *sql;
} Entry;

static Entry *
entry_new (EntryKind   kind,
           guint       flags,
           const char *sql)
{
  Entry *e = g_new0 (Entry, 1);

  e->kind = kind;
  e->flags = flags;
  e->sql = g_strdup (sql);
  return e;
}

static void
entry_free (Entry *e)
{
  g_free (e->sql);
  g_free (e);
}

static void
append_entry (GString     *s,
              const Entry *e)
{
  switch (e->kind)
    {
    case ENTRY_CHECK:
      g_string_append (s, "-- check");
      break;
    case ENTRY_REOPEN:
      g_string_append (s, "-- reopen");
      break;
    case ENTRY_SQL:
      g_string_append_printf (s, "%s;", e->sql);
      if (e->flags & ENTRY_ORDERED)
        g_string_append (s, " -- ordered");
      if (e->flags & ENTRY_ROWID)
        g_string_append (s, " -- rowid");
      break;
    default:
      g_assert_not_reached ();
    }
}

static GPtrArray *
parse_entries (const char *text)
{
  GPtrArray *entries = g_ptr_array_new_with_free_func ((GDestroyNotify) entry_free);
  g_auto(GStrv) lines = g_strsplit (text, "\n", -1);

  for (guint i = 0; lines[i] != NULL; i++)
    {
      char *line = g_strstrip (lines[i]);
      char *comment;
      guint flags = 0;

      if (*line == '\0')
        continue;
      if (g_str_has_prefix (line, "-- check"))
        {
          g_ptr_array_add (entries, entry_new (ENTRY_CHECK, 0, NULL));
          continue;
        }
      if (g_str_has_prefix (line, "-- reopen"))
        {
          g_ptr_array_add (entries, entry_new (ENTRY_REOPEN, 0, NULL));
          continue;
        }
      if (g_str_has_prefix (line, "--"))
        continue;

      comment = strstr (line, "; --");
      if (comment != NULL)
        {
          if (strstr (comment, "ordered") != NULL)
            flags |= ENTRY_ORDERED;
          if (strstr (comment, "rowid") != NULL)
            flags |= ENTRY_ROWID;
          comment[1] = '\0';
        }
      g_strchomp (line);
      if (g_str_has_suffix (line, ";"))
        line[strlen (line) - 1] = '\0';
      g_ptr_array_add (entries, entry_new (ENTRY_SQL, flags, line));
    }
  return entries;
}

/* Both databases */

typedef struct
{
  char           *spec;
  char           *dir;
  char           *uri;
  QStoreDatabase *db;
  sqlite3        *ref;
} Runner;

static void
runner_open (Runner     *r,
             const char *spec)
{
  memset (r, 0, sizeof *r);
  r->spec = g_strdup (spec);
  r->dir = test_make_tmp_dir ("qstore-diff-XXXXXX");
  r->uri = test_spec_uri (spec, r->dir, "store");
  r->db = test_open_database (r->uri, QSTORE_OPEN_NONE);
  g_assert_cmpint (sqlite3_open (":memory:", &r->ref), ==, SQLITE_OK);
  /* SQLite 3.40's automatic indexes compare under the indexed column's
   * collation, not the comparison's: `x.a = y.d` with x.a COLLATE RTRIM
   * misses the rows an automatic index on y.d finds under BINARY. Plain
   * SQLite without them is the reference. */
  g_assert_cmpint (sqlite3_exec (r->ref, "PRAGMA automatic_index = OFF", NULL, NULL, NULL),
                   ==, SQLITE_OK);
}

static void
runner_close (Runner *r)
{
  if (r->db != NULL)
    {
      g_autoptr(GError) error = NULL;

      /* A database left mid-transaction by a mismatch still closes. */
      qstore_database_close (r->db, &error);
      g_clear_object (&r->db);
    }
  g_clear_pointer (&r->ref, sqlite3_close);
  test_remove_tree (r->dir);
  g_clear_pointer (&r->dir, g_free);
  g_clear_pointer (&r->uri, g_free);
  g_clear_pointer (&r->spec, g_free);
}

static char *
runner_reopen (Runner *r)
{
  g_autoptr(GError) error = NULL;

  /* A memory store would come back empty (a replay on another provider). */
  if (!test_spec_persistent (r->spec))
    return NULL;

  if (!qstore_database_close (r->db, &error))
    return g_strdup_printf ("reopen: closing failed: %s", error->message);
  g_clear_object (&r->db);
  r->db = qstore_database_open (r->uri, QSTORE_OPEN_NONE, &error);
  if (r->db == NULL)
    return g_strdup_printf ("reopen: opening again failed: %s", error->message);
  return NULL;
}

/* Whether SQLite's rowid of @table is the table's key (no PRIMARY KEY,
 * or an INTEGER PRIMARY KEY), so qstore's rowid is the same number. */
static gboolean
ref_table_keyed_by_rowid (sqlite3    *ref,
                          const char *table)
{
  g_autofree char *sql =
    sql_printf ("SELECT "
                "(SELECT count(*) FROM pragma_table_info(%Q) WHERE pk > 0), "
                "(SELECT upper(type) FROM pragma_table_info(%Q) WHERE pk > 0), "
                "(SELECT count(*) FROM pragma_index_list(%Q) WHERE origin = 'pk')",
                table, table, table);
  sqlite3_stmt *stmt = NULL;
  gboolean keyed = FALSE;

  if (sqlite3_prepare_v2 (ref, sql, -1, &stmt, NULL) == SQLITE_OK &&
      sqlite3_step (stmt) == SQLITE_ROW)
    {
      int n_pk = sqlite3_column_int (stmt, 0);
      const char *type = (const char *) sqlite3_column_text (stmt, 1);
      int n_pk_index = sqlite3_column_int (stmt, 2);

      keyed = n_pk == 0 ||
              (n_pk == 1 && n_pk_index == 0 && g_strcmp0 (type, "INTEGER") == 0);
    }
  sqlite3_finalize (stmt);
  return keyed;
}

static GPtrArray *
ref_table_names (sqlite3 *ref)
{
  GPtrArray *names = g_ptr_array_new_with_free_func (g_free);
  sqlite3_stmt *stmt = NULL;

  if (sqlite3_prepare_v2 (ref, "SELECT lower(name) FROM sqlite_master WHERE type = 'table' "
                          "AND name NOT LIKE 'sqlite%' ORDER BY 1", -1, &stmt, NULL) == SQLITE_OK)
    while (sqlite3_step (stmt) == SQLITE_ROW)
      g_ptr_array_add (names, g_strdup ((const char *) sqlite3_column_text (stmt, 0)));
  sqlite3_finalize (stmt);
  return names;
}

static char *
runner_check (Runner *r)
{
  g_autoptr(GPtrArray) names = ref_table_names (r->ref);
  g_auto(GStrv) listed = qstore_database_list_tables (r->db);
  g_autoptr(GPtrArray) qnames = g_ptr_array_new_with_free_func (g_free);
  gboolean same;

  for (guint i = 0; listed[i] != NULL; i++)
    g_ptr_array_add (qnames, g_ascii_strdown (listed[i], -1));
  g_ptr_array_sort (qnames, compare_strings);
  same = qnames->len == names->len;
  for (guint i = 0; same && i < names->len; i++)
    same = g_str_equal (qnames->pdata[i], names->pdata[i]);
  if (!same)
    {
      GString *s = g_string_new ("tables: qstore lists");

      for (guint i = 0; i < qnames->len; i++)
        g_string_append_printf (s, " %s", (const char *) qnames->pdata[i]);
      g_string_append (s, "; SQLite has");
      for (guint i = 0; i < names->len; i++)
        g_string_append_printf (s, " %s", (const char *) names->pdata[i]);
      return g_string_free (s, FALSE);
    }

  for (guint i = 0; i < names->len; i++)
    {
      const char *name = names->pdata[i];
      g_autofree char *sql = sql_printf ("SELECT %s* FROM \"%w\"",
                                              ref_table_keyed_by_rowid (r->ref, name)
                                              ? "rowid, " : "", name);
      Outcome q, o;
      char *mismatch;

      outcome_init (&q);
      outcome_init (&o);
      qstore_run (r->db, sql, &q);
      ref_run (r->ref, sql, &o);
      mismatch = compare_outcomes (&q, &o, FALSE, FALSE);
      outcome_clear (&q);
      outcome_clear (&o);
      if (mismatch != NULL)
        {
          char *described = g_strdup_printf ("%s\n  (full contents of %s: %s)", mismatch,
                                             name, sql);

          g_free (mismatch);
          return described;
        }
    }
  return NULL;
}

/* Runs @e on both; @ref_out (initialised by the caller) gets SQLite's
 * outcome. Returns how they differ, or NULL. */
static char *
runner_run (Runner  *r,
            Entry   *e,
            Outcome *ref_out)
{
  Outcome q;
  char *mismatch;

  switch (e->kind)
    {
    case ENTRY_CHECK:
      return runner_check (r);
    case ENTRY_REOPEN:
      return runner_reopen (r);
    case ENTRY_SQL:
      break;
    default:
      g_assert_not_reached ();
    }

  outcome_init (&q);
  qstore_run (r->db, e->sql, &q);
  ref_run (r->ref, e->sql, ref_out);
  mismatch = compare_outcomes (&q, ref_out, (e->flags & ENTRY_ORDERED) != 0,
                               (e->flags & ENTRY_ROWID) != 0);
  outcome_clear (&q);
  return mismatch;
}

/* The model the generator keeps of the schema */

typedef enum
{
  PK_ROWID,      /* no PRIMARY KEY */
  PK_IPK,        /* an INTEGER PRIMARY KEY: the rowid */
  PK_SINGLE,     /* any other one-column PRIMARY KEY */
  PK_COMPOSITE,
} PkKind;

typedef struct
{
  char       *name;
  const char *type;      /* as declared; "" for none */
  const char *collate;   /* NULL when none is declared */
  gboolean    not_null;
} Column;

typedef struct
{
  char       *name;        /* NULL for a UNIQUE constraint or the PRIMARY KEY */
  gboolean    unique;
  guint       n_cols;
  guint       cols[3];
  const char *collate[3];  /* the clause's, else the column's; NULL for BINARY */
  gboolean    desc[3];
  int         where_col;   /* the column a partial index's predicate reads, or -1 */
} Index;

typedef struct
{
  char      *name;
  GPtrArray *columns;   /* Column * */
  PkKind     pk_kind;
  Index      pk;        /* n_cols = 0 for PK_ROWID */
  GPtrArray *indexes;   /* Index *, explicit and from UNIQUE constraints */
  gboolean   without_rowid;
} Table;

static void
column_free (Column *c)
{
  g_free (c->name);
  g_free (c);
}

static void
index_free (Index *ix)
{
  g_free (ix->name);
  g_free (ix);
}

static Table *
table_new (const char *name)
{
  Table *t = g_new0 (Table, 1);

  t->name = g_strdup (name);
  t->columns = g_ptr_array_new_with_free_func ((GDestroyNotify) column_free);
  t->indexes = g_ptr_array_new_with_free_func ((GDestroyNotify) index_free);
  return t;
}

static void
table_free (Table *t)
{
  g_free (t->name);
  g_ptr_array_unref (t->columns);
  g_ptr_array_unref (t->indexes);
  g_free (t);
}

static Column *
table_column (Table *t,
              guint  i)
{
  return g_ptr_array_index (t->columns, i);
}

static gboolean
table_keyed_by_rowid (Table *t)
{
  return t->pk_kind == PK_ROWID || t->pk_kind == PK_IPK;
}

typedef enum
{
  AFF_INTEGER,
  AFF_TEXT,
  AFF_BLOB,
  AFF_REAL,
  AFF_NUMERIC,
} Affinity;

static Affinity
column_affinity (Column *c)
{
  g_autofree char *up = g_ascii_strup (c->type, -1);

  if (strstr (up, "INT") != NULL)
    return AFF_INTEGER;
  if (strstr (up, "CHAR") != NULL || strstr (up, "CLOB") != NULL || strstr (up, "TEXT") != NULL)
    return AFF_TEXT;
  if (strstr (up, "BLOB") != NULL || *up == '\0')
    return AFF_BLOB;
  if (strstr (up, "REAL") != NULL || strstr (up, "FLOA") != NULL || strstr (up, "DOUB") != NULL)
    return AFF_REAL;
  return AFF_NUMERIC;
}

static gboolean
collation_is_binary (const char *collate)
{
  return collate == NULL || g_ascii_strcasecmp (collate, "BINARY") == 0;
}

/* Whether a column or PK/UNIQUE part holds values that compare equal only
 * when they are identical (so that a GROUP BY or min() over it picks no
 * value at random): a numeric affinity never stores 1 beside 1.0, TEXT
 * stores no numbers, and BINARY tells texts apart. */
static gboolean
column_values_distinct (Column *c)
{
  Affinity a = column_affinity (c);

  return a != AFF_BLOB && collation_is_binary (c->collate);
}

/* Generator */

typedef enum
{
  PENDING_NONE,
  PENDING_CREATE_TABLE,
  PENDING_DROP_TABLE,
  PENDING_CREATE_INDEX,
  PENDING_DROP_INDEX,
  PENDING_RENAME_TABLE,
  PENDING_SAVEPOINT,
  PENDING_RELEASE,
  PENDING_ROLLBACK_TO,
} PendingKind;

typedef struct
{
  GRand      *rand;
  sqlite3    *ref;
  gboolean    persistent;
  GStrv       skip;        /* shapes of statement not to write */
  gboolean    no_wrong_ids;
  Column     *avoid;       /* a column predicates must not read */
  guint       in_or;       /* how many ORs the predicate being written is under */
  GPtrArray  *tables;      /* Table * */
  guint       next_table;
  guint       next_index;
  guint       next_savepoint;
  GPtrArray  *savepoints;  /* char *, the innermost last */
  guint       since_check;
  guint       since_reopen;

  PendingKind pending;
  Table      *pending_table;
  Index      *pending_index;
  char       *pending_name;
  char       *pending_name2;
} Gen;

/* Whether QSTORE_DIFF_SKIP names @shape: a way to look past a known
 * mismatch for others while it is being fixed. */
static gboolean
gen_skips (Gen        *g,
           const char *shape)
{
  return g_strv_contains ((const char * const *) g->skip, shape);
}

static gboolean
chance (Gen    *g,
        double  p)
{
  return g_rand_double (g->rand) < p;
}

static guint
pick (Gen   *g,
      guint  n)
{
  g_assert (n > 0);
  return g_rand_int_range (g->rand, 0, n);
}

#define PICK(g, array) ((array)[pick ((g), G_N_ELEMENTS (array))])

/* Appends @tmpl with each `@` replaced by @arg. */
static void
append_template (GString    *s,
                 const char *tmpl,
                 const char *arg)
{
  for (const char *p = tmpl; *p != '\0'; p++)
    {
      if (*p == '@')
        g_string_append (s, arg);
      else
        g_string_append_c (s, *p);
    }
}

/* A small domain, so that keys collide: integers, reals equal to some of
 * them, texts that look like numbers (with spaces, exponents, signs),
 * mixed-case texts with and without trailing spaces, blobs. */
static const char *const int_values[] = { "0", "1", "2", "3", "5", "7", "-1" };
static const char *const real_values[] = { "0.5", "1.0", "2.5", "3.0", "5.0", "-1.0" };
static const char *const text_values[] = {
  "'5'", "'5.0'", "' 5'", "'5 '", "'2'", "'1e1'", "'+3'", "'05'", "'a'", "'A'", "'a '",
  "'b'", "'B'", "'B  '", "'ab'", "'AB'", "'Ab '", "''", "'x'",
};
static const char *const blob_values[] = { "x''", "x'01'", "x'61'", "x'6162'" };
static const char *const collations[] = { "NOCASE", "RTRIM", "BINARY" };

static const char *
gen_literal (Gen *g)
{
  double r = g_rand_double (g->rand);

  if (r < 0.30)
    return PICK (g, int_values);
  if (r < 0.45)
    return PICK (g, real_values);
  if (r < 0.80)
    return PICK (g, text_values);
  if (r < 0.88)
    return PICK (g, blob_values);
  return "NULL";
}

/* A literal that suits @c more often than not. */
static const char *
gen_value_for (Gen    *g,
               Table  *t,
               Column *c)
{
  if (t->pk_kind == PK_IPK && c == table_column (t, t->pk.cols[0]))
    {
      static const char *const ids[] = {
        "1", "2", "3", "4", "5", "6", "8", "9", "NULL", "NULL", "NULL", "'4'", "3.0", "' 7'",
      };
      static const char *const wrong[] = { "'x'", "2.5", "x'01'" };

      return !g->no_wrong_ids && chance (g, 0.03) ? PICK (g, wrong) : PICK (g, ids);
    }

  /* Mostly no NULL where it can only fail. */
  if (c->not_null && chance (g, 0.8))
    {
      const char *v;

      while (g_str_equal (v = gen_literal (g), "NULL"))
        ;
      return v;
    }

  if (chance (g, 0.5))
    return gen_literal (g);

  switch (column_affinity (c))
    {
    case AFF_INTEGER:
    case AFF_NUMERIC:
      return chance (g, 0.8) ? PICK (g, int_values) : PICK (g, real_values);
    case AFF_REAL:
      return PICK (g, real_values);
    case AFF_TEXT:
      return PICK (g, text_values);
    case AFF_BLOB:
    default:
      return gen_literal (g);
    }
}

static Table *
gen_table (Gen *g)
{
  return g->tables->len > 0 ? g_ptr_array_index (g->tables, pick (g, g->tables->len)) : NULL;
}

/* A table's name as a statement writes it: now and then in other case,
 * which must make no difference. */
static const char *
table_ref (Gen   *g,
           Table *t)
{
  static char buf[64];

  if (chance (g, 0.05))
    {
      g_autofree char *up = g_ascii_strup (t->name, -1);

      g_strlcpy (buf, up, sizeof buf);
      return buf;
    }
  return t->name;
}

static void
append_column_ref (Gen        *g,
                   GString    *s,
                   const char *qual,
                   Column     *c)
{
  if (qual != NULL)
    g_string_append_printf (s, "%s.", qual);
  if (chance (g, 0.03))
    {
      g_autofree char *up = g_ascii_strup (c->name, -1);

      g_string_append (s, up);
    }
  else
    g_string_append (s, c->name);
}

/* A column a seek could use: a key part or the first column of an index. */
static Column *
gen_seek_column (Gen   *g,
                 Table *t)
{
  GPtrArray *candidates = g_ptr_array_new ();
  Column *c;

  for (guint i = 0; i < t->pk.n_cols; i++)
    g_ptr_array_add (candidates, table_column (t, t->pk.cols[i]));
  for (guint i = 0; i < t->indexes->len; i++)
    {
      Index *ix = g_ptr_array_index (t->indexes, i);

      g_ptr_array_add (candidates, table_column (t, ix->cols[0]));
      if (ix->n_cols > 1)
        g_ptr_array_add (candidates, table_column (t, ix->cols[1]));
    }
  do
    {
      if (candidates->len == 0 || chance (g, 0.3))
        c = table_column (t, pick (g, t->columns->len));
      else
        c = g_ptr_array_index (candidates, pick (g, candidates->len));
    }
  while (c == g->avoid && t->columns->len > 1);
  g_ptr_array_unref (candidates);
  return c;
}

static void
gen_predicate (Gen        *g,
               GString    *s,
               Table      *t,
               const char *qual,
               guint       depth)
{
  Column *c;
  double r = g_rand_double (g->rand);

  if (depth < 2 && r < 0.15)
    {
      static const char *const joiners[] = { " AND ", " AND ", " OR " };
      const char *joiner = PICK (g, joiners);
      g_autoptr(GString) left = g_string_new (NULL);
      gboolean is_or = g_str_equal (joiner, " OR ");

      g->in_or += is_or;
      gen_predicate (g, left, t, qual, depth + 1);
      g_string_append_printf (s, "(%s%s", left->str, joiner);
      gen_predicate (g, s, t, qual, depth + 1);
      g_string_append_c (s, ')');
      g->in_or -= is_or;
      return;
    }
  if (depth < 2 && r < 0.18)
    {
      g_string_append (s, "NOT (");
      gen_predicate (g, s, t, qual, depth + 1);
      g_string_append_c (s, ')');
      return;
    }

  /* A seek on the composite key: equality on its first part, then a
   * range or equality on the second. */
  if (t->pk.n_cols > 1 && chance (g, 0.15) &&
      g->avoid != table_column (t, t->pk.cols[0]) && g->avoid != table_column (t, t->pk.cols[1]))
    {
      static const char *const ops[] = { " = ", " > ", " >= ", " < ", " <= " };

      Column *first = table_column (t, t->pk.cols[0]);

      append_column_ref (g, s, qual, first);
      g_string_append_printf (s, " = %s AND ", gen_value_for (g, t, first));
      append_column_ref (g, s, qual, table_column (t, t->pk.cols[1]));
      g_string_append_printf (s, "%s%s", PICK (g, ops),
                              gen_value_for (g, t, table_column (t, t->pk.cols[1])));
      return;
    }

  if (table_keyed_by_rowid (t) && chance (g, 0.1) &&
      !(t->pk_kind == PK_IPK && g->avoid == table_column (t, t->pk.cols[0])))
    {
      static const char *const forms[] = {
        "rowid = @", "rowid > @", "rowid <= @", "rowid BETWEEN @ AND @ + 3",
      };
      g_autofree char *n = g_strdup_printf ("%d", g_rand_int_range (g->rand, -1, 12));

      if (qual != NULL)
        g_string_append_printf (s, "%s.", qual);
      append_template (s, PICK (g, forms), n);
      return;
    }

  c = gen_seek_column (g, t);
  append_column_ref (g, s, qual, c);
  switch (pick (g, 12))
    {
    case 0:
    case 1:
    case 2:
      g_string_append_printf (s, " = %s", gen_value_for (g, t, c));
      break;
    case 3:
      g_string_append (s, chance (g, 0.5) ? " IS NULL" : " IS NOT NULL");
      break;
    case 4:
      {
        static const char *const ops[] = { " > ", " >= ", " < ", " <= " };

        g_string_append_printf (s, "%s%s", PICK (g, ops), gen_value_for (g, t, c));
      }
      break;
    case 5:
      g_string_append_printf (s, " BETWEEN %s AND %s", gen_value_for (g, t, c),
                              gen_value_for (g, t, c));
      break;
    case 6:
      g_string_append_printf (s, " > %s AND ", gen_value_for (g, t, c));
      append_column_ref (g, s, qual, c);
      g_string_append_printf (s, " < %s", gen_value_for (g, t, c));
      break;
    case 7:
      g_string_append_printf (s, " IN (%s, %s, %s)", gen_value_for (g, t, c),
                              gen_value_for (g, t, c), gen_value_for (g, t, c));
      break;
    case 8:
      /* SQLite 3.40 turns `c = 'x' OR c COLLATE RTRIM = 'y'` into an IN
       * over an index of c under c's collation, losing the RTRIM: no
       * explicit collation under OR. */
      if (g->in_or > 0 || gen_skips (g, "explicit-collate"))
        g_string_append_printf (s, " = %s", gen_value_for (g, t, c));
      else
        g_string_append_printf (s, " COLLATE %s = %s", PICK (g, collations),
                                gen_value_for (g, t, c));
      break;
    case 9:
      g_string_append_printf (s, " != %s", gen_value_for (g, t, c));
      break;
    case 10:
      g_string_append_printf (s, " IS %s", gen_value_for (g, t, c));
      break;
    default:
      g_string_append (s, chance (g, 0.5) ? " LIKE 'a%'" : " GLOB '*b*'");
      break;
    }
}

static void
gen_where (Gen        *g,
           GString    *s,
           Table      *t,
           const char *qual,
           double      p)
{
  if (chance (g, p))
    {
      g_string_append (s, " WHERE ");
      gen_predicate (g, s, t, qual, 0);
    }
}

/* Whether ordering by the PRIMARY KEY's columns, each under its column's
 * collation, puts rows in one order only. */
static gboolean
pk_order_is_total (Table *t)
{
  if (table_keyed_by_rowid (t))
    return TRUE;
  for (guint i = 0; i < t->pk.n_cols; i++)
    {
      Column *c = table_column (t, t->pk.cols[i]);

      /* SQLite lets a PRIMARY KEY of a rowid table hold several NULLs. */
      if (!c->not_null && !t->without_rowid)
        return FALSE;
      if (!collation_is_binary (c->collate) &&
          (t->pk.collate[i] == NULL || g_ascii_strcasecmp (c->collate, t->pk.collate[i]) != 0))
        return FALSE;
    }
  return TRUE;
}

static void
append_pk_order (Gen        *g,
                 GString    *s,
                 Table      *t,
                 const char *qual,
                 gboolean    reverse)
{
  if (table_keyed_by_rowid (t))
    {
      if (qual != NULL)
        g_string_append_printf (s, "%s.", qual);
      if (t->pk_kind == PK_IPK && chance (g, 0.6))
        g_string_append (s, table_column (t, t->pk.cols[0])->name);
      else
        g_string_append (s, "rowid");
      g_string_append (s, reverse ? " DESC" : "");
      return;
    }
  for (guint i = 0; i < t->pk.n_cols; i++)
    {
      gboolean desc = t->pk.desc[i] != reverse;

      if (i > 0)
        g_string_append (s, ", ");
      append_column_ref (g, s, qual, table_column (t, t->pk.cols[i]));
      if (desc)
        g_string_append (s, " DESC");
      else if (chance (g, 0.3))
        g_string_append (s, " ASC");
    }
}

/* Order terms that leave ties only between rows with the same value in
 * every column: BINARY tells texts apart, typeof() 1 from 1.0. */
static void
append_tiebreak (GString    *s,
                 Table      *t,
                 const char *qual)
{
  for (guint i = 0; i < t->columns->len; i++)
    {
      Column *c = table_column (t, i);
      const char *q = qual != NULL ? qual : "";
      const char *dot = qual != NULL ? "." : "";

      if (i > 0)
        g_string_append (s, ", ");
      g_string_append_printf (s, "%s%s%s COLLATE BINARY, typeof(%s%s%s)", q, dot, c->name, q,
                              dot, c->name);
    }
}

/* Appends an ORDER BY that fixes the order of the rows of @t entirely
 * (rows alike in every column may tie: nothing tells them apart). */
static void
append_total_order (Gen        *g,
                    GString    *s,
                    Table      *t,
                    const char *qual)
{
  g_string_append (s, " ORDER BY ");
  if (pk_order_is_total (t))
    append_pk_order (g, s, t, qual, chance (g, 0.4));
  else
    append_tiebreak (s, t, qual);
}

static void
append_select_list (Gen        *g,
                    GString    *s,
                    Table      *t,
                    const char *qual)
{
  guint n;

  if (chance (g, 0.35))
    {
      const char *q = qual != NULL ? qual : "";
      const char *dot = qual != NULL ? "." : "";

      if (table_keyed_by_rowid (t) && chance (g, 0.3))
        g_string_append_printf (s, "%s%srowid, ", q, dot);
      g_string_append_printf (s, "%s%s*", q, dot);
      return;
    }
  n = 1 + pick (g, t->columns->len);
  for (guint i = 0; i < n; i++)
    {
      Column *c = table_column (t, pick (g, t->columns->len));

      if (i > 0)
        g_string_append (s, ", ");
      switch (pick (g, 10))
        {
        case 0:
          g_string_append (s, "typeof(");
          append_column_ref (g, s, qual, c);
          g_string_append (s, ")");
          break;
        case 1:
          append_column_ref (g, s, qual, c);
          g_string_append (s, " + 0");
          break;
        case 2:
          g_string_append (s, "quote(");
          append_column_ref (g, s, qual, c);
          g_string_append (s, ")");
          break;
        default:
          append_column_ref (g, s, qual, c);
          break;
        }
    }
}

static Entry *
gen_select_simple (Gen   *g,
                   Table *t)
{
  g_autoptr(GString) s = g_string_new ("SELECT ");
  guint flags = 0;
  gboolean total = FALSE;
  double r;

  append_select_list (g, s, t, NULL);
  g_string_append_printf (s, " FROM %s", table_ref (g, t));
  gen_where (g, s, t, NULL, 0.8);

  r = g_rand_double (g->rand);
  if (r < 0.25)
    {
      /* No order: compared as a multiset. */
    }
  else if (r < 0.55)
    {
      g_string_append (s, " ORDER BY ");
      append_pk_order (g, s, t, NULL, chance (g, 0.4));
      total = pk_order_is_total (t);
      if (!total)
        {
          g_string_append (s, ", ");
          append_tiebreak (s, t, NULL);
          total = TRUE;
        }
    }
  else if (r < 0.8 && t->indexes->len > 0)
    {
      /* In an index's order (or its reverse), so that the index can give
       * the order, then the key. */
      Index *ix = g_ptr_array_index (t->indexes, pick (g, t->indexes->len));
      gboolean reverse = chance (g, 0.4);

      g_string_append (s, " ORDER BY ");
      for (guint i = 0; i < ix->n_cols; i++)
        {
          g_string_append_printf (s, "%s", table_column (t, ix->cols[i])->name);
          if (ix->collate[i] != NULL && chance (g, 0.7))
            g_string_append_printf (s, " COLLATE %s", ix->collate[i]);
          g_string_append (s, ix->desc[i] != reverse ? " DESC, " : ", ");
        }
      append_pk_order (g, s, t, NULL, reverse);
      if (!pk_order_is_total (t))
        {
          g_string_append (s, ", ");
          append_tiebreak (s, t, NULL);
        }
      total = TRUE;
    }
  else
    {
      Column *c = table_column (t, pick (g, t->columns->len));

      g_string_append_printf (s, " ORDER BY %s%s, ", c->name, chance (g, 0.5) ? " DESC" : "");
      if (table_keyed_by_rowid (t))
        g_string_append (s, "rowid");
      else
        append_tiebreak (s, t, NULL);
      total = TRUE;
    }

  if (total)
    {
      flags |= ENTRY_ORDERED;
      if (chance (g, 0.4))
        {
          g_string_append_printf (s, " LIMIT %u", pick (g, 6));
          if (chance (g, 0.5))
            g_string_append_printf (s, " OFFSET %u", pick (g, 4));
        }
    }
  return entry_new (ENTRY_SQL, flags, s->str);
}

static Entry *
gen_select_aggregate (Gen   *g,
                      Table *t)
{
  g_autoptr(GString) s = g_string_new ("SELECT ");
  Column *key = chance (g, 0.7) ? table_column (t, pick (g, t->columns->len)) : NULL;
  Column *m = table_column (t, pick (g, t->columns->len));
  Column *n = table_column (t, pick (g, t->columns->len));

  if (key != NULL)
    {
      /* The group's value of the key is printed only where it cannot be
       * any of several values that compare equal. */
      if (column_values_distinct (key))
        g_string_append_printf (s, "%s, ", key->name);
      else if (column_affinity (key) == AFF_TEXT &&
               g_ascii_strcasecmp (key->collate, "NOCASE") == 0)
        g_string_append_printf (s, "lower(%s), ", key->name);
      else if (column_affinity (key) == AFF_TEXT &&
               g_ascii_strcasecmp (key->collate, "RTRIM") == 0)
        g_string_append_printf (s, "rtrim(%s), ", key->name);
    }
  g_string_append_printf (s, "count(*), count(%s), sum(%s), total(%s), count(DISTINCT %s)",
                          m->name, n->name, n->name, m->name);
  /* min() and max() pick one of the values that tie, so only where none
   * do. */
  if (column_affinity (m) != AFF_BLOB)
    g_string_append_printf (s, ", min(%s COLLATE BINARY), max(%s COLLATE BINARY)", m->name,
                            m->name);
  g_string_append_printf (s, " FROM %s", table_ref (g, t));
  gen_where (g, s, t, NULL, 0.5);
  if (key != NULL)
    {
      g_string_append_printf (s, " GROUP BY %s", key->name);
      if (chance (g, 0.2))
        g_string_append (s, " HAVING count(*) > 1");
    }
  return entry_new (ENTRY_SQL, 0, s->str);
}

/* Two columns of the same declared type, one of each table, if any; a
 * third of the time any two, so that joins (on columns no index covers,
 * answered by an automatic index) mix affinities and collations. */
static gboolean
pick_join_columns (Gen    *g,
                   Table  *a,
                   Table  *b,
                   guint  *ca,
                   guint  *cb)
{
  guint tries = 0;
  gboolean any = chance (g, 0.33);

  while (tries++ < 20)
    {
      *ca = pick (g, a->columns->len);
      *cb = pick (g, b->columns->len);
      if (any ||
          g_ascii_strcasecmp (table_column (a, *ca)->type, table_column (b, *cb)->type) == 0)
        return TRUE;
    }
  return FALSE;
}

static Entry *
gen_select_join (Gen *g)
{
  g_autoptr(GString) s = g_string_new ("SELECT ");
  Table *a = gen_table (g);
  Table *b = gen_table (g);
  guint ca, cb;
  static const char *const joins[] = { "JOIN", "LEFT JOIN", "INNER JOIN", "CROSS JOIN" };

  if (!pick_join_columns (g, a, b, &ca, &cb))
    return gen_select_simple (g, a);

  append_select_list (g, s, a, "x");
  g_string_append (s, ", ");
  append_column_ref (g, s, "y", table_column (b, pick (g, b->columns->len)));
  g_string_append_printf (s, " FROM %s AS x %s %s AS y ON x.%s = y.%s", table_ref (g, a),
                          PICK (g, joins), table_ref (g, b), table_column (a, ca)->name,
                          table_column (b, cb)->name);
  /* SQLite 3.40 carries `y.d = 'v'` over `x.c = y.d` to `x.c = 'v'`
   * under the wrong collation when the tables are virtual (it does not for
   * ordinary ones): qstore tables share that, so the WHERE leaves the join
   * columns alone. */
  if (chance (g, 0.6))
    {
      g_string_append (s, " WHERE ");
      if (chance (g, 0.5))
        {
          g->avoid = table_column (a, ca);
          gen_predicate (g, s, a, "x", 1);
        }
      else
        {
          g->avoid = table_column (b, cb);
          gen_predicate (g, s, b, "y", 1);
        }
      g->avoid = NULL;
    }
  return entry_new (ENTRY_SQL, 0, s->str);
}

static Entry *
gen_select_subquery (Gen *g)
{
  g_autoptr(GString) s = g_string_new ("SELECT ");
  Table *a = gen_table (g);
  Table *b = gen_table (g);
  Column *ca = table_column (a, pick (g, a->columns->len));
  Column *cb = table_column (b, pick (g, b->columns->len));
  guint form = pick (g, 5);

  if (gen_skips (g, "affinity-seek"))
    {
      for (guint tries = 0; tries < 20 && column_affinity (ca) != column_affinity (cb); tries++)
        cb = table_column (b, pick (g, b->columns->len));
      if (column_affinity (ca) != column_affinity (cb) && form < 3)
        form = 3 + pick (g, 2);
    }

  switch (form)
    {
    case 0:
      {
        gboolean negated;

        append_select_list (g, s, a, NULL);
        negated = chance (g, 0.3);
        g_string_append_printf (s, " FROM %s WHERE %s %sIN (SELECT %s FROM %s AS y", a->name,
                                ca->name, negated ? "NOT " : "", cb->name, b->name);
        gen_where (g, s, b, "y", 0.5);
        /* SQLite 3.40 answers `x NOT IN (SELECT c …)` through an index on
         * c DESC as if c held no NULL. A LIMIT keeps it off the index. */
        g_string_append (s, negated ? " LIMIT -1)" : ")");
      }
      break;
    case 1:
      append_select_list (g, s, a, "x");
      g_string_append_printf (s, " FROM %s AS x WHERE %sEXISTS (SELECT 1 FROM %s AS y "
                              "WHERE y.%s = x.%s)", a->name, chance (g, 0.3) ? "NOT " : "",
                              b->name, cb->name, ca->name);
      break;
    case 2:
      g_string_append_printf (s, "x.%s, (SELECT count(*) FROM %s AS y WHERE y.%s = x.%s) "
                              "FROM %s AS x", ca->name, b->name, cb->name, ca->name, a->name);
      gen_where (g, s, a, "x", 0.4);
      break;
    case 3:
      g_string_append_printf (s, "* FROM (SELECT %s AS v FROM %s", ca->name, a->name);
      gen_where (g, s, a, NULL, 0.5);
      g_string_append_printf (s, " UNION ALL SELECT %s FROM %s", cb->name, b->name);
      gen_where (g, s, b, NULL, 0.5);
      g_string_append (s, ")");
      break;
    default:
      g_string_append_printf (s, "count(*), sum(v IS NULL) FROM (SELECT %s AS v FROM %s",
                              ca->name, a->name);
      gen_where (g, s, a, NULL, 0.7);
      g_string_append (s, ")");
      break;
    }
  return entry_new (ENTRY_SQL, 0, s->str);
}

static const char *
gen_conflict (Gen *g)
{
  double r = g_rand_double (g->rand);

  if (r < 0.45)
    return "";
  if (r < 0.62)
    return " OR IGNORE";
  if (r < 0.79)
    return " OR REPLACE";
  if (r < 0.87)
    return " OR ABORT";
  if (r < 0.96)
    return " OR FAIL";
  return gen_skips (g, "rollback") ? " OR ABORT" : " OR ROLLBACK";
}

/* Whether SQLite runs a statement with @conflict (NULL for REPLACE INTO)
 * on an ordinary table without a statement journal: all but ABORT. */
static gboolean
conflict_is_quiet (const char *conflict)
{
  return conflict == NULL || !(*conflict == '\0' || g_str_equal (conflict, " OR ABORT"));
}

static gint64
ref_count (Gen   *g,
           Table *t)
{
  g_autofree char *sql = sql_printf ("SELECT count(*) FROM \"%w\"", t->name);
  sqlite3_stmt *stmt = NULL;
  gint64 n = 0;

  if (sqlite3_prepare_v2 (g->ref, sql, -1, &stmt, NULL) == SQLITE_OK &&
      sqlite3_step (stmt) == SQLITE_ROW)
    n = sqlite3_column_int64 (stmt, 0);
  sqlite3_finalize (stmt);
  return n;
}

static Entry *
gen_insert (Gen   *g,
            Table *t)
{
  g_autoptr(GString) s = g_string_new (NULL);
  g_autoptr(GArray) cols = g_array_new (FALSE, FALSE, sizeof (guint));
  gboolean listed = chance (g, 0.6);
  const char *conflict = chance (g, 0.04) ? NULL : gen_conflict (g);
  guint n_rows;

  if (conflict == NULL)
    g_string_append_printf (s, "REPLACE INTO %s", table_ref (g, t));
  else
    g_string_append_printf (s, "INSERT%s INTO %s", conflict, table_ref (g, t));

  if (chance (g, 0.03))
    {
      g_string_append (s, " DEFAULT VALUES");
      return entry_new (ENTRY_SQL, table_keyed_by_rowid (t) ? ENTRY_ROWID : 0, s->str);
    }

  if (listed)
    {
      /* Some columns, in any order; the others take their defaults. */
      for (guint i = 0; i < t->columns->len; i++)
        if (chance (g, 0.75))
          {
            guint at = pick (g, cols->len + 1);

            g_array_insert_val (cols, at, i);
          }
      if (cols->len == 0)
        g_array_append_val (cols, (guint) { pick (g, t->columns->len) });
      g_string_append (s, " (");
      for (guint i = 0; i < cols->len; i++)
        g_string_append_printf (s, "%s%s", i > 0 ? ", " : "",
                                table_column (t, g_array_index (cols, guint, i))->name);
      g_string_append (s, ")");
    }
  else
    for (guint i = 0; i < t->columns->len; i++)
      g_array_append_val (cols, i);

  g_string_append (s, " VALUES ");
  n_rows = chance (g, 0.3) ? 2 + pick (g, 3) : 1;
  /* Under OR IGNORE, OR REPLACE, OR FAIL and OR ROLLBACK, SQLite runs a
   * statement on an ordinary table without a statement journal, so one
   * that fails half-way with "datatype mismatch" (a wrong INTEGER PRIMARY
   * KEY) keeps the rows it wrote before; on a virtual table SQLite always
   * keeps one, so qstore's statement is undone. Such a failure comes first
   * or not at all. */
  g->no_wrong_ids = n_rows > 1 && conflict_is_quiet (conflict);
  for (guint r = 0; r < n_rows; r++)
    {
      guint n_values = cols->len;

      /* Now and then one value too few or too many. */
      if (chance (g, 0.01))
        n_values = chance (g, 0.5) ? n_values + 1 : n_values - 1;
      g_string_append (s, r > 0 ? ", (" : "(");
      for (guint i = 0; i < n_values; i++)
        {
          Column *c = table_column (t, g_array_index (cols, guint, MIN (i, cols->len - 1)));

          g_string_append_printf (s, "%s%s", i > 0 ? ", " : "", gen_value_for (g, t, c));
        }
      g_string_append (s, ")");
    }
  g->no_wrong_ids = FALSE;
  return entry_new (ENTRY_SQL, table_keyed_by_rowid (t) ? ENTRY_ROWID : 0, s->str);
}

static Entry *
gen_insert_select (Gen   *g,
                   Table *t)
{
  g_autoptr(GString) s = g_string_new (NULL);
  Table *u = gen_table (g);
  guint n = 1 + pick (g, MIN (t->columns->len, 3));
  g_autoptr(GArray) cols = g_array_new (FALSE, FALSE, sizeof (guint));
  const char *conflict;
  gboolean quiet;

  while (cols->len < n)
    {
      guint c = pick (g, t->columns->len);
      gboolean seen = FALSE;

      for (guint i = 0; i < cols->len; i++)
        seen = seen || g_array_index (cols, guint, i) == c;
      if (!seen)
        g_array_append_val (cols, c);
    }

  conflict = gen_conflict (g);
  quiet = conflict_is_quiet (conflict);

  g_string_append_printf (s, "INSERT%s INTO %s (", conflict, table_ref (g, t));
  for (guint i = 0; i < n; i++)
    g_string_append_printf (s, "%s%s", i > 0 ? ", " : "",
                            table_column (t, g_array_index (cols, guint, i))->name);
  g_string_append (s, ") SELECT ");
  for (guint i = 0; i < n; i++)
    {
      gboolean id = t->pk_kind == PK_IPK && g_array_index (cols, guint, i) == t->pk.cols[0];

      if (i > 0)
        g_string_append (s, ", ");
      /* No "datatype mismatch" half-way under OR IGNORE / OR REPLACE
       * (see gen_insert()). */
      if (id && quiet)
        g_string_append (s, "CAST(");
      if (chance (g, 0.8))
        g_string_append (s, table_column (u, pick (g, u->columns->len))->name);
      else
        g_string_append (s, gen_literal (g));
      if (id && quiet)
        g_string_append (s, " AS INTEGER)");
    }
  g_string_append_printf (s, " FROM %s", table_ref (g, u));
  gen_where (g, s, u, NULL, 0.6);
  /* Rows go in in this order, which decides rowids and conflicts. */
  append_total_order (g, s, u, NULL);
  g_string_append_printf (s, " LIMIT %u", 1 + pick (g, 6));
  return entry_new (ENTRY_SQL, table_keyed_by_rowid (t) ? ENTRY_ROWID : 0, s->str);
}

/* Whether writing column @col can make the row conflict with another. */
static gboolean
column_is_keyish (Table *t,
                  guint  col)
{
  for (guint i = 0; i < t->pk.n_cols; i++)
    if (t->pk.cols[i] == col)
      return TRUE;
  for (guint i = 0; i < t->indexes->len; i++)
    {
      Index *ix = g_ptr_array_index (t->indexes, i);

      if (!ix->unique)
        continue;
      if (ix->where_col == (int) col)
        return TRUE;
      for (guint j = 0; j < ix->n_cols; j++)
        if (ix->cols[j] == col)
          return TRUE;
    }
  return FALSE;
}

/* A WHERE clause that matches one existing row (or none), written with
 * the row's stored values. */
static gboolean
append_one_row (Gen     *g,
                GString *s,
                Table   *t)
{
  gint64 n = ref_count (g, t);
  g_autoptr(GString) q = g_string_new ("SELECT ");
  sqlite3_stmt *stmt = NULL;
  gboolean ok = FALSE;

  if (n == 0 || chance (g, 0.1))
    {
      if (table_keyed_by_rowid (t))
        g_string_append_printf (s, " WHERE rowid = %u", 1 + pick (g, 10));
      else
        {
          g_string_append (s, " WHERE ");
          for (guint i = 0; i < t->pk.n_cols; i++)
            g_string_append_printf (s, "%s%s = %s COLLATE BINARY", i > 0 ? " AND " : "",
                                    table_column (t, t->pk.cols[i])->name,
                                    gen_value_for (g, t, table_column (t, t->pk.cols[i])));
        }
      return TRUE;
    }

  if (table_keyed_by_rowid (t))
    g_string_append (q, "rowid");
  else
    for (guint i = 0; i < t->pk.n_cols; i++)
      g_string_append_printf (q, "%squote(%s)", i > 0 ? ", " : "",
                              table_column (t, t->pk.cols[i])->name);
  g_string_append_printf (q, " FROM \"%s\" LIMIT 1 OFFSET %u", t->name, pick (g, n));

  if (sqlite3_prepare_v2 (g->ref, q->str, -1, &stmt, NULL) == SQLITE_OK &&
      sqlite3_step (stmt) == SQLITE_ROW)
    {
      ok = TRUE;
      if (table_keyed_by_rowid (t))
        g_string_append_printf (s, " WHERE rowid = %" G_GINT64_FORMAT,
                                (gint64) sqlite3_column_int64 (stmt, 0));
      else
        {
          /* Under BINARY, a key that is unique under its own collation
           * matches one row at most. */
          g_string_append (s, " WHERE ");
          for (guint i = 0; i < t->pk.n_cols; i++)
            g_string_append_printf (s, "%s%s = %s COLLATE BINARY", i > 0 ? " AND " : "",
                                    table_column (t, t->pk.cols[i])->name,
                                    (const char *) sqlite3_column_text (stmt, i));
        }
    }
  sqlite3_finalize (stmt);
  return ok;
}

static Entry *
gen_update (Gen   *g,
            Table *t)
{
  g_autoptr(GString) s = g_string_new (NULL);
  const char *conflict = gen_conflict (g);
  guint n_set = chance (g, 0.3) ? 2 : 1;
  gboolean keyish = g_str_equal (conflict, " OR FAIL");

  g_string_append_printf (s, "UPDATE%s %s SET ", conflict, table_ref (g, t));
  for (guint i = 0; i < n_set; i++)
    {
      guint col = pick (g, t->columns->len);
      Column *c = table_column (t, col);

      keyish = keyish || column_is_keyish (t, col);
      g_string_append_printf (s, "%s%s = ", i > 0 ? ", " : "", c->name);
      switch (pick (g, 8))
        {
        case 0:
          g_string_append (s, table_column (t, pick (g, t->columns->len))->name);
          break;
        case 1:
          g_string_append_printf (s, "%s + 1", c->name);
          break;
        case 2:
          g_string_append_printf (s, "%s(%s)", chance (g, 0.5) ? "upper" : "lower", c->name);
          break;
        default:
          g_string_append (s, gen_value_for (g, t, c));
          break;
        }
    }

  /* SQLite checks each row as it updates it, so which of several rows
   * conflicts — and with OR FAIL, which stay updated — depends on the order
   * it visits them, which differs between an ordinary table and a virtual
   * one. Such updates touch one row. */
  if (keyish)
    append_one_row (g, s, t);
  else
    gen_where (g, s, t, NULL, 0.85);
  return entry_new (ENTRY_SQL, 0, s->str);
}

static Entry *
gen_delete (Gen   *g,
            Table *t)
{
  g_autoptr(GString) s = g_string_new (NULL);

  g_string_append_printf (s, "DELETE FROM %s", table_ref (g, t));
  if (chance (g, 0.3))
    append_one_row (g, s, t);
  else
    gen_where (g, s, t, NULL, 0.95);
  return entry_new (ENTRY_SQL, 0, s->str);
}

/* DDL */

static const char *const column_types[] = {
  "INTEGER", "INTEGER", "TEXT", "TEXT", "REAL", "NUMERIC", "BLOB", "", "", "INT", "VARCHAR(8)",
  "DOUBLE", "BOOLEAN",
};
static const char *const column_names[] = { "a", "b", "c", "d", "e" };

static void
append_check (Gen        *g,
              GString    *s,
              const char *col)
{
  static const char *const forms[] = {
    "@ <> 'B'", "@ IS NOT 7", "typeof(@) <> 'blob'", "length(@) < 3", "@ >= -1",
  };

  if (chance (g, 0.3))
    g_string_append_printf (s, " CONSTRAINT ck_%s", col);
  g_string_append (s, " CHECK (");
  append_template (s, PICK (g, forms), col);
  g_string_append (s, ")");
}

static Entry *
gen_create_table (Gen *g)
{
  g_autoptr(GString) s = g_string_new (NULL);
  g_autofree char *name = NULL;
  Table *t;
  double r = g_rand_double (g->rand);
  PkKind kind = r < 0.25 ? PK_IPK : r < 0.42 ? PK_ROWID : r < 0.72 ? PK_SINGLE : PK_COMPOSITE;
  guint n_cols = 2 + pick (g, 4);
  guint id_at = 0;
  gboolean ipk_desc = FALSE;
  gboolean ipk_in_table = FALSE;
  gboolean pk_in_table = FALSE;

  /* Now and then a name in use, which must fail the same way. */
  if (g->tables->len > 0 && chance (g, 0.03))
    name = g_strdup (((Table *) gen_table (g))->name);
  else
    name = g_strdup_printf ("t%u", g->next_table++);
  t = table_new (name);
  t->pk_kind = kind;

  for (guint i = 0; i < n_cols; i++)
    {
      Column *c = g_new0 (Column, 1);

      c->name = g_strdup (column_names[i]);
      c->type = PICK (g, column_types);
      if (chance (g, 0.35))
        c->collate = PICK (g, collations);
      c->not_null = chance (g, 0.12);
      g_ptr_array_add (t->columns, c);
    }

  /* The key. */
  if (kind == PK_IPK)
    {
      Column *c = g_new0 (Column, 1);

      c->name = g_strdup ("id");
      c->type = "INTEGER";
      id_at = pick (g, n_cols + 1);
      g_ptr_array_insert (t->columns, id_at, c);
      t->pk.n_cols = 1;
      t->pk.cols[0] = id_at;
      ipk_in_table = chance (g, 0.2);
      /* INTEGER PRIMARY KEY DESC is not the rowid: SQLite keeps it as an
       * ordinary key, NULLs allowed. */
      ipk_desc = !ipk_in_table && chance (g, 0.1);
      if (ipk_desc)
        {
          t->pk_kind = PK_SINGLE;
          t->pk.desc[0] = TRUE;
          c->not_null = chance (g, 0.7) || gen_skips (g, "null-keys");
        }
    }
  else if (kind == PK_SINGLE || kind == PK_COMPOSITE)
    {
      guint n = kind == PK_SINGLE ? 1 : 2 + (n_cols > 2 && chance (g, 0.3));

      pk_in_table = kind == PK_COMPOSITE || chance (g, 0.4);
      t->pk.n_cols = n;
      for (guint i = 0; i < n; i++)
        {
          Column *c;
          gboolean seen;

          do
            {
              t->pk.cols[i] = pick (g, n_cols);
              seen = FALSE;
              for (guint j = 0; j < i; j++)
                seen = seen || t->pk.cols[j] == t->pk.cols[i];
            }
          while (seen);
          c = table_column (t, t->pk.cols[i]);
          /* SQLite lets a PRIMARY KEY of a rowid table hold NULL, in any
           * number of rows: some keys may. */
          if (chance (g, 0.7) || gen_skips (g, "null-keys"))
            c->not_null = TRUE;
          t->pk.desc[i] = chance (g, 0.35);
          t->pk.collate[i] = c->collate;
          if (pk_in_table && chance (g, 0.3))
            t->pk.collate[i] = PICK (g, collations);
        }
      t->without_rowid = chance (g, 0.15);
      /* A lone PRIMARY KEY column declared exactly INTEGER is the rowid,
       * unless it is a column constraint with DESC. */
      if (kind == PK_SINGLE && !t->without_rowid &&
          g_ascii_strcasecmp (table_column (t, t->pk.cols[0])->type, "INTEGER") == 0 &&
          (pk_in_table || !t->pk.desc[0]))
        t->pk_kind = PK_IPK;
    }
  /* A PRIMARY KEY part's collation, as written; NULL is BINARY. */
  for (guint i = 0; i < t->pk.n_cols; i++)
    if (t->pk.collate[i] != NULL && g_str_equal (t->pk.collate[i], "BINARY"))
      t->pk.collate[i] = NULL;

  g_string_append_printf (s, "CREATE TABLE %s%s (", chance (g, 0.05) ? "IF NOT EXISTS " : "",
                          t->name);
  for (guint i = 0; i < t->columns->len; i++)
    {
      Column *c = table_column (t, i);

      if (i > 0)
        g_string_append (s, ", ");
      g_string_append (s, c->name);
      if (*c->type != '\0')
        g_string_append_printf (s, " %s", c->type);

      if (t->pk.n_cols > 0 && !pk_in_table && !ipk_in_table && t->pk.cols[0] == i)
        {
          g_string_append (s, " PRIMARY KEY");
          if (t->pk.desc[0])
            g_string_append (s, " DESC");
          else if (chance (g, 0.2))
            g_string_append (s, " ASC");
        }
      if (c->not_null)
        g_string_append (s, " NOT NULL");
      if (chance (g, 0.2) && !(kind == PK_IPK && i == id_at) &&
          !(c->not_null && gen_skips (g, "replace-default")))
        g_string_append_printf (s, " DEFAULT %s", gen_literal (g));
      if (c->collate != NULL)
        g_string_append_printf (s, " COLLATE %s", c->collate);
      if (chance (g, 0.1))
        {
          Index *ix = g_new0 (Index, 1);

          g_string_append (s, " UNIQUE");
          ix->unique = TRUE;
          ix->n_cols = 1;
          ix->cols[0] = i;
          ix->collate[0] = collation_is_binary (c->collate) ? NULL : c->collate;
          ix->where_col = -1;
          g_ptr_array_add (t->indexes, ix);
        }
      if (chance (g, 0.07))
        append_check (g, s, c->name);
    }

  if (ipk_in_table)
    g_string_append_printf (s, ", PRIMARY KEY (%s)", table_column (t, t->pk.cols[0])->name);
  if (pk_in_table)
    {
      g_string_append (s, ", PRIMARY KEY (");
      for (guint i = 0; i < t->pk.n_cols; i++)
        {
          Column *c = table_column (t, t->pk.cols[i]);

          g_string_append_printf (s, "%s%s", i > 0 ? ", " : "", c->name);
          if (t->pk.collate[i] != c->collate || (c->collate != NULL && chance (g, 0.3)))
            g_string_append_printf (s, " COLLATE %s",
                                    t->pk.collate[i] != NULL ? t->pk.collate[i] : "BINARY");
          if (t->pk.desc[i])
            g_string_append (s, " DESC");
        }
      g_string_append (s, ")");
    }
  if (chance (g, 0.25))
    {
      Index *ix = g_new0 (Index, 1);

      ix->unique = TRUE;
      ix->n_cols = 1 + (t->columns->len > 1 && chance (g, 0.7));
      ix->where_col = -1;
      ix->cols[0] = pick (g, t->columns->len);
      do
        ix->cols[1] = pick (g, t->columns->len);
      while (ix->n_cols > 1 && ix->cols[1] == ix->cols[0]);
      g_string_append (s, ", UNIQUE (");
      for (guint i = 0; i < ix->n_cols; i++)
        {
          Column *c = table_column (t, ix->cols[i]);

          ix->collate[i] = c->collate;
          g_string_append_printf (s, "%s%s", i > 0 ? ", " : "", c->name);
          if (chance (g, 0.3))
            {
              ix->collate[i] = PICK (g, collations);
              g_string_append_printf (s, " COLLATE %s", ix->collate[i]);
            }
          if (collation_is_binary (ix->collate[i]))
            ix->collate[i] = NULL;
        }
      g_string_append (s, ")");
      g_ptr_array_add (t->indexes, ix);
    }
  if (chance (g, 0.05) && t->columns->len > 1)
    g_string_append_printf (s, ", CHECK (%s IS NOT %s)", table_column (t, 0)->name,
                            table_column (t, 1)->name);
  g_string_append (s, ")");
  if (t->without_rowid)
    {
      g_string_append (s, " WITHOUT ROWID");
      for (guint i = 0; i < t->pk.n_cols; i++)
        table_column (t, t->pk.cols[i])->not_null = TRUE;
    }

  g->pending = PENDING_CREATE_TABLE;
  g->pending_table = t;
  return entry_new (ENTRY_SQL, 0, s->str);
}

static Entry *
gen_create_index (Gen   *g,
                  Table *t)
{
  g_autoptr(GString) s = g_string_new (NULL);
  Index *ix = g_new0 (Index, 1);
  static const char *const predicates[] = {
    "@ IS NOT NULL", "@ > 2", "@ <> 'a'", "typeof(@) = 'text'",
  };

  ix->unique = chance (g, 0.3);
  ix->where_col = -1;
  ix->n_cols = 1 + (t->columns->len > 1 && chance (g, 0.4));
  ix->cols[0] = pick (g, t->columns->len);
  do
    ix->cols[1] = pick (g, t->columns->len);
  while (ix->n_cols > 1 && ix->cols[1] == ix->cols[0]);

  if (g->next_index > 0 && chance (g, 0.03))
    ix->name = g_strdup_printf ("ix%u", pick (g, g->next_index));
  else
    ix->name = g_strdup_printf ("ix%u", g->next_index++);

  g_string_append_printf (s, "CREATE %sINDEX %s%s ON %s (", ix->unique ? "UNIQUE " : "",
                          chance (g, 0.1) ? "IF NOT EXISTS " : "", ix->name, table_ref (g, t));
  for (guint i = 0; i < ix->n_cols; i++)
    {
      Column *c = table_column (t, ix->cols[i]);

      ix->collate[i] = c->collate;
      g_string_append_printf (s, "%s%s", i > 0 ? ", " : "", c->name);
      if (chance (g, 0.35))
        {
          ix->collate[i] = PICK (g, collations);
          g_string_append_printf (s, " COLLATE %s", ix->collate[i]);
        }
      if (collation_is_binary (ix->collate[i]))
        ix->collate[i] = NULL;
      ix->desc[i] = chance (g, 0.3);
      if (ix->desc[i])
        g_string_append (s, " DESC");
    }
  g_string_append (s, ")");
  if (chance (g, 0.2))
    {
      ix->where_col = pick (g, t->columns->len);
      g_string_append (s, " WHERE ");
      append_template (s, PICK (g, predicates), table_column (t, ix->where_col)->name);
    }

  g->pending = PENDING_CREATE_INDEX;
  g->pending_index = ix;
  g->pending_name = g_strdup (t->name);
  return entry_new (ENTRY_SQL, 0, s->str);
}

static Entry *
gen_drop_index (Gen   *g,
                Table *t)
{
  g_autoptr(GString) s = g_string_new ("DROP INDEX ");
  g_autoptr(GPtrArray) named = g_ptr_array_new ();

  for (guint i = 0; i < t->indexes->len; i++)
    if (((Index *) g_ptr_array_index (t->indexes, i))->name != NULL)
      g_ptr_array_add (named, g_ptr_array_index (t->indexes, i));

  if (chance (g, 0.2))
    g_string_append (s, "IF EXISTS ");
  if (named->len == 0 || chance (g, 0.05))
    g_string_append (s, "ix_none");
  else
    {
      Index *ix = g_ptr_array_index (named, pick (g, named->len));

      g_string_append (s, ix->name);
      g->pending = PENDING_DROP_INDEX;
      g->pending_name = g_strdup (ix->name);
    }
  return entry_new (ENTRY_SQL, 0, s->str);
}

static Entry *
gen_ddl (Gen *g)
{
  Table *t = gen_table (g);
  double r = g_rand_double (g->rand);

  if (t == NULL || (g->tables->len < MAX_TABLES && r < 0.3))
    return gen_create_table (g);
  if (r < 0.6)
    return gen_create_index (g, t);
  if (r < 0.72)
    return gen_drop_index (g, t);
  if (r < 0.8)
    {
      g_autofree char *to = g_strdup_printf ("t%u", g->next_table++);
      g_autofree char *sql = g_strdup_printf ("ALTER TABLE %s RENAME TO %s", t->name, to);

      g->pending = PENDING_RENAME_TABLE;
      g->pending_name = g_strdup (t->name);
      g->pending_name2 = g_strdup (to);
      return entry_new (ENTRY_SQL, 0, sql);
    }
  if (g->tables->len > 2 || r < 0.85)
    {
      g_autofree char *sql = NULL;

      if (chance (g, 0.05))
        return entry_new (ENTRY_SQL, 0, "DROP TABLE t_none");
      sql = g_strdup_printf ("DROP TABLE %s%s", chance (g, 0.2) ? "IF EXISTS " : "",
                             table_ref (g, t));
      g->pending = PENDING_DROP_TABLE;
      g->pending_name = g_strdup (t->name);
      return entry_new (ENTRY_SQL, 0, sql);
    }
  return gen_create_table (g);
}

static Entry *
gen_transaction (Gen *g)
{
  gboolean in_txn = !sqlite3_get_autocommit (g->ref);
  double r = g_rand_double (g->rand);
  g_autofree char *sql = NULL;

  if (!in_txn)
    {
      static const char *const begins[] = {
        "BEGIN", "BEGIN DEFERRED", "BEGIN IMMEDIATE", "BEGIN TRANSACTION",
      };

      if (r < 0.65)
        return entry_new (ENTRY_SQL, 0, PICK (g, begins));
      if (r < 0.95)
        {
          sql = g_strdup_printf ("SAVEPOINT sp%u", g->next_savepoint++);
          g->pending = PENDING_SAVEPOINT;
          g->pending_name = g_strdup (sql + strlen ("SAVEPOINT "));
          return entry_new (ENTRY_SQL, 0, sql);
        }
      /* Each fails alike outside a transaction. */
      return entry_new (ENTRY_SQL, 0, chance (g, 0.5) ? "COMMIT" : "ROLLBACK TO sp0");
    }

  if (r < 0.25)
    return entry_new (ENTRY_SQL, 0, chance (g, 0.8) ? "COMMIT" : "END");
  if (r < 0.4)
    return entry_new (ENTRY_SQL, 0, gen_skips (g, "rollback") ? "COMMIT" : "ROLLBACK");
  if (r < 0.62)
    {
      /* Names may repeat: RELEASE and ROLLBACK TO take the innermost. */
      if (g->savepoints->len > 0 && chance (g, 0.15))
        {
          guint at = pick (g, g->savepoints->len);

          sql = g_strdup_printf ("SAVEPOINT %s", (char *) g_ptr_array_index (g->savepoints, at));
        }
      else
        sql = g_strdup_printf ("SAVEPOINT sp%u", g->next_savepoint++);
      g->pending = PENDING_SAVEPOINT;
      g->pending_name = g_strdup (sql + strlen ("SAVEPOINT "));
      return entry_new (ENTRY_SQL, 0, sql);
    }
  if (r > 0.98)
    return entry_new (ENTRY_SQL, 0, chance (g, 0.5) ? "RELEASE sp_none" : "BEGIN");
  if (g->savepoints->len == 0)
    return entry_new (ENTRY_SQL, 0,
                      chance (g, 0.6) || gen_skips (g, "rollback") ? "COMMIT" : "ROLLBACK");

  {
    const char *name = g_ptr_array_index (g->savepoints, pick (g, g->savepoints->len));

    if (r < 0.8 || gen_skips (g, "rollback"))
      {
        sql = g_strdup_printf ("RELEASE %s%s", chance (g, 0.3) ? "SAVEPOINT " : "", name);
        g->pending = PENDING_RELEASE;
      }
    else
      {
        sql = g_strdup_printf ("ROLLBACK %sTO %s", chance (g, 0.3) ? "TRANSACTION " : "", name);
        g->pending = PENDING_ROLLBACK_TO;
      }
    g->pending_name = g_strdup (name);
  }
  return entry_new (ENTRY_SQL, 0, sql);
}

static Entry *
gen_error (Gen *g)
{
  static const char *const statements[] = {
    "SELECT * FROM t_none", "INSERT INTO t_none VALUES (1)", "UPDATE t_none SET a = 1",
    "DELETE FROM t_none", "SELEC 1", "SELECT * FROM", "INSERT INTO VALUES (1)",
    "SELECT (1", "CREATE TABLE (a)",
  };
  Table *t = gen_table (g);

  if (t != NULL && chance (g, 0.4))
    {
      g_autofree char *sql = chance (g, 0.5) ? g_strdup_printf ("SELECT zz FROM %s", t->name)
                                             : g_strdup_printf ("UPDATE %s SET zz = 1", t->name);

      return entry_new (ENTRY_SQL, 0, sql);
    }
  return entry_new (ENTRY_SQL, 0, PICK (g, statements));
}

static Entry *
gen_next (Gen *g)
{
  gboolean in_txn = !sqlite3_get_autocommit (g->ref);
  Table *t;
  double r;

  g->pending = PENDING_NONE;

  if (++g->since_check >= CHECK_EVERY)
    {
      g->since_check = 0;
      return entry_new (ENTRY_CHECK, 0, NULL);
    }
  if (g->persistent && !in_txn && ++g->since_reopen >= REOPEN_EVERY)
    {
      g->since_reopen = 0;
      return entry_new (ENTRY_REOPEN, 0, NULL);
    }

  /* qstore commits an open transaction before DDL (it says so): DDL
   * waits until none is open. */
  if (g->tables->len == 0)
    return in_txn ? entry_new (ENTRY_SQL, 0, "COMMIT") : gen_create_table (g);

  r = g_rand_double (g->rand) * 100;
  if (r < 5 && !in_txn)
    return gen_ddl (g);
  if (r < 12)
    return gen_transaction (g);
  if (r < 13)
    return gen_error (g);

  t = gen_table (g);
  if (r < 45)
    {
      gint64 n = ref_count (g, t);

      if (n > MAX_ROWS)
        return gen_delete (g, t);
      if (r < 39)
        return gen_insert (g, t);
      return gen_insert_select (g, t);
    }
  if (r < 55)
    return gen_update (g, t);
  if (r < 59)
    return gen_delete (g, t);
  if (r < 80)
    return gen_select_simple (g, t);
  if (r < 87)
    return gen_select_aggregate (g, t);
  if (r < 94)
    return gen_select_join (g);
  return gen_select_subquery (g);
}

static Table *
gen_find_table (Gen        *g,
                const char *name,
                guint      *at)
{
  for (guint i = 0; i < g->tables->len; i++)
    {
      Table *t = g_ptr_array_index (g->tables, i);

      if (g_ascii_strcasecmp (t->name, name) == 0)
        {
          if (at != NULL)
            *at = i;
          return t;
        }
    }
  return NULL;
}

static Index *
gen_find_index (Gen        *g,
                const char *name,
                Table     **table,
                guint      *at)
{
  for (guint i = 0; i < g->tables->len; i++)
    {
      Table *t = g_ptr_array_index (g->tables, i);

      for (guint j = 0; j < t->indexes->len; j++)
        {
          Index *ix = g_ptr_array_index (t->indexes, j);

          if (ix->name != NULL && g_ascii_strcasecmp (ix->name, name) == 0)
            {
              *table = t;
              *at = j;
              return ix;
            }
        }
    }
  return NULL;
}

/* Follows what SQLite did with the statement just generated. */
static void
gen_observe (Gen           *g,
             const Outcome *ref_out)
{
  gboolean ok = ref_out->klass == CLASS_OK;
  guint at;
  Table *t;

  switch (g->pending)
    {
    case PENDING_CREATE_TABLE:
      if (ok && gen_find_table (g, g->pending_table->name, NULL) == NULL)
        g_ptr_array_add (g->tables, g_steal_pointer (&g->pending_table));
      break;
    case PENDING_DROP_TABLE:
      if (ok && gen_find_table (g, g->pending_name, &at) != NULL)
        g_ptr_array_remove_index (g->tables, at);
      break;
    case PENDING_CREATE_INDEX:
      {
        Table *owner;

        if (ok && gen_find_index (g, g->pending_index->name, &owner, &at) == NULL &&
            (t = gen_find_table (g, g->pending_name, NULL)) != NULL)
          g_ptr_array_add (t->indexes, g_steal_pointer (&g->pending_index));
      }
      break;
    case PENDING_DROP_INDEX:
      if (ok && gen_find_index (g, g->pending_name, &t, &at) != NULL)
        g_ptr_array_remove_index (t->indexes, at);
      break;
    case PENDING_RENAME_TABLE:
      if (ok && (t = gen_find_table (g, g->pending_name, NULL)) != NULL)
        {
          g_free (t->name);
          t->name = g_strdup (g->pending_name2);
        }
      break;
    case PENDING_SAVEPOINT:
      if (ok)
        g_ptr_array_add (g->savepoints, g_strdup (g->pending_name));
      break;
    case PENDING_RELEASE:
    case PENDING_ROLLBACK_TO:
      if (ok)
        {
          guint i = g->savepoints->len;

          while (i > 0 && !g_str_equal (g_ptr_array_index (g->savepoints, i - 1), g->pending_name))
            i--;
          if (i > 0)
            g_ptr_array_set_size (g->savepoints, g->pending == PENDING_RELEASE ? i - 1 : i);
        }
      break;
    case PENDING_NONE:
    default:
      break;
    }

  if (sqlite3_get_autocommit (g->ref))
    g_ptr_array_set_size (g->savepoints, 0);

  g->pending = PENDING_NONE;
  g_clear_pointer (&g->pending_table, table_free);
  g_clear_pointer (&g->pending_index, index_free);
  g_clear_pointer (&g->pending_name, g_free);
  g_clear_pointer (&g->pending_name2, g_free);
}

static void
gen_init (Gen      *g,
          guint32   seed,
          sqlite3  *ref,
          gboolean  persistent)
{
  memset (g, 0, sizeof *g);
  g->rand = g_rand_new_with_seed (seed);
  g->ref = ref;
  g->persistent = persistent;
  g->skip = g_strsplit (g_getenv ("QSTORE_DIFF_SKIP") ?: "", ",", -1);
  g->tables = g_ptr_array_new_with_free_func ((GDestroyNotify) table_free);
  g->savepoints = g_ptr_array_new_with_free_func (g_free);
}

static void
gen_clear (Gen *g)
{
  g_rand_free (g->rand);
  g_ptr_array_unref (g->tables);
  g_ptr_array_unref (g->savepoints);
  g_strfreev (g->skip);
}

/* Shrinking a mismatch */

static char *
mismatch_kind (const char *mismatch)
{
  return g_strndup (mismatch, strcspn (mismatch, ":"));
}

/* Whether running @entries on fresh databases gives its first mismatch
 * at the last entry, of the kind @kind. */
static gboolean
reproduces (const char *spec,
            GPtrArray  *entries,
            const char *kind)
{
  Runner r;
  gboolean hit = FALSE;

  runner_open (&r, spec);
  for (guint i = 0; i < entries->len; i++)
    {
      Entry *e = g_ptr_array_index (entries, i);
      Outcome o;
      char *mismatch;

      /* Dropping a COMMIT can leave DDL or a reopen inside a transaction,
       * where qstore differs by design (it commits first). */
      if (!sqlite3_get_autocommit (r.ref) &&
          (e->kind == ENTRY_REOPEN || (e->kind == ENTRY_SQL && is_ddl_statement (e->sql))))
        break;

      outcome_init (&o);
      mismatch = runner_run (&r, e, &o);
      outcome_clear (&o);
      if (mismatch != NULL)
        {
          g_autofree char *got = mismatch_kind (mismatch);

          hit = i == entries->len - 1 && g_str_equal (got, kind);
          g_free (mismatch);
          break;
        }
    }
  runner_close (&r);
  return hit;
}

/* Delta debugging over every entry but the last (the one that showed the
 * mismatch), within @seconds. Returns the entries kept. */
static GPtrArray *
minimize (const char *spec,
          GPtrArray  *entries,
          const char *mismatch,
          double      seconds)
{
  g_autofree char *kind = mismatch_kind (mismatch);
  g_autoptr(GTimer) timer = g_timer_new ();
  GPtrArray *kept = g_ptr_array_new ();
  guint chunks = 2;

  for (guint i = 0; i < entries->len; i++)
    g_ptr_array_add (kept, g_ptr_array_index (entries, i));

  while (kept->len > 1 && g_timer_elapsed (timer, NULL) < seconds)
    {
      guint prefix = kept->len - 1;
      guint size = MAX (1, (prefix + chunks - 1) / chunks);
      gboolean reduced = FALSE;

      for (guint start = 0;
           start < prefix && g_timer_elapsed (timer, NULL) < seconds;
           start += size)
        {
          GPtrArray *candidate = g_ptr_array_new ();

          for (guint i = 0; i < kept->len; i++)
            if (i < start || i >= start + size || i == kept->len - 1)
              g_ptr_array_add (candidate, g_ptr_array_index (kept, i));
          if (reproduces (spec, candidate, kind))
            {
              g_ptr_array_unref (kept);
              kept = candidate;
              chunks = MAX (chunks - 1, 2);
              reduced = TRUE;
              break;
            }
          g_ptr_array_unref (candidate);
        }
      if (!reduced)
        {
          if (size == 1)
            break;
          chunks = MIN (chunks * 2, prefix);
        }
    }
  return kept;
}

static void
print_entries (const char *title,
               GPtrArray  *entries,
               guint       from)
{
  g_test_message ("%s", title);
  for (guint i = from; i < entries->len; i++)
    {
      g_autoptr(GString) s = g_string_new ("  ");

      append_entry (s, g_ptr_array_index (entries, i));
      g_test_message ("%s", s->str);
    }
}

static void
report_mismatch (const char *spec,
                 GPtrArray  *entries,
                 const char *mismatch)
{
  g_auto(GStrv) lines = g_strsplit (mismatch, "\n", -1);
  const char *minimize_env = g_getenv ("QSTORE_DIFF_MINIMIZE");

  g_test_message ("MISMATCH on %s at entry %u:", spec, entries->len);
  for (guint i = 0; lines[i] != NULL; i++)
    g_test_message ("  %s", lines[i]);
  print_entries ("the statements that led to it (the last ones):", entries,
                 entries->len > 25 ? entries->len - 25 : 0);

  if (minimize_env != NULL && !g_str_equal (minimize_env, "0"))
    {
      /* QSTORE_DIFF_MINIMIZE=1 allows five minutes; a larger number is
       * the seconds to allow. */
      guint64 seconds = g_ascii_strtoull (minimize_env, NULL, 10);
      g_autoptr(GPtrArray) kept = minimize (spec, entries, mismatch,
                                            seconds > 1 ? (double) seconds : 300);

      print_entries ("minimal reproduction (put it in a file for QSTORE_DIFF_REPLAY):", kept, 0);
    }
  else
    g_test_message ("set QSTORE_DIFF_MINIMIZE=1 to shrink this to a minimal reproduction");
}

/* The test */

typedef struct
{
  guint statements;
  guint selects;
  guint writes;
  guint errors;
  guint checks;
  guint reopens;
} Stats;

static void
count_entry (Stats         *stats,
             const Entry   *e,
             const Outcome *o)
{
  if (e->kind == ENTRY_CHECK)
    stats->checks++;
  else if (e->kind == ENTRY_REOPEN)
    stats->reopens++;
  else
    {
      stats->statements++;
      if (o->klass != CLASS_OK)
        stats->errors++;
      else if (o->is_write)
        stats->writes++;
      else if (o->n_columns > 0)
        stats->selects++;
    }
}

static void
write_trace (GPtrArray *entries)
{
  const char *path = g_getenv ("QSTORE_DIFF_TRACE");
  g_autoptr(GString) s = NULL;
  g_autoptr(GError) error = NULL;

  if (path == NULL)
    return;
  s = g_string_new (NULL);
  for (guint i = 0; i < entries->len; i++)
    {
      append_entry (s, g_ptr_array_index (entries, i));
      g_string_append_c (s, '\n');
    }
  if (!g_file_set_contents (path, s->str, s->len, &error))
    g_test_message ("could not write the trace to %s: %s", path, error->message);
}

static void
run_replay (const char *spec,
            const char *path)
{
  g_autofree char *text = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) entries = NULL;
  g_autoptr(GPtrArray) done = g_ptr_array_new ();
  Stats stats = { 0 };
  Runner r;

  g_file_get_contents (path, &text, NULL, &error);
  g_assert_no_error (error);
  entries = parse_entries (text);

  runner_open (&r, spec);
  for (guint i = 0; i < entries->len; i++)
    {
      Entry *e = g_ptr_array_index (entries, i);
      Outcome o;
      g_autofree char *mismatch = NULL;

      outcome_init (&o);
      g_ptr_array_add (done, e);
      mismatch = runner_run (&r, e, &o);
      count_entry (&stats, e, &o);
      outcome_clear (&o);
      if (mismatch != NULL)
        {
          report_mismatch (spec, done, mismatch);
          g_test_fail ();
          break;
        }
    }
  runner_close (&r);
  g_test_message ("%s: replayed %u statements from %s", spec, stats.statements, path);
}

static void
test_differential (gconstpointer data)
{
  const char *spec = data;
  const char *seed_env = g_getenv ("QSTORE_DIFF_SEED");
  const char *count_env = g_getenv ("QSTORE_DIFF_STATEMENTS");
  const char *replay = g_getenv ("QSTORE_DIFF_REPLAY");
  gboolean verbose = g_strcmp0 (g_getenv ("QSTORE_DIFF_VERBOSE"), "1") == 0;
  g_autoptr(GPtrArray) entries = g_ptr_array_new_with_free_func ((GDestroyNotify) entry_free);
  g_autoptr(GTimer) timer = g_timer_new ();
  guint64 seed;
  guint n;
  Stats stats = { 0 };
  Runner r;
  Gen g;

  if (replay != NULL && *replay != '\0')
    {
      run_replay (spec, replay);
      return;
    }

  if (seed_env != NULL && *seed_env != '\0')
    seed = g_ascii_strtoull (seed_env, NULL, 10);
  else if (option_seed_set)
    seed = option_seed;
  else
    seed = g_random_int ();
  n = count_env != NULL && *count_env != '\0' ? (guint) g_ascii_strtoull (count_env, NULL, 10)
                                              : option_statements;
  seed = (guint32) seed;
  g_test_message ("%s: seed %" G_GUINT64_FORMAT ", %u statements (repeat with "
                  "QSTORE_DIFF_SEED=%" G_GUINT64_FORMAT " QSTORE_DIFF_STATEMENTS=%u "
                  "QSTORE_TEST_PROVIDER=%s)", spec, seed, n, seed, n, spec);

  runner_open (&r, spec);
  gen_init (&g, (guint32) seed, r.ref, test_spec_persistent (spec));

  while (stats.statements < n)
    {
      Entry *e = gen_next (&g);
      Outcome o;
      g_autofree char *mismatch = NULL;

      g_ptr_array_add (entries, e);
      outcome_init (&o);
      mismatch = runner_run (&r, e, &o);
      count_entry (&stats, e, &o);
      if (verbose && e->kind == ENTRY_SQL)
        g_printerr ("%s\n  -> %s, %u row%s%s%s\n", e->sql, class_names[o.klass], o.rows->len,
                    o.rows->len == 1 ? "" : "s", o.message ? ": " : "", o.message ?: "");
      gen_observe (&g, &o);
      outcome_clear (&o);
      if (mismatch != NULL)
        {
          write_trace (entries);
          gen_clear (&g);
          runner_close (&r);
          report_mismatch (spec, entries, mismatch);
          g_test_fail ();
          return;
        }
    }

  /* Finally, every table in full, also after one more reopen. */
  {
    g_autofree char *mismatch = NULL;
    guint first = entries->len;

    if (!sqlite3_get_autocommit (r.ref))
      g_ptr_array_add (entries, entry_new (ENTRY_SQL, 0, "COMMIT"));
    g_ptr_array_add (entries, entry_new (ENTRY_CHECK, 0, NULL));
    if (test_spec_persistent (spec))
      {
        g_ptr_array_add (entries, entry_new (ENTRY_REOPEN, 0, NULL));
        g_ptr_array_add (entries, entry_new (ENTRY_CHECK, 0, NULL));
      }
    for (guint i = first; mismatch == NULL && i < entries->len; i++)
      {
        Outcome o;

        outcome_init (&o);
        mismatch = runner_run (&r, g_ptr_array_index (entries, i), &o);
        count_entry (&stats, g_ptr_array_index (entries, i), &o);
        outcome_clear (&o);
        if (mismatch != NULL)
          g_ptr_array_set_size (entries, i + 1);
      }
    write_trace (entries);
    gen_clear (&g);
    runner_close (&r);
    if (mismatch != NULL)
      {
        report_mismatch (spec, entries, mismatch);
        g_test_fail ();
        return;
      }
  }

  g_test_message ("%s: compared %u statements (%u queries with rows, %u writes, %u errors "
                  "of the same class), %u full-table checks, %u reopens, in %.1f s",
                  spec, stats.statements, stats.selects, stats.writes, stats.errors,
                  stats.checks, stats.reopens, g_timer_elapsed (timer, NULL));
}

int
main (int   argc,
      char *argv[])
{
  const char *providers = g_getenv ("QSTORE_TEST_PROVIDER");
  g_auto(GStrv) specs = NULL;

  /* Our own options, before GTest sees the rest. */
  for (int i = 1; i < argc; i++)
    {
      gboolean ours = TRUE;

      if (g_str_has_prefix (argv[i], "--seed="))
        {
          option_seed = g_ascii_strtoull (argv[i] + strlen ("--seed="), NULL, 10);
          option_seed_set = TRUE;
        }
      else if (g_str_has_prefix (argv[i], "--statements="))
        option_statements = (guint) g_ascii_strtoull (argv[i] + strlen ("--statements="),
                                                      NULL, 10);
      else
        ours = FALSE;
      if (ours)
        {
          memmove (&argv[i], &argv[i + 1], (argc - i) * sizeof (char *));
          argc--;
          i--;
        }
    }

  g_test_init (&argc, &argv, NULL);

  specs = g_strsplit (providers != NULL && *providers != '\0' ? providers : "memory", ",", -1);
  for (guint i = 0; specs[i] != NULL; i++)
    {
      g_autofree char *path = g_strdup_printf ("/sql/differential/%s", specs[i]);

      g_test_add_data_func (path, specs[i], test_differential);
    }
  return g_test_run ();
}
