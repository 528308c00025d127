/* qstore-vtab-auto.c: a statement's automatic index over one column
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * SQLite builds an automatic index for an equality join on a column of an
 * ordinary table that no index covers, but never for a virtual table:
 * without one, every probe of the inner loop walks the whole table. A plan
 * named `auto-index:COLUMN` (see qstore-vtab-plan.c) builds this structure
 * once in a cursor's life (one run of one statement), from the rows the
 * statement reads, and answers each probe from it.
 *
 * A row's key is its value as the codec encodes keys, under the
 * comparison's collation: two values are equal as SQLite compares them
 * exactly when their keys are the same bytes (1 and 1.0 included). NULL
 * equals nothing and is left out. The rows are copied, with their data
 * keys, into one arena, so a probe reads no store.
 *
 * A number compared with a TEXT or BLOB column compares as a number or as
 * text depending on the other operand's affinity, which a virtual table
 * cannot see (`textcol = intcol` reads '01' as 1; `textcol = 1` reads 1 as
 * '1'). Such a probe returns a superset — the rows holding that number,
 * the rows holding its text, and the rows whose text SQLite may read as
 * that number — and SQLite's check of every row keeps the right ones. For
 * that, a text made of digits alone is also listed under its integer, and
 * any other text with a digit in it goes with every such probe.
 */
#include "config.h"

#include <string.h>

#include "qstore-error.h"
#include "qstore-i18n-private.h"
#include "qstore-vtab-auto-private.h"
#include "qstore-vtab-plan-private.h"

#define NO_ENTRY G_MAXUINT32

typedef struct
{
  guint32 key_off;   /* the data key, in the arena */
  guint32 key_len;
  guint32 row_off;   /* the stored row, right after it */
  guint32 row_len;
} Row;

typedef struct
{
  guint32 row;
  guint32 next;      /* the next entry of the same key, or NO_ENTRY */
} Entry;

/* One distinct key; an empty slot has head == NO_ENTRY. */
typedef struct
{
  guint32 hash;
  guint32 key_off;   /* in keys */
  guint32 key_len;
  guint32 head;
  guint32 tail;
} Slot;

struct _QStoreAutoIndex
{
  guint            column;
  QStoreCollation  collation;
  QStoreAffinity   affinity;

  GByteArray      *arena;      /* data keys and rows */
  GArray          *rows;       /* Row */
  GByteArray      *keys;       /* the distinct keys */
  GArray          *entries;    /* Entry */
  Slot            *slots;
  guint32          n_slots;    /* a power of two */
  guint32          n_keys;
  GArray          *loose;      /* guint32: texts SQLite may read as some number */
  GByteArray      *buf;        /* a key being encoded */
};

QStoreAutoIndex *
qstore_auto_index_new (guint           column,
                       QStoreCollation collation,
                       QStoreAffinity  affinity)
{
  QStoreAutoIndex *self = g_new0 (QStoreAutoIndex, 1);

  self->column = column;
  self->collation = collation;
  self->affinity = affinity;
  self->arena = g_byte_array_sized_new (4096);
  self->rows = g_array_sized_new (FALSE, FALSE, sizeof (Row), 256);
  self->keys = g_byte_array_sized_new (1024);
  self->entries = g_array_sized_new (FALSE, FALSE, sizeof (Entry), 256);
  self->n_slots = 256;
  self->slots = g_new (Slot, self->n_slots);
  for (guint32 i = 0; i < self->n_slots; i++)
    self->slots[i].head = NO_ENTRY;
  self->loose = g_array_new (FALSE, FALSE, sizeof (guint32));
  self->buf = g_byte_array_sized_new (64);
  return self;
}

void
qstore_auto_index_free (QStoreAutoIndex *self)
{
  if (self == NULL)
    return;
  g_byte_array_unref (self->arena);
  g_array_unref (self->rows);
  g_byte_array_unref (self->keys);
  g_array_unref (self->entries);
  g_free (self->slots);
  g_array_unref (self->loose);
  g_byte_array_unref (self->buf);
  g_free (self);
}

gboolean
qstore_auto_index_is_for (QStoreAutoIndex *self,
                          guint            column,
                          QStoreCollation  collation)
{
  return self->column == column && self->collation == collation;
}

