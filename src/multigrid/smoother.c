/* Multigrid smoothers on one level, over the level's operator (any kind):
 * - Richardson x += omega M^-1 (b - A x), M = I (the paper's) or D = diag(A);
 * - Chebyshev: the degree-k Chebyshev polynomial in D^-1 A that is smallest
 *   on [lambda_max / range, 1.1 lambda_max] (Saad, Iterative Methods, Alg.
 *   12.1, three-term recurrence; one operator application per degree). It
 *   damps the upper part of the spectrum, which the coarse grid cannot, and
 *   needs no omega; the factor 1.1 covers Lanczos's estimate from below.
 *   On vector levels (elasticity) D is the node-block diagonal by default
 *   (smoother-block.c; jacobi = 1 keeps the point diagonal, for comparison).
 * - Schwarz (B-spline levels): Chebyshev in M^-1 A with M^-1 the additive
 *   Schwarz over overlapping coefficient boxes (smoother-schwarz.c).
 * All are polynomials in A (or D^-1 A, M^-1 A), hence self-adjoint in the A inner
 * product: with equal pre- and post-smoothing the cycle is a symmetric
 * preconditioner for CG.
 *
 * Setup estimates lambda_max of the smoothed operator on every smoothing
 * level (exactly on the matrix-free stencil levels, level-stencil-op.c, and
 * on Q2 box levels from their symbol, smoother-symbol.c; elsewhere) with 20
 * Lanczos steps (fea_lanczos_extremes; for D^-1 A through the
 * similar D^-1/2 A D^-1/2), which also guards Richardson: omega lambda_max
 * >= 2 amplifies the highest modes, so it is refused. That is not a
 * theoretical worry: the unscaled stiffness matrix's spectrum scales like
 * h^(d-2), so an omega that is stable for 2D Q1 (lambda_max = 4) is not for
 * 2D P1 (lambda_max = 8), and in 3D the usable omega grows with 1/h. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "linalg/blas.h"
#include "base/context.h"
#include "internal/error.h"
#include "multigrid-impl.h"
#include "linalg/lanczos.h"

/* 20 steps without reorthogonalization. The reorthogonalization (two
 * Gram-Schmidt passes over all earlier vectors) streamed several times the
 * memory of the products; without it the extreme Ritz values still
 * converge, lost orthogonality only repeats them: 30 steps gave the same
 * lambda_max as 30 reorthogonalized ones to the digits the tests print (2D
 * Q1 at 1M DoFs: 3.994 for A, 1.498 for D^-1 A). 20 steps come within
 * 0.4 % of 30 in all 84 runs of the unit test, with the same iteration count
 * in every one (inside the Chebyshev safety factor); 15 were too few: the
 * stationary Chebyshev(3) iteration on 3D Kuhn P1 went from 15..17 cycles
 * over n = 8..64 to 14..17. */
#define LANCZOS_STEPS 20
#define CHEBYSHEV_SAFETY 1.1

static fea_status apply(const fea_mg_level *lv, const double *x, double *y) {
  return lv->op->impl->apply(lv->op, x, y, 0);
}

fea_status fea_mg_residual(const fea_mg *mg, int l, const double *b, const double *x, double *r) {
  const fea_mg_level *lv = &mg->levels[l];
  FEA_CALL(apply(lv, x, r));
  return mg->k->sub_from(mg->ctx, lv->n, b, r);
}

/* x += omega M^-1 (b - A x), steps times (x = omega M^-1 b first when zero). */
static fea_status richardson(const fea_mg *mg, int l, const double *b, double *x, int steps,
                             int zero) {
  const fea_mg_level *lv = &mg->levels[l];
  const fea_mg_kernels *k = mg->k;
  for (int s = 0; s < steps; s++) {
    if (zero && s == 0) { /* r = b: no product needed */
      FEA_CALL(k->scaled_update(mg->ctx, lv->n, mg->desc.omega, lv->dinv, b, x, 1));
      continue;
    }
    FEA_CALL(fea_mg_residual(mg, l, b, x, lv->r));
    FEA_CALL(k->scaled_update(mg->ctx, lv->n, mg->desc.omega, lv->dinv, lv->r, x, 0));
  }
  return FEA_SUCCESS;
}

