/* qstore-prefault-private.h: making a new buffer's pages present at once
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <glib.h>

G_BEGIN_DECLS

/* Makes the pages of a new buffer that is about to be written through
 * present in one call, instead of taking a fault on each first write: the
 * buffers of a large transaction span tens of thousands of pages, and a
 * fault costs far more than the page (most of all in a virtual machine).
 * Best effort: a kernel older than Linux 5.14 refuses, and the pages then
 * fault in as before. */
static inline void
qstore_prefault (gpointer data,
                 gsize    size)
{
#ifdef MADV_POPULATE_WRITE
  static gsize page;
  guintptr start, end;

  if (G_UNLIKELY (page == 0))
    page = (gsize) sysconf (_SC_PAGESIZE);
  start = ((guintptr) data + page - 1) & ~(guintptr) (page - 1);
  end = ((guintptr) data + size) & ~(guintptr) (page - 1);
  if (end > start)
    madvise ((gpointer) start, end - start, MADV_POPULATE_WRITE);
#endif
}

G_END_DECLS
