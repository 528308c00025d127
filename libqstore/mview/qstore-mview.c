/* qstore-mview.c: materialized views that maintain themselves
 *
 * A materialized view is a qstore table named after the view (its
 * *backing*, hidden from the table list) plus a catalog entry under the
 * materialized-view prefix holding `CREATE MATERIALIZED VIEW name AS
 * SELECT …`. SQLite parses and plans the body; its authorizer names what
 * the body reads, and column metadata says where each result column comes
 * from. From that, each view gets a strategy, cheapest first:
 *
 * - inverse projection: one source, no aggregate, every primary key
 *   column of the source passed through. A changed source row is looked
 *   up again through `SELECT * FROM (body) WHERE key IS ?` (SQLite pushes
 *   the condition down to a primary key seek), at row time;
 * - group recompute: one source grouped by plain columns that lead an
 *   index of it. Each group a change touches is computed again through
 *   the same kind of query, before the view is read or the transaction
 *   commits;
 * - full rebuild: anything else, at most once per transaction (again
 *   before a read or the commit), refused at CREATE above a row threshold.
 *
 * Row changes come from the coordinator (every QStoreTable write records
 * them), so views over views follow, and everything a view writes is part
 * of the transaction that changed its sources: rolled back with it, seen
 * by its readers, committed in the same batch. Work deferred to a read or
 * the commit is tracked per transaction; a rollback to a savepoint may
 * undo work already done, so what the transaction touched is done again.
 *
 * A source change that alters what the body reads (checked after every
 * DDL statement by planning the body again) makes the view *stale*: it
 * keeps its contents, is no longer maintained, and REFRESH MATERIALIZED
 * VIEW brings it back. Views over a stale view go stale too.
 *
 * On open, a view's stored contents are kept ("adopted") only when they
 * are provably current: see rehydrate().
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include <json-glib/json-glib.h>

#include "qstore-affinity-private.h"
#include "qstore-coordinator-private.h"
#include "qstore-enums.h"
#include "qstore-error.h"
#include "qstore-sql-token-private.h"
#include "qstore-mview-private.h"
#include "qstore-rehydration-result-private.h"
#include "qstore-provider-private.h"
#include "qstore-result-private.h"
#include "qstore-table-schema-private.h"
#include "qstore-vtab-private.h"

#define CLEAN_SHUTDOWN_META "clean_shutdown"
#define STALE_SET_META      "stale_mvs"
#define DEFAULT_REBUILD_ROW_THRESHOLD 10000
#define THRESHOLD_SETTING   QSTORE_MVIEW_THRESHOLD_SETTING
#define SCRATCH_SAVEPOINT   "qstore_mview"

static gboolean
token_is_name (const QStoreSqlToken *token)
{
  return token->kind == QSTORE_SQL_TOKEN_WORD || token->kind == QSTORE_SQL_TOKEN_QUOTED;
}

static char *
lower (const char *name)
{
  return g_ascii_strdown (name, -1);
}

static char *
qualified (const char *name)
{
  g_autofree char *low = lower (name);

  return g_strconcat ("main.", low, NULL);
}

/* Case-insensitive (ASCII) keys, so a table name as a table spells it
 * finds the views without a copy per row change. */
static guint
name_hash (gconstpointer key)
{
  guint hash = 5381;

  for (const char *p = key; *p != '\0'; p++)
    hash = hash * 33 + g_ascii_tolower (*p);
  return hash;
}

static gboolean
name_equal (gconstpointer a,
            gconstpointer b)
{
  return g_ascii_strcasecmp (a, b) == 0;
}

/* Statements */

static const char *
statement_form (const QStoreStatement *statement)
{
  switch (statement->kind)
    {
    case QSTORE_STATEMENT_CREATE_MATERIALIZED_VIEW:
      return "CREATE MATERIALIZED VIEW [IF NOT EXISTS] name [(columns)] AS SELECT …";
    case QSTORE_STATEMENT_DROP_MATERIALIZED_VIEW:
      return "DROP MATERIALIZED VIEW [IF EXISTS] name";
    case QSTORE_STATEMENT_REFRESH_MATERIALIZED_VIEW:
      return "REFRESH MATERIALIZED VIEW name";
    case QSTORE_STATEMENT_SETTING:
    default:
      return "PRAGMA " THRESHOLD_SETTING " [= rows]";
    }
}

static const char *
statement_verb (const QStoreStatement *statement)
{
  return statement->kind == QSTORE_STATEMENT_SETTING ? "PRAGMA " THRESHOLD_SETTING
                                                      : qstore_statement_verb (statement->kind);
}

static gboolean
check_syntax (const QStoreStatement  *statement,
              GError                **error)
{
  if (!statement->malformed && statement->name != NULL &&
      (statement->schema == NULL || g_ascii_strcasecmp (statement->schema, "main") == 0))
    return TRUE;
  if (!statement->malformed && statement->name != NULL)
    g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_UNSUPPORTED,
                 "%s: schema “%s” is not supported: materialized views live in “main”",
                 statement_verb (statement), statement->schema);
  else
    g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                 "Malformed %s statement: write it as %s",
                 statement_verb (statement), statement_form (statement));
  return FALSE;
}

/* QStoreMaterializedView: what qstore_database_list_materialized_views()
 * hands out, a snapshot */

/**
 * QStoreMaterializedView:
 *
 * A materialized view of a database, as it stood when
 * [method@Database.list_materialized_views] listed it: its definition,
 * what it reads, how it is kept up to date and whether it is stale.
 *
 * A materialized view is made with `CREATE MATERIALIZED VIEW name AS
 * SELECT …`; its contents are stored in the database and read with
 * `SELECT … FROM name`. Writes to what it reads update it in the same
 * transaction. A view is *stale* when a change to what it reads (a column
 * dropped, renamed or re-collated, the primary key changed, a source
 * dropped) means its definition no longer reads the same thing: it then
 * keeps its last contents and is no longer updated until `REFRESH
 * MATERIALIZED VIEW name` computes it again.
 *
 * The object is immutable.
 */
struct _QStoreMaterializedView
{
  GObject                         parent_instance;

  char                           *name;
  char                           *body;
  char                           *definition;
  QStoreMaterializedViewStrategy  strategy;
  GStrv                           sources;
  gboolean                        stale;
  char                           *stale_reason;
};

enum {
  VIEW_PROP_0,
  VIEW_PROP_NAME,
  VIEW_PROP_SCHEMA,
  VIEW_PROP_BODY,
  VIEW_PROP_DEFINITION,
  VIEW_PROP_STRATEGY,
  VIEW_PROP_SOURCES,
  VIEW_PROP_STALE,
  VIEW_PROP_STALE_REASON,
  VIEW_N_PROPS
};

static GParamSpec *view_properties[VIEW_N_PROPS];

G_DEFINE_FINAL_TYPE (QStoreMaterializedView, qstore_materialized_view, G_TYPE_OBJECT)

static void
qstore_materialized_view_finalize (GObject *object)
{
  QStoreMaterializedView *self = QSTORE_MATERIALIZED_VIEW (object);

  g_free (self->name);
  g_free (self->body);
  g_free (self->definition);
  g_strfreev (self->sources);
  g_free (self->stale_reason);

  G_OBJECT_CLASS (qstore_materialized_view_parent_class)->finalize (object);
}

