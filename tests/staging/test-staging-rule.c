/* test-staging-rule.c: the leftovers rule of staged imports, on its own
 *
 * The decision is a pure function of the marker rows, now and the
 * threshold: no store is opened here. Each case is a row of a table with
 * the verdict it must get.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include <qstore.h>

#define NOW          G_GINT64_CONSTANT (1700000000000)
#define MINUTE       G_GINT64_CONSTANT (60000)
#define NO_BEAT      G_GINT64_CONSTANT (0)

typedef struct
{
  const char *what;
  gint64      beat_age;       /* ms before NOW; G_MININT64: no heartbeat */
  gboolean    resumable;
  gint64      threshold;      /* ms */
  gboolean    droppable;
  const char *reason_part;
} RuleCase;

static const RuleCase rule_cases[] = {
  { "fresh beat", 10 * 1000, FALSE, 30 * MINUTE, FALSE, "may still be loading" },
  { "stale beat", 31 * MINUTE, FALSE, 30 * MINUTE, TRUE, "no heartbeat for 31 min" },
  { "beat exactly at the threshold", 30 * MINUTE, FALSE, 30 * MINUTE, FALSE, "within the threshold" },
  { "beat 1 ms over the threshold", 30 * MINUTE + 1, FALSE, 30 * MINUTE, TRUE, "not resumable" },
  { "no beat", G_MININT64, FALSE, 30 * MINUTE, TRUE, "never wrote a heartbeat" },
  { "no beat, resumable", G_MININT64, TRUE, 30 * MINUTE, FALSE, "resumable" },
  { "stale beat, resumable", 5 * 24 * 60 * MINUTE, TRUE, 30 * MINUTE, FALSE, "resume point" },
  { "fresh beat, resumable", 1000, TRUE, 30 * MINUTE, FALSE, "resumable" },
  { "beat in the future (clock went back)", -5 * MINUTE, FALSE, 30 * MINUTE, FALSE, "within" },
  { "short threshold, beat older", 2 * MINUTE, FALSE, 1 * MINUTE, TRUE, "the threshold is 1 min" },
  { "long threshold, beat younger", 2 * 60 * MINUTE, FALSE, 3 * 60 * MINUTE, FALSE, "within" },
};

static QStoreStagingRun *
run_for (const char *target,
         gint64      beat_age,
         gboolean    resumable)
{
  g_autofree char *staging = qstore_staging_table_name_for (target);
  const char * const tables[] = { staging, NULL };

  return qstore_staging_run_new (target, tables, NOW - 60 * MINUTE,
                                 beat_age == G_MININT64 ? NO_BEAT : NOW - beat_age, resumable);
}

static void
test_rule_table (void)
{
  for (guint i = 0; i < G_N_ELEMENTS (rule_cases); i++)
    {
      const RuleCase *c = &rule_cases[i];
      g_autoptr(GPtrArray) runs = g_ptr_array_new_with_free_func (g_object_unref);
      g_autoptr(QStoreStagingLeftovers) leftovers = NULL;
      g_autoptr(QStoreStagingRun) judged = NULL;
      g_autoptr(GPtrArray) droppable = NULL;

      g_ptr_array_add (runs, run_for ("t", c->beat_age, c->resumable));
      leftovers = qstore_staging_leftovers_new (runs, NOW, c->threshold);
      judged = g_list_model_get_item (G_LIST_MODEL (leftovers), 0);

      g_test_message ("case “%s”: %s", c->what, qstore_staging_run_get_reason (judged));
      if (qstore_staging_run_get_droppable (judged) != c->droppable)
        g_error ("case “%s”: droppable is %d, not %d (%s)", c->what,
                 qstore_staging_run_get_droppable (judged), c->droppable,
                 qstore_staging_run_get_reason (judged));
      g_assert_true (qstore_staging_run_get_judged (judged));
      g_assert_nonnull (strstr (qstore_staging_run_get_reason (judged), c->reason_part));
      g_assert_true (g_str_has_prefix (qstore_staging_run_get_reason (judged),
                                       c->droppable ? "droppable: " : "kept: "));
      droppable = qstore_staging_leftovers_get_droppable (leftovers);
      g_assert_cmpuint (droppable->len, ==, c->droppable ? 1 : 0);
      g_assert_cmpuint (qstore_staging_leftovers_get_n_droppable (leftovers), ==, droppable->len);
      if (c->beat_age == G_MININT64)
        g_assert_cmpint (qstore_staging_run_get_heartbeat_age (judged), ==, -1);
      else
        g_assert_cmpint (qstore_staging_run_get_heartbeat_age (judged), ==, MAX (c->beat_age, 0));

      /* The input stays as it was: the leftovers hold judged copies. */
      g_assert_false (qstore_staging_run_get_judged (runs->pdata[0]));
      g_assert_false (qstore_staging_run_get_droppable (runs->pdata[0]));
      g_assert_null (qstore_staging_run_get_reason (runs->pdata[0]));
    }
}

