/* Elasticity problem API: the descriptor's checks before src/disc/problem.c
 * builds the object, and the check that the displacement conditions and
 * the springs remove every rigid-body motion (a pure traction problem is
 * singular). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/context.h"
#include "base/struct-copy.h"
#include "disc/mesh.h"
#include "disc/problem.h"
#include "internal/error.h"

/* Its first version is this one: min_size through num_parts (struct-copy.h). */
static const fea_struct_type elasticity_desc_type = {"fea_elasticity_desc",
                                                     "FEA_ELASTICITY_DESC_INIT",
                                                     FEA_SIZE_THROUGH(fea_elasticity_desc, sides),
                                                     sizeof(fea_elasticity_desc)};

static const char *const side_names[6] = {"west", "east", "south", "north", "front", "back"};

static fea_status check_material(fea_context *ctx, const fea_elasticity_desc *d, int dim) {
  if (d->mu != 0.0 || d->lambda != 0.0) {
    FEA_CHECK(d->mu > 0 && isfinite(d->mu), ctx, FEA_ERR_INVALID_ARG,
              "the Lame parameter mu = %g must be positive and finite (or leave lambda and mu 0 "
              "to give E and nu)",
              d->mu);
    FEA_CHECK(isfinite(d->lambda) && d->lambda > -2.0 * d->mu / dim, ctx, FEA_ERR_INVALID_ARG,
              "the Lame parameter lambda = %g must be finite and > -2 mu / %d = %g (a positive "
              "bulk modulus)",
              d->lambda, dim, -2.0 * d->mu / dim);
    return FEA_SUCCESS;
  }
  FEA_CHECK(d->E_fn || (d->E > 0 && isfinite(d->E)), ctx, FEA_ERR_INVALID_ARG,
            "Young's modulus E = %g must be positive and finite", d->E);
  FEA_CHECK(d->nu_fn || (d->nu > -1.0 && d->nu < 0.5), ctx, FEA_ERR_INVALID_ARG,
            "Poisson's ratio nu = %g is outside (-1, 0.5)", d->nu);
  return FEA_SUCCESS;
}

/* One side's or part's condition (`what` names it): its type, the
 * components of its mask, a constant pressure. */
static fea_status check_condition(const fea_space *space, const fea_elastic_condition *bc,
                                  const char *what) {
  fea_context *ctx = space->ctx;
  FEA_CHECK(bc->type == FEA_ELASTIC_DISPLACEMENT || bc->type == FEA_ELASTIC_TRACTION ||
                bc->type == FEA_ELASTIC_PRESSURE || bc->type == FEA_ELASTIC_SPRING,
            ctx, FEA_ERR_INVALID_ARG,
            "%s has type %d; it must be FEA_ELASTIC_DISPLACEMENT, _TRACTION, _PRESSURE or "
            "_SPRING",
            what, (int)bc->type);
  FEA_CHECK(bc->type != FEA_ELASTIC_SPRING || bc->pressure_fn ||
                (bc->pressure >= 0 && isfinite(bc->pressure)),
            ctx, FEA_ERR_INVALID_ARG,
            "%s has the spring stiffness k = %g (its pressure field); it must be finite and >= 0",
            what, bc->pressure);
  if (bc->type == FEA_ELASTIC_DISPLACEMENT) {
    const unsigned lacks = bc->components & ~((1u << space->ncomp) - 1u);
    if (lacks) {
      int c = 0;
      while (!(lacks >> c & 1u)) c++;
      FEA_CHECK(0, ctx, FEA_ERR_INVALID_ARG,
                "%s fixes component %d (mask 0x%x), which the %d-component space lacks", what, c,
                bc->components, space->ncomp);
    }
  }
  FEA_CHECK(bc->type != FEA_ELASTIC_PRESSURE || bc->pressure_fn || isfinite(bc->pressure), ctx,
            FEA_ERR_INVALID_ARG, "%s has the pressure %g; it must be finite", what, bc->pressure);
  return FEA_SUCCESS;
}

