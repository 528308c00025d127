/* qstore-change-set.h: what one committed transaction changed
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

/**
 * QStoreChangeOp:
 * @QSTORE_CHANGE_INSERT: a row was inserted (no old row)
 * @QSTORE_CHANGE_UPDATE: a row was changed in place or re-keyed
 * @QSTORE_CHANGE_DELETE: a row was deleted (no new row)
 *
 * What happened to a row.
 */
typedef enum /*< underscore_name=qstore_change_op >*/
{
  QSTORE_CHANGE_INSERT,
  QSTORE_CHANGE_UPDATE,
  QSTORE_CHANGE_DELETE,
} QStoreChangeOp;

#define QSTORE_TYPE_CHANGE_SET (qstore_change_set_get_type ())

QSTORE_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (QStoreChangeSet, qstore_change_set, QSTORE, CHANGE_SET, GObject)

QSTORE_AVAILABLE_IN_ALL
guint64         qstore_change_set_get_tx_id     (QStoreChangeSet *self);
QSTORE_AVAILABLE_IN_ALL
gint64          qstore_change_set_get_time      (QStoreChangeSet *self);
QSTORE_AVAILABLE_IN_ALL
guint           qstore_change_set_get_n_changes (QStoreChangeSet *self);
QSTORE_AVAILABLE_IN_ALL
const char     *qstore_change_set_get_schema    (QStoreChangeSet *self,
                                                 guint            index);
QSTORE_AVAILABLE_IN_ALL
const char     *qstore_change_set_get_table     (QStoreChangeSet *self,
                                                 guint            index);
QSTORE_AVAILABLE_IN_ALL
QStoreChangeOp  qstore_change_set_get_op        (QStoreChangeSet *self,
                                                 guint            index);
QSTORE_AVAILABLE_IN_ALL
GVariant       *qstore_change_set_get_old_row   (QStoreChangeSet *self,
                                                 guint            index);
QSTORE_AVAILABLE_IN_ALL
GVariant       *qstore_change_set_get_new_row   (QStoreChangeSet *self,
                                                 guint            index);
QSTORE_AVAILABLE_IN_ALL
const char * const *qstore_change_set_get_names (QStoreChangeSet *self,
                                                 guint            index);
QSTORE_AVAILABLE_IN_ALL
GVariant       *qstore_change_set_get_key       (QStoreChangeSet *self,
                                                 guint            index);
QSTORE_AVAILABLE_IN_ALL
GVariant       *qstore_change_set_get_old_key   (QStoreChangeSet *self,
                                                 guint            index);
QSTORE_AVAILABLE_IN_ALL
GVariant       *qstore_change_set_get_old_record (QStoreChangeSet *self,
                                                  guint            index);
QSTORE_AVAILABLE_IN_ALL
GVariant       *qstore_change_set_get_new_record (QStoreChangeSet *self,
                                                  guint            index);

G_END_DECLS
