/* qstore-codec.h: order-preserving keys, rows and catalog keys
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(QSTORE_INSIDE) && !defined(QSTORE_COMPILATION)
# error "Only <qstore.h> can be included directly."
#endif

#include <glib-object.h>

#include "qstore-version-macros.h"

G_BEGIN_DECLS

/**
 * QStoreCollation:
 * @QSTORE_COLLATION_BINARY: bytes as they are
 * @QSTORE_COLLATION_NOCASE: ASCII `A`–`Z` folded to `a`–`z`, exactly as
 *   SQLite's NOCASE; other bytes as they are
 * @QSTORE_COLLATION_RTRIM: trailing spaces (U+0020) ignored
 *
 * How text compares. Keys are encoded under their column's collation
 * (BINARY when none is declared), so byte order equals SQLite's order.
 */
typedef enum /*< underscore_name=qstore_collation >*/
{
  QSTORE_COLLATION_BINARY,
  QSTORE_COLLATION_NOCASE,
  QSTORE_COLLATION_RTRIM,
} QStoreCollation;

/**
 * QStoreCatalogKeyKind:
 * @QSTORE_CATALOG_KEY_INVALID: not a catalog key
 * @QSTORE_CATALOG_KEY_TABLE: a table's bundle, key `schema.table`
 * @QSTORE_CATALOG_KEY_VIEW: a view, key `\0view\0schema.view`
 * @QSTORE_CATALOG_KEY_MATERIALIZED_VIEW: a materialized view, key
 *   `\0mview\0schema.view`
 * @QSTORE_CATALOG_KEY_META: bookkeeping, key `\0meta\0name`
 *
 * What a key of the catalog store names.
 */
typedef enum /*< underscore_name=qstore_catalog_key_kind >*/
{
  QSTORE_CATALOG_KEY_INVALID,
  QSTORE_CATALOG_KEY_TABLE,
  QSTORE_CATALOG_KEY_VIEW,
  QSTORE_CATALOG_KEY_MATERIALIZED_VIEW,
  QSTORE_CATALOG_KEY_META,
} QStoreCatalogKeyKind;

/* Values, as GVariants: NULL is the empty maybe "mv" (see qstore_value_new_null()),
 * integers "x", reals "d", text "s", blobs "ay". */
QSTORE_AVAILABLE_IN_ALL
GVariant            *qstore_value_new_null                   (void);
QSTORE_AVAILABLE_IN_ALL
gboolean             qstore_value_is_null                    (GVariant            *value);

/* Key components, appended to @out */
QSTORE_AVAILABLE_IN_ALL
void                 qstore_codec_append_null                (GByteArray          *out,
                                                              gboolean             descending);
QSTORE_AVAILABLE_IN_ALL
void                 qstore_codec_append_integer             (GByteArray          *out,
                                                              gint64               value,
                                                              gboolean             descending);
QSTORE_AVAILABLE_IN_ALL
gboolean             qstore_codec_append_real                (GByteArray          *out,
                                                              gdouble              value,
                                                              gboolean             descending,
                                                              GError             **error);
QSTORE_AVAILABLE_IN_ALL
void                 qstore_codec_append_text                (GByteArray          *out,
                                                              const char          *text,
                                                              gsize                text_len,
                                                              QStoreCollation      collation,
                                                              gboolean             descending);
QSTORE_AVAILABLE_IN_ALL
void                 qstore_codec_append_blob                (GByteArray          *out,
                                                              const guint8        *data,
                                                              gsize                data_len,
                                                              gboolean             descending);
QSTORE_AVAILABLE_IN_ALL
gboolean             qstore_codec_append_value               (GByteArray          *out,
                                                              GVariant            *value,
                                                              QStoreCollation      collation,
                                                              gboolean             descending,
                                                              GError             **error);

/* Whole keys */
QSTORE_AVAILABLE_IN_ALL
GBytes              *qstore_codec_encode_key                 (GVariant            *values,
                                                              const QStoreCollation *collations,
                                                              const gboolean      *descending,
                                                              gsize                n_columns,
                                                              GError             **error);
QSTORE_AVAILABLE_IN_ALL
GVariant            *qstore_codec_decode_key                 (GBytes              *key,
                                                              const gboolean      *descending,
                                                              gsize                n_columns,
                                                              GError             **error);

/* Rows */
QSTORE_AVAILABLE_IN_ALL
GBytes              *qstore_codec_encode_row                 (GVariant            *row,
                                                              GError             **error);
QSTORE_AVAILABLE_IN_ALL
GVariant            *qstore_codec_decode_row                 (GBytes              *row,
                                                              GError             **error);

/* Catalog keys */
QSTORE_AVAILABLE_IN_ALL
GBytes              *qstore_catalog_key_for_table            (const char          *schema,
                                                              const char          *table);
QSTORE_AVAILABLE_IN_ALL
GBytes              *qstore_catalog_key_for_view             (const char          *schema,
                                                              const char          *view);
QSTORE_AVAILABLE_IN_ALL
GBytes              *qstore_catalog_key_for_materialized_view (const char         *schema,
                                                              const char          *view);
QSTORE_AVAILABLE_IN_ALL
GBytes              *qstore_catalog_key_for_meta             (const char          *name);
QSTORE_AVAILABLE_IN_ALL
QStoreCatalogKeyKind qstore_catalog_key_classify             (GBytes              *key,
                                                              char               **schema,
                                                              char               **name);

G_END_DECLS
