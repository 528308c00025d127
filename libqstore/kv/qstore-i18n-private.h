/* qstore-i18n-private.h: libqstore's messages in the user's language
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* libqstore's own gettext domain, apart from the applications' (config.h's
 * GETTEXT_PACKAGE): a program that links the library gets its messages
 * translated whatever its own domain is. */
#define QSTORE_GETTEXT_PACKAGE "qstore-1"

/* Not API, but exported all the same, as the fault points are (see
 * qstore-fault-private.h): the provider plugins, separate shared objects,
 * say their messages in this domain too. */
__attribute__((visibility("default"))) extern
const char *qstore_gettext (const char *msgid) G_GNUC_FORMAT (1);

#define _(String) qstore_gettext (String)
#define N_(String) (String)

G_END_DECLS
