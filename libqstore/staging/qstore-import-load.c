/* qstore-import-load.c: reading an import's input into its table
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>
#include <unistd.h>

#include <json-glib/json-glib.h>

#include "qstore-error.h"
#include "qstore-i18n-private.h"
#include "qstore-import-private.h"
#include "qstore-record-reader-private.h"
#include "qstore-router-private.h"
#include "qstore-sql-token-private.h"
#include "qstore-staging-marker-private.h"

/* Rows land in batches, each a transaction of its own (unless an append
 * is atomic, which is one): memory follows a batch. A replace run writes
 * its heartbeat with each batch, so a batch lasts two seconds at most. */
#define BATCH_ROWS          50000
#define BATCH_USEC          (2 * G_USEC_PER_SEC)
#define PROGRESS_USEC       (G_USEC_PER_SEC / 5)
#define CHECK_EVERY         256

/* A prepared INSERT for one set of columns. */
typedef struct
{
  sqlite3_stmt      *stmt;
  QStoreInsertShape *shape;
} Inserter;

static void
inserter_free (Inserter *inserter)
{
  sqlite3_finalize (inserter->stmt);
  qstore_insert_shape_free (inserter->shape);
  g_free (inserter);
}

GHashTable *
qstore_import_inserters_new (void)
{
  return g_hash_table_new_full (g_str_hash, g_str_equal, g_free, (GDestroyNotify) inserter_free);
}

/* Errors */

static const char *
source_label (QStoreImport *self)
{
  return self->source_name != NULL ? self->source_name : "the input";
}

/* A failure on a record: where it is, then what was kept. */
static void
set_row_error (QStoreImport  *self,
               GError       **error,
               int            code,
               guint64        line,
               guint          column,
               const char    *column_name,
               const char    *message)
{
  self->error_line = line;
  self->error_column = column;
  g_free (self->error_column_name);
  self->error_column_name = g_strdup (column_name);

  if (column > 0 && column_name != NULL)
    g_set_error (error, QSTORE_ERROR, code, "%s: line %" G_GUINT64_FORMAT ", column %u (“%s”): %s",
                 source_label (self), line, column, column_name, message);
  else if (column > 0)
    g_set_error (error, QSTORE_ERROR, code, "%s: line %" G_GUINT64_FORMAT ", column %u: %s",
                 source_label (self), line, column, message);
  else
    g_set_error (error, QSTORE_ERROR, code, "%s: line %" G_GUINT64_FORMAT ": %s",
                 source_label (self), line, message);
}

/* Adds what became of the import to the message of what failed. */
static void
append_error (GError     **error,
              const char  *format,
              ...) G_GNUC_PRINTF (2, 3);

static void
append_error (GError     **error,
              const char  *format,
              ...)
{
  g_autofree char *said = NULL;
  g_autofree char *added = NULL;
  va_list args;

  if (error == NULL || *error == NULL)
    return;
  va_start (args, format);
  added = g_strdup_vprintf (format, args);
  va_end (args);
  said = (*error)->message;
  (*error)->message = g_strdup_printf ("%s%s %s", said,
                                       g_str_has_suffix (said, ".") ? "" : ".", added);
}

static const char *
column_name (QStoreImport *self,
             guint         column)
{
  return qstore_table_get_column_name (self->target, column);
}

static gboolean
find_column (QStoreImport *self,
             const char   *name,
             guint        *column)
{
  for (guint i = 0; i < qstore_table_get_n_columns (self->target); i++)
    if (g_ascii_strcasecmp (column_name (self, i), name) == 0)
      {
        *column = i;
        return TRUE;
      }
  return FALSE;
}

static char *
list_columns (QStoreImport *self)
{
  g_autoptr(GString) list = g_string_new (NULL);

  for (guint i = 0; i < qstore_table_get_n_columns (self->target); i++)
    g_string_append_printf (list, "%s%s", i > 0 ? ", " : "", column_name (self, i));
  return g_string_free (g_steal_pointer (&list), FALSE);
}

