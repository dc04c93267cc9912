/* The Kronecker operator of mapped patches (src/matfree/kron/kron-mapped.c)
 * against the assembled matrix of the same problem
 * (fea_problem_assemble_reference): y = A x, y += A x and diag(A) for every
 * instruction set this CPU runs and one and three threads, on the exact
 * NURBS quarter annulus and thick ring (separable: one term per diagonal
 * coefficient), on bilinear and trilinear B-spline maps whose coefficients
 * need several terms, with a reaction term and Neumann sides; the cross
 * approximation on matrices of known rank; the problems it must leave to
 * the element-wise kernels; and through the public operator, the kernel
 * that AUTO picks. */
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
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static double urand(void) { /* xorshift64*, uniform in [-1, 1) */
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return 2.0 * (double)((rng_state * 0x2545f4914f6cdd1dull) >> 11) * 0x1p-53 - 1.0;
}

static void setup(void) { cr_assert_eq(fea_context_create("/cpu/ref", &ctx), FEA_SUCCESS); }
static void teardown(void) { fea_context_destroy(&ctx); }

TestSuite(kron_mapped, .init = setup, .fini = teardown, .timeout = 300);

/* Geometries: 0 the quarter annulus / thick quarter ring (NURBS, exact),
 * 1 a bilinear (2D) or trilinear (3D) B-spline map that is not separable,
 * 2 the annulus with weights that are not a product (refused). */
typedef struct geo {
  double k1[4], k2[6];
  double pts[3 * 12], w[12];
  fea_geometry_desc g;
} geo;

static void make_geo(geo *G, int dim, int kind) {
  static const double kl[4] = {0, 0, 1, 1}, kq[6] = {0, 0, 0, 1, 1, 1};
  memcpy(G->k1, kl, sizeof kl);
  memcpy(G->k2, kq, sizeof kq);
  fea_geometry_desc g = FEA_GEOMETRY_DESC_INIT;
  int i = 0;
  if (kind == 1 || kind == 3) { /* x = xi (1 + eta / 2), y = eta (1 + xi / 4), z = 0.8 zeta
                                 * (kind 3: z = zeta (1 + xi / 3)) */
    for (int c = 0; c < (dim == 3 ? 2 : 1); c++)
      for (int b = 0; b < 2; b++)
        for (int a = 0; a < 2; a++, i++) {
          G->pts[i * dim + 0] = a * (1 + 0.5 * b);
          G->pts[i * dim + 1] = b * (1 + 0.25 * a);
          if (dim == 3) G->pts[i * dim + 2] = kind == 3 ? c * (1 + a / 3.0) : 0.8 * c;
        }
    for (int k = 0; k < 3; k++) g.degree[k] = 1, g.knots[k] = G->k1, g.num_knots[k] = 4;
    g.weights = NULL;
  } else {
    const double arc[3][2] = {{1, 0}, {1, 1}, {0, 1}}, w[3] = {1, 1 / sqrt(2.0), 1};
    for (int c = 0; c < (dim == 3 ? 2 : 1); c++)
      for (int b = 0; b < 3; b++)
        for (int a = 0; a < 2; a++, i++) {
          const double r = 1.0 + a;
          G->pts[i * dim + 0] = r * arc[b][0];
          G->pts[i * dim + 1] = r * arc[b][1];
          if (dim == 3) G->pts[i * dim + 2] = 0.8 * c;
          /* kind 2: the middle weight of the outer arc off the product */
          G->w[i] = w[b] * (kind == 2 && a == 1 && b == 1 ? 1.1 : 1.0);
        }
    g.degree[0] = 1, g.degree[1] = 2, g.degree[2] = 1;
    g.knots[0] = G->k1, g.num_knots[0] = 4;
    g.knots[1] = G->k2, g.num_knots[1] = 6;
    g.knots[2] = G->k1, g.num_knots[2] = 4;
    g.weights = G->w;
  }
  g.control_points = G->pts;
  g.num_control_points = i;
  G->g = g;
}

