/* The Gmsh .msh 4.1 reader: the real files of tests/data (written by Gmsh
 * 4.15.2, see tests/data/make-meshes.py), hand-written files exercising the
 * format's corners, and bad files made from the good ones by one edit each,
 * which must fail with FEA_ERR_IO (or FEA_ERR_UNSUPPORTED for valid input
 * libfeaccel cannot represent) naming the file and the line. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mesh-common.h"

/* ---- files ---------------------------------------------------------------------------------- */

static const char *data_dir(void) {
  const char *dir = getenv("FEA_TEST_DATA");
  if (!dir || !*dir) cr_skip_test("FEA_TEST_DATA is not set: no test meshes");
  return dir;
}

static void data_path(char *buf, size_t len, const char *name) {
  snprintf(buf, len, "%s/%s", data_dir(), name);
}

/* A private directory for the files a test writes; removed by tmp_cleanup(). */
static char tmp_dir[256];
static char tmp_files[64][300];
static int tmp_count;

static void tmp_init(void) {
  const char *base = getenv("TMPDIR");
  snprintf(tmp_dir, sizeof tmp_dir, "%s/fea-gmsh-XXXXXX", base && *base ? base : "/tmp");
  cr_assert_not_null(mkdtemp(tmp_dir), "mkdtemp: %s", strerror(errno));
  tmp_count = 0;
}

static const char *tmp_path(const char *name) {
  cr_assert(tmp_count < 64);
  snprintf(tmp_files[tmp_count], sizeof tmp_files[0], "%s/%s", tmp_dir, name);
  return tmp_files[tmp_count++];
}

static void tmp_cleanup(void) {
  for (int i = 0; i < tmp_count; i++) unlink(tmp_files[i]);
  rmdir(tmp_dir);
}

/* A file as lines, for editing. */
struct text {
  int n;
  char **line;
};

static struct text load(const char *name) {
  char path[512];
  data_path(path, sizeof path, name);
  FILE *f = fopen(path, "r");
  cr_assert_not_null(f, "%s: %s", path, strerror(errno));
  struct text t = {0, NULL};
  char buf[4096];
  while (fgets(buf, sizeof buf, f)) {
    buf[strcspn(buf, "\n")] = '\0';
    t.line = realloc(t.line, (size_t)(t.n + 1) * sizeof *t.line);
    t.line[t.n++] = strdup(buf);
  }
  fclose(f);
  return t;
}

static void unload(struct text *t) {
  for (int i = 0; i < t->n; i++) free(t->line[i]);
  free(t->line);
}

/* 1-based number of the first line at or after `from` that starts with prefix. */
static int find(const struct text *t, int from, const char *prefix) {
  for (int i = from - 1; i < t->n; i++)
    if (strncmp(t->line[i], prefix, strlen(prefix)) == 0) return i + 1;
  cr_assert_fail("no line starting with '%s'", prefix);
  return 0;
}

/* Write the first `keep` lines of t to a temp file, line `at` (1-based)
 * replaced by `with` (NULL: deleted), and return its path. */
static const char *write_edited(const struct text *t, const char *name, int keep, int at,
                                const char *with) {
  const char *path = tmp_path(name);
  FILE *f = fopen(path, "w");
  cr_assert_not_null(f);
  for (int i = 0; i < keep && i < t->n; i++) {
    if (i + 1 == at) {
      if (with) fprintf(f, "%s\n", with);
    } else {
      fprintf(f, "%s\n", t->line[i]);
    }
  }
  fclose(f);
  return path;
}

static const char *write_text(const char *name, const char *content) {
  const char *path = tmp_path(name);
  FILE *f = fopen(path, "wb");
  cr_assert_not_null(f);
  fputs(content, f);
  fclose(f);
  return path;
}

/* Reading path must fail with want and a message holding "name:LINE: " and needle. */
static void expect_error(fea_context *ctx, const char *path, fea_status want, int line,
                         const char *needle) {
  fea_mesh *m = (fea_mesh *)&m;
  fea_status s = fea_mesh_read_gmsh(ctx, path, &m);
  const char *msg = fea_context_last_error(ctx);
  cr_assert_eq(s, want, "%s: status %s, expected %s (%s)", path, fea_status_string(s),
               fea_status_string(want), msg);
  cr_assert_null(m, "a failed read left *out set");
  char where[400];
  snprintf(where, sizeof where, "%s:%d: ", path, line);
  cr_assert(strstr(msg, where), "the message does not name '%s': %s", where, msg);
  cr_assert(strstr(msg, needle), "the message does not say '%s': %s", needle, msg);
}

/* ---- the real files ------------------------------------------------------------------------- */

struct real_file {
  const char *name;
  int dim;
  fea_cell_type type;
  fea_index nodes, cells; /* as Gmsh reported them when it wrote the file */
};

static const struct real_file real_files[] = {
    {"square-tri.msh", 2, FEA_CELL_TRIANGLE, 98, 162},
    {"square-quad.msh", 2, FEA_CELL_QUAD, 95, 78},
    {"cube-tet.msh", 3, FEA_CELL_TETRAHEDRON, 143, 387},
    {"cube-hex.msh", 3, FEA_CELL_HEXAHEDRON, 125, 64},
};