static char *
unknown_column (QStoreImport *self,
                const char   *name)
{
  g_autofree char *known = list_columns (self);

  return g_strdup_printf ("table “%s” has no column “%s” (it has %s)", self->table, name, known);
}

/* Inserting */

static Inserter *
inserter_for (QStoreImport  *self,
              const guint   *columns,
              guint          n,
              GError       **error)
{
  g_autoptr(GString) key = g_string_new (NULL);
  g_autoptr(GString) sql = NULL;
  g_auto(QStoreStatement) statement = { 0 };
  g_autofree char *quoted_into = qstore_sql_quote (self->into);
  Inserter *inserter;

  for (guint i = 0; i < n; i++)
    g_string_append_printf (key, "%u,", columns[i]);
  if ((inserter = g_hash_table_lookup (self->inserters, key->str)) != NULL)
    return inserter;

  sql = g_string_new (NULL);
  g_string_append_printf (sql, "INSERT INTO %s", quoted_into);
  if (n == 0)
    g_string_append (sql, " DEFAULT VALUES");
  else
    {
      g_string_append (sql, " (");
      for (guint i = 0; i < n; i++)
        {
          g_autofree char *quoted = qstore_sql_quote (column_name (self, columns[i]));

          g_string_append_printf (sql, "%s%s", i > 0 ? ", " : "", quoted);
        }
      g_string_append (sql, ") VALUES (");
      for (guint i = 0; i < n; i++)
        g_string_append (sql, i > 0 ? ", ?" : "?");
      g_string_append (sql, ")");
    }

  /* Read as any statement is, then stepped here for every row. An
   * INSERT that gives every column leaves no DEFAULT to work out. */
  if (!qstore_router_read (self->database, sql->str, &statement, error))
    return NULL;
  inserter = g_new0 (Inserter, 1);
  inserter->stmt = g_steal_pointer (&statement.stmt);
  if (n < qstore_table_get_n_columns (self->target))
    inserter->shape = g_steal_pointer (&statement.insert_shape);
  g_hash_table_insert (self->inserters, g_strdup (key->str), inserter);
  return inserter;
}

static void
bind_field (sqlite3_stmt            *stmt,
            int                      position,
            const QStoreImportField *field)
{
  switch (field->kind)
    {
    case QSTORE_FIELD_TEXT:
      sqlite3_bind_text (stmt, position, field->data, field->len, SQLITE_STATIC);
      break;
    case QSTORE_FIELD_BLOB:
      sqlite3_bind_blob (stmt, position, field->data, field->len, SQLITE_STATIC);
      break;
    case QSTORE_FIELD_INTEGER:
      sqlite3_bind_int64 (stmt, position, field->integer);
      break;
    case QSTORE_FIELD_REAL:
      sqlite3_bind_double (stmt, position, field->real);
      break;
    case QSTORE_FIELD_NULL:
    default:
      sqlite3_bind_null (stmt, position);
      break;
    }
}

/* Runs the INSERT as the router runs one, without reading it again: the
 * DEFAULTs of the columns it leaves out come from its shape. */
static gboolean
step (QStoreImport  *self,
      Inserter      *inserter,
      GError       **error)
{
  QStoreDatabase *db = self->database;
  int rc;

  g_clear_error (&db->callback_error);
  db->insert_shape = inserter->shape;
  rc = sqlite3_step (inserter->stmt);
  db->insert_shape = NULL;
  if (rc != SQLITE_DONE)
    qstore_database_set_sqlite_error (db, db->db, rc, error);
  sqlite3_reset (inserter->stmt);
  return rc == SQLITE_DONE;
}

/* Which field a constraint message is about: SQLite names columns as
 * `table.column`, qstore's own messages as `column “name”`. Returns the
 * field's number from 1, 0 when none. */
