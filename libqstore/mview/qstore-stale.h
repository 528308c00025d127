/* qstore-stale.h: what the next open will do with each materialized view
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(QSTORE_INSIDE) && !defined(QSTORE_COMPILATION)
# error "Only <qstore.h> can be included directly."
#endif

#include <gio/gio.h>

#include "qstore-provider.h"

G_BEGIN_DECLS

/**
 * QStoreStaleVerdict:
 * @QSTORE_STALE_VERDICT_ADOPT: the stored contents are kept as they are
 * @QSTORE_STALE_VERDICT_REFILL: the contents are dropped and computed again
 *   from the sources
 * @QSTORE_STALE_VERDICT_ERROR: the view cannot be rebuilt (its definition
 *   does not parse, or a source is missing): the next open lists it among
 *   the rehydration errors
 *
 * What opening the store will do with a materialized view.
 */
typedef enum /*< underscore_name=qstore_stale_verdict >*/
{
  QSTORE_STALE_VERDICT_ADOPT,
  QSTORE_STALE_VERDICT_REFILL,
  QSTORE_STALE_VERDICT_ERROR,
} QStoreStaleVerdict;

/**
 * QStoreStaleReason:
 * @QSTORE_STALE_REASON_TRUSTED_DURABLE_SET: adopt: the durable stale set
 *   does not list the view and every source view is adopted
 * @QSTORE_STALE_REASON_TRUSTED_MARKER: adopt: the last close was clean, it
 *   did not list the view as stale and every source view is adopted
 * @QSTORE_STALE_REASON_DURABLE_SET_MALFORMED: refill: the durable stale set
 *   does not parse, so nothing is trusted
 * @QSTORE_STALE_REASON_IN_DURABLE_SET: refill: the durable stale set lists
 *   the view
 * @QSTORE_STALE_REASON_MARKER_ABSENT: refill: no clean-shutdown marker (the
 *   last session did not close, or is still open)
 * @QSTORE_STALE_REASON_MARKER_MALFORMED: refill: the clean-shutdown marker
 *   does not parse, so nothing is trusted
 * @QSTORE_STALE_REASON_STALE_AT_CLOSE: refill: the marker lists the view as
 *   stale when the store was closed
 * @QSTORE_STALE_REASON_SOURCE_REFILLED: refill: a materialized view it reads
 *   is refilled (the subject names it)
 * @QSTORE_STALE_REASON_DEFINITION_ERROR: error: the definition does not
 *   parse (the subject holds the parser's message)
 * @QSTORE_STALE_REASON_SOURCE_MISSING: error: a source is not in the catalog
 *   (the subject names it)
 * @QSTORE_STALE_REASON_SOURCE_FAILS: error: a materialized view it reads
 *   cannot be rebuilt, or views read each other in a cycle (the subject
 *   names it)
 *
 * Why a materialized view gets its verdict, following the trust rules of
 * the open: with an atomic provider and a durable stale set the set
 * decides, else the clean-shutdown marker; a view over a refilled view is
 * refilled too.
 */
typedef enum /*< underscore_name=qstore_stale_reason >*/
{
  QSTORE_STALE_REASON_TRUSTED_DURABLE_SET,
  QSTORE_STALE_REASON_TRUSTED_MARKER,
  QSTORE_STALE_REASON_DURABLE_SET_MALFORMED,
  QSTORE_STALE_REASON_IN_DURABLE_SET,
  QSTORE_STALE_REASON_MARKER_ABSENT,
  QSTORE_STALE_REASON_MARKER_MALFORMED,
  QSTORE_STALE_REASON_STALE_AT_CLOSE,
  QSTORE_STALE_REASON_SOURCE_REFILLED,
  QSTORE_STALE_REASON_DEFINITION_ERROR,
  QSTORE_STALE_REASON_SOURCE_MISSING,
  QSTORE_STALE_REASON_SOURCE_FAILS,
} QStoreStaleReason;

/**
 * QStoreStaleTrust:
 * @QSTORE_STALE_TRUST_DURABLE_SET: the durable stale set decides (an atomic
 *   provider with the set present)
 * @QSTORE_STALE_TRUST_MARKER: the clean-shutdown marker decides
 * @QSTORE_STALE_TRUST_NONE: nothing is trusted: every materialized view is
 *   refilled (marker absent or malformed, or durable set malformed)
 *
 * What the next open bases its trust on.
 */
