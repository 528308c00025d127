/* qstore-change-digest.c: what makes a change the same change everywhere
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <json-glib/json-glib.h>

#include "qstore-change-digest.h"
#include "qstore-enums.h"

/* A side effect of a change (a mail sent, a webhook called) must run
 * once although several consumers see the change. They agree on who
 * runs it by claiming the change's key, which every consumer must compute
 * alike from the change alone: the digest of the change's content, and
 * the occurrence of that digest (see QStoreOccurrenceCounter), since two
 * changes may carry the very same content. The content is written as
 * canonical JSON, so the digest depends on the values, never on how a
 * process happened to order or spell them. */

#define DIGEST_LEN 64

static JsonNode *value_node (GVariant *value);

static int
compare_names (gconstpointer a,
               gconstpointer b)
{
  return strcmp (*(const char * const *) a, *(const char * const *) b);
}

/* A dictionary with string keys: an object whose members are in byte
 * order of their names (JSON's objects have no order of their own). */
static JsonNode *
object_node (GVariant *dict)
{
  g_autoptr(GHashTable) values = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                                        (GDestroyNotify) g_variant_unref);
  g_autoptr(GPtrArray) names = g_ptr_array_new ();
  JsonObject *object = json_object_new ();
  JsonNode *node = json_node_new (JSON_NODE_OBJECT);
  gsize n = g_variant_n_children (dict);

  /* A name given twice keeps its last value. */
  for (gsize i = 0; i < n; i++)
    {
      g_autoptr(GVariant) entry = g_variant_get_child_value (dict, i);
      g_autoptr(GVariant) name = g_variant_get_child_value (entry, 0);

      g_hash_table_replace (values, g_variant_dup_string (name, NULL),
                            g_variant_get_child_value (entry, 1));
    }
  {
    GHashTableIter iter;
    gpointer name;

    g_hash_table_iter_init (&iter, values);
    while (g_hash_table_iter_next (&iter, &name, NULL))
      g_ptr_array_add (names, name);
  }
  g_ptr_array_sort (names, compare_names);
  for (guint i = 0; i < names->len; i++)
    json_object_set_member (object, names->pdata[i],
                            value_node (g_hash_table_lookup (values, names->pdata[i])));
  json_node_take_object (node, object);
  return node;
}

static JsonNode *
array_node (GVariant *container)
{
  JsonArray *array = json_array_new ();
  JsonNode *node = json_node_new (JSON_NODE_ARRAY);
  gsize n = g_variant_n_children (container);

  for (gsize i = 0; i < n; i++)
    {
      g_autoptr(GVariant) child = g_variant_get_child_value (container, i);

      json_array_add_element (array, value_node (child));
    }
  json_node_take_array (node, array);
  return node;
}

/* A value as JSON: NULL (the empty maybe) is null, integers and reals
 * numbers, text a string, a blob (`ay`) {"$blob": "<base64>"}, as every
 * qstore JSON writes it; containers become arrays, and dictionaries with
 * string keys objects. */
static JsonNode *
value_node (GVariant *value)
{
  const GVariantType *type = g_variant_get_type (value);
  JsonNode *node;

  if (g_variant_type_is_variant (type))
    {
      g_autoptr(GVariant) inner = g_variant_get_variant (value);

      return value_node (inner);
    }
  if (g_variant_type_is_maybe (type))
    {
      g_autoptr(GVariant) inner = g_variant_get_maybe (value);

      return inner != NULL ? value_node (inner) : json_node_new (JSON_NODE_NULL);
    }

  node = json_node_new (JSON_NODE_VALUE);
  switch (g_variant_classify (value))
    {
    case G_VARIANT_CLASS_BOOLEAN:
      json_node_set_boolean (node, g_variant_get_boolean (value));
      return node;
    case G_VARIANT_CLASS_BYTE:
      json_node_set_int (node, g_variant_get_byte (value));
      return node;
    case G_VARIANT_CLASS_INT16:
      json_node_set_int (node, g_variant_get_int16 (value));
      return node;
    case G_VARIANT_CLASS_UINT16:
      json_node_set_int (node, g_variant_get_uint16 (value));
      return node;
    case G_VARIANT_CLASS_INT32:
      json_node_set_int (node, g_variant_get_int32 (value));
      return node;
    case G_VARIANT_CLASS_UINT32:
      json_node_set_int (node, g_variant_get_uint32 (value));
      return node;
    case G_VARIANT_CLASS_HANDLE:
      json_node_set_int (node, g_variant_get_handle (value));
      return node;
    case G_VARIANT_CLASS_INT64:
      json_node_set_int (node, g_variant_get_int64 (value));
      return node;
    case G_VARIANT_CLASS_UINT64:
      {
        guint64 u = g_variant_get_uint64 (value);

        /* Beyond what JSON integers hold here: the digits, as text. */
        if (u <= G_MAXINT64)
          json_node_set_int (node, (gint64) u);
        else
          {
            g_autofree char *digits = g_strdup_printf ("%" G_GUINT64_FORMAT, u);

            json_node_set_string (node, digits);
          }
        return node;
      }
    case G_VARIANT_CLASS_DOUBLE:
      json_node_set_double (node, g_variant_get_double (value));
      return node;
    case G_VARIANT_CLASS_STRING:
    case G_VARIANT_CLASS_OBJECT_PATH:
    case G_VARIANT_CLASS_SIGNATURE:
      json_node_set_string (node, g_variant_get_string (value, NULL));
      return node;
    default:
      break;
    }
  json_node_unref (node);

  if (g_variant_type_equal (type, G_VARIANT_TYPE_BYTESTRING))
    {
      gsize len;
      const guint8 *data = g_variant_get_fixed_array (value, &len, 1);
      g_autofree char *text = g_base64_encode (data, len);
      JsonObject *object = json_object_new ();

      json_object_set_string_member (object, "$blob", text);
      node = json_node_new (JSON_NODE_OBJECT);
      json_node_take_object (node, object);
      return node;
    }
  if (g_variant_type_is_array (type) &&
      g_variant_type_is_dict_entry (g_variant_type_element (type)) &&
      g_variant_type_equal (g_variant_type_key (g_variant_type_element (type)),
                            G_VARIANT_TYPE_STRING))
    return object_node (value);
  return array_node (value);
}

