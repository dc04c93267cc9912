/* Neumann and Robin conditions on Lagrange spaces: the condition of every
 * boundary facet, the DoFs that stay Dirichlet, and an element's basis on a
 * facet for the face integrals of forms.c.
 *
 * A boundary facet's condition comes from the side of a structured box mesh
 * it lies on, found by grid position (the nodes are numbered
 * lexicographically; a point map may move them off the box, so coordinates
 * would not tell), or from the physical group of a Gmsh mesh's boundary that
 * a listed part names, found by matching the facet's sorted nodes with the
 * file's facets. Facets in no listed part keep the default, Dirichlet. A DoF
 * is eliminated when it lies on a Dirichlet facet, or on the boundary but on
 * no natural facet (a mesh node no cell uses); a DoF shared by a Dirichlet
 * and a natural facet is Dirichlet.
 *
 * Face integrals use the facet's own parametrization by its first vertices
 * in the cell's reference coordinates, mapped by the cell's vertex map: the
 * points and the measure (tangent length in 2D, the norm of the tangents'
 * cross product in 3D) are those of the cell's geometry, also on a mapped or
 * unstructured mesh. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal/error.h"
#include "lagrange-faces.h"
#include "lagrange.h"
#include "mesh-boundary.h"
#include "mesh.h"

/* Reference coordinates of vertex j (mesh order) of a cell of dimension d. */
static void vertex_reference(fea_cell_type type, int d, int j, double *xi) {
  for (int k = 0; k < d; k++) xi[k] = 0.0;
  if (type == FEA_CELL_TRIANGLE || type == FEA_CELL_TETRAHEDRON) {
    if (j > 0) xi[j - 1] = 1.0;
    return;
  }
  for (int k = 0; k < d; k++) xi[k] = (double)(fea_cell_corner_bits[j] >> k & 1);
}

/* The vertices of facet code (c * nfacet + f) as mesh nodes; their count. */
static int facet_nodes(const fea_mesh *m, fea_index code, int nfacet, fea_index *nodes) {
  int v[4];
  const fea_index c = code / nfacet;
  const int nv = fea_cell_facet_vertices(m->type, (int)(code % nfacet), v);
  for (int j = 0; j < nv; j++) nodes[j] = m->cells[c * m->nodes_per_cell + v[j]];
  return nv;
}

/* The side of a structured mesh's box a boundary facet lies on: every
 * vertex at grid position 0 (low) or n (high) of one direction; -1 if none. */
static int structured_side(const fea_mesh *m, const fea_index *nodes, int nv) {
  fea_index stride[3] = {1, 1, 1};
  for (int k = 1; k < m->dim; k++) stride[k] = stride[k - 1] * (m->n[k - 1] + 1);
  for (int side = 0; side < 2 * m->dim; side++) {
    const int k = side / 2;
    const fea_index at = side % 2 ? m->n[k] : 0;
    int on = 1;
    for (int j = 0; j < nv && on; j++) on = (nodes[j] / stride[k]) % (m->n[k] + 1) == at;
    if (on) return side;
  }
  return -1;
}

/* "parts[2] (physical group 5 "outlet")", for messages. */
static void format_part(const fea_problem *pb, int i, char *buf, size_t len) {
  const fea_mesh_boundary *b = pb->space->mesh->boundary;
  const int tag = pb->desc.parts[i].physical_tag, g = fea_mesh_boundary_find_tag(b, tag);
  const char *name = g >= 0 ? b->group_name[g] : NULL;
  if (name)
    snprintf(buf, len, "parts[%d] (physical group %d \"%s\")", i, tag, name);
  else
    snprintf(buf, len, "parts[%d] (physical group %d)", i, tag);
}

/* One facet of a listed part in the file: its key, its part, whether a
 * boundary facet of the cells matched it. */
typedef struct part_facet {
  fea_index key[FEA_FACET_MAX_NODES];
  int part, matched;
} part_facet;

static int cmp_part_facet(const void *pa, const void *pb) {
  const part_facet *a = pa, *b = pb;
  const int c = fea_facet_key_compare(a->key, b->key);
  return c ? c : (a->part > b->part) - (a->part < b->part);
}

