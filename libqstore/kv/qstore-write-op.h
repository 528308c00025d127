/* qstore-write-op.h: the unit of work handed to a provider
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(QSTORE_INSIDE) && !defined(QSTORE_COMPILATION)
# error "Only <qstore.h> can be included directly."
#endif

#include "qstore-types.h"

G_BEGIN_DECLS

/**
 * QStoreWriteOpKind:
 * @QSTORE_WRITE_OP_PUT: store the value under the key
 * @QSTORE_WRITE_OP_DELETE: remove the key (absent keys are fine)
 *
 * What a [struct@WriteOp] does.
 */
typedef enum /*< underscore_name=qstore_write_op_kind >*/
{
  QSTORE_WRITE_OP_PUT,
  QSTORE_WRITE_OP_DELETE,
} QStoreWriteOpKind;

/**
 * QStoreWriteOp:
 * @store: the store written to; it belongs to the provider that applies the op
 * @kind: put or delete
 * @key: the key (non-empty, within the provider's key length limit)
 * @key_len: length of @key
 * @value: the value of a put
 * @value_len: length of @value
 *
 * One write, as providers receive it. A list of ops is applied in order
 * (the last write to a key wins) and all or nothing.
 */
struct _QStoreWriteOp
{
  QStoreKV          *store;
  QStoreWriteOpKind  kind;
  const guint8      *key;
  gsize              key_len;
  const guint8      *value;
  gsize              value_len;
};

G_END_DECLS
