/* qstore-lmdb-check.c: what can be checked of an LMDB file without LMDB
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * LMDB trusts its file: it maps data.mdb and follows page numbers, node
 * offsets and sizes as they are, so a truncated file makes it read past
 * the end of the file (SIGBUS) and a flipped bit can send it anywhere in
 * memory. It keeps no checksums either, so damage to the bytes of a key
 * or value cannot be told from a real key or value.
 *
 * What can be checked is the structure, and that is done here with plain
 * reads of the file, never through LMDB or its map: the meta pages, and
 * every page reachable from the roots they name - that it lies inside the
 * file, says it is the page it is, is a branch or leaf page whose node
 * offsets, keys and values stay inside it, that keys come in LMDB's order
 * within each page and across the tree, that no page is reached twice or
 * is also listed as free, that overflow pages hold the values pointing at
 * them, that leaves sit at the depth the database records, and that the
 * counts of entries and pages match. A structure that passes keeps every
 * read LMDB makes inside the file.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "qstore-i18n-private.h"
#include "qstore-lmdb-check.h"

/* LMDB 0.9's file format (MDB_DATA_VERSION 1) as its mdb.c lays it out on
 * a 64-bit host; only what the checks read. */
G_STATIC_ASSERT (sizeof (size_t) == 8);

#define LMDB_MAGIC        0xBEEFC0DEu
#define LMDB_FILE_VERSION 1
#define PAGE_HEADER_SIZE  16   /* page number (8), pad (2), flags (2), lower (2), upper (2) */
#define NODE_HEADER_SIZE  8    /* size or page number (4), flags (2), key size (2) */
#define DB_RECORD_SIZE    48
#define MIN_PAGE_SIZE     512
#define MAX_PAGE_SIZE     32768
#define MAX_DEPTH         32   /* LMDB's cursor stack */
#define MAX_PROBLEMS      QSTORE_LMDB_MAX_REPORTED_PROBLEMS
#define NO_PAGE           G_MAXUINT64  /* the root of an empty database */

/* Page flags */
#define P_BRANCH   0x01
#define P_LEAF     0x02
#define P_OVERFLOW 0x04
#define P_META     0x08
/* Node flags */
#define F_BIGDATA  0x01
#define F_SUBDATA  0x02
/* Database flags */
#define DB_INTEGERKEY 0x08

/* Where things are in a meta page */
#define META_MAGIC      (PAGE_HEADER_SIZE + 0)
#define META_VERSION    (PAGE_HEADER_SIZE + 4)
#define META_DBS        (PAGE_HEADER_SIZE + 24)
#define META_LAST_PAGE  (META_DBS + 2 * DB_RECORD_SIZE)
#define META_TXNID      (META_LAST_PAGE + 8)
#define META_END        (META_TXNID + 8)

#define LMDB_MARKER_NAME "__qstore"

typedef struct
{
  guint32 pad;     /* the page size, in the free database's record of a meta page */
  guint16 flags;
  guint16 depth;
  guint64 branch_pages;
  guint64 leaf_pages;
  guint64 overflow_pages;
  guint64 entries;
  guint64 root;
} DbRecord;

typedef struct
{
  guint64  page_number;
  guint16  page_flags;
  guint32  magic;
  guint32  version;
  DbRecord free_db;
  DbRecord main_db;
  guint64  last_page;
  guint64  txnid;
} Meta;

static guint16
get16 (const guint8 *p)
{
  guint16 v;

  memcpy (&v, p, sizeof v);
  return v;
}

static guint32
get32 (const guint8 *p)
{
  guint32 v;

  memcpy (&v, p, sizeof v);
  return v;
}

static guint64
get64 (const guint8 *p)
{
  guint64 v;

  memcpy (&v, p, sizeof v);
  return v;
}

static void
parse_db (const guint8 *p,
          DbRecord     *db)
{
  db->pad = get32 (p);
  db->flags = get16 (p + 4);
  db->depth = get16 (p + 6);
  db->branch_pages = get64 (p + 8);
  db->leaf_pages = get64 (p + 16);
  db->overflow_pages = get64 (p + 24);
  db->entries = get64 (p + 32);
  db->root = get64 (p + 40);
}

static void
parse_meta (const guint8 *p,
            Meta         *meta)
{
  meta->page_number = get64 (p);
  meta->page_flags = get16 (p + 10);
  meta->magic = get32 (p + META_MAGIC);
  meta->version = get32 (p + META_VERSION);
  parse_db (p + META_DBS, &meta->free_db);
  parse_db (p + META_DBS + DB_RECORD_SIZE, &meta->main_db);
  meta->last_page = get64 (p + META_LAST_PAGE);
  meta->txnid = get64 (p + META_TXNID);
}

