/* Every backend libfeaccel knows, compiled in or not, so that
 * fea_backend_list() can say why one is missing; resolves an entry to its
 * backend, loading /gpu/cuda's module on first need.
 *
 * Compiled once per library (lib/meson.build): into libfeaccel.so with
 * FEA_REGISTRY_CUDA_MODULE=1, where /gpu/cuda lives in libfeaccel-cuda.so and
 * is loaded only when asked for (a CPU-only program then maps no CUDA
 * library); into libfeaccel.a with FEA_REGISTRY_STATIC=1, where it cannot be
 * loaded (the module links libfeaccel.so, and would bring a second copy of
 * the library's state into a program that carries its own); and into the
 * internal archive, where the backend is linked in. */
#include <string.h>

#include "fea-config.h"
#include "internal/backend.h"
#include "cuda-module.h"

#ifndef FEA_REGISTRY_CUDA_MODULE
#define FEA_REGISTRY_CUDA_MODULE 0
#endif
#ifndef FEA_REGISTRY_STATIC
#define FEA_REGISTRY_STATIC 0
#endif

static const fea_backend_entry entries[] = {
    {"/cpu/ref", &fea_backend_cpu_ref, NULL, NULL},
    {"/cpu/threads", &fea_backend_cpu_threads, NULL, NULL},
#if FEA_HAVE_CUDA && FEA_REGISTRY_STATIC
    {"/gpu/cuda", NULL,
     "not available to this program: it links libfeaccel statically (libfeaccel.a), and /gpu/cuda "
     "is served by libfeaccel.so's module libfeaccel-cuda.so; link libfeaccel.so to use it",
     NULL},
#elif FEA_HAVE_CUDA && FEA_REGISTRY_CUDA_MODULE
    {"/gpu/cuda", NULL, NULL, fea_cuda_module_load},
#elif FEA_HAVE_CUDA
    {"/gpu/cuda", &fea_backend_gpu_cuda, NULL, NULL},
#else
    {"/gpu/cuda", NULL,
     "not built: this libfeaccel was configured without CUDA (-Dcuda=disabled, or nvcc and the "
     "CUDA libraries were not found at configure time)",
     NULL},
#endif
};

const fea_backend_entry *fea_backend_entries(size_t *count) {
  *count = sizeof entries / sizeof entries[0];
  return entries;
}

fea_status fea_backend_resolve(const fea_backend_entry *e, const struct fea_backend **backend,
                               const char **reason) {
  *reason = "";
  if (e->load) {
    *backend = e->load(reason);
    return *backend ? FEA_SUCCESS : FEA_ERR_DEVICE;
  }
  *backend = e->backend;
  if (e->backend) return FEA_SUCCESS;
  *reason = e->not_built_reason;
  return FEA_ERR_UNSUPPORTED;
}

const struct fea_backend *fea_backend_find(const char *prefix) {
  if (!prefix) return NULL;
  for (size_t i = 0; i < sizeof entries / sizeof entries[0]; i++) {
    if (strcmp(entries[i].prefix, prefix) != 0) continue;
    const struct fea_backend *b;
    const char *reason;
    return fea_backend_resolve(&entries[i], &b, &reason) == FEA_SUCCESS ? b : NULL;
  }
  return NULL;
}
