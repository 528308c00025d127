/* qstore-mview-extension-private.h: materialized views in every database
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "qstore-router-private.h"

G_BEGIN_DECLS

/* What every database gets from this layer: the views' state, read back
 * at open, maintained around DDL, and the clean-shutdown marker. */
extern const QStoreDatabaseExtension qstore_mview_extension;

G_END_DECLS
