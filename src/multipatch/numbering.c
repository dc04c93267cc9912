/* The global DoFs of a multipatch domain: patch DoFs that coincide across
 * an interface are one DoF (C0 coupling). A union-find over all patch DoFs
 * joins each interface's pairs, so DoFs shared by more than two patches
 * (corners and edges where several patches meet) end in one class without
 * listing those meetings; classes are then numbered patch by patch, each at
 * its first DoF.
 *
 * Vector-valued patches (ncomp components) are numbered as their spaces
 * are: the functions are joined as above, then function G's component c is
 * global DoF c + ncomp G (interleaved, docs/spaces.md), so the interface
 * glues a function's components together and a global function's
 * components stay adjacent for fronts and for PETSc's block size. */
#include <stdlib.h>

#include "internal/error.h"
#include "multipatch.h"

static fea_index find(fea_index *parent, fea_index a) {
  while (parent[a] != a) {
    parent[a] = parent[parent[a]];
    a = parent[a];
  }
  return a;
}

static void join(fea_index *parent, fea_index a, fea_index b) {
  a = find(parent, a), b = find(parent, b);
  if (a < b)
    parent[b] = a;
  else if (b < a)
    parent[a] = b;
}

/* Join the DoFs of link l (orientation as interfaces.c found it). */
static void join_link(const fea_multipatch *mp, const fea_multipatch_link *l, fea_index *parent) {
  fea_side_grid ga, gb;
  fea_side_grid_of(mp->patches[l->patch[0]], l->side[0], &ga);
  fea_side_grid_of(mp->patches[l->patch[1]], l->side[1], &gb);
  const int axis[2] = {l->swap ? 1 : 0, l->swap ? 0 : 1};
  const fea_index oa = mp->patch_off[l->patch[0]], ob = mp->patch_off[l->patch[1]];
  for (fea_index j = 0; j < ga.m[1]; j++)
    for (fea_index i = 0; i < ga.m[0]; i++) {
      fea_index ib[2] = {0, 0};
      ib[axis[0]] = l->flip[0] ? ga.m[0] - 1 - i : i;
      ib[axis[1]] = l->flip[1] ? ga.m[1] - 1 - j : j;
      join(parent, oa + fea_side_grid_dof(&ga, i, j), ob + fea_side_grid_dof(&gb, ib[0], ib[1]));
    }
}

/* The scalar numbering (functions) made one of vector DoFs: patch p's DoF
 * c + nc i is global c + nc global(i); patch_off and num_dofs count them. */
static fea_status expand_components(fea_multipatch *mp) {
  const fea_index nc = mp->ncomp, total = mp->patch_off[mp->num_patches];
  fea_index *v = malloc((size_t)(total ? total * nc : 1) * sizeof *v);
  FEA_CHECK(v, mp->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory to number %lld patch DoFs",
            (long long)(total * nc));
  for (fea_index a = 0; a < total; a++)
    for (fea_index c = 0; c < nc; c++) v[c + nc * a] = c + nc * mp->global[a];
  free(mp->global);
  mp->global = v;
  for (int p = 0; p <= mp->num_patches; p++) mp->patch_off[p] *= nc;
  mp->num_dofs *= nc;
  return FEA_SUCCESS;
}

fea_status fea_multipatch_number_dofs(fea_multipatch *mp) {
  fea_context *ctx = mp->ctx;
  const fea_index total = mp->patch_off[mp->num_patches];
  mp->global = malloc((size_t)(total ? total : 1) * sizeof *mp->global);
  fea_index *parent = malloc((size_t)(total ? total : 1) * sizeof *parent);
  if (!mp->global || !parent) {
    free(parent);
    return FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY, "no memory to number %lld patch DoFs",
                     (long long)total);
  }
  for (fea_index a = 0; a < total; a++) parent[a] = a;
  for (int i = 0; i < mp->num_links; i++) join_link(mp, &mp->links[i], parent);
  /* A class's root is its smallest member, its first appearance. */
  fea_index n = 0;
  for (fea_index a = 0; a < total; a++) {
    const fea_index r = find(parent, a);
    mp->global[a] = r == a ? n++ : mp->global[r];
  }
  mp->num_dofs = n;
  free(parent);
  return mp->ncomp > 1 ? expand_components(mp) : FEA_SUCCESS;
}
