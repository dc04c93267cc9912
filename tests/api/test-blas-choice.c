/* The BLAS meson's -Dblas chose (FEA_TEST_BLAS, from tests/api/meson.build)
 * is the one that runs: fea_context_get_info names it and its kernels, the
 * process maps its library and no other BLAS (with BLIS, the run path pairs
 * it with reference LAPACK even where the system's alternatives point at
 * OpenBLAS), and a Cholesky factorization through LAPACKE in this process
 * matches its closed form. */
#include <lapacke.h>

#include "api-common.h"

#ifndef FEA_TEST_BLAS
#error "tests/api/meson.build defines FEA_TEST_BLAS (the -Dblas choice)"
#endif

/* Whether a line of /proc/self/maps names a file whose path contains
 * needle; the matching path goes to found. */
static int maps_have(const char *needle, char *found, size_t len) {
  FILE *f = fopen("/proc/self/maps", "r");
  cr_assert_not_null(f);
  char line[1024];
  int hit = 0;
  while (!hit && fgets(line, sizeof line, f)) {
    const char *path = strchr(line, '/');
    if (path && strstr(path, needle)) {
      hit = 1;
      if (found) snprintf(found, len, "%s", path);
    }
  }
  fclose(f);
  return hit;
}

Test(blas_choice, info_names_the_blas_and_its_kernels) {
  fea_context *ctx = NULL;
  OK(fea_context_create("/cpu/ref", &ctx));
  fea_context_info info = FEA_CONTEXT_INFO_INIT;
  OK(fea_context_get_info(ctx, &info));
  const char *want = strcmp(FEA_TEST_BLAS, "blis") == 0        ? "BLIS "
                     : strcmp(FEA_TEST_BLAS, "flexiblas") == 0 ? "FlexiBLAS "
                     : strcmp(FEA_TEST_BLAS, "mkl") == 0       ? ""
                                                               : "OpenBLAS ";
  cr_assert(strncmp(info.blas, want, strlen(want)) == 0, "-Dblas=%s, info.blas \"%s\"",
            FEA_TEST_BLAS, info.blas);
  /* The kernels, by name where the BLAS says, in both fields alike. */
  char named[64];
  snprintf(named, sizeof named, "(kernels: %s)",
           info.blas_kernels[0] ? info.blas_kernels : "unknown");
  cr_assert(strstr(info.blas, named) != NULL, "info.blas \"%s\" lacks \"%s\"", info.blas, named);
#if defined(__x86_64__)
  if (strcmp(FEA_TEST_BLAS, "blis") == 0 || strcmp(FEA_TEST_BLAS, "openblas") == 0) {
    cr_assert_neq(info.blas_kernels[0], '\0', "%s", info.blas);
    cr_assert_str_neq(info.blas_isa, "unknown", "kernels %s", info.blas_kernels);
  }
#endif
  OK(fea_context_destroy(&ctx));
}

Test(blas_choice, process_maps_one_blas) {
  char path[1024] = "";
  if (strcmp(FEA_TEST_BLAS, "blis") == 0) {
    cr_assert(maps_have("libblis", path, sizeof path), "libblis is not mapped");
    cr_assert(!maps_have("libopenblas", path, sizeof path), "OpenBLAS is mapped too: %s", path);
    /* LAPACK under LAPACKE: the reference one, which calls BLIS. */
    if (maps_have("liblapack.so", path, sizeof path))
      cr_assert(strstr(path, "/lapack/liblapack.so") != NULL, "LAPACK from %s", path);
  } else if (strcmp(FEA_TEST_BLAS, "openblas") == 0) {
    cr_assert(maps_have("libopenblas", path, sizeof path), "libopenblas is not mapped");
    cr_assert(!maps_have("libblis", path, sizeof path), "BLIS is mapped too: %s", path);
  } else if (strcmp(FEA_TEST_BLAS, "flexiblas") == 0) {
    cr_assert(maps_have("libflexiblas", path, sizeof path), "libflexiblas is not mapped");
  } else {
    cr_assert(maps_have("libmkl_", path, sizeof path), "no MKL library is mapped");
  }
}

/* LAPACKE's Cholesky factor of the 4x4 matrix with 2 on the diagonal and 1
 * off it: L(j,j) = sqrt((j+2)/(j+1)), L(i,j) = 1/sqrt((j+1)(j+2)) below
 * (0-based), through the LAPACK this process runs. */
Test(blas_choice, lapacke_cholesky_closed_form) {
  enum { n = 4 };
  double a[n * n];
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) a[i * n + j] = i == j ? 2.0 : 1.0;
  cr_assert_eq(LAPACKE_dpotrf(LAPACK_ROW_MAJOR, 'L', n, a, n), 0);
  for (int j = 0; j < n; j++) {
    double d = sqrt((j + 2.0) / (j + 1.0));
    cr_assert_float_eq(a[j * n + j], d, 1e-14, "L(%d,%d)", j, j);
    for (int i = j + 1; i < n; i++)
      cr_assert_float_eq(a[i * n + j], 1.0 / sqrt((j + 1.0) * (j + 2.0)), 1e-14, "L(%d,%d)", i, j);
  }
}
