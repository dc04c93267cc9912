/* The one symbol libfeaccel-cuda.so exports: the /gpu/cuda backend table,
 * handed to the registry of libfeaccel.so when it loads the module. */
#include "fea-config.h"

#include "internal/backend.h"
#include "backends/cuda-module.h"

__attribute__((visibility("default"))) const struct fea_backend *fea_cuda_module_backend(void) {
  return &fea_backend_gpu_cuda;
}
