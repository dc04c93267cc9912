/* Thread count and identification of the CPU BLAS meson's -Dblas chose
 * (FEA_BLAS): each BLAS has its own call for both. */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "base/blas-kernels.h"
#include "blas.h"
#include "fea-config.h"

#if FEA_BLAS == FEA_BLAS_BLIS
#include <blis.h>
#elif FEA_BLAS == FEA_BLAS_FLEXIBLAS
#include <flexiblas_api.h>
#elif FEA_BLAS == FEA_BLAS_MKL
#include <mkl.h>
#else
#include <cblas.h> /* OpenBLAS's: openblas_set_num_threads, openblas_get_config */
#endif

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

/* The BLAS's own process-wide setting. BLIS: bli_thread_set_num_threads
 * sets its global runtime count (BLIS_NUM_THREADS's); FlexiBLAS passes the
 * count on to its backend; the library links MKL's sequential layer, where
 * the call is a no-op kept for a threaded one linked by hand. */
static void set_blas_threads(int nthreads) {
#if FEA_BLAS == FEA_BLAS_BLIS
  bli_thread_set_num_threads(nthreads);
#elif FEA_BLAS == FEA_BLAS_FLEXIBLAS
  flexiblas_set_num_threads(nthreads);
#elif FEA_BLAS == FEA_BLAS_MKL
  mkl_set_num_threads(nthreads);
#else
  openblas_set_num_threads(nthreads);
#endif
}

void fea_blas_use_threads(int nthreads) {
  if (blas_override > 0) nthreads = blas_override;
  if (atomic_exchange(&blas_threads, nthreads) != nthreads) set_blas_threads(nthreads);
}

void fea_blas_describe(char *buf, size_t len) {
  fea_blas_kernels k;
  fea_blas_kernels_detect(&k);
  const char *kernels = k.name[0] ? k.name : "unknown";
#if FEA_BLAS == FEA_BLAS_BLIS
  snprintf(buf, len, "BLIS %s (%s), reference LAPACK (kernels: %s)", bli_info_get_version_str(),
           bli_info_get_enable_openmp()     ? "OpenMP"
           : bli_info_get_enable_pthreads() ? "pthreads"
                                            : "serial",
           kernels);
#elif FEA_BLAS == FEA_BLAS_FLEXIBLAS
  int major = 0, minor = 0, patch = 0;
  char backend[64] = "?";
  flexiblas_get_version(&major, &minor, &patch);
  flexiblas_current_backend(backend, sizeof backend);
  snprintf(buf, len, "FlexiBLAS %d.%d.%d, backend %s (kernels: %s)", major, minor, patch, backend,
           kernels);
#elif FEA_BLAS == FEA_BLAS_MKL
  char version[96] = "";
  mkl_get_version_string(version, (int)sizeof version);
  snprintf(buf, len, "%s (kernels: %s)", version, kernels);
#else
  const char *config = openblas_get_config();
  /* The config string starts with "OpenBLAS <version>" in every release we know. */
  int named = config && strncmp(config, "OpenBLAS", 8) == 0;
  snprintf(buf, len, "%s%s (kernels: %s)", named ? "" : "OpenBLAS ", config ? config : "?",
           kernels);
#endif
}
