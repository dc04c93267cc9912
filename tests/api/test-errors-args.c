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

/* ---- sizes that cannot be addressed --------------------------------------------- */

/* A column count or leading dimension whose product with the other cannot
 * be an array (more than PTRDIFF_MAX bytes) is FEA_ERR_OUT_OF_MEMORY
 * (types.h), refused before anything is read or written: with 2^62 the
 * byte offsets wrap modulo 2^64 onto the first column, so an unchecked solve
 * reads or writes the wrong entries and reports success, or reads past b. */
#define HUGE_INDEX ((fea_index)1 << 62)
#define HUGE_TEXT "4611686018427387904"

/* A set-up multifrontal solver on 4 x 4 bilinear elements (9 free DoFs). */
struct solve_fixture {
  fea_context *ctx;
  fea_space *space;
  fea_problem *pb;
  fea_solver *sv;
  fea_index nf;
};

static void solve_setup(struct solve_fixture *f) {
  memset(f, 0, sizeof *f);
  OK(fea_context_create("/cpu/ref", &f->ctx));
  fea_bspline_desc sd = FEA_BSPLINE_DESC_INIT;
  sd.n[0] = sd.n[1] = 4;
  OK(fea_space_create_bspline(f->ctx, &sd, &f->space));
  fea_problem_desc pd = FEA_PROBLEM_DESC_INIT;
  OK(fea_problem_create_poisson(f->space, &pd, &f->pb));
  OK(fea_problem_get_num_free_dofs(f->pb, &f->nf));
  cr_assert_eq(f->nf, 9);
  OK(fea_solver_create_multifrontal(f->ctx, f->space, f->pb, NULL, &f->sv));
  OK(fea_solver_setup(f->sv));
}

static void solve_teardown(struct solve_fixture *f) {
  OK(fea_solver_destroy(&f->sv));
  OK(fea_problem_destroy(&f->pb));
  OK(fea_space_destroy(&f->space));
  OK(fea_context_destroy(&f->ctx));
}

/* b holds two columns of ones, x two columns of sevens; both stay so, and
 * the solver still solves afterwards. */
static void solve_assert_unchanged(struct solve_fixture *f, const double *b, const double *x) {
  for (fea_index i = 0; i < 2 * f->nf; i++) {
    cr_assert_eq(b[i], 1.0, "a refused solve changed b[%lld]", (long long)i);
    cr_assert_eq(x[i], 7.0, "a refused solve wrote x[%lld]", (long long)i);
  }
  double y[18];
  OK(fea_solver_solve(f->sv, 2, b, f->nf, y, f->nf));
  for (fea_index i = 0; i < f->nf; i++) cr_assert_eq(y[i], y[f->nf + i]);
}

Test(errors, solve_huge_ldb) {
  struct solve_fixture f;
  solve_setup(&f);
  double b[18], x[18];
  for (int i = 0; i < 18; i++) b[i] = 1.0, x[i] = 7.0;
  EXPECT_FAIL(fea_solver_solve(f.sv, 2, b, HUGE_INDEX, x, f.nf), FEA_ERR_OUT_OF_MEMORY, f.ctx,
              "ldb");
  cr_assert(strstr(fea_context_last_error(f.ctx), HUGE_TEXT), "%s", fea_context_last_error(f.ctx));
  /* In place, so that x = b spans the same: refused the same way. */
  EXPECT_FAIL(fea_solver_solve(f.sv, 2, b, HUGE_INDEX, b, HUGE_INDEX), FEA_ERR_OUT_OF_MEMORY, f.ctx,
              HUGE_TEXT);
  solve_assert_unchanged(&f, b, x);
  solve_teardown(&f);
}