typedef enum /*< underscore_name=qstore_stale_trust >*/
{
  QSTORE_STALE_TRUST_DURABLE_SET,
  QSTORE_STALE_TRUST_MARKER,
  QSTORE_STALE_TRUST_NONE,
} QStoreStaleTrust;

#define QSTORE_TYPE_STALE_VIEW (qstore_stale_view_get_type ())

QSTORE_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (QStoreStaleView, qstore_stale_view, QSTORE, STALE_VIEW, GObject)

QSTORE_AVAILABLE_IN_ALL
const char         *qstore_stale_view_get_name            (QStoreStaleView   *self);
QSTORE_AVAILABLE_IN_ALL
const char         *qstore_stale_view_get_schema          (QStoreStaleView   *self);
QSTORE_AVAILABLE_IN_ALL
const char         *qstore_stale_view_get_view_name       (QStoreStaleView   *self);
QSTORE_AVAILABLE_IN_ALL
const char         *qstore_stale_view_get_body            (QStoreStaleView   *self);
QSTORE_AVAILABLE_IN_ALL
const char * const *qstore_stale_view_get_sources         (QStoreStaleView   *self);
QSTORE_AVAILABLE_IN_ALL
QStoreStaleVerdict  qstore_stale_view_get_verdict         (QStoreStaleView   *self);
QSTORE_AVAILABLE_IN_ALL
QStoreStaleReason   qstore_stale_view_get_reason_kind     (QStoreStaleView   *self);
QSTORE_AVAILABLE_IN_ALL
const char         *qstore_stale_view_get_reason_subject  (QStoreStaleView   *self);
QSTORE_AVAILABLE_IN_ALL
const char         *qstore_stale_view_get_reason          (QStoreStaleView   *self);

#define QSTORE_TYPE_STALE_REPORT (qstore_stale_report_get_type ())

QSTORE_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (QStoreStaleReport, qstore_stale_report, QSTORE, STALE_REPORT, GObject)

QSTORE_AVAILABLE_IN_ALL
QStoreStaleReport  *qstore_stale_report_new                     (QStoreProvider     *provider,
                                                                 GError            **error);
QSTORE_AVAILABLE_IN_ALL
gboolean            qstore_stale_report_get_marker_present      (QStoreStaleReport  *self);
QSTORE_AVAILABLE_IN_ALL
gboolean            qstore_stale_report_get_marker_malformed    (QStoreStaleReport  *self);
QSTORE_AVAILABLE_IN_ALL
const char * const *qstore_stale_report_get_stale_at_close      (QStoreStaleReport  *self);
QSTORE_AVAILABLE_IN_ALL
const char         *qstore_stale_report_get_marker_text         (QStoreStaleReport  *self);
QSTORE_AVAILABLE_IN_ALL
gboolean            qstore_stale_report_get_durable_set_present (QStoreStaleReport  *self);
QSTORE_AVAILABLE_IN_ALL
gboolean            qstore_stale_report_get_durable_set_malformed (QStoreStaleReport *self);
QSTORE_AVAILABLE_IN_ALL
const char * const *qstore_stale_report_get_durable_stale       (QStoreStaleReport  *self);
QSTORE_AVAILABLE_IN_ALL
const char         *qstore_stale_report_get_durable_set_text    (QStoreStaleReport  *self);
QSTORE_AVAILABLE_IN_ALL
gboolean            qstore_stale_report_get_atomic              (QStoreStaleReport  *self);
QSTORE_AVAILABLE_IN_ALL
QStoreStaleTrust    qstore_stale_report_get_trust               (QStoreStaleReport  *self);
QSTORE_AVAILABLE_IN_ALL
GListModel         *qstore_stale_report_get_views               (QStoreStaleReport  *self);
QSTORE_AVAILABLE_IN_ALL
QStoreStaleView    *qstore_stale_report_lookup_view             (QStoreStaleReport  *self,
                                                                 const char         *name);

G_END_DECLS