Test(gmsh, reads_the_real_files) {
  fea_context *ctx = open_ref();
  for (size_t i = 0; i < sizeof real_files / sizeof real_files[0]; i++) {
    const struct real_file *rf = &real_files[i];
    char path[512];
    data_path(path, sizeof path, rf->name);
    fea_mesh *m = NULL;
    OK(fea_mesh_read_gmsh(ctx, path, &m));
    struct arrays a = get_arrays(m);
    cr_assert_eq(a.dim, rf->dim, "%s", rf->name);
    cr_assert_eq(a.type, rf->type, "%s", rf->name);
    cr_assert_eq(a.nn, rf->nodes, "%s: %lld nodes, Gmsh wrote %lld", rf->name, (long long)a.nn,
                 (long long)rf->nodes);
    cr_assert_eq(a.nc, rf->cells, "%s: %lld cells, Gmsh wrote %lld", rf->name, (long long)a.nc,
                 (long long)rf->cells);
    /* The unit square or cube, covered once by positively oriented cells. */
    for (fea_index c = 0; c < a.nc; c++)
      cr_assert(cell_measure(&a, c) > 0, "%s: cell %lld", rf->name, (long long)c);
    cr_assert(fabs(total_measure(&a) - 1.0) < 1e-12, "%s: measure %.17g", rf->name,
              total_measure(&a));
    for (fea_index v = 0; v < a.nn * a.dim; v++) cr_assert(a.x[v] >= -1e-12 && a.x[v] <= 1 + 1e-12);
    /* Every node is used by a cell. */
    char *used = calloc((size_t)a.nn, 1);
    for (fea_index j = 0; j < a.nc * a.npc; j++) used[a.c[j]] = 1;
    for (fea_index v = 0; v < a.nn; v++)
      cr_assert(used[v], "%s: node %lld unused", rf->name, (long long)v);
    free(used);
    OK(revalidate(ctx, &a));
    free_arrays(&a);
    OK(fea_mesh_destroy(&m));
  }
  OK(fea_context_destroy(&ctx));
}

/* ---- hand-written files --------------------------------------------------------------------- */

/* Sections to skip, blank lines, CRLF ends, tabs, parametric coordinates,
 * sparse and unordered tags, points and lines to skip, unused nodes. */
static const char handmade[] =
    "$MeshFormat\r\n4.1 0 8\r\n$EndMeshFormat\r\n"
    "$Comments\r\nanything, even $Nodes\r\n$EndComments\r\n"
    "\r\n"
    "$Nodes\r\n"
    "3 6 10 20\r\n"
    "0 1 0 1\r\n20\r\n0 0 0\r\n"
    "2 1 1 4\r\n12\r\n11\r\n15\r\n10\r\n"
    "1\t0 0 0.5 0\r\n1 1 0 0.5 0.5\r\n0 1 0 0 0.5\r\n0.5 0.5 0 0.25 0.25\r\n"
    "0 5 0 1\r\n13\r\n5 5 0\r\n"
    "$EndNodes\r\n"
    "$Elements\r\n"
    "3 4 1 4\r\n"
    "0 1 15 1\r\n1 20\r\n"
    "1 1 1 1\r\n2 20 12\r\n"
    "2 1 2 2\r\n3 20 12 11\r\n4 20 11 15 \r\n"
    "$EndElements\r\n"
    "$NodeData\r\n1\r\n\"u\"\r\n$EndNodeData\r\n";

Test(gmsh, format_corners) {
  fea_context *ctx = open_ref();
  tmp_init();
  fea_mesh *m = NULL;
  OK(fea_mesh_read_gmsh(ctx, write_text("handmade.msh", handmade), &m));
  struct arrays a = get_arrays(m);
  /* Nodes 10 and 13 are unused; 20, 12, 11, 15 keep their order of appearance. */
  const double x[8] = {0, 0, 1, 0, 1, 1, 0, 1};
  const fea_index c[6] = {0, 1, 2, 0, 2, 3};
  cr_assert_eq(a.dim, 2);
  cr_assert_eq(a.type, FEA_CELL_TRIANGLE);
  cr_assert_eq(a.nn, 4);
  cr_assert_eq(a.nc, 2);
  cr_assert_eq(memcmp(a.x, x, sizeof x), 0);
  cr_assert_eq(memcmp(a.c, c, sizeof c), 0);
  free_arrays(&a);
  OK(fea_mesh_destroy(&m));

  /* Lines only: a 1D mesh on the x axis. */
  static const char lines[] =
      "$MeshFormat\n4.1 0 8\n$EndMeshFormat\n$Nodes\n1 3 1 3\n1 1 0 3\n"
      "1\n2\n3\n0 2 7\n1 2 7\n3 2 7\n$EndNodes\n$Elements\n1 2 1 2\n"
      "1 1 1 2\n1 1 2\n2 2 3\n$EndElements\n";
  OK(fea_mesh_read_gmsh(ctx, write_text("lines.msh", lines), &m));
  a = get_arrays(m);
  cr_assert_eq(a.dim, 1);
  cr_assert_eq(a.type, FEA_CELL_INTERVAL);
  cr_assert(a.nn == 3 && a.x[0] == 0 && a.x[1] == 1 && a.x[2] == 3);
  free_arrays(&a);
  OK(fea_mesh_destroy(&m));
  tmp_cleanup();
  OK(fea_context_destroy(&ctx));
}

