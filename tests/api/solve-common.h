/* Shared by the discretization tests: the manufactured solution
 * u = prod sin(pi x_i) and an independent solve of the reference system with
 * LAPACK (banded Cholesky when the band is narrow, dense Cholesky otherwise). */
#ifndef FEA_TESTS_SOLVE_COMMON_H
#define FEA_TESTS_SOLVE_COMMON_H

#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <criterion/parameterized.h>
#include <feaccel.h>
#include <feaccel/mesh.h>
#include <feaccel/problem.h>
#include <feaccel/space.h>

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

typedef struct manufactured {
  int dim;
} manufactured;

static inline double sine_u(const double *x, void *user) {
  const manufactured *m = user;
  double u = 1;
  for (int k = 0; k < m->dim; k++) u *= sin(M_PI * x[k]);
  return u;
}

static inline void sine_grad(const double *x, double *g, void *user) {
  const manufactured *m = user;
  for (int k = 0; k < m->dim; k++) {
    g[k] = M_PI;
    for (int j = 0; j < m->dim; j++) g[k] *= j == k ? cos(M_PI * x[j]) : sin(M_PI * x[j]);
  }
}

/* -Laplace u = d pi^2 u */
static inline double sine_f(const double *x, void *user) {
  const manufactured *m = user;
  return m->dim * M_PI * M_PI * sine_u(x, user);
}

/* Solve the SPD CSR system A u = b with LAPACK; u overwrites b. */
static inline void lapack_solve_csr(const fea_matrix *A, double *b) {
  fea_index n = 0, nnz = 0;
  cr_assert_eq(fea_matrix_get_size(A, &n, NULL, &nnz), FEA_SUCCESS);
  fea_index *rp = malloc((size_t)(n + 1) * sizeof *rp),
            *ci = malloc((size_t)(nnz + 1) * sizeof *ci);
  double *v = malloc((size_t)(nnz + 1) * sizeof *v);
  cr_assert(rp && ci && v);
  cr_assert_eq(fea_matrix_get_csr(A, rp, ci, v), FEA_SUCCESS);
  fea_index kd = 0;
  for (fea_index i = 0; i < n; i++)
    for (fea_index k = rp[i]; k < rp[i + 1]; k++)
      if (ci[k] > i && ci[k] - i > kd) kd = ci[k] - i;
  lapack_int info;
  if ((kd + 1) * 2 < n) {
    /* upper band storage: ab[(kd + i - j) + j * (kd + 1)] = A(i, j), i <= j */
    double *ab = calloc((size_t)((kd + 1) * n), sizeof *ab);
    cr_assert(ab);
    for (fea_index i = 0; i < n; i++)
      for (fea_index k = rp[i]; k < rp[i + 1]; k++)
        if (ci[k] >= i) ab[(kd + i - ci[k]) + ci[k] * (kd + 1)] = v[k];
    info = LAPACKE_dpbsv(LAPACK_COL_MAJOR, 'U', (lapack_int)n, (lapack_int)kd, 1, ab,
                         (lapack_int)(kd + 1), b, (lapack_int)n);
    free(ab);
  } else {
    double *dense = calloc((size_t)(n * n), sizeof *dense);
    cr_assert(dense);
    for (fea_index i = 0; i < n; i++)
      for (fea_index k = rp[i]; k < rp[i + 1]; k++) dense[i + ci[k] * n] = v[k];
    info = LAPACKE_dposv(LAPACK_COL_MAJOR, 'U', (lapack_int)n, 1, dense, (lapack_int)n, b,
                         (lapack_int)n);
    free(dense);
  }
  cr_assert_eq(info, 0, "LAPACK Cholesky failed: info %d (matrix not SPD?)", (int)info);
  free(rp);
  free(ci);
  free(v);
}

/* Assemble, solve and measure: errors of the discrete solution of problem pb. */
static inline void solve_and_measure(fea_problem *pb, fea_scalar_fn u, fea_gradient_fn gu,
                                     void *user, double *l2, double *h1, double *u_full_out) {
  fea_index nf = 0;
  cr_assert_eq(fea_problem_get_num_free_dofs(pb, &nf), FEA_SUCCESS);
  double *b = malloc((size_t)(nf + 1) * sizeof *b);
  fea_matrix *A = NULL;
  cr_assert_eq(fea_problem_assemble_reference(pb, b, &A), FEA_SUCCESS, "%s",
               fea_context_last_error(NULL));
  lapack_solve_csr(A, b);
  cr_assert_eq(fea_problem_expand_solution(pb, b, u_full_out), FEA_SUCCESS);
  cr_assert_eq(fea_problem_error_norms(pb, u_full_out, u, gu, user, l2, h1), FEA_SUCCESS, "%s",
               fea_context_last_error(NULL));
  fea_matrix_destroy(&A);
  free(b);
}

#endif
