/* Buffers for an element's basis at quadrature points, sized once and reused
 * over all elements of a loop. */
#include <stdlib.h>
#include <string.h>

#include "base/context.h"
#include "internal/error.h"
#include "space.h"

fea_status fea_element_values_alloc(const fea_space *s, const fea_quadrature *q,
                                    fea_element_values *ev) {
  memset(ev, 0, sizeof *ev);
  ev->nq = q->npts;
  ev->nb = s->dofs_per_element;
  ev->dim = s->dim;
  size_t nq = (size_t)q->npts, nb = (size_t)s->dofs_per_element, dim = (size_t)s->dim;
  ev->x = malloc(nq * dim * sizeof *ev->x);
  ev->w = malloc(nq * sizeof *ev->w);
  ev->phi = malloc(nq * nb * sizeof *ev->phi);
  ev->dphi = malloc(nq * nb * dim * sizeof *ev->dphi);
  if (!ev->x || !ev->w || !ev->phi || !ev->dphi) {
    fea_element_values_free(ev);
    return FEA_ERROR(s->ctx, FEA_ERR_OUT_OF_MEMORY,
                     "no memory for basis values at %zu points of %zu functions", nq, nb);
  }
  /* Tensor elements under a tensor rule also get room for their 1D factors, and
   * the forms' sum-factorization scratch (its layout: forms.c, sumfact_work):
   * the weights W and w f (2 nq), the 1D outer products B B^T and D D^T per
   * direction and point (2 sum_k nq_k np_k^2), the q0-contracted products
   * (2 nq1 nq2 np0^2), in 3D the q1-contracted ones (2 nq2 (np0 np1)^2) and
   * one (np0 np1)^2 block of Ke, and the load's partial sums
   * (nq1 nq2 np0 + nq2 np0 np1). */
  /* Lagrange quads and hexahedra too: they fill the factors where the
   * caller sets factors_only on an axis-aligned box (space-lagrange.c). */
  const int tensor_cells = s->kind == FEA_SPACE_BSPLINE ||
                           (s->kind == FEA_SPACE_LAGRANGE &&
                            (s->cell == FEA_CELL_QUAD || s->cell == FEA_CELL_HEXAHEDRON));
  if (tensor_cells && q->tensor[0] > 0) {
    size_t np[3] = {1, 1, 1}, tq[3] = {1, 1, 1};
    for (int k = 0; k < s->dim; k++) {
      np[k] = (size_t)s->degree[k] + 1;
      tq[k] = (size_t)q->tensor[k];
    }
    for (int k = 0; k < 3; k++) ev->tnp[k] = (int)np[k], ev->tnq[k] = (int)tq[k];
    const size_t n01 = np[0] * np[1];
    ev->scratch_len = 2 * tq[0] * tq[1] * tq[2] +
                      2 * (tq[0] * np[0] * np[0] + tq[1] * np[1] * np[1] + tq[2] * np[2] * np[2]) +
                      2 * tq[1] * tq[2] * np[0] * np[0] + 2 * tq[2] * n01 * n01 + n01 * n01 +
                      tq[1] * tq[2] * np[0] + tq[2] * n01;
    ev->t1d = malloc(3 * FEA_QUAD_MAX_1D * FEA_ELEMENT_T1D_LD * sizeof *ev->t1d);
    ev->scratch = malloc(ev->scratch_len * sizeof *ev->scratch);
    if (!ev->t1d || !ev->scratch) {
      fea_element_values_free(ev);
      return FEA_ERROR(s->ctx, FEA_ERR_OUT_OF_MEMORY,
                       "no memory for the 1D factors of %zu functions per element", nb);
    }
  }
  return FEA_SUCCESS;
}

void fea_element_values_free(fea_element_values *ev) {
  free(ev->x);
  free(ev->w);
  free(ev->phi);
  free(ev->dphi);
  free(ev->t1d);
  free(ev->scratch);
  ev->x = ev->w = ev->phi = ev->dphi = ev->t1d = ev->scratch = NULL;
  ev->tensor_valid = 0;
}