/* ---- special files -------------------------------------------------------------------------- */

/* A FIFO, a directory and a device are refused by what they are, and none is
 * read: opening a FIFO for reading must not wait for a writer. */
static void expect_special(fea_context *ctx, const char *path, const char *kind) {
  fea_mesh *m = (fea_mesh *)&m;
  char want[400];
  snprintf(want, sizeof want, "%s: is %s, not a regular file", path, kind);
  EXPECT_FAIL(fea_mesh_read_gmsh(ctx, path, &m), FEA_ERR_IO, ctx, want);
  cr_assert_null(m, "a failed read left *out set");
}

Test(gmsh, special_files, .timeout = 30) {
  fea_context *ctx = open_ref();
  tmp_init();
  const char *fifo = tmp_path("fifo.msh");
  cr_assert_eq(mkfifo(fifo, 0600), 0, "mkfifo %s: %s", fifo, strerror(errno));
  expect_special(ctx, fifo, "a FIFO");
  expect_special(ctx, tmp_dir, "a directory");
  struct stat st;
  if (stat("/dev/null", &st) == 0 && S_ISCHR(st.st_mode))
    expect_special(ctx, "/dev/null", "a character device");
  tmp_cleanup();
  OK(fea_context_destroy(&ctx));
}

/* ---- bad files ------------------------------------------------------------------------------ */

Test(gmsh, truncated_files) {
  fea_context *ctx = open_ref();
  tmp_init();
  struct text t = load("square-tri.msh");
  const int elements = find(&t, 1, "$Elements");
  /* Cut after a whole line: the line after the last is where more was expected. */
  const char *p = write_edited(&t, "cut.msh", elements + 20, 0, NULL);
  expect_error(ctx, p, FEA_ERR_IO, elements + 21, "the file ends inside $Elements");
  const int nodes = find(&t, 1, "$Nodes");
  /* (Cut early, the file would be too short for the count of nodes it declares.) */
  p = write_edited(&t, "cut-nodes.msh", nodes + 150, 0, NULL);
  expect_error(ctx, p, FEA_ERR_IO, nodes + 151, "the file ends inside $Nodes");
  p = write_edited(&t, "cut-nodes-early.msh", nodes + 5, 0, NULL);
  expect_error(ctx, p, FEA_ERR_IO, nodes + 1, "the number of nodes is 98, more than a file of");
  p = write_edited(&t, "cut-entities.msh", 12, 0, NULL);
  expect_error(ctx, p, FEA_ERR_IO, 13, "the file ends inside $Entities");
  p = write_edited(&t, "cut-format.msh", 2, 0, NULL);
  expect_error(ctx, p, FEA_ERR_IO, 3, "the file ends inside $MeshFormat");
  /* Cut inside the last coordinate line: that line lacks its y and z. */
  const int coord = find(&t, nodes, "$EndNodes") - 1;
  p = write_edited(&t, "cut-line.msh", coord, coord, "0.12");
  expect_error(ctx, p, FEA_ERR_IO, coord, "expected coordinate y, found the end of the line");
  p = write_text("empty.msh", "");
  expect_error(ctx, p, FEA_ERR_IO, 1, "the file is empty");
  /* Without the closing line of $Elements. */
  p = write_edited(&t, "no-end.msh", t.n - 1, 0, NULL);
  expect_error(ctx, p, FEA_ERR_IO, t.n, "where $EndElements was expected");
  unload(&t);
  tmp_cleanup();
  OK(fea_context_destroy(&ctx));
}

Test(gmsh, wrong_counts) {
  fea_context *ctx = open_ref();
  tmp_init();
  struct text t = load("square-tri.msh");
  const int nodes = find(&t, 1, "$Nodes"), elements = find(&t, 1, "$Elements");
  /* A block that claims two nodes reads the coordinate line "0 0 0" as a tag. */
  const char *p = write_edited(&t, "block.msh", t.n, nodes + 2, "0 1 0 2");
  expect_error(ctx, p, FEA_ERR_IO, nodes + 4, "unexpected '0' after the node tag");
  /* One node fewer than the blocks hold. */
  char head[64];
  long long nb, nn, lo, hi;
  cr_assert_eq(sscanf(t.line[nodes], "%lld %lld %lld %lld", &nb, &nn, &lo, &hi), 4);
  snprintf(head, sizeof head, "%lld %lld %lld %lld", nb, nn - 1, lo, hi);
  p = write_edited(&t, "fewer-nodes.msh", t.n, nodes + 1, head);
  const int last_block = find(&t, nodes + 1, "2 1 0 ");
  expect_error(ctx, p, FEA_ERR_IO, last_block, "the blocks hold more than the 97 nodes declared");
  /* One element more than the blocks hold. */
  cr_assert_eq(sscanf(t.line[elements], "%lld %lld %lld %lld", &nb, &nn, &lo, &hi), 4);
  snprintf(head, sizeof head, "%lld %lld %lld %lld", nb, nn + 1, lo, hi + 1);
  p = write_edited(&t, "more-elements.msh", t.n, elements + 1, head);
  expect_error(ctx, p, FEA_ERR_IO, elements + 1, "hold 194 elements, but this line declares 195");
  /* A block claiming one element more than the header leaves room for. */
  const int tri = find(&t, elements, "2 1 2 ");
  snprintf(head, sizeof head, "2 1 2 163");
  p = write_edited(&t, "more-in-block.msh", t.n, tri, head);
  expect_error(ctx, p, FEA_ERR_IO, tri, "the blocks hold more than the 194 elements declared");
  unload(&t);
  tmp_cleanup();
  OK(fea_context_destroy(&ctx));
}

