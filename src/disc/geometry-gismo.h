/* The parts of the G+Smo XML reader (geometry-gismo.c) that have a job of
 * their own: libxml2 held to the library's promises (geometry-gismo-xml.c:
 * no DTD, no entity expansion, its memory bounded before it parses, its
 * errors in the context's message and never on stderr) and the check of a
 * MultiPatch's topology against the patches' geometry
 * (geometry-gismo-check.c). */
#ifndef FEA_INTERNAL_GEOMETRY_GISMO_H
#define FEA_INTERNAL_GEOMETRY_GISMO_H

#include <libxml/tree.h>
#include <libxml/xmlerror.h>
#include <stddef.h>

#include "geometry-map.h"

/* The largest file read: libxml2's own ceiling on a document
 * (XML_MAX_HUGE_LENGTH), which it reports as "Huge input lookup". */
#define FEA_GISMO_MAX_BYTES 1000000000L

/* The memory that reading a file of size bytes and parsing it needs before
 * its tags are counted: the file's text, libxml2's copy of it (grown by
 * doubling) and the text of its tree, and the copy of one element's text. */
double fea_geometry_gismo_text_bytes(size_t size);

/* A parsed document and what libxml2 reported while the reader used it. */
typedef struct fea_gismo_xml {
  xmlDocPtr doc;
  /* The calling thread's libxml2 handler, put back by _xml_close. */
  xmlStructuredErrorFunc saved_handler;
  void *saved_data;
  /* The first error libxml2 raised (code 0: none). */
  int code;
  long line;
  char message[160];
} fea_gismo_xml;

/* Parse data (size bytes of the file `name`) into x->doc: refused, naming
 * the size and the limit, when the estimate of libxml2's memory does not fit
 * ctx's budget or the file passes FEA_GISMO_MAX_BYTES; a document type
 * declaration is refused where it starts, naming it, before anything in it
 * is read. libxml2 reports to x, never to stderr, until _xml_close. On
 * failure nothing is left to close. */
fea_status fea_geometry_gismo_xml_open(fea_context *ctx, const char *name, const char *data,
                                       size_t size, fea_gismo_xml *x);
/* Free the document and restore the thread's libxml2 error handler. */
void fea_geometry_gismo_xml_close(fea_gismo_xml *x);

/* FEA_SUCCESS when every interface of file's MultiPatch (line: its element's
 * line) joins two sides that coincide in the orientation it gives, and no
 * boundary side coincides with another side of a member patch; else
 * FEA_ERR_INVALID_ARG naming the interface or side, the patches, the sides
 * and the distance or the orientation the geometry gives. */
fea_status fea_geometry_gismo_check_topology(const fea_context *ctx, const char *name, long line,
                                             const fea_geometry_file *file);

#endif
