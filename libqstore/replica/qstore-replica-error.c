/* qstore-replica-error.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "qstore-replica-error.h"

/**
 * qstore_replica_error_quark:
 *
 * The error domain of [class@Replica]'s refusals.
 *
 * Returns: the quark of %QSTORE_REPLICA_ERROR
 */
G_DEFINE_QUARK (qstore-replica-error-quark, qstore_replica_error)
