/* qstore-replica-observation.c: what each process says it holds, where all can read it
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include <gio/gio.h>
#include <json-glib/json-glib.h>

#include "qstore-bookkeeping-private.h"
#include "qstore-codec.h"
#include "qstore-error.h"
#include "qstore-i18n-private.h"
#include "qstore-replica-observation.h"

/**
 * QStoreReplicaObservation:
 *
 * What one process said about itself in a database, under a kind: its
 * position in the change stream, its lag, how many subscribers it holds.
 *
 * The questions asked of a group of processes that share a store ("how
 * far behind is each follower?") have answers each process holds on its
 * own. Asking them at the moment of the question needs a request, a
 * reply, a deadline to guess and a way to report who did not answer, and
 * fails exactly when an answer is needed most. So each process writes
 * its answer instead, with qstore_database_observe_replica(), into the
 * store every process can read. One that stops writing does not vanish:
 * its row ages, and how old it is
 * ([method@ReplicaObservation.get_staleness_ms]) is a number anyone can
 * report.
 *
 * The table keeps one row per (replica id, kind), replaced at each
 * observation: the present, not a history, so it needs no retention and
 * grows with the number of processes, not with time. Payloads are small
 * JSON values on purpose: what is large stays with the process that
 * holds it.
 */

struct _QStoreReplicaObservation
{
  GObject  parent_instance;

  char    *replica_id;
  char    *kind;
  char    *payload;
  gint64   updated_at;
  gint64   staleness_ms;
};

G_DEFINE_FINAL_TYPE (QStoreReplicaObservation, qstore_replica_observation, G_TYPE_OBJECT)

#define CREATE_OBSERVATIONS \
  "CREATE TABLE IF NOT EXISTS " QSTORE_REPLICA_OBSERVATIONS_TABLE " (" \
  "replica_id TEXT NOT NULL, kind TEXT NOT NULL, payload TEXT NOT NULL, " \
  "updated_at INTEGER NOT NULL, PRIMARY KEY (replica_id, kind))"

static void
qstore_replica_observation_finalize (GObject *object)
{
  QStoreReplicaObservation *self = QSTORE_REPLICA_OBSERVATION (object);

  g_free (self->replica_id);
  g_free (self->kind);
  g_free (self->payload);

  G_OBJECT_CLASS (qstore_replica_observation_parent_class)->finalize (object);
}

static void
qstore_replica_observation_class_init (QStoreReplicaObservationClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = qstore_replica_observation_finalize;
}

static void
qstore_replica_observation_init (QStoreReplicaObservation *self)
{
}

/**
 * qstore_database_observe_replica:
 * @self: a #QStoreDatabase
 * @replica_id: who observes, such as a host name and process id
 * @kind: what about, such as `changes`
 * @payload: a JSON value of at most %QSTORE_REPLICA_OBSERVATION_MAX_PAYLOAD
 *   bytes, such as `{"position": 42, "lag_ms": 3}`
 * @error: return location for a #GError
 *
 * Records what @replica_id observes about @kind in the database's
 * observations table (%QSTORE_REPLICA_OBSERVATIONS_TABLE, made on first
 * use), replacing its previous observation of that kind, with the time
 * now, in a transaction of its own. Read them back with
 * qstore_replica_observation_list().
 *
 * Returns: %TRUE on success; %FALSE with %QSTORE_ERROR_INVALID_ARGUMENT
 *   when an argument is empty or the payload is not JSON or too large,
 *   %QSTORE_ERROR_BUSY inside a transaction, or another error
 */
gboolean
qstore_database_observe_replica (QStoreDatabase  *self,
                                 const char      *replica_id,
                                 const char      *kind,
                                 const char      *payload,
                                 GError         **error)
{
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(QStoreResult) result = NULL;
  g_autoptr(GError) parse_error = NULL;
  gsize len;

  g_return_val_if_fail (QSTORE_IS_DATABASE (self), FALSE);
  g_return_val_if_fail (replica_id != NULL && kind != NULL && payload != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (replica_id[0] == '\0' || kind[0] == '\0')
    {
      g_set_error_literal (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                           _("A replica observation needs a replica id and a kind: give both"));
      return FALSE;
    }
  len = strlen (payload);
  if (len > QSTORE_REPLICA_OBSERVATION_MAX_PAYLOAD)
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                   "The “%s” observation of replica “%s” is %" G_GSIZE_FORMAT " bytes, over "
                   "the %d an observation holds: observe a summary, and keep the details "
                   "in the process", kind, replica_id, len, QSTORE_REPLICA_OBSERVATION_MAX_PAYLOAD);
      return FALSE;
    }
  if (!json_parser_load_from_data (parser, payload, len, &parse_error) ||
      json_parser_get_root (parser) == NULL)
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                   _("The “%s” observation of replica “%s” is not JSON (%s): give a JSON value"),
                   kind, replica_id, parse_error != NULL ? parse_error->message : "it is empty");
      return FALSE;
    }

  if (!qstore_bookkeeping_prepare (self, QSTORE_REPLICA_OBSERVATIONS_TABLE, CREATE_OBSERVATIONS,
                                   "Observing a replica", error))
    return FALSE;
  result = qstore_database_query (self, "INSERT OR REPLACE INTO " QSTORE_REPLICA_OBSERVATIONS_TABLE
                                  " (replica_id, kind, payload, updated_at) VALUES (?, ?, ?, ?)",
                                  g_variant_new ("(sssx)", replica_id, kind, payload,
                                                 g_get_real_time () / 1000),
                                  error);
  return result != NULL;
}

