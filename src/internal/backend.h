/* The backend vtable (docs/backends.md) and the registry that resolves
 * resource strings to backends. */
#ifndef FEA_INTERNAL_BACKEND_H
#define FEA_INTERNAL_BACKEND_H

#include <stdint.h>

#include <feaccel/context.h>
#include <feaccel/vector.h>

#include "linalg/dense.h"
#include "private-export.h"

/* Bumped whenever struct fea_backend or an ops table changes layout. */
#define FEA_BACKEND_ABI 8u

/* Where a backend keeps vector and matrix data. Ops are only delegated between
 * backends of the same memory space: host code must never see device pointers. */
typedef enum fea_memspace { FEA_MEM_HOST = 0, FEA_MEM_DEVICE = 1 } fea_memspace;

/* Resource options after the colon, "key=value,key=value". */
#define FEA_MAX_RESOURCE_OPTS 8
typedef struct fea_resource_opts {
  int count;
  char key[FEA_MAX_RESOURCE_OPTS][32];
  char value[FEA_MAX_RESOURCE_OPTS][64];
} fea_resource_opts;

/* Vector ops: data of x/y is in the backend's memory space. The interface has
 * checked lengths, precisions and contexts. */
struct fea_vector_ops {
  fea_status (*alloc)(fea_context *ctx, fea_vector *v); /* v->data, zeroed */
  void (*release)(fea_context *ctx, fea_vector *v);
  fea_status (*write)(fea_context *ctx, fea_vector *v, fea_precision host_prec, const void *host);
  fea_status (*read)(fea_context *ctx, const fea_vector *v, fea_precision host_prec, void *host);
  fea_status (*set_all)(fea_context *ctx, fea_vector *v, double alpha);
  fea_status (*copy)(fea_context *ctx, const fea_vector *x, fea_vector *y); /* converts */
  fea_status (*axpy)(fea_context *ctx, fea_vector *y, double alpha, const fea_vector *x);
  fea_status (*scale)(fea_context *ctx, fea_vector *x, double alpha);
  fea_status (*dot)(fea_context *ctx, const fea_vector *x, const fea_vector *y, double *r);
  fea_status (*nrm2)(fea_context *ctx, const fea_vector *x, double *r);
};

/* Operators on device memory are in operator-device.h (host backends leave
 * the slot NULL). The multifrontal ops are in multifrontal.h. */
struct fea_operator_ops;
struct fea_multifrontal_ops;
/* The prehandled solver's M1 on device memory (prehandled-device.h); host backends
 * leave it NULL and run M1 through their dense ops. Never delegated. */
struct fea_ph_m1_device_ops;
/* Multigrid's vector kernels on device memory (multigrid-kernels.h); host
 * backends leave it NULL and run the host table. */
struct fea_mg_kernels;

struct fea_backend {
  uint32_t abi;         /* FEA_BACKEND_ABI; the registry rejects a mismatch */
  const char *prefix;   /* "/cpu/ref", "/cpu/threads", "/gpu/cuda" */
  unsigned priority;    /* higher wins for NULL and family resources */
  const char *delegate; /* missing slots fall back to this backend */
  fea_memspace mem;
  const char *const *options; /* NULL-terminated accepted options with their values'
                               * specs ("threads=1..1024", "bind=core|none": resource.h),
                               * checked before the probe */
  /* Cheap availability check without side effects; on failure writes why. */
  fea_status (*probe)(char *reason, size_t len);
  /* Set up ctx->backend_data, threads, device. On failure leave nothing allocated. */
  fea_status (*init)(fea_context *ctx, const fea_resource_opts *opts);
  void (*finalize)(fea_context *ctx);
  /* Optional: accept or refuse a thread count (interface checked 1..1024). */
  fea_status (*set_num_threads)(fea_context *ctx, int nthreads);
  /* Optional: add backend facts (device name, memory) to a full-size info. */
  void (*fill_info)(const fea_context *ctx, fea_context_info *info);
  const struct fea_vector_ops *vec;
  const struct fea_operator_ops *op;
  const struct fea_multifrontal_ops *multifrontal;
  const struct fea_dense_ops *dense;
  const struct fea_ph_m1_device_ops *m1;
  const struct fea_mg_kernels *mg;
  /* Device backends: the backend whose context does the host-side work of
   * this one's objects (fea_context_host); NULL for host backends. */
  const char *host;
};

/* Registry. Every backend known to libfeaccel has an entry, compiled or not.
 * A backend built as a module (/gpu/cuda in libfeaccel.so) has `load`
 * instead of `backend`: it is loaded on the first resolve of its entry. */
typedef struct fea_backend_entry {
  const char *prefix;
  const struct fea_backend *backend; /* NULL when not compiled in */
  const char *not_built_reason;
  /* Loads the module once per process; NULL with *reason when it cannot. */
  const struct fea_backend *(*load)(const char **reason);
} fea_backend_entry;

/* The entries, in a fixed order. Looking at them loads nothing. */
const fea_backend_entry *fea_backend_entries(size_t *count);
/* The entry's backend: FEA_SUCCESS and *backend, FEA_ERR_UNSUPPORTED when it
 * was not built, FEA_ERR_DEVICE when its module cannot be loaded here; on
 * failure *backend is NULL and *reason says why. Only this loads a module. */
fea_status fea_backend_resolve(const fea_backend_entry *e, const struct fea_backend **backend,
                               const char **reason);
/* The backend of an exact prefix (resolved), or NULL. */
const struct fea_backend *fea_backend_find(const char *prefix);

extern const struct fea_backend fea_backend_cpu_ref;
extern const struct fea_backend fea_backend_cpu_threads;
#if FEA_HAVE_CUDA
extern const struct fea_backend fea_backend_gpu_cuda;
#endif

/* Value of option key, or NULL. */
FEA_PRIVATE_EXPORT const char *fea_resource_opt(const fea_resource_opts *opts, const char *key);

#endif
