/* qstore-tool-kv.c: qstore kv, the ordered key/value stores of a location
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "qstore-tool.h"

#define DATA_RULES \
  "The location is the one “qstore --store URI” or QSTORE_STORE names.\n" \
  "KEY and VALUE are taken as they are, or as hexadecimal with --hex.\n" \
  "Output as text prints a backslash as \\\\ and control characters and\n" \
  "bytes that are not UTF-8 as \\xHH; --hex prints hexadecimal. In JSON,\n" \
  "bytes that are not UTF-8 text are {\"$blob\": \"<base64>\"}.\n" \
  "Give -- before a KEY or VALUE that starts with a dash."

typedef struct
{
  const char      *command;
  GOptionContext  *context;
  char           **args;
  gboolean         hex;
} KVCommand;

static void
kv_command_clear (KVCommand *self)
{
  g_clear_pointer (&self->context, g_option_context_free);
  g_clear_pointer (&self->args, g_strfreev);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (KVCommand, kv_command_clear)

/* Parses a kv sub-command whose positional arguments are named in
 * @parameters; @entries are its own options (--hex is added). */
static int
kv_command_parse (KVCommand          *self,
                  const char         *parameters,
                  const char         *summary,
                  const GOptionEntry *entries,
                  int                 argc,
                  char              **argv)
{
  g_auto(GStrv) names = g_strsplit (parameters, " ", -1);
  const GOptionEntry common[] = {
    { "hex", 0, 0, G_OPTION_ARG_NONE, &self->hex,
      "Keys and values are hexadecimal, on input and output", NULL },
    { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &self->args, NULL, NULL },
    G_OPTION_ENTRY_NULL
  };
  guint n_args;
  int status;

  self->command = argv[0];
  self->context = qstore_tool_option_context_new (self->command, parameters, summary);
  g_option_context_set_description (self->context, DATA_RULES);
  if (entries != NULL)
    g_option_context_add_main_entries (self->context, entries, NULL);
  g_option_context_add_main_entries (self->context, common, NULL);

  status = qstore_tool_parse_options (self->context, self->command, &argc, &argv);
  if (status != QSTORE_TOOL_EXIT_OK)
    return status;

  n_args = self->args ? g_strv_length (self->args) : 0;
  if (n_args < g_strv_length (names))
    return qstore_tool_usage_error (self->command, "Missing argument %s", names[n_args]);
  if (n_args > g_strv_length (names))
    return qstore_tool_usage_error (self->command, "Unexpected argument “%s”",
                                    self->args[g_strv_length (names)]);
  return QSTORE_TOOL_EXIT_OK;
}

/* Parses a key or value argument; a malformed one is a usage error. */
static int
kv_command_data (KVCommand   *self,
                 const char  *text,
                 GBytes     **data)
{
  g_autoptr(GError) error = NULL;

  *data = qstore_tool_parse_data (text, self->hex, &error);
  if (*data == NULL)
    return qstore_tool_usage_error (self->command, "%s", error->message);
  return QSTORE_TOOL_EXIT_OK;
}

static int
open_store (QStoreTool       *tool,
            KVCommand        *command,
            QStoreOpenFlags   flags,
            QStoreProvider  **provider,
            QStoreKV        **store)
{
  g_autoptr(GError) error = NULL;
  int status;

  status = qstore_tool_open_provider (tool, command->command, flags, provider);
  if (status != QSTORE_TOOL_EXIT_OK)
    return status;
  *store = qstore_provider_open_store (*provider, command->args[0], &error);
  if (*store == NULL)
    return qstore_tool_fail (error);
  return QSTORE_TOOL_EXIT_OK;
}

/* Closes a provider that was written to, so that closing is not left to
 * process exit. */
static int
finish_write (QStoreProvider *provider,
              gboolean        ok,
              const GError   *error)
{
  qstore_provider_close_all (provider);
  return ok ? QSTORE_TOOL_EXIT_OK : qstore_tool_fail (error);
}

