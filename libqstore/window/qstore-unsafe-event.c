/* qstore-unsafe-event.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include "qstore-error.h"
#include "qstore-i18n-private.h"
#include "qstore-suid.h"
#include "qstore-unsafe-event-private.h"

/**
 * QStoreUnsafeEvent:
 *
 * One event of a stream, as an [class@UnsafeWindow] applies it: its
 * identity (an event id and the sortable unique id it was given), and the
 * outcome its materializer already computed: rows to upsert (whole JSON
 * values), to patch (RFC 7396 merge patches), to delete or to hide behind
 * a tombstone, and index entries. The window never folds events itself:
 * it decides, by SUID, whether this plan may still be written.
 *
 * The setters check nothing; [method@UnsafeWindow.apply] checks every
 * field and refuses a malformed event with %QSTORE_ERROR_INVALID_ARGUMENT
 * naming the field.
 */

struct _QStoreUnsafeEvent
{
  GObject    parent_instance;

  char      *event_id;
  char      *suid;
  gint64     generation;
  char      *safe_head;
  gboolean   has_expected_row_version;
  gint64     expected_row_version;
  gint64     updated_at;
  gboolean   record_arrival;
  char      *target_suid;
  GPtrArray *mutations;      /* of QStoreUnsafeMutation */
  GPtrArray *index_entries;  /* of QStoreUnsafeIndexEntry */
};

G_DEFINE_FINAL_TYPE (QStoreUnsafeEvent, qstore_unsafe_event, G_TYPE_OBJECT)

static void
mutation_free (QStoreUnsafeMutation *mutation)
{
  g_free (mutation->row_key);
  g_free (mutation->json);
  g_clear_pointer (&mutation->node, json_node_unref);
  g_free (mutation->canonical);
  g_free (mutation->source_suid);
  g_free (mutation);
}

static void
index_entry_free (QStoreUnsafeIndexEntry *entry)
{
  g_free (entry->index_id);
  g_free (entry->row_key);
  g_clear_pointer (&entry->value, g_variant_unref);
  g_free (entry);
}

static void
qstore_unsafe_event_finalize (GObject *object)
{
  QStoreUnsafeEvent *self = QSTORE_UNSAFE_EVENT (object);

  g_free (self->event_id);
  g_free (self->suid);
  g_free (self->safe_head);
  g_free (self->target_suid);
  g_ptr_array_unref (self->mutations);
  g_ptr_array_unref (self->index_entries);

  G_OBJECT_CLASS (qstore_unsafe_event_parent_class)->finalize (object);
}

static void
qstore_unsafe_event_class_init (QStoreUnsafeEventClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = qstore_unsafe_event_finalize;
}

static void
qstore_unsafe_event_init (QStoreUnsafeEvent *self)
{
  self->safe_head = g_strdup ("");
  self->updated_at = -1;
  self->mutations = g_ptr_array_new_with_free_func ((GDestroyNotify) mutation_free);
  self->index_entries = g_ptr_array_new_with_free_func ((GDestroyNotify) index_entry_free);
}

/**
 * qstore_unsafe_event_new:
 * @event_id: the event's identity; a re-delivery carries the same one
 * @suid: the event's sortable unique id (see [func@suid_validate])
 *
 * Makes an event of generation 0 with no safe head, no mutations, no
 * expected row version, and its time taken when it is applied.
 *
 * Returns: (transfer full): the new event
 */
QStoreUnsafeEvent *
qstore_unsafe_event_new (const char *event_id,
                         const char *suid)
{
  QStoreUnsafeEvent *self;

  g_return_val_if_fail (event_id != NULL, NULL);
  g_return_val_if_fail (suid != NULL, NULL);

  self = g_object_new (QSTORE_TYPE_UNSAFE_EVENT, NULL);
  self->event_id = g_strdup (event_id);
  self->suid = g_strdup (suid);
  return self;
}

/**
 * qstore_unsafe_event_get_event_id:
 * @self: a #QStoreUnsafeEvent
 *
 * Gets the event's identity.
 *
 * Returns: the event's identity
 */
const char *
qstore_unsafe_event_get_event_id (QStoreUnsafeEvent *self)
{
  g_return_val_if_fail (QSTORE_IS_UNSAFE_EVENT (self), NULL);
  return self->event_id;
}

