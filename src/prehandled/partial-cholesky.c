/* The partial Cholesky L of the transformed matrix (Ruda et al. 2022, §3, eq. (5)): the
 * dense factor of the coarse (level-0) block, and sqrt(diag) on all nodes
 * added by refinement. The forward and backward maps of the prehandled system
 * A = L^-1 S^T A_h S L^-T chain it with the hierarchical transform. */
#include <math.h>
#include <stdlib.h>

#include "base/context.h"
#include "linalg/dense.h"
#include "internal/error.h"
#include "linalg/matrix.h"
#include "macro-mesh.h"
#include "prehandle.h"

struct fea_ph_factor {
  fea_context *ctx; /* holds a reference */
  fea_ph_grid g;
  fea_index nc;      /* (n0 - 1)^2 coarse nodes, lexicographic */
  double *l0;        /* nc x nc, column-major, lower triangle is the factor */
  double *sqrt_diag; /* per interior node; unused at coarse nodes */
  double *work;      /* nc: the coarse entries of a vector */
};

/* The coarse position of interior node (i, j), or -1. On a mesh of macro
 * cells, the position among its C nodes (the split's order). */
static fea_index coarse_of(const fea_ph_grid *g, fea_index lexi) {
  if (g->macro) return g->macro->pos[lexi] < g->macro->nc ? g->macro->pos[lexi] : -1;
  fea_index i = lexi % (g->n - 1) + 1, j = lexi / (g->n - 1) + 1;
  if (i % g->r || j % g->r) return -1;
  return (i / g->r - 1) + (j / g->r - 1) * (g->n0 - 1);
}

static fea_index coarse_node(const fea_ph_grid *g, fea_index c) {
  if (g->macro) return g->macro->perm[c];
  fea_index ci = c % (g->n0 - 1) + 1, cj = c / (g->n0 - 1) + 1;
  return (ci * g->r - 1) + (cj * g->r - 1) * (g->n - 1);
}

void fea_ph_factor_destroy(fea_ph_factor **f) {
  if (!f || !*f) return;
  free((*f)->l0);
  free((*f)->sqrt_diag);
  free((*f)->work);
  fea_object_release((*f)->ctx);
  free(*f);
  *f = NULL;
}

fea_status fea_ph_factor_create(fea_context *ctx, const fea_ph_grid *g, const fea_matrix *At,
                                fea_ph_factor **out) {
  FEA_CHECK_NULL(ctx, NULL);
  FEA_CHECK_NULL(g, ctx);
  FEA_CHECK_NULL(At, ctx);
  FEA_CHECK_NULL(out, ctx);
  FEA_CHECK(!ctx->backend->m1, ctx, FEA_ERR_INVALID_ARG,
            "the partial Cholesky runs on a host context; backend '%s' has an M1 of its own, "
            "whose setup context is the one to use",
            ctx->backend->prefix);
  FEA_CHECK(At->rows == g->num && At->cols == g->num, ctx, FEA_ERR_INVALID_ARG,
            "transformed matrix is %lld x %lld, the grid has %lld interior nodes",
            (long long)At->rows, (long long)At->cols, (long long)g->num);
  fea_ph_factor *f = calloc(1, sizeof *f);
  FEA_CHECK(f, ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for a partial Cholesky");
  f->ctx = ctx;
  fea_object_retain(ctx);
  f->g = *g;
  f->nc = g->macro ? g->macro->nc : (g->n0 - 1) * (g->n0 - 1);
  const size_t nc = (size_t)(f->nc ? f->nc : 1);
  f->l0 = calloc(nc * nc, sizeof *f->l0);
  f->sqrt_diag = calloc((size_t)g->num, sizeof *f->sqrt_diag);
  f->work = calloc(nc, sizeof *f->work);
  if (!f->l0 || !f->sqrt_diag || !f->work) {
    fea_ph_factor_destroy(&f);
    return FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for a coarse block of %lld nodes",
                     (long long)nc);
  }
  for (fea_index row = 0; row < g->num; row++) {
    const fea_index cr = coarse_of(g, row);
    double d = 0;
    for (fea_index k = At->row_ptr[row]; k < At->row_ptr[row + 1]; k++) {
      const fea_index col = At->col_idx[k];
      if (col == row) d = At->values[k];
      if (cr >= 0) {
        const fea_index cc = coarse_of(g, col);
        if (cc >= 0) f->l0[cr + cc * f->nc] = At->values[k];
      }
    }
    if (cr < 0) {
      if (!(d > 0) || !isfinite(d)) {
        fea_index i = row % (g->n - 1) + 1, j = row / (g->n - 1) + 1;
        fea_ph_factor_destroy(&f);
        if (g->macro)
          return FEA_ERROR(ctx, FEA_ERR_NOT_POSDEF,
                           "diagonal %g of the transformed matrix at unknown %lld is not positive",
                           d, (long long)row);
        return FEA_ERROR(ctx, FEA_ERR_NOT_POSDEF,
                         "diagonal %g of the transformed matrix at node (%lld, %lld) is not "
                         "positive",
                         d, (long long)i, (long long)j);
      }
      f->sqrt_diag[row] = sqrt(d);
    }
  }
  if (f->nc > 0) {
    fea_dmat a = {f->l0, f->nc, f->nc, f->nc, FEA_F64};
    fea_status st = fea_dense_potrf(ctx, FEA_LOWER, &a);
    if (st < 0) {
      fea_ph_factor_destroy(&f);
      return st;
    }
  }
  *out = f;
  return FEA_SUCCESS;
}

