/* main.c: qstore-inspector
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "qstore-inspector-application.h"

int
main (int    argc,
      char **argv)
{
  g_autoptr(QStoreInspectorApplication) application = NULL;

  qstore_inspector_init_i18n ();
  application = qstore_inspector_application_new ();
  return g_application_run (G_APPLICATION (application), argc, argv);
}
