/* The /gpu/cuda backend: probing, per-context setup and teardown of the device,
 * stream and library handles, and the device memory helpers of cuda-backend.h. */
#include "fea-config.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal/backend.h"
#include "base/context.h"
#include "cuda-backend.h"
#include "cuda-check.h"
#include "internal/error.h"
#include "base/topology.h"

/* Bounded copy that always terminates dst (device names are far shorter than
 * either buffer; this only keeps a long one from overrunning). */
static void copy_text(char *dst, size_t cap, const char *src) {
  size_t i = 0;
  for (; i + 1 < cap && src[i]; i++) dst[i] = src[i];
  dst[i] = '\0';
}

static fea_status cuda_probe(char *reason, size_t len) {
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    if (reason && len)
      snprintf(reason, len, "cudaGetDeviceCount() failed: %s (%s)", cudaGetErrorName(e),
               cudaGetErrorString(e));
    return FEA_ERR_DEVICE;
  }
  if (count == 0) {
    if (reason && len) snprintf(reason, len, "no CUDA device found");
    return FEA_ERR_DEVICE;
  }
  return FEA_SUCCESS;
}

/* Ordinal from the "device" option; CUDA_VISIBLE_DEVICES already applies. */
static fea_status parse_device(fea_context *ctx, const char *text, int count, int *device) {
  char *end = NULL;
  errno = 0;
  long v = strtol(text, &end, 10);
  FEA_CHECK(text[0] != '\0' && text[0] != ' ' && *end == '\0' && errno == 0, ctx,
            FEA_ERR_INVALID_ARG, "option device=%s is not an integer", text);
  FEA_CHECK(v >= 0 && v < count, ctx, FEA_ERR_INVALID_ARG,
            "option device=%s is out of range: %d CUDA device(s) visible, valid ordinals are 0..%d",
            text, count, count - 1);
  *device = (int)v;
  return FEA_SUCCESS;
}

/* The "streams" option: how many lanes (cuda-backend.h) independent dense
 * kernels may spread over; 1 keeps everything on the context's stream. */
static fea_status parse_streams(fea_context *ctx, const fea_resource_opts *opts, int *lanes) {
  *lanes = FEA_CUDA_DEFAULT_LANES;
  const char *text = opts ? fea_resource_opt(opts, "streams") : NULL;
  if (!text) return FEA_SUCCESS;
  char *end = NULL;
  errno = 0;
  long v = strtol(text, &end, 10);
  FEA_CHECK(text[0] != '\0' && text[0] != ' ' && *end == '\0' && errno == 0 && v >= 1 &&
                v <= FEA_CUDA_MAX_LANES,
            ctx, FEA_ERR_INVALID_ARG, "option streams=%s is not an integer in [1, %d]", text,
            FEA_CUDA_MAX_LANES);
  *lanes = (int)v;
  return FEA_SUCCESS;
}

/* The "leaves" option: where the multifrontal solver integrates the
 * stiffness of its leaf fronts, "device" (where the problem allows it:
 * multifrontal-cuda.c) or "host" (every problem, the fronts go up whole). */
static fea_status parse_leaves(fea_context *ctx, const fea_resource_opts *opts, int *on_device) {
  *on_device = 1;
  const char *text = opts ? fea_resource_opt(opts, "leaves") : NULL;
  if (!text) return FEA_SUCCESS;
  FEA_CHECK(strcmp(text, "device") == 0 || strcmp(text, "host") == 0, ctx, FEA_ERR_INVALID_ARG,
            "option leaves=%s is neither 'device' nor 'host'", text);
  *on_device = strcmp(text, "device") == 0;
  return FEA_SUCCESS;
}

/* The "scatter" option: "protected" (the default: matrix-free operators
 * add by atomics or one color at a time, as their strategy says) or
 * "unprotected": plain adds of all elements at once, the thesis's GPU_Max,
 * an upper bound for benchmarks whose sums are wrong where elements share
 * DoFs (operator-cuda.c). */