static guint
field_of_message (QStoreImport  *self,
                  const char    *message,
                  const guint   *columns,
                  guint          n,
                  const char   **name)
{
  for (guint i = 0; i < n; i++)
    {
      g_autofree char *qualified = g_strdup_printf ("%s.%s", self->into,
                                                    column_name (self, columns[i]));
      g_autofree char *named = g_strdup_printf ("column “%s”", column_name (self, columns[i]));
      const char *hit = strstr (message, qualified);

      if (strstr (message, named) != NULL)
        {
          *name = column_name (self, columns[i]);
          return i + 1;
        }
      if (hit != NULL)
        {
          char after = hit[strlen (qualified)];

          if (after == '\0' || after == ',' || after == ' ')
            {
              *name = column_name (self, columns[i]);
              return i + 1;
            }
        }
    }
  *name = NULL;
  return 0;
}

/* A JSON object's values: its keys matched to columns, in the table's
 * column order. */
static gboolean
match_keys (QStoreImport             *self,
            const QStoreImportField  *fields,
            guint                     n_fields,
            guint64                   line,
            guint                    *columns,
            guint                    *order,
            guint                    *n,
            GError                  **error)
{
  *n = 0;
  for (guint k = 0; k < n_fields; k++)
    {
      guint column;

      if (!find_column (self, fields[k].name, &column))
        {
          g_autofree char *message = unknown_column (self, fields[k].name);

          set_row_error (self, error, QSTORE_ERROR_INVALID_ARGUMENT, line, k + 1,
                         fields[k].name, message);
          return FALSE;
        }
      for (guint i = 0; i < *n; i++)
        if (columns[i] == column)
          {
            set_row_error (self, error, QSTORE_ERROR_INVALID_ARGUMENT, line, k + 1,
                           fields[k].name, "the column is given twice");
            return FALSE;
          }
      columns[*n] = column;
      order[(*n)++] = k;
    }

  /* Insertion sort: a record has few keys. */
  for (guint i = 1; i < *n; i++)
    for (guint j = i; j > 0 && columns[j - 1] > columns[j]; j--)
      {
        guint c = columns[j], o = order[j];

        columns[j] = columns[j - 1];
        order[j] = order[j - 1];
        columns[j - 1] = c;
        order[j - 1] = o;
      }
  return TRUE;
}

static gboolean
insert_record (QStoreImport        *self,
               QStoreRecordReader  *reader,
               GError             **error)
{
  guint n_fields;
  const QStoreImportField *fields = qstore_record_reader_get_fields (reader, &n_fields);
  guint64 line = qstore_record_reader_get_line (reader);
  g_autofree guint *keyed = NULL;
  g_autofree guint *order = NULL;
  g_autoptr(GError) local_error = NULL;
  g_autoptr(GString) message = NULL;
  const guint *columns;
  Inserter *inserter;
  const char *name;
  guint n, field;

  if (qstore_record_reader_is_named (reader))
    {
      keyed = g_new (guint, n_fields + 1);
      order = g_new (guint, n_fields + 1);
      if (!match_keys (self, fields, n_fields, line, keyed, order, &n, error) ||
          !(inserter = inserter_for (self, keyed, n, error)))
        return FALSE;
      columns = keyed;
    }
  else
    {
      n = self->mapping->len;
      columns = (const guint *) self->mapping->data;
      if (n_fields != n)
        {
          g_autofree char *what =
            g_strdup_printf ("%u value%s where %u %s expected (%s)", n_fields,
                             n_fields == 1 ? "" : "s", n, n == 1 ? "is" : "are",
                             n_fields > n ? "too many" : "too few");
          guint at = n_fields > n ? n + 1 : n_fields + 1;

          set_row_error (self, error, QSTORE_ERROR_INVALID_ARGUMENT, line, at,
                         at <= n ? column_name (self, columns[at - 1]) : NULL, what);
          return FALSE;
        }
      /* Every such record gives the same columns: one INSERT for all. */
      if (self->mapping_inserter == NULL &&
          !(self->mapping_inserter = inserter_for (self, columns, n, error)))
        return FALSE;
      inserter = self->mapping_inserter;
    }

  for (guint i = 0; i < n; i++)
    bind_field (inserter->stmt, i + 1, &fields[order != NULL ? order[i] : i]);
  if (step (self, inserter, &local_error))
    return TRUE;

  field = field_of_message (self, local_error->message, columns, n, &name);
  if (field > 0 && order != NULL)
    field = order[field - 1] + 1;
  /* SQLite names the table the rows go into: the target is meant. */
  message = g_string_new (local_error->message);
  if (self->into != self->table)
    {
      g_autofree char *staged = g_strconcat (self->into, ".", NULL);
      g_autofree char *target = g_strconcat (self->table, ".", NULL);

      g_string_replace (message, staged, target, 0);
    }
  set_row_error (self, error, local_error->code, line, field, name, message->str);
  return FALSE;
}

