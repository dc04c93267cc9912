/* G+Smo's XML geometry files (the format IGA users already have): every
 * Geometry element of type TensorBSpline2/3 or TensorNurbs2/3 becomes one
 * patch, and the first MultiPatch element gives the topology. libxml2
 * parses the text (geometry-gismo-xml.c: no network, no DTD and so no
 * entity, its memory bounded first); this file walks the tree:
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
 *   <MultiPatch parDim="2" id="9">
 *     <patches type="id_range">0 3</patches>      (or type="id_index": a list of ids)
 *     <interfaces>0 2 1 1  0 1  1 1 ...</interfaces>
 *     <boundary name="inner">0 1 1 1 ...</boundary>
 *   </MultiPatch>
 *
 * Control points run direction 0 fastest, as fea_geometry_desc wants them.
 * Every number is parsed with strtod (integers with strtol) and must be a
 * whole token; counts are checked against the knot vectors, and each patch
 * then goes through the geometry map's own checks, so a file can describe
 * nothing that fea_space_create_bspline() would refuse later. Messages name
 * the file, the patch (its id and line) or the element (and line), and the
 * item.
 *
 * The MultiPatch is read as G+Smo's gsXml<gsMultiPatch> reads it: patches
 * and interfaces name Geometry ids (not positions), mapped here to positions
 * in the file's patch list; an interface is 4 + 2 parDim integers (patch,
 * side, patch, side, the direction map, the orientation flags) wherever the
 * line breaks fall, a boundary a (patch, side) pair; sides count from 1
 * (west, east, south, north, front, back). Every interfaces and boundary
 * child is read, as G+Smo's reader does. As G+Smo's boundaryInterface does,
 * the entries of the direction normal to the first side are set from the two
 * sides, whatever the file says there (G+Smo's own files write orientation
 * 1 for an east-west interface whose normal runs opposite ways). Where
 * G+Smo only warns or silently maps an unknown id to patch 0, this reader
 * refuses the file. The topology read is then checked against the patches'
 * geometry (geometry-gismo-check.c): interfaces must join sides that
 * coincide, in the orientation given, and boundary sides must be on no other
 * side. G+Smo's matrices may carry rows and cols attributes (rows x cols
 * numbers, as its reader takes them); where present they must be what the
 * knot vectors give. What the elements read carry beyond that (attributes,
 * children) is logged at FEA_LOG_WARN once the file is read (warn_unused). */
#include <errno.h>
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/context.h"
#include "base/memory-limit.h"
#include "geometry-gismo.h"
#include "internal/error.h"

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
  xmlChar *text = xmlNodeGetContent(n); /* "" when empty: NULL only when out of memory */
  if (!text)
    return PATCH_ERROR(ctx, w, FEA_ERR_OUT_OF_MEMORY, "<%s> (line %ld): no memory for its text",
                       (const char *)n->name, (long)xmlGetLineNo(n));
  const char *s = (const char *)text;
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
  xmlFree(text);
  if (st != FEA_SUCCESS) {
    free(v);
    return st;
  }
  *out = v;
  *count = c;
  return FEA_SUCCESS;
}

/* A matrix element's rows and cols attributes, where present, against the
 * shape the knot vectors give (rows x cols numbers, as G+Smo reads them). */
