/* qstore-location-lock.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

/* F_OFD_SETLK and F_OFD_GETLK */
#define _GNU_SOURCE 1

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "qstore-error.h"
#include "qstore-i18n-private.h"
#include "qstore-location-lock.h"

/**
 * QStoreLocationLock:
 *
 * The exclusive lock a provider takes on a location it opens for writing,
 * so that a location has one writer at a time.
 *
 * It is an advisory lock on a lock file the provider keeps in or beside
 * the location (an open-file-description lock, `F_OFD_SETLK`, where the
 * system has them, else `flock()`): it belongs to the open handle, so a
 * second writable open conflicts with the first in the same process as
 * much as in another one, and the kernel releases it when the process
 * dies, so a crash never leaves a stale lock behind. The holder writes
 * its process id into the file, which is how a refused open can name it,
 * and removes the file when it lets go. Readers take no lock.
 *
 * Providers take it through [method@Provider.lock_location], which keeps
 * it for the provider's lifetime; this type is for providers and tools
 * that need the lock itself.
 */

struct _QStoreLocationLock
{
  GObject  parent_instance;

  char    *path;
  int      fd;   /* -1 once released (or dropped in a forked child) */
};

G_DEFINE_FINAL_TYPE (QStoreLocationLock, qstore_location_lock, G_TYPE_OBJECT)

/* The locks this process holds, so that a child made by fork() without
 * exec() closes its copies: it must not keep its parent's lock alive. */
static GMutex live_lock;
static GPtrArray *live;

static void
atfork_prepare (void)
{
  g_mutex_lock (&live_lock);
}

static void
atfork_parent (void)
{
  g_mutex_unlock (&live_lock);
}

static void
atfork_child (void)
{
  for (guint i = 0; live != NULL && i < live->len; i++)
    {
      QStoreLocationLock *lock = g_ptr_array_index (live, i);

      /* The description is shared with the parent: closing this copy
       * leaves the parent's lock in place. */
      close (lock->fd);
      lock->fd = -1;
    }
  if (live != NULL)
    g_ptr_array_set_size (live, 0);
  g_mutex_unlock (&live_lock);
}

static void
track (QStoreLocationLock *self)
{
  static gsize registered;

  if (g_once_init_enter (&registered))
    {
      pthread_atfork (atfork_prepare, atfork_parent, atfork_child);
      g_once_init_leave (&registered, 1);
    }
  g_mutex_lock (&live_lock);
  if (live == NULL)
    live = g_ptr_array_new ();
  g_ptr_array_add (live, self);
  g_mutex_unlock (&live_lock);
}

/* Whether @fd still is the file at @path: a lock on a file that was
 * removed (or replaced) locks nothing. */
static gboolean
is_current (int         fd,
            const char *path)
{
  struct stat by_fd, by_path;

  return fstat (fd, &by_fd) == 0 && stat (path, &by_path) == 0 &&
         by_fd.st_dev == by_path.st_dev && by_fd.st_ino == by_path.st_ino;
}

/**
 * qstore_location_lock_release:
 * @self: a #QStoreLocationLock
 *
 * Releases the lock and removes its file, so that a closed location keeps
 * nothing of it. Releasing twice is harmless; the last reference releases
 * too.
 */
void
qstore_location_lock_release (QStoreLocationLock *self)
{
  int fd;

  g_return_if_fail (QSTORE_IS_LOCATION_LOCK (self));

  g_mutex_lock (&live_lock);
  fd = self->fd;
  self->fd = -1;
  if (live != NULL && fd >= 0)
    g_ptr_array_remove_fast (live, self);
  g_mutex_unlock (&live_lock);
  if (fd < 0)
    return;

  /* Removed while still held: whoever opened the file meanwhile finds,
   * once it gets the lock, that the file is gone, and starts over with a
   * new one (see qstore_location_lock_acquire()). */
  if (is_current (fd, self->path))
    g_unlink (self->path);
  close (fd);
}

static void
qstore_location_lock_finalize (GObject *object)
{
  QStoreLocationLock *self = QSTORE_LOCATION_LOCK (object);

  qstore_location_lock_release (self);
  g_free (self->path);

  G_OBJECT_CLASS (qstore_location_lock_parent_class)->finalize (object);
}

static void
qstore_location_lock_class_init (QStoreLocationLockClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = qstore_location_lock_finalize;
}

static void
qstore_location_lock_init (QStoreLocationLock *self)
{
  self->fd = -1;
}

/* Locking one open file: 0 when locked, else the errno (EAGAIN when
 * someone else holds it). */
static int
try_lock (int fd)
{
#ifdef F_OFD_SETLK
  struct flock fl = { 0 };

  fl.l_type = F_WRLCK;
  fl.l_whence = SEEK_SET;
  if (fcntl (fd, F_OFD_SETLK, &fl) == 0)
    return 0;
  if (errno == EACCES || errno == EAGAIN)
    return EAGAIN;
  /* A kernel without open-file-description locks: flock() locks belong to
   * the open file too. */
  if (errno != EINVAL)
    return errno;
#endif
  if (flock (fd, LOCK_EX | LOCK_NB) == 0)
    return 0;
  return errno == EWOULDBLOCK ? EAGAIN : errno;
}

/* The process id the holder wrote into the lock file, or -1. */
static int
read_holder (int fd)
{
  char buf[32];
  ssize_t n = pread (fd, buf, sizeof buf - 1, 0);
  gint64 pid;

  if (n <= 0)
    return -1;
  buf[n] = '\0';
  g_strchomp (buf);
  if (!g_ascii_string_to_signed (buf, 10, 1, G_MAXINT, &pid, NULL))
    return -1;
  return (int) pid;
}

