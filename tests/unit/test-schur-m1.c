/* Method M1 (src/prehandled/m1-*.c) on the Q1 and P1 Poisson problem on the
 * unit square with homogeneous Dirichlet data, h = 1/16 .. 1/64 and
 * h0 = 1/4 .. 1/8:
 * - the FP64 nodal solution x_h = S L^-T M1^-1 L^-1 S^T b_h equals a LAPACK
 *   banded Cholesky solve of the reference system to 1e-10 relative;
 * - the FP32, FP16 and BF16 solutions stay within kappa-scaled round-off
 *   bounds of it (16-bit: also within 1 %);
 * - the right-hand-side scaling of the 16-bit solves keeps tiny loads that
 *   an unscaled FP16 solve loses;
 * - mixed-precision iterative refinement from every precision reaches the
 *   FP64 solution to 1e-10 within a few corrections;
 * - k right-hand sides at once equal k single solves;
 * - the manufactured solution's L2 error is the discretization error
 *   (the direct solve's, falling like h^2). */
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>
#include <feaccel.h>
#include <feaccel/mesh.h>
#include <feaccel/problem.h>
#include <feaccel/space.h>

#include "linalg/matrix.h"
#include "prehandled/prehandle.h"
#include "prehandled/schur-m1.h"
#include "prehandled/schur-m1-impl.h"

#define OK(expr)                                                               \
  do {                                                                         \
    fea_status ok_status_ = (expr);                                            \
    cr_assert_eq(ok_status_, FEA_SUCCESS, "%s returned %s: %s", #expr,         \
                 fea_status_string(ok_status_), fea_context_last_error(NULL)); \
  } while (0)

#define PI 3.14159265358979323846

static fea_context *ctx;

static void setup(void) { OK(fea_context_create("/cpu/ref", &ctx)); }
static void teardown(void) { OK(fea_context_destroy(&ctx)); }

TestSuite(schur_m1, .init = setup, .fini = teardown);

/* u = sin(pi x) sin(pi y), -Laplace u = 2 pi^2 u. */
static double exact_u(const double *x, void *user) {
  (void)user;
  return sin(PI * x[0]) * sin(PI * x[1]);
}
static double exact_f(const double *x, void *user) { return 2 * PI * PI * exact_u(x, user); }

static const char *el_name(fea_ph_element el) { return el == FEA_PH_Q1 ? "Q1" : "P1"; }

/* The nodal problem, its prehandling and the split. */
typedef struct fixture {
  fea_ph_element el;
  fea_mesh *mesh;
  fea_space *space;
  fea_problem *pb;
  fea_ph_grid g;
  fea_matrix *A, *S, *At;
  double *b; /* the load of exact_f */
  fea_ph_factor *f;
  fea_ph_split s;
} fixture;

static void fixture_make(fixture *x, fea_ph_element el, fea_index n, fea_index n0) {
  memset(x, 0, sizeof *x);
  x->el = el;
  fea_mesh_desc d = FEA_MESH_DESC_INIT;
  d.n[0] = d.n[1] = n;
  d.simplices = el == FEA_PH_P1;
  fea_problem_desc pd = FEA_PROBLEM_DESC_INIT;
  pd.source = exact_f;
  OK(fea_mesh_create_structured(ctx, &d, &x->mesh));
  OK(fea_space_create_lagrange(x->mesh, 1, FEA_NODES_EQUISPACED, &x->space));
  OK(fea_problem_create_poisson(x->space, &pd, &x->pb));
  OK(fea_ph_grid_init(ctx, el, n, n0, &x->g));
  fea_index nf;
  OK(fea_problem_get_num_free_dofs(x->pb, &nf));
  cr_assert_eq(nf, x->g.num);
  x->b = malloc((size_t)nf * sizeof *x->b);
  cr_assert(x->b);
  OK(fea_problem_assemble_reference(x->pb, x->b, &x->A));
  OK(fea_ph_build_s(ctx, &x->g, &x->S));
  OK(fea_ph_transform_matrix(ctx, x->A, x->S, &x->At));
  OK(fea_ph_factor_create(ctx, &x->g, x->At, &x->f));
  OK(fea_ph_split_create(ctx, &x->g, &x->s));
}

static void fixture_free(fixture *x) {
  fea_ph_split_free(&x->s);
  fea_ph_factor_destroy(&x->f);
  fea_matrix_destroy(&x->At);
  fea_matrix_destroy(&x->S);
  fea_matrix_destroy(&x->A);
  free(x->b);
  fea_problem_destroy(&x->pb);
  fea_space_destroy(&x->space);
  fea_mesh_destroy(&x->mesh);
}