static fea_status shape(const fea_context *ctx, const where *w, const xmlNode *n, fea_index rows,
                        long cols, const char *cols_why) {
  static const char *const names[2] = {"rows", "cols"};
  for (int k = 0; k < 2; k++) {
    char *v = attr(n, names[k]);
    if (!v) continue;
    xmlFree(v);
    long got = 0;
    FEA_CALL(int_attr(ctx, w, n, names[k], 0, 1000000000L, &got));
    if (k == 0 && got != rows)
      return PATCH_ERROR(ctx, w, FEA_ERR_INVALID_ARG,
                         "<%s> (line %ld) has rows=\"%ld\" but the patch has %lld control points",
                         (const char *)n->name, (long)xmlGetLineNo(n), got, (long long)rows);
    if (k == 1 && got != cols)
      return PATCH_ERROR(ctx, w, FEA_ERR_INVALID_ARG, "<%s> (line %ld) has cols=\"%ld\" but %s",
                         (const char *)n->name, (long)xmlGetLineNo(n), got, cols_why);
  }
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
                       "of %d coordinates: %lld numbers expected",
                       (long)xmlGetLineNo(coefs), (long long)nc, (long long)nfun, dim,
                       (long long)(nfun * dim));
  char cols_why[48];
  snprintf(cols_why, sizeof cols_why, "geoDim %d (a column per coordinate)", dim);
  FEA_CALL(shape(ctx, &w, coefs, nfun, dim, cols_why));
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
    FEA_CALL(shape(ctx, &w, wts, nfun, 1, "weights are 1 column"));
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

/* ---------------------------------------------------------------- topology */

/* An error in a MultiPatch element n: the file, the element and its line. */
static fea_status mp_error(const fea_context *ctx, const char *file, const xmlNode *n,
                           const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static fea_status mp_error(const fea_context *ctx, const char *file, const xmlNode *n,
                           const char *fmt, ...) {
  char why[FEA_ERROR_LEN];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(why, sizeof why, fmt, ap);
  va_end(ap);
  return FEA_ERROR(ctx, FEA_ERR_INVALID_ARG, "%s: <%s> (line %ld): %s", file, (const char *)n->name,
                   (long)xmlGetLineNo(n), why);
}

static int is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

/* The integers of an element's text, each a whole token in
 * [-1e9, 1e9]: counted first and checked against the budget, then parsed. */
static fea_status integers(const fea_context *ctx, const char *file, const xmlNode *n, long **out,
                           fea_index *count) {
  *out = NULL;
  *count = 0;
  xmlChar *text = xmlNodeGetContent(n); /* "" when empty: NULL only when out of memory */
  if (!text)
    return FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY, "%s: <%s> (line %ld): no memory for its text",
                     file, (const char *)n->name, (long)xmlGetLineNo(n));
  const char *s = (const char *)text;
  fea_index c = 0;
  for (const char *p = s; *p;) {
    while (is_space(*p)) p++;
    if (!*p) break;
    c++;
    while (*p && !is_space(*p)) p++;
  }
  fea_status st = fea_memory_require(ctx, 0, fea_bytes((double)c, sizeof(long)),
                                     "the integers of a geometry file element");
  long *v = st == FEA_SUCCESS ? malloc((size_t)(c ? c : 1) * sizeof *v) : NULL;
  if (st == FEA_SUCCESS && !v)
    st = FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %lld integers", (long long)c);
  fea_index i = 0;
  for (const char *p = s; st == FEA_SUCCESS && *p;) {
    while (is_space(*p)) p++;
    if (!*p) break;
    const char *tok = p;
    while (*p && !is_space(*p)) p++;
    char buf[32], *end = NULL;
    const size_t len = (size_t)(p - tok);
    int ok = len < sizeof buf;
    if (ok) {
      memcpy(buf, tok, len);
      buf[len] = '\0';
      errno = 0;
      v[i] = strtol(buf, &end, 10);
      ok = end == buf + len && errno == 0 && v[i] >= -1000000000L && v[i] <= 1000000000L;
    }
    if (!ok)
      st = mp_error(ctx, file, n, "number %lld is \"%.*s\", not an integer", (long long)i,
                    (int)(len < 40 ? len : 40), tok);
    i++;
  }
  xmlFree(text);
  if (st != FEA_SUCCESS) {
    free(v);
    return st;
  }
  *out = v;
  *count = c;
  return FEA_SUCCESS;
}

