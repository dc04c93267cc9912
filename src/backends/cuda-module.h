/* The contract between libfeaccel.so and its /gpu/cuda module
 * (libfeaccel-cuda.so, docs/backends.md): the module's file name, its one
 * exported entry point, and the registry's loader of it. */
#ifndef FEA_INTERNAL_CUDA_MODULE_H
#define FEA_INTERNAL_CUDA_MODULE_H

#include "internal/backend.h"

/* Looked for next to libfeaccel.so, then by the dynamic linker's search path. */
#define FEA_CUDA_MODULE_FILE "libfeaccel-cuda.so"
/* The module's only exported symbol; the registry checks the table's .abi. */
#define FEA_CUDA_MODULE_ENTRY "fea_cuda_module_backend"
typedef const struct fea_backend *(*fea_cuda_module_entry_fn)(void);
/* Defined in the module (cuda/cuda-module-entry.c). */
const struct fea_backend *fea_cuda_module_backend(void);

/* Loads the module once per process (thread-safe) and returns its backend;
 * NULL with *reason (dlerror's text, or an ABI mismatch) when it cannot. */
const struct fea_backend *fea_cuda_module_load(const char **reason);

#endif
