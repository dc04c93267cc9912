/* The overlapping Schwarz smoother of B-spline multigrid levels (issue #40):
 * Chebyshev in M^-1 A with M^-1 = sum_i R_i^T A_i^-1 R_i, the additive
 * Schwarz preconditioner over overlapping boxes of DoFs.
 *
 * Why blocks: the B-spline stiffness matrix has, for growing degree p,
 * eigenvectors that oscillate from coefficient to coefficient but belong to
 * functions of small energy (the B-spline mass matrix's condition grows like
 * 2^(2p) per direction); a point smoother (Jacobi, Chebyshev-Jacobi) cannot
 * tell them from smooth modes, so its iteration counts grow quickly with p.
 * A block of (p + 1)^d consecutive coefficients holds such a mode's local
 * part, and solving it exactly removes it (de la Riva, Rodrigo, Gaspar 2018,
 * "A robust multigrid solver for isogeometric analysis based on
 * multiplicative Schwarz smoothers", whose blocks these are; here additive,
 * so that the blocks run in parallel, inside Chebyshev, which takes care of
 * the additive overlap's scaling).
 *
 * Blocks: per direction k the boxes of b_k = p_k + 1 coefficient indices
 * starting every fea_mg_schwarz_stride(p_k) indices (p_k up to degree 4:
 * neighbouring boxes share one coefficient; the last box moved back to end
 * at the last coefficient), their tensor products, the level's free DoFs in each
 * (Dirichlet DoFs dropped). Each block's dense matrix A_i comes from the
 * level's CSR matrix and is inverted once (LAPACK dpotrf + dpotri); an
 * application is a gather, a dense symmetric product and a scatter-add per
 * block, the blocks in colors of mutually disjoint ones (3^d colors where
 * boxes overlap by one coefficient), each color's on the context's threads.
 *
 * The smoother's eigenvalue bound: lambda_max(M^-1 A) from 15 steps of
 * CG preconditioned by M (the Lanczos matrix of its coefficients, whose
 * largest eigenvalue approaches lambda_max from below; the Chebyshev safety
 * factor 1.1 covers the rest). */
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/context.h"
#include "linalg/blas.h"
#include "internal/error.h"
#include "multigrid-impl.h"
#include "matfree/operator.h"

#define SCHWARZ_LANCZOS_STEPS 15
#define CHEBYSHEV_SAFETY 1.1
/* The largest block: (p + 1)^3 coefficients at the highest degree. */
#define SCHWARZ_MAX_BLOCK \
  ((FEA_BSPLINE_MAX_DEGREE + 1) * (FEA_BSPLINE_MAX_DEGREE + 1) * (FEA_BSPLINE_MAX_DEGREE + 1))

struct fea_mg_schwarz {
  fea_index nblocks;
  fea_index *ptr;       /* nblocks + 1: block i's DoFs are dofs[ptr[i] .. ptr[i + 1]) */
  fea_index *dofs;      /* the free rows of each block, increasing */
  size_t *fptr;         /* nblocks + 1: block i's inverse at inv + fptr[i] (size_i^2) */
  double *inv;          /* A_i^-1, full, column-major */
  int maxb;             /* largest block */
  int ncolors;          /* blocks of one color share no DoF: color c is blocks */
  fea_index *color_ptr; /* color_ptr[c] .. color_ptr[c + 1] (ncolors + 1) */
  double *z;            /* n: M^-1 r */
  uint64_t bytes;
};

void fea_mg_schwarz_free(fea_mg_schwarz *s) {
  if (!s) return;
  free(s->ptr);
  free(s->dofs);
  free(s->fptr);
  free(s->color_ptr);
  free(s->inv);
  free(s->z);
  free(s);
}

uint64_t fea_mg_schwarz_bytes(const fea_mg_schwarz *s) { return s ? s->bytes : 0; }

/* The block starts of one direction of n coefficients: 0, stride, ... with
 * the last moved to n - b; returns their count (starts may be NULL). */
static fea_index starts_1d(fea_index n, int b, int stride, fea_index *starts) {
  if (n <= b) {
    if (starts) starts[0] = 0;
    return 1;
  }
  fea_index c = 0;
  for (fea_index st = 0;; st += stride) {
    if (st + b >= n) {
      if (starts) starts[c] = n - b;
      return c + 1;
    }
    if (starts) starts[c] = st;
    c++;
  }
}