/**
 * qstore_unsafe_event_get_suid:
 * @self: a #QStoreUnsafeEvent
 *
 * Gets the event's sortable unique id.
 *
 * Returns: the event's sortable unique id
 */
const char *
qstore_unsafe_event_get_suid (QStoreUnsafeEvent *self)
{
  g_return_val_if_fail (QSTORE_IS_UNSAFE_EVENT (self), NULL);
  return self->suid;
}

/**
 * qstore_unsafe_event_set_generation:
 * @self: a #QStoreUnsafeEvent
 * @generation: the generation of the view the event is applied to, from 0
 *
 * Sets the generation: each rebuild of a view writes a new one, and rows,
 * arrivals and markers are kept per generation. Receipts are not: an
 * event applied to one generation is a duplicate in the next.
 */
void
qstore_unsafe_event_set_generation (QStoreUnsafeEvent *self,
                                    gint64             generation)
{
  g_return_if_fail (QSTORE_IS_UNSAFE_EVENT (self));
  self->generation = generation;
}

/**
 * qstore_unsafe_event_get_generation:
 * @self: a #QStoreUnsafeEvent
 *
 * Gets the generation the event is applied to.
 *
 * Returns: the generation the event is applied to
 */
gint64
qstore_unsafe_event_get_generation (QStoreUnsafeEvent *self)
{
  g_return_val_if_fail (QSTORE_IS_UNSAFE_EVENT (self), 0);
  return self->generation;
}

/**
 * qstore_unsafe_event_set_safe_head:
 * @self: a #QStoreUnsafeEvent
 * @safe_head: the safe layer's contiguous head as the deliverer saw it, or
 *   the empty text for none
 *
 * Sets the safe head the event was delivered against. An event at or
 * behind it is refused with %QSTORE_UNSAFE_WINDOW_ERROR_SAFE_AHEAD: the
 * safe layer covers it already.
 */
void
qstore_unsafe_event_set_safe_head (QStoreUnsafeEvent *self,
                                   const char        *safe_head)
{
  g_return_if_fail (QSTORE_IS_UNSAFE_EVENT (self));
  g_return_if_fail (safe_head != NULL);

  g_free (self->safe_head);
  self->safe_head = g_strdup (safe_head);
}

/**
 * qstore_unsafe_event_get_safe_head:
 * @self: a #QStoreUnsafeEvent
 *
 * Gets the safe head the event was delivered against.
 *
 * Returns: the safe head, or the empty text
 */
const char *
qstore_unsafe_event_get_safe_head (QStoreUnsafeEvent *self)
{
  g_return_val_if_fail (QSTORE_IS_UNSAFE_EVENT (self), NULL);
  return self->safe_head;
}

/**
 * qstore_unsafe_event_set_expected_row_version:
 * @self: a #QStoreUnsafeEvent
 * @version: the row version the materializer read
 *
 * Makes the event conditional: every row it touches that exists must have
 * this version, else it is refused with
 * %QSTORE_UNSAFE_WINDOW_ERROR_ROW_CAS_MISMATCH (retryable: plan again).
 */
void
qstore_unsafe_event_set_expected_row_version (QStoreUnsafeEvent *self,
                                              gint64             version)
{
  g_return_if_fail (QSTORE_IS_UNSAFE_EVENT (self));
  self->has_expected_row_version = TRUE;
  self->expected_row_version = version;
}

/**
 * qstore_unsafe_event_clear_expected_row_version:
 * @self: a #QStoreUnsafeEvent
 *
 * Makes the event unconditional again.
 */
void
qstore_unsafe_event_clear_expected_row_version (QStoreUnsafeEvent *self)
{
  g_return_if_fail (QSTORE_IS_UNSAFE_EVENT (self));
  self->has_expected_row_version = FALSE;
  self->expected_row_version = 0;
}

/**
 * qstore_unsafe_event_get_expected_row_version:
 * @self: a #QStoreUnsafeEvent
 * @version: (out) (optional): the expected version, 0 when there is none
 *
 * Gets the row version the event expects, if any.
 *
 * Returns: whether the event expects a row version
 */
gboolean
qstore_unsafe_event_get_expected_row_version (QStoreUnsafeEvent *self,
                                              gint64            *version)
{
  g_return_val_if_fail (QSTORE_IS_UNSAFE_EVENT (self), FALSE);

  if (version != NULL)
    *version = self->expected_row_version;
  return self->has_expected_row_version;
}

