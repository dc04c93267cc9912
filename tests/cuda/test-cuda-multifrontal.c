/* The multifrontal solver on /gpu/cuda against /cpu/ref on the same
 * problems: the solutions agree to 1e-10 (relative, max norm), the tree
 * statistics are identical (the tree is the host's; the counted FLOPs are
 * summed in /cpu/ref's order), for d = 1, 2, 3 and p = 1..5, uneven n,
 * repeated knots and C0 separators, every merge, several right-hand sides,
 * the boundary Schur complement, a refactorization, fronts large enough for
 * the cuSOLVER path, and an integration error. Skipped without a GPU. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <feaccel/problem.h>
#include <feaccel/solver.h>
#include <feaccel/space.h>

#include "cuda-test.h"

#define TOL 1e-10

typedef struct multifrontal_case {
  int dim;
  int p[3];
  fea_index n[3];
  int repeated; /* interior knots of multiplicity 2 and p (a C0 separator), p >= 2 */
} multifrontal_case;

static double sine_f(const double *x, void *user) {
  const int dim = *(const int *)user;
  double u = dim * 9.8696044010893586;
  for (int k = 0; k < dim; k++) u *= sin(3.14159265358979323846 * x[k]);
  return u;
}

static double lift_g(const double *x, void *user) {
  const int dim = *(const int *)user;
  double g = 1.0;
  for (int k = 0; k < dim; k++) g += (k + 1) * 0.5 * x[k] * x[k];
  return g;
}

static double wavy_sigma(const double *x, void *user) {
  const int dim = *(const int *)user;
  double s = 2.0;
  for (int k = 0; k < dim; k++) s += sin(3.0 * x[k] + k);
  return s;
}

static double negative_sigma(const double *x, void *user) {
  (void)x;
  (void)user;
  return -1.0;
}

static fea_space *make_space(fea_context *ctx, const multifrontal_case *c) {
  fea_bspline_desc d = FEA_BSPLINE_DESC_INIT;
  d.dim = c->dim;
  for (int k = 0; k < c->dim; k++) {
    d.degree[k] = c->p[k];
    d.n[k] = c->n[k];
  }
  fea_space *s = NULL;
  OK(fea_space_create_bspline(ctx, &d, &s));
  if (!c->repeated) return s;
  for (int k = 0; k < c->dim; k++) {
    if (c->n[k] < 3 || c->p[k] < 2) continue;
    double a = (double)(c->n[k] / 3) / (double)c->n[k];
    double b = (double)(2 * c->n[k] / 3) / (double)c->n[k];
    double ins[16];
    int cnt = 0;
    ins[cnt++] = a;
    for (int j = 1; j < c->p[k]; j++) ins[cnt++] = b;
    fea_space *r = NULL;
    OK(fea_space_bspline_insert_knots(s, k, cnt, ins, &r));
    OK(fea_space_destroy(&s));
    s = r;
  }
  return s;
}

static fea_problem *make_problem(fea_space *s, const int *dim, int lifted, int variable_sigma) {
  fea_problem_desc pd = FEA_PROBLEM_DESC_INIT;
  if (variable_sigma) {
    pd.sigma_fn = wavy_sigma;
    pd.sigma_user = (void *)dim;
  }
  pd.source = sine_f;
  pd.source_user = (void *)dim;
  if (lifted) {
    pd.dirichlet = lift_g;
    pd.dirichlet_user = (void *)dim;
  }
  fea_problem *pb = NULL;
  OK(fea_problem_create_poisson(s, &pd, &pb));
  return pb;
}

static double max_rel_diff(const double *x, const double *y, fea_index n) {
  double d = 0, m = 0;
  for (fea_index i = 0; i < n; i++) {
    if (isnan(x[i] - y[i])) return NAN; /* fmax would drop it */
    d = fmax(d, fabs(x[i] - y[i]));
    m = fmax(m, fabs(y[i]));
  }
  return m > 0 ? d / m : d;
}

/* What one backend gave for a case. */
typedef struct outcome {
  double *x;
  fea_index nf;
  fea_solver_stats st;
  fea_solver_level lv[128];
} outcome;