int fea_mg_schwarz_stride(int p) {
  /* Measured (docs/multigrid.md, "B-spline multigrid"; quarter annulus n =
   * 128, CG to 1e-8): boxes of p + 1 overlapping by one coefficient (stride
   * p) take the iterations of stride 2 up to p = 4 (6 in 2D, 9 in 3D p = 3)
   * at a fraction of the cost (2D p = 4 solve 0.57 s against 1.01 s, 3D
   * p = 4 n = 16 0.56 s against 4.4 s: the work per DoF is 2 (p + 1)^2d /
   * stride^d); at p = 5 an overlap of one took 8 iterations and of two 6. */
  if (p <= 1) return 1;
  return p <= 4 ? p : p - 1;
}

/* Block i's dense matrix from A (rows dofs[0..m), sorted) into M (m x m,
 * column-major), by merging each row's sorted columns with dofs. */
static void gather_block(const fea_matrix *A, const fea_index *dofs, int m, double *M) {
  memset(M, 0, (size_t)m * (size_t)m * sizeof *M);
  for (int i = 0; i < m; i++) {
    const fea_index r = dofs[i];
    int j = 0;
    for (fea_index k = A->row_ptr[r]; k < A->row_ptr[r + 1] && j < m; k++) {
      const fea_index c = A->col_idx[k];
      while (j < m && dofs[j] < c) j++;
      if (j < m && dofs[j] == c) M[i + (size_t)j * m] = A->values[k];
    }
  }
}

/* Every block's A_i^-1 from A into s->inv (s's lists and fptr set); the
 * first block that is not positive definite is reported by name. */
static fea_status invert_blocks(fea_context *ctx, fea_mg_schwarz *s, const fea_matrix *A,
                                const fea_operator *op, int level) {
  const fea_index nblk = s->nblocks;
  fea_index bad = -1;
  int bad_info = 0;
  const int threads = ctx->nthreads > 0 ? ctx->nthreads : 1;
  /* LAPACK inside the OpenMP team: on one BLAS thread, or OpenBLAS's own
   * pool spins against the team (smoother.c says more). */
  fea_blas_use_threads(1);
#pragma omp parallel for schedule(dynamic, 16) num_threads(threads)
  for (fea_index i = 0; i < nblk; i++) {
    const int m = (int)(s->ptr[i + 1] - s->ptr[i]);
    double *M = s->inv + s->fptr[i];
    if (op) /* the level operator's own entries (CSR or Kronecker: matrix-free levels) */
      (void)fea_operator_block(op, s->dofs + s->ptr[i], m, M);
    else
      gather_block(A, s->dofs + s->ptr[i], m, M);
    lapack_int info = LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', m, M, m);
    if (info == 0) info = LAPACKE_dpotri(LAPACK_COL_MAJOR, 'L', m, M, m);
    if (info != 0) {
#pragma omp critical(fea_mg_schwarz_bad)
      if (bad < 0 || i < bad) bad = i, bad_info = (int)info;
      continue;
    }
    for (int c = 0; c < m; c++)
      for (int r = 0; r < c; r++) M[r + (size_t)c * m] = M[c + (size_t)r * m];
  }
  if (bad >= 0) {
    const fea_index first = s->dofs[s->ptr[bad]];
    return FEA_ERROR(ctx, FEA_ERR_NOT_POSDEF,
                     "level %d: Schwarz block %lld (first free DoF %lld) is not positive "
                     "definite (LAPACK info %d)",
                     level, (long long)bad, (long long)first, bad_info);
  }
  return FEA_SUCCESS;
}