/**
 * qstore_unsafe_event_set_updated_at:
 * @self: a #QStoreUnsafeEvent
 * @updated_at_ms: the time to record with the event's receipt, in
 *   milliseconds since the Unix epoch; negative for the time of the apply
 *
 * Sets the time recorded with the receipt.
 */
void
qstore_unsafe_event_set_updated_at (QStoreUnsafeEvent *self,
                                    gint64             updated_at_ms)
{
  g_return_if_fail (QSTORE_IS_UNSAFE_EVENT (self));
  self->updated_at = updated_at_ms < 0 ? -1 : updated_at_ms;
}

/**
 * qstore_unsafe_event_get_updated_at:
 * @self: a #QStoreUnsafeEvent
 *
 * Gets the time recorded with the event's receipt.
 *
 * Returns: the time to record, or -1 for the time of the apply
 */
gint64
qstore_unsafe_event_get_updated_at (QStoreUnsafeEvent *self)
{
  g_return_val_if_fail (QSTORE_IS_UNSAFE_EVENT (self), -1);
  return self->updated_at;
}

/**
 * qstore_unsafe_event_set_record_arrival:
 * @self: a #QStoreUnsafeEvent
 * @record_arrival: whether applying the event also observes its arrival
 *
 * Folds [method@UnsafeWindow.observe_arrival] into the apply. The arrival
 * is recorded even when the apply is refused: a late first arrival must
 * latch rebuild-required whatever becomes of its write.
 */
void
qstore_unsafe_event_set_record_arrival (QStoreUnsafeEvent *self,
                                        gboolean           record_arrival)
{
  g_return_if_fail (QSTORE_IS_UNSAFE_EVENT (self));
  self->record_arrival = !!record_arrival;
}

/**
 * qstore_unsafe_event_get_record_arrival:
 * @self: a #QStoreUnsafeEvent
 *
 * Gets whether applying the event observes its arrival.
 *
 * Returns: whether applying the event observes its arrival
 */
gboolean
qstore_unsafe_event_get_record_arrival (QStoreUnsafeEvent *self)
{
  g_return_val_if_fail (QSTORE_IS_UNSAFE_EVENT (self), FALSE);
  return self->record_arrival;
}

/**
 * qstore_unsafe_event_set_target_suid:
 * @self: a #QStoreUnsafeEvent
 * @target_suid: (nullable): the SUID the window's kick must reach, or
 *   %NULL for the event's own
 *
 * Sets how far the follow-up work this event asks for must go.
 */
void
qstore_unsafe_event_set_target_suid (QStoreUnsafeEvent *self,
                                     const char        *target_suid)
{
  g_return_if_fail (QSTORE_IS_UNSAFE_EVENT (self));

  g_free (self->target_suid);
  self->target_suid = g_strdup (target_suid);
}

/**
 * qstore_unsafe_event_get_target_suid:
 * @self: a #QStoreUnsafeEvent
 *
 * Gets the SUID the window's kick must reach for this event.
 *
 * Returns: (nullable): the kick's target, or %NULL for the event's SUID
 */
const char *
qstore_unsafe_event_get_target_suid (QStoreUnsafeEvent *self)
{
  g_return_val_if_fail (QSTORE_IS_UNSAFE_EVENT (self), NULL);
  return self->target_suid;
}

static void
add_mutation (QStoreUnsafeEvent        *self,
              QStoreUnsafeMutationKind  kind,
              const char               *row_key,
              const char               *json,
              gint64                    row_version,
              const char               *source_suid)
{
  QStoreUnsafeMutation *mutation = g_new0 (QStoreUnsafeMutation, 1);

  mutation->kind = kind;
  mutation->row_key = g_strdup (row_key);
  mutation->json = g_strdup (json);
  mutation->row_version = row_version;
  mutation->source_suid = g_strdup (source_suid);
  g_ptr_array_add (self->mutations, mutation);
}

/**
 * qstore_unsafe_event_add_upsert:
 * @self: a #QStoreUnsafeEvent
 * @row_key: the row
 * @value_json: the row's whole new value, as JSON
 * @row_version: the row's new version
 * @source_suid: the SUID of the state the value comes from, usually the
 *   event's own
 *
 * Adds a row the event writes in full. Its index entries are replaced by
 * those the event adds for it.
 */