static void set_damage (GError     **error,
                        const char  *dir,
                        const char  *format,
                        ...) G_GNUC_PRINTF (3, 4);

static void
set_damage (GError     **error,
            const char  *dir,
            const char  *format,
            ...)
{
  g_autofree char *what = NULL;
  va_list args;

  va_start (args, format);
  what = g_strdup_vprintf (format, args);
  va_end (args);
  g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_CORRUPT,
               _("The LMDB store at “%s” is damaged: %s; restore it from a backup"),
               dir, what);
}

/* Reads exactly @len bytes at @offset; FALSE (errno set, 0 for a short
 * read) otherwise. */
static gboolean
read_at (int      fd,
         guint8  *buf,
         gsize    len,
         guint64  offset)
{
  gsize done = 0;

  while (done < len)
    {
      ssize_t n = pread (fd, buf + done, len - done, (off_t) (offset + done));

      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        {
          if (n == 0)
            errno = 0;
          return FALSE;
        }
      done += n;
    }
  return TRUE;
}

static gboolean
page_size_ok (guint32 size)
{
  return size >= MIN_PAGE_SIZE && size <= MAX_PAGE_SIZE && (size & (size - 1)) == 0;
}

/* What is wrong with a meta page, or NULL. */
static char *
meta_problem (const Meta *meta,
              guint       index,
              guint32     page_size)
{
  if (meta->magic != LMDB_MAGIC)
    return g_strdup_printf ("meta page %u does not hold LMDB's magic number", index);
  if (meta->version != LMDB_FILE_VERSION)
    return g_strdup_printf ("meta page %u gives file format %u, where LMDB 0.9 writes %d",
                            index, meta->version, LMDB_FILE_VERSION);
  if (!(meta->page_flags & P_META) || meta->page_number != index)
    return g_strdup_printf ("meta page %u has the header of another page", index);
  if (meta->free_db.pad != page_size)
    return g_strdup_printf ("meta page %u gives page size %u, where meta page 0 gives %u",
                            index, meta->free_db.pad, page_size);
  return NULL;
}

/* What is wrong with the root of @db in @meta, or NULL. */
static char *
root_problem (const DbRecord *db,
              const char     *which,
              const Meta     *meta,
              guint64         size,
              guint           page_size)
{
  if (db->root == NO_PAGE)
    return db->depth == 0 ? NULL
                          : g_strdup_printf ("the %s database has no root but depth %u",
                                             which, db->depth);
  if (db->depth == 0 || db->depth > MAX_DEPTH)
    return g_strdup_printf ("the %s database gives depth %u", which, db->depth);
  if (db->root < 2 || db->root > meta->last_page)
    return g_strdup_printf ("the root of the %s database is page %" G_GUINT64_FORMAT
                            ", which is not a data page (the last is page %" G_GUINT64_FORMAT ")",
                            which, db->root, meta->last_page);
  if ((db->root + 1) * page_size > size)
    return g_strdup_printf ("the root of the %s database, page %" G_GUINT64_FORMAT
                            ", lies beyond the end of data.mdb (%" G_GUINT64_FORMAT
                            " bytes): the file is truncated", which, db->root, size);
  return NULL;
}

/* Reads both meta pages; @newer is the one LMDB reads from. */
static gboolean
read_metas (int          fd,
            const char  *dir,
            guint64      size,
            Meta         metas[2],
            guint       *page_size,
            GError     **error)
{
  guint8 buf[META_END];
  char *problem;

  if (size < META_END)
    {
      set_damage (error, dir, "data.mdb has %" G_GUINT64_FORMAT " bytes, less than one "
                  "meta page: the file is truncated", size);
      return FALSE;
    }
  if (!read_at (fd, buf, sizeof buf, 0))
    goto io;
  parse_meta (buf, &metas[0]);
  /* Not even the first magic number: not LMDB's file at all. */
  if (metas[0].magic != LMDB_MAGIC)
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_CORRUPT,
                   _("“%s” is not a qstore store: its data.mdb is not an LMDB file (or its "
                   "first page is damaged); give the directory of a qstore store or an "
                   "empty one"), dir);
      return FALSE;
    }
  *page_size = metas[0].free_db.pad;
  if (!page_size_ok (*page_size))
    {
      set_damage (error, dir, "meta page 0 gives page size %u", *page_size);
      return FALSE;
    }
  if ((problem = meta_problem (&metas[0], 0, *page_size)) != NULL)
    goto damaged;

  if (size < *page_size + META_END)
    {
      set_damage (error, dir, "data.mdb has %" G_GUINT64_FORMAT " bytes and ends before its "
                  "second meta page: the file is truncated", size);
      return FALSE;
    }
  if (!read_at (fd, buf, sizeof buf, *page_size))
    goto io;
  parse_meta (buf, &metas[1]);
  if ((problem = meta_problem (&metas[1], 1, *page_size)) != NULL)
    goto damaged;
  return TRUE;

