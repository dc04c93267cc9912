/* Shared helpers of the /gpu/cuda tests: contexts, vectors from host data,
 * and unit roundoffs that the tolerances are built from. */
#ifndef FEA_TEST_CUDA_H
#define FEA_TEST_CUDA_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>
#include <feaccel.h>

#include "base/half.h"

#define OK(expr)                                                               \
  do {                                                                         \
    fea_status ok_status_ = (expr);                                            \
    cr_assert_eq(ok_status_, FEA_SUCCESS, "%s returned %s: %s", #expr,         \
                 fea_status_string(ok_status_), fea_context_last_error(NULL)); \
  } while (0)

static const fea_precision all_precs[] = {FEA_F64, FEA_F32, FEA_F16, FEA_BF16};

/* The GPU context, or the test is skipped with the reason there is none.
 * FEA_TEST_REQUIRE_GPU=1 (the device machine's first-run sets it) turns the
 * skip into a failure, so a GPU machine whose /gpu/cuda cannot start fails
 * loudly instead of showing a green, skipped suite. FEA_TEST_CUDA_RESOURCE
 * names the resource with options (say /gpu/cuda:streams=1) so that one
 * test program checks each setting of the backend. */
static inline fea_context *open_gpu(void) {
  fea_context *ctx = NULL;
  const char *resource = getenv("FEA_TEST_CUDA_RESOURCE");
  if (!resource || !resource[0]) resource = "/gpu/cuda";
  fea_status st = fea_context_create(resource, &ctx);
  const char *require = getenv("FEA_TEST_REQUIRE_GPU");
  if (st == FEA_ERR_DEVICE && !(require && strcmp(require, "1") == 0))
    cr_skip_test("no usable GPU: %s", fea_context_last_error(NULL));
  cr_assert_eq(st, FEA_SUCCESS, "creating %s returned %s: %s", resource, fea_status_string(st),
               fea_context_last_error(NULL));
  return ctx;
}

static inline fea_context *open_ref(void) {
  fea_context *ctx = NULL;
  OK(fea_context_create("/cpu/ref", &ctx));
  return ctx;
}

/* Unit roundoff of the storage format. */
static inline double unit_roundoff(fea_precision p) {
  switch (p) {
  case FEA_F64: return ldexp(1.0, -53);
  case FEA_F32: return ldexp(1.0, -24);
  case FEA_F16: return ldexp(1.0, -11);
  case FEA_BF16: return ldexp(1.0, -8);
  }
  return 1.0;
}

/* Unit roundoff of the arithmetic: 16-bit data is computed on in FP32. */
static inline double compute_roundoff(fea_precision p) {
  return p == FEA_F64 ? ldexp(1.0, -53) : ldexp(1.0, -24);
}

static inline size_t elem_size(fea_precision p) { return p == FEA_F64 ? 8 : p == FEA_F32 ? 4 : 2; }

/* Deterministic uniform numbers in [-1, 1): every run sees the same data. */
static inline double next_uniform(uint64_t *state) {
  *state = *state * 6364136223846793005ull + 1442695040888963407ull;
  return (double)(*state >> 11) * ldexp(1.0, -52) - 1.0;
}

static inline double *random_array(size_t n, uint64_t seed) {
  double *x = malloc((n ? n : 1) * sizeof *x);
  cr_assert_not_null(x);
  for (size_t i = 0; i < n; i++) x[i] = next_uniform(&seed);
  return x;
}

/* A vector of precision p holding host doubles x (rounded to nearest even). */
static inline fea_vector *vector_from(fea_context *ctx, fea_precision p, const double *x,
                                      fea_index n) {
  fea_vector *v = NULL;
  OK(fea_vector_create(ctx, n, p, &v));
  OK(fea_vector_write(v, n, FEA_F64, x));
  return v;
}

/* The vector's values as doubles (exact: widening never rounds). */
static inline double *vector_values(const fea_vector *v, fea_index n) {
  double *x = malloc((size_t)(n ? n : 1) * sizeof *x);
  cr_assert_not_null(x);
  OK(fea_vector_read(v, n, FEA_F64, x));
  return x;
}

/* The vector's bytes in its own precision. */
static inline void *vector_bits(const fea_vector *v, fea_index n, fea_precision p) {
  void *x = malloc((size_t)(n ? n : 1) * elem_size(p));
  cr_assert_not_null(x);
  OK(fea_vector_read(v, n, p, x));
  return x;
}

/* Criterion's own main exits 0 when every test skipped, which meson shows as a
 * pass; exit 77 instead so that a machine without a GPU reports SKIP. */
static int all_tests_skipped;

ReportHook(POST_ALL)(struct criterion_global_stats *stats) {
  all_tests_skipped = stats->nb_tests > 0 && stats->tests_skipped == stats->nb_tests;
}

int main(int argc, char *argv[]) {
  struct criterion_test_set *tests = criterion_initialize();
  int failed = 0;
  if (criterion_handle_args(argc, argv, true)) failed = !criterion_run_all_tests(tests);
  criterion_finalize(tests);
  return all_tests_skipped && !failed ? 77 : failed;
}

#endif