/* The columns of the records: --columns, else the header, else all. */
static gboolean
resolve_mapping (QStoreImport        *self,
                 const char * const  *names,
                 guint64              line,
                 GError             **error)
{
  g_array_set_size (self->mapping, 0);
  self->mapping_inserter = NULL;
  if (names == NULL)
    {
      for (guint i = 0; i < qstore_table_get_n_columns (self->target); i++)
        g_array_append_val (self->mapping, i);
      return TRUE;
    }

  for (guint i = 0; names[i] != NULL; i++)
    {
      g_autofree char *message = NULL;
      guint column;

      if (!find_column (self, names[i], &column))
        message = unknown_column (self, names[i]);
      else
        for (guint k = 0; k < i && message == NULL; k++)
          if (g_array_index (self->mapping, guint, k) == column)
            message = g_strdup_printf ("column “%s” is named twice", names[i]);
      if (message != NULL)
        {
          if (line > 0)
            set_row_error (self, error, QSTORE_ERROR_INVALID_ARGUMENT, line, i + 1, names[i],
                           message);
          else
            g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                         _("The columns of the import: %s"), message);
          return FALSE;
        }
      g_array_append_val (self->mapping, column);
    }
  return TRUE;
}

static gboolean
read_header (QStoreImport        *self,
             QStoreRecordReader  *reader,
             GCancellable        *cancellable,
             GError             **error)
{
  g_autoptr(GStrvBuilder) names = g_strv_builder_new ();
  g_auto(GStrv) strv = NULL;
  const QStoreImportField *fields;
  guint n;

  if (!qstore_record_reader_next (reader, cancellable, error))
    return error == NULL || *error == NULL;   /* an empty input */
  fields = qstore_record_reader_get_fields (reader, &n);
  for (guint i = 0; i < n; i++)
    {
      g_autofree char *name = g_strndup (fields[i].data, fields[i].len);

      if (fields[i].kind == QSTORE_FIELD_NULL)
        {
          set_row_error (self, error, QSTORE_ERROR_INVALID_ARGUMENT,
                         qstore_record_reader_get_line (reader), i + 1, NULL,
                         "the header names no column here");
          return FALSE;
        }
      g_strv_builder_add (names, name);
    }
  strv = g_strv_builder_end (names);
  self->good_position = qstore_record_reader_get_position (reader);
  self->good_line = qstore_record_reader_get_next_line (reader);
  /* With the columns given, the header is only skipped. */
  if (self->columns != NULL)
    return TRUE;
  return resolve_mapping (self, (const char * const *) strv,
                          qstore_record_reader_get_line (reader), error);
}

