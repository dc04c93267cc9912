/* The .vtu writer: files written for each cell type with node and cell
 * fields parse back as well-formed XML (checked here by a small strict
 * parser, and by Python's xml.etree where python3 is installed) with the
 * right counts, and every number reads back exactly. Bad fields and paths
 * fail with messages naming them. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mesh-common.h"

/* ---- a strict little XML reader ------------------------------------------------------------- */

#define MAX_ARRAYS 16

struct data_array {
  char parent[32]; /* PointData, CellData, Points or Cells */
  char name[64];   /* Name, unescaped ("" when absent) */
  char type[16];
  int components; /* NumberOfComponents, 1 when absent */
  double *values;
  long long count;
};

struct vtu {
  char root_type[32], version[16];
  long long points, cells;
  int narrays;
  struct data_array arrays[MAX_ARRAYS];
};

/* Unescape the five entities of XML; anything else after '&' is an error. */
static void unescape(const char *s, size_t n, char *out, size_t cap) {
  static const char *const ent[5] = {"&amp;", "&lt;", "&gt;", "&quot;", "&apos;"};
  static const char ch[5] = {'&', '<', '>', '"', '\''};
  size_t o = 0;
  for (size_t i = 0; i < n;) {
    cr_assert(s[i] != '<', "'<' inside a value");
    int hit = -1;
    if (s[i] == '&') {
      for (int e = 0; e < 5; e++)
        if (strncmp(s + i, ent[e], strlen(ent[e])) == 0) hit = e;
      cr_assert(hit >= 0, "a bare '&' or unknown entity at '%.10s'", s + i);
    }
    cr_assert(o + 1 < cap);
    out[o++] = hit >= 0 ? ch[hit] : s[i];
    i += hit >= 0 ? strlen(ent[hit]) : 1;
  }
  out[o] = '\0';
}

/* Value of attribute `name` in the tag text [p, end), unescaped; 0 if absent.
 * Also checks that every attribute is name="value". */
static int attribute(const char *p, const char *end, const char *name, char *out, size_t cap) {
  int found = 0;
  while (p < end) {
    while (p < end && (*p == ' ' || *p == '\n')) p++;
    if (p >= end || *p == '/' || *p == '?') break;
    const char *n0 = p;
    while (p < end && *p != '=' && *p != ' ') p++;
    cr_assert(p < end && *p == '=' && p[1] == '"', "attribute without =\"...\": %.20s", n0);
    const char *v0 = p + 2, *v1 = memchr(v0, '"', (size_t)(end - v0));
    cr_assert_not_null(v1, "unterminated attribute value");
    if ((size_t)(p - n0) == strlen(name) && strncmp(n0, name, strlen(name)) == 0) {
      unescape(v0, (size_t)(v1 - v0), out, cap);
      found = 1;
    }
    p = v1 + 1;
  }
  return found;
}

/* Parse a whole .vtu: elements must nest and close, attributes be quoted,
 * text hold numbers only. */
