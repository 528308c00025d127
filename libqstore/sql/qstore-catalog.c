/* qstore-catalog.c: reading the catalog
 *
 * The catalog store maps a key per object (see qstore_catalog_key_classify())
 * to its DDL: a table's bundle (its CREATE TABLE and one CREATE INDEX per
 * explicit index), a view's CREATE VIEW, and bookkeeping under the meta
 * prefix. Two readers use it: the database at open (qstore-rehydrate.c),
 * and the read-only listing here, which tools and viewers use without
 * opening a database.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include <json-glib/json-glib.h>

#include "qstore-catalog-private.h"
#include "qstore-coordinator-private.h"
#include "qstore-enums.h"
#include "qstore-error.h"
#include "qstore-i18n-private.h"
#include "qstore-sql-token-private.h"
#include "qstore-staging-leftovers-private.h"
#include "qstore-provider-private.h"
#include "qstore-statement-private.h"
#include "qstore-table-schema-private.h"

/* Catalog text is SQL, but a damaged entry may hold any bytes: keep what
 * can be shown. */
char *
qstore_catalog_text (GBytes *bytes)
{
  gsize len;
  const char *data = g_bytes_get_data (bytes, &len);

  return g_utf8_make_valid (data != NULL ? data : "", len);
}

/* A key that is not a catalog key, printable: bytes other than printable
 * ASCII as \xHH. */
char *
qstore_catalog_describe_key (GBytes *key)
{
  GString *text = g_string_new (NULL);
  gsize len;
  const guint8 *data = g_bytes_get_data (key, &len);

  for (gsize i = 0; i < len; i++)
    {
      if (data[i] >= 0x20 && data[i] < 0x7f && data[i] != '\\')
        g_string_append_c (text, (char) data[i]);
      else
        g_string_append_printf (text, "\\x%02x", data[i]);
    }
  return g_string_free (text, FALSE);
}

/* QStoreColumnInfo */

/**
 * QStoreColumnInfo:
 *
 * One column of a table, as its catalog entry declares it: what a viewer
 * shows without running SQL. The items of
 * [method@CatalogEntry.get_columns].
 */
struct _QStoreColumnInfo
{
  GObject          parent_instance;

  char            *name;
  char            *declared_type;
  QStoreCollation  collation;
  gboolean         not_null;
  char            *default_value;
  guint            primary_key_position;
};

enum {
  COLUMN_PROP_0,
  COLUMN_PROP_NAME,
  COLUMN_PROP_DECLARED_TYPE,
  COLUMN_PROP_COLLATION,
  COLUMN_PROP_NOT_NULL,
  COLUMN_PROP_DEFAULT_VALUE,
  COLUMN_PROP_PRIMARY_KEY_POSITION,
  COLUMN_N_PROPS
};

static GParamSpec *column_properties[COLUMN_N_PROPS];

G_DEFINE_FINAL_TYPE (QStoreColumnInfo, qstore_column_info, G_TYPE_OBJECT)

static void
qstore_column_info_finalize (GObject *object)
{
  QStoreColumnInfo *self = QSTORE_COLUMN_INFO (object);

  g_free (self->name);
  g_free (self->declared_type);
  g_free (self->default_value);

  G_OBJECT_CLASS (qstore_column_info_parent_class)->finalize (object);
}