void
qstore_unsafe_event_add_upsert (QStoreUnsafeEvent *self,
                                const char        *row_key,
                                const char        *value_json,
                                gint64             row_version,
                                const char        *source_suid)
{
  g_return_if_fail (QSTORE_IS_UNSAFE_EVENT (self));
  g_return_if_fail (row_key != NULL);
  g_return_if_fail (value_json != NULL);
  g_return_if_fail (source_suid != NULL);

  add_mutation (self, QSTORE_UNSAFE_MUTATION_UPSERT, row_key, value_json, row_version,
                source_suid);
}

/**
 * qstore_unsafe_event_add_tombstone:
 * @self: a #QStoreUnsafeEvent
 * @row_key: the row
 * @row_version: the row's new version
 * @source_suid: the SUID of the deletion
 *
 * Adds a deletion that stays ordered: the row is kept as a tombstone,
 * which hides the key (the safe layer's row included) from composed pages
 * until a newer SUID writes it again, and which an older upsert cannot
 * overwrite. A plain [method@UnsafeEvent.add_delete] removes the row
 * instead, so a later, older upsert of the key applies.
 */
void
qstore_unsafe_event_add_tombstone (QStoreUnsafeEvent *self,
                                   const char        *row_key,
                                   gint64             row_version,
                                   const char        *source_suid)
{
  g_return_if_fail (QSTORE_IS_UNSAFE_EVENT (self));
  g_return_if_fail (row_key != NULL);
  g_return_if_fail (source_suid != NULL);

  add_mutation (self, QSTORE_UNSAFE_MUTATION_TOMBSTONE, row_key, "null", row_version,
                source_suid);
}

/**
 * qstore_unsafe_event_add_patch:
 * @self: a #QStoreUnsafeEvent
 * @row_key: the row, which must exist
 * @patch_json: an RFC 7396 merge patch, as JSON
 * @row_version: the row's new version
 * @source_suid: the SUID of the state the patch comes from
 *
 * Adds a change to part of a row. When the row does not exist the event's
 * outcome is %QSTORE_UNSAFE_OUTCOME_PATCH_NOT_FOUND and it writes no row.
 */
void
qstore_unsafe_event_add_patch (QStoreUnsafeEvent *self,
                               const char        *row_key,
                               const char        *patch_json,
                               gint64             row_version,
                               const char        *source_suid)
{
  g_return_if_fail (QSTORE_IS_UNSAFE_EVENT (self));
  g_return_if_fail (row_key != NULL);
  g_return_if_fail (patch_json != NULL);
  g_return_if_fail (source_suid != NULL);

  add_mutation (self, QSTORE_UNSAFE_MUTATION_PATCH, row_key, patch_json, row_version,
                source_suid);
}

/**
 * qstore_unsafe_event_add_delete:
 * @self: a #QStoreUnsafeEvent
 * @row_key: the row, which must exist
 *
 * Adds a row the event removes, with its index entries. No tombstone is
 * left. When the row does not exist the event's outcome is
 * %QSTORE_UNSAFE_OUTCOME_DELETE_WITHOUT_ROW and it writes no row.
 */
void
qstore_unsafe_event_add_delete (QStoreUnsafeEvent *self,
                                const char        *row_key)
{
  g_return_if_fail (QSTORE_IS_UNSAFE_EVENT (self));
  g_return_if_fail (row_key != NULL);

  add_mutation (self, QSTORE_UNSAFE_MUTATION_DELETE, row_key, NULL, 0, NULL);
}

/**
 * qstore_unsafe_event_add_index_entry:
 * @self: a #QStoreUnsafeEvent
 * @index_id: the index
 * @row_key: the row the entry points to
 * @value: the indexed value: text (`s`), an integer (`x`) or a real (`d`)
 *
 * Adds an index entry the event writes when it applies.
 */
