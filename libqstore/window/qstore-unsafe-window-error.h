/* qstore-unsafe-window-error.h: the QSTORE_UNSAFE_WINDOW_ERROR domain
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(QSTORE_INSIDE) && !defined(QSTORE_COMPILATION)
# error "Only <qstore.h> can be included directly."
#endif

#include <glib.h>

#include "qstore-version-macros.h"

G_BEGIN_DECLS

#define QSTORE_UNSAFE_WINDOW_ERROR (qstore_unsafe_window_error_quark ())

/**
 * QStoreUnsafeWindowError:
 * @QSTORE_UNSAFE_WINDOW_ERROR_ROW_CAS_MISMATCH: a row the event touches
 *   does not have the version the event expects; plan the event again and
 *   retry
 * @QSTORE_UNSAFE_WINDOW_ERROR_DUPLICATE_RACE: another delivery of the
 *   same event recorded its receipt first; the event is applied, by the
 *   other delivery
 * @QSTORE_UNSAFE_WINDOW_ERROR_SUID_CONTRADICTION: the event contradicts
 *   what the window holds: its id was received with another SUID, or a
 *   row already holds a different value from the same SUID
 * @QSTORE_UNSAFE_WINDOW_ERROR_SAFE_AHEAD: the safe head already covers
 *   the event's SUID: the safe layer has it
 * @QSTORE_UNSAFE_WINDOW_ERROR_BEHIND_FRONTIER: an event arrived for the
 *   first time behind the safe head, so the window may miss it: reads of
 *   this generation are refused until it is rebuilt (into a new one)
 * @QSTORE_UNSAFE_WINDOW_ERROR_KICK_LEASE_HELD: the window's kick is leased
 *   to another owner; retry after the lease ends
 * @QSTORE_UNSAFE_WINDOW_ERROR_GC_GUARD_FAILED: reserved for a guard of a
 *   garbage collection that fails for another reason than a recovery
 *   predicate. This version has none: a recovery predicate that does not
 *   hold is no error (the collection reports that it removed nothing)
 * @QSTORE_UNSAFE_WINDOW_ERROR_INVALID_SUID: a SUID stored in the window's
 *   tables is not a sortable unique id (it was written around the window):
 *   the window cannot order by it. SUIDs given as arguments are checked
 *   first and refused with %QSTORE_ERROR_INVALID_ARGUMENT.
 * @QSTORE_UNSAFE_WINDOW_ERROR_RECEIPT_NOT_FOUND: the window has no
 *   receipt of the event a safe receipt names: apply it first
 *
 * Why an unsafe window refused an operation. Only
 * %QSTORE_UNSAFE_WINDOW_ERROR_ROW_CAS_MISMATCH and
 * %QSTORE_UNSAFE_WINDOW_ERROR_KICK_LEASE_HELD are worth retrying (see
 * qstore_unsafe_window_error_is_retryable()).
 */
typedef enum /*< underscore_name=qstore_unsafe_window_error >*/
{
  QSTORE_UNSAFE_WINDOW_ERROR_ROW_CAS_MISMATCH,
  QSTORE_UNSAFE_WINDOW_ERROR_DUPLICATE_RACE,
  QSTORE_UNSAFE_WINDOW_ERROR_SUID_CONTRADICTION,
  QSTORE_UNSAFE_WINDOW_ERROR_SAFE_AHEAD,
  QSTORE_UNSAFE_WINDOW_ERROR_BEHIND_FRONTIER,
  QSTORE_UNSAFE_WINDOW_ERROR_KICK_LEASE_HELD,
  QSTORE_UNSAFE_WINDOW_ERROR_GC_GUARD_FAILED,
  QSTORE_UNSAFE_WINDOW_ERROR_INVALID_SUID,
  QSTORE_UNSAFE_WINDOW_ERROR_RECEIPT_NOT_FOUND,
} QStoreUnsafeWindowError;

QSTORE_AVAILABLE_IN_ALL
GQuark   qstore_unsafe_window_error_quark        (void);
QSTORE_AVAILABLE_IN_ALL
gboolean qstore_unsafe_window_error_is_retryable (const GError *error);

G_END_DECLS