fea_status fea_mg_schwarz_setup(fea_context *ctx, const fea_problem *pb, const fea_operator *op,
                                int level, fea_mg_schwarz **out) {
  *out = NULL;
  const fea_space *sp = pb->space;
  const int dim = sp->dim;
  const fea_bspline_space *bs = sp->impl;
  fea_index n[3] = {1, 1, 1}, nst[3] = {1, 1, 1};
  int b[3] = {1, 1, 1};
  fea_index *starts[3] = {NULL, NULL, NULL};
  fea_status st = FEA_SUCCESS;
  fea_mg_schwarz *s = calloc(1, sizeof *s);
  FEA_CHECK(s, ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for a Schwarz smoother");
  fea_index nb = 1, total = 0;
  int cc[3] = {1, 1, 1}; /* colors per direction */
  for (int k = 0; k < dim; k++) {
    n[k] = fea_knots_num_functions(&bs->knots[k]);
    b[k] = sp->degree[k] + 1;
    if (b[k] > n[k]) b[k] = (int)n[k];
    const int stride = fea_mg_schwarz_stride(sp->degree[k]);
    nst[k] = starts_1d(n[k], b[k], stride, NULL);
    starts[k] = malloc((size_t)nst[k] * sizeof *starts[k]);
    if (!starts[k]) st = FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for block starts");
    if (st == FEA_SUCCESS) starts_1d(n[k], b[k], stride, starts[k]);
    nb *= nst[k];
    /* Boxes whose indices differ by a multiple of c are disjoint when
     * (c - 1) stride >= b: regular starts are c stride apart, and the last
     * box (moved back) still starts more than (c - 1) stride after the box
     * c before it. */
    cc[k] = (b[k] + stride - 1) / stride + 1;
    if (cc[k] > nst[k]) cc[k] = (int)nst[k];
  }
  int bmax = 1;
  for (int k = 0; k < dim; k++) bmax *= b[k];
  total = nb * bmax; /* an upper bound on the DoF lists */
  if (st == FEA_SUCCESS) {
    s->ptr = malloc(((size_t)nb + 1) * sizeof *s->ptr);
    s->dofs = malloc((size_t)total * sizeof *s->dofs);
    s->fptr = malloc(((size_t)nb + 1) * sizeof *s->fptr);
    s->z = calloc((size_t)pb->num_free + 1, sizeof *s->z);
    s->ncolors = cc[0] * cc[1] * cc[2];
    s->color_ptr = malloc(((size_t)s->ncolors + 1) * sizeof *s->color_ptr);
    if (!s->ptr || !s->dofs || !s->fptr || !s->z || !s->color_ptr)
      st = FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %lld Schwarz blocks",
                     (long long)nb);
  }
  /* The blocks' free DoFs, color by color (box indices j_k = r_k mod cc[k]),
   * blocks without a free DoF dropped. */
  fea_index nblk = 0, at = 0;
  size_t fat = 0;
  for (int color = 0; color < s->ncolors * (st == FEA_SUCCESS); color++) {
    s->color_ptr[color] = nblk;
    const int r0 = color % cc[0], r1 = (color / cc[0]) % cc[1], r2 = color / (cc[0] * cc[1]);
    for (fea_index j2 = r2; j2 < nst[2]; j2 += cc[2])
      for (fea_index j1 = r1; j1 < nst[1]; j1 += cc[1])
        for (fea_index j0 = r0; j0 < nst[0]; j0 += cc[0]) {
          const fea_index o[3] = {starts[0][j0], dim > 1 ? starts[1][j1] : 0,
                                  dim > 2 ? starts[2][j2] : 0};
          const fea_index first = at;
          for (int c = 0; c < (dim > 2 ? b[2] : 1); c++)
            for (int bb = 0; bb < b[1]; bb++)
              for (int a = 0; a < b[0]; a++) {
                const fea_index dof = (o[0] + a) + n[0] * ((o[1] + bb) + n[1] * (o[2] + c));
                const fea_index r = pb->free_index[dof];
                if (r >= 0) s->dofs[at++] = r;
              }
          if (at == first) continue;
          s->ptr[nblk] = first;
          s->fptr[nblk] = fat;
          const int m = (int)(at - first);
          fat += (size_t)m * (size_t)m;
          if (m > s->maxb) s->maxb = m;
          nblk++;
        }
  }
  if (st == FEA_SUCCESS) s->color_ptr[s->ncolors] = nblk;
  for (int k = 0; k < 3; k++) free(starts[k]);
  if (st != FEA_SUCCESS) {
    fea_mg_schwarz_free(s);
    return st;
  }
  s->nblocks = nblk;
  s->ptr[nblk] = at;
  s->fptr[nblk] = fat;
  s->inv = malloc((fat ? fat : 1) * sizeof *s->inv);
  if (!s->inv) {
    fea_mg_schwarz_free(s);
    return FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY,
                     "no memory for the inverses of %lld Schwarz "
                     "blocks (%.0f MB)",
                     (long long)nblk, (double)fat * 8e-6);
  }
  s->bytes = (uint64_t)fat * 8 + (uint64_t)at * 8 + (uint64_t)nblk * 16 +
             (uint64_t)pb->num_free * 8;
  st = invert_blocks(ctx, s, NULL, op, level);
  if (st != FEA_SUCCESS) {
    fea_mg_schwarz_free(s);
    return st;
  }
  *out = s;
  return FEA_SUCCESS;
}

