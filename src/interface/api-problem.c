/* Poisson problem API: the descriptor's checks before src/disc/problem.c
 * builds the object; element systems, reduced-solution expansion and error
 * norms (scalar, and per component for systems); an elasticity solution's
 * stresses at points and its VTU output. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/context.h"
#include "internal/error.h"
#include "disc/mesh-boundary.h"
#include "disc/mesh.h"
#include "disc/problem.h"
#include "disc/elastic-stress.h"
#include "base/size-checks.h"
#include "base/struct-copy.h"

/* "1 \"west\", 2, 5 \"outlet\"": the boundary groups of a mesh, for messages. */
static const char *group_list(const fea_mesh_boundary *b, char *buf, size_t len) {
  size_t used = 0;
  buf[0] = '\0';
  for (int g = 0; b && g < b->num_groups && used + 1 < len; g++) {
    if (g == 12) {
      snprintf(buf + used, len - used, ", ...");
      break;
    }
    used += (size_t)(b->group_name[g] ? snprintf(buf + used, len - used, "%s%d \"%.40s\"",
                                                 g ? ", " : "", b->group_tag[g], b->group_name[g])
                                      : snprintf(buf + used, len - used, "%s%d", g ? ", " : "",
                                                 b->group_tag[g]));
  }
  return buf;
}

/* The condition of side or part `what` (type, Robin alpha); *robin = 1 for Robin. */
fea_status fea_problem_check_condition(fea_context *ctx, const fea_boundary_condition *bc,
                                       const char *what, int *robin) {
  FEA_CHECK(bc->type == FEA_BC_DIRICHLET || bc->type == FEA_BC_NEUMANN || bc->type == FEA_BC_ROBIN,
            ctx, FEA_ERR_INVALID_ARG,
            "%s has type %d; it must be FEA_BC_DIRICHLET, _NEUMANN or _ROBIN", what, (int)bc->type);
  *robin = bc->type == FEA_BC_ROBIN;
  FEA_CHECK(!*robin || (bc->alpha > 0 && isfinite(bc->alpha)), ctx, FEA_ERR_INVALID_ARG,
            "%s is Robin with alpha = %g; it must be finite and > 0", what, bc->alpha);
  return FEA_SUCCESS;
}

/* Every part names a group of the mesh's boundary, by tag or name; the
 * copy in *resolved (malloc'ed) names it by tag. Also the elasticity
 * problem's (api-elasticity.c), on its parts as Poisson parts. */
