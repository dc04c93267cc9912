/* Argument errors of the vector API, one test per case, on each backend:
 * bad lengths, precisions, contexts and values, and destruction order. Each
 * checks the exact status, that the message names the bad value, and that
 * the objects involved are unchanged after the failed call. */
#include <math.h>

#include "errors-common.h"

/* ---- bad lengths and precisions --------------------------------------------- */

BACKEND_TEST(errors, negative_length) {
  struct fixture f;
  setup(&f, resource);
  fea_vector *v = (fea_vector *)&v; /* not NULL: a failed create must clear it */
  EXPECT_FAIL(fea_vector_create(f.ctx, -5, FEA_F64, &v), FEA_ERR_INVALID_ARG, f.ctx, "-5");
  cr_assert_null(v);
  teardown(&f);
}

BACKEND_TEST(errors, unknown_precision_create) {
  struct fixture f;
  setup(&f, resource);
  fea_vector *v = (fea_vector *)&v;
  EXPECT_FAIL(fea_vector_create(f.ctx, N, (fea_precision)7, &v), FEA_ERR_INVALID_ARG, f.ctx,
              "precision 7");
  cr_assert_null(v);
  teardown(&f);
}

BACKEND_TEST(errors, unknown_precision_write) {
  struct fixture f;
  setup(&f, resource);
  EXPECT_FAIL(fea_vector_write(f.x, N, (fea_precision)7, f.y0), FEA_ERR_INVALID_ARG, f.ctx,
              "precision 7");
  assert_unchanged(&f);
  teardown(&f);
}

BACKEND_TEST(errors, unknown_precision_read) {
  struct fixture f;
  setup(&f, resource);
  double buf[N] = {0};
  EXPECT_FAIL(fea_vector_read(f.x, N, (fea_precision)7, buf), FEA_ERR_INVALID_ARG, f.ctx,
              "precision 7");
  for (int i = 0; i < N; i++) cr_assert_eq(buf[i], 0.0, "host entry %d written", i);
  teardown(&f);
}

BACKEND_TEST(errors, write_length_mismatch) {
  struct fixture f;
  setup(&f, resource);
  double buf[N + 1] = {0};
  EXPECT_FAIL(fea_vector_write(f.x, N + 1, FEA_F64, buf), FEA_ERR_DIMENSION, f.ctx, "11");
  cr_assert(strstr(fea_context_last_error(f.ctx), "10") != NULL);
  EXPECT_FAIL(fea_vector_write(f.x, N - 1, FEA_F64, buf), FEA_ERR_DIMENSION, f.ctx, "9");
  assert_unchanged(&f);
  teardown(&f);
}

BACKEND_TEST(errors, read_length_mismatch) {
  struct fixture f;
  setup(&f, resource);
  double buf[N + 1] = {0};
  EXPECT_FAIL(fea_vector_read(f.x, N + 1, FEA_F64, buf), FEA_ERR_DIMENSION, f.ctx, "11");
  cr_assert(strstr(fea_context_last_error(f.ctx), "10") != NULL);
  for (int i = 0; i < N + 1; i++) cr_assert_eq(buf[i], 0.0, "host entry %d written", i);
  teardown(&f);
}

BACKEND_TEST(errors, axpy_length_mismatch) {
  struct fixture f;
  setup(&f, resource);
  fea_vector *z = other_vector(&f, N + 1, FEA_F64);
  EXPECT_FAIL(fea_vector_axpy(z, 2.0, f.x), FEA_ERR_DIMENSION, f.ctx, "11");
  cr_assert(strstr(fea_context_last_error(f.ctx), "10") != NULL);
  EXPECT_FAIL(fea_vector_axpy(f.y, 2.0, z), FEA_ERR_DIMENSION, f.ctx, "11");
  assert_all(z, N + 1, 3.0);
  assert_unchanged(&f);
  OK(fea_vector_destroy(&z));
  teardown(&f);
}

BACKEND_TEST(errors, dot_length_mismatch) {
  struct fixture f;
  setup(&f, resource);
  fea_vector *z = other_vector(&f, N + 1, FEA_F64);
  double r = 42;
  EXPECT_FAIL(fea_vector_dot(f.x, z, &r), FEA_ERR_DIMENSION, f.ctx, "11");
  cr_assert(strstr(fea_context_last_error(f.ctx), "10") != NULL);
  cr_assert_eq(r, 42);
  OK(fea_vector_destroy(&z));
  teardown(&f);
}

