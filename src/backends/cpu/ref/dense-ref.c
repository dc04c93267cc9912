/* /cpu/ref dense ops through OpenBLAS (CBLAS) and LAPACKE, column-major.
 *
 * Debian's OpenBLAS has no half-precision GEMM (no sbgemm), so f16/bf16
 * inputs are widened to f32 tile by tile (F16C where the CPU has it) and
 * multiplied with SGEMM: the same arithmetic as cuBLAS's GemmEx with FP32
 * accumulation, at f32 speed, reading the 16-bit matrix once. */
#include <cblas.h>
#include <lapacke.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "linalg/blas.h"
#include "base/context.h"
#include "backends/cpu/cpu.h"
#include "internal/error.h"
#include "base/half.h"

static fea_status fits_int(fea_context *ctx, const char *op, const fea_dmat *M) {
  FEA_CHECK(M->rows <= FEA_BLAS_MAX_INT && M->cols <= FEA_BLAS_MAX_INT && M->ld <= FEA_BLAS_MAX_INT,
            ctx, FEA_ERR_UNSUPPORTED,
            "%s: %lld x %lld (ld %lld) exceeds the 32-bit integers of this BLAS", op,
            (long long)M->rows, (long long)M->cols, (long long)M->ld);
  return FEA_SUCCESS;
}

static CBLAS_TRANSPOSE cb_trans(fea_transpose t) { return t ? CblasTrans : CblasNoTrans; }
static CBLAS_UPLO cb_uplo(fea_uplo u) { return u == FEA_UPPER ? CblasUpper : CblasLower; }
static char lp_uplo(fea_uplo u) { return u == FEA_UPPER ? 'U' : 'L'; }

/* ---- 16-bit GEMM: widened tile by tile -------------------------------------------------- */

/* n FP16 values to FP32: F16C where the CPU has it (8 per instruction, exact,
 * subnormals included), else the portable bit conversion. */
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
__attribute__((target("avx,f16c"))) static void f16_to_f32_f16c(const uint16_t *s, float *d,
                                                                fea_index n) {
  fea_index i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(d + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(s + i))));
  for (; i < n; i++) d[i] = fea_f16_to_f32(s[i]);
}
#define HAVE_F16C_PATH 1

/* Whether the CPU has F16C and the OS saves the AVX registers, from CPUID and
 * XCR0. Asked here rather than with __builtin_cpu_supports("f16c"), a feature
 * name clang 14 (the fuzz build's compiler) refuses. CPUID traps in virtual
 * machines, so the answer is kept (-1: not asked yet; two threads may both ask). */
#include <cpuid.h>
#include <stdatomic.h>
static int cpu_has_f16c(void) {
  static atomic_int known = -1;
  int answer = atomic_load_explicit(&known, memory_order_relaxed);
  if (answer < 0) {
    unsigned a, b, c, d, lo = 0, hi = 0;
    int yes = __get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C) && (c & bit_AVX) &&
              (c & bit_OSXSAVE);
    if (yes) {
      __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
      yes = (lo & 6) == 6; /* XMM and YMM state enabled */
    }
    answer = yes;
    atomic_store_explicit(&known, answer, memory_order_relaxed);
  }
  return answer;
}
#endif

static void to_f32(fea_precision prec, const uint16_t *s, float *d, fea_index n) {
  if (prec == FEA_BF16) { /* bf16 is the top half of an f32: a shift (vectorizes) */
    uint32_t *u = (uint32_t *)d;
    for (fea_index i = 0; i < n; i++) u[i] = (uint32_t)s[i] << 16;
    return;
  }
#ifdef HAVE_F16C_PATH
  if (cpu_has_f16c()) {
    f16_to_f32_f16c(s, d, n);
    return;
  }
#endif
  for (fea_index i = 0; i < n; i++) d[i] = fea_f16_to_f32(s[i]);
}

/* w (ld nr) := rows r0..r0+nr-1, columns c0..c0+nc-1 of M, widened to f32.
 * Serial on purpose: an OpenMP team between two threaded OpenBLAS calls makes
 * the two thread pools spin against each other (docs/backends.md), and the
 * conversion streams at memory speed on one core anyway. */