static fea_status parse_scatter(fea_context *ctx, const fea_resource_opts *opts, int *unprotected) {
  *unprotected = 0;
  const char *text = opts ? fea_resource_opt(opts, "scatter") : NULL;
  if (!text) return FEA_SUCCESS;
  FEA_CHECK(strcmp(text, "protected") == 0 || strcmp(text, "unprotected") == 0, ctx,
            FEA_ERR_INVALID_ARG, "option scatter=%s is neither 'protected' nor 'unprotected'",
            text);
  *unprotected = strcmp(text, "unprotected") == 0;
  return FEA_SUCCESS;
}

static void lane_destroy(fea_cuda_lane *l) {
  if (l->stream) (void)cudaStreamSynchronize(l->stream);
  if (l->solver_params) (void)cusolverDnDestroyParams(l->solver_params);
  if (l->solver) (void)cusolverDnDestroy(l->solver);
  if (l->blas) (void)cublasDestroy(l->blas);
  if (l->done) (void)cudaEventDestroy(l->done);
  if (l->stream) (void)cudaStreamDestroy(l->stream);
  memset(l, 0, sizeof *l);
}

static fea_status lane_create(fea_context *ctx, fea_cuda_lane *l) {
  FEA_CALL_CUDA(ctx, cudaStreamCreateWithFlags(&l->stream, cudaStreamNonBlocking));
  FEA_CALL_CUDA(ctx, cudaEventCreateWithFlags(&l->done, cudaEventDisableTiming));
  FEA_CALL_CUBLAS(ctx, cublasCreate(&l->blas));
  FEA_CALL_CUBLAS(ctx, cublasSetStream(l->blas, l->stream));
  FEA_CALL_CUBLAS(ctx, cublasSetPointerMode(l->blas, CUBLAS_POINTER_MODE_HOST));
  FEA_CALL_CUSOLVER(ctx, cusolverDnCreate(&l->solver));
  FEA_CALL_CUSOLVER(ctx, cusolverDnSetStream(l->solver, l->stream));
  FEA_CALL_CUSOLVER(ctx, cusolverDnCreateParams(&l->solver_params));
  return FEA_SUCCESS;
}

fea_status fea_cuda_lanes_fork(fea_context *ctx, int n, fea_cuda_lane **out) {
  struct fea_cuda *b = ctx->backend_data;
  FEA_CHECK(n >= 1 && n <= b->lanes_wanted, ctx, FEA_ERR_BACKEND,
            "internal: %d lanes asked for, the context has streams=%d", n, b->lanes_wanted);
  if (!b->fork) FEA_CALL_CUDA(ctx, cudaEventCreateWithFlags(&b->fork, cudaEventDisableTiming));
  while (b->nlanes < n) {
    fea_status st = lane_create(ctx, &b->lane[b->nlanes]);
    if (st < 0) {
      lane_destroy(&b->lane[b->nlanes]);
      return st;
    }
    b->nlanes++;
  }
  FEA_CALL_CUDA(ctx, cudaEventRecord(b->fork, b->stream));
  for (int i = 0; i < n; i++)
    FEA_CALL_CUDA(ctx, cudaStreamWaitEvent(b->lane[i].stream, b->fork, 0));
  *out = b->lane;
  return FEA_SUCCESS;
}

fea_status fea_cuda_lanes_join(fea_context *ctx, int n) {
  struct fea_cuda *b = ctx->backend_data;
  for (int i = 0; i < n && i < b->nlanes; i++) {
    FEA_CALL_CUDA(ctx, cudaEventRecord(b->lane[i].done, b->lane[i].stream));
    FEA_CALL_CUDA(ctx, cudaStreamWaitEvent(b->stream, b->lane[i].done, 0));
  }
  return FEA_SUCCESS;
}

/* Frees whatever cuda_setup created; safe on a partly set up state. */
static void cuda_teardown(struct fea_cuda *b) {
  for (int i = 0; i < b->nlanes; i++) lane_destroy(&b->lane[i]);
  b->nlanes = 0;
  if (b->fork) (void)cudaEventDestroy(b->fork);
  if (b->stream) (void)cudaStreamSynchronize(b->stream);
  if (b->work) {
    if (b->mem_pools && b->stream) {
      (void)cudaFreeAsync(b->work, b->stream);
      (void)cudaStreamSynchronize(b->stream);
    } else {
      (void)cudaFree(b->work);
    }
  }
  if (b->dinfo) (void)cudaFree(b->dinfo);
  if (b->solver_params) (void)cusolverDnDestroyParams(b->solver_params);
  if (b->solver) (void)cusolverDnDestroy(b->solver);
  if (b->sparse) (void)cusparseDestroy(b->sparse);
  if (b->blas) (void)cublasDestroy(b->blas);
  if (b->stream) (void)cudaStreamDestroy(b->stream);
  if (b->mem_pools) {
    /* Unused pool memory back to the driver (cuda_setup raised the threshold);
     * blocks other contexts on this device still hold are not touched. */
    cudaMemPool_t pool;
    if (cudaDeviceGetDefaultMemPool(&pool, b->device) == cudaSuccess)
      (void)cudaMemPoolTrimTo(pool, 0);
  }
  (void)cudaGetLastError();
}