static struct vtu parse_vtu(const char *path) {
  FILE *f = fopen(path, "rb");
  cr_assert_not_null(f, "%s: %s", path, strerror(errno));
  fseek(f, 0, SEEK_END);
  long size = ftell(f);
  rewind(f);
  char *s = malloc((size_t)size + 1);
  cr_assert_eq(fread(s, 1, (size_t)size, f), (size_t)size);
  s[size] = '\0';
  fclose(f);
  cr_assert(strncmp(s, "<?xml version=\"1.0\"?>\n", 22) == 0, "no XML declaration");
  struct vtu v;
  memset(&v, 0, sizeof v);
  v.points = v.cells = -1;
  char stack[16][32];
  int depth = 0, seen_root = 0;
  const char *p = s + 22;
  while (*p) {
    const char *lt = strchr(p, '<');
    /* Text between tags: whitespace, or the numbers of the open DataArray. */
    const char *text_end = lt ? lt : p + strlen(p);
    int in_array = depth > 0 && strcmp(stack[depth - 1], "DataArray") == 0;
    if (in_array) {
      struct data_array *a = &v.arrays[v.narrays - 1];
      char *q = (char *)p;
      while (q < text_end) {
        while (q < text_end && (*q == ' ' || *q == '\n')) q++;
        if (q >= text_end) break;
        char *e;
        double x = strtod(q, &e);
        cr_assert(e > q && e <= text_end, "not a number in DataArray '%s': %.20s", a->name, q);
        a->values = realloc(a->values, (size_t)(a->count + 1) * sizeof *a->values);
        a->values[a->count++] = x;
        q = e;
      }
    } else {
      for (const char *q = p; q < text_end; q++)
        cr_assert(*q == ' ' || *q == '\n', "stray text outside a DataArray: %.20s", q);
    }
    if (!lt) break;
    const char *gt = strchr(lt, '>');
    cr_assert_not_null(gt, "unterminated tag");
    if (lt[1] == '/') { /* closing tag */
      cr_assert(depth > 0, "closing tag without an open element");
      size_t n = strlen(stack[depth - 1]);
      cr_assert(strncmp(lt + 2, stack[depth - 1], n) == 0 && lt + 2 + n == gt,
                "</%.*s> closes <%s>", (int)(gt - lt - 2), lt + 2, stack[depth - 1]);
      depth--;
    } else {
      char name[32];
      size_t n = strcspn(lt + 1, " />");
      cr_assert(n > 0 && n < sizeof name);
      memcpy(name, lt + 1, n);
      name[n] = '\0';
      const int empty = gt[-1] == '/';
      char val[64];
      if (strcmp(name, "VTKFile") == 0) {
        cr_assert(depth == 0 && !seen_root, "VTKFile is not the single root");
        seen_root = 1;
        cr_assert(attribute(lt + 1 + n, gt, "type", v.root_type, sizeof v.root_type));
        cr_assert(attribute(lt + 1 + n, gt, "version", v.version, sizeof v.version));
      } else if (strcmp(name, "Piece") == 0) {
        cr_assert(attribute(lt + 1 + n, gt, "NumberOfPoints", val, sizeof val));
        v.points = atoll(val);
        cr_assert(attribute(lt + 1 + n, gt, "NumberOfCells", val, sizeof val));
        v.cells = atoll(val);
      } else if (strcmp(name, "DataArray") == 0) {
        cr_assert(v.narrays < MAX_ARRAYS && depth > 0);
        struct data_array *a = &v.arrays[v.narrays++];
        memset(a, 0, sizeof *a);
        snprintf(a->parent, sizeof a->parent, "%s", stack[depth - 1]);
        attribute(lt + 1 + n, gt, "Name", a->name, sizeof a->name);
        cr_assert(attribute(lt + 1 + n, gt, "type", a->type, sizeof a->type));
        cr_assert(attribute(lt + 1 + n, gt, "format", val, sizeof val) &&
                  strcmp(val, "ascii") == 0);
        a->components = attribute(lt + 1 + n, gt, "NumberOfComponents", val, sizeof val) ? atoi(val)
                                                                                         : 1;
      } else {
        attribute(lt + 1 + n, gt, "-", val, sizeof val); /* only checks the syntax */
      }
      if (!empty) {
        cr_assert(depth < 16);
        snprintf(stack[depth++], sizeof stack[0], "%s", name);
      }
    }
    p = gt + 1;
  }
  cr_assert_eq(depth, 0, "<%s> is not closed", depth ? stack[depth - 1] : "");
  cr_assert(seen_root);
  free(s);
  return v;
}

static void free_vtu(struct vtu *v) {
  for (int i = 0; i < v->narrays; i++) free(v->arrays[i].values);
}

static const struct data_array *find_array(const struct vtu *v, const char *parent,
                                           const char *name) {
  for (int i = 0; i < v->narrays; i++)
    if (strcmp(v->arrays[i].parent, parent) == 0 && strcmp(v->arrays[i].name, name) == 0)
      return &v->arrays[i];
  cr_assert_fail("no DataArray '%s' in %s", name, parent);
  return NULL;
}

/* ---- writing and reading back --------------------------------------------------------------- */

static char tmp_dir[256];

static const char *tmp_file(const char *name) {
  static char path[300];
  if (!tmp_dir[0]) {
    const char *base = getenv("TMPDIR");
    snprintf(tmp_dir, sizeof tmp_dir, "%s/fea-vtu-XXXXXX", base && *base ? base : "/tmp");
    cr_assert_not_null(mkdtemp(tmp_dir));
  }
  snprintf(path, sizeof path, "%s/%s", tmp_dir, name);
  return path;
}

