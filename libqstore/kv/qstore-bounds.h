/* qstore-bounds.h: key ranges for iteration
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(QSTORE_INSIDE) && !defined(QSTORE_COMPILATION)
# error "Only <qstore.h> can be included directly."
#endif

#include <glib-object.h>

#include "qstore-version-macros.h"

G_BEGIN_DECLS

#define QSTORE_TYPE_BOUNDS (qstore_bounds_get_type ())

typedef struct _QStoreBounds QStoreBounds;

QSTORE_AVAILABLE_IN_ALL
GType         qstore_bounds_get_type    (void) G_GNUC_CONST;
QSTORE_AVAILABLE_IN_ALL
QStoreBounds *qstore_bounds_new         (void);
QSTORE_AVAILABLE_IN_ALL
QStoreBounds *qstore_bounds_copy        (const QStoreBounds *self);
QSTORE_AVAILABLE_IN_ALL
void          qstore_bounds_free        (QStoreBounds       *self);
QSTORE_AVAILABLE_IN_ALL
void          qstore_bounds_set_gte     (QStoreBounds       *self,
                                         const guint8       *key,
                                         gsize               key_len);
QSTORE_AVAILABLE_IN_ALL
void          qstore_bounds_set_gt      (QStoreBounds       *self,
                                         const guint8       *key,
                                         gsize               key_len);
QSTORE_AVAILABLE_IN_ALL
void          qstore_bounds_set_lte     (QStoreBounds       *self,
                                         const guint8       *key,
                                         gsize               key_len);
QSTORE_AVAILABLE_IN_ALL
void          qstore_bounds_set_lt      (QStoreBounds       *self,
                                         const guint8       *key,
                                         gsize               key_len);
QSTORE_AVAILABLE_IN_ALL
void          qstore_bounds_set_reverse (QStoreBounds       *self,
                                         gboolean            reverse);
QSTORE_AVAILABLE_IN_ALL
void          qstore_bounds_set_limit   (QStoreBounds       *self,
                                         gint64              limit);
QSTORE_AVAILABLE_IN_ALL
void          qstore_bounds_unset_limit (QStoreBounds       *self);

QSTORE_AVAILABLE_IN_ALL
const guint8 *qstore_bounds_get_lower   (const QStoreBounds *self,
                                         gsize              *key_len,
                                         gboolean           *inclusive);
QSTORE_AVAILABLE_IN_ALL
const guint8 *qstore_bounds_get_upper   (const QStoreBounds *self,
                                         gsize              *key_len,
                                         gboolean           *inclusive);
QSTORE_AVAILABLE_IN_ALL
gboolean      qstore_bounds_get_reverse (const QStoreBounds *self);
QSTORE_AVAILABLE_IN_ALL
gboolean      qstore_bounds_get_limit   (const QStoreBounds *self,
                                         gint64             *limit);
QSTORE_AVAILABLE_IN_ALL
gboolean      qstore_bounds_validate    (const QStoreBounds *self,
                                         GError            **error);
QSTORE_AVAILABLE_IN_ALL
gboolean      qstore_bounds_above_lower (const QStoreBounds *self,
                                         const guint8       *key,
                                         gsize               key_len);
QSTORE_AVAILABLE_IN_ALL
gboolean      qstore_bounds_below_upper (const QStoreBounds *self,
                                         const guint8       *key,
                                         gsize               key_len);

QSTORE_AVAILABLE_IN_ALL
int           qstore_key_compare        (const guint8       *a,
                                         gsize               a_len,
                                         const guint8       *b,
                                         gsize               b_len);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (QStoreBounds, qstore_bounds_free)

G_END_DECLS
