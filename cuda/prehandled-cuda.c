/* /gpu/cuda device M1 of the prehandled solver (prehandled-device.h; docs/prehandled.md,
 * "On the GPU").
 *
 * Create uploads, once, what the host setup built: B, C_1^-1 and Pi^-1 in the
 * working precision (the very values the CPU M1 uses), D and D^T as CSR in
 * the panel precision (D^T transposed here on the host), the C/E/I
 * permutation, the coarse Cholesky factor L0 and sqrt(diag) of L, and A_h
 * (FP64 CSR) for the refinement residuals. The free device memory is checked
 * first (cudaMemGetInfo); Pi^-1, |E|^2 entries, dominates.
 *
 * A solve, all on the context's stream, for k columns at once:
 *   upload b (k columns)                         cudaMemcpy2DAsync
 *   S^T level by level                           one kernel per level, a thread per (parent, column)
 *   L^-1: coarse rows                            gather, cublasDtrsm_64 (nc x k), scatter
 *         other rows                             divide by sqrt(diag)
 *   C/E/I panels in vprec                        gather kernel
 *   (15)-(17)                                    GEMMs as on the CPU (m1-solve.c): C_1^-1 on
 *                                                the I panel seen as blk x (cells k) is one GEMM;
 *                                                D and D^T one thread per (row, column)
 *   back to nodal order, L^-T, S                 as above, reversed
 *   download x                                   cudaMemcpy2DAsync, then one sync
 * GEMMs: FP64 cublasDgemm_64 (FP64 tensor cores on cc 8.0/9.0 by cuBLAS's own
 * choice); FP32 cublasSgemm_64, or cublasGemmEx_64 with
 * CUBLAS_COMPUTE_32F_FAST_TF32 when TF32 was asked for; FP16/BF16
 * cublasGemmEx_64 with 16-bit A and B, FP32 C and CUBLAS_COMPUTE_32F (tensor
 * cores, FP32 accumulation), B's columns scaled by powers of two before the
 * rounding and C's scaled back (schur-m1.h).
 *
 * Refinement: x = 0, r = b; corrections in place on r, x += r (cuBLAS daxpy),
 * r = b - A_h x (FP64 kernel), column norms reduced on the device and read
 * back (k doubles) to decide, exactly the stopping rule of fea_m1_refine.
 *
 * Per-solve workspace is one stream-ordered allocation (checked against the
 * free memory first), freed before returning.
 *
 * Status: compiled, not yet run on a GPU (tests/cuda/test-cuda-prehandled.c
 * is the check). */
#include "fea-config.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "context.h"
#include "cuda-backend.h"
#include "cuda-check.h"
#include "error.h"
#include "kernels/prehandled-launch.h"
#include "prehandled-device.h"

_Static_assert(sizeof(fea_index) == sizeof(int64_t), "indices go up as int64_t");

/* Device memory kept back for cuBLAS's own workspaces. */
#define M1_LIBRARY_RESERVE ((uint64_t)256 << 20)

struct fea_m1_device {
  fea_context *ctx; /* holds a reference */
  fea_ph_grid g;
  fea_index num, nc, ne, ni, cells, blk;
  fea_precision prec, vprec;
  size_t esize, vsize;
  fea_compute compute;
  int scale_rhs;
  int64_t *perm;         /* num */
  double *l0;            /* nc x nc */
  double *sd;            /* num */
  void *b, *cinv, *pinv; /* prec */
  int64_t *d_rp, *d_ci;  /* D: ne + 1, nnz */
  void *d_v;             /* vprec */
  int64_t *t_rp, *t_ci;  /* D^T: ni + 1, nnz */
  void *t_v;
  fea_index d_nnz;
  int64_t *a_rp, *a_ci; /* A_h: num + 1, nnz */
  double *a_v;
  fea_index a_nnz;
  uint64_t bytes;
};

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ------------------------------------------------------------- create/destroy */

static void m1_destroy(fea_m1_device **pm) {
  if (!pm || !*pm) return;
  fea_m1_device *m = *pm;
  struct fea_cuda *b = NULL;
  if (fea_cuda_enter(m->ctx, &b) >= 0) {
    void *ptrs[] = {m->perm, m->l0,   m->sd,   m->b,   m->cinv, m->pinv, m->d_rp, m->d_ci,
                    m->d_v,  m->t_rp, m->t_ci, m->t_v, m->a_rp, m->a_ci, m->a_v};
    for (size_t i = 0; i < sizeof ptrs / sizeof ptrs[0]; i++) fea_cuda_free(m->ctx, ptrs[i]);
    (void)cudaStreamSynchronize(b->stream);
    (void)cudaGetLastError();
  }
  fea_object_release(m->ctx);
  free(m);
  *pm = NULL;
}

