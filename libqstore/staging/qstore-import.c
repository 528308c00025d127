/* qstore-import.c: loading a table from CSV or JSON lines
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "qstore-enums.h"
#include "qstore-error.h"
#include "qstore-i18n-private.h"
#include "qstore-import-private.h"
#include "qstore-staging-marker-private.h"

/**
 * QStoreImport:
 *
 * Loads rows into a table of a [class@Database] from CSV (RFC 4180) or JSON
 * lines, reading the input a buffer at a time: memory follows the longest
 * row and the rows of one transaction, never the size of the input.
 *
 * Each value goes through SQL's INSERT, so it takes the column's affinity
 * (`"42"` into an INTEGER column is the integer 42), and DEFAULTs,
 * constraints, indexes and materialized views over the table behave as for
 * any INSERT. In CSV an empty unquoted field is NULL and `""` the empty
 * text; a header row (the default, see [property@Import:header]) maps
 * fields to columns by name. In JSON lines each line is an object whose
 * keys are columns, or an array of values in column order; `{"$blob":
 * "<base64>"}` is a blob.
 *
 * %QSTORE_IMPORT_MODE_APPEND inserts the rows; when a row fails (a value
 * that cannot be read, a constraint), nothing of the import is kept. With
 * [property@Import:atomic] off, rows are committed as they land, and those
 * before a failing row stay.
 *
 * %QSTORE_IMPORT_MODE_REPLACE loads the rows into a staging table (a clone
 * of the table's schema, see qstore_staging_table_name_for()) while a row
 * of the marker table records the run and its heartbeat; then one short
 * transaction deletes the table's rows and inserts the staged ones, and
 * the staging table goes. Whenever it stops, the table holds either its
 * old rows or the new ones, never a mix. An interrupted run leaves its
 * staging table behind: see [class@StagingLeftovers]. With
 * [property@Import:atomic] off the run is resumable: what it staged is
 * kept, and [property@Import:resume] continues it.
 *
 * The [signal@Import::progress] signal reports how far a run got, a few
 * times a second. A run can be stopped with its #GCancellable: that
 * fails it as a bad row would.
 *
 * One import runs on a database at a time, and not inside a transaction
 * opened with SQL.
 */

G_DEFINE_FINAL_TYPE (QStoreImport, qstore_import, G_TYPE_OBJECT)