static fea_mesh *box(fea_context *ctx, int dim, int simplices) {
  fea_mesh_desc d = FEA_MESH_DESC_INIT;
  d.dim = dim;
  d.n[0] = 3;
  d.n[1] = 2;
  d.n[2] = 2;
  d.upper[0] = 1.0 / 3.0; /* values that need all 17 digits */
  d.simplices = simplices;
  fea_mesh *m = NULL;
  OK(fea_mesh_create_structured(ctx, &d, &m));
  return m;
}

/* Write m with a scalar node field, a 3-component node field and a cell
 * field of `cell_comp` components, read it back and compare everything. */
static void round_trip(const fea_mesh *m, int cell_comp, int vtk_type, const char *path) {
  struct arrays a = get_arrays(m);
  double *u = malloc((size_t)a.nn * sizeof *u), *w = malloc((size_t)(3 * a.nn) * sizeof *w);
  double *q = malloc((size_t)(cell_comp * a.nc) * sizeof *q);
  for (fea_index i = 0; i < a.nn; i++) u[i] = sin((double)i) * 1e-300;
  for (fea_index i = 0; i < 3 * a.nn; i++) w[i] = -1.0 / (double)(i + 7);
  for (fea_index i = 0; i < cell_comp * a.nc; i++) q[i] = (double)i * 1e10 + 0.1;
  const fea_field fields[3] = {
      {"u", FEA_FIELD_NODE, 1, u},
      {"grad <u> & \"q\" 'x'", FEA_FIELD_CELL, cell_comp, q},
      {"w", FEA_FIELD_NODE, 3, w},
  };
  OK(fea_mesh_write_vtu(m, path, 3, fields));
  struct vtu v = parse_vtu(path);
  cr_assert_str_eq(v.root_type, "UnstructuredGrid");
  cr_assert_str_eq(v.version, "0.1");
  cr_assert_eq(v.points, a.nn);
  cr_assert_eq(v.cells, a.nc);
  cr_assert_eq(v.narrays, 3 + 1 + 3, "3 fields, the points and 3 cell arrays");
  const struct data_array *pts = find_array(&v, "Points", "");
  cr_assert_eq(pts->components, 3);
  cr_assert_eq(pts->count, 3 * a.nn);
  for (fea_index i = 0; i < a.nn; i++)
    for (int k = 0; k < 3; k++)
      cr_assert_eq(pts->values[3 * i + k], k < a.dim ? a.x[i * a.dim + k] : 0.0,
                   "point %lld coordinate %d does not read back exactly", (long long)i, k);
  const struct data_array *conn = find_array(&v, "Cells", "connectivity");
  const struct data_array *offs = find_array(&v, "Cells", "offsets");
  const struct data_array *types = find_array(&v, "Cells", "types");
  cr_assert_eq(conn->count, a.nc * a.npc);
  cr_assert_eq(offs->count, a.nc);
  cr_assert_eq(types->count, a.nc);
  for (fea_index c = 0; c < a.nc; c++) {
    cr_assert_eq(offs->values[c], (double)((c + 1) * a.npc));
    cr_assert_eq(types->values[c], (double)vtk_type);
    for (int l = 0; l < a.npc; l++)
      cr_assert_eq(conn->values[c * a.npc + l], (double)a.c[c * a.npc + l]);
  }
  const struct data_array *fu = find_array(&v, "PointData", "u");
  const struct data_array *fw = find_array(&v, "PointData", "w");
  const struct data_array *fq = find_array(&v, "CellData", "grad <u> & \"q\" 'x'");
  cr_assert(fu->components == 1 && fw->components == 3 && fq->components == cell_comp);
  cr_assert(fu->count == a.nn && fw->count == 3 * a.nn && fq->count == cell_comp * a.nc);
  cr_assert_eq(memcmp(fu->values, u, (size_t)a.nn * sizeof *u), 0, "u does not read back exactly");
  cr_assert_eq(memcmp(fw->values, w, (size_t)(3 * a.nn) * sizeof *w), 0);
  cr_assert_eq(memcmp(fq->values, q, (size_t)(cell_comp * a.nc) * sizeof *q), 0);
  free_vtu(&v);
  free(u);
  free(w);
  free(q);
  free_arrays(&a);
}