static fea_ph_m1 *m1_make(fixture *x, fea_precision prec) {
  fea_ph_m1 *m;
  OK(fea_ph_m1_create(ctx, &x->g, &x->s, x->At, x->f, prec, &m));
  return m;
}

/* The oracle: u := A^-1 u by LAPACK's banded Cholesky (dpbsv). The
 * lexicographic interior numbering gives half bandwidth n (Q1, P1). */
static void direct_solve(const fea_matrix *A, double *u) {
  const fea_index n = A->rows;
  fea_index kd = 0;
  for (fea_index i = 0; i < n; i++)
    for (fea_index k = A->row_ptr[i]; k < A->row_ptr[i + 1]; k++)
      if (A->col_idx[k] - i > kd) kd = A->col_idx[k] - i;
  double *ab = calloc((size_t)((kd + 1) * n), sizeof *ab); /* upper band, LAPACK layout */
  cr_assert(ab);
  for (fea_index i = 0; i < n; i++)
    for (fea_index k = A->row_ptr[i]; k < A->row_ptr[i + 1]; k++) {
      const fea_index j = A->col_idx[k];
      if (j >= i) ab[(kd + i - j) + j * (kd + 1)] = A->values[k];
    }
  lapack_int info = LAPACKE_dpbsv(LAPACK_COL_MAJOR, 'U', (lapack_int)n, (lapack_int)kd, 1, ab,
                                  (lapack_int)(kd + 1), u, (lapack_int)n);
  cr_assert_eq(info, 0, "dpbsv info %d", (int)info);
  free(ab);
}

static double rel_diff(fea_index n, const double *x, const double *ref) {
  double d = 0, r = 0;
  for (fea_index i = 0; i < n; i++) d += (x[i] - ref[i]) * (x[i] - ref[i]), r += ref[i] * ref[i];
  return sqrt(d / r);
}

static double *copy(fea_index n, const double *x) {
  double *y = malloc((size_t)n * sizeof *y);
  cr_assert(y);
  memcpy(y, x, (size_t)n * sizeof *y);
  return y;
}

static const fea_index sizes[][2] = {{16, 4}, {32, 4}, {32, 8}, {64, 4}, {64, 8}};
#define NUM_SIZES (sizeof sizes / sizeof sizes[0])

/* ---- FP64 against the direct solve -------------------------------------------------------- */

Test(schur_m1, fp64_equals_direct_solve) {
  for (int el = 0; el < 2; el++)
    for (size_t t = 0; t < NUM_SIZES; t++) {
      fixture x;
      fixture_make(&x, (fea_ph_element)el, sizes[t][0], sizes[t][1]);
      fea_ph_m1 *m = m1_make(&x, FEA_F64);
      double *ref = copy(x.g.num, x.b), *u = copy(x.g.num, x.b);
      direct_solve(x.A, ref);
      OK(fea_ph_m1_solve_nodal(m, x.f, 1, u));
      const double e = rel_diff(x.g.num, u, ref);
      cr_log_info("%s h=1/%lld h0=1/%lld: FP64 M1 vs dpbsv %.3g", el_name(x.el),
                  (long long)sizes[t][0], (long long)sizes[t][1], e);
      cr_assert(e <= 1e-10, "%s h=1/%lld h0=1/%lld: FP64 M1 differs from dpbsv by %.3g",
                el_name(x.el), (long long)sizes[t][0], (long long)sizes[t][1], e);
      free(ref), free(u);
      fea_ph_m1_destroy(&m);
      fixture_free(&x);
    }
}

/* ---- FP32 ----------------------------------------------------------------------------------- */

typedef struct prehandled_op {
  fixture *x;
  double *tmp;
} prehandled_op;

/* y := L^-1 S^T A_h S L^-T x */
static fea_status apply_prehandled(void *user, const double *in, double *y) {
  prehandled_op *p = user;
  memcpy(p->tmp, in, (size_t)p->x->g.num * sizeof *in);
  fea_status st = fea_ph_backward(p->x->f, p->tmp);
  if (st >= 0) st = fea_matrix_multiply(p->x->A, p->tmp, y);
  if (st >= 0) st = fea_ph_forward(p->x->f, y);
  return st;
}

/* The FP32 solve: the nodal transforms run in FP64, the M1 steps in FP32
 * with matrices rounded once from FP64. A backward-stable solve of the
 * prehandled system in unit round-off u = 2^-24 ~ 6e-8 has relative error
 * about c u kappa(A), c a modest constant from the inner dimensions of the
 * GEMMs and the chain of five steps; S L^-T maps it back to nodal values
 * without amplifying it much, since prehandling keeps that map moderate.
 * kappa(A) of the prehandled system is ~9-40 here (Lanczos below; Ruda et al. 2022, §3,
 * give 22 at (1/256, 1/16)), so the bound 1e-6 kappa(A) (about 17 u kappa)
 * leaves room for c. Measured: 1e-8 to 5e-8, i.e. under 0.3 u kappa, well
 * inside it. */
