/* qstore-pending.c: the write buffer of one transaction
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "qstore-bounds.h"
#include "qstore-pending-entry-private.h"
#include "qstore-pending-private.h"
#include "qstore-prefault-private.h"

#define FIRST_BLOCK_SIZE  (4 * 1024)
#define MAX_BLOCK_SIZE    (1024 * 1024)
#define KEEP_BLOCK_SIZE   (64 * 1024)
#define PREFAULT_MIN      (256 * 1024)

/* Sizes chosen so a leaf takes just under 1 KiB, within what malloc
 * keeps per thread for reuse: wide enough that the tree stays 4 levels deep for millions
 * of keys, small enough that an insert's memmove is cheap. */
#define LEAF_MAX  62
#define INNER_MAX 64

typedef struct
{
  guint8 *data;
  gsize   used;
  gsize   size;
} Block;

typedef struct
{
  guint16 n;         /* entries in a leaf, children in an inner node */
  guint8  is_leaf;
} Node;

typedef struct _Leaf Leaf;

/* Each slot keeps the first 8 key bytes of its entry as a number beside
 * the pointer, as separators do: a binary search over a leaf then reads
 * entries (a cache miss each, in random order) only among keys that share
 * those bytes. */
struct _Leaf
{
  Node          hdr;
  Leaf         *prev;
  Leaf         *next;
  guint64       prefixes[LEAF_MAX];
  const guint8 *slots[LEAF_MAX];
};

G_STATIC_ASSERT (sizeof (Leaf) <= 1024);

/* Separator i is the smallest key of children[i + 1] when it was split
 * off: every key of children[i] sorts before it, every key of
 * children[i + 1] at or after it. Separators point at entries, whose key
 * bytes never change or move while the buffer lives, even when the entry
 * itself is undone. Each also keeps the first 8 key bytes as a number, so
 * descending the tree rarely reads an entry (a cache miss each). */
typedef struct
{
  guint64       prefix;
  const guint8 *entry;
} Sep;

typedef struct
{
  Node          hdr;
  Sep           seps[INNER_MAX - 1];
  Node         *children[INNER_MAX];
} Inner;

#define HINT_KEY_MAX 64

/* The position the last lookup found (or would insert) a key at: the
 * write that usually follows a lookup of the same key (a uniqueness check,
 * then the write) starts there instead of descending again. Valid while
 * the tree's stamp is the one it was taken at. */
typedef struct
{
  guint64  stamp;
  Leaf    *leaf;
  guint    pos;
  gboolean found;
  gsize    key_len;
  guint8   key[HINT_KEY_MAX];
} Hint;

typedef struct
{
  Node    *root;
  gsize    n_entries;
  guint64  stamp;
  Hint     hint;
  Leaf    *spare;     /* the root leaf of an emptied tree, for the next */
} Tree;

/* A write not in the tree yet, with its key's prefix for sorting. */
typedef struct
{
  guint64       prefix;
  const guint8 *entry;
} Deferred;

/* Writes to a store the transaction has not read are only appended: an
 * index store is typically written row after row and read by nobody
 * before the commit, and sorting its entries once costs much less than
 * inserting them one by one into a tree in random order (a cache miss per
 * level and per tie). The first read of the store, a savepoint or the
 * commit sorts them into the tree (see store_flush()).
 *
 * A store stays in the buffer after its transaction, idle (its tree
 * empty, its handle kept but not bound), so the next transaction that
 * writes it does not allocate it, its name, its array of deferred writes
 * and its first leaf again, nor look its handle up by name. */
typedef struct
{
  char     *name;
  QStoreKV *kv;         /* the handle the commit writes through, when bound */
  gboolean  bound;      /* kv is this transaction's: FALSE while idle */
  Tree      tree;
  GArray   *deferred;   /* Deferred, in write order; NULL when none yet */
  gboolean  read;       /* read in this transaction: writes go to the tree */
} Store;

/* Beyond this many stores, a transaction's end forgets them all; an
 * array of deferred writes longer than this is not kept. */
#define MAX_STORES_KEPT 32
#define MAX_DEFERRED_KEPT 1024

struct _QStorePending
{
  GArray     *blocks;       /* Block */
  gsize       next_block_size;
  GPtrArray  *stores;       /* Store */
  GHashTable *by_name;      /* name → id + 1 */
  GHashTable *by_kv;        /* QStoreKV (ref) → id + 1 */
  QStoreKV   *last_kv;
  guint       last_store;
  gsize       n_entries;
  gboolean    undo;
};

/* Entries */

static inline Sep
sep_new (const guint8 *entry)
{
  gsize key_len;
  const guint8 *key = entry_key (entry, &key_len);
  Sep sep = { key_prefix (key, key_len), entry };

  return sep;
}

const guint8 *
qstore_pending_entry_get_key (const guint8 *entry,
                              gsize        *key_len)
{
  return entry_key (entry, key_len);
}

const guint8 *
qstore_pending_entry_get_value (const guint8 *entry,
                                gsize        *value_len)
{
  EntryInfo info;

  entry_parse (entry, &info);
  *value_len = info.value_len;
  /* NULL only for a delete: an empty value still points into the entry. */
  return info.value;
}

