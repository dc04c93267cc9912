/* G+Smo XML geometry files (fea_geometry_file_read): the committed files of
 * tests/data/gismo read to the very arrays the tests build by hand, a space
 * on a read patch solving to the same numbers as on the hand-built one, and
 * malformed files refused with the file, patch, line and item named. */
#include "api-common.h"
#include "ring-common.h"

#include <stdio.h>
#include <unistd.h>

static char *data_path(const char *name) {
  const char *dir = getenv("FEA_TEST_DATA");
  cr_assert(dir, "FEA_TEST_DATA is not set");
  static char path[1024];
  snprintf(path, sizeof path, "%s/gismo/%s", dir, name);
  return path;
}

static fea_context *open_ref(void) {
  fea_context *ctx = NULL;
  OK(fea_context_create("/cpu/ref", &ctx));
  return ctx;
}

/* The read descriptor equals the hand-built one, array by array. */
static void expect_same(const fea_geometry_desc *a, const fea_geometry_desc *b, int dim) {
  for (int k = 0; k < dim; k++) {
    cr_assert_eq(a->degree[k], b->degree[k], "direction %d: degree", k);
    cr_assert_eq(a->num_knots[k], b->num_knots[k], "direction %d: knot count", k);
    cr_assert(!memcmp(a->knots[k], b->knots[k], (size_t)a->num_knots[k] * sizeof(double)),
              "direction %d: knots", k);
  }
  cr_assert_eq(a->num_control_points, b->num_control_points);
  cr_assert(!memcmp(a->control_points, b->control_points,
                    (size_t)(a->num_control_points * dim) * sizeof(double)),
            "control points");
  cr_assert((a->weights == NULL) == (b->weights == NULL));
  if (a->weights)
    for (fea_index i = 0; i < a->num_control_points; i++)
      cr_assert_eq(a->weights[i], b->weights[i], "weight %lld", (long long)i);
}

Test(geometry_file, reads_the_annulus_and_the_ring) {
  fea_context *ctx = open_ref();
  for (int dim = 2; dim <= 3; dim++) {
    fea_geometry_file *f = NULL;
    OK(fea_geometry_file_read(ctx, data_path(dim == 2 ? "quarter_annulus.xml" : "thick_ring.xml"),
                              &f));
    int count = 0, d = 0;
    OK(fea_geometry_file_get_num_patches(f, &count));
    cr_assert_eq(count, 1);
    fea_geometry_desc g = FEA_GEOMETRY_DESC_INIT;
    OK(fea_geometry_file_get_patch(f, 0, &d, &g));
    cr_assert_eq(d, dim);
    ring q;
    ring_init(&q, dim, 1.0);
    expect_same(&g, &q.g, dim);
    OK(fea_geometry_file_destroy(&f));
    cr_assert_null(f);
  }
  OK(fea_context_destroy(&ctx));
}

/* The same problem on the read patch and on the hand-built one: the same
 * solution bit for bit (the weights agree to the last digit of the file). */
static double smooth(const double *x, void *user) {
  (void)user;
  return exp(0.5 * x[0]) * sin(0.7 * x[1]);
}

Test(geometry_file, a_read_patch_solves_like_the_built_one) {
  fea_context *ctx = open_ref();
  fea_geometry_file *f = NULL;
  OK(fea_geometry_file_read(ctx, data_path("quarter_annulus.xml"), &f));
  fea_geometry_desc g = FEA_GEOMETRY_DESC_INIT;
  int d = 0;
  OK(fea_geometry_file_get_patch(f, 0, &d, &g));
  ring q;
  ring_init(&q, 2, 1.0);
  double *u[2];
  for (int i = 0; i < 2; i++) {
    fea_bspline_desc bd = FEA_BSPLINE_DESC_INIT;
    bd.degree[0] = bd.degree[1] = 3;
    bd.n[0] = bd.n[1] = 6;
    bd.geometry = i ? &q.g : &g;
    fea_space *s = NULL;
    OK(fea_space_create_bspline(ctx, &bd, &s));
    fea_problem_desc pd = FEA_PROBLEM_DESC_INIT;
    pd.source = smooth;
    pd.dirichlet = smooth;
    fea_problem *pb = NULL;
    OK(fea_problem_create_poisson(s, &pd, &pb));
    u[i] = solve_direct(ctx, s, pb);
    OK(fea_problem_destroy(&pb));
    OK(fea_space_destroy(&s));
  }
  for (int i = 0; i < 81; i++) cr_assert_eq(u[0][i], u[1][i], "coefficient %d", i);
  free(u[0]);
  free(u[1]);
  OK(fea_geometry_file_destroy(&f));
  OK(fea_context_destroy(&ctx));
}

