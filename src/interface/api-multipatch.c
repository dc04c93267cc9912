/* Multipatch API: argument checks, then the family (src/multipatch/). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/context.h"
#include "disc/problem.h"
#include "internal/error.h"
#include "multipatch/multipatch.h"
#include "base/solver-object.h"
#include "base/struct-copy.h"

static const char *const side_names[6] = {"west", "east", "south", "north", "front", "back"};

fea_status fea_multipatch_create(fea_context *ctx, int num_patches, fea_space *const *patches,
                                 const fea_multipatch_desc *desc, fea_multipatch **out) {
  FEA_ENTRY();
  if (out) *out = NULL;
  FEA_CHECK_NULL(ctx, NULL);
  FEA_CHECK_NULL(patches, ctx);
  FEA_CHECK_NULL(out, ctx);
  FEA_CHECK(num_patches >= 1, ctx, FEA_ERR_INVALID_ARG, "num_patches = %d is below 1", num_patches);
  fea_multipatch_desc d = FEA_MULTIPATCH_DESC_INIT;
  FEA_CALL(fea_struct_copy_in(ctx, &d, desc, "desc", &fea_struct_multipatch_desc));
  FEA_CHECK(d.tolerance >= 0 && d.tolerance < 0.1, ctx, FEA_ERR_INVALID_ARG,
            "desc.tolerance = %g is outside [0, 0.1) (a fraction of the domain's diameter; 0: "
            "the default 1e-9)",
            d.tolerance);
  for (int p = 0; p < num_patches; p++) {
    const fea_space *s = patches[p];
    FEA_CHECK(s, ctx, FEA_ERR_INVALID_ARG, "patches[%d] is NULL", p);
    FEA_CHECK(s->ctx == ctx, ctx, FEA_ERR_INVALID_ARG, "patches[%d] was created on another context",
              p);
    FEA_CHECK(s->kind == FEA_SPACE_BSPLINE, ctx, FEA_ERR_UNSUPPORTED,
              "patches[%d] is a %s space; a multipatch domain joins B-spline spaces", p,
              s->kind == FEA_SPACE_LAGRANGE ? "Lagrange" : "non-B-spline");
    FEA_CHECK(s->dim >= 2, ctx, FEA_ERR_UNSUPPORTED,
              "patches[%d] is 1D; multipatch domains are 2D or 3D", p);
    FEA_CHECK(s->dim == patches[0]->dim, ctx, FEA_ERR_INVALID_ARG,
              "patches[%d] is %dD but patches[0] is %dD", p, s->dim, patches[0]->dim);
    /* Vector-valued patches: one component count, so that an interface
     * joins a function's components with its partner's. */
    FEA_CHECK(s->ncomp == patches[0]->ncomp, ctx, FEA_ERR_INVALID_ARG,
              "patches[%d] has %d components but patches[0] has %d: every patch of a domain has "
              "the same number of components",
              p, s->ncomp, patches[0]->ncomp);
    /* A space listed twice would meet itself on every side (src/multipatch/
     * overlap.c refuses copies; this names the plainer mistake). */
    for (int q = 0; q < p; q++)
      FEA_CHECK(patches[q] != s, ctx, FEA_ERR_INVALID_ARG,
                "patches[%d] and patches[%d] are the same space: each patch is listed once", q, p);
  }
  return fea_multipatch_build(ctx, num_patches, patches, d.tolerance > 0 ? d.tolerance : 1e-9, out);
}

fea_status fea_multipatch_destroy(fea_multipatch **mp) {
  FEA_ENTRY();
  if (!mp || !*mp) return FEA_SUCCESS;
  fea_object_release(*mp);
  *mp = NULL;
  return FEA_SUCCESS;
}

