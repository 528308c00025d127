/* qstore-bench-mixed.c: everyday SQL on qstore and on native SQLite
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * `qstore-bench --layer sql --workload mixed`: a dozen tables of 10 to
 * 10,000 rows, and statements of the kinds applications write — point
 * reads, ranges and IN lists, ORDER BY … LIMIT, joins of two to five
 * tables with and without an index, GROUP BY … HAVING, compound SELECTs,
 * correlated and uncorrelated subqueries, a view, and bursts of
 * autocommit INSERT/UPDATE/DELETE — run the same way on a QStoreDatabase
 * (through qstore_database_query(), with parameters, as applications
 * call it) and on a native SQLite database (prepared statements kept in a
 * cache, as language bindings keep them) in one run.
 *
 * Native SQLite is an in-memory database next to the memory provider and
 * a file in WAL mode with synchronous=FULL next to a persistent one, so
 * commits are durable on both sides. Both get the same rows and the same
 * parameters (one splitmix64 stream per engine, seeded alike); every
 * class's result checksum (a sum of row hashes: the order rows come in
 * does not count) must agree, or the run fails. One JSON line per query
 * class, and one for the total, give both engines' seconds and the ratio.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <glib/gstdio.h>
#include <sqlite3.h>
#include <qstore.h>

#include "qstore-bench-mixed.h"

/* Tables and their rows */

#define N_CUSTOMERS  2000
#define N_ORDERS     10000
#define N_PRODUCTS   500
#define N_CATEGORIES 20
#define N_CITIES     50
#define N_REGIONS    10
#define N_SUPPLIERS  200
#define N_SUPPLIES   3000
#define N_EVENTS     5000
#define N_TAGS       8000
#define N_AUDIT      1000
#define N_KV         100

static const char *const schema[] = {
  "CREATE TABLE regions(id INTEGER PRIMARY KEY, name TEXT)",
  "CREATE TABLE cities(name TEXT COLLATE NOCASE PRIMARY KEY, region INTEGER)",
  "CREATE TABLE customers(id INTEGER PRIMARY KEY, name TEXT, city TEXT COLLATE NOCASE, "
  "age INTEGER, score REAL)",
  "CREATE INDEX customers_city ON customers(city)",
  "CREATE TABLE categories(id INTEGER PRIMARY KEY, name TEXT)",
  "CREATE TABLE products(id INTEGER PRIMARY KEY, name TEXT, category INTEGER, price REAL)",
  "CREATE TABLE orders(id INTEGER PRIMARY KEY, customer INTEGER, product INTEGER, "
  "qty INTEGER, day INTEGER)",
  "CREATE INDEX orders_customer ON orders(customer)",
  "CREATE TABLE suppliers(id INTEGER PRIMARY KEY, name TEXT, city TEXT)",
  "CREATE TABLE supplies(supplier INTEGER, product INTEGER, cost REAL, "
  "PRIMARY KEY (supplier, product))",
  "CREATE TABLE events(id INTEGER PRIMARY KEY, kind TEXT, ref INTEGER, at INTEGER)",
  "CREATE TABLE tags(id INTEGER PRIMARY KEY, event INTEGER, tag TEXT)",
  "CREATE TABLE audit(id INTEGER PRIMARY KEY, who INTEGER, what TEXT)",
  "CREATE TABLE kv(k TEXT PRIMARY KEY, v INTEGER)",
  "CREATE VIEW big_orders AS SELECT o.id, c.name, o.qty FROM orders o "
  "JOIN customers c ON c.id = o.customer WHERE o.qty > 8",
};

/* Parameters a statement takes, drawn from the engine's stream. */
typedef enum
{
  P_NONE,
  P_ID,        /* (x): 1..a */
  P_RANGE,     /* (xx): lo, lo + b, lo in 1..a */
  P_IN4,       /* (xxxx): four in 1..a */
  P_KEY,       /* (s): key-N, N in 0..a-1 */
  P_CITY,      /* (s): a city, in random case */
  P_KIND,      /* (s): an event kind */
  P_ID_ID,     /* (xx): 1..a, 1..b */
  P_TEXT_ID,   /* (sx): some text, 1..a */
  P_REAL,      /* (d): 0..a */
} ParamShape;

typedef struct
{
  const char *klass;
  const char *sql;
  ParamShape  shape;
  int         a;
  int         b;
  guint       reps;
} Statement;

