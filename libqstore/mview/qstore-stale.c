/* qstore-stale.c: what the next open will do with each materialized view
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <json-glib/json-glib.h>
#include <sqlite3.h>
#include <string.h>

#include "qstore-catalog.h"
#include "qstore-codec.h"
#include "qstore-error.h"
#include "qstore-stale.h"

/**
 * QStoreStaleReport:
 *
 * The stale-view bookkeeping of a store, read without opening it as a
 * database: the clean-shutdown marker (`\0meta\0clean_shutdown`, written
 * last at a clean close, holding the materialized views stale at that
 * moment), the durable stale set (`\0meta\0stale_mvs`, kept by atomic
 * providers), and for every materialized view of the catalog what the next
 * open will do with it and why.
 *
 * Reading changes nothing: the marker is not consumed. Open the provider
 * with %QSTORE_OPEN_READ_ONLY to be sure.
 *
 * The verdicts follow the open's trust rules. With an atomic provider and
 * a durable stale set, the set decides: a view it does not list is
 * adopted, even after a crash; a set that does not parse trusts nothing.
 * Otherwise the marker decides: no marker, or one that does not parse,
 * trusts nothing; a view the marker lists is refilled. A view is adopted
 * only when every materialized view it reads is adopted too.
 */

/**
 * QStoreStaleView:
 *
 * One materialized view of a [class@StaleReport]: its sources and what the
 * next open will do with it.
 */

#define CLEAN_SHUTDOWN_META "clean_shutdown"
#define STALE_SET_META      "stale_mvs"

/* QStoreStaleView */

struct _QStoreStaleView
{
  GObject             parent_instance;

  char               *name;       /* schema.view */
  char               *schema;
  char               *view_name;
  char               *body;       /* the SELECT, or NULL when the definition does not parse */
  GStrv               sources;    /* schema.table of every table and view it reads */
  QStoreStaleVerdict  verdict;
  QStoreStaleReason   reason_kind;
  char               *subject;
  char               *reason;
  gboolean            decided;
};

G_DEFINE_FINAL_TYPE (QStoreStaleView, qstore_stale_view, G_TYPE_OBJECT)

static void
qstore_stale_view_finalize (GObject *object)
{
  QStoreStaleView *self = QSTORE_STALE_VIEW (object);

  g_free (self->name);
  g_free (self->schema);
  g_free (self->view_name);
  g_free (self->body);
  g_strfreev (self->sources);
  g_free (self->subject);
  g_free (self->reason);

  G_OBJECT_CLASS (qstore_stale_view_parent_class)->finalize (object);
}

static void
qstore_stale_view_class_init (QStoreStaleViewClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = qstore_stale_view_finalize;
}

static void
qstore_stale_view_init (QStoreStaleView *self)
{
}

/**
 * qstore_stale_view_get_name:
 * @self: a #QStoreStaleView
 *
 * Gets the view's qualified name, as the marker and the durable set write
 * it.
 *
 * Returns: `schema.view`
 */
const char *
qstore_stale_view_get_name (QStoreStaleView *self)
{
  g_return_val_if_fail (QSTORE_IS_STALE_VIEW (self), NULL);
  return self->name;
}

/**
 * qstore_stale_view_get_schema:
 * @self: a #QStoreStaleView
 *
 * Gets the schema of the view.
 *
 * Returns: the view's schema, such as `main`
 */
const char *
qstore_stale_view_get_schema (QStoreStaleView *self)
{
  g_return_val_if_fail (QSTORE_IS_STALE_VIEW (self), NULL);
  return self->schema;
}

/**
 * qstore_stale_view_get_view_name:
 * @self: a #QStoreStaleView
 *
 * Gets the name of the view within its schema.
 *
 * Returns: the view's name without its schema
 */
const char *
qstore_stale_view_get_view_name (QStoreStaleView *self)
{
  g_return_val_if_fail (QSTORE_IS_STALE_VIEW (self), NULL);
  return self->view_name;
}

/**
 * qstore_stale_view_get_body:
 * @self: a #QStoreStaleView
 *
 * Gets the query that defines the view.
 *
 * Returns: (nullable): the SELECT that defines the view, or %NULL when
 *   its definition does not parse
 */
const char *
qstore_stale_view_get_body (QStoreStaleView *self)
{
  g_return_val_if_fail (QSTORE_IS_STALE_VIEW (self), NULL);
  return self->body;
}