Test(schur_m1, fp32_within_kappa_scaled_bound) {
  for (int el = 0; el < 2; el++)
    for (size_t t = 0; t < NUM_SIZES; t++) {
      fixture x;
      fixture_make(&x, (fea_ph_element)el, sizes[t][0], sizes[t][1]);
      prehandled_op op = {&x, malloc((size_t)x.g.num * sizeof(double))};
      double lmin, lmax;
      OK(fea_lanczos_extremes(ctx, x.g.num, apply_prehandled, &op, 120, 1, 5, &lmin, &lmax));
      const double kappa = lmax / lmin;
      fea_ph_m1 *m = m1_make(&x, FEA_F32);
      double *ref = copy(x.g.num, x.b), *u = copy(x.g.num, x.b);
      direct_solve(x.A, ref);
      OK(fea_ph_m1_solve_nodal(m, x.f, 1, u));
      const double e = rel_diff(x.g.num, u, ref);
      cr_log_info("%s h=1/%lld h0=1/%lld: kappa %.4g, FP32 M1 vs dpbsv %.3g (bound %.3g)",
                  el_name(x.el), (long long)sizes[t][0], (long long)sizes[t][1], kappa, e,
                  1e-6 * kappa);
      cr_assert(e <= 1e-6 * kappa, "%s h=1/%lld h0=1/%lld: FP32 M1 off by %.3g > 1e-6 kappa = %.3g",
                el_name(x.el), (long long)sizes[t][0], (long long)sizes[t][1], e, 1e-6 * kappa);
      cr_assert(e > 1e-10, "the FP32 solve (%.3g off) did not run in FP32", e);
      fea_ph_m1_info info;
      fea_ph_m1_get_info(m, &info);
      cr_assert_eq(info.prec, FEA_F32);
      cr_assert_eq(info.dense_bytes,
                   sizeof(float) *
                       (size_t)(info.nc * info.ne + info.block * info.block + info.ne * info.ne));
      free(op.tmp), free(ref), free(u);
      fea_ph_m1_destroy(&m);
      fixture_free(&x);
    }
}

static double l2_error(fixture *x, const double *u_free);
static double urand(void);

/* ---- FP16 and BF16 ------------------------------------------------------------------------ */

/* Unit round-off of the 16-bit formats: 2^-11 (FP16), 2^-8 (BF16). */
static double unit_roundoff(fea_precision p) { return p == FEA_F16 ? 0x1p-11 : 0x1p-8; }

/* The 16-bit solve: B, C_1^-1, Pi^-1 rounded once from FP64 to 16 bits, each
 * GEMM's right-hand panel scaled and rounded to 16 bits, FP32 accumulation,
 * everything else FP32 (the transforms FP64). The same backward-error
 * argument as for FP32 gives a relative error of about c u kappa(A) with u
 * the 16-bit unit round-off -- here the rounding of the matrices and of the
 * operands dominates, the FP32 accumulation adds only 2^-24 per step -- and
 * the bound 2 u kappa allows c = 2 (FP16: 1e-3 kappa, BF16: 7.8e-3 kappa).
 * With kappa ~ 9-40 that is 1-30 % in the worst case; the measured errors
 * are far smaller (logged; roughly u to 3 u, i.e. < 1 % for BF16 and
 * < 0.2 % for FP16), and the test also holds them to the 1 % of the
 * FP64 solution. */
