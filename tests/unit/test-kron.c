/* The Kronecker operator (src/matfree/kron/) against the assembled matrix of
 * the same problem (fea_problem_assemble_reference): y = A x, y += A x and
 * diag(A) for every instruction set this CPU runs, in 1D, 2D and 3D, p = 1
 * to 5, uniform and uneven knots (a doubled knot), non-unit boxes, a sigma
 * other than 1, every side Dirichlet and mixed Dirichlet / Neumann sides,
 * the problem's own rule, one and three threads; and the problems it must
 * leave to the element-wise kernels. Through the public operator it is the
 * default MATFREE_SUMFACT kernel on such boxes (checked by its info). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>
#include <feaccel.h>

#include "disc/problem.h"
#include "linalg/matrix.h"
#include "matfree/kron/kron.h"

static fea_context *ctx;
static uint64_t rng_state = 0x2545f4914f6cdd1dull;

static double urand(void) { /* xorshift64*, uniform in [-1, 1) */
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return 2.0 * (double)((rng_state * 0x2545f4914f6cdd1dull) >> 11) * 0x1p-53 - 1.0;
}

static void setup(void) { cr_assert_eq(fea_context_create("/cpu/ref", &ctx), FEA_SUCCESS); }
static void teardown(void) { fea_context_destroy(&ctx); }

TestSuite(kron, .init = setup, .fini = teardown, .timeout = 300);

/* Uneven knots of degree p on [0, 1], one doubled when p >= 2. */
static int uneven_knots(int p, double *t) {
  static const double inner[] = {0.13, 0.4, 0.77};
  int m = 0;
  for (int i = 0; i <= p; i++) t[m++] = 0.0;
  for (int i = 0; i < 3; i++) {
    t[m++] = inner[i];
    if (i == 1 && p >= 2) t[m++] = inner[i];
  }
  for (int i = 0; i <= p; i++) t[m++] = 1.0;
  return m;
}

static fea_space *box(int dim, int p, int uneven, const fea_index n[3]) {
  fea_bspline_desc bd = FEA_BSPLINE_DESC_INIT;
  static double t[3][32];
  bd.dim = dim;
  for (int k = 0; k < dim; k++) {
    bd.degree[k] = p;
    bd.n[k] = n[k];
    bd.lower[k] = -0.5 * k;
    bd.upper[k] = 1.0 + 0.75 * k;
    if (uneven && k == 0) {
      bd.num_knots[k] = uneven_knots(p, t[k]);
      bd.knots[k] = t[k];
    }
  }
  fea_space *s;
  cr_assert_eq(fea_space_create_bspline(ctx, &bd, &s), FEA_SUCCESS, "%s",
               fea_context_last_error(ctx));
  return s;
}

/* A's entry (i, j), 0 where it stores none. */
static double entry(const fea_matrix *A, fea_index i, fea_index j) {
  for (fea_index k = A->row_ptr[i]; k < A->row_ptr[i + 1]; k++)
    if (A->col_idx[k] == j) return A->values[k];
  return 0.0;
}

/* The dense block of every third row up to 24 (the Schwarz smoother's
 * entries) against A's. */
static void check_block(const fea_kron_state *s, const fea_matrix *A, const char *what) {
  fea_index rows[24];
  int m = 0;
  for (fea_index i = 1; i < A->rows && m < 24; i += 3) rows[m++] = i;
  double M[24 * 24], big = 0;
  fea_kron_block(s, rows, m, M);
  for (int a = 0; a < m; a++) big = fmax(big, fabs(entry(A, rows[a], rows[a])));
  for (int a = 0; a < m; a++)
    for (int b = 0; b < m; b++)
      cr_assert(fabs(M[a + b * m] - entry(A, rows[a], rows[b])) <= 1e-11 * big,
                "%s: block (%lld, %lld) = %.17g, A = %.17g", what, (long long)rows[a],
                (long long)rows[b], M[a + b * m], entry(A, rows[a], rows[b]));
}

