/* qstore-change-claims.c: a change's side effect runs once among consumers
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include "qstore-bookkeeping-private.h"
#include "qstore-change-claims.h"
#include "qstore-change-digest.h"
#include "qstore-database-private.h"
#include "qstore-error.h"
#include "qstore-i18n-private.h"

/* Several consumers of one store's changes (processes following its log,
 * say) may each see a change whose side effect must happen once. The
 * first to insert the change's key into the claims table runs it; the
 * others find the key there and skip it. The table is a lock ledger, not
 * a history: a claim lives as long as a change may still be seen again
 * (QSTORE_CHANGE_CLAIMS_TTL_HOURS), then it is swept. The occurrence
 * counter's window is derived from the same number (twice it) and never
 * written down on its own: written twice, the two drift apart the day
 * someone raises the lifetime, and a counter that forgets a digest while
 * its claim lives makes the next such change collide with the claim and
 * be dropped as a duplicate it is not. */

#define MAX_TTL_HOURS 1000000.0
#define MS_PER_HOUR   3600000.0

#define CREATE_CLAIMS \
  "CREATE TABLE IF NOT EXISTS " QSTORE_CHANGE_CLAIMS_TABLE " (" \
  "change_key TEXT PRIMARY KEY, claimed_at INTEGER NOT NULL)"

/**
 * qstore_change_claims_ttl_ms_for_hours:
 * @hours: (nullable): a lifetime in hours, as %QSTORE_CHANGE_CLAIMS_TTL_ENV
 *   holds it
 *
 * Reads a claim lifetime the way %QSTORE_CHANGE_CLAIMS_TTL_ENV is read: a
 * decimal number of hours, more than 0 and at most a million, spaces
 * around it allowed. Anything else — %NULL, empty, `0`, `-1`, `abc`,
 * `2h`, `inf` — falls back to %QSTORE_CHANGE_CLAIMS_DEFAULT_TTL_HOURS: a
 * typo in a tunable must not stop a consumer, and the default is safe.
 *
 * Returns: the lifetime in milliseconds
 */
gint64
qstore_change_claims_ttl_ms_for_hours (const char *hours)
{
  const gint64 fallback = (gint64) (QSTORE_CHANGE_CLAIMS_DEFAULT_TTL_HOURS * MS_PER_HOUR);
  g_autofree char *text = NULL;
  char *end = NULL;
  double value;

  if (hours == NULL)
    return fallback;
  text = g_strstrip (g_strdup (hours));
  if (text[0] == '\0' || strspn (text, "0123456789.eE+-") != strlen (text))
    return fallback;
  value = g_ascii_strtod (text, &end);
  if (end == NULL || *end != '\0' || !isfinite (value) || value <= 0 || value > MAX_TTL_HOURS)
    return fallback;
  return MAX (1, (gint64) (value * MS_PER_HOUR));
}

/**
 * qstore_change_claims_get_ttl_ms:
 *
 * Gets how long a change claim lives, from %QSTORE_CHANGE_CLAIMS_TTL_ENV
 * as it is now (see qstore_change_claims_ttl_ms_for_hours()).
 *
 * Returns: the lifetime in milliseconds
 */
gint64
qstore_change_claims_get_ttl_ms (void)
{
  return qstore_change_claims_ttl_ms_for_hours (g_getenv (QSTORE_CHANGE_CLAIMS_TTL_ENV));
}

/**
 * qstore_change_claims_get_window_ms:
 *
 * Gets the window of an occurrence counter that keys claims: twice
 * qstore_change_claims_get_ttl_ms(), so a digest is remembered as long
 * as any claim made on it lives (see [class@OccurrenceCounter]).
 *
 * Returns: the window in milliseconds
 */
gint64
qstore_change_claims_get_window_ms (void)
{
  return 2 * qstore_change_claims_get_ttl_ms ();
}

static gint64
now_ms (void)
{
  return g_get_real_time () / 1000;
}

/**
 * qstore_database_claim_change:
 * @self: a #QStoreDatabase
 * @change_key: a change key (see qstore_compose_change_key())
 * @error: return location for a #GError
 *
 * Claims a change for the caller: inserts @change_key into the
 * database's claims table (%QSTORE_CHANGE_CLAIMS_TABLE, made on first
 * use) unless a live claim holds it, in a transaction of its own that is
 * durable when the call returns. Run the change's side effect only when
 * this returns %TRUE: every other consumer that claims the same key gets
 * %FALSE until the claim expires (qstore_change_claims_get_ttl_ms()). An
 * expired claim is taken over.
 *
 * Consumers in several processes claim through the store's one writer:
 * each opens the database for writing in turn (the location admits one
 * writer at a time), so a key is decided once.
 *
 * Returns: %TRUE when the caller holds the claim now; %FALSE with @error
 *   unset when someone else does; %FALSE with %QSTORE_ERROR_INVALID_ARGUMENT
 *   for a malformed key, %QSTORE_ERROR_BUSY inside a transaction, or
 *   another error
 */
