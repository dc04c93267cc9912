/* The space object: allocation with a context reference and its release,
 * which hands the kind's data to the kind's ops->destroy; the vector DoFs
 * of an element (interleaved components) and the guard of scalar-only
 * consumers. */
#include <stdlib.h>

#include "internal/error.h"
#include "space.h"

static void space_free(void *object) {
  fea_space *s = object;
  if (s->ops && s->ops->destroy) s->ops->destroy(s);
  free(s->boundary_dofs);
  free(s);
}

fea_status fea_space_alloc(fea_context *ctx, fea_space **out) {
  FEA_CALL(fea_object_alloc(ctx, sizeof(fea_space), "space", space_free, (void **)out));
  (*out)->ncomp = 1;
  return FEA_SUCCESS;
}

void fea_space_element_vdofs(const fea_space *s, fea_index e, fea_index *vdofs) {
  const int nb = s->dofs_per_element, nc = s->ncomp;
  s->ops->element_dofs(s, e, vdofs);
  if (nc == 1) return;
  /* Backwards, so that the scalar DoFs at the front are read before the
   * entries they become overwrite them. */
  for (int j = nb - 1; j >= 0; j--) {
    const fea_index d = vdofs[j];
    for (int c = nc - 1; c >= 0; c--) vdofs[c + nc * j] = c + nc * d;
  }
}

fea_status fea_space_require_scalar(const fea_space *s, const char *what) {
  FEA_CHECK(s->ncomp == 1, s->ctx, FEA_ERR_UNSUPPORTED,
            "%s takes scalar spaces only so far; this space has %d components (systems run "
            "through the reference assembly, the CSR operator with CG, and the multifrontal "
            "solver)",
            what, s->ncomp);
  return FEA_SUCCESS;
}
