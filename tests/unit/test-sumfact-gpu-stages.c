/* The GPU sum-factorization kernel's stages (cuda/kernels/sumfact-stages.h)
 * run on the host, so that their arithmetic and indexing are checked on
 * machines without a GPU. emulate() plays one thread block as
 * cuda/kernels/sumfact.cu does: every simulated thread of an element goes
 * through a stage before any starts the next (the barriers), once in thread
 * order and once in reverse order (a stage that read what another thread
 * of the same stage writes would differ), with the shared arrays poisoned
 * with NaN first (a read of an unwritten entry shows).
 *
 * - per element, against K_e x_e of the forms (fea_problem_element_system):
 *   Lagrange Q1..Q6 (the spaces' range) and B-splines p = 1..8 with uniform
 *   and uneven knots (tables per span), in 1D, 2D and 3D;
 * - the whole product on free-DoF vectors (the kernel's row table, Dirichlet
 *   rows -1) against the CPU operator, element order shuffled as colors and
 *   atomics leave it. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>
#include <feaccel.h>

#include "../../cuda/kernels/sumfact-stages.h"
#include "matfree/matfree-kernel.h"
#include "disc/problem.h"
#include "disc/space.h"
#include "matfree/sumfact/sumfact.h"

static fea_context *ctx;
static void setup(void) { cr_assert_eq(fea_context_create("/cpu/ref", &ctx), FEA_SUCCESS); }
static void teardown(void) { fea_context_destroy(&ctx); }

static uint64_t rng_state;
static double urand(void) { /* xorshift64*, uniform in [-1, 1) */
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return 2.0 * (double)((rng_state * 0x2545f4914f6cdd1dull) >> 11) * 0x1p-53 - 1.0;
}

#define MAX_T (SFG_MAX_N * SFG_MAX_N) /* threads per element */
#define MAX_SHARED (2 * SFG_MAX_N * SFG_MAX_N * SFG_MAX_N)

/* Element e through the stages, its line results in v[lt][i]; reverse: the
 * simulated threads of each stage in reverse order. */
static void emulate(const fea_sf_gpu_params *p, int64_t e, const double *x, int reverse,
                    double v[MAX_T][SFG_MAX_N]) {
  const int n = p->n, dim = p->dim, T = fea_sf_gpu_threads_per_element(dim, n);
  static double X[MAX_SHARED];
  static double a[MAX_T][SFG_MAX_N], b[MAX_T][SFG_MAX_N];
  static fea_sf_gpu_element el[MAX_T];
  const int shared = fea_sf_gpu_shared_per_element(dim, n);
  cr_assert_leq(shared, MAX_SHARED);
  for (int i = 0; i < shared; i++) X[i] = NAN;
  const int *r = p->erow + e * p->nb;
#define EACH_THREAD for (int k = 0, lt = reverse ? T - 1 : 0; k < T; k++, lt += reverse ? -1 : 1)
  EACH_THREAD {
    fea_sf_gpu_element_setup(p, dim, e, &el[lt]);
    fea_sf_gpu_gather(dim, n, lt, r, x, X);
  }
  if (dim == 1) {
    EACH_THREAD fea_sf_gpu_stage_1d(n, lt, &el[lt], X, v[lt]);
  } else if (dim == 2) {
    EACH_THREAD fea_sf_gpu_stage_2d(n, lt, &el[lt], X, v[lt]);
  } else {
    const int n3 = n * n * n;
    EACH_THREAD fea_sf_gpu_stage1_3d(n, lt, &el[lt], X, a[lt], b[lt]);
    EACH_THREAD fea_sf_gpu_store_3d(n, lt, a[lt], b[lt], X, X + n3);
    EACH_THREAD fea_sf_gpu_stage2_3d(n, lt, &el[lt], X, X + n3, v[lt]);
  }
#undef EACH_THREAD
}

/* The kernel's parameters over the CPU kernel's tables (host memory). */
static void params_of(const fea_sf_view *sv, int nb, const int *erow, fea_sf_gpu_params *p) {
  memset(p, 0, sizeof *p);
  p->dim = sv->dim;
  p->n = sv->n[0];
  p->nb = nb;
  p->per_span = sv->per_span;
  p->sigma = sv->sigma;
  p->erow = erow;
  for (int k = 0; k < sv->dim; k++) {
    cr_assert_eq(sv->n[k], sv->n[0], "the kernel needs one n in every direction");
    p->nel[k] = sv->nel[k];
    p->tab[k] = sv->tab[k];
    p->len[k] = sv->len[k];
  }
}

/* Per element: the stages' K_e x_e against the forms', x_e of the element's
 * own (distinct rows, as if every DoF were free and unshared). */
