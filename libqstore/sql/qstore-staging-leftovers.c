/* qstore-staging-leftovers.c: staged imports that did not finish, and what
 * may be done about them
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "qstore-staging-leftovers-private.h"

/**
 * QStoreStagingRun:
 *
 * One staged import as its row in the marker table
 * (%QSTORE_STAGING_MARKER_TABLE) records it: the table it replaces, the
 * staging tables it loads into, when it started, its last heartbeat, and
 * whether it is resumable (started with `--no-atomic`, so its staging
 * tables are a resume point rather than scratch).
 *
 * Times are milliseconds since the Unix epoch. A run that is part of a
 * [class@StagingLeftovers] is *judged*: it also says whether its staging
 * tables may be dropped, and why.
 */
struct _QStoreStagingRun
{
  GObject    parent_instance;

  gint64     id;
  char      *kind;
  char      *target;
  GStrv      tables;
  gint64     started;
  gint64     heartbeat;            /* 0: never */
  gboolean   resumable;
  gboolean   swapped;
  char      *details;

  gboolean   judged;
  gboolean   droppable;
  char      *reason;
  gint64     heartbeat_age;        /* -1: no heartbeat */
};

G_DEFINE_FINAL_TYPE (QStoreStagingRun, qstore_staging_run, G_TYPE_OBJECT)

enum {
  RUN_PROP_0,
  RUN_PROP_ID,
  RUN_PROP_KIND,
  RUN_PROP_TARGET,
  RUN_PROP_TABLES,
  RUN_PROP_STARTED,
  RUN_PROP_HEARTBEAT,
  RUN_PROP_RESUMABLE,
  RUN_PROP_SWAPPED,
  RUN_PROP_DROPPABLE,
  RUN_PROP_REASON,
  RUN_PROP_HEARTBEAT_AGE,
  RUN_N_PROPS
};

static GParamSpec *run_properties[RUN_N_PROPS];

static void
qstore_staging_run_finalize (GObject *object)
{
  QStoreStagingRun *self = QSTORE_STAGING_RUN (object);

  g_free (self->kind);
  g_free (self->target);
  g_strfreev (self->tables);
  g_free (self->details);
  g_free (self->reason);

  G_OBJECT_CLASS (qstore_staging_run_parent_class)->finalize (object);
}