Test(schur_m1, half_within_kappa_scaled_bound) {
  const fea_index hs[][2] = {{32, 4}, {64, 8}};
  const fea_precision precs[2] = {FEA_F16, FEA_BF16};
  for (int el = 0; el < 2; el++)
    for (size_t t = 0; t < 2; t++) {
      fixture x;
      fixture_make(&x, (fea_ph_element)el, hs[t][0], hs[t][1]);
      prehandled_op op = {&x, malloc((size_t)x.g.num * sizeof(double))};
      double lmin, lmax;
      OK(fea_lanczos_extremes(ctx, x.g.num, apply_prehandled, &op, 120, 1, 5, &lmin, &lmax));
      const double kappa = lmax / lmin;
      double *ref = copy(x.g.num, x.b);
      direct_solve(x.A, ref);
      for (int pr = 0; pr < 2; pr++) {
        fea_ph_m1 *m = m1_make(&x, precs[pr]);
        double *u = copy(x.g.num, x.b);
        OK(fea_ph_m1_solve_nodal(m, x.f, 1, u));
        const double e = rel_diff(x.g.num, u, ref), uo = unit_roundoff(precs[pr]);
        const double bound = 2 * uo * kappa;
        cr_log_info("%s h=1/%lld h0=1/%lld: kappa %.4g, %s M1 vs dpbsv %.3g (%.2f u; bound %.3g)",
                    el_name(x.el), (long long)hs[t][0], (long long)hs[t][1], kappa,
                    fea_precision_name(precs[pr]), e, e / uo, bound);
        cr_assert(e <= bound && e <= 1e-2, "%s h=1/%lld %s M1 off by %.3g (bound %.3g, 1 %%)",
                  el_name(x.el), (long long)hs[t][0], fea_precision_name(precs[pr]), e, bound);
        cr_assert(e > 1e-6, "the %s solve (%.3g off) did not run in 16 bits",
                  fea_precision_name(precs[pr]), e);
        fea_ph_m1_info info;
        fea_ph_m1_get_info(m, &info);
        cr_assert_eq(info.prec, precs[pr]);
        cr_assert(info.rhs_scaling);
        cr_assert_eq(info.dense_bytes,
                     2 * (size_t)(info.nc * info.ne + info.block * info.block + info.ne * info.ne));
        free(u);
        fea_ph_m1_destroy(&m);
      }
      free(op.tmp), free(ref);
      fixture_free(&x);
    }
}

/* Loads scaled by 1e-8 and 1e-11. Their prehandled entries lie below FP16's
 * smallest normal 2^-14 ~ 6.1e-5, most below its smallest subnormal 2^-24 ~
 * 6e-8: an unscaled FP16 solve rounds every GEMM operand to (nearly) zero.
 * What survives is the FP32 path x_C = b_C - B x_E = b_C: the coarse
 * hierarchical part, which for this smooth load is the solution to ~6 %. So
 * the unscaled solve is off by more than 1 % (the limit for low
 * precision) and by more than 100 times the scaled solve's error. With the power-of-two scaling the
 * error is the one of the unscaled-size load (within the 16-bit bound of
 * half_within_kappa_scaled_bound, < 1 %), and equals 1e-8 times that
 * solution to round-off. BF16 has FP32's exponent range and keeps the load
 * even unscaled. */
Test(schur_m1, rhs_scaling_prevents_fp16_underflow) {
  const double factors[2] = {1e-8, 1e-11}, lost[2] = {1e-2, 1e-2};
  for (int el = 0; el < 2; el++) {
    fixture x;
    fixture_make(&x, (fea_ph_element)el, 32, 4);
    const fea_index n = x.g.num;
    fea_ph_m1 *m = m1_make(&x, FEA_F16);
    double *big = copy(n, x.b);
    OK(fea_ph_m1_solve_nodal(m, x.f, 1, big)); /* the unscaled-size load */
    for (int t = 0; t < 2; t++) {
      double *tiny = copy(n, x.b), *big_t = copy(n, big);
      for (fea_index i = 0; i < n; i++) tiny[i] *= factors[t], big_t[i] *= factors[t];
      double *ref = copy(n, tiny), *u = copy(n, tiny);
      direct_solve(x.A, ref);
      fea_ph_m1_set_rhs_scaling(m, 1);
      OK(fea_ph_m1_solve_nodal(m, x.f, 1, u));
      const double es = rel_diff(n, u, ref), e_vs_big = rel_diff(n, u, big_t);
      fea_ph_m1_set_rhs_scaling(m, 0);
      fea_ph_m1_info info;
      fea_ph_m1_get_info(m, &info);
      cr_assert(!info.rhs_scaling);
      memcpy(u, tiny, (size_t)n * sizeof *u);
      OK(fea_ph_m1_solve_nodal(m, x.f, 1, u));
      const double eu = rel_diff(n, u, ref);
      cr_log_info(
          "%s load x %g, FP16 vs dpbsv: scaled %.3g, unscaled %.3g; scaled vs %g x the "
          "solve of the load %.3g",
          el_name(x.el), factors[t], es, eu, factors[t], e_vs_big);
      cr_assert(es <= 1e-2, "%s x %g: scaled FP16 solve off by %.3g", el_name(x.el), factors[t],
                es);
      cr_assert(e_vs_big <= 1e-4, "%s x %g: scaled tiny solve vs the scaled solution %.3g",
                el_name(x.el), factors[t], e_vs_big);
      cr_assert(eu >= lost[t] && eu >= 100 * es,
                "%s x %g: the unscaled FP16 solve kept the tiny load (%.3g off, scaled %.3g)",
                el_name(x.el), factors[t], eu, es);
      free(tiny), free(big_t), free(ref), free(u);
    }
    fea_ph_m1_destroy(&m);
    /* BF16 needs no scaling for this range. */
    m = m1_make(&x, FEA_BF16);
    fea_ph_m1_set_rhs_scaling(m, 0);
    double *tiny = copy(n, x.b);
    for (fea_index i = 0; i < n; i++) tiny[i] *= 1e-11;
    double *ref = copy(n, tiny);
    direct_solve(x.A, ref);
    OK(fea_ph_m1_solve_nodal(m, x.f, 1, tiny));
    const double eb = rel_diff(n, tiny, ref);
    cr_assert(eb <= 1e-2, "%s: unscaled BF16 solve of the tiny load off by %.3g", el_name(x.el),
              eb);
    fea_ph_m1_destroy(&m);
    free(tiny), free(ref), free(big);
    fixture_free(&x);
  }
}