static void
qstore_materialized_view_get_property (GObject    *object,
                                       guint       prop_id,
                                       GValue     *value,
                                       GParamSpec *pspec)
{
  QStoreMaterializedView *self = QSTORE_MATERIALIZED_VIEW (object);

  switch (prop_id)
    {
    case VIEW_PROP_NAME:
      g_value_set_string (value, self->name);
      break;

    case VIEW_PROP_SCHEMA:
      g_value_set_string (value, "main");
      break;

    case VIEW_PROP_BODY:
      g_value_set_string (value, self->body);
      break;

    case VIEW_PROP_DEFINITION:
      g_value_set_string (value, self->definition);
      break;

    case VIEW_PROP_STRATEGY:
      g_value_set_enum (value, self->strategy);
      break;

    case VIEW_PROP_SOURCES:
      g_value_set_boxed (value, self->sources);
      break;

    case VIEW_PROP_STALE:
      g_value_set_boolean (value, self->stale);
      break;

    case VIEW_PROP_STALE_REASON:
      g_value_set_string (value, self->stale_reason);
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
qstore_materialized_view_class_init (QStoreMaterializedViewClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = qstore_materialized_view_finalize;
  object_class->get_property = qstore_materialized_view_get_property;

  /**
   * QStoreMaterializedView:name:
   *
   * The view's name, as declared.
   */
  view_properties[VIEW_PROP_NAME] =
    g_param_spec_string ("name", NULL, NULL, NULL,
                         G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

  /**
   * QStoreMaterializedView:schema:
   *
   * The view's schema: `main`.
   */
  view_properties[VIEW_PROP_SCHEMA] =
    g_param_spec_string ("schema", NULL, NULL, NULL,
                         G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

  /**
   * QStoreMaterializedView:body:
   *
   * The SELECT that defines the view.
   */
  view_properties[VIEW_PROP_BODY] =
    g_param_spec_string ("body", NULL, NULL, NULL,
                         G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

  /**
   * QStoreMaterializedView:definition:
   *
   * The view's `CREATE MATERIALIZED VIEW` statement, as the catalog keeps
   * it.
   */
  view_properties[VIEW_PROP_DEFINITION] =
    g_param_spec_string ("definition", NULL, NULL, NULL,
                         G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

  /**
   * QStoreMaterializedView:strategy:
   *
   * How the view follows the changes of what it reads.
   */
  view_properties[VIEW_PROP_STRATEGY] =
    g_param_spec_enum ("strategy", NULL, NULL,
                       QSTORE_TYPE_MATERIALIZED_VIEW_STRATEGY,
                       QSTORE_MATERIALIZED_VIEW_STRATEGY_FULL_REBUILD,
                       G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

  /**
   * QStoreMaterializedView:sources:
   *
   * The tables (and materialized views) the view reads, as `schema.name`
   * in lower case: `main` for the database's, `temp` for TEMP tables.
   */
  view_properties[VIEW_PROP_SOURCES] =
    g_param_spec_boxed ("sources", NULL, NULL, G_TYPE_STRV,
                        G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

  /**
   * QStoreMaterializedView:stale:
   *
   * Whether the view is stale: no longer kept up to date, because what it
   * reads changed underneath its definition. `REFRESH MATERIALIZED VIEW`
   * brings it back.
   */
  view_properties[VIEW_PROP_STALE] =
    g_param_spec_boolean ("stale", NULL, NULL, FALSE,
                          G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

  /**
   * QStoreMaterializedView:stale-reason:
   *
   * Why the view is stale, or %NULL.
   */
  view_properties[VIEW_PROP_STALE_REASON] =
    g_param_spec_string ("stale-reason", NULL, NULL, NULL,
                         G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

  g_object_class_install_properties (object_class, VIEW_N_PROPS, view_properties);
}

static void
qstore_materialized_view_init (QStoreMaterializedView *self)
{
}

/**
 * qstore_materialized_view_get_name:
 * @self: a #QStoreMaterializedView
 *
 * Gets the view's name, as declared.
 *
 * Returns: (transfer none): the name
 */
const char *
qstore_materialized_view_get_name (QStoreMaterializedView *self)
{
  g_return_val_if_fail (QSTORE_IS_MATERIALIZED_VIEW (self), NULL);
  return self->name;
}

/**
 * qstore_materialized_view_get_schema:
 * @self: a #QStoreMaterializedView
 *
 * Gets the view's schema.
 *
 * Returns: (transfer none): `main`, the only schema
 */
const char *
qstore_materialized_view_get_schema (QStoreMaterializedView *self)
{
  g_return_val_if_fail (QSTORE_IS_MATERIALIZED_VIEW (self), NULL);
  return "main";
}

/**
 * qstore_materialized_view_get_body:
 * @self: a #QStoreMaterializedView
 *
 * Gets the query that defines the view.
 *
 * Returns: (transfer none): the SELECT
 */
const char *
qstore_materialized_view_get_body (QStoreMaterializedView *self)
{
  g_return_val_if_fail (QSTORE_IS_MATERIALIZED_VIEW (self), NULL);
  return self->body;
}

/**
 * qstore_materialized_view_get_definition:
 * @self: a #QStoreMaterializedView
 *
 * Gets the view's definition as the catalog keeps it: `CREATE
 * MATERIALIZED VIEW name AS SELECT …`.
 *
 * Returns: (transfer none): the statement
 */
const char *
qstore_materialized_view_get_definition (QStoreMaterializedView *self)
{
  g_return_val_if_fail (QSTORE_IS_MATERIALIZED_VIEW (self), NULL);
  return self->definition;
}

/**
 * qstore_materialized_view_get_strategy:
 * @self: a #QStoreMaterializedView
 *
 * Gets how the view follows the changes of what it reads.
 *
 * Returns: the strategy
 */
QStoreMaterializedViewStrategy
qstore_materialized_view_get_strategy (QStoreMaterializedView *self)
{
  g_return_val_if_fail (QSTORE_IS_MATERIALIZED_VIEW (self),
                        QSTORE_MATERIALIZED_VIEW_STRATEGY_FULL_REBUILD);
  return self->strategy;
}

/**
 * qstore_materialized_view_get_sources:
 * @self: a #QStoreMaterializedView
 *
 * Gets the tables the view reads: the database's tables and materialized
 * views as `main.name`, TEMP tables as `temp.name`, in lower case. Plain
 * views are looked through: the tables they read are listed.
 *
 * Returns: (transfer none) (array zero-terminated=1): the sources, sorted
 */
const char * const *
qstore_materialized_view_get_sources (QStoreMaterializedView *self)
{
  g_return_val_if_fail (QSTORE_IS_MATERIALIZED_VIEW (self), NULL);
  return (const char * const *) self->sources;
}

/**
 * qstore_materialized_view_get_stale:
 * @self: a #QStoreMaterializedView
 *
 * Gets whether the view is stale: it keeps its last contents but is no
 * longer kept up to date, until `REFRESH MATERIALIZED VIEW`.
 *
 * Returns: %TRUE when the view is stale
 */
gboolean
qstore_materialized_view_get_stale (QStoreMaterializedView *self)
{
  g_return_val_if_fail (QSTORE_IS_MATERIALIZED_VIEW (self), FALSE);
  return self->stale;
}

/**
 * qstore_materialized_view_get_stale_reason:
 * @self: a #QStoreMaterializedView
 *
 * Gets why the view is stale.
 *
 * Returns: (transfer none) (nullable): the reason, or %NULL when the view
 *   is not stale
 */
const char *
qstore_materialized_view_get_stale_reason (QStoreMaterializedView *self)
{
  g_return_val_if_fail (QSTORE_IS_MATERIALIZED_VIEW (self), NULL);
  return self->stale_reason;
}

/* Plans: what a body reads, what it gives, and how to keep it */

typedef struct
{
  char            *name;          /* in the backing */
  char            *body_name;     /* as `SELECT * FROM (body)` names it */
  char            *decl_type;     /* NULL: none */
  QStoreCollation  collation;
  char            *origin_db;     /* of a plain reference to a source column, or NULL */
  char            *origin_table;  /* lower-cased */
  char            *origin_column;
} PlanColumn;

typedef struct
{
  char     *name;                 /* as the table spells it */
  char     *lower;
  gboolean  temp;
  char     *primary_key;          /* what its key is made of, for the staleness check */
} PlanSource;

typedef struct
{
  char *table;                    /* lower-cased; "temp." prefixed for TEMP tables */
  char *column;                   /* "" when the body reads no column of it */
  char *signature;                /* declared type and collation, NULL when absent */
} PlanRead;

typedef struct
{
  GPtrArray                      *sources;      /* PlanSource, sorted */
  GPtrArray                      *reads;        /* PlanRead, sorted */
  GPtrArray                      *columns;      /* PlanColumn */
  GArray                         *key_out;      /* guint: backing columns of its primary key */
  GArray                         *key_src;      /* guint: the source column of each */
  int                             source;       /* the one source of a keyed view, or -1 */
  QStoreMaterializedViewStrategy  strategy;
  gboolean                        has_temp;
  char                           *backing_sql;  /* the backing's CREATE TABLE */
  char                           *all_sql;      /* SELECT * FROM (body) */
  char                           *key_sql;      /* … WHERE key IS ?, keyed views only */
} Plan;

static void
plan_column_free (PlanColumn *column)
{
  g_free (column->name);
  g_free (column->body_name);
  g_free (column->decl_type);
  g_free (column->origin_db);
  g_free (column->origin_table);
  g_free (column->origin_column);
  g_free (column);
}

static void
plan_source_free (PlanSource *source)
{
  g_free (source->name);
  g_free (source->lower);
  g_free (source->primary_key);
  g_free (source);
}

static void
plan_read_free (PlanRead *read)
{
  g_free (read->table);
  g_free (read->column);
  g_free (read->signature);
  g_free (read);
}

static void
plan_free (Plan *plan)
{
  if (plan == NULL)
    return;
  g_ptr_array_unref (plan->sources);
  g_ptr_array_unref (plan->reads);
  g_ptr_array_unref (plan->columns);
  g_array_unref (plan->key_out);
  g_array_unref (plan->key_src);
  g_free (plan->backing_sql);
  g_free (plan->all_sql);
  g_free (plan->key_sql);
  g_free (plan);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC (Plan, plan_free)

static Plan *
plan_new_empty (void)
{
  Plan *plan = g_new0 (Plan, 1);

  plan->sources = g_ptr_array_new_with_free_func ((GDestroyNotify) plan_source_free);
  plan->reads = g_ptr_array_new_with_free_func ((GDestroyNotify) plan_read_free);
  plan->columns = g_ptr_array_new_with_free_func ((GDestroyNotify) plan_column_free);
  plan->key_out = g_array_new (FALSE, FALSE, sizeof (guint));
  plan->key_src = g_array_new (FALSE, FALSE, sizeof (guint));
  plan->source = -1;
  plan->strategy = QSTORE_MATERIALIZED_VIEW_STRATEGY_FULL_REBUILD;
  return plan;
}

static gboolean
plan_is_keyed (const Plan *plan)
{
  return plan->key_out->len > 0;
}

static PlanSource *
plan_find_source (const Plan *plan,
                  const char *lower_name,
                  gboolean    temp)
{
  for (guint i = 0; i < plan->sources->len; i++)
    {
      PlanSource *source = g_ptr_array_index (plan->sources, i);

      if (source->temp == temp && g_str_equal (source->lower, lower_name))
        return source;
    }
  return NULL;
}

/* The views */

typedef struct _QStoreMView QStoreMView;
typedef struct _QStoreMViews QStoreMViews;

struct _QStoreMView
{
  QStoreMViews   *owner;
  char           *name;          /* as declared */
  char           *lower;
  char           *definition;    /* the catalog entry's text */
  char           *body;
  GPtrArray      *column_names;  /* char *: the declared column list, or NULL */
  Plan           *plan;
  gboolean        stale;
  char           *stale_reason;

  /* Work deferred to a read or the commit, and what this transaction
   * touched (a rollback to a savepoint may undo work done). */
  gboolean        dirty;
  gboolean        touched;
  GHashTable     *dirty_keys;    /* GBytes: encoded key values of a group */
  GHashTable     *touched_keys;
  gboolean        flushing;

  sqlite3_stmt   *key_stmt;
  sqlite3_stmt   *all_stmt;

  /* Kept between row changes: one key's recomputation allocates little. */
  gboolean        recomputing;
  GByteArray     *row_buf;
  GByteArray     *key_buf;
  QStoreValue    *values;        /* plan->columns->len of each */
  QStoreValue    *stored;
  guint           n_values;
};

typedef struct
{
  QStoreSqlTable *entry;         /* the source, as the database has it */
  GPtrArray      *views;         /* QStoreMView, live, reading it */
} Dependents;

struct _QStoreMViews
{
  QStoreDatabase           *db;             /* not owned: owns this */
  GHashTable               *views;          /* lower name → QStoreMView */
  GPtrArray                *order;          /* QStoreMView, oldest first (borrowed) */
  GHashTable               *dependents;     /* source name (any case) → Dependents */
  GHashTable               *unloaded;       /* lower name → its definition: entries that did not load */
  QStoreCoordinatorObserver observer;
  gboolean                  observing;
  gboolean                  maybe_work;     /* some view may have deferred work */
  gboolean                  hooks;          /* SQLite hooks installed for TEMP sources */
  gint64                    threshold;
  gboolean                  atomic;
  gboolean                  rehydrating;    /* views are still being read back */
  gboolean                  durable_known;  /* durable_text is what the store holds */
  char                     *durable_text;   /* NULL: absent */
  char                     *clean_shutdown; /* the marker found at open, or NULL */
};

static QStoreMViews *
mviews_of (QStoreDatabase *db)
{
  return qstore_database_get_extension_state (db, &qstore_mview_extension);
}

static void
dependents_free (Dependents *dependents)
{
  qstore_sql_table_unref (dependents->entry);
  g_ptr_array_unref (dependents->views);
  g_free (dependents);
}

static void
view_finalize_statements (QStoreMView *view)
{
  g_clear_pointer (&view->key_stmt, sqlite3_finalize);
  g_clear_pointer (&view->all_stmt, sqlite3_finalize);
}

static gboolean before_read (gpointer   mview,
                             GError   **error);

/* Makes @entry the contents of @view (or of no view): its reads then
 * wait for the view's deferred work, and only the view writes it. */
static void
entry_set_view (QStoreSqlTable *entry,
                QStoreMView    *view)
{
  entry->owner = view;
  entry->before_read = view != NULL ? before_read : NULL;
  qstore_table_set_contents_of (entry->table, view != NULL ? view->name : NULL);
}

static void
view_free (QStoreMView *view)
{
  QStoreSqlTable *entry = qstore_database_lookup (view->owner->db, view->name);

  if (entry != NULL && entry->owner == view)
    entry_set_view (entry, NULL);
  view_finalize_statements (view);
  g_free (view->name);
  g_free (view->lower);
  g_free (view->definition);
  g_free (view->body);
  g_clear_pointer (&view->column_names, g_ptr_array_unref);
  plan_free (view->plan);
  g_free (view->stale_reason);
  g_hash_table_unref (view->dirty_keys);
  g_hash_table_unref (view->touched_keys);
  g_byte_array_unref (view->row_buf);
  g_byte_array_unref (view->key_buf);
  g_free (view->values);
  g_free (view->stored);
  g_free (view);
}

static QStoreMView *
view_new (QStoreMViews *owner,
          const char   *name,
          const char   *definition,
          const char   *body,
          GPtrArray    *column_names)
{
  QStoreMView *view = g_new0 (QStoreMView, 1);

  view->owner = owner;
  view->name = g_strdup (name);
  view->lower = lower (name);
  view->definition = g_strdup (definition);
  view->body = g_strdup (body);
  view->column_names = column_names != NULL ? g_ptr_array_ref (column_names) : NULL;
  view->dirty_keys = g_hash_table_new_full (g_bytes_hash, g_bytes_equal,
                                            (GDestroyNotify) g_bytes_unref, NULL);
  view->touched_keys = g_hash_table_new_full (g_bytes_hash, g_bytes_equal,
                                              (GDestroyNotify) g_bytes_unref, NULL);
  view->row_buf = g_byte_array_new ();
  view->key_buf = g_byte_array_new ();
  return view;
}

static QStoreMView *
lookup_view (QStoreMViews *self,
             const char   *name)
{
  g_autofree char *key = NULL;

  if (name == NULL)
    return NULL;
  key = lower (name);
  return g_hash_table_lookup (self->views, key);
}

static QStoreSqlTable *
view_entry (QStoreMView *view)
{
  return qstore_database_lookup (view->owner->db, view->name);
}

static QStoreTable *
view_backing (QStoreMView *view)
{
  QStoreSqlTable *entry = view_entry (view);

  return entry != NULL ? entry->table : NULL;
}

/* Planning */

static gboolean
set_sqlite_error (QStoreDatabase  *db,
                  sqlite3         *conn,
                  int              rc,
                  const char      *view,
                  GError         **error)
{
  qstore_database_set_sqlite_error (db, conn, rc, error);
  g_prefix_error (error, "Materialized view “%s”: ", view);
  return FALSE;
}

typedef struct
{
  GPtrArray *reads;      /* char *: "db\ttable\tcolumn" */
  GHashTable *seen;
  int        refused;    /* the first action that is not a read, or 0 */
} PlanAuth;

static int
plan_authorizer (void       *data,
                 int         action,
                 const char *arg1,
                 const char *arg2,
                 const char *db_name,
                 const char *inner)
{
  PlanAuth *auth = data;

  switch (action)
    {
    case SQLITE_READ:
      if (arg1 != NULL && g_ascii_strncasecmp (arg1, "sqlite_", 7) != 0)
        {
          char *read = g_strdup_printf ("%s\t%s\t%s", db_name != NULL ? db_name : "main", arg1,
                                        arg2 != NULL ? arg2 : "");

          /* A column read twice is listed once; the list owns the text. */
          if (g_hash_table_contains (auth->seen, read))
            g_free (read);
          else
            {
              g_hash_table_add (auth->seen, read);
              g_ptr_array_add (auth->reads, read);
            }
        }
      return SQLITE_OK;

    case SQLITE_SELECT:
    case SQLITE_FUNCTION:
    case SQLITE_RECURSIVE:
      return SQLITE_OK;

    default:
      if (auth->refused == 0)
        auth->refused = action;
      return SQLITE_DENY;
    }
}

static QStoreCollation
collation_from_name (const char *name)
{
  if (name != NULL && g_ascii_strcasecmp (name, "NOCASE") == 0)
    return QSTORE_COLLATION_NOCASE;
  if (name != NULL && g_ascii_strcasecmp (name, "RTRIM") == 0)
    return QSTORE_COLLATION_RTRIM;
  return QSTORE_COLLATION_BINARY;
}

static char *
primary_key_signature (QStoreTableSchema *schema)
{
  GString *text = g_string_new (NULL);

  if (schema->rowid_column >= 0)
    g_string_append_printf (text, "rowid=%s",
                            ((QStoreColumn *) g_ptr_array_index (schema->columns,
                                                                 schema->rowid_column))->name);
  else if (schema->pk->len == 0)
    g_string_append (text, "rowid");
  for (guint i = 0; i < schema->pk->len; i++)
    {
      QStoreKeyPart *part = &g_array_index (schema->pk, QStoreKeyPart, i);
      QStoreColumn *column = g_ptr_array_index (schema->columns, part->column);

      g_string_append_printf (text, "%s%s %s%s", i > 0 ? ", " : "", column->name,
                              qstore_collation_name (part->collation),
                              part->descending ? " DESC" : "");
    }
  return g_string_free (text, FALSE);
}

static gboolean
is_rowid_name (const char *name)
{
  return g_ascii_strcasecmp (name, "rowid") == 0 || g_ascii_strcasecmp (name, "oid") == 0 ||
         g_ascii_strcasecmp (name, "_rowid_") == 0;
}

/* What the body reads of column @column, for the staleness check. */
static char *
read_signature (QStoreDatabase *db,
                gboolean        temp,
                const char     *table,
                const char     *column)
{
  if (*column == '\0')
    return g_strdup ("");

  if (temp)
    {
      const char *type = NULL, *collation = NULL;

      if (sqlite3_table_column_metadata (db->db, "temp", table, column, &type, &collation,
                                         NULL, NULL, NULL) != SQLITE_OK)
        return NULL;
      return g_strdup_printf ("%s|%s", type != NULL ? type : "",
                              qstore_collation_name (collation_from_name (collation)));
    }
  else
    {
      QStoreSqlTable *entry = qstore_database_lookup (db, table);
      int i;

      if (entry == NULL)
        return NULL;
      i = qstore_table_schema_find_column (entry->schema, column);
      if (i < 0)
        return is_rowid_name (column) ? g_strdup ("rowid") : NULL;
      return g_strdup_printf ("%s|%s",
                              ((QStoreColumn *) g_ptr_array_index (entry->schema->columns, i))->decl_type,
                              qstore_collation_name (((QStoreColumn *) g_ptr_array_index (entry->schema->columns, i))->collation));
    }
}

static int
compare_sources (gconstpointer a,
                 gconstpointer b)
{
  const PlanSource *x = *(PlanSource * const *) a;
  const PlanSource *y = *(PlanSource * const *) b;

  if (x->temp != y->temp)
    return x->temp ? 1 : -1;
  return strcmp (x->lower, y->lower);
}

static int
compare_reads (gconstpointer a,
               gconstpointer b)
{
  const PlanRead *x = *(PlanRead * const *) a;
  const PlanRead *y = *(PlanRead * const *) b;
  int cmp = strcmp (x->table, y->table);

  return cmp != 0 ? cmp : strcmp (x->column, y->column);
}

/* The shape of a body, as far as choosing a strategy needs it. */
typedef struct
{
  gboolean   simple;       /* starts with SELECT, one SELECT in all, no compound */
  gboolean   distinct;
  gboolean   limit;
  gboolean   window;
  gboolean   group_by;
  gboolean   group_plain;  /* every GROUP BY term is a plain column name */
  gboolean   having;
  GPtrArray *group_columns; /* char * */
} BodyShape;

static void
body_shape_clear (BodyShape *shape)
{
  g_clear_pointer (&shape->group_columns, g_ptr_array_unref);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (BodyShape, body_shape_clear)

static gboolean
ends_group_by (const QStoreSqlToken *token)
{
  return token->kind == QSTORE_SQL_TOKEN_END || qstore_sql_token_is_punct (token, ';') ||
         qstore_sql_token_is (token, "HAVING") || qstore_sql_token_is (token, "WINDOW") ||
         qstore_sql_token_is (token, "ORDER") || qstore_sql_token_is (token, "LIMIT") ||
         qstore_sql_token_is (token, "UNION") || qstore_sql_token_is (token, "INTERSECT") ||
         qstore_sql_token_is (token, "EXCEPT");
}

static void
scan_body (const char *body,
           BodyShape  *shape)
{
  QStoreSqlToken token;
  const char *p = body;
  guint n_select = 0;
  int depth = 0;
  gboolean first = TRUE;
  gboolean compound = FALSE;

  shape->group_columns = g_ptr_array_new_with_free_func (g_free);
  shape->group_plain = TRUE;
  shape->simple = TRUE;

  for (;;)
    {
      p = qstore_sql_next_token (p, &token);
      if (token.kind == QSTORE_SQL_TOKEN_END)
        break;

      if (first)
        {
          first = FALSE;
          if (!qstore_sql_token_is (&token, "SELECT"))
            shape->simple = FALSE;
          n_select++;
          p = qstore_sql_next_token (p, &token);
          if (qstore_sql_token_is (&token, "DISTINCT"))
            {
              shape->distinct = TRUE;
              continue;
            }
          if (token.kind == QSTORE_SQL_TOKEN_END)
            break;
        }

      if (qstore_sql_token_is_punct (&token, '('))
        depth++;
      else if (qstore_sql_token_is_punct (&token, ')'))
        depth--;
      else if (qstore_sql_token_is (&token, "SELECT") || qstore_sql_token_is (&token, "VALUES"))
        n_select++;
      else if (qstore_sql_token_is (&token, "OVER") || qstore_sql_token_is (&token, "WINDOW"))
        shape->window = TRUE;
      else if (depth == 0 && (qstore_sql_token_is (&token, "UNION") || qstore_sql_token_is (&token, "INTERSECT") ||
                              qstore_sql_token_is (&token, "EXCEPT")))
        compound = TRUE;
      else if (depth == 0 && (qstore_sql_token_is (&token, "LIMIT") || qstore_sql_token_is (&token, "OFFSET")))
        shape->limit = TRUE;
      else if (depth == 0 && qstore_sql_token_is (&token, "HAVING"))
        shape->having = TRUE;
      else if (depth == 0 && qstore_sql_token_is (&token, "GROUP"))
        {
          QStoreSqlToken by;

          p = qstore_sql_next_token (p, &by);
          if (!qstore_sql_token_is (&by, "BY"))
            {
              shape->simple = FALSE;
              continue;
            }
          shape->group_by = TRUE;
          /* term [, term]*: each a name, optionally qualified */
          for (;;)
            {
              QStoreSqlToken parts[4];
              guint n = 0;
              const char *q = p;

              for (;;)
                {
                  QStoreSqlToken t;
                  const char *after = qstore_sql_next_token (q, &t);

                  if (ends_group_by (&t) || qstore_sql_token_is_punct (&t, ','))
                    break;
                  if (n < G_N_ELEMENTS (parts))
                    parts[n] = t;
                  n++;
                  q = after;
                  if (qstore_sql_token_is_punct (&t, '('))
                    {
                      /* an expression: skip to its end */
                      int inner = 1;

                      while (inner > 0)
                        {
                          q = qstore_sql_next_token (q, &t);
                          if (t.kind == QSTORE_SQL_TOKEN_END)
                            break;
                          if (qstore_sql_token_is_punct (&t, '('))
                            inner++;
                          else if (qstore_sql_token_is_punct (&t, ')'))
                            inner--;
                          else if (qstore_sql_token_is (&t, "SELECT"))
                            n_select++;
                        }
                    }
                }
              p = q;

              if ((n == 1 && token_is_name (&parts[0])) ||
                  (n == 3 && token_is_name (&parts[0]) && qstore_sql_token_is_punct (&parts[1], '.') &&
                   token_is_name (&parts[2])))
                g_ptr_array_add (shape->group_columns, qstore_sql_token_name (&parts[n - 1]));
              else
                shape->group_plain = FALSE;

              p = qstore_sql_next_token (p, &token);
              if (!qstore_sql_token_is_punct (&token, ','))
                break;
            }
          /* @token ends the GROUP BY: look at it as usual */
          if (token.kind == QSTORE_SQL_TOKEN_END)
            break;
          if (qstore_sql_token_is (&token, "HAVING"))
            shape->having = TRUE;
          else if (qstore_sql_token_is (&token, "WINDOW"))
            shape->window = TRUE;
          else if (qstore_sql_token_is (&token, "LIMIT"))
            shape->limit = TRUE;
          else if (qstore_sql_token_is (&token, "UNION") || qstore_sql_token_is (&token, "INTERSECT") ||
                   qstore_sql_token_is (&token, "EXCEPT"))
            compound = TRUE;
        }
    }

  if (n_select != 1 || compound)
    shape->simple = FALSE;
}

/* Opcodes of the body's program: how many cursors it opens on tables and
 * whether it aggregates. */
static gboolean
explain_body (sqlite3     *conn,
              const char  *body,
              guint       *n_cursors,
              gboolean    *aggregate)
{
  g_autofree char *sql = g_strconcat ("EXPLAIN ", body, NULL);
  g_autoptr(sqlite3_stmt) stmt = NULL;

  *n_cursors = 0;
  *aggregate = FALSE;
  if (sqlite3_prepare_v2 (conn, sql, -1, &stmt, NULL) != SQLITE_OK)
    return FALSE;
  while (sqlite3_step (stmt) == SQLITE_ROW)
    {
      const char *opcode = (const char *) sqlite3_column_text (stmt, 1);

      if (opcode == NULL)
        continue;
      if (g_str_equal (opcode, "VOpen") || g_str_equal (opcode, "OpenRead"))
        (*n_cursors)++;
      else if (g_str_has_prefix (opcode, "Agg"))
        *aggregate = TRUE;
    }
  return TRUE;
}

/* Whether SQLite would walk a whole table for @sql. */
static gboolean
query_scans (sqlite3    *conn,
             const char *sql)
{
  g_autofree char *explain = g_strconcat ("EXPLAIN QUERY PLAN ", sql, NULL);
  g_autoptr(sqlite3_stmt) stmt = NULL;
  gboolean scans = FALSE;

  if (sqlite3_prepare_v2 (conn, explain, -1, &stmt, NULL) != SQLITE_OK)
    return TRUE;
  while (sqlite3_step (stmt) == SQLITE_ROW)
    {
      const char *detail = (const char *) sqlite3_column_text (stmt, 3);

      if (detail == NULL)
        continue;
      if (g_str_has_prefix (detail, "SCAN ") &&
          (strstr (detail, "VIRTUAL TABLE") == NULL || g_str_has_suffix (detail, ":scan")))
        {
          /* the subquery's own rows are no table */
          if (!g_str_has_prefix (detail, "SCAN (subquery") && !g_str_has_prefix (detail, "SCAN CONSTANT"))
            scans = TRUE;
        }
    }
  return scans;
}

static PlanColumn *
find_output_column (Plan              *plan,
                    const PlanSource  *source,
                    const char        *column)
{
  for (guint j = 0; j < plan->columns->len; j++)
    {
      PlanColumn *out = g_ptr_array_index (plan->columns, j);

      if (out->origin_table != NULL && g_strcmp0 (out->origin_db, "main") == 0 &&
          g_str_equal (out->origin_table, source->lower) &&
          g_ascii_strcasecmp (out->origin_column, column) == 0)
        return out;
    }
  return NULL;
}

static guint
output_position (Plan       *plan,
                 PlanColumn *column)
{
  guint j;

  g_ptr_array_find (plan->columns, column, &j);
  return j;
}

/* Picks the backing's key and the strategy. */
static void
plan_strategy (QStoreDatabase  *db,
               Plan            *plan,
               const char      *body)
{
  g_auto(BodyShape) shape = { 0 };
  PlanSource *source;
  QStoreSqlTable *entry;
  QStoreTableSchema *schema;
  guint n_cursors;
  gboolean aggregate;
  gboolean candidate = FALSE;
  gboolean grouped = FALSE;

  if (plan->sources->len != 1 || plan->has_temp)
    return;
  source = g_ptr_array_index (plan->sources, 0);
  entry = qstore_database_lookup (db, source->name);
  if (entry == NULL)
    return;
  schema = entry->schema;

  scan_body (body, &shape);
  if (!shape.simple || shape.distinct || shape.limit || shape.window)
    return;
  if (!explain_body (db->db, body, &n_cursors, &aggregate) || n_cursors != 1)
    return;

  if (!aggregate && !shape.group_by && !shape.having)
    {
      /* Inverse projection: every key column of the source passes through. */
      g_autoptr(GArray) key = g_array_new (FALSE, FALSE, sizeof (QStoreKeyPart));

      if (schema->rowid_column >= 0)
        {
          QStoreKeyPart part = { schema->rowid_column, QSTORE_COLLATION_BINARY, FALSE };

          g_array_append_val (key, part);
        }
      else
        g_array_append_vals (key, schema->pk->data, schema->pk->len);

      candidate = key->len > 0;
      for (guint k = 0; candidate && k < key->len; k++)
        {
          QStoreKeyPart *part = &g_array_index (key, QStoreKeyPart, k);
          QStoreColumn *column = g_ptr_array_index (schema->columns, part->column);
          PlanColumn *out = find_output_column (plan, source, column->name);
          guint j;

          /* The key's collation must be the one the lookup compares with. */
          if (out == NULL || (schema->rowid_column < 0 && part->collation != column->collation))
            {
              candidate = FALSE;
              break;
            }
          j = output_position (plan, out);
          g_array_append_val (plan->key_out, j);
          g_array_append_val (plan->key_src, part->column);
        }
    }
  else if (aggregate && shape.group_by && shape.group_plain && shape.group_columns->len > 0)
    {
      candidate = TRUE;
      grouped = TRUE;
      for (guint k = 0; candidate && k < shape.group_columns->len; k++)
        {
          const char *name = g_ptr_array_index (shape.group_columns, k);
          int c = qstore_table_schema_find_column (schema, name);
          PlanColumn *out;
          guint j;
          gboolean seen = FALSE;

          if (c < 0 || !(out = find_output_column (plan, source, name)))
            {
              candidate = FALSE;
              break;
            }
          /* A result column named like the term but reading something else
           * would make the term ambiguous. */
          for (guint i = 0; i < plan->columns->len; i++)
            {
              PlanColumn *other = g_ptr_array_index (plan->columns, i);

              if (g_ascii_strcasecmp (other->body_name, name) == 0 &&
                  (other->origin_table == NULL || !g_str_equal (other->origin_table, source->lower) ||
                   g_ascii_strcasecmp (other->origin_column, name) != 0))
                candidate = FALSE;
            }
          j = output_position (plan, out);
          for (guint i = 0; i < plan->key_out->len; i++)
            seen = seen || g_array_index (plan->key_out, guint, i) == j;
          if (seen)
            continue;
          g_array_append_val (plan->key_out, j);
          g_array_append_val (plan->key_src, c);
        }
    }

  if (!candidate)
    {
      g_array_set_size (plan->key_out, 0);
      g_array_set_size (plan->key_src, 0);
      return;
    }

  plan->source = 0;
  {
    GString *sql = g_string_new (plan->all_sql);

    for (guint k = 0; k < plan->key_out->len; k++)
      {
        PlanColumn *out = g_ptr_array_index (plan->columns, g_array_index (plan->key_out, guint, k));
        g_autofree char *quoted = qstore_sql_quote (out->body_name);

        g_string_append_printf (sql, "%s%s IS ?%u", k == 0 ? " WHERE " : " AND ", quoted, k + 1);
      }
    plan->key_sql = g_string_free (sql, FALSE);
  }

  /* The key lookup must reach the source through its key or an index:
   * a lookup that walks the table costs more than one rebuild per
   * transaction. The backing keeps its key either way. */
  if (!query_scans (db->db, plan->key_sql))
    plan->strategy = grouped ? QSTORE_MATERIALIZED_VIEW_STRATEGY_GROUP_RECOMPUTE
                             : QSTORE_MATERIALIZED_VIEW_STRATEGY_INVERSE_PROJECTION;
}

static char *
backing_sql (QStoreDatabase *db,
             const char     *name,
             Plan           *plan)
{
  GString *sql = g_string_new ("CREATE TABLE ");
  g_autofree char *quoted = qstore_sql_quote (name);
  QStoreSqlTable *source = NULL;

  if (plan->source >= 0)
    source = qstore_database_lookup (db, ((PlanSource *) g_ptr_array_index (plan->sources,
                                                                            plan->source))->name);

  g_string_append_printf (sql, "%s (", quoted);
  for (guint j = 0; j < plan->columns->len; j++)
    {
      PlanColumn *column = g_ptr_array_index (plan->columns, j);
      g_autofree char *column_name = qstore_sql_quote (column->name);
      const char *type = column->decl_type;

      /* A lone INTEGER key column would alias the rowid and take integers
       * only; unless the source's does too, keep its affinity without it. */
      if (plan->key_out->len == 1 && g_array_index (plan->key_out, guint, 0) == j &&
          type != NULL && g_ascii_strcasecmp (type, "INTEGER") == 0 &&
          (source == NULL ||
           source->schema->rowid_column != (gint) g_array_index (plan->key_src, guint, 0)))
        type = "INT";

      g_string_append_printf (sql, "%s%s", j > 0 ? ", " : "", column_name);
      if (type != NULL && *type != '\0')
        g_string_append_printf (sql, " %s", type);
      if (column->collation != QSTORE_COLLATION_BINARY)
        g_string_append_printf (sql, " COLLATE %s", qstore_collation_name (column->collation));
    }
  if (plan_is_keyed (plan))
    {
      g_string_append (sql, ", PRIMARY KEY (");
      for (guint k = 0; k < plan->key_out->len; k++)
        {
          PlanColumn *column = g_ptr_array_index (plan->columns, g_array_index (plan->key_out, guint, k));
          g_autofree char *column_name = qstore_sql_quote (column->name);

          g_string_append_printf (sql, "%s%s", k > 0 ? ", " : "", column_name);
        }
      g_string_append (sql, ")");
    }
  g_string_append (sql, ")");
  return g_string_free (sql, FALSE);
}

/* Plans the body of view @name: what it reads (from SQLite's authorizer
 * while it prepares), what it gives, its key and its strategy. */
static Plan *
plan_new (QStoreDatabase  *db,
          const char      *name,
          const char      *body,
          GPtrArray       *column_names,
          GError         **error)
{
  g_autoptr(Plan) plan = plan_new_empty ();
  g_autoptr(sqlite3_stmt) stmt = NULL;
  g_autoptr(GHashTable) seen = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr(GHashTable) names = g_hash_table_new_full (name_hash, name_equal, g_free, NULL);
  PlanAuth auth = { g_ptr_array_new_with_free_func (g_free), seen, 0 };
  g_autofree char *view_lower = lower (name);
  int (*previous) (void *, int, const char *, const char *, const char *, const char *);
  gpointer previous_data;
  const char *tail = NULL;
  int rc;

  /* Whatever authorizes the statement being run, if any, comes back. */
  previous = db->authorizer;
  previous_data = db->authorizer_data;
  qstore_database_set_authorizer (db, plan_authorizer, &auth);
  rc = sqlite3_prepare_v2 (db->db, body, -1, &stmt, &tail);
  qstore_database_set_authorizer (db, previous, previous_data);
  if (rc != SQLITE_OK)
    {
      g_ptr_array_unref (auth.reads);
      if (auth.refused != 0)
        {
          g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                       "Materialized view “%s”: its body must be a query that only reads "
                       "(SELECT …)", name);
          return NULL;
        }
      return (set_sqlite_error (db, db->db, rc, name, error), NULL);
    }
  if (stmt == NULL || *qstore_sql_skip_space (tail) != '\0' || !sqlite3_stmt_readonly (stmt) ||
      sqlite3_column_count (stmt) == 0)
    {
      g_ptr_array_unref (auth.reads);
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                   "Materialized view “%s”: its body must be one SELECT that returns columns",
                   name);
      return NULL;
    }
  g_clear_pointer (&stmt, sqlite3_finalize);

  /* Sources and what is read of them */
  for (guint i = 0; i < auth.reads->len; i++)
    {
      g_auto(GStrv) parts = g_strsplit (g_ptr_array_index (auth.reads, i), "\t", 3);
      gboolean temp = g_ascii_strcasecmp (parts[0], "temp") == 0;
      g_autofree char *table_lower = lower (parts[1]);
      QStoreSqlTable *entry = NULL;
      PlanSource *source;
      PlanRead *read;

      if (!temp)
        {
          if (g_ascii_strcasecmp (parts[0], "main") != 0 ||
              !(entry = qstore_database_lookup (db, parts[1])))
            continue;   /* a plain view, read through: its tables are listed too */
          if (g_str_equal (table_lower, view_lower))
            {
              g_ptr_array_unref (auth.reads);
              g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                           "Materialized view “%s” cannot read itself", name);
              return NULL;
            }
        }

      source = plan_find_source (plan, table_lower, temp);
      if (source == NULL)
        {
          source = g_new0 (PlanSource, 1);
          source->name = g_strdup (entry != NULL ? entry->schema->name : parts[1]);
          source->lower = g_strdup (table_lower);
          source->temp = temp;
          source->primary_key = entry != NULL ? primary_key_signature (entry->schema) : g_strdup ("");
          g_ptr_array_add (plan->sources, source);
          plan->has_temp = plan->has_temp || temp;
        }

      read = g_new0 (PlanRead, 1);
      read->table = temp ? g_strconcat ("temp.", table_lower, NULL) : g_strdup (table_lower);
      read->column = g_strdup (parts[2]);
      read->signature = read_signature (db, temp, parts[1], parts[2]);
      g_ptr_array_add (plan->reads, read);
    }
  g_ptr_array_unref (auth.reads);
  g_ptr_array_sort (plan->sources, compare_sources);
  g_ptr_array_sort (plan->reads, compare_reads);

  /* What it gives */
  plan->all_sql = g_strdup_printf ("SELECT * FROM (%s)", body);
  rc = sqlite3_prepare_v2 (db->db, plan->all_sql, -1, &stmt, NULL);
  if (rc != SQLITE_OK)
    return (set_sqlite_error (db, db->db, rc, name, error), NULL);
  if (column_names != NULL && column_names->len != (guint) sqlite3_column_count (stmt))
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                   "Materialized view “%s” names %u columns but its body gives %d: name "
                   "each column once", name, column_names->len, sqlite3_column_count (stmt));
      return NULL;
    }
  for (int j = 0; j < sqlite3_column_count (stmt); j++)
    {
      PlanColumn *column = g_new0 (PlanColumn, 1);
      const char *origin_db = sqlite3_column_database_name (stmt, j);
      const char *origin_table = sqlite3_column_table_name (stmt, j);
      const char *origin_column = sqlite3_column_origin_name (stmt, j);
      const char *type = sqlite3_column_decltype (stmt, j);

      g_ptr_array_add (plan->columns, column);
      column->body_name = g_strdup (sqlite3_column_name (stmt, j));
      column->name = g_strdup (column_names != NULL ? g_ptr_array_index (column_names, j)
                                                    : column->body_name);
      column->decl_type = type != NULL ? g_strdup (type) : NULL;
      if (!g_hash_table_add (names, g_strdup (column->name)))
        {
          g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                       "Materialized view “%s” has two columns named “%s”: name them apart "
                       "(… AS other_name)", name, column->name);
          return NULL;
        }

      if (origin_table != NULL && origin_column != NULL && origin_db != NULL)
        {
          column->origin_db = lower (origin_db);
          column->origin_table = lower (origin_table);
          column->origin_column = g_strdup (origin_column);
          if (g_str_equal (column->origin_db, "temp"))
            {
              const char *collation = NULL;

              if (sqlite3_table_column_metadata (db->db, "temp", origin_table, origin_column,
                                                 NULL, &collation, NULL, NULL, NULL) == SQLITE_OK)
                column->collation = collation_from_name (collation);
            }
          else
            {
              QStoreSqlTable *entry = qstore_database_lookup (db, origin_table);
              int i = entry != NULL ? qstore_table_schema_find_column (entry->schema, origin_column) : -1;

              if (i >= 0)
                column->collation = ((QStoreColumn *) g_ptr_array_index (entry->schema->columns, i))->collation;
            }
        }
    }
  g_clear_pointer (&stmt, sqlite3_finalize);

  plan_strategy (db, plan, body);
  plan->backing_sql = backing_sql (db, name, plan);
  return g_steal_pointer (&plan);
}

/* Why @new no longer reads what @old did, or NULL when it reads the same. */
static char *
plan_difference (const Plan *old,
                 const Plan *new)
{
  for (guint i = 0; i < old->sources->len; i++)
    {
      PlanSource *a = g_ptr_array_index (old->sources, i);
      PlanSource *b = plan_find_source (new, a->lower, a->temp);

      if (b == NULL)
        return g_strdup_printf ("it no longer reads “%s”", a->name);
      if (g_strcmp0 (a->primary_key, b->primary_key) != 0)
        return g_strdup_printf ("the primary key of “%s” changed", a->name);
    }
  for (guint i = 0; i < new->sources->len; i++)
    {
      PlanSource *b = g_ptr_array_index (new->sources, i);

      if (plan_find_source (old, b->lower, b->temp) == NULL)
        return g_strdup_printf ("it now reads “%s”", b->name);
    }
  for (guint i = 0; i < MAX (old->reads->len, new->reads->len); i++)
    {
      PlanRead *a = i < old->reads->len ? g_ptr_array_index (old->reads, i) : NULL;
      PlanRead *b = i < new->reads->len ? g_ptr_array_index (new->reads, i) : NULL;

      if (a == NULL)
        return g_strdup_printf ("it now reads column “%s.%s”", b->table, b->column);
      if (b == NULL || compare_reads (&a, &b) != 0)
        return g_strdup_printf ("column “%s.%s” it reads is gone", a->table, a->column);
      if (g_strcmp0 (a->signature, b->signature) != 0)
        return g_strdup_printf ("column “%s.%s” it reads changed its type or collation",
                                a->table, a->column);
    }
  if (g_strcmp0 (old->backing_sql, new->backing_sql) != 0)
    return g_strdup ("its result columns changed");
  return NULL;
}

/* Maintenance */

static gboolean
values_equal (const QStoreValue *a,
              const QStoreValue *b)
{
  if (a->type != b->type)
    return FALSE;
  switch (a->type)
    {
    case QSTORE_VALUE_NULL:
      return TRUE;
    case QSTORE_VALUE_INTEGER:
      return a->integer == b->integer;
    case QSTORE_VALUE_REAL:
      return memcmp (&a->real, &b->real, sizeof a->real) == 0;
    case QSTORE_VALUE_TEXT:
    case QSTORE_VALUE_BLOB:
    default:
      return a->bytes.len == b->bytes.len &&
             (a->bytes.len == 0 || memcmp (a->bytes.data, b->bytes.data, a->bytes.len) == 0);
    }
}

static gboolean
rows_equal (const QStoreValue *a,
            const QStoreValue *b,
            guint              n)
{
  for (guint i = 0; i < n; i++)
    if (!values_equal (&a[i], &b[i]))
      return FALSE;
  return TRUE;
}

/* Values copied out of a statement's row (or any values) as one encoded
 * row, decoded again where needed. */
static GBytes *
encode_values (const QStoreValue *values,
               guint              n)
{
  g_autoptr(GByteArray) buffer = g_byte_array_new ();

  qstore_row_encode (buffer, values, n);
  return g_byte_array_free_to_bytes (g_steal_pointer (&buffer));
}

static gboolean
decode_values (GBytes       *row,
               QStoreValue  *values,
               guint         n,
               GError      **error)
{
  QStoreRowReader reader;
  gsize len;
  const guint8 *data = g_bytes_get_data (row, &len);
  guint n_values;

  if (!qstore_row_reader_init (&reader, data, len, &n_values, error))
    return FALSE;
  if (n_values != n)
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_CORRUPT,
                   "A row of %u values was read where %u were expected", n_values, n);
      return FALSE;
    }
  for (guint i = 0; i < n; i++)
    if (!qstore_row_reader_next (&reader, &values[i], error))
      return FALSE;
  return TRUE;
}

static void
values_from_statement (sqlite3_stmt *stmt,
                       QStoreValue  *values,
                       guint         n)
{
  for (guint i = 0; i < n; i++)
    qstore_value_from_sqlite (sqlite3_column_value (stmt, (int) i), &values[i]);
}

static gboolean
has_null (const QStoreValue *values,
          guint              n)
{
  for (guint i = 0; i < n; i++)
    if (values[i].type == QSTORE_VALUE_NULL)
      return TRUE;
  return FALSE;
}

/* The first key after every key that starts with @prefix. */
static GByteArray *
prefix_end (const GByteArray *prefix)
{
  GByteArray *end = g_byte_array_new ();

  g_byte_array_append (end, prefix->data, prefix->len);
  while (end->len > 0)
    {
      if (end->data[end->len - 1] != 0xff)
        {
          end->data[end->len - 1]++;
          return end;
        }
      g_byte_array_set_size (end, end->len - 1);
    }
  g_byte_array_unref (end);
  return NULL;
}

static sqlite3_stmt *
view_statement (QStoreMView    *view,
                sqlite3_stmt  **cached,
                const char     *sql,
                gboolean       *temporary,
                GError        **error)
{
  sqlite3 *conn = view->owner->db->db;
  sqlite3_stmt *stmt = NULL;
  int rc;

  /* A statement still running (a nested read reached this view) cannot
   * be run again: use one of its own. */
  *temporary = *cached != NULL && sqlite3_stmt_busy (*cached);
  if (*cached != NULL && !*temporary)
    {
      sqlite3_reset (*cached);
      sqlite3_clear_bindings (*cached);
      return *cached;
    }
  rc = sqlite3_prepare_v3 (conn, sql, -1, *temporary ? 0 : SQLITE_PREPARE_PERSISTENT, &stmt, NULL);
  if (rc != SQLITE_OK)
    {
      set_sqlite_error (view->owner->db, conn, rc, view->name, error);
      sqlite3_finalize (stmt);
      return NULL;
    }
  if (!*temporary)
    *cached = stmt;
  return stmt;
}

static void
view_statement_done (sqlite3_stmt *stmt,
                     gboolean      temporary)
{
  if (temporary)
    sqlite3_finalize (stmt);
  else
    sqlite3_reset (stmt);
}

/* Row values shaped like the backing, NULL but for the key columns. */
static void
key_probe (const Plan        *plan,
           const QStoreValue *key_values,
           QStoreValue       *values)
{
  memset (values, 0, plan->columns->len * sizeof (QStoreValue));
  for (guint k = 0; k < plan->key_out->len; k++)
    values[g_array_index (plan->key_out, guint, k)] = key_values[k];
}

/* The rows the backing holds under @prefix: the one of that key, or, when
 * the key holds NULL (NULLs are distinct: such rows get their own
 * suffixes), every row under it. */
static gboolean
backing_rows (QStoreTable       *backing,
              const GByteArray  *prefix,
              gboolean           exact,
              GPtrArray         *keys,
              GPtrArray         *rows,
              GError           **error)
{
  g_autoptr(QStoreBounds) bounds = NULL;
  g_autoptr(QStoreIter) iter = NULL;
  g_autoptr(GByteArray) end = NULL;
  GError *local_error = NULL;

  if (exact)
    {
      GBytes *row = qstore_table_get_row (backing, prefix->data, prefix->len, &local_error);

      if (local_error != NULL)
        {
          g_propagate_error (error, local_error);
          return FALSE;
        }
      if (row != NULL)
        {
          g_ptr_array_add (keys, g_bytes_new (prefix->data, prefix->len));
          g_ptr_array_add (rows, row);
        }
      return TRUE;
    }

  bounds = qstore_bounds_new ();
  qstore_bounds_set_gte (bounds, prefix->data, prefix->len);
  if ((end = prefix_end (prefix)) != NULL)
    qstore_bounds_set_lt (bounds, end->data, end->len);
  if (!(iter = qstore_table_scan (backing, bounds, error)))
    return FALSE;
  while (qstore_iter_next (iter, &local_error))
    {
      g_ptr_array_add (keys, qstore_iter_get_key (iter));
      g_ptr_array_add (rows, qstore_iter_get_value (iter));
    }
  if (local_error != NULL)
    {
      g_propagate_error (error, local_error);
      return FALSE;
    }
  return TRUE;
}

static gboolean
backing_insert (QStoreTable  *backing,
                QStoreValue  *values,
                const gint64 *rowid,
                GError      **error)
{
  gint64 assigned = 0;
  gboolean ignored = FALSE;

  if (rowid != NULL)
    return qstore_table_insert_values_with_rowid (backing, values, rowid, QSTORE_CONFLICT_ABORT,
                                                  &assigned, &ignored, error);
  return qstore_table_insert_values (backing, values, QSTORE_CONFLICT_ABORT, &assigned,
                                     &ignored, error);
}

/* recompute_partition() for a key without NULL: at most one row. */
static gboolean
recompute_key (QStoreMView        *view,
               QStoreTable        *backing,
               const QStoreValue  *key_values,
               GError            **error)
{
  Plan *plan = view->plan;
  guint n = plan->columns->len;
  guint n_key = plan->key_out->len;
  g_autoptr(GBytes) current = NULL;
  GError *local_error = NULL;
  QStoreRowReader reader;
  sqlite3_stmt *stmt;
  gboolean temporary;
  gboolean found;
  guint n_read;
  int rc;

  if (view->n_values != n)
    {
      view->values = g_renew (QStoreValue, view->values, n);
      view->stored = g_renew (QStoreValue, view->stored, n);
      view->n_values = n;
    }

  if (!(stmt = view_statement (view, &view->key_stmt, plan->key_sql, &temporary, error)))
    return FALSE;
  for (guint k = 0; k < n_key; k++)
    qstore_value_bind (stmt, (int) k + 1, &key_values[k]);
  rc = sqlite3_step (stmt);
  found = rc == SQLITE_ROW;
  if (found)
    {
      values_from_statement (stmt, view->values, n);
      g_byte_array_set_size (view->row_buf, 0);
      qstore_row_encode (view->row_buf, view->values, n);
      rc = sqlite3_step (stmt);
      if (rc == SQLITE_ROW)
        {
          view_statement_done (stmt, temporary);
          g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_FAILED,
                       "Materialized view “%s”: its body gives several rows for one key",
                       view->name);
          return FALSE;
        }
    }
  if (rc != SQLITE_DONE)
    {
      set_sqlite_error (view->owner->db, view->owner->db->db, rc, view->name, error);
      view_statement_done (stmt, temporary);
      return FALSE;
    }
  view_statement_done (stmt, temporary);

  key_probe (plan, key_values, view->stored);
  if (!qstore_table_encode_key (backing, view->stored, view->key_buf, error))
    return FALSE;
  current = qstore_table_get_row (backing, view->key_buf->data, view->key_buf->len, &local_error);
  if (local_error != NULL)
    {
      g_propagate_error (error, local_error);
      return FALSE;
    }

  if (found)
    {
      /* The values again, now from the copy: the statement moved on. */
      if (!qstore_row_reader_init (&reader, view->row_buf->data, view->row_buf->len, &n_read, error))
        return FALSE;
      for (guint i = 0; i < n; i++)
        if (!qstore_row_reader_next (&reader, &view->values[i], error))
          return FALSE;
    }

  if (current != NULL)
    {
      gsize len;
      const guint8 *data = g_bytes_get_data (current, &len);
      gboolean ignored = FALSE;

      if (!found)
        return qstore_table_delete_key (backing, view->key_buf->data, view->key_buf->len, error);
      if (!qstore_table_decode_row (backing, data, len, view->stored, NULL, error))
        return FALSE;
      if (rows_equal (view->values, view->stored, n))
        return TRUE;
      return qstore_table_update_values (backing, view->key_buf->data, view->key_buf->len,
                                         view->values, QSTORE_CONFLICT_ABORT, &ignored, error);
    }
  return !found || backing_insert (backing, view->values, NULL, error);
}

/* Deletes the backing's rows under @keys, then inserts @rows (encoded
 * values, decoded through @values, @n of them). */
static gboolean
replace_rows (QStoreTable   *backing,
              GPtrArray     *keys,
              GPtrArray     *rows,
              QStoreValue   *values,
              guint          n,
              GError       **error)
{
  for (guint i = 0; i < keys->len; i++)
    {
      gsize len;
      const guint8 *data = g_bytes_get_data (keys->pdata[i], &len);

      if (!qstore_table_delete_key (backing, data, len, error))
        return FALSE;
    }
  for (guint i = 0; i < rows->len; i++)
    if (!decode_values (rows->pdata[i], values, n, error) ||
        !backing_insert (backing, values, NULL, error))
      return FALSE;
  return TRUE;
}

/* Computes again the rows of the view whose key is @key_values (a source
 * row's key, or a group) and makes the backing hold exactly those. */
static gboolean
recompute_partition (QStoreMView        *view,
                     const QStoreValue  *key_values,
                     GError            **error)
{
  Plan *plan = view->plan;
  QStoreTable *backing = view_backing (view);
  guint n = plan->columns->len;
  guint n_key = plan->key_out->len;
  g_autoptr(GPtrArray) fresh = g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);
  g_autoptr(GPtrArray) old_keys = g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);
  g_autoptr(GPtrArray) old_rows = g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);
  g_autoptr(GByteArray) prefix = g_byte_array_new ();
  g_autofree QStoreValue *values = g_new0 (QStoreValue, n);
  g_autofree QStoreValue *stored = g_new0 (QStoreValue, n);
  sqlite3_stmt *stmt;
  gboolean temporary;
  gboolean with_null = has_null (key_values, n_key);
  int rc;

  if (backing == NULL)
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_FAILED,
                   "Materialized view “%s” has lost its contents table", view->name);
      return FALSE;
    }

  /* The common case, with the view's own buffers (a nested recomputation
   * of the same view, should one happen, takes the general path). */
  if (!with_null && !view->recomputing)
    {
      gboolean ok;

      view->recomputing = TRUE;
      ok = recompute_key (view, backing, key_values, error);
      view->recomputing = FALSE;
      return ok;
    }

  if (!(stmt = view_statement (view, &view->key_stmt, plan->key_sql, &temporary, error)))
    return FALSE;
  for (guint k = 0; k < n_key; k++)
    qstore_value_bind (stmt, (int) k + 1, &key_values[k]);
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      values_from_statement (stmt, values, n);
      g_ptr_array_add (fresh, encode_values (values, n));
    }
  if (rc != SQLITE_DONE)
    {
      set_sqlite_error (view->owner->db, view->owner->db->db, rc, view->name, error);
      view_statement_done (stmt, temporary);
      return FALSE;
    }
  view_statement_done (stmt, temporary);

  key_probe (plan, key_values, values);
  if (!qstore_table_encode_key (backing, values, prefix, error) ||
      !backing_rows (backing, prefix, !with_null, old_keys, old_rows, error))
    return FALSE;

  if (!with_null && fresh->len > 1)
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_FAILED,
                   "Materialized view “%s”: its body gives %u rows for one key", view->name,
                   fresh->len);
      return FALSE;
    }

  if (!with_null && fresh->len == 1 && old_rows->len == 1)
    {
      gsize len;
      const guint8 *data = g_bytes_get_data (old_rows->pdata[0], &len);
      gboolean ignored = FALSE;

      if (!decode_values (fresh->pdata[0], values, n, error) ||
          !qstore_table_decode_row (backing, data, len, stored, NULL, error))
        return FALSE;
      if (rows_equal (values, stored, n))
        return TRUE;
      return qstore_table_update_values (backing, prefix->data, prefix->len, values,
                                         QSTORE_CONFLICT_ABORT, &ignored, error);
    }

  return replace_rows (backing, old_keys, fresh, values, n, error);
}