gboolean
qstore_pending_entry_is_tombstone (const guint8 *entry)
{
  gsize key_len;
  const guint8 *key = entry_key (entry, &key_len);

  return (key[key_len] & ENTRY_TOMBSTONE) != 0;
}

/* Arena */

static guint8 *
arena_alloc (QStorePending *self,
             gsize          size)
{
  Block *last = NULL;
  Block block;
  guint8 *p;

  if (self->blocks->len > 0)
    last = &g_array_index (self->blocks, Block, self->blocks->len - 1);
  if (last != NULL && last->size - last->used >= size)
    {
      p = last->data + last->used;
      last->used += size;
      return p;
    }

  block.size = MAX (self->next_block_size, size);
  block.data = g_malloc (block.size);
  if (block.size >= PREFAULT_MIN)
    qstore_prefault (block.data, block.size);
  block.used = size;
  self->next_block_size = MIN (self->next_block_size * 2, MAX_BLOCK_SIZE);
  g_array_append_val (self->blocks, block);
  return block.data;
}

static void
arena_clear (QStorePending *self)
{
  guint keep = 0;

  /* Keep one small block so short transactions do not allocate each time. */
  if (self->blocks->len > 0 &&
      g_array_index (self->blocks, Block, 0).size <= KEEP_BLOCK_SIZE)
    keep = 1;
  for (guint i = keep; i < self->blocks->len; i++)
    g_free (g_array_index (self->blocks, Block, i).data);
  g_array_set_size (self->blocks, keep);
  if (keep)
    g_array_index (self->blocks, Block, 0).used = 0;
  self->next_block_size = keep ? MIN (g_array_index (self->blocks, Block, 0).size * 2,
                                      MAX_BLOCK_SIZE)
                               : FIRST_BLOCK_SIZE;
}

/* B+ tree */

static Leaf *
leaf_new (void)
{
  Leaf *leaf = g_new (Leaf, 1);

  leaf->hdr.n = 0;
  leaf->hdr.is_leaf = TRUE;
  leaf->prev = leaf->next = NULL;
  return leaf;
}

static Inner *
inner_new (void)
{
  Inner *inner = g_new (Inner, 1);

  inner->hdr.n = 0;
  inner->hdr.is_leaf = FALSE;
  return inner;
}

static void
node_free (Node *node)
{
  if (node == NULL)
    return;
  if (!node->is_leaf)
    {
      Inner *inner = (Inner *) node;

      for (guint i = 0; i < inner->hdr.n; i++)
        node_free (inner->children[i]);
    }
  g_free (node);
}

static Leaf *
tree_leaf_new (Tree *tree)
{
  Leaf *leaf = g_steal_pointer (&tree->spare);

  if (leaf == NULL)
    return leaf_new ();
  leaf->hdr.n = 0;
  leaf->prev = leaf->next = NULL;
  return leaf;
}

/* Empties @tree; a short transaction's store then allocates no leaf the
 * next time. */
static void
tree_clear (Tree *tree)
{
  if (tree->root != NULL && tree->root->is_leaf && tree->spare == NULL)
    tree->spare = (Leaf *) tree->root;
  else
    node_free (tree->root);
  tree->root = NULL;
  tree->n_entries = 0;
  tree->stamp++;
}

/* The first slot whose key is >= @key (@or_equal) or > @key; @prefix is
 * key_prefix() of @key. */
static inline guint
leaf_search (const Leaf   *leaf,
             const guint8 *key,
             gsize         key_len,
             guint64       prefix,
             gboolean      or_equal)
{
  guint lo = 0, hi = leaf->hdr.n;

  while (lo < hi)
    {
      guint mid = (lo + hi) / 2;
      guint64 mid_prefix = leaf->prefixes[mid];
      int cmp;

      if (mid_prefix != prefix)
        cmp = mid_prefix < prefix ? -1 : 1;
      else
        cmp = compare_entry_same_prefix (leaf->slots[mid], key, key_len);

      if (cmp < 0 || (!or_equal && cmp == 0))
        lo = mid + 1;
      else
        hi = mid;
    }
  return lo;
}

static inline void
leaf_insert_at (Leaf         *leaf,
                guint         pos,
                const guint8 *entry,
                guint64       prefix)
{
  guint n = leaf->hdr.n;

  memmove (&leaf->slots[pos + 1], &leaf->slots[pos], (n - pos) * sizeof (gpointer));
  memmove (&leaf->prefixes[pos + 1], &leaf->prefixes[pos], (n - pos) * sizeof (guint64));
  leaf->slots[pos] = entry;
  leaf->prefixes[pos] = prefix;
  leaf->hdr.n++;
}

/* The child of @inner that holds @key: the number of separators <= @key. */
static inline guint
inner_search (const Inner  *inner,
              const guint8 *key,
              gsize         key_len,
              guint64       prefix)
{
  guint lo = 0, hi = inner->hdr.n - 1;

  while (lo < hi)
    {
      guint mid = (lo + hi) / 2;
      const Sep *sep = &inner->seps[mid];

      if (sep->prefix < prefix ||
          (sep->prefix == prefix &&
           compare_entry_same_prefix (sep->entry, key, key_len) <= 0))
        lo = mid + 1;
      else
        hi = mid;
    }
  return lo;
}

