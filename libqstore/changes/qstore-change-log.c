/* qstore-change-log.c: the durable change log as it is stored
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include <json-glib/json-glib.h>

#include "qstore-change-log-private.h"
#include "qstore-codec-private.h"
#include "qstore-error.h"

/* An entry, all integers big-endian:
 *
 *   "QCL1" | tx u64 | time i64 | flags u8 (1: changes not all kept)
 *   | n_tables u32 | n_tables × (schema str | table str | n_names u32
 *     | n_names × str | n_key u32 | n_key × u32)
 *   | n_rows u32 | n_rows × (table u32 | op u8 | images u8 (1: old,
 *     2: new) | [old: len u32 | bytes] | [new: len u32 | bytes])
 *   | checksum u64
 *
 * where str is len u32 | UTF-8 bytes, and images are rows in the
 * codec's self-describing encoding, exactly as the tables store them, so
 * writing an entry costs a copy and no conversion. The checksum (64-bit
 * FNV-1a of everything before it) catches a damaged entry that would
 * still parse. A table with no names was not described. */

#define MAGIC       "QCL1"
#define MAGIC_LEN   4
#define FLAG_INCOMPLETE 1
#define HAS_OLD     1
#define HAS_NEW     2
#define FNV_OFFSET  G_GUINT64_CONSTANT (0xcbf29ce484222325)
#define FNV_PRIME   G_GUINT64_CONSTANT (0x100000001b3)

/* The setting */

void
qstore_change_log_setting_clear (QStoreChangeLogSetting *setting)
{
  g_clear_pointer (&setting->id, g_free);
  setting->retain = 0;
  setting->since = 0;
}

char *
qstore_change_log_setting_json (const QStoreChangeLogSetting *setting)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autoptr(JsonGenerator) generator = json_generator_new ();
  g_autoptr(JsonNode) root = NULL;

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "retain");
  json_builder_add_int_value (builder, (gint64) setting->retain);
  json_builder_set_member_name (builder, "id");
  json_builder_add_string_value (builder, setting->id);
  json_builder_set_member_name (builder, "since");
  json_builder_add_int_value (builder, (gint64) setting->since);
  json_builder_end_object (builder);
  root = json_builder_get_root (builder);
  json_generator_set_root (generator, root);
  return json_generator_to_data (generator, NULL);
}

static gboolean
positive_member (JsonObject *object,
                 const char *name,
                 guint64    *value)
{
  JsonNode *node = json_object_get_member (object, name);

  if (node == NULL || json_node_get_value_type (node) != G_TYPE_INT64 ||
      json_node_get_int (node) < 1)
    return FALSE;
  *value = (guint64) json_node_get_int (node);
  return TRUE;
}

gboolean
qstore_change_log_setting_parse (const char              *text,
                                 gsize                    len,
                                 const char              *location,
                                 QStoreChangeLogSetting  *setting,
                                 GError                 **error)
{
  g_autoptr(JsonParser) parser = json_parser_new ();
  JsonNode *root, *id;
  JsonObject *object;

  if (json_parser_load_from_data (parser, text != NULL ? text : "", len, NULL) &&
      (root = json_parser_get_root (parser)) != NULL && JSON_NODE_HOLDS_OBJECT (root) &&
      (object = json_node_get_object (root)) != NULL &&
      positive_member (object, "retain", &setting->retain) &&
      positive_member (object, "since", &setting->since) &&
      (id = json_object_get_member (object, "id")) != NULL &&
      json_node_get_value_type (id) == G_TYPE_STRING && json_node_get_string (id)[0] != '\0')
    {
      setting->id = g_strdup (json_node_get_string (id));
      return TRUE;
    }

  g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_CORRUPT,
               "The change log setting of the store at “%s” is damaged: turn the log off "
               "and on again with PRAGMA " QSTORE_CHANGE_LOG_SETTING " = 0, then = N",
               location);
  return FALSE;
}

/* Keys */

static void
put_u32 (guint8  *p,
         guint32  value)
{
  for (int i = 3; i >= 0; i--, value >>= 8)
    p[i] = value & 0xff;
}

static void
put_u64 (guint8  *p,
         guint64  value)
{
  for (int i = 7; i >= 0; i--, value >>= 8)
    p[i] = value & 0xff;
}

static guint64
get_u64 (const guint8 *p)
{
  guint64 value = 0;

  for (int i = 0; i < 8; i++)
    value = value << 8 | p[i];
  return value;
}

