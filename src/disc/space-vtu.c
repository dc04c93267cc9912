/* A B-spline function written for ParaView on the domain it lives on: each
 * element is sampled at s^d points (a tensor grid, s per direction, ends
 * included) through the space's own element values, so a mapped patch is
 * drawn through its geometry; the samples become (s - 1)^d linear cells per
 * element of a mesh made from arrays, which the mesh's VTU writer writes
 * with the function as a node field (a vector space's components together,
 * 2 padded to 3 for ParaView's vectors) and any fields a caller derives per
 * sample (space-vtu.h). Points on element faces are repeated (one copy per
 * element): simple, exact for C0 pictures, and it keeps derivative fields
 * (stresses) discontinuous where the function's are. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal/error.h"
#include "base/memory-limit.h"
#include "mesh.h"
#include "space-vtu.h"

fea_status fea_space_bspline_write_vtu(fea_space *s, const double *coeffs, int samples,
                                       const char *path, const char *name) {
  return fea_space_bspline_write_vtu_fields(s, coeffs, samples, path, name, NULL);
}

fea_status fea_space_bspline_write_vtu_fields(fea_space *s, const double *coeffs, int samples,
                                              const char *path, const char *name,
                                              const fea_vtu_sampler *extra) {
  const int dim = s->dim, nb = s->dofs_per_element, nc = s->ncomp;
  /* VTK's vectors have 3 components: a 2-component field is padded. */
  const int ncu = nc == 2 ? 3 : nc;
  int nex = 0;
  for (int f = 0; extra && f < extra->num_fields; f++) nex += extra->components[f];
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
                              fea_bytes(npts, sizeof(double) * (size_t)(dim + ncu + 2 * nex)) +
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
  double *x = malloc((size_t)npts * (size_t)dim * sizeof *x);
  double *u = malloc((size_t)npts * (size_t)(ncu + nex) * sizeof *u), *ex = u + (size_t)npts * ncu;
  fea_index *cells = malloc((size_t)ncells * (size_t)corners * sizeof *cells);
  fea_index *dofs = malloc((size_t)nb * sizeof *dofs);
  double *local = malloc((size_t)nb * (size_t)nc * sizeof *local);
  fea_element_values ev;
  memset(&ev, 0, sizeof ev);
  fea_status st = FEA_SUCCESS;
  if (!q.points || !q.weights || !x || !u || !cells || !dofs || !local)
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
    for (int j = 0; j < nb; j++)
      for (int c = 0; c < nc; c++) local[c + nc * j] = coeffs[c + (fea_index)nc * dofs[j]];
    for (fea_index i = 0; i < per_elem && st == FEA_SUCCESS; i++) {
      double *ui = u + (base + i) * ncu;
      for (int c = 0; c < ncu; c++) ui[c] = 0.0;
      for (int j = 0; j < nb; j++)
        for (int c = 0; c < nc; c++) ui[c] += local[c + nc * j] * ev.phi[i * nb + j];
      for (int c = 0; c < nc; c++)
        if (!isfinite(ui[c])) {
          st = FEA_ERROR(s->ctx, FEA_ERR_INVALID_ARG,
                         "the function is %g at sample %lld of element %lld (a coefficient is "
                         "not finite; VTK cannot read it)",
                         ui[c], (long long)i, (long long)e);
          break;
        }
      if (st == FEA_SUCCESS && nex > 0)
        st = extra->sample(extra->user, &ev, (int)i, local, ex + (base + i) * nex);
      memcpy(x + (base + i) * dim, ev.x + i * dim, (size_t)dim * sizeof *x);
    }
    if (st != FEA_SUCCESS) break;
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
  /* The sampler's fields are interleaved per sample; the writer takes each
   * field's own array: split them into one block per field. */
  double *split = NULL;
  if (st == FEA_SUCCESS && nex > 0) {
    split = malloc((size_t)npts * (size_t)nex * sizeof *split);
    if (!split) st = FEA_ERROR(s->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %.0f samples", npts);
  }
  if (st == FEA_SUCCESS) {
    fea_field f[1 + FEA_VTU_MAX_EXTRA];
    f[0] = (fea_field){name, FEA_FIELD_NODE, ncu, u};
    int nf = 1, off0 = 0;
    for (int k = 0; extra && k < extra->num_fields; k++) {
      const int w = extra->components[k];
      double *dst = split + (size_t)npts * off0;
      for (fea_index i = 0; i < (fea_index)npts; i++)
        memcpy(dst + i * w, ex + i * nex + off0, (size_t)w * sizeof *dst);
      f[nf++] = (fea_field){extra->names[k], FEA_FIELD_NODE, w, dst};
      off0 += w;
    }
    st = fea_mesh_vtu_write(m, path, nf, f);
  }
  free(split);
  if (m) FEA_OBJECT_DROP(m);
  if (ev.x) fea_element_values_free(&ev);
  free(q.points);
  free(q.weights);
  free(x);
  free(u);
  free(cells);
  free(dofs);
  free(local);
  return st;
}
