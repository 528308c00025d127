/* qstore-router.c: every statement to its one handler
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "qstore-coordinator-private.h"
#include "qstore-error.h"
#include "qstore-i18n-private.h"
#include "qstore-params-private.h"
#include "qstore-result-private.h"
#include "qstore-router-private.h"
#include "qstore-sql-token-private.h"

/* A statement is read once, here: qstore-statement.c recognises the forms
 * SQLite has no words for from their leading words, and SQLite prepares
 * the rest while an authorizer watches what it does. The statement then
 * goes to the one handler its kind has in the database's setup (see
 * open/qstore-open.c); what SQLite runs as it is, runs here. */

void
qstore_catalog_item_clear (QStoreCatalogItem *item)
{
  g_clear_pointer (&item->key, g_bytes_unref);
  g_clear_pointer (&item->schema, g_free);
  g_clear_pointer (&item->name, g_free);
  g_clear_pointer (&item->text, g_free);
}

/* A setting is named as its handler spells it: `name` for the
 * database's own (`PRAGMA name` or `PRAGMA main.name`), `schema.name`
 * for one under a schema of its own (`PRAGMA qstore.change_log`). */
static gboolean
setting_matches (const char            *setting,
                 const QStoreStatement *statement)
{
  gsize schema_len;

  if (statement->name == NULL)
    return FALSE;
  if (statement->schema == NULL || g_ascii_strcasecmp (statement->schema, "main") == 0)
    return g_ascii_strcasecmp (setting, statement->name) == 0;
  schema_len = strlen (statement->schema);
  return g_ascii_strncasecmp (setting, statement->schema, schema_len) == 0 &&
         setting[schema_len] == '.' &&
         g_ascii_strcasecmp (setting + schema_len + 1, statement->name) == 0;
}

static const QStoreStatementHandler *
find_handler (QStoreDatabase        *db,
              const QStoreStatement *statement)
{
  for (guint i = 0; i < db->setup->n_handlers; i++)
    {
      const QStoreStatementHandler *handler = &db->setup->handlers[i];

      if (handler->kind != statement->kind)
        continue;
      if (statement->kind == QSTORE_STATEMENT_SETTING &&
          !setting_matches (handler->setting, statement))
        continue;
      return handler;
    }
  return NULL;
}

gboolean
qstore_router_setting_result (QStoreDatabase  *db,
                              const char      *column,
                              gboolean         read,
                              gint64           value,
                              QStoreResult   **result,
                              GError         **error)
{
  g_autoptr(sqlite3_stmt) stmt = NULL;
  g_autofree char *sql = NULL;

  if (result == NULL)
    return TRUE;
  if (!read)
    {
      *result = qstore_result_new_for_statement (NULL);
      qstore_result_set_counts (*result, 0, sqlite3_last_insert_rowid (db->db));
      return TRUE;
    }
  sql = g_strdup_printf ("SELECT ?1 AS \"%s\"", column);
  if (sqlite3_prepare_v2 (db->db, sql, -1, &stmt, NULL) != SQLITE_OK)
    {
      qstore_database_set_sqlite_error (db, db->db, sqlite3_errcode (db->db), error);
      return FALSE;
    }
  sqlite3_bind_int64 (stmt, 1, value);
  *result = qstore_result_new_for_statement (stmt);
  if (sqlite3_step (stmt) == SQLITE_ROW)
    qstore_result_add_row (*result, stmt);
  qstore_result_set_counts (*result, 0, sqlite3_last_insert_rowid (db->db));
  return TRUE;
}

/* Reading */

/* What preparing a statement on the main connection shows. */
typedef struct
{
  QStoreDatabase  *db;
  QStoreStatement *statement;
  QStoreStatementKind kind;       /* the DDL SQLite saw, or QSTORE_STATEMENT_SQL */
  char            *object;        /* what that DDL is about */
  char            *refusal;       /* why the statement is refused */
  gboolean         drops_index;
  gboolean         plain;         /* reads and writes rows, nothing else */
} Watch;

static void
watch_clear (Watch *w)
{
  g_clear_pointer (&w->object, g_free);
  g_clear_pointer (&w->refusal, g_free);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Watch, watch_clear)

static void
watch_ddl (Watch               *w,
           QStoreStatementKind  kind,
           const char          *object)
{
  if (w->kind != QSTORE_STATEMENT_SQL)
    return;
  w->kind = kind;
  w->object = g_strdup (object);
}