Test(geometry_file, several_patches_in_file_order) {
  fea_context *ctx = open_ref();
  fea_geometry_file *f = NULL;
  OK(fea_geometry_file_read(ctx, data_path("two_patches.xml"), &f));
  int count = 0, d = 0;
  OK(fea_geometry_file_get_num_patches(f, &count));
  cr_assert_eq(count, 2);
  fea_geometry_desc g = FEA_GEOMETRY_DESC_INIT;
  OK(fea_geometry_file_get_patch(f, 1, &d, &g));
  /* Knot vectors listed out of order in the file land by their index. */
  cr_assert_eq(g.degree[0], 1);
  cr_assert_eq(g.degree[1], 2);
  cr_assert_eq(g.num_knots[1], 7);
  cr_assert_eq(g.num_control_points, 8);
  cr_assert_null(g.weights);
  EXPECT_FAIL(fea_geometry_file_get_patch(f, 2, &d, &g), FEA_ERR_INVALID_ARG, ctx,
              "patch 2 is outside [0, 2)");
  /* Both patches make spaces. */
  for (int i = 0; i < 2; i++) {
    OK(fea_geometry_file_get_patch(f, i, &d, &g));
    fea_bspline_desc bd = FEA_BSPLINE_DESC_INIT;
    bd.degree[0] = bd.degree[1] = 2;
    bd.n[0] = bd.n[1] = 4;
    bd.geometry = &g;
    fea_space *s = NULL;
    OK(fea_space_create_bspline(ctx, &bd, &s));
    OK(fea_space_destroy(&s));
  }
  OK(fea_geometry_file_destroy(&f));
  OK(fea_context_destroy(&ctx));
}

/* ------------------------------------------------------------------ errors */

/* Write text to a temporary file and expect its read to fail with want. */
static void expect_file_refused(fea_context *ctx, const char *text, fea_status want,
                                const char *needle) {
  char path[] = "/tmp/fea-gismo-XXXXXX";
  const int fd = mkstemp(path);
  cr_assert(fd >= 0);
  const size_t len = strlen(text);
  cr_assert_eq(write(fd, text, len), (ssize_t)len);
  close(fd);
  fea_geometry_file *f = (fea_geometry_file *)&f;
  EXPECT_FAIL(fea_geometry_file_read(ctx, path, &f), want, ctx, needle);
  cr_assert_null(f);
  unlink(path);
}

/* The annulus file with one piece replaced. */
static const char *annulus_with(const char *from, const char *to) {
  static char text[4096];
  FILE *in = fopen(data_path("quarter_annulus.xml"), "r");
  cr_assert(in);
  char whole[4096];
  const size_t n = fread(whole, 1, sizeof whole - 1, in);
  fclose(in);
  whole[n] = '\0';
  const char *at = strstr(whole, from);
  cr_assert(at, "'%s' is not in the file", from);
  snprintf(text, sizeof text, "%.*s%s%s", (int)(at - whole), whole, to, at + strlen(from));
  return text;
}

Test(geometry_file_errors, malformed_files_are_named) {
  fea_context *ctx = open_ref();
  EXPECT_FAIL(fea_geometry_file_read(ctx, "/nonexistent/annulus.xml", &(fea_geometry_file *){0}),
              FEA_ERR_IO, ctx, "/nonexistent/annulus.xml: No such file");
  EXPECT_FAIL(fea_geometry_file_read(ctx, "/tmp", &(fea_geometry_file *){0}), FEA_ERR_IO, ctx,
              "/tmp: not a regular file");
  /* Truncated: not well-formed, the line named. */
  const char *whole = annulus_with("</xml>", "");
  expect_file_refused(ctx, whole, FEA_ERR_IO, "not well-formed XML at line");
  expect_file_refused(ctx, "<xml></xml>", FEA_ERR_INVALID_ARG, "no <Geometry> element");
  expect_file_refused(ctx,
                      annulus_with("0.7071067811865475 0.7071067811865475 1 1<",
                                   "0.7071067811865475 0.7071067811865475 1<"),
                      FEA_ERR_INVALID_ARG, "<weights> (line 16) has 5 numbers for 6");
  expect_file_refused(ctx, annulus_with("   0 2\n", ""), FEA_ERR_INVALID_ARG,
                      "<coefs> (line 18) has 10 numbers; the knot vectors give 6 points");
  expect_file_refused(ctx, annulus_with("2 2\n", "2 nan\n"), FEA_ERR_INVALID_ARG,
                      "patch id 0 (line 6): geometry: control point 3 has coordinate 1 = nan");
  expect_file_refused(ctx, annulus_with("<weights rows=\"6\" cols=\"1\">1 1", "<weights>1 -1"),
                      FEA_ERR_INVALID_ARG, "geometry: weight 1 is -1");
  expect_file_refused(ctx, annulus_with("0 0 0 1 1 1", "0 0 0 1 0.5 1"), FEA_ERR_INVALID_ARG,
                      "direction 1");
  expect_file_refused(ctx, annulus_with("2 0\n", "2 zero\n"), FEA_ERR_INVALID_ARG,
                      "number 3 is \"zero\", not a number");
  expect_file_refused(ctx, annulus_with("degree=\"2\"", "degree=\"two\""), FEA_ERR_INVALID_ARG,
                      "has degree=\"two\"; it must be an integer in 1..8");
  expect_file_refused(ctx, annulus_with("index=\"1\"", "index=\"0\""), FEA_ERR_INVALID_ARG,
                      "a second knot vector for direction 0");
  expect_file_refused(ctx, annulus_with("TensorNurbs2\" id", "TensorNurbs7\" id"),
                      FEA_ERR_UNSUPPORTED, "type \"TensorNurbs7\" is not");
  expect_file_refused(ctx, annulus_with("geoDim=\"2\"", "geoDim=\"3\""), FEA_ERR_UNSUPPORTED,
                      "geoDim is 3 but the patch is 2D");
  expect_file_refused(ctx, annulus_with("<weights", "<notweights"), FEA_ERR_IO,
                      "not well-formed XML");
  OK(fea_context_destroy(&ctx));
}

