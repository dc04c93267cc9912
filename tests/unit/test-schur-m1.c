/* Method M1 (src/core/schur-m1*.c) on the Q1 and P1 Poisson problem on the
 * unit square with homogeneous Dirichlet data, h = 1/16 .. 1/64 and
 * h0 = 1/4 .. 1/8:
 * - the FP64 nodal solution x_h = S L^-T M1^-1 L^-1 S^T b_h equals a LAPACK
 *   banded Cholesky solve of the reference system to 1e-10 relative;
 * - the FP32 solution stays within a kappa-scaled round-off bound of it;
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

#include "matrix.h"
#include "prehandle.h"
#include "schur-m1.h"

#define OK(expr)                                                                             \
  do {                                                                                       \
    fea_status ok_status_ = (expr);                                                          \
    cr_assert_eq(ok_status_, FEA_SUCCESS, "%s returned %s: %s", #expr,                       \
                 fea_status_string(ok_status_), fea_context_last_error(NULL));               \
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
  OK(fea_problem_assemble_reference(x->pb, &x->A, x->b));
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

static fea_m1 *m1_make(fixture *x, fea_precision prec) {
  fea_m1 *m;
  OK(fea_m1_create(ctx, &x->g, &x->s, x->At, x->f, prec, &m));
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
      fea_m1 *m = m1_make(&x, FEA_F64);
      double *ref = copy(x.g.num, x.b), *u = copy(x.g.num, x.b);
      direct_solve(x.A, ref);
      OK(fea_m1_solve_nodal(m, x.f, 1, u));
      const double e = rel_diff(x.g.num, u, ref);
      cr_log_info("%s h=1/%lld h0=1/%lld: FP64 M1 vs dpbsv %.3g", el_name(x.el),
                  (long long)sizes[t][0], (long long)sizes[t][1], e);
      cr_assert(e <= 1e-10, "%s h=1/%lld h0=1/%lld: FP64 M1 differs from dpbsv by %.3g",
                el_name(x.el), (long long)sizes[t][0], (long long)sizes[t][1], e);
      free(ref), free(u);
      fea_m1_destroy(&m);
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
 * kappa(A) of the prehandled system is ~9-40 here (Lanczos below; spec §3.5
 * gives 22 at (1/256, 1/16)), so the bound 1e-6 kappa(A) (about 17 u kappa)
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
      fea_m1 *m = m1_make(&x, FEA_F32);
      double *ref = copy(x.g.num, x.b), *u = copy(x.g.num, x.b);
      direct_solve(x.A, ref);
      OK(fea_m1_solve_nodal(m, x.f, 1, u));
      const double e = rel_diff(x.g.num, u, ref);
      cr_log_info("%s h=1/%lld h0=1/%lld: kappa %.4g, FP32 M1 vs dpbsv %.3g (bound %.3g)",
                  el_name(x.el), (long long)sizes[t][0], (long long)sizes[t][1], kappa, e,
                  1e-6 * kappa);
      cr_assert(e <= 1e-6 * kappa, "%s h=1/%lld h0=1/%lld: FP32 M1 off by %.3g > 1e-6 kappa = %.3g",
                el_name(x.el), (long long)sizes[t][0], (long long)sizes[t][1], e, 1e-6 * kappa);
      cr_assert(e > 1e-10, "the FP32 solve (%.3g off) did not run in FP32", e);
      fea_m1_info info;
      fea_m1_get_info(m, &info);
      cr_assert_eq(info.prec, FEA_F32);
      cr_assert_eq(info.dense_bytes,
                   sizeof(float) * (size_t)(info.nc * info.ne + info.block * info.block +
                                            info.ne * info.ne));
      free(op.tmp), free(ref), free(u);
      fea_m1_destroy(&m);
      fixture_free(&x);
    }
}

/* ---- many right-hand sides ------------------------------------------------------------------ */

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static double urand(void) { /* [-1, 1) */
  rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
  return (double)(rng >> 11) * 0x1p-52 - 1.0;
}