static const Statement statements[] = {
  { "point", "SELECT name, age, score FROM customers WHERE id = ?", P_ID, N_CUSTOMERS, 0, 2000 },
  { "point", "SELECT v FROM kv WHERE k = ?", P_KEY, N_KV, 0, 500 },
  { "point", "SELECT region FROM cities WHERE name = ?", P_CITY, 0, 0, 300 },

  { "range", "SELECT count(*), sum(qty) FROM orders WHERE customer BETWEEN ? AND ?",
    P_RANGE, N_CUSTOMERS, 20, 200 },
  { "range", "SELECT id, name FROM customers WHERE id IN (?, ?, ?, ?)", P_IN4, N_CUSTOMERS, 0, 300 },
  { "range", "SELECT count(*) FROM events WHERE at BETWEEN ? AND ?", P_RANGE, 100000, 500, 50 },
  { "range", "SELECT id, name FROM customers WHERE city = ?", P_CITY, 0, 0, 100 },

  { "order-limit", "SELECT id, name FROM customers ORDER BY score DESC, id LIMIT 10", P_NONE, 0, 0, 30 },
  { "order-limit", "SELECT id, qty FROM orders WHERE customer = ? ORDER BY day DESC, id LIMIT 5",
    P_ID, N_CUSTOMERS, 0, 300 },
  { "order-limit", "SELECT id FROM orders ORDER BY id DESC LIMIT 20", P_NONE, 0, 0, 200 },

  { "join-indexed", "SELECT c.name, o.qty FROM customers c JOIN orders o ON o.customer = c.id "
    "WHERE c.id = ?", P_ID, N_CUSTOMERS, 0, 300 },
  { "join-indexed", "SELECT c.name, p.name, o.qty FROM orders o JOIN customers c ON c.id = o.customer "
    "JOIN products p ON p.id = o.product WHERE o.customer = ?", P_ID, N_CUSTOMERS, 0, 200 },
  { "join-indexed", "SELECT c.name, p.name, cat.name FROM orders o JOIN customers c ON c.id = o.customer "
    "JOIN products p ON p.id = o.product JOIN categories cat ON cat.id = p.category "
    "WHERE o.customer = ?", P_ID, N_CUSTOMERS, 0, 100 },
  { "join-indexed", "SELECT r.name, count(*) FROM orders o JOIN customers c ON c.id = o.customer "
    "JOIN cities ci ON ci.name = c.city JOIN regions r ON r.id = ci.region "
    "JOIN products p ON p.id = o.product WHERE o.customer BETWEEN ? AND ? GROUP BY r.name",
    P_RANGE, N_CUSTOMERS, 30, 50 },

  { "join-unindexed", "SELECT count(*) FROM events e JOIN tags t ON t.event = e.id "
    "WHERE e.kind = ?", P_KIND, 0, 0, 10 },
  { "join-unindexed", "SELECT p.name, s.cost FROM products p JOIN supplies s ON s.product = p.id "
    "WHERE p.category = ?", P_ID, N_CATEGORIES, 0, 30 },
  { "join-unindexed", "SELECT count(*) FROM suppliers s JOIN products p ON p.category = s.id % 20",
    P_NONE, 0, 0, 5 },
  { "join-unindexed", "SELECT count(*) FROM events a JOIN events b ON a.ref = b.ref AND a.id < b.id "
    "WHERE a.kind = ?", P_KIND, 0, 0, 5 },
  { "join-unindexed", "SELECT t.tag, count(*) FROM tags t JOIN events e ON e.ref = t.event "
    "JOIN suppliers s ON s.id = e.ref GROUP BY t.tag", P_NONE, 0, 0, 3 },

  { "group-having", "SELECT customer, count(*), sum(qty) FROM orders GROUP BY customer "
    "HAVING count(*) > ?", P_ID, 8, 0, 10 },
  { "group-having", "SELECT category, avg(price) FROM products GROUP BY category "
    "HAVING avg(price) > ?", P_REAL, 60, 0, 50 },
  { "group-having", "SELECT kind, count(DISTINCT ref) FROM events GROUP BY kind", P_NONE, 0, 0, 10 },

  /* lower(): which of two NOCASE-equal cities UNION keeps depends on
   * the order rows come in. */
  { "compound", "SELECT lower(city) FROM customers WHERE age < ? UNION SELECT city FROM suppliers",
    P_ID, 30, 0, 30 },
  { "compound", "SELECT product FROM orders WHERE customer = ? INTERSECT "
    "SELECT product FROM supplies WHERE supplier = ?", P_ID_ID, N_CUSTOMERS, N_SUPPLIERS, 100 },
  { "compound", "SELECT id FROM products EXCEPT SELECT product FROM orders WHERE day > ?",
    P_ID, 365, 0, 20 },
  { "compound", "SELECT name FROM regions UNION ALL SELECT name FROM categories", P_NONE, 0, 0, 200 },

  { "subquery-correlated", "SELECT id, (SELECT count(*) FROM orders o WHERE o.customer = c.id) "
    "FROM customers c WHERE c.id BETWEEN ? AND ?", P_RANGE, N_CUSTOMERS, 50, 50 },
  { "subquery-correlated", "SELECT name FROM products p WHERE EXISTS (SELECT 1 FROM supplies s "
    "WHERE s.product = p.id AND s.cost < ?)", P_REAL, 20, 0, 10 },
  { "subquery-correlated", "SELECT id, (SELECT max(p.price) FROM products p WHERE p.category = c.id) "
    "FROM categories c", P_NONE, 0, 0, 50 },

  { "subquery-uncorrelated", "SELECT count(*) FROM orders WHERE product IN "
    "(SELECT id FROM products WHERE category = ?)", P_ID, N_CATEGORIES, 0, 30 },
  { "subquery-uncorrelated", "SELECT name FROM customers WHERE score > "
    "(SELECT avg(score) FROM customers) AND age = ?", P_ID, 80, 0, 30 },

  { "view", "SELECT count(*), sum(qty) FROM big_orders WHERE name = ?", P_KEY, N_CUSTOMERS, 0, 20 },

  { "dml", "INSERT INTO audit(what, who) VALUES (?, ?)", P_TEXT_ID, N_CUSTOMERS, 0, 300 },
  { "dml", "UPDATE audit SET what = ? WHERE id = ?", P_TEXT_ID, N_AUDIT, 0, 200 },
  { "dml", "DELETE FROM audit WHERE id = ?", P_ID, N_AUDIT + 300, 0, 100 },
  /* What the bursts left, read back into the class's checksum. */
  { "dml", "SELECT count(*), sum(who), group_concat(what) FROM audit", P_NONE, 0, 0, 1 },
};

