/* qstore-change-log-private.h: the durable change log as it is stored
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "qstore-change-set-private.h"
#include "qstore-provider.h"

G_BEGIN_DECLS

/* The log is one store of the location, one entry per committed
 * transaction, keyed by the transaction id (8 bytes, big-endian, so keys
 * sort as ids do). Its setting is a catalog meta entry, the JSON object
 * {"retain": N, "id": "…", "since": T}: how many transactions are kept,
 * an id made anew each time the log is turned on (a follower that finds
 * another id knows the log was recreated), and the first transaction the
 * log holds. Without the setting there is no log. The store's name,
 * QSTORE_CHANGE_LOG_STORE_NAME, is public: providers that announce
 * commits look for it. */
#define QSTORE_CHANGE_LOG_META       "change_log"
#define QSTORE_CHANGE_LOG_SETTING    "qstore.change_log"
#define QSTORE_CHANGE_LOG_KEY_LEN    8

typedef struct
{
  guint64  retain;
  char    *id;
  guint64  since;
} QStoreChangeLogSetting;

void      qstore_change_log_setting_clear  (QStoreChangeLogSetting  *setting);
char     *qstore_change_log_setting_json   (const QStoreChangeLogSetting *setting);
/* QSTORE_ERROR_CORRUPT, naming @location, when @text is not a setting. */
gboolean  qstore_change_log_setting_parse  (const char              *text,
                                            gsize                    len,
                                            const char              *location,
                                            QStoreChangeLogSetting  *setting,
                                            GError                 **error);

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (QStoreChangeLogSetting, qstore_change_log_setting_clear)

void      qstore_change_log_key            (guint64                  tx_id,
                                            guint8                   key[QSTORE_CHANGE_LOG_KEY_LEN]);
gboolean  qstore_change_log_key_parse      (const guint8            *key,
                                            gsize                    len,
                                            guint64                 *tx_id);

/* Whether changes to @table stay out of the log and the change feeds:
 * the bookkeeping tables qstore keeps in a database (`_qstore_…`, such
 * as the change claims and the replica observations), which would
 * otherwise fill the log with its readers' own traces. */
gboolean  qstore_change_log_is_bookkeeping (const char              *table);

/* Appends the entry of transaction @tx_id to @out: when it committed,
 * and each change of @changes (a QStoreChange array; NULL when its
 * changes were not all kept: the entry then says so) but those of the
 * bookkeeping tables, with the description of each table. */
void      qstore_change_log_encode         (GByteArray              *out,
                                            guint64                  tx_id,
                                            gint64                   time,
                                            GArray                  *changes);

/* Reads an entry back. *@complete is FALSE (and the set has no changes)
 * when the entry says its transaction's changes were not all kept.
 * Anything malformed — a wrong checksum, a row that does not decode, a
 * transaction id other than @tx_id — is QSTORE_ERROR_CORRUPT, saying
 * what is wrong. */
QStoreChangeSet *qstore_change_log_decode  (guint64                  tx_id,
                                            GBytes                  *entry,
                                            gboolean                *complete,
                                            GError                 **error);

G_END_DECLS