/* *dst := a device copy of bytes from host (queued; the caller syncs before
 * the host array may change). */
static fea_status upload(fea_m1_device *m, const struct fea_cuda *b, const void *host, size_t bytes,
                         void **dst) {
  if (bytes == 0) return FEA_SUCCESS;
  FEA_CALL(fea_cuda_malloc(m->ctx, bytes, dst));
  m->bytes += bytes;
  FEA_CALL_CUDA(m->ctx, cudaMemcpyAsync(*dst, host, bytes, cudaMemcpyHostToDevice, b->stream));
  return FEA_SUCCESS;
}

/* D^T (ni x ne) of D (ne x ni, values vs bytes each) by counting: rows of
 * D^T in ascending column order of D, so each row's entries ascend in e. */
typedef struct host_csr {
  int64_t *rp, *ci;
  unsigned char *v;
} host_csr;

static fea_status transpose_d(fea_m1_device *m, const fea_matrix *d, const void *dval,
                              host_csr *t) {
  const size_t vs = m->vsize, nnz = (size_t)d->nnz;
  t->rp = calloc((size_t)m->ni + 1, sizeof *t->rp);
  t->ci = malloc((nnz ? nnz : 1) * sizeof *t->ci);
  t->v = malloc((nnz ? nnz : 1) * vs);
  int64_t *next = malloc(((size_t)m->ni + 1) * sizeof *next);
  if (!t->rp || !t->ci || !t->v || !next) {
    free(next);
    return FEA_ERROR(m->ctx, FEA_ERR_OUT_OF_MEMORY,
                     "no host memory to transpose D (%lld x %lld, %lld entries)", (long long)m->ne,
                     (long long)m->ni, (long long)d->nnz);
  }
  for (size_t p = 0; p < nnz; p++) t->rp[d->col_idx[p] + 1]++;
  for (fea_index i = 0; i < m->ni; i++) t->rp[i + 1] += t->rp[i];
  memcpy(next, t->rp, ((size_t)m->ni + 1) * sizeof *next);
  for (fea_index e = 0; e < m->ne; e++)
    for (fea_index p = d->row_ptr[e]; p < d->row_ptr[e + 1]; p++) {
      const int64_t q = next[d->col_idx[p]]++;
      t->ci[q] = e;
      memcpy(t->v + (size_t)q * vs, (const unsigned char *)dval + (size_t)p * vs, vs);
    }
  free(next);
  return FEA_SUCCESS;
}

