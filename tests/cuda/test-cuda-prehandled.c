/* The prehandled solver (method M1) on /gpu/cuda against the same solver on
 * /cpu/threads (docs/prehandled.md, "On the GPU"):
 *
 * - GPU M1 equals CPU M1 in the same precision: FP64 to 1e-12, FP32 to
 *   1e-6 (both round the same FP64 setup once; only summation orders
 *   differ), FP16/BF16 within twice the CPU's deviation from FP64 (the
 *   16-bit roundings of the GEMM operands may flip where the FP32 panels
 *   differ in the last bit), and each within the paper's 1 % of FP64; FP32
 *   on TF32 tensor cores within 1 % of FP64;
 * - k right-hand sides at once (with ldb, ldx > num) equal k single solves;
 * - on one solver, solves of 2, 4, 1 and 3 columns in a row (the kept
 *   workspace grown, not shrunk, and counted in device_bytes; the pinned
 *   staging) equal the single solves, with and without refinement, and
 *   write nothing outside the solution's rows and columns;
 * - with refinement every precision reaches the FP64 solution (1e-10) and
 *   its L2 error, with the relative residual below 1e-12;
 * - bad input is refused;
 * - Pi^-1 inverted on the device in narrow panels (several, the last one
 *   partial; with and without padded columns) equals the default single
 *   panel and the CPU M1.
 * Q1 and P1, h = 1/64 and 1/128, Dirichlet data g = 1 + x/2 - y/4. Without a
 * GPU every test skips (cuda-test.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <feaccel/solver.h>

#include "../../cuda/prehandled-pi.h"
#include "cuda-test.h"

#define PI 3.14159265358979323846

static double u_exact(const double *x, void *user) {
  (void)user;
  return sin(PI * x[0]) * sin(PI * x[1]) + 1.0 + 0.5 * x[0] - 0.25 * x[1];
}

static void u_grad(const double *x, double *g, void *user) {
  (void)user;
  g[0] = PI * cos(PI * x[0]) * sin(PI * x[1]) + 0.5;
  g[1] = PI * sin(PI * x[0]) * cos(PI * x[1]) - 0.25;
}

static double f_rhs(const double *x, void *user) {
  (void)user;
  return 2.0 * PI * PI * sin(PI * x[0]) * sin(PI * x[1]);
}

static double g_dirichlet(const double *x, void *user) { return u_exact(x, user); }

typedef struct square {
  fea_mesh *mesh;
  fea_space *space;
  fea_problem *pb;
  fea_index nf;
} square;

static square square_create(fea_context *ctx, fea_index n, int p1) {
  square s = {0};
  fea_mesh_desc md = FEA_MESH_DESC_INIT;
  md.dim = 2;
  md.n[0] = md.n[1] = n;
  md.simplices = p1;
  OK(fea_mesh_create_structured(ctx, &md, &s.mesh));
  OK(fea_space_create_lagrange(s.mesh, 1, FEA_NODES_EQUISPACED, &s.space));
  fea_problem_desc pd = FEA_PROBLEM_DESC_INIT;
  pd.source = f_rhs;
  pd.dirichlet = g_dirichlet;
  OK(fea_problem_create_poisson(s.space, &pd, &s.pb));
  OK(fea_problem_get_num_free_dofs(s.pb, &s.nf));
  return s;
}

static void square_destroy(square *s) {
  fea_problem_destroy(&s->pb);
  fea_space_destroy(&s->space);
  fea_mesh_destroy(&s->mesh);
}

/* coarse_cells: n0, or 0 for the solver's choice. */
static fea_solver *ph_setup_n0(fea_context *ctx, const square *s, fea_precision prec, int refine,
                               int tf32, fea_index coarse_cells) {
  fea_prehandled_desc d = FEA_PREHANDLED_DESC_INIT;
  d.precision = prec;
  d.refine = refine;
  d.tf32 = tf32;
  d.coarse_cells = coarse_cells;
  fea_solver *sv = NULL;
  fea_status st = fea_solver_create_prehandled(ctx, s->pb, &d, &sv);
  cr_assert_eq(st, FEA_SUCCESS, "create (%s): %s", fea_precision_name(prec),
               fea_context_last_error(ctx));
  st = fea_solver_setup(sv);
  cr_assert_eq(st, FEA_SUCCESS, "setup (%s): %s", fea_precision_name(prec),
               fea_context_last_error(ctx));
  return sv;
}