gboolean
qstore_database_claim_change (QStoreDatabase  *self,
                              const char      *change_key,
                              GError         **error)
{
  g_autofree char *digest = NULL;
  g_autoptr(QStoreResult) held = NULL;
  g_autoptr(QStoreResult) written = NULL;
  gint64 now = now_ms ();

  g_return_val_if_fail (QSTORE_IS_DATABASE (self), FALSE);
  g_return_val_if_fail (change_key != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (!(digest = qstore_parse_change_key (change_key, NULL)))
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                   _("“%s” is not a change key: make one with qstore_compose_change_key() "
                   "(64 lowercase hexadecimal digits, a colon, an occurrence)"), change_key);
      return FALSE;
    }
  if (!qstore_bookkeeping_prepare (self, QSTORE_CHANGE_CLAIMS_TABLE, CREATE_CLAIMS,
                                   "Claiming a change", error) ||
      !qstore_database_exec (self, "BEGIN", error))
    return FALSE;

  held = qstore_database_query (self, "SELECT claimed_at FROM " QSTORE_CHANGE_CLAIMS_TABLE
                                " WHERE change_key = ?", g_variant_new ("(s)", change_key),
                                error);
  if (held == NULL)
    goto failed;
  if (qstore_result_get_n_rows (held) > 0)
    {
      g_autoptr(GVariant) value = qstore_result_get_value (held, 0, 0);
      gint64 claimed_at = g_variant_is_of_type (value, G_VARIANT_TYPE_INT64)
                            ? g_variant_get_int64 (value) : 0;

      /* Held by a live claim: someone else's. */
      if (now - claimed_at < qstore_change_claims_get_ttl_ms ())
        {
          qstore_database_exec (self, "ROLLBACK", error);
          return FALSE;
        }
      written = qstore_database_query (self, "UPDATE " QSTORE_CHANGE_CLAIMS_TABLE
                                       " SET claimed_at = ? WHERE change_key = ?",
                                       g_variant_new ("(xs)", now, change_key), error);
    }
  else
    written = qstore_database_query (self, "INSERT INTO " QSTORE_CHANGE_CLAIMS_TABLE
                                     " (change_key, claimed_at) VALUES (?, ?)",
                                     g_variant_new ("(sx)", change_key, now), error);
  if (written == NULL || !qstore_database_exec (self, "COMMIT", error))
    goto failed;
  return TRUE;

failed:
  qstore_database_exec (self, "ROLLBACK", NULL);
  return FALSE;
}

/**
 * qstore_database_sweep_change_claims:
 * @self: a #QStoreDatabase
 * @error: return location for a #GError
 *
 * Removes the claims that expired (see qstore_change_claims_get_ttl_ms()),
 * in a transaction of its own. Without sweeps the claims table keeps a
 * row per change ever claimed: expired claims are taken over when the
 * same key is claimed again, but a key is seldom seen again.
 *
 * Returns: how many claims were removed; 0 with @error set on failure
 */
guint64
qstore_database_sweep_change_claims (QStoreDatabase  *self,
                                     GError         **error)
{
  g_autoptr(QStoreResult) result = NULL;

  g_return_val_if_fail (QSTORE_IS_DATABASE (self), 0);
  g_return_val_if_fail (error == NULL || *error == NULL, 0);

  if (!qstore_bookkeeping_prepare (self, QSTORE_CHANGE_CLAIMS_TABLE, CREATE_CLAIMS,
                                   "Sweeping change claims", error))
    return 0;
  result = qstore_database_query (self, "DELETE FROM " QSTORE_CHANGE_CLAIMS_TABLE
                                  " WHERE claimed_at <= ?",
                                  g_variant_new ("(x)", now_ms () - qstore_change_claims_get_ttl_ms ()),
                                  error);
  if (result == NULL)
    return 0;
  return (guint64) MAX (0, qstore_result_get_changes (result));
}

/**
 * qstore_database_list_change_claims:
 * @self: a #QStoreDatabase
 * @error: return location for a #GError
 *
 * Lists the change keys claimed and not expired, in key order: what
 * [method@OccurrenceCounter.seed_from_change_keys] takes.
 *
 * Returns: (transfer full) (array zero-terminated=1): the keys (empty
 *   when nothing was ever claimed), or %NULL on error
 */
char **
qstore_database_list_change_claims (QStoreDatabase  *self,
                                    GError         **error)
{
  g_autoptr(GStrvBuilder) keys = g_strv_builder_new ();
  g_autoptr(QStoreResult) result = NULL;

  g_return_val_if_fail (QSTORE_IS_DATABASE (self), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!qstore_database_check_open (self, error))
    return NULL;
  if (qstore_database_get_table (self, "main", QSTORE_CHANGE_CLAIMS_TABLE) == NULL)
    return g_strv_builder_end (keys);
  result = qstore_database_query (self, "SELECT change_key FROM " QSTORE_CHANGE_CLAIMS_TABLE
                                  " WHERE claimed_at > ? ORDER BY change_key",
                                  g_variant_new ("(x)", now_ms () - qstore_change_claims_get_ttl_ms ()),
                                  error);
  if (result == NULL)
    return NULL;
  for (guint i = 0; i < qstore_result_get_n_rows (result); i++)
    {
      g_autoptr(GVariant) value = qstore_result_get_value (result, i, 0);

      if (g_variant_is_of_type (value, G_VARIANT_TYPE_STRING))
        g_strv_builder_add (keys, g_variant_get_string (value, NULL));
    }
  return g_strv_builder_end (keys);
}
