/* Reader of Gmsh .msh files, format 4.1 ASCII.
 *
 * Sections: $MeshFormat must come first; $Nodes, then $Elements, are read,
 * and $PhysicalNames and $Entities for the physical groups; every other
 * section ($Periodic, $NodeData, ..., and unknown ones) is skipped up to its
 * $End line, as the format asks of readers. The cells of the highest
 * dimension present make the mesh, whose space dimension is that dimension:
 * a 2D mesh must lie in a plane z = const, a 1D mesh on a line y = z =
 * const. Only the nodes those cells use are kept (a node no cell uses would
 * become a DoF without an element), renumbered densely in their order in
 * $Nodes. Lower-dimensional elements are checked (their node tags must be
 * defined); those one dimension below the cells whose nodes the cells use
 * are kept as the mesh's boundary facets, each with the physical groups of
 * its entity ($Entities) and their names ($PhysicalNames), when the file has
 * groups of that dimension (mesh-boundary.h); the others are skipped.
 *
 * Everything is checked, and every failure is FEA_ERR_IO "path:LINE: what",
 * except well-formed input the library cannot represent (binary files, other
 * format versions, element types other than linear lines, triangles, quads,
 * tetrahedra and hexahedra, mixed cell types of the top dimension, very
 * sparse node tags), which is FEA_ERR_UNSUPPORTED. Counts declared in the file
 * are checked against its size before anything is allocated by them, so a
 * corrupted count cannot ask for more memory than the file could describe.
 * Cells that are inverted or degenerate are errors naming their line: the
 * reader never reorders nodes behind the user's back. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal/error.h"
#include "mesh-boundary.h"
#include "mesh.h"

#define MAX_LINE ((size_t)1 << 20) /* longer lines are corrupt, not Gmsh's */
#define CHUNK 65536

/* Gmsh's element types that libfeaccel reads (and points, which it skips). */
struct gmsh_type {
  int id, nodes, dim;
  fea_cell_type cell; /* 0 for points */
  const char *name;
};

static const struct gmsh_type gmsh_types[] = {
    {1, 2, 1, FEA_CELL_INTERVAL, "2-node line"},
    {2, 3, 2, FEA_CELL_TRIANGLE, "3-node triangle"},
    {3, 4, 2, FEA_CELL_QUAD, "4-node quadrangle"},
    {4, 4, 3, FEA_CELL_TETRAHEDRON, "4-node tetrahedron"},
    {5, 8, 3, FEA_CELL_HEXAHEDRON, "8-node hexahedron"},
    {15, 1, 0, (fea_cell_type)0, "1-node point"},
};

/* Gmsh's other element types 6..19; 20..140 are higher-order and special
 * elements, above that nothing Gmsh defines. */
static const char *const other_types[20] = {
    [6] = "6-node prism",
    [7] = "5-node pyramid",
    [8] = "3-node second-order line",
    [9] = "6-node second-order triangle",
    [10] = "9-node second-order quadrangle",
    [11] = "10-node second-order tetrahedron",
    [12] = "27-node second-order hexahedron",
    [13] = "18-node second-order prism",
    [14] = "14-node second-order pyramid",
    [16] = "8-node second-order quadrangle",
    [17] = "20-node second-order hexahedron",
    [18] = "15-node second-order prism",
    [19] = "13-node second-order pyramid",
};
#define GMSH_MAX_TYPE 140

struct reader {
  fea_context *ctx;
  const char *path;
  FILE *f;
  long long size; /* bytes in the file */
  long long line; /* number of the line in buf */
  char *buf;      /* the current line, NUL-terminated, without its end of line */
  size_t cap;
  char chunk[CHUNK];
  size_t pos, end;
  int eof;

  /* $Nodes: node i (in file order) has tag tag[i], coordinates xyz[3i..3i+3)
   * written on line line_of[i] (while its block's tags are read, the line of
   * its tag); index_of[t - min_tag] is the node of tag t, -1 if none. */
  int have_nodes;
  long long nodes_line; /* line of the $Nodes header, for messages */
  fea_index num_nodes, min_tag, max_tag;
  fea_index *tag, *index_of;
  long long *line_of;
  double *xyz;

  /* $Elements: the cells of the highest dimension so far. */
  int have_elements;
  const struct gmsh_type *top;
  long long top_line; /* where the first block of the top type starts */
  fea_index num_cells, cells_cap;
  fea_index *cell_nodes; /* num_cells * top->nodes node numbers (file order) */
  fea_index *cell_tag;
  long long *cell_line;
  unsigned char *elem_seen; /* element tags met, for duplicates */

  /* Elements of dimension 0 to 2, whatever the top dimension turns out to
   * be: those one below it become the boundary facets. */
  fea_index num_low, low_cap;
  fea_index *low_nodes;   /* num_low x FEA_FACET_MAX_NODES file node indices, -1 padded */
  unsigned char *low_dim; /* the element's dimension */
  int *low_entity;        /* its entity tag (0: out of range, matches no entity) */

  /* $Entities: the points, curves and surfaces (dimensions 0 to 2) with
   * their physical tags ent_phys[ent_start[i] .. ent_start[i + 1]). */
  long long entities_line; /* of the section, for messages; 0 when absent */
  int num_ents;
  unsigned char *ent_dim;
  int *ent_tag, *ent_start, *ent_phys;
  long long *ent_line;

  /* $PhysicalNames: dimension, tag and name of each named group. */
  long long names_line; /* 0 when absent */
  int num_names;
  unsigned char *name_dim;
  int *name_tag;
  char **name_str;
  long long *name_line;
};

/* "path:LINE: message" as error `code`, raised in the name of the caller
 * (FAIL_AT passes its file, line and function). */
FEA_PRINTF(7, 8)
static fea_status fail_at_(const struct reader *r, fea_status code, long long line,
                           const char *file, int src_line, const char *func, const char *fmt, ...) {
  char msg[512]; /* the context's message has no more room */
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return fea_error_raise(r->ctx, code, file, src_line, func, "%s:%lld: %s", r->path, line, msg);
}

#define FAIL_AT(r, code, line, ...) \
  fail_at_((r), (code), (line), __FILE__, __LINE__, __func__, __VA_ARGS__)
#define FAIL(r, ...) FAIL_AT((r), FEA_ERR_IO, (r)->line, __VA_ARGS__)
#define UNSUPPORTED(r, ...) FAIL_AT((r), FEA_ERR_UNSUPPORTED, (r)->line, __VA_ARGS__)

/* The token at p for a message: at most 24 bytes up to the next blank,
 * unprintable bytes shown as '?'. */
static const char *show(const char *p, char out[32]) {
  size_t n = 0;
  while (p[n] && p[n] != ' ' && p[n] != '\t' && n < 24) {
    unsigned char ch = (unsigned char)p[n];
    out[n] = ch >= 0x20 && ch < 0x7f ? (char)ch : '?';
    n++;
  }
  if (p[n] && p[n] != ' ' && p[n] != '\t') {
    memcpy(out + n, "...", 3);
    n += 3;
  }
  out[n] = '\0';
  return out;
}

/* ---- lines ---------------------------------------------------------------------------------- */