static void check_elements(const fea_problem *pb, const fea_sf_gpu_params *p0) {
  const fea_space *sp = pb->space;
  const fea_index ne = sp->num_elements;
  const int nb = sp->dofs_per_element;
  int *erow = malloc((size_t)ne * nb * sizeof *erow);
  double *x = malloc((size_t)ne * nb * sizeof *x), *K = malloc((size_t)nb * nb * sizeof *K);
  for (fea_index k = 0; k < ne * nb; k++) erow[k] = (int)k, x[k] = urand();
  fea_sf_gpu_params p = *p0;
  p.erow = erow;
  static double v[MAX_T][SFG_MAX_N], w[MAX_T][SFG_MAX_N];
  const int T = fea_sf_gpu_threads_per_element(p.dim, p.n), L = fea_sf_gpu_line(p.dim, p.n);
  for (fea_index e = 0; e < ne; e++) {
    cr_assert_eq(fea_problem_element_system(pb, e, K, NULL), FEA_SUCCESS);
    emulate(&p, e, x, 0, v);
    emulate(&p, e, x, 1, w);
    for (int lt = 0; lt < T; lt++)
      for (int i = 0; i < L; i++) {
        const int d = fea_sf_gpu_local_dof(p.dim, p.n, lt, i);
        double ref = 0.0, scale = 0.0;
        for (int j = 0; j < nb; j++) {
          ref += K[d * nb + j] * x[e * nb + j];
          scale += fabs(K[d * nb + j] * x[e * nb + j]);
        }
        cr_assert(fabs(v[lt][i] - ref) <= 1e-13 * scale,
                  "%dD n=%d element %lld DoF %d: %.17g, the forms %.17g", p.dim, p.n, (long long)e,
                  d, v[lt][i], ref);
        cr_assert(v[lt][i] == w[lt][i], "%dD n=%d element %lld DoF %d: thread order matters", p.dim,
                  p.n, (long long)e, d);
      }
  }
  free(erow), free(x), free(K);
}

/* The whole product on free-DoF vectors, elements in a shuffled order,
 * against the CPU operator's. */
static void check_product(const fea_problem *pb, const fea_sf_gpu_params *p0) {
  const fea_space *sp = pb->space;
  const fea_index ne = sp->num_elements, nf = pb->num_free;
  const int nb = sp->dofs_per_element;
  int *erow = malloc((size_t)ne * nb * sizeof *erow);
  fea_index *dofs = malloc((size_t)nb * sizeof *dofs), *order = malloc((size_t)ne * sizeof *order);
  int dirichlet = 0;
  for (fea_index e = 0; e < ne; e++) {
    cr_assert_eq(fea_space_get_element_dofs(sp, e, dofs), FEA_SUCCESS);
    for (int i = 0; i < nb; i++) {
      erow[e * nb + i] = (int)pb->free_index[dofs[i]];
      dirichlet |= erow[e * nb + i] < 0;
    }
    order[e] = e;
  }
  cr_assert(dirichlet, "the case should have Dirichlet DoFs");
  for (fea_index e = ne - 1; e > 0; e--) { /* Fisher-Yates */
    fea_index j = (fea_index)((urand() + 1.0) * 0.5 * (double)(e + 1));
    if (j > e) j = e;
    fea_index t = order[e];
    order[e] = order[j], order[j] = t;
  }
  double *x = malloc((size_t)nf * sizeof *x), *y = calloc((size_t)nf, sizeof *y);
  double *ref = malloc((size_t)nf * sizeof *ref);
  for (fea_index i = 0; i < nf; i++) x[i] = urand();
  fea_sf_gpu_params p = *p0;
  p.erow = erow;
  static double v[MAX_T][SFG_MAX_N];
  const int T = fea_sf_gpu_threads_per_element(p.dim, p.n), L = fea_sf_gpu_line(p.dim, p.n);
  for (fea_index t = 0; t < ne; t++) {
    const fea_index e = order[t];
    emulate(&p, e, x, (int)(t & 1), v);
    for (int lt = 0; lt < T; lt++) /* the kernel's scatter */
      for (int i = 0; i < L; i++) {
        const int row = erow[e * nb + fea_sf_gpu_local_dof(p.dim, p.n, lt, i)];
        if (row >= 0) y[row] += v[lt][i];
      }
  }
  fea_operator_desc d = FEA_OPERATOR_DESC_INIT;
  d.kind = FEA_OPERATOR_CSR;
  fea_operator *op = NULL;
  fea_vector *vx = NULL, *vy = NULL;
  cr_assert_eq(fea_operator_create(ctx, pb, &d, &op), FEA_SUCCESS, "%s",
               fea_context_last_error(ctx));
  cr_assert_eq(fea_vector_create(ctx, nf, FEA_F64, &vx), FEA_SUCCESS);
  cr_assert_eq(fea_vector_create(ctx, nf, FEA_F64, &vy), FEA_SUCCESS);
  cr_assert_eq(fea_vector_write(vx, nf, FEA_F64, x), FEA_SUCCESS);
  cr_assert_eq(fea_operator_apply(op, vx, vy), FEA_SUCCESS);
  cr_assert_eq(fea_vector_read(vy, nf, FEA_F64, ref), FEA_SUCCESS);
  double num = 0.0, den = 0.0;
  for (fea_index i = 0; i < nf; i++) {
    num = fmax(num, fabs(y[i] - ref[i]));
    den = fmax(den, fabs(ref[i]));
  }
  cr_assert(num <= 1e-12 * den, "%dD n=%d: |y - A x|_max %.3g of %.3g", p.dim, p.n, num, den);
  fea_vector_destroy(&vx), fea_vector_destroy(&vy);
  fea_operator_destroy(&op);
  free(erow), free(dofs), free(order), free(x), free(y), free(ref);
}

