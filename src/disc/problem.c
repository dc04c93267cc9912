/* The Poisson problem object: its quadrature rule and the Dirichlet
 * elimination (free-DoF numbering, boundary values) set up once. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "error.h"
#include "memory-limit.h"
#include "problem.h"

static void problem_free(void *object) {
  fea_problem *pb = object;
  fea_quadrature_free(&pb->quad);
  for (int k = 0; k < 3; k++) fea_quadrature_free(&pb->face_quad[k]);
  free(pb->free_index);
  free(pb->dirichlet);
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

  fea_status st = fea_problem_rule(space, d->quad_points, 0, &pb->quad);
  /* Which sides are not Dirichlet (B-spline spaces; checked by the caller),
   * and per fixed direction the rule over the other directions. */
  unsigned dirichlet_sides = 0;
  for (int side = 0; side < 2 * space->dim; side++) {
    const fea_bc_type t = d->sides[side].type;
    if (t == FEA_BC_DIRICHLET) dirichlet_sides |= 1u << side;
    if (t != FEA_BC_DIRICHLET) pb->face_sides |= 1u << side;
    if (t == FEA_BC_ROBIN) pb->robin_sides |= 1u << side;
  }
  for (int k = 0; k < space->dim && st == FEA_SUCCESS && pb->face_sides && space->dim > 1; k++) {
    int n[3] = {1, 1, 1};
    for (int j = 0, a = 0; j < space->dim; j++)
      if (j != k) n[a++] = d->quad_points > 0 ? d->quad_points : space->degree[j] + 1;
    st = fea_quadrature_tensor(space->dim - 1, n, &pb->face_quad[k]);
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
        int fixed = !pb->face_sides;
        for (int side = 0; side < 2 * space->dim && !fixed; side++)
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
  if (st != FEA_SUCCESS) {
    fea_object_release(pb);
    return st;
  }
  *out = pb;
  return FEA_SUCCESS;
}
