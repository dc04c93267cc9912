/* The multipatch domain object: its patches (referenced), the interfaces
 * found between them and the global DoF numbering. */
#include <stdlib.h>

#include "internal/error.h"
#include "multipatch.h"

static void multipatch_free(void *object) {
  fea_multipatch *mp = object;
  for (int p = 0; p < mp->num_patches; p++)
    if (mp->patches[p]) fea_object_release(mp->patches[p]);
  free(mp->patches);
  free(mp->links);
  free(mp->boundary_sides);
  free(mp->patch_off);
  free(mp->global);
  free(mp);
}

fea_status fea_multipatch_build(fea_context *ctx, int num_patches, fea_space *const *patches,
                                double tolerance, fea_multipatch **out) {
  fea_multipatch *mp;
  FEA_CALL(fea_object_alloc(ctx, sizeof *mp, "multipatch domain", multipatch_free, (void **)&mp));
  mp->dim = patches[0]->dim;
  mp->ncomp = patches[0]->ncomp;
  mp->tolerance = tolerance;
  mp->patches = calloc((size_t)num_patches, sizeof *mp->patches);
  mp->patch_off = malloc((size_t)(num_patches + 1) * sizeof *mp->patch_off);
  fea_status st = FEA_SUCCESS;
  if (!mp->patches || !mp->patch_off) {
    st = FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %d patches", num_patches);
    goto fail;
  }
  mp->num_patches = num_patches;
  mp->patch_off[0] = 0;
  for (int p = 0; p < num_patches; p++) {
    mp->patches[p] = patches[p];
    fea_object_retain(patches[p]);
    mp->patch_off[p + 1] = mp->patch_off[p] + patches[p]->num_dofs;
  }
  st = fea_multipatch_find_interfaces(mp);
  if (st == FEA_SUCCESS) st = fea_multipatch_number_dofs(mp);
  if (st == FEA_SUCCESS) {
    *out = mp;
    return FEA_SUCCESS;
  }
fail:
  fea_object_release(mp);
  return st;
}