fea_index fea_mg_schwarz_boxes_1d(fea_index n, int p, fea_index *starts) {
  const int b = p + 1 < n ? p + 1 : (int)n;
  return starts_1d(n, b, fea_mg_schwarz_stride(p), starts);
}

/* Blocks given as lists (multipatch levels, where a DoF on an interface is
 * in boxes of several patches, so the boxes' index arithmetic above cannot
 * color them): colored greedily, each block the lowest color none of its
 * DoFs has yet (a 64-bit mask per DoF), then stored color by color. */
fea_status fea_mg_schwarz_setup_lists(fea_context *ctx, fea_index n, const fea_matrix *A,
                                      fea_index nblocks, const fea_index *ptr,
                                      const fea_index *dofs, int level, fea_mg_schwarz **out) {
  *out = NULL;
  for (fea_index i = 0; i < nblocks; i++)
    FEA_CHECK(ptr[i + 1] - ptr[i] <= SCHWARZ_MAX_BLOCK, ctx, FEA_ERR_UNSUPPORTED,
              "level %d: Schwarz block %lld has %lld DoFs, more than the %d of a (p + 1)^3 box "
              "at the highest degree",
              level, (long long)i, (long long)(ptr[i + 1] - ptr[i]), SCHWARZ_MAX_BLOCK);
  fea_mg_schwarz *s = calloc(1, sizeof *s);
  uint64_t *mask = calloc((size_t)n + 1, sizeof *mask);
  int *color = malloc(((size_t)nblocks + 1) * sizeof *color);
  fea_status st = FEA_SUCCESS;
  if (!s || !mask || !color) {
    st = FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %lld Schwarz blocks",
                   (long long)nblocks);
    goto out;
  }
  int ncolors = 0;
  for (fea_index i = 0; i < nblocks && st == FEA_SUCCESS; i++) {
    uint64_t used = 0;
    for (fea_index k = ptr[i]; k < ptr[i + 1]; k++) used |= mask[dofs[k]];
    int c = 0;
    while (c < 64 && (used >> c & 1)) c++;
    if (c == 64) {
      st = FEA_ERROR(ctx, FEA_ERR_UNSUPPORTED,
                     "level %d: Schwarz block %lld meets blocks of 64 colors already", level,
                     (long long)i);
      break;
    }
    color[i] = c;
    if (c + 1 > ncolors) ncolors = c + 1;
    for (fea_index k = ptr[i]; k < ptr[i + 1]; k++) mask[dofs[k]] |= (uint64_t)1 << c;
  }
  const fea_index total = nblocks ? ptr[nblocks] : 0;
  if (st == FEA_SUCCESS) {
    s->ncolors = ncolors;
    s->ptr = malloc(((size_t)nblocks + 1) * sizeof *s->ptr);
    s->dofs = malloc(((size_t)total + 1) * sizeof *s->dofs);
    s->fptr = malloc(((size_t)nblocks + 1) * sizeof *s->fptr);
    s->z = calloc((size_t)n + 1, sizeof *s->z);
    s->color_ptr = malloc(((size_t)ncolors + 1) * sizeof *s->color_ptr);
    if (!s->ptr || !s->dofs || !s->fptr || !s->z || !s->color_ptr)
      st = FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %lld Schwarz blocks",
                     (long long)nblocks);
  }
  fea_index nblk = 0, at = 0;
  size_t fat = 0;
  for (int c = 0; st == FEA_SUCCESS && c < ncolors; c++) {
    s->color_ptr[c] = nblk;
    for (fea_index i = 0; i < nblocks; i++) {
      if (color[i] != c) continue;
      const int m = (int)(ptr[i + 1] - ptr[i]);
      s->ptr[nblk] = at;
      s->fptr[nblk] = fat;
      for (int a = 0; a < m; a++) s->dofs[at++] = dofs[ptr[i] + a];
      fat += (size_t)m * (size_t)m;
      if (m > s->maxb) s->maxb = m;
      nblk++;
    }
  }
  if (st == FEA_SUCCESS) {
    s->color_ptr[ncolors] = nblk;
    s->nblocks = nblk;
    s->ptr[nblk] = at;
    s->fptr[nblk] = fat;
    s->inv = malloc((fat ? fat : 1) * sizeof *s->inv);
    if (!s->inv)
      st = FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY,
                     "no memory for the inverses of %lld Schwarz blocks (%.0f MB)", (long long)nblk,
                     (double)fat * 8e-6);
  }
  if (st == FEA_SUCCESS) {
    s->bytes = (uint64_t)fat * 8 + (uint64_t)at * 8 + (uint64_t)nblk * 16 + (uint64_t)n * 8;
    st = invert_blocks(ctx, s, A, NULL, level);
  }