Test(errors, solve_huge_ldx) {
  struct solve_fixture f;
  solve_setup(&f);
  double b[18], x[18];
  for (int i = 0; i < 18; i++) b[i] = 1.0, x[i] = 7.0;
  EXPECT_FAIL(fea_solver_solve(f.sv, 2, b, f.nf, x, HUGE_INDEX), FEA_ERR_OUT_OF_MEMORY, f.ctx,
              "ldx");
  cr_assert(strstr(fea_context_last_error(f.ctx), HUGE_TEXT), "%s", fea_context_last_error(f.ctx));
  /* The problem's own load (b NULL, one column): only x's span counts, and
   * one column of x spans num_free entries whatever ldx is. */
  double one[9];
  OK(fea_solver_solve(f.sv, 1, NULL, 0, one, HUGE_INDEX));
  solve_assert_unchanged(&f, b, x);
  solve_teardown(&f);
}

Test(errors, solve_huge_nrhs) {
  struct solve_fixture f;
  solve_setup(&f);
  double b[18], x[18];
  for (int i = 0; i < 18; i++) b[i] = 1.0, x[i] = 7.0;
  EXPECT_FAIL(fea_solver_solve(f.sv, HUGE_INDEX, b, f.nf, x, f.nf), FEA_ERR_OUT_OF_MEMORY, f.ctx,
              "nrhs");
  cr_assert(strstr(fea_context_last_error(f.ctx), "4611686018427387903"), "%s",
            fea_context_last_error(f.ctx));
  /* The largest count there is: its product overflows fea_index itself. */
  EXPECT_FAIL(fea_solver_solve(f.sv, INT64_MAX, b, f.nf, x, f.nf), FEA_ERR_OUT_OF_MEMORY, f.ctx,
              "nrhs");
  solve_assert_unchanged(&f, b, x);
  solve_teardown(&f);
}

/* npts points of dim coordinates: 2^62 points of 2 coordinates overflow
 * the count of coordinates itself. */
Test(errors, evaluate_huge_npts) {
  struct solve_fixture f;
  solve_setup(&f);
  fea_space_info info = FEA_SPACE_INFO_INIT;
  OK(fea_space_get_info(f.space, &info));
  cr_assert_eq(info.num_dofs, 25);
  double coeffs[25] = {0}, points[4] = {0.5, 0.5, 0.25, 0.75}, values[2] = {-1, -1};
  EXPECT_FAIL(fea_space_evaluate(f.space, coeffs, HUGE_INDEX, points, values, NULL),
              FEA_ERR_OUT_OF_MEMORY, f.ctx, "npts");
  cr_assert(strstr(fea_context_last_error(f.ctx), HUGE_TEXT), "%s", fea_context_last_error(f.ctx));
  cr_assert(values[0] == -1 && values[1] == -1, "a refused evaluation wrote values");
  solve_teardown(&f);
}

/* The dense assembly's ld: a matrix of num_free rows ld apart. */
Test(errors, assemble_dense_huge_ld) {
  struct solve_fixture f;
  solve_setup(&f);
  double a[81], b[9];
  for (int i = 0; i < 81; i++) a[i] = 5.0;
  for (int i = 0; i < 9; i++) b[i] = 5.0;
  EXPECT_FAIL(fea_problem_assemble_dense(f.pb, a, HUGE_INDEX, b, NULL, NULL), FEA_ERR_OUT_OF_MEMORY,
              f.ctx, "ld");
  cr_assert(strstr(fea_context_last_error(f.ctx), HUGE_TEXT), "%s", fea_context_last_error(f.ctx));
  for (int i = 0; i < 81; i++) cr_assert_eq(a[i], 5.0, "a refused assembly wrote A_dense");
  for (int i = 0; i < 9; i++) cr_assert_eq(b[i], 5.0, "a refused assembly wrote b");
  solve_teardown(&f);
}

/* A length no vector can have: refused by the same check (this one was
 * refused before it, by a check of its own). */
BACKEND_TEST(errors, create_huge_length) {
  struct fixture f;
  setup(&f, resource);
  fea_vector *v = (fea_vector *)&v;
  EXPECT_FAIL(fea_vector_create(f.ctx, INT64_MAX, FEA_F64, &v), FEA_ERR_OUT_OF_MEMORY, f.ctx,
              "9223372036854775807");
  cr_assert_null(v);
  assert_unchanged(&f);
  teardown(&f);
}
