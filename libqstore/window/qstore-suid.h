/* qstore-suid.h: sortable unique ids, the order of an event stream
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
 * QSTORE_SUID_LENGTH:
 *
 * The length of a sortable unique id: 30 ASCII digits, the 19 digits of
 * its time in ticks followed by 11 random digits.
 */
#define QSTORE_SUID_LENGTH 30

/**
 * QSTORE_SUID_TICKS_DIGITS:
 *
 * How many of the leading digits of a sortable unique id hold its time.
 */
#define QSTORE_SUID_TICKS_DIGITS 19

QSTORE_AVAILABLE_IN_ALL
char     *qstore_suid_new_for_time   (GDateTime   *time);
QSTORE_AVAILABLE_IN_ALL
char     *qstore_suid_new_from_parts (guint64      ticks,
                                      guint64      random,
                                      GError     **error);
QSTORE_AVAILABLE_IN_ALL
gboolean  qstore_suid_validate       (const char  *suid,
                                      const char  *field,
                                      GError     **error);
QSTORE_AVAILABLE_IN_ALL
int       qstore_suid_compare        (const char  *a,
                                      const char  *b);

G_END_DECLS
