/* Space API shared by every kind of space: lifetime, queries, evaluation,
 * interpolation, transfer between nested spaces and element coloring. The
 * kinds plug in through struct fea_space_ops (space-lagrange.c, space-bspline.c). */
#include <math.h>

#include "disc/coloring.h"
#include "base/context.h"
#include "internal/error.h"
#include "disc/mesh.h"
#include "disc/space.h"
#include "base/size-checks.h"
#include "base/struct-copy.h"

fea_status fea_space_destroy(fea_space **space) {
  FEA_ENTRY();
  if (!space || !*space) return FEA_SUCCESS;
  fea_object_release(*space);
  *space = NULL;
  return FEA_SUCCESS;
}

fea_status fea_space_create_lagrange(fea_mesh *mesh, int order, fea_lagrange_nodes nodes,
                                     fea_space **out) {
  FEA_ENTRY();
  if (out) *out = NULL;
  FEA_CHECK_NULL(mesh, NULL);
  FEA_CHECK_NULL(out, mesh->ctx);
  /* Meshes of curves and surfaces (cells of lower dimension than the
   * coordinates) are meshes, to refine and write, but the elements below map
   * reference cells of the coordinate dimension only. */
  FEA_CHECK(fea_cell_dim(mesh->type) == mesh->dim, mesh->ctx, FEA_ERR_UNSUPPORTED,
            "%s cells have dimension %d but the mesh's coordinates have dimension %d: Lagrange "
            "spaces on curves or surfaces (cells of lower dimension than the coordinates) are "
            "not supported",
            fea_cell_name(mesh->type), fea_cell_dim(mesh->type), mesh->dim);
  FEA_CHECK(nodes == FEA_NODES_EQUISPACED || nodes == FEA_NODES_GAUSS_LOBATTO, mesh->ctx,
            FEA_ERR_INVALID_ARG, "unknown Lagrange node set %d", (int)nodes);
  int simplex = mesh->type == FEA_CELL_TRIANGLE || mesh->type == FEA_CELL_TETRAHEDRON;
  int max_order = simplex ? 2 : 6;
  FEA_CHECK(order >= 1 && order <= max_order, mesh->ctx, FEA_ERR_INVALID_ARG,
            "order %d is outside 1..%d for %s cells (%s%d)", order, max_order,
            fea_cell_name(mesh->type), simplex ? "P1..P" : "Q1..Q", max_order);
  return fea_space_lagrange_build(mesh, order, nodes, out);
}

fea_status fea_space_set_num_components(fea_space *space, int num_components) {
  FEA_ENTRY();
  FEA_CHECK_NULL(space, NULL);
  FEA_CHECK(num_components >= 1 && num_components <= FEA_MAX_COMPONENTS, space->ctx,
            FEA_ERR_INVALID_ARG, "num_components = %d is outside 1..%d", num_components,
            FEA_MAX_COMPONENTS);
  /* Whatever holds the space (a problem, an operator) sized its arrays by
   * the components it saw: they may change only while nothing does. */
  FEA_CHECK(space->refcount == 1, space->ctx, FEA_ERR_STATE,
            "the space's components can change only before anything is built on it; %d "
            "objects hold it",
            space->refcount - 1);
  space->ncomp = num_components;
  return FEA_SUCCESS;
}

fea_status fea_space_get_info(const fea_space *space, fea_space_info *info) {
  FEA_ENTRY();
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
  full.num_dofs = fea_space_total_dofs(space);
  full.num_elements = space->num_elements;
  full.dofs_per_element = fea_space_element_size(space);
  full.num_boundary_dofs = space->num_boundary_dofs * space->ncomp;
  full.num_components = space->ncomp;
  return fea_struct_copy_out(space->ctx, info, &full, "info", &fea_struct_space_info);
}

fea_status fea_space_get_element_dofs(const fea_space *space, fea_index e, fea_index *dofs) {
  FEA_ENTRY();
  FEA_CHECK_NULL(space, NULL);
  FEA_CHECK_NULL(dofs, space->ctx);
  FEA_CHECK(e >= 0 && e < space->num_elements, space->ctx, FEA_ERR_INVALID_ARG,
            "element %lld is outside [0, %lld)", (long long)e, (long long)space->num_elements);
  fea_space_element_vdofs(space, e, dofs);
  return FEA_SUCCESS;
}

fea_status fea_space_get_boundary_dofs(const fea_space *space, fea_index capacity,
                                       fea_index *dofs) {
  FEA_ENTRY();
  FEA_CHECK_NULL(space, NULL);
  const fea_index nc = space->ncomp, count = space->num_boundary_dofs * nc;
  FEA_CHECK(dofs || count == 0, space->ctx, FEA_ERR_INVALID_ARG, "argument 'dofs' is NULL");
  FEA_CHECK(capacity >= count, space->ctx, FEA_ERR_DIMENSION, "capacity %lld < %lld boundary DoFs",
            (long long)capacity, (long long)count);
  /* Interleaved numbering: each boundary function's components in turn keep the list sorted. */
  for (fea_index b = 0; b < space->num_boundary_dofs; b++)
    for (fea_index c = 0; c < nc; c++) dofs[c + nc * b] = c + nc * space->boundary_dofs[b];
  return FEA_SUCCESS;
}

