/* qstore-record-reader-private.h: the records of a CSV or JSON lines
 * stream, read a buffer at a time
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <gio/gio.h>

#include "qstore-import.h"

G_BEGIN_DECLS

typedef enum
{
  QSTORE_FIELD_NULL,
  QSTORE_FIELD_TEXT,
  QSTORE_FIELD_INTEGER,
  QSTORE_FIELD_REAL,
  QSTORE_FIELD_BLOB,
} QStoreFieldKind;

/* One value of a record. @data (text, blob) and @name (a JSON object's
 * key, else NULL) stay valid until the next record is read. */
typedef struct
{
  QStoreFieldKind  kind;
  const char      *data;
  gsize            len;
  gint64           integer;
  double           real;
  const char      *name;
  gsize            offset;       /* of @data in the reader's scratch */
} QStoreImportField;

typedef struct _QStoreRecordReader QStoreRecordReader;

QStoreRecordReader *qstore_record_reader_new   (GInputStream        *input,
                                                QStoreImportFormat   format);
void                qstore_record_reader_free  (QStoreRecordReader  *self);

/* Skips the first @bytes of the input, which end on line @line - 1: the
 * next record starts on line @line. No byte-order mark is looked for. */
gboolean            qstore_record_reader_skip  (QStoreRecordReader  *self,
                                                guint64              bytes,
                                                guint64              line,
                                                GCancellable        *cancellable,
                                                GError             **error);

/* Reads the next record. FALSE at the end of the input (@error unset) or
 * on an error, which says where (QSTORE_ERROR_INVALID_ARGUMENT for what
 * cannot be read as a record, QSTORE_ERROR_IO for the input). Blank lines
 * are no records. */
gboolean            qstore_record_reader_next  (QStoreRecordReader  *self,
                                                GCancellable        *cancellable,
                                                GError             **error);

const QStoreImportField *qstore_record_reader_get_fields (QStoreRecordReader *self,
                                                          guint              *n_fields);
/* Whether the record names its values (a JSON object). */
gboolean            qstore_record_reader_is_named       (QStoreRecordReader *self);
/* The line the record starts on; the line the next one may start on. */
guint64             qstore_record_reader_get_line       (QStoreRecordReader *self);
guint64             qstore_record_reader_get_next_line  (QStoreRecordReader *self);
/* Bytes of input up to the end of the record (its line end included). */
guint64             qstore_record_reader_get_position   (QStoreRecordReader *self);
/* Bytes read from the input so far. */
guint64             qstore_record_reader_get_bytes_read (QStoreRecordReader *self);
/* Where the last error is: its line and column (CSV: the field's number;
 * JSON lines: the character's, or the value's position in the record),
 * both from 1; 0 when unknown. */
guint64             qstore_record_reader_get_error_line   (QStoreRecordReader *self);
guint               qstore_record_reader_get_error_column (QStoreRecordReader *self);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (QStoreRecordReader, qstore_record_reader_free)

G_END_DECLS
