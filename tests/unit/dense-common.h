/* Shared by the dense unit tests: contexts per CPU backend, matrices held in
 * vectors (column-major with padding rows below each column), references
 * computed in long double, and the unit roundoffs the tolerances use. */
#ifndef FEA_TESTS_UNIT_DENSE_COMMON_H
#define FEA_TESTS_UNIT_DENSE_COMMON_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <criterion/parameterized.h>
#include <feaccel.h>

#include "linalg/dense.h"

/* The string is held in the struct: Criterion copies the parameter into the
 * test's process, where the parent's addresses may not hold. */
struct cpu_param {
  char resource[32];
};

/* Static data; no library call in the generator (it runs in the parent). */
#define CPU_TEST(Suite, Name)                                                         \
  ParameterizedTestParameters(Suite, Name) {                                          \
    static struct cpu_param cpus[] = {{"/cpu/ref"}, {"/cpu/threads"}};                \
    return cr_make_param_array(struct cpu_param, cpus, sizeof cpus / sizeof cpus[0]); \
  }                                                                                   \
  static void Suite##_##Name##_body(fea_context *ctx);                                \
  ParameterizedTest(struct cpu_param *param, Suite, Name) {                           \
    cr_log_info("backend %s", param->resource);                                       \
    fea_context *ctx = NULL;                                                          \
    fea_status open_status_ = fea_context_create(param->resource, &ctx);              \
    cr_assert_eq(open_status_, FEA_SUCCESS, "%s: %s", param->resource,                \
                 fea_context_last_error(NULL));                                       \
    Suite##_##Name##_body(ctx);                                                       \
    cr_assert_eq(fea_context_destroy(&ctx), FEA_SUCCESS);                             \
  }                                                                                   \
  static void Suite##_##Name##_body(fea_context *ctx)

#define OK(expr)                                                               \
  do {                                                                         \
    fea_status ok_status_ = (expr);                                            \
    cr_assert_eq(ok_status_, FEA_SUCCESS, "%s returned %s: %s", #expr,         \
                 fea_status_string(ok_status_), fea_context_last_error(NULL)); \
  } while (0)

/* expr fails with `want` and the context's message contains `needle`. */
#define EXPECT_FAIL(expr, want, ctx, needle)                                                  \
  do {                                                                                        \
    fea_status fail_status_ = (expr);                                                         \
    cr_assert_eq(fail_status_, (want), "%s returned %s, expected %s (%s)", #expr,             \
                 fea_status_string(fail_status_), fea_status_string(want),                    \
                 fea_context_last_error(NULL));                                               \
    const char *fail_msg_ = fea_context_last_error(ctx);                                      \
    cr_assert(strstr(fail_msg_, (needle)) != NULL, "message of %s lacks '%s': \"%s\"", #expr, \
              (needle), fail_msg_);                                                           \
  } while (0)

/* A rows x cols matrix with leading dimension ld in a vector of precision p;
 * h holds all ld*cols entries as stored (read back), padding included. */
struct mat {
  fea_vector *v;
  fea_dmat m;
  fea_index rows, cols, ld;
  fea_precision p;
  double *h;
};

#define PAD_VALUE 777.0 /* exact in every precision */

static inline double *mat_at(const struct mat *M, fea_index i, fea_index j) {
  return &M->h[i + j * M->ld];
}

/* Deterministic values in [-1, 1). */
static inline double next_uniform(uint64_t *s) {
  *s = *s * 6364136223846793005ull + 1442695040888963407ull;
  return (double)(*s >> 11) * 0x1p-52 - 1.0;
}

/* Random entries (padding = PAD_VALUE); extra_diag is added on the diagonal. */
static inline void mat_make(fea_context *ctx, struct mat *M, fea_index rows, fea_index cols,
                            fea_index ld, fea_precision p, uint64_t seed, double extra_diag) {
  M->rows = rows;
  M->cols = cols;
  M->ld = ld;
  M->p = p;
  fea_index n = ld * cols;
  M->h = malloc((size_t)(n + 1) * sizeof *M->h);
  cr_assert_not_null(M->h);
  uint64_t s = seed;
  for (fea_index j = 0; j < cols; j++)
    for (fea_index i = 0; i < ld; i++)
      *mat_at(M, i, j) = i < rows ? next_uniform(&s) + (i == j ? extra_diag : 0) : PAD_VALUE;
  M->v = NULL;
  OK(fea_vector_create(ctx, n, p, &M->v));
  OK(fea_vector_write(M->v, n, FEA_F64, M->h));
  OK(fea_vector_read(M->v, n, FEA_F64, M->h));
  OK(fea_dmat_from_vector(M->v, rows, cols, ld, &M->m));
}

/* Replace the stored entries by h (ld*cols values), rounding to the precision. */
static inline void mat_store(struct mat *M) {
  OK(fea_vector_write(M->v, M->ld * M->cols, FEA_F64, M->h));
  OK(fea_vector_read(M->v, M->ld * M->cols, FEA_F64, M->h));
}

/* The matrix's entries now, as doubles (caller frees). */
static inline double *mat_read(const struct mat *M) {
  double *out = malloc((size_t)(M->ld * M->cols + 1) * sizeof *out);
  cr_assert_not_null(out);
  OK(fea_vector_read(M->v, M->ld * M->cols, FEA_F64, out));
  return out;
}

static inline void mat_free(struct mat *M) {
  OK(fea_vector_destroy(&M->v));
  free(M->h);
  M->h = NULL;
}

/* Entry (i, j) of op(M). */
static inline double op_at(const struct mat *M, fea_transpose t, fea_index i, fea_index j) {
  return t ? *mat_at(M, j, i) : *mat_at(M, i, j);
}

static inline double unit_roundoff(fea_precision p) {
  switch (p) {
  case FEA_F64: return 0x1p-53;
  case FEA_F32: return 0x1p-24;
  case FEA_F16: return 0x1p-11;
  case FEA_BF16: return 0x1p-8;
  }
  return NAN;
}

/* Arithmetic unit roundoff: 16-bit data is computed on in f32. */
static inline double compute_roundoff(fea_precision p) { return p == FEA_F64 ? 0x1p-53 : 0x1p-24; }

/* Entries of `got` outside the rows x cols block (the padding) equal `before`. */
static inline void assert_padding_kept(const struct mat *M, const double *got, const char *name) {
  for (fea_index j = 0; j < M->cols; j++)
    for (fea_index i = M->rows; i < M->ld; i++)
      cr_assert_eq(got[i + j * M->ld], *mat_at(M, i, j), "%s: padding (%lld, %lld) written", name,
                   (long long)i, (long long)j);
}

#endif
