/* qstore-check-report.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <json-glib/json-glib.h>

#include "qstore-check-report.h"

/**
 * QStoreCheckProblem:
 *
 * One thing a check found wrong: where (a scope such as
 * %QSTORE_CHECK_SCOPE_STORE and an object in it), optionally the key it is
 * at, and what is wrong.
 */

struct _QStoreCheckProblem
{
  char   *scope;
  char   *object;
  GBytes *key;
  char   *message;
};

G_DEFINE_BOXED_TYPE (QStoreCheckProblem, qstore_check_problem,
                     qstore_check_problem_copy, qstore_check_problem_free)

/**
 * qstore_check_problem_copy:
 * @self: a #QStoreCheckProblem
 *
 * Copies a problem.
 *
 * Returns: (transfer full): a copy of @self
 */
QStoreCheckProblem *
qstore_check_problem_copy (const QStoreCheckProblem *self)
{
  QStoreCheckProblem *copy;

  g_return_val_if_fail (self != NULL, NULL);

  copy = g_new0 (QStoreCheckProblem, 1);
  copy->scope = g_strdup (self->scope);
  copy->object = g_strdup (self->object);
  copy->key = self->key ? g_bytes_ref (self->key) : NULL;
  copy->message = g_strdup (self->message);
  return copy;
}

/**
 * qstore_check_problem_free:
 * @self: a #QStoreCheckProblem
 *
 * Frees a problem.
 */
void
qstore_check_problem_free (QStoreCheckProblem *self)
{
  if (self == NULL)
    return;
  g_free (self->scope);
  g_free (self->object);
  g_clear_pointer (&self->key, g_bytes_unref);
  g_free (self->message);
  g_free (self);
}

/**
 * qstore_check_problem_get_scope:
 * @self: a #QStoreCheckProblem
 *
 * Gets what kind of object the problem is in.
 *
 * Returns: the scope, such as %QSTORE_CHECK_SCOPE_FILE or
 *   %QSTORE_CHECK_SCOPE_STORE
 */
const char *
qstore_check_problem_get_scope (const QStoreCheckProblem *self)
{
  g_return_val_if_fail (self != NULL, NULL);
  return self->scope;
}

/**
 * qstore_check_problem_get_object:
 * @self: a #QStoreCheckProblem
 *
 * Gets the object the problem is in.
 *
 * Returns: the object's name, such as a store's physical name
 */
const char *
qstore_check_problem_get_object (const QStoreCheckProblem *self)
{
  g_return_val_if_fail (self != NULL, NULL);
  return self->object;
}

/**
 * qstore_check_problem_get_key:
 * @self: a #QStoreCheckProblem
 *
 * Gets the key the problem is at, when it is at one.
 *
 * Returns: (transfer none) (nullable): the key, or %NULL
 */
GBytes *
qstore_check_problem_get_key (const QStoreCheckProblem *self)
{
  g_return_val_if_fail (self != NULL, NULL);
  return self->key;
}

/**
 * qstore_check_problem_get_message:
 * @self: a #QStoreCheckProblem
 *
 * Gets what is wrong.
 *
 * Returns: the description of the problem
 */
const char *
qstore_check_problem_get_message (const QStoreCheckProblem *self)
{
  g_return_val_if_fail (self != NULL, NULL);
  return self->message;
}

/**
 * QStoreCheckReport:
 *
 * What a check found: the problems, what was checked and how much of it,
 * and notes on what could not be checked.
 *
 * [method@Provider.check] fills one with what the provider and its stores
 * show; layers above add their own findings (tables against their
 * indexes, row counts…) with [method@CheckReport.add_problem] and
 * [method@CheckReport.add_checked], each under a scope of their own.
 */

typedef struct
{
  char    *scope;
  char    *object;
  guint64  n_items;
} Checked;

struct _QStoreCheckReport
{
  GObject    parent_instance;

  GPtrArray *problems;  /* QStoreCheckProblem */
  GArray    *checked;   /* Checked */
  GPtrArray *notes;     /* char *, NULL-terminated */
};

G_DEFINE_FINAL_TYPE (QStoreCheckReport, qstore_check_report, G_TYPE_OBJECT)

static void
checked_clear (gpointer data)
{
  Checked *checked = data;

  g_free (checked->scope);
  g_free (checked->object);
}

static void
qstore_check_report_finalize (GObject *object)
{
  QStoreCheckReport *self = QSTORE_CHECK_REPORT (object);

  g_ptr_array_unref (self->problems);
  g_array_unref (self->checked);
  g_ptr_array_unref (self->notes);

  G_OBJECT_CLASS (qstore_check_report_parent_class)->finalize (object);
}

static void
qstore_check_report_class_init (QStoreCheckReportClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = qstore_check_report_finalize;
}

