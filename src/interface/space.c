/* Space API shared by every kind of space: lifetime, queries, evaluation,
 * interpolation, transfer between nested spaces and element coloring. The
 * kinds plug in through struct fea_space_ops (space-lagrange.c, space-bspline.c). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "coloring.h"
#include "context.h"
#include "error.h"
#include "mesh.h"
#include "pattern.h"
#include "space.h"
#include "struct-copy.h"

fea_status fea_space_destroy(fea_space **space) {
  if (!space || !*space) return FEA_SUCCESS;
  fea_object_release(*space);
  *space = NULL;
  return FEA_SUCCESS;
}

fea_status fea_space_create_lagrange(fea_mesh *mesh, int order, fea_lagrange_nodes nodes,
                                     fea_space **out) {
  if (out) *out = NULL;
  FEA_CHECK_NULL(mesh, NULL);
  FEA_CHECK_NULL(out, mesh->ctx);
  FEA_CHECK(nodes == FEA_NODES_EQUISPACED || nodes == FEA_NODES_GAUSS_LOBATTO, mesh->ctx,
            FEA_ERR_INVALID_ARG, "unknown Lagrange node set %d", (int)nodes);
  int simplex = mesh->type == FEA_CELL_TRIANGLE || mesh->type == FEA_CELL_TETRAHEDRON;
  int max_order = simplex ? 2 : 6;
  FEA_CHECK(order >= 1 && order <= max_order, mesh->ctx, FEA_ERR_INVALID_ARG,
            "order %d is outside 1..%d for %s cells (%s%d)", order, max_order,
            fea_cell_name(mesh->type), simplex ? "P1..P" : "Q1..Q", max_order);
  return fea_space_lagrange_build(mesh, order, nodes, out);
}

fea_status fea_space_get_info(const fea_space *space, fea_space_info *info) {
  FEA_CHECK_NULL(space, NULL);
  FEA_CHECK_NULL(info, space->ctx);
  FEA_CALL(fea_struct_check(space->ctx, info, "info", &fea_struct_space_info));
  fea_space_info full = FEA_SPACE_INFO_INIT;
  full.dim = space->dim;
  full.is_bspline = space->kind == FEA_SPACE_BSPLINE;
  for (int k = 0; k < 3; k++) {
    full.degree[k] = k < space->dim ? space->degree[k] : 0;
    full.elements[k] = k < space->dim ? space->elements[k] : 0;
  }
  full.num_dofs = space->num_dofs;
  full.num_elements = space->num_elements;
  full.dofs_per_element = space->dofs_per_element;
  full.num_boundary_dofs = space->num_boundary_dofs;
  return fea_struct_copy_out(space->ctx, info, &full, "info", &fea_struct_space_info);
}

fea_status fea_space_get_element_dofs(const fea_space *space, fea_index e, fea_index *dofs) {
  FEA_CHECK_NULL(space, NULL);
  FEA_CHECK_NULL(dofs, space->ctx);
  FEA_CHECK(e >= 0 && e < space->num_elements, space->ctx, FEA_ERR_INVALID_ARG,
            "element %lld is outside [0, %lld)", (long long)e, (long long)space->num_elements);
  space->ops->element_dofs(space, e, dofs);
  return FEA_SUCCESS;
}

fea_status fea_space_get_boundary_dofs(const fea_space *space, fea_index capacity,
                                       fea_index *dofs) {
  FEA_CHECK_NULL(space, NULL);
  FEA_CHECK(dofs || space->num_boundary_dofs == 0, space->ctx, FEA_ERR_INVALID_ARG,
            "argument 'dofs' is NULL");
  FEA_CHECK(capacity >= space->num_boundary_dofs, space->ctx, FEA_ERR_DIMENSION,
            "capacity %lld < %lld boundary DoFs", (long long)capacity,
            (long long)space->num_boundary_dofs);
  if (space->num_boundary_dofs)
    memcpy(dofs, space->boundary_dofs, (size_t)space->num_boundary_dofs * sizeof *dofs);
  return FEA_SUCCESS;
}

/* Evaluate with a one-point rule at the point's reference coordinates. */
static fea_status evaluate_points(fea_space *s, const double *coeffs, fea_index npts,
                                  const double *points, double *values, double *gradients) {
  int dim = s->dim, nb = s->dofs_per_element;
  double ref[3] = {0, 0, 0}, one = 1.0;
  fea_quadrature q = {.dim = dim, .npts = 1, .points = ref, .weights = &one};
  fea_element_values ev;
  FEA_CALL(fea_element_values_alloc(s, &q, &ev));
  fea_index *dofs = malloc((size_t)nb * sizeof *dofs);
  fea_status st = dofs ? FEA_SUCCESS
                       : FEA_ERROR(s->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %d DoFs", nb);
  for (fea_index i = 0; i < npts && st == FEA_SUCCESS; i++) {
    fea_index e = 0;
    st = s->ops->locate(s, points + i * dim, &e, ref);
    if (st == FEA_SUCCESS) st = s->ops->element_values(s, e, &q, &ev);
    if (st != FEA_SUCCESS) break;
    s->ops->element_dofs(s, e, dofs);
    double u = 0, g[3] = {0, 0, 0};
    for (int b = 0; b < nb; b++) {
      double c = coeffs[dofs[b]];
      u += c * ev.phi[b];
      for (int k = 0; k < dim; k++) g[k] += c * ev.dphi[b * dim + k];
    }
    if (values) values[i] = u;
    if (gradients)
      for (int k = 0; k < dim; k++) gradients[i * dim + k] = g[k];
  }
  free(dofs);
  fea_element_values_free(&ev);
  return st;
}

fea_status fea_space_evaluate(fea_space *space, const double *coeffs, fea_index npts,
                              const double *points, double *values, double *gradients) {
  FEA_CHECK_NULL(space, NULL);
  FEA_CHECK(npts >= 0, space->ctx, FEA_ERR_INVALID_ARG, "npts %lld is negative", (long long)npts);
  if (npts == 0) return FEA_SUCCESS;
  FEA_CHECK_NULL(coeffs, space->ctx);
  FEA_CHECK_NULL(points, space->ctx);
  for (fea_index i = 0; i < npts * space->dim; i++)
    FEA_CHECK(isfinite(points[i]), space->ctx, FEA_ERR_INVALID_ARG,
              "point %lld has a non-finite coordinate %g", (long long)(i / space->dim), points[i]);
  return evaluate_points(space, coeffs, npts, points, values, gradients);
}

fea_status fea_space_interpolate(const fea_space *space, fea_scalar_fn g, void *user,
                                 double *coeffs) {
  FEA_CHECK_NULL(space, NULL);
  FEA_CHECK_NULL(g, space->ctx);
  FEA_CHECK_NULL(coeffs, space->ctx);
  return space->ops->interpolate(space, g, user, coeffs);
}

/* A coarse function as a callback, for interpolating it in a finer space. */
typedef struct coarse_fn {
  fea_space *space;
  const double *coeffs;
  fea_status status;
} coarse_fn;

static double eval_coarse(const double *x, void *user) {
  coarse_fn *c = user;
  double u = 0;
  if (c->status == FEA_SUCCESS) c->status = evaluate_points(c->space, c->coeffs, 1, x, &u, NULL);
  return u;
}

/* The fine interpolant equals the coarse function only if fine contains it:
 * compare them at interior quadrature points of every fine element. */
static fea_status check_contains(fea_space *coarse, const double *cc, const fea_space *fine,
                                 const double *fc) {
  fea_quadrature q;
  FEA_CALL(fea_quadrature_for_cell(fine->cell, 3, &q));
  fea_element_values ev;
  fea_status st = fea_element_values_alloc(fine, &q, &ev);
  if (st != FEA_SUCCESS) {
    fea_quadrature_free(&q);
    return st;
  }
  double scale = 0;
  for (fea_index i = 0; i < coarse->num_dofs; i++) scale = fmax(scale, fabs(cc[i]));
  fea_index *dofs = malloc((size_t)fine->dofs_per_element * sizeof *dofs);
  if (!dofs) st = FEA_ERROR(fine->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for element DoFs");
  for (fea_index e = 0; e < fine->num_elements && st == FEA_SUCCESS; e++) {
    st = fine->ops->element_values(fine, e, &q, &ev);
    if (st != FEA_SUCCESS) break;
    fine->ops->element_dofs(fine, e, dofs);
    for (int p = 0; p < ev.nq && st == FEA_SUCCESS; p++) {
      double uf = 0, uc = 0;
      for (int b = 0; b < ev.nb; b++) uf += fc[dofs[b]] * ev.phi[p * ev.nb + b];
      st = evaluate_points(coarse, cc, 1, ev.x + p * ev.dim, &uc, NULL);
      if (st == FEA_SUCCESS && fabs(uf - uc) > 1e-10 * (scale > 0 ? scale : 1))
        st = FEA_ERROR(fine->ctx, FEA_ERR_INVALID_ARG,
                       "the fine space does not contain the coarse one: the functions differ by "
                       "%.3g in fine element %lld",
                       fabs(uf - uc), (long long)e);
    }
  }
  free(dofs);
  fea_element_values_free(&ev);
  fea_quadrature_free(&q);
  return st;
}

fea_status fea_space_transfer(fea_space *coarse, const double *coarse_coeffs, const fea_space *fine,
                              double *fine_coeffs) {
  FEA_CHECK_NULL(coarse, NULL);
  FEA_CHECK_NULL(fine, coarse->ctx);
  FEA_CHECK_NULL(coarse_coeffs, coarse->ctx);
  FEA_CHECK_NULL(fine_coeffs, coarse->ctx);
  FEA_CHECK(coarse->kind == fine->kind && coarse->dim == fine->dim, coarse->ctx,
            FEA_ERR_INVALID_ARG, "cannot transfer between a %dD %s space and a %dD %s space",
            coarse->dim, coarse->kind == FEA_SPACE_BSPLINE ? "B-spline" : "Lagrange", fine->dim,
            fine->kind == FEA_SPACE_BSPLINE ? "B-spline" : "Lagrange");
  double *tmp = malloc((size_t)fine->num_dofs * sizeof *tmp);
  FEA_CHECK(tmp, coarse->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %lld coefficients",
            (long long)fine->num_dofs);
  fea_status st;
  if (coarse->kind == FEA_SPACE_BSPLINE) {
    st = fea_space_bspline_transfer(coarse, coarse_coeffs, fine, tmp);
  } else {
    coarse_fn c = {coarse, coarse_coeffs, FEA_SUCCESS};
    st = fine->ops->interpolate(fine, eval_coarse, &c, tmp);
    if (st == FEA_SUCCESS) st = c.status;
    if (st == FEA_SUCCESS) st = check_contains(coarse, coarse_coeffs, fine, tmp);
  }
  if (st == FEA_SUCCESS) memcpy(fine_coeffs, tmp, (size_t)fine->num_dofs * sizeof *tmp);
  free(tmp);
  return st;
}

/* Cartesian coloring applies where elements form a grid and only elements
 * closer than m in every direction share DoFs. */
fea_status fea_space_color_elements(const fea_space *space, fea_coloring_method method,
                                    fea_index *colors, int *num_colors) {
  FEA_CHECK_NULL(space, NULL);
  FEA_CHECK_NULL(colors, space->ctx);
  FEA_CHECK_NULL(num_colors, space->ctx);
  FEA_CHECK(method >= FEA_COLORING_AUTO && method <= FEA_COLORING_GREEDY, space->ctx,
            FEA_ERR_INVALID_ARG, "unknown coloring method %d", (int)method);
  FEA_CHECK(method != FEA_COLORING_CARTESIAN || fea_space_cartesian_stride(space) > 0, space->ctx,
            FEA_ERR_UNSUPPORTED,
            "Cartesian coloring needs a B-spline space or a structured box mesh");
  return fea_space_coloring(space, method, colors, num_colors);
}

fea_status fea_space_check_coloring(const fea_space *space, const fea_index *colors) {
  FEA_CHECK_NULL(space, NULL);
  FEA_CHECK_NULL(colors, space->ctx);
  fea_index *d = NULL;
  FEA_CALL(fea_element_dof_table(space, &d));
  fea_status st = fea_coloring_check(space->ctx, space->num_elements, space->dofs_per_element, d,
                                     space->num_dofs, colors);
  free(d);
  return st;
}