static int
watch_authorizer (void       *data,
                  int         action,
                  const char *arg1,
                  const char *arg2,
                  const char *db_name,
                  const char *trigger)
{
  Watch *w = data;
  QStoreStatement *statement = w->statement;
  gboolean in_main = g_strcmp0 (db_name, "main") == 0;

  switch (action)
    {
    case SQLITE_CREATE_TABLE:
      if (in_main)
        watch_ddl (w, QSTORE_STATEMENT_CREATE_TABLE, arg1);
      break;

    case SQLITE_DROP_VTABLE:
      if (in_main && g_strcmp0 (arg2, QSTORE_VTAB_MODULE_NAME) == 0)
        watch_ddl (w, QSTORE_STATEMENT_DROP_TABLE, arg1);
      break;

    case SQLITE_ALTER_TABLE:
      if (g_strcmp0 (arg1, "main") == 0 && qstore_database_lookup (w->db, arg2) != NULL)
        watch_ddl (w, QSTORE_STATEMENT_RENAME_TABLE, arg2);
      break;

    case SQLITE_CREATE_VTABLE:
      if (in_main && w->refusal == NULL)
        w->refusal = g_strdup_printf ("Virtual table “%s” (module “%s”) would not be kept "
                                      "by qstore: create it as TEMP (CREATE VIRTUAL TABLE "
                                      "temp.%s USING …)", arg1, arg2, arg1);
      break;

    case SQLITE_CREATE_VIEW:
      if (in_main)
        watch_ddl (w, QSTORE_STATEMENT_CREATE_VIEW, arg1);
      break;

    case SQLITE_DROP_VIEW:
      if (in_main)
        watch_ddl (w, QSTORE_STATEMENT_DROP_VIEW, arg1);
      break;

    case SQLITE_INSERT:
    case SQLITE_UPDATE:
    case SQLITE_DELETE:
      if (trigger == NULL && arg1 != NULL && !g_str_has_prefix (arg1, "sqlite_"))
        {
          statement->writes = TRUE;
          if (in_main && statement->dml_action == 0 &&
              qstore_database_lookup (w->db, arg1) != NULL)
            {
              statement->dml_action = action;
              statement->dml_table = g_strdup (arg1);
            }
        }
      break;

    case SQLITE_SELECT:
      statement->reads = TRUE;
      break;

    case SQLITE_DROP_INDEX:
    case SQLITE_DROP_TEMP_INDEX:
      w->drops_index = TRUE;
      break;

    default:
      break;
    }

  switch (action)
    {
    case SQLITE_SELECT:
    case SQLITE_READ:
    case SQLITE_INSERT:
    case SQLITE_UPDATE:
    case SQLITE_DELETE:
    case SQLITE_FUNCTION:
    case SQLITE_RECURSIVE:
    case SQLITE_TRANSACTION:
    case SQLITE_SAVEPOINT:
      break;
    default:
      w->plain = FALSE;
      break;
    }

  return SQLITE_OK;
}

/* SQLite's words for what a virtual table cannot do, and what to say. */
static gboolean
refused_form (const char  *message,
              char       **refusal)
{
  if (g_str_has_prefix (message, "UPSERT not implemented for virtual table"))
    *refusal = g_strdup_printf ("INSERT … ON CONFLICT … DO (UPSERT) is not supported on "
                                "qstore tables (%s): use INSERT OR REPLACE or INSERT OR IGNORE",
                                message);
  else if (g_str_has_prefix (message, "UPDATE RETURNING is not available"))
    *refusal = g_strdup ("UPDATE … RETURNING is not supported on qstore tables: run the "
                         "UPDATE, then SELECT the rows");
  else if (g_str_has_prefix (message, "DELETE RETURNING is not available"))
    *refusal = g_strdup ("DELETE … RETURNING is not supported on qstore tables: SELECT the "
                         "rows first, then DELETE them");
  else if (g_str_has_prefix (message, "cannot create triggers on virtual tables"))
    *refusal = g_strdup ("Triggers on qstore tables are not supported: make the follow-up "
                         "changes in the same transaction, or subscribe to the "
                         "coordinator's “committed” signal");
  else
    return FALSE;
  return TRUE;
}

/* DROP INDEX of an index SQLite does not know on the main connection:
 * whether scratch has it on a qstore table. */
typedef struct
{
  char *index;
  char *table;
} DroppedIndex;

static int
dropped_index_authorizer (void       *data,
                          int         action,
                          const char *arg1,
                          const char *arg2,
                          const char *db_name,
                          const char *trigger)
{
  DroppedIndex *seen = data;

  if (action == SQLITE_DROP_INDEX && seen->index == NULL)
    {
      seen->index = g_strdup (arg1);
      seen->table = g_strdup (arg2);
    }
  return SQLITE_OK;
}

static gboolean
read_index_drop (QStoreDatabase   *db,
                 QStoreStatement  *statement,
                 GError          **error)
{
  DroppedIndex seen = { NULL, NULL };
  sqlite3_stmt *stmt = NULL;
  int rc;

  sqlite3_set_authorizer (db->scratch, dropped_index_authorizer, &seen);
  rc = sqlite3_prepare_v2 (db->scratch, statement->text, -1, &stmt, NULL);
  sqlite3_set_authorizer (db->scratch, NULL, NULL);
  sqlite3_finalize (stmt);

  /* Scratch knows why a qstore table's index cannot go (an index of a
   * UNIQUE constraint); an unknown index may be the main's. */
  if (rc != SQLITE_OK && !g_str_has_prefix (sqlite3_errmsg (db->scratch), "no such index"))
    {
      qstore_database_set_sqlite_error (db, db->scratch, rc, error);
      return FALSE;
    }
  if (rc == SQLITE_OK && seen.index != NULL && qstore_database_lookup (db, seen.table) != NULL)
    {
      statement->kind = QSTORE_STATEMENT_DROP_INDEX;
      statement->name = g_steal_pointer (&seen.index);
      statement->table = g_steal_pointer (&seen.table);
    }
  else
    statement->kind = QSTORE_STATEMENT_SQL;
  g_free (seen.index);
  g_free (seen.table);
  return TRUE;
}