Test(gmsh, bad_node_tags) {
  fea_context *ctx = open_ref();
  tmp_init();
  struct text t = load("square-tri.msh");
  const int nodes = find(&t, 1, "$Nodes"), elements = find(&t, 1, "$Elements");
  const int tri = find(&t, elements, "2 1 2 ") + 1; /* the first triangle */
  long long tag, a, b, c;
  cr_assert_eq(sscanf(t.line[tri - 1], "%lld %lld %lld %lld", &tag, &a, &b, &c), 4);
  char line[128];
  snprintf(line, sizeof line, "%lld %lld %lld 999", tag, a, b);
  const char *p = write_edited(&t, "out-of-range.msh", t.n, tri, line);
  expect_error(ctx, p, FEA_ERR_IO, tri, "node tag 999 is outside the range 1..98");
  snprintf(line, sizeof line, "%lld %lld %lld -4", tag, a, b);
  p = write_edited(&t, "negative.msh", t.n, tri, line);
  expect_error(ctx, p, FEA_ERR_IO, tri, "node tag -4 is outside the range 1..98");
  snprintf(line, sizeof line, "%lld %lld %lld x7", tag, a, b);
  p = write_edited(&t, "not-a-number.msh", t.n, tri, line);
  expect_error(ctx, p, FEA_ERR_IO, tri,
               "expected node tag 3 of 3 of a 3-node triangle, found 'x7'");
  snprintf(line, sizeof line, "%lld %lld %lld", tag, a, b);
  p = write_edited(&t, "short.msh", t.n, tri, line);
  expect_error(ctx, p, FEA_ERR_IO, tri, "found the end of the line");
  snprintf(line, sizeof line, "%lld %lld %lld %lld 5", tag, a, b, c);
  p = write_edited(&t, "long.msh", t.n, tri, line);
  expect_error(ctx, p, FEA_ERR_IO, tri, "unexpected '5' after the element's node tags");
  /* Tags declared up to 200, so 150 is in range but no node has it. */
  struct text u = load("square-tri.msh");
  free(u.line[nodes]);
  long long nb, nn, lo, hi;
  cr_assert_eq(sscanf(t.line[nodes], "%lld %lld %lld %lld", &nb, &nn, &lo, &hi), 4);
  snprintf(line, sizeof line, "%lld %lld %lld 200", nb, nn, lo);
  u.line[nodes] = strdup(line);
  snprintf(line, sizeof line, "%lld %lld %lld 150", tag, a, b);
  p = write_edited(&u, "undefined.msh", u.n, tri, line);
  expect_error(ctx, p, FEA_ERR_IO, tri, "node tag 150 is not defined");
  /* Two nodes with one tag: the second tag line of the first multi-node block. */
  const int block = find(&t, nodes, "1 1 0 ");
  snprintf(line, sizeof line, "%s", t.line[block]); /* the block's first tag */
  p = write_edited(&t, "duplicate.msh", t.n, block + 2, line);
  char twice[300];
  snprintf(twice, sizeof twice, "node tag %s is defined twice, at lines %d and %d", line, block + 1,
           block + 2);
  expect_error(ctx, p, FEA_ERR_IO, block + 2, twice);
  /* The tag of an earlier block's node (tag 1, coordinates on line nodes + 4):
   * that node's coordinates' line is named. */
  cr_assert_str_eq(t.line[nodes + 2], "1");
  p = write_edited(&t, "duplicate-block.msh", t.n, block + 1, "1");
  snprintf(twice, sizeof twice,
           "node tag 1 is defined twice (first for the coordinates at line %d)", nodes + 4);
  expect_error(ctx, p, FEA_ERR_IO, block + 1, twice);
  /* A tag outside the range the $Nodes header declares. */
  p = write_edited(&t, "tag-range.msh", t.n, block + 1, "99");
  expect_error(ctx, p, FEA_ERR_IO, block + 1, "node tag 99 is outside the range 1..98 declared");
  /* An element tag used twice. */
  cr_assert_eq(sscanf(t.line[tri], "%lld %lld %lld %lld", &tag, &a, &b, &c), 4);
  long long first = 0;
  cr_assert_eq(sscanf(t.line[tri - 1], "%lld", &first), 1);
  snprintf(line, sizeof line, "%lld %lld %lld %lld", first, a, b, c);
  p = write_edited(&t, "element-twice.msh", t.n, tri + 1, line);
  expect_error(ctx, p, FEA_ERR_IO, tri + 1, "is used twice");
  unload(&u);
  unload(&t);
  tmp_cleanup();
  OK(fea_context_destroy(&ctx));
}

