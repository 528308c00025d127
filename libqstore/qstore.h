/* qstore.h: the umbrella header of libqstore
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#define QSTORE_INSIDE
# include "qstore-version-macros.h"
# include "qstore-error.h"
# include "qstore-types.h"
# include "qstore-enums.h"
# include "qstore-bounds.h"
# include "qstore-iter.h"
# include "qstore-kv.h"
# include "qstore-write-op.h"
# include "qstore-batch.h"
# include "qstore-check-report.h"
# include "qstore-snapshot.h"
# include "qstore-location-lock.h"
# include "qstore-provider.h"
# include "qstore-codec.h"
# include "qstore-catalog.h"
# include "qstore-stale.h"
# include "qstore-fault.h"
# include "qstore-change-set.h"
# include "qstore-coordinator.h"
# include "qstore-table.h"
# include "qstore-result.h"
# include "qstore-database.h"
# include "qstore-materialized-view.h"
#undef QSTORE_INSIDE
