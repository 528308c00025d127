/* qstore-record-reader.c: the records of a CSV or JSON lines stream
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include <json-glib/json-glib.h>

#include "qstore-error.h"
#include "qstore-i18n-private.h"
#include "qstore-record-reader-private.h"

/* The input is read into one buffer, a record at a time: memory follows
 * the longest record, never the input. A record that does not fit in
 * what is buffered is parsed again from its start once more is read, so
 * parsing never has to stop half-way through a field. */

#define CHUNK (256 * 1024)

typedef enum
{
  PARSED,
  NEED_MORE,
  AT_END,
  FAILED,
} Parse;

struct _QStoreRecordReader
{
  GInputStream       *input;
  QStoreImportFormat  format;

  guint8             *buf;
  gsize               size;
  gsize               len;
  gsize               pos;          /* where the next record starts */
  guint64             consumed;     /* input bytes before buf[0] */
  guint64             bytes_read;
  guint64             line;         /* the line at pos, from 1 */
  gboolean            eof;
  gboolean            at_start;     /* a byte-order mark may come */

  GByteArray         *scratch;      /* the values of the record */
  GArray             *fields;       /* QStoreImportField */
  gboolean            named;
  guint64             record_line;
  JsonParser         *parser;

  guint64             error_line;
  guint               error_column;
};

QStoreRecordReader *
qstore_record_reader_new (GInputStream       *input,
                          QStoreImportFormat  format)
{
  QStoreRecordReader *self = g_new0 (QStoreRecordReader, 1);

  self->input = g_object_ref (input);
  self->format = format;
  self->size = CHUNK;
  self->buf = g_malloc (self->size);
  self->line = 1;
  self->at_start = TRUE;
  self->scratch = g_byte_array_new ();
  self->fields = g_array_new (FALSE, TRUE, sizeof (QStoreImportField));
  if (format == QSTORE_IMPORT_FORMAT_JSONL)
    self->parser = json_parser_new_immutable ();
  return self;
}

void
qstore_record_reader_free (QStoreRecordReader *self)
{
  g_object_unref (self->input);
  g_free (self->buf);
  g_byte_array_unref (self->scratch);
  g_array_unref (self->fields);
  g_clear_object (&self->parser);
  g_free (self);
}

/* Reads more input after what is buffered; what is before pos goes. */
static gboolean
refill (QStoreRecordReader  *self,
        GCancellable        *cancellable,
        GError             **error)
{
  g_autoptr(GError) local_error = NULL;
  gssize n;

  if (self->pos > 0)
    {
      memmove (self->buf, self->buf + self->pos, self->len - self->pos);
      self->consumed += self->pos;
      self->len -= self->pos;
      self->pos = 0;
    }
  if (self->size - self->len < CHUNK / 2)
    {
      self->size *= 2;
      self->buf = g_realloc (self->buf, self->size);
    }

  n = g_input_stream_read (self->input, self->buf + self->len, self->size - self->len,
                           cancellable, &local_error);
  if (n < 0)
    {
      if (g_error_matches (local_error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        g_propagate_error (error, g_steal_pointer (&local_error));
      else
        g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_IO, _("Cannot read the input: %s"),
                     local_error->message);
      return FALSE;
    }
  if (n == 0)
    self->eof = TRUE;
  self->len += n;
  self->bytes_read += n;

  if (self->at_start && (self->len >= 3 || self->eof))
    {
      if (self->len >= 3 && memcmp (self->buf, "\xef\xbb\xbf", 3) == 0)
        self->pos = 3;
      self->at_start = FALSE;
    }
  return TRUE;
}

/* The skipped bytes are read rather than sought past: that works on a
 * pipe as on a file, and finds an input shorter than the run read. */
gboolean
qstore_record_reader_skip (QStoreRecordReader  *self,
                           guint64              bytes,
                           guint64              line,
                           GCancellable        *cancellable,
                           GError             **error)
{
  self->at_start = FALSE;
  while (self->consumed + self->len < bytes && !self->eof)
    {
      self->pos = self->len;
      if (!refill (self, cancellable, error))
        return FALSE;
    }
  if (self->consumed + self->len < bytes)
    {
      g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                   "The input ends after %" G_GUINT64_FORMAT " bytes, before byte %"
                   G_GUINT64_FORMAT " where the run stopped: give the input it was "
                   "reading", self->consumed + self->len, bytes);
      return FALSE;
    }
  self->pos = bytes - self->consumed;
  self->line = line;
  return TRUE;
}

