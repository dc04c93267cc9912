/* libxml2 held to the library's promises for the G+Smo reader: no entity
 * is expanded, libxml2's memory is bounded against the context's budget
 * before it parses, and what it reports lands in the context's message,
 * never on stderr.
 *
 * Entities: without XML_PARSE_NOENT libxml2 keeps references as nodes, but
 * xmlNodeGetContent and xmlGetProp expand them when the walk reads the
 * text, so one 50 kB entity referenced 20,000 times made a 111 kB file a
 * gigabyte. G+Smo's files have no document type declaration, so the reader
 * takes none: the SAX callback that sees "<!DOCTYPE" stops the parser before
 * the first declaration in it is read, and the file is refused naming it. A
 * reference to an entity that nothing declares is then not well-formed XML
 * (libxml2's "Entity 'x' not defined"); the five predefined entities and
 * character references need no declaration and are read.
 *
 * Memory: libxml2 2.9.14 (glibc, x86-64) was measured to hold at its peak
 * about twice the text (its copy of the input, grown by doubling, and the
 * text nodes), 133 bytes per empty element and 245 per attribute, so 4 MB
 * of "<a/>" became a 133 MB tree. The estimate counts the tags ('<') and
 * attributes ('=') of the text, rounded up: two nodes per tag (the element
 * and the text after it), a node and an attribute per '='. With that bound
 * in place XML_PARSE_HUGE lifts libxml2's fixed limits (10 MB of text in
 * one node or one run of blanks, "Huge input lookup"), which said nothing
 * about the memory there is; what remains is its ceiling of 1e9 bytes per
 * document, checked first.
 *
 * Errors: with XML_PARSE_NOERROR the parser's errors go to no callback, but
 * libxml2 2.9 sends the errors it raises without a parser context (a failed
 * allocation in xmlNodeGetContent) to its generic handler, which prints to
 * stderr. Before 2.13 there is no per-context handler for those, so the
 * reader installs a structured handler of the calling thread from the parse
 * to _xml_close and puts the previous one back: libxml2 (built with thread
 * support, as distributions build it) keeps these handlers per thread, so
 * this races with no other thread; the first error of each parse is kept
 * for the message. From 2.13 on the parser context has its own handler
 * (xmlCtxtSetErrorHandler) and the thread's is left alone. */
#include <libxml/parser.h>
#include <libxml/xmlversion.h>
#include <stdio.h>
#include <string.h>

#include "base/memory-limit.h"
#include "geometry-gismo.h"
#include "internal/error.h"

#if LIBXML_VERSION >= 21200
typedef const xmlError fea_xml_error;
#else
typedef xmlError fea_xml_error;
#endif

double fea_geometry_gismo_text_bytes(size_t size) { return 4.0 * (double)size + 1.0; }

static void on_error(void *data, fea_xml_error *e) {
  fea_gismo_xml *x = data;
  if (!e || e->level < XML_ERR_ERROR || x->code != 0) return;
  x->code = e->code != 0 ? e->code : -1;
  x->line = e->line;
  snprintf(x->message, sizeof x->message, "%s", e->message ? e->message : "(no message)");
  size_t l = strlen(x->message);
  while (l > 0 && (x->message[l - 1] == '\n' || x->message[l - 1] == ' ')) x->message[--l] = '\0';
}

/* What the parser found of a document type declaration (px->_private). */
typedef struct doctype {
  int seen;
  long line;
  char text[320];
} doctype;

/* SAX: "<!DOCTYPE name ExternalID" has been read, the internal subset (if
 * any) not yet: note it and stop. */
static void on_doctype(void *user, const xmlChar *name, const xmlChar *public_id,
                       const xmlChar *system_id) {
  xmlParserCtxtPtr px = user;
  doctype *d = px->_private;
  d->seen = 1;
  d->line = px->input ? px->input->line : 0;
  const xmlParserInputPtr in = px->input;
  const int has_subset = in && in->cur && in->cur < in->end && *in->cur == '[';
  const char *subset = has_subset ? " [...]" : "";
  const char *n = name ? (const char *)name : "";
  if (public_id)
    snprintf(d->text, sizeof d->text, "<!DOCTYPE %.60s PUBLIC \"%.80s\" \"%.100s\"%s>", n,
             (const char *)public_id, system_id ? (const char *)system_id : "", subset);
  else if (system_id)
    snprintf(d->text, sizeof d->text, "<!DOCTYPE %.60s SYSTEM \"%.100s\"%s>", n,
             (const char *)system_id, subset);
  else
    snprintf(d->text, sizeof d->text, "<!DOCTYPE %.60s%s>", n, subset);
  xmlStopParser(px);
}

