/* CG and PCG over operators. Oracles: the manufactured solution
 * u = prod sin(pi x_i) (discretization error and its order) and a LAPACK
 * solve of the reference system (the same discrete solution).
 *
 * - PCG with the matrix-free operator solves 2D Q2 to the discretization
 *   error, which falls at the expected L2 order (~3); 3D Q2 too;
 * - every kind and CG without preconditioner reach the same solution;
 * - a tiny iteration limit answers FEA_WARN_NOT_CONVERGED with a valid x and
 *   the residual history; bad input is refused;
 * - a NaN or Inf in b or in the initial x is refused up front, naming the
 *   vector, the entry and the value (not a later "not positive definite"). */
#include <stdio.h>

#include "api-common.h"
#include "solve-common.h"

static const fea_operator_kind kinds[] = {FEA_OPERATOR_CSR, FEA_OPERATOR_MATFREE_ELEMENT_MATRIX,
                                          FEA_OPERATOR_MATFREE_SUMFACT};

typedef struct sine_problem {
  manufactured m;
  fea_context *ctx;
  fea_mesh *mesh;
  fea_space *space;
  fea_problem *pb;
  fea_index nf, ndofs;
} sine_problem;

static void sine_make(sine_problem *s, int dim, int order, int n) {
  memset(s, 0, sizeof *s);
  s->m.dim = dim;
  cr_assert_eq(fea_context_create("/cpu/threads", &s->ctx), FEA_SUCCESS);
  cr_assert_eq(fea_context_set_num_threads(s->ctx, 2), FEA_SUCCESS);
  fea_mesh_desc md = FEA_MESH_DESC_INIT;
  md.dim = dim;
  md.n[0] = md.n[1] = md.n[2] = n;
  cr_assert_eq(fea_mesh_create_structured(s->ctx, &md, &s->mesh), FEA_SUCCESS);
  cr_assert_eq(fea_space_create_lagrange(s->mesh, order, FEA_NODES_EQUISPACED, &s->space),
               FEA_SUCCESS);
  fea_problem_desc pd = FEA_PROBLEM_DESC_INIT;
  pd.source = sine_f;
  pd.source_user = &s->m;
  cr_assert_eq(fea_problem_create_poisson(s->space, &pd, &s->pb), FEA_SUCCESS);
  cr_assert_eq(fea_problem_get_num_free_dofs(s->pb, &s->nf), FEA_SUCCESS);
  fea_space_info si = FEA_SPACE_INFO_INIT;
  cr_assert_eq(fea_space_get_info(s->space, &si), FEA_SUCCESS);
  s->ndofs = si.num_dofs;
}

static void sine_free(sine_problem *s) {
  fea_problem_destroy(&s->pb);
  fea_space_destroy(&s->space);
  fea_mesh_destroy(&s->mesh);
  fea_context_destroy(&s->ctx);
}

/* Solve with operator kind k; the solution's L2 error and the free values. */
static double pcg_solve(sine_problem *s, fea_operator_kind k, int jacobi, double *u_free,
                        fea_cg_stats *stats) {
  fea_operator_desc d = FEA_OPERATOR_DESC_INIT;
  d.kind = k;
  fea_operator *op = NULL;
  cr_assert_eq(fea_operator_create(s->ctx, s->pb, &d, &op), FEA_SUCCESS, "%s",
               fea_context_last_error(s->ctx));
  fea_vector *b = NULL, *x = NULL;
  cr_assert_eq(fea_vector_create(s->ctx, s->nf, FEA_F64, &b), FEA_SUCCESS);
  cr_assert_eq(fea_vector_create(s->ctx, s->nf, FEA_F64, &x), FEA_SUCCESS);
  cr_assert_eq(fea_operator_get_rhs(op, b), FEA_SUCCESS);
  fea_cg_desc cd = FEA_CG_DESC_INIT;
  cd.rtol = 1e-12;
  cd.jacobi = jacobi;
  cr_assert_eq(fea_cg_solve(op, b, x, &cd, stats), FEA_SUCCESS, "%s",
               fea_context_last_error(s->ctx));
  cr_assert_eq(fea_vector_read(x, s->nf, FEA_F64, u_free), FEA_SUCCESS);
  double *u = malloc((size_t)s->ndofs * sizeof *u), l2 = 0;
  cr_assert_eq(fea_problem_expand_solution(s->pb, u_free, u), FEA_SUCCESS);
  cr_assert_eq(fea_problem_error_norms(s->pb, u, sine_u, NULL, &s->m, &l2, NULL), FEA_SUCCESS);
  free(u);
  fea_vector_destroy(&b);
  fea_vector_destroy(&x);
  fea_operator_destroy(&op);
  return l2;
}