void
qstore_change_log_key (guint64 tx_id,
                       guint8  key[QSTORE_CHANGE_LOG_KEY_LEN])
{
  put_u64 (key, tx_id);
}

gboolean
qstore_change_log_key_parse (const guint8 *key,
                             gsize         len,
                             guint64      *tx_id)
{
  if (len != QSTORE_CHANGE_LOG_KEY_LEN)
    return FALSE;
  *tx_id = get_u64 (key);
  return TRUE;
}

gboolean
qstore_change_log_is_bookkeeping (const char *table)
{
  return g_ascii_strncasecmp (table, "_qstore_", 8) == 0;
}

/* Writing */

static void
append_u8 (GByteArray *out,
           guint8      value)
{
  g_byte_array_append (out, &value, 1);
}

static void
append_u32 (GByteArray *out,
            guint32     value)
{
  guint8 buffer[4];

  put_u32 (buffer, value);
  g_byte_array_append (out, buffer, 4);
}

static void
append_u64 (GByteArray *out,
            guint64     value)
{
  guint8 buffer[8];

  put_u64 (buffer, value);
  g_byte_array_append (out, buffer, 8);
}

static void
append_data (GByteArray   *out,
             const guint8 *data,
             gsize         len)
{
  append_u32 (out, (guint32) len);
  g_byte_array_append (out, data, len);
}

static void
append_string (GByteArray *out,
               const char *text)
{
  append_data (out, (const guint8 *) text, strlen (text));
}

static void
append_bytes (GByteArray *out,
              GBytes     *bytes)
{
  gsize len;
  const guint8 *data = g_bytes_get_data (bytes, &len);

  append_data (out, data, len);
}

static void
append_table (GByteArray              *out,
              const QStoreChangeTable *table)
{
  guint n_names = table->names != NULL ? g_strv_length (table->names) : 0;

  append_string (out, table->schema);
  append_string (out, table->table);
  append_u32 (out, n_names);
  for (guint i = 0; i < n_names; i++)
    append_string (out, table->names[i]);
  append_u32 (out, n_names > 0 ? table->n_key : 0);
  for (guint i = 0; n_names > 0 && i < table->n_key; i++)
    append_u32 (out, table->key[i]);
}

static guint64
checksum (const guint8 *data,
          gsize         len)
{
  guint64 hash = FNV_OFFSET;

  for (gsize i = 0; i < len; i++)
    hash = (hash ^ data[i]) * FNV_PRIME;
  return hash;
}

void
qstore_change_log_encode (GByteArray *out,
                          guint64     tx_id,
                          gint64      time,
                          GArray     *changes)
{
  g_autoptr(GPtrArray) tables = g_ptr_array_new ();
  g_autoptr(GArray) table_of = g_array_new (FALSE, FALSE, sizeof (guint));
  const QStoreChangeTable *last = NULL;
  guint last_index = 0, n_rows = 0;
  gsize start = out->len;

  /* Room for it all at once: a transaction of a million rows would
   * otherwise be copied at each doubling. */
  if (changes != NULL)
    {
      gsize size = 64;

      for (guint i = 0; i < changes->len; i++)
        {
          const QStoreChange *change = &g_array_index (changes, QStoreChange, i);

          size += 14 + (change->old_row ? g_bytes_get_size (change->old_row) : 0) +
                  (change->new_row ? g_bytes_get_size (change->new_row) : 0);
        }
      g_byte_array_set_size (out, start + size);
      g_byte_array_set_size (out, start);
    }

  g_byte_array_append (out, (const guint8 *) MAGIC, MAGIC_LEN);
  append_u64 (out, tx_id);
  append_u64 (out, (guint64) time);
  append_u8 (out, changes == NULL ? FLAG_INCOMPLETE : 0);

  /* Each table once, in the order its first change comes. */
  for (guint i = 0; changes != NULL && i < changes->len; i++)
    {
      const QStoreChange *change = &g_array_index (changes, QStoreChange, i);
      guint index = G_MAXUINT;

      if (change->table != last)
        {
          if (qstore_change_log_is_bookkeeping (change->table->table))
            {
              g_array_append_val (table_of, index);
              continue;
            }
          if (!g_ptr_array_find (tables, change->table, &last_index))
            {
              last_index = tables->len;
              g_ptr_array_add (tables, change->table);
            }
          last = change->table;
        }
      index = last_index;
      g_array_append_val (table_of, index);
      n_rows++;
    }

  append_u32 (out, tables->len);
  for (guint i = 0; i < tables->len; i++)
    append_table (out, tables->pdata[i]);

  append_u32 (out, n_rows);
  for (guint i = 0; changes != NULL && i < changes->len; i++)
    {
      const QStoreChange *change = &g_array_index (changes, QStoreChange, i);
      guint index = g_array_index (table_of, guint, i);

      if (index == G_MAXUINT)
        continue;
      append_u32 (out, index);
      append_u8 (out, (guint8) change->op);
      append_u8 (out, (change->old_row != NULL ? HAS_OLD : 0) |
                      (change->new_row != NULL ? HAS_NEW : 0));
      if (change->old_row != NULL)
        append_bytes (out, change->old_row);
      if (change->new_row != NULL)
        append_bytes (out, change->new_row);
    }

  append_u64 (out, checksum (out->data + start, out->len - start));
}