static fea_status chebyshev(const fea_mg *mg, int l, const double *b, double *x, int degree,
                            int zero) {
  const fea_mg_level *lv = &mg->levels[l];
  const fea_mg_kernels *k = mg->k;
  const double hi = CHEBYSHEV_SAFETY * lv->lambda_max;
  const double lo = lv->lambda_max / mg->desc.chebyshev_range;
  const double theta = 0.5 * (hi + lo), delta = 0.5 * (hi - lo), sigma = theta / delta;
  double rho = 1.0 / sigma;
  double *r = lv->r, *d = lv->w;
  /* Node blocks: D^-1 r into the blocks' vector z, which the kernels then
   * take unscaled (host levels only). */
  double *z = lv->blocks ? fea_mg_blocks_scratch(lv->blocks) : NULL;
  if (!zero) FEA_CALL(fea_mg_residual(mg, l, b, x, r));
  const double *r0 = zero ? b : r;
  if (z) fea_mg_blocks_solve(lv->blocks, r0, z);
  FEA_CALL(k->chebyshev_first(mg->ctx, lv->n, theta, z ? NULL : lv->dinv, z ? z : r0, d, x, zero));
  for (int j = 1; j < degree; j++) {
    FEA_CALL(fea_mg_residual(mg, l, b, x, r));
    if (z) fea_mg_blocks_solve(lv->blocks, r, z);
    const double rho_new = 1.0 / (2.0 * sigma - rho);
    const double c1 = rho_new * rho, c2 = 2.0 * rho_new / delta;
    FEA_CALL(k->chebyshev_step(mg->ctx, lv->n, c1, c2, z ? NULL : lv->dinv, z ? z : r, d, x));
    rho = rho_new;
  }
  return FEA_SUCCESS;
}

fea_status fea_mg_smooth(const fea_mg *mg, int l, const double *b, double *x, int steps, int zero) {
  if (steps <= 0) return FEA_SUCCESS;
  if (mg->desc.smoother == FEA_MG_SMOOTHER_CHEBYSHEV) return chebyshev(mg, l, b, x, steps, zero);
  if (mg->desc.smoother == FEA_MG_SMOOTHER_SCHWARZ)
    return fea_mg_schwarz_chebyshev(mg, l, b, x, steps, zero);
  return richardson(mg, l, b, x, steps, zero);
}

/* ---- setup ----------------------------------------------------------------------------------- */

/* y = A x, or D^-1/2 A D^-1/2 x with a scaling (sqrt of dinv) and its
 * scratch, on host arrays. Kernels not in host memory: x goes up into the
 * level's r, A r into its w (both free during setup), and w comes down. */
typedef struct lanczos_op {
  const fea_mg *mg;
  const fea_mg_level *lv;
  const double *scale;         /* NULL: A itself */
  const fea_mg_blocks *blocks; /* or L^-1 A L^-T with D = L L^T the node blocks (host) */
  double *tmp;
  int threads;
} lanczos_op;

static fea_status lanczos_apply(void *user, const double *x, double *y) {
  const lanczos_op *o = user;
  const fea_index n = o->lv->n;
  const double *in = x;
  if (o->blocks) { /* host levels only */
    fea_mg_blocks_half(o->blocks, 1, x, o->tmp);
    FEA_CALL(apply(o->lv, o->tmp, y));
    fea_mg_blocks_half(o->blocks, 0, y, y);
    return FEA_SUCCESS;
  }
  if (o->scale) {
#pragma omp parallel for schedule(static) num_threads(o->threads) if (n >= FEA_MG_PARALLEL_MIN)
    for (fea_index i = 0; i < n; i++) o->tmp[i] = o->scale[i] * x[i];
    in = o->tmp;
  }
  const fea_mg_kernels *k = o->mg->k;
  if (k->host) {
    FEA_CALL(apply(o->lv, in, y));
  } else {
    fea_context *ctx = o->mg->ctx;
    FEA_CALL(k->upload(ctx, n, in, o->lv->r));
    FEA_CALL(apply(o->lv, o->lv->r, o->lv->w));
    FEA_CALL(k->download(ctx, n, o->lv->w, y));
  }
  if (o->scale) {
#pragma omp parallel for schedule(static) num_threads(o->threads) if (n >= FEA_MG_PARALLEL_MIN)
    for (fea_index i = 0; i < n; i++) y[i] *= o->scale[i];
  }
  return FEA_SUCCESS;
}

