/* qstore-inspector-sweep.h: the one write the inspector makes
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <gio/gio.h>
#include <qstore.h>

G_BEGIN_DECLS

char      *qstore_inspector_staging_run_key (QStoreStagingRun     *run);
void       qstore_inspector_sweep_async     (const char           *uri,
                                             const char * const   *confirmed,
                                             GCancellable         *cancellable,
                                             GAsyncReadyCallback   callback,
                                             gpointer              user_data);
GPtrArray *qstore_inspector_sweep_finish    (GAsyncResult         *result,
                                             GError              **error);

G_END_DECLS