/* The conditions of the boundary facets from the listed parts (cond[i] for
 * boundary facet i; NULL where no part names it). */
static fea_status classify_parts(const fea_problem *pb, const fea_index *bf, fea_index nbf,
                                 int nfacet, const fea_boundary_condition **cond) {
  const fea_mesh *m = pb->space->mesh;
  const fea_mesh_boundary *b = m->boundary;
  fea_context *ctx = pb->ctx;
  char what[160], other[160], nodes_text[128];
  int *group_part = malloc((size_t)(b->num_groups > 0 ? b->num_groups : 1) * sizeof *group_part);
  FEA_CHECK(group_part, ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %d physical groups",
            b->num_groups);
  for (int g = 0; g < b->num_groups; g++) group_part[g] = -1;
  fea_status st = FEA_SUCCESS;
  for (int i = 0; i < pb->desc.num_parts && st == FEA_SUCCESS; i++) {
    const int g = fea_mesh_boundary_find_tag(b, pb->desc.parts[i].physical_tag);
    if (g < 0) { /* the interface resolved every part to a group: an internal caller's slip */
      st = FEA_ERROR(ctx, FEA_ERR_INVALID_ARG,
                     "parts[%d] names physical tag %d, not a group of "
                     "the mesh's boundary",
                     i, pb->desc.parts[i].physical_tag);
      break;
    }
    if (group_part[g] >= 0) {
      format_part(pb, group_part[g], other, sizeof other);
      st = FEA_ERROR(ctx, FEA_ERR_INVALID_ARG,
                     "parts[%d] names physical group %d again (as %s): list a group once", i,
                     pb->desc.parts[i].physical_tag, other);
    }
    group_part[g] = i;
  }
  fea_index nrec = 0;
  for (fea_index f = 0; f < b->num_facets && st == FEA_SUCCESS; f++) {
    const int e = b->facet_entity[f];
    for (int k = e < 0 ? 0 : b->entity_start[e]; e >= 0 && k < b->entity_start[e + 1]; k++)
      nrec += group_part[b->group_of[k]] >= 0;
  }
  part_facet *rec = st == FEA_SUCCESS ? malloc((size_t)(nrec > 0 ? nrec : 1) * sizeof *rec) : NULL;
  if (st == FEA_SUCCESS && !rec)
    st = FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %lld boundary part facets",
                   (long long)nrec);
  if (st == FEA_SUCCESS) {
    fea_index n = 0;
    for (fea_index f = 0; f < b->num_facets; f++) {
      const int e = b->facet_entity[f];
      const fea_index *fn = b->facet_nodes + f * FEA_FACET_MAX_NODES;
      int nv = 0;
      while (nv < FEA_FACET_MAX_NODES && fn[nv] >= 0) nv++;
      for (int k = e < 0 ? 0 : b->entity_start[e]; e >= 0 && k < b->entity_start[e + 1]; k++) {
        const int part = group_part[b->group_of[k]];
        if (part < 0) continue;
        fea_facet_key(fn, nv, rec[n].key);
        rec[n].part = part;
        rec[n++].matched = 0;
      }
    }
    qsort(rec, (size_t)nrec, sizeof *rec, cmp_part_facet);
  }
  for (fea_index i = 0; i < nbf && st == FEA_SUCCESS; i++) {
    fea_index nodes[4], key[FEA_FACET_MAX_NODES];
    const int nv = facet_nodes(m, bf[i], nfacet, nodes);
    fea_facet_key(nodes, nv, key);
    fea_index lo = 0, hi = nrec; /* the first record not below key */
    while (lo < hi) {
      const fea_index mid = lo + (hi - lo) / 2;
      if (fea_facet_key_compare(rec[mid].key, key) < 0)
        lo = mid + 1;
      else
        hi = mid;
    }
    int part = -1;
    for (fea_index r = lo; r < nrec && fea_facet_key_compare(rec[r].key, key) == 0; r++) {
      rec[r].matched = 1;
      if (part >= 0 && rec[r].part != part) {
        format_part(pb, part, what, sizeof what);
        format_part(pb, rec[r].part, other, sizeof other);
        fea_mesh_boundary_format_facet(b, key, nodes_text, sizeof nodes_text);
        st = FEA_ERROR(ctx, FEA_ERR_INVALID_ARG,
                       "%s and %s share the boundary facet of nodes %s: a facet takes one "
                       "condition",
                       what, other, nodes_text);
        break;
      }
      part = rec[r].part;
    }
    cond[i] = part >= 0 ? &pb->desc.parts[part].bc : NULL;
  }
  for (fea_index r = 0; r < nrec && st == FEA_SUCCESS; r++)
    if (!rec[r].matched) {
      format_part(pb, rec[r].part, what, sizeof what);
      fea_mesh_boundary_format_facet(b, rec[r].key, nodes_text, sizeof nodes_text);
      st = FEA_ERROR(ctx, FEA_ERR_INVALID_ARG,
                     "%s holds the facet of nodes %s, which is not on the mesh's boundary (two "
                     "cells or none hold it): Neumann and Robin conditions apply on the boundary",
                     what, nodes_text);
    }
  free(rec);
  free(group_part);
  return st;
}