/* --------------------------------------------------------------- topology */

/* text with one piece replaced (the first occurrence), in a buffer of its
 * own (text may be the result of an earlier call). */
static const char *text_with(const char *text, const char *from, const char *to) {
  static char out[16384];
  char whole[16384];
  snprintf(whole, sizeof whole, "%s", text);
  const char *at = strstr(whole, from);
  cr_assert(at, "'%s' is not in the text", from);
  snprintf(out, sizeof out, "%.*s%s%s", (int)(at - whole), whole, to, at + strlen(from));
  return out;
}

/* A committed file with one piece replaced (the first occurrence). */
static const char *file_with(const char *name, const char *from, const char *to) {
  char whole[16384];
  FILE *in = fopen(data_path(name), "r");
  cr_assert(in);
  const size_t n = fread(whole, 1, sizeof whole - 1, in);
  fclose(in);
  whole[n] = '\0';
  cr_assert(strstr(whole, from), "'%s' is not in %s", from, name);
  return text_with(whole, from, to);
}

/* Write text to a temporary file and read it. */
static fea_geometry_file *read_text(fea_context *ctx, const char *text) {
  char path[] = "/tmp/fea-gismo-XXXXXX";
  const int fd = mkstemp(path);
  cr_assert(fd >= 0);
  const size_t len = strlen(text);
  cr_assert_eq(write(fd, text, len), (ssize_t)len);
  close(fd);
  fea_geometry_file *f = NULL;
  OK(fea_geometry_file_read(ctx, path, &f));
  unlink(path);
  return f;
}

static void expect_interface(const fea_geometry_file *f, int i, int p0, fea_patch_side s0, int p1,
                             fea_patch_side s1, const int map[3], const int orient[3]) {
  fea_geometry_interface in = FEA_GEOMETRY_INTERFACE_INIT;
  OK(fea_geometry_file_get_interface(f, i, &in));
  cr_assert_eq(in.size, sizeof in);
  cr_assert_eq(in.patch[0], p0, "interface %d: patch[0] %d", i, in.patch[0]);
  cr_assert_eq(in.side[0], s0, "interface %d: side[0] %d", i, (int)in.side[0]);
  cr_assert_eq(in.patch[1], p1, "interface %d: patch[1] %d", i, in.patch[1]);
  cr_assert_eq(in.side[1], s1, "interface %d: side[1] %d", i, (int)in.side[1]);
  for (int k = 0; k < 3; k++) {
    cr_assert_eq(in.direction_map[k], map[k], "interface %d: direction_map[%d] = %d", i, k,
                 in.direction_map[k]);
    cr_assert_eq(in.direction_orientation[k], orient[k],
                 "interface %d: direction_orientation[%d] = %d", i, k, in.direction_orientation[k]);
  }
}

Test(geometry_file, four_patch_annulus_topology) {
  fea_context *ctx = open_ref();
  fea_geometry_file *f = NULL;
  OK(fea_geometry_file_read(ctx, data_path("four_patch_annulus.xml"), &f));
  int count = 0, d = 0;
  OK(fea_geometry_file_get_num_patches(f, &count));
  cr_assert_eq(count, 4);
  /* Patch 0 is the quarter annulus of ring-common.h; each is a valid NURBS patch. */
  fea_geometry_desc g[4];
  for (int i = 0; i < 4; i++) {
    g[i] = (fea_geometry_desc)FEA_GEOMETRY_DESC_INIT;
    OK(fea_geometry_file_get_patch(f, i, &d, &g[i]));
    cr_assert_eq(d, 2);
  }
  ring q;
  ring_init(&q, 2, 1.0);
  expect_same(&g[0], &q.g, 2);
  /* The MultiPatch lists ids 10..13: positions 0..3. */
  int nm = -1;
  const int *members = NULL;
  OK(fea_geometry_file_get_multipatch(f, &nm, &members));
  cr_assert_eq(nm, 4);
  for (int i = 0; i < 4; i++) cr_assert_eq(members[i], i);
  /* North of quarter k on south of quarter k + 1: radial directions the same
   * way, the normal (direction 1) opposite ways (north is high, south low). */
  int ni = 0;
  OK(fea_geometry_file_get_num_interfaces(f, &ni));
  cr_assert_eq(ni, 4);
  const int map[3] = {0, 1, 2}, orient[3] = {1, 0, 1};
  for (int k = 0; k < 4; k++) {
    expect_interface(f, k, k, FEA_SIDE_NORTH, (k + 1) % 4, FEA_SIDE_SOUTH, map, orient);
    /* The glued sides are the same points (a conforming interface): the
     * north row of quarter k is the south row of quarter k + 1. */
    const fea_geometry_desc *a = &g[k], *b = &g[(k + 1) % 4];
    for (int i = 0; i < 2; i++)
      for (int c = 0; c < 2; c++)
        cr_assert_float_eq(a->control_points[(4 + i) * 2 + c], b->control_points[i * 2 + c], 1e-15,
                           "interface %d: point %d", k, i);
  }
  /* The inner arcs (west), then the outer ones (east), with their group names. */
  int nb = 0;
  OK(fea_geometry_file_get_num_boundary_sides(f, &nb));
  cr_assert_eq(nb, 8);
  for (int i = 0; i < 8; i++) {
    int p = -1;
    fea_patch_side s = FEA_SIDE_BACK;
    const char *name = NULL;
    OK(fea_geometry_file_get_boundary_side(f, i, &p, &s, &name));
    cr_assert_eq(p, i % 4);
    cr_assert_eq(s, i < 4 ? FEA_SIDE_WEST : FEA_SIDE_EAST);
    cr_assert_str_eq(name, i < 4 ? "inner" : "outer");
  }
  int p = -1;
  fea_patch_side s = FEA_SIDE_BACK;
  OK(fea_geometry_file_get_boundary_side(f, 7, &p, &s, NULL)); /* the name not wanted */
  cr_assert_eq(p, 3);
  /* Bad indices and sizes. */
  fea_geometry_interface in = FEA_GEOMETRY_INTERFACE_INIT;
  EXPECT_FAIL(fea_geometry_file_get_interface(f, 4, &in), FEA_ERR_INVALID_ARG, ctx,
              "interface 4 is outside [0, 4)");
  EXPECT_FAIL(fea_geometry_file_get_interface(f, -1, &in), FEA_ERR_INVALID_ARG, ctx,
              "interface -1 is outside [0, 4)");
  in.size = 8;
  EXPECT_FAIL(fea_geometry_file_get_interface(f, 0, &in), FEA_ERR_INVALID_ARG, ctx, "out");
  EXPECT_FAIL(fea_geometry_file_get_boundary_side(f, 8, &p, &s, NULL), FEA_ERR_INVALID_ARG, ctx,
              "boundary side 8 is outside [0, 8)");
  EXPECT_FAIL(fea_geometry_file_get_interface(f, 0, NULL), FEA_ERR_INVALID_ARG, ctx, "out");
  EXPECT_FAIL(fea_geometry_file_get_num_interfaces(f, NULL), FEA_ERR_INVALID_ARG, ctx, "count");
  EXPECT_FAIL(fea_geometry_file_get_num_boundary_sides(f, NULL), FEA_ERR_INVALID_ARG, ctx, "count");
  EXPECT_FAIL(fea_geometry_file_get_boundary_side(f, 0, NULL, &s, NULL), FEA_ERR_INVALID_ARG, ctx,
              "patch");
  EXPECT_FAIL(fea_geometry_file_get_multipatch(f, &nm, NULL), FEA_ERR_INVALID_ARG, ctx, "patches");
  OK(fea_geometry_file_destroy(&f));
  OK(fea_context_destroy(&ctx));
}