static void widen_block(const fea_dmat *M, fea_index r0, fea_index nr, fea_index c0, fea_index nc,
                        float *w) {
  if (M->prec == FEA_F32) {
    for (fea_index j = 0; j < nc; j++)
      memcpy(w + j * nr, (const float *)M->data + (c0 + j) * M->ld + r0, (size_t)nr * sizeof *w);
    return;
  }
  const uint16_t *src = M->data;
  for (fea_index j = 0; j < nc; j++) to_f32(M->prec, src + (c0 + j) * M->ld + r0, w + j * nr, nr);
}

/* Inner-dimension tile of the 16-bit products: the widened tile of A stays
 * in cache (~4 MB), so a product reads the 16-bit matrix once (2 bytes per
 * entry) instead of writing and re-reading an f32 copy of it. */
#define HALF_TILE_FLOATS (1 << 20)

static fea_status gemm_half(fea_context *ctx, fea_transpose ta, fea_transpose tb, double alpha,
                            const fea_dmat *A, const fea_dmat *B, double beta, fea_dmat *C) {
  const fea_index m = C->rows, n = C->cols, k = ta ? A->rows : A->cols;
  fea_index kb = HALF_TILE_FLOATS / (m > n ? (m > 0 ? m : 1) : (n > 0 ? n : 1));
  if (kb < 32) kb = 32;
  if (kb > k) kb = k > 0 ? k : 1;
  float *a = malloc((size_t)(m * kb) * sizeof *a + 1),
        *b = malloc((size_t)(n * kb) * sizeof *b + 1);
  float *c = C->prec == FEA_F32 ? C->data : malloc((size_t)(m * n) * sizeof *c + 1);
  const fea_index ldc = C->prec == FEA_F32 ? C->ld : (m > 1 ? m : 1);
  fea_status s = FEA_SUCCESS;
  if (!a || !b || !c) {
    s = FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY, "gemm: no memory to widen %s tiles to f32",
                  fea_precision_name(A->prec));
    goto out;
  }
  if (c != C->data && beta != 0) widen_block(C, 0, m, 0, n, c);
  if (k == 0) /* C := beta C; with beta = 0, C is not read (BLAS semantics) */
    for (fea_index j = 0; j < n; j++)
      for (fea_index i = 0; i < m; i++)
        c[i + j * ldc] = beta == 0 ? 0.0f : c[i + j * ldc] * (float)beta;
  for (fea_index k0 = 0; k0 < k; k0 += kb) {
    const fea_index kt = k - k0 < kb ? k - k0 : kb;
    /* op(A)(:, k0:k0+kt) and op(B)(k0:k0+kt, :), stored as A and B are. */
    if (ta)
      widen_block(A, k0, kt, 0, m, a);
    else
      widen_block(A, 0, m, k0, kt, a);
    if (tb)
      widen_block(B, 0, n, k0, kt, b);
    else
      widen_block(B, k0, kt, 0, n, b);
    const int lda = (int)(ta ? kt : (m > 1 ? m : 1)), ldb = (int)(tb ? (n > 1 ? n : 1) : kt);
    cblas_sgemm(CblasColMajor, cb_trans(ta), cb_trans(tb), (int)m, (int)n, (int)kt, (float)alpha, a,
                lda, b, ldb, k0 == 0 ? (float)beta : 1.0f, c, (int)ldc);
  }
  if (c != C->data)
    for (fea_index j = 0; j < n; j++)
      fea_convert(FEA_F32, c + j * m, C->prec, (char *)C->data + (size_t)(j * C->ld) * 2, m);
out:
  free(a);
  free(b);
  if (c != C->data) free(c);
  return s;
}

