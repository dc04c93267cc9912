/* /cpu/threads vector ops: the loops BLAS does not cover (format conversion,
 * fill, first touch) run on the context's OpenMP team, as many of its
 * threads as the load leaves cores for (thread-budget.h: elementwise, so
 * the result is the same); BLAS level-1 routines come from /cpu/ref and are
 * threaded by OpenBLAS itself. */
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "base/context.h"
#include "backends/cpu/cpu.h"
#include "internal/error.h"
#include "base/half.h"
#include "base/thread-budget.h"
#include "linalg/vector.h"

/* Below this many entries a team costs more than it saves. */
#define PAR_MIN 65536

static char *at(const void *base, fea_precision p, fea_index i) {
  return (char *)base + (size_t)i * fea_cpu_elem_size(p);
}

/* Convert in contiguous slices, one per thread. */
static void par_convert(const fea_context *ctx, fea_precision from, const void *src,
                        fea_precision to, void *dst, fea_index n) {
  int team = n < PAR_MIN ? 1 : fea_thread_budget(ctx);
#pragma omp parallel num_threads(team)
  {
    int t = omp_get_thread_num(), nt = omp_get_num_threads();
    fea_index lo = n * t / nt, hi = n * (t + 1) / nt;
    fea_convert(from, at(src, from, lo), to, at(dst, to, lo), hi - lo);
  }
}

static fea_status threads_alloc(fea_context *ctx, fea_vector *v) {
  FEA_CALL(fea_cpu_vector_require(ctx, v));
  if (v->n == 0) return FEA_SUCCESS;
  size_t size = fea_cpu_elem_size(v->prec);
  size_t padded = ((size_t)v->n * size + 63) & ~(size_t)63;
  v->data = aligned_alloc(64, padded);
  FEA_CHECK(v->data, ctx, FEA_ERR_OUT_OF_MEMORY,
            "cannot allocate %zu bytes for a %s vector of %lld entries", padded,
            fea_precision_name(v->prec), (long long)v->n);
  /* First touch by the threads that will use each slice places pages on their NUMA node. */
  int team = v->n < PAR_MIN ? 1 : fea_thread_budget(ctx);
#pragma omp parallel num_threads(team)
  {
    int t = omp_get_thread_num(), nt = omp_get_num_threads();
    size_t lo = padded * (size_t)t / (size_t)nt, hi = padded * (size_t)(t + 1) / (size_t)nt;
    memset((char *)v->data + lo, 0, hi - lo);
  }
  return FEA_SUCCESS;
}

static fea_status threads_write(fea_context *ctx, fea_vector *v, fea_precision hp,
                                const void *host) {
  par_convert(ctx, hp, host, v->prec, v->data, v->n);
  return FEA_SUCCESS;
}

static fea_status threads_read(fea_context *ctx, const fea_vector *v, fea_precision hp,
                               void *host) {
  par_convert(ctx, v->prec, v->data, hp, host, v->n);
  return FEA_SUCCESS;
}

static fea_status threads_copy(fea_context *ctx, const fea_vector *x, fea_vector *y) {
  par_convert(ctx, x->prec, x->data, y->prec, y->data, x->n);
  return FEA_SUCCESS;
}

static fea_status threads_set_all(fea_context *ctx, fea_vector *v, double alpha) {
  unsigned char value[8];
  fea_convert(FEA_F64, &alpha, v->prec, value, 1);
  size_t size = fea_cpu_elem_size(v->prec);
  int team = v->n < PAR_MIN ? 1 : fea_thread_budget(ctx);
#pragma omp parallel for num_threads(team) schedule(static)
  for (fea_index i = 0; i < v->n; i++) memcpy((char *)v->data + (size_t)i * size, value, size);
  return FEA_SUCCESS;
}

const struct fea_vector_ops fea_cpu_threads_vec_ops = {
    .alloc = threads_alloc,
    .release = NULL, /* /cpu/ref's free() matches aligned_alloc */
    .write = threads_write,
    .read = threads_read,
    .set_all = threads_set_all,
    .copy = threads_copy,
};