/* REINDEX of a qstore table, or of an index of one (which lives on
 * scratch); anything else (a collation, a TEMP object) is SQLite's. */
static void
read_reindex (QStoreDatabase  *db,
              QStoreStatement *statement)
{
  g_autoptr(sqlite3_stmt) stmt = NULL;

  statement->kind = QSTORE_STATEMENT_SQL;
  if (statement->schema != NULL && g_ascii_strcasecmp (statement->schema, "main") != 0)
    return;
  if (qstore_database_lookup (db, statement->name) != NULL)
    {
      statement->kind = QSTORE_STATEMENT_REINDEX;
      statement->table = g_steal_pointer (&statement->name);
      return;
    }
  if (sqlite3_prepare_v2 (db->scratch,
                          "SELECT tbl_name FROM main.sqlite_master "
                          "WHERE type = 'index' AND name = ?1 COLLATE NOCASE",
                          -1, &stmt, NULL) != SQLITE_OK)
    return;
  sqlite3_bind_text (stmt, 1, statement->name, -1, SQLITE_STATIC);
  if (sqlite3_step (stmt) == SQLITE_ROW &&
      qstore_database_lookup (db, (const char *) sqlite3_column_text (stmt, 0)) != NULL)
    {
      statement->kind = QSTORE_STATEMENT_REINDEX;
      statement->table = g_strdup ((const char *) sqlite3_column_text (stmt, 0));
    }
}

/* SQLite refuses these on a virtual table before any callback: qstore
 * runs them itself. */
static gboolean
refused_on_vtab (const QStoreStatement *statement,
                 const char            *message)
{
  if (statement->kind == QSTORE_STATEMENT_CREATE_INDEX)
    return strstr (message, "virtual tables may not be indexed") != NULL;
  if (statement->kind == QSTORE_STATEMENT_ALTER_TABLE ||
      statement->kind == QSTORE_STATEMENT_ALTER_TABLE_ARM)
    return g_str_has_prefix (message, "virtual tables may not be altered") ||
           g_str_has_prefix (message, "cannot rename columns of virtual table") ||
           g_str_has_prefix (message, "cannot drop column from virtual table") ||
           statement->alter >= QSTORE_ALTER_COLUMN;
  return FALSE;
}

static gboolean
router_read (QStoreDatabase   *db,
             const char       *sql,
             QStoreStatement  *statement,
             gboolean         *plain,
             GError          **error);

gboolean
qstore_router_read (QStoreDatabase   *db,
                    const char       *sql,
                    QStoreStatement  *statement,
                    GError          **error)
{
  gboolean plain;

  return router_read (db, sql, statement, &plain, error);
}

static gboolean
router_read (QStoreDatabase   *db,
             const char       *sql,
             QStoreStatement  *statement,
             gboolean         *plain,
             GError          **error)
{
  g_auto(Watch) w = { .db = db, .statement = statement, .kind = QSTORE_STATEMENT_SQL,
                      .plain = TRUE };
  const char *tail = NULL;
  int rc;

  *plain = FALSE;
  qstore_statement_parse (sql, statement);
  switch (statement->kind)
    {
    case QSTORE_STATEMENT_EMPTY:
    case QSTORE_STATEMENT_CREATE_MATERIALIZED_VIEW:
    case QSTORE_STATEMENT_DROP_MATERIALIZED_VIEW:
    case QSTORE_STATEMENT_REFRESH_MATERIALIZED_VIEW:
      return TRUE;

    case QSTORE_STATEMENT_SETTING:
      if (find_handler (db, statement) != NULL)
        return TRUE;
      statement->kind = QSTORE_STATEMENT_SQL;
      break;

    case QSTORE_STATEMENT_REINDEX:
      read_reindex (db, statement);
      if (statement->kind == QSTORE_STATEMENT_REINDEX)
        return TRUE;
      break;

    default:
      break;
    }

  qstore_database_set_authorizer (db, watch_authorizer, &w);
  rc = sqlite3_prepare_v2 (db->db, statement->start, -1, &statement->stmt, &tail);
  qstore_database_set_authorizer (db, NULL, NULL);

  if (rc != SQLITE_OK)
    {
      const char *message = sqlite3_errmsg (db->db);
      g_autofree char *refusal = NULL;

      if (refused_on_vtab (statement, message))
        return TRUE;
      /* An index of a qstore table lives on scratch only. */
      if (statement->kind == QSTORE_STATEMENT_DROP_INDEX)
        {
          if (!read_index_drop (db, statement, error))
            return FALSE;
          if (statement->kind == QSTORE_STATEMENT_DROP_INDEX)
            return TRUE;
        }
      if (refused_form (message, &refusal))
        g_set_error_literal (error, QSTORE_ERROR, QSTORE_ERROR_UNSUPPORTED, refusal);
      else
        qstore_database_set_sqlite_error (db, db->db, rc, error);
      return FALSE;
    }

  /* SQLite says where the statement ends. */
  statement->end = tail;
  g_free (statement->text);
  statement->text = g_strndup (statement->start, tail - statement->start);

  if (statement->stmt == NULL)
    {
      statement->kind = QSTORE_STATEMENT_EMPTY;     /* only a comment */
      return TRUE;
    }

  if (w.refusal != NULL)
    {
      g_set_error_literal (error, QSTORE_ERROR, QSTORE_ERROR_UNSUPPORTED, w.refusal);
      return FALSE;
    }

  if (statement->kind == QSTORE_STATEMENT_DROP_INDEX && !w.drops_index)
    return read_index_drop (db, statement, error);

  /* An index or ALTER of a TEMP table, or what the authorizer saw. */
  statement->kind = w.kind;
  if (w.kind != QSTORE_STATEMENT_SQL)
    {
      g_free (statement->name);
      statement->name = g_steal_pointer (&w.object);
      g_free (statement->table);
      statement->table = g_strdup (statement->name);
    }

  if (statement->kind == QSTORE_STATEMENT_CREATE_TABLE && statement->reads)
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_UNSUPPORTED,
                   _("CREATE TABLE … AS SELECT is not supported for qstore table “%s”: "
                   "create the table, then INSERT INTO %s SELECT …"),
                   statement->name, statement->name);
      return FALSE;
    }

  if (statement->dml_action == SQLITE_INSERT)
    {
      if (sqlite3_column_count (statement->stmt) > 0 && !sqlite3_stmt_isexplain (statement->stmt))
        {
          g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_UNSUPPORTED,
                       _("INSERT … RETURNING is not supported on qstore table “%s”: it would "
                       "report the values before qstore applies column affinity and assigns "
                       "ids; SELECT the row afterwards (last_insert_rowid() gives its rowid)"),
                       statement->dml_table);
          return FALSE;
        }
      statement->insert_shape = qstore_statement_insert_shape (statement->text);
    }
  *plain = w.plain && statement->kind == QSTORE_STATEMENT_SQL;
  return TRUE;
}