static void
write_holder (int fd)
{
  char buf[32];
  int len = g_snprintf (buf, sizeof buf, "%d\n", (int) getpid ());

  /* Only ever informative: a lock whose holder cannot be named still
   * locks. */
  if (ftruncate (fd, 0) == 0 && pwrite (fd, buf, len, 0) == len)
    return;
}

static void
set_busy_error (GError     **error,
                const char  *location,
                int          holder)
{
  g_autofree char *by = NULL;

  if (holder == (int) getpid ())
    by = g_strdup (_("by another handle in this process"));
  else if (holder > 0)
    by = g_strdup_printf (_("by process %d"), holder);
  else
    by = g_strdup (_("by another process"));
  g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_BUSY,
               _("%s is open for writing %s, and a location has one writer at a time: "
               "close that one, open this one read-only, or wait for it "
               "(the wait_ms option)"), location, by);
}

/**
 * qstore_location_lock_acquire:
 * @path: the lock file, created when missing
 * @location: how messages name what the lock guards, such as
 *   `The lmdb store at “/var/db/x”`
 * @wait_ms: how long to wait for another holder to let go, in
 *   milliseconds; 0 fails at once
 * @error: return location for a #GError
 *
 * Takes the exclusive lock of @path. When someone holds it, waits up to
 * @wait_ms (polling), then fails with %QSTORE_ERROR_BUSY naming @location
 * and, when the holder wrote it, the holder's process id.
 *
 * Returns: (transfer full): the lock, held until released or freed, or
 *   %NULL on error
 */
QStoreLocationLock *
qstore_location_lock_acquire (const char  *path,
                              const char  *location,
                              guint        wait_ms,
                              GError     **error)
{
  gint64 deadline;
  gulong pause_us = 1000;

  g_return_val_if_fail (path != NULL, NULL);
  g_return_val_if_fail (location != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  deadline = g_get_monotonic_time () + (gint64) wait_ms * 1000;
  for (;;)
    {
      QStoreLocationLock *self;
      int fd, err, holder;
      gint64 now;

      /* Never through a link: the holder writes into the file. */
      fd = open (path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
      if (fd < 0)
        {
          err = errno;
          g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_IO,
                       _("%s cannot be locked for writing: its lock file “%s” cannot be "
                       "opened: %s; check the permissions of the directory"),
                       location, path, g_strerror (err));
          return NULL;
        }

      err = try_lock (fd);
      if (err == 0 && !is_current (fd, path))
        {
          close (fd);
          continue;
        }
      if (err == 0)
        {
          write_holder (fd);
          self = g_object_new (QSTORE_TYPE_LOCATION_LOCK, NULL);
          self->path = g_strdup (path);
          self->fd = fd;
          track (self);
          return self;
        }
      if (err != EAGAIN)
        {
          close (fd);
          g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_IO,
                       _("%s cannot be locked for writing (lock file “%s”): %s"),
                       location, path, g_strerror (err));
          return NULL;
        }

      holder = read_holder (fd);
      close (fd);
      now = g_get_monotonic_time ();
      if (now >= deadline)
        {
          set_busy_error (error, location, holder);
          return NULL;
        }
      g_usleep (MIN ((gint64) pause_us, deadline - now));
      pause_us = MIN (pause_us * 2, 50000);
    }
}

/**
 * qstore_location_lock_get_path:
 * @self: a #QStoreLocationLock
 *
 * Gets the lock file.
 *
 * Returns: the path of the lock file
 */
const char *
qstore_location_lock_get_path (QStoreLocationLock *self)
{
  g_return_val_if_fail (QSTORE_IS_LOCATION_LOCK (self), NULL);
  return self->path;
}

/**
 * qstore_location_lock_is_held:
 * @self: a #QStoreLocationLock
 *
 * Tells whether @self still holds its lock.
 *
 * Returns: %FALSE once released (or in a child process made by `fork()`,
 *   which never holds its parent's locks)
 */
gboolean
qstore_location_lock_is_held (QStoreLocationLock *self)
{
  g_return_val_if_fail (QSTORE_IS_LOCATION_LOCK (self), FALSE);
  return self->fd >= 0;
}

/**
 * qstore_location_lock_query:
 * @path: a lock file
 * @holder_pid: (out) (optional): the process id the holder wrote, -1 when
 *   unknown or when nobody holds the lock
 *
 * Tells, without taking it, whether someone holds the lock of @path: a
 * writer has the location open.
 *
 * Returns: %TRUE when the lock is held (by this process or another)
 */
gboolean
qstore_location_lock_query (const char *path,
                            int        *holder_pid)
{
  gboolean held = FALSE;
  int holder = -1;
  int fd;

  g_return_val_if_fail (path != NULL, FALSE);

  /* Opened read-only, and never created: asking changes nothing. */
  fd = open (path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd >= 0)
    {
#ifdef F_OFD_GETLK
      struct flock fl = { 0 };

      fl.l_type = F_WRLCK;
      fl.l_whence = SEEK_SET;
      if (fcntl (fd, F_OFD_GETLK, &fl) == 0)
        held = fl.l_type != F_UNLCK;
      else
#endif
        {
          /* flock() cannot test without taking: take it shared and let
           * go at once. */
          if (flock (fd, LOCK_SH | LOCK_NB) == 0)
            flock (fd, LOCK_UN);
          else
            held = errno == EWOULDBLOCK;
        }
      if (held)
        holder = read_holder (fd);
      close (fd);
    }
  if (holder_pid != NULL)
    *holder_pid = holder;
  return held;
}