Test(cg, pcg_matrix_free_2d_q2_converges_at_order_3, .timeout = 120) {
  double err[3];
  const int ns[3] = {4, 8, 16};
  for (int i = 0; i < 3; i++) {
    sine_problem s;
    sine_make(&s, 2, 2, ns[i]);
    double *u = malloc((size_t)s.nf * sizeof *u);
    fea_cg_stats st = FEA_CG_STATS_INIT;
    err[i] = pcg_solve(&s, FEA_OPERATOR_MATFREE_SUMFACT, 1, u, &st);
    cr_expect(st.converged && st.iterations > 0 && st.final_residual <= 1e-12 * 1e3);
    cr_expect_geq(st.solve_s, st.apply_s);
    /* The same discrete solution as a direct solve of the reference system. */
    fea_matrix *A = NULL;
    double *b = calloc((size_t)s.nf, sizeof *b);
    cr_assert_eq(fea_problem_assemble_reference(s.pb, b, &A), FEA_SUCCESS);
    lapack_solve_csr(A, b);
    double dmax = 0, umax = 0;
    for (fea_index r = 0; r < s.nf; r++) {
      dmax = fmax(dmax, fabs(u[r] - b[r]));
      umax = fmax(umax, fabs(b[r]));
    }
    cr_expect(dmax <= 1e-9 * umax, "n=%d: PCG differs from LAPACK by %.3g", ns[i], dmax);
    fea_matrix_destroy(&A);
    free(b);
    free(u);
    sine_free(&s);
  }
  for (int i = 1; i < 3; i++) {
    double rate = log2(err[i - 1] / err[i]);
    cr_expect(rate > 2.7 && rate < 3.4, "L2 rate %.2f between n=%d and n=%d (errors %.3g %.3g)",
              rate, ns[i - 1], ns[i], err[i - 1], err[i]);
  }
}

Test(cg, pcg_matrix_free_3d_q2_order, .timeout = 120) {
  double err[2];
  for (int i = 0; i < 2; i++) {
    sine_problem s;
    sine_make(&s, 3, 2, 3 << i);
    double *u = malloc((size_t)s.nf * sizeof *u);
    fea_cg_stats st = FEA_CG_STATS_INIT;
    err[i] = pcg_solve(&s, FEA_OPERATOR_MATFREE_SUMFACT, 1, u, &st);
    cr_expect(st.converged);
    free(u);
    sine_free(&s);
  }
  double rate = log2(err[0] / err[1]);
  cr_expect(rate > 2.5, "3D Q2 L2 rate %.2f (errors %.3g %.3g)", rate, err[0], err[1]);
}

Test(cg, every_kind_and_plain_cg_agree) {
  sine_problem s;
  sine_make(&s, 2, 3, 5);
  double *u0 = malloc((size_t)s.nf * sizeof *u0), *u = malloc((size_t)s.nf * sizeof *u);
  fea_cg_stats st = FEA_CG_STATS_INIT;
  double e0 = pcg_solve(&s, FEA_OPERATOR_CSR, 1, u0, &st);
  for (int jacobi = 0; jacobi <= 1; jacobi++)
    for (size_t k = 0; k < 3; k++) {
      fea_cg_stats st2 = FEA_CG_STATS_INIT;
      double e = pcg_solve(&s, kinds[k], jacobi, u, &st2);
      cr_expect(fabs(e - e0) <= 1e-8 * e0, "kind %d jacobi %d: error %.6g vs %.6g", (int)kinds[k],
                jacobi, e, e0);
    }
  free(u0);
  free(u);
  sine_free(&s);
}