damaged:
  set_damage (error, dir, "%s", problem);
  g_free (problem);
  return FALSE;

io:
  {
    int err = errno;

    g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_IO,
                 _("Cannot read data.mdb of the LMDB store at “%s”: %s"), dir,
                 err ? g_strerror (err) : "the file ended early");
    return FALSE;
  }
}

static int
open_data (const char  *dir,
           guint64     *size,
           GError     **error)
{
  g_autofree char *path = g_build_filename (dir, "data.mdb", NULL);
  struct stat st;
  int fd, err;

  fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    {
      err = errno;
      if (err != ENOENT)
        g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_IO,
                     _("Cannot read data.mdb of the LMDB store at “%s”: %s"),
                     dir, g_strerror (err));
      *size = 0;
      return -1;
    }
  if (fstat (fd, &st) != 0 || !S_ISREG (st.st_mode))
    {
      close (fd);
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_CORRUPT,
                   _("“%s” is not a qstore store: its data.mdb is not a regular file"), dir);
      return -1;
    }
  *size = st.st_size;
  return fd;
}

gboolean
qstore_lmdb_check_meta (const char          *dir,
                        QStoreLmdbFileInfo  *info,
                        GError             **error)
{
  GError *local_error = NULL;
  const Meta *newer;
  char *problem;
  Meta metas[2];
  guint page_size;
  guint64 size;
  int fd;

  memset (info, 0, sizeof *info);
  fd = open_data (dir, &size, &local_error);
  if (fd < 0)
    {
      if (local_error != NULL)
        {
          g_propagate_error (error, local_error);
          return FALSE;
        }
      info->empty = TRUE;
      return TRUE;
    }
  if (size == 0)
    {
      close (fd);
      info->empty = TRUE;
      return TRUE;
    }
  if (!read_metas (fd, dir, size, metas, &page_size, error))
    {
      close (fd);
      return FALSE;
    }
  close (fd);

  newer = metas[0].txnid < metas[1].txnid ? &metas[1] : &metas[0];
  if (newer->last_page < 1)
    problem = g_strdup_printf ("its newer meta page gives %" G_GUINT64_FORMAT
                               " as the last page", newer->last_page);
  else if ((problem = root_problem (&newer->main_db, "main", newer, size, page_size)) == NULL)
    problem = root_problem (&newer->free_db, "free-page", newer, size, page_size);
  if (problem != NULL)
    {
      set_damage (error, dir, "%s", problem);
      g_free (problem);
      return FALSE;
    }

  info->size = size;
  info->page_size = page_size;
  info->last_page = newer->last_page;
  info->txnid = newer->txnid;
  return TRUE;
}

/* The walk */

typedef struct
{
  const char             *dir;
  int                     fd;
  guint64                 size;
  guint                   page_size;
  guint64                 last_page;
  guint64                 n_file_pages;
  QStoreLmdbWalk          mode;
  guint8                 *used;         /* a bit per page of the file */
  GArray                 *free_pages;   /* guint64, listed in the free database */
  guint8                 *bufs[MAX_DEPTH + 1];
  QStoreLmdbProblemFunc   func;
  gpointer                user_data;
  int                     n_problems;
  QStoreLmdbWalkStats    *stats;
  gboolean                io_failed;
  int                     io_errno;
} Walk;

typedef struct
{
  const char  *name;       /* for messages: a store name or "data.mdb" */
  const char  *what;       /* "store “x”", "the main database"… */
  gboolean     is_main;
  gboolean     is_free;
  guint        depth;      /* the recorded depth */
  guint64      n_entries;
  guint64      n_branch_pages;
  guint64      n_leaf_pages;
  guint64      n_overflow_pages;
  GByteArray  *last_key;   /* the last leaf key seen, for the order */
  gboolean     have_last_key;
  GPtrArray   *subdbs;     /* main: SubDb of each named database */
  gboolean     saw_marker;
} Tree;