static Leaf *
tree_find_leaf (const Tree   *tree,
                const guint8 *key,
                gsize         key_len,
                guint64       prefix)
{
  Node *node = tree->root;

  if (node == NULL)
    return NULL;
  while (!node->is_leaf)
    {
      Inner *inner = (Inner *) node;

      node = inner->children[inner_search (inner, key, key_len, prefix)];
    }
  return (Leaf *) node;
}

/* Whether slot @pos of @leaf holds @key, whose prefix is @prefix. */
static inline gboolean
leaf_holds (const Leaf   *leaf,
            guint         pos,
            const guint8 *key,
            gsize         key_len,
            guint64       prefix)
{
  return pos < leaf->hdr.n && leaf->prefixes[pos] == prefix &&
         compare_entry_same_prefix (leaf->slots[pos], key, key_len) == 0;
}

static const guint8 *
tree_lookup (Tree         *tree,
             const guint8 *key,
             gsize         key_len)
{
  guint64 prefix = key_prefix (key, key_len);
  Leaf *leaf = tree_find_leaf (tree, key, key_len, prefix);
  Hint *hint = &tree->hint;
  guint pos;

  if (leaf == NULL)
    return NULL;
  pos = leaf_search (leaf, key, key_len, prefix, TRUE);

  hint->leaf = NULL;
  if (key_len <= HINT_KEY_MAX)
    {
      hint->stamp = tree->stamp;
      hint->leaf = leaf;
      hint->pos = pos;
      hint->found = leaf_holds (leaf, pos, key, key_len, prefix);
      hint->key_len = key_len;
      memcpy (hint->key, key, key_len);
      return hint->found ? leaf->slots[pos] : NULL;
    }
  return leaf_holds (leaf, pos, key, key_len, prefix) ? leaf->slots[pos] : NULL;
}

typedef struct
{
  const guint8 *sep;
  Node         *right;
} Split;

/* Splits favour the direction keys arrive in: appending past the last key
 * of the rightmost node (or before the first key of the leftmost one) starts
 * a new node instead of halving a full one, so ascending and descending
 * loads fill nodes completely. */
static const guint8 *
leaf_insert (Leaf         *leaf,
             const guint8 *entry,
             const guint8 *key,
             gsize         key_len,
             guint64       prefix,
             gboolean      rightmost,
             gboolean      leftmost,
             Split        *split,
             gboolean     *inserted)
{
  guint n = leaf->hdr.n;
  guint pos = leaf_search (leaf, key, key_len, prefix, TRUE);
  Leaf *right;

  if (leaf_holds (leaf, pos, key, key_len, prefix))
    {
      const guint8 *old = leaf->slots[pos];

      leaf->slots[pos] = entry;
      return old;
    }

  *inserted = TRUE;
  if (n < LEAF_MAX)
    {
      leaf_insert_at (leaf, pos, entry, prefix);
      return NULL;
    }

  right = leaf_new ();
  right->prev = leaf;
  right->next = leaf->next;
  if (leaf->next != NULL)
    leaf->next->prev = right;
  leaf->next = right;

  if (rightmost && pos == n)
    leaf_insert_at (right, 0, entry, prefix);
  else if (leftmost && pos == 0)
    {
      memcpy (right->slots, leaf->slots, n * sizeof (gpointer));
      memcpy (right->prefixes, leaf->prefixes, n * sizeof (guint64));
      right->hdr.n = n;
      leaf->hdr.n = 0;
      leaf_insert_at (leaf, 0, entry, prefix);
    }
  else
    {
      guint mid = LEAF_MAX / 2;
      Leaf *target = leaf;

      memcpy (right->slots, &leaf->slots[mid], (n - mid) * sizeof (gpointer));
      memcpy (right->prefixes, &leaf->prefixes[mid], (n - mid) * sizeof (guint64));
      right->hdr.n = n - mid;
      leaf->hdr.n = mid;
      if (pos > mid)
        {
          target = right;
          pos -= mid;
        }
      leaf_insert_at (target, pos, entry, prefix);
    }

  split->sep = right->slots[0];
  split->right = (Node *) right;
  return NULL;
}

