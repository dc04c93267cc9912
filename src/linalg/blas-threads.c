/* Thread count and identification of the CPU BLAS. */
#include <cblas.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "blas.h"

static atomic_int blas_threads; /* 0 until first set */
/* Set on the threads of a parallel region whose BLAS calls must stay
 * single-threaded: the count is process-wide, so a node-parallel level sets
 * it to 1 once and every call from inside the region must leave it there. */
static _Thread_local int blas_override; /* 0: none */

int fea_blas_push_threads(int nthreads) {
  int prev = blas_override;
  blas_override = nthreads;
  return prev;
}

void fea_blas_pop_threads(int previous) { blas_override = previous; }

void fea_blas_use_threads(int nthreads) {
  if (blas_override > 0) nthreads = blas_override;
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
