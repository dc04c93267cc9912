/* /gpu/cuda device M1 of the prehandled solver (prehandled-device.h; docs/prehandled.md,
 * "On the GPU").
 *
 * Create uploads, once, what the host setup built: B, C_1^-1 and Pi^-1 in the
 * working precision (the very values the CPU M1 uses), D and D^T as CSR in
 * the panel precision (D^T transposed here on the host), the C/E/I
 * permutation, the coarse Cholesky factor L0 and sqrt(diag) of L, and A_h
 * (FP64 CSR) for the refinement residuals. The free device memory is checked
 * first (fea_cuda_available_bytes: the driver's free memory and the memory
 * pool's unused bytes); Pi^-1, |E|^2 entries, dominates.
 *
 * Device layout of the dense operands: every column of B (nc rows), C_1^-1
 * (blk rows) and Pi^-1 (ne rows) is padded to a multiple of M1_LD_ALIGN
 * elements (ldc, ldblk, lde), the padding rows zero, so that 16-bit and TF32
 * GEMMs get the aligned leading dimensions cuBLAS's fastest tensor-core
 * kernels need (blk = 225 for n / n0 = 16); the C and E panels use ldc and
 * lde too, the I panel is blk x (cells k) with leading dimension ldblk (D's
 * column indices are remapped to it at upload, D^T's rows are mapped by the
 * kernel). The GEMMs are called with the true sizes: padding rows are never
 * read, and results are those of the unpadded layout. The host data is not
 * copied or changed; uploads are cudaMemcpy2DAsync into the padded layout.
 *
 * A solve, all on the context's stream, for k columns at once:
 *   b into the pinned staging buffer (host memcpy, ldb honoured), one upload
 *   S^T level by level                           one kernel per level, a thread per (parent, column)
 *   L^-1: coarse rows                            gather, cublasDtrsm_64 (nc x k), scatter
 *         other rows                             divide by sqrt(diag)
 *   C/E/I panels in vprec                        gather kernel
 *   (15)-(17)                                    GEMMs as on the CPU (m1-solve.c): C_1^-1 on
 *                                                the I panel seen as blk x (cells k) is one GEMM;
 *                                                D and D^T one thread per (row, column)
 *   back to nodal order, L^-T, S                 as above, reversed
 *   one download into the staging buffer, one sync, host memcpy to x (ldx honoured)
 * GEMMs: FP64 cublasDgemm_64 (FP64 tensor cores on cc 8.0/9.0 by cuBLAS's own
 * choice); FP32 cublasSgemm_64, or cublasGemmEx_64 with
 * CUBLAS_COMPUTE_32F_FAST_TF32 when TF32 was asked for; FP16/BF16
 * cublasGemmEx_64 with 16-bit A and B, FP32 C and CUBLAS_COMPUTE_32F (tensor
 * cores, FP32 accumulation), B's columns scaled by powers of two before the
 * rounding and C's scaled back (schur-m1.h). Every GemmEx call runs with
 * CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION added to the handle's math
 * mode (split-K partial sums stay in FP32), the handle's previous mode put
 * back afterwards on every path: the handle is the context's.
 *
 * Refinement: x = 0, r = b; corrections in place on r, x += r (cuBLAS daxpy),
 * r = b - A_h x (FP64 kernel), column norms of r and x reduced on the device
 * and read back (2 k doubles) to decide, exactly the stopping rule of
 * fea_ph_m1_refine (prehandled/refine-rule.h; ||A_h||_inf taken on the host
 * at create).
 *
 * The solve workspace (one device block, carved per k) and the pinned host
 * staging buffer are kept in the object, grown when a solve needs more (a
 * failed growth keeps the old ones and the object usable), freed by destroy;
 * the workspace counts in the object's device bytes. A failed solve drains
 * the stream before returning, so no copy into the kept buffers is still in
 * flight when the next solve starts.
 *
 * Status: tests/cuda/test-cuda-prehandled.c passed on an NVIDIA H100 and an
 * H200 before the padding, the math mode, the kept workspace and the pinned
 * staging were added; those changes are compiled, not yet run on a GPU. */
#include "fea-config.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/context.h"
#include "cuda-backend.h"
#include "cuda-check.h"
#include "internal/error.h"
#include "kernels/prehandled-launch.h"
#include "internal/prehandled-device.h"
#include "prehandled-pi.h"

_Static_assert(sizeof(fea_index) == sizeof(int64_t), "indices go up as int64_t");

/* Device memory kept back for cuBLAS's own workspaces. */
#define M1_LIBRARY_RESERVE ((uint64_t)256 << 20)

/* The padded leading dimensions (M1_LD_ALIGN, prehandled-pi.h). */
static fea_index ld_pad(fea_index rows) { return fea_ph_m1_ld_pad(rows); }