/* The rule on the reference facet: degree + 1 points per direction (or the
 * problem's quad_points), exact for the Robin mass on affine facets. */
static fea_status facet_rule(const fea_problem *pb, fea_lagrange_faces *lf) {
  const fea_space *s = pb->space;
  const int n = pb->desc.quad_points > 0 ? pb->desc.quad_points : s->degree[0] + 1;
  lf->npts = 1;
  if (s->dim == 1) return FEA_SUCCESS;
  if (s->cell == FEA_CELL_TETRAHEDRON)
    FEA_CALL(fea_quadrature_simplex(2, n, &lf->rule));
  else
    FEA_CALL(fea_quadrature_tensor(s->dim - 1, (const int[3]){n, n, 1}, &lf->rule));
  lf->npts = lf->rule.npts;
  return FEA_SUCCESS;
}

void fea_lagrange_faces_free(fea_lagrange_faces *f) {
  if (!f) return;
  free(f->cell);
  free(f->facet);
  free(f->bc);
  fea_quadrature_free(&f->rule);
  free(f);
}

/* The faces list of the natural facets among the boundary facets. */
static fea_status make_faces(fea_problem *pb, const fea_index *bf, fea_index nbf, int nfacet,
                             const fea_boundary_condition **cond, fea_index count) {
  fea_lagrange_faces *lf = calloc(1, sizeof *lf);
  FEA_CHECK(lf, pb->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for the natural facets");
  const size_t n = (size_t)(count > 0 ? count : 1);
  lf->cell = malloc(n * sizeof *lf->cell);
  lf->facet = malloc(n * sizeof *lf->facet);
  lf->bc = malloc(n * sizeof *lf->bc);
  fea_status st = lf->cell && lf->facet && lf->bc
                      ? facet_rule(pb, lf)
                      : FEA_ERROR(pb->ctx, FEA_ERR_OUT_OF_MEMORY,
                                  "no memory for %lld natural facets", (long long)count);
  if (st != FEA_SUCCESS) {
    fea_lagrange_faces_free(lf);
    return st;
  }
  for (fea_index i = 0; i < nbf; i++) {
    if (!cond[i] || cond[i]->type == FEA_BC_DIRICHLET) continue;
    lf->cell[lf->count] = bf[i] / nfacet; /* bf ascends, so cells do */
    lf->facet[lf->count] = (int)(bf[i] % nfacet);
    lf->bc[lf->count++] = cond[i];
  }
  pb->lfaces = lf;
  return FEA_SUCCESS;
}

/* fixed[i] = 1 for boundary DoF i unless it lies on natural facets only. */
static void mark_fixed(const fea_problem *pb, const fea_index *bf, fea_index nbf, int nfacet,
                       const fea_boundary_condition **cond, unsigned char *fixed) {
  const fea_space *s = pb->space;
  const fea_mesh *m = s->mesh;
  const fea_lagrange_element *el = fea_space_lagrange_element(s);
  const int nb = el->nb;
  /* Bit 1: on a Dirichlet facet; bit 2: on a natural one. */
  for (fea_index i = 0; i < nbf; i++) {
    int v[4];
    const int nv = fea_cell_facet_vertices(m->type, (int)(bf[i] % nfacet), v);
    unsigned fmask = 0;
    for (int j = 0; j < nv; j++) fmask |= 1u << v[j];
    const unsigned char bit = cond[i] && cond[i]->type != FEA_BC_DIRICHLET ? 2 : 1;
    const fea_index *dofs = s->element_dof_table + (bf[i] / nfacet) * nb;
    for (int k = 0; k < nb; k++)
      if ((el->vmask[k] & ~fmask) == 0) fixed[dofs[k]] |= bit;
  }
  fea_index b = 0;
  for (fea_index i = 0; i < s->num_dofs; i++) {
    const int boundary = b < s->num_boundary_dofs && s->boundary_dofs[b] == i;
    b += boundary;
    fixed[i] = boundary && fixed[i] != 2;
  }
}

fea_status fea_lagrange_faces_build(fea_problem *pb, unsigned char **fixed) {
  const fea_space *s = pb->space;
  const fea_mesh *m = s->mesh;
  fea_context *ctx = pb->ctx;
  const int nfacet = fea_cell_num_facets(m->type);
  fea_index nbf = 0;
  const fea_index *bf = fea_space_lagrange_boundary_facets(s, &nbf);
  const fea_boundary_condition **cond = calloc((size_t)(nbf > 0 ? nbf : 1), sizeof *cond);
  unsigned char *fx = calloc((size_t)(s->num_dofs > 0 ? s->num_dofs : 1), 1);
  if (!cond || !fx) {
    free(cond);
    free(fx);
    return FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY, "no memory to classify %lld boundary facets",
                     (long long)nbf);
  }
  fea_status st = FEA_SUCCESS;
  if (pb->desc.num_parts > 0) {
    st = classify_parts(pb, bf, nbf, nfacet, cond);
  } else { /* sides of a structured box mesh (the interface checked it is one) */
    for (fea_index i = 0; i < nbf; i++) {
      fea_index nodes[4];
      const int side = structured_side(m, nodes, facet_nodes(m, bf[i], nfacet, nodes));
      cond[i] = side >= 0 ? &pb->desc.sides[side] : NULL;
    }
  }
  fea_index natural = 0;
  int dirichlet = 0, robin = 0;
  for (fea_index i = 0; i < nbf && st == FEA_SUCCESS; i++) {
    const fea_bc_type t = cond[i] ? cond[i]->type : FEA_BC_DIRICHLET;
    dirichlet |= t == FEA_BC_DIRICHLET;
    robin |= t == FEA_BC_ROBIN;
    natural += t != FEA_BC_DIRICHLET;
  }
  /* An element form replaces c and may hold its own mass term (api-problem.c). */
  if (st == FEA_SUCCESS && !dirichlet && !robin && !fea_problem_has_reaction(pb) &&
      !pb->desc.element_form)
    st = FEA_ERROR(ctx, FEA_ERR_INVALID_ARG,
                   "every boundary facet is Neumann and c = 0: u would be determined up to a "
                   "constant only (leave a part Dirichlet, make one Robin, or give c > 0)");
  if (st == FEA_SUCCESS && natural > 0) st = make_faces(pb, bf, nbf, nfacet, cond, natural);
  if (st == FEA_SUCCESS) {
    mark_fixed(pb, bf, nbf, nfacet, cond, fx);
    /* Bit 6 of face_sides and robin_sides stands for the parts. */
    for (fea_index j = 0; pb->lfaces && j < pb->lfaces->count; j++) {
      const fea_boundary_condition *bc = pb->lfaces->bc[j];
      const int bit = bc >= pb->desc.sides && bc < pb->desc.sides + 6 ? (int)(bc - pb->desc.sides)
                                                                      : 6;
      pb->face_sides |= 1u << bit;
      if (bc->type == FEA_BC_ROBIN) pb->robin_sides |= 1u << bit;
    }
  }
  free(cond);
  if (st != FEA_SUCCESS) {
    free(fx);
    return st;
  }
  *fixed = fx;
  return FEA_SUCCESS;
}