/* Computes the whole view again and writes what differs. */
static gboolean
rebuild_into (QStoreMView  *view,
              QStoreTable  *backing,
              GError      **error)
{
  Plan *plan = view->plan;
  guint n = plan->columns->len;
  g_autofree QStoreValue *values = g_new0 (QStoreValue, n);
  g_autofree QStoreValue *stored = g_new0 (QStoreValue, n);
  g_autoptr(GByteArray) key = g_byte_array_new ();
  g_autoptr(GHashTable) produced = NULL;
  g_autoptr(GPtrArray) null_rows = g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);
  g_autoptr(GPtrArray) extra = g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);
  g_autoptr(QStoreIter) iter = NULL;
  g_autoptr(QStoreBounds) bounds = NULL;
  GError *local_error = NULL;
  sqlite3_stmt *stmt;
  gboolean temporary;
  gboolean keyed = plan_is_keyed (plan);
  gint64 position = 0;
  int rc;

  if (backing == NULL)
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_FAILED,
                   "Materialized view “%s” has lost its contents table", view->name);
      return FALSE;
    }
  if (keyed)
    produced = g_hash_table_new_full (g_bytes_hash, g_bytes_equal,
                                      (GDestroyNotify) g_bytes_unref, NULL);

  if (!(stmt = view_statement (view, &view->all_stmt, plan->all_sql, &temporary, error)))
    return FALSE;
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      g_autoptr(GBytes) current = NULL;
      gboolean ignored = FALSE;
      GBytes *key_bytes;

      values_from_statement (stmt, values, n);
      if (keyed)
        {
          gboolean null_key = FALSE;

          for (guint k = 0; k < plan->key_out->len; k++)
            null_key = null_key || values[g_array_index (plan->key_out, guint, k)].type == QSTORE_VALUE_NULL;
          /* Rows whose key holds NULL cannot be found again by key: they
           * are written afresh once the others are in place. */
          if (null_key)
            {
              g_ptr_array_add (null_rows, encode_values (values, n));
              continue;
            }
          if (!qstore_table_encode_key (backing, values, key, &local_error))
            break;
          key_bytes = g_bytes_new (key->data, key->len);
          if (!g_hash_table_add (produced, key_bytes))
            {
              g_set_error (&local_error, QSTORE_ERROR, QSTORE_ERROR_FAILED,
                           "Materialized view “%s”: its body gives two rows of one key",
                           view->name);
              break;
            }
        }
      else
        {
          position++;
          g_byte_array_set_size (key, 0);
          qstore_codec_append_integer (key, position, FALSE);
        }

      current = qstore_table_get_row (backing, key->data, key->len, &local_error);
      if (local_error != NULL)
        break;
      if (current != NULL)
        {
          gsize len;
          const guint8 *data = g_bytes_get_data (current, &len);

          if (!qstore_table_decode_row (backing, data, len, stored, NULL, &local_error))
            break;
          if (rows_equal (values, stored, n))
            continue;
          if (!qstore_table_update_values (backing, key->data, key->len, values,
                                           QSTORE_CONFLICT_ABORT, &ignored, &local_error))
            break;
        }
      else if (!backing_insert (backing, values, keyed ? NULL : &position, &local_error))
        break;
    }
  if (local_error == NULL && rc != SQLITE_DONE)
    set_sqlite_error (view->owner->db, view->owner->db->db, rc, view->name, &local_error);
  view_statement_done (stmt, temporary);
  if (local_error != NULL)
    {
      g_propagate_error (error, local_error);
      return FALSE;
    }

  /* Rows the body no longer gives */
  bounds = qstore_bounds_new ();
  if (!keyed)
    {
      g_byte_array_set_size (key, 0);
      qstore_codec_append_integer (key, position, FALSE);
      qstore_bounds_set_gt (bounds, key->data, key->len);
    }
  if (!(iter = qstore_table_scan (backing, bounds, error)))
    return FALSE;
  while (qstore_iter_next (iter, &local_error))
    {
      gsize len;
      const guint8 *data = qstore_iter_peek_key (iter, &len);
      g_autoptr(GBytes) stored_key = g_bytes_new (data, len);

      if (!keyed || !g_hash_table_contains (produced, stored_key))
        g_ptr_array_add (extra, g_steal_pointer (&stored_key));
    }
  g_clear_object (&iter);
  if (local_error != NULL)
    {
      g_propagate_error (error, local_error);
      return FALSE;
    }
  return replace_rows (backing, extra, null_rows, values, n, error);
}