static fea_status create_run(fea_m1_device *m, const struct fea_cuda *b,
                             const fea_m1_device_data *d, host_csr *t) {
  fea_context *ctx = m->ctx;
  const uint64_t es = m->esize, vs = m->vsize;
  const uint64_t pinv = es * (uint64_t)m->ne * (uint64_t)m->ne;
  const uint64_t dense = pinv + es * ((uint64_t)m->nc * (uint64_t)m->ne +
                                      (uint64_t)m->blk * (uint64_t)m->blk);
  const uint64_t dnnz = (uint64_t)d->d->nnz, annz = d->A ? (uint64_t)d->A->nnz : 0;
  const uint64_t sparse = 2 * dnnz * (8 + vs) + 8 * ((uint64_t)m->ne + (uint64_t)m->ni + 2);
  const uint64_t nodal = annz * 16 + 8 * ((uint64_t)m->num + 1) + 16 * (uint64_t)m->num +
                         8 * (uint64_t)m->nc * (uint64_t)m->nc;
  const uint64_t need = dense + sparse + nodal + M1_LIBRARY_RESERVE;
  size_t free_b = 0, total_b = 0;
  FEA_CALL_CUDA(ctx, cudaMemGetInfo(&free_b, &total_b));
  FEA_CHECK(need <= (uint64_t)free_b, ctx, FEA_ERR_OUT_OF_MEMORY,
            "the prehandled solver needs %llu bytes of device memory (Pi^-1: %llu bytes, |E| = "
            "%lld in %s; B and C_1^-1: %llu; D and D^T: %llu; A_h, L and the permutation: %llu; "
            "%llu kept for cuBLAS) but GPU %d (%s) has %llu bytes free of %llu; FP16/BF16 halve "
            "Pi^-1, a smaller n / n0 (coarse_cells) shrinks |E|",
            (unsigned long long)need, (unsigned long long)pinv, (long long)m->ne,
            fea_precision_name(m->prec), (unsigned long long)(dense - pinv),
            (unsigned long long)sparse, (unsigned long long)nodal,
            (unsigned long long)M1_LIBRARY_RESERVE, b->device, b->name, (unsigned long long)free_b,
            (unsigned long long)total_b);

  void *p = NULL;
  FEA_CALL(upload(m, b, d->perm, (size_t)m->num * sizeof(int64_t), &p));
  m->perm = p, p = NULL;
  FEA_CALL(upload(m, b, d->sqrt_diag, (size_t)m->num * sizeof(double), &p));
  m->sd = p, p = NULL;
  FEA_CALL(upload(m, b, d->l0, (size_t)(m->nc * m->nc) * sizeof(double), &p));
  m->l0 = p, p = NULL;
  FEA_CALL(upload(m, b, d->b, (size_t)(m->nc * m->ne) * m->esize, &m->b));
  FEA_CALL(upload(m, b, d->cinv, (size_t)(m->blk * m->blk) * m->esize, &m->cinv));
  FEA_CALL(upload(m, b, d->pinv, (size_t)(m->ne * m->ne) * m->esize, &m->pinv));
  /* D and D^T */
  m->d_nnz = d->d->nnz;
  FEA_CALL(upload(m, b, d->d->row_ptr, ((size_t)m->ne + 1) * sizeof(int64_t), &p));
  m->d_rp = p, p = NULL;
  FEA_CALL(upload(m, b, d->d->col_idx, (size_t)m->d_nnz * sizeof(int64_t), &p));
  m->d_ci = p, p = NULL;
  FEA_CALL(upload(m, b, d->dval, (size_t)m->d_nnz * m->vsize, &m->d_v));
  FEA_CALL(transpose_d(m, d->d, d->dval, t));
  FEA_CALL(upload(m, b, t->rp, ((size_t)m->ni + 1) * sizeof(int64_t), &p));
  m->t_rp = p, p = NULL;
  FEA_CALL(upload(m, b, t->ci, (size_t)m->d_nnz * sizeof(int64_t), &p));
  m->t_ci = p, p = NULL;
  FEA_CALL(upload(m, b, t->v, (size_t)m->d_nnz * m->vsize, &m->t_v));
  /* A_h for the refinement */
  if (d->A) {
    m->a_nnz = d->A->nnz;
    FEA_CALL(upload(m, b, d->A->row_ptr, ((size_t)m->num + 1) * sizeof(int64_t), &p));
    m->a_rp = p, p = NULL;
    FEA_CALL(upload(m, b, d->A->col_idx, (size_t)m->a_nnz * sizeof(int64_t), &p));
    m->a_ci = p, p = NULL;
    FEA_CALL(upload(m, b, d->A->values, (size_t)m->a_nnz * sizeof(double), &p));
    m->a_v = p, p = NULL;
  }
  /* The host arrays (and t) are pageable and may go away after return. */
  return fea_cuda_sync(ctx);
}

