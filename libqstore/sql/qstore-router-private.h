/* qstore-router-private.h: every statement to its one handler
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "qstore-database-private.h"
#include "qstore-result.h"
#include "qstore-statement-private.h"

G_BEGIN_DECLS

typedef enum
{
  QSTORE_HANDLER_NONE = 0,
  /* DDL: runs outside any transaction (an open one commits first, and a
   * new one begins afterwards), between the extensions' before_ddl and
   * after_ddl, and returns no rows. */
  QSTORE_HANDLER_DDL = 1 << 0,
} QStoreHandlerFlags;

/* Runs @statement; a handler without QSTORE_HANDLER_DDL sets *@result. */
typedef gboolean (*QStoreStatementFunc) (QStoreDatabase   *db,
                                         QStoreStatement  *statement,
                                         QStoreResult    **result,
                                         GError          **error);

typedef struct
{
  QStoreStatementKind  kind;
  const char          *setting;     /* QSTORE_STATEMENT_SETTING: the PRAGMA's name */
  QStoreHandlerFlags   flags;
  QStoreStatementFunc  run;
} QStoreStatementHandler;

/* A catalog entry handed to the extension that keeps its kind. */
typedef struct
{
  QStoreCatalogKeyKind kind;
  GBytes *key;
  char   *schema;
  char   *name;
  char   *text;
} QStoreCatalogItem;

void qstore_catalog_item_clear (QStoreCatalogItem *item);

/* What a layer above the SQL layer adds to every database: state of its
 * own, and hooks the SQL layer calls at the moments it cannot know
 * about otherwise. Every hook may be NULL. */
typedef struct
{
  /* At open, before the catalog is read: the layer's state for this
   * database (kept with qstore_database_add_extension_state(), under the
   * extension's address). */
  gboolean (*attach)          (QStoreDatabase     *db,
                               GError            **error);
  /* The catalog entries of @catalog_kind, after every table and view
   * loaded and an interrupted commit was repaired. */
  QStoreCatalogKeyKind catalog_kind;
  void     (*rehydrate)       (QStoreDatabase     *db,
                               GArray             *items);   /* QStoreCatalogItem */
  /* Before any statement runs: may refuse it. */
  gboolean (*check_statement) (QStoreDatabase     *db,
                               QStoreStatement    *statement,
                               GError            **error);
  /* Around every statement SQLite runs that writes rows: before may
   * refuse it; after comes whether it failed or not. */
  gboolean (*before_write)    (QStoreDatabase     *db,
                               GError            **error);
  void     (*after_write)     (QStoreDatabase     *db);
  /* Around every DDL statement, failed or not, outside any transaction. */
  void     (*before_ddl)      (QStoreDatabase     *db);
  void     (*after_ddl)       (QStoreDatabase     *db);
  /* A clean close, before the connections go. */
  gboolean (*close)           (QStoreDatabase     *db,
                               GError            **error);
} QStoreDatabaseExtension;

struct _QStoreDatabaseSetup
{
  const QStoreStatementHandler  *handlers;
  guint                          n_handlers;
  const QStoreDatabaseExtension * const *extensions;
  guint                          n_extensions;
};

/* What a setting's handler gives back: for `PRAGMA name` (@read), one
 * row with @value in a column called @column; for `PRAGMA name = value`,
 * no rows. *@result may be NULL (nothing is asked). */
gboolean  qstore_router_setting_result (QStoreDatabase  *db,
                                        const char      *column,
                                        gboolean         read,
                                        gint64           value,
                                        QStoreResult   **result,
                                        GError         **error);

/* Binds the parameters of @stmt from @data: qstore_params_bind() for a
 * GVariant, or a prepared statement's values. */
typedef gboolean (*QStoreBindFunc) (sqlite3_stmt  *stmt,
                                    gpointer       data,
                                    GError       **error);

/* Where a caller that runs one text again and again found the statement
 * read from it last time, zeroed at first: the next run takes it without
 * looking the text up, while no statement left the cache since. */
typedef struct
{
  gpointer entry;
  guint64  generation;
} QStoreRouterHint;

/* Runs the first statement of @sql; *@tail gets where the next starts.
 * @bind (when given) binds its parameters from @bind_data; @single
 * refuses a second statement after it; *@result (when given) gets its
 * rows, and *@changes (when given) how many rows it changed. A result
 * already in *@result is one of the caller's own that nobody else holds:
 * it is emptied and filled again rather than a new one made. @hint (when
 * given) is the caller's for @sql, and only for that text. */
gboolean  qstore_router_run  (QStoreDatabase   *db,
                              const char       *sql,
                              const char      **tail,
                              QStoreBindFunc    bind,
                              gpointer          bind_data,
                              gboolean          single,
                              QStoreRouterHint *hint,
                              QStoreResult    **result,
                              gint64           *changes,
                              GError          **error);

/* Reads @sql, which must be one statement, as qstore_router_run() would,
 * and leaves it where that finds it. Returns one name per parameter
 * (@n_parameters of them, each NULL for a positional one), or NULL with
 * @error. */
char    **qstore_router_read_parameters (QStoreDatabase  *db,
                                         const char      *sql,
                                         guint           *n_parameters,
                                         GError         **error);

/* Reads the first statement of @sql into @statement: its kind, the
 * objects it names, its span, and for what SQLite runs, the statement
 * prepared on the main connection. */
gboolean  qstore_router_read (QStoreDatabase   *db,
                              const char       *sql,
                              QStoreStatement  *statement,
                              GError          **error);

G_END_DECLS
