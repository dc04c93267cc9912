/* Construction helpers shared by the discretization cases. */
#include <math.h>
#include <string.h>

#include "discretization.h"

fea_status bench_make_space(fea_context *ctx, const bench_family *f, fea_index n, fea_mesh **mesh,
                            fea_space **space) {
  *mesh = NULL;
  *space = NULL;
  if (strcmp(f->name, "bspline") == 0) {
    fea_bspline_desc d = FEA_BSPLINE_DESC_INIT;
    d.dim = f->dim;
    for (int k = 0; k < 3; k++) {
      d.degree[k] = f->p;
      d.n[k] = n;
    }
    return fea_space_create_bspline(ctx, &d, space);
  }
  fea_mesh_desc md = FEA_MESH_DESC_INIT;
  md.dim = f->dim;
  md.n[0] = md.n[1] = md.n[2] = n;
  md.simplices = strcmp(f->name, "P") == 0;
  fea_status s = fea_mesh_create_structured(ctx, &md, mesh);
  if (s == FEA_SUCCESS) s = fea_space_create_lagrange(*mesh, f->p, FEA_NODES_EQUISPACED, space);
  return s;
}

static int sine_dim; /* the bench builds one problem at a time */

static double sine_f(const double *x, void *user) {
  (void)user;
  double u = sine_dim * 3.14159265358979323846 * 3.14159265358979323846;
  for (int k = 0; k < sine_dim; k++) u *= sin(3.14159265358979323846 * x[k]);
  return u;
}

fea_status bench_make_sine_problem(fea_space *space, int dim, fea_problem **problem) {
  sine_dim = dim;
  fea_problem_desc d = FEA_PROBLEM_DESC_INIT;
  d.source = sine_f;
  return fea_problem_create_poisson(space, &d, problem);
}

fea_status bench_make_ring_space(fea_context *ctx, int dim, int p, fea_index n, fea_space **space) {
  static const double radial[4] = {0, 0, 1, 1}, arc[6] = {0, 0, 0, 1, 1, 1};
  const double corner[3][2] = {{1, 0}, {1, 1}, {0, 1}}, w[3] = {1, 1 / sqrt(2.0), 1};
  double points[12 * 3], weights[12];
  int i = 0;
  for (int c = 0; c < (dim == 3 ? 2 : 1); c++)
    for (int b = 0; b < 3; b++)
      for (int a = 0; a < 2; a++, i++) {
        points[i * dim + 0] = (1.0 + a) * corner[b][0];
        points[i * dim + 1] = (1.0 + a) * corner[b][1];
        if (dim == 3) points[i * dim + 2] = c;
        weights[i] = w[b];
      }
  fea_geometry_desc g = FEA_GEOMETRY_DESC_INIT;
  g.degree[0] = 1, g.degree[1] = 2, g.degree[2] = 1;
  g.knots[0] = radial, g.num_knots[0] = 4;
  g.knots[1] = arc, g.num_knots[1] = 6;
  g.knots[2] = radial, g.num_knots[2] = 4;
  g.control_points = points;
  g.num_control_points = i;
  g.weights = weights;
  fea_bspline_desc d = FEA_BSPLINE_DESC_INIT;
  d.dim = dim;
  for (int k = 0; k < dim; k++) d.degree[k] = p, d.n[k] = n;
  d.geometry = &g; /* copied by the space */
  return fea_space_create_bspline(ctx, &d, space);
}

static double sine_g(const double *x, void *user) {
  (void)user;
  double u = 1;
  for (int k = 0; k < sine_dim; k++) u *= sin(3.14159265358979323846 * x[k]);
  return u;
}

fea_status bench_make_sine_problem_dirichlet(fea_space *space, int dim, fea_problem **problem) {
  sine_dim = dim;
  fea_problem_desc d = FEA_PROBLEM_DESC_INIT;
  d.source = sine_f;
  d.dirichlet = sine_g;
  return fea_problem_create_poisson(space, &d, problem);
}