static fea_status m1_create(fea_context *ctx, const fea_m1_device_data *d, fea_m1_device **out) {
  FEA_CHECK_NULL(d, ctx);
  FEA_CHECK_NULL(out, ctx);
  *out = NULL;
  const fea_index num = d->grid.num;
  FEA_CHECK(d->prec == FEA_F64 || d->prec == FEA_F32 || d->prec == FEA_F16 || d->prec == FEA_BF16,
            ctx, FEA_ERR_UNSUPPORTED, "device M1 works in FP64, FP32, FP16 or BF16, not %d",
            (int)d->prec);
  FEA_CHECK(d->vprec == (d->prec == FEA_F64 ? FEA_F64 : FEA_F32), ctx, FEA_ERR_INVALID_ARG,
            "panel precision %s does not go with matrix precision %s", fea_precision_name(d->vprec),
            fea_precision_name(d->prec));
  FEA_CHECK(d->nc + d->ne + d->ni == num && d->cells * d->blk == d->ni && d->d &&
                d->d->rows == d->ne && d->d->cols == d->ni && d->perm && d->sqrt_diag &&
                (d->nc == 0 || d->l0) && (!d->A || (d->A->rows == num && d->A->cols == num)),
            ctx, FEA_ERR_INVALID_ARG,
            "device M1 data does not fit together: %lld + %lld + %lld nodes of %lld, %lld cells "
            "of %lld",
            (long long)d->nc, (long long)d->ne, (long long)d->ni, (long long)num,
            (long long)d->cells, (long long)d->blk);
  struct fea_cuda *b;
  FEA_CALL(fea_cuda_enter(ctx, &b));
  fea_m1_device *m = calloc(1, sizeof *m);
  FEA_CHECK(m, ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for a device M1");
  m->ctx = ctx;
  fea_object_retain(ctx);
  m->g = d->grid;
  m->num = num, m->nc = d->nc, m->ne = d->ne, m->ni = d->ni, m->cells = d->cells, m->blk = d->blk;
  m->prec = d->prec, m->vprec = d->vprec;
  m->esize = fea_cuda_elem_size(d->prec), m->vsize = fea_cuda_elem_size(d->vprec);
  m->compute = d->compute;
  m->scale_rhs = d->scale_rhs;
  host_csr t = {0};
  fea_status st = create_run(m, b, d, &t);
  free(t.rp), free(t.ci), free(t.v);
  if (st < 0) {
    m1_destroy(&m);
    return st;
  }
  *out = m;
  return FEA_SUCCESS;
}

static uint64_t m1_bytes(const fea_m1_device *m) { return m ? m->bytes : 0; }

/* ------------------------------------------------------------ workspace */

typedef struct ws {
  double *w;                    /* num x k: the nodal columns being solved (in place) */
  double *cw;                   /* nc x k: coarse rows for the TRSM */
  void *wc, *we, *wi, *yi, *re; /* panels in vprec */
  void *h;                      /* 16-bit GEMM operand */
  float *t;                     /* 16-bit GEMM product before scaling back */
  int *ex;                      /* its column exponents */
  double *bd, *xd, *norms;      /* refinement: b, x, column sums of squares */
} ws;

static fea_index imax3(fea_index a, fea_index b, fea_index c) {
  fea_index m = a > b ? a : b;
  return m > c ? m : c;
}

/* Byte offsets of every part for k columns; with base, the pointers. */
static size_t ws_layout(const fea_m1_device *m, fea_index k, int refine, ws *w, char *base) {
  const size_t K = (size_t)k, vs = m->vsize;
  const int half = m->prec == FEA_F16 || m->prec == FEA_BF16;
  const size_t big = (size_t)imax3(m->ni, m->ne, m->nc) * K;
  const size_t cols = (size_t)(m->cells > 1 ? m->cells : 1) * K;
  const size_t sizes[13] = {(size_t)m->num * K * 8,
                            (size_t)m->nc * K * 8,
                            (size_t)m->nc * K * vs,
                            (size_t)m->ne * K * vs,
                            (size_t)m->ni * K * vs,
                            (size_t)m->ni * K * vs,
                            (size_t)m->ne * K * vs,
                            half ? big * 2 : 0,
                            half ? big * 4 : 0,
                            half ? cols * sizeof(int) : 0,
                            refine ? (size_t)m->num * K * 8 : 0,
                            refine ? (size_t)m->num * K * 8 : 0,
                            refine ? K * 8 : 0};
  void **slots[13] = {(void **)&w->w,
                      (void **)&w->cw,
                      &w->wc,
                      &w->we,
                      &w->wi,
                      &w->yi,
                      &w->re,
                      &w->h,
                      (void **)&w->t,
                      (void **)&w->ex,
                      (void **)&w->bd,
                      (void **)&w->xd,
                      (void **)&w->norms};
  size_t off = 0;
  for (int i = 0; i < 13; i++) {
    if (base) *slots[i] = sizes[i] ? (void *)(base + off) : NULL;
    off += fea_cuda_align_up(sizes[i]);
  }
  return off ? off : FEA_CUDA_ALIGN;
}

static fea_status ws_alloc(fea_m1_device *m, const struct fea_cuda *b, fea_index k, int refine,
                           ws *w, void **base) {
  memset(w, 0, sizeof *w);
  const size_t bytes = ws_layout(m, k, refine, w, NULL);
  size_t free_b = 0, total_b = 0;
  FEA_CALL_CUDA(m->ctx, cudaMemGetInfo(&free_b, &total_b));
  FEA_CHECK((uint64_t)bytes + (M1_LIBRARY_RESERVE / 4) <= (uint64_t)free_b, m->ctx,
            FEA_ERR_OUT_OF_MEMORY,
            "a prehandled solve of %lld right-hand sides of %lld unknowns needs %zu bytes of "
            "device workspace (%s) but GPU %d (%s) has %llu bytes free of %llu; solve fewer "
            "columns at a time",
            (long long)k, (long long)m->num, bytes,
            refine ? "with refinement: b, x and r in FP64" : "the columns and their panels",
            b->device, b->name, (unsigned long long)free_b, (unsigned long long)total_b);
  FEA_CALL(fea_cuda_malloc(m->ctx, bytes, base));
  ws_layout(m, k, refine, w, *base);
  return FEA_SUCCESS;
}

/* ------------------------------------------------------------ transforms */

/* L^-1 (t = N) or L^-T (t = T) on the k columns of w->w. */
static fea_status apply_l_inv(fea_m1_device *m, const struct fea_cuda *b, ws *w, fea_index k,
                              cublasOperation_t t) {
  fea_context *ctx = m->ctx;
  const fea_ph_grid *g = &m->g;
  if (m->nc > 0) {
    const double one = 1.0;
    FEA_CALL_CUDA(ctx,
                  fea_cuda_ph_coarse_gather(w->w, m->num, k, g->n, g->n0, g->r, w->cw, b->stream));
    FEA_CALL_CUBLAS(ctx, cublasDtrsm_64(b->blas, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, t,
                                        CUBLAS_DIAG_NON_UNIT, m->nc, k, &one, m->l0, m->nc, w->cw,
                                        m->nc));
    FEA_CALL_CUDA(ctx,
                  fea_cuda_ph_coarse_scatter(w->cw, k, g->n, g->n0, g->r, w->w, m->num, b->stream));
  }
  FEA_CALL_CUDA(ctx, fea_cuda_ph_scale_fine(w->w, m->num, m->num, k, m->sd, b->stream));
  return FEA_SUCCESS;
}

/* w := L^-1 S^T w */
static fea_status forward(fea_m1_device *m, const struct fea_cuda *b, ws *w, fea_index k) {
  const fea_ph_grid *g = &m->g;
  const int p1 = g->element == FEA_PH_P1;
  for (int lv = g->levels; lv >= 1; lv--)
    FEA_CALL_CUDA(m->ctx, fea_cuda_ph_st_level(w->w, m->num, k, g->n, g->r >> lv, p1, b->stream));
  return apply_l_inv(m, b, w, k, CUBLAS_OP_N);
}

/* w := S L^-T w */
static fea_status backward(fea_m1_device *m, const struct fea_cuda *b, ws *w, fea_index k) {
  const fea_ph_grid *g = &m->g;
  const int p1 = g->element == FEA_PH_P1;
  FEA_CALL(apply_l_inv(m, b, w, k, CUBLAS_OP_T));
  for (int lv = 1; lv <= g->levels; lv++)
    FEA_CALL_CUDA(m->ctx, fea_cuda_ph_s_level(w->w, m->num, k, g->n, g->r >> lv, p1, b->stream));
  return FEA_SUCCESS;
}

/* ------------------------------------------------------------ M1 */

/* C := alpha op(A) B + beta C, A (ar x ac) a working-precision matrix, B
 * (inner x bc) and C (rows x bc) panels in vprec; empty inner dimensions
 * leave C as it is (as the CPU's gemm; every such call has beta = 1). */
static fea_status m1_gemm(fea_m1_device *m, const struct fea_cuda *b, ws *w, cublasOperation_t ta,
                          double alpha, const void *A, fea_index ar, fea_index ac, const void *B,
                          fea_index bc, double beta, void *C) {
  fea_context *ctx = m->ctx;
  const int64_t rows = ta == CUBLAS_OP_T ? ac : ar, inner = ta == CUBLAS_OP_T ? ar : ac;
  if (rows == 0 || bc == 0 || inner == 0) return FEA_SUCCESS;
  if (m->prec == FEA_F64) {
    FEA_CALL_CUBLAS(ctx, cublasDgemm_64(b->blas, ta, CUBLAS_OP_N, rows, bc, inner, &alpha,
                                        (const double *)A, ar, (const double *)B, inner, &beta,
                                        (double *)C, rows));
  } else if (m->prec == FEA_F32) {
    const float a = (float)alpha, c = (float)beta;
    if (m->compute == FEA_COMPUTE_TF32)
      FEA_CALL_CUBLAS(ctx,
                      cublasGemmEx_64(b->blas, ta, CUBLAS_OP_N, rows, bc, inner, &a, A, CUDA_R_32F,
                                      ar, B, CUDA_R_32F, inner, &c, C, CUDA_R_32F, rows,
                                      CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_GEMM_DEFAULT));
    else
      FEA_CALL_CUBLAS(ctx, cublasSgemm_64(b->blas, ta, CUBLAS_OP_N, rows, bc, inner, &a,
                                          (const float *)A, ar, (const float *)B, inner, &c,
                                          (float *)C, rows));
  } else {
    const float one = 1.0f, zero = 0.0f;
    const cudaDataType h = fea_cuda_data_type(m->prec);
    FEA_CALL_CUDA(ctx, fea_cuda_ph_scale_to_half((const float *)B, inner, bc, (int)m->prec,
                                                 m->scale_rhs, w->ex, w->h, b->stream));
    FEA_CALL_CUBLAS(ctx, cublasGemmEx_64(b->blas, ta, CUBLAS_OP_N, rows, bc, inner, &one, A, h, ar,
                                         w->h, h, inner, &zero, w->t, CUDA_R_32F, rows,
                                         CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    FEA_CALL_CUDA(ctx, fea_cuda_ph_scale_back(w->t, rows, bc, w->ex, (float)alpha, (float)beta,
                                              (float *)C, b->stream));
  }
  return FEA_SUCCESS;
}

/* x := A^-1 x on the k prehandled columns in w->w (the steps of fea_m1_solve). */
static fea_status m1_steps(fea_m1_device *m, const struct fea_cuda *b, ws *w, fea_index k) {
  fea_context *ctx = m->ctx;
  const fea_index nc = m->nc, ne = m->ne, ni = m->ni, blk = m->blk, cols = m->cells * k;
  const int vp = (int)m->vprec;
  FEA_CALL_CUDA(ctx, fea_cuda_ph_gather(w->w, m->num, k, m->perm, nc, ne, vp, w->wc, w->we, w->wi,
                                        b->stream));
  /* y_I = C^-1 b_I: one GEMM over all cells and right-hand sides. */
  FEA_CALL(m1_gemm(m, b, w, CUBLAS_OP_N, 1.0, m->cinv, blk, blk, w->wi, cols, 0.0, w->yi));
  /* r_E = b_E - B^T b_C - D y_I */
  if (ne > 0)
    FEA_CALL_CUDA(ctx, cudaMemcpyAsync(w->re, w->we, (size_t)(ne * k) * m->vsize,
                                       cudaMemcpyDeviceToDevice, b->stream));
  FEA_CALL(m1_gemm(m, b, w, CUBLAS_OP_T, -1.0, m->b, nc, ne, w->wc, k, 1.0, w->re));
  FEA_CALL_CUDA(ctx, fea_cuda_ph_csr_sub(ne, m->d_rp, m->d_ci, m->d_v, vp, k, w->yi, ni, w->re, ne,
                                         b->stream));
  /* x_E = Pi^-1 r_E */
  FEA_CALL(m1_gemm(m, b, w, CUBLAS_OP_N, 1.0, m->pinv, ne, ne, w->re, k, 0.0, w->we));
  /* x_C = b_C - B x_E */
  FEA_CALL(m1_gemm(m, b, w, CUBLAS_OP_N, -1.0, m->b, nc, ne, w->we, k, 1.0, w->wc));
  /* x_I = C^-1 (b_I - D^T x_E) */
  FEA_CALL_CUDA(ctx, fea_cuda_ph_csr_sub(ni, m->t_rp, m->t_ci, m->t_v, vp, k, w->we, ne, w->wi, ni,
                                         b->stream));
  FEA_CALL(m1_gemm(m, b, w, CUBLAS_OP_N, 1.0, m->cinv, blk, blk, w->wi, cols, 0.0, w->yi));
  FEA_CALL_CUDA(ctx, fea_cuda_ph_scatter(w->wc, w->we, w->yi, m->num, k, m->perm, nc, ne, vp, w->w,
                                         b->stream));
  return FEA_SUCCESS;
}

/* w := S L^-T M1^-1 L^-1 S^T w (queued). */
static fea_status solve_nodal(fea_m1_device *m, const struct fea_cuda *b, ws *w, fea_index k) {
  FEA_CALL(forward(m, b, w, k));
  FEA_CALL(m1_steps(m, b, w, k));
  return backward(m, b, w, k);
}

/* ------------------------------------------------------------ solve */

static fea_status solve_run(fea_m1_device *m, const struct fea_cuda *b, ws *w, fea_index k,
                            const double *bh, fea_index ldb, double *xh, fea_index ldx,
                            double *transform_s, double *dense_s) {
  fea_context *ctx = m->ctx;
  const size_t row = (size_t)m->num * sizeof(double);
  FEA_CALL_CUDA(ctx, cudaMemcpy2DAsync(w->w, row, bh, (size_t)ldb * sizeof(double), row, (size_t)k,
                                       cudaMemcpyHostToDevice, b->stream));
  FEA_CALL(fea_cuda_sync(ctx));
  const double t0 = now_s();
  FEA_CALL(forward(m, b, w, k));
  FEA_CALL(fea_cuda_sync(ctx));
  const double t1 = now_s();
  FEA_CALL(m1_steps(m, b, w, k));
  FEA_CALL(fea_cuda_sync(ctx));
  const double t2 = now_s();
  FEA_CALL(backward(m, b, w, k));
  FEA_CALL(fea_cuda_sync(ctx));
  const double t3 = now_s();
  FEA_CALL_CUDA(ctx, cudaMemcpy2DAsync(xh, (size_t)ldx * sizeof(double), w->w, row, row, (size_t)k,
                                       cudaMemcpyDeviceToHost, b->stream));
  FEA_CALL(fea_cuda_sync(ctx));
  if (transform_s) *transform_s = (t1 - t0) + (t3 - t2);
  if (dense_s) *dense_s = t2 - t1;
  return FEA_SUCCESS;
}

static fea_status m1_solve(fea_m1_device *m, fea_index k, const double *bh, fea_index ldb,
                           double *xh, fea_index ldx, double *transform_s, double *dense_s) {
  FEA_CHECK_NULL(m, NULL);
  fea_context *ctx = m->ctx;
  FEA_CHECK(k >= 1 && bh && xh && ldb >= m->num && ldx >= m->num, ctx, FEA_ERR_INVALID_ARG,
            "device M1 solve of %lld columns with ldb %lld, ldx %lld (%lld unknowns)", (long long)k,
            (long long)ldb, (long long)ldx, (long long)m->num);
  struct fea_cuda *b;
  FEA_CALL(fea_cuda_enter(ctx, &b));
  ws w;
  void *base = NULL;
  FEA_CALL(ws_alloc(m, b, k, 0, &w, &base));
  fea_status st = solve_run(m, b, &w, k, bh, ldb, xh, ldx, transform_s, dense_s);
  /* On failure drain the stream before the stream-ordered free (the error is
   * already recorded; a second one from the sync is not). */
  if (st < 0) (void)cudaStreamSynchronize(b->stream), (void)cudaGetLastError();
  fea_cuda_free(ctx, base);
  return st;
}

/* ------------------------------------------------------------ refinement */

/* ss[j] := ||col j of x||^2 on the host (synchronizes). */
static fea_status column_sumsq(fea_m1_device *m, const struct fea_cuda *b, const double *x,
                               fea_index k, double *dnorms, double *ss) {
  FEA_CALL_CUDA(m->ctx, fea_cuda_ph_col_sumsq(x, m->num, k, dnorms, b->stream));
  FEA_CALL_CUDA(m->ctx, cudaMemcpyAsync(ss, dnorms, (size_t)k * sizeof(double),
                                        cudaMemcpyDeviceToHost, b->stream));
  return fea_cuda_sync(m->ctx);
}

static fea_status refine_run(fea_m1_device *m, const struct fea_cuda *b, ws *w, fea_index k,
                             const double *bh, fea_index ldb, double *xh, fea_index ldx,
                             double rtol, int max_iter, double *bn, double *ss, int *iters,
                             double *relres) {
  fea_context *ctx = m->ctx;
  const size_t row = (size_t)m->num * sizeof(double), all = row * (size_t)k;
  FEA_CALL_CUDA(ctx, cudaMemcpy2DAsync(w->bd, row, bh, (size_t)ldb * sizeof(double), row, (size_t)k,
                                       cudaMemcpyHostToDevice, b->stream));
  FEA_CALL(column_sumsq(m, b, w->bd, k, w->norms, ss)); /* also waits for the upload */
  double rel = 0;
  for (fea_index c = 0; c < k; c++) {
    bn[c] = sqrt(ss[c]);
    if (bn[c] > 0) rel = 1.0;
  }
  /* x_0 = 0, r_0 = b */
  FEA_CALL_CUDA(ctx, cudaMemsetAsync(w->xd, 0, all, b->stream));
  FEA_CALL_CUDA(ctx, cudaMemcpyAsync(w->w, w->bd, all, cudaMemcpyDeviceToDevice, b->stream));
  int it = 0, finite = 1;
  const double one = 1.0;
  while (finite && rel > rtol && it < max_iter) {
    FEA_CALL(solve_nodal(m, b, w, k)); /* r := correction */
    FEA_CALL_CUBLAS(ctx, cublasDaxpy_64(b->blas, m->num * k, &one, w->w, 1, w->xd, 1));
    it++;
    FEA_CALL_CUDA(ctx, fea_cuda_ph_residual(m->num, m->a_rp, m->a_ci, m->a_v, k, w->bd, w->xd, w->w,
                                            b->stream));
    FEA_CALL(column_sumsq(m, b, w->w, k, w->norms, ss));
    rel = 0;
    for (fea_index c = 0; c < k; c++) {
      if (!(bn[c] > 0)) continue;
      const double q = sqrt(ss[c]) / bn[c];
      if (!isfinite(q))
        finite = 0, rel = INFINITY;
      else if (finite)
        rel = fmax(rel, q);
    }
  }
  FEA_CALL_CUDA(ctx, cudaMemcpy2DAsync(xh, (size_t)ldx * sizeof(double), w->xd, row, row, (size_t)k,
                                       cudaMemcpyDeviceToHost, b->stream));
  FEA_CALL(fea_cuda_sync(ctx));
  if (iters) *iters = it;
  if (relres) *relres = rel;
  if (rel > rtol) {
    fea_log(ctx, FEA_LOG_WARN,
            "M1 refinement on /gpu/cuda in %s: relative residual %.3g > %.3g after %d "
            "corrections%s",
            fea_precision_name(m->prec), rel, rtol, it,
            finite ? "" : " (a residual is not finite: stopped)");
    return FEA_WARN_NOT_CONVERGED;
  }
  return FEA_SUCCESS;
}

static fea_status m1_refine(fea_m1_device *m, fea_index k, const double *bh, fea_index ldb,
                            double *xh, fea_index ldx, double rtol, int max_iter, int *iters,
                            double *relres) {
  FEA_CHECK_NULL(m, NULL);
  fea_context *ctx = m->ctx;
  FEA_CHECK(k >= 1 && bh && xh && ldb >= m->num && ldx >= m->num, ctx, FEA_ERR_INVALID_ARG,
            "device M1 refinement of %lld columns with ldb %lld, ldx %lld (%lld unknowns)",
            (long long)k, (long long)ldb, (long long)ldx, (long long)m->num);
  FEA_CHECK(rtol > 0 && isfinite(rtol) && max_iter >= 1, ctx, FEA_ERR_INVALID_ARG,
            "refinement tolerance %g, limit %d", rtol, max_iter);
  FEA_CHECK(m->a_v != NULL || m->a_nnz == 0, ctx, FEA_ERR_STATE,
            "the device M1 was created without A_h: no refinement");
  FEA_CHECK(m->a_rp != NULL, ctx, FEA_ERR_STATE,
            "the device M1 was created without A_h: no refinement");
  if (iters) *iters = 0;
  if (relres) *relres = 0;
  struct fea_cuda *b;
  FEA_CALL(fea_cuda_enter(ctx, &b));
  double *bn = malloc((size_t)k * sizeof *bn), *ss = malloc((size_t)k * sizeof *ss);
  if (!bn || !ss) {
    free(bn), free(ss);
    return FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %lld column norms", (long long)k);
  }
  ws w;
  void *base = NULL;
  fea_status st = ws_alloc(m, b, k, 1, &w, &base);
  if (st >= 0) {
    st = refine_run(m, b, &w, k, bh, ldb, xh, ldx, rtol, max_iter, bn, ss, iters, relres);
    if (st < 0) (void)cudaStreamSynchronize(b->stream), (void)cudaGetLastError();
    fea_cuda_free(ctx, base);
  }
  free(bn), free(ss);
  return st;
}

const struct fea_m1_device_ops fea_cuda_m1_ops = {
    .create = m1_create,
    .solve = m1_solve,
    .refine = m1_refine,
    .bytes = m1_bytes,
    .destroy = m1_destroy,
};
