/* qstore-inspector-event.c: one event a server sent
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <glib/gi18n.h>
#include <json-glib/json-glib.h>
#include <string.h>

#include "qstore-inspector-event.h"
#include "qstore-inspector-row.h"

/* What a server told, as the Events page lists it. A commit is a change
 * set of the page's QStoreChangeFeed, kept as it is (its rows stay in
 * their compact stored form until shown or exported); a gap is the
 * feed's. The live queries' events come from their own signal, whose
 * rows stay JSON as the server sent them: they are shown and exported,
 * never read as values. */

struct _QStoreInspectorEvent
{
  GObject                   parent_instance;

  QStoreInspectorEventKind  kind;
  gint64                    time;
  guint64                   tx;
  guint64                   query;
  gboolean                  has_tx;
  gboolean                  has_query;
  guint                     n_rows;
  GStrv                     tables;
  char                     *reason;
  gint64                    down_for_ms;
  JsonArray                *rows;
  JsonArray                *removed;
  QStoreChangeSet          *change_set;  /* a commit's rows */
};

G_DEFINE_FINAL_TYPE (QStoreInspectorEvent, qstore_inspector_event, G_TYPE_OBJECT)

static const struct
{
  const char *signal;
  const char *name;
  const char *label;
} kinds[] = {
  [QSTORE_INSPECTOR_EVENT_COMMITTED] = { "Committed", "committed", N_("Commit") },
  [QSTORE_INSPECTOR_EVENT_HYDRATED] = { "Hydrated", "hydrated", N_("Hydrated") },
  [QSTORE_INSPECTOR_EVENT_CHANGED] = { "Changed", "changed", N_("Changed") },
  [QSTORE_INSPECTOR_EVENT_PROGRESSED] = { "Progressed", "progressed", N_("Progressed") },
  [QSTORE_INSPECTOR_EVENT_FAULTED] = { "Faulted", "faulted", N_("Faulted") },
  [QSTORE_INSPECTOR_EVENT_GAP] = { "Gap", "gap", N_("Gap") },
};

static void
qstore_inspector_event_finalize (GObject *object)
{
  QStoreInspectorEvent *self = QSTORE_INSPECTOR_EVENT (object);

  g_strfreev (self->tables);
  g_free (self->reason);
  g_clear_pointer (&self->rows, json_array_unref);
  g_clear_pointer (&self->removed, json_array_unref);
  g_clear_object (&self->change_set);

  G_OBJECT_CLASS (qstore_inspector_event_parent_class)->finalize (object);
}

static void
qstore_inspector_event_class_init (QStoreInspectorEventClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = qstore_inspector_event_finalize;
}

static void
qstore_inspector_event_init (QStoreInspectorEvent *self)
{
}

/* Appends the rows of the JSON array @json to @rows; FALSE if it is not one. */
static gboolean
append_json_rows (JsonArray  *rows,
                  const char *json)
{
  g_autoptr(JsonParser) parser = json_parser_new ();
  JsonNode *root;
  JsonArray *array;

  if (!json_parser_load_from_data (parser, json, -1, NULL))
    return FALSE;
  root = json_parser_get_root (parser);
  if (root == NULL || !JSON_NODE_HOLDS_ARRAY (root))
    return FALSE;
  array = json_node_get_array (root);
  for (guint i = 0; i < json_array_get_length (array); i++)
    json_array_add_element (rows, json_node_copy (json_array_get_element (array, i)));
  return TRUE;
}

static gboolean
has_type (GVariant   *parameters,
          const char *type)
{
  return g_variant_is_of_type (parameters, G_VARIANT_TYPE (type));
}

/**
 * qstore_inspector_event_new_from_signal:
 * @signal_name: a signal of org.qstore.Server1 about live queries
 *   (commits and gaps come from the page's change feed)
 * @parameters: its parameters
 * @received: when it came, in microseconds since 1970 (Committed tells
 *   its own time)
 *
 * Returns: (transfer full) (nullable): the event, or %NULL for a signal
 *   this does not know or whose parameters are not as documented
 */
