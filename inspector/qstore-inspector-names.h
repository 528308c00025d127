/* qstore-inspector-names.h: how the inspector orders, joins and quotes names
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

int   qstore_inspector_natural_compare (const char *a,
                                        const char *b);
char *qstore_inspector_qualified_name  (const char *schema,
                                        const char *name);
char *qstore_inspector_quote_identifier (const char *name);
char *qstore_inspector_location_of     (const char *uri);
char *qstore_inspector_store_title     (const char *uri);

G_END_DECLS
