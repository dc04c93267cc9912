/* The multipatch domain object: its patches (referenced), the interfaces
 * found between them and the global DoF numbering. */
#include <stdlib.h>
#include <string.h>

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

fea_status fea_multipatch_build_like(const fea_multipatch *like, fea_space *const *patches,
                                     fea_multipatch **out) {
  fea_context *ctx = like->ctx;
  const int np = like->num_patches;
  fea_multipatch *mp;
  FEA_CALL(fea_object_alloc(ctx, sizeof *mp, "multipatch domain", multipatch_free, (void **)&mp));
  mp->dim = like->dim;
  mp->ncomp = like->ncomp;
  mp->tolerance = like->tolerance;
  mp->patches = calloc((size_t)np, sizeof *mp->patches);
  mp->patch_off = malloc((size_t)(np + 1) * sizeof *mp->patch_off);
  mp->links = malloc((size_t)(like->num_links ? like->num_links : 1) * sizeof *mp->links);
  mp->boundary_sides = malloc((size_t)(like->num_boundary_sides ? like->num_boundary_sides : 1) *
                              sizeof *mp->boundary_sides);
  if (!mp->patches || !mp->patch_off || !mp->links || !mp->boundary_sides) {
    fea_object_release(mp);
    return FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %d patches", np);
  }
  mp->num_patches = np;
  mp->patch_off[0] = 0;
  for (int p = 0; p < np; p++) {
    mp->patches[p] = patches[p];
    fea_object_retain(patches[p]);
    mp->patch_off[p + 1] = mp->patch_off[p] + patches[p]->num_dofs;
  }
  mp->num_links = like->num_links;
  mp->num_boundary_sides = like->num_boundary_sides;
  memcpy(mp->boundary_sides, like->boundary_sides,
         (size_t)like->num_boundary_sides * sizeof *mp->boundary_sides);
  fea_status st = FEA_SUCCESS;
  for (int i = 0; i < like->num_links && st == FEA_SUCCESS; i++) {
    fea_multipatch_link *l = &mp->links[i];
    *l = like->links[i];
    fea_side_grid ga, gb;
    fea_side_grid_of(patches[l->patch[0]], l->side[0], &ga);
    fea_side_grid_of(patches[l->patch[1]], l->side[1], &gb);
    l->num_dofs = ga.m[0] * ga.m[1];
    if (gb.m[0] * gb.m[1] != l->num_dofs)
      st = FEA_ERROR(ctx, FEA_ERR_INVALID_ARG,
                     "interface %d: side %d of patch %d has %lld DoFs, side %d of patch %d "
                     "%lld: the patches were not coarsened alike",
                     i, l->side[0], l->patch[0], (long long)l->num_dofs, l->side[1], l->patch[1],
                     (long long)(gb.m[0] * gb.m[1]));
  }
  if (st == FEA_SUCCESS) st = fea_multipatch_number_dofs(mp);
  if (st != FEA_SUCCESS) {
    fea_object_release(mp);
    return st;
  }
  *out = mp;
  return FEA_SUCCESS;
}