/* ---- mixed-precision iterative refinement --------------------------------------------------- */

/* From every working precision the refined solution reaches the FP64 M1 and
 * the direct solution to 1e-10 relative (rtol 1e-12 on the residual: the
 * error is at most kappa(A_h) ~ 1.7e3 (h = 1/64) times that, ~2e-9 in the
 * worst case, ~1e-12 in practice as the residual's low-frequency part is
 * tiny) and the L2 error of the FP64 solve. The number of corrections is
 * about log(rtol) / log(rho), rho the contraction per correction, at most
 * ~ c u kappa and measured much smaller (the one-shot errors above are
 * 0.03-0.25 u): measured 1 (FP64), 2-3 (FP32), 5 (FP16), 7 (BF16) at
 * h = 1/64, h0 = 1/8, Q1 and P1; asserted with room: 3, 4, 8, 16. */
Test(schur_m1, refinement_reaches_fp64) {
  const fea_precision precs[4] = {FEA_F64, FEA_F32, FEA_F16, FEA_BF16};
  const int max_it[4] = {3, 4, 8, 16};
  for (int el = 0; el < 2; el++) {
    fixture x;
    fixture_make(&x, (fea_ph_element)el, 64, 8);
    const fea_index n = x.g.num;
    double *ref = copy(n, x.b), *u64 = copy(n, x.b), *u = malloc((size_t)n * sizeof *u);
    cr_assert(u);
    direct_solve(x.A, ref);
    fea_ph_m1 *m64 = m1_make(&x, FEA_F64);
    OK(fea_ph_m1_solve_nodal(m64, x.f, 1, u64));
    fea_ph_m1_destroy(&m64);
    const double l2ref = l2_error(&x, ref);
    for (int pr = 0; pr < 4; pr++) {
      fea_ph_m1 *m = m1_make(&x, precs[pr]);
      int it = -1;
      double rr = -1;
      OK(fea_ph_m1_refine(m, x.f, x.A, 1, x.b, u, 1e-12, 30, &it, &rr));
      const double ed = rel_diff(n, u, ref), e64 = rel_diff(n, u, u64), l2 = l2_error(&x, u);
      cr_log_info(
          "%s h=1/64 h0=1/8 %s: IR %d corrections, rel. residual %.3g, vs dpbsv %.3g, "
          "vs FP64 M1 %.3g, L2 %.6g (direct %.6g)",
          el_name(x.el), fea_precision_name(precs[pr]), it, rr, ed, e64, l2, l2ref);
      /* rtol, or FP64's rounding floor of the residual (refine-rule.h),
       * which lies near 1e-12 here: the error against dpbsv stays ~1e-14. */
      cr_assert(rr <= 1e-11, "%s %s: relative residual %.3g", el_name(x.el),
                fea_precision_name(precs[pr]), rr);
      cr_assert(ed <= 1e-10 && e64 <= 1e-10, "%s %s: refined solution off by %.3g / %.3g",
                el_name(x.el), fea_precision_name(precs[pr]), ed, e64);
      cr_assert(it >= 1 && it <= max_it[pr], "%s %s: %d corrections (at most %d expected)",
                el_name(x.el), fea_precision_name(precs[pr]), it, max_it[pr]);
      cr_assert(fabs(l2 - l2ref) <= 1e-6 * l2ref, "%s %s: L2 %.10g, direct %.10g", el_name(x.el),
                fea_precision_name(precs[pr]), l2, l2ref);
      fea_ph_m1_destroy(&m);
    }
    free(ref), free(u64), free(u);
    fixture_free(&x);
  }
}

/* Several right-hand sides refine together (each to rtol); a zero column
 * stays zero; the iteration cap returns FEA_WARN_NOT_CONVERGED with the last
 * iterate; refining a tiny load in FP16 (whose residuals underflow without
 * the scaling) still converges. */