static fea_solver *ph_setup(fea_context *ctx, const square *s, fea_precision prec, int refine,
                            int tf32) {
  return ph_setup_n0(ctx, s, prec, refine, tf32, 0);
}

/* The problem's own load, solved once. */
static double *solve_load(fea_solver *sv, fea_context *ctx, fea_index nf) {
  double *x = malloc((size_t)nf * sizeof *x);
  cr_assert_not_null(x);
  fea_status st = fea_solver_solve(sv, 1, NULL, 0, x, nf);
  cr_assert_eq(st, FEA_SUCCESS, "solve: %s", fea_context_last_error(ctx));
  return x;
}

static double rel_diff(fea_index n, const double *x, const double *y) {
  double num = 0, den = 0;
  for (fea_index i = 0; i < n; i++) num += (x[i] - y[i]) * (x[i] - y[i]), den += y[i] * y[i];
  return sqrt(num / den);
}

static double l2_error(const square *s, const double *x) {
  fea_space_info si = FEA_SPACE_INFO_INIT;
  OK(fea_space_get_info(s->space, &si));
  double *full = malloc((size_t)si.num_dofs * sizeof *full), l2 = 0, h1 = 0;
  cr_assert_not_null(full);
  OK(fea_problem_expand_solution(s->pb, x, full));
  OK(fea_problem_error_norms(s->pb, full, u_exact, u_grad, NULL, &l2, &h1));
  free(full);
  return l2;
}

static const char *el_name(int p1) { return p1 ? "P1" : "Q1"; }

Test(cuda_prehandled, gpu_equals_cpu_in_each_precision, .timeout = 600) {
  fea_context *gpu = open_gpu();
  fea_context *cpu = NULL;
  OK(fea_context_create("/cpu/threads", &cpu));
  static const fea_index sizes[2] = {64, 128};
  for (int p1 = 0; p1 <= 1; p1++)
    for (int z = 0; z < 2; z++) {
      square sg = square_create(gpu, sizes[z], p1), sc = square_create(cpu, sizes[z], p1);
      const fea_index nf = sc.nf;
      cr_assert_eq(sg.nf, nf);
      fea_solver *c64 = ph_setup(cpu, &sc, FEA_F64, 0, 0);
      double *x64 = solve_load(c64, cpu, nf);
      for (int q = 0; q < 4; q++) {
        const fea_precision p = all_precs[q];
        fea_solver *cs = ph_setup(cpu, &sc, p, 0, 0), *gs = ph_setup(gpu, &sg, p, 0, 0);
        double *xc = solve_load(cs, cpu, nf), *xg = solve_load(gs, gpu, nf);
        const double dcpu = rel_diff(nf, xc, x64), dgpu = rel_diff(nf, xg, x64);
        const double dgc = rel_diff(nf, xg, xc);
        cr_log_info("%s h=1/%lld %s: GPU vs CPU %.3g; from FP64: GPU %.3g, CPU %.3g", el_name(p1),
                    (long long)sizes[z], fea_precision_name(p), dgc, dgpu, dcpu);
        const double tol = p == FEA_F64 ? 1e-12 : p == FEA_F32 ? 1e-6 : 2.0 * dcpu + 1e-6;
        cr_expect(dgc <= tol, "%s h=1/%lld %s: GPU differs from CPU by %.3g > %.3g", el_name(p1),
                  (long long)sizes[z], fea_precision_name(p), dgc, tol);
        cr_expect(dgpu < 0.01, "%s h=1/%lld %s: GPU %.3g from FP64 (spec: 1 %%)", el_name(p1),
                  (long long)sizes[z], fea_precision_name(p), dgpu);
        fea_prehandled_stats st = FEA_PREHANDLED_STATS_INIT;
        OK(fea_solver_get_prehandled_stats(gs, &st));
        cr_expect(st.device_bytes >= st.dense_bytes && st.dense_bytes > 0,
                  "device bytes %llu, dense bytes %llu", (unsigned long long)st.device_bytes,
                  (unsigned long long)st.dense_bytes);
        free(xc), free(xg);
        fea_solver_destroy(&cs);
        fea_solver_destroy(&gs);
      }
      /* FP32 on TF32 tensor cores: 10-bit mantissas, like FP16 without the range issue. */
      fea_solver *ts = ph_setup(gpu, &sg, FEA_F32, 0, 1);
      double *xt = solve_load(ts, gpu, nf);
      const double dt = rel_diff(nf, xt, x64);
      cr_log_info("%s h=1/%lld f32 on TF32: %.3g from FP64", el_name(p1), (long long)sizes[z], dt);
      cr_expect(dt < 0.01, "%s TF32: %.3g from FP64", el_name(p1), dt);
      free(xt), free(x64);
      fea_solver_destroy(&ts);
      fea_solver_destroy(&c64);
      square_destroy(&sg);
      square_destroy(&sc);
    }
  fea_context_destroy(&cpu);
  fea_context_destroy(&gpu);
}

