/* qstore-tool.h: what the sub-commands of the qstore command share
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <json-glib/json-glib.h>
#include <qstore.h>

G_BEGIN_DECLS

/* Exit statuses: 1 for a failure reported by the library or the data,
 * 2 for a command line that cannot be understood. */
#define QSTORE_TOOL_EXIT_OK      0
#define QSTORE_TOOL_EXIT_FAILURE 1
#define QSTORE_TOOL_EXIT_USAGE   2

typedef struct
{
  /* From --store, else from QSTORE_STORE; NULL when neither is given. */
  const char *store_uri;
} QStoreTool;

/* A sub-command gets its own arguments: argv[0] is the sub-command's name. */
typedef int (*QStoreToolHandler) (QStoreTool  *tool,
                                  int          argc,
                                  char       **argv);

typedef struct
{
  const char        *name;
  const char        *summary;
  QStoreToolHandler  run;
} QStoreToolCommand;

/* Reporting */
int             qstore_tool_fail               (const GError        *error);
int             qstore_tool_fail_message       (const char          *format,
                                                ...) G_GNUC_PRINTF (1, 2);
int             qstore_tool_usage_error        (const char          *command,
                                                const char          *format,
                                                ...) G_GNUC_PRINTF (2, 3);

/* Option parsing */
GOptionContext *qstore_tool_option_context_new (const char          *command,
                                                const char          *parameters,
                                                const char          *summary);
int             qstore_tool_parse_options      (GOptionContext      *context,
                                                const char          *command,
                                                int                 *argc,
                                                char              ***argv);
int             qstore_tool_dispatch           (QStoreTool          *tool,
                                                const char          *command,
                                                const QStoreToolCommand *commands,
                                                gsize                n_commands,
                                                int                  argc,
                                                char               **argv);
char           *qstore_tool_describe_commands  (const QStoreToolCommand *commands,
                                                gsize                n_commands);

/* Opening the store */
int             qstore_tool_open_provider      (QStoreTool          *tool,
                                                const char          *command,
                                                QStoreOpenFlags      flags,
                                                QStoreProvider     **provider);

/* Formatting keys and values */
GBytes         *qstore_tool_parse_data         (const char          *text,
                                                gboolean             hex,
                                                GError             **error);
char           *qstore_tool_format_hex         (const guint8        *data,
                                                gsize                len);
char           *qstore_tool_format_text        (const guint8        *data,
                                                gsize                len);
char           *qstore_tool_format_data        (const guint8        *data,
                                                gsize                len,
                                                gboolean             hex);
void            qstore_tool_add_json_data      (JsonBuilder         *builder,
                                                const guint8        *data,
                                                gsize                len,
                                                gboolean             hex);
void            qstore_tool_print_json         (JsonNode            *node);
/* SQL values in JSON: NULL null, integers and reals numbers (reals that
 * read back as reals), text strings, blobs {"$blob": "<base64>"}. */
void            qstore_tool_append_json_string (GString             *out,
                                                const char          *text);
void            qstore_tool_append_json_value  (GString             *out,
                                                GVariant            *value);
void            qstore_tool_append_json_tuple  (GString             *out,
                                                GVariant            *tuple);
/* One change of a change set: {"table", "op", "old", "new"}, as the
 * server sends it and bus followers print it. */
void            qstore_tool_append_json_change (GString             *out,
                                                QStoreChangeSet     *change_set,
                                                guint                index);
char           *qstore_tool_format_time        (gint64               usec);

/* Followers' output: one line at a time, flushed */
void            qstore_tool_print_line         (GString             *line);
void            qstore_tool_print_gap          (gboolean             json,
                                                const char          *reason,
                                                gint64               down_for_ms);

/* The JSON forms the commands print, which the server gives too */
JsonNode       *qstore_tool_catalog_to_json    (QStoreProvider      *provider,
                                                GError             **error);
JsonNode       *qstore_tool_stale_report_to_json (QStoreStaleReport *report,
                                                  const char * const *stale_now);
JsonNode       *qstore_tool_staging_run_to_json (QStoreStagingRun *run,
                                                 gint64            stale_after_ms,
                                                 const char       *action);

/* The server on the session bus (qstore-tool-serve.c) */
#define QSTORE_TOOL_SERVER_NAME_PREFIX QSTORE_SERVER_NAME_PREFIX
#define QSTORE_TOOL_SERVER_PATH        QSTORE_SERVER_PATH
#define QSTORE_TOOL_SERVER_INTERFACE   QSTORE_SERVER_INTERFACE
char           *qstore_tool_server_default_id  (const char          *store_uri);
gboolean        qstore_tool_server_id_is_valid (const char          *id);
int             qstore_tool_changes_follow_bus (QStoreTool          *tool,
                                                const char          *command,
                                                const char          *id,
                                                gboolean             json);

/* Sub-commands */
int             qstore_tool_providers          (QStoreTool          *tool,
                                                int                  argc,
                                                char               **argv);
int             qstore_tool_kv                 (QStoreTool          *tool,
                                                int                  argc,
                                                char               **argv);
int             qstore_tool_sql                (QStoreTool          *tool,
                                                int                  argc,
                                                char               **argv);
int             qstore_tool_catalog            (QStoreTool          *tool,
                                                int                  argc,
                                                char               **argv);
int             qstore_tool_stale              (QStoreTool          *tool,
                                                int                  argc,
                                                char               **argv);
int             qstore_tool_changes            (QStoreTool          *tool,
                                                int                  argc,
                                                char               **argv);
int             qstore_tool_import             (QStoreTool          *tool,
                                                int                  argc,
                                                char               **argv);
int             qstore_tool_staging            (QStoreTool          *tool,
                                                int                  argc,
                                                char               **argv);
int             qstore_tool_serve              (QStoreTool          *tool,
                                                int                  argc,
                                                char               **argv);
int             qstore_tool_check              (QStoreTool          *tool,
                                                int                  argc,
                                                char               **argv);
int             qstore_tool_demo               (QStoreTool          *tool,
                                                int                  argc,
                                                char               **argv);

G_END_DECLS
