/* qstore-change-digest.h: what makes a change the same change everywhere
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(QSTORE_INSIDE) && !defined(QSTORE_COMPILATION)
# error "Only <qstore.h> can be included directly."
#endif

#include "qstore-change-set.h"

G_BEGIN_DECLS

QSTORE_AVAILABLE_IN_ALL
const char *qstore_change_op_get_name (QStoreChangeOp   op);
QSTORE_AVAILABLE_IN_ALL
char *qstore_change_digest            (const char      *pipe,
                                       QStoreChangeOp   op,
                                       const char      *key,
                                       GVariant        *next,
                                       GVariant        *prev);
QSTORE_AVAILABLE_IN_ALL
char *qstore_change_digest_for_change (QStoreChangeSet *change_set,
                                       guint            index,
                                       const char      *pipe);
QSTORE_AVAILABLE_IN_ALL
char *qstore_change_key_text          (GVariant        *key);
QSTORE_AVAILABLE_IN_ALL
char *qstore_compose_change_key       (const char      *digest,
                                       guint            occurrence);
QSTORE_AVAILABLE_IN_ALL
char *qstore_parse_change_key         (const char      *change_key,
                                       guint           *occurrence);

G_END_DECLS