Test(cuda_prehandled, many_right_hand_sides_equal_single_solves, .timeout = 300) {
  fea_context *gpu = open_gpu();
  for (int p1 = 0; p1 <= 1; p1++) {
    square s = square_create(gpu, 64, p1);
    const fea_index nf = s.nf, k = 3, ld = nf + 5;
    double *B = calloc((size_t)(ld * k), sizeof *B), *X = calloc((size_t)(ld * k), sizeof *X);
    double *x = malloc((size_t)nf * sizeof *x);
    cr_assert(B && X && x);
    uint64_t seed = 7;
    for (fea_index j = 0; j < k; j++)
      for (fea_index i = 0; i < nf; i++) /* columns of very different scales */
        B[i + j * ld] = next_uniform(&seed) * pow(10.0, -3.0 * (double)j);
    for (int q = 0; q < 4; q++) {
      const fea_precision p = all_precs[q];
      fea_solver *sv = ph_setup(gpu, &s, p, 0, 0);
      fea_status st = fea_solver_solve(sv, k, B, ld, X, ld);
      cr_assert_eq(st, FEA_SUCCESS, "%s", fea_context_last_error(gpu));
      for (fea_index j = 0; j < k; j++) {
        OK(fea_solver_solve(sv, 1, B + j * ld, ld, x, nf));
        const double d = rel_diff(nf, X + j * ld, x);
        /* cuBLAS may pick another kernel (summation order) for another
         * column count; a 16-bit operand rounding can then flip. */
        const double tol = p == FEA_F64 ? 1e-12 : p == FEA_F32 ? 1e-5 : 1e-3;
        cr_expect(d <= tol, "%s %s column %lld of a batch differs from its single solve by %.3g",
                  el_name(p1), fea_precision_name(p), (long long)j, d);
      }
      for (fea_index j = 0; j < k; j++) /* padding rows untouched */
        for (fea_index i = nf; i < ld; i++) cr_expect_eq(X[i + j * ld], 0.0);
      fea_solver_destroy(&sv);
    }
    free(B), free(X), free(x);
    square_destroy(&s);
  }
  fea_context_destroy(&gpu);
}

/* Column j0 .. j0 + kk - 1 of B solved at once on sv, into X (ld ld, filled
 * with a sentinel first), compared with the single solves xs (ld nf); the
 * padding rows and the columns past kk must keep the sentinel. */
static void batch_equals_singles(fea_solver *sv, fea_context *ctx, const char *what, fea_index nf,
                                 fea_index ld, fea_index k, const double *B, fea_index j0,
                                 fea_index kk, const double *xs, double *X, double tol) {
  const double sentinel = -7.0;
  for (fea_index i = 0; i < ld * k; i++) X[i] = sentinel;
  fea_status st = fea_solver_solve(sv, kk, B + j0 * ld, ld, X, ld);
  cr_assert_eq(st, FEA_SUCCESS, "%s, %lld columns from %lld: %s", what, (long long)kk,
               (long long)j0, fea_context_last_error(ctx));
  for (fea_index j = 0; j < kk; j++) {
    const double d = rel_diff(nf, X + j * ld, xs + (j0 + j) * nf);
    cr_expect(d <= tol, "%s: column %lld of %lld from %lld differs from its single solve by %.3g",
              what, (long long)j, (long long)kk, (long long)j0, d);
  }
  fea_index touched = 0;
  for (fea_index j = 0; j < k; j++)
    for (fea_index i = (j < kk ? nf : 0); i < ld; i++) touched += X[i + j * ld] != sentinel;
  cr_expect_eq(touched, 0, "%s, %lld columns: %lld entries outside the solution written", what,
               (long long)kk, (long long)touched);
}