enum {
  PROP_0,
  PROP_DATABASE,
  PROP_TABLE,
  PROP_MODE,
  PROP_FORMAT,
  PROP_ATOMIC,
  PROP_HEADER,
  PROP_COLUMNS,
  PROP_RESUME,
  PROP_SOURCE_NAME,
  PROP_SOURCE_SIZE,
  PROP_ROWS,
  PROP_BYTES_READ,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

enum {
  SIGNAL_PROGRESS,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

static void
qstore_import_finalize (GObject *object)
{
  QStoreImport *self = QSTORE_IMPORT (object);

  g_clear_object (&self->database);
  g_free (self->table);
  g_strfreev (self->columns);
  g_free (self->source_name);
  g_free (self->staging_table);
  g_free (self->error_column_name);

  G_OBJECT_CLASS (qstore_import_parent_class)->finalize (object);
}

static void
qstore_import_get_property (GObject    *object,
                            guint       prop_id,
                            GValue     *value,
                            GParamSpec *pspec)
{
  QStoreImport *self = QSTORE_IMPORT (object);

  switch (prop_id)
    {
    case PROP_DATABASE:
      g_value_set_object (value, self->database);
      break;
    case PROP_TABLE:
      g_value_set_string (value, self->table);
      break;
    case PROP_MODE:
      g_value_set_enum (value, self->mode);
      break;
    case PROP_FORMAT:
      g_value_set_enum (value, self->format);
      break;
    case PROP_ATOMIC:
      g_value_set_boolean (value, self->atomic);
      break;
    case PROP_HEADER:
      g_value_set_boolean (value, self->header);
      break;
    case PROP_COLUMNS:
      g_value_set_boxed (value, self->columns);
      break;
    case PROP_RESUME:
      g_value_set_boolean (value, self->resume);
      break;
    case PROP_SOURCE_NAME:
      g_value_set_string (value, self->source_name);
      break;
    case PROP_SOURCE_SIZE:
      g_value_set_int64 (value, self->source_size);
      break;
    case PROP_ROWS:
      g_value_set_uint64 (value, self->rows);
      break;
    case PROP_BYTES_READ:
      g_value_set_uint64 (value, self->bytes_read);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
qstore_import_set_property (GObject      *object,
                            guint         prop_id,
                            const GValue *value,
                            GParamSpec   *pspec)
{
  QStoreImport *self = QSTORE_IMPORT (object);

  switch (prop_id)
    {
    case PROP_DATABASE:
      self->database = g_value_dup_object (value);
      break;
    case PROP_TABLE:
      self->table = g_value_dup_string (value);
      break;
    case PROP_MODE:
      qstore_import_set_mode (self, g_value_get_enum (value));
      break;
    case PROP_FORMAT:
      qstore_import_set_format (self, g_value_get_enum (value));
      break;
    case PROP_ATOMIC:
      qstore_import_set_atomic (self, g_value_get_boolean (value));
      break;
    case PROP_HEADER:
      qstore_import_set_header (self, g_value_get_boolean (value));
      break;
    case PROP_COLUMNS:
      qstore_import_set_columns (self, g_value_get_boxed (value));
      break;
    case PROP_RESUME:
      qstore_import_set_resume (self, g_value_get_boolean (value));
      break;
    case PROP_SOURCE_NAME:
      qstore_import_set_source_name (self, g_value_get_string (value));
      break;
    case PROP_SOURCE_SIZE:
      qstore_import_set_source_size (self, g_value_get_int64 (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
qstore_import_class_init (QStoreImportClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GParamFlags rw = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY;
  GParamFlags ro = G_PARAM_READABLE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY;

  object_class->finalize = qstore_import_finalize;
  object_class->get_property = qstore_import_get_property;
  object_class->set_property = qstore_import_set_property;

  /**
   * QStoreImport:database:
   *
   * The database the table is in.
   */
  properties[PROP_DATABASE] =
    g_param_spec_object ("database", NULL, NULL, QSTORE_TYPE_DATABASE,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  /**
   * QStoreImport:table:
   *
   * The table the rows go into.
   */
  properties[PROP_TABLE] =
    g_param_spec_string ("table", NULL, NULL, NULL,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  /**
   * QStoreImport:mode:
   *
   * Whether the rows are added to the table's or replace them.
   */
  properties[PROP_MODE] =
    g_param_spec_enum ("mode", NULL, NULL, QSTORE_TYPE_IMPORT_MODE,
                       QSTORE_IMPORT_MODE_APPEND, rw);
  /**
   * QStoreImport:format:
   *
   * How the input is written.
   */
  properties[PROP_FORMAT] =
    g_param_spec_enum ("format", NULL, NULL, QSTORE_TYPE_IMPORT_FORMAT,
                       QSTORE_IMPORT_FORMAT_CSV, rw);
  /**
   * QStoreImport:atomic:
   *
   * Whether a run that fails keeps nothing (the default). Off, rows are
   * committed as they land: an append keeps the rows before a failing
   * one, and a replace run is resumable.
   */
  properties[PROP_ATOMIC] = g_param_spec_boolean ("atomic", NULL, NULL, TRUE, rw);
  /**
   * QStoreImport:header:
   *
   * Whether the first CSV record names the columns of the fields (the
   * default). With [property@Import:columns] set, it is read and skipped.
   * JSON lines have no header.
   */
  properties[PROP_HEADER] = g_param_spec_boolean ("header", NULL, NULL, TRUE, rw);
  /**
   * QStoreImport:columns:
   *
   * The columns the values of a record go to, in order; %NULL for the
   * header's (CSV) or every column of the table in order. The other
   * columns take their DEFAULT.
   */
  properties[PROP_COLUMNS] = g_param_spec_boxed ("columns", NULL, NULL, G_TYPE_STRV, rw);
  /**
   * QStoreImport:resume:
   *
   * Whether the run continues the resumable replace run recorded for the
   * table, with the options it started with, reading the input from
   * where the run's committed rows end.
   */
  properties[PROP_RESUME] = g_param_spec_boolean ("resume", NULL, NULL, FALSE, rw);
  /**
   * QStoreImport:source-name:
   *
   * What messages call the input, such as its file name.
   */
  properties[PROP_SOURCE_NAME] = g_param_spec_string ("source-name", NULL, NULL, NULL, rw);
  /**
   * QStoreImport:source-size:
   *
   * The input's size in bytes, -1 when unknown: what progress is measured
   * against.
   */
  properties[PROP_SOURCE_SIZE] =
    g_param_spec_int64 ("source-size", NULL, NULL, -1, G_MAXINT64, -1, rw);
  /**
   * QStoreImport:rows:
   *
   * How many rows the last run stored.
   */
  properties[PROP_ROWS] = g_param_spec_uint64 ("rows", NULL, NULL, 0, G_MAXUINT64, 0, ro);
  /**
   * QStoreImport:bytes-read:
   *
   * How many bytes of input the last run read.
   */
  properties[PROP_BYTES_READ] =
    g_param_spec_uint64 ("bytes-read", NULL, NULL, 0, G_MAXUINT64, 0, ro);

  g_object_class_install_properties (object_class, N_PROPS, properties);

  /**
   * QStoreImport::progress:
   * @self: the import
   * @rows: the rows stored so far
   * @bytes_read: the bytes of input read so far
   *
   * Emitted while a run reads, a few times a second at most, and once at
   * its end.
   */
  signals[SIGNAL_PROGRESS] =
    g_signal_new ("progress", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                  NULL, G_TYPE_NONE, 2, G_TYPE_UINT64, G_TYPE_UINT64);
}

static void
qstore_import_init (QStoreImport *self)
{
  self->atomic = TRUE;
  self->header = TRUE;
  self->source_size = -1;
}

/**
 * qstore_import_new:
 * @database: the database, opened for writing
 * @table: the table to load
 *
 * Makes an import into @table, appending CSV with a header row unless set
 * otherwise.
 *
 * Returns: (transfer full): the import
 */
QStoreImport *
qstore_import_new (QStoreDatabase *database,
                   const char     *table)
{
  g_return_val_if_fail (QSTORE_IS_DATABASE (database), NULL);
  g_return_val_if_fail (table != NULL, NULL);

  return g_object_new (QSTORE_TYPE_IMPORT, "database", database, "table", table, NULL);
}

/**
 * qstore_import_get_database:
 * @self: a #QStoreImport
 *
 * Gets the database.
 *
 * Returns: (transfer none): the database
 */
QStoreDatabase *
qstore_import_get_database (QStoreImport *self)
{
  g_return_val_if_fail (QSTORE_IS_IMPORT (self), NULL);

  return self->database;
}

/**
 * qstore_import_get_table:
 * @self: a #QStoreImport
 *
 * Gets the table the rows go into.
 *
 * Returns: (transfer none): the table's name
 */
const char *
qstore_import_get_table (QStoreImport *self)
{
  g_return_val_if_fail (QSTORE_IS_IMPORT (self), NULL);

  return self->table;
}

/**
 * qstore_import_get_mode:
 * @self: a #QStoreImport
 *
 * Gets whether the rows are added or replace the table's.
 *
 * Returns: the mode
 */
QStoreImportMode
qstore_import_get_mode (QStoreImport *self)
{
  g_return_val_if_fail (QSTORE_IS_IMPORT (self), QSTORE_IMPORT_MODE_APPEND);

  return self->mode;
}

/**
 * qstore_import_set_mode:
 * @self: a #QStoreImport
 * @mode: the mode
 *
 * Sets whether the rows are added or replace the table's.
 */
void
qstore_import_set_mode (QStoreImport     *self,
                        QStoreImportMode  mode)
{
  g_return_if_fail (QSTORE_IS_IMPORT (self));
  g_return_if_fail (mode <= QSTORE_IMPORT_MODE_REPLACE);

  if (self->mode == mode)
    return;
  self->mode = mode;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_MODE]);
}

/**
 * qstore_import_get_format:
 * @self: a #QStoreImport
 *
 * Gets how the input is written.
 *
 * Returns: the format
 */
QStoreImportFormat
qstore_import_get_format (QStoreImport *self)
{
  g_return_val_if_fail (QSTORE_IS_IMPORT (self), QSTORE_IMPORT_FORMAT_CSV);

  return self->format;
}

/**
 * qstore_import_set_format:
 * @self: a #QStoreImport
 * @format: the format
 *
 * Sets how the input is written.
 */
void
qstore_import_set_format (QStoreImport       *self,
                          QStoreImportFormat  format)
{
  g_return_if_fail (QSTORE_IS_IMPORT (self));
  g_return_if_fail (format <= QSTORE_IMPORT_FORMAT_JSONL);

  if (self->format == format)
    return;
  self->format = format;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_FORMAT]);
}

/**
 * qstore_import_get_atomic:
 * @self: a #QStoreImport
 *
 * Gets whether a failed run keeps nothing.
 *
 * Returns: %TRUE when atomic
 */
gboolean
qstore_import_get_atomic (QStoreImport *self)
{
  g_return_val_if_fail (QSTORE_IS_IMPORT (self), TRUE);

  return self->atomic;
}

/**
 * qstore_import_set_atomic:
 * @self: a #QStoreImport
 * @atomic: whether a failed run keeps nothing
 *
 * Sets whether a failed run keeps nothing (see [property@Import:atomic]).
 */
void
qstore_import_set_atomic (QStoreImport *self,
                          gboolean      atomic)
{
  g_return_if_fail (QSTORE_IS_IMPORT (self));

  atomic = !!atomic;
  if (self->atomic == atomic)
    return;
  self->atomic = atomic;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_ATOMIC]);
}

/**
 * qstore_import_get_header:
 * @self: a #QStoreImport
 *
 * Gets whether the first CSV record names the columns.
 *
 * Returns: %TRUE when the input has a header row
 */
gboolean
qstore_import_get_header (QStoreImport *self)
{
  g_return_val_if_fail (QSTORE_IS_IMPORT (self), TRUE);

  return self->header;
}

/**
 * qstore_import_set_header:
 * @self: a #QStoreImport
 * @header: whether the first CSV record names the columns
 *
 * Sets whether the first CSV record names the columns.
 */
void
qstore_import_set_header (QStoreImport *self,
                          gboolean      header)
{
  g_return_if_fail (QSTORE_IS_IMPORT (self));

  header = !!header;
  if (self->header == header)
    return;
  self->header = header;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_HEADER]);
}

/**
 * qstore_import_get_columns:
 * @self: a #QStoreImport
 *
 * Gets the columns the values of a record go to.
 *
 * Returns: (transfer none) (nullable) (array zero-terminated=1): the
 *   columns, or %NULL
 */
const char * const *
qstore_import_get_columns (QStoreImport *self)
{
  g_return_val_if_fail (QSTORE_IS_IMPORT (self), NULL);

  return (const char * const *) self->columns;
}

/**
 * qstore_import_set_columns:
 * @self: a #QStoreImport
 * @columns: (nullable) (array zero-terminated=1): the columns, or %NULL
 *
 * Sets the columns the values of a record go to (see
 * [property@Import:columns]).
 */
void
qstore_import_set_columns (QStoreImport       *self,
                           const char * const *columns)
{
  g_return_if_fail (QSTORE_IS_IMPORT (self));

  g_strfreev (self->columns);
  self->columns = g_strdupv ((char **) columns);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_COLUMNS]);
}