Test(gmsh, bad_coordinates) {
  fea_context *ctx = open_ref();
  tmp_init();
  struct text t = load("square-tri.msh");
  const int coord = find(&t, 1, "$Nodes") + 4; /* "0 0 0" of node 1 */
  const char *p = write_edited(&t, "nan.msh", t.n, coord, "nan 0 0");
  expect_error(ctx, p, FEA_ERR_IO, coord, "coordinate x is 'nan', not a finite number");
  p = write_edited(&t, "inf.msh", t.n, coord, "0 -inf 0");
  expect_error(ctx, p, FEA_ERR_IO, coord, "coordinate y is '-inf'");
  p = write_edited(&t, "overflow.msh", t.n, coord, "0 0 1e999");
  expect_error(ctx, p, FEA_ERR_IO, coord, "coordinate z is '1e999', not a finite number");
  p = write_edited(&t, "garbage.msh", t.n, coord, "0 0,5 0");
  expect_error(ctx, p, FEA_ERR_IO, coord, "expected coordinate y, found '0,5'");
  /* Node 2 is a corner of the square, so used by triangles: the mesh leaves
   * the plane z = 0 of node 1, the first node. */
  p = write_edited(&t, "not-flat.msh", t.n, coord + 3, "1 0 0.5");
  expect_error(ctx, p, FEA_ERR_IO, coord + 3,
               "2D mesh is not in a plane z = const: node tag 2 "
               "has z = 0.5, node tag 1 (line 25) has z = 0");
  unload(&t);
  tmp_cleanup();
  OK(fea_context_destroy(&ctx));
}

Test(gmsh, element_types) {
  fea_context *ctx = open_ref();
  tmp_init();
  struct text t = load("square-tri.msh");
  const int tri = find(&t, find(&t, 1, "$Elements"), "2 1 2 ");
  const char *p = write_edited(&t, "unknown.msh", t.n, tri, "2 1 999 162");
  expect_error(ctx, p, FEA_ERR_IO, tri, "unknown element type 999");
  p = write_edited(&t, "second-order.msh", t.n, tri, "2 1 9 162");
  expect_error(ctx, p, FEA_ERR_UNSUPPORTED, tri, "element type 9 (6-node second-order triangle)");
  p = write_edited(&t, "wrong-dim.msh", t.n, tri, "3 1 2 162");
  expect_error(ctx, p, FEA_ERR_IO, tri, "cannot be in an entity of dimension 3");
  /* Triangles and quads together. */
  static const char mixed[] =
      "$MeshFormat\n4.1 0 8\n$EndMeshFormat\n$Nodes\n1 5 1 5\n2 1 0 5\n"
      "1\n2\n3\n4\n5\n0 0 0\n1 0 0\n1 1 0\n0 1 0\n2 0 0\n$EndNodes\n"
      "$Elements\n2 2 1 2\n2 1 3 1\n1 1 2 3 4\n2 2 2 1\n2 2 5 3\n"
      "$EndElements\n";
  p = write_text("mixed.msh", mixed);
  expect_error(ctx, p, FEA_ERR_UNSUPPORTED, 22,
               "mixed cell types: 4-node quadrangles (from line 20) "
               "and 3-node triangles");
  unload(&t);
  tmp_cleanup();
  OK(fea_context_destroy(&ctx));
}

Test(gmsh, inverted_cells_are_not_fixed) {
  fea_context *ctx = open_ref();
  tmp_init();
  const char *names[2] = {"square-quad.msh", "cube-hex.msh"};
  const char *blocks[2] = {"2 1 3 ", "3 1 5 "};
  for (int i = 0; i < 2; i++) {
    struct text t = load(names[i]);
    const int cell = find(&t, find(&t, 1, "$Elements"), blocks[i]) + 1;
    long long v[9];
    cr_assert(sscanf(t.line[cell - 1], "%lld %lld %lld %lld %lld", &v[0], &v[1], &v[2], &v[3],
                     &v[4]) == 5);
    /* Reverse the first face: clockwise quad, hexahedron upside down in its bottom face. */
    char line[256];
    if (i == 0) {
      snprintf(line, sizeof line, "%lld %lld %lld %lld %lld", v[0], v[4], v[3], v[2], v[1]);
    } else {
      cr_assert(sscanf(t.line[cell - 1], "%lld %lld %lld %lld %lld %lld %lld %lld %lld", &v[0],
                       &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8]) == 9);
      snprintf(line, sizeof line, "%lld %lld %lld %lld %lld %lld %lld %lld %lld", v[0], v[5], v[6],
               v[7], v[8], v[1], v[2], v[3], v[4]);
    }
    char tags[128];
    snprintf(tags, sizeof tags, "element %lld (%s, node tags %s) is inverted", v[0],
             i == 0 ? "4-node quadrangle" : "8-node hexahedron", strchr(line, ' ') + 1);
    const char *p = write_edited(&t, i == 0 ? "cw.msh" : "upside-down.msh", t.n, cell, line);
    expect_error(ctx, p, FEA_ERR_IO, cell, tags);
    expect_error(ctx, p, FEA_ERR_IO, cell, "libfeaccel does not reorder nodes");
    unload(&t);
  }
  tmp_cleanup();
  OK(fea_context_destroy(&ctx));
}

