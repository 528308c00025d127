/* qstore-inspector-names.c: how the inspector orders, joins and quotes names
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "qstore-inspector-names.h"

/* The length of the run of ASCII digits at @p. */
static gsize
digits_at (const char *p)
{
  gsize n = 0;

  while (g_ascii_isdigit (p[n]))
    n++;
  return n;
}

/* The length of the run at @p that holds no ASCII digit. */
static gsize
text_at (const char *p)
{
  gsize n = 0;

  while (p[n] != '\0' && !g_ascii_isdigit (p[n]))
    n++;
  return n;
}

/**
 * qstore_inspector_natural_compare:
 * @a: a name
 * @b: another name
 *
 * Compares names as people count: runs of digits by their value, so t2
 * comes before t10, and the text between them by the user's collation,
 * ignoring case. Names that differ only in case or leading zeros are
 * ordered byte by byte, so the order is total.
 *
 * Returns: a negative value, 0 or a positive value, as strcmp()
 */
int
qstore_inspector_natural_compare (const char *a,
                                  const char *b)
{
  const char *p = a;
  const char *q = b;

  while (*p != '\0' && *q != '\0')
    {
      gsize np = digits_at (p);
      gsize nq = digits_at (q);

      if (np > 0 && nq > 0)
        {
          const char *dp = p;
          const char *dq = q;
          gsize sp = np;
          gsize sq = nq;
          int cmp;

          /* By value: without leading zeros, a longer run is larger. */
          while (sp > 1 && *dp == '0')
            dp++, sp--;
          while (sq > 1 && *dq == '0')
            dq++, sq--;
          if (sp != sq)
            return sp < sq ? -1 : 1;
          if ((cmp = memcmp (dp, dq, sp)) != 0)
            return cmp;
          p += np;
          q += nq;
          continue;
        }

      np = np > 0 ? 0 : text_at (p);
      nq = nq > 0 ? 0 : text_at (q);
      if (np == 0 || nq == 0)
        /* Digits come before text, as in a plain sort. */
        return np == 0 ? -1 : 1;

      {
        g_autofree char *tp = g_utf8_casefold (p, np);
        g_autofree char *tq = g_utf8_casefold (q, nq);
        int cmp = g_utf8_collate (tp, tq);

        if (cmp != 0)
          return cmp;
      }
      p += np;
      q += nq;
    }

  if (*p != *q)
    return *p == '\0' ? -1 : 1;
  return strcmp (a, b);
}

/* Returns: (transfer full): `schema.name`, or @name alone without a schema */
char *
qstore_inspector_qualified_name (const char *schema,
                                 const char *name)
{
  if (schema == NULL || *schema == '\0')
    return g_strdup (name);
  return g_strconcat (schema, ".", name, NULL);
}

/* Returns: (transfer full): @name as an SQL identifier, in double quotes */
char *
qstore_inspector_quote_identifier (const char *name)
{
  GString *quoted = g_string_new ("\"");

  for (const char *p = name; *p != '\0'; p++)
    {
      /* An embedded quote is doubled, so any name reads back as itself. */
      if (*p == '"')
        g_string_append_c (quoted, '"');
      g_string_append_c (quoted, *p);
    }
  g_string_append_c (quoted, '"');
  return g_string_free (quoted, FALSE);
}

/**
 * qstore_inspector_location_of:
 * @uri: a store URI such as `lmdb:/path/to/dir?map_size=…`
 *
 * Returns: (transfer full): the location in @uri, as a person names it:
 *   its path, without the provider and the options
 */
char *
qstore_inspector_location_of (const char *uri)
{
  const char *colon = strchr (uri, ':');
  const char *location = colon != NULL && colon[1] != '\0' ? colon + 1 : uri;

  return g_strndup (location, strcspn (location, "?"));
}

/**
 * qstore_inspector_store_title:
 * @uri: a store URI, such as `lmdb:/home/ada/shop`
 *
 * Returns: (transfer full): what a person calls the store: the last part
 *   of its location, such as “shop”
 */
char *
qstore_inspector_store_title (const char *uri)
{
  g_autofree char *path = qstore_inspector_location_of (uri);
  gsize len = strlen (path);

  while (len > 1 && path[len - 1] == '/')
    path[--len] = '\0';
  if (len == 0)
    return g_strdup (uri);
  return g_path_get_basename (path);
}
