/* qstore-iter-private.h
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "qstore-iter.h"

G_BEGIN_DECLS

/* qstore_iter_next() without the checks of its arguments, for the
 * library's own walks of iterators it made: it runs once per row of every
 * scan, where a type check is a cost. */
gboolean qstore_iter_next_internal (QStoreIter  *self,
                                    GError     **error);

G_END_DECLS