struct fea_ph_m1_device {
  fea_context *ctx; /* holds a reference */
  fea_ph_grid g;
  fea_index num, nc, ne, ni, cells, blk;
  fea_precision prec, vprec;
  size_t esize, vsize;
  fea_compute compute;
  int scale_rhs;
  int64_t *perm;             /* num */
  double *l0;                /* nc x nc */
  double *sd;                /* num */
  fea_index ldc, lde, ldblk; /* nc, ne, blk padded by ld_pad: B, Pi^-1, C_1^-1 and panels */
  void *b, *cinv, *pinv;     /* prec, leading dimensions ldc, lde, ldblk */
  int64_t *d_rp, *d_ci;      /* D: ne + 1, nnz (columns as rows of the padded I panel) */
  void *d_v;                 /* vprec */
  int64_t *t_rp, *t_ci;      /* D^T: ni + 1, nnz */
  void *t_v;
  fea_index d_nnz;
  int64_t *a_rp, *a_ci; /* A_h: num + 1, nnz */
  double *a_v;
  fea_index a_nnz;
  double a_norm_inf; /* ||A_h||_inf, the scale of the refinement's floor */
  uint64_t bytes;    /* the uploads above, padding included */
  void *work;        /* solve workspace (ws_layout), kept between solves */
  size_t work_bytes; /* its size, 0 without one */
  double *pin;       /* pinned host staging for b and x: num k doubles */
  size_t pin_bytes;  /* its size */
};

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ------------------------------------------------------------- create/destroy */

static void m1_destroy(fea_ph_m1_device **pm) {
  if (!pm || !*pm) return;
  fea_ph_m1_device *m = *pm;
  struct fea_cuda *b = NULL;
  if (fea_cuda_enter(m->ctx, &b) >= 0) {
    void *ptrs[] = {m->perm, m->l0,   m->sd,   m->b,   m->cinv, m->pinv, m->d_rp, m->d_ci,
                    m->d_v,  m->t_rp, m->t_ci, m->t_v, m->a_rp, m->a_ci, m->a_v,  m->work};
    for (size_t i = 0; i < sizeof ptrs / sizeof ptrs[0]; i++) fea_cuda_free(m->ctx, ptrs[i]);
    (void)cudaStreamSynchronize(b->stream);
    (void)cudaGetLastError();
  }
  /* No copy from or to it is in flight: every solve ends with a sync or a drain. */
  if (m->pin) (void)cudaFreeHost(m->pin);
  (void)cudaGetLastError();
  fea_object_release(m->ctx);
  free(m);
  *pm = NULL;
}

/* *dst := a device copy of the rows x cols column-major host array of es-byte
 * elements (leading dimension rows on the host) with leading dimension ld >=
 * rows on the device, the rows past `rows` zero (queued; the caller syncs
 * before the host array may change). *dst is set and the bytes counted only
 * when everything was queued: on an error the block is freed here. */
static fea_status upload_2d(fea_ph_m1_device *m, const struct fea_cuda *b, const void *host,
                            size_t es, size_t rows, size_t cols, size_t ld, void **dst) {
  const size_t width = rows * es, pitch = ld * es, bytes = pitch * cols;
  if (bytes == 0) return FEA_SUCCESS;
  void *q = NULL;
  FEA_CALL(fea_cuda_malloc(m->ctx, bytes, &q));
  cudaError_t e = cudaSuccess;
  const char *what = "cudaMemset2DAsync";
  if (pitch > width)
    e = cudaMemset2DAsync((char *)q + width, pitch, 0, pitch - width, cols, b->stream);
  if (e == cudaSuccess && width > 0) {
    what = pitch == width ? "cudaMemcpyAsync" : "cudaMemcpy2DAsync";
    e = pitch == width ? cudaMemcpyAsync(q, host, bytes, cudaMemcpyHostToDevice, b->stream)
                       : cudaMemcpy2DAsync(q, pitch, host, width, width, cols,
                                           cudaMemcpyHostToDevice, b->stream);
  }
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    fea_cuda_free(m->ctx, q);
    return FEA_ERROR(m->ctx, fea_cuda_status_of(e),
                     "%s of %zu x %zu elements of %zu bytes to GPU %d failed: %s (%s)", what, rows,
                     cols, es, b->device, cudaGetErrorName(e), cudaGetErrorString(e));
  }
  *dst = q;
  m->bytes += bytes;
  return FEA_SUCCESS;
}

/* *dst := a device copy of bytes from host (as upload_2d). */
static fea_status upload(fea_ph_m1_device *m, const struct fea_cuda *b, const void *host,
                         size_t bytes, void **dst) {
  return upload_2d(m, b, host, 1, bytes, 1, bytes, dst);
}

/* D^T (ni x ne) of D (ne x ni, values vs bytes each) by counting: rows of
 * D^T in ascending column order of D, so each row's entries ascend in e. */
typedef struct host_csr {
  int64_t *rp, *ci;
  unsigned char *v;
  int64_t *dci; /* D's column indices remapped to the padded I panel (when ldblk > blk) */
} host_csr;