typedef struct
{
  char     *name;
  DbRecord  db;
} SubDb;

static void
subdb_free (gpointer data)
{
  SubDb *sub = data;

  g_free (sub->name);
  g_free (sub);
}

static void problem (Walk       *w,
                     const Tree *t,
                     const char *format,
                     ...) G_GNUC_PRINTF (3, 4);

static void
problem (Walk       *w,
         const Tree *t,
         const char *format,
         ...)
{
  g_autofree char *message = NULL;
  va_list args;

  if (++w->n_problems > MAX_PROBLEMS)
    return;
  va_start (args, format);
  message = g_strdup_vprintf (format, args);
  va_end (args);
  w->func (t->name, message, w->user_data);
}

/* LMDB's default order: bytes, then length. */
static int
compare_keys (const guint8 *a,
              gsize         a_len,
              const guint8 *b,
              gsize         b_len)
{
  int c = memcmp (a, b, MIN (a_len, b_len));

  if (c != 0)
    return c;
  return a_len < b_len ? -1 : a_len > b_len;
}

/* The free database orders its 8-byte transaction ids as numbers. */
static int
compare_tree_keys (const Tree   *t,
                   const guint8 *a,
                   gsize         a_len,
                   const guint8 *b,
                   gsize         b_len)
{
  if (t->is_free && a_len == 8 && b_len == 8)
    {
      guint64 x = get64 (a), y = get64 (b);

      return x < y ? -1 : x > y;
    }
  return compare_keys (a, a_len, b, b_len);
}

typedef struct
{
  const guint8 *data;
  gsize         len;
  gboolean      set;
} Bound;

/* Claims @n pages from @pgno for @t; FALSE (with the problem noted) when
 * any is not a data page of the file or was claimed before. */
static gboolean
claim_pages (Walk       *w,
             const Tree *t,
             guint64     pgno,
             guint64     n)
{
  if (pgno < 2 || pgno > w->last_page || n > w->last_page - pgno + 1)
    {
      problem (w, t, "%s points at page %" G_GUINT64_FORMAT ", which is not a data page "
               "(the last is page %" G_GUINT64_FORMAT ")", t->what, pgno, w->last_page);
      return FALSE;
    }
  if (pgno + n > w->n_file_pages)
    {
      problem (w, t, "page %" G_GUINT64_FORMAT " of %s lies beyond the end of data.mdb (%"
               G_GUINT64_FORMAT " bytes): the file is truncated", pgno + n - 1, t->what, w->size);
      return FALSE;
    }
  for (guint64 p = pgno; p < pgno + n; p++)
    {
      if (w->used[p / 8] & (1u << (p % 8)))
        {
          problem (w, t, "page %" G_GUINT64_FORMAT " of %s is also reached from elsewhere",
                   p, t->what);
          return FALSE;
        }
      w->used[p / 8] |= 1u << (p % 8);
    }
  w->stats->n_pages += n;
  return TRUE;
}

static gboolean
read_page (Walk    *w,
           guint8  *buf,
           guint64  pgno)
{
  if (read_at (w->fd, buf, w->page_size, pgno * w->page_size))
    return TRUE;
  w->io_failed = TRUE;
  w->io_errno = errno;
  return FALSE;
}

/* The value of an F_BIGDATA node: @len bytes on the overflow pages from
 * @pgno. @data, when not NULL, receives them (the free database's lists). */
static gboolean
walk_overflow (Walk        *w,
               Tree        *t,
               guint64      pgno,
               guint64      len,
               GByteArray  *data)
{
  guint8 *buf = w->bufs[MAX_DEPTH];
  guint64 needed = (PAGE_HEADER_SIZE - 1 + len) / w->page_size + 1;
  guint32 n_pages;

  if (!claim_pages (w, t, pgno, 1))
    return FALSE;
  if (!read_page (w, buf, pgno))
    return FALSE;
  n_pages = get32 (buf + 12);
  if (get64 (buf) != pgno || get16 (buf + 10) != P_OVERFLOW)
    {
      problem (w, t, "overflow page %" G_GUINT64_FORMAT " of %s has the header of another "
               "kind of page", pgno, t->what);
      return FALSE;
    }
  /* A value rewritten smaller keeps its pages: more is fine, less is not. */
  if (n_pages < needed)
    {
      problem (w, t, "overflow page %" G_GUINT64_FORMAT " of %s spans %u pages, too few for "
               "its value of %" G_GUINT64_FORMAT " bytes", pgno, t->what, n_pages, len);
      return FALSE;
    }
  /* The first page is claimed already. */
  if (n_pages > 1 && !claim_pages (w, t, pgno + 1, n_pages - 1))
    return FALSE;
  t->n_overflow_pages += n_pages;

  if (data != NULL)
    {
      g_byte_array_set_size (data, len);
      if (!read_at (w->fd, data->data, len, pgno * w->page_size + PAGE_HEADER_SIZE))
        {
          w->io_failed = TRUE;
          w->io_errno = errno;
          return FALSE;
        }
    }
  return TRUE;
}