static int
kv_put (QStoreTool  *tool,
        int          argc,
        char       **argv)
{
  g_auto(KVCommand) command = { NULL };
  g_autoptr(QStoreProvider) provider = NULL;
  g_autoptr(QStoreKV) store = NULL;
  g_autoptr(GBytes) key = NULL;
  g_autoptr(GBytes) value = NULL;
  g_autoptr(GError) error = NULL;
  gboolean sync = FALSE;
  gboolean ok;
  int status;
  const GOptionEntry entries[] = {
    { "sync", 0, 0, G_OPTION_ARG_NONE, &sync,
      "Return only once the write is on stable storage", NULL },
    G_OPTION_ENTRY_NULL
  };

  if ((status = kv_command_parse (&command, "STORE KEY VALUE",
                                  "Store VALUE under KEY in STORE (such as main.t).",
                                  entries, argc, argv)) ||
      (status = kv_command_data (&command, command.args[1], &key)) ||
      (status = kv_command_data (&command, command.args[2], &value)) ||
      (status = open_store (tool, &command, QSTORE_OPEN_NONE, &provider, &store)))
    return status;

  ok = qstore_kv_put (store,
                      g_bytes_get_data (key, NULL), g_bytes_get_size (key),
                      g_bytes_get_data (value, NULL), g_bytes_get_size (value),
                      sync ? QSTORE_WRITE_SYNC : QSTORE_WRITE_NONE, &error);
  return finish_write (provider, ok, error);
}

static int
kv_get (QStoreTool  *tool,
        int          argc,
        char       **argv)
{
  g_auto(KVCommand) command = { NULL };
  g_autoptr(QStoreProvider) provider = NULL;
  g_autoptr(QStoreKV) store = NULL;
  g_autoptr(GBytes) key = NULL;
  g_autoptr(GBytes) value = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *text = NULL;
  const guint8 *data;
  gsize len;
  int status;

  if ((status = kv_command_parse (&command, "STORE KEY",
                                  "Print the value stored under KEY in STORE.",
                                  NULL, argc, argv)) ||
      (status = kv_command_data (&command, command.args[1], &key)) ||
      (status = open_store (tool, &command, QSTORE_OPEN_READ_ONLY, &provider, &store)))
    return status;

  value = qstore_kv_get (store, g_bytes_get_data (key, NULL), g_bytes_get_size (key), &error);
  if (error != NULL)
    return qstore_tool_fail (error);
  if (value == NULL)
    {
      data = g_bytes_get_data (key, &len);
      text = qstore_tool_format_data (data, len, command.hex);
      return qstore_tool_fail_message ("key “%s” not found in store “%s” at %s",
                                       text, command.args[0], tool->store_uri);
    }

  data = g_bytes_get_data (value, &len);
  text = qstore_tool_format_data (data, len, command.hex);
  fputs (text, stdout);
  fputc ('\n', stdout);
  return QSTORE_TOOL_EXIT_OK;
}

static int
kv_del (QStoreTool  *tool,
        int          argc,
        char       **argv)
{
  g_auto(KVCommand) command = { NULL };
  g_autoptr(QStoreProvider) provider = NULL;
  g_autoptr(QStoreKV) store = NULL;
  g_autoptr(GBytes) key = NULL;
  g_autoptr(GError) error = NULL;
  gboolean sync = FALSE;
  gboolean ok;
  int status;
  const GOptionEntry entries[] = {
    { "sync", 0, 0, G_OPTION_ARG_NONE, &sync,
      "Return only once the removal is on stable storage", NULL },
    G_OPTION_ENTRY_NULL
  };

  if ((status = kv_command_parse (&command, "STORE KEY",
                                  "Remove KEY from STORE (an absent key is no error).",
                                  entries, argc, argv)) ||
      (status = kv_command_data (&command, command.args[1], &key)) ||
      (status = open_store (tool, &command, QSTORE_OPEN_NONE, &provider, &store)))
    return status;

  ok = qstore_kv_delete (store, g_bytes_get_data (key, NULL), g_bytes_get_size (key),
                         sync ? QSTORE_WRITE_SYNC : QSTORE_WRITE_NONE, &error);
  return finish_write (provider, ok, error);
}

