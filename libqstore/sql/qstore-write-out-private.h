/* qstore-write-out-private.h: the write-out step of a database, as SQL
 * sets it
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "qstore-router-private.h"

G_BEGIN_DECLS

/* `PRAGMA qstore.write_out_step [= bytes]`: schema `qstore`, this name. */
#define QSTORE_WRITE_OUT_STEP_SETTING "qstore.write_out_step"

/* Reads or sets the step of the database's coordinator
 * (qstore_coordinator_set_write_out_step()): per open database, never
 * stored, at once inside a transaction too. */
gboolean qstore_write_out_step_setting (QStoreDatabase   *db,
                                        QStoreStatement  *statement,
                                        QStoreResult    **result,
                                        GError          **error);

G_END_DECLS
