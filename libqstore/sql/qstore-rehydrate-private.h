/* qstore-rehydrate-private.h: the catalog read back into a database at open
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "qstore-router-private.h"

G_BEGIN_DECLS

/* Loads the tables and views of the catalog and sets @self->rehydration.
 * An entry that fails is listed among the result's errors; the others
 * load. Returns the entries of every other kind (QStoreCatalogItem), for
 * the extensions that keep them. */
GArray   *qstore_rehydrate_catalog  (QStoreDatabase  *self);

G_END_DECLS
