/* hello.c: store, read and walk a few keys with qstore
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Usage: hello [LMDB-DIRECTORY]
 * Without a directory, the data lives in memory.
 */
#include <string.h>

#include <qstore.h>

static const char *fruits[][2] = {
  { "apple", "red" },
  { "banana", "yellow" },
  { "cherry", "dark red" },
  { "date", "brown" },
  { "elderberry", "purple" },
};

/* A string as a key or value: its bytes, without the terminating NUL. */
#define BYTES(s) (const guint8 *) (s), strlen (s)

int
main (int   argc,
      char *argv[])
{
  g_autoptr(GError) error = NULL;
  g_autoptr(QStoreProvider) provider = NULL;
  g_autoptr(QStoreKV) store = NULL;
  g_autoptr(GBytes) value = NULL;
  g_autoptr(QStoreBounds) bounds = NULL;
  g_autoptr(QStoreIter) iter = NULL;
  gsize key_len, value_len;

  if (argc > 1)
    provider = qstore_provider_new ("lmdb", argv[1], QSTORE_OPEN_NONE, &error);
  else
    provider = qstore_provider_new_for_uri ("memory:", QSTORE_OPEN_NONE, &error);
  if (provider == NULL)
    goto fail;
  store = qstore_provider_open_store (provider, "main.fruit", &error);
  if (store == NULL)
    goto fail;

  for (guint i = 0; i < G_N_ELEMENTS (fruits); i++)
    if (!qstore_kv_put (store, BYTES (fruits[i][0]), BYTES (fruits[i][1]),
                        QSTORE_WRITE_NONE, &error))
      goto fail;

  value = qstore_kv_get (store, BYTES ("cherry"), &error);
  if (value == NULL)
    goto fail;
  g_print ("cherry: %.*s\n", (int) g_bytes_get_size (value),
           (const char *) g_bytes_get_data (value, NULL));

  /* Keys from "b" up to, not including, "d". */
  bounds = qstore_bounds_new ();
  qstore_bounds_set_gte (bounds, BYTES ("b"));
  qstore_bounds_set_lt (bounds, BYTES ("d"));
  iter = qstore_kv_iterate (store, bounds, &error);
  if (iter == NULL)
    goto fail;
  g_print ("from b to d:\n");
  while (qstore_iter_next (iter, &error))
    {
      const guint8 *key = qstore_iter_peek_key (iter, &key_len);
      const guint8 *color = qstore_iter_peek_value (iter, &value_len);

      g_print ("  %.*s: %.*s\n", (int) key_len, key, (int) value_len, color);
    }
  if (error != NULL)
    goto fail;

  qstore_provider_close_all (provider);
  return 0;

fail:
  g_printerr ("hello: %s\n", error->message);
  return 1;
}
