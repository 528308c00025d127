/* qstore-inspector-errors.h: library errors told to a person who only looks
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/**
 * QStoreInspectorActivity:
 * @QSTORE_INSPECTOR_ACTIVITY_OPEN: opening a store; the subject is its location
 * @QSTORE_INSPECTOR_ACTIVITY_REFRESH: reading an open store again; the
 *   subject is its location
 * @QSTORE_INSPECTOR_ACTIVITY_ROWS: reading the rows of a table; the subject
 *   is its `schema.name`
 * @QSTORE_INSPECTOR_ACTIVITY_VIEW: computing the rows of a view; the subject
 *   is its `schema.name`
 *
 * What the inspector was doing when an error came.
 */
typedef enum
{
  QSTORE_INSPECTOR_ACTIVITY_OPEN,
  QSTORE_INSPECTOR_ACTIVITY_REFRESH,
  QSTORE_INSPECTOR_ACTIVITY_ROWS,
  QSTORE_INSPECTOR_ACTIVITY_VIEW,
} QStoreInspectorActivity;

char *qstore_inspector_explain_error (const GError            *error,
                                      QStoreInspectorActivity  activity,
                                      const char              *subject);

G_END_DECLS