Test(geometry_file, multipatch_variants) {
  fea_context *ctx = open_ref();
  /* No MultiPatch: no topology. */
  fea_geometry_file *f = NULL;
  OK(fea_geometry_file_read(ctx, data_path("quarter_annulus.xml"), &f));
  int n = -1;
  const int *members = (const int *)&n;
  OK(fea_geometry_file_get_multipatch(f, &n, &members));
  cr_assert_eq(n, 0);
  cr_assert_null(members);
  OK(fea_geometry_file_get_num_interfaces(f, &n));
  cr_assert_eq(n, 0);
  OK(fea_geometry_file_get_num_boundary_sides(f, &n));
  cr_assert_eq(n, 0);
  OK(fea_geometry_file_destroy(&f));
  /* Patches only (ids 3 and 4 are positions 0 and 1). */
  OK(fea_geometry_file_read(ctx, data_path("two_patches.xml"), &f));
  OK(fea_geometry_file_get_multipatch(f, &n, &members));
  cr_assert_eq(n, 2);
  cr_assert_eq(members[0], 0);
  cr_assert_eq(members[1], 1);
  OK(fea_geometry_file_get_num_interfaces(f, &n));
  cr_assert_eq(n, 0);
  OK(fea_geometry_file_get_num_boundary_sides(f, &n));
  cr_assert_eq(n, 0);
  OK(fea_geometry_file_destroy(&f));
  /* id_index in another order: the member list follows it, interfaces and
   * boundary still name positions in the file. */
  f = read_text(ctx, file_with("four_patch_annulus.xml", "<patches type=\"id_range\">10 13",
                               "<patches type=\"id_index\">13 11 12 10"));
  OK(fea_geometry_file_get_multipatch(f, &n, &members));
  cr_assert_eq(n, 4);
  cr_assert_eq(members[0], 3);
  cr_assert_eq(members[1], 1);
  cr_assert_eq(members[3], 0);
  const int map[3] = {0, 1, 2}, orient[3] = {1, 0, 1};
  expect_interface(f, 3, 3, FEA_SIDE_NORTH, 0, FEA_SIDE_SOUTH, map, orient);
  OK(fea_geometry_file_destroy(&f));
  /* G+Smo's files often write orientation 1 for the normal direction
   * (filedata/planar/two_squares.xml); as in G+Smo, the sides decide it. */
  f = read_text(ctx, file_with("four_patch_annulus.xml", "10 4 11 3 0 1 1 0", "10 4 11 3 0 1 1 1"));
  expect_interface(f, 0, 0, FEA_SIDE_NORTH, 1, FEA_SIDE_SOUTH, map, orient);
  OK(fea_geometry_file_destroy(&f));
  /* A boundary element without a name, and interfaces over two elements. */
  f = read_text(ctx,
                file_with("four_patch_annulus.xml", "<boundary name=\"inner\">", "<boundary>"));
  const char *name = "x";
  fea_patch_side s = FEA_SIDE_BACK;
  int p = -1;
  OK(fea_geometry_file_get_boundary_side(f, 0, &p, &s, &name));
  cr_assert_null(name);
  OK(fea_geometry_file_get_boundary_side(f, 4, &p, &s, &name));
  cr_assert_str_eq(name, "outer");
  OK(fea_geometry_file_destroy(&f));
  f = read_text(ctx, file_with("four_patch_annulus.xml", "   12 4 13 3",
                               "  </interfaces>\n  <interfaces>\n   12 4 13 3"));
  OK(fea_geometry_file_get_num_interfaces(f, &n));
  cr_assert_eq(n, 4);
  expect_interface(f, 2, 2, FEA_SIDE_NORTH, 3, FEA_SIDE_SOUTH, map, orient);
  OK(fea_geometry_file_destroy(&f));
  /* A second MultiPatch is ignored (G+Smo reads the first). */
  f = read_text(ctx, file_with("four_patch_annulus.xml", "</xml>",
                               "<MultiPatch parDim=\"7\"><patches/></MultiPatch></xml>"));
  OK(fea_geometry_file_get_num_interfaces(f, &n));
  cr_assert_eq(n, 4);
  OK(fea_geometry_file_destroy(&f));
  OK(fea_context_destroy(&ctx));
}

