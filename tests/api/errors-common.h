/* The fixture of the vector-error tests: a context with two f64 vectors of
 * known contents, and checks that a failed call changed nothing. */
#ifndef FEA_TESTS_API_ERRORS_COMMON_H
#define FEA_TESTS_API_ERRORS_COMMON_H

#include <stdlib.h>

#include "api-common.h"

#define N 10

/* A context with two f64 vectors x, y of N entries and known contents. */
struct fixture {
  fea_context *ctx;
  fea_vector *x, *y;
  double x0[N], y0[N];
};

static inline void setup(struct fixture *f, const char *resource) {
  memset(f, 0, sizeof *f);
  OPEN_OR_SKIP(resource, &f->ctx);
  for (int i = 0; i < N; i++) {
    f->x0[i] = 1.0 + i;
    f->y0[i] = -0.5 * i;
  }
  OK(fea_vector_create(f->ctx, N, FEA_F64, &f->x));
  OK(fea_vector_create(f->ctx, N, FEA_F64, &f->y));
  OK(fea_vector_write(f->x, N, FEA_F64, f->x0));
  OK(fea_vector_write(f->y, N, FEA_F64, f->y0));
}

static inline void assert_contents(const fea_vector *v, const double *want, const char *name) {
  double got[N];
  OK(fea_vector_read(v, N, FEA_F64, got));
  for (int i = 0; i < N; i++)
    cr_assert_eq(got[i], want[i], "%s[%d] changed by a failed call: %g, was %g", name, i, got[i],
                 want[i]);
  fea_index n = -1;
  fea_precision p = (fea_precision)-1;
  OK(fea_vector_get_length(v, &n));
  OK(fea_vector_get_precision(v, &p));
  cr_assert_eq(n, N);
  cr_assert_eq(p, FEA_F64);
}

static inline void assert_unchanged(const struct fixture *f) {
  assert_contents(f->x, f->x0, "x");
  assert_contents(f->y, f->y0, "y");
}

static inline void teardown(struct fixture *f) {
  OK(fea_vector_destroy(&f->x));
  OK(fea_vector_destroy(&f->y));
  OK(fea_context_destroy(&f->ctx));
}

/* A second vector of precision p and length n in the fixture's context, filled with 3. */
static inline fea_vector *other_vector(struct fixture *f, fea_index n, fea_precision p) {
  fea_vector *v = NULL;
  OK(fea_vector_create(f->ctx, n, p, &v));
  OK(fea_vector_set_all(v, 3.0));
  return v;
}

static inline void assert_all(const fea_vector *v, fea_index n, double value) {
  double *buf = malloc((size_t)n * sizeof *buf);
  cr_assert_not_null(buf);
  OK(fea_vector_read(v, n, FEA_F64, buf));
  for (fea_index i = 0; i < n; i++) cr_assert_eq(buf[i], value, "entry %lld changed", (long long)i);
  free(buf);
}

#endif
