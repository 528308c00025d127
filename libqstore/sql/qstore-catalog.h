/* qstore-catalog.h: what a store's catalog holds, read without opening it
 * as a database
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(QSTORE_INSIDE) && !defined(QSTORE_COMPILATION)
# error "Only <qstore.h> can be included directly."
#endif

#include <gio/gio.h>

#include "qstore-codec.h"
#include "qstore-provider.h"

G_BEGIN_DECLS

#define QSTORE_TYPE_COLUMN_INFO (qstore_column_info_get_type ())

QSTORE_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (QStoreColumnInfo, qstore_column_info, QSTORE, COLUMN_INFO, GObject)

QSTORE_AVAILABLE_IN_ALL
const char         *qstore_column_info_get_name                 (QStoreColumnInfo    *self);
QSTORE_AVAILABLE_IN_ALL
const char         *qstore_column_info_get_declared_type        (QStoreColumnInfo    *self);
QSTORE_AVAILABLE_IN_ALL
QStoreCollation     qstore_column_info_get_collation            (QStoreColumnInfo    *self);
QSTORE_AVAILABLE_IN_ALL
gboolean            qstore_column_info_get_not_null             (QStoreColumnInfo    *self);
QSTORE_AVAILABLE_IN_ALL
const char         *qstore_column_info_get_default_value        (QStoreColumnInfo    *self);
QSTORE_AVAILABLE_IN_ALL
guint               qstore_column_info_get_primary_key_position (QStoreColumnInfo    *self);

#define QSTORE_TYPE_CATALOG_ENTRY (qstore_catalog_entry_get_type ())

QSTORE_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (QStoreCatalogEntry, qstore_catalog_entry, QSTORE, CATALOG_ENTRY, GObject)

QSTORE_AVAILABLE_IN_ALL
QStoreCatalogKeyKind qstore_catalog_entry_get_kind              (QStoreCatalogEntry  *self);
QSTORE_AVAILABLE_IN_ALL
const char         *qstore_catalog_entry_get_schema             (QStoreCatalogEntry  *self);
QSTORE_AVAILABLE_IN_ALL
const char         *qstore_catalog_entry_get_name               (QStoreCatalogEntry  *self);
QSTORE_AVAILABLE_IN_ALL
const char         *qstore_catalog_entry_get_ddl                (QStoreCatalogEntry  *self);
QSTORE_AVAILABLE_IN_ALL
const char         *qstore_catalog_entry_get_value              (QStoreCatalogEntry  *self);
QSTORE_AVAILABLE_IN_ALL
GBytes             *qstore_catalog_entry_get_key                (QStoreCatalogEntry  *self);
QSTORE_AVAILABLE_IN_ALL
GBytes             *qstore_catalog_entry_get_raw_value          (QStoreCatalogEntry  *self);
QSTORE_AVAILABLE_IN_ALL
GListModel         *qstore_catalog_entry_get_columns            (QStoreCatalogEntry  *self);
QSTORE_AVAILABLE_IN_ALL
const char * const *qstore_catalog_entry_get_index_names        (QStoreCatalogEntry  *self);
QSTORE_AVAILABLE_IN_ALL
const char * const *qstore_catalog_entry_get_index_ddl          (QStoreCatalogEntry  *self);
QSTORE_AVAILABLE_IN_ALL
const char         *qstore_catalog_entry_get_body               (QStoreCatalogEntry  *self);
QSTORE_AVAILABLE_IN_ALL
gboolean            qstore_catalog_entry_is_materialized_view_contents (QStoreCatalogEntry *self);
QSTORE_AVAILABLE_IN_ALL
gboolean            qstore_catalog_entry_is_staging_table       (QStoreCatalogEntry  *self);
QSTORE_AVAILABLE_IN_ALL
const char         *qstore_catalog_entry_get_error              (QStoreCatalogEntry  *self);

QSTORE_AVAILABLE_IN_ALL
GListModel         *qstore_catalog_list_entries                 (QStoreProvider      *provider,
                                                                 GError             **error);
QSTORE_AVAILABLE_IN_ALL
gint64              qstore_catalog_get_row_count                (QStoreProvider      *provider,
                                                                 const char          *schema,
                                                                 const char          *table,
                                                                 GError             **error);

G_END_DECLS
