/* Patches to MPI ranks. The patch graph (a vertex per patch weighted by its
 * DoFs, an edge per interface weighted by the DoFs it shares) is cut by
 * PETSc's graph partitioner, PT-Scotch where PETSc has it, into as many
 * parts as ranks: connected groups of patches with few interface DoFs
 * between ranks, which is what the interface's communication and BDDC's
 * subdomains want. Rank 0 partitions (the graph has one vertex per patch)
 * and broadcasts, so every rank holds the same answer. Where the
 * partitioner is missing, fails, or leaves a rank empty, the patches go
 * greedily by DoFs instead: the largest first, each to the least-loaded
 * rank. `-feaccel_mat_partitioning_type` picks another partitioner. */
#include <stdlib.h>

#include <petscmat.h>

#include "internal/error.h"
#include "multipatch/multipatch.h"
#include "petsc-bridge.h"

static fea_index dofs_of(const fea_multipatch *mp, int p) {
  return mp->patch_off[p + 1] - mp->patch_off[p];
}

static void greedy(const fea_multipatch *mp, int size, int *owner, fea_index *load) {
  const int np = mp->num_patches;
  for (int r = 0; r < size; r++) load[r] = 0;
  for (int p = 0; p < np; p++) owner[p] = -1;
  for (int i = 0; i < np; i++) {
    int p = -1; /* the largest patch left, the first of equals */
    for (int c = 0; c < np; c++)
      if (owner[c] < 0 && (p < 0 || dofs_of(mp, c) > dofs_of(mp, p))) p = c;
    int best = 0;
    for (int r = 1; r < size; r++)
      if (load[r] < load[best]) best = r;
    owner[p] = best;
    load[best] += dofs_of(mp, p);
  }
}

/* The patch graph as PETSc's adjacency (arrays PETSc owns once given). */
static PetscErrorCode patch_graph(const fea_multipatch *mp, Mat *adj) {
  const int np = mp->num_patches;
  PetscInt *ia, *ja, *w, n = 0;
  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1(np + 1, &ia));
  PetscCall(PetscMalloc1(2 * mp->num_links + 1, &ja));
  PetscCall(PetscMalloc1(2 * mp->num_links + 1, &w));
  ia[0] = 0;
  for (int p = 0; p < np; p++) {
    for (int i = 0; i < mp->num_links; i++) {
      const fea_multipatch_link *l = &mp->links[i];
      for (int k = 0; k < 2; k++) {
        const int q = l->patch[1 - k];
        if (l->patch[k] != p || q == p) continue;
        PetscInt at = ia[p];
        while (at < n && ja[at] != q) at++;
        if (at < n) { /* a second interface with q: one edge, the weights summed */
          w[at] += (PetscInt)l->num_dofs;
          continue;
        }
        ja[n] = q;
        w[n++] = (PetscInt)l->num_dofs;
      }
    }
    ia[p + 1] = n;
    /* MPIAdj wants each row's columns sorted. */
    for (PetscInt a = ia[p] + 1; a < n; a++)
      for (PetscInt b = a; b > ia[p] && ja[b - 1] > ja[b]; b--) {
        const PetscInt tj = ja[b], tw = w[b];
        ja[b] = ja[b - 1], w[b] = w[b - 1];
        ja[b - 1] = tj, w[b - 1] = tw;
      }
  }
  PetscCall(MatCreateMPIAdj(PETSC_COMM_SELF, np, np, ia, ja, w, adj));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Rank 0's partition by PETSc's partitioner into size parts, or an error. */
static PetscErrorCode by_graph(const fea_multipatch *mp, int size, int *owner) {
  const int np = mp->num_patches;
  Mat adj = NULL;
  MatPartitioning part = NULL;
  IS is = NULL;
  PetscInt *vw;
  const PetscInt *idx;
  PetscFunctionBeginUser;
  PetscCall(patch_graph(mp, &adj));
  PetscCall(MatPartitioningCreate(PETSC_COMM_SELF, &part));
  PetscCall(MatPartitioningSetAdjacency(part, adj));
  PetscCall(MatPartitioningSetNParts(part, size));
  PetscCall(PetscMalloc1(np, &vw));
  for (int p = 0; p < np; p++) vw[p] = (PetscInt)dofs_of(mp, p);
  PetscCall(MatPartitioningSetVertexWeights(part, vw));
#if defined(PETSC_HAVE_PTSCOTCH)
  PetscCall(MatPartitioningSetType(part, MATPARTITIONINGPTSCOTCH));
#endif
  PetscCall(PetscObjectSetOptionsPrefix((PetscObject)part, "feaccel_"));
  PetscCall(MatPartitioningSetFromOptions(part));
  PetscCall(MatPartitioningApply(part, &is));
  PetscCall(ISGetIndices(is, &idx));
  for (int p = 0; p < np; p++) owner[p] = (int)idx[p];
  PetscCall(ISRestoreIndices(is, &idx));
  PetscCall(ISDestroy(&is));
  PetscCall(MatPartitioningDestroy(&part));
  PetscCall(MatDestroy(&adj));
  PetscFunctionReturn(PETSC_SUCCESS);
}

fea_status fea_petsc_partition_patches(MPI_Comm comm, fea_context *ctx, const fea_multipatch *mp,
                                       int rank, int size, int *owner) {
  const int np = mp->num_patches;
  fea_index *load = calloc((size_t)size, sizeof *load);
  FEA_CHECK(load, ctx, FEA_ERR_OUT_OF_MEMORY, "no memory to partition %d patches", np);
  int ok = 0;
  if (rank == 0) {
    ok = size > 1 && by_graph(mp, size, owner) == 0;
    for (int r = 0; r < size; r++) load[r] = 0;
    for (int p = 0; ok && p < np; p++) {
      ok = owner[p] >= 0 && owner[p] < size;
      if (ok) load[owner[p]]++;
    }
    for (int r = 0; ok && r < size; r++) ok = load[r] > 0; /* no rank left empty */
    if (!ok) greedy(mp, size, owner, load);
  }
  const int e = MPI_Bcast(owner, np, MPI_INT, 0, comm);
  free(load);
  FEA_CHECK(e == MPI_SUCCESS, ctx, FEA_ERR_BACKEND, "MPI_Bcast of the %d patch owners failed", np);
  return FEA_SUCCESS;
}
