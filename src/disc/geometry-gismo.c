/* G+Smo's XML geometry files (the format IGA users already have): every
 * Geometry element of type TensorBSpline2/3 or TensorNurbs2/3 becomes one
 * patch. libxml2 parses the text (no network, no entity expansion, its own
 * size limits); this file walks the tree:
 *
 *   <Geometry type="TensorNurbs2" id="0">
 *     <Basis type="TensorNurbsBasis2">            (NURBS only: the weights' basis)
 *       <Basis type="TensorBSplineBasis2">
 *         <Basis type="BSplineBasis" index="0"> <KnotVector degree="1">0 0 1 1</KnotVector>
 *         <Basis type="BSplineBasis" index="1"> <KnotVector degree="2">0 0 0 1 1 1</...>
 *       </Basis>
 *       <weights>1 1 0.7071 0.7071 1 1</weights>  (NURBS only)
 *     </Basis>
 *     <coefs geoDim="2">1 0  2 0  1 1  2 2  0 1  0 2</coefs>
 *   </Geometry>
 *
 * Control points run direction 0 fastest, as fea_geometry_desc wants them.
 * Every number is parsed with strtod and must be a whole token; counts are
 * checked against the knot vectors, and each patch then goes through the
 * geometry map's own checks, so a file can describe nothing that
 * fea_space_create_bspline() would refuse later. Messages name the file,
 * the patch (its id and line) and the item. */
#include <errno.h>
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "context.h"
#include "error.h"
#include "geometry-map.h"
#include "memory-limit.h"

/* Where a patch is, for messages. */
typedef struct where {
  const char *file;
  int id;
  long line;
} where;

#define PATCH_ERROR(ctx, w, code, ...) patch_error(ctx, w, code, __VA_ARGS__)