void
qstore_unsafe_event_add_index_entry (QStoreUnsafeEvent *self,
                                     const char        *index_id,
                                     const char        *row_key,
                                     GVariant          *value)
{
  QStoreUnsafeIndexEntry *entry;

  g_return_if_fail (QSTORE_IS_UNSAFE_EVENT (self));
  g_return_if_fail (index_id != NULL);
  g_return_if_fail (row_key != NULL);
  g_return_if_fail (value != NULL);

  entry = g_new0 (QStoreUnsafeIndexEntry, 1);
  entry->index_id = g_strdup (index_id);
  entry->row_key = g_strdup (row_key);
  entry->value = g_variant_ref_sink (value);
  g_ptr_array_add (self->index_entries, entry);
}

/**
 * qstore_unsafe_event_get_n_mutations:
 * @self: a #QStoreUnsafeEvent
 *
 * Counts the event's mutations.
 *
 * Returns: how many upserts, tombstones, patches and deletes the event has
 */
guint
qstore_unsafe_event_get_n_mutations (QStoreUnsafeEvent *self)
{
  g_return_val_if_fail (QSTORE_IS_UNSAFE_EVENT (self), 0);
  return self->mutations->len;
}

/* Private */

GPtrArray *
qstore_unsafe_event_get_mutations (QStoreUnsafeEvent *self)
{
  return self->mutations;
}

GPtrArray *
qstore_unsafe_event_get_index_entries (QStoreUnsafeEvent *self)
{
  return self->index_entries;
}

char *
qstore_unsafe_json_canonical (const char  *json,
                              const char  *field,
                              JsonNode   **node,
                              GError     **error)
{
  g_autoptr(JsonParser) parser = json_parser_new_immutable ();
  g_autoptr(GError) local_error = NULL;
  JsonNode *root;

  if (!json_parser_load_from_data (parser, json, -1, &local_error) ||
      (root = json_parser_get_root (parser)) == NULL)
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                   _("%s is not JSON: %s"), field,
                   local_error != NULL ? local_error->message : "it is empty");
      return NULL;
    }
  if (node != NULL)
    *node = json_node_ref (root);
  return json_to_string (root, FALSE);
}

JsonNode *
qstore_unsafe_json_merge_patch (JsonNode *target,
                                JsonNode *patch)
{
  JsonObject *result;
  JsonObject *patch_object;
  g_autoptr(GList) members = NULL;
  JsonNode *node;

  if (!JSON_NODE_HOLDS_OBJECT (patch))
    return json_node_copy (patch);

  /* A new object at every level: the target's nodes may be shared with a
   * parser or sealed, and are only ever read. */
  result = json_object_new ();
  if (target != NULL && JSON_NODE_HOLDS_OBJECT (target))
    {
      JsonObject *target_object = json_node_get_object (target);

      members = json_object_get_members (target_object);
      for (GList *l = members; l != NULL; l = l->next)
        json_object_set_member (result, l->data,
                                json_node_copy (json_object_get_member (target_object, l->data)));
      g_clear_pointer (&members, g_list_free);
    }

  patch_object = json_node_get_object (patch);
  members = json_object_get_members (patch_object);
  for (GList *l = members; l != NULL; l = l->next)
    {
      const char *name = l->data;
      JsonNode *value = json_object_get_member (patch_object, name);

      if (JSON_NODE_HOLDS_NULL (value))
        json_object_remove_member (result, name);
      else
        json_object_set_member (result, name,
                                qstore_unsafe_json_merge_patch (json_object_get_member (result, name),
                                                                value));
    }

  node = json_node_init_object (json_node_alloc (), result);
  json_object_unref (result);
  return node;
}

static gboolean
check_text (const char  *text,
            const char  *event_id,
            const char  *field,
            GError     **error)
{
  if (!g_utf8_validate (text, -1, NULL))
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                   _("Unsafe event “%s”: %s is not valid UTF-8"), event_id, field);
      return FALSE;
    }
  return TRUE;
}

static gboolean
check_suid (const char  *suid,
            const char  *event_id,
            const char  *field,
            GError     **error)
{
  if (!qstore_suid_validate (suid, field, error))
    {
      g_prefix_error (error, _("Unsafe event “%s”: "), event_id);
      return FALSE;
    }
  return TRUE;
}

static const char *
mutation_name (QStoreUnsafeMutationKind kind)
{
  switch (kind)
    {
    case QSTORE_UNSAFE_MUTATION_UPSERT:
      return "upsert";
    case QSTORE_UNSAFE_MUTATION_TOMBSTONE:
      return "tombstone";
    case QSTORE_UNSAFE_MUTATION_PATCH:
      return "patch";
    case QSTORE_UNSAFE_MUTATION_DELETE:
    default:
      return "delete";
    }
}