gsize
qstore_auto_index_get_size (QStoreAutoIndex *self)
{
  return self->arena->len + self->keys->len +
         self->rows->len * sizeof (Row) + self->entries->len * sizeof (Entry) +
         self->n_slots * sizeof (Slot) + self->loose->len * sizeof (guint32);
}

/* FNV-1a: keys are short. */
static guint32
hash_bytes (const guint8 *data,
            gsize         len)
{
  guint32 h = 2166136261u;

  for (gsize i = 0; i < len; i++)
    {
      h ^= data[i];
      h *= 16777619u;
    }
  return h;
}

/* The slot of @key: its own, or the empty one it would take. */
static Slot *
find_slot (QStoreAutoIndex *self,
           const guint8    *key,
           gsize            key_len,
           guint32          hash)
{
  guint32 mask = self->n_slots - 1;

  for (guint32 i = hash & mask;; i = (i + 1) & mask)
    {
      Slot *slot = &self->slots[i];

      if (slot->head == NO_ENTRY)
        return slot;
      if (slot->hash == hash && slot->key_len == key_len &&
          memcmp (self->keys->data + slot->key_off, key, key_len) == 0)
        return slot;
    }
}

static void
grow (QStoreAutoIndex *self)
{
  Slot *old = self->slots;
  guint32 n_old = self->n_slots;

  self->n_slots *= 2;
  self->slots = g_new (Slot, self->n_slots);
  for (guint32 i = 0; i < self->n_slots; i++)
    self->slots[i].head = NO_ENTRY;
  for (guint32 i = 0; i < n_old; i++)
    if (old[i].head != NO_ENTRY)
      {
        guint32 mask = self->n_slots - 1;
        guint32 j = old[i].hash & mask;

        while (self->slots[j].head != NO_ENTRY)
          j = (j + 1) & mask;
        self->slots[j] = old[i];
      }
  g_free (old);
}

static void
insert (QStoreAutoIndex *self,
        const guint8    *key,
        gsize            key_len,
        guint32          row)
{
  guint32 hash = hash_bytes (key, key_len);
  Slot *slot = find_slot (self, key, key_len, hash);
  Entry entry = { row, NO_ENTRY };
  guint32 n = self->entries->len;

  g_array_append_val (self->entries, entry);
  if (slot->head != NO_ENTRY)
    {
      /* Rows come in order: appending keeps each list ascending. */
      g_array_index (self->entries, Entry, slot->tail).next = n;
      slot->tail = n;
      return;
    }

  slot->hash = hash;
  slot->key_off = self->keys->len;
  slot->key_len = key_len;
  slot->head = slot->tail = n;
  g_byte_array_append (self->keys, key, key_len);
  if (++self->n_keys * 4 > self->n_slots * 3)
    grow (self);
}

/* What a text is to SQLite's numeric affinity, as far as this needs to
 * know: 1 with *@value set when it is surely that integer (digits alone,
 * at most 18 of them, with a sign and spaces around), 0 when it has no
 * digit (never a number), -1 when it may be some number. */
static int
text_as_integer (const guint8 *text,
                 gsize         len,
                 gint64       *value)
{
  gsize i = 0;
  gsize end = len;
  gsize n_digits = 0;
  gboolean negative = FALSE;
  gint64 v = 0;

  /* SQLite's spaces: ' ', \t, \n, \v, \f, \r. */
  while (i < end && (text[i] == ' ' || (text[i] >= '\t' && text[i] <= '\r')))
    i++;
  while (end > i && (text[end - 1] == ' ' || (text[end - 1] >= '\t' && text[end - 1] <= '\r')))
    end--;
  if (i < end && (text[i] == '+' || text[i] == '-'))
    negative = text[i++] == '-';
  for (gsize k = i; k < end; k++)
    {
      if (!g_ascii_isdigit (text[k]))
        {
          for (gsize m = 0; m < len; m++)
            if (g_ascii_isdigit (text[m]))
              return -1;
          return 0;
        }
      n_digits++;
    }
  if (n_digits == 0)
    return 0;
  if (n_digits > 18)
    return -1;
  for (gsize k = i; k < end; k++)
    v = v * 10 + (text[k] - '0');
  *value = negative ? -v : v;
  return 1;
}