/* Reading */

typedef struct
{
  const guint8 *start;
  const guint8 *p;
  const guint8 *end;
  const char   *problem;   /* what was malformed, for the message */
} Reader;

static gboolean
read_fail (Reader     *r,
           const char *problem)
{
  if (r->problem == NULL)
    r->problem = problem;
  return FALSE;
}

static gboolean
read_raw (Reader        *r,
          gsize          len,
          const guint8 **data)
{
  if ((gsize) (r->end - r->p) < len)
    return read_fail (r, "it ends too early");
  *data = r->p;
  r->p += len;
  return TRUE;
}

static gboolean
read_u8 (Reader *r,
         guint8 *value)
{
  const guint8 *p;

  if (!read_raw (r, 1, &p))
    return FALSE;
  *value = p[0];
  return TRUE;
}

static gboolean
read_u32 (Reader  *r,
          guint32 *value)
{
  const guint8 *p;

  if (!read_raw (r, 4, &p))
    return FALSE;
  *value = (guint32) p[0] << 24 | (guint32) p[1] << 16 | (guint32) p[2] << 8 | p[3];
  return TRUE;
}

static gboolean
read_u64 (Reader  *r,
          guint64 *value)
{
  const guint8 *p;

  if (!read_raw (r, 8, &p))
    return FALSE;
  *value = get_u64 (p);
  return TRUE;
}

/* A count of items of at least @min_size bytes each: never more than
 * what is left could hold, so a damaged count cannot make us allocate. */
static gboolean
read_count (Reader  *r,
            gsize    min_size,
            guint32 *count)
{
  if (!read_u32 (r, count))
    return FALSE;
  if ((gsize) *count > (gsize) (r->end - r->p) / min_size)
    return read_fail (r, "a count is larger than the entry");
  return TRUE;
}

static char *
read_string (Reader *r)
{
  const guint8 *data;
  guint32 len;

  if (!read_count (r, 1, &len) || !read_raw (r, len, &data))
    return NULL;
  if (!g_utf8_validate_len ((const char *) data, len, NULL) || memchr (data, 0, len) != NULL)
    {
      read_fail (r, "a name is not text");
      return NULL;
    }
  return g_strndup ((const char *) data, len);
}

static QStoreChangeTable *
read_table (Reader *r)
{
  g_autofree char *schema = NULL, *table = NULL;
  g_auto(GStrv) names = NULL;
  g_autofree guint *key = NULL;
  guint32 n_names, n_key;

  if (!(schema = read_string (r)) || !(table = read_string (r)) || !read_count (r, 4, &n_names))
    return NULL;
  if (n_names > 0)
    {
      names = g_new0 (char *, n_names + 1);
      for (guint i = 0; i < n_names; i++)
        if (!(names[i] = read_string (r)))
          return NULL;
    }
  if (!read_count (r, 4, &n_key))
    return NULL;
  if (n_names == 0 && n_key > 0)
    {
      read_fail (r, "an undescribed table has a key");
      return NULL;
    }
  key = g_new0 (guint, MAX (n_key, 1));
  for (guint i = 0; i < n_key; i++)
    {
      guint32 position;

      if (!read_u32 (r, &position))
        return NULL;
      if (position >= n_names)
        {
          read_fail (r, "a key names a value the rows do not have");
          return NULL;
        }
      key[i] = position;
    }
  return qstore_change_table_new_described (schema, table, g_steal_pointer (&names),
                                            g_steal_pointer (&key), n_key);
}

/* A row image: its bytes, in the entry's memory, and they must decode to
 * as many values as the table has names. */