fea_status fea_space_evaluate(fea_space *space, const double *coeffs, fea_index npts,
                              const double *points, double *values, double *gradients) {
  FEA_ENTRY();
  FEA_CHECK_NULL(space, NULL);
  FEA_CALL(fea_space_require_scalar(space, "fea_space_evaluate()"));
  FEA_CHECK(npts >= 0, space->ctx, FEA_ERR_INVALID_ARG, "npts %lld is negative", (long long)npts);
  if (npts == 0) return FEA_SUCCESS;
  FEA_CHECK_NULL(coeffs, space->ctx);
  FEA_CHECK_NULL(points, space->ctx);
  FEA_CALL(fea_size_check_span(space->ctx, "points", "npts * dim", (uint64_t)npts,
                               (uint64_t)space->dim, 0, sizeof *points, NULL));
  for (fea_index i = 0; i < npts * space->dim; i++)
    FEA_CHECK(isfinite(points[i]), space->ctx, FEA_ERR_INVALID_ARG,
              "point %lld has a non-finite coordinate %g", (long long)(i / space->dim), points[i]);
  return fea_space_evaluate_points(space, coeffs, npts, points, values, gradients);
}

fea_status fea_space_interpolate(const fea_space *space, fea_scalar_fn g, void *user,
                                 double *coeffs) {
  FEA_ENTRY();
  FEA_CHECK_NULL(space, NULL);
  FEA_CHECK_NULL(g, space->ctx);
  FEA_CHECK_NULL(coeffs, space->ctx);
  FEA_CALL(fea_space_require_scalar(space, "fea_space_interpolate() (a scalar g)"));
  return space->ops->interpolate(space, g, user, coeffs);
}

fea_status fea_space_transfer(fea_space *coarse, const double *coarse_coeffs, const fea_space *fine,
                              double *fine_coeffs) {
  FEA_ENTRY();
  FEA_CHECK_NULL(coarse, NULL);
  FEA_CHECK_NULL(fine, coarse->ctx);
  FEA_CHECK_NULL(coarse_coeffs, coarse->ctx);
  FEA_CHECK_NULL(fine_coeffs, coarse->ctx);
  FEA_CALL(fea_space_require_scalar(coarse, "fea_space_transfer()"));
  FEA_CALL(fea_space_require_scalar(fine, "fea_space_transfer()"));
  FEA_CHECK(coarse->kind == fine->kind && coarse->dim == fine->dim, coarse->ctx,
            FEA_ERR_INVALID_ARG, "cannot transfer between a %dD %s space and a %dD %s space",
            coarse->dim, coarse->kind == FEA_SPACE_BSPLINE ? "B-spline" : "Lagrange", fine->dim,
            fine->kind == FEA_SPACE_BSPLINE ? "B-spline" : "Lagrange");
  return fea_space_transfer_coeffs(coarse, coarse_coeffs, fine, fine_coeffs);
}

/* Cartesian coloring applies where elements form a grid and only elements
 * closer than m in every direction share DoFs. */
fea_status fea_space_color_elements(const fea_space *space, fea_coloring_method method,
                                    fea_index *colors, int *num_colors) {
  FEA_ENTRY();
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
  FEA_ENTRY();
  FEA_CHECK_NULL(space, NULL);
  FEA_CHECK_NULL(colors, space->ctx);
  return fea_space_coloring_check(space, colors);
}

fea_status fea_space_write_vtu(fea_space *space, const double *coeffs, int samples,
                               const char *path) {
  FEA_ENTRY();
  FEA_CHECK_NULL(space, NULL);
  FEA_CHECK_NULL(coeffs, space->ctx);
  FEA_CHECK_NULL(path, space->ctx);
  FEA_CHECK(path[0] != '\0', space->ctx, FEA_ERR_INVALID_ARG, "path is empty");
  FEA_CHECK(samples >= 2 && samples <= 16, space->ctx, FEA_ERR_INVALID_ARG,
            "samples = %d is outside 2..16", samples);
  FEA_CHECK(space->kind == FEA_SPACE_BSPLINE, space->ctx, FEA_ERR_UNSUPPORTED,
            "fea_space_write_vtu samples B-spline spaces; write a Lagrange space's function with "
            "fea_mesh_write_vtu on its mesh");
  /* A vector space writes u with its components (2 padded to 3: a vector). */
  return fea_space_bspline_write_vtu(space, coeffs, samples, path, "u");
}