/* The run's record in its marker row: what --resume needs. */
static char *
details_json (QStoreImport *self)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autoptr(JsonGenerator) generator = json_generator_new ();
  g_autoptr(JsonNode) root = NULL;

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "mode");
  json_builder_add_string_value (builder, "replace");
  json_builder_set_member_name (builder, "format");
  json_builder_add_string_value (builder, self->format == QSTORE_IMPORT_FORMAT_CSV ? "csv" : "jsonl");
  json_builder_set_member_name (builder, "columns");
  json_builder_begin_array (builder);
  for (guint i = 0; i < self->mapping->len; i++)
    json_builder_add_string_value (builder, column_name (self, g_array_index (self->mapping, guint, i)));
  json_builder_end_array (builder);
  json_builder_set_member_name (builder, "source");
  json_builder_add_string_value (builder, source_label (self));
  json_builder_set_member_name (builder, "position");
  json_builder_add_int_value (builder, self->good_position);
  json_builder_set_member_name (builder, "line");
  json_builder_add_int_value (builder, self->good_line);
  json_builder_set_member_name (builder, "rows");
  json_builder_add_int_value (builder, self->rows_before + self->rows);
  json_builder_set_member_name (builder, "target_sql");
  json_builder_add_string_value (builder, qstore_table_get_sql (self->target));
  /* Who loads: qstore_staging_discard() will not pull the rug from a
   * process that still runs. */
  json_builder_set_member_name (builder, "pid");
  json_builder_add_int_value (builder, getpid ());
  json_builder_set_member_name (builder, "host");
  json_builder_add_string_value (builder, g_get_host_name ());
  json_builder_end_object (builder);

  root = json_builder_get_root (builder);
  json_generator_set_root (generator, root);
  return json_generator_to_data (generator, NULL);
}

/* Transactions */

static gboolean
begin (QStoreImport  *self,
       GError       **error)
{
  if (!qstore_database_exec (self->database, "BEGIN", error))
    return FALSE;
  self->in_transaction = TRUE;
  self->batch_started = g_get_monotonic_time ();
  self->batch_rows = 0;
  /* Nothing is read before the first row is written. */
  qstore_database_release_read_snapshot (self->database);
  return TRUE;
}

static gboolean
commit (QStoreImport  *self,
        GError       **error)
{
  if (self->mode == QSTORE_IMPORT_MODE_REPLACE)
    {
      g_autofree char *details = details_json (self);

      if (!qstore_staged_beat (self->database, &self->run, details, error))
        return FALSE;
    }
  self->in_transaction = FALSE;
  if (!qstore_database_exec (self->database, "COMMIT", error))
    {
      qstore_database_exec (self->database, "ROLLBACK", NULL);
      return FALSE;
    }
  self->rows_kept = self->rows;
  return TRUE;
}

static void
rollback (QStoreImport *self)
{
  if (self->in_transaction)
    qstore_database_exec (self->database, "ROLLBACK", NULL);
  self->in_transaction = FALSE;
}

static void
report_progress (QStoreImport       *self,
                 QStoreRecordReader *reader,
                 gboolean            last)
{
  gint64 now = g_get_monotonic_time ();

  if (!last && now - self->last_progress < PROGRESS_USEC)
    return;
  self->last_progress = now;
  self->bytes_read = qstore_record_reader_get_bytes_read (reader);
  qstore_import_emit_progress (self);
}

/* Reads every record into the table (or the staging table), committing
 * batch by batch unless the whole load is one transaction. */
static gboolean
load (QStoreImport        *self,
      QStoreRecordReader  *reader,
      GCancellable        *cancellable,
      GError             **error)
{
  gboolean batches = self->mode == QSTORE_IMPORT_MODE_REPLACE || !self->atomic;
  GError *local_error = NULL;

  if (!begin (self, error))
    return FALSE;

  for (;;)
    {
      if (!qstore_record_reader_next (reader, cancellable, &local_error))
        {
          if (local_error == NULL)
            break;
          if (qstore_record_reader_get_error_line (reader) > 0 &&
              local_error->domain == QSTORE_ERROR &&
              local_error->code == QSTORE_ERROR_INVALID_ARGUMENT)
            {
              self->error_line = qstore_record_reader_get_error_line (reader);
              self->error_column = qstore_record_reader_get_error_column (reader);
              g_prefix_error (&local_error, _("%s: "), source_label (self));
            }
          g_propagate_error (error, local_error);
          return FALSE;
        }
      if (!insert_record (self, reader, error))
        return FALSE;

      self->rows++;
      self->batch_rows++;
      self->good_position = qstore_record_reader_get_position (reader);
      self->good_line = qstore_record_reader_get_next_line (reader);

      if (self->rows % CHECK_EVERY == 0)
        {
          if (g_cancellable_set_error_if_cancelled (cancellable, error))
            return FALSE;
          report_progress (self, reader, FALSE);
          if (batches && (self->batch_rows >= BATCH_ROWS ||
                          g_get_monotonic_time () - self->batch_started >= BATCH_USEC))
            if (!commit (self, error) || !begin (self, error))
              return FALSE;
        }
    }

  if (!commit (self, error))
    return FALSE;
  report_progress (self, reader, TRUE);
  return TRUE;
}

