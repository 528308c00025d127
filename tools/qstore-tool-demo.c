/* qstore-tool-demo.c: qstore demo
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <stdio.h>

#include "qstore-tool.h"

/* A small shop: customers, products, orders and stock moves, with
 * secondary indexes, a view over all of them, and enough rows (about
 * 15,000) that paging and row counts mean something. The rows are made by
 * SQL from a counter, so every demo store is the same. */
static const char *const schema_sql[] = {
  "CREATE TABLE customers ("
  "  id INTEGER PRIMARY KEY,"
  "  name TEXT NOT NULL,"
  "  email TEXT COLLATE NOCASE UNIQUE,"
  "  city TEXT,"
  "  joined TEXT NOT NULL)",
  "CREATE INDEX customers_city ON customers (city)",

  "CREATE TABLE products ("
  "  sku TEXT PRIMARY KEY,"
  "  title TEXT NOT NULL,"
  "  price REAL NOT NULL CHECK (price >= 0),"
  "  stock INTEGER NOT NULL DEFAULT 0)",
  "CREATE INDEX products_price ON products (price DESC)",

  "CREATE TABLE orders ("
  "  id INTEGER PRIMARY KEY,"
  "  customer_id INTEGER NOT NULL,"
  "  sku TEXT NOT NULL,"
  "  quantity INTEGER NOT NULL,"
  "  placed_at TEXT NOT NULL,"
  "  note TEXT)",
  "CREATE INDEX orders_customer ON orders (customer_id, placed_at)",
  "CREATE INDEX orders_sku ON orders (sku)",

  "CREATE TABLE stock_moves ("
  "  sku TEXT NOT NULL,"
  "  day TEXT NOT NULL,"
  "  delta INTEGER NOT NULL,"
  "  PRIMARY KEY (sku, day))",

  "CREATE VIEW order_totals AS"
  "  SELECT o.id AS order_id, c.name AS customer, p.title AS product,"
  "         o.quantity * p.price AS total"
  "  FROM orders o"
  "  JOIN customers c ON c.id = o.customer_id"
  "  JOIN products p ON p.sku = o.sku",
};

static const char *const data_sql[] = {
  "INSERT INTO customers (id, name, email, city, joined)"
  "  WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2000)"
  "  SELECT i,"
  "    json_extract('[\"Ada\",\"Ben\",\"Chloé\",\"Dmitri\",\"Emma\",\"Farid\",\"Grete\",\"Hiro\","
  "                  \"Ines\",\"Jonas\",\"Kemal\",\"Lena\",\"Mateo\",\"Nora\",\"Omar\",\"Paula\"]',"
  "                 '$[' || (i % 16) || ']') || ' ' ||"
  "    json_extract('[\"Albers\",\"Berg\",\"Costa\",\"Dubois\",\"Eriksen\",\"Fischer\",\"García\","
  "                  \"Horvat\",\"Ivanova\",\"Jansen\",\"Kowalski\"]', '$[' || (i * 7 % 11) || ']'),"
  "    'customer' || i || '@example.org',"
  "    CASE WHEN i % 13 = 0 THEN NULL ELSE"
  "    json_extract('[\"Amsterdam\",\"Berlin\",\"Copenhagen\",\"Dublin\",\"Edinburgh\","
  "                  \"Florence\",\"Geneva\",\"Helsinki\",\"Lisbon\",\"Vienna\"]',"
  "                 '$[' || (i * 3 % 10) || ']') END,"
  "    date('2020-01-01', '+' || (i * 17 % 1400) || ' days')"
  "  FROM n",

  "INSERT INTO products (sku, title, price, stock)"
  "  WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 500)"
  "  SELECT printf('SKU-%05d', i),"
  "    json_extract('[\"Teapot\",\"Notebook\",\"Lamp\",\"Chair\",\"Kettle\",\"Backpack\",\"Mug\","
  "                  \"Umbrella\",\"Scarf\",\"Bicycle bell\"]', '$[' || (i % 10) || ']') ||"
  "    ' ' || json_extract('[\"classic\",\"mini\",\"deluxe\",\"travel\",\"blue\",\"oak\"]',"
  "                        '$[' || (i * 5 % 6) || ']'),"
  "    round(2.5 + (i * 37 % 1000) / 10.0, 2),"
  "    i * 11 % 90"
  "  FROM n",

  "INSERT INTO orders (id, customer_id, sku, quantity, placed_at, note)"
  "  WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 10000)"
  "  SELECT i, i * 7919 % 2000 + 1, printf('SKU-%05d', i * 104729 % 500 + 1), i % 5 + 1,"
  "    datetime('2024-01-01', '+' || (i * 53) || ' minutes'),"
  "    CASE WHEN i % 9 = 0 THEN 'gift wrap, please' WHEN i % 31 = 0 THEN 'leave at the door' END"
  "  FROM n",

  "INSERT INTO stock_moves (sku, day, delta)"
  "  WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3000)"
  "  SELECT printf('SKU-%05d', i % 500 + 1), date('2024-01-01', '+' || (i / 500) || ' days'),"
  "    (i * 29 % 21) - 10"
  "  FROM n",
};