/* dinv_host: 1 / diag(A) on the host (NULL: the smoother does not scale). */
static fea_status estimate_lambda_max(const fea_mg *mg, fea_mg_level *lv, int l,
                                      const double *dinv_host) {
  fea_context *ctx = mg->ctx;
  /* A stencil level knows its spectrum: exact, without the 20 products. */
  if (fea_mg_stencil_operator_lambda_max(lv->op, lv->dinv != NULL, &lv->lambda_max))
    return FEA_SUCCESS;
  /* So does a Q2 level on a box, from its symbol (smoother-symbol.c): the
   * finest level's 20 products were a third of a 3D Q2 setup. */
  if (!lv->blocks) {
    int usable = 0;
    FEA_CALL(fea_mg_symbol_lambda_max(lv->problem, lv->dinv != NULL, 0, &lv->lambda_max, &usable));
    if (usable) return FEA_SUCCESS;
  }
  lanczos_op o = {mg, lv, NULL, lv->blocks, NULL, ctx->nthreads > 0 ? ctx->nthreads : 1};
  double *scale = NULL;
  if (lv->blocks) {
    scale = malloc(((size_t)lv->n + 1) * sizeof *scale);
    FEA_CHECK(scale, ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for a vector of %lld entries",
              (long long)lv->n);
    o.tmp = scale;
  } else if (dinv_host) {
    scale = malloc(2 * ((size_t)lv->n + 1) * sizeof *scale);
    FEA_CHECK(scale, ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for a scaling of %lld entries",
              (long long)lv->n);
    for (fea_index i = 0; i < lv->n; i++) scale[i] = sqrt(dinv_host[i]);
    o.scale = scale;
    o.tmp = scale + lv->n + 1;
  }
  double lmin;
  /* Lanczos's dot products are BLAS calls between the OpenMP regions of the
   * products: on one BLAS thread, because OpenBLAS's own pool, woken there,
   * spins against the OpenMP team. 2D Q1, 1M DoFs, 2 threads on 2 cores:
   * 0.28 s instead of 0.47 s for the estimates; one thread unchanged. */
  fea_blas_use_threads(1);
  fea_status st = fea_lanczos_extremes(ctx, lv->n, lanczos_apply, &o, LANCZOS_STEPS, 0,
                                       (uint64_t)l + 1, &lmin, &lv->lambda_max);
  free(scale);
  if (st < 0) { /* Lanczos's message, with the level it happened on */
    char why[FEA_ERROR_LEN];
    snprintf(why, sizeof why, "%s", ctx->last_error);
    return FEA_ERROR(ctx, st, "level %d: Lanczos: %s", l, why);
  }
  FEA_CHECK(lv->lambda_max > 0.0 && isfinite(lv->lambda_max), ctx, FEA_ERR_NOT_POSDEF,
            "level %d: the largest eigenvalue estimate of the operator is %g", l, lv->lambda_max);
  return FEA_SUCCESS;
}

/* lv->dinv = 1 / diag(A) in the kernels' memory, and on the host in
 * *host (the same array when the kernels' memory is the host's). */
static fea_status inverse_diagonal(const fea_mg *mg, fea_mg_level *lv, int l, double **host) {
  fea_context *ctx = mg->ctx;
  const fea_mg_kernels *k = mg->k;
  FEA_CALL(k->alloc(ctx, lv->n, &lv->dinv));
  /* A Q2 box level's diagonal has one value per node type (smoother-symbol.c). */
  int typed = 0;
  if (k->host && lv->pgrid)
    FEA_CALL(fea_mg_symbol_diagonal(lv->problem, lv->pgrid, lv->dinv, &typed));
  if (!typed) FEA_CALL(lv->op->impl->diagonal(lv->op, lv->dinv));
  double *h = lv->dinv;
  if (!k->host) {
    h = malloc(((size_t)lv->n + 1) * sizeof *h);
    FEA_CHECK(h, ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for a diagonal of %lld entries",
              (long long)lv->n);
    fea_status st = k->download(ctx, lv->n, lv->dinv, h);
    if (st < 0) {
      free(h);
      return st;
    }
  }
  fea_status st = FEA_SUCCESS;
  for (fea_index i = 0; i < lv->n && st == FEA_SUCCESS; i++) {
    if (h[i] > 0.0 && isfinite(h[i]))
      h[i] = 1.0 / h[i];
    else
      st = FEA_ERROR(ctx, FEA_ERR_NOT_POSDEF,
                     "level %d: diagonal entry %lld of the operator is %g; the smoother needs "
                     "positive entries",
                     l, (long long)i, h[i]);
  }
  if (st == FEA_SUCCESS && !k->host) st = k->upload(ctx, lv->n, h, lv->dinv);
  if (st != FEA_SUCCESS && h != lv->dinv) free(h);
  if (st == FEA_SUCCESS) *host = h;
  return st;
}