gboolean
qstore_auto_index_add (QStoreAutoIndex    *self,
                       const guint8       *key,
                       gsize               key_len,
                       const guint8       *row,
                       gsize               row_len,
                       const QStoreValue  *value,
                       GError            **error)
{
  Row r;
  guint32 n = self->rows->len;

  if ((guint64) self->arena->len + key_len + row_len > G_MAXUINT32)
    {
      g_set_error_literal (error, QSTORE_ERROR, QSTORE_ERROR_FAILED,
                           _("The automatic index of a statement outgrew 4 GiB"));
      return FALSE;
    }
  r.key_off = self->arena->len;
  r.key_len = key_len;
  r.row_off = r.key_off + key_len;
  r.row_len = row_len;
  g_byte_array_append (self->arena, key, key_len);
  g_byte_array_append (self->arena, row, row_len);
  g_array_append_val (self->rows, r);

  if (value->type == QSTORE_VALUE_NULL)
    return TRUE;

  g_byte_array_set_size (self->buf, 0);
  if (!qstore_codec_append_key_value (self->buf, value, self->collation, FALSE, error))
    return FALSE;
  insert (self, self->buf->data, self->buf->len, n);

  /* Only a TEXT or BLOB column meets probes of uncertain meaning. */
  if (value->type == QSTORE_VALUE_TEXT &&
      (self->affinity == QSTORE_AFFINITY_TEXT || self->affinity == QSTORE_AFFINITY_BLOB))
    {
      QStoreValue number = { QSTORE_VALUE_INTEGER, { 0 } };

      switch (text_as_integer (value->bytes.data, value->bytes.len, &number.integer))
        {
        case 1:
          g_byte_array_set_size (self->buf, 0);
          if (!qstore_codec_append_key_value (self->buf, &number, QSTORE_COLLATION_BINARY,
                                              FALSE, error))
            return FALSE;
          insert (self, self->buf->data, self->buf->len, n);
          break;
        case -1:
          g_array_append_val (self->loose, n);
          break;
        default:
          break;
        }
    }
  return TRUE;
}

static void
append_list (QStoreAutoIndex *self,
             const guint8    *key,
             gsize            key_len,
             GArray          *matches)
{
  Slot *slot = find_slot (self, key, key_len, hash_bytes (key, key_len));

  for (guint32 e = slot->head; e != NO_ENTRY; e = g_array_index (self->entries, Entry, e).next)
    g_array_append_val (matches, g_array_index (self->entries, Entry, e).row);
}

static int
compare_rows (gconstpointer a,
              gconstpointer b)
{
  guint32 x = *(const guint32 *) a;
  guint32 y = *(const guint32 *) b;

  return (x > y) - (x < y);
}

gboolean
qstore_auto_index_probe (QStoreAutoIndex  *self,
                         sqlite3_value    *arg,
                         GArray           *matches,
                         GError          **error)
{
  Part part = { (int) self->column, self->collation, FALSE, self->affinity, FALSE };
  sqlite3_value *copy;
  gboolean certain;
  guint kept = 0;

  g_array_set_size (matches, 0);
  if (sqlite3_value_type (arg) == SQLITE_NULL)
    return TRUE;

  g_byte_array_set_size (self->buf, 0);
  if (!qstore_vtab_encode_constraint (&part, arg, self->buf, &certain, error))
    return FALSE;
  append_list (self, self->buf->data, self->buf->len, matches);
  if (certain)
    return TRUE;

  /* A number against a TEXT or BLOB column: its text, as SQLite writes
   * it, and every text that may read as some number too. */
  copy = sqlite3_value_dup (arg);
  if (copy == NULL)
    {
      g_set_error_literal (error, QSTORE_ERROR, QSTORE_ERROR_FAILED, _("Out of memory"));
      return FALSE;
    }
  {
    QStoreValue text = { QSTORE_VALUE_TEXT, { 0 } };

    text.bytes.data = sqlite3_value_text (copy);
    text.bytes.len = sqlite3_value_bytes (copy);
    g_byte_array_set_size (self->buf, 0);
    certain = text.bytes.data != NULL &&
              qstore_codec_append_key_value (self->buf, &text, self->collation, FALSE, error);
  }
  sqlite3_value_free (copy);
  if (!certain)
    {
      if (error != NULL && *error == NULL)
        g_set_error_literal (error, QSTORE_ERROR, QSTORE_ERROR_FAILED, _("Out of memory"));
      return FALSE;
    }
  append_list (self, self->buf->data, self->buf->len, matches);
  g_array_append_vals (matches, self->loose->data, self->loose->len);

  g_array_sort (matches, compare_rows);
  for (guint i = 0; i < matches->len; i++)
    {
      guint32 row = g_array_index (matches, guint32, i);

      if (kept == 0 || row != g_array_index (matches, guint32, kept - 1))
        g_array_index (matches, guint32, kept++) = row;
    }
  g_array_set_size (matches, kept);
  return TRUE;
}