Test(gmsh, format_and_sections) {
  fea_context *ctx = open_ref();
  tmp_init();
  struct text t = load("square-quad.msh");
  const char *p = write_edited(&t, "binary.msh", t.n, 2, "4.1 1 8");
  expect_error(ctx, p, FEA_ERR_UNSUPPORTED, 2, "binary .msh files are not supported");
  p = write_edited(&t, "v22.msh", t.n, 2, "2.2 0 8");
  expect_error(ctx, p, FEA_ERR_UNSUPPORTED, 2, "MSH format version 2.2 is not supported");
  p = write_edited(&t, "filetype.msh", t.n, 2, "4.1 7 8");
  expect_error(ctx, p, FEA_ERR_IO, 2, "file type 7");
  p = write_edited(&t, "not-gmsh.msh", t.n, 1, "solid cube");
  expect_error(ctx, p, FEA_ERR_IO, 1, "not a Gmsh file: expected $MeshFormat, found 'solid'");
  const int end_nodes = find(&t, 1, "$EndNodes");
  p = write_edited(&t, "end-nodes.msh", t.n, end_nodes, "$EndNode");
  expect_error(ctx, p, FEA_ERR_IO, end_nodes,
               "expected $EndNodes after the nodes, found '$EndNode'");
  p = write_edited(&t, "stray.msh", t.n, end_nodes, NULL); /* $Elements where $EndNodes belongs */
  expect_error(ctx, p, FEA_ERR_IO, end_nodes, "found '$Elements'");
  /* No $Elements: the file ends after $Nodes. */
  p = write_edited(&t, "no-elements.msh", end_nodes, 0, NULL);
  expect_error(ctx, p, FEA_ERR_IO, end_nodes + 1, "the file has no $Elements section");
  p = write_edited(&t, "end-without-start.msh", t.n, end_nodes + 1, "$EndFoo");
  expect_error(ctx, p, FEA_ERR_IO, end_nodes + 1, "'$EndFoo' ends a section that was not started");
  p = write_edited(&t, "text.msh", t.n, end_nodes + 1, "Elements");
  expect_error(ctx, p, FEA_ERR_IO, end_nodes + 1, "expected a section such as $Nodes");
  /* An unterminated section to skip. */
  p = write_edited(&t, "unterminated.msh", t.n, 4, "$Entitie");
  expect_error(ctx, p, FEA_ERR_IO, t.n + 1, "the file ends inside $Entitie (line 4)");
  /* Elements before nodes. */
  static const char early[] =
      "$MeshFormat\n4.1 0 8\n$EndMeshFormat\n$Elements\n0 0 0 0\n"
      "$EndElements\n";
  expect_error(ctx, write_text("early.msh", early), FEA_ERR_IO, 4, "$Elements comes before $Nodes");
  /* Points only: nothing to make a mesh of. */
  static const char points[] =
      "$MeshFormat\n4.1 0 8\n$EndMeshFormat\n$Nodes\n1 1 1 1\n0 1 0 1\n"
      "1\n0 0 0\n$EndNodes\n$Elements\n1 1 1 1\n0 1 15 1\n1 1\n"
      "$EndElements\n";
  expect_error(ctx, write_text("points.msh", points), FEA_ERR_IO, 14,
               "no cells of dimension 1 to 3");
  /* A 1D mesh off the x axis. */
  static const char bent[] =
      "$MeshFormat\n4.1 0 8\n$EndMeshFormat\n$Nodes\n1 3 1 3\n1 1 0 3\n"
      "1\n2\n3\n0 0 0\n1 0 0\n1 1 0\n$EndNodes\n$Elements\n1 2 1 2\n"
      "1 1 1 2\n1 1 2\n2 2 3\n$EndElements\n";
  expect_error(ctx, write_text("bent.msh", bent), FEA_ERR_IO, 12,
               "1D mesh is not on a line y = z = const: node tag 3 has y = 1");
  unload(&t);
  tmp_cleanup();
  OK(fea_context_destroy(&ctx));
}

/* Section lines with blanks after the name, and "\r" before the "\r\n" or
 * "\n" (files edited on Windows), are section lines; other text after the name
 * is named as such, not as a wrong section. */
Test(gmsh, section_lines_with_trailing_blanks) {
  fea_context *ctx = open_ref();
  tmp_init();
  static const char blanks[] =
      "$MeshFormat \t\r\n4.1 0 8\r\n$EndMeshFormat  \r\n"
      "$Comments\t\n$EndComments \r\r\n"
      "$Nodes \n1 3 1 3\n1 1 0 3\n1\n2\n3\n0 2 7\n1 2 7\n3 2 7\n$EndNodes\t \n"
      "$Elements\r\r\n1 2 1 2\n1 1 1 2\n1 1 2\n2 2 3\n$EndElements \r\n";
  fea_mesh *m = NULL;
  OK(fea_mesh_read_gmsh(ctx, write_text("blanks.msh", blanks), &m));
  struct arrays a = get_arrays(m);
  cr_assert_eq(a.dim, 1);
  cr_assert(a.nn == 3 && a.nc == 2);
  free_arrays(&a);
  OK(fea_mesh_destroy(&m));
  static const char extra[] = "$MeshFormat v4\n4.1 0 8\n$EndMeshFormat\n";
  expect_error(ctx, write_text("extra.msh", extra), FEA_ERR_IO, 1,
               "unexpected 'v4' after $MeshFormat");
  static const char extra_end[] = "$MeshFormat\n4.1 0 8\n$EndMeshFormat 1\n";
  expect_error(ctx, write_text("extra-end.msh", extra_end), FEA_ERR_IO, 3,
               "unexpected '1' after $EndMeshFormat");
  tmp_cleanup();
  OK(fea_context_destroy(&ctx));
}