/* A record of the free database: the pages a transaction freed. */
static void
check_free_list (Walk         *w,
                 Tree         *t,
                 const guint8 *data,
                 gsize         len)
{
  guint64 n;

  if (len < 8 || len % 8 != 0 || (n = get64 (data)) != len / 8 - 1)
    {
      problem (w, t, "a list of free pages has a size (%" G_GSIZE_FORMAT " bytes) that does "
               "not match its count", len);
      return;
    }
  for (guint64 i = 1; i <= n; i++)
    {
      guint64 pgno = get64 (data + i * 8);

      if (pgno < 2 || pgno > w->last_page)
        {
          problem (w, t, "page %" G_GUINT64_FORMAT " is listed as free but is not a data page",
                   pgno);
          return;
        }
      g_array_append_val (w->free_pages, pgno);
    }
}

static gboolean walk_page (Walk        *w,
                           Tree        *t,
                           guint64      pgno,
                           guint        depth,
                           const Bound *lower,
                           const Bound *upper);

static void
check_key_order (Walk         *w,
                 Tree         *t,
                 guint64       pgno,
                 const guint8 *key,
                 gsize         key_len,
                 const Bound  *lower,
                 const Bound  *upper,
                 gboolean     *ok)
{
  if ((lower->set && compare_tree_keys (t, key, key_len, lower->data, lower->len) < 0) ||
      (upper->set && compare_tree_keys (t, key, key_len, upper->data, upper->len) >= 0))
    {
      problem (w, t, "page %" G_GUINT64_FORMAT " of %s holds a key outside the range its "
               "parent gives it", pgno, t->what);
      *ok = FALSE;
    }
}

static gboolean
walk_leaf (Walk         *w,
           Tree         *t,
           guint64       pgno,
           const guint8 *buf,
           guint         n_keys,
           const Bound  *lower,
           const Bound  *upper)
{
  g_autoptr(GByteArray) big = NULL;
  gboolean ok = TRUE;

  t->n_leaf_pages++;
  for (guint i = 0; i < n_keys && ok; i++)
    {
      guint off = get16 (buf + PAGE_HEADER_SIZE + 2 * i);
      const guint8 *node = buf + off;
      guint flags = get16 (node + 4);
      guint key_len = get16 (node + 6);
      guint64 len = get16 (node) | ((guint64) get16 (node + 2) << 16);
      const guint8 *key = node + NODE_HEADER_SIZE;
      const guint8 *value = key + key_len;
      guint allowed = t->is_main ? (F_SUBDATA | F_BIGDATA) : F_BIGDATA;

      if (flags & ~allowed)
        {
          problem (w, t, "entry %u of page %" G_GUINT64_FORMAT " of %s has flags 0x%x that "
                   "qstore never sets", i, pgno, t->what, flags);
          return FALSE;
        }
      if (off + NODE_HEADER_SIZE + key_len + ((flags & F_BIGDATA) ? 8 : len) > w->page_size)
        {
          problem (w, t, "entry %u of page %" G_GUINT64_FORMAT " of %s runs past the end of "
                   "the page", i, pgno, t->what);
          return FALSE;
        }
      if (t->is_free && key_len != 8)
        {
          problem (w, t, "entry %u of page %" G_GUINT64_FORMAT " of %s has a key of %u bytes",
                   i, pgno, t->what, key_len);
          return FALSE;
        }

      /* Strictly increasing, across the whole tree. */
      if (t->have_last_key &&
          compare_tree_keys (t, t->last_key->data, t->last_key->len, key, key_len) >= 0)
        {
          problem (w, t, "entry %u of page %" G_GUINT64_FORMAT " of %s is out of order",
                   i, pgno, t->what);
          return FALSE;
        }
      check_key_order (w, t, pgno, key, key_len, lower, upper, &ok);
      if (!ok)
        return FALSE;
      g_byte_array_set_size (t->last_key, 0);
      g_byte_array_append (t->last_key, key, key_len);
      t->have_last_key = TRUE;
      t->n_entries++;

      if (flags & F_BIGDATA)
        {
          if (t->is_free && big == NULL)
            big = g_byte_array_new ();
          if (!walk_overflow (w, t, get64 (value), len, t->is_free ? big : NULL))
            return FALSE;
          if (t->is_free)
            check_free_list (w, t, big->data, big->len);
        }
      else if (t->is_free)
        check_free_list (w, t, value, len);
      else if (flags & F_SUBDATA)
        {
          SubDb *sub;

          if (len != DB_RECORD_SIZE)
            {
              problem (w, t, "the record of database “%.*s” has %" G_GUINT64_FORMAT
                       " bytes", (int) key_len, key, len);
              return FALSE;
            }
          sub = g_new0 (SubDb, 1);
          sub->name = g_strndup ((const char *) key, key_len);
          parse_db (value, &sub->db);
          if (g_str_equal (sub->name, LMDB_MARKER_NAME))
            t->saw_marker = TRUE;
          g_ptr_array_add (t->subdbs, sub);
        }
    }
  return ok;
}