static const guint8 *
node_insert (Node         *node,
             const guint8 *entry,
             const guint8 *key,
             gsize         key_len,
             guint64       prefix,
             gboolean      rightmost,
             gboolean      leftmost,
             Split        *split,
             gboolean     *inserted)
{
  Inner *inner = (Inner *) node;
  Split child_split = { NULL, NULL };
  Sep seps[INNER_MAX];
  Node *children[INNER_MAX + 1];
  const guint8 *old;
  guint n, i, m;
  Inner *right;

  if (node->is_leaf)
    return leaf_insert ((Leaf *) node, entry, key, key_len, prefix, rightmost, leftmost,
                        split, inserted);

  n = inner->hdr.n;
  i = inner_search (inner, key, key_len, prefix);
  old = node_insert (inner->children[i], entry, key, key_len, prefix,
                     rightmost && i == n - 1, leftmost && i == 0,
                     &child_split, inserted);
  if (child_split.right == NULL)
    return old;

  if (n < INNER_MAX)
    {
      memmove (&inner->seps[i + 1], &inner->seps[i], (n - 1 - i) * sizeof (Sep));
      memmove (&inner->children[i + 2], &inner->children[i + 1], (n - 1 - i) * sizeof (gpointer));
      inner->seps[i] = sep_new (child_split.sep);
      inner->children[i + 1] = child_split.right;
      inner->hdr.n++;
      return old;
    }

  /* Full: lay out the INNER_MAX + 1 children, then cut. */
  memcpy (seps, inner->seps, i * sizeof (Sep));
  seps[i] = sep_new (child_split.sep);
  memcpy (&seps[i + 1], &inner->seps[i], (n - 1 - i) * sizeof (Sep));
  memcpy (children, inner->children, (i + 1) * sizeof (gpointer));
  children[i + 1] = child_split.right;
  memcpy (&children[i + 2], &inner->children[i + 1], (n - 1 - i) * sizeof (gpointer));

  if (rightmost && i + 1 == n)
    m = n;          /* the new child alone goes right */
  else if (leftmost && i == 0)
    m = 2;          /* the two leftmost children stay */
  else
    m = (n + 1) / 2;

  right = inner_new ();
  inner->hdr.n = m;
  memcpy (inner->children, children, m * sizeof (gpointer));
  memcpy (inner->seps, seps, (m - 1) * sizeof (Sep));
  right->hdr.n = n + 1 - m;
  memcpy (right->children, &children[m], right->hdr.n * sizeof (gpointer));
  memcpy (right->seps, &seps[m], (right->hdr.n - 1) * sizeof (Sep));

  split->sep = seps[m - 1].entry;
  split->right = (Node *) right;
  return old;
}

/* Inserts or replaces; returns the replaced entry, NULL when @entry is new. */
static const guint8 *
tree_set (Tree         *tree,
          const guint8 *entry)
{
  Split split = { NULL, NULL };
  gboolean inserted = FALSE;
  const guint8 *old;
  const guint8 *key;
  gsize key_len;
  guint64 prefix;

  tree->stamp++;
  key = entry_key (entry, &key_len);
  prefix = key_prefix (key, key_len);
  if (tree->root == NULL)
    {
      Leaf *leaf = tree_leaf_new (tree);

      leaf_insert_at (leaf, 0, entry, prefix);
      tree->root = (Node *) leaf;
      tree->n_entries = 1;
      return NULL;
    }

  old = node_insert (tree->root, entry, key, key_len, prefix, TRUE, TRUE, &split,
                     &inserted);
  if (split.right != NULL)
    {
      Inner *root = inner_new ();

      root->hdr.n = 2;
      root->children[0] = tree->root;
      root->children[1] = split.right;
      root->seps[0] = sep_new (split.sep);
      tree->root = (Node *) root;
    }
  if (inserted)
    tree->n_entries++;
  return old;
}

/* Removing never merges nodes: removals only come from undoing writes,
 * which is rare, and empty leaves cost nothing but a skip. */
static gboolean
tree_remove (Tree         *tree,
             const guint8 *key,
             gsize         key_len)
{
  guint64 prefix = key_prefix (key, key_len);
  Leaf *leaf = tree_find_leaf (tree, key, key_len, prefix);
  guint pos;

  if (leaf == NULL)
    return FALSE;
  pos = leaf_search (leaf, key, key_len, prefix, TRUE);
  if (!leaf_holds (leaf, pos, key, key_len, prefix))
    return FALSE;
  memmove (&leaf->slots[pos], &leaf->slots[pos + 1],
           (leaf->hdr.n - pos - 1) * sizeof (gpointer));
  memmove (&leaf->prefixes[pos], &leaf->prefixes[pos + 1],
           (leaf->hdr.n - pos - 1) * sizeof (guint64));
  leaf->hdr.n--;
  tree->n_entries--;
  tree->stamp++;
  return TRUE;
}

static Leaf *
tree_first_leaf (const Tree *tree,
                 gboolean    last)
{
  Node *node = tree->root;

  if (node == NULL)
    return NULL;
  while (!node->is_leaf)
    {
      Inner *inner = (Inner *) node;

      node = inner->children[last ? inner->hdr.n - 1 : 0];
    }
  return (Leaf *) node;
}

/* Deferred writes */

static gint
compare_deferred (gconstpointer a,
                  gconstpointer b,
                  gpointer      user_data)
{
  const Deferred *da = a;
  const Deferred *db = b;
  const guint8 *key;
  gsize key_len;

  if (da->prefix != db->prefix)
    return da->prefix < db->prefix ? -1 : 1;
  key = entry_key (db->entry, &key_len);
  return compare_entry_same_prefix (da->entry, key, key_len);
}

#define SMALL_SORT 16

/* Sorts @items stably by key: a radix sort on the prefixes, which reads
 * no entry, then a stable sort by the whole key of each run of equal
 * prefixes (usually short: only these read their entries). */