/* Two trilinear unit cubes side by side (ids 0 and 1: [0, 1]^3 and [1, 2] x
 * [0, 1]^2), and a MultiPatch. Cube 1 is parametrized as cube 0 shifted, or
 * turned (turned_cubes): its direction 1 runs down z, its direction 2 along y. */
static const char *cubes(const char *multipatch, int turned) {
  static char text[4096];
  char cube[2][1024];
  for (int c = 0; c < 2; c++) {
    char coefs[256] = "";
    for (int i = 0; i < 8; i++) {
      const int u = i & 1, v = (i >> 1) & 1, w = (i >> 2) & 1;
      const int x = c + u, y = c && turned ? w : v, z = c && turned ? 1 - v : w;
      snprintf(coefs + strlen(coefs), sizeof coefs - strlen(coefs), "%s%d %d %d", i ? " " : "", x,
               y, z);
    }
    snprintf(cube[c], sizeof cube[c],
             " <Geometry type=\"TensorBSpline3\" id=\"%d\">\n"
             "  <Basis type=\"TensorBSplineBasis3\">\n"
             "   <Basis type=\"BSplineBasis\" index=\"0\"><KnotVector degree=\"1\">0 0 1 1"
             "</KnotVector></Basis>\n"
             "   <Basis type=\"BSplineBasis\" index=\"1\"><KnotVector degree=\"1\">0 0 1 1"
             "</KnotVector></Basis>\n"
             "   <Basis type=\"BSplineBasis\" index=\"2\"><KnotVector degree=\"1\">0 0 1 1"
             "</KnotVector></Basis>\n"
             "  </Basis>\n"
             "  <coefs geoDim=\"3\">%s</coefs>\n"
             " </Geometry>\n",
             c, coefs);
  }
  snprintf(text, sizeof text, "<xml>\n%s%s%s</xml>\n", cube[0], cube[1], multipatch);
  return text;
}

static const char *two_cubes(const char *multipatch) { return cubes(multipatch, 0); }
static const char *turned_cubes(const char *multipatch) { return cubes(multipatch, 1); }

Test(geometry_file, multipatch_in_3d) {
  fea_context *ctx = open_ref();
  /* 3D: patch side patch side, 3 map entries, 3 orientation flags. */
  fea_geometry_file *f = read_text(
      ctx, two_cubes("<MultiPatch parDim=\"3\"><patches type=\"id_range\">0 1</patches>\n"
                     "<interfaces>0 2 1 1 0 1 2 1 1 1</interfaces>\n"
                     "<boundary>0 1 0 3 0 4 0 5 0 6 1 2 1 3 1 4 1 5 1 6</boundary>\n"
                     "</MultiPatch>\n"));
  int n = 0;
  OK(fea_geometry_file_get_num_interfaces(f, &n));
  cr_assert_eq(n, 1);
  const int map[3] = {0, 1, 2}, orient[3] = {0, 1, 1};
  expect_interface(f, 0, 0, FEA_SIDE_EAST, 1, FEA_SIDE_WEST, map, orient);
  OK(fea_geometry_file_get_num_boundary_sides(f, &n));
  cr_assert_eq(n, 10);
  int p = -1;
  fea_patch_side s = FEA_SIDE_WEST;
  OK(fea_geometry_file_get_boundary_side(f, 4, &p, &s, NULL));
  cr_assert_eq(p, 0);
  cr_assert_eq(s, FEA_SIDE_BACK);
  OK(fea_geometry_file_destroy(&f));
  /* A turned neighbour: directions 1 and 2 swapped, one reversed. */
  f = read_text(ctx,
                turned_cubes("<MultiPatch parDim=\"3\"><patches type=\"id_index\">1 0</patches>"
                             "<interfaces>1 1 0 2 0 2 1 1 0 1</interfaces></MultiPatch>\n"));
  const int map2[3] = {0, 2, 1}, orient2[3] = {0, 0, 1};
  expect_interface(f, 0, 1, FEA_SIDE_WEST, 0, FEA_SIDE_EAST, map2, orient2);
  OK(fea_geometry_file_destroy(&f));
  OK(fea_context_destroy(&ctx));
}

