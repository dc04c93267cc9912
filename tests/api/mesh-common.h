/* Shared by the mesh tests: a context, a mesh's arrays read back through the
 * public getters, and cell measures computed here from first principles
 * (shoelace, determinants, Gauss quadrature of the trilinear Jacobian), not
 * by the library. */
#ifndef FEA_TESTS_API_MESH_COMMON_H
#define FEA_TESTS_API_MESH_COMMON_H

#include <stdlib.h>

#include "api-common.h"

static inline fea_context *open_ref(void) {
  fea_context *ctx = NULL;
  OK(fea_context_create("/cpu/ref", &ctx));
  return ctx;
}

static inline int nodes_per_cell(fea_cell_type t) {
  static const int npc[6] = {0, 2, 3, 4, 4, 8};
  return t >= 1 && t <= 5 ? npc[t] : 0;
}

/* A mesh as arrays, read through the public API. */
struct arrays {
  int dim, npc;
  fea_cell_type type;
  fea_index nn, nc;
  double *x;    /* nn * dim */
  fea_index *c; /* nc * npc */
};

static inline struct arrays get_arrays(const fea_mesh *m) {
  struct arrays a;
  OK(fea_mesh_get_info(m, &a.dim, &a.type, &a.nn, &a.nc));
  a.npc = nodes_per_cell(a.type);
  a.x = malloc((size_t)(a.nn * a.dim) * sizeof *a.x);
  a.c = malloc((size_t)(a.nc * a.npc) * sizeof *a.c);
  cr_assert(a.x && a.c);
  OK(fea_mesh_get_coordinates(m, a.nn * a.dim, a.x));
  OK(fea_mesh_get_cells(m, a.nc * a.npc, a.c));
  return a;
}

static inline void free_arrays(struct arrays *a) {
  free(a->x);
  free(a->c);
}

/* Coordinate k of local node i of cell c, 0 beyond the space dimension. */
static inline double X(const struct arrays *a, fea_index c, int i, int k) {
  return k < a->dim ? a->x[a->c[c * a->npc + i] * a->dim + k] : 0.0;
}

static inline double det3x3(const double m[3][3]) {
  return m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) -
         m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0]) +
         m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]);
}

/* Signed measure of cell c: length (1D), area (2D; in 3D unsigned, and for a
 * quad exact only when it is planar), volume. Hexahedra by 2x2x2
 * Gauss quadrature of the trilinear Jacobian determinant (exact: it has degree
 * at most 2 in each variable). */
static inline double cell_measure(const struct arrays *a, fea_index c) {
  switch (a->type) {
  case FEA_CELL_INTERVAL: {
    double s = 0;
    for (int k = 0; k < 3; k++)
      s += (X(a, c, 1, k) - X(a, c, 0, k)) * (X(a, c, 1, k) - X(a, c, 0, k));
    return a->dim == 1 ? X(a, c, 1, 0) - X(a, c, 0, 0) : sqrt(s);
  }
  case FEA_CELL_TRIANGLE: {
    double u[3], v[3], n[3];
    for (int k = 0; k < 3; k++) {
      u[k] = X(a, c, 1, k) - X(a, c, 0, k);
      v[k] = X(a, c, 2, k) - X(a, c, 0, k);
    }
    n[0] = u[1] * v[2] - u[2] * v[1];
    n[1] = u[2] * v[0] - u[0] * v[2];
    n[2] = u[0] * v[1] - u[1] * v[0];
    return a->dim == 2 ? 0.5 * n[2] : 0.5 * sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
  }
  case FEA_CELL_QUAD: { /* half the cross product of the diagonals (the shoelace formula) */
    double d1[3], d2[3], n[3];
    for (int k = 0; k < 3; k++) {
      d1[k] = X(a, c, 2, k) - X(a, c, 0, k);
      d2[k] = X(a, c, 3, k) - X(a, c, 1, k);
    }
    n[0] = d1[1] * d2[2] - d1[2] * d2[1];
    n[1] = d1[2] * d2[0] - d1[0] * d2[2];
    n[2] = d1[0] * d2[1] - d1[1] * d2[0];
    return a->dim == 2 ? 0.5 * n[2] : 0.5 * sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
  }
  case FEA_CELL_TETRAHEDRON: {
    double m[3][3];
    for (int i = 0; i < 3; i++)
      for (int k = 0; k < 3; k++) m[i][k] = X(a, c, i + 1, k) - X(a, c, 0, k);
    return det3x3(m) / 6.0;
  }
  case FEA_CELL_HEXAHEDRON: {
    /* Node i at reference corner (r0, r1, r2) of [0,1]^3. */
    static const int ref[8][3] = {{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0},
                                  {0, 0, 1}, {1, 0, 1}, {1, 1, 1}, {0, 1, 1}};
    const double g[2] = {0.5 - 0.5 / sqrt(3.0), 0.5 + 0.5 / sqrt(3.0)};
    double vol = 0;
    for (int q = 0; q < 8; q++) {
      double xi[3] = {g[q & 1], g[(q >> 1) & 1], g[q >> 2]}, J[3][3] = {{0}};
      for (int i = 0; i < 8; i++)
        for (int d = 0; d < 3; d++) {
          double dphi = ref[i][d] ? 1.0 : -1.0; /* derivative of the 1D factor in direction d */
          for (int e = 0; e < 3; e++)
            if (e != d) dphi *= ref[i][e] ? xi[e] : 1.0 - xi[e];
          for (int k = 0; k < 3; k++) J[k][d] += X(a, c, i, k) * dphi;
        }
      vol += det3x3(J) / 8.0;
    }
    return vol;
  }
  }
  return NAN;
}

static inline double total_measure(const struct arrays *a) {
  double s = 0;
  for (fea_index c = 0; c < a->nc; c++) s += cell_measure(a, c);
  return s;
}

/* The library's own validation of a mesh given as arrays: indices, finite
 * coordinates, orientation and non-degeneracy of every cell. */
static inline fea_status revalidate(fea_context *ctx, const struct arrays *a) {
  fea_mesh *copy = NULL;
  fea_status s = fea_mesh_create_from_arrays(ctx, a->dim, a->type, a->nn, a->x, a->nc, a->c, &copy);
  fea_mesh_destroy(&copy);
  return s;
}

#endif
