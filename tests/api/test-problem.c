/* The Poisson problem: element forms, Dirichlet lifting, argument checks. */
#include <stdio.h>

#include "api-common.h"
#include "solve-common.h"

/* Harmonic functions in the space: linear (P1), bilinear (Q1, B-splines p = 1) or quadratic:
 * with f = 0 and g = u, the discrete solution is u itself, so the lifting and
 * the elimination of boundary DoFs are checked to round-off. */
static double linear(const double *x, void *user) {
  (void)user;
  return 1 + x[0] + 2 * x[1];
}
static void linear_grad(const double *x, double *g, void *user) {
  (void)x;
  (void)user;
  g[0] = 1;
  g[1] = 2;
}
static double bilinear(const double *x, void *user) {
  (void)user;
  return 1 + x[0] + 2 * x[1] + x[0] * x[1];
}
static void bilinear_grad(const double *x, double *g, void *user) {
  (void)user;
  g[0] = 1 + x[1];
  g[1] = 2 + x[0];
}
static double quadratic(const double *x, void *user) {
  (void)user;
  return x[0] * x[0] - x[1] * x[1] + 0.5;
}
static void quadratic_grad(const double *x, double *g, void *user) {
  (void)user;
  g[0] = 2 * x[0];
  g[1] = -2 * x[1];
}

typedef struct exact_case {
  char name[16];
  int bspline, p, simplices, kind; /* kind 0: linear, 1: bilinear, 2: quadratic */
} exact_case;