static gboolean
rebuild (QStoreMView  *view,
         GError      **error)
{
  return rebuild_into (view, view_backing (view), error);
}

/* Staleness and the durable stale set */

static gboolean
view_has_work (QStoreMView *view)
{
  return view->dirty || g_hash_table_size (view->dirty_keys) > 0;
}

static void
view_forget_work (QStoreMView *view)
{
  view->dirty = FALSE;
  view->touched = FALSE;
  g_hash_table_remove_all (view->dirty_keys);
  g_hash_table_remove_all (view->touched_keys);
}

static gboolean
plan_reads_view (const Plan  *plan,
                 QStoreMView *upstream)
{
  return plan != NULL && plan_find_source (plan, upstream->lower, FALSE) != NULL;
}

static void update_observer (QStoreMViews *self);

/* Which live views read each table, for the row changes. */
static void
rebuild_dependents (QStoreMViews *self)
{
  g_hash_table_remove_all (self->dependents);
  for (guint i = 0; i < self->order->len; i++)
    {
      QStoreMView *view = g_ptr_array_index (self->order, i);

      if (view->stale || view->plan == NULL)
        continue;
      for (guint k = 0; k < view->plan->sources->len; k++)
        {
          PlanSource *source = g_ptr_array_index (view->plan->sources, k);
          Dependents *dependents;
          QStoreSqlTable *entry;

          /* TEMP tables are followed through SQLite's hooks instead. */
          if (source->temp || !(entry = qstore_database_lookup (self->db, source->name)))
            continue;
          dependents = g_hash_table_lookup (self->dependents, source->lower);
          if (dependents == NULL)
            {
              dependents = g_new0 (Dependents, 1);
              dependents->entry = qstore_sql_table_ref (entry);
              dependents->views = g_ptr_array_new ();
              g_hash_table_insert (self->dependents, g_strdup (source->lower), dependents);
            }
          g_ptr_array_add (dependents->views, view);
        }
    }
  update_observer (self);
}