/* Every ISA's apply, apply-add and diagonal against the assembled matrix. */
static void check(const fea_problem *pb, const char *what) {
  char why[200];
  cr_assert(fea_kron_supports(pb, why, sizeof why), "%s: %s", what, why);
  const fea_index n = pb->num_free;
  double *b = malloc((size_t)n * sizeof *b + 8), *x = malloc((size_t)n * sizeof *x + 8);
  double *y0 = malloc((size_t)n * sizeof *y0 + 8), *y = malloc((size_t)n * sizeof *y + 8);
  double *d = malloc((size_t)n * sizeof *d + 8);
  fea_matrix *A;
  cr_assert_eq(fea_problem_assemble_reference(pb, b, &A), FEA_SUCCESS);
  for (fea_index i = 0; i < n; i++) x[i] = urand();
  cr_assert_eq(fea_matrix_multiply(A, x, y0), FEA_SUCCESS);
  double scale = 0;
  for (fea_index i = 0; i < n; i++) scale = fmax(scale, fabs(y0[i]));
  static const char *isas[] = {"baseline", "avx2", "avx512"};
  int ran = 0;
  for (int v = 0; v < 3; v++)
    for (int threads = 1; threads <= 3; threads += 2) {
      fea_kron_state *s;
      fea_status st = fea_kron_create_with(pb, isas[v], threads, &s);
      if (st == FEA_ERR_UNSUPPORTED) continue; /* not on this CPU */
      cr_assert_eq(st, FEA_SUCCESS, "%s: %s", what, fea_context_last_error(ctx));
      cr_assert_eq(s->num_free, n);
      ran++;
      for (int add = 0; add < 2; add++) {
        for (fea_index i = 0; i < n; i++) y[i] = add ? 0.5 * y0[i] : NAN;
        s->isa->apply(s, x, y, add, threads);
        for (fea_index i = 0; i < n; i++) {
          const double want = add ? 1.5 * y0[i] : y0[i];
          cr_assert(fabs(y[i] - want) <= 1e-12 * scale,
                    "%s, %s, %d threads, add %d: y[%lld] = %.17g, A x = %.17g", what, isas[v],
                    threads, add, (long long)i, y[i], want);
        }
      }
      check_block(s, A, what);
      fea_kron_diagonal(s, d);
      for (fea_index i = 0; i < n; i++) {
        double aii = 0;
        for (fea_index k = A->row_ptr[i]; k < A->row_ptr[i + 1]; k++)
          if (A->col_idx[k] == i) aii = A->values[k];
        cr_assert(fabs(d[i] - aii) <= 1e-12 * fabs(aii), "%s: diag[%lld] = %.17g, A_ii = %.17g",
                  what, (long long)i, d[i], aii);
      }
      fea_kron_destroy(s);
    }
  cr_assert(ran >= 2, "the baseline kernels always run");
  fea_matrix_destroy(&A);
  free(b), free(x), free(y0), free(y), free(d);
}

static void run_case(int dim, int p, int uneven, int mixed, int quad_points) {
  const fea_index n[3] = {4 + (dim < 3 ? 3 : 0), 3 + (dim < 3 ? 2 : 0), 3};
  fea_space *s = box(dim, p, uneven, n);
  fea_problem_desc pd = FEA_PROBLEM_DESC_INIT;
  pd.sigma = 2.5;
  pd.quad_points = quad_points;
  if (mixed) /* Neumann on the high end of direction 0 and the low end of direction 1 */
    for (int side = 0; side < 2 * dim; side++)
      if (side == 1 || side == 2) pd.sides[side].type = FEA_BC_NEUMANN;
  fea_problem *pb;
  cr_assert_eq(fea_problem_create_poisson(s, &pd, &pb), FEA_SUCCESS, "%s",
               fea_context_last_error(ctx));
  char what[96];
  snprintf(what, sizeof what, "%dD p = %d%s%s, %d-point rule", dim, p, uneven ? " uneven" : "",
           mixed ? " mixed sides" : "", quad_points ? quad_points : p + 1);
  check(pb, what);
  fea_problem_destroy(&pb);
  fea_space_destroy(&s);
}

Test(kron, one_d_two_d_three_d_every_degree_equals_the_assembled_matrix) {
  for (int p = 1; p <= 5; p++)
    for (int uneven = 0; uneven < 2; uneven++)
      for (int mixed = 0; mixed < 2; mixed++) {
        run_case(1, p, uneven, mixed, 0);
        run_case(2, p, uneven, mixed, 0);
        if (p <= 4) run_case(3, p, uneven, mixed, 0);
      }
}

Test(kron, the_problems_rule_is_the_operators) {
  run_case(2, 2, 1, 0, 5); /* more points than p + 1: the same exact integrals */
  run_case(3, 3, 0, 1, 2); /* fewer: under-integrated, still the assembled matrix */
}

Test(kron, problems_outside_its_reach_are_refused_with_the_reason) {
  const fea_index n[3] = {4, 4, 1};
  fea_space *s = box(2, 2, 0, n);
  fea_problem_desc pd = FEA_PROBLEM_DESC_INIT;
  pd.reaction = 1.0;
  fea_problem *pb;
  char why[200] = "";
  cr_assert_eq(fea_problem_create_poisson(s, &pd, &pb), FEA_SUCCESS);
  cr_assert_not(fea_kron_supports(pb, why, sizeof why));
  cr_assert(strstr(why, "reaction"), "%s", why);
  fea_problem_destroy(&pb);
  pd = (fea_problem_desc)FEA_PROBLEM_DESC_INIT;
  pd.sides[0].type = FEA_BC_ROBIN;
  pd.sides[0].alpha = 1.0;
  cr_assert_eq(fea_problem_create_poisson(s, &pd, &pb), FEA_SUCCESS);
  cr_assert_not(fea_kron_supports(pb, why, sizeof why));
  cr_assert(strstr(why, "Robin"), "%s", why);
  fea_problem_destroy(&pb);
  fea_space_destroy(&s);
}