static const char *const kinds[] = { "click", "view", "buy", "share", "leave" };

static gint64
draw (guint64 *rng,
      gint64   n)
{
  return (gint64) (qstore_bench_rng_next (rng) % (guint64) MAX (n, 1));
}

static char *
city_name (gint64   n,
           guint64 *rng)
{
  char *name = g_strdup_printf ("city-%02d", (int) n);

  /* Cities compare under NOCASE: ask in any case. */
  if (rng != NULL && (qstore_bench_rng_next (rng) & 1))
    name[0] = 'C';
  return name;
}

/* The parameters of one run of @st. */
static GVariant *
make_params (const Statement *st,
             guint64         *rng)
{
  g_autofree char *text = NULL;
  gint64 lo;

  switch (st->shape)
    {
    case P_ID:
      return g_variant_new ("(x)", 1 + draw (rng, st->a));
    case P_RANGE:
      lo = 1 + draw (rng, st->a);
      return g_variant_new ("(xx)", lo, lo + st->b);
    case P_IN4:
      return g_variant_new ("(xxxx)", 1 + draw (rng, st->a), 1 + draw (rng, st->a),
                            1 + draw (rng, st->a), 1 + draw (rng, st->a));
    case P_KEY:
      text = g_strdup_printf ("key-%d", (int) draw (rng, st->a));
      return g_variant_new ("(s)", text);
    case P_CITY:
      text = city_name (draw (rng, N_CITIES), rng);
      return g_variant_new ("(s)", text);
    case P_KIND:
      return g_variant_new ("(s)", kinds[draw (rng, G_N_ELEMENTS (kinds))]);
    case P_ID_ID:
      return g_variant_new ("(xx)", 1 + draw (rng, st->a), 1 + draw (rng, st->b));
    case P_TEXT_ID:
      text = g_strdup_printf ("note-%d", (int) draw (rng, 1000));
      return g_variant_new ("(sx)", text, 1 + draw (rng, st->a));
    case P_REAL:
      return g_variant_new ("(d)", (double) draw (rng, st->a * 10) / 10.0);
    case P_NONE:
    default:
      return NULL;
    }
}