static fea_status check_sides(const fea_space *space, const fea_elasticity_desc *d) {
  fea_context *ctx = space->ctx;
  const int dim = space->dim;
  for (int side = 0; side < 6; side++) {
    const fea_elastic_condition *bc = &d->sides[side];
    const char *name = side_names[side];
    char what[32];
    snprintf(what, sizeof what, "sides[%d] (%s)", side, name);
    FEA_CALL(check_condition(space, bc, what));
    if (side >= 2 * dim) {
      FEA_CHECK(bc->type == FEA_ELASTIC_DISPLACEMENT && bc->components == 0, ctx,
                FEA_ERR_INVALID_ARG, "sides[%d] (%s) is set, but a %dD space has sides 0..%d only",
                side, name, dim, 2 * dim - 1);
      continue;
    }
    /* A Lagrange space's sides are those of a structured box mesh. */
    FEA_CHECK(space->kind == FEA_SPACE_BSPLINE || space->mesh->structured ||
                  (bc->type == FEA_ELASTIC_DISPLACEMENT &&
                   (bc->components == 0 || bc->components == (1u << dim) - 1u)),
              ctx, FEA_ERR_UNSUPPORTED,
              "sides[%d] (%s) is not clamped, but the Lagrange space's mesh is not a structured "
              "box (made from arrays, by refinement or from Gmsh), so it has no sides: name "
              "parts of its boundary by physical group (desc.parts)",
              side, name);
  }
  return FEA_SUCCESS;
}

/* Whether a side or part adds face terms: a traction given, a pressure or
 * a spring. */
static int loaded(const fea_elastic_condition *bc) {
  return bc->type == FEA_ELASTIC_PRESSURE || bc->type == FEA_ELASTIC_SPRING ||
         (bc->type == FEA_ELASTIC_TRACTION && bc->traction != NULL);
}

/* The scalar condition that stands for an elasticity side or part in the
 * problem's Poisson descriptor: Dirichlet where nothing is integrated,
 * Neumann for a load, Robin for a spring (so that robin_sides marks the
 * matrix's face terms; alpha is a placeholder the elastic forms ignore). */
static fea_boundary_condition shadow(const fea_elastic_condition *bc) {
  const fea_boundary_condition r = {bc->type == FEA_ELASTIC_SPRING ? FEA_BC_ROBIN
                                    : loaded(bc)                   ? FEA_BC_NEUMANN
                                                                   : FEA_BC_DIRICHLET,
                                    1.0, NULL, NULL};
  return r;
}

/* What the refusal of free rigid-body modes tells the caller to do. */
#define RIGID_HINT                                                                             \
  "a pure traction problem has no unique solution; fix enough components on the sides or "     \
  "parts (FEA_ELASTIC_DISPLACEMENT, a roller fixes one component) or support them on springs " \
  "(FEA_ELASTIC_SPRING with k > 0)"

/* The parts, checked (conditions here, groups as a Poisson problem's parts
 * are) and, in *resolved (malloc'ed; NULL without parts), as the Poisson
 * parts pd then names: natural where loaded, else Dirichlet. */
