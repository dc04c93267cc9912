/* Thread count and identification of the CPU BLAS. */
#include <cblas.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "blas.h"

static atomic_int blas_threads; /* 0 until first set */

void fea_blas_use_threads(int nthreads) {
  if (atomic_exchange(&blas_threads, nthreads) != nthreads) openblas_set_num_threads(nthreads);
}

void fea_blas_describe(char *buf, size_t len) {
  const char *config = openblas_get_config();
  const char *core = openblas_get_corename();
  /* The config string starts with "OpenBLAS <version>" in every release we know. */
  int named = config && strncmp(config, "OpenBLAS", 8) == 0;
  snprintf(buf, len, "%s%s (kernels: %s)", named ? "" : "OpenBLAS ", config ? config : "?",
           core ? core : "?");
}