out:
  free(mask);
  free(color);
  if (st != FEA_SUCCESS) {
    fea_mg_schwarz_free(s);
    return st;
  }
  *out = s;
  return FEA_SUCCESS;
}

/* Block i's contribution: z[d] += A_i^-1 r[d]. */
static inline void block_apply(const fea_mg_schwarz *s, fea_index i, const double *r, double *z,
                               double *loc) {
  const fea_index *d = s->dofs + s->ptr[i];
  const int m = (int)(s->ptr[i + 1] - s->ptr[i]);
  const double *M = s->inv + s->fptr[i];
  double *in = loc, *outv = loc + s->maxb;
  for (int a = 0; a < m; a++) in[a] = r[d[a]], outv[a] = 0.0;
  for (int c = 0; c < m; c++) {
    const double v = in[c];
    const double *col = M + (size_t)c * m;
    for (int a = 0; a < m; a++) outv[a] += col[a] * v;
  }
  for (int a = 0; a < m; a++) z[d[a]] += outv[a];
}

/* z = M^-1 r, color by color: the blocks of one color share no DoF, so
 * they run on the threads without atomics, and the sums come out the same
 * on any number of threads. */
static void schwarz_apply(fea_context *ctx, const fea_mg_schwarz *s, fea_index n, const double *r,
                          double *z) {
  const int threads = ctx->nthreads > 0 ? ctx->nthreads : 1;
  memset(z, 0, (size_t)n * sizeof *z);
  for (int c = 0; c < s->ncolors; c++) {
    const fea_index lo = s->color_ptr[c], hi = s->color_ptr[c + 1];
#pragma omp parallel num_threads(threads) if (threads > 1 && hi - lo >= 64)
    {
      double loc[2 * SCHWARZ_MAX_BLOCK]; /* 11.7 KB of each thread's stack */
#pragma omp for schedule(dynamic, 32)
      for (fea_index i = lo; i < hi; i++) block_apply(s, i, r, z, loc);
    }
  }
}

static double dot(fea_context *ctx, fea_index n, const double *a, const double *b) {
  double s = 0.0;
  const int threads = ctx->nthreads > 0 ? ctx->nthreads : 1;
#pragma omp parallel for reduction(+ : s) num_threads(threads) if (n >= FEA_MG_PARALLEL_MIN)
  for (fea_index i = 0; i < n; i++) s += a[i] * b[i];
  return s;
}