ParameterizedTestParameters(problem, dirichlet_lifting_is_exact) {
  static exact_case cases[] = {
      {"Q1", 0, 1, 0, 1},         {"Q2", 0, 2, 0, 2},         {"Q3", 0, 3, 0, 2},
      {"P1", 0, 1, 1, 0},         {"P2", 0, 2, 1, 2},         {"bspline-p1", 1, 1, 0, 1},
      {"bspline-p2", 1, 2, 0, 2}, {"bspline-p3", 1, 3, 0, 2},
  };
  return cr_make_param_array(exact_case, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(exact_case *c, problem, dirichlet_lifting_is_exact) {
  fea_context *ctx = NULL;
  cr_assert_eq(fea_context_create("/cpu/ref", &ctx), FEA_SUCCESS);
  fea_mesh *mesh = NULL;
  fea_space *s = NULL;
  if (c->bspline) {
    fea_bspline_desc d = FEA_BSPLINE_DESC_INIT;
    d.degree[0] = d.degree[1] = c->p;
    d.n[0] = 5;
    d.n[1] = 4;
    d.upper[0] = 2.0; /* a non-unit box checks the geometry scaling too */
    cr_assert_eq(fea_space_create_bspline(ctx, &d, &s), FEA_SUCCESS, "%s",
                 fea_context_last_error(NULL));
  } else {
    fea_mesh_desc md = FEA_MESH_DESC_INIT;
    md.n[0] = 5;
    md.n[1] = 4;
    md.upper[0] = 2.0;
    md.simplices = c->simplices;
    cr_assert_eq(fea_mesh_create_structured(ctx, &md, &mesh), FEA_SUCCESS, "%s",
                 fea_context_last_error(NULL));
    cr_assert_eq(fea_space_create_lagrange(mesh, c->p, FEA_NODES_EQUISPACED, &s), FEA_SUCCESS, "%s",
                 fea_context_last_error(NULL));
  }
  static const fea_scalar_fn fns[] = {linear, bilinear, quadratic};
  static const fea_gradient_fn grads[] = {linear_grad, bilinear_grad, quadratic_grad};
  fea_scalar_fn u = fns[c->kind];
  fea_gradient_fn gu = grads[c->kind];
  fea_problem_desc d = FEA_PROBLEM_DESC_INIT;
  d.dirichlet = u;
  fea_problem *pb = NULL;
  cr_assert_eq(fea_problem_create_poisson(s, &d, &pb), FEA_SUCCESS, "%s",
               fea_context_last_error(NULL));
  fea_space_info info = FEA_SPACE_INFO_INIT;
  cr_assert_eq(fea_space_get_info(s, &info), FEA_SUCCESS);
  double *full = malloc((size_t)info.num_dofs * sizeof *full), l2 = 1, h1 = 1;
  solve_and_measure(pb, u, gu, NULL, &l2, &h1, full);
  cr_expect(l2 < 1e-11 && h1 < 1e-10, "%s: harmonic solution not reproduced: L2 %.3e, H1 %.3e",
            c->name, l2, h1);
  free(full);
  fea_problem_destroy(&pb);
  fea_space_destroy(&s);
  fea_mesh_destroy(&mesh);
  fea_context_destroy(&ctx);
}

/* Element stiffness: symmetric, rows sum to zero (constants are in the kernel),
 * positive on non-constant vectors; mass entries sum to the element measure. */
Test(problem, element_matrices) {
  fea_context *ctx = NULL;
  cr_assert_eq(fea_context_create("/cpu/ref", &ctx), FEA_SUCCESS);
  fea_bspline_desc d = FEA_BSPLINE_DESC_INIT;
  d.degree[0] = 3;
  d.degree[1] = 2; /* different degrees per direction */
  d.n[0] = 4;
  d.n[1] = 3;
  d.upper[1] = 3.0;
  fea_space *s = NULL;
  cr_assert_eq(fea_space_create_bspline(ctx, &d, &s), FEA_SUCCESS, "%s",
               fea_context_last_error(NULL));
  fea_problem_desc pd = FEA_PROBLEM_DESC_INIT;
  pd.sigma = 2.5;
  fea_problem *pb = NULL;
  cr_assert_eq(fea_problem_create_poisson(s, &pd, &pb), FEA_SUCCESS);
  enum { NB = 12 };
  double K[NB * NB], M[NB * NB];
  for (fea_index e = 0; e < 12; e++) {
    cr_assert_eq(fea_problem_element_system(pb, e, K, NULL), FEA_SUCCESS);
    cr_assert_eq(fea_problem_element_mass(pb, e, M), FEA_SUCCESS);
    double msum = 0;
    for (int i = 0; i < NB; i++) {
      double rs = 0;
      for (int j = 0; j < NB; j++) {
        cr_expect(fabs(K[i * NB + j] - K[j * NB + i]) <= 1e-13 * fabs(K[i * NB + i]),
                  "K not symmetric");
        rs += K[i * NB + j];
        msum += M[i * NB + j];
      }
      cr_expect(fabs(rs) <= 1e-12 * K[i * NB + i], "row %d of element %lld sums to %g", i,
                (long long)e, rs);
      cr_expect(K[i * NB + i] > 0, "diagonal entry %d is %g", i, K[i * NB + i]);
    }
    /* elements are 1/4 x 1 in the box [0,1] x [0,3] */
    cr_expect(fabs(msum - 0.25) <= 1e-13, "mass of element %lld sums to %.16g, not 0.25",
              (long long)e, msum);
  }
  fea_problem_destroy(&pb);
  fea_space_destroy(&s);
  fea_context_destroy(&ctx);
}

static double negative_sigma(const double *x, void *user) {
  (void)user;
  return x[0] > 0.5 ? -1.0 : 1.0;
}

Test(problem, bad_arguments) {
  fea_context *ctx = NULL;
  cr_assert_eq(fea_context_create("/cpu/ref", &ctx), FEA_SUCCESS);
  fea_bspline_desc bd = FEA_BSPLINE_DESC_INIT;
  bd.n[0] = bd.n[1] = 2;
  fea_space *s = NULL;
  cr_assert_eq(fea_space_create_bspline(ctx, &bd, &s), FEA_SUCCESS);
  fea_problem *pb = (fea_problem *)&bd; /* must be reset to NULL on failure */
  fea_problem_desc d = FEA_PROBLEM_DESC_INIT;
  d.sigma = 0;
  cr_expect_eq(fea_problem_create_poisson(s, &d, &pb), FEA_ERR_INVALID_ARG);
  cr_expect_null(pb);
  cr_expect(strstr(fea_context_last_error(NULL), "sigma = 0") != NULL, "%s",
            fea_context_last_error(NULL));
  d.sigma = NAN;
  cr_expect_eq(fea_problem_create_poisson(s, &d, &pb), FEA_ERR_INVALID_ARG);
  d = (fea_problem_desc)FEA_PROBLEM_DESC_INIT;
  d.quad_points = 21;
  cr_expect_eq(fea_problem_create_poisson(s, &d, &pb), FEA_ERR_INVALID_ARG);
  cr_expect(strstr(fea_context_last_error(NULL), "21") != NULL);
  d.quad_points = 0;
  d.size = 4;
  cr_expect_eq(fea_problem_create_poisson(s, &d, &pb), FEA_ERR_INVALID_ARG);
  cr_expect_eq(fea_problem_create_poisson(s, NULL, &pb), FEA_ERR_INVALID_ARG);
  cr_expect_eq(fea_problem_create_poisson(NULL, &d, &pb), FEA_ERR_INVALID_ARG);

  /* A coefficient that turns negative is caught where it is evaluated. */
  d = (fea_problem_desc)FEA_PROBLEM_DESC_INIT;
  d.sigma_fn = negative_sigma;
  cr_assert_eq(fea_problem_create_poisson(s, &d, &pb), FEA_SUCCESS);
  fea_matrix *A = (fea_matrix *)&bd;
  double b[16];
  cr_expect_eq(fea_problem_assemble_reference(pb, b, &A), FEA_ERR_INVALID_ARG);
  cr_expect_null(A);
  cr_expect(strstr(fea_context_last_error(NULL), "sigma is -1 at x = (") != NULL, "%s",
            fea_context_last_error(NULL));
  double K[9];
  cr_expect_eq(fea_problem_element_system(pb, 4, K, NULL), FEA_ERR_INVALID_ARG);
  cr_expect(strstr(fea_context_last_error(NULL), "element 4") != NULL);
  fea_problem_destroy(&pb);
  fea_space_destroy(&s);
  fea_context_destroy(&ctx);
}

/* Sizes far beyond the machine, refused at once and before allocating
 * (#27): a 2D p = 3 space with n = 100000 (1e10 DoFs) used to loop 70 s over
 * its DoFs before the problem refused; a 3D p = 3 space with n = 4096
 * (6.9e10 DoFs) ran for minutes. Under a 256 MiB budget the 3D space's
 * boundary list (1e8 DoFs) is refused by the space itself. */
Test(problem, sizes_refused_before_allocating, .timeout = 20) {
  fea_context *ctx = NULL;
  OK(fea_context_create("/cpu/ref", &ctx));
  OK(fea_context_set_memory_limit(ctx, 256u << 20));
  fea_bspline_desc d = FEA_BSPLINE_DESC_INIT;
  d.degree[0] = d.degree[1] = 3;
  d.n[0] = d.n[1] = 100000;
  fea_space *s = NULL;
  OK(fea_space_create_bspline(ctx, &d, &s));
  fea_problem_desc pd = FEA_PROBLEM_DESC_INIT;
  fea_problem *pb = (fea_problem *)&pb;
  EXPECT_FAIL(fea_problem_create_poisson(s, &pd, &pb), FEA_ERR_OUT_OF_MEMORY, ctx,
              "the problem's DoF maps over 10000600009 DoFs needs");
  cr_assert_null(pb);
  OK(fea_space_destroy(&s));
  d.dim = 3;
  d.degree[2] = 3;
  d.n[0] = d.n[1] = d.n[2] = 4096;
  s = (fea_space *)&s;
  EXPECT_FAIL(fea_space_create_bspline(ctx, &d, &s), FEA_ERR_OUT_OF_MEMORY, ctx,
              "the list of 100761626 boundary DoFs needs");
  cr_assert_null(s);
  OK(fea_context_destroy(&ctx));
}