static int
kv_scan (QStoreTool  *tool,
         int          argc,
         char       **argv)
{
  g_auto(KVCommand) command = { NULL };
  g_autoptr(QStoreProvider) provider = NULL;
  g_autoptr(QStoreKV) store = NULL;
  g_autoptr(QStoreBounds) bounds = qstore_bounds_new ();
  g_autoptr(QStoreIter) iter = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *gte = NULL;
  g_autofree char *gt = NULL;
  g_autofree char *lte = NULL;
  g_autofree char *lt = NULL;
  g_autofree char *limit = NULL;
  gboolean reverse = FALSE;
  gboolean json = FALSE;
  int status;
  const GOptionEntry entries[] = {
    { "gte", 0, 0, G_OPTION_ARG_FILENAME, &gte, "Start at KEY, included", "KEY" },
    { "gt", 0, 0, G_OPTION_ARG_FILENAME, &gt, "Start after KEY", "KEY" },
    { "lte", 0, 0, G_OPTION_ARG_FILENAME, &lte, "Stop at KEY, included", "KEY" },
    { "lt", 0, 0, G_OPTION_ARG_FILENAME, &lt, "Stop before KEY", "KEY" },
    { "reverse", 0, 0, G_OPTION_ARG_NONE, &reverse, "From the largest key down", NULL },
    { "limit", 0, 0, G_OPTION_ARG_STRING, &limit, "Print at most N entries", "N" },
    { "json", 0, 0, G_OPTION_ARG_NONE, &json, "Print each entry as a JSON array [key, value]", NULL },
    G_OPTION_ENTRY_NULL
  };
  struct {
    const char *text;
    void (*set) (QStoreBounds *, const guint8 *, gsize);
  } ends[] = {
    { NULL, qstore_bounds_set_gte },
    { NULL, qstore_bounds_set_gt },
    { NULL, qstore_bounds_set_lte },
    { NULL, qstore_bounds_set_lt },
  };

  status = kv_command_parse (&command, "STORE",
                             "Print the entries of STORE in key order, one “key<TAB>value” "
                             "per line.",
                             entries, argc, argv);
  if (status != QSTORE_TOOL_EXIT_OK)
    return status;

  if (gte != NULL && gt != NULL)
    return qstore_tool_usage_error (command.command, "Give --gte or --gt, not both");
  if (lte != NULL && lt != NULL)
    return qstore_tool_usage_error (command.command, "Give --lte or --lt, not both");

  ends[0].text = gte;
  ends[1].text = gt;
  ends[2].text = lte;
  ends[3].text = lt;
  for (guint i = 0; i < G_N_ELEMENTS (ends); i++)
    if (ends[i].text != NULL)
      {
        g_autoptr(GBytes) key = NULL;

        if ((status = kv_command_data (&command, ends[i].text, &key)))
          return status;
        ends[i].set (bounds, g_bytes_get_data (key, NULL), g_bytes_get_size (key));
      }
  qstore_bounds_set_reverse (bounds, reverse);
  if (limit != NULL)
    {
      gint64 n;

      /* The sign is the library's to judge: a negative limit is refused
       * there, with its own explanation. */
      if (!g_ascii_string_to_signed (limit, 10, G_MININT64, G_MAXINT64, &n, NULL))
        return qstore_tool_usage_error (command.command,
                                        "--limit takes a whole number, not “%s”", limit);
      qstore_bounds_set_limit (bounds, n);
    }

  status = open_store (tool, &command, QSTORE_OPEN_READ_ONLY, &provider, &store);
  if (status != QSTORE_TOOL_EXIT_OK)
    return status;

  iter = qstore_kv_iterate (store, bounds, &error);
  if (iter == NULL)
    return qstore_tool_fail (error);

  while (qstore_iter_next (iter, &error))
    {
      const guint8 *key, *value;
      gsize key_len, value_len;

      key = qstore_iter_peek_key (iter, &key_len);
      value = qstore_iter_peek_value (iter, &value_len);
      if (json)
        {
          g_autoptr(JsonBuilder) builder = json_builder_new ();
          g_autoptr(JsonNode) root = NULL;

          json_builder_begin_array (builder);
          qstore_tool_add_json_data (builder, key, key_len, command.hex);
          qstore_tool_add_json_data (builder, value, value_len, command.hex);
          json_builder_end_array (builder);
          root = json_builder_get_root (builder);
          qstore_tool_print_json (root);
        }
      else
        {
          g_autofree char *key_text = qstore_tool_format_data (key, key_len, command.hex);
          g_autofree char *value_text = qstore_tool_format_data (value, value_len, command.hex);

          fprintf (stdout, "%s\t%s\n", key_text, value_text);
        }
    }
  if (error != NULL)
    return qstore_tool_fail (error);
  return QSTORE_TOOL_EXIT_OK;
}