Test(geometry_file_errors, bad_multipatch_is_named) {
  fea_context *ctx = open_ref();
  const char *a = "four_patch_annulus.xml";
  expect_file_refused(ctx, file_with(a, "10 4 11 3 0", "10 4 19 3 0"), FEA_ERR_INVALID_ARG,
                      "<interfaces> (line 95): patch id 19 names no <Geometry>");
  expect_file_refused(ctx, file_with(a, "id_range\">10 13", "id_range\">10 14"),
                      FEA_ERR_INVALID_ARG, "id_range 10 14 names 5 patches; the file has 4");
  expect_file_refused(ctx, file_with(a, "id_range\">10 13", "id_range\">10 9"), FEA_ERR_INVALID_ARG,
                      "id_range 10 9 ends before it starts");
  expect_file_refused(ctx, file_with(a, "id_range\">10 13", "id_range\">10"), FEA_ERR_INVALID_ARG,
                      "id_range has 1 numbers");
  expect_file_refused(ctx, file_with(a, "type=\"id_range\">10 13", "type=\"id_index\">10 11 17"),
                      FEA_ERR_INVALID_ARG, "<patches> (line 94): patch id 17 names no <Geometry>");
  expect_file_refused(ctx, file_with(a, "type=\"id_range\">10 13", "type=\"id_index\">10 11 11"),
                      FEA_ERR_INVALID_ARG, "patch id 11 is listed twice");
  expect_file_refused(ctx, file_with(a, "type=\"id_range\">10 13", "type=\"id_list\">10 13"),
                      FEA_ERR_INVALID_ARG, "type \"id_list\" is not id_range or id_index");
  expect_file_refused(ctx, file_with(a, "<patches type=\"id_range\">10 13</patches>", ""),
                      FEA_ERR_INVALID_ARG, "<MultiPatch> (line 93): no <patches> element");
  expect_file_refused(ctx, file_with(a, "id_range\">10 13", "id_range\">10 12"),
                      FEA_ERR_INVALID_ARG,
                      "interface 2: patch id 13 is not in the MultiPatch's <patches>");
  expect_file_refused(ctx, file_with(a, "10 4 11 3", "10 5 11 3"), FEA_ERR_INVALID_ARG,
                      "interface 0: side 5 of patch id 10 is outside 1..4");
  expect_file_refused(ctx, file_with(a, "10 1 11 1", "10 0 11 1"), FEA_ERR_INVALID_ARG,
                      "boundary side 0: side 0 of patch id 10 is outside 1..4");
  expect_file_refused(ctx, file_with(a, "parDim=\"2\"", "parDim=\"3\""), FEA_ERR_INVALID_ARG,
                      "patch id 10 is 2D but parDim is 3");
  expect_file_refused(ctx, file_with(a, "parDim=\"2\"", "parDim=\"two\""), FEA_ERR_INVALID_ARG,
                      "<MultiPatch> (line 93): parDim=\"two\"; it must be 2 or 3");
  expect_file_refused(ctx, file_with(a, "parDim=\"2\"", ""), FEA_ERR_INVALID_ARG,
                      "parDim=\"(none)\"");
  expect_file_refused(ctx, file_with(a, "11 4 12 3", "11 4 11 4"), FEA_ERR_INVALID_ARG,
                      "interface 1 names side 4 of patch id 11 twice");
  expect_file_refused(ctx, file_with(a, "10 4 11 3", "10 4 11 x3"), FEA_ERR_INVALID_ARG,
                      "<interfaces> (line 95): number 3 is \"x3\", not an integer");
  expect_file_refused(ctx, file_with(a, "10 1 11 1", "10 1.0 11 1"), FEA_ERR_INVALID_ARG,
                      "<boundary> (line 101): number 1 is \"1.0\", not an integer");
  expect_file_refused(ctx, file_with(a, "13 4 10 3 0 1 1 0", "13 4 10 3 0 1 1"),
                      FEA_ERR_INVALID_ARG,
                      "31 numbers are not a whole number of interfaces of 8 (patch, side, "
                      "patch, side, 2 direction-map entries, 2 orientation flags)");
  expect_file_refused(ctx, file_with(a, "12 1 13 1", "12 1 13"), FEA_ERR_INVALID_ARG,
                      "7 numbers are not (patch, side) pairs");
  expect_file_refused(ctx, file_with(a, "10 1 11 1", "10 4 11 1"), FEA_ERR_INVALID_ARG,
                      "boundary side 0: side 4 of patch id 10 is already glued in interface 0");
  expect_file_refused(ctx, file_with(a, "11 4 12 3", "11 4 10 3"), FEA_ERR_INVALID_ARG,
                      "interface 3: side 3 of patch id 10 is already glued in interface 1");
  expect_file_refused(ctx, file_with(a, "12 2 13 2", "12 2 10 2"), FEA_ERR_INVALID_ARG,
                      "boundary side 7: side 2 of patch id 10 is already listed as boundary "
                      "side 4");
  expect_file_refused(ctx, file_with(a, "10 4 11 3 0 1 1 0", "10 4 11 3 1 1 1 0"),
                      FEA_ERR_INVALID_ARG, "interface 0: the direction map");
  expect_file_refused(ctx, file_with(a, "10 4 11 3 0 1 1 0", "10 4 11 3 5 1 1 0"),
                      FEA_ERR_INVALID_ARG,
                      "interface 0: direction-map entry 0 is 5; it must be in 0..1");
  expect_file_refused(ctx, file_with(a, "10 4 11 3 0 1 1 0", "10 4 11 3 0 1 2 0"),
                      FEA_ERR_INVALID_ARG,
                      "interface 0: orientation flag 0 is 2; it must be 0 or 1");
  expect_file_refused(ctx, file_with(a, "10 4 11 3 0 1 1 0", "10 4 11 3 0 1 1 0 1"),
                      FEA_ERR_INVALID_ARG, "33 numbers are not a whole number of interfaces");
  expect_file_refused(ctx, file_with(a, "10 4 11 3 0 1 1 0", "-1 4 11 3 0 1 1 0"),
                      FEA_ERR_INVALID_ARG, "patch id -1 names no <Geometry>");
  expect_file_refused(ctx, file_with(a, "10 4 11 3 0 1 1 0", "10 4 11 3 0 1 1 99999999999"),
                      FEA_ERR_INVALID_ARG, "not an integer");
  /* A patch id that two Geometry elements carry. */
  expect_file_refused(ctx, file_with(a, "id=\"11\"", "id=\"10\""), FEA_ERR_INVALID_ARG,
                      "patch id 10 names two <Geometry> elements");
  /* 3D: the 2D count (8) is not a whole number of 3D interfaces (10). */
  expect_file_refused(ctx,
                      two_cubes("<MultiPatch parDim=\"3\"><patches type=\"id_range\">0 1</patches>"
                                "<interfaces>0 2 1 1 0 1 1 1</interfaces></MultiPatch>"),
                      FEA_ERR_INVALID_ARG, "8 numbers are not a whole number of interfaces of 10");
  expect_file_refused(ctx,
                      two_cubes("<MultiPatch parDim=\"3\"><patches type=\"id_range\">0 1</patches>"
                                "<interfaces>0 2 1 7 0 1 2 1 1 1</interfaces></MultiPatch>"),
                      FEA_ERR_INVALID_ARG, "side 7 of patch id 1 is outside 1..6");
  OK(fea_context_destroy(&ctx));
}