Test(vtu, every_cell_type_reads_back) {
  fea_context *ctx = open_ref();
  struct {
    int dim, simplices, vtk_type, cell_comp;
    const char *name;
  } cases[] = {{1, 0, 3, 1, "line.vtu"},
               {2, 1, 5, 2, "tri.vtu"},
               {2, 0, 9, 3, "quad.vtu"},
               {3, 1, 10, 6, "tet.vtu"},
               {3, 0, 12, 9, "hex.vtu"}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    fea_mesh *m = box(ctx, cases[i].dim, cases[i].simplices);
    const char *path = tmp_file(cases[i].name);
    round_trip(m, cases[i].cell_comp, cases[i].vtk_type, path);
    unlink(path);
    OK(fea_mesh_destroy(&m));
  }
  /* No fields at all. */
  fea_mesh *m = box(ctx, 2, 0);
  const char *path = tmp_file("bare.vtu");
  OK(fea_mesh_write_vtu(m, path, 0, NULL));
  struct vtu v = parse_vtu(path);
  cr_assert_eq(v.narrays, 4);
  free_vtu(&v);
  unlink(path);
  OK(fea_mesh_destroy(&m));
  rmdir(tmp_dir);
  OK(fea_context_destroy(&ctx));
}

/* An independent parser: Python's xml.etree, with the counts checked there. */
static const char python_check[] =
    "import sys, xml.etree.ElementTree as ET\n"
    "root = ET.parse(sys.argv[1]).getroot()\n"
    "assert root.tag == 'VTKFile' and root.get('type') == 'UnstructuredGrid'\n"
    "piece = root.find('UnstructuredGrid/Piece')\n"
    "n, c = int(piece.get('NumberOfPoints')), int(piece.get('NumberOfCells'))\n"
    "assert (n, c) == (int(sys.argv[2]), int(sys.argv[3])), (n, c)\n"
    "size = lambda a: len(a.text.split())\n"
    "assert size(piece.find('Points/DataArray')) == 3 * n\n"
    "for a in piece.findall('PointData/DataArray'):\n"
    "    assert size(a) == n * int(a.get('NumberOfComponents')), a.get('Name')\n"
    "for a in piece.findall('CellData/DataArray'):\n"
    "    assert size(a) == c * int(a.get('NumberOfComponents')), a.get('Name')\n"
    "names = [a.get('Name') for a in piece.iter('DataArray')]\n"
    "assert 'T<1> & \"x\"' in names, names\n"
    "cells = {a.get('Name'): a for a in piece.findall('Cells/DataArray')}\n"
    "assert size(cells['offsets']) == c and size(cells['types']) == c\n"
    "assert int(cells['offsets'].text.split()[-1]) == size(cells['connectivity'])\n";

Test(vtu, python_xml_parses_it) {
  if (system("python3 -c 'import xml.etree.ElementTree' 2>/dev/null") != 0)
    cr_skip_test("python3 with xml.etree is not available");
  fea_context *ctx = open_ref();
  fea_mesh *m = box(ctx, 3, 1);
  fea_index nn, nc;
  OK(fea_mesh_get_info(m, NULL, NULL, &nn, &nc));
  double *t = calloc((size_t)nn, sizeof *t), *s = calloc((size_t)(4 * nc), sizeof *s);
  const fea_field fields[2] = {{"T<1> & \"x\"", FEA_FIELD_NODE, 1, t}, {"s", FEA_FIELD_CELL, 4, s}};
  const char *path = tmp_file("python.vtu");
  char vtu[300], script[320], cmd[1024];
  snprintf(vtu, sizeof vtu, "%s", path);
  OK(fea_mesh_write_vtu(m, vtu, 2, fields));
  snprintf(script, sizeof script, "%s/check.py", tmp_dir);
  FILE *f = fopen(script, "w");
  cr_assert_not_null(f);
  fputs(python_check, f);
  fclose(f);
  snprintf(cmd, sizeof cmd, "python3 '%s' '%s' %lld %lld", script, vtu, (long long)nn,
           (long long)nc);
  int rc = system(cmd);
  cr_assert_eq(rc, 0, "Python's XML parser rejects %s (exit %d)", vtu, rc);
  /* The check can fail: a file cut short is not XML. */
  cr_assert_eq(truncate(vtu, 300), 0);
  strcat(cmd, " 2>/dev/null");
  cr_assert_neq(system(cmd), 0, "a truncated file passed the Python check");
  unlink(vtu);
  unlink(script);
  rmdir(tmp_dir);
  free(t);
  free(s);
  OK(fea_mesh_destroy(&m));
  OK(fea_context_destroy(&ctx));
}

