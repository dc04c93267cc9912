/* The multipatch benchmark problem shared by feaccel-bench's `multipatch`
 * case and the MPI benchmark feaccel-bench-mpi: a k0 x k1 (x k2) grid of
 * box patches, the Poisson problem on it, the closed form of its interface
 * size, the single patch with C0 knot lines that spans the same space, and
 * the comparison of the two solutions. */
#ifndef FEA_BENCH_MULTIPATCH_GRID_H
#define FEA_BENCH_MULTIPATCH_GRID_H

#include <feaccel.h>
#include <feaccel/multipatch.h>

/* Patch (i0, i1, i2) is the box [i_a / den, (i_a + 1) / den] per direction,
 * of degree p with n elements per direction; patch q = i0 + k0 (i1 + k1 i2).
 * k[a] = 1 for a >= dim. The unit box of K^d patches is k = K, den = K. */
typedef struct mp_grid {
  int dim;
  long long p, n;
  long long k[3];
  long long den;
} mp_grid;

/* K x K (x K) patches on the unit square or cube. */
mp_grid mp_grid_cube(int dim, long long p, long long n, long long K);

/* `total` patches of side 1/2 in a grid as near a cube as the factors of
 * `total` allow (largest prime factors first, each to the shortest
 * direction): 2 -> 2x1(x1), 4 -> 2x2(x1), 8 -> 4x2 in 2D, 2x2x2 in 3D. */
mp_grid mp_grid_block(int dim, long long p, long long n, long long total);

long long mp_grid_num_patches(const mp_grid *g);

/* The free DoFs on some patch boundary and inside the patches, in closed
 * form (derivation in multipatch-grid.c). */
double mp_grid_predicted_interface(const mp_grid *g);
double mp_grid_predicted_interior(const mp_grid *g);

/* u = sin(pi x / 2) e^y (2D), times cos z (3D), and f = -Laplace u; user
 * points to the int dimension. */
double mp_grid_exact_u(const double *x, void *user);
double mp_grid_exact_f(const double *x, void *user);

/* -Laplace u = f, u = g on every boundary side, on the domain of patches. */
fea_status mp_grid_create_problem(fea_context *ctx, const mp_grid *g, int *user,
                                  fea_space **patches, fea_multipatch **mp,
                                  fea_multipatch_problem **problem);

/* The single patch spanning the same space: the whole box, n k_a elements
 * per direction, C0 knot lines (multiplicity p) at the patch boundaries. */
fea_status mp_grid_create_c0_patch(fea_context *ctx, const mp_grid *g, fea_space **out);

/* max |u_mp - u_single| / max |u_single| over all global coefficients
 * (u_mp indexed by the domain's global DoFs, u_single by the C0 patch's). */
fea_status mp_grid_max_rel_diff(const fea_multipatch *mp, const mp_grid *g, const double *u_mp,
                                const double *u_single, double *diff);

/* Least-squares slope of log y over log x (m >= 2 points). */
double mp_grid_loglog_slope(int m, const double *x, const double *y);

#endif
