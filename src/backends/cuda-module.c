/* Loads /gpu/cuda's module (libfeaccel-cuda.so) for the registry of
 * libfeaccel.so, once per process: from the directory libfeaccel.so itself
 * was loaded from, else through the dynamic linker's search path. */
#define _GNU_SOURCE /* dladdr */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "internal/backend.h"
#include "cuda-module.h"

static pthread_once_t module_once = PTHREAD_ONCE_INIT;
static const struct fea_backend *module_backend;
static char module_failure[512];

/* The module file next to the libfeaccel.so this code runs in, when there is
 * one: a build tree, a bundle and an installed libdir all keep the two side
 * by side, whatever LD_LIBRARY_PATH says. */
static int module_beside_library(char *path, size_t len) {
  Dl_info info;
  if (!dladdr(&fea_backend_cpu_ref, &info) || !info.dli_fname) return 0;
  const char *slash = strrchr(info.dli_fname, '/');
  if (!slash) return 0;
  int n = snprintf(path, len, "%.*s/%s", (int)(slash - info.dli_fname), info.dli_fname,
                   FEA_CUDA_MODULE_FILE);
  return n > 0 && (size_t)n < len && access(path, F_OK) == 0;
}

static void load_module(void) {
  char path[4096];
  /* Only fall back to the search path when no module sits beside the
   * library: if one does, its own failure (typically a CUDA library the
   * dynamic linker cannot find) is the reason to report. */
  if (!module_beside_library(path, sizeof path))
    snprintf(path, sizeof path, "%s", FEA_CUDA_MODULE_FILE);
  /* Never closed: every /gpu/cuda context, and each ops table merged into
   * one, points into the module's code and data, and the registry hands the
   * same backend to every later context of the process. */
  void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    snprintf(module_failure, sizeof module_failure, "cannot load its module: %s", dlerror());
    return;
  }
  fea_cuda_module_entry_fn entry;
  void *symbol = dlsym(handle, FEA_CUDA_MODULE_ENTRY);
  if (!symbol) {
    snprintf(module_failure, sizeof module_failure, "its module %.200s has no entry point: %s",
             path, dlerror());
    return;
  }
  memcpy(&entry, &symbol, sizeof entry); /* POSIX: dlsym's pointer may be a function's */
  const struct fea_backend *b = entry();
  if (!b || b->abi != FEA_BACKEND_ABI) {
    snprintf(module_failure, sizeof module_failure,
             "its module %.200s was built for backend ABI %u, this library needs %u", path,
             b ? b->abi : 0u, FEA_BACKEND_ABI);
    return;
  }
  module_backend = b;
}

const struct fea_backend *fea_cuda_module_load(const char **reason) {
  pthread_once(&module_once, load_module);
  if (!module_backend) *reason = module_failure;
  return module_backend;
}