const double *fea_ph_factor_coarse(const fea_ph_factor *f, fea_index *nc) {
  if (nc) *nc = f->nc;
  return f->l0;
}

const double *fea_ph_factor_sqrt_diag(const fea_ph_factor *f) { return f->sqrt_diag; }

static void gather(fea_ph_factor *f, const double *x) {
  for (fea_index c = 0; c < f->nc; c++) f->work[c] = x[coarse_node(&f->g, c)];
}

static void scatter(fea_ph_factor *f, double *x) {
  for (fea_index c = 0; c < f->nc; c++) x[coarse_node(&f->g, c)] = f->work[c];
}

/* Non-coarse entries: x *= sqrt(d) (scale) or x /= sqrt(d). */
static void scale_fine(fea_ph_factor *f, double *x, int divide) {
  for (fea_index p = 0; p < f->g.num; p++)
    if (f->sqrt_diag[p] > 0) x[p] = divide ? x[p] / f->sqrt_diag[p] : x[p] * f->sqrt_diag[p];
}

static fea_status coarse_solve(fea_ph_factor *f, double *x, fea_transpose t) {
  if (f->nc > 0) {
    gather(f, x);
    fea_dmat a = {f->l0, f->nc, f->nc, f->nc, FEA_F64};
    fea_dmat b = {f->work, f->nc, 1, f->nc, FEA_F64};
    FEA_CALL(fea_dense_trsm(f->ctx, FEA_LEFT, FEA_LOWER, t, FEA_NON_UNIT, 1.0, &a, &b));
    scatter(f, x);
  }
  scale_fine(f, x, 1);
  return FEA_SUCCESS;
}

/* work := L0 work or L0^T work, by hand: a triangular product, no workspace. */
static void coarse_multiply(fea_ph_factor *f, int transpose) {
  const fea_index n = f->nc;
  const double *l = f->l0;
  if (!transpose) {
    for (fea_index i = n - 1; i >= 0; i--) { /* row i uses work[0..i], not yet overwritten */
      double s = 0;
      for (fea_index k = 0; k <= i; k++) s += l[i + k * n] * f->work[k];
      f->work[i] = s;
    }
  } else {
    for (fea_index i = 0; i < n; i++) { /* row i of L0^T uses work[i..n-1] */
      double s = 0;
      for (fea_index k = i; k < n; k++) s += l[k + i * n] * f->work[k];
      f->work[i] = s;
    }
  }
}

static fea_status coarse_apply(fea_ph_factor *f, double *x, int transpose) {
  if (f->nc > 0) {
    gather(f, x);
    coarse_multiply(f, transpose);
    scatter(f, x);
  }
  scale_fine(f, x, 0);
  return FEA_SUCCESS;
}

fea_status fea_ph_solve_l(fea_ph_factor *f, double *x) {
  FEA_CHECK_NULL(f, NULL);
  FEA_CHECK_NULL(x, f->ctx);
  return coarse_solve(f, x, FEA_NO_TRANS);
}

fea_status fea_ph_solve_lt(fea_ph_factor *f, double *x) {
  FEA_CHECK_NULL(f, NULL);
  FEA_CHECK_NULL(x, f->ctx);
  return coarse_solve(f, x, FEA_TRANS);
}