static int
compare_names (gconstpointer a,
               gconstpointer b)
{
  return strcmp (*(const char * const *) a, *(const char * const *) b);
}

/* The views that may be behind, as the marker and the durable set list
 * them: the stale ones and those that did not load (nothing follows
 * them); with @all, every view. */
static char *
names_json (QStoreMViews *self,
            gboolean      all)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autoptr(JsonGenerator) generator = json_generator_new ();
  g_autoptr(JsonNode) root = NULL;
  g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  GHashTableIter iter;
  const char *name;

  for (guint i = 0; i < self->order->len; i++)
    {
      QStoreMView *view = g_ptr_array_index (self->order, i);

      if (all || view->stale)
        g_ptr_array_add (names, qualified (view->name));
    }
  g_hash_table_iter_init (&iter, self->unloaded);
  while (g_hash_table_iter_next (&iter, (gpointer *) &name, NULL))
    g_ptr_array_add (names, qualified (name));
  g_ptr_array_sort (names, compare_names);

  json_builder_begin_array (builder);
  for (guint i = 0; i < names->len; i++)
    json_builder_add_string_value (builder, g_ptr_array_index (names, i));
  json_builder_end_array (builder);
  root = json_builder_get_root (builder);
  json_generator_set_root (generator, root);
  return json_generator_to_data (generator, NULL);
}

static gboolean
write_meta (QStoreMViews  *self,
            const char    *name,
            const char    *value,
            GError       **error)
{
  g_autoptr(GBytes) key = qstore_catalog_key_for_meta (name);
  QStoreWriteOp op = { 0 };
  gsize key_len;

  op.store = qstore_database_get_catalog (self->db);
  op.kind = value != NULL ? QSTORE_WRITE_OP_PUT : QSTORE_WRITE_OP_DELETE;
  op.key = g_bytes_get_data (key, &key_len);
  op.key_len = key_len;
  op.value = (const guint8 *) value;
  op.value_len = value != NULL ? strlen (value) : 0;
  return qstore_provider_write (qstore_database_get_provider (self->db), &op, 1,
                                QSTORE_WRITE_SYNC, error);
}

static char *
stale_json (QStoreMViews *self)
{
  return names_json (self, FALSE);
}

/* Only a provider whose commits cannot tear a source from the views over
 * it keeps the durable set: it is what lets a later open trust a view
 * after a crash. It is written synchronously, only when it changes, and
 * always after the DDL that changed it committed, before any write that
 * the stale view will not follow. */
static gboolean
persist_stale_set (QStoreMViews  *self,
                   gboolean       at_close,
                   GError       **error)
{
  g_autofree char *json = NULL;

  /* While views are read back, those not read yet are not in the list:
   * the set written then would vouch for them. The end of the rehydration
   * writes it. */
  if (!self->atomic || (self->db->flags & QSTORE_OPEN_READ_ONLY) || self->rehydrating)
    return TRUE;
  /* A store that never had a view needs no set. */
  if (self->order->len == 0 && self->durable_text == NULL &&
      g_hash_table_size (self->unloaded) == 0)
    return TRUE;

  json = stale_json (self);
  if (self->durable_known && g_strcmp0 (json, self->durable_text) == 0)
    return TRUE;
  if (!write_meta (self, STALE_SET_META, json, error))
    {
      g_prefix_error (error, "The durable set of stale materialized views cannot be written%s: ",
                      at_close ? " at close" : "");
      return FALSE;
    }
  g_free (self->durable_text);
  self->durable_text = g_steal_pointer (&json);
  self->durable_known = TRUE;
  return TRUE;
}

static void
persist_stale_set_or_warn (QStoreMViews *self)
{
  g_autoptr(GError) error = NULL;

  if (!persist_stale_set (self, FALSE, &error))
    {
      /* Close writes it again; until then a crash makes the next open
       * trust the last set written, which may not list the new stale view.
       * Nothing better can be done than saying so. */
      g_warning ("%s", error->message);
      self->durable_known = FALSE;
    }
}

static void
mark_stale_quietly (QStoreMViews *self,
                    QStoreMView  *view,
                    const char   *reason)
{
  if (view->stale)
    return;
  view->stale = TRUE;
  g_free (view->stale_reason);
  view->stale_reason = g_strdup (reason);
  view_forget_work (view);
  view_finalize_statements (view);
  g_debug ("Materialized view “%s” is stale: %s", view->name, reason);

  /* What reads a view no longer followed is not followed either. */
  for (guint i = 0; i < self->order->len; i++)
    {
      QStoreMView *other = g_ptr_array_index (self->order, i);

      if (other != view && !other->stale && plan_reads_view (other->plan, view))
        {
          g_autofree char *why = g_strdup_printf ("it reads main.%s, which is stale", view->lower);

          mark_stale_quietly (self, other, why);
        }
    }
}

static void
mark_stale (QStoreMViews *self,
            QStoreMView  *view,
            const char   *reason)
{
  if (view->stale)
    return;
  mark_stale_quietly (self, view, reason);
  rebuild_dependents (self);
  persist_stale_set_or_warn (self);
}

static void
maintenance_failed (QStoreMView *view,
                    GError      *error)
{
  g_autofree char *reason = g_strdup_printf ("keeping it up to date failed: %s", error->message);

  /* Not a program error: a TEMP source dropped, a body that fails on
   * some rows… The view says why it is stale. */
  g_debug ("Materialized view “%s” is stale: %s", view->name, reason);
  mark_stale (view->owner, view, reason);
}

/* Deferred work */

static void
note_work (QStoreMViews *self)
{
  self->maybe_work = TRUE;
}

static void
flush_view (QStoreMView *view)
{
  g_autoptr(GError) error = NULL;

  if (view->flushing || view->stale)
    return;
  view->flushing = TRUE;
  while (!view->stale && view_has_work (view))
    {
      if (view->dirty)
        {
          view->dirty = FALSE;
          if (!rebuild (view, &error))
            break;
          continue;
        }
      else
        {
          g_autoptr(GHashTable) keys = view->dirty_keys;
          g_autofree QStoreValue *values = g_new0 (QStoreValue, MAX (view->plan->key_out->len, 1));
          GHashTableIter iter;
          GBytes *key;

          view->dirty_keys = g_hash_table_new_full (g_bytes_hash, g_bytes_equal,
                                                    (GDestroyNotify) g_bytes_unref, NULL);
          g_hash_table_iter_init (&iter, keys);
          while (g_hash_table_iter_next (&iter, (gpointer *) &key, NULL))
            if (!decode_values (key, values, view->plan->key_out->len, &error) ||
                !recompute_partition (view, values, &error))
              break;
          if (error != NULL)
            break;
        }
    }
  view->flushing = FALSE;
  if (error != NULL)
    maintenance_failed (view, error);
}

static QStoreMView *
upstream_view (QStoreMViews     *self,
               const PlanSource *source)
{
  return source->temp ? NULL : g_hash_table_lookup (self->views, source->lower);
}

/* Flushes what @view reads first, then @view. */
static void
flush_with_upstream (QStoreMView *view,
                     guint        depth)
{
  if (view->stale || view->flushing || depth > 64)
    return;
  for (guint i = 0; i < view->plan->sources->len; i++)
    {
      QStoreMView *upstream = upstream_view (view->owner, g_ptr_array_index (view->plan->sources, i));

      if (upstream != NULL)
        flush_with_upstream (upstream, depth + 1);
    }
  flush_view (view);
}

static void
flush_all (QStoreMViews *self)
{
  gboolean again = TRUE;

  if (!self->maybe_work)
    return;
  /* Each view's sources first; a flush may give work to views over it. */
  for (guint round = 0; again && round <= self->order->len + 1; round++)
    {
      again = FALSE;
      for (guint i = 0; i < self->order->len; i++)
        flush_with_upstream (g_ptr_array_index (self->order, i), 0);
      for (guint i = 0; i < self->order->len; i++)
        again = again || view_has_work (g_ptr_array_index (self->order, i));
    }
  self->maybe_work = again;
}

static gboolean
before_read (gpointer   mview,
                          GError   **error)
{
  QStoreMView *view = mview;
  QStoreMViews *self = view->owner;
  QStoreCoordinator *coordinator = self->db->coordinator;
  gboolean own_transaction;

  if (!self->maybe_work || view->stale || view->flushing)
    return TRUE;

  /* Only a view over TEMP tables has work outside a transaction (SQLite
   * wrote them without qstore): it is done in a transaction of its own. */
  own_transaction = !qstore_coordinator_in_transaction (coordinator);
  if (own_transaction)
    {
      if (self->db->flags & QSTORE_OPEN_READ_ONLY)
        return TRUE;
      qstore_coordinator_begin (coordinator);
    }
  flush_with_upstream (view, 0);
  if (own_transaction && !qstore_coordinator_commit (coordinator, error))
    {
      g_prefix_error (error, "Materialized view “%s” cannot be brought up to date: ", view->name);
      return FALSE;
    }
  return TRUE;
}

/* The coordinator's observer */

static void
on_changed (gpointer        data,
            const char     *schema,
            const char     *table,
            QStoreChangeOp  op,
            GBytes         *old_row,
            GBytes         *new_row)
{
  QStoreMViews *self = data;
  Dependents *dependents = g_hash_table_lookup (self->dependents, table);
  g_autoptr(GPtrArray) views = NULL;
  QStoreTable *source;
  guint n_columns;
  QStoreValue local_old[32], local_new[32];
  g_autofree QStoreValue *heap_old = NULL, *heap_new = NULL;
  QStoreValue *old_values, *new_values;
  gboolean old_decoded = FALSE, new_decoded = FALSE;

  if (dependents == NULL)
    return;
  source = dependents->entry->table;
  n_columns = dependents->entry->schema->columns->len;
  if (n_columns <= G_N_ELEMENTS (local_old))
    {
      old_values = local_old;
      new_values = local_new;
    }
  else
    {
      old_values = heap_old = g_new0 (QStoreValue, n_columns);
      new_values = heap_new = g_new0 (QStoreValue, n_columns);
    }

  /* Maintenance may make views stale, which changes the list. */
  views = g_ptr_array_copy (dependents->views, NULL, NULL);
  for (guint i = 0; i < views->len; i++)
    {
      QStoreMView *view = g_ptr_array_index (views, i);
      g_autoptr(GError) error = NULL;
      Plan *plan = view->plan;
      guint n_key = plan->key_out->len;
      QStoreValue old_key[16], new_key[16];
      g_autoptr(GBytes) old_encoded = NULL;
      g_autoptr(GBytes) new_encoded = NULL;

      if (view->stale)
        continue;

      if (plan->strategy == QSTORE_MATERIALIZED_VIEW_STRATEGY_FULL_REBUILD || n_key > G_N_ELEMENTS (old_key))
        {
          view->dirty = TRUE;
          view->touched = TRUE;
          note_work (self);
          continue;
        }

      if (old_row != NULL && !old_decoded)
        {
          gsize len;
          const guint8 *data = g_bytes_get_data (old_row, &len);

          if (!qstore_table_decode_row (source, data, len, old_values, NULL, &error))
            {
              maintenance_failed (view, error);
              continue;
            }
          old_decoded = TRUE;
        }
      if (new_row != NULL && !new_decoded)
        {
          gsize len;
          const guint8 *data = g_bytes_get_data (new_row, &len);

          if (!qstore_table_decode_row (source, data, len, new_values, NULL, &error))
            {
              maintenance_failed (view, error);
              continue;
            }
          new_decoded = TRUE;
        }

      for (guint k = 0; k < n_key; k++)
        {
          guint column = g_array_index (plan->key_src, guint, k);

          if (old_row != NULL)
            old_key[k] = old_values[column];
          if (new_row != NULL)
            new_key[k] = new_values[column];
        }
      if (plan->strategy == QSTORE_MATERIALIZED_VIEW_STRATEGY_INVERSE_PROJECTION)
        {
          /* At row time: the old key's row, and the new key's if it moved. */
          gboolean moved = old_row != NULL && new_row != NULL && !rows_equal (old_key, new_key, n_key);

          if ((old_row != NULL && !recompute_partition (view, old_key, &error)) ||
              ((old_row == NULL || moved) && new_row != NULL &&
               !recompute_partition (view, new_key, &error)))
            maintenance_failed (view, error);
          continue;
        }

      if (old_row != NULL)
        old_encoded = encode_values (old_key, n_key);
      if (new_row != NULL)
        new_encoded = encode_values (new_key, n_key);
      if (old_encoded != NULL && new_encoded != NULL && g_bytes_equal (old_encoded, new_encoded))
        g_clear_pointer (&new_encoded, g_bytes_unref);

      if (plan->strategy == QSTORE_MATERIALIZED_VIEW_STRATEGY_GROUP_RECOMPUTE)
        {
          if (old_encoded != NULL)
            {
              g_hash_table_add (view->touched_keys, g_bytes_ref (old_encoded));
              g_hash_table_add (view->dirty_keys, g_steal_pointer (&old_encoded));
            }
          if (new_encoded != NULL)
            {
              g_hash_table_add (view->touched_keys, g_bytes_ref (new_encoded));
              g_hash_table_add (view->dirty_keys, g_steal_pointer (&new_encoded));
            }
          note_work (self);
          continue;
        }

    }
}

