/* qstore-error.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "qstore-error.h"

G_DEFINE_QUARK (qstore-error-quark, qstore_error)
