/* tool-test.h: what the tests of the qstore command share
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Each test program runs the command given as its last argument
 * (qstore_path), against a fresh store per test on each persistent
 * provider.
 */
#pragma once

#include <stdarg.h>

#include "qstore-test-util.h"

static const char *qstore_path;

typedef struct
{
  char *dir;
  char *uri;
  char *provider;
} Fixture;

/* Runs `qstore --store STORE ARGS…` (NULL-terminated). */
#define run(store, ...) test_run_program (qstore_path, NULL, (store), __VA_ARGS__)

/* Runs a command that must succeed silently on stderr; returns stdout. */
static G_GNUC_NULL_TERMINATED G_GNUC_UNUSED char *
ok (const char *store,
    const char *first,
    ...)
{
  g_autoptr(TestRun) r = NULL;
  va_list ap;

  va_start (ap, first);
  r = test_run_program_va (qstore_path, NULL, store, first, ap);
  va_end (ap);
  if (r->status != 0)
    g_test_message ("stderr: %s", r->err);
  g_assert_cmpint (r->status, ==, 0);
  g_assert_cmpstr (r->err, ==, "");
  return g_steal_pointer (&r->out);
}

static void
fixture_setup (Fixture       *f,
               gconstpointer  data)
{
  f->provider = g_strdup (data);
  f->dir = test_make_tmp_dir ("qstore-tool-XXXXXX");
  f->uri = test_spec_uri (f->provider, f->dir, "store");
}

static void
fixture_teardown (Fixture       *f,
                  gconstpointer  data)
{
  test_remove_tree (f->dir);
  g_free (f->dir);
  g_free (f->uri);
  g_free (f->provider);
}

/* Adds @func as PREFIX/NAME/lmdb and PREFIX/NAME/sqlite. */
static void
add_persistent (const char *prefix,
                const char *name,
                void      (*func) (Fixture *, gconstpointer))
{
  const char *providers[] = { "lmdb", "sqlite" };

  for (guint i = 0; i < G_N_ELEMENTS (providers); i++)
    {
      g_autofree char *path = g_strdup_printf ("%s/%s/%s", prefix, name, providers[i]);

      g_test_add (path, Fixture, providers[i], fixture_setup, func, fixture_teardown);
    }
}