/* The line that must close a section, of any length and cut anywhere: only
 * the line's own bytes may be read (the sanitizer build and valgrind see any
 * other). */
Test(gmsh, end_lines_of_any_length) {
  fea_context *ctx = open_ref();
  tmp_init();
  static const int blanks[] = {0, 1, 13, 14, 241, 242, 254, 255, 256, 300, 5000};
  for (size_t i = 0; i < sizeof blanks / sizeof *blanks; i++) {
    char name[32];
    snprintf(name, sizeof name, "blanks-%d.msh", blanks[i]);
    const char *p = tmp_path(name);
    FILE *f = fopen(p, "wb");
    cr_assert_not_null(f);
    fprintf(f, "$MeshFormat\n4.1 0 8\n%*s\n$EndMeshFormat\n", blanks[i], "");
    fclose(f);
    expect_error(ctx, p, FEA_ERR_IO, 3,
                 "expected $EndMeshFormat after $MeshFormat, found an empty line");
  }
  /* Cut inside the closing line, with and without its end of line. */
  static const char *const cut[] = {"$EndMe", "$EndMe\n", "  $EndMeshFormat_", "$",
                                    "$EndMeshForma\r"};
  for (size_t i = 0; i < sizeof cut / sizeof *cut; i++) {
    char name[32], text[96];
    snprintf(name, sizeof name, "cut-%zu.msh", i);
    snprintf(text, sizeof text, "$MeshFormat\n4.1 0 8\n%s", cut[i]);
    expect_error(ctx, write_text(name, text), FEA_ERR_IO, 3,
                 "expected $EndMeshFormat after $MeshFormat, found '$");
  }
  /* Blanks around the closing line are allowed. */
  static const char padded[] =
      "$MeshFormat\n4.1 0 8\n \t$EndMeshFormat \t\n$Nodes\n0 0 0 0\n$EndNodes\n";
  expect_error(ctx, write_text("padded.msh", padded), FEA_ERR_IO, 7,
               "the file has no $Elements section");
  tmp_cleanup();
  OK(fea_context_destroy(&ctx));
}

Test(gmsh, header_counts_and_ranges) {
  fea_context *ctx = open_ref();
  tmp_init();
  struct text t = load("square-tri.msh");
  const int nodes = find(&t, 1, "$Nodes") + 1, elements = find(&t, 1, "$Elements") + 1;
  /* square-tri.msh: "9 98 1 98" and "5 194 1 194". */
  cr_assert_str_eq(t.line[nodes - 1], "9 98 1 98");
  cr_assert_str_eq(t.line[elements - 1], "5 194 1 194");
  const char *p = write_edited(&t, "more-nodes.msh", t.n, nodes, "9 99 1 99");
  expect_error(ctx, p, FEA_ERR_IO, nodes, "the 9 blocks hold 98 nodes, but this line declares 99");
  p = write_edited(&t, "tags-too-few.msh", t.n, nodes, "9 99 1 98");
  expect_error(ctx, p, FEA_ERR_IO, nodes, "99 nodes cannot have distinct tags in 1..98");
  p = write_edited(&t, "tag-zero.msh", t.n, nodes, "9 98 0 98");
  expect_error(ctx, p, FEA_ERR_IO, nodes, "node tags range over 0..98, not a range of positive");
  p = write_edited(&t, "tags-reversed.msh", t.n, elements, "5 194 194 1");
  expect_error(ctx, p, FEA_ERR_IO, elements, "element tags range over 194..1");
  p = write_edited(&t, "element-tags-sparse.msh", t.n, elements, "5 194 1 99999999999");
  expect_error(ctx, p, FEA_ERR_UNSUPPORTED, elements, "element tags range over 1..99999999999");
  p = write_edited(&t, "negative-count.msh", t.n, elements, "5 -194 1 194");
  expect_error(ctx, p, FEA_ERR_IO, elements, "the number of elements is -194, negative");
  const int tri = find(&t, elements, "2 1 2 ");
  p = write_edited(&t, "higher-order.msh", t.n, tri, "2 1 21 162");
  expect_error(ctx, p, FEA_ERR_UNSUPPORTED, tri, "element type 21 (a higher-order or special");
  p = write_edited(&t, "entity-dim.msh", t.n, tri, "4 1 2 162");
  expect_error(ctx, p, FEA_ERR_IO, tri, "entity dimension 4 is not 0, 1, 2 or 3");
  p = write_edited(&t, "parametric.msh", t.n, nodes + 1, "0 1 2 1");
  expect_error(ctx, p, FEA_ERR_IO, nodes + 1, "parametric flag 2 is not 0 or 1");
  /* Sections twice, or missing. */
  static const char twice[] =
      "$MeshFormat\n4.1 0 8\n$EndMeshFormat\n$Nodes\n0 0 0 0\n$EndNodes\n"
      "$Nodes\n0 0 0 0\n$EndNodes\n";
  expect_error(ctx, write_text("nodes-twice.msh", twice), FEA_ERR_IO, 7,
               "a second $Nodes section (the first is at line 4)");
  static const char twice_elements[] =
      "$MeshFormat\n4.1 0 8\n$EndMeshFormat\n$Nodes\n0 0 0 0\n"
      "$EndNodes\n$Elements\n0 0 0 0\n$EndElements\n"
      "$Elements\n";
  expect_error(ctx, write_text("elements-twice.msh", twice_elements), FEA_ERR_IO, 10,
               "a second $Elements section (the first is at line 7)");
  static const char format_twice[] = "$MeshFormat\n4.1 0 8\n$EndMeshFormat\n$MeshFormat\n";
  expect_error(ctx, write_text("format-twice.msh", format_twice), FEA_ERR_IO, 4,
               "a second $MeshFormat section");
  /* An empty $Nodes with a tag range, then an element using a tag in that
   * range: the tag's lookup read past the empty table (heap over-read). */
  static const char no_nodes[] =
      "$MeshFormat\n4.1 0 8\n$EndMeshFormat\n$Nodes\n0 0 1 100\n$EndNodes\n"
      "$Elements\n1 1 1 1\n1 1 1 1\n1 50 51\n$EndElements\n";
  expect_error(ctx, write_text("no-nodes.msh", no_nodes), FEA_ERR_IO, 10,
               "node tag 50 is not defined: $Nodes (line 4) declares no nodes");
  static const char only_format[] = "$MeshFormat\n4.1 0 8\n$EndMeshFormat\n";
  expect_error(ctx, write_text("only-format.msh", only_format), FEA_ERR_IO, 4,
               "the file has no $Nodes section");
  unload(&t);
  tmp_cleanup();
  OK(fea_context_destroy(&ctx));
}