Test(cg, iteration_limit_warns_with_history) {
  sine_problem s;
  sine_make(&s, 2, 2, 8);
  fea_operator *op = NULL;
  cr_assert_eq(fea_operator_create(s.ctx, s.pb, NULL, &op), FEA_SUCCESS);
  fea_vector *b = NULL, *x = NULL;
  cr_assert_eq(fea_vector_create(s.ctx, s.nf, FEA_F64, &b), FEA_SUCCESS);
  cr_assert_eq(fea_vector_create(s.ctx, s.nf, FEA_F64, &x), FEA_SUCCESS);
  /* A right-hand side without the symmetry of the sine (whose solution CG
   * finds in a handful of steps). */
  double *bv = malloc((size_t)s.nf * sizeof *bv);
  for (fea_index i = 0; i < s.nf; i++) bv[i] = sin(0.37 * (double)i) + 0.5;
  cr_assert_eq(fea_vector_write(b, s.nf, FEA_F64, bv), FEA_SUCCESS);
  free(bv);
  double hist[8] = {0};
  fea_cg_desc cd = FEA_CG_DESC_INIT;
  cd.max_iterations = 3;
  cd.history = hist;
  cd.history_capacity = 8;
  fea_cg_stats st = FEA_CG_STATS_INIT;
  fea_status rc = fea_cg_solve(op, b, x, &cd, &st);
  cr_assert_eq(rc, FEA_WARN_NOT_CONVERGED, "returned %d: %s; it %lld r0 %g r %g", (int)rc,
               fea_context_last_error(s.ctx), (long long)st.iterations, st.initial_residual,
               st.final_residual);
  cr_expect_eq(st.iterations, 3);
  cr_expect_eq(st.converged, 0);
  cr_expect(st.final_residual > 0 &&
            isfinite(st.final_residual)); /* CG residuals need not fall monotonically */
  cr_expect_eq(hist[0], st.initial_residual);
  cr_expect_eq(hist[3], st.final_residual);
  cr_expect_eq(hist[4], 0.0);
  double nx = 0;
  cr_assert_eq(fea_vector_nrm2(x, &nx), FEA_SUCCESS);
  cr_expect(isfinite(nx) && nx > 0);
  /* Zero iterations: x untouched, still a warning unless x already solves. */
  cd.max_iterations = 0;
  cr_expect_eq(fea_cg_solve(op, b, x, &cd, &st), FEA_WARN_NOT_CONVERGED);

  /* Bad input. */
  fea_vector *shortv = NULL, *f32 = NULL;
  cr_assert_eq(fea_vector_create(s.ctx, s.nf + 1, FEA_F64, &shortv), FEA_SUCCESS);
  cr_assert_eq(fea_vector_create(s.ctx, s.nf, FEA_F32, &f32), FEA_SUCCESS);
  cr_expect_eq(fea_cg_solve(op, shortv, x, NULL, NULL), FEA_ERR_DIMENSION);
  cr_expect_eq(fea_cg_solve(op, b, f32, NULL, NULL), FEA_ERR_INVALID_ARG);
  cr_expect_eq(fea_cg_solve(op, b, b, NULL, NULL), FEA_ERR_INVALID_ARG);
  cd = (fea_cg_desc)FEA_CG_DESC_INIT;
  cd.rtol = -1;
  cr_expect_eq(fea_cg_solve(op, b, x, &cd, NULL), FEA_ERR_INVALID_ARG);
  cr_expect(strstr(fea_context_last_error(s.ctx), "rtol is -1") != NULL, "%s",
            fea_context_last_error(s.ctx));
  cd.rtol = 1e-8;
  cd.history_capacity = 4;
  cr_expect_eq(fea_cg_solve(op, b, x, &cd, NULL), FEA_ERR_INVALID_ARG);
  cr_expect_eq(fea_cg_solve(NULL, b, x, NULL, NULL), FEA_ERR_INVALID_ARG);
  fea_vector_destroy(&shortv);
  fea_vector_destroy(&f32);
  fea_vector_destroy(&b);
  fea_vector_destroy(&x);
  fea_operator_destroy(&op);
  sine_free(&s);
}

Test(cg, non_finite_b_or_x0_refused) {
  sine_problem s;
  sine_make(&s, 2, 1, 4);
  cr_assert(s.nf > 3);
  fea_operator *op = NULL;
  OK(fea_operator_create(s.ctx, s.pb, NULL, &op));
  fea_vector *b = NULL, *x = NULL;
  OK(fea_vector_create(s.ctx, s.nf, FEA_F64, &b));
  OK(fea_vector_create(s.ctx, s.nf, FEA_F64, &x));
  OK(fea_operator_get_rhs(op, b));
  double *v = calloc((size_t)s.nf, sizeof *v);
  OK(fea_vector_read(b, s.nf, FEA_F64, v));
  v[3] = NAN;
  OK(fea_vector_write(b, s.nf, FEA_F64, v));
  EXPECT_FAIL(fea_cg_solve(op, b, x, NULL, NULL), FEA_ERR_INVALID_ARG, s.ctx,
              "vector 'b' has entry 3 = nan");
  v[3] = 1.0;
  OK(fea_vector_write(b, s.nf, FEA_F64, v));
  memset(v, 0, (size_t)s.nf * sizeof *v);
  v[s.nf - 1] = -INFINITY;
  OK(fea_vector_write(x, s.nf, FEA_F64, v));
  char want[64];
  snprintf(want, sizeof want, "vector 'x' has entry %lld = -inf", (long long)(s.nf - 1));
  EXPECT_FAIL(fea_cg_solve(op, b, x, NULL, NULL), FEA_ERR_INVALID_ARG, s.ctx, want);
  /* The refused x is left as it was; with finite entries the solve works. */
  double last = 0;
  OK(fea_vector_read(x, s.nf, FEA_F64, v));
  last = v[s.nf - 1];
  cr_expect(isinf(last) && last < 0);
  OK(fea_vector_set_all(x, 0.0));
  OK(fea_cg_solve(op, b, x, NULL, NULL));
  free(v);
  fea_vector_destroy(&b);
  fea_vector_destroy(&x);
  fea_operator_destroy(&op);
  sine_free(&s);
}