/**
 * qstore_import_get_resume:
 * @self: a #QStoreImport
 *
 * Gets whether the run continues a resumable one.
 *
 * Returns: %TRUE to resume
 */
gboolean
qstore_import_get_resume (QStoreImport *self)
{
  g_return_val_if_fail (QSTORE_IS_IMPORT (self), FALSE);

  return self->resume;
}

/**
 * qstore_import_set_resume:
 * @self: a #QStoreImport
 * @resume: whether to continue the resumable run of the table
 *
 * Sets whether the run continues a resumable one (see
 * [property@Import:resume]).
 */
void
qstore_import_set_resume (QStoreImport *self,
                          gboolean      resume)
{
  g_return_if_fail (QSTORE_IS_IMPORT (self));

  resume = !!resume;
  if (self->resume == resume)
    return;
  self->resume = resume;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_RESUME]);
}

/**
 * qstore_import_get_source_name:
 * @self: a #QStoreImport
 *
 * Gets what messages call the input.
 *
 * Returns: (transfer none) (nullable): the name
 */
const char *
qstore_import_get_source_name (QStoreImport *self)
{
  g_return_val_if_fail (QSTORE_IS_IMPORT (self), NULL);

  return self->source_name;
}

/**
 * qstore_import_set_source_name:
 * @self: a #QStoreImport
 * @name: (nullable): what messages call the input
 *
 * Sets what messages call the input; qstore_import_run_file() sets it.
 */
