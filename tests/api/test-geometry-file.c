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
