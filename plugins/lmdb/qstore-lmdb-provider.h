/* qstore-lmdb-provider.h: the LMDB provider plugin
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

void qstore_lmdb_register_types (GIOModule *module);

G_END_DECLS