/* ------------------------------------------------- topology vs geometry */

/* Two bilinear unit squares (ids 0 and 1): [0, 1]^2 and [1 + gap, 2 + gap] x
 * [0, 1], and a MultiPatch. */
static const char *two_squares(double gap, const char *multipatch) {
  static char text[4096];
  char sq[2][1024];
  for (int c = 0; c < 2; c++) {
    const double x0 = c ? 1 + gap : 0, x1 = x0 + 1;
    snprintf(sq[c], sizeof sq[c],
             " <Geometry type=\"TensorBSpline2\" id=\"%d\">\n"
             "  <Basis type=\"TensorBSplineBasis2\">\n"
             "   <Basis type=\"BSplineBasis\" index=\"0\"><KnotVector degree=\"1\">0 0 1 1"
             "</KnotVector></Basis>\n"
             "   <Basis type=\"BSplineBasis\" index=\"1\"><KnotVector degree=\"1\">0 0 1 1"
             "</KnotVector></Basis>\n"
             "  </Basis>\n"
             "  <coefs geoDim=\"2\">%.17g 0 %.17g 0 %.17g 1 %.17g 1</coefs>\n"
             " </Geometry>\n",
             c, x0, x1, x0, x1);
  }
  snprintf(text, sizeof text, "<xml>\n%s%s%s</xml>\n", sq[0], sq[1], multipatch);
  return text;
}

/* The file's topology is checked against its geometry, as G+Smo's
 * computeTopology compares patches (the corners and the centre of each
 * side): an interface between sides that are apart, or glued in another
 * orientation than the geometry's, and a "boundary" side that another side
 * covers, are refused, naming the interface or side, the patches and sides,
 * and the distance or the orientation. */
