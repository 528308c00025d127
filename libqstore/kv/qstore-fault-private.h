/* qstore-fault-private.h: fault injection, for tests
 *
 * Not API: the header is not installed and the functions are not in the
 * typelib. They are exported from libqstore all the same, under a `_`
 * prefix, because the provider plugins (separate shared objects) check
 * the fault points and the test programs arm them: both must reach the
 * one armed state inside the library.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define _QSTORE_FAULT_EXTERN __attribute__((visibility("default"))) extern

/* The fault point every provider passes once per operation it applies
 * inside a write transaction, before the transaction commits. Arming it
 * makes a commit fail part-way, after some operations were applied: the
 * provider must then leave every store as it was. */
#define QSTORE_FAULT_WRITE_OP "write-op"

/* Makes the check of @point number @after_hits + 1 fail, once. The
 * environment variable `QSTORE_FAULTS` (`point:hits,…`) does the same in
 * a process the test starts. */
_QSTORE_FAULT_EXTERN
void     _qstore_fault_arm        (const char  *point,
                                   guint        after_hits);
/* Removes every armed fault. */
_QSTORE_FAULT_EXTERN
void     _qstore_fault_disarm_all (void);
/* Passes @point: FALSE with a QSTORE_ERROR_IO when an armed fault strikes
 * there, and the caller fails as if its operation had failed. */
_QSTORE_FAULT_EXTERN
gboolean _qstore_fault_check      (const char  *point,
                                   GError     **error);

G_END_DECLS