/**
 * qstore_stale_view_get_sources:
 * @self: a #QStoreStaleView
 *
 * Gets what the view reads, as SQLite resolves its body against the
 * catalog: tables, views and materialized views, and what the plain views
 * among them read in turn.
 *
 * Returns: (transfer none) (array zero-terminated=1): `schema.name` of
 *   each source, sorted
 */
const char * const *
qstore_stale_view_get_sources (QStoreStaleView *self)
{
  g_return_val_if_fail (QSTORE_IS_STALE_VIEW (self), NULL);
  return (const char * const *) self->sources;
}

/**
 * qstore_stale_view_get_verdict:
 * @self: a #QStoreStaleView
 *
 * Gets what the next open will do with the view.
 *
 * Returns: what the next open will do with the view
 */
QStoreStaleVerdict
qstore_stale_view_get_verdict (QStoreStaleView *self)
{
  g_return_val_if_fail (QSTORE_IS_STALE_VIEW (self), QSTORE_STALE_VERDICT_ERROR);
  return self->verdict;
}

/**
 * qstore_stale_view_get_reason_kind:
 * @self: a #QStoreStaleView
 *
 * Gets why the view gets its verdict, for callers that word the reason
 * themselves (in another language, say).
 *
 * Returns: the reason
 */
QStoreStaleReason
qstore_stale_view_get_reason_kind (QStoreStaleView *self)
{
  g_return_val_if_fail (QSTORE_IS_STALE_VIEW (self), QSTORE_STALE_REASON_MARKER_ABSENT);
  return self->reason_kind;
}

/**
 * qstore_stale_view_get_reason_subject:
 * @self: a #QStoreStaleView
 *
 * Gets what the reason is about: the source view refilled, the missing
 * source, or the parser's message, depending on the reason.
 *
 * Returns: (nullable): the subject, or %NULL when the reason has none
 */
const char *
qstore_stale_view_get_reason_subject (QStoreStaleView *self)
{
  g_return_val_if_fail (QSTORE_IS_STALE_VIEW (self), NULL);
  return self->subject;
}

/**
 * qstore_stale_view_get_reason:
 * @self: a #QStoreStaleView
 *
 * Gets the reason for the verdict, worded for people.
 *
 * Returns: one English sentence saying what the next open will do with
 *   the view, and why
 */
const char *
qstore_stale_view_get_reason (QStoreStaleView *self)
{
  g_return_val_if_fail (QSTORE_IS_STALE_VIEW (self), NULL);
  return self->reason;
}

static void
view_decide (QStoreStaleView    *self,
             QStoreStaleVerdict  verdict,
             QStoreStaleReason   reason,
             const char         *subject)
{
  const char *s = subject ? subject : "";

  self->verdict = verdict;
  self->reason_kind = reason;
  self->subject = g_strdup (subject);
  self->decided = TRUE;

  switch (reason)
    {
    case QSTORE_STALE_REASON_TRUSTED_DURABLE_SET:
      self->reason = g_strdup ("Adopted: the durable stale set does not list it, and every "
                               "view it reads is adopted too.");
      break;
    case QSTORE_STALE_REASON_TRUSTED_MARKER:
      self->reason = g_strdup ("Adopted: the store was closed cleanly with the view up to "
                               "date, and every view it reads is adopted too.");
      break;
    case QSTORE_STALE_REASON_DURABLE_SET_MALFORMED:
      self->reason = g_strdup ("Refilled: the durable stale set does not parse, so no stored "
                               "view is trusted.");
      break;
    case QSTORE_STALE_REASON_IN_DURABLE_SET:
      self->reason = g_strdup ("Refilled: the durable stale set lists it as stale.");
      break;
    case QSTORE_STALE_REASON_MARKER_ABSENT:
      self->reason = g_strdup ("Refilled: there is no clean-shutdown marker, so the last "
                               "session may have ended without closing the store.");
      break;
    case QSTORE_STALE_REASON_MARKER_MALFORMED:
      self->reason = g_strdup ("Refilled: the clean-shutdown marker does not parse, so no "
                               "stored view is trusted.");
      break;
    case QSTORE_STALE_REASON_STALE_AT_CLOSE:
      self->reason = g_strdup ("Refilled: it was stale when the store was last closed.");
      break;
    case QSTORE_STALE_REASON_SOURCE_REFILLED:
      self->reason = g_strdup_printf ("Refilled: it reads %s, which is refilled.", s);
      break;
    case QSTORE_STALE_REASON_DEFINITION_ERROR:
      self->reason = g_strdup_printf ("Not rebuilt: its definition does not parse (%s).", s);
      break;
    case QSTORE_STALE_REASON_SOURCE_MISSING:
      self->reason = g_strdup_printf ("Not rebuilt: it reads %s, which is not in the catalog.", s);
      break;
    case QSTORE_STALE_REASON_SOURCE_FAILS:
      self->reason = g_strdup_printf ("Not rebuilt: it reads %s, which cannot be rebuilt "
                                      "first.", s);
      break;
    default:
      g_assert_not_reached ();
    }
}

