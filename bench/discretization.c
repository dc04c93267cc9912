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