/* After a load failed: what it keeps, and the message says so. */
static void
fail_load (QStoreImport  *self,
           GError       **error)
{
  g_autoptr(GError) cleanup_error = NULL;
  guint64 staged;

  if (self->atomic)
    {
      rollback (self);
      self->rows_kept = 0;
      if (self->mode == QSTORE_IMPORT_MODE_REPLACE && self->run.id != 0)
        {
          const char * const tables[] = { self->run.staging, NULL };

          if (!qstore_staged_drop (self->database, self->run.id, self->run.target, tables,
                                   &cleanup_error))
            append_error (error, "Its staging table “%s” stays, for qstore staging --sweep: %s.",
                          self->run.staging, cleanup_error->message);
        }
      append_error (error, "Nothing was imported: table “%s” is as it was", self->table);
      return;
    }

  /* Not atomic: the rows before the failing one stay. SQLite undid the
   * failing statement; the batch commits without it. */
  if (self->in_transaction && !commit (self, &cleanup_error))
    {
      rollback (self);
      append_error (error, "The rows since the last commit could not be kept: %s.",
                    cleanup_error->message);
    }
  staged = self->rows_before + self->rows_kept;
  if (self->mode == QSTORE_IMPORT_MODE_REPLACE)
    append_error (error, "Table “%s” is as it was; the %" G_GUINT64_FORMAT " row%s before the "
                  "failure %s staged in “%s”: fix the input, then continue with qstore import "
                  "--resume %s FILE, or discard them with qstore staging --discard %s",
                  self->table, staged, staged == 1 ? "" : "s", staged == 1 ? "is" : "are",
                  self->run.staging, self->table, self->table);
  else
    append_error (error, "The %" G_GUINT64_FORMAT " row%s before the failure %s imported "
                  "(--no-atomic)", self->rows_kept, self->rows_kept == 1 ? "" : "s",
                  self->rows_kept == 1 ? "was" : "were");
}

/* Resuming */

static gboolean
read_details (QStoreImport      *self,
              QStoreStagingRun  *run,
              guint64           *position,
              GError           **error)
{
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GStrvBuilder) names = g_strv_builder_new ();
  g_auto(GStrv) strv = NULL;
  const char *details = qstore_staging_run_get_details (run);
  JsonObject *object;
  JsonArray *columns;
  JsonNode *root;

  if (details == NULL || !json_parser_load_from_data (parser, details, -1, NULL) ||
      !(root = json_parser_get_root (parser)) || !JSON_NODE_HOLDS_OBJECT (root) ||
      !(object = json_node_get_object (root)) ||
      !json_object_has_member (object, "columns") || !json_object_has_member (object, "position") ||
      !json_object_has_member (object, "format"))
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_CORRUPT,
                   _("The record of the interrupted import into “%s” does not say where it "
                   "stopped: discard it with qstore staging --discard %s and import again"),
                   self->table, self->table);
      return FALSE;
    }
  if (g_strcmp0 (json_object_get_string_member_with_default (object, "target_sql", ""),
                 qstore_table_get_sql (self->target)) != 0)
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                   _("Table “%s” changed since the interrupted import started: its staged rows "
                   "have the old columns; discard them with qstore staging --discard %s and "
                   "import again"), self->table, self->table);
      return FALSE;
    }

  self->format = g_str_equal (json_object_get_string_member_with_default (object, "format", ""),
                              "jsonl") ? QSTORE_IMPORT_FORMAT_JSONL : QSTORE_IMPORT_FORMAT_CSV;
  columns = json_object_get_array_member (object, "columns");
  for (guint i = 0; columns != NULL && i < json_array_get_length (columns); i++)
    g_strv_builder_add (names, json_array_get_string_element (columns, i));
  strv = g_strv_builder_end (names);
  *position = json_object_get_int_member (object, "position");
  self->good_position = *position;
  self->good_line = json_object_get_int_member_with_default (object, "line", 1);
  self->rows_before = json_object_get_int_member_with_default (object, "rows", 0);
  return resolve_mapping (self, (const char * const *) strv, 0, error);
}