/**
 * qstore_change_op_get_name:
 * @op: what happened to a row
 *
 * Gets the name of an operation as change digests and every JSON of
 * changes write it: `insert`, `update` or `delete`.
 *
 * Returns: the name
 */
const char *
qstore_change_op_get_name (QStoreChangeOp op)
{
  GEnumClass *klass = g_type_class_ref (QSTORE_TYPE_CHANGE_OP);
  GEnumValue *value = g_enum_get_value (klass, op);

  g_type_class_unref (klass);
  g_return_val_if_fail (value != NULL, NULL);
  return value->value_nick;
}

static char *
canonical_text (JsonNode *root)
{
  g_autoptr(JsonGenerator) generator = json_generator_new ();

  json_generator_set_pretty (generator, FALSE);
  json_generator_set_root (generator, root);
  return json_generator_to_data (generator, NULL);
}

/**
 * qstore_change_digest:
 * @pipe: the consumer the change goes through, such as `search-index`:
 *   the same change has one digest per pipe
 * @op: what happened to the row
 * @key: the row's key, as text (see qstore_change_key_text())
 * @next: (nullable): the row after the change, an `a{sv}` (%NULL for a
 *   delete)
 * @prev: (nullable): the row before the change, an `a{sv}` (%NULL for an
 *   insert)
 *
 * Computes the content half of a change's identity: equal for two
 * changes exactly when they come through the same pipe, with the same
 * operation, key and row images. Every consumer computes it alike, in
 * any process and language, so several consumers can agree on a change
 * (see qstore_compose_change_key()).
 *
 * It is the SHA-256, in lowercase hexadecimal, of the canonical JSON
 * object `{"key": …, "next": …, "op": …, "pipe": …, "prev": …}` written
 * by json-glib without spaces, members of every object in byte order of
 * their names; `op` is `insert`, `update` or `delete`; a missing row is
 * null. In the rows, NULL (the empty maybe) is null, integers and reals
 * are numbers (reals as json-glib writes them), text is a string, a blob
 * (`ay`) is `{"$blob": "<base64>"}`, booleans are booleans, unsigned
 * integers beyond 2^63 - 1 are their decimal digits as a string, other
 * containers are arrays and dictionaries with string keys objects.
 *
 * Returns: (transfer full): the digest, 64 hexadecimal digits
 */
char *
qstore_change_digest (const char     *pipe,
                      QStoreChangeOp  op,
                      const char     *key,
                      GVariant       *next,
                      GVariant       *prev)
{
  g_autoptr(JsonNode) root = json_node_new (JSON_NODE_OBJECT);
  g_autoptr(GVariant) owned_next = NULL;
  g_autoptr(GVariant) owned_prev = NULL;
  g_autofree char *text = NULL;
  JsonObject *object;

  g_return_val_if_fail (pipe != NULL, NULL);
  g_return_val_if_fail (key != NULL, NULL);

  /* A floating row is taken, as GVariant callees do. */
  owned_next = next != NULL ? g_variant_ref_sink (next) : NULL;
  owned_prev = prev != NULL ? g_variant_ref_sink (prev) : NULL;
  object = json_object_new ();
  json_object_set_string_member (object, "key", key);
  json_object_set_member (object, "next",
                          next != NULL ? value_node (next) : json_node_new (JSON_NODE_NULL));
  json_object_set_string_member (object, "op", qstore_change_op_get_name (op));
  json_object_set_string_member (object, "pipe", pipe);
  json_object_set_member (object, "prev",
                          prev != NULL ? value_node (prev) : json_node_new (JSON_NODE_NULL));
  json_node_take_object (root, object);

  text = canonical_text (root);
  return g_compute_checksum_for_string (G_CHECKSUM_SHA256, text, -1);
}