static void solve_on(fea_context *ctx, const multifrontal_case *c, fea_multifrontal_merge merge,
                     int lifted, int variable_sigma, outcome *o) {
  const int dim = c->dim;
  fea_space *s = make_space(ctx, c);
  fea_problem *pb = make_problem(s, &dim, lifted, variable_sigma);
  OK(fea_problem_get_num_free_dofs(pb, &o->nf));
  fea_solver_desc d = FEA_SOLVER_DESC_INIT;
  d.merge = merge;
  fea_solver *sv = NULL;
  OK(fea_solver_create_multifrontal(ctx, s, pb, &d, &sv));
  OK(fea_solver_setup(sv));
  o->x = calloc((size_t)(o->nf + 1), sizeof *o->x);
  cr_assert_not_null(o->x);
  OK(fea_solver_solve(sv, 1, NULL, 0, o->x, o->nf > 0 ? o->nf : 1));
  fea_solver_stats st = FEA_SOLVER_STATS_INIT;
  OK(fea_solver_get_stats(sv, &st));
  o->st = st;
  cr_assert(st.num_levels <= 128);
  for (int L = 0; L < st.num_levels; L++) {
    o->lv[L].size = sizeof o->lv[L];
    OK(fea_solver_get_level(sv, L, &o->lv[L]));
  }
  OK(fea_solver_destroy(&sv));
  OK(fea_problem_destroy(&pb));
  OK(fea_space_destroy(&s));
}

static const char *case_name(const multifrontal_case *c, fea_multifrontal_merge merge, char *buf,
                             size_t len) {
  snprintf(buf, len, "dim %d p (%d, %d, %d) n (%lld, %lld, %lld) repeated %d merge %d", c->dim,
           c->p[0], c->p[1], c->p[2], (long long)c->n[0], (long long)c->n[1], (long long)c->n[2],
           c->repeated, (int)merge);
  return buf;
}