/* What is being built; moved into the file object only when all is read. */
typedef struct topology {
  const fea_context *ctx;
  const char *file;
  const fea_geometry_file *f;
  int dim;
  int num_members;
  int *members;
  int *member_of; /* per patch position: 1 when the MultiPatch lists it */
  int *used;      /* per patch position and side: 0 free, i + 1 interface i, -(b + 1) boundary b */
  int num_interfaces;
  fea_geometry_interface *interfaces;
  int num_boundary;
  fea_geometry_boundary_side *boundary;
  int num_names;
  char **names;
} topology;

static void topology_free(topology *t) {
  free(t->members);
  free(t->member_of);
  free(t->used);
  free(t->interfaces);
  free(t->boundary);
  for (int i = 0; i < t->num_names; i++) xmlFree(t->names[i]);
  free(t->names);
}

/* The position of the Geometry with this id, or -1 (message) when none or
 * two have it. */
static int find_id(topology *t, const xmlNode *n, long id, fea_status *st) {
  int at = -1;
  if (id < 0) {
    *st = mp_error(t->ctx, t->file, n, "patch id %ld names no <Geometry>", id);
    return -1;
  }
  for (int i = 0; i < t->f->count; i++) {
    if (t->f->patches[i].id != id) continue;
    if (at >= 0) {
      *st = mp_error(t->ctx, t->file, n, "patch id %ld names two <Geometry> elements", id);
      return -1;
    }
    at = i;
  }
  if (at < 0) *st = mp_error(t->ctx, t->file, n, "patch id %ld names no <Geometry>", id);
  return at;
}

/* A listed patch id and a 1-based side into a position and a 0-based side. */
static fea_status patch_side(topology *t, const xmlNode *n, const char *what, long id, long side,
                             int *pos, int *s) {
  fea_status st = FEA_SUCCESS;
  *pos = find_id(t, n, id, &st);
  if (*pos < 0) return st;
  if (!t->member_of[*pos])
    return mp_error(t->ctx, t->file, n, "%s: patch id %ld is not in the MultiPatch's <patches>",
                    what, id);
  if (side < 1 || side > 2 * t->dim)
    return mp_error(t->ctx, t->file, n, "%s: side %ld of patch id %ld is outside 1..%d", what, side,
                    id, 2 * t->dim);
  *s = (int)side - 1;
  return FEA_SUCCESS;
}

/* The member list: <patches type="id_range">first last</patches> or
 * type="id_index" with the ids. */
