/* qstore-import-private.h: an import, as its object and its loading share
 * it
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "qstore-database-private.h"
#include "qstore-import.h"
#include "qstore-staged-replace-private.h"

G_BEGIN_DECLS

/* qstore-import.c keeps the object and its options; qstore-import-load.c
 * reads the input into the table. */

struct _QStoreImport
{
  GObject             parent_instance;

  QStoreDatabase     *database;
  char               *table;
  QStoreImportMode    mode;
  QStoreImportFormat  format;
  gboolean            atomic;
  gboolean            header;
  GStrv               columns;
  gboolean            resume;
  char               *source_name;
  gint64              source_size;

  /* What the last run did */
  guint64             rows;
  guint64             rows_kept;
  guint64             bytes_read;
  char               *staging_table;
  guint64             error_line;
  guint               error_column;
  char               *error_column_name;

  /* While it runs */
  QStoreTable        *target;
  const char         *into;          /* the table rows go into */
  GArray             *mapping;       /* guint: table column of each field */
  GHashTable         *inserters;     /* column set → prepared INSERT */
  gpointer            mapping_inserter; /* the one of @mapping, once made */
  QStoreStagedRun     run;
  guint64             good_position; /* input bytes up to the last row stored */
  guint64             good_line;
  guint64             rows_before;   /* staged by the runs this one continues */
  gint64              last_progress;
  gint64              batch_started;
  guint               batch_rows;
  gboolean            in_transaction;
};

/* Checks that the table can take the import; sets @target. */
gboolean qstore_import_check_target   (QStoreImport   *self,
                                       GError        **error);
/* Reads @input into the table: what qstore_import_run() does once the
 * run is set up. */
gboolean qstore_import_load           (QStoreImport   *self,
                                       GInputStream   *input,
                                       GCancellable   *cancellable,
                                       GError        **error);
/* Frees the prepared INSERTs the load keeps in @inserters. */
GHashTable *qstore_import_inserters_new (void);

void     qstore_import_emit_progress  (QStoreImport   *self);

G_END_DECLS