static gboolean
validate_mutation (QStoreUnsafeEvent     *self,
                   QStoreUnsafeMutation  *mutation,
                   guint                  i,
                   GError               **error)
{
  g_autofree char *field = NULL;
  g_autofree char *suid_field = NULL;
  g_autofree char *json_field = NULL;

  field = g_strdup_printf ("%s %u", mutation_name (mutation->kind), i + 1);
  if (!check_text (mutation->row_key, self->event_id, field, error))
    return FALSE;
  if (mutation->kind == QSTORE_UNSAFE_MUTATION_DELETE)
    return TRUE;

  suid_field = g_strdup_printf ("%s (row “%s”): source_suid", field, mutation->row_key);
  if (!check_suid (mutation->source_suid, self->event_id, suid_field, error))
    return FALSE;

  json_field = g_strdup_printf ("%s (row “%s”): its %s", field, mutation->row_key,
                                mutation->kind == QSTORE_UNSAFE_MUTATION_PATCH ? "patch" : "value");
  g_clear_pointer (&mutation->node, json_node_unref);
  g_free (mutation->canonical);
  mutation->canonical = qstore_unsafe_json_canonical (mutation->json, json_field,
                                                      &mutation->node, error);
  if (mutation->canonical == NULL)
    {
      g_prefix_error (error, _("Unsafe event “%s”: "), self->event_id);
      return FALSE;
    }
  return TRUE;
}

static gboolean
validate_index_entry (QStoreUnsafeEvent       *self,
                      QStoreUnsafeIndexEntry  *entry,
                      guint                    i,
                      GError                 **error)
{
  g_autofree char *field = g_strdup_printf ("index entry %u", i + 1);

  if (!check_text (entry->index_id, self->event_id, field, error) ||
      !check_text (entry->row_key, self->event_id, field, error))
    return FALSE;

  if (g_variant_is_of_type (entry->value, G_VARIANT_TYPE_STRING))
    return check_text (g_variant_get_string (entry->value, NULL), self->event_id, field, error);
  if (g_variant_is_of_type (entry->value, G_VARIANT_TYPE_INT64))
    return TRUE;
  if (g_variant_is_of_type (entry->value, G_VARIANT_TYPE_DOUBLE))
    {
      double value = g_variant_get_double (entry->value);

      if (!isnan (value))
        return TRUE;
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                   _("Unsafe event “%s”: %s (index “%s”, row “%s”): NaN cannot be indexed"),
                   self->event_id, field, entry->index_id, entry->row_key);
      return FALSE;
    }

  g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
               _("Unsafe event “%s”: %s (index “%s”, row “%s”) is of type “%s”: give "
               "text (“s”), an integer (“x”) or a real (“d”)"), self->event_id, field,
               entry->index_id, entry->row_key, g_variant_get_type_string (entry->value));
  return FALSE;
}

gboolean
qstore_unsafe_event_validate (QStoreUnsafeEvent  *self,
                              GError            **error)
{
  if (self->event_id[0] == '\0')
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                   _("An unsafe event has an empty event id: give every event its identity"));
      return FALSE;
    }
  if (!check_text (self->event_id, "?", "event_id", error) ||
      !check_suid (self->suid, self->event_id, "suid", error))
    return FALSE;
  /* The empty safe head means "no checkpoint"; a target must be an id. */
  if (self->safe_head[0] != '\0' &&
      !check_suid (self->safe_head, self->event_id, "safe_head", error))
    return FALSE;
  if (self->target_suid != NULL &&
      !check_suid (self->target_suid, self->event_id, "target_suid", error))
    return FALSE;
  if (self->generation < 0)
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                   "Unsafe event “%s”: generation %" G_GINT64_FORMAT " is negative: "
                   "generations count from 0", self->event_id, self->generation);
      return FALSE;
    }

  for (guint i = 0; i < self->mutations->len; i++)
    if (!validate_mutation (self, g_ptr_array_index (self->mutations, i), i, error))
      return FALSE;
  for (guint i = 0; i < self->index_entries->len; i++)
    if (!validate_index_entry (self, g_ptr_array_index (self->index_entries, i), i, error))
      return FALSE;
  return TRUE;
}