static void
qstore_check_report_init (QStoreCheckReport *self)
{
  self->problems = g_ptr_array_new_with_free_func ((GDestroyNotify) qstore_check_problem_free);
  self->checked = g_array_new (FALSE, FALSE, sizeof (Checked));
  g_array_set_clear_func (self->checked, checked_clear);
  self->notes = g_ptr_array_new_null_terminated (1, g_free, TRUE);
}

/**
 * qstore_check_report_new:
 *
 * Creates an empty report.
 *
 * Returns: (transfer full): a report with nothing in it
 */
QStoreCheckReport *
qstore_check_report_new (void)
{
  return g_object_new (QSTORE_TYPE_CHECK_REPORT, NULL);
}

/**
 * qstore_check_report_add_problem:
 * @self: a #QStoreCheckReport
 * @scope: what kind of object, such as %QSTORE_CHECK_SCOPE_STORE
 * @object: the object's name
 * @key: (nullable): the key the problem is at
 * @message: what is wrong
 *
 * Adds a problem.
 */
void
qstore_check_report_add_problem (QStoreCheckReport *self,
                                 const char        *scope,
                                 const char        *object,
                                 GBytes            *key,
                                 const char        *message)
{
  QStoreCheckProblem *problem;

  g_return_if_fail (QSTORE_IS_CHECK_REPORT (self));
  g_return_if_fail (scope != NULL && object != NULL && message != NULL);

  problem = g_new0 (QStoreCheckProblem, 1);
  problem->scope = g_strdup (scope);
  problem->object = g_strdup (object);
  problem->key = key ? g_bytes_ref (key) : NULL;
  problem->message = g_strdup (message);
  g_ptr_array_add (self->problems, problem);
}

/**
 * qstore_check_report_add_checked:
 * @self: a #QStoreCheckReport
 * @scope: what kind of object, such as %QSTORE_CHECK_SCOPE_STORE
 * @object: the object's name
 * @n_items: how many items of it were checked (entries, rows, pages…)
 *
 * Records that an object was checked, so a clean report says what it
 * covers.
 */
void
qstore_check_report_add_checked (QStoreCheckReport *self,
                                 const char        *scope,
                                 const char        *object,
                                 guint64            n_items)
{
  Checked checked;

  g_return_if_fail (QSTORE_IS_CHECK_REPORT (self));
  g_return_if_fail (scope != NULL && object != NULL);

  checked.scope = g_strdup (scope);
  checked.object = g_strdup (object);
  checked.n_items = n_items;
  g_array_append_val (self->checked, checked);
}

/**
 * qstore_check_report_add_note:
 * @self: a #QStoreCheckReport
 * @note: something the reader of the report should know, such as what
 *   could not be checked and why
 *
 * Adds a note.
 */
void
qstore_check_report_add_note (QStoreCheckReport *self,
                              const char        *note)
{
  g_return_if_fail (QSTORE_IS_CHECK_REPORT (self));
  g_return_if_fail (note != NULL);

  g_ptr_array_add (self->notes, g_strdup (note));
}

/**
 * qstore_check_report_is_clean:
 * @self: a #QStoreCheckReport
 *
 * Tells whether the check found nothing wrong.
 *
 * Returns: %TRUE when there is no problem
 */
gboolean
qstore_check_report_is_clean (QStoreCheckReport *self)
{
  g_return_val_if_fail (QSTORE_IS_CHECK_REPORT (self), FALSE);
  return self->problems->len == 0;
}

/**
 * qstore_check_report_get_n_problems:
 * @self: a #QStoreCheckReport
 *
 * Counts the problems.
 *
 * Returns: the number of problems
 */
guint
qstore_check_report_get_n_problems (QStoreCheckReport *self)
{
  g_return_val_if_fail (QSTORE_IS_CHECK_REPORT (self), 0);
  return self->problems->len;
}

/**
 * qstore_check_report_get_problem:
 * @self: a #QStoreCheckReport
 * @index: the problem's position, from 0
 *
 * Gets a problem, in the order they were found.
 *
 * Returns: (transfer none): the problem
 */
const QStoreCheckProblem *
qstore_check_report_get_problem (QStoreCheckReport *self,
                                 guint              index)
{
  g_return_val_if_fail (QSTORE_IS_CHECK_REPORT (self), NULL);
  g_return_val_if_fail (index < self->problems->len, NULL);
  return g_ptr_array_index (self->problems, index);
}

/**
 * qstore_check_report_get_n_checked:
 * @self: a #QStoreCheckReport
 * @scope: a scope, such as %QSTORE_CHECK_SCOPE_STORE
 *
 * Counts the objects of @scope that were checked.
 *
 * Returns: the number of objects of @scope checked
 */