static int
kv_stores (QStoreTool  *tool,
           int          argc,
           char       **argv)
{
  g_autoptr(GOptionContext) context = NULL;
  g_autoptr(QStoreProvider) provider = NULL;
  g_autoptr(GError) error = NULL;
  g_auto(GStrv) names = NULL;
  g_auto(GStrv) rest = NULL;
  const char *command = argv[0];
  gboolean json = FALSE;
  int status;
  const GOptionEntry entries[] = {
    { "json", 0, 0, G_OPTION_ARG_NONE, &json, "Print each name as a JSON string", NULL },
    { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &rest, NULL, NULL },
    G_OPTION_ENTRY_NULL
  };

  context = qstore_tool_option_context_new (command, "",
                                            "List the stores of the location that hold entries.");
  g_option_context_add_main_entries (context, entries, NULL);
  if ((status = qstore_tool_parse_options (context, command, &argc, &argv)))
    return status;
  if (rest != NULL && rest[0] != NULL)
    return qstore_tool_usage_error (command, "Unexpected argument “%s”", rest[0]);

  if ((status = qstore_tool_open_provider (tool, command, QSTORE_OPEN_READ_ONLY, &provider)))
    return status;
  names = qstore_provider_list_stores (provider, &error);
  if (names == NULL)
    return qstore_tool_fail (error);

  for (guint i = 0; names[i] != NULL; i++)
    {
      if (json)
        {
          g_autoptr(JsonNode) node = json_node_init_string (json_node_alloc (), names[i]);

          qstore_tool_print_json (node);
        }
      else
        {
          g_autofree char *text = qstore_tool_format_text ((const guint8 *) names[i],
                                                           strlen (names[i]));

          fputs (text, stdout);
          fputc ('\n', stdout);
        }
    }
  return QSTORE_TOOL_EXIT_OK;
}

static const QStoreToolCommand kv_commands[] = {
  { "put",    "Store a value under a key", kv_put },
  { "get",    "Print the value stored under a key", kv_get },
  { "del",    "Remove a key", kv_del },
  { "scan",   "Print a range of entries in key order", kv_scan },
  { "stores", "List the stores that hold entries", kv_stores },
};

int
qstore_tool_kv (QStoreTool  *tool,
                int          argc,
                char       **argv)
{
  g_autoptr(GOptionContext) context = NULL;
  g_autofree char *description = NULL;
  const char *command = argv[0];
  int status;

  context = qstore_tool_option_context_new (command, "COMMAND [ARGUMENT…]",
                                            "Read and write the ordered key/value stores of "
                                            "the location --store names. STORE is a physical "
                                            "store name, such as main.t.");
  g_option_context_set_strict_posix (context, TRUE);
  description = qstore_tool_describe_commands (kv_commands, G_N_ELEMENTS (kv_commands));
  g_option_context_set_description (context, description);
  if ((status = qstore_tool_parse_options (context, command, &argc, &argv)))
    return status;

  return qstore_tool_dispatch (tool, command, kv_commands, G_N_ELEMENTS (kv_commands),
                               argc - 1, argv + 1);
}