QStoreInspectorEvent *
qstore_inspector_event_new_from_signal (const char *signal_name,
                                        GVariant   *parameters,
                                        gint64      received)
{
  g_autoptr(QStoreInspectorEvent) self = g_object_new (QSTORE_INSPECTOR_TYPE_EVENT, NULL);
  const char *json = NULL, *added = NULL;
  guint first, total;
  guint32 worker;

  self->time = received;
  self->rows = json_array_new ();
  if (g_str_equal (signal_name, "Hydrated") && has_type (parameters, "(ttuus)"))
    {
      self->kind = QSTORE_INSPECTOR_EVENT_HYDRATED;
      g_variant_get (parameters, "(ttuu&s)", &self->query, &self->tx, &first, &total, &json);
      self->has_tx = self->has_query = TRUE;
      if (!append_json_rows (self->rows, json))
        return NULL;
      self->n_rows = json_array_get_length (self->rows);
    }
  else if (g_str_equal (signal_name, "Changed") && has_type (parameters, "(ttss)"))
    {
      self->kind = QSTORE_INSPECTOR_EVENT_CHANGED;
      g_variant_get (parameters, "(tt&s&s)", &self->query, &self->tx, &json, &added);
      self->has_tx = self->has_query = TRUE;
      self->removed = json_array_new ();
      if (!append_json_rows (self->removed, json) || !append_json_rows (self->rows, added))
        return NULL;
      self->n_rows = json_array_get_length (self->rows) + json_array_get_length (self->removed);
    }
  else if (g_str_equal (signal_name, "Progressed") && has_type (parameters, "(ut)"))
    {
      self->kind = QSTORE_INSPECTOR_EVENT_PROGRESSED;
      g_variant_get (parameters, "(ut)", &worker, &self->tx);
      self->has_tx = TRUE;
    }
  else if (g_str_equal (signal_name, "Faulted") && has_type (parameters, "(ts)"))
    {
      self->kind = QSTORE_INSPECTOR_EVENT_FAULTED;
      g_variant_get (parameters, "(ts)", &self->query, &self->reason);
      self->has_query = TRUE;
    }
  else
    return NULL;

  return g_steal_pointer (&self);
}

/**
 * qstore_inspector_event_new_committed:
 * @change_set: a transaction the page's change feed told
 *
 * Returns: (transfer full): the commit's event, at its commit time
 */
QStoreInspectorEvent *
qstore_inspector_event_new_committed (QStoreChangeSet *change_set)
{
  QStoreInspectorEvent *self = g_object_new (QSTORE_INSPECTOR_TYPE_EVENT, NULL);
  g_autoptr(GHashTable) seen = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_autoptr(GStrvBuilder) tables = g_strv_builder_new ();

  self->kind = QSTORE_INSPECTOR_EVENT_COMMITTED;
  self->change_set = g_object_ref (change_set);
  self->tx = qstore_change_set_get_tx_id (change_set);
  self->has_tx = TRUE;
  self->time = qstore_change_set_get_time (change_set);
  self->n_rows = qstore_change_set_get_n_changes (change_set);
  for (guint i = 0; i < self->n_rows; i++)
    {
      char *table = g_strdup_printf ("%s.%s", qstore_change_set_get_schema (change_set, i),
                                     qstore_change_set_get_table (change_set, i));

      if (g_hash_table_add (seen, table))
        g_strv_builder_add (tables, table);
    }
  self->tables = g_strv_builder_end (tables);
  return self;
}

/**
 * qstore_inspector_event_new_gap:
 * @reason: why events were missed, in the user's language
 * @down_for_ms: how long the server was away, -1 when not known
 * @received: when it was noticed, in microseconds since 1970
 *
 * A gap its change feed told: the server went away and came back, said
 * it could not send some signals, or skipped a transaction.
 *
 * Returns: (transfer full): the event
 */
QStoreInspectorEvent *
qstore_inspector_event_new_gap (const char *reason,
                                gint64      down_for_ms,
                                gint64      received)
{
  QStoreInspectorEvent *self = g_object_new (QSTORE_INSPECTOR_TYPE_EVENT, NULL);

  self->kind = QSTORE_INSPECTOR_EVENT_GAP;
  self->reason = g_strdup (reason);
  self->down_for_ms = down_for_ms;
  self->time = received;
  return self;
}

