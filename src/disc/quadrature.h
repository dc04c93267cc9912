/* Quadrature rules on reference cells. */
#ifndef FEA_INTERNAL_QUADRATURE_H
#define FEA_INTERNAL_QUADRATURE_H

#include <feaccel/mesh.h>

#define FEA_QUAD_MAX_1D 20

/* Gauss-Legendre with n = 1..20 points on [0, 1] (weights sum to 1), exact
 * for polynomials of degree 2n - 1. Points ascending. */
fea_status fea_gauss_legendre(int n, double *points, double *weights);

/* A rule on a reference cell: [0,1]^d for intervals, quads and hexes; the unit
 * simplex {x_i >= 0, sum x_i <= 1} for triangles and tetrahedra. */
typedef struct fea_quadrature {
  int dim;
  int npts;
  double *points;  /* npts * dim */
  double *weights; /* npts; sum = measure of the reference cell */
  /* A tensor rule's points per direction (point (a, b, c) is number
   * a + tensor[0] (b + tensor[1] c)), so that spaces can evaluate 1D bases
   * once per 1D point; all 0 for any other rule. */
  int tensor[3];
  /* A tensor Gauss rule's 1D weights (1 beyond dim): weight (a, b, c) is
   * w1d[0][a] w1d[1][b] w1d[2][c], so that forms with a constant coefficient
   * can factor them; all 0 where the rule has none. */
  double w1d[3][FEA_QUAD_MAX_1D];
} fea_quadrature;

/* Tensor Gauss-Legendre with n[k] points per direction on [0,1]^dim. */
fea_status fea_quadrature_tensor(int dim, const int n[3], fea_quadrature *q);
/* Collapsed (Duffy) Gauss rule with n points per direction on the unit
 * triangle or tetrahedron: exact for total degree 2n - 2 or better. */
fea_status fea_quadrature_simplex(int dim, int n, fea_quadrature *q);
/* The rule for a cell type with n points per direction. */
fea_status fea_quadrature_for_cell(fea_cell_type type, int n, fea_quadrature *q);
void fea_quadrature_free(fea_quadrature *q);

#endif
