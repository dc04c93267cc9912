/* /cpu/ref vector ops. f64/f32 go straight to OpenBLAS level-1 routines;
 * for f16/bf16, axpy and scale widen cache-sized blocks to f32, use the f32
 * routine and narrow back (what cuBLAS's *Ex routines do), while dot and nrm2
 * are carried in double wherever float would overflow. */
#include <cblas.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "linalg/blas.h"
#include "base/context.h"
#include "backends/cpu/cpu.h"
#include "internal/error.h"
#include "base/half.h"
#include "base/memory-limit.h"
#include "base/thread-budget.h"
#include "linalg/vector.h"

/* One BLAS call takes at most this many entries (32-bit BLAS integers). */
#define CHUNK ((fea_index)1 << 30)
/* Widening block for 16-bit formats: two f32 blocks fit in L1 with room to spare. */
#define HBLOCK 2048

size_t fea_cpu_elem_size(fea_precision prec) {
  return prec == FEA_F64 ? 8 : prec == FEA_F32 ? 4 : 2;
}

static void *at(const fea_vector *v, fea_index i) {
  return (char *)v->data + (size_t)i * fea_cpu_elem_size(v->prec);
}

static int is_half(fea_precision p) { return p == FEA_F16 || p == FEA_BF16; }

/* Host vectors count against the context's memory budget before they are
 * allocated (a device backend's allocator answers for its own memory). */
fea_status fea_cpu_vector_require(fea_context *ctx, const fea_vector *v) {
  char what[96];
  snprintf(what, sizeof what, "a vector of %lld %s entries", (long long)v->n,
           fea_precision_name(v->prec));
  return fea_memory_require(ctx, 0, fea_bytes((double)v->n, fea_cpu_elem_size(v->prec)), what);
}

static fea_status ref_alloc(fea_context *ctx, fea_vector *v) {
  FEA_CALL(fea_cpu_vector_require(ctx, v));
  if (v->n == 0) return FEA_SUCCESS;
  size_t bytes = (size_t)v->n * fea_cpu_elem_size(v->prec);
  size_t padded = (bytes + 63) & ~(size_t)63; /* aligned_alloc needs a multiple of the alignment */
  v->data = aligned_alloc(64, padded);
  FEA_CHECK(v->data, ctx, FEA_ERR_OUT_OF_MEMORY,
            "cannot allocate %zu bytes for a %s vector of %lld entries", padded,
            fea_precision_name(v->prec), (long long)v->n);
  memset(v->data, 0, padded);
  return FEA_SUCCESS;
}

static void ref_release(fea_context *ctx, fea_vector *v) {
  free(v->data);
  v->data = NULL;
}

static fea_status ref_write(fea_context *ctx, fea_vector *v, fea_precision host_prec,
                            const void *host) {
  fea_convert(host_prec, host, v->prec, v->data, v->n);
  return FEA_SUCCESS;
}

static fea_status ref_read(fea_context *ctx, const fea_vector *v, fea_precision host_prec,
                           void *host) {
  fea_convert(v->prec, v->data, host_prec, host, v->n);
  return FEA_SUCCESS;
}

static fea_status ref_set_all(fea_context *ctx, fea_vector *v, double alpha) {
  /* Round alpha once to the storage format, then replicate its bit pattern. */
  unsigned char value[8];
  fea_convert(FEA_F64, &alpha, v->prec, value, 1);
  size_t size = fea_cpu_elem_size(v->prec);
  for (fea_index i = 0; i < v->n; i++) memcpy((char *)v->data + (size_t)i * size, value, size);
  return FEA_SUCCESS;
}

static fea_status ref_copy(fea_context *ctx, const fea_vector *x, fea_vector *y) {
  fea_convert(x->prec, x->data, y->prec, y->data, x->n);
  return FEA_SUCCESS;
}

static fea_status ref_axpy(fea_context *ctx, fea_vector *y, double alpha, const fea_vector *x) {
  /* Elementwise: any OpenBLAS thread count gives the same y. */
  fea_blas_use_threads(fea_thread_budget(ctx));
  for (fea_index i = 0; i < x->n; i += is_half(x->prec) ? HBLOCK : CHUNK) {
    fea_index len = x->n - i;
    if (x->prec == FEA_F64) {
      len = len < CHUNK ? len : CHUNK;
      cblas_daxpy((int)len, alpha, at(x, i), 1, at(y, i), 1);
    } else if (x->prec == FEA_F32) {
      len = len < CHUNK ? len : CHUNK;
      cblas_saxpy((int)len, (float)alpha, at(x, i), 1, at(y, i), 1);
    } else {
      float xb[HBLOCK], yb[HBLOCK];
      len = len < HBLOCK ? len : HBLOCK;
      fea_convert(x->prec, at(x, i), FEA_F32, xb, len);
      fea_convert(y->prec, at(y, i), FEA_F32, yb, len);
      cblas_saxpy((int)len, (float)alpha, xb, 1, yb, 1);
      fea_convert(FEA_F32, yb, y->prec, at(y, i), len);
    }
  }
  return FEA_SUCCESS;
}

