/* qstore-lmdb-write.h: write transactions of the LMDB provider
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "qstore-lmdb-read.h"

G_BEGIN_DECLS

/* Runs one write transaction: @drop and the renames first (when
 * restructuring), then @ops. MDB_MAP_FULL grows the map and runs it all
 * again. The ops' stores are the provider's own (QStoreLmdbKV). */
gboolean qstore_lmdb_write (QStoreLmdbHandle     *handle,
                            const char * const   *drop,
                            const char * const   *rename_from,
                            const char * const   *rename_to,
                            const QStoreWriteOp  *ops,
                            gsize                 n_ops,
                            QStoreWriteFlags      flags,
                            GError              **error);

G_END_DECLS