Test(schur_m1, many_rhs_equal_single_solves) {
  const fea_precision precs[2] = {FEA_F64, FEA_F32};
  const double tol[2] = {1e-13, 1e-6};
  for (int el = 0; el < 2; el++)
    for (int pr = 0; pr < 2; pr++) {
      fixture x;
      fixture_make(&x, (fea_ph_element)el, 32, 4);
      fea_m1 *m = m1_make(&x, precs[pr]);
      const fea_index k = 5, n = x.g.num;
      double *many = malloc((size_t)(n * k) * sizeof *many);
      cr_assert(many);
      for (fea_index i = 0; i < n * k; i++) many[i] = urand();
      memcpy(many, x.b, (size_t)n * sizeof *many); /* one column is the real load */
      double *single = copy(n * k, many);
      OK(fea_m1_solve_nodal(m, x.f, k, many));
      for (fea_index c = 0; c < k; c++) {
        OK(fea_m1_solve_nodal(m, x.f, 1, single + c * n));
        const double e = rel_diff(n, many + c * n, single + c * n);
        cr_assert(e <= tol[pr], "%s %s column %lld of %lld: batched vs single %.3g",
                  el_name(x.el), fea_precision_name(precs[pr]), (long long)c, (long long)k, e);
      }
      /* The prehandled solve alone, into a separate output. */
      double *in = malloc((size_t)(n * k) * sizeof *in), *out = malloc((size_t)(n * k) * sizeof *out);
      cr_assert(in && out);
      for (fea_index i = 0; i < n * k; i++) in[i] = urand();
      OK(fea_m1_solve(m, k, in, out));
      for (fea_index c = 0; c < k; c++) {
        OK(fea_m1_solve(m, 1, in + c * n, single + c * n));
        const double e = rel_diff(n, out + c * n, single + c * n);
        cr_assert(e <= tol[pr], "prehandled column %lld: batched vs single %.3g", (long long)c, e);
      }
      free(many), free(single), free(in), free(out);
      fea_m1_destroy(&m);
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
      fea_m1 *m64 = m1_make(&x, FEA_F64), *m32 = m1_make(&x, FEA_F32);
      double *ref = copy(x.g.num, x.b), *u64 = copy(x.g.num, x.b), *u32 = copy(x.g.num, x.b);
      direct_solve(x.A, ref);
      OK(fea_m1_solve_nodal(m64, x.f, 1, u64));
      OK(fea_m1_solve_nodal(m32, x.f, 1, u32));
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
      fea_m1_destroy(&m64);
      fea_m1_destroy(&m32);
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
  fea_m1 *m;
  OK(fea_m1_create(tctx, &x.g, &x.s, x.At, x.f, FEA_F64, &m));
  double *ref = copy(x.g.num, x.b), *u = copy(x.g.num, x.b);
  direct_solve(x.A, ref);
  OK(fea_m1_solve_nodal(m, x.f, 1, u));
  const double e = rel_diff(x.g.num, u, ref);
  cr_assert(e <= 1e-10, "/cpu/threads FP64 M1 differs from dpbsv by %.3g", e);
  free(ref), free(u);
  fea_m1_destroy(&m);
  fixture_free(&x);
  OK(fea_context_destroy(&tctx));
}

/* ---- sizes and bad input -------------------------------------------------------------------- */

Test(schur_m1, info_and_bad_input) {
  fixture x;
  fixture_make(&x, FEA_PH_Q1, 32, 4);
  fea_m1 *m = m1_make(&x, FEA_F64);
  fea_m1_info info;
  fea_m1_get_info(m, &info);
  /* (6)-(8): |C| = 9, |E| = 2 * 3 * 28, |I| = 28^2, 16 blocks of 7^2. */
  cr_assert(info.nc == 9 && info.ne == 168 && info.ni == 784 && info.num_cells == 16 &&
                info.block == 49,
            "sizes %lld %lld %lld %lld %lld", (long long)info.nc, (long long)info.ne,
            (long long)info.ni, (long long)info.num_cells, (long long)info.block);
  fea_m1_destroy(&m);
  fea_m1 *bad = NULL;
  cr_assert_eq(fea_m1_create(ctx, &x.g, &x.s, x.At, x.f, FEA_F16, &bad), FEA_ERR_UNSUPPORTED);
  cr_assert(strstr(fea_context_last_error(ctx), "f16") || strstr(fea_context_last_error(ctx), "F16"),
            "%s", fea_context_last_error(ctx));
  cr_assert_null(bad);
  /* The nodal matrix is not prehandled: A_CI != 0 must be refused. */
  cr_assert_eq(fea_m1_create(ctx, &x.g, &x.s, x.A, x.f, FEA_F64, &bad), FEA_ERR_INVALID_ARG);
  cr_assert(strstr(fea_context_last_error(ctx), "A_CI") || strstr(fea_context_last_error(ctx), "A_II"),
            "%s", fea_context_last_error(ctx));
  cr_assert_null(bad);
  fixture_free(&x);
}