/* Every failure here means the device is not usable: FEA_ERR_DEVICE. */
static fea_status cuda_setup(fea_context *ctx, struct fea_cuda *b) {
  struct cudaDeviceProp prop;
  void *dinfo = NULL;

  FEA_CALL_CUDA_AS(ctx, FEA_ERR_DEVICE, cudaSetDevice(b->device));
  FEA_CALL_CUDA_AS(ctx, FEA_ERR_DEVICE, cudaGetDeviceProperties(&prop, b->device));
  copy_text(b->name, sizeof b->name, prop.name);
  b->total_memory = prop.totalGlobalMem;
  b->cc_major = prop.major;
  b->cc_minor = prop.minor;
  b->sm_count = prop.multiProcessorCount;
  FEA_CALL_CUDA_AS(ctx, FEA_ERR_DEVICE,
                   cudaDeviceGetAttribute(&b->mem_pools, cudaDevAttrMemoryPoolsSupported,
                                          b->device));

  if (b->mem_pools) {
    /* The default release threshold is 0: the pool hands its memory back to
     * the driver at every synchronization, and the next level's allocations
     * map it again. Keep what was freed mapped until the context goes
     * (cuda_teardown trims the pool). */
    cudaMemPool_t pool;
    uint64_t keep = UINT64_MAX;
    FEA_CALL_CUDA_AS(ctx, FEA_ERR_DEVICE, cudaDeviceGetDefaultMemPool(&pool, b->device));
    FEA_CALL_CUDA_AS(ctx, FEA_ERR_DEVICE,
                     cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep));
  }

  FEA_CALL_CUDA_AS(ctx, FEA_ERR_DEVICE,
                   cudaStreamCreateWithFlags(&b->stream, cudaStreamNonBlocking));

  FEA_CALL_CUBLAS_AS(ctx, FEA_ERR_DEVICE, cublasCreate(&b->blas));
  FEA_CALL_CUBLAS_AS(ctx, FEA_ERR_DEVICE, cublasSetStream(b->blas, b->stream));
  /* Scalars in and reductions out through host memory: dot and nrm2 return
   * to the caller synchronously, which is what the vector API promises. */
  FEA_CALL_CUBLAS_AS(ctx, FEA_ERR_DEVICE, cublasSetPointerMode(b->blas, CUBLAS_POINTER_MODE_HOST));

  FEA_CALL_CUSPARSE_AS(ctx, FEA_ERR_DEVICE, cusparseCreate(&b->sparse));
  FEA_CALL_CUSPARSE_AS(ctx, FEA_ERR_DEVICE, cusparseSetStream(b->sparse, b->stream));

  FEA_CALL_CUSOLVER_AS(ctx, FEA_ERR_DEVICE, cusolverDnCreate(&b->solver));
  FEA_CALL_CUSOLVER_AS(ctx, FEA_ERR_DEVICE, cusolverDnSetStream(b->solver, b->stream));
  FEA_CALL_CUSOLVER_AS(ctx, FEA_ERR_DEVICE, cusolverDnCreateParams(&b->solver_params));

  FEA_CALL_CUDA_AS(ctx, FEA_ERR_DEVICE, cudaMalloc(&dinfo, sizeof(int)));
  b->dinfo = dinfo;
  return FEA_SUCCESS;
}

