/* Every backend libfeaccel knows, compiled in or not, so that
 * fea_backend_list() can say why one is missing. */
#include <string.h>

#include "fea-config.h"
#include "backend.h"

static const fea_backend_entry entries[] = {
    {"/cpu/ref", &fea_backend_cpu_ref, NULL},
    {"/cpu/threads", &fea_backend_cpu_threads, NULL},
#if FEA_HAVE_CUDA
    {"/gpu/cuda", &fea_backend_gpu_cuda, NULL},
#else
    {"/gpu/cuda", NULL,
     "not built: this libfeaccel was configured without CUDA (-Dcuda=disabled, or nvcc and the "
     "CUDA libraries were not found at configure time)"},
#endif
};

const fea_backend_entry *fea_backend_entries(size_t *count) {
  *count = sizeof entries / sizeof entries[0];
  return entries;
}

const struct fea_backend *fea_backend_find(const char *prefix) {
  if (!prefix) return NULL;
  for (size_t i = 0; i < sizeof entries / sizeof entries[0]; i++)
    if (entries[i].backend && strcmp(entries[i].prefix, prefix) == 0) return entries[i].backend;
  return NULL;
}