/* One solver object, solves of different column counts in a row: the kept
 * workspace grows (and counts in device_bytes, and does not shrink), the
 * pinned staging honours ldb and ldx, and every batch equals the single
 * solves made first (k = 1 each); with and without refinement. */
Test(cuda_prehandled, solves_of_different_k_in_a_row, .timeout = 300) {
  fea_context *gpu = open_gpu();
  for (int p1 = 0; p1 <= 1; p1++) {
    square s = square_create(gpu, 64, p1);
    const fea_index nf = s.nf, k = 4, ld = nf + 3;
    double *B = calloc((size_t)(ld * k), sizeof *B), *X = malloc((size_t)(ld * k) * sizeof *X);
    double *xs = malloc((size_t)(nf * k) * sizeof *xs);
    cr_assert(B && X && xs);
    uint64_t seed = 11;
    for (fea_index j = 0; j < k; j++)
      for (fea_index i = 0; i < nf; i++)
        B[i + j * ld] = next_uniform(&seed) * pow(10.0, -2.0 * (double)j);
    for (int refine = 0; refine <= 1; refine++)
      for (int q = 0; q < 4; q++) {
        const fea_precision p = all_precs[q];
        char what[64];
        snprintf(what, sizeof what, "%s %s%s", el_name(p1), fea_precision_name(p),
                 refine ? " refined" : "");
        fea_solver *sv = ph_setup(gpu, &s, p, refine, 0);
        for (fea_index j = 0; j < k; j++)
          OK(fea_solver_solve(sv, 1, B + j * ld, ld, xs + j * nf, nf));
        fea_prehandled_stats st = FEA_PREHANDLED_STATS_INIT;
        OK(fea_solver_get_prehandled_stats(sv, &st));
        const uint64_t bytes1 = st.device_bytes;
        /* Refined columns stop at relative residuals <= 1e-12 or at FP64's
         * rounding floor (src/prehandled/refine-rule.h; a few 1e-12), so each
         * is within kappa(A_h) 1e-11 (kappa ~ 830 at h = 1/64) of the exact
         * solution; otherwise the tolerances of
         * many_right_hand_sides_equal_single_solves. */
        const double tol = refine ? 2e-8 : p == FEA_F64 ? 1e-12 : p == FEA_F32 ? 1e-5 : 1e-3;
        batch_equals_singles(sv, gpu, what, nf, ld, k, B, 0, 2, xs, X, tol);
        batch_equals_singles(sv, gpu, what, nf, ld, k, B, 0, 4, xs, X, tol);
        OK(fea_solver_get_prehandled_stats(sv, &st));
        const uint64_t bytes4 = st.device_bytes;
        cr_expect(bytes4 > bytes1, "%s: device bytes %llu after 4 columns, %llu after 1", what,
                  (unsigned long long)bytes4, (unsigned long long)bytes1);
        batch_equals_singles(sv, gpu, what, nf, ld, k, B, 3, 1, xs, X, tol);
        batch_equals_singles(sv, gpu, what, nf, ld, k, B, 1, 3, xs, X, tol);
        OK(fea_solver_get_prehandled_stats(sv, &st));
        cr_expect_eq(st.device_bytes, bytes4, "%s: device bytes %llu after smaller solves, %llu",
                     what, (unsigned long long)st.device_bytes, (unsigned long long)bytes4);
        fea_solver_destroy(&sv);
      }
    free(B), free(X), free(xs);
    square_destroy(&s);
  }
  fea_context_destroy(&gpu);
}