static fea_status transpose_d(fea_ph_m1_device *m, const fea_matrix *d, const void *dval,
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

static fea_status create_run(fea_ph_m1_device *m, const struct fea_cuda *b,
                             const fea_ph_m1_device_data *d, host_csr *t) {
  fea_context *ctx = m->ctx;
  const uint64_t es = m->esize, vs = m->vsize;
  const uint64_t pinv = es * (uint64_t)m->lde * (uint64_t)m->ne;
  const uint64_t dense = pinv + es * ((uint64_t)m->ldc * (uint64_t)m->ne +
                                      (uint64_t)m->ldblk * (uint64_t)m->blk);
  const uint64_t dnnz = (uint64_t)d->d->nnz, annz = d->A ? (uint64_t)d->A->nnz : 0;
  const uint64_t sparse = 2 * dnnz * (8 + vs) + 8 * ((uint64_t)m->ne + (uint64_t)m->ni + 2);
  const uint64_t nodal = annz * 16 + 8 * ((uint64_t)m->num + 1) + 16 * (uint64_t)m->num +
                         8 * (uint64_t)m->nc * (uint64_t)m->nc;
  /* Pi^-1 formed on the device (pi_inverse) is there already. */
  const uint64_t need = dense + sparse + nodal + M1_LIBRARY_RESERVE - (d->pinv_device ? pinv : 0);
  size_t free_b = 0, total_b = 0;
  FEA_CALL(fea_cuda_available_bytes(ctx, &free_b, &total_b));
  FEA_CHECK(
      need <= (uint64_t)free_b, ctx, FEA_ERR_OUT_OF_MEMORY,
      "the prehandled solver needs %llu bytes of device memory (Pi^-1: %llu bytes, |E| = "
      "%lld in %s, columns padded to %d elements; B and C_1^-1: %llu; D and D^T: %llu; "
      "A_h, L and the permutation: %llu; "
      "%llu kept for cuBLAS) but GPU %d (%s) has %llu bytes free of %llu (with the memory "
      "pool's unused bytes); FP16/BF16 halve Pi^-1, a smaller n / n0 (coarse_cells) shrinks |E|",
      (unsigned long long)need, (unsigned long long)pinv, (long long)m->ne,
      fea_precision_name(m->prec), M1_LD_ALIGN, (unsigned long long)(dense - pinv),
      (unsigned long long)sparse, (unsigned long long)nodal, (unsigned long long)M1_LIBRARY_RESERVE,
      b->device, b->name, (unsigned long long)free_b, (unsigned long long)total_b);

  void *p = NULL;
  FEA_CALL(upload(m, b, d->perm, (size_t)m->num * sizeof(int64_t), &p));
  m->perm = p, p = NULL;
  FEA_CALL(upload(m, b, d->sqrt_diag, (size_t)m->num * sizeof(double), &p));
  m->sd = p, p = NULL;
  FEA_CALL(upload(m, b, d->l0, (size_t)(m->nc * m->nc) * sizeof(double), &p));
  m->l0 = p, p = NULL;
  /* The dense operands in the padded layout. */
  FEA_CALL(upload_2d(m, b, d->b, m->esize, (size_t)m->nc, (size_t)m->ne, (size_t)m->ldc, &m->b));
  FEA_CALL(upload_2d(m, b, d->cinv, m->esize, (size_t)m->blk, (size_t)m->blk, (size_t)m->ldblk,
                     &m->cinv));
  if (d->pinv_device) { /* taken over, not copied */
    fea_ph_m1_device_pinv *pd = d->pinv_device;
    FEA_CHECK(pd->data && pd->ne == m->ne && pd->lde == m->lde && pd->prec == m->prec, ctx,
              FEA_ERR_INVALID_ARG,
              "the device's Pi^-1 (%lld, ld %lld, %s) does not fit this M1 (%lld, ld %lld, %s)",
              (long long)pd->ne, (long long)pd->lde, fea_precision_name(pd->prec), (long long)m->ne,
              (long long)m->lde, fea_precision_name(m->prec));
    m->pinv = pd->data;
    pd->data = NULL;
    m->bytes += pd->bytes;
  } else {
    FEA_CALL(upload_2d(m, b, d->pinv, m->esize, (size_t)m->ne, (size_t)m->ne, (size_t)m->lde,
                       &m->pinv));
  }
  /* D (its columns index the I panel: interior q at (q / blk) ldblk + q % blk) and D^T */
  m->d_nnz = d->d->nnz;
  const int64_t *dci = d->d->col_idx;
  if (m->ldblk != m->blk && m->d_nnz > 0) {
    t->dci = malloc((size_t)m->d_nnz * sizeof *t->dci);
    FEA_CHECK(t->dci, ctx, FEA_ERR_OUT_OF_MEMORY, "no host memory to remap D's %lld columns",
              (long long)m->d_nnz);
    for (fea_index q = 0; q < m->d_nnz; q++) {
      const int64_t c = dci[q];
      t->dci[q] = c / m->blk * m->ldblk + c % m->blk;
    }
    dci = t->dci;
  }
  FEA_CALL(upload(m, b, d->d->row_ptr, ((size_t)m->ne + 1) * sizeof(int64_t), &p));
  m->d_rp = p, p = NULL;
  FEA_CALL(upload(m, b, dci, (size_t)m->d_nnz * sizeof(int64_t), &p));
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
    m->a_norm_inf = fea_ph_csr_norm_inf(d->A);
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

static fea_status m1_create_checked(fea_context *ctx, const fea_ph_m1_device_data *d,
                                    fea_ph_m1_device **out) {
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
  fea_ph_m1_device *m = calloc(1, sizeof *m);
  FEA_CHECK(m, ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for a device M1");
  m->ctx = ctx;
  fea_object_retain(ctx);
  m->g = d->grid;
  m->num = num, m->nc = d->nc, m->ne = d->ne, m->ni = d->ni, m->cells = d->cells, m->blk = d->blk;
  m->ldc = ld_pad(d->nc), m->lde = ld_pad(d->ne), m->ldblk = ld_pad(d->blk);
  m->prec = d->prec, m->vprec = d->vprec;
  m->esize = fea_cuda_elem_size(d->prec), m->vsize = fea_cuda_elem_size(d->vprec);
  m->compute = d->compute;
  m->scale_rhs = d->scale_rhs;
  host_csr t = {0};
  fea_status st = create_run(m, b, d, &t);
  free(t.rp), free(t.ci), free(t.v), free(t.dci);
  if (st < 0) {
    m1_destroy(&m);
    return st;
  }
  *out = m;
  return FEA_SUCCESS;
}

/* create takes d->pinv_device over whatever it returns. */
static fea_status m1_create(fea_context *ctx, const fea_ph_m1_device_data *d,
                            fea_ph_m1_device **out) {
  FEA_CHECK_NULL(d, ctx);
  fea_ph_m1_device_pinv *pd = d->pinv_device;
  const fea_status st = m1_create_checked(ctx, d, out);
  fea_cuda_pi_release(&pd); /* frees the wrapper; its data is m's now, unless create failed */
  return st;
}

static uint64_t m1_bytes(const fea_ph_m1_device *m) {
  return m ? m->bytes + (uint64_t)m->work_bytes : 0;
}

/* ------------------------------------------------------------ workspace */

typedef struct ws {
  double *w;                    /* num x k: the nodal columns being solved (in place) */
  double *cw;                   /* nc x k: coarse rows for the TRSM */
  void *wc, *we, *wi, *yi, *re; /* panels in vprec: ld ldc, lde, lde; I panels blk x (cells k),
                                   ld ldblk */
  void *h;                      /* 16-bit GEMM operand (ld: its rows padded) */
  float *t;                     /* 16-bit GEMM product before scaling back (the same) */
  int *ex;                      /* its column exponents */
  double *bd, *xd, *norms;      /* refinement: b, x, column sums of squares */
} ws;

static size_t zmax3(size_t a, size_t b, size_t c) {
  size_t m = a > b ? a : b;
  return m > c ? m : c;
}

/* Byte offsets of every part for k columns; with base, the pointers. The
 * total grows with k and with refine, so a block laid out for (k, refine)
 * holds every smaller layout. */
static size_t ws_layout(const fea_ph_m1_device *m, fea_index k, int refine, ws *w, char *base) {
  const size_t K = (size_t)k, vs = m->vsize;
  const int half = m->prec == FEA_F16 || m->prec == FEA_BF16;
  const size_t lc = (size_t)m->ldc, le = (size_t)m->lde, li = (size_t)m->cells * (size_t)m->ldblk;
  /* Every 16-bit GEMM operand and product fits li, le or lc rows by k columns. */
  const size_t big = zmax3(li, le, lc) * K;
  const size_t cols = (size_t)(m->cells > 1 ? m->cells : 1) * K;
  const size_t sizes[13] = {(size_t)m->num * K * 8,
                            (size_t)m->nc * K * 8,
                            lc * K * vs,
                            le * K * vs,
                            li * K * vs,
                            li * K * vs,
                            le * K * vs,
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

/* *w := the kept workspace laid out for k columns (refine: with b, x and the
 * norms), grown to exactly what they need first when it is smaller. The new
 * block is allocated before the old one is freed, so a failed growth leaves
 * the old workspace in place. */
static fea_status ws_get(fea_ph_m1_device *m, const struct fea_cuda *b, fea_index k, int refine,
                         ws *w) {
  memset(w, 0, sizeof *w);
  const size_t bytes = ws_layout(m, k, refine, w, NULL);
  if (bytes > m->work_bytes) {
    size_t free_b = 0, total_b = 0;
    FEA_CALL(fea_cuda_available_bytes(m->ctx, &free_b, &total_b));
    FEA_CHECK(
        (uint64_t)bytes + (M1_LIBRARY_RESERVE / 4) <= (uint64_t)free_b, m->ctx,
        FEA_ERR_OUT_OF_MEMORY,
        "a prehandled solve of %lld right-hand sides of %lld unknowns needs %zu bytes of "
        "device workspace (%s; %zu held now) but GPU %d (%s) has %llu bytes free of %llu (with "
        "the memory pool's unused bytes); solve fewer columns at a time",
        (long long)k, (long long)m->num, bytes,
        refine ? "with refinement: b, x and r in FP64" : "the columns and their panels",
        m->work_bytes, b->device, b->name, (unsigned long long)free_b, (unsigned long long)total_b);
    void *p = NULL;
    FEA_CALL(fea_cuda_malloc(m->ctx, bytes, &p));
    /* Stream-ordered: every earlier solve's work on the old block comes first. */
    fea_cuda_free(m->ctx, m->work);
    m->work = p;
    m->work_bytes = bytes;
  }
  ws_layout(m, k, refine, w, m->work);
  return FEA_SUCCESS;
}

/* m->pin := pinned host memory of at least k nodal columns; a failed growth
 * keeps the old buffer. Called only when no copy uses the buffer (solves end
 * with a sync or a drain). */
static fea_status pin_get(fea_ph_m1_device *m, fea_index k) {
  const size_t bytes = (size_t)m->num * (size_t)k * sizeof(double);
  if (bytes <= m->pin_bytes) return FEA_SUCCESS;
  void *p = NULL;
  const cudaError_t e = cudaMallocHost(&p, bytes);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    return FEA_ERROR(m->ctx, fea_cuda_status_of(e),
                     "cudaMallocHost() of %zu bytes (staging for %lld right-hand sides of %lld "
                     "unknowns) failed: %s (%s); solve fewer columns at a time",
                     bytes, (long long)k, (long long)m->num, cudaGetErrorName(e),
                     cudaGetErrorString(e));
  }
  if (m->pin) (void)cudaFreeHost(m->pin);
  (void)cudaGetLastError();
  m->pin = p;
  m->pin_bytes = bytes;
  return FEA_SUCCESS;
}

/* The k columns of host (ld ld) into the staging buffer (ld num), and back. */
static void stage_in(const fea_ph_m1_device *m, fea_index k, const double *host, fea_index ld) {
  const size_t col = (size_t)m->num * sizeof(double);
  if (ld == m->num)
    memcpy(m->pin, host, col * (size_t)k);
  else
    for (fea_index j = 0; j < k; j++)
      memcpy(m->pin + (size_t)j * (size_t)m->num, host + (size_t)j * (size_t)ld, col);
}

static void stage_out(const fea_ph_m1_device *m, fea_index k, double *host, fea_index ld) {
  const size_t col = (size_t)m->num * sizeof(double);
  if (ld == m->num)
    memcpy(host, m->pin, col * (size_t)k);
  else
    for (fea_index j = 0; j < k; j++)
      memcpy(host + (size_t)j * (size_t)ld, m->pin + (size_t)j * (size_t)m->num, col);
}

/* ------------------------------------------------------------ transforms */

/* L^-1 (t = N) or L^-T (t = T) on the k columns of w->w. */
static fea_status apply_l_inv(fea_ph_m1_device *m, const struct fea_cuda *b, ws *w, fea_index k,
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
static fea_status forward(fea_ph_m1_device *m, const struct fea_cuda *b, ws *w, fea_index k) {
  const fea_ph_grid *g = &m->g;
  const int p1 = g->element == FEA_PH_P1;
  for (int lv = g->levels; lv >= 1; lv--)
    FEA_CALL_CUDA(m->ctx, fea_cuda_ph_st_level(w->w, m->num, k, g->n, g->r >> lv, p1, b->stream));
  return apply_l_inv(m, b, w, k, CUBLAS_OP_N);
}

/* w := S L^-T w */
static fea_status backward(fea_ph_m1_device *m, const struct fea_cuda *b, ws *w, fea_index k) {
  const fea_ph_grid *g = &m->g;
  const int p1 = g->element == FEA_PH_P1;
  FEA_CALL(apply_l_inv(m, b, w, k, CUBLAS_OP_T));
  for (int lv = 1; lv <= g->levels; lv++)
    FEA_CALL_CUDA(m->ctx, fea_cuda_ph_s_level(w->w, m->num, k, g->n, g->r >> lv, p1, b->stream));
  return FEA_SUCCESS;
}

/* ------------------------------------------------------------ M1 */

/* cublasGemmEx_64 with FP32 alpha, beta and compute type ct, its reductions
 * kept in the compute type: CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION
 * is added to the mode the call needs (CUBLAS_DEFAULT_MATH, or
 * CUBLAS_TF32_TENSOR_OP_MATH for TF32) and the handle's previous math mode is
 * put back on every path (the handle is the context's, shared with other ops). */
static fea_status gemm_ex(fea_context *ctx, cublasHandle_t h, cublasOperation_t ta, int64_t rows,
                          int64_t cols, int64_t inner, const float *alpha, const void *A,
                          cudaDataType at, int64_t lda, const void *B, cudaDataType bt, int64_t ldb,
                          const float *beta, void *C, int64_t ldc, cublasComputeType_t ct) {
  cublasMath_t old = CUBLAS_DEFAULT_MATH;
  const int base = ct == CUBLAS_COMPUTE_32F_FAST_TF32 ? CUBLAS_TF32_TENSOR_OP_MATH
                                                      : CUBLAS_DEFAULT_MATH;
  FEA_CALL_CUBLAS(ctx, cublasGetMathMode(h, &old));
  FEA_CALL_CUBLAS(
      ctx,
      cublasSetMathMode(h, (cublasMath_t)(base |
                                          (int)CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION)));
  const cublasStatus_t st = cublasGemmEx_64(h, ta, CUBLAS_OP_N, rows, cols, inner, alpha, A, at,
                                            lda, B, bt, ldb, beta, C, CUDA_R_32F, ldc, ct,
                                            CUBLAS_GEMM_DEFAULT);
  const cublasStatus_t back = cublasSetMathMode(h, old);
  const cublasStatus_t bad = st != CUBLAS_STATUS_SUCCESS ? st : back;
  if (bad != CUBLAS_STATUS_SUCCESS) {
    (void)cudaGetLastError();
    return FEA_ERROR(ctx, fea_cublas_status_of(bad),
                     "%s (%lld x %lld x %lld, A and B of type %d, compute type %d) failed: %s (%s)",
                     st != CUBLAS_STATUS_SUCCESS ? "cublasGemmEx_64"
                                                 : "cublasSetMathMode after cublasGemmEx_64",
                     (long long)rows, (long long)cols, (long long)inner, (int)at, (int)ct,
                     cublasGetStatusName(bad), cublasGetStatusString(bad));
  }
  return FEA_SUCCESS;
}

/* C := alpha op(A) B + beta C, A (ar x ac, ld lda) a working-precision
 * matrix, B (inner x bc, ld ldb) and C (rows x bc, ld ldc) panels in vprec;
 * empty inner dimensions leave C as it is (as the CPU's gemm; every such call
 * has beta = 1). The 16-bit operand and product in w use ld_pad(inner) and
 * ld_pad(rows). */
static fea_status m1_gemm(fea_ph_m1_device *m, const struct fea_cuda *b, ws *w,
                          cublasOperation_t ta, double alpha, const void *A, fea_index ar,
                          fea_index ac, fea_index lda, const void *B, fea_index ldb, fea_index bc,
                          double beta, void *C, fea_index ldc) {
  fea_context *ctx = m->ctx;
  const int64_t rows = ta == CUBLAS_OP_T ? ac : ar, inner = ta == CUBLAS_OP_T ? ar : ac;
  if (rows == 0 || bc == 0 || inner == 0) return FEA_SUCCESS;
  if (m->prec == FEA_F64) {
    FEA_CALL_CUBLAS(ctx, cublasDgemm_64(b->blas, ta, CUBLAS_OP_N, rows, bc, inner, &alpha,
                                        (const double *)A, lda, (const double *)B, ldb, &beta,
                                        (double *)C, ldc));
  } else if (m->prec == FEA_F32) {
    const float a = (float)alpha, c = (float)beta;
    if (m->compute == FEA_COMPUTE_TF32)
      FEA_CALL(gemm_ex(ctx, b->blas, ta, rows, bc, inner, &a, A, CUDA_R_32F, lda, B, CUDA_R_32F,
                       ldb, &c, C, ldc, CUBLAS_COMPUTE_32F_FAST_TF32));
    else
      FEA_CALL_CUBLAS(ctx, cublasSgemm_64(b->blas, ta, CUBLAS_OP_N, rows, bc, inner, &a,
                                          (const float *)A, lda, (const float *)B, ldb, &c,
                                          (float *)C, ldc));
  } else {
    const float one = 1.0f, zero = 0.0f;
    const cudaDataType h = fea_cuda_data_type(m->prec);
    const int64_t ldh = ld_pad(inner), ldt = ld_pad(rows);
    FEA_CALL_CUDA(ctx, fea_cuda_ph_scale_to_half((const float *)B, inner, bc, ldb, (int)m->prec,
                                                 m->scale_rhs, w->ex, w->h, ldh, b->stream));
    FEA_CALL(gemm_ex(ctx, b->blas, ta, rows, bc, inner, &one, A, h, lda, w->h, h, ldh, &zero, w->t,
                     ldt, CUBLAS_COMPUTE_32F));
    FEA_CALL_CUDA(ctx, fea_cuda_ph_scale_back(w->t, rows, bc, ldt, w->ex, (float)alpha, (float)beta,
                                              (float *)C, ldc, b->stream));
  }
  return FEA_SUCCESS;
}

/* x := A^-1 x on the k prehandled columns in w->w (the steps of fea_ph_m1_solve). */
static fea_status m1_steps(fea_ph_m1_device *m, const struct fea_cuda *b, ws *w, fea_index k) {
  fea_context *ctx = m->ctx;
  const fea_index nc = m->nc, ne = m->ne, ni = m->ni, blk = m->blk, cols = m->cells * k;
  const fea_index lc = m->ldc, le = m->lde, lb = m->ldblk, li = m->cells * m->ldblk;
  const int vp = (int)m->vprec;
  FEA_CALL_CUDA(ctx, fea_cuda_ph_gather(w->w, m->num, k, m->perm, nc, ne, vp, w->wc, lc, w->we, le,
                                        w->wi, blk, lb, li, b->stream));
  /* y_I = C^-1 b_I: one GEMM over all cells and right-hand sides. */
  FEA_CALL(m1_gemm(m, b, w, CUBLAS_OP_N, 1.0, m->cinv, blk, blk, lb, w->wi, lb, cols, 0.0, w->yi,
                   lb));
  /* r_E = b_E - B^T b_C - D y_I */
  if (ne > 0)
    FEA_CALL_CUDA(ctx, cudaMemcpyAsync(w->re, w->we, (size_t)(le * k) * m->vsize,
                                       cudaMemcpyDeviceToDevice, b->stream));
  FEA_CALL(m1_gemm(m, b, w, CUBLAS_OP_T, -1.0, m->b, nc, ne, lc, w->wc, lc, k, 1.0, w->re, le));
  FEA_CALL_CUDA(ctx, fea_cuda_ph_csr_sub(ne, m->d_rp, m->d_ci, m->d_v, vp, k, w->yi, li, w->re, le,
                                         0, 0, b->stream));
  /* x_E = Pi^-1 r_E */
  FEA_CALL(m1_gemm(m, b, w, CUBLAS_OP_N, 1.0, m->pinv, ne, ne, le, w->re, le, k, 0.0, w->we, le));
  /* x_C = b_C - B x_E */
  FEA_CALL(m1_gemm(m, b, w, CUBLAS_OP_N, -1.0, m->b, nc, ne, lc, w->we, le, k, 1.0, w->wc, lc));
  /* x_I = C^-1 (b_I - D^T x_E): D^T's rows are interior entries, mapped into the I panel. */
  FEA_CALL_CUDA(ctx, fea_cuda_ph_csr_sub(ni, m->t_rp, m->t_ci, m->t_v, vp, k, w->we, le, w->wi, li,
                                         blk, lb, b->stream));
  FEA_CALL(m1_gemm(m, b, w, CUBLAS_OP_N, 1.0, m->cinv, blk, blk, lb, w->wi, lb, cols, 0.0, w->yi,
                   lb));
  FEA_CALL_CUDA(ctx, fea_cuda_ph_scatter(w->wc, lc, w->we, le, w->yi, blk, lb, li, m->num, k,
                                         m->perm, nc, ne, vp, w->w, b->stream));
  return FEA_SUCCESS;
}

/* w := S L^-T M1^-1 L^-1 S^T w (queued). */
static fea_status solve_nodal(fea_ph_m1_device *m, const struct fea_cuda *b, ws *w, fea_index k) {
  FEA_CALL(forward(m, b, w, k));
  FEA_CALL(m1_steps(m, b, w, k));
  return backward(m, b, w, k);
}

/* ------------------------------------------------------------ solve */

static fea_status solve_run(fea_ph_m1_device *m, const struct fea_cuda *b, ws *w, fea_index k,
                            const double *bh, fea_index ldb, double *xh, fea_index ldx,
                            double *transform_s, double *dense_s) {
  fea_context *ctx = m->ctx;
  const size_t all = (size_t)m->num * (size_t)k * sizeof(double);
  stage_in(m, k, bh, ldb);
  FEA_CALL_CUDA(ctx, cudaMemcpyAsync(w->w, m->pin, all, cudaMemcpyHostToDevice, b->stream));
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
  FEA_CALL_CUDA(ctx, cudaMemcpyAsync(m->pin, w->w, all, cudaMemcpyDeviceToHost, b->stream));
  FEA_CALL(fea_cuda_sync(ctx));
  stage_out(m, k, xh, ldx);
  if (transform_s) *transform_s = (t1 - t0) + (t3 - t2);
  if (dense_s) *dense_s = t2 - t1;
  return FEA_SUCCESS;
}

static fea_status m1_solve(fea_ph_m1_device *m, fea_index k, const double *bh, fea_index ldb,
                           double *xh, fea_index ldx, double *transform_s, double *dense_s) {
  FEA_CHECK_NULL(m, NULL);
  fea_context *ctx = m->ctx;
  FEA_CHECK(k >= 1 && bh && xh && ldb >= m->num && ldx >= m->num, ctx, FEA_ERR_INVALID_ARG,
            "device M1 solve of %lld columns with ldb %lld, ldx %lld (%lld unknowns)", (long long)k,
            (long long)ldb, (long long)ldx, (long long)m->num);
  struct fea_cuda *b;
  FEA_CALL(fea_cuda_enter(ctx, &b));
  ws w;
  FEA_CALL(ws_get(m, b, k, 0, &w));
  FEA_CALL(pin_get(m, k));
  fea_status st = solve_run(m, b, &w, k, bh, ldb, xh, ldx, transform_s, dense_s);
  /* On failure drain the stream, so that nothing queued still uses the kept
   * workspace or staging buffer when the next solve starts (the error is
   * already recorded; a second one from the sync is not). */
  if (st < 0) (void)cudaStreamSynchronize(b->stream), (void)cudaGetLastError();
  return st;
}

/* ------------------------------------------------------------ refinement */

/* ss[j] := ||col j of x||^2 on the host (synchronizes). */
static fea_status column_sumsq(fea_ph_m1_device *m, const struct fea_cuda *b, const double *x,
                               fea_index k, double *dnorms, double *ss) {
  FEA_CALL_CUDA(m->ctx, fea_cuda_ph_col_sumsq(x, m->num, k, dnorms, b->stream));
  FEA_CALL_CUDA(m->ctx, cudaMemcpyAsync(ss, dnorms, (size_t)k * sizeof(double),
                                        cudaMemcpyDeviceToHost, b->stream));
  return fea_cuda_sync(m->ctx);
}

static fea_status refine_run(fea_ph_m1_device *m, const struct fea_cuda *b, ws *w, fea_index k,
                             const double *bh, fea_index ldb, double *xh, fea_index ldx,
                             double rtol, int max_iter, double *bn, double *ss, double *xs,
                             int *iters, double *relres) {
  fea_context *ctx = m->ctx;
  const size_t all = (size_t)m->num * (size_t)k * sizeof(double);
  stage_in(m, k, bh, ldb);
  FEA_CALL_CUDA(ctx, cudaMemcpyAsync(w->bd, m->pin, all, cudaMemcpyHostToDevice, b->stream));
  FEA_CALL(column_sumsq(m, b, w->bd, k, w->norms, ss)); /* also waits for the upload */
  double rel = 0, prev = INFINITY;
  int done = 1, slow = 0;
  for (fea_index c = 0; c < k; c++) {
    bn[c] = sqrt(ss[c]);
    if (bn[c] > 0) rel = 1.0, done = 0;
  }
  /* x_0 = 0, r_0 = b */
  FEA_CALL_CUDA(ctx, cudaMemsetAsync(w->xd, 0, all, b->stream));
  FEA_CALL_CUDA(ctx, cudaMemcpyAsync(w->w, w->bd, all, cudaMemcpyDeviceToDevice, b->stream));
  int it = 0, finite = 1;
  const double one = 1.0;
  while (finite && !done && it < max_iter && slow < 2) {
    FEA_CALL(solve_nodal(m, b, w, k)); /* r := correction */
    FEA_CALL_CUBLAS(ctx, cublasDaxpy_64(b->blas, m->num * k, &one, w->w, 1, w->xd, 1));
    it++;
    FEA_CALL_CUDA(ctx, fea_cuda_ph_residual(m->num, m->a_rp, m->a_ci, m->a_v, k, w->bd, w->xd, w->w,
                                            b->stream));
    FEA_CALL(column_sumsq(m, b, w->w, k, w->norms, ss));
    FEA_CALL(column_sumsq(m, b, w->xd, k, w->norms, xs));
    rel = 0;
    done = 1;
    for (fea_index c = 0; c < k; c++) {
      if (!(bn[c] > 0)) continue;
      const double q = sqrt(ss[c]) / bn[c];
      if (!isfinite(q))
        finite = 0, rel = INFINITY;
      else if (finite)
        rel = fmax(rel, q);
      if (!fea_ph_refine_column_done(sqrt(ss[c]), sqrt(xs[c]), bn[c], m->a_norm_inf, rtol))
        done = 0;
    }
    if (!finite) done = 0;
    slow = rel > FEA_PH_REFINE_MIN_REDUCTION * prev ? slow + 1 : 0;
    prev = rel;
  }
  FEA_CALL_CUDA(ctx, cudaMemcpyAsync(m->pin, w->xd, all, cudaMemcpyDeviceToHost, b->stream));
  FEA_CALL(fea_cuda_sync(ctx));
  stage_out(m, k, xh, ldx);
  if (iters) *iters = it;
  if (relres) *relres = rel;
  if (!done) {
    fea_log(ctx, FEA_LOG_WARN,
            "M1 refinement on /gpu/cuda in %s: relative residual %.3g > %.3g after %d "
            "corrections%s",
            fea_precision_name(m->prec), rel, rtol, it,
            !finite     ? " (a residual is not finite: stopped)"
            : slow >= 2 ? " (stagnated: the last two did not halve it)"
                        : "");
    return FEA_WARN_NOT_CONVERGED;
  }
  if (rel > rtol)
    fea_log(ctx, FEA_LOG_INFO,
            "M1 refinement on /gpu/cuda in %s stopped at FP64's rounding floor after %d "
            "corrections: relative residual %.3g above refine_rtol %.3g, backward error below "
            "%g eps",
            fea_precision_name(m->prec), it, rel, rtol, FEA_PH_REFINE_FLOOR_FACTOR);
  return FEA_SUCCESS;
}

static fea_status m1_refine(fea_ph_m1_device *m, fea_index k, const double *bh, fea_index ldb,
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
  double *xs = malloc((size_t)k * sizeof *xs);
  if (!bn || !ss || !xs) {
    free(bn), free(ss), free(xs);
    return FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %lld column norms", (long long)k);
  }
  ws w;
  fea_status st = ws_get(m, b, k, 1, &w);
  if (st >= 0) st = pin_get(m, k);
  if (st >= 0) {
    st = refine_run(m, b, &w, k, bh, ldb, xh, ldx, rtol, max_iter, bn, ss, xs, iters, relres);
    /* As in m1_solve: nothing queued may outlive a failed refinement. */
    if (st < 0) (void)cudaStreamSynchronize(b->stream), (void)cudaGetLastError();
  }
  free(bn), free(ss), free(xs);
  return st;
}

const struct fea_ph_m1_device_ops fea_cuda_m1_ops = {
    .setup_context = fea_context_host, /* the backend's host delegate */
    .create = m1_create,
    .solve = m1_solve,
    .refine = m1_refine,
    .pi_inverse = fea_cuda_pi_inverse,
    .pi_release = fea_cuda_pi_release,
    .bytes = m1_bytes,
    .destroy = m1_destroy,
};