/* The rows of every table, one statement and its parameters at a time. */
typedef gboolean (*LoadFunc) (gpointer     engine,
                              const char  *sql,
                              GVariant    *params,
                              GError     **error);

static gboolean
load_rows (LoadFunc   load,
           gpointer   engine,
           GError   **error)
{
  guint64 rng = 7;
  gboolean ok = TRUE;

#define ROW(sql, ...) (ok = ok && load (engine, sql, g_variant_new (__VA_ARGS__), error))
  for (gint64 i = 1; i <= N_REGIONS; i++)
    ROW ("INSERT INTO regions VALUES (?, ?)", "(xs)", i, i % 2 ? "north" : "south");
  for (gint64 i = 0; i < N_CITIES; i++)
    {
      g_autofree char *name = city_name (i, NULL);

      ROW ("INSERT INTO cities VALUES (?, ?)", "(sx)", name, 1 + i % N_REGIONS);
    }
  for (gint64 i = 1; i <= N_CUSTOMERS; i++)
    {
      g_autofree char *name = g_strdup_printf ("key-%d", (int) (i * 7 % N_CUSTOMERS));
      g_autofree char *city = city_name (draw (&rng, N_CITIES), &rng);

      ROW ("INSERT INTO customers VALUES (?, ?, ?, ?, ?)", "(xssxd)", i, name, city,
           18 + draw (&rng, 62), (double) draw (&rng, 10000) / 100.0);
    }
  for (gint64 i = 1; i <= N_CATEGORIES; i++)
    ROW ("INSERT INTO categories VALUES (?, ?)", "(xs)", i, "category");
  for (gint64 i = 1; i <= N_PRODUCTS; i++)
    ROW ("INSERT INTO products VALUES (?, ?, ?, ?)", "(xsxd)", i, "product",
         1 + draw (&rng, N_CATEGORIES), (double) draw (&rng, 12000) / 100.0);
  for (gint64 i = 1; i <= N_ORDERS; i++)
    ROW ("INSERT INTO orders VALUES (?, ?, ?, ?, ?)", "(xxxxx)", i, 1 + draw (&rng, N_CUSTOMERS),
         1 + draw (&rng, N_PRODUCTS), 1 + draw (&rng, 10), draw (&rng, 365));
  for (gint64 i = 1; i <= N_SUPPLIERS; i++)
    {
      g_autofree char *city = city_name (draw (&rng, N_CITIES), NULL);

      ROW ("INSERT INTO suppliers VALUES (?, ?, ?)", "(xss)", i, "supplier", city);
    }
  for (gint64 i = 0; i < N_SUPPLIES; i++)
    ROW ("INSERT OR IGNORE INTO supplies VALUES (?, ?, ?)", "(xxd)", 1 + draw (&rng, N_SUPPLIERS),
         1 + draw (&rng, N_PRODUCTS), (double) draw (&rng, 5000) / 100.0);
  for (gint64 i = 1; i <= N_EVENTS; i++)
    ROW ("INSERT INTO events VALUES (?, ?, ?, ?)", "(xsxx)", i,
         kinds[draw (&rng, G_N_ELEMENTS (kinds))], 1 + draw (&rng, 1000), draw (&rng, 100000));
  for (gint64 i = 1; i <= N_TAGS; i++)
    {
      g_autofree char *tag = g_strdup_printf ("tag-%d", (int) draw (&rng, 40));

      ROW ("INSERT INTO tags VALUES (?, ?, ?)", "(xxs)", i, 1 + draw (&rng, N_EVENTS), tag);
    }
  for (gint64 i = 1; i <= N_AUDIT; i++)
    ROW ("INSERT INTO audit VALUES (?, ?, ?)", "(xxs)", i, draw (&rng, N_CUSTOMERS), "created");
  for (gint64 i = 0; i < N_KV; i++)
    {
      g_autofree char *key = g_strdup_printf ("key-%d", (int) i);

      ROW ("INSERT INTO kv VALUES (?, ?)", "(sx)", key, i * i);
    }
#undef ROW
  return ok;
}

/* Checksums: a row's hash, summed over rows. */

static guint64
fnv (guint64       h,
     const void   *data,
     gsize         len)
{
  const guint8 *p = data;

  for (gsize i = 0; i < len; i++)
    {
      h ^= p[i];
      h *= G_GUINT64_CONSTANT (1099511628211);
    }
  return h;
}

