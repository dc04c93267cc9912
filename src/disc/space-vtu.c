/* A B-spline function written for ParaView on the domain it lives on: each
 * element is sampled at s^d points (a tensor grid, s per direction, ends
 * included) through the space's own element values, so a mapped patch is
 * drawn through its geometry; the samples become (s - 1)^d linear cells per
 * element of a mesh made from arrays, which the mesh's VTU writer writes
 * with the function as a node field. Points on element faces are repeated
 * (one copy per element): simple, and exact for C0 pictures. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal/error.h"
#include "base/memory-limit.h"
#include "mesh.h"
#include "space.h"

fea_status fea_space_bspline_write_vtu(fea_space *s, const double *coeffs, int samples,
                                       const char *path, const char *name) {
  const int dim = s->dim, nb = s->dofs_per_element;
  fea_index per_elem = 1, cells_per_elem = 1;
  int n1[3] = {1, 1, 1};
  for (int k = 0; k < dim; k++) {
    per_elem *= samples;
    cells_per_elem *= samples - 1;
    n1[k] = samples;
  }
  const int corners = 1 << dim;
  const double npts = (double)s->num_elements * (double)per_elem;
  const double ncells = (double)s->num_elements * (double)cells_per_elem;
  FEA_CALL(fea_memory_require(s->ctx, 0,
                              fea_bytes(npts, sizeof(double) * (size_t)(dim + 1)) +
                                  fea_bytes(ncells, sizeof(fea_index) * (size_t)corners),
                              "the samples of the function"));
  /* The sample points as a tensor rule (weights unused). */
  fea_quadrature q;
  memset(&q, 0, sizeof q);
  q.dim = dim;
  q.npts = (int)per_elem;
  q.points = malloc((size_t)per_elem * (size_t)dim * sizeof *q.points);
  q.weights = malloc((size_t)per_elem * sizeof *q.weights);
  for (int k = 0; k < 3; k++) q.tensor[k] = n1[k];
  double *x = malloc((size_t)npts * (size_t)dim * sizeof *x), *u = malloc((size_t)npts * sizeof *u);
  fea_index *cells = malloc((size_t)ncells * (size_t)corners * sizeof *cells);
  fea_index *dofs = malloc((size_t)nb * sizeof *dofs);
  fea_element_values ev;
  memset(&ev, 0, sizeof ev);
  fea_status st = FEA_SUCCESS;
  if (!q.points || !q.weights || !x || !u || !cells || !dofs)
    st = FEA_ERROR(s->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %.0f samples", npts);
  if (st == FEA_SUCCESS) {
    for (fea_index i = 0; i < per_elem; i++) {
      fea_index r = i;
      for (int k = 0; k < dim; k++) {
        q.points[i * dim + k] = (double)(r % samples) / (double)(samples - 1);
        r /= samples;
      }
      q.weights[i] = 1.0;
    }
    st = fea_element_values_alloc(s, &q, &ev);
  }
  /* Sub-cell corners in the mesh's node order, as offsets in the element's grid. */
  static const int quad[4][2] = {{0, 0}, {1, 0}, {1, 1}, {0, 1}};
  fea_index off[8];
  for (int c = 0; c < corners; c++) {
    const int a = dim == 1 ? c : quad[c % 4][0], b = dim == 1 ? 0 : quad[c % 4][1], z = c / 4;
    off[c] = a + samples * (b + samples * z);
  }
  for (fea_index e = 0; e < s->num_elements && st == FEA_SUCCESS; e++) {
    st = s->ops->element_values(s, e, &q, &ev);
    if (st != FEA_SUCCESS) break;
    s->ops->element_dofs(s, e, dofs);
    const fea_index base = e * per_elem;
    for (fea_index i = 0; i < per_elem; i++) {
      double v = 0;
      for (int j = 0; j < nb; j++) v += coeffs[dofs[j]] * ev.phi[i * nb + j];
      if (!isfinite(v)) {
        st = FEA_ERROR(s->ctx, FEA_ERR_INVALID_ARG,
                       "the function is %g at sample %lld of element %lld (a coefficient is not "
                       "finite; VTK cannot read it)",
                       v, (long long)i, (long long)e);
        break;
      }
      u[base + i] = v;
      memcpy(x + (base + i) * dim, ev.x + i * dim, (size_t)dim * sizeof *x);
    }
    fea_index *cell = cells + e * cells_per_elem * corners;
    for (fea_index c = 0; c < cells_per_elem; c++, cell += corners) {
      fea_index r = c, origin = 0, stride = 1;
      for (int k = 0; k < dim; k++) {
        origin += (r % (samples - 1)) * stride;
        r /= samples - 1;
        stride *= samples;
      }
      for (int k = 0; k < corners; k++) cell[k] = base + origin + off[k];
    }
  }
  static const fea_cell_type types[3] = {FEA_CELL_INTERVAL, FEA_CELL_QUAD, FEA_CELL_HEXAHEDRON};
  fea_mesh *m = NULL;
  if (st == FEA_SUCCESS)
    st = fea_mesh_build_from_arrays(s->ctx, dim, types[dim - 1], (fea_index)npts, x,
                                    (fea_index)ncells, cells, &m);
  if (st == FEA_SUCCESS) {
    const fea_field f = {name, FEA_FIELD_NODE, 1, u};
    st = fea_mesh_vtu_write(m, path, 1, &f);
  }
  if (m) FEA_OBJECT_DROP(m);
  if (ev.x) fea_element_values_free(&ev);
  free(q.points);
  free(q.weights);
  free(x);
  free(u);
  free(cells);
  free(dofs);
  return st;
}
