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

#endif