static void
sort_deferred (Deferred *items,
               gsize     n)
{
  g_autofree Deferred *tmp = NULL;
  Deferred *src = items, *dst;
  guint64 all_and = G_MAXUINT64, all_or = 0;

  /* A small commit's few writes: the radix sort's counting would cost
   * more than the sort itself. */
  if (n <= SMALL_SORT)
    {
      for (gsize i = 1; i < n; i++)
        {
          Deferred item = items[i];
          gsize j = i;

          for (; j > 0 && compare_deferred (&items[j - 1], &item, NULL) > 0; j--)
            items[j] = items[j - 1];
          items[j] = item;
        }
      return;
    }

  for (gsize i = 0; i < n; i++)
    {
      all_and &= items[i].prefix;
      all_or |= items[i].prefix;
    }

  dst = tmp = g_new (Deferred, n);
  if (n * sizeof (Deferred) >= PREFAULT_MIN)
    qstore_prefault (tmp, n * sizeof (Deferred));
  for (guint shift = 0; shift < 64; shift += 8)
    {
      gsize count[257] = { 0 };
      Deferred *swap;

      /* A byte every prefix has alike orders nothing. */
      if ((((all_and ^ all_or) >> shift) & 0xff) == 0)
        continue;
      for (gsize i = 0; i < n; i++)
        count[((src[i].prefix >> shift) & 0xff) + 1]++;
      for (guint b = 0; b < 256; b++)
        count[b + 1] += count[b];
      for (gsize i = 0; i < n; i++)
        dst[count[(src[i].prefix >> shift) & 0xff]++] = src[i];
      swap = src;
      src = dst;
      dst = swap;
    }
  if (src != items)
    memcpy (items, src, n * sizeof (Deferred));

  for (gsize i = 0; i < n; )
    {
      gsize j = i + 1;

      while (j < n && items[j].prefix == items[i].prefix)
        j++;
      if (j - i > 1)
        g_qsort_with_data (&items[i], j - i, sizeof (Deferred), compare_deferred, NULL);
      i = j;
    }
}

/* How many of @n nodes go into the next parent, at most @max each, and
 * never one alone (a parent has two children or more). */
static guint
group_size (gsize n,
            guint max)
{
  if (n <= max)
    return n;
  if (n - max < 2)
    return max - 1;
  return max;
}

/* Builds the tree of an empty store from unique entries in key order,
 * every node full: reads no entry, the prefixes being known. */
static void
tree_build (Tree           *tree,
            const Deferred *items,
            gsize           n)
{
  g_autoptr(GPtrArray) level = NULL;
  g_autoptr(GArray) firsts = NULL;
  Leaf *prev = NULL;

  g_assert (tree->root == NULL);

  /* A short transaction's store fits one leaf: no level to build. */
  if (n > 0 && n <= LEAF_MAX)
    {
      Leaf *leaf = tree_leaf_new (tree);

      for (guint k = 0; k < n; k++)
        {
          leaf->slots[k] = items[k].entry;
          leaf->prefixes[k] = items[k].prefix;
        }
      leaf->hdr.n = n;
      tree->root = &leaf->hdr;
      tree->n_entries = n;
      tree->stamp++;
      return;
    }

  level = g_ptr_array_new ();
  firsts = g_array_new (FALSE, FALSE, sizeof (Sep));
  for (gsize i = 0; i < n; )
    {
      guint take = group_size (n - i, LEAF_MAX);
      Leaf *leaf = leaf_new ();
      Sep first = { items[i].prefix, items[i].entry };

      for (guint k = 0; k < take; k++)
        {
          leaf->slots[k] = items[i + k].entry;
          leaf->prefixes[k] = items[i + k].prefix;
        }
      leaf->hdr.n = take;
      leaf->prev = prev;
      if (prev != NULL)
        prev->next = leaf;
      prev = leaf;
      g_ptr_array_add (level, leaf);
      g_array_append_val (firsts, first);
      i += take;
    }

  /* Each parent's separators are the first keys of its children but the
   * first; its own first key is that of its first child. */
  while (level->len > 1)
    {
      g_autoptr(GPtrArray) parents = g_ptr_array_new ();
      g_autoptr(GArray) parent_firsts = g_array_new (FALSE, FALSE, sizeof (Sep));

      for (guint i = 0; i < level->len; )
        {
          guint take = group_size (level->len - i, INNER_MAX);
          Inner *inner = inner_new ();

          for (guint k = 0; k < take; k++)
            {
              inner->children[k] = level->pdata[i + k];
              if (k > 0)
                inner->seps[k - 1] = g_array_index (firsts, Sep, i + k);
            }
          inner->hdr.n = take;
          g_ptr_array_add (parents, inner);
          g_array_append_val (parent_firsts, g_array_index (firsts, Sep, i));
          i += take;
        }
      g_ptr_array_unref (level);
      level = g_steal_pointer (&parents);
      g_array_unref (firsts);
      firsts = g_steal_pointer (&parent_firsts);
    }

  tree->root = level->len > 0 ? level->pdata[0] : NULL;
  tree->n_entries = n;
  tree->stamp++;
}

static void
deferred_clear (Store *store)
{
  if (store->deferred != NULL && store->deferred->len > MAX_DEFERRED_KEPT)
    g_clear_pointer (&store->deferred, g_array_unref);
  else if (store->deferred != NULL)
    g_array_set_size (store->deferred, 0);
}

/* Sorts the store's deferred writes into its tree. The sort is stable, so
 * of several writes to one key the last one wins, as if each had gone to
 * the tree when made. */
