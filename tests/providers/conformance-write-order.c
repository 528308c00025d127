/* conformance-write-order.c: writes in any order land as a model says
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "conformance.h"

/* Providers take shortcuts for ops in key order (a cursor that stays on
 * its page, appends past a store's last key) and must not take them when
 * the order breaks. Each round writes a list of puts and deletes in one
 * of several orders to stores that already hold keys, and the stores
 * must then hold what a sorted map of the same writes holds. */

typedef enum
{
  ORDER_SORTED,        /* ascending, over keys old and new */
  ORDER_PAST_END,      /* ascending, every key after the store's last */
  ORDER_PAST_END_THEN_BACK, /* past the end, then a key inside again */
  ORDER_RANDOM,
  N_ORDERS
} Order;

#define STORES 2
#define ROUNDS 24

typedef struct
{
  GBytes *key;
  GBytes *value;   /* NULL: a delete */
} Op;

static void
op_clear (Op *op)
{
  g_bytes_unref (op->key);
  g_clear_pointer (&op->value, g_bytes_unref);
}

static int
op_compare (gconstpointer a,
            gconstpointer b)
{
  return g_bytes_compare (((const Op *) a)->key, ((const Op *) b)->key);
}

/* Short keys over a small alphabet with a zero byte, so prefixes,
 * lengths and ties all occur. @lead, when nonzero, is the first byte;
 * otherwise the first byte is below 0x80. */
static GBytes *
random_key (guint8 lead)
{
  static const guint8 alphabet[] = { 0x00, 'a', 'b', 0x7f, 0x80, 0xfe };
  guint8 key[6];
  gsize len = g_test_rand_int_range (1, sizeof key + 1);

  for (gsize i = 0; i < len; i++)
    key[i] = alphabet[g_test_rand_int_range (0, G_N_ELEMENTS (alphabet))];
  key[0] = lead != 0 ? lead : alphabet[g_test_rand_int_range (0, 4)];
  return g_bytes_new (key, len);
}

/* The ops of one round. Keys past the end lead with 0x80 + @round, above
 * every key of earlier rounds. */
static GArray *
round_ops (guint round,
           Order order)
{
  GArray *ops = g_array_new (FALSE, FALSE, sizeof (Op));
  guint n = g_test_rand_int_range (1, 200);
  gboolean past_end = order == ORDER_PAST_END || order == ORDER_PAST_END_THEN_BACK;

  g_array_set_clear_func (ops, (GDestroyNotify) op_clear);
  for (guint i = 0; i < n; i++)
    {
      Op op = { random_key (past_end ? 0x80 + round : 0), NULL };
      int dice = g_test_rand_int_range (0, 10);

      if (dice > 1)
        {
          char *value = g_strdup_printf ("r%u.%u", round, i);

          op.value = g_bytes_new_take (value, strlen (value));
        }
      g_array_append_val (ops, op);
      /* The same key twice: the later write must win. */
      if (dice == 9)
        {
          Op again = { g_bytes_ref (op.key), NULL };

          if (g_test_rand_bit ())
            again.value = g_bytes_new_static ("again", 5);
          g_array_append_val (ops, again);
        }
    }
  if (order == ORDER_RANDOM)
    {
      for (guint i = ops->len; i > 1; i--)
        {
          guint j = g_test_rand_int_range (0, i);
          Op tmp = g_array_index (ops, Op, i - 1);

          g_array_index (ops, Op, i - 1) = g_array_index (ops, Op, j);
          g_array_index (ops, Op, j) = tmp;
        }
      return ops;
    }
  /* Stable: ties keep their write order. */
  g_array_sort (ops, op_compare);
  if (order == ORDER_PAST_END_THEN_BACK)
    {
      Op back = { random_key (0), g_bytes_new_static ("back", 4) };
      Op after = { random_key (0x80 + round), g_bytes_new_static ("after", 5) };

      g_array_append_val (ops, back);
      g_array_append_val (ops, after);
    }
  return ops;
}

static int
bytes_compare (gconstpointer a,
               gconstpointer b,
               gpointer      data)
{
  return g_bytes_compare (a, b);
}

static void
model_apply (GTree  *model,
             GArray *ops)
{
  for (guint i = 0; i < ops->len; i++)
    {
      Op *op = &g_array_index (ops, Op, i);

      if (op->value != NULL)
        g_tree_replace (model, g_bytes_ref (op->key), g_bytes_ref (op->value));
      else
        g_tree_remove (model, op->key);
    }
}

static gboolean
append_entry (gpointer key,
              gpointer value,
              gpointer data)
{
  GString *out = data;
  g_autofree char *k = g_base64_encode (g_bytes_get_data (key, NULL), g_bytes_get_size (key));
  g_autofree char *v = g_base64_encode (g_bytes_get_data (value, NULL), g_bytes_get_size (value));

  g_string_append_printf (out, "%s=%s\n", k, v);
  return FALSE;
}