static Parse
fail (QStoreRecordReader  *self,
      guint64              line,
      guint                column,
      GError             **error,
      const char          *format,
      ...) G_GNUC_PRINTF (5, 6);

static Parse
fail (QStoreRecordReader  *self,
      guint64              line,
      guint                column,
      GError             **error,
      const char          *format,
      ...)
{
  g_autofree char *message = NULL;
  va_list args;

  va_start (args, format);
  message = g_strdup_vprintf (format, args);
  va_end (args);

  self->error_line = line;
  self->error_column = column;
  if (column > 0)
    g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                 "line %" G_GUINT64_FORMAT ", column %u: %s", line, column, message);
  else
    g_set_error (error, QSTORE_ERROR, QSTORE_ERROR_INVALID_ARGUMENT,
                 "line %" G_GUINT64_FORMAT ": %s", line, message);
  return FAILED;
}

static guint
count_newlines (const guint8 *p,
                gsize         len)
{
  const guint8 *end = p + len;
  guint n = 0;

  while ((p = memchr (p, '\n', end - p)) != NULL)
    {
      n++;
      p++;
    }
  return n;
}

static void
add_text (QStoreRecordReader *self,
          QStoreFieldKind     kind,
          gsize               offset)
{
  QStoreImportField field = { kind };

  field.offset = offset;
  field.len = self->scratch->len - offset;
  g_array_append_val (self->fields, field);
}

/* The character position (from 1) of byte @offset of @text. */
static guint
char_column (const char *text,
             gsize       offset)
{
  return (guint) g_utf8_strlen (text, offset) + 1;
}

/* Blank lines between records are no records. */
static Parse
skip_blank_lines (QStoreRecordReader *self,
                  gsize              *p)
{
  for (;;)
    {
      if (*p == self->len)
        return self->eof ? AT_END : NEED_MORE;
      if (self->buf[*p] == '\n')
        {
          (*p)++;
          self->line++;
          self->pos = *p;
        }
      else if (self->buf[*p] == '\r')
        {
          if (*p + 1 == self->len)
            return self->eof ? AT_END : NEED_MORE;
          if (self->buf[*p + 1] != '\n')
            return PARSED;
          *p += 2;
          self->line++;
          self->pos = *p;
        }
      else
        return PARSED;
    }
}

/* One CSV record (RFC 4180): fields separated by commas, records by CRLF
 * or LF; a field in double quotes may hold commas, line breaks and
 * doubled quotes. An empty unquoted field is NULL, "" is the empty
 * text. */