fea_status fea_ph_apply_l(fea_ph_factor *f, double *x) {
  FEA_CHECK_NULL(f, NULL);
  FEA_CHECK_NULL(x, f->ctx);
  return coarse_apply(f, x, 0);
}

fea_status fea_ph_apply_lt(fea_ph_factor *f, double *x) {
  FEA_CHECK_NULL(f, NULL);
  FEA_CHECK_NULL(x, f->ctx);
  return coarse_apply(f, x, 1);
}

fea_status fea_ph_forward(fea_ph_factor *f, double *b) {
  FEA_CHECK_NULL(f, NULL);
  FEA_CHECK_NULL(b, f->ctx);
  fea_ph_apply_st(&f->g, b);
  return coarse_solve(f, b, FEA_NO_TRANS);
}

fea_status fea_ph_backward(fea_ph_factor *f, double *x) {
  FEA_CHECK_NULL(f, NULL);
  FEA_CHECK_NULL(x, f->ctx);
  FEA_CALL(coarse_solve(f, x, FEA_TRANS));
  fea_ph_apply_s(&f->g, x);
  return FEA_SUCCESS;
}

/* ---- k columns at once ------------------------------------------------ */

/* The coarse solve of k columns (ld num) as one TRSM with k right-hand
 * sides; the O(num) parts (sweeps, scaling) column-parallel on the context's
 * threads: the columns are independent and each loop is pure arithmetic. */
static fea_status coarse_solve_many(fea_ph_factor *f, fea_index k, double *x, fea_transpose t) {
  const fea_index num = f->g.num, nc = f->nc;
  if (nc > 0) {
    double *w = malloc((size_t)(nc * k) * sizeof *w);
    FEA_CHECK(w, f->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %lld x %lld coarse entries",
              (long long)nc, (long long)k);
    for (fea_index j = 0; j < k; j++)
      for (fea_index c = 0; c < nc; c++) w[c + j * nc] = x[coarse_node(&f->g, c) + j * num];
    fea_dmat a = {f->l0, nc, nc, nc, FEA_F64}, b = {w, nc, k, nc, FEA_F64};
    fea_status st = fea_dense_trsm(f->ctx, FEA_LEFT, FEA_LOWER, t, FEA_NON_UNIT, 1.0, &a, &b);
    if (st >= 0)
      for (fea_index j = 0; j < k; j++)
        for (fea_index c = 0; c < nc; c++) x[coarse_node(&f->g, c) + j * num] = w[c + j * nc];
    free(w);
    FEA_CALL(st);
  }
  return FEA_SUCCESS;
}

fea_status fea_ph_forward_many(fea_ph_factor *f, fea_index k, double *b) {
  FEA_CHECK_NULL(f, NULL);
  FEA_CHECK(k >= 0, f->ctx, FEA_ERR_INVALID_ARG, "%lld columns", (long long)k);
  if (k == 0) return FEA_SUCCESS;
  FEA_CHECK_NULL(b, f->ctx);
  const fea_index num = f->g.num;
#pragma omp parallel for num_threads(f->ctx->nthreads) schedule(static) if (k > 1)
  for (fea_index j = 0; j < k; j++) fea_ph_apply_st(&f->g, b + j * num);
  FEA_CALL(coarse_solve_many(f, k, b, FEA_NO_TRANS));
#pragma omp parallel for num_threads(f->ctx->nthreads) schedule(static) if (k > 1)
  for (fea_index j = 0; j < k; j++) scale_fine(f, b + j * num, 1);
  return FEA_SUCCESS;
}

fea_status fea_ph_backward_many(fea_ph_factor *f, fea_index k, double *x) {
  FEA_CHECK_NULL(f, NULL);
  FEA_CHECK(k >= 0, f->ctx, FEA_ERR_INVALID_ARG, "%lld columns", (long long)k);
  if (k == 0) return FEA_SUCCESS;
  FEA_CHECK_NULL(x, f->ctx);
  const fea_index num = f->g.num;
  FEA_CALL(coarse_solve_many(f, k, x, FEA_TRANS));
#pragma omp parallel for num_threads(f->ctx->nthreads) schedule(static) if (k > 1)
  for (fea_index j = 0; j < k; j++) {
    scale_fine(f, x + j * num, 1);
    fea_ph_apply_s(&f->g, x + j * num);
  }
  return FEA_SUCCESS;
}
