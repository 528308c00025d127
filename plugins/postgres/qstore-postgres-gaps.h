/* qstore-postgres-gaps.h: what the one writer knows is not there
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "qstore.h"

G_BEGIN_DECLS

/* Store names to the range of keys the writer last found absent (see
 * qstore-postgres-gaps.c). */
GHashTable *qstore_pg_gaps_new  (void);
/* Whether @key lies in the gap of store @name. */
gboolean    qstore_pg_gaps_hold (GHashTable    *gaps,
                                 const char    *name,
                                 const guint8  *key,
                                 gsize          len);
/* Whether @key lies above the gap of store @name (at or after its end). */
gboolean    qstore_pg_gaps_above (GHashTable   *gaps,
                                  const char   *name,
                                  const guint8 *key,
                                  gsize         len);
/* Store @name holds no key from @from up to @to (excluded; NULL: no key
 * after @from). @provisional: read from committed data while a write
 * transaction is open, which may have put keys there already. */
void        qstore_pg_gaps_set  (GHashTable    *gaps,
                                 const char    *name,
                                 const guint8  *from,
                                 gsize          from_len,
                                 const guint8  *to,
                                 gsize          to_len,
                                 gboolean       provisional);
/* The write transaction ended: its commit makes the provisional gaps
 * unsure, an abort leaves them true. */
void        qstore_pg_gaps_settle (GHashTable  *gaps,
                                   gboolean     committed);
/* A committed write put @key into store @name. */
void        qstore_pg_gaps_put  (GHashTable    *gaps,
                                 const char    *name,
                                 const guint8  *key,
                                 gsize          len);

G_END_DECLS
