/* qstore-table-schema-private.h: what a CREATE TABLE (and its indexes) says
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <sqlite3.h>

#include "qstore-codec-private.h"

G_BEGIN_DECLS

/* SQLite's type affinities, decided from the declared type by SQLite's rules. */
typedef enum
{
  QSTORE_AFFINITY_BLOB,     /* "none": values stored as given */
  QSTORE_AFFINITY_TEXT,
  QSTORE_AFFINITY_NUMERIC,
  QSTORE_AFFINITY_INTEGER,
  QSTORE_AFFINITY_REAL,
} QStoreAffinity;

typedef struct
{
  char            *name;
  char            *decl_type;    /* as declared, "" when none */
  QStoreAffinity   affinity;
  QStoreCollation  collation;    /* BINARY when none is declared */
  gboolean         not_null;
  char            *default_sql;  /* the DEFAULT expression's text, or NULL */
} QStoreColumn;

/* One component of a key: a column under a collation and direction. */
typedef struct
{
  guint            column;       /* position in QStoreTableSchema.columns */
  QStoreCollation  collation;
  gboolean         descending;
} QStoreKeyPart;

typedef struct
{
  char     *name;                /* SQLite's name, e.g. "sqlite_autoindex_t_2" for constraints */
  gboolean  unique;
  gboolean  from_constraint;     /* made by a UNIQUE constraint of the table */
  GArray   *parts;               /* QStoreKeyPart */
  char     *where_sql;           /* the partial index predicate, or NULL */
  char     *sql;                 /* its CREATE INDEX text, NULL when from_constraint */
} QStoreIndexSchema;

typedef struct
{
  char *name;                    /* NULL when the constraint has none */
  char *expr_sql;
} QStoreCheck;

typedef struct
{
  char   *name;                  /* NULL when the constraint has none */
  GArray *from_columns;          /* guint positions in this table */
  char   *table;                 /* the referenced table */
  GPtrArray *to_columns;         /* char *: referenced columns (may be empty: its PK) */
  char   *on_update;             /* "NO ACTION", "CASCADE"… */
  char   *on_delete;
} QStoreForeignKey;

typedef struct
{
  gatomicrefcount  ref;
  char            *schema;       /* "main" */
  char            *name;         /* as declared */
  char            *sql;          /* the CREATE TABLE text as SQLite stores it */
  GPtrArray       *columns;      /* QStoreColumn */
  /* QStoreKeyPart; empty for a rowid table. The data key is these columns
   * encoded, or the encoded rowid when empty. As in SQLite's rowid tables,
   * a PRIMARY KEY column may hold NULL, and NULLs are distinct: such a
   * row's data key is the encoded key followed by an encoded integer, one
   * more than the largest such suffix under the same encoded key, so rows
   * with NULL never collide nor match a point read, and sort NULL first.
   * (WITHOUT ROWID tables make their PRIMARY KEY columns NOT NULL.) */
  GArray          *pk;
  gint             rowid_column; /* the INTEGER PRIMARY KEY column aliasing the rowid, or -1 */
  gboolean         without_rowid; /* declared WITHOUT ROWID: SQL has no rowid to name */
  GPtrArray       *indexes;      /* QStoreIndexSchema: CREATE INDEX and UNIQUE constraints */
  GPtrArray       *checks;       /* QStoreCheck */
  GPtrArray       *foreign_keys; /* QStoreForeignKey */
} QStoreTableSchema;

QStoreTableSchema *qstore_table_schema_ref           (QStoreTableSchema  *self);
void               qstore_table_schema_unref         (QStoreTableSchema  *self);

/* Reads a table that exists on @scratch (an ordinary SQLite connection that
 * mirrors the qstore schema with empty tables) through PRAGMA table_xinfo,
 * index_list, index_xinfo, foreign_key_list, sqlite_master and
 * sqlite3_table_column_metadata. */
QStoreTableSchema *qstore_table_schema_from_sqlite   (sqlite3            *scratch,
                                                      const char         *schema,
                                                      const char         *table,
                                                      GError            **error);

int                qstore_table_schema_find_column   (QStoreTableSchema  *self,
                                                      const char         *name);
gboolean           qstore_table_schema_is_rowid_table (QStoreTableSchema *self);

/* The deterministic catalog text: the CREATE TABLE followed by one CREATE
 * INDEX per explicit index, each ending in ";\n". */
char              *qstore_table_schema_to_bundle     (QStoreTableSchema  *self);

QStoreAffinity     qstore_affinity_from_decl_type    (const char         *decl_type);
/* BINARY, NOCASE or RTRIM (any case; NULL is BINARY) into *@out; FALSE
 * for any other name. */
gboolean           qstore_collation_from_name        (const char         *name,
                                                      QStoreCollation    *out);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (QStoreTableSchema, qstore_table_schema_unref)

G_END_DECLS