fea_status fea_multipatch_get_info(const fea_multipatch *mp, fea_multipatch_info *info) {
  FEA_ENTRY();
  FEA_CHECK_NULL(mp, NULL);
  FEA_CHECK_NULL(info, mp->ctx);
  fea_multipatch_info full = FEA_MULTIPATCH_INFO_INIT;
  full.dim = mp->dim;
  full.num_patches = mp->num_patches;
  full.num_interfaces = mp->num_links;
  full.num_boundary_sides = mp->num_boundary_sides;
  full.num_dofs = mp->num_dofs;
  return fea_struct_copy_out(mp->ctx, info, &full, "info", &fea_struct_multipatch_info);
}

fea_status fea_multipatch_get_interface(const fea_multipatch *mp, int index,
                                        fea_multipatch_interface *info) {
  FEA_ENTRY();
  FEA_CHECK_NULL(mp, NULL);
  FEA_CHECK_NULL(info, mp->ctx);
  FEA_CHECK(index >= 0 && index < mp->num_links, mp->ctx, FEA_ERR_INVALID_ARG,
            "interface %d is outside [0, %d)", index, mp->num_links);
  const fea_multipatch_link *l = &mp->links[index];
  fea_multipatch_interface full = FEA_MULTIPATCH_INTERFACE_INIT;
  for (int k = 0; k < 2; k++) {
    full.patch[k] = l->patch[k];
    full.side[k] = (fea_patch_side)l->side[k];
    full.flip[k] = l->flip[k];
  }
  full.swap = l->swap;
  full.num_dofs = l->num_dofs * mp->ncomp; /* the link counts functions */
  return fea_struct_copy_out(mp->ctx, info, &full, "info", &fea_struct_multipatch_interface);
}

fea_status fea_multipatch_get_boundary_side(const fea_multipatch *mp, int index, int *patch,
                                            fea_patch_side *side) {
  FEA_ENTRY();
  FEA_CHECK_NULL(mp, NULL);
  FEA_CHECK_NULL(patch, mp->ctx);
  FEA_CHECK_NULL(side, mp->ctx);
  FEA_CHECK(index >= 0 && index < mp->num_boundary_sides, mp->ctx, FEA_ERR_INVALID_ARG,
            "boundary side %d is outside [0, %d)", index, mp->num_boundary_sides);
  *patch = mp->boundary_sides[index] / 6;
  *side = (fea_patch_side)(mp->boundary_sides[index] % 6);
  return FEA_SUCCESS;
}

fea_status fea_multipatch_get_patch_dofs(const fea_multipatch *mp, int patch, fea_index capacity,
                                         fea_index *global) {
  FEA_ENTRY();
  FEA_CHECK_NULL(mp, NULL);
  FEA_CHECK_NULL(global, mp->ctx);
  FEA_CHECK(patch >= 0 && patch < mp->num_patches, mp->ctx, FEA_ERR_INVALID_ARG,
            "patch %d is outside [0, %d)", patch, mp->num_patches);
  const fea_index n = mp->patch_off[patch + 1] - mp->patch_off[patch];
  FEA_CHECK(capacity >= n, mp->ctx, FEA_ERR_DIMENSION,
            "capacity = %lld is below patch %d's %lld DoFs", (long long)capacity, patch,
            (long long)n);
  for (fea_index d = 0; d < n; d++) global[d] = mp->global[mp->patch_off[patch] + d];
  return FEA_SUCCESS;
}

/* The conditions: each names a boundary side once, and is valid; *anchored
 * when one is Dirichlet or Robin (or a boundary side is left Dirichlet). */