static GBytes *
read_image (Reader                  *r,
            GBytes                  *entry,
            const QStoreChangeTable *table)
{
  QStoreRowReader row;
  const guint8 *data;
  guint32 len;
  guint n_values;

  if (!read_count (r, 1, &len) || !read_raw (r, len, &data))
    return NULL;
  if (!qstore_row_reader_init (&row, data, len, &n_values, NULL))
    {
      read_fail (r, "a row does not decode");
      return NULL;
    }
  for (guint i = 0; i < n_values; i++)
    {
      QStoreValue value;

      if (!qstore_row_reader_next (&row, &value, NULL))
        {
          read_fail (r, "a row does not decode");
          return NULL;
        }
    }
  if (table->names != NULL && n_values != g_strv_length (table->names))
    {
      read_fail (r, "a row has more or fewer values than its table names");
      return NULL;
    }
  return g_bytes_new_from_bytes (entry, data - r->start, len);
}

static GArray *
changes_new (void)
{
  GArray *changes = g_array_new (FALSE, FALSE, sizeof (QStoreChange));

  g_array_set_clear_func (changes, qstore_change_clear);
  return changes;
}

QStoreChangeSet *
qstore_change_log_decode (guint64    tx_id,
                          GBytes    *entry,
                          gboolean  *complete,
                          GError   **error)
{
  g_autoptr(GPtrArray) tables = g_ptr_array_new_with_free_func ((GDestroyNotify) qstore_change_table_unref);
  g_autoptr(GArray) changes = changes_new ();
  const guint8 *magic;
  guint64 stored_tx, time;
  guint32 n_tables, n_rows;
  guint8 flags;
  gsize len;
  Reader r = { 0 };

  r.start = r.p = g_bytes_get_data (entry, &len);
  r.end = r.start + len;

  if (len < MAGIC_LEN + 8 || memcmp (r.start, MAGIC, MAGIC_LEN) != 0)
    {
      read_fail (&r, "it is not a change log entry");
      goto malformed;
    }
  if (get_u64 (r.end - 8) != checksum (r.start, len - 8))
    {
      read_fail (&r, "its checksum does not match");
      goto malformed;
    }
  r.end -= 8;

  if (!read_raw (&r, MAGIC_LEN, &magic) || !read_u64 (&r, &stored_tx) ||
      !read_u64 (&r, &time) || !read_u8 (&r, &flags))
    goto malformed;
  if (stored_tx != tx_id)
    {
      read_fail (&r, "it is filed under another transaction");
      goto malformed;
    }

  if (!read_count (&r, 16, &n_tables))
    goto malformed;
  for (guint i = 0; i < n_tables; i++)
    {
      QStoreChangeTable *table = read_table (&r);

      if (table == NULL)
        goto malformed;
      g_ptr_array_add (tables, table);
    }

  if (!read_count (&r, 6, &n_rows))
    goto malformed;
  for (guint i = 0; i < n_rows; i++)
    {
      QStoreChange change = { 0 };
      guint32 index;
      guint8 op, images, expected;

      if (!read_u32 (&r, &index) || !read_u8 (&r, &op) || !read_u8 (&r, &images))
        goto malformed;
      if (index >= tables->len || op > QSTORE_CHANGE_DELETE)
        {
          read_fail (&r, "a row names a table or an operation that does not exist");
          goto malformed;
        }
      expected = op == QSTORE_CHANGE_INSERT ? HAS_NEW
               : op == QSTORE_CHANGE_DELETE ? HAS_OLD : HAS_OLD | HAS_NEW;
      if (images != expected)
        {
          read_fail (&r, "a row lacks an image its operation has");
          goto malformed;
        }
      change.table = qstore_change_table_ref (tables->pdata[index]);
      change.op = op;
      g_array_append_val (changes, change);
      if ((images & HAS_OLD) &&
          !(g_array_index (changes, QStoreChange, changes->len - 1).old_row =
              read_image (&r, entry, tables->pdata[index])))
        goto malformed;
      if ((images & HAS_NEW) &&
          !(g_array_index (changes, QStoreChange, changes->len - 1).new_row =
              read_image (&r, entry, tables->pdata[index])))
        goto malformed;
    }
  if (r.p != r.end)
    {
      read_fail (&r, "it has bytes after its last row");
      goto malformed;
    }

  *complete = (flags & FLAG_INCOMPLETE) == 0;
  return qstore_change_set_new_take (tx_id, (gint64) time, g_steal_pointer (&changes));

malformed:
  g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_CORRUPT,
               "The change log entry of transaction %" G_GUINT64_FORMAT " is damaged: %s",
               tx_id, r.problem != NULL ? r.problem : "it does not parse");
  return NULL;
}