static fea_status cuda_init(fea_context *ctx, const fea_resource_opts *opts) {
  int count = 0;
  int device = 0, lanes = 0, leaves_on_device = 1, unprotected = 0;
  /* Checked before the device is touched: nothing to undo on a bad option. */
  FEA_CALL(parse_streams(ctx, opts, &lanes));
  FEA_CALL(parse_leaves(ctx, opts, &leaves_on_device));
  FEA_CALL(parse_scatter(ctx, opts, &unprotected));
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    return FEA_ERROR(ctx, FEA_ERR_DEVICE, "cudaGetDeviceCount() failed: %s (%s)",
                     cudaGetErrorName(e), cudaGetErrorString(e));
  }
  FEA_CHECK(count > 0, ctx, FEA_ERR_DEVICE, "no CUDA device found");

  const char *text = opts ? fea_resource_opt(opts, "device") : NULL;
  if (text) FEA_CALL(parse_device(ctx, text, count, &device));

  struct fea_cuda *b = calloc(1, sizeof *b);
  FEA_CHECK(b != NULL, ctx, FEA_ERR_OUT_OF_MEMORY, "cannot allocate %zu bytes of CUDA state",
            sizeof *b);
  b->device = device;
  b->lanes_wanted = lanes;
  b->leaves_on_device = leaves_on_device;
  b->scatter_unprotected = unprotected;
  fea_status st = cuda_setup(ctx, b);
  if (st < 0) {
    cuda_teardown(b);
    free(b);
    return st;
  }

  ctx->backend_data = b;
  /* Host threads serve the work that stays on the host (the multifrontal
   * leaves are integrated there): one per core, as /cpu/threads starts. */
  fea_topology topo;
  if (fea_topology_get(&topo) == FEA_SUCCESS && topo.cores > 0) ctx->nthreads = topo.cores;
  fea_log(ctx, FEA_LOG_INFO, "using GPU %d: %s, %.1f GiB, cc %d.%d", b->device, b->name,
          (double)b->total_memory / (1024.0 * 1024.0 * 1024.0), b->cc_major, b->cc_minor);
  return FEA_SUCCESS;
}

static void cuda_finalize(fea_context *ctx) {
  struct fea_cuda *b = ctx->backend_data;
  if (!b) return;
  (void)cudaSetDevice(b->device);
  cuda_teardown(b);
  free(b);
  ctx->backend_data = NULL;
}

static fea_status cuda_set_num_threads(fea_context *ctx, int nthreads) {
  ctx->nthreads = nthreads;
  return FEA_SUCCESS;
}

static void cuda_fill_info(const fea_context *ctx, fea_context_info *info) {
  const struct fea_cuda *b = ctx->backend_data;
  copy_text(info->device_name, sizeof info->device_name, b->name);
  info->device_id = b->device;
  info->device_cc = 10 * b->cc_major + b->cc_minor;
  info->device_memory_bytes = (uint64_t)b->total_memory;
}

fea_status fea_cuda_enter(fea_context *ctx, struct fea_cuda **out) {
  struct fea_cuda *b = ctx->backend_data;
  int current = -1;
  FEA_CALL_CUDA(ctx, cudaGetDevice(&current));
  if (current != b->device) FEA_CALL_CUDA(ctx, cudaSetDevice(b->device));
  *out = b;
  return FEA_SUCCESS;
}

static cudaError_t device_alloc(const struct fea_cuda *b, size_t bytes, void **out) {
  *out = NULL;
  return b->mem_pools ? cudaMallocAsync(out, bytes, b->stream) : cudaMalloc(out, bytes);
}

static fea_status alloc_error(fea_context *ctx, const struct fea_cuda *b, cudaError_t e,
                              size_t bytes) {
  (void)cudaGetLastError();
  return FEA_ERROR(ctx, fea_cuda_status_of(e), "%s() of %zu bytes on GPU %d failed: %s (%s)",
                   b->mem_pools ? "cudaMallocAsync" : "cudaMalloc", bytes, b->device,
                   cudaGetErrorName(e), cudaGetErrorString(e));
}

fea_status fea_cuda_malloc(fea_context *ctx, size_t bytes, void **out) {
  struct fea_cuda *b = ctx->backend_data;
  cudaError_t e = device_alloc(b, bytes, out);
  return e == cudaSuccess ? FEA_SUCCESS : alloc_error(ctx, b, e, bytes);
}