guint
qstore_check_report_get_n_checked (QStoreCheckReport *self,
                                   const char        *scope)
{
  guint n = 0;

  g_return_val_if_fail (QSTORE_IS_CHECK_REPORT (self), 0);
  g_return_val_if_fail (scope != NULL, 0);

  for (guint i = 0; i < self->checked->len; i++)
    if (g_str_equal (g_array_index (self->checked, Checked, i).scope, scope))
      n++;
  return n;
}

/**
 * qstore_check_report_get_n_checked_items:
 * @self: a #QStoreCheckReport
 * @scope: a scope, such as %QSTORE_CHECK_SCOPE_STORE
 *
 * Adds up the items checked in the objects of @scope.
 *
 * Returns: the number of items (entries, rows…) checked in @scope
 */
guint64
qstore_check_report_get_n_checked_items (QStoreCheckReport *self,
                                         const char        *scope)
{
  guint64 n = 0;

  g_return_val_if_fail (QSTORE_IS_CHECK_REPORT (self), 0);
  g_return_val_if_fail (scope != NULL, 0);

  for (guint i = 0; i < self->checked->len; i++)
    {
      const Checked *checked = &g_array_index (self->checked, Checked, i);

      if (g_str_equal (checked->scope, scope))
        n += checked->n_items;
    }
  return n;
}

/**
 * qstore_check_report_get_notes:
 * @self: a #QStoreCheckReport
 *
 * Gets the notes.
 *
 * Returns: (transfer none) (array zero-terminated=1): the notes
 */
const char * const *
qstore_check_report_get_notes (QStoreCheckReport *self)
{
  g_return_val_if_fail (QSTORE_IS_CHECK_REPORT (self), NULL);
  return (const char * const *) self->notes->pdata;
}

/**
 * qstore_check_report_to_json:
 * @self: a #QStoreCheckReport
 *
 * Writes the report as one JSON object: `clean`, `problems` (each with
 * `scope`, `object`, `message` and, when at a key, `key` in hexadecimal),
 * `checked` (each with `scope`, `object` and `items`) and `notes`.
 *
 * Returns: (transfer full): the report as JSON, on one line
 */
char *
qstore_check_report_to_json (QStoreCheckReport *self)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autoptr(JsonGenerator) generator = json_generator_new ();
  g_autoptr(JsonNode) root = NULL;

  g_return_val_if_fail (QSTORE_IS_CHECK_REPORT (self), NULL);

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "clean");
  json_builder_add_boolean_value (builder, self->problems->len == 0);

  json_builder_set_member_name (builder, "problems");
  json_builder_begin_array (builder);
  for (guint i = 0; i < self->problems->len; i++)
    {
      const QStoreCheckProblem *problem = g_ptr_array_index (self->problems, i);

      json_builder_begin_object (builder);
      json_builder_set_member_name (builder, "scope");
      json_builder_add_string_value (builder, problem->scope);
      json_builder_set_member_name (builder, "object");
      json_builder_add_string_value (builder, problem->object);
      if (problem->key != NULL)
        {
          gsize len;
          const guint8 *data = g_bytes_get_data (problem->key, &len);
          GString *hex = g_string_sized_new (len * 2);

          for (gsize j = 0; j < len; j++)
            g_string_append_printf (hex, "%02x", data[j]);
          json_builder_set_member_name (builder, "key");
          json_builder_add_string_value (builder, hex->str);
          g_string_free (hex, TRUE);
        }
      json_builder_set_member_name (builder, "message");
      json_builder_add_string_value (builder, problem->message);
      json_builder_end_object (builder);
    }
  json_builder_end_array (builder);

  json_builder_set_member_name (builder, "checked");
  json_builder_begin_array (builder);
  for (guint i = 0; i < self->checked->len; i++)
    {
      const Checked *checked = &g_array_index (self->checked, Checked, i);

      json_builder_begin_object (builder);
      json_builder_set_member_name (builder, "scope");
      json_builder_add_string_value (builder, checked->scope);
      json_builder_set_member_name (builder, "object");
      json_builder_add_string_value (builder, checked->object);
      json_builder_set_member_name (builder, "items");
      json_builder_add_int_value (builder, (gint64) checked->n_items);
      json_builder_end_object (builder);
    }
  json_builder_end_array (builder);

  json_builder_set_member_name (builder, "notes");
  json_builder_begin_array (builder);
  for (guint i = 0; i < self->notes->len; i++)
    json_builder_add_string_value (builder, g_ptr_array_index (self->notes, i));
  json_builder_end_array (builder);
  json_builder_end_object (builder);

  root = json_builder_get_root (builder);
  json_generator_set_root (generator, root);
  return json_generator_to_data (generator, NULL);
}