QStoreInspectorEventKind
qstore_inspector_event_get_kind (QStoreInspectorEvent *self)
{
  g_return_val_if_fail (QSTORE_INSPECTOR_IS_EVENT (self), 0);
  return self->kind;
}

/* Returns: the kind as the exported lines name it ("committed", "gap", …) */
const char *
qstore_inspector_event_kind_name (QStoreInspectorEventKind kind)
{
  g_return_val_if_fail (kind < QSTORE_INSPECTOR_N_EVENT_KINDS, NULL);
  return kinds[kind].name;
}

/* Returns: the kind in the user's language */
const char *
qstore_inspector_event_kind_label (QStoreInspectorEventKind kind)
{
  g_return_val_if_fail (kind < QSTORE_INSPECTOR_N_EVENT_KINDS, NULL);
  return _(kinds[kind].label);
}

/* Microseconds since 1970: the commit's for a commit, else when it came. */
gint64
qstore_inspector_event_get_time (QStoreInspectorEvent *self)
{
  g_return_val_if_fail (QSTORE_INSPECTOR_IS_EVENT (self), 0);
  return self->time;
}

/* Returns: (transfer full): the local time of day, to the millisecond */
char *
qstore_inspector_event_format_time (QStoreInspectorEvent *self)
{
  g_autoptr(GDateTime) utc = NULL;
  g_autoptr(GDateTime) local = NULL;
  g_autofree char *seconds = NULL;

  g_return_val_if_fail (QSTORE_INSPECTOR_IS_EVENT (self), NULL);

  utc = g_date_time_new_from_unix_utc (self->time / G_USEC_PER_SEC);
  if (utc == NULL)
    return g_strdup ("");
  local = g_date_time_to_local (utc);
  seconds = g_date_time_format (local, "%H:%M:%S");
  return g_strdup_printf ("%s.%03d", seconds, (int) ((self->time % G_USEC_PER_SEC) / 1000));
}

guint64
qstore_inspector_event_get_tx (QStoreInspectorEvent *self)
{
  g_return_val_if_fail (QSTORE_INSPECTOR_IS_EVENT (self), 0);
  return self->has_tx ? self->tx : 0;
}

gboolean
qstore_inspector_event_has_query (QStoreInspectorEvent *self)
{
  g_return_val_if_fail (QSTORE_INSPECTOR_IS_EVENT (self), FALSE);
  return self->has_query;
}

guint64
qstore_inspector_event_get_query (QStoreInspectorEvent *self)
{
  g_return_val_if_fail (QSTORE_INSPECTOR_IS_EVENT (self), 0);
  return self->query;
}

/* How many rows it told of: a commit's changed rows, the rows of a
 * live query's slice. */
guint
qstore_inspector_event_get_n_rows (QStoreInspectorEvent *self)
{
  g_return_val_if_fail (QSTORE_INSPECTOR_IS_EVENT (self), 0);
  return self->n_rows;
}

/* Returns: (transfer none) (nullable): the tables a commit changed */
const char * const *
qstore_inspector_event_get_tables (QStoreInspectorEvent *self)
{
  g_return_val_if_fail (QSTORE_INSPECTOR_IS_EVENT (self), NULL);
  return (const char * const *) self->tables;
}

/* Whether a table whose name holds @needle (case aside) changed. */
gboolean
qstore_inspector_event_touches_table (QStoreInspectorEvent *self,
                                      const char           *needle)
{
  g_autofree char *folded = NULL;

  g_return_val_if_fail (QSTORE_INSPECTOR_IS_EVENT (self), FALSE);

  if (needle == NULL || *needle == '\0')
    return TRUE;
  folded = g_utf8_casefold (needle, -1);
  for (guint i = 0; self->tables != NULL && self->tables[i] != NULL; i++)
    {
      g_autofree char *table = g_utf8_casefold (self->tables[i], -1);

      if (strstr (table, folded) != NULL)
        return TRUE;
    }
  return FALSE;
}