static void
on_before_commit (gpointer data)
{
  flush_all (data);
}

static void
on_undone (gpointer data)
{
  QStoreMViews *self = data;

  for (guint i = 0; i < self->order->len; i++)
    {
      QStoreMView *view = g_ptr_array_index (self->order, i);
      GHashTableIter iter;
      GBytes *key;

      if (view->stale)
        continue;
      /* Work done after the savepoint is undone with it: do again all this
       * transaction asked for. */
      view->dirty = view->dirty || view->touched || view->plan->has_temp;
      g_hash_table_iter_init (&iter, view->touched_keys);
      while (g_hash_table_iter_next (&iter, (gpointer *) &key, NULL))
        g_hash_table_add (view->dirty_keys, g_bytes_ref (key));
      if (view_has_work (view))
        note_work (self);
    }
}

static void
on_ended (gpointer data,
          gboolean committed)
{
  QStoreMViews *self = data;

  for (guint i = 0; i < self->order->len; i++)
    {
      QStoreMView *view = g_ptr_array_index (self->order, i);

      /* Whatever the transaction wrote is stored or gone with its
       * sources; a TEMP table's rows are SQLite's, and what was written
       * for them may have been rolled back. */
      if (view->plan != NULL && view->plan->has_temp && !view->stale)
        {
          gboolean dirty = view->dirty || !committed;

          view_forget_work (view);
          view->dirty = dirty;
          if (dirty)
            note_work (self);
        }
      else
        view_forget_work (view);
    }
}

static void
update_observer (QStoreMViews *self)
{
  gboolean want = FALSE;

  for (guint i = 0; !want && i < self->order->len; i++)
    want = !((QStoreMView *) g_ptr_array_index (self->order, i))->stale;
  if (want == self->observing)
    return;
  self->observing = want;
  qstore_coordinator_set_observer (self->db->coordinator, want ? &self->observer : NULL, self);
}

/* TEMP sources: SQLite writes them, so its hooks say when. */

static void
mark_temp_views (QStoreMViews *self,
                 const char   *table)
{
  for (guint i = 0; i < self->order->len; i++)
    {
      QStoreMView *view = g_ptr_array_index (self->order, i);
      g_autofree char *low = NULL;

      if (view->stale || view->plan == NULL || !view->plan->has_temp)
        continue;
      if (table != NULL)
        {
          low = lower (table);
          if (plan_find_source (view->plan, low, TRUE) == NULL)
            continue;
        }
      view->dirty = TRUE;
      note_work (self);
    }
}

static void
on_sqlite_update (void          *data,
                  int            op,
                  const char    *db_name,
                  const char    *table,
                  sqlite3_int64  rowid)
{
  if (g_strcmp0 (db_name, "temp") == 0)
    mark_temp_views (data, table);
}

static void
on_sqlite_rollback (void *data)
{
  mark_temp_views (data, NULL);
}

static void
install_hooks (QStoreMViews *self)
{
  if (self->hooks)
    return;
  self->hooks = TRUE;
  sqlite3_update_hook (self->db->db, on_sqlite_update, self);
  sqlite3_rollback_hook (self->db->db, on_sqlite_rollback, self);
}

/* Registering views and writing their contents */

static void
register_view (QStoreMViews *self,
               QStoreMView  *view)
{
  QStoreSqlTable *entry = view_entry (view);

  g_hash_table_replace (self->views, g_strdup (view->lower), view);
  g_ptr_array_add (self->order, view);
  g_hash_table_remove (self->unloaded, view->lower);
  if (entry != NULL)
    entry_set_view (entry, view);
  if (view->plan != NULL && view->plan->has_temp)
    install_hooks (self);
}

static void
unregister_view (QStoreMViews *self,
                 QStoreMView  *view)
{
  g_ptr_array_remove (self->order, view);
  g_hash_table_remove (self->views, view->lower);   /* frees it */
}

static gboolean
scratch_run (QStoreDatabase  *db,
             const char      *sql,
             GError         **error)
{
  return qstore_database_run (db, db->scratch, sql, error);
}

static void
scratch_undo (QStoreDatabase *db)
{
  sqlite3_exec (db->scratch, "ROLLBACK TO " SCRATCH_SAVEPOINT "; RELEASE " SCRATCH_SAVEPOINT,
                NULL, NULL, NULL);
}

static gboolean
delete_all_rows (QStoreTable  *table,
                 GError      **error)
{
  g_autoptr(GPtrArray) keys = g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);
  g_autoptr(QStoreIter) iter = NULL;
  GError *local_error = NULL;

  if (!(iter = qstore_table_scan (table, NULL, error)))
    return FALSE;
  while (qstore_iter_next (iter, &local_error))
    g_ptr_array_add (keys, qstore_iter_get_key (iter));
  g_clear_object (&iter);
  if (local_error != NULL)
    {
      g_propagate_error (error, local_error);
      return FALSE;
    }
  for (guint i = 0; i < keys->len; i++)
    {
      gsize len;
      const guint8 *data = g_bytes_get_data (keys->pdata[i], &len);

      if (!qstore_table_delete_key (table, data, len, error))
        return FALSE;
    }
  return TRUE;
}

static gboolean
store_is_empty (QStoreTable  *table,
                gboolean     *empty,
                GError      **error)
{
  g_autoptr(QStoreBounds) bounds = qstore_bounds_new ();
  g_autoptr(QStoreIter) iter = NULL;
  GError *local_error = NULL;

  qstore_bounds_set_limit (bounds, 1);
  if (!(iter = qstore_kv_iterate (qstore_table_get_data_store (table), bounds, error)))
    return FALSE;
  *empty = !qstore_iter_next (iter, &local_error);
  if (local_error != NULL)
    {
      g_propagate_error (error, local_error);
      return FALSE;
    }
  return TRUE;
}

/* The views that read @view go stale: its columns are about to change. */
static void
mark_readers_stale (QStoreMViews *self,
                    QStoreMView  *view)
{
  for (guint i = 0; i < self->order->len; i++)
    {
      QStoreMView *other = g_ptr_array_index (self->order, i);

      if (other != view && !other->stale && plan_reads_view (other->plan, view))
        {
          g_autofree char *why = g_strdup_printf ("main.%s, which it reads, now has other columns",
                                                  view->lower);

          mark_stale_quietly (self, other, why);
        }
    }
}

/* Makes the backing of @view hold exactly what its body (planned as
 * view->plan) gives now, and the catalog hold its entries, in one
 * transaction: in place when the backing has the planned shape, else in
 * a backing of the new shape. @fresh: the view is new, so stored rows
 * under its name belong to something else. */
static gboolean
materialize (QStoreMViews  *self,
             QStoreMView   *view,
             gboolean       fresh,
             GError       **error)
{
  QStoreDatabase *db = self->db;
  Plan *plan = view->plan;
  QStoreSqlTable *entry = view_entry (view);
  g_autoptr(QStoreTableSchema) schema = NULL;
  g_autoptr(QStoreTable) new_table = NULL;
  g_autoptr(GBytes) table_key = qstore_catalog_key_for_table ("main", view->name);
  g_autoptr(GBytes) view_key = qstore_catalog_key_for_materialized_view ("main", view->name);
  g_autofree char *bundle = NULL;
  g_autofree char *quoted = qstore_sql_quote (view->name);
  QStoreTable *target;
  gboolean in_place;
  gboolean attached = FALSE;
  gboolean empty = TRUE;

  in_place = entry != NULL && g_strcmp0 (entry->schema->sql, plan->backing_sql) == 0 &&
             entry->schema->indexes->len == 0;

  if (!in_place)
    {
      if (!scratch_run (db, "SAVEPOINT " SCRATCH_SAVEPOINT, error))
        return FALSE;
      if (entry != NULL)
        {
          g_autofree char *drop = g_strdup_printf ("DROP TABLE main.%s", quoted);

          if (!scratch_run (db, drop, error))
            goto undo_scratch;
          /* Durably stale before their source changes under them. */
          mark_readers_stale (self, view);
          rebuild_dependents (self);
          persist_stale_set_or_warn (self);
        }
      if (!scratch_run (db, plan->backing_sql, error) ||
          !(schema = qstore_table_schema_from_sqlite (db->scratch, "main", view->name, error)))
        goto undo_scratch;

      if (entry == NULL)
        {
          g_autoptr(GHashTable) used = qstore_database_store_names (db, NULL);
          g_autofree char *store = qstore_store_name_for_table ("main", view->name);
          const char *owner = g_hash_table_lookup (used, store);

          if (owner != NULL)
            {
              g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_COLLISION,
                           "Materialized view “%s” would keep its contents in store “%s”, "
                           "which %s uses: choose another name", view->name, store, owner);
              goto undo_scratch;
            }
          if (!(entry = qstore_database_attach_table (db, schema, error)))
            goto undo_scratch;
          attached = TRUE;
          if (!store_is_empty (entry->table, &empty, error))
            goto undo;
          if (!empty && fresh)
            {
              g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_COLLISION,
                           "Materialized view “%s”: store “%s” still holds the rows of a table "
                           "no longer in the catalog: remove them with "
                           "qstore_database_reclaim_detached_table() first, or choose another "
                           "name", view->name, store);
              goto undo;
            }
          target = entry->table;
        }
      else if (!(new_table = qstore_table_new (db->coordinator, schema, db->scratch, error)))
        goto undo_scratch;
      else
        target = new_table;
    }
  else
    target = entry->table;

  qstore_coordinator_begin (db->coordinator);
  if ((new_table != NULL && !delete_all_rows (entry->table, error)) ||
      (!empty && !delete_all_rows (target, error)) ||
      !rebuild_into (view, target, error))
    {
      qstore_coordinator_rollback (db->coordinator);
      goto undo;
    }
  bundle = qstore_table_schema_to_bundle (qstore_table_get_table_schema (target));
  qstore_database_put_catalog (db, table_key, bundle);
  qstore_database_put_catalog (db, view_key, view->definition);
  if (!qstore_coordinator_commit (db->coordinator, error))
    goto undo;

  if (!in_place)
    {
      scratch_run (db, "RELEASE " SCRATCH_SAVEPOINT, NULL);
      if (new_table != NULL)
        {
          qstore_sql_table_set_table (entry, new_table);
          if (!qstore_database_redeclare (db, entry, error))
            return FALSE;
          entry = view_entry (view);
        }
    }
  if (entry != NULL)
    entry_set_view (entry, view);
  return TRUE;

undo:
  if (attached)
    qstore_database_detach_table (db, view->name, TRUE);
undo_scratch:
  if (!in_place)
    scratch_undo (db);
  return FALSE;
}

/* Erases the backing and the catalog entries of view @name. */
static gboolean
erase_view (QStoreMViews  *self,
            const char    *name,
            GError       **error)
{
  QStoreDatabase *db = self->db;
  QStoreSqlTable *entry = qstore_database_lookup (db, name);
  g_autoptr(GPtrArray) drop = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(QStoreKV) stats = NULL;
  g_autoptr(GBytes) stats_key = NULL;
  g_autoptr(GBytes) table_key = qstore_catalog_key_for_table ("main", name);
  g_autoptr(GBytes) view_key = qstore_catalog_key_for_materialized_view ("main", name);
  g_autofree char *stats_name = qstore_stats_key_for_table ("main", name);
  const char *empty[] = { NULL };
  QStoreWriteOp ops[3] = { { 0 } };
  gsize len;

  g_ptr_array_add (drop, qstore_store_name_for_table ("main", name));
  for (guint i = 0; entry != NULL && i < entry->schema->indexes->len; i++)
    g_ptr_array_add (drop, qstore_store_name_for_index ("main", name,
                                                        ((QStoreIndexSchema *) g_ptr_array_index (entry->schema->indexes, i))->name));
  g_ptr_array_add (drop, NULL);

  if (!(stats = qstore_provider_get_stats_store (db->provider, error)))
    return FALSE;
  stats_key = g_bytes_new (stats_name, strlen (stats_name));
  ops[0].store = stats;
  ops[0].kind = QSTORE_WRITE_OP_DELETE;
  ops[0].key = g_bytes_get_data (stats_key, &len);
  ops[0].key_len = len;
  ops[1].store = db->catalog;
  ops[1].kind = QSTORE_WRITE_OP_DELETE;
  ops[1].key = g_bytes_get_data (table_key, &len);
  ops[1].key_len = len;
  ops[2].store = db->catalog;
  ops[2].kind = QSTORE_WRITE_OP_DELETE;
  ops[2].key = g_bytes_get_data (view_key, &len);
  ops[2].key_len = len;

  if (!qstore_provider_restructure (db->provider, (const char * const *) drop->pdata,
                                    empty, empty, ops, G_N_ELEMENTS (ops), error))
    {
      g_prefix_error (error, "Materialized view “%s” cannot be dropped: ", name);
      return FALSE;
    }
  qstore_database_forget_table_stats (db, "main", name);

  if (entry != NULL)
    {
      g_autofree char *quoted = qstore_sql_quote (name);
      g_autofree char *drop_mirror = g_strdup_printf ("DROP TABLE IF EXISTS main.%s", quoted);

      entry_set_view (entry, NULL);
      qstore_database_detach_table (db, name, TRUE);
      sqlite3_exec (db->scratch, drop_mirror, NULL, NULL, NULL);
    }
  return TRUE;
}

/* Takes the backing of a view that did not load out of SQL's sight: it is
 * not a table of its own, and DROP MATERIALIZED VIEW removes it. */
static void
hide_backing (QStoreMViews *self,
              const char   *name)
{
  QStoreDatabase *db = self->db;
  g_autofree char *quoted = qstore_sql_quote (name);
  g_autofree char *drop_mirror = g_strdup_printf ("DROP TABLE IF EXISTS main.%s", quoted);
  g_autofree char *label = qualified (name);
  QStoreSqlTable *entry = qstore_database_lookup (db, name);

  if (db->rehydration != NULL)
    qstore_rehydration_result_forget_table (db->rehydration, label);
  if (entry == NULL)
    return;
  qstore_database_detach_table (db, name, TRUE);
  sqlite3_exec (db->scratch, drop_mirror, NULL, NULL, NULL);
}

/* DDL */

static gboolean
name_taken (QStoreDatabase  *db,
            const char      *name,
            GError         **error)
{
  g_autoptr(sqlite3_stmt) stmt = NULL;

  if (qstore_database_lookup (db, name) != NULL)
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_EXISTS,
                   "Materialized view “%s” cannot be created: table “%s” already exists",
                   name, name);
      return TRUE;
    }
  if (sqlite3_prepare_v2 (db->db,
                          "SELECT type FROM main.sqlite_master WHERE name = ?1 COLLATE NOCASE "
                          "UNION ALL SELECT type FROM temp.sqlite_master "
                          "WHERE name = ?1 COLLATE NOCASE AND type IN ('table', 'view')",
                          -1, &stmt, NULL) == SQLITE_OK)
    {
      sqlite3_bind_text (stmt, 1, name, -1, SQLITE_TRANSIENT);
      if (sqlite3_step (stmt) == SQLITE_ROW)
        {
          g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_EXISTS,
                       "Materialized view “%s” cannot be created: %s “%s” already exists",
                       name, (const char *) sqlite3_column_text (stmt, 0), name);
          return TRUE;
        }
    }
  return FALSE;
}

static char *
definition_text (const QStoreStatement *statement,
                 const char      *body)
{
  GString *text = g_string_new ("CREATE MATERIALIZED VIEW ");

  g_string_append (text, statement->name_text);
  if (statement->columns != NULL)
    {
      g_string_append (text, " (");
      for (guint i = 0; i < statement->columns->len; i++)
        {
          g_autofree char *quoted = qstore_sql_quote (g_ptr_array_index (statement->columns, i));

          g_string_append_printf (text, "%s%s", i > 0 ? ", " : "", quoted);
        }
      g_string_append (text, ")");
    }
  g_string_append_printf (text, " AS %s", body);
  return g_string_free (text, FALSE);
}

/* The SELECT of a CREATE statement, where SQLite says it ends. */
static char *
body_text (QStoreDatabase         *db,
           const QStoreStatement  *statement,
           GError                **error)
{
  g_autoptr(sqlite3_stmt) stmt = NULL;
  const char *end = NULL;
  gsize len;
  int rc;

  rc = sqlite3_prepare_v2 (db->db, statement->body, -1, &stmt, &end);
  if (rc != SQLITE_OK)
    return (set_sqlite_error (db, db->db, rc, statement->name, error), NULL);
  if (stmt == NULL)
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                   "Materialized view “%s” has no body: write CREATE MATERIALIZED VIEW %s AS "
                   "SELECT …", statement->name, statement->name);
      return NULL;
    }
  len = end - statement->body;
  while (len > 0 && (statement->body[len - 1] == ';' || g_ascii_isspace (statement->body[len - 1])))
    len--;
  return g_strndup (statement->body, len);
}

