/* The Poisson problem object: its quadrature rule and the Dirichlet
 * elimination (free-DoF numbering, boundary values) set up once, with the
 * natural boundary conditions that decide which boundary DoFs stay free. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal/error.h"
#include "lagrange-faces.h"
#include "base/memory-limit.h"
#include "problem.h"

static void problem_free(void *object) {
  fea_problem *pb = object;
  fea_quadrature_free(&pb->quad);
  for (int k = 0; k < 3; k++) fea_quadrature_free(&pb->face_quad[k]);
  free(pb->free_index);
  free(pb->dirichlet);
  fea_lagrange_faces_free(pb->lfaces);
  free(pb->parts);
  if (pb->space) fea_object_release(pb->space);
  free(pb);
}

fea_status fea_problem_build(fea_space *space, const fea_problem_desc *d, fea_problem **out) {
  fea_context *ctx = space->ctx;
  /* The free-DoF map and the Dirichlet values, and as much again for the
   * interpolation's work arrays when there is Dirichlet data. */
  char what[96];
  snprintf(what, sizeof what, "the problem's DoF maps over %lld DoFs", (long long)space->num_dofs);
  FEA_CALL(fea_memory_require(ctx, 0, fea_bytes((double)space->num_dofs, d->dirichlet ? 32 : 16),
                              what));
  fea_problem *pb;
  FEA_CALL(fea_object_alloc(ctx, sizeof *pb, "problem", problem_free, (void **)&pb));
  pb->space = space;
  fea_object_retain(space);
  pb->desc = *d;
  fea_status st = FEA_SUCCESS;
  if (d->num_parts > 0) { /* the problem's own copy: the caller's array may go */
    pb->parts = malloc((size_t)d->num_parts * sizeof *pb->parts);
    if (pb->parts)
      memcpy(pb->parts, d->parts, (size_t)d->num_parts * sizeof *pb->parts);
    else
      st = FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %d boundary parts", d->num_parts);
  }
  pb->desc.parts = pb->parts; /* NULL without parts */

  if (st == FEA_SUCCESS) st = fea_problem_rule(space, d->quad_points, 0, &pb->quad);
  /* Which sides are not Dirichlet (checked by the caller), and for B-spline
   * spaces per fixed direction the rule over the other directions. */
  unsigned dirichlet_sides = 0;
  for (int side = 0; side < 2 * space->dim; side++) {
    const fea_bc_type t = d->sides[side].type;
    if (t == FEA_BC_DIRICHLET) dirichlet_sides |= 1u << side;
    if (t != FEA_BC_DIRICHLET) pb->face_sides |= 1u << side;
    if (t == FEA_BC_ROBIN) pb->robin_sides |= 1u << side;
  }
  const int bspline = space->kind == FEA_SPACE_BSPLINE;
  for (int k = 0;
       bspline && k < space->dim && st == FEA_SUCCESS && pb->face_sides && space->dim > 1; k++) {
    int n[3] = {1, 1, 1};
    for (int j = 0, a = 0; j < space->dim; j++)
      if (j != k) n[a++] = d->quad_points > 0 ? d->quad_points : space->degree[j] + 1;
    st = fea_quadrature_tensor(space->dim - 1, n, &pb->face_quad[k]);
  }
  /* Lagrange spaces: which boundary facets are natural decides which
   * boundary DoFs are eliminated (lagrange-faces.h). */
  unsigned char *fixed_dof = NULL;
  if (st == FEA_SUCCESS && !bspline && (pb->face_sides || d->num_parts > 0)) {
    pb->face_sides = pb->robin_sides = 0; /* set again from the facets */
    st = fea_lagrange_faces_build(pb, &fixed_dof);
  }
  size_t n = (size_t)space->num_dofs;
  if (st == FEA_SUCCESS) {
    pb->free_index = malloc(n * sizeof *pb->free_index);
    pb->dirichlet = calloc(n ? n : 1, sizeof *pb->dirichlet);
    if (!pb->free_index || !pb->dirichlet)
      st = FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %zu DoF maps", n);
  }
  if (st == FEA_SUCCESS && d->dirichlet)
    st = space->ops->interpolate(space, d->dirichlet, d->dirichlet_user, pb->dirichlet);
  if (st == FEA_SUCCESS) {
    /* boundary_dofs is sorted: one merge pass numbers the free DoFs in order. */
    fea_index next = 0, b = 0;
    for (fea_index i = 0; i < space->num_dofs; i++) {
      if (b < space->num_boundary_dofs && space->boundary_dofs[b] == i) {
        /* On the boundary: eliminated where one of its sides is Dirichlet. */
        int fixed = fixed_dof ? fixed_dof[i] : !pb->face_sides;
        for (int side = 0; bspline && side < 2 * space->dim && !fixed; side++)
          fixed = (dirichlet_sides >> side & 1u) && fea_bspline_dof_on_side(space, i, side);
        pb->free_index[i] = fixed ? -1 : next++;
        b++;
      } else {
        pb->free_index[i] = next++;
      }
    }
    pb->num_free = next;
    for (fea_index i = 0; i < space->num_dofs; i++)
      if (pb->free_index[i] >= 0)
        pb->dirichlet[i] = 0; /* only boundary values are kept */
      else if (!isfinite(pb->dirichlet[i]))
        st = FEA_ERROR(ctx, FEA_ERR_INVALID_ARG, "the Dirichlet data g is %g at boundary DoF %lld",
                       pb->dirichlet[i], (long long)i);
  }
  free(fixed_dof);
  if (st != FEA_SUCCESS) {
    fea_object_release(pb);
    return st;
  }
  *out = pb;
  return FEA_SUCCESS;
}

void fea_problem_fix_dofs(fea_problem *pb, const unsigned char *fixed, const double *values) {
  fea_index next = 0;
  for (fea_index i = 0; i < pb->space->num_dofs; i++) {
    if (fixed[i] && pb->free_index[i] >= 0) {
      pb->free_index[i] = -1;
      pb->dirichlet[i] = values[i];
    }
    if (pb->free_index[i] >= 0) pb->free_index[i] = next++;
  }
  pb->num_free = next;
}
