/* qstore-error.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "qstore-error.h"

/**
 * qstore_error_quark:
 *
 * Gets the error domain of qstore, `QSTORE_ERROR`; its codes are
 * [error@Error].
 *
 * Returns: the quark of the `QSTORE_ERROR` domain
 */
G_DEFINE_QUARK (qstore-error-quark, qstore_error)