/* QStoreStaleReport */

struct _QStoreStaleReport
{
  GObject           parent_instance;

  gboolean          marker_present;
  gboolean          marker_malformed;
  GStrv             stale_at_close;     /* NULL when absent or malformed */
  char             *marker_text;
  gboolean          set_present;
  gboolean          set_malformed;
  GStrv             durable_stale;      /* NULL when absent or malformed */
  char             *set_text;
  gboolean          atomic;
  QStoreStaleTrust  trust;
  GListStore       *views;
};

G_DEFINE_FINAL_TYPE (QStoreStaleReport, qstore_stale_report, G_TYPE_OBJECT)

static void
qstore_stale_report_finalize (GObject *object)
{
  QStoreStaleReport *self = QSTORE_STALE_REPORT (object);

  g_strfreev (self->stale_at_close);
  g_free (self->marker_text);
  g_strfreev (self->durable_stale);
  g_free (self->set_text);
  g_clear_object (&self->views);

  G_OBJECT_CLASS (qstore_stale_report_parent_class)->finalize (object);
}

static void
qstore_stale_report_class_init (QStoreStaleReportClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = qstore_stale_report_finalize;
}

static void
qstore_stale_report_init (QStoreStaleReport *self)
{
  self->views = g_list_store_new (QSTORE_TYPE_STALE_VIEW);
}

/* Reading the meta entries */

/* A payload is a JSON array of strings; anything else is malformed, and
 * malformed means "trust nothing", exactly as the open reads it. */
static GStrv
parse_name_list (GBytes *value)
{
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GStrvBuilder) names = g_strv_builder_new ();
  gsize len;
  const char *data = g_bytes_get_data (value, &len);
  JsonNode *root;
  JsonArray *array;

  if (!g_utf8_validate (data, len, NULL) ||
      !json_parser_load_from_data (parser, data, len, NULL))
    return NULL;
  root = json_parser_get_root (parser);
  if (root == NULL || !JSON_NODE_HOLDS_ARRAY (root))
    return NULL;

  array = json_node_get_array (root);
  for (guint i = 0; i < json_array_get_length (array); i++)
    {
      JsonNode *element = json_array_get_element (array, i);

      if (!JSON_NODE_HOLDS_VALUE (element) ||
          json_node_get_value_type (element) != G_TYPE_STRING)
        return NULL;
      g_strv_builder_add (names, json_node_get_string (element));
    }
  return g_strv_builder_end (names);
}

static gboolean
read_meta (QStoreSnapshot  *snapshot,
           QStoreKV        *catalog,
           const char      *name,
           GBytes         **value,
           GError         **error)
{
  g_autoptr(GBytes) key = qstore_catalog_key_for_meta (name);
  GError *local_error = NULL;
  gsize key_len;
  const guint8 *key_data = g_bytes_get_data (key, &key_len);

  if (snapshot != NULL)
    *value = qstore_snapshot_get (snapshot, catalog, key_data, key_len, &local_error);
  else
    *value = qstore_kv_get (catalog, key_data, key_len, &local_error);
  if (local_error != NULL)
    {
      g_propagate_error (error, local_error);
      return FALSE;
    }
  return TRUE;
}

static char *
bytes_to_text (GBytes *bytes)
{
  gsize len;
  const char *data = g_bytes_get_data (bytes, &len);

  return g_utf8_make_valid (data, len);
}

/* Materialized views: their sources */

typedef struct
{
  GHashTable *reads;   /* "schema.table", lower case */
} Reads;

