/* qstore-op-buffer-private.h: write ops with their bytes, in one arena
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "qstore-write-op.h"

G_BEGIN_DECLS

typedef struct
{
  GArray    *ops;     /* QStoreWriteOp, pointing into blocks */
  GPtrArray *blocks;  /* arena blocks; never moved, so pointers stay valid */
  gsize      used;    /* bytes used in the last block */
  gsize      size;    /* size of the last block */
} QStoreOpBuffer;

void qstore_op_buffer_init  (QStoreOpBuffer    *self);
void qstore_op_buffer_clear (QStoreOpBuffer    *self);
void qstore_op_buffer_reset (QStoreOpBuffer    *self);
void qstore_op_buffer_add   (QStoreOpBuffer    *self,
                             QStoreKV          *store,
                             QStoreWriteOpKind  kind,
                             const guint8      *key,
                             gsize              key_len,
                             const guint8      *value,
                             gsize              value_len);

G_END_DECLS