/* The staged rows must be those the record counts: where commits go
 * store by store (a provider without an atomic batch), a crash may have
 * stored the record and not the rows, or the rows and not the record,
 * and continuing would swap in a table with rows missing or twice. */
static gboolean
check_staged_rows (QStoreImport  *self,
                   GError       **error)
{
  g_autofree char *quoted = qstore_sql_quote (self->run.staging);
  g_autofree char *sql = g_strdup_printf ("SELECT count(*) FROM %s", quoted);
  g_autoptr(QStoreResult) result = NULL;
  g_autoptr(GVariant) count = NULL;
  gint64 staged;

  if (!(result = qstore_database_query (self->database, sql, NULL, error)))
    return FALSE;
  count = qstore_result_get_value (result, 0, 0);
  staged = g_variant_is_of_type (count, G_VARIANT_TYPE_INT64) ? g_variant_get_int64 (count) : -1;
  if (staged == (gint64) self->rows_before)
    return TRUE;
  g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_CORRUPT,
               "The interrupted import into “%s” recorded %" G_GUINT64_FORMAT " staged rows, "
               "but “%s” holds %" G_GINT64_FORMAT ": it cannot be continued safely; discard it "
               "with qstore staging --discard %s and import again", self->table,
               self->rows_before, self->run.staging, staged, self->table);
  return FALSE;
}

/* Finds the resumable run of the table and makes this run its sequel. */
static gboolean
start_resume (QStoreImport        *self,
              QStoreRecordReader **reader,
              GInputStream        *input,
              GCancellable        *cancellable,
              GError             **error)
{
  g_autoptr(QStoreStagingRun) found = NULL;
  g_autoptr(GError) local_error = NULL;
  guint64 position = 0;

  found = qstore_staged_find_run (self->database, self->table, &local_error);
  if (found == NULL)
    {
      if (local_error != NULL)
        g_propagate_error (error, g_steal_pointer (&local_error));
      else
        g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_NOT_FOUND,
                     _("No interrupted import into table “%s” is recorded: nothing to resume "
                     "(start one with qstore import --mode replace --no-atomic)"), self->table);
      return FALSE;
    }
  if (!qstore_staging_run_get_resumable (found) || qstore_staging_run_get_swapped (found))
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                   _("The interrupted import into table “%s” is not resumable (it was not "
                   "started --no-atomic): its staging table is dropped by qstore staging "
                   "--sweep once it is stale; import again without --resume"), self->table);
      return FALSE;
    }
  qstore_staged_adopt (&self->run, found);
  if (qstore_database_get_table (self->database, "main", self->run.staging) == NULL)
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_NOT_FOUND,
                   _("The staging table “%s” of the interrupted import into “%s” is gone: "
                   "discard the run with qstore staging --discard %s and import again"),
                   self->run.staging, self->table, self->table);
      return FALSE;
    }
  if (!read_details (self, found, &position, error) ||
      !check_staged_rows (self, error))
    return FALSE;

  *reader = qstore_record_reader_new (input, self->format);
  return qstore_record_reader_skip (*reader, position, self->good_line, cancellable, error);
}

/* Setting up */