static char *
text_value (GVariant *row,
            gsize     index)
{
  g_autoptr(GVariant) boxed = g_variant_get_child_value (row, index);
  g_autoptr(GVariant) value = g_variant_get_variant (boxed);

  return g_variant_is_of_type (value, G_VARIANT_TYPE_STRING)
           ? g_variant_dup_string (value, NULL) : NULL;
}

/**
 * qstore_replica_observation_list:
 * @provider: the store's provider, which may be opened read-only
 * @error: return location for a #GError
 *
 * Reads every replica observation of a store, in (replica id, kind)
 * order, with its staleness as of now. It reads the observations table's
 * rows through the provider, so a process that only follows the store
 * (without opening it as a database) can list them.
 *
 * Returns: (transfer full): a list of #QStoreReplicaObservation, empty
 *   when nothing was ever observed; %NULL with %QSTORE_ERROR_CORRUPT when
 *   a row is not an observation, or the provider's error
 */
GListModel *
qstore_replica_observation_list (QStoreProvider  *provider,
                                 GError         **error)
{
  g_autoptr(GListStore) list = g_list_store_new (QSTORE_TYPE_REPLICA_OBSERVATION);
  g_autoptr(QStoreKV) store = NULL;
  g_autoptr(QStoreBounds) all = qstore_bounds_new ();
  g_autoptr(QStoreIter) iter = NULL;
  GError *local_error = NULL;
  gint64 now = g_get_real_time () / 1000;

  g_return_val_if_fail (QSTORE_IS_PROVIDER (provider), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!(store = qstore_provider_get_store (provider, "main", QSTORE_REPLICA_OBSERVATIONS_TABLE,
                                           error)) ||
      !(iter = qstore_kv_iterate (store, all, error)))
    return NULL;

  while (qstore_iter_next (iter, &local_error))
    {
      g_autoptr(GBytes) stored = NULL;
      g_autoptr(GVariant) row = NULL;
      g_autoptr(QStoreReplicaObservation) observation = NULL;
      g_autoptr(GVariant) boxed = NULL;
      g_autoptr(GVariant) updated = NULL;
      gsize len;
      const guint8 *data = qstore_iter_peek_value (iter, &len);

      stored = g_bytes_new (data, len);
      row = qstore_codec_decode_row (stored, NULL);
      observation = g_object_new (QSTORE_TYPE_REPLICA_OBSERVATION, NULL);
      if (row != NULL && g_variant_n_children (row) == 4)
        {
          observation->replica_id = text_value (row, 0);
          observation->kind = text_value (row, 1);
          observation->payload = text_value (row, 2);
          boxed = g_variant_get_child_value (row, 3);
          updated = g_variant_get_variant (boxed);
        }
      if (observation->replica_id == NULL || observation->kind == NULL ||
          observation->payload == NULL || updated == NULL ||
          !g_variant_is_of_type (updated, G_VARIANT_TYPE_INT64))
        {
          g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_CORRUPT,
                       _("A row of table “%s” at “%s” is not a replica observation: the "
                       "table is damaged; drop it, and the replicas write it anew"),
                       QSTORE_REPLICA_OBSERVATIONS_TABLE, qstore_provider_get_location (provider));
          return NULL;
        }
      observation->updated_at = g_variant_get_int64 (updated);
      observation->staleness_ms = MAX (0, now - observation->updated_at);
      g_list_store_append (list, observation);
    }
  if (local_error != NULL)
    {
      g_propagate_error (error, local_error);
      return NULL;
    }
  return G_LIST_MODEL (g_steal_pointer (&list));
}

/**
 * qstore_replica_observation_get_replica_id:
 * @self: a #QStoreReplicaObservation
 *
 * Gets the replica that observed.
 *
 * Returns: who observed
 */
const char *
qstore_replica_observation_get_replica_id (QStoreReplicaObservation *self)
{
  g_return_val_if_fail (QSTORE_IS_REPLICA_OBSERVATION (self), NULL);
  return self->replica_id;
}

/**
 * qstore_replica_observation_get_kind:
 * @self: a #QStoreReplicaObservation
 *
 * Gets what the observation is about.
 *
 * Returns: what the observation is about
 */
const char *
qstore_replica_observation_get_kind (QStoreReplicaObservation *self)
{
  g_return_val_if_fail (QSTORE_IS_REPLICA_OBSERVATION (self), NULL);
  return self->kind;
}

/**
 * qstore_replica_observation_get_payload:
 * @self: a #QStoreReplicaObservation
 *
 * Gets what was observed.
 *
 * Returns: the observation, a JSON value
 */
const char *
qstore_replica_observation_get_payload (QStoreReplicaObservation *self)
{
  g_return_val_if_fail (QSTORE_IS_REPLICA_OBSERVATION (self), NULL);
  return self->payload;
}

/**
 * qstore_replica_observation_get_updated_at:
 * @self: a #QStoreReplicaObservation
 *
 * Gets when the replica observed.
 *
 * Returns: when it was observed, in milliseconds since the Unix epoch
 */
gint64
qstore_replica_observation_get_updated_at (QStoreReplicaObservation *self)
{
  g_return_val_if_fail (QSTORE_IS_REPLICA_OBSERVATION (self), 0);
  return self->updated_at;
}

/**
 * qstore_replica_observation_get_staleness_ms:
 * @self: a #QStoreReplicaObservation
 *
 * Gets how old the observation was when it was read: a replica that
 * stopped observing has one that grows.
 *
 * Returns: its age in milliseconds (0 for one from the future)
 */
gint64
qstore_replica_observation_get_staleness_ms (QStoreReplicaObservation *self)
{
  g_return_val_if_fail (QSTORE_IS_REPLICA_OBSERVATION (self), 0);
  return self->staleness_ms;
}