void
qstore_import_set_source_name (QStoreImport *self,
                               const char   *name)
{
  g_return_if_fail (QSTORE_IS_IMPORT (self));

  if (g_strcmp0 (self->source_name, name) == 0)
    return;
  g_free (self->source_name);
  self->source_name = g_strdup (name);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_SOURCE_NAME]);
}

/**
 * qstore_import_get_source_size:
 * @self: a #QStoreImport
 *
 * Gets the input's size.
 *
 * Returns: bytes, or -1 when unknown
 */
gint64
qstore_import_get_source_size (QStoreImport *self)
{
  g_return_val_if_fail (QSTORE_IS_IMPORT (self), -1);

  return self->source_size;
}

/**
 * qstore_import_set_source_size:
 * @self: a #QStoreImport
 * @size: bytes, or -1 when unknown
 *
 * Sets the input's size; qstore_import_run_file() sets it.
 */
void
qstore_import_set_source_size (QStoreImport *self,
                               gint64        size)
{
  g_return_if_fail (QSTORE_IS_IMPORT (self));

  size = MAX (size, -1);
  if (self->source_size == size)
    return;
  self->source_size = size;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_SOURCE_SIZE]);
}

/**
 * qstore_import_get_rows:
 * @self: a #QStoreImport
 *
 * Gets how many rows the last run stored: into the table, or for a
 * replace run into its staging table. A resumed run counts its own.
 *
 * Returns: the number of rows
 */