/* "16 x 16": a level's cells per direction, for messages. */
static void format_cells(const fea_mg_level *lv, char *buf, size_t len) {
  const int dim = lv->problem->space->dim;
  if (dim == 2)
    snprintf(buf, len, "%lld x %lld", (long long)lv->cells[0], (long long)lv->cells[1]);
  else
    snprintf(buf, len, "%lld x %lld x %lld", (long long)lv->cells[0], (long long)lv->cells[1],
             (long long)lv->cells[2]);
}

/* Chebyshev on a vector level smooths with node blocks unless jacobi = 1
 * asks for the point diagonal; host levels only (the device kernels scale
 * by a vector). */
static int node_blocks(const fea_mg *mg, const fea_mg_level *lv) {
  return mg->desc.smoother == FEA_MG_SMOOTHER_CHEBYSHEV && !mg->desc.jacobi && mg->k->host &&
         lv->problem->space->ncomp > 1;
}

fea_status fea_mg_smoother_setup(fea_mg *mg) {
  const fea_multigrid_desc *d = &mg->desc;
  const int scaled = d->smoother == FEA_MG_SMOOTHER_CHEBYSHEV || d->jacobi;
  /* The coarsest level is solved, not smoothed. */
  for (int l = 0; l + 1 < mg->num_levels; l++) {
    fea_mg_level *lv = &mg->levels[l];
    if (d->smoother == FEA_MG_SMOOTHER_SCHWARZ) { /* blocks from the level's entries */
      FEA_CHECK(lv->op->impl && lv->op->impl->entries, mg->ctx, FEA_ERR_STATE,
                "level %d: the Schwarz smoother needs a level operator with entries", l);
      FEA_CALL(fea_mg_schwarz_setup(mg->ctx, lv->problem, lv->op, l, &lv->schwarz));
      FEA_CALL(fea_mg_schwarz_lambda_max(mg->ctx, lv->schwarz, lv->op, lv->n, l, &lv->lambda_max));
      continue;
    }
    double *dinv_host = NULL;
    if (node_blocks(mg, lv))
      FEA_CALL(fea_mg_blocks_setup(mg, l, &lv->blocks));
    else if (scaled)
      FEA_CALL(inverse_diagonal(mg, lv, l, &dinv_host));
    fea_status st = estimate_lambda_max(mg, lv, l, dinv_host);
    if (dinv_host != lv->dinv) free(dinv_host);
    FEA_CALL(st);
    if (d->smoother != FEA_MG_SMOOTHER_RICHARDSON) continue;
    const double prod = d->omega * lv->lambda_max;
    if (prod < 2.0) continue;
    char cells[64];
    format_cells(lv, cells, sizeof cells);
    return FEA_ERROR(mg->ctx, FEA_ERR_INVALID_ARG,
                     "omega = %g is unstable for %s Richardson on level %d (%s cells): "
                     "lambda_max = %g of %s, and omega * lambda_max = %g >= 2; use omega < %g%s "
                     "or the Chebyshev smoother",
                     d->omega, d->jacobi ? "Jacobi-scaled" : "unscaled", l, cells, lv->lambda_max,
                     d->jacobi ? "D^-1 A" : "A", prod, 2.0 / lv->lambda_max,
                     d->jacobi ? "" : ", jacobi = 1");
  }
  mg->stats.lambda_max = mg->num_levels > 1 ? mg->levels[0].lambda_max : 0.0;
  return FEA_SUCCESS;
}
