/* qstore-open.c: a database, put together from every layer
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "qstore-alter-private.h"
#include "qstore-change-hub-private.h"
#include "qstore-ddl-private.h"
#include "qstore-lifecycle-private.h"
#include "qstore-mview-ddl-private.h"
#include "qstore-mview-extension-private.h"
#include "qstore-open-private.h"
#include "qstore-staging-marker-private.h"
#include "qstore-views-private.h"
#include "qstore-write-out-private.h"

/* Every statement kind qstore runs itself, with its one handler. The
 * router (sql/qstore-router.c) reads each statement once and sends it
 * here; what SQLite runs as it is never comes here. */
static const QStoreStatementHandler handlers[] = {
  { QSTORE_STATEMENT_CREATE_TABLE, NULL, QSTORE_HANDLER_DDL, qstore_ddl_create_table },
  { QSTORE_STATEMENT_DROP_TABLE, NULL, QSTORE_HANDLER_DDL, qstore_ddl_drop_table },
  { QSTORE_STATEMENT_RENAME_TABLE, NULL, QSTORE_HANDLER_DDL, qstore_ddl_rename },
  { QSTORE_STATEMENT_ALTER_TABLE, NULL, QSTORE_HANDLER_DDL, qstore_ddl_alter_columns },
  { QSTORE_STATEMENT_ALTER_TABLE_ARM, NULL, QSTORE_HANDLER_DDL, qstore_alter_table },
  { QSTORE_STATEMENT_CREATE_INDEX, NULL, QSTORE_HANDLER_DDL, qstore_ddl_create_index },
  { QSTORE_STATEMENT_DROP_INDEX, NULL, QSTORE_HANDLER_DDL, qstore_ddl_drop_index },
  { QSTORE_STATEMENT_REINDEX, NULL, QSTORE_HANDLER_DDL, qstore_ddl_reindex },
  { QSTORE_STATEMENT_CREATE_VIEW, NULL, QSTORE_HANDLER_DDL, qstore_views_create },
  { QSTORE_STATEMENT_DROP_VIEW, NULL, QSTORE_HANDLER_DDL, qstore_views_drop },
  { QSTORE_STATEMENT_CREATE_MATERIALIZED_VIEW, NULL, QSTORE_HANDLER_DDL, qstore_mview_create },
  { QSTORE_STATEMENT_DROP_MATERIALIZED_VIEW, NULL, QSTORE_HANDLER_DDL, qstore_mview_drop },
  { QSTORE_STATEMENT_REFRESH_MATERIALIZED_VIEW, NULL, QSTORE_HANDLER_DDL, qstore_mview_refresh },
  { QSTORE_STATEMENT_SETTING, QSTORE_MVIEW_THRESHOLD_SETTING, QSTORE_HANDLER_NONE,
    qstore_mview_threshold_setting },
  { QSTORE_STATEMENT_SETTING, QSTORE_CHANGE_LOG_SETTING, QSTORE_HANDLER_NONE,
    qstore_change_hub_log_setting },
  { QSTORE_STATEMENT_SETTING, QSTORE_STAGING_STALE_SETTING, QSTORE_HANDLER_NONE,
    qstore_staging_stale_minutes_setting },
  { QSTORE_STATEMENT_SETTING, QSTORE_WRITE_OUT_STEP_SETTING, QSTORE_HANDLER_NONE,
    qstore_write_out_step_setting },
};

/* What the layers above SQL add to every database, in the order their
 * hooks run. A clean close ends with the materialized views' marker,
 * which must be the last write. The change log comes first: it is
 * written in every commit, those the views make at open included. */
static const QStoreDatabaseExtension * const extensions[] = {
  &qstore_changes_extension,
  &qstore_staging_marker_extension,
  &qstore_mview_extension,
};

static const QStoreDatabaseSetup setup = {
  handlers, G_N_ELEMENTS (handlers),
  extensions, G_N_ELEMENTS (extensions),
};

const QStoreDatabaseSetup *
qstore_database_get_full_setup (void)
{
  return &setup;
}

/**
 * qstore_database_open:
 * @uri: where the store is, as `provider:location` (such as
 *   `lmdb:/path/to/dir` or `memory:`), with `?atomic=0` and other
 *   provider options after the location
 * @flags: how to open it
 * @error: return location for a #GError
 *
 * Opens the store at @uri as an SQL database: loads the provider, reads
 * the catalog and makes every table and view it lists available to SQL.
 * A catalog entry that cannot be read back does not stop the others:
 * qstore_database_get_rehydration_result() says what loaded and what did
 * not, and why.
 *
 * Returns: (transfer full): the database, or %NULL on error
 */
QStoreDatabase *
qstore_database_open (const char       *uri,
                      QStoreOpenFlags   flags,
                      GError          **error)
{
  g_return_val_if_fail (uri != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  return qstore_database_open_with_setup (uri, flags, &setup, error);
}