/* Before 2.13: the calling thread's handler, from before the parser
 * context exists (its allocation may fail) until _xml_close. */
static void handler_install(fea_gismo_xml *x) {
#if LIBXML_VERSION < 21300
  x->saved_handler = xmlStructuredError;
  x->saved_data = xmlStructuredErrorContext;
  xmlSetStructuredErrorFunc(x, on_error);
#else
  (void)x;
#endif
}

/* From 2.13: the parser context's own. */
static void handler_install_ctxt(fea_gismo_xml *x, xmlParserCtxtPtr px) {
#if LIBXML_VERSION >= 21300
  xmlCtxtSetErrorHandler(px, on_error, x);
#else
  (void)x;
  (void)px;
#endif
}

static void handler_restore(fea_gismo_xml *x) {
#if LIBXML_VERSION < 21300
  xmlSetStructuredErrorFunc(x->saved_data, x->saved_handler);
#else
  (void)x;
#endif
}

static long long count_byte(const char *data, size_t size, char c) {
  long long n = 0;
  for (const char *p = data, *end = data + size; (p = memchr(p, c, (size_t)(end - p))); p++) n++;
  return n;
}

fea_status fea_geometry_gismo_xml_open(fea_context *ctx, const char *name, const char *data,
                                       size_t size, fea_gismo_xml *x) {
  memset(x, 0, sizeof *x);
  FEA_CHECK(size <= (size_t)FEA_GISMO_MAX_BYTES, ctx, FEA_ERR_UNSUPPORTED,
            "%s is %zu bytes; the reader takes files up to %ld bytes (libxml2's limit)", name, size,
            FEA_GISMO_MAX_BYTES);
  const long long tags = count_byte(data, size, '<'), attrs = count_byte(data, size, '=');
  const double need = fea_geometry_gismo_text_bytes(size) +
                      (double)tags * 2.0 * (double)(sizeof(xmlNode) + 32) +
                      (double)attrs * (double)(sizeof(xmlAttr) + sizeof(xmlNode) + 64);
  char what[1200];
  snprintf(what, sizeof what, "parsing %.1000s (%zu bytes, %lld tags, %lld attributes)", name, size,
           tags, attrs);
  FEA_CALL(fea_memory_require(ctx, 0, need, what));
  handler_install(x);
  xmlParserCtxtPtr px = xmlNewParserCtxt();
  if (!px) {
    handler_restore(x);
    return FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY, "%s: no memory for an XML parser", name);
  }
  handler_install_ctxt(x, px);
  doctype d = {0, 0, ""};
  px->_private = &d;
  px->sax->internalSubset = on_doctype;
  xmlDocPtr doc = xmlCtxtReadMemory(px, data, (int)size, name, NULL,
                                    XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING |
                                        XML_PARSE_HUGE);
  if (x->code == 0 && !doc && !d.seen) { /* an error no handler saw: libxml2's last */
    const xmlError *e = xmlCtxtGetLastError(px);
    if (e && e->code != 0) on_error(x, (fea_xml_error *)e);
  }
  xmlFreeParserCtxt(px); /* its copy of the input: the document is what the walk needs */
  if (d.seen || !doc) {
    if (doc) xmlFreeDoc(doc);
    handler_restore(x);
  }
  FEA_CHECK(!d.seen, ctx, FEA_ERR_UNSUPPORTED,
            "%s: line %ld: %s: the reader takes no DTD (document type declaration): G+Smo files "
            "have none, and the entities one declares could expand the text beyond any memory",
            name, d.line, d.text);
  if (!doc) {
    const char *msg = x->code ? x->message : "unknown error";
    if (x->code == XML_ERR_NO_MEMORY)
      return FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY, "%s: libxml2 ran out of memory at line %ld: %s",
                       name, x->line, msg);
    if (strstr(msg, "Huge") || strstr(msg, "huge"))
      return FEA_ERROR(ctx, FEA_ERR_UNSUPPORTED,
                       "%s: %zu bytes: too large for libxml2 (\"%s\" at line %ld)", name, size, msg,
                       x->line);
    return FEA_ERROR(ctx, FEA_ERR_IO, "%s: not well-formed XML at line %ld: %s", name, x->line,
                     msg);
  }
  x->doc = doc;
  return FEA_SUCCESS;
}

void fea_geometry_gismo_xml_close(fea_gismo_xml *x) {
  if (!x->doc) return;
  xmlFreeDoc(x->doc);
  x->doc = NULL;
  handler_restore(x);
}