static int
collect_reads (void       *user_data,
               int         action,
               const char *arg1,
               const char *arg2,
               const char *database,
               const char *trigger_or_view)
{
  Reads *reads = user_data;

  if (action == SQLITE_READ && arg1 != NULL && !g_str_has_prefix (arg1, "sqlite_"))
    {
      g_autofree char *name = g_strconcat (database ? database : "main", ".", arg1, NULL);

      g_hash_table_add (reads->reads, g_ascii_strdown (name, -1));
    }
  return SQLITE_OK;
}

static int
compare_strings (const void *a,
                 const void *b)
{
  return strcmp (*(const char * const *) a, *(const char * const *) b);
}

static char *
quote_identifier (const char *name)
{
  g_autoptr(GString) quoted = g_string_new ("\"");

  for (const char *p = name; *p != '\0'; p++)
    {
      if (*p == '"')
        g_string_append_c (quoted, '"');
      g_string_append_c (quoted, *p);
    }
  g_string_append_c (quoted, '"');
  return g_string_free (g_steal_pointer (&quoted), FALSE);
}

/* The name SQLite's "no such table: X" names, as schema.table. */
static char *
missing_table (const char *message)
{
  const char *p = strstr (message, "no such table: ");

  if (p == NULL)
    return NULL;
  p += strlen ("no such table: ");
  if (strchr (p, '.') != NULL)
    return g_ascii_strdown (p, -1);
  else
    {
      g_autofree char *name = g_strconcat ("main.", p, NULL);

      return g_ascii_strdown (name, -1);
    }
}

typedef struct
{
  QStoreStaleView *view;
  char            *missing;   /* set while the body waits for a source */
  char            *error;     /* why the body does not prepare */
  gboolean         created;
} Pending;

/* Mirrors the catalog on a private in-memory SQLite: tables from their
 * bundles, views, then each materialized view as an empty table shaped
 * like its body — in rounds, since a view over a view needs its source
 * first. Then SQLite's authorizer names what each body reads. */
static void
resolve_sources (GListModel *entries,
                 GPtrArray  *pendings)
{
  sqlite3 *db = NULL;
  gboolean progressed = TRUE;

  if (sqlite3_open_v2 (":memory:", &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_MEMORY, NULL) != SQLITE_OK)
    {
      for (guint i = 0; i < pendings->len; i++)
        {
          Pending *pending = g_ptr_array_index (pendings, i);

          pending->error = g_strdup (sqlite3_errmsg (db));
        }
      sqlite3_close (db);
      return;
    }

  for (guint i = 0; i < g_list_model_get_n_items (entries); i++)
    {
      g_autoptr(QStoreCatalogEntry) entry = g_list_model_get_item (entries, i);
      QStoreCatalogKeyKind kind = qstore_catalog_entry_get_kind (entry);
      const char *ddl = qstore_catalog_entry_get_ddl (entry);

      /* A table or view whose text does not run is simply absent here:
       * a view reading it then reports it missing. */
      if ((kind == QSTORE_CATALOG_KEY_TABLE || kind == QSTORE_CATALOG_KEY_VIEW) && ddl != NULL)
        sqlite3_exec (db, ddl, NULL, NULL, NULL);
    }

  while (progressed)
    {
      progressed = FALSE;
      for (guint i = 0; i < pendings->len; i++)
        {
          Pending *pending = g_ptr_array_index (pendings, i);
          g_autofree char *name = NULL;
          g_autofree char *sql = NULL;
          char *message = NULL;
          int rc;

          if (pending->created || pending->view->body == NULL)
            continue;

          name = quote_identifier (pending->view->view_name);
          sql = g_strdup_printf ("CREATE TABLE %s AS SELECT * FROM (%s) LIMIT 0",
                                 name, pending->view->body);
          rc = sqlite3_exec (db, sql, NULL, NULL, &message);
          if (rc == SQLITE_OK || (message && strstr (message, "already exists")))
            {
              pending->created = TRUE;
              g_clear_pointer (&pending->missing, g_free);
              g_clear_pointer (&pending->error, g_free);
              progressed = TRUE;
            }
          else
            {
              g_free (pending->missing);
              g_free (pending->error);
              pending->missing = message ? missing_table (message) : NULL;
              pending->error = g_strdup (message ? message : sqlite3_errstr (rc));
            }
          sqlite3_free (message);
        }
    }

  for (guint i = 0; i < pendings->len; i++)
    {
      Pending *pending = g_ptr_array_index (pendings, i);
      Reads reads = { g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL) };
      g_autofree char *sql = NULL;
      g_autofree GStrv sorted = NULL;
      sqlite3_stmt *stmt = NULL;

      if (!pending->created)
        {
          g_hash_table_unref (reads.reads);
          continue;
        }

      sql = g_strdup_printf ("SELECT * FROM (%s)", pending->view->body);
      sqlite3_set_authorizer (db, collect_reads, &reads);
      if (sqlite3_prepare_v2 (db, sql, -1, &stmt, NULL) != SQLITE_OK)
        pending->error = g_strdup (sqlite3_errmsg (db));
      sqlite3_finalize (stmt);
      sqlite3_set_authorizer (db, NULL, NULL);

      sorted = (GStrv) g_hash_table_get_keys_as_array (reads.reads, NULL);
      qsort (sorted, g_strv_length (sorted), sizeof (char *), compare_strings);
      g_strfreev (pending->view->sources);
      pending->view->sources = g_strdupv (sorted);
      g_hash_table_unref (reads.reads);
    }

  sqlite3_close (db);
}

