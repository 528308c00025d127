/* qstore-unsafe-window-error.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "qstore-unsafe-window-error.h"

/**
 * qstore_unsafe_window_error_quark:
 *
 * Gets the error domain of [class@UnsafeWindow] refusals,
 * `QSTORE_UNSAFE_WINDOW_ERROR`; its codes are [error@UnsafeWindowError].
 *
 * Returns: the quark of the domain
 */
G_DEFINE_QUARK (qstore-unsafe-window-error-quark, qstore_unsafe_window_error)

/**
 * qstore_unsafe_window_error_is_retryable:
 * @error: (nullable): an error an unsafe window operation gave
 *
 * Tells whether trying the operation again may succeed: a row version
 * that changed under the event (plan it again first) and a kick lease
 * held by another owner (wait for it to end). Every other refusal, and
 * every error of another domain, is final for the same input.
 *
 * Returns: %TRUE when @error is worth a retry
 */
gboolean
qstore_unsafe_window_error_is_retryable (const GError *error)
{
  if (error == NULL || error->domain != QSTORE_UNSAFE_WINDOW_ERROR)
    return FALSE;
  return error->code == QSTORE_UNSAFE_WINDOW_ERROR_ROW_CAS_MISMATCH ||
         error->code == QSTORE_UNSAFE_WINDOW_ERROR_KICK_LEASE_HELD;
}
