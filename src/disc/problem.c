/* The problem object (Poisson and elasticity): its quadrature rule and the
 * Dirichlet elimination (free-DoF numbering, boundary values) set up once,
 * with the natural boundary conditions that decide which boundary DoFs stay
 * free. On a space with ncomp components the numbering runs over vector
 * DoFs c + ncomp i (interleaved): with one component it is the scalar one. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal/error.h"
#include "lagrange-faces.h"
#include "base/memory-limit.h"
#include "mesh.h"
#include "problem.h"

static void problem_free(void *object) {
  fea_problem *pb = object;
  fea_quadrature_free(&pb->quad);
  for (int k = 0; k < 3; k++) fea_quadrature_free(&pb->face_quad[k]);
  free(pb->free_index);
  free(pb->dirichlet);
  fea_lagrange_faces_free(pb->lfaces);
  free(pb->parts);
  free(pb->elastic);
  if (pb->space) fea_object_release(pb->space);
  free(pb);
}

/* One component of the elasticity problem's displacement g, as the scalar
 * function the space's interpolation takes. */
typedef struct component_fn {
  fea_vector_fn g;
  void *user;
  int c;
} component_fn;

static double component_at(const double *x, void *user) {
  const component_fn *f = user;
  double v[FEA_MAX_COMPONENTS] = {0};
  f->g(x, v, f->user);
  return v[f->c];
}

/* The Dirichlet values of every vector DoF into pb->dirichlet (interleaved):
 * the scalar g on every component (Poisson), or component c of the
 * elasticity problem's g, each interpolated on the scalar space. */
static fea_status dirichlet_values(fea_problem *pb, const fea_elasticity_desc *e) {
  const fea_space *s = pb->space;
  const int nc = s->ncomp;
  const fea_problem_desc *d = &pb->desc;
  if (nc == 1 && !e)
    return d->dirichlet ? s->ops->interpolate(s, d->dirichlet, d->dirichlet_user, pb->dirichlet)
                        : FEA_SUCCESS;
  if (!(e ? e->displacement != NULL : d->dirichlet != NULL)) return FEA_SUCCESS;
  double *v = malloc((size_t)(s->num_dofs ? s->num_dofs : 1) * sizeof *v);
  FEA_CHECK(v, pb->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for the Dirichlet values of %lld DoFs",
            (long long)s->num_dofs);
  fea_status st = FEA_SUCCESS;
  for (int c = 0; c < nc && st == FEA_SUCCESS; c++) {
    if (!e && c > 0) break; /* one scalar g: interpolated once */
    component_fn f = {e ? e->displacement : NULL, e ? e->displacement_user : NULL, c};
    st = e ? s->ops->interpolate(s, component_at, &f, v)
           : s->ops->interpolate(s, d->dirichlet, d->dirichlet_user, v);
    for (fea_index i = 0; i < s->num_dofs && st == FEA_SUCCESS; i++)
      for (int cc = e ? c : 0; cc < (e ? c + 1 : nc); cc++) pb->dirichlet[cc + nc * i] = v[i];
  }
  free(v);
  return st;
}

/* Whether a side's or part's condition fixes component c: a displacement
 * condition whose mask has c (0: every component). */
static int fixes_component(const fea_elastic_condition *bc, int c) {
  const unsigned mask = bc->components ? bc->components : ~0u;
  return bc->type == FEA_ELASTIC_DISPLACEMENT && (mask >> c & 1u);
}

/* Whether the elasticity problem fixes component c of B-spline function i:
 * a displacement side holding i whose mask has c. */
static int elastic_fixed(const fea_space *s, const fea_elasticity_desc *e, fea_index i, int c) {
  for (int side = 0; side < 2 * s->dim; side++)
    if (fixes_component(&e->sides[side], c) && fea_bspline_dof_on_side(s, i, side)) return 1;
  return 0;
}

/* Lagrange spaces: vfixed[c + nc i] = 1 where a displacement side (of a
 * structured box mesh) or part (of a Gmsh mesh) fixing component c holds
 * DoF i. Per component, the facets that fix it are Dirichlet and the others
 * natural, and the facet classification of lagrange-faces.h says which DoFs
 * that fixes (a DoF shared by a fixing and a free facet is fixed), on a
 * scratch copy of the problem whose facet list is dropped. */