fea_status fea_problem_check_parts(const fea_space *space, const fea_problem_desc *d,
                                   fea_boundary_part **resolved) {
  fea_context *ctx = space->ctx;
  *resolved = NULL;
  FEA_CHECK(d->num_parts >= 0, ctx, FEA_ERR_INVALID_ARG, "num_parts = %d is negative",
            d->num_parts);
  if (d->num_parts == 0) return FEA_SUCCESS;
  FEA_CHECK(d->parts != NULL, ctx, FEA_ERR_INVALID_ARG, "parts is NULL but num_parts = %d",
            d->num_parts);
  FEA_CHECK(space->kind == FEA_SPACE_LAGRANGE, ctx, FEA_ERR_UNSUPPORTED,
            "parts name physical groups of a mesh read from Gmsh; this is a B-spline space "
            "(name its sides in desc.sides)");
  const fea_mesh_boundary *b = space->mesh->boundary;
  char what[64], groups[512];
  for (int i = 0; i < d->num_parts; i++) {
    const fea_boundary_part *p = &d->parts[i];
    snprintf(what, sizeof what, "parts[%d]", i);
    int robin;
    FEA_CALL(fea_problem_check_condition(ctx, &p->bc, what, &robin));
    FEA_CHECK(b != NULL, ctx, FEA_ERR_INVALID_ARG,
              "parts[%d] names a physical group, but the mesh has none on its boundary (a mesh "
              "read from a Gmsh file with physical groups of dimension %d, or refined from one, "
              "has them)",
              i, space->dim - 1);
    if (p->name) {
      int matches = 0;
      (void)fea_mesh_boundary_find_name(b, p->name, &matches);
      FEA_CHECK(matches > 0, ctx, FEA_ERR_INVALID_ARG,
                "parts[%d] names physical group \"%s\", which is not a group of the mesh's "
                "boundary (its groups: %s)",
                i, p->name, group_list(b, groups, sizeof groups));
      FEA_CHECK(matches == 1, ctx, FEA_ERR_INVALID_ARG,
                "parts[%d] names physical group \"%s\", a name %d groups of the mesh's boundary "
                "share: name it by physical_tag",
                i, p->name, matches);
    } else {
      FEA_CHECK(fea_mesh_boundary_find_tag(b, p->physical_tag) >= 0, ctx, FEA_ERR_INVALID_ARG,
                "parts[%d] names physical tag %d, which is not a group of the mesh's boundary "
                "(its groups: %s)",
                i, p->physical_tag, group_list(b, groups, sizeof groups));
    }
  }
  fea_boundary_part *r = malloc((size_t)d->num_parts * sizeof *r);
  FEA_CHECK(r, ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %d boundary parts", d->num_parts);
  for (int i = 0; i < d->num_parts; i++) {
    r[i] = d->parts[i];
    if (r[i].name) {
      int matches;
      r[i].physical_tag = b->group_tag[fea_mesh_boundary_find_name(b, r[i].name, &matches)];
      r[i].name = NULL;
    }
  }
  *resolved = r;
  return FEA_SUCCESS;
}

fea_status fea_problem_check_coefficients(fea_context *ctx, const fea_problem_desc *d) {
  FEA_CHECK(d->sigma_fn || (d->sigma > 0 && isfinite(d->sigma)), ctx, FEA_ERR_INVALID_ARG,
            "sigma = %g must be positive and finite", d->sigma);
  FEA_CHECK(d->quad_points >= 0 && d->quad_points <= FEA_QUAD_MAX_1D, ctx, FEA_ERR_INVALID_ARG,
            "quad_points = %d is outside 0..%d (0: degree + 1)", d->quad_points, FEA_QUAD_MAX_1D);
  FEA_CHECK(d->reaction_fn || (d->reaction >= 0 && isfinite(d->reaction)), ctx, FEA_ERR_INVALID_ARG,
            "the reaction coefficient c = %g must be finite and >= 0", d->reaction);
  return FEA_SUCCESS;
}

fea_status fea_problem_create_poisson(fea_space *space, const fea_problem_desc *desc,
                                      fea_problem **out) {
  FEA_ENTRY();
  if (out) *out = NULL;
  FEA_CHECK_NULL(space, NULL);
  fea_context *ctx = space->ctx;
  FEA_CHECK_NULL(desc, ctx);
  FEA_CHECK_NULL(out, ctx);
  fea_problem_desc d = FEA_PROBLEM_DESC_INIT;
  FEA_CALL(fea_struct_copy_in(ctx, &d, desc, "desc", &fea_struct_problem_desc));
  FEA_CALL(fea_problem_check_coefficients(ctx, &d));
  /* On a vector space the built-in forms (scalar sigma, c, f and fluxes)
   * have no meaning: the user's element form gives the system, and every
   * component of every side is Dirichlet with the one g. */
  if (space->ncomp > 1) {
    FEA_CHECK(d.element_form != NULL, ctx, FEA_ERR_INVALID_ARG,
              "the space has %d components: a Poisson problem on it needs an element_form "
              "(its (nb %d)^2 matrices), or make it an elasticity problem",
              space->ncomp, space->ncomp);
    for (int side = 0; side < 6; side++)
      FEA_CHECK(d.sides[side].type == FEA_BC_DIRICHLET, ctx, FEA_ERR_UNSUPPORTED,
                "sides[%d] is not Dirichlet: on a %d-component space a Poisson problem takes "
                "Dirichlet sides only so far",
                side, space->ncomp);
    FEA_CHECK(d.num_parts == 0, ctx, FEA_ERR_UNSUPPORTED,
              "boundary parts on a %d-component space are not supported yet", space->ncomp);
  }
  static const char *const side_names[6] = {"west", "east", "south", "north", "front", "back"};
  /* A user's element form replaces sigma, c and f: whether its matrix has
   * a mass term the library cannot tell, so the form counts as anchoring
   * and a singular system is the solvers' to report (problem.h). */
  int anchored = d.reaction != 0.0 || d.reaction_fn != NULL || d.element_form != NULL;
  int natural = 0;
  for (int side = 0; side < 6; side++) {
    const fea_boundary_condition *bc = &d.sides[side];
    char what[32];
    snprintf(what, sizeof what, "sides[%d] (%s)", side, side_names[side]);
    int robin;
    FEA_CALL(fea_problem_check_condition(ctx, bc, what, &robin));
    if (bc->type == FEA_BC_DIRICHLET) {
      if (side < 2 * space->dim) anchored = 1;
      continue;
    }
    FEA_CHECK(side < 2 * space->dim, ctx, FEA_ERR_INVALID_ARG,
              "sides[%d] (%s) is not Dirichlet, but a %dD space has sides 0..%d only", side,
              side_names[side], space->dim, 2 * space->dim - 1);
    /* A Lagrange space's sides are those of a structured box mesh. */
    FEA_CHECK(space->kind == FEA_SPACE_BSPLINE || space->mesh->structured, ctx, FEA_ERR_UNSUPPORTED,
              "sides[%d] (%s) is %s, but the Lagrange space's mesh is not a structured box (made "
              "from arrays, by refinement or from Gmsh), so it has no sides: name parts of its "
              "boundary by physical group (desc.parts)",
              side, side_names[side], bc->type == FEA_BC_NEUMANN ? "Neumann" : "Robin");
    anchored |= robin;
    natural = 1;
  }
  FEA_CHECK(!natural || anchored, ctx, FEA_ERR_INVALID_ARG,
            "no side is Dirichlet or Robin and c = 0: u would be determined up to a constant "
            "only (make one side Dirichlet or Robin, or give c > 0)");
  fea_boundary_part *parts = NULL;
  FEA_CALL(fea_problem_check_parts(space, &d, &parts));
  if (parts) d.parts = parts; /* by tag; the problem keeps its own copy */
  const fea_status st = fea_problem_build(space, &d, out);
  free(parts);
  return st;
}

fea_status fea_problem_destroy(fea_problem **problem) {
  FEA_ENTRY();
  if (!problem || !*problem) return FEA_SUCCESS;
  fea_object_release(*problem);
  *problem = NULL;
  return FEA_SUCCESS;
}

fea_status fea_problem_get_num_free_dofs(const fea_problem *problem, fea_index *n) {
  FEA_ENTRY();
  FEA_CHECK_NULL(problem, NULL);
  FEA_CHECK_NULL(n, problem->ctx);
  *n = problem->num_free;
  return FEA_SUCCESS;
}

static fea_status check_element(const fea_problem *pb, fea_index e) {
  FEA_CHECK(e >= 0 && e < pb->space->num_elements, pb->ctx, FEA_ERR_INVALID_ARG,
            "element %lld is outside [0, %lld)", (long long)e, (long long)pb->space->num_elements);
  return FEA_SUCCESS;
}

fea_status fea_problem_element_system(const fea_problem *problem, fea_index e, double *Ke,
                                      double *fe) {
  FEA_ENTRY();
  FEA_CHECK_NULL(problem, NULL);
  FEA_CALL(check_element(problem, e));
  return fea_problem_element_forms(problem, e, Ke, fe, NULL);
}

fea_status fea_problem_element_mass(const fea_problem *problem, fea_index e, double *Me) {
  FEA_ENTRY();
  FEA_CHECK_NULL(problem, NULL);
  FEA_CHECK_NULL(Me, problem->ctx);
  FEA_CALL(check_element(problem, e));
  FEA_CALL(fea_space_require_scalar(problem->space, "fea_problem_element_mass()"));
  return fea_problem_element_forms(problem, e, NULL, NULL, Me);
}

fea_status fea_problem_expand_solution(const fea_problem *problem, const double *u_free,
                                       double *u_full) {
  FEA_ENTRY();
  FEA_CHECK_NULL(problem, NULL);
  FEA_CHECK(u_free || problem->num_free == 0, problem->ctx, FEA_ERR_INVALID_ARG,
            "argument 'u_free' is NULL");
  FEA_CHECK_NULL(u_full, problem->ctx);
  fea_problem_expand(problem, u_free, u_full);
  return FEA_SUCCESS;
}

fea_status fea_problem_error_norms(const fea_problem *problem, const double *u_full,
                                   fea_scalar_fn exact, fea_gradient_fn exact_grad, void *user,
                                   double *l2, double *h1_semi) {
  FEA_ENTRY();
  FEA_CHECK_NULL(problem, NULL);
  FEA_CHECK_NULL(u_full, problem->ctx);
  FEA_CHECK_NULL(exact, problem->ctx);
  FEA_CHECK_NULL(l2, problem->ctx);
  FEA_CHECK(!h1_semi || exact_grad, problem->ctx, FEA_ERR_INVALID_ARG,
            "h1_semi asked for without exact_grad");
  FEA_CALL(fea_space_require_scalar(problem->space,
                                    "fea_problem_error_norms() (fea_problem_error_norms_vector() "
                                    "takes systems)"));
  return fea_problem_norms(problem, u_full, exact, exact_grad, user, l2, h1_semi);
}

fea_status fea_problem_error_norms_vector(const fea_problem *problem, const double *u_full,
                                          fea_vector_fn exact, fea_vector_fn exact_grad, void *user,
                                          double *l2, double *h1_semi) {
  FEA_ENTRY();
  FEA_CHECK_NULL(problem, NULL);
  FEA_CHECK_NULL(u_full, problem->ctx);
  FEA_CHECK_NULL(exact, problem->ctx);
  FEA_CHECK_NULL(l2, problem->ctx);
  FEA_CHECK(!h1_semi || exact_grad, problem->ctx, FEA_ERR_INVALID_ARG,
            "h1_semi asked for without exact_grad");
  return fea_problem_norms_vector(problem, u_full, exact, exact_grad, user, l2, h1_semi);
}

/* What takes elasticity problems only names itself. */
static fea_status require_elastic(const fea_problem *problem, const char *what) {
  FEA_CHECK(problem->elastic != NULL, problem->ctx, FEA_ERR_INVALID_ARG,
            "%s takes an elasticity problem; this one is a Poisson problem", what);
  return FEA_SUCCESS;
}

fea_status fea_problem_evaluate_stress(const fea_problem *problem, const double *u_full,
                                       fea_index npts, const double *points, double *x, double *u,
                                       double *stress, double *von_mises) {
  FEA_ENTRY();
  FEA_CHECK_NULL(problem, NULL);
  fea_context *ctx = problem->ctx;
  FEA_CALL(require_elastic(problem, "fea_problem_evaluate_stress()"));
  FEA_CHECK(npts >= 0, ctx, FEA_ERR_INVALID_ARG, "npts %lld is negative", (long long)npts);
  if (npts == 0) return FEA_SUCCESS;
  FEA_CHECK_NULL(u_full, ctx);
  FEA_CHECK_NULL(points, ctx);
  const int dim = problem->space->dim;
  FEA_CALL(fea_size_check_span(ctx, "points", "npts * dim", (uint64_t)npts, (uint64_t)dim, 0,
                               sizeof *points, NULL));
  FEA_CALL(fea_size_check_span(ctx, "stress", "npts * 6", (uint64_t)npts,
                               (uint64_t)FEA_STRESS_COMPONENTS, 0, sizeof *points, NULL));
  for (fea_index i = 0; i < npts * dim; i++)
    FEA_CHECK(isfinite(points[i]), ctx, FEA_ERR_INVALID_ARG,
              "point %lld is not finite: %g in direction %d", (long long)(i / dim), points[i],
              (int)(i % dim));
  return fea_elastic_stress_points(problem, u_full, npts, points, x, u, stress, von_mises);
}

fea_status fea_problem_write_vtu(const fea_problem *problem, const double *u_full, int samples,
                                 const char *path) {
  FEA_ENTRY();
  FEA_CHECK_NULL(problem, NULL);
  fea_context *ctx = problem->ctx;
  FEA_CALL(require_elastic(problem, "fea_problem_write_vtu()"));
  FEA_CHECK_NULL(u_full, ctx);
  FEA_CHECK_NULL(path, ctx);
  FEA_CHECK(path[0] != '\0', ctx, FEA_ERR_INVALID_ARG, "path is empty");
  FEA_CHECK(samples >= 2 && samples <= 16, ctx, FEA_ERR_INVALID_ARG,
            "samples = %d is outside 2..16", samples);
  /* The sampler maps a tensor grid of the reference cell [0, 1]^d through
   * each element: B-spline patches, and Lagrange quadrilaterals and hexahedra. */
  const fea_space *s = problem->space;
  FEA_CHECK(s->kind == FEA_SPACE_BSPLINE || s->cell == FEA_CELL_QUAD ||
                s->cell == FEA_CELL_HEXAHEDRON,
            ctx, FEA_ERR_UNSUPPORTED,
            "fea_problem_write_vtu() samples B-spline spaces and Lagrange spaces on "
            "quadrilaterals or hexahedra; this space's cells are %ss",
            fea_cell_name(s->cell));
  return fea_elastic_write_vtu(problem, u_full, samples, path);
}