void
qstore_auto_index_get_row (QStoreAutoIndex  *self,
                           guint32           n,
                           const guint8    **key,
                           gsize            *key_len,
                           const guint8    **row,
                           gsize            *row_len)
{
  const Row *r = &g_array_index (self->rows, Row, n);

  *key = self->arena->data + r->key_off;
  *key_len = r->key_len;
  *row = self->arena->data + r->row_off;
  *row_len = r->row_len;
}

/* The shelf */

typedef struct
{
  gconstpointer     owner;
  const char       *plan;
  QStoreAutoIndex  *index;
  guint             probes;
  QStoreAutoToken   token;
} Shelved;

struct _QStoreAutoShelf
{
  guint   open_cursors;
  GArray *items;   /* Shelved */
};

static void
shelved_clear (gpointer data)
{
  qstore_auto_index_free (((Shelved *) data)->index);
}

QStoreAutoShelf *
qstore_auto_shelf_new (void)
{
  QStoreAutoShelf *self = g_new0 (QStoreAutoShelf, 1);

  self->items = g_array_new (FALSE, FALSE, sizeof (Shelved));
  g_array_set_clear_func (self->items, shelved_clear);
  return self;
}

void
qstore_auto_shelf_free (QStoreAutoShelf *self)
{
  g_array_unref (self->items);
  g_free (self);
}

void
qstore_auto_shelf_opened (QStoreAutoShelf *self)
{
  self->open_cursors++;
}

void
qstore_auto_shelf_closed (QStoreAutoShelf *self)
{
  g_assert (self->open_cursors > 0);
  if (--self->open_cursors == 0 && self->items->len > 0)
    g_array_set_size (self->items, 0);
}

static gint
shelf_find (QStoreAutoShelf *self,
            gconstpointer    owner,
            const char      *plan)
{
  for (guint i = 0; i < self->items->len; i++)
    {
      Shelved *item = &g_array_index (self->items, Shelved, i);

      if (item->owner == owner && (plan == NULL || item->plan == plan))
        return (gint) i;
    }
  return -1;
}

void
qstore_auto_shelf_put (QStoreAutoShelf       *self,
                       gconstpointer          owner,
                       const char            *plan,
                       QStoreAutoIndex       *index,
                       guint                  probes,
                       const QStoreAutoToken *token)
{
  Shelved item = { owner, plan, index, probes, *token };
  gint found = shelf_find (self, owner, plan);

  if (found >= 0)
    g_array_remove_index_fast (self->items, found);
  g_array_append_val (self->items, item);
}

QStoreAutoIndex *
qstore_auto_shelf_take (QStoreAutoShelf       *self,
                        gconstpointer          owner,
                        const char            *plan,
                        const QStoreAutoToken *token,
                        guint                 *probes)
{
  gint found = shelf_find (self, owner, plan);
  Shelved *item;
  QStoreAutoIndex *index = NULL;

  *probes = 0;
  if (found < 0)
    return NULL;
  item = &g_array_index (self->items, Shelved, found);
  if (memcmp (&item->token, token, sizeof *token) == 0)
    {
      index = g_steal_pointer (&item->index);
      *probes = item->probes;
    }
  g_array_remove_index_fast (self->items, found);
  return index;
}

void
qstore_auto_shelf_forget (QStoreAutoShelf *self,
                          gconstpointer    owner)
{
  gint found;

  while ((found = shelf_find (self, owner, NULL)) >= 0)
    g_array_remove_index_fast (self->items, found);
}
