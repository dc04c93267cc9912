/* Neumann and Robin conditions on Lagrange spaces: which boundary facets
 * carry which condition (the sides of a structured box mesh, or the physical
 * groups of a Gmsh mesh's boundary), which DoFs stay Dirichlet, and the
 * values of an element's basis on such a facet (src/disc/boundary-lagrange.c). */
#ifndef FEA_INTERNAL_LAGRANGE_FACES_H
#define FEA_INTERNAL_LAGRANGE_FACES_H

#include "problem.h"

/* The boundary facets with a natural condition, ascending by cell. */
typedef struct fea_lagrange_faces {
  fea_index count;
  fea_index *cell;                   /* the cell holding facet j */
  int *facet;                        /* its local facet (fea_cell_facet_vertices) */
  const fea_boundary_condition **bc; /* its condition: in the problem's desc.sides or parts */
  fea_quadrature rule;               /* on the reference facet (unused in 1D: a point) */
  int npts;                          /* points per facet: rule.npts, or 1 in 1D */
} fea_lagrange_faces;

/* For a problem on a Lagrange space whose desc (complete, checked) names a
 * Neumann or Robin side or part: classifies every boundary facet, sets
 * pb->lfaces (NULL when no facet is natural) and pb->face_sides /
 * robin_sides, and returns in *fixed (num_dofs, malloc'ed) 1 for each DoF
 * eliminated: boundary DoFs on a Dirichlet facet, and those on no natural
 * one. FEA_ERR_INVALID_ARG when a part's facet is not on the boundary, a
 * facet is in two listed parts, or nothing anchors u (no Dirichlet facet,
 * no Robin facet, c = 0). */
fea_status fea_lagrange_faces_build(fea_problem *pb, unsigned char **fixed);
void fea_lagrange_faces_free(fea_lagrange_faces *f);

/* The faces of element e: faces first .. first + *n - 1. */
void fea_lagrange_faces_of(const fea_lagrange_faces *f, fea_index e, fea_index *first,
                           fea_index *n);

/* At the npts points of face j: the physical points x (npts x dim), the
 * surface weights ds (rule weight times the facet's measure from its cell's
 * vertex map) and the cell's nb basis values (phi[q * nb + i]). */
void fea_lagrange_face_values(const fea_problem *pb, fea_index j, double *x, double *ds,
                              double *phi);
/* The same with the outward unit normals (npts x dim, 2D and 3D) into
 * normal, unless NULL. */
void fea_lagrange_face_values_normal(const fea_problem *pb, fea_index j, double *x, double *ds,
                                     double *phi, double *normal);

#endif
