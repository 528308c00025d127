/* qstore-i18n.c: libqstore's messages in the user's language
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <libintl.h>

#include "qstore-i18n-private.h"

/* The domain is bound on the first message, so a program that never
 * meets an error pays nothing. QSTORE_LIB_LOCALEDIR points it at a build
 * tree's catalogues, as QSTORE_LOCALEDIR does for the applications'. */

/**
 * qstore_gettext:
 * @msgid: a message of libqstore's
 *
 * Returns: (transfer none): @msgid in the user's language, or @msgid
 *   itself when there is no translation
 */
const char *
qstore_gettext (const char *msgid)
{
  static gsize bound = 0;

  if (g_once_init_enter (&bound))
    {
      const char *dir = g_getenv ("QSTORE_LIB_LOCALEDIR");

      bindtextdomain (QSTORE_GETTEXT_PACKAGE, dir != NULL && *dir != '\0' ? dir : LOCALEDIR);
      bind_textdomain_codeset (QSTORE_GETTEXT_PACKAGE, "UTF-8");
      g_once_init_leave (&bound, 1);
    }
  return g_dgettext (QSTORE_GETTEXT_PACKAGE, msgid);
}