/* Returns the largest q of the case's tree (to know which paths ran). */
static fea_index check_case(fea_context *gpu, fea_context *ref, const multifrontal_case *c,
                            int lifted, int variable_sigma) {
  static const fea_multifrontal_merge merges[] = {FEA_MULTIFRONTAL_MERGE_TENSOR,
                                                  FEA_MULTIFRONTAL_MERGE_PAIRWISE,
                                                  FEA_MULTIFRONTAL_MERGE_AUTO};
  fea_index qmax = 0;
  char name[160];
  for (int mi = 0; mi < 3; mi++) {
    outcome g, r;
    memset(&g, 0, sizeof g);
    memset(&r, 0, sizeof r);
    solve_on(gpu, c, merges[mi], lifted, variable_sigma, &g);
    solve_on(ref, c, merges[mi], lifted, variable_sigma, &r);
    case_name(c, merges[mi], name, sizeof name);
    cr_assert_eq(g.nf, r.nf);
    double diff = max_rel_diff(g.x, r.x, r.nf);
    cr_assert(diff <= TOL, "%s: /gpu/cuda differs from /cpu/ref by %.3g", name, diff);
    /* The same tree, the same counted FLOPs (summed in the same order). */
    cr_assert_eq(g.st.num_levels, r.st.num_levels, "%s", name);
    cr_assert_eq(g.st.num_nodes, r.st.num_nodes, "%s", name);
    cr_assert_eq(g.st.max_front, r.st.max_front, "%s", name);
    cr_assert(g.st.flops == r.st.flops, "%s: flops %.17g vs %.17g", name, g.st.flops, r.st.flops);
    cr_assert(g.st.critical_path_flops == r.st.critical_path_flops, "%s", name);
    cr_assert_eq(g.st.factor_bytes, r.st.factor_bytes, "%s", name);
    /* The peaks differ by design: /cpu/ref walks the whole tree as one
     * subtree (a path's Schur blocks alive), /gpu/cuda level by level (a
     * level's), and each reports the walk it runs (etree-peak.c). Both hold
     * at least the factors and the load. */
    const uint64_t floor_bytes = r.st.factor_bytes + (uint64_t)r.nf * sizeof(double);
    cr_assert(g.st.peak_bytes >= floor_bytes && r.st.peak_bytes >= floor_bytes,
              "%s: peaks %llu (gpu) %llu (ref) below factors + load %llu", name,
              (unsigned long long)g.st.peak_bytes, (unsigned long long)r.st.peak_bytes,
              (unsigned long long)floor_bytes);
    /* The pivot range the device reduces from its factored diagonals
     * (multifrontal.cu) is the CPU's, up to rounding. */
    cr_assert(fabs(g.st.pivot_min - r.st.pivot_min) <= 1e-8 * r.st.pivot_max &&
                  fabs(g.st.pivot_max - r.st.pivot_max) <= 1e-8 * r.st.pivot_max,
              "%s: pivots [%.17g, %.17g] on the GPU, [%.17g, %.17g] on the CPU", name,
              g.st.pivot_min, g.st.pivot_max, r.st.pivot_min, r.st.pivot_max);
    cr_assert_eq(g.st.ill_conditioned, r.st.ill_conditioned, "%s", name);
    cr_assert(g.st.device_bytes > 0, "%s: no device memory reported", name);
    cr_assert_eq(r.st.device_bytes, 0, "%s: the CPU reports device memory", name);
    /* Two copies each way, timed on the device, within the solve's time (no
     * copies where the tree has no DoFs). */
    cr_assert((g.nf == 0 || g.st.transfer_s > 0) &&
                  g.st.transfer_s <= g.st.forward_s + g.st.backward_s,
              "%s: transfer_s %g of forward %g + backward %g", name, g.st.transfer_s,
              g.st.forward_s, g.st.backward_s);
    cr_assert(r.st.transfer_s == 0, "%s: the CPU reports transfers", name);
    for (int L = 0; L < r.st.num_levels; L++) {
      cr_assert_eq(g.lv[L].nodes, r.lv[L].nodes, "%s level %d", name, L);
      cr_assert_eq(g.lv[L].q_min, r.lv[L].q_min, "%s level %d", name, L);
      cr_assert_eq(g.lv[L].q_max, r.lv[L].q_max, "%s level %d", name, L);
      cr_assert_eq(g.lv[L].r_min, r.lv[L].r_min, "%s level %d", name, L);
      cr_assert_eq(g.lv[L].r_max, r.lv[L].r_max, "%s level %d", name, L);
      cr_assert(g.lv[L].flops == r.lv[L].flops, "%s level %d", name, L);
      if (r.lv[L].q_max > qmax) qmax = r.lv[L].q_max;
    }
    free(g.x);
    free(r.x);
  }
  return qmax;
}

static void open_both(fea_context **gpu, fea_context **ref) {
  *gpu = open_gpu();
  *ref = open_ref();
}

static void close_both(fea_context **gpu, fea_context **ref) {
  OK(fea_context_destroy(gpu));
  OK(fea_context_destroy(ref));
}

Test(cuda_multifrontal, match_ref_1d, .timeout = 600) {
  fea_context *gpu, *ref;
  open_both(&gpu, &ref);
  for (int p = 1; p <= 5; p++) {
    const fea_index ns[] = {1, 2, p, 2 * p + 3, 17, 24, 61};
    for (int i = 0; i < 7; i++)
      for (int rep = 0; rep <= 1; rep++) {
        multifrontal_case c = {1, {p, 0, 0}, {ns[i], 1, 1}, rep};
        check_case(gpu, ref, &c, rep, rep);
      }
  }
  close_both(&gpu, &ref);
}

Test(cuda_multifrontal, match_ref_2d, .timeout = 600) {
  fea_context *gpu, *ref;
  open_both(&gpu, &ref);
  for (int p = 1; p <= 5; p++) {
    const fea_index ns[][2] = {{1, 1}, {2, 3}, {7, 6}, {12, 13}, {23, 17}};
    for (int i = 0; i < 5; i++) {
      multifrontal_case c = {2, {p, p, 0}, {ns[i][0], ns[i][1], 1}, 0};
      check_case(gpu, ref, &c, i % 2, i >= 2);
    }
    multifrontal_case r = {2, {p, p, 0}, {11, 9, 1}, 1};
    check_case(gpu, ref, &r, 1, 0);
  }
  multifrontal_case mixed = {2, {1, 3, 0}, {14, 9, 1}, 0};
  check_case(gpu, ref, &mixed, 1, 1);
  multifrontal_case mixed2 = {2, {4, 2, 0}, {10, 17, 1}, 1};
  check_case(gpu, ref, &mixed2, 1, 0);
  close_both(&gpu, &ref);
}