static void
qstore_staging_run_get_property (GObject    *object,
                                 guint       prop_id,
                                 GValue     *value,
                                 GParamSpec *pspec)
{
  QStoreStagingRun *self = QSTORE_STAGING_RUN (object);

  switch (prop_id)
    {
    case RUN_PROP_ID:
      g_value_set_int64 (value, self->id);
      break;
    case RUN_PROP_KIND:
      g_value_set_string (value, self->kind);
      break;
    case RUN_PROP_TARGET:
      g_value_set_string (value, self->target);
      break;
    case RUN_PROP_TABLES:
      g_value_set_boxed (value, self->tables);
      break;
    case RUN_PROP_STARTED:
      g_value_set_int64 (value, self->started);
      break;
    case RUN_PROP_HEARTBEAT:
      g_value_set_int64 (value, self->heartbeat);
      break;
    case RUN_PROP_RESUMABLE:
      g_value_set_boolean (value, self->resumable);
      break;
    case RUN_PROP_SWAPPED:
      g_value_set_boolean (value, self->swapped);
      break;
    case RUN_PROP_DROPPABLE:
      g_value_set_boolean (value, self->droppable);
      break;
    case RUN_PROP_REASON:
      g_value_set_string (value, self->reason);
      break;
    case RUN_PROP_HEARTBEAT_AGE:
      g_value_set_int64 (value, self->heartbeat_age);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
qstore_staging_run_class_init (QStoreStagingRunClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GParamFlags flags = G_PARAM_READABLE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY;

  object_class->finalize = qstore_staging_run_finalize;
  object_class->get_property = qstore_staging_run_get_property;

  /**
   * QStoreStagingRun:id:
   *
   * The run's row in the marker table; 0 for a run not read from one.
   */
  run_properties[RUN_PROP_ID] =
    g_param_spec_int64 ("id", NULL, NULL, G_MININT64, G_MAXINT64, 0, flags);
  /**
   * QStoreStagingRun:kind:
   *
   * What wrote the marker row: `staging` for a staged import.
   */
  run_properties[RUN_PROP_KIND] = g_param_spec_string ("kind", NULL, NULL, NULL, flags);
  /**
   * QStoreStagingRun:target:
   *
   * The table the run replaces.
   */
  run_properties[RUN_PROP_TARGET] = g_param_spec_string ("target", NULL, NULL, NULL, flags);
  /**
   * QStoreStagingRun:tables:
   *
   * The staging tables the run loads into.
   */
  run_properties[RUN_PROP_TABLES] =
    g_param_spec_boxed ("tables", NULL, NULL, G_TYPE_STRV, flags);
  /**
   * QStoreStagingRun:started:
   *
   * When the run started, in milliseconds since the Unix epoch.
   */
  run_properties[RUN_PROP_STARTED] =
    g_param_spec_int64 ("started", NULL, NULL, G_MININT64, G_MAXINT64, 0, flags);
  /**
   * QStoreStagingRun:heartbeat:
   *
   * The run's last heartbeat, in milliseconds since the Unix epoch; 0 when
   * it never wrote one.
   */
  run_properties[RUN_PROP_HEARTBEAT] =
    g_param_spec_int64 ("heartbeat", NULL, NULL, G_MININT64, G_MAXINT64, 0, flags);
  /**
   * QStoreStagingRun:resumable:
   *
   * Whether the run was started `--no-atomic`: its staging tables are a
   * resume point and never count as abandoned.
   */
  run_properties[RUN_PROP_RESUMABLE] =
    g_param_spec_boolean ("resumable", NULL, NULL, FALSE, flags);
  /**
   * QStoreStagingRun:swapped:
   *
   * Whether the run's swap committed: the target holds the new rows, and
   * only dropping the staging tables was left to do.
   */
  run_properties[RUN_PROP_SWAPPED] =
    g_param_spec_boolean ("swapped", NULL, NULL, FALSE, flags);
  /**
   * QStoreStagingRun:droppable:
   *
   * Whether the run's staging tables may be dropped (see
   * qstore_staging_leftovers_new()); %FALSE for a run not judged.
   */
  run_properties[RUN_PROP_DROPPABLE] =
    g_param_spec_boolean ("droppable", NULL, NULL, FALSE, flags);
  /**
   * QStoreStagingRun:reason:
   *
   * Why the run is droppable or not, in words; %NULL for a run not judged.
   */
  run_properties[RUN_PROP_REASON] = g_param_spec_string ("reason", NULL, NULL, NULL, flags);
  /**
   * QStoreStagingRun:heartbeat-age:
   *
   * How old the heartbeat was when the run was judged, in milliseconds;
   * -1 when there is none (or the run was not judged).
   */
  run_properties[RUN_PROP_HEARTBEAT_AGE] =
    g_param_spec_int64 ("heartbeat-age", NULL, NULL, -1, G_MAXINT64, -1, flags);

  g_object_class_install_properties (object_class, RUN_N_PROPS, run_properties);
}

static void
qstore_staging_run_init (QStoreStagingRun *self)
{
  self->heartbeat_age = -1;
}

QStoreStagingRun *
qstore_staging_run_new_full (gint64               id,
                             const char          *kind,
                             const char          *target,
                             const char * const  *tables,
                             gint64               started,
                             gint64               heartbeat,
                             gboolean             resumable,
                             gboolean             swapped,
                             const char          *details)
{
  QStoreStagingRun *self = g_object_new (QSTORE_TYPE_STAGING_RUN, NULL);
  const char * const empty[] = { NULL };

  self->id = id;
  self->kind = g_strdup (kind);
  self->target = g_strdup (target);
  self->tables = g_strdupv ((char **) (tables != NULL ? tables : empty));
  self->started = started;
  self->heartbeat = MAX (heartbeat, 0);
  self->resumable = resumable;
  self->swapped = swapped;
  self->details = g_strdup (details);
  return self;
}

/**
 * qstore_staging_run_new:
 * @target: the table the run replaces
 * @tables: (array zero-terminated=1): the staging tables it loads into
 * @started: when it started, in milliseconds since the Unix epoch
 * @heartbeat: its last heartbeat, in milliseconds since the Unix epoch, or
 *   0 (or less) when it never wrote one
 * @resumable: whether it was started `--no-atomic`
 *
 * Makes a run of kind `staging` from its facts, as a marker row holds
 * them: what qstore_staging_leftovers_new() judges. Runs read from a
 * database come from qstore_staging_leftovers_read().
 *
 * Returns: (transfer full): the run, not judged
 */
QStoreStagingRun *
qstore_staging_run_new (const char          *target,
                        const char * const  *tables,
                        gint64               started,
                        gint64               heartbeat,
                        gboolean             resumable)
{
  g_return_val_if_fail (target != NULL, NULL);

  return qstore_staging_run_new_full (0, QSTORE_STAGING_KIND, target, tables, started,
                                      heartbeat, resumable, FALSE, NULL);
}

/**
 * qstore_staging_run_get_id:
 * @self: a #QStoreStagingRun
 *
 * Gets the run's row id in the marker table.
 *
 * Returns: the id; 0 for a run not read from a database
 */
gint64
qstore_staging_run_get_id (QStoreStagingRun *self)
{
  g_return_val_if_fail (QSTORE_IS_STAGING_RUN (self), 0);

  return self->id;
}

/**
 * qstore_staging_run_get_kind:
 * @self: a #QStoreStagingRun
 *
 * Gets what kind of run the marker row records: `staging` for a staged
 * import.
 *
 * Returns: (transfer none): the kind
 */
const char *
qstore_staging_run_get_kind (QStoreStagingRun *self)
{
  g_return_val_if_fail (QSTORE_IS_STAGING_RUN (self), NULL);

  return self->kind;
}

/**
 * qstore_staging_run_get_target:
 * @self: a #QStoreStagingRun
 *
 * Gets the table the run replaces. A sweep never touches it.
 *
 * Returns: (transfer none): the table's name
 */
const char *
qstore_staging_run_get_target (QStoreStagingRun *self)
{
  g_return_val_if_fail (QSTORE_IS_STAGING_RUN (self), NULL);

  return self->target;
}

/**
 * qstore_staging_run_get_tables:
 * @self: a #QStoreStagingRun
 *
 * Gets the staging tables the run loads into: what a sweep drops when
 * the run is droppable. A table of the list may be gone already (the run
 * was interrupted before it created it, or after it dropped it).
 *
 * Returns: (transfer none) (array zero-terminated=1): the names
 */
const char * const *
qstore_staging_run_get_tables (QStoreStagingRun *self)
{
  g_return_val_if_fail (QSTORE_IS_STAGING_RUN (self), NULL);

  return (const char * const *) self->tables;
}

/**
 * qstore_staging_run_get_started:
 * @self: a #QStoreStagingRun
 *
 * Gets when the run started.
 *
 * Returns: milliseconds since the Unix epoch
 */
gint64
qstore_staging_run_get_started (QStoreStagingRun *self)
{
  g_return_val_if_fail (QSTORE_IS_STAGING_RUN (self), 0);

  return self->started;
}

/**
 * qstore_staging_run_get_heartbeat:
 * @self: a #QStoreStagingRun
 *
 * Gets the run's last sign of life. An import writes one every couple of
 * seconds while rows land.
 *
 * Returns: milliseconds since the Unix epoch, or 0 when the run never
 *   wrote a heartbeat
 */
gint64
qstore_staging_run_get_heartbeat (QStoreStagingRun *self)
{
  g_return_val_if_fail (QSTORE_IS_STAGING_RUN (self), 0);

  return self->heartbeat;
}

/**
 * qstore_staging_run_get_resumable:
 * @self: a #QStoreStagingRun
 *
 * Gets whether the run was started `--no-atomic`: what it staged is kept
 * to be continued (`qstore import --resume`), so no silence makes it
 * droppable.
 *
 * Returns: %TRUE for a resumable run
 */
gboolean
qstore_staging_run_get_resumable (QStoreStagingRun *self)
{
  g_return_val_if_fail (QSTORE_IS_STAGING_RUN (self), FALSE);

  return self->resumable;
}

/**
 * qstore_staging_run_get_swapped:
 * @self: a #QStoreStagingRun
 *
 * Gets whether the run's swap committed: the target already holds the
 * imported rows and the staging tables are only waiting to be dropped.
 *
 * Returns: %TRUE once the swap committed
 */
gboolean
qstore_staging_run_get_swapped (QStoreStagingRun *self)
{
  g_return_val_if_fail (QSTORE_IS_STAGING_RUN (self), FALSE);

  return self->swapped;
}

/**
 * qstore_staging_run_get_details:
 * @self: a #QStoreStagingRun
 *
 * Gets what the import recorded to continue the run: a JSON object with
 * its options (`mode`, `format`, `header`, `columns`), its source, and how
 * far the committed rows got (`position` in bytes, `line`, `rows`).
 *
 * Returns: (transfer none) (nullable): the JSON text, or %NULL
 */
const char *
qstore_staging_run_get_details (QStoreStagingRun *self)
{
  g_return_val_if_fail (QSTORE_IS_STAGING_RUN (self), NULL);

  return self->details;
}

/**
 * qstore_staging_run_get_judged:
 * @self: a #QStoreStagingRun
 *
 * Gets whether the run is part of a [class@StagingLeftovers], which says
 * whether it is droppable.
 *
 * Returns: %TRUE for a judged run
 */
gboolean
qstore_staging_run_get_judged (QStoreStagingRun *self)
{
  g_return_val_if_fail (QSTORE_IS_STAGING_RUN (self), FALSE);

  return self->judged;
}

/**
 * qstore_staging_run_get_droppable:
 * @self: a #QStoreStagingRun
 *
 * Gets whether the run's staging tables may be dropped: its heartbeat is
 * older than the threshold (or it never wrote one) and it is not
 * resumable. See qstore_staging_leftovers_new().
 *
 * Returns: %TRUE when droppable; %FALSE otherwise, and for a run not
 *   judged
 */
gboolean
qstore_staging_run_get_droppable (QStoreStagingRun *self)
{
  g_return_val_if_fail (QSTORE_IS_STAGING_RUN (self), FALSE);

  return self->droppable;
}

/**
 * qstore_staging_run_get_reason:
 * @self: a #QStoreStagingRun
 *
 * Gets why the run is droppable or not, in words, such as “no heartbeat
 * for 2 h 5 min (the threshold is 30 min) and not resumable”.
 *
 * Returns: (transfer none) (nullable): the reason, or %NULL for a run not
 *   judged
 */
const char *
qstore_staging_run_get_reason (QStoreStagingRun *self)
{
  g_return_val_if_fail (QSTORE_IS_STAGING_RUN (self), NULL);

  return self->reason;
}

/**
 * qstore_staging_run_get_heartbeat_age:
 * @self: a #QStoreStagingRun
 *
 * Gets how old the heartbeat was when the run was judged.
 *
 * Returns: milliseconds (negative ages, from a clock that went back, are
 *   0); -1 when there is no heartbeat or the run was not judged
 */
gint64
qstore_staging_run_get_heartbeat_age (QStoreStagingRun *self)
{
  g_return_val_if_fail (QSTORE_IS_STAGING_RUN (self), -1);

  return self->heartbeat_age;
}

char *
qstore_staging_format_duration (gint64 ms)
{
  gint64 s = MAX (ms, 0) / 1000;

  if (s < 60)
    return g_strdup_printf ("%" G_GINT64_FORMAT " s", s);
  if (s < 3600)
    return g_strdup_printf ("%" G_GINT64_FORMAT " min", s / 60);
  if (s < 86400)
    return (s / 60) % 60 == 0
           ? g_strdup_printf ("%" G_GINT64_FORMAT " h", s / 3600)
           : g_strdup_printf ("%" G_GINT64_FORMAT " h %" G_GINT64_FORMAT " min",
                              s / 3600, (s / 60) % 60);
  return (s / 3600) % 24 == 0
         ? g_strdup_printf ("%" G_GINT64_FORMAT " d", s / 86400)
         : g_strdup_printf ("%" G_GINT64_FORMAT " d %" G_GINT64_FORMAT " h",
                            s / 86400, (s / 3600) % 24);
}

/* The rule. Each half can be wrong in the direction that destroys work:
 * a fresh beat is a load in flight (here or in another process), and a
 * resumable run's staging is a resume point meant to outlive its
 * process. Only a run that is both silent and disposable may go. A
 * heartbeat in the future (a clock that went back) counts as fresh. */
static QStoreStagingRun *
judge (QStoreStagingRun *run,
       gint64            now,
       gint64            stale_after_ms)
{
  QStoreStagingRun *self = qstore_staging_run_new_full (run->id, run->kind, run->target,
                                                        (const char * const *) run->tables,
                                                        run->started, run->heartbeat,
                                                        run->resumable, run->swapped,
                                                        run->details);
  g_autofree char *threshold = qstore_staging_format_duration (stale_after_ms);
  g_autofree char *age = NULL;
  gboolean has_beat = self->heartbeat > 0;
  gboolean stale;

  self->judged = TRUE;
  if (has_beat)
    {
      self->heartbeat_age = MAX (now - self->heartbeat, 0);
      age = qstore_staging_format_duration (self->heartbeat_age);
    }
  stale = !has_beat || now - self->heartbeat > stale_after_ms;

  if (g_strcmp0 (self->kind, QSTORE_STAGING_KIND) != 0)
    self->reason = g_strdup_printf ("kept: a marker row of kind “%s”, not a staged import",
                                    self->kind != NULL ? self->kind : "");
  else if (self->resumable)
    self->reason = g_strdup ("kept: resumable (started --no-atomic), its staging is a resume "
                             "point; continue it with qstore import --resume, or discard it "
                             "with qstore staging --discard");
  else if (!stale)
    self->reason = g_strdup_printf ("kept: heartbeat %s ago, within the threshold of %s, "
                                    "so an import may still be loading", age, threshold);
  else
    {
      self->droppable = TRUE;
      if (has_beat)
        self->reason = g_strdup_printf ("droppable: no heartbeat for %s (the threshold is %s) "
                                        "and not resumable", age, threshold);
      else
        self->reason = g_strdup ("droppable: it never wrote a heartbeat and is not resumable");
    }
  return self;
}

/**
 * QStoreStagingLeftovers:
 *
 * The staged imports a database records as running or interrupted, each
 * judged (see qstore_staging_leftovers_new()): a #GListModel of
 * [class@StagingRun], in the order of the marker table.
 *
 * Opening a database reports them (see
 * qstore_rehydration_result_get_staging_leftovers()), but never drops
 * anything itself; `qstore staging --sweep` drops the droppable ones.
 */
struct _QStoreStagingLeftovers
{
  GObject    parent_instance;

  GPtrArray *runs;                 /* QStoreStagingRun, judged */
  gint64     now;
  gint64     stale_after_ms;
};

static GType
leftovers_get_item_type (GListModel *model)
{
  return QSTORE_TYPE_STAGING_RUN;
}

static guint
leftovers_get_n_items (GListModel *model)
{
  return QSTORE_STAGING_LEFTOVERS (model)->runs->len;
}

static gpointer
leftovers_get_item (GListModel *model,
                    guint       position)
{
  QStoreStagingLeftovers *self = QSTORE_STAGING_LEFTOVERS (model);

  if (position >= self->runs->len)
    return NULL;
  return g_object_ref (self->runs->pdata[position]);
}

static void
leftovers_list_model_init (GListModelInterface *iface)
{
  iface->get_item_type = leftovers_get_item_type;
  iface->get_n_items = leftovers_get_n_items;
  iface->get_item = leftovers_get_item;
}

G_DEFINE_FINAL_TYPE_WITH_CODE (QStoreStagingLeftovers, qstore_staging_leftovers, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (G_TYPE_LIST_MODEL,
                                                      leftovers_list_model_init))

static void
qstore_staging_leftovers_finalize (GObject *object)
{
  QStoreStagingLeftovers *self = QSTORE_STAGING_LEFTOVERS (object);

  g_ptr_array_unref (self->runs);

  G_OBJECT_CLASS (qstore_staging_leftovers_parent_class)->finalize (object);
}

static void
qstore_staging_leftovers_class_init (QStoreStagingLeftoversClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = qstore_staging_leftovers_finalize;
}

static void
qstore_staging_leftovers_init (QStoreStagingLeftovers *self)
{
  self->runs = g_ptr_array_new_with_free_func (g_object_unref);
}

/**
 * qstore_staging_leftovers_new:
 * @runs: (element-type QStoreStagingRun): the runs the marker table
 *   records
 * @now: the time to judge them at, in milliseconds since the Unix epoch
 * @stale_after_ms: the stale threshold in milliseconds (see
 *   qstore_staging_stale_after_ms()); a value below 1 is taken as 1
 *
 * Decides, from the runs alone, which staging tables may be dropped. A
 * run is droppable if and only if its heartbeat is older than
 * @stale_after_ms (a run that never wrote one counts as stale) AND it is
 * not resumable. Both halves are needed: a fresh heartbeat is an import
 * loading right now, and a resumable run's staging is a resume point. A
 * marker row of another kind than `staging` is never droppable.
 *
 * This reads no database, so the decision can be checked on its own;
 * qstore_staging_leftovers_read() applies it to a database's marker
 * table. @runs is left as it is: the leftovers hold judged copies.
 *
 * Returns: (transfer full): the judged runs
 */
QStoreStagingLeftovers *
qstore_staging_leftovers_new (GPtrArray *runs,
                              gint64     now,
                              gint64     stale_after_ms)
{
  QStoreStagingLeftovers *self;

  g_return_val_if_fail (runs != NULL, NULL);

  self = g_object_new (QSTORE_TYPE_STAGING_LEFTOVERS, NULL);
  self->now = now;
  self->stale_after_ms = MAX (stale_after_ms, 1);
  for (guint i = 0; i < runs->len; i++)
    {
      g_return_val_if_fail (QSTORE_IS_STAGING_RUN (runs->pdata[i]), self);
      g_ptr_array_add (self->runs, judge (runs->pdata[i], now, self->stale_after_ms));
    }
  return self;
}

/**
 * qstore_staging_leftovers_get_now:
 * @self: a #QStoreStagingLeftovers
 *
 * Gets the time the runs were judged at.
 *
 * Returns: milliseconds since the Unix epoch
 */
gint64
qstore_staging_leftovers_get_now (QStoreStagingLeftovers *self)
{
  g_return_val_if_fail (QSTORE_IS_STAGING_LEFTOVERS (self), 0);

  return self->now;
}

/**
 * qstore_staging_leftovers_get_stale_after_ms:
 * @self: a #QStoreStagingLeftovers
 *
 * Gets the stale threshold the runs were judged with.
 *
 * Returns: milliseconds
 */
gint64
qstore_staging_leftovers_get_stale_after_ms (QStoreStagingLeftovers *self)
{
  g_return_val_if_fail (QSTORE_IS_STAGING_LEFTOVERS (self), 0);

  return self->stale_after_ms;
}

/**
 * qstore_staging_leftovers_get_n_droppable:
 * @self: a #QStoreStagingLeftovers
 *
 * Gets how many runs are droppable: what a sweep would drop now.
 *
 * Returns: the number of droppable runs
 */
guint
qstore_staging_leftovers_get_n_droppable (QStoreStagingLeftovers *self)
{
  guint n = 0;

  g_return_val_if_fail (QSTORE_IS_STAGING_LEFTOVERS (self), 0);

  for (guint i = 0; i < self->runs->len; i++)
    if (((QStoreStagingRun *) self->runs->pdata[i])->droppable)
      n++;
  return n;
}

/**
 * qstore_staging_leftovers_get_droppable:
 * @self: a #QStoreStagingLeftovers
 *
 * Gets the droppable runs, in order.
 *
 * Returns: (transfer container) (element-type QStoreStagingRun): the runs
 */
GPtrArray *
qstore_staging_leftovers_get_droppable (QStoreStagingLeftovers *self)
{
  GPtrArray *droppable;

  g_return_val_if_fail (QSTORE_IS_STAGING_LEFTOVERS (self), NULL);

  droppable = g_ptr_array_new_with_free_func (g_object_unref);
  for (guint i = 0; i < self->runs->len; i++)
    if (((QStoreStagingRun *) self->runs->pdata[i])->droppable)
      g_ptr_array_add (droppable, g_object_ref (self->runs->pdata[i]));
  return droppable;
}

/**
 * qstore_staging_leftovers_describe:
 * @self: a #QStoreStagingLeftovers
 *
 * Says what the runs leave behind in one line, as opening the database
 * logs it: each run's staging tables, its target, its heartbeat's age and
 * why it is droppable or not.
 *
 * Returns: (transfer full) (nullable): the line, or %NULL when there is
 *   no run
 */
char *
qstore_staging_leftovers_describe (QStoreStagingLeftovers *self)
{
  g_autoptr(GString) line = NULL;
  guint n_droppable;

  g_return_val_if_fail (QSTORE_IS_STAGING_LEFTOVERS (self), NULL);

  if (self->runs->len == 0)
    return NULL;

  n_droppable = qstore_staging_leftovers_get_n_droppable (self);
  line = g_string_new (NULL);
  g_string_append_printf (line, "%u staged import%s left staging tables:",
                          self->runs->len, self->runs->len == 1 ? "" : "s");
  for (guint i = 0; i < self->runs->len; i++)
    {
      QStoreStagingRun *run = self->runs->pdata[i];
      g_autofree char *tables = g_strjoinv (", ", run->tables);
      g_autofree char *age = run->heartbeat_age >= 0
                             ? qstore_staging_format_duration (run->heartbeat_age) : NULL;

      g_string_append_printf (line, "%s %s (into “%s”, %s%s%s; %s)",
                              i > 0 ? ";" : "", *tables != '\0' ? tables : "no table",
                              run->target,
                              age != NULL ? "heartbeat " : "no heartbeat",
                              age != NULL ? age : "", age != NULL ? " ago" : "",
                              run->reason);
    }
  if (n_droppable > 0)
    g_string_append_printf (line, ". `qstore staging --sweep` drops the %u droppable one%s",
                            n_droppable, n_droppable == 1 ? "" : "s");
  else
    g_string_append (line, ". Nothing is droppable yet");
  return g_string_free (g_steal_pointer (&line), FALSE);
}

/**
 * qstore_staging_parse_minutes:
 * @text: (nullable): a number of minutes, as written in
 *   %QSTORE_STAGING_STALE_MINUTES_ENV or the database's setting
 * @minutes: (out): the number
 *
 * Reads a stale threshold: a positive whole number of minutes, with
 * blanks around it allowed. `0`, `-5`, `abc`, `1.5` and the empty text are
 * not thresholds.
 *
 * Returns: %TRUE when @text is a usable threshold
 */
gboolean
qstore_staging_parse_minutes (const char *text,
                              gint64     *minutes)
{
  g_autofree char *trimmed = NULL;
  guint64 value;

  g_return_val_if_fail (minutes != NULL, FALSE);

  *minutes = 0;
  if (text == NULL)
    return FALSE;
  trimmed = g_strstrip (g_strdup (text));
  if (*trimmed == '+')
    memmove (trimmed, trimmed + 1, strlen (trimmed));
  /* Digits only, in base 10: no sign left, no fraction, no exponent. */
  if (!g_ascii_string_to_unsigned (trimmed, 10, 1, G_MAXINT64 / 60000, &value, NULL))
    return FALSE;
  *minutes = (gint64) value;
  return TRUE;
}

/**
 * qstore_staging_stale_after_ms:
 * @env_value: (nullable): the value of %QSTORE_STAGING_STALE_MINUTES_ENV,
 *   or %NULL when it is not set
 * @setting_value: (nullable): the database's `PRAGMA
 *   qstore.staging_stale_minutes`, or %NULL when it is not set
 *
 * Works out how long a staged run may go without a heartbeat before its
 * staging tables count as abandoned: @env_value, else @setting_value,
 * else %QSTORE_STAGING_STALE_MINUTES_DEFAULT minutes. A value that is not
 * a positive whole number of minutes (see qstore_staging_parse_minutes())
 * falls through to the next rather than failing: this is decided while a
 * database opens, which a typo must not stop, and the fall-through lands
 * on a generous threshold.
 *
 * Returns: the threshold in milliseconds
 */
gint64
qstore_staging_stale_after_ms (const char *env_value,
                               const char *setting_value)
{
  gint64 minutes;

  if (!qstore_staging_parse_minutes (env_value, &minutes) &&
      !qstore_staging_parse_minutes (setting_value, &minutes))
    minutes = QSTORE_STAGING_STALE_MINUTES_DEFAULT;
  return minutes * 60 * 1000;
}

/**
 * qstore_is_staging_table_name:
 * @name: a table's name
 *
 * Tells whether @name is a staging table's: it starts with
 * %QSTORE_STAGING_TABLE_PREFIX (in any case, as SQL compares names).
 * Such a table is scratch space of one import: table lists leave it out
 * and a materialized view never reads it.
 *
 * Returns: %TRUE for a staging table's name
 */
gboolean
qstore_is_staging_table_name (const char *name)
{
  g_return_val_if_fail (name != NULL, FALSE);

  return g_ascii_strncasecmp (name, QSTORE_STAGING_TABLE_PREFIX,
                              strlen (QSTORE_STAGING_TABLE_PREFIX)) == 0;
}

/**
 * qstore_staging_table_name_for:
 * @target: a table's name
 *
 * Gets the name of the staging table a replace import into @target loads
 * into: %QSTORE_STAGING_TABLE_PREFIX followed by @target.
 *
 * Returns: (transfer full): the name
 */
char *
qstore_staging_table_name_for (const char *target)
{
  g_return_val_if_fail (target != NULL, NULL);

  return g_strconcat (QSTORE_STAGING_TABLE_PREFIX, target, NULL);
}

gboolean
qstore_staging_is_reserved_name (const char *name)
{
  return name != NULL &&
         (qstore_is_staging_table_name (name) ||
          g_ascii_strcasecmp (name, QSTORE_STAGING_MARKER_TABLE) == 0);
}