/* Products beyond the double range: CG reports the overflow as such (it
 * once said "not positive definite" of an SPD operator), naming the
 * quantity and the iteration. A right-hand side of 1e200 overflows r.z
 * before the first step; an operator scaled by sigma = 1e300 overflows
 * p.Ap; a right-hand side whose norm itself is infinite is refused. */
static double huge_sigma(const double *x, void *user) {
  (void)x, (void)user;
  return 1e300;
}

Test(cg, overflow_says_so) {
  sine_problem s;
  sine_make(&s, 2, 1, 4);
  fea_operator *op = NULL;
  OK(fea_operator_create(s.ctx, s.pb, NULL, &op));
  fea_vector *b = NULL, *x = NULL;
  OK(fea_vector_create(s.ctx, s.nf, FEA_F64, &b));
  OK(fea_vector_create(s.ctx, s.nf, FEA_F64, &x));
  double *v = malloc((size_t)s.nf * sizeof *v);
  for (fea_index i = 0; i < s.nf; i++) v[i] = 1e200 * (1.0 + 0.1 * (double)i);
  OK(fea_vector_write(b, s.nf, FEA_F64, v));
  EXPECT_FAIL(fea_cg_solve(op, b, x, NULL, NULL), FEA_ERR_NOT_POSDEF, s.ctx,
              "r.z = inf at iteration 0: it overflowed the double range");
  /* ||b|| itself beyond the range: every residual would pass the test. */
  for (fea_index i = 0; i < s.nf; i++) v[i] = 1e308;
  OK(fea_vector_write(b, s.nf, FEA_F64, v));
  OK(fea_vector_set_all(x, 0.0));
  EXPECT_FAIL(fea_cg_solve(op, b, x, NULL, NULL), FEA_ERR_INVALID_ARG, s.ctx,
              "||b|| = inf overflowed");
  fea_operator_destroy(&op);

  /* The operator's scale: sigma = 1e300, b of 1e10, no preconditioner (a
   * Jacobi one would scale the operator back). */
  fea_cg_desc plain = FEA_CG_DESC_INIT;
  plain.jacobi = 0;
  fea_problem_desc pd = FEA_PROBLEM_DESC_INIT;
  pd.sigma_fn = huge_sigma;
  fea_problem *big = NULL;
  OK(fea_problem_create_poisson(s.space, &pd, &big));
  OK(fea_operator_create(s.ctx, big, NULL, &op));
  for (fea_index i = 0; i < s.nf; i++) v[i] = 1e10 * (1.0 + 0.1 * (double)i);
  OK(fea_vector_write(b, s.nf, FEA_F64, v));
  OK(fea_vector_set_all(x, 0.0));
  EXPECT_FAIL(fea_cg_solve(op, b, x, &plain, NULL), FEA_ERR_NOT_POSDEF, s.ctx,
              "at iteration 0: it overflowed the double range");
  cr_assert(strstr(fea_context_last_error(s.ctx), "p.Ap = "), "%s", fea_context_last_error(s.ctx));
  /* Scaled down to b of 1e-10, the same operator solves. */
  for (fea_index i = 0; i < s.nf; i++) v[i] = 1e-10 * (1.0 + 0.1 * (double)i);
  OK(fea_vector_write(b, s.nf, FEA_F64, v));
  OK(fea_vector_set_all(x, 0.0));
  OK(fea_cg_solve(op, b, x, &plain, NULL));
  free(v);
  fea_vector_destroy(&b);
  fea_vector_destroy(&x);
  fea_operator_destroy(&op);
  fea_problem_destroy(&big);
  sine_free(&s);
}