static guint64
hash_integer (guint64 h,
              gint64  v)
{
  return fnv (fnv (h, "i", 1), &v, sizeof v);
}

static guint64
hash_real (guint64 h,
           double  v)
{
  return fnv (fnv (h, "r", 1), &v, sizeof v);
}

static guint64
hash_bytes (guint64      h,
            const char  *tag,
            const void  *data,
            gsize        len)
{
  return fnv (fnv (h, tag, 1), data, len);
}

#define HASH_SEED G_GUINT64_CONSTANT (14695981039346656037)

/* Native SQLite */

typedef struct
{
  sqlite3    *db;
  GHashTable *cache;   /* SQL → sqlite3_stmt */
} Native;

static sqlite3_stmt *
native_statement (Native      *native,
                  const char  *sql,
                  GError     **error)
{
  sqlite3_stmt *stmt = g_hash_table_lookup (native->cache, sql);

  if (stmt != NULL)
    return stmt;
  if (sqlite3_prepare_v2 (native->db, sql, -1, &stmt, NULL) != SQLITE_OK)
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_FAILED, "Native SQLite cannot prepare “%s”: %s",
                   sql, sqlite3_errmsg (native->db));
      return NULL;
    }
  g_hash_table_insert (native->cache, g_strdup (sql), stmt);
  return stmt;
}

static void
native_bind (sqlite3_stmt *stmt,
             GVariant     *params)
{
  gsize n = params != NULL ? g_variant_n_children (params) : 0;

  for (gsize i = 0; i < n; i++)
    {
      g_autoptr(GVariant) value = g_variant_get_child_value (params, i);

      if (g_variant_is_of_type (value, G_VARIANT_TYPE_INT64))
        sqlite3_bind_int64 (stmt, (int) i + 1, g_variant_get_int64 (value));
      else if (g_variant_is_of_type (value, G_VARIANT_TYPE_DOUBLE))
        sqlite3_bind_double (stmt, (int) i + 1, g_variant_get_double (value));
      else
        sqlite3_bind_text (stmt, (int) i + 1, g_variant_get_string (value, NULL), -1,
                           SQLITE_TRANSIENT);
    }
}

static void
statement_free (gpointer stmt)
{
  sqlite3_finalize (stmt);
}

/* Runs @sql; adds the hash of each row it returns (and of its changes
 * when it writes) to *@sum. Takes @params when floating. */
static gboolean
native_run (Native      *native,
            const char  *sql,
            GVariant    *params,
            guint64     *sum,
            GError     **error)
{
  g_autoptr(GVariant) owned = params != NULL ? g_variant_ref_sink (params) : NULL;
  sqlite3_stmt *stmt = native_statement (native, sql, error);
  int rc;

  if (stmt == NULL)
    return FALSE;
  native_bind (stmt, owned);
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      guint64 h = HASH_SEED;

      for (int i = 0; i < sqlite3_column_count (stmt); i++)
        switch (sqlite3_column_type (stmt, i))
          {
          case SQLITE_INTEGER:
            h = hash_integer (h, sqlite3_column_int64 (stmt, i));
            break;
          case SQLITE_FLOAT:
            h = hash_real (h, sqlite3_column_double (stmt, i));
            break;
          case SQLITE_TEXT:
            h = hash_bytes (h, "t", sqlite3_column_text (stmt, i), sqlite3_column_bytes (stmt, i));
            break;
          case SQLITE_BLOB:
            h = hash_bytes (h, "b", sqlite3_column_blob (stmt, i), sqlite3_column_bytes (stmt, i));
            break;
          default:
            h = fnv (h, "n", 1);
            break;
          }
      *sum += h;
    }
  if (rc != SQLITE_DONE)
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_FAILED, "Native SQLite failed on “%s”: %s",
                   sql, sqlite3_errmsg (native->db));
      sqlite3_reset (stmt);
      return FALSE;
    }
  if (sqlite3_stmt_readonly (stmt) == 0)
    *sum += (guint64) sqlite3_changes64 (native->db);
  sqlite3_reset (stmt);
  sqlite3_clear_bindings (stmt);
  return TRUE;
}

static gboolean
native_load (gpointer     engine,
             const char  *sql,
             GVariant    *params,
             GError     **error)
{
  guint64 ignored = 0;

  return native_run (engine, sql, params, &ignored, error);
}

/* qstore */