static void
store_flush (QStorePending *self,
             Store         *store)
{
  GArray *deferred = store->deferred;
  Deferred *items;
  gsize n = 0;

  if (deferred == NULL || deferred->len == 0)
    return;

  items = (Deferred *) deferred->data;
  sort_deferred (items, deferred->len);
  /* The last write to each key, in place. */
  for (guint i = 0; i < deferred->len; i++)
    {
      if (i + 1 < deferred->len && items[i].prefix == items[i + 1].prefix &&
          compare_deferred (&items[i], &items[i + 1], NULL) == 0)
        continue;
      items[n++] = items[i];
    }

  if (store->tree.root == NULL)
    {
      tree_build (&store->tree, items, n);
      self->n_entries += n;
    }
  else
    {
      for (gsize i = 0; i < n; i++)
        if (tree_set (&store->tree, items[i].entry) == NULL)
          self->n_entries++;
    }
  deferred_clear (store);
}

static void
flush_all (QStorePending *self)
{
  for (guint i = 0; i < self->stores->len; i++)
    store_flush (self, g_ptr_array_index (self->stores, i));
}

/* The store, ready to be read: its tree holds every write. */
static Store *
store_for_reading (QStorePending *self,
                   guint          id)
{
  Store *store = g_ptr_array_index (self->stores, id);

  store_flush (self, store);
  store->read = TRUE;
  return store;
}

/* Cursors */

static gboolean
cursor_settle (QStorePendingCursor *cursor,
               gboolean             reverse)
{
  Leaf *leaf = cursor->leaf;

  if (!reverse)
    {
      while (leaf != NULL && cursor->slot >= leaf->hdr.n)
        {
          leaf = leaf->next;
          cursor->slot = 0;
        }
    }
  else
    {
      while (leaf != NULL && cursor->slot < 0)
        {
          leaf = leaf->prev;
          cursor->slot = leaf ? leaf->hdr.n - 1 : -1;
        }
    }
  cursor->leaf = leaf;
  return leaf != NULL;
}

gboolean
qstore_pending_seek (QStorePending       *self,
                     guint                store,
                     const guint8        *key,
                     gsize                key_len,
                     gboolean             inclusive,
                     gboolean             reverse,
                     QStorePendingCursor *cursor)
{
  Tree *tree = &store_for_reading (self, store)->tree;
  guint64 prefix;
  Leaf *leaf;

  cursor->leaf = NULL;
  cursor->slot = 0;
  if (tree->root == NULL)
    return FALSE;

  if (key == NULL)
    {
      leaf = tree_first_leaf (tree, reverse);
      cursor->leaf = leaf;
      cursor->slot = reverse ? leaf->hdr.n - 1 : 0;
      return cursor_settle (cursor, reverse);
    }

  prefix = key_prefix (key, key_len);
  leaf = tree_find_leaf (tree, key, key_len, prefix);
  cursor->leaf = leaf;
  if (!reverse)
    cursor->slot = leaf_search (leaf, key, key_len, prefix, inclusive);
  else
    cursor->slot = (int) leaf_search (leaf, key, key_len, prefix, !inclusive) - 1;
  return cursor_settle (cursor, reverse);
}

gboolean
qstore_pending_cursor_step (QStorePendingCursor *cursor,
                            gboolean             reverse)
{
  if (cursor->leaf == NULL)
    return FALSE;
  cursor->slot += reverse ? -1 : 1;
  return cursor_settle (cursor, reverse);
}

const guint8 *
qstore_pending_cursor_get_entry (const QStorePendingCursor *cursor)
{
  const Leaf *leaf = cursor->leaf;

  return leaf ? leaf->slots[cursor->slot] : NULL;
}

/* The buffer */

static void
store_free (gpointer data)
{
  Store *store = data;

  g_clear_pointer (&store->deferred, g_array_unref);
  node_free (store->tree.root);
  g_free (store->tree.spare);
  g_clear_object (&store->kv);
  g_free (store->name);
  g_free (store);
}

static void
forget_handles (QStorePending *self)
{
  GHashTableIter iter;
  gpointer kv;

  g_hash_table_iter_init (&iter, self->by_kv);
  while (g_hash_table_iter_next (&iter, &kv, NULL))
    g_object_unref (kv);
  g_hash_table_remove_all (self->by_kv);
}

QStorePending *
qstore_pending_new (void)
{
  QStorePending *self = g_new0 (QStorePending, 1);

  self->blocks = g_array_new (FALSE, FALSE, sizeof (Block));
  self->next_block_size = FIRST_BLOCK_SIZE;
  self->stores = g_ptr_array_new_with_free_func (store_free);
  self->by_name = g_hash_table_new (g_str_hash, g_str_equal);
  /* Without a destroy function: emptying it then allocates nothing. */
  self->by_kv = g_hash_table_new (NULL, NULL);
  self->last_store = QSTORE_PENDING_NO_STORE;
  return self;
}

void
qstore_pending_free (QStorePending *self)
{
  if (self == NULL)
    return;
  qstore_pending_clear (self);
  forget_handles (self);
  for (guint i = 0; i < self->blocks->len; i++)
    g_free (g_array_index (self->blocks, Block, i).data);
  g_array_unref (self->blocks);
  g_ptr_array_unref (self->stores);
  g_hash_table_unref (self->by_name);
  g_hash_table_unref (self->by_kv);
  g_free (self);
}

