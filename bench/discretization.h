/* Spaces and problems the discretization cases build from their options. */
#ifndef FEA_BENCH_DISCRETIZATION_H
#define FEA_BENCH_DISCRETIZATION_H

#include <feaccel.h>
#include <feaccel/mesh.h>
#include <feaccel/problem.h>
#include <feaccel/space.h>

/* An element family of the benchmarks: B-splines of degree p, or Lagrange of
 * order p on boxes (Q_p) or simplices (P_p). */
typedef struct bench_family {
  const char *name; /* "bspline", "Q", "P" */
  int dim, p;
} bench_family;

/* A space of the family on the unit box with n elements (or mesh cells) per
 * direction; *mesh is set (to destroy) for Lagrange spaces. */
fea_status bench_make_space(fea_context *ctx, const bench_family *f, fea_index n, fea_mesh **mesh,
                            fea_space **space);

/* The manufactured problem -Laplace u = f, u = prod sin(pi x_i), u = 0 on the boundary. */
fea_status bench_make_sine_problem(fea_space *space, int dim, fea_problem **problem);

/* B-splines of degree p with n elements per direction on the quarter annulus
 * 1 <= r <= 2, 0 <= theta <= pi/2 (2D) or the thick quarter ring (3D, 0 <= z
 * <= 1): an exact NURBS geometry, the mapped-domain cases of the benchmarks. */
fea_status bench_make_ring_space(fea_context *ctx, int dim, int p, fea_index n, fea_space **space);

/* The same manufactured u on any domain: u = g, its own values, on the boundary. */
fea_status bench_make_sine_problem_dirichlet(fea_space *space, int dim, fea_problem **problem);

#endif