fea_status fea_mg_schwarz_lambda_max(fea_context *ctx, const fea_mg_schwarz *s, fea_operator *op,
                                     fea_index n, int level, double *lambda_max) {
  double *r = malloc(4 * ((size_t)n + 1) * sizeof *r);
  FEA_CHECK(r, ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for the Schwarz estimate's vectors");
  double *z = r + n + 1, *p = z + n + 1, *q = p + n + 1;
  /* A pseudo-random right-hand side (every mode present), seeded by level. */
  uint64_t x = 0x9E3779B97F4A7C15ull * (uint64_t)(level + 1);
  for (fea_index i = 0; i < n; i++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    r[i] = (double)(x >> 11) / 9007199254740992.0 - 0.5;
  }
  double alpha[SCHWARZ_LANCZOS_STEPS], beta[SCHWARZ_LANCZOS_STEPS];
  int steps = 0;
  schwarz_apply(ctx, s, n, r, z);
  memcpy(p, z, (size_t)n * sizeof *p);
  double rz = dot(ctx, n, r, z);
  fea_status st = FEA_SUCCESS;
  for (int j = 0; j < SCHWARZ_LANCZOS_STEPS && rz > 0.0; j++) {
    st = op->impl->apply(op, p, q, 0);
    if (st != FEA_SUCCESS) break;
    const double pq = dot(ctx, n, p, q);
    if (!(pq > 0.0)) break;
    alpha[j] = rz / pq;
    for (fea_index i = 0; i < n; i++) r[i] -= alpha[j] * q[i];
    schwarz_apply(ctx, s, n, r, z);
    const double rz_new = dot(ctx, n, r, z);
    beta[j] = rz_new / rz;
    steps = j + 1;
    if (!(rz_new > 1e-30 * rz)) break; /* converged: the Krylov space is invariant */
    for (fea_index i = 0; i < n; i++) p[i] = z[i] + beta[j] * p[i];
    rz = rz_new;
  }
  free(r);
  FEA_CALL(st);
  FEA_CHECK(steps > 0, ctx, FEA_ERR_NOT_POSDEF,
            "level %d: the Schwarz-preconditioned operator is not positive definite", level);
  /* The Lanczos matrix of CG: T_jj = 1/alpha_j + beta_{j-1}/alpha_{j-1},
   * T_j,j+1 = sqrt(beta_j)/alpha_j. */
  double d[SCHWARZ_LANCZOS_STEPS], e[SCHWARZ_LANCZOS_STEPS];
  for (int j = 0; j < steps; j++) {
    d[j] = 1.0 / alpha[j] + (j > 0 ? beta[j - 1] / alpha[j - 1] : 0.0);
    if (j + 1 < steps) e[j] = sqrt(beta[j]) / alpha[j];
  }
  lapack_int info = LAPACKE_dstev(LAPACK_COL_MAJOR, 'N', steps, d, e, NULL, 1);
  FEA_CHECK(info == 0, ctx, FEA_ERR_BACKEND,
            "level %d: dstev failed on the %d-step Schwarz Lanczos matrix (info %d)", level, steps,
            (int)info);
  *lambda_max = d[steps - 1];
  FEA_CHECK(*lambda_max > 0.0 && isfinite(*lambda_max), ctx, FEA_ERR_NOT_POSDEF,
            "level %d: the Schwarz smoother's largest eigenvalue estimate is %g", level,
            *lambda_max);
  return FEA_SUCCESS;
}

fea_status fea_mg_schwarz_chebyshev(const fea_mg *mg, int l, const double *b, double *x, int degree,
                                    int zero) {
  const fea_mg_level *lv = &mg->levels[l];
  fea_context *ctx = mg->ctx;
  const fea_index n = lv->n;
  const fea_mg_schwarz *s = lv->schwarz;
  const double hi = CHEBYSHEV_SAFETY * lv->lambda_max;
  const double lo = lv->lambda_max / mg->desc.chebyshev_range;
  const double theta = 0.5 * (hi + lo), delta = 0.5 * (hi - lo), sigma = theta / delta;
  double rho = 1.0 / sigma;
  double *r = lv->r, *d = lv->w, *z = s->z;
  const int threads = ctx->nthreads > 0 ? ctx->nthreads : 1;
  if (!zero) FEA_CALL(fea_mg_residual(mg, l, b, x, r));
  schwarz_apply(ctx, s, n, zero ? b : r, z);
#pragma omp parallel for schedule(static) num_threads(threads) if (n >= FEA_MG_PARALLEL_MIN)
  for (fea_index i = 0; i < n; i++) {
    d[i] = z[i] / theta;
    x[i] = zero ? d[i] : x[i] + d[i];
  }
  for (int j = 1; j < degree; j++) {
    FEA_CALL(fea_mg_residual(mg, l, b, x, r));
    schwarz_apply(ctx, s, n, r, z);
    const double rho_new = 1.0 / (2.0 * sigma - rho);
    const double c1 = rho_new * rho, c2 = 2.0 * rho_new / delta;
#pragma omp parallel for schedule(static) num_threads(threads) if (n >= FEA_MG_PARALLEL_MIN)
    for (fea_index i = 0; i < n; i++) {
      d[i] = c1 * d[i] + c2 * z[i];
      x[i] += d[i];
    }
    rho = rho_new;
  }
  return FEA_SUCCESS;
}
