/* qstore-mview-private.h: the materialized views of a database
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "qstore-coordinator-private.h"
#include "qstore-mview-plan-private.h"
#include "qstore-router-private.h"

G_BEGIN_DECLS

#define STALE_SET_META                "stale_mvs"
#define DEFAULT_REBUILD_ROW_THRESHOLD 10000

/* The fault point (_qstore_fault_arm()) passed before the durable stale
 * set is written on its own, outside a commit: armed, that write fails
 * as if the store had refused it. */
#define QSTORE_MVIEW_FAULT_STALE_SET  "stale-set"

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
  guint                     writing;        /* a writing statement runs: hold its work */
  gboolean                  hooks;          /* SQLite hooks installed for TEMP sources */
  gint64                    threshold;
  gboolean                  atomic;
  gboolean                  rehydrating;    /* views are still being read back */
  gboolean                  durable_known;  /* durable_text is what the store holds */
  char                     *durable_text;   /* NULL: absent */
  gboolean                  unsaved;        /* the set is due but not written: the next commit carries it */
  char                     *committing;     /* the set the commit ending now carries, or NULL */
  char                     *clean_shutdown; /* the marker found at open, or NULL */
};


QStoreMViews *qstore_mview_mviews_of (QStoreDatabase *db);
/* Keeps @self as @db's views, freed with @free at teardown. */
void qstore_mview_mviews_attach (QStoreDatabase *db,
                                 QStoreMViews   *self,
                                 GDestroyNotify  free);
void qstore_mview_dependents_free (Dependents *dependents);
void qstore_mview_view_finalize_statements (QStoreMView *view);
void qstore_mview_view_free (QStoreMView *view);
QStoreMView *qstore_mview_view_new (QStoreMViews *owner,
                                    const char   *name,
                                    const char   *definition,
                                    const char   *body,
                                    GPtrArray    *column_names);
QStoreMView *qstore_mview_lookup_view (QStoreMViews *self,
                                       const char   *name);
QStoreSqlTable *qstore_mview_view_entry (QStoreMView *view);
QStoreTable *qstore_mview_view_backing (QStoreMView *view);
char *qstore_mview_names_json (QStoreMViews *self,
                               gboolean      all);
gboolean qstore_mview_write_meta (QStoreMViews  *self,
                                  const char    *name,
                                  const char    *value,
                                  GError       **error);
char *qstore_mview_stale_json (QStoreMViews *self);
gboolean qstore_mview_persist_stale_set (QStoreMViews  *self,
                                         gboolean       at_close,
                                         GError       **error);
void qstore_mview_persist_stale_set_or_warn (QStoreMViews *self);
/* Follows the coordinator's transactions while a view is live or the
 * durable stale set is due (QStoreMViews.unsaved). */
void qstore_mview_update_observer (QStoreMViews *self);
gboolean qstore_mview_read_meta_text (QStoreMViews  *self,
                                      const char    *name,
                                      char         **text,
                                      GError       **error);

G_END_DECLS
