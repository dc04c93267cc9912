/* Shared by the mapped-domain tests (test-geometry.c, test-boundary.c, and
 * the elasticity tests through elasticity-common.h): the quarter annulus as
 * an exact NURBS patch (and the thick quarter ring in 3D), and a multifrontal
 * solve expanded to every DoF. */
#ifndef FEA_TESTS_RING_COMMON_H
#define FEA_TESTS_RING_COMMON_H

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <feaccel/solver.h>

#include "api-common.h"

/* Quarter annulus 1 <= r <= 2, 0 <= theta <= pi/2: direction 0 radial
 * (degree 1), direction 1 the arc (degree 2, weights 1, 1/sqrt(2), 1).
 * With depth > 0 it is extruded to 0 <= z <= depth (degree 1). */
typedef struct ring {
  double knots_r[4], knots_t[6], knots_z[4];
  double points[3 * 12];
  double weights[12];
  fea_geometry_desc g;
} ring;

static inline void ring_init(ring *q, int dim, double depth) {
  static const double kr[4] = {0, 0, 1, 1}, kt[6] = {0, 0, 0, 1, 1, 1};
  memcpy(q->knots_r, kr, sizeof kr);
  memcpy(q->knots_t, kt, sizeof kt);
  memcpy(q->knots_z, kr, sizeof kr);
  const double arc[3][2] = {{1, 0}, {1, 1}, {0, 1}}, w[3] = {1, 1 / sqrt(2.0), 1};
  int i = 0;
  for (int c = 0; c < (dim == 3 ? 2 : 1); c++)
    for (int b = 0; b < 3; b++)
      for (int a = 0; a < 2; a++, i++) {
        const double r = 1.0 + a;
        q->points[i * dim + 0] = r * arc[b][0];
        q->points[i * dim + 1] = r * arc[b][1];
        if (dim == 3) q->points[i * dim + 2] = c * depth;
        q->weights[i] = w[b];
      }
  fea_geometry_desc g = FEA_GEOMETRY_DESC_INIT;
  g.degree[0] = 1, g.degree[1] = 2, g.degree[2] = 1;
  g.knots[0] = q->knots_r, g.num_knots[0] = 4;
  g.knots[1] = q->knots_t, g.num_knots[1] = 6;
  g.knots[2] = q->knots_z, g.num_knots[2] = 4;
  g.control_points = q->points;
  g.num_control_points = i;
  g.weights = q->weights;
  q->g = g;
}

/* The exact solution of the mapped-domain tests: u = e^(x/2) sin(0.7 y) + x y,
 * times 1 + z in 3D; smooth on the scale of the domain (two refinements are
 * in the asymptotic range) and not zero on the boundary, so the Dirichlet
 * data goes through the rational interpolant. With -Laplace u = 0.24
 * e^(x/2) sin(0.7 y) (times 1 + z), ring_f is -Laplace u + c u. */
typedef struct ring_exact {
  int dim;
  double c;
} ring_exact;

static inline double ring_u_plane(const double *x) {
  return exp(0.5 * x[0]) * sin(0.7 * x[1]) + x[0] * x[1];
}

/* u and grad u in dimension dim (the tests' own problem structs call these). */
static inline double ring_u_dim(int dim, const double *x) {
  return dim == 3 ? ring_u_plane(x) * (1.0 + x[2]) : ring_u_plane(x);
}

static inline void ring_grad_dim(int dim, const double *x, double *g) {
  const double s = dim == 3 ? 1.0 + x[2] : 1.0, ex = exp(0.5 * x[0]);
  g[0] = s * (0.5 * ex * sin(0.7 * x[1]) + x[1]);
  g[1] = s * (0.7 * ex * cos(0.7 * x[1]) + x[0]);
  if (dim == 3) g[2] = ring_u_plane(x);
}

static inline double ring_u(const double *x, void *user) {
  return ring_u_dim(((const ring_exact *)user)->dim, x);
}

static inline void ring_grad(const double *x, double *g, void *user) {
  ring_grad_dim(((const ring_exact *)user)->dim, x, g);
}

static inline double ring_f(const double *x, void *user) {
  const ring_exact *e = user;
  const double f = 0.24 * exp(0.5 * x[0]) * sin(0.7 * x[1]);
  return (e->dim == 3 ? f * (1.0 + x[2]) : f) + e->c * ring_u(x, user);
}

/* The multifrontal solution, expanded to every DoF (caller frees). */
static inline double *solve_direct(fea_context *ctx, fea_space *s, fea_problem *pb) {
  fea_space_info info = FEA_SPACE_INFO_INIT;
  OK(fea_space_get_info(s, &info));
  fea_index nf = 0;
  OK(fea_problem_get_num_free_dofs(pb, &nf));
  fea_solver *sv = NULL;
  OK(fea_solver_create_multifrontal(ctx, s, pb, NULL, &sv));
  OK(fea_solver_setup(sv));
  double *x = malloc((size_t)(nf + 1) * sizeof *x), *u = malloc((size_t)info.num_dofs * 8);
  OK(fea_solver_solve(sv, 1, NULL, 0, x, nf > 0 ? nf : 1));
  OK(fea_problem_expand_solution(pb, x, u));
  fea_solver_destroy(&sv);
  free(x);
  return u;
}

#endif
