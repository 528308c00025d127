/* qstore-fault.h: fault injection, for tests
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

/**
 * QSTORE_FAULT_WRITE_OP:
 *
 * The fault point every provider passes once per operation it applies
 * inside a write transaction, before the transaction commits. Arming it
 * makes a commit fail part-way, after some operations were applied: the
 * provider must then leave every store as it was.
 */
#define QSTORE_FAULT_WRITE_OP "write-op"

QSTORE_AVAILABLE_IN_ALL
void     qstore_fault_arm        (const char  *point,
                                  guint        after_hits);
QSTORE_AVAILABLE_IN_ALL
void     qstore_fault_disarm_all (void);
QSTORE_AVAILABLE_IN_ALL
gboolean qstore_fault_check      (const char  *point,
                                  GError     **error);

G_END_DECLS