Test(cuda_prehandled, refinement_reaches_fp64, .timeout = 600) {
  fea_context *gpu = open_gpu();
  fea_context *cpu = NULL;
  OK(fea_context_create("/cpu/threads", &cpu));
  for (int p1 = 0; p1 <= 1; p1++) {
    square sg = square_create(gpu, 128, p1), sc = square_create(cpu, 128, p1);
    const fea_index nf = sc.nf;
    fea_solver *c64 = ph_setup(cpu, &sc, FEA_F64, 0, 0);
    double *x64 = solve_load(c64, cpu, nf);
    const double e64 = l2_error(&sc, x64);
    for (int q = 0; q < 4; q++) {
      const fea_precision p = all_precs[q];
      fea_solver *gs = ph_setup(gpu, &sg, p, 1, 0);
      double *x = solve_load(gs, gpu, nf);
      fea_prehandled_stats st = FEA_PREHANDLED_STATS_INIT;
      OK(fea_solver_get_prehandled_stats(gs, &st));
      const double d = rel_diff(nf, x, x64), e = l2_error(&sg, x);
      cr_log_info(
          "%s h=1/128 %s refined on the GPU: %.3g from FP64, L2 %.5g (FP64 %.5g), %d "
          "corrections, relres %.3g",
          el_name(p1), fea_precision_name(p), d, e, e64, st.refine_iterations,
          st.relative_residual);
      cr_expect(d <= 1e-10, "%s %s refined: %.3g from the FP64 solution", el_name(p1),
                fea_precision_name(p), d);
      cr_expect(fabs(e - e64) <= 0.01 * e64, "%s %s refined: L2 error %.5g, FP64 %.5g", el_name(p1),
                fea_precision_name(p), e, e64);
      /* 1e-12 or FP64's rounding floor (src/prehandled/refine-rule.h). */
      cr_expect(st.relative_residual <= 1e-11, "relative residual %.3g", st.relative_residual);
      cr_expect(st.refine_iterations >= 1 && st.refine_iterations <= 12, "%d corrections",
                st.refine_iterations);
      free(x);
      fea_solver_destroy(&gs);
    }
    free(x64);
    fea_solver_destroy(&c64);
    square_destroy(&sg);
    square_destroy(&sc);
  }
  fea_context_destroy(&cpu);
  fea_context_destroy(&gpu);
}

/* Pi^-1 on the device is formed panel by panel (prehandled-pi-cuda.c), 2048
 * columns at a time: of the other tests only P1 at h = 1/128 (|E| = 2640)
 * runs a second panel, and none has padded columns (every |E| there is a
 * multiple of M1_LD_ALIGN). Here the test hook sets 37 columns, which
 * divides neither |E|, so panels start at j0 > 0 and the last one is
 * partial, for Q1 at h = 1/64:
 * h0 = 1/2, |E| = 124, not a multiple of M1_LD_ALIGN: Pi^-1's device columns
 * are padded (lde = 128 != |E|, the conversion column by column), panels of
 * 37, 37, 37, 13; h0 = 1/8, |E| = 784 = lde (the conversion in one call), 21
 * panels and one of 7. In each precision the narrow panels equal the default
 * single panel on the GPU and the CPU M1 as in
 * gpu_equals_cpu_in_each_precision. The width is process-wide: .fini puts
 * the default back (Criterion runs each test in a process of its own). */
static void pi_panel_width_default(void) { fea_cuda_pi_set_panel_width(0); }