guint64
qstore_import_get_rows (QStoreImport *self)
{
  g_return_val_if_fail (QSTORE_IS_IMPORT (self), 0);

  return self->rows;
}

/**
 * qstore_import_get_rows_kept:
 * @self: a #QStoreImport
 *
 * Gets how many rows of a failed run stay: 0 for an atomic run; for one
 * that is not, the rows before the failing one (in the table for an
 * append, staged for a replace run to resume).
 *
 * Returns: the number of rows
 */
guint64
qstore_import_get_rows_kept (QStoreImport *self)
{
  g_return_val_if_fail (QSTORE_IS_IMPORT (self), 0);

  return self->rows_kept;
}

/**
 * qstore_import_get_bytes_read:
 * @self: a #QStoreImport
 *
 * Gets how many bytes of input the last run read.
 *
 * Returns: the number of bytes
 */
guint64
qstore_import_get_bytes_read (QStoreImport *self)
{
  g_return_val_if_fail (QSTORE_IS_IMPORT (self), 0);

  return self->bytes_read;
}

/**
 * qstore_import_get_staging_table:
 * @self: a #QStoreImport
 *
 * Gets the staging table the last replace run loaded into.
 *
 * Returns: (transfer none) (nullable): its name, or %NULL for an append
 */
const char *
qstore_import_get_staging_table (QStoreImport *self)
{
  g_return_val_if_fail (QSTORE_IS_IMPORT (self), NULL);

  return self->staging_table;
}

/**
 * qstore_import_get_error_line:
 * @self: a #QStoreImport
 *
 * Gets the line of the input where the last run failed (the line a
 * record starts on, or the line of a bad byte).
 *
 * Returns: the line, from 1; 0 when the run did not fail on the input
 */
guint64
qstore_import_get_error_line (QStoreImport *self)
{
  g_return_val_if_fail (QSTORE_IS_IMPORT (self), 0);

  return self->error_line;
}

/**
 * qstore_import_get_error_column:
 * @self: a #QStoreImport
 *
 * Gets the column of the input where the last run failed: in CSV the
 * field's number; in JSON lines the character's position on the line for
 * text that is not JSON, else the value's position in the record.
 *
 * Returns: the column, from 1; 0 when unknown
 */
guint
qstore_import_get_error_column (QStoreImport *self)
{
  g_return_val_if_fail (QSTORE_IS_IMPORT (self), 0);

  return self->error_column;
}

/**
 * qstore_import_get_error_column_name:
 * @self: a #QStoreImport
 *
 * Gets the table column the value the last run failed on was for.
 *
 * Returns: (transfer none) (nullable): the column's name, or %NULL when
 *   unknown
 */
const char *
qstore_import_get_error_column_name (QStoreImport *self)
{
  g_return_val_if_fail (QSTORE_IS_IMPORT (self), NULL);

  return self->error_column_name;
}

static void
reset_results (QStoreImport *self)
{
  self->rows = 0;
  self->rows_kept = 0;
  self->rows_before = 0;
  self->bytes_read = 0;
  self->error_line = 0;
  self->error_column = 0;
  g_clear_pointer (&self->error_column_name, g_free);
  g_clear_pointer (&self->staging_table, g_free);
  self->good_position = 0;
  self->good_line = 1;
  self->last_progress = 0;
}