/* The statement cache */

/* Statements that only read and write rows, kept prepared by their text:
 * an application runs the same few again and again, and preparing one
 * (SQLite's parse and plan, qstore's planning of every table in it, the
 * authorizer's classification) costs more than running a small one. A
 * statement is taken again only for exactly the text it was read from,
 * and only while nothing but such statements ran: anything else (DDL, a
 * PRAGMA, a TEMP table…) may change what a text means, and empties the
 * cache. A statement running (its text run again from inside it) is
 * not handed out twice. */

#define CACHE_MAX 64

typedef struct
{
  gatomicrefcount  ref;
  char            *sql;
  sqlite3_stmt    *stmt;
  gboolean         busy;
  /* What reading it found (see QStoreStatement) */
  gboolean         writes;
  gboolean         reads;
  gboolean         rolls_back;
  int              dml_action;
  char            *dml_table;
  char            *text;
  QStoreInsertShape *insert_shape;
  gsize            end;           /* where it ends in @sql */
  QStoreResultColumns *columns;   /* of its last result, for the next */
} Cached;

static Cached *
cached_ref (Cached *cached)
{
  g_atomic_ref_count_inc (&cached->ref);
  return cached;
}

static void
cached_unref (Cached *cached)
{
  if (!g_atomic_ref_count_dec (&cached->ref))
    return;
  sqlite3_finalize (cached->stmt);
  g_free (cached->sql);
  g_free (cached->dml_table);
  g_free (cached->text);
  qstore_insert_shape_free (cached->insert_shape);
  qstore_result_columns_unref (cached->columns);
  g_free (cached);
}

static GHashTable *
statement_cache (QStoreDatabase *db)
{
  if (db->statements == NULL)
    db->statements = g_hash_table_new_full (g_str_hash, g_str_equal, NULL,
                                            (GDestroyNotify) cached_unref);
  return db->statements;
}

/* Entries leave the cache only here and where cache_add() replaces one:
 * each time, the generation moves on, and the hints given out before are
 * void. */
static void
cache_clear (QStoreDatabase *db)
{
  if (db->statements != NULL)
    g_hash_table_remove_all (db->statements);
  db->statements_generation++;
}

static void
hint_set (QStoreDatabase   *db,
          QStoreRouterHint *hint,
          Cached           *cached)
{
  if (hint != NULL)
    {
      hint->entry = cached;
      hint->generation = db->statements_generation;
    }
}

/* The statement read from @sql before, filled into @statement, or NULL. */
static Cached *
cache_lookup (QStoreDatabase   *db,
              const char       *sql,
              QStoreRouterHint *hint,
              QStoreStatement  *statement)
{
  Cached *cached;

  /* Hashing the text is most of a lookup's cost. */
  if (hint != NULL && hint->entry != NULL && db->statements != NULL &&
      hint->generation == db->statements_generation)
    cached = hint->entry;
  else
    {
      cached = g_hash_table_lookup (statement_cache (db), sql);
      hint_set (db, hint, cached);
    }
  if (cached == NULL || cached->busy)
    return NULL;

  statement->kind = QSTORE_STATEMENT_SQL;
  statement->start = sql;
  statement->end = sql + cached->end;
  statement->stmt = cached->stmt;
  statement->writes = cached->writes;
  statement->reads = cached->reads;
  statement->rolls_back = cached->rolls_back;
  statement->dml_action = cached->dml_action;
  statement->dml_table = g_strdup (cached->dml_table);
  cached->busy = TRUE;
  return cached_ref (cached);
}

