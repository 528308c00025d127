/* damage-reader.c: reads a store through the provider API, for
 * test-damage.py
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Usage: damage-reader read URI   opens URI read-only, iterates every
 *                                 store, looks every key up (and a key
 *                                 that is not there) and prints a digest
 *                                 of what it read
 *        damage-reader check URI  opens URI read-only and prints what
 *                                 qstore_provider_check() reports
 *
 * Exits 0 when it could do that, 1 with "error CODE: MESSAGE" on stderr
 * when the provider said no. Anything else (a signal) is what the caller
 * looks for.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include <qstore.h>

static void
hash_sized (GChecksum    *sum,
            const guint8 *data,
            gsize         len)
{
  guint64 n = len;

  g_checksum_update (sum, (const guint8 *) &n, sizeof n);
  g_checksum_update (sum, data, len);
}

/* Every entry of @kv into @sum; every key is looked up too, and must give
 * the value the iteration gave. */
static gboolean
read_store (QStoreKV   *kv,
            GChecksum  *sum,
            guint64    *n_entries,
            GError    **error)
{
  g_autoptr(QStoreIter) iter = qstore_kv_iterate (kv, NULL, error);
  g_autoptr(GPtrArray) keys = g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);
  g_autoptr(GPtrArray) values = g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);

  if (iter == NULL)
    return FALSE;
  while (qstore_iter_next (iter, error))
    {
      g_autoptr(GBytes) key = qstore_iter_get_key (iter);
      g_autoptr(GBytes) value = qstore_iter_get_value (iter);

      hash_sized (sum, g_bytes_get_data (key, NULL), g_bytes_get_size (key));
      hash_sized (sum, g_bytes_get_data (value, NULL), g_bytes_get_size (value));
      g_ptr_array_add (keys, g_steal_pointer (&key));
      g_ptr_array_add (values, g_steal_pointer (&value));
      (*n_entries)++;
    }
  if (*error != NULL)
    return FALSE;

  for (guint i = 0; i < keys->len; i++)
    {
      gsize len;
      const guint8 *key = g_bytes_get_data (keys->pdata[i], &len);
      g_autoptr(GBytes) value = qstore_kv_get (kv, key, len, error);
      g_autofree guint8 *past = g_malloc (len + 1);
      g_autoptr(GBytes) missing = NULL;

      if (*error != NULL)
        return FALSE;
      /* A changed byte that breaks the order can hide a key from a lookup
       * that the iteration shows: that is a different answer, not a crash. */
      if (value == NULL || !g_bytes_equal (value, values->pdata[i]))
        hash_sized (sum, (const guint8 *) "lookup differs", 14);

      /* The key just after this one is not in the store. */
      memcpy (past, key, len);
      past[len] = 0;
      missing = qstore_kv_get (kv, past, len + 1, error);
      if (*error != NULL)
        return FALSE;
      if (missing != NULL && (i + 1 == keys->len || !g_bytes_equal (keys->pdata[i + 1], missing)))
        hash_sized (sum, (const guint8 *) "missing key found", 17);
    }
  return TRUE;
}

static gboolean
read_all (QStoreProvider  *provider,
          GError         **error)
{
  g_autoptr(GChecksum) sum = g_checksum_new (G_CHECKSUM_SHA256);
  g_auto(GStrv) names = qstore_provider_list_stores (provider, error);
  guint64 n_entries = 0;

  if (names == NULL)
    return FALSE;
  for (guint i = 0; names[i] != NULL; i++)
    {
      g_autoptr(QStoreKV) kv = qstore_provider_open_store (provider, names[i], error);

      if (kv == NULL)
        return FALSE;
      hash_sized (sum, (const guint8 *) names[i], strlen (names[i]));
      if (!read_store (kv, sum, &n_entries, error))
        return FALSE;
    }
  g_print ("stores %u entries %" G_GUINT64_FORMAT " digest %s\n",
           g_strv_length (names), n_entries, g_checksum_get_string (sum));
  return TRUE;
}

static gboolean
check (QStoreProvider  *provider,
       GError         **error)
{
  g_autoptr(QStoreCheckReport) report = qstore_provider_check (provider, error);
  g_autofree char *json = NULL;

  if (report == NULL)
    return FALSE;
  json = qstore_check_report_to_json (report);
  g_print ("problems %u\n%s\n", qstore_check_report_get_n_problems (report), json);
  return TRUE;
}

int
main (int   argc,
      char *argv[])
{
  g_autoptr(QStoreProvider) provider = NULL;
  g_autoptr(GError) error = NULL;
  gboolean done;

  if (argc != 3 || (!g_str_equal (argv[1], "read") && !g_str_equal (argv[1], "check")))
    {
      g_printerr ("usage: %s read|check URI\n", argv[0]);
      return 2;
    }
  provider = qstore_provider_new_for_uri (argv[2], QSTORE_OPEN_READ_ONLY, &error);
  if (provider == NULL)
    done = FALSE;
  else if (g_str_equal (argv[1], "read"))
    done = read_all (provider, &error);
  else
    done = check (provider, &error);
  if (!done)
    {
      g_printerr ("error %d: %s\n", error->code, error->message);
      return 1;
    }
  qstore_provider_close_all (provider);
  return 0;
}