static Parse
parse_csv (QStoreRecordReader  *self,
           GError             **error)
{
  gsize p = self->pos;
  guint64 line;
  guint column = 0;
  Parse blank;

  if ((blank = skip_blank_lines (self, &p)) != PARSED)
    return blank;
  line = self->record_line = self->line;

  for (;;)
    {
      gsize offset = self->scratch->len;
      guint64 field_line = line;

      column++;
      if (p < self->len && self->buf[p] == '"')
        {
          p++;
          for (;;)
            {
              const guint8 *quote = memchr (self->buf + p, '"', self->len - p);
              gsize end = quote != NULL ? (gsize) (quote - self->buf) : self->len;

              g_byte_array_append (self->scratch, self->buf + p, end - p);
              line += count_newlines (self->buf + p, end - p);
              p = end;
              if (quote == NULL)
                {
                  if (!self->eof)
                    return NEED_MORE;
                  return fail (self, field_line, column, error,
                               "a quoted field is not closed: the input ends inside it");
                }
              if (p + 1 == self->len && !self->eof)
                return NEED_MORE;
              if (p + 1 < self->len && self->buf[p + 1] == '"')
                {
                  g_byte_array_append (self->scratch, (const guint8 *) "\"", 1);
                  p += 2;
                  continue;
                }
              p++;
              break;
            }
          add_text (self, QSTORE_FIELD_TEXT, offset);
          if (p == self->len && !self->eof)
            return NEED_MORE;
          if (p < self->len && self->buf[p] != ',' && self->buf[p] != '\n' &&
              !(self->buf[p] == '\r' && (p + 1 == self->len || self->buf[p + 1] == '\n')))
            return fail (self, line, column, error,
                         "text after the closing quote of a quoted field: a quote inside "
                         "a quoted field is written twice (\"\")");
          if (p < self->len && self->buf[p] == '\r' && p + 1 == self->len && !self->eof)
            return NEED_MORE;
        }
      else
        {
          gsize start = p;

          while (p < self->len)
            {
              guint8 c = self->buf[p];

              if (c == ',' || c == '\n')
                break;
              if (c == '\r')
                {
                  if (p + 1 == self->len && !self->eof)
                    return NEED_MORE;
                  if (p + 1 == self->len || self->buf[p + 1] == '\n')
                    break;
                }
              else if (c == '"')
                return fail (self, line, column, error,
                             "a quote inside a field that does not start with one: quote "
                             "the whole field and write the quote twice (\"\")");
              p++;
            }
          if (p == self->len && !self->eof)
            return NEED_MORE;
          g_byte_array_append (self->scratch, self->buf + start, p - start);
          add_text (self, p > start ? QSTORE_FIELD_TEXT : QSTORE_FIELD_NULL, offset);
        }

      /* After a field: a comma, a line end or the end of the input. */
      if (p < self->len && self->buf[p] == ',')
        {
          p++;
          continue;
        }
      if (p < self->len && self->buf[p] == '\r')
        p++;
      if (p < self->len && self->buf[p] == '\n')
        {
          p++;
          line++;
        }
      break;
    }

  /* Values are text: it must be UTF-8, as SQLite's text is. */
  for (guint i = 0; i < self->fields->len; i++)
    {
      QStoreImportField *field = &g_array_index (self->fields, QStoreImportField, i);
      const char *data = (const char *) self->scratch->data + field->offset;
      const char *bad = NULL;

      if (field->kind == QSTORE_FIELD_TEXT && !g_utf8_validate_len (data, field->len, &bad))
        {
          guint64 bad_line = self->record_line;

          for (guint k = 0; k < i; k++)
            {
              QStoreImportField *before = &g_array_index (self->fields, QStoreImportField, k);

              bad_line += count_newlines (self->scratch->data + before->offset, before->len);
            }
          bad_line += count_newlines ((const guint8 *) data, bad - data);
          return fail (self, bad_line, i + 1, error,
                       "not valid UTF-8 (byte 0x%02x at offset %" G_GSIZE_FORMAT " of the "
                       "field): convert the file to UTF-8", (guint8) *bad, (gsize) (bad - data));
        }
    }

  self->pos = p;
  self->line = line;
  return PARSED;
}

/* base64 as RFC 4648 writes it, padding included: g_base64_decode()
 * skips what it does not know, which would hide a damaged value. */
static gboolean
valid_base64 (const char *text,
              gsize       len)
{
  gsize padding = 0;

  if (len % 4 != 0)
    return FALSE;
  for (gsize i = 0; i < len; i++)
    {
      char c = text[i];

      if (c == '=')
        {
          if (i < len - 2)
            return FALSE;
          padding++;
        }
      else if (padding > 0 || !(g_ascii_isalnum (c) || c == '+' || c == '/'))
        return FALSE;
    }
  return TRUE;
}