static void
pending_free (Pending *pending)
{
  g_clear_object (&pending->view);
  g_free (pending->missing);
  g_free (pending->error);
  g_free (pending);
}

static gboolean
strv_contains_name (const char * const *names,
                    const char         *name)
{
  if (names == NULL)
    return FALSE;
  for (guint i = 0; names[i] != NULL; i++)
    if (g_ascii_strcasecmp (names[i], name) == 0)
      return TRUE;
  return FALSE;
}

/* The per-view trust basis of the open, before looking at sources. */
static gboolean
trusted (QStoreStaleReport *self,
         const char        *name,
         QStoreStaleReason *reason)
{
  switch (self->trust)
    {
    case QSTORE_STALE_TRUST_DURABLE_SET:
      if (strv_contains_name ((const char * const *) self->durable_stale, name))
        {
          *reason = QSTORE_STALE_REASON_IN_DURABLE_SET;
          return FALSE;
        }
      *reason = QSTORE_STALE_REASON_TRUSTED_DURABLE_SET;
      return TRUE;

    case QSTORE_STALE_TRUST_MARKER:
      if (strv_contains_name ((const char * const *) self->stale_at_close, name))
        {
          *reason = QSTORE_STALE_REASON_STALE_AT_CLOSE;
          return FALSE;
        }
      *reason = QSTORE_STALE_REASON_TRUSTED_MARKER;
      return TRUE;

    case QSTORE_STALE_TRUST_NONE:
    default:
      if (self->atomic && self->set_present)
        *reason = QSTORE_STALE_REASON_DURABLE_SET_MALFORMED;
      else if (self->marker_present)
        *reason = QSTORE_STALE_REASON_MARKER_MALFORMED;
      else
        *reason = QSTORE_STALE_REASON_MARKER_ABSENT;
      return FALSE;
    }
}

static Pending *
find_pending (GPtrArray  *pendings,
              const char *name)
{
  for (guint i = 0; i < pendings->len; i++)
    {
      Pending *pending = g_ptr_array_index (pendings, i);

      if (g_ascii_strcasecmp (pending->view->name, name) == 0)
        return pending;
    }
  return NULL;
}

/* Decides every view once the views it reads are decided, as the open's
 * rounds do: adopted only when trusted and every source view is adopted. */