static fea_status members(topology *t, const xmlNode *mp) {
  const xmlNode *pn = child(mp, "patches");
  if (!pn) return mp_error(t->ctx, t->file, mp, "no <patches> element");
  char *type = attr(pn, "type");
  const int range = type && !strcmp(type, "id_range"), index = type && !strcmp(type, "id_index");
  fea_status st = range || index
                      ? FEA_SUCCESS
                      : mp_error(t->ctx, t->file, pn, "type \"%.40s\" is not id_range or id_index",
                                 type ? type : "(none)");
  if (type) xmlFree(type);
  if (st != FEA_SUCCESS) return st;
  long *v = NULL;
  fea_index nv = 0;
  FEA_CALL(integers(t->ctx, t->file, pn, &v, &nv));
  long first = 0;
  fea_index n = nv;
  if (range) {
    if (nv != 2)
      st = mp_error(t->ctx, t->file, pn,
                    "id_range has %lld numbers; it needs a first and a last id", (long long)nv);
    else if (v[1] < v[0])
      st = mp_error(t->ctx, t->file, pn, "id_range %ld %ld ends before it starts", v[0], v[1]);
    else if (v[1] - v[0] >= t->f->count)
      st = mp_error(t->ctx, t->file, pn, "id_range %ld %ld names %ld patches; the file has %d",
                    v[0], v[1], v[1] - v[0] + 1, t->f->count);
    if (st == FEA_SUCCESS) first = v[0], n = v[1] - v[0] + 1;
  } else if (nv == 0) {
    st = mp_error(t->ctx, t->file, pn, "id_index lists no patch");
  } else if (nv > t->f->count) {
    st = mp_error(t->ctx, t->file, pn, "id_index lists %lld patches; the file has %d",
                  (long long)nv, t->f->count);
  }
  if (st == FEA_SUCCESS) {
    t->members = malloc((size_t)n * sizeof *t->members);
    if (!t->members)
      st = FEA_ERROR(t->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %lld patches", (long long)n);
  }
  for (fea_index i = 0; i < n && st == FEA_SUCCESS; i++) {
    const long id = range ? first + (long)i : v[i];
    const int pos = find_id(t, pn, id, &st);
    if (pos < 0) break;
    if (t->member_of[pos])
      st = mp_error(t->ctx, t->file, pn, "patch id %ld is listed twice", id);
    else if (t->f->patches[pos].dim != t->dim)
      st = mp_error(t->ctx, t->file, pn, "patch id %ld is %dD but parDim is %d", id,
                    t->f->patches[pos].dim, t->dim);
    if (st != FEA_SUCCESS) break;
    t->member_of[pos] = 1;
    t->members[t->num_members++] = pos;
  }
  free(v);
  return st;
}

/* The sides used so far, for messages. */
static void describe_use(const topology *t, int use, char *buf, size_t len) {
  if (use > 0)
    snprintf(buf, len, "interface %d", use - 1);
  else
    snprintf(buf, len, "boundary side %d", -use - 1);
}

/* Mark side s of patch pos as used by `use`; an error when already used. */
static fea_status claim(topology *t, const xmlNode *n, const char *what, long id, int pos, int s,
                        int use) {
  int *u = &t->used[pos * 6 + s];
  if (*u != 0) {
    char before[48];
    describe_use(t, *u, before, sizeof before);
    return mp_error(t->ctx, t->file, n, "%s: side %d of patch id %ld is already %s %s", what, s + 1,
                    id, *u > 0 ? "glued in" : "listed as", before);
  }
  *u = use;
  return FEA_SUCCESS;
}

/* Every <interfaces> child: groups of 4 + 2 dim integers. */
static fea_status interfaces(topology *t, const xmlNode *mp) {
  const int d = t->dim, g = 4 + 2 * d;
  for (const xmlNode *n = mp->children; n; n = n->next) {
    if (!is_element(n, "interfaces")) continue;
    long *v = NULL;
    fea_index nv = 0;
    FEA_CALL(integers(t->ctx, t->file, n, &v, &nv));
    fea_status st = FEA_SUCCESS;
    if (nv % g != 0)
      st = mp_error(t->ctx, t->file, n,
                    "%lld numbers are not a whole number of interfaces of %d (patch, side, patch, "
                    "side, %d direction-map entries, %d orientation flags)",
                    (long long)nv, g, d, d);
    const fea_index add = nv / g;
    if (st == FEA_SUCCESS && add > INT32_MAX - t->num_interfaces)
      st = mp_error(t->ctx, t->file, n, "more than %d interfaces", INT32_MAX);
    fea_geometry_interface *grown = NULL;
    if (st == FEA_SUCCESS && add > 0) {
      grown = realloc(t->interfaces, (size_t)(t->num_interfaces + add) * sizeof *grown);
      if (!grown)
        st = FEA_ERROR(t->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %lld interfaces",
                       (long long)(t->num_interfaces + add));
      else
        t->interfaces = grown;
    }
    for (fea_index k = 0; k < add && st == FEA_SUCCESS; k++) {
      const long *w = v + k * g;
      const int index = t->num_interfaces;
      char what[48];
      snprintf(what, sizeof what, "interface %d", index);
      fea_geometry_interface in = FEA_GEOMETRY_INTERFACE_INIT;
      int pos[2], side[2];
      for (int j = 0; j < 2 && st == FEA_SUCCESS; j++)
        st = patch_side(t, n, what, w[2 * j], w[2 * j + 1], &pos[j], &side[j]);
      if (st != FEA_SUCCESS) break;
      if (pos[0] == pos[1] && side[0] == side[1]) {
        st = mp_error(t->ctx, t->file, n, "%s names side %d of patch id %ld twice", what,
                      side[0] + 1, w[0]);
        break;
      }
      int seen[3] = {0, 0, 0};
      for (int a = 0; a < d && st == FEA_SUCCESS; a++) {
        const long m = w[4 + a], o = w[4 + d + a];
        if (m < 0 || m >= d)
          st = mp_error(t->ctx, t->file, n,
                        "%s: direction-map entry %d is %ld; it must be in 0..%d", what, a, m,
                        d - 1);
        else if (o != 0 && o != 1)
          st = mp_error(t->ctx, t->file, n, "%s: orientation flag %d is %ld; it must be 0 or 1",
                        what, a, o);
        in.direction_map[a] = (int)m;
        in.direction_orientation[a] = (int)o;
      }
      if (st != FEA_SUCCESS) break;
      /* The normal direction, as G+Smo's boundaryInterface sets it. */
      in.direction_map[side[0] / 2] = side[1] / 2;
      in.direction_orientation[side[0] / 2] = side[0] % 2 == side[1] % 2;
      for (int a = 0; a < d; a++) seen[in.direction_map[a]]++;
      for (int a = 0; a < d && st == FEA_SUCCESS; a++)
        if (seen[a] != 1)
          st = mp_error(t->ctx, t->file, n,
                        "%s: the direction map (with direction %d of the first side mapped to the "
                        "second's normal %d) maps %d directions to direction %d",
                        what, side[0] / 2, side[1] / 2, seen[a], a);
      for (int j = 0; j < 2 && st == FEA_SUCCESS; j++)
        st = claim(t, n, what, w[2 * j], pos[j], side[j], index + 1);
      if (st != FEA_SUCCESS) break;
      for (int j = 0; j < 2; j++) {
        in.patch[j] = pos[j];
        in.side[j] = (fea_patch_side)side[j];
      }
      t->interfaces[t->num_interfaces++] = in;
    }
    free(v);
    if (st != FEA_SUCCESS) return st;
  }
  return FEA_SUCCESS;
}

/* Every <boundary> child: (patch, side) pairs, its name attribute kept. */
static fea_status boundary(topology *t, const xmlNode *mp) {
  for (const xmlNode *n = mp->children; n; n = n->next) {
    if (!is_element(n, "boundary")) continue;
    const char *name = NULL;
    char *nm = attr(n, "name");
    if (nm) {
      char **grown = realloc(t->names, (size_t)(t->num_names + 1) * sizeof *grown);
      if (!grown) {
        xmlFree(nm);
        return FEA_ERROR(t->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for a boundary name");
      }
      t->names = grown;
      t->names[t->num_names++] = nm;
      name = nm;
    }
    long *v = NULL;
    fea_index nv = 0;
    FEA_CALL(integers(t->ctx, t->file, n, &v, &nv));
    fea_status st = FEA_SUCCESS;
    if (nv % 2 != 0)
      st = mp_error(t->ctx, t->file, n, "%lld numbers are not (patch, side) pairs", (long long)nv);
    const fea_index add = nv / 2;
    if (st == FEA_SUCCESS && add > INT32_MAX - t->num_boundary)
      st = mp_error(t->ctx, t->file, n, "more than %d boundary sides", INT32_MAX);
    if (st == FEA_SUCCESS && add > 0) {
      fea_geometry_boundary_side *grown = realloc(t->boundary,
                                                  (size_t)(t->num_boundary + add) * sizeof *grown);
      if (!grown)
        st = FEA_ERROR(t->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %lld boundary sides",
                       (long long)(t->num_boundary + add));
      else
        t->boundary = grown;
    }
    for (fea_index k = 0; k < add && st == FEA_SUCCESS; k++) {
      const int index = t->num_boundary;
      char what[48];
      snprintf(what, sizeof what, "boundary side %d", index);
      int pos = 0, side = 0;
      st = patch_side(t, n, what, v[2 * k], v[2 * k + 1], &pos, &side);
      if (st == FEA_SUCCESS) st = claim(t, n, what, v[2 * k], pos, side, -(index + 1));
      if (st != FEA_SUCCESS) break;
      t->boundary[t->num_boundary++] = (fea_geometry_boundary_side){pos, (fea_patch_side)side,
                                                                    name};
    }
    free(v);
    if (st != FEA_SUCCESS) return st;
  }
  return FEA_SUCCESS;
}

/* The first MultiPatch element under root (none: nothing to do) into file. */
static fea_status multipatch(fea_context *ctx, const char *name, const xmlNode *root,
                             fea_geometry_file *file) {
  const xmlNode *mp = child(root, "MultiPatch");
  if (!mp) return FEA_SUCCESS;
  topology t = {.ctx = ctx, .file = name, .f = file};
  char *pd = attr(mp, "parDim");
  char *end = NULL;
  const long d = pd ? strtol(pd, &end, 10) : 0;
  fea_status st = pd && end != pd && *end == '\0' && (d == 2 || d == 3)
                      ? FEA_SUCCESS
                      : mp_error(ctx, name, mp, "parDim=\"%.40s\"; it must be 2 or 3",
                                 pd ? pd : "(none)");
  if (pd) xmlFree(pd);
  if (st != FEA_SUCCESS) return st;
  t.dim = (int)d;
  t.member_of = calloc((size_t)file->count, sizeof *t.member_of);
  t.used = calloc((size_t)file->count * 6, sizeof *t.used);
  if (!t.member_of || !t.used)
    st = FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY, "%s: no memory for the topology of %d patches", name,
                   file->count);
  if (st == FEA_SUCCESS) st = members(&t, mp);
  if (st == FEA_SUCCESS) st = interfaces(&t, mp);
  if (st == FEA_SUCCESS) st = boundary(&t, mp);
  if (st != FEA_SUCCESS) {
    topology_free(&t);
    return st;
  }
  file->num_members = t.num_members;
  file->members = t.members;
  file->num_interfaces = t.num_interfaces;
  file->interfaces = t.interfaces;
  file->num_boundary = t.num_boundary;
  file->boundary = t.boundary;
  file->num_names = t.num_names;
  file->names = t.names;
  free(t.member_of);
  free(t.used);
  /* The file's word against the geometry (on failure the caller releases
   * the file, topology included). */
  return fea_geometry_gismo_check_topology(ctx, name, (long)xmlGetLineNo(mp), file);
}

/* ------------------------------------------------------ what is not read */

/* What the reader passes over in the elements it reads: an attribute it
 * does not use (<Geometry type="TensorBSpline2" foo="1">), a child element
 * it does not use, a second <coefs> where only the first is read, a second
 * <MultiPatch>. A file that says more than the reader takes is accepted,
 * but the user may believe it was honoured, so each such item is logged
 * at FEA_LOG_WARN naming the element, its line and the item; at most
 * MAX_UNUSED per file, then one line with the count left, so that a
 * hostile file cannot flood the log. Kept out: what G+Smo writes and the
 * reader legitimately ignores (the ids of elements other than Geometry,
 * the format attribute of matrices), and children of the root other than
 * Geometry and MultiPatch (G+Smo files carry boundary conditions, bases,
 * functions and options the geometry reader has no use for). Runs only on
 * a file read in full. */
#define MAX_UNUSED 16

typedef struct unused {
  const fea_context *ctx;
  const char *file;
  int count;
} unused;

static void unused_item(unused *u, const xmlNode *n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void unused_item(unused *u, const xmlNode *n, const char *fmt, ...) {
  if (u->count++ >= MAX_UNUSED) return;
  char what[FEA_ERROR_LEN];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  fea_log(u->ctx, FEA_LOG_WARN, "%s: <%s> (line %ld): %s", u->file, (const char *)n->name,
          (long)xmlGetLineNo(n), what);
}

/* Every attribute of n not in allowed (NULL-terminated). */
static void unused_attributes(unused *u, const xmlNode *n, const char *const *allowed) {
  for (const xmlAttr *a = n->properties; a; a = a->next) {
    int ok = 0;
    for (const char *const *k = allowed; *k && !ok; k++) ok = !xmlStrcmp(a->name, BAD_CAST * k);
    if (ok) continue;
    xmlChar *v = xmlNodeListGetString(n->doc, a->children, 1);
    unused_item(u, n, "attribute %s=\"%.40s\" is not one the reader uses: ignored",
                (const char *)a->name, v ? (const char *)v : "");
    if (v) xmlFree(v);
  }
}

/* Every element child of n other than the ones read (read[i], NULL-ended;
 * all: every child of that name is read, else only the first). */
static void unused_children(unused *u, const xmlNode *n, const char *const *read, int all) {
  for (const xmlNode *c = n->children; c; c = c->next) {
    if (c->type != XML_ELEMENT_NODE) continue;
    const char *const *k = read;
    while (*k && xmlStrcmp(c->name, BAD_CAST * k)) k++;
    if (!*k) {
      unused_item(u, n, "child <%.40s> (line %ld) is not one the reader uses: ignored",
                  (const char *)c->name, (long)xmlGetLineNo(c));
      continue;
    }
    const xmlNode *first = child(n, *k);
    if (!all && first != c)
      unused_item(u, n, "a second <%s> (line %ld): only the first (line %ld) is read", *k,
                  (long)xmlGetLineNo(c), (long)xmlGetLineNo(first));
  }
}

static const char *const no_names[] = {NULL};

/* An element whose text is a list of numbers: an element inside it adds its
 * text to the list, its name and attributes unread. */
static void unused_in_numbers(unused *u, const xmlNode *n, const char *const *attrs) {
  unused_attributes(u, n, attrs);
  for (const xmlNode *c = n->children; c; c = c->next)
    if (c->type == XML_ELEMENT_NODE)
      unused_item(u, n,
                  "child <%.40s> (line %ld) inside a list of numbers: its text is read with the "
                  "numbers, the element itself ignored",
                  (const char *)c->name, (long)xmlGetLineNo(c));
}

static void unused_geometry(unused *u, const xmlNode *g) {
  static const char *const geometry_attrs[] = {"type", "id", NULL};
  static const char *const basis_attrs[] = {"type", "id", NULL};
  static const char *const direction_attrs[] = {"type", "index", "id", NULL};
  static const char *const knots_attrs[] = {"degree", NULL};
  static const char *const matrix_attrs[] = {"geoDim", "rows", "cols", "format", NULL};
  static const char *const weights_attrs[] = {"rows", "cols", "format", NULL};
  static const char *const geometry_read[] = {"Basis", "coefs", NULL};
  static const char *const nurbs_read[] = {"Basis", "weights", NULL};
  static const char *const tensor_read[] = {"Basis", NULL};
  static const char *const direction_read[] = {"KnotVector", NULL};
  char *type = attr(g, "type");
  const int nurbs = type && !strncmp(type, "TensorNurbs", 11);
  if (type) xmlFree(type);
  unused_attributes(u, g, geometry_attrs);
  unused_children(u, g, geometry_read, 0);
  const xmlNode *outer = child(g, "Basis"), *tensor = outer, *coefs = child(g, "coefs");
  if (coefs) unused_in_numbers(u, coefs, matrix_attrs);
  if (outer && nurbs) {
    unused_attributes(u, outer, basis_attrs);
    unused_children(u, outer, nurbs_read, 0);
    const xmlNode *wts = child(outer, "weights");
    if (wts) unused_in_numbers(u, wts, weights_attrs);
    tensor = child(outer, "Basis");
  }
  if (!tensor) return;
  unused_attributes(u, tensor, basis_attrs);
  unused_children(u, tensor, tensor_read, 1);
  for (const xmlNode *b = tensor->children; b; b = b->next) {
    if (!is_element(b, "Basis")) continue;
    unused_attributes(u, b, direction_attrs);
    unused_children(u, b, direction_read, 0);
    const xmlNode *kv = child(b, "KnotVector");
    if (kv) unused_in_numbers(u, kv, knots_attrs);
  }
}

static void unused_multipatch(unused *u, const xmlNode *mp) {
  static const char *const mp_attrs[] = {"parDim", "id", NULL};
  static const char *const patches_attrs[] = {"type", NULL};
  static const char *const boundary_attrs[] = {"name", NULL};
  static const char *const mp_read[] = {"patches", "interfaces", "boundary", NULL};
  unused_attributes(u, mp, mp_attrs);
  for (const xmlNode *c = mp->children; c; c = c->next) {
    if (c->type != XML_ELEMENT_NODE) continue;
    if (is_element(c, "patches") && c != child(mp, "patches")) {
      unused_item(u, mp, "a second <patches> (line %ld): only the first (line %ld) is read",
                  (long)xmlGetLineNo(c), (long)xmlGetLineNo(child(mp, "patches")));
      continue;
    }
    if (is_element(c, "patches")) unused_in_numbers(u, c, patches_attrs);
    if (is_element(c, "interfaces")) unused_in_numbers(u, c, no_names);
    if (is_element(c, "boundary")) unused_in_numbers(u, c, boundary_attrs);
  }
  unused_children(u, mp, mp_read, 1);
}

static void warn_unused(const fea_context *ctx, const char *name, const xmlNode *root) {
  unused u = {ctx, name, 0};
  const xmlNode *mp = child(root, "MultiPatch");
  for (const xmlNode *n = root->children; n; n = n->next) {
    if (is_element(n, "Geometry")) unused_geometry(&u, n);
    if (is_element(n, "MultiPatch") && n != mp)
      unused_item(&u, root, "a second <MultiPatch> (line %ld): only the first (line %ld) is read",
                  (long)xmlGetLineNo(n), (long)xmlGetLineNo(mp));
  }
  if (mp) unused_multipatch(&u, mp);
  if (u.count > MAX_UNUSED)
    fea_log(ctx, FEA_LOG_WARN, "%s: %d more items the reader does not use, not listed", name,
            u.count - MAX_UNUSED);
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
  free(file->members);
  free(file->interfaces);
  free(file->boundary);
  for (int i = 0; i < file->num_names; i++) xmlFree(file->names[i]);
  free(file->names);
  file->members = NULL;
  file->interfaces = NULL;
  file->boundary = NULL;
  file->names = NULL;
  file->num_members = file->num_interfaces = file->num_boundary = file->num_names = 0;
}

fea_status fea_geometry_gismo_parse(fea_context *ctx, const char *name, const char *data,
                                    size_t size, fea_geometry_file *file) {
  fea_gismo_xml x;
  FEA_CALL(fea_geometry_gismo_xml_open(ctx, name, data, size, &x));
  const xmlNode *root = xmlDocGetRootElement(x.doc);
  int count = 0;
  for (const xmlNode *n = root ? root->children : NULL; n; n = n->next)
    if (is_element(n, "Geometry")) count++;
  fea_status st = FEA_SUCCESS;
  if (count == 0)
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
  if (st == FEA_SUCCESS) st = multipatch(ctx, name, root, file);
  if (st == FEA_SUCCESS) warn_unused(ctx, name, root);
  if (st != FEA_SUCCESS && file->patches) fea_geometry_file_release(file);
  fea_geometry_gismo_xml_close(&x);
  return st;
}