static fea_status append(struct reader *r, size_t *len, const char *src, size_t n) {
  if (*len + n + 1 > r->cap) {
    if (*len + n + 1 > MAX_LINE)
      return FAIL_AT(r, FEA_ERR_IO, r->line + 1, "line is longer than %zu bytes", MAX_LINE - 1);
    size_t cap = r->cap;
    while (cap < *len + n + 1) cap *= 2;
    if (cap > MAX_LINE) cap = MAX_LINE;
    char *grown = realloc(r->buf, cap);
    if (!grown)
      return FEA_ERROR(r->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for a line of %zu bytes", cap);
    r->buf = grown;
    r->cap = cap;
  }
  memcpy(r->buf + *len, src, n);
  *len += n;
  return FEA_SUCCESS;
}

/* The next line into r->buf without "\n" or "\r\n"; *got = 0 at the end of the file. */
static fea_status read_line(struct reader *r, int *got) {
  size_t len = 0;
  int any = 0;
  for (;;) {
    if (r->pos == r->end) {
      if (r->eof) break;
      r->end = fread(r->chunk, 1, CHUNK, r->f);
      r->pos = 0;
      if (r->end == 0) {
        if (ferror(r->f))
          return FAIL_AT(r, FEA_ERR_IO, r->line + 1, "read error: %s", strerror(errno));
        r->eof = 1;
        break;
      }
    }
    any = 1;
    const char *start = r->chunk + r->pos;
    const char *nl = memchr(start, '\n', r->end - r->pos);
    size_t n = nl ? (size_t)(nl - start) : r->end - r->pos;
    if (memchr(start, '\0', n))
      return FAIL_AT(r, FEA_ERR_IO, r->line + 1, "line holds a NUL byte: not a text file");
    FEA_CALL(append(r, &len, start, n));
    r->pos += n + (nl ? 1 : 0);
    if (nl) break;
  }
  *got = any;
  if (!any) return FEA_SUCCESS;
  r->line++;
  if (len > 0 && r->buf[len - 1] == '\r') len--;
  r->buf[len] = '\0';
  return FEA_SUCCESS;
}

/* A line that must be there: the end of the file is a truncation. */
static fea_status need_line(struct reader *r, const char *section, const char *what) {
  int got;
  FEA_CALL(read_line(r, &got));
  if (!got)
    return FAIL_AT(r, FEA_ERR_IO, r->line + 1, "the file ends inside %s, where %s was expected",
                   section, what);
  return FEA_SUCCESS;
}

/* Whether line is `text` with blanks around it; a section line may also end
 * in "\r" (on top of the "\r\n" read_line drops), as editors on Windows leave
 * them. Only the line's bytes up to its NUL are read. */
static int header_is(const char *line, const char *text) {
  while (*line == ' ' || *line == '\t') line++;
  const size_t n = strlen(text);
  if (strncmp(line, text, n) != 0) return 0; /* false at the line's NUL if it is shorter */
  const char *q = line + n;
  while (*q == ' ' || *q == '\t' || *q == '\r') q++;
  return *q == '\0';
}

/* The line must be exactly `text` (blanks around it allowed). Only the bytes
 * of the line up to its NUL are looked at, whatever its length: past `text`
 * is read only once the line is known to hold all of `text`. */
static fea_status expect_text(struct reader *r, const char *text, const char *after) {
  FEA_CALL(need_line(r, after, text));
  if (header_is(r->buf, text)) return FEA_SUCCESS;
  const char *p = r->buf;
  while (*p == ' ' || *p == '\t') p++;
  char tok[32];
  if (*p == '\0') return FAIL(r, "expected %s after %s, found an empty line", text, after);
  const size_t n = strlen(text);
  if (strncmp(p, text, n) == 0 && (p[n] == ' ' || p[n] == '\t')) {
    const char *q = p + n;
    while (*q == ' ' || *q == '\t' || *q == '\r') q++;
    return FAIL(r, "unexpected '%s' after %s", show(q, tok), text);
  }
  return FAIL(r, "expected %s after %s, found '%s'", text, after, show(p, tok));
}

/* ---- numbers -------------------------------------------------------------------------------- */

static const char *skip_blanks(const char *p) {
  while (*p == ' ' || *p == '\t') p++;
  return p;
}

static int at_token_end(const char *p) { return *p == '\0' || *p == ' ' || *p == '\t'; }

/* An integer token at *p (advanced past it); `what` names it in messages. */
static fea_status get_int(struct reader *r, const char **p, const char *what, long long *v) {
  const char *s = skip_blanks(*p);
  char tok[32];
  if (*s == '\0') return FAIL(r, "expected %s, found the end of the line", what);
  char *end;
  errno = 0;
  long long x = strtoll(s, &end, 10);
  if (end == s || !at_token_end(end)) return FAIL(r, "expected %s, found '%s'", what, show(s, tok));
  if (errno == ERANGE) return FAIL(r, "%s '%s' is out of range", what, show(s, tok));
  *v = x;
  *p = end;
  return FEA_SUCCESS;
}

/* A non-negative integer at most `max`. */
static fea_status get_count(struct reader *r, const char **p, const char *what, long long max,
                            long long *v) {
  FEA_CALL(get_int(r, p, what, v));
  if (*v < 0) return FAIL(r, "%s is %lld, negative", what, *v);
  if (*v > max)
    return FAIL(r, "%s is %lld, more than a file of %lld bytes can hold", what, *v, r->size);
  return FEA_SUCCESS;
}

/* A finite floating-point token. */
static fea_status get_real(struct reader *r, const char **p, const char *what, double *v) {
  const char *s = skip_blanks(*p);
  char tok[32];
  if (*s == '\0') return FAIL(r, "expected %s, found the end of the line", what);
  char *end;
  double x = strtod(s, &end); /* underflow to a subnormal or zero is fine */
  if (end == s || !at_token_end(end)) return FAIL(r, "expected %s, found '%s'", what, show(s, tok));
  if (!isfinite(x)) return FAIL(r, "%s is '%s', not a finite number", what, show(s, tok));
  *v = x;
  *p = end;
  return FEA_SUCCESS;
}

/* Nothing may follow the values of a line. */
static fea_status line_end(struct reader *r, const char *p, const char *after) {
  p = skip_blanks(p);
  char tok[32];
  if (*p != '\0') return FAIL(r, "unexpected '%s' after %s", show(p, tok), after);
  return FEA_SUCCESS;
}

/* ---- sections ------------------------------------------------------------------------------- */

static fea_status read_format(struct reader *r) {
  FEA_CALL(need_line(r, "$MeshFormat", "the line 'version file-type data-size'"));
  const char *p = r->buf;
  double version;
  long long file_type, data_size;
  FEA_CALL(get_real(r, &p, "the format version", &version));
  FEA_CALL(get_int(r, &p, "the file type", &file_type));
  FEA_CALL(get_int(r, &p, "the data size", &data_size));
  FEA_CALL(line_end(r, p, "the data size"));
  if (file_type != 0 && file_type != 1)
    return FAIL(r, "file type %lld is neither 0 (ASCII) nor 1 (binary)", file_type);
  if (version != 4.1)
    return UNSUPPORTED(r,
                       "MSH format version %g is not supported, only 4.1 (in Gmsh: "
                       "Mesh.MshFileVersion = 4.1)",
                       version);
  if (file_type == 1)
    return UNSUPPORTED(r,
                       "binary .msh files are not supported, only ASCII (in Gmsh: "
                       "Mesh.Binary = 0)");
  return expect_text(r, "$EndMeshFormat", "$MeshFormat");
}

/* Skip section $name up to $Endname. */
static fea_status skip_section(struct reader *r, const char *name) {
  char end[80];
  snprintf(end, sizeof end, "$End%s", name);
  const long long start = r->line;
  for (;;) {
    int got;
    FEA_CALL(read_line(r, &got));
    if (!got)
      return FAIL_AT(r, FEA_ERR_IO, r->line + 1, "the file ends inside $%s (line %lld), before %s",
                     name, start, end);
    if (header_is(r->buf, end)) return FEA_SUCCESS;
  }
}

/* The first line of $Nodes and $Elements: block count, item count and the tag
 * range, checked before anything is allocated (max_count bounds the counts by
 * the file size, so a corrupt header cannot ask for huge memory). */
static fea_status read_section_header(struct reader *r, const char *sec, const char *layout,
                                      const char *item, const char *renumber, long long max_count,
                                      long long *nblocks, long long *count, long long *tmin,
                                      long long *tmax, long long *range) {
  char what[96];
  snprintf(what, sizeof what, "the line %s", layout);
  FEA_CALL(need_line(r, sec, what));
  const char *p = r->buf;
  FEA_CALL(get_count(r, &p, "the number of entity blocks", max_count, nblocks));
  snprintf(what, sizeof what, "the number of %ss", item);
  FEA_CALL(get_count(r, &p, what, max_count, count));
  snprintf(what, sizeof what, "the smallest %s tag", item);
  FEA_CALL(get_int(r, &p, what, tmin));
  snprintf(what, sizeof what, "the largest %s tag", item);
  FEA_CALL(get_int(r, &p, what, tmax));
  FEA_CALL(line_end(r, p, what));
  if (*count > 0 && (*tmin < 1 || *tmax < *tmin || *tmax - *tmin >= INT64_MAX / 2))
    return FAIL(r, "%s tags range over %lld..%lld, not a range of positive tags", item, *tmin,
                *tmax);
  *range = *count > 0 ? *tmax - *tmin + 1 : 0;
  if (*range < *count)
    return FAIL(r, "%lld %ss cannot have distinct tags in %lld..%lld", *count, item, *tmin, *tmax);
  if (*range > 16 * *count + ((long long)1 << 20))
    return UNSUPPORTED(
        r, "%s tags range over %lld..%lld for only %lld %ss; renumber them (in Gmsh: %s)", item,
        *tmin, *tmax, *count, item, renumber);
  return FEA_SUCCESS;
}

static fea_status read_nodes(struct reader *r) {
  static const char *sec = "$Nodes";
  r->nodes_line = r->line;
  /* A node takes at least a tag line and a coordinate line ("1\n0 0 0\n"). */
  const long long max_nodes = r->size / 8;
  long long nblocks, nnodes, tmin, tmax, range;
  FEA_CALL(read_section_header(r, sec, "'numEntityBlocks numNodes minNodeTag maxNodeTag'", "node",
                               "Mesh.RenumberNodes or gmsh.model.mesh.renumberNodes()", max_nodes,
                               &nblocks, &nnodes, &tmin, &tmax, &range));
  const long long header = r->line;
  const char *p;
  r->num_nodes = nnodes;
  r->min_tag = tmin;
  r->max_tag = tmax;
  const size_t n = (size_t)(nnodes > 0 ? nnodes : 1);
  r->tag = malloc(n * sizeof *r->tag);
  r->line_of = malloc(n * sizeof *r->line_of);
  r->xyz = malloc(3 * n * sizeof *r->xyz);
  r->index_of = malloc((size_t)(range > 0 ? range : 1) * sizeof *r->index_of);
  if (!r->tag || !r->line_of || !r->xyz || !r->index_of)
    return FEA_ERROR(r->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %lld nodes", nnodes);
  for (long long t = 0; t < range; t++) r->index_of[t] = -1;

  long long done = 0;
  for (long long b = 0; b < nblocks; b++) {
    FEA_CALL(need_line(r, sec, "an entity block 'entityDim entityTag parametric numNodesInBlock'"));
    long long edim, etag, param, count;
    p = r->buf;
    FEA_CALL(get_int(r, &p, "the entity dimension", &edim));
    FEA_CALL(get_int(r, &p, "the entity tag", &etag));
    FEA_CALL(get_int(r, &p, "the parametric flag", &param));
    FEA_CALL(get_count(r, &p, "the number of nodes in the block", max_nodes, &count));
    FEA_CALL(line_end(r, p, "the number of nodes in the block"));
    if (edim < 0 || edim > 3) return FAIL(r, "entity dimension %lld is not 0, 1, 2 or 3", edim);
    if (param != 0 && param != 1) return FAIL(r, "parametric flag %lld is not 0 or 1", param);
    if (count > nnodes - done)
      return FAIL(r, "the blocks hold more than the %lld nodes declared at line %lld", nnodes,
                  header);
    for (long long i = done; i < done + count; i++) {
      FEA_CALL(need_line(r, sec, "a node tag"));
      long long t;
      p = r->buf;
      FEA_CALL(get_int(r, &p, "a node tag", &t));
      FEA_CALL(line_end(r, p, "the node tag"));
      if (t < tmin || t > tmax)
        return FAIL(r, "node tag %lld is outside the range %lld..%lld declared at line %lld", t,
                    tmin, tmax, header);
      const fea_index first = r->index_of[t - tmin];
      if (first >= done) /* in this block: line_of[first] is still the line of its tag */
        return FAIL(r, "node tag %lld is defined twice, at lines %lld and %lld", t,
                    r->line_of[first], r->line);
      if (first >= 0)
        return FAIL(r, "node tag %lld is defined twice (first for the coordinates at line %lld)", t,
                    r->line_of[first]);
      r->index_of[t - tmin] = i;
      r->tag[i] = t;
      r->line_of[i] = r->line; /* the tag's line, until the coordinates' line replaces it */
    }
    const int extra = param ? (int)edim : 0; /* parametric coordinates u [v [w]] */
    for (long long i = done; i < done + count; i++) {
      FEA_CALL(need_line(r, sec, "node coordinates"));
      p = r->buf;
      /* clang-format off */
      static const char *const names[6] = {"coordinate x", "coordinate y", "coordinate z",
                                           "parametric coordinate u", "parametric coordinate v",
                                           "parametric coordinate w"};
      /* clang-format on */
      double x[6];
      for (int k = 0; k < 3 + extra; k++) FEA_CALL(get_real(r, &p, names[k], &x[k]));
      FEA_CALL(line_end(r, p, param ? "the parametric coordinates" : "coordinate z"));
      memcpy(r->xyz + 3 * i, x, 3 * sizeof *x);
      r->line_of[i] = r->line;
    }
    done += count;
  }
  if (done != nnodes)
    return FAIL_AT(r, FEA_ERR_IO, header,
                   "the %lld blocks hold %lld nodes, but this line declares "
                   "%lld",
                   nblocks, done, nnodes);
  FEA_CALL(expect_text(r, "$EndNodes", "the nodes"));
  r->have_nodes = 1;
  return FEA_SUCCESS;
}

/* A tag that must be positive and fit an int (entity and physical tags). */
static fea_status get_tag(struct reader *r, const char **p, const char *what, int *v) {
  long long t;
  FEA_CALL(get_int(r, p, what, &t));
  if (t < 1 || t > INT_MAX) return FAIL(r, "%s %lld is outside 1..%d", what, t, INT_MAX);
  *v = (int)t;
  return FEA_SUCCESS;
}

/* Room for one more physical tag of an entity. */
static fea_status grow_phys(struct reader *r, int *cap, int used) {
  if (used < *cap) return FEA_SUCCESS;
  const int grown_cap = *cap ? 2 * *cap : 64;
  int *grown = realloc(r->ent_phys, (size_t)grown_cap * sizeof *grown);
  if (!grown)
    return FEA_ERROR(r->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %d physical tags", grown_cap);
  r->ent_phys = grown;
  *cap = grown_cap;
  return FEA_SUCCESS;
}

/* Two entities or names with the same (dimension, tag): the first index
 * after sorting them, or -1. */
struct dim_tag {
  int dim, tag, index;
};

static int cmp_dim_tag(const void *pa, const void *pb) {
  const struct dim_tag *a = pa, *b = pb;
  if (a->dim != b->dim) return a->dim < b->dim ? -1 : 1;
  if (a->tag != b->tag) return a->tag < b->tag ? -1 : 1;
  return (a->index > b->index) - (a->index < b->index);
}

static fea_status find_repeat(struct reader *r, int n, const unsigned char *dim, const int *tag,
                              int *first, int *second) {
  *first = *second = -1;
  struct dim_tag *v = malloc((size_t)(n > 0 ? n : 1) * sizeof *v);
  if (!v) return FEA_ERROR(r->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory to sort %d tags", n);
  for (int i = 0; i < n; i++) v[i] = (struct dim_tag){dim[i], tag[i], i};
  qsort(v, (size_t)n, sizeof *v, cmp_dim_tag);
  for (int i = 1; i < n && *first < 0; i++)
    if (v[i].dim == v[i - 1].dim && v[i].tag == v[i - 1].tag) {
      *first = v[i - 1].index;
      *second = v[i].index;
    }
  free(v);
  return FEA_SUCCESS;
}

/* $Entities: points, curves, surfaces and volumes, each on one line with
 * its tag, position or bounding box, physical tags and (but points) bounding
 * entities. The physical tags of dimensions 0 to 2 are kept. */
static fea_status read_entities(struct reader *r) {
  static const char *sec = "$Entities";
  r->entities_line = r->line;
  /* An entity takes at least "1 0 0 0 0\n". */
  const long long max_ents = r->size / 10;
  FEA_CALL(need_line(r, sec, "the line 'numPoints numCurves numSurfaces numVolumes'"));
  const char *p = r->buf;
  long long n[4];
  static const char *const counts[4] = {"the number of points", "the number of curves",
                                        "the number of surfaces", "the number of volumes"};
  for (int d = 0; d < 4; d++) FEA_CALL(get_count(r, &p, counts[d], max_ents, &n[d]));
  FEA_CALL(line_end(r, p, counts[3]));
  const long long kept = n[0] + n[1] + n[2];
  if (kept + n[3] > max_ents)
    return FAIL(r, "%lld entities are more than a file of %lld bytes can hold", kept + n[3],
                r->size);
  if (kept > INT_MAX / 2)
    return UNSUPPORTED(r, "%lld points, curves and surfaces are more than %d", kept, INT_MAX / 2);
  const size_t m = (size_t)(kept > 0 ? kept : 1);
  r->ent_dim = malloc(m * sizeof *r->ent_dim);
  r->ent_tag = malloc(m * sizeof *r->ent_tag);
  r->ent_start = malloc((m + 1) * sizeof *r->ent_start);
  r->ent_line = malloc(m * sizeof *r->ent_line);
  if (!r->ent_dim || !r->ent_tag || !r->ent_start || !r->ent_line)
    return FEA_ERROR(r->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %lld entities", kept);
  static const char *const tags[4] = {"a point tag", "a curve tag", "a surface tag",
                                      "a volume tag"};
  static const char *const bounds[4] = {"", "the number of bounding points",
                                        "the number of bounding curves",
                                        "the number of bounding surfaces"};
  int cap = 0, used = 0;
  r->ent_start[0] = 0;
  for (int d = 0; d < 4; d++)
    for (long long i = 0; i < n[d]; i++) {
      FEA_CALL(need_line(r, sec,
                         d == 0 ? "a point 'tag x y z numPhysicalTags ...'"
                                : "an entity 'tag minX minY minZ maxX maxY maxZ "
                                  "numPhysicalTags ...'"));
      p = r->buf;
      int tag = 0; /* set by get_tag, which fails otherwise (quiets -O3) */
      FEA_CALL(get_tag(r, &p, tags[d], &tag));
      for (int k = 0; k < (d == 0 ? 3 : 6); k++) {
        double x;
        FEA_CALL(get_real(r, &p, d == 0 ? "a coordinate" : "a bounding box coordinate", &x));
      }
      long long nphys;
      FEA_CALL(get_count(r, &p, "the number of physical tags", (long long)INT_MAX, &nphys));
      for (long long k = 0; k < nphys; k++) {
        int phys = 0;
        FEA_CALL(get_tag(r, &p, "a physical tag", &phys));
        if (d == 3) continue;
        if (used >= INT_MAX / 2)
          return UNSUPPORTED(r, "more than %d physical tags on entities", INT_MAX / 2);
        FEA_CALL(grow_phys(r, &cap, used));
        r->ent_phys[used++] = phys;
      }
      if (d > 0) {
        long long nb, t;
        FEA_CALL(get_count(r, &p, bounds[d], (long long)INT_MAX, &nb));
        for (long long k = 0; k < nb; k++) FEA_CALL(get_int(r, &p, "a bounding entity tag", &t));
      }
      FEA_CALL(line_end(r, p, "the entity"));
      if (d == 3) continue;
      const int e = r->num_ents++;
      r->ent_dim[e] = (unsigned char)d;
      r->ent_tag[e] = tag;
      r->ent_line[e] = r->line;
      r->ent_start[e + 1] = used;
    }
  int first, second;
  FEA_CALL(find_repeat(r, r->num_ents, r->ent_dim, r->ent_tag, &first, &second));
  if (first >= 0)
    return FAIL_AT(r, FEA_ERR_IO, r->ent_line[second],
                   "entity %d of dimension %d is defined twice (first at line %lld)",
                   r->ent_tag[second], r->ent_dim[second], r->ent_line[first]);
  return expect_text(r, "$EndEntities", "the entities");
}

/* $PhysicalNames: 'dimension physicalTag "name"' per group. */
static fea_status read_physical_names(struct reader *r) {
  static const char *sec = "$PhysicalNames";
  r->names_line = r->line;
  /* A name takes at least '0 1 ""\n'. */
  const long long max_names = r->size / 7;
  FEA_CALL(need_line(r, sec, "the number of physical names"));
  const char *p = r->buf;
  long long n;
  FEA_CALL(get_count(r, &p, "the number of physical names", max_names, &n));
  FEA_CALL(line_end(r, p, "the number of physical names"));
  if (n > INT_MAX / 2)
    return UNSUPPORTED(r, "%lld physical names are more than %d", n, INT_MAX / 2);
  const size_t m = (size_t)(n > 0 ? n : 1);
  r->name_dim = malloc(m * sizeof *r->name_dim);
  r->name_tag = malloc(m * sizeof *r->name_tag);
  r->name_line = malloc(m * sizeof *r->name_line);
  r->name_str = calloc(m, sizeof *r->name_str);
  if (!r->name_dim || !r->name_tag || !r->name_line || !r->name_str)
    return FEA_ERROR(r->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %lld physical names", n);
  for (long long i = 0; i < n; i++) {
    FEA_CALL(need_line(r, sec, "a physical name 'dimension physicalTag \"name\"'"));
    p = r->buf;
    long long dim;
    int tag = 0;
    FEA_CALL(get_int(r, &p, "the dimension of a physical group", &dim));
    if (dim < 0 || dim > 3)
      return FAIL(r, "physical group dimension %lld is not 0, 1, 2 or 3", dim);
    FEA_CALL(get_tag(r, &p, "a physical tag", &tag));
    p = skip_blanks(p);
    char tok[32];
    if (*p != '"')
      return FAIL(r, "expected the group's name in double quotes, found '%s'",
                  *p ? show(p, tok) : "the end of the line");
    const char *end = strchr(p + 1, '"');
    if (!end) return FAIL(r, "the name of physical group %d has no closing '\"'", tag);
    FEA_CALL(line_end(r, end + 1, "the group's name"));
    const size_t len = (size_t)(end - p - 1);
    char *name = malloc(len + 1);
    if (!name) return FEA_ERROR(r->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for a name");
    memcpy(name, p + 1, len);
    name[len] = '\0';
    const int k = r->num_names++;
    r->name_str[k] = name;
    r->name_dim[k] = (unsigned char)dim;
    r->name_tag[k] = tag;
    r->name_line[k] = r->line;
  }
  int first, second;
  FEA_CALL(find_repeat(r, r->num_names, r->name_dim, r->name_tag, &first, &second));
  if (first >= 0)
    return FAIL_AT(r, FEA_ERR_IO, r->name_line[second],
                   "physical group %d of dimension %d is named twice (first at line %lld)",
                   r->name_tag[second], r->name_dim[second], r->name_line[first]);
  return expect_text(r, "$EndPhysicalNames", "the physical names");
}

static const struct gmsh_type *find_type(long long id) {
  for (size_t i = 0; i < sizeof gmsh_types / sizeof gmsh_types[0]; i++)
    if (gmsh_types[i].id == id) return &gmsh_types[i];
  return NULL;
}

/* Room for one more cell of the top type. */
static fea_status grow_cells(struct reader *r) {
  if (r->num_cells < r->cells_cap) return FEA_SUCCESS;
  fea_index cap = r->cells_cap ? 2 * r->cells_cap : 256;
  fea_index *nodes = realloc(r->cell_nodes, (size_t)cap * (size_t)r->top->nodes * sizeof *nodes);
  if (nodes) r->cell_nodes = nodes;
  fea_index *tags = realloc(r->cell_tag, (size_t)cap * sizeof *tags);
  if (tags) r->cell_tag = tags;
  long long *lines = realloc(r->cell_line, (size_t)cap * sizeof *lines);
  if (lines) r->cell_line = lines;
  if (!nodes || !tags || !lines)
    return FEA_ERROR(r->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %lld cells", (long long)cap);
  r->cells_cap = cap;
  return FEA_SUCCESS;
}

/* Room for one more element of dimension 0 to 2. */
static fea_status grow_low(struct reader *r) {
  if (r->num_low < r->low_cap) return FEA_SUCCESS;
  fea_index cap = r->low_cap ? 2 * r->low_cap : 256;
  fea_index *nodes = realloc(r->low_nodes, (size_t)cap * FEA_FACET_MAX_NODES * sizeof *nodes);
  if (nodes) r->low_nodes = nodes;
  unsigned char *dims = realloc(r->low_dim, (size_t)cap * sizeof *dims);
  if (dims) r->low_dim = dims;
  int *ents = realloc(r->low_entity, (size_t)cap * sizeof *ents);
  if (ents) r->low_entity = ents;
  if (!nodes || !dims || !ents)
    return FEA_ERROR(r->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %lld boundary elements",
                     (long long)cap);
  r->low_cap = cap;
  return FEA_SUCCESS;
}

/* The element type of a block header: a supported one, or the right error. */
static fea_status block_type(struct reader *r, long long id, long long edim,
                             const struct gmsh_type **type) {
  *type = find_type(id);
  if (!*type) {
    if (id > 0 && id < 20 && other_types[id])
      return UNSUPPORTED(r,
                         "Gmsh element type %lld (%s) is not supported: only linear lines, "
                         "triangles, quadrangles, tetrahedra and hexahedra",
                         id, other_types[id]);
    if (id >= 20 && id <= GMSH_MAX_TYPE)
      return UNSUPPORTED(r,
                         "Gmsh element type %lld (a higher-order or special element) is not "
                         "supported: only linear lines, triangles, quadrangles, tetrahedra and "
                         "hexahedra",
                         id);
    return FAIL(r, "unknown element type %lld", id);
  }
  if ((*type)->dim != edim)
    return FAIL(r, "a %s (element type %lld) cannot be in an entity of dimension %lld",
                (*type)->name, id, edim);
  return FEA_SUCCESS;
}

static fea_status read_elements(struct reader *r) {
  static const char *sec = "$Elements";
  if (!r->have_nodes) return FAIL(r, "$Elements comes before $Nodes");
  /* An element takes at least "1 1\n". */
  const long long max_elements = r->size / 4;
  long long nblocks, nelem, emin, emax, range;
  FEA_CALL(read_section_header(r, sec, "'numEntityBlocks numElements minElementTag maxElementTag'",
                               "element", "gmsh.model.mesh.renumberElements()", max_elements,
                               &nblocks, &nelem, &emin, &emax, &range));
  const long long header = r->line;
  const char *p;
  r->elem_seen = calloc((size_t)(range > 0 ? range : 1), 1);
  if (!r->elem_seen)
    return FEA_ERROR(r->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %lld element tags", range);

  long long done = 0;
  for (long long b = 0; b < nblocks; b++) {
    FEA_CALL(need_line(r, sec,
                       "an entity block 'entityDim entityTag elementType numElementsInBlock'"));
    long long edim, etag, id, count;
    p = r->buf;
    FEA_CALL(get_int(r, &p, "the entity dimension", &edim));
    FEA_CALL(get_int(r, &p, "the entity tag", &etag));
    FEA_CALL(get_int(r, &p, "the element type", &id));
    FEA_CALL(get_count(r, &p, "the number of elements in the block", max_elements, &count));
    FEA_CALL(line_end(r, p, "the number of elements in the block"));
    if (edim < 0 || edim > 3) return FAIL(r, "entity dimension %lld is not 0, 1, 2 or 3", edim);
    const struct gmsh_type *type;
    FEA_CALL(block_type(r, id, edim, &type));
    if (count > nelem - done)
      return FAIL(r, "the blocks hold more than the %lld elements declared at line %lld", nelem,
                  header);
    /* A higher dimension replaces the cells kept so far; the same dimension
     * must bring the same type. */
    if (type->dim > 0 && (!r->top || type->dim > r->top->dim)) {
      r->cells_cap = 0; /* grow_cells resizes the arrays to the new type's nodes */
      r->top = type;
      r->top_line = r->line;
      r->num_cells = 0;
    } else if (r->top && type->dim == r->top->dim && type != r->top) {
      return UNSUPPORTED(r,
                         "mixed cell types: %ss (from line %lld) and %ss; a libfeaccel mesh "
                         "has one cell type",
                         r->top->name, r->top_line, type->name);
    }
    const int keep = r->top == type, low = type->dim <= 2;
    for (long long i = 0; i < count; i++) {
      FEA_CALL(need_line(r, sec, "an element line 'elementTag nodeTag...'"));
      p = r->buf;
      long long etg;
      FEA_CALL(get_int(r, &p, "an element tag", &etg));
      if (etg < emin || etg > emax)
        return FAIL(r, "element tag %lld is outside the range %lld..%lld declared at line %lld",
                    etg, emin, emax, header);
      if (r->elem_seen[etg - emin]) return FAIL(r, "element tag %lld is used twice", etg);
      r->elem_seen[etg - emin] = 1;
      if (keep) {
        FEA_CALL(grow_cells(r));
        r->cell_tag[r->num_cells] = etg;
        r->cell_line[r->num_cells] = r->line;
      }
      if (low) {
        FEA_CALL(grow_low(r));
        fea_index *ln = r->low_nodes + r->num_low * FEA_FACET_MAX_NODES;
        for (int k = 0; k < FEA_FACET_MAX_NODES; k++) ln[k] = -1;
        r->low_dim[r->num_low] = (unsigned char)type->dim;
        r->low_entity[r->num_low] = etag >= 1 && etag <= INT_MAX ? (int)etag : 0;
      }
      for (int k = 0; k < type->nodes; k++) {
        long long t;
        char what[64];
        snprintf(what, sizeof what, "node tag %d of %d of a %s", k + 1, type->nodes, type->name);
        FEA_CALL(get_int(r, &p, what, &t));
        /* An empty $Nodes may declare any tag range ("0 0 1 100"): its tags
         * have no table to look up, so the range check below would pass. */
        if (r->num_nodes == 0)
          return FAIL(r, "node tag %lld is not defined: $Nodes (line %lld) declares no nodes", t,
                      r->nodes_line);
        if (t < r->min_tag || t > r->max_tag)
          return FAIL(r, "node tag %lld is outside the range %lld..%lld of $Nodes (line %lld)", t,
                      (long long)r->min_tag, (long long)r->max_tag, r->nodes_line);
        fea_index v = r->index_of[t - r->min_tag];
        if (v < 0) return FAIL(r, "node tag %lld is not defined", t);
        if (keep) r->cell_nodes[r->num_cells * type->nodes + k] = v;
        if (low) r->low_nodes[r->num_low * FEA_FACET_MAX_NODES + k] = v;
      }
      FEA_CALL(line_end(r, p, "the element's node tags"));
      if (keep) r->num_cells++;
      if (low) r->num_low++;
    }
    done += count;
  }
  if (done != nelem)
    return FAIL_AT(r, FEA_ERR_IO, header,
                   "the %lld blocks hold %lld elements, but this line "
                   "declares %lld",
                   nblocks, done, nelem);
  FEA_CALL(expect_text(r, "$EndElements", "the elements"));
  r->have_elements = 1;
  return FEA_SUCCESS;
}

/* ---- the mesh ------------------------------------------------------------------------------- */

/* The node tags of cell c, for messages: "4 9 10 5". */
static void cell_tags(const struct reader *r, fea_index c, char *buf, size_t len) {
  size_t used = 0;
  buf[0] = '\0';
  for (int k = 0; k < r->top->nodes && used < len; k++)
    used += (size_t)snprintf(buf + used, len - used, "%s%lld", k ? " " : "",
                             (long long)r->tag[r->cell_nodes[c * r->top->nodes + k]]);
}

/* The kept nodes must not vary in the dropped coordinates. */
static fea_status check_flat(const struct reader *r, const fea_index *new_index, int dim) {
  double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
  fea_index first = -1;
  for (fea_index i = 0; i < r->num_nodes; i++) {
    if (new_index[i] < 0) continue;
    if (first < 0) first = i;
    for (int k = 0; k < 3; k++) {
      lo[k] = fmin(lo[k], r->xyz[3 * i + k]);
      hi[k] = fmax(hi[k], r->xyz[3 * i + k]);
    }
  }
  double extent = 0.0;
  for (int k = 0; k < dim; k++) extent = fmax(extent, hi[k] - lo[k]);
  for (fea_index i = 0; i < r->num_nodes; i++) {
    if (new_index[i] < 0) continue;
    for (int k = dim; k < 3; k++) {
      double x0 = r->xyz[3 * first + k], x = r->xyz[3 * i + k];
      if (fabs(x - x0) > 1e-12 * extent) {
        static const char *const what[4] = {"", "1D mesh is not on a line y = z = const",
                                            "2D mesh is not in a plane z = const", ""};
        return FAIL_AT(r, FEA_ERR_IO, r->line_of[i],
                       "%s: node tag %lld has %c = %g, node tag "
                       "%lld (line %lld) has %c = %g",
                       what[dim], (long long)r->tag[i], "xyz"[k], x, (long long)r -> tag[first],
                       r -> line_of[first], "xyz"[k], x0);
      }
    }
  }
  return FEA_SUCCESS;
}

static int cmp_int(const void *pa, const void *pb) {
  const int a = *(const int *)pa, b = *(const int *)pb;
  return (a > b) - (a < b);
}

/* The entity of dimension dim and tag tag (its index), or -1: ents lists
 * (tag, index) pairs of that dimension sorted by tag. */
static int find_entity(const int (*ents)[2], int n, int tag) {
  int lo = 0, hi = n;
  while (lo < hi) {
    const int mid = lo + (hi - lo) / 2;
    if (ents[mid][0] < tag)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < n && ents[lo][0] == tag ? ents[lo][1] : -1;
}

static int cmp_pair(const void *pa, const void *pb) {
  const int *a = pa, *b = pb;
  return (a[0] > b[0]) - (a[0] < b[0]);
}

/* The groups of dimension fdim: their tags (ascending, distinct) into
 * b->group_tag and names into b->group_name. */
static fea_status collect_groups(struct reader *r, int fdim, fea_mesh_boundary *b) {
  int n = 0;
  for (int e = 0; e < r->num_ents; e++)
    if (r->ent_dim[e] == fdim) n += r->ent_start[e + 1] - r->ent_start[e];
  for (int i = 0; i < r->num_names; i++) n += r->name_dim[i] == fdim;
  b->group_tag = malloc((size_t)(n > 0 ? n : 1) * sizeof *b->group_tag);
  if (!b->group_tag)
    return FEA_ERROR(r->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %d physical groups", n);
  int k = 0;
  for (int e = 0; e < r->num_ents; e++)
    for (int j = r->ent_start[e]; r->ent_dim[e] == fdim && j < r->ent_start[e + 1]; j++)
      b->group_tag[k++] = r->ent_phys[j];
  for (int i = 0; i < r->num_names; i++)
    if (r->name_dim[i] == fdim) b->group_tag[k++] = r->name_tag[i];
  qsort(b->group_tag, (size_t)k, sizeof *b->group_tag, cmp_int);
  int ng = 0;
  for (int i = 0; i < k; i++)
    if (i == 0 || b->group_tag[i] != b->group_tag[i - 1]) b->group_tag[ng++] = b->group_tag[i];
  b->num_groups = ng;
  b->group_name = calloc((size_t)(ng > 0 ? ng : 1), sizeof *b->group_name);
  b->group_facets = calloc((size_t)(ng > 0 ? ng : 1), sizeof *b->group_facets);
  if (!b->group_name || !b->group_facets)
    return FEA_ERROR(r->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %d physical groups", ng);
  for (int i = 0; i < r->num_names; i++) {
    if (r->name_dim[i] != fdim) continue;
    const int g = fea_mesh_boundary_find_tag(b, r->name_tag[i]);
    const size_t len = strlen(r->name_str[i]);
    b->group_name[g] = malloc(len + 1);
    if (!b->group_name[g]) return FEA_ERROR(r->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for a name");
    memcpy(b->group_name[g], r->name_str[i], len + 1);
  }
  return FEA_SUCCESS;
}

/* The entities of dimension fdim with groups (each group once) into
 * b->entity_start / group_of, and a (tag, entity) table sorted by tag. */
static fea_status collect_entities(struct reader *r, int fdim, fea_mesh_boundary *b,
                                   int (**table)[2]) {
  int ne = 0, nphys = 0;
  for (int e = 0; e < r->num_ents; e++)
    if (r->ent_dim[e] == fdim && r->ent_start[e + 1] > r->ent_start[e]) {
      ne++;
      nphys += r->ent_start[e + 1] - r->ent_start[e];
    }
  b->entity_start = malloc((size_t)(ne + 1) * sizeof *b->entity_start);
  b->group_of = malloc((size_t)(nphys > 0 ? nphys : 1) * sizeof *b->group_of);
  *table = malloc((size_t)(ne > 0 ? ne : 1) * sizeof **table);
  if (!b->entity_start || !b->group_of || !*table)
    return FEA_ERROR(r->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %d entities", ne);
  int k = 0, used = 0;
  b->entity_start[0] = 0;
  for (int e = 0; e < r->num_ents; e++) {
    if (r->ent_dim[e] != fdim || r->ent_start[e + 1] == r->ent_start[e]) continue;
    for (int j = r->ent_start[e]; j < r->ent_start[e + 1]; j++) {
      const int g = fea_mesh_boundary_find_tag(b, r->ent_phys[j]);
      int seen = 0; /* a tag an entity lists twice counts once */
      for (int i = b->entity_start[k]; i < used && !seen; i++) seen = b->group_of[i] == g;
      if (!seen) b->group_of[used++] = g;
    }
    (*table)[k][0] = r->ent_tag[e];
    (*table)[k][1] = k;
    b->entity_start[++k] = used;
  }
  b->num_entities = ne;
  qsort(*table, (size_t)ne, sizeof **table, cmp_pair);
  return FEA_SUCCESS;
}

/* The boundary facets with their groups (mesh-boundary.h) into m, when the
 * file has physical groups of dimension dim - 1: its elements of that
 * dimension whose nodes the cells use, in file order. */
static fea_status build_boundary(struct reader *r, const fea_index *new_index, fea_mesh *m) {
  const int fdim = m->dim - 1;
  fea_mesh_boundary *b = calloc(1, sizeof *b);
  if (!b) return FEA_ERROR(r->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for the boundary");
  int(*table)[2] = NULL;
  fea_status s = collect_groups(r, fdim, b);
  if (s == FEA_SUCCESS && b->num_groups == 0) { /* nothing to name: keep nothing */
    fea_mesh_boundary_free(b);
    return FEA_SUCCESS;
  }
  if (s == FEA_SUCCESS) s = collect_entities(r, fdim, b, &table);
  fea_index nf = 0;
  for (fea_index i = 0; i < r->num_low && s == FEA_SUCCESS; i++) {
    int used = r->low_dim[i] == fdim;
    for (int k = 0; k < FEA_FACET_MAX_NODES && used; k++) {
      const fea_index v = r->low_nodes[i * FEA_FACET_MAX_NODES + k];
      used = v < 0 || new_index[v] >= 0;
    }
    nf += used;
  }
  if (s == FEA_SUCCESS) {
    b->facet_nodes = malloc((size_t)(nf > 0 ? nf : 1) * FEA_FACET_MAX_NODES *
                            sizeof *b->facet_nodes);
    b->facet_tags = malloc((size_t)(nf > 0 ? nf : 1) * FEA_FACET_MAX_NODES * sizeof *b->facet_tags);
    b->facet_entity = malloc((size_t)(nf > 0 ? nf : 1) * sizeof *b->facet_entity);
    if (!b->facet_nodes || !b->facet_tags || !b->facet_entity)
      s = FEA_ERROR(r->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %lld boundary facets",
                    (long long)nf);
  }
  for (fea_index i = 0; i < r->num_low && s == FEA_SUCCESS; i++) {
    int used = r->low_dim[i] == fdim;
    fea_index nodes[FEA_FACET_MAX_NODES], tags[FEA_FACET_MAX_NODES];
    for (int k = 0; k < FEA_FACET_MAX_NODES && used; k++) {
      const fea_index v = r->low_nodes[i * FEA_FACET_MAX_NODES + k];
      used = v < 0 || new_index[v] >= 0;
      nodes[k] = v < 0 ? -1 : new_index[v];
      tags[k] = v < 0 ? -1 : r->tag[v]; /* messages name nodes as the file does */
    }
    if (!used) continue;
    const fea_index f = b->num_facets++;
    memcpy(b->facet_nodes + f * FEA_FACET_MAX_NODES, nodes, sizeof nodes);
    memcpy(b->facet_tags + f * FEA_FACET_MAX_NODES, tags, sizeof tags);
    const int e = find_entity((const int(*)[2])table, b->num_entities, r->low_entity[i]);
    b->facet_entity[f] = e;
    for (int j = e < 0 ? 0 : b->entity_start[e]; e >= 0 && j < b->entity_start[e + 1]; j++)
      b->group_facets[b->group_of[j]]++;
  }
  free(table);
  if (s != FEA_SUCCESS) {
    fea_mesh_boundary_free(b);
    return s;
  }
  m->boundary = b;
  return FEA_SUCCESS;
}

static fea_status build_mesh(struct reader *r, fea_mesh **out) {
  if (!r->top || r->num_cells == 0)
    return FAIL_AT(r, FEA_ERR_IO, r->line,
                   "the file has no lines, surfaces or volumes: no cells "
                   "of dimension 1 to 3");
  const int dim = r->top->dim, npc = r->top->nodes;
  fea_index *new_index = malloc((size_t)r->num_nodes * sizeof *new_index);
  if (!new_index) return FEA_ERROR(r->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory to renumber nodes");
  for (fea_index i = 0; i < r->num_nodes; i++) new_index[i] = -1;
  for (fea_index j = 0; j < r->num_cells * npc; j++) new_index[r->cell_nodes[j]] = 0;
  fea_index used = 0;
  for (fea_index i = 0; i < r->num_nodes; i++)
    if (new_index[i] == 0) new_index[i] = used++;
  fea_mesh *m = NULL;
  fea_status s = check_flat(r, new_index, dim);
  if (s == FEA_SUCCESS) s = fea_mesh_alloc(r->ctx, dim, r->top->cell, used, r->num_cells, &m);
  if (s != FEA_SUCCESS) {
    free(new_index);
    return s;
  }
  for (fea_index i = 0; i < r->num_nodes; i++)
    if (new_index[i] >= 0)
      memcpy(m->coords + new_index[i] * dim, r->xyz + 3 * i, (size_t)dim * sizeof(double));
  for (fea_index j = 0; j < r->num_cells * npc; j++) m->cells[j] = new_index[r->cell_nodes[j]];

  char why[160], tags[160];
  for (fea_index c = 0; c < m->num_cells; c++) {
    if (!fea_mesh_cell_problem(m, c, why, sizeof why)) continue;
    const int inverted = strncmp(why, "is inverted", 11) == 0;
    cell_tags(r, c, tags, sizeof tags);
    s = FAIL_AT(r, FEA_ERR_IO, r->cell_line[c], "element %lld (%s, node tags %s) %s%s",
                (long long)r->cell_tag[c], r->top->name, tags, why,
                inverted ? "; libfeaccel does not reorder nodes: reverse the orientation of that "
                           "entity in Gmsh (e.g. gmsh.model.mesh.reverse())"
                         : "");
    fea_object_release(m);
    free(new_index);
    return s;
  }
  s = build_boundary(r, new_index, m);
  free(new_index);
  if (s != FEA_SUCCESS) {
    fea_object_release(m);
    return s;
  }
  *out = m;
  return FEA_SUCCESS;
}

static fea_status read_file(struct reader *r, fea_mesh **out) {
  int got;
  FEA_CALL(read_line(r, &got));
  if (!got) return FAIL_AT(r, FEA_ERR_IO, 1, "the file is empty, expected $MeshFormat");
  if (!header_is(r->buf, "$MeshFormat")) {
    char tok[32];
    const char *p = skip_blanks(r->buf);
    if (strncmp(p, "$MeshFormat", 11) == 0 && (p[11] == ' ' || p[11] == '\t'))
      return FAIL(r, "unexpected '%s' after $MeshFormat", show(skip_blanks(p + 11), tok));
    return FAIL(r, "not a Gmsh file: expected $MeshFormat, found '%s'", show(p, tok));
  }
  FEA_CALL(read_format(r));
  long long nodes_at = 0, elements_at = 0;
  for (;;) {
    FEA_CALL(read_line(r, &got));
    if (!got) break;
    const char *p = skip_blanks(r->buf);
    if (*p == '\0') continue; /* blank lines between sections */
    char tok[32];
    if (*p != '$') return FAIL(r, "expected a section such as $Nodes, found '%s'", show(p, tok));
    char name[72];
    const size_t len = strcspn(p + 1, " \t\r");
    if (len == 0 || len >= sizeof name || !header_is(p + 1 + len, ""))
      return FAIL(r, "'%s' is not a section name", show(p, tok));
    memcpy(name, p + 1, len);
    name[len] = '\0';
    if (strncmp(name, "End", 3) == 0)
      return FAIL(r, "'%s' ends a section that was not started", show(p, tok));
    if (strcmp(name, "MeshFormat") == 0) return FAIL(r, "a second $MeshFormat section");
    if (strcmp(name, "Nodes") == 0) {
      if (nodes_at) return FAIL(r, "a second $Nodes section (the first is at line %lld)", nodes_at);
      nodes_at = r->line;
      FEA_CALL(read_nodes(r));
    } else if (strcmp(name, "Elements") == 0) {
      if (elements_at)
        return FAIL(r, "a second $Elements section (the first is at line %lld)", elements_at);
      elements_at = r->line;
      FEA_CALL(read_elements(r));
    } else if (strcmp(name, "Entities") == 0) {
      if (r->entities_line)
        return FAIL(r, "a second $Entities section (the first is at line %lld)", r->entities_line);
      FEA_CALL(read_entities(r));
    } else if (strcmp(name, "PhysicalNames") == 0) {
      if (r->names_line)
        return FAIL(r, "a second $PhysicalNames section (the first is at line %lld)",
                    r->names_line);
      FEA_CALL(read_physical_names(r));
    } else {
      FEA_CALL(skip_section(r, name));
    }
  }
  if (!r->have_nodes) return FAIL_AT(r, FEA_ERR_IO, r->line + 1, "the file has no $Nodes section");
  if (!r->have_elements)
    return FAIL_AT(r, FEA_ERR_IO, r->line + 1, "the file has no $Elements section");
  return build_mesh(r, out);
}

/* What a file that is not a regular one is, for messages. */
static const char *file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "a special file";
}

fea_status fea_mesh_gmsh_read(fea_context *ctx, const char *path, fea_mesh **out) {
  struct reader *r = calloc(1, sizeof *r);
  FEA_CHECK(r, ctx, FEA_ERR_OUT_OF_MEMORY, "no memory to read %s", path);
  r->ctx = ctx;
  r->path = path;
  r->cap = 256;
  r->buf = malloc(r->cap);
  fea_status s = FEA_SUCCESS;
  /* Opened without blocking and checked before any read: opening a FIFO for
   * reading would otherwise wait for a writer forever. */
  struct stat st;
  const int fd = r->buf ? open(path, O_RDONLY | O_NONBLOCK) : -1;
  if (!r->buf)
    s = FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY, "no memory to read %s", path);
  else if (fd < 0)
    s = FEA_ERROR(ctx, FEA_ERR_IO, "%s: %s", path, strerror(errno));
  else if (fstat(fd, &st) != 0)
    s = FEA_ERROR(ctx, FEA_ERR_IO, "%s: %s", path, strerror(errno));
  else if (!S_ISREG(st.st_mode))
    s = FEA_ERROR(ctx, FEA_ERR_IO, "%s: is %s, not a regular file", path, file_kind(st.st_mode));
  else if (fcntl(fd, F_SETFL, 0) != 0 || !(r->f = fdopen(fd, "rb"))) /* O_NONBLOCK off */
    s = FEA_ERROR(ctx, FEA_ERR_IO, "%s: %s", path, strerror(errno));
  if (fd >= 0 && !r->f) close(fd);
  if (s == FEA_SUCCESS) {
    r->size = (long long)st.st_size;
    s = read_file(r, out);
  }
  if (r->f) fclose(r->f);
  free(r->buf);
  free(r->tag);
  free(r->index_of);
  free(r->line_of);
  free(r->xyz);
  free(r->cell_nodes);
  free(r->cell_tag);
  free(r->cell_line);
  free(r->elem_seen);
  free(r->low_nodes);
  free(r->low_dim);
  free(r->low_entity);
  free(r->ent_dim);
  free(r->ent_tag);
  free(r->ent_start);
  free(r->ent_phys);
  free(r->ent_line);
  for (int i = 0; i < r->num_names; i++) free(r->name_str[i]);
  free(r->name_str);
  free(r->name_dim);
  free(r->name_tag);
  free(r->name_line);
  free(r);
  return s;
}
