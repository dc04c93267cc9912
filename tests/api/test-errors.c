/* Argument errors of the vector API, one test per case, on each backend:
 * NULL handles and NULL outputs. Each checks the exact status, that the
 * message names the bad argument, and that the objects involved are unchanged
 * after the failed call. Bad values are in test-errors-args.c. */
#include "errors-common.h"

/* ---- NULL handles ---------------------------------------------------------- */

BACKEND_TEST(errors, null_create_ctx) {
  struct fixture f;
  setup(&f, resource);
  fea_vector *v = (fea_vector *)&v;
  EXPECT_FAIL(fea_vector_create(NULL, N, FEA_F64, &v), FEA_ERR_INVALID_ARG, NULL, "'ctx' is NULL");
  cr_assert_null(v, "a failed create must set *out to NULL");
  teardown(&f);
}

BACKEND_TEST(errors, null_get_length) {
  struct fixture f;
  setup(&f, resource);
  fea_index n = -7;
  EXPECT_FAIL(fea_vector_get_length(NULL, &n), FEA_ERR_INVALID_ARG, NULL, "'v' is NULL");
  cr_assert_eq(n, -7);
  teardown(&f);
}

BACKEND_TEST(errors, null_get_precision) {
  struct fixture f;
  setup(&f, resource);
  fea_precision p = (fea_precision)-7;
  EXPECT_FAIL(fea_vector_get_precision(NULL, &p), FEA_ERR_INVALID_ARG, NULL, "'v' is NULL");
  cr_assert_eq(p, (fea_precision)-7);
  teardown(&f);
}

BACKEND_TEST(errors, null_write) {
  struct fixture f;
  setup(&f, resource);
  EXPECT_FAIL(fea_vector_write(NULL, N, FEA_F64, f.y0), FEA_ERR_INVALID_ARG, NULL, "'v' is NULL");
  assert_unchanged(&f);
  teardown(&f);
}

BACKEND_TEST(errors, null_read) {
  struct fixture f;
  setup(&f, resource);
  double buf[N] = {0};
  EXPECT_FAIL(fea_vector_read(NULL, N, FEA_F64, buf), FEA_ERR_INVALID_ARG, NULL, "'v' is NULL");
  for (int i = 0; i < N; i++) cr_assert_eq(buf[i], 0.0);
  teardown(&f);
}

BACKEND_TEST(errors, null_set_all) {
  struct fixture f;
  setup(&f, resource);
  EXPECT_FAIL(fea_vector_set_all(NULL, 1.0), FEA_ERR_INVALID_ARG, NULL, "'v' is NULL");
  teardown(&f);
}

BACKEND_TEST(errors, null_copy_x) {
  struct fixture f;
  setup(&f, resource);
  EXPECT_FAIL(fea_vector_copy(NULL, f.y), FEA_ERR_INVALID_ARG, NULL, "'x' is NULL");
  assert_unchanged(&f);
  teardown(&f);
}

BACKEND_TEST(errors, null_copy_y) {
  struct fixture f;
  setup(&f, resource);
  EXPECT_FAIL(fea_vector_copy(f.x, NULL), FEA_ERR_INVALID_ARG, f.ctx, "'y' is NULL");
  assert_unchanged(&f);
  teardown(&f);
}

BACKEND_TEST(errors, null_axpy_y) {
  struct fixture f;
  setup(&f, resource);
  EXPECT_FAIL(fea_vector_axpy(NULL, 2.0, f.x), FEA_ERR_INVALID_ARG, NULL, "'y' is NULL");
  assert_unchanged(&f);
  teardown(&f);
}

BACKEND_TEST(errors, null_axpy_x) {
  struct fixture f;
  setup(&f, resource);
  EXPECT_FAIL(fea_vector_axpy(f.y, 2.0, NULL), FEA_ERR_INVALID_ARG, f.ctx, "'x' is NULL");
  assert_unchanged(&f);
  teardown(&f);
}

BACKEND_TEST(errors, null_scale) {
  struct fixture f;
  setup(&f, resource);
  EXPECT_FAIL(fea_vector_scale(NULL, 2.0), FEA_ERR_INVALID_ARG, NULL, "'x' is NULL");
  teardown(&f);
}

BACKEND_TEST(errors, null_dot_x) {
  struct fixture f;
  setup(&f, resource);
  double r = 42;
  EXPECT_FAIL(fea_vector_dot(NULL, f.y, &r), FEA_ERR_INVALID_ARG, NULL, "'x' is NULL");
  cr_assert_eq(r, 42);
  teardown(&f);
}

BACKEND_TEST(errors, null_dot_y) {
  struct fixture f;
  setup(&f, resource);
  double r = 42;
  EXPECT_FAIL(fea_vector_dot(f.x, NULL, &r), FEA_ERR_INVALID_ARG, f.ctx, "'y' is NULL");
  cr_assert_eq(r, 42);
  teardown(&f);
}

BACKEND_TEST(errors, null_nrm2) {
  struct fixture f;
  setup(&f, resource);
  double r = 42;
  EXPECT_FAIL(fea_vector_nrm2(NULL, &r), FEA_ERR_INVALID_ARG, NULL, "'x' is NULL");
  cr_assert_eq(r, 42);
  teardown(&f);
}

/* ---- NULL outputs ---------------------------------------------------------- */

BACKEND_TEST(errors, null_out_create) {
  struct fixture f;
  setup(&f, resource);
  EXPECT_FAIL(fea_vector_create(f.ctx, N, FEA_F64, NULL), FEA_ERR_INVALID_ARG, f.ctx,
              "'out' is NULL");
  teardown(&f);
}

BACKEND_TEST(errors, null_out_get_length) {
  struct fixture f;
  setup(&f, resource);
  EXPECT_FAIL(fea_vector_get_length(f.x, NULL), FEA_ERR_INVALID_ARG, f.ctx, "'n' is NULL");
  teardown(&f);
}

BACKEND_TEST(errors, null_out_get_precision) {
  struct fixture f;
  setup(&f, resource);
  EXPECT_FAIL(fea_vector_get_precision(f.x, NULL), FEA_ERR_INVALID_ARG, f.ctx, "'prec' is NULL");
  teardown(&f);
}

BACKEND_TEST(errors, null_out_dot) {
  struct fixture f;
  setup(&f, resource);
  EXPECT_FAIL(fea_vector_dot(f.x, f.y, NULL), FEA_ERR_INVALID_ARG, f.ctx, "'result' is NULL");
  assert_unchanged(&f);
  teardown(&f);
}

BACKEND_TEST(errors, null_out_nrm2) {
  struct fixture f;
  setup(&f, resource);
  EXPECT_FAIL(fea_vector_nrm2(f.x, NULL), FEA_ERR_INVALID_ARG, f.ctx, "'result' is NULL");
  teardown(&f);
}
