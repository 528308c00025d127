/* qstore-catalog-private.h: how the database keeps its catalog
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "qstore-catalog.h"
#include "qstore-database-private.h"

G_BEGIN_DECLS

/* Reads the catalog into the database at open, in phases (tables, then
 * views, then materialized views) and sets self->rehydration. An entry
 * that fails is listed among the result's errors; the others load. */
void      qstore_catalog_rehydrate          (QStoreDatabase  *self);

/* Compare-write: stages @value under @key of the catalog in the
 * coordinator's open transaction unless the catalog, as that transaction
 * sees it, already holds exactly these bytes. Unchanged entries are never
 * rewritten, so reopening a store leaves its catalog byte-identical. A
 * read that fails counts as a difference: writing is always correct. */
void      qstore_catalog_put_if_changed     (QStoreDatabase  *self,
                                             GBytes          *key,
                                             const char      *value);
/* The same decision for writes that bypass the coordinator
 * (qstore_provider_restructure()): whether the committed catalog holds
 * something other than @value under @key. */
gboolean  qstore_catalog_differs            (QStoreDatabase  *self,
                                             GBytes          *key,
                                             const char      *value);

/* What phase 3 (qstore-mview.c) reports. @name is `schema.name`. */
void      qstore_rehydration_result_add_materialized_view (QStoreRehydrationResult *self,
                                                           const char              *name,
                                                           gboolean                 adopted);
void      qstore_rehydration_result_add_error_entry       (QStoreRehydrationResult *self,
                                                           const char              *name,
                                                           const char              *ddl,
                                                           const char              *message);
/* A table phase 1 loaded that is a materialized view's contents. */
void      qstore_rehydration_result_forget_table          (QStoreRehydrationResult *self,
                                                           const char              *name);

/* Views of the main connection. @stmt is the prepared CREATE VIEW or DROP
 * VIEW of view @name in schema main; DDL-commit already happened. */
gboolean  qstore_catalog_create_view        (QStoreDatabase  *self,
                                             sqlite3_stmt    *stmt,
                                             const char      *name,
                                             GError         **error);
gboolean  qstore_catalog_drop_view          (QStoreDatabase  *self,
                                             sqlite3_stmt    *stmt,
                                             const char      *name,
                                             GError         **error);
/* Rewrites the entries of views whose text SQLite changed (renaming a
 * table rewrites the views that read it). */
gboolean  qstore_catalog_sync_views         (QStoreDatabase  *self,
                                             GError         **error);

G_END_DECLS