static fea_space *mapped_space(int dim, int p, const fea_index n[3], geo *G) {
  fea_bspline_desc bd = FEA_BSPLINE_DESC_INIT;
  bd.dim = dim;
  for (int k = 0; k < dim; k++) bd.degree[k] = p, bd.n[k] = n[k];
  bd.geometry = &G->g;
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
static void check_block(const fea_kron_mapped *s, const fea_matrix *A, const char *what) {
  fea_index rows[24];
  int m = 0;
  for (fea_index i = 1; i < A->rows && m < 24; i += 3) rows[m++] = i;
  double M[24 * 24], big = 0;
  fea_kron_mapped_block(s, rows, m, M);
  for (int a = 0; a < m; a++) big = fmax(big, fabs(entry(A, rows[a], rows[a])));
  for (int a = 0; a < m; a++)
    for (int b = 0; b < m; b++)
      cr_assert(fabs(M[a + b * m] - entry(A, rows[a], rows[b])) <= 1e-11 * big,
                "%s: block (%lld, %lld) = %.17g, A = %.17g", what, (long long)rows[a],
                (long long)rows[b], M[a + b * m], entry(A, rows[a], rows[b]));
}

/* Every ISA's apply, apply-add and diagonal against the assembled matrix;
 * the number of terms the state has. */
static int check(const fea_problem *pb, const char *what) {
  char why[200] = "";
  cr_assert(fea_kron_mapped_supports(pb, why, sizeof why), "%s: %s", what, why);
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
  int ran = 0, terms = 0;
  for (int v = 0; v < 3; v++)
    for (int threads = 1; threads <= 3; threads += 2) {
      fea_kron_mapped *s;
      fea_status st = fea_kron_mapped_create_with(pb, isas[v], threads, why, sizeof why, &s);
      if (st == FEA_ERR_UNSUPPORTED && !fea_kron_find_isa(isas[v])) continue; /* not this CPU */
      cr_assert_eq(st, FEA_SUCCESS, "%s: %s %s", what, fea_context_last_error(ctx), why);
      cr_assert_eq(s->num_free, n);
      cr_assert(s->rank_error <= 3e-12, "%s: rank error %g", what, s->rank_error);
      terms = s->nterms;
      ran++;
      for (int add = 0; add < 2; add++) {
        for (fea_index i = 0; i < n; i++) y[i] = add ? 0.5 * y0[i] : NAN;
        s->isa->mapped(s, x, y, add, threads);
        for (fea_index i = 0; i < n; i++) {
          const double want = add ? 1.5 * y0[i] : y0[i];
          cr_assert(fabs(y[i] - want) <= 1e-11 * scale,
                    "%s, %s, %d threads, add %d: y[%lld] = %.17g, A x = %.17g", what, isas[v],
                    threads, add, (long long)i, y[i], want);
        }
      }
      /* the right-hand side: load and lifting as the reference's */
      double *bk = malloc((size_t)n * sizeof *bk + 8), bscale = 0;
      cr_assert_eq(fea_kron_mapped_rhs(pb, s, threads, bk), FEA_SUCCESS, "%s: %s", what,
                   fea_context_last_error(ctx));
      for (fea_index i = 0; i < n; i++) bscale = fmax(bscale, fabs(b[i]));
      for (fea_index i = 0; i < n; i++)
        cr_assert(fabs(bk[i] - b[i]) <= 1e-12 * bscale, "%s: b[%lld] = %.17g, reference %.17g",
                  what, (long long)i, bk[i], b[i]);
      free(bk);
      check_block(s, A, what);
      fea_kron_mapped_diagonal(s, d);
      for (fea_index i = 0; i < n; i++) {
        double aii = 0;
        for (fea_index k = A->row_ptr[i]; k < A->row_ptr[i + 1]; k++)
          if (A->col_idx[k] == i) aii = A->values[k];
        cr_assert(fabs(d[i] - aii) <= 1e-11 * fabs(aii), "%s: diag[%lld] = %.17g, A_ii = %.17g",
                  what, (long long)i, d[i], aii);
      }
      fea_kron_mapped_destroy(s);
    }
  cr_assert(ran >= 2, "the baseline kernels always run");
  fea_matrix_destroy(&A);
  free(b), free(x), free(y0), free(y), free(d);
  return terms;
}

/* f and g of the cases, x[2] only in 3D (user: the dimension) */
static double load(const double *x, void *user) {
  const double z = *(const int *)user == 3 ? x[2] : 0.3;
  return sin(3 * x[0]) + x[1] * z + 1.0;
}
static double lift(const double *x, void *user) {
  const double z = *(const int *)user == 3 ? x[2] : 0.3;
  return x[0] * x[1] + cos(z) + 0.5;
}

static int run_case(int dim, int p, int kind, double reaction, int neumann) {
  const fea_index n[3] = {5 + 2 * (dim < 3), 6 + 2 * (dim < 3), 4};
  geo G;
  make_geo(&G, dim, kind);
  fea_space *s = mapped_space(dim, p, n, &G);
  fea_problem_desc pd = FEA_PROBLEM_DESC_INIT;
  pd.sigma = 2.5;
  pd.reaction = reaction;
  static int dims;
  dims = dim;
  pd.source = load;
  pd.source_user = &dims;
  pd.dirichlet = lift;
  pd.dirichlet_user = &dims;
  if (neumann) /* the outer arc (high end of direction 0) and one straight side */
    pd.sides[1].type = pd.sides[2].type = FEA_BC_NEUMANN;
  fea_problem *pb;
  cr_assert_eq(fea_problem_create_poisson(s, &pd, &pb), FEA_SUCCESS, "%s",
               fea_context_last_error(ctx));
  char what[96];
  snprintf(what, sizeof what, "%dD p = %d, %s%s%s", dim, p, kind ? "bilinear map" : "ring",
           reaction != 0 ? ", reaction" : "", neumann ? ", Neumann sides" : "");
  const int terms = check(pb, what);
  fea_problem_destroy(&pb);
  fea_space_destroy(&s);
  return terms;
}

Test(kron_mapped, the_ring_is_one_term_per_derivative_and_equals_the_assembled_matrix) {
  for (int dim = 2; dim <= 3; dim++)
    for (int p = 2; p <= 4; p++) {
      /* G is diagonal with rank-one entries on the polar map: dim terms */
      cr_assert_eq(run_case(dim, p, 0, 0.0, 0), dim, "%dD p = %d", dim, p);
      /* c det J is one more; its value-value terms */
      if (p == 3) cr_assert_eq(run_case(dim, p, 0, 0.7, 1), dim + 1, "%dD reaction", dim);
    }
}

Test(kron_mapped, a_map_that_is_not_separable_takes_more_terms_and_stays_exact) {
  for (int dim = 2; dim <= 3; dim++)
    for (int p = 1; p <= 3; p++) {
      const int terms = run_case(dim, p, 1, p == 2 ? 0.3 : 0.0, p == 3);
      cr_assert(terms > dim, "%dD p = %d: %d terms", dim, p, terms);
      cr_log_info("%dD p = %d: %d terms", dim, p, terms);
    }
}

Test(kron_mapped, one_d) {
  fea_geometry_desc g = FEA_GEOMETRY_DESC_INIT;
  static const double kq[6] = {0, 0, 0, 1, 1, 1}, pts[3] = {0.0, 0.3, 2.0};
  g.degree[0] = 2, g.knots[0] = kq, g.num_knots[0] = 6;
  g.control_points = pts, g.num_control_points = 3;
  fea_bspline_desc bd = FEA_BSPLINE_DESC_INIT;
  bd.dim = 1, bd.degree[0] = 3, bd.n[0] = 9, bd.geometry = &g;
  fea_space *s;
  cr_assert_eq(fea_space_create_bspline(ctx, &bd, &s), FEA_SUCCESS, "%s",
               fea_context_last_error(ctx));
  fea_problem_desc pd = FEA_PROBLEM_DESC_INIT;
  pd.reaction = 1.5;
  fea_problem *pb;
  cr_assert_eq(fea_problem_create_poisson(s, &pd, &pb), FEA_SUCCESS);
  check(pb, "1D graded map with a reaction");
  fea_problem_destroy(&pb);
  fea_space_destroy(&s);
}

Test(kron_mapped, cross_approximation_finds_the_rank) {
  enum { M = 23, N = 31, R = 3 };
  double A[M * N], T[M * N], U[8 * M], V[8 * N], err;
  for (int j = 0; j < N; j++)
    for (int i = 0; i < M; i++) {
      double v = 0;
      for (int r = 0; r < R; r++) v += cos((r + 1) * 0.3 * i) * exp(-0.1 * r * j) * (r + 1);
      A[j * M + i] = v;
    }
  memcpy(T, A, sizeof A);
  cr_assert_eq(fea_kron_cross_approx(T, M, N, 1e-12, 8, 2, U, V, &err), R);
  cr_assert(err <= 1e-12);
  for (int j = 0; j < N; j++)
    for (int i = 0; i < M; i++) {
      double v = 0;
      for (int r = 0; r < R; r++) v += U[r * M + i] * V[r * N + j];
      cr_assert(fabs(v - A[j * M + i]) <= 1e-11, "(%d, %d): %g against %g", i, j, v, A[j * M + i]);
    }
  /* rank 3 with a cap of 2: refused, the error said */
  memcpy(T, A, sizeof A);
  cr_assert_eq(fea_kron_cross_approx(T, M, N, 1e-12, 2, 1, U, V, &err), -1);
  cr_assert(err > 1e-12);
  /* a zero matrix has rank 0 */
  memset(T, 0, sizeof T);
  cr_assert_eq(fea_kron_cross_approx(T, M, N, 0.0, 2, 1, U, V, &err), 0);
}

Test(kron_mapped, refusals_name_the_reason) {
  geo G;
  char why[200];
  const fea_index n[3] = {4, 4, 4};
  make_geo(&G, 2, 2);
  fea_space *s = mapped_space(2, 2, n, &G);
  fea_problem_desc pd = FEA_PROBLEM_DESC_INIT;
  fea_problem *pb;
  cr_assert_eq(fea_problem_create_poisson(s, &pd, &pb), FEA_SUCCESS);
  cr_assert_not(fea_kron_mapped_supports(pb, why, sizeof why));
  cr_assert(strstr(why, "weights"), "%s", why);
  fea_problem_destroy(&pb);
  fea_space_destroy(&s);

  /* a trilinear map mixing all three directions: more terms than the cap,
   * the element-wise kernel through the public operator */
  make_geo(&G, 3, 3);
  s = mapped_space(3, 2, n, &G);
  cr_assert_eq(fea_problem_create_poisson(s, &pd, &pb), FEA_SUCCESS);
  cr_assert(fea_kron_mapped_supports(pb, why, sizeof why), "%s", why);
  fea_kron_mapped *km = NULL;
  cr_assert_eq(fea_kron_mapped_create_with(pb, NULL, 1, why, sizeof why, &km), FEA_ERR_UNSUPPORTED);
  cr_assert(strstr(why, "terms"), "%s", why);
  fea_operator_desc od = FEA_OPERATOR_DESC_INIT;
  od.kind = FEA_OPERATOR_MATFREE_SUMFACT;
  fea_operator *op;
  cr_assert_eq(fea_operator_create(ctx, pb, &od, &op), FEA_SUCCESS, "%s",
               fea_context_last_error(ctx));
  fea_operator_info info = FEA_OPERATOR_INFO_INIT;
  cr_assert_eq(fea_operator_get_info(op, &info), FEA_SUCCESS);
  cr_assert_null(strstr(info.kernel, "Kronecker"), "%s", info.kernel);
  fea_operator_destroy(&op);
  fea_problem_destroy(&pb);
  fea_space_destroy(&s);

  /* a Neumann flux (face terms): the element-wise right-hand side serves */
  make_geo(&G, 2, 0);
  s = mapped_space(2, 2, n, &G);
  static int two = 2;
  pd.sides[1].type = FEA_BC_NEUMANN;
  pd.sides[1].flux = load;
  pd.sides[1].flux_user = &two;
  cr_assert_eq(fea_problem_create_poisson(s, &pd, &pb), FEA_SUCCESS, "%s",
               fea_context_last_error(ctx));
  cr_assert_eq(fea_kron_mapped_create_with(pb, NULL, 1, why, sizeof why, &km), FEA_SUCCESS);
  double *bk = malloc((size_t)km->num_free * sizeof *bk);
  cr_assert_eq(fea_kron_mapped_rhs(pb, km, 1, bk), FEA_ERR_UNSUPPORTED);
  free(bk);
  fea_kron_mapped_destroy(km);
  fea_problem_destroy(&pb);
  pd.sides[1] = (fea_problem_desc)FEA_PROBLEM_DESC_INIT.sides[1];
  pd.sides[3].type = FEA_BC_ROBIN;
  pd.sides[3].alpha = 1.0;
  cr_assert_eq(fea_problem_create_poisson(s, &pd, &pb), FEA_SUCCESS, "%s",
               fea_context_last_error(ctx));
  cr_assert_not(fea_kron_mapped_supports(pb, why, sizeof why));
  cr_assert(strstr(why, "Robin"), "%s", why);
  fea_problem_destroy(&pb);
  fea_space_destroy(&s);
}

/* Through the public operator: MATFREE_SUMFACT with AUTO picks the mapped
 * Kronecker operator on the ring, and an explicit STORED keeps the
 * element-wise kernel; both apply the same matrix. */
Test(kron_mapped, the_public_operator_picks_it_by_default) {
  geo G;
  const fea_index n[3] = {6, 7, 3};
  make_geo(&G, 3, 0);
  fea_space *s = mapped_space(3, 2, n, &G);
  fea_problem_desc pd = FEA_PROBLEM_DESC_INIT;
  fea_problem *pb;
  cr_assert_eq(fea_problem_create_poisson(s, &pd, &pb), FEA_SUCCESS);
  fea_index nf;
  cr_assert_eq(fea_problem_get_num_free_dofs(pb, &nf), FEA_SUCCESS);
  double *x = malloc((size_t)nf * sizeof *x), *y1 = malloc((size_t)nf * sizeof *y1),
         *y2 = malloc((size_t)nf * sizeof *y2);
  for (fea_index i = 0; i < nf; i++) x[i] = urand();
  fea_vector *xv, *yv;
  cr_assert_eq(fea_vector_create(ctx, nf, FEA_F64, &xv), FEA_SUCCESS);
  cr_assert_eq(fea_vector_create(ctx, nf, FEA_F64, &yv), FEA_SUCCESS);
  cr_assert_eq(fea_vector_write(xv, nf, FEA_F64, x), FEA_SUCCESS);
  fea_operator_desc od = FEA_OPERATOR_DESC_INIT;
  od.kind = FEA_OPERATOR_MATFREE_SUMFACT;
  fea_operator *op;
  cr_assert_eq(fea_operator_create(ctx, pb, &od, &op), FEA_SUCCESS, "%s",
               fea_context_last_error(ctx));
  fea_operator_info info = FEA_OPERATOR_INFO_INIT;
  cr_assert_eq(fea_operator_get_info(op, &info), FEA_SUCCESS);
  cr_assert(strstr(info.kernel, "Kronecker terms") && strstr(info.kernel, "mapped"), "%s",
            info.kernel);
  cr_assert_eq(fea_operator_apply(op, xv, yv), FEA_SUCCESS);
  cr_assert_eq(fea_vector_read(yv, nf, FEA_F64, y1), FEA_SUCCESS);
  fea_operator_destroy(&op);
  od.geometry_terms = FEA_GEOMETRY_TERMS_STORED;
  cr_assert_eq(fea_operator_create(ctx, pb, &od, &op), FEA_SUCCESS);
  cr_assert_eq(fea_operator_get_info(op, &info), FEA_SUCCESS);
  cr_assert_null(strstr(info.kernel, "Kronecker"), "%s", info.kernel);
  cr_assert_eq(fea_operator_apply(op, xv, yv), FEA_SUCCESS);
  cr_assert_eq(fea_vector_read(yv, nf, FEA_F64, y2), FEA_SUCCESS);
  double big = 0, diff = 0;
  for (fea_index i = 0; i < nf; i++)
    big = fmax(big, fabs(y2[i])), diff = fmax(diff, fabs(y1[i] - y2[i]));
  cr_assert(diff <= 1e-11 * big, "Kronecker and element-wise differ by %g of %g", diff, big);
  fea_operator_destroy(&op);
  fea_problem_destroy(&pb);
  fea_space_destroy(&s);
  fea_vector_destroy(&xv);
  fea_vector_destroy(&yv);
  free(x), free(y1), free(y2);
}