static fea_status elastic_lagrange_fixed(const fea_problem *pb, const fea_elasticity_desc *e,
                                         unsigned char *vfixed) {
  const fea_space *s = pb->space;
  const int nc = s->ncomp, np = pb->desc.num_parts;
  if (np == 0 && !s->mesh->structured) { /* no sides and no parts: clamped (api-elasticity.c) */
    for (fea_index b = 0; b < s->num_boundary_dofs; b++)
      for (int c = 0; c < nc; c++) vfixed[c + nc * s->boundary_dofs[b]] = 1;
    return FEA_SUCCESS;
  }
  fea_boundary_part *parts = malloc((size_t)(np > 0 ? np : 1) * sizeof *parts);
  FEA_CHECK(parts, pb->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %d boundary parts", np);
  fea_status st = FEA_SUCCESS;
  for (int c = 0; c < nc && st == FEA_SUCCESS; c++) {
    fea_problem tmp = *pb;
    tmp.lfaces = NULL;
    tmp.face_sides = tmp.robin_sides = 0;
    /* The facets may all be free for this component: nothing to anchor
     * here (the rigid-body check is elasticity's, api-elasticity.c). */
    tmp.desc.reaction = 1.0;
    for (int side = 0; side < 6; side++) {
      tmp.desc.sides[side].type = fixes_component(&e->sides[side], c) ? FEA_BC_DIRICHLET
                                                                      : FEA_BC_NEUMANN;
      tmp.desc.sides[side].flux = NULL;
    }
    for (int i = 0; i < np; i++) {
      parts[i] = pb->parts[i];
      parts[i].bc.type = fixes_component(&e->parts[i].bc, c) ? FEA_BC_DIRICHLET : FEA_BC_NEUMANN;
      parts[i].bc.flux = NULL;
    }
    tmp.desc.parts = parts;
    unsigned char *fixed = NULL;
    st = fea_lagrange_faces_build(&tmp, &fixed);
    fea_lagrange_faces_free(tmp.lfaces);
    for (fea_index i = 0; i < s->num_dofs && st == FEA_SUCCESS; i++) vfixed[c + nc * i] = fixed[i];
    free(fixed);
  }
  free(parts);
  return st;
}

static fea_status build(fea_space *space, const fea_problem_desc *d, const fea_elasticity_desc *e,
                        fea_problem **out) {
  fea_context *ctx = space->ctx;
  const int nc = space->ncomp;
  const fea_index nv = fea_space_total_dofs(space);
  /* The free-DoF map and the Dirichlet values, and as much again for the
   * interpolation's work arrays when there is Dirichlet data. */
  const int data = e ? e->displacement != NULL : d->dirichlet != NULL;
  char what[96];
  snprintf(what, sizeof what, "the problem's DoF maps over %lld DoFs", (long long)nv);
  FEA_CALL(fea_memory_require(ctx, 0, fea_bytes((double)nv, data ? 32 : 16), what));
  fea_problem *pb;
  FEA_CALL(fea_object_alloc(ctx, sizeof *pb, "problem", problem_free, (void **)&pb));
  pb->space = space;
  fea_object_retain(space);
  pb->desc = *d;
  fea_status st = FEA_SUCCESS;
  if (e) { /* the descriptor and its parts in one block: the caller's array may go */
    const size_t np = (size_t)(e->num_parts > 0 ? e->num_parts : 0);
    pb->elastic = malloc(sizeof *pb->elastic + np * sizeof *e->parts);
    if (pb->elastic) {
      *pb->elastic = *e;
      fea_elastic_part *own = (fea_elastic_part *)(void *)(pb->elastic + 1);
      if (np) memcpy(own, e->parts, np * sizeof *own);
      pb->elastic->parts = np ? own : NULL;
    } else {
      st = FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for the elasticity descriptor");
    }
  }
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
  size_t n = (size_t)nv;
  unsigned char *vfixed = NULL; /* elasticity on a Lagrange space: per vector DoF */
  if (st == FEA_SUCCESS && e && !bspline) {
    vfixed = calloc(n ? n : 1, 1);
    st = vfixed ? elastic_lagrange_fixed(pb, e, vfixed)
                : FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %zu DoF flags", n);
  }
  if (st == FEA_SUCCESS) {
    pb->free_index = malloc((n ? n : 1) * sizeof *pb->free_index);
    pb->dirichlet = calloc(n ? n : 1, sizeof *pb->dirichlet);
    if (!pb->free_index || !pb->dirichlet)
      st = FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %zu DoF maps", n);
  }
  if (st == FEA_SUCCESS) st = dirichlet_values(pb, e);
  if (st == FEA_SUCCESS) {
    /* boundary_dofs is sorted: one merge pass numbers the free DoFs in order
     * (vector DoFs c + nc i in order too: the components of i in turn). */
    fea_index next = 0, b = 0;
    for (fea_index i = 0; i < space->num_dofs; i++) {
      if (b < space->num_boundary_dofs && space->boundary_dofs[b] == i) {
        /* On the boundary: eliminated where one of its sides is Dirichlet. */
        int fixed = fixed_dof ? fixed_dof[i] : !pb->face_sides;
        for (int side = 0; bspline && side < 2 * space->dim && !fixed; side++)
          fixed = (dirichlet_sides >> side & 1u) && fea_bspline_dof_on_side(space, i, side);
        for (int c = 0; c < nc; c++) {
          const int fc = vfixed ? vfixed[c + nc * i] : e ? elastic_fixed(space, e, i, c) : fixed;
          pb->free_index[c + nc * i] = fc ? -1 : next++;
        }
        b++;
      } else {
        for (int c = 0; c < nc; c++) pb->free_index[c + nc * i] = next++;
      }
    }
    pb->num_free = next;
    for (fea_index i = 0; i < nv; i++)
      if (pb->free_index[i] >= 0)
        pb->dirichlet[i] = 0; /* only boundary values are kept */
      else if (!isfinite(pb->dirichlet[i]))
        st = FEA_ERROR(ctx, FEA_ERR_INVALID_ARG, "the Dirichlet data g is %g at boundary DoF %lld",
                       pb->dirichlet[i], (long long)i);
  }
  free(fixed_dof);
  free(vfixed);
  if (st != FEA_SUCCESS) {
    fea_object_release(pb);
    return st;
  }
  *out = pb;
  return FEA_SUCCESS;
}

fea_status fea_problem_build(fea_space *space, const fea_problem_desc *d, fea_problem **out) {
  return build(space, d, NULL, out);
}

fea_status fea_problem_build_elastic(fea_space *space, const fea_problem_desc *d,
                                     const fea_elasticity_desc *e, fea_problem **out) {
  return build(space, d, e, out);
}

void fea_problem_fix_dofs(fea_problem *pb, const unsigned char *fixed, const double *values) {
  fea_index next = 0;
  for (fea_index i = 0; i < fea_space_total_dofs(pb->space); i++) {
    if (fixed[i] && pb->free_index[i] >= 0) {
      pb->free_index[i] = -1;
      pb->dirichlet[i] = values[i];
    }
    if (pb->free_index[i] >= 0) pb->free_index[i] = next++;
  }
  pb->num_free = next;
}