Test(geometry_file_errors, topology_that_disagrees_with_the_geometry_is_named) {
  fea_context *ctx = open_ref();
  /* East of square 0 on west of square 1, the tangent (direction 1) the
   * same way: read when they touch, refused 1 apart. */
  const char *glued =
      "<MultiPatch parDim=\"2\"><patches type=\"id_range\">0 1</patches>"
      "<interfaces>0 2 1 1 0 1 1 1</interfaces></MultiPatch>\n";
  fea_geometry_file *f = read_text(ctx, two_squares(0, glued));
  OK(fea_geometry_file_destroy(&f));
  expect_file_refused(ctx, two_squares(1, glued), FEA_ERR_INVALID_ARG,
                      "interface 0 (patch id 0 side 2, patch id 1 side 1): the sides do not "
                      "coincide: the point (1, 0) of patch id 0 is 1 from (2, 0) of patch id 1");
  /* Within the tolerance (1e-6 of the diameter of the patches' control
   * points): read. */
  f = read_text(ctx, two_squares(1e-9, glued));
  OK(fea_geometry_file_destroy(&f));
  /* The tangent the wrong way: the orientation named, the file's and the
   * geometry's. */
  expect_file_refused(ctx, two_squares(0, text_with(glued, "0 2 1 1 0 1 1 1", "0 2 1 1 0 1 1 0")),
                      FEA_ERR_INVALID_ARG,
                      "interface 0 (patch id 0 side 2, patch id 1 side 1): the orientation "
                      "disagrees with the geometry: the file gives direction map (0, 1) and "
                      "orientation (0, 0), the geometry (0, 1) and (0, 1)");
  /* The annulus: quarter 10's radial direction against quarter 11's. */
  const char *a = "four_patch_annulus.xml";
  expect_file_refused(ctx, file_with(a, "10 4 11 3 0 1 1 0", "10 4 11 3 0 1 0 0"),
                      FEA_ERR_INVALID_ARG,
                      "interface 0 (patch id 10 side 4, patch id 11 side 3): the orientation "
                      "disagrees with the geometry: the file gives direction map (0, 1) and "
                      "orientation (0, 0), the geometry (0, 1) and (1, 0)");
  /* North of quarter 10 called boundary: it is south of quarter 11. */
  const char *t = file_with(a, "   10 4 11 3 0 1 1 0\n", "");
  expect_file_refused(ctx,
                      text_with(t, "<boundary name=\"inner\">", "<boundary name=\"inner\">10 4 "),
                      FEA_ERR_INVALID_ARG,
                      "boundary side 0 (patch id 10 side 4) is not boundary: it coincides with "
                      "side 3 of patch id 11");
  /* Square 0's east side as boundary, where square 1 is. */
  expect_file_refused(ctx,
                      two_squares(0,
                                  "<MultiPatch parDim=\"2\"><patches type=\"id_range\">0 1"
                                  "</patches><boundary>0 1 0 2</boundary></MultiPatch>\n"),
                      FEA_ERR_INVALID_ARG,
                      "boundary side 1 (patch id 0 side 2) is not boundary: it coincides with "
                      "side 1 of patch id 1");
  /* 3D: cube 1 turned, glued as if it were not (and the other way round). */
  const char *straight =
      "<MultiPatch parDim=\"3\"><patches type=\"id_range\">0 1</patches>"
      "<interfaces>0 2 1 1 0 1 2 1 1 1</interfaces></MultiPatch>\n";
  expect_file_refused(ctx, turned_cubes(straight), FEA_ERR_INVALID_ARG,
                      "interface 0 (patch id 0 side 2, patch id 1 side 1): the orientation "
                      "disagrees with the geometry: the file gives direction map (0, 1, 2) and "
                      "orientation (0, 1, 1), the geometry (0, 2, 1) and (0, 1, 0)");
  expect_file_refused(ctx, two_cubes(text_with(straight, "0 1 2 1 1 1", "0 2 1 1 0 1")),
                      FEA_ERR_INVALID_ARG, "the geometry (0, 1, 2) and (0, 1, 1)");
  OK(fea_context_destroy(&ctx));
}

/* ------------------------------------------------- what the reader ignores */

/* An attribute or a child the reader does not use is logged once, at
 * FEA_LOG_WARN, naming the element, its line and the item; the committed
 * files (what G+Smo writes) read without a warning. */
Test(geometry_file, ignored_attributes_and_elements_are_logged) {
  fea_context *ctx = open_ref();
  warnings w = {0, "", ""};
  OK(fea_context_set_log_callback(ctx, FEA_LOG_WARN, keep_warning, &w));
  const char *dir = getenv("FEA_TEST_DATA");
  cr_assert(dir, "FEA_TEST_DATA is not set");
  const char *const committed[] = {"gismo/four_patch_annulus.xml",
                                   "gismo/quarter_annulus.xml",
                                   "gismo/thick_ring.xml",
                                   "gismo/two_patches.xml",
                                   "../../examples/data/annulus.xml",
                                   "../../examples/data/quarter_annulus.xml"};
  for (size_t i = 0; i < sizeof committed / sizeof *committed; i++) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, committed[i]);
    fea_geometry_file *f = NULL;
    OK(fea_geometry_file_read(ctx, path, &f));
    cr_assert_eq(w.count, 0, "%s: %d warnings, the first: %s", committed[i], w.count, w.first);
    OK(fea_geometry_file_destroy(&f));
  }
  /* An unknown attribute on <Geometry> (line 6 of the quarter annulus). */
  fea_geometry_file *f = read_text(ctx, file_with("quarter_annulus.xml", "type=\"TensorNurbs2\"",
                                                  "type=\"TensorNurbs2\" foo=\"1\""));
  cr_assert_eq(w.count, 1, "%d warnings, the first: %s", w.count, w.first);
  cr_assert(strstr(w.first, "<Geometry> (line 6): attribute foo=\"1\" is not one the reader uses"),
            "the warning: %s", w.first);
  OK(fea_geometry_file_destroy(&f));
  /* An unknown child of the tensor <Basis>, and a second <coefs>. */
  w.count = 0;
  f = read_text(ctx, file_with("quarter_annulus.xml", "<Basis type=\"BSplineBasis\" index=\"0\">",
                               "<bar/><Basis type=\"BSplineBasis\" index=\"0\">"));
  cr_assert_eq(w.count, 1, "%d warnings, the first: %s", w.count, w.first);
  cr_assert(strstr(w.first, "<Basis> (line 8): child <bar> (line 9) is not one the reader uses"),
            "the warning: %s", w.first);
  OK(fea_geometry_file_destroy(&f));
  w.count = 0;
  f = read_text(ctx, file_with("quarter_annulus.xml", "</Geometry>",
                               "<coefs geoDim=\"2\">0 0</coefs></Geometry>"));
  cr_assert_eq(w.count, 1, "%d warnings, the first: %s", w.count, w.first);
  cr_assert(strstr(w.first, "a second <coefs>"), "the warning: %s", w.first);
  OK(fea_geometry_file_destroy(&f));
  OK(fea_context_destroy(&ctx));
}