static gboolean
walk_branch (Walk         *w,
             Tree         *t,
             guint64       pgno,
             const guint8 *buf,
             guint         n_keys,
             guint         depth,
             const Bound  *lower,
             const Bound  *upper)
{
  t->n_branch_pages++;
  /* The first node's key is not used: its child covers everything below
   * the second node's key. */
  for (guint i = 1; i < n_keys; i++)
    {
      const guint8 *node = buf + get16 (buf + PAGE_HEADER_SIZE + 2 * i);
      const guint8 *prev = buf + get16 (buf + PAGE_HEADER_SIZE + 2 * (i - 1));
      gboolean ok = TRUE;

      check_key_order (w, t, pgno, node + NODE_HEADER_SIZE, get16 (node + 6), lower, upper, &ok);
      if (!ok)
        return FALSE;
      if (i > 1 && compare_tree_keys (t, prev + NODE_HEADER_SIZE, get16 (prev + 6),
                                      node + NODE_HEADER_SIZE, get16 (node + 6)) >= 0)
        {
          problem (w, t, "the keys of branch page %" G_GUINT64_FORMAT " of %s are out of order",
                   pgno, t->what);
          return FALSE;
        }
    }

  for (guint i = 0; i < n_keys; i++)
    {
      const guint8 *node = buf + get16 (buf + PAGE_HEADER_SIZE + 2 * i);
      guint64 child = get16 (node) | ((guint64) get16 (node + 2) << 16) |
                      ((guint64) get16 (node + 4) << 32);
      Bound child_lower = *lower, child_upper = *upper;

      if (i > 0)
        child_lower = (Bound) { node + NODE_HEADER_SIZE, get16 (node + 6), TRUE };
      if (i + 1 < n_keys)
        {
          const guint8 *next = buf + get16 (buf + PAGE_HEADER_SIZE + 2 * (i + 1));

          child_upper = (Bound) { next + NODE_HEADER_SIZE, get16 (next + 6), TRUE };
        }
      if (!walk_page (w, t, child, depth + 1, &child_lower, &child_upper))
        return FALSE;
    }
  return TRUE;
}

/* Walks the subtree at @pgno, at @depth (the root is 1), whose keys lie in
 * [@lower, @upper). FALSE when it is damaged (or cannot be read). */
