/* qstore-catalog-private.h: reading catalog entries back
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <sqlite3.h>

#include "qstore-catalog.h"

G_BEGIN_DECLS

/* Catalog text is SQL, but a damaged entry may hold any bytes: what can be
 * shown of @bytes. */
char     *qstore_catalog_text               (GBytes              *bytes);
/* A key that is not a catalog key, printable. */
char     *qstore_catalog_describe_key       (GBytes              *key);
/* Every key and value of @catalog, in order. */
gboolean  qstore_catalog_read_all           (QStoreKV            *catalog,
                                             GPtrArray           *keys,
                                             GPtrArray           *values,
                                             GError             **error);
gboolean  qstore_catalog_savepoint          (sqlite3             *conn,
                                             const char          *sql,
                                             GError             **error);

/* An entry's SQL, run back, may create its own object and nothing else:
 * the authorizer (qstore_catalog_guard_authorizer() with the guard as its
 * data) refuses the rest and remembers the first thing refused. */
typedef struct
{
  const char *object;   /* the table or view the entry is about */
  gboolean    is_view;
  char       *refused;
} QStoreCatalogGuard;

void      qstore_catalog_guard_clear        (QStoreCatalogGuard  *guard);
int       qstore_catalog_guard_authorizer   (void                *data,
                                             int                  action,
                                             const char          *arg1,
                                             const char          *arg2,
                                             const char          *db_name,
                                             const char          *inner);
/* %QSTORE_ERROR_CORRUPT for an entry that did not read back: what the
 * guard refused, else SQLite's @message. */
void      qstore_catalog_guard_error        (QStoreCatalogGuard  *guard,
                                             const char          *schema,
                                             const char          *message,
                                             GError             **error);

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (QStoreCatalogGuard, qstore_catalog_guard_clear)

/* Runs the statements of table @table's bundle on @conn, guarded. */
gboolean  qstore_catalog_run_bundle         (sqlite3             *conn,
                                             const char          *schema,
                                             const char          *table,
                                             const char          *bundle,
                                             GError             **error);

G_END_DECLS