static void
decide_views (QStoreStaleReport *self,
              GPtrArray         *pendings)
{
  gboolean progressed = TRUE;

  while (progressed)
    {
      progressed = FALSE;
      for (guint i = 0; i < pendings->len; i++)
        {
          Pending *pending = g_ptr_array_index (pendings, i);
          QStoreStaleView *view = pending->view;
          QStoreStaleReason reason;
          const char *refilled_source = NULL;
          gboolean waiting = FALSE;

          if (view->decided)
            continue;

          if (view->body == NULL)
            {
              view_decide (view, QSTORE_STALE_VERDICT_ERROR, QSTORE_STALE_REASON_DEFINITION_ERROR,
                           pending->error);
              progressed = TRUE;
              continue;
            }
          if (!pending->created)
            {
              Pending *upstream = pending->missing ? find_pending (pendings, pending->missing) : NULL;

              if (upstream != NULL && !upstream->view->decided)
                continue;
              if (upstream != NULL)
                view_decide (view, QSTORE_STALE_VERDICT_ERROR, QSTORE_STALE_REASON_SOURCE_FAILS,
                             upstream->view->name);
              else if (pending->missing != NULL)
                view_decide (view, QSTORE_STALE_VERDICT_ERROR, QSTORE_STALE_REASON_SOURCE_MISSING,
                             pending->missing);
              else
                view_decide (view, QSTORE_STALE_VERDICT_ERROR, QSTORE_STALE_REASON_DEFINITION_ERROR,
                             pending->error);
              progressed = TRUE;
              continue;
            }

          for (guint k = 0; view->sources[k] != NULL && !waiting; k++)
            {
              Pending *upstream = find_pending (pendings, view->sources[k]);

              if (upstream == NULL || upstream == pending)
                continue;
              if (!upstream->view->decided)
                waiting = TRUE;
              else if (upstream->view->verdict == QSTORE_STALE_VERDICT_ERROR)
                {
                  view_decide (view, QSTORE_STALE_VERDICT_ERROR, QSTORE_STALE_REASON_SOURCE_FAILS,
                               upstream->view->name);
                  break;
                }
              else if (upstream->view->verdict == QSTORE_STALE_VERDICT_REFILL &&
                       refilled_source == NULL)
                refilled_source = upstream->view->name;
            }
          if (view->decided)
            {
              progressed = TRUE;
              continue;
            }
          if (waiting)
            continue;

          if (!trusted (self, view->name, &reason))
            view_decide (view, QSTORE_STALE_VERDICT_REFILL, reason, NULL);
          else if (refilled_source != NULL)
            view_decide (view, QSTORE_STALE_VERDICT_REFILL, QSTORE_STALE_REASON_SOURCE_REFILLED,
                         refilled_source);
          else
            view_decide (view, QSTORE_STALE_VERDICT_ADOPT, reason, NULL);
          progressed = TRUE;
        }
    }

  /* What is left reads itself, round about. */
  for (guint i = 0; i < pendings->len; i++)
    {
      Pending *pending = g_ptr_array_index (pendings, i);

      if (!pending->view->decided)
        {
          const char *subject = pending->view->name;

          for (guint k = 0; pending->view->sources[k] != NULL; k++)
            {
              Pending *upstream = find_pending (pendings, pending->view->sources[k]);

              if (upstream != NULL && !upstream->view->decided)
                {
                  subject = upstream->view->name;
                  break;
                }
            }
          view_decide (pending->view, QSTORE_STALE_VERDICT_ERROR,
                       QSTORE_STALE_REASON_SOURCE_FAILS, subject);
        }
    }
}

/**
 * qstore_stale_report_new:
 * @provider: an open provider, preferably opened with
 *   %QSTORE_OPEN_READ_ONLY
 * @error: return location for a #GError
 *
 * Reads the clean-shutdown marker, the durable stale set and the
 * materialized views of @provider's catalog, and works out what the next
 * open will do with each view. Nothing is written.
 *
 * Returns: (transfer full): the report, or %NULL when the catalog cannot
 *   be read
 */