/* Keeps @statement, just read from @sql, when it is the whole of @sql. */
static Cached *
cache_add (QStoreDatabase   *db,
           const char       *sql,
           QStoreRouterHint *hint,
           QStoreStatement  *statement)
{
  GHashTable *cache = statement_cache (db);
  Cached *cached;

  if (statement->stmt == NULL || *qstore_sql_skip_space (statement->end) != '\0')
    return NULL;
  if (g_hash_table_size (cache) >= CACHE_MAX)
    cache_clear (db);

  cached = g_new0 (Cached, 1);
  g_atomic_ref_count_init (&cached->ref);
  cached->sql = g_strdup (sql);
  cached->stmt = statement->stmt;
  cached->writes = statement->writes;
  cached->reads = statement->reads;
  cached->rolls_back = statement->rolls_back;
  cached->dml_action = statement->dml_action;
  cached->dml_table = g_strdup (statement->dml_table);
  cached->text = g_strdup (statement->text);
  cached->insert_shape = g_steal_pointer (&statement->insert_shape);
  cached->end = statement->end - sql;
  cached->busy = TRUE;
  /* One of the same text, busy, goes. */
  if (!g_hash_table_replace (cache, cached->sql, cached))
    db->statements_generation++;
  hint_set (db, hint, cached);
  return cached_ref (cached);
}

/* Gives a statement from the cache back, ready to run again. */
static void
cache_return (QStoreStatement *statement,
              Cached          *cached)
{
  g_assert (statement->stmt == NULL || statement->stmt == cached->stmt);
  sqlite3_reset (cached->stmt);
  sqlite3_clear_bindings (cached->stmt);
  statement->stmt = NULL;
  cached->busy = FALSE;
  cached_unref (cached);
}

/* Running */

/* Calls the hook at @offset in QStoreDatabaseExtension (one that takes
 * the database alone) of every extension that has it. */
static void
call_extensions (QStoreDatabase *db,
                 glong           offset)
{
  for (guint i = 0; i < db->setup->n_extensions; i++)
    {
      void (*hook) (QStoreDatabase *) = G_STRUCT_MEMBER (gpointer, db->setup->extensions[i], offset);

      if (hook != NULL)
        hook (db);
    }
}

static gboolean
before_write (QStoreDatabase  *db,
              GError         **error)
{
  for (guint i = 0; i < db->setup->n_extensions; i++)
    {
      const QStoreDatabaseExtension *extension = db->setup->extensions[i];

      if (extension->before_write != NULL && !extension->before_write (db, error))
        return FALSE;
    }
  return TRUE;
}

/* DDL-commit: DDL runs outside any transaction. One that is open commits
 * first; afterwards a new one begins, so the caller's COMMIT or ROLLBACK
 * still finds one. */
static gboolean
ddl_begin (QStoreDatabase  *db,
           gboolean        *reopen,
           GError         **error)
{
  *reopen = FALSE;
  if (!qstore_database_check_writable (db, error))
    return FALSE;
  if (!sqlite3_get_autocommit (db->db))
    {
      if (!qstore_database_run (db, db->db, "COMMIT", error))
        return FALSE;
      *reopen = TRUE;
    }
  /* Writes made through the table API outside SQL's transaction. */
  if (!qstore_coordinator_commit (db->coordinator, error))
    return FALSE;
  call_extensions (db, G_STRUCT_OFFSET (QStoreDatabaseExtension, before_ddl));
  return TRUE;
}

static gboolean
ddl_end (QStoreDatabase  *db,
         gboolean         reopen,
         gboolean         ok,
         GError         **error)
{
  /* What the DDL changed may be what a layer above reads. */
  call_extensions (db, G_STRUCT_OFFSET (QStoreDatabaseExtension, after_ddl));
  if (reopen && !qstore_database_run (db, db->db, "BEGIN", ok ? error : NULL))
    return FALSE;
  return ok;
}

/* Steps @stmt to the end, into @result (made by qstore_result_new())
 * when given, its columns shared with @columns as
 * qstore_result_take_columns() says; *@changes (when given) gets how many
 * rows it changed. */
static gboolean
step_statement (QStoreDatabase       *db,
                sqlite3_stmt         *stmt,
                gboolean              is_dml,
                QStoreResult         *result,
                QStoreResultColumns **columns,
                gint64               *changes,
                GError              **error)
{
  int rc = sqlite3_step (stmt);
  gint64 changed;

  if (result != NULL)
    qstore_result_take_columns (result, stmt, columns);
  for (; rc == SQLITE_ROW; rc = sqlite3_step (stmt))
    if (result != NULL)
      qstore_result_add_row (result, stmt);

  if (rc != SQLITE_DONE)
    {
      qstore_database_set_sqlite_error (db, db->db, rc, error);
      return FALSE;
    }

  changed = is_dml ? sqlite3_changes64 (db->db) : 0;
  if (changes != NULL)
    *changes = changed;
  if (result != NULL)
    qstore_result_set_counts (result, changed, sqlite3_last_insert_rowid (db->db));
  return TRUE;
}