static void
qstore_column_info_get_property (GObject    *object,
                                 guint       prop_id,
                                 GValue     *value,
                                 GParamSpec *pspec)
{
  QStoreColumnInfo *self = QSTORE_COLUMN_INFO (object);

  switch (prop_id)
    {
    case COLUMN_PROP_NAME:
      g_value_set_string (value, self->name);
      break;

    case COLUMN_PROP_DECLARED_TYPE:
      g_value_set_string (value, self->declared_type);
      break;

    case COLUMN_PROP_COLLATION:
      g_value_set_enum (value, self->collation);
      break;

    case COLUMN_PROP_NOT_NULL:
      g_value_set_boolean (value, self->not_null);
      break;

    case COLUMN_PROP_DEFAULT_VALUE:
      g_value_set_string (value, self->default_value);
      break;

    case COLUMN_PROP_PRIMARY_KEY_POSITION:
      g_value_set_uint (value, self->primary_key_position);
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
qstore_column_info_class_init (QStoreColumnInfoClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = qstore_column_info_finalize;
  object_class->get_property = qstore_column_info_get_property;

  /**
   * QStoreColumnInfo:name:
   *
   * The column's name, as declared.
   */
  column_properties[COLUMN_PROP_NAME] =
    g_param_spec_string ("name", NULL, NULL, NULL,
                         G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

  /**
   * QStoreColumnInfo:declared-type:
   *
   * The column's declared type, such as `INTEGER` or `VARCHAR(20)`; empty
   * when none is declared.
   */
  column_properties[COLUMN_PROP_DECLARED_TYPE] =
    g_param_spec_string ("declared-type", NULL, NULL, NULL,
                         G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

  /**
   * QStoreColumnInfo:collation:
   *
   * How the column's text compares (BINARY when none is declared).
   */
  column_properties[COLUMN_PROP_COLLATION] =
    g_param_spec_enum ("collation", NULL, NULL,
                       QSTORE_TYPE_COLLATION, QSTORE_COLLATION_BINARY,
                       G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

  /**
   * QStoreColumnInfo:not-null:
   *
   * Whether the column is declared NOT NULL.
   */
  column_properties[COLUMN_PROP_NOT_NULL] =
    g_param_spec_boolean ("not-null", NULL, NULL, FALSE,
                          G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

  /**
   * QStoreColumnInfo:default-value:
   *
   * The text of the column's DEFAULT expression, or %NULL.
   */
  column_properties[COLUMN_PROP_DEFAULT_VALUE] =
    g_param_spec_string ("default-value", NULL, NULL, NULL,
                         G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

  /**
   * QStoreColumnInfo:primary-key-position:
   *
   * The column's position in the PRIMARY KEY, from 1; 0 when the column
   * is not part of it.
   */
  column_properties[COLUMN_PROP_PRIMARY_KEY_POSITION] =
    g_param_spec_uint ("primary-key-position", NULL, NULL, 0, G_MAXUINT, 0,
                       G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

  g_object_class_install_properties (object_class, COLUMN_N_PROPS, column_properties);
}

static void
qstore_column_info_init (QStoreColumnInfo *self)
{
}

/**
 * qstore_column_info_get_name:
 * @self: a #QStoreColumnInfo
 *
 * Gets the column's name, as declared.
 *
 * Returns: (transfer none): the name
 */
const char *
qstore_column_info_get_name (QStoreColumnInfo *self)
{
  g_return_val_if_fail (QSTORE_IS_COLUMN_INFO (self), NULL);

  return self->name;
}

/**
 * qstore_column_info_get_declared_type:
 * @self: a #QStoreColumnInfo
 *
 * Gets the column's declared type, such as `INTEGER` or `VARCHAR(20)`.
 *
 * Returns: (transfer none): the declared type; empty when none is declared
 */
const char *
qstore_column_info_get_declared_type (QStoreColumnInfo *self)
{
  g_return_val_if_fail (QSTORE_IS_COLUMN_INFO (self), NULL);

  return self->declared_type;
}

/**
 * qstore_column_info_get_collation:
 * @self: a #QStoreColumnInfo
 *
 * Gets how the column's text compares.
 *
 * Returns: the collation, %QSTORE_COLLATION_BINARY when none is declared
 */
QStoreCollation
qstore_column_info_get_collation (QStoreColumnInfo *self)
{
  g_return_val_if_fail (QSTORE_IS_COLUMN_INFO (self), QSTORE_COLLATION_BINARY);

  return self->collation;
}

/**
 * qstore_column_info_get_not_null:
 * @self: a #QStoreColumnInfo
 *
 * Gets whether the column is declared NOT NULL.
 *
 * Returns: %TRUE for a NOT NULL column
 */
gboolean
qstore_column_info_get_not_null (QStoreColumnInfo *self)
{
  g_return_val_if_fail (QSTORE_IS_COLUMN_INFO (self), FALSE);

  return self->not_null;
}

/**
 * qstore_column_info_get_default_value:
 * @self: a #QStoreColumnInfo
 *
 * Gets the text of the column's DEFAULT expression, such as `0` or
 * `'none'`.
 *
 * Returns: (transfer none) (nullable): the expression, or %NULL when the
 *   column has no DEFAULT
 */
const char *
qstore_column_info_get_default_value (QStoreColumnInfo *self)
{
  g_return_val_if_fail (QSTORE_IS_COLUMN_INFO (self), NULL);

  return self->default_value;
}

/**
 * qstore_column_info_get_primary_key_position:
 * @self: a #QStoreColumnInfo
 *
 * Gets where the column is in the table's PRIMARY KEY.
 *
 * Returns: the position, from 1; 0 when the column is not part of the
 *   PRIMARY KEY
 */
guint
qstore_column_info_get_primary_key_position (QStoreColumnInfo *self)
{
  g_return_val_if_fail (QSTORE_IS_COLUMN_INFO (self), 0);

  return self->primary_key_position;
}

/* QStoreCatalogEntry */

/**
 * QStoreCatalogEntry:
 *
 * One entry of a store's catalog, as [func@catalog_list_entries] reads it:
 * a table, a view, a materialized view or a bookkeeping (meta) entry.
 *
 * A table's entry holds its bundle, the CREATE TABLE followed by one
 * CREATE INDEX per index it was given; the listing also parses the bundle
 * (with SQLite, on a private in-memory connection) so a viewer can show
 * the columns and indexes without running SQL, and says why when the
 * bundle does not parse.
 *
 * An entry is immutable.
 */
struct _QStoreCatalogEntry
{
  GObject               parent_instance;

  QStoreCatalogKeyKind  kind;
  char                 *schema;
  char                 *name;
  char                 *ddl;
  char                 *value;
  char                 *error;
  GBytes               *key;
  GBytes               *raw_value;
  GListStore           *columns;       /* QStoreColumnInfo */
  char                **index_names;
  char                **index_ddl;
  char                 *body;          /* a materialized view's SELECT */
  gboolean              contents;      /* a table holding a materialized view's rows */
};

enum {
  ENTRY_PROP_0,
  ENTRY_PROP_KIND,
  ENTRY_PROP_SCHEMA,
  ENTRY_PROP_NAME,
  ENTRY_PROP_DDL,
  ENTRY_PROP_VALUE,
  ENTRY_PROP_ERROR,
  ENTRY_PROP_BODY,
  ENTRY_PROP_CONTENTS,
  ENTRY_N_PROPS
};

static GParamSpec *entry_properties[ENTRY_N_PROPS];

G_DEFINE_FINAL_TYPE (QStoreCatalogEntry, qstore_catalog_entry, G_TYPE_OBJECT)

static void
qstore_catalog_entry_finalize (GObject *object)
{
  QStoreCatalogEntry *self = QSTORE_CATALOG_ENTRY (object);

  g_free (self->schema);
  g_free (self->name);
  g_free (self->ddl);
  g_free (self->value);
  g_free (self->error);
  g_clear_pointer (&self->key, g_bytes_unref);
  g_clear_pointer (&self->raw_value, g_bytes_unref);
  g_clear_object (&self->columns);
  g_strfreev (self->index_names);
  g_strfreev (self->index_ddl);
  g_free (self->body);

  G_OBJECT_CLASS (qstore_catalog_entry_parent_class)->finalize (object);
}

static void
qstore_catalog_entry_get_property (GObject    *object,
                                   guint       prop_id,
                                   GValue     *value,
                                   GParamSpec *pspec)
{
  QStoreCatalogEntry *self = QSTORE_CATALOG_ENTRY (object);

  switch (prop_id)
    {
    case ENTRY_PROP_KIND:
      g_value_set_enum (value, self->kind);
      break;

    case ENTRY_PROP_SCHEMA:
      g_value_set_string (value, self->schema);
      break;

    case ENTRY_PROP_NAME:
      g_value_set_string (value, self->name);
      break;

    case ENTRY_PROP_DDL:
      g_value_set_string (value, self->ddl);
      break;

    case ENTRY_PROP_VALUE:
      g_value_set_string (value, self->value);
      break;

    case ENTRY_PROP_ERROR:
      g_value_set_string (value, self->error);
      break;

    case ENTRY_PROP_BODY:
      g_value_set_string (value, self->body);
      break;

    case ENTRY_PROP_CONTENTS:
      g_value_set_boolean (value, self->contents);
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
qstore_catalog_entry_class_init (QStoreCatalogEntryClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = qstore_catalog_entry_finalize;
  object_class->get_property = qstore_catalog_entry_get_property;

  /**
   * QStoreCatalogEntry:kind:
   *
   * What the entry describes.
   */
  entry_properties[ENTRY_PROP_KIND] =
    g_param_spec_enum ("kind", NULL, NULL,
                       QSTORE_TYPE_CATALOG_KEY_KIND, QSTORE_CATALOG_KEY_INVALID,
                       G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

  /**
   * QStoreCatalogEntry:schema:
   *
   * The schema of the object, such as `main`; %NULL for a meta entry.
   */
  entry_properties[ENTRY_PROP_SCHEMA] =
    g_param_spec_string ("schema", NULL, NULL, NULL,
                         G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

  /**
   * QStoreCatalogEntry:name:
   *
   * The object's name as its key spells it (lower-cased), or the meta
   * entry's name.
   */
  entry_properties[ENTRY_PROP_NAME] =
    g_param_spec_string ("name", NULL, NULL, NULL,
                         G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

  /**
   * QStoreCatalogEntry:ddl:
   *
   * The DDL of a table, view or materialized view; %NULL for a meta entry.
   */
  entry_properties[ENTRY_PROP_DDL] =
    g_param_spec_string ("ddl", NULL, NULL, NULL,
                         G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

  /**
   * QStoreCatalogEntry:value:
   *
   * The value of a meta entry as text; %NULL for the others.
   */
  entry_properties[ENTRY_PROP_VALUE] =
    g_param_spec_string ("value", NULL, NULL, NULL,
                         G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

  /**
   * QStoreCatalogEntry:error:
   *
   * Why the entry cannot be read back, or %NULL.
   */
  entry_properties[ENTRY_PROP_ERROR] =
    g_param_spec_string ("error", NULL, NULL, NULL,
                         G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

  /**
   * QStoreCatalogEntry:body:
   *
   * The query of a materialized view, or %NULL.
   */
  entry_properties[ENTRY_PROP_BODY] =
    g_param_spec_string ("body", NULL, NULL, NULL,
                         G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

  /**
   * QStoreCatalogEntry:materialized-view-contents:
   *
   * Whether the entry is the table that holds the rows of the materialized
   * view of the same name.
   */
  entry_properties[ENTRY_PROP_CONTENTS] =
    g_param_spec_boolean ("materialized-view-contents", NULL, NULL, FALSE,
                          G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

  g_object_class_install_properties (object_class, ENTRY_N_PROPS, entry_properties);
}

static void
qstore_catalog_entry_init (QStoreCatalogEntry *self)
{
  self->columns = g_list_store_new (QSTORE_TYPE_COLUMN_INFO);
  self->index_names = g_new0 (char *, 1);
  self->index_ddl = g_new0 (char *, 1);
}

/**
 * qstore_catalog_entry_get_kind:
 * @self: a #QStoreCatalogEntry
 *
 * Gets what the entry describes. A key the catalog should not hold (it was
 * written by something else) gives %QSTORE_CATALOG_KEY_INVALID, with the
 * key's bytes as the name and an error.
 *
 * Returns: the kind of entry
 */
QStoreCatalogKeyKind
qstore_catalog_entry_get_kind (QStoreCatalogEntry *self)
{
  g_return_val_if_fail (QSTORE_IS_CATALOG_ENTRY (self), QSTORE_CATALOG_KEY_INVALID);

  return self->kind;
}

/**
 * qstore_catalog_entry_get_schema:
 * @self: a #QStoreCatalogEntry
 *
 * Gets the schema of the table or view, such as `main`.
 *
 * Returns: (transfer none) (nullable): the schema, or %NULL for a meta
 *   entry
 */
const char *
qstore_catalog_entry_get_schema (QStoreCatalogEntry *self)
{
  g_return_val_if_fail (QSTORE_IS_CATALOG_ENTRY (self), NULL);

  return self->schema;
}

/**
 * qstore_catalog_entry_get_name:
 * @self: a #QStoreCatalogEntry
 *
 * Gets the name of the table or view as its key spells it (ASCII letters
 * lower-cased; the DDL has the name as declared), or the meta entry's
 * name, such as `tx`.
 *
 * Returns: (transfer none): the name
 */
const char *
qstore_catalog_entry_get_name (QStoreCatalogEntry *self)
{
  g_return_val_if_fail (QSTORE_IS_CATALOG_ENTRY (self), NULL);

  return self->name;
}

/**
 * qstore_catalog_entry_get_ddl:
 * @self: a #QStoreCatalogEntry
 *
 * Gets the entry's DDL: for a table its bundle (the CREATE TABLE, then one
 * CREATE INDEX per index, each ending in `;` and a line break), for a view
 * its CREATE VIEW.
 *
 * Returns: (transfer none) (nullable): the DDL, or %NULL for a meta entry
 */
const char *
qstore_catalog_entry_get_ddl (QStoreCatalogEntry *self)
{
  g_return_val_if_fail (QSTORE_IS_CATALOG_ENTRY (self), NULL);

  return self->ddl;
}

/**
 * qstore_catalog_entry_get_value:
 * @self: a #QStoreCatalogEntry
 *
 * Gets the value of a meta entry as text, such as `42` for `tx`, the last
 * committed transaction. Bytes that are not UTF-8 are replaced; see
 * qstore_catalog_entry_get_raw_value() for the exact bytes.
 *
 * Returns: (transfer none) (nullable): the value, or %NULL when the entry
 *   is not a meta entry
 */
const char *
qstore_catalog_entry_get_value (QStoreCatalogEntry *self)
{
  g_return_val_if_fail (QSTORE_IS_CATALOG_ENTRY (self), NULL);

  return self->value;
}

/**
 * qstore_catalog_entry_get_key:
 * @self: a #QStoreCatalogEntry
 *
 * Gets the entry's key in the catalog store, as stored.
 *
 * Returns: (transfer none): the key
 */
GBytes *
qstore_catalog_entry_get_key (QStoreCatalogEntry *self)
{
  g_return_val_if_fail (QSTORE_IS_CATALOG_ENTRY (self), NULL);

  return self->key;
}

/**
 * qstore_catalog_entry_get_raw_value:
 * @self: a #QStoreCatalogEntry
 *
 * Gets the entry's value in the catalog store, as stored.
 *
 * Returns: (transfer none): the value
 */
GBytes *
qstore_catalog_entry_get_raw_value (QStoreCatalogEntry *self)
{
  g_return_val_if_fail (QSTORE_IS_CATALOG_ENTRY (self), NULL);

  return self->raw_value;
}

/**
 * qstore_catalog_entry_get_columns:
 * @self: a #QStoreCatalogEntry
 *
 * Gets the columns of a table, in declaration order, or those of a
 * materialized view's contents. The model is empty for the other kinds of
 * entry and for a table whose bundle does not parse (see
 * qstore_catalog_entry_get_error()).
 *
 * Returns: (transfer none): a #GListModel of [class@ColumnInfo]
 */
GListModel *
qstore_catalog_entry_get_columns (QStoreCatalogEntry *self)
{
  g_return_val_if_fail (QSTORE_IS_CATALOG_ENTRY (self), NULL);

  return G_LIST_MODEL (self->columns);
}

/**
 * qstore_catalog_entry_get_index_names:
 * @self: a #QStoreCatalogEntry
 *
 * Gets the names of a table's indexes: those of its CREATE INDEX
 * statements and, named by SQLite (`sqlite_autoindex_<table>_<n>`), one
 * per UNIQUE constraint of its CREATE TABLE. Each has its own store.
 *
 * Returns: (transfer none) (array zero-terminated=1): the names, in the
 *   order of qstore_catalog_entry_get_index_ddl(); empty for other kinds
 *   of entry
 */
const char * const *
qstore_catalog_entry_get_index_names (QStoreCatalogEntry *self)
{
  g_return_val_if_fail (QSTORE_IS_CATALOG_ENTRY (self), NULL);

  return (const char * const *) self->index_names;
}

/**
 * qstore_catalog_entry_get_index_ddl:
 * @self: a #QStoreCatalogEntry
 *
 * Gets the CREATE INDEX statement of each index of
 * qstore_catalog_entry_get_index_names(), at the same position. An index
 * made by a UNIQUE constraint of the CREATE TABLE has none: its text is
 * empty.
 *
 * Returns: (transfer none) (array zero-terminated=1): the statements
 */
const char * const *
qstore_catalog_entry_get_index_ddl (QStoreCatalogEntry *self)
{
  g_return_val_if_fail (QSTORE_IS_CATALOG_ENTRY (self), NULL);

  return (const char * const *) self->index_ddl;
}

/**
 * qstore_catalog_entry_get_body:
 * @self: a #QStoreCatalogEntry
 *
 * Gets the query of a materialized view: what follows `AS` in its
 * definition.
 *
 * Returns: (transfer none) (nullable): the query, or %NULL for the other
 *   kinds of entry and for a definition that does not parse (see
 *   qstore_catalog_entry_get_error())
 */
const char *
qstore_catalog_entry_get_body (QStoreCatalogEntry *self)
{
  g_return_val_if_fail (QSTORE_IS_CATALOG_ENTRY (self), NULL);

  return self->body;
}

/**
 * qstore_catalog_entry_is_materialized_view_contents:
 * @self: a #QStoreCatalogEntry
 *
 * Gets whether a table entry holds the rows of the materialized view of
 * the same name. Such a table is part of the view, not a table of its
 * own: viewers list it under the view, and SQL refuses to change it. The
 * view's entry lists the same columns (see
 * qstore_catalog_entry_get_columns()), and its row count is the table's.
 *
 * Returns: %TRUE for a materialized view's contents
 */
gboolean
qstore_catalog_entry_is_materialized_view_contents (QStoreCatalogEntry *self)
{
  g_return_val_if_fail (QSTORE_IS_CATALOG_ENTRY (self), FALSE);

  return self->contents;
}

/**
 * qstore_catalog_entry_is_staging_table:
 * @self: a #QStoreCatalogEntry
 *
 * Gets whether a table entry is bookkeeping of staged imports: a staging
 * table (see qstore_is_staging_table_name()) or the marker table
 * %QSTORE_STAGING_MARKER_TABLE. Such tables are not the user's: viewers
 * list them in a section of their own, apart from the tables.
 *
 * Returns: %TRUE for a staging table or the marker table
 */
gboolean
qstore_catalog_entry_is_staging_table (QStoreCatalogEntry *self)
{
  g_return_val_if_fail (QSTORE_IS_CATALOG_ENTRY (self), FALSE);

  return self->kind == QSTORE_CATALOG_KEY_TABLE && qstore_staging_is_reserved_name (self->name);
}

/**
 * qstore_catalog_entry_get_error:
 * @self: a #QStoreCatalogEntry
 *
 * Gets why the entry cannot be read back: a table's bundle SQLite refuses
 * or that holds more than its table's CREATE TABLE and CREATE INDEX
 * statements, or a key that is not a catalog key.
 *
 * Returns: (transfer none) (nullable): the message, or %NULL when the
 *   entry reads back
 */
const char *
qstore_catalog_entry_get_error (QStoreCatalogEntry *self)
{
  g_return_val_if_fail (QSTORE_IS_CATALOG_ENTRY (self), NULL);

  return self->error;
}

/* Running a catalog entry's DDL */

/* What a table bundle may do: create that table and its indexes. A
 * catalog changed by anything else is not run beyond its first other
 * statement, so it cannot drop or change what other entries made. */
void
qstore_catalog_guard_clear (QStoreCatalogGuard *guard)
{
  g_clear_pointer (&guard->refused, g_free);
}

int
qstore_catalog_guard_authorizer (void       *data,
                  int         action,
                  const char *arg1,
                  const char *arg2,
                  const char *db_name,
                  const char *inner)
{
  QStoreCatalogGuard *guard = data;
  gboolean in_main = g_strcmp0 (db_name, "main") == 0;
  gboolean bookkeeping = arg1 != NULL && g_ascii_strncasecmp (arg1, "sqlite_", 7) == 0;

  switch (action)
    {
    case SQLITE_CREATE_TABLE:
      if (!guard->is_view && in_main && arg1 != NULL &&
          g_ascii_strcasecmp (arg1, guard->object) == 0)
        return SQLITE_OK;
      break;

    case SQLITE_CREATE_INDEX:
      if (!guard->is_view && in_main && arg2 != NULL &&
          g_ascii_strcasecmp (arg2, guard->object) == 0)
        return SQLITE_OK;
      break;

    case SQLITE_CREATE_VIEW:
      if (guard->is_view && in_main && arg1 != NULL &&
          g_ascii_strcasecmp (arg1, guard->object) == 0)
        return SQLITE_OK;
      break;

    case SQLITE_READ:
      /* CREATE INDEX reads its table's columns. */
      if (bookkeeping || (arg1 != NULL && g_ascii_strcasecmp (arg1, guard->object) == 0))
        return SQLITE_OK;
      break;

    case SQLITE_INSERT:
    case SQLITE_UPDATE:
    case SQLITE_DELETE:
      /* SQLite's own schema table. */
      if (bookkeeping)
        return SQLITE_OK;
      break;

    case SQLITE_FUNCTION:
    case SQLITE_SELECT:
    case SQLITE_REINDEX:
      return SQLITE_OK;

    default:
      break;
    }

  if (guard->refused == NULL)
    guard->refused = arg1 != NULL ? g_strdup_printf ("“%s”", arg1)
                                  : g_strdup_printf ("action %d", action);
  return SQLITE_DENY;
}

void
qstore_catalog_guard_error (QStoreCatalogGuard       *guard,
                 const char  *schema,
                 const char  *message,
                 GError     **error)
{
  if (guard->refused != NULL)
    g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_CORRUPT,
                 _("The catalog entry of %s “%s.%s” does more than create it (it touches %s): "
                 "it was changed outside qstore; reclaim the table or restore the entry"),
                 guard->is_view ? "view" : "table", schema, guard->object, guard->refused);
  else
    g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_CORRUPT,
                 _("The catalog entry of %s “%s.%s” does not read back: %s"),
                 guard->is_view ? "view" : "table", schema, guard->object, message);
}

/* Runs the statements of table @table's bundle on @conn. */
gboolean
qstore_catalog_run_bundle (sqlite3     *conn,
            const char  *schema,
            const char  *table,
            const char  *bundle,
            GError     **error)
{
  g_auto(QStoreCatalogGuard) guard = { table, FALSE, NULL };
  char *message = NULL;
  int rc;

  sqlite3_set_authorizer (conn, qstore_catalog_guard_authorizer, &guard);
  rc = sqlite3_exec (conn, bundle, NULL, NULL, &message);
  sqlite3_set_authorizer (conn, NULL, NULL);
  if (rc != SQLITE_OK)
    {
      qstore_catalog_guard_error (&guard, schema, message != NULL ? message : sqlite3_errstr (rc), error);
      sqlite3_free (message);
      return FALSE;
    }
  return TRUE;
}

gboolean
qstore_catalog_savepoint (sqlite3     *conn,
           const char  *sql,
           GError     **error)
{
  int rc = sqlite3_exec (conn, sql, NULL, NULL, NULL);

  if (rc != SQLITE_OK)
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_FAILED,
                   _("SQLite refused “%s”: %s"), sql, sqlite3_errmsg (conn));
      return FALSE;
    }
  return TRUE;
}

/* Reading the catalog without a database */

gboolean
qstore_catalog_read_all (QStoreKV   *catalog,
          GPtrArray  *keys,
          GPtrArray  *values,
          GError    **error)
{
  g_autoptr(QStoreIter) iter = NULL;
  GError *local_error = NULL;

  if (!(iter = qstore_kv_iterate (catalog, NULL, error)))
    return FALSE;
  while (qstore_iter_next (iter, &local_error))
    {
      g_ptr_array_add (keys, qstore_iter_get_key (iter));
      g_ptr_array_add (values, qstore_iter_get_value (iter));
    }
  if (local_error != NULL)
    {
      g_propagate_error (error, local_error);
      return FALSE;
    }
  return TRUE;
}

static void
entry_take_schema (QStoreCatalogEntry *self,
                   QStoreTableSchema  *schema)
{
  g_autoptr(GPtrArray) names = g_ptr_array_new ();
  g_autoptr(GPtrArray) ddl = g_ptr_array_new ();

  for (guint i = 0; i < schema->columns->len; i++)
    {
      QStoreColumn *column = g_ptr_array_index (schema->columns, i);
      g_autoptr(QStoreColumnInfo) info = g_object_new (QSTORE_TYPE_COLUMN_INFO, NULL);

      info->name = g_strdup (column->name);
      info->declared_type = g_strdup (column->decl_type != NULL ? column->decl_type : "");
      info->collation = column->collation;
      info->not_null = column->not_null;
      info->default_value = g_strdup (column->default_sql);
      if (schema->rowid_column == (gint) i)
        info->primary_key_position = 1;
      for (guint k = 0; k < schema->pk->len; k++)
        if (g_array_index (schema->pk, QStoreKeyPart, k).column == i)
          info->primary_key_position = k + 1;
      g_list_store_append (self->columns, info);
    }

  for (guint i = 0; i < schema->indexes->len; i++)
    {
      QStoreIndexSchema *index = g_ptr_array_index (schema->indexes, i);

      g_ptr_array_add (names, g_strdup (index->name));
      g_ptr_array_add (ddl, g_strdup (index->sql != NULL && !index->from_constraint
                                      ? index->sql : ""));
    }
  g_ptr_array_add (names, NULL);
  g_ptr_array_add (ddl, NULL);
  g_strfreev (self->index_names);
  g_strfreev (self->index_ddl);
  self->index_names = (char **) g_ptr_array_free (g_steal_pointer (&names), FALSE);
  self->index_ddl = (char **) g_ptr_array_free (g_steal_pointer (&ddl), FALSE);
}

/* Parses a table's bundle on @conn, where nothing else lives: what it
 * makes is rolled back afterwards. */
static void
entry_parse_table (QStoreCatalogEntry *self,
                   sqlite3            *conn)
{
  g_autoptr(QStoreTableSchema) schema = NULL;
  g_autoptr(GError) error = NULL;

  if (!qstore_catalog_savepoint (conn, "SAVEPOINT qstore_catalog", &error))
    {
      self->error = g_strdup (error->message);
      return;
    }

  if (qstore_catalog_run_bundle (conn, self->schema, self->name, self->ddl, &error) &&
      (schema = qstore_table_schema_from_sqlite (conn, "main", self->name, &error)))
    entry_take_schema (self, schema);
  else
    self->error = g_strdup (error->message);

  sqlite3_exec (conn, "ROLLBACK TO qstore_catalog; RELEASE qstore_catalog", NULL, NULL, NULL);
}

static QStoreCatalogEntry *
entry_new (GBytes *key,
           GBytes *value)
{
  QStoreCatalogEntry *self = g_object_new (QSTORE_TYPE_CATALOG_ENTRY, NULL);

  self->key = g_bytes_ref (key);
  self->raw_value = g_bytes_ref (value);
  self->kind = qstore_catalog_key_classify (key, &self->schema, &self->name);

  switch (self->kind)
    {
    case QSTORE_CATALOG_KEY_TABLE:
    case QSTORE_CATALOG_KEY_VIEW:
    case QSTORE_CATALOG_KEY_MATERIALIZED_VIEW:
      self->ddl = qstore_catalog_text (value);
      break;

    case QSTORE_CATALOG_KEY_META:
      self->value = qstore_catalog_text (value);
      break;

    case QSTORE_CATALOG_KEY_INVALID:
    default:
      self->name = qstore_catalog_describe_key (key);
      self->value = qstore_catalog_text (value);
      self->error = g_strdup_printf ("“%s” is not a catalog key: the entry was written by "
                                     "something other than qstore", self->name);
      break;
    }
  return self;
}

static sqlite3 *
open_parser (GError **error)
{
  sqlite3 *conn = NULL;
  int rc;

  rc = sqlite3_open_v2 (":memory:", &conn, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL);
  if (rc != SQLITE_OK)
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_FAILED,
                   _("SQLite cannot open an in-memory database: %s"),
                   conn != NULL ? sqlite3_errmsg (conn) : sqlite3_errstr (rc));
      sqlite3_close_v2 (conn);
      return NULL;
    }
  return conn;
}

/* Gives each materialized view its query and the columns of the table
 * holding its rows, and marks that table as its contents. */
static void
pair_materialized_views (GListModel *entries)
{
  g_autoptr(GHashTable) tables = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  guint n = g_list_model_get_n_items (entries);

  for (guint i = 0; i < n; i++)
    {
      g_autoptr(QStoreCatalogEntry) entry = g_list_model_get_item (entries, i);

      if (entry->kind == QSTORE_CATALOG_KEY_TABLE)
        g_hash_table_insert (tables, g_strconcat (entry->schema, ".", entry->name, NULL), entry);
    }

  for (guint i = 0; i < n; i++)
    {
      g_autoptr(QStoreCatalogEntry) entry = g_list_model_get_item (entries, i);
      g_autofree char *label = NULL;
      g_autoptr(GError) error = NULL;
      QStoreCatalogEntry *contents;

      if (entry->kind != QSTORE_CATALOG_KEY_MATERIALIZED_VIEW)
        continue;
      if (!(entry->body = qstore_statement_definition_body (entry->name, entry->ddl, NULL, &error)))
        entry->error = g_strdup (error->message);
      label = g_strconcat (entry->schema, ".", entry->name, NULL);
      if ((contents = g_hash_table_lookup (tables, label)) != NULL)
        {
          contents->contents = TRUE;
          g_set_object (&entry->columns, contents->columns);
        }
    }
}

/* The meta entry `tx` says the last transaction id, which commits keep
 * with the row counts (see QStoreCoordinator): @keys and @values, the
 * catalog's in key order, get it from there. */
static gboolean
list_last_tx_id (QStoreProvider  *provider,
                 QStoreKV        *catalog,
                 GPtrArray       *keys,
                 GPtrArray       *values,
                 GError         **error)
{
  g_autoptr(GBytes) key = qstore_catalog_key_for_meta (META_TX);
  g_autoptr(QStoreKV) stats = NULL;
  guint64 tx_id;
  guint at = 0;
  char *text;

  if (!(stats = qstore_provider_get_stats_store (provider, error)) ||
      !qstore_coordinator_read_last_tx_id (provider, catalog, stats, NULL, &tx_id, error))
    return FALSE;
  if (tx_id == 0)
    return TRUE;

  while (at < keys->len && g_bytes_compare (keys->pdata[at], key) < 0)
    at++;
  if (at < keys->len && g_bytes_equal (keys->pdata[at], key))
    g_ptr_array_remove_index (values, at);
  else
    g_ptr_array_insert (keys, at, g_bytes_ref (key));
  text = g_strdup_printf ("%" G_GUINT64_FORMAT, tx_id);
  g_ptr_array_insert (values, at, g_bytes_new_take (text, strlen (text)));
  return TRUE;
}

/**
 * qstore_catalog_list_entries:
 * @provider: an open provider; %QSTORE_OPEN_READ_ONLY is enough
 * @error: return location for a #GError
 *
 * Lists the entries of the provider's catalog store, in key order: meta
 * entries, materialized views and views first (their keys start with a
 * NUL byte), then tables (keys `schema.table`). The table holding a
 * materialized view's rows is listed too, marked (see
 * qstore_catalog_entry_is_materialized_view_contents()).
 *
 * The meta entry `tx` is the last transaction id, which commits keep
 * beside the row counts.
 *
 * This reads the catalog store and that id, nothing else: it writes
 * nothing, does not consume the clean-shutdown marker and does not open
 * the tables, so it is what tools and viewers use on a store another
 * process may be writing. Each table's bundle is parsed by SQLite on a
 * private in-memory connection; a bundle that does not parse gives an
 * entry with an error (see qstore_catalog_entry_get_error()) and the
 * others are listed as usual.
 *
 * Returns: (transfer full): a #GListModel of [class@CatalogEntry], or
 *   %NULL when the catalog store cannot be read
 */
GListModel *
qstore_catalog_list_entries (QStoreProvider  *provider,
                             GError         **error)
{
  g_autoptr(GListStore) entries = NULL;
  g_autoptr(QStoreKV) catalog = NULL;
  g_autoptr(GPtrArray) keys = g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);
  g_autoptr(GPtrArray) values = g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);
  sqlite3 *parser = NULL;

  g_return_val_if_fail (QSTORE_IS_PROVIDER (provider), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!(catalog = qstore_provider_get_catalog_store (provider, error)) ||
      !qstore_catalog_read_all (catalog, keys, values, error) ||
      !list_last_tx_id (provider, catalog, keys, values, error))
    return NULL;

  entries = g_list_store_new (QSTORE_TYPE_CATALOG_ENTRY);
  for (guint i = 0; i < keys->len; i++)
    {
      g_autoptr(QStoreCatalogEntry) entry = entry_new (keys->pdata[i], values->pdata[i]);

      if (entry->kind == QSTORE_CATALOG_KEY_TABLE)
        {
          if (parser == NULL && !(parser = open_parser (error)))
            return NULL;
          entry_parse_table (entry, parser);
        }
      g_list_store_append (entries, entry);
    }

  if (parser != NULL)
    sqlite3_close_v2 (parser);
  pair_materialized_views (G_LIST_MODEL (entries));
  return G_LIST_MODEL (g_steal_pointer (&entries));
}

/**
 * qstore_catalog_get_row_count:
 * @provider: an open provider; %QSTORE_OPEN_READ_ONLY is enough
 * @schema: (nullable): the table's schema, %NULL for `main`
 * @table: the table's name, in any case
 * @error: return location for a #GError
 *
 * Reads a table's row count from the statistics store, as of the last
 * commit, without opening the table.
 *
 * Returns: the number of rows; -1 when the statistics have no entry for
 *   the table (it was never written to, or does not exist), and -1 with
 *   @error set when they cannot be read (%QSTORE_ERROR_CORRUPT when the
 *   entry is malformed)
 */
gint64
qstore_catalog_get_row_count (QStoreProvider  *provider,
                              const char      *schema,
                              const char      *table,
                              GError         **error)
{
  g_autoptr(QStoreKV) stats = NULL;
  g_autoptr(GBytes) value = NULL;
  g_autoptr(JsonParser) parser = NULL;
  g_autofree char *key = NULL;
  GError *local_error = NULL;
  JsonObject *object;
  JsonNode *root;
  JsonNode *count;
  gsize len;
  const char *data;

  g_return_val_if_fail (QSTORE_IS_PROVIDER (provider), -1);
  g_return_val_if_fail (table != NULL, -1);
  g_return_val_if_fail (error == NULL || *error == NULL, -1);

  if (schema == NULL)
    schema = "main";

  if (!(stats = qstore_provider_get_stats_store (provider, error)))
    return -1;
  key = qstore_stats_key_for_table (schema, table);
  value = qstore_kv_get (stats, (const guint8 *) key, strlen (key), &local_error);
  if (local_error != NULL)
    {
      g_propagate_error (error, local_error);
      return -1;
    }
  if (value == NULL)
    return -1;

  data = g_bytes_get_data (value, &len);
  parser = json_parser_new ();
  if (!json_parser_load_from_data (parser, data != NULL ? data : "", len, NULL) ||
      (root = json_parser_get_root (parser)) == NULL ||
      !JSON_NODE_HOLDS_OBJECT (root) ||
      (object = json_node_get_object (root)) == NULL ||
      (count = json_object_get_member (object, "rowCount")) == NULL ||
      json_node_get_value_type (count) != G_TYPE_INT64 ||
      json_node_get_int (count) < 0)
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_CORRUPT,
                   _("The statistics of table “%s.%s” are malformed: writing to the table "
                   "rewrites them"), schema, table);
      return -1;
    }
  return json_node_get_int (count);
}
