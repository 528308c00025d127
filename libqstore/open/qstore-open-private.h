/* qstore-open-private.h: the database as qstore_database_open() puts it together
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "qstore-router-private.h"

G_BEGIN_DECLS

/* Every statement handler and layer hook qstore_database_open() gives a
 * database, for the layers above that open databases of their own
 * (qstore_database_open_on_provider()). */
const QStoreDatabaseSetup *qstore_database_get_full_setup (void);

G_END_DECLS