BACKEND_TEST(errors, copy_length_mismatch) {
  struct fixture f;
  setup(&f, resource);
  fea_vector *z = other_vector(&f, N + 1, FEA_F32);
  EXPECT_FAIL(fea_vector_copy(f.x, z), FEA_ERR_DIMENSION, f.ctx, "11");
  cr_assert(strstr(fea_context_last_error(f.ctx), "10") != NULL);
  assert_all(z, N + 1, 3.0);
  EXPECT_FAIL(fea_vector_copy(z, f.y), FEA_ERR_DIMENSION, f.ctx, "11");
  assert_unchanged(&f);
  OK(fea_vector_destroy(&z));
  teardown(&f);
}

BACKEND_TEST(errors, axpy_precision_mismatch) {
  struct fixture f;
  setup(&f, resource);
  fea_vector *w = other_vector(&f, N, FEA_F32);
  EXPECT_FAIL(fea_vector_axpy(w, 2.0, f.x), FEA_ERR_INVALID_ARG, f.ctx, "f64");
  cr_assert(strstr(fea_context_last_error(f.ctx), "f32") != NULL);
  assert_all(w, N, 3.0);
  EXPECT_FAIL(fea_vector_axpy(f.y, 2.0, w), FEA_ERR_INVALID_ARG, f.ctx, "f32");
  assert_unchanged(&f);
  OK(fea_vector_destroy(&w));
  teardown(&f);
}

BACKEND_TEST(errors, dot_precision_mismatch) {
  struct fixture f;
  setup(&f, resource);
  fea_vector *w = other_vector(&f, N, FEA_BF16);
  double r = 42;
  EXPECT_FAIL(fea_vector_dot(f.x, w, &r), FEA_ERR_INVALID_ARG, f.ctx, "bf16");
  cr_assert(strstr(fea_context_last_error(f.ctx), "f64") != NULL);
  cr_assert_eq(r, 42);
  OK(fea_vector_destroy(&w));
  teardown(&f);
}

/* ---- vectors of two contexts ------------------------------------------------ */

/* A context on the same backend and an f64 vector of N threes in it. */
static fea_vector *foreign_vector(const char *resource, fea_context **ctx2) {
  OK(fea_context_create(resource, ctx2));
  fea_vector *v = NULL;
  OK(fea_vector_create(*ctx2, N, FEA_F64, &v));
  OK(fea_vector_set_all(v, 3.0));
  return v;
}

BACKEND_TEST(errors, different_contexts_axpy) {
  struct fixture f;
  setup(&f, resource);
  fea_context *ctx2 = NULL;
  fea_vector *w = foreign_vector(resource, &ctx2);
  EXPECT_FAIL(fea_vector_axpy(w, 2.0, f.x), FEA_ERR_INVALID_ARG, ctx2, "different contexts");
  cr_assert(strstr(fea_context_last_error(ctx2), resource) != NULL);
  EXPECT_FAIL(fea_vector_axpy(f.y, 2.0, w), FEA_ERR_INVALID_ARG, f.ctx, "different contexts");
  assert_all(w, N, 3.0);
  assert_unchanged(&f);
  OK(fea_vector_destroy(&w));
  OK(fea_context_destroy(&ctx2));
  teardown(&f);
}

BACKEND_TEST(errors, different_contexts_dot) {
  struct fixture f;
  setup(&f, resource);
  fea_context *ctx2 = NULL;
  fea_vector *w = foreign_vector(resource, &ctx2);
  double r = 42;
  EXPECT_FAIL(fea_vector_dot(f.x, w, &r), FEA_ERR_INVALID_ARG, ctx2, "different contexts");
  cr_assert_eq(r, 42);
  OK(fea_vector_destroy(&w));
  OK(fea_context_destroy(&ctx2));
  teardown(&f);
}

