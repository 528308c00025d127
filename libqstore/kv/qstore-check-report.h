/* qstore-check-report.h: what a check of a store found
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
 * QSTORE_CHECK_SCOPE_FILE:
 *
 * The scope of problems in a provider's own files and their structure
 * (the object is the file or location).
 */
#define QSTORE_CHECK_SCOPE_FILE "file"

/**
 * QSTORE_CHECK_SCOPE_STORE:
 *
 * The scope of problems in one key/value store (the object is the store's
 * physical name).
 */
#define QSTORE_CHECK_SCOPE_STORE "store"

/**
 * QSTORE_CHECK_SCOPE_TABLE:
 *
 * The scope of problems in a table's rows and its row count (the object
 * is the table's name); see qstore_table_check().
 */
#define QSTORE_CHECK_SCOPE_TABLE "table"

/**
 * QSTORE_CHECK_SCOPE_INDEX:
 *
 * The scope of problems in a table's index (the object is the index's
 * name); see qstore_table_check().
 */
#define QSTORE_CHECK_SCOPE_INDEX "index"

/**
 * QSTORE_CHECK_SCOPE_CATALOG:
 *
 * The scope of problems in a database's catalog (the object is the entry
 * that did not load); see qstore_database_check().
 */
#define QSTORE_CHECK_SCOPE_CATALOG "catalog"

#define QSTORE_TYPE_CHECK_PROBLEM (qstore_check_problem_get_type ())

typedef struct _QStoreCheckProblem QStoreCheckProblem;

QSTORE_AVAILABLE_IN_ALL
GType               qstore_check_problem_get_type    (void) G_GNUC_CONST;
QSTORE_AVAILABLE_IN_ALL
QStoreCheckProblem *qstore_check_problem_copy        (const QStoreCheckProblem  *self);
QSTORE_AVAILABLE_IN_ALL
void                qstore_check_problem_free        (QStoreCheckProblem        *self);
QSTORE_AVAILABLE_IN_ALL
const char         *qstore_check_problem_get_scope   (const QStoreCheckProblem  *self);
QSTORE_AVAILABLE_IN_ALL
const char         *qstore_check_problem_get_object  (const QStoreCheckProblem  *self);
QSTORE_AVAILABLE_IN_ALL
GBytes             *qstore_check_problem_get_key     (const QStoreCheckProblem  *self);
QSTORE_AVAILABLE_IN_ALL
const char         *qstore_check_problem_get_message (const QStoreCheckProblem  *self);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (QStoreCheckProblem, qstore_check_problem_free)

#define QSTORE_TYPE_CHECK_REPORT (qstore_check_report_get_type ())

QSTORE_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (QStoreCheckReport, qstore_check_report, QSTORE, CHECK_REPORT, GObject)

QSTORE_AVAILABLE_IN_ALL
QStoreCheckReport        *qstore_check_report_new                 (void);
QSTORE_AVAILABLE_IN_ALL
void                      qstore_check_report_add_problem         (QStoreCheckReport  *self,
                                                                   const char         *scope,
                                                                   const char         *object,
                                                                   GBytes             *key,
                                                                   const char         *message);
QSTORE_AVAILABLE_IN_ALL
void                      qstore_check_report_add_checked         (QStoreCheckReport  *self,
                                                                   const char         *scope,
                                                                   const char         *object,
                                                                   guint64             n_items);
QSTORE_AVAILABLE_IN_ALL
void                      qstore_check_report_add_note            (QStoreCheckReport  *self,
                                                                   const char         *note);
QSTORE_AVAILABLE_IN_ALL
gboolean                  qstore_check_report_is_clean            (QStoreCheckReport  *self);
QSTORE_AVAILABLE_IN_ALL
guint                     qstore_check_report_get_n_problems      (QStoreCheckReport  *self);
QSTORE_AVAILABLE_IN_ALL
const QStoreCheckProblem *qstore_check_report_get_problem         (QStoreCheckReport  *self,
                                                                   guint               index);
QSTORE_AVAILABLE_IN_ALL
guint                     qstore_check_report_get_n_checked       (QStoreCheckReport  *self,
                                                                   const char         *scope);
QSTORE_AVAILABLE_IN_ALL
guint64                   qstore_check_report_get_n_checked_items (QStoreCheckReport  *self,
                                                                   const char         *scope);
QSTORE_AVAILABLE_IN_ALL
const char * const       *qstore_check_report_get_notes           (QStoreCheckReport  *self);
QSTORE_AVAILABLE_IN_ALL
char                     *qstore_check_report_to_json             (QStoreCheckReport  *self);

G_END_DECLS