Test(cuda_multifrontal, match_ref_3d, .timeout = 600) {
  fea_context *gpu, *ref;
  open_both(&gpu, &ref);
  for (int p = 1; p <= 3; p++) {
    multifrontal_case c = {3, {p, p, p}, {4, 5, 3}, 0};
    check_case(gpu, ref, &c, 1, 0);
    multifrontal_case e = {3, {p, p, p}, {2 * (p + 1), 2 * (p + 1), 2 * (p + 1)}, 0};
    check_case(gpu, ref, &e, 0, 1);
    multifrontal_case r = {3, {p, p, p}, {7, 6, 5}, 1};
    check_case(gpu, ref, &r, 1, 1);
  }
  for (int p = 4; p <= 5; p++) {
    multifrontal_case c = {3, {p, p, p}, {4, 3, 5}, 0};
    check_case(gpu, ref, &c, 1, 1);
    multifrontal_case r = {3, {p, p, p}, {4, 4, 3}, 1};
    check_case(gpu, ref, &r, 0, 0);
  }
  multifrontal_case mixed = {3, {1, 2, 3}, {5, 7, 6}, 1};
  check_case(gpu, ref, &mixed, 1, 0);
  close_both(&gpu, &ref);
}

/* Fronts with q > 64 go through cuSOLVER Xpotrf and cuBLAS trsm/syrk; these
 * cases have some (and many small ones below them). */
Test(cuda_multifrontal, large_fronts, .timeout = 600) {
  fea_context *gpu, *ref;
  open_both(&gpu, &ref);
  multifrontal_case c2 = {2, {3, 3, 0}, {45, 38, 1}, 0};
  fea_index q2 = check_case(gpu, ref, &c2, 1, 1);
  cr_assert(q2 > 64, "2D case: largest q is %lld, the large-front path did not run", (long long)q2);
  multifrontal_case c3 = {3, {2, 2, 2}, {9, 8, 10}, 0};
  fea_index q3 = check_case(gpu, ref, &c3, 1, 0);
  cr_assert(q3 > 64, "3D case: largest q is %lld", (long long)q3);
  multifrontal_case c5 = {2, {5, 5, 0}, {30, 26, 1}, 1};
  check_case(gpu, ref, &c5, 0, 1);
  close_both(&gpu, &ref);
}

/* Several right-hand sides at once: each column equals /cpu/ref's and the
 * GPU's own single solve. */
Test(cuda_multifrontal, many_rhs, .timeout = 300) {
  fea_context *ctx[2];
  open_both(&ctx[0], &ctx[1]);
  multifrontal_case c = {2, {2, 2, 0}, {19, 16, 1}, 0};
  const int dim = 2;
  const fea_index nrhs = 5;
  double *x[2] = {NULL, NULL};
  fea_index nf = 0, ld = 0;
  double *b = NULL;
  for (int k = 0; k < 2; k++) {
    fea_space *s = make_space(ctx[k], &c);
    fea_problem *pb = make_problem(s, &dim, 0, 0);
    OK(fea_problem_get_num_free_dofs(pb, &nf));
    ld = nf + 3;
    if (!b) {
      b = malloc((size_t)(ld * nrhs) * sizeof *b);
      cr_assert_not_null(b);
      for (fea_index i = 0; i < ld * nrhs; i++) b[i] = sin(0.37 * (double)i) + (double)(i % 7);
    }
    fea_solver *sv = NULL;
    OK(fea_solver_create_multifrontal(ctx[k], s, pb, NULL, &sv));
    OK(fea_solver_setup(sv));
    x[k] = malloc((size_t)(ld * nrhs) * sizeof *x[k]);
    cr_assert_not_null(x[k]);
    OK(fea_solver_solve(sv, nrhs, b, ld, x[k], ld));
    if (k == 0) {
      double *one = malloc((size_t)nf * sizeof *one);
      cr_assert_not_null(one);
      for (fea_index j = 0; j < nrhs; j++) {
        OK(fea_solver_solve(sv, 1, b + j * ld, nf, one, nf));
        double diff = max_rel_diff(x[0] + j * ld, one, nf);
        cr_assert(diff <= 1e-12, "column %lld differs from its single GPU solve by %.3g",
                  (long long)j, diff);
      }
      free(one);
    }
    OK(fea_solver_destroy(&sv));
    OK(fea_problem_destroy(&pb));
    OK(fea_space_destroy(&s));
  }
  for (fea_index j = 0; j < nrhs; j++) {
    double diff = max_rel_diff(x[0] + j * ld, x[1] + j * ld, nf);
    cr_assert(diff <= TOL, "column %lld: /gpu/cuda differs from /cpu/ref by %.3g", (long long)j,
              diff);
  }
  free(b);
  free(x[0]);
  free(x[1]);
  close_both(&ctx[0], &ctx[1]);
}

