/* Shared by the PETSc library's tests (plain C programs run under mpiexec:
 * Criterion does not run under MPI): failure reporting that names the rank,
 * and the test problem, a grid of box patches. */
#ifndef FEA_TESTS_MPI_COMMON_H
#define FEA_TESTS_MPI_COMMON_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <feaccel.h>
#include <feaccel/petsc.h>

static int mpi_test_rank = 0;

/* A failed check: report and exit non-zero on this rank (mpiexec then fails). */
#define CHECK(cond, ...)                                                                        \
  do {                                                                                          \
    if (!(cond)) {                                                                              \
      fprintf(stderr, "[rank %d] %s:%d: check failed: %s: ", mpi_test_rank, __FILE__, __LINE__, \
              #cond);                                                                           \
      fprintf(stderr, __VA_ARGS__);                                                             \
      fprintf(stderr, "\n");                                                                    \
      exit(1);                                                                                  \
    }                                                                                           \
  } while (0)

#define OK(expr)                                                                         \
  do {                                                                                   \
    fea_status ok_st_ = (expr);                                                          \
    CHECK(ok_st_ == FEA_SUCCESS, "%s returned %s: %s", #expr, fea_status_string(ok_st_), \
          fea_context_last_error(NULL));                                                 \
  } while (0)

/* u = sin(x) e^y + x y: smooth, not zero on the boundary. */
static inline double grid_u(const double *x, void *user) {
  (void)user;
  return sin(x[0]) * exp(x[1]) + x[0] * x[1];
}

static inline double grid_f(const double *x, void *user) {
  (void)user;
  (void)x;
  return 0.0; /* -Laplace(sin x e^y) = 0, -Laplace(x y) = 0 */
}

static inline double grid_flux_south(const double *x, void *user) {
  (void)user;
  return -(sin(x[0]) * exp(x[1]) + x[0]); /* -du/dy on y = 0 */
}

/* kx x ky box patches of [0, kx/2] x [0, ky/2], degree p, n elements each. */
static inline void grid_patches(fea_context *ctx, int kx, int ky, int p, fea_index n,
                                fea_space **out) {
  for (int j = 0; j < ky; j++)
    for (int i = 0; i < kx; i++) {
      fea_bspline_desc d = FEA_BSPLINE_DESC_INIT;
      d.dim = 2;
      d.degree[0] = d.degree[1] = p;
      d.n[0] = d.n[1] = n;
      d.lower[0] = 0.5 * i, d.upper[0] = 0.5 * (i + 1);
      d.lower[1] = 0.5 * j, d.upper[1] = 0.5 * (j + 1);
      OK(fea_space_create_bspline(ctx, &d, &out[i + j * kx]));
    }
}

#endif