/* One value, read with the typed getters as native_run() reads a column. */
static guint64
hash_value (guint64       h,
            QStoreResult *result,
            guint         row,
            guint         column)
{
  switch (qstore_result_get_value_type (result, row, column))
    {
    case QSTORE_SQL_TYPE_INTEGER:
      return hash_integer (h, qstore_result_get_int64 (result, row, column));
    case QSTORE_SQL_TYPE_REAL:
      return hash_real (h, qstore_result_get_double (result, row, column));
    case QSTORE_SQL_TYPE_TEXT:
      {
        const char *text = qstore_result_get_text (result, row, column);

        return hash_bytes (h, "t", text, strlen (text));
      }
    case QSTORE_SQL_TYPE_BLOB:
      {
        g_autoptr(GBytes) blob = qstore_result_get_blob (result, row, column);
        gsize len;
        const guint8 *data = g_bytes_get_data (blob, &len);

        return hash_bytes (h, "b", data, len);
      }
    default:
      return fnv (h, "n", 1);
    }
}

static gboolean
qstore_run (QStoreDatabase  *db,
            const char      *sql,
            GVariant        *params,
            guint64         *sum,
            GError         **error)
{
  g_autoptr(QStoreResult) result = qstore_database_query (db, sql, params, error);
  guint n_rows, n_columns;

  if (result == NULL)
    return FALSE;
  n_rows = qstore_result_get_n_rows (result);
  n_columns = qstore_result_get_n_columns (result);
  for (guint row = 0; row < n_rows; row++)
    {
      guint64 h = HASH_SEED;

      for (guint column = 0; column < n_columns; column++)
        h = hash_value (h, result, row, column);
      *sum += h;
    }
  if (n_columns == 0)
    *sum += (guint64) qstore_result_get_changes (result);
  return TRUE;
}

static gboolean
qstore_load (gpointer     engine,
             const char  *sql,
             GVariant    *params,
             GError     **error)
{
  guint64 ignored = 0;

  return qstore_run (engine, sql, params, &ignored, error);
}

/* The run */

typedef struct
{
  double seconds[2];   /* native, qstore */
  double cpu[2];
} Times;

typedef struct
{
  const char *name;
  Times       round;        /* of the round running */
  GArray     *rounds;       /* Times, one per round run */
  guint64     checksum[2];
  guint       ops;          /* statements of one round */
} ClassResult;

static void
class_result_clear (ClassResult *c)
{
  g_clear_pointer (&c->rounds, g_array_unref);
}