static fea_status patch_error(const fea_context *ctx, const where *w, fea_status code,
                              const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static fea_status patch_error(const fea_context *ctx, const where *w, fea_status code,
                              const char *fmt, ...) {
  char why[FEA_ERROR_LEN];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(why, sizeof why, fmt, ap);
  va_end(ap);
  return FEA_ERROR(ctx, code, "%s: patch id %d (line %ld): %s", w->file, w->id, w->line, why);
}

static int is_element(const xmlNode *n, const char *name) {
  return n->type == XML_ELEMENT_NODE && xmlStrcmp(n->name, (const xmlChar *)name) == 0;
}

/* The attribute's value, or NULL; the caller frees it with xmlFree. */
static char *attr(const xmlNode *n, const char *name) {
  return (char *)xmlGetProp(n, (const xmlChar *)name);
}

/* A whole-token integer attribute in [lo, hi]. */
static fea_status int_attr(const fea_context *ctx, const where *w, const xmlNode *n,
                           const char *name, long lo, long hi, long *out) {
  char *v = attr(n, name);
  if (!v)
    return PATCH_ERROR(ctx, w, FEA_ERR_INVALID_ARG, "<%s> (line %ld) has no %s attribute",
                       (const char *)n->name, (long)xmlGetLineNo(n), name);
  char *end = NULL;
  errno = 0;
  long x = strtol(v, &end, 10);
  int ok = end != v && *end == '\0' && errno == 0 && x >= lo && x <= hi;
  fea_status st = ok ? FEA_SUCCESS
                     : PATCH_ERROR(ctx, w, FEA_ERR_INVALID_ARG,
                                   "<%s> (line %ld) has %s=\"%.40s\"; it must be an integer in "
                                   "%ld..%ld",
                                   (const char *)n->name, (long)xmlGetLineNo(n), name, v, lo, hi);
  xmlFree(v);
  *out = x;
  return st;
}

/* The numbers of an element's text: counted first (so the array is sized
 * and checked against the budget before it is allocated), then parsed. */
static fea_status numbers(const fea_context *ctx, const where *w, const xmlNode *n, double **out,
                          fea_index *count) {
  *out = NULL;
  *count = 0;
  xmlChar *text = xmlNodeGetContent(n);
  const char *s = text ? (const char *)text : "";
  fea_index c = 0;
  for (const char *p = s; *p;) {
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') p++;
    if (!*p) break;
    c++;
    while (*p && *p != ' ' && *p != '\t' && *p != '\n' && *p != '\r') p++;
  }
  fea_status st = fea_memory_require(ctx, 0, fea_bytes((double)c, sizeof(double)),
                                     "the numbers of a geometry file element");
  double *v = st == FEA_SUCCESS ? malloc((size_t)(c ? c : 1) * sizeof *v) : NULL;
  if (st == FEA_SUCCESS && !v)
    st = FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %lld numbers", (long long)c);
  fea_index i = 0;
  for (const char *p = s; st == FEA_SUCCESS && *p;) {
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') p++;
    if (!*p) break;
    const char *tok = p;
    while (*p && *p != ' ' && *p != '\t' && *p != '\n' && *p != '\r') p++;
    char buf[64], *end = NULL;
    size_t len = (size_t)(p - tok);
    if (len < sizeof buf) {
      memcpy(buf, tok, len);
      buf[len] = '\0';
      v[i] = strtod(buf, &end);
    }
    if (len >= sizeof buf || end != buf + len)
      st = PATCH_ERROR(ctx, w, FEA_ERR_INVALID_ARG,
                       "<%s> (line %ld): number %lld is \"%.*s\", not a number",
                       (const char *)n->name, (long)xmlGetLineNo(n), (long long)i,
                       (int)(len < 40 ? len : 40), tok);
    i++;
  }
  if (text) xmlFree(text);
  if (st != FEA_SUCCESS) {
    free(v);
    return st;
  }
  *out = v;
  *count = c;
  return FEA_SUCCESS;
}

/* The direction-k knot vector under a TensorBSplineBasis element. */
static fea_status knot_vectors(const fea_context *ctx, const where *w, const xmlNode *tensor,
                               int dim, fea_geometry_patch *pt) {
  int seen[3] = {0, 0, 0};
  for (const xmlNode *b = tensor->children; b; b = b->next) {
    if (!is_element(b, "Basis")) continue;
    long k = 0, degree = 0;
    FEA_CALL(int_attr(ctx, w, b, "index", 0, dim - 1, &k));
    if (seen[k])
      return PATCH_ERROR(ctx, w, FEA_ERR_INVALID_ARG,
                         "a second knot vector for direction %ld (line %ld)", k,
                         (long)xmlGetLineNo(b));
    const xmlNode *kv = b->children;
    while (kv && !is_element(kv, "KnotVector")) kv = kv->next;
    if (!kv)
      return PATCH_ERROR(ctx, w, FEA_ERR_INVALID_ARG,
                         "the basis of direction %ld (line %ld) has no <KnotVector>", k,
                         (long)xmlGetLineNo(b));
    FEA_CALL(int_attr(ctx, w, kv, "degree", 1, FEA_BSPLINE_MAX_DEGREE, &degree));
    fea_index m = 0;
    FEA_CALL(numbers(ctx, w, kv, &pt->knots[k], &m));
    pt->desc.degree[k] = (int)degree;
    pt->desc.knots[k] = pt->knots[k];
    pt->desc.num_knots[k] = m;
    seen[k] = 1;
  }
  for (int k = 0; k < dim; k++)
    if (!seen[k])
      return PATCH_ERROR(ctx, w, FEA_ERR_INVALID_ARG, "no knot vector for direction %d", k);
  return FEA_SUCCESS;
}

static const xmlNode *child(const xmlNode *n, const char *name) {
  for (const xmlNode *c = n->children; c; c = c->next)
    if (is_element(c, name)) return c;
  return NULL;
}

/* One Geometry element into pt. */
static fea_status patch(const fea_context *ctx, const char *file, const xmlNode *g,
                        fea_geometry_patch *pt) {
  where w = {file, -1, (long)xmlGetLineNo(g)};
  char *id = attr(g, "id");
  if (id) {
    char *end = NULL;
    long v = strtol(id, &end, 10);
    w.id = end != id && *end == '\0' && v >= 0 && v <= 1000000000 ? (int)v : -1;
    xmlFree(id);
  }
  pt->id = w.id;
  fea_geometry_desc init = FEA_GEOMETRY_DESC_INIT;
  pt->desc = init;
  char *type = attr(g, "type");
  if (!type) return PATCH_ERROR(ctx, &w, FEA_ERR_INVALID_ARG, "<Geometry> has no type");
  int dim = 0, nurbs = 0;
  if (!strcmp(type, "TensorBSpline2")) dim = 2;
  if (!strcmp(type, "TensorBSpline3")) dim = 3;
  if (!strcmp(type, "TensorNurbs2")) dim = 2, nurbs = 1;
  if (!strcmp(type, "TensorNurbs3")) dim = 3, nurbs = 1;
  fea_status st = dim ? FEA_SUCCESS
                      : PATCH_ERROR(ctx, &w, FEA_ERR_UNSUPPORTED,
                                    "type \"%.40s\" is not TensorBSpline2/3 or TensorNurbs2/3",
                                    type);
  xmlFree(type);
  if (st != FEA_SUCCESS) return st;
  pt->dim = dim;
  /* NURBS: Basis(TensorNurbsBasis) holds Basis(TensorBSplineBasis) and the weights. */
  const xmlNode *outer = child(g, "Basis"), *tensor = outer;
  if (outer && nurbs) tensor = child(outer, "Basis");
  if (!tensor)
    return PATCH_ERROR(ctx, &w, FEA_ERR_INVALID_ARG, "no %s<Basis> element", nurbs ? "inner " : "");
  FEA_CALL(knot_vectors(ctx, &w, tensor, dim, pt));
  fea_index nfun = 1;
  for (int k = 0; k < dim; k++) {
    const fea_index nk = pt->desc.num_knots[k] - pt->desc.degree[k] - 1;
    if (nk < 1)
      return PATCH_ERROR(ctx, &w, FEA_ERR_INVALID_ARG,
                         "the knot vector of direction %d has %lld knots; degree %d needs at "
                         "least %d",
                         k, (long long)pt->desc.num_knots[k], pt->desc.degree[k],
                         2 * (pt->desc.degree[k] + 1));
    nfun *= nk;
  }
  const xmlNode *coefs = child(g, "coefs");
  if (!coefs) return PATCH_ERROR(ctx, &w, FEA_ERR_INVALID_ARG, "no <coefs> element");
  long gdim = dim;
  char *gd = attr(coefs, "geoDim");
  if (gd) {
    xmlFree(gd);
    FEA_CALL(int_attr(ctx, &w, coefs, "geoDim", 1, 3, &gdim));
  }
  if (gdim != dim)
    return PATCH_ERROR(ctx, &w, FEA_ERR_UNSUPPORTED,
                       "geoDim is %ld but the patch is %dD: only patches in their own dimension "
                       "(no surfaces in 3D) are supported",
                       gdim, dim);
  fea_index nc = 0;
  FEA_CALL(numbers(ctx, &w, coefs, &pt->points, &nc));
  if (nc != nfun * dim)
    return PATCH_ERROR(ctx, &w, FEA_ERR_INVALID_ARG,
                       "<coefs> (line %ld) has %lld numbers; the knot vectors give %lld points "
                       "of %d coordinates",
                       (long)xmlGetLineNo(coefs), (long long)nc, (long long)nfun, dim);
  pt->desc.control_points = pt->points;
  pt->desc.num_control_points = nfun;
  if (nurbs) {
    const xmlNode *wts = child(outer, "weights");
    if (!wts) return PATCH_ERROR(ctx, &w, FEA_ERR_INVALID_ARG, "a NURBS patch without <weights>");
    fea_index nw = 0;
    FEA_CALL(numbers(ctx, &w, wts, &pt->weights, &nw));
    if (nw != nfun)
      return PATCH_ERROR(ctx, &w, FEA_ERR_INVALID_ARG,
                         "<weights> (line %ld) has %lld numbers for %lld control points",
                         (long)xmlGetLineNo(wts), (long long)nw, (long long)nfun);
    pt->desc.weights = pt->weights;
  }
  /* The map's own checks (knots, finite points, positive weights). */
  fea_geometry_map *map = NULL;
  st = fea_geometry_map_create(ctx, dim, &pt->desc, &map);
  fea_geometry_map_free(map);
  if (st != FEA_SUCCESS) {
    char why[FEA_ERROR_LEN];
    snprintf(why, sizeof why, "%s", fea_thread_last_error_text());
    return PATCH_ERROR(ctx, &w, st, "%s", why);
  }
  return FEA_SUCCESS;
}

static void patch_free(fea_geometry_patch *pt) {
  for (int k = 0; k < 3; k++) free(pt->knots[k]);
  free(pt->points);
  free(pt->weights);
}

void fea_geometry_file_release(fea_geometry_file *file) {
  for (int i = 0; i < file->count; i++) patch_free(&file->patches[i]);
  free(file->patches);
  file->patches = NULL;
  file->count = 0;
}

fea_status fea_geometry_gismo_parse(fea_context *ctx, const char *name, const char *data,
                                    size_t size, fea_geometry_file *file) {
  FEA_CHECK(size <= (size_t)INT32_MAX, ctx, FEA_ERR_UNSUPPORTED,
            "%s: %zu bytes; geometry files up to 2 GiB are read", name, size);
  xmlParserCtxtPtr px = xmlNewParserCtxt();
  FEA_CHECK(px, ctx, FEA_ERR_OUT_OF_MEMORY, "%s: no memory for an XML parser", name);
  xmlDocPtr doc = xmlCtxtReadMemory(px, data, (int)size, name, NULL,
                                    XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
  fea_status st = FEA_SUCCESS;
  if (!doc) {
    xmlErrorPtr e = xmlCtxtGetLastError(px);
    char msg[160] = "unknown error";
    if (e && e->message) {
      snprintf(msg, sizeof msg, "%s", e->message);
      size_t l = strlen(msg);
      while (l > 0 && (msg[l - 1] == '\n' || msg[l - 1] == ' ')) msg[--l] = '\0';
    }
    st = FEA_ERROR(ctx, FEA_ERR_IO, "%s: not well-formed XML at line %d: %s", name, e ? e->line : 0,
                   msg);
  }
  const xmlNode *root = doc ? xmlDocGetRootElement(doc) : NULL;
  int count = 0;
  for (const xmlNode *n = root ? root->children : NULL; n; n = n->next)
    if (is_element(n, "Geometry")) count++;
  if (st == FEA_SUCCESS && count == 0)
    st = FEA_ERROR(ctx, FEA_ERR_INVALID_ARG, "%s: no <Geometry> element under the root <%s>", name,
                   root ? (const char *)root->name : "(none)");
  if (st == FEA_SUCCESS) {
    file->patches = calloc((size_t)count, sizeof *file->patches);
    if (!file->patches)
      st = FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY, "%s: no memory for %d patches", name, count);
  }
  for (const xmlNode *n = root ? root->children : NULL; n && st == FEA_SUCCESS; n = n->next) {
    if (!is_element(n, "Geometry")) continue;
    st = patch(ctx, name, n, &file->patches[file->count]);
    file->count++; /* counted even when it failed: its arrays are freed below */
  }
  if (st != FEA_SUCCESS && file->patches) fea_geometry_file_release(file);
  if (doc) xmlFreeDoc(doc);
  xmlFreeParserCtxt(px);
  return st;
}