static Parse
add_json_value (QStoreRecordReader  *self,
                JsonNode            *node,
                const char          *name,
                guint                column,
                GError             **error)
{
  QStoreImportField field = { QSTORE_FIELD_NULL };

  field.name = name;
  if (JSON_NODE_HOLDS_NULL (node))
    ;
  else if (JSON_NODE_HOLDS_VALUE (node))
    {
      GType type = json_node_get_value_type (node);

      if (type == G_TYPE_STRING)
        {
          const char *text = json_node_get_string (node);

          field.kind = QSTORE_FIELD_TEXT;
          field.offset = self->scratch->len;
          field.len = strlen (text);
          g_byte_array_append (self->scratch, (const guint8 *) text, field.len);
        }
      else if (type == G_TYPE_INT64)
        {
          field.kind = QSTORE_FIELD_INTEGER;
          field.integer = json_node_get_int (node);
        }
      else if (type == G_TYPE_DOUBLE)
        {
          field.kind = QSTORE_FIELD_REAL;
          field.real = json_node_get_double (node);
        }
      else if (type == G_TYPE_BOOLEAN)
        {
          field.kind = QSTORE_FIELD_INTEGER;
          field.integer = json_node_get_boolean (node) ? 1 : 0;
        }
    }
  else if (JSON_NODE_HOLDS_OBJECT (node) &&
           json_object_get_size (json_node_get_object (node)) == 1 &&
           json_object_has_member (json_node_get_object (node), "$blob"))
    {
      JsonNode *blob = json_object_get_member (json_node_get_object (node), "$blob");
      const char *text = JSON_NODE_HOLDS_VALUE (blob) &&
                         json_node_get_value_type (blob) == G_TYPE_STRING
                         ? json_node_get_string (blob) : NULL;
      g_autofree guint8 *bytes = NULL;
      gsize n = 0;

      if (text == NULL || !valid_base64 (text, strlen (text)))
        return fail (self, self->record_line, column, error,
                     "value%s%s%s: {\"$blob\": …} holds base64 text, as RFC 4648 writes it",
                     name ? " “" : "", name ? name : "", name ? "”" : "");
      bytes = g_base64_decode (text, &n);
      field.kind = QSTORE_FIELD_BLOB;
      field.offset = self->scratch->len;
      field.len = n;
      g_byte_array_append (self->scratch, bytes, n);
    }
  else
    return fail (self, self->record_line, column, error,
                 "value%s%s%s: a JSON %s is no SQL value: give text, a number, true, false, "
                 "null, or {\"$blob\": \"<base64>\"} for bytes",
                 name ? " “" : "", name ? name : "", name ? "”" : "",
                 JSON_NODE_HOLDS_OBJECT (node) ? "object" : "array");
  g_array_append_val (self->fields, field);
  return PARSED;
}

/* json-glib's message starts with `<data>:LINE:COLUMN: `. */
static guint
json_error_column (const char  *message,
                   const char **rest)
{
  const char *p = strchr (message, ':');
  guint64 column = 0;
  char *end = NULL;

  *rest = message;
  if (p == NULL || !(p = strchr (p + 1, ':')))
    return 0;
  column = g_ascii_strtoull (p + 1, &end, 10);
  if (end == p + 1 || *end != ':')
    return 0;
  *rest = end + 1;
  while (**rest == ' ')
    (*rest)++;
  return (guint) column;
}

/* One line: a JSON object (values by column name) or array (values in
 * order). */
