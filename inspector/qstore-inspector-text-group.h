/* qstore-inspector-text-group.h: a titled box of text, with a copy button
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <adwaita.h>

G_BEGIN_DECLS

GtkWidget *qstore_inspector_text_group_new (const char *title,
                                            const char *description,
                                            const char *text,
                                            const char *copied,
                                            const char *style);
void       qstore_inspector_toast          (GtkWidget  *widget,
                                            const char *text);

G_END_DECLS
