/* qstore-iter.h: ordered iteration over a range of keys
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(QSTORE_INSIDE) && !defined(QSTORE_COMPILATION)
# error "Only <qstore.h> can be included directly."
#endif

#include <glib-object.h>

#include "qstore-bounds.h"
#include "qstore-types.h"

G_BEGIN_DECLS

#define QSTORE_TYPE_ITER (qstore_iter_get_type ())

QSTORE_AVAILABLE_IN_ALL
G_DECLARE_DERIVABLE_TYPE (QStoreIter, qstore_iter, QSTORE, ITER, GObject)

/**
 * QStoreIterClass:
 * @parent_class: the parent class
 * @advance: move to the next candidate entry in the direction of iteration;
 *   the first call positions the cursor at the near bound (at or after the
 *   lower bound going forward, at or before the upper bound in reverse).
 *   Return %FALSE with no error at the end of the store. The base class
 *   applies both bounds exactly and the limit, so a provider may return a
 *   few entries on the wrong side of the near bound (they are skipped) and
 *   need not look at the far bound at all.
 * @peek_key: the current key, valid until the next @advance
 * @peek_value: the current value, valid until the next @advance
 * @restart: forget the position, so that the next @advance positions at
 *   the near bound of the bounds now set ([method@Iter.get_bounds]: they
 *   may differ from the last ones, in direction too), reading the same
 *   state as before when the iterator reads a snapshot or a transaction.
 *   Optional: without it, [method@Iter.seek] fails with
 *   %QSTORE_ERROR_UNSUPPORTED
 *
 * Providers subclass #QStoreIter and create instances with
 * qstore_iter_new(), which is cheaper than setting the construct
 * properties through g_object_new().
 */
struct _QStoreIterClass
{
  GObjectClass parent_class;

  gboolean       (*advance)    (QStoreIter  *self,
                                GError     **error);
  const guint8  *(*peek_key)   (QStoreIter  *self,
                                gsize       *key_len);
  const guint8  *(*peek_value) (QStoreIter  *self,
                                gsize       *value_len);
  gboolean       (*restart)    (QStoreIter  *self,
                                GError     **error);

  /*< private >*/
  gpointer padding[7];
};

QSTORE_AVAILABLE_IN_ALL
gpointer            qstore_iter_new        (GType               iter_type,
                                            const QStoreBounds *bounds,
                                            QStoreProvider     *provider);
QSTORE_AVAILABLE_IN_ALL
gboolean            qstore_iter_next       (QStoreIter  *self,
                                            GError     **error);
QSTORE_AVAILABLE_IN_ALL
gboolean            qstore_iter_seek       (QStoreIter         *self,
                                            const QStoreBounds *bounds,
                                            GError            **error);
QSTORE_AVAILABLE_IN_ALL
const guint8       *qstore_iter_peek_key   (QStoreIter  *self,
                                            gsize       *key_len);
QSTORE_AVAILABLE_IN_ALL
const guint8       *qstore_iter_peek_value (QStoreIter  *self,
                                            gsize       *value_len);
QSTORE_AVAILABLE_IN_ALL
GBytes             *qstore_iter_get_key    (QStoreIter  *self);
QSTORE_AVAILABLE_IN_ALL
GBytes             *qstore_iter_get_value  (QStoreIter  *self);
QSTORE_AVAILABLE_IN_ALL
const QStoreBounds *qstore_iter_get_bounds (QStoreIter  *self);

G_END_DECLS