static gboolean
check_single (const char  *tail,
              gboolean     single,
              GError     **error)
{
  if (single && *qstore_sql_skip_space (tail) != '\0')
    {
      g_set_error_literal (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                           _("Only one statement runs here, and more follow: run several "
                           "with qstore_database_exec(), or one at a time"));
      return FALSE;
    }
  return TRUE;
}

static QStoreResult *
empty_result (QStoreDatabase *db)
{
  QStoreResult *result = qstore_result_new_for_statement (NULL);

  qstore_result_set_counts (result, 0, sqlite3_last_insert_rowid (db->db));
  return result;
}

/* Names starting with `_qstore_` are for qstore's own layers
 * (qstore_table_name_is_reserved()): a user's statement may not give one
 * to a new table, index, view or materialized view. */
static gboolean
check_reserved_name (QStoreDatabase   *db,
                     QStoreStatement  *statement,
                     GError          **error)
{
  const char *name = NULL;

  switch (statement->kind)
    {
    case QSTORE_STATEMENT_CREATE_TABLE:
    case QSTORE_STATEMENT_CREATE_INDEX:
    case QSTORE_STATEMENT_CREATE_VIEW:
    case QSTORE_STATEMENT_CREATE_MATERIALIZED_VIEW:
      name = statement->name;
      break;
    case QSTORE_STATEMENT_RENAME_TABLE:
      name = statement->new_name;
      break;
    default:
      break;
    }
  if (name == NULL || db->reserved_ddl > 0 || !qstore_table_name_is_reserved (name))
    return TRUE;
  g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
               _("Names that start with “%s” are qstore's own, for the state of unsafe "
               "windows, staged imports and the like: choose another name than “%s”"),
               QSTORE_RESERVED_TABLE_PREFIX, name);
  return FALSE;
}

/* What SQLite runs as it is. */
static gboolean
run_sql (QStoreDatabase   *db,
         QStoreStatement  *statement,
         Cached           *cached,
         QStoreBindFunc    bind,
         gpointer          bind_data,
         QStoreResult     *reuse,
         QStoreResult    **result,
         gint64           *changes,
         GError          **error)
{
  g_autoptr(QStoreResult) rows = NULL;
  const QStoreInsertShape *outer_shape = db->insert_shape;
  gboolean ok;

  if (bind != NULL && !bind (statement->stmt, bind_data, error))
    return FALSE;

  if (result != NULL && reuse != NULL)
    {
      rows = g_object_ref (reuse);
      qstore_result_clear (rows);
    }
  else if (result != NULL)
    rows = qstore_result_new ();
  db->insert_shape = cached != NULL ? cached->insert_shape : statement->insert_shape;
  qstore_database_update_read_snapshot (db, FALSE);
  ok = !statement->writes || before_write (db, error);
  if (ok)
    {
      ok = step_statement (db, statement->stmt, statement->writes, rows,
                           cached != NULL ? &cached->columns : NULL, changes, error);
      if (statement->writes)
        call_extensions (db, G_STRUCT_OFFSET (QStoreDatabaseExtension, after_write));
    }
  if (cached != NULL)
    sqlite3_reset (statement->stmt);
  else
    g_clear_pointer (&statement->stmt, sqlite3_finalize);
  /* A statement run from inside another gives the other's back. */
  db->insert_shape = outer_shape;
  qstore_database_update_read_snapshot (db, FALSE);

  /* Ephemeral rowids last one transaction. */
  if (sqlite3_get_autocommit (db->db))
    qstore_database_forget_rowids (db);

  if (ok && result != NULL)
    *result = g_steal_pointer (&rows);
  return ok;
}

static gboolean
dispatch (QStoreDatabase   *db,
          QStoreStatement  *statement,
          Cached           *cached,
          QStoreBindFunc    bind,
          gpointer          bind_data,
          gboolean          single,
          QStoreResult     *reuse,
          QStoreResult    **result,
          gint64           *changes,
          GError          **error)
{
  const QStoreStatementHandler *handler;
  gboolean reopen;
  gboolean ok;

  if (statement->kind == QSTORE_STATEMENT_EMPTY)
    {
      if (result != NULL)
        *result = empty_result (db);
      return TRUE;
    }

  if (!check_single (statement->end, single, error) ||
      !check_reserved_name (db, statement, error))
    return FALSE;

  for (guint i = 0; i < db->setup->n_extensions; i++)
    {
      const QStoreDatabaseExtension *extension = db->setup->extensions[i];

      if (extension->check_statement != NULL &&
          !extension->check_statement (db, statement, error))
        return FALSE;
    }

  if (statement->kind == QSTORE_STATEMENT_SQL)
    return run_sql (db, statement, cached, bind, bind_data, reuse, result, changes, error);

  handler = find_handler (db, statement);
  if (handler == NULL)
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_UNSUPPORTED,
                   _("%s is not supported by this database"), qstore_statement_verb (statement->kind));
      return FALSE;
    }

  if (!(handler->flags & QSTORE_HANDLER_DDL))
    return handler->run (db, statement, result, error);

  if (!ddl_begin (db, &reopen, error))
    return FALSE;
  ok = handler->run (db, statement, NULL, error);
  if (!ddl_end (db, reopen, ok, error))
    return FALSE;
  if (result != NULL)
    *result = empty_result (db);
  return TRUE;
}

/* The first statement of @sql into @statement: from the cache (*@cached
 * then holds it), or read now and, when it is *@plain, kept there. */