Test(schur_m1, refinement_many_rhs_and_cap) {
  fixture x;
  fixture_make(&x, FEA_PH_Q1, 32, 4);
  const fea_index n = x.g.num, k = 3;
  double *b = calloc((size_t)(n * k), sizeof *b), *u = malloc((size_t)(n * k) * sizeof *u);
  cr_assert(b && u);
  for (fea_index i = 0; i < n; i++) b[i] = x.b[i], b[i + n] = urand(); /* column 2 is zero */
  fea_ph_m1 *m = m1_make(&x, FEA_F16);
  int it = 0;
  double rr = 0;
  OK(fea_ph_m1_refine(m, x.f, x.A, k, b, u, 1e-12, 30, &it, &rr));
  cr_log_info("Q1 h=1/32 FP16, 3 right-hand sides: %d corrections, residual %.3g", it, rr);
  for (int c = 0; c < 2; c++) {
    double *ref = copy(n, b + c * n);
    direct_solve(x.A, ref);
    const double e = rel_diff(n, u + c * n, ref);
    cr_assert(e <= 1e-10, "column %d off by %.3g", c, e);
    free(ref);
  }
  for (fea_index i = 0; i < n; i++) cr_assert_eq(u[i + 2 * n], 0.0);
  cr_assert_eq(fea_ph_m1_refine(m, x.f, x.A, k, b, u, 1e-12, 1, &it, &rr), FEA_WARN_NOT_CONVERGED);
  cr_assert(it == 1 && rr > 1e-12 && rr < 1e-1, "after one correction: %d, residual %.3g", it, rr);
  /* A tiny load in FP16. */
  for (fea_index i = 0; i < n; i++) b[i] = 1e-8 * x.b[i];
  OK(fea_ph_m1_refine(m, x.f, x.A, 1, b, u, 1e-12, 30, &it, &rr));
  double *ref = copy(n, b);
  direct_solve(x.A, ref);
  const double e = rel_diff(n, u, ref);
  cr_log_info("Q1 h=1/32 FP16, load x 1e-8: %d corrections, off by %.3g", it, e);
  cr_assert(e <= 1e-10, "tiny load refined off by %.3g", e);
  free(ref), free(b), free(u);
  fea_ph_m1_destroy(&m);
  fixture_free(&x);
}

/* ---- many right-hand sides ------------------------------------------------------------------ */

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static double urand(void) { /* [-1, 1) */
  rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
  return (double)(rng >> 11) * 0x1p-52 - 1.0;
}

Test(schur_m1, many_rhs_equal_single_solves) {
  /* 16-bit: every GEMM column is scaled on its own, so a column's result does
   * not depend on its neighbours except through the FP32 accumulation order
   * (SGEMM blocks by the number of columns); that ~1e-7 difference can flip
   * the 16-bit rounding of an intermediate operand entry, an error of at
   * most u there, so the columns agree to the unit round-off u (measured
   * ~3e-5 for FP16). */
  const fea_precision precs[4] = {FEA_F64, FEA_F32, FEA_F16, FEA_BF16};
  const double tol[4] = {1e-13, 1e-6, 0x1p-11, 0x1p-8};
  for (int el = 0; el < 2; el++)
    for (int pr = 0; pr < 4; pr++) {
      fixture x;
      fixture_make(&x, (fea_ph_element)el, 32, 4);
      fea_ph_m1 *m = m1_make(&x, precs[pr]);
      const fea_index k = 5, n = x.g.num;
      double *many = malloc((size_t)(n * k) * sizeof *many);
      cr_assert(many);
      for (fea_index i = 0; i < n * k; i++) many[i] = urand();
      memcpy(many, x.b, (size_t)n * sizeof *many); /* one column is the real load */
      double *single = copy(n * k, many);
      OK(fea_ph_m1_solve_nodal(m, x.f, k, many));
      for (fea_index c = 0; c < k; c++) {
        OK(fea_ph_m1_solve_nodal(m, x.f, 1, single + c * n));
        const double e = rel_diff(n, many + c * n, single + c * n);
        cr_assert(e <= tol[pr], "%s %s column %lld of %lld: batched vs single %.3g", el_name(x.el),
                  fea_precision_name(precs[pr]), (long long)c, (long long)k, e);
      }
      /* The prehandled solve alone, into a separate output. */
      double *in = malloc((size_t)(n * k) * sizeof *in),
             *out = malloc((size_t)(n * k) * sizeof *out);
      cr_assert(in && out);
      for (fea_index i = 0; i < n * k; i++) in[i] = urand();
      OK(fea_ph_m1_solve(m, k, in, out));
      for (fea_index c = 0; c < k; c++) {
        OK(fea_ph_m1_solve(m, 1, in + c * n, single + c * n));
        const double e = rel_diff(n, out + c * n, single + c * n);
        cr_assert(e <= tol[pr], "prehandled column %lld: batched vs single %.3g", (long long)c, e);
      }
      free(many), free(single), free(in), free(out);
      fea_ph_m1_destroy(&m);
      fixture_free(&x);
    }
}