/* Returns: (transfer full): one line on what happened, for the list */
char *
qstore_inspector_event_describe (QStoreInspectorEvent *self)
{
  g_return_val_if_fail (QSTORE_INSPECTOR_IS_EVENT (self), NULL);

  switch (self->kind)
    {
    case QSTORE_INSPECTOR_EVENT_COMMITTED:
      return self->tables != NULL ? g_strjoinv (", ", self->tables) : g_strdup ("");
    case QSTORE_INSPECTOR_EVENT_GAP:
      if (self->down_for_ms >= 0)
        /* Translators: a gap in the events; %s is why, %.1f how many
         * seconds the server was away */
        return g_strdup_printf (_("%s (away for %.1f s)"), self->reason, self->down_for_ms / 1000.0);
      return g_strdup (self->reason);
    case QSTORE_INSPECTOR_EVENT_FAULTED:
      return g_strdup (self->reason);
    case QSTORE_INSPECTOR_EVENT_HYDRATED:
    case QSTORE_INSPECTOR_EVENT_CHANGED:
    case QSTORE_INSPECTOR_EVENT_PROGRESSED:
    case QSTORE_INSPECTOR_N_EVENT_KINDS:
    default:
      return g_strdup ("");
    }
}

static void
append_row (GString  *out,
            JsonNode *row)
{
  g_autofree char *text = row != NULL && !JSON_NODE_HOLDS_NULL (row) ? json_to_string (row, FALSE) : NULL;

  g_string_append (out, text != NULL ? text : "—");
}

static void
append_rows (GString    *out,
             const char *prefix,
             JsonArray  *rows)
{
  for (guint i = 0; rows != NULL && i < json_array_get_length (rows); i++)
    {
      g_string_append (out, prefix);
      append_row (out, json_array_get_element (rows, i));
      g_string_append_c (out, '\n');
    }
}

static JsonNode *
row_to_json (GVariant *row)
{
  JsonArray *values;

  if (row == NULL)
    return json_node_init_null (json_node_alloc ());
  values = json_array_sized_new (g_variant_n_children (row));
  for (gsize i = 0; i < g_variant_n_children (row); i++)
    {
      g_autoptr(GVariant) boxed = g_variant_get_child_value (row, i);
      g_autoptr(GVariant) value = g_variant_get_variant (boxed);

      json_array_add_element (values, qstore_inspector_value_to_json (value));
    }
  return json_node_init_array (json_node_alloc (), values);
}

/* Returns: (transfer full): its rows as JSON: a commit's as the server
 * sends them, {"table", "op", "old", "new"} objects, made from its
 * change set when asked (a list of thousands keeps no JSON) */
static JsonArray *
get_rows (QStoreInspectorEvent *self)
{
  JsonArray *rows;

  if (self->change_set == NULL)
    return self->rows != NULL ? json_array_ref (self->rows) : json_array_new ();
  rows = json_array_sized_new (self->n_rows);
  for (guint i = 0; i < self->n_rows; i++)
    {
      g_autoptr(GVariant) old_row = qstore_change_set_get_old_row (self->change_set, i);
      g_autoptr(GVariant) new_row = qstore_change_set_get_new_row (self->change_set, i);
      g_autofree char *table = g_strdup_printf ("%s.%s", qstore_change_set_get_schema (self->change_set, i),
                                                qstore_change_set_get_table (self->change_set, i));
      JsonObject *change = json_object_new ();

      json_object_set_string_member (change, "table", table);
      json_object_set_string_member (change, "op",
                                     qstore_change_op_get_name (qstore_change_set_get_op (self->change_set, i)));
      json_object_set_member (change, "old", row_to_json (old_row));
      json_object_set_member (change, "new", row_to_json (new_row));
      json_array_add_object_element (rows, change);
    }
  return rows;
}

/* Returns: (transfer full): its rows, one change a line, as a person
 * reads them: “insert into main.items: [1, "pear"]” */
