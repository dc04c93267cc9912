/* Private state of a /gpu/cuda context (ctx->backend_data) and the helpers the
 * ops tables share. Everything is ordered on one non-blocking stream per
 * context, without device-wide syncs; work that forks onto side streams
 * (lanes, below) is joined back into it before the forking call returns. */
#ifndef FEA_CUDA_BACKEND_H
#define FEA_CUDA_BACKEND_H

#include <stddef.h>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cusolverDn.h>
#include <cusparse.h>

#include "internal/backend.h"
#include "base/context.h"

/* Most side streams a context makes (the "streams" option's upper bound),
 * and how many it makes without the option. */
#define FEA_CUDA_MAX_LANES 8
#define FEA_CUDA_DEFAULT_LANES 4

/* A side stream with its own cuBLAS and cuSOLVER handles, for independent
 * pieces of work that are each too small to fill the GPU: the large fronts
 * of one multifrontal level run on several lanes at once. Lanes are made on
 * first use and live as long as the context. */
typedef struct fea_cuda_lane {
  cudaStream_t stream;
  cudaEvent_t done;
  cublasHandle_t blas;
  cusolverDnHandle_t solver;
  cusolverDnParams_t solver_params;
} fea_cuda_lane;

struct fea_cuda {
  int device;
  char name[256];
  size_t total_memory;
  int cc_major, cc_minor;
  int sm_count;
  int mem_pools; /* stream-ordered allocation (cudaMallocAsync) available */
  cudaStream_t stream;
  cublasHandle_t blas;
  cusparseHandle_t sparse;
  cusolverDnHandle_t solver;
  cusolverDnParams_t solver_params;
  int *dinfo; /* device int that cuSOLVER writes its info to */
  void *work; /* device scratch, grown on demand, never shrunk */
  size_t work_bytes;
  int lanes_wanted;        /* the "streams" option: at most this many lanes */
  int leaves_on_device;    /* the "leaves" option: the multifrontal leaves' stiffness */
  int scatter_unprotected; /* the "scatter" option: GPU_Max, plain adds without atomics/colors */
  int nlanes;              /* lanes made so far */
  fea_cuda_lane lane[FEA_CUDA_MAX_LANES];
  cudaEvent_t fork; /* recorded on stream before the lanes start */
};

extern const struct fea_vector_ops fea_cuda_vector_ops;
extern const struct fea_dense_ops fea_cuda_dense_ops;
extern const struct fea_multifrontal_ops fea_cuda_multifrontal_ops;
extern const struct fea_ph_m1_device_ops fea_cuda_m1_ops;
extern const struct fea_mg_kernels fea_cuda_mg_kernels;
extern const struct fea_operator_ops fea_cuda_operator_ops;

/* Operators (operator-cuda.c): the upload of what the host built into
 * op->impl and op->data (op->ctx and op->num_free set), the sizes the
 * sum-factorization kernel is compiled for (else why), and Jacobi's
 * y[i] = a[i] x[i] on device arrays. operator-build-cuda.c drives them. */
struct fea_op_device_src;
struct fea_operator;
fea_status fea_cuda_operator_upload(struct fea_operator *op, const struct fea_op_device_src *src);
int fea_cuda_sumfact_supports(int dim, const int n[3], char *why, size_t len);
fea_status fea_cuda_operator_pointwise_mul(fea_context *ctx, fea_index n, const double *a,
                                           const double *x, double *y);

/* The context's CUDA state, with its device made current on the calling
 * thread (contexts on different GPUs may share a thread). */
fea_status fea_cuda_enter(fea_context *ctx, struct fea_cuda **out);

/* Device memory ordered on the context's stream. */
fea_status fea_cuda_malloc(fea_context *ctx, size_t bytes, void **out);
void fea_cuda_free(fea_context *ctx, void *p);

/* The scratch buffer, at least bytes long (NULL when bytes is 0). A later call
 * may move it: ask once per operation for everything the operation needs. */
fea_status fea_cuda_workspace(fea_context *ctx, size_t bytes, void **out);

/* Start n lanes (n <= b->lanes_wanted) after everything queued so far on
 * the context's stream; *out is the context's array of lanes. */
fea_status fea_cuda_lanes_fork(fea_context *ctx, int n, fea_cuda_lane **out);

/* Make the context's stream wait for what lanes 0 .. n-1 queued. Call it on
 * every path after a fork, errors included: stream-ordered frees on the
 * context's stream must not overtake work still queued on a lane. */
fea_status fea_cuda_lanes_join(fea_context *ctx, int n);

/* Device memory fea_cuda_malloc can count on, for the free-memory checks
 * before large setups: the driver's free bytes (cudaMemGetInfo) plus what
 * the device's current memory pool (the one cudaMallocAsync draws from; the
 * default pool unless the program set another) has mapped but not handed
 * out. cuda_setup lifts the default pool's release threshold, so memory a
 * solver freed stays mapped there, and cudaMemGetInfo alone does not count
 * it: a second setup on one device would be refused spuriously. Without
 * memory pools it is cudaMemGetInfo's figure. total_bytes (may be NULL): the
 * device's memory. The pool's bytes serve stream-ordered allocations only
 * (fea_cuda_malloc, fea_cuda_workspace); what cuBLAS or cuSOLVER allocate on
 * their own comes out of the driver's free bytes. */
fea_status fea_cuda_available_bytes(fea_context *ctx, size_t *free_bytes, size_t *total_bytes);

/* Wait for the stream; reports faults of kernels queued earlier. */
fea_status fea_cuda_sync(fea_context *ctx);

/* Bring cuSOLVER's info back to the host (synchronizes). */
fea_status fea_cuda_read_info(fea_context *ctx, int *info);

static inline size_t fea_cuda_elem_size(fea_precision prec) {
  return prec == FEA_F64 ? 8 : prec == FEA_F32 ? 4 : 2;
}

static inline cudaDataType fea_cuda_data_type(fea_precision prec) {
  switch (prec) {
  case FEA_F64: return CUDA_R_64F;
  case FEA_F32: return CUDA_R_32F;
  case FEA_F16: return CUDA_R_16F;
  case FEA_BF16: return CUDA_R_16BF;
  }
  return CUDA_R_64F;
}

/* Sub-buffers carved from one workspace start on this boundary. */
#define FEA_CUDA_ALIGN ((size_t)256)

static inline size_t fea_cuda_align_up(size_t bytes) {
  return (bytes + FEA_CUDA_ALIGN - 1) / FEA_CUDA_ALIGN * FEA_CUDA_ALIGN;
}

#endif
