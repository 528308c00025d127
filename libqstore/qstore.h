/* qstore.h: the umbrella header of libqstore
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#define QSTORE_INSIDE
# include "qstore-version-macros.h"
# include "qstore-error.h"
# include "qstore-enums.h"
# include "qstore-bounds.h"
# include "qstore-iter.h"
# include "qstore-kv.h"
# include "qstore-write-op.h"
# include "qstore-batch.h"
# include "qstore-snapshot.h"
# include "qstore-provider.h"
# include "qstore-codec.h"
# include "qstore-catalog.h"
# include "qstore-rehydration-result.h"
# include "qstore-stale.h"
# include "qstore-change-set.h"
# include "qstore-coordinator.h"
# include "qstore-table.h"
# include "qstore-result.h"
# include "qstore-database.h"
# include "qstore-materialized-view.h"
# include "qstore-suid.h"
# include "qstore-unsafe-window-error.h"
# include "qstore-unsafe-event.h"
# include "qstore-unsafe-row.h"
# include "qstore-unsafe-window.h"
# include "qstore-replica-error.h"
# include "qstore-replica-txn.h"
# include "qstore-replica.h"
#undef QSTORE_INSIDE