static gint64
source_rows (QStoreDatabase   *db,
             const PlanSource *source)
{
  g_autofree char *quoted = NULL;
  g_autofree char *sql = NULL;
  g_autoptr(sqlite3_stmt) stmt = NULL;

  if (!source->temp)
    return qstore_coordinator_get_row_count (db->coordinator, "main", source->name);
  quoted = qstore_sql_quote (source->name);
  sql = g_strdup_printf ("SELECT count(*) FROM temp.%s", quoted);
  if (sqlite3_prepare_v2 (db->db, sql, -1, &stmt, NULL) != SQLITE_OK ||
      sqlite3_step (stmt) != SQLITE_ROW)
    return 0;
  return sqlite3_column_int64 (stmt, 0);
}

static gboolean
check_threshold (QStoreMViews  *self,
                 const char    *name,
                 Plan          *plan,
                 GError       **error)
{
  if (plan->strategy != QSTORE_MATERIALIZED_VIEW_STRATEGY_FULL_REBUILD)
    return TRUE;
  for (guint i = 0; i < plan->sources->len; i++)
    {
      PlanSource *source = g_ptr_array_index (plan->sources, i);
      gint64 rows = source_rows (self->db, source);

      if (rows > self->threshold)
        {
          g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_UNSUPPORTED,
                       "Materialized view “%s” would be computed again in full on every "
                       "transaction that changes “%s”, which holds %" G_GINT64_FORMAT " rows: "
                       "more than " THRESHOLD_SETTING " (%" G_GINT64_FORMAT "). Raise it with "
                       "PRAGMA " THRESHOLD_SETTING " = %" G_GINT64_FORMAT " (or "
                       "qstore_database_set_materialized_view_rebuild_row_threshold()), or "
                       "define the view so it is kept row by row: over one table, keeping its "
                       "primary key columns, or grouping by columns an index of it starts with",
                       name, source->name, rows, self->threshold, rows);
          return FALSE;
        }
    }
  return TRUE;
}

static gboolean
create_view (QStoreMViews           *self,
             const QStoreStatement  *statement,
             GError                **error)
{
  QStoreDatabase *db = self->db;
  g_autofree char *body = NULL;
  g_autofree char *definition = NULL;
  g_autofree char *key = lower (statement->name);
  Plan *plan;
  QStoreMView *view;

  if (!(body = body_text (db, statement, error)))
    return FALSE;

  if (lookup_view (self, statement->name) != NULL)
    {
      if (statement->if_exists)
        return TRUE;
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_EXISTS,
                   "Materialized view “%s” already exists", statement->name);
      return FALSE;
    }
  if (g_hash_table_contains (self->unloaded, key))
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_EXISTS,
                   "Materialized view “%s” is in the catalog but did not load when the "
                   "database was opened (see the rehydration result): drop it with DROP "
                   "MATERIALIZED VIEW, or bring it back with REFRESH MATERIALIZED VIEW",
                   statement->name);
      return FALSE;
    }
  if (name_taken (db, statement->name, error))
    return FALSE;

  if (!(plan = plan_new (db, statement->name, body, statement->columns, error)))
    return FALSE;
  for (guint i = 0; i < plan->sources->len; i++)
    {
      QStoreMView *upstream = upstream_view (self, g_ptr_array_index (plan->sources, i));

      if (upstream != NULL && upstream->stale)
        {
          g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_FAILED,
                       "Materialized view “%s” would read “%s”, which is stale: refresh “%s” "
                       "first", statement->name, upstream->name, upstream->name);
          plan_free (plan);
          return FALSE;
        }
    }
  if (!check_threshold (self, statement->name, plan, error))
    {
      plan_free (plan);
      return FALSE;
    }

  definition = definition_text (statement, body);
  view = view_new (self, statement->name, definition, body, statement->columns);
  view->plan = plan;
  if (!materialize (self, view, TRUE, error))
    {
      view_free (view);
      return FALSE;
    }
  register_view (self, view);
  rebuild_dependents (self);
  return TRUE;
}

static gboolean
drop_view (QStoreMViews     *self,
           const QStoreStatement  *statement,
           GError          **error)
{
  QStoreMView *view = lookup_view (self, statement->name);
  g_autofree char *key = lower (statement->name);

  if (view == NULL && !g_hash_table_contains (self->unloaded, key))
    {
      if (statement->if_exists)
        return TRUE;
      if (qstore_database_lookup (self->db, statement->name) != NULL)
        g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_NOT_FOUND,
                     "“%s” is a table, not a materialized view: drop it with DROP TABLE",
                     statement->name);
      else
        g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_NOT_FOUND,
                     "no such materialized view: %s", statement->name);
      return FALSE;
    }

  if (!erase_view (self, view != NULL ? view->name : statement->name, error))
    return FALSE;
  g_hash_table_remove (self->unloaded, key);
  if (view != NULL)
    unregister_view (self, view);
  rebuild_dependents (self);
  return TRUE;
}

static gboolean
refresh_view (QStoreMViews     *self,
              const QStoreStatement  *statement,
              GError          **error);

static QStoreMView *
view_from_definition (QStoreMViews  *self,
                      const char    *name,
                      const char    *definition,
                      GError       **error)
{
  g_auto(QStoreStatement) parsed = { 0 };
  g_autofree char *body = qstore_statement_definition_body (name, definition, &parsed, error);

  if (body == NULL)
    return NULL;
  return view_new (self, parsed.name, definition, body, parsed.columns);
}

static gboolean
refresh_view (QStoreMViews     *self,
              const QStoreStatement  *statement,
              GError          **error)
{
  QStoreMView *view = lookup_view (self, statement->name);
  g_autofree char *key = lower (statement->name);
  gboolean registered = view != NULL;
  Plan *old_plan;
  Plan *plan;

  if (view == NULL)
    {
      const char *definition = g_hash_table_lookup (self->unloaded, key);

      if (definition == NULL)
        {
          g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_NOT_FOUND,
                       "no such materialized view: %s", statement->name);
          return FALSE;
        }
      if (!(view = view_from_definition (self, key, definition, error)))
        return FALSE;
    }

  if (!(plan = plan_new (self->db, view->name, view->body, view->column_names, error)))
    {
      if (!registered)
        view_free (view);
      return FALSE;
    }
  for (guint i = 0; i < plan->sources->len; i++)
    {
      QStoreMView *upstream = upstream_view (self, g_ptr_array_index (plan->sources, i));

      if (upstream != NULL && upstream->stale)
        {
          g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_FAILED,
                       "Materialized view “%s” reads “%s”, which is stale: refresh “%s” first",
                       view->name, upstream->name, upstream->name);
          plan_free (plan);
          if (!registered)
            view_free (view);
          return FALSE;
        }
    }

  old_plan = view->plan;
  view->plan = plan;
  view_finalize_statements (view);
  if (!materialize (self, view, FALSE, error))
    {
      view->plan = old_plan;
      plan_free (plan);
      if (!registered)
        view_free (view);
      return FALSE;
    }
  plan_free (old_plan);
  view->stale = FALSE;
  g_clear_pointer (&view->stale_reason, g_free);
  view_forget_work (view);
  if (!registered)
    register_view (self, view);
  rebuild_dependents (self);
  persist_stale_set_or_warn (self);
  return TRUE;
}

static gboolean
check_target (QStoreMViews  *self,
              const char    *ddl_table,
              const char    *dml_table,
              GError       **error)
{
  QStoreMView *view;

  if ((self->order->len == 0 && g_hash_table_size (self->unloaded) == 0))
    return TRUE;
  if (ddl_table != NULL)
    {
      g_autofree char *key = lower (ddl_table);

      /* Its contents and its entry are still in the store. */
      if (g_hash_table_contains (self->unloaded, key))
        {
          g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_EXISTS,
                       "Materialized view “%s” is in the catalog, though it did not load when "
                       "the database was opened: drop it with DROP MATERIALIZED VIEW first, "
                       "or choose another name", ddl_table);
          return FALSE;
        }
    }
  if ((view = lookup_view (self, ddl_table)) != NULL)
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_UNSUPPORTED,
                   "“%s” is a materialized view: drop it with DROP MATERIALIZED VIEW (it "
                   "cannot be dropped, renamed or altered as a table)", view->name);
      return FALSE;
    }
  if ((view = lookup_view (self, dml_table)) != NULL)
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_UNSUPPORTED,
                   "Materialized view “%s” cannot be written: it follows the tables it reads "
                   "(change them instead), and REFRESH MATERIALIZED VIEW computes it again",
                   view->name);
      return FALSE;
    }
  return TRUE;
}

/* Refuses what would change a view's contents behind its back, and marks
 * views over TEMP tables for work when SQLite may roll those back. */
static gboolean
check_statement (QStoreDatabase   *db,
                 QStoreStatement  *statement,
                 GError          **error)
{
  QStoreMViews *self = mviews_of (db);
  QStoreMView *view;

  /* ROLLBACK TO reaches no hook: TEMP tables may have changed back. */
  if (statement->rolls_back && self->hooks)
    mark_temp_views (self, NULL);

  switch (statement->kind)
    {
    case QSTORE_STATEMENT_RENAME_TABLE:
    case QSTORE_STATEMENT_ALTER_TABLE:
    case QSTORE_STATEMENT_ALTER_TABLE_ARM:
      if ((view = lookup_view (self, statement->table)) != NULL)
        {
          g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_UNSUPPORTED,
                       "“%s” is a materialized view: its columns follow its definition; to "
                       "change them, drop it with DROP MATERIALIZED VIEW and create it again",
                       view->name);
          return FALSE;
        }
      break;

    case QSTORE_STATEMENT_CREATE_INDEX:
      if ((view = lookup_view (self, statement->table)) != NULL)
        {
          g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_UNSUPPORTED,
                       "Materialized view “%s” cannot be indexed: its contents are "
                       "rewritten as it is kept up to date; index the tables it "
                       "reads, or copy it into a table", view->name);
          return FALSE;
        }
      break;

    case QSTORE_STATEMENT_CREATE_TABLE:
    case QSTORE_STATEMENT_DROP_TABLE:
    case QSTORE_STATEMENT_CREATE_VIEW:
      return check_target (self, statement->name, NULL, error);

    default:
      break;
    }
  return check_target (self, NULL, statement->dml_table, error);
}

static gboolean
check_writable_statement (QStoreDatabase         *db,
                          const QStoreStatement  *statement,
                          GError                **error)
{
  return check_syntax (statement, error) && qstore_database_check_writable (db, error);
}

gboolean
qstore_mview_create (QStoreDatabase   *db,
                     QStoreStatement  *statement,
                     QStoreResult    **result,
                     GError          **error)
{
  return check_writable_statement (db, statement, error) &&
         create_view (mviews_of (db), statement, error);
}

gboolean
qstore_mview_drop (QStoreDatabase   *db,
                   QStoreStatement  *statement,
                   QStoreResult    **result,
                   GError          **error)
{
  return check_writable_statement (db, statement, error) &&
         drop_view (mviews_of (db), statement, error);
}

gboolean
qstore_mview_refresh (QStoreDatabase   *db,
                      QStoreStatement  *statement,
                      QStoreResult    **result,
                      GError          **error)
{
  return check_writable_statement (db, statement, error) &&
         refresh_view (mviews_of (db), statement, error);
}

gboolean
qstore_mview_threshold_setting (QStoreDatabase   *db,
                                QStoreStatement  *statement,
                                QStoreResult    **result,
                                GError          **error)
{
  QStoreMViews *self = mviews_of (db);
  g_autoptr(sqlite3_stmt) stmt = NULL;
  g_autoptr(QStoreResult) rows = NULL;

  if (!check_syntax (statement, error))
    return FALSE;

  if (statement->value != NULL)
    {
      guint64 value = 0;

      if (!g_ascii_string_to_unsigned (statement->value, 10, 0, G_MAXINT64, &value, NULL))
        {
          g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                       "PRAGMA " THRESHOLD_SETTING " takes a number of rows, 0 or more "
                       "(such as PRAGMA " THRESHOLD_SETTING " = 100000)");
          return FALSE;
        }
      self->threshold = (gint64) value;
      if (result != NULL)
        {
          *result = qstore_result_new_for_statement (NULL);
          qstore_result_set_counts (*result, 0, sqlite3_last_insert_rowid (db->db));
        }
      return TRUE;
    }

  if (sqlite3_prepare_v2 (db->db, "SELECT ?1 AS " THRESHOLD_SETTING, -1, &stmt, NULL) != SQLITE_OK)
    return set_sqlite_error (db, db->db, sqlite3_errcode (db->db), THRESHOLD_SETTING, error);
  sqlite3_bind_int64 (stmt, 1, self->threshold);
  rows = qstore_result_new_for_statement (stmt);
  if (sqlite3_step (stmt) == SQLITE_ROW)
    qstore_result_add_row (rows, stmt);
  qstore_result_set_counts (rows, 0, sqlite3_last_insert_rowid (db->db));
  if (result != NULL)
    *result = g_steal_pointer (&rows);
  return TRUE;
}

/* Drops "Materialized view “name”: " from a message about @view. */
static const char *
unprefixed (const char  *message,
            QStoreMView *view)
{
  g_autofree char *prefix = g_strdup_printf ("Materialized view “%s”: ", view->name);

  return g_str_has_prefix (message, prefix) ? message + strlen (prefix) : message;
}

/* A DDL statement commits its schema change first; only then can the
 * views that now read something else be known and the durable set name
 * them. A crash in between would leave a view that reads differently (a
 * column re-collated under max(), say) trusted with contents computed
 * the old way, its shape unchanged. So every view is named before the
 * DDL; after it, after_ddl() writes the true set. A set that
 * names too many only makes the next open refill more. */
static void
before_ddl (QStoreDatabase *db)
{
  QStoreMViews *self = mviews_of (db);
  g_autoptr(GError) error = NULL;
  g_autofree char *json = NULL;

  if (!self->atomic || (db->flags & QSTORE_OPEN_READ_ONLY) ||
      self->order->len == 0)
    return;

  json = names_json (self, TRUE);
  if (self->durable_known && g_strcmp0 (json, self->durable_text) == 0)
    return;
  if (!write_meta (self, STALE_SET_META, json, &error))
    {
      g_warning ("The durable set of stale materialized views cannot be written before DDL: %s",
                 error->message);
      self->durable_known = FALSE;
      return;
    }
  g_free (self->durable_text);
  self->durable_text = g_steal_pointer (&json);
  self->durable_known = TRUE;
}

static void
after_ddl (QStoreDatabase *db)
{
  QStoreMViews *self = mviews_of (db);

  if (self->order->len == 0)
    return;

  for (guint i = 0; i < self->order->len; i++)
    {
      QStoreMView *view = g_ptr_array_index (self->order, i);
      g_autoptr(GError) error = NULL;
      g_autofree char *reason = NULL;
      Plan *plan;

      if (view->stale)
        continue;
      plan = plan_new (db, view->name, view->body, view->column_names, &error);
      if (plan == NULL)
        reason = g_strdup_printf ("its definition no longer applies: %s",
                                  unprefixed (error->message, view));
      else
        reason = plan_difference (view->plan, plan);

      if (reason != NULL)
        {
          mark_stale_quietly (self, view, reason);
          plan_free (plan);
          continue;
        }
      /* Same reads and shape; the way to follow them may differ (an
       * index came or went). */
      view_finalize_statements (view);
      plan_free (view->plan);
      view->plan = plan;
    }
  rebuild_dependents (self);
  persist_stale_set_or_warn (self);
}

/* Rehydration */

/* A JSON array of strings, else NULL: malformed means "trust nothing". */
static GHashTable *
parse_name_set (const char *text)
{
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GHashTable) names = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  JsonNode *root;
  JsonArray *array;

  if (text == NULL || !json_parser_load_from_data (parser, text, -1, NULL))
    return NULL;
  root = json_parser_get_root (parser);
  if (root == NULL || !JSON_NODE_HOLDS_ARRAY (root))
    return NULL;
  array = json_node_get_array (root);
  for (guint i = 0; i < json_array_get_length (array); i++)
    {
      JsonNode *element = json_array_get_element (array, i);

      if (!JSON_NODE_HOLDS_VALUE (element) || json_node_get_value_type (element) != G_TYPE_STRING)
        return NULL;
      g_hash_table_add (names, lower (json_node_get_string (element)));
    }
  return g_steal_pointer (&names);
}

typedef struct
{
  gboolean    use_durable;   /* atomic provider with the durable set present */
  GHashTable *durable;       /* NULL: malformed */
  GHashTable *marker;        /* NULL: absent or malformed */
} Trust;