BACKEND_TEST(errors, different_contexts_copy) {
  struct fixture f;
  setup(&f, resource);
  fea_context *ctx2 = NULL;
  fea_vector *w = foreign_vector(resource, &ctx2);
  EXPECT_FAIL(fea_vector_copy(f.x, w), FEA_ERR_INVALID_ARG, ctx2, "different contexts");
  assert_all(w, N, 3.0);
  EXPECT_FAIL(fea_vector_copy(w, f.y), FEA_ERR_INVALID_ARG, f.ctx, "different contexts");
  assert_unchanged(&f);
  OK(fea_vector_destroy(&w));
  OK(fea_context_destroy(&ctx2));
  teardown(&f);
}

/* ---- other bad arguments ---------------------------------------------------- */

BACKEND_TEST(errors, copy_to_itself) {
  struct fixture f;
  setup(&f, resource);
  EXPECT_FAIL(fea_vector_copy(f.x, f.x), FEA_ERR_INVALID_ARG, f.ctx, "same vector");
  assert_unchanged(&f);
  teardown(&f);
}

BACKEND_TEST(errors, nan_alpha_axpy) {
  struct fixture f;
  setup(&f, resource);
  EXPECT_FAIL(fea_vector_axpy(f.y, NAN, f.x), FEA_ERR_INVALID_ARG, f.ctx, "NaN");
  assert_unchanged(&f);
  teardown(&f);
}

BACKEND_TEST(errors, nan_alpha_scale) {
  struct fixture f;
  setup(&f, resource);
  EXPECT_FAIL(fea_vector_scale(f.x, NAN), FEA_ERR_INVALID_ARG, f.ctx, "NaN");
  assert_unchanged(&f);
  teardown(&f);
}

BACKEND_TEST(errors, nan_alpha_set_all) {
  struct fixture f;
  setup(&f, resource);
  EXPECT_FAIL(fea_vector_set_all(f.x, -NAN), FEA_ERR_INVALID_ARG, f.ctx, "NaN");
  assert_unchanged(&f);
  teardown(&f);
}

BACKEND_TEST(errors, null_host_write) {
  struct fixture f;
  setup(&f, resource);
  EXPECT_FAIL(fea_vector_write(f.x, N, FEA_F32, NULL), FEA_ERR_INVALID_ARG, f.ctx, "NULL");
  cr_assert(strstr(fea_context_last_error(f.ctx), "10") != NULL);
  assert_unchanged(&f);
  teardown(&f);
}

BACKEND_TEST(errors, null_host_read) {
  struct fixture f;
  setup(&f, resource);
  EXPECT_FAIL(fea_vector_read(f.x, N, FEA_F16, NULL), FEA_ERR_INVALID_ARG, f.ctx, "NULL");
  cr_assert(strstr(fea_context_last_error(f.ctx), "10") != NULL);
  assert_unchanged(&f);
  teardown(&f);
}

/* ---- lifetime ----------------------------------------------------------------- */

/* Vectors hold a reference on their context: destroying the context first
 * leaves them usable, and the last vector destroyed frees it. */
BACKEND_TEST(errors, destroy_context_first) {
  struct fixture f;
  setup(&f, resource);
  OK(fea_context_destroy(&f.ctx));
  cr_assert_null(f.ctx);
  OK(fea_vector_axpy(f.y, 2.0, f.x));
  double r = 0, want = 0, got[N];
  for (int i = 0; i < N; i++) want += f.x0[i] * (f.y0[i] + 2 * f.x0[i]);
  OK(fea_vector_dot(f.x, f.y, &r));
  cr_assert_eq(r, want);
  OK(fea_vector_read(f.y, N, FEA_F64, got));
  for (int i = 0; i < N; i++) cr_assert_eq(got[i], f.y0[i] + 2 * f.x0[i]);
  /* Errors are still reported on the (caller-released) context. */
  EXPECT_FAIL(fea_vector_scale(f.x, NAN), FEA_ERR_INVALID_ARG, NULL, "NaN");
  OK(fea_vector_destroy(&f.x));
  OK(fea_vector_write(f.y, N, FEA_F64, f.x0));
  OK(fea_vector_destroy(&f.y));
  cr_assert_null(f.y);
  OK(fea_vector_destroy(&f.y)); /* *v == NULL is accepted */
}
