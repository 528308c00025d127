/* qstore-unsafe-event-private.h: what an unsafe window reads of an event
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <json-glib/json-glib.h>

#include "qstore-unsafe-event.h"

G_BEGIN_DECLS

typedef enum
{
  QSTORE_UNSAFE_MUTATION_UPSERT,
  QSTORE_UNSAFE_MUTATION_TOMBSTONE,
  QSTORE_UNSAFE_MUTATION_PATCH,
  QSTORE_UNSAFE_MUTATION_DELETE,
} QStoreUnsafeMutationKind;

typedef struct
{
  QStoreUnsafeMutationKind  kind;
  char                     *row_key;
  char                     *json;        /* value or patch, as given */
  JsonNode                 *node;        /* parsed by validation */
  char                     *canonical;   /* json as stored, set by validation */
  gint64                    row_version;
  char                     *source_suid;
} QStoreUnsafeMutation;

typedef struct
{
  char     *index_id;
  char     *row_key;
  GVariant *value;   /* "s", "x" or "d" once validated */
} QStoreUnsafeIndexEntry;

/* Checks every field (ids, SUIDs, JSON, index values) and fills each
 * mutation's node and canonical text. QSTORE_ERROR_INVALID_ARGUMENT
 * naming the event and the field. */
gboolean         qstore_unsafe_event_validate          (QStoreUnsafeEvent  *self,
                                                        GError            **error);
/* In the order they were added. */
GPtrArray       *qstore_unsafe_event_get_mutations     (QStoreUnsafeEvent  *self);
GPtrArray       *qstore_unsafe_event_get_index_entries (QStoreUnsafeEvent  *self);

/* JSON as the window stores it: compact, members in their given order.
 * NULL with QSTORE_ERROR_INVALID_ARGUMENT naming @field when @json does
 * not parse; *node (when not NULL) gets the parsed value. */
char            *qstore_unsafe_json_canonical          (const char         *json,
                                                        const char         *field,
                                                        JsonNode          **node,
                                                        GError            **error);
/* The RFC 7396 merge patch of @patch over @target (NULL: no value), as
 * a new node; both are only read. */
JsonNode        *qstore_unsafe_json_merge_patch        (JsonNode           *target,
                                                        JsonNode           *patch);

G_END_DECLS