static fea_status ref_gemm(fea_context *ctx, fea_transpose ta, fea_transpose tb, double alpha,
                           const fea_dmat *A, const fea_dmat *B, double beta, fea_dmat *C,
                           fea_compute compute) {
  FEA_CHECK(compute == FEA_COMPUTE_DEFAULT, ctx, FEA_ERR_UNSUPPORTED,
            "gemm: TF32 compute needs tensor cores; backend %s has none", ctx->backend->prefix);
  FEA_CALL(fits_int(ctx, "gemm", A));
  FEA_CALL(fits_int(ctx, "gemm", B));
  FEA_CALL(fits_int(ctx, "gemm", C));
  fea_blas_use_threads(ctx->nthreads);
  int m = (int)C->rows, n = (int)C->cols, k = (int)(ta ? A->rows : A->cols);
  switch (A->prec) {
  case FEA_F64:
    cblas_dgemm(CblasColMajor, cb_trans(ta), cb_trans(tb), m, n, k, alpha, A->data, (int)A->ld,
                B->data, (int)B->ld, beta, C->data, (int)C->ld);
    return FEA_SUCCESS;
  case FEA_F32:
    cblas_sgemm(CblasColMajor, cb_trans(ta), cb_trans(tb), m, n, k, (float)alpha, A->data,
                (int)A->ld, B->data, (int)B->ld, (float)beta, C->data, (int)C->ld);
    return FEA_SUCCESS;
  default: return gemm_half(ctx, ta, tb, alpha, A, B, beta, C);
  }
}

static fea_status ref_syrk(fea_context *ctx, fea_uplo uplo, fea_transpose trans, double alpha,
                           const fea_dmat *A, double beta, fea_dmat *C) {
  FEA_CALL(fits_int(ctx, "syrk", A));
  FEA_CALL(fits_int(ctx, "syrk", C));
  fea_blas_use_threads(ctx->nthreads);
  int n = (int)C->rows, k = (int)(trans ? A->rows : A->cols);
  if (A->prec == FEA_F64)
    cblas_dsyrk(CblasColMajor, cb_uplo(uplo), cb_trans(trans), n, k, alpha, A->data, (int)A->ld,
                beta, C->data, (int)C->ld);
  else
    cblas_ssyrk(CblasColMajor, cb_uplo(uplo), cb_trans(trans), n, k, (float)alpha, A->data,
                (int)A->ld, (float)beta, C->data, (int)C->ld);
  return FEA_SUCCESS;
}

static fea_status ref_trsm(fea_context *ctx, fea_side side, fea_uplo uplo, fea_transpose trans,
                           fea_diag diag, double alpha, const fea_dmat *A, fea_dmat *B) {
  FEA_CALL(fits_int(ctx, "trsm", A));
  FEA_CALL(fits_int(ctx, "trsm", B));
  fea_blas_use_threads(ctx->nthreads);
  CBLAS_SIDE cs = side == FEA_RIGHT ? CblasRight : CblasLeft;
  CBLAS_DIAG cd = diag == FEA_UNIT ? CblasUnit : CblasNonUnit;
  if (A->prec == FEA_F64)
    cblas_dtrsm(CblasColMajor, cs, cb_uplo(uplo), cb_trans(trans), cd, (int)B->rows, (int)B->cols,
                alpha, A->data, (int)A->ld, B->data, (int)B->ld);
  else
    cblas_strsm(CblasColMajor, cs, cb_uplo(uplo), cb_trans(trans), cd, (int)B->rows, (int)B->cols,
                (float)alpha, A->data, (int)A->ld, B->data, (int)B->ld);
  return FEA_SUCCESS;
}

/* LAPACK's info: < 0 is a bad argument (a bug here), > 0 the numerical outcome. */
static fea_status lapack_info(fea_context *ctx, const char *op, lapack_int info) {
  FEA_CHECK(info >= 0, ctx, FEA_ERR_BACKEND, "%s: LAPACK rejected argument %d", op, (int)-info);
  return FEA_SUCCESS;
}

static fea_status ref_potrf(fea_context *ctx, fea_uplo uplo, fea_dmat *A) {
  FEA_CALL(fits_int(ctx, "potrf", A));
  fea_blas_use_threads(ctx->nthreads);
  lapack_int info = A->prec == FEA_F64
                        ? LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, lp_uplo(uplo), (lapack_int)A->rows,
                                              A->data, (lapack_int)A->ld)
                        : LAPACKE_spotrf_work(LAPACK_COL_MAJOR, lp_uplo(uplo), (lapack_int)A->rows,
                                              A->data, (lapack_int)A->ld);
  FEA_CALL(lapack_info(ctx, "potrf", info));
  FEA_CHECK(
      info == 0, ctx, FEA_ERR_NOT_POSDEF,
      "potrf: the leading minor of order %d of the %lld x %lld matrix is not positive definite",
      (int)info, (long long)A->rows, (long long)A->cols);
  return FEA_SUCCESS;
}