/* ---- discretization error ------------------------------------------------------------------- */

static double l2_error(fixture *x, const double *u_free) {
  fea_space_info si = FEA_SPACE_INFO_INIT;
  OK(fea_space_get_info(x->space, &si));
  const fea_index nd = si.num_dofs;
  double *full = malloc((size_t)nd * sizeof *full), l2;
  cr_assert(full);
  OK(fea_problem_expand_solution(x->pb, u_free, full));
  OK(fea_problem_error_norms(x->pb, full, exact_u, NULL, NULL, &l2, NULL));
  free(full);
  return l2;
}

Test(schur_m1, l2_error_is_the_discretization_error) {
  for (int el = 0; el < 2; el++) {
    double prev = 0;
    for (fea_index n = 16; n <= 64; n *= 2) {
      fixture x;
      fixture_make(&x, (fea_ph_element)el, n, 4);
      fea_ph_m1 *m64 = m1_make(&x, FEA_F64), *m32 = m1_make(&x, FEA_F32);
      double *ref = copy(x.g.num, x.b), *u64 = copy(x.g.num, x.b), *u32 = copy(x.g.num, x.b);
      direct_solve(x.A, ref);
      OK(fea_ph_m1_solve_nodal(m64, x.f, 1, u64));
      OK(fea_ph_m1_solve_nodal(m32, x.f, 1, u32));
      const double er = l2_error(&x, ref), e64 = l2_error(&x, u64), e32 = l2_error(&x, u32);
      cr_log_info("%s h=1/%lld: L2 error direct %.6g, M1 FP64 %.6g, FP32 %.6g", el_name(x.el),
                  (long long)n, er, e64, e32);
      cr_assert(fabs(e64 - er) <= 1e-8 * er, "%s h=1/%lld: FP64 L2 %.10g, direct %.10g",
                el_name(x.el), (long long)n, e64, er);
      cr_assert(fabs(e32 - er) <= 1e-2 * er, "%s h=1/%lld: FP32 L2 %.6g, direct %.6g",
                el_name(x.el), (long long)n, e32, er);
      if (prev > 0) /* O(h^2): a factor 4 per halving */
        cr_assert(prev / e64 > 3.5 && prev / e64 < 4.5, "%s h=1/%lld: L2 ratio %.3g", el_name(x.el),
                  (long long)n, prev / e64);
      prev = e64;
      free(ref), free(u64), free(u32);
      fea_ph_m1_destroy(&m64);
      fea_ph_m1_destroy(&m32);
      fixture_free(&x);
    }
  }
}

/* The threaded host backend gives the same solution (its BLAS may sum in
 * another order, hence not bit-equal). */
Test(schur_m1, threads_backend_matches) {
  fea_context *tctx;
  OK(fea_context_create("/cpu/threads", &tctx));
  fixture x;
  fixture_make(&x, FEA_PH_Q1, 64, 8);
  fea_ph_m1 *m;
  OK(fea_ph_m1_create(tctx, &x.g, &x.s, x.At, x.f, FEA_F64, &m));
  double *ref = copy(x.g.num, x.b), *u = copy(x.g.num, x.b);
  direct_solve(x.A, ref);
  OK(fea_ph_m1_solve_nodal(m, x.f, 1, u));
  const double e = rel_diff(x.g.num, u, ref);
  cr_assert(e <= 1e-10, "/cpu/threads FP64 M1 differs from dpbsv by %.3g", e);
  free(ref), free(u);
  fea_ph_m1_destroy(&m);
  fixture_free(&x);
  OK(fea_context_destroy(&tctx));
}

/* ---- sizes and bad input -------------------------------------------------------------------- */