Test(kron, the_public_operator_runs_it_by_default_on_a_bspline_box) {
  const fea_index n[3] = {6, 5, 4};
  fea_space *s = box(3, 2, 1, n);
  fea_problem_desc pd = FEA_PROBLEM_DESC_INIT;
  fea_problem *pb;
  cr_assert_eq(fea_problem_create_poisson(s, &pd, &pb), FEA_SUCCESS);
  fea_operator_desc od = FEA_OPERATOR_DESC_INIT;
  od.kind = FEA_OPERATOR_MATFREE_SUMFACT;
  fea_operator *op;
  cr_assert_eq(fea_operator_create(ctx, pb, &od, &op), FEA_SUCCESS, "%s",
               fea_context_last_error(ctx));
  fea_operator_info info = FEA_OPERATOR_INFO_INIT;
  cr_assert_eq(fea_operator_get_info(op, &info), FEA_SUCCESS);
  cr_assert(strstr(info.kernel, "Kronecker"), "kernel: %s", info.kernel);
  cr_assert_eq(info.kind_run, FEA_OPERATOR_MATFREE_SUMFACT);
  fea_operator_destroy(&op);
  /* an explicit strategy asks for the element-wise kernel and gets it */
  od.strategy = FEA_UPDATE_COLORING;
  cr_assert_eq(fea_operator_create(ctx, pb, &od, &op), FEA_SUCCESS);
  cr_assert_eq(fea_operator_get_info(op, &info), FEA_SUCCESS);
  cr_assert_null(strstr(info.kernel, "Kronecker"), "kernel: %s", info.kernel);
  fea_operator_destroy(&op);
  fea_problem_destroy(&pb);
  fea_space_destroy(&s);
}

/* ---- linear elasticity ----------------------------------------------------------------------- */

/* Every ISA's elastic apply, apply-add and diagonal against the assembled
 * matrix of the same elasticity problem. */
static void check_elastic(const fea_problem *pb, const char *what) {
  char why[200];
  cr_assert(fea_kron_elastic_supports(pb, why, sizeof why), "%s: %s", what, why);
  const fea_index n = pb->num_free;
  double *b = malloc((size_t)n * sizeof *b + 8), *x = malloc((size_t)n * sizeof *x + 8);
  double *y0 = malloc((size_t)n * sizeof *y0 + 8), *y = malloc((size_t)n * sizeof *y + 8);
  double *d = malloc((size_t)n * sizeof *d + 8);
  fea_matrix *A;
  cr_assert_eq(fea_problem_assemble_reference(pb, b, &A), FEA_SUCCESS, "%s",
               fea_context_last_error(ctx));
  for (fea_index i = 0; i < n; i++) x[i] = urand();
  cr_assert_eq(fea_matrix_multiply(A, x, y0), FEA_SUCCESS);
  double scale = 0;
  for (fea_index i = 0; i < n; i++) scale = fmax(scale, fabs(y0[i]));
  static const char *isas[] = {"baseline", "avx2", "avx512"};
  int ran = 0;
  for (int v = 0; v < 3; v++)
    for (int threads = 1; threads <= 3; threads += 2) {
      fea_kron_elastic *e;
      fea_status st = fea_kron_elastic_create_with(pb, isas[v], threads, &e);
      if (st == FEA_ERR_UNSUPPORTED) continue;
      cr_assert_eq(st, FEA_SUCCESS, "%s: %s", what, fea_context_last_error(ctx));
      cr_assert_eq(e->ncomp * e->N, n);
      ran++;
      for (int add = 0; add < 2; add++) {
        for (fea_index i = 0; i < n; i++) y[i] = add ? 0.5 * y0[i] : NAN;
        fea_kron_elastic_apply(e, x, y, add, threads);
        for (fea_index i = 0; i < n; i++) {
          const double want = add ? 1.5 * y0[i] : y0[i];
          cr_assert(fabs(y[i] - want) <= 1e-12 * scale,
                    "%s, %s, %d threads, add %d: y[%lld] = %.17g, A x = %.17g", what, isas[v],
                    threads, add, (long long)i, y[i], want);
        }
      }
      fea_kron_elastic_diagonal(e, d);
      for (fea_index i = 0; i < n; i++) {
        double aii = 0;
        for (fea_index k = A->row_ptr[i]; k < A->row_ptr[i + 1]; k++)
          if (A->col_idx[k] == i) aii = A->values[k];
        cr_assert(fabs(d[i] - aii) <= 1e-12 * fabs(aii), "%s: diag[%lld] = %.17g, A_ii = %.17g",
                  what, (long long)i, d[i], aii);
      }
      fea_kron_elastic_destroy(e);
    }
  cr_assert(ran >= 2, "the baseline kernels always run");
  fea_matrix_destroy(&A);
  free(b), free(x), free(y0), free(y), free(d);
}