/* keep_boundary: the boundary Schur complement comes back to the host and
 * equals /cpu/ref's; the solve is still the Dirichlet problem's. */
static void check_schur(fea_context *gpu, fea_context *ref, const multifrontal_case *c) {
  fea_context *ctx[2] = {gpu, ref};
  double *S[2] = {NULL, NULL}, *x[2] = {NULL, NULL};
  fea_index *dofs[2] = {NULL, NULL}, n[2] = {0, 0}, nf = 0;
  const int dim = c->dim;
  for (int k = 0; k < 2; k++) {
    fea_space *s = make_space(ctx[k], c);
    fea_problem *pb = make_problem(s, &dim, 1, 1);
    OK(fea_problem_get_num_free_dofs(pb, &nf));
    fea_solver_desc d = FEA_SOLVER_DESC_INIT;
    d.keep_boundary = 1;
    fea_solver *sv = NULL;
    OK(fea_solver_create_multifrontal(ctx[k], s, pb, &d, &sv));
    OK(fea_solver_setup(sv));
    OK(fea_solver_get_boundary_schur(sv, 0, NULL, NULL, &n[k]));
    dofs[k] = malloc((size_t)(n[k] + 1) * sizeof *dofs[k]);
    S[k] = malloc((size_t)(n[k] * n[k] + 1) * sizeof *S[k]);
    x[k] = calloc((size_t)(nf + 1), sizeof *x[k]);
    cr_assert(dofs[k] && S[k] && x[k]);
    OK(fea_solver_get_boundary_schur(sv, n[k], dofs[k], S[k], &n[k]));
    OK(fea_solver_solve(sv, 1, NULL, 0, x[k], nf > 0 ? nf : 1));
    OK(fea_solver_destroy(&sv));
    OK(fea_problem_destroy(&pb));
    OK(fea_space_destroy(&s));
  }
  cr_assert_eq(n[0], n[1]);
  double diff = 0, smax = 0;
  for (fea_index i = 0; i < n[0]; i++) cr_assert_eq(dofs[0][i], dofs[1][i]);
  for (fea_index i = 0; i < n[0] * n[0]; i++) {
    diff = fmax(diff, fabs(S[0][i] - S[1][i]));
    smax = fmax(smax, fabs(S[1][i]));
  }
  cr_assert(diff <= TOL * smax, "dim %d: S differs from /cpu/ref's by %.3g (max %.3g)", c->dim,
            diff, smax);
  double xd = max_rel_diff(x[0], x[1], nf);
  cr_assert(xd <= TOL, "dim %d: keep_boundary solve differs by %.3g", c->dim, xd);
  for (int k = 0; k < 2; k++) {
    free(S[k]);
    free(x[k]);
    free(dofs[k]);
  }
}