QStoreStaleReport *
qstore_stale_report_new (QStoreProvider  *provider,
                         GError         **error)
{
  g_autoptr(QStoreStaleReport) self = NULL;
  g_autoptr(QStoreSnapshot) snapshot = NULL;
  g_autoptr(QStoreKV) catalog = NULL;
  g_autoptr(GBytes) marker = NULL;
  g_autoptr(GBytes) set = NULL;
  g_autoptr(GListModel) entries = NULL;
  g_autoptr(GPtrArray) pendings = NULL;

  g_return_val_if_fail (QSTORE_IS_PROVIDER (provider), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  self = g_object_new (QSTORE_TYPE_STALE_REPORT, NULL);
  self->atomic = (qstore_provider_get_capabilities (provider) & QSTORE_CAPABILITY_ATOMIC_BATCH) != 0;

  if (!(catalog = qstore_provider_get_catalog_store (provider, error)))
    return NULL;
  /* Both entries from one committed state, when the provider can. */
  if ((qstore_provider_get_capabilities (provider) & QSTORE_CAPABILITY_SNAPSHOTS) &&
      !(snapshot = qstore_provider_begin_snapshot (provider, error)))
    return NULL;
  if (!read_meta (snapshot, catalog, CLEAN_SHUTDOWN_META, &marker, error) ||
      !read_meta (snapshot, catalog, STALE_SET_META, &set, error))
    return NULL;
  g_clear_object (&snapshot);

  if (marker != NULL)
    {
      self->marker_present = TRUE;
      self->marker_text = bytes_to_text (marker);
      self->stale_at_close = parse_name_list (marker);
      self->marker_malformed = self->stale_at_close == NULL;
    }
  if (set != NULL)
    {
      self->set_present = TRUE;
      self->set_text = bytes_to_text (set);
      self->durable_stale = parse_name_list (set);
      self->set_malformed = self->durable_stale == NULL;
    }

  if (self->atomic && self->set_present)
    self->trust = self->set_malformed ? QSTORE_STALE_TRUST_NONE : QSTORE_STALE_TRUST_DURABLE_SET;
  else if (self->marker_present && !self->marker_malformed)
    self->trust = QSTORE_STALE_TRUST_MARKER;
  else
    self->trust = QSTORE_STALE_TRUST_NONE;

  if (!(entries = qstore_catalog_list_entries (provider, error)))
    return NULL;

  pendings = g_ptr_array_new_with_free_func ((GDestroyNotify) pending_free);
  for (guint i = 0; i < g_list_model_get_n_items (entries); i++)
    {
      g_autoptr(QStoreCatalogEntry) entry = g_list_model_get_item (entries, i);
      Pending *pending;
      QStoreStaleView *view;

      if (qstore_catalog_entry_get_kind (entry) != QSTORE_CATALOG_KEY_MATERIALIZED_VIEW)
        continue;

      view = g_object_new (QSTORE_TYPE_STALE_VIEW, NULL);
      view->schema = g_strdup (qstore_catalog_entry_get_schema (entry));
      view->view_name = g_strdup (qstore_catalog_entry_get_name (entry));
      view->name = g_strconcat (view->schema, ".", view->view_name, NULL);
      view->body = g_strdup (qstore_catalog_entry_get_body (entry));
      view->sources = g_new0 (char *, 1);

      pending = g_new0 (Pending, 1);
      pending->view = view;
      if (view->body == NULL)
        pending->error = g_strdup (qstore_catalog_entry_get_error (entry));
      g_ptr_array_add (pendings, pending);
      g_list_store_append (self->views, view);
    }

  if (pendings->len > 0)
    {
      resolve_sources (entries, pendings);
      decide_views (self, pendings);
    }

  return g_steal_pointer (&self);
}

/**
 * qstore_stale_report_get_marker_present:
 * @self: a #QStoreStaleReport
 *
 * Gets whether the clean-shutdown marker is present.
 *
 * Returns: whether the store holds a clean-shutdown marker: the last
 *   session closed the store cleanly and no session has opened it for
 *   writing since
 */
gboolean
qstore_stale_report_get_marker_present (QStoreStaleReport *self)
{
  g_return_val_if_fail (QSTORE_IS_STALE_REPORT (self), FALSE);
  return self->marker_present;
}

/**
 * qstore_stale_report_get_marker_malformed:
 * @self: a #QStoreStaleReport
 *
 * Gets whether the clean-shutdown marker does not parse.
 *
 * Returns: whether the marker is present but not a JSON array of names
 */
gboolean
qstore_stale_report_get_marker_malformed (QStoreStaleReport *self)
{
  g_return_val_if_fail (QSTORE_IS_STALE_REPORT (self), FALSE);
  return self->marker_malformed;
}

/**
 * qstore_stale_report_get_stale_at_close:
 * @self: a #QStoreStaleReport
 *
 * Gets the views the clean-shutdown marker lists.
 *
 * Returns: (transfer none) (array zero-terminated=1) (nullable): the views
 *   the marker lists as stale at close, or %NULL when the marker is absent
 *   or malformed
 */
const char * const *
qstore_stale_report_get_stale_at_close (QStoreStaleReport *self)
{
  g_return_val_if_fail (QSTORE_IS_STALE_REPORT (self), NULL);
  return (const char * const *) self->stale_at_close;
}

/**
 * qstore_stale_report_get_marker_text:
 * @self: a #QStoreStaleReport
 *
 * Gets the clean-shutdown marker as stored.
 *
 * Returns: (nullable): the marker's payload as stored (made valid UTF-8),
 *   or %NULL when absent
 */
const char *
qstore_stale_report_get_marker_text (QStoreStaleReport *self)
{
  g_return_val_if_fail (QSTORE_IS_STALE_REPORT (self), NULL);
  return self->marker_text;
}

/**
 * qstore_stale_report_get_durable_set_present:
 * @self: a #QStoreStaleReport
 *
 * Gets whether the durable stale set is present.
 *
 * Returns: whether the store holds a durable stale set
 */
gboolean
qstore_stale_report_get_durable_set_present (QStoreStaleReport *self)
{
  g_return_val_if_fail (QSTORE_IS_STALE_REPORT (self), FALSE);
  return self->set_present;
}

/**
 * qstore_stale_report_get_durable_set_malformed:
 * @self: a #QStoreStaleReport
 *
 * Gets whether the durable stale set does not parse.
 *
 * Returns: whether the durable set is present but not a JSON array of
 *   names
 */
gboolean
qstore_stale_report_get_durable_set_malformed (QStoreStaleReport *self)
{
  g_return_val_if_fail (QSTORE_IS_STALE_REPORT (self), FALSE);
  return self->set_malformed;
}

/**
 * qstore_stale_report_get_durable_stale:
 * @self: a #QStoreStaleReport
 *
 * Gets the views the durable stale set lists.
 *
 * Returns: (transfer none) (array zero-terminated=1) (nullable): the views
 *   the durable set lists, or %NULL when it is absent or malformed
 */
const char * const *
qstore_stale_report_get_durable_stale (QStoreStaleReport *self)
{
  g_return_val_if_fail (QSTORE_IS_STALE_REPORT (self), NULL);
  return (const char * const *) self->durable_stale;
}

/**
 * qstore_stale_report_get_durable_set_text:
 * @self: a #QStoreStaleReport
 *
 * Gets the durable stale set as stored.
 *
 * Returns: (nullable): the durable set's payload as stored (made valid
 *   UTF-8), or %NULL when absent
 */
const char *
qstore_stale_report_get_durable_set_text (QStoreStaleReport *self)
{
  g_return_val_if_fail (QSTORE_IS_STALE_REPORT (self), NULL);
  return self->set_text;
}

/**
 * qstore_stale_report_get_atomic:
 * @self: a #QStoreStaleReport
 *
 * Gets whether the provider has atomic cross-store commits.
 *
 * Returns: whether the provider commits across stores atomically, which
 *   makes the durable stale set the trust basis when it is present
 */
gboolean
qstore_stale_report_get_atomic (QStoreStaleReport *self)
{
  g_return_val_if_fail (QSTORE_IS_STALE_REPORT (self), FALSE);
  return self->atomic;
}

/**
 * qstore_stale_report_get_trust:
 * @self: a #QStoreStaleReport
 *
 * Gets the trust basis of the next open.
 *
 * Returns: what the next open bases its trust on
 */
QStoreStaleTrust
qstore_stale_report_get_trust (QStoreStaleReport *self)
{
  g_return_val_if_fail (QSTORE_IS_STALE_REPORT (self), QSTORE_STALE_TRUST_NONE);
  return self->trust;
}

/**
 * qstore_stale_report_get_views:
 * @self: a #QStoreStaleReport
 *
 * Gets the materialized views of the catalog with their verdicts.
 *
 * Returns: (transfer none): a list of #QStoreStaleView, one per
 *   materialized view of the catalog, in catalog order
 */
GListModel *
qstore_stale_report_get_views (QStoreStaleReport *self)
{
  g_return_val_if_fail (QSTORE_IS_STALE_REPORT (self), NULL);
  return G_LIST_MODEL (self->views);
}

/**
 * qstore_stale_report_lookup_view:
 * @self: a #QStoreStaleReport
 * @name: a view's `schema.view`
 *
 * Finds a materialized view of the report by name.
 *
 * Returns: (transfer none) (nullable): the view, or %NULL when the catalog
 *   has no materialized view of that name
 */
QStoreStaleView *
qstore_stale_report_lookup_view (QStoreStaleReport *self,
                                 const char        *name)
{
  g_return_val_if_fail (QSTORE_IS_STALE_REPORT (self), NULL);
  g_return_val_if_fail (name != NULL, NULL);

  for (guint i = 0; i < g_list_model_get_n_items (G_LIST_MODEL (self->views)); i++)
    {
      g_autoptr(QStoreStaleView) view = g_list_model_get_item (G_LIST_MODEL (self->views), i);

      if (g_ascii_strcasecmp (view->name, name) == 0)
        return view;
    }
  return NULL;
}