void
qstore_pending_clear (QStorePending *self)
{
  /* Handles are kept, one per store: a store's first handle in the next
   * transaction binds it again (qstore_pending_lookup_store()), so a
   * store dropped and created again in between is written through its
   * new handle. More handles than stores are let go of. */
  if (self->stores->len > MAX_STORES_KEPT ||
      g_hash_table_size (self->by_kv) > self->stores->len)
    forget_handles (self);
  if (self->stores->len > MAX_STORES_KEPT)
    {
      g_hash_table_remove_all (self->by_name);
      g_ptr_array_set_size (self->stores, 0);
    }
  for (guint i = 0; i < self->stores->len; i++)
    {
      Store *store = g_ptr_array_index (self->stores, i);

      tree_clear (&store->tree);
      deferred_clear (store);
      store->bound = FALSE;
      store->read = FALSE;
    }
  self->last_kv = NULL;
  self->last_store = QSTORE_PENDING_NO_STORE;
  self->n_entries = 0;
  self->undo = FALSE;
  arena_clear (self);
}

void
qstore_pending_reset (QStorePending *self)
{
  for (guint i = 0; i < self->stores->len; i++)
    {
      Store *store = g_ptr_array_index (self->stores, i);

      deferred_clear (store);
      tree_clear (&store->tree);
    }
  self->n_entries = 0;
}

gsize
qstore_pending_get_n_entries (QStorePending *self)
{
  flush_all (self);
  return self->n_entries;
}

gsize
qstore_pending_get_size (QStorePending *self)
{
  gsize size = 0;

  for (guint i = 0; i < self->blocks->len; i++)
    size += g_array_index (self->blocks, Block, i).size;
  return size;
}

void
qstore_pending_set_undo (QStorePending *self,
                         gboolean       undo)
{
  /* An undoable write records the entry it replaces: that one must be in
   * the tree. */
  if (undo && !self->undo)
    flush_all (self);
  self->undo = !!undo;
}

QStorePendingMark
qstore_pending_mark (QStorePending *self)
{
  QStorePendingMark mark = { 0, 0 };

  if (self->blocks->len > 0)
    {
      mark.block = self->blocks->len - 1;
      mark.offset = g_array_index (self->blocks, Block, mark.block).used;
    }
  return mark;
}

void
qstore_pending_undo_to (QStorePending     *self,
                        QStorePendingMark  mark)
{
  g_autoptr(GPtrArray) entries = g_ptr_array_new ();

  for (guint b = mark.block; b < self->blocks->len; b++)
    {
      Block *block = &g_array_index (self->blocks, Block, b);
      gsize offset = b == mark.block ? mark.offset : 0;

      while (offset < block->used)
        {
          EntryInfo info;

          entry_parse (block->data + offset, &info);
          g_ptr_array_add (entries, block->data + offset);
          offset += info.size;
        }
    }

  /* Newest first: each entry puts back what it replaced, so the last one
   * undone for a key (its first write after the mark) leaves the state the
   * key had at the mark. Entries undone before are walked again harmlessly:
   * their chain ends at the same state. */
  for (guint i = entries->len; i > 0; i--)
    {
      const guint8 *entry = entries->pdata[i - 1];
      EntryInfo info;
      Store *store;

      entry_parse (entry, &info);
      g_assert (info.flags & ENTRY_HAS_PREV);
      store = g_ptr_array_index (self->stores, info.store);
      if (info.prev != NULL)
        {
          if (tree_set (&store->tree, info.prev) == NULL)
            self->n_entries++;
        }
      else if (tree_remove (&store->tree, info.key, info.key_len))
        self->n_entries--;
    }
}

/* The first handle of an idle store in a transaction becomes the one its
 * commit writes through; only a write (@create) binds one. */
static gboolean
bind_store (Store    *store,
            QStoreKV *kv,
            gboolean  create)
{
  if (!create)
    return FALSE;
  g_set_object (&store->kv, kv);
  store->bound = TRUE;
  return TRUE;
}

guint
qstore_pending_lookup_store (QStorePending *self,
                             QStoreKV      *kv,
                             gboolean       create)
{
  gpointer found;
  const char *name;
  Store *store;
  guint id;

  if (kv == self->last_kv)
    return self->last_store;

  found = g_hash_table_lookup (self->by_kv, kv);
  if (found != NULL)
    {
      id = GPOINTER_TO_UINT (found) - 1;
      store = g_ptr_array_index (self->stores, id);
      if (!store->bound && !bind_store (store, kv, create))
        return QSTORE_PENDING_NO_STORE;
      self->last_kv = kv;
      self->last_store = id;
      return id;
    }

  name = qstore_kv_get_name (kv);
  found = g_hash_table_lookup (self->by_name, name);
  if (found != NULL)
    {
      id = GPOINTER_TO_UINT (found) - 1;
      store = g_ptr_array_index (self->stores, id);
      if (!store->bound && !bind_store (store, kv, create))
        return QSTORE_PENDING_NO_STORE;
    }
  else if (!create)
    return QSTORE_PENDING_NO_STORE;
  else
    {
      store = g_new0 (Store, 1);
      store->name = g_strdup (name);
      bind_store (store, kv, TRUE);
      id = self->stores->len;
      g_ptr_array_add (self->stores, store);
      g_hash_table_insert (self->by_name, store->name, GUINT_TO_POINTER (id + 1));
    }

  g_hash_table_insert (self->by_kv, g_object_ref (kv), GUINT_TO_POINTER (id + 1));
  self->last_kv = kv;
  self->last_store = id;
  return id;
}