Test(cuda_prehandled, pi_inverse_in_narrow_panels_equals_one_panel, .fini = pi_panel_width_default,
     .timeout = 300) {
  fea_context *gpu = open_gpu();
  fea_context *cpu = NULL;
  OK(fea_context_create("/cpu/threads", &cpu));
  const fea_index width = 37;
  static const struct {
    fea_index n0, ne;
    int padded;
  } cfg[2] = {{2, 124, 1}, {8, 784, 0}};
  square sg = square_create(gpu, 64, 0), sc = square_create(cpu, 64, 0);
  const fea_index nf = sc.nf;
  cr_assert_eq(sg.nf, nf);
  for (int c = 0; c < 2; c++) {
    const fea_index n0 = cfg[c].n0;
    fea_solver *c64 = ph_setup_n0(cpu, &sc, FEA_F64, 0, 0, n0);
    double *x64 = solve_load(c64, cpu, nf);
    for (int q = 0; q < 4; q++) {
      const fea_precision p = all_precs[q];
      fea_cuda_pi_set_panel_width(0);
      fea_solver *gd = ph_setup_n0(gpu, &sg, p, 0, 0, n0), *cs = ph_setup_n0(cpu, &sc, p, 0, 0, n0);
      fea_cuda_pi_set_panel_width(width);
      fea_solver *gn = ph_setup_n0(gpu, &sg, p, 0, 0, n0);
      fea_cuda_pi_set_panel_width(0);
      /* The sizes the comment above promises: several panels, a partial
       * last one, and padded columns or not. */
      fea_prehandled_stats st = FEA_PREHANDLED_STATS_INIT;
      OK(fea_solver_get_prehandled_stats(gn, &st));
      const fea_index ne = st.num_e;
      cr_assert_eq(st.n0, n0);
      cr_assert_eq(ne, cfg[c].ne, "|E| = %lld at h0 = 1/%lld", (long long)ne, (long long)n0);
      cr_assert(ne > width && ne % width != 0, "|E| = %lld, panels of %lld", (long long)ne,
                (long long)width);
      cr_assert_eq(fea_ph_m1_ld_pad(ne) != ne, cfg[c].padded, "|E| = %lld, lde = %lld",
                   (long long)ne, (long long)fea_ph_m1_ld_pad(ne));
      double *xd = solve_load(gd, gpu, nf), *xn = solve_load(gn, gpu, nf);
      double *xc = solve_load(cs, cpu, nf);
      const double dnd = rel_diff(nf, xn, xd), dnc = rel_diff(nf, xn, xc);
      const double dcpu = rel_diff(nf, xc, x64), dn64 = rel_diff(nf, xn, x64);
      cr_log_info(
          "Q1 h=1/64 h0=1/%lld |E|=%lld %s, panels of %lld: vs one panel %.3g, vs CPU "
          "%.3g; from FP64: %.3g (CPU %.3g)",
          (long long)n0, (long long)ne, fea_precision_name(p), (long long)width, dnd, dnc, dn64,
          dcpu);
      const double tol = p == FEA_F64 ? 1e-12 : p == FEA_F32 ? 1e-6 : 2.0 * dcpu + 1e-6;
      cr_expect(dnd <= tol, "h0=1/%lld %s: panels of %lld differ from one panel by %.3g > %.3g",
                (long long)n0, fea_precision_name(p), (long long)width, dnd, tol);
      cr_expect(dnc <= tol, "h0=1/%lld %s: panels of %lld differ from the CPU by %.3g > %.3g",
                (long long)n0, fea_precision_name(p), (long long)width, dnc, tol);
      cr_expect(dn64 < 0.01, "h0=1/%lld %s: panels of %lld %.3g from FP64 (spec: 1 %%)",
                (long long)n0, fea_precision_name(p), (long long)width, dn64);
      free(xd), free(xn), free(xc);
      fea_solver_destroy(&gd);
      fea_solver_destroy(&gn);
      fea_solver_destroy(&cs);
    }
    free(x64);
    fea_solver_destroy(&c64);
  }
  square_destroy(&sg);
  square_destroy(&sc);
  fea_context_destroy(&cpu);
  fea_context_destroy(&gpu);
}

Test(cuda_prehandled, bad_input_is_refused) {
  fea_context *gpu = open_gpu();
  square s = square_create(gpu, 32, 0);
  fea_prehandled_desc d = FEA_PREHANDLED_DESC_INIT;
  fea_solver *sv = NULL;
  d.tf32 = 2;
  cr_expect_eq(fea_solver_create_prehandled(gpu, s.pb, &d, &sv), FEA_ERR_INVALID_ARG);
  cr_expect(strstr(fea_context_last_error(gpu), "tf32") != NULL, "%s", fea_context_last_error(gpu));
  cr_expect_null(sv);
  d = (fea_prehandled_desc)FEA_PREHANDLED_DESC_INIT;
  d.coarse_cells = 3; /* 32 / 3 is not a power of two */
  cr_expect_lt(fea_solver_create_prehandled(gpu, s.pb, &d, &sv), 0);
  cr_expect_null(sv);
  /* A solve before setup is refused and a good one still works afterwards. */
  d = (fea_prehandled_desc)FEA_PREHANDLED_DESC_INIT;
  OK(fea_solver_create_prehandled(gpu, s.pb, &d, &sv));
  double *x = malloc((size_t)s.nf * sizeof *x);
  cr_assert_not_null(x);
  cr_expect_lt(fea_solver_solve(sv, 1, NULL, 0, x, s.nf), 0);
  OK(fea_solver_setup(sv));
  cr_expect_lt(fea_solver_solve(sv, 1, NULL, 0, x, s.nf - 1), 0); /* ldx < num */
  OK(fea_solver_solve(sv, 1, NULL, 0, x, s.nf));
  free(x);
  fea_solver_destroy(&sv);
  square_destroy(&s);
  fea_context_destroy(&gpu);
}