static void check_problem(const fea_problem *pb) {
  void *st = NULL;
  cr_assert_eq(fea_sf_create_with(pb, NULL, 0, &st), FEA_SUCCESS, "%s",
               fea_context_last_error(ctx));
  fea_sf_view sv;
  fea_matfree_sumfact_view(st, &sv);
  fea_sf_gpu_params p;
  params_of(&sv, pb->space->dofs_per_element, NULL, &p);
  rng_state = 0x9e3779b97f4a7c15ull + (uint64_t)(p.dim * 16 + p.n);
  check_elements(pb, &p);
  check_product(pb, &p);
  fea_matfree_kernel_sumfact.destroy(st);
}

static fea_problem *poisson(fea_space *s, double sigma) {
  fea_problem_desc pd = FEA_PROBLEM_DESC_INIT;
  pd.sigma = sigma;
  fea_problem *pb = NULL;
  cr_assert_eq(fea_problem_create_poisson(s, &pd, &pb), FEA_SUCCESS, "%s",
               fea_context_last_error(ctx));
  return pb;
}

/* A box of 2 x 3 x 2 cells, not the unit cube: every c_k differs. */
static void lagrange_case(int dim, int order) {
  fea_mesh_desc md = FEA_MESH_DESC_INIT;
  md.dim = dim;
  for (int k = 0; k < dim; k++) {
    md.n[k] = 2 + (k == 1);
    md.lower[k] = 0.25 * k - 1.0;
    md.upper[k] = md.lower[k] + 0.5 + 0.8 * k;
  }
  fea_mesh *m = NULL;
  fea_space *s = NULL;
  cr_assert_eq(fea_mesh_create_structured(ctx, &md, &m), FEA_SUCCESS);
  cr_assert_eq(fea_space_create_lagrange(m, order, FEA_NODES_EQUISPACED, &s), FEA_SUCCESS, "%s",
               fea_context_last_error(ctx));
  fea_problem *pb = poisson(s, 0.6);
  check_problem(pb);
  fea_problem_destroy(&pb);
  fea_space_destroy(&s);
  fea_mesh_destroy(&m);
}

/* Uneven interior knots in direction 0 (per-span tables differ), a doubled
 * knot for p >= 2. */
static void bspline_case(int dim, int p, int nonuniform) {
  static const double inner[] = {0.13, 0.4, 0.4, 0.77};
  fea_bspline_desc bd = FEA_BSPLINE_DESC_INIT;
  double t[32];
  bd.dim = dim;
  for (int k = 0; k < dim; k++) {
    bd.degree[k] = p;
    bd.n[k] = (dim == 3 && p > 4 ? 1 : 2) + (k == 1);
    bd.lower[k] = -0.5 * k;
    bd.upper[k] = 1.0 + 0.75 * k;
  }
  if (nonuniform) {
    int m = 0;
    for (int i = 0; i <= p; i++) t[m++] = 0.0;
    for (int i = 0; i < 4; i++)
      if (i != 2 || p >= 2) t[m++] = inner[i];
    for (int i = 0; i <= p; i++) t[m++] = 1.0;
    bd.num_knots[0] = m;
    bd.knots[0] = t;
  }
  fea_space *s = NULL;
  cr_assert_eq(fea_space_create_bspline(ctx, &bd, &s), FEA_SUCCESS, "%s",
               fea_context_last_error(ctx));
  fea_problem *pb = poisson(s, 1.7);
  check_problem(pb);
  fea_problem_destroy(&pb);
  fea_space_destroy(&s);
}

TestSuite(sumfact_gpu_stages, .init = setup, .fini = teardown, .timeout = 300);

/* The Lagrange spaces go to Q6; Q7 and Q8 sizes are the B-splines' below. */
Test(sumfact_gpu_stages, lagrange_q1_to_q6_1d_2d) {
  for (int dim = 1; dim <= 2; dim++)
    for (int q = 1; q <= 6; q++) lagrange_case(dim, q);
}

Test(sumfact_gpu_stages, lagrange_q1_to_q6_3d) {
  for (int q = 1; q <= 6; q++) lagrange_case(3, q);
}

Test(sumfact_gpu_stages, bspline_p1_to_p8_uniform_and_uneven_knots) {
  for (int dim = 1; dim <= 3; dim++)
    for (int p = 1; p <= 8; p++) {
      bspline_case(dim, p, 0);
      if (dim < 3 || p <= 3) bspline_case(dim, p, 1);
    }
}
