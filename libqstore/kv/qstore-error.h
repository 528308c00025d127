/* qstore-error.h: the QSTORE_ERROR domain
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(QSTORE_INSIDE) && !defined(QSTORE_COMPILATION)
# error "Only <qstore.h> can be included directly."
#endif

#include "qstore-version-macros.h"

G_BEGIN_DECLS

#define QSTORE_ERROR (qstore_error_quark ())

/**
 * QStoreError:
 * @QSTORE_ERROR_FAILED: a failure with no more specific code
 * @QSTORE_ERROR_INVALID_ARGUMENT: an argument is out of range or malformed
 * @QSTORE_ERROR_NOT_FOUND: the named object (provider, store, table…) does not exist
 * @QSTORE_ERROR_EXISTS: the object already exists, or a destination is not empty
 * @QSTORE_ERROR_COLLISION: two objects would share one physical store
 * @QSTORE_ERROR_CONSTRAINT: a constraint (UNIQUE, NOT NULL, CHECK…) failed
 * @QSTORE_ERROR_UNSUPPORTED: the provider or the SQL layer cannot do this
 * @QSTORE_ERROR_CORRUPT: stored data does not decode, or a file is not a qstore store
 * @QSTORE_ERROR_BUSY: the location is locked by someone else
 * @QSTORE_ERROR_READ_REJECTED: a read is refused in the current state
 * @QSTORE_ERROR_IO: the operating system reported an I/O error
 * @QSTORE_ERROR_READ_ONLY: a write was attempted through a read-only handle
 * @QSTORE_ERROR_CLOSED: the object was used after it was closed
 * @QSTORE_ERROR_SYNTAX: SQL text does not parse (a misspelt keyword, an
 *   unbalanced parenthesis, an unfinished statement…)
 *
 * Error codes of the `QSTORE_ERROR` domain.
 */
typedef enum /*< underscore_name=qstore_error >*/
{
  QSTORE_ERROR_FAILED,
  QSTORE_ERROR_INVALID_ARGUMENT,
  QSTORE_ERROR_NOT_FOUND,
  QSTORE_ERROR_EXISTS,
  QSTORE_ERROR_COLLISION,
  QSTORE_ERROR_CONSTRAINT,
  QSTORE_ERROR_UNSUPPORTED,
  QSTORE_ERROR_CORRUPT,
  QSTORE_ERROR_BUSY,
  QSTORE_ERROR_READ_REJECTED,
  QSTORE_ERROR_IO,
  QSTORE_ERROR_READ_ONLY,
  QSTORE_ERROR_CLOSED,
  QSTORE_ERROR_SYNTAX,
} QStoreError;

QSTORE_AVAILABLE_IN_ALL
GQuark qstore_error_quark (void);

G_END_DECLS