static Parse
parse_jsonl (QStoreRecordReader  *self,
             GError             **error)
{
  g_autoptr(GError) local_error = NULL;
  const guint8 *newline;
  const char *text;
  const char *bad = NULL;
  gsize end, text_len, p = self->pos;
  Parse blank;
  JsonNode *root;

  for (;;)
    {
      if ((blank = skip_blank_lines (self, &p)) != PARSED)
        return blank;
      newline = memchr (self->buf + p, '\n', self->len - p);
      if (newline == NULL && !self->eof)
        return NEED_MORE;
      end = newline != NULL ? (gsize) (newline - self->buf) : self->len;
      text = (const char *) self->buf + p;
      text_len = end - p;
      if (text_len > 0 && text[text_len - 1] == '\r')
        text_len--;
      /* A line of blanks only is no record either. */
      for (gsize i = 0; i < text_len; i++)
        if (text[i] != ' ' && text[i] != '\t' && text[i] != '\r')
          goto found;

      p = end + (newline != NULL);
      self->line++;
      self->pos = p;
    }

found:
  self->record_line = self->line;

  if (!g_utf8_validate_len (text, text_len, &bad))
    return fail (self, self->line, char_column (text, bad - text), error,
                 "not valid UTF-8 (byte 0x%02x): convert the file to UTF-8", (guint8) *bad);

  if (!json_parser_load_from_data (self->parser, text, text_len, &local_error))
    {
      const char *rest;
      guint column = json_error_column (local_error->message, &rest);

      return fail (self, self->line, column, error, "not JSON: %s", rest);
    }

  root = json_parser_get_root (self->parser);
  if (root != NULL && JSON_NODE_HOLDS_OBJECT (root))
    {
      JsonObject *object = json_node_get_object (root);
      g_autoptr(GList) members = json_object_get_members (object);
      guint column = 0;

      self->named = TRUE;
      for (GList *l = members; l != NULL; l = l->next)
        if (add_json_value (self, json_object_get_member (object, l->data), l->data,
                            ++column, error) != PARSED)
          return FAILED;
    }
  else if (root != NULL && JSON_NODE_HOLDS_ARRAY (root))
    {
      JsonArray *array = json_node_get_array (root);

      for (guint i = 0; i < json_array_get_length (array); i++)
        if (add_json_value (self, json_array_get_element (array, i), NULL, i + 1,
                            error) != PARSED)
          return FAILED;
    }
  else
    return fail (self, self->line, 0, error,
                 "a row is a JSON object ({\"column\": value, …}) or array ([value, …]) "
                 "on one line");

  self->pos = end + (newline != NULL);
  self->line++;
  return PARSED;
}

gboolean
qstore_record_reader_next (QStoreRecordReader  *self,
                           GCancellable        *cancellable,
                           GError             **error)
{
  self->error_line = 0;
  self->error_column = 0;

  for (;;)
    {
      Parse parsed;

      g_byte_array_set_size (self->scratch, 0);
      g_array_set_size (self->fields, 0);
      self->named = FALSE;

      if (self->at_start)
        parsed = NEED_MORE;
      else if (self->format == QSTORE_IMPORT_FORMAT_CSV)
        parsed = parse_csv (self, error);
      else
        parsed = parse_jsonl (self, error);

      switch (parsed)
        {
        case PARSED:
          for (guint i = 0; i < self->fields->len; i++)
            {
              QStoreImportField *field = &g_array_index (self->fields, QStoreImportField, i);

              field->data = (const char *) self->scratch->data + field->offset;
            }
          return TRUE;

        case AT_END:
          return FALSE;

        case FAILED:
          return FALSE;

        case NEED_MORE:
        default:
          if (self->eof && !self->at_start)
            return FALSE;
          if (!refill (self, cancellable, error))
            {
              self->error_line = self->line;
              return FALSE;
            }
          break;
        }
    }
}

const QStoreImportField *
qstore_record_reader_get_fields (QStoreRecordReader *self,
                                 guint              *n_fields)
{
  *n_fields = self->fields->len;
  return (const QStoreImportField *) self->fields->data;
}

gboolean
qstore_record_reader_is_named (QStoreRecordReader *self)
{
  return self->named;
}

guint64
qstore_record_reader_get_line (QStoreRecordReader *self)
{
  return self->record_line;
}

guint64
qstore_record_reader_get_next_line (QStoreRecordReader *self)
{
  return self->line;
}

guint64
qstore_record_reader_get_position (QStoreRecordReader *self)
{
  return self->consumed + self->pos;
}

guint64
qstore_record_reader_get_bytes_read (QStoreRecordReader *self)
{
  return self->bytes_read;
}

guint64
qstore_record_reader_get_error_line (QStoreRecordReader *self)
{
  return self->error_line;
}

guint
qstore_record_reader_get_error_column (QStoreRecordReader *self)
{
  return self->error_column;
}
