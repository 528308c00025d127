/* qstore-import.h: loading a table from CSV or JSON lines
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(QSTORE_INSIDE) && !defined(QSTORE_COMPILATION)
# error "Only <qstore.h> can be included directly."
#endif

#include <gio/gio.h>

#include "qstore-database.h"

G_BEGIN_DECLS

/**
 * QStoreImportMode:
 * @QSTORE_IMPORT_MODE_APPEND: insert the rows next to those the table has
 * @QSTORE_IMPORT_MODE_REPLACE: load the rows into a staging table, then
 *   swap them in for the table's rows in one short transaction
 *
 * What an import does to the rows the table has.
 */
typedef enum /*< underscore_name=qstore_import_mode >*/
{
  QSTORE_IMPORT_MODE_APPEND,
  QSTORE_IMPORT_MODE_REPLACE,
} QStoreImportMode;

/**
 * QStoreImportFormat:
 * @QSTORE_IMPORT_FORMAT_CSV: comma-separated values as RFC 4180 has them
 * @QSTORE_IMPORT_FORMAT_JSONL: one JSON object (or array) per line
 *
 * How the rows of an import are written.
 */
typedef enum /*< underscore_name=qstore_import_format >*/
{
  QSTORE_IMPORT_FORMAT_CSV,
  QSTORE_IMPORT_FORMAT_JSONL,
} QStoreImportFormat;

#define QSTORE_TYPE_IMPORT (qstore_import_get_type ())

QSTORE_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (QStoreImport, qstore_import, QSTORE, IMPORT, GObject)

QSTORE_AVAILABLE_IN_ALL
QStoreImport       *qstore_import_new                (QStoreDatabase      *database,
                                                      const char          *table);
QSTORE_AVAILABLE_IN_ALL
QStoreDatabase     *qstore_import_get_database       (QStoreImport        *self);
QSTORE_AVAILABLE_IN_ALL
const char         *qstore_import_get_table          (QStoreImport        *self);
QSTORE_AVAILABLE_IN_ALL
QStoreImportMode    qstore_import_get_mode           (QStoreImport        *self);
QSTORE_AVAILABLE_IN_ALL
void                qstore_import_set_mode           (QStoreImport        *self,
                                                      QStoreImportMode     mode);
QSTORE_AVAILABLE_IN_ALL
QStoreImportFormat  qstore_import_get_format         (QStoreImport        *self);
QSTORE_AVAILABLE_IN_ALL
void                qstore_import_set_format         (QStoreImport        *self,
                                                      QStoreImportFormat   format);
QSTORE_AVAILABLE_IN_ALL
gboolean            qstore_import_get_atomic         (QStoreImport        *self);
QSTORE_AVAILABLE_IN_ALL
void                qstore_import_set_atomic         (QStoreImport        *self,
                                                      gboolean             atomic);
QSTORE_AVAILABLE_IN_ALL
gboolean            qstore_import_get_header         (QStoreImport        *self);
QSTORE_AVAILABLE_IN_ALL
void                qstore_import_set_header         (QStoreImport        *self,
                                                      gboolean             header);
QSTORE_AVAILABLE_IN_ALL
const char * const *qstore_import_get_columns        (QStoreImport        *self);
QSTORE_AVAILABLE_IN_ALL
void                qstore_import_set_columns        (QStoreImport        *self,
                                                      const char * const  *columns);
QSTORE_AVAILABLE_IN_ALL
gboolean            qstore_import_get_resume         (QStoreImport        *self);
QSTORE_AVAILABLE_IN_ALL
void                qstore_import_set_resume         (QStoreImport        *self,
                                                      gboolean             resume);
QSTORE_AVAILABLE_IN_ALL
const char         *qstore_import_get_source_name    (QStoreImport        *self);
QSTORE_AVAILABLE_IN_ALL
void                qstore_import_set_source_name    (QStoreImport        *self,
                                                      const char          *name);
QSTORE_AVAILABLE_IN_ALL
gint64              qstore_import_get_source_size    (QStoreImport        *self);
QSTORE_AVAILABLE_IN_ALL
void                qstore_import_set_source_size    (QStoreImport        *self,
                                                      gint64               size);

QSTORE_AVAILABLE_IN_ALL
gboolean            qstore_import_run                (QStoreImport        *self,
                                                      GInputStream        *input,
                                                      GCancellable        *cancellable,
                                                      GError             **error);
QSTORE_AVAILABLE_IN_ALL
gboolean            qstore_import_run_file           (QStoreImport        *self,
                                                      GFile               *file,
                                                      GCancellable        *cancellable,
                                                      GError             **error);

QSTORE_AVAILABLE_IN_ALL
guint64             qstore_import_get_rows           (QStoreImport        *self);
QSTORE_AVAILABLE_IN_ALL
guint64             qstore_import_get_bytes_read     (QStoreImport        *self);
QSTORE_AVAILABLE_IN_ALL
guint64             qstore_import_get_rows_kept      (QStoreImport        *self);
QSTORE_AVAILABLE_IN_ALL
const char         *qstore_import_get_staging_table  (QStoreImport        *self);
QSTORE_AVAILABLE_IN_ALL
guint64             qstore_import_get_error_line     (QStoreImport        *self);
QSTORE_AVAILABLE_IN_ALL
guint               qstore_import_get_error_column   (QStoreImport        *self);
QSTORE_AVAILABLE_IN_ALL
const char         *qstore_import_get_error_column_name (QStoreImport     *self);

G_END_DECLS
