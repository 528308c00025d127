/* conformance.h: what the provider conformance tests share
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <qstore.h>

#include "qstore-test-util.h"

G_BEGIN_DECLS

typedef struct
{
  char               *dir;       /* a fresh temporary directory */
  char               *uri;       /* the store URI inside it */
  QStoreProvider     *provider;
  QStoreCapabilities  caps;
} Fixture;

QStoreProvider *open_provider    (const char          *uri,
                                  QStoreOpenFlags      flags);
void            fixture_setup    (Fixture             *f,
                                  gconstpointer        data);
void            fixture_teardown (Fixture             *f,
                                  gconstpointer        data);
gboolean        persistent       (Fixture             *f);
void            reopen           (Fixture             *f,
                                  QStoreOpenFlags      flags);
QStoreKV       *store            (Fixture             *f,
                                  const char          *name);
QStoreKV       *store_of         (QStoreProvider      *provider,
                                  const char          *name);
void            put              (QStoreKV            *kv,
                                  const char          *key,
                                  const char          *value);
void            del              (QStoreKV            *kv,
                                  const char          *key);
/* The value of @key as a string, or NULL when absent. */
char           *get              (QStoreKV            *kv,
                                  const char          *key);
/* Every key of an iteration, joined with "|". */
char           *collect          (QStoreIter          *iter);
char           *scan             (QStoreKV            *kv,
                                  const QStoreBounds  *bounds);

#define assert_value(kv, key, expected) G_STMT_START { \
    g_autofree char *got_ = get ((kv), (key)); \
    g_assert_cmpstr (got_, ==, (expected)); \
  } G_STMT_END

/* On a failed assertion or a crash in a case, prints which case failed
 * and the capability it checks before the process dies. */
void            conformance_report_failures       (void);

/* Whether an armed QSTORE_FAULT_WRITE_OP reaches the provider: this
 * tree's providers pass the fault points, a plugin built elsewhere does
 * not, and then a write failing part-way cannot be made. */
gboolean        conformance_faults_reach_provider (Fixture *f);

/* The tests of other files, added under @prefix. */
void            conformance_add_lock_tests  (const char *prefix);
void            conformance_add_check_tests (const char *prefix);
void            conformance_add_read_only_tests (const char *prefix);
void            conformance_add_write_txn_tests (const char *prefix);
void            conformance_add_point_read_tests (const char *prefix);
void            conformance_add_write_order_tests (const char *prefix);

/* postgres: what tests/postgres/with-postgres.sh's server is asked
 * outside qstore, through psql. */
void            conformance_add_postgres_tests (const char *prefix);
void            conformance_postgres_bad_input (Fixture    *f);
char           *pg_schema_of                   (const char *uri);
/* Runs @sql, failing the test on an error; returns the output, trimmed. */
char           *pg_sql                         (const char *sql);
char           *pg_count_entries               (const char *uri);
void            pg_plant_orphan                (const char *uri);

/* Runs the child process @argv asks for and returns its exit status, or
 * -1 when @argv asks for none (then it only notes argv[0]). */
int             conformance_lock_child      (int    argc,
                                             char **argv);
int             conformance_write_txn_child (int    argc,
                                             char **argv);

G_END_DECLS