static fea_status check_bcs(const fea_multipatch *mp, int num_bcs, const fea_multipatch_bc *bcs,
                            int *anchored) {
  fea_context *ctx = mp->ctx;
  FEA_CHECK(num_bcs >= 0, ctx, FEA_ERR_INVALID_ARG, "num_bcs = %d is negative", num_bcs);
  FEA_CHECK(bcs || num_bcs == 0, ctx, FEA_ERR_INVALID_ARG, "bcs is NULL but num_bcs = %d", num_bcs);
  for (int i = 0; i < num_bcs; i++) {
    const int p = bcs[i].patch, s = (int)bcs[i].side;
    FEA_CHECK(p >= 0 && p < mp->num_patches, ctx, FEA_ERR_INVALID_ARG,
              "bcs[%d].patch = %d is outside [0, %d)", i, p, mp->num_patches);
    FEA_CHECK(s >= 0 && s < 2 * mp->dim, ctx, FEA_ERR_INVALID_ARG,
              "bcs[%d].side = %d is outside the %dD patch's sides 0..%d", i, s, mp->dim,
              2 * mp->dim - 1);
    FEA_CHECK(!fea_multipatch_side_is_interface(mp, p, s), ctx, FEA_ERR_INVALID_ARG,
              "bcs[%d] names patch %d side %s, which is an interface, not a boundary side", i, p,
              side_names[s]);
    for (int j = 0; j < i; j++)
      FEA_CHECK(bcs[j].patch != p || (int)bcs[j].side != s, ctx, FEA_ERR_INVALID_ARG,
                "bcs[%d] and bcs[%d] both name patch %d side %s", j, i, p, side_names[s]);
    char what[64];
    snprintf(what, sizeof what, "bcs[%d] (patch %d side %s)", i, p, side_names[s]);
    int robin;
    FEA_CALL(fea_problem_check_condition(ctx, &bcs[i].bc, what, &robin));
    *anchored |= robin || bcs[i].bc.type == FEA_BC_DIRICHLET;
  }
  /* A boundary side not listed is Dirichlet. */
  for (int k = 0; k < mp->num_boundary_sides; k++) {
    const int p = mp->boundary_sides[k] / 6, s = mp->boundary_sides[k] % 6;
    int listed = 0;
    for (int i = 0; i < num_bcs && !listed; i++)
      listed = bcs[i].patch == p && (int)bcs[i].side == s;
    *anchored |= !listed;
  }
  return FEA_SUCCESS;
}

fea_status fea_multipatch_problem_create_poisson(fea_multipatch *mp, const fea_problem_desc *desc,
                                                 int num_bcs, const fea_multipatch_bc *bcs,
                                                 fea_multipatch_problem **out) {
  FEA_ENTRY();
  if (out) *out = NULL;
  FEA_CHECK_NULL(mp, NULL);
  fea_context *ctx = mp->ctx;
  FEA_CHECK_NULL(desc, ctx);
  FEA_CHECK_NULL(out, ctx);
  FEA_CHECK(mp->ncomp == 1, ctx, FEA_ERR_INVALID_ARG,
            "the domain's patches have %d components: a Poisson problem takes scalar patches "
            "(fea_multipatch_problem_create_elasticity() takes vector ones)",
            mp->ncomp);
  fea_problem_desc d = FEA_PROBLEM_DESC_INIT;
  FEA_CALL(fea_struct_copy_in(ctx, &d, desc, "desc", &fea_struct_problem_desc));
  FEA_CALL(fea_problem_check_coefficients(ctx, &d));
  for (int s = 0; s < 6; s++) {
    const fea_boundary_condition *bc = &d.sides[s];
    FEA_CHECK(bc->type == FEA_BC_DIRICHLET && bc->alpha == 0.0 && !bc->flux && !bc->flux_user, ctx,
              FEA_ERR_INVALID_ARG,
              "desc.sides[%d] (%s) is not the default: a multipatch problem takes its "
              "conditions per patch side from bcs",
              s, side_names[s]);
  }
  FEA_CHECK(d.num_parts == 0 && !d.parts, ctx, FEA_ERR_INVALID_ARG,
            "desc.parts is set (%d parts): parts name groups of a Gmsh mesh, not patch sides",
            d.num_parts);
  /* An element form replaces c: it may hold its own mass term, which the
   * library cannot see, so it counts as anchoring (as in
   * fea_problem_create_poisson()). */
  int anchored = d.reaction != 0.0 || d.reaction_fn != NULL || d.element_form != NULL;
  FEA_CALL(check_bcs(mp, num_bcs, bcs, &anchored));
  FEA_CHECK(anchored, ctx, FEA_ERR_INVALID_ARG,
            "no boundary side is Dirichlet or Robin and c = 0: u would be determined up to a "
            "constant only (make one side Dirichlet or Robin, or give c > 0)");
  return fea_multipatch_problem_build(mp, &d, num_bcs, bcs, out);
}