void fea_lagrange_faces_of(const fea_lagrange_faces *f, fea_index e, fea_index *first,
                           fea_index *n) {
  fea_index lo = 0, hi = f->count;
  while (lo < hi) {
    const fea_index mid = lo + (hi - lo) / 2;
    if (f->cell[mid] < e)
      lo = mid + 1;
    else
      hi = mid;
  }
  fea_index end = lo;
  while (end < f->count && f->cell[end] == e) end++;
  *first = lo;
  *n = end - lo;
}

void fea_lagrange_face_values(const fea_problem *pb, fea_index j, double *x, double *ds,
                              double *phi) {
  fea_lagrange_face_values_normal(pb, j, x, ds, phi, NULL);
}

void fea_lagrange_face_values_normal(const fea_problem *pb, fea_index j, double *x, double *ds,
                                     double *phi, double *normal) {
  const fea_space *s = pb->space;
  const fea_mesh *m = s->mesh;
  const fea_lagrange_faces *lf = pb->lfaces;
  const fea_lagrange_element *el = fea_space_lagrange_element(s);
  const int d = s->dim, nb = el->nb;
  int v[4];
  const int nv = fea_cell_facet_vertices(m->type, lf->facet[j], v);
  double X[3][3] = {{0}}, verts[FEA_CELL_MAX_VERTICES * 3];
  for (int a = 0; a < nv && a < 3; a++) vertex_reference(m->type, d, v[a], X[a]);
  const fea_index c = lf->cell[j];
  for (int a = 0; a < m->nodes_per_cell; a++)
    for (int k = 0; k < d; k++)
      verts[a * d + k] = m->coords[m->cells[c * m->nodes_per_cell + a] * d + k];
  for (int q = 0; q < lf->npts; q++) {
    const double *t = d > 1 ? lf->rule.points + (size_t)q * (d - 1) : NULL;
    double xi[3], J[9], T[2][3] = {{0}};
    for (int k = 0; k < d; k++) {
      xi[k] = X[0][k];
      for (int a = 0; a + 1 < d; a++) xi[k] += t[a] * (X[a + 1][k] - X[0][k]);
    }
    fea_cell_map(m->type, d, verts, xi, x + (size_t)q * d, J);
    for (int a = 0; a + 1 < d; a++) /* the tangents: J times the facet's reference edges */
      for (int i = 0; i < d; i++)
        for (int k = 0; k < d; k++) T[a][i] += J[i * d + k] * (X[a + 1][k] - X[0][k]);
    double measure = 1.0, nv3[3] = {0, 0, 0};
    if (d == 2) {
      measure = hypot(T[0][0], T[0][1]);
      nv3[0] = T[0][1], nv3[1] = -T[0][0];
    } else if (d == 3) {
      nv3[0] = T[0][1] * T[1][2] - T[0][2] * T[1][1];
      nv3[1] = T[0][2] * T[1][0] - T[0][0] * T[1][2];
      nv3[2] = T[0][0] * T[1][1] - T[0][1] * T[1][0];
      measure = sqrt(nv3[0] * nv3[0] + nv3[1] * nv3[1] + nv3[2] * nv3[2]);
    }
    if (normal && d > 1) {
      /* Outward: away from the cell's vertex centroid (the cells are convex). */
      double out = 0;
      for (int k = 0; k < d; k++) {
        double centroid = 0;
        for (int a = 0; a < m->nodes_per_cell; a++) centroid += verts[a * d + k];
        out += nv3[k] * (x[(size_t)q * d + k] - centroid / m->nodes_per_cell);
      }
      const double scale = (out < 0 ? -1.0 : 1.0) / measure;
      for (int k = 0; k < d; k++) normal[(size_t)q * d + k] = scale * nv3[k];
    }
    ds[q] = (d > 1 ? lf->rule.weights[q] : 1.0) * measure;
    fea_lagrange_element_eval(el, xi, phi + (size_t)q * nb, NULL);
  }
}