static gboolean
walk_page (Walk        *w,
           Tree        *t,
           guint64      pgno,
           guint        depth,
           const Bound *lower,
           const Bound *upper)
{
  guint8 *buf;
  guint flags, lower_end, upper_start, n_keys;

  if (w->io_failed || w->n_problems > MAX_PROBLEMS)
    return FALSE;
  if (depth > t->depth || depth > MAX_DEPTH)
    {
      problem (w, t, "%s goes deeper than the %u levels it records", t->what, t->depth);
      return FALSE;
    }
  if (!claim_pages (w, t, pgno, 1))
    return FALSE;

  /* Only where the leaves are, not what they hold. */
  if (w->mode == QSTORE_LMDB_WALK_BRANCHES && depth == t->depth)
    {
      t->n_leaf_pages++;
      return TRUE;
    }

  buf = w->bufs[depth - 1];
  if (!read_page (w, buf, pgno))
    return FALSE;
  flags = get16 (buf + 10);
  lower_end = get16 (buf + 12);
  upper_start = get16 (buf + 14);

  if (get64 (buf) != pgno)
    {
      problem (w, t, "page %" G_GUINT64_FORMAT " of %s has the header of page %" G_GUINT64_FORMAT,
               pgno, t->what, get64 (buf));
      return FALSE;
    }
  if (flags != P_BRANCH && flags != P_LEAF)
    {
      problem (w, t, "page %" G_GUINT64_FORMAT " of %s is of type 0x%x, not a branch or leaf "
               "page", pgno, t->what, flags);
      return FALSE;
    }
  if ((flags == P_LEAF) != (depth == t->depth))
    {
      problem (w, t, "page %" G_GUINT64_FORMAT " of %s is a %s page at level %u of %u",
               pgno, t->what, flags == P_LEAF ? "leaf" : "branch", depth, t->depth);
      return FALSE;
    }
  if (lower_end < PAGE_HEADER_SIZE || lower_end > upper_start || upper_start > w->page_size ||
      (lower_end - PAGE_HEADER_SIZE) % 2 != 0 || lower_end == PAGE_HEADER_SIZE)
    {
      problem (w, t, "page %" G_GUINT64_FORMAT " of %s has bad bounds (%u, %u)",
               pgno, t->what, lower_end, upper_start);
      return FALSE;
    }
  n_keys = (lower_end - PAGE_HEADER_SIZE) / 2;
  for (guint i = 0; i < n_keys; i++)
    {
      guint off = get16 (buf + PAGE_HEADER_SIZE + 2 * i);

      if (off < upper_start || off % 2 != 0 || off + NODE_HEADER_SIZE > w->page_size ||
          off + NODE_HEADER_SIZE + get16 (buf + off + 6) > w->page_size)
        {
          problem (w, t, "entry %u of page %" G_GUINT64_FORMAT " of %s lies outside the page",
                   i, pgno, t->what);
          return FALSE;
        }
    }

  if (flags == P_BRANCH)
    return walk_branch (w, t, pgno, buf, n_keys, depth, lower, upper);
  return walk_leaf (w, t, pgno, buf, n_keys, lower, upper);
}

/* Walks one database from its record, checking the record's counts. */
static void
walk_tree (Walk           *w,
           Tree           *t,
           const DbRecord *db)
{
  const Bound none = { NULL, 0, FALSE };
  gboolean ok;

  t->depth = db->depth;
  t->last_key = g_byte_array_new ();
  if (db->root == NO_PAGE)
    ok = db->depth == 0 && db->entries == 0;
  else
    ok = db->depth > 0 && walk_page (w, t, db->root, 1, &none, &none);

  if (db->root == NO_PAGE && !ok)
    problem (w, t, "%s is recorded as empty but with %" G_GUINT64_FORMAT " entries at depth %u",
             t->what, db->entries, db->depth);
  else if (db->root != NO_PAGE && db->depth == 0)
    problem (w, t, "%s is recorded at depth 0 with a root page", t->what);
  /* The counts only mean something when every page was read. */
  else if (ok && w->mode == QSTORE_LMDB_WALK_FULL &&
           (t->n_entries != db->entries || t->n_branch_pages != db->branch_pages ||
            t->n_leaf_pages != db->leaf_pages || t->n_overflow_pages != db->overflow_pages))
    problem (w, t, "%s records %" G_GUINT64_FORMAT " entries in %" G_GUINT64_FORMAT "/%"
             G_GUINT64_FORMAT "/%" G_GUINT64_FORMAT " branch/leaf/overflow pages, but holds %"
             G_GUINT64_FORMAT " in %" G_GUINT64_FORMAT "/%" G_GUINT64_FORMAT "/%" G_GUINT64_FORMAT,
             t->what, db->entries, db->branch_pages, db->leaf_pages, db->overflow_pages,
             t->n_entries, t->n_branch_pages, t->n_leaf_pages, t->n_overflow_pages);
  g_clear_pointer (&t->last_key, g_byte_array_unref);
}

/* The meta page of the snapshot @txnid committed. */
static gboolean
find_snapshot (int          fd,
               const char  *dir,
               guint64      size,
               guint64      txnid,
               Meta        *meta,
               guint       *page_size,
               GError     **error)
{
  Meta metas[2];

  if (!read_metas (fd, dir, size, metas, page_size, error))
    return FALSE;
  for (guint i = 0; i < 2; i++)
    if (metas[i].txnid == txnid)
      {
        *meta = metas[i];
        return TRUE;
      }
  /* Two commits since the reader began: its meta page was reused. */
  g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_BUSY,
               _("The LMDB store at “%s” changed while it was being checked: try again"), dir);
  return FALSE;
}