char *
qstore_inspector_event_describe_rows (QStoreInspectorEvent *self)
{
  GString *out = g_string_new (NULL);
  g_autoptr(JsonArray) rows = NULL;

  g_return_val_if_fail (QSTORE_INSPECTOR_IS_EVENT (self), NULL);

  rows = get_rows (self);
  if (self->kind == QSTORE_INSPECTOR_EVENT_COMMITTED)
    for (guint i = 0; i < json_array_get_length (rows); i++)
      {
        JsonNode *node = json_array_get_element (rows, i);
        JsonObject *change = JSON_NODE_HOLDS_OBJECT (node) ? json_node_get_object (node) : NULL;
        const char *table, *op;

        if (change == NULL)
          continue;
        table = json_object_get_string_member_with_default (change, "table", "?");
        op = json_object_get_string_member_with_default (change, "op", "?");
        if (g_str_equal (op, "insert"))
          /* Translators: one inserted row; %s is its table */
          g_string_append_printf (out, _("insert into %s: "), table);
        else if (g_str_equal (op, "delete"))
          /* Translators: one deleted row; %s is its table */
          g_string_append_printf (out, _("delete from %s: "), table);
        else
          /* Translators: one changed row; the first %s is what was done
           * (“update”), the second its table */
          g_string_append_printf (out, _("%s %s: "), g_str_equal (op, "update") ? _("update") : op, table);
        if (json_object_has_member (change, "old") && !json_object_get_null_member (change, "old"))
          {
            append_row (out, json_object_get_member (change, "old"));
            if (json_object_has_member (change, "new") && !json_object_get_null_member (change, "new"))
              g_string_append (out, " → ");
          }
        if (json_object_has_member (change, "new") && !json_object_get_null_member (change, "new"))
          append_row (out, json_object_get_member (change, "new"));
        g_string_append_c (out, '\n');
      }
  else
    {
      append_rows (out, "− ", self->removed);
      append_rows (out, self->kind == QSTORE_INSPECTOR_EVENT_CHANGED ? "+ " : "", rows);
    }

  if (out->len > 0 && out->str[out->len - 1] == '\n')
    g_string_truncate (out, out->len - 1);
  return g_string_free (out, FALSE);
}

/* Returns: (transfer full): the event as one line of JSON, for Export */
char *
qstore_inspector_event_to_json (QStoreInspectorEvent *self)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autoptr(JsonNode) root = NULL;
  g_autoptr(JsonGenerator) generator = json_generator_new ();
  g_autoptr(JsonArray) rows = NULL;

  g_return_val_if_fail (QSTORE_INSPECTOR_IS_EVENT (self), NULL);

  rows = get_rows (self);
  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "kind");
  json_builder_add_string_value (builder, kinds[self->kind].name);
  json_builder_set_member_name (builder, "time_us");
  json_builder_add_int_value (builder, self->time);
  if (self->has_tx)
    {
      json_builder_set_member_name (builder, "tx");
      json_builder_add_int_value (builder, (gint64) self->tx);
    }
  if (self->has_query)
    {
      json_builder_set_member_name (builder, "query");
      json_builder_add_int_value (builder, (gint64) self->query);
    }
  if (self->tables != NULL)
    {
      json_builder_set_member_name (builder, "tables");
      json_builder_begin_array (builder);
      for (guint i = 0; self->tables[i] != NULL; i++)
        json_builder_add_string_value (builder, self->tables[i]);
      json_builder_end_array (builder);
    }
  if (self->reason != NULL)
    {
      json_builder_set_member_name (builder, "reason");
      json_builder_add_string_value (builder, self->reason);
    }
  if (self->kind == QSTORE_INSPECTOR_EVENT_GAP)
    {
      json_builder_set_member_name (builder, "down_for_ms");
      json_builder_add_int_value (builder, self->down_for_ms);
    }
  json_builder_set_member_name (builder, "row_count");
  json_builder_add_int_value (builder, self->n_rows);
  if (self->removed != NULL)
    {
      json_builder_set_member_name (builder, "removed");
      json_builder_add_value (builder, json_node_init_array (json_node_alloc (), self->removed));
    }
  json_builder_set_member_name (builder, self->kind == QSTORE_INSPECTOR_EVENT_CHANGED ? "added" : "rows");
  json_builder_add_value (builder, json_node_init_array (json_node_alloc (), rows));
  json_builder_end_object (builder);

  root = json_builder_get_root (builder);
  json_generator_set_root (generator, root);
  return json_generator_to_data (generator, NULL);
}