static fea_status ref_potrs(fea_context *ctx, fea_uplo uplo, const fea_dmat *A, fea_dmat *B) {
  FEA_CALL(fits_int(ctx, "potrs", A));
  FEA_CALL(fits_int(ctx, "potrs", B));
  fea_blas_use_threads(ctx->nthreads);
  lapack_int n = (lapack_int)A->rows, nrhs = (lapack_int)B->cols;
  lapack_int info = A->prec == FEA_F64
                        ? LAPACKE_dpotrs_work(LAPACK_COL_MAJOR, lp_uplo(uplo), n, nrhs, A->data,
                                              (lapack_int)A->ld, B->data, (lapack_int)B->ld)
                        : LAPACKE_spotrs_work(LAPACK_COL_MAJOR, lp_uplo(uplo), n, nrhs, A->data,
                                              (lapack_int)A->ld, B->data, (lapack_int)B->ld);
  return lapack_info(ctx, "potrs", info);
}

static fea_status ref_getrf(fea_context *ctx, fea_dmat *A, fea_index *ipiv) {
  FEA_CALL(fits_int(ctx, "getrf", A));
  fea_blas_use_threads(ctx->nthreads);
  lapack_int n = (lapack_int)A->rows;
  lapack_int *piv = malloc((size_t)n * sizeof *piv);
  FEA_CHECK(piv, ctx, FEA_ERR_OUT_OF_MEMORY, "getrf: no memory for %d pivots", (int)n);
  lapack_int info = A->prec == FEA_F64 ? LAPACKE_dgetrf_work(LAPACK_COL_MAJOR, n, n, A->data,
                                                             (lapack_int)A->ld, piv)
                                       : LAPACKE_sgetrf_work(LAPACK_COL_MAJOR, n, n, A->data,
                                                             (lapack_int)A->ld, piv);
  for (lapack_int i = 0; i < n; i++) ipiv[i] = piv[i];
  free(piv);
  FEA_CALL(lapack_info(ctx, "getrf", info));
  FEA_CHECK(info == 0, ctx, FEA_ERR_SINGULAR,
            "getrf: U(%d,%d) is exactly zero: the matrix is singular", (int)info, (int)info);
  return FEA_SUCCESS;
}

static fea_status ref_getrs(fea_context *ctx, fea_transpose trans, const fea_dmat *A,
                            const fea_index *ipiv, fea_dmat *B) {
  FEA_CALL(fits_int(ctx, "getrs", A));
  FEA_CALL(fits_int(ctx, "getrs", B));
  fea_blas_use_threads(ctx->nthreads);
  lapack_int n = (lapack_int)A->rows, nrhs = (lapack_int)B->cols;
  lapack_int *piv = malloc((size_t)n * sizeof *piv);
  FEA_CHECK(piv, ctx, FEA_ERR_OUT_OF_MEMORY, "getrs: no memory for %d pivots", (int)n);
  for (lapack_int i = 0; i < n; i++) piv[i] = (lapack_int)ipiv[i];
  char t = trans ? 'T' : 'N';
  lapack_int info = A->prec == FEA_F64
                        ? LAPACKE_dgetrs_work(LAPACK_COL_MAJOR, t, n, nrhs, A->data,
                                              (lapack_int)A->ld, piv, B->data, (lapack_int)B->ld)
                        : LAPACKE_sgetrs_work(LAPACK_COL_MAJOR, t, n, nrhs, A->data,
                                              (lapack_int)A->ld, piv, B->data, (lapack_int)B->ld);
  free(piv);
  return lapack_info(ctx, "getrs", info);
}

const struct fea_dense_ops fea_cpu_ref_dense_ops = {
    .gemm = ref_gemm,
    .syrk = ref_syrk,
    .trsm = ref_trsm,
    .potrf = ref_potrf,
    .potrs = ref_potrs,
    .getrf = ref_getrf,
    .getrs = ref_getrs,
};
