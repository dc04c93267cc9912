/* The problems the prehandled solver covers (Q1 or P1 on a structured mesh
 * of n x n square cells, or P1 on a mesh refined uniformly from macro
 * triangles (macro-mesh.h); constant sigma) and the coarse grid it picks. */
#include <math.h>
#include <string.h>

#include "disc/problem.h"
#include "internal/error.h"
#include "disc/mesh.h"
#include "disc/space.h"
#include "base/solver-object.h"
#include "prehandled.h"

/* Q1 or P1 on a structured 2D mesh of n x n square cells (the grid's n), or
 * P1 on a mesh made by fea_mesh_refine_uniform() from triangles (n = 0: the
 * macro cells are found later, macro-mesh.c). */
fea_status fea_ph_problem_kind(fea_context *ctx, const fea_problem *pb, fea_ph_element *el,
                               fea_index *n) {
  const fea_space *sp = pb->space;
  FEA_CHECK(sp->kind == FEA_SPACE_LAGRANGE, ctx, FEA_ERR_UNSUPPORTED,
            "the prehandled solver needs a Lagrange Q1 or P1 space; this one is a B-spline space");
  FEA_CHECK(
      sp->dim == 2, ctx, FEA_ERR_UNSUPPORTED,
      "the prehandled solver is for 2D problems (prehandling is weak in 3D); the space is %dD",
      sp->dim);
  FEA_CHECK(
      sp->degree[0] == 1, ctx, FEA_ERR_UNSUPPORTED,
      "the prehandled solver needs order-1 Lagrange elements (Q1 or P1); the space has order %d",
      sp->degree[0]);
  const fea_mesh *m = sp->mesh;
  FEA_CHECK(m && (m->structured || (m->parents && m->type == FEA_CELL_TRIANGLE)), ctx,
            FEA_ERR_UNSUPPORTED,
            "the prehandled solver needs a mesh from fea_mesh_create_structured() (its "
            "hierarchy is index arithmetic on the Cartesian grid) or a triangle mesh made by "
            "fea_mesh_refine_uniform() (the macro cells are what it was refined from)");
  const int macro = !m->structured;
  FEA_CHECK(macro || !m->mapped, ctx, FEA_ERR_UNSUPPORTED,
            "the prehandled solver needs square cells of one size (identical macro-cell "
            "blocks); the structured mesh has a point map, so its cells differ");
  FEA_CHECK(macro || m->n[0] == m->n[1], ctx, FEA_ERR_UNSUPPORTED,
            "the prehandled solver needs n x n cells; the mesh has %lld x %lld", (long long)m->n[0],
            (long long)m->n[1]);
  const double hx = (m->upper[0] - m->lower[0]) / (double)m->n[0];
  const double hy = (m->upper[1] - m->lower[1]) / (double)m->n[1];
  FEA_CHECK(macro || fabs(hx - hy) <= 1e-12 * fmax(hx, hy), ctx, FEA_ERR_UNSUPPORTED,
            "the prehandled solver needs square cells; they are %.6g x %.6g", hx, hy);
  FEA_CHECK(pb->desc.sigma_fn == NULL, ctx, FEA_ERR_UNSUPPORTED,
            "the prehandled solver needs a constant sigma (identical macro-cell blocks); the "
            "problem has sigma_fn");
  FEA_CHECK(pb->desc.element_form == NULL, ctx, FEA_ERR_UNSUPPORTED,
            "the prehandled solver builds its own blocks; the problem has a user's element form");
  FEA_CHECK(pb->desc.sigma_tensor == NULL, ctx, FEA_ERR_UNSUPPORTED,
            "the prehandled solver needs a constant scalar sigma; the problem has sigma_tensor");
  FEA_CHECK(!fea_problem_has_reaction(pb), ctx, FEA_ERR_UNSUPPORTED,
            "the prehandled solver is for -div(sigma grad u) = f; the problem has a reaction "
            "term c u");
  FEA_CHECK(!fea_problem_has_faces(pb), ctx, FEA_ERR_UNSUPPORTED,
            "the prehandled solver builds its blocks for Dirichlet conditions on the whole "
            "boundary; the problem has Neumann or Robin sides");
  *el = macro || m->simplices ? FEA_PH_P1 : FEA_PH_Q1;
  *n = macro ? 0 : m->n[0];
  return FEA_SUCCESS;
}

/* The power-of-two coarsening n0 = n / 2^j, j >= 1, with the fewest FLOPs. */
fea_index fea_ph_auto_coarse_cells(fea_ph_element el, fea_index n) {
  fea_index best = 0;
  double best_flops = 0;
  for (fea_index r = 2; n % r == 0; r *= 2) {
    fea_ph_grid g = {el, n, n / r, r, 0, (n - 1) * (n - 1), NULL};
    const double f = fea_ph_flops(&g);
    if (best == 0 || f < best_flops) best = n / r, best_flops = f;
  }
  return best;
}

fea_status fea_ph_check_problem(const fea_solver *s, const fea_problem *problem) {
  fea_ph_element el;
  fea_index n;
  FEA_CALL(fea_ph_problem_kind(s->ctx, problem, &el, &n));
  /* A mesh of macro cells: the hierarchy was read from the solver's problem,
   * so a new problem must have the same mesh and the same Dirichlet nodes. */
  const fea_problem *old = s->problem;
  if (n == 0 && old && old != problem) {
    const fea_space *a = old->space, *b = problem->space;
    FEA_CHECK(a->mesh == b->mesh && a->num_dofs == b->num_dofs &&
                  old->num_free == problem->num_free &&
                  !memcmp(old->free_index, problem->free_index,
                          (size_t)a->num_dofs * sizeof *old->free_index),
              s->ctx, FEA_ERR_UNSUPPORTED,
              "the prehandled solver on macro cells needs a problem on the same mesh with the "
              "same Dirichlet nodes as the one it was created for; create a new solver");
  }
  return FEA_SUCCESS;
}
