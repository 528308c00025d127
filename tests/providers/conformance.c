/* conformance.c: the fixture and helpers of the provider conformance tests
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "conformance.h"
#include "qstore-fault-private.h"

QStoreProvider *
open_provider (const char      *uri,
               QStoreOpenFlags  flags)
{
  g_autoptr(GError) error = NULL;
  QStoreProvider *provider = qstore_provider_new_for_uri (uri, flags, &error);

  g_assert_no_error (error);
  g_assert_nonnull (provider);
  return provider;
}

/* What to print when the running case dies: a failed assertion aborts
 * the process before GTest prints its path. Written in fixture_setup(),
 * read by a signal handler, so a plain buffer. */
static char failure_note[1024];

static void
note_failure (int signum)
{
  if (failure_note[0] != '\0' && write (STDOUT_FILENO, failure_note, strlen (failure_note)) < 0)
    failure_note[0] = '\0';
  signal (signum, SIG_DFL);
  raise (signum);
}

void
conformance_report_failures (void)
{
  signal (SIGABRT, note_failure);
  signal (SIGSEGV, note_failure);
  signal (SIGBUS, note_failure);
  signal (SIGTRAP, note_failure);  /* g_error() */
}

/* The capability of a case is the folder of its path:
 * /providers/NAME/CAPABILITY/CASE. */
static void
note_case (void)
{
  const char *path = g_test_get_path ();
  g_autofree char *folder = g_path_get_dirname (path);
  g_autofree char *capability = g_path_get_basename (folder);

  g_snprintf (failure_note, sizeof failure_note,
              "# FAILED %s: the provider breaks what “%s” promises\n", path, capability);
}

void
fixture_setup (Fixture       *f,
               gconstpointer  data)
{
  note_case ();
  f->dir = test_make_tmp_dir ("qstore-conformance-XXXXXX");
  f->uri = test_provider_uri (f->dir, "store");
  f->provider = open_provider (f->uri, QSTORE_OPEN_NONE);
  f->caps = qstore_provider_get_capabilities (f->provider);
}

void
fixture_teardown (Fixture       *f,
                  gconstpointer  data)
{
  g_clear_object (&f->provider);
  test_remove_tree (f->dir);
  g_free (f->dir);
  g_free (f->uri);
  _qstore_fault_disarm_all ();
}

gboolean
persistent (Fixture *f)
{
  return (f->caps & QSTORE_CAPABILITY_PERSISTENT) != 0;
}

void
reopen (Fixture         *f,
        QStoreOpenFlags  flags)
{
  qstore_provider_close_all (f->provider);
  g_clear_object (&f->provider);
  f->provider = open_provider (f->uri, flags);
}

QStoreKV *
store_of (QStoreProvider *provider,
          const char     *name)
{
  g_autoptr(GError) error = NULL;
  QStoreKV *kv = qstore_provider_open_store (provider, name, &error);

  g_assert_no_error (error);
  g_assert_nonnull (kv);
  return kv;
}

QStoreKV *
store (Fixture    *f,
       const char *name)
{
  return store_of (f->provider, name);
}

void
put (QStoreKV   *kv,
     const char *key,
     const char *value)
{
  g_autoptr(GError) error = NULL;

  qstore_kv_put (kv, (const guint8 *) key, strlen (key),
                 (const guint8 *) value, strlen (value), QSTORE_WRITE_NONE, &error);
  g_assert_no_error (error);
}

void
del (QStoreKV   *kv,
     const char *key)
{
  g_autoptr(GError) error = NULL;

  qstore_kv_delete (kv, (const guint8 *) key, strlen (key), QSTORE_WRITE_NONE, &error);
  g_assert_no_error (error);
}

/* A provider's optional get_into must read what get does: into a buffer
 * that held a longer value before, and one that held a shorter one. */
static void
assert_get_into_agrees (QStoreKV   *kv,
                        const char *key,
                        GBytes     *value)
{
  QStoreKVInterface *iface = QSTORE_KV_GET_IFACE (kv);
  static const char *before[] = { "", "a value longer than any a conformance case stores" };

  if (iface->get_into == NULL)
    return;
  for (guint i = 0; i < G_N_ELEMENTS (before); i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(GByteArray) into = g_byte_array_new ();
      gboolean found;

      g_byte_array_append (into, (const guint8 *) before[i], strlen (before[i]));
      found = iface->get_into (kv, (const guint8 *) key, strlen (key), into, &error);
      g_assert_no_error (error);
      g_assert_cmpint (found, ==, value != NULL);
      if (found)
        g_assert_cmpmem (into->data, into->len,
                         g_bytes_get_data (value, NULL), g_bytes_get_size (value));
    }
}

char *
get (QStoreKV   *kv,
     const char *key)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) value = qstore_kv_get (kv, (const guint8 *) key, strlen (key), &error);
  gsize len;
  const char *data;

  g_assert_no_error (error);
  assert_get_into_agrees (kv, key, value);
  if (value == NULL)
    return NULL;
  data = g_bytes_get_data (value, &len);
  return g_strndup (data ? data : "", len);
}

char *
collect (QStoreIter *iter)
{
  g_autoptr(GError) error = NULL;
  GString *out = g_string_new (NULL);
  gboolean first = TRUE;

  while (qstore_iter_next (iter, &error))
    {
      gsize len;
      const guint8 *key = qstore_iter_peek_key (iter, &len);

      if (!first)
        g_string_append_c (out, '|');
      g_string_append_len (out, (const char *) key, len);
      first = FALSE;
    }
  g_assert_no_error (error);
  return g_string_free (out, FALSE);
}

char *
scan (QStoreKV           *kv,
      const QStoreBounds *bounds)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(QStoreIter) iter = qstore_kv_iterate (kv, bounds, &error);

  g_assert_no_error (error);
  return collect (iter);
}


gboolean
conformance_faults_reach_provider (Fixture *f)
{
  g_autoptr(QStoreKV) kv = store (f, "main.fault_probe");
  g_autoptr(GError) error = NULL;
  gboolean reached;

  _qstore_fault_arm (QSTORE_FAULT_WRITE_OP, 0);
  reached = !qstore_kv_put (kv, (const guint8 *) "k", 1, (const guint8 *) "v", 1,
                            QSTORE_WRITE_NONE, &error);
  _qstore_fault_disarm_all ();
  if (reached)
    g_assert_error (error, QSTORE_ERROR, QSTORE_ERROR_IO);
  else
    del (kv, "k");
  return reached;
}