int
qstore_lmdb_check_walk (const char             *dir,
                        guint64                 txnid,
                        QStoreLmdbWalk          mode,
                        QStoreLmdbProblemFunc   func,
                        gpointer                user_data,
                        QStoreLmdbWalkStats    *stats,
                        GError                **error)
{
  Walk w = { 0 };
  Tree free_tree = { "data.mdb", "the free-page database", FALSE, TRUE };
  Tree main_tree = { "data.mdb", "the main database", TRUE, FALSE };
  GError *local_error = NULL;
  Meta meta;
  int result = -1;

  memset (stats, 0, sizeof *stats);
  w.fd = open_data (dir, &w.size, &local_error);
  if (w.fd < 0)
    {
      if (local_error == NULL)
        g_set_error (&local_error, QSTORE_ERROR, QSTORE_ERROR_NOT_FOUND,
                     _("The LMDB store at “%s” has no data.mdb"), dir);
      g_propagate_error (error, local_error);
      return -1;
    }
  if (!find_snapshot (w.fd, dir, w.size, txnid, &meta, &w.page_size, error))
    goto out;

  w.dir = dir;
  w.mode = mode;
  w.func = func;
  w.user_data = user_data;
  w.stats = stats;
  w.last_page = meta.last_page;
  w.n_file_pages = w.size / w.page_size;
  if (mode == QSTORE_LMDB_WALK_META)
    {
      result = 0;
      goto out;
    }
  w.used = g_malloc0 (w.n_file_pages / 8 + 1);
  w.free_pages = g_array_new (FALSE, FALSE, sizeof (guint64));
  for (guint i = 0; i <= MAX_DEPTH; i++)
    w.bufs[i] = g_malloc (w.page_size);
  /* The meta pages are nobody's. */
  w.used[0] |= 3;

  if (meta.free_db.flags != DB_INTEGERKEY || meta.main_db.flags != 0)
    problem (&w, &main_tree, "the free-page or main database has flags (0x%x, 0x%x) LMDB "
             "does not give them", meta.free_db.flags, meta.main_db.flags);
  else
    {
      main_tree.subdbs = g_ptr_array_new_with_free_func (subdb_free);
      walk_tree (&w, &free_tree, &meta.free_db);
      walk_tree (&w, &main_tree, &meta.main_db);

      /* Another program's environment is not walked further: opening it
       * reports that it is not a qstore store. */
      stats->foreign = meta.main_db.entries > 0 && !main_tree.saw_marker;
      for (guint i = 0; !stats->foreign && i < main_tree.subdbs->len; i++)
        {
          SubDb *sub = g_ptr_array_index (main_tree.subdbs, i);
          g_autofree char *what = g_strdup_printf ("store “%s”", sub->name);
          Tree tree = { sub->name, what, FALSE, FALSE };

          if (sub->db.flags != 0)
            {
              problem (&w, &tree, "%s has LMDB flags 0x%x that qstore never sets",
                       what, sub->db.flags);
              continue;
            }
          walk_tree (&w, &tree, &sub->db);
          if (!g_str_equal (sub->name, LMDB_MARKER_NAME))
            {
              stats->n_stores++;
              stats->n_entries += tree.n_entries;
            }
        }
      g_clear_pointer (&main_tree.subdbs, g_ptr_array_unref);

      /* A page in use that is also free would be handed out again. */
      for (guint i = 0; i < w.free_pages->len && w.mode == QSTORE_LMDB_WALK_FULL; i++)
        {
          guint64 pgno = g_array_index (w.free_pages, guint64, i);

          if (pgno < w.n_file_pages && (w.used[pgno / 8] & (1u << (pgno % 8))))
            problem (&w, &free_tree, "page %" G_GUINT64_FORMAT " is in use and also listed "
                     "as free", pgno);
        }
    }

  if (w.io_failed)
    g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_IO,
                 _("Cannot read data.mdb of the LMDB store at “%s”: %s"), dir,
                 w.io_errno ? g_strerror (w.io_errno) : "the file ended early");
  else
    result = w.n_problems;

out:
  for (guint i = 0; i <= MAX_DEPTH; i++)
    g_free (w.bufs[i]);
  g_free (w.used);
  g_clear_pointer (&w.free_pages, g_array_unref);
  close (w.fd);
  return result;
}