Test(gmsh, bad_bytes_and_lines) {
  fea_context *ctx = open_ref();
  tmp_init();
  /* A NUL byte in line 2. */
  static const char nul[] = "$MeshFormat\n4.1\0 0 8\n$EndMeshFormat\n";
  const char *p = tmp_path("nul.msh");
  FILE *f = fopen(p, "wb");
  fwrite(nul, 1, sizeof nul - 1, f);
  fclose(f);
  expect_error(ctx, p, FEA_ERR_IO, 2, "NUL byte");
  /* A line of 2 MiB inside a section to skip. */
  p = tmp_path("long.msh");
  f = fopen(p, "wb");
  fputs("$MeshFormat\n4.1 0 8\n$EndMeshFormat\n$Comments\n", f);
  for (int i = 0; i < 2 << 20; i++) fputc('x', f);
  fputs("\n$EndComments\n", f);
  fclose(f);
  expect_error(ctx, p, FEA_ERR_IO, 5, "line is longer than");
  /* Counts far beyond what the file could hold are refused before any allocation. */
  static const char huge[] =
      "$MeshFormat\n4.1 0 8\n$EndMeshFormat\n$Nodes\n1 999999999999 1 "
      "999999999999\n$EndNodes\n";
  expect_error(ctx, write_text("huge.msh", huge), FEA_ERR_IO, 5,
               "the number of nodes is 999999999999, more than a file of");
  static const char sparse[] =
      "$MeshFormat\n4.1 0 8\n$EndMeshFormat\n$Nodes\n1 1 1 999999999999\n"
      "$EndNodes\n";
  expect_error(ctx, write_text("sparse.msh", sparse), FEA_ERR_UNSUPPORTED, 5,
               "node tags range over 1..999999999999 for only 1 nodes");
  /* Not there, not a file. */
  char missing[300];
  snprintf(missing, sizeof missing, "%s/missing.msh", tmp_dir);
  fea_mesh *m = (fea_mesh *)&m;
  EXPECT_FAIL(fea_mesh_read_gmsh(ctx, missing, &m), FEA_ERR_IO, ctx, "No such file or directory");
  cr_assert_null(m);
  EXPECT_FAIL(fea_mesh_read_gmsh(ctx, tmp_dir, &m), FEA_ERR_IO, ctx, "not a regular file");
  cr_assert_null(m);
  EXPECT_FAIL(fea_mesh_read_gmsh(ctx, "", &m), FEA_ERR_INVALID_ARG, ctx, "path is empty");
  EXPECT_FAIL(fea_mesh_read_gmsh(ctx, NULL, &m), FEA_ERR_INVALID_ARG, ctx, "path");
  EXPECT_FAIL(fea_mesh_read_gmsh(ctx, missing, NULL), FEA_ERR_INVALID_ARG, ctx, "out");
  EXPECT_FAIL(fea_mesh_read_gmsh(NULL, missing, &m), FEA_ERR_INVALID_ARG, NULL, "ctx");
  tmp_cleanup();
  OK(fea_context_destroy(&ctx));
}