guint
qstore_pending_get_n_stores (QStorePending *self)
{
  return self->stores->len;
}

QStoreKV *
qstore_pending_store_get_kv (QStorePending *self,
                             guint          store)
{
  return ((Store *) g_ptr_array_index (self->stores, store))->kv;
}

const char *
qstore_pending_store_get_name (QStorePending *self,
                               guint          store)
{
  return ((Store *) g_ptr_array_index (self->stores, store))->name;
}

gsize
qstore_pending_store_get_n_entries (QStorePending *self,
                                    guint          store)
{
  Store *s = g_ptr_array_index (self->stores, store);

  store_flush (self, s);
  return s->tree.n_entries;
}

guint64
qstore_pending_store_get_stamp (QStorePending *self,
                                guint          store)
{
  return ((Store *) g_ptr_array_index (self->stores, store))->tree.stamp;
}

/* Appends an entry to the arena. With undo on, *@prev_slot gets where
 * the entry it replaces is to be recorded. */
static guint8 *
entry_new (QStorePending  *self,
           guint           store_id,
           const guint8   *key,
           gsize           key_len,
           const guint8   *value,
           gsize           value_len,
           gboolean        tombstone,
           guint8        **prev_slot)
{
  guint8 flags = 0;
  guint8 *entry, *p;
  gsize size;

  if (tombstone)
    flags |= ENTRY_TOMBSTONE;
  if (self->undo)
    flags |= ENTRY_HAS_PREV;

  size = varint_len (key_len) + key_len + 1 + varint_len (store_id);
  if (self->undo)
    size += sizeof (gpointer);
  if (!tombstone)
    size += varint_len (value_len) + value_len;

  entry = p = arena_alloc (self, size);
  p = varint_put (p, key_len);
  memcpy (p, key, key_len);
  p += key_len;
  *p++ = flags;
  p = varint_put (p, store_id);
  if (self->undo)
    {
      g_assert (prev_slot != NULL);
      *prev_slot = p;
      p += sizeof (gpointer);
    }
  if (!tombstone)
    {
      p = varint_put (p, value_len);
      if (value_len > 0)
        memcpy (p, value, value_len);
    }
  return entry;
}

void
qstore_pending_write (QStorePending *self,
                      guint          store_id,
                      const guint8  *key,
                      gsize          key_len,
                      const guint8  *value,
                      gsize          value_len,
                      gboolean       tombstone)
{
  Store *store = g_ptr_array_index (self->stores, store_id);
  Tree *tree = &store->tree;
  Hint *hint = &tree->hint;
  guint64 prefix = key_prefix (key, key_len);
  const guint8 *old = NULL;
  guint8 *entry, *prev_slot = NULL;
  Leaf *leaf;
  guint pos = 0;

  if (!store->read && !self->undo)
    {
      Deferred d;

      d.prefix = prefix;
      d.entry = entry_new (self, store_id, key, key_len, value, value_len, tombstone,
                           NULL);
      if (store->deferred == NULL)
        store->deferred = g_array_sized_new (FALSE, FALSE, sizeof (Deferred), 64);
      g_array_append_val (store->deferred, d);
      tree->stamp++;
      return;
    }

  /* One descent serves the common cases: a key already there, or a leaf
   * with room; none when the last lookup was of this key. Only a split
   * goes through tree_set() from the root. */
  if (hint->leaf != NULL && hint->stamp == tree->stamp &&
      hint->key_len == key_len && memcmp (hint->key, key, key_len) == 0)
    {
      leaf = hint->leaf;
      pos = hint->pos;
      if (hint->found)
        old = leaf->slots[pos];
    }
  else
    {
      leaf = tree_find_leaf (tree, key, key_len, prefix);
      if (leaf != NULL)
        {
          pos = leaf_search (leaf, key, key_len, prefix, TRUE);
          if (leaf_holds (leaf, pos, key, key_len, prefix))
            old = leaf->slots[pos];
        }
    }

  /* Without undo nothing will ever walk back over the old entry, so a
   * same-sized value is overwritten where it is: repeated updates of one
   * row do not grow the arena. */
  if (old != NULL && !self->undo && !tombstone)
    {
      EntryInfo info;

      entry_parse (old, &info);
      if (info.value != NULL && info.value_len == value_len)
        {
          memcpy ((guint8 *) info.value, value, value_len);
          tree->stamp++;
          return;
        }
    }

  entry = entry_new (self, store_id, key, key_len, value, value_len, tombstone, &prev_slot);

  if (old != NULL)
    {
      leaf->slots[pos] = entry;
      tree->stamp++;
    }
  else if (leaf != NULL && leaf->hdr.n < LEAF_MAX)
    {
      leaf_insert_at (leaf, pos, entry, prefix);
      tree->n_entries++;
      tree->stamp++;
      self->n_entries++;
    }
  else
    {
      old = tree_set (tree, entry);
      if (old == NULL)
        self->n_entries++;
    }
  if (prev_slot != NULL)
    memcpy (prev_slot, &old, sizeof old);
}

const guint8 *
qstore_pending_lookup (QStorePending *self,
                       guint          store,
                       const guint8  *key,
                       gsize          key_len)
{
  return tree_lookup (&store_for_reading (self, store)->tree, key, key_len);
}