/* The threshold: env, else the setting, else 30 minutes; what is not a
 * positive whole number of minutes falls through. */
typedef struct
{
  const char *env;
  const char *setting;
  gint64      minutes;
} ThresholdCase;

static const ThresholdCase threshold_cases[] = {
  { NULL, NULL, 30 },
  { "45", NULL, 45 },
  { "45", "10", 45 },
  { NULL, "10", 10 },
  { "0", "10", 10 },
  { "-5", "10", 10 },
  { "abc", "10", 10 },
  { "1.5", "10", 10 },
  { "", "10", 10 },
  { "   ", "10", 10 },
  { " 45 ", NULL, 45 },
  { "+45", NULL, 45 },
  { "0", NULL, 30 },
  { "-5", NULL, 30 },
  { "abc", NULL, 30 },
  { "1.5", NULL, 30 },
  { "", NULL, 30 },
  { "1e3", NULL, 30 },
  { "0x10", NULL, 30 },
  { "45min", NULL, 30 },
  { "99999999999999999999999", NULL, 30 },
  { "abc", "0", 30 },
  { "abc", "-5", 30 },
  { "abc", "1.5", 30 },
  { "", "", 30 },
  { "1", "1.5", 1 },
};

static void
test_threshold (void)
{
  for (guint i = 0; i < G_N_ELEMENTS (threshold_cases); i++)
    {
      const ThresholdCase *c = &threshold_cases[i];
      gint64 ms = qstore_staging_stale_after_ms (c->env, c->setting);

      if (ms != c->minutes * MINUTE)
        g_error ("env “%s”, setting “%s”: %" G_GINT64_FORMAT " ms, not %" G_GINT64_FORMAT " min",
                 c->env ? c->env : "(unset)", c->setting ? c->setting : "(unset)", ms, c->minutes);
    }
}

/* The rule applied with the threshold a value falls through to: the two
 * functions together, as opening a database uses them. */
typedef struct
{
  const char *env;
  gint64      beat_age;
  gboolean    droppable;
} EnvVerdictCase;

static const EnvVerdictCase env_verdict_cases[] = {
  /* A bad value falls through to 30 min: a 20-minute-old beat is fresh. */
  { "0", 20 * MINUTE, FALSE },
  { "-5", 20 * MINUTE, FALSE },
  { "abc", 20 * MINUTE, FALSE },
  { "1.5", 20 * MINUTE, FALSE },
  { "", 20 * MINUTE, FALSE },
  /* ... and a 40-minute-old one is stale. */
  { "0", 40 * MINUTE, TRUE },
  { "1.5", 40 * MINUTE, TRUE },
  /* A good value is used. */
  { "5", 20 * MINUTE, TRUE },
  { "60", 40 * MINUTE, FALSE },
};

static void
test_env_verdicts (void)
{
  for (guint i = 0; i < G_N_ELEMENTS (env_verdict_cases); i++)
    {
      const EnvVerdictCase *c = &env_verdict_cases[i];
      g_autoptr(GPtrArray) runs = g_ptr_array_new_with_free_func (g_object_unref);
      g_autoptr(QStoreStagingLeftovers) leftovers = NULL;

      g_ptr_array_add (runs, run_for ("t", c->beat_age, FALSE));
      leftovers = qstore_staging_leftovers_new (runs, NOW,
                                                qstore_staging_stale_after_ms (c->env, NULL));
      if ((qstore_staging_leftovers_get_n_droppable (leftovers) == 1) != c->droppable)
        g_error ("env “%s”, beat %" G_GINT64_FORMAT " min old: droppable should be %d",
                 c->env, c->beat_age / MINUTE, c->droppable);
    }
}

static void
test_parse_minutes (void)
{
  gint64 minutes = -1;

  g_assert_true (qstore_staging_parse_minutes ("12", &minutes));
  g_assert_cmpint (minutes, ==, 12);
  g_assert_false (qstore_staging_parse_minutes ("12.0", &minutes));
  g_assert_cmpint (minutes, ==, 0);
  g_assert_false (qstore_staging_parse_minutes (NULL, &minutes));
  g_assert_false (qstore_staging_parse_minutes ("- 5", &minutes));
  g_assert_false (qstore_staging_parse_minutes ("++5", &minutes));
}