static fea_status check_parts(const fea_space *space, const fea_elasticity_desc *d,
                              fea_problem_desc *pd, fea_boundary_part **resolved) {
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
  for (int i = 0; i < d->num_parts; i++) {
    char what[32];
    snprintf(what, sizeof what, "parts[%d]", i);
    FEA_CALL(check_condition(space, &d->parts[i].bc, what));
  }
  fea_boundary_part *bp = malloc((size_t)d->num_parts * sizeof *bp);
  FEA_CHECK(bp, ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %d boundary parts", d->num_parts);
  for (int i = 0; i < d->num_parts; i++)
    bp[i] = (fea_boundary_part){d->parts[i].physical_tag, d->parts[i].name,
                                shadow(&d->parts[i].bc)};
  pd->parts = bp;
  pd->num_parts = d->num_parts;
  const fea_status st = fea_problem_check_parts(space, pd, resolved);
  free(bp);
  pd->parts = *resolved;
  return st;
}

/* "translation in x, ..., rotation about z": every rigid-body mode of dim. */
static void all_modes(int dim, char *buf, size_t len) {
  if (dim == 2)
    snprintf(buf, len, "translation in x, translation in y, rotation about z");
  else
    snprintf(buf, len,
             "translation in x, translation in y, translation in z, rotation about x, rotation "
             "about y, rotation about z");
}

/* x_k for k = 0 .. dim - 1, and the constant 1 for k = dim. */
static double coordinate(const double *x, void *user) {
  const int k = ((const int *)user)[0], dim = ((const int *)user)[1];
  return k < dim ? x[k] : 1.0;
}

/* The rigid-body modes: translation c (modes 0 .. dim - 1) and the
 * rotations (u_a = -x_b, u_b = x_a) for the pairs (a, b) of pair[]. Their
 * coefficients are exact: x_k and 1 are in the space (isoparametric), so
 * their interpolants X[k] and X[dim] represent them (over a NURBS map the
 * basis N_i / W sums to 1 / W, not 1: a translation's coefficients are W's,
 * not ones). A mode is removed when the fixed DoFs
 * see it; the set of them when the Gram matrix of their values at the fixed
 * DoFs is nonsingular, checked by an LDL^T without pivoting: a mode whose
 * pivot vanishes is free (alone or with the modes before it). */
static fea_status check_rigid_modes(const fea_problem *pb) {
  const fea_space *s = pb->space;
  const int dim = s->dim, nc = s->ncomp;
  const int nrot = dim == 2 ? 1 : 3, nm = dim + nrot;
  static const int pair[3][2] = {{1, 2}, {2, 0}, {0, 1}}; /* about x, y, z */
  const int first_pair = dim == 2 ? 2 : 0;
  double *X = malloc((size_t)(dim + 1) * (size_t)(s->num_dofs ? s->num_dofs : 1) * sizeof *X);
  FEA_CHECK(X, pb->ctx, FEA_ERR_OUT_OF_MEMORY,
            "no memory for the rigid-body modes of %lld functions", (long long)s->num_dofs);
  fea_status st = FEA_SUCCESS;
  for (int k = 0; k <= dim && st == FEA_SUCCESS; k++) {
    const int which[2] = {k, dim};
    st = s->ops->interpolate(s, coordinate, (void *)which, X + (size_t)k * s->num_dofs);
  }
  double G[6][6] = {{0}}, scale = 0;
  for (fea_index i = 0; i < s->num_dofs && st == FEA_SUCCESS; i++)
    for (int k = 0; k < dim; k++) scale = fmax(scale, fabs(X[(size_t)k * s->num_dofs + i]));
  if (scale == 0) scale = 1;
  for (fea_index i = 0; i < s->num_dofs && st == FEA_SUCCESS; i++)
    for (int c = 0; c < nc; c++) {
      if (pb->free_index[c + nc * i] >= 0) continue;
      double v[6] = {0};
      v[c] = X[(size_t)dim * s->num_dofs + i];
      for (int r = 0; r < nrot; r++) {
        const int a = pair[first_pair + r][0], b = pair[first_pair + r][1];
        v[dim + r] = (c == a   ? -X[(size_t)b * s->num_dofs + i]
                      : c == b ? X[(size_t)a * s->num_dofs + i]
                               : 0.0) /
                     scale;
      }
      for (int m = 0; m < nm; m++)
        for (int n = 0; n < nm; n++) G[m][n] += v[m] * v[n];
    }
  free(X);
  FEA_CALL(st);
  /* The springs: int k v_m . v_n over their faces. */
  double S[6][6];
  FEA_CALL(fea_form_elastic_spring_gram(pb, S));
  char free_modes[160];
  fea_elastic_free_modes(dim, G, S, free_modes, sizeof free_modes);
  FEA_CHECK(free_modes[0] == '\0', pb->ctx, FEA_ERR_INVALID_ARG,
            "the displacement conditions leave rigid-body modes free (%s): " RIGID_HINT,
            free_modes);
  return FEA_SUCCESS;
}

fea_status fea_problem_create_elasticity(fea_space *space, const fea_elasticity_desc *desc,
                                         fea_problem **out) {
  FEA_ENTRY();
  if (out) *out = NULL;
  FEA_CHECK_NULL(space, NULL);
  fea_context *ctx = space->ctx;
  FEA_CHECK_NULL(desc, ctx);
  FEA_CHECK_NULL(out, ctx);
  fea_elasticity_desc d = FEA_ELASTICITY_DESC_INIT;
  FEA_CALL(fea_struct_copy_in(ctx, &d, desc, "desc", &elasticity_desc_type));
  FEA_CHECK(space->dim >= 2, ctx, FEA_ERR_UNSUPPORTED,
            "elasticity needs a 2D or 3D space; this one is %dD", space->dim);
  FEA_CHECK(space->ncomp == space->dim, ctx, FEA_ERR_INVALID_ARG,
            "elasticity needs a space with %d components (the displacement's); this one has %d: "
            "set the space's components to %d before the problem",
            space->dim, space->ncomp, space->dim);
  if (!d.C_fn) FEA_CALL(check_material(ctx, &d, space->dim)); /* else checked at points */
  FEA_CHECK(d.model == FEA_ELASTICITY_PLANE_STRAIN || d.model == FEA_ELASTICITY_PLANE_STRESS, ctx,
            FEA_ERR_INVALID_ARG,
            "model = %d is not FEA_ELASTICITY_PLANE_STRAIN (0) or _PLANE_STRESS (1)", (int)d.model);
  FEA_CHECK(d.quad_points >= 0 && d.quad_points <= FEA_QUAD_MAX_1D, ctx, FEA_ERR_INVALID_ARG,
            "quad_points = %d is outside 0..%d (0: degree + 1)", d.quad_points, FEA_QUAD_MAX_1D);
  FEA_CALL(check_sides(space, &d));
  int fixes = d.num_parts > 0; /* parts: decided on the built problem */
  for (int side = 0; side < 2 * space->dim; side++) {
    const fea_elastic_condition *bc = &d.sides[side];
    fixes |= bc->type == FEA_ELASTIC_DISPLACEMENT ||
             (bc->type == FEA_ELASTIC_SPRING && (bc->pressure_fn || bc->pressure > 0));
  }
  if (!fixes) {
    char modes[160];
    all_modes(space->dim, modes, sizeof modes);
    FEA_CHECK(0, ctx, FEA_ERR_INVALID_ARG,
              "the displacement conditions leave rigid-body modes free (%s): " RIGID_HINT, modes);
  }
  /* The Poisson descriptor the problem object keeps: its rule, and the
   * loaded sides and parts marked natural so that their face rules are made
   * (traction-free ones need no terms). */
  fea_problem_desc pd = FEA_PROBLEM_DESC_INIT;
  pd.quad_points = d.quad_points;
  for (int side = 0; side < 2 * space->dim; side++) pd.sides[side] = shadow(&d.sides[side]);
  fea_boundary_part *parts = NULL;
  FEA_CALL(check_parts(space, &d, &pd, &parts));
  if (parts) {
    /* Every facet may be loaded or free: the scalar anchoring check of
     * the facet classification is not elasticity's (the rigid-body check
     * below is); c is not used by elasticity's forms. */
    pd.reaction = 1.0;
  }
  fea_problem *pb = NULL;
  const fea_status built = fea_problem_build_elastic(space, &pd, &d, &pb);
  free(parts);
  FEA_CALL(built);
  const fea_status st = check_rigid_modes(pb);
  if (st != FEA_SUCCESS) {
    fea_object_release(pb);
    return st;
  }
  *out = pb;
  return FEA_SUCCESS;
}

/* The checks above for the multipatch elasticity problem
 * (src/interface/api-multipatch.c), which builds its patches' problems
 * itself: the descriptor's copy-in, the material, one side's condition. */
fea_status fea_elasticity_desc_copy_in(fea_context *ctx, const fea_elasticity_desc *desc,
                                       const char *what, fea_elasticity_desc *d) {
  *d = (fea_elasticity_desc)FEA_ELASTICITY_DESC_INIT;
  return fea_struct_copy_in(ctx, d, desc, what, &elasticity_desc_type);
}

fea_status fea_elasticity_check_material(fea_context *ctx, const fea_elasticity_desc *d, int dim) {
  return check_material(ctx, d, dim);
}

fea_status fea_elasticity_check_condition(const fea_space *space, const fea_elastic_condition *bc,
                                          const char *what) {
  return check_condition(space, bc, what);
}