static gboolean
read_statement (QStoreDatabase    *db,
                const char        *sql,
                QStoreRouterHint  *hint,
                QStoreStatement   *statement,
                Cached           **cached,
                gboolean          *plain,
                GError           **error)
{
  *plain = FALSE;
  *cached = cache_lookup (db, sql, hint, statement);
  if (*cached != NULL)
    return TRUE;
  if (!router_read (db, sql, statement, plain, error))
    return FALSE;
  if (*plain)
    *cached = cache_add (db, sql, hint, statement);
  return TRUE;
}

gboolean
qstore_router_run (QStoreDatabase   *db,
                   const char       *sql,
                   const char      **tail,
                   QStoreBindFunc    bind,
                   gpointer          bind_data,
                   gboolean          single,
                   QStoreRouterHint *hint,
                   QStoreResult    **result,
                   gint64           *changes,
                   GError          **error)
{
  g_auto(QStoreStatement) statement = { 0 };
  /* Filled again by plain SQL; what makes its own result replaces it. */
  g_autoptr(QStoreResult) reuse = result != NULL ? g_steal_pointer (result) : NULL;
  Cached *cached;
  gboolean plain;
  gboolean ok;

  *tail = qstore_sql_skip_space (sql);
  if (changes != NULL)
    *changes = 0;
  g_clear_error (&db->callback_error);
  /* Whatever is not a plain statement may change what another text
   * means: the cache starts again after it. */
  if (!read_statement (db, sql, hint, &statement, &cached, &plain, error))
    {
      cache_clear (db);
      return FALSE;
    }
  if (cached == NULL && !plain)
    cache_clear (db);
  *tail = statement.end;

  ok = dispatch (db, &statement, cached, bind, bind_data, single, reuse, result, changes, error);
  if (cached != NULL)
    cache_return (&statement, cached);
  else if (!plain)
    cache_clear (db);
  return ok;
}

char **
qstore_router_read_parameters (QStoreDatabase  *db,
                               const char      *sql,
                               guint           *n_parameters,
                               GError         **error)
{
  g_auto(QStoreStatement) statement = { 0 };
  Cached *cached;
  gboolean plain;
  char **names = NULL;

  *n_parameters = 0;
  if (!read_statement (db, sql, NULL, &statement, &cached, &plain, error))
    return NULL;
  if (check_single (statement.end, TRUE, error))
    {
      /* What qstore runs itself (DDL…) takes none. */
      *n_parameters = statement.stmt != NULL ? sqlite3_bind_parameter_count (statement.stmt) : 0;
      names = g_new0 (char *, *n_parameters + 1);
      for (guint i = 0; i < *n_parameters; i++)
        {
          const char *name = sqlite3_bind_parameter_name (statement.stmt, (int) i + 1);

          /* `?NNN` is numbered, not named. */
          names[i] = name != NULL && name[0] != '?' ? g_strdup (name) : NULL;
        }
    }
  if (cached != NULL)
    cache_return (&statement, cached);
  return names;
}

/**
 * qstore_database_exec:
 * @self: a #QStoreDatabase
 * @sql: one or more SQL statements
 * @error: return location for a #GError
 *
 * Runs SQL statements in order and discards the rows they return. It
 * stops at the first that fails; those before it stay done (each one
 * committed, unless a transaction is open).
 *
 * Errors are in the %QSTORE_ERROR domain: %QSTORE_ERROR_CONSTRAINT for a
 * constraint, %QSTORE_ERROR_NOT_FOUND for a table, column or index that
 * does not exist, %QSTORE_ERROR_SYNTAX for a syntax error,
 * %QSTORE_ERROR_UNSUPPORTED for the refused forms, %QSTORE_ERROR_READ_ONLY
 * for a write to a read-only database.
 *
 * Returns: %TRUE when every statement succeeded
 */
