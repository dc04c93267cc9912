/* Buffers for an element's basis at quadrature points, sized once and reused
 * over all elements of a loop. */
#include <stdlib.h>

#include "context.h"
#include "error.h"
#include "space.h"

fea_status fea_element_values_alloc(const fea_space *s, const fea_quadrature *q,
                                    fea_element_values *ev) {
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
  return FEA_SUCCESS;
}

void fea_element_values_free(fea_element_values *ev) {
  free(ev->x);
  free(ev->w);
  free(ev->phi);
  free(ev->dphi);
  ev->x = ev->w = ev->phi = ev->dphi = NULL;
}