void fea_cuda_free(fea_context *ctx, void *p) {
  struct fea_cuda *b = ctx->backend_data;
  if (!p) return;
  /* Stream-ordered: kernels already queued on the stream may still read p. */
  cudaError_t e = b->mem_pools ? cudaFreeAsync(p, b->stream) : cudaFree(p);
  if (e != cudaSuccess) (void)cudaGetLastError();
}

fea_status fea_cuda_workspace(fea_context *ctx, size_t bytes, void **out) {
  struct fea_cuda *b = ctx->backend_data;
  if (bytes > b->work_bytes) {
    /* Grow by half again at least, so that slowly rising requests do not
     * reallocate every time; fall back to the exact size if that fails. */
    size_t want = b->work_bytes + b->work_bytes / 2;
    if (want < bytes) want = bytes;
    want = fea_cuda_align_up(want);
    void *p = NULL;
    fea_cuda_free(ctx, b->work);
    b->work = NULL;
    b->work_bytes = 0;
    if (device_alloc(b, want, &p) != cudaSuccess) {
      (void)cudaGetLastError();
      want = bytes;
      cudaError_t e = device_alloc(b, want, &p);
      if (e != cudaSuccess) return alloc_error(ctx, b, e, want);
    }
    b->work = p;
    b->work_bytes = want;
  }
  *out = b->work;
  return FEA_SUCCESS;
}

fea_status fea_cuda_available_bytes(fea_context *ctx, size_t *free_bytes, size_t *total_bytes) {
  struct fea_cuda *b = NULL;
  FEA_CALL(fea_cuda_enter(ctx, &b)); /* cudaMemGetInfo answers for the current device */
  size_t free_b = 0, total_b = 0;
  FEA_CALL_CUDA(ctx, cudaMemGetInfo(&free_b, &total_b));
  if (b->mem_pools) {
    /* Attribute values are 64-bit (cuuint64_t). */
    cudaMemPool_t pool;
    uint64_t reserved = 0, used = 0;
    FEA_CALL_CUDA(ctx, cudaDeviceGetMemPool(&pool, b->device));
    FEA_CALL_CUDA(ctx, cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &reserved));
    FEA_CALL_CUDA(ctx, cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &used));
    if (reserved > used) free_b += (size_t)(reserved - used);
  }
  *free_bytes = free_b;
  if (total_bytes) *total_bytes = total_b;
  return FEA_SUCCESS;
}

fea_status fea_cuda_sync(fea_context *ctx) {
  struct fea_cuda *b = ctx->backend_data;
  FEA_CALL_CUDA(ctx, cudaStreamSynchronize(b->stream));
  return FEA_SUCCESS;
}

fea_status fea_cuda_read_info(fea_context *ctx, int *info) {
  struct fea_cuda *b = ctx->backend_data;
  FEA_CALL_CUDA(ctx,
                cudaMemcpyAsync(info, b->dinfo, sizeof *info, cudaMemcpyDeviceToHost, b->stream));
  return fea_cuda_sync(ctx);
}

/* The options and their values (resource.h), checked before the device is
 * probed: "/gpu/cuda:streams=9" is a bad option on any machine. The
 * device's upper bound is the count of visible devices, known only here. */
#define FEA_CUDA_STR_(x) #x
#define FEA_CUDA_STR(x) FEA_CUDA_STR_(x)
static const char *const cuda_options[] = {"device=0..",
                                           "streams=1.." FEA_CUDA_STR(FEA_CUDA_MAX_LANES),
                                           "leaves=device|host", "scatter=protected|unprotected",
                                           NULL};

const struct fea_backend fea_backend_gpu_cuda = {
    .abi = FEA_BACKEND_ABI,
    .prefix = "/gpu/cuda",
    .priority = 30,
    .delegate = "/cpu/ref",
    .host = "/cpu/threads",
    .mem = FEA_MEM_DEVICE,
    .options = cuda_options,
    .probe = cuda_probe,
    .init = cuda_init,
    .finalize = cuda_finalize,
    .set_num_threads = cuda_set_num_threads,
    .fill_info = cuda_fill_info,
    .vec = &fea_cuda_vector_ops,
    .op = &fea_cuda_operator_ops,
    .multifrontal = &fea_cuda_multifrontal_ops,
    .dense = &fea_cuda_dense_ops,
    .m1 = &fea_cuda_m1_ops,
    .mg = &fea_cuda_mg_kernels,
};