Test(schur_m1, info_and_bad_input) {
  fixture x;
  fixture_make(&x, FEA_PH_Q1, 32, 4);
  fea_ph_m1 *m = m1_make(&x, FEA_F64);
  fea_ph_m1_info info;
  fea_ph_m1_get_info(m, &info);
  /* (6)-(8): |C| = 9, |E| = 2 * 3 * 28, |I| = 28^2, 16 blocks of 7^2. */
  cr_assert(info.nc == 9 && info.ne == 168 && info.ni == 784 && info.num_cells == 16 &&
                info.block == 49,
            "sizes %lld %lld %lld %lld %lld", (long long)info.nc, (long long)info.ne,
            (long long)info.ni, (long long)info.num_cells, (long long)info.block);
  fea_ph_m1_destroy(&m);
  fea_ph_m1 *bad = NULL;
  cr_assert_eq(fea_ph_m1_create(ctx, &x.g, &x.s, x.At, x.f, (fea_precision)9, &bad),
               FEA_ERR_UNSUPPORTED);
  cr_assert(strstr(fea_context_last_error(ctx), "precision 9"), "%s", fea_context_last_error(ctx));
  cr_assert_null(bad);
  /* Refinement arguments. */
  m = m1_make(&x, FEA_F32);
  double *u = copy(x.g.num, x.b);
  cr_assert_eq(fea_ph_m1_refine(m, x.f, x.A, 1, x.b, u, 0.0, 5, NULL, NULL), FEA_ERR_INVALID_ARG);
  cr_assert_eq(fea_ph_m1_refine(m, x.f, x.A, 1, x.b, u, 1e-12, 0, NULL, NULL), FEA_ERR_INVALID_ARG);
  free(u);
  fea_ph_m1_destroy(&m);
  /* The nodal matrix is not prehandled: A_CI != 0 must be refused. */
  cr_assert_eq(fea_ph_m1_create(ctx, &x.g, &x.s, x.A, x.f, FEA_F64, &bad), FEA_ERR_INVALID_ARG);
  cr_assert(strstr(fea_context_last_error(ctx), "A_CI") ||
                strstr(fea_context_last_error(ctx), "A_II"),
            "%s", fea_context_last_error(ctx));
  cr_assert_null(bad);
  fixture_free(&x);
}

/* Pi inverted elsewhere (a device's pi_inverse, prehandled-device.h): the
 * hook receives Pi itself (its LAPACK inverse equals the host setup's Pi^-1
 * to 1e-12), the returned M1 holds no Pi^-1 and refuses host solves, and its
 * other blocks equal the host setup's bit for bit. */
typedef struct pi_seen {
  fea_index ne;
  double *inv; /* LAPACK's Pi^-1 of what the hook saw */
  fea_precision prec;
} pi_seen;

static fea_status record_pi(void *user, const double *pi, fea_index ne, fea_precision prec) {
  pi_seen *seen = user;
  seen->ne = ne;
  seen->prec = prec;
  seen->inv = malloc((size_t)(ne * ne) * sizeof *seen->inv);
  cr_assert(seen->inv);
  memcpy(seen->inv, pi, (size_t)(ne * ne) * sizeof *seen->inv);
  cr_assert_eq(LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', (lapack_int)ne, seen->inv, (lapack_int)ne), 0);
  cr_assert_eq(LAPACKE_dpotri(LAPACK_COL_MAJOR, 'L', (lapack_int)ne, seen->inv, (lapack_int)ne), 0);
  for (fea_index j = 0; j < ne; j++) /* potri fills the lower triangle */
    for (fea_index i = 0; i < j; i++) seen->inv[i + j * ne] = seen->inv[j + i * ne];
  return FEA_SUCCESS;
}

Test(schur_m1, pi_inverted_elsewhere) {
  fixture x;
  fixture_make(&x, FEA_PH_Q1, 32, 4);
  fea_ph_m1 *ref = m1_make(&x, FEA_F64), *m = NULL;
  pi_seen seen = {0, NULL, FEA_F32};
  OK(fea_ph_m1_create_pi_elsewhere(ctx, &x.g, &x.s, x.At, x.f, FEA_F64, record_pi, &seen, &m));
  const fea_index ne = ref->ne;
  cr_assert_eq(seen.ne, ne);
  cr_assert_eq(seen.prec, FEA_F64);
  const double *pinv = ref->pinv;
  double err = 0, scale = 0;
  for (fea_index i = 0; i < ne * ne; i++) {
    err = fmax(err, fabs(seen.inv[i] - pinv[i]));
    scale = fmax(scale, fabs(pinv[i]));
  }
  cr_assert(err <= 1e-12 * scale, "the hook's Pi inverts to %.3g off the host's Pi^-1",
            err / scale);
  cr_assert_null(m->pinv);
  cr_assert_eq(memcmp(m->b, ref->b, (size_t)(ref->nc * ne) * sizeof(double)), 0);
  cr_assert_eq(memcmp(m->cinv, ref->cinv, (size_t)(ref->blk * ref->blk) * sizeof(double)), 0);
  double *b = calloc((size_t)x.g.num, sizeof *b);
  cr_assert(b);
  cr_assert_eq(fea_ph_m1_solve(m, 1, b, b), FEA_ERR_STATE);
  cr_assert(strstr(fea_context_last_error(ctx), "device"), "%s", fea_context_last_error(ctx));
  free(b), free(seen.inv);
  fea_ph_m1_destroy(&m);
  fea_ph_m1_destroy(&ref);
  fixture_free(&x);
}
