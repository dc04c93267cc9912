/* B-spline multigrid internals (src/multigrid/hierarchy-bspline.c,
 * smoother-schwarz.c): the coarse spaces halve the knot spans, the
 * knot-insertion prolongation makes rediscretization Galerkin on the box
 * (P^T A_fine P equals the coarse level's own assembly where the quadrature
 * is exact), P reproduces fea_space_transfer's coefficients, and the
 * Schwarz estimate of lambda_max(M^-1 A) lies inside the bound its overlap
 * gives. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>
#include <feaccel.h>

#include "linalg/csr-product.h"
#include "linalg/matrix.h"
#include "multigrid/multigrid-impl.h"

#define OK(expr)                                                               \
  do {                                                                         \
    fea_status ok_status_ = (expr);                                            \
    cr_assert_eq(ok_status_, FEA_SUCCESS, "%s returned %s: %s", #expr,         \
                 fea_status_string(ok_status_), fea_context_last_error(NULL)); \
  } while (0)

static fea_context *ctx;

static void setup(void) { OK(fea_context_create("/cpu/ref", &ctx)); }
static void teardown(void) { OK(fea_context_destroy(&ctx)); }

TestSuite(multigrid_bspline, .init = setup, .fini = teardown);

static double load(const double *x, void *user) {
  (void)user;
  return 1.0 + x[0] * x[1];
}

/* A Schwarz multigrid on the box [0,1]^dim (degree p, n elements), built
 * through the internal entry point. */
static void box_mg(int dim, int p, fea_index n, fea_space **s, fea_problem **pb, fea_mg **mg) {
  fea_bspline_desc bd = FEA_BSPLINE_DESC_INIT;
  bd.dim = dim;
  for (int k = 0; k < dim; k++) bd.degree[k] = p, bd.n[k] = n;
  OK(fea_space_create_bspline(ctx, &bd, s));
  fea_problem_desc pd = FEA_PROBLEM_DESC_INIT;
  pd.source = load;
  OK(fea_problem_create_poisson(*s, &pd, pb));
  fea_multigrid_desc d = FEA_MULTIGRID_DESC_INIT;
  d.smoother = FEA_MG_SMOOTHER_SCHWARZ;
  OK(fea_mg_create(ctx, *pb, &d, mg));
}

/* Dense n x n of a CSR matrix. */
static double *dense(const fea_matrix *A) {
  double *D = calloc((size_t)A->rows * (size_t)A->cols, sizeof *D);
  for (fea_index i = 0; i < A->rows; i++)
    for (fea_index k = A->row_ptr[i]; k < A->row_ptr[i + 1]; k++)
      D[i * A->cols + A->col_idx[k]] = A->values[k];
  return D;
}

/* Every level's elements halve, the degree stays, and P^T A_l P = A_{l+1}
 * (the level's own reference assembly) to rounding: nested spaces and a
 * Gauss rule exact for the box's polynomial integrands. */
Test(multigrid_bspline, galerkin_on_the_box) {
  const int cases[2][3] = {{2, 3, 16}, {3, 2, 8}};
  for (int c = 0; c < 2; c++) {
    const int dim = cases[c][0], p = cases[c][1];
    fea_space *s;
    fea_problem *pb;
    fea_mg *mg;
    box_mg(dim, p, cases[c][2], &s, &pb, &mg);
    cr_expect_eq(mg->num_levels, (int)log2(cases[c][2]) + 1, "%dD: %d levels", dim, mg->num_levels);
    for (int l = 0; l + 1 < mg->num_levels; l++) {
      const fea_mg_level *f = &mg->levels[l], *g = &mg->levels[l + 1];
      for (int k = 0; k < dim; k++) {
        cr_expect_eq(f->cells[k], 2 * g->cells[k], "level %d direction %d", l, k);
        cr_expect_eq(g->problem->space->degree[k], p);
      }
      if (g->n == 0) continue;
      fea_matrix *Af = NULL, *Ac = NULL;
      double *bf = malloc((size_t)f->n * sizeof *bf), *bc = malloc((size_t)g->n * sizeof *bc);
      OK(fea_problem_assemble_reference(f->problem, bf, &Af));
      OK(fea_problem_assemble_reference(g->problem, bc, &Ac));
      fea_matrix *Pm = NULL; /* the CSR P the level's Kronecker transfer equals */
      OK(fea_mg_bspline_prolongation(ctx, f->problem, g->problem, &Pm));
      double *A = dense(Af), *C = dense(Ac), *P = dense(Pm);
      fea_matrix_destroy(&Pm);
      const fea_index nf = f->n, nc = g->n;
      double *AP = calloc((size_t)nf * (size_t)nc, sizeof *AP);
      for (fea_index i = 0; i < nf; i++)
        for (fea_index k = 0; k < nf; k++) {
          const double a = A[i * nf + k];
          if (a != 0.0)
            for (fea_index j = 0; j < nc; j++) AP[i * nc + j] += a * P[k * nc + j];
        }
      double err = 0.0, ref = 0.0;
      for (fea_index i = 0; i < nc; i++)
        for (fea_index j = 0; j < nc; j++) {
          double v = 0.0;
          for (fea_index k = 0; k < nf; k++) v += P[k * nc + i] * AP[k * nc + j];
          err = fmax(err, fabs(v - C[i * nc + j]));
          ref = fmax(ref, fabs(C[i * nc + j]));
        }
      cr_log_info("%dD p = %d level %d: |P^T A P - A_c| / |A_c| = %.2g", dim, p, l, err / ref);
      cr_expect(err <= 1e-12 * ref, "%dD level %d: P^T A P differs from A_c by %.3g (of %.3g)", dim,
                l, err, ref);
      free(A), free(C), free(P), free(AP), free(bf), free(bc);
      fea_matrix_destroy(&Af);
      fea_matrix_destroy(&Ac);
    }
    fea_mg_destroy(&mg);
    fea_problem_destroy(&pb);
    fea_space_destroy(&s);
  }
}