static fea_status ref_scale(fea_context *ctx, fea_vector *x, double alpha) {
  /* Elementwise: any OpenBLAS thread count gives the same y. */
  fea_blas_use_threads(fea_thread_budget(ctx));
  for (fea_index i = 0; i < x->n; i += is_half(x->prec) ? HBLOCK : CHUNK) {
    fea_index len = x->n - i;
    if (x->prec == FEA_F64) {
      len = len < CHUNK ? len : CHUNK;
      cblas_dscal((int)len, alpha, at(x, i), 1);
    } else if (x->prec == FEA_F32) {
      len = len < CHUNK ? len : CHUNK;
      cblas_sscal((int)len, (float)alpha, at(x, i), 1);
    } else {
      float xb[HBLOCK];
      len = len < HBLOCK ? len : HBLOCK;
      fea_convert(x->prec, at(x, i), FEA_F32, xb, len);
      cblas_sscal((int)len, (float)alpha, xb, 1);
      fea_convert(FEA_F32, xb, x->prec, at(x, i), len);
    }
  }
  return FEA_SUCCESS;
}

/* Reductions return a double, so they are carried in double where float
 * could overflow: f32 falls back to widened blocks when a chunk overflows,
 * f16/bf16 always widen. */
static double dot_widened(const fea_vector *x, const fea_vector *y, fea_index i, fea_index len) {
  double sum = 0.0, xb[HBLOCK], yb[HBLOCK];
  for (fea_index j = 0; j < len; j += HBLOCK) {
    fea_index b = len - j < HBLOCK ? len - j : HBLOCK;
    fea_convert(x->prec, at(x, i + j), FEA_F64, xb, b);
    fea_convert(y->prec, at(y, i + j), FEA_F64, yb, b);
    sum += cblas_ddot((int)b, xb, 1, yb, 1);
  }
  return sum;
}

static fea_status ref_dot(fea_context *ctx, const fea_vector *x, const fea_vector *y, double *r) {
  /* A reduction: OpenBLAS splits the sum by its thread count, so the count
   * stays the context's (the same digits on every call). */
  fea_blas_use_threads(ctx->nthreads);
  double sum = 0.0;
  for (fea_index i = 0; i < x->n; i += is_half(x->prec) ? HBLOCK : CHUNK) {
    fea_index len = x->n - i;
    if (x->prec == FEA_F64) {
      len = len < CHUNK ? len : CHUNK;
      sum += cblas_ddot((int)len, at(x, i), 1, at(y, i), 1);
    } else if (x->prec == FEA_F32) {
      len = len < CHUNK ? len : CHUNK;
      double part = cblas_sdot((int)len, at(x, i), 1, at(y, i), 1);
      /* A sum beyond FLT_MAX is finite in double: redo the chunk there
       * (OpenBLAS's dsdot multiplies in float and overflows too). */
      sum += isinf(part) ? dot_widened(x, y, i, len) : part;
    } else {
      len = len < HBLOCK ? len : HBLOCK;
      sum += dot_widened(x, y, i, len);
    }
  }
  *r = sum;
  return FEA_SUCCESS;
}

/* ||x[i, i+len)|| of a non-f64 vector through widened double blocks. */
static double nrm2_widened(const fea_vector *x, fea_index i, fea_index len) {
  double norm = 0.0, xb[HBLOCK];
  for (fea_index j = 0; j < len; j += HBLOCK) {
    fea_index b = len - j < HBLOCK ? len - j : HBLOCK;
    fea_convert(x->prec, at(x, i + j), FEA_F64, xb, b);
    norm = hypot(norm, cblas_dnrm2((int)b, xb, 1));
  }
  return norm;
}

static fea_status ref_nrm2(fea_context *ctx, const fea_vector *x, double *r) {
  fea_blas_use_threads(ctx->nthreads);
  double norm = 0.0; /* partial norms combine with hypot, which cannot overflow */
  for (fea_index i = 0; i < x->n; i += CHUNK) {
    fea_index len = x->n - i < CHUNK ? x->n - i : CHUNK;
    double part;
    if (x->prec == FEA_F64) {
      part = cblas_dnrm2((int)len, at(x, i), 1);
    } else if (x->prec == FEA_F32) {
      part = cblas_snrm2((int)len, at(x, i), 1);
      /* A norm above FLT_MAX is finite in double: redo the chunk there. */
      if (isinf(part)) part = nrm2_widened(x, i, len);
    } else {
      part = nrm2_widened(x, i, len);
    }
    norm = hypot(norm, part);
  }
  *r = norm;
  return FEA_SUCCESS;
}

const struct fea_vector_ops fea_cpu_ref_vec_ops = {
    .alloc = ref_alloc,
    .release = ref_release,
    .write = ref_write,
    .read = ref_read,
    .set_all = ref_set_all,
    .copy = ref_copy,
    .axpy = ref_axpy,
    .scale = ref_scale,
    .dot = ref_dot,
    .nrm2 = ref_nrm2,
};