/* Two materialized views, one of them left stale by a change of a column
 * it reads. */
static const char *const materialized_sql[] = {
  "CREATE MATERIALIZED VIEW city_customers AS"
  "  SELECT city, count(*) AS customers FROM customers GROUP BY city",
  "CREATE MATERIALIZED VIEW cheap_products AS"
  "  SELECT sku, title, price FROM products WHERE price < 10",
  "ALTER TABLE products ALTER COLUMN title SET COLLATE NOCASE",
};

static gboolean
run_all (QStoreDatabase     *database,
         const char * const *statements,
         gsize               n_statements,
         GError            **error)
{
  for (gsize i = 0; i < n_statements; i++)
    if (!qstore_database_exec (database, statements[i], error))
      return FALSE;
  return TRUE;
}

static gboolean
directory_is_empty (const char *path)
{
  g_autoptr(GDir) dir = g_dir_open (path, 0, NULL);

  return dir == NULL || g_dir_read_name (dir) == NULL;
}

int
qstore_tool_demo (QStoreTool  *tool,
                  int          argc,
                  char       **argv)
{
  g_autoptr(GOptionContext) context = NULL;
  g_autoptr(QStoreDatabase) database = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *uri = NULL;
  g_autofree char *path = NULL;
  const char *command = argv[0];
  int status;

  context = qstore_tool_option_context_new (command, "DIR",
                                            "Create a demo LMDB store in DIR (a new or empty "
                                            "directory): the tables customers, products, orders "
                                            "and stock_moves with secondary indexes and about "
                                            "15,000 rows, the view order_totals and the "
                                            "materialized views city_customers and "
                                            "cheap_products (the second left stale by a change "
                                            "of a column it reads), closed cleanly.");
  status = qstore_tool_parse_options (context, command, &argc, &argv);
  if (status != QSTORE_TOOL_EXIT_OK)
    return status;
  if (argc != 2)
    return qstore_tool_usage_error (command, argc < 2 ? "No directory given"
                                                      : "Give exactly one directory");

  path = g_canonicalize_filename (argv[1], NULL);
  if (g_file_test (path, G_FILE_TEST_EXISTS) && !g_file_test (path, G_FILE_TEST_IS_DIR))
    return qstore_tool_fail_message ("“%s” is not a directory: choose a new or empty directory "
                                     "for the demo store", path);
  if (!directory_is_empty (path))
    return qstore_tool_fail_message ("“%s” is not empty: remove it, or choose a new or empty "
                                     "directory for the demo store", path);
  if (g_mkdir_with_parents (path, 0755) != 0)
    return qstore_tool_fail_message ("Cannot create “%s”: %s", path, g_strerror (errno));

  uri = g_strconcat ("lmdb:", path, NULL);
  if (!(database = qstore_database_open (uri, QSTORE_OPEN_NONE, &error)) ||
      !run_all (database, schema_sql, G_N_ELEMENTS (schema_sql), &error) ||
      !run_all (database, data_sql, G_N_ELEMENTS (data_sql), &error) ||
      !run_all (database, materialized_sql, G_N_ELEMENTS (materialized_sql), &error))
    {
      if (database != NULL)
        qstore_database_close (database, NULL);
      return qstore_tool_fail (error);
    }

  if (!qstore_database_close (database, &error))
    return qstore_tool_fail (error);

  printf ("Created the demo store %s\n", uri);
  return QSTORE_TOOL_EXIT_OK;
}