/* P c (free rows) equals fea_space_transfer of c expanded with zero
 * Dirichlet values, on a NURBS-free box and with unequal degrees. */
Test(multigrid_bspline, prolongation_is_space_transfer) {
  fea_bspline_desc bd = FEA_BSPLINE_DESC_INIT;
  bd.dim = 2;
  bd.degree[0] = 4, bd.degree[1] = 2;
  bd.n[0] = 8, bd.n[1] = 16;
  fea_space *s;
  fea_problem *pb;
  OK(fea_space_create_bspline(ctx, &bd, &s));
  fea_problem_desc pd = FEA_PROBLEM_DESC_INIT;
  OK(fea_problem_create_poisson(s, &pd, &pb));
  fea_multigrid_desc d = FEA_MULTIGRID_DESC_INIT;
  d.smoother = FEA_MG_SMOOTHER_SCHWARZ;
  fea_mg *mg;
  OK(fea_mg_create(ctx, pb, &d, &mg));
  const fea_mg_level *f = &mg->levels[0], *g = &mg->levels[1];
  fea_space *cs = g->problem->space;
  double *cc = calloc((size_t)cs->num_dofs, sizeof *cc), *fc = malloc(s->num_dofs * sizeof *fc);
  double *x = malloc((size_t)g->n * sizeof *x), *y = calloc((size_t)f->n, sizeof *y);
  for (fea_index i = 0; i < cs->num_dofs; i++) {
    const fea_index r = g->problem->free_index[i];
    if (r >= 0) cc[i] = x[r] = sin(1.0 + 0.7 * (double)i);
  }
  OK(fea_space_transfer(cs, cc, s, fc));
  fea_matrix *P = NULL;
  OK(fea_mg_bspline_prolongation(ctx, f->problem, g->problem, &P));
  OK(fea_matrix_multiply(P, x, y));
  double err = 0.0;
  for (fea_index i = 0; i < s->num_dofs; i++) {
    const fea_index r = pb->free_index[i];
    if (r >= 0)
      err = fmax(err, fabs(y[r] - fc[i]));
    else
      cr_expect(fabs(fc[i]) < 1e-14, "a zero boundary stays zero: DoF %lld is %g", (long long)i,
                fc[i]);
  }
  cr_expect(err < 1e-13, "P c differs from fea_space_transfer by %.3g", err);
  /* the level's Kronecker transfer (no CSR P on host levels) equals P and
   * P^T, on one and three threads */
  cr_assert_not_null(f->ktrans, "the box's levels take the Kronecker transfer");
  cr_expect_null(f->P);
  fea_matrix *PT = NULL;
  OK(fea_csr_transpose(ctx, P, &PT));
  double *r = malloc((size_t)f->n * sizeof *r), *bc = malloc((size_t)g->n * sizeof *bc);
  double *bk = malloc((size_t)g->n * sizeof *bk), *yk = malloc((size_t)f->n * sizeof *yk);
  for (fea_index i = 0; i < f->n; i++) r[i] = cos(0.3 * (double)i);
  OK(fea_matrix_multiply(PT, r, bc));
  for (int threads = 1; threads <= 3; threads += 2) {
    for (fea_index i = 0; i < f->n; i++) yk[i] = 0.5;
    fea_mg_ktransfer_prolong(f->ktrans, threads, x, yk);
    fea_mg_ktransfer_restrict(f->ktrans, threads, r, bk);
    for (fea_index i = 0; i < f->n; i++)
      cr_expect(fabs(yk[i] - 0.5 - y[i]) < 1e-14, "prolongation row %lld: %.17g against %.17g",
                (long long)i, yk[i] - 0.5, y[i]);
    for (fea_index i = 0; i < g->n; i++)
      cr_expect(fabs(bk[i] - bc[i]) < 1e-13, "restriction row %lld: %.17g against %.17g",
                (long long)i, bk[i], bc[i]);
  }
  free(r), free(bc), free(bk), free(yk);
  fea_matrix_destroy(&PT);
  fea_matrix_destroy(&P);
  free(cc), free(fc), free(x), free(y);
  fea_mg_destroy(&mg);
  fea_problem_destroy(&pb);
  fea_space_destroy(&s);
}

/* lambda_max(M^-1 A) of additive Schwarz lies in [1, number of blocks that
 * share a DoF]: for v in one block's span, v^T A M^-1 A v >= v^T A v (that
 * block's term alone), so >= 1; and the sum over overlapping blocks is
 * bounded by the overlap (the coloring bound): per direction at most
 * ceil(b / stride) boxes, one more where the last box was moved back. */
Test(multigrid_bspline, schwarz_estimate_within_overlap_bound) {
  fea_space *s;
  fea_problem *pb;
  fea_mg *mg;
  box_mg(2, 3, 16, &s, &pb, &mg);
  const int stride = fea_mg_schwarz_stride(3), b = 4;
  const int per_dir = (b + stride - 1) / stride + 1;
  const double bound = (double)(per_dir * per_dir);
  for (int l = 0; l + 1 < mg->num_levels; l++) {
    const double lm = mg->levels[l].lambda_max;
    cr_log_info("level %d: lambda_max(M^-1 A) = %.4f (bound %g)", l, lm, bound);
    cr_expect(lm >= 1.0 - 1e-10 && lm <= bound * (1 + 1e-10), "level %d: %g outside [1, %g]", l, lm,
              bound);
  }
  fea_mg_destroy(&mg);
  fea_problem_destroy(&pb);
  fea_space_destroy(&s);
}