/**
 * qstore_change_key_text:
 * @key: a row's key, as a tuple (see [method@ChangeSet.get_key])
 *
 * Writes a row's key as the text qstore_change_digest() takes: the
 * canonical JSON array of its values, such as `[42]` or `["a",1]`.
 *
 * Returns: (transfer full): the key as text
 */
char *
qstore_change_key_text (GVariant *key)
{
  g_autoptr(JsonNode) root = NULL;
  g_autoptr(GVariant) owned = NULL;

  g_return_val_if_fail (key != NULL, NULL);

  owned = g_variant_ref_sink (key);
  root = g_variant_is_container (key) && !g_variant_is_of_type (key, G_VARIANT_TYPE_BYTESTRING)
           ? array_node (key) : value_node (key);
  return canonical_text (root);
}

/**
 * qstore_change_digest_for_change:
 * @change_set: a #QStoreChangeSet that describes its tables (one a
 *   change feed or the change log gave)
 * @index: a change, below [method@ChangeSet.get_n_changes]
 * @pipe: the consumer the change goes through
 *
 * Computes qstore_change_digest() for one change of a change set: its
 * key as qstore_change_key_text() writes it, and its rows as
 * [method@ChangeSet.get_new_record] and [method@ChangeSet.get_old_record]
 * give them.
 *
 * Returns: (transfer full) (nullable): the digest, or %NULL when the
 *   change set does not describe the change's table
 */
char *
qstore_change_digest_for_change (QStoreChangeSet *change_set,
                                 guint            index,
                                 const char      *pipe)
{
  g_autoptr(GVariant) key = NULL;
  g_autoptr(GVariant) next = NULL;
  g_autoptr(GVariant) prev = NULL;
  g_autofree char *key_text = NULL;

  g_return_val_if_fail (QSTORE_IS_CHANGE_SET (change_set), NULL);
  g_return_val_if_fail (index < qstore_change_set_get_n_changes (change_set), NULL);
  g_return_val_if_fail (pipe != NULL, NULL);

  if (!(key = qstore_change_set_get_key (change_set, index)))
    return NULL;
  key_text = qstore_change_key_text (key);
  next = qstore_change_set_get_new_record (change_set, index);
  prev = qstore_change_set_get_old_record (change_set, index);
  return qstore_change_digest (pipe, qstore_change_set_get_op (change_set, index), key_text,
                               next, prev);
}

static gboolean
is_digest (const char *text,
           gsize       len)
{
  if (len != DIGEST_LEN)
    return FALSE;
  for (gsize i = 0; i < len; i++)
    if (!g_ascii_isdigit (text[i]) && !(text[i] >= 'a' && text[i] <= 'f'))
      return FALSE;
  return TRUE;
}

/**
 * qstore_compose_change_key:
 * @digest: a digest from qstore_change_digest()
 * @occurrence: how many changes with this digest came before this one
 *   (see [method@OccurrenceCounter.next])
 *
 * Composes a change's durable identity, what a claim is made on:
 * `<digest>:<occurrence>`, such as `3f…9a:0`.
 *
 * Returns: (transfer full) (nullable): the change key, or %NULL when
 *   @digest is not 64 lowercase hexadecimal digits
 */
char *
qstore_compose_change_key (const char *digest,
                           guint       occurrence)
{
  g_return_val_if_fail (digest != NULL, NULL);

  if (!is_digest (digest, strlen (digest)))
    return NULL;
  return g_strdup_printf ("%s:%u", digest, occurrence);
}

/**
 * qstore_parse_change_key:
 * @change_key: a change key, as qstore_compose_change_key() makes them
 * @occurrence: (out) (optional): the occurrence
 *
 * Splits a change key back into its digest and occurrence. Anything but
 * 64 lowercase hexadecimal digits, a colon and an occurrence in decimal
 * (without leading zeros, at most %G_MAXUINT) is malformed.
 *
 * Returns: (transfer full) (nullable): the digest, or %NULL when
 *   @change_key is malformed
 */
char *
qstore_parse_change_key (const char *change_key,
                         guint      *occurrence)
{
  const char *colon, *digits;
  guint64 value;

  if (occurrence != NULL)
    *occurrence = 0;
  if (change_key == NULL)
    return NULL;
  colon = strchr (change_key, ':');
  if (colon == NULL || !is_digest (change_key, colon - change_key))
    return NULL;
  digits = colon + 1;
  if (digits[0] == '\0' || (digits[0] == '0' && digits[1] != '\0'))
    return NULL;
  for (const char *p = digits; *p != '\0'; p++)
    if (!g_ascii_isdigit (*p))
      return NULL;
  if (!g_ascii_string_to_unsigned (digits, 10, 0, G_MAXUINT, &value, NULL))
    return NULL;
  if (occurrence != NULL)
    *occurrence = (guint) value;
  return g_strndup (change_key, DIGEST_LEN);
}