/* Several runs: only the droppable ones are listed as such, in order,
 * and another kind of marker row is never droppable. */
static void
test_several_runs (void)
{
  g_autoptr(GPtrArray) runs = g_ptr_array_new_with_free_func (g_object_unref);
  g_autoptr(QStoreStagingLeftovers) leftovers = NULL;
  g_autoptr(GPtrArray) droppable = NULL;

  g_ptr_array_add (runs, run_for ("a", 2 * 60 * MINUTE, FALSE));   /* droppable */
  g_ptr_array_add (runs, run_for ("b", 1000, FALSE));              /* fresh */
  g_ptr_array_add (runs, run_for ("c", 2 * 60 * MINUTE, TRUE));    /* resumable */
  g_ptr_array_add (runs, run_for ("d", G_MININT64, FALSE));        /* no beat */
  leftovers = qstore_staging_leftovers_new (runs, NOW, 30 * MINUTE);

  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (leftovers)), ==, 4);
  g_assert_true (g_list_model_get_item_type (G_LIST_MODEL (leftovers)) == QSTORE_TYPE_STAGING_RUN);
  droppable = qstore_staging_leftovers_get_droppable (leftovers);
  g_assert_cmpuint (droppable->len, ==, 2);
  g_assert_cmpstr (qstore_staging_run_get_target (droppable->pdata[0]), ==, "a");
  g_assert_cmpstr (qstore_staging_run_get_target (droppable->pdata[1]), ==, "d");
  g_assert_cmpint (qstore_staging_leftovers_get_now (leftovers), ==, NOW);
  g_assert_cmpint (qstore_staging_leftovers_get_stale_after_ms (leftovers), ==, 30 * MINUTE);
}

static void
test_describe (void)
{
  g_autoptr(GPtrArray) none = g_ptr_array_new ();
  g_autoptr(GPtrArray) runs = g_ptr_array_new_with_free_func (g_object_unref);
  g_autoptr(QStoreStagingLeftovers) empty = qstore_staging_leftovers_new (none, NOW, 30 * MINUTE);
  g_autoptr(QStoreStagingLeftovers) leftovers = NULL;
  g_autofree char *line = NULL;

  g_assert_null (qstore_staging_leftovers_describe (empty));

  g_ptr_array_add (runs, run_for ("orders", 2 * 60 * MINUTE, FALSE));
  g_ptr_array_add (runs, run_for ("items", 5000, TRUE));
  leftovers = qstore_staging_leftovers_new (runs, NOW, 30 * MINUTE);
  line = qstore_staging_leftovers_describe (leftovers);
  g_test_message ("%s", line);
  g_assert_null (strchr (line, '\n'));
  g_assert_nonnull (strstr (line, "_qstore_staging_orders"));
  g_assert_nonnull (strstr (line, "into “orders”, heartbeat 2 h ago"));
  g_assert_nonnull (strstr (line, "droppable: no heartbeat for 2 h"));
  g_assert_nonnull (strstr (line, "_qstore_staging_items"));
  g_assert_nonnull (strstr (line, "heartbeat 5 s ago; kept: resumable"));
  g_assert_nonnull (strstr (line, "drops the 1 droppable one"));
}

static void
test_names (void)
{
  g_autofree char *name = qstore_staging_table_name_for ("Orders");

  g_assert_cmpstr (name, ==, "_qstore_staging_Orders");
  g_assert_true (qstore_is_staging_table_name (name));
  g_assert_true (qstore_is_staging_table_name ("_QSTORE_STAGING_x"));
  g_assert_true (qstore_is_staging_table_name (QSTORE_STAGING_TABLE_PREFIX));
  g_assert_false (qstore_is_staging_table_name ("_qstore_staging"));
  g_assert_false (qstore_is_staging_table_name ("orders"));
  g_assert_false (qstore_is_staging_table_name (QSTORE_STAGING_MARKER_TABLE));
  g_assert_false (qstore_is_staging_table_name ("x_qstore_staging_y"));
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/staging/rule/table", test_rule_table);
  g_test_add_func ("/staging/rule/threshold", test_threshold);
  g_test_add_func ("/staging/rule/env-verdicts", test_env_verdicts);
  g_test_add_func ("/staging/rule/parse-minutes", test_parse_minutes);
  g_test_add_func ("/staging/rule/several-runs", test_several_runs);
  g_test_add_func ("/staging/rule/describe", test_describe);
  g_test_add_func ("/staging/rule/names", test_names);

  return g_test_run ();
}