/* The elasticity conditions: each names a boundary side once and is valid
 * on its patch's space (component masks, pressure). */
static fea_status check_elastic_bcs(const fea_multipatch *mp, int num_bcs,
                                    const fea_multipatch_elastic_bc *bcs) {
  fea_context *ctx = mp->ctx;
  FEA_CHECK(num_bcs >= 0, ctx, FEA_ERR_INVALID_ARG, "num_bcs = %d is negative", num_bcs);
  FEA_CHECK(bcs || num_bcs == 0, ctx, FEA_ERR_INVALID_ARG, "bcs is NULL but num_bcs = %d", num_bcs);
  for (int i = 0; i < num_bcs; i++) {
    const int p = bcs[i].patch, s = (int)bcs[i].side;
    FEA_CHECK(p >= 0 && p < mp->num_patches, ctx, FEA_ERR_INVALID_ARG,
              "bcs[%d].patch = %d is outside [0, %d)", i, p, mp->num_patches);
    FEA_CHECK(s >= 0 && s < 2 * mp->dim, ctx, FEA_ERR_INVALID_ARG,
              "bcs[%d].side = %d is outside the %dD patch's sides 0..%d", i, s, mp->dim,
              2 * mp->dim - 1);
    FEA_CHECK(!fea_multipatch_side_is_interface(mp, p, s), ctx, FEA_ERR_INVALID_ARG,
              "bcs[%d] names patch %d side %s, which is an interface, not a boundary side", i, p,
              side_names[s]);
    for (int j = 0; j < i; j++)
      FEA_CHECK(bcs[j].patch != p || (int)bcs[j].side != s, ctx, FEA_ERR_INVALID_ARG,
                "bcs[%d] and bcs[%d] both name patch %d side %s", j, i, p, side_names[s]);
    char what[64];
    snprintf(what, sizeof what, "bcs[%d] (patch %d side %s)", i, p, side_names[s]);
    FEA_CALL(fea_elasticity_check_condition(mp->patches[p], &bcs[i].bc, what));
  }
  return FEA_SUCCESS;
}