static fea_problem *elastic_problem(fea_space *s, int loaded, fea_elasticity_model model) {
  fea_elasticity_desc ed = FEA_ELASTICITY_DESC_INIT;
  ed.E = 3.0;
  ed.nu = 0.27;
  ed.model = model;
  if (loaded) /* a traction-free east and a loaded north: only the other sides clamped */
    for (int side = 1; side <= 3; side += 2) ed.sides[side].type = FEA_ELASTIC_TRACTION;
  fea_problem *pb;
  cr_assert_eq(fea_problem_create_elasticity(s, &ed, &pb), FEA_SUCCESS, "%s",
               fea_context_last_error(ctx));
  return pb;
}

Test(kron, elasticity_2d_3d_every_degree_equals_the_assembled_matrix) {
  for (int dim = 2; dim <= 3; dim++)
    for (int p = 1; p <= (dim == 2 ? 4 : 3); p++)
      for (int uneven = 0; uneven < 2; uneven++)
        for (int loaded = 0; loaded < 2; loaded++) {
          const fea_index n[3] = {4 + (dim < 3 ? 2 : 0), 3 + (dim < 3 ? 1 : 0), 3};
          fea_space *s = box(dim, p, uneven, n);
          cr_assert_eq(fea_space_set_num_components(s, dim), FEA_SUCCESS);
          for (int model = 0; model < (dim == 2 ? 2 : 1); model++) {
            fea_problem *pb = elastic_problem(s, loaded,
                                              model ? FEA_ELASTICITY_PLANE_STRESS
                                                    : FEA_ELASTICITY_PLANE_STRAIN);
            char what[96];
            snprintf(what, sizeof what, "elasticity %dD p = %d%s%s%s", dim, p,
                     uneven ? " uneven" : "", loaded ? " free sides" : "",
                     model ? " plane stress" : "");
            check_elastic(pb, what);
            fea_problem_destroy(&pb);
          }
          fea_space_destroy(&s);
        }
}

Test(kron, elasticity_with_a_roller_keeps_the_element_wise_kernel) {
  const fea_index n[3] = {4, 4, 1};
  fea_space *s = box(2, 2, 0, n);
  cr_assert_eq(fea_space_set_num_components(s, 2), FEA_SUCCESS);
  fea_elasticity_desc ed = FEA_ELASTICITY_DESC_INIT;
  ed.sides[1].type = FEA_ELASTIC_DISPLACEMENT;
  ed.sides[1].components = FEA_COMPONENT_X; /* a roller on east */
  fea_problem *pb;
  cr_assert_eq(fea_problem_create_elasticity(s, &ed, &pb), FEA_SUCCESS);
  char why[200] = "";
  cr_assert_not(fea_kron_elastic_supports(pb, why, sizeof why));
  cr_assert(strstr(why, "roller"), "%s", why);
  fea_operator_desc od = FEA_OPERATOR_DESC_INIT;
  od.kind = FEA_OPERATOR_MATFREE_SUMFACT;
  fea_operator *op;
  cr_assert_eq(fea_operator_create(ctx, pb, &od, &op), FEA_SUCCESS);
  fea_operator_info info = FEA_OPERATOR_INFO_INIT;
  cr_assert_eq(fea_operator_get_info(op, &info), FEA_SUCCESS);
  cr_assert_null(strstr(info.kernel, "Kronecker"), "kernel: %s", info.kernel);
  fea_operator_destroy(&op);
  fea_problem_destroy(&pb);
  /* clamped: the public operator runs the Kronecker sums */
  pb = elastic_problem(s, 1, FEA_ELASTICITY_PLANE_STRAIN);
  cr_assert_eq(fea_operator_create(ctx, pb, &od, &op), FEA_SUCCESS);
  cr_assert_eq(fea_operator_get_info(op, &info), FEA_SUCCESS);
  cr_assert(strstr(info.kernel, "Kronecker") && strstr(info.kernel, "elasticity"), "kernel: %s",
            info.kernel);
  fea_operator_destroy(&op);
  fea_problem_destroy(&pb);
  fea_space_destroy(&s);
}