static gboolean
trust_allows (const Trust *trust,
              const char  *label)
{
  if (trust->use_durable)
    return trust->durable != NULL && !g_hash_table_contains (trust->durable, label);
  return trust->marker != NULL && !g_hash_table_contains (trust->marker, label);
}

static gboolean
read_meta_text (QStoreMViews  *self,
                const char    *name,
                char         **text,
                GError       **error)
{
  g_autoptr(GBytes) key = qstore_catalog_key_for_meta (name);
  g_autoptr(GBytes) value = NULL;
  GError *local_error = NULL;
  gsize key_len;
  const guint8 *key_data = g_bytes_get_data (key, &key_len);

  value = qstore_kv_get (qstore_database_get_catalog (self->db), key_data, key_len, &local_error);
  if (local_error != NULL)
    {
      g_propagate_error (error, local_error);
      return FALSE;
    }
  *text = value != NULL ? g_strndup (g_bytes_get_data (value, NULL), g_bytes_get_size (value))
                        : NULL;
  return TRUE;
}

typedef struct
{
  QStoreMView *view;
  char        *error;
  gboolean     done;
} Pending;

static void
pending_free (Pending *pending)
{
  if (pending->view != NULL)
    view_free (pending->view);
  g_free (pending->error);
  g_free (pending);
}

static gboolean
pending_waits_for (GPtrArray   *pendings,
                   Pending     *self_pending,
                   const char  *lower_name)
{
  for (guint i = 0; i < pendings->len; i++)
    {
      Pending *other = g_ptr_array_index (pendings, i);

      if (other != self_pending && !other->done && g_str_equal (other->view->lower, lower_name))
        return TRUE;
    }
  return FALSE;
}

static void
rehydrate_failed (QStoreMViews *self,
                  QStoreMView  *view,
                  const char   *message)
{
  g_autofree char *label = qualified (view->name);

  qstore_rehydration_result_add_error_entry (self->db->rehydration, label, view->definition,
                                             message);
  g_hash_table_replace (self->unloaded, g_strdup (view->lower), g_strdup (view->definition));
  hide_backing (self, view->name);
}

/* Phase 3: each view is adopted (its stored contents kept) only when all
 * of these hold: its backing exists with the shape the body has now;
 * every source is a qstore table of this database and every source view
 * was adopted in this open; and the trust basis allows it — the durable
 * stale set with an atomic provider (a crash cannot tear a source from
 * the views over it there, so only a stale view may be behind), else a
 * clean-shutdown marker that does not list it. Anything else is computed
 * again ("refilled"). Views over views wait for the views they read, in
 * rounds; a round without progress leaves errors. */
static void
rehydrate (QStoreDatabase *db,
           GArray         *items)
{
  QStoreMViews *self = mviews_of (db);
  QStoreRehydrationResult *result = db->rehydration;
  gboolean read_only = (db->flags & QSTORE_OPEN_READ_ONLY) != 0;
  g_autoptr(GPtrArray) pendings = g_ptr_array_new_with_free_func ((GDestroyNotify) pending_free);
  g_autoptr(GHashTable) adopted = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_autoptr(GError) error = NULL;
  g_autofree char *durable = NULL;
  Trust trust = { FALSE, NULL, NULL };
  gboolean progressed = TRUE;

  self->rehydrating = TRUE;

  /* The trust basis, read before anything is written. */
  if (!read_meta_text (self, STALE_SET_META, &durable, &error))
    {
      g_warning ("The durable set of stale materialized views cannot be read, so no stored "
                 "view is trusted: %s", error->message);
      g_clear_error (&error);
      trust.use_durable = self->atomic;
    }
  else if (self->atomic)
    {
      trust.use_durable = durable != NULL;
      trust.durable = parse_name_set (durable);
      self->durable_text = g_strdup (durable);
      self->durable_known = TRUE;
    }
  else if (durable != NULL && !read_only)
    {
      /* Commits that go store by store can tear a view from its sources,
       * and this session does not keep the set: a set left by an earlier
       * atomic session must not vouch for views after it. */
      if (!write_meta (self, STALE_SET_META, NULL, &error))
        {
          g_warning ("%s", error->message);
          g_clear_error (&error);
        }
    }
  trust.marker = parse_name_set (self->clean_shutdown);

  for (guint i = 0; i < items->len; i++)
    {
      QStoreCatalogItem *item = &g_array_index (items, QStoreCatalogItem, i);
      const char *schema = item->schema;
      const char *name = item->name;
      const char *definition = item->text;
      g_autofree char *label = g_strdup_printf ("%s.%s", schema, name);
      QStoreMView *view;

      if (!g_str_equal (schema, "main"))
        {
          g_autofree char *message =
            g_strdup_printf ("Materialized view “%s” is in schema “%s”, which is not "
                             "supported: only “main” is", label, schema);

          qstore_rehydration_result_add_error_entry (result, label, definition, message);
          continue;
        }
      if (!(view = view_from_definition (self, name, definition, &error)))
        {
          qstore_rehydration_result_add_error_entry (result, label, definition, error->message);
          g_hash_table_replace (self->unloaded, lower (name), g_strdup (definition));
          hide_backing (self, name);
          g_clear_error (&error);
          continue;
        }
      {
        Pending *pending = g_new0 (Pending, 1);

        pending->view = view;
        g_ptr_array_add (pendings, pending);
      }
    }

  while (progressed)
    {
      progressed = FALSE;
      for (guint i = 0; i < pendings->len; i++)
        {
          Pending *pending = g_ptr_array_index (pendings, i);
          QStoreMView *view = pending->view;
          g_autofree char *label = NULL;
          QStoreSqlTable *entry;
          gboolean waits = FALSE;
          gboolean adopt;
          Plan *plan;

          if (pending->done)
            continue;

          /* A view whose source is not there yet may find it in a later
           * round (a view over a view whose contents are not stored). */
          if (!(plan = plan_new (db, view->name, view->body, view->column_names, &error)))
            {
              g_free (pending->error);
              pending->error = g_strdup (error->message);
              g_clear_error (&error);
              continue;
            }
          for (guint k = 0; !waits && k < plan->sources->len; k++)
            {
              PlanSource *source = g_ptr_array_index (plan->sources, k);

              waits = !source->temp && pending_waits_for (pendings, pending, source->lower);
            }
          if (waits)
            {
              plan_free (plan);
              continue;
            }

          label = qualified (view->name);
          entry = view_entry (view);
          adopt = entry != NULL && g_strcmp0 (entry->schema->sql, plan->backing_sql) == 0 &&
                  entry->schema->indexes->len == 0 && !plan->has_temp &&
                  trust_allows (&trust, label);
          for (guint k = 0; adopt && k < plan->sources->len; k++)
            {
              PlanSource *source = g_ptr_array_index (plan->sources, k);

              if (g_hash_table_contains (self->views, source->lower) &&
                  !g_hash_table_contains (adopted, source->lower))
                adopt = FALSE;
            }

          view->plan = plan;
          pending->done = TRUE;
          progressed = TRUE;

          if (adopt)
            {
              g_hash_table_add (adopted, g_strdup (view->lower));
              qstore_rehydration_result_add_materialized_view (result, label, TRUE);
            }
          else if (read_only)
            {
              if (entry == NULL)
                {
                  rehydrate_failed (self, view,
                                    "Its contents are not stored and the database was opened "
                                    "read-only: open it for writing to compute them");
                  continue;
                }
              /* It may be behind, and nothing may be written: it is kept, as stale. */
              view->stale = TRUE;
              view->stale_reason = g_strdup ("its stored contents may be behind, and the "
                                             "database was opened read-only");
              qstore_rehydration_result_add_materialized_view (result, label, FALSE);
            }
          else if (!materialize (self, view, FALSE, &error))
            {
              rehydrate_failed (self, view, error->message);
              g_clear_error (&error);
              continue;
            }
          else
            qstore_rehydration_result_add_materialized_view (result, label, FALSE);

          qstore_rehydration_result_forget_table (result, label);
          register_view (self, g_steal_pointer (&pending->view));
        }
    }

  for (guint i = 0; i < pendings->len; i++)
    {
      Pending *pending = g_ptr_array_index (pendings, i);

      if (pending->done)
        continue;
      rehydrate_failed (self, pending->view,
                        pending->error != NULL
                          ? pending->error
                          : "It reads a materialized view that does not load, or materialized "
                            "views read each other in a cycle");
    }

  g_clear_pointer (&trust.durable, g_hash_table_unref);
  g_clear_pointer (&trust.marker, g_hash_table_unref);

  rebuild_dependents (self);
  /* Refilled views are current, adopted ones were not stale: the stored
   * set may name views that no longer are. */
  self->rehydrating = FALSE;
  persist_stale_set_or_warn (self);
}

/* Opening and closing */

/* The clean-shutdown marker is single use: reading it at open consumes it,
 * so a crash before the next close leaves none. */
static gboolean
consume_clean_shutdown (QStoreMViews  *self,
                        GError       **error)
{
  QStoreDatabase *db = self->db;
  g_autoptr(GBytes) key = qstore_catalog_key_for_meta (CLEAN_SHUTDOWN_META);
  g_autoptr(GBytes) value = NULL;
  GError *local_error = NULL;
  QStoreWriteOp op = { 0 };
  gsize key_len;

  op.key = g_bytes_get_data (key, &key_len);
  op.key_len = key_len;
  value = qstore_kv_get (db->catalog, op.key, op.key_len, &local_error);
  if (local_error != NULL)
    {
      g_propagate_error (error, local_error);
      return FALSE;
    }
  if (value == NULL)
    return TRUE;

  self->clean_shutdown = g_strndup (g_bytes_get_data (value, NULL), g_bytes_get_size (value));
  if (db->flags & QSTORE_OPEN_READ_ONLY)
    return TRUE;

  op.store = db->catalog;
  op.kind = QSTORE_WRITE_OP_DELETE;
  return qstore_provider_write (db->provider, &op, 1, QSTORE_WRITE_SYNC, error);
}

static void
mviews_free (QStoreMViews *self)
{
  if (self->observing && self->db->coordinator != NULL)
    qstore_coordinator_set_observer (self->db->coordinator, NULL, NULL);
  if (self->hooks && self->db->db != NULL)
    {
      sqlite3_update_hook (self->db->db, NULL, NULL);
      sqlite3_rollback_hook (self->db->db, NULL, NULL);
    }
  g_hash_table_unref (self->dependents);
  g_ptr_array_unref (self->order);
  g_hash_table_unref (self->views);
  g_hash_table_unref (self->unloaded);
  g_free (self->clean_shutdown);
  g_free (self->durable_text);
  g_free (self);
}

static gboolean
attach (QStoreDatabase  *db,
        GError         **error)
{
  QStoreMViews *self = g_new0 (QStoreMViews, 1);

  self->db = db;
  self->views = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, (GDestroyNotify) view_free);
  self->order = g_ptr_array_new ();
  self->dependents = g_hash_table_new_full (name_hash, name_equal, g_free,
                                            (GDestroyNotify) dependents_free);
  self->unloaded = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  self->threshold = DEFAULT_REBUILD_ROW_THRESHOLD;
  self->atomic = (qstore_provider_get_capabilities (db->provider) &
                  QSTORE_CAPABILITY_ATOMIC_BATCH) != 0;
  self->observer.changed = on_changed;
  self->observer.before_commit = on_before_commit;
  self->observer.undone = on_undone;
  self->observer.ended = on_ended;
  qstore_database_add_extension_state (db, &qstore_mview_extension, self,
                                       (GDestroyNotify) mviews_free);
  return consume_clean_shutdown (self, error);
}

/* A clean close: the durable set, then the marker, written last, that
 * names the views stale at close (they refill at the next open). */
static gboolean
close_cleanly (QStoreDatabase  *db,
               GError         **error)
{
  QStoreMViews *self = mviews_of (db);
  g_autoptr(GBytes) key = qstore_catalog_key_for_meta (CLEAN_SHUTDOWN_META);
  g_autofree char *stale = NULL;
  QStoreWriteOp op = { 0 };
  gsize key_len;

  if (!persist_stale_set (self, TRUE, error))
    return FALSE;

  stale = stale_json (self);
  op.store = db->catalog;
  op.kind = QSTORE_WRITE_OP_PUT;
  op.key = g_bytes_get_data (key, &key_len);
  op.key_len = key_len;
  op.value = (const guint8 *) stale;
  op.value_len = strlen (stale);
  return qstore_provider_write (db->provider, &op, 1, QSTORE_WRITE_SYNC, error);
}

const QStoreDatabaseExtension qstore_mview_extension = {
  .attach = attach,
  .catalog_kind = QSTORE_CATALOG_KEY_MATERIALIZED_VIEW,
  .rehydrate = rehydrate,
  .check_statement = check_statement,
  .before_ddl = before_ddl,
  .after_ddl = after_ddl,
  .close = close_cleanly,
};

/* Public API */

static int
compare_view_names (gconstpointer a,
                    gconstpointer b,
                    gpointer      data)
{
  return g_ascii_strcasecmp (QSTORE_MATERIALIZED_VIEW ((gpointer) a)->name,
                             QSTORE_MATERIALIZED_VIEW ((gpointer) b)->name);
}

/**
 * qstore_database_list_materialized_views:
 * @self: a #QStoreDatabase
 *
 * Lists the materialized views of the database as they stand now: each
 * one's definition, the tables it reads, its strategy and whether it is
 * stale. Views whose catalog entry did not load at open are not listed
 * (see qstore_database_get_rehydration_result()).
 *
 * Returns: (transfer full): a #GListModel of [class@MaterializedView],
 *   sorted by name
 */
GListModel *
qstore_database_list_materialized_views (QStoreDatabase *self)
{
  QStoreMViews *mviews;
  GListStore *store;

  g_return_val_if_fail (QSTORE_IS_DATABASE (self), NULL);

  store = g_list_store_new (QSTORE_TYPE_MATERIALIZED_VIEW);
  if ((mviews = mviews_of (self)) == NULL)
    return G_LIST_MODEL (store);

  for (guint i = 0; i < mviews->order->len; i++)
    {
      QStoreMView *view = g_ptr_array_index (mviews->order, i);
      g_autoptr(QStoreMaterializedView) item = g_object_new (QSTORE_TYPE_MATERIALIZED_VIEW, NULL);
      g_autoptr(GStrvBuilder) sources = g_strv_builder_new ();

      item->name = g_strdup (view->name);
      item->body = g_strdup (view->body);
      item->definition = g_strdup (view->definition);
      item->strategy = view->plan != NULL ? view->plan->strategy
                                          : QSTORE_MATERIALIZED_VIEW_STRATEGY_FULL_REBUILD;
      item->stale = view->stale;
      item->stale_reason = g_strdup (view->stale_reason);
      for (guint k = 0; view->plan != NULL && k < view->plan->sources->len; k++)
        {
          PlanSource *source = g_ptr_array_index (view->plan->sources, k);
          g_autofree char *name = g_strconcat (source->temp ? "temp." : "main.", source->lower, NULL);

          g_strv_builder_add (sources, name);
        }
      item->sources = g_strv_builder_end (sources);
      g_list_store_insert_sorted (store, item, compare_view_names, NULL);
    }
  return G_LIST_MODEL (store);
}

/**
 * qstore_database_get_materialized_view_rebuild_row_threshold:
 * @self: a #QStoreDatabase
 *
 * Gets the number of rows above which `CREATE MATERIALIZED VIEW` refuses a
 * view that would be computed again in full on every transaction that
 * changes a source (%QSTORE_MATERIALIZED_VIEW_STRATEGY_FULL_REBUILD). SQL
 * reads it with `PRAGMA materialized_view_rebuild_row_threshold`.
 *
 * Returns: the threshold, 10000 unless changed
 */
gint64
qstore_database_get_materialized_view_rebuild_row_threshold (QStoreDatabase *self)
{
  QStoreMViews *mviews;

  g_return_val_if_fail (QSTORE_IS_DATABASE (self), DEFAULT_REBUILD_ROW_THRESHOLD);

  mviews = mviews_of (self);
  return mviews != NULL ? mviews->threshold : DEFAULT_REBUILD_ROW_THRESHOLD;
}

/**
 * qstore_database_set_materialized_view_rebuild_row_threshold:
 * @self: a #QStoreDatabase
 * @threshold: the largest number of rows a source of a fully rebuilt view
 *   may hold when the view is created, 0 or more
 *
 * Sets the threshold of
 * qstore_database_get_materialized_view_rebuild_row_threshold() for this
 * database object (it is not stored). SQL sets it with `PRAGMA
 * materialized_view_rebuild_row_threshold = N`. Views already created
 * are not affected.
 */
void
qstore_database_set_materialized_view_rebuild_row_threshold (QStoreDatabase *self,
                                                             gint64          threshold)
{
  QStoreMViews *mviews;

  g_return_if_fail (QSTORE_IS_DATABASE (self));
  g_return_if_fail (threshold >= 0);

  if ((mviews = mviews_of (self)) != NULL)
    mviews->threshold = threshold;
}