gboolean
qstore_database_exec (QStoreDatabase  *self,
                      const char      *sql,
                      GError         **error)
{
  const char *p;

  g_return_val_if_fail (QSTORE_IS_DATABASE (self), FALSE);
  g_return_val_if_fail (sql != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (!qstore_database_check_open (self, error))
    return FALSE;

  p = sql;
  while (*qstore_sql_skip_space (p) != '\0')
    {
      const char *tail = NULL;

      if (!qstore_router_run (self, p, &tail, NULL, NULL, FALSE, NULL, NULL, NULL, error))
        return FALSE;
      /* Never stand still, whatever SQLite consumed. */
      p = tail > p ? tail : p + strlen (p);
    }
  return TRUE;
}

gboolean
qstore_database_exec_reserved (QStoreDatabase  *self,
                               const char      *sql,
                               GError         **error)
{
  gboolean ok;

  self->reserved_ddl++;
  ok = qstore_database_exec (self, sql, error);
  self->reserved_ddl--;
  return ok;
}

static gboolean
bind_variant (sqlite3_stmt  *stmt,
              gpointer       params,
              GError       **error)
{
  return qstore_params_bind (stmt, params, error);
}

/**
 * qstore_database_query:
 * @self: a #QStoreDatabase
 * @sql: one SQL statement
 * @params: (nullable): a tuple with one value per parameter (`?`, `?NNN`,
 *   `:name`… in order), or an `a{sv}` dictionary with one value per named
 *   parameter (`:name`, `@name`, `$name`, keyed `name` or with its
 *   prefix). Values are `x`, `d`, `s`, `ay`, `b`, the NULL maybe (see
 *   qstore_value_new_null()), or any of them boxed in `v`; %NULL leaves
 *   every parameter NULL. A floating reference is consumed.
 * @error: return location for a #GError
 *
 * Runs one statement and returns what it returned. Statements that return
 * no rows (INSERT, CREATE TABLE…) give an empty result whose changes and
 * last_insert_rowid() are set. Errors are as for
 * qstore_database_exec().
 *
 * Returns: (transfer full): the result, or %NULL on error
 */
QStoreResult *
qstore_database_query (QStoreDatabase  *self,
                       const char      *sql,
                       GVariant        *params,
                       GError         **error)
{
  g_autoptr(GVariant) owned = NULL;
  QStoreResult *result = NULL;
  const char *tail = NULL;

  g_return_val_if_fail (QSTORE_IS_DATABASE (self), NULL);
  g_return_val_if_fail (sql != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (params != NULL)
    owned = g_variant_ref_sink (params);

  if (!qstore_database_check_open (self, error))
    return NULL;

  if (!qstore_router_run (self, sql, &tail, bind_variant, owned, TRUE, NULL, &result, NULL, error))
    {
      g_clear_object (&result);
      return NULL;
    }
  return result;
}

/**
 * qstore_database_execute:
 * @self: a #QStoreDatabase
 * @sql: one SQL statement
 * @params: (nullable): the statement's parameters: a tuple for positional
 *   ones, an `a{sv}` dictionary for named ones, as for
 *   qstore_database_query(); %NULL leaves every parameter NULL. A floating
 *   reference is consumed.
 * @error: return location for a #GError
 *
 * Runs one statement with parameters, such as a parameterised INSERT,
 * and discards any rows it returns. This is the parameter-taking sibling
 * of qstore_database_exec(); use qstore_database_query() to read rows.
 *
 * |[<!-- language="C" -->
 * gint64 n = qstore_database_execute (db, "UPDATE item SET price = :price WHERE name = :name",
 *                                     g_variant_new_parsed ("{'price': <0.4>, 'name': <'pear'>}"),
 *                                     &error);
 * ]|
 *
 * Errors are as for qstore_database_exec(), and
 * %QSTORE_ERROR_INVALID_ARGUMENT for parameters that do not match the
 * statement (a wrong count, a missing or unknown name, a value of a type
 * SQL cannot hold).
 *
 * Returns: how many rows the statement inserted, updated or deleted (as
 *   qstore_result_get_changes() counts them; 0 for other statements), or
 *   -1 on error
 */
gint64
qstore_database_execute (QStoreDatabase  *self,
                         const char      *sql,
                         GVariant        *params,
                         GError         **error)
{
  g_autoptr(GVariant) owned = params != NULL ? g_variant_ref_sink (params) : NULL;
  const char *tail = NULL;
  gint64 changes;

  g_return_val_if_fail (QSTORE_IS_DATABASE (self), -1);
  g_return_val_if_fail (sql != NULL, -1);
  g_return_val_if_fail (error == NULL || *error == NULL, -1);

  /* No result to make: its rows would be thrown away. */
  if (!qstore_database_check_open (self, error) ||
      !qstore_router_run (self, sql, &tail, bind_variant, owned, TRUE, NULL, NULL, &changes, error))
    return -1;
  return changes;
}

/**
 * qstore_database_is_read_only_sql:
 * @self: a #QStoreDatabase
 * @sql: one or more SQL statements
 *
 * Tells whether every statement of @sql only reads, as SQLite classifies
 * them when it prepares them against this database: queries, reads of a
 * setting, `BEGIN`, `COMMIT`… A statement that writes rows, any DDL, and
 * a statement that does not prepare (a table it names does not exist
 * yet, a syntax error) count as writing.
 *
 * A tool can open a store read-only, ask this, and open it for writing
 * only when the answer is %FALSE: a read-only handle never holds the
 * store's writer lock.
 *
 * Returns: %TRUE when running @sql would write nothing to the store
 */
gboolean
qstore_database_is_read_only_sql (QStoreDatabase *self,
                                  const char     *sql)
{
  const char *p = sql;

  g_return_val_if_fail (QSTORE_IS_DATABASE (self), FALSE);
  g_return_val_if_fail (sql != NULL, FALSE);

  if (self->closed)
    return FALSE;

  while (*qstore_sql_skip_space (p) != '\0')
    {
      g_auto(QStoreStatement) statement = { 0 };

      if (!qstore_router_read (self, p, &statement, NULL))
        return FALSE;
      switch (statement.kind)
        {
        case QSTORE_STATEMENT_EMPTY:
          break;

        case QSTORE_STATEMENT_SQL:
          if (!sqlite3_stmt_readonly (statement.stmt))
            return FALSE;
          break;

        case QSTORE_STATEMENT_SETTING:
          if (statement.value != NULL)
            return FALSE;
          break;

        default:
          return FALSE;
        }
      p = statement.end > p ? statement.end : p + strlen (p);
    }
  return TRUE;
}
