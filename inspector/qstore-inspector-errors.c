/* qstore-inspector-errors.c: library errors told to a person who only looks
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <gio/gio.h>
#include <glib/gi18n.h>
#include <qstore.h>
#include <string.h>

#include "qstore-inspector-errors.h"

/* The library's messages are written for a program that opens stores for
 * writing ("open it for writing to create one"), and speak the library's
 * language. A person in the inspector can only look, so the inspector
 * says, in their language, what happened and what they can do, from the
 * error's code and from what it was doing; the library's own words are
 * shown beside it as details. Nothing here reads the library's message,
 * so it holds whatever the library says. */

/* The error's QSTORE_ERROR code, with the GIO errors a chooser or the
 * file system give mapped to the nearest one. */
static int
code_of (const GError *error)
{
  if (error->domain == QSTORE_ERROR)
    return error->code;
  if (error->domain == G_IO_ERROR)
    switch (error->code)
      {
      case G_IO_ERROR_NOT_FOUND:
        return QSTORE_ERROR_NOT_FOUND;
      case G_IO_ERROR_PERMISSION_DENIED:
        return QSTORE_ERROR_IO;
      case G_IO_ERROR_NOT_DIRECTORY:
      case G_IO_ERROR_IS_DIRECTORY:
      case G_IO_ERROR_NOT_REGULAR_FILE:
        return QSTORE_ERROR_INVALID_ARGUMENT;
      case G_IO_ERROR_BUSY:
        return QSTORE_ERROR_BUSY;
      default:
        return QSTORE_ERROR_FAILED;
      }
  if (error->domain == G_FILE_ERROR)
    return error->code == G_FILE_ERROR_NOENT ? QSTORE_ERROR_NOT_FOUND : QSTORE_ERROR_IO;
  return QSTORE_ERROR_FAILED;
}

static char *
explain_store (int         code,
               const char *location)
{
  switch (code)
    {
    case QSTORE_ERROR_NOT_FOUND:
      /* Translators: %s is a folder or a file */
      return g_strdup_printf (_("There is no qstore store at “%s”. The inspector only looks at stores "
                                "that exist and never creates one: choose the folder of an LMDB store "
                                "(it holds a data.mdb file) or the file of an SQLite store."), location);
    case QSTORE_ERROR_CORRUPT:
      return g_strdup_printf (_("“%s” is not a qstore store, or it is damaged, so it cannot be shown. "
                                "Nothing in it was changed. Choose another folder or file."), location);
    case QSTORE_ERROR_UNSUPPORTED:
      return g_strdup_printf (_("“%s” uses something this version of the inspector cannot read, such as "
                                "a newer store format. Open it with a newer qstore Inspector."), location);
    case QSTORE_ERROR_BUSY:
    case QSTORE_ERROR_READ_REJECTED:
      return g_strdup_printf (_("“%s” cannot be read right now: another program is holding or changing "
                                "it. Try again in a moment."), location);
    case QSTORE_ERROR_IO:
      return g_strdup_printf (_("The system could not read “%s”. Check that you may read it and that "
                                "its disk is available, then try again."), location);
    case QSTORE_ERROR_INVALID_ARGUMENT:
      return g_strdup_printf (_("“%s” cannot be opened as a store: an LMDB store is a folder and an "
                                "SQLite store is a file. Choose one of those."), location);
    case QSTORE_ERROR_CLOSED:
      return g_strdup_printf (_("“%s” was closed while it was being read. Refresh to read it "
                                "again."), location);
    case QSTORE_ERROR_READ_ONLY:
      return g_strdup_printf (_("Showing “%s” would need a change to it, and the inspector never "
                                "changes a store. A program that writes to the store can bring it up "
                                "to date; then open it here again."), location);
    case QSTORE_ERROR_FAILED:
    default:
      return g_strdup_printf (_("“%s” could not be read as a qstore store. The details below say why; "
                                "nothing in it was changed."), location);
    }
}

static char *
explain_rows (int         code,
              const char *name,
              gboolean    view)
{
  if (view)
    switch (code)
      {
      case QSTORE_ERROR_BUSY:
      case QSTORE_ERROR_READ_REJECTED:
        break;
      default:
        /* Translators: %s is a view's schema.name */
        return g_strdup_printf (_("The rows of the view “%s” cannot be computed: its query fails on "
                                  "this store, for instance because it reads a table that is gone. "
                                  "The catalog shows its definition."), name);
      }

  switch (code)
    {
    case QSTORE_ERROR_CORRUPT:
      /* Translators: %s is a table's schema.name */
      return g_strdup_printf (_("The rows of “%s” cannot be read: its stored data is damaged. The "
                                "catalog still shows how it is defined."), name);
    case QSTORE_ERROR_NOT_FOUND:
      return g_strdup_printf (_("The rows of “%s” are not in the store: another program may have "
                                "dropped it. Refresh to see the store as it is now."), name);
    case QSTORE_ERROR_BUSY:
    case QSTORE_ERROR_READ_REJECTED:
      return g_strdup_printf (_("The rows of “%s” cannot be read right now: another program is "
                                "changing the store. Refresh to try again."), name);
    case QSTORE_ERROR_CLOSED:
      return g_strdup_printf (_("The store was closed while the rows of “%s” were read. Refresh to "
                                "read them again."), name);
    case QSTORE_ERROR_IO:
      return g_strdup_printf (_("The system could not read the rows of “%s”. Check that the store’s "
                                "disk is available, then refresh."), name);
    default:
      return g_strdup_printf (_("The rows of “%s” cannot be read. Refresh to try again; the details "
                                "say why."), name);
    }
}

/**
 * qstore_inspector_explain_error:
 * @error: what the library, GIO or the file system reported
 * @activity: what the inspector was doing
 * @subject: the store's location for %QSTORE_INSPECTOR_ACTIVITY_OPEN and
 *   %QSTORE_INSPECTOR_ACTIVITY_REFRESH, else the table's or view's
 *   `schema.name`
 *
 * Says what happened and what the person can do, in their language and
 * for a viewer that only reads. Show @error's own message beside it as
 * details.
 *
 * Returns: (transfer full): one or two sentences
 */
char *
qstore_inspector_explain_error (const GError            *error,
                                QStoreInspectorActivity  activity,
                                const char              *subject)
{
  int code;

  g_return_val_if_fail (error != NULL, NULL);
  g_return_val_if_fail (subject != NULL, NULL);

  code = code_of (error);
  switch (activity)
    {
    case QSTORE_INSPECTOR_ACTIVITY_ROWS:
      return explain_rows (code, subject, FALSE);
    case QSTORE_INSPECTOR_ACTIVITY_VIEW:
      return explain_rows (code, subject, TRUE);
    case QSTORE_INSPECTOR_ACTIVITY_REFRESH:
      {
        g_autofree char *why = explain_store (code, subject);

        /* Translators: %s says why, in a sentence or two */
        return g_strdup_printf (_("The store could not be read again, so what shows may be out of "
                                  "date. %s"), why);
      }
    case QSTORE_INSPECTOR_ACTIVITY_OPEN:
    default:
      return explain_store (code, subject);
    }
}
