/* qstore-types.h: the names of the key/value layer's types
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Declared once here, so a header that only passes a type around includes
 * this one instead of the type's own header: no header then has to
 * include one that includes it back.
 */
#pragma once

#if !defined(QSTORE_INSIDE) && !defined(QSTORE_COMPILATION)
# error "Only <qstore.h> can be included directly."
#endif

#include <glib-object.h>

#include "qstore-version-macros.h"

G_BEGIN_DECLS

typedef struct _QStoreProvider     QStoreProvider;
typedef struct _QStoreKV           QStoreKV;
typedef struct _QStoreIter         QStoreIter;
typedef struct _QStoreSnapshot     QStoreSnapshot;
typedef struct _QStoreBatch        QStoreBatch;
typedef struct _QStoreAtomicBatch  QStoreAtomicBatch;
typedef struct _QStoreWriteOp      QStoreWriteOp;
typedef struct _QStoreCheckReport  QStoreCheckReport;

/* For the lower types that hold a provider in a property; declared with
 * the interface in qstore-provider.h, where the introspection scanner
 * takes it from. */
#ifndef __GI_SCANNER__
QSTORE_AVAILABLE_IN_ALL
GType qstore_provider_get_type (void);
#endif

G_END_DECLS