static double
now (clockid_t clock)
{
  struct timespec ts;

  clock_gettime (clock, &ts);
  return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

static ClassResult *
class_for (GArray     *classes,
           const char *name)
{
  ClassResult fresh = { name, { { 0, 0 }, { 0, 0 } }, NULL, { 0, 0 }, 0 };

  for (guint i = 0; i < classes->len; i++)
    if (g_str_equal (g_array_index (classes, ClassResult, i).name, name))
      return &g_array_index (classes, ClassResult, i);
  fresh.rounds = g_array_new (FALSE, FALSE, sizeof (Times));
  g_array_append_val (classes, fresh);
  return &g_array_index (classes, ClassResult, classes->len - 1);
}

/* Runs every statement of the classes in @only (all when NULL) on one
 * engine (0: native, 1: qstore), adding to each class's round. The
 * statements left out still draw their parameters, so the others see the
 * same ones as in a full run. */
static gboolean
run_statements (int                 engine,
                Native             *native,
                QStoreDatabase     *db,
                const char *const  *only,
                gboolean            count,
                GArray             *classes,
                GError            **error)
{
  guint64 rng = 42;

  for (guint s = 0; s < G_N_ELEMENTS (statements); s++)
    {
      const Statement *st = &statements[s];
      ClassResult *result;
      double wall, cpu;

      if (only != NULL && !g_strv_contains (only, st->klass))
        {
          for (guint r = 0; r < st->reps; r++)
            {
              GVariant *params = make_params (st, &rng);

              if (params != NULL)
                g_variant_unref (g_variant_ref_sink (params));
            }
          continue;
        }
      result = class_for (classes, st->klass);
      wall = now (CLOCK_MONOTONIC);
      cpu = now (CLOCK_PROCESS_CPUTIME_ID);
      for (guint r = 0; r < st->reps; r++)
        {
          GVariant *params = make_params (st, &rng);
          gboolean ok = engine == 0
                        ? native_run (native, st->sql, params, &result->checksum[0], error)
                        : qstore_run (db, st->sql, params, &result->checksum[1], error);

          if (!ok)
            return FALSE;
        }
      result->round.seconds[engine] += now (CLOCK_MONOTONIC) - wall;
      result->round.cpu[engine] += now (CLOCK_PROCESS_CPUTIME_ID) - cpu;
      if (count && engine == 0)
        result->ops += st->reps;
    }
  return TRUE;
}

static gboolean
setup_engine (LoadFunc   load,
              gpointer   engine,
              GError   **error)
{
  for (guint i = 0; i < G_N_ELEMENTS (schema); i++)
    if (!load (engine, schema[i], NULL, error))
      return FALSE;
  return load (engine, "BEGIN", NULL, error) &&
         load_rows (load, engine, error) &&
         load (engine, "COMMIT", NULL, error);
}

static int
compare_doubles (gconstpointer a,
                 gconstpointer b)
{
  double x = *(const double *) a, y = *(const double *) b;

  return (x > y) - (x < y);
}

typedef enum
{
  PICK_SECONDS,
  PICK_CPU,
  PICK_RATIO,
} Pick;

/* The median over @rounds of @pick of @engine's times (or of the ratio
 * of qstore's time to native SQLite's). */
static double
median (GArray *rounds,
        Pick    pick,
        int     engine)
{
  g_autofree double *values = NULL;
  guint n = rounds->len;

  if (n == 0)
    return 0;
  values = g_new (double, n);
  for (guint i = 0; i < n; i++)
    {
      const Times *t = &g_array_index (rounds, Times, i);

      values[i] = pick == PICK_SECONDS ? t->seconds[engine]
                  : pick == PICK_CPU ? t->cpu[engine]
                  : t->seconds[0] > 0 ? t->seconds[1] / t->seconds[0] : 0;
    }
  qsort (values, n, sizeof (double), compare_doubles);
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

/* One line per class: the median of the rounds' times, and of the
 * rounds' ratios (so a round a hiccup slowed does not move it). */
static void
emit (const char        *engine,
      const char        *provider,
      const ClassResult *c,
      int                run)
{
  char a[G_ASCII_DTOSTR_BUF_SIZE], b[G_ASCII_DTOSTR_BUF_SIZE], r[G_ASCII_DTOSTR_BUF_SIZE];
  char ca[G_ASCII_DTOSTR_BUF_SIZE], cb[G_ASCII_DTOSTR_BUF_SIZE];

  printf ("{\"engine\":\"%s\",\"workload\":\"mixed\",\"provider\":\"%s\",\"class\":\"%s\","
          "\"ops\":%u,\"rounds\":%u,\"seconds\":%s,\"native_seconds\":%s,\"ratio\":%s,"
          "\"cpu_seconds\":%s,\"native_cpu_seconds\":%s,\"checksum\":%" G_GUINT64_FORMAT
          ",\"run\":%d}\n",
          engine, provider, c->name, c->ops, c->rounds->len,
          g_ascii_formatd (b, sizeof b, "%.6f", median (c->rounds, PICK_SECONDS, 1)),
          g_ascii_formatd (a, sizeof a, "%.6f", median (c->rounds, PICK_SECONDS, 0)),
          g_ascii_formatd (r, sizeof r, "%.3f", median (c->rounds, PICK_RATIO, 1)),
          g_ascii_formatd (cb, sizeof cb, "%.6f", median (c->rounds, PICK_CPU, 1)),
          g_ascii_formatd (ca, sizeof ca, "%.6f", median (c->rounds, PICK_CPU, 0)),
          c->checksum[1], run);
}

/* NULL when every name in @only is a class of the workload, else an
 * error that names the one that is not. */
static gboolean
check_classes (const char *const  *only,
               GError            **error)
{
  for (guint i = 0; only != NULL && only[i] != NULL; i++)
    {
      gboolean known = FALSE;
      g_autoptr(GString) names = g_string_new (NULL);

      for (guint s = 0; s < G_N_ELEMENTS (statements); s++)
        {
          known = known || g_str_equal (statements[s].klass, only[i]);
          if (s == 0 || !g_str_equal (statements[s].klass, statements[s - 1].klass))
            g_string_append_printf (names, "%s%s", s == 0 ? "" : ", ", statements[s].klass);
        }
      if (!known)
        {
          g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                       "Unknown query class “%s” in --classes: the classes are %s",
                       only[i], names->str);
          return FALSE;
        }
    }
  return TRUE;
}

gboolean
qstore_bench_mixed (const char         *provider,
                    const char         *location,
                    gboolean            persistent,
                    const char *const  *only,
                    guint               rounds,
                    int                 run,
                    GError            **error)
{
  g_autoptr(QStoreDatabase) db = NULL;
  g_autoptr(GArray) classes = g_array_new (FALSE, TRUE, sizeof (ClassResult));
  g_autofree char *escaped = NULL;
  g_autofree char *uri = NULL;
  g_autofree char *native_path = NULL;
  g_autofree char *engine = g_strdup_printf ("qstore-%s-sql", provider);
  Native native = { NULL, NULL };
  ClassResult total = { "total", { { 0, 0 }, { 0, 0 } }, NULL, { 0, 0 }, 0 };
  gboolean ok = FALSE;
  gboolean same = TRUE;

  if (!check_classes (only, error))
    return FALSE;
  g_array_set_clear_func (classes, (GDestroyNotify) class_result_clear);
  total.rounds = g_array_new (FALSE, TRUE, sizeof (Times));
  native.cache = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, statement_free);
  if (persistent)
    native_path = g_strconcat (location, "-native.db", NULL);
  if (sqlite3_open (native_path != NULL ? native_path : ":memory:", &native.db) != SQLITE_OK ||
      (persistent &&
       sqlite3_exec (native.db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL",
                     NULL, NULL, NULL) != SQLITE_OK))
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_IO, "Cannot open native SQLite at %s: %s",
                   native_path != NULL ? native_path : ":memory:", sqlite3_errmsg (native.db));
      goto out;
    }

  if (location != NULL)
    escaped = g_uri_escape_string (location, "/", FALSE);
  uri = g_strdup_printf ("%s:%s", provider, escaped != NULL ? escaped : "");
  if (!(db = qstore_database_open (uri, QSTORE_OPEN_NONE, error)) ||
      !setup_engine (native_load, &native, error) ||
      !setup_engine (qstore_load, db, error))
    goto out;

  /* Each round runs every statement on both engines, native first in
   * even rounds and last in odd ones, on the same parameters. */
  for (guint round = 0; round < rounds; round++)
    {
      Times sum = { { 0, 0 }, { 0, 0 } };

      for (int k = 0; k < 2; k++)
        {
          int engine = round % 2 == 0 ? k : 1 - k;

          if (!run_statements (engine, &native, db, only, round == 0, classes, error))
            goto out;
        }
      for (guint i = 0; i < classes->len; i++)
        {
          ClassResult *c = &g_array_index (classes, ClassResult, i);

          for (int e = 0; e < 2; e++)
            {
              sum.seconds[e] += c->round.seconds[e];
              sum.cpu[e] += c->round.cpu[e];
            }
          g_array_append_val (c->rounds, c->round);
          memset (&c->round, 0, sizeof c->round);
        }
      g_array_append_val (total.rounds, sum);
    }

  for (guint i = 0; i < classes->len; i++)
    {
      ClassResult *c = &g_array_index (classes, ClassResult, i);

      if (c->checksum[0] != c->checksum[1])
        {
          g_printerr ("qstore-bench: class %s: qstore's checksum %" G_GUINT64_FORMAT
                      " is not native SQLite's %" G_GUINT64_FORMAT "\n",
                      c->name, c->checksum[1], c->checksum[0]);
          same = FALSE;
        }
      emit (engine, provider, c, run);
      for (int e = 0; e < 2; e++)
        total.checksum[e] += c->checksum[e];
      total.ops += c->ops;
    }
  emit (engine, provider, &total, run);
  if (!same)
    g_set_error_literal (error, QSTORE_ERROR, QSTORE_ERROR_FAILED,
                         "The mixed workload's results differ between qstore and native SQLite");
  ok = same && qstore_database_close (db, error);

out:
  class_result_clear (&total);
  g_hash_table_unref (native.cache);
  sqlite3_close (native.db);
  if (native_path != NULL)
    {
      g_autofree char *wal = g_strconcat (native_path, "-wal", NULL);
      g_autofree char *shm = g_strconcat (native_path, "-shm", NULL);

      g_remove (native_path);
      g_remove (wal);
      g_remove (shm);
    }
  return ok;
}