fea_status fea_multipatch_problem_create_elasticity(fea_multipatch *mp,
                                                    const fea_elasticity_desc *desc,
                                                    const fea_elasticity_desc *const *materials,
                                                    int num_bcs,
                                                    const fea_multipatch_elastic_bc *bcs,
                                                    fea_multipatch_problem **out) {
  FEA_ENTRY();
  if (out) *out = NULL;
  FEA_CHECK_NULL(mp, NULL);
  fea_context *ctx = mp->ctx;
  FEA_CHECK_NULL(desc, ctx);
  FEA_CHECK_NULL(out, ctx);
  FEA_CHECK(mp->ncomp == mp->dim, ctx, FEA_ERR_INVALID_ARG,
            "elasticity needs patches with %d components (the displacement's); the domain's have "
            "%d: set the patches' components to %d before the domain",
            mp->dim, mp->ncomp, mp->dim);
  fea_elasticity_desc d;
  FEA_CALL(fea_elasticity_desc_copy_in(ctx, desc, "desc", &d));
  for (int s = 0; s < 6; s++) {
    const fea_elastic_condition *bc = &d.sides[s];
    FEA_CHECK(bc->type == FEA_ELASTIC_DISPLACEMENT && bc->components == 0 && !bc->traction &&
                  !bc->traction_user && bc->pressure == 0.0 && !bc->pressure_fn &&
                  !bc->pressure_user,
              ctx, FEA_ERR_INVALID_ARG,
              "desc.sides[%d] (%s) is not the default: a multipatch problem takes its "
              "conditions per patch side from bcs",
              s, side_names[s]);
  }
  FEA_CHECK(d.num_parts == 0 && !d.parts, ctx, FEA_ERR_INVALID_ARG,
            "desc.parts is set (%d parts): parts name groups of a Gmsh mesh, not patch sides",
            d.num_parts);
  FEA_CHECK(d.model == FEA_ELASTICITY_PLANE_STRAIN || d.model == FEA_ELASTICITY_PLANE_STRESS, ctx,
            FEA_ERR_INVALID_ARG,
            "desc.model = %d is not FEA_ELASTICITY_PLANE_STRAIN (0) or _PLANE_STRESS (1)",
            (int)d.model);
  FEA_CHECK(d.quad_points >= 0 && d.quad_points <= FEA_QUAD_MAX_1D, ctx, FEA_ERR_INVALID_ARG,
            "desc.quad_points = %d is outside 0..%d (0: degree + 1)", d.quad_points,
            FEA_QUAD_MAX_1D);
  FEA_CALL(check_elastic_bcs(mp, num_bcs, bcs));
  /* Per-patch materials: each copied in and checked, naming its patch. */
  fea_elasticity_desc *mat = NULL;
  if (materials) {
    mat = malloc((size_t)mp->num_patches * sizeof *mat);
    FEA_CHECK(mat, ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %d materials", mp->num_patches);
  }
  fea_status st = fea_elasticity_check_material(ctx, &d, mp->dim);
  for (int p = 0; materials && p < mp->num_patches && st == FEA_SUCCESS; p++) {
    char what[32];
    snprintf(what, sizeof what, "materials[%d]", p);
    if (!materials[p])
      mat[p] = d;
    else if ((st = fea_elasticity_desc_copy_in(ctx, materials[p], what, &mat[p])) == FEA_SUCCESS)
      st = fea_elasticity_check_material(ctx, &mat[p], mp->dim);
    if (st != FEA_SUCCESS) { /* the message names the patch */
      const char *last = fea_context_last_error(ctx), *body = strstr(last, "(): ");
      char msg[512];
      snprintf(msg, sizeof msg, "%s", body ? body + 4 : last);
      st = FEA_ERROR(ctx, st, "materials[%d] (patch %d): %s", p, p, msg);
    }
  }
  if (st == FEA_SUCCESS) st = fea_multipatch_problem_build_elastic(mp, &d, mat, num_bcs, bcs, out);
  free(mat);
  return st;
}

fea_status fea_multipatch_problem_destroy(fea_multipatch_problem **problem) {
  FEA_ENTRY();
  if (!problem || !*problem) return FEA_SUCCESS;
  fea_object_release(*problem);
  *problem = NULL;
  return FEA_SUCCESS;
}

fea_status fea_multipatch_problem_get_num_free_dofs(const fea_multipatch_problem *problem,
                                                    fea_index *n) {
  FEA_ENTRY();
  FEA_CHECK_NULL(problem, NULL);
  FEA_CHECK_NULL(n, problem->ctx);
  *n = problem->num_free;
  return FEA_SUCCESS;
}

fea_status fea_multipatch_problem_assemble_reference(const fea_multipatch_problem *problem,
                                                     double *b, fea_matrix **A) {
  FEA_ENTRY();
  if (A) *A = NULL;
  FEA_CHECK_NULL(problem, NULL);
  FEA_CHECK(b || A, problem->ctx, FEA_ERR_INVALID_ARG, "b and A are both NULL: nothing to do");
  return fea_multipatch_problem_reference(problem, b, A);
}

fea_status fea_multipatch_problem_expand_solution(const fea_multipatch_problem *problem,
                                                  const double *u_free, double *u_full) {
  FEA_ENTRY();
  FEA_CHECK_NULL(problem, NULL);
  FEA_CHECK(u_free || problem->num_free == 0, problem->ctx, FEA_ERR_INVALID_ARG,
            "argument 'u_free' is NULL");
  FEA_CHECK_NULL(u_full, problem->ctx);
  fea_multipatch_problem_expand(problem, u_free, u_full);
  return FEA_SUCCESS;
}

fea_status fea_multipatch_problem_error_norms(const fea_multipatch_problem *problem,
                                              const double *u_full, fea_scalar_fn exact,
                                              fea_gradient_fn exact_grad, void *user, double *l2,
                                              double *h1_semi) {
  FEA_ENTRY();
  FEA_CHECK_NULL(problem, NULL);
  FEA_CHECK_NULL(u_full, problem->ctx);
  FEA_CHECK_NULL(exact, problem->ctx);
  FEA_CHECK_NULL(l2, problem->ctx);
  FEA_CHECK(!h1_semi || exact_grad, problem->ctx, FEA_ERR_INVALID_ARG,
            "h1_semi asked for without exact_grad");
  return fea_multipatch_problem_norms(problem, u_full, exact, exact_grad, user, l2, h1_semi);
}

fea_status fea_multipatch_problem_error_norms_vector(const fea_multipatch_problem *problem,
                                                     const double *u_full, fea_vector_fn exact,
                                                     fea_vector_fn exact_grad, void *user,
                                                     double *l2, double *h1_semi) {
  FEA_ENTRY();
  FEA_CHECK_NULL(problem, NULL);
  FEA_CHECK_NULL(u_full, problem->ctx);
  FEA_CHECK_NULL(exact, problem->ctx);
  FEA_CHECK_NULL(l2, problem->ctx);
  FEA_CHECK(!h1_semi || exact_grad, problem->ctx, FEA_ERR_INVALID_ARG,
            "h1_semi asked for without exact_grad");
  return fea_multipatch_problem_norms_vector(problem, u_full, exact, exact_grad, user, l2, h1_semi);
}

fea_status fea_solver_create_multipatch(fea_context *ctx, fea_multipatch_problem *problem,
                                        const fea_solver_desc *desc, fea_solver **out) {
  FEA_ENTRY();
  if (out) *out = NULL;
  FEA_CHECK_NULL(ctx, NULL);
  FEA_CHECK_NULL(problem, ctx);
  FEA_CHECK_NULL(out, ctx);
  fea_solver_desc d = FEA_SOLVER_DESC_INIT;
  FEA_CALL(fea_struct_copy_in(ctx, &d, desc, "desc", &fea_struct_solver_desc));
  FEA_CHECK(problem->ctx == ctx, ctx, FEA_ERR_INVALID_ARG,
            "the problem was created on another context");
  FEA_CHECK(d.keep_boundary == 0, ctx, FEA_ERR_INVALID_ARG,
            "desc.keep_boundary = %d: the multipatch solver keeps the patches' boundaries "
            "itself; leave it 0",
            d.keep_boundary);
  FEA_CALL(fea_solver_check_tree_options(ctx, &d));
  return fea_multipatch_solver_create(ctx, problem, &d, out);
}

fea_status fea_solver_create_multipatch_multigrid(fea_context *ctx, fea_multipatch_problem *problem,
                                                  const fea_multigrid_desc *desc,
                                                  fea_solver **out) {
  FEA_ENTRY();
  if (out) *out = NULL;
  FEA_CHECK_NULL(ctx, NULL);
  FEA_CHECK_NULL(problem, ctx);
  FEA_CHECK_NULL(out, ctx);
  fea_multigrid_desc d = FEA_MULTIGRID_DESC_INIT;
  FEA_CALL(fea_struct_copy_in(ctx, &d, desc, "desc", &fea_struct_multigrid_desc));
  FEA_CHECK(problem->ctx == ctx, ctx, FEA_ERR_INVALID_ARG,
            "the problem was created on another context");
  return fea_multipatch_mg_solver_create(ctx, problem, &d, out);
}

fea_status fea_solver_get_multipatch_stats(const fea_solver *solver, fea_multipatch_stats *stats) {
  FEA_ENTRY();
  FEA_CHECK_NULL(solver, NULL);
  FEA_CHECK_NULL(stats, solver->ctx);
  FEA_CALL(fea_solver_check_kind(solver, FEA_SOLVER_MULTIPATCH,
                                 "fea_solver_get_multipatch_stats()"));
  fea_multipatch_stats full;
  fea_multipatch_solver_stats(solver, &full);
  return fea_struct_copy_out(solver->ctx, stats, &full, "stats", &fea_struct_multipatch_stats);
}