gboolean
qstore_import_check_target (QStoreImport  *self,
                            GError       **error)
{
  QStoreDatabase *db = self->database;
  QStoreSqlTable *entry;

  if (!qstore_database_check_open (db, error) || !qstore_database_check_writable (db, error))
    return FALSE;
  if (qstore_staging_marker_get_importer (db) != NULL)
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_BUSY,
                   _("Another import is running on this database: start the import into “%s” "
                   "once it has finished"), self->table);
      return FALSE;
    }
  if (!sqlite3_get_autocommit (db->db) || qstore_coordinator_in_transaction (db->coordinator))
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_BUSY,
                   _("A transaction is open on this database: commit or roll it back before "
                   "importing into “%s”"), self->table);
      return FALSE;
    }
  if (qstore_staging_is_reserved_name (self->table))
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                   _("“%s” belongs to the bookkeeping of staged imports: import into the table "
                   "it stages"), self->table);
      return FALSE;
    }
  entry = qstore_database_lookup (db, self->table);
  if (entry == NULL)
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_NOT_FOUND,
                   _("No table “%s” in the database: create it first (CREATE TABLE %s (…))"),
                   self->table, self->table);
      return FALSE;
    }
  if (entry->owner != NULL)
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_READ_ONLY,
                   _("Table “%s” holds the rows of a materialized view, which keeps them up to "
                   "date: import into the tables it reads instead"), self->table);
      return FALSE;
    }
  self->target = entry->table;
  return TRUE;
}

gboolean
qstore_import_load (QStoreImport  *self,
                    GInputStream  *input,
                    GCancellable  *cancellable,
                    GError       **error)
{
  g_autoptr(QStoreRecordReader) reader = NULL;
  g_autoptr(GError) tidy_error = NULL;
  gboolean replace = self->mode == QSTORE_IMPORT_MODE_REPLACE;
  gboolean committed = FALSE;
  gboolean ok;

  if (self->resume)
    {
      if (!replace || self->atomic)
        {
          g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                       _("Only a replace import started --no-atomic can be resumed: set the "
                       "mode to replace and atomic off to continue one"));
          return FALSE;
        }
      if (!start_resume (self, &reader, input, cancellable, error))
        return FALSE;
    }
  else
    {
      reader = qstore_record_reader_new (input, self->format);
      if (!resolve_mapping (self, (const char * const *) self->columns, 0, error))
        return FALSE;
      if (self->format == QSTORE_IMPORT_FORMAT_CSV && self->header &&
          !read_header (self, reader, cancellable, error))
        {
          append_error (error, "Nothing was imported: table “%s” is as it was", self->table);
          return FALSE;
        }
      if (replace)
        {
          g_autofree char *details = details_json (self);

          if (!qstore_staged_check_free (self->database, self->table, error) ||
              !qstore_staged_begin (self->database, self->table, !self->atomic, details,
                                    &self->run, error))
            return FALSE;
        }
    }

  if (replace)
    {
      self->into = self->run.staging;
      self->staging_table = g_strdup (self->run.staging);
    }
  else
    self->into = self->table;

  ok = load (self, reader, cancellable, error);
  self->bytes_read = qstore_record_reader_get_bytes_read (reader);
  /* The swap drops the staging table: no statement may hold it. */
  self->mapping_inserter = NULL;
  g_hash_table_remove_all (self->inserters);
  if (!ok)
    {
      fail_load (self, error);
      return FALSE;
    }

  if (!replace || qstore_staged_swap (self->database, &self->run, &committed, &tidy_error))
    return TRUE;
  if (committed)
    {
      /* The rows are in: what is left over is reported and swept. */
      g_message ("The import into “%s” is done, but its staging table “%s” stays: %s",
                 self->table, self->run.staging, tidy_error->message);
      return TRUE;
    }
  g_propagate_error (error, g_steal_pointer (&tidy_error));
  self->rows_kept = 0;
  if (self->atomic)
    fail_load (self, error);
  else
    append_error (error, "Table “%s” is as it was; the %" G_GUINT64_FORMAT " rows are staged "
                  "in “%s”: qstore import --resume %s FILE tries the swap again", self->table,
                  self->rows_before + self->rows, self->run.staging, self->table);
  return FALSE;
}