void
qstore_import_emit_progress (QStoreImport *self)
{
  g_signal_emit (self, signals[SIGNAL_PROGRESS], 0, self->rows, self->bytes_read);
}

/**
 * qstore_import_run:
 * @self: a #QStoreImport
 * @input: the rows, as [property@Import:format] writes them
 * @cancellable: (nullable): stops the run, which then fails with
 *   %G_IO_ERROR_CANCELLED
 * @error: return location for a #GError
 *
 * Loads the rows of @input into the table, as [class@Import] describes,
 * blocking until the input ends or the run fails.
 *
 * A row that cannot be read or stored fails the run with an error that
 * says where, as `SOURCE: line L, column C (“name”): what`, and what was
 * kept; qstore_import_get_error_line() and qstore_import_get_error_column()
 * give the place. Errors are %QSTORE_ERROR_INVALID_ARGUMENT for input
 * that cannot be read as rows, %QSTORE_ERROR_CONSTRAINT (and the other
 * codes of SQL) for a row the table refuses, %QSTORE_ERROR_BUSY when
 * another import into the table runs, %QSTORE_ERROR_EXISTS when an
 * interrupted one left its staging table.
 *
 * Returns: %TRUE when every row was stored
 */
gboolean
qstore_import_run (QStoreImport  *self,
                   GInputStream  *input,
                   GCancellable  *cancellable,
                   GError       **error)
{
  gboolean ok;

  g_return_val_if_fail (QSTORE_IS_IMPORT (self), FALSE);
  g_return_val_if_fail (G_IS_INPUT_STREAM (input), FALSE);
  g_return_val_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  reset_results (self);
  if (!qstore_import_check_target (self, error))
    return FALSE;

  qstore_staging_marker_set_importer (self->database, self);
  self->mapping = g_array_new (FALSE, FALSE, sizeof (guint));
  self->inserters = qstore_import_inserters_new ();
  self->mapping_inserter = NULL;
  ok = qstore_import_load (self, input, cancellable, error);
  if (self->in_transaction)
    qstore_database_exec (self->database, "ROLLBACK", NULL);
  self->in_transaction = FALSE;
  self->mapping_inserter = NULL;
  g_clear_pointer (&self->inserters, g_hash_table_unref);
  g_clear_pointer (&self->mapping, g_array_unref);
  qstore_staged_run_clear (&self->run);
  self->target = NULL;
  self->into = NULL;
  qstore_staging_marker_set_importer (self->database, NULL);

  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_ROWS]);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_BYTES_READ]);
  return ok;
}

/**
 * qstore_import_run_file:
 * @self: a #QStoreImport
 * @file: the file to read
 * @cancellable: (nullable): stops the run
 * @error: return location for a #GError
 *
 * Loads the rows of @file, as qstore_import_run() does, with the file's
 * name and size as [property@Import:source-name] and
 * [property@Import:source-size].
 *
 * Returns: %TRUE when every row was stored
 */
gboolean
qstore_import_run_file (QStoreImport  *self,
                        GFile         *file,
                        GCancellable  *cancellable,
                        GError       **error)
{
  g_autoptr(GFileInputStream) input = NULL;
  g_autoptr(GFileInfo) info = NULL;
  g_autoptr(GError) local_error = NULL;
  g_autofree char *name = NULL;

  g_return_val_if_fail (QSTORE_IS_IMPORT (self), FALSE);
  g_return_val_if_fail (G_IS_FILE (file), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  name = g_file_get_parse_name (file);
  if (!(input = g_file_read (file, cancellable, &local_error)))
    {
      g_set_error (error, QSTORE_ERROR,
                   g_error_matches (local_error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND)
                   ? QSTORE_ERROR_NOT_FOUND : QSTORE_ERROR_IO,
                   _("Cannot read “%s”: %s"), name, local_error->message);
      return FALSE;
    }
  info = g_file_input_stream_query_info (input, G_FILE_ATTRIBUTE_STANDARD_SIZE, cancellable, NULL);
  qstore_import_set_source_name (self, name);
  qstore_import_set_source_size (self, info != NULL ? g_file_info_get_size (info) : -1);
  return qstore_import_run (self, G_INPUT_STREAM (input), cancellable, error);
}