/* ---- errors --------------------------------------------------------------------------------- */

Test(vtu, bad_fields_and_paths) {
  fea_context *ctx = open_ref();
  fea_mesh *m = box(ctx, 2, 0); /* 12 nodes, 6 cells */
  double v[12] = {0};
  const char *path = tmp_file("bad.vtu");
  struct {
    fea_field field;
    const char *needle;
  } bad[] = {
      {{NULL, FEA_FIELD_NODE, 1, v}, "field 0 has no name"},
      {{"", FEA_FIELD_NODE, 1, v}, "field 0 has no name"},
      {{"a\nb", FEA_FIELD_NODE, 1, v}, "control character 0x0a"},
      {{"u", (fea_field_location)2, 1, v}, "field 'u' has unknown location 2"},
      {{"u", FEA_FIELD_NODE, 0, v}, "field 'u' has 0 components, must be 1 to 9"},
      {{"u", FEA_FIELD_CELL, 10, v}, "field 'u' has 10 components"},
      {{"u", FEA_FIELD_NODE, 1, NULL}, "field 'u' has NULL values"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    EXPECT_FAIL(fea_mesh_write_vtu(m, path, 1, &bad[i].field), FEA_ERR_INVALID_ARG, ctx,
                bad[i].needle);
    cr_assert_neq(access(path, F_OK), 0, "a failed write left a file");
  }
  double nan_at_5[12] = {0};
  nan_at_5[5] = NAN;
  const fea_field with_nan = {"p", FEA_FIELD_NODE, 1, nan_at_5};
  EXPECT_FAIL(fea_mesh_write_vtu(m, path, 1, &with_nan), FEA_ERR_INVALID_ARG, ctx,
              "field 'p' value 5 (node 5, component 0) is nan");
  const fea_field twice[2] = {{"u", FEA_FIELD_NODE, 1, v}, {"u", FEA_FIELD_NODE, 1, v}};
  EXPECT_FAIL(fea_mesh_write_vtu(m, path, 2, twice), FEA_ERR_INVALID_ARG, ctx,
              "fields 0 and 1 are both named 'u' on the nodes");
  const fea_field node_and_cell[2] = {{"u", FEA_FIELD_NODE, 1, v}, {"u", FEA_FIELD_CELL, 1, v}};
  OK(fea_mesh_write_vtu(m, path, 2, node_and_cell)); /* different places: allowed */
  unlink(path);
  EXPECT_FAIL(fea_mesh_write_vtu(m, path, -1, NULL), FEA_ERR_INVALID_ARG, ctx, "num_fields = -1");
  EXPECT_FAIL(fea_mesh_write_vtu(m, path, 1, NULL), FEA_ERR_INVALID_ARG, ctx,
              "fields is NULL for num_fields = 1");
  EXPECT_FAIL(fea_mesh_write_vtu(m, NULL, 0, NULL), FEA_ERR_INVALID_ARG, ctx, "path");
  EXPECT_FAIL(fea_mesh_write_vtu(m, "", 0, NULL), FEA_ERR_INVALID_ARG, ctx, "path is empty");
  EXPECT_FAIL(fea_mesh_write_vtu(NULL, path, 0, NULL), FEA_ERR_INVALID_ARG, NULL, "mesh");
  /* Paths that cannot be written. */
  char missing[400];
  snprintf(missing, sizeof missing, "%s/no/such/dir/out.vtu", tmp_dir);
  EXPECT_FAIL(fea_mesh_write_vtu(m, missing, 0, NULL), FEA_ERR_IO, ctx,
              "No such file or directory");
  cr_assert(strstr(fea_context_last_error(ctx), missing), "the message does not name the path");
  struct stat st;
  if (stat("/dev/full", &st) == 0) {
    EXPECT_FAIL(fea_mesh_write_vtu(m, "/dev/full", 0, NULL), FEA_ERR_IO, ctx,
                "writing /dev/full failed: No space left on device");
    cr_assert_eq(stat("/dev/full", &st), 0, "the writer removed /dev/full");
  }
  rmdir(tmp_dir);
  OK(fea_mesh_destroy(&m));
  OK(fea_context_destroy(&ctx));
}