static char *
model_dump (GTree *model)
{
  GString *out = g_string_new (NULL);

  g_tree_foreach (model, append_entry, out);
  return g_string_free (out, FALSE);
}

static char *
store_dump (QStoreKV *kv)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(QStoreIter) iter = qstore_kv_iterate (kv, NULL, &error);
  GString *out = g_string_new (NULL);

  g_assert_no_error (error);
  while (qstore_iter_next (iter, &error))
    {
      gsize key_len, value_len;
      const guint8 *key = qstore_iter_peek_key (iter, &key_len);
      const guint8 *value = qstore_iter_peek_value (iter, &value_len);
      g_autofree char *k = g_base64_encode (key, key_len);
      g_autofree char *v = g_base64_encode (value, value_len);

      g_string_append_printf (out, "%s=%s\n", k, v);
    }
  g_assert_no_error (error);
  return g_string_free (out, FALSE);
}

static QStoreWriteOp *
write_ops (QStoreKV *kv,
           GArray   *ops)
{
  QStoreWriteOp *out = g_new0 (QStoreWriteOp, ops->len);

  for (guint i = 0; i < ops->len; i++)
    {
      Op *op = &g_array_index (ops, Op, i);

      out[i].store = kv;
      out[i].key = g_bytes_get_data (op->key, &out[i].key_len);
      out[i].kind = op->value != NULL ? QSTORE_WRITE_OP_PUT : QSTORE_WRITE_OP_DELETE;
      if (op->value != NULL)
        out[i].value = g_bytes_get_data (op->value, &out[i].value_len);
    }
  return out;
}

/* @in_txn: through write transactions, two writes per store and round,
 * so the second one starts where the first left the store. */
static void
run_rounds (Fixture  *f,
            gboolean  in_txn)
{
  QStoreKV *kvs[STORES];
  GTree *models[STORES];

  for (guint s = 0; s < STORES; s++)
    {
      g_autofree char *name = g_strdup_printf ("main.order%u", s);

      kvs[s] = store (f, name);
      models[s] = g_tree_new_full (bytes_compare, NULL,
                                   (GDestroyNotify) g_bytes_unref,
                                   (GDestroyNotify) g_bytes_unref);
    }

  for (guint round = 0; round < ROUNDS; round++)
    {
      g_autoptr(QStoreWriteTxn) txn = NULL;
      g_autoptr(GError) error = NULL;

      if (in_txn)
        {
          txn = qstore_provider_begin_write (f->provider, &error);
          g_assert_no_error (error);
        }
      for (guint s = 0; s < STORES; s++)
        for (guint part = 0; part < (in_txn ? 2 : 1); part++)
          {
            Order order = (round + s + part) % N_ORDERS;
            g_autoptr(GArray) ops = round_ops (round * 2 + part, order);
            g_autofree QStoreWriteOp *wops = write_ops (kvs[s], ops);
            gboolean ok;

            if (in_txn)
              ok = qstore_write_txn_write (txn, wops, ops->len, &error);
            else
              ok = qstore_provider_write (f->provider, wops, ops->len, QSTORE_WRITE_NONE,
                                          &error);
            g_assert_no_error (error);
            g_assert_true (ok);
            model_apply (models[s], ops);
          }
      if (in_txn)
        {
          g_assert_true (qstore_write_txn_commit (txn, QSTORE_WRITE_NONE, &error));
          g_assert_no_error (error);
        }
      for (guint s = 0; s < STORES; s++)
        {
          g_autofree char *want = model_dump (models[s]);
          g_autofree char *got = store_dump (kvs[s]);

          g_assert_cmpstr (got, ==, want);
        }
    }

  for (guint s = 0; s < STORES; s++)
    {
      g_assert_cmpint (g_tree_nnodes (models[s]), >, 0);
      g_tree_unref (models[s]);
      g_object_unref (kvs[s]);
    }
}

static void
test_write_order (Fixture       *f,
                  gconstpointer  data)
{
  run_rounds (f, FALSE);
}

static void
test_write_order_txn (Fixture       *f,
                      gconstpointer  data)
{
  if (!(f->caps & QSTORE_CAPABILITY_WRITE_TXN))
    {
      g_test_skip ("the provider has no write transactions");
      return;
    }
  run_rounds (f, TRUE);
}

void
conformance_add_write_order_tests (const char *prefix)
{
  g_autofree char *plain = g_strconcat (prefix, "/core/write-order", NULL);
  g_autofree char *txn = g_strconcat (prefix, "/write-txn/write-order", NULL);

  g_test_add (plain, Fixture, NULL, fixture_setup, test_write_order, fixture_teardown);
  g_test_add (txn, Fixture, NULL, fixture_setup, test_write_order_txn, fixture_teardown);
}