Test(cuda_multifrontal, boundary_schur, .timeout = 300) {
  fea_context *gpu, *ref;
  open_both(&gpu, &ref);
  multifrontal_case c1 = {1, {3, 0, 0}, {11, 1, 1}, 0};
  check_schur(gpu, ref, &c1);
  multifrontal_case c2 = {2, {2, 3, 0}, {9, 8, 1}, 0};
  check_schur(gpu, ref, &c2);
  multifrontal_case c3 = {2, {3, 3, 0}, {10, 9, 1}, 1};
  check_schur(gpu, ref, &c3);
  multifrontal_case c4 = {3, {2, 2, 2}, {3, 4, 3}, 0};
  check_schur(gpu, ref, &c4);
  close_both(&gpu, &ref);
}

/* A new problem on the same solver: setup runs again (release, alloc) and
 * gives the new solution. */
Test(cuda_multifrontal, set_problem, .timeout = 300) {
  fea_context *gpu, *ref;
  open_both(&gpu, &ref);
  multifrontal_case c = {2, {2, 2, 0}, {13, 10, 1}, 0};
  const int dim = 2;
  fea_context *ctx[2] = {gpu, ref};
  double *x[2];
  fea_index nf = 0;
  for (int k = 0; k < 2; k++) {
    fea_space *s = make_space(ctx[k], &c);
    fea_problem *pb1 = make_problem(s, &dim, 1, 0), *pb2 = make_problem(s, &dim, 1, 1);
    OK(fea_problem_get_num_free_dofs(pb2, &nf));
    fea_solver *sv = NULL;
    OK(fea_solver_create_multifrontal(ctx[k], s, pb1, NULL, &sv));
    OK(fea_solver_setup(sv));
    OK(fea_solver_setup(sv)); /* twice: the first factor is released */
    OK(fea_solver_set_problem(sv, pb2));
    OK(fea_solver_setup(sv));
    x[k] = calloc((size_t)nf, sizeof *x[k]);
    cr_assert_not_null(x[k]);
    OK(fea_solver_solve(sv, 1, NULL, 0, x[k], nf));
    OK(fea_solver_destroy(&sv));
    OK(fea_problem_destroy(&pb1));
    OK(fea_problem_destroy(&pb2));
    OK(fea_space_destroy(&s));
  }
  double diff = max_rel_diff(x[0], x[1], nf);
  cr_assert(diff <= TOL, "after set_problem: /gpu/cuda differs from /cpu/ref by %.3g", diff);
  free(x[0]);
  free(x[1]);
  close_both(&gpu, &ref);
}

/* A failure inside the leaves' integration (sigma < 0 at a quadrature point)
 * gives /cpu/ref's status and names a tree node; the context stays usable. */
Test(cuda_multifrontal, integration_error, .timeout = 120) {
  fea_context *gpu, *ref;
  open_both(&gpu, &ref);
  multifrontal_case c = {2, {2, 2, 0}, {8, 8, 1}, 0};
  fea_context *ctx[2] = {gpu, ref};
  fea_status got[2];
  for (int k = 0; k < 2; k++) {
    fea_space *s = make_space(ctx[k], &c);
    fea_problem_desc pd = FEA_PROBLEM_DESC_INIT;
    pd.sigma_fn = negative_sigma;
    fea_problem *pb = NULL;
    OK(fea_problem_create_poisson(s, &pd, &pb));
    fea_solver *sv = NULL;
    OK(fea_solver_create_multifrontal(ctx[k], s, pb, NULL, &sv));
    got[k] = fea_solver_setup(sv);
    cr_assert(got[k] < 0, "setup with sigma < 0 succeeded on context %d", k);
    cr_assert(strstr(fea_context_last_error(ctx[k]), "tree node") != NULL, "message: %s",
              fea_context_last_error(ctx[k]));
    OK(fea_solver_destroy(&sv));
    OK(fea_problem_destroy(&pb));
    OK(fea_space_destroy(&s));
  }
  cr_assert_eq(got[0], got[1], "/gpu/cuda returned %s, /cpu/ref %s", fea_status_string(got[0]),
               fea_status_string(got[1]));
  /* Still usable afterwards. */
  multifrontal_case ok = {2, {2, 2, 0}, {8, 8, 1}, 0};
  check_case(gpu, ref, &ok, 1, 0);
  close_both(&gpu, &ref);
}
